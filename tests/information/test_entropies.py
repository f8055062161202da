"""Tests of mdmtheory.information.entropies: all 2^d subset entropies and the functionals built on them.

Every expected value comes from a reference written here -- marginals built by
enumerating outcomes (itertools.product), entropies as -sum p log p by hand -- from the
closed forms of docs/theory.md §6 (repeated symbol, parity, XORSAT via a GF(2) rank computed
here, independent blocks, product laws), or from the peer library ``dit``. Never from the
code under test.
"""

from __future__ import annotations

import importlib
import itertools
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mdmtheory.information import (
    card_gain_coefficients,
    dual_total_correlation,
    entropy,
    entropy_coefficients,
    popcounts,
    subset_entropies,
    sum_mutual_information,
    sum_of_entropies,
    total_correlation,
    tse_complexity,
)
from mdmtheory.laws import Joint
from reference import random_table

entropy_mod = importlib.import_module("mdmtheory.information.entropies")
LOG2 = math.log(2.0)
TOL = 1e-12


# -- brute-force references -----------------------------------------------------------
def brute_subset_entropies(table) -> np.ndarray:
    """H(X_S) for every bitmask S: marginalize by enumerating outcomes, -sum p log p."""
    table = np.asarray(table)
    d, K = table.ndim, table.shape[0]
    out = np.zeros(1 << d)
    xs = list(itertools.product(range(K), repeat=d))
    for mask in range(1 << d):
        S = [j for j in range(d) if mask >> j & 1]
        marg = Counter()
        for x in xs:
            marg[tuple(x[j] for j in S)] += float(table[x])
        out[mask] = -sum(v * math.log(v) for v in marg.values() if v > 0)
    return out


def gf2_rank(rows) -> int:
    """Rank over GF(2) of a 0/1 matrix, by Gaussian elimination on Python ints."""
    vecs = [int("".join(str(int(b)) for b in r), 2) for r in np.atleast_2d(rows)] if len(rows) else []
    rank = 0
    while vecs:
        pivot = max(vecs)
        vecs.remove(pivot)
        if pivot == 0:
            continue
        rank += 1
        top = pivot.bit_length() - 1
        vecs = [v ^ pivot if v >> top & 1 else v for v in vecs]
    return rank


CASES = [
    # (K, d, seed, zeros, tiny)
    (2, 1, 0, 0.0, 0.0),
    (2, 2, 1, 0.0, 0.0),
    (2, 3, 2, 0.3, 0.0),
    (2, 4, 3, 0.0, 0.2),
    (2, 5, 4, 0.4, 0.1),
    (2, 6, 5, 0.0, 0.0),
    (2, 6, 6, 0.5, 0.0),
    (3, 2, 7, 0.0, 0.0),
    (3, 3, 8, 0.3, 0.1),
    (3, 4, 9, 0.0, 0.0),
    (3, 5, 10, 0.6, 0.0),
    (4, 3, 11, 0.2, 0.0),
    (5, 2, 12, 0.0, 0.3),
]


@pytest.mark.parametrize("K,d,seed,zeros,tiny", CASES)
def test_subset_entropies_match_enumeration(K, d, seed, zeros, tiny):
    table = random_table(K, d, seed, zeros=zeros, tiny=tiny)
    H = subset_entropies(Joint(table))
    assert H.shape == (1 << d,) and H.dtype == np.float64
    np.testing.assert_allclose(H, brute_subset_entropies(table), rtol=0, atol=TOL)


@pytest.mark.parametrize("K,d", [(2, 1), (2, 4), (3, 3)])
def test_point_mass_has_zero_entropies(K, d):
    table = np.zeros((K,) * d)
    table[(K - 1,) * d] = 1.0
    assert np.all(subset_entropies(Joint(table)) == 0.0)


def test_bit_order_is_position_order():
    """Only position 1 is random: H(X_S) = log 3 exactly when bit 1 of S is set."""
    table = np.zeros((3, 3, 3))
    table[0, :, 2] = 1 / 3
    H = subset_entropies(Joint(table))
    expect = np.array([math.log(3) if m & 2 else 0.0 for m in range(8)])
    np.testing.assert_allclose(H, expect, rtol=0, atol=TOL)


def test_result_is_cached_and_read_only():
    p = Joint(random_table(2, 3, 0))
    H = subset_entropies(p)
    assert subset_entropies(p) is H
    with pytest.raises(ValueError):
        H[0] = 1.0


