"""``stopwise early`` commands, run in-process: train, evaluate, monitor, and input errors (exit code 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from stopwise.cli.early import register
from stopwise.records import Trajectory, read_outcomes, write_trajectories

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    root = typer.Typer()

    @root.callback()
    def main() -> None:
        """stopwise"""

    register(root)
    return root


@pytest.fixture(scope="module")
def data(runs: list[Trajectory], tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("early-cli")
    # long enough runs for the default min_steps, and many of them for min_child_samples
    write_trajectories(runs, folder / "runs.jsonl.gz")
    return folder


def _invoke(app: typer.Typer, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_train_then_monitor(app: typer.Typer, data: Path) -> None:
    code, out = _invoke(app, "early", "train", str(data / "runs.jsonl.gz"), "--out", str(data / "model"), "--min-steps", "5")
    assert code == 0, out
    assert "trained on 48 runs" in out and (data / "model" / "manifest.json").exists()
    code, out = _invoke(
        app, "early", "monitor", str(data / "model"), str(data / "runs.jsonl.gz"), "--agent", "agent-1", "--limit", "3",
        "--failure-threshold", "0.6", "--success-threshold", "0.6", "--outcomes", str(data / "rows.csv"),
    )
    assert code == 0, out
    assert "step   1" in out and "p_success" in out
    assert out.count("agent-1 · task-") == 3
    rows = read_outcomes(data / "rows.csv").to_frame()
    assert len(rows) == 3 and set(rows["status"]) <= {"predicted", "final"}
    halted = out.count("halted at step")
    assert (rows["status"] == "predicted").sum() == halted


def test_monitor_summary_mode(app: typer.Typer, data: Path) -> None:
    if not (data / "model").exists():
        _invoke(app, "early", "train", str(data / "runs.jsonl.gz"), "--out", str(data / "model"), "--min-steps", "5")
    code, out = _invoke(app, "early", "monitor", str(data / "model"), str(data / "runs.jsonl.gz"), "--summary", "--limit", "5")
    assert code == 0, out
    assert "step   1" not in out and len([line for line in out.splitlines() if "· task-" in line]) == 5
    assert "replayed 5 of 48" in out


@pytest.mark.parametrize("deployed", ["fold-average", "refit"])
def test_train_deployed_heads_option(app: typer.Typer, data: Path, deployed: str) -> None:
    folder = data / f"risk-{deployed}"
    args = ["early", "train", str(data / "runs.jsonl.gz"), "--out", str(folder), "--min-steps", "5", "--max-halt-error", "0.1",
            "--calibration-folds", "3", "--json"]
    result = CliRunner().invoke(app, [*args, *(["--deployed-heads", deployed] if deployed == "refit" else [])])  # fold-average: the default
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)  # progress and warnings go to standard error
    assert summary["deployed_heads"] == deployed and summary["cross_fitted"] is True
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["deployed_heads"] == deployed and manifest["params"]["deployed_heads"] == deployed
    if deployed == "fold-average":
        assert len(summary["fold_boosting_rounds"]["failure"]) == 3 and len(manifest["fold_heads"]) == 3
        assert summary["boosting_rounds"]["failure"] == sum(summary["fold_boosting_rounds"]["failure"])
        assert summary["quality"]["deployed_heads"] == "fold-average: the mean of the 3 task-fold heads"
    else:
        assert summary["fold_boosting_rounds"] is None and "fold_heads" not in manifest
    code, out = _invoke(app, "early", "monitor", str(folder), str(data / "runs.jsonl.gz"), "--summary", "--limit", "2")
    assert code == 0, out


def test_evaluate_writes_predictions_and_rows(app: typer.Typer, data: Path) -> None:
    out_dir = data / "eval"
    code, out = _invoke(
        app, "early", "evaluate", str(data / "runs.jsonl.gz"), "--out", str(out_dir), "--min-steps", "5",
        "--variant", "dense-lr", "--variant", "tfidf-lr", "--thresholds", "0.6,0.9", "--threshold", "0.6",
        "--outcomes", str(data / "early_rows.csv"),
    )
    assert code == 0, out
    assert "Table III" in out and "Table IV" in out and "ΔTokens use characters" in out
    for name in ("runs.csv", "predictions.csv.gz", "folds.csv", "evaluation.json", "sweep_dense-lr.csv", "sweep_tfidf-lr.csv"):
        assert (out_dir / name).exists(), name
    assert len(pd.read_csv(out_dir / "sweep_dense-lr.csv")) == 6
    rows = read_outcomes(data / "early_rows.csv")
    assert len(rows) == 48


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["early", "train", "missing.jsonl", "--out", "m"], "no such file"),
        (["early", "train", "{bad}", "--out", "m"], "row 2, field 'outcome': must be 0 or 1"),
        (["early", "train", "{runs}", "--out", "m", "--success-threshold", "1.5"], "--success-threshold must be a number in (0, 1]"),
        (["early", "train", "{runs}", "--out", "m", "--exclude", "colour"], "`exclude` must be a tuple"),
        (["early", "train", "{runs}", "--out", "m", "--deployed-heads", "mean"], "--deployed-heads must be one of fold-average, refit; got 'mean'"),
        (["early", "evaluate", "{runs}", "--variant", "mlp"], "--variant must be one of"),
        (["early", "evaluate", "{runs}", "--thresholds", "0.5,x"], "--thresholds must be comma-separated numbers"),
        (["early", "evaluate", "{runs}", "--by", "team"], "field 'meta.team': must be present"),
        (["early", "monitor", "{runs}", "{runs}"], "no such model directory"),
        (["early", "monitor", "{model}", "{runs}", "--agent", "nobody"], "no run matches"),
    ],
)
def test_input_errors_exit_4_with_a_clear_message(app: typer.Typer, data: Path, runs: list[Trajectory], args: list[str], message: str) -> None:
    bad = data / "bad.jsonl"
    if not bad.exists():
        write_trajectories([runs[0], runs[1].model_copy(update={"outcome": None})], bad)
    if not (data / "model").exists():
        _invoke(app, "early", "train", str(data / "runs.jsonl.gz"), "--out", str(data / "model"), "--min-steps", "5")
    filled = [a.format(runs=data / "runs.jsonl.gz", bad=bad, model=data / "model") for a in args]
    code, out = _invoke(app, *filled)
    assert code == 4, out
    assert "error:" in out and message in " ".join(out.split())
    assert "Traceback" not in out


def _model(app: typer.Typer, data: Path) -> Path:
    if not (data / "model").exists():
        _invoke(app, "early", "train", str(data / "runs.jsonl.gz"), "--out", str(data / "model"), "--min-steps", "5")
    return data / "model"


@pytest.mark.parametrize("mode", ["--steps", "--summary"])
def test_monitor_prints_each_hold_reason_once(app: typer.Typer, data: Path, runs: list[Trajectory], mode: str) -> None:
    """A hold reason (the same ~300 characters at every step it holds) is printed once, then named by its number."""
    from stopwise.early import load_model, monitor_run

    model = _model(app, data)
    args = ["--limit", "15", "--failure-threshold", "0.6", "--success-threshold", "0.6"]
    code, out = _invoke(app, "early", "monitor", str(model), str(data / "runs.jsonl.gz"), mode, *args)
    assert code == 0, out
    loaded = load_model(model)
    replayed = [monitor_run(loaded, run, success_threshold=0.6, failure_threshold=0.6) for run in runs[:15]]
    held = [[v for v in r.verdicts if v.held] for r in replayed]  # independent: the library's verdicts
    shown = [v for h in held for v in h] if mode == "--steps" else [h[-1] for h in held if h]  # the summary names the last hold
    holds = list(dict.fromkeys(v.hold for v in shown))
    held_steps = sum(r.held for r in replayed)
    assert holds and held_steps > len(holds), "the fixture must hold some steps for this test to mean anything"
    text = " ".join(out.split())
    for number, hold in enumerate(holds, start=1):
        assert text.count(" ".join(hold.split())) == 1, hold  # once, in its definition line
        assert f"hold {number}: {' '.join(hold.split())}" in text
    if mode == "--steps":
        assert text.count("(held: hold ") == held_steps
    assert len(out) < 400 * len(holds) + 250 * (held_steps if mode == "--steps" else 15) + 200 * 15


def test_monitor_warns_when_it_replays_training_runs(app: typer.Typer, data: Path, runs: list[Trajectory], tmp_path: Path) -> None:
    model = _model(app, data)
    result = CliRunner().invoke(app, ["early", "monitor", str(model), str(data / "runs.jsonl.gz"), "--summary", "--limit", "15"])
    assert result.exit_code == 0, result.output
    assert "warning: 15 of the 15 replayed runs were training runs of this model" in " ".join(result.stderr.split())
    new = write_trajectories([r.model_copy(update={"attempt": 7}) for r in runs[:5]], tmp_path / "new.jsonl")  # runs it never saw
    result = CliRunner().invoke(app, ["early", "monitor", str(model), str(new), "--summary", "--json"])
    assert result.exit_code == 0, result.output
    assert "training runs" not in result.stderr
    assert [json.loads(line)["training_run"] for line in result.stdout.splitlines()] == [False] * 5
    old = tmp_path / "old-model"  # a model saved before 0.2 records no training runs: nothing to say
    import shutil

    shutil.copytree(model, old)
    manifest = json.loads((old / "manifest.json").read_text())
    assert len(manifest["training"].pop("run_keys")) == 48
    (old / "manifest.json").write_text(json.dumps(manifest))
    result = CliRunner().invoke(app, ["early", "monitor", str(old), str(data / "runs.jsonl.gz"), "--summary", "--limit", "3", "--json"])
    assert result.exit_code == 0, result.output
    assert "training runs" not in result.stderr and json.loads(result.stdout.splitlines()[0])["training_run"] is None


def test_train_prints_steps_saved_with_one_sign(app: typer.Typer, data: Path, tmp_path: Path) -> None:
    """The per-head column and the both-heads line both say "steps saved", as a positive share, never a negative ΔSteps."""
    result = CliRunner().invoke(
        app, ["early", "train", str(data / "runs.jsonl.gz"), "--out", str(tmp_path / "m"), "--min-steps", "5",
              "--failure-threshold", "0.6", "--success-threshold", "0.6"], env={"COLUMNS": "200"},
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "ΔSteps" not in out and "steps saved (head alone)" in out
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    for head, q in manifest["quality"]["heads"].items():
        if q["delta_steps"] is not None:
            row = next(line for line in out.splitlines() if line.strip("│┃ ").startswith(head))
            assert f"{round(-100 * q['delta_steps'], 1) + 0.0:.1f}%" in row, row
    both = manifest["quality"]["both"]["delta_steps"] or 0.0
    assert f"steps saved {round(-100 * both, 1) + 0.0:.1f}%" in out and "steps saved -" not in out
