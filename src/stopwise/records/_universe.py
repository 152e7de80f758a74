"""The task universe: the planned tasks of a comparison, an input fixed before any outcome exists.

A decision is about the mean difference over the N tasks the evaluation PLANS to run, not over the
tasks that happen to have rows so far. The universe gives N, the coverage groups and their sizes
n_g (including groups with no outcome yet) and, when task names are known, the planned order
(position = index). It comes from the ``stopwise order`` output, a tasks file, or from counts only
(``--n-tasks`` and group sizes, task names unknown).

Groups: a task without a group belongs to the unnamed group ``""``. A universe whose tasks all sit
in ``""`` carries no group information; coverage is then judged over one group.

The digest (:meth:`TaskUniverse.sha256`) is the sha256 of the universe's canonical JSON: for a
universe of tasks ``{"groups": [...], "tasks": [...]}`` in planned order, for one from counts
``{"group_sizes": {...}, "n_tasks": N}`` (sorted keys, no spaces). It is stamped on decision records.

Order provenance. ``stopwise order`` stamps its output with the order's kind, seed and digest
(:class:`OrderStamp`, columns ``order_kind``, ``order_seed``, ``order_sha256``); the universe read back
keeps the stamp (:attr:`TaskUniverse.stamp`) and whether it came from a file. The digest is the sha256
of ``{"kind": ..., "seed": ..., "universe": <the universe's sha256>}`` (canonical JSON): an edited
order no longer matches it. The stamp is not part of the universe's own digest.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from stopwise._canonical import canonical_json
from stopwise.errors import ArgumentError, Problem, TaskUniverseError

__all__ = ["MAX_UNIVERSE_TASKS", "OrderStamp", "TaskUniverse", "TaskUniverseError", "order_digest", "read_task_universe"]

MAX_UNIVERSE_TASKS = 10_000_000
"""Largest N a universe may declare (bounds memory of coverage tables built from it)."""
MAX_NAME_TABLE_BYTES = 128 * 1024 * 1024
"""Largest table of a universe's task ids (or group names): N x the longest one x 4 bytes, the fixed-width text
array they are held in. One 100,000-character id among 20,000 tasks would make it 7.45 GiB; such a universe is
refused before the table is allocated (issue 37)."""

_UNIVERSE_COLUMNS = ("task", "group", "position", "covered")
STAMP_COLUMNS = ("order_kind", "order_seed", "order_sha256")
"""The provenance columns of the ``stopwise order`` output (the same value on every row)."""


def _check_name_table(names: list[str], field: str, source: str) -> None:
    """Refuse names whose fixed-width table (N x the longest x 4 bytes) would pass :data:`MAX_NAME_TABLE_BYTES`."""
    if not names:
        return
    lengths = np.fromiter(map(len, names), dtype=np.int64, count=len(names))
    longest = int(np.argmax(lengths))
    size = len(names) * int(lengths[longest]) * 4
    if size > MAX_NAME_TABLE_BYTES:
        raise TaskUniverseError([Problem(
            source, longest + 1, field,
            f"is {int(lengths[longest]):,} characters long: {len(names):,} {field} names are held at the width of the "
            f"longest, {size / 2**30:.2f} GiB, over the limit of {MAX_NAME_TABLE_BYTES // 2**20} MiB "
            f"(N x longest x 4 bytes); shorten it", names[longest],
        )])


def order_digest(kind: str, seed: int, universe_sha256: str) -> str:
    """sha256 of the canonical JSON ``{"kind", "seed", "universe"}`` of a planned order.

    Examples
    --------
    >>> from stopwise.records._universe import order_digest
    >>> len(order_digest("uniform", 0, "0" * 64))
    64
    """
    document = {"kind": str(kind), "seed": int(seed), "universe": str(universe_sha256)}
    return hashlib.sha256(canonical_json(document).encode()).hexdigest()


@dataclass(frozen=True)
class OrderStamp:
    """Where a planned order came from: its kind, seed and digest (written by ``stopwise order``)."""

    kind: str
    """The order kind drawn (``uniform``, ``coverage-aware``, ``cost-first``)."""
    seed: int
    """The seed of the draw."""
    sha256: str
    """:func:`order_digest` of the kind, seed and the universe's sha256."""

    def matches(self, universe: TaskUniverse) -> bool:
        """The digest is that of this kind, seed and universe (the order was not edited)."""
        return universe.ordered and self.sha256 == order_digest(self.kind, self.seed, universe.sha256())


