"""The synthetic record's logistic function: SciPy's expit bit for bit, with no SciPy import and no overflow warning."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import expit

from stopwise.records._synthetic import _expit


def test_expit_equals_scipy_bit_for_bit() -> None:
    x = np.concatenate(
        [np.linspace(-800.0, 800.0, 200_001), np.random.default_rng(0).normal(0.0, 4.0, 100_000), [-np.inf, np.inf, 0.0, -0.0]]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # exp overflows for x < -709: no RuntimeWarning may escape
        got = _expit(x)
    assert np.array_equal(got, expit(x))
    assert got[0] == 0.0 and got[-3] == 1.0
