"""Laws given by their conditionals: mixtures of products and hidden Markov models.

Every conditional, log-marginal and leave-one-out conditional is checked against a dense
table built here by brute-force summation (over components / hidden paths), and against
the law's own ``to_joint``; sampling against exact marginals by z-score."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from mdmtheory.laws import HiddenMarkovLaw, MarkovChainLaw, MixtureOfProductsLaw, TableLaw, loo_conditionals


def brute_mixture_table(w, P):
    M, d, K = P.shape
    t = np.zeros((K,) * d)
    for x in itertools.product(range(K), repeat=d):
        t[x] = sum(w[m] * np.prod([P[m, k, x[k]] for k in range(d)]) for m in range(M))
    return t


def brute_hmm_table(pi, T, E, d):
    S, K = E.shape
    t = np.zeros((K,) * d)
    for z in itertools.product(range(S), repeat=d):
        pz = pi[z[0]] * np.prod([T[z[k - 1], z[k]] for k in range(1, d)])
        for x in itertools.product(range(K), repeat=d):
            t[x] += pz * np.prod([E[z[k], x[k]] for k in range(d)])
    return t


def brute_conditional(table, x, A, j):
    """p(x_j = . | x_A) by summing the table over everything else."""
    d = table.ndim
    idx = tuple(x[k] if k in A else slice(None) for k in range(d))
    sub = table[idx]  # remaining axes: positions not in A, in order
    rest = [k for k in range(d) if k not in A]
    m = sub.sum(axis=tuple(a for a, k in enumerate(rest) if k != j))
    return m / m.sum() if m.sum() > 0 else np.zeros_like(m)


def brute_log_marginal(table, x, A):
    d = table.ndim
    idx = tuple(x[k] if k in A else slice(None) for k in range(d))
    s = float(np.sum(table[idx]))
    return np.log(s) if s > 0 else -np.inf


def random_mixture(rng, M=3, d=4, K=3, zeros=False):
    w = rng.dirichlet(np.ones(M))
    P = rng.dirichlet(np.ones(K), size=(M, d))
    if zeros:  # impossible tokens in some components
        P[0, 0] = np.eye(K)[0]
        P[1, 2] = np.eye(K)[1]
    return w, P


def random_hmm(rng, S=3, d=4, K=3):
    return rng.dirichlet(np.ones(S)), rng.dirichlet(np.ones(S), size=S), rng.dirichlet(np.ones(K), size=S)


def check_against_table(law, table, rng, n=40):
    d, K = table.ndim, table.shape[0]
    xs = np.array(list(itertools.product(range(K), repeat=d)))
    x = xs[rng.integers(0, xs.shape[0], n)]  # includes zero-probability sequences
    revealed = rng.random((n, d)) < 0.5
    revealed[0] = False
    revealed[1] = True
    cond = law.conditionals(x, revealed)
    loo = law.loo_conditionals(x, revealed)
    lm = law.log_marginal(x, revealed)
    for r in range(n):
        A = {k for k in range(d) if revealed[r, k]}
        assert np.isclose(lm[r], brute_log_marginal(table, x[r], A), rtol=1e-12, atol=1e-12) or (
            np.isneginf(lm[r]) and np.isneginf(brute_log_marginal(table, x[r], A))
        )
        reachable = np.isfinite(lm[r])
        for j in range(d):
            if j in A:
                assert np.all(cond[r, j] == 0)
            elif reachable:
                np.testing.assert_allclose(cond[r, j], brute_conditional(table, x[r], A, j), atol=1e-12)
            if reachable:
                np.testing.assert_allclose(loo[r, j], brute_conditional(table, x[r], A - {j}, j), atol=1e-12)
    # the generic leave-one-out (through conditionals only) agrees with the law's own
    tl = TableLaw(law.to_joint())
    reach = np.isfinite(lm)
    np.testing.assert_allclose(loo_conditionals(tl, x, revealed)[reach], loo[reach], atol=1e-12)


@pytest.mark.parametrize("zeros", [False, True])
def test_mixture_against_brute_force_table(zeros):
    rng = np.random.default_rng(1)
    w, P = random_mixture(rng, zeros=zeros)
    law = MixtureOfProductsLaw(w, P)
    table = brute_mixture_table(w, P)
    np.testing.assert_allclose(law.to_joint().table, table, atol=1e-15)
    check_against_table(law, table, rng)


def test_hmm_against_brute_force_table():
    rng = np.random.default_rng(2)
    pi, T, E = random_hmm(rng)
    E[0] = np.eye(3)[2]  # a state that emits one token only
    law = HiddenMarkovLaw(pi, T, E, 4)
    table = brute_hmm_table(pi, T, E, 4)
    np.testing.assert_allclose(law.to_joint().table, table, atol=1e-15)
    check_against_table(law, table, rng)


def test_markov_chain_loo_against_table():
    rng = np.random.default_rng(3)
    law = MarkovChainLaw([[0.8, 0.15, 0.05], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]], 4)
    check_against_table(law, law.to_joint().table, rng)


def test_hmm_with_one_state_is_a_product_and_mixture_with_one_component_too():
    rng = np.random.default_rng(4)
    E = rng.dirichlet(np.ones(3), size=1)
    h = HiddenMarkovLaw([1.0], [[1.0]], E, 3)
    m = MixtureOfProductsLaw([1.0], np.broadcast_to(E, (1, 3, 3)))
    x = h.sample(20, rng)
    rev = rng.random((20, 3)) < 0.5
    np.testing.assert_allclose(h.loo_conditionals(x, rev), np.broadcast_to(E, (20, 3, 3)), atol=1e-14)
    np.testing.assert_allclose(m.loo_conditionals(x, rev), np.broadcast_to(E, (20, 3, 3)), atol=1e-14)


@pytest.mark.parametrize("kind", ["mixture", "hmm"])
def test_sampling_matches_exact_pair_marginals(kind):
    """Frequencies of (x_0, x_{d-1}) and of each x_j = 0 vs exact values, |z| < 5."""
    rng = np.random.default_rng(5)
    d = 5
    if kind == "mixture":
        law = MixtureOfProductsLaw(*random_mixture(rng, M=4, d=d, K=2))
    else:
        law = HiddenMarkovLaw(*random_hmm(rng, S=3, d=d, K=2), d)
    table = law.to_joint().table
    n = 40000
    x = law.sample(n, np.random.default_rng(6))
    assert x.shape == (n, d) and x.dtype.kind == "i"
    pair = table.sum(axis=tuple(range(1, d - 1)))
    for a, b in itertools.product(range(2), repeat=2):
        f = np.mean((x[:, 0] == a) & (x[:, -1] == b))
        assert abs(f - pair[a, b]) / np.sqrt(pair[a, b] * (1 - pair[a, b]) / n) < 5
    for j in range(d):
        pj = table.sum(axis=tuple(k for k in range(d) if k != j))[0]
        assert abs(np.mean(x[:, j] == 0) - pj) / np.sqrt(pj * (1 - pj) / n) < 5


def test_large_d_is_fast_and_consistent():
    """d = 128: conditionals of a masked j equal its leave-one-out row; posterior sums to 1."""
    rng = np.random.default_rng(7)
    d, M, K = 128, 64, 2
    centres = rng.integers(0, 2, (M, d))
    P = np.where(centres[..., None] == np.arange(K), 0.9, 0.1)
    law = MixtureOfProductsLaw(np.full(M, 1 / M), P)
    hmm = HiddenMarkovLaw(*random_hmm(rng, S=4, d=d, K=K), d)
    for lw in (law, hmm):
        x = lw.sample(256, rng)
        rev = rng.random(x.shape) < 0.4
        c, loo = lw.conditionals(x, rev), lw.loo_conditionals(x, rev)
        np.testing.assert_allclose(c[~rev], loo[~rev], atol=1e-12)
        np.testing.assert_allclose(loo.sum(axis=-1), 1.0, atol=1e-12)
        assert np.all(np.isfinite(lw.log_marginal(x, rev)))


def test_bad_input_raises():
    with pytest.raises(ValueError, match="weights"):
        MixtureOfProductsLaw([0.5, 0.6], np.full((2, 3, 2), 0.5))
    with pytest.raises(ValueError, match="probs"):
        MixtureOfProductsLaw([0.5, 0.5], np.full((3, 3, 2), 0.5))
    with pytest.raises(ValueError, match="transition"):
        HiddenMarkovLaw([0.5, 0.5], [[1.0]], [[1.0], [1.0]], 3)
    with pytest.raises(ValueError, match="emission"):
        HiddenMarkovLaw([0.5, 0.5], np.eye(2), [[0.5, 0.6], [1.0, 0.0]], 3)
    with pytest.raises(ValueError, match="d"):
        HiddenMarkovLaw([1.0], [[1.0]], [[1.0]], 0)


@pytest.mark.parametrize(
    "weights,probs,word",
    [
        (["1"], [[["0.5", "0.5"]]], "weights"),  # numeric strings are text, not numbers
        ([1.0], [[["0.5", "0.5"]]], "probs"),
        ([True], [[[1.0, 0.0]]], "weights"),  # a bool is not a probability
        ([1.0], [[[np.inf, 0.0]]], "probs"),
        ([1.0], np.ones((1, 0, 2)) / 2, "probs"),  # d = 0
    ],
)
def test_laws_refuse_text_bools_and_empty(weights, probs, word):
    """Same refusals as every other array argument (mdmtheory._validate.float_array)."""
    with pytest.raises(ValueError, match=word):
        MixtureOfProductsLaw(weights, probs)
    with pytest.raises(ValueError, match="initial"):
        HiddenMarkovLaw(["1"], [[1.0]], [[0.5, 0.5]], 3)


def test_estimate_profile_matches_exact_profile():
    """Monte Carlo phi_j (and paired h^card_j) vs the exact profile of the dense table, |z| < 5."""
    import mdmtheory as mt
    from mdmtheory.laws import estimate_information_profile

    rng = np.random.default_rng(8)
    d, M = 6, 4
    centres = rng.integers(0, 2, (M, d))
    law = MixtureOfProductsLaw(np.full(M, 1 / M), np.where(centres[..., None] == np.arange(2), 0.85, 0.15))
    exact = mt.information_profile(law.to_joint()).values
    est = estimate_information_profile(law, 3000, seed=9)
    assert abs(est.values[0] - exact[0]) < 1e-12  # nothing revealed: the marginal, no noise
    z = (est.values[1:] - exact[1:]) / est.stderr[1:]
    assert np.all(np.abs(z) < 5)
    h, se = est.gain_coefficients()
    hz = (h[1:] - d * (exact[0] - exact[1:])) / se[1:]
    assert np.all(np.abs(hz) < 5)
    # the hidden Markov law too (and the fast matmul path = the general gather path)
    hmm = HiddenMarkovLaw(*random_hmm(rng, S=2, d=5, K=3), 5)
    est = estimate_information_profile(hmm, 3000, seed=10)
    exact = mt.information_profile(hmm.to_joint()).values
    assert np.all(np.abs((est.values[1:] - exact[1:]) / est.stderr[1:]) < 5)
    x = law.sample(30, rng)
    rev = rng.random(x.shape) < 0.5
    slow = MixtureOfProductsLaw(law.weights, law.probs)
    object.__setattr__(slow, "_finite", False)
    np.testing.assert_allclose(law.conditionals(x, rev), slow.conditionals(x, rev), atol=1e-13)


def test_mixture_posterior_pruning_matches_full_softmax():
    """Many components, a concentrated posterior: the pruned product (components below
    e^-(40 + log M) of the row maximum left out) equals the full softmax mixture."""
    from scipy.special import softmax

    rng = np.random.default_rng(5)
    M, d = 256, 48
    c = rng.integers(0, 2, (M, d))
    P = np.where(c[..., None] == np.arange(2), 0.98, 0.02)
    w = rng.dirichlet(np.ones(M))
    law = MixtureOfProductsLaw(w, P)
    x = law.sample(40, rng)
    rev = rng.random((40, d)) < np.linspace(0.0, 1.0, 40)[:, None]  # from nothing to all revealed
    # brute force: log w_m + sum over revealed k of log pi_{m,k}(x_k), then a plain softmax
    logpi = np.log(P[np.arange(M)[None, :, None], np.arange(d)[None, None, :], x[:, None, :]])  # (n, M, d)
    logpost = np.log(w) + np.where(rev[:, None, :], logpi, 0.0).sum(axis=2)
    want = np.einsum("nm,mdk->ndk", softmax(logpost, axis=1), P)
    want[rev] = 0.0
    got = law.conditionals(x, rev)
    assert np.max(np.abs(got - want)) < 1e-12
    # one row per call (pruning is decided per chunk of rows): the pruned branch is taken
    # for a good share of rows (fewer than M/2 components within the cut)
    rows = np.concatenate([law.conditionals(x[i : i + 1], rev[i : i + 1]) for i in range(40)])
    assert np.max(np.abs(rows - want)) < 1e-12
    assert np.mean(np.sum(logpost.max(1, keepdims=True) - logpost < 40 + np.log(M), 1) < M // 2) > 0.3
