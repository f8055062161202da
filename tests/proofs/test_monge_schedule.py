"""Checks of proofs/monge_schedule.md: the quadrangle identity of w(s, e) = (e - s) c(s),
monotone argmins, exactness of divide and conquer and of the envelope relaxation, against
enumeration of every composition."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

import mdmtheory as mt
from mdmtheory.optimal import optimal_schedule
from mdmtheory.testing import profiles
from reference import compositions

INF = float("inf")


def cost(c, sizes):
    s, out = 0, 0
    for k in sizes:
        out += k * c[s]
        s += k
    return out


def exact(c):
    """The profile as exact rationals (floats convert exactly): ties are real ties."""
    return [Fraction(float(x)) for x in c]


def brute_layers(c, T):
    """F[t][e] (exactly t steps) and the largest minimizer of each layer, by scanning (exact)."""
    d = len(c)
    F = [[None] * (d + 1) for _ in range(T + 1)]
    F[0][0] = Fraction(0)
    arg = [[-1] * (d + 1) for _ in range(T + 1)]
    for t in range(1, T + 1):
        for e in range(t, d + 1):
            vals = [(F[t - 1][s] + (e - s) * c[s], s) for s in range(t - 1, e) if F[t - 1][s] is not None]
            best = min(v for v, _ in vals)
            F[t][e] = best
            arg[t][e] = max(s for v, s in vals if v == best)
    return F, arg


@given(profiles((1, 9), monotone=False), st.booleans())
def test_quadrangle_identity_and_iff(prof, make_monotone):
    c = prof.values
    if make_monotone:
        c = np.minimum.accumulate(c)
    c = exact(c)
    d = len(c)
    w = lambda s, e: (e - s) * c[s]
    violated_strict = violated_weak = False  # over s <= s2 < e <= e2, and s <= s2 <= e <= e2
    for s, s2, e, e2 in itertools.combinations_with_replacement(range(d + 1), 4):
        if s2 >= d:
            continue
        diff = w(s, e2) + w(s2, e) - w(s, e) - w(s2, e2)
        assert diff == (e2 - e) * (c[s] - c[s2])
        violated_weak |= diff < 0
        violated_strict |= diff < 0 and s2 < e
    assert violated_strict == any(c[m + 1] > c[m] for m in range(d - 2))  # on 0..d-2
    assert violated_weak == any(c[m + 1] > c[m] for m in range(d - 1))  # on 0..d-1


@given(profiles((1, 9)), st.data())
def test_argmin_is_monotone(prof, data):
    c = exact(prof.values)
    d = len(c)
    T = data.draw(st.integers(1, d))
    F, arg = brute_layers(c, T)
    for t in range(1, T + 1):
        a = arg[t][t:]
        assert all(x <= y for x, y in zip(a, a[1:]))


def divide_and_conquer(c, T):
    """The layered DP with each layer computed by divide and conquer over e (exact arithmetic)."""
    d = len(c)
    F = [[None] * (d + 1) for _ in range(T + 1)]
    F[0][0] = Fraction(0)
    for t in range(1, T + 1):
        prev = F[t - 1]

        def solve(elo, ehi, slo, shi):
            if elo > ehi:
                return
            e = (elo + ehi) // 2
            best, arg = None, slo
            for s in range(slo, min(shi, e - 1) + 1):
                if prev[s] is None:
                    continue
                v = prev[s] + (e - s) * c[s]
                if best is None or v <= best:  # largest minimizer
                    best, arg = v, s
            F[t][e] = best
            solve(elo, e - 1, slo, arg)
            solve(e + 1, ehi, arg, shi)

        solve(t, d, t - 1, d - 1)
    return F


@given(profiles((1, 10)), st.data())
def test_divide_and_conquer_is_exact(prof, data):
    c = exact(prof.values)
    d = len(c)
    T = data.draw(st.integers(1, d))
    best = min(cost(c, k) for k in compositions(d, T))
    assert divide_and_conquer(c, T)[T][d] == best


@given(profiles((1, 9)), st.data())
def test_envelope_relaxation(prof, data):
    c = prof.values
    d = len(c)
    T = data.draw(st.integers(1, d))
    tol = 1e-12 * max(1.0, d * c.max())
    # G_t(e) by enumeration: at most t steps covering the first e tokens
    def at_most(t, e):
        if e == 0:
            return 0.0
        return min(cost(c, k) for n in range(1, min(t, e) + 1) for k in compositions(e, n))

    G = np.array([[at_most(t, e) if t else (0.0 if e == 0 else INF) for e in range(d + 1)] for t in range(T + 1)])
    for t in range(1, T + 1):
        for e in range(d + 1):
            relaxed = min(G[t - 1, s] + (e - s) * c[s] for s in range(d))
            relaxed = min(relaxed, G[t - 1, e])  # s = e: no step (e = d has no line s = d)
            assert abs(relaxed - G[t, e]) <= tol
    exact_T = min(cost(c, k) for k in compositions(d, T))
    assert abs(G[T, d] - exact_T) <= tol


@given(profiles((1, 10), monotone=False), st.booleans(), st.data())
def test_optimal_schedule_matches_enumeration(prof, make_monotone, data):
    c = np.minimum.accumulate(prof.values) if make_monotone else prof.values
    d = len(c)
    T = data.draw(st.integers(1, d))
    best = min(cost(c, k) for k in compositions(d, T))
    sched = optimal_schedule(mt.Profile(c), steps=T)
    assert sched.steps == T and sum(sched.sizes) == d
    assert abs(cost(c, sched.sizes) - best) <= 1e-12 * max(1.0, d * c.max())


@given(profiles((2, 10)))
def test_frontier_is_convex_in_steps(prof):
    c = prof.values
    d = len(c)
    F = [min(cost(c, k) for k in compositions(d, T)) for T in range(1, d + 1)]
    second = np.diff(F, 2)
    assert np.all(second >= -1e-12 * max(1.0, d * c.max()))


def test_quadrangle_identity_symbolic():
    s, s2, e, e2 = sp.symbols("s s2 e e2")
    c = sp.Function("c")
    w = lambda a, b: (b - a) * c(a)
    diff = w(s, e2) + w(s2, e) - w(s, e) - w(s2, e2)
    assert sp.expand(diff - (e2 - e) * (c(s) - c(s2))) == 0
    # splitting a step: k c(s) - [k1 c(s) + k2 c(s + k1)] = k2 (c(s) - c(s + k1)) >= 0
    k1, k2 = sp.symbols("k1 k2")
    split = (k1 + k2) * c(s) - (k1 * c(s) + k2 * c(s + k1))
    assert sp.expand(split - k2 * (c(s) - c(s + k1))) == 0
