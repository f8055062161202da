"""Every bound of mdmtheory.bounds against the exact quantity it bounds (docs/theory.md §2–3).

Exact quantities: KL(p‖q) of the output law (exact engine), the path KL, the one-step
defects, the minimum of W26's block objective (by enumerating allocations). Random joints
include near-degenerate ones (sparse tables with exact zeros, nearly independent, peaked);
schedules are random compositions and grids random increasing times. Statements are tested
as their source gives them (status "paper"); "our reading" items are conjecture checks;
the counterexample to the tempting misreading of W26 Prop. 1 (28c) is a plain test of a
true statement. The lower bound on the optimal grid error derived here is tested in
tests/proofs/test_optimal_grid_error_lower.py.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, optimize
from scipy.special import xlogy

import mdmtheory as mt
from mdmtheory import bounds as B
from mdmtheory.testing import schedules
from mdmtheory.information import ugc as U
from mdmtheory.schedules import odds
from reference import compositions, make_table

LOG2 = math.log(2.0)


# -- strategies and references -----------------------------------------------------------
@st.composite
def joints(draw, min_d=2, max_d=4):
    d = draw(st.integers(min_d, max_d))
    K = draw(st.integers(2, 3 if d <= 3 else 2))
    mode = draw(st.sampled_from(["dirichlet", "sparse", "near_independent", "peaked"]))
    seed = draw(st.integers(0, 2**32 - 1))
    return mt.Joint(make_table(d, K, seed, mode))


@st.composite
def grids(draw, interior=False, max_steps=4):
    n = draw(st.integers(1, max_steps))
    lo, hi = (0.02, 0.98) if interior else (0.0, 1.0)
    pts = draw(st.lists(st.floats(lo, hi), min_size=n + 1, max_size=n + 1, unique=True))
    pts = sorted(pts)
    if any(b - a < 1e-4 for a, b in zip(pts, pts[1:])):
        start = min(pts[0], hi - 0.05 * n)  # the spread-out grid must stay inside [lo, hi]
        pts = list(np.linspace(start, min(hi, max(pts[-1], start + 0.05 * n)), n + 1))
    if not interior and draw(st.booleans()):
        pts[0] = 0.0
    return mt.Grid(pts)


def scale_of(p):
    return p.d * math.log(p.K)


def holds(bound: B.Bound, exact: float, p) -> bool:
    return bound.holds(exact, scale=scale_of(p))


def H_of(table, S):
    d = table.ndim
    axes = tuple(j for j in range(d) if j not in S)
    m = table.sum(axis=axes) if axes else table
    return float(-np.sum(xlogy(m, m)))


def mi(table, i, S):
    S = tuple(S)
    return H_of(table, (i,)) + H_of(table, S) - H_of(table, S + (i,))


def lc25_lower_reference(table, s, reading):
    """(s/(16 d)) sum_i sum_{j>=0} 2^-j E I(X_i; X o W_j^(-i)), |W_j| = min(2^j, d-1),
    W uniform over subsets of [d]∖{i}: enumerated here (j up to 60; later terms < 1e-18)."""
    d = table.ndim
    total = 0.0
    for i in range(d):
        rest = [x for x in range(d) if x != i]
        for j in range(60):
            size = min(1 << j, d - 1)
            vals = []
            for W in itertools.combinations(rest, size):
                shown = W if reading == "revealed" else tuple(x for x in rest if x not in W)
                vals.append(mi(table, i, shown))
            total += 2.0**-j * float(np.mean(vals))
    return s / (16 * d) * total


def max_kl(p, s, path=False):
    prof = mt.information_profile(p)
    vals = []
    for c in compositions(p.d):
        if max(c) != s:
            continue
        sched = mt.Schedule(c)
        vals.append(mt.path_kl(prof, sched) if path else mt.kl(p, mt.sampler_law(p, sched)))
    return max(vals)


# -- fixed-cardinality sampler -------------------------------------------------------------
@given(joints(max_d=5), st.data())
def test_card_bounds_hold(p, data):
    sched = data.draw(schedules(p.d))
    run = mt.exact_run(p, sched, trajectory=True)
    kl = mt.kl(p, run.law)
    path = mt.path_kl(p, sched)
    assert run.path_kl == pytest.approx(path, abs=1e-12)
    assert kl <= path + 1e-12 * scale_of(p)  # data processing
    assert holds(B.riemann_bound(p, sched), path, p)
    assert holds(B.lc25_bound(p, sched), kl, p)
    assert holds(B.lc25_bound(p, sched), path, p)
    assert holds(B.w26_theorem1_card(p, sched), path, p)
    for s, k in zip(sched.starts, sched.sizes):
        assert holds(B.w26_lemma5(p, s, s + k), U.gamma_card(p, s, s + k), p)
    if sched.steps == 1:
        assert kl == pytest.approx(mt.information.total_correlation(p), abs=1e-12)


def test_lc25_theorem1_sweep_at_least_736_checks():
    """docs/theory.md reports LC25 Theorem 1 held on 736 exact checks: re-verify on >= 736
    (law, schedule) pairs — families and random laws, d = 2..5, every schedule."""
    laws = [mt.families.repeated(d) for d in (2, 3, 4, 5)] + [mt.families.parity(d) for d in (2, 3, 4, 5)]
    laws += [mt.families.repeated(3, K=3), mt.families.noisy_repeated_bit(4, 0.1)]
    rng = np.random.default_rng(20260)
    for d, K in [(2, 2), (3, 2), (4, 2), (5, 2), (2, 3), (3, 3), (4, 3)]:
        for mode in ("dirichlet", "sparse", "near_independent", "peaked"):
            for _ in range(4):
                laws.append(mt.Joint(make_table(d, K, int(rng.integers(2**32)), mode)))
    checks = failures = 0
    for p in laws:
        prof = mt.information_profile(p)
        for c in compositions(p.d):
            sched = mt.Schedule(c)
            kl = mt.kl(p, mt.sampler_law(p, sched))
            checks += 1
            failures += not holds(B.lc25_bound(prof, sched), kl, p)
    assert checks >= 736
    assert failures == 0


def test_riemann_and_lc25_agree_at_powers_of_two():
    p = mt.Joint(make_table(5, 2, 3, "dirichlet"))
    for c in compositions(5):
        r, l = B.riemann_bound(p, c).value, B.lc25_bound(p, c).value
        k = max(c)
        if k & (k - 1) == 0:
            assert l == pytest.approx(r, abs=1e-15)
        else:
            assert l > r


def test_riemann_attained_by_repeated_bit():
    """(2, 1, ..., 1) on the repeated bit: path KL = phi_0 - phi_1 = log 2 = the bound."""
    p = mt.families.repeated(4)
    sched = mt.Schedule((2, 1, 1))
    assert B.riemann_bound(p, sched).value == pytest.approx(mt.path_kl(p, sched), abs=1e-13)
    assert mt.path_kl(p, sched) == pytest.approx(LOG2, abs=1e-13)


# -- LC25 lower bound: our reading (a conjecture check, not a check of LC25) ----------------
@given(joints(max_d=4), st.integers(2, 4), st.sampled_from(["revealed", "masked"]))
def test_lc25_our_reading_value_matches_enumeration(p, s, reading):
    s = min(s, p.d)
    ref = lc25_lower_reference(p.table, s, reading)
    b = B.lc25_lower_our_reading(p, s, reading=reading)
    assert b.value == pytest.approx(ref, abs=1e-12)
    assert b.status == B.OUR_READING and b.kind == B.LOWER and "our reading" in b.source


@given(joints(max_d=5), st.integers(1, 5))
def test_worst_path_kl_matches_enumeration(p, s):
    s = min(s, p.d)
    assert B.worst_path_kl(p, s) == pytest.approx(max_kl(p, s, path=True), abs=1e-12)


@given(joints(max_d=5), st.integers(2, 5), st.sampled_from(["revealed", "masked"]))
def test_lc25_our_reading_holds_against_worst_path_kl(p, s, reading):
    """Conjecture check: holds on every law tried (not proved)."""
    s = min(s, p.d)
    if s < 2:
        return
    b = B.lc25_lower_our_reading(p, s, reading=reading)
    assert holds(b, max_kl(p, s, path=True), p)


def test_lc25_our_reading_is_for_kmax_at_least_2():
    """At k_max = 1 the sampler is exact: the literal reading (positive right side) would
    contradict LC25's own Theorem 1, so our reading excludes it."""
    p = mt.families.repeated(3)
    assert lc25_lower_reference(p.table, 1, "revealed") > 0.05
    assert max_kl(p, 1) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="^max_size: our reading"):
        B.lc25_lower_our_reading(p, 1)


