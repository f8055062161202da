"""Optimal card schedules, the frontier, optimal Bernoulli grids (mdmtheory.optimal).

References written here: brute force over ALL compositions of d into T parts, the step
cost w(s, e) = (e - s) c(s) recomputed from its definition, P_ugc by quadrature of
sqrt(h') from finite differences of ``ugc.gain``, a brute-force scan over grid points and
over block boundaries.
"""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, optimize

import mdmtheory as mt
from mdmtheory.laws.families import markov_chain_entropy_coefficients
from mdmtheory.information import gain_derivative
from mdmtheory.optimal.card import _envelope_hull, _hull_sequential
from mdmtheory.optimal.grid import _grid_defects, _ugc_cumulative
from mdmtheory.optimal import (
    block_grid,
    block_partition,
    equal_mass_grid,
    lagrangian_frontier,
    optimal_grid,
    optimal_schedule,
    pareto_frontier,
    penalized_schedule,
    schedule_path_kl,
)
from mdmtheory.information import Profile
from mdmtheory.schedules import Grid, Schedule
from mdmtheory.information import gain, gamma_umask
from reference import compositions, profile_path_kl


# -- references ----------------------------------------------------------------------------
def objective(c, sizes):
    """sum_t k_t c(s_t), from the definition."""
    s, total = 0, 0.0
    for k in sizes:
        total += k * c[s]
        s += k
    return total


def brute_force(c):
    """For every T: the least objective over ALL compositions of d into T parts."""
    d = len(c)
    best = {}
    for T in range(1, d + 1):
        best[T] = min(objective(c, sizes) for sizes in compositions(d, T))
    return best


def check_all_T(c, *, methods=("auto", "dp")):
    c = np.asarray(c, dtype=np.float64)
    d = len(c)
    ref = brute_force(c)
    tol = 1e-12 * max(1.0, float(np.abs(c).max())) * d
    for T in range(1, d + 1):
        for method in methods:
            sched = optimal_schedule(c, T, method=method)
            assert sched.d == d and sched.steps == T
            assert objective(c, sched.sizes) == pytest.approx(ref[T], abs=tol)
    return ref


exact_profile_case = st.sampled_from([(seed, alpha) for seed in range(6) for alpha in (0.1, 0.5, 2.0)])


@st.composite
def nonincreasing(draw, d_max=10):
    d = draw(st.integers(1, d_max))
    if draw(st.booleans()):  # integer values: many ties and flat stretches
        v = draw(st.lists(st.integers(0, 4), min_size=d, max_size=d))
    else:
        v = draw(st.lists(st.floats(0, 3, allow_nan=False), min_size=d, max_size=d))
    return np.sort(np.asarray(v, dtype=np.float64))[::-1].copy()


# -- optimal_schedule equals brute force ---------------------------------------------------
@given(nonincreasing())
def test_optimal_schedule_equals_brute_force_nonincreasing(c):
    ref = check_all_T(c, methods=("auto", "envelope", "dp"))
    fr = pareto_frontier(c, len(c))
    assert fr.method == "envelope"
    total = float(np.sum(c))
    for T in range(1, len(c) + 1):
        sched = fr.schedule(T)
        assert sched.steps == T
        assert objective(c, sched.sizes) == pytest.approx(ref[T], abs=1e-11)
        assert fr.path_kl[T - 1] == pytest.approx(profile_path_kl(c, sched.sizes), abs=1e-12)
        assert fr.path_kl[T - 1] == pytest.approx(ref[T] - total, abs=1e-11)


@given(st.lists(st.floats(-1, 3, allow_nan=False), min_size=1, max_size=10))
def test_optimal_schedule_equals_brute_force_any_profile(values):
    """Not non-increasing: no Monge structure, the exact DP is used and still optimal."""
    c = np.asarray(values)
    check_all_T(c, methods=("auto",))
    fr = pareto_frontier(c, len(c))
    ref = brute_force(c)
    for T in range(1, len(c) + 1):
        assert objective(c, fr.schedule(T).sizes) == pytest.approx(ref[T], abs=1e-11)


@given(exact_profile_case)
def test_optimal_schedule_on_exact_profiles_of_random_joints(case):
    seed, alpha = case
    prof = mt.information_profile(mt.families.dirichlet(6, 2, alpha, seed=seed))
    c = prof.values
    ref = check_all_T(c)
    fr = pareto_frontier(prof, 6)
    for T in range(1, 7):
        sched = optimal_schedule(prof, T)
        assert mt.path_kl(prof, sched) == pytest.approx(fr.path_kl[T - 1], abs=1e-12)
        assert fr.path_kl[T - 1] == pytest.approx(ref[T] - prof.entropy, abs=1e-11)


