"""One look at a fixed budget, sampled without replacement: the paper's rule against the exact-wor test.

Every probability here is an exact sum over all samples of n of the N planned tasks (multivariate
hypergeometric: ``scipy.stats.hypergeom`` for the wins seen, then the losses among the rest), not a
simulation; the paper's bootstrap tails are enumerated independently of the FFT code (a trinomial
sum over the wins and losses drawn with replacement). Tolerances: 1e-9 where two exact computations
meet, 5e-4 where the issue quotes a rounded figure.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

import stopwise
from stopwise import decide
from stopwise._vocabulary import RARE_DISCORDANCE
from stopwise.compare import exact_tails_from_counts, exact_wor_tails_from_counts
from stopwise.compare._wor_exact import _statistic, exact_wor_pvalue, exact_wor_pvalues
from stopwise.errors import ArgumentError, ComparisonError
from stopwise.records import Policy, TaskUniverse

A = 0.05


def _samples(big_n: int, wins: int, losses: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (w, l) a sample of n of the N tasks can show, with its exact probability (scipy.stats.hypergeom)."""
    w = np.arange(n + 1)[:, None]
    l = np.arange(n + 1)[None, :]  # noqa: E741
    p_w = stats.hypergeom.pmf(w, big_n, wins, n)  # wins among the n drawn
    p_l = stats.hypergeom.pmf(l, big_n - wins, losses, np.maximum(n - w, 0))  # losses among the other n - w drawn
    p = np.where(w + l <= n, np.nan_to_num(p_w * p_l), 0.0)
    ws, ls = np.nonzero(p > 0)
    return ws, ls, p[ws, ls]


def _bootstrap_r_promote(w: int, l: int, n: int) -> float:  # noqa: E741
    """P*(sum of n draws with replacement <= 0) from w wins, l losses, n - w - l ties: the trinomial sum."""
    p_w, p_l = w / n, l / n
    p_t = 1.0 - p_w - p_l
    total = 0.0
    for a in range(n + 1):
        for b in range(n - a + 1):
            if a - b > 0:
                continue
            c = n - a - b
            log = gammaln(n + 1) - gammaln(a + 1) - gammaln(b + 1) - gammaln(c + 1)
            terms = [(p_w, a), (p_l, b), (p_t, c)]
            if any(p == 0 and k > 0 for p, k in terms):
                continue
            log += sum(k * np.log(p) for p, k in terms if k > 0)
            total += float(np.exp(log))
    return total


def _paper_rule_reject_probability(big_n: int, wins: int, losses: int, n: int) -> float:
    """Exact probability that the paper's fixed-budget rule (exact bootstrap, delta = 0, a = 0.05) rejects."""
    ws, ls, ps = _samples(big_n, wins, losses, n)
    reject = 0.0
    for w, l, p in zip(ws, ls, ps, strict=True):  # noqa: E741
        if w > l:
            continue  # the mean exceeds delta: the rule can only promote
        if 1.0 - _bootstrap_r_promote(int(w), int(l), n) <= A:
            reject += p
    return reject


@pytest.mark.parametrize(
    ("wins", "losses", "n", "issue_figure"),
    [(10, 0, 50, 0.345), (10, 0, 100, 0.105), (15, 5, 50, 0.201)],
)
def test_the_paper_rule_rejects_a_better_pair_as_often_as_the_issue_says(wins: int, losses: int, n: int, issue_figure: float) -> None:
    # the pair is 2 pp better (Delta = (W - L) / N = 0.02 > delta = 0): every rejection is a false one
    measured = _paper_rule_reject_probability(500, wins, losses, n)
    assert measured == pytest.approx(issue_figure, abs=5e-4)
    if losses == 0:  # no win seen: every difference 0, R_reject = 0, rejected; that is all of it
        assert measured == pytest.approx(stats.hypergeom(500, wins, n).pmf(0), abs=1e-9)


