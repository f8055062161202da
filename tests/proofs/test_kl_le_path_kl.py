"""Checks of proofs/kl_le_path_kl.md: KL(p || q) <= KL_path, the gap is
E_x KL(P(tau | x) || Q(tau | x)), and T = 1 gives equality (both = TC).

The output laws are computed here by brute force (every order of the positions, every
reveal-column assignment), independently of the exact law engine.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import sympy as sp
from hypothesis import given
from scipy.special import rel_entr, xlogy

import mdmtheory as mt
from mdmtheory.testing import joint_and_grid, joint_and_schedule, joints
from reference import marginal


def cond(table, B, A):
    """p(x_B | x_A) broadcast to the full shape; 0 where p(x_A) = 0 (path lost)."""
    joint = marginal(table, set(A) | set(B))
    mass = marginal(table, set(A))
    c = np.divide(joint, mass, out=np.zeros(np.broadcast_shapes(joint.shape, mass.shape)), where=mass > 0)
    return np.broadcast_to(c, table.shape)


def path_products(table, sizes):
    """{permutation: prod_t prod_{j in B_t} p(x_j | x_{A_t})} (arrays over x)."""
    d = table.ndim
    out = {}
    for perm in itertools.permutations(range(d)):
        prod = np.ones(table.shape)
        s = 0
        for k in sizes:
            for j in perm[s : s + k]:
                prod = prod * cond(table, [j], perm[:s])
            s += k
        out[perm] = prod
    return out


def tol(p):
    return 1e-10 * max(1.0, p.d * math.log(p.K))


@given(joint_and_schedule(d=(2, 4), K=(2, 3), max_outcomes=81))
def test_kl_below_path_kl_schedules(case):
    p, sched = case
    prods = path_products(p.table, sched.sizes)
    q = sum(prods.values()) / len(prods)
    law = mt.sampler_law(p, sched)
    assert np.allclose(law.table, q, rtol=1e-9, atol=1e-15)
    assert abs(law.lost - (1.0 - q.sum())) <= 1e-12
    kl = float(np.sum(rel_entr(p.table, q)))
    assert abs(mt.kl(p, law) - kl) <= tol(p)
    assert kl <= mt.path_kl(p, sched) + tol(p)


def grid_law(table, times):
    d = table.ndim
    N = len(times) - 1
    lengths = [times[0]] + [times[n] - times[n - 1] for n in range(1, N + 1)] + [1.0 - times[N]]
    q = np.zeros(table.shape)
    for cols in itertools.product(range(N + 2), repeat=d):
        prob = math.prod(lengths[c] for c in cols)
        if prob == 0.0:
            continue
        R = lambda n: [i for i in range(d) if cols[i] < n]
        term = cond(table, R(1), [])
        for n in range(1, N + 1):
            for i in range(d):
                if cols[i] == n:
                    term = term * cond(table, [i], R(n))
        rest = [i for i in range(d) if cols[i] == N + 1]
        if rest:  # exact completion (nothing to complete: factor 1, even off the support)
            term = term * cond(table, rest, R(N + 1))
        q += prob * term
    return q


@given(joint_and_grid(d=(2, 3), K=(2, 3), steps=(1, 3), max_outcomes=27))
def test_kl_below_path_kl_grids(case):
    p, grid = case
    q = grid_law(p.table, grid.times)
    law = mt.sampler_law(p, grid)
    assert np.allclose(law.table, q, rtol=1e-9, atol=1e-15)
    kl = float(np.sum(rel_entr(p.table, q)))
    assert kl <= mt.path_kl(p, grid) + tol(p)


@given(joint_and_schedule(d=(2, 4), K=(2, 3), max_outcomes=81))
def test_gap_is_expected_conditional_kl(case):
    p, sched = case
    prods = path_products(p.table, sched.sizes)
    n = len(prods)
    q = sum(prods.values()) / n
    supp = p.table > 0
    # P(perm | x) = 1/n; Q(perm | x) = prod(perm, x) / (n q(x)); gap = E_x sum_perm P log(P/Q)
    gap = 0.0
    for prod in prods.values():
        ratio = np.where(supp, q / np.where(supp, prod, 1.0), 1.0)
        gap += float(np.sum(np.where(supp, p.table * np.log(ratio), 0.0))) / n
    kl = float(np.sum(rel_entr(p.table, q)))
    assert gap >= -tol(p)
    assert abs(mt.path_kl(p, sched) - kl - gap) <= tol(p)


@given(joints(d=(1, 4), K=(2, 3), max_outcomes=81))
def test_single_step_equality(p):
    t, d = p.table, p.d
    tc = sum(float(-np.sum(xlogy(m, m))) for m in (marginal(t, {i}) for i in range(d))) - float(-np.sum(xlogy(t, t)))
    sched = mt.Schedule((d,))
    q = mt.sampler_law(p, sched)
    assert abs(mt.kl(p, q) - tc) <= tol(p)
    assert abs(mt.path_kl(p, sched) - tc) <= tol(p)
    assert abs(mt.information.total_correlation(p) - tc) <= tol(p)


def test_single_step_symbolic():
    a, b, c = sp.symbols("a b c", positive=True)
    P = sp.Matrix([[a, b], [c, 1 - a - b - c]])
    r = [P[0, 0] + P[0, 1], P[1, 0] + P[1, 1]]  # law of X_1
    s = [P[0, 0] + P[1, 0], P[0, 1] + P[1, 1]]  # law of X_2
    kl = sum(P[i, j] * sp.log(P[i, j] / (r[i] * s[j])) for i in range(2) for j in range(2))
    H = lambda v: -sum(x * sp.log(x) for x in v)
    tc = H(r) + H(s) - H(list(P))
    assert sp.simplify(sp.expand_log(kl - tc, force=True)) == 0
