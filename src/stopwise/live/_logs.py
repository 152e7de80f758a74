"""Following an Inspect AI log directory: decide again whenever a log completes, until decided.

An Inspect evaluation writes one log per task and model into its log directory (``.eval`` zip
archives by default, ``.json`` on request); ``eval_set`` adds ``eval-set.json`` and ``logs.json``.
:class:`InspectLogDir` polls such a directory and reads each *finished* log once:

* a ``.eval`` log is finished when its ``header.json`` exists and its ``status`` is ``success``,
  ``error`` or ``cancelled``; a running log has only ``_journal/start.json`` (or a header with
  status ``started``), and a file that is not (yet) a readable zip archive -- half copied,
  truncated -- is *waiting*, never an error: it is looked at again when its size or modification
  time changes;
* a ``.json`` log is finished when it parses and its ``status`` is one of the three; JSON files that
  are no Inspect log (``eval-set.json``, ``logs.json``) are ignored.

A finished log is read with :func:`stopwise.ingest.read_inspect` (the system naming, scorer, error
and elapsed-time options of ``stopwise ingest``) and its rows are kept under the file's (path,
modification time, size): a log rewritten later (Inspect's retries, a re-run) is read again. Of the
logs an ``eval_set`` folder holds for one task, only the newest is used (as ``stopwise ingest``
does). A finished log that breaks the outcome contract (a score outside [0, 1], a naming field it
lacks) is an error, as it is for ``stopwise ingest``.

:func:`follow_inspect_logs` yields a :class:`LogLook` now and after every change of what the
directory holds, deciding with :func:`stopwise.decide` on the rows of all finished logs, until the
decision is final or a timeout passes. When the logs carry the live decision of the paired Inspect
managers (:mod:`stopwise.live._carried`), that is the look's decision, with the re-decision from
the rows beside it. It needs no ``inspect_ai``.
"""

from __future__ import annotations

import os
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from stopwise.errors import ComparisonError, FileFormatError, InputError
from stopwise.live._carried import Carried, LiveDecision, carried_decision, live_decision
from stopwise.live._follow import FollowLook, check_polling, wait_for_next_poll

if TYPE_CHECKING:
    import pandas as pd

    from stopwise.compare import NextTasks
    from stopwise.records import DecisionRecord, Policy, TaskUniverse

__all__ = ["FINISHED_STATUSES", "InspectLogDir", "LogLook", "follow_inspect_logs"]

FINISHED_STATUSES = frozenset({"success", "error", "cancelled"})
"""Inspect log statuses of a finished log (a running one is ``started``)."""

_SUFFIXES = (".eval", ".json")
_UNREADABLE = (zipfile.BadZipFile, zlib.error, EOFError, OSError, FileFormatError, ValueError, KeyError)
"""What reading a half-written file raises (a zip without its central directory, a truncated member, cut JSON)."""

State = Literal["read", "waiting", "ignored"]


@dataclass
class _File:
    key: tuple[int, int]
    """(modification time in ns, size) when the file was looked at."""
    state: State
    reason: str
    kind: str = ""
    head: Any = None
    rows: pd.DataFrame | None = None
    carried: Carried | None = None
    """The live decision the paired manager wrote into the log (None when it carries none)."""


@dataclass(frozen=True, kw_only=True)
class LogLook(FollowLook):
    """One look at a followed Inspect log directory."""

    logs_read: int
    """Finished logs whose rows the decision used (replaced ``eval_set`` attempts not counted)."""
    n_rows: int
    """Outcome rows read from them (every system)."""
    systems: tuple[str, ...]
    """The systems those rows name, sorted (to spot a ``--tested``/``--baseline`` typo)."""
    waiting: tuple[str, ...]
    """Log files not finished yet: running, being written, or not (yet) readable, with the reason."""
    reason: str | None
    """Why there is no decision yet (None when there is one)."""
    live: LiveDecision | None = None
    """The decision the paired manager took while the evaluation ran, when the logs carry one: then
    :attr:`record` is its record (the decision of the evaluation), whatever the logs' rows give."""
    redecided: DecisionRecord | None = None
    """The decision taken again on the rows of the finished logs (equal to :attr:`record` without a live decision)."""
    difference: str | None = None
    """Why :attr:`redecided` differs from the live decision (rows logged after it), None when they agree."""
    notes: tuple[str, ...] = ()
    """About the live decisions: logs that carry different ones, or ones of another pair of systems."""


