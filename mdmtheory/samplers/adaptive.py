r"""Practical and adaptive planners: which positions to reveal, chosen from the conditionals.

Every planner here is **deterministic given** :math:`x_A`: at a state :math:`(A, x_A)` it
picks one reveal set :math:`B(x_A)`. For the exact law engine
(:func:`~mdmtheory.samplers.engine.exact_run`) it yields, for each distinct B, the 0/1
indicator array of the :math:`x_A` that choose it (keepdims shape ``ctx.shape``); for Monte
Carlo (:mod:`mdmtheory.samplers.simulate`) its ``select`` method picks B for a batch of
samples at once. Both paths call the same ``_choose`` on a ``(N, d, K)`` array of one-token
conditionals :math:`p(x_j = v \mid x_A)` (one row per :math:`x_A` or per sample), so the exact
law and the simulation drive the very same rule.

Along the single path that a sequence x determines,

.. math::

    q(x) = \prod_t \prod_{j \in B_t} p(x_j \mid x_{A_t}), \qquad
    \mathrm{KL}(p \,\|\, q) = \mathbb{E}_p \sum_t \mathrm{TC}(x_{B_t} \mid x_{A_t}),

(docs/design.md §3) where :math:`\mathrm{TC}(x_B \mid x_A) = \log p(x_B \mid x_A) - \sum_{j \in B}
\log p(x_j \mid x_A)` pointwise; the engine's trajectory KL (``trajectory=True``) equals
KL(p‖q) for these planners.

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
  (Fast-dLLM), :class:`EntropyBudgetPlanner` (EB-Sampler). Their number of steps is random;
  ``exact_run(p, None, planner).step_counts`` is its exact distribution.

Ties
----
Positions are ranked by score (best first); consecutive sorted scores closer than
:data:`TIE_TOL` form one tie cluster, and inside a cluster the **lowest position index**
goes first (:func:`ranking`). The same tolerance picks the predicted token of the
position-calibrated score (lowest token among near-maximal probabilities). It makes the
choice independent of last-bit rounding in the conditionals (symmetric positions of a law
give equal scores up to ~1e-16); genuine score gaps below 1e-12 count as ties.

References: LLaDA (Nie et al. 2025, arXiv 2502.09992, semi-autoregressive remasking);
Fast-dLLM (Wu et al. 2025, arXiv 2505.22618, confidence threshold); EB-Sampler (Ben-Hamu
et al. 2025, arXiv 2505.24857, entropy-bounded unmasking); DUS (Luxembourg et al. 2025,
arXiv 2506.19037, eqs. 8–9); PC-Sampler (Huang et al. 2025, arXiv 2508.13021).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

import numpy as np
from scipy.special import entr

from .._validate import int_arg, real_arg
from ..joint import NORMALIZATION_TOL, Joint
from ..schedules import Schedule
from .planners import StepContext, register_planner

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
    "DilatedPlanner",
    "PositionCalibratedPlanner",
    "llada_step_sizes",
    "dilated_levels",
    "background_frequency",
    "ranking",
    "ranked_choice",
]

#: Consecutive sorted scores closer than this are ties (the lowest index goes first).
TIE_TOL = 1e-12


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
    scores of one group closer than :data:`TIE_TOL` are chained into one *tie cluster*, and
    inside a cluster positions go by increasing index. Non-free positions come last.

    Parameters
    ----------
    scores : (N, d) floats, higher first (finite on free positions).
    free : (N, d) bool.
    group : (d,) ints, optional; lower groups rank first (semi-AR blocks, DUS rounds).

    Returns
    -------
    (N, d) int64, ``out[n, r]`` = the position of rank r in row n.
    """
    scores = np.asarray(scores, dtype=np.float64)
    free = np.asarray(free, dtype=bool)
    N, d = free.shape
    idx = np.broadcast_to(np.arange(d), (N, d))
    g0 = np.zeros(d, dtype=np.int64) if group is None else np.asarray(group, dtype=np.int64)
    g = np.where(free, g0[None, :], np.iinfo(np.int64).max)
    s = np.where(free, scores, 0.0)
    first = np.lexsort((idx, -s, g), axis=-1)
    ss = np.take_along_axis(s, first, axis=1)
    sg = np.take_along_axis(g, first, axis=1)
    brk = np.ones((N, d), dtype=bool)
    brk[:, 1:] = (sg[:, 1:] != sg[:, :-1]) | (ss[:, :-1] - ss[:, 1:] > TIE_TOL)
    cluster = np.empty((N, d), dtype=np.int64)
    np.put_along_axis(cluster, first, np.cumsum(brk, axis=1), axis=1)
    return np.lexsort((idx, cluster), axis=-1)


