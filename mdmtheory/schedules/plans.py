r"""Schedules of the fixed-cardinality sampler and reveal-time grids of the Bernoulli sampler.

* :class:`Schedule` — sizes :math:`k = (k_1, \dots, k_T)`, :math:`k_t \ge 1`,
  :math:`\sum_t k_t = d`; :math:`s_t = k_1 + \dots + k_{t-1}` tokens are revealed before
  step t (docs/design.md §2).
* :class:`Grid` — reveal times :math:`0 \le t_0 < \dots < t_N \le 1`; step j reveals each
  still-masked position with probability
  :math:`\beta_j = (t_{j+1} - t_j)/(1 - t_j)`; positions with :math:`U_i \le t_0` are drawn
  exactly at the start and those with :math:`U_i > t_N` are completed exactly
  (docs/design.md §3, docs/theory.md §3).
* :class:`BlockPlan` — a planner order as well as sizes: blocks of positions processed in
  order, each with its own step sizes (LLaDA semi-autoregressive blocks, dilated DUS
  rounds).

Families (docs/theory.md §4): :meth:`Schedule.constant`, :func:`linear_schedule`,
:func:`cosine_schedule` (MaskGIT) and the general :func:`masking_schedule`,
:func:`loglinear_grid` (MDLM), :func:`geometric_grid` (W26 Geo(ρ)) and
:func:`geometric_schedule`, :func:`sqrt_rule_schedule` (LZ25), :func:`dilated_plan` (DUS),
:func:`semi_autoregressive_plan` (LLaDA). Conversions: :func:`schedule_to_grid`,
:func:`grid_to_schedule`. Every record exports as a plain list or JSON (``to_list``,
``to_json``) and reads back with ``from_json``.

Rounding (used by every card family that starts from real targets): real cumulative
targets :math:`0 = x_0 \le x_1 \le \dots \le x_T = d` become integers by
:func:`round_cumulative` — nearest integer (halves up), then pushed forward so that every
step reveals at least one token and enough tokens remain for the steps left,

.. math::

    s_t = \min\bigl(\max(\lfloor x_t + \tfrac12 \rfloor,\ s_{t-1} + 1),\ d - (T - t)\bigr),

which leaves targets that are already valid integers unchanged.
"""

from __future__ import annotations

import itertools
import json
import math
import numbers
from dataclasses import dataclass

import numpy as np

from .._estimate import Record
from .._validate import (
    float_array as _float_array,
    int_arg as _int_arg,
    LIMITS as _LIMITS,
    name_arg as _name_arg,
    real_arg as _real_arg,
    sample_args as _sample_args,
    _short,
    size_arg as _size_arg,
)

__all__ = [
    "Schedule",
    "Grid",
    "BlockPlan",
    "check_schedule",
    "round_cumulative",
    "schedule_to_grid",
    "grid_to_schedule",
    "RandomSchedule",
    "compositions",
    "MAX_COMPOSITIONS",
]


def _loads(text, name: str, key: str):
    if not isinstance(text, (str, bytes, bytearray)):
        raise ValueError(f"{name}: expected a JSON string, got {type(text).__name__}")
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{name}: not valid JSON ({exc})") from None
    except RecursionError:
        raise ValueError(f"{name}: JSON nested too deeply") from None
    if isinstance(obj, dict):
        if key not in obj:
            raise ValueError(f"{name}: expected a JSON object with key {key!r}, got keys {sorted(obj)}")
        return obj
    return {key: obj}


