"""Peak memory of the commands issue 37 found unbounded, on the current code and the baseline commit, side by side.

Inputs are generated in a temporary folder (SYNTHETIC, seeded):

* ``rows.csv``: 12 tasks x 2 systems, with a group column (g1, g2);
* ``report.run1.json``: a plain SWE-bench run report of about 185 MB (5.6 million instance ids), past
  ``STOPWISE_MAX_NODES``;
* ``limit.run1.json``: a run report at that limit, read whole: 999,990 ids (35 MB; the object, its two lists and
  the ids are 999,993 values of the 1,000,000 allowed);
* ``tasks.csv``: a 1,000,000-line tasks file (task, group of 50) and ``order.csv``, the ``stopwise order`` output
  of it (position, task, group, covered and the three provenance columns).

Each command runs in a child process of its own (``python -c 'stopwise.cli.main.main(argv)'`` with the source
first on ``PYTHONPATH``: this tree's ``src`` or the baseline commit's, ``benchmarks._baseline.baseline_src()``);
its peak resident memory is the child's ``ru_maxrss`` from ``os.wait4``. Every child runs under an address-space
cap of ``--cap-gib`` (default 6 GiB, RLIMIT_AS) so that a baseline run that would grow without bound on the shared
machine fails instead (its exit code is printed: 5 is the internal error of a MemoryError).

Run: ``python -m benchmarks.limits_memory [--quick] [--cap-gib 6]``. ``--quick`` (a check that it runs, in
seconds) uses a 20,000-task universe, a 4 MB report (120,000 ids, past the node limit lowered to 100,000 by
``STOPWISE_MAX_NODES`` in the children), a report at that limit (99,990 ids) and a 20,000-line tasks file.
``--only TEXT`` runs only the commands whose label holds TEXT (``--only ingest``: the two run reports).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._baseline import BASELINE_REF, ROOT, baseline_src

TARGET_BYTES = 1 << 30
"""The issue's target: every peak below 1 GB."""


