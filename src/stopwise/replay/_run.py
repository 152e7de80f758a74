"""``replay``: completed-record replay of one or more sources under one or more policies."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stopwise._version import __version__
from stopwise.compare import exceeds_threshold
from stopwise.errors import ArgumentError, ComparisonError
from stopwise.records import Policy
from stopwise.replay._checks import check_replay_args
from stopwise.replay._engine import DEFAULT_BUDGETS, replay_source_grid
from stopwise.replay._metrics import sufficiency, summarize
from stopwise.replay._policies import comparison_policies
from stopwise.replay._settings import ReplaySettings
from stopwise.replay._source import ReplaySource, prepare_source

__all__ = ["ReplayResult", "replay_grid", "source_table"]


def source_table(sources: Sequence[ReplaySource], thresholds: Sequence[float]) -> pd.DataFrame:
    """Table I of the paper for our sources: pairs, overlap, positives per threshold, groups, resources.

    Examples
    --------
    >>> from stopwise.records import synthetic_benchmark
    >>> from stopwise.replay import prepare_source, source_table
    >>> table = source_table([prepare_source(synthetic_benchmark(50, 4, rng=0), "synthetic")], [0.0])
    >>> table[["source", "pairs", "unordered_pairs", "median_overlap", "groups"]].to_dict("records")
    [{'source': 'synthetic', 'pairs': 12, 'unordered_pairs': 6, 'median_overlap': 50.0, 'groups': 6}]
    """
    rows = []
    for source in sources:
        row: dict[str, Any] = {
            "source": source.name,
            "systems": len(source.systems),
            "excluded_systems": len(source.excluded_systems),
            "pairs": len(source.pairs),
            "unordered_pairs": len({tuple(sorted((p.tested, p.baseline))) for p in source.pairs}),
            "median_overlap": float(np.median([p.n_shared for p in source.pairs])) if source.pairs else np.nan,
            "groups": len({g for g in source.groups if g}) + (1 if (source.groups == "").any() else 0),
            "cost": bool(np.isfinite(source.cost).any()),
            "elapsed": bool(np.isfinite(source.elapsed).any()),
        }
        for threshold in thresholds:
            row[f"positives_{threshold:g}"] = sum(exceeds_threshold(p.differences, p.lattice, threshold) for p in source.pairs)
        rows.append(row)
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class ReplayResult:
    """The outcome of a completed-record replay.

    Attributes
    ----------
    cases : pandas.DataFrame
        Per-pair decision records: one row per (source, policy, threshold, directed pair, budget)
        with the action counts over the task orders (:data:`stopwise.replay._engine.CASE_COLUMNS`).
    summary : pandas.DataFrame
        Metrics per (source, policy, threshold, budget), computed from ``cases`` by :func:`summarize`.
    sufficiency : pandas.DataFrame
        Minimum sufficient budgets (the paper's Table II), computed from ``summary``.
    sources : pandas.DataFrame
        Pairs, overlaps and positive counts per source (the paper's Table I).
    decisions : pandas.DataFrame or None
        One row per decision, when requested.
    settings : ReplaySettings
        Everything needed to rerun: policies (canonical JSON and sha256), thresholds, budgets,
        orders, measure, filters, exclusions, library version (``settings.json``: its ``to_dict()``).
    """

    cases: pd.DataFrame
    summary: pd.DataFrame
    sufficiency: pd.DataFrame
    sources: pd.DataFrame
    decisions: pd.DataFrame | None
    settings: ReplaySettings

    def write(self, directory: str | Path, *, force: bool = False) -> list[Path]:
        """Write the records and tables into a new directory, atomically; returns the written paths.

        Files: ``cases.parquet`` (per-pair decision records), ``decisions.parquet`` (when kept),
        ``summary.{csv,json}``, ``sufficiency.{csv,json}``, ``sources.csv``, ``settings.json`` and
        ``report.md`` (the charts: ``stopwise report DIRECTORY``, :func:`stopwise.report.replay_report`).
        ``directory`` may be new or empty; an earlier stopwise output directory is replaced only with
        ``force``, any other one never (:func:`stopwise._atomic.write_directory`).
        """
        from stopwise._atomic import write_directory

        return write_directory(directory, self._fill, force=force)

    def _fill(self, out: Path) -> list[Path]:
        from stopwise.replay._report import markdown_report

        written = []
        self.cases.to_parquet(out / "cases.parquet", index=False)
        written.append(out / "cases.parquet")
        if self.decisions is not None:
            self.decisions.to_parquet(out / "decisions.parquet", index=False)
            written.append(out / "decisions.parquet")
        for name, table in (("summary", self.summary), ("sufficiency", self.sufficiency), ("sources", self.sources)):
            table.to_csv(out / f"{name}.csv", index=False)
            written.append(out / f"{name}.csv")
        for name, table in (("summary", self.summary), ("sufficiency", self.sufficiency)):
            (out / f"{name}.json").write_text(table.to_json(orient="records", indent=1))
            written.append(out / f"{name}.json")
        (out / "settings.json").write_text(json.dumps(self.settings.to_dict(), indent=1, sort_keys=True))
        (out / "report.md").write_text(markdown_report(self))
        written += [out / "settings.json", out / "report.md"]
        return written


def replay_grid(
    records: Mapping[str, pd.DataFrame],
    policy: Policy | None = None,
    *,
    policies: Sequence[str] | None = ("primary",),
    thresholds: Sequence[float] = (0.0, 0.05, 0.10),
    budgets: Sequence[float] = tuple(DEFAULT_BUDGETS),
    n_orders: int = 500,
    measure: str | None = None,
    scope: str | None = None,
    min_coverage: float = 0.95,
    min_shared: int = 1,
    keep_decisions: bool = False,
    n_boot: int = 2000,
    progress: Callable[[int, int], None] | None = None,
) -> ReplayResult:
    """Replay completed records as if each evaluation had stopped earlier (ParEvalLayer section IV).

    For every directed pair, K task orders and every budget of the grid, the policy sees only the
    outcomes of the prefix that fits in the budget; each promote or reject is checked against the
    completed-record decision (promote iff Delta_full > delta).

    Parameters
    ----------
    records : mapping of str to pandas.DataFrame
        Source name -> validated outcome rows of a completed record.
    policy : Policy, optional
        Base policy (default: ``Policy()``; the named policies set their own order, coverage rule and tail); its statuses, cutoff a, seeds, budget
        measure and targets apply to every named variant.
    policies : sequence of str, optional
        Named variants of :data:`stopwise.replay.STANDARD_POLICIES` to run (``None``: the base
        policy exactly as given, named ``policy``).
    thresholds : sequence of float, optional
        delta values.
    budgets : sequence of float, optional
        Budget grid (fractions).
    n_orders : int, optional
        K task orders per pair.
    measure, scope : str, optional
        Override the policy's budget measure and scope.
    min_coverage, min_shared : optional
        Source filters (see :func:`prepare_source`).
    keep_decisions : bool, optional
        Keep one row per decision (large).
    n_boot : int, optional
        Pair resamples for the unresolved interval.
    progress : callable, optional
        ``progress(advance, total)``: called as (policy, pair) units finish, with the total count.

    Returns
    -------
    ReplayResult

    Examples
    --------
    >>> from stopwise.records import synthetic_benchmark
    >>> from stopwise.replay import replay_grid
    >>> result = replay_grid({"synthetic": synthetic_benchmark(200, 4, rng=0)}, n_orders=50, thresholds=[0.0])
    >>> row = result.sufficiency.iloc[0]
    >>> row["source"], row["policy"], float(row["min_sufficient_budget"])
    ('synthetic', 'primary', 0.1)
    """
    check_replay_args(
        "replay_grid", thresholds=thresholds, budgets=budgets, n_orders=n_orders, measure=measure, scope=scope, min_coverage=min_coverage,
        min_shared=min_shared,
    )
    base = policy if policy is not None else Policy()
    chosen = {"policy": base} if policies is None else comparison_policies(base, list(policies))
    betting = [name for name, p in chosen.items() if p.decision.boundary == "betting-wor"]
    if betting:
        raise ArgumentError(
            f"policy {', '.join(betting)} uses the betting-wor boundary, which may stop at any look: replay it with live "
            "looks (stopwise replay --looks every, or stopwise.replay.replay_looks) rather than on the budget grid"
        )
    sources = [
        prepare_source(
            rows,
            name,
            statuses=base.statuses,
            group_column=base.coverage.group_column,
            min_coverage=min_coverage,
            min_shared=min_shared,
        )
        for name, rows in records.items()
    ]
    empty = [source.name for source in sources if len(source.pairs) == 0]
    if empty:
        raise ComparisonError(
            f"source(s) {', '.join(empty)}: no pair of systems to replay; a completed record needs at least "
            f"two systems with outcomes on at least {min_coverage:.0%} of the tasks and {min_shared} shared task(s)"
        )
    total = sum(len(source.pairs) for source in sources) * len(chosen)
    advance = (lambda done: progress(done, total)) if progress is not None else None
    cases, decisions = [], []
    for source in sources:
        for name, variant in chosen.items():
            run = replay_source_grid(
                source,
                variant,
                policy_name=name,
                thresholds=thresholds,
                budgets=budgets,
                n_orders=n_orders,
                measure=measure,
                scope=scope,
                keep_decisions=keep_decisions,
                progress=advance,
            )
            cases.append(run.cases)
            if run.decisions is not None:
                decisions.append(run.decisions)
    all_cases = pd.concat(cases, ignore_index=True)
    summary = summarize(all_cases, base.targets, n_boot=n_boot, rng=base.seed)
    settings = ReplaySettings(
        stopwise_version=__version__,
        policies={name: {"sha256": p.sha256(), "policy": json.loads(p.canonical_json())} for name, p in chosen.items()},
        thresholds=tuple(float(t) for t in thresholds),
        budgets=tuple(float(b) for b in budgets),
        n_orders=int(n_orders),
        measure=measure or base.budget.measure,
        scope=scope or base.budget.scope,
        min_coverage=float(min_coverage),
        min_shared=int(min_shared),
        excluded_systems={s.name: s.excluded_systems for s in sources},
        excluded_rows={s.name: [e.model_dump() for e in s.excluded_rows] for s in sources},
        notes={s.name: s.notes for s in sources},
        excluded_pairs={s.name: {f"{k[0]} vs {k[1]}": v for k, v in s.excluded_pairs.items()} for s in sources},
    )
    return ReplayResult(
        cases=all_cases,
        summary=summary,
        sufficiency=sufficiency(summary),
        sources=source_table(sources, thresholds),
        decisions=pd.concat(decisions, ignore_index=True) if decisions else None,
        settings=settings,
    )
