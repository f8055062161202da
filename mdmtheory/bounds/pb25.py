r"""PB25 = Kang et al., *ParallelBench: Understanding the Trade-offs of Parallel Decoding in
Diffusion LLMs*, arXiv 2510.04767 (ICLR 2026): the conditional total correlation as a lower
bound on the KL of factorized (parallel) decoding.

**How it was read.** The paper's own text was not available to us beyond its abstract (which
states only that an information-theoretic analysis is given); the statement below comes from
third-party summaries of the paper, with no section or equation number: status
``"paper, via summary"``. As summarized: for a target sequence Y given an input X decoded in T
steps over an ordered partition :math:`Y = S_1 \cup \dots \cup S_T`, each set drawn in one step
from a product of one-token conditionals given X and :math:`S_{<t}`,

.. math::

    \min_\theta \mathrm{KL}(P_{data} \,\|\, P_\theta) \;\ge\; L_T(S_1, \dots, S_T)
    = \sum_{t=1}^{T} \mathbb{E}\, C(S_t \mid X, S_{<t}),
    \qquad C(S \mid A) = \sum_{i \in S} H(Y_i \mid A) - H(Y_S \mid A),

and the optimum over partitions :math:`L^*_T = \min L_T` is non-increasing in T. Here X is
empty (or a prompt: pass the conditioned law) and Y the d positions.

Facts checked here: with the exact one-token conditionals the bound is an **equality** (the
chain rule; the package's deterministic-planner identity, docs/theory.md §2), so the minimum
over θ is attained by the exact conditionals; :math:`L^*_T` is non-increasing; and for the
random-order sampler the path KL is the average of :math:`L_T` over the orders, so
:math:`\min L_T` over partitions with the schedule's sizes bounds the path KL from below. The
output-law KL of the random-order sampler is a *mixture* over orders, outside the statement
(docs/theory.md §2).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..entropies import subset_entropies
from ..joint import Joint, positions_to_mask
from ._core import LOWER, SUMMARY, Bound, _schedule

#: Largest d for the subset dynamic programs (up to 3^d work); :func:`~mdmtheory.bounds.compare`
#: lists :func:`pb25_schedule_lower` up to :data:`COMPARE_MAX_D`.
MAX_D = 12
COMPARE_MAX_D = 8

_SOURCE = "Kang et al. 2025 (ParallelBench, arXiv 2510.04767), information-theoretic analysis (read from third-party summaries)"


def _joint(p, name: str = "p") -> Joint:
    if not isinstance(p, Joint):
        raise ValueError(f"{name}: the conditional total correlation needs a mdmtheory.Joint (subset entropies), got {type(p).__name__}")
    return p


def _cost(H: np.ndarray, A: int, B: int) -> float:
    """C(X_B | X_A) = sum_{i in B} H(X_i | X_A) - H(X_B | X_A) from the subset entropies."""
    total, rest = 0.0, B
    while rest:
        low = rest & -rest
        total += float(H[A | low])
        rest ^= low
    n = bin(B).count("1")
    return total - (n - 1) * float(H[A]) - float(H[A | B])


def conditional_total_correlation(p, block, given=()) -> float:
    r""":math:`C(X_B \mid X_A) = \sum_{i \in B} H(X_i \mid X_A) - H(X_B \mid X_A)` (nats),
    averaged over :math:`x_A` (the conditional total correlation of PB25; 0 for a block of
    one position).

    Parameters
    ----------
    p : :class:`~mdmtheory.Joint`.
    block : positions B (non-empty).
    given : positions A, disjoint from B (default none).
    """
    p = _joint(p)
    B = positions_to_mask(block, p.d, name="block")
    A = positions_to_mask(given, p.d, name="given")
    if B == 0:
        raise ValueError("block: expected at least one position")
    if A & B:
        raise ValueError("given: must be disjoint from block")
    return max(0.0, _cost(subset_entropies(p), A, B))


def _partition_arg(partition, d: int) -> list[int]:
    if isinstance(partition, (str, bytes)) or not hasattr(partition, "__iter__"):
        raise ValueError(f"partition: expected a sequence of position sets covering 0..{d - 1}, got {type(partition).__name__}")
    masks, seen = [], 0
    for block in partition:
        m = positions_to_mask(block, d, name="partition")
        if m == 0:
            raise ValueError("partition: every step must reveal at least one position")
        if m & seen:
            raise ValueError("partition: the sets must be disjoint")
        seen |= m
        masks.append(m)
    if seen != (1 << d) - 1:
        raise ValueError(f"partition: the sets must cover every position 0..{d - 1}")
    return masks


def pb25_partition_lower(p, partition) -> Bound:
    r"""PB25's lower bound for one ordered partition :math:`S_1, \dots, S_T` of the positions
    (read from third-party summaries; module docstring):

    .. math:: \mathrm{KL}(p \,\|\, q) \ge \sum_t \mathbb{E}\, C(X_{S_t} \mid X_{S_{<t}})

    for every sampler that draws :math:`S_t` at step t from a product of one-token
    conditionals given :math:`x_{S_{<t}}`; with the exact conditionals it is an equality
    (chain rule), e.g. the ``left_to_right`` planner with a schedule.
    """
    p = _joint(p)
    masks = _partition_arg(partition, p.d)
    H = subset_entropies(p)
    A, value = 0, 0.0
    for B in masks:
        value += max(0.0, _cost(H, A, B))
        A |= B
    return Bound(
        name="pb25_partition_lower",
        value=float(value),
        bounds="kl",
        source=_SOURCE,
        statement="KL(p || q) >= sum_t E C(X_{S_t} | X_{S_<t}) for factorized decoding of the ordered partition S_1..S_T",
        assumptions=("a fixed ordered partition (positions chosen before sampling)", "any one-token conditionals; equality with the exact ones"),
        kind=LOWER,
        status=SUMMARY,
    )


def _check_d(d: int) -> None:
    if d > MAX_D:
        raise ValueError(f"p: the minimum over partitions enumerates subsets (3^d); d <= {MAX_D}, got d={d}")


def _min_over_partitions(H: np.ndarray, d: int, sizes=None, steps=None) -> float:
    """Minimum of L_T over ordered partitions: with the given block sizes, or into ``steps``
    non-empty blocks of any sizes; a dynamic program over the revealed set."""
    full = (1 << d) - 1
    best = {0: 0.0}
    T = len(sizes) if sizes is not None else steps
    for t in range(T):
        nxt: dict[int, float] = {}
        left = T - t - 1  # steps after this one, each needs a position
        for A, f in best.items():
            comp = full & ~A
            free = [i for i in range(d) if comp >> i & 1]
            if sizes is not None:  # the sets of the step's size
                cands = (sum(1 << i for i in c) for c in itertools.combinations(free, sizes[t]))
            elif left == 0:  # the last step reveals the rest
                cands = iter((comp,))
            else:  # non-empty, leaving a position for each later step
                cands = (sum(1 << i for i in c) for n in range(1, len(free) - left + 1) for c in itertools.combinations(free, n))
            for B in cands:
                c = f + max(0.0, _cost(H, A, B))
                key = A | B
                if c < nxt.get(key, math.inf):
                    nxt[key] = c
        best = nxt
    return float(best[full])


def pb25_schedule_lower(p, schedule) -> Bound:
    r"""PB25's bound minimized over the ordered partitions with the schedule's sizes
    :math:`k_1, \dots, k_T`, as a lower bound on the **path KL** of the random-order sampler:

    .. math:: \mathrm{KL}_{\text{path}}(k) = \mathbb{E}_{\text{order}} L_T \ge \min_{|S_t| = k_t} L_T(S_1, \dots, S_T).

    The path KL is the KL given the order, averaged over the uniformly random order, and given
    the order the sampler decodes a fixed partition, where PB25's bound is an equality; the
    minimum is exact (dynamic program over revealed sets, d <= 12).
    """
    p = _joint(p)
    _check_d(p.d)
    sched = _schedule(schedule, p.d)
    value = _min_over_partitions(subset_entropies(p), p.d, sizes=sched.sizes)
    return Bound(
        name="pb25_schedule_lower",
        value=value,
        bounds="path_kl",
        source=_SOURCE + "; applied order by order to the random-order sampler (docs/theory.md §2)",
        statement="KL_path(k) >= min over ordered partitions with |S_t| = k_t of sum_t E C(X_{S_t} | X_{S_<t})",
        assumptions=("random-order fixed-cardinality sampler, exact conditionals", "d <= 12 (exact minimum over partitions)"),
        kind=LOWER,
        status=SUMMARY,
    )


def pb25_optimal_lower(p, steps: int) -> Bound:
    r"""PB25's optimal bound :math:`L^*_T = \min L_T` over all ordered partitions into T
    non-empty sets (any sizes): a lower bound on the KL of every T-step factorized decoder
    with a fixed partition, attained by the best partition with the exact conditionals.
    PB25 (via summaries) states :math:`L^*_T \ge L^*_{T+1}`. Exact (dynamic program over
    revealed sets, d <= 12); ``steps`` in 1..d.
    """
    from .._validate import int_arg

    p = _joint(p)
    _check_d(p.d)
    T = int_arg(steps, "steps", 1, p.d, f" (at most d={p.d} non-empty steps)")
    value = _min_over_partitions(subset_entropies(p), p.d, steps=T)
    return Bound(
        name="pb25_optimal_lower",
        value=value,
        bounds=f"min_fixed_partition_kl(T={T})",
        source=_SOURCE,
        statement="min over T-step factorized decoders of KL >= L*_T = min over ordered partitions into T sets of L_T; L*_T non-increasing in T",
        assumptions=("fixed ordered partitions", "d <= 12 (exact minimum)"),
        kind=LOWER,
        status=SUMMARY,
    )
