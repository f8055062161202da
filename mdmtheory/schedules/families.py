r"""Families of plans (docs/theory.md §4): :meth:`~mdmtheory.schedules.Schedule.constant`,
:func:`linear_schedule`, :func:`cosine_schedule` (MaskGIT) and the general
:func:`masking_schedule`, :func:`loglinear_grid` (MDLM), :func:`geometric_grid` (W26 Geo(ρ))
and :func:`geometric_schedule`, :func:`dilated_plan` (DUS), :func:`semi_autoregressive_plan`
(LLaDA). The plan records are in :mod:`mdmtheory.schedules.plans`; a schedule chosen from a
profile (LZ25's square-root rule, the optimum) is in :mod:`mdmtheory.optimal`.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .._validate import float_array as _float_array, int_arg as _int_arg, LIMITS as _LIMITS, real_arg as _real_arg
from .odds import psi_raw, psi_inverse_raw
from .plans import BlockPlan, Grid, grid_to_schedule, round_cumulative, Schedule

__all__ = [
    "masking_schedule",
    "linear_schedule",
    "cosine_schedule",
    "loglinear_grid",
    "geometric_grid",
    "geometric_schedule",
    "dilated_plan",
    "semi_autoregressive_plan",
]


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
    span = math.log(psi_raw(stop)) - math.log(psi_raw(start))  # a ratio overflows for a subnormal start
    if steps is not None:
        steps = _int_arg(steps, "steps", 1)
        lam = math.log(psi_raw(start)) + span * np.arange(steps + 1) / steps
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
        lam = math.log(psi_raw(start)) + np.minimum(step * np.arange(n + 1), span)
    t = psi_inverse_raw(np.exp(lam))
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
