"""Risk-controlled thresholds and the unfamiliar-run guard on the shared trajectories (issue 13's "done when").

Run: ``.venv/bin/python -m experiments.early_risk_report [--out out/early_risk] [--from-saved] [--skip-loao]``
(``--agents-matching postgres`` runs the leave-one-agent-out part on the matching agents only: a quick slice).

1. **Leave-one-agent-out on MCPMark** with ``max_halt_error`` (Learn-then-Test, confidence 0.9, cross-fitted
   calibration on 5 task folds of each fold's training runs): ε = 0.05 with wrong halts counted among halted
   runs and among all runs (``risk_unit="runs"``), and ε = 0.1 among halted runs. The held-out agent's runs are
   halted at that fold's thresholds. Reported per head (alone) and for both heads: held-out halted runs,
   wrong-halt rate in the variant's unit with its standard error ``√(r (1 − r) / n)``, steps saved, |ΔPass@1|,
   next to the fixed-threshold model (failure head at 0.90, heads trained on all training runs). The
   risk-controlled variants deploy the mean of their 5 fold heads (``deployed_heads="fold-average"``, the
   default; ``--deployed-heads refit`` deploys the fixed-threshold model's heads at the chosen thresholds).
2. **Across benchmarks**: a model trained on all of MCPMark monitors every Toolathlon run (and the reverse) with
   thresholds 0.9, 0.8 and 0.7 for each head alone: runs halted with and without the guard, their precision,
   and how many the guard held, with its most frequent reason.

Prints markdown; the figures of the run of record are in ``docs/early_results.md``.
"""

from __future__ import annotations

import argparse
import collections
import json
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from benchmarks.early_common import load

from stopwise.early import EarlyEvaluation, EarlyOutcomeModel, leave_one_out
from stopwise.early._featurizer import Corpus
from stopwise.early._halting import first_crossing, halt_points
from stopwise.early._quality import clopper_pearson, validated_floor

EPSILON = 0.05
CONFIDENCE = 0.9
RISK_VARIANTS = {  # name: (ε, unit, what a cross-fitting fold holds out)
    "ltt05": (0.05, "halted", "task"),
    "ltt05runs": (0.05, "runs", "task"),
    "ltt10": (0.1, "halted", "task"),
    "ltt05agent": (0.05, "halted", "agent"),
    "ltt05runsagent": (0.05, "runs", "agent"),
    "ltt10agent": (0.1, "halted", "agent"),
}


def _pct(x: float) -> str:
    return "–" if x != x else f"{100 * x:.1f}%"


def _fold_halts(evaluation: EarlyEvaluation, variant: str, thresholds: dict[int, tuple[float | None, float | None]]) -> pd.DataFrame:
    """Per held-out run: halt step (NaN if none) and predicted outcome at its fold's thresholds."""
    runs = evaluation.runs.sort_values("run").reset_index(drop=True)
    pred = evaluation.predictions[evaluation.predictions["variant"] == variant].sort_values(["run", "k"])
    fold = runs["fold"].to_numpy()[pred["run"].to_numpy()]
    n_steps = runs["n_steps"].to_numpy()
    out = np.full(runs.shape[0], np.nan), np.full(runs.shape[0], np.nan)
    for f, (s, t) in thresholds.items():
        rows = fold == f
        run_ids = pred["run"].to_numpy()[rows]
        step, predicted, _ = halt_points(
            run_ids, pred["k"].to_numpy()[rows], n_steps[run_ids], pred["p_success"].to_numpy()[rows],
            pred["p_failure"].to_numpy()[rows], s, t, min_halt_step=evaluation.min_halt_step,
        )
        mine = np.flatnonzero(~np.isnan(step))
        out[0][mine], out[1][mine] = step[mine], predicted[mine]
    return pd.DataFrame({"halt_step": out[0], "predicted": out[1]})


