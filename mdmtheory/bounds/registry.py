r"""Where the bounds register the rows of :func:`~mdmtheory.bounds.compare` (docs/design.md,
"How to add a bound").

Each paper module declares its own rows: a function ``rows(ctx) -> list[ComparisonRow]`` and
the condition ``applies(ctx)`` under which they are listed, written on the
:class:`CompareContext` (the law, the plan, the sampler's
:class:`~mdmtheory.samplers.base.Capabilities`, its exact run), registered with
:func:`register_rows`. :func:`compare` computes the exact rows and then walks
:data:`REGISTERED`; nothing else names a bound.

.. code-block:: python

    @register_rows("my_bound", source=__name__, order=500,
                   applies=lambda ctx: isinstance(ctx.plan, Schedule))
    def _my_rows(ctx):
        return [ctx.row(my_bound(ctx.profile, ctx.plan), ctx.path_kl)]

``order`` places a family in the table (the entries are kept sorted by it, ties in
registration order): 100s the plan's rows, 300s the law's, 400s a rule's own, and a family
without one comes last. This module imports no paper module (they import it).
"""

from __future__ import annotations

import bisect
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .._estimate import Record
from ..schedules.plans import Grid, Schedule
from ..information.profile import Profile
from ..laws.joint import Joint
from ._core import Bound

__all__ = [
    "ComparisonRow",
    "CompareContext",
    "RowFamily",
    "REGISTERED",
    "register_rows",
    "unregister_rows",
    "random_order_schedule",
    "random_order_grid",
]


@dataclass(frozen=True)
class ComparisonRow(Record):
    """One row of :func:`compare`: an exact quantity (kind ``"exact"``) or a bound.

    ``slack`` = bound / exact (1 when they are equal, including 0 = 0 and inf = inf; inf when
    exact = 0 < bound or bound = inf; 0 when exact = inf > bound; None for exact rows);
    ``holds`` is None for exact, asymptotic and reference rows (kind ``"reference"``: a cost
    set beside the exact one for comparison, not a bound on it); ``status`` is the bound's
    :attr:`Bound.status` (``"paper"``, ``"paper, via summary"``, ``"our reading"``,
    ``"derived here"``; ``"exact"`` for exact rows; a speculative sampler's rows carry the
    status docs/theory.md §8 gives them, ``"verified here"`` included).
    """

    name: str
    kind: str
    quantity: str
    value: float
    exact: float | None
    slack: float | None
    holds: bool | None
    source: str = ""
    status: str = ""


def _slack(value: float, exact: float) -> float:
    """bound / exact, defined everywhere: 1 when they are equal (0 = 0 and inf = inf
    included), inf when exact = 0 < bound or bound = inf > exact, 0 when exact = inf > bound."""
    if value == exact:
        return 1.0
    if exact == 0.0 or math.isinf(value):
        return math.inf
    if math.isinf(exact):
        return 0.0
    return value / exact


def _bound_row(bound: Bound, exact: float | None, scale: float) -> ComparisonRow:
    """The row of a :class:`Bound` beside the exact quantity it bounds (None: no verdict)."""
    holds = None if exact is None else bound.holds(exact, scale=scale)
    s = None if exact is None else _slack(bound.value, exact)
    return ComparisonRow(bound.name, bound.kind, bound.bounds, float(bound.value), exact, s, holds, bound.source,
                         bound.status)