@pytest.mark.parametrize(
    "K,d,block",
    [
        (2, 7, 64),  # 3**1 <= 4: one trailing axis in the kernel, chunks of 21 rows, padded
        (2, 7, 16 * 9),  # two trailing axes, chunks of 16 rows
        (3, 5, 16 * 16 + 5),  # K = 3, two trailing axes, chunks of 16 rows, padded
    ],
)
def test_chunked_path_matches_enumeration(monkeypatch, K, d, block):
    table = random_table(K, d, 100 + block, zeros=0.2)
    calls = []
    kernel = entropy_mod._block_entropies

    def counting(part, K_):
        calls.append(part.shape)
        return kernel(part, K_)

    monkeypatch.setattr(entropy_mod, "BLOCK_ENTRIES", block)
    monkeypatch.setattr(entropy_mod, "_block_entropies", counting)
    H = subset_entropies(Joint(table))  # a fresh Joint: nothing cached
    assert len(calls) > 2, "the chunked path was not taken"
    assert all(int(np.prod(s)) <= block for s in calls)
    np.testing.assert_allclose(H, brute_subset_entropies(table), rtol=0, atol=TOL)


# -- functionals against their definitions ------------------------------------------------
@pytest.mark.parametrize("K,d,seed,zeros,tiny", CASES)
def test_functionals_match_definitions(K, d, seed, zeros, tiny):
    table = random_table(K, d, seed, zeros=zeros, tiny=tiny)
    p = Joint(table)
    H = brute_subset_entropies(table)
    full = (1 << d) - 1
    single = [H[1 << i] for i in range(d)]
    HX = H[full]
    assert entropy(p) == pytest.approx(HX, abs=TOL)
    # e_m: mean over m-subsets, subsets listed with itertools.combinations
    e = [
        np.mean([H[sum(1 << j for j in S)] for S in itertools.combinations(range(d), m)])
        for m in range(d + 1)
    ]
    np.testing.assert_allclose(entropy_coefficients(p), e, rtol=0, atol=TOL)
    assert sum_of_entropies(p) == pytest.approx(sum(single), abs=TOL)
    assert total_correlation(p) == pytest.approx(sum(single) - HX, abs=TOL)
    cond_rest = [HX - H[full ^ (1 << i)] for i in range(d)]  # H(X_i | X_-i)
    assert dual_total_correlation(p) == pytest.approx(HX - sum(cond_rest), abs=TOL)
    mi = [single[i] + H[full ^ (1 << i)] - HX for i in range(d)]  # I(X_i; X_-i)
    assert sum_mutual_information(p) == pytest.approx(sum(mi), abs=TOL)
    # TSE (Tononi-Sporns-Edelman): sum_k [(k/d) I(X) - <I(X_S)>_{|S|=k}], I = integration
    integ = lambda S: sum(H[1 << j] for j in S) - H[sum(1 << j for j in S)]  # noqa: E731
    tse = sum(
        k / d * integ(range(d)) - np.mean([integ(S) for S in itertools.combinations(range(d), k)])
        for k in range(1, d + 1)
    )
    assert tse_complexity(p) == pytest.approx(tse, abs=1e-11)
    # h^card_j: sum_i mean over j-subsets B of [d] \ {i} of I(X_i; X_B)
    hcard = []
    for j in range(d):
        total = 0.0
        for i in range(d):
            others = [o for o in range(d) if o != i]
            vals = []
            for B in itertools.combinations(others, j):
                b = sum(1 << o for o in B)
                vals.append(H[1 << i] + H[b] - H[b | 1 << i])
            total += np.mean(vals)
        hcard.append(total)
    np.testing.assert_allclose(card_gain_coefficients(p), hcard, rtol=0, atol=1e-11)


def test_functionals_accept_entropy_vectors():
    p = Joint(random_table(3, 3, 4))
    H = np.array(subset_entropies(p))
    assert total_correlation(H) == total_correlation(p)
    assert dual_total_correlation(H) == dual_total_correlation(p)
    np.testing.assert_array_equal(entropy_coefficients(H), entropy_coefficients(p))


def test_popcounts():
    for d in range(0, 7):
        assert popcounts(d).tolist() == [bin(m).count("1") for m in range(1 << d)]


# -- closed forms (docs/theory.md §6) ------------------------------------------------------
@pytest.mark.parametrize("K,d", [(2, 2), (2, 5), (3, 4), (4, 3)])
def test_repeated_symbol(K, d):
    table = np.zeros((K,) * d)
    for v in range(K):
        table[(v,) * d] = 1 / K
    p = Joint(table)
    H = subset_entropies(p)
    np.testing.assert_allclose(H[1:], math.log(K), rtol=0, atol=TOL)
    assert total_correlation(p) == pytest.approx((d - 1) * math.log(K), abs=TOL)
    assert dual_total_correlation(p) == pytest.approx(math.log(K), abs=TOL)
    np.testing.assert_allclose(entropy_coefficients(p), [0.0] + [math.log(K)] * d, atol=TOL)


