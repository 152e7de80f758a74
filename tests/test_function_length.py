"""No function of the packages listed here is longer than 100 code lines, except documented vectorised kernels.

Code lines are lines holding a token other than a comment: blank lines, comments and docstrings do
not count (a multi-line expression counts every line it spans). A function that must stay whole
(one vectorised computation) says so in a comment ``# vectorised kernel: <why>`` on one of the two
lines above its ``def`` or right below it. Issue 19 asks this of all of ``src/``; the packages
restructured so far are listed in :data:`CHECKED`.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import pytest

import stopwise

MAX_CODE_LINES = 100
SRC = Path(stopwise.__file__).parent
CHECKED = ("early", "finality", "report", "inspect", "_atomic.py", "_files.py", "_limits.py", "_redact.py", "_text.py", "errors.py")
KERNEL = "# vectorised kernel:"


def _code_lines(source: str, tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            lines.update(range(token.start[0], token.end[0] + 1))
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                lines.difference_update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def long_functions(path: Path, limit: int = MAX_CODE_LINES) -> list[str]:
    """``line name (n code lines)`` of every function in ``path`` above ``limit`` code lines and not marked a kernel."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    code = _code_lines(source, tree)
    text = source.splitlines()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            n = sum(1 for line in code if node.lineno <= line <= (node.end_lineno or node.lineno))
            near = text[max(0, node.lineno - 3) : node.lineno + 1]
            if n > limit and not any(KERNEL in line for line in near):
                found.append(f"{node.lineno} {node.name} ({n} code lines)")
    return found


def _files() -> list[Path]:
    out: list[Path] = []
    for name in CHECKED:
        target = SRC / name
        out.extend(sorted(target.rglob("*.py")) if target.is_dir() else [target])
    return out


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(SRC)))
def test_no_function_is_longer_than_100_code_lines(path: Path) -> None:
    assert long_functions(path) == []


def _assignments(n: int) -> str:
    return "".join(f"    x{i} = {i}  # a comment\n\n" for i in range(n))


def test_the_count_skips_blank_lines_comments_and_docstrings_and_marked_kernels(tmp_path: Path) -> None:
    doc = '    """A docstring\n    of three lines\n    """\n'
    (tmp_path / "m.py").write_text(f"def short():\n{doc}{_assignments(99)}\n\ndef long():\n{doc}{_assignments(101)}")
    assert [entry.split(" ", 1)[1] for entry in long_functions(tmp_path / "m.py")] == ["long (102 code lines)"]
    (tmp_path / "k.py").write_text(f"# vectorised kernel: one array expression\ndef long():\n{_assignments(101)}")
    assert long_functions(tmp_path / "k.py") == []
