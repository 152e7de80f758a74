r"""Error control across a family of claims: closed e-testing, e-BH on stopped e-processes, Holm and Benjamini–Yekutieli.

A family makes M claims at once (one per hypothesis: "A beats B by more than delta" for many ordered pairs). Each
hypothesis j has evidence against its null: an e-process K_j (a betting capital: a nonnegative supermartingale
under H_j, with every K_j adapted to the same filtration, the one task order the family shares) or, at one look,
an e-value (E[K_j] <= 1 under H_j) or a p-value. The hypotheses share tasks and systems, so their evidence is
strongly and arbitrarily dependent; every procedure here is valid under arbitrary dependence.

``fwer`` -- closed testing with arithmetic-mean e-merging (Vovk & Wang 2021, Ann. Statist. 49, the closure of
the e-Bonferroni intersection test). The mean of the K_j of any set S of hypotheses is an e-process for their
intersection, so the closure rejects H_j at a look when ``mean_{i in S} K_i >= 1/a`` for every S containing j.
The smallest such mean adds to j the hypotheses below 1/a, which gives the closed form

    reject j  <=>  K_j >= 1/a + sum_i max(0, 1/a - K_i)      (c = 1/a; the sum runs over all M hypotheses)

(:func:`closed_e_test`). Anytime: let S0 be the true nulls; a false rejection of j in S0 at any look t needs
``mean_{S0} K_t >= 1/a``, and by Ville's inequality that happens at some look with probability at most a, so the
claims may accumulate over the looks. When every other K_i is below 1/a the threshold is M/a: Bonferroni on
Ville's bound; every hypothesis Bonferroni rejects at a look the closure rejects too, and more once some
hypotheses are rejected (e-Holm).

``fdr`` -- e-BH (Wang & Ramdas 2022, JRSS-B 84): with e-values sorted decreasingly, reject the k* largest,
``k* = max{k : e_(k) >= M / (a k)}`` (:func:`e_bh`); the false discovery rate is at most a M0 / M under arbitrary
dependence. An e-process stopped at any stopping time of the shared filtration is an e-value, so e-BH may run on
stopped processes: :func:`stopped_e_bh` runs it look by look and stops each K_j at the first look it enters the
e-BH set (a stopping time). The set then only grows (a stopped K_j keeps the value that put it in, and the set's
size never falls), so a claim is never withdrawn and the set at whatever look the family stops is valid.

``none`` -- each hypothesis at 1/a on its own (per-pair guarantees; the family is uncontrolled).

With p-values at one look (the fixed-budget tails): Holm for ``fwer``, Benjamini–Yekutieli (BH at a / sum 1/i,
valid under arbitrary dependence) for ``fdr`` (:func:`p_value_claims`).

Claims wait for a gate (the coverage rule on the planned order's prefix, fixed before any outcome): a hypothesis
rejected at look s is claimed at the first gated look at or after s. The error event is the procedure's
rejection, whenever it is announced, so the gate keeps every guarantee.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from stopwise.errors import ArgumentError
from stopwise.records import FAMILY_CONTROLS

__all__ = ["claim_looks", "closed_e_test", "e_bh", "p_value_claims", "stopped_e_bh"]

NO_CLAIM = -1
"""The claim look of a hypothesis without a claim."""


def _alpha_iv(alpha: float) -> float:
    if not 0.0 < alpha < 1.0:
        raise ArgumentError(f"`alpha` must be in (0, 1); got {alpha!r}")
    return float(alpha)


def e_bh(log_e: ArrayLike, alpha: float) -> np.ndarray:
    """The e-BH rejections of every row of log e-values (the last axis is the family of M hypotheses).

    Parameters
    ----------
    log_e : array_like, shape (..., M)
        Natural logarithms of the e-values (``-inf`` for an e-value of 0, ``+inf`` for a null the data make
        impossible).
    alpha : float
        The target false discovery rate a.

    Returns
    -------
    numpy.ndarray of bool, shape (..., M)
        The hypotheses rejected: ``e_j >= M / (a k*)``, exactly k* of them per row.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare import e_bh
    >>> e_bh(np.log([400.0, 90.0, 20.0, 1.0]), 0.05).tolist()  # M / (a k) = 80, 40, 26.7, 20
    [True, True, False, False]
    """
    alpha = _alpha_iv(alpha)
    values = np.asarray(log_e, dtype=float)
    m = values.shape[-1]
    if m == 0:
        return np.zeros(values.shape, dtype=bool)
    ranked = -np.sort(-values, axis=-1)
    passes = ranked >= np.log(m / (alpha * np.arange(1, m + 1)))
    k_star = np.where(passes.any(axis=-1), m - np.argmax(passes[..., ::-1], axis=-1), 0)
    cut = np.log(m / (alpha * np.maximum(k_star, 1)))
    return (values >= cut[..., None]) & (k_star > 0)[..., None]


def closed_e_test(log_e: ArrayLike, alpha: float) -> np.ndarray:
    """The closed e-testing rejections (arithmetic-mean merging) of every row of log e-values.

    Rejects j when ``K_j >= 1/a + sum_i max(0, 1/a - K_i)``: the closure of the mean-merged intersection tests,
    family-wise error at most a (see the module docstring).

    Parameters
    ----------
    log_e : array_like, shape (..., M)
        Natural logarithms of the e-values (or of the e-processes' current values).
    alpha : float
        The family-wise error level a.

    Returns
    -------
    numpy.ndarray of bool, shape (..., M)

    Examples
    --------
    Alone above 1/a, a hypothesis needs M/a (Bonferroni); next to others above 1/a it needs less:

    >>> import numpy as np
    >>> from stopwise.compare import closed_e_test
    >>> closed_e_test(np.log([70.0, 0.5, 0.5]), 0.05).tolist(), closed_e_test(np.log([25.0, 30.0, 30.0]), 0.05).tolist()
    ([True, False, False], [True, True, True])
    """
    alpha = _alpha_iv(alpha)
    values = np.asarray(log_e, dtype=float)
    level = 1.0 / alpha
    below = np.exp(np.minimum(values, np.log(level)))  # K_i where it is below 1/a (no overflow above it)
    threshold = level + np.maximum(level - below, 0.0).sum(axis=-1)
    return values >= np.log(threshold)[..., None]


def stopped_e_bh(log_e: ArrayLike, alpha: float) -> np.ndarray:
    """e-BH look by look on e-processes stopped when they enter the e-BH set: each hypothesis's first look in it.

    Parameters
    ----------
    log_e : array_like, shape (..., M, T)
        log K_j after each look t = 1..T, every hypothesis on the same looks.
    alpha : float
        The target false discovery rate a.

    Returns
    -------
    numpy.ndarray of int, shape (..., M)
        0-based index of the first look at which the hypothesis is in the e-BH set of the stopped processes
        (it stays in at every later look), or -1.

    Examples
    --------
    The first hypothesis passes M/a = 40 at look 2 and then falls; stopped there, it stays claimed and lets the second in at 2M/(2a):

    >>> import numpy as np
    >>> from stopwise.compare import stopped_e_bh
    >>> stopped_e_bh(np.log([[1.0, 90.0, 2.0], [1.0, 1.0, 50.0]]), 0.05).tolist()
    [1, 2]
    """
    alpha = _alpha_iv(alpha)
    values = np.asarray(log_e, dtype=float)
    lead, (m, looks) = values.shape[:-2], values.shape[-2:]
    flat = values.reshape(-1, m, looks)
    stopped = np.full(flat.shape[:2], -np.inf)
    first = np.full(flat.shape[:2], NO_CLAIM, dtype=np.int64)
    for t in range(looks):
        current = np.where(first >= 0, stopped, flat[:, :, t])
        new = e_bh(current, alpha) & (first < 0)
        stopped[new] = current[new]
        first[new] = t
    return first.reshape(*lead, m)


def _next_gated(gate: np.ndarray) -> np.ndarray:
    """For each look (last axis), the first gated look at or after it (-1 when none remains)."""
    looks = gate.shape[-1]
    index = np.where(gate, np.arange(looks), looks)
    after = np.flip(np.minimum.accumulate(np.flip(index, axis=-1), axis=-1), axis=-1)
    return np.where(after < looks, after, NO_CLAIM)


def _keep_first(first: np.ndarray, log_e: np.ndarray, opposite: np.ndarray) -> np.ndarray:
    """Of two contradicting hypotheses (``opposite``), the later claim is dropped (at one look, the smaller e)."""
    other = np.where(opposite >= 0, opposite, np.arange(len(opposite)))
    mine, theirs = first, first[..., other]
    at = np.maximum(mine, 0)
    final = log_e.shape[-1] - 1
    e_mine = np.take_along_axis(log_e, np.minimum(at, final)[..., None], axis=-1)[..., 0]
    e_theirs = e_mine[..., other]
    later = (theirs >= 0) & ((theirs < mine) | ((theirs == mine) & (e_theirs > e_mine)))
    return np.where((opposite >= 0) & later, NO_CLAIM, mine)


def claim_looks(
    log_e: ArrayLike,
    alpha: float,
    control: str,
    *,
    gate: ArrayLike | None = None,
    opposite: ArrayLike | None = None,
) -> np.ndarray:
    """The look at which each hypothesis of a family is first claimed, under a control, along its e-process paths.

    Parameters
    ----------
    log_e : array_like, shape (..., M, T)
        log K_j of every hypothesis after each look (a process that stopped keeps its last value).
    alpha : float
        The family's level a.
    control : {"fwer", "fdr", "none"}
        Closed e-testing at every look (claims accumulate), e-BH on the processes stopped as they enter its set,
        or each hypothesis at 1/a (its running maximum, as a single pair's boundary).
    gate : array_like of bool, shape (T,) or (..., T), optional
        Looks at which a claim may be announced (the coverage rule; one row per leading index when the orders
        differ); a rejection waits for the next gated look.
    opposite : array_like of int, shape (M,), optional
        The hypothesis each one contradicts (-1: none); of two contradicting claims the later is dropped, as a
        single pair stops at its first final action.

    Returns
    -------
    numpy.ndarray of int, shape (..., M)
        0-based look index of the claim, or -1.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare import claim_looks
    >>> paths = np.log([[1.0, 30.0, 70.0], [1.0, 1.0, 2.0]])
    >>> claim_looks(paths, 0.05, "none").tolist(), claim_looks(paths, 0.05, "fwer").tolist()
    ([1, -1], [2, -1])
    """
    alpha = _alpha_iv(alpha)
    if control not in FAMILY_CONTROLS:
        raise ArgumentError(f"`control` must be one of {', '.join(FAMILY_CONTROLS)}; got {control!r}")
    values = np.asarray(log_e, dtype=float)
    if values.ndim < 2:
        raise ArgumentError("`log_e` must have shape (..., M, T)")
    if control == "fdr":
        first = stopped_e_bh(values, alpha)
    else:
        if control == "none":
            hit = np.maximum.accumulate(values, axis=-1) >= np.log(1.0 / alpha)
        else:
            hit = np.moveaxis(closed_e_test(np.moveaxis(values, -1, -2), alpha), -2, -1)
        first = np.where(hit.any(axis=-1), np.argmax(hit, axis=-1), NO_CLAIM)
    if gate is not None:
        later = np.broadcast_to(_next_gated(np.asarray(gate, dtype=bool)), (*first.shape[:-1], values.shape[-1]))
        first = np.where(first >= 0, np.take_along_axis(later, np.maximum(first, 0), axis=-1), NO_CLAIM)
    if opposite is not None:
        first = _keep_first(first, values, np.asarray(opposite, dtype=np.int64))
    return first


def p_value_claims(p: ArrayLike, alpha: float, control: str) -> np.ndarray:
    """The claims of a family of p-values at one look: Holm (``fwer``), Benjamini–Yekutieli (``fdr``) or each at a.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare import p_value_claims
    >>> p = np.array([0.001, 0.011, 0.03, 0.3])
    >>> [p_value_claims(p, 0.05, c).tolist() for c in ("fwer", "fdr", "none")]
    [[True, True, False, False], [True, True, False, False], [True, True, True, False]]
    """
    alpha = _alpha_iv(alpha)
    if control not in FAMILY_CONTROLS:
        raise ArgumentError(f"`control` must be one of {', '.join(FAMILY_CONTROLS)}; got {control!r}")
    values = np.asarray(p, dtype=float)
    m = len(values)
    if control == "none" or m == 0:
        return values <= alpha
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    steps = np.arange(1, m + 1)
    if control == "fwer":  # Holm: reject while p_(i) <= a / (M - i + 1)
        passes = ranked <= alpha / (m - steps + 1)
        count = m if passes.all() else int(np.argmin(passes))
    else:  # Benjamini–Yekutieli: BH at a / sum_{i <= M} 1/i
        passes = ranked <= steps * alpha / (m * np.sum(1.0 / steps))
        count = int(m - np.argmax(passes[::-1])) if passes.any() else 0
    claimed = np.zeros(m, dtype=bool)
    claimed[order[:count]] = True
    return claimed
