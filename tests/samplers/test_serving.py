"""SGLang's dLLM decoding rules (issue 29 §1): the exact engine against enumerations written here
from each file's ``step`` (sgl-project/sglang, python/sglang/srt/dllm/algorithm/), Monte Carlo
against the exact law, and the forwards each file's loop makes.

Files and commits read (the rules below restate them in plain Python, not the package's code):
* entropy_threshold.py @ 26eb1bf: H = -sum p log(p + 1e-8); the lowest-entropy masked position
  always, every other masked one with H < threshold; nfe = steps + 1 (final forward);
* eb_sampling.py @ 38c8d9b: sorted entropies, the first always, the i-th while
  cumsum(sorted[:i]) <= gamma; one forward per step + one final forward;
* hierarchy_block.py @ 0146dbc: sub-blocks left to right, conf > threshold else conf.argmax();
  a final forward per block whose last-position arg max becomes the next block's first token;
* full_attn_multi_block.py @ 26eb1bf: block activation by the previous block's progress,
  H = -sum p log(p + 1e-12) < threshold before active_end, forced argmin in the first fully
  active block with masks when it got nothing; nfe = steps;
* joint_threshold.py @ 17d5721 with base.py @ 0929d6d (_run_sync): M2T conf > threshold else
  topk(k=1); no mask: post_edit_steps += 1, > max_post_edit_steps -> finished; T2T
  p > edit_threshold and token != prediction on non-prompt visible positions; nothing -> finished;
  forwards = steps up to the finishing one + 1.
Values: the planners draw each revealed value from p(x_j | x_A) (the package's convention for
ranked rules); JointThreshold draws a candidate at every position (masked: p(. | x_A), visible:
p(. | x_{A minus j})), scored by its probability (temperature 1). Ties: the first index
(torch.argmax's documented rule), compared with ties="lowest".
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.samplers import (
    EBSamplingPlanner,
    EntropyBudgetPlanner,
    EntropyThresholdPlanner,
    FullAttnMultiBlockPlanner,
    HierarchyBlockPlanner,
    JointThresholdSampler,
    SampleThenSelectPlanner,
    serving_run,
)

LAWS = [mt.families.dirichlet(4, 2, alpha=0.5, seed=3), mt.families.dirichlet(3, 3, alpha=0.4, seed=1),
        mt.families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 4)]


# -- the law's conditionals, from the table ---------------------------------------------------
def cond(T, x, j):
    """p(x_j = . | x_A), x a tuple with None at masked positions (None if p(x_A) = 0)."""
    idx = tuple(slice(None) if (v is None or i == j) else v for i, v in enumerate(x))
    sub = T[idx]
    keep = [i for i, v in enumerate(x) if v is None or i == j]
    axis = tuple(a for a, i in enumerate(keep) if i != j)
    m = sub.sum(axis=axis) if axis else sub
    s = m.sum()
    return None if s <= 0 else m / s


def entropy(pr, eps):
    return -sum(v * math.log(v + eps) for v in pr if v > 0)


# -- the rules, restated from the files ------------------------------------------------------------
def entropy_threshold_set(P, masked, theta):
    H = {j: entropy(P[j], 1e-8) for j in masked}
    order = sorted(masked, key=lambda j: (H[j], j))
    return {order[0]} | {j for j in order[1:] if H[j] < theta - 1e-12}


def eb_set(P, masked, gamma):
    H = {j: entropy(P[j], 0.0) for j in masked}
    order = sorted(masked, key=lambda j: (H[j], j))
    out, acc = [order[0]], 0.0
    for i in range(1, len(order)):
        acc += H[order[i - 1]]
        if acc <= gamma + 1e-12:
            out.append(order[i])
    return set(out)


def hierarchy_set(P, masked, d, thr, sub, B):
    first = min(masked)
    if first % B == 0 and first > 0:
        return {first}  # the inherited token of the previous block's final forward
    sb = lambda j: (j // B, (j % B) // sub)  # noqa: E731
    cur = [j for j in masked if sb(j) == sb(first)]
    conf = {j: max(P[j]) for j in cur}
    above = {j for j in cur if conf[j] > thr + 1e-12}
    return above or {max(cur, key=lambda j: (conf[j], -j))}


def multiblock_set(P, masked, d, thr, B, bat, dtt):
    nb = -(-d // B)
    blocks = [list(range(b * B, min((b + 1) * B, d))) for b in range(nb)]
    count = [sum(j in masked for j in blk) for blk in blocks]
    active, fully = [True] + [False] * (nb - 1), [True] + [False] * (nb - 1)
    for b in range(1, nb):
        prog = 1 - count[b - 1] / len(blocks[b - 1])
        active[b] = prog >= bat or count[b - 1] == 0
        fully[b] = active[b] and prog >= dtt
    end = 0
    for b in range(nb):
        if active[b] and (fully[b] or count[b] > 0):
            end = blocks[b][-1] + 1
    H = {j: entropy(P[j], 1e-12) for j in masked}
    out = {j for j in masked if j < end and H[j] < thr - 1e-12}
    fa = [b for b in range(nb) if fully[b] and count[b] > 0]
    if fa and not any(j in out for j in blocks[fa[0]]):
        cand = [j for j in blocks[fa[0]] if j in masked]
        out.add(min(cand, key=lambda j: (H[j], j)))
    return out


def planner_law(p, rule_set, extra):
    """Output law and forwards distribution of a position rule: every path, values from p."""
    T, d = p.table, p.d
    out = np.zeros(T.shape)
    fw = {}

    def go(x, w, steps):
        masked = [j for j in range(d) if x[j] is None]
        if not masked:
            out[tuple(x)] += w
            fw[steps + extra] = fw.get(steps + extra, 0.0) + w
            return
        P = {j: cond(T, x, j) for j in masked}
        B = sorted(rule_set(P, masked))
        for vals in itertools.product(range(p.K), repeat=len(B)):
            pr = math.prod(P[j][v] for j, v in zip(B, vals))
            if pr > 0:
                y = list(x)
                for j, v in zip(B, vals):
                    y[j] = v
                go(y, w * pr, steps + 1)

    go([None] * d, 1.0, 0)
    return out, fw


CASES = [
    (EntropyThresholdPlanner(0.6, ties="lowest"), lambda P, m, d: entropy_threshold_set(P, m, 0.6), 1),
    (EntropyThresholdPlanner(0.3, ties="lowest"), lambda P, m, d: entropy_threshold_set(P, m, 0.3), 1),
    (EBSamplingPlanner(0.4, ties="lowest"), lambda P, m, d: eb_set(P, m, 0.4), 1),
    (HierarchyBlockPlanner(0.7, sub_block_size=2, ties="lowest"), lambda P, m, d: hierarchy_set(P, m, d, 0.7, 2, d), 1),
    (HierarchyBlockPlanner(0.6, sub_block_size=1, block_size=2, ties="lowest"),
     lambda P, m, d: hierarchy_set(P, m, d, 0.6, 1, 2), 1),
    # a block of one sub-block of 2: without the inheritance the threshold could commit both
    (HierarchyBlockPlanner(0.5, sub_block_size=2, block_size=2, ties="lowest"),
     lambda P, m, d: hierarchy_set(P, m, d, 0.5, 2, 2), 1),
    (FullAttnMultiBlockPlanner(0.5, block_size=2, ties="lowest"),
     lambda P, m, d: multiblock_set(P, m, d, 0.5, 2, 0.1, 0.95), 0),
    (FullAttnMultiBlockPlanner(0.3, block_size=1, block_add_threshold=0.5, decoded_token_threshold=1.0, ties="lowest"),
     lambda P, m, d: multiblock_set(P, m, d, 0.3, 1, 0.5, 1.0), 0),
]


@pytest.mark.parametrize("p", LAWS, ids=["dir4", "dir3K3", "markov4"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_planner_laws_are_the_enumeration_of_the_files_step(p, case):
    rule, rule_set, extra = CASES[case]
    ref, fw = planner_law(p, lambda P, m: rule_set(P, m, p.d), extra)
    run = serving_run(p, rule)
    np.testing.assert_allclose(run.law.table, ref, atol=1e-12)
    assert run.lost == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(mt.sampler_law(p, None, rule).table, ref, atol=1e-12)
    for f in range(run.forwards_law.shape[0]):
        assert run.forwards_law[f] == pytest.approx(fw.get(f, 0.0), abs=1e-12)
    assert run.forwards == pytest.approx(sum(f * w for f, w in fw.items()), abs=1e-12)


def test_eb_sampling_is_the_entropy_budget_planner():
    p = LAWS[0]
    for g in (0.0, 0.2, 0.7, 5.0):
        a = mt.sampler_law(p, None, EBSamplingPlanner(g))
        b = mt.sampler_law(p, None, EntropyBudgetPlanner(g))
        np.testing.assert_allclose(a.table, b.table, atol=1e-14)


# -- JointThreshold, from the file's step -----------------------------------------------------------
def joint_reference(p, thr, eth, max_post, temperature=1.0, scoring="tempered"):
    """Output law, lost mass and forwards law of JointThreshold by recursion over (state, post),
    every candidate vector enumerated (ties: first index; temperature 1 or 0). Forwards: one per
    step, the finishing step included; the step that finishes reports the block done on the
    forward it ran on (sglang 0.5.23; issue 39 item 8)."""
    T, d, K = p.table, p.d, p.K

    def temper(r):
        if temperature == 0:
            e = np.zeros(K)
            e[int(np.argmax(np.round(r, 12)))] = 1.0
            return e
        return r

    @functools.lru_cache(maxsize=None)
    def go(x, post, steps):
        """{("out", y) | ("lost",): prob, ("fw", f): prob}."""
        masked = [j for j in range(d) if x[j] is None]
        res = {}

        def add(k, w):
            res[k] = res.get(k, 0.0) + w

        if masked and T[tuple(slice(None) if v is None else v for v in x)].sum() <= 0:
            return {("lost",): 1.0}
        P = {}
        for j in range(d):
            if x[j] is None:
                P[j] = cond(T, x, j)
            else:
                r = cond(T, tuple(None if i == j else v for i, v in enumerate(x)), j)
                if r is None:
                    return {("lost",): 1.0}
                P[j] = r
        if not masked:
            post += 1
            if post > max_post:
                add(("out", x), 1.0)
                add(("fw", steps + 1), 1.0)
                return res
        S = {j: temper(P[j]) for j in range(d)}
        for y in itertools.product(range(K), repeat=d):
            w = math.prod(S[j][y[j]] for j in range(d))
            if w <= 0:
                continue
            if scoring == "relative" and temperature > 0:  # SGLang main: min(p_argmax, exp((z_y - z_max)/T))
                c = {j: round(min(float(max(P[j])), float(S[j][y[j]] / max(S[j]))), 12) for j in range(d)}
            else:
                c = {j: round(float(S[j][y[j]] if temperature > 0 else P[j][y[j]]), 12) for j in range(d)}
            transfer = set()
            if masked:
                transfer = {j for j in masked if c[j] > thr}
                if not transfer:
                    transfer = {max(masked, key=lambda j: (c[j], -j))}
            transfer |= {j for j in range(d) if x[j] is not None and y[j] != x[j] and c[j] > eth}
            if not transfer:
                add(("out", x), w)
                add(("fw", steps + 1), w)
                continue
            z = tuple(y[j] if j in transfer else x[j] for j in range(d))
            for k, v in go(z, post, steps + 1).items():
                add(k, w * v)
        return res

    res = go((None,) * d, 0, 0)
    out = np.zeros(T.shape)
    fw = {}
    for k, v in res.items():
        if k[0] == "out":
            out[k[1]] += v
        elif k[0] == "fw":
            fw[k[1]] = v
    return out, res.get(("lost",), 0.0), fw


JOINT = [(0.5, 0.0, 2), (0.6, 0.8, 16), (0.9, 0.5, 0), (0.3, 0.95, 3)]


JOINT_LAWS = {"dir4": LAWS[0], "dir3K3": LAWS[1], "markov3": mt.families.markov_chain([[0.85, 0.15], [0.25, 0.75]], 3)}
# each setting on one law by default, every other pair under -m slow
JOINT_CASES = [pytest.param(name, *case, id=f"{name}-{case}",
                            marks=() if i % len(JOINT_LAWS) == k else pytest.mark.slow)
               for k, case in enumerate(JOINT) for i, name in enumerate(JOINT_LAWS)]


@pytest.mark.parametrize("law, thr, eth, post", JOINT_CASES)
def test_joint_threshold_exact_chain_is_the_enumeration_of_the_files_step(law, thr, eth, post):
    p = JOINT_LAWS[law]
    sampler = JointThresholdSampler(thr, edit_threshold=eth, max_post_edit_steps=post, ties="lowest")
    ref, lost, fw = joint_reference(p, thr, eth, post)
    run = serving_run(p, sampler)
    np.testing.assert_allclose(run.law.table, ref, atol=1e-12)
    np.testing.assert_allclose(mt.sampler_law(p, None, sampler).table, ref, atol=1e-12)
    assert run.lost == pytest.approx(lost, abs=1e-12)
    for f in range(run.forwards_law.shape[0]):
        assert run.forwards_law[f] == pytest.approx(fw.get(f, 0.0), abs=1e-12)
    assert set(fw) <= set(range(run.forwards_law.shape[0]))
    assert run.forwards <= sampler.max_forwards(p.d)


def test_joint_threshold_relative_scoring_of_sglang_main():
    """SGLang main's scoring (python/sglang/srt/dllm/sampling.py at 0026bd4, ``DllmSamplingPlan.sample``
    and ``confidence``): the commit confidence is min(arg-max probability, exp((z_t - z_max)/T)).
    At T = 1 on the enumeration above it is min(max_v p_v, p_y / max_v p_v); it differs from
    0.5.23's tempered probability, and at T = 0 the two rules are one."""
    p = JOINT_LAWS["markov3"]
    s = JointThresholdSampler(0.5, edit_threshold=0.8, max_post_edit_steps=2, ties="lowest", scoring="relative")
    ref, lost, fw = joint_reference(p, 0.5, 0.8, 2, scoring="relative")
    run = serving_run(p, s)
    np.testing.assert_allclose(run.law.table, ref, atol=1e-12)
    assert run.lost == pytest.approx(lost, abs=1e-12)
    for f in range(run.forwards_law.shape[0]):
        assert run.forwards_law[f] == pytest.approx(fw.get(f, 0.0), abs=1e-12)
    assert "0026bd4" in run.pipeline
    old = serving_run(p, JointThresholdSampler(0.5, edit_threshold=0.8, max_post_edit_steps=2, ties="lowest"))
    assert not np.allclose(old.law.table, run.law.table, atol=1e-6)
    g = [serving_run(p, JointThresholdSampler(0.5, edit_threshold=0.8, max_post_edit_steps=2, temperature=0.0,
                                              ties="lowest", scoring=sc)).law.table for sc in ("tempered", "relative")]
    np.testing.assert_array_equal(g[0], g[1])
    with pytest.raises(ValueError, match="^scoring:"):
        JointThresholdSampler(scoring="main")
    from mdmtheory.samplers.serving import JOINT_SCORING_SOURCES, SGLANG_SOURCES

    for key, src in (("tempered", SGLANG_SOURCES["JointThreshold"]), ("relative", SGLANG_SOURCES["JointThreshold/relative"])):
        assert JOINT_SCORING_SOURCES[key][1:] == src  # each version's file and commit, pinned in one place


