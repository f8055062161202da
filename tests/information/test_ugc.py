"""UGC quantities of W26 (docs/theory.md §3) against brute force, closed forms and identities.

References written here, independent of the package: every subset entropy from the table,
h(t) as an exact numpy polynomial by enumerating the revealed sets A ⊆ [d]∖{i} with
Bernoulli(t) weights and I(X_i; X_A) = H(X_i) + H(X_A) - H(X_{A∪i}), Info(X; X_t) likewise,
and expected total correlations of one random step by enumerating (A, B).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.polynomial import Polynomial
from scipy import integrate
from scipy.special import xlogy

import mdmtheory as mt
from mdmtheory.information import ugc as U
from mdmtheory.schedules import odds
from reference import make_table

LOG2 = math.log(2.0)


# -- references -------------------------------------------------------------------------
@st.composite
def joints(draw, max_d=4):
    d = draw(st.integers(2, max_d))
    K = draw(st.integers(2, 3 if d <= 3 else 2))
    mode = draw(st.sampled_from(["dirichlet", "sparse", "near_independent", "peaked"]))
    seed = draw(st.integers(0, 2**32 - 1))
    return mt.Joint(make_table(d, K, seed, mode))


def H_of(table, S):
    d = table.ndim
    axes = tuple(j for j in range(d) if j not in S)
    m = table.sum(axis=axes) if axes else table
    return float(-np.sum(xlogy(m, m)))


def all_H(table):
    d = table.ndim
    return {frozenset(S): H_of(table, S) for r in range(d + 1) for S in itertools.combinations(range(d), r)}


T = Polynomial([0.0, 1.0])
ONE_MINUS_T = Polynomial([1.0, -1.0])


def h_poly(table) -> Polynomial:
    """h(t) = sum_i sum_{A ⊆ [d]∖{i}} t^|A| (1-t)^(d-1-|A|) I(X_i; X_A)."""
    d = table.ndim
    H = all_H(table)
    out = Polynomial([0.0])
    for i in range(d):
        rest = [j for j in range(d) if j != i]
        for r in range(d):
            for A in itertools.combinations(rest, r):
                A = frozenset(A)
                I = H[frozenset([i])] + H[A] - H[A | {i}]
                out = out + I * T**r * ONE_MINUS_T ** (d - 1 - r)
    return out


def info_poly(table) -> Polynomial:
    d = table.ndim
    out = Polynomial([0.0])
    for S, h in all_H(table).items():
        out = out + h * T ** len(S) * ONE_MINUS_T ** (d - len(S))
    return out


def tc_dtc(table):
    d = table.ndim
    H = all_H(table)
    full = frozenset(range(d))
    S = sum(H[frozenset([i])] for i in range(d))
    tc = S - H[full]
    dtc = H[full] - sum(H[full] - H[full - {i}] for i in range(d))
    return tc, dtc, S


def definite(poly: Polynomial, a, b):
    P = poly.integ()
    return float(P(b) - P(a))


# -- gain polynomial ------------------------------------------------------------------------
@given(joints())
def test_gain_matches_bruteforce_polynomial(p):
    ref = h_poly(p.table)
    t = np.linspace(0, 1, 11)
    scale = max(1.0, float(np.abs(ref.coef).max()))
    np.testing.assert_allclose(U.gain(p, t), ref(t), atol=1e-11 * scale)
    np.testing.assert_allclose(U.gain_derivative(p, t), ref.deriv()(t), atol=1e-10 * scale)


@given(joints())
def test_gain_coefficients_are_mean_subset_informations(p):
    """h^card_j = sum_i mean over j-subsets B of [d]∖{i} of I(X_i; X_B)."""
    d = p.d
    H = all_H(p.table)
    ref = []
    for j in range(d):
        total = 0.0
        for i in range(d):
            rest = [x for x in range(d) if x != i]
            subs = list(itertools.combinations(rest, j))
            total += np.mean([H[frozenset([i])] + H[frozenset(B)] - H[frozenset(B) | {i}] for B in subs])
        ref.append(total)
    np.testing.assert_allclose(U.gain_coefficients(p), ref, atol=1e-12)
    np.testing.assert_allclose(U.gain_coefficients(p), mt.information.card_gain_coefficients(p), atol=1e-13)


@given(joints())
def test_gain_identities(p):
    tc, dtc, S = tc_dtc(p.table)
    h = h_poly(p.table)
    hp = h.deriv()
    assert U.gain(p, 0.0) == pytest.approx(0.0, abs=1e-14)
    assert U.gain(p, 1.0) == pytest.approx(tc + dtc, abs=1e-12)
    t = np.linspace(0, 1, 201)
    assert np.all(U.gain_derivative(p, t) >= -1e-12)  # h non-decreasing
    assert np.all(np.diff(U.gain(p, t)) >= -1e-12)
    # h = S - d/du Info(X; X_u)
    info = info_poly(p.table)
    np.testing.assert_allclose(U.gain(p, t), S - info.deriv()(t), atol=1e-11)
    np.testing.assert_allclose(U.info(p, t), info(t), atol=1e-12)
    # TC = ∫ (1-t) h', DTC = ∫ t h'
    assert definite(ONE_MINUS_T * hp, 0, 1) == pytest.approx(tc, abs=1e-11)
    assert definite(T * hp, 0, 1) == pytest.approx(dtc, abs=1e-11)


def test_gain_invariant_under_permutation_and_relabelling():
    p = mt.Joint(make_table(4, 2, 7, "dirichlet"))
    q = mt.Joint(np.transpose(p.table, (2, 0, 3, 1)))
    r = mt.Joint(p.table[::-1, :, ::-1, :])
    t = np.linspace(0, 1, 7)
    np.testing.assert_allclose(U.gain(p, t), U.gain(q, t), atol=1e-13)
    np.testing.assert_allclose(U.gain(p, t), U.gain(r, t), atol=1e-13)
    assert U.ugc(p, 0.2, 0.7) == pytest.approx(U.ugc(q, 0.2, 0.7), abs=1e-13)


def test_gain_h1_against_dit():
    dit = pytest.importorskip("dit")
    p = mt.Joint(make_table(3, 2, 3, "dirichlet"))
    outcomes = ["".join(map(str, x)) for x in itertools.product(range(2), repeat=3)]
    D = dit.Distribution(outcomes, p.table.ravel().tolist())
    tc = dit.multivariate.total_correlation(D) * LOG2
    dtc = dit.multivariate.dual_total_correlation(D) * LOG2
    assert U.gain(p, 1.0) == pytest.approx(tc + dtc, abs=1e-10)


# -- UGC ---------------------------------------------------------------------------------
@given(joints(), st.floats(0, 1), st.floats(0, 1))
def test_ugc_exact_and_identities(p, x, y):
    a, b = min(x, y), max(x, y)
    hp = h_poly(p.table).deriv()
    ref = definite(T * ONE_MINUS_T * hp, a, b)
    assert U.ugc(p, a, b) == pytest.approx(ref, abs=1e-12)
    m = (a + b) / 2
    assert U.ugc(p, a, b) == pytest.approx(U.ugc(p, a, m) + U.ugc(p, m, b), abs=1e-13)  # additive
    d = p.d
    tc, dtc, _ = tc_dtc(p.table)
    H01 = U.ugc(p, 0, 1)
    assert H01 == pytest.approx(2 * U.tse(p) / (d + 1), abs=1e-12)
    assert U.tse(p) == pytest.approx(mt.information.tse_complexity(p), abs=1e-12)
    assert H01 == pytest.approx(d / (d + 1) * U.ugc_card(p, 0, d), abs=1e-12)
    assert H01 <= min(tc, dtc) + 1e-12
    dhw = U.effective_total_correlation(p)
    assert H01 - 1e-12 <= dhw <= math.e / (math.e - 1) * H01 + 1e-12
    assert dhw <= min(tc, dtc) + 1e-12


@given(joints())
def test_ugc_card_bruteforce(p):
    d = p.d
    hc = U.gain_coefficients(p)
    for a in range(d + 1):
        for b in range(a, d + 1):
            ref = sum((j / d) * (1 - j / d) * (hc[j] - hc[j - 1]) for j in range(a + 1, b))
            assert U.ugc_card(p, a, b) == pytest.approx(ref, abs=1e-13)


def test_effective_tc_against_quad():
    p = mt.Joint(make_table(4, 2, 11, "dirichlet"))
    hp = h_poly(p.table).deriv()
    ref = integrate.quad(lambda t: t * min(1.0, -math.log(t)) * hp(t) if t > 0 else 0.0, 0, 1, points=[math.exp(-1)], epsabs=1e-14, epsrel=1e-13)[0]
    assert U.effective_total_correlation(p) == pytest.approx(ref, rel=1e-10, abs=1e-14)


@given(joints(), st.floats(-4, 4), st.floats(-4, 4))
def test_density_integrates_to_ugc(p, x, y):
    lo, hi = min(x, y), max(x, y)
    hp = h_poly(p.table).deriv()
    lam = np.linspace(-3, 3, 7)
    r = 1 / (1 + np.exp(-lam))
    np.testing.assert_allclose(U.ugc_density(p, lam), r**2 * (1 - r) ** 2 * hp(r), atol=1e-12)
    val = integrate.quad(lambda s: U.ugc_density(p, s), lo, hi, epsabs=1e-14, epsrel=1e-12)[0]
    assert val == pytest.approx(U.ugc(p, odds.from_log_odds(lo), odds.from_log_odds(hi)), abs=1e-11)


@given(joints(), st.floats(0.05, 0.95), st.floats(0.05, 0.95))
def test_lemma1_sandwich(p, x, y):
    """W26 Lemma 1: c = psi(q)/psi(p) - 1, D = (q - p)(h(q) - h(p)): D/c <= H <= ((1+c)/c) D."""
    a, b = min(x, y), max(x, y)
    if b - a < 1e-6:
        return
    c = odds.psi(b) / odds.psi(a) - 1
    D = (b - a) * (U.gain(p, b) - U.gain(p, a))
    H = U.ugc(p, a, b)
    tol = 1e-12 * max(1.0, D)
    assert D / c <= H + tol
    assert H <= (1 + c) / c * D + tol


@given(joints(), st.floats(0, 1), st.floats(0, 1))
def test_gamma_umask_bruteforce(p, x, y):
    """Γ_umask(a, b) = E TC(X_B | X_A): A ~ Bernoulli(a), B ⊆ A^c Bernoulli(β), β = (b-a)/(1-a);
    also = (b - a)(S - h(a)) - (Info(b) - Info(a)) and ∫ (b - u) h'(u) du."""
    a, b = min(x, y), max(x, y)
    d = p.d
    H = all_H(p.table)
    _, _, S = tc_dtc(p.table)
    if a < 1:
        beta = (b - a) / (1 - a)
        ref = 0.0
        for labels in itertools.product((0, 1, 2), repeat=d):  # 0: masked, 1: in A, 2: in B
            A = frozenset(j for j in range(d) if labels[j] == 1)
            B = frozenset(j for j in range(d) if labels[j] == 2)
            nA, nB = len(A), len(B)
            w = a**nA * (1 - a) ** (d - nA) * beta**nB * (1 - beta) ** (d - nA - nB)
            if w == 0 or nB < 2:
                continue
            tc = sum(H[A | {j}] - H[A] for j in B) - (H[A | B] - H[A])
            ref += w * tc
        assert U.gamma_umask(p, a, b) == pytest.approx(ref, abs=1e-12)
    info = info_poly(p.table)
    hpoly = h_poly(p.table)
    alt = (b - a) * (S - hpoly(a)) - (info(b) - info(a))
    assert U.gamma_umask(p, a, b) == pytest.approx(alt, abs=1e-11)
    assert U.gamma_umask(p, a, b) == pytest.approx(definite(Polynomial([b, -1.0]) * hpoly.deriv(), a, b), abs=1e-11)