def test_the_bootstrap_enumeration_agrees_with_the_fft_tails() -> None:
    for w, l in [(0, 0), (3, 0), (2, 1), (0, 4), (7, 5)]:  # noqa: E741
        fft = float(exact_tails_from_counts([[l, 50 - w - l, w]], 1, 0.0)[0])
        assert fft == pytest.approx(_bootstrap_r_promote(w, l, 50), abs=1e-9)


def _rejection_probability(big_n: int, wins: int, losses: int, n: int, side: str, threshold: float = 0.0) -> float:
    """Exact probability that the exact-wor test acts on ``side`` (p <= a) for this population."""
    p_promote, p_reject = exact_wor_pvalues(n, big_n, threshold)
    table = p_promote if side == "promote" else p_reject
    ws, ls, ps = _samples(big_n, wins, losses, n)
    return float(ps[table[ws, ls] <= A].sum())


@pytest.mark.parametrize(("wins", "losses", "n"), [(10, 0, 50), (10, 0, 100), (15, 5, 50)])
def test_the_exact_wor_test_rejects_the_better_pair_at_most_a(wins: int, losses: int, n: int) -> None:
    assert _rejection_probability(500, wins, losses, n, "reject") <= A


@pytest.mark.parametrize(("big_n", "n", "threshold"), [(40, 10, 0.0), (40, 25, 0.0), (41, 15, 0.1), (30, 12, -0.2)])
def test_exact_wor_is_level_a_on_every_null_population(big_n: int, n: int, threshold: float) -> None:
    """Every population of N ternary differences: promotions only where Delta > delta at most a of the time,
    rejections only where Delta <= delta at most a of the time (the whole composite null, not the boundary)."""
    worst = {"promote": 0.0, "reject": 0.0}
    cut = np.floor(big_n * threshold + 1e-9)
    for wins in range(big_n + 1):
        for losses in range(big_n - wins + 1):
            side = "promote" if wins - losses <= cut else "reject"  # the action that would be wrong
            worst[side] = max(worst[side], _rejection_probability(big_n, wins, losses, n, side, threshold))
    assert worst["promote"] <= A + 1e-12
    assert worst["reject"] <= A + 1e-12
    assert worst["promote"] > 0.01 and worst["reject"] > 0.01  # not trivially level: the tests do act


