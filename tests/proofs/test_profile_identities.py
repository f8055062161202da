"""Checks of proofs/profile_identities.md: phi_m = mean H(X_j | X_A), sum phi = H(X),
phi non-increasing in [0, log K], d(phi_0 - phi_{d-1}) = sum_i I(X_i; X_-i) = TC + DTC.

References are brute force written here: conditional entropies computed from the table's
conditionals over every pair (A, j), never from mdmtheory's subset entropies.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import sympy as sp
from hypothesis import given
from scipy.special import xlogy

import mdmtheory as mt
from mdmtheory.testing import joints
from reference import brute_profile, marginal

JOINTS = joints(d=(1, 4), K=(2, 3), max_outcomes=81)


def cond_entropy(table, j, A):
    """H(X_j | X_A) = -sum p(x_A, x_j) log p(x_j | x_A), from the conditional itself."""
    joint = marginal(table, set(A) | {j})
    mass = joint.sum(axis=j, keepdims=True)
    cond = np.divide(joint, mass, out=np.zeros_like(joint), where=mass > 0)
    return float(-np.sum(xlogy(joint, cond)))


def joint_entropy(table):
    return float(-np.sum(xlogy(table, table)))


def tol(p):
    return 1e-12 * max(1.0, math.log(p.K) * p.d)


@given(JOINTS)
def test_profile_is_mean_conditional_entropy(p):
    assert np.allclose(mt.information_profile(p).values, brute_profile(p.table), rtol=0, atol=tol(p))


@given(JOINTS)
def test_profile_sums_to_entropy(p):
    prof = mt.information_profile(p)
    assert abs(prof.values.sum() - joint_entropy(p.table)) <= tol(p)
    assert abs(brute_profile(p.table).sum() - joint_entropy(p.table)) <= tol(p)


@given(JOINTS)
def test_profile_is_nonincreasing_and_bounded(p):
    for phi in (mt.information_profile(p).values, brute_profile(p.table)):
        assert np.all(np.diff(phi) <= tol(p))
        assert phi[-1] >= -tol(p) and phi[0] <= math.log(p.K) + tol(p)


@given(JOINTS)
def test_profile_ends_give_sum_of_mutual_informations(p):
    t, d = p.table, p.d
    # I(X_i; X_-i) = H(X_i) - H(X_i | X_-i), each from the conditionals
    smi = sum(cond_entropy(t, i, ()) - cond_entropy(t, i, tuple(k for k in range(d) if k != i)) for i in range(d))
    phi = mt.information_profile(p).values
    assert abs(d * (phi[0] - phi[-1]) - smi) <= 10 * tol(p)
    tc = sum(cond_entropy(t, i, ()) for i in range(d)) - joint_entropy(t)
    dtc = joint_entropy(t) - sum(cond_entropy(t, i, tuple(k for k in range(d) if k != i)) for i in range(d))
    assert abs(tc + dtc - smi) <= 10 * tol(p)
    assert abs(mt.information.sum_mutual_information(p) - smi) <= 10 * tol(p)


def test_counting_identities_symbolic():
    d, m = sp.symbols("d m", integer=True, nonnegative=True)
    # pairs (A, j) <-> (S = A + j, j in S)
    lhs = sp.binomial(d, m) * (d - m)
    rhs = sp.binomial(d, m + 1) * (m + 1)
    assert sp.simplify(sp.combsimp(lhs / rhs)) == 1
    # triples (A', j, k in A') <-> (A, j, k not in A + j)
    lhs3 = sp.binomial(d, m + 1) * (d - m - 1) * (m + 1)
    rhs3 = sp.binomial(d, m) * (d - m) * (d - m - 1)
    assert sp.simplify(sp.combsimp(lhs3 / rhs3)) == 1
    # and by enumeration for small d (each S hit m+1 times; each (A, j) d-m-1 times)
    for dd in range(1, 7):
        for mm in range(dd):
            hits = {}
            for A in itertools.combinations(range(dd), mm):
                for j in set(range(dd)) - set(A):
                    S = tuple(sorted(A + (j,)))
                    hits[S] = hits.get(S, 0) + 1
            assert set(hits.values()) == {mm + 1} and len(hits) == math.comb(dd, mm + 1)
