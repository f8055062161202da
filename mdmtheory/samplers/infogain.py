r"""The Info-Gain sampler (Yang et al., arXiv 2602.18176), exactly: look-ahead information gain
in the choice of the position to commit.

Read from the authors' code, ``yks23/Information-Gain-Sampler`` at commit 0ae2da8c,
``src/samplers/info_gain.py`` (:data:`INFOGAIN_SOURCE`; ``InfoGainSampler.sample``,
``_generate_candidates``, ``_score_candidates``), with the exact conditionals
:math:`p(\cdot \mid x_A)` in place of the model's softmax. The sequence is cut into blocks of
``block_size`` (one block by default); a block starts with one forward, and until it is full
each step does one of three things (A the revealed positions, V the masked positions of the
current block, :math:`q_j` the token law: :math:`p(\cdot \mid x_A)^{1/\tau}` normalized —
``argmax(logits + τ·Gumbel)`` — or, at ``temperature`` τ = 0, the most likely token):

1. **bypass**: if every :math:`j \in V` has :math:`\max_v p(v \mid x_A) \ge` ``threshold``
   (and threshold > 0), every :math:`j \in V` is committed at once with a value from
   :math:`q_j` (no forward: the block is then full);
2. **trivial** (|V| = 1, ``position_temperature`` = 0 or ``candidates`` ≤ 1): draw
   :math:`y_j \sim q_j` for all :math:`j \in V`, commit the position of largest confidence
   :math:`p(y_j \mid x_A)` (``argmax``: the first maximum) with its :math:`y_j`; one forward;
3. **look-ahead**: N = ``candidates`` candidates. Candidate 0: :math:`y^0 \sim \prod q_j`, its
   position the top confidence :math:`p(y^0_j \mid x_A)` (``torch.topk(·, 1)``); candidate
   c ≥ 1: a fresh :math:`y^c`, its position drawn by the Gumbel-max trick from
   :math:`\mathrm{softmax}_j(p(y^c_j \mid x_A) / \tau_{pos})`. A candidate whose position an
   earlier one already has is dropped (the code's ``seen`` set of positions). Each kept
   candidate (a, v) is scored, after one batched forward of all kept candidates, by

   .. math:: J(a, v) = -H\bigl(p(\cdot \mid x_A)_a\bigr) - \frac{1}{|M'|} \sum_{j \in M'}
             H\bigl(p(\cdot \mid x_A, x_a = v)_j\bigr)

   (``variant="lookum"``: the second term only), M' the positions still masked in the whole
   sequence after the commit (0 if none), and the first candidate of largest J is committed
   (``J.argmax()``); its look-ahead prediction is the next step's, so the step costs one
   model call of nc sequences, nc the number of kept candidates.

**Ties** (``ties``): the rankings by confidence — candidate 0's ``topk`` (``"topk"``:
torch.topk of the vector of the valid positions' confidences, which does *not* return the
first maximum on CPU: ``[0.5, 0.2, 0.5, 0.5]`` gives 2), the trivial path's ``argmax`` and the
τ = 0 token ``argmax`` (both the first maximum under ``"lowest"`` and ``"topk"``) — are
resolved by the rule, ``"random"`` uniformly over the tied maxima. J's ``argmax`` is the
code's (the first kept candidate of largest J, J rounded to 12 decimals so that values equal
in exact arithmetic tie): the order of the candidates is itself random.

**The exact law** (:func:`infogain_run`): per live state the token vectors of V are
enumerated (:math:`K^{|V|}` of them), which gives the law :math:`\pi_0(a, v)` of candidate 0
and :math:`\pi(a, v)` of each later candidate; the committed pair is the J-argmax over the
first occurrences of positions in an i.i.d. sequence, computed by a recursion over
(positions seen, best so far) through the N candidates, which also gives E[nc]. Differences
from the code, all below 1e-9 in probability: the code's entropies clamp p at 1e-12 and its
softmax is float32; its Gumbel noise has 1e-10 offsets.

**Forwards** (:class:`InfoGainRun`): ``forwards`` the expected model calls (one per block
start, one per trivial or look-ahead step — the batched look-ahead is one call — none for a
bypass); ``sequences`` the expected sequence-forwards (a look-ahead call counts its nc
sequences), which is what the look-ahead costs in compute. The code itself counts neither.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from itertools import product
from typing import ClassVar

import numpy as np

from .._estimate import Record
from .._moved import renamed_keywords
from .base import OwnChainSampler, Run
from .._validate import choice_arg, int_arg, prob_arg, real_arg
from ..laws.joint import Joint, joint_arg
from .kernel import empty_state, lattice_strides, marginal_lattice, output_index, state_conditionals, state_values
from .ties import check_ties, DEFAULT_TIES, TIE_TOL, topk_positions
from ..laws.oracles import as_oracle
from .simulate import _check_n_seed

__all__ = ["InfoGainSampler", "InfoGainRun", "infogain_run", "INFOGAIN_SOURCE", "MAX_INFOGAIN_STATES"]

#: Where the step is read from.
INFOGAIN_SOURCE = "yks23/Information-Gain-Sampler@0ae2da8c, src/samplers/info_gain.py, InfoGainSampler.sample"
#: Most lattice states ((K+1)^d) :func:`infogain_run` enumerates (each with K^|V| token vectors).
MAX_INFOGAIN_STATES = 1 << 14


@dataclass(frozen=True)
class InfoGainSampler(OwnChainSampler, Record):
    """The Info-Gain sampler (module docstring), the code's defaults: ``candidates`` 8
    (``candidate_number``), ``position_temperature`` 0.2, ``threshold`` 0.8, ``temperature``
    0 (greedy tokens), ``variant`` ``"info_gain"`` or ``"lookum"``, ``block_size`` (None: one
    block; else it must divide d), ``ties`` the rule of the confidence rankings.

    ``mt.sampler_law(p, None, sampler)`` and ``mt.simulate(p, None, sampler, n=, seed=)``
    run it (it carries no plan; ``simulate`` returns model calls per sample)."""

    candidates: int = 8
    position_temperature: float = 0.2
    threshold: float = 0.8
    temperature: float = 0.0
    variant: str = "info_gain"
    block_size: int | None = None
    ties: str = DEFAULT_TIES

    #: it looks ahead (its own chain, :class:`~mdmtheory.samplers.base.OwnChainSampler`); it revises nothing
    revises: ClassVar[bool] = False

    def __post_init__(self):
        n = int_arg(self.candidates, "candidates", 1, 1 << 10)
        pt = real_arg(self.position_temperature, "position_temperature")
        th = prob_arg(self.threshold, "threshold")
        t = real_arg(self.temperature, "temperature")
        if t < 0 or t > 1e3:
            raise ValueError(f"temperature: expected a token temperature in [0, 1000] (0: greedy), got {t!r}")
        if pt < 0 or pt > 1e3:  # a negative temperature is no temperature (issue 38); 0 is the documented off
            raise ValueError(f"position_temperature: expected a temperature in [0, 1000] (0: no look-ahead), got {pt!r}")
        choice_arg(self.variant, "variant", ("info_gain", "lookum"))
        b = self.block_size
        if b is not None:
            b = int_arg(b, "block_size", 1, 1 << 16)
        check_ties(self.ties)
        for f, v in (("candidates", n), ("position_temperature", float(pt)), ("threshold", float(th)),
                     ("temperature", float(t)), ("block_size", b)):
            object.__setattr__(self, f, v)

    def blocks(self, d: int) -> tuple:
        """The blocks of positions for length d: ``(start, stop)`` pairs (the code's
        ``num_blocks = max(1, d // block_size)``; a block size that does not divide a d it is
        smaller than is refused: the code would never decode the last d mod block_size)."""
        d = int_arg(d, "d", 1, 1 << 16)
        b = self.block_size
        if b is None or b >= d:
            return ((0, d),)
        if d % b:
            raise ValueError(f"block_size: {b} does not divide d = {d}; the code's {d // b} blocks would leave the "
                             f"last {d % b} positions masked")
        return tuple((s, s + b) for s in range(0, d, b))

    @property
    def _own_plan(self):
        return None

    def _run(self, p) -> "InfoGainRun":
        return infogain_run(p, self)

    def _simulate(self, p, *, n: int, seed: int):
        """n samples from any conditional oracle: (samples (n, d), lost (n,), forwards (n,))."""
        n, seed = _check_n_seed(n, seed)
        oracle = as_oracle(p)
        d, K = oracle.d, oracle.K
        blocks = self.blocks(d)
        rng = np.random.default_rng(seed)
        x = np.zeros((n, d), dtype=np.int64)
        rv = np.zeros((n, d), dtype=bool)
        lost = np.zeros(n, dtype=bool)
        fw = np.zeros(n, dtype=np.int64)
        for bs, be in blocks:
            inb = np.zeros(d, dtype=bool)
            inb[bs:be] = True
            rows = np.flatnonzero(~lost)
            ok = (oracle.log_marginal(x[rows], rv[rows]) > -np.inf) | rv[rows].all(axis=1)
            lost[rows[~ok]] = True  # a bypass can commit values p never produces together
            fw[~lost] += 1  # the block's first forward
            while True:
                rows = np.flatnonzero(~lost & (~rv & inb).any(axis=1))
                if rows.size == 0:
                    break
                ok = oracle.log_marginal(x[rows], rv[rows]) > -np.inf
                lost[rows[~ok]] = True
                rows = rows[ok]
                if rows.size:
                    self._mc_step(oracle, x, rv, fw, rows, inb, rng, K)
        return np.where(rv, x, -1), lost, fw

    def _mc_step(self, oracle, x, rv, fw, rows, inb, rng, K):
        xs, r = x[rows], rv[rows]
        N, d = xs.shape
        with np.errstate(invalid="ignore", divide="ignore"):
            P = np.where(r[..., None], 0.0, oracle.conditionals(xs, r))
        valid = ~r & inb
        nv = valid.sum(axis=1)
        bypass = (self.threshold > 0) & np.all(~valid | (P.max(axis=-1) >= self.threshold), axis=1)
        Q = _token_law(P, self.temperature, self.ties)
        trivial = ~bypass & ((nv <= 1) | (self.position_temperature <= 0) | (self.candidates <= 1))
        look = ~bypass & ~trivial

        def draw():
            return np.minimum((np.cumsum(Q, axis=-1) <= rng.random((N, d))[..., None] * Q.sum(-1, keepdims=True))
                              .sum(-1), K - 1)

        y0 = draw()
        c0 = np.where(valid, np.take_along_axis(P, y0[..., None], -1)[..., 0], -np.inf)
        a0 = self._first_choice(c0, valid, rng, topk=look)
        new_x, new_rv = xs.copy(), r.copy()
        # bypass: every valid position at once
        b = np.flatnonzero(bypass)
        new_x[b] = np.where(valid[b], y0[b], xs[b])
        new_rv[b] |= valid[b]
        t = np.flatnonzero(trivial)
        new_x[t, a0[t]] = y0[t, a0[t]]
        new_rv[t, a0[t]] = True
        fw[rows[trivial | look]] += 1
        L = np.flatnonzero(look)
        if L.size:
            pos, val = [a0[L]], [y0[L, a0[L]]]
            for _ in range(1, self.candidates):
                y = draw()[L]
                c = np.where(valid[L], np.take_along_axis(P[L], y[..., None], -1)[..., 0], -np.inf)
                g = rng.gumbel(size=c.shape)
                with np.errstate(invalid="ignore"):
                    a = np.argmax(np.where(valid[L], c / self.position_temperature + g, -np.inf), axis=1)
                pos.append(a)
                val.append(y[np.arange(L.size), a])
            pos, val = np.stack(pos, 1), np.stack(val, 1)  # (rows, N)
            J = np.full(pos.shape, -np.inf)
            Hc = _entropy(P[L])
            for c in range(self.candidates):
                first = ~(pos[:, :c] == pos[:, c:c + 1]).any(axis=1)
                xc, rc = xs[L].copy(), r[L].copy()
                xc[np.arange(L.size), pos[:, c]] = val[:, c]
                rc[np.arange(L.size), pos[:, c]] = True
                with np.errstate(invalid="ignore", divide="ignore"):
                    Pn = oracle.conditionals(xc, rc)
                Hn = np.where(~rc, _entropy(Pn), 0.0).sum(1) / np.maximum((~rc).sum(1), 1)
                j = -Hn if self.variant == "lookum" else -Hc[np.arange(L.size), pos[:, c]] - Hn
                J[:, c] = np.where(first, np.round(j, 12), -np.inf)
            best = np.argmax(J, axis=1)
            ar = np.arange(L.size)
            new_x[L, pos[ar, best]] = val[ar, best]
            new_rv[L, pos[ar, best]] = True
        x[rows], rv[rows] = new_x, new_rv

    def _first_choice(self, conf, valid, rng, topk):
        """Per row the position of largest confidence: ``torch.topk(·, 1)`` on the valid
        positions (rows with ``topk``, rule ``"topk"``) or ``argmax`` (the first maximum);
        ``"random"`` uniform over the tied maxima."""
        top = conf.max(axis=1, keepdims=True)
        tied = valid & (conf >= top - TIE_TOL)
        if self.ties == "random":
            return np.argmax(np.where(tied, rng.random(conf.shape), -1.0), axis=1)
        out = np.argmax(tied, axis=1)
        if self.ties == "topk":
            for i in np.flatnonzero(topk & (tied.sum(axis=1) > 1)):
                v = np.flatnonzero(valid[i])
                out[i] = v[topk_positions(_bits(conf[i, v], tied[i, v]), 1)[0]]
        return out


@dataclass(frozen=True)
class InfoGainRun(Run):
    """Exact law of an :class:`InfoGainSampler` (``law``, with lost mass), expected model
    calls (``forwards``) and sequence-forwards (``sequences``: a batched look-ahead call counts
    its candidates), the tie rule and ``tie_mass``: the probability of passing through a state
    at which a tie rule acts with positive probability (an upper bound on the probability
    that it decided the run)."""

    sequences: float


def _entropy(P: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0).sum(axis=-1)


def _bits(v: np.ndarray, tied: np.ndarray) -> np.ndarray:
    """The scores torch.topk sees, the tied maxima made bit-identical."""
    v = np.asarray(v, dtype=np.float64).copy()
    v[tied] = v[tied].max()
    return v


def _token_law(P: np.ndarray, temperature: float, ties: str) -> np.ndarray:
    r"""Rows of the token each position's ``argmax(logits + τ·Gumbel)`` draws: :math:`p^{1/τ}`
    normalized, or at τ = 0 the most likely token (the first, or uniform over the tied ones
    under ``"random"``)."""
    if temperature > 0:
        with np.errstate(divide="ignore"):
            lg = np.where(P > 0, np.log(np.where(P > 0, P, 1.0)) / temperature, -np.inf)
        top = lg.max(axis=-1, keepdims=True)
        e = np.where(P > 0, np.exp(lg - np.where(np.isfinite(top), top, 0.0)), 0.0)
        s = e.sum(axis=-1, keepdims=True)
        return np.where(s > 0, e / np.where(s > 0, s, 1.0), 0.0)
    top = P.max(axis=-1, keepdims=True)
    tied = (P >= top - TIE_TOL) & (P > 0)
    if ties == "random":
        return tied / np.maximum(tied.sum(axis=-1, keepdims=True), 1)
    out = np.zeros_like(P)
    np.put_along_axis(out, np.argmax(tied, axis=-1)[..., None], 1.0, axis=-1)
    return out * (P.sum(axis=-1, keepdims=True) > 0)


def _argmax_weights(conf: np.ndarray, ties: str, topk: bool) -> tuple[np.ndarray, np.ndarray]:
    """(M, nv) the probability that each position is the confidence maximum of its row, and
    (M,) whether the row's maximum is tied."""
    top = conf.max(axis=1, keepdims=True)
    tied = conf >= top - TIE_TOL
    many = tied.sum(axis=1) > 1
    if ties == "random":
        return tied / tied.sum(axis=1, keepdims=True), many
    W = np.zeros_like(conf)
    first = np.argmax(tied, axis=1)
    if ties == "topk" and topk:
        for i in np.flatnonzero(many):
            first[i] = topk_positions(_bits(conf[i], tied[i]), 1)[0]
    W[np.arange(conf.shape[0]), first] = 1.0
    return W, many


def _state_terms(s: InfoGainSampler, Pf, idx: int, P: np.ndarray, valid: np.ndarray, d: int, K: int, stride):
    """One step from the state ``idx``: (targets, weights, calls, sequences, can_tie)."""
    vpos = np.flatnonzero(valid)
    nv = vpos.size
    Pv = P[vpos]  # (nv, K)
    Q = _token_law(Pv, s.temperature, s.ties)
    can_tie = bool(s.temperature == 0 and ((Pv >= Pv.max(axis=1, keepdims=True) - TIE_TOL) & (Pv > 0)).sum(1).max() > 1)
    # every token vector of V with its probability under the product of the token laws
    opts = [np.flatnonzero(Q[i] > 0) for i in range(nv)]
    Y = np.array(list(product(*opts)), dtype=np.int64).reshape(-1, nv)
    wy = np.prod(Q[np.arange(nv), Y], axis=1)
    if s.threshold > 0 and np.all(Pv.max(axis=1) >= s.threshold):  # bypass: all of V at once
        return idx + ((Y - K) * stride[vpos]).sum(axis=1), wy, 0.0, 0.0, can_tie
    conf = Pv[np.arange(nv), Y]  # (M, nv) p(y_j | x_A)
    trivial = nv <= 1 or s.position_temperature <= 0 or s.candidates <= 1
    A0, many = _argmax_weights(conf, s.ties, topk=not trivial)
    can_tie = can_tie or bool((wy * many).sum() > 0)
    pairs = np.zeros((nv, K))  # the law of candidate 0's (position, value)
    for a in range(nv):
        np.add.at(pairs[a], Y[:, a], wy * A0[:, a])
    if trivial:
        a, v = np.nonzero(pairs > 0)
        return idx + (v - K) * stride[vpos[a]], pairs[a, v], 1.0, 1.0, can_tie
    z = conf / s.position_temperature
    soft = np.exp(z - z.max(axis=1, keepdims=True))
    soft /= soft.sum(axis=1, keepdims=True)
    pi = np.zeros((nv, K))  # the law of a later candidate's (position, value)
    for a in range(nv):
        np.add.at(pi[a], Y[:, a], wy * soft[:, a])
    # J of every pair with positive probability
    Hc = _entropy(Pv)
    a_, v_ = np.nonzero((pairs > 0) | (pi > 0))
    nxt = idx + (v_ - K) * stride[vpos[a_]]
    Pn = state_conditionals(Pf, nxt, d, K)
    left = state_values(nxt, d, K) == K
    Hn = np.where(left, _entropy(Pn), 0.0).sum(axis=1) / np.maximum(left.sum(axis=1), 1)
    Jv = -Hn if s.variant == "lookum" else -Hc[a_] - Hn
    J = np.full((nv, K), -np.inf)
    J[a_, v_] = np.round(Jv, 12)
    win, nc = _winner(pairs, pi, J, s.candidates)
    a, v = np.nonzero(win > 0)
    return idx + (v - K) * stride[vpos[a]], win[a, v], 1.0, nc, can_tie


def _winner(pi0: np.ndarray, pi: np.ndarray, J: np.ndarray, N: int) -> tuple[np.ndarray, float]:
    r"""The law of the committed (position, value) and E[#kept candidates]: candidate 0 from
    ``pi0``, candidates 1..N−1 i.i.d. from ``pi``, a candidate at a position already seen
    dropped, the first kept candidate of largest ``J`` committed. Recursion over (set of
    positions seen, best pair so far)."""
    nv, K = pi0.shape
    S, B = 1 << nv, nv * K
    Jb = J.reshape(-1)
    D = np.zeros((S, B))
    for a in range(nv):
        D[1 << a, a * K:(a + 1) * K] = pi0[a]
    sets = np.arange(S)
    for _ in range(1, N):
        E = np.zeros_like(D)
        for a in range(nv):
            bit = 1 << a
            seen, fresh = sets[(sets & bit) > 0], sets[(sets & bit) == 0]
            for v in range(K):
                w = pi[a, v]
                if w == 0:
                    continue
                E[seen] += w * D[seen]
                better = Jb[a * K + v] > Jb  # strictly better than the best so far: replaces it
                src = D[fresh] * w
                E[fresh | bit, a * K + v] += (src * better).sum(axis=1)
                E[fresh | bit] += src * ~better
        D = E
    count = np.array([bin(t).count("1") for t in range(S)], dtype=np.float64)
    return D.sum(axis=0).reshape(nv, K), float(count @ D.sum(axis=1))


@renamed_keywords(sampler="planner")
def infogain_run(p: Joint, planner: InfoGainSampler) -> InfoGainRun:
    """Exact output law, model calls and sequence-forwards of ``sampler`` on ``p``."""
    sampler = planner
    p = joint_arg(p)
    if not isinstance(sampler, InfoGainSampler):
        raise ValueError(f"planner: expected an InfoGainSampler, got {type(sampler).__name__}")
    d, K = p.d, p.K
    if (K + 1) ** d > MAX_INFOGAIN_STATES:
        raise ValueError(f"p: the exact Info-Gain chain enumerates up to (K+1)^d = {(K + 1) ** d:,} states (d={d}, "
                         f"K={K}), above {MAX_INFOGAIN_STATES:,}; use the sampler's simulate()")
    blocks = sampler.blocks(d)
    Pf = marginal_lattice(p.table, xp=np).ravel()
    stride = lattice_strides(d, K)
    live = {int(empty_state(d, K)): (1.0, 1.0)}  # state -> (mass, mass of runs no tie rule could touch)
    out, out0 = np.zeros(K**d), np.zeros(K**d)
    lost = lost0 = 0.0
    fw, seqs = 1.0, 1.0  # the first block's forward
    while live:
        nxt: dict = {}
        for idx, (m, m0) in live.items():
            vals = state_values(np.array([idx]), d, K)[0]
            masked = vals == K
            b = next(i for i, (s0, s1) in enumerate(blocks) if masked[s0:s1].any())
            inb = np.zeros(d, dtype=bool)
            inb[blocks[b][0]:blocks[b][1]] = True
            P = state_conditionals(Pf, np.array([idx]), d, K)[0]
            tgt, w, calls, nc, can_tie = _state_terms(sampler, Pf, idx, P, masked & inb, d, K, stride)
            fw += m * calls
            seqs += m * nc
            m0 = 0.0 if can_tie else m0
            tv = state_values(tgt, d, K)
            for t, wt, v in zip(tgt.tolist(), w.tolist(), tv):
                left = v == K
                if not left.any():
                    o = int(output_index(v[None], K)[0])
                    out[o] += m * wt
                    out0[o] += m0 * wt
                    continue
                if not Pf[t] > 0:
                    lost += m * wt
                    lost0 += m0 * wt
                    continue
                if not (left & inb).any():  # the block is full: the next block's first forward
                    fw += m * wt
                    seqs += m * wt
                a, a0 = nxt.get(t, (0.0, 0.0))
                nxt[t] = (a + m * wt, a0 + m0 * wt)
        live = nxt
    tie_mass = max(0.0, (out.sum() + lost) - (out0.sum() + lost0))
    return InfoGainRun(law=Joint(out.reshape(p.table.shape), lost=lost), forwards=float(fw), sequences=float(seqs),
                       ties=sampler.ties, tie_mass=float(tie_mass))
