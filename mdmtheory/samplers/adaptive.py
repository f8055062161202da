r"""Practical and adaptive planners: which positions to reveal, chosen from the conditionals.

Every planner here is **deterministic given** :math:`x_A` up to ties: at a state
:math:`(A, x_A)` it picks one reveal set :math:`B(x_A)`, or under ``ties="random"`` a uniform
choice among the sets that differ only inside a tie cluster (section Ties). For the exact law engine
(:func:`~mdmtheory.samplers.engine.exact_run`) it gives, for each distinct B, the probability
of choosing it as an array over :math:`x_A` (0/1 indicators, or :math:`1/\binom{m}{r}` for
the resolutions of a split tie; ``moves``, keepdims shape ``ctx.shape``, or ``_choice`` for all
live states of the engine's sparse chain at once); for Monte
Carlo (:mod:`mdmtheory.samplers.simulate`) its ``select`` method picks B for a batch of
samples at once. Both paths call the same ``_rank`` on a ``(N, d, K)`` array of one-token
conditionals :math:`p(x_j = v \mid x_A)` (one row per :math:`x_A` or per sample), so the exact
law and the simulation drive the very same rule.

Along the single path that a sequence x determines,

.. math::

    q(x) = \prod_t \prod_{j \in B_t} p(x_j \mid x_{A_t}), \qquad
    \mathrm{KL}(p \,\|\, q) = \mathbb{E}_p \sum_t \mathrm{TC}(x_{B_t} \mid x_{A_t}),

(docs/design.md §3) where :math:`\mathrm{TC}(x_B \mid x_A) = \log p(x_B \mid x_A) - \sum_{j \in B}
\log p(x_j \mid x_A)` pointwise; the engine's trajectory KL (``trajectory=True``) equals
KL(p‖q) for these planners when no tie is split at random (``ExactRun.tie_mass == 0`` or
``ties != "random"``), and is an upper bound on it otherwise.

Planners
--------
* Schedule-driven (``needs_schedule = True``; step t reveals the schedule's :math:`k_t`):
  :class:`LeftToRightPlanner` (lowest masked indices), :class:`ConfidencePlanner`
  (:math:`\max_v p(v \mid x_A)`), :class:`MarginPlanner` (top-1 minus top-2),
  :class:`EntropyPlanner` (lowest conditional entropy).
* Block and order planners that also have their own sizes (``plan=None``):
  :class:`SemiAutoregressivePlanner` (LLaDA blocks), :class:`DilatedPlanner` (DUS),
  :class:`PositionCalibratedPlanner` (PC-Sampler). With a Schedule they reveal :math:`k_t`
  positions per step in their order (a step may then cross a block boundary); with
  ``plan=None`` they follow their published step sizes.
* Variable-size (``needs_schedule = False``, ``plan=None`` only): :class:`ThresholdPlanner`
  (Fast-dLLM), :class:`FactorPlanner` (Fast-dLLM's factor rule), :class:`FrechetPlanner`
  (Fast-dLLM++), :class:`EntropyBudgetPlanner` (EB-Sampler). Their number of steps is random;
  ``exact_run(p, None, planner).step_counts`` is its exact distribution.

Ties
----
Positions are ranked by score (best first); consecutive sorted scores closer than
:data:`TIE_TOL` form one tie cluster (:func:`mdmtheory.samplers.ties.clusters`). When a step
needs only some positions of its boundary cluster, the planner's ``ties`` decides which
(:mod:`mdmtheory.samplers.ties`): ``"random"`` (default; a uniformly random subset of the
tied positions, exact law = the mixture), ``"lowest"`` (lowest indices, the package's rule
before the option existed) or ``"topk"`` (``torch.topk``'s order, platform-dependent). Under
``"random"`` a planner is deterministic given :math:`x_A` only on states without a split
tie; the exact engine then carries one weighted branch per tie resolution
(:class:`~mdmtheory.samplers.ties.Choice`), and Monte Carlo draws the resolution.
The same tolerance picks the predicted token of the position-calibrated score (lowest token
among near-maximal probabilities). Genuine score gaps below 1e-12 count as ties.
:class:`LeftToRightPlanner` and :class:`DilatedPlanner` have no scores and no ties
(``ties`` is None).

References: LLaDA (Nie et al. 2025, arXiv 2502.09992, semi-autoregressive remasking);
Fast-dLLM (Wu et al. 2025, arXiv 2505.22618, confidence threshold); EB-Sampler (Ben-Hamu
et al. 2025, arXiv 2505.24857, entropy-bounded unmasking); DUS (Luxembourg et al. 2025,
arXiv 2506.19037, eqs. 8–9); PC-Sampler (Huang et al. 2025, arXiv 2508.13021).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np
from scipy.special import entr

from .._estimate import Record
from ..laws.joint import Joint, NORMALIZATION_TOL, joint_arg
from ..schedules.plans import Schedule
from .._validate import bool_arg, bool_array, float_array, int_arg, real_arg, size_arg
from .base import Capabilities, PositionSampler, register_planner, StepContext
from .ties import check_ties, Choice, clusters, DEFAULT_TIES, sample_choice, tie_choices, TIE_TOL, TOPK_LAYOUTS

__all__ = [
    "TIE_TOL",
    "SCORES",
    "LeftToRightPlanner",
    "ConfidencePlanner",
    "MarginPlanner",
    "EntropyPlanner",
    "SemiAutoregressivePlanner",
    "ThresholdPlanner",
    "EntropyBudgetPlanner",
    "FactorPlanner",
    "FrechetPlanner",
    "DilatedPlanner",
    "PositionCalibratedPlanner",
    "llada_step_sizes",
    "dilated_levels",
    "background_frequency",
    "ranking",
    "ranked_choice",
]

# -- scores: (N, d, K) conditionals -> (N, d), higher = revealed first ---------------------
def _confidence(probs: np.ndarray) -> np.ndarray:
    return probs.max(axis=-1)


def _margin(probs: np.ndarray) -> np.ndarray:
    top = np.sort(probs, axis=-1)
    return top[..., -1] - top[..., -2]


def _neg_entropy(probs: np.ndarray) -> np.ndarray:
    return -entr(probs).sum(axis=-1)


#: Per-position scores from the conditionals; higher is revealed first. ``entropy`` is the
#: negative conditional entropy (lowest entropy first).
SCORES = {"confidence": _confidence, "margin": _margin, "entropy": _neg_entropy}


# -- the selection rule ------------------------------------------------------------------
def ranking(scores, free, group=None) -> np.ndarray:
    r"""Reveal priority of the positions of each row: best score first, ties to the lowest index.

    Free positions are sorted by (``group`` ascending, score descending); consecutive sorted
    scores of one group closer than :data:`TIE_TOL` are one *tie cluster*
    (:func:`mdmtheory.samplers.ties.clusters`), and inside a cluster positions go by
    increasing index (the ``ties="lowest"`` order). Non-free positions come last.

    Parameters
    ----------
    scores : (N, d) floats, higher first (finite on free positions).
    free : (N, d) bool.
    group : (d,) ints, optional; lower groups rank first (semi-AR blocks, DUS rounds).

    Returns
    -------
    (N, d) int64, ``out[n, r]`` = the position of rank r in row n.
    """
    scores, free = _scores_free(scores, free, group)
    cl = clusters(scores, free, group)
    return np.lexsort((np.broadcast_to(np.arange(cl.shape[1]), cl.shape), cl), axis=-1)


def ranked_choice(scores, free, k, group=None) -> np.ndarray:
    """The first ``k[n]`` positions of :func:`ranking` in each row, as an (N, d) bool mask
    (``tie_choices(..., ties="lowest").chosen``).

    ``k`` is an int or (N,) ints with ``0 <= k[n] <= free[n].sum()``.
    """
    scores, free = _scores_free(scores, free, group)
    n, d = free.shape
    if isinstance(k, (numbers.Integral, np.integer)) and not isinstance(k, (bool, np.bool_)):
        k = int_arg(k, "k", 0, d)
    else:
        kk = float_array(k, "k", ndim=1, what="(N,) integers")
        if kk.shape != (n,) or np.any(kk != np.round(kk)) or np.any(kk < 0) or np.any(kk > d):
            raise ValueError(f"k: expected an integer in 0..{d} or (N,) of them, got shape {kk.shape}")
        k = kk.astype(np.int64)
    if np.any(np.asarray(k) > free.sum(axis=1)):
        raise ValueError("k: more positions than a row has free")
    return tie_choices(scores, free, k, "lowest", group).chosen


def _scores_free(scores, free, group=None):
    """(scores (N, d) float64, finite on free positions; free (N, d) bool), checked; ``group``
    None or (d,) integers."""
    scores = float_array(scores, "scores", ndim=2, what="(N, d)", finite=False)
    free = bool_array(free, "free", shape=scores.shape)
    if not np.all(np.isfinite(scores[free])):
        raise ValueError("scores: must be finite on the free positions")
    if group is not None:
        g = float_array(group, "group", ndim=1, what="(d,) integers")
        if g.shape != (scores.shape[1],) or np.any(g != np.round(g)) or np.any(np.abs(g) > 2**53):
            raise ValueError(f"group: expected (d={scores.shape[1]},) integers, got shape {g.shape}")
    return scores, free


def _context_arrays(ctx: StepContext) -> tuple[np.ndarray, np.ndarray]:
    """Conditionals of every free position for every x_A: (N, d, K), and the free mask."""
    N = ctx.K ** bin(ctx.revealed).count("1")
    probs = np.zeros((N, ctx.d, ctx.K))
    for j in ctx.free:
        probs[:, j, :] = np.moveaxis(ctx.conditional(j), j, -1).reshape(N, ctx.K)
    free = np.zeros((N, ctx.d), dtype=bool)
    free[:, list(ctx.free)] = True
    return probs, free


# -- argument checks ---------------------------------------------------------------------
def _pos_int(value, name: str, *, allow_none: bool = False):
    if value is None and allow_none:
        return None
    return int_arg(value, name, 1)


_finite = real_arg


def _check_layout(layout):
    if not isinstance(layout, str) or layout not in TOPK_LAYOUTS:
        raise ValueError(f"topk_layout: expected one of {list(TOPK_LAYOUTS)} ('sequence': LLaDA's generate.py, the "
                         f"whole sequence; 'block': diffusers' BlockRefinementScheduler, the block only), got {layout!r}")


# -- base class --------------------------------------------------------------------------
class _Deterministic(PositionSampler, Record):
    """Shared machinery: ``moves`` (exact engine), ``_choice`` (the engine's sparse chain) and
    ``select`` (Monte Carlo), all over ``_rank``.

    A subclass defines ``_rank(step, size, probs, free) -> (scores, k, group, extra)``: the
    step commits ``extra`` (an (N, d) bool set, or None) and the top ``k[n]`` free positions by
    (``group``, ``scores``), ties broken by the planner's ``ties`` rule
    (:func:`mdmtheory.samplers.ties.tie_choices`).
    """

    allows_empty: ClassVar[bool] = False
    #: whether ``_rank`` reads the conditionals (False: x-independent order)
    uses_probs: ClassVar[bool] = True
    #: the tie rule; None for planners without scores (a fixed order never ties)
    ties: ClassVar[str | None] = None
    ranked_rule: ClassVar[bool] = True

    @property
    def deterministic(self) -> bool:
        """Whether B is a function of x_A: False under ``ties="random"`` (a split tie is drawn)."""
        return self.ties != "random"

    # subclasses: name, needs_schedule, _rank(step, size, probs, free)
    def _step_size(self, step: int, size, d: int):
        if size is None and self.needs_schedule:
            raise ValueError(f"plan: planner {self.name!r} needs a Schedule (sizes k_t)")
        return size

    def _rank(self, step, size, probs, free):  # pragma: no cover - abstract
        raise NotImplementedError

    def _choice(self, step, size, probs, free) -> Choice:
        """Every reveal set of each row with its probability (one per tie resolution under
        ``ties="random"``), and which rows had a tie decided by the rule."""
        free = np.asarray(free, dtype=bool)
        scores, k, group, extra = self._rank(step, size, probs, free)
        ch = tie_choices(scores, free, k, self.ties or "lowest", group, getattr(self, "topk_layout", "sequence"))
        if extra is None:
            return ch
        return Choice(ch.rows, ch.chosen | extra[ch.rows], ch.weight, ch.split)

    def _choose(self, step, size, probs, free, rng=None) -> np.ndarray:
        """One reveal set per row, (N, d) bool: the tie rule's, or under ``ties="random"`` a
        draw from ``rng`` (needed only when a tie is split)."""
        free = np.asarray(free, dtype=bool)
        if self.ties == "random":
            scores, k, group, extra = self._rank(step, size, probs, free)
            if rng is None:
                ch = tie_choices(scores, free, k, "lowest", group)
                if ch.split.any():
                    raise ValueError(f"rng: planner {self.name!r} with ties='random' met tied scores and draws "
                                     "among them; pass a numpy Generator (or use ties='lowest' / 'topk')")
                chosen = ch.chosen
            else:
                chosen = sample_choice(scores, free, k, rng, group)
            return chosen if extra is None else chosen | extra
        ch = self._choice(step, size, probs, free)
        return ch.chosen  # one row per input row

    def moves(self, ctx: StepContext):
        size = self._step_size(ctx.step, ctx.size, ctx.d)
        if self.uses_probs:
            probs, free = _context_arrays(ctx)
        else:  # x-independent: one row suffices
            probs = np.zeros((1, ctx.d, ctx.K))
            free = np.zeros((1, ctx.d), dtype=bool)
            free[:, list(ctx.free)] = True
        ch = self._choice(ctx.step, size, probs, free)
        masks = (ch.chosen.astype(np.int64) << np.arange(ctx.d, dtype=np.int64)).sum(axis=1)
        if free.shape[0] == 1:
            for B in np.unique(masks):
                yield int(B), float(ch.weight[masks == B].sum())
            return
        for B in np.unique(masks):
            w = np.zeros(free.shape[0])
            np.add.at(w, ch.rows[masks == B], ch.weight[masks == B])
            yield int(B), w.reshape(ctx.shape)

    def select(self, step: int, size, probs: np.ndarray, free: np.ndarray, rng=None) -> np.ndarray:
        """Monte Carlo: the chosen positions (n, d) for a batch of samples.

        ``probs`` (n, d, K) are the conditionals :math:`p(x_j = v \\mid x_A)` of each sample
        (rows of revealed positions are ignored), ``free`` (n, d) its masked positions, ``rng``
        a numpy Generator (draws split ties under ``ties="random"``; a ValueError if one is
        needed and missing).
        """
        size = self._step_size(step, size, free.shape[1])
        if not self.uses_probs:
            probs = None
        return self._choose(step, size, probs, free, rng)


def _k(size, free: np.ndarray) -> np.ndarray:
    return np.full(free.shape[0], size, dtype=np.int64)


# -- schedule-driven ---------------------------------------------------------------------
@dataclass(frozen=True)
class LeftToRightPlanner(_Deterministic):
    """Reveal the ``k_t`` lowest masked positions (autoregressive order in blocks of k_t)."""

    name: ClassVar[str] = "left_to_right"
    needs_schedule: ClassVar[bool] = True
    uses_probs: ClassVar[bool] = False

    @property
    def capabilities(self) -> Capabilities:
        """A fixed order, position 0 first (``order="prefix"``): the step of size k_t reveals
        positions s_t, ..., s_t + k_t − 1 (PB25's fixed partition)."""
        return Capabilities(plans=("Schedule", "BlockPlan", "RandomSchedule"), reads_law=False, deterministic=True,
                            order="prefix", positions=True, path_kl=True, jax=True, ranked=True)

    def _rank(self, step, size, probs, free):
        return np.zeros(free.shape), _k(size, free), np.arange(free.shape[1]), None


@dataclass(frozen=True)
class _ScoreTopK(_Deterministic):
    """Top-k by a score; ``ties``: see :mod:`mdmtheory.samplers.ties` (default ``"random"``)."""

    ties: str = DEFAULT_TIES
    needs_schedule: ClassVar[bool] = True
    score: ClassVar[str] = ""

    def __post_init__(self):
        check_ties(self.ties)

    def _rank(self, step, size, probs, free):
        return SCORES[self.score](probs), _k(size, free), None, None


@dataclass(frozen=True)
class ConfidencePlanner(_ScoreTopK):
    r"""Reveal the ``k_t`` masked positions with the largest :math:`\max_v p(v \mid x_A)`."""

    name: ClassVar[str] = "confidence"
    score: ClassVar[str] = "confidence"


@dataclass(frozen=True)
class MarginPlanner(_ScoreTopK):
    r"""Reveal the ``k_t`` masked positions with the largest top-1 minus top-2 probability."""

    name: ClassVar[str] = "margin"
    score: ClassVar[str] = "margin"


@dataclass(frozen=True)
class EntropyPlanner(_ScoreTopK):
    r"""Reveal the ``k_t`` masked positions with the lowest :math:`H(X_j \mid x_A)`."""

    name: ClassVar[str] = "entropy"
    score: ClassVar[str] = "entropy"


# -- semi-autoregressive blocks ----------------------------------------------------------
def llada_step_sizes(d: int, block_length: int, steps_per_block: int) -> tuple[int, ...]:
    r"""Step sizes of LLaDA's semi-autoregressive sampler.

    Positions are cut into blocks of ``block_length`` (the last one possibly shorter); a block
    of length :math:`L_b` gets :math:`S_b = \min(S, L_b)` steps revealing
    :math:`\lfloor L_b/S_b \rfloor` tokens each, plus one more in the first
    :math:`L_b \bmod S_b` steps (LLaDA ``get_num_transfer_tokens``). :math:`S_b \le L_b` avoids
    empty steps (LLaDA requires the division to be exact instead).
    """
    d = _pos_int(d, "d")
    L = _pos_int(block_length, "block_length")
    S = _pos_int(steps_per_block, "steps_per_block")
    sizes = []
    for start in range(0, d, L):
        Lb = min(L, d - start)
        Sb = min(S, Lb)
        base, rem = divmod(Lb, Sb)
        sizes += [base + 1] * rem + [base] * (Sb - rem)
    return tuple(sizes)


@dataclass(frozen=True)
class SemiAutoregressivePlanner(_Deterministic):
    r"""LLaDA-style semi-autoregressive decoding: blocks left to right, a score inside a block.

    Positions are cut into consecutive blocks of ``block_length``; masked positions are ranked
    by (block, score), so a block is finished before the next one starts, and inside a block
    the best ``score`` (``"confidence"`` = LLaDA's low-confidence remasking at temperature 0,
    ``"margin"`` or ``"entropy"``) goes first.

    Sizes: with a Schedule, step t reveals :math:`k_t` positions in that ranking (a step may
    cross into the next block); with ``plan=None`` (requires ``steps_per_block``) the sizes
    are :func:`llada_step_sizes`, which never cross a block boundary.

    ``ties`` breaks equal scores inside a block (:mod:`mdmtheory.samplers.ties`);
    ``topk_layout`` says which vector ``ties="topk"`` hands torch.topk: ``"sequence"`` (LLaDA's
    ``generate.py``: all d positions, ``-inf`` outside the block) or ``"block"`` (diffusers'
    ``BlockRefinementScheduler``: the block's positions only); torch's tie order depends on it.

    The confidence is :math:`\max_v p(v \mid x_A)`, a function of :math:`x_A` only; LLaDA at
    temperature > 0 ranks by the probability of the *sampled* token, which makes B depend on
    the drawn values and is not a planner of this kind.
    """

    block_length: int
    steps_per_block: int | None = None
    score: str = "confidence"
    ties: str = DEFAULT_TIES
    topk_layout: str = "sequence"
    name: ClassVar[str] = "semi_ar"

    def __post_init__(self):
        check_ties(self.ties)
        _check_layout(self.topk_layout)
        _pos_int(self.block_length, "block_length")
        _pos_int(self.steps_per_block, "steps_per_block", allow_none=True)
        if not isinstance(self.score, str) or self.score not in SCORES:
            raise ValueError(f"score: expected one of {sorted(SCORES)}, got {self.score!r}")

    @property
    def needs_schedule(self) -> bool:
        return self.steps_per_block is None

    def schedule(self, d: int) -> Schedule:
        """The planner's own step sizes for length d (LLaDA), as a Schedule."""
        if self.steps_per_block is None:
            raise ValueError("steps_per_block: needed for the planner's own schedule (or pass a Schedule)")
        return Schedule(llada_step_sizes(d, self.block_length, self.steps_per_block))

    def _step_size(self, step, size, d):
        if size is None:
            if self.steps_per_block is None:
                raise ValueError("plan: SemiAutoregressivePlanner without steps_per_block needs a Schedule")
            return self.schedule(d).sizes[step]
        return size

    def _rank(self, step, size, probs, free):
        return SCORES[self.score](probs), _k(size, free), np.arange(free.shape[1]) // self.block_length, None


# -- dilated (DUS) -----------------------------------------------------------------------
def dilated_levels(length: int, base: int = 2, merge_last: bool = True) -> tuple[tuple[int, ...], ...]:
    r"""Coarse-to-fine reveal rounds of one DUS block of ``length`` positions (0-based).

    Stride :math:`s_1 = \lfloor B / a \rfloor`, then :math:`s_{r+1} = \lfloor s_r / a \rfloor`
    while :math:`s_r \ge 1`; round r reveals the still-masked positions i with
    :math:`i \bmod s_r = 0` (DUS eqs. 8–9). As in the authors' implementation
    (``dilated_unmask_levels`` + ``merge_last_level``), leftovers form a last round and a last
    round smaller than the one before is merged into it. For :math:`B = a^R` this gives R
    rounds; otherwise the count may differ from :math:`\lceil \log_a B \rceil`.

    >>> dilated_levels(8)
    ((0, 4), (2, 6), (1, 3, 5, 7))
    """
    length = size_arg(length, "length")  # <= LIMITS["length"] = 2**16, before the rounds are built
    base = _pos_int(base, "base")
    merge_last = bool_arg(merge_last, "merge_last")
    if base == 1:
        return (tuple(range(length)),)
    levels: list[list[int]] = []
    revealed: set[int] = set()
    stride = length // base
    while stride >= 1:
        this = [i for i in range(length) if i % stride == 0 and i not in revealed]
        if this:
            levels.append(this)
            revealed.update(this)
        stride //= base
    rest = [i for i in range(length) if i not in revealed]
    if rest:
        levels.append(rest)
    if merge_last and len(levels) >= 2 and len(levels[-1]) < len(levels[-2]):
        levels[-2].extend(levels.pop())
    return tuple(tuple(lv) for lv in levels)


@lru_cache(maxsize=64)
def _dilated_rounds(d, block_length, base, merge_last):
    L = d if block_length is None else block_length
    out = []
    for start in range(0, d, L):
        out += [tuple(start + i for i in lv) for lv in dilated_levels(min(L, d - start), base, merge_last)]
    return tuple(out)


@lru_cache(maxsize=64)
def _dilated_rank(d, block_length, base, merge_last):
    rank = np.empty(d, dtype=np.int64)
    rank[[j for r in _dilated_rounds(d, block_length, base, merge_last) for j in r]] = np.arange(d)
    rank.setflags(write=False)
    return rank


@dataclass(frozen=True)
class DilatedPlanner(_Deterministic):
    r"""Dilated Unmasking Scheduler (DUS): a fixed coarse-to-fine order inside blocks.

    Positions are cut into blocks of ``block_length`` (default: the whole sequence); block b is
    revealed in the rounds of :func:`dilated_levels`. The order is (block, round, index), the
    same for every :math:`x_A` (DUS is model-free). With ``plan=None`` each round is one step
    (the published sampler); with a Schedule step t reveals the next :math:`k_t` positions of
    that order.
    """

    block_length: int | None = None
    base: int = 2
    merge_last: bool = True
    name: ClassVar[str] = "dilated"
    needs_schedule: ClassVar[bool] = False
    uses_probs: ClassVar[bool] = False

    def __post_init__(self):
        _pos_int(self.block_length, "block_length", allow_none=True)
        _pos_int(self.base, "base")
        bool_arg(self.merge_last, "merge_last")

    def rounds(self, d: int) -> tuple[tuple[int, ...], ...]:
        """All rounds over positions 0..d-1, block by block (d <= 2**16)."""
        d = _pos_int(d, "d")
        return _dilated_rounds(d, self.block_length, self.base, self.merge_last)

    def schedule(self, d: int) -> Schedule:
        """The planner's own step sizes (one step per round)."""
        return Schedule([len(r) for r in self.rounds(d)])

    def _order(self, d: int) -> np.ndarray:
        return _dilated_rank(d, self.block_length, self.base, self.merge_last)

    def _step_size(self, step, size, d):
        return self.schedule(d).sizes[step] if size is None else size

    def _rank(self, step, size, probs, free):
        return np.zeros(free.shape), _k(size, free), self._order(free.shape[1]), None


# -- position-calibrated (PC-Sampler) ----------------------------------------------------
def background_frequency(p: Joint) -> np.ndarray:
    r"""Mean token frequency over positions, :math:`p_{bg}(v) = \frac1d \sum_j p(X_j = v)`."""
    p = joint_arg(p)
    return np.mean([p.marginal([j]) for j in range(p.d)], axis=0)


@dataclass(frozen=True)
class PositionCalibratedPlanner(_Deterministic):
    r"""PC-Sampler: position-aware weight times a background-calibrated confidence.

    .. math::

        \mathrm{score}_i = e^{-\lambda (i - b_i)} \,
        \min\bigl(-\hat p_i \log p_{bg}(\hat x_i),\ \alpha\bigr),

    with :math:`\hat x_i = \arg\max_v p(v \mid x_A)` (temperature 0; ties to the lowest token),
    :math:`\hat p_i = p(\hat x_i \mid x_A)` its probability, :math:`p_{bg}` the background
    token frequency (PC-Sampler counts it on a corpus; :func:`background_frequency` gives the
    law's mean token marginal), and :math:`b_i` the first position of the block holding i.
    Blocks (``block_length``, default the whole sequence, i.e. :math:`b_i = 0`) are decoded in
    order as in :class:`SemiAutoregressivePlanner`; the highest score goes first. This follows
    ``pc_sampler_function`` of the reference code (positions counted from the current block's
    start, clamp at α). Sizes: a Schedule, or with ``plan=None`` the LLaDA sizes
    (``steps_per_block`` required).

    Parameters
    ----------
    background : (K,) probability vector with positive entries (the log must be finite).
    lam : λ >= 0, decay of the position weight.
    alpha : α > 0, clip of the calibrated confidence (reference defaults λ = α = 1).
    ties, topk_layout : the tie rule and torch.topk's vector layout, as in
        :class:`SemiAutoregressivePlanner`.
    """

    background: tuple
    lam: float = 1.0
    alpha: float = 1.0
    block_length: int | None = None
    steps_per_block: int | None = None
    ties: str = DEFAULT_TIES
    topk_layout: str = "sequence"
    name: ClassVar[str] = "position_calibrated"

    def __post_init__(self):
        check_ties(self.ties)
        _check_layout(self.topk_layout)
        bg = float_array(self.background, "background", what="(K,) probabilities", finite=False)
        if bg.ndim != 1 or bg.shape[0] < 2 or not np.all(np.isfinite(bg)):
            raise ValueError(f"background: expected a finite (K,) vector with K >= 2, got shape {bg.shape}")
        if np.any(bg <= 0):
            raise ValueError("background: every token frequency must be > 0 (log p_bg must be finite)")
        if abs(bg.sum() - 1.0) > NORMALIZATION_TOL:
            raise ValueError(f"background: must sum to 1 (got {bg.sum()!r}); normalize it yourself")
        object.__setattr__(self, "background", tuple(float(v) for v in bg))
        if _finite(self.lam, "lam") < 0:
            raise ValueError(f"lam: expected lam >= 0, got {self.lam}")
        if _finite(self.alpha, "alpha") <= 0:
            raise ValueError(f"alpha: expected alpha > 0, got {self.alpha}")
        _pos_int(self.block_length, "block_length", allow_none=True)
        _pos_int(self.steps_per_block, "steps_per_block", allow_none=True)

    @property
    def needs_schedule(self) -> bool:
        return self.steps_per_block is None

    def schedule(self, d: int) -> Schedule:
        if self.steps_per_block is None:
            raise ValueError("steps_per_block: needed for the planner's own schedule (or pass a Schedule)")
        L = d if self.block_length is None else self.block_length
        return Schedule(llada_step_sizes(d, L, self.steps_per_block))

    def _step_size(self, step, size, d):
        if size is None:
            return self.schedule(d).sizes[step]
        return size

    def scores(self, probs: np.ndarray) -> np.ndarray:
        """Calibrated scores (N, d) from conditionals (N, d, K)."""
        probs = float_array(probs, "probs", ndim=3, what="(N, d, K)")
        N, d, K = probs.shape
        bg = np.asarray(self.background)
        if bg.shape[0] != K:
            raise ValueError(f"background: has {bg.shape[0]} tokens but the law has K={K}")
        top = probs.max(axis=-1, keepdims=True)
        xhat = (probs >= top - TIE_TOL).argmax(axis=-1)
        calibrated = np.minimum(-top[..., 0] * np.log(bg)[xhat], self.alpha)
        L = d if self.block_length is None else self.block_length
        offset = np.arange(d) % L
        return np.exp(-self.lam * offset) * calibrated

    def _rank(self, step, size, probs, free):
        d = free.shape[1]
        L = d if self.block_length is None else self.block_length
        return self.scores(probs), _k(size, free), np.arange(d) // L, None


# -- variable-size -----------------------------------------------------------------------
@dataclass(frozen=True)
class ThresholdPlanner(_Deterministic):
    r"""Fast-dLLM threshold: every masked position with confidence :math:`\ge \tau`, at least one.

    .. math:: B(x_A) = \{j : \max_v p(v \mid x_A) \ge \tau - \epsilon\} \cup \{j^*\},

    :math:`j^*` the most confident position (ties by ``ties``; only when no position reaches
    :math:`\tau` does :math:`j^*` add anything), :math:`\epsilon` =
    :data:`TIE_TOL`. ``tau > 1`` reveals one token per step. Chooses its own sizes: run it with
    ``plan=None``; ``exact_run(...).step_counts`` is the law of the number of steps.
    """

    takes_plan: ClassVar[bool] = False  # it chooses its own sizes only

    tau: float
    ties: str = DEFAULT_TIES
    name: ClassVar[str] = "threshold"
    needs_schedule: ClassVar[bool] = False

    def __post_init__(self):
        _finite(self.tau, "tau")
        check_ties(self.ties)

    def _step_size(self, step, size, d):
        if size is not None:
            raise ValueError("plan: ThresholdPlanner chooses its own step sizes; pass plan=None")
        return None

    def _rank(self, step, size, probs, free):
        conf = _confidence(probs)
        above = free & (conf >= self.tau - TIE_TOL)
        # the arg max is needed (and can tie) only when nothing reaches tau: it is in `above` otherwise
        return conf, (~above.any(axis=1)).astype(np.int64), None, above


@dataclass(frozen=True)
class EntropyBudgetPlanner(_Deterministic):
    r"""EB-Sampler: the largest low-entropy prefix whose entropy sum minus its maximum is ≤ γ.

    Masked positions are sorted by increasing :math:`H_j = H(X_j \mid x_A)`; the step reveals
    the first m of them (a tie at the m-th broken by ``ties``), m the largest with

    .. math:: \sum_{i \le m} H_{(i)} - \max_{i \le m} H_{(i)} = \sum_{i < m} H_{(i)} \le \gamma
              \ (+\,\epsilon),

    and m >= 1 (EB-Sampler, ``acc_entropy - cummax_entropy <= gamma``; nats here).
    Chooses its own sizes: run it with ``plan=None``. It is also Cai & Li's entropy-sum rule
    (arXiv 2603.22248: unmask until the cumulative entropy exceeds the threshold γ; our reading,
    :mod:`mdmtheory.bounds.cl26`).
    """

    takes_plan: ClassVar[bool] = False  # it chooses its own sizes only

    gamma: float
    ties: str = DEFAULT_TIES
    name: ClassVar[str] = "entropy_budget"
    needs_schedule: ClassVar[bool] = False

    def __post_init__(self):
        check_ties(self.ties)
        if _finite(self.gamma, "gamma") < 0:
            raise ValueError(f"gamma: the entropy budget must be >= 0, got {self.gamma}")

    def _step_size(self, step, size, d):
        if size is not None:
            raise ValueError("plan: EntropyBudgetPlanner chooses its own step sizes; pass plan=None")
        return None

    def _rank(self, step, size, probs, free):
        H = entr(probs).sum(axis=-1)
        # m depends only on the sorted entropies (not on the order inside a tie)
        Hs = np.sort(np.where(free, H, np.inf), axis=1)
        Hs = np.where(np.isfinite(Hs), Hs, 0.0)
        before = np.cumsum(Hs, axis=1) - Hs  # entropy of the positions ranked before
        n_free = free.sum(axis=1, keepdims=True)
        ok = (before <= self.gamma + TIE_TOL) & (np.arange(free.shape[1]) < n_free)
        m = np.maximum(ok.sum(axis=1), 1)  # prefix sums are non-decreasing: a count is a prefix
        return -H, m, None, None



def _sorted_confidences(probs, free):
    """Confidences of each row sorted in decreasing order (free positions first; the rest 0),
    with the row's number m of free positions: (N, d) floats and (N, 1) ints."""
    conf = _confidence(probs)
    cs = -np.sort(-np.where(free, conf, -np.inf), axis=1)
    n_free = free.sum(axis=1, keepdims=True)
    valid = np.arange(free.shape[1]) < n_free
    return np.where(valid, cs, 0.0), n_free, valid, conf


def _count_args(sorted_conf, n_free) -> tuple[np.ndarray, np.ndarray]:
    """The checked arguments of the public ``count`` of :class:`FactorPlanner` and
    :class:`FrechetPlanner`: confidences (N, d) in [0, 1] sorted in decreasing order over the
    first m_r entries of row r, and the counts m of masked positions, (N,) or (N, 1) integers
    in 0..d."""
    cs = float_array(sorted_conf, "sorted_conf", ndim=2, what="(N, d)")
    if cs.size and (np.any(cs < 0) or np.any(cs > 1)):
        raise ValueError(f"sorted_conf: expected confidences in [0, 1], got {cs.min():g}..{cs.max():g}")
    if isinstance(n_free, (bool, np.bool_, str, bytes, dict)) or n_free is None:
        raise ValueError(f"n_free: expected (N,) integers in 0..d (masked positions of each row), got {n_free!r:.80}")
    try:
        m = np.asarray(n_free)
    except (TypeError, ValueError, OverflowError, RecursionError):
        m = np.zeros((0, 0))
    if m.dtype.kind not in "iu" or m.ndim not in (1, 2) or m.size != cs.shape[0] or (m.ndim == 2 and m.shape[1] != 1):
        raise ValueError(f"n_free: expected ({cs.shape[0]},) integers in 0..{cs.shape[1]} (masked positions of each "
                         f"row of sorted_conf), got {n_free!r:.80}")
    m = m.reshape(-1).astype(np.int64)
    if m.size and (m.min() < 0 or m.max() > cs.shape[1]):
        raise ValueError(f"n_free: expected counts in 0..{cs.shape[1]}, got {int(m.min())}..{int(m.max())}")
    if np.any((np.diff(cs, axis=1) > TIE_TOL) & (np.arange(1, cs.shape[1]) < m[:, None])):
        raise ValueError("sorted_conf: expected each row's first n_free confidences in decreasing order")
    return cs, m


class _ProfileCount(_Deterministic):
    """The shared part of :class:`FactorPlanner` and :class:`FrechetPlanner`: each commits the
    k most confident masked positions, k a function of the sorted confidence profile
    (``_count(cs, n_free)``, the subclass's rule), and chooses its own step sizes."""

    takes_plan: ClassVar[bool] = False  # it chooses its own sizes only

    def _step_size(self, step, size, d):
        if size is not None:
            raise ValueError(f"plan: {type(self).__name__} chooses its own step sizes; pass plan=None")
        return None

    def count(self, sorted_conf, n_free) -> np.ndarray:
        """The number of positions the rule commits, from confidences sorted in decreasing
        order ((N, d), entries past ``n_free`` ignored) and the numbers of masked positions
        ((N,) or (N, 1) ints)."""
        return self._count(*_count_args(sorted_conf, n_free))

    def _count(self, cs, n_free) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _rank(self, step, size, probs, free):
        cs, n_free, _, conf = _sorted_confidences(probs, free)
        return conf, self._count(cs, n_free), None, None


@dataclass(frozen=True)
class FactorPlanner(_ProfileCount):
    r"""Fast-dLLM's factor rule: the largest n with :math:`(n+1)(1 - c_{(n)}) \le f`, at least one.

    With the masked positions' confidences :math:`c_i = \max_v p(v \mid x_A)` sorted as
    :math:`c_{(1)} \ge \dots \ge c_{(m)}`, the step commits the n most confident positions,

    .. math:: n = \max\{n \le m : c_{(k)} \ge 1 - f/(k+1) - \epsilon \ \ \forall\, 2 \le k \le n\}
              \quad (n \ge 1),

    :math:`\epsilon` = :data:`TIE_TOL`. Since :math:`1 - f/(k+1)` grows with k and
    :math:`c_{(k)}` falls, this is the largest n with :math:`(n+1)(1 - c_{(n)}) \le f`: the
    condition of Fast-dLLM Theorem 1 (:math:`(n+1)\epsilon \le 1`, arXiv 2505.22618 §3.3) with
    f in place of 1: with ``reference_quirk=False`` and f <= 1 every committed set of n >= 2
    meets the theorem's hypothesis up to its boundary. The rule as the authors run it is ``get_transfer_index_dynamic`` (its copy in
    ``Ringo-Star/FastdLLM_plusplus``, ``v1/llada/generate.py`` at commit 29fd034; the
    Fast-dLLM paper's text, dated 2025-5-28 and read in full from ``NVlabs/Fast-dLLM``
    ``paper/fast_dllm.pdf`` at commit 24cc59e, does not state the factor rule, and that snapshot of
    the authors' code has no ``factor``; Fast-dLLM++ §5 quotes it as "accept n tokens when
    :math:`(n+1)(1 - c_{(n)}) < f`"). That code, read in full, does three things this class
    reproduces:

    * the test is ``c_(n) < 1 - f/(n+1)`` → stop (so acceptance is :math:`\ge`, not the quoted
      strict :math:`<`), and the first position always passes (its threshold is -1): at least
      one token per step, the most confident;
    * it scans n = 1, 2, ... and stops at the first failure, committing the positions before it;
    * ``reference_quirk=True`` (default): when the *only* failure is at n = m (all m masked
      positions but the least confident pass), the code's index after the loop is the same as
      when nothing fails, and it commits all m. So with m = 2 masked positions both are
      always committed. ``reference_quirk=False`` commits n = m - 1 there (the stated rule).

    ``ties`` breaks equal confidences at the boundary (:mod:`mdmtheory.samplers.ties`; the
    authors' ``torch.topk`` is ``"topk"``). The confidence is at temperature 0 (the
    probability of the arg max); chooses its own sizes: run it with ``plan=None``.
    """

    f: float
    ties: str = DEFAULT_TIES
    reference_quirk: bool = True
    name: ClassVar[str] = "factor"
    needs_schedule: ClassVar[bool] = False

    def __post_init__(self):
        if _finite(self.f, "f") < 0:
            raise ValueError(f"f: the factor must be >= 0 (the rule commits n when (n+1)(1 - c_(n)) <= f), got {self.f}")
        check_ties(self.ties)
        if not isinstance(self.reference_quirk, (bool, np.bool_)):
            raise ValueError(f"reference_quirk: expected True or False, got {self.reference_quirk!r}")

    def _count(self, cs, n_free) -> np.ndarray:
        m = np.asarray(n_free).reshape(-1)
        n = np.arange(1, cs.shape[1] + 1)
        thresh = 1.0 - float(self.f) / (n + 1)
        thresh[0] = -1.0
        ok = (cs >= thresh - TIE_TOL) | (n > m[:, None])
        k = np.minimum(np.cumprod(ok, axis=1).sum(axis=1), m)  # passes before the first failure
        if self.reference_quirk:
            k = np.where(k == m - 1, m, k)
        return np.maximum(k, np.minimum(m, 1)).astype(np.int64)


@dataclass(frozen=True)
class FrechetPlanner(_ProfileCount):
    r"""Fast-dLLM++'s Fréchet profile rule: the largest n with :math:`L_n - U_n > \delta`, at least one.

    With sorted confidences :math:`c_{(1)} \ge \dots \ge c_{(m)}` of the masked positions
    (:math:`c_i = \max_v p(v \mid x_A)`), Fast-dLLM++ (Kasa et al., arXiv 2606.02955v2, read
    in full; §3 Algorithm 1 and eq. 5) scores a prefix of n by

    .. math:: G_n = L_n - U_n, \qquad L_n = \sum_{j \le n} c_{(j)} - (n - 1), \qquad
              U_n = 1 - c_{(n)},

    :math:`L_n` the Fréchet–Hoeffding lower bound on the probability that the n marginal arg
    maxes are jointly right (Lemma A.1) and :math:`U_n` an upper bound on any other tuple's
    probability, and commits the n most confident positions, n the number of prefixes with
    :math:`G_n > \delta + \epsilon` (:math:`\epsilon` = :data:`TIE_TOL`), :math:`G_1 = +\infty`
    (at least one). :math:`G_n` does not increase with n, so the count is the largest such
    prefix. This follows ``get_transfer_index_frechet_profile`` of the authors' code
    (``Ringo-Star/FastdLLM_plusplus``, ``v1/llada/generate.py`` at commit 29fd034): no
    :math:`\max\{0, \cdot\}` in :math:`L_n` (Algorithm 1 line 12 has it; the two agree for
    :math:`\delta \ge 0`), strict :math:`>`. The paper's operating point is δ = 0.25, matched
    to the factor rule's f = 1 − δ (§5; :meth:`from_factor`).
    """

    delta: float = 0.25
    ties: str = DEFAULT_TIES
    name: ClassVar[str] = "frechet"
    needs_schedule: ClassVar[bool] = False

    def __post_init__(self):
        _finite(self.delta, "delta")
        check_ties(self.ties)

    @classmethod
    def from_factor(cls, f: float, ties: str = DEFAULT_TIES) -> "FrechetPlanner":
        """The Fréchet rule at the factor rule's matched parameter, δ = 1 − f (Fast-dLLM++ eq. 8)."""
        return cls(1.0 - _finite(f, "f"), ties)

    def _count(self, cs, n_free) -> np.ndarray:
        m = np.asarray(n_free).reshape(-1)
        cols = np.arange(cs.shape[1])
        valid = cols < m[:, None]
        score = (np.cumsum(np.where(valid, cs, 0.0), axis=1) - cols) - (1.0 - cs)
        score = np.where(valid, score, -np.inf)
        score[:, 0] = np.inf
        k = (score > float(self.delta) + TIE_TOL).sum(axis=1)
        return np.minimum(np.maximum(k, 1), np.maximum(m, 0)).astype(np.int64)


for _name, _cls in (
    ("left_to_right", LeftToRightPlanner),
    ("confidence", ConfidencePlanner),
    ("margin", MarginPlanner),
    ("entropy", EntropyPlanner),
    ("dilated", DilatedPlanner),
):
    register_planner(_name, _cls)