class InspectLogDir:
    """The finished logs of an Inspect log directory, read once each (see the module notes).

    Parameters
    ----------
    path : path-like
        The log directory (searched recursively for ``.eval`` and ``.json`` files).
    system, scorer, errors, elapsed
        As for :func:`stopwise.ingest.read_inspect`: the system name or a template over the log's
        fields (:func:`stopwise.ingest.system_template` turns ``--system-from`` choices into one),
        the scorer, what a sample the harness failed on becomes, which time is ``elapsed_s``.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from stopwise.live import InspectLogDir
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> log = {"version": 2, "status": "started", "eval": {"task": "t", "model": "m/x"}, "samples": []}
    >>> _ = (d / "a.json").write_text(json.dumps(log))
    >>> logs = InspectLogDir(d)
    >>> logs.poll(), logs.waiting()
    (True, ['a.json: running (status started)'])
    >>> log.update(status="success", samples=[{"id": 1, "epoch": 1, "scores": {"match": {"value": "C"}}}])
    >>> _ = (d / "a.json").write_text(json.dumps(log))
    >>> logs.poll(), len(logs.rows()), logs.waiting()
    (True, 1, [])
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        system: str | None = None,
        scorer: str | None = None,
        errors: str = "pending",
        elapsed: str = "total",
    ) -> None:
        from stopwise.ingest import options_iv

        options_iv(  # the ingest options' own validation, before anything is read
            system=system, scorer=scorer, errors=errors, empty_patch="fail", elapsed=elapsed, instances=None, trajectories=False
        )
        self.path = Path(path)
        if not self.path.is_dir():
            what = "is not a directory" if self.path.exists() else "no such directory"
            raise FileFormatError(f"{self.path}: {what}; give the Inspect log directory (inspect eval --log-dir)")
        self._system, self._scorer, self._errors, self._elapsed = system, scorer, errors, elapsed
        self._files: dict[Path, _File] = {}
        self._rows: pd.DataFrame | None = None
        self._used: list[Path] = []

    # ------------------------------------------------------------------ polling
    def poll(self) -> bool:
        """Look at the directory once; True when a file appeared, went, was read again or changed state.

        Raises
        ------
        ValidationError, InputError
            A finished log breaks the outcome contract or lacks a field its system name needs.
        """
        changed = reread = False  # reread: a finished log came, went or was read again (the rows change)
        present: set[Path] = set()
        for file in self._candidates():
            try:
                stat = file.stat()
            except OSError:  # removed between the listing and now
                continue
            present.add(file)
            key = (stat.st_mtime_ns, stat.st_size)
            known = self._files.get(file)
            if known is not None and known.key == key:
                continue
            now = self._files[file] = self._look_at(file, key)
            changed = changed or known is None or (now.state, now.reason) != (known.state, known.reason) or now.state == "read"
            reread = reread or now.state == "read" or (known is not None and known.state == "read")
        for gone in set(self._files) - present:
            reread = reread or self._files.pop(gone).state == "read"
            changed = True
        if reread:
            self._rows = None  # rows() reads them anew; a waiting file's new reason keeps them (and the decision)
        return changed

    def _candidates(self) -> list[Path]:
        try:
            return sorted(p for p in self.path.rglob("*") if p.suffix.lower() in _SUFFIXES and p.is_file())
        except OSError as exc:  # the folder went away
            raise FileFormatError(f"{self.path}: cannot list the log directory: {exc}") from exc

    def _look_at(self, file: Path, key: tuple[int, int]) -> _File:
        """The state of one file; reads its rows when it is a finished log."""
        from stopwise._logs import early_stopping_of, is_json_log, load_json
        from stopwise.ingest import read_inspect

        if file.suffix.lower() == ".eval":
            kind, head, n_samples, early = "eval", None, 0, None
            try:
                status, n_samples, early = _eval_status(file)
            except _UNREADABLE as exc:
                return _File(key, "waiting", f"not a complete .eval archive yet ({_short(exc)})")
        else:
            kind = "json"
            try:
                doc = load_json(file)
            except _UNREADABLE as exc:
                return _File(key, "waiting", f"not complete JSON yet ({_short(exc)})")
            if not is_json_log(doc):
                return _File(key, "ignored", "not an Inspect log")
            status = doc.get("status")
            head = {"eval": doc["eval"]}
            early = early_stopping_of(doc)
            samples = doc.get("samples")
            n_samples = len(samples) if isinstance(samples, list) else 0
        if status not in FINISHED_STATUSES:
            return _File(key, "waiting", f"running (status {status or 'started'})")
        carried = carried_decision(early, self._relative(file))
        if status != "success" and n_samples == 0:
            return _File(key, "read", f"finished with status {status} before any sample was logged", kind, head, None, carried)
        try:
            result = read_inspect(file, system=self._system, scorer=self._scorer, errors=self._errors, elapsed=self._elapsed)
        except FileFormatError as exc:  # a member cut short while the header was already there, or a damaged log
            return _File(key, "waiting", f"finished, but not readable (damaged, or still being rewritten): {_short(exc, 400)}")
        return _File(key, "read", f"{len(result.rows)} rows (status {status})", kind, head, result.rows, carried)

    # ------------------------------------------------------------------ what was read
    def rows(self) -> pd.DataFrame:
        """The outcome rows of every finished log (the newest attempt of each task in an ``eval_set``).

        Raises
        ------
        InputError
            Two logs give rows of one (system, task, attempt): logs of one model need ``system``.
        """
        import pandas as pd

        from stopwise._logs import select_eval_set_logs
        from stopwise.ingest import SYSTEM_SOURCES
        from stopwise.records import OUTCOME_COLUMNS

        if self._rows is None:
            finished = [(p, f.kind, f.head) for p, f in sorted(self._files.items()) if f.state == "read"]
            chosen, _ = select_eval_set_logs(finished, {})
            self._used = [p for p, _, _ in chosen]
            kept = [(p, f) for p in self._used if (f := self._files[p].rows) is not None and len(f)]
            if not kept:
                self._rows = pd.DataFrame(columns=list(OUTCOME_COLUMNS))
                return self._rows
            rows = pd.concat([f for _, f in kept], ignore_index=True)
            clash = rows.duplicated(["system", "task", "attempt"], keep=False).to_numpy()
            if clash.any():
                files = np.repeat(np.arange(len(kept)), [len(f) for _, f in kept])[clash]
                first = rows.loc[clash].iloc[0]
                named = sorted({self._relative(kept[i][0]) for i in files})
                raise InputError(
                    f"{self.path}: logs {', '.join(named[:4])}{' ...' if len(named) > 4 else ''} name the same "
                    f"(system, task, attempt) -- e.g. ({first['system']!r}, {first['task']!r}, {first['attempt']}) -- "
                    "so their rows would be read twice: logs of one model read as one system. Name each log's system "
                    f"with --system-from ({', '.join(SYSTEM_SOURCES)}) or --system"
                )
            self._rows = rows
        return self._rows

    def logs_read(self) -> list[Path]:
        """The finished logs whose rows :meth:`rows` holds."""
        self.rows()
        return list(self._used)

    def carried(self) -> list[Carried]:
        """The live decisions the finished logs :meth:`rows` reads carry (one per log that carries one)."""
        return [c for p in self.logs_read() if (c := self._files[p].carried) is not None]

    def waiting(self) -> list[str]:
        """Files not finished yet, as ``name: reason`` (paths relative to the directory)."""
        return [f"{self._relative(p)}: {f.reason}" for p, f in sorted(self._files.items()) if f.state == "waiting"]

    def _relative(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.path))
        except ValueError:  # pragma: no cover - rglob stays inside
            return str(path)


def _eval_status(file: Path) -> tuple[str | None, int, Any]:
    """(status, number of samples, ``results.early_stopping``) of a ``.eval`` archive; raises one of _UNREADABLE while it is being written."""
    from stopwise._logs import early_stopping_of, member_json

    with zipfile.ZipFile(file) as archive:
        names = archive.namelist()
        if "header.json" not in names:
            return ("started" if "_journal/start.json" in names else None), 0, None
        header = member_json(archive, file, "header.json")
        n_samples = sum(1 for n in names if n.startswith("samples/") and n.endswith(".json"))
    status = header.get("status") if isinstance(header, dict) else None
    return (status if isinstance(status, str) else None), n_samples, early_stopping_of(header)


def _short(exc: BaseException, limit: int = 120) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _difference(
    live: LiveDecision, redecided: DecisionRecord | None, reason: str | None, rows: pd.DataFrame, tested: str, baseline: str
) -> str | None:
    """Why deciding again on the logs' rows differs from the live decision (None when it gives the same record)."""
    if redecided is not None and redecided.digest() == live.digest:
        return None
    n_rows = int(rows["system"].isin([tested, baseline]).sum()) if len(rows) else 0
    position = live.record.ledger
    if position is not None and n_rows > position.n_events:
        why = (
            f"the logs hold {n_rows} rows of {tested} and {baseline}, the live decision saw {position.n_events} ledger "
            f"events: {n_rows - position.n_events} rows were logged after it (samples in flight when it was taken)"
        )
    else:
        why = (
            f"the logs hold {n_rows} rows of {tested} and {baseline}, the live decision saw "
            f"{live.record.n_observed} tasks of both"
            + ("" if position is None else f" ({position.n_events} ledger events)")
            + " (rows logged after it, or rows the ledger holds that the logs do not)"
        )
    again = f"deciding again on them gives {redecided.action} ({redecided.n_observed} tasks)" if redecided else f"deciding again on them gives no decision ({reason})"
    return f"{why}; {again} -- the live decision stays the decision of the evaluation"