@given(joints())
def test_gamma_card_bruteforce(p):
    """Γ_card(a, b) = E TC(X_B | X_A), A uniform a-subset, B uniform (b-a)-subset of A^c."""
    d = p.d
    H = all_H(p.table)
    for a in range(d + 1):
        for b in range(a, d + 1):
            vals = []
            for A in itertools.combinations(range(d), a):
                A = frozenset(A)
                rest = [j for j in range(d) if j not in A]
                for B in itertools.combinations(rest, b - a):
                    B = frozenset(B)
                    vals.append(sum(H[A | {j}] - H[A] for j in B) - (H[A | B] - H[A]))
            assert U.gamma_card(p, a, b) == pytest.approx(float(np.mean(vals)), abs=1e-12)


# -- complexities ----------------------------------------------------------------------------
@given(joints(max_d=4))
def test_complexities(p):
    d = p.d
    if d < 3:
        return
    lo, hi = U.canonical_interval(d)
    C = U.coarse_complexity(p)
    assert C == pytest.approx(2 * math.log(d - 1) * U.ugc(p, lo, hi), abs=1e-13)
    assert U.partition_complexity(p, [lo, hi]) == pytest.approx(C, abs=1e-13)
    hp = h_poly(p.table).deriv()
    P_ref = integrate.quad(lambda t: math.sqrt(max(hp(t), 0.0)), lo, hi, epsabs=1e-14, epsrel=1e-12, limit=200)[0] ** 2
    P = U.fine_complexity(p)
    assert P == pytest.approx(P_ref, rel=1e-8, abs=1e-14)
    assert C >= P * (1 - 1e-9) - 1e-14
    # refinement: C(P) decreases toward P_ugc
    prev = C
    for k in (2, 4, 16, 64):
        c_k = U.partition_complexity(p, odds.from_log_odds(np.linspace(odds.log_odds(lo), odds.log_odds(hi), k + 1)))
        assert P * (1 - 1e-9) - 1e-14 <= c_k <= prev * (1 + 1e-12) + 1e-15
        prev = c_k
    assert prev == pytest.approx(P, rel=1e-2, abs=1e-12)


