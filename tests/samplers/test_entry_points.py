"""One entry point (issue 27 §2): ``mt.sampler_law`` and ``mt.simulate`` / ``mt.estimate_kl``
take every plan type and every sampler.

References: the specialised exact runs (``exact_run``, ``select_run``, ``revise_run``,
``random_schedule_law``; each tested against brute force in its own module), the mixture
over compositions written here from its definition, and a brute-force law of a BlockPlan
written here from the rule (no specialised run exists for it). Monte Carlo against the exact
law: per-cell z-scores at a fixed seed, |z| < 5, and the check shown to reject a wrong law.
"""

from __future__ import annotations

import math
from itertools import combinations, product

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.samplers import (
    ConfidencePlanner,
    CorrectorSampler,
    EditingSampler,
    exact_run,
    random_schedule_law,
    RemaskingSampler,
    revise_run,
    SampleThenSelectPlanner,
    select_run,
    SemiAutoregressivePlanner,
    ThresholdPlanner,
)

P = mt.families.dirichlet(4, 2, alpha=0.7, seed=1)  # no ties: every tie rule gives one law
P3 = mt.families.dirichlet(3, 3, alpha=0.8, seed=4)
CHAIN = mt.families.markov_chain([[0.9, 0.1], [0.1, 0.9]], 4)  # ties everywhere
S = mt.Schedule((2, 1, 1))
GRID = mt.Grid((0.0, 0.4, 0.7, 1.0))
BLOCKS = mt.BlockPlan([(0, 2, 3), (1,)], [(2, 1), (1,)])
BLOCKS3 = mt.BlockPlan([(0, 2), (1,)], [(2,), (1,)])
RS = mt.RandomSchedule({(2, 2): 0.3, (1, 3): 0.5, (4,): 0.2})
REVISERS = [RemaskingSampler.uniform(3, eta=0.4), CorrectorSampler(S, k=1), EditingSampler(mt.Schedule((2, 2)))]


# -- references -------------------------------------------------------------------------
def mixture(p, rs, law_of):
    """sum_c pi(c) q_c, from the definition."""
    return sum(w * law_of(mt.Schedule(c)).table for c, w in rs.law.items())


def brute_block_law(table, plan, rule):
    """The law of a BlockPlan by recursion over the paths: step t reveals ``sizes[t]`` masked
    positions of its block, chosen by ``rule`` ("random": every subset, uniform; "confidence":
    the largest max_v p(v | x_A), ties to the lowest position), each drawn independently from
    p(x_j | x_A) computed by slicing the table."""
    d, K = table.ndim, table.shape[0]
    sizes, blocks = plan.schedule.sizes, plan.step_blocks
    q = np.zeros(table.shape)

    def cond(x, A, j):
        idx = tuple(x[i] if i in A else slice(None) for i in range(d))
        sub = table[idx]  # axes: the masked positions, increasing
        free = [i for i in range(d) if i not in A]
        return sub.sum(axis=tuple(a for a, i in enumerate(free) if i != j)) / sub.sum()

    def rec(t, A, x, mass):
        if t == len(sizes):
            q[tuple(x)] += mass
            return
        if table[tuple(x[i] if i in A else slice(None) for i in range(d))].sum() == 0:
            return  # lost
        cand = [j for j in blocks[t] if j not in A]
        c = {j: cond(x, A, j) for j in cand}
        if rule == "random":
            sets = [(B, 1.0 / math.comb(len(cand), sizes[t])) for B in combinations(cand, sizes[t])]
        else:
            ranked = sorted(cand, key=lambda j: (-c[j].max(), j))
            sets = [(tuple(ranked[: sizes[t]]), 1.0)]
        for B, w in sets:
            for ys in product(range(K), repeat=len(B)):
                f = math.prod(c[j][y] for j, y in zip(B, ys))
                if f > 0:
                    x2 = list(x)
                    for j, y in zip(B, ys):
                        x2[j] = y
                    rec(t + 1, A | set(B), x2, mass * w * f)

    rec(0, frozenset(), [0] * d, 1.0)
    return q


# -- sampler_law equals the specialised runs ------------------------------------------------
@pytest.mark.parametrize("p", [P, CHAIN], ids=["dirichlet", "chain"])
@pytest.mark.parametrize("plan, planner", [
    (S, "random"), (S, "confidence"), (S, "left_to_right"), (S, SemiAutoregressivePlanner(2)),
    (None, ThresholdPlanner(0.6)), (GRID, "random"),
])
def test_position_planners_are_exact_run(p, plan, planner):
    np.testing.assert_array_equal(mt.sampler_law(p, plan, planner).table, exact_run(p, plan, planner).law.table)