def test_joint_threshold_greedy_is_one_output():
    """At temperature 0 (SGLang's file as read) the block is one deterministic sequence."""
    p = LAWS[0]
    sampler = JointThresholdSampler(0.5, edit_threshold=0.6, max_post_edit_steps=3, temperature=0.0, ties="lowest")
    ref, lost, fw = joint_reference(p, 0.5, 0.6, 3, temperature=0.0)
    run = serving_run(p, sampler)
    np.testing.assert_allclose(run.law.table, ref, atol=1e-12)
    assert np.count_nonzero(run.law.table) == 1 and len(fw) == 1


def test_joint_threshold_forwards_by_hand_on_greedy_blocks():
    """SGLang's JointThreshold forwards, enumerated by hand from its loop (issue 39 item 8).

    Read: ``python/sglang/srt/dllm/algorithm/base.py`` ``_run_sync`` (sgl-project/sglang at
    0929d6d: one forward, then ``for _ in range(max_steps)``: ``done = step(...)``,
    ``break`` if all done, else another forward) and the tensor-path ``joint_threshold.py`` of
    the 0.5.23 wheel (code index file 68701235319, ``JointThreshold.step``: returns
    ``states["finished"]`` right after the step that set it, "a terminating step changes no
    tokens, so its forward already wrote final KV"; at 17d5721 the same step (``if state["finished"]: done.append(True)`` on entry)
    answered done only on the next call, one forward more). So a block costs one forward per
    step, the finishing step included.

    Greedy cases (temperature 0, no ties):
    * a point mass on (0, 0): step 1 commits both (probability 1 > threshold), step 2 has no
      mask (post 1 <= budget) and nothing to edit, so it finishes: 2 forwards (the issue's
      "SGLang 2, package 3");
    * the same with ``max_post_edit_steps = 0``: step 2 finds post 1 > 0 and finishes: 2;
    * a point mass on (0, 0, 0) with threshold 1 (nothing is above it): one forced commit per
      step, three steps, then the finishing step: 4 forwards.
    """
    pt2 = np.zeros((2, 2))
    pt2[0, 0] = 1.0
    pt3 = np.zeros((2, 2, 2))
    pt3[0, 0, 0] = 1.0
    cases = [(pt2, 0.5, 16, 2), (pt2, 0.5, 0, 2), (pt3, 1.0, 16, 4)]
    for table, thr, post, want in cases:
        p = mt.Joint(table)
        s = JointThresholdSampler(thr, edit_threshold=0.5, max_post_edit_steps=post, temperature=0.0, ties="lowest")
        run = serving_run(p, s)
        assert run.forwards == want, (table.shape, thr, post)
        assert run.forwards_law[want] == pytest.approx(1.0)
        sim = mt.simulate(p, None, s, n=50, seed=0)
        assert np.all(sim.forwards == want)
        assert want <= s.max_forwards(p.d) == p.d + post + 1  # SGLang's max_steps(block_size)


