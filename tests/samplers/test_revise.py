"""Revising samplers (issue 20 §2): ReMDM remasking and the parallel corrector, exact chains
against an independent per-position enumeration, Monte Carlo, and (η = 0) the exact engine."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mdmtheory as mt
from mdmtheory.samplers import (CorrectorSampler, EditingSampler, RemaskingSampler, SampleThenSelectPlanner,
                                exact_run, revise_run, select_run)
from mdmtheory.testing import joints

from reference import conditional
from test_select import _select_brute, _tie_decides




def _remdm_brute(table, sampler):
    """Per position: revealed -> {kept, masked} ; masked -> {stays, value y}; all products.
    A backward recursion from each state (memoized on the state), unlike the exact chain's
    forward push of mass."""
    from functools import lru_cache

    d, K = table.ndim, table.shape[0]

    def reachable(vals):
        return table[tuple(vals[i] if i in vals else slice(None) for i in range(d))].sum() > 0

    @lru_cache(maxsize=None)
    def go(key, i):
        """(output law from state key at step i, its lost mass)."""
        vals = dict(key)
        out = np.zeros(table.shape)
        if i == sampler.steps:
            out[tuple(vals[j] for j in range(d))] = 1.0
            return out, 0.0
        sigma, beta = sampler.rates(i)
        options = []
        for j in range(d):
            if j in vals:
                options.append([(vals[j], 1 - sigma), (None, sigma)])
            else:
                c = conditional(table, vals, j)
                options.append([(None, 1 - beta)] + [(y, beta * c[y]) for y in range(K)])
        lost = 0.0
        for combo in itertools.product(*options):
            w = 1.0
            for _, pr in combo:
                w *= pr
            if w == 0:
                continue
            nv = {j: v for j, (v, _) in enumerate(combo) if v is not None}
            if len(nv) < d and nv and not reachable(nv):
                lost += w
                continue
            sub, sl = go(tuple(sorted(nv.items())), i + 1)
            out = out + w * sub
            lost += w * sl
        return out, lost

    return go((), 0)


SAMPLERS = [RemaskingSampler.uniform(3, 0.5, "cap"), RemaskingSampler.uniform(4, 0.3, "rescale"),
            RemaskingSampler((0.0, 0.2, 0.7, 1.0), 0.9, "cap")]


@settings(max_examples=30, deadline=None)
@given(st.one_of(joints(d=(2, 3), K=(2, 3)), joints(d=(4, 4), K=(2, 2))), st.sampled_from(SAMPLERS))
def test_remdm_exact_chain_is_the_per_position_enumeration(p, sampler):
    run = revise_run(p, sampler)
    ref, lost = _remdm_brute(p.table, sampler)
    np.testing.assert_allclose(run.law.table, ref, atol=1e-12)
    assert run.law.lost == pytest.approx(lost, abs=1e-12)


@settings(max_examples=4, deadline=None)
@given(joints(d=(5, 5), K=(2, 2)), st.sampled_from(SAMPLERS[:2]))
def test_remdm_exact_chain_d5(p, sampler):
    run = revise_run(p, sampler)
    ref, lost = _remdm_brute(p.table, sampler)
    np.testing.assert_allclose(run.law.table, ref, atol=1e-12)
    assert run.law.lost == pytest.approx(lost, abs=1e-12)


@settings(max_examples=20, deadline=None)
@given(joints(d=(2, 4), K=(2, 2)), st.sampled_from([(0.0, 0.5, 1.0), (0.0, 0.25, 0.6, 1.0), (0.0, 1.0)]))
def test_eta_zero_is_mdlm_the_bernoulli_grid_of_the_engine(p, alphas):
    run = revise_run(p, RemaskingSampler(alphas, 0.0))
    ref = exact_run(p, mt.Grid(alphas)).law
    np.testing.assert_allclose(run.law.table, ref.table, atol=1e-12)
    assert run.law.lost == pytest.approx(ref.lost, abs=1e-12)


def _z_check(p, law, samples, lost, n):
    q = law.table.ravel()
    ok = ~lost
    freq = np.bincount(np.ravel_multi_index(samples[ok].T, p.table.shape), minlength=q.size) / n
    se = np.sqrt(np.maximum(q * (1 - q), 1e-12) / n)
    assert np.all(np.abs(freq - q) / se < 4.5)
    L = law.lost
    assert abs(lost.mean() - L) <= 4.5 * np.sqrt(max(L * (1 - L), 1e-12) / n)


@pytest.mark.parametrize("sampler", SAMPLERS + [CorrectorSampler(mt.Schedule((2, 1, 1)), k=1),
                                                CorrectorSampler(mt.Schedule((2, 2)), k=2)])
def test_monte_carlo_agrees_with_the_exact_chain(sampler):
    p = mt.families.dirichlet(4, 2, alpha=0.5, seed=3)
    n = 20000
    run = revise_run(p, sampler)
    sim = sampler.simulate(p, n=n, seed=1)
    samples, lost = sim.samples, sim.lost
    _z_check(p, run.law, samples, lost, n)


def test_corrector_against_hand_enumeration_on_a_chain():
    # d = 3: one step of 2 random positions, a corrector redrawing the least likely one, one step
    p = mt.families.markov_chain([[0.8, 0.2], [0.3, 0.7]], 3)
    T = p.table
    out = np.zeros(T.shape)
    for B in itertools.combinations(range(3), 2):
        for ys in itertools.product(range(2), repeat=2):
            vals = dict(zip(B, ys))
            w = 1 / 3 * np.prod([conditional(T, {}, j)[y] for j, y in vals.items()])
            loo = {j: conditional(T, {i: v for i, v in vals.items() if i != j}, j)[vals[j]] for j in vals}
            r = min(vals, key=lambda j: (round(loo[j], 12), j))
            rest = {i: v for i, v in vals.items() if i != r}
            c = conditional(T, rest, r)
            for y in range(2):
                v2 = {**rest, r: y}
                last = [j for j in range(3) if j not in v2][0]
                c2 = conditional(T, v2, last)
                for z in range(2):
                    v3 = {**v2, last: z}
                    out[tuple(v3[j] for j in range(3))] += w * c[y] * c2[z]
    run = revise_run(p, CorrectorSampler(mt.Schedule((2, 1)), k=1, ties="lowest"))  # ties to the lowest j
    np.testing.assert_allclose(run.law.table, out, atol=1e-14)
    assert run.forwards == 3


def test_bad_input():
    with pytest.raises(ValueError, match=r"^alphas:"):
        RemaskingSampler((0.0, 0.5))
    with pytest.raises(ValueError, match=r"^eta:"):
        RemaskingSampler.uniform(3, 1.5)
    with pytest.raises(ValueError, match=r"^schedule:"):
        RemaskingSampler.uniform(3, 0.1, "loop")
    with pytest.raises(ValueError, match=r"^k:"):
        CorrectorSampler(mt.Schedule((2, 2)), k=0)
    with pytest.raises(ValueError, match=r"^after:"):
        CorrectorSampler(mt.Schedule((2, 2)), after=(5,))
    with pytest.raises(ValueError, match=r"^planner:"):
        revise_run(mt.families.parity(3), mt.Schedule((3,)))
    with pytest.raises(ValueError, match=r"^p: the exact revising chain"):
        revise_run(mt.families.dirichlet(9, 3, seed=0), RemaskingSampler.uniform(2))


# -- editing (LLaDA2.1, diffusers editing_threshold) -------------------------------------------
def test_editing_that_never_fires_is_sample_then_select():
    p = mt.families.dirichlet(4, 2, alpha=2.0, seed=1)  # no conditional near 1: nothing passes 0.999
    # threshold 0.55 commits the last mask early with probability ~0.02 (at 0.6 it never does on
    # this law: both forwards are then 3 and only rounding could order them)
    for plan, th in ((mt.Schedule((2, 2)), None), (mt.Schedule((1, 1, 2)), 0.55)):
        run = revise_run(p, EditingSampler(plan, editing_threshold=0.999, threshold=th))
        ref = select_run(p, plan, SampleThenSelectPlanner(th, 1.0, "tempered"))
        np.testing.assert_allclose(run.law.table, ref.law.table, atol=1e-12)
        if th is None:  # the block ends with its S-th mask step: no post step
            assert run.forwards == pytest.approx(plan.steps)
        else:  # one post step (which edits nothing) where a threshold committed the last mask early:
            # the pass the pipeline makes without editing too (SelectRun.forwards)
            assert run.forwards == pytest.approx(ref.forwards, abs=1e-12)
            assert run.forwards > ref.mask_steps


@pytest.mark.parametrize("eth, post", [(0.5, 16), (0.3, 2), (0.6, 0)])
def test_editing_monte_carlo_agrees_with_the_exact_chain(eth, post):
    p = mt.families.markov_chain([[0.85, 0.15], [0.25, 0.75]], 4)
    sampler = EditingSampler(mt.Schedule((2, 2)), editing_threshold=eth, max_post_steps=post)
    run = revise_run(p, sampler)
    n = 20000
    sim = sampler.simulate(p, n=n, seed=3)
    samples, lost, fw = sim.samples, sim.lost, sim.forwards
    _z_check(p, run.law, samples, lost, n)
    assert abs(fw.mean() - run.forwards) < 4.5 * fw.std() / np.sqrt(n) + 1e-9
    assert fw.max() <= 2 + post + 1


def test_editing_bad_input():
    with pytest.raises(ValueError, match=r"^editing_threshold:"):
        EditingSampler(mt.Schedule((2, 2)), editing_threshold=0.0)
    with pytest.raises(ValueError, match=r"^max_post_steps:"):
        EditingSampler(mt.Schedule((2, 2)), max_post_steps=-1)
    with pytest.raises(ValueError, match=r"^threshold:"):
        EditingSampler(mt.Schedule((2, 2)), threshold=1.5)


def _corrector_brute(table, plan, k, after, ties="lowest", untied=False):
    """Trajectories written out: an ordered choice of positions per step, then the k least
    likely revealed (loo conditional, ties by the rule ``ties`` as test_select's
    ``_select_brute`` writes it out on the negated likelihoods: lowest position, the average
    over every order, or torch.topk of the length-d vector) redrawn jointly-independently.
    A backward recursion memoized on the state. ``untied``: only the runs in which no tie
    decided a choice (their total mass is 1 - tie_mass on a law without lost mass)."""
    from functools import lru_cache

    d, K = table.ndim, table.shape[0]

    def reachable(vals):
        return table[tuple(vals[i] if i in vals else slice(None) for i in range(d))].sum() > 0

    @lru_cache(maxsize=None)
    def go(key, t):
        vals = dict(key)
        out = np.zeros(table.shape)
        if t == len(plan):
            out[tuple(vals[j] for j in range(d))] = 1.0
            return out
        free = [j for j in range(d) if j not in vals]
        subsets = list(itertools.combinations(free, min(plan[t], len(free))))
        for B in subsets:
            conds = {j: conditional(table, vals, j) for j in B}
            for ys in itertools.product(range(K), repeat=len(B)):
                w = np.prod([conds[j][y] for j, y in zip(B, ys)]) / len(subsets)
                if w == 0:
                    continue
                nv = {**vals, **dict(zip(B, ys))}
                if len(nv) < d and not reachable(nv):
                    continue
                if t not in after:
                    out = out + w * go(tuple(sorted(nv.items())), t + 1)
                    continue
                loo = {j: -round(float(conditional(table, {i: v for i, v in nv.items() if i != j}, j)[nv[j]]), 12)
                       for j in nv}
                if untied and _tie_decides(loo, sorted(nv), k, None):
                    continue
                for Rs, wr in _select_brute(loo, sorted(nv), k, None, ties, d).items():
                    R = sorted(Rs)
                    rest = {i: v for i, v in nv.items() if i not in R}
                    cr = {j: conditional(table, rest, j) for j in R}
                    for zs in itertools.product(range(K), repeat=len(R)):
                        w2 = w * wr * np.prod([cr[j][z] for j, z in zip(R, zs)])
                        if w2 == 0:
                            continue
                        n2 = {**rest, **dict(zip(R, zs))}
                        if len(n2) < d and not reachable(n2):
                            continue
                        out = out + w2 * go(tuple(sorted(n2.items())), t + 1)
        return out

    return go((), 0)


@settings(max_examples=25, deadline=None)
@given(st.one_of(joints(d=(2, 3), K=(2, 3)), joints(d=(4, 5), K=(2, 2))), st.integers(1, 2),
       st.sampled_from(["random", "lowest", "topk"]), st.data())
def test_corrector_exact_chain_is_the_trajectory_enumeration(p, k, ties, data):
    from reference import compositions

    sizes = data.draw(st.sampled_from([c for c in compositions(p.d) if len(c) >= 2]))
    sampler = CorrectorSampler(mt.Schedule(sizes), k=k, ties=ties)
    np.testing.assert_allclose(revise_run(p, sampler).law.table,
                               _corrector_brute(p.table, sizes, k, sampler.after, ties), atol=1e-12)


def _editing_brute(table, sizes, eth, max_post, th=None, ties="lowest", untied=False):
    """Editing trajectories written out forward by forward (diffusers' loop): candidates at every
    position (masked: p(.|x_A); committed: the leave-one-out conditional), commits by
    sample-then-select with the tempered (T = 1) confidence (ties as test_select's
    ``_select_brute`` writes them out), edits above eth, post-steps.
    A backward recursion memoized on (state, forwards, post-steps). ``untied``: only the runs in
    which no tie decided the commits (total mass 1 - tie_mass on a law without lost mass)."""
    from functools import lru_cache

    d, K = table.ndim, table.shape[0]

    def reachable(vals):
        return table[tuple(vals[i] if i in vals else slice(None) for i in range(d))].sum() > 0

    @lru_cache(maxsize=None)
    def go(key, f, post):
        vals = dict(key)
        out = np.zeros(table.shape)
        full = len(vals) == d
        if full:
            post += 1
        M = [j for j in range(d) if j not in vals]
        if any(len(vals) > 1 and not reachable({i: v for i, v in vals.items() if i != j}) for j in vals):
            return out  # off p's support, a position has no prediction: lost
        rows = {j: conditional(table, vals, j) for j in M}
        rows.update({j: conditional(table, {i: v for i, v in vals.items() if i != j}, j) for j in vals})
        k = min(sizes[min(f, len(sizes) - 1)], len(M))
        for ys in itertools.product(range(K), repeat=d):
            w = np.prod([rows[j][ys[j]] for j in range(d)])
            if w == 0:
                continue
            conf = {j: round(float(rows[j][ys[j]]), 12) for j in range(d)}
            edits = [j for j in vals if ys[j] != vals[j] and conf[j] > eth]
            if untied and M and _tie_decides(conf, M, k, th):
                continue
            commits = _select_brute({j: conf[j] for j in M}, M, k, th, ties, d) if M else {frozenset(): 1.0}
            for commit, wc in commits.items():
                nv = {**vals, **{j: ys[j] for j in commit}, **{j: ys[j] for j in edits}}
                if (full and (not edits or post > max_post)) or (not full and f + 1 >= len(sizes)):
                    out[tuple(nv[j] for j in range(d))] += w * wc
                    continue
                if len(nv) < d and not reachable(nv):
                    continue
                out = out + w * wc * go(tuple(sorted(nv.items())), f + 1, post)
        return out

    return go((), 0, 0)


@settings(max_examples=15, deadline=None)
@given(st.one_of(joints(d=(2, 3), K=(2, 2)), joints(d=(4, 4), K=(2, 2))), st.sampled_from([0.3, 0.6]),
       st.integers(0, 2), st.sampled_from([None, 0.6]), st.sampled_from(["random", "lowest", "topk"]), st.data())
def test_editing_exact_chain_is_the_trajectory_enumeration(p, eth, post, th, ties, data):
    from reference import compositions

    sizes = data.draw(st.sampled_from(list(compositions(p.d))))
    run = revise_run(p, EditingSampler(mt.Schedule(sizes), editing_threshold=eth, threshold=th, max_post_steps=post,
                                       ties=ties))
    np.testing.assert_allclose(run.law.table, _editing_brute(p.table, sizes, eth, post, th, ties), atol=1e-12)


def test_editing_off_support_outputs_and_lost_mass_agree_with_monte_carlo():
    p = mt.Joint(np.array([[[0.0, 0.0], [0.5, 0.0]], [[0.0, 0.0], [0.0, 0.5]]]))  # x1 = 1, x0 = x2
    sampler = EditingSampler(mt.Schedule((3,)), editing_threshold=0.3, max_post_steps=2)
    run = revise_run(p, sampler)
    np.testing.assert_allclose(run.law.table, _editing_brute(p.table, (3,), 0.3, 2, None, "random"), atol=1e-12)
    n = 20000
    sim = sampler.simulate(p, n=n, seed=5)
    samples, lost = sim.samples, sim.lost
    _z_check(p, run.law, samples, lost, n)


@settings(max_examples=3, deadline=None)
@given(joints(d=(5, 5), K=(2, 2)), st.sampled_from([(2, 2, 1), (3, 2)]))
def test_editing_exact_chain_d5(p, sizes):
    run = revise_run(p, EditingSampler(mt.Schedule(sizes), editing_threshold=0.5, max_post_steps=1))
    np.testing.assert_allclose(run.law.table, _editing_brute(p.table, sizes, 0.5, 1, None, "random"), atol=1e-12)


# -- beyond the old dict chain's size limit ----------------------------------------------------
def test_corrector_exact_chain_d7_against_the_trajectory_enumeration():
    # d = 7, K = 2 was refused by the former chain (its size limit); ~4 s of enumeration
    p = mt.families.dirichlet(7, 2, alpha=0.5, seed=7)
    # (a Dirichlet law has no ties; "lowest" keeps the enumeration's ranking to one sort)
    sampler = CorrectorSampler(mt.Schedule((2, 2, 2, 1)), k=1, ties="lowest")
    ref = _corrector_brute(p.table, (2, 2, 2, 1), 1, sampler.after, "lowest")
    np.testing.assert_allclose(revise_run(p, sampler).law.table, ref, atol=1e-12)


@pytest.mark.slow
def test_remdm_exact_chain_d7_against_the_per_position_enumeration():
    p = mt.families.dirichlet(7, 2, alpha=0.5, seed=7)
    sampler = RemaskingSampler((0.0, 0.5, 0.8, 1.0), 0.5, "rescale")  # remasks at the middle step
    run = revise_run(p, sampler)
    ref, lost = _remdm_brute(p.table, sampler)
    np.testing.assert_allclose(run.law.table, ref, atol=1e-12)
    assert run.law.lost == pytest.approx(lost, abs=1e-12)


def test_size_limits_name_the_monte_carlo_route():
    from mdmtheory.samplers.revise import MAX_REVISE_WORK, _terms_bound

    with pytest.raises(ValueError, match=r"^p: the exact revising chain .*simulate\(\)"):
        revise_run(mt.families.dirichlet(9, 2, seed=0), RemaskingSampler.uniform(3, 0.2))
    with pytest.raises(ValueError, match=r"^p: the exact editing chain .*simulate\(\)"):
        revise_run(mt.families.dirichlet(10, 2, seed=0), EditingSampler(mt.Schedule((2,) * 5)))
    # the bound is what one step may cost: (3K + 1)^d terms for ReMDM (2 options per revealed
    # position, K + 1 per masked one, summed over the K^|A| states of each revealed set)
    assert _terms_bound(RemaskingSampler.uniform(3), 8, 2) == 7**8 <= MAX_REVISE_WORK < 7**9
