"""The public names of ``stopwise.early``: sorted, all present, nothing public left out."""

from __future__ import annotations

import types

import stopwise.early as early


def test_all_is_sorted_and_importable() -> None:
    assert early.__all__ == sorted(early.__all__, key=lambda n: (not n.isupper(), n))
    for name in early.__all__:
        assert hasattr(early, name), name


def test_every_public_attribute_is_exported() -> None:
    public = {n for n, v in vars(early).items() if not n.startswith("_") and not isinstance(v, types.ModuleType)}
    assert public == set(early.__all__)