def test_the_p_value_is_the_worst_boundary_tail_by_listing_every_sample() -> None:
    """N = 12, n = 5: every one of the 792 samples of every boundary population listed, no hypergeometric formula."""
    big_n, n = 12, 5
    statistic = _statistic(n, 0.0)
    p_promote, _ = exact_wor_pvalues(n, big_n, 0.0)
    for w, l in [(3, 0), (2, 0), (4, 1), (1, 1), (0, 2)]:  # noqa: E741
        worst = 0.0
        for losses in range(0, big_n // 2 + 1):  # W = L: the boundary of Delta <= 0
            values = np.array([1] * losses + [-1] * losses + [0] * (big_n - 2 * losses))
            hits = total = 0
            for chosen in itertools.combinations(range(big_n), n):
                drawn = values[list(chosen)]
                total += 1
                hits += statistic[(drawn > 0).sum(), (drawn < 0).sum()] >= statistic[w, l]
            worst = max(worst, hits / total)
        assert p_promote[w, l] == pytest.approx(worst, abs=1e-12)


def test_the_issue_cases_p_values() -> None:
    # a typical sample of each issue case: the bootstrap acts, the exact test mostly does not
    assert exact_wor_pvalue(0, 0, 50, 500, 0.0) == pytest.approx((1.0, 0.9), abs=1e-9)  # nothing seen: no evidence
    p_promote, p_reject = exact_wor_pvalue(1, 1, 50, 500, 0.0)
    assert p_promote > A and p_reject > A
    batched = exact_wor_tails_from_counts([0, 1, 10], [0, 1, 0], 50, 500, [0.0])
    one_by_one = [exact_wor_pvalue(wins, losses, 50, 500, 0.0)[0] for wins, losses in [(0, 0), (1, 1), (10, 0)]]
    assert batched[0][:, 0] == pytest.approx(one_by_one)


def test_tail_probabilities_exact_wor_and_its_fallback() -> None:
    t = stopwise.tail_probabilities([1] * 10 + [0] * 40, 0.0, method="exact-wor", population_size=500)
    assert t.used == "exact-wor" and t.fallback is None
    assert (t.r_promote, t.r_reject) == pytest.approx(exact_wor_pvalue(10, 0, 50, 500, 0.0))
    averaged = stopwise.tail_probabilities([0.4] * 10 + [0] * 40, 0.0, method="exact-wor", population_size=500)
    assert averaged.used == "serfling" and averaged.fallback is not None and "0/1 outcomes" in averaged.fallback
    with pytest.raises(ArgumentError, match="population_size"):
        stopwise.tail_probabilities([1, 0], 0.0, method="exact-wor")


# ---- decide: the warning, the exact test in a policy, and looks past the limit --------------------------------


def _rows(outcomes: list[tuple[float, float]], n_tasks: int) -> tuple[object, TaskUniverse]:
    tasks = [f"t{i:03d}" for i in range(n_tasks)]
    made = []
    for task, (a, b) in zip(tasks, outcomes, strict=False):
        made += [{"system": "A", "task": task, "outcome": a, "group": "g"}, {"system": "B", "task": task, "outcome": b, "group": "g"}]
    return stopwise.outcome_columns(made).to_frame(), TaskUniverse(tasks, ["g"] * n_tasks)


def test_the_paper_rule_warns_with_the_measured_risk_and_exact_wor_abstains() -> None:
    # the 10 wins / 490 ties pair: no win among the 50 observed (34.5 % of samples)
    rows, universe = _rows([(0, 0)] * 50, 500)
    paper = stopwise.decide(rows, "A", "B", Policy.paper(budget={"limit": 0.1}), universe=universe)
    assert paper.action == "reject"
    (warning,) = [w for w in paper.warnings if "discordant" in w]
    assert "0 discordant task(s)" in warning and "is 0.9 against a = 0.05" in warning
    exact = stopwise.decide(rows, "A", "B", Policy.model_validate({"budget": {"limit": 0.1}, "tail_method": "exact-wor"}), universe=universe)
    assert exact.action == "abstain" and exact.tail is not None and exact.tail.method == "exact-wor"
    assert not any("discordant" in w for w in exact.warnings)
    # 15 wins / 5 losses: a sample with no win and 1 loss; the bootstrap rejects (R_reject = 0), exact-wor abstains
    rows, universe = _rows([(0, 1)] + [(0, 0)] * 49, 500)
    paper = stopwise.decide(rows, "A", "B", Policy.paper(budget={"limit": 0.1}), universe=universe)
    assert paper.action == "reject" and any("1 discordant task(s) (0 wins, 1 losses)" in w for w in paper.warnings)
    exact = stopwise.decide(rows, "A", "B", Policy.model_validate({"budget": {"limit": 0.1}, "tail_method": "exact-wor"}), universe=universe)
    assert exact.action == "abstain"
    assert RARE_DISCORDANCE == 10


def test_exact_wor_falls_back_with_a_warning_for_averaged_attempts() -> None:
    rows, universe = _rows([(0.5, 0)] + [(1, 0)] * 29 + [(0, 0)] * 20, 100)  # one task averaged: lattice 1/2
    record = stopwise.decide(
        rows, "A", "B", Policy.model_validate({"budget": {"limit": 0.5}, "tail_method": "exact-wor", "order": {"kind": "uniform"}}),
        universe=universe,
    )
    assert record.tail is not None and record.tail.fallback and record.tail.method == "serfling"
    assert any(w.startswith("exact-wor not used") for w in record.warnings)


def test_a_look_past_the_limit_is_taken_at_the_limit_or_refused() -> None:
    # issue 21's reproducer: abstain at the limit (0.3 of 500), then 201 tasks (402 rows) gave a silent reject
    outcomes = [(1, 0), (0, 1), (0, 0), (1, 1)] * 37 + [(0, 0)] * 2 + [(0, 1)] * 51
    rows, universe = _rows(outcomes, 500)
    policy = Policy.model_validate({"budget": {"limit": 0.3}})
    first = rows[rows["task"] < "t150"]  # type: ignore[index]
    at_limit = stopwise.decide(first, "A", "B", policy, universe=universe)
    assert at_limit.action == "abstain" and at_limit.n_observed == 150
    assert len(rows) == 402  # type: ignore[arg-type]
    later = stopwise.decide(rows, "A", "B", policy, universe=universe)
    assert later.action == "abstain" and later.n_observed == 150 and later.budget.used == pytest.approx(0.3)
    assert later.r_promote == at_limit.r_promote and later.r_reject == at_limit.r_reject
    assert [(e.code, e.rows, e.tasks) for e in later.excluded] == [("beyond-limit", 102, 51)]
    assert any(w.startswith("the rows reach past the budget limit (0.402 used, limit 0.3") for w in later.warnings)
    refusing = Policy.model_validate({"budget": {"limit": 0.3}, "decision": {"past_limit": "refuse"}})
    with pytest.raises(ComparisonError, match=r'past the policy\'s budget limit 0\.3.*past_limit = "refuse"'):
        stopwise.decide(rows, "A", "B", refusing, universe=universe)
    with pytest.raises(ComparisonError, match="needs the planned order"):
        stopwise.decide(rows, "A", "B", policy, universe=TaskUniverse.from_counts(500))
    # the first look at or over the limit is the planned one: 15 of 74 tasks is 0.203 >= 0.2, not past it
    rows, universe = _rows([(1, 0)] * 15, 74)
    assert not stopwise.decide(rows, "A", "B", Policy.model_validate({"budget": {"limit": 0.2}}), universe=universe).excluded


def test_past_limit_at_its_default_keeps_the_policy_digest() -> None:
    default = Policy.paper()
    assert Policy.paper(decision={"past_limit": "at-limit"}).sha256() == default.sha256()
    assert '"past_limit"' not in default.canonical_json()
    refusing = Policy.paper(decision={"past_limit": "refuse"})
    assert '"past_limit":"refuse"' in refusing.canonical_json() and refusing.sha256() != default.sha256()
    # the digest of the default policy before issue 21 (main at 54fb898), the paper's primary policy since issue 35
    assert default.sha256() == "9e761cc143366db7961ed6c2852603b7dae5de58bcc530f2cf7a67d06df50115"


# ---- replay: the batched tables give decide's p-values ----------------------------------------------------------


def test_replay_with_exact_wor_equals_decide_on_the_prefix() -> None:
    from stopwise.compare import budget_task_count
    from stopwise.records import synthetic_benchmark
    from stopwise.replay import pair_orders, prepare_source, replay_source_grid

    rows = synthetic_benchmark(80, 3, rng=5)  # 0/1 outcomes
    policy = Policy.model_validate({"tail_method": "exact-wor", "order": {"kind": "uniform"}, "coverage": {"rule": "none"}})
    source = prepare_source(rows, "synthetic")
    run = replay_source_grid(source, policy, policy_name="exact-wor", n_orders=4, keep_decisions=True)
    decisions = run.decisions
    assert decisions is not None
    checked = 0
    for index in np.random.default_rng(0).choice(len(decisions), size=25, replace=False):
        row = decisions.iloc[index]
        pair = next(p for p in source.pairs if source.pair_label(p) == (row["tested"], row["baseline"]))
        orders = pair_orders(source, pair, policy, 4)
        k = budget_task_count(pair.n_shared, float(row["budget"]))
        observed = set(source.tasks[pair.tasks[orders[int(row["order"]), :k]]])
        view = rows[rows["system"].isin([row["tested"], row["baseline"]]) & rows["task"].isin(observed)]
        limited = policy.model_copy(update={"threshold": float(row["threshold"]), "budget": policy.budget.model_copy(update={"limit": float(row["budget"])})})
        universe = TaskUniverse(source.tasks[pair.tasks].tolist(), source.groups[pair.tasks].tolist())
        record = decide(view, row["tested"], row["baseline"], limited, universe=universe)
        assert record.action == row["action"] and record.n_observed == k
        assert record.r_promote == pytest.approx(row["r_promote"], abs=1e-12)
        assert record.r_reject == pytest.approx(row["r_reject"], abs=1e-12)
        checked += 1
    assert checked == 25


def test_group_driven_orders_warn_about_the_unweighted_mean_and_exact_wor_s_model() -> None:
    # 400 planned tasks in "big", 100 in "small"; the 100 observed over-represent "small" (half of them)
    tasks = [f"t{i:03d}" for i in range(500)]
    groups = ["big"] * 400 + ["small"] * 100
    made = []
    observed = [(t, g) for t, g in zip(tasks, groups, strict=True) if (g == "big" and t < "t050") or (g == "small" and t < "t450")]
    for index, (task, group) in enumerate(observed):
        a, b = (1, 0) if group == "small" else ((0, 1) if index < 15 else (0, 0))  # small: 50 wins; big: 15 losses
        made += [{"system": "A", "task": task, "outcome": a, "group": group}, {"system": "B", "task": task, "outcome": b, "group": group}]
    rows, universe = stopwise.outcome_columns(made).to_frame(), TaskUniverse(tasks, groups)
    settings = {"budget": {"limit": 0.2}, "coverage": {"rule": "none"}}
    record = stopwise.decide(rows, "A", "B", Policy.paper(**settings), universe=universe)
    assert record.action == "promote" and record.delta_hat == pytest.approx(0.35)
    # stratified: 0.8 * (-15 / 50) + 0.2 * 1 = -0.04 <= 0: the other side of delta
    (warning,) = [w for w in record.warnings if "group-weighted" in w]
    assert "unweighted mean 0.35" in warning and "stratified) mean -0.04 lies on the other side" in warning
    exact = stopwise.decide(rows, "A", "B", Policy.paper(**settings, tail_method="exact-wor"), universe=universe)
    assert exact.action == "promote" and any("assumes the observed tasks are a simple random sample" in w for w in exact.warnings)
    uniform = stopwise.decide(
        rows, "A", "B", Policy.model_validate({**settings, "tail_method": "exact-wor", "order": {"kind": "uniform"}}), universe=universe
    )
    assert not any("simple random sample" in w or "group-weighted" in w for w in uniform.warnings)


def test_a_cost_budget_is_cut_at_the_task_that_reaches_it() -> None:
    tasks = [f"t{i:02d}" for i in range(40)]
    made = []
    for task in tasks[:30]:
        made += [{"system": "A", "task": task, "outcome": 1, "group": "g", "cost_usd": 1.0},
                 {"system": "B", "task": task, "outcome": 0, "group": "g", "cost_usd": 1.0}]
    rows, universe = stopwise.outcome_columns(made).to_frame(), TaskUniverse(tasks, ["g"] * 40)
    policy = Policy.model_validate({"budget": {"measure": "cost_usd", "limit": 20.5}})
    record = stopwise.decide(rows, "A", "B", policy, universe=universe)
    # the tested system's cost reaches 20.5 with the 21st task: that is the look at the limit
    assert record.n_observed == 21 and record.budget.used == 21.0 and record.budget.at_limit
    assert [(e.code, e.rows, e.tasks) for e in record.excluded] == [("beyond-limit", 18, 9)]


def test_the_batched_p_values_equal_the_tables() -> None:
    rng = np.random.default_rng(4)
    n = rng.choice([5, 12, 30], size=60)
    wins = rng.integers(0, n + 1)
    losses = rng.integers(0, n - wins + 1)
    thresholds = [0.0, 0.05, -0.1]
    p_promote, p_reject = exact_wor_tails_from_counts(wins, losses, n, 90, thresholds)
    for j, delta in enumerate(thresholds):
        for i in range(len(n)):
            table_p, table_r = exact_wor_pvalues(int(n[i]), 90, delta)
            assert p_promote[i, j] == pytest.approx(table_p[wins[i], losses[i]], abs=1e-12)
            assert p_reject[i, j] == pytest.approx(table_r[wins[i], losses[i]], abs=1e-12)


def test_the_betting_boundary_keeps_rows_past_the_limit_and_says_so() -> None:
    outcomes = [(1, 0), (0, 1), (0, 0), (1, 1)] * 37 + [(0, 0)] * 2 + [(0, 1)] * 51
    rows, universe = _rows(outcomes, 500)
    settings = {"budget": {"limit": 0.3}, "decision": {"boundary": "betting-wor"}, "betting": {"order_check": "warn"}}
    record = stopwise.decide(rows, "A", "B", Policy.model_validate(settings), universe=universe)
    assert record.n_observed == 201 and not any(e.code == "beyond-limit" for e in record.excluded)
    assert any("betting-wor boundary is valid at every look" in w for w in record.warnings)
    refusing = Policy.model_validate({**settings, "decision": {"boundary": "betting-wor", "past_limit": "refuse"}})
    with pytest.raises(ComparisonError, match="refuses it"):
        stopwise.decide(rows, "A", "B", refusing, universe=universe)


def test_a_complete_sample_gives_the_enumerations_p_values_without_its_table() -> None:
    """At n = N the p-values are 0 on the known mean's side and 1 on the other: the same as the enumeration over every
    (w, l) of N = 12 and 23 at six thresholds (issue 35: the default test decides complete records of 10^5 tasks)."""
    from stopwise.compare import _wor_exact

    for big_n in (12, 23):
        for delta in (-0.3, 0.0, 0.05, 1 / big_n, 0.25, 0.5):
            c = _wor_exact._boundary(big_n, delta)
            for w in range(big_n + 1):
                for l in range(big_n + 1 - w):  # noqa: E741 -- the losses
                    enumerated = (
                        _wor_exact._worst_tails(big_n, big_n, delta, c, np.array([_wor_exact._statistic(big_n, delta)[w, l]]))[0],
                        _wor_exact._worst_tails(big_n, big_n, -delta, -(c + 1), np.array([_wor_exact._statistic(big_n, -delta)[l, w]]))[0],
                    )
                    assert exact_wor_pvalue(w, l, big_n, big_n, delta) == pytest.approx(enumerated, abs=1e-12), (big_n, delta, w, l)
    assert exact_wor_pvalue(60_001, 30_000, 100_000, 100_000, 0.2) == (0.0, 1.0)  # instantly, no 10^10-cell table


def test_the_default_decides_a_look_too_large_for_the_enumeration_by_its_serfling_fallback() -> None:
    """n = 2,500 of N = 5,000 at the limit: exact-wor's enumeration (7.7e9 pairs) is refused, the tail and the interval
    both fall back to the Serfling bound (the interval's search used to raise the refusal: issue 35, the default)."""
    rng = np.random.default_rng(3)
    outcomes = list(zip(rng.integers(0, 2, 2500).tolist(), rng.integers(0, 2, 2500).tolist(), strict=True))
    rows, universe = _rows(outcomes, 5000)
    record = stopwise.decide(rows, "A", "B", Policy(budget={"limit": 0.5}), universe=universe)
    assert record.tail is not None and record.tail.fallback and record.tail.method == "serfling"
    assert record.interval is not None and record.interval.low < record.delta_hat < record.interval.high
    assert "serfling" in record.interval.method and record.action == "abstain"  # two fair coins: no difference to find
