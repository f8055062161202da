"""Checks of proofs/optimal_grid_error_lower.md: the optimal N-step grid error on
[tau_0, tau_K] is at least (sum_k sqrt(m_k) L_k)^2 / (2(N + K - 1)), m_k <= min h' on block k."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize
from scipy.special import xlogy
from scipy.stats import binom

import mdmtheory as mt
from mdmtheory import bounds as B
from mdmtheory.information import ugc as U
from reference import make_table, marginal

LOG2 = math.log(2.0)


def _H(t):
    return float(-np.sum(xlogy(t, t)))


def brute_hprime(p):
    """h'(t) from brute-force card gains h^card_j = sum_i mean_{|B| = j} I(X_i; X_B)."""
    t, d = p.table, p.d

    def mi(i, S):
        S = set(S)
        return _H(marginal(t, {i})) + _H(marginal(t, S)) - _H(marginal(t, S | {i}))

    hc = [0.0] + [
        sum(np.mean([mi(i, W) for W in itertools.combinations([x for x in range(d) if x != i], j)]) for i in range(d))
        for j in range(1, d)
    ]
    n = d - 1
    inc = np.diff(hc)
    return lambda u: n * (binom.pmf(np.arange(n), n - 1, np.asarray(u, dtype=float)[..., None]) @ inc)


GL_X, GL_W = np.polynomial.legendre.leggauss(12)  # exact for the polynomial integrands here


def gamma_ref(hp, a, b):
    """Gamma_umask(a, b) = ∫_a^b (b - u) h'(u) du, Gauss-Legendre (exact: degree <= d - 1)."""
    u = (a + b) / 2 + (b - a) / 2 * GL_X
    return float((b - a) / 2 * np.sum(GL_W * (b - u) * hp(u)))


@st.composite
def cases(draw):
    d = draw(st.integers(3, 4))
    p = mt.Joint(make_table(d, 2, draw(st.integers(0, 2**32 - 1)), draw(st.sampled_from(["dirichlet", "sparse", "peaked"]))))
    lo = draw(st.floats(0.02, 0.4))
    hi = draw(st.floats(0.6, 0.98))
    cuts = sorted(draw(st.lists(st.floats(lo + 0.01, hi - 0.01), max_size=3, unique=True)))
    edges = [lo] + [c for i, c in enumerate(cuts) if c - ([lo] + cuts)[i] > 1e-3 and hi - c > 1e-3] + [hi]
    return p, edges


@settings(max_examples=25, deadline=None)
@given(cases())
def test_bound_below_brute_force_optimum(case):
    p, edges = case
    hp = brute_hprime(p)
    lo, hi = edges[0], edges[-1]
    one = gamma_ref(hp, lo, hi)  # N = 1: the only grid
    assert one == pytest.approx(U.gamma_umask(p, lo, hi), rel=1e-9, abs=1e-13)  # the reference agrees
    assert B.optimal_grid_error_lower(p, edges, 1).value <= one + 1e-12
    ts = np.linspace(lo, hi, 101)[1:-1]  # N = 2: scan the interior time, then polish
    errs = [gamma_ref(hp, lo, t) + gamma_ref(hp, t, hi) for t in ts]
    i = int(np.argmin(errs))
    res = optimize.minimize_scalar(lambda t: gamma_ref(hp, lo, t) + gamma_ref(hp, t, hi), bounds=(ts[max(i - 1, 0)], ts[min(i + 1, len(ts) - 1)]), method="bounded", options={"xatol": 1e-12})
    two = min(min(errs), float(res.fun))
    assert B.optimal_grid_error_lower(p, edges, 2).value <= two + 1e-12


@settings(max_examples=40, deadline=None)
@given(cases(), st.integers(1, 6), st.data())
def test_bound_below_every_grid(case, N, data):
    p, edges = case
    lo, hi = edges[0], edges[-1]
    inner = sorted(data.draw(st.lists(st.floats(lo, hi), min_size=N - 1, max_size=N - 1, unique=True)))
    t = [lo] + inner + [hi]
    if min(np.diff(t)) <= 0:
        return
    b = B.optimal_grid_error_lower(p, edges, N)
    assert b.kind == B.LOWER and b.status == B.DERIVED
    assert b.holds(mt.path_kl(p, mt.Grid(t)), scale=p.d * math.log(2))


def test_piece_lemma():
    rng = np.random.default_rng(3)
    for seed in range(6):
        p = mt.Joint(make_table(4, 2, seed, "dirichlet"))
        hp = brute_hprime(p)
        for _ in range(5):
            a, e = np.sort(rng.uniform(0.05, 0.95, 2))
            b = rng.uniform(e, 1.0)  # piece [a, e] of a step ending at b >= e
            m = float(np.min(hp(np.linspace(a, e, 400))))
            part = integrate.quad(lambda u: (b - u) * float(hp(u)), a, e, epsabs=0, epsrel=1e-12)[0]
            assert part >= m * (e - a) ** 2 / 2 - 1e-12


def test_bernstein_min_is_a_lower_bound():
    rng = np.random.default_rng(0)
    for _ in range(50):
        coef = rng.normal(size=rng.integers(1, 7))
        n = coef.shape[0] - 1
        a, b = np.sort(rng.uniform(0, 1, 2))
        t = np.linspace(a, b, 401)
        vals = binom.pmf(np.arange(n + 1), n, t[:, None]) @ coef
        m = B._bernstein_min(coef, a, b)
        assert m <= vals.min() + 1e-12
        assert m >= coef.min() - 1e-12  # never below the global coefficient minimum


def test_repeated_bit_closed_form():
    """Repeated bit, d = 3: h' = 6 log 2 (1 - t), min on [1/3, 2/3] is 2 log 2, so the bound
    for N = 1 is 2 log 2 (1/3)^2 / 2 = (log 2)/9, below the optimum (5/27) log 2."""
    p = mt.families.repeated(3)
    b = B.optimal_grid_error_lower(p, (1 / 3, 2 / 3), 1)
    assert b.value == pytest.approx(LOG2 / 9, rel=1e-12)
    assert b.value < 5 / 27 * LOG2


def test_refinement_approaches_theorem3():
    p = mt.Joint(make_table(4, 2, 4, "dirichlet"))
    lo, hi = 0.25, 0.75
    P = U.fine_complexity(p, (lo, hi))
    N = 4000
    ratios = [B.optimal_grid_error_lower(p, np.linspace(lo, hi, K + 1), N).value / (P / (2 * N)) for K in (1, 8, 64)]
    assert ratios[0] < ratios[1] < ratios[2] <= 1 + 1e-9
    assert ratios[2] > 0.97
