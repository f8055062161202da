"""Prompt-conditioned laws and profiles (issue 18 §1, exact side).

References: the conditioned table sliced by hand from the dense table, the profile by
enumeration (tests/reference.py), and the random-order sampler's law by enumerating every
permutation of the response positions — none of them goes through mdmtheory.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mdmtheory as mt
from mdmtheory.laws import prompt_law
from mdmtheory.samplers import prompted_kl
from mdmtheory.testing import joints

from reference import brute_profile, compositions, subset_entropy


def _slice(table, G, v):
    """p(x_R | x_G = v) by indexing the dense table (R in increasing order)."""
    idx = [slice(None)] * table.ndim
    for i, t in zip(G, v):
        idx[i] = t
    sub = table[tuple(idx)]
    return sub / sub.sum()


def _prompts(table, G):
    for v in itertools.product(range(table.shape[0]), repeat=len(G)):
        idx = [slice(None)] * table.ndim
        for i, t in zip(G, v):
            idx[i] = t
        w = float(table[tuple(idx)].sum())
        if w > 0:
            yield v, w


def _brute_random_order_law(table, sizes):
    """Law of the random-order factorized sampler by enumerating all orders (d! terms)."""
    d, K = table.ndim, table.shape[0]
    q = np.zeros_like(table)
    perms = list(itertools.permutations(range(d)))
    for x in itertools.product(range(K), repeat=d):
        total = 0.0
        for perm in perms:
            prob, start = 1.0, 0
            for k in sizes:
                A, B = perm[:start], perm[start:start + k]
                for j in B:
                    # p(x_j | x_A) from the table
                    idx = [slice(None)] * d
                    for i in A:
                        idx[i] = x[i]
                    sub = table[tuple(idx)]
                    keep = [a for a in range(d) if a not in A]
                    axis = keep.index(j)
                    other = tuple(a for a in range(sub.ndim) if a != axis)
                    m = sub.sum(axis=other) if other else sub
                    prob *= m[x[j]] / m.sum() if m.sum() > 0 else 0.0
                start += k
            total += prob
        q[x] = total / len(perms)
    return q


def _brute_kl(p, q):
    return sum(a * math.log(a / b) for a, b in zip(p.ravel(), q.ravel()) if a > 0)


prompted_cases = joints(d=(2, 4), K=(2, 3), max_outcomes=81).flatmap(
    lambda p: st.tuples(st.just(p), st.sets(st.integers(0, p.d - 1), min_size=1, max_size=p.d - 1).map(sorted))
)


@settings(max_examples=40, deadline=None)
@given(prompted_cases)
def test_condition_is_the_sliced_table(case):
    p, G = case
    for v, w in _prompts(p.table, G):
        np.testing.assert_allclose(p.condition(G, v).table, _slice(p.table, G, v), rtol=1e-12, atol=1e-15)


@settings(max_examples=40, deadline=None)
@given(prompted_cases)
def test_prompted_profile_is_the_average_of_conditioned_profiles(case):
    """φ^G = Σ_v p(v) φ(p(·|v)) (brute-force enumeration of each conditioned profile);
    non-increasing; sums to H(X_R | X_G) = H(X) − H(X_G)."""
    p, G = case
    want = sum(w * brute_profile(_slice(p.table, G, v)) for v, w in _prompts(p.table, G))
    got = mt.information_profile(p, given=G)
    np.testing.assert_allclose(got.values, want, rtol=1e-9, atol=1e-12)
    assert got.is_nonincreasing(0.0)
    H_cond = subset_entropy(p.table, range(p.d)) - subset_entropy(p.table, G)
    assert got.entropy == pytest.approx(H_cond, rel=1e-9, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(prompted_cases)
def test_prompted_path_kl_is_the_prompt_average(case):
    """Path KL is linear in φ: on the prompted profile it is the prompt average of each
    prompt's path KL, which is also the exact engine's trajectory KL prompt by prompt."""
    p, G = case
    n = p.d - len(G)
    prof = mt.information_profile(p, given=G)
    for sizes in compositions(n):
        s = mt.Schedule(sizes)
        want = 0.0
        for v, w in _prompts(p.table, G):
            phi = brute_profile(_slice(p.table, G, v))
            starts = np.cumsum((0,) + sizes[:-1])
            want += w * (sum(k * phi[a] for a, k in zip(starts, sizes)) - phi.sum())
        assert mt.path_kl(prof, s) == pytest.approx(want, rel=1e-9, abs=1e-12)
        traj = sum(w * mt.exact_run(p.condition(G, v), s, trajectory=True).path_kl for v, w in prompt_law(p, G))
        assert traj == pytest.approx(want, rel=1e-9, abs=1e-12)


@settings(max_examples=15, deadline=None)
@given(prompted_cases)
def test_prompted_kl_against_enumerated_orders(case):
    """prompted_kl = Σ_v p(v) KL(p(·|v) ‖ q(·|v)) with q by enumeration of all orders;
    ≤ the prompted path KL; T = 1 gives the mean total correlation of the response."""
    p, G = case
    n = p.d - len(G)
    prof = mt.information_profile(p, given=G)
    for sizes in compositions(n):
        want = 0.0
        for v, w in _prompts(p.table, G):
            c = _slice(p.table, G, v)
            want += w * _brute_kl(c, _brute_random_order_law(c, sizes))
        got = prompted_kl(p, mt.Schedule(sizes), given=G)
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
        assert got <= mt.path_kl(prof, mt.Schedule(sizes)) + 1e-12
        if len(sizes) == 1:  # one step: KL = path KL = TC of the response, averaged
            assert got == pytest.approx(mt.path_kl(prof, mt.Schedule(sizes)), rel=1e-9, abs=1e-12)


def test_closed_forms():
    """Repeated bit: any prompt position determines the response (φ^G ≡ 0). Parity on d
    bits with a prompt of g < d bits: the response is uniform on its parity class, so
    φ^G_m = log 2 for m < d − g − 1 and 0 at m = d − g − 1."""
    for d in (3, 5):
        assert np.all(mt.information_profile(mt.families.repeated(d), given=[1]).values == 0)
        for g in range(1, d):
            got = mt.information_profile(mt.families.parity(d), given=range(g)).values
            n = d - g
            want = np.array([math.log(2)] * (n - 1) + [0.0])
            np.testing.assert_allclose(got, want, atol=1e-12)


def test_empty_prompt_is_the_plain_profile_and_prompt_order_is_irrelevant():
    p = mt.families.dirichlet(4, 2, alpha=0.5, seed=3)
    np.testing.assert_array_equal(mt.information_profile(p, given=[]).values, mt.information_profile(p).values)
    a = mt.information_profile(p, given=[2, 0]).values
    b = mt.information_profile(p, given=[0, 2]).values
    np.testing.assert_array_equal(a, b)
    assert prompted_kl(p, mt.Schedule((2, 2)), given=[]) == pytest.approx(
        mt.kl(p, mt.sampler_law(p, mt.Schedule((2, 2)))), rel=1e-12)


def test_relabelling_positions_leaves_the_prompted_profile_unchanged():
    p = mt.families.dirichlet(4, 2, alpha=0.5, seed=5)
    perm = (2, 0, 3, 1)
    q = mt.Joint(np.transpose(p.table, perm))  # new axis i is old axis perm[i]
    G_old = [0, 3]
    G_new = sorted(perm.index(j) for j in G_old)
    np.testing.assert_allclose(mt.information_profile(q, given=G_new).values,
                               mt.information_profile(p, given=G_old).values, atol=1e-12)


def test_optimal_schedule_of_a_prompted_profile_beats_every_schedule():
    p = mt.families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 6)
    prof = mt.information_profile(p, given=[0, 1])
    for T in (1, 2, 3):
        best = mt.optimal_schedule(prof, steps=T)
        v = mt.path_kl(prof, best)
        assert all(v <= mt.path_kl(prof, mt.Schedule(c)) + 1e-12 for c in compositions(4) if len(c) == T)


@pytest.mark.parametrize("call, match", [
    (lambda p: p.condition([0], [1]), "probability 0"),
    (lambda p: p.condition([0, 0], [1, 1]), "positions: repeated"),
    (lambda p: p.condition([0, 1, 2], [0, 0, 0]), "positions: a prompt of all"),
    (lambda p: p.condition([0], [2]), "values: 2"),
    (lambda p: p.condition([0], [True]), "values: True"),
    (lambda p: p.condition([0], []), "values: expected one token"),
    (lambda p: p.condition([5], [0]), "positions: position 5"),
    (lambda p: p.condition(3, [0]), "positions: expected an iterable"),
    (lambda p: mt.information_profile(p, given=[0, 1, 2]), "given: a prompt of all"),
    (lambda p: mt.information_profile(p, given=[1, 1]), "given: repeated"),
    (lambda p: mt.information_profile(p, given=7), "given: expected an iterable"),
    (lambda p: prompted_kl(p, mt.Schedule((1,)), given=[0, 1, 2]), "given: a prompt of all"),
])
def test_bad_prompts_are_refused(call, match):
    p = mt.Joint(np.where(np.arange(8).reshape(2, 2, 2) == 0, 1.0, 0.0))  # point mass at 000
    with pytest.raises(ValueError, match=match):
        call(p)
