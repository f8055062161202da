r"""The :class:`Bound` record, the kinds and statuses of a bound, and helpers shared by the
modules of :mod:`mdmtheory.bounds` (one module per source; docs/design.md §8)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._estimate import Record
from ..information.ugc import check_interval
from ..schedules.odds import from_log_odds, log_odds
from ..schedules.plans import check_schedule, Grid, Schedule
from .._validate import _is_bool, _short, int_arg, real_arg

__all__ = [
    "Bound",
    "UPPER",
    "LOWER",
    "ASYMPTOTIC",
    "PAPER",
    "SUMMARY",
    "OUR_READING",
    "DERIVED",
    "STATUSES",
    "HOLD_RTOL",
]


UPPER, LOWER, ASYMPTOTIC = "upper", "lower", "asymptotic"
#: Status of a bound's statement (:attr:`Bound.status`, the ``status`` column of tables).
PAPER, SUMMARY, OUR_READING, DERIVED = "paper", "paper, via summary", "our reading", "derived here"
STATUSES = (PAPER, SUMMARY, OUR_READING, DERIVED)
#: Relative tolerance of :meth:`Bound.holds` and :func:`compare` (see there for the scale).
HOLD_RTOL = 1e-12


@dataclass(frozen=True)
class Bound(Record):
    """A bound's value and where it comes from.

    Attributes
    ----------
    name : short identifier, e.g. ``"w26_theorem1"``.
    value : the bound (nats); ``inf`` where the stated bound is vacuous (e.g. a factor
        :math:`\\psi(1) = \\infty`).
    bounds : the quantity bounded, e.g. ``"path_kl"``, ``"kl"``, ``"gamma_umask(a, b)"``.
    source : paper and theorem/equation.
    statement : the inequality in words.
    assumptions : conditions under which it is claimed.
    kind : ``"upper"`` (value >= quantity), ``"lower"`` (value <= quantity) or
        ``"asymptotic"`` (a limit statement: no finite inequality is claimed).
    plan : the schedule or grid the bound refers to, when the bound builds it (Geo(ρ),
        the block grid of Proposition 1); else None.
    status : where the statement comes from: ``"paper"``, ``"paper, via summary"``,
        ``"our reading"`` or ``"derived here"`` (:data:`STATUSES`); ``""`` if unlabelled.
    """

    name: str
    value: float
    bounds: str  # the quantity bounded, e.g. "path_kl" or "kl"
    source: str
    statement: str
    assumptions: tuple[str, ...] = field(default_factory=tuple)
    kind: str = UPPER
    plan: Any = None
    status: str = ""

    def __post_init__(self):
        if not isinstance(self.kind, str) or self.kind not in (UPPER, LOWER, ASYMPTOTIC):
            raise ValueError(f"kind: expected one of {(UPPER, LOWER, ASYMPTOTIC)}, got {self.kind!r}")
        if not isinstance(self.status, str) or self.status not in STATUSES + ("",):
            raise ValueError(f"status: expected one of {STATUSES} (or ''), got {self.status!r}")

    def holds(self, exact: float, *, scale: float = 0.0, rtol: float = HOLD_RTOL) -> bool | None:
        """Whether the bound holds against the exact quantity, within
        ``rtol * max(|value|, |exact|, scale)`` (``scale``: the problem's natural size, e.g.
        :math:`\\sum_i H(X_i)`, so that rounding of a zero quantity is not a violation).
        None for an asymptotic statement. ``exact`` is a real number (+inf allowed: an infinite
        KL; NaN refused), ``scale`` and ``rtol`` finite and >= 0."""
        ok = not _is_bool(exact) and isinstance(exact, numbers.Real)
        if ok and exact != math.inf:
            try:
                real_arg(exact, "exact")
            except ValueError:
                ok = False
        if not ok:
            raise ValueError(f"exact: expected a real number (finite or +inf), got {_short(exact)}")
        for name, x in (("scale", scale), ("rtol", rtol)):
            if real_arg(x, name) < 0:
                raise ValueError(f"{name}: expected a finite number >= 0, got {x!r}")
        if self.kind == ASYMPTOTIC:
            return None
        v, e = float(self.value), float(exact)
        if math.isinf(v):
            return v > 0 if self.kind == UPPER else v < 0
        tol = rtol * max(abs(v), abs(e), float(scale))
        return v >= e - tol if self.kind == UPPER else v <= e + tol


def _schedule(schedule, d: int) -> Schedule:
    return check_schedule(schedule if isinstance(schedule, Schedule) else Schedule(schedule), d)


def _grid(grid) -> Grid:
    if isinstance(grid, Grid):
        return grid
    return Grid(grid)


def _times_product(factor: float, H: float) -> float:
    """factor * H with the convention 0 where H = 0 (then the defect is 0 too: an
    identically zero integrand), and inf for an infinite factor."""
    if H == 0.0:
        return 0.0
    return math.inf if math.isinf(factor) else factor * H


def _geo_grid(t0: float, T: float, steps: int) -> Grid:
    r"""W26's Geo(ρ) grid (Corollary 1): :math:`\psi(t_{j+1}) = \min\{(1+\rho)\psi(t_j), \psi(T)\}`
    with :math:`\rho = \exp\{\log(\psi(T)/\psi(t_0))/N\} - 1`, i.e. N equal steps in log-odds.

    Private helper (schedule families live in schedules.py/optimal.py; this one is built
    here so the bound can be evaluated on its own grid).
    """
    lam = np.linspace(log_odds(t0), log_odds(T), steps + 1)
    t = np.array(from_log_odds(lam))
    t[0], t[-1] = t0, T
    return Grid(t)


def _is_geometric(grid: Grid, rtol: float = 1e-9) -> bool:
    t = np.array(grid.times)
    if t[0] <= 0 or t[-1] >= 1:
        return False
    dl = np.diff(np.log(t) - np.log1p(-t))
    return bool(np.allclose(dl, dl.mean(), rtol=rtol, atol=0.0))


def _endpoints(prof, start, stop) -> tuple[float, float]:
    if start is None and stop is None:
        if prof.d < 3:
            raise ValueError(f"p: the canonical interval [1/d, 1-1/d] is a point for d={prof.d}; pass start, stop")
        return 1.0 / prof.d, 1.0 - 1.0 / prof.d
    if start is None or stop is None:
        raise ValueError("start, stop: give both or neither (default: the canonical interval)")
    a, b = check_interval(start, stop, "start, stop")
    if not (0.0 < a < b < 1.0):
        raise ValueError(f"start, stop: need 0 < start < stop < 1, got ({a}, {b})")
    return a, b


def _steps_arg(steps) -> int:
    return int_arg(steps, "steps", 1)


def _tc_dtc(prof) -> tuple[float, float]:
    r"""TC and DTC from the profile: :math:`TC = \int_0^1 (1-t)h'`, :math:`DTC = \int_0^1 t h'`,
    i.e. :math:`TC = d\varphi_0 - H(X)` and :math:`DTC = H(X) - d\varphi_{d-1}`."""
    phi = prof.values
    d = prof.d
    H = float(phi.sum())
    return d * float(phi[0]) - H, H - d * float(phi[-1])