@pytest.mark.parametrize("p, plan", [(P, BLOCKS), (P3, BLOCKS3), (P, mt.schedules.semi_autoregressive_plan(4, 2, 2))],
                         ids=["d4", "K3", "semi_ar"])
@pytest.mark.parametrize("rule", ["random", "confidence"])
def test_block_plan_is_the_brute_force_law(p, plan, rule):
    planner = "random" if rule == "random" else ConfidencePlanner(ties="lowest")
    q = mt.sampler_law(p, plan, planner)
    np.testing.assert_allclose(q.table, brute_block_law(p.table, plan, rule), atol=1e-14)
    assert q.lost == 0.0
    np.testing.assert_array_equal(exact_run(p, plan, planner).law.table, q.table)


def test_block_plan_differs_from_its_flattened_schedule():
    """The blocks matter: without them the same sizes give another law."""
    q = mt.sampler_law(P, BLOCKS, ConfidencePlanner(ties="lowest"))
    assert np.abs(q.table - mt.sampler_law(P, BLOCKS.schedule, ConfidencePlanner(ties="lowest")).table).max() > 1e-3


@pytest.mark.parametrize("planner", ["random", ConfidencePlanner(ties="lowest"), SampleThenSelectPlanner()])
def test_random_schedule_is_the_mixture(planner):
    q = mt.sampler_law(P, RS, planner)
    ref = mixture(P, RS, lambda s: (select_run(P, s, planner) if isinstance(planner, SampleThenSelectPlanner)
                                    else exact_run(P, s, planner)).law)
    np.testing.assert_allclose(q.table, ref, atol=1e-15)
    if planner == "random":
        np.testing.assert_allclose(q.table, random_schedule_law(P, RS).table, atol=1e-15)


def test_sample_then_select_is_select_run():
    for planner in (SampleThenSelectPlanner(), SampleThenSelectPlanner(threshold=0.6, temperature=0.5)):
        np.testing.assert_array_equal(mt.sampler_law(CHAIN, S, planner).table, select_run(CHAIN, S, planner).law.table)
    np.testing.assert_array_equal(mt.sampler_law(CHAIN, S, "sample_then_select").table,
                                  select_run(CHAIN, S).law.table)


@pytest.mark.parametrize("sampler", REVISERS, ids=lambda s: type(s).__name__)
def test_revising_samplers_are_revise_run(sampler):
    ref = revise_run(CHAIN, sampler).law
    q = mt.sampler_law(CHAIN, None, sampler)
    np.testing.assert_array_equal(q.table, ref.table)
    assert q.lost == ref.lost
    own = mt.Grid(sampler.alphas) if isinstance(sampler, RemaskingSampler) else sampler.plan
    np.testing.assert_array_equal(mt.sampler_law(CHAIN, own, planner=sampler).table, ref.table)


@pytest.mark.parametrize("rule", ["lowest", "random"])
def test_ties_are_passed_through(rule):
    """ties= replaces the sampler's rule: the runs with that rule (on the chain the rules differ)."""
    np.testing.assert_array_equal(mt.sampler_law(CHAIN, S, "confidence", ties=rule).table,
                                  exact_run(CHAIN, S, ConfidencePlanner(ties=rule)).law.table)
    np.testing.assert_array_equal(mt.sampler_law(CHAIN, S, SampleThenSelectPlanner(), ties=rule).table,
                                  select_run(CHAIN, S, SampleThenSelectPlanner(ties=rule)).law.table)
    np.testing.assert_array_equal(mt.sampler_law(CHAIN, None, CorrectorSampler(S), ties=rule).table,
                                  revise_run(CHAIN, CorrectorSampler(S, ties=rule)).law.table)
    assert np.abs(mt.sampler_law(CHAIN, S, "confidence", ties="lowest").table
                  - mt.sampler_law(CHAIN, S, "confidence", ties="random").table).max() > 1e-3


