r"""DUEL: the exact likelihood of a sampler whose position choice is deterministic.

Source: Turok, De Sa & Kuleshov, *DUEL: Exact Likelihood for Masked Diffusion via
Deterministic Unmasking*, arXiv 2603.01367 (v2, 10 March 2026). Read: the abstract and the
opening of §1 of the arXiv HTML page, the project page (giladturok.github.io/duel-project:
position selection by a policy, token prediction :math:`p_\theta(v \mid z)`), and the
authors' code ``giladturok/duel-code``: ``exact_likelihood.py`` (commit 0afae1c,
``compute_exact_loglikelihood``) and ``large_scale/exact_likelihood/strategies.py``
(commit 2213681: greedy confidence, probability margin, confidence threshold, blocks,
left-to-right, the oracle ``BlockPermutationStrategy``; ties by ``torch.topk``). The
theorem's number and its exact hypotheses were not in what could be read.

**The statement** (abstract: DUEL samplers "admit exact likelihood computation under the
test-time distribution"; the code): start from the all-masked sequence; at each step the
policy F picks the reveal set B from the partially revealed sequence :math:`z = x_A` (and
the model's output there), the true tokens :math:`x_B` are written in, and

.. math::

    \log q(x) = \sum_t \sum_{j \in B_t} \log p_\theta(x_j \mid x_{A_t}),
    \qquad B_t = F(x_{A_t}),\ A_{t+1} = A_t \cup B_t.

It is the log-probability of x under the sampler that runs F and draws each :math:`x_j` from
:math:`p_\theta(\cdot \mid x_{A_t})` independently, **because** the sampler can reach x only
along this one path: a path to x is a sequence of reveal sets, and F fixes each one from the
values revealed so far, which are x's own. Exactly when: F must be a function of
:math:`x_A` — fixed orders, and scored rules (confidence, margin, entropy, threshold, …) whose
ties are broken by a fixed rule (``ties="lowest"`` or ``"topk"``, DUEL's ``torch.topk``).
Under ``ties="random"`` the sampler mixes over tie resolutions and the product along one
resolution is not q(x) wherever x's path meets a split tie (:func:`duel_log_likelihood`
refuses it there). Random-order planners and sample-then-select (whose choice reads the drawn
values of positions it does not commit) are not deterministic given x_A at all.

Here the model :math:`p_\theta` is a law's exact conditionals (``p``): the planner and the
token probabilities both read them, as in the exact engine
(:func:`~mdmtheory.samplers.engine.exact_run`), against which everything here is checked.
The expected DUEL negative log-likelihood of data r is
:math:`\mathbb{E}_r[-\log q(X)] = H(r) + \mathrm{KL}(r \| q)`, so ranking planners by it is
ranking them by the exact KL (:func:`duel_ranking`) — when the likelihood is the sampler's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._estimate import Record
from ..laws.joint import Joint
from ..schedules.plans import Schedule
from .adaptive import _Deterministic
from .base import as_sampler
from .engine import exact_run
from .._validate import _short
from ..information.divergence import kl as _kl

__all__ = [
    "duel_log_likelihood",
    "duel_log_likelihoods",
    "duel_nll",
    "DuelRanking",
    "duel_ranking",
]


def _law(p, name: str = "p") -> Joint:
    if not isinstance(p, Joint):
        raise ValueError(f"{name}: expected a mdmtheory.Joint (its exact conditionals are the model), got {type(p).__name__}")
    if p.lost:
        raise ValueError(f"{name}: has lost mass; the law must be normalized")
    return p


def _planner(planner, ties):
    obj = as_sampler(planner, ties=ties)
    if not isinstance(obj, _Deterministic):
        raise ValueError(
            f"planner: {getattr(obj, 'name', type(obj).__name__)!r} does not choose its reveal set as a function of "
            "x_A, so DUEL's product is not its likelihood; pass a fixed-order or scored planner of "
            "mdmtheory.samplers.adaptive (e.g. ConfidencePlanner(ties='lowest'))"
        )
    return obj


def _ruled(planner, ties):
    """``planner`` under the tie rule ``ties`` when it has one (fixed orders have none)."""
    obj = as_sampler(planner)
    return as_sampler(obj, ties=ties) if obj.capabilities.scored else obj


def _sizes(obj, plan, d: int):
    if plan is None:
        if obj.needs_schedule:
            raise ValueError(f"plan: planner {obj.name!r} needs a Schedule (sizes k_t)")
        return None
    if not isinstance(plan, Schedule):
        raise ValueError(f"plan: expected a mdmtheory.Schedule or None, got {type(plan).__name__}")
    if plan.d != d:
        raise ValueError(f"plan: a schedule of {plan.d} positions, but the law has d = {d}")
    return plan.sizes


class _Walker:
    """DUEL's loop on one law: marginals cached by revealed set."""

    def __init__(self, p: Joint, obj, sizes):
        self.p, self.obj, self.sizes = p, obj, sizes
        self.d, self.K = p.d, p.K
        self._m: dict[int, np.ndarray] = {}

    def marg(self, mask: int) -> np.ndarray:
        m = self._m.get(mask)
        if m is None:
            axes = tuple(i for i in range(self.d) if not mask >> i & 1)
            m = self.p.table.sum(axis=axes, keepdims=True) if axes else self.p.table
            self._m[mask] = m
        return m

    def log_q(self, x: tuple[int, ...]) -> float:
        d, K = self.d, self.K
        A, t, total = 0, 0, 0.0
        while A != (1 << d) - 1:
            idx = tuple(x[i] if A >> i & 1 else 0 for i in range(d))
            pA = float(self.marg(A)[idx])
            if pA <= 0.0:
                return -math.inf  # the path left the law's support: the engine's lost mass
            free = np.array([[not A >> j & 1 for j in range(d)]])
            probs = np.zeros((1, d, K))
            for j in range(d):
                if free[0, j]:
                    m = self.marg(A | 1 << j)
                    probs[0, j] = m[idx[:j] + (slice(None),) + idx[j + 1:]].reshape(K) / pA
            if self.sizes is not None and t >= len(self.sizes):
                raise ValueError(f"plan: its {len(self.sizes)} steps end with masked positions left")
            size = self.obj._step_size(t, None if self.sizes is None else self.sizes[t], d)
            ch = self.obj._choice(t, size, probs, free)
            if ch.chosen.shape[0] != 1:
                raise ValueError(
                    f"ties: at step {t} the path of x = {x} meets tied scores that ties='random' splits at random, so "
                    "the sampler is not deterministic there; pass ties='lowest' or 'topk' (DUEL's torch.topk)"
                )
            B = ch.chosen[0]
            for j in np.flatnonzero(B):
                c = probs[0, j, x[j]]
                if c <= 0.0:
                    return -math.inf
                total += math.log(c)
            A |= int((B.astype(np.int64) << np.arange(d, dtype=np.int64)).sum())
            t += 1
        if self.sizes is not None and t != len(self.sizes):
            raise ValueError(f"plan: the planner finished in {t} steps, the schedule has {len(self.sizes)}")
        return total


