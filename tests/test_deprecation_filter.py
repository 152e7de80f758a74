"""pytest's configuration turns stopwise's own deprecation warnings into errors when stopwise triggers them.

``pyproject.toml`` sets ``filterwarnings = ['error:(stopwise\\.|settings\\[):DeprecationWarning:stopwise\\b']``:
the module field matches the module a warning is attributed to (with ``stacklevel=2`` the caller of the
deprecated name), so a deprecated name used by ``src/stopwise`` (or by a doctest there) fails the run,
while tests of the deprecations themselves (modules ``tests.*``, inside ``pytest.warns``) still pass.
"""

from __future__ import annotations

import warnings

import pytest

import stopwise


def _attributed(message: str, module: str) -> None:
    warnings.warn_explicit(message, DeprecationWarning, "somewhere.py", 1, module=module, registry={})


@pytest.mark.parametrize(
    "message",
    [
        "stopwise.STATUSES is deprecated and will be removed in the next release; use stopwise.records.STATUSES",
        "settings['n_orders'] is deprecated: the replay settings are a ReplaySettings; read settings.n_orders",
    ],
)
def test_a_stopwise_deprecation_triggered_by_stopwise_is_an_error(message: str) -> None:
    with pytest.raises(DeprecationWarning, match="is deprecated"):
        _attributed(message, "stopwise.compare._decide")


def test_other_warnings_and_other_callers_only_warn() -> None:
    with pytest.warns(DeprecationWarning):  # a third-party deprecation triggered from stopwise
        _attributed("The 'initial' parameter is deprecated, use 'multiplier' instead", "stopwise.live._logs")
    with pytest.warns(DeprecationWarning):  # a package merely named like stopwise
        _attributed("stopwise.X is deprecated", "stopwise_extras.module")
    with pytest.deprecated_call():  # a user (here: this test module) of an old name
        assert stopwise.STATUSES == stopwise.records.STATUSES
