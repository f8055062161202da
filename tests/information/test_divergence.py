"""Tests of mdmtheory.information.divergence: kl (support rules, accuracy), path_kl, step_path_kl.

References written here: KL summed term by term with math.log, its Taylor expansion for
tiny perturbations, and the closed forms of docs/theory.md §6 for the repeated symbol and the
parity law (derived below from the profile identity and checked against the exact engine).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mdmtheory.information import kl, path_kl, step_path_kl
from mdmtheory.information import entropy
from mdmtheory.laws import Joint
from mdmtheory.information import Profile, information_profile
from mdmtheory.samplers.engine import exact_run
from mdmtheory.schedules import Grid, Schedule
from reference import compositions, random_table

LOG2 = math.log(2.0)
TOL = 1e-12


def brute_kl(P, Q) -> float:
    total = 0.0
    for a, b in zip(np.ravel(P), np.ravel(Q)):
        if a > 0:
            if b == 0:
                return math.inf
            total += a * math.log(a / b)
    return total


def repeated_table(K, d):
    table = np.zeros((K,) * d)
    for v in range(K):
        table[(v,) * d] = 1 / K
    return table


def parity_table(d):
    table = np.zeros((2,) * d)
    for x in itertools.product((0, 1), repeat=d - 1):
        table[x + (sum(x) % 2,)] = 2.0 ** -(d - 1)
    return table


# -- kl: support rules and accuracy ------------------------------------------------------
def test_kl_matches_term_by_term_sum():
    for seed, (K, d) in enumerate([(2, 3), (3, 3), (4, 2), (2, 5)]):
        P = random_table(K, d, seed, zeros=0.3)
        Q = random_table(K, d, seed + 50)
        assert kl(Joint(P), Joint(Q)) == pytest.approx(brute_kl(P, Q), rel=1e-13, abs=1e-15)


def test_kl_support_rules():
    P = np.array([[0.5, 0.0], [0.5, 0.0]])
    Q = np.array([[0.25, 0.0], [0.25, 0.5]])
    # p = 0 where q = 0 and where q > 0: both terms 0
    assert kl(Joint(P), Joint(Q)) == pytest.approx(math.log(2.0), abs=1e-15)
    # q = 0 < p: infinite
    assert kl(Joint(Q), Joint(P)) == math.inf
    # identical laws: exactly 0, also with zeros
    assert kl(Joint(P), Joint(P)) == 0.0


def test_kl_against_sub_normalized_q():
    """q with lost mass: KL(p||q) = sum p log(p/q), no renormalization of q."""
    P = np.array([0.5, 0.5])
    q = Joint([0.25, 0.5], lost=0.25)
    assert kl(Joint(P), q) == pytest.approx(0.5 * math.log(2.0), abs=1e-15)


def test_tiny_kl_exact_perturbation():
    """p and q = p + delta on a dyadic grid (both exact in float64, sum delta = 0 exactly):

    KL = sum_x [delta^2/(2p) - delta^3/(3p^2) + delta^4/(4p^3)] + O(delta^5); with
    delta/p ~ 1e-9 the result (~1e-18) must be accurate to ~1e-9 relative, which a sum of
    x log(x/y) terms (each ~1e-10, cancelling) cannot achieve.
    """
    rng = np.random.default_rng(7)
    N = 1 << 20
    counts = rng.integers(1000, 100000, size=27).astype(float)
    P = np.floor(counts / counts.sum() * N)
    P[-1] += N - P.sum()
    P /= N
    m = rng.integers(-100, 101, size=27)
    m[-1] -= m.sum()
    delta = m * 2.0**-40
    Q = P + delta
    assert np.array_equal(Q - P, delta) and P.sum() == 1.0 and Q.sum() == 1.0
    expect = np.sum(delta**2 / (2 * P) - delta**3 / (3 * P**2) + delta**4 / (4 * P**3))
    got = kl(Joint(P.reshape(3, 3, 3)), Joint(Q.reshape(3, 3, 3)))
    assert expect > 0
    assert got == pytest.approx(expect, rel=1e-8, abs=0)


def test_tiny_kl_random_perturbation():
    """p vs p(1 + 1e-9 z): the stored q need not sum exactly to 1, so the expansion keeps
    its first-order term: KL = -sum delta + sum delta^2/(2p) - sum delta^3/(3p^2) + ...,
    with delta = q - p computed exactly (Sterbenz)."""
    rng = np.random.default_rng(11)
    for _ in range(5):
        P = rng.dirichlet(np.ones(32))
        z = rng.standard_normal(32)
        z -= np.sum(P * z)
        Q = P * (1 + 1e-9 * z)
        delta = Q - P
        expect = -np.sum(delta) + np.sum(delta**2 / (2 * P) - delta**3 / (3 * P**2))
        got = kl(Joint(P.reshape((2,) * 5)), Joint(Q.reshape((2,) * 5)))
        # a rounding-level negative sum is returned as 0 (kl's documented clipping)
        assert got == pytest.approx(max(expect, 0.0), rel=1e-6, abs=1e-24)
        second_order = 0.5 * np.sum(delta**2 / P)
        assert 1e-20 < second_order < 1e-16  # the regime this test is about


# -- path KL: definitions and closed forms -------------------------------------------------
def test_path_kl_of_a_hand_profile():
    phi = Profile([3.0, 2.0, 1.5, 1.0])
    # sum_t sum_{m = s_t}^{s_t + k_t - 1} (phi_{s_t} - phi_m), by hand
    assert path_kl(phi, Schedule((2, 2))) == pytest.approx((3 - 2) + (1.5 - 1), abs=1e-15)
    np.testing.assert_allclose(step_path_kl(phi, Schedule((2, 2))), [1.0, 0.5])
    np.testing.assert_allclose(step_path_kl(phi, Schedule((1, 3))), [0.0, 0.5 + 1.0])
    assert path_kl(phi, Schedule((4,))) == pytest.approx(4 * 3 - 7.5, abs=1e-15)
    assert path_kl(phi, (1, 1, 1, 1)) == 0.0  # a plain sequence of sizes is accepted


@pytest.mark.parametrize("K,d", [(2, 3), (2, 5), (3, 4), (4, 3)])
def test_repeated_symbol_schedules(K, d):
    """phi = (log K, 0, ..., 0): path KL = sum_t k_t phi_{s_t} - log K = (k_1 - 1) log K.

    The sampler: the first step draws k_1 independent uniform tokens; they agree with
    probability K^{-(k_1 - 1)}, after which everything is copied; otherwise (T >= 2) the
    prefix is unreachable and its mass is lost. So q(v...v) = K^{-k_1} and
    KL(p||q) = (k_1 - 1) log K = path KL.
    """
    p = Joint(repeated_table(K, d))
    for sizes in {c for n in range(1, d + 1) for c in compositions(d, n)}:
        k1 = sizes[0]
        run = exact_run(p, Schedule(sizes), trajectory=True)
        assert path_kl(p, Schedule(sizes)) == pytest.approx((k1 - 1) * math.log(K), abs=TOL)
        assert run.path_kl == pytest.approx((k1 - 1) * math.log(K), abs=TOL)
        assert kl(p, run.law) == pytest.approx((k1 - 1) * math.log(K), abs=TOL)
        diag = [run.law.table[(v,) * d] for v in range(K)]
        np.testing.assert_allclose(diag, K**-k1, atol=1e-15)
        expect_lost = 1 - K ** -(k1 - 1) if len(sizes) > 1 else 0.0
        assert run.lost == pytest.approx(expect_lost, abs=TOL)


@pytest.mark.parametrize("d", [2, 3, 4, 5])
def test_parity_schedules(d):
    """phi = (log 2, ..., log 2, 0): path KL = (d - [k_T = 1]) log 2 - (d-1) log 2 =
    log 2 if the last step reveals >= 2 tokens, else 0.

    The sampler: any d-1 positions are i.i.d. uniform, so every step before a final step
    of size >= 2 draws uniform tokens: q is uniform on {0,1}^d and KL = log 2. With a
    final step of size 1, q = p exactly.
    """
    p = Joint(parity_table(d))
    for n in range(1, d + 1):
        for sizes in compositions(d, n):
            expect = LOG2 if sizes[-1] >= 2 else 0.0
            run = exact_run(p, Schedule(sizes), trajectory=True)
            assert path_kl(p, Schedule(sizes)) == pytest.approx(expect, abs=TOL)
            assert run.path_kl == pytest.approx(expect, abs=TOL)
            assert kl(p, run.law) == pytest.approx(expect, abs=TOL)
            assert run.lost == 0.0


@pytest.mark.parametrize("K,d", [(2, 3), (3, 4), (2, 5)])
def test_repeated_symbol_grids(K, d):
    """h(t) = d log K (1 - (1-t)^{d-1}), so Gamma_umask(a, b) = int_a^b h(u) - h(a) du
    = d log K [(1-a)^{d-1} (b - a) - ((1-a)^d - (1-b)^d)/d]."""
    p = Joint(repeated_table(K, d))
    for times in [(0.0, 1.0), (0.0, 0.3, 1.0), (0.1, 0.5, 0.8), (0.2, 0.4, 0.6, 0.9)]:
        gam = [
            d * math.log(K) * ((1 - a) ** (d - 1) * (b - a) - ((1 - a) ** d - (1 - b) ** d) / d)
            for a, b in zip(times[:-1], times[1:])
        ]
        np.testing.assert_allclose(step_path_kl(p, Grid(times)), gam, rtol=1e-12, atol=TOL)
        run = exact_run(p, Grid(times), trajectory=True)
        np.testing.assert_allclose(run.step_kl[1 : len(times)], gam, rtol=1e-12, atol=TOL)


@pytest.mark.parametrize("d", [2, 3, 5])
def test_parity_grids(d):
    """h(t) = d log 2 t^{d-1}: Gamma_umask(a, b) = d log 2 [(b^d - a^d)/d - a^{d-1}(b - a)]."""
    p = Joint(parity_table(d))
    for times in [(0.0, 1.0), (0.0, 0.5, 1.0), (0.1, 0.3, 0.7, 0.95)]:
        gam = [
            d * LOG2 * ((b**d - a**d) / d - a ** (d - 1) * (b - a))
            for a, b in zip(times[:-1], times[1:])
        ]
        np.testing.assert_allclose(step_path_kl(p, Grid(times)), gam, rtol=1e-12, atol=TOL)
        run = exact_run(p, Grid(times), trajectory=True)
        np.testing.assert_allclose(run.step_kl[1 : len(times)], gam, rtol=1e-12, atol=TOL)


def test_path_kl_accepts_profile_and_joint_alike():
    p = Joint(random_table(3, 4, 3, zeros=0.2))
    prof = information_profile(p)
    for plan in (Schedule((2, 1, 1)), Schedule((1, 3)), Grid((0.0, 0.4, 1.0)), Grid((0.2, 0.9))):
        assert path_kl(prof, plan) == path_kl(p, plan)
        np.testing.assert_array_equal(step_path_kl(prof, plan), step_path_kl(p, plan))


# -- identities on random joints -----------------------------------------------------------
@given(
    K=st.integers(2, 3),
    d=st.integers(1, 5),
    seed=st.integers(0, 2**32 - 1),
    zeros=st.sampled_from([0.0, 0.5]),
    alpha=st.sampled_from([0.02, 0.5, 2.0]),
    data=st.data(),
)
def test_path_kl_identities(K, d, seed, zeros, alpha, data):
    p = Joint(random_table(K, d, seed, zeros=zeros, alpha=alpha))
    prof = information_profile(p)
    phi = prof.values
    cuts = sorted(data.draw(st.sets(st.integers(1, d - 1), max_size=d - 1))) if d > 1 else []
    sizes = tuple(np.diff([0] + cuts + [d]).tolist())
    sched = Schedule(sizes)
    steps = step_path_kl(p, sched)
    assert np.all(steps >= -TOL)
    starts = [0] + cuts
    assert steps.sum() == pytest.approx(
        sum(k * phi[s] for s, k in zip(starts, sizes)) - entropy(p), abs=1e-11
    )
    assert path_kl(p, sched) == pytest.approx(steps.sum(), abs=1e-15)
    # refining a step (splitting it in two) never increases the path KL
    t = data.draw(st.integers(0, len(sizes) - 1))
    if sizes[t] > 1:
        cut = data.draw(st.integers(1, sizes[t] - 1))
        finer = sizes[:t] + (cut, sizes[t] - cut) + sizes[t + 1 :]
        assert path_kl(p, Schedule(finer)) <= path_kl(p, sched) + TOL
    # the Bernoulli analogue: adding a time to a grid never increases the path KL
    grid = Grid((0.0, 0.5, 1.0))
    assert path_kl(prof, Grid((0.0, 0.25, 0.5, 1.0))) <= path_kl(prof, grid) + TOL
    assert path_kl(prof, grid) <= path_kl(prof, Grid((0.0, 1.0))) + TOL