def parity_table(d):
    table = np.zeros((2,) * d)
    for x in itertools.product((0, 1), repeat=d - 1):
        table[x + (sum(x) % 2,)] = 2.0 ** -(d - 1)
    return table


@pytest.mark.parametrize("d", [2, 3, 4, 6])
def test_parity(d):
    p = Joint(parity_table(d))
    H = subset_entropies(p)
    expect = [min(bin(m).count("1"), d - 1) * LOG2 for m in range(1 << d)]
    np.testing.assert_allclose(H, expect, rtol=0, atol=TOL)
    assert total_correlation(p) == pytest.approx(LOG2, abs=TOL)
    assert dual_total_correlation(p) == pytest.approx((d - 1) * LOG2, abs=TOL)
    assert sum_mutual_information(p) == pytest.approx(d * LOG2, abs=TOL)


@pytest.mark.parametrize("seed,d,n", [(0, 4, 2), (1, 5, 3), (2, 6, 3), (3, 6, 4), (4, 3, 5)])
def test_xorsat_entropies_are_gf2_ranks(seed, d, n):
    rng = np.random.default_rng(seed)
    A = rng.integers(0, 2, size=(d, n))
    table = np.zeros((2,) * d)
    for u in itertools.product((0, 1), repeat=n):
        x = tuple(int(v) for v in A @ np.array(u) % 2)
        table[x] += 2.0**-n
    H = subset_entropies(Joint(table))
    expect = [gf2_rank(A[[j for j in range(d) if m >> j & 1]]) * LOG2 for m in range(1 << d)]
    np.testing.assert_allclose(H, expect, rtol=0, atol=TOL)


def test_gf2_rank_reference():
    assert gf2_rank(np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1]])) == 2  # rows sum to 0
    assert gf2_rank(np.eye(4, dtype=int)) == 4
    assert gf2_rank(np.zeros((3, 2), dtype=int)) == 0


@pytest.mark.parametrize("K,d1,d2", [(2, 2, 3), (3, 1, 3), (2, 3, 3)])
def test_independent_blocks_add(K, d1, d2):
    t1, t2 = random_table(K, d1, 1, zeros=0.2), random_table(K, d2, 2)
    p1, p2, p = Joint(t1), Joint(t2), Joint(np.multiply.outer(t1, t2))
    for f in (entropy, total_correlation, dual_total_correlation, sum_of_entropies):
        assert f(p) == pytest.approx(f(p1) + f(p2), abs=TOL)
    # every subset entropy splits: H(X_S) = H(X_{S1}) + H(X_{S2})
    H, H1, H2 = subset_entropies(p), subset_entropies(p1), subset_entropies(p2)
    for m in range(1 << (d1 + d2)):
        assert H[m] == pytest.approx(H1[m & ((1 << d1) - 1)] + H2[m >> d1], abs=TOL)


@pytest.mark.parametrize("K,d", [(2, 4), (3, 3)])
def test_product_law(K, d):
    rng = np.random.default_rng(K * 10 + d)
    rows = rng.dirichlet(np.ones(K), size=d)
    table = rows[0]
    for r in rows[1:]:
        table = np.multiply.outer(table, r)
    p = Joint(table)
    h = [-sum(v * math.log(v) for v in r) for r in rows]
    H = subset_entropies(p)
    for m in range(1 << d):
        assert H[m] == pytest.approx(sum(h[j] for j in range(d) if m >> j & 1), abs=TOL)
    assert total_correlation(p) == pytest.approx(0.0, abs=TOL)
    assert dual_total_correlation(p) == pytest.approx(0.0, abs=TOL)
    assert tse_complexity(p) == pytest.approx(0.0, abs=TOL)
    np.testing.assert_allclose(card_gain_coefficients(p), 0.0, atol=TOL)


# -- peer library: dit ----------------------------------------------------------------
@pytest.mark.parametrize("K,d,seed,zeros", [(2, 3, 0, 0.0), (2, 5, 1, 0.3), (3, 3, 2, 0.2), (3, 4, 3, 0.0), (4, 2, 4, 0.0)])
def test_against_dit(K, d, seed, zeros):
    dit = pytest.importorskip("dit")
    table = random_table(K, d, seed, zeros=zeros)
    outcomes = [x for x in itertools.product(range(K), repeat=d) if table[x] > 0]
    D = dit.Distribution(outcomes, [float(table[x]) for x in outcomes])
    p = Joint(table)
    H = subset_entropies(p)
    for m in range(1, 1 << d):  # dit in bits: convert to nats
        rvs = [j for j in range(d) if m >> j & 1]
        assert H[m] == pytest.approx(dit.multivariate.entropy(D, rvs) * LOG2, abs=1e-11)
    assert total_correlation(p) == pytest.approx(dit.multivariate.total_correlation(D) * LOG2, abs=1e-11)
    assert dual_total_correlation(p) == pytest.approx(
        dit.multivariate.dual_total_correlation(D) * LOG2, abs=1e-11
    )


