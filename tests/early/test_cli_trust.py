"""``stopwise early``: risk-controlled training, quality on display, reasons, and outputs that never cost user data."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from stopwise.cli.early import register
from stopwise.early import EarlyOutcomeModel, load_model
from stopwise.errors import InputError
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
def data(run_factory, tmp_path_factory: pytest.TempPathFactory) -> Path:  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("early-trust")
    write_trajectories(run_factory(n_agents=4, n_tasks=24, seed=5), folder / "runs.jsonl.gz")
    return folder


@pytest.fixture(scope="module")
def tiny(run_factory, tmp_path_factory: pytest.TempPathFactory) -> Path:  # type: ignore[no-untyped-def]
    """24 short runs (3 agents x 8 tasks): a model trains on them in well under a second, enough for the tests
    of what ``--out``, ``--force`` and bad arguments do to folders (how good the model is does not matter)."""
    folder = tmp_path_factory.mktemp("early-trust-tiny")
    write_trajectories(run_factory(n_agents=3, n_tasks=8, seed=5), folder / "runs.jsonl.gz")
    return folder


def _invoke(app: typer.Typer, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_train_with_max_halt_error_shows_the_guarantee_and_the_validation_figures(app: typer.Typer, data: Path) -> None:
    code, out = _invoke(
        app, "early", "train", str(data / "runs.jsonl.gz"), "-o", str(data / "ltt"), "--min-steps", "5",
        "--max-halt-error", "0.1", "--risk-confidence", "0.9", "--calibration-folds", "0",
    )
    assert code == 0, out
    assert "calibration tasks 8" in out  # ceil(0.3 * 24)
    assert "validation on 32 calibration runs" in out
    assert "risk control, failure head:" in out and "risk control, success head:" in out
    assert "precision [95% CI]" in out and "|ΔPass@1|" in out
    model = load_model(data / "ltt")
    assert model.quality_["reference"] == "calibration runs" and set(model.risk_control_) == {"success", "failure"}
    result = CliRunner().invoke(app, [
        "early", "train", str(data / "runs.jsonl.gz"), "-o", str(data / "ltt-json"), "--min-steps", "5",
        "--max-halt-error", "0.1", "--calibration-folds", "2", "--json",
    ])
    summary = json.loads(result.stdout)  # progress and warnings go to standard error
    assert result.exit_code == 0 and summary["cross_fitted"] and summary["calibration_tasks"] == 24
    assert summary["quality"]["reference"] == "cross-fitted training runs (2 task folds)" and summary["quality"]["n_runs"] == 96
    assert set(summary["thresholds"]) == {"success", "failure"}
    assert summary["quality"]["heads"]["failure"]["halted"] >= 0 and "warnings" in summary["quality"]


def test_a_weak_head_gets_a_warning(app: typer.Typer, data: Path) -> None:
    code, out = _invoke(
        app, "early", "train", str(data / "runs.jsonl.gz"), "-o", str(data / "weak"), "--min-steps", "5",
        "--success-threshold", "0.5", "--failure-threshold", "0.5",
    )
    assert code == 0, out
    assert "warning:" in out and "head" in out


def test_monitor_prints_each_verdicts_reason_and_reports_runs_without_outcome(
    app: typer.Typer, data: Path, run_factory: Callable[..., list[Trajectory]], fitted: EarlyOutcomeModel
) -> None:
    fitted.save(data / "m")  # the early tests' shared small model (tests/early/conftest.py): monitoring needs no new training
    runs = run_factory(n_agents=1, n_tasks=4, seed=9)
    unlabelled = [r.model_copy(update={"outcome": None}) for r in runs]
    write_trajectories(unlabelled, data / "unlabelled.jsonl")
    code, out = _invoke(
        app, "early", "monitor", str(data / "m"), str(data / "unlabelled.jsonl"), "--failure-threshold", "0.999",
        "--success-threshold", "0.999", "--outcomes", str(data / "rows.csv"),
    )
    assert code == 0, out
    assert "ran to completion" in out
    assert "4 replayed run(s) ran to completion without a recorded outcome and have no row" in out
    code, out = _invoke(
        app, "early", "monitor", str(data / "m"), str(data / "runs.jsonl.gz"), "--failure-threshold", "0.5",
        "--success-threshold", "0.5", "--limit", "4", "--outcomes", str(data / "rows2.csv"),
    )
    assert code == 0, out
    assert "head: p_" in out  # e.g. "(failure head: p_failure 0.731 ≥ 0.500)"
    assert len(read_outcomes(data / "rows2.csv")) == 4
    code, out = _invoke(app, "early", "monitor", str(data / "m"), str(data / "runs.jsonl.gz"), "--limit", "2", "--summary", "--json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(lines) == 2 and {"reason", "halted", "row"} <= set(lines[0])


def test_train_never_replaces_a_folder_it_did_not_write(app: typer.Typer, tiny: Path, tmp_path: Path) -> None:
    user = tmp_path / "mine"
    user.mkdir()
    (user / "manifest.json").write_text('{"mine": true}')
    (user / "notes.txt").write_text("keep me")
    before = _snapshot(user)
    code, out = _invoke(app, "early", "train", str(tiny / "runs.jsonl.gz"), "-o", str(user), "--min-steps", "5")
    assert code == 4 and "--out" in out and "did not write" in out
    assert _snapshot(user) == before
    cwd = os.getcwd()
    os.chdir(user)
    try:
        code, out = _invoke(app, "early", "train", str(tiny / "runs.jsonl.gz"), "-o", ".", "--min-steps", "5")
    finally:
        os.chdir(cwd)
    assert code == 4 and "--out" in out and _snapshot(user) == before
    # a model directory is replaced only with --force
    code, out = _invoke(app, "early", "train", str(tiny / "runs.jsonl.gz"), "-o", str(tmp_path / "model"), "--min-steps", "5")
    assert code == 0, out
    code, out = _invoke(app, "early", "train", str(tiny / "runs.jsonl.gz"), "-o", str(tmp_path / "model"), "--min-steps", "5")
    assert code == 4 and "--force" in out
    code, out = _invoke(app, "early", "train", str(tiny / "runs.jsonl.gz"), "-o", str(tmp_path / "model"), "--min-steps", "5", "--force")
    assert code == 0, out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "model"]  # no temporary folder left behind


def test_n_jobs_beyond_the_cpu_count_is_a_user_error(app: typer.Typer, tiny: Path, tmp_path: Path) -> None:
    code, out = _invoke(app, "early", "train", str(tiny / "runs.jsonl.gz"), "-o", str(tmp_path / "m"), "--jobs", "100000")
    assert code == 4 and "n_jobs" in out and "CPU count" in out
    assert not (tmp_path / "m").exists() and list(tmp_path.iterdir()) == []


def test_every_early_command_has_an_example(app: typer.Typer) -> None:
    for command in ("train", "evaluate", "monitor"):
        code, out = _invoke(app, "early", command, "--help")
        assert code == 0 and f"Example: stopwise early {command}" in out


def test_evaluate_with_a_bad_outcomes_path_leaves_nothing_behind(app: typer.Typer, tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "eval"
    code, text = _invoke(
        app, "early", "evaluate", str(tiny / "runs.jsonl.gz"), "-o", str(out), "--min-steps", "5",
        "--outcomes", str(tmp_path / "rows.unknown-format"),
    )
    assert code == 4, text
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_an_evaluation_csv_with_extra_cells_or_a_repeated_column_is_refused(runs: list[Trajectory], small_params: dict, tmp_path: Path) -> None:
    from stopwise.early import EarlyEvaluation, leave_one_out
    from stopwise.errors import ValidationError

    evaluation = leave_one_out(runs[:24], EarlyOutcomeModel(**small_params), by="agent")
    folder = evaluation.save(tmp_path / "e")
    text = (folder / "runs.csv").read_text().splitlines()
    (folder / "runs.csv").write_text("\n".join([text[0], text[1] + ",7", *text[2:]]) + "\n")
    with pytest.raises(ValidationError, match=r"runs.csv, row 1: must have 11 cells like the header; got 12"):
        EarlyEvaluation.load(folder)
    (folder / "runs.csv").write_text("\n".join([text[0].replace("task", "agent"), *text[1:]]) + "\n")
    with pytest.raises(ValidationError, match=r"runs.csv, field 'agent': must appear once in the header"):
        EarlyEvaluation.load(folder)
    with pytest.raises(InputError, match="pass --force"):
        evaluation.save(folder)