def _upcoming(
    rows: pd.DataFrame, tested: str, baseline: str, policy: Policy, universe: TaskUniverse | None,
    record: DecisionRecord | None, n: int,
) -> NextTasks | None:
    """The look's next tasks (None without a planned order, when none are asked for, or while the rows cannot be paired)."""
    from stopwise.compare import next_tasks

    if not n or universe is None or not universe.ordered:
        return None
    try:
        return next_tasks(rows if len(rows) else None, tested, baseline, policy, universe=universe, n=n, record=record)
    except ComparisonError:
        return None


def follow_inspect_logs(
    path: str | os.PathLike[str],
    tested: str,
    baseline: str,
    policy: Policy | None = None,
    *,
    universe: TaskUniverse | None = None,
    system: str | None = None,
    scorer: str | None = None,
    errors: str = "pending",
    elapsed: str = "total",
    interval: float = 1.0,
    timeout: float | None = None,
    n_next: int = 10,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[LogLook]:
    """Yield a look now and after every change of an Inspect log directory, until decided or timed out.

    Each look after a log finished decides with :func:`stopwise.decide` on the rows of every
    finished log (``policy`` and the planned ``universe``; without a universe no final action is
    taken before the budget limit). When the finished logs carry the live decision of the paired
    Inspect managers (``results.early_stopping.metadata.decision``), that is the look's ``record``
    (the later look's when the logs differ, noted in ``notes``); the decision on the rows is then
    ``redecided``, and ``difference`` says why the two differ (rows logged after the decision).
    The iteration ends after the first final action (promote, reject, abstain) or when ``timeout``
    seconds have passed.

    Parameters
    ----------
    path : path-like
        The Inspect log directory.
    tested, baseline : str
        The systems to compare, as the logs name them (see ``system``).
    policy : Policy, optional
        The comparison policy (default: the paper's primary policy).
    universe : TaskUniverse, optional
        The planned task universe (the sample ids the evaluation may run).
    system, scorer, errors, elapsed
        How a log's rows are read: see :class:`InspectLogDir`.
    interval : float, optional
        Seconds between polls (> 0).
    timeout : float, optional
        Stop following after this many seconds (None: until decided).
    n_next : int, optional
        Each look's ``next``: at most this many tasks to run next, top-up first (:func:`stopwise.compare.next_tasks`;
        needs the planned order in ``universe``; 0: none computed).
    clock, sleep : callable, optional
        Time source and sleeper (for tests).

    Yields
    ------
    LogLook

    Raises
    ------
    FileFormatError
        ``path`` is not a directory.
    ValidationError, InputError
        A finished log breaks the outcome contract, or the logs name one (system, task, attempt) twice
        (name each log's system with ``system``).

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from stopwise.live import follow_inspect_logs
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> look = next(follow_inspect_logs(d, "m/a", "m/b", timeout=0))
    >>> look.record, look.reason
    (None, 'no finished Inspect log yet')
    """
    from stopwise.compare import decide
    from stopwise.records import Policy

    check_polling(interval, timeout, InputError)
    if isinstance(n_next, bool) or not isinstance(n_next, int) or n_next < 0:
        raise InputError(f"`n_next` must be a whole number of tasks >= 0; got {n_next!r}")
    tested, baseline = str(tested).strip(), str(baseline).strip()
    if not tested or not baseline or tested == baseline:
        raise InputError(f"`tested` and `baseline` must be two different non-empty system names; got {tested!r}, {baseline!r}")
    chosen = policy if policy is not None else Policy()
    logs = InspectLogDir(path, system=system, scorer=scorer, errors=errors, elapsed=elapsed)
    start = clock()
    first = True
    record: DecisionRecord | None = None
    upcoming: NextTasks | None = None
    reason: str | None = "no finished Inspect log yet"
    decided_on: pd.DataFrame | None = None
    while True:
        if logs.poll() or first:
            first = False
            rows = logs.rows()
            if rows is not decided_on:  # a log finished, was rewritten or removed: decide again
                decided_on = rows
                record, reason = None, "no finished Inspect log yet"
                if len(rows):
                    try:
                        record, reason = decide(rows, tested, baseline, chosen, universe=universe), None
                    except ComparisonError as exc:
                        record, reason = None, str(exc)
                upcoming = _upcoming(rows, tested, baseline, chosen, universe, record, n_next)
            said = reason
            if record is None and reason is not None and logs.waiting():  # say which logs are not read, and why
                said = f"{reason}; not read yet: " + "; ".join(logs.waiting()[:5]) + (" ..." if len(logs.waiting()) > 5 else "")
            systems = tuple(sorted(rows["system"].unique().tolist())) if len(rows) else ()
            live, note = live_decision(logs.carried(), tested, baseline)
            look = LogLook(
                logs_read=len(logs.logs_read()), n_rows=len(rows), systems=systems, waiting=tuple(logs.waiting()),
                record=record if live is None else live.record, reason=said if live is None else None,
                elapsed_s=clock() - start, live=live, redecided=record,
                difference=None if live is None else _difference(live, record, reason, rows, tested, baseline),
                notes=tuple(n for n in (note, None if live is None else live.note) if n),
                next=upcoming if live is None else None,  # the paired managers run their own queue
            )
            yield look
            if look.final:
                return
        if not wait_for_next_poll(start, interval, timeout, clock, sleep):
            return