#: d = 3 bits, near-deterministic; KL of every k_max = 2 schedule ~1.0e-3, the value of
#: our reading ("revealed") 2.6e-3, the worst path KL 7.0e-3.
LC25_REVEALED_EXAMPLE = [9.2e-03, 9.8e-01, 4.5e-06, 4.3e-03, 3.8e-05, 4.3e-03, 2.5e-05, 5.6e-03]
#: KL of every k_max = 2 schedule ~1.04e-7, value of our reading ("masked") 4.3e-7.
LC25_MASKED_EXAMPLE = [1.8e-10, 0.0, 1.0, 5.3e-06, 0.0, 0.0, 5.3e-06, 1.1e-06]


def _law(values):
    t = np.array(values, dtype=np.float64)
    return mt.Joint((t / t.sum()).reshape((2, 2, 2)))


def test_lc25_our_reading_needs_the_path_kl():
    """Why our reading compares with the path KL: against the output-law KL the same value
    fails at k_max = 2 on near-deterministic laws (under both readings of X o W); against
    the path KL it holds. A statement about our reading, not about LC25."""
    for values, reading, value in ((LC25_REVEALED_EXAMPLE, "revealed", 2.64e-3), (LC25_MASKED_EXAMPLE, "masked", 4.3e-7)):
        p = _law(values)
        b = B.lc25_lower_our_reading(p, 2, reading=reading)
        assert b.value == pytest.approx(lc25_lower_reference(p.table, 2, reading), abs=1e-15)
        assert b.value == pytest.approx(value, rel=0.01)
        assert max_kl(p, 2) < b.value  # output-law KL: below the value
        assert holds(b, max_kl(p, 2, path=True), p)  # path KL: above it


