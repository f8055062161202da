"""Tie rules of the scored position planners (mdmtheory.samplers.ties, issue 26 §2) on the
exact engine and in Monte Carlo.

The reference is a forward recursion over states (A, x_A) written here from the
definitions: at each state the planner's scores are summed from the raw table, and the
reveal set under a rule is

* ``"random"``: the average over every permutation of the free positions used as a
  secondary key (greedy: lowest group, best score, among the scores within 1e-12 of the best
  the smallest key), each permutation weight 1/n! — i.e. uniform over the orders of the tied
  positions, drawn afresh at every state;
* ``"lowest"``: the same greedy order with the position index as key;
* ``"topk"``: ``torch.topk`` called here on the vector LLaDA's ``generate.py`` builds
  (ML-GSAI/LLaDA@41760b91240e934e7612b08d45a0642d680c098a: a 1-D float64 vector over the
  sequence, ``-inf`` at revealed positions and after the current block), with the scores of
  one tie cluster made bit-identical.

The tie rule "decided" a state when different keys give different sets; ``tie_mass`` is the
probability that the run passes through such a state. Expected values never come from the code under test.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
import torch

import mdmtheory as mt
from mdmtheory.laws import families
from mdmtheory.samplers import (
    ConfidencePlanner,
    EntropyBudgetPlanner,
    EntropyPlanner,
    MarginPlanner,
    PositionCalibratedPlanner,
    SemiAutoregressivePlanner,
    ThresholdPlanner,
    estimate_kl,
    exact_run,
    sampler_kl,
    simulate,
    tie_spread,
)
from mdmtheory.samplers.adaptive import ranked_choice, ranking

TOL = 1e-12  # the documented tie tolerance
RULES = ("random", "lowest", "topk")


# -- brute-force reference ------------------------------------------------------------------
def cond(table, given, j):
    """p(x_j | x_A = given) from the raw table, None where p(x_A) = 0."""
    d = table.ndim
    idx = tuple(given.get(i, slice(None)) for i in range(d))
    tot = float(np.sum(table[idx]))
    if tot <= 0:
        return None
    return [float(np.sum(table[tuple(given.get(i, v if i == j else slice(None)) for i in range(d))])) / tot
            for v in range(table.shape[0])]


def h(c):
    return -sum(v * math.log(v) for v in c if v > 0)


def spec_rank(spec, d, t, size, conds, free):
    """(scores, groups, k, extra) of a planner at one state, from its documented definition:
    the step reveals ``extra`` and the top ``k`` free positions by (group, score)."""
    kind = spec[0]
    zero = {j: 0 for j in range(d)}
    if kind == "confidence":
        return {j: max(conds[j]) for j in free}, zero, size, set()
    if kind == "margin":
        return {j: sorted(conds[j])[-1] - sorted(conds[j])[-2] for j in free}, zero, size, set()
    if kind == "entropy":
        return {j: -h(conds[j]) for j in free}, zero, size, set()
    if kind == "semi_ar":
        L = spec[1]
        return {j: max(conds[j]) for j in free}, {j: j // L for j in range(d)}, size, set()
    if kind == "pc":
        _, bg, lam, alpha, L = spec
        sc = {}
        for j in free:
            top = max(conds[j])
            xhat = min(v for v in range(len(conds[j])) if conds[j][v] >= top - TOL)
            sc[j] = math.exp(-lam * (j % L)) * min(-top * math.log(bg[xhat]), alpha)
        return sc, {j: j // L for j in range(d)}, size, set()
    if kind == "threshold":
        conf = {j: max(conds[j]) for j in free}
        above = {j for j in free if conf[j] >= spec[1] - TOL}
        return conf, zero, 0 if above else 1, above  # the arg max only when nothing reaches tau
    if kind == "budget":
        H = {j: h(conds[j]) for j in free}
        Hs = sorted(H.values())
        m, acc = 1, Hs[0]
        while m < len(Hs) and acc <= spec[1] + TOL:
            acc += Hs[m]
            m += 1
        return {j: -H[j] for j in free}, zero, m, set()
    raise AssertionError(kind)


def greedy(free, scores, group, key):
    """Lowest group, best score; among the scores within TOL of the best, the smallest key."""
    rest, out = list(free), []
    while rest:
        g = min(group[j] for j in rest)
        cand = [j for j in rest if group[j] == g]
        best = max(scores[j] for j in cand)
        pick = min((j for j in cand if scores[j] >= best - TOL), key=lambda j: key[j])
        out.append(pick)
        rest.remove(pick)
    return out


def topk_set(free, scores, group, k, d, layout="sequence"):
    """LLaDA's selection: the current block's free positions in a length-d float64 vector,
    -inf elsewhere; equal scores (chained within TOL) bit-identical; torch.topk. ``layout =
    "block"``: diffusers' BlockRefinementScheduler (diffusers 0.42.1, schedulers/
    scheduling_block_refinement.py, ``step``): the vector is the block's positions only."""
    order = greedy(free, scores, group, {j: j for j in range(d)})
    if k == 0:
        return set()
    gb = group[order[k - 1]]  # the block of the k-th position: the block being decoded
    before = {j for j in free if group[j] < gb}
    here = sorted((j for j in free if group[j] == gb), key=lambda j: -scores[j])
    canon, head = {}, None
    for i, j in enumerate(here):
        if i == 0 or scores[here[i - 1]] - scores[j] > TOL:
            head = scores[j]
        canon[j] = head
    v = torch.full((d,), -math.inf, dtype=torch.float64)
    for j in here:
        v[j] = canon[j]
    if layout == "block":
        block = [j for j in range(d) if group[j] == gb]
        return before | {block[int(i)] for i in torch.topk(v[block], k - len(before)).indices}
    return before | {int(i) for i in torch.topk(v, k - len(before)).indices}