def _figures(evaluation: EarlyEvaluation, halts: pd.DataFrame) -> dict[str, float]:
    runs = evaluation.runs.sort_values("run").reset_index(drop=True)
    halted = halts["halt_step"].notna().to_numpy()
    outcome = runs["outcome"].to_numpy()
    wrong = int((halts["predicted"].to_numpy()[halted] != outcome[halted]).sum())
    n = int(halted.sum())
    rate = wrong / n if n else float("nan")
    executed = np.where(halted, halts["halt_step"].to_numpy(), runs["n_steps"].to_numpy())
    early = np.where(halted, halts["predicted"].to_numpy(), outcome)
    frame = pd.DataFrame({"agent": runs["agent"], "full": outcome, "early": early})
    pass1 = frame.groupby("agent").mean()
    low, high = clopper_pearson(n - wrong, n)
    return {
        "halted": n, "wrong": wrong, "rate": rate, "se": float(np.sqrt(rate * (1 - rate) / n)) if n else float("nan"),
        "coverage": n / runs.shape[0], "saved": 1 - executed.sum() / runs["n_steps"].sum(),
        "abs_dpass1": float((pass1["early"] - pass1["full"]).abs().mean()), "precision_low": low, "precision_high": high,
        "wrong_of_runs": wrong / runs.shape[0],
    }


