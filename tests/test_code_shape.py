"""The shape of the code: no function in ``src/stopwise`` longer than 100 code lines, no module longer than 600.

A code line is a line of the function that is neither blank, nor only a comment, nor part of a docstring
(the function's own or a nested function's or class's). A nested function counts in its own right and
in its parent's lines too, so splitting a long function into closures does not pass. The one way past
the limit is a vectorised kernel whose body says why it is one piece: a comment
``# vectorised kernel: <why>`` inside the function (issue 19).

A module's code lines follow the same rule over the whole file: every line that holds code, less the
docstrings of the module and of its classes and functions (issue 31: the decision hub had 1,011).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
MAX_CODE_LINES = 100
KERNEL = re.compile(r"#\s*vectorised kernel:\s*\S")
"""The comment that marks a documented vectorised kernel (it must say why)."""

KNOWN_LONG: dict[str, str] = {}
"""Long functions tolerated for now: ``path::qualified name`` -> why."""
MAX_MODULE_CODE_LINES = 600
KNOWN_LONG_MODULES: dict[str, str] = {}
"""Long modules tolerated for now: path relative to ``src`` -> why."""


@dataclass(frozen=True)
class Function:
    """One function (or method) of a module and its number of code lines."""

    name: str
    """``path::Class.method.inner`` relative to ``src``."""
    code_lines: int
    kernel: bool
    """Its body carries ``# vectorised kernel: <why>``."""


def _docstring(node: ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> range:
    """The lines of the docstring of a module, class or function (empty when it has none)."""
    first = node.body[0] if node.body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return range(first.lineno, (first.end_lineno or first.lineno) + 1)
    return range(0)


def _statements(node: ast.AST) -> list[ast.AST]:
    """The statements directly under ``node`` (functions and classes are statements: no need to enter expressions)."""
    return [child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case)]


def _code_and_comment_lines(source: str) -> tuple[set[int], dict[int, str]]:
    """The lines that hold a token other than a comment, and each line's comment."""
    code: set[int] = set()
    comments: dict[int, str] = {}
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token.string
        elif token.type not in skip:
            code.update(range(token.start[0], token.end[0] + 1))  # a multi-line string covers all its lines
    return code, comments