def reveal_sets(spec, rule, d, t, size, conds, free):
    """[(B, weight)] at one state under ``rule``, and whether the rule decided the set."""
    scores, group, k, extra = spec_rank(spec, d, t, size, conds, free)
    by_perm = {}
    for perm in itertools.permutations(free):
        key = {j: r for r, j in enumerate(perm)}
        B = frozenset(greedy(free, scores, group, key)[:k]) | extra
        by_perm[B] = by_perm.get(B, 0) + 1
    decided = len(by_perm) > 1
    if rule == "random":
        n = sum(by_perm.values())
        return [(B, c / n) for B, c in by_perm.items()], decided
    if rule == "lowest":
        return [(frozenset(greedy(free, scores, group, {j: j for j in range(d)})[:k]) | extra, 1.0)], decided
    layout = spec[2] if spec[0] == "semi_ar" and len(spec) > 2 else "sequence"
    return [(frozenset(topk_set(free, scores, group, k, d, layout)) | extra, 1.0)], decided


def bruteforce(table, spec, rule, sizes):
    """(q, lost, tie_mass) by propagating the mass of every state (A, x_A) forward; a state
    also records whether its run has met a state where the rule decided (tie_mass: the mass
    of the runs that ever do)."""
    d, K = table.ndim, table.shape[0]
    q = np.zeros((K,) * d)
    lost = tie = 0.0
    states = {((), False): 1.0}  # (sorted ((j, x_j), ...), met a decided state) -> mass
    t = 0
    while states:
        nxt = {}
        for (st, met), m in states.items():
            given = dict(st)
            free = [j for j in range(d) if j not in given]
            conds = {j: cond(table, given, j) for j in free}
            if conds[free[0]] is None:  # p(x_A) = 0: stuck
                lost += m
                continue
            size = None if sizes is None else sizes[t]
            sets, decided = reveal_sets(spec, rule, d, t, size, conds, free)
            tie += m * (decided and not met)
            met = met or decided
            for B, w in sets:
                B = sorted(B)
                for ys in itertools.product(range(K), repeat=len(B)):
                    pr = m * w * math.prod(conds[j][y] for j, y in zip(B, ys))
                    if pr == 0:
                        continue
                    g2 = {**given, **dict(zip(B, ys))}
                    if len(g2) == d:
                        q[tuple(g2[i] for i in range(d))] += pr
                    else:
                        key = (tuple(sorted(g2.items())), met)
                        nxt[key] = nxt.get(key, 0.0) + pr
        states = nxt
        t += 1
    return q, lost, tie


