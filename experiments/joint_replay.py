"""Write docs/joint-replay.md: the whole-evaluation replay (within-task halting and the across-task boundary, alone and joined).

Shared trajectories (../shared/data/trajectories): the MCPMark agents compared within their service (attempts
averaged per task) and Toolathlon's two models on their 106 shared tasks. Every run is monitored by the held-out
predictions of a leave-one-group-out evaluation (:func:`stopwise.early.leave_one_out` with ``by="service"``,
Toolathlon one more group): the model that monitors a pair never trained on either agent. A seeded synthetic
benchmark with trajectories (:func:`stopwise.replay.synthetic_trajectories`, two pools of agents, each pool's
runs monitored by a model trained on the other pool) is replayed the same way, at several audit fractions.
The evaluations are cached under ``--cache`` (delete it to retrain); the replay of every setting takes about 20 s of
CPU for 500 orders (every order's boundary computed at once; the order-by-order loop before took 486 s on the shared
2-core machine: ``python -m benchmarks.joint_replay_speed`` times both on the same cache).

Usage: python -m experiments.joint_replay [--orders 500] [--audit-fraction 0.5] [--cache out/joint_cache] [--doc docs/joint-replay.md]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from benchmarks.early_common import load

from stopwise.early import DualHeadClassifier, EarlyEvaluation, EarlyOutcomeModel, leave_one_out
from stopwise.records import Trajectory
from stopwise.replay import JOINT_MODES, REPLAY_POLICY, JointReplay, joint_halts, replay_joint, synthetic_trajectories
from stopwise.replay._report import markdown_table

POLICY = REPLAY_POLICY
"""delta = 0, a = 0.05, uniform random orders, the pooled betting process without replacement, no coverage rule,
predicted rows prediction-powered with the audited-bound centre (the default; the audit fraction is set per replay)."""
WORST_CASE = REPLAY_POLICY.model_copy(update={"decision": REPLAY_POLICY.decision.model_copy(update={"predicted_centre": "worst-case"})})
"""The same with the past predicted rows at their worst case in the centre (the centre before the audited bound)."""
SHARED_MODEL = {"n_components": 16, "classifier": DualHeadClassifier(n_estimators=300)}
SYNTHETIC_MODEL = {"n_components": 8, "min_df": 2, "min_steps": 5, "classifier": DualHeadClassifier(n_estimators=100)}
SYNTHETIC: dict[str, Any] = {"n_tasks": 400, "n_agents": 4, "spread": 1.0, "rng": 0}
SYNTHETIC_CLOSE: dict[str, Any] = {**SYNTHETIC, "spread": 0.3}
"""The same benchmark with closer agents (abilities in [-0.3, 0.3]): the across-task boundary needs more tasks."""
SYNTHETIC_LONG: dict[str, Any] = {**SYNTHETIC_CLOSE, "n_tasks": 2000, "max_failed_steps": 100}
"""Closer agents on a larger benchmark (2,000 tasks) whose failing runs go on for up to 100 steps (passing ones 12-40):
where halting saves the most per task and the audited bound's shift of the centre, divided by the tasks left, the least."""
SYNTHETIC_PAIRS = [("agent-3", "agent-1"), ("agent-4", "agent-2")]
RHOS = (0.2, 0.35, 0.5, 0.7, 0.9)
RHOS_LONG = (0.35, 0.5, 0.7, 0.9)
THRESHOLDS = {"shared": 0.7, "synthetic": 0.9}
"""Halting thresholds (both heads). On the shared data the leave-one-group-out heads are nearly flat (a few boosting
rounds): at 0.85 and above no run halts, so 0.7 is used to make the monitor act (it is then often wrong)."""


