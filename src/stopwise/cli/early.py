"""``stopwise early``: train an early-outcome model, evaluate it leave-one-agent-out, replay runs through the monitor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from stopwise._atomic import Outputs, check_output_plan
from stopwise._text import for_terminal as escape  # user text: control, bidi and markup escaped
from stopwise.cli._common import (
    Inputs,
    Quiet,
    comma_numbers,
    console,
    did_you_mean,
    err_console,
    progress,
    user_errors,
)
from stopwise.errors import InputError

if TYPE_CHECKING:  # stopwise.early imports scikit-learn and LightGBM: only inside the commands
    from stopwise.early import EarlyOutcomeModel

THRESHOLDS = (0.75, 0.80, 0.85, 0.90, 0.95, 0.97)
"""As :data:`stopwise.early.THRESHOLDS` (a test keeps them equal); spelled out so that ``--help`` imports no model library."""

early_app = typer.Typer(
    name="early",
    help="Early outcome prediction within a task: train, evaluate leave-one-agent-out, monitor a run.",
    no_args_is_help=True,)



def _outcomes_output(outputs: Outputs, path: Path | None) -> Path | None:
    """The temporary file to write ``--outcomes`` rows to (None without it): refused now when the file exists (no --force) or its suffix names no table format."""
    if path is None:
        return None
    from stopwise.records import format_of

    format_of(path, None)  # the user's name in the message, before any work
    return outputs.file(path)


def _threshold(value: float | None, name: str) -> float | None:
    if value is not None and not 0 < value <= 1:
        raise InputError(f"--{name} must be a number in (0, 1]; got {value}")
    return value


def _pct(value: float) -> str:
    return "–" if value != value else f"{round(100 * value, 1) + 0.0:.1f}%"  # rounded, + 0.0: never "-0.0%"


def _train_summary(model: EarlyOutcomeModel, path: Any) -> dict[str, Any]:
    heads = model.classifier_
    return {
        "model": str(path),
        "n_train_runs": model.n_train_runs_,
        "n_train_prefixes": model.n_train_prefixes_,
        "n_features": len(model.features_),
        "boosting_rounds": dict(heads.best_iterations_),
        "validation_tasks": len(heads.validation_groups_),
        "calibration_tasks": len(model.calibration_tasks_),
        "cross_fitted": model.max_halt_error is not None and model.calibration_folds is not None,
        "deployed_heads": model.deployed_heads_,
        "fold_boosting_rounds": getattr(heads, "fold_iterations_", None),
        "thresholds": dict(model.thresholds_),
        "risk_control": {head: rc.as_dict() for head, rc in model.risk_control_.items()},
        "guard": None if model.guard_ is None else {
            k: v for k, v in model.guard_.as_dict().items() if k in ("max_outside", "min_task_coverage", "min_text_coverage", "quantile", "reference")
        },
        "quality": model.quality_,
    }


def _print_quality(summary: dict[str, Any]) -> None:
    quality = summary["quality"]
    table = Table(title=f"validation on {quality['n_runs']} {escape(quality['reference'])}", header_style="bold")
    for column in ("head", "threshold", "halted runs", "precision [95% CI]", "steps saved (head alone)"):
        table.add_column(column, justify="right")
    for head, q in quality["heads"].items():
        ci = q["precision_ci"]
        precision = "–" if q["precision"] is None else f"{100 * q['precision']:.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
        threshold = "off" if q["threshold"] is None else f"{q['threshold']:.2f}"
        table.add_row(head, threshold, str(q["halted"]), precision, _pct(-q["delta_steps"] if q["delta_steps"] is not None else float("nan")))
    console.print(table)
    both = quality["both"]
    nan = float("nan")
    console.print(
        f"both heads: {_pct(both['coverage'] if both['coverage'] is not None else nan)} of runs halted, "
        f"accuracy {_pct(both['accuracy'] if both['accuracy'] is not None else nan)}, "
        f"steps saved {_pct(-(both['delta_steps'] or 0.0))}, |ΔPass@1| {_pct(both['delta_abs_pass1'] if both['delta_abs_pass1'] is not None else nan)}"
    )
    for rc in summary["risk_control"].values():
        console.print(f"risk control, {rc['head']} head: {escape(rc['reason'])}")
    if quality["reference"] == "validation runs":
        console.print(
            "note: the validation runs also fitted the calibrators, so these figures are optimistic; "
            "`stopwise early evaluate` gives held-out figures, `--max-halt-error` thresholds with a guarantee"
        )
    for warning in quality["warnings"]:
        err_console.print(f"[bold yellow]warning:[/] {escape(warning)}")


def _warn_never_halts(summary: dict[str, Any]) -> None:
    """A warning, saying what to change, when the trained model halts no run (no head has a threshold)."""
    heads = summary["quality"]["heads"]
    if any(q["threshold"] is not None for q in heads.values()):
        return
    risk = summary["risk_control"]
    if risk:
        first = next(iter(risk.values()))
        higher = [f"{e:.2f}" for e in (0.10, 0.15, 0.20, 0.30) if e > first["epsilon"] + 1e-9][:2] or ["a larger value"]
        err_console.print(
            f"[bold yellow]warning:[/] this model never halts a run: no head's threshold showed a wrong-halt rate at most "
            f"{first['epsilon']:g} at confidence {1 - first['delta']:g}, so it saves no steps. Raise --max-halt-error "
            f"(e.g. {' or '.join(higher)}), lower --risk-confidence, or train on more runs (more calibration runs)."
        )
    else:
        err_console.print("[bold yellow]warning:[/] this model never halts a run (every head is off): turn a head on.")


@early_app.command("train")
def train_command(
    trajectories: Annotated[
        list[Path], typer.Argument(help="Trajectory JSONL files (.jsonl or .jsonl.gz) with final outcomes; '-' reads standard input.")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory to write the model to.")],
    success_threshold: Annotated[float, typer.Option(help="Success threshold s (with --max-halt-error: the head is on).")] = 0.95,
    failure_threshold: Annotated[float, typer.Option(help="Failure threshold f (with --max-halt-error: the head is on).")] = 0.95,
    no_success: Annotated[bool, typer.Option("--no-success-head", help="Turn the success head off (failure-only).")] = False,
    max_halt_error: Annotated[
        float | None,
        typer.Option(help="Choose each head's threshold on calibration runs so its wrong-halt rate is at most this (Learn-then-Test)."),
    ] = None,
    risk_confidence: Annotated[float, typer.Option(help="Confidence 1 − δ of the --max-halt-error guarantee.")] = 0.9,
    risk_unit: Annotated[str, typer.Option(help="Wrong-halt rate among halted runs (halted) or among all runs (runs).")] = "halted",
    calibration_folds: Annotated[
        int,
        typer.Option(help="Cross-fitted calibration for --max-halt-error: task folds scoring every training run out of fold; 0: hold out --calibration-fraction of the tasks instead."),
    ] = 5,
    calibration_groups: Annotated[
        str, typer.Option(help="What a cross-fitting fold holds out whole: task (calibration runs are new tasks) or agent (new agents).")
    ] = "task",
    calibration_fraction: Annotated[float, typer.Option(help="Share of training tasks held out for --max-halt-error with --calibration-folds 0.")] = 0.3,
    deployed_heads: Annotated[
        str,
        typer.Option(help="Cross-fitted --max-halt-error: deploy the mean of the fold heads (fold-average, the heads the thresholds were tested on) or heads refitted on all runs (refit)."),
    ] = "fold-average",
    guard_quantile: Annotated[float, typer.Option(help="Unfamiliar-run guard: share of reference prefixes each limit excludes; 0 turns it off.")] = 0.01,
    min_steps: Annotated[int, typer.Option(help="Drop training runs shorter than this.")] = 10,
    exclude: Annotated[list[str] | None, typer.Option(help="Feature family or group to leave out (repeatable).")] = None,
    backbone: Annotated[str, typer.Option(help="Per-head classifier: lightgbm or logistic.")] = "lightgbm",
    gold: Annotated[Path | None, typer.Option(help="Gold solutions JSONL (task, text, fail_to_pass, pass_to_pass).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of everything random.")] = 42,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="LightGBM threads (at most the CPU count).")] = 1,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing model directory written by stopwise.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the training summary and validation figures as JSON.")] = False,
    quiet: Quiet = False,
) -> None:
    """Fit the calibrated success and failure heads on finished runs and save the model.

    Ends with validation figures (precision of halted runs per head, steps saved, |ΔPass@1|) and a warning
    when a head is unreliable.

    Example: stopwise early train runs.jsonl.gz -o model --max-halt-error 0.05 --no-success-head
    """
    from stopwise.early import (
        DEPLOYED_HEADS,
        DualHeadClassifier,
        EarlyOutcomeModel,
        check_output_dir,
        read_gold,
        read_runs,
    )

    with user_errors(), Inputs(trajectories, gold) as inputs:
        if deployed_heads not in DEPLOYED_HEADS:
            raise InputError(f"--deployed-heads must be one of {', '.join(DEPLOYED_HEADS)}; got {deployed_heads!r}")
        runs = read_runs(inputs.files(trajectories))
        golds = read_gold(inputs.file(gold)) if gold is not None else None
        model = EarlyOutcomeModel(
            success_threshold=None if no_success else _threshold(success_threshold, "success-threshold"),
            failure_threshold=_threshold(failure_threshold, "failure-threshold"),
            min_steps=min_steps,
            exclude=tuple(exclude or ()),
            classifier=DualHeadClassifier(backbone=backbone, n_jobs=jobs),
            random_state=seed,
            max_halt_error=max_halt_error,
            risk_confidence=risk_confidence,
            risk_unit=risk_unit,
            calibration_folds=calibration_folds if calibration_folds != 0 else None,
            calibration_groups=calibration_groups,
            calibration_fraction=calibration_fraction,
            deployed_heads=deployed_heads,
            guard_quantile=guard_quantile if guard_quantile > 0 else None,
        )
        check_output_dir(out, force=force)
        with progress("early train", quiet=quiet, detail=f"training on {len(runs):,} runs") as update:
            model.fit(runs, gold=golds, progress=update)
        path = model.save(out, force=force)
    summary = _train_summary(model, path)
    if as_json:
        print(json.dumps(summary, indent=2))
        _warn_never_halts(summary)
        return
    heads = model.classifier_
    rounds = summary["fold_boosting_rounds"] or {name: [n] for name, n in summary["boosting_rounds"].items()}
    console.print(
        f"trained on {model.n_train_runs_} runs ({model.n_train_prefixes_} prefixes, {len(model.features_)} features); "
        f"boosting rounds success {'+'.join(map(str, rounds['success']))}, failure {'+'.join(map(str, rounds['failure']))}; "
        f"validation tasks {len(heads.validation_groups_)}"
        + (f"; calibration tasks {len(model.calibration_tasks_)}" if len(model.calibration_tasks_) else "")
        + (f" ({model.calibration_folds} {model.calibration_groups} folds, every training run scored out of fold)" if summary["cross_fitted"] else "")
    )
    if model.deployed_heads_ == "fold-average":
        console.print(
            f"deployed: the mean of the {model.calibration_folds} fold heads' probabilities (the heads the thresholds were tested on); "
            "--deployed-heads refit deploys heads refitted on all runs instead"
        )
    _print_quality(summary)
    console.print(f"wrote {escape(str(path))}")
    _warn_never_halts(summary)


@early_app.command("evaluate")
def evaluate_command(
    trajectories: Annotated[list[Path], typer.Argument(help="Trajectory JSONL files with final outcomes; '-' reads standard input.")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Directory to write runs, predictions, folds and the sweep to (optional: the tables are printed).")] = None,
    by: Annotated[str, typer.Option(help="Hold out one value at a time: agent or a meta key (service, model).")] = "agent",
    within: Annotated[str | None, typer.Option(help="Meta key whose values form separate leave-one-out studies.")] = None,
    exclude_same: Annotated[str | None, typer.Option(help="Meta key; training drops runs sharing the held-out value.")] = None,
    variant: Annotated[list[str] | None, typer.Option(help="lightgbm, dense-lr or tfidf-lr (repeatable).")] = None,
    thresholds: Annotated[str, typer.Option(help="Comma-separated thresholds of the sweep.")] = ", ".join(f"{t:g}" for t in THRESHOLDS),
    min_steps: Annotated[int, typer.Option(help="Drop training runs shorter than this.")] = 10,
    gold: Annotated[Path | None, typer.Option(help="Gold solutions JSONL.")] = None,
    outcomes: Annotated[Path | None, typer.Option(help="Write the early-stopped outcome rows (status predicted) here.")] = None,
    threshold: Annotated[float, typer.Option(help="Dual threshold for --outcomes and the per-agent table.")] = 0.95,
    seed: Annotated[int, typer.Option("--seed", help="Seed of everything random.")] = 42,
    jobs: Annotated[int, typer.Option("--jobs", "-j", help="LightGBM threads (at most the CPU count).")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print the sweeps and the per-agent table as JSON.")] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Replace an existing evaluation directory written by stopwise, and an existing --outcomes file.")
    ] = False,
    quiet: Quiet = False,
) -> None:
    """Leave-one-agent-out (or leave-one-group-out) evaluation with the paper's metrics and threshold sweep.

    Example: stopwise early evaluate runs.jsonl.gz --within service -o out/eval --variant lightgbm --variant tfidf-lr
    """
    from stopwise.early import (
        EVALUATION_KIND,
        VARIANTS,
        check_output_dir,
        leave_one_out,
        make_variant,
        read_gold,
        read_runs,
    )
    from stopwise.records import write_outcomes

    with user_errors(), Outputs(force=force) as outputs, Inputs(trajectories, gold) as inputs:
        names = variant or ["lightgbm"]
        unknown = [n for n in names if n not in VARIANTS]
        if unknown:
            raise InputError(f"--variant must be one of {', '.join(VARIANTS)}; got {', '.join(unknown)}")
        grid = comma_numbers(thresholds, "thresholds", unit_interval=True)
        _threshold(threshold, "threshold")
        if out is not None:
            check_output_dir(out, force=force, kind=EVALUATION_KIND)
        check_output_plan([("--out", out, EVALUATION_KIND), ("--outcomes", outcomes, None)], force=force)  # e.g. --outcomes inside --out
        rows_tmp = _outcomes_output(outputs, outcomes)  # checked before any computation; moved into place at the end
        runs = read_runs(inputs.files(trajectories))
        golds = read_gold(inputs.file(gold)) if gold is not None else None
        models = {name: make_variant(name, min_steps=min_steps, random_state=seed, n_jobs=jobs) for name in names}
        with progress("early evaluate", quiet=quiet) as update:
            evaluation = leave_one_out(
                runs, models, by=by, within=within, exclude_same=exclude_same, gold=golds,
                source=", ".join(str(p) for p in trajectories), progress=update,
            )
        sweeps = {name: evaluation.sweep(grid, variant=name) for name in evaluation.variants}
        if rows_tmp is not None:
            write_outcomes(evaluation.outcome_rows(threshold, threshold, variant=names[0]), rows_tmp)
        if out is not None:
            evaluation.save(out, force=force, extra={f"sweep_{name}.csv": sweep for name, sweep in sweeps.items()})
    metrics = evaluation.metrics(threshold, threshold, variant=names[0])
    if as_json:
        print(json.dumps({
            "by": by, "n_runs": len(evaluation.runs), "token_source": evaluation.token_source,
            "sweeps": {name: json.loads(sweep.to_json(orient="records")) for name, sweep in sweeps.items()},
            "per_agent": json.loads(metrics.per_agent.to_json(orient="records")),
            "summary": {k: v for k, v in metrics.summary().items()},
            "wrote": [str(p) for p in (out, outcomes) if p is not None],
        }, indent=2, default=str))
        return
    for name, sweep in sweeps.items():
        table = Table(title=f"{escape(name)}: leave-one-{escape(by)}-out, {len(evaluation.runs)} held-out runs (Table III)", header_style="bold")
        for column in ("threshold", "mode", "precision", "coverage", "ΔSteps", "ΔTokens in", "ΔTokens out", "Δ|Pass@1|", "ρ"):
            table.add_column(column, justify="right")
        for row in sweep.itertuples(index=False):
            table.add_row(
                f"{row.threshold:.2f}", row.mode, _pct(row.precision), _pct(row.coverage), _pct(row.delta_steps),
                _pct(row.delta_tokens_in), _pct(row.delta_tokens_out), _pct(row.delta_abs_pass1), f"{row.spearman_rho:.3f}",
            )
        console.print(table)
    agents = Table(title=f"{escape(names[0])} per agent at dual threshold {threshold:g} (Table IV)", header_style="bold")
    for column in ("agent", "runs", "Pass@1 full", "Pass@1 early", "ΔPass@1", "ΔRank", "ΔSteps"):
        agents.add_column(column, justify="right")
    for row in metrics.per_agent.itertuples(index=False):
        agents.add_row(
            escape(str(row.agent)), str(row.runs), _pct(row.pass1_full), _pct(row.pass1_early),
            f"{100 * row.delta_pass1:+.1f} pp", f"{row.delta_rank:+d}", _pct(row.delta_steps),
        )
    console.print(agents)
    console.print(f"ΔTokens use {evaluation.token_source}; Spearman ρ {metrics.spearman_rho:.3f}, {100 * metrics.unchanged_rank_share:.0f}% ranks unchanged.")
    if out is not None:
        console.print(f"wrote {escape(str(out))}")
    if outcomes is not None:
        console.print(f"wrote {escape(str(outcomes))}")


@early_app.command("monitor")
def monitor_command(
    model_dir: Annotated[Path, typer.Argument(help="A model directory written by `stopwise early train`.")],
    trajectories: Annotated[Path, typer.Argument(help="Trajectory JSONL file to replay step by step; '-' reads standard input.")],
    agent: Annotated[str | None, typer.Option(help="Replay only this agent's runs.")] = None,
    task: Annotated[str | None, typer.Option(help="Replay only this task's runs.")] = None,
    attempt: Annotated[int | None, typer.Option(help="Replay only this attempt.")] = None,
    limit: Annotated[int, typer.Option(help="Replay at most this many runs.")] = 20,
    success_threshold: Annotated[float | None, typer.Option(help="Override the model's success threshold.")] = None,
    failure_threshold: Annotated[float | None, typer.Option(help="Override the model's failure threshold.")] = None,
    guard: Annotated[bool, typer.Option("--guard/--no-guard", help="Hold halts on runs unlike the validated ones (the model's guard).")] = True,
    steps: Annotated[bool, typer.Option("--steps/--summary", help="Print every step, or one line per run.")] = True,
    gold: Annotated[Path | None, typer.Option(help="Gold solutions JSONL (for a model trained with one).")] = None,
    outcomes: Annotated[Path | None, typer.Option(help="Write one outcome row per replayed run (halted: status predicted).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing --outcomes file.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object per run (with every verdict under --steps).")] = False,
) -> None:
    """Replay runs through the online monitor and print its verdict, and the reason, after every step.

    Example: stopwise early monitor model runs.jsonl.gz --summary --failure-threshold 0.9 --outcomes rows.csv
    """
    from stopwise.early import load_model, monitor_run, read_gold, read_runs
    from stopwise.records import outcome_columns, write_outcomes

    with user_errors(), Outputs(force=force) as outputs, Inputs(trajectories, gold) as inputs:
        rows_tmp = _outcomes_output(outputs, outcomes)  # checked before the model is loaded; moved into place at the end
        model = load_model(model_dir)
        s = _threshold(success_threshold, "success-threshold")
        f = _threshold(failure_threshold, "failure-threshold")
        if limit < 1:
            raise InputError(f"--limit must be a positive integer; got {limit}")
        source = inputs.file(trajectories)  # standard input is named <stdin> in messages (user_errors)
        runs = read_runs([source], require_outcome=False)
        golds = read_gold(inputs.file(gold)) if gold is not None else {}
        chosen = [
            r for r in runs
            if (agent is None or r.agent == agent) and (task is None or r.task == task) and (attempt is None or r.attempt == attempt)
        ]
        if not chosen:
            named = (("--agent", agent, {r.agent for r in runs}), ("--task", task, {r.task for r in runs}))
            hints = "".join(
                f"; {option} {value!r}: {hint}"
                for option, value, seen in named
                if value is not None and value not in seen and (hint := did_you_mean(value, seen))
            )
            raise InputError(f"{source}: no run matches --agent {agent!r} --task {task!r} --attempt {attempt!r}{hints}")
        results = [
            monitor_run(model, run, gold=golds.get(run.task), success_threshold=s, failure_threshold=f, guard=guard)
            for run in chosen[:limit]
        ]
        trained = model.trained_on(chosen[:limit])
        rows = [r.row for r in results if r.row is not None]
        missing = [r for r in results if r.row is None]
        if rows_tmp is not None and rows:
            write_outcomes(outcome_columns(rows), rows_tmp)
    if as_json:
        for i, result in enumerate(results):
            print(json.dumps({**result.as_dict(steps=steps), "training_run": None if trained is None else bool(trained[i])}, default=str))
        _warn_first_step(results)
        _warn_training_runs(results, trained)
        return
    holds: dict[str, int] = {}  # each hold reason, printed once and then named by its number
    for run, result in zip(chosen, results, strict=False):
        if steps:
            console.print(f"[bold]{escape(run.agent)} · {escape(run.task)} · attempt {run.attempt}[/] ({len(run.steps)} steps)")
            for step, verdict in zip(run.steps, result.verdicts, strict=False):
                console.print(
                    _hold_note(holds, verdict.hold, "  ")
                    + f"  step {verdict.step:>3}  {escape(str(step.tool or '-'))[:36]:<36} "
                    f"p_success {verdict.p_success:.3f}  p_failure {verdict.p_failure:.3f}  {verdict.action}"
                    + (f" → predicted {'success' if verdict.predicted else 'failure'}" if verdict.halted else "")
                    + (f"  (held: hold {holds[verdict.hold]})" if verdict.held else f"  ({escape(verdict.reason)})" if verdict.reason else "")
                )
        truth = "unknown" if run.outcome is None else ("success" if run.outcome >= 0.5 else "failure")
        lead = "  " if steps else f"{escape(run.agent)} · {escape(run.task)} · {run.attempt}: "
        if result.halted:
            saved = 1 - (result.halt_step or 0) / len(run.steps)
            line = (
                f"halted at step {result.halt_step}/{len(run.steps)} ({100 * saved:.0f}% of steps saved): predicted "
                f"{'success' if result.predicted else 'failure'}, actual {truth} — {escape(result.reason)}"
            )
            console.print(lead + line)
            continue
        last = next((v for v in reversed(result.verdicts) if v.held), None)
        reason = result.reason
        note = ""
        if last is not None:  # the hold reason by its number: the same text on every step and run it holds
            note = _hold_note(holds, last.hold, "")
            reason = reason.replace(last.reason, f"held at {result.held} step(s) by hold {holds[last.hold]} (last: the {last.would_have})")
        console.print(note + lead + f"{escape(reason)}: actual {truth}")
    if outcomes is not None:
        console.print(f"wrote {len(rows)} outcome rows to {escape(str(outcomes))}")
        if missing:
            err_console.print(
                f"[bold yellow]note:[/] {len(missing)} replayed run(s) ran to completion without a recorded outcome and have no row: "
                + ", ".join(escape(f"{r.agent} · {r.task} · {r.attempt}") for r in missing[:10])
                + (" …" if len(missing) > 10 else "")
            )
    if len(chosen) > limit:
        console.print(f"(replayed {limit} of {len(chosen)} matching runs; raise --limit for more)")
    _warn_first_step(results)
    _warn_training_runs(results, trained)


def _hold_note(holds: dict[str, int], hold: str, indent: str) -> str:
    """The line defining a hold reason (``hold 1: …``) the first time it is met, numbered in ``holds``; else ""."""
    if not hold or hold in holds:
        return ""
    holds[hold] = len(holds) + 1
    return f"{indent}hold {holds[hold]}: {escape(hold)}\n"


def _warn_training_runs(results: list[Any], trained: Any) -> None:
    """A warning when replayed runs were the model's own training runs: their verdicts are in-sample, better than a new run's."""
    if trained is None or not trained.any():
        return
    halted = [r for r, t in zip(results, trained, strict=True) if t and r.halted]
    first = sum(1 for r in halted if r.halt_step is not None and r.halt_step <= 1)
    err_console.print(
        f"[bold yellow]warning:[/] {int(trained.sum())} of the {len(results)} replayed runs were training runs of this model"
        + (f" ({len(halted)} of them halted, {first} at step 1)" if halted else "")
        + ": the model has seen their outcomes, so these verdicts are in-sample and look better than on new runs. "
        "Replay runs it was not trained on, or use `stopwise early evaluate` for held-out figures."
    )


FIRST_STEP_SHARE = 0.8
"""``early monitor`` warns when at least this share of the replayed runs (and 3 or more) halt at step 1."""


def _warn_first_step(results: list[Any]) -> None:
    """A warning, saying what to change, when the monitor halts (almost) every run at its first step, from the prompt alone."""
    first = sum(1 for r in results if r.halted and r.halt_step is not None and r.halt_step <= 1)
    if first >= 3 and first >= FIRST_STEP_SHARE * len(results):
        err_console.print(
            f"[bold yellow]warning:[/] {first} of {len(results)} runs halted at step 1, from the task prompt alone, before the "
            "agent acted: the thresholds judge the task, not the run. Raise --failure-threshold / --success-threshold "
            "(e.g. 0.99), or retrain with `stopwise early train --max-halt-error` for thresholds with a wrong-halt guarantee."
        )


def register(app: typer.Typer) -> None:
    """Add the ``early`` command group to the top-level app."""
    app.add_typer(early_app, name="early")
