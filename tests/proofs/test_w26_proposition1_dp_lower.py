"""Checks of proofs/w26_proposition1_dp_lower.md: W26 Prop. 1 eq. (28c), the minimum over
allocations of sum_k (e^{S_k/N_k} - 1) H_k is at least C(P)/N, and asymptotically equal."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mdmtheory as mt
from mdmtheory import bounds as B
from mdmtheory.information import ugc as U
from reference import compositions, make_table

pos = st.floats(1e-3, 5.0)


@given(st.lists(st.tuples(pos, st.floats(0.0, 2.0), st.floats(0.2, 20.0)), min_size=1, max_size=5))
def test_relaxed_inequality(blocks):
    S = np.array([b[0] for b in blocks])
    H = np.array([b[1] for b in blocks])
    Nk = np.array([b[2] for b in blocks])
    N = Nk.sum()
    C = np.sum(np.sqrt(S * H)) ** 2
    objective = np.sum(np.expm1(S / Nk) * H)
    linear = np.sum(S * H / Nk)
    assert objective >= linear * (1 - 1e-12)  # e^x - 1 >= x
    assert linear >= C / N * (1 - 1e-12)  # Cauchy-Schwarz


def _objective(S, H, alloc):
    return sum(math.expm1(S[k] / alloc[k]) * H[k] for k in range(len(S)))


@pytest.mark.parametrize("seed", range(4))
def test_dp_minimum_by_enumeration(seed):
    rng = np.random.default_rng(seed)
    p = mt.Joint(make_table(4, 2, seed, ["dirichlet", "sparse", "peaked", "near_independent"][seed]))
    edges = np.sort(rng.uniform(0.05, 0.95, 4))
    lam = np.log(edges / (1 - edges))
    S = np.diff(lam)
    H = np.array([U.ugc(p, edges[k], edges[k + 1]) for k in range(3)])
    C = np.sum(np.sqrt(S * H)) ** 2
    for N in (3, 5, 9):
        best = min(_objective(S, H, c) for c in compositions(N) if len(c) == 3)
        got = B.w26_block_objective_min(p, edges, N)
        assert got.value == pytest.approx(best, rel=1e-12, abs=1e-15)
        assert _objective(S, H, got.steps) == pytest.approx(best, rel=1e-12, abs=1e-15)
        b = B.w26_proposition1_dp_lower(p, edges, N)
        assert b.value == pytest.approx(C / N, rel=1e-12)
        assert b.value <= best * (1 + 1e-12)


def test_asymptotically_tight():
    p = mt.Joint(make_table(4, 2, 11, "dirichlet"))
    edges = (0.2, 0.4, 0.6, 0.8)
    ratios = []
    for N in (10, 100, 1000):
        m = B.w26_block_objective_min(p, edges, N).value
        ratios.append(m / B.w26_proposition1_dp_lower(p, edges, N).value)
    assert all(r >= 1 for r in ratios)
    assert ratios[0] > ratios[1] > ratios[2]
    assert ratios[2] - 1 < 0.02