def _evaluation(name: str, cache: Path, runs: Any, params: dict[str, Any], by: str) -> EarlyEvaluation:
    """The leave-one-group-out evaluation, from the cache or trained (and cached)."""
    folder = cache / name
    if (folder / "evaluation.json").exists():
        return EarlyEvaluation.load(folder)
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        evaluation = leave_one_out(runs() if callable(runs) else runs, EarlyOutcomeModel(**params), by=by, source=name)
    print(f"{name}: leave-one-{by}-out trained in {time.perf_counter() - started:.0f} s")
    evaluation.save(folder)
    return evaluation


def _shared_runs() -> list[Trajectory]:
    """MCPMark (meta service: github / notion / postgres) and Toolathlon (service "toolathlon")."""
    tool = [r.model_copy(update={"meta": {**r.meta, "service": "toolathlon"}}) for r in load("toolathlon")]
    return load("mcpmark") + tool


def _label(mode: str, valid: bool) -> str:
    return mode if valid else f"{mode} (invalid)"


def _pair_table(result: JointReplay) -> pd.DataFrame:
    """One row per pair: N, delta_full, then per mode 'step share (wrong %, decided %)'."""
    rows = []
    for (tested, baseline), block in result.summary.groupby(["tested", "baseline"], sort=False):
        row: dict[str, Any] = {"pair": f"{tested} vs {baseline}", "N": int(block["n_tasks"].iloc[0]),
                               "Δ full": f"{block['delta_full'].iloc[0]:+.3f}"}
        for m in block.itertuples(index=False):
            token = "" if pd.isna(m.token_share) else f", tokens {100 * m.token_share:.0f} %"
            row[_label(m.mode, m.valid)] = (
                f"{100 * m.step_share:.0f} %{token} (wrong {100 * m.wrong:.1f} %, decided {100 * m.decided:.0f} %)"
            )
        rows.append(row)
    return pd.DataFrame(rows)


def _rho_table(results: dict[float, JointReplay]) -> pd.DataFrame:
    """Synthetic: mean over pairs of the step share per mode, one row per audit fraction."""
    rows = []
    for rho, result in results.items():
        mean = result.summary.groupby("mode", sort=False)[["step_share", "wrong", "decided"]].mean()
        row: dict[str, Any] = {"ρ": rho}
        for mode in JOINT_MODES:
            row[mode] = f"{100 * mean.loc[mode, 'step_share']:.1f} % ({100 * mean.loc[mode, 'decided']:.0f} % decided)"
        rows.append(row)
    return pd.DataFrame(rows)


def _centre_table(best: dict[str, dict[float, JointReplay]], worst: dict[str, dict[float, JointReplay]]) -> pd.DataFrame:
    """Synthetic: the joined mode's step share with either centre, beside both levels alone (mean over the pairs)."""
    rows = []
    for spread, runs in best.items():
        for rho, result in runs.items():
            mean = result.summary.groupby("mode")[["step_share", "decided", "wrong"]].mean()
            old = worst[spread][rho].summary.groupby("mode")[["step_share", "decided", "wrong"]].mean()
            cell = lambda m, mode: f"{100 * m.loc[mode, 'step_share']:.1f} % ({100 * m.loc[mode, 'decided']:.0f} % decided, wrong {100 * m.loc[mode, 'wrong']:.1f} %)"  # noqa: E731
            rows.append({
                "abilities": spread, "ρ": rho, "across-task": cell(mean, "across-task"),
                "within-task (audited bound)": cell(mean, "within-task"), "joined, worst-case centre": cell(old, "joined"),
                "joined, audited-bound centre": cell(mean, "joined"),
            })  # fmt: skip
    return pd.DataFrame(rows)


