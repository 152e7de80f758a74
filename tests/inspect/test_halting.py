"""Live halting in Inspect (issue 22): a real evaluation of two mock agents halted by a small trained model.

The docs example (docs/examples/inspect_halting.py) runs both agents with and without
:class:`stopwise.inspect.LiveHalting`. Halted samples end mid-trajectory with a custom limit and are
scored with the predicted outcome; the verdicts taken live from Inspect messages equal the verdicts of
the same runs read back as trajectories (``stopwise ingest --trajectories``) and replayed through
``monitor_run``, probability for probability; ``stopwise ingest`` and the paired manager write the halted
samples as ``predicted`` rows.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from tests.conftest import load_example

import stopwise
from stopwise.cli.main import main
from stopwise.early import EarlyOutcomeModel, monitor_run
from stopwise.ingest import ingest, system_template

REPO = Path(__file__).resolve().parents[2]
N = 8


@pytest.fixture(scope="module")
def halting_example() -> ModuleType:
    return load_example("inspect_halting.py")


@pytest.fixture(scope="module")
def model(halting_example: ModuleType) -> EarlyOutcomeModel:
    return halting_example.train()  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def example_run(halting_example: ModuleType, model: EarlyOutcomeModel, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("inspect-halting")
    return out, halting_example.run(out, n=N, model=model)


def _logs(folder: Path) -> dict[str, Any]:
    from inspect_ai.log import read_eval_log

    logs = [read_eval_log(str(p)) for p in sorted(folder.glob("*.eval"))]
    return {log.eval.task: log for log in logs}


def _calls(sample: Any) -> int:
    return sum(m.role == "assistant" for m in sample.messages)


def test_docs_page_shows_the_halting_example_unchanged() -> None:
    page = (REPO / "docs" / "inspect.md").read_text(encoding="utf-8")
    start = page.index('```python\n"""Halt running Inspect samples')
    block = page[start:].split("```python\n", 1)[1].split("\n```\n", 1)[0]
    assert block + "\n" == (REPO / "docs" / "examples" / "inspect_halting.py").read_text(encoding="utf-8")


def test_halted_samples_stop_mid_trajectory_with_a_custom_limit(example_run: tuple[Path, dict[str, Any]], model: EarlyOutcomeModel) -> None:
    out, summary = example_run
    full, halted = _logs(out / "full"), _logs(out / "halted")
    assert set(full) == set(halted) == {"careful", "hasty"}
    n_halted = 0
    for task, log in halted.items():
        assert [s.name for s in log.eval.scorers] == ["includes"]  # the wrapper keeps the scorer's name
        whole = {s.id: s for s in full[task].samples}
        for sample in log.samples:
            score = sample.scores["includes"]
            assert whole[sample.id].limit is None and _calls(whole[sample.id]) == 9  # 8 tool calls and the answer
            if sample.limit is None:
                assert score.metadata is None or "predicted" not in score.metadata
                continue
            n_halted += 1
            assert sample.limit.type == "custom" and sample.limit.limit == model.thresholds_["failure" if score.value == "I" else "success"]
            assert sample.limit.reason.startswith("stopwise: outcome predicted: ")
            assert _calls(sample) < _calls(whole[sample.id])  # fewer model calls than the unhalted run
            meta = score.metadata
            assert meta["predicted"] is True and meta["step"] == _calls(sample) >= model.min_halt_step
            assert score.value == ("C" if meta["outcome"] == 1 else "I") and meta["task"] == task
            assert meta["probability"] >= meta["threshold"] and len(meta["model_digest"]) == 64
    assert n_halted == sum(summary["halted_samples"].values()) > 0
    assert summary["model_calls"]["halted"]["hasty"] < summary["model_calls"]["full"]["hasty"]


