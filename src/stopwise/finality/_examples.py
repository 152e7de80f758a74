"""Example completion arguments shipped with stopwise (one per replay condition, and two more)."""

from __future__ import annotations

from importlib import resources

from stopwise.errors import InputError
from stopwise.finality._argument import ArgumentFormat, CompletionArgument, parse_argument

__all__ = ["EXAMPLE_ARGUMENTS", "example_argument", "example_text"]

EXAMPLE_ARGUMENTS: tuple[str, ...] = (
    "async-no-reconciliation",
    "b-before-a",
    "bounded-window",
    "closed-simulator",
    "grouped-analysis",
    "namespaced-runs",
    "shared-state",
    "terminal-reconciliation",
    "verified-cancellation",
    "verified-reset",
)
"""Names of the example completion arguments (:func:`example_argument`)."""

_FILES = {name: f"{name}.yaml" if name == "bounded-window" else f"{name}.toml" for name in EXAMPLE_ARGUMENTS}


def example_text(name: str) -> str:
    """The text of an example completion argument (TOML, or YAML for ``bounded-window``).

    Parameters
    ----------
    name : str
        One of :data:`EXAMPLE_ARGUMENTS`.

    Raises
    ------
    InputError
        ``name`` is not one of :data:`EXAMPLE_ARGUMENTS`.

    Examples
    --------
    >>> from stopwise.finality import example_text
    >>> example_text("closed-simulator").splitlines()[3]
    'version = 1'
    """
    if name not in _FILES:
        raise InputError(f"example argument must be one of {', '.join(EXAMPLE_ARGUMENTS)}; got {name!r}")
    return resources.files("stopwise.finality").joinpath("examples", _FILES[name]).read_text(encoding="utf-8")


def example_argument(name: str) -> CompletionArgument:
    """Load an example completion argument by name.

    Parameters
    ----------
    name : str
        One of :data:`EXAMPLE_ARGUMENTS`.

    Returns
    -------
    CompletionArgument

    Raises
    ------
    InputError
        ``name`` is not one of :data:`EXAMPLE_ARGUMENTS`.

    Examples
    --------
    >>> from stopwise.finality import example_argument
    >>> example_argument("namespaced-runs").protocol.shared_credentials
    False
    """
    text = example_text(name)
    file = _FILES[name]
    fmt: ArgumentFormat = "yaml" if file.endswith(".yaml") else "toml"
    return parse_argument(text, format=fmt, source=f"stopwise/finality/examples/{file}")
