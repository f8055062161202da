"""The Info-Gain sampler (issue 29 §1) against an enumeration written in this test from the
published step — yks23/Information-Gain-Sampler@0ae2da8c, src/samplers/info_gain.py
(``InfoGainSampler.sample``, ``_generate_candidates``, ``_score_candidates``): every token
vector and every Gumbel position choice of every candidate enumerated, positions deduplicated,
the first J-maximum committed — then Monte Carlo and a torch model in the bridge."""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.samplers import InfoGainSampler, infogain_run


def _brute(table, s, tie="lowest"):
    """(law, expected model calls, expected sequence-forwards) by recursion over states."""
    d, K = table.ndim, table.shape[0]
    bsz = d if s.block_size is None else s.block_size
    blocks = [(b, b + bsz) for b in range(0, d, bsz)]

    def marg(x):
        return sum(table[z] for z in itertools.product(range(K), repeat=d)
                   if all(a < 0 or a == b for a, b in zip(x, z)))

    def cond(x, j):
        row = np.array([marg(x[:j] + (v,) + x[j + 1:]) for v in range(K)])
        return row / row.sum()

    def H(row):
        return -sum(q * math.log(q) for q in row if q > 0)

    def tok(row):  # argmax(log p + tau * Gumbel): p^(1/tau) normalized; tau = 0: the first maximum
        if s.temperature == 0:
            out = np.zeros(K)
            out[int(np.argmax(row))] = 1.0
            return out
        w = np.array([q ** (1 / s.temperature) if q > 0 else 0.0 for q in row])
        return w / w.sum()

    def first_max(c):
        m = max(c)
        ties = [i for i, v in enumerate(c) if v >= m - 1e-12]
        if tie == "topk" and len(ties) > 1:
            import torch
            v = np.array(c, dtype=np.float64)
            v[ties] = m
            return [(int(torch.topk(torch.tensor(v), 1).indices[0]), 1.0)]
        return [(ties[0], 1.0)] if tie != "random" else [(i, 1 / len(ties)) for i in ties]

    @lru_cache(maxsize=None)
    def run(x):
        """{output: prob}, E[calls], E[sequences] from state x (-1 = masked) at a step."""
        if min(x) >= 0:
            return {x: 1.0}, 0.0, 0.0
        b0, b1 = next(b for b in blocks if min(x[b[0]:b[1]]) < 0)
        V = [j for j in range(b0, b1) if x[j] < 0]
        P = {j: cond(x, j) for j in V}
        Q = {j: tok(P[j]) for j in V}
        ys = [(y, math.prod(Q[j][v] for j, v in zip(V, y))) for y in itertools.product(range(K), repeat=len(V))]
        ys = [(y, w) for y, w in ys if w > 0]
        moves, calls, seqs = [], 0.0, 0.0  # moves: (new state, prob)
        if s.threshold > 0 and all(P[j].max() >= s.threshold for j in V):
            for y, w in ys:
                z = list(x)
                for j, v in zip(V, y):
                    z[j] = v
                moves.append((tuple(z), w))
        elif len(V) <= 1 or s.position_temperature <= 0 or s.candidates <= 1:
            calls = seqs = 1.0
            for y, w in ys:
                for i, wi in first_max([P[j][v] for j, v in zip(V, y)]):
                    z = list(x)
                    z[V[i]] = y[i]
                    moves.append((tuple(z), w * wi))
        else:
            calls = 1.0
            later = []  # one later candidate: (position index, value, prob)
            for y, w in ys:
                c = np.array([P[j][v] for j, v in zip(V, y)]) / s.position_temperature
                g = np.exp(c - c.max()) / np.exp(c - c.max()).sum()  # Gumbel-max over the valid positions
                later += [(i, y[i], w * g[i]) for i in range(len(V))]

            def J(i, v):
                z = list(x)
                z[V[i]] = v
                left = [j for j in range(d) if z[j] < 0]
                hn = sum(H(cond(tuple(z), j)) for j in left) / len(left) if left else 0.0
                return round(-hn if s.variant == "lookum" else -H(P[V[i]]) - hn, 12)

            for y, w in ys:
                for i0, wi0 in first_max([P[j][v] for j, v in zip(V, y)]):
                    for rest in itertools.product(later, repeat=s.candidates - 1):
                        cands, seen = [], set()
                        for i, v in [(i0, y[i0])] + [(a, b) for a, b, _ in rest]:
                            if i not in seen:
                                seen.add(i)
                                cands.append((i, v))
                        pr = w * wi0 * math.prod(r[2] for r in rest)
                        scores = [J(i, v) for i, v in cands]
                        i, v = cands[int(np.argmax(scores))]  # the first maximum
                        z = list(x)
                        z[V[i]] = v
                        moves.append((tuple(z), pr))
                        seqs += pr * len(cands)
        law, fw, sq = {}, calls, seqs
        for z, pr in moves:
            if min(z) < 0 and marg(z) == 0:
                continue  # lost
            if min(z) < 0 and min(z[b0:b1]) >= 0:  # the next block's first forward
                fw += pr
                sq += pr
            sub, f2, s2 = run(z)
            fw += pr * f2
            sq += pr * s2
            for o, q in sub.items():
                law[o] = law.get(o, 0.0) + pr * q
        return law, fw, sq

    law, fw, sq = run((-1,) * d)
    out = np.zeros(table.shape)
    for o, q in law.items():
        out[o] += q
    return out, fw + 1, sq + 1