def loao(
    out: Path, from_saved: bool, agents_matching: str | None = None, variant_groups: tuple[str, ...] = ("task", "agent"),
    deployed_heads: str = "fold-average",
) -> list[str]:
    folder = out / "mcpmark_loao"
    if from_saved and (folder / "evaluation.json").exists():
        evaluation = EarlyEvaluation.load(folder)
    else:
        runs = load("mcpmark")
        if agents_matching:
            runs = [r for r in runs if agents_matching in r.agent]
        models: dict[str, EarlyOutcomeModel] = {"fixed": EarlyOutcomeModel()}
        for name, (eps, unit, groups) in RISK_VARIANTS.items():
            if groups in variant_groups:
                models[name] = EarlyOutcomeModel(
                    max_halt_error=eps, risk_confidence=CONFIDENCE, risk_unit=unit, calibration_groups=groups, deployed_heads=deployed_heads,
                )
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            evaluation = leave_one_out(runs, models, by="agent", source="mcpmark")
        evaluation.info["seconds"] = round(time.perf_counter() - started, 1)
        evaluation.info["deployed_heads"] = deployed_heads
        folder.mkdir(parents=True, exist_ok=True)
        evaluation.save(folder, force=True)
    folds = evaluation.folds
    present = [name for name in RISK_VARIANTS if name in set(folds["variant"])]
    chosen_by: dict[str, dict[int, tuple[float | None, float | None]]] = {}
    for name in present:
        rows = folds[folds["variant"] == name].set_index("fold")
        chosen_by[name] = {
            int(f): (None if pd.isna(row["threshold_success"]) else float(row["threshold_success"]),
                     None if pd.isna(row["threshold_failure"]) else float(row["threshold_failure"]))
            for f, row in rows.iterrows()
        }
    first = folds[folds["variant"] == present[0]].set_index("fold")
    fold_groups = sorted({RISK_VARIANTS[n][2] for n in present})

    def label_of(name: str) -> str:
        eps, unit, group = RISK_VARIANTS[name]
        return f"ε = {eps:g}, {unit}, {group} folds"

    lines = [
        f"*MCPMark, leave-one-agent-out, {evaluation.runs.shape[0]} held-out runs of {evaluation.runs['agent'].nunique()} agents; "
        f"confidence {CONFIDENCE}, cross-fitted calibration (5 {' / '.join(fold_groups)} folds of each fold's training runs), "
        f"deployed heads: {evaluation.info.get('deployed_heads', deployed_heads)}; "
        f"{evaluation.info.get('seconds', '?')} s for all variants.*",
        "",
        "Thresholds chosen per fold (success / failure; – = the head never halts) and, for "
        f"{label_of(present[0])}, the failure head's calibration evidence at its threshold (wrong of halted calibration runs):",
        "",
        "| Held-out agent | Calibration runs | " + " | ".join(
            [label_of(present[0]), "failure evidence", *[label_of(n) for n in present[1:]]]
        ) + " |",
        "|---|---|" + "---|" * (len(present) + 1),
    ]

    def pair(v: tuple[float | None, float | None]) -> str:
        return " / ".join("–" if t is None else f"{t:.2f}" for t in v)

    for f, row in first.iterrows():
        evidence = "–" if pd.isna(row.get("calibration_halted_failure")) or pd.isna(row["threshold_failure"]) else (
            f"{int(row['calibration_wrong_failure'])} of {int(row['calibration_halted_failure'])}"
        )
        cells = [pair(chosen_by[present[0]][int(f)]), evidence, *[pair(chosen_by[n][int(f)]) for n in present[1:]]]
        lines.append(f"| {row['held_out']} | {int(row['n_calibration_runs'])} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| Model | Mode | Unit | Halted | Wrong-halt rate ± SE | ≤ bound + 2 SE? | Wrong halts / all runs | Precision [95% CI] | Coverage | Steps saved | Δ\\|Pass@1\\| |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    settings: list[tuple[str, str, str, float, str, dict[int, tuple[float | None, float | None]]]] = []
    for name in present:
        eps, unit, group = RISK_VARIANTS[name]
        chosen = chosen_by[name]
        label = f"Learn-then-Test ε = {eps:g} ({group} folds)"
        settings += [
            (label, "failure head", name, eps, unit, {f: (None, t) for f, (s, t) in chosen.items()}),
            (label, "success head", name, eps, unit, {f: (s, None) for f, (s, t) in chosen.items()}),
            (label, "both heads", name, eps, unit, chosen),
        ]
    fold_ids = list(chosen_by[present[0]])
    settings += [
        ("fixed 0.90", "failure head", "fixed", EPSILON, "halted", {f: (None, 0.9) for f in fold_ids}),
        ("fixed 0.95", "both heads", "fixed", EPSILON, "halted", {f: (0.95, 0.95) for f in fold_ids}),
    ]
    n_all = evaluation.runs.shape[0]
    for label, mode, variant, eps, unit, thresholds in settings:
        fig = _figures(evaluation, _fold_halts(evaluation, variant, thresholds))
        if unit == "runs":
            rate = fig["wrong_of_runs"]
            se = float(np.sqrt(rate * (1 - rate) / n_all))
        else:
            rate, se = fig["rate"], fig["se"]
        # both heads, share of all runs: each head is controlled at ε, so the bound is ε_success + ε_failure = 2ε
        bound = 2 * eps if unit == "runs" and mode == "both heads" else eps
        meets = "–" if fig["halted"] == 0 else ("yes" if rate <= bound + 2 * se else "**no**")
        unit_label = "halted runs" if unit == "halted" else "all runs"
        lines.append(
            f"| {label} | {mode} | {unit_label} | {fig['halted']} | {_pct(rate)} ± {_pct(se)} | {meets} | "
            f"{fig['wrong']} / {n_all} | "
            f"{_pct(1 - fig['rate'])} [{_pct(fig['precision_low'])}, {_pct(fig['precision_high'])}] | {_pct(fig['coverage'])} | "
            f"{_pct(fig['saved'])} | {_pct(fig['abs_dpass1'])} |"
        )
    return lines


def _floor(model: EarlyOutcomeModel, head: str) -> str:
    floor, _ = validated_floor(model.reliability_[head], confidence=float(model.risk_confidence))
    return "none" if floor is None else f"{floor:.2f}"


def cross(train_name: str, test_name: str) -> list[str]:
    train, test = load(train_name), load(test_name)
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = EarlyOutcomeModel().fit(train)
    fit_s = time.perf_counter() - started
    corpus = Corpus(test, min_df=1)  # featurize once: probabilities, guard and reasons share it
    idx = np.arange(len(test))
    X = model.featurizer_._transform_corpus(corpus, idx)
    coverage = model.featurizer_._coverage_corpus(corpus, idx)
    proba = model._proba_from_features(X)
    guard = model.guard_
    assert guard is not None, "a fitted model has a familiarity guard"
    familiar = [guard.familiar(x, c) for x, c in zip(X, coverage, strict=True)]
    outcome = np.array([r.outcome for r in test])
    lines = [
        f"*Trained on all {train_name} ({model.n_train_runs_} runs, {fit_s:.0f} s), monitoring all {len(test)} {test_name} runs; "
        f"guard limits (from {guard.n_reference_prefixes} {guard.reference} prefixes): task-text coverage ≥ "
        f"{100 * guard.min_task_coverage:.0f}%, trajectory-text coverage ≥ {100 * guard.min_text_coverage:.0f}%, "
        f"≤ {guard.max_outside} behavioral features outside range, task similarity ≥ {guard.min_task_similarity:.2f}; "
        f"validated floors (precision shown ≥ 90 % at confidence {model.risk_confidence:g} on the {model.quality_['reference']}): "
        + ", ".join(f"{h} {_floor(model, h)}" for h in ("failure", "success"))
        + "; lower thresholds are held.*",
        "",
        "| Head | Threshold | Halted without guard | Precision without guard | Halted with guard | Precision with guard | Held by the guard | Most frequent reason |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for head in ("failure", "success"):
        for t in (0.9, 0.8, 0.7):
            s, f = (t, None) if head == "success" else (None, t)
            bare = [first_crossing(p[:, 0], p[:, 1], s, f) for p in proba]
            unvalidated = model._unvalidated(head, t)
            gs, gf = (None, None) if unvalidated else (s, f)
            guarded = [first_crossing(p[:, 0], p[:, 1], gs, gf, familiar=ok) for p, ok in zip(proba, familiar, strict=True)]
            reasons: collections.Counter[str] = collections.Counter()
            held = 0
            for i, (b, g) in enumerate(zip(bare, guarded, strict=True)):
                if b is not None and g is None:
                    held += 1
                    k = b.step
                    why = guard.check(X[i][k], (float(coverage[i][k, 0]), float(coverage[i][k, 1]))) or unvalidated
                    kinds = ("not validated", "task similarity", "task-text", "trajectory-text", "behavioral")
                    kind = next((k for k in kinds if why and k in why), "?")
                    reasons[kind] += 1
            def prec(vs: list[Any]) -> tuple[int, float]:
                halted = [(v, outcome[i]) for i, v in enumerate(vs) if v is not None]
                right = sum(1 for v, y in halted if v.predicted == y)
                return len(halted), right / len(halted) if halted else float("nan")
            nb, pb = prec(bare)
            ng, pg = prec(guarded)
            top = ", ".join(f"{k} ({n})" for k, n in reasons.most_common(2)) or "–"
            lines.append(f"| {head} | {t:.2f} | {nb} | {_pct(pb)} | {ng} | {_pct(pg)} | {held} | {top} |")
    example = next(
        (guard.check(X[i][k], (float(coverage[i][k, 0]), float(coverage[i][k, 1])))
         for i in range(len(test)) for k in range(1, X[i].shape[0] - 1) if not familiar[i][k]),
        None,
    )
    if example:
        lines += ["", f"Example reason: `{example}`"]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("out/early_risk"))
    parser.add_argument("--from-saved", action="store_true", help="Reuse out/early_risk/mcpmark_loao if present.")
    parser.add_argument("--skip-loao", action="store_true", help="Only the cross-benchmark part.")
    parser.add_argument("--skip-cross", action="store_true", help="Only the leave-one-agent-out part.")
    parser.add_argument("--groups", default="task,agent", help="Cross-fitting folds of the risk-controlled variants: task, agent or both.")
    parser.add_argument("--agents-matching", default=None, help="Leave-one-agent-out on the agents whose name contains this only.")
    parser.add_argument("--deployed-heads", choices=["fold-average", "refit"], default="fold-average", help="What the risk-controlled variants deploy (with --from-saved: what the saved run deployed, if it did not record it).")
    parser.add_argument("--direction", choices=["both", "mcpmark", "toolathlon"], default="both", help="Training set(s) of the cross part.")
    args = parser.parse_args()
    lines: list[str] = []
    if not args.skip_loao:
        lines += ["### Leave-one-agent-out on MCPMark with risk-controlled thresholds", "", *loao(args.out, args.from_saved, args.agents_matching, tuple(args.groups.split(",")), args.deployed_heads), ""]
    if not args.skip_cross:
        lines += ["### Across benchmarks: the guard", ""]
        if args.direction in ("both", "mcpmark"):
            lines += [*cross("mcpmark", "toolathlon"), ""]
        if args.direction in ("both", "toolathlon"):
            lines += cross("toolathlon", "mcpmark")
    text = "\n".join(lines) + "\n"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.md").write_text(text, encoding="utf-8")
    (args.out / "report.json").write_text(json.dumps({"lines": lines}, indent=1), encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