def _figure(results: dict[float, JointReplay], close: dict[float, JointReplay], long: dict[float, JointReplay],
            shared: JointReplay, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(23, 4.8))
    left, middle, long_axis, right = axes
    panels = ((left, results, "400 tasks, abilities in [-1, 1]", 100), (middle, close, "400 tasks, abilities in [-0.3, 0.3]", 100),
              (long_axis, long, "2,000 tasks, [-0.3, 0.3], long failing runs", 30))
    for ax, runs, title, top in panels:
        for mode, style in (("across-task", "k--"), ("within-task", "C0-o"), ("joined", "C2-o"), ("joined naive", "C3:x"), ("joined as truth", "C1:x")):
            shares = [100 * r.summary.loc[r.summary["mode"] == mode, "step_share"].mean() for r in runs.values()]
            ax.plot(list(runs), shares, style, label=mode if _is_valid(mode) else f"{mode} (invalid)")
        ax.set(xlabel="audit fraction ρ", ylabel="agent steps spent until the decision (% of all)", ylim=(0, top),
               title=f"Synthetic, {title}\n(mean of 2 pairs; y axis to {top} %)")
        if top < 100:  # a curve above the axis is named with its range, not hidden
            within = [100 * r.summary.loc[r.summary["mode"] == "within-task", "step_share"].mean() for r in runs.values()]
            ax.text(0.02, 0.97, f"within-task alone: {min(within):.0f}-{max(within):.0f} % (above the axis)",
                    transform=ax.transAxes, va="top", fontsize=8, color="C0")  # fmt: skip
        ax.legend(fontsize=8)
    modes = [m for m in JOINT_MODES if _is_valid(m)]
    s = shared.summary
    labels = [f"{t.split(':')[-1][:11]}\nvs {b.split(':')[-1][:11]}" for t, b in dict.fromkeys(zip(s["tested"], s["baseline"], strict=True))]
    width = 0.8 / len(modes)
    for i, mode in enumerate(modes):
        part = s[s["mode"] == mode]
        bars = right.bar([x + i * width for x in range(len(part))], 100 * part["step_share"], width, label=mode, color=f"C{i}")
        for bar, decided in zip(bars, part["decided"], strict=True):
            if decided < 0.5:
                bar.set_hatch("//")
                bar.set_alpha(0.5)
    right.set_xticks([x + 0.4 - width / 2 for x in range(len(labels))], labels, fontsize=7)
    right.set(ylabel="agent steps spent (% of all)",
              title=f"Shared trajectories (ρ = {shared.settings['audit_fraction']:g}; hatched: decided in < 50 % of orders)")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _is_valid(mode: str) -> bool:
    return mode in ("full", "across-task", "within-task", "joined", "joined tuned")


def _paired(result: JointReplay, mode: str, other: str, column: str = "step_share") -> tuple[float, float]:
    """Mean over every pair and order of ``mode``'s share minus ``other``'s (the same orders and audits), and its SE."""
    table = result.orders.pivot_table(index=["tested", "baseline", "order"], columns="mode", values=column)
    difference = (table[mode] - table[other]).to_numpy()
    return float(difference.mean()), float(difference.std(ddof=1) / np.sqrt(difference.size))


def _fewer(result: JointReplay, column: str = "step_share", mode: str = "joined") -> bool:
    """``mode`` (a joined mode) spends fewer than both levels alone: each paired difference below zero by more than 2 SE."""
    return all(d + 2 * se < 0 for d, se in (_paired(result, mode, level, column) for level in ("across-task", "within-task")))


def _break_even_table(synthetic: dict[str, dict[float, JointReplay]]) -> pd.DataFrame:
    """Per synthetic setting and joined mode: why it does or does not spend fewer steps than across-task alone.

    A joined mode spends c T_j steps (c: its steps per task over a full run's, T_j: the tasks it needs) against T_a for
    across-task alone: it wins iff the task ratio T_j / T_a stays below 1 / c. With a share s of runs halted, a share
    pi of them audited and r of a halted run's steps saved, c = 1 - s (1 - pi) r: the halts must save
    r > (1 - T_a / T_j) / (s (1 - pi)), which is above 1 (never) once T_j / T_a > 1 / (1 - s (1 - pi)).
    """
    rows = []
    for name, runs in synthetic.items():
        for rho, result in runs.items():
            mean = result.summary.groupby("mode")[["tasks_share", "step_share"]].mean()
            across = mean.loc["across-task", "tasks_share"]
            for mode in ("joined", "joined tuned"):
                tasks, steps = mean.loc[mode, "tasks_share"], mean.loc[mode, "step_share"]
                cost = steps / tasks if tasks > 0 else float("nan")
                rows.append({
                    "setting": name, "ρ": rho, "mode": mode, "halted share": f"{100 * result.settings['halted_share']:.0f} %",
                    "task ratio T_j / T_a": f"{tasks / across:.2f}", "steps per task c": f"{cost:.2f}",
                    "break-even task ratio 1 / c": f"{1 / cost:.2f}", "fewer steps": "yes" if _fewer(result, mode=mode) else "no",
                })  # fmt: skip
    return pd.DataFrame(rows)


