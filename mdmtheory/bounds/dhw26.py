r"""DHW26 = Dmitriev et al.'s effective total correlation (``ugc.effective_total_correlation``)
against the UGC and the total correlations: W26's sandwich (App. A, Proposition 3,
eq. (62c)) and DHW <= min(TC, DTC) (derived here). docs/theory.md §3."""

from __future__ import annotations

import math

from ..ugc import _ugc, as_profile
from ._core import DERIVED, LOWER, PAPER, Bound, _tc_dtc


def dhw_sandwich(p) -> tuple[Bound, Bound]:
    r"""DHW26 effective TC against the UGC, W26 App. A, Proposition 3, eq. (62c), verified
    here (docs/theory.md §3):

    .. math:: H(0, 1) \le \mathrm{DHW} \le \frac{e}{e-1} H(0, 1).

    Returns (lower, upper), both bounding ``"dhw"``; from
    :math:`t(1-t) \le t\min\{1, -\log t\} \le \frac{e}{e-1} t(1-t)` on [0, 1].
    """
    H = _ugc(as_profile(p), 0.0, 1.0)
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
