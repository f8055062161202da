r"""DHW26 = Dmitriev, Huang & Wei, *Efficient Sampling with Discrete Diffusion Models: Sharp
and Adaptive Guarantees*, arXiv 2602.15008 (v2, revised June 2026; COLT 2026, PMLR 336,
pp. 2038-2104): the effective total correlation that governs their modified tau-leaping
sampler for masking diffusion. Of DHW26's own text only the abstract could be read (arXiv
v1 and v2 pages, PMLR page; the same claims in each): no definition, theorem, section or
equation.

What the package calls DHW is ``ugc.effective_total_correlation``,
:math:`\int_0^1 t \min\{1, -\log t\}\, h'(t)\, dt`: DHW26's quantity **as W26 renders it** in
the UGC's variables (W26 App. C.1.3, eqs. (70a)-(70b)). DHW26's own definition and theorem
were not available to us (only its abstract), so that the two agree is W26's statement, not
checked here. Here: W26's sandwich (App. A, Proposition 3, eq. (62c)), DHW <= min(TC, DTC)
(derived here) and the abstract's DHW <= d log K. docs/theory.md §3."""

from __future__ import annotations

import math

from ..information.profile import as_profile
from ..information.ugc import effective_total_correlation, profile_ugc
from ._core import Bound, DERIVED, LOWER, PAPER, _tc_dtc
from .registry import register_rows
from ..laws.joint import Joint, joint_arg

__all__ = [
    "dhw_sandwich",
    "dhw_tc_bound",
    "dhw26_dimension_bound",
]


def dhw_sandwich(p) -> tuple[Bound, Bound]:
    r"""DHW26 effective TC against the UGC, W26 App. A, Proposition 3, eq. (62c), verified
    here (docs/theory.md §3):

    .. math:: H(0, 1) \le \mathrm{DHW} \le \frac{e}{e-1} H(0, 1).

    Returns (lower, upper), both bounding ``"dhw"``; from
    :math:`t(1-t) \le t\min\{1, -\log t\} \le \frac{e}{e-1} t(1-t)` on [0, 1].
    """
    H = profile_ugc(as_profile(p), 0.0, 1.0)
    src = "Wainwright 2026 (W26), App. A, Proposition 3, eq. (62c); verified here (docs/theory.md §3)"
    return (
        Bound(name="dhw_lower", value=H, bounds="dhw", source=src, statement="H(0, 1) <= DHW", kind=LOWER, status=PAPER),
        Bound(name="dhw_upper", value=math.e / (math.e - 1) * H, bounds="dhw", source=src, statement="DHW <= (e/(e-1)) H(0, 1)", status=PAPER),
    )


def dhw_tc_bound(p) -> Bound:
    r""":math:`\mathrm{DHW} \le \min(TC, DTC)`, derived here (docs/theory.md §3):
    :math:`t\min\{1, -\log t\} \le \min(t, 1 - t)` on [0, 1]."""
    tc, dtc = _tc_dtc(as_profile(p))
    return Bound(
        name="dhw_tc",
        value=min(tc, dtc),
        bounds="dhw",
        source="derived here: DHW26's effective total correlation (docs/theory.md §3)",
        statement="DHW <= min(TC, DTC)",
        status=DERIVED,
    )


def dhw26_dimension_bound(p) -> Bound:
    r""":math:`\mathrm{DHW} \le d \log K`, as DHW26's abstract states it ("bounded by
    :math:`d \log S`", S the vocabulary size; Dmitriev, Huang & Wei, arXiv 2602.15008 v1/v2,
    COLT 2026, PMLR 336:2038-2104; only the abstract was available to us). Implied by :func:`dhw_tc_bound`, since
    :math:`\min(TC, DTC) \le TC \le (d - 1)\log K`. ``p``: a :class:`~mdmtheory.Joint` (K is
    its alphabet size)."""
    p = joint_arg(p, what="the data law (the d log K bound reads its alphabet size K)")
    return Bound(
        name="dhw26_dimension",
        value=p.d * math.log(p.K),
        bounds="dhw",
        source="Dmitriev, Huang & Wei 2026 (DHW26, arXiv 2602.15008 v1/v2, PMLR 336:2038-2104), abstract",
        statement="effective total correlation <= d log K",
        status=PAPER,
    )


# -- rows of compare (docs/design.md, "How to add a bound") ----------------------------------
@register_rows("dhw26", source=__name__, order=320, applies=lambda ctx: True)
def _dhw_rows(ctx):
    """The sandwich, DHW <= min(TC, DTC) and DHW <= d log K, against the effective total correlation."""
    prof = ctx.profile
    dhw = effective_total_correlation(prof)
    lo, hi = dhw_sandwich(prof)
    return [ctx.row(lo, dhw), ctx.row(hi, dhw), ctx.row(dhw_tc_bound(prof), dhw), ctx.row(dhw26_dimension_bound(ctx.p), dhw)]
