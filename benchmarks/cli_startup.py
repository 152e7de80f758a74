"""Start-up time of the command line: ``stopwise --help`` and one ``stopwise decide`` on swebench_lite.

Median wall time of each command for this checkout and for a baseline commit (default: the commit
before the CLI's imports were made lazy), run side by side and interleaved so both see the same
machine load. The baseline is checked out with ``git worktree add --detach`` into a temporary folder
and removed afterwards; both run on this interpreter (same installed dependencies).

Target (issue 11): under 1.0 s for both commands. The last lines name the heavy libraries each command
of this checkout still loads (what is left to make lazy).

    python -m benchmarks.cli_startup [--repeats 7] [--baseline REF]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "ef3532f"
"""main before issue 11: ``stopwise/__init__`` and every command module imported the whole library eagerly."""
DATA = Path(os.environ.get("STOPWISE_SHARED_DATA", ROOT.parent / "shared" / "data"))
SWEBENCH_LITE = DATA / "records" / "swebench_lite" / "outcomes.csv"
TESTED, BASE = "20240402_sweagent_gpt4", "20240402_rag_gpt4"


def _time(src: Path, args: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    code = "from stopwise.cli.main import run; run()"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1, 2, 3):
        raise SystemExit(f"stopwise {' '.join(args)} failed with exit {done.returncode} ({src}):\n{done.stderr.decode()[-2000:]}")
    return elapsed, cpu


HEAVY = ("pandas", "pyarrow", "scipy", "sklearn", "lightgbm", "matplotlib", "plotly", "sqlalchemy", "pydantic", "numpy")


def _loaded(src: Path, args: list[str]) -> list[str]:
    """The heavy libraries one run of the command imports."""
    code = (
        "import sys\nfrom stopwise.cli.main import main\nmain(sys.argv[1:])\n"
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)"
    )
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    return done.stderr.strip().splitlines()[-1].split() if done.stderr.strip() else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7, help="runs of each command per checkout (median reported)")
    parser.add_argument("--baseline", default=BASELINE, help="git revision to compare with (default: %(default)s)")
    options = parser.parse_args()
    if not SWEBENCH_LITE.exists():
        raise SystemExit(f"shared data missing: {SWEBENCH_LITE}")
    commands = {
        "stopwise --help": ["--help"],
        "stopwise decide (swebench_lite)": ["decide", str(SWEBENCH_LITE), "-t", TESTED, "-b", BASE],
    }
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="stopwise-baseline-") as folder:
        tree = Path(folder) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), options.baseline], check=True)
        try:
            checkouts = {"this checkout": ROOT / "src", f"baseline {options.baseline}": tree / "src"}
            times: dict[tuple[str, str], list[tuple[float, float]]] = {(c, k): [] for c in commands for k in checkouts}
            for args in commands.values():  # warm the file cache once per checkout
                for src in checkouts.values():
                    _time(src, args)
            for _ in range(options.repeats):
                for command, args in commands.items():
                    for name, src in checkouts.items():
                        times[(command, name)].append(_time(src, args))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
    print(f"CLI start-up, median of {options.repeats} runs (python {sys.version.split()[0]}, {os.cpu_count()} cores; machine may be shared)")
    print(f"load average before: {load[0]:.1f}; after: {os.getloadavg()[0]:.1f} (wall time grows with other processes; CPU time much less)")
    for command in commands:
        now = [statistics.median(t[i] for t in times[(command, "this checkout")]) for i in (0, 1)]
        then = [statistics.median(t[i] for t in times[(command, f"baseline {options.baseline}")]) for i in (0, 1)]
        verdict = "meets" if now[0] < 1.0 else "MISSES"
        print(
            f"  {command:<32} wall {now[0]:6.3f} s (baseline {then[0]:6.3f} s, ratio {now[0] / then[0]:4.2f}; {verdict} the 1.0 s target)"
            f"   CPU {now[1]:6.3f} s (baseline {then[1]:6.3f} s, ratio {now[1] / then[1]:4.2f})"
        )
    for command, args in commands.items():
        print(f"  {command:<32} loads: {', '.join(_loaded(ROOT / 'src', args)) or 'none of ' + ', '.join(HEAVY)}")


if __name__ == "__main__":
    main()
