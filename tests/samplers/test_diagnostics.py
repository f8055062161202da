"""Tests of the decoding-bias diagnostics and the planner comparison table.

Expected reveal matrices are written by hand (left-to-right and DUS orders are fixed; the
random planner reveals position j at step t with probability k_t / d by symmetry); KL values
of the table are checked against a left-to-right law multiplied out here and against the
invariants (one token per step and product laws give 0).
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import pathlib

import numpy as np
import pytest
from scipy.stats import spearmanr

import mdmtheory as mt
from mdmtheory.laws import families
from mdmtheory.samplers import (
    comparison_table,
    empirical_reveal_matrix,
    reveal_diagnostics,
    reveal_statistics,
)
from mdmtheory.samplers import ConfidencePlanner, DilatedPlanner, SemiAutoregressivePlanner, ThresholdPlanner, simulate

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_left_to_right_matrix_and_statistics():
    p = families.dirichlet(6, seed=4)
    diag = reveal_diagnostics(p, mt.Schedule((2, 2, 2)), "left_to_right")
    expected = np.zeros((6, 4))
    for j in range(6):
        expected[j, 1 + j // 2] = 1.0
    np.testing.assert_allclose(diag.matrix, expected, atol=1e-12)
    np.testing.assert_allclose(diag.mean_step, [1, 1, 2, 2, 3, 3])
    assert diag.boundary_bias == pytest.approx(0.0)  # (1 + 3)/2 - mean(1, 2, 2, 3)
    rho = spearmanr(np.arange(6), [1, 1, 2, 2, 3, 3]).statistic
    assert diag.left_to_right == pytest.approx(rho)
    assert diag.expected_steps == pytest.approx(3.0)
    one = reveal_diagnostics(p, mt.Schedule((1,) * 6), "left_to_right")
    assert one.left_to_right == pytest.approx(1.0)


@pytest.mark.parametrize("sizes", [(2, 2, 1), (1, 3, 1), (5,)])
def test_random_planner_matrix_is_uniform(sizes):
    p = families.dirichlet(5, 2, alpha=0.4, seed=8)
    diag = reveal_diagnostics(p, mt.Schedule(sizes), "random")
    expected = np.array([[0.0] + [k / 5 for k in sizes]] * 5)
    np.testing.assert_allclose(diag.matrix, expected, atol=1e-12)
    assert diag.left_to_right == 0.0  # all mean steps tie
    assert diag.boundary_bias == pytest.approx(0.0, abs=1e-12)


def test_dilated_own_rounds():
    p = families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 8)
    diag = reveal_diagnostics(p, None, DilatedPlanner())
    step = {0: 1, 4: 1, 2: 2, 6: 2, 1: 3, 3: 3, 5: 3, 7: 3}  # DUS rounds of a block of 8
    expected = np.zeros((8, 4))
    for j, t in step.items():
        expected[j, t] = 1.0
    np.testing.assert_allclose(diag.matrix, expected, atol=1e-12)
    np.testing.assert_allclose(diag.step_counts[:4], [0, 0, 0, 1])
    # ends: steps 1 and 3 -> 2; middle: (3 + 2 + 3 + 1 + 3 + 2) / 6 = 14/6
    assert diag.boundary_bias == pytest.approx(2 - 14 / 6)


def test_reveal_statistics_by_hand():
    # ends revealed at step 1, middle at step 2 -> boundary bias -1
    R = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 1], [0, 1, 0]], dtype=float)
    mean, boundary, ltr = reveal_statistics(R)
    np.testing.assert_allclose(mean, [1, 2, 2, 1])
    assert boundary == pytest.approx(-1.0)
    assert ltr == pytest.approx(0.0)
    # mixed rows: position 0 at steps 1/2 with prob 1/2 each, position 1 at step 2
    mean, boundary, ltr = reveal_statistics([[0, 0.5, 0.5], [0, 0, 1.0]])
    np.testing.assert_allclose(mean, [1.5, 2.0])
    assert boundary is None
    assert ltr == pytest.approx(1.0)
    # right to left
    _, _, ltr = reveal_statistics(np.eye(4)[::-1])
    assert ltr == pytest.approx(-1.0)
    for bad in ([[0, 0], [0, 1]], [[-1, 2]], np.ones(3)):
        with pytest.raises(ValueError, match="matrix"):
            reveal_statistics(bad)


def test_confidence_boundary_bias_on_ising():
    """Open Ising chain: the two ends have one neighbour, their marginal equals the rest
    (symmetric field), so at the first step confidence ties everywhere; later steps favour the
    neighbours of revealed positions. Checked against a brute-force path enumeration of the
    mean reveal step."""
    d = 5
    p = families.ising_chain(d, coupling=0.8, field=0.4)
    sched = mt.Schedule((1, 2, 2))
    diag = reveal_diagnostics(p, sched, ConfidencePlanner(ties="lowest"))  # the rule the brute force follows
    mean_bf = _mean_reveal_step_bruteforce(p.table, sched.sizes)
    np.testing.assert_allclose(diag.mean_step, mean_bf, atol=1e-12)
    ends = (mean_bf[0] + mean_bf[-1]) / 2
    assert diag.boundary_bias == pytest.approx(ends - np.mean(mean_bf[1:-1]))


def _mean_reveal_step_bruteforce(table, sizes):
    """Mean reveal step per position of the confidence planner, following each y's path."""
    d, K = table.ndim, table.shape[0]

    def cond(given, j):
        idx = tuple(given.get(i, slice(None)) for i in range(d))
        sub = table[idx]
        free = [i for i in range(d) if i not in given]
        marg = sub.sum(axis=tuple(a for a, i in enumerate(free) if i != j))
        return marg / marg.sum()

    acc = np.zeros(d)
    for y in itertools.product(range(K), repeat=d):
        given, prob, steps = {}, 1.0, {}
        for t, k in enumerate(sizes):
            free = [j for j in range(d) if j not in given]
            conds = {j: cond(given, j) for j in free}
            conf = {j: max(conds[j]) for j in free}
            chosen = []
            for _ in range(k):  # greedy: best confidence, ties (1e-12) to the lowest index
                rest = [j for j in free if j not in chosen]
                best = max(conf[j] for j in rest)
                chosen.append(min(j for j in rest if conf[j] >= best - 1e-12))
            for j in chosen:
                prob *= conds[j][y[j]]
                steps[j] = t + 1
            given.update({j: y[j] for j in chosen})
        acc += prob * np.array([steps[j] for j in range(d)])
    return acc


