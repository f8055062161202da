r"""PB25 = Kang et al., *ParallelBench: Understanding the Trade-offs of Parallel Decoding in
Diffusion LLMs*, arXiv 2510.04767 (ICLR 2026): the conditional total correlation as a lower
bound on the KL of T-step parallel (factorized) decoding.

**How it was read.** In full, from the preprint PDF that the authors' project page carries
(repository ``parallelbench/parallelbench.github.io``, ``assets/pdf/ParallelBench.pdf``,
commit 7b930091ee3d13fa2505c58ff08437a7162113e9): §3 (eq. (1)), §4 (Theorems 1–2, Remarks
1–2) and App. A (proofs A.1, A.2 with Lemma 1, and Theorem 3 in A.3). Status ``"paper"``.
PB25's objects: a target sequence Y given an input X, decoded in T steps over an ordered
partition :math:`Y = S_1 \cup \dots \cup S_T` fixed in advance, the tokens of :math:`S_i`
drawn from a product :math:`P_\theta(S_i \mid X, S_{<i}) = \prod_{y_j \in S_i} P_\theta(y_j \mid X, S_{<i})`.
Here Y is the positions outside ``given`` and X the positions in ``given`` (default none: X
empty); :math:`C(S \mid A) = \sum_{y \in S} H(y \mid A) - H(S \mid A)` the conditional
total correlation (PB25 §3, before eq. (1); averaged over the values of A).

* **Theorem 1** (PB25 §4, eq. (2); proof App. A.1, eqs. (6)–(15)):
  :math:`\min_\theta D_{KL}(P_{data}(Y \mid X) \| P_\theta(Y \mid X)) \ge L_T(\{S_i\}) = \sum_{i=1}^T \mathbb{E}_{S_{<i}} C(S_i \mid X, S_{<i})`,
  with equality when :math:`P_\theta(y_j \mid X, S_{<i}) = P_{data}(y_j \mid X, S_{<i})`.
  The proof is the chain rule (eq. (11)) and, step by step, eq. (1) (the one-step case,
  which PB25 cites from Huang et al. 2022). :func:`pb25_partition_lower`.
* **Remark 1**: :math:`L_1 = C(Y \mid X)`, :math:`L_{|Y|} = 0`.
* **Theorem 2** (PB25 §4; proof App. A.2, Lemma 1 eq. (16), eqs. (22)–(27)):
  :math:`L^*_T = \min_{\{S_i\}} L_T` over T-step partitions is non-increasing,
  :math:`L^*_T \ge L^*_{T+1}`; Remark 2: :math:`L^*_1 = C(Y \mid X)`, :math:`L^*_{|Y|} = 0`.
  :func:`pb25_optimal_lower`.
* **Lemma 1** (App. A.2, eq. (16)): for S = A ∪ B disjoint,
  :math:`C(S \mid Z) \ge C(A \mid Z) + \mathbb{E}_A C(B \mid Z, A)` (checked in the tests).
* **Theorem 3** (App. A.3, eqs. (28)–(30)): with partitions chosen per input,
  :math:`L^*_T := \mathbb{E}_X \min_{\{S_i\}} L_T(\{S_i\} \mid X)` is non-increasing in T.
  :func:`pb25_input_dependent_lower`.

Facts checked here beyond the statements: the minimum over θ is attained by the exact
conditionals, so :math:`L_T` *is* the KL of fixed-partition decoding with the exact model;
for the random-order sampler the path KL is the average of :math:`L_T` over the orders, so
:math:`\min L_T` over partitions with the schedule's sizes bounds the path KL from below
(:func:`pb25_schedule_lower`, derived here). The output-law KL of the random-order sampler is
a *mixture* over orders, outside PB25's statements (docs/theory.md §2).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..information.entropies import subset_entropies
from ..laws.joint import Joint, joint_arg, positions_to_mask
from .._validate import int_arg
from ._core import Bound, DERIVED, LOWER, PAPER, _schedule
from ..schedules.plans import Schedule
from .registry import random_order_schedule, register_rows

__all__ = [
    "conditional_total_correlation",
    "pb25_partition_lower",
    "pb25_schedule_lower",
    "pb25_optimal_lower",
    "pb25_input_dependent_lower",
]


#: Largest d for the subset dynamic programs (up to 3^d work); :func:`~mdmtheory.bounds.compare`
#: lists :func:`pb25_schedule_lower` up to :data:`COMPARE_MAX_D`.
MAX_D = 12
COMPARE_MAX_D = 8

_SOURCE = "Kang et al. 2025 (ParallelBench, arXiv 2510.04767)"


def _joint(p, name: str = "p") -> Joint:
    return joint_arg(p, name, what="the conditional total correlation needs its subset entropies")


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
    averaged over :math:`x_A` (the conditional total correlation, PB25 §3 before eq. (1); 0 for
    a block of one position).

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


def _given_arg(given, d: int) -> int:
    G = positions_to_mask(given, d, name="given")
    if G == (1 << d) - 1:
        raise ValueError("given: leaves no position to decode; give the input positions X only")
    return G


def _partition_arg(partition, d: int, G: int = 0) -> list[int]:
    rest = ((1 << d) - 1) & ~G
    names = [i for i in range(d) if rest >> i & 1]
    if isinstance(partition, (str, bytes)) or not hasattr(partition, "__iter__"):
        raise ValueError(f"partition: expected a sequence of position sets covering {names}, got {type(partition).__name__}")
    masks, seen = [], 0
    for block in partition:
        m = positions_to_mask(block, d, name="partition")
        if m == 0:
            raise ValueError("partition: every step must reveal at least one position")
        if m & seen:
            raise ValueError("partition: the sets must be disjoint")
        if m & G:
            raise ValueError("partition: the input positions (given) are never decoded; leave them out")
        seen |= m
        masks.append(m)
    if seen != rest:
        raise ValueError(f"partition: the sets must cover every decoded position {names}")
    return masks


def pb25_partition_lower(p, partition, given=()) -> Bound:
    r"""PB25 Theorem 1 (§4, eq. (2); proof App. A.1) for one ordered partition
    :math:`S_1, \dots, S_T` of the decoded positions Y (all positions outside ``given``;
    ``given`` = the input X, default none):

    .. math::

        \min_\theta D_{KL}(P_{data}(Y \mid X) \,\|\, P_\theta(Y \mid X)) \ge L_T
        = \sum_{i=1}^{T} \mathbb{E}_{S_{<i}}\, C(S_i \mid X, S_{<i}),

    for every model that draws :math:`S_i` at step i from a product of one-token
    conditionals given :math:`(X, S_{<i})`; equality with the exact conditionals (PB25
    Theorem 1), e.g. the ``left_to_right`` planner with a schedule. The KL is averaged over
    X (PB25's :math:`D_{KL}(P(Y \mid X) \| \cdot)` is read per input; its average is the
    bound with ``given``).
    """
    p = _joint(p)
    G = _given_arg(given, p.d)
    masks = _partition_arg(partition, p.d, G)
    H = subset_entropies(p)
    A, value = G, 0.0
    for B in masks:
        value += max(0.0, _cost(H, A, B))
        A |= B
    return Bound(
        name="pb25_partition_lower",
        value=float(value),
        bounds="kl" if not G else "kl(Y | X = given)",
        source=_SOURCE + ", Theorem 1, §4 eq. (2) (proof App. A.1)",
        statement="min_theta KL(P(Y|X) || P_theta(Y|X)) >= L_T = sum_i E C(S_i | X, S_<i) for T-step factorized decoding of the ordered partition S_1..S_T",
        assumptions=("a fixed ordered partition (positions chosen before sampling)", "any one-token conditionals; equality with the exact ones (Theorem 1)"),
        kind=LOWER,
        status=PAPER,
    )


def _check_d(d: int) -> None:
    if d > MAX_D:
        raise ValueError(f"p: the minimum over partitions enumerates subsets (3^d); d <= {MAX_D}, got d={d}")


def _min_over_partitions(H: np.ndarray, d: int, sizes=None, steps=None, start: int = 0) -> float:
    """Minimum of L_T over ordered partitions of the positions outside ``start`` (a mask,
    always conditioned on): with the given block sizes, or into ``steps`` non-empty blocks
    of any sizes; a dynamic program over the revealed set."""
    full = (1 << d) - 1
    best = {start: 0.0}
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
    r"""PB25's Theorem 1 (§4, eq. (2)) minimized over the ordered partitions with the
    schedule's sizes :math:`k_1, \dots, k_T`, as a lower bound on the **path KL** of the
    random-order sampler (derived here from Theorem 1's equality case):

    .. math:: \mathrm{KL}_{\text{path}}(k) = \mathbb{E}_{\text{order}} L_T \ge \min_{|S_t| = k_t} L_T(S_1, \dots, S_T).

    The path KL is the KL given the order, averaged over the uniformly random order, and given
    the order the sampler decodes a fixed partition with the exact conditionals, where PB25's
    Theorem 1 is an equality; the minimum is exact (dynamic program over revealed sets,
    d <= 12).
    """
    p = _joint(p)
    _check_d(p.d)
    sched = _schedule(schedule, p.d)
    value = _min_over_partitions(subset_entropies(p), p.d, sizes=sched.sizes)
    return Bound(
        name="pb25_schedule_lower",
        value=value,
        bounds="path_kl",
        source="derived here from " + _SOURCE + " Theorem 1 (§4 eq. (2), equality case), applied order by order to the random-order sampler (docs/theory.md §2)",
        statement="KL_path(k) >= min over ordered partitions with |S_t| = k_t of sum_t E C(X_{S_t} | X_{S_<t})",
        assumptions=("random-order fixed-cardinality sampler, exact conditionals", "d <= 12 (exact minimum over partitions)"),
        kind=LOWER,
        status=DERIVED,
    )


def _steps_over(p: Joint, G: int, steps) -> int:
    n = p.d - bin(G).count("1")
    return int_arg(steps, "steps", 1, n, f" (at most {n} non-empty steps: one per decoded position)")


def pb25_optimal_lower(p, steps: int, given=()) -> Bound:
    r"""PB25 Theorem 2's :math:`L^*_T = \min L_T` (§4; proof App. A.2) over all ordered
    partitions of the decoded positions (outside ``given``) into T non-empty sets, any sizes:
    by Theorem 1 a lower bound on the KL of every T-step factorized decoder with a fixed
    partition, attained by the best partition with the exact conditionals. PB25 Theorem 2:
    :math:`L^*_T \ge L^*_{T+1}`; Remark 2: :math:`L^*_1 = C(Y \mid X)`, :math:`L^*_{|Y|} = 0`.
    The partition is the same for every input (Theorem 3, :func:`pb25_input_dependent_lower`,
    lets it depend on the input). Exact (dynamic program over revealed sets, d <= 12);
    ``steps`` in 1..|Y|.
    """
    p = _joint(p)
    _check_d(p.d)
    G = _given_arg(given, p.d)
    T = _steps_over(p, G, steps)
    value = _min_over_partitions(subset_entropies(p), p.d, steps=T, start=G)
    return Bound(
        name="pb25_optimal_lower",
        value=value,
        bounds=f"min_fixed_partition_kl(T={T})",
        source=_SOURCE + ", Theorem 2 and Remark 2, §4 (proof App. A.2, eqs. (16), (22)-(27)); the bound by Theorem 1, eq. (2)",
        statement="min over T-step factorized decoders of KL >= L*_T = min over ordered partitions into T sets of L_T; L*_T >= L*_{T+1}",
        assumptions=("fixed ordered partitions, the same for every input", "d <= 12 (exact minimum)"),
        kind=LOWER,
        status=PAPER,
    )


def pb25_input_dependent_lower(p, steps: int, given) -> Bound:
    r"""PB25 Theorem 3 (App. A.3, eqs. (28)–(30)): the optimal T-step bound when the
    partition may depend on the input X = :math:`x_G` (``given``, non-empty):

    .. math::

        L^*_T = \mathbb{E}_{X}\, \min_{\{S_i\}} L_T(\{S_i\} \mid X), \qquad
        L_T(\{S_i\} \mid x) = \sum_{i=1}^{T} \mathbb{E}_{S_{<i} \sim P(\cdot \mid x)}\, C(S_i \mid x, S_{<i}),

    non-increasing in T (Theorem 3). By Theorem 1 applied to each input, it bounds from below
    the KL (averaged over X) of every T-step factorized decoder whose partition is a function
    of the input, and it is attained with the exact conditionals and the best partition per
    input; it is at most :func:`pb25_optimal_lower` with the same ``given`` (one partition for
    all inputs). Exact: one dynamic program per input value with :math:`p(x_G) > 0`.
    """
    p = _joint(p)
    _check_d(p.d)
    G = _given_arg(given, p.d)
    if G == 0:
        raise ValueError("given: Theorem 3 needs the input positions X (non-empty); without an input use pb25_optimal_lower")
    T = _steps_over(p, G, steps)
    gpos = [i for i in range(p.d) if G >> i & 1]
    pX = p.marginal(gpos)
    value = 0.0
    for v in itertools.product(range(p.K), repeat=len(gpos)):
        w = float(pX[v])
        if w <= 0.0:
            continue
        q = p.condition(gpos, [int(a) for a in v])
        value += w * _min_over_partitions(subset_entropies(q), q.d, steps=T)
    return Bound(
        name="pb25_input_dependent_lower",
        value=float(value),
        bounds=f"min_input_dependent_partition_kl(T={T})",
        source=_SOURCE + ", Theorem 3, App. A.3, eqs. (28)-(30); the bound by Theorem 1, eq. (2), per input",
        statement="L*_T = E_X min over partitions of L_T(. | X); L*_T >= L*_{T+1}",
        assumptions=("ordered partitions chosen per input value", "d <= 12 (exact minimum)"),
        kind=LOWER,
        status=PAPER,
    )


# -- rows of compare (docs/design.md, "How to add a bound") ----------------------------------
@register_rows("pb25_schedule_lower", source=__name__, order=150,
               applies=lambda ctx: random_order_schedule(ctx) and ctx.d <= COMPARE_MAX_D)
def _schedule_rows(ctx):
    return [ctx.row(pb25_schedule_lower(ctx.p, ctx.plan), ctx.path_kl)]


@register_rows("pb25_partition_lower", source=__name__, order=160,
               applies=lambda ctx: ctx.capabilities.order == "prefix" and isinstance(ctx.plan, Schedule))
def _partition_rows(ctx):
    """Left to right in blocks of k_t: PB25's fixed partition (an equality with the exact conditionals)."""
    cuts = [tuple(range(s0, s0 + k)) for s0, k in zip(ctx.plan.starts, ctx.plan.sizes)]
    return [ctx.row(pb25_partition_lower(ctx.p, cuts), ctx.kl_exact)]
