"""An Inspect log written by the real ``inspect_ai`` (mock model, no network) is ingested right.

``inspect_ai`` is an optional test dependency: missing, this test fails under ``CI=true`` and is
skipped elsewhere. The expected values come from inspect_ai's own log reader, so the check
compares our direct reading of the files with the package's reading of them.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from stopwise.errors import FileFormatError
from stopwise.ingest import detect_format, read_inspect

EXPECTED = {"add-1-2": 1.0, "7": 0.0, "add-2-2": 0.0}
"""Per sample: the mock model answers every "add" question with 3, so only 1 + 2 is right."""


@pytest.fixture(scope="module")
def inspect_ai() -> ModuleType:
    try:
        return importlib.import_module("inspect_ai")
    except ImportError as exc:
        message = f"inspect_ai is not installed ({exc}); install the test extras: pip install -e '.[test]'"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def _run(inspect_ai: ModuleType, log_dir: Path, log_format: str) -> Any:
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage
    from inspect_ai.scorer import includes, match
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    @tool
    def add() -> Any:
        async def execute(x: int, y: int) -> int:
            """Add two numbers.

            Args:
              x: First number.
              y: Second number.
            """
            return x + y

        return execute

    def outputs(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        last = input[-1]
        if isinstance(last, ChatMessageTool):
            out = ModelOutput.from_content(model="mockllm/model", content=f"The answer is {last.text}")
        elif "add" in last.text:
            out = ModelOutput.for_tool_call(model="mockllm/model", tool_name="add", tool_arguments={"x": 1, "y": 2})
        else:
            out = ModelOutput.from_content(model="mockllm/model", content="I do not know")
        # usage given explicitly: the mock model would otherwise count tokens with a downloaded tokenizer
        out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15, total_cost=0.001)
        return out

    task = inspect_ai.Task(
        name="tiny_arith",
        dataset=[
            Sample(id="add-1-2", input="please add 1 and 2", target="3"),
            Sample(id=7, input="what is the capital of France?", target="Paris"),
            Sample(id="add-2-2", input="please add 2 and 2", target="4"),
        ],
        solver=[use_tools(add()), generate()],
        scorer=[includes(), match()],
        epochs=2,
    )
    logs = inspect_ai.eval(
        task,
        model="mockllm/model",
        model_args={"custom_outputs": outputs},
        log_dir=str(log_dir),
        log_format=log_format,
        display="none",
    )
    assert logs[0].status == "success", logs[0].error
    return logs[0]


@pytest.fixture(scope="module")
def logs(inspect_ai: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Any]]:
    """One real log per format, written once for the module: (directory, EvalLog)."""
    out = {}
    for log_format in ("eval", "json"):
        directory = tmp_path_factory.mktemp(f"inspect_{log_format}")
        out[log_format] = (directory, _run(inspect_ai, directory, log_format))
    return out


@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_real_inspect_log_is_ingested(logs: dict[str, tuple[Path, Any]], log_format: str) -> None:
    from inspect_ai.log import read_eval_log

    tmp_path, log = logs[log_format]
    files = list(tmp_path.glob(f"*.{log_format}"))
    assert len(files) == 1
    assert detect_format(files[0]) == "inspect"

    result = read_inspect(tmp_path, trajectories=True)
    rows = result.rows
    assert set(rows["system"]) == {"mockllm/model"}
    assert len(rows) == 6 and set(rows["status"]) == {"final"}
    cells = {(t, int(a)): r for t, a, r in zip(rows["task"], rows["attempt"], rows.to_dict("records"), strict=True)}
    assert sorted(cells) == sorted((task, epoch) for task in EXPECTED for epoch in (0, 1))
    for (task, _), row in cells.items():
        assert row["outcome"] == EXPECTED[task]
    assert result.notes[0].endswith("outcome from scorer 'includes' (of includes, match)")

    # timings and cost against inspect_ai's own reading of the same log
    official = read_eval_log(log.location)
    assert official.samples is not None and len(official.samples) == 6
    for sample in official.samples:
        row = cells[(str(sample.id), sample.epoch - 1)]
        assert row["elapsed_s"] == pytest.approx(sample.total_time, abs=1e-9)
        assert row["outcome"] == {"C": 1.0, "I": 0.0}[sample.scores["includes"].value]
        cost = sum(u.total_cost or 0.0 for u in sample.model_usage.values())
        assert row["cost_usd"] == pytest.approx(cost)
    assert cells[("add-1-2", 0)]["cost_usd"] == pytest.approx(0.002)  # two model calls
    assert cells[("7", 0)]["cost_usd"] == pytest.approx(0.001)  # one model call

    working = {
        (t, int(a)): e
        for t, a, e in zip(*(read_inspect(tmp_path, elapsed="agent").rows[c] for c in ("task", "attempt", "elapsed_s")), strict=True)
    }
    for sample in official.samples:
        assert working[(str(sample.id), sample.epoch - 1)] == pytest.approx(sample.working_time, abs=1e-9)

    # messages -> steps: the tool call and its observation
    trajectory = next(t for t in result.trajectories if (t.task, t.attempt) == ("add-1-2", 1))
    assert trajectory.task_text == "please add 1 and 2"
    assert [s.tool for s in trajectory.steps] == ["add", None]
    assert trajectory.steps[0].action.endswith('add({"x": 1, "y": 2})')
    assert trajectory.steps[0].observation == "3"
    assert trajectory.steps[1].action == "The answer is 3"


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="Python 3.14+ reads Zstandard zip members itself")
def test_zstandard_archive_without_the_package(logs: dict[str, tuple[Path, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    tmp_path = logs["eval"][0]
    monkeypatch.setitem(sys.modules, "zstandard", None)  # as if the package were not installed
    with pytest.raises(FileFormatError, match=r"needs Python 3\.14\+ or the `zstandard` package"):
        read_inspect(tmp_path)


def test_own_zstandard_reader_matches_the_archive(logs: dict[str, tuple[Path, Any]]) -> None:
    """inspect_ai patches zipfile for Zstandard in this process; our fallback must decode the same bytes."""
    import zipfile

    from stopwise._logs._zip import zstd_member

    path = next(logs["eval"][0].glob("*.eval"))
    with zipfile.ZipFile(path) as archive:
        infos = [i for i in archive.infolist() if i.filename.endswith(".json")]
        assert {i.compress_type for i in infos} == {93}
        for info in infos:
            assert zstd_member(path, info) == archive.read(info)