def test_empirical_reveal_matrix_matches_exact():
    p = families.dirichlet(5, 2, alpha=0.5, seed=6)
    sched = mt.Schedule((2, 2, 1))
    diag = reveal_diagnostics(p, sched, "confidence")
    n = 8000
    sim = simulate(p, sched, "confidence", n=n, seed=12)
    emp = empirical_reveal_matrix(sim.reveal_step, n_cols=diag.matrix.shape[1])
    sd = np.sqrt(diag.matrix * (1 - np.clip(diag.matrix, 0, 1)) / n)
    assert np.all(np.abs(emp - diag.matrix) <= 5 * sd + 1e-12)
    with pytest.raises(ValueError, match="reveal_step"):
        empirical_reveal_matrix(np.array([[-1, 2]]))
    with pytest.raises(ValueError, match="n_cols"):
        empirical_reveal_matrix(np.array([[1, 3]]), n_cols=2)


def test_variable_planner_diagnostics():
    p = families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 5)
    diag = reveal_diagnostics(p, None, ThresholdPlanner(0.75))
    assert diag.matrix.sum(axis=1) == pytest.approx(np.ones(5))
    assert diag.step_counts.sum() == pytest.approx(1.0)
    assert 1 <= diag.expected_steps <= 5


# -- comparison table --------------------------------------------------------------------
def _l2r_kl_bruteforce(table, sizes):
    """KL(p || q) for left-to-right blocks: q(y) = prod_t prod_{j in B_t} p(y_j | y_{<s_t})."""
    d, K = table.ndim, table.shape[0]
    cuts = np.concatenate([[0], np.cumsum(sizes)])
    total = 0.0
    for y in itertools.product(range(K), repeat=d):
        py = table[y]
        if py == 0:
            continue
        q = 1.0
        for a, b in zip(cuts[:-1], cuts[1:]):
            prefix = table[tuple(y[:a])].reshape((K,) * (d - a))
            pa = prefix.sum()
            for j in range(a, b):
                marg = prefix.sum(axis=tuple(i for i in range(d - a) if i != j - a))
                q *= marg[y[j]] / pa
        total += py * math.log(py / q)
    return total