# -- identities on random joints --------------------------------------------------------
@given(
    K=st.integers(2, 3),
    d=st.integers(1, 5),
    seed=st.integers(0, 2**32 - 1),
    zeros=st.sampled_from([0.0, 0.3, 0.8]),
    alpha=st.sampled_from([0.02, 0.3, 1.0]),
)
def test_identities_hold_on_random_joints(K, d, seed, zeros, alpha):
    p = Joint(random_table(K, d, seed, zeros=zeros, alpha=alpha))
    H = subset_entropies(p)
    e = entropy_coefficients(p)
    phi = np.diff(e)
    tc, dtc = total_correlation(p), dual_total_correlation(p)
    assert np.all(H >= -TOL)  # a point mass summing to 1 + 2e-16 has H = -2e-16
    assert tc >= -TOL and dtc >= -TOL
    assert e[-1] == pytest.approx(H[-1], abs=TOL)  # sum_m phi_m = H(X)
    assert np.all(np.diff(phi) <= TOL)  # phi non-increasing
    assert sum_mutual_information(p) == pytest.approx(tc + dtc, abs=TOL)
    assert tc + dtc == pytest.approx(d * (phi[0] - phi[-1]), abs=1e-11)
    np.testing.assert_allclose(card_gain_coefficients(p), d * (phi[0] - phi), atol=1e-11)
    # every subset entropy, TSE and h^card against their definitions (numpy marginals)
    ref = np.zeros(1 << d)
    for m in range(1, 1 << d):
        marg = p.table.sum(axis=tuple(j for j in range(d) if not m >> j & 1))
        ref[m] = -np.sum(marg[marg > 0] * np.log(marg[marg > 0]))
    np.testing.assert_allclose(H, ref, rtol=0, atol=TOL)
    integ = lambda S: sum(ref[1 << j] for j in S) - ref[sum(1 << j for j in S)]  # noqa: E731
    tse = sum(
        k / d * integ(range(d)) - np.mean([integ(S) for S in itertools.combinations(range(d), k)])
        for k in range(1, d + 1)
    )
    assert tse_complexity(p) == pytest.approx(tse, abs=1e-11)
    hcard = [
        sum(
            np.mean(
                [
                    ref[1 << i] + ref[b] - ref[b | 1 << i]
                    for b in (sum(1 << o for o in B) for B in itertools.combinations(set(range(d)) - {i}, j))
                ]
            )
            for i in range(d)
        )
        for j in range(d)
    ]
    np.testing.assert_allclose(card_gain_coefficients(p), hcard, rtol=0, atol=1e-11)
    # monotone along every edge of the subset lattice
    for m in range(1 << d):
        for j in range(d):
            if not m >> j & 1:
                assert H[m | 1 << j] >= H[m] - TOL


@pytest.mark.parametrize("K,d,block", [(2, 7, 64), (3, 5, 16 * 16 + 5), (2, 5, 1 << 20)])
def test_accelerator_path_matches_enumeration(monkeypatch, K, d, block):
    """The JAX block walk used when JAX's default device is an accelerator (run here on CPU;
    small XLA_BLOCK_ENTRIES force its chunked, zero-padded regime) against brute force."""
    table = random_table(K, d, 200 + d, zeros=0.2)
    monkeypatch.setattr(entropy_mod, "XLA_BLOCK_ENTRIES", block)
    np.testing.assert_allclose(entropy_mod._compute_xla(table), brute_subset_entropies(table), rtol=0, atol=TOL)


@pytest.mark.parametrize("K,d,min_cols", [(2, 9, 2), (3, 7, 3)])
def test_xla_blocks_match_enumeration(monkeypatch, K, d, min_cols):
    """Blocks take -x log x in one XLA call when they have XLA_MIN_COLS columns (64 by
    default: d >= 13 binary); lowered here so that small tables take that path, leaves
    smaller than a block included."""
    table = random_table(K, d, 300 + d, zeros=0.2)
    calls = []
    kernel = entropy_mod._block_entropies

    def counting(part, K_, xla=False):
        calls.append(xla)
        return kernel(part, K_, xla)

    monkeypatch.setattr(entropy_mod, "BLOCK_ENTRIES", (K + 1) ** 3 * K**2 * 2)
    monkeypatch.setattr(entropy_mod, "XLA_MIN_COLS", min_cols)
    monkeypatch.setattr(entropy_mod, "_block_entropies", counting)
    H = entropy_mod._compute(table)
    assert calls and all(calls), "the XLA path was not taken"
    np.testing.assert_allclose(H, brute_subset_entropies(table), rtol=0, atol=TOL)