def _findings(synthetic: dict[float, JointReplay]) -> list[str]:
    """One sentence per audit fraction: joined against each level alone (mean share over the pairs, paired SE)."""
    out = []
    for rho, result in synthetic.items():
        mean = result.summary.groupby("mode")["step_share"].mean()
        decided = result.summary.groupby("mode")["decided"].mean()
        d, se = _paired(result, "joined", "across-task")
        tokens = ""
        if result.orders["token_share"].notna().all():
            t, t_se = _paired(result, "joined", "across-task", "token_share")
            tokens = f"; tokens {100 * t:+.1f} pp (SE {100 * t_se:.1f})"
        out.append(
            f"* ρ = {rho:g}: joined {100 * mean['joined']:.1f} % (decided {100 * decided['joined']:.0f} %), across-task alone "
            f"{100 * mean['across-task']:.1f} %, within-task alone {100 * mean['within-task']:.1f} % (decided "
            f"{100 * decided['within-task']:.0f} %): joined spends **{'fewer' if _fewer(result) else 'not fewer'}** steps "
            f"than either level alone ({100 * d:+.2f} pp against across-task alone, paired SE {100 * se:.2f}{tokens}); "
            f"the invalid naive boundary {100 * mean['joined naive']:.1f} %."
        )
    return out


def _verdict(synthetic: dict[str, dict[float, JointReplay]]) -> str:
    """In which synthetic settings (benchmark, rho) the joined mode spent fewer steps than both levels alone."""
    wins = [f"{name}, ρ = {rho:g}" for name, runs in synthetic.items() for rho, r in runs.items() if _fewer(r)]
    tuned = [f"{name}, ρ = {rho:g}" for name, runs in synthetic.items() for rho, r in runs.items() if _fewer(r, mode="joined tuned")]
    token_wins = [f"{name}, ρ = {rho:g}" for name, runs in synthetic.items() for rho, r in runs.items() if _fewer(r, "token_share")]
    settings = sum(len(runs) for runs in synthetic.values())
    return (
        f"* **Joined against both levels alone**: the joined mode spent fewer steps to a valid decision than both "
        f"levels alone (each paired difference below zero by more than 2 SE) in {len(wins)} of the {settings} synthetic "
        f"settings ({'; '.join(wins) or 'none'}), and fewer tokens in {len(token_wins)} ({'; '.join(token_wins) or 'none'}). "
        "It wins where halting saves much per task and the centre's shift, the audited bound divided by the tasks "
        "left, is small: failing runs that go on long, many tasks, agents close enough that the across-task "
        "boundary needs many of them. On 400 tasks with runs of equal length it spends more than across-task "
        "alone at every ρ.\n"
        f"* **Joined tuned** (issue 34: active audits, the power-tuned boundary): fewer steps than both levels alone in "
        f"{len(tuned)} of the {settings} synthetic settings ({'; '.join(tuned) or 'none'})."
    )