def write_inputs(folder: Path, *, n_tasks_file: int, report_ids: int, limit_ids: int, seed: int) -> dict[str, Path]:
    """The generated inputs (see the module docstring)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = folder / "rows.csv"
    lines = ["system,task,outcome,group"]
    for i in range(12):
        for system, p in (("A", 0.6), ("B", 0.5)):
            lines.append(f"{system},task-{i:07d},{int(rng.random() < p)},{'g1' if i < 6 else 'g2'}")
    rows.write_text("\n".join(lines) + "\n")
    plain = folder / "rows_plain.csv"  # no group column: the tasks file's groups are the coverage groups
    plain.write_text("\n".join(",".join(line.split(",")[:3]) for line in lines) + "\n")
    report = folder / "report.run1.json"
    ids = [f"django__django-{i:016d}" for i in range(report_ids)]
    report.write_text(json.dumps({"resolved_ids": ids[: report_ids // 2], "unresolved_ids": ids[report_ids // 2 :]}))
    folder.joinpath("limit.run1.json").write_text(
        json.dumps({"resolved_ids": ids[: limit_ids // 2], "unresolved_ids": ids[limit_ids // 2 : limit_ids]})
    )
    tasks = folder / "tasks.csv"
    with tasks.open("w") as handle:
        handle.write("task,group\n")
        handle.writelines(f"task-{i:07d},g{i % 50}\n" for i in range(n_tasks_file))
    return input_paths(folder)


def input_paths(folder: Path) -> dict[str, Path]:
    """Where :func:`write_inputs` puts each input."""
    names = {"rows": "rows.csv", "plain": "rows_plain.csv", "report": "report.run1.json", "limit": "limit.run1.json",
             "tasks": "tasks.csv", "order": "order.csv"}
    return {key: folder / name for key, name in names.items()}


def run_child(argv: list[str], src: Path, cap_bytes: int, cwd: Path, extra_env: dict[str, str] | None = None) -> tuple[int, float, float]:
    """(exit code, peak RSS in bytes, seconds) of ``stopwise ARGV`` in a child process with ``src`` first on the path."""
    code = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({cap_bytes}, {cap_bytes}))\n"
        "from stopwise.cli.main import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    env = {**os.environ, **(extra_env or {}), "PYTHONPATH": os.pathsep.join([str(src), str(ROOT)])}
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", code, *argv], env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, usage.ru_maxrss * 1024.0, time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a report still past the limit): seconds, for CI")
    parser.add_argument("--cap-gib", type=float, default=6.0, help="address-space cap of every child (GiB)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="run only the commands whose label holds this text")
    args = parser.parse_args(argv)
    universe = 20_000 if args.quick else 10_000_000
    n_tasks_file = 20_000 if args.quick else 1_000_000
    report_ids = 120_000 if args.quick else 5_600_000
    limit_ids = 99_990 if args.quick else 999_990  # the node limit (100,000 or 1,000,000) less 10
    # --quick: the node limit lowered to 100,000 (STOPWISE_MAX_NODES) so that a small report is still past it
    limit_env = {"STOPWISE_MAX_NODES": "100000"} if args.quick else None
    cap = int(args.cap_gib * 2**30)
    current_src, base_src = ROOT / "src", baseline_src()
    with tempfile.TemporaryDirectory(prefix="stopwise-limits-") as name:
        folder = Path(name)
        # in a child process: a child forked from a parent that built 5.6 million ids would count the parent's pages
        subprocess.run([sys.executable, "-c", f"from benchmarks.limits_memory import write_inputs; from pathlib import Path; "
                        f"write_inputs(Path({str(folder)!r}), n_tasks_file={n_tasks_file}, report_ids={report_ids}, limit_ids={limit_ids}, seed={args.seed})"],
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": os.pathsep.join([str(current_src), str(ROOT)])}, check=True)
        made = input_paths(folder)
        code, _, _ = run_child(["order", str(made["tasks"]), "-o", str(made["order"])], current_src, cap, folder)
        if code != 0:
            sys.exit(f"could not write the order output (exit {code})")
        print(f"inputs (SYNTHETIC, seed {args.seed}): 12 tasks x 2 systems; a {made['report'].stat().st_size / 1e6:.0f} MB run report "
              f"({report_ids:,} ids); a {n_tasks_file:,}-line tasks file ({made['tasks'].stat().st_size / 1e6:.0f} MB) and its order "
              f"({made['order'].stat().st_size / 1e6:.0f} MB)")
        print(f"every child under RLIMIT_AS = {args.cap_gib:g} GiB; baseline = {BASELINE_REF}; load average {os.getloadavg()[0]:.1f}")
        half = universe - 10
        cases = [
            (f"decide --n-tasks {universe:,} --group-size g1={half} g2=10",
             ["decide", made["rows"], "-t", "A", "-b", "B", "--n-tasks", str(universe), "--group-size", f"g1={half}", "--group-size", "g2=10"]),
            (f"ingest a {made['report'].stat().st_size / 1e6:.0f} MB run report", ["ingest", made["report"], "-o", folder / "out.csv", "--force"]),
            (f"ingest a run report at the value limit ({limit_ids:,} ids)", ["ingest", made["limit"], "-o", folder / "out.csv", "--force"]),
            (f"decide --tasks ({n_tasks_file:,}-line order output)", ["decide", made["plain"], "-t", "A", "-b", "B", "--tasks", made["order"]]),
            (f"order ({n_tasks_file:,}-line tasks file)", ["order", made["tasks"], "-o", folder / "order2.csv", "--force"]),
            (f"ledger init --tasks ({n_tasks_file:,} lines)", ["ledger", "init", folder / "l{}.db", "ev", "-t", "A", "-b", "B", "--tasks", made["order"]]),
        ]
        print(f"{'command':<58} {'current':>22} {'baseline':>22}  ratio")
        worst = 0.0
        for label, case in [(label, case) for label, case in cases if args.only in label]:
            figures = []
            for tag, src in (("c", current_src), ("b", base_src)):
                argv_i = [str(a).replace("l{}.db", f"l{tag}.db") for a in case]
                code, peak, seconds = run_child(argv_i, src, cap, folder, limit_env)
                figures.append((code, peak, seconds))
            (c_code, c_peak, c_s), (b_code, b_peak, b_s) = figures
            worst = max(worst, c_peak)
            print(f"{label:<58} {c_peak / 2**20:8.0f} MiB exit {c_code} {c_s:4.0f}s {b_peak / 2**20:8.0f} MiB exit {b_code} {b_s:4.0f}s  {c_peak / b_peak:5.2f}")
        verdict = "meets" if worst < TARGET_BYTES else "MISSES"
        print(f"largest current peak {worst / 2**20:.0f} MiB: {verdict} the < 1 GiB target")


if __name__ == "__main__":
    main()
