"""Tests of mdmtheory.families.

Expected values come from brute force written here (enumerate outcomes with
itertools.product, multiply probabilities by hand) or from the closed forms of
docs/theory.md §6 -- never from the code under test.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from mdmtheory.laws.families import (
    blocks,
    dirichlet,
    empirical,
    ising_chain,
    markov_chain,
    markov_chain_entropy_coefficients,
    mixture_of_products,
    noisy_repeated_bit,
    parity,
    product,
    repeated,
    stationary_distribution,
    xorsat,
)
from mdmtheory.laws import Joint

LOG2 = math.log(2.0)


# -- brute-force references -----------------------------------------------------------
def outcomes(K, d):
    return itertools.product(range(K), repeat=d)


def entropy(probs):
    """H in nats of an iterable of probabilities, by hand."""
    return -sum(p * math.log(p) for p in probs if p > 0)


def table_entropy(table):
    return entropy(np.asarray(table).ravel().tolist())


def brute_marginal(table, positions):
    """Marginal of X_positions as a dict {values: prob}, by enumeration."""
    table = np.asarray(table)
    out = Counter()
    for x in outcomes(table.shape[0], table.ndim):
        out[tuple(x[j] for j in positions)] += table[x]
    return out


def gf2_rank(A):
    """Rank over GF(2) by Gaussian elimination on rows."""
    M = [list(map(int, row)) for row in np.asarray(A)]
    rank, ncols = 0, len(M[0]) if M else 0
    for c in range(ncols):
        pivot = next((r for r in range(rank, len(M)) if M[r][c]), None)
        if pivot is None:
            continue
        M[rank], M[pivot] = M[pivot], M[rank]
        for r in range(len(M)):
            if r != rank and M[r][c]:
                M[r] = [a ^ b for a, b in zip(M[r], M[rank])]
        rank += 1
    return rank


def chain_table(pi, P, d):
    """p(x) = pi(x_1) prod P(x_i, x_{i+1}) by enumeration."""
    K = len(pi)
    t = np.zeros((K,) * d)
    for x in outcomes(K, d):
        v = pi[x[0]]
        for a, b in zip(x, x[1:]):
            v *= P[a][b]
        t[x] = v
    return t


def check_law(p, K, d):
    assert isinstance(p, Joint)
    assert p.table.shape == (K,) * d
    assert p.table.dtype == np.float64
    assert abs(p.table.sum() - 1.0) < 1e-12
    assert np.all(p.table >= 0)


CHAINS = {
    "sticky2": [[0.9, 0.1], [0.2, 0.8]],
    "antisticky2": [[0.3, 0.7], [0.6, 0.4]],
    "periodic2": [[0.0, 1.0], [1.0, 0.0]],
    "cycle3": [[0.1, 0.7, 0.2], [0.3, 0.1, 0.6], [0.5, 0.25, 0.25]],
    "sparse3": [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [1.0, 0.0, 0.0]],
    "transient3": [[0.2, 0.8, 0.0], [0.6, 0.4, 0.0], [0.3, 0.3, 0.4]],
}


def stationary_by_linear_algebra(P):
    """pi solving pi (P - I) = 0, sum pi = 1 (least squares on the stacked system)."""
    P = np.asarray(P, dtype=float)
    K = P.shape[0]
    M = np.vstack([P.T - np.eye(K), np.ones(K)])
    rhs = np.zeros(K + 1)
    rhs[-1] = 1.0
    return np.linalg.lstsq(M, rhs, rcond=None)[0]


# -- product, repeated, parity, xorsat, blocks -----------------------------------------
def test_product_factorizes_and_entropy_adds():
    m = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3], [1.0, 0.0, 0.0], [0.25, 0.25, 0.5]])
    p = product(m)
    check_law(p, 3, 4)
    for x in outcomes(3, 4):
        assert p.table[x] == pytest.approx(math.prod(m[i][x[i]] for i in range(4)), abs=1e-15)
    assert table_entropy(p.table) == pytest.approx(sum(entropy(row) for row in m.tolist()), abs=1e-12)


@pytest.mark.parametrize("d, K", [(1, 2), (3, 2), (4, 3), (2, 5)])
def test_repeated_uniform(d, K):
    p = repeated(d, K)
    check_law(p, K, d)
    for x in outcomes(K, d):
        assert p.table[x] == (1.0 / K if len(set(x)) == 1 else 0.0)
    assert table_entropy(p.table) == pytest.approx(math.log(K), abs=1e-12)


def test_repeated_weights():
    w = [0.5, 0.2, 0.3]
    p = repeated(3, K=3, weights=w)
    for x in outcomes(3, 3):
        assert p.table[x] == pytest.approx(w[x[0]] if len(set(x)) == 1 else 0.0, abs=1e-15)
    assert table_entropy(p.table) == pytest.approx(entropy(w), abs=1e-12)


@pytest.mark.parametrize("d", [2, 3, 4, 6])
def test_parity(d):
    p = parity(d)
    check_law(p, 2, d)
    for x in outcomes(2, d):
        assert p.table[x] == (0.0 if sum(x) % 2 else 2.0 ** -(d - 1))
    assert table_entropy(p.table) == pytest.approx((d - 1) * LOG2, abs=1e-12)
    # every d-1 coordinates are iid uniform bits
    for drop in range(d):
        rest = [j for j in range(d) if j != drop]
        marg = brute_marginal(p.table, rest)
        assert all(v == pytest.approx(2.0 ** -(d - 1)) for v in marg.values())
        assert len(marg) == 2 ** (d - 1)


XORSAT_CASES = [
    [[1, 0], [0, 1], [1, 1]],  # parity on 3
    [[1, 1, 0], [0, 1, 1], [1, 0, 1], [1, 1, 1]],  # rank 3
    [[1, 1], [1, 1], [0, 0]],  # duplicated rows, a zero row: rank 1
    [[0, 0, 0], [0, 0, 0]],  # X = 0
    [[1], [0], [1], [1]],
]


@pytest.mark.parametrize("A", XORSAT_CASES + [np.random.default_rng(s).integers(0, 2, (5, 4)) for s in range(4)])
def test_xorsat_matches_enumeration_over_U(A):
    A = np.asarray(A)
    d, r = A.shape
    expected = np.zeros((2,) * d)
    for u in outcomes(2, r):
        x = tuple(int(sum(A[i][k] * u[k] for k in range(r)) % 2) for i in range(d))
        expected[x] += 2.0**-r
    p = xorsat(A)
    check_law(p, 2, d)
    np.testing.assert_allclose(p.table, expected, rtol=0, atol=1e-15)
    assert table_entropy(p.table) == pytest.approx(gf2_rank(A) * LOG2, abs=1e-12)


def test_xorsat_accepts_bool_matrix():
    A = np.array([[True, False], [True, True]])
    np.testing.assert_array_equal(xorsat(A).table, np.full((2, 2), 0.25))


def test_blocks_factorize_in_order():
    p1 = Joint([[0.1, 0.2], [0.3, 0.4]])
    p2 = Joint([0.7, 0.3])
    p3 = parity(3)
    b = blocks(p1, p2, p3)
    check_law(b, 2, 6)
    for x in outcomes(2, 6):
        want = p1.table[x[0], x[1]] * p2.table[x[2]] * p3.table[x[3:]]
        assert b.table[x] == pytest.approx(want, abs=1e-15)
    assert table_entropy(b.table) == pytest.approx(
        sum(table_entropy(q.table) for q in (p1, p2, p3)), abs=1e-12
    )
    assert blocks(p2).table.tolist() == p2.table.tolist()


# -- Markov chains -------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CHAINS))
def test_stationary_distribution(name):
    P = CHAINS[name]
    pi = stationary_distribution(P)
    np.testing.assert_allclose(pi, stationary_by_linear_algebra(P), atol=1e-12)
    assert np.all(pi >= 0)


@pytest.mark.parametrize("name", sorted(CHAINS))
@pytest.mark.parametrize("d", [1, 2, 4])
def test_markov_chain_enumeration(name, d):
    P = CHAINS[name]
    K = len(P)
    pi = stationary_by_linear_algebra(P)
    p = markov_chain(P, d)
    check_law(p, K, d)
    np.testing.assert_allclose(p.table, chain_table(pi, P, d), atol=1e-12)
    for i in range(d):
        marg = brute_marginal(p.table, [i])
        np.testing.assert_allclose([marg[(a,)] for a in range(K)], pi, atol=1e-12)


def test_markov_chain_non_stationary_initial():
    P = CHAINS["cycle3"]
    init = [1.0, 0.0, 0.0]
    p = markov_chain(P, 4, initial=init)
    np.testing.assert_allclose(p.table, chain_table(init, P, 4), atol=1e-15)
    law = np.array(init)
    for i in range(4):  # X_i ~ init P^i, computed by hand
        marg = brute_marginal(p.table, [i])
        np.testing.assert_allclose([marg[(a,)] for a in range(3)], law, atol=1e-12)
        law = np.array([sum(law[a] * P[a][b] for a in range(3)) for b in range(3)])


def test_reducible_chain_with_initial():
    p = markov_chain(np.eye(2), 3, initial=[0.25, 0.75])
    np.testing.assert_allclose(p.table, repeated(3, weights=[0.25, 0.75]).table)
    e = markov_chain_entropy_coefficients(np.eye(2), 3, initial=[0.25, 0.75])
    np.testing.assert_allclose(e, [0.0] + [entropy([0.25, 0.75])] * 3, atol=1e-14)


def brute_entropy_coefficients(table):
    d = table.ndim
    e = [0.0]
    for m in range(1, d + 1):
        hs = []
        for S in itertools.combinations(range(d), m):
            rest = tuple(j for j in range(d) if j not in S)
            hs.append(table_entropy(table.sum(axis=rest) if rest else table))
        e.append(sum(hs) / len(hs))
    return np.array(e)


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_entropy_coefficients_match_brute_force(name):
    P = CHAINS[name]
    pi = stationary_by_linear_algebra(P)
    H_pi = entropy(pi.tolist())
    H_cond = sum(pi[a] * entropy(P[a]) for a in range(len(P)))
    for d in range(1, 8):
        e = markov_chain_entropy_coefficients(P, d)
        assert e.shape == (d + 1,) and e.dtype == np.float64
        np.testing.assert_allclose(e, brute_entropy_coefficients(chain_table(pi, P, d)), rtol=0, atol=1e-12)
        assert e[d] == pytest.approx(H_pi + (d - 1) * H_cond, abs=1e-12)


def test_entropy_coefficients_large_d():
    P = CHAINS["cycle3"]
    pi = stationary_by_linear_algebra(P)
    H_pi = entropy(pi.tolist())
    H_cond = sum(pi[a] * entropy(P[a]) for a in range(3))
    d = 3000
    e = markov_chain_entropy_coefficients(P, d)
    assert np.all(np.isfinite(e))
    assert e[1] == pytest.approx(H_pi, abs=1e-13)
    assert e[d] == pytest.approx(H_pi + (d - 1) * H_cond, rel=1e-10)
    f = np.diff(e)  # the information profile: non-increasing
    assert np.all(np.diff(f) <= 1e-9)
    assert f[0] == pytest.approx(H_pi, abs=1e-13)
    # f(d-1) = mean_j H(X_j | X_rest): end positions see one neighbour, interior ones two,
    # and H(X_1 | X_0, X_2) = H(X_0, X_1, X_2) - H(X_0, X_2) = 2 H(X_1|X_0) - H(X_2|X_0).
    P2 = [[sum(P[a][c] * P[c][b] for c in range(3)) for b in range(3)] for a in range(3)]
    H_gap2 = sum(pi[a] * entropy(P2[a]) for a in range(3))
    want = (2 * H_cond + (d - 2) * (2 * H_cond - H_gap2)) / d
    assert f[-1] == pytest.approx(want, rel=1e-9)


def test_entropy_coefficients_exact_weights_at_moderate_d():
    """The subset-count weights against exact integer binomials (math.comb, Fractions)."""
    from fractions import Fraction

    P = np.array(CHAINS["sticky2"])
    pi = np.array([2 / 3, 1 / 3])
    d = 400
    h, Pg = [], np.eye(2)
    for _ in range(1, d):
        Pg = Pg @ P
        h.append(sum(pi[a] * entropy(Pg[a].tolist()) for a in range(2)))
    H_pi = entropy(pi.tolist())
    e = markov_chain_entropy_coefficients(P, d)
    for m in [2, 3, 50, 200, 399, 400]:
        total = math.comb(d, m)
        terms = [
            float(Fraction((d - g) * math.comb(d - g - 1, m - 2), total)) * h[g - 1]
            for g in range(1, d - m + 2)
        ]
        assert e[m] == pytest.approx(H_pi + math.fsum(terms), rel=1e-13)


def test_entropy_coefficients_refuse_non_stationary_initial():
    with pytest.raises(ValueError, match="initial"):
        markov_chain_entropy_coefficients(CHAINS["sticky2"], 4, initial=[0.5, 0.5])


# -- noise, mixtures, Ising ------------------------------------------------------------
@pytest.mark.parametrize("eps", [0.0, 0.1, 0.3, 0.5])
def test_noisy_repeated_bit(eps):
    d = 4
    p = noisy_repeated_bit(d, eps)
    check_law(p, 2, d)
    for x in outcomes(2, d):
        want = sum(0.5 * math.prod(eps if xi != b else 1 - eps for xi in x) for b in (0, 1))
        assert p.table[x] == pytest.approx(want, abs=1e-15)
    if eps == 0.0:
        assert table_entropy(p.table) == pytest.approx(LOG2, abs=1e-12)
    if eps == 0.5:
        assert table_entropy(p.table) == pytest.approx(d * LOG2, abs=1e-12)


def test_mixture_of_products_is_weighted_sum():
    rng = np.random.default_rng(7)
    M, d, K = 3, 3, 3
    w = np.array([0.5, 0.3, 0.2])
    m = rng.dirichlet(np.ones(K), size=(M, d))
    p = mixture_of_products(w, m)
    check_law(p, K, d)
    for x in outcomes(K, d):
        want = sum(w[c] * math.prod(m[c, i, x[i]] for i in range(d)) for c in range(M))
        assert p.table[x] == pytest.approx(want, abs=1e-15)


@pytest.mark.parametrize("d, J, h", [(1, 0.7, 0.3), (3, 0.5, 0.0), (4, -1.2, 0.4), (5, 3.0, -0.8), (3, 400.0, 0.0)])
def test_ising_chain_boltzmann_weights(d, J, h):
    p = ising_chain(d, J, field=h)
    check_law(p, 2, d)
    log_w = {}
    for x in outcomes(2, d):
        s = [2 * xi - 1 for xi in x]
        log_w[x] = J * sum(s[i] * s[i + 1] for i in range(d - 1)) + h * sum(s)
    top = max(log_w.values())
    Z = sum(math.exp(v - top) for v in log_w.values())
    for x, v in log_w.items():
        assert p.table[x] == pytest.approx(math.exp(v - top) / Z, abs=1e-14)


def test_ising_zero_coupling_is_product():
    h = 0.6
    q1 = math.exp(h) / (math.exp(h) + math.exp(-h))
    p = ising_chain(3, 0.0, field=h)
    for x in outcomes(2, 3):
        assert p.table[x] == pytest.approx(math.prod(q1 if xi else 1 - q1 for xi in x), abs=1e-15)


# -- random and data-driven laws -------------------------------------------------------
def test_dirichlet_reproducible_and_seeded():
    a = dirichlet(3, K=3, alpha=0.5, seed=11)
    check_law(a, 3, 3)
    np.testing.assert_array_equal(a.table, dirichlet(3, K=3, alpha=0.5, seed=11).table)
    assert not np.array_equal(a.table, dirichlet(3, K=3, alpha=0.5, seed=12).table)
    assert not np.array_equal(a.table, dirichlet(3, K=3, alpha=2.0, seed=11).table)


def test_dirichlet_ignores_global_rng():
    np.random.seed(1)
    a = dirichlet(4, seed=3).table
    np.random.seed(2)
    np.testing.assert_array_equal(a, dirichlet(4, seed=3).table)


def test_empirical_counts():
    rng = np.random.default_rng(5)
    seqs = rng.integers(0, 3, size=(50, 3))
    p = empirical(seqs)
    check_law(p, 3, 3)
    counts = Counter(map(tuple, seqs.tolist()))
    for x in outcomes(3, 3):
        assert p.table[x] == counts.get(x, 0) / 50


def test_empirical_alphabet_size():
    assert empirical([[0, 0], [0, 0]]).K == 2  # at least 2
    p = empirical([[0, 1], [1, 1]], K=4)
    assert p.K == 4 and p.table[0, 1] == 0.5 and p.table[1, 1] == 0.5
    assert empirical(np.array([[0.0, 2.0]])).table[0, 2] == 1.0  # integral floats


# -- bad input -----------------------------------------------------------------------
BAD_INPUT = [
    (product, ([0.5, 0.5],), "marginals"),  # 1-D
    (product, ([[0.5, 0.6], [0.5, 0.5]],), "marginals"),  # row sum 1.1
    (product, ([[1.5, -0.5]],), "marginals"),  # negative
    (product, ([[1.0], [1.0]],), "marginals"),  # K = 1
    (product, ([[0.5, np.nan]],), "marginals"),
    (repeated, (0,), "d"),
    (repeated, (2.0,), "d"),
    (repeated, (3, 1), "K"),
    (repeated, (3, 2, [0.2, 0.3, 0.5]), "weights"),  # length != K
    (repeated, (3, 2, [0.2, 0.7]), "weights"),  # sum 0.9
    (parity, (1,), "d"),
    (xorsat, ([[1, 2], [0, 1]],), "A"),
    (xorsat, ([[0.5, 1]],), "A"),
    (xorsat, ([1, 0, 1],), "A"),  # 1-D
    (blocks, (), "joints"),
    (blocks, (Joint([0.5, 0.5]), Joint([0.2, 0.3, 0.5])), "joints"),  # K differs
    (blocks, (np.array([0.5, 0.5]),), "joints"),  # not a Joint
    (markov_chain, ([[0.9, 0.2], [0.2, 0.8]], 3), "transition"),  # row sum 1.1
    (markov_chain, ([[0.9, 0.1], [0.2, 0.8]], 3, [0.5, 0.6]), "initial"),
    (markov_chain, ([[0.9, 0.1], [0.2, 0.8]], 3, [0.2, 0.3, 0.5]), "initial"),  # wrong length
    (markov_chain, ([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0]], 3), "transition"),  # not square
    (markov_chain, ([[1.2, -0.2], [0.2, 0.8]], 3), "transition"),  # negative
    (markov_chain, ([[0.9, 0.1], [0.2, 0.8]], 0), "d"),
    (markov_chain, (np.eye(2), 3), "transition"),  # reducible, no initial
    (markov_chain, ([[1, 0, 0], [0, 0.5, 0.5], [0, 0.5, 0.5]], 3), "transition"),  # two closed classes
    (markov_chain_entropy_coefficients, (np.eye(3), 5), "transition"),  # reducible, no initial
    (markov_chain_entropy_coefficients, ([[0.9, 0.1], [0.2, 0.8]], 0), "d"),
    (noisy_repeated_bit, (3, -0.1), "eps"),
    (noisy_repeated_bit, (3, 0.6), "eps"),
    (noisy_repeated_bit, (3, float("nan")), "eps"),
    (noisy_repeated_bit, (0, 0.1), "d"),
    (mixture_of_products, ([0.5, 0.5], [[[0.5, 0.5]]]), "marginals"),  # M mismatch
    (mixture_of_products, ([0.5, 0.6], [[[0.5, 0.5]], [[0.5, 0.5]]]), "weights"),
    (mixture_of_products, ([1.0], [[0.5, 0.5]]), "marginals"),  # 2-D
    (mixture_of_products, ([1.0], [[[0.5, 0.4]]]), "marginals"),
    (ising_chain, (0, 1.0), "d"),
    (ising_chain, (3, float("inf")), "coupling"),
    (ising_chain, (3, 1.0, "up"), "field"),
    (dirichlet, (3, 2, 0.0), "alpha"),
    (dirichlet, (3, 2, -1.0), "alpha"),
    (dirichlet, (0,), "d"),
    (dirichlet, (3, 2, 1.0, -1), "seed"),
    (dirichlet, (3, 2, 1.0, 1.5), "seed"),
    (empirical, ([[0, 1], [2, 3]], 3), "sequences"),  # token 3 with K=3
    (empirical, ([[0, -1]],), "sequences"),
    (empirical, ([[0, 0.5]],), "sequences"),
    (empirical, ([0, 1, 1],), "sequences"),  # 1-D
    (empirical, ([[0, 1]], 1), "K"),
]


@pytest.mark.parametrize("func, args, name", BAD_INPUT, ids=lambda v: getattr(v, "__name__", None))
def test_bad_input_names_the_argument(func, args, name):
    with pytest.raises(ValueError, match=rf"^{name}:"):
        func(*args)


def test_reducible_chain_error_says_pass_initial():
    with pytest.raises(ValueError, match="not unique.*initial"):
        markov_chain(np.eye(2), 3)


def test_too_large_tables_are_refused_before_allocation():
    with pytest.raises(ValueError, match="exceeds the exact limit"):
        repeated(40)
    with pytest.raises(ValueError, match="exceeds the exact limit"):
        dirichlet(30, K=3)


def test_sampler_laws_are_the_documented_laws():
    import math

    from mdmtheory.laws import families

    laws = families.sampler_laws(4)
    assert all(p.d == 4 and p.K == 2 for p in laws.values())
    t = laws["markov chain (stay 0.9)"].table
    assert abs(t.sum(axis=(2, 3))[0, 0] / t.sum(axis=(1, 2, 3))[0] - 0.9) < 1e-12  # stays with 0.9
    t = laws["ising chain (J = 0.8)"].table
    assert abs(math.log(t[0, 0, 0, 0] / t[0, 1, 0, 1]) - 6 * 0.8) < 1e-12  # 3 bonds: +3J against -3J
    t = laws["noisy repeated bit (0.1)"].table
    assert t[0, 0, 0, 0] > 0.3 and abs(t.sum() - 1) < 1e-12