def _doc(figure: Path, tables: dict[str, str], halting: dict[str, Any], synthetic: dict[str, dict[float, JointReplay]],
         shared: JointReplay, orders: int, seconds: tuple[float, float, float], trained: float) -> str:
    halts = "\n".join(
        f"* {name}: thresholds {t} / {t}: {100 * m.coverage:.1f} % of runs halted, {100 * m.accuracy:.1f} % of halts right, "
        f"agent steps {100 * m.delta_steps:+.1f} % with every run halted where it may"
        for name, (m, t) in halting.items()
    )
    return "\n".join(
        [
            "# The whole-evaluation replay: within-task halting and the across-task boundary, alone and joined",
            "",
            "Generated by `python -m experiments.joint_replay` (library: `stopwise.replay.replay_joint`, `joint_halts`,",
            "`joint_rows`, `synthetic_trajectories`). Do not edit by hand.",
            "",
            "Each pair is replayed as a live evaluation: the tasks arrive in a seeded uniformly random order; every run",
            "is monitored by a halting model that never trained on either agent of the pair (held-out predictions of a",
            "leave-one-group-out `stopwise.early.leave_one_out`); a seeded share ρ of the runs is audited (never halted,",
            "its would-halt verdict kept); the paired betting boundary (pooled, without replacement over the N shared",
            "tasks, δ = 0, a = 0.05) is consulted after every task. Modes:",
            "",
            "* **full** — every run to its end, every task: the complete record, whose decision is the truth (100 %);",
            "* **across-task** — every run to its end, the boundary after every task, stop at its first crossing;",
            "* **within-task** — every task, runs halted unless audited, the prediction-powered decision once, at N;",
            "* **joined** — both: halting with audits and the boundary after every task on the prediction-powered task",
            "  differences, as `stopwise decide` with `[decision] predicted = \"prediction-powered\"` decides (range",
            "  max(1, 2/ρ − 1); in the boundary's centre the past predicted rows with at most the audits' time-uniform",
            "  bound of them wrong, `[decision] predicted_centre = \"audited-bound\"`, the default: a/5 of the cutoff",
            "  on that bound, 4a/5 on the test; `stopwise.compare._predicted`, `stopwise.compare._audit_bound`);",
            "* invalid extras: **joined naive** (the boundary on prediction-powered differences as if they were the",
            "  tasks' fixed values), **as truth** (predicted outcomes taken as the truth).",
            "",
            "A decision is wrong when it is the opposite of the complete record's (attempts averaged per task, Δ > δ).",
            "Cells: share of all agent steps of both agents on the N tasks spent until the decision (or until the end",
            "when no decision came; tokens where every step records them), the wrong-decision rate and the share of",
            f"orders decided. {orders} orders per pair; the replay took {seconds[0]:.1f} s ({seconds[1]:.1f} s of CPU) on the shared 2-core",
            f"machine (load average {seconds[2]:.1f} after it); training (or reading from `--cache`) the four leave-one-group-out",
            f"evaluations took {trained:.0f} s in this run.",
            "",
            "## Halting",
            "",
            halts,
            "",
            f"## Shared trajectories (ρ = {shared.settings['audit_fraction']:g})",
            "",
            "MCPMark agents within their service (monitored by a model trained on the other services and Toolathlon);",
            "Toolathlon's two models on their 106 shared tasks (monitored by a model trained on MCPMark). Neither set",
            "records per-step tokens, so only steps are reported.",
            "",
            tables["shared"],
            "",
            "## Synthetic benchmark",
            "",
            "`synthetic_trajectories(400, 4, spread=...)`: outcomes from an item-response model, 12–40 steps a run with",
            "recorded tokens, 70 % of runs showing a tell of their outcome from a step in their first third (3 % of tells",
            "misleading); agents 1, 3 and 2, 4 form two pools, each pool's runs monitored by a model trained on the other.",
            "Pairs: agent-3 vs agent-1 and agent-4 vs agent-2.",
            "",
            "### Abilities in [-1, 1] (ρ = 0.5)",
            "",
            tables["synthetic"],
            "",
            "Mean over the two pairs by audit fraction ρ:",
            "",
            tables["rho"],
            "",
            *_findings(synthetic["400 tasks, [-1, 1]"]),
            "",
            "### Closer agents: abilities in [-0.3, 0.3] (ρ = 0.5)",
            "",
            tables["close"],
            "",
            tables["close_rho"],
            "",
            *_findings(synthetic["400 tasks, [-0.3, 0.3]"]),
            "",
            "### Long failing runs on 2,000 tasks, closer agents (ρ = 0.5)",
            "",
            "`synthetic_trajectories(2000, 4, spread=0.3, max_failed_steps=100)`: the closer agents on a benchmark five",
            "times larger whose failing runs go on for 12–100 steps (passing runs 12–40), as agents that fail often keep",
            "trying to a step or cost limit. Halting then saves most per task, and the audited bound's shift of the",
            "centre is divided by many tasks left. Our shared MCPMark / Toolathlon trajectories do not show longer",
            "failing runs (23.8 steps on average against 25.4 for passing ones): this setting is the favourable case,",
            "not the typical one.",
            "",
            tables["long"],
            "",
            tables["long_rho"],
            "",
            *_findings(synthetic["2,000 tasks, long failing runs"]),
            "",
            "### The centre: worst case against the audited bound",
            "",
            "The joined mode with the past predicted rows at their worst case in the centre (`predicted_centre =",
            "\"worst-case\"`, every unaudited prediction adverse) and with the audited bound (the default), beside",
            "both levels alone (mean over the two pairs):",
            "",
            tables["centre"],
            "",
            "## What this shows",
            "",
            _verdict(synthetic),
            "* The guarantee holds: no valid mode made a wrong decision in more than a + 2 SE of the orders on any pair",
            "  (tables above). The invalid modes show what the treatment prevents: on the postgres pairs, with a monitor",
            "  right on 65 % of its halts, taking predictions as the truth decides wrongly in 30–45 % of the orders; and",
            "  `tests/replay/test_joint.py` shows it on a null pair with a monitor biased toward one system (predictions",
            "  as truth: wrong in > 90 % of orders; the naive boundary on prediction-powered values: > 30 %;",
            "  prediction-powered: ≤ a + 2 SE).",
            "* The price of validity: the prediction-powered boundary bets on the range max(1, 2/ρ − 1), fixed before",
            "  the data, and centres each look on a lower bound of the past true sum. The worst-case centre shifts by",
            "  one unit per past adverse predicted run, divided by the tasks left: small early, decisive late, so it",
            "  mattered most for the closer agents (the boundary needs many tasks there). The audited bound replaces",
            "  that count by a time-uniform upper bound on the wrong ones among them (about log(1/a_1) / -log(1 - ρ)",
            "  while the audits find none), which is what lets the closer pairs decide. For the distant agents the",
            "  across-task boundary stops after about 20 tasks, where the centre's shift is already small: what is left",
            "  is the range (bets capped at 1/C of those on [-1, 1]) and the a/5 spent on the bound.",
            "* Joined never spends more than within-task alone and decides as often: the same boundary, consulted after",
            "  every task instead of once at the end.",
            "* On the shared trajectories a monitor that never saw the service (leave-one-group-out) is nearly flat: at",
            "  0.85 and above it halts no run; at 0.7 it halts 59 % and is right on 65 % of them. The prediction-powered",
            "  modes then never decide on the MCPMark pairs (21–28 tasks); on Toolathlon (106 tasks) the joined mode",
            "  decides every order, with more steps than across-task alone.",
            "",
            "## Break-even (issue 34)",
            "",
            "A joined mode spends c·T_j agent steps (c: its steps per task over a full run's; T_j: the tasks it needs)",
            "against T_a for across-task stopping alone, so it wins iff T_j / T_a < 1 / c. With a share s of runs halted,",
            "a mean audit probability π and a share r of a halted run's steps saved, c = 1 − s(1 − π)r: the halts must",
            "save r > (1 − T_a / T_j) / (s(1 − π)), never possible once T_j / T_a > 1 / (1 − s(1 − π)). `joined tuned` is",
            "the power-tuned boundary with active audits (`predicted = \"prediction-powered-tuned\"`, `audit_rule =",
            "\"active\"`); it lowers T_j / T_a, the audit rule's mean π sets c. On a real SWE-bench Verified pair",
            "(Δ = +14.6 pp, `python -m benchmarks.tuned_power --break-even`) across-task alone stops after about 11 % of",
            "the tasks, and the task ratio (1.38 at ρ = 0.5 with a 95 %-right model halting half the runs) is above",
            "1 / (1 − s(1 − π)) = 1.31 for every r: joined cannot pay there. With antithetic audits (`[early]",
            "audit_coupling = \"antithetic\"`: a task's two runs share one audit uniform, so both favouring predictions",
            "are never audited together while π ≤ 1/2) the task ratio at ρ = 0.3 falls from 2.25× / 2.33× to 1.92× /",
            "2.01× of the full evaluation's at seeds 1 / 2 (`python -m benchmarks.tuned_power`, 400 orders, the active",
            "rule's mean π exactly 0.3); the table below and the replay's `joined tuned` mode use independent audits,",
            "each halt's audit probability from the crossing head's recorded probability (`halt_probability`).",
            "",
            tables["break_even"],
            "",
            f"![step shares]({figure.name})",
            "",
        ]
    )