def test_live_verdicts_equal_the_trajectory_replay(example_run: tuple[Path, dict[str, Any]], model: EarlyOutcomeModel) -> None:
    """The same runs both ways: live from Inspect messages, and read back as trajectories from the full logs."""
    out, _ = example_run
    halted = {(task, s.id): s for task, log in _logs(out / "halted").items() for s in log.samples}
    runs = ingest(out / "full", system=system_template("task"), trajectories=True).trajectories
    assert len(runs) == len(halted) == 2 * N
    for run in runs:
        replay = monitor_run(model, run)
        live = halted[(run.agent, run.task)]
        assert replay.halted == (live.limit is not None)
        if replay.halted:
            meta = live.scores["includes"].metadata
            v = replay.verdicts[-1]
            assert (v.step, v.predicted, v.head, v.p_success, v.p_failure) == (
                meta["step"], meta["outcome"], meta["head"], meta["p_success"], meta["p_failure"]
            )


def test_each_model_call_updates_the_features_as_a_recompute_would(halting_example: ModuleType, model: EarlyOutcomeModel) -> None:
    """The hook's per-sample state (new messages only) gives the verdicts of a fresh monitor on the whole prefix."""
    from stopwise.inspect._halting import _SampleMonitor, steps_from_inspect, task_text_from_inspect

    for agent, rate in halting_example.AGENTS.items():
        for task in range(4):
            _, messages = halting_example.transcript(agent, task, rate)
            state = _SampleMonitor(model.monitor(task_text_from_inspect(messages), guard=False))
            calls = [i for i, m in enumerate(messages) if m.role == "assistant"]  # the model is called before each
            for i in calls:
                live = state.advance(messages[:i])
                fresh = model.monitor(task_text_from_inspect(messages), guard=False)
                verdicts = [fresh.observe(step) for step in steps_from_inspect(messages[:i])]
                assert live == (verdicts[-1] if verdicts else None) or (live is None and not verdicts)
                if live is not None and live.halted:
                    break
            assert state.skipped == 0
            # a call with another conversation (a sub-agent's, a grader's) is not monitored
            assert state.advance(messages[:1]) is None and state.skipped == 1


