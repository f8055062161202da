"""Tests of the adaptive and practical planners (mdmtheory.samplers.adaptive) on the exact engine.

References are written here: each sequence y is followed along the single path the
planner gives it, with the one-token conditionals summed from the raw table by numpy and
the planner's rule re-implemented in plain Python (greedy: lowest index among the scores
within 1e-12 of the best remaining one, i.e. ``ties="lowest"``; the other tie rules are
checked in tests/samplers/test_ties.py), so q(y) = prod over steps of p(y_j | y_A). The random
planner is checked by enumerating all orders. Expected values never come from the code
under test.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mdmtheory as mt
from mdmtheory.laws import families
from mdmtheory.samplers import (
    ConfidencePlanner,
    DilatedPlanner,
    EntropyBudgetPlanner,
    EntropyPlanner,
    LeftToRightPlanner,
    MarginPlanner,
    PositionCalibratedPlanner,
    RandomPlanner,
    SemiAutoregressivePlanner,
    ThresholdPlanner,
    background_frequency,
    dilated_levels,
    exact_run,
    llada_step_sizes,
    resolve_planner,
    sampler_law,
)

TOL = 1e-12  # the documented tie tolerance


# -- brute-force reference ----------------------------------------------------------------
class Table:
    """One-token conditionals p(x_j | x_A = given) summed from the raw table."""

    def __init__(self, table):
        self.t = np.asarray(table, dtype=float)
        self.d, self.K = self.t.ndim, self.t.shape[0]
        self.cache = {}

    def mass(self, given):
        idx = tuple(given.get(i, slice(None)) for i in range(self.d))
        return float(np.sum(self.t[idx]))

    def cond(self, given, j):
        key = (tuple(sorted(given.items())), j)
        if key not in self.cache:
            tot = self.mass(given)
            if tot <= 0:
                self.cache[key] = None
            else:
                self.cache[key] = [self.mass({**given, j: v}) / tot for v in range(self.K)]
        return self.cache[key]


def h(c):
    return -sum(v * math.log(v) for v in c if v > 0)


def score_bf(kind, c, j, params):
    if kind == "confidence":
        return max(c)
    if kind == "margin":
        s = sorted(c, reverse=True)
        return s[0] - s[1]
    if kind == "entropy":
        return -h(c)
    if kind == "pc":
        bg, lam, alpha, L = params
        top = max(c)
        xhat = min(v for v in range(len(c)) if c[v] >= top - TOL)
        return math.exp(-lam * (j % L)) * min(-top * math.log(bg[xhat]), alpha)
    if kind == "zero":
        return 0.0
    raise AssertionError(kind)


def greedy_order(free, scores, group):
    """Repeatedly: lowest group, best score, ties within TOL to the lowest index."""
    rest, out = sorted(free), []
    while rest:
        g = min(group[j] for j in rest)
        cand = [j for j in rest if group[j] == g]
        best = max(scores[j] for j in cand)
        pick = min(j for j in cand if scores[j] >= best - TOL)
        out.append(pick)
        rest.remove(pick)
    return out


def spec_choose(spec, d, t, size, given, free, conds):
    """The reveal set of each planner, written from its documented definition."""
    kind = spec[0]
    ident = {j: 0 for j in range(d)}
    if kind == "l2r":
        return set(sorted(free)[:size])
    if kind in ("confidence", "margin", "entropy"):
        sc = {j: score_bf(kind, conds[j], j, None) for j in free}
        return set(greedy_order(free, sc, ident)[:size])
    if kind == "semi_ar":
        _, L, S, score = spec
        if size is None:
            size = llada_sizes_bf(d, L, S)[t]
        sc = {j: score_bf(score, conds[j], j, None) for j in free}
        return set(greedy_order(free, sc, {j: j // L for j in range(d)})[:size])
    if kind == "dilated":
        _, L = spec
        rounds = dilated_rounds_bf(d, L)
        if size is None:
            size = len(rounds[t])
        order = [j for r in rounds for j in r if j in free]
        return set(order[:size])
    if kind == "pc":
        _, bg, lam, alpha, L, S = spec
        L = L or d
        if size is None:
            size = llada_sizes_bf(d, L, S)[t]
        sc = {j: score_bf("pc", conds[j], j, (bg, lam, alpha, L)) for j in free}
        return set(greedy_order(free, sc, {j: j // L for j in range(d)})[:size])
    if kind == "threshold":
        tau = spec[1]
        conf = {j: max(conds[j]) for j in free}
        top = greedy_order(free, conf, ident)[0]
        return {j for j in free if conf[j] >= tau - TOL} | {top}
    if kind == "budget":
        gamma = spec[1]
        H = {j: h(conds[j]) for j in free}
        order = greedy_order(free, {j: -H[j] for j in free}, ident)
        m, acc = 1, H[order[0]]
        while m < len(order) and acc <= gamma + TOL:
            acc += H[order[m]]
            m += 1
        return set(order[:m])
    raise AssertionError(kind)


def llada_sizes_bf(d, L, S):
    out = []
    for start in range(0, d, L):
        Lb = min(L, d - start)
        Sb = min(S, Lb)
        out += [Lb // Sb + (1 if i < Lb % Sb else 0) for i in range(Sb)]
    return out


def dilated_rounds_bf(d, L):
    """DUS reference (dilated_unmask_levels + merge_last_level), written out."""
    L = L or d
    rounds = []
    for start in range(0, d, L):
        n = min(L, d - start)
        levels, done, stride = [], set(), n // 2
        while stride >= 1:
            lv = [i for i in range(n) if i % stride == 0 and i not in done]
            if lv:
                levels.append(lv)
                done.update(lv)
            stride //= 2
        rest = [i for i in range(n) if i not in done]
        if rest:
            levels.append(rest)
        if len(levels) >= 2 and len(levels[-1]) < len(levels[-2]):
            last = levels.pop()
            levels[-1] += last
        rounds += [[start + i for i in lv] for lv in levels]
    return rounds


def bruteforce_law(table, spec, sizes):
    """(q table, lost, step-count law) of a deterministic planner, path by path."""
    T = Table(table)
    d, K = T.d, T.K
    q = np.zeros((K,) * d)
    counts = np.zeros(d + 2)
    for y in itertools.product(range(K), repeat=d):
        given, prob, t, ok = {}, 1.0, 0, True
        while len(given) < d:
            free = [j for j in range(d) if j not in given]
            conds = {j: T.cond(given, j) for j in free}
            if conds[free[0]] is None:  # p(y_A) = 0: this path's mass is lost
                ok = False
                break
            size = None if sizes is None else sizes[t]
            B = spec_choose(spec, d, t, size, given, free, conds)
            assert B and B <= set(free)
            for j in B:
                prob *= conds[j][y[j]]
            given.update({j: y[j] for j in B})
            t += 1
        if ok:
            q[y] = prob
            counts[t] += prob
    return q, 1.0 - q.sum(), counts


def bruteforce_random(table, sizes):
    """Law of the random planner: average over all d! orders cut into blocks."""
    T = Table(table)
    d, K = T.d, T.K
    q = np.zeros((K,) * d)
    perms = list(itertools.permutations(range(d)))
    cuts = np.concatenate([[0], np.cumsum(sizes)])
    for y in itertools.product(range(K), repeat=d):
        tot = 0.0
        for perm in perms:
            given, prob = {}, 1.0
            for a, b in zip(cuts[:-1], cuts[1:]):
                B = perm[a:b]
                conds = {j: T.cond(given, j) for j in B}
                if conds[B[0]] is None:
                    prob = 0.0
                    break
                for j in B:
                    prob *= conds[j][y[j]]
                given.update({j: y[j] for j in B})
            tot += prob
        q[y] = tot / len(perms)
    return q


def make_planner(spec):
    """The planner of a spec, with ``ties="lowest"`` (the rule spec_choose implements; the
    other tie rules: tests/samplers/test_ties.py)."""
    kind = spec[0]
    if kind == "l2r":
        return LeftToRightPlanner()
    if kind == "confidence":
        return ConfidencePlanner(ties="lowest")
    if kind == "margin":
        return MarginPlanner(ties="lowest")
    if kind == "entropy":
        return EntropyPlanner(ties="lowest")
    if kind == "semi_ar":
        return SemiAutoregressivePlanner(block_length=spec[1], steps_per_block=spec[2], score=spec[3], ties="lowest")
    if kind == "dilated":
        return DilatedPlanner(block_length=spec[1])
    if kind == "pc":
        _, bg, lam, alpha, L, S = spec
        return PositionCalibratedPlanner(bg, lam=lam, alpha=alpha, block_length=L, steps_per_block=S, ties="lowest")
    if kind == "threshold":
        return ThresholdPlanner(spec[1], ties="lowest")
    if kind == "budget":
        return EntropyBudgetPlanner(spec[1], ties="lowest")
    raise AssertionError(kind)


# -- laws --------------------------------------------------------------------------------
def random_table(seed, d, K, zeros):
    """A random law; with ``zeros`` about a third of the outcomes get probability 0."""
    rng = np.random.default_rng(seed)
    t = rng.dirichlet(np.full(K**d, 0.7))
    if zeros:
        t = t * (rng.random(K**d) > 0.35)
        if t.sum() == 0:
            t[0] = 1.0
        t = t / t.sum()
    return t.reshape((K,) * d)


def structured_laws():
    return {
        "parity4": families.parity(4),
        "repeated4": families.repeated(4),
        "repeated3_K3": families.repeated(3, K=3),
        "markov5": families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 5),
        "markov4_K3": families.markov_chain([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]], 4),
        "ising5": families.ising_chain(5, coupling=0.7, field=0.3),
        "noisy5": families.noisy_repeated_bit(5, 0.1),
        "xorsat4": families.xorsat([[1, 0], [0, 1], [1, 1], [1, 0]]),
    }


@st.composite
def law_and_schedule(draw, max_outcomes=81):
    K = draw(st.sampled_from([2, 3]))
    dmax = max(d for d in range(2, 7) if K**d <= max_outcomes)
    d = draw(st.integers(2, dmax))
    seed = draw(st.integers(0, 2**32 - 1))
    zeros = draw(st.booleans())
    cuts = sorted(draw(st.sets(st.integers(1, d - 1), max_size=d - 1)))
    sizes = tuple(np.diff([0, *cuts, d]).tolist())
    return random_table(seed, d, K, zeros), sizes


def schedule_specs(d, K, seed):
    rng = np.random.default_rng(seed)
    bg = tuple(rng.dirichlet(np.ones(K)) * 0.9 + 0.1 / K)
    L = int(rng.integers(1, d + 1))
    return [
        ("l2r",),
        ("confidence",),
        ("margin",),
        ("entropy",),
        ("semi_ar", L, None, "confidence"),
        ("semi_ar", L, None, "entropy"),
        ("dilated", None),
        ("dilated", L),
        ("pc", bg, float(rng.uniform(0, 2)), float(rng.uniform(0.05, 2)), None, None),
        ("pc", bg, 0.5, 10.0, L, None),
    ]


def own_size_specs(d, K, seed):
    rng = np.random.default_rng(seed)
    bg = tuple(rng.dirichlet(np.ones(K)) * 0.9 + 0.1 / K)
    L = int(rng.integers(1, d + 1))
    S = int(rng.integers(1, L + 1))
    return [
        ("threshold", float(rng.uniform(0.3, 1.0))),
        ("threshold", 0.5),
        ("budget", float(rng.uniform(0, 1.5))),
        ("budget", 0.0),
        ("semi_ar", L, S, "margin"),
        ("dilated", L),
        ("pc", bg, 1.0, 1.0, L, S),
    ]


def check_against_bruteforce(table, spec, sizes):
    p = mt.Joint(table)
    planner = make_planner(spec)
    plan = None if sizes is None else mt.Schedule(sizes)
    run = exact_run(p, plan, planner, trajectory=True)
    q_bf, lost_bf, counts_bf = bruteforce_law(table, spec, sizes)
    np.testing.assert_allclose(run.law.table, q_bf, rtol=0, atol=1e-12, err_msg=str(spec))
    assert run.lost == pytest.approx(lost_bf, abs=1e-12)
    assert run.law.table.sum() + run.lost == pytest.approx(1.0, abs=1e-12)
    n = min(len(run.step_counts), len(counts_bf))
    np.testing.assert_allclose(run.step_counts[:n], counts_bf[:n], atol=1e-12)
    assert np.all(counts_bf[n:] == 0) and np.all(run.step_counts[n:] == 0)
    # deterministic planner: KL(p||q) = E_p sum_t TC(x_B | x_A) pointwise = the trajectory KL
    kl = mt.kl(p, run.law)
    if np.isfinite(kl):
        assert run.path_kl == pytest.approx(kl, rel=1e-9, abs=1e-12)
    return run


# -- exact law vs path enumeration -----------------------------------------------------
@given(law_and_schedule(), st.integers(0, 2**16), st.integers(0, 9))
@settings(max_examples=100)
def test_schedule_planners_match_bruteforce(case, seed, which):
    table, sizes = case
    spec = schedule_specs(table.ndim, table.shape[0], seed)[which]
    check_against_bruteforce(table, spec, sizes)


@given(law_and_schedule(), st.integers(0, 2**16), st.integers(0, 6))
@settings(max_examples=100)
def test_own_size_planners_match_bruteforce(case, seed, which):
    table, _ = case
    spec = own_size_specs(table.ndim, table.shape[0], seed)[which]
    check_against_bruteforce(table, spec, None)


@pytest.mark.parametrize("name", sorted(structured_laws()))
def test_structured_laws_with_ties_and_zeros(name):
    """Exact ties (symmetric positions) and zero-probability prefixes (lost mass)."""
    p = structured_laws()[name]
    d, K = p.d, p.K
    lost_seen = 0.0
    for sizes in {(d,), tuple(llada_sizes_bf(d, d, 2)), (1,) * d, (1, d - 1)}:
        for spec in schedule_specs(d, K, 7):
            run = check_against_bruteforce(p.table, spec, sizes)
            lost_seen = max(lost_seen, run.lost)
    for spec in own_size_specs(d, K, 7):
        check_against_bruteforce(p.table, spec, None)
    if name in ("repeated4", "repeated3_K3"):
        assert lost_seen > 0  # the factorized steps do reach impossible prefixes


@given(law_and_schedule(max_outcomes=32))
@settings(max_examples=30)
def test_random_planner_matches_order_enumeration(case):
    table, sizes = case
    p = mt.Joint(table)
    q = exact_run(p, mt.Schedule(sizes), RandomPlanner()).law
    q_bf = bruteforce_random(table, sizes)
    np.testing.assert_allclose(q.table, q_bf, atol=1e-12)
    assert q.lost == pytest.approx(1.0 - q_bf.sum(), abs=1e-12)
    # the registered name, the default and the object agree
    np.testing.assert_array_equal(sampler_law(p, mt.Schedule(sizes)).table, q.table)
    np.testing.assert_array_equal(sampler_law(p, mt.Schedule(sizes), planner="random").table, q.table)


# -- invariants ----------------------------------------------------------------------------
ALL_SCHEDULE_PLANNERS = [
    "left_to_right",
    "confidence",
    "margin",
    "entropy",
    "dilated",
    SemiAutoregressivePlanner(2),
    SemiAutoregressivePlanner(3, score="margin"),
    DilatedPlanner(block_length=2),
    PositionCalibratedPlanner((0.3, 0.7), lam=0.5, alpha=2.0),
    "random",
]


@given(law_and_schedule(max_outcomes=64))
@settings(max_examples=40)
def test_one_token_per_step_is_exact(case):
    table, _ = case
    p = mt.Joint(table)
    one = mt.Schedule((1,) * p.d)
    planners = [pl for pl in ALL_SCHEDULE_PLANNERS if not isinstance(pl, PositionCalibratedPlanner)]
    planners += [PositionCalibratedPlanner(tuple(np.full(p.K, 1.0 / p.K)), block_length=2)]
    for pl in planners:
        q = sampler_law(p, one, pl)
        assert q.lost == 0
        np.testing.assert_allclose(q.table, p.table, atol=1e-12)
        assert abs(mt.kl(p, q)) < 1e-12
    q = exact_run(p, None, ThresholdPlanner(1.5)).law  # one token per step by design
    np.testing.assert_allclose(q.table, p.table, atol=1e-12)
    # gamma = 0: extra tokens only when the earlier ones are deterministic (no correlation added)
    q = exact_run(p, None, EntropyBudgetPlanner(0.0)).law
    np.testing.assert_allclose(q.table, p.table, atol=1e-9)


@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.sampled_from([2, 3]))
@settings(max_examples=40)
def test_product_laws_are_exact_for_every_planner(seed, d, K):
    rng = np.random.default_rng(seed)
    m = rng.dirichlet(np.ones(K), size=d)
    p = families.product(m)
    for T in range(1, d + 1):
        sched = mt.Schedule.constant(d, T)
        for pl in ALL_SCHEDULE_PLANNERS:
            if isinstance(pl, PositionCalibratedPlanner) and K != 2:
                pl = PositionCalibratedPlanner(tuple(np.full(K, 1.0 / K)))
            q = sampler_law(p, sched, pl)
            np.testing.assert_allclose(q.table, p.table, atol=1e-12)
    for pl in (ThresholdPlanner(0.2), EntropyBudgetPlanner(5.0), DilatedPlanner(), SemiAutoregressivePlanner(2, 1)):
        q = exact_run(p, None, pl).law
        np.testing.assert_allclose(q.table, p.table, atol=1e-12)


def test_budget_zero_reveals_only_deterministic_extras():
    """gamma = 0: a step adds positions only while the earlier ones have zero entropy."""
    p = families.repeated(4)
    run = exact_run(p, None, EntropyBudgetPlanner(0.0))
    # first step: all entropies log 2 -> one token; then the rest are determined -> one step
    np.testing.assert_allclose(run.step_counts[:3], [0, 0, 1])
    np.testing.assert_allclose(run.law.table, p.table, atol=1e-12)
    # gamma = log 2: two tokens at once (x_0 != x_1 half of the time: lost), then the rest
    run = exact_run(p, None, EntropyBudgetPlanner(math.log(2) + 1e-9))
    np.testing.assert_allclose(run.step_counts[:3], [0, 0, 0.5])
    assert run.lost == pytest.approx(0.5)


def test_three_scores_differ():
    """K = 3 product law where max prob, margin and entropy each prefer another position."""
    # position 0: conf .70 margin .41 H .655; 1: conf .67 margin .505 H .863; 2: conf .65 margin .30 H .647
    m = [[0.7, 0.29, 0.01], [0.67, 0.165, 0.165], [0.65, 0.35, 0.0]]
    p = families.product(m)
    one = mt.Schedule((1, 1, 1))
    first = {name: int(np.argmax(exact_run(p, one, name).reveal_steps[:, 1])) for name in ("confidence", "margin", "entropy")}
    assert first == {"confidence": 0, "margin": 1, "entropy": 2}


def test_ties_go_to_the_lowest_index():
    p = families.product([[0.5, 0.5]] * 4)  # every score ties
    for cls in (ConfidencePlanner, MarginPlanner, EntropyPlanner):
        R = exact_run(p, mt.Schedule((2, 1, 1)), cls(ties="lowest")).reveal_steps
        np.testing.assert_array_equal(R[:, 1:], [[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])


def test_semi_ar_finishes_a_block_first():
    # position 3 (block 1) is the most confident, but block 0 = {0, 1, 2} goes first
    p = families.product([[0.6, 0.4], [0.55, 0.45], [0.7, 0.3], [0.99, 0.01]])
    R = exact_run(p, mt.Schedule((1, 1, 1, 1)), SemiAutoregressivePlanner(3)).reveal_steps[:, 1:]
    np.testing.assert_array_equal(np.argmax(R, axis=1), [1, 2, 0, 3])  # block 0 by confidence: 2, 0, 1
    R = exact_run(p, mt.Schedule((1, 1, 1, 1)), "confidence").reveal_steps[:, 1:]
    np.testing.assert_array_equal(np.argmax(R, axis=1), [2, 3, 1, 0])


# -- sizes and rounds --------------------------------------------------------------------
def test_llada_step_sizes():
    assert llada_step_sizes(5, 3, 2) == (2, 1, 1, 1)
    assert llada_step_sizes(8, 4, 3) == (2, 1, 1, 2, 1, 1)
    assert llada_step_sizes(6, 6, 6) == (1,) * 6
    assert llada_step_sizes(4, 2, 5) == (1, 1, 1, 1)  # S capped at the block length
    assert SemiAutoregressivePlanner(3, 2).schedule(5) == mt.Schedule((2, 1, 1, 1))


def test_dilated_levels_match_dus_reference():
    assert dilated_levels(8) == ((0, 4), (2, 6), (1, 3, 5, 7))
    assert dilated_levels(16) == ((0, 8), (4, 12), (2, 6, 10, 14), tuple(range(1, 16, 2)))
    assert dilated_levels(6) == ((0, 3), (1, 2, 4, 5))
    assert dilated_levels(5) == ((0, 2, 4, 1, 3),)  # last round (2) < previous (3): merged
    assert dilated_levels(5, merge_last=False) == ((0, 2, 4), (1, 3))
    assert dilated_levels(1) == ((0,),)
    assert DilatedPlanner(block_length=4).rounds(8) == ((0, 2), (1, 3), (4, 6), (5, 7))
    assert DilatedPlanner().schedule(8) == mt.Schedule((2, 2, 4))
    for n in range(1, 20):
        for L in (None, 3, 4):
            assert [list(r) for r in DilatedPlanner(block_length=L).rounds(n)] == dilated_rounds_bf(n, L)


def test_variable_size_step_count_law():
    p = families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 5)
    run = exact_run(p, None, ThresholdPlanner(0.85, ties="lowest"))  # the rule bruteforce_law implements
    assert run.step_counts.sum() + run.lost == pytest.approx(1.0)
    assert 1 <= run.expected_steps <= 5
    # mean number of steps given the run finishes, from the path-by-path brute force
    _, _, counts = bruteforce_law(p.table, ("threshold", 0.85), None)
    assert run.expected_steps == pytest.approx((np.arange(len(counts)) * counts).sum() / counts.sum(), abs=1e-12)


def test_background_frequency():
    p = families.product([[0.2, 0.8], [0.6, 0.4]])
    np.testing.assert_allclose(background_frequency(p), [0.4, 0.6])


# -- names and errors --------------------------------------------------------------------
def test_registered_names():
    assert isinstance(resolve_planner("left_to_right"), LeftToRightPlanner)
    assert isinstance(resolve_planner("confidence"), ConfidencePlanner)
    assert isinstance(resolve_planner("margin"), MarginPlanner)
    assert isinstance(resolve_planner("entropy"), EntropyPlanner)
    assert isinstance(resolve_planner("dilated"), DilatedPlanner)
    p = families.dirichlet(4, seed=3)
    q1 = sampler_law(p, mt.Schedule((2, 2)), planner="confidence")
    q2 = sampler_law(p, mt.Schedule((2, 2)), planner=ConfidencePlanner())
    np.testing.assert_array_equal(q1.table, q2.table)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: ThresholdPlanner(float("nan")), "tau"),
        (lambda: EntropyBudgetPlanner(-0.1), "gamma"),
        (lambda: SemiAutoregressivePlanner(0), "block_length"),
        (lambda: SemiAutoregressivePlanner(2, 0), "steps_per_block"),
        (lambda: SemiAutoregressivePlanner(2, score="prob"), "score"),
        (lambda: DilatedPlanner(base=0), "base"),
        (lambda: PositionCalibratedPlanner((0.5, 0.6)), "background"),
        (lambda: PositionCalibratedPlanner((1.0, 0.0)), "background"),
        (lambda: PositionCalibratedPlanner((0.5, 0.5), lam=-1), "lam"),
        (lambda: PositionCalibratedPlanner((0.5, 0.5), alpha=0), "alpha"),
        (lambda: llada_step_sizes(4, 2, 0), "steps_per_block"),
    ],
)
def test_bad_arguments(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_plans():
    p = families.dirichlet(3, seed=0)
    with pytest.raises(ValueError, match="plan"):
        exact_run(p, mt.Schedule((2, 1)), ThresholdPlanner(0.5))
    with pytest.raises(ValueError, match="plan"):
        exact_run(p, mt.Schedule((2, 1)), EntropyBudgetPlanner(0.5))
    with pytest.raises(ValueError, match="plan"):
        exact_run(p, None, "confidence")
    with pytest.raises(ValueError, match="plan"):
        exact_run(p, None, SemiAutoregressivePlanner(2))
    with pytest.raises(ValueError, match="background"):
        exact_run(p, mt.Schedule((3,)), PositionCalibratedPlanner((0.2, 0.3, 0.5)))


def test_position_calibrated_scores_by_hand():
    bg = (0.2, 0.5, 0.3)
    pl = PositionCalibratedPlanner(bg, lam=0.7, alpha=0.9, block_length=2)
    probs = np.array([[[0.6, 0.3, 0.1], [0.2, 0.2, 0.6], [0.4, 0.4, 0.2], [0.1, 0.8, 0.1]]])
    expected = [
        math.exp(-0.7 * 0) * min(-0.6 * math.log(0.2), 0.9),  # clipped at alpha
        math.exp(-0.7 * 1) * min(-0.6 * math.log(0.3), 0.9),
        math.exp(-0.7 * 0) * min(-0.4 * math.log(0.2), 0.9),  # tie 0.4/0.4 -> lowest token 0
        math.exp(-0.7 * 1) * min(-0.8 * math.log(0.5), 0.9),
    ]
    np.testing.assert_allclose(pl.scores(probs)[0], expected, rtol=1e-14)