def evaluations(cache: Path) -> tuple[EarlyEvaluation, EarlyEvaluation, EarlyEvaluation, EarlyEvaluation]:
    """The four leave-one-group-out evaluations (shared, synthetic, closer agents, long failing runs), cached under ``cache``."""
    return (
        _evaluation("shared", cache, _shared_runs, SHARED_MODEL, "service"),
        _evaluation("synthetic", cache, lambda: synthetic_trajectories(**SYNTHETIC), SYNTHETIC_MODEL, "pool"),
        _evaluation("synthetic-close", cache, lambda: synthetic_trajectories(**SYNTHETIC_CLOSE), SYNTHETIC_MODEL, "pool"),
        _evaluation("synthetic-long", cache, lambda: synthetic_trajectories(**SYNTHETIC_LONG), SYNTHETIC_MODEL, "pool"),
    )


def run_tables(evaluations: tuple[EarlyEvaluation, ...]) -> tuple[pd.DataFrame, ...]:
    """The run tables (:func:`stopwise.replay.joint_halts`) of :func:`evaluations` at the study's thresholds."""
    shared, *synthetic = evaluations
    return (joint_halts(shared, THRESHOLDS["shared"], THRESHOLDS["shared"]),
            *(joint_halts(e, THRESHOLDS["synthetic"], THRESHOLDS["synthetic"]) for e in synthetic))


