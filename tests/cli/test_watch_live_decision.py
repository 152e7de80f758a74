"""``stopwise watch LOGDIR`` reports the live decision the paired Inspect manager wrote into the logs.

One real paired run (docs/examples/inspect_live.py: 200 questions, two ``mockllm`` systems, 8 samples
in flight) decides while samples are in flight, so the logs hold rows logged after the decision and
deciding again on them differs from it. The expected decision comes from the ledger, independently of
the logs: the first final record of its decision chain (action and digest).
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from tests.conftest import skip_without

import stopwise
from stopwise.cli.main import main
from stopwise.errors import FileFormatError
from stopwise.live import follow_inspect_logs
from stopwise.live._carried import Carried, live_decision

skip_without("inspect_ai", "pip install -e '.[test]'")

IN_FLIGHT = 8


@pytest.fixture(scope="module")
def run(example: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The paired run's folder and the ledger's first final decision record."""
    from stopwise.ledger import open_ledger

    out = tmp_path_factory.mktemp("inspect-watch-live")
    # without the coverage rule: no top-up wait, so the samples in flight when the boundary crosses finish after it
    # (with the top-up design the manager skips all but the top-up tasks, and fewer rows may follow the decision)
    pooled = example.POLICY_TOML.replace('kind = "coverage-aware"', 'kind = "uniform"') + '[coverage]\nrule = "none"\n'
    assert pooled != example.POLICY_TOML + '[coverage]\nrule = "none"\n'  # the order is a uniform draw
    example.run(out, n=200, max_samples=IN_FLIGHT, policy_toml=pooled)
    with open_ledger(f"sqlite:///{out / 'ledger.db'}") as ledger:
        history = ledger.decisions("arith-demo")
    first_final = next(link.record for link in history if link.record.action in ("promote", "reject"))
    return out, first_final


