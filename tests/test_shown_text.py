"""What stopwise shows of user text: database passwords hidden (stopwise._redact), names escaped (stopwise._text)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stopwise._redact import redact_url
from stopwise._text import escape_text, for_html, for_terminal
from stopwise.cli.main import main
from stopwise.errors import LedgerError, terminal_text
from stopwise.records import synthetic_benchmark, write_outcomes

SECRET = "s3cret"
HOSTILE = "A\x1b[2J\x1b]0;pwned\x07X\u202eZ"
"""Clears the screen, sets the terminal title, rings the bell, then reverses the rest of the line."""


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://eval:s3cret@db:5432/ledger", "postgresql://eval:***@db:5432/ledger"),
        ("postgresql+psycopg://eval:s3cret@db/ledger", "postgresql+psycopg://eval:***@db/ledger"),
        ("postgres://eval:s3cret@db/ledger", "postgres://eval:***@db/ledger"),
        ("mysql://root:s3cret@localhost/db", "mysql://root:***@localhost/db"),
        ("mysql+pymysql://root:s3cret@localhost:3306/db?charset=utf8", "mysql+pymysql://root:***@localhost:3306/db?charset=utf8"),
        ("sqlite://eval:s3cret@//tmp/ledger.db", "sqlite://eval:***@//tmp/ledger.db"),
        ("postgresql://eval:s3@cr/et@db/ledger", "postgresql://eval:***@db/ledger"),  # an unencoded @ in the password
        ("postgresql://db/ledger?user=eval&password=s3cret", "postgresql://db/ledger?user=eval&password=***"),
        ("postgresql://eval@db:5432/ledger", "postgresql://eval@db:5432/ledger"),  # no password: unchanged
        ("postgresql://db:5432/ledger", "postgresql://db:5432/ledger"),
        ("sqlite:///runs/ledger.db", "sqlite:///runs/ledger.db"),
        ("runs/user:name@host.db", "runs/user:name@host.db"),  # a plain path is not a URL
    ],
)
def test_every_kind_of_database_url_has_its_password_hidden(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert redact_url(f"ledger '{url}': database error") == f"ledger '{shown}': database error"
    assert terminal_text(f"ledger {url}\n  gone") == f"ledger {shown}\n  gone"


def test_a_ledger_url_in_an_error_message_has_its_password_hidden(capsys: pytest.CaptureFixture[str]) -> None:
    from stopwise.ledger import ledger_url

    with pytest.raises(LedgerError) as caught:
        ledger_url("mysql+pymysql://root:s3cret@localhost/db")
    assert SECRET not in str(caught.value) and "root:***@localhost" in str(caught.value)
    assert main(["ledger", "verify", "mysql://root:s3cret@localhost/db", "nightly"]) == 4
    err = capsys.readouterr().err
    assert "unsupported scheme" in err and "root:***@localhost" in err and SECRET not in err
    assert main(["report", "postgresql+psycopg://eval:s3cret@db/ledger"]) == 4  # no --out
    err = capsys.readouterr().err
    assert "a ledger URL; pass --out" in err and "eval:***@db" in err and SECRET not in err
    assert main(["report", "mysql://root:s3cret@localhost/db", "-o", "unused.html"]) == 4
    err = capsys.readouterr().err
    assert "no such file" in err and SECRET not in err


def test_a_missing_ledger_file_is_named_without_the_password(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite://eval:{SECRET}@/{tmp_path / 'missing.db'}"
    assert main(["report", url, "-o", str(tmp_path / "out.html")]) == 4
    err = capsys.readouterr().err
    assert "no such ledger file" in err and "eval:***@" in err and SECRET not in err
    assert main(["ledger", "verify", url, "nightly"]) == 4
    err = capsys.readouterr().err
    assert "eval:***@" in err and SECRET not in err


def test_control_and_bidi_characters_are_shown_as_escapes() -> None:
    assert escape_text(HOSTILE) == "A\\x1b[2J\\x1b]0;pwned\\x07X\\u202eZ"
    for text in (for_terminal(HOSTILE), for_html(HOSTILE)):
        assert not any(ch in text for ch in "\x1b\x07\u202e") and "\\u202e" in text
    assert for_terminal("[bold]x\x9b") == "\\[bold]x\\x9b"  # markup and a C1 control (CSI)
    assert for_html('<b a="1">\u2066') == "&lt;b a=&quot;1&quot;&gt;\\u2066"


@pytest.fixture(scope="module")
def hostile_rows(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    rows = synthetic_benchmark(40, 2, rng=1)
    a, b = sorted(rows["system"].unique())
    rows["system"] = rows["system"].replace({b: HOSTILE})
    path = tmp_path_factory.mktemp("hostile") / "rows.csv"
    write_outcomes(rows, path)
    return path, a


def test_decide_prints_a_hostile_system_name_escaped(hostile_rows: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    path, baseline = hostile_rows
    code = main(["decide", str(path), "-t", HOSTILE, "-b", baseline, "--complete"])
    out = capsys.readouterr().out
    assert code in (0, 1, 2, 3), out
    result_line = next(line for line in out.splitlines() if f"vs {baseline}" in line)
    assert "A\\x1b[2J\\x1b]0;pwned\\x07X\\u202eZ vs" in result_line
    assert not any(ch in out for ch in "\x1b\x07\u202e")


def test_an_html_report_shows_a_hostile_system_name_escaped(hostile_rows: tuple[Path, str], tmp_path: Path) -> None:
    path, baseline = hostile_rows
    record = tmp_path / "record.json"
    assert main(["decide", str(path), "-t", HOSTILE, "-b", baseline, "--complete", "--json"]) in (0, 1, 2, 3)
    out = tmp_path / "report.html"
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        main(["decide", str(path), "-t", HOSTILE, "-b", baseline, "--complete", "--json"])
    record.write_text(buffer.getvalue())
    assert main(["report", str(record), "-o", str(out)]) == 0
    html = out.read_text()
    assert not any(ch in html for ch in "\x1b\x07\u202e")
    assert "A\\x1b[2J\\x1b]0;pwned\\x07X\\u202eZ" in html
