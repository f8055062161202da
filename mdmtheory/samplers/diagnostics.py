r"""Decoding-bias diagnostics: when each position is revealed, and KL per planner.

* :func:`reveal_diagnostics` — the exact position × step matrix
  :math:`R[j, t] = \Pr(\text{position } j \text{ is revealed at step } t)` of a planner on a
  law (from :func:`~mdmtheory.samplers.engine.exact_run`), with summary statistics.
* :func:`reveal_statistics` — the same statistics from any such matrix (e.g. the empirical
  one of a simulation, :func:`empirical_reveal_matrix`).
* :func:`comparison_table` — exact KL(p‖q) for every (law, planner, number of steps T), all
  planners on the same constant schedule of T steps.

Statistics (columns are steps; column 0 is the exact initialization of grids, 0 otherwise):

* mean reveal step of position j, :math:`\bar t_j = \sum_t t R[j,t] / \sum_t R[j,t]`;
* **boundary bias** :math:`\tfrac12(\bar t_0 + \bar t_{d-1}) - \operatorname{mean}_{0<j<d-1}
  \bar t_j` — negative when the two end positions go first (d >= 3; None otherwise);
* **left-to-right tendency**: Spearman's rank correlation between the position j and
  :math:`\bar t_j` (+1: strictly left to right, -1: right to left). Mean steps are compared
  after rounding to 1e-9 (so exact ties are ties); when all of them tie the correlation is
  undefined and reported as 0 (no tendency).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

import numpy as np
from scipy.stats import rankdata

from .._estimate import Record
from ..information.divergence import kl
from ..laws.joint import Joint
from ..schedules.plans import Schedule
from .._validate import float_array, int_arg, LIMITS, _short
from .engine import exact_run
from .planners import resolve_planner

__all__ = [
    "RevealDiagnostics",
    "reveal_diagnostics",
    "reveal_statistics",
    "empirical_reveal_matrix",
    "ComparisonTable",
    "comparison_table",
]

_ROUND = 9


@dataclass(frozen=True)
class RevealDiagnostics(Record):
    """Position × step reveal law of a planner and its summary statistics.

    Attributes
    ----------
    matrix : (d, n_cols) ``[j, t]`` = P(position j revealed at step t); column 0 is the
        initialization (zero for schedules), trailing all-zero columns are dropped.
    mean_step : (d,) mean reveal step of each position (given that it is revealed).
    boundary_bias : mean step of the two ends minus that of the middle (None for d < 3).
    left_to_right : Spearman correlation of position and mean step (0 when all tie).
    step_counts : law of the number of steps (as ``ExactRun.step_counts``).
    expected_steps : its mean.
    lost : mass lost at zero-probability prefixes.
    """

    matrix: np.ndarray
    mean_step: np.ndarray
    boundary_bias: float | None
    left_to_right: float
    step_counts: np.ndarray
    expected_steps: float
    lost: float


def _trim(matrix: np.ndarray) -> np.ndarray:
    nz = np.flatnonzero(matrix.sum(axis=0) > 0)
    return matrix[:, : (nz[-1] + 1 if nz.size else 1)]


def reveal_statistics(matrix) -> tuple[np.ndarray, float | None, float]:
    """(mean_step, boundary_bias, left_to_right) of a (d, n_cols) reveal matrix.

    Column t counts step t. Every row needs positive mass (each position revealed with
    positive probability).
    """
    R = float_array(matrix, "matrix", finite=False)
    if R.ndim != 2 or R.shape[0] < 1 or not np.all(np.isfinite(R)) or np.any(R < 0):
        raise ValueError(f"matrix: expected a finite non-negative (d, steps) array, got shape {R.shape}")
    mass = R.sum(axis=1)
    if np.any(mass <= 0):
        raise ValueError("matrix: some position is never revealed (a row sums to 0)")
    mean = (R * np.arange(R.shape[1])).sum(axis=1) / mass
    d = R.shape[0]
    boundary = float((mean[0] + mean[-1]) / 2 - mean[1:-1].mean()) if d >= 3 else None
    rounded = np.round(mean, _ROUND)
    if d < 2 or np.all(rounded == rounded[0]):
        ltr = 0.0
    else:
        r = rankdata(rounded)
        pos = np.arange(d, dtype=np.float64)
        ltr = float(np.corrcoef(pos, r)[0, 1])
    return mean, boundary, ltr


def reveal_diagnostics(p: Joint, plan=None, planner="random") -> RevealDiagnostics:
    """Exact reveal matrix and statistics of a planner on p (see the module docstring)."""
    run = exact_run(p, plan, planner)
    R = _trim(run.reveal_steps)
    mean, boundary, ltr = reveal_statistics(R)
    return RevealDiagnostics(
        matrix=R,
        mean_step=mean,
        boundary_bias=boundary,
        left_to_right=ltr,
        step_counts=run.step_counts,
        expected_steps=run.expected_steps,
        lost=run.lost,
    )


def empirical_reveal_matrix(reveal_step, *, n_cols: int | None = None) -> np.ndarray:
    """Empirical (d, n_cols) reveal matrix from per-sample reveal steps (n, d).

    ``reveal_step`` as in :class:`~mdmtheory.samplers.base.Simulation` (1-based steps, 0
    = never revealed); each entry is a frequency over the n samples, comparable to
    :attr:`RevealDiagnostics.matrix`.
    """
    if reveal_step is None or isinstance(reveal_step, (str, bytes, bool, np.bool_, dict)):
        raise ValueError(f"reveal_step: expected an (n, d) array of non-negative integer steps, got {_short(reveal_step)}")
    try:
        S = np.asarray(reveal_step)
    except (TypeError, ValueError, OverflowError, RecursionError):
        raise ValueError("reveal_step: cannot be read as an (n, d) array of non-negative integer steps") from None
    if S.ndim != 2 or S.shape[0] < 1 or S.dtype.kind not in "iu" or np.any(S < 0):
        raise ValueError("reveal_step: expected a non-empty (n, d) array of non-negative integer steps")
    top = LIMITS["steps"]
    if S.shape[1] > LIMITS["d"] or S.max() > top:
        raise ValueError(f"reveal_step: steps must be <= {top} and d <= {LIMITS['d']} (the documented limits), got {int(S.max())}")
    need = int(S.max()) + 1
    cols = need if n_cols is None else int_arg(n_cols, "n_cols", 1, top + 1)
    if cols < need:
        raise ValueError(f"n_cols: {cols} is too small for step {need - 1}")
    out = np.zeros((S.shape[1], cols))
    for j in range(S.shape[1]):
        out[j] = np.bincount(S[:, j], minlength=cols)[:cols] / S.shape[0]
    out[:, 0] = 0.0  # step 0 = never revealed (lost), not an initialization
    return out


@dataclass(frozen=True)
class ComparisonTable(Record):
    """Exact KL(p‖q) per (law, T, planner) on the constant schedule of T steps.

    Attributes
    ----------
    laws, planners : names in input order.
    steps : (law, T) pairs in row order.
    kl : (rows, planners) array; row i is ``steps[i]``.
    lost : same shape, mass lost at zero-probability prefixes.
    """

    laws: tuple[str, ...]
    planners: tuple[str, ...]
    steps: tuple[tuple[str, int], ...]
    kl: np.ndarray
    lost: np.ndarray

    def value(self, law: str, T: int, planner: str) -> float:
        known = isinstance(law, str) and isinstance(T, (int, np.integer)) and not isinstance(T, bool)
        if not known or (law, int(T)) not in self.steps:  # (an array compared with a row is ambiguous)
            raise ValueError(f"law, T: no row ({_short(law)}, {_short(T)}); rows are {list(self.steps)}")
        return float(self.kl[self.steps.index((law, int(T))), self._planner(planner, "planner")])

    def _planner(self, planner, name: str) -> int:
        if not isinstance(planner, str) or planner not in self.planners:
            raise ValueError(f"{name}: expected one of {list(self.planners)}, got {_short(planner)}")
        return self.planners.index(planner)

    def ratio(self, planner: str, baseline: str = "random") -> np.ndarray:
        """KL of ``planner`` divided by KL of ``baseline`` per row.

        Rows where both are 0 (magnitude below 1e-12, rounding noise around an exact 0) are
        nan: the ratio is undefined there; a zero baseline under a positive KL gives inf.
        """
        a = self.kl[:, self._planner(planner, "planner")]
        b = self.kl[:, self._planner(baseline, "baseline")]
        a0, b0 = np.abs(a) < 1e-12, np.abs(b) < 1e-12
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(a0 & b0, np.nan, np.where(b0, np.inf, a / np.where(b0, 1.0, b)))

    def format(self, digits: int = 4) -> str:
        """Plain-text table: one row per (law, T), one column per planner (KL in nats).

        Display only: values with magnitude below 1e-12 (rounding noise around an exact 0,
        which can be slightly negative) print as 0.
        """
        digits = int_arg(digits, "digits", 0, 17)
        widths = [max(digits + 4, len(name)) for name in self.planners]
        lw = max(len(s) for s in self.laws) + 2
        head = f"{'law':<{lw}}{'T':>3} " + "".join(f" {name:>{w}}" for name, w in zip(self.planners, widths))
        lines = [head, "-" * len(head)]
        for (law, T), row in zip(self.steps, self.kl):
            cells = "".join(f" {(v if abs(v) >= 1e-12 else 0.0):>{w}.{digits}f}" for v, w in zip(row, widths))
            lines.append(f"{law:<{lw}}{T:>3} " + cells)
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def comparison_table(laws: Mapping[str, Joint], planners, steps: Iterable[int]) -> ComparisonTable:
    """Exact KL of every planner on every law for each number of steps T.

    Parameters
    ----------
    laws : {name: Joint}.
    planners : {name: planner} or a sequence of registered names; each must accept a Schedule
        (variable-size planners such as ThresholdPlanner cannot be compared at fixed T).
    steps : numbers of steps T; each law runs ``Schedule.constant(d, T)`` (T > d is skipped).
    """
    if not isinstance(laws, Mapping) or not laws:
        raise ValueError("laws: expected a non-empty mapping {name: Joint}")
    if isinstance(planners, Mapping):
        named = dict(planners)
    elif isinstance(planners, (str, bytes)) or not isinstance(planners, Iterable):
        raise ValueError(f"planners: expected a mapping {{name: planner}} or a list of planner names, got {_short(planners)}")
    else:
        planners = list(planners)
        for pl in planners:  # a name or a planner object; str() of a nested list could recurse without end
            if isinstance(pl, (list, tuple, dict, set, bytes)):
                raise ValueError(f"planners: each item is a planner name or a planner object, got {_short(pl)}")
        named = {str(pl): pl for pl in planners}
    if not named:
        raise ValueError("planners: pass at least one planner")
    objs = {name: resolve_planner(pl) for name, pl in named.items()}
    if isinstance(steps, (str, bytes)):
        raise ValueError(f"steps: expected a sequence of positive step counts, got {_short(steps)}")
    try:
        Ts = [int_arg(T, "steps", 1) for T in steps]
    except TypeError:
        raise ValueError(f"steps: expected a sequence of positive step counts, got {steps!r}") from None
    if not Ts:
        raise ValueError("steps: expected at least one step count")
    for lname, p in laws.items():
        if not isinstance(lname, str):
            raise ValueError(f"laws: names must be strings, got {_short(lname)}")
        if not isinstance(p, Joint):
            raise ValueError(f"laws: {lname!r} is a {type(p).__name__}, expected a Joint")
    if all(T > p.d for p in laws.values() for T in Ts):
        raise ValueError("steps: every step count exceeds every law's d; choose T <= d")
    rows, values, losts = [], [], []
    for lname, p in laws.items():
        if not isinstance(p, Joint):
            raise ValueError(f"laws: {lname!r} is a {type(p).__name__}, expected a Joint")
        for T in Ts:
            if T > p.d:
                continue
            sched = Schedule.constant(p.d, T)
            row, lrow = [], []
            for obj in objs.values():
                q = exact_run(p, sched, obj).law
                row.append(kl(p, q))
                lrow.append(q.lost)
            rows.append((lname, T))
            values.append(row)
            losts.append(lrow)
    return ComparisonTable(
        laws=tuple(laws),
        planners=tuple(named),
        steps=tuple(rows),
        kl=np.array(values),
        lost=np.array(losts),
    )