def test_joint_threshold_forwards_law_monte_carlo_matches_the_chain():
    """The whole forwards law of the exact chain against Monte Carlo counts (z-scores)."""
    p = mt.families.markov_chain([[0.85, 0.15], [0.25, 0.75]], 3)
    s = JointThresholdSampler(0.6, edit_threshold=0.7, max_post_edit_steps=2)
    run = serving_run(p, s)
    n = 20000
    sim = mt.simulate(p, None, s, n=n, seed=7)
    f = sim.forwards[~sim.lost]
    freq = np.bincount(f, minlength=run.forwards_law.shape[0]) / n
    assert freq.shape[0] == run.forwards_law.shape[0]
    q = run.forwards_law
    se = np.sqrt(np.maximum(q * (1 - q), 1e-12) / n)
    assert np.all(np.abs(freq - q) / se < 4.5)


def test_joint_threshold_without_edits_is_sample_then_select_with_a_threshold():
    """edit_threshold = 1 never edits: each step commits every candidate above the threshold or
    the most confident one — sample-then-select with counts 1 and that threshold."""
    for p in LAWS:
        for thr in (0.4, 0.7):
            a = serving_run(p, JointThresholdSampler(thr, edit_threshold=1.0, ties="lowest")).law
            b = mt.sampler_law(p, mt.Schedule((1,) * p.d), SampleThenSelectPlanner(thr, 1.0, "tempered", "lowest"))
            np.testing.assert_allclose(a.table, b.table, atol=1e-12)


