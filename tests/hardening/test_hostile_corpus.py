"""The hostile-input corpus as a test (issue 37, item 6): a seeded generator of hostile inputs per command family.

Each family has a valid base input, which the generator breaks with seeded mutations: cut short at a random
byte, random bytes overwritten, control and bidirectional characters and spreadsheet formulas in names, a
repeated JSON key or CSV column, numbers out of range (negative, NaN, 1e308), a JSON document nested past the
limit, and the outputs pointed at a FIFO or at each other. Every case runs in one child process (imports paid
once) and must end without an internal error (exit 5) or a traceback, leave every input file as it was, and the
child's peak resident memory must stay under 1 GB. The default lane runs a small slice (:data:`SLICE` cases per
family); ``-m slow`` runs :data:`FULL` per family. The families: decide, order, ingest (SWE-bench, Inspect, tau2,
Harbor), report, ledger (append, export), watch, early, finality, next, replay and leaderboard.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

import stopwise

SLICE, FULL = 2, 24
ONE_GB_KB = 1_000_000  # ru_maxrss is in KiB on Linux
NAMES = ["plain", "=HYPERLINK(\"x\")", "+1", "-2", "@a", "evil\x1b[2Jname", "rtl\u202eeman", "nul\x00x", "bell\x07", "'=q", "\ufefftask", "a" * 300]

Family = Callable[[random.Random, Path], list[str]]


def _name(rng: random.Random) -> str:
    return rng.choice(NAMES)


def _file_name(rng: random.Random) -> str:
    """A hostile name that a file system accepts (no NUL, no slash)."""
    return _name(rng).replace("\x00", "").replace("/", "_")[:40] or "x"


def _number(rng: random.Random) -> str:
    return rng.choice(["1", "0", "0.5", "-1", "2", "NaN", "inf", "1e308", "", "yes", "\x1b"])


def _mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    """Cut short, overwrite bytes, or repeat a slice: the damage a copy, a crash or a hand edit leaves."""
    kind = rng.randrange(4)
    if kind == 0 or not data:
        return data[: rng.randrange(len(data) + 1)]
    data = bytearray(data)
    if kind == 1:
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    if kind == 2:
        at = rng.randrange(len(data))
        return bytes(data[:at] + data[at : at + rng.randint(1, 200)] * rng.randint(2, 5) + data[at:])
    return bytes(data)  # unchanged: the family's own hostile content is the case


def _write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content)
    return path


def _rows_csv(rng: random.Random, n: int = 8) -> str:
    header = rng.choice(["system,task,outcome", "system,task,outcome,group", "system,task,outcome,outcome", "system,task", "\ufeffsystem,task,outcome"])
    columns = header.lstrip("\ufeff").split(",")
    lines = []
    for i in range(n):
        for system in ("A", "B"):
            cells = {"system": system if rng.random() < 0.9 else _name(rng), "task": f"t{i}" if rng.random() < 0.85 else _name(rng),
                     "outcome": str(int(rng.random() < 0.5)) if rng.random() < 0.85 else _number(rng), "group": rng.choice(["g1", "g2", ""])}
            lines.append(",".join(json.dumps(cells[c]) if "," in cells[c] or '"' in cells[c] else cells[c] for c in columns))
    return header + "\n" + "\n".join(lines) + "\n"


def decide(rng: random.Random, folder: Path) -> list[str]:
    rows = _write(folder / rng.choice(["rows.csv", "rows.jsonl", "rows.csv.gz"]), b"")
    text = _rows_csv(rng)
    if rows.suffix == ".jsonl":
        header, *lines = text.splitlines()
        text = "\n".join(json.dumps(dict(zip(header.lstrip("\ufeff").split(","), line.split(","), strict=False))) for line in lines)
    data = _mutate_bytes(rng, text.encode("utf-8", "surrogatepass"))
    if rows.name.endswith(".gz"):
        import gzip

        data = gzip.compress(data)
    _write(rows, data)
    extra = rng.choice([[], ["--n-tasks", str(rng.choice([1, 8, 10_000_000, 10_000_001, 0]))],
                        ["--n-tasks", "10000000", "--group-size", "g1=9999990", "--group-size", "g2=10"],
                        ["--n-tasks", "8", "--group-size", "g1=-1", "--group-size", "g2=9"]])
    return ["decide", str(rows), "-t", "A", "-b", _name(rng) if rng.random() < 0.2 else "B", *extra]


def order(rng: random.Random, folder: Path) -> list[str]:
    n = rng.choice([3, 30, 400])
    groups = rng.choice(["same", "own", "few"])
    lines = ["task,group" + rng.choice(["", ",covered", ",position"])]
    for i in range(n):
        task = f"t{i}" if rng.random() < 0.9 else rng.choice([f"t{max(i - 1, 0)}", _name(rng), ""])
        group = {"same": "g", "own": f"g{i}", "few": f"g{i % 3}"}[groups]
        extra = "" if lines[0].count(",") == 1 else "," + (rng.choice(["True", "maybe", "0"]) if "covered" in lines[0] else str(rng.choice([i + 1, i, -1, n + 5])))
        lines.append(f"{task},{group}{extra}")
    tasks = _write(folder / "tasks.csv", _mutate_bytes(rng, ("\n".join(lines) + "\n").encode()))
    out = folder / "order.csv"
    if rng.random() < 0.3:
        os.mkfifo(out)
    return ["order", str(tasks), "-o", str(out), *(["--force"] if rng.random() < 0.5 else [])]


def _swebench(rng: random.Random, folder: Path) -> Path:
    ids = [f"django__django-{i}" if rng.random() < 0.9 else _name(rng) for i in range(6)]
    doc = {"resolved_ids": ids[:3], "unresolved_ids": ids[3:], "resolved_instances": rng.choice([3, -1, "3", None])}
    text = json.dumps(doc)
    if rng.random() < 0.3:
        text = text[:-1] + ', "resolved_ids": []}'
    if rng.random() < 0.2:
        text = "[" * 200 + "]" * 200
    return _write(folder / f"{_file_name(rng)}.run1.json", _mutate_bytes(rng, text.encode()))


def _inspect(rng: random.Random, folder: Path) -> Path:
    header = {"version": 2, "status": rng.choice(["success", "error", "started"]),
              "eval": {"task": "t", "model": _name(rng), "run_id": "r", "eval_id": "e"}, "results": {"scores": [{"name": "match"}]}}
    path = folder / "log.eval"
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(header))
        for i in range(4):
            sample = {"id": _name(rng) if rng.random() < 0.2 else f"q{i}", "epoch": rng.choice([1, 1, 0, -1]),
                      "scores": {"match": {"value": rng.choice(["C", "I", 7, None, "maybe"])}},
                      "total_time": rng.choice([1.5, -3.0, "x", None])}
            text = json.dumps(sample)
            archive.writestr(f"samples/q{i}_epoch_1.json", text if rng.random() < 0.8 else text[: len(text) // 2])
    if rng.random() < 0.3:
        path.write_bytes(_mutate_bytes(rng, path.read_bytes()))
    return path


def _tau2(rng: random.Random, folder: Path) -> Path:
    sims = [{"id": f"s{i}", "task_id": _name(rng) if rng.random() < 0.2 else str(i), "trial": rng.choice([0, 1, -1]),
             "termination_reason": rng.choice(["user_stop", "infrastructure_error", "x"]),
             "reward_info": {"reward": rng.choice([1.0, 0.0, 2.0, None])}} for i in range(4)]
    doc = {"timestamp": "t", "info": {"agent_info": {"llm": _name(rng)}, "environment_info": {"domain_name": "airline"}}, "tasks": [],
           "simulations": rng.choice([sims, [], "none"])}
    return _write(folder / rng.choice(["results.json", "other.json"]), _mutate_bytes(rng, json.dumps(doc).encode()))


def _harbor(rng: random.Random, folder: Path) -> Path:
    agent = _name(rng)
    trial = {"task_name": _name(rng), "trial_name": "trial-1", "agent_info": {"name": agent, "model_info": {"name": _name(rng)}},
             "config": {"agent": {"kwargs": {}}}, "verifier_result": {"rewards": {"reward": rng.choice([1.0, 0.0, -1, None])}},
             "started_at": "2025-09-01T10:00:00", "finished_at": rng.choice(["2025-09-01T10:05:00", "1999-01-01T00:00:00", "x"])}
    if rng.random() < 0.4:  # a legacy Terminal-Bench run stored as a file in its submission folder
        run = {"results": [{"task_id": _name(rng), "trial_name": "x", "is_resolved": rng.choice([True, None, "yes"])}], "n_resolved": 1}
        return _write(folder / "bench" / _file_name(rng) / "2025-05-01__08-00-00_results.json", json.dumps(run))
    return _write(folder / "job" / "trial-1" / "result.json", _mutate_bytes(rng, json.dumps(trial).encode()))


def ingest(rng: random.Random, folder: Path) -> list[str]:
    source = rng.choice([_swebench, _inspect, _tau2, _harbor])(rng, folder)
    out = folder / rng.choice(["rows.csv", "rows.jsonl", "rows.parquet"])
    extra: list[str] = []
    if rng.random() < 0.3:
        extra = ["--trajectories", str(out if rng.random() < 0.5 else folder / "nodir" / "t.jsonl")]
    return ["ingest", str(source), "-o", rng.choice([str(out), "-"]) if not extra else str(out), *extra]


def report(rng: random.Random, folder: Path) -> list[str]:
    record = {"tested": _name(rng), "baseline": "B", "action": rng.choice(["promote", "maybe"]), "delta_hat": _number(rng)}
    text = rng.choice([json.dumps(record), "[" * 5000 + "]" * 5000, json.dumps(record) + "\n" + json.dumps(record)[:20], '{"a": 1, "a": 2}'])
    source = _write(folder / "records.json", _mutate_bytes(rng, text.encode()))
    return ["report", str(source), "-o", str(folder / "report.html")]


def ledger(rng: random.Random, folder: Path) -> list[str]:
    rows = _write(folder / "rows.csv", _rows_csv(rng))
    db = folder / "db" / "l.db"
    db.parent.mkdir()
    sink = folder / "x.jsonl"
    if rng.random() < 0.5:
        return ["ledger", "append", str(db), "ev", str(rows)]  # db made by the driver before the case
    decisions = rng.choice([str(sink), str(folder / "nodir" / "d.jsonl"), str(folder / "d.jsonl")])
    return ["ledger", "export", str(db), "ev", "-o", str(sink), "--decisions", decisions, *(["--force"] if rng.random() < 0.5 else [])]


def watch(rng: random.Random, folder: Path) -> list[str]:
    logs = folder / "logs"
    for model in ("m/A", "m/B"):
        _inspect(rng, logs / model.replace("/", "_"))
    return ["watch", str(logs), "-t", "m/A", "-b", "m/B", "--n-tasks", "4", "--once"]


def early(rng: random.Random, folder: Path) -> list[str]:
    steps = [{"action": _name(rng), "observation": _name(rng), "tokens_in": rng.choice([1, -1, "x"])}]
    run = {"agent": _name(rng), "task": "t", "attempt": 0, "outcome": rng.choice([1, 0, 3, None]), "steps": steps}
    text = "\n".join(json.dumps(run) for _ in range(3))
    trajectories = _write(folder / "runs.jsonl", _mutate_bytes(rng, text.encode()))
    return ["early", "train", str(trajectories), "--min-steps", "1", "-o", str(folder / "model"), "-q"]


def finality(rng: random.Random, folder: Path) -> list[str]:
    argument = rng.choice([
        'version = 1\nname = "x"\n[[effects]]\nname = "' + _name(rng).replace('"', "") + '"\n',
        "a = [" * 200 + "]" * 200,
        "version = 1\nversion = 2\n",
        "\x00\x01garbage",
    ])
    source = _write(folder / "argument.toml", _mutate_bytes(rng, argument.encode("utf-8", "surrogatepass")))
    runs = _write(folder / "runs.csv", "run,system,task,outcome\n1," + _name(rng).replace(",", "") + ",t," + _number(rng) + "\n")
    return ["finality", "check", str(source), "--runs", str(runs), "--rows", str(folder / "rows.csv")]


def _family_rows(rng: random.Random, folder: Path) -> Path:
    """Outcome rows for the families that read them: the hostile names and numbers always, byte damage half the time."""
    text = _rows_csv(rng).encode("utf-8", "surrogatepass")
    return _write(folder / "rows.csv", _mutate_bytes(rng, text) if rng.random() < 0.5 else text)


def next_tasks(rng: random.Random, folder: Path) -> list[str]:
    rows = _family_rows(rng, folder)
    tasks = _write(folder / "tasks.csv", "task,group\n" + "".join(f"{f't{i}' if rng.random() < 0.9 else _name(rng).replace(',', '')},g{i % 2}\n" for i in range(10)))
    return ["next", str(rows), "-t", "A", "-b", "B", "--tasks", str(tasks), *(["--json"] if rng.random() < 0.3 else [])]


def replay(rng: random.Random, folder: Path) -> list[str]:
    rows = _family_rows(rng, folder)
    out = folder / "replay"
    if rng.random() < 0.2:
        os.mkfifo(out)
    return ["replay", str(rows), "-o", str(out), "--orders", rng.choice(["3", "0", "-2", "100001"]),
            *(["--thresholds", rng.choice(["0,0.05", "2", "nan"])] if rng.random() < 0.4 else [])]


def leaderboard(rng: random.Random, folder: Path) -> list[str]:
    rows = _family_rows(rng, folder)
    return ["leaderboard", str(rows), *rng.choice([["--complete"], ["--n-tasks", rng.choice(["8", "3", "0"])]]),
            *(["--kind", rng.choice(["all-pairs", "best", "worst"])] if rng.random() < 0.3 else [])]


FAMILIES: dict[str, Family] = {
    "decide": decide, "order": order, "ingest": ingest, "report": report, "ledger": ledger,
    "watch": watch, "early": early, "finality": finality, "next": next_tasks, "replay": replay,
    "leaderboard": leaderboard,
}


DRIVER = """
import contextlib, hashlib, io, json, os, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # a runaway fails fast instead of swapping the machine
from stopwise.cli.main import main

