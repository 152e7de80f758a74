"""Bytes of every kind of report page, and of a ``replay -o`` folder, on this code and on the baseline (issue 31).

Each page is made through the command line from the same small synthetic inputs (a decision record, the demo,
a ledger, the family page of ``leaderboard --html``, a budget-grid and a live-look replay folder, a finality check,
an early evaluation), in this process for the working tree and in a subprocess for the baseline commit's ``src`` (:mod:`benchmarks._baseline`).
Pages inline plotly.js's basic bundle (about 1.2 MB), so the page weight is mostly that script; the replay
folders show what the replay itself writes (before 0.2: a matplotlib PNG; from 0.2: no figure, its charts
are on the replay's report page).

Every page is printed beside the limit of issue 35 (1.5 MB = 1,500,000 bytes); the script exits 1 when a page
of this checkout is over it. ``--live`` adds two pages of the shared records: the family page of swebench_lite
(``leaderboard --complete --html``, 42 systems) and the real live-look page of all five records (3,966 directed
pairs, 1,722 of them on swebench_lite; a look after every task, thresholds 0 / 5 / 10 pp; ``--live-orders`` task
orders per pair: the page's charts are on a 1 % grid and its per-pair tables capped at 100 rows, so its weight
does not grow with the orders).

    python -m benchmarks.report_weight [--quick] [--live [--live-orders 20]]
        (--quick: no early evaluation, the one page that trains; --live: needs ../shared/data, ~25 s per side)
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.support.report_inputs import looked_ledger, synthetic_runs

from benchmarks._baseline import BASELINE_REF, measure_side_by_side, strip_measure_flag
from benchmarks._data import records_path

PAGE_LIMIT = 1_500_000
"""Bytes a report page may weigh (issue 35: 1.5 MB)."""
LIVE_RECORDS = ["swebench_verified", "swebench_verified_bashonly", "swebench_lite", "terminal_bench_1_5", "terminal_bench_2"]
"""The shared records of the all-records live-look page (``--live``), as ``experiments/live_report.py`` replays them."""


def _cli(*args: str) -> str:
    """``stopwise args`` in this process; its standard output (exit code 0-3: success or a decision)."""
    from stopwise.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    if code not in (0, 1, 2, 3):
        raise SystemExit(f"stopwise {' '.join(args)} exited {code}: {err.getvalue()[-2000:]}")
    return out.getvalue()


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _live_page(tmp: Path, orders: int) -> Path:
    """The live-look report page of every shared record: ``tmp/live (all records).html``."""
    sources = [str(records_path(name)) for name in LIVE_RECORDS]
    _cli("replay", *sources, "--looks", "every", "--thresholds", "0,0.05,0.1", "-k", str(orders), "-o", str(tmp / "live-all"))
    page = tmp / "live (all records).html"
    _cli("report", str(tmp / "live-all"), "-o", str(page))
    return page


def measure(args: Any) -> dict[str, int]:
    """Bytes of each page and replay folder, made in a temporary folder."""
    from stopwise.records import synthetic_benchmark

    sizes: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="stopwise-weight-") as name:
        tmp = Path(name)
        rows = synthetic_benchmark(200, 4, rng=0)
        rows.to_csv(tmp / "outcomes.csv", index=False)
        names = sorted(rows["system"].unique())
        (tmp / "decision.json").write_text(_cli("decide", str(tmp / "outcomes.csv"), "-t", names[-1], "-b", names[0], "--json"))
        _cli("report", str(tmp / "decision.json"), "-o", str(tmp / "decision.html"))
        _cli("demo", "--seed", "0", "--n-tasks", "400", "--out", str(tmp / "demo"))
        _cli("report", str(tmp / "demo" / "decisions.jsonl"), "-o", str(tmp / "demo.html"))
        _cli("replay", str(tmp / "outcomes.csv"), "-k", "20", "--thresholds", "0", "-o", str(tmp / "grid"))
        _cli("report", str(tmp / "grid"), "-o", str(tmp / "replay.html"))
        _cli("replay", str(tmp / "outcomes.csv"), "-k", "5", "--looks", "every", "--thresholds", "0", "-o", str(tmp / "live"))
        _cli("report", str(tmp / "live"), "-o", str(tmp / "live.html"))
        (tmp / "runs.csv").write_text(
            "run,system,task,attempt,outcome,environment,group\n"
            + "".join(f"r{i},sys-{i % 2},task-{i // 2},0,{i % 3 == 0:d},env-{i // 4},g\n" for i in range(12))
        )
        example = Path(str(__import__("stopwise.finality", fromlist=["x"]).__file__)).parent / "examples" / "shared-state.toml"
        (tmp / "checks.json").write_text(_cli("finality", "check", str(example), "--runs", str(tmp / "runs.csv"), "--json"))
        _cli("report", str(tmp / "checks.json"), "-o", str(tmp / "finality.html"))
        looked_ledger(tmp / "ledger.db")
        _cli("report", str(tmp / "ledger.db"), "-o", str(tmp / "ledger.html"))
        pages = ["decision", "demo", "ledger", "replay", "live", "finality"]
        with contextlib.suppress(SystemExit):  # the family page (``leaderboard --html``, from 0.2; not in the baseline)
            _cli("leaderboard", str(tmp / "outcomes.csv"), "--complete", "--html", str(tmp / "family.html"))
        pages += ["family"] if (tmp / "family.html").exists() else []
        if not args.quick:
            synthetic_runs(tmp / "runs.jsonl.gz")
            _cli("early", "evaluate", str(tmp / "runs.jsonl.gz"), "-o", str(tmp / "evaluation"), "--variant", "tfidf-lr", "--min-steps", "5")
            _cli("report", str(tmp / "evaluation"), "-o", str(tmp / "early.html"))
            pages.append("early")
        if args.live:
            _live_page(tmp, args.live_orders)
            pages.append("live (all records)")
            with contextlib.suppress(SystemExit):  # from 0.2 (not in the baseline)
                lite = records_path("swebench_lite")
                _cli("leaderboard", str(lite), "--complete", "--html", str(tmp / "family (swebench_lite).html"))
            pages += ["family (swebench_lite)"] if (tmp / "family (swebench_lite).html").exists() else []
        for page in pages:
            sizes[f"{page} page"] = (tmp / f"{page}.html").stat().st_size
        for folder in ("grid", "live"):
            sizes[f"replay -o folder ({folder})"] = _folder_bytes(tmp / folder)
            figures = [p for p in (tmp / folder).iterdir() if p.suffix in (".png", ".svg")]
            sizes[f"  of which figures ({folder})"] = sum(p.stat().st_size for p in figures)
    return sizes


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="leave out the early evaluation page (it trains a model)")
    parser.add_argument("--live", action="store_true", help="add the live-look page of all five shared records (needs ../shared/data)")
    parser.add_argument("--live-orders", type=int, default=20, help="task orders per pair of the --live replay (default 20)")
    args = parser.parse_args(strip_measure_flag(argv))
    current, baseline = measure_side_by_side("benchmarks.report_weight", measure, args, argv)
    print(f"report page weight in bytes, this checkout and baseline {BASELINE_REF} (same inputs, one run); page limit {PAGE_LIMIT:,}")
    over = []
    for name in current:
        now, then = current[name], baseline.get(name)
        ratio = f"{now / then:5.3f}" if then else "  —  "
        limit = ""
        if name.endswith(" page"):
            limit = f"   limit {PAGE_LIMIT:,} ({100 * now / PAGE_LIMIT:5.1f} %) {'OVER' if now >= PAGE_LIMIT else 'under'}"
            over += [name] if now >= PAGE_LIMIT else []
        was = f"{then:>10,}" if then is not None else f"{'—':>10}"
        print(f"  {name:<32} {now:>10,}   baseline {was}   ratio {ratio}{limit}")
    print(f"pages over the limit: {len(over)}" + (f" ({', '.join(over)})" if over else ""))
    if over:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
