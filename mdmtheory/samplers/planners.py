r"""Planners: which positions a sampler reveals next (docs/design.md §3).

The planners of positions implement the sampler protocol through
:class:`~mdmtheory.samplers.base.PositionSampler` (where ``RandomPlanner``, ``StepContext`` and
the registry of names now live; this module re-exports them). A planner maps a state — the revealed set A (a bitmask) and, through
:class:`StepContext`, the exact one-token conditionals :math:`p(x_j \mid x_A)` for every
value of :math:`x_A` — to a distribution over the next reveal set B:

.. code-block:: python

    def moves(self, ctx: StepContext) -> Iterable[tuple[int, float | np.ndarray]]:
        # pairs (B as a bitmask, weight); the weights are scalars or arrays over x_A
        # (keepdims shape ctx.shape) and sum to 1 for every reachable x_A

Random planners return x-independent scalar weights; deterministic adaptive planners
return 0/1 indicator arrays (the chosen B as a function of :math:`x_A`). The exact law
engine (:mod:`mdmtheory.samplers.engine`) and Monte Carlo simulation drive the same objects.

``size`` is the schedule's :math:`k_t` for planners driven by a :class:`~mdmtheory.Schedule`;
planners with ``needs_schedule = False`` choose their own sizes (``size`` is None).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Protocol

import numpy as np

from .._estimate import Record
from .._validate import float_array
from .base import Capabilities, PLANNERS, PositionSampler, RandomPlanner, register_planner, StepContext, _resolve

__all__ = [
    "StepContext",
    "Planner",
    "RandomPlanner",
    "BernoulliPlanner",
    "PLANNERS",
    "register_planner",
    "resolve_planner",
]


class Planner(Protocol):
    name: str
    needs_schedule: bool
    allows_empty: bool

    def moves(self, ctx: StepContext) -> Iterable[tuple[int, float | np.ndarray]]: ...


@dataclass(frozen=True)
class BernoulliPlanner(PositionSampler, Record):
    r"""Each masked position revealed independently with probability :math:`\beta_t`."""

    betas: tuple[float, ...]
    name: str = "bernoulli"
    needs_schedule: bool = False
    allows_empty: bool = True
    uses_probs = False

    @property
    def capabilities(self) -> Capabilities:
        """Its steps may reveal nothing: the exact engine and the simulator run it as the
        Bernoulli sampler of a :class:`~mdmtheory.Grid` (``planner="bernoulli"``)."""
        return Capabilities(plans=("Grid",), reads_law=False, random_order=True, positions=True)

    def __post_init__(self):
        betas = tuple(float_array(self.betas, "betas", ndim=1, what="(T,) reveal probabilities", finite=False).tolist())
        if len(betas) > (1 << 16):
            raise ValueError(f"betas: {len(betas)} steps, beyond the documented limit of steps (65536)")
        if not betas or not all(0.0 <= b <= 1.0 for b in betas):  # NaN fails too
            raise ValueError(f"betas: reveal probabilities must lie in [0, 1], got {self.betas!r}")
        object.__setattr__(self, "betas", betas)

    def moves(self, ctx: StepContext):
        beta = self.betas[ctx.step]
        n = len(ctx.free)
        free_mask = sum(1 << j for j in ctx.free)
        if beta >= 1.0:
            yield free_mask, 1.0
            return
        sub = free_mask
        while True:  # every submask of the free positions
            b = bin(sub).count("1")
            yield sub, beta**b * (1.0 - beta) ** (n - b)
            if sub == 0:
                return
            sub = (sub - 1) & free_mask


def resolve_planner(planner):
    """The sampler behind a registered name, a sampler object or an object with ``moves``
    (:func:`mdmtheory.samplers.base.as_sampler` without ties and plan)."""
    return _resolve(planner)
