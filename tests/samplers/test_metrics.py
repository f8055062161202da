"""The sampler-centric metrics of Tang et al. (issue 20 §6) against their definition computed
by loops, the theory's per-transition path KL against its closed form, and the protocol's
basic facts on a small chain."""

from __future__ import annotations

import math

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.samplers import path_kl_per_transition, transition_rates
from mdmtheory.laws import MarkovChainLaw


def _loops(x, P):
    K = P.shape[0]
    C = np.zeros((K, K))
    for row in x:
        for a, b in zip(row[:-1], row[1:]):
            C[a, b] += 1
    tot = C.sum()
    kl = tv = 0.0
    for i in range(K):
        r = C[i].sum()
        if r == 0:
            continue
        ph = C[i] / r
        kl += r / tot * sum(p * math.log(p / q) for p, q in zip(ph, P[i]) if p > 0)
        tv += r / tot * 0.5 * sum(abs(p - q) for p, q in zip(ph, P[i]))
    return kl, tv


def test_rates_by_their_definition_and_lost_rows_are_excluded():
    P = np.array([[0.7, 0.2, 0.1], [0.3, 0.3, 0.4], [0.1, 0.1, 0.8]])
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, size=(40, 9))
    r = transition_rates(x, P, n_boot=50)
    kl, tv = _loops(x, P)
    assert r.kl_rate == pytest.approx(kl, abs=1e-12) and r.tv_rate == pytest.approx(tv, abs=1e-12)
    assert r.bigrams == 40 * 8 and 0 <= r.kl_rate_ci[0] <= r.kl_rate_ci[1]
    x2 = np.vstack([x, np.full((1, 9), -1)])
    assert transition_rates(x2, P, n_boot=50).kl_rate == pytest.approx(kl, abs=1e-12)


def test_bias_corrected_estimate_by_its_definition_lies_in_the_interval():
    """Issue 31 §12: the plug-in can lie above its own (bias-corrected) interval; the point
    estimate printed with the interval is 2·plug-in − mean of the bootstrap plug-ins."""
    P = np.array([[0.7, 0.2, 0.1], [0.3, 0.3, 0.4], [0.1, 0.1, 0.8]])
    law = MarkovChainLaw(P, 8)
    x = law.sample(30, np.random.default_rng(3))
    r = transition_rates(x, P, n_boot=40, seed=5)
    rng = np.random.default_rng(5)
    boots = [_loops(x[rng.integers(0, 30, 30)], P) for _ in range(40)]
    kl, tv = _loops(x, P)
    assert r.kl_rate_corrected == pytest.approx(max(2 * kl - np.mean([b[0] for b in boots]), 0.0), abs=1e-12)
    assert r.tv_rate_corrected == pytest.approx(max(2 * tv - np.mean([b[1] for b in boots]), 0.0), abs=1e-12)
    assert r.kl_rate_ci[0] <= r.kl_rate_corrected <= r.kl_rate_ci[1]
    assert r.tv_rate_ci[0] <= r.tv_rate_corrected <= r.tv_rate_ci[1]
    assert r.kl_rate > r.kl_rate_corrected  # the plug-in's upward bias at 30 x 7 bigrams


def test_exact_draws_approach_zero_and_the_sampler_error_does_not():
    P = np.array([[0.9, 0.1], [0.2, 0.8]])
    law = MarkovChainLaw(P, 16)
    rng = np.random.default_rng(1)
    small = transition_rates(law.sample(100, rng), P, n_boot=50).kl_rate
    big = transition_rates(law.sample(4000, rng), P, n_boot=50).kl_rate
    assert big < small / 10  # plug-in floor ~ 1/(2 * bigrams)
    exact = transition_rates(law.sample(2000, rng), P, n_boot=200)
    assert exact.kl_rate_ci[0] <= 1e-3  # bias-corrected: the true rate of exact draws, 0, is not excluded
    one = transition_rates(mt.samplers.simulate(law, mt.Schedule((16,)), n=4000, seed=2).samples, P, n_boot=50)
    assert one.kl_rate > 50 * big  # one step: independent marginals, a large transition error


def test_path_kl_per_transition_closed_form():
    P = np.array([[0.9, 0.1], [0.2, 0.8]])
    pi = mt.families.stationary_distribution(P)
    H = lambda v: -sum(a * math.log(a) for a in v if a > 0)  # noqa: E731
    mi = H(pi) - sum(pi[a] * H(P[a]) for a in range(2))  # one step: TC/(d-1) = I(X_0; X_1)
    assert path_kl_per_transition(P, 12, 1) == pytest.approx(mi, rel=1e-12)
    assert path_kl_per_transition(P, 12, 12) == pytest.approx(0.0, abs=1e-14)
    p = mt.families.markov_chain(P, 8)
    assert path_kl_per_transition(P, 8, 3) == pytest.approx(mt.path_kl(p, mt.Schedule.constant(8, 3)) / 7, rel=1e-10)


def test_bad_input():
    P = np.array([[0.9, 0.1], [0.2, 0.8]])
    with pytest.raises(ValueError, match=r"^samples:"):
        transition_rates(np.zeros((3, 1), int), P)
    with pytest.raises(ValueError, match=r"^samples: token 2"):
        transition_rates(np.full((3, 4), 2), P)
    with pytest.raises(ValueError, match=r"^n_boot:"):
        transition_rates(np.zeros((3, 4), int), P, n_boot=1)


