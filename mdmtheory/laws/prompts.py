r"""Prompt-conditioned exact quantities: a response generated given a fixed prompt.

Real MDMs generate a *response* :math:`x_R` to a *prompt* :math:`x_G` (G the given
positions, never masked, sampled, scored or counted; R = [d] ∖ G). For one prompt value v
everything is the unconditioned theory applied to the law :math:`p(\cdot \mid x_G = v)`
(:meth:`mdmtheory.Joint.condition`). For a task, the quantities that matter are averages
over the law of the prompt:

.. math::

    \varphi^G_m = \mathbb{E}_{x_G}\,\varphi_m\bigl(p(\cdot \mid x_G)\bigr), \qquad
    \mathrm{KL}^G(\text{plan}) = \sum_v p(x_G = v)\,
        \mathrm{KL}\bigl(p(\cdot \mid v) \,\big\|\, q_{\text{plan}}(\cdot \mid v)\bigr).

The prompted profile (``mt.information_profile(p, given=G)``) is computed from the subset
entropies in one pass; path KL and optimal schedules are linear in φ, so
``mt.path_kl(information_profile(p, given=G), plan)`` is the prompt-averaged path KL and
``mt.optimal_schedule`` of it the best schedule for the task. The output-law KL is not
linear in the law, so :func:`prompted_kl` runs the exact engine once per prompt value of
positive probability. By data processing, prompt by prompt, ``prompted_kl <=`` the
prompted path KL.
"""

from __future__ import annotations

import itertools

import numpy as np

from .joint import Joint, joint_arg, prompt_positions

__all__ = [
    "prompt_law",
]


def check_given(p: Joint, given) -> list[int]:
    """The prompt positions of ``p`` as a list, checked (:func:`mdmtheory.laws.prompt_positions`)."""
    joint_arg(p)
    return prompt_positions(given, p.d)


def prompt_law(p: Joint, given) -> list[tuple[tuple[int, ...], float]]:
    """The prompt values of positive probability and their probabilities.

    Returns ``[(values, probability), ...]`` with ``values`` one token per position of
    ``given`` (in the order given), in lexicographic order of the values.

    >>> import mdmtheory as mt
    >>> prompt_law(mt.families.repeated(3), [0])
    [((0,), 0.5), ((1,), 0.5)]
    """
    G = check_given(p, given)
    marg = p.marginal(G) if G else np.array(1.0)
    out = []
    for v in itertools.product(range(p.K), repeat=len(G)):
        w = float(marg[v]) if G else 1.0
        if w > 0:
            out.append((tuple(v), w))
    return out