def test_comparison_table_values():
    ps = {
        "markov": families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 5),
        "dirichlet": families.dirichlet(5, 2, alpha=0.5, seed=1),
        "product": families.product(np.random.default_rng(0).dirichlet([1, 1], size=5)),
    }
    planners = {"random": "random", "l2r": "left_to_right", "conf": "confidence", "semi": SemiAutoregressivePlanner(2)}
    table = comparison_table(ps, planners, [2, 3, 5, 9])
    assert table.steps == tuple((law, T) for law in ps for T in (2, 3, 5))  # T > d skipped
    for law, p in ps.items():
        for T in (2, 3):
            sizes = mt.Schedule.constant(5, T).sizes
            assert table.value(law, T, "l2r") == pytest.approx(_l2r_kl_bruteforce(p.table, sizes), rel=1e-10, abs=1e-14)
            assert table.value(law, T, "random") == pytest.approx(mt.kl(p, mt.sampler_law(p, mt.Schedule(sizes))), rel=1e-12)
        for name in planners:
            assert abs(table.value(law, 5, name)) < 1e-12  # one token per step
    row = [i for i, (law, _) in enumerate(table.steps) if law == "product"]
    assert np.all(np.abs(table.kl[row]) < 1e-12)
    assert np.all(table.lost == 0)
    text = table.format()
    assert "semi" in text and "dirichlet" in text and "-0.0000" not in text
    r = table.ratio("l2r")
    assert np.isnan(r[row]).all()
    i = table.steps.index(("markov", 2))
    assert r[i] == pytest.approx(table.kl[i, 1] / table.kl[i, 0])


def test_comparison_table_errors():
    p = families.parity(3)
    with pytest.raises(ValueError, match="laws"):
        comparison_table({}, ["random"], [2])
    with pytest.raises(ValueError, match="laws"):
        comparison_table({"x": np.ones((2, 2)) / 4}, ["random"], [2])
    with pytest.raises(ValueError, match="steps"):
        comparison_table({"p": p}, ["random"], [0])
    with pytest.raises(ValueError, match="planner"):
        comparison_table({"p": p}, ["nonexistent"], [2])
    with pytest.raises(ValueError, match="plan"):
        comparison_table({"p": p}, {"thr": ThresholdPlanner(0.5)}, [2])


def test_example_runs(capsys):
    spec = importlib.util.spec_from_file_location("planner_comparison", ROOT / "examples" / "planner_comparison.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(4)
    out = capsys.readouterr().out
    assert "confidence" in out and "dilated" in out and "E[steps]" in out


def test_comparison_table_value_refuses_a_row_that_is_not_a_name_and_a_step_count():
    """An array for the law's name used to reach ``(law, T) in steps`` (an ambiguous truth value:
    a bare ValueError naming nothing; found by the slow fuzz run)."""
    p = mt.families.dirichlet(3, 2, seed=1)
    t = comparison_table({"p": p}, ["random"], [1, 3])
    assert t.value("p", np.int64(3), "random") == t.value("p", 3, "random")
    for law, T in ((np.array([1, 2]), 1), ("p", True), ("p", 2), (None, 1)):
        with pytest.raises(ValueError, match=r"^law, T: no row"):
            t.value(law, T, "random")
