"""The synthetic record's logistic function: correct to 2 ulp, no SciPy import and no overflow warning."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import expit

from stopwise.records._synthetic import _expit


def test_expit_is_the_logistic_function_to_two_ulp() -> None:
    x = np.concatenate(
        [np.linspace(-800.0, 800.0, 200_001), np.random.default_rng(0).normal(0.0, 4.0, 100_000), [-np.inf, np.inf, 0.0, -0.0]]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # exp overflows for x < -709: no RuntimeWarning may escape
        got = _expit(x)
    with np.errstate(over="ignore"):  # the reference in extended precision (80-bit on x86-64), rounded once
        reference = (1.0 / (1.0 + np.exp(-x.astype(np.longdouble)))).astype(np.float64)
    normal = x > -708.0  # results above the smallest normal double
    np.testing.assert_array_max_ulp(got[normal], reference[normal], maxulp=2)
    assert np.abs(got[~normal] - reference[~normal]).max() < np.finfo(np.float64).smallest_normal  # 0 or subnormal
    # SciPy's expit agrees to 2 ulp (bit for bit up to SciPy 1.16; 1.17 computes it differently)
    np.testing.assert_array_max_ulp(got[normal], expit(x[normal]), maxulp=2)
    assert got[0] == 0.0 and got[-4] == 0.0 and got[-3] == 1.0 and got[-2] == got[-1] == 0.5