def _z_check(p, law, samples, lost, n):
    q = law.table.ravel()
    ok = ~lost
    freq = np.bincount(np.ravel_multi_index(samples[ok].T, p.table.shape), minlength=q.size) / n
    se = np.sqrt(np.maximum(q * (1 - q), 1e-12) / n)
    assert np.all(np.abs(freq - q) / se < 4.5)
    L = law.lost
    assert abs(lost.mean() - L) <= 4.5 * np.sqrt(max(L * (1 - L), 1e-12) / n)


RULES = [EntropyThresholdPlanner(0.6), EBSamplingPlanner(0.4), HierarchyBlockPlanner(0.7, sub_block_size=2),
         FullAttnMultiBlockPlanner(0.5, block_size=2), JointThresholdSampler(0.6, edit_threshold=0.7,
                                                                              max_post_edit_steps=2)]


@pytest.mark.parametrize("rule", [pytest.param(r, id=type(r).__name__, marks=() if isinstance(
    r, (JointThresholdSampler, FullAttnMultiBlockPlanner)) else pytest.mark.slow) for r in RULES])
def test_monte_carlo_agrees_with_the_exact_law(rule):
    p = mt.families.markov_chain([[0.85, 0.15], [0.25, 0.75]], 4)
    n = 10000
    run = serving_run(p, rule)
    sim = mt.simulate(p, None, rule, n=n, seed=4)
    _z_check(p, run.law, sim.samples, sim.lost, n)
    if sim.forwards is not None:  # JointThreshold counts forwards per sample
        assert abs(sim.forwards.mean() - run.forwards) < 4.5 * sim.forwards.std() / math.sqrt(n) + 1e-9
    else:  # the planners: forwards = steps + the file's final forwards
        assert abs(sim.steps.mean() + rule.extra_forwards - run.forwards) < \
            4.5 * sim.steps.std() / math.sqrt(n) + 1e-9