def digest(paths):
    out = {}
    for top in paths:
        for root, _, names in os.walk(top) if os.path.isdir(top) else [(os.path.dirname(top), [], [os.path.basename(top)])]:
            for name in names:
                path = os.path.join(root, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    with open(path, 'rb') as handle:
                        out[path] = hashlib.sha256(handle.read()).hexdigest()
    return out

results = []
for case in json.loads(open(sys.argv[1]).read()):
    for setup in case["setup"]:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(setup)
    before = digest(case["inputs"])
    out, err = (io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace") for _ in range(2))  # with .buffer: -o - writes bytes
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(case["argv"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 4
        except BaseException as exc:  # anything escaping main is a bug of the command line
            code = 99
            print(repr(exc), file=err)
    printed = {}
    for name, stream in (("out", out), ("err", err)):
        stream.flush()
        printed[name] = stream.buffer.getvalue().decode("utf-8", "replace")
    results.append({"code": code, "traceback": "Traceback (most recent call last)" in printed["out"] + printed["err"],
                    "internal": "internal error" in printed["err"], "changed": digest(case["inputs"]) != before,
                    "err": printed["err"][-400:]})
print(json.dumps({"results": results, "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def build_cases(per_family: int, seed: int, folder: Path) -> list[dict[str, object]]:
    """``per_family`` seeded cases of every family, each in a folder of its own under ``folder``."""
    cases = []
    for family, make in FAMILIES.items():
        rng = random.Random(f"{seed}:{family}")
        for i in range(per_family):
            where = folder / f"{family}-{i}"
            where.mkdir(parents=True)
            argv = make(rng, where)
            inputs = sorted(str(p) for p in where.rglob("*") if p.is_file() and not p.name.startswith(("order.csv", "x.jsonl", "replay")))
            setup: list[list[str]] = []
            if family == "ledger":
                db = where / "db" / "l.db"
                setup = [["ledger", "init", str(db), "ev", "-t", "A", "-b", "B", "--n-tasks", "8"],
                         ["ledger", "append", str(db), "ev", str(where / "rows.csv")], ["ledger", "decide", str(db), "ev"]]
                inputs = [str(where / "rows.csv")]  # the ledger itself is the command's to change
            cases.append({"family": family, "argv": argv, "inputs": inputs, "setup": setup})
    return cases


def run_cases(cases: list[dict[str, object]], folder: Path) -> tuple[list[dict[str, object]], int]:
    """Every case in one child process: each result, and the child's peak resident memory in KiB."""
    (folder / "cases.json").write_text(json.dumps(cases))
    inherited = os.environ.get("PYTHONPATH")
    source = str(Path(stopwise.__file__).parents[1])  # the stopwise these tests import, not an installed copy
    env = {**os.environ, "PYTHONPATH": source + (os.pathsep + inherited if inherited else ""), "COLUMNS": "200"}
    env.pop("STOPWISE_DEBUG", None)
    done = subprocess.run([sys.executable, "-c", DRIVER, str(folder / "cases.json")], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=1800, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    return summary["results"], summary["maxrss_kb"]


def check(cases: list[dict[str, object]], results: list[dict[str, object]], maxrss_kb: int) -> None:
    bad = [
        (case["family"], case["argv"], result)
        for case, result in zip(cases, results, strict=True)
        if result["code"] not in (0, 1, 2, 3, 4) or result["traceback"] or result["internal"] or result["changed"]
    ]
    assert not bad, json.dumps(bad, indent=1, default=str)[:6000]
    assert maxrss_kb < ONE_GB_KB, maxrss_kb


def test_the_generator_is_seeded(tmp_path: Path) -> None:
    first, second = build_cases(1, 7, tmp_path / "a"), build_cases(1, 7, tmp_path / "b")
    strip = lambda cases, root: [json.dumps(c).replace(str(root), "") for c in cases]  # noqa: E731
    assert strip(first, tmp_path / "a") == strip(second, tmp_path / "b")
    contents = lambda root: {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}  # noqa: E731
    assert contents(tmp_path / "a") == contents(tmp_path / "b")


def test_a_slice_of_the_corpus(tmp_path: Path) -> None:
    cases = build_cases(SLICE, 0, tmp_path)
    results, maxrss_kb = run_cases(cases, tmp_path)
    check(cases, results, maxrss_kb)
    assert {r["code"] for r in results} & {4}, "the corpus is hostile: some case must be refused"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_the_whole_corpus(seed: int, tmp_path: Path) -> None:
    cases = build_cases(FULL, seed, tmp_path)
    results, maxrss_kb = run_cases(cases, tmp_path)
    check(cases, results, maxrss_kb)