# -- Bernoulli-subset sampler (W26) --------------------------------------------------------
@given(joints(max_d=4), grids())
def test_grid_bounds_hold(p, grid):
    run = mt.exact_run(p, grid, trajectory=True)
    kl = mt.kl(p, run.law)
    path = mt.path_kl(p, grid)
    assert run.path_kl == pytest.approx(path, abs=1e-12)
    assert kl <= path + 1e-12 * scale_of(p)
    thm1 = B.w26_theorem1(p, grid)
    assert holds(thm1, path, p)
    t = grid.times
    if t[0] == 0.0 and U.ugc(p, 0.0, t[1]) > 0:
        assert thm1.value == math.inf
    for a, b in zip(t, t[1:]):
        assert holds(B.w26_lemma4(p, a, b), U.gamma_umask(p, a, b), p)


@given(joints(min_d=3, max_d=4), st.integers(0, 3), st.data())
def test_corollary1_geo_grid(p, extra, data):
    lo, hi = U.canonical_interval(p.d)
    L = odds.log_odds(hi) - odds.log_odds(lo)
    N = math.ceil(L) + extra
    b = B.w26_corollary1(p, N)
    g = b.plan
    lam = odds.log_odds(np.array(g.times))
    np.testing.assert_allclose(np.diff(lam), L / N, rtol=1e-9)  # Geo(rho): equal log-odds steps
    assert g.times[0] == lo and g.times[-1] == hi and g.steps == N
    assert b.value == pytest.approx(2 * U.coarse_complexity(p) / N, rel=1e-12, abs=1e-15)
    path = mt.path_kl(p, g)
    assert holds(b, path, p)
    assert holds(b, mt.kl(p, mt.sampler_law(p, g)), p)
    assert B.w26_corollary1(p, g).value == pytest.approx(b.value, rel=1e-12, abs=1e-15)