def test_ingest_reads_halted_samples_as_predicted_rows(example_run: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    out, summary = example_run
    result = ingest(out / "halted", system=system_template("task"), trajectories=True)
    rows = result.rows
    halted = {(task, s.id) for task, log in _logs(out / "halted").items() for s in log.samples if s.limit is not None}
    predicted = rows[rows["status"] == "predicted"]
    assert set(zip(predicted["system"], predicted["task"], strict=True)) == halted
    assert all("predicted" in f and "limit:custom" in f for f in predicted["flags"])
    assert (rows["status"] != "predicted").sum() == len(rows) - len(halted)
    assert summary["rows"] == rows.groupby(["system", "status"]).size().unstack(fill_value=0).to_dict("index")
    # a halted run's trajectory carries no label: its outcome is a prediction, not a verified result
    assert all(t.outcome is None for t in result.trajectories if (t.agent, t.task) in halted)
    # the CLI writes the same rows
    assert main(["ingest", str(out / "halted"), "--system", "{task}", "-o", str(tmp_path / "rows.csv")]) == 0
    read = stopwise.read_outcomes(tmp_path / "rows.csv").to_frame()
    assert sorted(read[read["status"] == "predicted"]["task"]) == sorted(predicted["task"])


def test_paired_manager_appends_halted_samples_as_predicted_rows(halting_example: ModuleType, model: EarlyOutcomeModel, tmp_path: Path) -> None:
    from inspect_ai import eval

    from stopwise.inspect import LiveHalting, paired_early_stopping
    from stopwise.ledger import open_ledger

    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    tested, baseline = paired_early_stopping(url, "halting", tested="careful", baseline="hasty")
    with LiveHalting(model) as halting:
        tasks = []
        for manager, (name, rate) in zip((tested, baseline), halting_example.AGENTS.items(), strict=True):
            task = halting.task(halting_example.agent_task(name, rate, N))
            task.early_stopping = manager
            tasks.append(task)
        logs = eval(tasks, max_tasks=2, log_dir=str(tmp_path / "logs"), display="none")
    n_halted = sum(s.limit is not None for log in logs for s in log.samples)
    assert n_halted > 0
    with open_ledger(url) as ledger:
        ledger.export("halting", tmp_path / "outcomes.csv", force=True)
    rows = stopwise.read_outcomes(tmp_path / "outcomes.csv").to_frame()
    predicted = rows[rows["status"] == "predicted"]
    assert len(predicted) == n_halted == len(halting.halts)
    assert all("predicted" in str(f) for f in predicted["flags"])
    # the same rows as `stopwise ingest` reads from the logs
    from_logs = ingest(tmp_path / "logs", system=system_template("task")).rows
    key = ["system", "task", "status", "outcome"]
    assert sorted(map(tuple, rows[key].values.tolist())) == sorted(map(tuple, from_logs[key].values.tolist()))


def test_halting_acts_only_on_its_tasks_and_only_while_open(halting_example: ModuleType, model: EarlyOutcomeModel, tmp_path: Path) -> None:
    from inspect_ai import eval

    from stopwise.inspect import LiveHalting

    halting = LiveHalting(model)
    marked = halting.task(halting_example.agent_task("hasty", 0.6, 4))
    other = halting_example.agent_task("careful", 0.25, 4)
    logs = {log.eval.task: log for log in eval([marked, other], log_dir=str(tmp_path / "a"), display="none")}
    assert all(s.limit is not None for s in logs["hasty"].samples)  # every toy run is predictable by step 3
    assert all(s.limit is None and _calls(s) == 9 for s in logs["careful"].samples)
    assert halting.errors == []
    halting.close()
    again = eval([halting.task(halting_example.agent_task("hasty", 0.6, 4))], log_dir=str(tmp_path / "b"), display="none")
    assert all(s.limit is None and _calls(s) == 9 for s in again[0].samples)


def test_the_guard_holds_unfamiliar_runs(halting_example: ModuleType, tmp_path: Path) -> None:
    """With the guard on, a run unlike the validated runs is never halted (here: every run of a toy model)."""
    from inspect_ai import eval

    from stopwise.early import DualHeadClassifier
    from stopwise.inspect import LiveHalting

    heads = DualHeadClassifier(min_child_samples=5, n_estimators=20)
    guarded = EarlyOutcomeModel(n_components=4, min_df=1, min_steps=5, min_halt_step=3, classifier=heads)
    guarded = guarded.fit(halting_example.training_runs())
    _, messages = halting_example.transcript("hasty", 0, 0.6)
    replay = monitor_run(guarded, stopwise.Trajectory(agent="a", task="t", task_text=halting_example.prompt(0),
                                                      steps=halting_example.steps_from_inspect(messages)))
    assert not replay.halted and replay.held > 0  # a head crosses, the guard holds
    with LiveHalting(guarded) as halting:
        logs = eval([halting.task(halting_example.agent_task("hasty", 0.6, 3))], log_dir=str(tmp_path), display="none")
    assert all(s.limit is None and _calls(s) == 9 for s in logs[0].samples) and halting.halts == []
    with LiveHalting(guarded, guard=False) as unguarded:
        logs = eval([unguarded.task(halting_example.agent_task("hasty", 0.6, 3))], log_dir=str(tmp_path / "off"), display="none")
    assert any(s.limit is not None for s in logs[0].samples)


def test_bad_arguments_are_refused(model: EarlyOutcomeModel) -> None:
    from stopwise.errors import InputError
    from stopwise.inspect import LiveHalting

    with pytest.raises(InputError, match="`model` must be"):
        LiveHalting(object())
    with pytest.raises(InputError, match="`values` must be"):
        LiveHalting(model, values=("C",))  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"`audit_fraction` must be a number in \[0, 1\]; got 1.5"):
        LiveHalting(model, audit_fraction=1.5)
    with pytest.raises(InputError, match="`audit_seed` must be an integer >= 0; got -1"):
        LiveHalting(model, audit_seed=-1)


