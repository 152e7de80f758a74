"""Optional capabilities (the extras of ``pip install 'stopwise[...]'``) and the guard that names a missing one.

The core install (the decision layer, records, replay, the SQLite ledger, report pages, the command line) needs
no extra. A module that needs one calls :func:`require_extra` before importing it, so that a missing extra is
one line naming what to install (:class:`~stopwise.errors.MissingExtraError`), never a traceback from deep
inside an import.

======== ================================== ===================================================================
extra    installs                           needed by
======== ================================== ===================================================================
early    scikit-learn, LightGBM             ``stopwise.early`` (``stopwise early ...``, an early evaluation's report)
service  FastAPI, uvicorn, httpx            finality's controlled replay (``stopwise finality replay``)
inspect  inspect_ai                         ``stopwise.inspect`` (the Inspect AI early-stopping managers)
postgres psycopg 3                          a ledger on PostgreSQL (a ``postgresql://`` URL)
all      every extra above
======== ================================== ===================================================================
"""

from __future__ import annotations

import importlib

from stopwise.errors import MissingExtraError

__all__ = ["EXTRAS", "require_extra"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "early": ("sklearn", "lightgbm"),
    "service": ("fastapi", "uvicorn", "httpx"),
    "inspect": ("inspect_ai",),
    "postgres": ("psycopg",),
}
"""Extra -> the modules it installs (import names), as ``[project.optional-dependencies]`` of pyproject.toml
lists their distributions (a test keeps the two in step)."""


def require_extra(extra: str, feature: str) -> None:
    """Raise :class:`~stopwise.errors.MissingExtraError` unless every module of ``extra`` imports.

    Parameters
    ----------
    extra : str
        A key of :data:`EXTRAS`.
    feature : str
        What needs it, as the user named it; the message starts with it.

    Raises
    ------
    MissingExtraError
        A module of the extra is not installed (or fails to import): "``feature`` needs the [extra] extra:
        pip install 'stopwise[extra]'".

    Examples
    --------
    Before the imports of a module that needs scikit-learn and LightGBM (``stopwise/early/__init__.py``)::

        require_extra("early", "stopwise early")

    Without them, ``import stopwise.early`` then raises "stopwise early needs the [early] extra:
    pip install 'stopwise[early]'".
    """
    for module in EXTRAS[extra]:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise MissingExtraError(extra, feature, module) from exc