@given(joints(min_d=3, max_d=4), st.lists(st.floats(0.3, 0.7), max_size=2, unique=True), st.integers(0, 10))
def test_proposition1_block_grid(p, cuts, extra):
    lo, hi = U.canonical_interval(p.d)
    edges = [lo] + sorted(c for c in cuts if lo + 1e-3 < c < hi - 1e-3) + [hi]
    Kb = len(edges) - 1
    L = odds.log_odds(hi) - odds.log_odds(lo)
    N = math.ceil(2 * (Kb + 2 * L)) + extra
    b = B.w26_proposition1(p, edges, N)
    assert b.plan.steps <= N  # sum_k N_k <= N
    assert b.plan.times[0] == lo and b.plan.times[-1] == hi
    assert b.value == pytest.approx(4 * U.partition_complexity(p, edges) / N, rel=1e-12, abs=1e-15)
    assert holds(b, mt.path_kl(p, b.plan), p)
    for e in edges[1:-1]:  # block edges are grid points
        assert np.min(np.abs(np.array(b.plan.times) - e)) < 1e-12


def _repeated3_gamma(a, b):
    """Closed form Gamma_umask(a, b) = ∫_a^b (h(u) - h(a)) du for the repeated bit, d = 3."""
    h = lambda t: 3 * LOG2 * (2 * t - t * t)  # noqa: E731
    Hint = lambda t: 3 * LOG2 * (t * t - t**3 / 3)  # antiderivative of h
    return Hint(b) - Hint(a) - (b - a) * h(a)


def _repeated3_H(a, b):
    """H(a, b) = ∫ t(1-t) h'(t) dt for the repeated bit, d = 3, h' = 6 log 2 (1 - t):
    antiderivative of 6 log 2 (t - 2t^2 + t^3)."""
    G = lambda t: 6 * LOG2 * (t * t / 2 - 2 * t**3 / 3 + t**4 / 4)  # noqa: E731
    return G(b) - G(a)


def _repeated3_gamma_and_C():
    """Closed forms for the repeated bit, d = 3, on [1/3, 2/3]: h(t) = 3 log 2 (2t - t^2)."""
    a, b = 1 / 3, 2 / 3
    C = 2 * LOG2 * _repeated3_H(a, b)  # lambda-length log((2/3)/(1/3)) - log((1/3)/(2/3)) = 2 log 2
    return _repeated3_gamma(a, b), C


def test_repeated3_closed_forms_match_package():
    p = mt.families.repeated(3)
    gamma, C = _repeated3_gamma_and_C()
    assert U.gamma_umask(p, 1 / 3, 2 / 3) == pytest.approx(gamma, abs=1e-13)
    assert U.coarse_complexity(p) == pytest.approx(C, abs=1e-13)
    assert B.w26_proposition1_dp_lower(p, (1 / 3, 2 / 3), 1).value == pytest.approx(C, abs=1e-13)


# -- W26 Proposition 1, eq. (28c): a lower bound on the DP's minimum block objective --------
def block_objective_reference(p, edges, N):
    """min over allocations N_1 + ... + N_K = N (N_k >= 1) of sum_k (e^{S_k/N_k} - 1) H_k,
    by enumerating every allocation; S_k from the log-odds written here, H_k = H(tau_{k-1},
    tau_k) by quadrature of t(1-t) h'(t) with h' from the Bernstein form of the brute-force
    card gains."""
    tau = np.array(edges, dtype=np.float64)
    lam = np.log(tau / (1 - tau))
    S = np.diff(lam)
    d = p.d
    hcard = [0.0] + [sum(np.mean([mi(p.table, i, W) for W in itertools.combinations([x for x in range(d) if x != i], j)]) for i in range(d)) for j in range(1, d)]
    from scipy.stats import binom

    def hprime(t):  # derivative of sum_j C(d-1, j) t^j (1-t)^(d-1-j) hcard_j
        n = d - 1
        return n * sum(binom.pmf(j, n - 1, t) * (hcard[j + 1] - hcard[j]) for j in range(n)) if n >= 1 else 0.0

    H = np.array([integrate.quad(lambda t: t * (1 - t) * hprime(t), tau[k], tau[k + 1], epsabs=0, epsrel=1e-13)[0] for k in range(len(S))])
    K = len(S)
    best, arg = math.inf, None
    for c in compositions(N):
        if len(c) != K:
            continue
        v = sum((math.expm1(S[k] / c[k]) * H[k]) if H[k] > 0 else 0.0 for k in range(K))
        if v < best:
            best, arg = v, c
    C = float(np.sum(np.sqrt(S * np.maximum(H, 0.0))) ** 2)
    return best, arg, C


