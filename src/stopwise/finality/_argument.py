"""The completion argument: a reviewable document saying why a score is a final result.

Casheekar (section 6): a completion argument "identifies the scored outcome, observation unit,
interaction stop rule, scoring basis, and effects that may remain active or reach another run",
and explains how each is handled. It is a TOML or YAML document::

    version = 1
    name = "async store, terminal reconciliation"

    [outcome]
    scored = "item k holds the value the run set"   # what the score measures
    period = "terminal"        # endpoint | terminal | window (with window_s)
    pass_at = 1.0              # a score at or above this is a pass

    [protocol]
    observation_unit = "one run of a fixed tool-call trace"
    stop_rule = "the trace's last call has returned"
    tools = "asynchronous"     # synchronous | asynchronous
    environment = "open"       # closed (a simulator) | open
    state = "persistent"       # fresh (provisioned per run) | persistent
    shared_credentials = false # required when a route is isolated

    [scoring]
    basis = "terminal"         # endpoint (snapshot) | terminal (after settling)
    method = "read item k once no operation of the namespace is pending"

    [[routes]]                 # one per effect route
    name = "delayed write"
    kind = "outcome"           # outcome: may change the run's score | carryover: may reach another run
    handling = "reconcile"     # outcome: reconcile | cancel | bound | none
    evidence = "GET /ns/{ns}?wait_ms=5000 shows every operation settled"
                               # carryover: isolate | reset | group | none

:func:`parse_argument` and :func:`load_argument` check the schema and these consistency rules,
listing every broken one with file, field, rule and value (:class:`CompletionArgumentError`):

* ``window_s`` is given exactly when ``period = "window"`` ("committed within 24 hours" names its period);
* ``period = "endpoint"`` needs ``basis = "endpoint"`` (a snapshot claim is read at the endpoint);
* outcome routes are handled by reconcile, cancel, bound or none; carryover routes by isolate,
  reset, group or none;
* ``reconcile`` needs ``basis = "terminal"`` (the score must be read after the effect settles);
* ``bound`` is given exactly with ``handling = "bound"``, within [0, 1] and with low <= high;
* every handling but none and group names its ``evidence`` (a handling is reviewable only with it);
* an isolated route needs ``protocol.shared_credentials`` (a namespace does not separate runs that
  share credentials);
* ``state = "persistent"`` needs at least one carryover route (how could state reach another run?);
* route names are unique (the checker's reasons refer to them).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal, get_args

import pydantic
import yaml
from pydantic import BaseModel, ConfigDict, Field, StrictBool

from stopwise._files import read_text
from stopwise._limits import check_structure
from stopwise._pydantic import problems_from_pydantic
from stopwise.errors import FileFormatError, LimitError, Problem
from stopwise.finality._bound import Bound, bound_problem
from stopwise.finality._errors import CompletionArgumentError

__all__ = [
    "CARRYOVER_HANDLINGS",
    "OUTCOME_HANDLINGS",
    "ArgumentFormat",
    "CompletionArgument",
    "OutcomeSpec",
    "ProtocolSpec",
    "RouteSpec",
    "ScoringSpec",
    "load_argument",
    "parse_argument",
]

Handling = Literal["reconcile", "cancel", "bound", "isolate", "reset", "group", "none"]
OUTCOME_HANDLINGS: tuple[str, ...] = ("reconcile", "cancel", "bound", "none")
"""Ways to handle an effect that could change the run's own score."""
CARRYOVER_HANDLINGS: tuple[str, ...] = ("isolate", "reset", "group", "none")
"""Ways to handle an effect that could reach another run."""
ArgumentFormat = Literal["toml", "yaml"]
_NEEDS_EVIDENCE = ("reconcile", "cancel", "bound", "isolate", "reset")
_SUFFIXES: dict[str, ArgumentFormat] = {".toml": "toml", ".yaml": "yaml", ".yml": "yaml"}


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class OutcomeSpec(_Section):
    """What is scored, and over which period."""

    scored: str = Field(min_length=1)
    """The scored outcome in words, e.g. "the order is committed in the store"."""
    period: Literal["endpoint", "terminal", "window"]
    """``endpoint``: the state visible when the run stops (a narrower claim than completion);
    ``terminal``: the state once every operation has settled; ``window``: the state at the end of
    ``window_s`` seconds after the endpoint ("committed within 24 hours")."""
    window_s: float | None = Field(default=None, gt=0)
    """Length of the judgment window in seconds; required with ``period = "window"`` only."""
    pass_at: float = Field(default=1.0, gt=0, le=1)
    """A score at or above this is a pass; used to decide whether a bound fixes the label."""


