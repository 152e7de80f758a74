r"""Per-group running quantities of the stratified betting process, vectorised over rows and looks.

The stratified process of :mod:`stopwise.compare._betting` needs, at every look t of every row, the sum
of the earlier differences of the look's group and its draw index j within the group
(:func:`group_prefix`), and the maximum of its linear log-capital term over the null
(:func:`null_maxima`): ``log K_t(m) = A_t - sum_g C_{g,t} m_g`` is reported at its infimum
``A_t - max{sum_g C_{g,t} m_g}`` over the polytope ``{sum_g w_g m_g <= m0, lo_{g,t} <= m_g <= hi_{g,t}}``
(w_g = N_g / N, [lo, hi] each group's logical bounds after t tasks).

The knapsack. Start every group at its lower bound, which spends ``sum_g w_g lo_g`` of m0; raising
m_g by one *slot* of 2 / N_g spends 2 / N of the remaining budget ``B = m0 - sum_g w_g lo_g`` (in slots
``b = B N / 2``) and gains ``2 C_g / N_g``; group g has ``u_g`` slots (its unseen tasks:
``hi - lo = 2 u_g / N_g``). The greedy fill in decreasing ``C_g / w_g`` (ties: lower group index first)
is exact for a fractional knapsack, so with ``before_g`` the slots of the groups ahead of g,

    max = sum_g C_g lo_g + (2 / N) sum_g (C_g / w_g) clip(b - before_g, 0, u_g),

and the null is empty (the test is logically settled, maximum ``-inf``) when ``B < -1e-9``. The reject
side (``sign = -1``) is the same knapsack on ``-D`` and ``-m0``: lower bounds ``-hi``, budget
``sum_g w_g hi_g - m0``. Both budgets are pooled: ``B = sign m0 - (sign S_t - (N - t)) / N``.

Two computations of each quantity, equal to rounding (the prefixes bit for bit, the maxima to about
1e-13; tests/compare/test_betting_strata.py pins both against a naive loop):

* vectorised over the looks: (rows, looks, G) cumulative arrays and a sort of the groups at every look;
  no Python loop, fastest for a few rows (a ``decide`` call);
* by look: a loop over the looks, vectorised over rows with (sides, G, rows) state. Only the drawn
  group's sums, coefficient, bounds and place in the fill order change, so the fill order is updated
  in place rather than sorted, and nothing of size rows x looks x G is built.

:func:`by_look` chooses: the loop from :data:`LOOP_ROWS` capital paths (sides x rows) on.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["LOOP_ROWS", "SETTLED_TOL", "budgets", "by_look", "group_prefix", "null_maxima", "sequence_groups", "side_maxima"]

LOOP_ROWS = 48
"""From this many capital paths (sides x rows) on, the per-group quantities are computed by a loop over
the looks (below it the loop's per-look overhead costs more than the vectorised sorts)."""
SETTLED_TOL = 1e-9
"""The null is empty (maximum ``-inf``) when the budget B is below ``-SETTLED_TOL``."""


def by_look(n_sides: int, n_rows: int) -> bool:
    """Whether :func:`group_prefix` and :func:`null_maxima` should loop over the looks.

    Examples
    --------
    >>> from stopwise.compare._strata import by_look
    >>> by_look(2, 1), by_look(2, 500)
    (False, True)
    """
    return n_sides * n_rows >= LOOP_ROWS


def group_prefix(x: np.ndarray, codes: np.ndarray, n_groups: int, *, loop: bool) -> tuple[np.ndarray, np.ndarray]:
    """Sum of the earlier differences of each look's group, and the look's draw index j within its group.

    Parameters
    ----------
    x : numpy.ndarray, shape (B, T)
        The differences in look order.
    codes : numpy.ndarray of int, shape (B, T)
        The group (0..G-1) of each look's task.
    n_groups : int
        G.
    loop : bool
        Loop over the looks (:func:`by_look`) rather than build (B, T, G) arrays; the same numbers.

    Returns
    -------
    own_total, j : numpy.ndarray, shape (B, T)
        ``own_total`` is the group's running sum including the look, less the look's difference (the
        sums are sequential in look order); ``j`` counts the group's looks up to and including this one.

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._strata import group_prefix
    >>> own, j = group_prefix(np.array([[1.0, 0.5, -1.0, 1.0]]), np.array([[0, 1, 0, 0]]), 2, loop=False)
    >>> own.tolist(), j.tolist()
    ([[0.0, 0.0, 1.0, 0.0]], [[1.0, 1.0, 2.0, 3.0]])
    """
    if not loop:
        onehot = codes[..., None] == np.arange(n_groups)
        at = codes[..., None]
        total = np.take_along_axis(np.cumsum(np.where(onehot, x[..., None], 0.0), axis=1), at, axis=-1)[..., 0]
        return total - x, np.take_along_axis(np.cumsum(onehot, axis=1), at, axis=-1)[..., 0].astype(float)
    n_rows = x.shape[0]
    sums = np.zeros(n_groups * n_rows)
    counts = np.zeros(n_groups * n_rows)
    own_total = np.empty((x.shape[1], n_rows))
    j = np.empty_like(own_total)
    rows = np.arange(n_rows)
    x_t = np.ascontiguousarray(x.T)
    for t, g in enumerate(np.ascontiguousarray(codes.T)):
        cell = g * n_rows + rows
        total = sums[cell] + x_t[t]
        sums[cell] = total
        own_total[t] = total - x_t[t]
        j[t] = counts[cell] + 1.0
        counts[cell] = j[t]
    return np.ascontiguousarray(own_total.T), np.ascontiguousarray(j.T)


def budgets(signs: np.ndarray, x: np.ndarray, thresholds: np.ndarray, population_size: int) -> np.ndarray:
    """The knapsack budget ``B = sign m0 - (sign S_t - (N - t)) / N`` of each side, row and look, shape (S, B, T).

    Examples
    --------
    >>> import numpy as np
    >>> from stopwise.compare._strata import budgets
    >>> budgets(np.array([1.0, -1.0]), np.array([[1.0, -1.0]]), np.zeros((1, 1)), 4).tolist()
    [[[0.5, 0.5]], [[1.0, 0.5]]]
    """
    unseen = population_size - np.arange(1, x.shape[1] + 1, dtype=float)
    total = np.cumsum(x, axis=1)
    signs = signs[:, None, None]
    return signs * thresholds - (signs * total - unseen) / population_size


def null_maxima(
    increments: np.ndarray,
    signs: np.ndarray,
    x: np.ndarray,
    codes: np.ndarray,
    sizes: np.ndarray,
    thresholds: np.ndarray,
    *,
    loop: bool,
) -> np.ndarray:
    """``max sum_g C_{g,t} m_g`` over the null polytope of each side, row and look (the module docstring).

    Parameters
    ----------
    increments : numpy.ndarray, shape (S, B, T)
        What each look adds to the coefficient ``C_g`` of its drawn group (>= 0), per side.
    signs : numpy.ndarray, shape (S,)
        +1 (promote: the null is ``sum_g w_g m_g <= m0``) or -1 (reject: ``>= m0``) per side.
    x : numpy.ndarray, shape (B, T)
        The differences in look order.
    codes : numpy.ndarray of int, shape (B, T)
        The group (0..G-1) of each look's task.
    sizes : numpy.ndarray of int, shape (G,)
        N_g, the planned tasks of each group (they sum to N).
    thresholds : numpy.ndarray, shape (B, 1)
        m0 of each row.
    loop : bool
        Loop over the looks (:func:`by_look`) rather than sort (B, T, G) arrays; equal to rounding.

    Returns
    -------
    numpy.ndarray, shape (S, B, T)
        The maxima; ``-inf`` where the null is empty (the test is logically settled).

    Examples
    --------
    Two groups of two tasks, three wins, in groups 0, 0, 1; each look adds 1 to its group's coefficient.
    After the first look the null ``(m_0 + m_1) / 2 <= 0`` has ``m_0 in [0, 1]``, ``m_1 in [-1, 1]`` and
    ``C = (1, 0)``: the maximum is 1 at ``m = (1, -1)``; after the second, ``m_0 = 1`` and ``C_0 = 2``;
    after the third the null is empty.

    >>> import numpy as np
    >>> from stopwise.compare._strata import null_maxima
    >>> x, codes, sizes = np.ones((1, 3)), np.array([[0, 0, 1]]), np.array([2, 2])
    >>> null_maxima(np.ones((1, 1, 3)), np.ones(1), x, codes, sizes, np.zeros((1, 1)), loop=False).tolist()
    [[[1.0, 2.0, -inf]]]
    """
    budget = budgets(signs, x, thresholds, int(sizes.sum()))
    compute = _maxima_by_look if loop else _maxima_vectorised
    maxima = compute(increments, signs, x, codes, sizes, budget)
    maxima[budget < -SETTLED_TOL] = -np.inf
    return maxima


def _maxima_vectorised(
    increments: np.ndarray, signs: np.ndarray, x: np.ndarray, codes: np.ndarray, sizes: np.ndarray, budget: np.ndarray
) -> np.ndarray:
    """The maxima from (B, T, G) arrays, one stable sort of the groups per look (the fill order, ties by index).

    ``x`` and ``codes`` may be one sequence (shape (1, T)) shared by every row: its per-group sums and bounds are
    then computed once.
    """
    groups = sequence_groups(x, codes, len(sizes))
    maxima = np.empty(increments.shape)
    for side, sign in enumerate(signs):
        maxima[side] = side_maxima(increments[side], budget[side], sign, groups, sizes)
    return maxima


def sequence_groups(x: np.ndarray, codes: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per look and group, shape (B, T, G): the look's group (one-hot), its draws so far and its running sum.

    What :func:`side_maxima` reads of the sequence, computed once for all its rows.
    """
    onehot = codes[..., None] == np.arange(n_groups)
    return onehot, np.cumsum(onehot, axis=1), np.cumsum(np.where(onehot, x[..., None], 0.0), axis=1)


def _group_running_sums(increments: np.ndarray, onehot: np.ndarray, drawn: np.ndarray, looks: np.ndarray | None = None) -> np.ndarray:
    """``C[b, t, g]``: the sum of row b's increments over the looks up to t of group g, shape (B, T, G) (T: ``looks``).

    The looks of one sequence (``onehot`` (T, G), ``drawn`` (T, G) the group's draws so far) are laid out group by
    group, summed in look order within each group (one ``cumsum`` over B x G x (1 + the largest group draw)), and read
    back at each look (or at ``looks`` only): the same sums, bit for bit, as a running sum over all looks with zeros at
    the other groups'.
    """
    n_rows, n_looks = increments.shape
    n_groups = onehot.shape[1]
    width = int(drawn[-1].max()) + 1  # a leading 0 (no draw yet), then the group's draws in order
    codes = np.argmax(onehot, axis=1)
    place = codes * width + drawn[np.arange(n_looks), codes].astype(np.int64)  # the look's slot: after its group's earlier draws
    sums = np.zeros((n_rows, n_groups * width))
    sums[:, place] = increments
    np.cumsum(sums.reshape(n_rows, n_groups, width), axis=2, out=sums.reshape(n_rows, n_groups, width))
    read = (np.arange(n_groups) * width + drawn).astype(np.int64)  # (T, G): each group's sum after its draws up to t
    if looks is not None:
        read = read[looks]
    return sums.take(read.reshape(-1), axis=1).reshape(n_rows, len(read), n_groups)  # C order: the reductions' summation order


@functools.lru_cache(maxsize=16)
def _ahead(n_groups: int) -> np.ndarray:
    """``[h, g] = 1`` when place h fills before place g in the sorted order (h < g): running sums by one product."""
    return np.triu(np.ones((n_groups, n_groups)), 1)


def side_maxima(
    increments: np.ndarray,
    budget: np.ndarray,
    sign: float,
    groups: tuple[np.ndarray, np.ndarray, np.ndarray],
    sizes: np.ndarray,
    looks: np.ndarray | None = None,
) -> np.ndarray:
    """One side's maxima (B, T): the fractional knapsack of every row and look (the module docstring), or (B, len(looks)).

    ``groups`` is :func:`sequence_groups` of the rows' sequence (one shared sequence: shape (1, T, G)); ``budget`` the
    side's budgets (B, T), before the slots (``-inf`` where the null is empty is the caller's). With ``looks`` only those
    looks are computed, to the same numbers bit for bit (the sums over the groups are taken in the same order). The
    sorted slots are gathered with flat indices and their running sums (whole numbers) taken by one product with a
    triangular matrix: the same numbers as ``take_along_axis`` and ``cumsum`` over the groups.
    """
    onehot, drawn, group_sum = groups
    n_pop, n_groups = int(sizes.sum()), len(sizes)
    unseen = sizes - drawn
    if onehot.shape[0] == 1 < increments.shape[0] or looks is not None:  # each group's running sum over its own looks
        coef = _group_running_sums(increments, onehot[0], drawn[0], looks)
    else:
        coef = np.cumsum(np.where(onehot, increments[..., None], 0.0), axis=1)
    if looks is not None:
        unseen, group_sum, budget = unseen[:, looks], group_sum[:, looks], budget[:, looks]
    n_rows, n_looks = coef.shape[:2]
    cells = np.arange(n_rows * n_looks).reshape(n_rows, n_looks, 1) * n_groups
    unseen_cells = cells if unseen.shape[0] == n_rows else np.arange(n_looks).reshape(1, n_looks, 1) * n_groups
    floor = (sign * group_sum - unseen) / sizes
    ratio = coef / (sizes / n_pop)
    order = np.argsort(-ratio, axis=-1, kind="stable")
    slots = unseen.reshape(-1)[order + unseen_cells]
    used = (budget * (n_pop / 2.0))[..., None] - (slots.reshape(-1, n_groups) @ _ahead(n_groups)).reshape(slots.shape)
    np.maximum(used, 0.0, out=used)
    np.minimum(used, slots, out=used)
    fill = np.einsum("...g,...g->...", ratio.reshape(-1)[order + cells], used)  # np.vecdot needs NumPy 2
    return np.einsum("...g,...g->...", coef, floor) + (2.0 / n_pop) * fill


def _maxima_by_look(
    increments: np.ndarray, signs: np.ndarray, x: np.ndarray, codes: np.ndarray, sizes: np.ndarray, budget: np.ndarray
) -> np.ndarray:
    """The maxima by a loop over the looks with (S, G, B) state; the fill order is kept, never sorted.

    ``before`` holds, per side, group and row, the unseen slots of the groups ahead in the fill order.
    When look t draws group g of a row, g's ratio C_g / w_g rises (g can only move ahead) and g loses
    one slot: the groups g was ahead of lose that slot, the groups g overtakes gain all g's remaining
    slots, and g's own ``before`` is recounted. Ties are ordered by group index with the ratios' bit
    patterns (for ratios >= +0.0, ``r_h <= r`` exactly when ``bits(r_h) - 1 < bits(r)``).
    """
    n_sides, n_rows, n_looks = increments.shape
    n_groups = len(sizes)
    n_pop = int(sizes.sum())
    size_f = sizes.astype(float)
    weights = sizes / n_pop
    rows = np.arange(n_rows)
    side_start = (np.arange(n_sides) * (n_groups * n_rows))[:, None]
    group_index = np.arange(n_groups)[:, None]
    sign = signs[:, None]
    # per-look inputs, contiguous per look
    codes_t = np.ascontiguousarray(codes.T)
    x_t = np.ascontiguousarray(x.T)
    increments_t = np.ascontiguousarray(increments.transpose(2, 0, 1))
    slots_budget = np.ascontiguousarray(budget.transpose(2, 0, 1)) * (n_pop / 2.0)
    # state: unseen slots and sums per group; per side coefficients, ratios C / w, lower bounds and the
    # slots ahead of each group in the fill order (at the start all ratios tie at 0: index order)
    unseen = np.repeat(size_f[:, None], n_rows, axis=1)
    group_sum = np.zeros((n_groups, n_rows))
    coef = np.zeros((n_sides, n_groups, n_rows))
    ratio = np.zeros_like(coef)
    floor = np.full_like(coef, -1.0)
    before = np.empty_like(coef)
    before[:] = (np.cumsum(size_f) - size_f)[:, None]
    ratio_bits = ratio.view(np.int64)
    bits_flat = ratio_bits.reshape(-1)
    later = np.empty((n_groups, n_rows), dtype=np.int64)
    key = np.empty(coef.shape, dtype=np.int64)
    ahead_old = np.empty_like(coef)
    ahead_new = np.empty_like(coef)
    ahead_new_flat = ahead_new.reshape(-1)
    work = np.empty_like(coef)
    maxima = np.empty((n_looks, n_sides, n_rows))
    unseen_flat, sum_flat = unseen.reshape(-1), group_sum.reshape(-1)
    coef_flat, ratio_flat = coef.reshape(-1), ratio.reshape(-1)
    floor_flat, before_flat = floor.reshape(-1), before.reshape(-1)
    for t in range(n_looks):
        g = codes_t[t]
        cell = g * n_rows + rows
        cells = side_start + cell
        left = unseen_flat[cell] - 1.0
        unseen_flat[cell] = left
        total = sum_flat[cell] + x_t[t]
        sum_flat[cell] = total
        floor_flat[cells] = (sign * total - left) / size_f[g]
        new_coef = coef_flat[cells] + increments_t[t]
        coef_flat[cells] = new_coef
        # ahead[s, h, b] = 1 where g fills before h: ratio_h < ratio_g, or they tie and g < h
        np.greater(group_index, g, out=later, casting="unsafe")  # h > g
        np.subtract(ratio_bits, later, out=key)
        np.less(key, bits_flat[cells][:, None, :], out=ahead_old, casting="unsafe")
        ratio_flat[cells] = new_coef / weights[g]
        np.less(key, bits_flat[cells][:, None, :], out=ahead_new, casting="unsafe")
        ahead_new_flat[cells] = 0.0
        # g: the slots of every group but those behind it and itself (N - t - 1 slots are left in all)
        np.multiply(ahead_new, unseen, out=work)
        g_before = (n_pop - t - 1.0 - left) - work.sum(axis=1)
        # the groups g was ahead of lose one of its slots; those it overtakes gain all its remaining ones
        np.subtract(before, ahead_old, out=before)
        ahead_new -= ahead_old
        ahead_new *= left
        before += ahead_new
        before_flat[cells] = g_before
        np.subtract(slots_budget[t][:, None, :], before, out=work)
        np.maximum(work, 0.0, out=work)
        np.minimum(work, unseen, out=work)
        maxima[t] = np.einsum("sgb,sgb->sb", coef, floor)
        maxima[t] += (2.0 / n_pop) * np.einsum("sgb,sgb->sb", ratio, work)
    return maxima.transpose(1, 2, 0).copy()