def test_every_scorer_of_a_halted_sample_scores_the_prediction_under_its_name(
    halting_example: ModuleType, model: EarlyOutcomeModel, tmp_path: Path
) -> None:
    from inspect_ai import eval
    from inspect_ai.scorer import includes, match

    from stopwise.inspect import LiveHalting

    task = halting_example.agent_task("hasty", 0.6, 3)
    task.scorer = [includes(), match(location="any")]
    with LiveHalting(model, values=(1.0, 0.0)) as halting:
        log = eval([halting.task(task)], log_dir=str(tmp_path), display="none")[0]
    assert [s.name for s in log.eval.scorers] == ["includes", "match"]
    assert len(halting.halts) == len(log.samples) == 3  # one entry per sample, not per scorer
    for sample in log.samples:
        assert sample.limit is not None and sample.limit.type == "custom"
        values = {name: score.value for name, score in sample.scores.items()}
        assert set(values) == {"includes", "match"} and len(set(values.values())) == 1
        assert values["match"] == float(sample.scores["match"].metadata["outcome"])
    rows = ingest(tmp_path, scorer="match").rows
    assert (rows["status"] == "predicted").all() and len(rows) == 3


def test_a_react_agent_is_halted_at_the_same_step(halting_example: ModuleType, model: EarlyOutcomeModel, tmp_path: Path) -> None:
    """The hook sees every model call of any agent: Inspect's react() (system prompt, submit tool) halts alike."""
    from inspect_ai import Task, eval
    from inspect_ai.agent import react

    from stopwise.inspect import LiveHalting

    ex = halting_example
    loop = ex.agent_task("hasty", 0.6, 4)
    agent = react(tools=[ex.read_file(), ex.edit_file(), ex.run_tests(), ex.search_code()])
    reacting = Task(dataset=loop.dataset, solver=agent, scorer=loop.scorer, model=ex.mock_agent("hasty", 0.6), name="react")
    with LiveHalting(model) as halting:
        logs = {log.eval.task: log for log in eval([halting.task(loop), halting.task(reacting)], log_dir=str(tmp_path), display="none")}
    assert halting.errors == []
    steps = {task: {s.id: s.scores["includes"].metadata["step"] for s in log.samples if s.limit is not None} for task, log in logs.items()}
    assert steps["react"] == steps["hasty"] and len(steps["react"]) == 4