def test_ties_random_is_the_mixture_over_lowest_orders():
    """On a law with tied scores (the repeated bit's symmetric Markov chain) ties='random'
    differs from 'lowest' and carries tie mass; JointThreshold reports it too."""
    p = mt.families.markov_chain([[0.8, 0.2], [0.2, 0.8]], 4)
    for rule in (EntropyThresholdPlanner(0.1), FullAttnMultiBlockPlanner(0.1, block_size=2),
                 JointThresholdSampler(0.99, edit_threshold=1.0)):
        r = serving_run(p, rule)
        assert r.tie_mass > 0
        assert r.law.table.sum() + r.lost == pytest.approx(1.0, abs=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match="^threshold:"):
        EntropyThresholdPlanner(-1.0)
    with pytest.raises(ValueError, match="^sub_block_size:"):
        HierarchyBlockPlanner(sub_block_size=0)
    with pytest.raises(ValueError, match="^decoded_token_threshold:"):
        FullAttnMultiBlockPlanner(decoded_token_threshold=1.5)
    with pytest.raises(ValueError, match="^edit_threshold:"):
        JointThresholdSampler(edit_threshold=2.0)
    with pytest.raises(ValueError, match="^temperature:"):
        JointThresholdSampler(temperature=-1.0)
    with pytest.raises(ValueError, match="^plan:"):
        mt.sampler_law(LAWS[0], mt.Schedule((2, 2)), EntropyThresholdPlanner())
    with pytest.raises(ValueError, match="^planner:"):
        serving_run(LAWS[0], "random")
    with pytest.raises(ValueError, match=r"^p: the exact JointThreshold chain .*simulate"):
        serving_run(mt.families.dirichlet(8, 3, seed=0), JointThresholdSampler())
