"""Checks of proofs/path_kl_identity.md.

(a) The trajectory KL of the fixed-cardinality sampler, by enumerating every order of the
positions and every outcome, equals sum_t k_t phi_{s_t} - H(X); (b) the trajectory KL of
the Bernoulli-subset sampler, by enumerating the reveal column of every position, equals
sum_j Gamma_umask(t_j, t_{j+1}). Brute-force references only use the table.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import sympy as sp
from hypothesis import given
from scipy.special import xlogy

import mdmtheory as mt
from mdmtheory.testing import grids, joint_and_grid, joint_and_schedule, joints
from reference import compositions, marginal

SMALL = dict(d=(2, 4), K=(2, 3), max_outcomes=81)


class Logs:
    """log p(x_S) and log p(x_j | x_A) broadcast to the full table shape (0 off the support)."""

    def __init__(self, table):
        self.t = table
        self.support = table > 0
        self.cache = {}

    def log_marg(self, S):
        S = frozenset(S)
        if S not in self.cache:
            m = np.broadcast_to(marginal(self.t, S), self.t.shape) if S else np.ones(self.t.shape)
            self.cache[S] = np.log(np.where(self.support, m, 1.0))
        return self.cache[S]

    def log_cond(self, j, A):
        return self.log_marg(set(A) | {j}) - self.log_marg(A)


def brute_schedule_path_kl(table, sizes):
    """E over uniform orders and x ~ p of log P(tau)/Q(tau) (proof, part (a))."""
    d = table.ndim
    L = Logs(table)
    total = 0.0
    perms = list(itertools.permutations(range(d)))
    for perm in perms:
        log_ratio = L.log_marg(range(d)).copy()
        s = 0
        for k in sizes:
            A, B = perm[:s], perm[s : s + k]
            for j in B:
                log_ratio -= L.log_cond(j, A)
            s += k
        total += float(np.sum(np.where(L.support, table * log_ratio, 0.0)))
    return total / len(perms)


def cond_entropy(table, B, A):
    """H(X_B | X_A) = -sum p(x_{A+B}) log p(x_B | x_A)."""
    joint = marginal(table, set(A) | set(B))
    mass = marginal(table, set(A))
    cond = np.divide(joint, mass, out=np.zeros_like(joint), where=mass > 0)
    return float(-np.sum(xlogy(joint, cond)))


@given(joint_and_schedule(**SMALL))
def test_schedule_path_kl_by_enumeration(case):
    p, sched = case
    brute = brute_schedule_path_kl(p.table, sched.sizes)
    H = float(-np.sum(xlogy(p.table, p.table)))
    phi = mt.information_profile(p).values  # checked by brute force in test_profile_identities
    profile_form = sum(k * phi[s] for s, k in zip(sched.starts, sched.sizes)) - H
    tol = 1e-10 * max(1.0, p.d * math.log(p.K))
    assert abs(brute - profile_form) <= tol
    assert abs(mt.path_kl(p, sched) - brute) <= tol
    assert abs(mt.exact_run(p, sched, trajectory=True).path_kl - brute) <= tol


@given(joint_and_schedule(**SMALL))
def test_step_terms_are_expected_tc(case):
    p, sched = case
    d, t = p.d, p.table
    steps = mt.information.step_path_kl(p, sched)
    for idx, (s, k) in enumerate(zip(sched.starts, sched.sizes)):
        vals = []
        for A in itertools.combinations(range(d), s):
            rest = [j for j in range(d) if j not in A]
            for B in itertools.combinations(rest, k):
                vals.append(sum(cond_entropy(t, [j], A) for j in B) - cond_entropy(t, B, A))
        assert abs(steps[idx] - np.mean(vals)) <= 1e-10 * max(1.0, d * math.log(p.K))
        assert steps[idx] >= -1e-12


def test_telescoping_symbolic():
    for d in range(1, 8):
        phi = sp.symbols(f"phi0:{d}")
        e = [sp.Integer(0)] + [sum(phi[:m]) for m in range(1, d + 1)]  # e_m = phi_0 + ... + phi_{m-1}
        H = e[d]
        for sizes in compositions(d):
            starts = [sum(sizes[:t]) for t in range(len(sizes))]
            riemann = sum(phi[s] - phi[m] for s, k in zip(starts, sizes) for m in range(s, s + k))
            profile = sum(k * phi[s] for s, k in zip(starts, sizes)) - sum(phi)
            # per step k phi_s - (e_{s+k} - e_s), the form reached in the proof before telescoping
            steps = sum(k * (e[s + 1] - e[s]) - (e[s + k] - e[s]) for s, k in zip(starts, sizes))
            assert sp.expand(riemann - profile) == 0
            assert sp.expand(steps - (sum(k * phi[s] for s, k in zip(starts, sizes)) - H)) == 0


def brute_grid_path_kl(table, times):
    """Enumerate the column of every position: 0 = initial draw, n = step n, N+1 = completion."""
    d = table.ndim
    t = list(times)
    N = len(t) - 1
    lengths = [t[0]] + [t[n] - t[n - 1] for n in range(1, N + 1)] + [1.0 - t[N]]
    L = Logs(table)
    total = 0.0
    for cols in itertools.product(range(N + 2), repeat=d):
        prob = math.prod(lengths[c] for c in cols)
        if prob == 0.0:
            continue
        R = lambda n: [i for i in range(d) if cols[i] < n]  # revealed before step n
        log_ratio = L.log_marg(R(N + 1)) - L.log_marg(R(1))
        for n in range(1, N + 1):
            for i in range(d):
                if cols[i] == n:
                    log_ratio = log_ratio - L.log_cond(i, R(n))
        total += prob * float(np.sum(np.where(L.support, table * log_ratio, 0.0)))
    return total


@given(joint_and_grid(d=(2, 3), K=(2, 3), steps=(1, 3), max_outcomes=27))
def test_grid_path_kl_by_enumeration(case):
    p, grid = case
    brute = brute_grid_path_kl(p.table, grid.times)
    tol = 1e-10 * max(1.0, p.d * math.log(p.K))
    assert abs(mt.path_kl(p, grid) - brute) <= tol
    assert abs(mt.exact_run(p, grid, trajectory=True).path_kl - brute) <= tol


def brute_h_info(table):
    """h(u), h'(u) and Info(u) as functions, from I(X_i; X_A) and H(X_R) by enumeration."""
    d = table.ndim
    H = {R: cond_entropy(table, R, ()) for m in range(d + 1) for R in itertools.combinations(range(d), m)}
    terms = []  # (|A|, I(X_i; X_A)) over i and A subset of [d] - i
    for i in range(d):
        others = [k for k in range(d) if k != i]
        for m in range(d):
            for A in itertools.combinations(others, m):
                terms.append((m, H[(i,)] - cond_entropy(table, [i], A)))
    n = d - 1

    def h(u):
        return sum(u**m * (1 - u) ** (n - m) * I for m, I in terms)

    def dh(u):
        return sum((m * u ** (m - 1) if m else 0.0) * (1 - u) ** (n - m) * I
                   - (n - m) * u**m * ((1 - u) ** (n - m - 1) if n - m else 0.0) * I for m, I in terms)

    def info(u):
        return sum(u ** len(R) * (1 - u) ** (d - len(R)) * v for R, v in H.items())

    S = sum(H[(i,)] for i in range(d))
    return h, dh, info, S


