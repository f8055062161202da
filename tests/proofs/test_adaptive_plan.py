"""Checks of proofs/adaptive_plan.md: Bellman optimality of the adaptive recursion, the chain
below PB25's optima, equality at T <= 2, monotonicity in T and the two-plan budget mixture,
on random small laws (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import mdmtheory as mt
from mdmtheory.bounds.pb25 import pb25_input_dependent_lower, pb25_optimal_lower
from mdmtheory.optimal import AdaptivePlanner, adaptive_plan
from mdmtheory.testing import joints

SMALL = joints(d=(2, 4), K=(2, 3), max_outcomes=81)


def _random_plan(d, K, T, rng):
    """A random deterministic T-step plan: per steps left t and state, a random feasible set."""
    pols = []
    for t in range(1, T + 1):
        pol = np.zeros((K + 1,) * d, dtype=np.int64)
        for idx in np.ndindex(*pol.shape):
            masked = [j for j in range(d) if idx[j] == K]
            m = len(masked)
            if m < t:
                continue
            size = m if t == 1 else int(rng.integers(1, m - t + 2))
            pol[idx] = sum(1 << int(j) for j in rng.choice(masked, size, replace=False))
        pols.append(pol)
    return AdaptivePlanner(pols, d, K, T)


@settings(max_examples=12, deadline=None)
@given(p=SMALL, T=st.integers(1, 4), seed=st.integers(0, 2**31 - 1))
def test_bellman_beats_random_plans(p, T, seed):
    T = min(T, p.d)
    r = adaptive_plan(p, steps=T)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        other = mt.exact_run(p, None, _random_plan(p.d, p.K, T, rng), trajectory=True).path_kl
        assert r.path_kl <= other + 1e-12


@settings(max_examples=12, deadline=None)
@given(p=SMALL, T=st.integers(1, 3))
def test_chain_and_equality(p, T):
    T = min(T, p.d)
    a = adaptive_plan(p, steps=T).path_kl
    c = adaptive_plan(p, steps=T, actions="confidence").path_kl
    fixed = pb25_optimal_lower(p, T).value
    assert a <= fixed + 1e-12 and a <= c + 1e-12
    if T <= 2:
        assert abs(a - fixed) <= 1e-12
    if p.d >= 3 and T <= p.d - 1:
        ag = adaptive_plan(p, steps=T, given=[0]).path_kl
        inp = pb25_input_dependent_lower(p, T, [0]).value
        assert ag <= inp + 1e-12 <= pb25_optimal_lower(p, T, [0]).value + 2e-12
        if T <= 2:
            assert abs(ag - inp) <= 1e-12


@settings(max_examples=12, deadline=None)
@given(p=SMALL)
def test_monotone_in_steps(p):
    v = [adaptive_plan(p, steps=T).path_kl for T in range(1, p.d + 1)]
    assert all(x >= y - 1e-12 for x, y in zip(v, v[1:]))
    assert abs(v[-1]) <= 1e-12
    assert abs(v[0] - mt.bounds.pb25.conditional_total_correlation(p, range(p.d))) <= 1e-12


@settings(max_examples=5, deadline=None)
@given(p=joints(d=(3, 4), K=(2, 2)), F=st.floats(1.0, 4.0))
def test_budget_mixture_on_the_hull(p, F):
    F = min(F, float(p.d))
    r = adaptive_plan(p, forwards=F)
    assert r.path_forwards <= F + 1e-9
    # below every feasible deterministic penalized optimum and every feasible exact-steps plan
    for lam in (0.0, 0.1):
        q = adaptive_plan(p, penalty=lam)
        if q.path_forwards <= F + 1e-12:
            assert r.path_kl <= q.path_kl + 1e-9
    assert r.path_kl <= adaptive_plan(p, steps=int(F)).path_kl + 1e-9
    # and on the Lagrangian at the multiplier found: as good as the penalized optimum there
    q = adaptive_plan(p, penalty=r.penalty)
    assert r.path_kl + r.penalty * r.path_forwards <= q.path_kl + r.penalty * q.path_forwards + 1e-9
