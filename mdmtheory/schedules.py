r"""Schedules of the fixed-cardinality sampler and reveal-time grids of the Bernoulli sampler.

* :class:`Schedule` — sizes :math:`k = (k_1, \dots, k_T)`, :math:`k_t \ge 1`,
  :math:`\sum_t k_t = d`; :math:`s_t = k_1 + \dots + k_{t-1}` tokens are revealed before
  step t (DESIGN.md §2).
* :class:`Grid` — reveal times :math:`0 \le t_0 < \dots < t_N \le 1`; step j reveals each
  still-masked position with probability
  :math:`\beta_j = (t_{j+1} - t_j)/(1 - t_j)`; positions with :math:`U_i \le t_0` are drawn
  exactly at the start and those with :math:`U_i > t_N` are completed exactly
  (DESIGN.md §3, THEORY.md §3).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

__all__ = ["Schedule", "Grid", "check_schedule"]


@dataclass(frozen=True, init=False)
class Schedule:
    """Step sizes of the fixed-cardinality sampler, an immutable record.

    >>> Schedule((2, 1, 1)).starts
    (0, 2, 3)
    """

    sizes: tuple[int, ...]

    def __init__(self, sizes):
        try:
            raw = list(sizes)
        except TypeError:
            raise ValueError(f"sizes: expected a sequence of positive integers, got {sizes!r}") from None
        if not raw:
            raise ValueError("sizes: a schedule needs at least one step")
        out = []
        for k in raw:
            if isinstance(k, (bool, np.bool_)) or not float(k).is_integer():
                raise ValueError(f"sizes: step sizes must be integers, got {k!r}")
            if int(k) < 1:
                raise ValueError(
                    f"sizes: every step must reveal at least one token, got {int(k)} in {tuple(raw)}; "
                    "drop empty steps"
                )
            out.append(int(k))
        object.__setattr__(self, "sizes", tuple(out))

    @classmethod
    def constant(cls, d: int, steps: int) -> "Schedule":
        """As equal as possible: sizes differ by at most one, the larger ones last."""
        if not (isinstance(d, (int, np.integer)) and d >= 1):
            raise ValueError(f"d: expected a positive integer, got {d!r}")
        if not (isinstance(steps, (int, np.integer)) and 1 <= steps <= d):
            raise ValueError(f"steps: expected an integer in 1..d={d}, got {steps!r}")
        cuts = [(t * d) // steps for t in range(steps + 1)]
        return cls(np.diff(cuts))

    @property
    def d(self) -> int:
        return sum(self.sizes)

    @property
    def steps(self) -> int:
        return len(self.sizes)

    @property
    def starts(self) -> tuple[int, ...]:
        """:math:`s_t`, tokens revealed before each step."""
        return tuple(int(s) for s in np.concatenate([[0], np.cumsum(self.sizes)[:-1]]))

    @property
    def max_size(self) -> int:
        return max(self.sizes)

    def to_list(self) -> list[int]:
        return list(self.sizes)

    def to_json(self) -> str:
        return json.dumps({"sizes": self.to_list()})

    def __repr__(self) -> str:
        return f"Schedule({self.sizes})"


def check_schedule(schedule, d: int) -> Schedule:
    """Coerce ``schedule`` to a :class:`Schedule` and check that it sums to ``d``."""
    if not isinstance(schedule, Schedule):
        schedule = Schedule(schedule)
    if schedule.d != d:
        raise ValueError(f"schedule: sizes sum to {schedule.d}, expected d={d}")
    return schedule


@dataclass(frozen=True, init=False)
class Grid:
    r"""Reveal-time grid :math:`0 \le t_0 < t_1 < \dots < t_N \le 1` (N >= 1 steps)."""

    times: tuple[float, ...]

    def __init__(self, times):
        try:
            t = np.array(times, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"times: cannot be read as a float vector ({exc})") from None
        if t.ndim != 1 or t.shape[0] < 2:
            raise ValueError(f"times: need at least two times t_0 < t_1, got {times!r}")
        if not np.all(np.isfinite(t)):
            raise ValueError("times: contains NaN or infinite entries")
        if t[0] < 0 or t[-1] > 1:
            raise ValueError(f"times: must lie in [0, 1], got [{t[0]}, {t[-1]}]")
        if np.any(np.diff(t) <= 0):
            raise ValueError(f"times: must be strictly increasing, got {tuple(t)}")
        object.__setattr__(self, "times", tuple(float(x) for x in t))

    @classmethod
    def uniform(cls, steps: int, start: float = 0.0, stop: float = 1.0) -> "Grid":
        if not (isinstance(steps, (int, np.integer)) and steps >= 1):
            raise ValueError(f"steps: expected a positive integer, got {steps!r}")
        return cls(np.linspace(start, stop, steps + 1))

    @property
    def steps(self) -> int:
        return len(self.times) - 1

    @property
    def betas(self) -> tuple[float, ...]:
        r""":math:`\beta_j = (t_{j+1} - t_j)/(1 - t_j)`, reveal probability of step j."""
        t = self.times
        return tuple((t[j + 1] - t[j]) / (1.0 - t[j]) for j in range(self.steps))

    def to_list(self) -> list[float]:
        return list(self.times)

    def to_json(self) -> str:
        return json.dumps({"times": self.to_list()})

    def __repr__(self) -> str:
        return f"Grid({self.times})"
