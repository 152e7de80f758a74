"""Reference-solution features: gold descriptors and prefix–gold overlap (used only when gold is supplied).

A :class:`GoldSolution` is the task's reference answer (a patch, a script, the expected calls) with the
tests it must pass. The descriptors describe it; the overlap features measure how far the prefix has
moved toward it: hits and Jaccard overlap between the files, API symbols and test names the agent has
touched so far and those of the gold solution. State is updated per step in time proportional to the
step's text.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from stopwise._files import read_text
from stopwise.early._categories import EDITS, READS
from stopwise.errors import FileFormatError, InputError, Problem, ValidationError
from stopwise.records import Step

__all__ = ["REFERENCE_FEATURES", "REFERENCE_GROUPS", "GoldSolution", "ReferenceState", "as_gold", "read_gold"]

_PATH = re.compile(r"(?:[\w\-.]+/)*[\w\-]+\.[A-Za-z][A-Za-z0-9]{0,5}\b")
_CALL = re.compile(r"\b([A-Za-z_]\w{2,})\s*\(")
_IMPORT = re.compile(r"^\s*[+-]?\s*(?:from\s+\S+\s+)?import\s+", re.M)
_EXCEPTION = re.compile(r"\b(?:raise|except|throw|catch)\b|\b\w+(?:Error|Exception)\b")
_DIFF_FILE = re.compile(r"^(?:\+\+\+ b/|--- a/|diff --git a/)(\S+)", re.M)

_GOLD = [
    "gold_chars",
    "gold_lines",
    "gold_added_lines",
    "gold_removed_lines",
    "gold_hunks",
    "gold_files",
    "gold_fail_to_pass",
    "gold_pass_to_pass",
    "gold_api_tokens",
    "gold_import_tokens",
    "gold_exception_tokens",
    "gold_max_depth",
    "gold_mean_depth",
]
_OVERLAP = [
    *[f"{what}_{stat}" for what in ("file", "symbol", "test") for stat in ("hits", "jaccard", "recall")],
    "gold_file_viewed",
    "gold_file_edited",
    "gold_file_edit_hits",
    "gold_file_in_feedback",
    "gold_symbol_in_feedback",
]
REFERENCE_GROUPS: dict[str, tuple[str, ...]] = {"gold": tuple(_GOLD), "overlap": tuple(_OVERLAP)}
"""Reference feature names by group, in feature order."""
REFERENCE_FEATURES: tuple[str, ...] = (*_GOLD, *_OVERLAP)
"""Every reference feature name, in feature order."""


@dataclass(frozen=True)
class GoldSolution:
    r"""A task's reference solution.

    Attributes
    ----------
    text : str
        The reference answer: a unified diff, a script, or the expected calls.
    fail_to_pass : tuple of str
        Tests the solution must make pass.
    pass_to_pass : tuple of str
        Tests that must keep passing.
    files : frozenset of str
        Files the solution touches (read from diff headers, else from path-like tokens).
    symbols : frozenset of str
        API symbols (called or defined names) in the solution.

    Examples
    --------
    >>> g = GoldSolution("--- a/src/m.py\n+++ b/src/m.py\n@@ -1 +1 @@\n-x = f(1)\n+x = g(1)\n")
    >>> sorted(g.files), sorted(g.symbols)
    (['src/m.py'], ['f', 'g'])
    """

    text: str
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    files: frozenset[str] = field(default=frozenset())
    symbols: frozenset[str] = field(default=frozenset())

    def __post_init__(self) -> None:
        if not self.files:
            found = set(_DIFF_FILE.findall(self.text)) or set(_PATH.findall(self.text))
            object.__setattr__(self, "files", frozenset(found))
        if not self.symbols:
            names = set(_CALL.findall(self.text)) | set(re.findall(r"\b(?:def|class|function)\s+([A-Za-z_]\w*)", self.text))
            names |= {n for n in re.findall(r"[-+]\s*\w+\s*=\s*([A-Za-z_]\w*)\s*\(", self.text)}
            object.__setattr__(self, "symbols", frozenset(n for n in names if len(n) >= 1))

    def descriptors(self) -> np.ndarray:
        """The gold descriptors, in :data:`REFERENCE_GROUPS` ``"gold"`` order."""
        lines = self.text.splitlines()
        depths = [f.count("/") for f in self.files]
        return np.array(
            [
                len(self.text),
                len(lines),
                sum(1 for line in lines if line.startswith("+") and not line.startswith("+++")),
                sum(1 for line in lines if line.startswith("-") and not line.startswith("---")),
                sum(1 for line in lines if line.startswith("@@")),
                len(self.files),
                len(self.fail_to_pass),
                len(self.pass_to_pass),
                len(_CALL.findall(self.text)),
                len(_IMPORT.findall(self.text)),
                len(_EXCEPTION.findall(self.text)),
                max(depths) if depths else 0,
                float(np.mean(depths)) if depths else 0.0,
            ],
            dtype=np.float64,
        )


def as_gold(value: Any, *, task: str = "?") -> GoldSolution:
    """Accept a :class:`GoldSolution`, a text, or a mapping with ``text`` (and optional test lists)."""
    if isinstance(value, GoldSolution):
        return value
    if isinstance(value, str):
        return GoldSolution(value)
    if isinstance(value, Mapping) and isinstance(value.get("text"), str):
        f2p = value.get("fail_to_pass") or ()
        p2p = value.get("pass_to_pass") or ()
        if not all(isinstance(t, str) for t in (*f2p, *p2p)):
            raise InputError(f"gold solution of task {task!r}: `fail_to_pass` and `pass_to_pass` must be lists of text")
        return GoldSolution(value["text"], tuple(f2p), tuple(p2p))
    raise InputError(
        f"gold solution of task {task!r} must be a GoldSolution, a text, or a mapping with a 'text' field; "
        f"got {type(value).__name__}"
    )


class ReferenceState:
    r"""Running prefix–gold overlap of one trajectory.

    Parameters
    ----------
    gold : GoldSolution or None
        The task's gold solution; without one every reference feature is NaN (missing).

    Examples
    --------
    >>> from stopwise.records import Step
    >>> state = ReferenceState(GoldSolution("+++ b/src/m.py\n+x = g(1)\n"))
    >>> x = state.update(Step(action='edit({"path": "src/m.py"})', tool="edit"), "edit_replace")
    >>> float(x[REFERENCE_FEATURES.index("file_hits")]), float(x[REFERENCE_FEATURES.index("gold_file_edited")])
    (1.0, 1.0)
    """

    def __init__(self, gold: GoldSolution | None) -> None:
        self.gold = gold
        self.descriptors = gold.descriptors() if gold is not None else None
        self.files: set[str] = set()
        self.symbols: set[str] = set()
        self.tests: set[str] = set()
        self.file_hits = 0
        self.symbol_hits = 0
        self.viewed = 0
        self.edited = 0
        self.edit_hits: set[str] = set()
        self.file_in_feedback = 0
        self.symbol_in_feedback = 0

    def initial(self) -> np.ndarray:
        """Features of the empty prefix."""
        return self._vector()

    def update(self, step: Step, category: str) -> np.ndarray:
        """Add one step (with its recognised category) and return the prefix's features."""
        gold = self.gold
        if gold is None:
            return self._vector()
        action = step.action
        for path in _PATH.findall(action):
            if path not in self.files:
                self.files.add(path)
                self.file_hits += path in gold.files
        gold_paths_here = {f for f in gold.files if f in action}
        if gold_paths_here:
            if category in READS:
                self.viewed = 1
            if category in EDITS:
                self.edited = 1
                self.edit_hits |= gold_paths_here
        for name in _CALL.findall(action):
            if name not in self.symbols:
                self.symbols.add(name)
                self.symbol_hits += name in gold.symbols
        for test in (*gold.fail_to_pass, *gold.pass_to_pass):
            if test not in self.tests and test in action:
                self.tests.add(test)
        observation = step.observation
        if not self.file_in_feedback and any(f in observation for f in gold.files):
            self.file_in_feedback = 1
        if not self.symbol_in_feedback and any(s in observation for s in gold.symbols if len(s) > 3):
            self.symbol_in_feedback = 1
        return self._vector()

    def _vector(self) -> np.ndarray:
        gold = self.gold
        if gold is None or self.descriptors is None:
            return np.full(len(REFERENCE_FEATURES), math.nan)
        all_tests = set(gold.fail_to_pass) | set(gold.pass_to_pass)
        values: list[float] = []
        for hits, mine, theirs in (
            (self.file_hits, len(self.files), len(gold.files)),
            (self.symbol_hits, len(self.symbols), len(gold.symbols)),
            (len(self.tests), len(self.tests), len(all_tests)),
        ):
            union = mine + theirs - hits
            values += [hits, hits / union if union else 0.0, hits / theirs if theirs else math.nan]
        values += [self.viewed, self.edited, len(self.edit_hits), self.file_in_feedback, self.symbol_in_feedback]
        return np.concatenate([self.descriptors, np.asarray(values, dtype=np.float64)])


