"""Checks of proofs/learning_error.md: KL_path(p_hat, k) = KL_path(k) + sum_t k_t eps(s_t)
= sum_t k_t c(s_t) - H(X), for arbitrary (inconsistent) model conditionals p_hat."""

from __future__ import annotations

import itertools
import math

import numpy as np
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import rel_entr, xlogy

import mdmtheory as mt
from mdmtheory.testing import joint_and_schedule
from reference import marginal


def cond(table, j, A):
    """p(x_j | x_A) in keepdims form (0 where p(x_A) = 0)."""
    joint = marginal(table, set(A) | {j})
    mass = marginal(table, set(A))
    return np.divide(joint, mass, out=np.zeros(joint.shape), where=mass > 0)


def random_model(d, K, seed, alpha):
    """model[(j, A)]: keepdims array (K on A and j, 1 elsewhere), each row a law on [K]."""
    rng = np.random.default_rng(seed)
    model = {}
    for j in range(d):
        for m in range(d):
            for A in itertools.combinations([k for k in range(d) if k != j], m):
                shape = [K if (k in A or k == j) else 1 for k in range(d)]
                w = rng.gamma(alpha, size=shape) + 1e-300
                model[(j, A)] = w / w.sum(axis=j, keepdims=True)
    return model


def trajectory_kl(table, sizes, model):
    """E over uniform orders and x ~ p of log p(x) - sum_t sum_j log p_hat(x_j | x_{A_t})."""
    d = table.ndim
    supp = table > 0
    logp = np.log(np.where(supp, table, 1.0))
    total = 0.0
    perms = list(itertools.permutations(range(d)))
    for perm in perms:
        log_ratio = logp.copy()
        s = 0
        for k in sizes:
            A = tuple(sorted(perm[:s]))
            for j in perm[s : s + k]:
                m = np.broadcast_to(model[(j, A)], table.shape)
                log_ratio = log_ratio - np.log(np.where(supp, m, 1.0))
            s += k
        total += float(np.sum(np.where(supp, table * log_ratio, 0.0)))
    return total / len(perms)


def cross_entropy_profile(table, model):
    """c(i) and eps(i) by enumerating the pairs (A, j)."""
    d = table.ndim
    c, eps = [], []
    for i in range(d):
        cs, es = [], []
        for A in itertools.combinations(range(d), i):
            for j in range(d):
                if j in A:
                    continue
                joint = marginal(table, set(A) | {j})
                cs.append(float(-np.sum(xlogy(joint, np.where(joint > 0, model[(j, A)], 1.0)))))
                mass = marginal(table, set(A))
                es.append(float(np.sum(mass * rel_entr(cond(table, j, A), model[(j, A)]))))
        c.append(np.mean(cs))
        eps.append(np.mean(es))
    return np.array(c), np.array(eps)


@given(
    joint_and_schedule(d=(2, 4), K=(2, 3), max_outcomes=81),
    st.integers(0, 2**32 - 1),
    st.sampled_from([0.3, 1.0, 5.0]),
)
def test_path_kl_with_model_by_enumeration(case, seed, alpha):
    p, sched = case
    model = random_model(p.d, p.K, seed, alpha)
    brute = trajectory_kl(p.table, sched.sizes, model)
    c, eps = cross_entropy_profile(p.table, model)
    H = float(-np.sum(xlogy(p.table, p.table)))
    starts, sizes = sched.starts, sched.sizes
    tol = 1e-9 * max(1.0, abs(brute))
    assert abs(brute - (sum(k * c[s] for s, k in zip(starts, sizes)) - H)) <= tol
    assert abs(brute - (mt.path_kl(p, sched) + sum(k * eps[s] for s, k in zip(starts, sizes)))) <= tol
    assert abs(brute - (mt.path_kl(mt.Profile(c), sched) + eps.sum())) <= tol
    assert np.allclose(c, mt.information_profile(p).values + eps, rtol=1e-9, atol=1e-10)
    assert np.all(eps >= -1e-12)


@given(joint_and_schedule(d=(2, 4), K=(2, 3), max_outcomes=81))
def test_exact_model_has_no_learning_error(case):
    p, sched = case
    model = {}
    for j in range(p.d):
        for m in range(p.d):
            for A in itertools.combinations([k for k in range(p.d) if k != j], m):
                cj = cond(p.table, j, A)
                # unreachable x_A: any law will do (never visited by the exact trajectory)
                model[(j, A)] = np.where(cj.sum(axis=j, keepdims=True) > 0, cj, 1.0 / p.K)
    c, eps = cross_entropy_profile(p.table, model)
    assert np.all(np.abs(eps) <= 1e-12)
    assert np.allclose(c, mt.information_profile(p).values, atol=1e-10, rtol=0)
    assert abs(trajectory_kl(p.table, sched.sizes, model) - mt.path_kl(p, sched)) <= 1e-10 * max(1, p.d * math.log(p.K))


def test_kl_split_symbolic():
    a, b, c, u, w = sp.symbols("a b c u w", positive=True)
    r = sp.Matrix([[a, b], [c, 1 - a - b - c]])
    r1 = [r[0, 0] + r[0, 1], r[1, 0] + r[1, 1]]
    r2 = [r[0, 0] + r[1, 0], r[0, 1] + r[1, 1]]
    h1, h2 = [u, 1 - u], [w, 1 - w]
    kl = lambda P, Q: sum(P[i] * sp.log(P[i] / Q[i]) for i in range(len(P)))
    lhs = sum(r[i, j] * sp.log(r[i, j] / (h1[i] * h2[j])) for i in range(2) for j in range(2))
    tc = sum(r[i, j] * sp.log(r[i, j] / (r1[i] * r2[j])) for i in range(2) for j in range(2))
    assert sp.simplify(sp.expand_log(lhs - tc - kl(r1, h1) - kl(r2, h2), force=True)) == 0