# -- refusals -----------------------------------------------------------------------------
@pytest.mark.parametrize("call, arg", [
    (lambda: mt.sampler_law(P, mt.Schedule((1, 3)), CorrectorSampler(S)), "plan"),
    (lambda: mt.sampler_law(P, GRID, RemaskingSampler.uniform(2)), "plan"),
    (lambda: mt.sampler_law(P, GRID, SampleThenSelectPlanner()), "plan"),
    (lambda: mt.sampler_law(P, BLOCKS, SampleThenSelectPlanner()), "plan"),
    (lambda: mt.sampler_law(P, None, SampleThenSelectPlanner()), "plan"),
    (lambda: mt.sampler_law(P, GRID, "confidence"), "planner"),
    (lambda: mt.sampler_law(P, BLOCKS, ThresholdPlanner(0.5)), "plan"),
    (lambda: mt.sampler_law(P, mt.BlockPlan([(0, 1, 2)], [(3,)]), "random"), "plan"),
    (lambda: mt.sampler_law(P, mt.RandomSchedule({(3,): 1.0}), "random"), "plan"),
    (lambda: mt.sampler_law(P, S, "random", ties="lowest"), "ties"),
    (lambda: mt.sampler_law(P, S, "confidence", ties="first"), "ties"),
    (lambda: exact_run(P, RS), "plan"),
    (lambda: mt.sampler_kl(P.table, BLOCKS), "plan"),
    (lambda: mt.sampler_kl(P.table, RS), "plan"),
    (lambda: mt.sampler_kl(P.table, S, planner=SampleThenSelectPlanner()), "planner"),
    (lambda: mt.simulate(P, mt.Schedule((1, 3)), EditingSampler(S), n=10, seed=0), "plan"),
    (lambda: mt.simulate(P, GRID, SampleThenSelectPlanner(), n=10, seed=0), "plan"),
    (lambda: mt.simulate(P, BLOCKS, SampleThenSelectPlanner(), n=10, seed=0), "plan"),
    (lambda: mt.simulate(P, BLOCKS, ThresholdPlanner(0.5), n=10, seed=0), "plan"),
    (lambda: mt.simulate(P, mt.RandomSchedule({(3,): 1.0}), n=10, seed=0), "plan"),
    (lambda: mt.estimate_kl(P, S, SampleThenSelectPlanner(), n=10, seed=0), "planner"),
    (lambda: mt.estimate_kl(P, None, CorrectorSampler(S), n=10, seed=0), "planner"),
    (lambda: mt.estimate_kl(P, RS, SampleThenSelectPlanner(), n=10, seed=0), "planner"),
    *[(lambda plan=plan, planner=planner: mt.sampler_law(P.table, plan, planner), "p")
      for plan, planner in [(S, "random"), (RS, "random"), (S, SampleThenSelectPlanner()), (None, REVISERS[1])]],
    *[(lambda plan=plan, planner=planner: mt.simulate("x", plan, planner, n=10, seed=0), "p")
      for plan, planner in [(S, "random"), (GRID, "random"), (BLOCKS, "random"), (RS, "random"), (None, REVISERS[0])]],
    (lambda: mt.estimate_kl([0.5, 0.5], RS, n=10, seed=0), "p"),
])
def test_refusals_name_the_argument(call, arg):
    with pytest.raises(ValueError, match=f"^{arg}: "):
        call()


def test_sampler_kl_refusal_says_what_to_use():
    with pytest.raises(ValueError, match=r"mt\.kl\(p, mt\.sampler_law"):
        mt.sampler_kl(P.table, BLOCKS)


# -- Monte Carlo against the exact law -------------------------------------------------------
N = 20000


def zmax(sim, q):
    """Largest per-cell |z| of the empirical frequencies (lost samples a cell of their own)
    against the law q; inf when a sample falls where q is 0."""
    K, d = q.K, q.d
    done = ~sim.lost
    freq = np.bincount(np.ravel_multi_index(sim.samples[done].T, q.table.shape), minlength=K**d) / len(sim.lost)
    probs = np.append(q.table.ravel(), q.lost)
    freq = np.append(freq, sim.lost.mean())
    if np.any(freq[probs == 0] > 0):
        return math.inf
    sd = np.sqrt(np.maximum(probs * (1 - probs), 1e-300) / len(sim.lost))
    return float(np.max(np.abs(freq - probs)[probs > 0] / sd[probs > 0]))


CASES = [
    (P, S, ConfidencePlanner(ties="lowest")),
    (CHAIN, S, "confidence"),
    (P, GRID, "random"),
    (P, BLOCKS, "random"),
    (CHAIN, BLOCKS, "confidence"),
    (P3, BLOCKS3, "entropy"),
    (P, RS, "random"),
    (CHAIN, RS, SampleThenSelectPlanner()),
    (CHAIN, S, SampleThenSelectPlanner(threshold=0.6)),
    (CHAIN, None, REVISERS[0]),
    (CHAIN, None, REVISERS[1]),
    (CHAIN, None, REVISERS[2]),
]


@pytest.mark.parametrize("p, plan, planner", CASES)
def test_simulate_follows_sampler_law(p, plan, planner):
    sim = mt.simulate(p, plan, planner, n=N, seed=11)
    assert zmax(sim, mt.sampler_law(p, plan, planner)) < 5


def test_the_frequency_check_rejects_a_wrong_law():
    """The check can fail: samples of one sampler against the law of a neighbour."""
    pairs = [
        ((CHAIN, BLOCKS, "confidence"), (CHAIN, BLOCKS.schedule, "confidence")),  # blocks dropped
        ((P, RS, "random"), (P, mt.Schedule((1, 3)), "random")),  # one composition of the mixture
        ((CHAIN, None, REVISERS[1]), (CHAIN, S, "random")),  # the corrector's steps dropped
        ((CHAIN, S, SampleThenSelectPlanner()), (CHAIN, S, "random")),  # selection ignored
    ]
    for (p, plan, planner), (p2, plan2, planner2) in pairs:
        sim = mt.simulate(p, plan, planner, n=N, seed=11)
        assert zmax(sim, mt.sampler_law(p2, plan2, planner2)) > 5


