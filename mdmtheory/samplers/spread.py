r"""How much an exact result depends on the tie rule: the same sampler under the three rules.

Any scored sampler: its copy under each rule runs its own exact run (the sampler protocol,
:mod:`mdmtheory.samplers.base`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._estimate import Record
from ..information.divergence import kl
from ..laws.joint import Joint
from .base import as_sampler
from .ties import TIE_RULES

__all__ = ["TieSpread", "tie_spread", "runs_by_ties", "TIE_SPREAD_TOL"]


#: Two KLs closer than this (nats) count as equal in :func:`tie_spread`.
TIE_SPREAD_TOL = 1e-9


@dataclass(frozen=True)
class TieSpread(Record):
    r"""KL(p‖q) of one sampler under each tie rule (:mod:`mdmtheory.samplers.ties`).

    Attributes
    ----------
    random, lowest, topk : the KL (nats) with ``ties`` set to that rule.
    tie_mass : the run's ``tie_mass`` under ``"random"`` (:class:`ExactRun`), or None when
        the run record has none.
    spread : max − min of the three KLs.
    differs : ``spread > TIE_SPREAD_TOL``: the verdict depends on the tie convention.
    """

    random: float
    lowest: float
    topk: float
    tie_mass: float | None
    spread: float
    differs: bool

    def by_rule(self) -> dict:
        """{rule: KL} in the order of :data:`~mdmtheory.samplers.ties.TIE_RULES`."""
        return {"random": self.random, "lowest": self.lowest, "topk": self.topk}


def runs_by_ties(p: Joint, plan, planner) -> dict:
    """``{rule: the exact run with ties=rule}`` for every rule of
    :data:`~mdmtheory.samplers.ties.TIE_RULES`: the sampler's own exact run (its protocol's
    ``exact_run``; ``plan=None`` for the samplers that carry their plan), for the spread of any
    metric of the run over the rules (:func:`tie_spread` takes the KL). ``planner`` as in
    :func:`tie_spread`."""
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
    sampler = as_sampler(planner, plan=plan)
    if not sampler.capabilities.scored:
        raise ValueError(f"planner: {sampler.name!r} has no tie rule (a 'ties' field); only scored samplers have "
                         "runs under several tie rules")
    return {rule: as_sampler(sampler, ties=rule).exact_run(p, plan) for rule in TIE_RULES}


def tie_spread(p: Joint, plan, planner) -> TieSpread:
    r"""Rerun an exact computation under the three tie rules and compare the KLs.

    ``planner`` is a scored sampler with a ``ties`` field (a registered name such as
    ``"confidence"``, a planner of :mod:`.adaptive`, a ``SampleThenSelectPlanner``, or an
    ``EditingSampler`` / ``CorrectorSampler``, run with ``revise_run``); its copy
    ``dataclasses.replace(planner, ties=rule)`` is run for each rule of
    :data:`~mdmtheory.samplers.ties.TIE_RULES`. Three exact runs: the cost of the sampler's
    exact law, three times. ``"topk"`` follows the torch it runs on (platform-dependent).

    >>> import mdmtheory as mt
    >>> s = mt.samplers.tie_spread(mt.families.markov_chain([[.9, .1], [.1, .9]], 4), mt.Schedule((2, 2)), "confidence")
    >>> s.differs, s.tie_mass > 0
    (True, True)
    """
    runs = runs_by_ties(p, plan, planner)
    kls = {rule: float(kl(p, run.law)) for rule, run in runs.items()}
    mass = getattr(runs["random"], "tie_mass", None)
    vals = list(kls.values())
    if len(set(vals)) == 1:
        spread = 0.0  # also three infinite KLs
    else:
        spread = max(vals) - min(vals) if all(np.isfinite(vals)) else float("inf")
    return TieSpread(kls["random"], kls["lowest"], kls["topk"], None if mass is None else float(mass), float(spread),
                     bool(spread > TIE_SPREAD_TOL))
