"""``stopwise replay``: completed-record replay of one or more outcome files."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.table import Table

from stopwise._atomic import check_output
from stopwise._text import for_terminal as escape  # user text: control, bidi and markup escaped
from stopwise._vocabulary import DEFAULT_BUDGETS, LIVE_RULES, STRATEGIES
from stopwise.cli._common import Inputs, Quiet, comma_numbers, console, print_json, progress, user_errors
from stopwise.errors import InputError

if TYPE_CHECKING:  # the library is imported inside the command: `stopwise --help` stays light
    import pandas as pd

    from stopwise.records import Policy
    from stopwise.replay import ReplayResult

_DEFAULT_BUDGETS = ", ".join(f"{b:g}" for b in DEFAULT_BUDGETS)
"""The default of ``--budgets``: :data:`stopwise.replay.DEFAULT_BUDGETS` as text (spaced: a narrow ``--help`` wraps it, never cuts it)."""
_Result = TypeVar("_Result")


def _source_name(path: Path) -> str:
    if str(path) == "-":
        return "stdin"
    stem = path.name.split(".")[0]
    return path.parent.name if stem == "outcomes" and path.parent.name else stem


def replay_command(
    outcomes: Annotated[list[Path], typer.Argument(help="Completed outcome files; one source each; '-' reads one from standard input.")],
    policy: Annotated[Path | None, typer.Option("--policy", "-p", help="Base policy TOML (default: the `policy init` one; the named --policies set their own order, coverage rule and tail).")] = None,
    policies: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated named policies (primary, forced-uniform, …: an unknown name lists them), 'all', or 'as-given' "
            "(the --policy file itself). Default: as-given with --policy, else primary.",
            show_default=False,
        ),
    ] = None,
    orders: Annotated[int, typer.Option("--orders", "-k", help="Task orders per directed pair.")] = 500,
    thresholds: Annotated[str, typer.Option(help="Comma-separated thresholds delta.")] = "0, 0.05, 0.10",
    budgets: Annotated[str, typer.Option(help="Comma-separated budget fractions.")] = _DEFAULT_BUDGETS,
    measure: Annotated[str | None, typer.Option(help="Budget measure: task_fraction, cost_usd or elapsed_s.")] = None,
    scope: Annotated[str | None, typer.Option(help="For cost or time: tested or pair.")] = None,
    min_coverage: Annotated[float, typer.Option(help="Keep systems with outcomes on at least this share of tasks.")] = 0.95,
    min_shared: Annotated[int, typer.Option(help="Keep directed pairs sharing at least this many tasks.")] = 1,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write records and tables here (their charts: stopwise report DIR).")] = None,
    decisions: Annotated[bool, typer.Option("--decisions", help="Also write one row per decision (large).")] = False,
    looks: Annotated[
        str | None,
        typer.Option(
            help="Live-look replay: 'every' (a look after every task) or K (a look every K tasks); records the first "
            "final action and stopping time of the betting boundary and of the fixed-budget rule re-declared at every look."
        ),
    ] = None,
    fixed_looks: Annotated[
        str | None, typer.Option(help="With --looks: looks of the fixed-budget rule ('every' or K; default every 5% of the tasks).")
    ] = None,
    rules: Annotated[str, typer.Option(help="With --looks: comma-separated rules (" + ", ".join(LIVE_RULES) + ").")] = ", ".join(LIVE_RULES),
    strategy: Annotated[
        str, typer.Option(help="With --looks: betting strategy (" + ", ".join(STRATEGIES) + ").")
    ] = "auto",
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="With --looks: threads for the betting batches.")] = 1,
    force: Annotated[bool, typer.Option("--force", help="Replace an earlier --out directory of stopwise.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the sources, minimum sufficient budgets (or live summary) and settings as JSON.")] = False,
    quiet: Quiet = False,
) -> None:
    """Replay completed records as if each evaluation had stopped earlier; report minimum sufficient budgets."""
    with user_errors():
        if out is not None:
            check_output(out, force=force, directory=True)  # before any computation; written atomically at the end
        base, names = _base_and_names(policy, policies, live=looks is not None)
        if orders < 1:
            raise InputError(f"--orders must be a positive integer; got {orders}")
        grid_options = measure is not None or scope is not None or decisions or budgets != _DEFAULT_BUDGETS
        live = _live_options(looks, fixed_looks, rules, strategy, jobs, grid_options=grid_options)
        shared = _Shared(_read_sources(outcomes), base, names, comma_numbers(thresholds, "thresholds"), orders, min_coverage, min_shared, quiet)
    if live is not None:
        _replay_looks(shared, live, out, force, as_json)
    else:
        _replay_grid(shared, budgets, measure, scope, decisions, out, force, as_json)


def _base_and_names(policy: Path | None, policies: str | None, *, live: bool) -> tuple[Policy, list[str] | None]:
    """The base policy (--policy, or the primary one) and the named variants of --policies (None: as given).

    Without --policies, a --policy file is replayed as given (``as-given``); with neither, the primary policy.
    """
    from stopwise.records import Policy, load_policy
    from stopwise.replay import STANDARD_POLICIES

    if policies is None:
        policies = "as-given" if policy is not None else "primary"
    base = load_policy(policy) if policy is not None else Policy()
    if policies == "all":
        # the live-look replay takes the policies with a uniform or coverage-aware order; the grid, those with no boundary
        return base, [n for n, spec in STANDARD_POLICIES.items() if (spec["order"] in ("uniform", "coverage-aware") if live else "boundary" not in spec)]
    if policies == "as-given":
        return base, None
    names = [p.strip() for p in policies.split(",") if p.strip()]
    unknown = [p for p in names if p not in STANDARD_POLICIES]
    if unknown:
        raise InputError(f"--policies: unknown name(s) {', '.join(unknown)}; choose from {', '.join(STANDARD_POLICIES)}")
    return base, names


@dataclass(frozen=True)
class _Looks:
    """The options of the live-look replay (--looks and those that go with it), checked."""

    looks: int | str
    fixed_looks: int | str | None
    rules: list[str]
    strategy: str
    jobs: int


def _live_options(
    looks: str | None, fixed_looks: str | None, rules: str, strategy: str, jobs: int, *, grid_options: bool
) -> _Looks | None:
    """The checked live-look options (None without --looks); refuses the options of the other replay."""
    live_looks = _look_spec(looks, "looks") if looks is not None else None
    live_fixed = _look_spec(fixed_looks, "fixed-looks") if fixed_looks is not None else None
    if looks is None and (fixed_looks is not None or jobs != 1):
        raise InputError("--fixed-looks and --jobs apply to the live-look replay; add --looks every (or --looks K)")
    if looks is not None and grid_options:
        raise InputError("--budgets, --measure, --scope and --decisions apply to the budget-grid replay, not to --looks")
    chosen_rules = [r.strip() for r in rules.split(",") if r.strip()]
    if live_looks is not None and (not chosen_rules or any(r not in LIVE_RULES for r in chosen_rules)):
        raise InputError(f"--rules: choose from {', '.join(LIVE_RULES)}; got {rules!r}")
    if strategy not in STRATEGIES:
        raise InputError(f"--strategy must be one of {', '.join(STRATEGIES)}; got {strategy!r}")
    if jobs < 1:
        raise InputError(f"--jobs must be a positive integer; got {jobs}")
    if live_looks is None:
        return None
    return _Looks(looks=live_looks, fixed_looks=live_fixed, rules=chosen_rules, strategy=strategy, jobs=jobs)


def _read_sources(outcomes: list[Path]) -> dict[str, pd.DataFrame]:
    """Source name -> outcome rows of each file ('-': standard input); a repeated name gets a numeric suffix."""
    from stopwise.records import read_outcomes

    records: dict[str, pd.DataFrame] = {}
    with Inputs(outcomes) as inputs:
        for path in outcomes:
            name = _source_name(path)
            if name in records:
                name = f"{name}-{len(records)}"
            records[name] = read_outcomes(inputs.file(path))
    return records


def _replay_grid(
    shared: _Shared,
    budgets: str,
    measure: str | None,
    scope: str | None,
    decisions: bool,
    out: Path | None,
    force: bool,
    as_json: bool,
) -> None:
    """The budget-grid replay: Table I, minimum sufficient budgets (Table II), notes and exclusions."""
    from stopwise.replay import replay_grid

    with user_errors():
        result = shared.run(
            "replay", replay_grid, budgets=comma_numbers(budgets, "budgets"), measure=measure, scope=scope, keep_decisions=decisions
        )
    written = _write(result, out, force)
    if as_json:
        print_json({"sources": result.sources, "sufficiency": result.sufficiency, "settings": result.settings.to_dict(), "wrote": [str(p) for p in written]})
        return
    _print_grid(result, written, out)


def _print_grid(result: ReplayResult, written: list[Path], out: Path | None) -> None:
    import numpy as np

    from stopwise.replay import table_two

    settings = result.settings
    sources = Table(title="Sources (Table I)", header_style="bold")
    for column in ("source", "systems", "pairs", "median overlap", "groups", *[f"pos. {100 * t:g} pp" for t in settings.thresholds]):
        sources.add_column(column, justify="right")
    for row in result.sources.to_dict("records"):
        sources.add_row(
            escape(row["source"]),
            str(row["systems"]),
            f"{row['pairs']} ({row['unordered_pairs']})",
            f"{row['median_overlap']:g}",
            str(row["groups"]),
            *[str(row[f"positives_{t:g}"]) for t in settings.thresholds],
        )
    console.print(sources)
    for name in result.sufficiency["policy"].unique():
        console.print(_frame_table(f"Minimum sufficient budgets — {name} (Table II)", table_two(result.sufficiency, name)))
    for source, notes in settings.notes.items():
        for note in notes:
            console.print(f"note ({escape(source)}): {escape(note)}")
    for source, rows in settings.excluded_rows.items():
        for row in rows:
            console.print(f"excluded ({escape(source)}): {row['rows']} row(s) on {row['tasks']} task(s): {escape(row['reason'])}")
    for source, systems in settings.excluded_systems.items():
        for system, why in systems.items():
            console.print(f"excluded system ({escape(source)}): {escape(system)}: {escape(why)}")
    for source, pairs in settings.excluded_pairs.items():
        for pair, why in pairs.items():
            console.print(f"excluded pair ({escape(source)}): {escape(pair)}: {escape(why)}")
    decided = int(result.cases["orders"].sum())
    console.print(f"{decided:,} decisions in {len(result.cases):,} per-pair records.")
    _print_written(written, out)
    if not np.isfinite(result.sufficiency["min_sufficient_budget"]).any():
        console.print("No tested budget met all targets for any source, policy and threshold.")


def _look_spec(text: str, what: str) -> int | str:
    value = text.strip().lower()
    if value == "every":
        return "every"
    if not value.isdigit() or int(value) < 1:
        raise InputError(f"--{what} must be 'every' or a positive integer; got {text!r}")
    return int(value)


@dataclass(frozen=True)
class _Shared:
    """What the budget-grid and the live-look replay both take from the command line."""

    records: dict[str, pd.DataFrame]
    base: Policy
    names: list[str] | None
    thresholds: list[float]
    orders: int
    min_coverage: float
    min_shared: int
    quiet: bool = False

    def run(self, label: str, replay: Callable[..., _Result], **options: Any) -> _Result:
        """``replay(records, base, ...)`` with the shared options and progress over pairs x policies; a ValueError is bad input."""
        with progress(label, quiet=self.quiet, detail="pairs x policies") as report:
            try:
                return replay(
                    self.records,
                    self.base,
                    policies=self.names,
                    thresholds=self.thresholds,
                    n_orders=self.orders,
                    min_coverage=self.min_coverage,
                    min_shared=self.min_shared,
                    progress=report.advance,
                    **options,
                )
            except ValueError as exc:
                raise InputError(str(exc)) from exc


def _write(result: Any, out: Path | None, force: bool) -> list[Path]:
    """Write a replay's files to ``out`` (atomically, by the result's own ``write``); the written paths."""
    if out is None:
        return []
    with user_errors():
        return list(result.write(out, force=force))


def _frame_table(title: str, frame: pd.DataFrame) -> Table:
    """A Rich table of a data frame, every cell as escaped text."""
    table = Table(title=title, header_style="bold")
    for column in frame.columns:
        table.add_column(escape(str(column)))
    for row in frame.itertuples(index=False):
        table.add_row(*[escape(str(v)) for v in row])
    return table


def _replay_looks(shared: _Shared, live: _Looks, out: Path | None, force: bool, as_json: bool) -> None:
    """The live-look replay behind ``--looks``: per-pair wrong-decision rates and stopping times."""
    from stopwise.replay import replay_looks, summary_table

    with user_errors():
        result = shared.run(
            "live replay", replay_looks, looks=live.looks, fixed_looks=live.fixed_looks, rules=live.rules, strategy=live.strategy, n_jobs=live.jobs
        )
    written = _write(result, out, force)
    if as_json:
        print_json({"summary": result.summary, "settings": result.settings.to_dict(), "wrote": [str(p) for p in written]})
        return
    console.print(_frame_table("Live-look replay: first final action per (pair, order)", summary_table(result.summary)))
    console.print(
        f"wrong = final action opposite to the complete record (positive iff Delta_full > delta); bound a + 2 SE over {shared.orders} orders."
    )
    _print_written(written, out)


def _print_written(written: list[Path], out: Path | None) -> None:
    """The files a replay wrote to ``out``, and the command that draws their charts."""
    if out is None:
        return
    console.print(f"wrote {len(written)} files to {escape(str(out))}: " + ", ".join(escape(p.name) for p in written))
    console.print(f"charts: stopwise report {escape(shlex.quote(str(out)))}")


def register(app: typer.Typer) -> None:
    """Add ``replay`` to the top-level app."""
    app.command("replay")(replay_command)