@given(joints(min_d=2, max_d=4), st.lists(st.floats(0.05, 0.95), min_size=2, max_size=4, unique=True), st.integers(0, 5))
def test_w26_proposition1_dp_lower_holds(p, pts, extra):
    """(28c) as stated, against the minimum of the block objective by enumeration."""
    edges = sorted(pts)
    if min(np.diff(edges)) < 1e-3:
        return
    K = len(edges) - 1
    N = K + extra
    ref, alloc, C = block_objective_reference(p, edges, N)
    got = B.w26_block_objective_min(p, edges, N)
    assert got.value == pytest.approx(ref, rel=1e-9, abs=1e-14)
    assert sum(got.steps) == N and len(got.steps) == K and min(got.steps) >= 1
    b = B.w26_proposition1_dp_lower(p, edges, N)
    assert b.kind == B.LOWER and b.status == B.PAPER and "28c" in b.source
    assert b.value == pytest.approx(C / N, rel=1e-9, abs=1e-14)
    assert holds(b, ref, p)


def test_w26_block_objective_min_against_enumeration_fixed_cases():
    p = mt.Joint(make_table(4, 2, 7, "dirichlet"))
    for edges, N in (((0.2, 0.5, 0.8), 2), ((0.2, 0.5, 0.8), 7), ((0.1, 0.3, 0.6, 0.9), 9), ((0.25, 0.75), 4)):
        ref, alloc, C = block_objective_reference(p, edges, N)
        got = B.w26_block_objective_min(p, edges, N)
        assert got.value == pytest.approx(ref, rel=1e-10)
        assert got.steps == alloc
        assert B.w26_proposition1_dp_lower(p, edges, N).value <= got.value
    with pytest.raises(ValueError, match="^steps: .*N >= K = 3"):
        B.w26_block_objective_min(p, (0.2, 0.4, 0.6, 0.8), 2)
    with pytest.raises(ValueError, match="^steps: .*N >= K = 3"):
        B.w26_proposition1_dp_lower(p, (0.2, 0.4, 0.6, 0.8), 2)


def test_optimal_error_can_sit_below_c_over_n():
    """Why (28c) is not a lower bound on the sampling error: repeated bit, d = 3, on
    [1/3, 2/3]. N = 1: the only grid is the interval, error Gamma(1/3, 2/3) = (5/27) log 2
    = 0.128, while C(P)/N = (13/27) (log 2)^2 = 0.231. N = 8 (inside Prop. 1's hypothesis
    N >= 2(1 + 2 log 4) = 7.55): the uniform grid already has error 0.0144 < C(P)/8 =
    0.0289. Meanwhile (28c) holds: the block objective's minimum is >= C(P)/N."""
    p = mt.families.repeated(3)
    gamma, C = _repeated3_gamma_and_C()
    assert gamma == pytest.approx(5 / 27 * LOG2, abs=1e-14)
    assert C == pytest.approx(13 / 27 * LOG2**2, abs=1e-14)
    assert gamma < C  # optimal 1-step error < C(P)/1
    assert mt.path_kl(p, mt.Grid((1 / 3, 2 / 3))) == pytest.approx(gamma, abs=1e-13)
    N = 8
    assert N >= 2 * (1 + 2 * np.log(4.0))
    t = np.linspace(1 / 3, 2 / 3, N + 1)
    uniform_error = sum(_repeated3_gamma(t[j], t[j + 1]) for j in range(N))
    assert uniform_error == pytest.approx(mt.path_kl(p, mt.Grid(t)), abs=1e-13)
    assert uniform_error < C / N  # optimal <= uniform < C(P)/N
    for n in (1, N):
        assert math.expm1(2 * LOG2 / n) * _repeated3_H(1 / 3, 2 / 3) >= C / n  # (28c), one block
        assert B.w26_block_objective_min(p, (1 / 3, 2 / 3), n).value == pytest.approx(math.expm1(2 * LOG2 / n) * _repeated3_H(1 / 3, 2 / 3), rel=1e-12)