def make(spec, rule):
    kind = spec[0]
    if kind == "confidence":
        return ConfidencePlanner(ties=rule)
    if kind == "margin":
        return MarginPlanner(ties=rule)
    if kind == "entropy":
        return EntropyPlanner(ties=rule)
    if kind == "semi_ar":
        return SemiAutoregressivePlanner(spec[1], ties=rule, topk_layout=spec[2] if len(spec) > 2 else "sequence")
    if kind == "pc":
        _, bg, lam, alpha, L = spec
        return PositionCalibratedPlanner(bg, lam=lam, alpha=alpha, block_length=L, ties=rule)
    if kind == "threshold":
        return ThresholdPlanner(spec[1], ties=rule)
    if kind == "budget":
        return EntropyBudgetPlanner(spec[1], ties=rule)
    raise AssertionError(kind)


MARKOV5 = families.markov_chain([[0.9, 0.1], [0.1, 0.9]], 5)  # symmetric: exact ties
DIRICHLET4 = families.dirichlet(4, 2, alpha=0.5, seed=3)  # no ties


def _switch5():
    """x_0 ~ (0.9, 0.1); given x_0 = 0 the other four are i.i.d. Bernoulli(0.7) (tied at every
    later state), given x_0 = 1 independent with distinct probabilities (no ties): the tie rule
    decides on some paths only, and more than once on them."""
    t = np.zeros((2,) * 5)
    for x in itertools.product(range(2), repeat=5):
        probs = [0.7] * 4 if x[0] == 0 else [0.55, 0.65, 0.75, 0.85]
        t[x] = (0.9 if x[0] == 0 else 0.1) * math.prod(pr if v else 1 - pr for pr, v in zip(probs, x[1:]))
    return mt.Joint(t)


LAWS = {"markov5": MARKOV5, "dirichlet4": DIRICHLET4, "ising4": families.ising_chain(4, coupling=0.8),
        "switch5": _switch5()}
SPECS = [
    (("confidence",), (2, 2, 1)),
    (("margin",), (1, 3, 1)),
    (("entropy",), (3, 2)),
    (("semi_ar", 3), (2, 2, 1)),
    (("semi_ar", 3, "block"), (2, 2, 1)),
    (("pc", (0.4, 0.6), 0.0, 1.0, 3), (2, 2, 1)),
    (("pc", (0.4, 0.6), 0.3, 1.0, 2), (1, 2, 2)),
    (("threshold", 0.85), None),
    (("budget", 0.4), None),
]


@pytest.mark.parametrize("lname", sorted(LAWS))
@pytest.mark.parametrize("which", range(len(SPECS)))
def test_exact_law_matches_bruteforce_under_every_rule(lname, which):
    p = LAWS[lname]
    spec, sizes = SPECS[which]
    if sizes is not None and sum(sizes) != p.d:
        sizes = tuple(mt.Schedule.constant(p.d, len(sizes)).sizes)
    plan = None if sizes is None else mt.Schedule(sizes)
    for rule in RULES:
        run = exact_run(p, plan, make(spec, rule))
        q, lost, tie = bruteforce(p.table, spec, rule, sizes)
        np.testing.assert_allclose(run.law.table, q, rtol=0, atol=1e-12, err_msg=f"{spec} {rule}")
        assert run.lost == pytest.approx(lost, abs=1e-12)
        assert run.tie_mass == pytest.approx(tie, abs=1e-12), (spec, rule)
        assert run.ties == rule


def test_tie_free_law_gives_one_law_and_no_tie_mass():
    p = families.dirichlet(5, 2, alpha=0.5, seed=7)
    for spec, sizes in SPECS:
        plan = None if sizes is None else mt.Schedule(tuple(mt.Schedule.constant(5, len(sizes)).sizes))
        runs = [exact_run(p, plan, make(spec, rule)) for rule in RULES]
        for r in runs:
            assert r.tie_mass == 0 and not r.depends_on_ties
            np.testing.assert_array_equal(r.law.table, runs[0].law.table)


