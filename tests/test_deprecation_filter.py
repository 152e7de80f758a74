"""pytest's configuration turns stopwise's own deprecation warnings into errors when stopwise triggers them.

``pyproject.toml`` sets ``filterwarnings = ['error:stopwise\\.:DeprecationWarning:stopwise\\b']``:
the module field matches the module a warning is attributed to (with ``stacklevel=2`` the caller of the
deprecated name), so a deprecated name used by ``src/stopwise`` (or by a doctest there) fails the run,
while tests of the deprecations themselves (modules ``tests.*``, inside ``pytest.warns``) still pass.
stopwise 0.2 deprecates nothing (the aliases of 0.1 were removed); the filter is kept for the next
deprecation, whose message starts with the dotted name (``stopwise.<package>.<name> is deprecated ...``),
and these tests attribute synthetic warnings to show that it holds.
"""

from __future__ import annotations

import warnings

import pytest


def _attributed(message: str, module: str) -> None:
    warnings.warn_explicit(message, DeprecationWarning, "somewhere.py", 1, module=module, registry={})


@pytest.mark.parametrize(
    "message",
    [
        "stopwise.records.old_name is deprecated and will be removed in the next release; use stopwise.records.new_name",
        "stopwise.replay.ReplaySettings.old_field is deprecated: read new_field",
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
    with pytest.deprecated_call():  # a user (here: this test module) of a deprecated stopwise name
        _attributed("stopwise.records.old_name is deprecated; use stopwise.records.new_name", "tests.test_deprecation_filter")