@pytest.mark.slow  # ~4 s (nested quadrature, N = 128); default twins: tests/optimal/test_optimal.py::
# test_theorem3_n_times_optimal_error_converges_to_half_p_ugc, the compare row's holds None (test_compare_grid_table)
def test_theorem3_is_asymptotic_and_converges():
    """N times the error of the equal-sqrt(h')-mass grid tends to P_ugc / 2 (W26 Thm 3;
    that grid is asymptotically optimal); the Bound is flagged asymptotic (no verdict)."""
    p = mt.Joint(make_table(4, 2, 4, "dirichlet"))
    lo, hi = 0.25, 0.75
    b = B.w26_theorem3(p, 8, start=lo, stop=hi)
    assert b.kind == B.ASYMPTOTIC and b.holds(0.0) is None
    P = U.fine_complexity(p, (lo, hi))
    f = lambda t: math.sqrt(U.gain_derivative(p, t))  # noqa: E731
    total = integrate.quad(f, lo, hi, epsabs=0, epsrel=1e-13)[0]
    errs = []
    for N in (8, 32, 128):
        cum = lambda x: integrate.quad(f, lo, x, epsabs=0, epsrel=1e-13)[0]  # noqa: E731
        ts = [lo] + [optimize.brentq(lambda x: cum(x) - k * total / N, lo, hi, xtol=1e-15) for k in range(1, N)] + [hi]
        ratio = N * mt.path_kl(p, mt.Grid(ts)) / (P / 2)
        assert B.w26_theorem3(p, N, start=lo, stop=hi).value == pytest.approx(P / (2 * N), rel=1e-12)
        errs.append(abs(ratio - 1))
    assert errs[1] < errs[0] / 3 and errs[2] < errs[1] / 3 and errs[2] < 2e-3


def test_every_bound_has_a_status():
    p = mt.Joint(make_table(4, 2, 3, "dirichlet"))
    sched, grid = mt.Schedule((2, 1, 1)), mt.Grid((0.25, 0.5, 0.75))
    made = [
        B.riemann_bound(p, sched), B.lc25_bound(p, sched), B.lc25_lower_our_reading(p, 2), B.w26_lemma4(p, 0.2, 0.4),
        B.w26_lemma5(p, 0, 2), B.w26_theorem1(p, grid), B.w26_theorem1_card(p, sched), B.w26_corollary1(p, 3),
        B.w26_proposition1(p, (0.25, 0.75), 11), B.w26_proposition1_dp_lower(p, (0.25, 0.5, 0.75), 4),
        B.optimal_grid_error_lower(p, (0.25, 0.75), 2), B.w26_theorem3(p, 4), B.ugc_total_bound(p),
        *B.dhw_sandwich(p), B.dhw_tc_bound(p),
    ]
    for b in made:
        assert b.status in B.STATUSES, b.name
        assert (b.status == B.OUR_READING) == ("our reading" in b.source), b.name
    assert not hasattr(B, "w26_proposition1_lower") and not hasattr(B, "lc25_lower_bound")


def test_theorem3_expansion_on_the_whole_interval():
    """Derived here (docs/theory.md §3): on [0, 1] the equal-sqrt(h')-mass grid has
    N * error -> (int_0^1 sqrt(h'))^2 / 2 (exact steps from t_0 = 0 to t_N = 1)."""
    p = mt.Joint(make_table(4, 2, 4, "dirichlet"))
    f = lambda t: math.sqrt(U.gain_derivative(p, t))  # noqa: E731
    total = integrate.quad(f, 0.0, 1.0, epsabs=0, epsrel=1e-13)[0]
    assert U.gain_derivative(p, 0.0) > 0 and U.gain_derivative(p, 1.0) > 0
    errs = []
    for N in (8, 32, 128):
        cum = lambda x: integrate.quad(f, 0.0, x, epsabs=0, epsrel=1e-13)[0]  # noqa: E731
        ts = [0.0] + [optimize.brentq(lambda x: cum(x) - k * total / N, 0.0, 1.0, xtol=1e-15) for k in range(1, N)] + [1.0]
        errs.append(abs(N * mt.path_kl(p, mt.Grid(ts)) / (total**2 / 2) - 1))
    assert errs[1] < errs[0] / 3 and errs[2] < errs[1] / 3 and errs[2] < 2e-3