# -- closed forms ------------------------------------------------------------------------------
@pytest.mark.parametrize("d", [3, 4, 5, 6])
def test_closed_forms_repeated_and_parity(d):
    rep, par = mt.families.repeated(d), mt.families.parity(d)
    t = np.linspace(0, 1, 9)
    np.testing.assert_allclose(U.gain(rep, t), d * LOG2 * (1 - (1 - t) ** (d - 1)), atol=1e-12)
    np.testing.assert_allclose(U.gain(par, t), d * LOG2 * t ** (d - 1), atol=1e-12)
    lam = np.linspace(-4, 4, 9)
    r = 1 / (1 + np.exp(-lam))
    q_rep = d * (d - 1) * LOG2 * r**2 * (1 - r) ** d
    np.testing.assert_allclose(U.ugc_density(rep, lam), q_rep, atol=1e-12)
    np.testing.assert_allclose(U.ugc_density(par, -lam), q_rep, atol=1e-12)  # q_par(λ) = q_rep(-λ)
    for p in (rep, par):
        assert U.ugc(p, 0, 1) == pytest.approx((d - 1) / (d + 1) * LOG2, abs=1e-13)
    assert mt.information.total_correlation(rep) == pytest.approx((d - 1) * LOG2, abs=1e-12)
    assert mt.information.dual_total_correlation(rep) == pytest.approx(LOG2, abs=1e-12)


