"""A ledger URL with a password: the password shows nowhere (report subtitle, report page, messages, repr)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stopwise.cli.main import main
from stopwise.ledger import open_ledger
from stopwise.records import Policy, TaskUniverse, synthetic_benchmark
from stopwise.report import ledger_report

SECRET = "s3cret"


def test_a_ledger_report_and_its_messages_hide_the_password(postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scheme, rest = postgres_url.split("://", 1)
    user, host = rest.split("@", 1)
    url = f"{scheme}://{user}:{SECRET}@{host}"  # the test server trusts local connections: any password works
    rows = synthetic_benchmark(40, 2, rng=4)
    a, b = sorted(rows["system"].unique())
    tasks = sorted(rows["task"].unique())
    groups = rows.drop_duplicates("task").set_index("task").loc[tasks, "group"].tolist()
    with open_ledger(url) as ledger:
        assert SECRET not in repr(ledger) and f"{user}:***@" in repr(ledger)
        ledger.register("nightly", policy=Policy(), universe=TaskUniverse(tasks, groups), tested=b, baseline=a)
        ledger.append("nightly", rows)
        ledger.decide("nightly")
    page = ledger_report(url)
    assert page.subtitle is not None and f"{scheme}://{user}:***@{host}" in page.subtitle and SECRET not in page.subtitle
    out = tmp_path / "nightly.html"
    assert main(["report", url, "-o", str(out)]) == 0
    assert SECRET not in out.read_text() and f"{user}:***@" in out.read_text()
    assert main(["report", url, "--evaluation", "other", "-o", str(tmp_path / "other.html")]) == 4
    err = capsys.readouterr().err
    assert "no evaluation 'other'" in err and f"{user}:***@" in err and SECRET not in err
    assert main(["ledger", "decide", url, "other"]) == 4
    err = capsys.readouterr().err
    assert "not registered" in err and SECRET not in err