class ProtocolSpec(_Section):
    """How runs are defined, stopped and provisioned."""

    observation_unit: str = Field(min_length=1)
    """What one observation is, e.g. "one run of one agent on one task"."""
    stop_rule: str = Field(min_length=1)
    """When the interaction stops, e.g. "the agent calls submit or 50 steps pass"."""
    tools: Literal["synchronous", "asynchronous"]
    """``synchronous``: every tool call has finished when it returns; ``asynchronous``: calls may
    leave operations running after they return."""
    environment: Literal["closed", "open"]
    """``closed``: a simulator with nothing outside the evaluator's view; ``open``: real services,
    processes or networks."""
    state: Literal["fresh", "persistent"]
    """``fresh``: every run gets a newly provisioned environment no other run uses;
    ``persistent``: state may outlive a run (list its carryover routes)."""
    shared_credentials: StrictBool | None = None
    """Whether runs share credentials (accounts, tokens, keys); required when a route is isolated,
    since credentials reach across namespaces."""


class ScoringSpec(_Section):
    """When and how the score is read."""

    basis: Literal["endpoint", "terminal"]
    """``endpoint``: read the state at the endpoint (a snapshot); ``terminal``: read it once every
    operation that could change it has settled (applied or cancelled)."""
    method: str = Field(min_length=1)
    """How the score is read, e.g. "GET /items/k after the namespace has no pending operation"."""


class RouteSpec(_Section):
    """One way an effect could change the run's score or reach another run, and how it is handled."""

    name: str = Field(min_length=1)
    """A short name the checker's reasons refer to."""
    kind: Literal["outcome", "carryover"]
    """``outcome``: the effect could change this run's score after the endpoint;
    ``carryover``: it could reach another run's starting conditions or outcome."""
    handling: Handling
    """Outcome routes: ``reconcile`` (follow to terminal before scoring), ``cancel`` (verified
    cancellation), ``bound`` (with ``bound``), ``none``. Carryover routes: ``isolate`` (per-run
    namespaces or instances), ``reset`` (verified reset before the next run), ``group`` (connected
    runs are one unit), ``none``."""
    evidence: str = ""
    """How the system shows the handling worked; required for every handling but none and group."""
    bound: Bound | None = None
    """With ``handling = "bound"``: ``[low, high]``, every value the score can still take."""


class CompletionArgument(_Section):
    """A completion argument (see the module docstring for the document format).

    Examples
    --------
    >>> from stopwise.finality import parse_argument
    >>> arg = parse_argument('''
    ... name = "closed simulator"
    ... [outcome]
    ... scored = "the database row matches the goal"
    ... period = "terminal"
    ... [protocol]
    ... observation_unit = "one episode"
    ... stop_rule = "the agent ends the conversation"
    ... tools = "synchronous"
    ... environment = "closed"
    ... state = "fresh"
    ... [scoring]
    ... basis = "endpoint"
    ... method = "compare the database with the goal state"
    ... ''')
    >>> arg.protocol.tools, arg.routes
    ('synchronous', [])
    """

    version: Literal[1] = 1
    """Version of the completion-argument schema."""
    name: str = Field(min_length=1)
    """A name for the argument (it is echoed on every check)."""
    outcome: OutcomeSpec
    """What is scored, and over which period."""
    protocol: ProtocolSpec
    """How runs are defined, stopped and provisioned."""
    scoring: ScoringSpec
    """When and how the score is read."""
    routes: list[RouteSpec] = Field(default_factory=list)
    """Every route by which an effect could change a score after the endpoint or reach another run."""

    def routes_of(self, kind: Literal["outcome", "carryover"]) -> list[RouteSpec]:
        """The routes of one kind, in document order."""
        return [r for r in self.routes if r.kind == kind]


def _rule_problems(arg: CompletionArgument, source: str) -> list[Problem]:
    problems: list[Problem] = []

    def add(field: str, rule: str, value: object = None) -> None:
        problems.append(Problem(source, None, field, rule, value))

    out = arg.outcome
    if out.period == "window" and out.window_s is None:
        add("outcome.window_s", "is required when outcome.period is 'window'")
    if out.period != "window" and out.window_s is not None:
        add("outcome.window_s", "is allowed only when outcome.period is 'window'", out.window_s)
    if out.period == "endpoint" and arg.scoring.basis != "endpoint":
        add(
            "scoring.basis",
            "must be 'endpoint' when outcome.period is 'endpoint' (a snapshot claim is read at the endpoint)",
            arg.scoring.basis,
        )
    names: dict[str, int] = {}
    for i, route in enumerate(arg.routes):
        where = f"routes[{i}]"
        if route.name in names:
            add(f"{where}.name", f"must be unique (also routes[{names[route.name]}])", route.name)
        names.setdefault(route.name, i)
        allowed = OUTCOME_HANDLINGS if route.kind == "outcome" else CARRYOVER_HANDLINGS
        if route.handling not in allowed:
            article = "an" if route.kind == "outcome" else "a"
            add(
                f"{where}.handling",
                f"must be one of {', '.join(allowed)} for {article} {route.kind} route",
                route.handling,
            )
            continue
        if route.handling in _NEEDS_EVIDENCE and not route.evidence.strip():
            add(
                f"{where}.evidence",
                f"is required with handling '{route.handling}' (how does the system show it worked?)",
            )
        if route.handling == "bound":
            if route.bound is None:
                add(f"{where}.bound", "is required with handling 'bound'")
            else:
                rule = bound_problem(route.bound)
                if rule is not None:
                    add(f"{where}.bound", rule, list(route.bound))
        elif route.bound is not None:
            add(f"{where}.bound", "is allowed only with handling 'bound'", list(route.bound))
        if route.handling == "reconcile" and arg.scoring.basis != "terminal":
            add(
                f"{where}.handling",
                "'reconcile' needs scoring.basis = 'terminal' (the score must be read after the effect settles)",
                route.handling,
            )
        if route.handling == "isolate" and arg.protocol.shared_credentials is None:
            add(
                "protocol.shared_credentials",
                f"is required because route '{route.name}' is isolated (a namespace does not separate runs "
                "that share credentials)",
            )
    if arg.protocol.state == "persistent" and not arg.routes_of("carryover"):
        add(
            "routes",
            "must list at least one carryover route when protocol.state is 'persistent' (how could state "
            "reach another run, and how is that handled?)",
        )
    return problems


