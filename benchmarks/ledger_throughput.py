"""Ledger throughput and decision latency (issue 10), on SQLite and on a real PostgreSQL server.

1. Acknowledged outcome events per second from 4 writer processes (spawn) into one ledger, one event
   per transaction and in small batches (group commit: each event is acknowledged only after the
   commit of its batch). Targets: >= 2,000/s into SQLite, >= 1,000/s into PostgreSQL.
2. The time of a decision recomputed after every event (append one event, then ``Ledger.decide``,
   which reads the new events, decides with the registered policy and universe, and appends the
   record to the hash chain), median over the run; beside it ``stopwise.decide`` alone on the same
   rows. Target: < 10 ms median.

PostgreSQL is a private server started here (``initdb`` + ``pg_ctl``, fsync on) unless
``STOPWISE_BENCH_POSTGRES_URL`` names one. Figures depend on the disk's fsync rate and on other load
on the machine; the script prints both.

Run: ``PYTHONPATH=src python benchmarks/ledger_throughput.py [--quick]``
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import stopwise
from stopwise.ledger import open_ledger
from stopwise.ledger._pgtemp import create_database, temporary_postgres
from stopwise.ledger._workload import planned_tasks, worker_events, writer
from stopwise.records import Policy, TaskUniverse

TARGET_EVENTS = {"sqlite": 2000.0, "postgresql": 1000.0}
TARGET_DECIDE_MS = 10.0
WRITERS = 4


def register(url: str, n_events: int) -> None:
    tasks = planned_tasks(n_events)
    with open_ledger(url) as ledger:
        ledger.register("load", policy=Policy(), universe=TaskUniverse(tasks, [f"g{i % 4}" for i in range(len(tasks))]), tested="A", baseline="B")


def throughput(url: str, n_events: int, batch: int) -> tuple[float, int]:
    """Acknowledged events per second from WRITERS processes released together."""
    spawn = mp.get_context("spawn")
    register(url, n_events)
    ready = [spawn.Event() for _ in range(WRITERS)]
    go = spawn.Event()
    results = spawn.Queue()
    processes = [
        spawn.Process(
            target=writer,
            args=(url, "load", worker_events(w, WRITERS, n_events)),
            kwargs={"batch": batch, "ready": ready[w], "go": go, "results": results},
        )
        for w in range(WRITERS)
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
    return acknowledged / (end - start), stored


def decide_latency(url: str, n_events: int) -> dict[str, float | str]:
    """Median ms per look after each event: Ledger.decide (recorded in the chain), without recording, stopwise.decide alone."""
    register(url, n_events)
    events = worker_events(0, 1, n_events)
    recorded: list[float] = []
    computed: list[float] = []
    core: list[float] = []
    with open_ledger(url) as ledger:
        reg = ledger.registration("load")
        action = "-"
        for event in events:
            ledger.append("load", [event])
            t0 = time.perf_counter()
            try:
                action = ledger.decide("load").action
            except stopwise.ComparisonError:
                continue  # the baseline has no outcome yet
            t1 = time.perf_counter()
            ledger.decide("load", record=False)
            t2 = time.perf_counter()
            recorded.append((t1 - t0) * 1000)
            computed.append((t2 - t1) * 1000)
            rows = ledger.outcomes("load")
            t3 = time.perf_counter()
            stopwise.decide(rows, "A", "B", reg.policy, universe=reg.universe)
            core.append((time.perf_counter() - t3) * 1000)
        if not ledger.verify("load").ok:
            raise SystemExit("the decision chain does not verify")
    recorded.sort()
    return {
        "median": statistics.median(recorded),
        "p90": recorded[int(0.9 * (len(recorded) - 1))],
        "computed": statistics.median(computed),
        "core": statistics.median(core),
        "action": action,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Fewer events (a smoke run).")
    parser.add_argument("--batches", default="1,10,50", help="Events per transaction to measure.")
    args = parser.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    scale = 0.25 if args.quick else 1.0
    print(f"ledger throughput: {WRITERS} writer processes; machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="stopwise-bench-")))
        server = os.environ.get("STOPWISE_BENCH_POSTGRES_URL") or stack.enter_context(temporary_postgres())
        counter = iter(range(1000))

        def fresh(backend: str) -> str:
            n = next(counter)
            return f"sqlite:///{tmp / f'l{n}.db'}" if backend == "sqlite" else create_database(server, f"stopwise_bench_{n}")

        print(f"\n{'backend':<11} {'batch':>5} {'events':>7} {'ack events/s':>13} {'target':>7} {'ratio':>6}")
        for backend in ("sqlite", "postgresql"):
            for batch in batches:
                n_events = int((1200 if batch == 1 else 16000) * scale)
                rate, stored = throughput(fresh(backend), n_events, batch)
                target = TARGET_EVENTS[backend]
                print(f"{backend:<11} {batch:>5} {stored:>7} {rate:>13.0f} {target:>7.0f} {rate / target:>6.2f}", flush=True)

        print(f"\ndecision after every event (append 1 event, then Ledger.decide), target < {TARGET_DECIDE_MS:.0f} ms median")
        print(
            f"{'backend':<11} {'events':>7} {'recorded ms':>12} {'p90 ms':>8} {'ratio':>6} {'not recorded ms':>16} "
            f"{'stopwise.decide ms':>19} {'final':>8}"
        )
        for backend in ("sqlite", "postgresql"):
            n_events = int(600 * scale)
            f = decide_latency(fresh(backend), n_events)
            print(
                f"{backend:<11} {n_events:>7} {f['median']:>12.2f} {f['p90']:>8.2f} {float(f['median']) / TARGET_DECIDE_MS:>6.2f} "
                f"{f['computed']:>16.2f} {f['core']:>19.2f} {f['action']:>8}",
                flush=True,
            )
        print("recorded = read new events + stopwise.decide + append the record to the chain (one commit);")
        print("not recorded = the same without the chain append; stopwise.decide = the decision routine alone on the same rows.")
    print("\nratio: events/s over target (>= 1 meets it); decision ms over target (<= 1 meets it).")
    print("Measured on a shared 2-core machine: other sessions' load lowers every figure.")


if __name__ == "__main__":
    main()