# -- UGC aggregates --------------------------------------------------------------------------
@given(joints(max_d=5))
def test_ugc_aggregate_bounds(p):
    H01 = U.ugc(p, 0, 1)
    dhw = U.effective_total_correlation(p)
    assert holds(B.ugc_total_bound(p), H01, p)
    lo, hi = B.dhw_sandwich(p)
    assert lo.kind == B.LOWER and hi.kind == B.UPPER
    assert holds(lo, dhw, p) and holds(hi, dhw, p)
    assert holds(B.dhw_tc_bound(p), dhw, p)
    assert B.ugc_total_bound(p).value == pytest.approx(min(mt.information.total_correlation(p), mt.information.dual_total_correlation(p)), abs=1e-12)


# -- compare ------------------------------------------------------------------------------
def test_compare_schedule_table():
    p = mt.Joint(make_table(4, 2, 1, "dirichlet"))
    sched = mt.Schedule((2, 1, 1))
    table = B.compare(p, sched)
    assert table.kl == pytest.approx(mt.kl(p, mt.sampler_law(p, sched)), abs=1e-15)
    assert table.path_kl == pytest.approx(mt.path_kl(p, sched), abs=1e-14)
    assert {"data_processing", "riemann", "lc25_theorem1", "w26_theorem1_card", "lc25_lower_our_reading", "ugc_total", "dhw_lower", "dhw_upper", "dhw_tc"} <= set(table.names)
    r = table.row("riemann")
    assert r.value == pytest.approx(B.riemann_bound(p, sched).value)
    assert r.exact == table.path_kl and r.slack == pytest.approx(r.value / r.exact) and r.holds
    assert table.row("lc25_theorem1").exact == table.kl
    assert table.row("lc25_theorem1").status == B.SUMMARY
    lc = table.row("lc25_lower_our_reading")
    assert lc.status == "our reading" and lc.exact == pytest.approx(B.worst_path_kl(p, 2), abs=1e-15)
    assert table.all_hold
    for line in str(table).splitlines()[3:]:
        name = line.split()[0]
        assert table.row(name).status and (table.row(name).status in line)
    text = str(table)
    assert "slack" in text and "riemann" in text and len(text.splitlines()) == len(table.rows) + 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.rows = ()
    assert isinstance(table.rows, tuple)


def test_compare_grid_table():
    p = mt.families.repeated(3)
    table = B.compare(p, mt.Grid((1 / 3, 2 / 3)))
    row = table.row("w26_proposition1_dp_lower")
    assert row.status == B.PAPER and row.holds is True
    assert row.exact == pytest.approx(B.w26_block_objective_min(p, (1 / 3, 2 / 3), 1).value, abs=1e-15)
    assert row.value > table.path_kl  # C(P)/N above this (optimal) grid's error: not a bound on it
    assert table.row("optimal_grid_error_lower").holds is True
    assert table.row("optimal_grid_error_lower").status == B.DERIVED
    assert table.row("w26_theorem3").holds is None
    assert table.row("w26_theorem1").holds
    assert table.all_hold
    assert "derived here" in str(table) and "paper" in str(table)
    geo = B.w26_corollary1(mt.Joint(make_table(4, 2, 2, "dirichlet")), 3).plan
    t2 = B.compare(mt.Joint(make_table(4, 2, 2, "dirichlet")), geo)
    assert "w26_corollary1" in t2.names and t2.row("w26_corollary1").holds


def test_compare_other_planner_has_no_card_bounds():
    class LeftToRight:
        name = "l2r"
        needs_schedule = True
        allows_empty = False

        def moves(self, ctx):
            yield sum(1 << j for j in ctx.free[: ctx.size]), 1.0

    p = mt.Joint(make_table(3, 2, 5, "dirichlet"))
    table = B.compare(p, mt.Schedule((2, 1)), planner=LeftToRight())
    assert "riemann" not in table.names and "data_processing" in table.names
    assert table.row("data_processing").holds


