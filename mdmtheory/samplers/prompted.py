r"""The exact KL of a sampler run with a prompt: the prompt's positions are given, the
response is generated (the law side, conditioning on a prompt, is :mod:`mdmtheory.laws.prompts`)."""

from __future__ import annotations

from ..information.divergence import kl
from ..laws.joint import Joint
from ..laws.prompts import check_given, prompt_law
from .engine import sampler_law

__all__ = [
    "prompted_kl",
]


def prompted_kl(p: Joint, plan, *, given, planner="random") -> float:
    r"""Prompt-averaged output-law KL of a sampler on the response positions.

    .. math::

        \sum_{v:\, p(x_G = v) > 0} p(x_G = v)\,
        \mathrm{KL}\bigl(p(\cdot \mid v) \,\big\|\, q_{\text{plan}}(p(\cdot \mid v))\bigr),

    where :math:`q_{\text{plan}}(\cdot)` is :func:`mdmtheory.sampler_law` run on the
    conditioned law (positions of the response renumbered 0..|R|−1 in increasing order, so
    ``plan`` is a schedule or grid for |R| positions and adaptive planners break ties by
    the lowest response position). ``given = []`` is the plain KL. Infinite when some
    prompt's sampler puts no mass on a response p allows (never NaN).

    >>> import mdmtheory as mt
    >>> p = mt.families.parity(3)          # X_2 = X_0 xor X_1
    >>> round(prompted_kl(p, mt.Schedule((2,)), given=[0]), 6)  # TC of the response: log 2
    0.693147
    """
    G = check_given(p, given)
    total = 0.0
    for v, w in prompt_law(p, G):
        cond = p.condition(G, v) if G else p
        total += w * kl(cond, sampler_law(cond, plan, planner))
    return total