class TaskUniverse:
    """The planned tasks of a comparison, in planned order, each with its coverage group.

    Parameters
    ----------
    tasks : sequence of str
        Task ids in planned order (position i + 1 is ``tasks[i]``); unique and non-empty.
    groups : sequence of str, optional
        Coverage group of each task (same length); ``""`` or omitted means no group.

    Raises
    ------
    TaskUniverseError
        Empty, duplicated or blank task ids, or groups of a different length (each problem names
        the position and the value).

    Examples
    --------
    >>> from stopwise import TaskUniverse
    >>> u = TaskUniverse(["t3", "t1", "t2"], ["a", "b", "a"])
    >>> u.n_tasks, u.group_sizes, u.ordered, u.positions(["t2", "t9"]).tolist()
    (3, {'a': 2, 'b': 1}, True, [2, -1])
    >>> TaskUniverse.from_counts(510, {"easy": 300, "hard": 210}).group_sizes
    {'easy': 300, 'hard': 210}
    """

    __slots__ = ("_from_file", "_group_sizes", "_groups", "_index", "_n", "_sha", "_stamp", "_tasks")

    def __init__(
        self,
        tasks: Sequence[str],
        groups: Sequence[str] | None = None,
        *,
        source: str = "<tasks>",
        stamp: OrderStamp | None = None,
        from_file: bool = False,
    ) -> None:
        task_array = np.asarray(list(tasks), dtype=object)
        problems: list[Problem] = []
        if task_array.ndim != 1 or len(task_array) == 0:
            raise TaskUniverseError([Problem(source, None, "task", "must list at least one planned task", None)])
        if len(task_array) > MAX_UNIVERSE_TASKS:
            raise TaskUniverseError(
                [Problem(source, None, "task", f"must list at most {MAX_UNIVERSE_TASKS:,} tasks", len(task_array))]
            )
        bad = np.array([not isinstance(t, str) or not t.strip() for t in task_array], dtype=bool)
        for i in np.flatnonzero(bad)[:20]:
            problems.append(Problem(source, int(i) + 1, "task", "must be a non-empty text task id", task_array[i]))
        if problems:
            raise TaskUniverseError(problems)
        stripped = [t.strip() for t in task_array]
        _check_name_table(stripped, "task", source)
        names = np.array(stripped, dtype=str)
        _, first_index, name_of = np.unique(names, return_index=True, return_inverse=True)
        first_position = first_index[name_of.reshape(-1)]
        duplicated = first_position != np.arange(len(names))
        if duplicated.any():
            for i in np.flatnonzero(duplicated)[:20]:
                problems.append(
                    Problem(
                        source,
                        int(i) + 1,
                        "task",
                        f"must be unique; already planned at position {int(first_position[i]) + 1}",
                        str(names[i]),
                    )
                )
            raise TaskUniverseError(problems)
        if groups is None:
            group_array = np.full(len(names), "", dtype=object)
        else:
            group_array = np.asarray(list(groups), dtype=object)
            if group_array.shape != names.shape:
                raise TaskUniverseError(
                    [Problem(source, None, "group", f"must give one group per task ({len(names)})", len(group_array))]
                )
        group_text = ["" if g is None or (isinstance(g, float) and np.isnan(g)) else str(g).strip() for g in group_array]
        _check_name_table(group_text, "group", source)
        group_names = np.array(group_text, dtype=str)
        self._tasks: np.ndarray | None = names
        self._groups: np.ndarray | None = group_names
        self._n = len(names)
        labels, sizes = np.unique(group_names, return_counts=True)
        self._group_sizes = {str(g): int(s) for g, s in zip(labels, sizes, strict=True)}
        self._index: tuple[np.ndarray, np.ndarray] | None = None
        self._sha: str | None = None
        self._stamp = stamp
        self._from_file = bool(from_file)

    @classmethod
    def from_counts(cls, n_tasks: int, group_sizes: Mapping[str, int] | None = None) -> TaskUniverse:
        """A universe known only by its size and group sizes (task names and order unknown).

        Parameters
        ----------
        n_tasks : int
            N, the number of planned tasks (>= 1).
        group_sizes : mapping of str to int, optional
            n_g per group; the sizes must add up to ``n_tasks``. Omitted: one unnamed group.

        Raises
        ------
        TaskUniverseError
            N not a positive integer, a group size not a positive integer, or sizes not adding up.

        Examples
        --------
        >>> from stopwise import TaskUniverse
        >>> u = TaskUniverse.from_counts(60)
        >>> u.n_tasks, u.ordered, u.group_sizes
        (60, False, {'': 60})
        """
        source = "<counts>"
        if (
            isinstance(n_tasks, bool)
            or not isinstance(n_tasks, int | np.integer)
            or not 1 <= n_tasks <= MAX_UNIVERSE_TASKS
        ):
            raise TaskUniverseError(
                [Problem(source, None, "n_tasks", f"must be an integer in [1, {MAX_UNIVERSE_TASKS:,}]", n_tasks)]
            )
        sizes = {"": int(n_tasks)} if not group_sizes else dict(group_sizes)
        problems = [
            Problem(source, None, f"group_sizes[{name!r}]", "must be an integer >= 1", size)
            for name, size in sizes.items()
            if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 1
        ]
        problems += [
            Problem(source, None, "group_sizes", "group names must be text", name)
            for name in sizes
            if not isinstance(name, str)
        ]
        if problems:
            raise TaskUniverseError(problems)
        total = sum(int(s) for s in sizes.values())
        if total != n_tasks:
            raise TaskUniverseError(
                [Problem(source, None, "group_sizes", f"must add up to n_tasks = {n_tasks}", total)]
            )
        universe = cls.__new__(cls)
        universe._tasks = None
        universe._groups = None
        universe._n = int(n_tasks)
        universe._group_sizes = {str(k).strip(): int(sizes[k]) for k in sorted(sizes)}
        universe._index = None
        universe._sha = None
        universe._stamp = None
        universe._from_file = False
        return universe

    @property
    def stamp(self) -> OrderStamp | None:
        """The order's provenance (``stopwise order``'s kind, seed and digest); None when not stamped."""
        return self._stamp

    @property
    def from_file(self) -> bool:
        """Read from a tasks file (:func:`read_task_universe`) rather than built in Python."""
        return self._from_file

    def with_stamp(self, kind: str, seed: int) -> TaskUniverse:
        """A copy of the universe stamped as the seeded draw of an order kind (the digest computed here).

        Examples
        --------
        >>> from stopwise import TaskUniverse
        >>> u = TaskUniverse(["t2", "t1"]).with_stamp("uniform", 3)
        >>> u.stamp.kind, u.stamp.seed, u.stamp.matches(u)
        ('uniform', 3, True)
        """
        if self._tasks is None:
            raise ArgumentError("a universe from counts has no order to stamp")
        stamped = TaskUniverse(self._tasks.tolist(), None if self._groups is None else self._groups.tolist())
        stamped._stamp = OrderStamp(str(kind), int(seed), order_digest(kind, seed, self.sha256()))
        stamped._from_file = self._from_file
        return stamped

    @property
    def n_tasks(self) -> int:
        """N, the number of planned tasks."""
        return self._n

    @property
    def group_sizes(self) -> dict[str, int]:
        """n_g of every planned group (``""`` for tasks without a group), labels sorted."""
        return dict(self._group_sizes)

    @property
    def ordered(self) -> bool:
        """True when the task names (and so the planned order) are known."""
        return self._tasks is not None

    @property
    def has_groups(self) -> bool:
        """True when at least one planned task has a named group."""
        return any(label != "" for label in self._group_sizes)

    @property
    def tasks(self) -> np.ndarray | None:
        """Task ids in planned order (None for a universe from counts)."""
        return None if self._tasks is None else self._tasks.copy()

    @property
    def groups(self) -> np.ndarray | None:
        """Group of each task in planned order (None for a universe from counts)."""
        return None if self._groups is None else self._groups.copy()

    def positions(self, tasks: Sequence[str] | np.ndarray) -> np.ndarray:
        """0-based planned positions of the given tasks; -1 for tasks outside the universe.

        Raises
        ------
        ValueError
            The universe comes from counts and has no task names.
        """
        if self._tasks is None:
            raise ArgumentError("a universe from counts has no task names or order")
        if self._index is None:
            order = np.argsort(self._tasks, kind="stable")
            self._index = (self._tasks[order], order)
        names, order = self._index
        wanted = np.asarray(tasks, dtype=object).astype(str)
        if len(wanted) == 0:
            return np.zeros(0, dtype=np.int64)
        at = np.minimum(np.searchsorted(names, wanted), len(names) - 1)
        return np.where(names[at] == wanted, order[at], -1).astype(np.int64)

    def canonical_json(self) -> str:
        """The universe as canonical JSON (sorted keys, no whitespace); see the module docstring."""
        if self._tasks is None:
            document: dict[str, object] = {"group_sizes": self._group_sizes, "n_tasks": self._n}
        else:
            assert self._groups is not None
            document = {"groups": self._groups.astype(object).tolist(), "tasks": self._tasks.astype(object).tolist()}
        return canonical_json(document)

    def sha256(self) -> str:
        """sha256 hex digest of :meth:`canonical_json`; stamped on decision records."""
        if self._sha is None:
            self._sha = hashlib.sha256(self.canonical_json().encode()).hexdigest()
        return self._sha

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TaskUniverse) and self.canonical_json() == other.canonical_json()

    def __hash__(self) -> int:
        return hash(self.sha256())

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        kind = "tasks" if self.ordered else "counts"
        return f"TaskUniverse(n_tasks={self._n}, groups={len(self._group_sizes)}, from {kind}, sha256={self.sha256()[:12]})"


