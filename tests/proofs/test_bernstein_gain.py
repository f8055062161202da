"""Checks of proofs/bernstein_gain.md: the Bernstein form of h(t), its endpoints,
monotonicity, derivative and h = S - Info'."""

from __future__ import annotations

import itertools
import math

import numpy as np
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

import mdmtheory as mt
from mdmtheory.testing import joints
from mdmtheory.information import gain, gain_coefficients, gain_derivative
from reference import subset_entropy as H

JOINTS = joints(d=(1, 4), K=(2, 3), max_outcomes=81)
# t in [0, 1]; values below 1e-300 are mapped to 0: scipy's binom.pmf (used by ugc.gain) raises
# OverflowError at t = 2.2250738585072014e-308 (reported; see the report of issue 4)
TIMES = st.lists(
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False).map(lambda x: 0.0 if x < 1e-300 else x),
    min_size=1, max_size=5,
)


def mutual_informations(table):
    """{(i, B): I(X_i; X_B)} for every i and B subset of [d] - i, from marginal entropies."""
    d = table.ndim
    out = {}
    for i in range(d):
        others = [k for k in range(d) if k != i]
        for m in range(d):
            for B in itertools.combinations(others, m):
                out[(i, B)] = H(table, [i]) + H(table, B) - H(table, (i,) + B)
    return out


@given(JOINTS, TIMES)
def test_gain_by_enumeration(p, times):
    d = p.d
    I = mutual_informations(p.table)
    t = np.array(times)
    brute = np.array([sum(u ** len(B) * (1 - u) ** (d - 1 - len(B)) * v for (i, B), v in I.items()) for u in t])
    tol = 1e-11 * max(1.0, d * math.log(p.K))
    assert np.allclose(gain(p, t), brute, rtol=0, atol=tol)
    hcard = np.array([sum(np.mean([v for (i, B), v in I.items() if i == ii and len(B) == j]) for ii in range(d))
                      for j in range(d)])
    assert np.allclose(gain_coefficients(p), hcard, rtol=0, atol=tol)
    assert np.allclose(mt.information.card_gain_coefficients(p), hcard, rtol=0, atol=tol)


@given(JOINTS)
def test_endpoints_and_monotonicity(p):
    d, t = p.d, p.table
    full = list(range(d))
    smi = sum(H(t, [i]) + H(t, [k for k in full if k != i]) - H(t, full) for i in range(d))
    tol = 1e-11 * max(1.0, d * math.log(p.K))
    assert abs(float(gain(p, 0.0))) <= tol
    assert abs(float(gain(p, 1.0)) - smi) <= tol
    u = np.linspace(0.0, 1.0, 41)
    h = gain(p, u)
    assert np.all(np.diff(h) >= -tol)
    dh = gain_derivative(p, u)
    assert np.all(dh >= -tol)
    # derivative formula against central differences of the polynomial (degree <= 3 here)
    eps = 1e-5
    inner = u[1:-1]
    fd = (gain(p, inner + eps) - gain(p, inner - eps)) / (2 * eps)
    assert np.allclose(gain_derivative(p, inner), fd, rtol=1e-6, atol=1e-7 * max(1.0, smi))


def test_bernstein_and_monomial_forms_symbolic():
    t = sp.Symbol("t")
    for d in range(1, 9):
        n = d - 1
        b = sp.symbols(f"b0:{d}")
        bern = sum(sp.binomial(n, j) * t**j * (1 - t) ** (n - j) * b[j] for j in range(d))
        # monomial coefficients a_k = C(n, k) sum_{j<=k} (-1)^(k-j) C(k, j) b_j
        mono = sum(sp.binomial(n, k) * sum((-1) ** (k - j) * sp.binomial(k, j) * b[j] for j in range(k + 1)) * t**k
                   for k in range(d))
        assert sp.expand(bern - mono) == 0
        assert sp.Poly(sp.expand(bern), t).degree() <= n
        if d >= 2:
            deriv = n * sum(sp.binomial(n - 1, j) * t**j * (1 - t) ** (n - 1 - j) * (b[j + 1] - b[j]) for j in range(n))
            assert sp.expand(sp.diff(bern, t) - deriv) == 0
        assert bern.subs(t, 0) == b[0] and sp.expand(bern.subs(t, 1)) == b[n]


def test_gain_is_S_minus_info_derivative_symbolic():
    t = sp.Symbol("t")
    for d in range(1, 9):
        e = [sp.Integer(0)] + list(sp.symbols(f"e1:{d + 1}"))
        phi = [e[m + 1] - e[m] for m in range(d)]
        info = sum(sp.binomial(d, m) * t**m * (1 - t) ** (d - m) * e[m] for m in range(d + 1))
        h = sum(sp.binomial(d - 1, j) * t**j * (1 - t) ** (d - 1 - j) * d * (phi[0] - phi[j]) for j in range(d))
        S = d * e[1]
        assert sp.expand(S - sp.diff(info, t) - h) == 0


@given(st.integers(2, 5), st.integers(2, 3), TIMES)
def test_repeated_and_parity_closed_forms(d, K, times):
    if K**d > 81:
        K = 2
    t = np.array(times)
    rep = d * math.log(K) * (1 - (1 - t) ** (d - 1))
    assert np.allclose(gain(mt.families.repeated(d, K), t), rep, rtol=1e-12, atol=1e-12)
    par = d * math.log(2) * t ** (d - 1)
    assert np.allclose(gain(mt.families.parity(d), t), par, rtol=1e-12, atol=1e-12)
