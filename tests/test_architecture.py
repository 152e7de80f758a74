"""The layering of ``docs/architecture.md`` holds in the code: every import points to its own floor or below.

The layer table is the fenced ```` ```layers ```` block of ``docs/architecture.md`` (top floor first); the
checker below reads every module of ``src/stopwise`` with :mod:`ast` and reports

* an import of a package on a higher floor (imports inside functions and under ``TYPE_CHECKING`` count),
* a cycle between packages,
* an import of another package's private module (``from stopwise.<other package>._module import name``,
  ``import stopwise.<other package>._module``): across packages an import names the package, whose facade
  (``__init__``) is the boundary; a private top-level module or package (``stopwise._atomic``,
  ``stopwise._logs``) is its own unit and is imported by its own name,
* ``from stopwise.<other package> import _private_name``,
* a package or top-level module that is on no floor.

The last tests feed the checker deliberately wrong modules and show that it fails on them.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "stopwise"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

KNOWN_PRIVATE_IMPORTS: frozenset[tuple[str, str, str]] = frozenset()
"""(importing module, imported module, name) of private names allowed across packages: none since issue 19."""


def read_layers(text: str) -> list[list[str]]:
    """The floors of a ```` ```layers ```` block, top first: each a list of package names or patterns."""
    found = re.search(r"^```layers\n(.*?)^```", text, re.M | re.S)
    if found is None:
        raise ValueError("docs/architecture.md has no ```layers block")
    floors = [line.split("|", 1)[0].split() for line in found.group(1).splitlines() if line.strip()]
    if not floors or any(not floor for floor in floors):
        raise ValueError("every line of the ```layers block names at least one package before `|`")
    return floors


@dataclass(frozen=True)
class Problem:
    """One broken rule: where, and what."""

    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


class Layering:
    """Checks the imports of stopwise modules against the floors of the layer table."""

    def __init__(self, floors: list[list[str]]) -> None:
        self.floors = floors
        self.edges: dict[str, set[str]] = {}

    def floor(self, unit: str) -> int | None:
        """The height of a package or top-level module: 0 for the bottom floor; None when it is on none."""
        for index, patterns in enumerate(self.floors):
            if any(fnmatch.fnmatchcase(unit, pattern) for pattern in patterns):
                return len(self.floors) - 1 - index
        return None

    @staticmethod
    def unit_of(relative: str) -> str:
        """``stopwise/ledger/_events.py`` -> ``ledger``; ``stopwise/_atomic.py`` -> ``_atomic``; the root -> ``stopwise``."""
        parts = Path(relative).parts
        if len(parts) > 2:
            return parts[1]
        stem = Path(parts[-1]).stem
        return "stopwise" if stem == "__init__" else stem

    def _targets(self, relative: str, node: ast.AST) -> list[tuple[str, str, list[str]]]:
        """(target unit, imported module, imported names) of one import statement."""
        if isinstance(node, ast.Import):
            return [(self._unit_of_module(a.name), a.name, []) for a in node.names if a.name.split(".")[0] == "stopwise"]
        if not isinstance(node, ast.ImportFrom):
            return []
        module = node.module or ""
        if node.level:
            base = list(Path(relative).with_suffix("").parts)[: -node.level]
            module = ".".join([*base, module] if module else base)
        if module.split(".")[0] != "stopwise":
            return []
        names = [a.name for a in node.names]
        if module == "stopwise":  # `from stopwise import records` names a package; `from stopwise import decide` the root
            return [(name if self.floor(name) is not None else "stopwise", module, [name]) for name in names]
        return [(self._unit_of_module(module), module, names)]

    @staticmethod
    def _unit_of_module(module: str) -> str:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 else "stopwise"

    def check_source(self, relative: str, source: str) -> list[Problem]:
        """The problems of one module, ``relative`` to ``src`` (``stopwise/records/_policy.py``)."""
        unit = self.unit_of(relative)
        height = self.floor(unit)
        if height is None:
            return [Problem(relative, f"`{unit}` is on no floor of the layer table in docs/architecture.md")]
        problems = []
        for node in ast.walk(ast.parse(source, filename=relative)):
            for target, module, names in self._targets(relative, node):
                where = f"{relative}:{getattr(node, 'lineno', 0)}"
                if target == unit:
                    continue
                self.edges.setdefault(unit, set()).add(target)
                target_height = self.floor(target)
                if target_height is None:
                    problems.append(Problem(where, f"imports `{module}`, which is on no floor of the layer table"))
                elif target_height > height:
                    problems.append(Problem(where, f"`{unit}` imports `{module}` from a higher floor (`{target}`)"))
                inner = [part for part in module.split(".")[2:] if part.startswith("_") and not part.endswith("__")]
                if inner and module.split(".")[1] == target:
                    problems.append(Problem(where, f"imports the private module `{module}` across packages; import from `stopwise.{target}`"))
                private = [n for n in names if n.startswith("_") and not n.endswith("__") and (relative, module, n) not in KNOWN_PRIVATE_IMPORTS]
                if private:
                    problems.append(Problem(where, f"imports the private {', '.join(private)} of `{module}` across packages"))
        return problems

    def cycles(self) -> list[Problem]:
        """Cycles in the package graph gathered by :meth:`check_source`."""
        problems, state = [], dict.fromkeys(self.edges, 0)  # 0 new, 1 on the path, 2 done

        def visit(unit: str, path: list[str]) -> None:
            state[unit] = 1
            for target in sorted(self.edges.get(unit, ())):
                if state.get(target) == 1:
                    cycle = [*path[path.index(target) :], target]
                    problems.append(Problem("packages", "import cycle " + " -> ".join(cycle)))
                elif state.get(target, 0) == 0:
                    visit(target, [*path, target])
            state[unit] = 2

        for unit in sorted(self.edges):
            if state[unit] == 0:
                visit(unit, [unit])
        return problems

    def check_tree(self, root: Path) -> list[Problem]:
        """Every module under ``root`` (a ``stopwise`` source directory), then the cycles."""
        problems = []
        for path in sorted(root.rglob("*.py")):
            relative = str(path.relative_to(root.parent))
            problems += self.check_source(relative, path.read_text(encoding="utf-8"))
        return problems + self.cycles()


