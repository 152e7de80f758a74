"""Following a Harbor job folder or a SWE-bench ``logs/run_evaluation/<run_id>`` tree while the run writes it.

Harbor writes one trial folder per trial (``<job>/<trial>/result.json``, the ``TrialResult``) and SWE-bench's
``run_evaluation`` one folder per instance (``<run_id>/<model>/<instance>/report.json``). :class:`RunFolder`
polls such a folder and counts a unit *finished* only when its file is complete:

* a Harbor trial when its ``result.json`` parses as a trial result with ``finished_at`` set (a trial in
  progress, whose result has no ``finished_at`` yet, is waited for); the job's own ``result.json`` adds
  nothing the trials do not hold and is not read;
* a SWE-bench instance when its ``report.json`` parses as the instance map (``{instance_id: {...}}``).

A file that does not parse (half-written, truncated) is *waiting*, never an error: it is looked at again when
its size or modification time changes. The rows are those of :func:`stopwise.ingest.ingest` on exactly the
finished files (its system naming, reward key, error and elapsed-time options), so a look decides as
``stopwise ingest`` of the files finished at that point followed by ``stopwise decide``.
:func:`follow_run_folder` yields a :class:`~stopwise.live.LogLook` now and after each change, until decided.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from stopwise.errors import ComparisonError, FileFormatError, InputError
from stopwise.live._follow import check_polling, wait_for_next_poll
from stopwise.live._logs import _UNREADABLE, LogLook, _short, _upcoming

if TYPE_CHECKING:
    import pandas as pd

    from stopwise.records import DecisionRecord, Policy, TaskUniverse

__all__ = ["RunFolder", "follow_run_folder", "run_folder_kind"]

RunKind = Literal["harbor", "swebench"]
_UNIT_FILE: dict[RunKind, str] = {"harbor": "result.json", "swebench": "report.json"}


def run_folder_kind(path: str | os.PathLike[str]) -> RunKind | None:
    """``harbor`` for a Harbor job folder, ``swebench`` for a SWE-bench run tree, None for anything else.

    A Harbor job folder holds trial folders (each with a ``config.json`` from the trial's start, or its
    ``result.json``) or the job's ``config.json``/``result.json`` beside trial folders; a SWE-bench tree holds
    ``<model>/<instance>/`` folders with ``run_instance.log`` or ``report.json`` (or is below ``run_evaluation``).
    """
    folder = Path(path)
    if not folder.is_dir():
        return None
    if "run_evaluation" in folder.resolve().parts:
        return "swebench"
    for child in sorted(p for p in folder.iterdir() if p.is_dir()):
        if (child / "result.json").is_file() or (child / "config.json").is_file() or (child / "trial.log").is_file():
            return "harbor"
        for instance in (p for p in child.iterdir() if p.is_dir()):
            if (instance / "report.json").is_file() or (instance / "run_instance.log").is_file():
                return "swebench"
            if (instance / "result.json").is_file() or (instance / "config.json").is_file():
                return "harbor"  # a folder of jobs
    return None


class RunFolder:
    """The finished trials (Harbor) or instances (SWE-bench) of a run folder, each file looked at once per change.

    Parameters
    ----------
    path : path-like
        The Harbor job folder (or a folder of jobs), or the SWE-bench ``run_evaluation/<run_id>`` tree.
    kind : {"harbor", "swebench"}, optional
        The harness (default: :func:`run_folder_kind`).
    system, scorer, errors, elapsed
        As for :func:`stopwise.ingest.ingest`.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from stopwise.live import RunFolder
    >>> run = pathlib.Path(tempfile.mkdtemp()) / "run_evaluation" / "r1" / "agent"
    >>> (run / "astropy-1").mkdir(parents=True)
    >>> _ = (run / "astropy-1" / "report.json").write_text('{"astropy-1": {"resol')
    >>> folder = RunFolder(run.parent)
    >>> folder.poll(), folder.finished(), len(folder.waiting())
    (True, [], 1)
    >>> _ = (run / "astropy-1" / "report.json").write_text(json.dumps({"astropy-1": {"resolved": True}}))
    >>> folder.poll(), len(folder.finished()), folder.rows()["outcome"].tolist()
    (True, 1, [1.0])
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        kind: RunKind | None = None,
        system: str | None = None,
        scorer: str | None = None,
        errors: str = "pending",
        elapsed: str = "total",
    ) -> None:
        from stopwise.ingest import options_iv

        options_iv(system=system, scorer=scorer, errors=errors, empty_patch="fail", elapsed=elapsed, instances=None,
                   trajectories=False)
        self.path = Path(path)
        if not self.path.is_dir():
            what = "is not a directory" if self.path.exists() else "no such directory"
            raise FileFormatError(f"{self.path}: {what}; give the Harbor job folder or the SWE-bench run_evaluation/<run_id> tree")
        found = kind if kind is not None else run_folder_kind(self.path)
        if found not in _UNIT_FILE:
            raise FileFormatError(f"{self.path}: neither a Harbor job folder nor a SWE-bench run tree (kind {kind!r})")
        self.kind: RunKind = found
        self._options = {"system": system, "scorer": scorer, "errors": errors, "elapsed": elapsed}
        self._files: dict[Path, tuple[tuple[int, int], bool, str]] = {}  # file -> (mtime, size), finished, reason
        self._rows: pd.DataFrame | None = None

    def poll(self) -> bool:
        """Look at the folder once; True when a unit file appeared, went, finished or changed."""
        changed = False
        present: set[Path] = set()
        for file in sorted(self.path.rglob(_UNIT_FILE[self.kind])):
            if self.kind == "harbor" and file.parent == self.path:
                continue  # the job's own result.json: a summary of its trials
            try:
                stat = file.stat()
            except OSError:
                continue
            present.add(file)
            key = (stat.st_mtime_ns, stat.st_size)
            known = self._files.get(file)
            if known is not None and known[0] == key:
                continue
            finished, reason = self._state(file)
            self._files[file] = (key, finished, reason)
            changed = changed or known is None or (finished, reason) != known[1:] or finished
        for gone in set(self._files) - present:
            del self._files[gone]
            changed = True
        if changed:
            self._rows = None
        return changed

    def _state(self, file: Path) -> tuple[bool, str]:
        """(finished, reason): a complete unit file, or why it is waited for."""
        from stopwise._logs import load_json

        try:
            doc = load_json(file)
        except _UNREADABLE as exc:
            return False, f"not complete JSON yet ({_short(exc)})"
        if not isinstance(doc, dict):
            return False, f"not a {self.kind} result yet ({type(doc).__name__})"
        if self.kind == "harbor":
            if "trial_name" not in doc:
                return False, "not a trial result (no trial_name)"
            if not doc.get("finished_at"):
                return False, "trial in progress (no finished_at yet)"
        return True, "finished"

    def finished(self) -> list[Path]:
        """The finished unit files, sorted."""
        return sorted(p for p, (_, done, _) in self._files.items() if done)

    def waiting(self) -> list[str]:
        """Unit files not finished, as ``path: reason`` (relative to the folder)."""
        return [f"{p.relative_to(self.path)}: {reason}" for p, (_, done, reason) in sorted(self._files.items()) if not done]

    def rows(self) -> pd.DataFrame:
        """The outcome rows of the finished files (``stopwise ingest`` of exactly those files)."""
        import pandas as pd

        from stopwise.ingest import ingest
        from stopwise.records import OUTCOME_COLUMNS

        if self._rows is None:
            files = self.finished()
            if not files:
                self._rows = pd.DataFrame(columns=list(OUTCOME_COLUMNS))
            else:
                self._rows = ingest(files, format=self.kind, **self._options).rows  # type: ignore[arg-type]
        return self._rows


