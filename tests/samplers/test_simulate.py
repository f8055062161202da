"""Monte Carlo simulation and KL estimates vs exact values (z-scores, fixed seeds).

Exact references: the exact engine's law, KL and trajectory KL (checked against brute force
in test_adaptive.py), the profile formula of the path KL (docs/theory.md §2), and for the Markov
chain at d = 200 closed forms written here from the powers of P.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import entr

import mdmtheory as mt
from mdmtheory.laws import families
from mdmtheory.samplers import (
    BernoulliPlanner,
    ConfidencePlanner,
    DilatedPlanner,
    EntropyBudgetPlanner,
    PositionCalibratedPlanner,
    SemiAutoregressivePlanner,
    ThresholdPlanner,
    estimate_kl,
    exact_run,
    simulate,
)
from mdmtheory.laws import MarkovChainLaw, TableLaw, as_oracle

P2 = np.array([[0.9, 0.1], [0.2, 0.8]])
P3 = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.0, 0.7]])


def brute_conditional(table, x, revealed, j):
    """p(x_j | x_A) from the raw table by slicing (None where p(x_A) = 0)."""
    idx = tuple(int(x[i]) if revealed[i] else slice(None) for i in range(table.ndim))
    sub = table[idx]  # axes: the unrevealed positions in order
    free = [i for i in range(table.ndim) if not revealed[i]]
    tot = sub.sum()
    if tot == 0:
        return None
    axes = tuple(a for a, i in enumerate(free) if i != j)
    return sub.sum(axis=axes) / tot


# -- oracles -----------------------------------------------------------------------------
@pytest.mark.parametrize("initial", [None, (0.5, 0.2, 0.3)])
def test_markov_oracle_matches_table(initial):
    d = 5
    chain = MarkovChainLaw(P3, d, initial)
    table = families.markov_chain(P3, d, initial)
    tl = TableLaw(table)
    rng = np.random.default_rng(1)
    x = rng.integers(0, 3, size=(300, d))
    rv = rng.random((300, d)) < 0.5
    c_chain, c_table = chain.conditionals(x, rv), tl.conditionals(x, rv)
    np.testing.assert_allclose(c_chain, c_table, atol=1e-13)
    for n in range(0, 300, 17):
        for j in range(d):
            if rv[n, j]:
                continue
            ref = brute_conditional(table.table, x[n], rv[n], j)
            if ref is None:
                assert np.all(c_chain[n, j] == 0)
            else:
                np.testing.assert_allclose(c_chain[n, j], ref, atol=1e-13)
    lm_c, lm_t = chain.log_marginal(x, rv), tl.log_marginal(x, rv)
    np.testing.assert_array_equal(np.isinf(lm_c), np.isinf(lm_t))  # P3 has a zero: some prefixes are impossible
    assert np.isinf(lm_c).any()
    fin = np.isfinite(lm_c)
    np.testing.assert_allclose(lm_c[fin], lm_t[fin], atol=1e-12)
    for n in range(0, 300, 23):
        idx = tuple(int(x[n, i]) if rv[n, i] else slice(None) for i in range(d))
        ref = table.table[idx].sum()
        assert math.exp(lm_c[n]) == pytest.approx(ref, abs=1e-14)
    # empty revealed set
    assert np.all(chain.log_marginal(x[:3], np.zeros((3, d), bool)) == 0)


@pytest.mark.parametrize("law", ["table", "chain"])
def test_oracle_sampling_matches_law(law):
    d, n = 4, 40000
    table = families.markov_chain(P3, d, (0.5, 0.2, 0.3))
    oracle = TableLaw(table) if law == "table" else MarkovChainLaw(P3, d, (0.5, 0.2, 0.3))
    x = oracle.sample(n, np.random.default_rng(5))
    counts = np.zeros(table.table.shape)
    np.add.at(counts, tuple(x.T), 1)
    p = table.table
    z = (counts / n - p) / np.sqrt(np.maximum(p * (1 - p), 1e-300) / n)
    assert np.all(counts[p == 0] == 0)
    assert np.max(np.abs(z[p > 0])) < 5


def test_as_oracle_errors():
    with pytest.raises(ValueError, match="^p: "):
        as_oracle(np.ones((2, 2)) / 4)
    with pytest.raises(ValueError, match="x, revealed"):
        TableLaw(families.parity(3)).conditionals(np.zeros((2, 4), int), np.zeros((2, 4), bool))
    with pytest.raises(ValueError, match="x"):
        MarkovChainLaw(P2, 3).conditionals(np.full((1, 3), 5), np.ones((1, 3), bool))


# -- KL estimates vs exact ---------------------------------------------------------------
SMALL_LAWS = {
    "dirichlet5": families.dirichlet(5, 2, alpha=0.5, seed=2),
    "markov4_K3": families.markov_chain(P3, 4),
    "mixture5": families.mixture_of_products(
        [0.4, 0.6], np.random.default_rng(0).dirichlet([1.0, 1.0], size=(2, 5))
    ),
}
DET_PLANNERS = [
    ("left_to_right", (2, 2, 1)),
    ("confidence", (2, 1, 2)),
    ("margin", (3, 2)),
    ("entropy", (1, 3, 1)),
    (SemiAutoregressivePlanner(3), (2, 2, 1)),
    (DilatedPlanner(), None),
    (SemiAutoregressivePlanner(2, 1, score="entropy"), None),
    (ThresholdPlanner(0.6), None),
    (EntropyBudgetPlanner(0.4), None),
]


@pytest.mark.parametrize("lname", sorted(SMALL_LAWS))
@pytest.mark.parametrize("k", range(len(DET_PLANNERS)))
def test_mc_kl_matches_exact_for_deterministic_planners(lname, k):
    p = SMALL_LAWS[lname]
    planner, sizes = DET_PLANNERS[k]
    if sizes is not None and sum(sizes) != p.d:
        sizes = tuple(mt.Schedule.constant(p.d, len(sizes)).sizes)
    plan = None if sizes is None else mt.Schedule(sizes)
    run = exact_run(p, plan, planner, trajectory=True)
    est = estimate_kl(p, plan, planner, n=3000, seed=11 + k)
    # ties="random" (the default of scored planners) draws split ties: L(x) then estimates the
    # path KL, which equals the KL when no tie is split (tie_mass == 0)
    deterministic = run.ties in (None, "lowest", "topk")
    assert est.kind == ("kl" if deterministic else "path_kl")
    if deterministic or run.tie_mass == 0:
        assert run.path_kl == pytest.approx(mt.kl(p, run.law), rel=1e-9, abs=1e-12)
    exact = mt.kl(p, run.law) if deterministic else run.path_kl
    assert abs(est.zscore(exact)) < 5, (est.value, est.stderr, exact)
    # the per-step means estimate the engine's per-step parts (the trajectory KL's columns)
    n_steps = len(est.step_means)
    assert np.all(np.abs(est.step_means - run.step_kl[1 : n_steps + 1]) < 6 * est.stderr + 1e-12)
    # the interval is the two-sided normal interval at est.level around the mean
    from scipy.stats import norm

    lo, hi = est.ci
    z = norm.ppf(0.5 + est.level / 2)
    assert (lo + hi) / 2 == pytest.approx(est.value, abs=1e-12)
    assert (hi - lo) / 2 == pytest.approx(z * est.stderr, rel=1e-9, abs=1e-15)


def test_mc_path_kl_of_random_planner_matches_exact():
    p = SMALL_LAWS["dirichlet5"]
    sched = mt.Schedule((2, 2, 1))
    run = exact_run(p, sched, "random", trajectory=True)
    profile_value = mt.path_kl(mt.information_profile(p), sched)
    assert run.path_kl == pytest.approx(profile_value, rel=1e-9)
    est = estimate_kl(p, sched, "random", n=5000, seed=3)
    assert est.kind == "path_kl"
    assert abs(est.zscore(profile_value)) < 5
    assert est.value > mt.kl(p, run.law) + 5 * est.stderr  # data processing: path KL > KL here


def test_mc_pc_planner_on_K3():
    p = SMALL_LAWS["markov4_K3"]
    pl = PositionCalibratedPlanner(tuple(np.full(3, 1 / 3)), lam=0.3, alpha=0.8)
    sched = mt.Schedule((2, 2))
    exact = mt.kl(p, exact_run(p, sched, pl).law)
    assert abs(estimate_kl(p, sched, pl, n=3000, seed=4).zscore(exact)) < 5


# -- simulated samples follow q ------------------------------------------------------------
@pytest.mark.parametrize(
    "law, planner, sizes",
    [
        (families.repeated(4), "confidence", (2, 2)),  # lost mass: x_0 != x_1
        (families.dirichlet(4, 3, alpha=0.7, seed=9), "entropy", (2, 1, 1)),
        (families.dirichlet(4, 2, alpha=0.4, seed=1), ThresholdPlanner(0.7), None),
        (families.dirichlet(4, 2, alpha=0.4, seed=1), "random", (2, 2)),
    ],
)
def test_simulated_samples_follow_the_exact_law(law, planner, sizes):
    plan = None if sizes is None else mt.Schedule(sizes)
    run = exact_run(law, plan, planner)
    n = 20000
    sim = simulate(law, plan, planner, n=n, seed=7)
    done = ~sim.lost
    counts = np.zeros(law.table.shape)
    np.add.at(counts, tuple(sim.samples[done].T), 1)
    q = run.law.table
    sd = np.sqrt(np.maximum(q * (1 - q), 1e-300) / n)
    assert np.all(counts[q == 0] == 0)
    assert np.max(np.abs((counts / n - q)[q > 0] / sd[q > 0])) < 5
    lost_sd = math.sqrt(max(run.lost * (1 - run.lost), 1e-300) / n)
    assert abs(sim.lost.mean() - run.lost) <= 5 * lost_sd + 1e-12
    assert np.all(sim.samples[sim.lost].min(axis=1) == -1)
    if sizes is not None:
        assert np.all(sim.steps[done] == len(sizes))
    # number of steps of the finished samples: the engine's step_counts (a law under q)
    emp = np.bincount(sim.steps[done], minlength=len(run.step_counts)) / n
    sc = np.clip(run.step_counts, 0.0, 1.0)
    sd = np.sqrt(sc * (1 - sc) / n)
    assert np.all(np.abs(emp[: len(sc)] - sc) <= 5 * sd + 1e-12)


def test_seeds_reproduce():
    p = families.dirichlet(4, seed=0)
    a = simulate(p, mt.Schedule((2, 2)), "random", n=50, seed=3)
    b = simulate(p, mt.Schedule((2, 2)), "random", n=50, seed=3)
    np.testing.assert_array_equal(a.samples, b.samples)
    e1 = estimate_kl(p, mt.Schedule((2, 2)), "confidence", n=50, seed=3)
    e2 = estimate_kl(p, mt.Schedule((2, 2)), "confidence", n=50, seed=3)
    assert e1.value == e2.value


# -- d = 200 Markov chain ----------------------------------------------------------------
def _gap_entropies(P, d):
    """h_g = H(X_g | X_0) = sum_a pi_a H(P^g(a, .)), g = 0..d, and H(pi), by hand."""
    pi = families.stationary_distribution(P)
    h, Pg = [0.0], np.eye(len(P))
    for _ in range(d):
        Pg = Pg @ P
        h.append(float(pi @ entr(Pg).sum(axis=1)))
    return np.array(h), float(entr(pi).sum())


def test_d200_random_planner_path_kl_matches_profile_formula():
    d = 200
    chain = MarkovChainLaw(P2, d)
    sched = mt.Schedule.constant(d, 20)
    prof = mt.Profile.from_entropy_coefficients(families.markov_chain_entropy_coefficients(P2, d))
    exact = mt.path_kl(prof, sched)
    est = estimate_kl(chain, sched, "random", n=1000, seed=2026)
    assert est.kind == "path_kl"
    assert abs(est.zscore(exact)) < 5, (est.value, est.stderr, exact)


def test_d200_left_to_right_kl_matches_closed_form():
    r"""Stationary chain, consecutive blocks B = [s, s+k): given x_{s-1},
    TC = sum_{i=1}^k h_i - k h_1; the first block: k H(pi) - H(pi) - (k-1) h_1."""
    d = 200
    chain = MarkovChainLaw(P2, d)
    sched = mt.Schedule.constant(d, 25)
    h, Hpi = _gap_entropies(P2, d)
    exact = 0.0
    for t, k in enumerate(sched.sizes):
        exact += (k - 1) * (Hpi - h[1]) if t == 0 else h[1 : k + 1].sum() - k * h[1]
    est = estimate_kl(chain, sched, "left_to_right", n=1000, seed=7)
    assert est.kind == "kl"
    assert abs(est.zscore(exact)) < 5, (est.value, est.stderr, exact)


def test_confidence_on_a_long_chain():
    """A deterministic adaptive planner on a long chain: finite estimate, sane reveal steps."""
    d = 60
    chain = MarkovChainLaw(P2, d)
    sched = mt.Schedule.constant(d, 6)
    est = estimate_kl(chain, sched, ConfidencePlanner(), n=300, seed=1)
    assert np.isfinite(est.value) and est.value > 0
    assert np.all((est.reveal_step >= 1) & (est.reveal_step <= 6))
    assert np.all(est.steps == 6)


# -- errors ------------------------------------------------------------------------------
def test_bad_input():
    p = families.dirichlet(3, seed=0)
    with pytest.raises(ValueError, match="n"):
        simulate(p, mt.Schedule((3,)), n=1, seed=0)
    with pytest.raises(ValueError, match="seed"):
        simulate(p, mt.Schedule((3,)), n=10, seed=-1)
    with pytest.raises(ValueError, match="seed"):
        estimate_kl(p, mt.Schedule((3,)), n=10, seed=None)
    with pytest.raises(ValueError, match="^planner: a Grid drives the Bernoulli"):  # grids run (issue 20)
        simulate(p, mt.Grid.uniform(2), "confidence", n=10, seed=0)
    with pytest.raises(ValueError, match="plan"):
        simulate(p, mt.Schedule((2, 2)), n=10, seed=0)
    with pytest.raises(ValueError, match="plan"):
        estimate_kl(p, None, "confidence", n=10, seed=0)
    with pytest.raises(ValueError, match="planner"):
        simulate(p, None, BernoulliPlanner((0.5, 1.0)), n=10, seed=0)
    with pytest.raises(ValueError, match="^confidence:"):
        estimate_kl(p, mt.Schedule((3,)), n=10, seed=0, confidence=1.5)


def test_markov_chain_law_to_joint_and_entropy_coefficients():
    """The structured chain's dense table is the chain's path probability by enumeration,
    and its entropy coefficients are the subset-entropy means of that table."""
    import itertools

    from mdmtheory.laws import MarkovChainLaw

    P = np.array([[0.7, 0.3], [0.4, 0.6]])
    pi = np.array([4 / 7, 3 / 7])  # stationary: pi P = pi
    law = MarkovChainLaw(P, 4)
    table = law.to_joint().table
    for x in itertools.product(range(2), repeat=4):
        ref = pi[x[0]] * np.prod([P[x[i], x[i + 1]] for i in range(3)])
        assert table[x] == pytest.approx(ref, abs=1e-15)
    e = law.entropy_coefficients()
    assert np.allclose(e, mt.information.entropy_coefficients(mt.Joint(table)), atol=1e-12)


# -- issue 20 §1: Bernoulli grids in Monte Carlo (MDLM/SEDD-style ancestral unmasking) --------
@pytest.mark.parametrize("times", [(0.0, 0.4, 1.0), (0.2, 0.5, 0.9), (0.0, 0.3, 0.6, 0.8)])
def test_grid_simulation_agrees_with_the_exact_engine(times):
    from mdmtheory.samplers import exact_run

    p = families.dirichlet(4, 2, alpha=0.5, seed=2)
    g = mt.Grid(times)
    ex = exact_run(p, g, trajectory=True)
    n = 20000
    sim = simulate(p, g, n=n, seed=3)
    q = ex.law.table.ravel()
    ok = ~sim.lost
    idx = np.ravel_multi_index(sim.samples[ok].T, p.table.shape)
    freq = np.bincount(idx, minlength=q.size) / n
    se = np.sqrt(np.maximum(q * (1 - q), 1e-12) / n)
    assert np.all(np.abs(freq - q) / se < 4.5)
    assert abs(sim.lost.mean() - ex.lost) <= 4.5 * np.sqrt(max(ex.lost * (1 - ex.lost), 1e-12) / n)
    # reveal steps: the engine's columns (initialization 0, steps 1..N, completion N + 1)
    cols = ex.reveal_steps.shape[1]
    rs = np.stack([(sim.reveal_step[ok] == c).mean(axis=0) for c in range(cols)], axis=1) * ok.mean()
    ref = ex.reveal_steps / ex.reveal_steps.sum(axis=1, keepdims=True) * (1 - ex.lost)
    assert np.all(np.abs(rs - ref) < 4.5 * np.sqrt(np.maximum(ref * (1 - ref), 1e-12) / n) + 1e-3)
    est = estimate_kl(p, g, n=n, seed=5)
    assert abs(est.zscore(ex.path_kl)) < 4.5
