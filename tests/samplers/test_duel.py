"""DUEL (issue 28 item 7, arXiv 2603.01367; code giladturok/duel-code, exact_likelihood.py at
0afae1c, large_scale/exact_likelihood/strategies.py at 2213681): the likelihood of a
deterministic planner, log q(x) = sum over steps of log p(x_j | x_A) for the positions the
policy picks from the revealed x_A, against the exact engine's law for every x.

The reference walker below is written from DUEL's definition (greedy confidence = largest
max_v p(v | x_A), ties to the lowest position, k per step) and shares no code with
mdmtheory.samplers.likelihood.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.samplers import (ConfidencePlanner, EntropyPlanner, LeftToRightPlanner, MarginPlanner,
                                ThresholdPlanner, duel_log_likelihood, duel_log_likelihoods, duel_nll,
                                duel_ranking, exact_run)


def cond(table, A, x, j):
    d, K = table.ndim, table.shape[0]
    num = np.zeros(K)
    for y in itertools.product(range(K), repeat=d):
        if all(y[a] == x[a] for a in A):
            num[y[j]] += table[y]
    s = num.sum()
    return None if s == 0 else num / s


def reference_greedy(table, x, sizes):
    """DUEL with GreedyConfidenceStrategy: each step the k masked positions of largest
    max-probability (lowest index first on equal confidence) are revealed with the true tokens."""
    d = table.ndim
    A, total = [], 0.0
    for k in sizes:
        free = [j for j in range(d) if j not in A]
        cs = {j: cond(table, A, x, j) for j in free}
        if any(c is None for c in cs.values()):
            return -math.inf
        order = sorted(free, key=lambda j: (-round(float(cs[j].max()), 12), j))
        for j in order[:k]:
            if cs[j][x[j]] == 0:
                return -math.inf
            total += math.log(cs[j][x[j]])
        A += order[:k]
    return total


def log_engine(p, plan, planner):
    q = exact_run(p, plan, planner).law.table
    with np.errstate(divide="ignore"):
        return np.log(q)


LAWS = [mt.families.dirichlet(3, 3, alpha=0.5, seed=2), mt.families.dirichlet(4, 2, alpha=0.4, seed=7)]


@pytest.mark.parametrize("p", LAWS, ids=["d3K3", "d4K2"])
def test_greedy_confidence_from_the_definition(p):
    """duel_log_likelihood = the reference walker (written from DUEL's definition) for every x."""
    for sizes in [(1,) * p.d, (2,) + (1,) * (p.d - 2)]:
        for x in itertools.product(range(p.K), repeat=p.d):
            ref = reference_greedy(p.table, x, sizes)
            got = duel_log_likelihood(p, x, ConfidencePlanner(ties="lowest"), mt.Schedule(sizes))
            assert got == pytest.approx(ref, rel=1e-12, abs=1e-12) or (ref == got == -math.inf)


@pytest.mark.parametrize("p", LAWS, ids=["d3K3", "d4K2"])
def test_duel_is_the_exact_law_of_every_deterministic_planner(p):
    """For every x: DUEL's log q(x) = log of the engine's exact output law of the same planner,
    -inf exactly where q(x) = 0 — for fixed orders and scored rules with a fixed tie rule."""
    cases = [(LeftToRightPlanner(), mt.Schedule((2,) + (1,) * (p.d - 2))),
             (ConfidencePlanner(ties="lowest"), mt.Schedule((p.d - 1, 1))),
             (MarginPlanner(ties="lowest"), mt.Schedule((1,) * p.d)),
             (EntropyPlanner(ties="lowest"), mt.Schedule((1, p.d - 1))),
             (ThresholdPlanner(0.6, ties="lowest"), None)]
    for planner, plan in cases:
        lq = duel_log_likelihoods(p, planner, plan)
        le = log_engine(p, plan, planner)
        assert np.array_equal(np.isneginf(lq), np.isneginf(le)), planner.name
        fin = np.isfinite(le)
        np.testing.assert_allclose(lq[fin], le[fin], rtol=0, atol=1e-12)


def test_duel_nll_is_entropy_plus_kl_and_ranks_like_the_kl():
    """E_r[-log q] = H(r) + KL(r || q) (data r = the model, and a different data law), so DUEL's
    ranking of samplers is the exact KL ranking of the samplers it describes."""
    p = mt.families.markov_chain(np.array([[0.9, 0.1], [0.3, 0.7]]), 4)
    r = mt.families.dirichlet(4, 2, alpha=2.0, seed=1)
    pl, plan = ConfidencePlanner(ties="lowest"), mt.Schedule((2, 2))
    for data in (p, r):
        H = -float(np.sum(data.table * np.log(data.table)))
        q = exact_run(p, plan, pl).law
        assert duel_nll(p, pl, plan, data=data) == pytest.approx(H + mt.kl(data, q), rel=1e-12)
    cands = [(f"{pl.name}{s}", pl, mt.Schedule(s)) for s in [(2, 2), (1, 3)]
             for pl in (LeftToRightPlanner(), EntropyPlanner())]
    rk = duel_ranking(p, cands, ties="lowest")  # "topk" imports torch: the slow findings region runs it
    assert rk.agree
    np.testing.assert_allclose(np.array(rk.nll) - rk.entropy, rk.kl, atol=1e-12)


def test_random_ties_break_the_identity_on_the_markov_chain():
    """Under the package's default ties='random' the sampler mixes over tie resolutions: DUEL
    (torch.topk's resolution; here the lowest-index rule, which gives the same sets on this law
    and needs no torch) refuses x whose path splits a tie, and its likelihood is then that of
    another sampler. Markov chain P = [[.9,.1],[.3,.7]], d = 4, confidence, sizes (2, 2):
    KL 0.2721 under a fixed tie rule (equal to left-to-right's: DUEL cannot tell them apart), 0.0689
    under random ties (four times better than left-to-right)."""
    p = mt.families.markov_chain(np.array([[0.9, 0.1], [0.3, 0.7]]), 4)
    plan = mt.Schedule((2, 2))
    with pytest.raises(ValueError, match="ties"):
        duel_log_likelihood(p, (0, 0, 0, 0), ConfidencePlanner(), plan)
    rk = duel_ranking(p, [("left_to_right", LeftToRightPlanner(), plan), ("confidence", ConfidencePlanner(), plan)],
                      ties="lowest")
    assert rk.kl[1] == pytest.approx(0.27212, abs=5e-5) and rk.kl_own[1] == pytest.approx(0.06891, abs=5e-5)
    assert rk.nll[0] == pytest.approx(rk.nll[1], abs=1e-12) and rk.kl[0] == pytest.approx(rk.kl[1], abs=1e-12)
    assert rk.by_kl_own == ("confidence", "left_to_right")
    assert rk.kl[0] / rk.kl_own[1] > 3.9  # "four times better"


def test_non_deterministic_planners_and_bad_input_are_refused():
    p = LAWS[0]
    with pytest.raises(ValueError, match="planner"):
        duel_log_likelihood(p, (0, 0, 0), "random", mt.Schedule((1, 1, 1)))
    with pytest.raises(ValueError, match="x"):
        duel_log_likelihood(p, (0, 3, 0), LeftToRightPlanner(), mt.Schedule((1, 1, 1)))
    with pytest.raises(ValueError, match="plan"):
        duel_log_likelihood(p, (0, 0, 0), LeftToRightPlanner(), None)
    with pytest.raises(ValueError, match="ties"):
        duel_ranking(p, [("c", ConfidencePlanner(), mt.Schedule((3,)))], ties="random")


def test_compare_carries_the_duel_identity():
    """compare's row duel_likelihood: DUEL's NLL minus H(p) = the exact KL for a fixed tie rule;
    with ties='random' and a split tie the row is duel_likelihood_lowest and has no verdict."""
    p = mt.families.markov_chain(np.array([[0.9, 0.1], [0.3, 0.7]]), 4)
    plan = mt.Schedule((2, 2))
    row = mt.compare(p, plan, ConfidencePlanner(ties="lowest")).row("duel_likelihood")
    assert row.holds and row.value == pytest.approx(row.exact, rel=1e-12) and row.status == "our reading"
    row = mt.compare(p, plan, ConfidencePlanner()).row("duel_likelihood_lowest")
    assert row.holds is None and row.value == pytest.approx(0.27212, abs=5e-5) and row.exact == pytest.approx(0.06891, abs=5e-5)