def _rank_positions(order: np.ndarray) -> np.ndarray:
    """Inverse permutation: rank of each position."""
    pos = np.empty_like(order)
    np.put_along_axis(pos, order, np.broadcast_to(np.arange(order.shape[1]), order.shape), axis=1)
    return pos


def ranked_choice(scores, free, k, group=None) -> np.ndarray:
    """The first ``k[n]`` positions of :func:`ranking` in each row, as an (N, d) bool mask.

    ``k`` is an int or (N,) ints with ``0 <= k[n] <= free[n].sum()``.
    """
    free = np.asarray(free, dtype=bool)
    k = np.broadcast_to(np.asarray(k, dtype=np.int64), (free.shape[0],))
    if np.any(k > free.sum(axis=1)) or np.any(k < 0):
        raise ValueError("k: asks for more positions than are masked (or a negative count)")
    rank = _rank_positions(ranking(scores, free, group))
    return free & (rank < k[:, None])


def _context_arrays(ctx: StepContext) -> tuple[np.ndarray, np.ndarray]:
    """Conditionals of every free position for every x_A: (N, d, K), and the free mask."""
    N = ctx.K ** bin(ctx.revealed).count("1")
    probs = np.zeros((N, ctx.d, ctx.K))
    for j in ctx.free:
        probs[:, j, :] = np.moveaxis(ctx.conditional(j), j, -1).reshape(N, ctx.K)
    free = np.zeros((N, ctx.d), dtype=bool)
    free[:, list(ctx.free)] = True
    return probs, free


def _group_by_mask(chosen: np.ndarray, shape: tuple[int, ...]):
    """(B, indicator over x_A) for each distinct chosen B."""
    d = chosen.shape[1]
    masks = (chosen.astype(np.int64) << np.arange(d, dtype=np.int64)).sum(axis=1).reshape(shape)
    for B in np.unique(masks):
        yield int(B), (masks == B).astype(np.float64)


# -- argument checks ---------------------------------------------------------------------
def _pos_int(value, name: str, *, allow_none: bool = False):
    if value is None and allow_none:
        return None
    return int_arg(value, name, 1)


_finite = real_arg