Replays = tuple[JointReplay, dict[float, JointReplay], dict[float, JointReplay], dict[float, JointReplay], dict[str, dict[float, JointReplay]]]
"""Shared (one audit fraction); synthetic, closer agents and long failing runs by rho; the worst-case centre by setting and rho."""


def replay_all(tables: tuple[pd.DataFrame, ...], orders: int, audit_fraction: float = 0.5) -> Replays:
    """Every replay of the study on the run tables of :func:`run_tables` (what ``replay`` times)."""
    shared_table, synthetic_table, close_table, long_table = tables
    shared = replay_joint(shared_table, policy=POLICY, audit_fraction=audit_fraction, n_orders=orders, rng=0)
    synthetic = {rho: replay_joint(synthetic_table, SYNTHETIC_PAIRS, policy=POLICY, audit_fraction=rho, n_orders=orders, rng=0) for rho in RHOS}
    close = {rho: replay_joint(close_table, SYNTHETIC_PAIRS, policy=POLICY, audit_fraction=rho, n_orders=orders, rng=0) for rho in RHOS}
    long = {rho: replay_joint(long_table, SYNTHETIC_PAIRS, policy=POLICY, audit_fraction=rho, n_orders=orders, rng=0) for rho in RHOS_LONG}
    worst = {
        spread: {rho: replay_joint(table, SYNTHETIC_PAIRS, policy=WORST_CASE, audit_fraction=rho, n_orders=orders, rng=0) for rho in RHOS}
        for spread, table in (("[-1, 1]", synthetic_table), ("[-0.3, 0.3]", close_table))
    }
    return shared, synthetic, close, long, worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=500, help="task orders (each with its own audit draw) per pair")
    parser.add_argument("--audit-fraction", type=float, default=0.5, help="rho of the shared-data table")
    parser.add_argument("--cache", type=Path, default=Path("out/joint_cache"), help="cached leave-one-out evaluations")
    parser.add_argument("--doc", type=Path, default=Path("docs/joint-replay.md"))
    args = parser.parse_args()
    started = time.perf_counter()
    shared_eval, synthetic_eval, close_eval, long_eval = evaluations(args.cache)
    trained = time.perf_counter() - started
    started, cpu = time.perf_counter(), time.process_time()
    shared, synthetic, close, long, worst = replay_all(run_tables((shared_eval, synthetic_eval, close_eval, long_eval)), args.orders, args.audit_fraction)
    replayed = (time.perf_counter() - started, time.process_time() - cpu, os.getloadavg()[0])
    figure = args.doc.with_suffix(".png")
    _figure(synthetic, close, long, shared, figure)
    tables = {
        "shared": markdown_table(_pair_table(shared)),
        "synthetic": markdown_table(_pair_table(synthetic[0.5])),
        "rho": markdown_table(_rho_table(synthetic)),
        "close": markdown_table(_pair_table(close[0.5])),
        "close_rho": markdown_table(_rho_table(close)),
        "long": markdown_table(_pair_table(long[0.5])),
        "long_rho": markdown_table(_rho_table(long)),
        "centre": markdown_table(_centre_table({"[-1, 1]": synthetic, "[-0.3, 0.3]": close}, worst)),
        "break_even": markdown_table(_break_even_table({"400 tasks, [-1, 1]": synthetic, "400 tasks, [-0.3, 0.3]": close, "2,000 tasks, long failing runs": long})),
    }
    halting = {name: (shared_eval.metrics(t, t), t) for name, t in (("shared", THRESHOLDS["shared"]),)}
    halting["synthetic"] = (synthetic_eval.metrics(THRESHOLDS["synthetic"], THRESHOLDS["synthetic"]), THRESHOLDS["synthetic"])
    halting["synthetic, close agents"] = (close_eval.metrics(THRESHOLDS["synthetic"], THRESHOLDS["synthetic"]), THRESHOLDS["synthetic"])
    halting["synthetic, long failing runs"] = (long_eval.metrics(THRESHOLDS["synthetic"], THRESHOLDS["synthetic"]), THRESHOLDS["synthetic"])
    for name, table in tables.items():
        print(f"\n{name}\n{table}")
    for name, (m, t) in halting.items():
        print(f"{name}: threshold {t}: halted {100 * m.coverage:.1f} % of runs, accuracy {100 * m.accuracy:.1f} %, steps {100 * m.delta_steps:+.1f} %")
    print(f"\ntraining (or cache) {trained:.0f} s, replay {replayed[0]:.1f} s, {replayed[1]:.1f} s CPU, load average {replayed[2]:.1f} ({args.orders} orders)")
    args.doc.write_text(_doc(figure, tables, halting, {"400 tasks, [-1, 1]": synthetic, "400 tasks, [-0.3, 0.3]": close, "2,000 tasks, long failing runs": long}, shared, args.orders, replayed, trained), encoding="utf-8")
    print(f"wrote {args.doc} and {figure}")


if __name__ == "__main__":
    main()
