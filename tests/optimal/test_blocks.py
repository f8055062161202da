"""Block plans under a forward budget (issue 18 §2): exact DP vs brute force.

Reference: the path KL of a block plan by enumerating, in each block, every ordered
partition of its positions into parts of the given sizes (random order inside a block),
each step's expected total correlation computed from subset entropies of the dense table
(tests/reference.py); and every block plan enumerated for the optimum.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mdmtheory as mt
from mdmtheory.optimal import block_path_kl, block_profiles, design_blocks, response_blocks
from mdmtheory.testing import joints

from reference import compositions, subset_entropy


def _ordered_partitions(block, sizes):
    if not sizes:
        yield ()
        return
    for first in itertools.combinations(block, sizes[0]):
        rest = [j for j in block if j not in first]
        for tail in _ordered_partitions(rest, sizes[1:]):
            yield (first,) + tail


def _brute_block_kl(table, blocks, counts, G):
    """E Σ_t TC(X_{B_t} | X_{A_t}) with A_t = prompt ∪ earlier blocks ∪ earlier parts."""
    H = lambda S: subset_entropy(table, sorted(S))  # noqa: E731
    total, earlier = 0.0, list(G)
    for block, sizes in zip(blocks, counts):
        parts = list(_ordered_partitions(list(block), list(sizes)))
        acc = 0.0
        for part in parts:
            A = list(earlier)
            for Bt in part:
                acc += sum(H(A + [j]) - H(A) for j in Bt) - (H(A + list(Bt)) - H(A))
                A += list(Bt)
        total += acc / len(parts)
        earlier += list(block)
    return total


cases = joints(d=(2, 5), K=(2, 2), max_outcomes=32).flatmap(
    lambda p: st.tuples(st.just(p), st.sets(st.integers(0, p.d - 1), max_size=p.d - 1).map(sorted)))


@settings(max_examples=25, deadline=None)
@given(cases)
def test_block_path_kl_against_enumeration(case):
    p, G = case
    n = p.d - len(G)
    for B in (b for b in range(1, n + 1) if n % b == 0):
        blocks = response_blocks(p, B, given=G)
        for counts in itertools.product(list(compositions(B)), repeat=len(blocks)):
            want = _brute_block_kl(p.table, blocks, counts, G)
            assert block_path_kl(p, counts, block_length=B, given=G) == pytest.approx(want, rel=1e-9, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(cases)
def test_design_is_the_brute_force_optimum(case):
    """For every forward count F: the pick equals the minimum over every block length and
    every plan with S = F / n_b steps in each block (brute force)."""
    p, G = case
    n = p.d - len(G)
    for F in range(1, n + 1):
        best = math.inf
        for B in (b for b in range(1, n + 1) if n % b == 0):
            nb = n // B
            if F % nb or F // nb > B:
                continue
            blocks = response_blocks(p, B, given=G)
            plans = [c for c in compositions(B) if len(c) == F // nb]
            for counts in itertools.product(plans, repeat=nb):
                best = min(best, _brute_block_kl(p.table, blocks, counts, G))
        got = design_blocks(p, forwards=F, given=G).best
        assert got.forwards == F
        assert got.path_kl == pytest.approx(best, rel=1e-9, abs=1e-12)
        assert block_path_kl(p, got.counts, block_length=got.block_length, given=G) == pytest.approx(got.path_kl)


def test_budget_gives_the_fewest_forwards():
    p = mt.families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 6)
    for eps in (0.0, 0.05, 0.2, 1.0):
        d = design_blocks(p, target_kl=eps)
        assert d.best.path_kl <= eps + 1e-12
        fewer = [design_blocks(p, forwards=F).best.path_kl for F in range(1, d.best.forwards)]
        assert all(v > eps for v in fewer)


def test_one_block_is_the_plain_optimal_schedule():
    p = mt.families.dirichlet(4, 2, alpha=0.5, seed=1)
    for T in (1, 2, 3, 4):
        got = design_blocks(p, forwards=T, block_lengths=[4]).best
        assert got.path_kl == pytest.approx(mt.path_kl(p, mt.optimal_schedule(mt.information_profile(p), steps=T)))


def test_block_profiles_closed_form_parity():
    """Parity on 6 bits, blocks of 2: the last block is determined by the earlier ones
    and its first position (φ = [log 2, 0]); earlier blocks are uniform (φ = [log 2, log 2])."""
    profs = block_profiles(mt.families.parity(6), 2)
    np.testing.assert_allclose(profs[0].values, [math.log(2)] * 2, atol=1e-12)
    np.testing.assert_allclose(profs[1].values, [math.log(2)] * 2, atol=1e-12)
    np.testing.assert_allclose(profs[2].values, [math.log(2), 0.0], atol=1e-12)


def test_candidates_list_infeasible_block_lengths_with_the_reason():
    p = mt.families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 6)
    d = design_blocks(p, forwards=3)
    by_B = {c.block_length: c for c in d.candidates}
    assert by_B[3].reason == "3 forwards do not split evenly over 2 blocks" and by_B[3].path_kl is None
    assert by_B[1].path_kl is None  # 6 blocks of 1 need 6 forwards
    assert by_B[2].counts == ((2,), (2,), (2,)) and by_B[6].forwards == 3



@pytest.mark.parametrize("call, match", [
    (lambda p: design_blocks(p), "forwards/target_kl: give exactly one"),
    (lambda p: design_blocks(p, forwards=0), "forwards: expected an integer in 1..4"),
    (lambda p: design_blocks(p, forwards=2, block_lengths=[3]), "block_length: must divide"),
    (lambda p: design_blocks(p, target_kl=-1.0), "target_kl: expected"),
    (lambda p: design_blocks(p, target_kl=float("nan")), "target_kl: expected"),
    (lambda p: design_blocks(p, forwards=3, block_lengths=[2]), "forwards: no candidate"),
    (lambda p: block_path_kl(p, [[2]], block_length=2), "counts: expected one list per block"),
    (lambda p: block_path_kl(p, [[2], [1]], block_length=2), "counts: block 1 sums to 1"),
    (lambda p: response_blocks(p, 2, given=[0, 1, 2, 3]), "given: a prompt of all"),
])
def test_bad_block_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call(mt.families.dirichlet(4, 2, alpha=0.5, seed=0))


def test_budget_keyword_is_target_kl_for_one_release():
    """design_blocks(budget=EPS) named a path-KL target: a DeprecationWarning and the same design."""
    p = mt.families.markov_chain([[0.9, 0.1], [0.2, 0.8]], d=6)
    new = design_blocks(p, target_kl=0.1)
    with pytest.warns(DeprecationWarning, match=r"design_blocks\(budget=\.\.\.\) is now"):
        old = design_blocks(p, budget=0.1)
    assert old == new and new.best.path_kl <= 0.1
    with pytest.raises(TypeError, match="unexpected keyword argument 'eps'"):
        design_blocks(p, eps=0.1)