def _x_arg(x, d: int, K: int) -> tuple[int, ...]:
    try:
        arr = np.asarray(x)
    except Exception:  # ragged input
        raise ValueError(f"x: expected a sequence of {d} tokens in 0..{K - 1}, got {_short(x)}") from None
    if arr.shape != (d,) or arr.dtype.kind not in "iu" or np.any(arr < 0) or np.any(arr >= K):
        raise ValueError(f"x: expected a sequence of {d} integer tokens in 0..{K - 1}, got {_short(x)}")
    return tuple(int(v) for v in arr)


def duel_log_likelihood(p, x, planner, plan=None, *, ties=None) -> float:
    r"""DUEL's :math:`\log q(x)`: the sum of :math:`\log p(x_j \mid x_{A_t})` over the positions
    the planner reveals, step by step, along the path x determines (module docstring).

    Parameters
    ----------
    p : the model (a :class:`~mdmtheory.Joint`; its exact conditionals).
    x : a full sequence, d tokens in 0..K−1.
    planner : a planner deterministic given x_A (:mod:`mdmtheory.samplers.adaptive`).
    plan : a :class:`~mdmtheory.Schedule` for schedule-driven planners, None otherwise.
    ties : None (the planner's rule) or a rule replacing it (``"lowest"``, ``"topk"``).

    Returns −inf where a factor is 0 or the path reaches a context of probability 0 (there
    the exact engine loses the mass). Equals ``log exact_run(p, plan, planner).law.table[x]``
    (tests/samplers/test_duel.py).
    """
    p = _law(p)
    obj = _planner(planner, ties)
    w = _Walker(p, obj, _sizes(obj, plan, p.d))
    return w.log_q(_x_arg(x, p.d, p.K))