def test_optimal_schedule_on_markov_profile_d10():
    c = np.diff(markov_chain_entropy_coefficients([[0.8, 0.2], [0.35, 0.65]], 10))
    check_all_T(c)


def test_non_monotone_profile_uses_dp_and_envelope_refuses():
    c = np.array([0.2, 0.9, 0.1, 0.5, 0.05])
    assert pareto_frontier(c, 5).method == "dp"
    with pytest.raises(ValueError, match="non-increasing"):
        optimal_schedule(c, 3, method="envelope")
    # why: with a rising profile more steps can cost more, so "at most T steps" (the
    # envelope's shortcut) is not "exactly T steps"
    ref = brute_force([0.1, 1.0, 1.0])
    assert ref[1] == pytest.approx(0.3) and ref[2] == pytest.approx(1.2) and ref[3] == pytest.approx(2.1)
    assert optimal_schedule([0.1, 1.0, 1.0], 2).sizes == (2, 1)


def test_rounding_noise_still_uses_the_fast_path():
    c = np.array([1.0, 0.5, 0.5 + 1e-17, 0.5, 0.2, 0.2 + 4e-17, 0.0])
    assert pareto_frontier(c, 7).method == "envelope"
    check_all_T(c, methods=("auto",))


def test_flat_profile_any_schedule_is_optimal():
    c = np.full(8, 0.7)
    for T in range(1, 9):
        s = optimal_schedule(c, T)
        assert s.steps == T and schedule_path_kl(c, s) == 0.0


# -- Monge -----------------------------------------------------------------------------------
def w(c, s, e):
    return (e - s) * c[s]


@given(nonincreasing(d_max=12), st.data())
def test_monge_inequality_holds_for_nonincreasing_profiles(c, data):
    d = len(c)
    a, b, cc, e = sorted(data.draw(st.lists(st.integers(0, d), min_size=4, max_size=4)))
    if b == d:  # w(b, .) needs b <= d - 1 unless the step is empty
        return
    assert w(c, a, cc) + w(c, b, e) <= w(c, a, e) + w(c, b, cc) + 1e-12


def test_monge_inequality_fails_for_an_increasing_profile():
    c = [0.1, 0.5, 0.2]
    a, b, cc, e = 0, 1, 2, 3
    lhs = w(c, a, cc) + w(c, b, e)  # 2 * 0.1 + 2 * 0.5 = 1.2
    rhs = w(c, a, e) + w(c, b, cc)  # 3 * 0.1 + 1 * 0.5 = 0.8
    assert lhs == pytest.approx(1.2) and rhs == pytest.approx(0.8)
    assert lhs > rhs


@given(nonincreasing(d_max=12))
def test_frontier_is_convex_and_nonincreasing(c):
    fr = pareto_frontier(c, len(c))
    v = fr.path_kl
    tol = 1e-12 * max(1.0, float(np.abs(c).max())) * len(c)
    assert np.all(np.diff(v) <= tol)
    assert np.all(v[:-2] + v[2:] - 2 * v[1:-1] >= -tol)
    assert v[-1] == pytest.approx(0.0, abs=tol)
    pen = fr.penalties
    assert np.all(pen[:, 0] <= pen[:, 1] + tol)


@given(st.integers(3, 40), st.integers(0, 10**6), st.integers(0, 3))
def test_hull_pruning_rounds_and_sequential_fallback_give_the_envelope(n, seed, max_rounds):
    """Both hull routines evaluate to the brute-force lower envelope min_s A(s) + x c(s)."""
    rng = np.random.default_rng(seed)
    c = np.sort(rng.choice(np.arange(1, 10 * n), size=n, replace=False))[::-1] / n  # strictly decreasing
    A = rng.normal(size=n) * rng.choice([0.01, 1.0, 100.0])
    xs = np.arange(0, 3 * n)
    ref = np.min(A[None, :] + xs[:, None] * c[None, :], axis=1)
    for idx in (_envelope_hull(A, c, np.arange(n), max_rounds=max_rounds), _hull_sequential(A, c, np.arange(n))):
        assert idx[0] == 0 and idx[-1] == n - 1 and np.all(np.diff(idx) > 0)
        got = np.min(A[idx][None, :] + xs[:, None] * c[idx][None, :], axis=1)
        assert np.allclose(got, ref, rtol=0, atol=1e-12 * max(1.0, float(np.abs(A).max()) + 3 * n * c[0]))