def test_compare_errors():
    p = mt.families.repeated(3)
    with pytest.raises(ValueError, match="p"):
        B.compare(mt.information_profile(p), mt.Schedule((3,)))
    with pytest.raises(ValueError, match="plan"):
        B.compare(p, (2, 1))


# -- Bound records and validation ----------------------------------------------------------
def test_bound_holds_semantics():
    up = B.Bound("x", 1.0, "kl", "s", "st")
    assert up.holds(1.0) and up.holds(1.0 + 1e-13) and not up.holds(1.1)
    lo = dataclasses.replace(up, kind=B.LOWER)
    assert lo.holds(1.0) and lo.holds(2.0) and not lo.holds(0.9)
    assert dataclasses.replace(up, value=math.inf).holds(5.0)
    assert up.holds(0.0, scale=1.0)
    assert B.Bound("z", 0.0, "kl", "s", "st").holds(1e-14, scale=1.0)
    assert not B.Bound("z", 0.0, "kl", "s", "st").holds(1e-14)


def test_bound_errors():
    p = mt.families.repeated(4)
    with pytest.raises(ValueError, match="schedule"):
        B.riemann_bound(p, (2, 1))
    with pytest.raises(ValueError, match="max_size"):
        B.lc25_lower_our_reading(p, 0)
    with pytest.raises(ValueError, match="max_size"):
        B.worst_path_kl(p, 5)
    with pytest.raises(ValueError, match="reading"):
        B.lc25_lower_our_reading(p, 2, reading="sideways")
    with pytest.raises(ValueError, match="^status"):
        B.Bound("x", 1.0, "kl", "s", "st", status="refuted")
    with pytest.raises(ValueError, match="^kind"):
        B.Bound("x", 1.0, "kl", "s", "st", kind="both")
    with pytest.raises(ValueError, match="geometric"):
        B.w26_corollary1(p, mt.Grid((0.25, 0.3, 0.75)))
    with pytest.raises(ValueError, match="N >="):
        B.w26_corollary1(p, 1)
    with pytest.raises(ValueError, match="steps"):
        B.w26_proposition1(p, (0.25, 0.75), 2)
    with pytest.raises(ValueError, match="a, b"):
        B.w26_lemma5(p, 3, 2)
    with pytest.raises(ValueError, match="start, stop"):
        B.w26_theorem3(p, 4, start=0.2)


def test_vacuous_factors_are_infinite_not_nan():
    p = mt.families.parity(4)
    assert B.w26_lemma4(p, 0.0, 0.5).value == math.inf
    assert B.w26_lemma5(p, 1, 4).value == math.inf
    assert B.w26_lemma5(p, 3, 4).value == 0.0  # size-1 step: exact, bound 0
    flat = mt.Profile([0.5, 0.5, 0.5])  # independent coordinates: h = 0 exactly
    assert B.w26_lemma4(flat, 0.0, 1.0).value == 0.0  # H = 0: no defect, bound 0
    assert B.w26_theorem1_card(flat, (1, 2)).value == 0.0


def test_bad_scalars_raise_value_errors_naming_the_argument():
    p = mt.families.parity(3)
    cases = [
        (lambda: U.gamma_umask(p, None, 0.5), "^start, stop:"),
        (lambda: U.ugc(p, "a", 0.5), "^start, stop:"),
        (lambda: U.gain(p, "x"), "^t:"),
        (lambda: U.ugc_density(p, "x"), "^lam:"),
        (lambda: B.w26_lemma5(p, None, 3), "^a:"),
        (lambda: B.lc25_lower_our_reading(p, None), "^max_size:"),
        (lambda: B.lc25_lower_our_reading(p, "x"), "^max_size:"),
    ]
    for call, pattern in cases:
        with pytest.raises(ValueError, match=pattern):
            call()


def test_profile_bounds_refuse_increasing_profiles():
    # a cross-entropy profile that increases would give a negative "upper bound"
    prof = mt.Profile([0.1, 0.5, 0.2])
    for bound in (B.riemann_bound, B.lc25_bound):
        with pytest.raises(ValueError, match="^p: the profile increases"):
            bound(prof, (3,))
