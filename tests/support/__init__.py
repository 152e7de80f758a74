"""Harnesses the tests and the benchmarks share; not part of the wheel.

* :mod:`tests.support.pgtemp` - a throw-away PostgreSQL server (``initdb`` + ``pg_ctl`` in a temporary folder);
* :mod:`tests.support.workload` - a seeded load generator for the ledger and its writer process;
* :mod:`tests.support.betting_reference` - the stratified betting process before issue 9's speed-up;
* :mod:`tests.support.report_inputs` - small inputs of report pages (synthetic runs, a ledger with looks).

Import them as ``tests.support.<module>`` from the repository root (pytest puts it on the path; a
benchmark runs with ``PYTHONPATH=.``).
"""