# -- frontier: per-T DP and Lagrangian -----------------------------------------------------
@given(nonincreasing(d_max=16), st.integers(1, 16))
def test_pareto_frontier_agrees_with_per_T_dp_and_lagrangian(c, T_max):
    d = len(c)
    T_max = min(T_max, d)
    fr = pareto_frontier(c, T_max)
    lf = lagrangian_frontier(c, T_max)
    tol = 1e-11 * max(1.0, float(np.abs(c).max())) * d
    for T in range(1, T_max + 1):
        dp = optimal_schedule(c, T, method="dp")
        assert fr.path_kl[T - 1] == pytest.approx(schedule_path_kl(c, dp), abs=tol)
    assert np.allclose(fr.path_kl, lf.path_kl, atol=tol)
    for T, sched in zip(lf.vertices, lf.vertex_schedules):
        assert sched.steps == T
        assert schedule_path_kl(c, sched) == pytest.approx(fr.path_kl[T - 1], abs=tol)


def test_penalized_schedule_minimizes_the_lagrangian():
    c = np.diff(markov_chain_entropy_coefficients([[0.9, 0.1], [0.2, 0.8]], 40))
    fr = pareto_frontier(c, 40)
    for lam in (0.0, 1e-4, 1e-3, 1e-2, 1.0):
        sched = penalized_schedule(c, lam)
        best = np.min(fr.path_kl + lam * fr.steps)
        assert schedule_path_kl(c, sched) + lam * sched.steps == pytest.approx(best, abs=1e-12)


def test_frontier_on_a_larger_profile_matches_dp():
    c = (np.arange(300) + 1.0) ** -1.0  # power law: hull pruning rounds are exercised
    fr = pareto_frontier(c, 40)
    for T in (1, 2, 7, 23, 40):
        dp = optimal_schedule(c, T, method="dp")
        assert fr.path_kl[T - 1] == pytest.approx(schedule_path_kl(c, dp), rel=1e-10, abs=1e-14)


def test_schedule_path_kl_matches_package_path_kl():
    prof = Profile(np.diff(markov_chain_entropy_coefficients([[0.7, 0.3], [0.4, 0.6]], 9)))
    for sched in (Schedule((2, 3, 4)), Schedule.constant(9, 4), optimal_schedule(prof, 5)):
        assert schedule_path_kl(prof, sched) == pytest.approx(mt.path_kl(prof, sched), abs=1e-14)


def test_arguments_are_validated():
    with pytest.raises(ValueError, match="steps"):
        optimal_schedule([0.3, 0.2], 3)
    with pytest.raises(ValueError, match="steps"):
        optimal_schedule([0.3, 0.2], 0)
    with pytest.raises(ValueError, match="method"):
        optimal_schedule([0.3, 0.2], 1, method="smawk")
    with pytest.raises(ValueError, match="max_steps"):
        pareto_frontier([0.3, 0.2], 5)
    with pytest.raises(ValueError, match="profile"):
        optimal_schedule([0.3, np.nan], 1)
    with pytest.raises(ValueError, match="penalty"):
        penalized_schedule([0.3, 0.2], -1.0)
    with pytest.raises(ValueError, match="non-increasing"):
        lagrangian_frontier([0.1, 0.3], 2)


# -- Bernoulli grids -----------------------------------------------------------------------
def markov_profile(d=5):
    return Profile.from_entropy_coefficients(markov_chain_entropy_coefficients([[0.9, 0.1], [0.3, 0.7]], d))


def hprime_fd(prof, t, h=1e-5):
    return (gain(prof, np.array(t + h)) - gain(prof, np.array(t - h))) / (2 * h)


def test_gain_derivative_and_ugc_helpers():
    prof = markov_profile(6)
    t = np.linspace(0.05, 0.95, 7)
    assert np.allclose(gain_derivative(prof, t), [hprime_fd(prof, x) for x in t], rtol=1e-7)
    tau = np.array([0.1, 0.3, 0.55, 0.9])
    cum = _ugc_cumulative(prof, tau)
    for i in range(1, 4):  # H(a, b) = int t(1-t) h'(t) dt, by quadrature of the finite difference
        ref = integrate.quad(lambda x: x * (1 - x) * hprime_fd(prof, x), tau[0], tau[i], epsabs=1e-12)[0]
        assert cum[i] == pytest.approx(ref, rel=1e-7)
    grid = np.array([0.0, 0.2, 0.5, 1.0])
    ref = [gamma_umask(prof, grid[j], grid[j + 1]) for j in range(3)]
    assert np.allclose(_grid_defects(prof, grid), ref, rtol=1e-12, atol=1e-16)


def test_optimal_grid_one_interior_point_matches_a_scan():
    prof = markov_profile(5)
    a, b = 0.2, 0.8
    g = optimal_grid(prof, 2, start=a, stop=b)
    err = lambda x: gamma_umask(prof, a, x) + gamma_umask(prof, x, b)  # noqa: E731
    xs = np.linspace(a, b, 201)[1:-1]
    i = int(np.argmin([err(x) for x in xs]))
    ref = optimize.minimize_scalar(err, bounds=(xs[max(i - 1, 0)], xs[min(i + 1, len(xs) - 1)]),
                                   method="bounded", options={"xatol": 1e-10})
    assert g.times[1] == pytest.approx(ref.x, abs=1e-6)
    assert mt.path_kl(prof, g) <= ref.fun + 1e-13


