"""Checks of proofs/sqrt_rule.md: the continuum square-root rule (Cauchy–Schwarz and
Euler–Lagrange), geometric schedules for 1/s profiles, and the discrete convergence."""

from __future__ import annotations

import numpy as np
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.integrate import quad
from sympy.calculus.euler import euler_equations

import mdmtheory as mt
from mdmtheory.optimal import optimal_schedule, schedule_path_kl
from mdmtheory.optimal import sqrt_rule_schedule
from mdmtheory.symbolic import power_law_schedule, square_root_rule

POS = st.floats(min_value=1e-3, max_value=10.0, allow_nan=False)


@given(st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.lists(POS, min_size=n, max_size=n),   # widths of the cells
    st.lists(POS, min_size=n, max_size=n),   # a(s) on each cell
    st.lists(POS, min_size=n, max_size=n),   # a competitor k(s) (rescaled to T steps)
    st.floats(min_value=0.5, max_value=50.0),  # T
)))
def test_square_root_rule_is_optimal_in_the_continuum(case):
    widths, a, k, T = (np.array(x, dtype=np.float64) if i < 3 else x for i, x in enumerate(case))
    sqrt_mass = float(np.sum(widths * np.sqrt(a)))
    bound = sqrt_mass**2 / (2 * T)
    # the square-root rule meets the constraint and the bound
    k_star = sqrt_mass / T / np.sqrt(a)
    assert abs(np.sum(widths / k_star) - T) <= 1e-9 * T
    assert abs(0.5 * np.sum(widths * a * k_star) - bound) <= 1e-9 * bound
    # any competitor, rescaled to use exactly T steps, does at least as badly
    k = k * np.sum(widths / k) / T
    assert abs(np.sum(widths / k) - T) <= 1e-9 * T
    assert 0.5 * np.sum(widths * a * k) >= bound * (1 - 1e-12)


def test_euler_lagrange_symbolic():
    s = sp.Symbol("s")
    mu = sp.Symbol("mu", positive=True)
    a = sp.Function("a")(s)
    k = sp.Function("k")(s)
    L = a * k / 2 + mu / k
    (eq,) = euler_equations(L, [k], [s])
    kk, aa = sp.symbols("kappa alpha_s", positive=True)
    roots = sp.solve(eq.lhs.subs(k, kk).subs(a, aa), kk)
    assert len(roots) == 1 and sp.simplify(roots[0] - sp.sqrt(2 * mu / aa)) == 0
    assert sp.simplify(sp.diff(L.subs(k, kk), kk, 2) - 2 * mu / kk**3) == 0  # convex in k
    # constraint and error of k* = W / (T sqrt(a)), with a concrete slope on [0, D]
    D, T = sp.symbols("D T", positive=True)
    slope = 1 / (s + 1) ** 2
    W = sp.integrate(sp.sqrt(slope), (s, 0, D))
    k_star = W / (T * sp.sqrt(slope))
    assert sp.simplify(sp.integrate(1 / k_star, (s, 0, D)) - T) == 0
    err = sp.integrate(sp.simplify(slope * k_star) / 2, (s, 0, D))
    assert sp.simplify(err - W**2 / (2 * T)) == 0
    # the package's derivation agrees
    pkg = square_root_rule(slope, s=s, lo=0, hi=D, steps=T)
    assert sp.simplify(pkg.step_size - k_star) == 0
    assert sp.simplify(pkg.error - W**2 / (2 * T)) == 0


def test_power_law_schedules_symbolic():
    s, tau = sp.symbols("s tau", nonnegative=True)
    A, sigma, D, T, C, Y = sp.symbols("A sigma D T C Y", positive=True)
    for alpha in (sp.Integer(1), sp.Integer(2), sp.Integer(3)):
        a = sp.simplify(-sp.diff(A * (s + sigma) ** (-alpha), s))
        p = (alpha + 1) / 2
        assert sp.simplify(sp.sqrt(a) * (s + sigma) ** p - sp.sqrt(alpha * A)) == 0  # k* ∝ (s+σ)^p
        # ds/dτ = C (s + σ)^p, s(0) = 0: separate variables, Y = s(τ) + σ
        F = sp.integrate(Y ** (-p), (Y, sigma, Y), conds="none")
        (Ytau,) = sp.solve(sp.Eq(F, C * tau), Y)
        ratio = sp.simplify(sp.powsimp(Ytau.subs(tau, tau + 1) / Ytau, force=True))
        assert (tau not in ratio.free_symbols) == (alpha == 1), (alpha, ratio)
        if alpha == 1:
            assert sp.simplify(ratio - sp.exp(C)) == 0
    # alpha = 1 with the constraint: ratio ((D + σ)/σ)^(1/T); the package derives the same
    pkg = power_law_schedule(1, d=D, steps=T)
    assert sp.simplify(pkg.growth - ((D + sigma) / sigma) ** (1 / T)) == 0


def test_discrete_optimum_approaches_continuum():
    shapes = {
        "exp": lambda x: 5 * np.exp(-5 * x),
        "power": lambda x: 1 / (x + 0.05) ** 2,
        "log": lambda x: 1 / (x + 0.01),
    }
    profiles = {
        "exp": lambda x: np.exp(-5 * x),
        "power": lambda x: 1 / (x + 0.05),
        "log": lambda x: -np.log(x + 0.01),
    }
    for name, slope in shapes.items():
        C = quad(lambda x: np.sqrt(slope(x)), 0, 1, limit=200)[0]
        gaps = []
        for d, T in [(1000, 10), (4000, 20), (16000, 40)]:
            prof = mt.Profile(profiles[name](np.arange(d) / d))
            best = schedule_path_kl(prof, optimal_schedule(prof, T))
            ratio = best / (d * C**2 / (2 * T))
            gaps.append(abs(ratio - 1))
            sq = schedule_path_kl(prof, sqrt_rule_schedule(prof, T))
            assert best <= sq <= best * 1.01, (name, d, T, sq / best)
        # O(1/T): the gap halves (within a margin) each time T doubles
        assert gaps[-1] < 0.025 and all(1.5 < g0 / g1 < 2.5 for g0, g1 in zip(gaps, gaps[1:])), (name, gaps)