def _format_of(path: Path, fmt: str | None) -> ArgumentFormat:
    if fmt is not None:
        for name in get_args(ArgumentFormat):
            if fmt == name:
                return name
        raise FileFormatError(f"{path}: format must be toml or yaml; got {fmt!r}")
    suffix = path.suffix.lower()
    if suffix in _SUFFIXES:
        return _SUFFIXES[suffix]
    raise FileFormatError(f"{path}: cannot tell the format from the file name; use a .toml, .yaml or .yml suffix")


def parse_argument(text: str, *, format: ArgumentFormat = "toml", source: str = "<argument>") -> CompletionArgument:
    r"""Parse and check a completion argument from TOML or YAML text.

    Parameters
    ----------
    text : str
        The document.
    format : {"toml", "yaml"}, optional
        Its syntax.
    source : str, optional
        The name used in error messages (usually the file path).

    Returns
    -------
    CompletionArgument

    Raises
    ------
    CompletionArgumentError
        The text is not valid TOML/YAML, breaks the schema, or breaks a consistency rule; every
        problem is listed with file, field, rule and value.

    Examples
    --------
    >>> from stopwise.finality import parse_argument
    >>> parse_argument('name = "x"\n[outcome]\nscored = "s"\nperiod = "soon"', source="arg.toml")
    Traceback (most recent call last):
    ...
    stopwise.errors.CompletionArgumentError: 3 problems in the completion argument:
      arg.toml, field 'outcome.period': must be one of endpoint, terminal or window; got 'soon'
      arg.toml, field 'protocol': is required
      arg.toml, field 'scoring': is required
    """
    data: Any
    try:
        if format == "toml":
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                raise CompletionArgumentError([Problem(source, None, None, f"must be valid TOML ({exc})")]) from None
        elif format == "yaml":
            try:
                data = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                first = " ".join(str(exc).split())[:300]
                raise CompletionArgumentError([Problem(source, None, None, f"must be valid YAML ({first})")]) from None
        else:
            raise CompletionArgumentError([Problem(source, None, None, "format must be toml or yaml", format)])
    except RecursionError:
        raise LimitError(f"{source}: nested too deeply to parse (STOPWISE_MAX_DEPTH, docs/limits.md)") from None
    check_structure(data, source)  # depth, and values counting every use of a YAML alias (billion laughs)
    if not isinstance(data, dict):
        raise CompletionArgumentError(
            [Problem(source, None, None, "must be a table (mapping) of sections", type(data).__name__)]
        )
    try:
        argument = CompletionArgument.model_validate(data)
    except pydantic.ValidationError as exc:
        raise CompletionArgumentError(problems_from_pydantic(exc, source)) from None
    problems = _rule_problems(argument, source)
    if problems:
        raise CompletionArgumentError(problems)
    return argument


def load_argument(path: str | os.PathLike[str], *, format: ArgumentFormat | None = None) -> CompletionArgument:
    """Read a completion argument file (``.toml``, ``.yaml`` or ``.yml``); see :func:`parse_argument`.

    Parameters
    ----------
    path : path-like
        The document; its syntax follows the suffix unless ``format`` is given.
    format : {"toml", "yaml"}, optional
        Override the syntax taken from the suffix.

    Returns
    -------
    CompletionArgument

    Raises
    ------
    FileFormatError
        The file is missing, unreadable or of an unknown format.
    CompletionArgumentError
        The document breaks the schema or a rule.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from stopwise.finality import example_text, load_argument
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "argument.toml"
    >>> _ = path.write_text(example_text("verified-reset"))
    >>> [route.handling for route in load_argument(path).routes]
    ['reconcile', 'reset']
    """
    file = Path(path)
    fmt = _format_of(file, format)
    text = read_text(file, "completion argument")
    return parse_argument(text, format=fmt, source=str(file))