def duel_log_likelihoods(p, planner, plan=None, *, ties=None) -> np.ndarray:
    """:func:`duel_log_likelihood` for every x, as a (K,)*d array (K**d <= 65536)."""
    p = _law(p)
    if p.K**p.d > 1 << 16:
        raise ValueError(f"p: K**d = {p.K ** p.d} sequences, above the limit 65536 of this per-sequence walk")
    obj = _planner(planner, ties)
    w = _Walker(p, obj, _sizes(obj, plan, p.d))
    out = np.empty(p.table.shape)
    for x in np.ndindex(*p.table.shape):
        out[x] = w.log_q(x)
    return out


def duel_nll(p, planner, plan=None, *, data=None, ties=None) -> float:
    r"""Expected DUEL negative log-likelihood :math:`-\sum_x r(x) \log q(x)` (nats) of the data
    law r (``data``; default p itself) under the sampler driven by p's conditionals; inf when
    r puts mass where q(x) = 0. Equals :math:`H(r) + \mathrm{KL}(r \| q)`."""
    p = _law(p)
    r = p if data is None else _law(data, "data")
    if r.table.shape != p.table.shape:
        raise ValueError(f"data: shape {r.table.shape} differs from the model's {p.table.shape}")
    lq = duel_log_likelihoods(p, planner, plan, ties=ties)
    pos = r.table > 0
    if np.any(np.isneginf(lq[pos])):
        return math.inf
    return float(-np.sum(r.table[pos] * lq[pos]))


@dataclass(frozen=True)
class DuelRanking(Record):
    """Planners ranked by DUEL's likelihood and by the exact KL (:func:`duel_ranking`).

    ``labels`` the candidates; ``nll`` DUEL's expected NLL of the data under each (tie rule
    ``ties``); ``kl`` the exact KL(data ‖ q) of the engine's law under the same rule;
    ``kl_own`` the exact KL under each planner's own tie rule (the sampler actually run when
    it is left at its default, ``ties="random"``); ``entropy`` H(data). ``by_nll``, ``by_kl``,
    ``by_kl_own``: the labels best first (stable sort; values within 1e-12 count as equal and
    keep the candidates' order).
    """

    labels: tuple[str, ...]
    nll: tuple[float, ...]
    kl: tuple[float, ...]
    kl_own: tuple[float, ...]
    entropy: float
    ties: str

    @staticmethod
    def _order(values, labels) -> tuple[str, ...]:
        v = np.round(np.asarray(values, dtype=np.float64), 12)
        return tuple(labels[i] for i in np.argsort(v, kind="stable"))

    @property
    def by_nll(self) -> tuple[str, ...]:
        return self._order(self.nll, self.labels)

    @property
    def by_kl(self) -> tuple[str, ...]:
        return self._order(self.kl, self.labels)

    @property
    def by_kl_own(self) -> tuple[str, ...]:
        return self._order(self.kl_own, self.labels)

    @property
    def agree(self) -> bool:
        """Whether DUEL's ranking is the exact KL ranking of the samplers it describes."""
        return self.by_nll == self.by_kl


def duel_ranking(p, candidates, *, data=None, ties: str = "topk") -> DuelRanking:
    """Rank candidate samplers by DUEL's expected NLL and by the exact KL.

    ``candidates``: a sequence of (label, planner, plan) triples (plan None for self-sized
    planners). ``ties`` is the rule DUEL's likelihood (and ``kl``) uses — ``"topk"`` as in the
    authors' code, or ``"lowest"``; ``kl_own`` keeps each planner's own rule.
    """
    p = _law(p)
    r = p if data is None else _law(data, "data")
    if not isinstance(ties, str) or ties not in ("topk", "lowest"):
        raise ValueError(f"ties: DUEL needs a deterministic tie rule, 'topk' or 'lowest', got {ties!r}")
    try:
        items = list(candidates)
    except TypeError:
        raise ValueError("candidates: expected a sequence of (label, planner, plan) triples") from None
    if not items:
        raise ValueError("candidates: expected at least one (label, planner, plan) triple")
    labels, nll, kl, kl_own = [], [], [], []
    for item in items:
        if not isinstance(item, tuple) or len(item) != 3 or not isinstance(item[0], str):
            raise ValueError(f"candidates: expected (label, planner, plan) triples, got {item!r}")
        label, planner, plan = item
        labels.append(label)
        ruled = _ruled(planner, ties)
        nll.append(duel_nll(p, ruled, plan, data=r))
        kl.append(_kl(r, exact_run(p, plan, ruled).law))
        own = as_sampler(planner)
        kl_own.append(_kl(r, exact_run(p, plan, own).law))
    return DuelRanking(tuple(labels), tuple(nll), tuple(kl), tuple(kl_own), float(-np.sum(r.table[r.table > 0] * np.log(r.table[r.table > 0]))), ties)