def test_tie_mass_is_a_probability():
    """On the switch law the rule decides twice on the paths with x_0 = 0 (mass 0.9) and never
    otherwise (first step: x_0, the most confident): tie_mass = 0.9, not the 1.8 steps."""
    run = exact_run(LAWS["switch5"], mt.Schedule((1, 2, 1, 1)), ConfidencePlanner())
    assert run.tie_mass == pytest.approx(0.9, abs=1e-12)


def test_symmetric_chain_has_ties_and_the_rules_differ():
    run = exact_run(MARKOV5, mt.Schedule((2, 2, 1)), ConfidencePlanner())
    assert run.ties == "random" and run.tie_mass > 0 and run.depends_on_ties
    s = tie_spread(MARKOV5, mt.Schedule((2, 2, 1)), ConfidencePlanner())
    kls = {rule: mt.kl(MARKOV5, exact_run(MARKOV5, mt.Schedule((2, 2, 1)), ConfidencePlanner(ties=rule)).law)
           for rule in RULES}
    assert s.by_rule() == pytest.approx(kls, abs=0)
    assert s.differs and s.spread == pytest.approx(max(kls.values()) - min(kls.values()))
    assert s.tie_mass == pytest.approx(run.tie_mass)
    # a name resolves to the registered planner (default ties) and gives the same spread
    assert tie_spread(MARKOV5, mt.Schedule((2, 2, 1)), "confidence") == s
    # one token per step is exact under every rule: no spread although ties are met
    s1 = tie_spread(MARKOV5, mt.Schedule((1,) * 5), "entropy")
    assert not s1.differs and s1.tie_mass > 0


def test_tie_spread_refuses_a_planner_without_ties():
    with pytest.raises(ValueError, match="planner"):
        tie_spread(MARKOV5, mt.Schedule((2, 2, 1)), "left_to_right")
    with pytest.raises(ValueError, match="planner"):
        tie_spread(MARKOV5, mt.Schedule((2, 2, 1)), "random")


def test_general_moves_path_gives_the_same_law():
    """The planner's moves(ctx) (weights over x_A, one per resolution) through the engine's
    generic path agree with its sparse-chain fast path."""

    class Wrapped:
        name, needs_schedule, allows_empty = "wrapped", True, False

        def __init__(self, inner):
            self.inner = inner

        def moves(self, ctx):
            return self.inner.moves(ctx)

    for pl in (ConfidencePlanner(), SemiAutoregressivePlanner(2, ties="topk"), MarginPlanner(ties="lowest")):
        a = exact_run(MARKOV5, mt.Schedule((2, 2, 1)), pl).law.table
        b = exact_run(MARKOV5, mt.Schedule((2, 2, 1)), Wrapped(pl)).law.table
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-14)


def test_sampler_kl_follows_the_tie_rule():
    """JAX path: the random rule's weights are numpy constants of the chain plan."""
    pl = ConfidencePlanner()
    want = mt.kl(MARKOV5, exact_run(MARKOV5, mt.Schedule((2, 2, 1)), pl).law)
    assert float(sampler_kl(MARKOV5.table, mt.Schedule((2, 2, 1)), planner=pl)) == pytest.approx(want, rel=1e-10)


def test_ranking_is_the_lowest_rule():
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 3, size=(50, 6)).astype(float) / 2  # many ties
    free = rng.random((50, 6)) < 0.8
    free[:, 0] = True
    order = ranking(scores, free)
    for n in range(50):
        fr = [j for j in range(6) if free[n, j]]
        want = greedy(fr, dict(enumerate(scores[n])), {j: 0 for j in range(6)}, {j: j for j in range(6)})
        assert list(order[n, : len(fr)]) == want
        k = len(fr) // 2
        assert set(np.flatnonzero(ranked_choice(scores[n:n + 1], free[n:n + 1], k)[0])) == set(want[:k])


