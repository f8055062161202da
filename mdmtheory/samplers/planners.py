r"""Planners: which positions a sampler reveals next (docs/design.md §3).

A planner maps a state — the revealed set A (a bitmask) and, through
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
from itertools import combinations
from math import comb
from typing import Callable, Iterable, Protocol

import numpy as np

from .._estimate import Record

__all__ = [
    "StepContext",
    "Planner",
    "RandomPlanner",
    "BernoulliPlanner",
    "PLANNERS",
    "register_planner",
    "resolve_planner",
]


@dataclass(frozen=True)
class StepContext(Record):
    """What a planner sees at one state of one step.

    Attributes
    ----------
    step : 0-based step index.
    revealed : bitmask of the revealed set A.
    size : tokens to reveal at this step (a schedule's k_t), or None.
    d, K : shape of the law.
    free : positions not yet revealed, increasing.
    reachable : bool array (keepdims shape), False where p(x_A) = 0.
    conditional : j -> p(x_j | x_A) as an array with length K on the axes of A and of j and
        1 elsewhere (0 where x_A is unreachable).
    """

    step: int
    revealed: int
    size: int | None
    d: int
    K: int
    free: tuple[int, ...]
    reachable: np.ndarray
    conditional: Callable[[int], np.ndarray]

    @property
    def shape(self) -> tuple[int, ...]:
        """Keepdims shape of arrays over x_A."""
        return tuple(self.K if self.revealed >> j & 1 else 1 for j in range(self.d))


class Planner(Protocol):
    name: str
    needs_schedule: bool
    allows_empty: bool

    def moves(self, ctx: StepContext) -> Iterable[tuple[int, float | np.ndarray]]: ...


@dataclass(frozen=True)
class RandomPlanner(Record):
    """Uniformly random ``size``-subset of the masked positions (the main sampler)."""

    name: str = "random"
    needs_schedule: bool = True
    allows_empty: bool = False

    def moves(self, ctx: StepContext):
        w = 1.0 / comb(len(ctx.free), ctx.size)
        for B in combinations(ctx.free, ctx.size):
            yield sum(1 << j for j in B), w


@dataclass(frozen=True)
class BernoulliPlanner(Record):
    r"""Each masked position revealed independently with probability :math:`\beta_t`."""

    betas: tuple[float, ...]
    name: str = "bernoulli"
    needs_schedule: bool = False
    allows_empty: bool = True

    def __post_init__(self):
        from .._validate import float_array

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


#: Planner factories by name, taking no argument (``sampler_law(..., planner=name)``).
PLANNERS: dict[str, Callable[[], Planner]] = {"random": RandomPlanner}


def register_planner(name: str, factory: Callable[[], Planner]) -> None:
    """Make ``planner=name`` available to the exact engine and the simulator."""
    PLANNERS[name] = factory


def resolve_planner(planner) -> Planner:
    """A planner object from a registered name or an object with ``moves``."""
    if isinstance(planner, str):
        try:
            return PLANNERS[planner]()
        except KeyError:
            raise ValueError(
                f"planner: unknown name {planner!r}; known: {sorted(PLANNERS)} "
                "(or pass an object with a moves(ctx) method)"
            ) from None
    if isinstance(planner, type):
        raise ValueError(f"planner: pass an instance, e.g. {planner.__name__}(), not the class")
    if not hasattr(planner, "moves"):
        raise ValueError(f"planner: expected a name or an object with moves(ctx), got {planner!r}")
    return planner