def _watch(out: Path, logs: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["watch", str(logs), "--tested", "tested", "--baseline", "baseline", "--system-from", "task",
                 "--tasks", str(out / "order.csv"), "--policy", str(out / "policy.toml"), "--once", *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_watch_reports_the_managers_decision_not_a_redecision(run: tuple[Path, Any], capsys: pytest.CaptureFixture[str]) -> None:
    out, first_final = run
    rows = stopwise.read_outcomes(out / "outcomes.csv")
    assert first_final.ledger is not None and len(rows) > first_final.ledger.n_events, "the run should log rows after the decision"
    code, text, _ = _watch(out, out / "logs", capsys, "--json")
    payload = json.loads(text)
    assert code == stopwise.ACTIONS.index(first_final.action)
    assert (payload["source"], payload["action"], payload["digest"]) == ("inspect-manager", first_final.action, first_final.digest())
    assert payload["look"] == first_final.ledger.decision and payload["agree"] is True and len(payload["logs"]) == 2
    assert stopwise.DecisionRecord.model_validate(payload["decision"]).digest() == first_final.digest()
    # the re-decision on every logged row saw the rows logged after the decision: another record, and the reason says so
    again = stopwise.DecisionRecord.model_validate(payload["redecided"])
    # (in-flight rows need not extend the observed prefix of pairs; they always change the input digest)
    assert again.n_observed >= first_final.n_observed and payload["redecided_digest"] != payload["digest"]
    after = len(rows) - first_final.ledger.n_events
    assert f"{after} rows were logged after it" in payload["difference"]
    code, text, _ = _watch(out, out / "logs", capsys)  # the readable output says the same
    assert code == stopwise.ACTIONS.index(first_final.action)
    assert f"live decision of the paired Inspect manager (look {first_final.ledger.decision}, digest {first_final.digest()[:16]}" in text
    assert "re-decided from the logs:" in text


def _stale_copy(source: Path, dest: Path, record: dict[str, Any]) -> None:
    """A copy of a log whose early-stopping metadata carries an older decision (the first log to finish)."""
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(dest, "w") as copy:
        for name in src.namelist():
            data = src.read(name)
            if name == "header.json":
                header = json.loads(data)
                meta = header["results"]["early_stopping"]["metadata"]
                meta.update(decision=record, action=record["action"], ledger_decisions=3)
                data = json.dumps(header).encode()
            copy.writestr(name, data)


def test_the_later_look_wins_when_the_logs_differ(run: tuple[Path, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, first_final = run
    from stopwise.ledger import open_ledger

    with open_ledger(f"sqlite:///{out / 'ledger.db'}") as ledger:
        early = ledger.decisions("arith-demo")[2].record  # the chain's third look: continue
    assert early.action == "continue"
    logs = sorted((out / "logs").glob("*.eval"))
    _stale_copy(logs[0], tmp_path / logs[0].name, early.model_dump(mode="json"))
    shutil.copy(logs[1], tmp_path / logs[1].name)
    code, text, _ = _watch(out, tmp_path, capsys, "--json")
    payload = json.loads(text)
    assert code == stopwise.ACTIONS.index(first_final.action)
    assert (payload["action"], payload["digest"], payload["look"]) == (first_final.action, first_final.digest(), first_final.ledger.decision)
    assert payload["agree"] is False and payload["log"] == logs[1].name
    assert "different live decisions" in payload["notes"][0] and "continue at look 3" in payload["notes"][0]


def test_logs_without_a_live_decision_are_redecided_as_before(run: tuple[Path, Any], tmp_path: Path) -> None:
    out, _ = run
    for log in sorted((out / "logs").glob("*.eval")):
        with zipfile.ZipFile(log) as src, zipfile.ZipFile(tmp_path / log.name, "w") as copy:
            for name in src.namelist():
                data = src.read(name)
                if name == "header.json":
                    header = json.loads(data)
                    header["results"]["early_stopping"] = None
                    data = json.dumps(header).encode()
                copy.writestr(name, data)
    universe = stopwise.read_task_universe(out / "order.csv")
    policy = stopwise.load_policy(out / "policy.toml")
    [look] = follow_inspect_logs(tmp_path, "tested", "baseline", policy, universe=universe, system="{task}", timeout=0)
    rows = stopwise.read_outcomes(out / "outcomes.csv")
    reference = stopwise.decide(rows, "tested", "baseline", policy, universe=universe)
    assert look.live is None and look.difference is None and look.record is look.redecided
    assert look.record is not None  # the same decision as on the ledger's rows (input digests differ: other columns)
    assert (look.record.action, look.record.n_observed) == (reference.action, reference.n_observed)
    assert look.record.delta_hat == pytest.approx(reference.delta_hat, abs=1e-12)
    assert look.record.r_promote == pytest.approx(reference.r_promote, abs=1e-12)


def test_a_damaged_live_decision_is_refused_naming_the_log_and_field(run: tuple[Path, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, first_final = run
    broken = first_final.model_dump(mode="json")
    broken["action"] = "ship-it"
    log = sorted((out / "logs").glob("*.eval"))[0]
    _stale_copy(log, tmp_path / log.name, broken)
    code, _, err = _watch(out, tmp_path, capsys)
    assert code == 4 and "Traceback" not in err
    assert log.name in err and "results.early_stopping.metadata.decision" in err and "'action'" in err


def test_decisions_of_another_pair_are_left_out_with_a_note(run: tuple[Path, Any]) -> None:
    _, first_final = run
    carried = [Carried("a.eval", first_final, 5)]
    assert live_decision(carried, "tested", "baseline")[0] is not None
    live, note = live_decision(carried, "A", "B")
    assert live is None and note is not None and "tested vs baseline, not of A vs B" in note
    with pytest.raises(FileFormatError):
        from stopwise.live._carried import carried_decision

        carried_decision({"manager": "stopwise (x)", "metadata": {"decision": {"action": "promote"}}}, "a.eval")


def test_json_logs_carry_the_live_decision_too(run: tuple[Path, Any], tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    out, first_final = run
    for log in sorted((out / "logs").glob("*.eval")):
        write_eval_log(read_eval_log(str(log)), str(tmp_path / f"{log.stem}.json"), format="json")
    universe = stopwise.read_task_universe(out / "order.csv")
    [look] = follow_inspect_logs(tmp_path, "tested", "baseline", stopwise.load_policy(out / "policy.toml"),
                                 universe=universe, system="{task}", timeout=0)
    assert look.live is not None and look.live.agree and look.live.log.endswith(".json")
    assert (look.live.action, look.live.digest, look.live.look) == (first_final.action, first_final.digest(), first_final.ledger.decision)
    assert look.record is look.live.record and look.final