# -- Monte Carlo under "random" -------------------------------------------------------------
@pytest.mark.parametrize("planner, sizes", [
    (ConfidencePlanner(), (2, 2, 1)),
    (SemiAutoregressivePlanner(3), (2, 2, 1)),
    (ThresholdPlanner(0.85), None),
])
def test_simulate_follows_the_exact_mixture(planner, sizes):
    plan = None if sizes is None else mt.Schedule(sizes)
    q = exact_run(MARKOV5, plan, planner).law.table.ravel()
    n = 20000
    sim = simulate(MARKOV5, plan, planner, n=n, seed=5)
    assert not sim.lost.any()
    counts = np.bincount(np.ravel_multi_index(sim.samples.T, (2,) * 5), minlength=32)
    z = (counts / n - q) / np.sqrt(np.maximum(q * (1 - q), 1e-12) / n)
    assert np.max(np.abs(z)) < 5, np.max(np.abs(z))
    # the lowest rule's law is far from the mixture's: the test can fail
    q_low = exact_run(MARKOV5, plan, dataclasses.replace(planner, ties="lowest")).law.table.ravel()
    if np.abs(q_low - q).max() > 0.01:
        z_low = (counts / n - q_low) / np.sqrt(np.maximum(q_low * (1 - q_low), 1e-12) / n)
        assert np.max(np.abs(z_low)) > 5


def test_estimate_kl_is_the_path_kl_under_random_ties():
    sched = mt.Schedule((2, 2, 1))
    run = exact_run(MARKOV5, sched, ConfidencePlanner(), trajectory=True)
    est = estimate_kl(MARKOV5, sched, ConfidencePlanner(), n=6000, seed=2)
    assert est.kind == "path_kl"
    assert abs(est.zscore(run.path_kl)) < 5
    assert run.path_kl > mt.kl(MARKOV5, run.law) + 1e-3  # the mixture: path KL above KL
    for rule in ("lowest", "topk"):  # deterministic: L(x) = log p(x)/q(x)
        pl = ConfidencePlanner(ties=rule)
        est = estimate_kl(MARKOV5, sched, pl, n=3000, seed=3)
        assert est.kind == "kl"
        assert abs(est.zscore(mt.kl(MARKOV5, exact_run(MARKOV5, sched, pl).law))) < 5


def test_select_needs_rng_only_for_a_split_tie():
    probs = np.full((1, 3, 2), 0.5)
    free = np.ones((1, 3), dtype=bool)
    with pytest.raises(ValueError, match="rng"):
        ConfidencePlanner().select(0, 1, probs, free)
    assert ConfidencePlanner().select(0, 3, probs, free).all()  # nothing to decide
    got = {int(np.flatnonzero(ConfidencePlanner().select(0, 1, probs, free, rng=np.random.default_rng(s))[0])[0])
           for s in range(40)}
    assert got == {0, 1, 2}
    assert np.flatnonzero(ConfidencePlanner(ties="lowest").select(0, 1, probs, free)[0]).tolist() == [0]


# -- validation -----------------------------------------------------------------------------
@pytest.mark.parametrize("make_bad", [
    lambda: ConfidencePlanner(ties="foo"),
    lambda: MarginPlanner(ties="foo"),
    lambda: EntropyPlanner(ties=None),
    lambda: SemiAutoregressivePlanner(2, ties="foo"),
    lambda: SemiAutoregressivePlanner(2, topk_layout="foo"),
    lambda: PositionCalibratedPlanner((0.5, 0.5), topk_layout="row"),
    lambda: PositionCalibratedPlanner((0.5, 0.5), ties="foo"),
    lambda: ThresholdPlanner(0.5, ties="foo"),
    lambda: EntropyBudgetPlanner(0.5, ties="Random"),
])
def test_bad_ties(make_bad):
    with pytest.raises(ValueError, match="ties|topk_layout"):
        make_bad()


def test_topk_layouts_differ_where_the_block_is_shorter_than_the_sequence():
    """torch's tie order depends on the vector's length: LLaDA's and diffusers' layouts give
    different laws on the symmetric chain with blocks of 3 (both checked above)."""
    sched = mt.Schedule((2, 2, 1))
    a = exact_run(MARKOV5, sched, SemiAutoregressivePlanner(3, ties="topk")).law.table
    b = exact_run(MARKOV5, sched, SemiAutoregressivePlanner(3, ties="topk", topk_layout="block")).law.table
    assert np.abs(a - b).max() > 1e-3
    c = exact_run(MARKOV5, sched, SemiAutoregressivePlanner(5, ties="topk", topk_layout="block")).law.table
    d = exact_run(MARKOV5, sched, SemiAutoregressivePlanner(5, ties="topk")).law.table
    np.testing.assert_array_equal(c, d)  # one block: the same vector


