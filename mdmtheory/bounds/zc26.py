r"""ZC26 = Zhao & Cai, *Adaptation to Intrinsic Dependence in Diffusion Language Models*,
arXiv 2602.20126: randomized unmasking sizes.

**How it was read.** Only the paper's abstract (its own text, arXiv) was available to us; no
theorem, section, equation, size law or constant. It states that a schedule which
"randomizes the number of tokens revealed at each iteration" has, "for two specific parameter
choices", KL guarantees that "scale as :math:`\tilde O(\mathsf{TC}/K)` and
:math:`\tilde O(\mathsf{DTC}/K)`", K the number of iterations, in the regime K < L (L = d).
An order statement with hidden constants and logarithmic factors is not a finite inequality,
so :func:`zc26_rates` returns the two rates at constant 1 as **asymptotic** values (no
verdict), status ``"our reading"``.

What the exact checks say (docs/theory.md §2): at K = 1 every schedule is the single step and
KL = path KL = TC, so the TC rate's constant is at least 1; the DTC rate cannot hold at K = 1
with any constant below TC/DTC, which is d - 1 for the repeated symbol, so its Õ must hide a
factor growing with d there or the theorem must restrict K (we could not read which). The
exact value for a law on compositions is not built here (issue 20 §3); the tests compute the
expected path KL of the uniform law on compositions into K parts by enumeration.
"""

from __future__ import annotations

from .._validate import int_arg
from ..ugc import as_profile
from ._core import ASYMPTOTIC, OUR_READING, Bound, _tc_dtc

_SOURCE = "Zhao & Cai 2026 (arXiv 2602.20126), abstract (our reading: rates at constant 1, no log factors)"


def zc26_rates(p, steps: int) -> tuple[Bound, Bound]:
    r"""ZC26's two rates at constant 1, :math:`\mathsf{TC}/K` and :math:`\mathsf{DTC}/K`, for K
    iterations with randomized sizes (**asymptotic**, our reading; module docstring).

    .. math:: \mathrm{KL} = \tilde O(\mathsf{TC}/K), \qquad \mathrm{KL} = \tilde O(\mathsf{DTC}/K)

    (each for its own parameter choice of the random size law). ``steps`` = K in 1..d.
    Returns (TC rate, DTC rate), both of kind ``"asymptotic"``: the tilde hides constants
    and log factors, so neither is checked as an inequality.
    """
    prof = as_profile(p)
    K = int_arg(steps, "steps", 1, prof.d, f" (K iterations, at most d={prof.d})")
    tc, dtc = _tc_dtc(prof)
    common = dict(
        bounds=f"kl(random sizes, K={K})",
        source=_SOURCE,
        assumptions=("random unmasking sizes, law not known to us", "asymptotic (O-tilde): constants and log factors unknown"),
        kind=ASYMPTOTIC,
        status=OUR_READING,
    )
    return (
        Bound(name="zc26_tc_rate", value=tc / K, statement="KL = O~(TC/K) for K iterations (one parameter choice)", **common),
        Bound(name="zc26_dtc_rate", value=dtc / K, statement="KL = O~(DTC/K) for K iterations (another parameter choice)", **common),
    )