def _law(seed, K=2, d=3, alpha=0.7):
    return mt.Joint(np.random.default_rng(seed).dirichlet(np.full(K**d, alpha)).reshape((K,) * d))


@pytest.mark.parametrize("kw", [
    pytest.param(dict(candidates=3, temperature=1.0, threshold=0.0), marks=pytest.mark.slow),
    dict(candidates=2, temperature=1.0, threshold=0.0),
    dict(candidates=2, temperature=0.5, variant="lookum", threshold=0.9),
    dict(candidates=2, temperature=0.0, threshold=0.0),
    dict(candidates=3, temperature=1.0, block_size=2, position_temperature=0.5, threshold=0.95),
])
def test_exact_law_is_the_published_step_enumerated(kw):
    d = 4 if kw.get("block_size") else 3
    p = _law(11, d=d)
    s = InfoGainSampler(**kw, ties="lowest")
    law, fw, sq = _brute(p.table, s)
    r = infogain_run(p, s)
    assert np.abs(r.law.table - law).max() < 1e-12
    assert r.forwards == pytest.approx(fw, abs=1e-12) and r.sequences == pytest.approx(sq, abs=1e-12)
    assert r.sequences > r.forwards + 0.1  # the look-ahead ran (batched calls of several candidates)


@pytest.mark.parametrize("tie", ["random", "topk"])
def test_tie_rules_on_a_law_with_exact_ties(tie):
    """The repeated bit (every position equally confident): candidate 0's topk and the trivial
    argmax tie at every state; ``"topk"`` is torch.topk of the valid positions' confidences."""
    if tie == "topk":
        pytest.importorskip("torch")
    t = np.zeros((2, 2, 2))
    t[0, 0, 0], t[1, 1, 1], t[0, 1, 0] = 0.4, 0.4, 0.2
    p = mt.Joint(t)
    s = InfoGainSampler(candidates=2, temperature=1.0, threshold=0.0, ties=tie)
    law, fw, sq = _brute(p.table, s, tie)
    r = infogain_run(p, s)
    assert np.abs(r.law.table - law).max() < 1e-12 and r.forwards == pytest.approx(fw, abs=1e-12)
    assert r.tie_mass > 0


@pytest.mark.parametrize("where", [pytest.param("law", marks=pytest.mark.slow), "bridge"])
def test_monte_carlo_and_the_bridge_agree_with_the_exact_law(where):
    p = _law(4, K=2, d=4, alpha=2.0)
    if where == "bridge":
        pytest.importorskip("torch")
        from mdmtheory import bridge

        oracle = bridge.model_law(bridge.ExactModel(p), 4)
    else:
        oracle = p
    s = InfoGainSampler(candidates=4, temperature=1.0, threshold=0.7)
    r = infogain_run(p, s)
    q = r.law.table.ravel()
    n = 4000
    if True:
        sim = s.simulate(oracle, n=n, seed=2)
        samples, lost, fw = sim.samples, sim.lost, sim.forwards
        assert not lost.any()
        emp = np.bincount(mt.samplers.kernel.output_index(samples, 2), minlength=16) / n
        assert (np.abs(emp - q) / np.sqrt(np.maximum(q * (1 - q), 1e-12) / n)).max() < 4.5
        assert abs(fw.mean() - r.forwards) < 4.5 * fw.std() / math.sqrt(n) + 1e-12
    assert np.array_equal(mt.sampler_law(p, None, s).table, r.law.table)


def test_refusals():
    with pytest.raises(ValueError, match=r"^block_size:"):
        InfoGainSampler(block_size=4).blocks(6)
    with pytest.raises(ValueError, match=r"^variant:"):
        InfoGainSampler(variant="lookahead")
    with pytest.raises(ValueError, match=r"^temperature:"):
        InfoGainSampler(temperature=-1.0)
    with pytest.raises(ValueError, match=r"^p:"):
        infogain_run(mt.Joint(np.full((3,) * 8, 3.0**-8)), InfoGainSampler())


def test_torch_topk_does_not_return_the_first_of_equal_maxima():
    """The example docs/samplers.md quotes: why candidate 0's topk needs ``ties="topk"``."""
    torch = pytest.importorskip("torch")
    assert int(torch.topk(torch.tensor([0.5, 0.2, 0.5, 0.5], dtype=torch.float64), 1).indices[0]) == 2
