"""Tests of mdmtheory.information.profile: the information profile phi_m = e_{m+1} - e_m.

References written here: the profile by its definition (mean over |A| = m and j not in A
of H(X_j | X_A), entropies from marginals built by enumerating outcomes), the closed
forms of docs/theory.md §6, the hypergeometric mixture for independent blocks, and
invariances (permuting positions, relabelling tokens).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import hypergeom

from mdmtheory.information import dual_total_correlation, entropy, sum_mutual_information, total_correlation
from mdmtheory.laws import Joint
from mdmtheory.information import Profile, information_profile
from reference import random_table

LOG2 = math.log(2.0)
TOL = 1e-12


def brute_H(table, S) -> float:
    """H(X_S) by enumerating outcomes."""
    table = np.asarray(table)
    marg = Counter()
    for x in itertools.product(range(table.shape[0]), repeat=table.ndim):
        marg[tuple(x[j] for j in S)] += float(table[x])
    return -sum(v * math.log(v) for v in marg.values() if v > 0)


def brute_profile(table) -> np.ndarray:
    """phi_m = mean over A with |A| = m and j not in A of H(X_j | X_A) = H(X_{A+j}) - H(X_A)."""
    d = np.asarray(table).ndim
    H = {S: brute_H(table, S) for m in range(d + 1) for S in itertools.combinations(range(d), m)}
    phi = []
    for m in range(d):
        vals = [
            H[tuple(sorted(A + (j,)))] - H[A]
            for A in itertools.combinations(range(d), m)
            for j in range(d)
            if j not in A
        ]
        phi.append(np.mean(vals))
    return np.array(phi)


@pytest.mark.parametrize(
    "K,d,seed,zeros",
    [(2, 1, 0, 0.0), (2, 3, 1, 0.0), (2, 5, 2, 0.4), (2, 6, 3, 0.0), (3, 3, 4, 0.3), (3, 4, 5, 0.0), (4, 3, 6, 0.5)],
)
def test_profile_matches_definition(K, d, seed, zeros):
    table = random_table(K, d, seed, zeros=zeros)
    prof = information_profile(Joint(table))
    assert isinstance(prof, Profile) and prof.d == d
    np.testing.assert_allclose(prof.values, brute_profile(table), rtol=0, atol=TOL)
    assert prof.entropy == pytest.approx(brute_H(table, range(d)), abs=TOL)


def test_profile_record():
    prof = Profile([0.9, 0.5, 0.5, 0.1])
    assert prof.d == 4
    assert prof.entropy == pytest.approx(2.0)
    np.testing.assert_allclose(prof.entropy_coefficients, [0.0, 0.9, 1.4, 1.9, 2.0])
    np.testing.assert_allclose(prof.curve, [0.0, 0.4, 0.4, 0.8])
    assert prof.is_nonincreasing()
    assert not Profile([0.5, 0.6]).is_nonincreasing()
    assert Profile([0.5, 0.5 + 1e-14]).is_nonincreasing()
    with pytest.raises(ValueError):
        prof.values[0] = 1.0  # read-only
    back = Profile.from_entropy_coefficients(prof.entropy_coefficients)
    np.testing.assert_allclose(back.values, prof.values, atol=1e-15)


# -- closed forms (docs/theory.md §6) ------------------------------------------------------
@pytest.mark.parametrize("K,d", [(2, 2), (2, 6), (3, 4), (5, 3)])
def test_repeated_symbol_profile(K, d):
    table = np.zeros((K,) * d)
    for v in range(K):
        table[(v,) * d] = 1 / K
    phi = information_profile(Joint(table)).values
    np.testing.assert_allclose(phi, [math.log(K)] + [0.0] * (d - 1), rtol=0, atol=TOL)


@pytest.mark.parametrize("d", [2, 3, 5, 6])
def test_parity_profile(d):
    table = np.zeros((2,) * d)
    for x in itertools.product((0, 1), repeat=d - 1):
        table[x + (sum(x) % 2,)] = 2.0 ** -(d - 1)
    p = Joint(table)
    phi = information_profile(p).values
    np.testing.assert_allclose(phi, [LOG2] * (d - 1) + [0.0], rtol=0, atol=TOL)
    assert total_correlation(p) == pytest.approx(LOG2, abs=TOL)
    assert dual_total_correlation(p) == pytest.approx((d - 1) * LOG2, abs=TOL)


@pytest.mark.parametrize("K,d", [(2, 5), (3, 3)])
def test_product_profile_is_flat(K, d):
    rng = np.random.default_rng(d)
    rows = rng.dirichlet(np.ones(K), size=d)
    table = rows[0]
    for r in rows[1:]:
        table = np.multiply.outer(table, r)
    phi = information_profile(Joint(table)).values
    mean_h = np.mean([-np.sum(r * np.log(r)) for r in rows])
    np.testing.assert_allclose(phi, mean_h, rtol=0, atol=TOL)


@pytest.mark.parametrize("K,d1,d2", [(2, 2, 3), (2, 1, 4), (3, 2, 2)])
def test_independent_blocks_hypergeometric_mixture(K, d1, d2):
    """e_m of a product: |S cap block 1| is hypergeometric, and entropies add over blocks."""
    t1, t2 = random_table(K, d1, 11, zeros=0.2), random_table(K, d2, 12)
    e1 = information_profile(Joint(t1)).entropy_coefficients
    e2 = information_profile(Joint(t2)).entropy_coefficients
    d = d1 + d2
    e = np.zeros(d + 1)
    for m in range(d + 1):
        for a in range(max(0, m - d2), min(d1, m) + 1):
            e[m] += hypergeom.pmf(a, d, d1, m) * (e1[a] + e2[m - a])
    prof = information_profile(Joint(np.multiply.outer(t1, t2)))
    np.testing.assert_allclose(prof.entropy_coefficients, e, rtol=0, atol=1e-12)
    np.testing.assert_allclose(prof.values, np.diff(e), rtol=0, atol=1e-12)


# -- identities and invariances on random joints ------------------------------------------
@st.composite
def joints(draw, max_d=5, max_K=3):
    K = draw(st.integers(2, max_K))
    d = draw(st.integers(1, max_d))
    seed = draw(st.integers(0, 2**32 - 1))
    zeros = draw(st.sampled_from([0.0, 0.2, 0.7]))
    alpha = draw(st.sampled_from([0.02, 0.2, 1.0, 5.0]))  # 0.02: entries down to ~1e-300
    return random_table(K, d, seed, zeros=zeros, alpha=alpha)


@given(table=joints(), data=st.data())
def test_profile_identities_and_invariances(table, data):
    d, K = table.ndim, table.shape[0]
    p = Joint(table)
    prof = information_profile(p)
    phi = prof.values
    assert prof.entropy == pytest.approx(entropy(p), abs=TOL)  # sum phi = H(X)
    assert np.all(np.diff(phi) <= TOL)  # non-increasing
    assert np.all(phi >= -TOL) and phi[0] <= math.log(K) + TOL
    assert sum_mutual_information(p) == pytest.approx(d * (phi[0] - phi[-1]), abs=1e-11)
    # permute positions
    perm = data.draw(st.permutations(range(d)))
    moved = information_profile(Joint(np.transpose(table, perm))).values
    np.testing.assert_allclose(moved, phi, rtol=0, atol=TOL)
    # relabel the tokens of one position
    axis = data.draw(st.integers(0, d - 1))
    relabel = data.draw(st.permutations(range(K)))
    relabelled = information_profile(Joint(np.take(table, relabel, axis=axis))).values
    np.testing.assert_allclose(relabelled, phi, rtol=0, atol=TOL)
