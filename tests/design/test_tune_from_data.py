"""design.estimate_tune on bridge.ExactModel(p) against the exact optimal.tune (z-scores,
fixed seeds; issue 37 §3)."""

from __future__ import annotations

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.laws import as_oracle
from mdmtheory.laws.families import markov_chain

bridge = pytest.importorskip("mdmtheory.bridge")
from mdmtheory.design import estimate_tune  # noqa: E402

P = markov_chain(np.array([[0.8, 0.2], [0.3, 0.7]]), 5)
ROWS = as_oracle(P).sample(3000, np.random.default_rng(11))


@pytest.mark.parametrize("rule, grid", [("threshold", (0.7, 0.8, 1.01)),
                                        ("entropy_threshold", (0.5, 0.7)),
                                        ("factor", (0.5, 1.0, 2.0))])
def test_estimates_match_the_exact_curve(rule, grid):
    exact = mt.optimal.tune(rule, P, values=grid)
    est = estimate_tune(bridge.ExactModel(P), ROWS, rule, values=grid, n=1000, seed=3)
    assert est.method == "estimated" and est.values == exact.values
    for i in range(len(grid)):
        ref = exact.path_kl[i]
        if est.kl_stderr[i] == 0:
            assert est.path_kl[i] == pytest.approx(ref, abs=1e-9)
        else:
            assert abs(est.path_kl[i] - ref) < 5 * est.kl_stderr[i] + 1e-12, (rule, grid[i])  # + rounding
        if est.forwards_stderr[i] == 0:
            assert est.forwards[i] == pytest.approx(exact.forwards[i], abs=1e-9)
        else:
            assert abs(est.forwards[i] - exact.forwards[i]) < 5 * est.forwards_stderr[i], (rule, grid[i])


def test_pick_agrees_with_the_exact_pick():
    """Budget 4 forwards: the exact pick (τ = 0.7, about 3.3 forwards, path KL about 0.09) is
    the estimated one; τ = 0.8 (about 4.6 forwards) is infeasible, τ = 0.6 (1 forward) has
    KL about 0.5, far outside the pick's interval."""
    grid = (0.6, 0.7, 0.8)
    exact = mt.optimal.tune("threshold", P, forwards=4, values=grid)
    est = estimate_tune(bridge.ExactModel(P), ROWS, "threshold", forwards=4, values=grid, n=1000, seed=3)
    assert est.value == exact.value
    assert est.to_dict()["value"] == exact.value
    grid = (0.7, 0.8, 1.01)
    exact = mt.optimal.tune("threshold", P, target_kl=0.01, values=grid)
    est = estimate_tune(bridge.ExactModel(P), ROWS, "threshold", target_kl=0.01, values=grid, n=1000, seed=3)
    assert est.value == exact.value == 0.8


def test_refuses_where_intervals_overlap():
    """Two grid values that act alike on every state of the law give identical estimates (not
    rivals: a pick, the first); values whose estimates differ by less than the noise are refused
    with the fix named: more samples."""
    grid = (0.69, 0.7)  # no conditional of this law has its arg max probability in [0.69, 0.7)
    ex = mt.optimal.tune("threshold", P, values=grid)
    assert ex.kl[0] == ex.kl[1] and ex.forwards[0] == ex.forwards[1]
    est = estimate_tune(bridge.ExactModel(P), ROWS[:300], "threshold", forwards=5, values=grid, n=300, seed=0)
    assert est.value == 0.69
    # factor 0.5 and 1.0: exact path KLs 0.078 and 0.104 (both within 4 forwards); 100 draws do not separate them
    ex = mt.optimal.tune("factor", P, values=(0.5, 1.0))
    assert 0.02 < ex.path_kl[1] - ex.path_kl[0] < 0.03 and max(ex.forwards) <= 4
    with pytest.raises(ValueError, match="^n: .*not separated.*more samples"):
        estimate_tune(bridge.ExactModel(P), ROWS[:100], "factor", forwards=4, values=(0.5, 1.0), n=100, seed=0)


def test_bad_input():
    m = bridge.ExactModel(P)
    with pytest.raises(ValueError, match="^planner: joint_threshold"):
        estimate_tune(m, ROWS[:10], "joint_threshold", forwards=3)
    with pytest.raises(ValueError, match="^forwards: no value"):
        estimate_tune(m, ROWS[:50], "threshold", forwards=0.5, values=(0.7, 0.8), n=50)
    with pytest.raises(ValueError, match="^samples"):
        estimate_tune(m, np.full((4, 5), 7), "threshold", forwards=3, values=(0.7,))
