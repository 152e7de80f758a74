"""Lazy exports of a package (PEP 562): each public name is imported from its module on first use.

A package lists its exports once, as ordinary imports inside an ``if TYPE_CHECKING:`` block (type
checkers and readers see them there), and hands its ``__getattr__`` and ``__dir__`` to
:func:`lazy_exports`, which reads that block from the package's source the first time a name is
asked for. ``import stopwise.records`` then costs nothing, and ``from stopwise.records import
Policy`` loads the policy module only, not pandas with the outcome reader: the command line starts
faster for it. With ``subpackages``, a public name that is no export but a subpackage (``stopwise.replay``)
is imported too.

The header of such a package (its imports and names stay its own)::

    import typing as _typing

    from stopwise._lazy import lazy_exports as _lazy_exports

    if _typing.TYPE_CHECKING:  # the lazy exports (stopwise._lazy)
        from stopwise.records._policy import Policy, load_policy

    __getattr__, __dir__ = _lazy_exports(__name__, __file__)

To export a name, import it in that block and add it to ``__all__`` (``tests/test_exports.py`` checks
that both agree).
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_exports"]


def _exports(package: str, init_file: str) -> dict[str, tuple[str, str]]:
    """Exported name -> (module, attribute), from the ``if TYPE_CHECKING:`` imports of ``init_file``."""
    found: dict[str, tuple[str, str]] = {}
    with open(init_file, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom):
                    parents = package.split(".")[: len(package.split(".")) + 1 - statement.level]  # a relative import
                    module = ".".join([*parents, statement.module or ""] if statement.level else [statement.module or ""])
                    for alias in statement.names:
                        found[alias.asname or alias.name] = (module, alias.name)
    return found


def lazy_exports(
    package: str,
    init_file: str,
    *,
    subpackages: bool = False,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of a package whose exports load on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    init_file : str
        Its ``__file__``: the ``if TYPE_CHECKING:`` block there lists the exports.
    subpackages : bool, optional
        Also import a subpackage asked for by name (``stopwise.replay`` without ``import stopwise.replay``).

    Returns
    -------
    tuple of callable
        ``(__getattr__, __dir__)``, to assign at the end of the package's ``__init__``.

    Examples
    --------
    ``stopwise.records`` ends with ``__getattr__, __dir__ = lazy_exports(__name__, __file__)``:

    >>> import stopwise.records
    >>> from stopwise.records._policy import Policy
    >>> stopwise.records.Policy is Policy
    True
    """
    table: dict[str, tuple[str, str]] = {}
    read: list[bool] = []

    def exports() -> dict[str, tuple[str, str]]:
        if not read:
            table.update(_exports(package, init_file))
            read.append(True)
        return table

    def __getattr__(name: str) -> Any:
        found = exports().get(name)
        if found is None:
            if subpackages and not name.startswith("_") and importlib.util.find_spec(f"{package}.{name}") is not None:
                return __import__(f"{package}.{name}", fromlist=["__name__"])  # a subpackage, e.g. stopwise.replay
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = found
        # __import__, not importlib.import_module: `python -X importtime` then shows the module's own cost
        value = getattr(__import__(module, fromlist=[attribute]), attribute)
        setattr(sys.modules[package], name, value)  # later look-ups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports()))

    return __getattr__, __dir__
