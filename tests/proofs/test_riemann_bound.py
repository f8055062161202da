"""Checks of proofs/riemann_bound.md: KL_path(k) <= (k_max - 1)(phi_0 - phi_{d-1})
= ((k_max - 1)/d) sum_i I(X_i; X_-i) <= (k_max - 1) log K, and its equality case."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import xlogy

import mdmtheory as mt
from mdmtheory.bounds import riemann_bound
from mdmtheory.testing import joint_and_schedule, profiles, schedules
from reference import marginal, profile_path_kl


def H(t):
    return float(-np.sum(xlogy(t, t)))


@given(joint_and_schedule(d=(2, 5), K=(2, 3), max_outcomes=81))
def test_riemann_bound_on_joints(case):
    p, sched = case
    t, d = p.table, p.d
    kmax = max(sched.sizes)
    # sum_i I(X_i; X_-i) = sum_i H(X_i) + H(X_-i) - H(X), by hand
    smi = sum(H(marginal(t, {i})) + H(marginal(t, set(range(d)) - {i})) - H(t) for i in range(d))
    phi = mt.information_profile(p).values
    tol = 1e-10 * max(1.0, d * math.log(p.K))
    path = mt.path_kl(p, sched)
    assert path <= (kmax - 1) * (phi[0] - phi[-1]) + tol
    assert abs((kmax - 1) * (phi[0] - phi[-1]) - (kmax - 1) / d * smi) <= tol * kmax
    assert (kmax - 1) / d * smi <= (kmax - 1) * math.log(p.K) + tol
    assert abs(riemann_bound(p, sched).value - (kmax - 1) / d * smi) <= tol * kmax


@st.composite
def profile_and_schedule(draw):
    prof = draw(profiles((1, 10)))
    return prof, draw(schedules(prof.d))


@given(profile_and_schedule())
def test_riemann_bound_on_profiles(case):
    prof, sched = case
    phi = prof.values
    tol = 1e-12 * max(1.0, phi[0]) * prof.d
    path = profile_path_kl(phi, sched.sizes)
    assert abs(mt.path_kl(prof, sched) - path) <= tol
    per_step = sum((k - 1) * (phi[s] - phi[s + k - 1]) for s, k in zip(sched.starts, sched.sizes))
    kmax = max(sched.sizes)
    assert path <= per_step + tol
    assert per_step <= (kmax - 1) * (phi[0] - phi[-1]) + tol
    assert abs(riemann_bound(prof, sched).value - (kmax - 1) * (phi[0] - phi[-1])) <= tol


@given(st.integers(2, 5), st.integers(2, 3), st.data())
def test_riemann_bound_attained_by_repeated_symbol(d, K, data):
    if K**d > 81:
        K = 2
    p = mt.families.repeated(d, K)
    sched = data.draw(schedules(d))
    path = mt.path_kl(p, sched)
    bound = riemann_bound(p, sched).value
    assert abs(path - (sched.sizes[0] - 1) * math.log(K)) <= 1e-12 * d
    if sched.sizes[0] == max(sched.sizes):
        assert abs(path - bound) <= 1e-12 * d
    else:
        assert path < bound - 0.5


def test_monotonicity_is_needed():
    prof = mt.Profile([1.0, 0.0, 1.0])
    sched = mt.Schedule((3,))
    assert profile_path_kl(prof.values, sched.sizes) == 1.0
    assert mt.path_kl(prof, sched) == 1.0
    phi = prof.values
    assert (sched.max_size - 1) * (phi[0] - phi[-1]) == 0.0  # the bound's formula, violated
    with pytest.raises(ValueError, match="^p: the profile increases"):
        riemann_bound(prof, sched)  # so the package refuses non-monotone profiles


def test_step_lemma_symbolic():
    # slack of one step = sum over m of (phi_m - phi_last) >= 0 when phi is non-increasing:
    # (k-1)(phi_s - phi_{s+k-1}) - sum_m (phi_s - phi_m) = sum_{m=s+1}^{s+k-2} (phi_m - phi_{s+k-1})
    for k in range(1, 9):
        phi = sp.symbols(f"phi0:{k}")
        slack = (k - 1) * (phi[0] - phi[k - 1]) - sum(phi[0] - phi[m] for m in range(k))
        assert sp.expand(slack - sum(phi[m] - phi[k - 1] for m in range(1, k - 1))) == 0
        # telescoping across steps: phi_{s_t} - phi_{s_{t+1} - 1} <= phi_{s_t} - phi_{s_{t+1}}
        # (checked numerically in test_riemann_bound_on_profiles)