# -- base class --------------------------------------------------------------------------
class _Deterministic:
    """Shared machinery: ``moves`` (exact engine) and ``select`` (Monte Carlo) over ``_choose``."""

    allows_empty: ClassVar[bool] = False
    deterministic: ClassVar[bool] = True
    #: whether ``_choose`` reads the conditionals (False: x-independent order)
    uses_probs: ClassVar[bool] = True

    # subclasses: name, needs_schedule, _choose(step, size, probs, free) -> (N, d) bool
    def _step_size(self, step: int, size, d: int):
        if size is None and self.needs_schedule:
            raise ValueError(f"plan: planner {self.name!r} needs a Schedule (sizes k_t)")
        return size

    def _choose(self, step, size, probs, free):  # pragma: no cover - abstract
        raise NotImplementedError

    def moves(self, ctx: StepContext):
        size = self._step_size(ctx.step, ctx.size, ctx.d)
        if self.uses_probs:
            probs, free = _context_arrays(ctx)
        else:  # x-independent: one row suffices
            probs = np.zeros((1, ctx.d, ctx.K))
            free = np.zeros((1, ctx.d), dtype=bool)
            free[:, list(ctx.free)] = True
        chosen = self._choose(ctx.step, size, probs, free)
        if chosen.shape[0] == 1:
            yield int((chosen[0].astype(np.int64) << np.arange(ctx.d, dtype=np.int64)).sum()), 1.0
            return
        yield from _group_by_mask(chosen, ctx.shape)

    def select(self, step: int, size, probs: np.ndarray, free: np.ndarray) -> np.ndarray:
        """Monte Carlo: the chosen positions (n, d) for a batch of samples.

        ``probs`` (n, d, K) are the conditionals :math:`p(x_j = v \\mid x_A)` of each sample
        (rows of revealed positions are ignored), ``free`` (n, d) its masked positions.
        """
        size = self._step_size(step, size, free.shape[1])
        if not self.uses_probs:
            probs = None
        return self._choose(step, size, probs, free)


def _k(size, free: np.ndarray) -> np.ndarray:
    return np.full(free.shape[0], size, dtype=np.int64)


# -- schedule-driven ---------------------------------------------------------------------
@dataclass(frozen=True)
class LeftToRightPlanner(_Deterministic):
    """Reveal the ``k_t`` lowest masked positions (autoregressive order in blocks of k_t)."""

    name: ClassVar[str] = "left_to_right"
    needs_schedule: ClassVar[bool] = True
    uses_probs: ClassVar[bool] = False

    def _choose(self, step, size, probs, free):
        return ranked_choice(np.zeros(free.shape), free, _k(size, free), np.arange(free.shape[1]))


@dataclass(frozen=True)
class _ScoreTopK(_Deterministic):
    needs_schedule: ClassVar[bool] = True
    score: ClassVar[str] = ""

    def _choose(self, step, size, probs, free):
        return ranked_choice(SCORES[self.score](probs), free, _k(size, free))


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

    The confidence is :math:`\max_v p(v \mid x_A)`, a function of :math:`x_A` only; LLaDA at
    temperature > 0 ranks by the probability of the *sampled* token, which makes B depend on
    the drawn values and is not a planner of this kind.
    """

    block_length: int
    steps_per_block: int | None = None
    score: str = "confidence"
    name: ClassVar[str] = "semi_ar"

    def __post_init__(self):
        _pos_int(self.block_length, "block_length")
        _pos_int(self.steps_per_block, "steps_per_block", allow_none=True)
        if self.score not in SCORES:
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

    def _choose(self, step, size, probs, free):
        d = free.shape[1]
        group = np.arange(d) // self.block_length
        return ranked_choice(SCORES[self.score](probs), free, _k(size, free), group)


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
    length = _pos_int(length, "length")
    base = _pos_int(base, "base")
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

    def rounds(self, d: int) -> tuple[tuple[int, ...], ...]:
        """All rounds over positions 0..d-1, block by block."""
        return _dilated_rounds(d, self.block_length, self.base, self.merge_last)

    def schedule(self, d: int) -> Schedule:
        """The planner's own step sizes (one step per round)."""
        return Schedule([len(r) for r in self.rounds(d)])

    def _rank(self, d: int) -> np.ndarray:
        return _dilated_rank(d, self.block_length, self.base, self.merge_last)

    def _step_size(self, step, size, d):
        return self.schedule(d).sizes[step] if size is None else size

    def _choose(self, step, size, probs, free):
        d = free.shape[1]
        return ranked_choice(np.zeros(free.shape), free, _k(size, free), self._rank(d))


