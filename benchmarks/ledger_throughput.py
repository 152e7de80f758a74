"""Ledger throughput with concurrent appenders, beside the baseline commit, and decision latency (issues 10, 31).

1. Acknowledged outcome events per second from 4 appender processes (spawn) into one ledger, each
   appending one event per call and waiting for its acknowledgement (unbatched from the caller's
   view), and optionally in batches of several events per call; on SQLite also from 4 appender threads
   of one process sharing its ledger, one event per call. Measured on the current code and,
   in the same run, on the baseline commit (``benchmarks._baseline``, e974111: stopwise before group
   commit), on SQLite and on a real PostgreSQL server when its binaries are there. Target (issue 31):
   >= 1,000 events/s with 4 appenders one event per call on SQLite. Every run checks that each
   event was acknowledged and stored exactly once.
2. The time of a decision recomputed after every event (append one event, then look), median over
   the run, in its parts, through the public steps of ``Ledger.decide`` (``Ledger.look``,
   ``LedgerLook.decide``, ``LedgerLook.append``):

   (a) the recompute: read the new events into the columns (the ledger's own part, shown on its
       own) + ``stopwise.decide`` with the registered policy and universe (shown on its own);
   (b) the append of the record to the hash chain (one durable commit);
   (c) both, which is ``Ledger.decide(...)``; measured once from the parts of each look and once
       through the public ``Ledger.decide`` alone on a second ledger.

   Target: < 10 ms median decision recomputed after every event, judged on (a). (b) is bounded by
   the disk's flush rate, like every acknowledged append.

PostgreSQL is a private server started here (``initdb`` + ``pg_ctl``, fsync on) unless
``STOPWISE_BENCH_POSTGRES_URL`` names one; without its binaries the PostgreSQL rows are skipped.
Figures depend on the disk's flush rate and on other load on the machine; the script prints both.

Run from the repository root: ``PYTHONPATH=src python -m benchmarks.ledger_throughput [--quick]``
(``--quick``: a few seconds, SQLite only unless ``STOPWISE_BENCH_POSTGRES_URL`` names a server, batch 1 only).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from tests.support.pgtemp import create_database, temporary_postgres  # the harnesses live with the tests
from tests.support.workload import register_workload, worker_events, writer

from benchmarks._baseline import BASELINE_REF, MEASURE_FLAG, measure_side_by_side, strip_measure_flag
from stopwise.errors import ComparisonError, LedgerError
from stopwise.ledger import open_ledger

TARGET_UNBATCHED = {"sqlite": 1000.0}
"""Events/s with 4 appenders one event per call (issue 31); PostgreSQL has no target."""
TARGET_DECIDE_MS = 10.0
APPENDERS = 4
MODULE = "benchmarks.ledger_throughput"


def throughput(url: str, n_events: int, batch: int, *, threads: bool = False) -> float:
    """Acknowledged events per second from APPENDERS appenders released together (each event stored exactly once).

    The appenders are processes, or (``threads``) threads of one process sharing its ledger.
    """
    spawn = mp.get_context("spawn")
    register_workload(url, n_events)
    n_processes = 1 if threads else APPENDERS
    ready = [spawn.Event() for _ in range(n_processes)]
    go = spawn.Event()
    results = spawn.Queue()
    processes = [
        spawn.Process(
            target=writer,
            args=(url, "load", worker_events(w, n_processes, n_events)),
            kwargs={"batch": batch, "ready": ready[w], "go": go, "results": results, "threads": APPENDERS if threads else 1},
        )
        for w in range(n_processes)
    ]
    for p in processes:
        p.start()
    for event in ready:
        event.wait(300)
    go.set()
    reports = [results.get(timeout=1800) for _ in processes]
    for p in processes:
        p.join()
    start, end = min(r[1] for r in reports), max(r[2] for r in reports)
    acknowledged = sum(r[3] for r in reports)
    with open_ledger(url) as ledger:
        stored = len(ledger.outcomes("load"))
    if stored != n_events or acknowledged != n_events:
        raise SystemExit(f"lost or duplicated events: stored {stored}, acknowledged {acknowledged}, sent {n_events}")
    return acknowledged / (end - start)


def flush_ms(folder: Path, repeat: int = 50) -> float:
    """Median milliseconds of one 4 KiB append and ``fdatasync`` of a file in ``folder`` (the disk's flush)."""
    times = []
    path = folder / "flush-probe"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for _ in range(repeat):
            start = time.perf_counter()
            os.write(fd, b"\0" * 4096)
            os.fdatasync(fd)
            times.append((time.perf_counter() - start) * 1000)
    finally:
        os.close(fd)
        path.unlink()
    return statistics.median(times)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Events/s per (backend, batch) on whichever stopwise is importable (the current code, or the baseline's)."""
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="stopwise-bench-") as folder:
        for backend in args.backends.split(","):
            for batch in (int(b) for b in args.batches.split(",")):
                n_events = args.events if batch == 1 else args.events * 8
                tag = f"{time.monotonic_ns()}"
                url = (
                    f"sqlite:///{Path(folder) / f'{tag}.db'}" if backend == "sqlite"
                    else create_database(args.postgres_url, f"stopwise_bench_{os.getpid()}_{tag}")
                )
                figures[f"{backend}/{batch}"] = throughput(url, n_events, batch)
            if backend == "sqlite" and "1" in args.batches.split(","):  # the threads of one process share its flushes
                url = f"sqlite:///{Path(folder) / f'{time.monotonic_ns()}.db'}"
                figures["sqlite threads/1"] = throughput(url, args.events, 1, threads=True)
    return figures


def decide_latency(url: str, url_public: str, n_events: int) -> dict[str, float | str]:
    """Median ms per look after each event: (a) recompute = read + stopwise.decide, (b) chain append, (c) both.

    The parts are timed around the public steps of ``Ledger.decide`` (``Ledger.look``, ``LedgerLook.decide``,
    ``LedgerLook.append``), so that each look is taken once; (c) is also timed through the public
    ``Ledger.decide`` on a second ledger fed the same events.
    """
    register_workload(url, n_events)
    register_workload(url_public, n_events)
    events = worker_events(0, 1, n_events)
    parts: dict[str, list[float]] = {name: [] for name in ("read", "core", "recompute", "append", "both", "public")}
    action = "-"
    with open_ledger(url) as ledger, open_ledger(url_public) as other:
        for event in events:
            ledger.append("load", [event])
            other.append("load", [event])
            t0 = time.perf_counter()
            look = ledger.look("load")
            t1 = time.perf_counter()
            try:
                record = look.decide()
            except ComparisonError:
                continue  # the baseline system has no outcome yet
            t2 = time.perf_counter()
            if look.append() is None:
                raise SystemExit("no other process decides here: the chain cannot have moved on")
            t3 = time.perf_counter()
            action = other.decide("load").action
            t4 = time.perf_counter()
            if action != record.action:
                raise SystemExit(f"the two ledgers disagree at event {look.events.high_water}: {record.action} and {action}")
            for name, ms in zip(parts, (t1 - t0, t2 - t1, t2 - t0, t3 - t2, t3 - t0, t4 - t3), strict=True):
                parts[name].append(ms * 1000)
        for each in (ledger, other):
            if not each.verify("load").ok:
                raise SystemExit("the decision chain does not verify")
    recompute = sorted(parts["recompute"])
    return {
        **{name: statistics.median(values) for name, values in parts.items()},
        "recompute_p90": recompute[int(0.9 * (len(recompute) - 1))],
        "looks": len(recompute),
        "action": action,
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="A few seconds per backend: fewer events, batch 1 only.")
    parser.add_argument("--batches", default=None, help="Events per append call to measure (default 1,10,50; quick: 1).")
    parser.add_argument("--events", type=int, default=None, help="Events per run at batch 1 (8x that when batched).")
    parser.add_argument("--parts", default="throughput,latency", help="What to measure: throughput, latency or both.")
    parser.add_argument("--baseline", default=BASELINE_REF, help="The commit measured beside the current code.")
    parser.add_argument("--backends", default=None, help=argparse.SUPPRESS)  # set for the baseline subprocess
    parser.add_argument("--postgres-url", default=None, help=argparse.SUPPRESS)
    return parser


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(strip_measure_flag(argv))
    args.batches = args.batches or ("1" if args.quick else "1,10,50")
    args.events = args.events or (100 if args.quick else 2000)
    if MEASURE_FLAG in argv:  # the baseline's subprocess: measure and print one JSON line
        measure_side_by_side(MODULE, measure, args, argv)
    print(
        f"ledger throughput: {APPENDERS} appender processes; machine load average {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores"
    )
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="stopwise-bench-")))
        server = os.environ.get("STOPWISE_BENCH_POSTGRES_URL")
        if server is None and args.quick:
            print("PostgreSQL skipped (--quick; set STOPWISE_BENCH_POSTGRES_URL to include a running server)")
        elif server is None:
            try:
                server = stack.enter_context(temporary_postgres())
            except LedgerError as exc:
                print(f"PostgreSQL skipped: {exc}")
        backends = "sqlite" if server is None else "sqlite,postgresql"
        parts = set(args.parts.split(","))
        if "throughput" in parts:
            _print_throughput(args, argv, backends, server)
        if "latency" in parts:
            counter = iter(range(1000))

            def fresh(backend: str) -> str:
                n = next(counter)
                assert server is not None or backend == "sqlite"
                return f"sqlite:///{tmp / f'l{n}.db'}" if backend == "sqlite" else create_database(server or "", f"stopwise_bench_{n}")

            _print_latency(backends.split(","), fresh, 12 if args.quick else 600)
    print("\nMeasured on a shared 2-core machine: other sessions' load lowers every figure.")


