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

import json
import math
import numbers
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ._validate import LIMITS as _LIMITS
from ._validate import float_array as _float_array
from ._validate import _short
from ._validate import int_arg as _int_arg
from ._validate import real_arg as _real_arg

__all__ = [
    "Schedule",
    "Grid",
    "BlockPlan",
    "check_schedule",
    "round_cumulative",
    "masking_schedule",
    "linear_schedule",
    "cosine_schedule",
    "loglinear_grid",
    "geometric_grid",
    "geometric_schedule",
    "sqrt_rule_schedule",
    "dilated_plan",
    "semi_autoregressive_plan",
    "schedule_to_grid",
    "grid_to_schedule",
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
class Schedule:
    """Step sizes of the fixed-cardinality sampler, an immutable record.

    >>> Schedule((2, 1, 1)).starts
    (0, 2, 3)
    """

    sizes: tuple[int, ...]

    def __init__(self, sizes):
        if isinstance(sizes, Schedule):
            sizes = sizes.sizes
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
    if not isinstance(schedule, Schedule):
        schedule = Schedule(schedule)
    if schedule.d != d:
        raise ValueError(f"{name}: schedule sizes sum to {schedule.d}, expected d={d}")
    return schedule


@dataclass(frozen=True, init=False)
class Grid:
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
class BlockPlan:
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
        try:
            blocks = [tuple(int(j) for j in b) for b in blocks]
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


# -- practical families ---------------------------------------------------------------------
def masking_schedule(d: int, steps: int, gamma: Callable[[np.ndarray], np.ndarray]) -> Schedule:
    r"""Schedule from a MaskGIT masking function :math:`\gamma: [0, 1] \to [0, 1]`.

    The number of masked tokens after step t is :math:`m_t = \lfloor d\,\gamma(t/T) \rfloor`
    (:math:`\gamma(0) = 1`, :math:`\gamma(1) = 0`, non-increasing), i.e. revealed-count
    targets :math:`x_t = d - m_t`, made into a composition by the rule of
    :func:`round_cumulative` (here the targets are integers, so only the push-forward acts:
    where :math:`\gamma` is too flat for a token per step, steps of one token are
    inserted). Values within 1e-9 of an integer are taken as that integer before the
    floor (so :math:`d\cos(\pi/3) = d/2` exactly). Source: Chang et al. (2022), MaskGIT, §3.2.
    """
    d = _int_arg(d, "d", 1)
    steps = _int_arg(steps, "steps", 1, d, f" (a schedule of d={d} tokens has at most d steps)")
    r = np.arange(steps + 1) / steps
    if not callable(gamma):
        raise ValueError(f"gamma: expected a callable mapping ratios in [0, 1] to [0, 1], got {type(gamma).__name__}")
    g = _float_array(gamma(r), "gamma", what="(steps+1,), the masked fraction at each ratio")
    if g.shape != r.shape or not np.all(np.isfinite(g)):
        raise ValueError("gamma: must map an array of ratios to finite values of the same shape")
    if abs(g[0] - 1) > 1e-12 or abs(g[-1]) > 1e-12 or np.any(np.diff(g) > 1e-12):
        raise ValueError("gamma: must be non-increasing with gamma(0) = 1 and gamma(1) = 0")
    masked = np.floor(d * g + 1e-9)
    return round_cumulative(d - masked, d)


def cosine_schedule(d: int, steps: int) -> Schedule:
    r"""MaskGIT's cosine schedule: :math:`\lfloor d\cos(\tfrac{\pi}{2}\,t/T)\rfloor` tokens
    stay masked after step t (see :func:`masking_schedule` for the rounding: early steps,
    where the cosine is flat, reveal at least one token each)."""
    return masking_schedule(d, steps, lambda r: np.where(r >= 1, 0.0, np.cos(0.5 * np.pi * r)))


def linear_schedule(d: int, steps: int) -> Schedule:
    r"""Step sizes growing linearly, :math:`k_t \propto t`: cumulative targets
    :math:`x_t = d\,t(t+1)/(T(T+1))`, rounded by :func:`round_cumulative`.

    (A *linear masking function* :math:`\gamma(r) = 1 - r` is the constant schedule,
    :meth:`Schedule.constant`; the linear MDLM noise schedule is :func:`loglinear_grid`.)
    """
    d = _int_arg(d, "d", 1)
    steps = _int_arg(steps, "steps", 1, d, f" (a schedule of d={d} tokens has at most d steps)")
    t = np.arange(steps + 1, dtype=np.float64)
    return round_cumulative(d * t * (t + 1) / (steps * (steps + 1)), d)


def loglinear_grid(steps: int, eps: float = 1e-3) -> Grid:
    r"""MDLM's log-linear noise schedule as a reveal-time grid.

    MDLM's total noise :math:`\sigma(s) = -\log(1 - (1-\varepsilon)s)` keeps each token
    unmasked with probability :math:`\alpha_s = 1 - (1-\varepsilon)s` at diffusion time
    s; sampling with N equal time steps from s = 1 to 0 gives reveal times
    :math:`t_j = \varepsilon + (1-\varepsilon)\,j/N`, j = 0..N. With :math:`\varepsilon > 0`
    the :math:`\varepsilon` fraction present at s = 1 is the grid's exact initialization;
    ``eps = 0`` is the uniform grid on [0, 1]. Source: Sahoo et al. (2024), MDLM, §3.
    """
    steps = _int_arg(steps, "steps", 1)
    eps = _real_arg(eps, "eps")
    if not 0 <= eps < 1:
        raise ValueError(f"eps: expected 0 <= eps < 1, got {eps}")
    t = eps + (1 - eps) * (np.arange(steps + 1) / steps)
    t[0], t[-1] = eps, 1.0  # t_N = 1 exactly (else 1 +- 1 ulp: an error or a spurious completion)
    return Grid(t)


def _psi(t):
    return t / (1.0 - t)


def _psi_inv(y):
    return y / (1.0 + y)


def geometric_grid(start: float, stop: float, *, steps: int | None = None, rho: float | None = None) -> Grid:
    r"""W26's geometric grid Geo(ρ) on :math:`[t_0, T]` = ``[start, stop]`` (Corollary 1).

    .. math::

        \psi(t_{j+1}) = \min\{(1+\rho)\,\psi(t_j),\ \psi(T)\}, \qquad \psi(t) = t/(1-t),

    i.e. equal steps in log reveal odds. Give exactly one of ``steps`` (N; then
    :math:`\rho = \exp\{\log(\psi(T)/\psi(t_0))/N\} - 1` and the grid has exactly N steps)
    or ``rho`` (then :math:`N = \lceil \log(\psi(T)/\psi(t_0))/\log(1+\rho) \rceil`, the
    last step possibly shorter; a last step shorter than 1e-12 in log odds is merged).
    Needs :math:`0 < t_0 < T < 1` (ψ(0) = 0, ψ(1) = ∞); W26's canonical interval is
    ``(1/d, 1 - 1/d)``. Positions revealed before ``start`` / after ``stop`` are drawn
    exactly (the grid's initialization and completion).
    """
    start, stop = _real_arg(start, "start"), _real_arg(stop, "stop")
    if not 0 < start < stop < 1:
        raise ValueError(
            f"start, stop: need 0 < start < stop < 1 (psi(0) = 0 and psi(1) = inf), got {start}, {stop}; "
            "e.g. the canonical interval (1/d, 1 - 1/d)"
        )
    if (steps is None) == (rho is None):
        raise ValueError("steps, rho: give exactly one of them")
    span = math.log(_psi(stop) / _psi(start))
    if steps is not None:
        steps = _int_arg(steps, "steps", 1)
        lam = math.log(_psi(start)) + span * np.arange(steps + 1) / steps
    else:
        rho = _real_arg(rho, "rho")
        if rho <= 0:
            raise ValueError(f"rho: expected rho > 0, got {rho}")
        step = math.log1p(rho)
        n = max(1, math.ceil(min(span / step - 1e-12, 2.0**62)))
        if n > _LIMITS["steps"]:
            raise ValueError(
                f"rho: {rho} needs {n} steps on [{start}, {stop}], above the documented limit "
                f"steps <= {_LIMITS['steps']}; use a larger rho"
            )
        lam = math.log(_psi(start)) + np.minimum(step * np.arange(n + 1), span)
    t = _psi_inv(np.exp(lam))
    t[0], t[-1] = start, stop
    return Grid(t)


def geometric_schedule(d: int, steps: int) -> Schedule:
    r"""Card analogue of Geo(ρ): one exact token, a geometric grid, one exact token.

    The grid :func:`geometric_grid` on the canonical interval :math:`[1/d, 1 - 1/d]` with
    N = ``steps`` − 2 steps, converted by :func:`grid_to_schedule`: its exact
    initialization (:math:`d t_0 = 1` token) and completion (1 token) become single-token
    steps, and the revealed counts follow :math:`d\,t_j` (ψ of the revealed fraction grows
    geometrically: steps grow like s early and shrink like d − s late). Needs
    3 <= steps <= d.
    """
    d = _int_arg(d, "d", 3, None, " (the geometric card schedule needs d >= 3)")
    steps = _int_arg(steps, "steps", 3, d, " (1 + N + 1 steps, N >= 1, at most d)")
    return grid_to_schedule(geometric_grid(1.0 / d, 1.0 - 1.0 / d, steps=steps - 2), d)


def _profile_values(profile) -> np.ndarray:
    from .joint import Joint
    from .profile import Profile, information_profile

    if isinstance(profile, Joint):
        profile = information_profile(profile)
    if not isinstance(profile, Profile):
        profile = Profile(profile)
    return profile.values


def sqrt_rule_schedule(profile, steps: int, *, tol: float = 1e-12) -> Schedule:
    r"""The square-root rule (LZ25): step size :math:`k(s) \propto (-\varphi'(s))^{-1/2}`.

    Continuum: steps are spent at rate :math:`\sqrt{-\varphi'(s)}` per token, so the
    cumulative count after step t solves :math:`W(s_t) = (t/T)\,W(d)` with
    :math:`W(s) = \int_0^s \sqrt{-\varphi'}`. Discretized: :math:`-\varphi'` on
    :math:`[m, m+1]` is the decrement :math:`\varphi_m - \varphi_{m+1}` (m <= d − 2; the
    last token reuses the last decrement), W is piecewise linear, the level crossings are
    rounded by :func:`round_cumulative` (flat stretches of φ are crossed at their left
    end). Continuum error ≈ :math:`(\int\sqrt{-\varphi'})^2/(2T)` (docs/design.md §2).

    ``profile``: a Joint, a Profile or a vector; it must be non-increasing: increments up
    to ``tol`` × max|φ| (rounding) count as 0, larger ones raise (smooth or fit a
    monotone profile first). A constant profile raises: every schedule then has zero path
    KL. Source: Lavenant & Zanella (2025), arXiv 2510.25544, square-root
    information-profile rule.
    """
    tol = _real_arg(tol, "tol")
    if tol < 0:
        raise ValueError(f"tol: expected a non-negative tolerance, got {tol}")
    phi = _profile_values(profile)
    d = phi.shape[0]
    steps = _int_arg(steps, "steps", 1, d, f" (a schedule of d={d} tokens has at most d steps)")
    if d == 1:
        return Schedule((1,))
    dec = phi[:-1] - phi[1:]
    scale = max(1.0, float(np.abs(phi).max()))
    if np.any(dec < -tol * scale):
        m = int(np.argmin(dec))
        raise ValueError(
            f"profile: increases by {-dec[m]:.3g} at {m}->{m + 1}; the square-root rule needs a "
            "non-increasing profile (fit a monotone profile first, e.g. isotonic regression)"
        )
    w = np.sqrt(np.maximum(dec, 0.0))
    w = np.append(w, w[-1])
    W = np.concatenate([[0.0], np.cumsum(w)])
    if W[-1] <= 0:
        raise ValueError("profile: is constant, so every schedule has zero path KL; use Schedule.constant")
    levels = W[-1] * np.arange(steps + 1) / steps
    idx = np.clip(np.searchsorted(W, levels, side="left"), 1, d)
    lo, hi = W[idx - 1], W[idx]
    frac = np.where(hi > lo, (levels - lo) / np.where(hi > lo, hi - lo, 1.0), 1.0)
    x = (idx - 1) + np.clip(frac, 0.0, 1.0)
    x[0], x[-1] = 0.0, float(d)
    return round_cumulative(x, d)


def _ceil_log(B: int, a: int) -> int:
    """Smallest R >= 1 with a**R >= B (exact integer arithmetic)."""
    R, p = 1, a
    while p < B:
        R, p = R + 1, p * a
    return R


def dilated_plan(d: int, block: int, base: int = 2) -> BlockPlan:
    r"""Dilated unmasking (DUS): blocks of ``block`` positions, left to right; within a block
    of size B, :math:`R = \lceil \log_a B \rceil` rounds (at least one) on a stride that
    shrinks by the factor a = ``base`` each round.

    Round r = 1..R of a block reveals, all at once, the offsets that are multiples of
    :math:`a^{R-r}` and not of :math:`a^{R-r+1}` (round 1: all multiples of
    :math:`a^{R-1}`). With a = 2 and B = 8: offsets {0, 4}, {2, 6}, {1, 3, 5, 7}. Every
    round is non-empty since :math:`a^{R-1} < B`. Each round is one step whose positions
    are fixed by the plan (a block of the :class:`BlockPlan` with a single step). The last
    block is shorter when ``block`` does not divide d. Source: docs/theory.md §4 (DUS).
    """
    d = _int_arg(d, "d", 1)
    block = _int_arg(block, "block", 1, d)
    base = _int_arg(base, "base", 2)
    blocks, sizes = [], []
    for lo in range(0, d, block):
        B = min(block, d - lo)
        if B == 1:
            blocks.append((lo,))
            sizes.append((1,))
            continue
        R = _ceil_log(B, base)
        for r in range(1, R + 1):
            stride = base ** (R - r)
            offs = [o for o in range(0, B, stride) if r == 1 or o % (stride * base) != 0]
            blocks.append(tuple(lo + o for o in offs))
            sizes.append((len(offs),))
    return BlockPlan(blocks, sizes)


def semi_autoregressive_plan(d: int, block_length: int, steps_per_block: int) -> BlockPlan:
    r"""LLaDA-style semi-autoregressive blocks: positions split left to right into blocks of
    ``block_length`` (the last one shorter when it does not divide d), each revealed in
    ``steps_per_block`` steps of as-equal-as-possible sizes (:meth:`Schedule.constant`);
    which positions of the current block each step reveals is the planner's choice. A
    shorter last block with fewer positions than ``steps_per_block`` gets one step per
    position. Source: Nie et al. (2025), LLaDA, semi-autoregressive remasking.
    """
    d = _int_arg(d, "d", 1)
    block_length = _int_arg(block_length, "block_length", 1, d)
    steps_per_block = _int_arg(
        steps_per_block, "steps_per_block", 1, block_length, " (at most one step per position of a block)"
    )
    blocks, sizes = [], []
    for lo in range(0, d, block_length):
        B = min(block_length, d - lo)
        blocks.append(tuple(range(lo, lo + B)))
        sizes.append(Schedule.constant(B, min(steps_per_block, B)).sizes)
    return BlockPlan(blocks, sizes)


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
