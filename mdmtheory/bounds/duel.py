r"""DUEL's likelihood as a row of :func:`~mdmtheory.bounds.compare` (Turok, De Sa & Kuleshov,
arXiv 2603.01367, abstract; giladturok/duel-code@0afae1c ``exact_likelihood.py``; our reading).

For a planner deterministic given :math:`x_A` (a fixed order or a scored rule of
:mod:`mdmtheory.samplers.adaptive`), :math:`\log q(x) = \sum_j \log p(x_j \mid x_A)` along the
planner's path, so its expected NLL minus H(p) is KL(p‖q): an identity, checked against the
exact KL (:func:`mdmtheory.samplers.likelihood.duel_nll`). The likelihood itself lives in
:mod:`mdmtheory.samplers.likelihood`; this module only lists it.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..schedules.plans import Grid
from ._core import HOLD_RTOL, OUR_READING
from .registry import _slack as slack, ComparisonRow, register_rows
from ..samplers.likelihood import duel_nll

__all__ = ["DUEL_MAX_SEQUENCES"]

#: DUEL rows walk every sequence: laws with at most this many (K**d)
DUEL_MAX_SEQUENCES = 64
_DUEL = ("DUEL, Turok, De Sa & Kuleshov, arXiv 2603.01367 (abstract; giladturok/duel-code@0afae1c "
         "exact_likelihood.py): log q(x) = sum of log p(x_j | x_A) along the planner's path")


def _applies(ctx) -> bool:
    """The planners DUEL scores (the ranked rules of samplers.adaptive, whose reveal set is a
    function of x_A but for ties: ``capabilities.ranked``), on a Schedule or their own sizes,
    small laws."""
    return (ctx.capabilities.ranked and not isinstance(ctx.plan, Grid)
            and ctx.p.K ** ctx.p.d <= DUEL_MAX_SEQUENCES)


@register_rows("duel_likelihood", source=__name__, order=420, applies=_applies)
def _duel_rows(ctx):
    """Its NLL minus H(p) against the exact KL. A planner with ``ties="random"`` that split a
    tie is scored under the fixed lowest-index rule (DUEL's code uses torch.topk's; "lowest"
    needs no torch): the row then describes another sampler (holds None, name
    ``duel_likelihood_lowest``)."""
    obj, p = ctx.sampler, ctx.p
    split = getattr(obj, "ties", None) == "random" and ctx.run.tie_mass > 0
    if getattr(obj, "ties", None) == "random":
        obj = dataclasses.replace(obj, ties="lowest")
    t = p.table[p.table > 0]
    value = duel_nll(p, obj, ctx.plan) + float(np.sum(t * np.log(t)))
    kl = ctx.kl_exact
    holds = None if split else bool(abs(value - kl) <= HOLD_RTOL * max(abs(value), abs(kl), ctx.scale))
    return [ComparisonRow("duel_likelihood_lowest" if split else "duel_likelihood", "identity", "kl", value, kl,
                          slack(value, kl), holds, _DUEL, OUR_READING)]