def follow_run_folder(
    path: str | os.PathLike[str],
    tested: str,
    baseline: str,
    policy: Policy | None = None,
    *,
    universe: TaskUniverse | None = None,
    kind: RunKind | None = None,
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
    """Yield a look now and after every change of a Harbor job folder or SWE-bench run tree, until decided.

    Each look decides with :func:`stopwise.decide` on the rows of the finished trials / instances
    (``logs_read`` counts those files) with ``policy`` and the planned ``universe``, and lists the next tasks
    (top-up first) when the universe is ordered. Parameters as :func:`~stopwise.live.follow_inspect_logs`, with
    ``kind`` as :class:`RunFolder`.

    Yields
    ------
    LogLook

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from stopwise.live import follow_run_folder
    >>> run = pathlib.Path(tempfile.mkdtemp()) / "run_evaluation" / "r1"
    >>> (run / "agent").mkdir(parents=True)
    >>> look = next(follow_run_folder(run, "agent", "other", timeout=0))
    >>> look.record, look.reason
    (None, 'no finished trial or instance yet')
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
    folder = RunFolder(path, kind=kind, system=system, scorer=scorer, errors=errors, elapsed=elapsed)
    start, first = clock(), True
    while True:
        if folder.poll() or first:
            first = False
            rows = folder.rows()
            record: DecisionRecord | None = None
            reason: str | None = "no finished trial or instance yet"
            if len(rows):
                try:
                    record, reason = decide(rows, tested, baseline, chosen, universe=universe), None
                except ComparisonError as exc:
                    reason = str(exc)
            waiting = tuple(folder.waiting())
            look = LogLook(
                logs_read=len(folder.finished()), n_rows=len(rows),
                systems=tuple(sorted(rows["system"].unique().tolist())) if len(rows) else (), waiting=waiting,
                record=record, reason=reason, elapsed_s=clock() - start, redecided=record,
                next=_upcoming(rows, tested, baseline, chosen, universe, record, n_next),
            )
            yield look
            if look.final:
                return
        if not wait_for_next_poll(start, interval, timeout, clock, sleep):
            return