def _print_throughput(args: argparse.Namespace, argv: list[str], backends: str, server: str | None) -> None:
    args.backends, args.postgres_url = backends, server
    forwarded = [*argv, "--backends", backends, "--batches", args.batches, "--events", str(args.events)]
    if server is not None:
        forwarded += ["--postgres-url", server]
    flush_before = flush_ms(Path(tempfile.gettempdir()))
    current, baseline = measure_side_by_side(MODULE, measure, args, forwarded, ref=args.baseline)
    flush_after = flush_ms(Path(tempfile.gettempdir()))
    print(f"\nacknowledged events/s, {APPENDERS} appenders; current code beside {args.baseline} measured in this run")
    print(
        f"disk flush (4 KiB write + fdatasync): {flush_before:.2f} ms median before, {flush_after:.2f} ms after; "
        f"{APPENDERS} one-event appenders each wait for one flush per event: at most "
        f"{APPENDERS * 1000 / max(flush_before, flush_after, 1e-3):.0f} events/s at the slower of the two"
    )
    print(f"{'backend':<15} {'per call':>8} {'events':>7} {args.baseline:>10} {'current':>9} {'ratio':>6} {'target':>7}")
    for key, rate in current.items():
        backend, batch = key.split("/")
        n_events = args.events if batch == "1" else args.events * 8
        target = TARGET_UNBATCHED.get(backend) if batch == "1" else None
        verdict = "-" if target is None else ("met" if rate >= target else "NOT met") + f" ({target:.0f})"
        print(f"{backend:<15} {batch:>8} {n_events:>7} {baseline[key]:>10.0f} {rate:>9.0f} {rate / baseline[key]:>6.2f} {verdict:>7}", flush=True)
    print("per call: events per Ledger.append call (1: unbatched from the caller's view; each call returns once durable);")
    print(f"'sqlite threads': {APPENDERS} appender threads of one process sharing one Ledger (the others: {APPENDERS} processes)")


