"""Ledger throughput and decision latency (issue 10), on SQLite and on a real PostgreSQL server.

1. Acknowledged outcome events per second from 4 writer processes (spawn) into one ledger, one event
   per transaction and in small batches (group commit: each event is acknowledged only after the
   commit of its batch). Targets: >= 2,000/s into SQLite, >= 1,000/s into PostgreSQL.
2. The time of a decision recomputed after every event (append one event, then look), median over
   the run, in its parts:

   (a) the recompute, ``Ledger.decide(..., record=False)``: read the new events into the columns
       (the ledger's own part, shown on its own) + ``stopwise.decide`` with the registered policy
       and universe (shown on its own);
   (b) the append of the record to the hash chain (one fsync'd commit);
   (c) both, which is ``Ledger.decide(...)`` with recording; measured once from the parts of each
       look and once through the public ``Ledger.decide`` alone on a second ledger.

   Target: < 10 ms median decision recomputed after every event, judged on (a). (b) is bounded by
   the disk's sync rate (a few ms per commit), like every acknowledged append.

PostgreSQL is a private server started here (``initdb`` + ``pg_ctl``, fsync on) unless
``STOPWISE_BENCH_POSTGRES_URL`` names one. Figures depend on the disk's fsync rate and on other load
on the machine; the script prints both.

Run from the repository root: ``PYTHONPATH=src python -m benchmarks.ledger_throughput [--quick]``
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

from tests.support.pgtemp import create_database, temporary_postgres  # the harnesses live with the tests
from tests.support.workload import planned_tasks, worker_events, writer

import stopwise
from stopwise.ledger import open_ledger
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


def decide_latency(url: str, url_public: str, n_events: int) -> dict[str, float | str]:
    """Median ms per look after each event: (a) recompute = read + stopwise.decide, (b) chain append, (c) both.

    The parts are timed around the steps of ``Ledger.decide`` (``_snapshot``, ``_decide_rows``,
    ``_append_decision``: its whole body), so that each look is taken once; (c) is also timed through
    the public ``Ledger.decide`` on a second ledger fed the same events.
    """
    register(url, n_events)
    register(url_public, n_events)
    events = worker_events(0, 1, n_events)
    read: list[float] = []
    core: list[float] = []
    recompute: list[float] = []
    append: list[float] = []
    both: list[float] = []
    public: list[float] = []
    with open_ledger(url) as ledger, open_ledger(url_public) as other:
        reg = ledger.registration("load")
        action = "-"
        for event in events:
            ledger.append("load", [event])
            other.append("load", [event])
            t0 = time.perf_counter()
            frame, _, seq = ledger._snapshot(reg)
            t1 = time.perf_counter()
            try:
                record = ledger._decide_rows(reg, frame)
            except stopwise.ComparisonError:
                continue  # the baseline has no outcome yet
            t2 = time.perf_counter()
            ledger._append_decision(reg, record, seq)
            t3 = time.perf_counter()
            action = other.decide("load").action
            t4 = time.perf_counter()
            if action != record.action:
                raise SystemExit(f"the two ledgers disagree at event {seq}: {record.action} and {action}")
            read.append((t1 - t0) * 1000)
            core.append((t2 - t1) * 1000)
            recompute.append((t2 - t0) * 1000)
            append.append((t3 - t2) * 1000)
            both.append((t3 - t0) * 1000)
            public.append((t4 - t3) * 1000)
        for each in (ledger, other):
            if not each.verify("load").ok:
                raise SystemExit("the decision chain does not verify")
    return {
        "recompute": statistics.median(recompute),
        "recompute_p90": sorted(recompute)[int(0.9 * (len(recompute) - 1))],
        "read": statistics.median(read),
        "core": statistics.median(core),
        "append": statistics.median(append),
        "both": statistics.median(both),
        "public": statistics.median(public),
        "looks": len(recompute),
        "action": action,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Fewer events (a smoke run).")
    parser.add_argument("--batches", default="1,10,50", help="Events per transaction to measure.")
    parser.add_argument("--parts", default="throughput,latency", help="What to measure: throughput, latency or both.")
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

        parts = set(args.parts.split(","))
        if "throughput" in parts:
            print(f"\n{'backend':<11} {'batch':>5} {'events':>7} {'ack events/s':>13} {'target':>7} {'ratio':>6}")
        for backend in ("sqlite", "postgresql") if "throughput" in parts else ():
            for batch in batches:
                n_events = int((1200 if batch == 1 else 16000) * scale)
                rate, stored = throughput(fresh(backend), n_events, batch)
                target = TARGET_EVENTS[backend]
                print(f"{backend:<11} {batch:>5} {stored:>7} {rate:>13.0f} {target:>7.0f} {rate / target:>6.2f}", flush=True)

        if "latency" in parts:
            print(f"\ndecision recomputed after every event (append 1 event, then look); target < {TARGET_DECIDE_MS:.0f} ms median on (a)")
            print(
                f"{'backend':<11} {'looks':>6} {'(a) ms':>7} {'p90':>6} {'ratio':>6} {'read ms':>8} {'decide ms':>10} "
                f"{'(b) ms':>7} {'(c) ms':>7} {'(c) public':>11} {'final':>8}"
            )
            for backend in ("sqlite", "postgresql"):
                n_events = int(600 * scale)
                f = decide_latency(fresh(backend), fresh(backend), n_events)
                print(
                    f"{backend:<11} {f['looks']:>6} {f['recompute']:>7.2f} {f['recompute_p90']:>6.2f} "
                    f"{float(f['recompute']) / TARGET_DECIDE_MS:>6.2f} {f['read']:>8.3f} {f['core']:>10.2f} "
                    f"{f['append']:>7.2f} {f['both']:>7.2f} {f['public']:>11.2f} {f['action']:>8}",
                    flush=True,
                )
            print("(a) recompute = Ledger.decide(record=False): read = the new events into the columns (the ledger's part),")
            print("    decide = stopwise.decide on all events with the registered policy and universe;")
            print("(b) = append the record to the hash chain (one fsync'd commit); (c) = (a) + (b) = Ledger.decide(record=True),")
            print("    '(c) public' = the same through the public Ledger.decide on a second ledger. Medians over the looks.")
    print("\nratio: events/s over target (>= 1 meets it); (a) ms over target (<= 1 meets it).")
    print("Measured on a shared 2-core machine: other sessions' load lowers every figure.")


if __name__ == "__main__":
    main()
