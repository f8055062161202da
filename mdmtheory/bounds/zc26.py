r"""ZC26 = Zhao & Cai, *Adaptation to Intrinsic Dependence in Diffusion Language Models*,
arXiv 2602.20126v1: randomized unmasking sizes.

**How it was read.** Only the opening of the paper's arXiv HTML page (v1) could be read: the
title, authors, abstract and the first sentences of §1; no theorem, section, equation, size
law, constant or log factor. What that text says: the schedule "randomizes the number of
tokens revealed at each iteration"; "for two specific parameter choices" of it, the KL
guarantees "scale as :math:`\tilde O(\mathsf{TC}/K)` and :math:`\tilde O(\mathsf{DTC}/K)`
respectively", K the number of iterations; the guarantees hold in the regime K < L (L = d).
So the law on unmasking sizes is ZC26's own, with parameters, and the two rates are each for
one parameter choice of it — not for uniformly random compositions. Neither the law nor its
parameters are in the text we could read, so the package cannot implement it; what it
implements is the exact check of *any* law on compositions into K parts
(:func:`zc26_check`, :class:`~mdmtheory.schedules.RandomSchedule`), against which ZC26's
law can be tested once it is known. An order statement with hidden constants and
logarithmic factors is not a finite inequality, so :func:`zc26_rates` returns the two rates
at constant 1 as **asymptotic** values (no verdict), status ``"our reading"``.

Exact facts (docs/theory.md §2; tests/bounds/test_bounds_by_source.py), **about the uniform law on
compositions into K parts, not ZC26's law**: at K = 1 every size law gives KL = path KL = TC;
on global parity the expected path KL is :math:`\frac{d-K}{d-1}\log 2`, so
E[path KL]/(TC/K) = K(d − K)/(d − 1) (4/3 at d = 4, K = 2; 1.5 at d = 5, K = 2 or 3: it grows
without bound with K and d), and the output-law KL is :math:`\log\frac{2(d-1)}{d+K-2}`
(ratio 1.17 at d = 4, K = 2); on the repeated bit the expected path KL is
:math:`(d/K - 1)\log 2`, so E[path KL]/(DTC/K) = d − K for every K, in the regime K < d.
Whether ZC26's theorem covers K = 1, and what its Õ hides, could not be read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._estimate import Record
from ..information.profile import as_profile
from .._validate import int_arg
from ._core import ASYMPTOTIC, Bound, OUR_READING, _tc_dtc
from ..information.divergence import kl
from ..laws.joint import Joint
from ..schedules.plans import RandomSchedule
from ..samplers.randomized import random_path_kl, random_schedule_law

__all__ = [
    "zc26_rates",
    "zc26_check",
    "ZC26Check",
]


_SOURCE = "Zhao & Cai 2026 (arXiv 2602.20126v1), abstract (our reading: rates at constant 1, no log factors)"


def zc26_rates(p, steps: int) -> tuple[Bound, Bound]:
    r"""ZC26's two rates at constant 1, :math:`\mathsf{TC}/K` and :math:`\mathsf{DTC}/K`, for K
    iterations with ZC26's randomized sizes (**asymptotic**, our reading; module docstring).

    .. math:: \mathrm{KL} = \tilde O(\mathsf{TC}/K), \qquad \mathrm{KL} = \tilde O(\mathsf{DTC}/K)

    (each for its own parameter choice of ZC26's size law, which we could not read).
    ``steps`` = K in 1..d. Returns (TC rate, DTC rate), both of kind ``"asymptotic"``: the
    tilde hides constants and log factors, so neither is checked as an inequality.
    """
    prof = as_profile(p)
    K = int_arg(steps, "steps", 1, prof.d, f" (K iterations, at most d={prof.d})")
    tc, dtc = _tc_dtc(prof)
    common = dict(
        bounds=f"kl(random sizes, K={K})",
        source=_SOURCE,
        assumptions=("ZC26's random unmasking-size law, one parameter choice per rate (law not in the text we could read)",
                     "asymptotic (O-tilde): constants and log factors unknown", "regime K < L (abstract)"),
        kind=ASYMPTOTIC,
        status=OUR_READING,
    )
    return (
        Bound(name="zc26_tc_rate", value=tc / K, statement="KL = O~(TC/K) for K iterations (one parameter choice)", **common),
        Bound(name="zc26_dtc_rate", value=dtc / K, statement="KL = O~(DTC/K) for K iterations (another parameter choice)", **common),
    )


@dataclass(frozen=True)
class ZC26Check(Record):
    r"""Exact errors of a random-size schedule with K iterations beside ZC26's two rates at
    constant 1 (:func:`zc26_check`). ``kl``: KL(p ‖ q_π) of the output law (the mixture over
    compositions of the fixed-schedule laws); ``path_kl``: :math:`\sum_c \pi(c)\,\mathrm{KL}_{\text{path}}(c)`;
    ``tc``, ``dtc`` of p. Ratios: ``kl / (tc / K)`` etc. (inf where a rate is 0 and the error
    is not)."""

    steps: int
    kl: float
    path_kl: float
    tc: float
    dtc: float

    @staticmethod
    def _ratio(err: float, rate: float) -> float:
        if rate > 0.0:
            return err / rate
        return 0.0 if err <= 0.0 else math.inf

    @property
    def kl_over_tc_rate(self) -> float:
        return self._ratio(self.kl, self.tc / self.steps)

    @property
    def kl_over_dtc_rate(self) -> float:
        return self._ratio(self.kl, self.dtc / self.steps)

    @property
    def path_kl_over_tc_rate(self) -> float:
        return self._ratio(self.path_kl, self.tc / self.steps)

    @property
    def path_kl_over_dtc_rate(self) -> float:
        return self._ratio(self.path_kl, self.dtc / self.steps)


def zc26_check(p, plan) -> ZC26Check:
    r"""Exact output-law KL and path KL of a law ``plan`` (a
    :class:`~mdmtheory.schedules.RandomSchedule`) whose compositions all have the same
    number of parts K, beside TC/K and DTC/K. Any law on K-part compositions can be passed;
    ZC26's own law is not known to us (module docstring), so a ratio above 1 says that this
    law does not meet the rate at constant 1, nothing about ZC26."""
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
    if not isinstance(plan, RandomSchedule):
        raise ValueError(f"plan: expected a RandomSchedule (a law on compositions), got {type(plan).__name__}")
    parts = {len(c) for c in plan.law}
    if len(parts) != 1:
        raise ValueError(f"plan: ZC26's rates are for K iterations; the law mixes {sorted(parts)} parts, give one K")
    tc, dtc = _tc_dtc(as_profile(p))
    return ZC26Check(steps=parts.pop(), kl=float(kl(p, random_schedule_law(p, plan))),
                     path_kl=float(random_path_kl(p, plan)), tc=float(tc), dtc=float(dtc))