def read_task_universe(path: str | os.PathLike[str], *, group_column: str = "group") -> TaskUniverse:
    r"""Read the planned tasks from the ``stopwise order`` output or a tasks file.

    The file (CSV, JSONL or Parquet) has a ``task`` column, optionally the group column and a
    ``position`` column (1-based planned positions, a permutation of 1..N; rows are put in that
    order). Without ``position`` the row order is the planned order. The order output's
    ``covered`` column is checked (true or false on every row, or blank) and ignored, and its provenance columns ``order_kind``,
    ``order_seed`` and ``order_sha256`` (one value on every row) become :attr:`TaskUniverse.stamp`;
    any other column is an error (a misspelt ``group`` would otherwise silently drop coverage).

    Parameters
    ----------
    path : path-like
        The tasks file.
    group_column : str, optional
        Column holding each task's coverage group (the policy's ``coverage.group_column``).

    Returns
    -------
    TaskUniverse

    Raises
    ------
    FileFormatError
        Missing, empty or unreadable file.
    TaskUniverseError
        Rows break the rules; each problem names the file, row, field, rule and value.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from stopwise import read_task_universe
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "order.csv"
    >>> _ = f.write_text("position,task,group\n2,t1,a\n1,t2,b\n")
    >>> u = read_task_universe(f)
    >>> u.tasks.tolist(), u.groups.tolist()
    (['t2', 't1'], ['b', 'a'])
    """
    from stopwise.records._outcomes import _numbers
    from stopwise.records._tables import read_table

    file = Path(path)
    source = str(file)
    cells = read_table(file, what="tasks file").cells
    columns = [str(c) for c in cells]
    allowed = ("task", group_column, "position", "covered", *STAMP_COLUMNS)
    problems: list[Problem] = []
    if "task" not in columns:
        raise TaskUniverseError(
            [Problem(source, None, "task", "must be a column of the tasks file", ", ".join(columns))]
        )
    for column in columns:
        if column not in allowed:
            problems.append(
                Problem(
                    source,
                    None,
                    column,
                    f"is not a tasks-file column (allowed: {', '.join(dict.fromkeys(allowed))})",
                    None,
                )
            )
    if len(set(columns)) != len(columns):
        problems.append(Problem(source, None, None, "column names must be unique", ", ".join(columns)))
    if problems:
        raise TaskUniverseError(problems)
    n = len(cells["task"])
    if n == 0:
        raise TaskUniverseError([Problem(source, None, "task", "must list at least one planned task", None)])
    stamp = _read_stamp(cells, columns, source)
    if "covered" in columns:
        _check_covered(cells["covered"], source)
    tasks = np.asarray(cells["task"], dtype=object)
    groups = np.asarray(cells[group_column], dtype=object) if group_column in columns else None
    if groups is not None:
        for i, value in enumerate(groups):
            if value is not None and not isinstance(value, str) and not (isinstance(value, float) and np.isnan(value)):
                problems.append(Problem(source, i + 1, group_column, "must be text", value))
                if len(problems) >= 20:
                    break
        if problems:
            raise TaskUniverseError(problems)
    if "position" in columns:
        raw = cells["position"]
        numeric = _numbers(raw)[0]
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(numeric) | (numeric != np.round(numeric)) | (numeric < 1) | (numeric > n)
        for i in np.flatnonzero(bad)[:20]:
            value = raw[i]
            problems.append(Problem(source, int(i) + 1, "position", f"must be an integer in [1, {n}]", value.item() if isinstance(value, np.generic) else value))
        if problems:
            raise TaskUniverseError(problems)
        positions = numeric.astype(np.int64)
        _, first = np.unique(positions, return_index=True)
        repeated = np.ones(n, dtype=bool)
        repeated[first] = False
        for i in np.flatnonzero(repeated)[:20]:
            problems.append(
                Problem(
                    source, int(i) + 1, "position", "must be unique (each planned position once)", int(positions[i])
                )
            )
        if problems:
            raise TaskUniverseError(problems)
        order = np.argsort(positions, kind="stable")
        tasks = tasks[order]
        groups = groups[order] if groups is not None else None
        try:
            return TaskUniverse(tasks.tolist(), None if groups is None else groups.tolist(), source=source, stamp=stamp, from_file=True)
        except TaskUniverseError as exc:
            # report rows of the file, not planned positions
            raise TaskUniverseError(
                [
                    Problem(p.file, int(order[p.row - 1]) + 1 if p.row is not None else None, p.field, p.rule, p.value)
                    for p in exc.problems
                ]
            ) from None
    return TaskUniverse(tasks.tolist(), None if groups is None else groups.tolist(), source=source, stamp=stamp, from_file=True)