def _closed_form_C_P(d, family):
    """C_ugc and P_ugc from the closed-form h' (repeated bit; parity mirrors it)."""
    if family == "repeated":
        hp = lambda t: d * (d - 1) * LOG2 * (1 - t) ** (d - 2)  # noqa: E731
    else:
        hp = lambda t: d * (d - 1) * LOG2 * t ** (d - 2)  # noqa: E731
    lo, hi = 1 / d, 1 - 1 / d
    H = integrate.quad(lambda t: t * (1 - t) * hp(t), lo, hi, epsabs=0, epsrel=1e-13)[0]
    C = 2 * math.log(d - 1) * H
    P = integrate.quad(lambda t: math.sqrt(hp(t)), lo, hi, epsabs=0, epsrel=1e-13)[0] ** 2
    return C, P


def test_coarse_over_fine_grows_like_log_d():
    """C_ugc / P_ugc ~ log d for the repeated bit and parity (closed-form h; d = 4..64):
    C -> 4 log 2 log d / e and P -> 4 log 2 / e. The ratio increases with d and
    ratio / log d stays in [0.75, 1] (increasing from d = 6 on, toward 1)."""
    ds = [4, 6, 8, 12, 16, 24, 32, 48, 64]
    for family in ("repeated", "parity"):
        ratios = []
        for d in ds:
            C, P = _closed_form_C_P(d, family)
            phi = [LOG2] + [0.0] * (d - 1) if family == "repeated" else [LOG2] * (d - 1) + [0.0]
            prof = mt.Profile(phi)
            assert U.coarse_complexity(prof) == pytest.approx(C, rel=1e-10)
            assert U.fine_complexity(prof) == pytest.approx(P, rel=1e-9)
            ratios.append(C / P)
        ratios = np.array(ratios)
        scaled = ratios / np.log(ds)
        assert np.all(np.diff(ratios) > 0)
        assert np.all((0.75 <= scaled) & (scaled <= 1.0))
        assert np.all(np.diff(scaled[1:]) > 0)
        assert ratios[-1] / ratios[0] > 3.0


