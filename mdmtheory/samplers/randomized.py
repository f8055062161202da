r"""Randomized step sizes: a law on compositions of d, its exact sampler law and path KL,
and the best randomized schedule against the best deterministic one.

Zhao & Cai (arXiv 2602.20126) draw the number of tokens revealed per step at random. A
:class:`RandomSchedule` is any law :math:`\pi` on compositions c of d (one composition drawn
per sample, then the random-order sampler with those counts). Its output law is the mixture

.. math:: q_\pi = \sum_c \pi(c)\, q_c ,

and its path KL — the composition is part of the trajectory and drawn the same way under
the reference path measure — is :math:`\sum_c \pi(c)\, \mathrm{KL}_{\text{path}}(c)`.
Expected forwards: :math:`\sum_c \pi(c)\,|c|`.

**Is randomization ever better?** (:func:`optimal_random_schedule`.) The path KL is linear
in :math:`\pi`: at a fixed number of steps its minimum is a deterministic schedule, and at a
fixed *expected* number of forwards F it is a linear programme whose optimum mixes at most
two step counts (solved exactly with ``scipy.optimize.linprog``) — randomization helps the
path KL exactly where :math:`T \mapsto \min_{|c| = T} \mathrm{KL}_{\text{path}}(c)` is not
convex at F. The output-law KL :math:`\mathrm{KL}(p \,\|\, q_\pi)` is convex in
:math:`\pi` (convexity of KL in its second argument), so a mixture can beat every
deterministic schedule with the same steps; its minimum over the compositions with T steps
is found by the mixture-weights EM iteration
:math:`\pi_c \leftarrow \pi_c \sum_x p(x)\, q_c(x) / q_\pi(x)` (monotone, converging to the
global minimum of this convex problem). Derived here; tests/samplers/test_randomized.py checks each
against the definition.
"""

from __future__ import annotations

import numpy as np

from ..laws.joint import Joint
from ..schedules.plans import check_schedule, RandomSchedule, Schedule
from .engine import sampler_law
from ..information.divergence import path_kl

__all__ = [
    "random_schedule_law",
    "random_path_kl",
]


def _check(p, rs):
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
    if not isinstance(rs, RandomSchedule):
        raise ValueError(f"plan: expected a RandomSchedule, got {type(rs).__name__}")
    if rs.d != p.d:
        raise ValueError(f"plan: compositions of {rs.d}, but the law has d = {p.d}")


def random_schedule_law(p: Joint, rs: RandomSchedule) -> Joint:
    """Exact output law :math:`q_\\pi = \\sum_c \\pi(c) q_c` (random order), lost mass included."""
    _check(p, rs)
    table = np.zeros(p.table.shape)
    lost = 0.0
    for c, w in rs.law.items():
        q = sampler_law(p, Schedule(c))
        table += w * q.table
        lost += w * q.lost
    return Joint(table, lost=lost)


def random_path_kl(p, rs: RandomSchedule) -> float:
    """:math:`\\sum_c \\pi(c)\\, \\mathrm{KL}_{\\text{path}}(c)` (``p`` a Joint or a profile)."""
    if not isinstance(rs, RandomSchedule):
        raise ValueError(f"plan: expected a RandomSchedule, got {type(rs).__name__}")
    return float(sum(w * path_kl(p, check_schedule(Schedule(c), rs.d, name="plan")) for c, w in rs.law.items()))