@pytest.fixture(scope="module")
def floors() -> list[list[str]]:
    return read_layers(ARCHITECTURE.read_text(encoding="utf-8"))


def test_the_layer_table_names_the_expected_floors(floors: list[list[str]]) -> None:
    assert floors[0] == ["stopwise"] and floors[1] == ["cli"] and floors[-2] == ["records"]
    assert "_*" in floors[-1] and "errors" in floors[-1]
    listed = [name for floor in floors for name in floor]
    assert len(listed) == len(set(listed)), "a package is on two floors"


def test_every_package_is_on_a_floor(floors: list[list[str]]) -> None:
    layering = Layering(floors)
    units = {p.name for p in SOURCE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    units |= {p.stem for p in SOURCE.glob("*.py") if p.stem != "__init__"}
    assert sorted(u for u in units if layering.floor(u) is None) == []


def test_the_code_obeys_the_layers(floors: list[list[str]]) -> None:
    problems = Layering(floors).check_tree(SOURCE)
    assert [str(p) for p in problems] == []


def test_a_floor_may_name_a_package_that_does_not_exist_yet(floors: list[list[str]]) -> None:
    layering = Layering(floors)
    assert layering.floor("live") is not None  # `live` is in the table, with or without src/stopwise/live
    assert layering.check_source("stopwise/live/_follow.py", "from stopwise.ledger import open_ledger\nfrom stopwise.ingest import read_inspect\n") == []
    assert layering.check_source("stopwise/inspect/_manager.py", "from stopwise.live import follow\n") == []


# The checker fails on deliberately wrong imports.


def test_an_upward_import_fails(floors: list[list[str]]) -> None:
    layering = Layering(floors)
    wrong = "from stopwise.records import Policy\n\ndef late():\n    from stopwise.compare import decide  # records may not use compare\n    return decide\n"
    problems = layering.check_source("stopwise/records/_policy.py", wrong)
    assert [str(p) for p in problems] == ["stopwise/records/_policy.py:4: `records` imports `stopwise.compare` from a higher floor (`compare`)"]
    for source in ("import stopwise.cli.main\n", "from stopwise import inspect\n", "from stopwise import decide\n", "import stopwise\n"):
        assert layering.check_source("stopwise/ledger/_ledger.py", source) != [], source
    assert layering.check_source("stopwise/_atomic.py", "from stopwise.records import Policy\n") != []


def test_an_upward_import_in_a_copy_of_the_tree_fails(floors: list[list[str]], tmp_path: Path) -> None:
    copy = tmp_path / "stopwise"
    (copy / "compare").mkdir(parents=True)
    (copy / "replay").mkdir()
    (copy / "compare" / "__init__.py").write_text("from stopwise.replay import replay_grid  # compare is below replay\n")
    (copy / "replay" / "__init__.py").write_text("from stopwise.compare import decide\n")
    problems = [str(p) for p in Layering(floors).check_tree(copy)]
    assert problems == [
        "stopwise/compare/__init__.py:1: `compare` imports `stopwise.replay` from a higher floor (`replay`)",
        "packages: import cycle compare -> replay -> compare",
    ]


def test_a_cycle_within_a_floor_fails(floors: list[list[str]]) -> None:
    layering = Layering(floors)
    assert layering.check_source("stopwise/replay/_run.py", "from stopwise.ledger import open_ledger\n") == []
    assert layering.check_source("stopwise/ledger/_ledger.py", "from stopwise.replay import replay_grid\n") == []
    assert [str(p) for p in layering.cycles()] == ["packages: import cycle ledger -> replay -> ledger"]


def test_a_private_name_across_packages_fails(floors: list[list[str]]) -> None:
    layering = Layering(floors)
    problems = layering.check_source("stopwise/compare/_pairing.py", "from stopwise.records._outcomes import _canonical_flags\n")
    assert [p.what for p in problems] == [
        "imports the private module `stopwise.records._outcomes` across packages; import from `stopwise.records`",
        "imports the private _canonical_flags of `stopwise.records._outcomes` across packages",
    ]
    problems = layering.check_source("stopwise/compare/_pairing.py", "from stopwise.records import _columns\n")
    assert [p.what for p in problems] == ["imports the private _columns of `stopwise.records` across packages"]
    assert layering.check_source("stopwise/records/_columns.py", "from stopwise.records._outcomes import _canonical_flags\n") == []  # own package


def test_a_private_module_across_packages_fails(floors: list[list[str]]) -> None:
    """Public names of another package's private module are refused too: the package's facade is the boundary."""
    layering = Layering(floors)
    wrong = (
        "from stopwise.ingest._inspect import read_log  # a public name, a private module\n"
        "\n"
        "def late():\n"
        "    import stopwise.replay._live\n"
        "    from stopwise._logs._zip import zip_member\n"
        "    return stopwise.replay._live, zip_member\n"
    )
    problems = layering.check_source("stopwise/live/_logs.py", wrong)
    assert [str(p) for p in problems] == [
        "stopwise/live/_logs.py:1: imports the private module `stopwise.ingest._inspect` across packages; import from `stopwise.ingest`",
        "stopwise/live/_logs.py:4: imports the private module `stopwise.replay._live` across packages; import from `stopwise.replay`",
        "stopwise/live/_logs.py:5: imports the private module `stopwise._logs._zip` across packages; import from `stopwise._logs`",
    ]
    right = (
        "from stopwise._atomic import Outputs\nfrom stopwise._logs import load_json\nfrom stopwise.ingest import read_inspect\n"
        "from stopwise.live._follow import follow  # its own package\n"
    )
    assert layering.check_source("stopwise/live/_logs.py", right) == []


def test_a_package_on_no_floor_fails(floors: list[list[str]]) -> None:
    layering = Layering(floors)
    assert [p.what for p in layering.check_source("stopwise/plugins/__init__.py", "")] == [
        "`plugins` is on no floor of the layer table in docs/architecture.md"
    ]
    assert [p.what for p in layering.check_source("stopwise/cli/main.py", "import stopwise.plugins\n")] == [
        "imports `stopwise.plugins`, which is on no floor of the layer table"
    ]
