"""Sample-then-select (issue 20 §1): the exact law's product formula against the enumeration
of every candidate vector, Monte Carlo against the exact law, the selection rule against
LLaDA's and diffusers' own rule as their sources state it, and the bias it produces."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mdmtheory as mt
from mdmtheory.samplers import SampleThenSelectPlanner, select_run, selection_bias, simulate
from mdmtheory.samplers.select import select_commits, tempered
from mdmtheory.testing import joints

from reference import compositions


def _cond(table, vals):
    """p(x_j = · | revealed values) for every j, by slicing the dense table (no marginals code)."""
    d = table.ndim
    idx = tuple(vals[j] if j in vals else slice(None) for j in range(d))
    sub = table[idx]
    free = [j for j in range(d) if j not in vals]
    tot = sub.sum()
    out = {}
    for a, j in enumerate(free):
        axes = tuple(b for b in range(len(free)) if b != a)
        out[j] = sub.sum(axis=axes) / tot
    return out


def _select_brute(conf, free, k, threshold, ties="lowest", d=None):
    """The rule written out, as {committed set: probability}: sort masked positions by
    confidence desc, with confidences equal to 12 decimals tied, and ties broken by the
    position (``"lowest"``), by every order of the masked positions, each with probability
    1/m! (``"random"``: the average over all orders of the tied positions), or by what
    torch.topk returns for the length-d float64 vector with -inf at revealed positions
    (``"topk"``, LLaDA's generate.py and diffusers' BlockRefinementScheduler.step)."""
    conf = {j: round(float(c), 12) for j, c in conf.items()}
    k = min(k, len(free))
    if threshold is not None:
        above = [j for j in free if conf[j] > threshold]
        if len(above) >= k:
            return {frozenset(above): 1.0}
    if ties == "lowest":
        return {frozenset(sorted(free, key=lambda j: (-conf[j], j))[:k]): 1.0}
    if ties == "topk":
        import torch

        v = torch.full((d,), -np.inf, dtype=torch.float64)
        for j in free:
            v[j] = conf[j]
        return {frozenset(torch.topk(v, k).indices.tolist()): 1.0}
    out = {}
    perms = list(itertools.permutations(free))
    for perm in perms:
        rank = {j: i for i, j in enumerate(perm)}
        B = frozenset(sorted(free, key=lambda j: (-conf[j], rank[j]))[:k])
        out[B] = out.get(B, 0.0) + 1.0 / len(perms)
    return out


def _tie_decides(conf, free, k, threshold):
    """Whether the tie rule decides the set of :func:`_select_brute`: the top-k branch (fewer
    than k above the threshold) with the k-th and (k+1)-th confidences equal to 12 decimals."""
    c = sorted((round(float(conf[j]), 12) for j in free), reverse=True)
    k = min(k, len(free))
    if threshold is not None and sum(x > threshold for x in c) >= k:
        return False
    return 0 < k < len(c) and c[k - 1] == c[k]


def _brute(table, sizes, planner):
    """Enumerate every trajectory: at each state every candidate vector of the masked
    positions. Returns the law, the expected mask steps (steps with something masked), the
    expected commits per step and the expected model calls of diffusers' LLaDA2Pipeline (its
    block loop calls the model once more when the masks ran out before the S-th step)."""
    d, K = table.ndim, table.shape[0]
    out = np.zeros(table.shape)
    forwards, commits, extra = [0.0], np.zeros(len(sizes)), [0.0]
    T = planner.temperature

    def sdist(pj):
        if T == 0:  # the arg max, ties (to 12 decimals: the documented rule) to the lowest token
            e = np.zeros(K)
            e[int(np.argmax(np.round(pj, 12)))] = 1.0
            return e
        w = np.where(pj > 0, pj ** (1.0 / T), 0.0)
        return w / w.sum()

    def go(vals, t, prob):
        free = [j for j in range(d) if j not in vals]
        if not free:
            out[tuple(vals[j] for j in range(d))] += prob
            if t < len(sizes):  # t mask steps, fewer than S: the pipeline's pass that finds no mask
                extra[0] += prob
            return
        if table[tuple(vals[j] if j in vals else slice(None) for j in range(d))].sum() == 0:
            return  # a prefix p never produces: lost
        forwards[0] += prob
        c = _cond(table, vals)
        S = {j: sdist(c[j]) for j in free}
        for ys in itertools.product(range(K), repeat=len(free)):
            w = np.prod([S[j][y] for j, y in zip(free, ys)])
            if w == 0:
                continue
            y = dict(zip(free, ys))
            conf = {j: (S[j] if planner.confidence == "tempered" and planner.temperature > 0 else c[j])[y[j]] for j in free}
            for B, wb in _select_brute(conf, free, sizes[t], planner.threshold, planner.ties, d).items():
                commits[t] += prob * w * wb * len(B)
                nv = dict(vals)
                nv.update({j: y[j] for j in B})
                go(nv, t + 1, prob * w * wb)

    go({}, 0, 1.0)
    return out, forwards[0], commits, forwards[0] + extra[0]


def _brute_law(table, sizes, planner):
    return _brute(table, sizes, planner)[0]


PLANNERS = [SampleThenSelectPlanner(ties=r, **kw) for r in ("random", "lowest", "topk") for kw in
            (dict(), dict(temperature=0.0), dict(temperature=0.5), dict(temperature=2.0, confidence="tempered"),
             dict(threshold=0.6), dict(threshold=0.0, temperature=0.7))]


def _law_is_the_enumeration(p, which, data):
    sizes = data.draw(st.sampled_from(list(compositions(p.d))))
    planner = PLANNERS[which]
    run = select_run(p, mt.Schedule(sizes), planner)
    ref = _brute_law(p.table, sizes, planner)
    np.testing.assert_allclose(run.law.table, ref, atol=1e-12)
    assert run.law.lost == pytest.approx(1 - ref.sum(), abs=1e-12)


@pytest.mark.parametrize("which", range(len(PLANNERS)))
@settings(max_examples=3, deadline=None)
@given(p=joints(d=(2, 4), K=(2, 3)), data=st.data())
def test_exact_law_is_the_enumeration_of_every_candidate_vector(which, p, data):
    """Three derandomized laws per planner in make test; 300 under -m slow (below)."""
    _law_is_the_enumeration(p, which, data)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(joints(d=(2, 4), K=(2, 3)), st.integers(0, len(PLANNERS) - 1), st.data())
def test_exact_law_is_the_enumeration_many_cases(p, which, data):
    _law_is_the_enumeration(p, which, data)


@settings(max_examples=8, deadline=None)
@given(joints(d=(5, 5), K=(2, 2)), st.integers(0, len(PLANNERS) - 1), st.sampled_from([(2, 1, 2), (1, 4), (3, 2)]))
def test_d5_binary_laws(p, which, sizes):
    planner = PLANNERS[which]
    np.testing.assert_allclose(select_run(p, mt.Schedule(sizes), planner).law.table,
                               _brute_law(p.table, sizes, planner), atol=1e-12)


def test_one_token_per_step_without_threshold_is_still_biased_but_greedy_is_deterministic():
    p = mt.families.dirichlet(3, 2, alpha=0.5, seed=3)
    run = select_run(p, mt.Schedule((1, 1, 1)), SampleThenSelectPlanner(temperature=0.0))
    assert np.count_nonzero(run.law.table > 1e-15) == 1  # greedy: one output


def test_monte_carlo_agrees_with_the_exact_law():
    p = mt.families.dirichlet(4, 2, alpha=0.5, seed=1)
    for planner, sizes in ((SampleThenSelectPlanner(), (2, 2)), (SampleThenSelectPlanner(threshold=0.6), (1, 1, 1, 1))):
        ex = select_run(p, mt.Schedule(sizes), planner).law.table.ravel()
        n = 20000
        sim = simulate(p, mt.Schedule(sizes), planner, n=n, seed=4)
        assert not sim.lost.any()  # a Dirichlet law has full support: nothing is lost
        idx = np.ravel_multi_index(sim.samples.T, p.table.shape)
        freq = np.bincount(idx, minlength=ex.size) / n
        se = np.sqrt(np.maximum(ex * (1 - ex), 1e-12) / n)
        assert np.all(np.abs(freq - ex) / se < 4.5)
        if planner.threshold is not None:  # the threshold commits more: fewer mask steps than steps
            run = select_run(p, mt.Schedule(sizes), planner)
            assert abs(sim.steps.mean() - run.mask_steps) < 4.5 * sim.steps.std() / np.sqrt(n)
            assert run.mask_steps < len(sizes)
            # the pipeline's forwards: one more pass when the masks ran out before the S-th step
            fw = np.where(sim.steps < len(sizes), sim.steps + 1, sim.steps)
            assert abs(fw.mean() - run.forwards) < 4.5 * fw.std() / np.sqrt(n)


def test_selection_rule_as_the_sources_state_it():
    conf = np.array([[0.5, 0.9, 0.5, 0.2, 0.9]])
    free = np.array([[True, True, True, True, False]])
    # top-2 among masked: 1 (0.9), then 0 and 2 tie at 0.5 -> the lowest index (ties="lowest")
    assert select_commits(conf, free, 2, None, "lowest").tolist() == [[True, True, False, False, False]]
    # diffusers: every masked position above the threshold when at least k are (here 3 > 0.4 >= k=2)
    assert select_commits(conf, free, 2, 0.4, "lowest").tolist() == [[True, True, True, False, False]]
    # fewer than k above: the top k
    assert select_commits(conf, free, 2, 0.6, "lowest").tolist() == [[True, True, False, False, False]]
    # k larger than what is masked: everything masked
    assert select_commits(conf, free, 9, None, "lowest").tolist() == [[True, True, True, True, False]]


def test_tempered():
    P = np.array([[0.2, 0.8], [0.5, 0.5]])
    np.testing.assert_allclose(tempered(P, 0.5), [[0.04 / 0.68, 0.64 / 0.68], [0.5, 0.5]])
    np.testing.assert_array_equal(tempered(P, 0.0), [[0, 1], [1, 0]])
    np.testing.assert_allclose(tempered(P, 1e6), 0.5, atol=1e-5)


def test_bias_toward_likely_tokens_on_independent_positions():
    # independent positions: the true conditional of each is its marginal; committing the most
    # confident of two makes the committed value more likely to be the mode than it is
    p = mt.families.product([[0.7, 0.3], [0.6, 0.4]])
    b = selection_bias(p, 1)
    # brute force: y0, y1 independent; commit 0 iff p0(y0) >= p1(y1) (ties to index 0)
    m = [np.array([0.7, 0.3]), np.array([0.6, 0.4])]
    got = np.zeros((2, 2))
    for y0, y1 in itertools.product(range(2), repeat=2):
        w = m[0][y0] * m[1][y1]
        if m[0][y0] >= m[1][y1]:
            got[0, y0] += w
        else:
            got[1, y1] += w
    np.testing.assert_allclose(b.commit_prob, got.sum(1))
    np.testing.assert_allclose(b.committed, got / got.sum(1, keepdims=True))
    # position 0 is committed iff its value is the more confident: always its mode here
    assert b.committed[0, 0] == pytest.approx(1.0) and b.tv[0] == pytest.approx(0.3)
    # position 1 is committed iff y0 = 1 (0.3 loses to both of its values): no bias there
    assert b.tv[1] == pytest.approx(0.0, abs=1e-15)


def test_bias_is_zero_where_a_position_is_never_committed():
    """Issue 31 §12: position 0 is certain (confidence 1) and always wins the one commit, so
    1 and 2 are never committed: no committed law there (NaN) and, by definition, no bias (0)."""
    p = mt.families.product([[1.0, 0.0], [0.6, 0.4], [0.5, 0.5]])
    b = selection_bias(p, 1)
    np.testing.assert_allclose(b.commit_prob, [1.0, 0.0, 0.0])
    assert np.all(np.isnan(b.committed[1:])) and not np.any(np.isnan(b.tv))
    np.testing.assert_array_equal(b.tv[1:], 0.0)
    assert b.tv[0] == pytest.approx(0.0, abs=1e-15)  # its committed law is its conditional


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match=r"^threshold:"):
        SampleThenSelectPlanner(threshold=1.0)
    with pytest.raises(ValueError, match=r"^temperature:"):
        SampleThenSelectPlanner(temperature=-1)
    with pytest.raises(ValueError, match=r"^confidence:"):
        SampleThenSelectPlanner(confidence="x")
    p = mt.families.dirichlet(3, 2, seed=0)
    with pytest.raises(ValueError, match=r"^plan:"):
        select_run(p, mt.Schedule((2, 2)))
    with pytest.raises(ValueError, match=r"^planner: exact_run runs the planners of positions"):  # sampler_law dispatches it
        mt.samplers.exact_run(p, mt.Schedule((1, 2)), "sample_then_select")
    with pytest.raises(ValueError, match=r"^planner: sample-then-select commits"):
        mt.samplers.estimate_kl(p, mt.Schedule((1, 2)), SampleThenSelectPlanner(), n=10, seed=0)
    big = mt.families.dirichlet(12, 3, seed=0)
    with pytest.raises(ValueError, match=r"^p: the exact sample-then-select law needs"):
        select_run(big, mt.Schedule((6, 6)))


def test_ties_in_exact_arithmetic_tie_in_floats():
    # a symmetric chain: both end positions have conditional 1/2 from different marginals
    p = mt.families.markov_chain([[0.8, 0.2], [0.2, 0.8]], 3)
    b = selection_bias(p, 1, SampleThenSelectPlanner(ties="lowest"))
    assert b.commit_prob[0] == pytest.approx(1.0)  # every position ties at 1/2: the lowest index
    # uniform over the tied sets: each of the three positions with probability 1/3
    np.testing.assert_allclose(selection_bias(p, 1, SampleThenSelectPlanner(ties="random")).commit_prob, 1 / 3)
    confs = np.array([[0.5, 0.49999999999999994, 0.5]])
    assert select_commits(confs, np.ones((1, 3), bool), 1, None, "lowest").tolist() == [[True, False, False]]
    assert select_commits(confs[:, ::-1], np.ones((1, 3), bool), 1, None, "lowest").tolist() == [[True, False, False]]


def test_joint_commits_can_lose_mass_like_any_factorized_step():
    p = mt.Joint(np.array([[[0, 0], [0.5, 0]], [[0, 0.5], [0, 0]]]))  # x0 = x2 = 1 - x1
    run = select_run(p, mt.Schedule((2, 1)))
    ref = _brute_law(p.table, (2, 1), SampleThenSelectPlanner())
    np.testing.assert_allclose(run.law.table, ref, atol=1e-15)
    assert run.law.lost > 0.1
    sim = simulate(p, mt.Schedule((2, 1)), SampleThenSelectPlanner(), n=20000, seed=1)
    assert abs(sim.lost.mean() - run.law.lost) < 4.5 * np.sqrt(run.law.lost * (1 - run.law.lost) / 20000)


@settings(max_examples=60, deadline=None)
@given(joints(d=(2, 4), K=(2, 3)), st.integers(0, len(PLANNERS) - 1), st.data())
def test_forwards_and_step_commits_are_the_enumeration(p, which, data):
    sizes = data.draw(st.sampled_from(list(compositions(p.d))))
    run = select_run(p, mt.Schedule(sizes), PLANNERS[which])
    _law, steps, commits, forwards = _brute(p.table, sizes, PLANNERS[which])
    assert run.mask_steps == pytest.approx(steps, abs=1e-12)
    assert run.forwards == pytest.approx(forwards, abs=1e-12)
    assert run.pipeline.startswith("diffusers") and "LLaDA2Pipeline" in run.pipeline
    np.testing.assert_allclose(run.step_commits, commits, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(joints(d=(3, 4), K=(2, 3)), st.integers(0, len(PLANNERS) - 1), st.sampled_from([1, 7, 64]), st.data())
def test_slices_of_states_and_terms_change_nothing(p, which, chunk, data):
    # _CHUNK bounds the (state, term, position) entries held at once: a few entries force one
    # state per slice, terms cut into slices and targets classified in slices
    from mdmtheory.samplers import select

    sizes = data.draw(st.sampled_from(list(compositions(p.d))))
    whole = select_run(p, mt.Schedule(sizes), PLANNERS[which])
    saved = select._CHUNK
    try:
        select._CHUNK = chunk
        cut = select_run(p, mt.Schedule(sizes), PLANNERS[which])
    finally:
        select._CHUNK = saved
    np.testing.assert_allclose(cut.law.table, _brute_law(p.table, sizes, PLANNERS[which]), atol=1e-12)
    np.testing.assert_allclose(cut.law.table, whole.law.table, atol=1e-15)
    np.testing.assert_allclose(cut.step_commits, whole.step_commits, atol=1e-14)


@settings(max_examples=40, deadline=None)
@given(joints(d=(2, 6), K=(2, 3)), st.integers(0, len(PLANNERS) - 1),
       st.sampled_from([None, 0.0, 0.2, 1 / 3, 0.5, 0.9]), st.data())
def test_the_size_limit_bounds_the_terms_computed(p, which, threshold, data):
    from mdmtheory.samplers import select

    sizes = data.draw(st.sampled_from(list(compositions(p.d))))
    base = PLANNERS[which]
    planner = SampleThenSelectPlanner(threshold, base.temperature, base.confidence, base.ties)
    seen = []
    orig = select._terms

    def counted(P, k, pl, pos, d):
        for W, W0, codes in orig(P, k, pl, pos, d):
            seen.append(W.size)
            yield W, W0, codes

    select._terms = counted
    try:
        select_run(p, mt.Schedule(sizes), planner)
    finally:
        select._terms = orig
    bound = select._work_topk if planner.ties == "topk" else select.select_work
    assert sum(seen) <= bound(p.K, p.d, sizes, threshold)