@dataclass(frozen=True)
class CompareContext(Record):
    """What a registered row family reads: one law, one plan, one resolved sampler and its run.

    Attributes
    ----------
    p : the data law (a :class:`~mdmtheory.Joint`).
    plan : the plan compare was given (a Schedule, a Grid or None).
    sampler : the sampler :func:`~mdmtheory.samplers.base.as_sampler` resolved, once.
    capabilities : its :class:`~mdmtheory.samplers.base.Capabilities`.
    run : its exact run (``trajectory=True`` where ``capabilities.path_kl``).
    kl_exact : KL(p‖q) of the output law.
    path_kl : the trajectory KL; None where the sampler has none.
    profile : p's information profile.
    scale : d log K, the problem's scale for the tolerance of :meth:`Bound.holds`.
    """

    p: Joint
    plan: Any
    sampler: Any = field(repr=False)
    capabilities: Any
    run: Any = field(repr=False)
    kl_exact: float
    path_kl: float | None
    profile: Profile = field(repr=False)
    scale: float

    @property
    def d(self) -> int:
        return self.p.d

    def exact(self, quantity: str) -> float:
        """The exact value of ``"kl"`` or ``"path_kl"`` (what a :attr:`Bound.bounds` names)."""
        if not isinstance(quantity, str) or quantity not in ("kl", "path_kl"):
            raise ValueError(f"quantity: expected 'kl' or 'path_kl', got {quantity!r:.40}")
        return {"kl": self.kl_exact, "path_kl": self.path_kl}[quantity]

    def row(self, bound: Bound, exact: float | None = None) -> ComparisonRow:
        """The row of ``bound`` beside ``exact`` (slack and verdict as :func:`compare` gives them;
        None: no verdict, e.g. an asymptotic statement)."""
        if not isinstance(bound, Bound):
            raise ValueError(f"bound: expected a mdmtheory.bounds.Bound, got {type(bound).__name__}")
        if exact is not None:
            try:
                ok = not isinstance(exact, (bool, np.bool_)) and isinstance(exact, numbers.Real) \
                    and not math.isnan(float(exact))
            except OverflowError:
                ok = False
            if not ok:
                raise ValueError(f"exact: expected a float64 number (inf allowed) or None, got {exact!r:.40}")
            exact = float(exact)
        return _bound_row(bound, exact, self.scale)


@dataclass(frozen=True)
class RowFamily(Record):
    """A registered family of rows: its ``name``, the paper module that declares it
    (``source``), when it applies and the rows it adds, and its place in the table (``order``)."""

    name: str
    source: str
    applies: Callable[[CompareContext], bool] = field(repr=False)
    rows: Callable[[CompareContext], list] = field(repr=False)
    order: float = math.inf


def _check_ctx(ctx) -> None:
    if not isinstance(ctx, CompareContext):
        raise ValueError(f"ctx: expected the CompareContext compare hands its rows, got {type(ctx).__name__}")


def random_order_schedule(ctx: CompareContext) -> bool:
    """The theory's sampler on a fixed-size schedule: a uniformly random order and a Schedule."""
    _check_ctx(ctx)
    return bool(ctx.capabilities.random_order) and isinstance(ctx.plan, Schedule)


def random_order_grid(ctx: CompareContext) -> bool:
    """The Bernoulli-subset sampler of a Grid (a uniformly random order)."""
    _check_ctx(ctx)
    return bool(ctx.capabilities.random_order) and isinstance(ctx.plan, Grid)


#: The registered families, in table order (``order``, then registration order).
REGISTERED: list[RowFamily] = []


def register_rows(name: str, rows: Callable | None = None, *, source: str, applies: Callable, order: float = math.inf):
    """Register a family of rows for :func:`compare`; without ``rows``, a decorator (it returns
    the function unchanged). A name registered again replaces the old entry."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"name: expected a non-empty string, got {name!r:.80}")
    if not isinstance(source, str) or not source:
        raise ValueError(f"source: expected the declaring module's name (__name__), got {source!r:.80}")
    if not callable(applies):
        raise ValueError(f"applies: expected a callable ctx -> bool, got {type(applies).__name__}")
    if rows is None:
        return lambda f: (register_rows(name, f, source=source, applies=applies, order=order), f)[1]
    if not callable(rows):
        raise ValueError(f"rows: expected a callable ctx -> list of ComparisonRow, got {type(rows).__name__}")
    unregister_rows(name)
    entry = RowFamily(name, source, applies, rows, float(order))
    REGISTERED.insert(bisect.bisect_right([e.order for e in REGISTERED], entry.order), entry)
    return entry


def unregister_rows(name: str) -> None:
    """Remove the family of that name (nothing when there is none)."""
    REGISTERED[:] = [e for e in REGISTERED if e.name != name]