def test_optimal_grid_is_stationary_and_beats_the_starts():
    prof = markov_profile(5)
    N = 12
    g = optimal_grid(prof, N)
    t = np.asarray(g.times)
    assert t[0] == 0.2 and t[-1] == 0.8
    err = mt.path_kl(prof, g)
    assert err <= mt.path_kl(prof, equal_mass_grid(prof, N)) + 1e-15
    assert err < mt.path_kl(prof, Grid.uniform(N, 0.2, 0.8))
    # stationarity: h(t_j) - h(t_{j-1}) = (t_{j+1} - t_j) h'(t_j)
    h = gain(prof, t)
    res = (h[1:-1] - h[:-2]) - (t[2:] - t[1:-1]) * np.array([hprime_fd(prof, x) for x in t[1:-1]])
    assert np.max(np.abs(res)) < 1e-6 * np.max(h)


def test_equal_mass_grid_has_equal_sqrt_hprime_mass():
    prof = markov_profile(5)
    g = equal_mass_grid(prof, 5)
    masses = [
        integrate.quad(lambda x: math.sqrt(max(hprime_fd(prof, x), 0)), g.times[j], g.times[j + 1], epsabs=1e-12)[0]
        for j in range(5)
    ]
    assert np.allclose(masses, np.mean(masses), rtol=1e-5)
    with pytest.raises(ValueError, match="h' vanishes"):
        equal_mass_grid(Profile(np.full(4, 0.5)), 3)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: markov_profile(5), id="markov-5bit"),
        pytest.param(lambda: mt.information_profile(mt.families.dirichlet(6, 2, 1.0, seed=3)), id="dirichlet-6"),
    ],
)
def test_theorem3_n_times_optimal_error_converges_to_half_p_ugc(make):
    """W26 Theorem 3: N * (optimal N-step error on [1/d, 1 - 1/d]) -> P_ugc / 2,
    P_ugc = (int_{1/d}^{1-1/d} sqrt(h'(t)) dt)^2 (exact init and completion)."""
    prof = make()
    d = prof.d
    a, b = 1 / d, 1 - 1 / d
    P = integrate.quad(lambda x: math.sqrt(max(hprime_fd(prof, x), 0.0)), a, b, epsabs=1e-13, limit=200)[0] ** 2
    gaps = []
    for N in (8, 16, 32, 64):
        g = optimal_grid(prof, N)
        assert g.times[0] == a and g.times[-1] == b
        gaps.append(abs(N * mt.path_kl(prof, g) - P / 2))
    assert all(g2 < 0.7 * g1 for g1, g2 in zip(gaps, gaps[1:]))  # decreasing, about like 1/N
    assert gaps[-1] < 0.01 * P / 2


def test_block_partition_matches_brute_force():
    prof = markov_profile(5)
    M = 10
    lam = np.linspace(math.log(0.25), math.log(4.0), M + 1)
    tau = 1 / (1 + np.exp(-lam))

    def H(i, j):
        return integrate.quad(lambda x: x * (1 - x) * hprime_fd(prof, x), tau[i], tau[j], epsabs=1e-13)[0]

    Hm = {(i, j): H(i, j) for i in range(M + 1) for j in range(i + 1, M + 1)}
    for K in (1, 2, 3):
        best = min(
            sum(math.sqrt((lam[j] - lam[i]) * Hm[i, j]) for i, j in zip((0, *cuts), (*cuts, M))) ** 2
            for cuts in itertools.combinations(range(1, M), K - 1)
        )
        part = block_partition(prof, K, resolution=M)
        assert part.blocks == K
        assert part.complexity == pytest.approx(best, rel=1e-6)
        assert np.allclose(part.edges[[0, -1]], [0.2, 0.8])


def test_block_grid_meets_proposition1():
    prof = markov_profile(5)
    for N in (20, 40, 80):
        g, part = block_grid(prof, N)
        assert g.steps <= N
        err = mt.path_kl(prof, g)
        assert err <= 4 * part.complexity / N  # W26 Proposition 1 (boundary terms are 0 here)
        assert part.complexity >= integrate.quad(
            lambda x: math.sqrt(max(hprime_fd(prof, x), 0.0)), 0.2, 0.8, epsabs=1e-13
        )[0] ** 2 * (1 - 1e-6)  # C(P) >= P_ugc (Cauchy-Schwarz)
    with pytest.raises(ValueError, match="Proposition 1"):
        block_grid(prof, 8)
