"""A PostgreSQL ledger whose connection is lost mid-run fails closed: both systems stop and their logs say why (issue 20).

A private server (not the session's: it is restarted) from :mod:`tests.support.pgtemp`. The 12th sample
to start restarts it (``pg_ctl restart``: every connection is lost; a restarted server may lack what
was acknowledged, e.g. after a failover). The manager's next ledger call fails, during the restart
(connection refused) or after it (the reconnected connection reaches a restarted server), and no
later sample of either system is scheduled, as when a SQLite ledger's file is removed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from tests.conftest import private_postgres
from tests.support.inspect_solvers import act_at_sample
from tests.support.pgtemp import create_database, restart_server

from stopwise.inspect import paired_early_stopping
from stopwise.ledger import open_ledger

pytestmark = pytest.mark.integration  # process-bound: a PostgreSQL server stopped under a running evaluation

N = 40


@pytest.fixture
def private_server() -> Iterator[str]:
    with private_postgres() as url:
        yield url


def test_a_lost_postgres_connection_fails_closed_and_both_systems_stop(
    private_server: str, example: ModuleType, tmp_path: Path
) -> None:
    from inspect_ai import Task, eval
    from inspect_ai.scorer import match

    url = create_database(private_server, "inspect_loss")
    restart_at = act_at_sample(12, lambda: restart_server(private_server))

    managers = paired_early_stopping(url, "ev", tested="tested", baseline="baseline")
    tasks = [Task(dataset=example.questions(N), solver=restart_at, scorer=match(), name=role,
                  model=example.mock_system(role, 0.9 if role == "tested" else 0.55), early_stopping=manager)
             for role, manager in zip(("tested", "baseline"), managers, strict=True)]
    logs = {log.eval.task: log for log in eval(tasks, max_tasks=2, max_samples=2, display="none",
                                               log_dir=str(tmp_path / "logs"))}
    comparison = managers[0].comparison
    assert comparison.error is not None
    lost = ("connection to the database was lost and the server restarted", "database error")
    assert any(why in comparison.error for why in lost), comparison.error
    accepted = in_doubt = 0
    for log in logs.values():  # both fail closed (error logs, which eval_set retries), naming the failure
        assert log.status == "error"
        message, ran = " ".join(log.error.message.split()), len(log.samples)
        # the 12th sample to start restarted the server; besides it, only samples in flight ran
        assert ran <= 12 + 2 and f"stopwise: {' '.join(comparison.error.split())}" in message, message
        assert f"this task ran {ran} sample(s) and skipped {N - ran}" in message and "(fail closed)" in message
    for side in comparison._sides.values():  # the counts the logs' summaries carried before they ended in error
        accepted += side.counts.accepted
        in_doubt += side.counts.in_doubt
    with open_ledger(url) as ledger:  # opened again: everything acknowledged is there, and at most the appends in doubt
        # (a commit can reach the server and its reply be lost with the connection: the client cannot know)
        assert accepted <= len(ledger.outcomes("ev")) <= accepted + in_doubt and ledger.verify("ev").ok