def test_audited_runs_are_never_halted_and_the_powered_decision_equals_decide_on_the_export(
    halting_example: ModuleType, model: EarlyOutcomeModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from inspect_ai import eval

    from stopwise.inspect import LiveHalting, paired_early_stopping
    from stopwise.ledger import open_ledger
    from stopwise.records import audit_draw, parse_policy

    rho, seed = 0.5, 3
    policy_text = (
        f'[decision]\nboundary = "betting-wor"\npredicted = "prediction-powered"\n[coverage]\nrule = "none"\n'
        f"[early]\naudit_fraction = {rho}\naudit_seed = {seed}\n"
    )
    policy = parse_policy(policy_text)
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    tested, baseline = paired_early_stopping(url, "audited", tested="careful", baseline="hasty", policy=policy)
    with LiveHalting(model, audit_fraction=policy.early.audit_fraction, audit_seed=policy.early.audit_seed) as halting:
        tasks = []
        for manager, (name, rate) in zip((tested, baseline), halting_example.AGENTS.items(), strict=True):
            task = halting.task(halting_example.agent_task(name, rate, N), system=name)
            task.early_stopping = manager
            tasks.append(task)
        logs = {log.eval.task: log for log in eval(tasks, max_tasks=2, log_dir=str(tmp_path / "logs"), display="none")}
    assert halting.errors == []
    drawn = {(name, str(s.id)) for name, log in logs.items() for s in log.samples if audit_draw(seed, name, str(s.id), s.epoch - 1) < rho}
    halted = {(name, str(s.id)) for name, log in logs.items() for s in log.samples if s.limit is not None}
    would = {(a["system"], str(a["sample"])) for a in halting.audits}
    assert halted and would and drawn  # the seed gives both kinds of rows
    assert not halted & drawn  # an audited run is never halted ...
    assert would <= drawn  # ... but the prediction it would have stored is recorded
    for name, sample_id in would:  # audited would-halt runs ran to their end (9 model calls)
        sample = next(s for s in logs[name].samples if str(s.id) == sample_id)
        assert sample.limit is None and _calls(sample) == 9
    with open_ledger(url) as ledger:
        ledger.export("audited", tmp_path / "outcomes.csv", force=True)
    rows = stopwise.read_outcomes(tmp_path / "outcomes.csv")
    frame = rows.to_frame()
    flags = dict(zip(zip(frame["system"], frame["task"], strict=True), frame["flags"].astype(str), strict=True))
    assert {k for k, f in flags.items() if "predicted" in f} == halted
    assert {k for k, f in flags.items() if "audited" in f} == drawn
    assert {k for k, f in flags.items() if "would-halt:" in f} == would
    assert all(f"would-halt:{a['would_halt']}" in flags[(a["system"], str(a["sample"]))] for a in halting.audits)
    # `stopwise ingest` reads the same flags from the logs
    from_logs = ingest(tmp_path / "logs", system=system_template("task")).rows
    logged = dict(zip(zip(from_logs["system"], from_logs["task"], strict=True), from_logs["flags"].astype(str), strict=True))
    for word in ("predicted", "audited", "would-halt:0", "would-halt:1"):
        assert {k for k, f in logged.items() if word in f.split(";")} == {k for k, f in flags.items() if word in f.split(";")}
    # the manager's decision (from the ledger, on every pair) equals `stopwise decide` on the export
    decision = tested.comparison.decision
    assert decision is not None and decision.predicted is not None
    again = stopwise.decide(rows, "careful", "hasty", policy, universe=tested.comparison.universe)
    assert decision.predicted.treatment == "prediction-powered"
    assert not any("audit draw" in w for w in decision.warnings)  # the rows' audits are the pre-registered draw
    assert (decision.predicted.predicted_rows, decision.predicted.corrected_rows) == (len(halted), len(would))
    assert decision.input_sha256 == again.input_sha256
    assert decision.digest() == again.digest()
    # and from the command line: the ledger's registered universe (Inspect's order, built in Python: decided with a
    # provenance warning); the same order as a tasks file, with no `stopwise order` stamp, is refused, with
    # order_check = "warn" too since issue 33 (the stratified process it fell back to is retired)
    import json

    universe = tested.comparison.universe
    assert universe is not None and universe.tasks is not None
    (tmp_path / "tasks.csv").write_text("task\n" + "\n".join(universe.tasks.tolist()) + "\n", encoding="utf-8")
    policy_file = tmp_path / "policy.toml"
    policy_file.write_text(policy_text + '[betting]\norder_check = "warn"\n', encoding="utf-8")
    capsys.readouterr()
    code = main(["decide", str(tmp_path / "outcomes.csv"), "--tested", "careful", "--baseline", "hasty",
                 "--policy", str(policy_file), "--tasks", str(tmp_path / "tasks.csv"), "--json"])  # fmt: skip
    assert code == 4 and "no provenance stamp" in capsys.readouterr().err
    code = main(["ledger", "decide", url, "audited", "--no-record", "--json"])
    cli = stopwise.DecisionRecord.model_validate(json.loads(capsys.readouterr().out))
    assert code == ["promote", "reject", "continue", "abstain"].index(cli.action)
    assert (cli.action, cli.r_promote, cli.r_reject, cli.delta_hat, cli.input_sha256, cli.predicted) == (
        decision.action, decision.r_promote, decision.r_reject, decision.delta_hat, decision.input_sha256, decision.predicted
    )


@pytest.mark.parametrize("coupling", ["independent", "antithetic"])
def test_active_audits_record_their_probability_in_the_log_and_the_ledger_and_decide_agrees(
    halting_example: ModuleType, model: EarlyOutcomeModel, tmp_path: Path, coupling: str
) -> None:
    """Issue 34: ``audit_rule = "active"``: each crossing run is audited with the rule's probability of its prediction
    and head probability, drawn from the seeded uniform; the probability is in the score, the log's rows and the ledger's,
    and the manager's tuned decision equals ``decide`` on the export."""
    from inspect_ai import eval

    from stopwise.compare import ActiveAudits
    from stopwise.inspect import LiveHalting, paired_early_stopping
    from stopwise.ledger import open_ledger
    from stopwise.records import audit_draw, parse_policy

    rho, seed = 0.5, 3
    policy = parse_policy(
        '[decision]\nboundary = "betting-wor"\npredicted = "prediction-powered-tuned"\n[coverage]\nrule = "none"\n'
        f'[early]\naudit_fraction = {rho}\naudit_seed = {seed}\naudit_rule = "active"\naudit_coupling = "{coupling}"\n'
    )
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    tested, baseline = paired_early_stopping(url, "active", tested="careful", baseline="hasty", policy=policy)
    with LiveHalting(
        model, audit_fraction=rho, audit_seed=seed, audit_rule="active", tested="careful", audit_coupling=coupling
    ) as halting:
        tasks = []
        for manager, (name, rate) in zip((tested, baseline), halting_example.AGENTS.items(), strict=True):
            task = halting.task(halting_example.agent_task(name, rate, N), system=name)
            task.early_stopping = manager
            tasks.append(task)
        logs = {log.eval.task: log for log in eval(tasks, max_tasks=2, log_dir=str(tmp_path / "logs"), display="none")}
    assert halting.errors == []
    rule = ActiveAudits(rho, coupling=coupling)
    crossed = {}  # (system, sample) -> (pi, drawn) of every run a head crossed on, from the scores
    for name, log in logs.items():
        for s in log.samples:
            meta = s.scores["includes"].metadata or {}
            if "audit_probability" in meta:
                p_head = meta["probability"]
                predicted = meta.get("would_halt", meta.get("outcome"))
                expected = float(rule.probability([(name == "careful") == (predicted == 1)], [p_head])[0])
                assert meta["audit_probability"] == pytest.approx(expected, abs=1e-12)
                draw = audit_draw(seed, name, str(s.id), s.epoch - 1, tested="careful", coupling=coupling)
                crossed[(name, str(s.id))] = (expected, draw < expected)
    halted = {(name, str(s.id)) for name, log in logs.items() for s in log.samples if s.limit is not None}
    assert halted and any(d for _, d in crossed.values())  # the seed gives both kinds
    assert halted == {k for k, (_, d) in crossed.items() if not d}  # halted iff a crossing run was not drawn
    with open_ledger(url) as ledger:
        ledger.export("active", tmp_path / "outcomes.csv", force=True)
    rows = stopwise.read_outcomes(tmp_path / "outcomes.csv")
    frame = rows.to_frame()
    flags = dict(zip(zip(frame["system"], frame["task"], strict=True), frame["flags"].astype(str), strict=True))
    for key, (pi, _) in crossed.items():
        assert f"audit-p:{pi!r}" in flags[key].split(";")
    from_logs = ingest(tmp_path / "logs", system=system_template("task")).rows
    logged = dict(
        zip(zip(from_logs["system"], from_logs["task"], strict=True), from_logs["flags"].astype(str), strict=True)
    )

    def probability_flags(table: dict[Any, str]) -> dict[Any, list[str]]:
        return {
            k: [t for t in v.split(";") if t.startswith("audit-p:") or t in ("predicted", "audited")]
            for k, v in table.items()
            if "audit-p" in v
        }

    assert probability_flags(logged) == probability_flags(flags)  # `stopwise ingest` reads the same probabilities
    decision = tested.comparison.decision
    assert decision is not None and decision.predicted is not None
    assert decision.predicted.treatment == "prediction-powered-tuned" and "active audits" in decision.predicted.note
    assert not any("audit draw" in w for w in decision.warnings)
    again = stopwise.decide(rows, "careful", "hasty", policy, universe=tested.comparison.universe)
    assert decision.digest() == again.digest()