def functions(source: str, path: str) -> list[Function]:
    """Every function of ``source`` (methods and nested functions included) with its code-line count."""
    tree = ast.parse(source)
    code, comments = _code_and_comment_lines(source)
    code.difference_update(_docstring(tree))
    kernels = {line for line, comment in comments.items() if KERNEL.search(comment)}
    found: list[Function] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in _statements(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                code.difference_update(_docstring(child))
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                at = len(found)  # the functions in source order: a parent before its nested functions
                visit(child, f"{name}.")  # first, so that nested docstrings are out of ``code``
                span = range(min([child.lineno, *(d.lineno for d in child.decorator_list)]), (child.end_lineno or child.lineno) + 1)
                kernel = any(line in kernels for line in span)
                found.insert(at, Function(f"{path}::{name}", sum(line in code for line in span), kernel))
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def module_code_lines(source: str) -> int:
    """Code lines of a module: lines holding code, less the docstrings of the module, its classes and its functions."""
    tree = ast.parse(source)
    code, _ = _code_and_comment_lines(source)
    code.difference_update(_docstring(tree))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            code.difference_update(_docstring(node))
    return len(code)


def too_long(found: list[Function]) -> list[Function]:
    """The functions above the limit that are not marked vectorised kernels."""
    return [f for f in found if f.code_lines > MAX_CODE_LINES and not f.kernel]


def _src_functions() -> list[Function]:
    return [
        function
        for path in sorted((SRC / "stopwise").rglob("*.py"))
        for function in functions(path.read_text(encoding="utf-8"), path.relative_to(SRC).as_posix())
    ]


def test_no_function_in_src_is_longer_than_100_code_lines() -> None:
    found = _src_functions()
    assert len(found) > 500  # the walk reached the package
    long = {f.name: f.code_lines for f in too_long(found)}
    unexpected = {name: n for name, n in long.items() if name not in KNOWN_LONG}
    assert not unexpected, (
        f"functions above {MAX_CODE_LINES} code lines: {unexpected}; split them, or mark a vectorised kernel "
        "with a comment `# vectorised kernel: <why>` in its body"
    )
    stale = sorted(set(KNOWN_LONG) - set(long))
    assert not stale, f"known long functions that are short now (or gone): remove them from KNOWN_LONG: {stale}"


def long_modules(modules: dict[str, int]) -> dict[str, int]:
    """The modules (path -> code lines) above the module limit."""
    return {path: n for path, n in modules.items() if n > MAX_MODULE_CODE_LINES}


def test_no_module_in_src_is_longer_than_600_code_lines() -> None:
    modules = {path.relative_to(SRC).as_posix(): module_code_lines(path.read_text(encoding="utf-8")) for path in sorted((SRC / "stopwise").rglob("*.py"))}
    assert len(modules) > 100 and modules["stopwise/compare/_decide.py"] > 50  # the walk reached the package
    long = long_modules(modules)
    unexpected = {path: n for path, n in long.items() if path not in KNOWN_LONG_MODULES}
    assert not unexpected, f"modules above {MAX_MODULE_CODE_LINES} code lines: {unexpected}; split them, one idea per module"
    stale = sorted(set(KNOWN_LONG_MODULES) - set(long))
    assert not stale, f"known long modules that are short now (or gone): remove them from KNOWN_LONG_MODULES: {stale}"


def _synthetic_module(n_lines: int) -> str:
    """A module of ``n_lines`` (>= 2) code lines: an import, short functions and a class, padded with what does not count."""
    lines = ['"""The module docstring.', "", 'Of several lines."""', "", "import math  # a comment", ""]
    left = n_lines - 2  # the import and the class line count too
    for start in range(0, left, 10):
        size = min(10, left - start)  # a `def` line and size - 1 body lines: every function far below its own limit
        lines += [f"def f{start}():", '    """Doc', "", '    of three lines."""', "    # a comment"]
        lines += [f"    x{k} = {k}" for k in range(size - 1)] + [""]
    lines += ["class C:", '    """Class doc."""', ""]
    return "\n".join(lines)


def test_the_shape_check_fails_on_a_long_synthetic_module() -> None:
    at_limit = _synthetic_module(MAX_MODULE_CODE_LINES)
    assert module_code_lines(at_limit) == MAX_MODULE_CODE_LINES and not long_modules({"synthetic.py": MAX_MODULE_CODE_LINES})
    over = _synthetic_module(MAX_MODULE_CODE_LINES + 1)
    assert long_modules({"synthetic.py": module_code_lines(over)}) == {"synthetic.py": MAX_MODULE_CODE_LINES + 1}
    assert not too_long(functions(over, "synthetic.py"))  # no function is long: only the module is
    source = '"""Doc."""\n\n# comment\n\nclass C:\n    """Doc."""\n\n    x = """a\n    string"""\n'
    assert module_code_lines(source) == 3  # the class line and the two lines of a string that is no docstring


def _synthetic(n_lines: int, *, marker: str = "", nested: bool = False) -> str:
    """A function of ``n_lines`` code lines, padded with what does not count (docstrings, comments, blanks)."""
    body = [f"    x{i} = {i}" for i in range(n_lines - 1)]  # the `def` line counts too
    if nested:  # half of the lines in a closure: they count in the parent as well
        inner = ["    def inner():", '        """A docstring\n\n        of three lines."""'] + [f"    {line}" for line in body[: n_lines // 2]]
        body = inner + body[n_lines // 2 + 1 :]
    padding = ['    """The docstring.', "", '    Several lines long."""', "", "    # a comment", "      # another", ""]
    lines = ["def long_one():", *padding[:4], *([marker] if marker else []), *body, *padding[4:]]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("nested", [False, True], ids=["flat", "nested"])
def test_the_shape_check_fails_on_a_long_synthetic_function(nested: bool) -> None:
    at_limit = functions(_synthetic(MAX_CODE_LINES, nested=nested), "synthetic.py")
    assert at_limit[0].code_lines == MAX_CODE_LINES and not too_long(at_limit)
    over = functions(_synthetic(MAX_CODE_LINES + 1, nested=nested), "synthetic.py")
    assert [(f.name, f.code_lines) for f in too_long(over)] == [("synthetic.py::long_one", MAX_CODE_LINES + 1)]
    kernel = functions(_synthetic(MAX_CODE_LINES + 1, marker="    # vectorised kernel: one pass over the rows", nested=nested), "k.py")
    assert kernel[0].code_lines == MAX_CODE_LINES + 1 and not too_long(kernel)
    unexplained = functions(_synthetic(MAX_CODE_LINES + 1, marker="    # vectorised kernel:"), "k.py")
    assert too_long(unexplained)  # the marker must say why


def test_code_lines_skip_docstrings_comments_and_blank_lines() -> None:
    source = '''
@decorated
def f(a,
      b):
    """Doc."""
    # comment

    s = """a string
    that is code"""
    class C:
        """Class doc."""
        def m(self):
            return 1
    return s
'''
    counted = {f.name: f.code_lines for f in functions(source, "m.py")}
    assert counted == {"m.py::f": 9, "m.py::f.C.m": 2}  # decorator, signature (2), string (2), class, method (2), return