def _print_latency(backends: list[str], fresh: Any, n_events: int) -> None:
    print(f"\ndecision recomputed after every event (append 1 event, then look); target < {TARGET_DECIDE_MS:.0f} ms median on (a)")
    print(
        f"{'backend':<11} {'looks':>6} {'(a) ms':>7} {'p90':>6} {'ratio':>6} {'read ms':>8} {'decide ms':>10} "
        f"{'(b) ms':>7} {'(c) ms':>7} {'(c) public':>11} {'final':>8}"
    )
    for backend in backends:
        f = decide_latency(fresh(backend), fresh(backend), n_events)
        print(
            f"{backend:<11} {f['looks']:>6} {f['recompute']:>7.2f} {f['recompute_p90']:>6.2f} "
            f"{float(f['recompute']) / TARGET_DECIDE_MS:>6.2f} {f['read']:>8.3f} {f['core']:>10.2f} "
            f"{f['append']:>7.2f} {f['both']:>7.2f} {f['public']:>11.2f} {f['action']:>8}",
            flush=True,
        )
    print("(a) recompute = Ledger.look + LedgerLook.decide: read = the new events into the columns (the ledger's part),")
    print("    decide = stopwise.decide on all events with the registered policy and universe;")
    print("(b) = LedgerLook.append: the record into the hash chain (one durable commit); (c) = (a) + (b) = Ledger.decide,")
    print("    '(c) public' = the same through the public Ledger.decide on a second ledger. Medians over the looks.")


if __name__ == "__main__":
    main()