def test_simulate_records_of_the_revising_samplers():
    sim = mt.simulate(CHAIN, None, REVISERS[2], n=50, seed=0)
    assert sim.reveal_step is None and sim.steps is None and sim.forwards.shape == (50,)
    assert mt.simulate(CHAIN, None, REVISERS[0], n=50, seed=0).forwards is None


def test_simulate_block_plan_reveals_inside_the_blocks():
    sim = mt.simulate(P, BLOCKS, "confidence", n=200, seed=1)
    r = sim.reveal_step
    assert np.all(np.isin(r[:, [0, 2, 3]], (1, 2))) and np.all(r[:, 1] == 3)
    assert np.all((r[:, [0, 2, 3]] == 1).sum(axis=1) == 2)


def test_ties_in_simulate():
    a = mt.simulate(CHAIN, S, "confidence", n=N, seed=3, ties="lowest")
    assert zmax(a, mt.sampler_law(CHAIN, S, "confidence", ties="lowest")) < 5
    assert zmax(a, mt.sampler_law(CHAIN, S, "confidence", ties="random")) > 5


# -- estimate_kl ----------------------------------------------------------------------------
def test_estimate_kl_of_a_block_plan_is_its_kl():
    planner = ConfidencePlanner(ties="lowest")
    est = mt.estimate_kl(P, BLOCKS, planner, n=N, seed=2)
    assert est.kind == "kl"
    assert abs(est.zscore(mt.kl(P, mt.sampler_law(P, BLOCKS, planner)))) < 5


def test_estimate_kl_of_a_random_schedule_is_the_mixture_path_kl():
    est = mt.estimate_kl(CHAIN, RS, "random", n=N, seed=2)
    assert est.kind == "path_kl"
    ref = sum(w * mt.path_kl(CHAIN, mt.Schedule(c)) for c, w in RS.law.items())
    assert abs(est.zscore(ref)) < 5
    est = mt.estimate_kl(P, RS, ConfidencePlanner(ties="lowest"), n=N, seed=2)  # deterministic given c
    ref = sum(w * mt.kl(P, exact_run(P, mt.Schedule(c), ConfidencePlanner(ties="lowest")).law)
              for c, w in RS.law.items())
    assert est.kind == "path_kl" and abs(est.zscore(ref)) < 5
    assert set(np.unique(est.steps)) == {1, 2}  # (4,) in one step, (2, 2) and (1, 3) in two


# -- the law argument is p; law= warns for one release --------------------------------------
def test_law_keyword_is_deprecated():
    a = mt.simulate(P, S, n=20, seed=0)
    with pytest.warns(DeprecationWarning, match=r"simulate\(law=\.\.\.\) is now simulate\(p=\.\.\.\)"):
        b = mt.simulate(law=P, plan=S, n=20, seed=0)
    np.testing.assert_array_equal(a.samples, b.samples)
    with pytest.warns(DeprecationWarning, match=r"estimate_kl\(law=\.\.\.\) is now estimate_kl\(p=\.\.\.\)"):
        e = mt.estimate_kl(law=P, plan=S, n=20, seed=0)
    assert e.value == mt.estimate_kl(p=P, plan=S, n=20, seed=0).value
    with pytest.raises(TypeError, match="'p'"), pytest.warns(DeprecationWarning):  # positionally and as law=
        mt.simulate(P, law=P, n=20, seed=0)


def test_block_plan_with_confidence_is_the_semi_autoregressive_planner():
    """Two routes to LLaDA's semi-autoregressive decoding agree exactly: the plan
    semi_autoregressive_plan(d, B, S) with the confidence planner inside each block, and the
    SemiAutoregressivePlanner(B, S) on the flattened schedule (written independently)."""
    from mdmtheory.samplers import SemiAutoregressivePlanner
    from mdmtheory.schedules import semi_autoregressive_plan

    for d, B, S, seed in ((6, 3, 2, 3), (6, 2, 1, 4), (5, 5, 3, 5)):
        p = mt.families.dirichlet(d, 2, alpha=0.5, seed=seed)
        plan = semi_autoregressive_plan(d, B, S)
        a = mt.sampler_law(p, plan, "confidence")
        b = mt.sampler_law(p, plan.schedule, SemiAutoregressivePlanner(block_length=B, steps_per_block=S))
        np.testing.assert_allclose(a.table, b.table, atol=1e-14)