@dataclass(frozen=True, init=False)
class Schedule(Record):
    """Step sizes of the fixed-cardinality sampler, an immutable record.

    >>> Schedule((2, 1, 1)).starts
    (0, 2, 3)
    """

    sizes: tuple[int, ...]

    def __init__(self, sizes):
        if isinstance(sizes, Schedule):
            sizes = sizes.sizes
        if isinstance(sizes, (str, bytes, bytearray, dict)):
            raise ValueError(f"sizes: expected a sequence of positive integers, got {_short(sizes)}")
        try:
            raw = list(sizes)
        except TypeError:
            raise ValueError(f"sizes: expected a sequence of positive integers, got {sizes!r}") from None
        if not raw:
            raise ValueError("sizes: a schedule needs at least one step")
        if len(raw) > _LIMITS["steps"]:
            raise ValueError(f"sizes: {len(raw)} steps exceed the documented limit steps <= {_LIMITS['steps']}")
        out = []
        for k in raw:
            if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Real):
                raise ValueError(f"sizes: step sizes must be integers, got {_short(k)}")
            if not isinstance(k, numbers.Integral):
                try:
                    integral = float(k).is_integer()
                except (OverflowError, ValueError):
                    integral = False
                if not integral:
                    raise ValueError(f"sizes: step sizes must be integers, got {_short(k)}")
            if int(k) < 1:
                raise ValueError(
                    f"sizes: every step must reveal at least one token, got {int(k)} in {_short(tuple(raw))}; "
                    "drop empty steps"
                )
            out.append(int(k))
        if sum(out) > _LIMITS["d"]:
            raise ValueError(f"sizes: sum to d = {_short(sum(out))}, above the documented limit d <= {_LIMITS['d']}")
        object.__setattr__(self, "sizes", tuple(out))

    @classmethod
    def constant(cls, d: int, steps: int) -> "Schedule":
        """As equal as possible: sizes differ by at most one, the larger ones last."""
        d = _int_arg(d, "d", 1)
        steps = _int_arg(steps, "steps", 1, d, f" (a schedule of d={d} tokens has at most d steps)")
        cuts = [(t * d) // steps for t in range(steps + 1)]
        return cls(np.diff(cuts))

    @classmethod
    def from_cumulative(cls, counts) -> "Schedule":
        r"""From cumulative counts :math:`0 = s_1 < s_2 < \dots < s_{T+1} = d` (integers)."""
        c = _float_array(counts, "counts", what="(T+1,)")
        if c.ndim != 1 or c.shape[0] < 2 or c[0] != 0:
            raise ValueError(f"counts: expected 0 = s_1 < ... < s_(T+1) = d, got {counts!r}")
        return cls(np.diff(c))

    @classmethod
    def from_json(cls, text) -> "Schedule":
        """Inverse of :meth:`to_json`; also reads a bare JSON list of sizes."""
        return cls(_loads(text, "text", "sizes")["sizes"])

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
    def cumulative(self) -> tuple[int, ...]:
        r""":math:`(s_1, \dots, s_T, d) = (0, k_1, k_1 + k_2, \dots, d)`."""
        return (0,) + tuple(int(s) for s in np.cumsum(self.sizes))

    @property
    def max_size(self) -> int:
        return max(self.sizes)

    def to_list(self) -> list[int]:
        return list(self.sizes)

    def to_json(self) -> str:
        return json.dumps({"sizes": self.to_list()})

    def __repr__(self) -> str:
        return f"Schedule({self.sizes})"


def check_schedule(schedule, d: int, *, name: str = "schedule") -> Schedule:
    """Coerce ``schedule`` to a :class:`Schedule` and check that it sums to ``d``.

    ``name`` is the caller's argument name, used in the error message.
    """
    d = _int_arg(d, "d", 1)
    name = _name_arg(name)
    if not isinstance(schedule, Schedule):
        try:
            schedule = Schedule(schedule)
        except ValueError as exc:  # the message names the caller's argument, then Schedule's field
            raise ValueError(f"{name}: {exc}") from None
    if schedule.d != d:
        raise ValueError(f"{name}: schedule sizes sum to {schedule.d}, expected d={d}")
    return schedule


@dataclass(frozen=True, init=False)
class Grid(Record):
    r"""Reveal-time grid :math:`0 \le t_0 < t_1 < \dots < t_N \le 1` (N >= 1 steps)."""

    times: tuple[float, ...]

    def __init__(self, times):
        if isinstance(times, Grid):
            times = times.times
        t = _float_array(times, "times", what="(N+1,)")
        if t.ndim != 1 or t.shape[0] < 2:
            raise ValueError(f"times: need at least two times t_0 < t_1, got {_short(times)}")
        if t.shape[0] - 1 > _LIMITS["steps"]:
            raise ValueError(f"times: {t.shape[0] - 1} steps exceed the documented limit steps <= {_LIMITS['steps']}")
        if t[0] < 0 or t[-1] > 1:
            raise ValueError(f"times: must lie in [0, 1], got [{t[0]}, {t[-1]}]")
        if np.any(np.diff(t) <= 0):
            raise ValueError(f"times: must be strictly increasing, got {tuple(t)}")
        object.__setattr__(self, "times", tuple(float(x) for x in t))

    @classmethod
    def uniform(cls, steps: int, start: float = 0.0, stop: float = 1.0) -> "Grid":
        steps = _int_arg(steps, "steps", 1)
        start, stop = _real_arg(start, "start"), _real_arg(stop, "stop")
        if not 0.0 <= start < stop <= 1.0:
            raise ValueError(f"start, stop: need 0 <= start < stop <= 1, got {start}, {stop}")
        t = np.linspace(start, stop, steps + 1)
        t[0], t[-1] = start, stop  # the end points exactly
        return cls(t)

    @classmethod
    def from_json(cls, text) -> "Grid":
        """Inverse of :meth:`to_json`; also reads a bare JSON list of times."""
        return cls(_loads(text, "text", "times")["times"])

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


# -- block plans: order as well as sizes ---------------------------------------------------
@dataclass(frozen=True, init=False)
class BlockPlan(Record):
    r"""Blocks of positions revealed in order, each with its own step sizes.

    ``blocks[b]`` is a set of positions (a tuple, increasing) and ``sizes[b]`` a
    composition of ``len(blocks[b])``: the steps of block b reveal ``sizes[b][0]``,
    ``sizes[b][1]``, … of its positions (which ones is the planner's choice, e.g. random
    or by confidence) before block b + 1 starts. The blocks partition :math:`[d]`. When a
    block has a single step its positions are fixed by the plan (DUS rounds).

    The flattened step sizes are :attr:`schedule`; the candidate positions of each step are
    :attr:`step_blocks` (and :attr:`step_masks` as bitmasks, bit j = position j).
    """

    blocks: tuple[tuple[int, ...], ...]
    sizes: tuple[tuple[int, ...], ...]

    def __init__(self, blocks, sizes):
        if isinstance(blocks, (str, bytes, dict)) or isinstance(sizes, (str, bytes, dict)):
            raise ValueError("blocks, sizes: expected sequences of position tuples and of size tuples")
        try:
            blocks = [tuple(_int_arg(j, "blocks", 0, _LIMITS["d"] - 1) for j in b) for b in blocks]
            sizes = list(sizes)
        except TypeError:
            raise ValueError("blocks, sizes: expected sequences of position tuples and of size tuples") from None
        if not blocks:
            raise ValueError("blocks: a plan needs at least one block")
        if len(sizes) != len(blocks):
            raise ValueError(f"sizes: expected one composition per block ({len(blocks)}), got {len(sizes)}")
        for b, blk in enumerate(blocks):
            if not blk:
                raise ValueError(f"blocks: block {b} is empty; drop empty blocks")
        sizes = [Schedule(s).sizes for s in sizes]
        seen: list[int] = []
        for b, (blk, sz) in enumerate(zip(blocks, sizes)):
            if list(blk) != sorted(set(blk)):
                raise ValueError(f"blocks: block {b} must list distinct positions in increasing order, got {blk}")
            if sum(sz) != len(blk):
                raise ValueError(f"sizes: block {b} has {len(blk)} positions but its sizes sum to {sum(sz)}")
            seen.extend(blk)
        d = len(seen)
        if sorted(seen) != list(range(d)):
            raise ValueError(f"blocks: must partition positions 0..{d - 1} (each exactly once)")
        object.__setattr__(self, "blocks", tuple(tuple(sorted(b)) for b in blocks))
        object.__setattr__(self, "sizes", tuple(sizes))

    @property
    def d(self) -> int:
        return sum(len(b) for b in self.blocks)

    @property
    def steps(self) -> int:
        return sum(len(s) for s in self.sizes)

    @property
    def schedule(self) -> Schedule:
        """The flattened step sizes."""
        return Schedule([k for s in self.sizes for k in s])

    @property
    def step_blocks(self) -> tuple[tuple[int, ...], ...]:
        """Candidate positions of each step (its block)."""
        return tuple(b for b, s in zip(self.blocks, self.sizes) for _ in s)

    @property
    def step_masks(self) -> tuple[int, ...]:
        """:attr:`step_blocks` as bitmasks (bit j = position j)."""
        return tuple(sum(1 << j for j in b) for b in self.step_blocks)

    def to_list(self) -> list[dict]:
        return [{"positions": list(b), "sizes": list(s)} for b, s in zip(self.blocks, self.sizes)]

    def to_json(self) -> str:
        return json.dumps({"blocks": self.to_list()})

    @classmethod
    def from_json(cls, text) -> "BlockPlan":
        """Inverse of :meth:`to_json`."""
        raw = _loads(text, "text", "blocks")["blocks"]
        try:
            return cls([b["positions"] for b in raw], [b["sizes"] for b in raw])
        except (TypeError, KeyError):
            raise ValueError("text: each block needs 'positions' and 'sizes'") from None

    def __repr__(self) -> str:
        return f"BlockPlan(d={self.d}, blocks={len(self.blocks)}, steps={self.steps})"


# -- rounding -------------------------------------------------------------------------------
def round_cumulative(targets, d: int) -> Schedule:
    r"""The composition of d nearest to real cumulative targets, every step >= 1 token.

    ``targets`` are :math:`x_0, \dots, x_T` (non-decreasing, :math:`x_0 = 0`,
    :math:`x_T = d`, T <= d). Each is rounded to the nearest integer (halves up) and then
    pushed forward, :math:`s_t = \min(\max(s_t, s_{t-1} + 1), d - (T - t))`, so that each
    step reveals at least one token and at least one token is left for every remaining
    step. Targets that are already valid (strictly increasing integers) are kept exactly;
    where the targets are too flat the steps become single tokens until the targets
    catch up.
    """
    d = _int_arg(d, "d", 1)
    x = _float_array(targets, "targets", what="(T+1,)", finite=False)
    if x.ndim != 1 or x.shape[0] < 2 or not np.all(np.isfinite(x)):
        raise ValueError(f"targets: expected a finite vector x_0..x_T with T >= 1, got {targets!r}")
    T = x.shape[0] - 1
    if T > d:
        raise ValueError(f"targets: {T} steps cannot each reveal a token of d={d}; use at most d steps")
    if abs(x[0]) > 1e-9 * d or abs(x[-1] - d) > 1e-9 * d:
        raise ValueError(f"targets: must start at 0 and end at d={d}, got {x[0]} and {x[-1]}")
    if np.any(np.diff(x) < -1e-9 * d):
        raise ValueError("targets: must be non-decreasing")
    s = np.floor(x + 0.5).astype(np.int64)
    s[0], s[-1] = 0, d
    for t in range(1, T + 1):
        s[t] = min(max(s[t], s[t - 1] + 1), d - (T - t))
    return Schedule(np.diff(s))


# -- conversions ----------------------------------------------------------------------------
def schedule_to_grid(schedule) -> Grid:
    r"""Reveal times :math:`t_t = s_t/d` (cumulative fractions, :math:`t_0 = 0`, :math:`t_T = 1`).

    The Bernoulli sampler on this grid reveals :math:`k_t` tokens in expectation at step t
    (a random number, possibly 0). Inverse: :func:`grid_to_schedule` returns the schedule
    exactly.
    """
    sched = schedule if isinstance(schedule, Schedule) else Schedule(schedule)
    c = np.asarray(sched.cumulative, dtype=np.float64)
    return Grid(c / sched.d)


def grid_to_schedule(grid, d: int) -> Schedule:
    r"""The card schedule whose step sizes follow a grid's expected counts.

    The grid's exact initialization (:math:`m_0 = \lfloor d t_0 + \tfrac12 \rfloor` tokens)
    becomes :math:`m_0` single-token steps (one token at a time is exact) and its exact
    completion (:math:`m_N = \lfloor d(1 - t_N) + \tfrac12 \rfloor` tokens) as many final
    single-token steps; grid step j becomes one step with target cumulative count
    :math:`d t_j` (the last one :math:`d - m_N`). Targets are rounded by
    :func:`round_cumulative`. The result has :math:`m_0 + N + m_N` steps, which must be
    <= d. Exact inverse of :func:`schedule_to_grid`; a grid whose times are multiples of
    1/d with :math:`t_0 = 0`, :math:`t_N = 1` round-trips exactly.
    """
    if not isinstance(grid, Grid):
        grid = Grid(grid)
    d = _int_arg(d, "d", 1)
    t = np.asarray(grid.times)
    m0 = int(math.floor(d * t[0] + 0.5))
    mN = int(math.floor(d * (1 - t[-1]) + 0.5))
    T = m0 + grid.steps + mN
    if T > d:
        raise ValueError(
            f"grid: {grid.steps} steps plus {m0} + {mN} exact boundary tokens need {T} > d={d} card steps; "
            "use a coarser grid"
        )
    # rounding the boundary counts can overtake an interior target: keep the targets ordered
    middle = np.clip(d * t[1:-1], m0, d - mN)
    targets = np.concatenate([np.arange(m0 + 1), middle, d - mN + np.arange(mN + 1)])
    return round_cumulative(targets, d)


#: Largest support of a RandomSchedule (and number of compositions searched).
MAX_COMPOSITIONS = 1 << 16


def compositions(d: int, steps: int | None = None):
    """Every composition of d (ordered positive parts), or those with ``steps`` parts; at most
    :data:`MAX_COMPOSITIONS`, counted (2**(d−1), or C(d−1, steps−1)) before any is built."""
    d = _size_arg(d, "d")
    if steps is not None:
        steps = _size_arg(steps, "steps", 1, d)
    if steps is None and d - 1 > MAX_COMPOSITIONS.bit_length():
        raise ValueError(f"d: 2**{d - 1} compositions exceed {MAX_COMPOSITIONS}; give the support of the law "
                         "explicitly")
    n = 2 ** (d - 1) if steps is None else math.comb(d - 1, steps - 1)
    if n > MAX_COMPOSITIONS:
        raise ValueError(f"d: {n} compositions exceed {MAX_COMPOSITIONS}; give the support of the law explicitly")
    if steps is None:
        masks = range(2 ** (d - 1))
    else:  # only the cut sets of size steps - 1, in the same (increasing mask) order
        masks = sorted(sum(1 << i for i in cuts) for cuts in itertools.combinations(range(d - 1), steps - 1))
    out = []
    for cuts in masks:
        sizes, run = [], 1
        for i in range(d - 1):
            if cuts >> i & 1:
                sizes.append(run)
                run = 1
            else:
                run += 1
        sizes.append(run)
        out.append(tuple(sizes))
    return out


class RandomSchedule:
    """A law on compositions of d: ``RandomSchedule({(2, 2): 0.5, (1, 3): 0.5})`` or
    ``RandomSchedule(compositions, weights)``. Weights are probabilities (>= 0, summing to 1
    within 1e-12: never renormalized); zero weights are dropped."""

    def __init__(self, law, weights=None):
        if weights is None:
            if not isinstance(law, dict):
                raise ValueError("law: expected a dict {sizes: probability} or (compositions, weights)")
            items = list(law.items())
        else:
            if isinstance(law, (str, bytes, dict)) or not hasattr(law, "__len__") or len(law) > MAX_COMPOSITIONS:
                raise ValueError(f"law: expected a list of at most {MAX_COMPOSITIONS} compositions with weights, "
                                 f"got {_short(law)}")
            if isinstance(weights, (str, bytes, dict)) or not hasattr(weights, "__len__"):
                raise ValueError(f"weights: expected one probability per composition, got {_short(weights)}")
            comps, w = list(law), list(weights)
            if len(comps) != len(w):
                raise ValueError(f"weights: {len(w)} weights for {len(comps)} compositions")
            items = list(zip(comps, w))
        if not items:
            raise ValueError("law: empty; give at least one composition")
        if len(items) > MAX_COMPOSITIONS:
            raise ValueError(f"law: {len(items)} compositions exceed {MAX_COMPOSITIONS}")
        out: dict[tuple, float] = {}
        d = None
        for c, w in items:
            try:
                s = Schedule(c)
            except (ValueError, TypeError) as exc:
                raise ValueError(f"law: {c!r} is not a composition ({exc})") from None
            if d is None:
                d = s.d
            elif s.d != d:
                raise ValueError(f"law: compositions of different lengths ({d} and {s.d})")
            if isinstance(w, bool) or not isinstance(w, numbers.Real) or not (0 <= w <= 1):
                raise ValueError(f"weights: expected probabilities in [0, 1], got {w!r} for {c!r}")
            if s.sizes in out:
                raise ValueError(f"law: {s.sizes} appears twice")
            if w > 0:
                out[s.sizes] = float(w)
        total = sum(out.values())
        if abs(total - 1.0) > 1e-12:
            raise ValueError(f"weights: sum to {total!r}, expected 1 (they are never renormalized)")
        self._law = out
        self._d = d

    @property
    def d(self) -> int:
        return self._d

    @property
    def law(self) -> dict:
        """{sizes: probability}, zero weights dropped."""
        return dict(self._law)

    @property
    def expected_steps(self) -> float:
        """Expected forwards :math:`\\sum_c \\pi(c) |c|`."""
        return float(sum(w * len(c) for c, w in self._law.items()))

    @classmethod
    def deterministic(cls, schedule) -> "RandomSchedule":
        s = Schedule(schedule.sizes if isinstance(schedule, Schedule) else schedule)
        return cls({s.sizes: 1.0})

    def sample(self, n: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
        """n compositions drawn from the law (``n`` <= 2**24, ``rng`` a numpy Generator)."""
        n, rng = _sample_args(n, rng, 1)
        comps = list(self._law)
        idx = rng.choice(len(comps), size=n, p=np.array([self._law[c] for c in comps]))
        return [comps[i] for i in idx]

    def __repr__(self) -> str:
        return f"RandomSchedule({self._law!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, RandomSchedule) and other._law == self._law

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._law.items())))
