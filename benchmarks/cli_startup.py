"""Start-up time of the command line: ``stopwise --help``, ``stopwise decide --help`` and one ``stopwise decide``.

Median wall and CPU time (user + system of the child process) of each command for this checkout and for the
baseline commit's ``src`` (:func:`benchmarks._baseline.baseline_src`, default: ``main`` before the 0.2
restructure, which still reduced the Typer app to the invoked command by hand), run on this interpreter
side by side and interleaved, so both see the same machine load. ``decide`` reads a small synthetic
outcome file (200 tasks, 4 systems) written once for both.

Target (issue 11): under 1.0 s for every command. The last lines name the heavy libraries each command of this
checkout still loads (what is left to make lazy).

    python -m benchmarks.cli_startup [--repeats 11] [--baseline REF] [--quick]
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

from benchmarks._baseline import BASELINE_REF, baseline_src

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "pyarrow", "scipy", "sklearn", "lightgbm", "matplotlib", "plotly", "sqlalchemy", "pydantic", "numpy")


def _time(src: Path, args: list[str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run of ``stopwise args`` with ``src`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    code = "from stopwise.cli.main import run; run()"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1, 2, 3):
        raise SystemExit(f"stopwise {' '.join(args)} failed with exit {done.returncode} ({src}):\n{done.stderr.decode()[-2000:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _loaded(src: Path, args: list[str]) -> list[str]:
    """The heavy libraries one run of the command imports."""
    code = (
        "import sys\nfrom stopwise.cli.main import main\nmain(sys.argv[1:])\n"
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)"
    )
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run([sys.executable, "-c", code, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    return done.stderr.strip().splitlines()[-1].split() if done.stderr.strip() else []


def _outcomes(folder: Path) -> tuple[Path, str, str]:
    """A small synthetic outcome file (200 tasks, 4 systems) and the pair to decide."""
    from stopwise.records import synthetic_benchmark

    rows = synthetic_benchmark(200, 4, rng=0)
    names = sorted(rows["system"].unique())
    path = folder / "outcomes.csv"
    rows.to_csv(path, index=False)
    return path, names[-1], names[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=11, help="runs of each command per checkout (median reported)")
    parser.add_argument("--baseline", default=BASELINE_REF, help="git revision to compare with (default: %(default)s)")
    parser.add_argument("--quick", action="store_true", help="2 runs each, no warm-up run: a check that the benchmark runs, in seconds")
    options = parser.parse_args()
    repeats = 2 if options.quick else options.repeats
    checkouts = {"this checkout": ROOT / "src", f"baseline {options.baseline}": baseline_src(options.baseline)}
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="stopwise-startup-") as folder:
        outcomes, tested, base = _outcomes(Path(folder))
        commands = {
            "stopwise --help": ["--help"],
            "stopwise decide --help": ["decide", "--help"],
            "stopwise decide (200 tasks)": ["decide", str(outcomes), "-t", tested, "-b", base],
        }
        times: dict[tuple[str, str], list[tuple[float, float]]] = {(c, k): [] for c in commands for k in checkouts}
        if not options.quick:
            for args in commands.values():  # warm the file cache once per checkout
                for src in checkouts.values():
                    _time(src, args)
        for _ in range(repeats):
            for command, args in commands.items():
                for name, src in checkouts.items():
                    times[(command, name)].append(_time(src, args))
        loads = {command: _loaded(ROOT / "src", args) for command, args in commands.items()}
    print(f"CLI start-up, median of {repeats} runs (python {sys.version.split()[0]}, {os.cpu_count()} cores; machine may be shared)")
    print(f"load average before: {load[0]:.1f}; after: {os.getloadavg()[0]:.1f} (wall time grows with other processes; CPU time much less)")
    baseline = f"baseline {options.baseline}"
    for command in commands:
        now = [statistics.median(t[i] for t in times[(command, "this checkout")]) for i in (0, 1)]
        then = [statistics.median(t[i] for t in times[(command, baseline)]) for i in (0, 1)]
        verdict = "meets" if now[0] < 1.0 else "MISSES"
        print(
            f"  {command:<28} wall {now[0]:6.3f} s (baseline {then[0]:6.3f} s, ratio {now[0] / then[0]:4.2f}; {verdict} the 1.0 s target)"
            f"   CPU {now[1]:6.3f} s (baseline {then[1]:6.3f} s, ratio {now[1] / then[1]:4.2f})"
        )
    for command, loaded in loads.items():
        print(f"  {command:<28} loads: {', '.join(loaded) or 'none of ' + ', '.join(HEAVY)}")


if __name__ == "__main__":
    main()