# -- input validation ------------------------------------------------------------------------
def test_errors():
    p = mt.families.repeated(3)
    with pytest.raises(ValueError, match="t"):
        U.gain(p, 1.5)
    with pytest.raises(ValueError, match="^start, stop: "):
        U.ugc(p, 0.6, 0.2)
    with pytest.raises(ValueError, match="a, b"):
        U.ugc_card(p, 2, 4)
    with pytest.raises(ValueError, match="a"):
        U.ugc_card(p, 0.5, 2)
    with pytest.raises(ValueError, match="non-increasing"):
        U.fine_complexity(mt.Profile([0.1, 0.5, 0.2]))
    with pytest.raises(ValueError, match="edges"):
        U.partition_complexity(p, [0.0, 0.5])
    with pytest.raises(ValueError, match="edges"):
        U.partition_complexity(p, [0.5, 0.4])
    with pytest.raises(ValueError, match="d"):
        U.canonical_interval(1)
    with pytest.raises(ValueError, match="p"):
        U.gain(np.zeros(3), 0.5)
    with pytest.raises(ValueError, match="interval"):
        U.coarse_complexity(p, (0.0, 0.5))


def test_odds_helpers():
    assert odds.psi(0.25) == pytest.approx(1 / 3)
    assert odds.psi(1.0) == math.inf
    assert odds.log_odds(0.5) == 0.0
    np.testing.assert_allclose(odds.from_log_odds(odds.log_odds(np.array([0.1, 0.5, 0.9]))), [0.1, 0.5, 0.9])
    assert odds.from_log_odds(-800.0) == 0.0 and odds.from_log_odds(800.0) == 1.0