# -- docs/samplers.md -----------------------------------------------------------------------
def test_docs_ties_table():
    """Every entry of the table in docs/samplers.md, section Ties, recomputed."""
    import pathlib

    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "samplers.md").read_text(encoding="utf-8")
    section = text[text.index("## Ties"):]
    section = section[: section.index("\n## ", 1)]
    rows = [line.strip("|").split("|") for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| law")]
    laws = families.sampler_laws(6)
    assert sorted(r[0].strip() for r in rows) == sorted(laws)
    sched = mt.Schedule((2, 2, 2))
    for r in rows:
        p = laws[r[0].strip()]
        runs = {rule: exact_run(p, sched, ConfidencePlanner(ties=rule)) for rule in RULES}
        want = [mt.kl(p, runs[rule].law) for rule in RULES]
        want += [runs["random"].tie_mass, mt.kl(p, exact_run(p, sched, "random").law)]
        assert [float(v) for v in r[1:]] == pytest.approx([round(w, 4) for w in want], abs=1e-12), r[0]


def test_bridge_factorization_error_draws_split_ties():
    """mdmtheory.bridge's path estimator on the exact model of the tied chain: under
    ties="random" it estimates the exact path KL (its tie draws are counter-based uniforms)."""
    bridge = pytest.importorskip("mdmtheory.bridge")
    sched = mt.Schedule((2, 2, 1))
    xs = np.asarray(mt.laws.as_oracle(MARKOV5).sample(3000, np.random.default_rng(1)), dtype=np.int64)
    est = bridge.estimate_factorization_error(bridge.ExactModel(MARKOV5), xs, sched, ConfidencePlanner(), seed=4)
    run = exact_run(MARKOV5, sched, ConfidencePlanner(), trajectory=True)
    assert est.kind == "path_kl"
    assert abs(est.value - run.path_kl) < 5 * est.stderr, (est.value, run.path_kl, est.stderr)


def test_report_says_whether_the_planners_depend_on_ties():
    from mdmtheory.report import build_report

    p = families.markov_chain([[0.9, 0.1], [0.1, 0.9]], 4)
    line = build_report(p, steps=[1, 2, 4], planners=("random", "confidence", "left_to_right")).planners["ties"]
    assert line["depends"] and line["T"] == 2 and list(line["spread"]) == ["confidence"]
    want = {rule: mt.kl(p, exact_run(p, mt.Schedule((2, 2)), ConfidencePlanner(ties=rule)).law) for rule in RULES}
    assert line["spread"]["confidence"] == pytest.approx(want, abs=0)
    free = build_report(DIRICHLET4, steps=[1, 2, 4], planners=("random", "confidence")).planners["ties"]
    assert not free["depends"] and free["spread"] == {}


def test_tie_spread_dispatches_to_select_run_and_revise_run():
    """tie_spread reruns sample-then-select through select_run and the revising samplers through
    revise_run (whose tie rules and laws are checked in tests/samplers/test_ties_select.py)."""
    from mdmtheory.samplers import CorrectorSampler, SampleThenSelectPlanner, revise_run, select_run

    if not all("ties" in {f.name for f in dataclasses.fields(c)} for c in (SampleThenSelectPlanner, CorrectorSampler)):
        pytest.skip("sample-then-select / the corrector have no ties= in this checkout")
    p = families.markov_chain([[0.9, 0.1], [0.1, 0.9]], 4)
    sched = mt.Schedule((2, 2))
    s = tie_spread(p, sched, SampleThenSelectPlanner())
    want = {rule: mt.kl(p, select_run(p, sched, SampleThenSelectPlanner(ties=rule)).law) for rule in RULES}
    assert s.by_rule() == pytest.approx(want, abs=0) and s.differs
    c = CorrectorSampler(sched, 1)
    s = tie_spread(p, None, c)
    want = {rule: mt.kl(p, revise_run(p, dataclasses.replace(c, ties=rule)).law) for rule in RULES}
    assert s.by_rule() == pytest.approx(want, abs=0)
    with pytest.raises(ValueError, match="^plan: .*carries its own plan"):  # another plan than the one it carries
        tie_spread(p, mt.Schedule((1, 3)), c)