_COVERED_TEXT = {"true", "false", "1", "0", ""}


def _is_flag(value: object) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in _COVERED_TEXT
    return value is None or isinstance(value, bool | np.bool_) or (isinstance(value, int | float | np.number) and value in (0, 1))


def _check_covered(values: np.ndarray, source: str) -> None:
    """Refuse a ``covered`` cell that is no flag (``maybe``): the column is the order output's, true or false per row."""
    bad = [i for i, value in enumerate(values) if not _is_flag(value)][:20]
    if bad:
        raise TaskUniverseError(
            [Problem(source, i + 1, "covered", "must be true or false (the order output's coverage flag)", values[i]) for i in bad]
        )


def _read_stamp(cells: Mapping[str, object], columns: list[str], source: str) -> OrderStamp | None:
    """The provenance columns as an :class:`OrderStamp` (all three, one value each), or None when absent."""
    present = [c for c in STAMP_COLUMNS if c in columns]
    if not present:
        return None
    if len(present) != len(STAMP_COLUMNS):
        missing = [c for c in STAMP_COLUMNS if c not in columns]
        raise TaskUniverseError([Problem(source, None, missing[0], "the order's provenance needs all of " + ", ".join(STAMP_COLUMNS), None)])
    values = {}
    for column in STAMP_COLUMNS:
        distinct = {str(v.item() if isinstance(v, np.generic) else v) for v in np.asarray(cells[column], dtype=object)}
        if len(distinct) != 1:
            raise TaskUniverseError([Problem(source, None, column, "must hold one value on every row", ", ".join(sorted(distinct))[:80])])
        values[column] = distinct.pop()
    try:
        seed = int(float(values["order_seed"]))
    except ValueError:
        raise TaskUniverseError([Problem(source, None, "order_seed", "must be an integer", values["order_seed"])]) from None
    return OrderStamp(values["order_kind"], seed, values["order_sha256"])
