"""The public verbs: detect a harness file's format, and ingest files or run directories."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from stopwise._logs import is_json_log, load_json
from stopwise.errors import FileFormatError, InputError
from stopwise.ingest import _hal, _harbor, _inspect, _swebench, _tau2
from stopwise.ingest._common import (
    INGEST_FORMATS,
    Collector,
    IngestResult,
    Options,
    Progress,
    finish,
    options_iv,
    walk,
)

__all__ = [
    "detect_format",
    "ingest",
    "read_hal",
    "read_harbor",
    "read_inspect",
    "read_swebench",
    "read_tau2",
]

PathLike = str | os.PathLike[str]

_EXPECTED = (
    "an Inspect log (.eval or .json), a SWE-bench report or results.json, a tau2-bench results.json, "
    "a Harbor / Terminal-Bench result.json, or a HAL *_UPLOAD.json"
)


def _sniff_doc(doc: Any) -> tuple[str | None, str]:
    """(format, kind) of a parsed JSON document; (None, reason) when it is no harness log."""
    if _hal.is_upload(doc):
        return "hal", "upload"
    if is_json_log(doc):
        return "inspect", "json"
    if _tau2.is_results(doc):
        return "tau2", "results"
    if _tau2.is_simulation(doc):
        return "tau2", "simulation"
    kind = _harbor.kind_of(doc)
    if kind is not None:
        return "harbor", kind
    kind = _swebench.kind_of(doc)
    if kind is not None:
        return "swebench", kind
    return None, "not a harness log of a known format"


def _sniff(path: Path) -> tuple[str | None, str, Any]:
    """(format, kind, parsed document) of one file; raises FileFormatError for unreadable files."""
    if path.suffix.lower() == ".eval":
        if not zipfile.is_zipfile(path):
            raise FileFormatError(f"{path}: an .eval log must be a zip archive; this file is not")
        return "inspect", "eval", None
    doc = load_json(path)
    fmt, kind = _sniff_doc(doc)
    return fmt, kind, doc


def detect_format(path: PathLike) -> str:
    """Tell which harness wrote a file or a run directory.

    Parameters
    ----------
    path : path-like
        A harness file, or a directory whose files all come from one harness.

    Returns
    -------
    str
        One of :data:`INGEST_FORMATS`.

    Raises
    ------
    FileFormatError
        The file is unreadable or of no known format, or the directory mixes formats.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from stopwise.ingest import detect_format
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "results.json").write_text(json.dumps({"no_generation": [], "resolved": ["a__b-1"]}))
    >>> detect_format(d / "results.json")
    'swebench'
    """
    root = Path(path)
    if root.is_dir():
        found: dict[str, str] = {}
        for file in walk([root]):
            try:
                fmt, _, _ = _sniff(file)
            except FileFormatError:
                continue
            if fmt is not None:
                found.setdefault(fmt, str(file))
        if not found:
            raise FileFormatError(f"{root}: holds no harness log; expected {_EXPECTED}")
        if len(found) > 1:
            listing = ", ".join(f"{fmt} (e.g. {file})" for fmt, file in sorted(found.items()))
            raise FileFormatError(f"{root}: mixes formats: {listing}; pass the format explicitly or ingest them apart")
        return next(iter(found))
    if not root.exists():
        raise FileFormatError(f"{root}: no such file or directory")
    fmt, reason, _ = _sniff(root)
    if fmt is None:
        raise FileFormatError(f"{root}: cannot tell the format ({reason}); expected {_EXPECTED}")
    return fmt


def _paths_iv(paths: PathLike | Iterable[PathLike]) -> list[PathLike]:
    if isinstance(paths, str | os.PathLike):
        return [paths]
    try:
        items = list(paths)
    except TypeError:
        raise InputError(f"`paths` must be a path or a collection of paths; got {type(paths).__name__}") from None
    if not items:
        raise InputError("`paths` must name at least one file or directory")
    for item in items:
        if not isinstance(item, str | os.PathLike):
            raise InputError(f"`paths` must hold paths; got {item!r}")
    return items


def _run(paths: PathLike | Iterable[PathLike], fmt: str, options: Options, progress: Progress | None = None) -> IngestResult:
    units: dict[str, list[tuple[Path, str, Any]]] = {f: [] for f in INGEST_FORMATS}
    ignored: dict[str, str] = {}
    formats: dict[str, str] = {}
    given_paths = _paths_iv(paths)
    walked = [(Path(given), walk([Path(given)])) for given in given_paths]
    total, seen = sum(len(files) for _, files in walked), 0
    for root, files in walked:
        explicit = not root.is_dir()
        for file in files:
            if progress is not None:
                progress(seen, total, "files read")
            seen += 1
            try:
                found, kind, doc = _sniff(file)
            except FileFormatError as exc:
                if explicit:
                    raise
                ignored[str(file)] = str(exc).removeprefix(f"{file}: ")
                continue
            if found is None:
                if explicit:
                    raise FileFormatError(f"{file}: cannot tell the format ({kind}); expected {_EXPECTED}")
                ignored[str(file)] = kind
                continue
            if fmt != "auto" and found != fmt:
                if explicit:
                    raise FileFormatError(f"{file}: is a {found} file, not {fmt}; pass format='auto' or the right format")
                ignored[str(file)] = f"a {found} file (format={fmt})"
                continue
            units[found].append((file, kind, doc))
            formats[str(file)] = found

    collectors: list[Collector] = []
    if units["swebench"]:
        collector = Collector("swebench", options)
        _swebench.read_documents(collector, units["swebench"], ignored)
        collectors.append(collector)
    if units["inspect"]:
        collector = Collector("inspect", options)
        _inspect.read_logs(collector, units["inspect"], ignored, progress=progress)
        collectors.append(collector)
    if units["tau2"]:
        collector = Collector("tau2", options)
        results_dirs = {f.resolve().parent for f, kind, _ in units["tau2"] if kind == "results"}
        for file, kind, doc in units["tau2"]:
            if kind == "results":
                _tau2.read_results(collector, file, doc)
            elif file.resolve().parent.name != "simulations" or file.resolve().parent.parent not in results_dirs:
                ignored[str(file)] = _tau2.orphan_reason(file, ignored)
                formats.pop(str(file), None)
            else:
                formats.pop(str(file), None)
        collectors.append(collector)
    if units["harbor"]:
        collector = Collector("harbor", options)
        _harbor.read_documents(collector, units["harbor"], ignored)
        collectors.append(collector)
    if units["hal"]:
        collector = Collector("hal", options)
        for file, _, doc in units["hal"]:
            _hal.read_upload(collector, file, doc)
        collectors.append(collector)
    if not collectors or not any(c.files for c in collectors):
        listing = "; ".join(f"{k}: {v}" for k, v in sorted(ignored.items())[:5])
        raise FileFormatError(f"no harness logs found in {', '.join(map(str, given_paths))} ({listing})")
    read = {f for c in collectors for f in c.files}
    if progress is not None:
        progress(total, total, "files read")
    return finish(
        collectors,
        formats={k: v for k, v in formats.items() if k in read},
        ignored_files=ignored,
        want_trajectories=options.trajectories,
    )


def ingest(
    paths: PathLike | Iterable[PathLike],
    *,
    format: str = "auto",
    system: str | None = None,
    scorer: str | None = None,
    errors: str = "pending",
    empty_patch: str = "fail",
    elapsed: str = "total",
    instances: Iterable[str] | None = None,
    trajectories: bool = False,
    task_ids: str = "canonical",
    progress: Progress | None = None,
) -> IngestResult:
    """Read harness logs into outcome rows (and trajectories), with nothing left out silently.

    Parameters
    ----------
    paths : path-like or collection of path-likes
        Harness files and run directories. A directory is walked for ``.json`` and ``.eval``
        files; files that are no harness log are listed in ``ignored_files``.
    format : {"auto", "swebench", "inspect", "tau2", "harbor", "hal"}, optional
        ``auto`` (default) tells each file's format from its content.
    system : str, optional
        The system name for every row, or a template over the log's fields: ``{file}`` and
        ``{dir}`` everywhere, and where the format has them ``{run_id}``, ``{agent}``,
        ``{model}``, ``{kwargs.NAME}`` (the agent's keyword arguments) and the format's own
        (``"{task}/{model}"`` for Inspect; ``docs/ingest.md`` lists each format's). Default: the
        log's model or agent. Runs of one system (SWE-bench run ids, Harbor jobs, Terminal-Bench
        runs) become its attempts.
    scorer : str, optional
        Inspect: the scorer whose value is the outcome (``"NAME"`` or ``"NAME:KEY"`` for a dict
        score; default the eval's first scorer). Harbor: the reward key (default ``reward``).
        HAL: the key of a per-task result object.
    errors : {"pending", "fail", "drop"}, optional
        What a run whose outcome is unknown because the harness failed becomes: a ``pending``
        row with a blank outcome (default; a decision leaves it out and counts it), a ``final``
        row with outcome 0 (the leaderboards' convention), or no row (counted in ``skipped``).
        Either row carries the ``error`` flag in ``source``.
    empty_patch : {"fail", "pending", "drop"}, optional
        SWE-bench runs that produced no patch: outcome 0 (default), pending, or no row; flagged
        ``empty_patch`` in ``source``.
    elapsed : {"total", "agent"}, optional
        ``total`` wall-clock time of the run (default), or the agent's own time (Inspect
        ``working_time``, Harbor ``agent_execution``, HAL model-call latency).
    instances : collection of str, optional
        The dataset's instance ids, needed for SWE-bench leaderboard ``results.json`` files that
        list only the resolved instances.
    trajectories : bool, optional
        Also build trajectories from logs that hold the messages (Inspect, tau2).
    task_ids : {"canonical", "raw"}, optional
        ``canonical`` (default) task ids pair up across a benchmark's file shapes (Harbor's
        ``<dataset>/<task>`` becomes ``<task>``, as in its job summaries and legacy Terminal-Bench);
        ``raw`` keeps each file's own id.
    progress : callable, optional
        Called as ``progress(done, total, description)``: the files read of all files found, then (for
        Inspect ``.eval`` archives, whose samples are read after every file is sorted by format) the
        archives read of those chosen.

    Returns
    -------
    IngestResult
        Validated outcome rows, trajectories, skipped runs with reasons, and the files read.

    Raises
    ------
    FileFormatError
        A file cannot be read or is of no known format.
    ValidationError
        Fields break their rules; every problem names the file, record, field, rule and value.
    InputError
        An argument is out of range.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from stopwise.ingest import ingest
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "gpt.run1.json").write_text(json.dumps({
    ...     "resolved_ids": ["django__django-1"], "unresolved_ids": ["astropy__astropy-2"],
    ...     "error_ids": [], "empty_patch_ids": ["django__django-3"]}))
    >>> result = ingest(d)
    >>> result.rows[["system", "task", "outcome", "group"]]
      system                task  outcome            group
    0    gpt  astropy__astropy-2      0.0  astropy/astropy
    1    gpt    django__django-1      1.0    django/django
    2    gpt    django__django-3      0.0    django/django
    >>> result.flag_counts()
    {'empty_patch': 1}
    """
    options = options_iv(
        "ingest",
        format=format,
        system=system,
        scorer=scorer,
        errors=errors,
        empty_patch=empty_patch,
        elapsed=elapsed,
        instances=instances,
        trajectories=trajectories,
        task_ids=task_ids,
    )
    if progress is not None and not callable(progress):
        raise InputError(f"`progress` must be a callable or None; got {type(progress).__name__}")
    return _run(paths, format, options, progress)


def read_swebench(
    path: PathLike | Iterable[PathLike],
    *,
    system: str | None = None,
    errors: str = "pending",
    empty_patch: str = "fail",
    instances: Iterable[str] | None = None,
) -> IngestResult:
    """Read SWE-bench run reports, leaderboard ``results.json`` files or per-instance reports.

    Task = instance id, group = its repository, attempt 0. See :func:`ingest` for the parameters.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from stopwise.ingest import read_swebench
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "my_agent" / "results"
    >>> d.mkdir(parents=True)
    >>> _ = (d / "results.json").write_text(json.dumps({"resolved": ["a__b-1"], "no_generation": ["a__b-2"]}))
    >>> rows = read_swebench(d / "results.json", instances=["a__b-1", "a__b-2", "a__b-3"]).rows
    >>> rows[["system", "task", "outcome"]].to_records(index=False).tolist()
    [('my_agent', 'a__b-1', 1.0), ('my_agent', 'a__b-2', 0.0), ('my_agent', 'a__b-3', 0.0)]
    """
    options = options_iv(
        "read_swebench",
        system=system, scorer=None, errors=errors, empty_patch=empty_patch, elapsed="total",
        instances=instances, trajectories=False,
    )
    return _run(path, "swebench", options)


def read_inspect(
    path: PathLike | Iterable[PathLike],
    *,
    system: str | None = None,
    scorer: str | None = None,
    errors: str = "pending",
    elapsed: str = "total",
    trajectories: bool = False,
) -> IngestResult:
    """Read Inspect AI logs (``.eval`` or ``.json``) without importing ``inspect_ai``.

    Task = sample id, attempt = epoch - 1, outcome = the chosen scorer's value. See
    :func:`ingest` for the parameters.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from stopwise.ingest import read_inspect
    >>> log = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m/x"},
    ...        "samples": [{"id": 1, "epoch": 1, "scores": {"match": {"value": "C"}}, "total_time": 2.5}]}
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "log.json"
    >>> _ = f.write_text(json.dumps(log))
    >>> read_inspect(f).rows[["system", "task", "attempt", "outcome", "elapsed_s"]]
      system task  attempt  outcome  elapsed_s
    0    m/x    1        0      1.0        2.5
    """
    options = options_iv(
        "read_inspect",
        system=system, scorer=scorer, errors=errors, empty_patch="fail", elapsed=elapsed,
        instances=None, trajectories=trajectories,
    )
    return _run(path, "inspect", options)


def read_tau2(
    path: PathLike | Iterable[PathLike],
    *,
    system: str | None = None,
    errors: str = "pending",
    trajectories: bool = False,
) -> IngestResult:
    """Read tau2-bench results (monolithic ``results.json`` or the directory format).

    Task = ``task_id``, attempt = ``trial``, group = domain. See :func:`ingest` for the parameters.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from stopwise.ingest import read_tau2
    >>> doc = {"info": {"agent_info": {"implementation": "llm_agent", "llm": "gpt-4.1"},
    ...                 "environment_info": {"domain_name": "airline"}},
    ...        "tasks": [], "simulations": [{"id": "s1", "task_id": "0", "trial": 0, "duration": 31.0,
    ...        "termination_reason": "user_stop", "agent_cost": 0.02, "reward_info": {"reward": 1.0}}]}
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "results.json"
    >>> _ = f.write_text(json.dumps(doc))
    >>> read_tau2(f).rows[["system", "task", "group", "outcome", "cost_usd", "elapsed_s"]]
        system task    group  outcome  cost_usd  elapsed_s
    0  gpt-4.1    0  airline      1.0      0.02       31.0
    """
    options = options_iv(
        "read_tau2",
        system=system, scorer=None, errors=errors, empty_patch="fail", elapsed="total",
        instances=None, trajectories=trajectories,
    )
    return _run(path, "tau2", options)


def read_harbor(
    path: PathLike | Iterable[PathLike],
    *,
    system: str | None = None,
    scorer: str | None = None,
    errors: str = "pending",
    elapsed: str = "total",
    task_ids: str = "canonical",
) -> IngestResult:
    """Read Harbor trial / job ``result.json`` files (and legacy Terminal-Bench ``results.json``).

    Task = the canonical task id (``task_ids="raw"``: the task name as written), attempts number
    the trials of a task by job (or run) and start time, outcome = the verifier's reward. See
    :func:`ingest` for the parameters.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from stopwise.ingest import read_harbor
    >>> trial = {"task_name": "hello", "trial_name": "hello__x1", "agent_info": {"name": "terminus-2",
    ...          "model_info": {"name": "gpt-5", "provider": "openai"}}, "agent_result": {"cost_usd": 0.4},
    ...          "verifier_result": {"rewards": {"reward": 1.0}}, "exception_info": None,
    ...          "started_at": "2025-01-01T00:00:00Z", "finished_at": "2025-01-01T00:02:00Z"}
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "result.json"
    >>> _ = f.write_text(json.dumps(trial))
    >>> read_harbor(f).rows[["system", "task", "outcome", "cost_usd", "elapsed_s"]]
                 system   task  outcome  cost_usd  elapsed_s
    0  terminus-2/gpt-5  hello      1.0       0.4      120.0
    """
    options = options_iv(
        "read_harbor",
        system=system, scorer=scorer, errors=errors, empty_patch="fail", elapsed=elapsed,
        instances=None, trajectories=False, task_ids=task_ids,
    )
    return _run(path, "harbor", options)


def read_hal(
    path: PathLike | Iterable[PathLike],
    *,
    system: str | None = None,
    scorer: str | None = None,
    errors: str = "pending",
    empty_patch: str = "fail",
    elapsed: str = "total",
) -> IngestResult:
    """Read HAL ``*_UPLOAD.json`` files.

    Task = key of ``raw_eval_results``, system = ``config.agent_name``. See :func:`ingest` for
    the parameters.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> from stopwise.ingest import read_hal
    >>> doc = {"config": {"agent_name": "agent (gpt-4o)", "benchmark_name": "taubench_airline"},
    ...        "raw_eval_results": {"3": {"reward": 1.0}, "7": "ERROR: rate limited"},
    ...        "wall_clock_times": {"3": 12.0, "7": 3.0}}
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "run_UPLOAD.json"
    >>> _ = f.write_text(json.dumps(doc))
    >>> read_hal(f).rows[["task", "outcome", "status", "elapsed_s"]]
      task  outcome   status  elapsed_s
    0    3      1.0    final       12.0
    1    7      NaN  pending        3.0
    """
    options = options_iv(
        "read_hal",
        system=system, scorer=scorer, errors=errors, empty_patch=empty_patch, elapsed=elapsed,
        instances=None, trajectories=False,
    )
    return _run(path, "hal", options)
