"""The public names of stopwise.finality: sorted, complete, and importable."""

from __future__ import annotations

import stopwise.finality as finality


def test_all_is_sorted_isort_style() -> None:
    names = finality.__all__
    key = [(0 if n.isupper() else 1 if n[0].isupper() else 2, n) for n in names]
    assert key == sorted(key)
    assert len(set(names)) == len(names)


def test_all_names_exist_and_public_objects_are_listed() -> None:
    for name in finality.__all__:
        assert hasattr(finality, name), name
    public = {
        n for n in vars(finality) if not n.startswith("_") and not isinstance(getattr(finality, n), type(finality))
    }
    assert public == set(finality.__all__)