@given(joints(**SMALL), grids(steps=1))
def test_gamma_umask_three_forms(p, grid):
    a, b = grid.times
    h, dh, info, S = brute_h_info(p.table)
    form1 = (b - a) * (S - h(a)) - (info(b) - info(a))
    x, w = np.polynomial.legendre.leggauss(p.d + 2)  # exact for these polynomials
    u = a + (b - a) * (x + 1) / 2
    form2 = (b - a) / 2 * sum(wi * (h(ui) - h(a)) for wi, ui in zip(w, u))
    form3 = (b - a) / 2 * sum(wi * (b - ui) * dh(ui) for wi, ui in zip(w, u))
    tol = 1e-10 * max(1.0, p.d * math.log(p.K))
    assert abs(form1 - form2) <= tol and abs(form2 - form3) <= tol
    assert abs(mt.information.step_path_kl(p, grid)[0] - form2) <= tol
    assert form2 >= -1e-13


def test_info_derivative_symbolic():
    u = sp.symbols("u")
    for d in range(1, 5):
        subsets = [frozenset(R) for m in range(d + 1) for R in itertools.combinations(range(d), m)]
        Hs = {R: (sp.Symbol("H_" + "".join(map(str, sorted(R)))) if R else sp.Integer(0)) for R in subsets}
        info = sum(u ** len(R) * (1 - u) ** (d - len(R)) * Hs[R] for R in subsets)
        S = sum(Hs[frozenset([i])] for i in range(d))
        h = sum(
            u ** len(A) * (1 - u) ** (d - 1 - len(A)) * (Hs[frozenset([i])] + Hs[A] - Hs[A | {i}])
            for i in range(d) for A in subsets if i not in A
        )
        assert sp.expand(sp.diff(info, u) - (S - h)) == 0
