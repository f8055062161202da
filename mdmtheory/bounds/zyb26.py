r"""ZYB26 = Zhang, Yu, Brekelmans, Tang, Asif & Ver Steeg, *Generation Order and Parallel
Decoding in Masked Diffusion Models: An Information-Theoretic Perspective*, arXiv 2602.00286:
the reverse KL of parallel sampling and the cost of verification.

**How it was read.** Only the paper's abstract (its own text, arXiv 2602.00286v1) was
available to us; no theorem, section or equation (no full text was found in the stored pages
or repositories searched). It claims (2) "factorized parallel decoding introduces intrinsic
sampling errors that can lead to arbitrary large Reverse KL divergence" and (3) "while
verification can eliminate sampling error, it incurs an exponential cost governed by the total
correlation within a block". What is exactly checkable on small laws:

* (2): the reverse KL :math:`\mathrm{KL}(q \| p)` of the exact output law q (the ``reverse_kl``
  row of :func:`~mdmtheory.bounds.compare`), infinite when q puts mass off p's support; an
  explicit family where it grows without bound while the forward KL stays below log K is a
  test (docs/theory.md §2).
* (3), **our reading**: verification = rejection sampling of a block B (given the revealed
  x_A) from the factorized proposal :math:`q_B = \prod_{i \in B} p(x_i \mid x_A)` with the
  exact bound :math:`M(x_A) = \max_{x_B} p(x_B \mid x_A)/q_B(x_B \mid x_A)`; the expected
  number of proposals is :math:`\mathbb{E}\, M(X_A)`, and
  :math:`M \ge e^{\mathrm{KL}(p_B \| q_B)} = e^{C(X_B \mid x_A)}` (KL <= the max-divergence)
  with Jensen give :func:`zyb26_verification_lower`. The cost model is ours.
"""

from __future__ import annotations

import math

import numpy as np

from ..laws.joint import Joint, joint_arg, positions_to_mask
from ._core import Bound, LOWER, OUR_READING
from .pb25 import conditional_total_correlation
from .registry import register_rows
from ..information.divergence import off_support_mass, reverse_kl

__all__ = [
    "rejection_cost",
    "zyb26_verification_lower",
]


_SOURCE = "Zhang et al. 2026 (arXiv 2602.00286), abstract, claim (3) (our reading: rejection sampling from the factorized proposal)"


def _reverse_kl(p: Joint, q: Joint) -> tuple[float, float]:
    r"""(:math:`\mathrm{KL}(q \,\|\, p)`, q's mass off p's support): inf when that mass is > 0.
    A sampler law's ``lost`` mass (drawn into a context x_A with p(x_A) = 0, so every
    completion lies off p's support) counts as off-support mass (``mt.information.reverse_kl`` with
    ``lost="outcome"``)."""
    off = off_support_mass(p, q) + float(q.lost)
    return reverse_kl(p, q, lost="outcome"), off


def _block_args(p, block, given):
    p = joint_arg(p, what="the data law whose verification cost is computed")
    d = p.d
    B = (1 << d) - 1 if block is None else positions_to_mask(block, d, name="block")
    A = positions_to_mask(given, d, name="given")
    if B == 0:
        raise ValueError("block: expected at least one position")
    if A & B:
        raise ValueError("given: must be disjoint from block")
    return A, B


def rejection_cost(p, block=None, given=()) -> float:
    r"""Expected number of proposals to draw :math:`X_B` exactly given :math:`X_A` by
    rejection sampling from the factorized proposal :math:`q_B = \prod_{i \in B} p(x_i \mid x_A)`
    with the tight envelope :math:`M(x_A) = \max_{x_B} p(x_B \mid x_A) / q_B(x_B \mid x_A)`:

    .. math:: \mathbb{E}_{x_A}\, M(x_A) \qquad (1 \text{ for a block of one position}).

    ``block`` defaults to every position, ``given`` to none. Exact, from the table, in logs;
    ``inf`` only where the envelope exceeds float64's range (tables with entries ~1e-200).
    """
    A, B = _block_args(p, block, given)
    d = p.d
    T = np.asarray(p.table, dtype=np.float64)
    keep = A | B
    drop = tuple(i for i in range(d) if not keep >> i & 1)
    pAB = T.sum(axis=drop, keepdims=True) if drop else T
    b_axes = tuple(i for i in range(d) if B >> i & 1)
    pA = pAB.sum(axis=b_axes, keepdims=True)
    # log ratio = log p(x_B, x_A) - sum_i log p(x_i, x_A) + (|B| - 1) log p(x_A), in place (two
    # table-sized arrays); -inf where p(x_B, x_A) = 0 (then a factor may be 0 too: no term).
    # Logs, because on tables with entries ~1e-200 the ratio itself leaves float64's range.
    with np.errstate(divide="ignore"):
        logA = np.log(pA)
        lr = np.log(pAB)
        for i in b_axes:
            others = tuple(j for j in b_axes if j != i)
            pi = pAB.sum(axis=others, keepdims=True) if others else pAB
            lr -= np.where(pi > 0, np.log(np.where(pi > 0, pi, 1.0)), 0.0)
        lr += (len(b_axes) - 1) * np.where(pA > 0, logA, 0.0)
    lr[np.broadcast_to(pAB == 0, lr.shape)] = -np.inf
    logM = lr.max(axis=b_axes, keepdims=True)
    with np.errstate(over="ignore"):  # an envelope beyond float64 (ratio > 1e308) is inf
        terms = np.where(pA > 0, pA * np.exp(np.where(pA > 0, logM, 0.0)), 0.0)
    return float(np.sum(terms))


def zyb26_verification_lower(p, block=None, given=()) -> Bound:
    r"""**Our reading** of ZYB26's claim (3) (abstract only; module docstring): exact
    verification of a block by rejection sampling from the factorized proposal costs

    .. math:: \mathbb{E}\, M(X_A) \;\ge\; \exp\bigl(C(X_B \mid X_A)\bigr),

    :math:`C(X_B \mid X_A) = \sum_{i \in B} H(X_i \mid X_A) - H(X_B \mid X_A)` the block's
    conditional total correlation (the TC of the whole law for the default block and no
    ``given``). Proof: :math:`\log M(x_A) \ge \mathrm{KL}(p_B \| q_B) = C(X_B \mid x_A)`
    pointwise, then Jensen. Bounds :func:`rejection_cost`.
    """
    A, B = _block_args(p, block, given)
    blk = [i for i in range(p.d) if B >> i & 1]
    gvn = [i for i in range(p.d) if A >> i & 1]
    C = conditional_total_correlation(p, blk, gvn)
    return Bound(
        name="zyb26_verification_lower",
        value=math.exp(C),
        bounds="rejection_cost",
        source=_SOURCE,
        statement="expected proposals of exact rejection verification >= exp(C(X_B | X_A)) (block total correlation)",
        assumptions=("our reading: verification = rejection sampling from the product of one-token conditionals", "tight envelope M = max p/q"),
        kind=LOWER,
        status=OUR_READING,
    )


# -- rows of compare (docs/design.md, "How to add a bound") ----------------------------------
@register_rows("zyb26_verification_lower", source=__name__, order=330, applies=lambda ctx: True)
def _verification_rows(ctx):
    return [ctx.row(zyb26_verification_lower(ctx.p), rejection_cost(ctx.p))]