def read_gold(path: str | os.PathLike[str]) -> dict[str, GoldSolution]:
    r"""Read gold solutions from JSONL: one ``{"task", "text", "fail_to_pass", "pass_to_pass"}`` object per line.

    Raises
    ------
    FileFormatError
        The file is missing or unreadable.
    ValidationError
        A line breaks the format (line, field, rule and value named).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "gold.jsonl"
    >>> _ = path.write_text('{"task": "t1", "text": "+++ b/a.py\\n+x = f(1)"}\n')
    >>> sorted(read_gold(path)["t1"].files)
    ['a.py']
    """
    file = Path(path)
    lines = read_text(file, "file of gold solutions (JSONL)").splitlines()
    out: dict[str, GoldSolution] = {}
    problems: list[Problem] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            problems.append(Problem(str(file), number, None, f"must be one JSON object per line ({exc})"))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(str(file), number, None, "must be a JSON object", type(obj).__name__))
            continue
        task = obj.get("task")
        if not isinstance(task, str) or not task:
            problems.append(Problem(str(file), number, "task", "must be non-empty text", task))
            continue
        if not isinstance(obj.get("text"), str):
            problems.append(Problem(str(file), number, "text", "must be the gold solution as text", obj.get("text")))
            continue
        try:
            out[task] = as_gold(obj, task=task)
        except InputError as exc:
            problems.append(Problem(str(file), number, "fail_to_pass", str(exc)))
    if problems:
        raise ValidationError(problems)
    if not out:
        raise FileFormatError(f"{file}: holds no gold solutions")
    return out