def test_population_transition_rate_against_loops_over_the_table():
    from mdmtheory.samplers import transition_rate

    p = mt.families.dirichlet(4, 3, alpha=0.6, seed=2)
    q = mt.samplers.sampler_law(p, mt.Schedule((2, 2)))
    K, d = 3, 4

    def pooled(T):
        C = np.zeros((K, K))
        for x in np.ndindex(*T.shape):
            for t in range(d - 1):
                C[x[t], x[t + 1]] += T[x]
        return C

    Cq, Cp = pooled(q.table), pooled(p.table)
    w = Cq.sum(1) / Cq.sum()
    Q, P = Cq / Cq.sum(1, keepdims=True), Cp / Cp.sum(1, keepdims=True)
    ref = sum(w[i] * sum(Q[i, j] * math.log(Q[i, j] / P[i, j]) for j in range(K) if Q[i, j] > 0) for i in range(K))
    assert transition_rate(p, q) == pytest.approx(ref, rel=1e-12)
    assert transition_rate(p, p) == pytest.approx(0.0, abs=1e-14)
    # a chain sampled one token per step: exact, so its bigrams are the chain's
    c = mt.families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 5)
    assert transition_rate(c, mt.samplers.sampler_law(c, mt.Schedule((1,) * 5))) == pytest.approx(0.0, abs=1e-13)


def _dense_rates(x, P, n_boot, seed):
    """The dense formula the package used before the sparse counts (issue 29 §1): per-sample
    (n, K²) bigram counts, a resample the sum of its rows, the rates from the (K, K) table —
    benchmarks/bench_transition_rates.py's baseline ``dense_rates``, loaded from that file
    (one copy: the benchmark's max |Δ rate| column and this test compare with the same code)."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "bench_transition_rates.py"
    spec = importlib.util.spec_from_file_location("bench_transition_rates", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rates, boots = mod.dense_rates(x, P, n_boot, seed)
    return rates, np.array(boots)


@pytest.mark.parametrize("K,n,d", [(2, 30, 6), (5, 200, 7), (11, 120, 4)])
def test_sparse_counts_give_the_dense_formulas_values(K, n, d):
    rng = np.random.default_rng(K)
    P = rng.dirichlet(np.ones(K), size=K)
    x = rng.integers(0, K, size=(n, d))
    (kl, tv), boots = _dense_rates(x, P, 30, 4)
    r = transition_rates(x, P, n_boot=30, seed=4)
    assert r.kl_rate == pytest.approx(kl, abs=1e-12) and r.tv_rate == pytest.approx(tv, abs=1e-12)
    qlo, qhi = np.percentile(boots, [2.5, 97.5], axis=0)
    assert r.kl_rate_ci == pytest.approx((max(2 * kl - qhi[0], 0.0), 2 * kl - qlo[0]), abs=1e-12)
    assert r.tv_rate_ci == pytest.approx((max(2 * tv - qhi[1], 0.0), 2 * tv - qlo[1]), abs=1e-12)
    assert r.kl_rate_corrected == pytest.approx(max(2 * kl - boots[:, 0].mean(), 0.0), abs=1e-12)


@pytest.mark.parametrize("K", [1024, pytest.param(4096, marks=pytest.mark.slow)])
def test_large_alphabet_runs_in_bounded_memory_and_time(K):
    """n = 2000, d = 32: the dense per-sample counts would be 2000 · K² int64 (16 GiB at
    K = 1024, 250 GiB at K = 4096); the sparse counts stay under 64 MiB beyond the (K, K)
    matrix itself (tracemalloc peak) and 10 s (K = 4096: about 11 s on 2 shared cores, most of
    it building and checking the 128 MiB matrix; ``-m slow``)."""
    import time
    import tracemalloc

    n, d = 2000, 32
    rng = np.random.default_rng(0)
    P = np.full((K, K), 0.5 / (K - 1))
    np.fill_diagonal(P, 0.5)
    x = np.cumsum(rng.integers(0, 2, size=(n, d)), axis=1) % K  # a stay/move walk
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        r = transition_rates(x, P, n_boot=20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    dt = time.perf_counter() - t0
    assert peak < 64 * 2**20 + 2 * P.nbytes and dt < 10.0, (peak / 2**20, dt)
    # the rate by its definition: bigrams of this walk are (i, i) or (i, i + 1 mod K)
    (kl, tv), _ = _loops_sparse(x, P)
    assert r.kl_rate == pytest.approx(kl, abs=1e-12) and r.tv_rate == pytest.approx(tv, abs=1e-12)


def _loops_sparse(x, P):
    """KL- and TV-rate by loops over a dict of bigram counts (no K² table)."""
    from collections import Counter

    C = Counter((int(a), int(b)) for row in x for a, b in zip(row[:-1], row[1:]))
    rows = Counter()
    for (a, _), c in C.items():
        rows[a] += c
    tot = sum(rows.values())
    kl = tv = 0.0
    for (a, b), c in C.items():
        ph = c / rows[a]
        kl += rows[a] / tot * ph * math.log(ph / P[a, b])
        tv += rows[a] / tot * 0.5 * (abs(ph - P[a, b]) - P[a, b])
    tv += sum(rows[a] / tot * 0.5 for a in rows)  # the unobserved j of each row: ½ Σ P[a, j] = ½ (1 − Σ_obs P)
    return (kl, tv), None