# -- position-calibrated (PC-Sampler) ----------------------------------------------------
def background_frequency(p: Joint) -> np.ndarray:
    r"""Mean token frequency over positions, :math:`p_{bg}(v) = \frac1d \sum_j p(X_j = v)`."""
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
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
    """

    background: tuple
    lam: float = 1.0
    alpha: float = 1.0
    block_length: int | None = None
    steps_per_block: int | None = None
    name: ClassVar[str] = "position_calibrated"

    def __post_init__(self):
        try:
            bg = np.array(self.background, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"background: expected a (K,) probability vector, got {self.background!r}") from None
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

    def _choose(self, step, size, probs, free):
        d = free.shape[1]
        L = d if self.block_length is None else self.block_length
        return ranked_choice(self.scores(probs), free, _k(size, free), np.arange(d) // L)


# -- variable-size -----------------------------------------------------------------------
@dataclass(frozen=True)
class ThresholdPlanner(_Deterministic):
    r"""Fast-dLLM threshold: every masked position with confidence :math:`\ge \tau`, at least one.

    .. math:: B(x_A) = \{j : \max_v p(v \mid x_A) \ge \tau - \epsilon\} \cup \{j^*\},

    :math:`j^*` the most confident position (ties to the lowest index), :math:`\epsilon` =
    :data:`TIE_TOL`. ``tau > 1`` reveals one token per step. Chooses its own sizes: run it with
    ``plan=None``; ``exact_run(...).step_counts`` is the law of the number of steps.
    """

    tau: float
    name: ClassVar[str] = "threshold"
    needs_schedule: ClassVar[bool] = False

    def __post_init__(self):
        _finite(self.tau, "tau")

    def _step_size(self, step, size, d):
        if size is not None:
            raise ValueError("plan: ThresholdPlanner chooses its own step sizes; pass plan=None")
        return None

    def _choose(self, step, size, probs, free):
        conf = _confidence(probs)
        return (free & (conf >= self.tau - TIE_TOL)) | ranked_choice(conf, free, 1)


@dataclass(frozen=True)
class EntropyBudgetPlanner(_Deterministic):
    r"""EB-Sampler: the largest low-entropy prefix whose entropy sum minus its maximum is ≤ γ.

    Masked positions are sorted by increasing :math:`H_j = H(X_j \mid x_A)` (ties to the lowest
    index); the step reveals the first m of them, m the largest with

    .. math:: \sum_{i \le m} H_{(i)} - \max_{i \le m} H_{(i)} = \sum_{i < m} H_{(i)} \le \gamma
              \ (+\,\epsilon),

    and m >= 1 (EB-Sampler, ``acc_entropy - cummax_entropy <= gamma``; nats here).
    Chooses its own sizes: run it with ``plan=None``.
    """

    gamma: float
    name: ClassVar[str] = "entropy_budget"
    needs_schedule: ClassVar[bool] = False

    def __post_init__(self):
        if _finite(self.gamma, "gamma") < 0:
            raise ValueError(f"gamma: the entropy budget must be >= 0, got {self.gamma}")

    def _step_size(self, step, size, d):
        if size is not None:
            raise ValueError("plan: EntropyBudgetPlanner chooses its own step sizes; pass plan=None")
        return None

    def _choose(self, step, size, probs, free):
        H = entr(probs).sum(axis=-1)
        order = ranking(-H, free)
        Hs = np.take_along_axis(np.where(free, H, 0.0), order, axis=1)
        before = np.cumsum(Hs, axis=1) - Hs  # entropy of the positions ranked before
        n_free = free.sum(axis=1, keepdims=True)
        ok = (before <= self.gamma + TIE_TOL) & (np.arange(free.shape[1]) < n_free)
        m = np.maximum(ok.sum(axis=1), 1)  # prefix sums are non-decreasing: a count is a prefix
        return free & (_rank_positions(order) < m[:, None])


for _name, _cls in (
    ("left_to_right", LeftToRightPlanner),
    ("confidence", ConfidencePlanner),
    ("margin", MarginPlanner),
    ("entropy", EntropyPlanner),
    ("dilated", DilatedPlanner),
):
    register_planner(_name, _cls)
