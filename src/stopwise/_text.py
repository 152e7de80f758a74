r"""User-provided text made safe to show: on a terminal (through Rich) and in an HTML page.

Names of systems, tasks and evaluations, reasons, file names and messages come from users and their
files. Shown raw, a name such as ``"A\x1b[2J"`` would clear the reader's terminal, ``"\x07"`` ring its
bell, ``"\u202e"`` (right-to-left override) would show text reversed, and ``"<script>"`` would run
in a report. Every such string is shown through one of:

* :func:`escape_text`: every control or invisible character (C0 and C1 controls, ESC, BEL, DEL,
  bidirectional overrides and isolates, zero-width characters, BOM) written as a visible ``\xNN`` /
  ``\uNNNN`` escape; the base of the two below.
* :func:`for_terminal`: :func:`escape_text`, then Rich markup escaped (``[bold]`` prints as typed):
  for every user string the command line prints.
* :func:`for_html`: :func:`escape_text`, then HTML-escaped: for every user string in a report.
* :func:`terminal_text`: a whole error message (database passwords hidden, long lines cut).
"""

from __future__ import annotations

import unicodedata

from stopwise._redact import redact_url

__all__ = ["MAX_LINE_CHARS", "escape_text", "for_html", "for_terminal", "printable", "terminal_text"]


def escape_text(text: str, *, keep_newlines: bool = True) -> str:
    r"""Escape every control or invisible character of ``text`` (ESC, NUL, BOM, ...) as ``\xNN``.

    Printable text, and newlines when ``keep_newlines``, pass unchanged; nothing that could move the
    cursor or change a terminal's colours survives.

    Examples
    --------
    >>> escape_text("red\x1b[31m\ufeffA\x00")
    'red\\x1b[31m\\ufeffA\\x00'
    """
    if text.isprintable():
        return text
    out: list[str] = []
    for ch in text:
        if ch.isprintable() or (keep_newlines and ch == "\n"):
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out)


MAX_LINE_CHARS = 1000
"""How long one line of a message printed by the command line may be (longer ones are cut)."""


def terminal_text(message: str) -> str:
    """A message as the command line prints it.

    Database passwords hidden (:func:`stopwise._redact.redact_url`), control characters escaped, every
    line cut to :data:`MAX_LINE_CHARS` characters (saying how long it was).

    Examples
    --------
    >>> terminal_text("bad: " + "x" * 2000)[-40:]
    'xxxxxxxxxxx... (line of 2005 characters)'
    >>> terminal_text("ledger postgresql://eval:s3cret@db/ledger: no such evaluation")
    'ledger postgresql://eval:***@db/ledger: no such evaluation'
    """
    lines = escape_text(redact_url(message)).split("\n")
    return "\n".join(
        line if len(line) <= MAX_LINE_CHARS else f"{line[:MAX_LINE_CHARS]}... (line of {len(line)} characters)"
        for line in lines
    )


def for_terminal(value: object) -> str:
    r"""``value`` as text to print through Rich: control and bidi characters escaped, markup escaped.

    Newlines are kept (a multi-line reason stays multi-line).

    Examples
    --------
    >>> for_terminal("A\x1b[2J\x1b]0;pwned\x07X")
    'A\\x1b[2J\\x1b]0;pwned\\x07X'
    >>> for_terminal("[bold]evil\u202etxt.exe")
    '\\[bold]evil\\u202etxt.exe'
    """
    from rich.markup import escape

    return escape(escape_text(str(value)))


def for_html(value: object, *, quote: bool = True) -> str:
    r"""``value`` as HTML text: control and bidi characters escaped, then ``<``, ``>``, ``&`` (and quotes) escaped.

    Examples
    --------
    >>> for_html("<b>A</b>\x1b[2J\u202e & co")
    '&lt;b&gt;A&lt;/b&gt;\\x1b[2J\\u202e &amp; co'
    """
    import html

    return html.escape(escape_text(str(value)), quote=quote)


def printable(name: str) -> str:
    r"""``name`` with control and format characters written as escapes (``\x1b`` for ESC): names are data.

    Every ingest reader passes the system and task names of its rows through it, so a log cannot drive a
    terminal through them (``ingest -o -``); escaping twice changes nothing.

    Examples
    --------
    >>> printable("mockllm/\x1b[31mred\x1b[0m")
    'mockllm/\\x1b[31mred\\x1b[0m'
    >>> printable("gpt-4o")
    'gpt-4o'
    """
    if name.isprintable():
        return name
    return "".join(
        (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
        if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")
        else c
        for c in name
    )
