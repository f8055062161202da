"""Checks of proofs/w26_lemma1.md: a(1-b)(h(b)-h(a)) <= H(a, b) <= b(1-a)(h(b)-h(a))."""

from __future__ import annotations

import itertools
import math

import numpy as np
import sympy as sp
from hypothesis import given

import mdmtheory as mt
from mdmtheory.information import w26_lemma1
from mdmtheory.testing import intervals, joints
from mdmtheory.information.ugc import ugc
from reference import subset_entropy as H


def brute_gain(table):
    """h(t) = sum_i sum_{A in [d]-i} t^|A| (1-t)^(d-1-|A|) I(X_i; X_A), as a function."""
    d = table.ndim
    terms = []
    for i in range(d):
        others = [k for k in range(d) if k != i]
        for m in range(d):
            for A in itertools.combinations(others, m):
                terms.append((m, H(table, [i]) + H(table, A) - H(table, (i,) + A)))
    return lambda t: sum(t**m * (1 - t) ** (d - 1 - m) * v for m, v in terms)


def brute_ugc(table, a, b):
    """H(a, b) = [t(1-t)h]_a^b - int_a^b (1-2t) h dt (parts), Gauss-Legendre exact on polynomials."""
    h = brute_gain(table)
    x, w = np.polynomial.legendre.leggauss(table.ndim + 2)
    t = a + (b - a) * (x + 1) / 2
    integral = (b - a) / 2 * sum(wi * (1 - 2 * ti) * h(ti) for wi, ti in zip(w, t))
    return b * (1 - b) * h(b) - a * (1 - a) * h(a) - integral, h(b) - h(a)


@given(joints(d=(1, 4), K=(2, 3), max_outcomes=81), intervals(min_gap=1e-4))
def test_lemma1_sandwich(p, ab):
    a, b = ab
    Hab, dh = brute_ugc(p.table, a, b)
    scale = max(1.0, p.d * math.log(p.K))
    assert abs(ugc(p, a, b) - Hab) <= 1e-11 * scale
    lo, hi = a * (1 - b) * dh, b * (1 - a) * dh
    assert lo - 1e-11 * scale <= Hab <= hi + 1e-11 * scale
    Hpkg = ugc(p, a, b)  # the package's value against the package's lemma, tighter tolerance
    lem = w26_lemma1(p, a, b)
    assert lem.lower <= Hpkg * (1 + 1e-12) + 1e-15 and Hpkg <= lem.upper * (1 + 1e-12) + 1e-15
    c = (b / (1 - b)) / (a / (1 - a)) - 1
    assert math.isclose(lem.c, c, rel_tol=1e-9)
    assert math.isclose(lem.lower, lem.D / c, rel_tol=1e-9, abs_tol=1e-300)
    assert math.isclose(lem.upper, (1 + c) / c * lem.D, rel_tol=1e-9, abs_tol=1e-300)


def test_lemma1_constants_symbolic():
    a, b, dh = sp.symbols("a b Delta_h", positive=True)
    psi = lambda t: t / (1 - t)
    c = psi(b) / psi(a) - 1
    D = (b - a) * dh
    assert sp.simplify(D / c - a * (1 - b) * dh) == 0
    assert sp.simplify((1 + c) / c * D - b * (1 - a) * dh) == 0
    assert sp.simplify(c - (b - a) / (a * (1 - b))) == 0


def test_repeated_bit_closed_form_symbolic():
    t, a, b = sp.symbols("t a b", positive=True)
    for d in range(2, 6):
        h = d * sp.log(2) * (1 - (1 - t) ** (d - 1))
        H = sp.integrate(t * (1 - t) * sp.diff(h, t), (t, a, b))
        for av, bv in [(sp.Rational(1, 10), sp.Rational(1, 5)), (sp.Rational(3, 10), sp.Rational(31, 100)),
                       (sp.Rational(1, 2), sp.Rational(9, 10))]:
            exact = H.subs({a: av, b: bv})
            dh = h.subs(t, bv) - h.subs(t, av)
            assert sp.simplify(av * (1 - bv) * dh - exact) <= 0 <= sp.simplify(bv * (1 - av) * dh - exact)
            p = mt.families.repeated(d)
            assert abs(ugc(p, float(av), float(bv)) - float(exact)) <= 1e-13
