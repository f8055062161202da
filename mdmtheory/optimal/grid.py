r"""The best reveal-time grid of the Bernoulli sampler and block grids (docs/theory.md §3, §5)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from .._estimate import Record
from ..information.profile import Profile
from ..information.ugc import gain, gain_derivative
from ..schedules.plans import Grid
from .._moved import renamed_keywords
from .._validate import int_arg as _int_arg, LIMITS as _LIMITS, real_arg as _real_arg
from .card import _as_profile, MAX_BLOCK_RESOLUTION

__all__ = [
    "equal_mass_grid",
    "optimal_grid",
    "block_partition",
    "BlockPartition",
    "block_grid",
]


# -- Bernoulli grids: gain polynomial helpers ------------------------------------------------
def _gauss_nodes(prof: Profile) -> tuple[np.ndarray, np.ndarray]:
    n = prof.d // 2 + 2  # exact for polynomials of degree <= d + 3
    return np.polynomial.legendre.leggauss(n)


def _grid_defects(prof: Profile, t: np.ndarray) -> np.ndarray:
    r""":math:`\Gamma_{umask}(t_j, t_{j+1})` for every step, by Gauss–Legendre (exact for h)."""
    x, w = _gauss_nodes(prof)
    a, b = t[:-1], t[1:]
    u = a[:, None] + (b - a)[:, None] * (x[None, :] + 1) / 2
    hu = gain(prof, u)
    ha = gain(prof, a)
    return (b - a) / 2 * ((hu - ha[:, None]) @ w)


def _ugc_cumulative(prof: Profile, tau: np.ndarray) -> np.ndarray:
    r""":math:`H(\tau_0, \tau_i) = \sum_{k < i} \int_{\tau_k}^{\tau_{k+1}} t(1-t) h'(t)\,dt` (exact)."""
    x, w = _gauss_nodes(prof)
    a, b = tau[:-1], tau[1:]
    u = a[:, None] + (b - a)[:, None] * (x[None, :] + 1) / 2
    pieces = (b - a) / 2 * ((u * (1 - u) * gain_derivative(prof, u)) @ w)
    return np.concatenate([[0.0], np.cumsum(pieces)])


def _interval_args(prof: Profile, start, stop) -> tuple[float, float]:
    d = prof.d
    if start is None or stop is None:
        if d < 2:
            raise ValueError("start, stop: the canonical interval [1/d, 1-1/d] needs d >= 2; give start and stop")
        start = 1.0 / d if start is None else start
        stop = 1.0 - 1.0 / d if stop is None else stop
    start, stop = _real_arg(start, "start"), _real_arg(stop, "stop")
    if not 0 <= start < stop <= 1:
        raise ValueError(f"start, stop: need 0 <= start < stop <= 1, got {start}, {stop}")
    return start, stop


def _sqrt_mass(prof: Profile, start: float, stop: float, n: int = 4096) -> tuple[np.ndarray, np.ndarray]:
    """Fine grid on [start, stop] (Chebyshev-clustered at the ends) and cumulative ∫ sqrt(h')."""
    th = np.linspace(np.pi, 0.0, n + 1)
    u = start + (stop - start) * (np.cos(th) + 1) / 2
    u[0], u[-1] = start, stop
    x, w = np.polynomial.legendre.leggauss(8)
    a, b = u[:-1], u[1:]
    v = a[:, None] + (b - a)[:, None] * (x[None, :] + 1) / 2
    hp = gain_derivative(prof, v)
    pieces = (b - a) / 2 * (np.sqrt(np.maximum(hp, 0.0)) @ w)
    return u, np.concatenate([[0.0], np.cumsum(pieces)])


def equal_mass_grid(profile, steps: int, *, start: float | None = None, stop: float | None = None) -> Grid:
    r"""The grid with equal :math:`\sqrt{h'}` mass per step (W26 Theorem 3; docs/theory.md §3).

    .. math:: \int_{t_j}^{t_{j+1}} \sqrt{h'(t)}\,dt = \frac1N \int_{t_0}^{t_N} \sqrt{h'(t)}\,dt,

    equivalently equal :math:`\sqrt q` mass in log reveal odds; asymptotically optimal,
    with error :math:`P/(2N) + o(1/N)`, :math:`P = (\int_{t_0}^{t_N}\sqrt{h'})^2`. Default
    interval: the canonical :math:`[1/d, 1 - 1/d]`. The mass is integrated on a fine grid
    (4096 cells, 8-point Gauss each) and inverted by linear interpolation. Raises when
    :math:`h' \equiv 0` on the interval (independent positions: every grid has zero error).
    """
    prof = _as_profile(profile)
    steps = _int_arg(steps, "steps", 1)
    start, stop = _interval_args(prof, start, stop)
    u, m = _sqrt_mass(prof, start, stop)
    if not m[-1] > 0:
        raise ValueError("profile: h' vanishes on the interval, so every grid has zero error; use Grid.uniform")
    levels = m[-1] * np.arange(steps + 1) / steps
    # invert the (non-decreasing) mass; flat stretches are crossed at their left end
    i = np.clip(np.searchsorted(m, levels, side="left"), 1, m.shape[0] - 1)
    lo, hi = m[i - 1], m[i]
    frac = np.where(hi > lo, (levels - lo) / np.where(hi > lo, hi - lo, 1.0), 1.0)
    t = u[i - 1] + np.clip(frac, 0, 1) * (u[i] - u[i - 1])
    t[0], t[-1] = start, stop
    t = np.maximum.accumulate(t)
    if np.any(np.diff(t) <= 0):
        raise ValueError(f"steps: {steps} steps are too many to resolve on [{start}, {stop}]; use fewer")
    return Grid(t)


@renamed_keywords(maxiter="max_iter")
def optimal_grid(
    profile,
    steps: int,
    *,
    start: float | None = None,
    stop: float | None = None,
    init: Grid | None = None,
    gtol: float = 1e-13,
    max_iter: int = 20000,
) -> Grid:
    r"""The N-step Bernoulli grid on [``start``, ``stop``] of least path KL (W26).

    Minimizes the exact path KL :math:`J = \sum_j \Gamma_{umask}(t_j, t_{j+1})` over the
    interior times with :math:`t_0` = ``start`` and :math:`t_N` = ``stop`` fixed (exact
    initialization before, exact completion after: they add nothing). Default interval:
    the canonical :math:`[1/d, 1 - 1/d]`. Parametrization
    :math:`t_j = t_0 + (t_N - t_0)\sum_{i \le j}\mathrm{softmax}(z)_i`, which keeps the grid
    increasing; scipy's L-BFGS-B with the exact gradient

    .. math::

        \frac{\partial J}{\partial t_j} = h(t_j) - h(t_{j-1}) - (t_{j+1} - t_j)\,h'(t_j),

    started from :func:`equal_mass_grid` (or ``init``). J is not convex in general: the
    result is a local minimum near the asymptotically optimal start; for N = 1 there is
    nothing to optimize. Stationarity is the recurrence
    :math:`t_{j+1} = t_j + (h(t_j) - h(t_{j-1}))/h'(t_j)`.
    """
    prof = _as_profile(profile)
    steps = _int_arg(steps, "steps", 1)
    start, stop = _interval_args(prof, start, stop)
    if init is None:
        try:
            init = equal_mass_grid(prof, steps, start=start, stop=stop)
        except ValueError:
            init = Grid.uniform(steps, start, stop)
    max_iter = _int_arg(max_iter, "max_iter", 1, _LIMITS["maxiter"], " (the documented limit of optimizer iterations)")
    gtol = _real_arg(gtol, "gtol")
    if gtol < 0:
        raise ValueError(f"gtol: expected a tolerance >= 0, got {gtol}")
    if (
        not isinstance(init, Grid)
        or init.steps != steps
        or abs(init.times[0] - start) > 1e-15
        or abs(init.times[-1] - stop) > 1e-15
    ):
        raise ValueError(f"init: expected a Grid with {steps} steps from {start} to {stop}")
    if steps == 1:
        return Grid((start, stop))
    span = stop - start
    z0 = np.log(np.diff(np.asarray(init.times)) / span)
    x_n, w_n = _gauss_nodes(prof)
    J0 = float(np.sum(_grid_defects(prof, np.asarray(init.times))))
    scale = steps / J0 if J0 > 0 else 1.0  # objective of order N at the start

    def times(z):
        p = np.exp(z - z.max())
        p /= p.sum()
        t = start + span * np.concatenate([[0.0], np.cumsum(p)])
        t[-1] = stop
        return t, p

    def fun(z):
        t, p = times(z)
        a, b = t[:-1], t[1:]
        u = a[:, None] + (b - a)[:, None] * (x_n[None, :] + 1) / 2
        ht = gain(prof, t)
        J = float(np.sum((b - a) / 2 * ((gain(prof, u) - ht[:-1, None]) @ w_n)))
        hp = gain_derivative(prof, t)
        g = np.zeros(steps + 1)
        g[1:-1] = (ht[1:-1] - ht[:-2]) - (t[2:] - t[1:-1]) * hp[1:-1]
        # t_j = start + span * P_j, P_j = sum_{i<=j} p_i (j = 1..N-1): dJ/dp_i = span sum_{j>=i} g_j
        G = span * np.cumsum(g[1:][::-1])[::-1]
        grad = p * (G - np.dot(G, p))
        return J * scale, grad * scale

    res = optimize.minimize(
        fun, z0, jac=True, method="L-BFGS-B", options={"maxiter": max_iter, "gtol": gtol, "ftol": 1e-16}
    )
    t, _ = times(res.x)
    return Grid(t)


# -- W26 block-boundary DP (Proposition 1) --------------------------------------------------
@dataclass(frozen=True)
class BlockPartition(Record):
    r"""A partition of a reveal-time interval into blocks, with W26's partition complexity.

    ``edges``: block boundaries :math:`\tau_0 < \dots < \tau_K` (reveal times);
    ``lengths``: :math:`S_k` (λ-lengths, :math:`\lambda = \log\psi(\tau)`); ``ugc``:
    :math:`H_k = H(\tau_{k-1}, \tau_k)`; ``complexity``:
    :math:`C(\mathcal P) = (\sum_k \sqrt{S_k H_k})^2`.
    """

    edges: np.ndarray
    lengths: np.ndarray
    ugc: np.ndarray
    complexity: float

    @property
    def blocks(self) -> int:
        return int(self.lengths.shape[0])


def block_partition(
    profile,
    blocks: int,
    *,
    start: float | None = None,
    stop: float | None = None,
    resolution: int = 256,
) -> BlockPartition:
    r"""W26's block-boundary DP: the partition into ``blocks`` blocks of least C(𝒫).

    Boundaries are restricted to a fine grid uniform in log reveal odds,
    :math:`\lambda_i = \lambda_0 + i(\lambda_M - \lambda_0)/M` (M = ``resolution``), and
    the DP minimizes :math:`\sum_k \sqrt{(\lambda_{j} - \lambda_{i}) H(\tau_i, \tau_j)}`
    over paths of exactly K = ``blocks`` edges (exact on that grid, :math:`O(K M^2)`),
    :math:`H(a, b) = \int_a^b t(1-t)h'(t)\,dt` computed exactly (Gauss–Legendre on each
    fine cell, then differences of the cumulative sum). By Cauchy–Schwarz splitting a
    block never raises :math:`\sum_k\sqrt{S_k H_k}`, so more blocks never hurt; the
    number of blocks is what Proposition 1 limits (:func:`block_grid`). Default interval:
    the canonical :math:`[1/d, 1 - 1/d]`; needs 0 < start < stop < 1. ``resolution`` is at
    most :data:`MAX_BLOCK_RESOLUTION` = 4096 (the DP's (M+1)² table, 128 MiB).
    Source: W26 §4.2, Proposition 1, and the boundary DP of §4.4.2, eqs. (39a), (39b)
    (docs/theory.md §3–4).
    """
    prof = _as_profile(profile)
    start, stop = _interval_args(prof, start, stop)
    if not (0 < start and stop < 1):
        raise ValueError(f"start, stop: log reveal odds need 0 < start < stop < 1, got {start}, {stop}")
    M = _int_arg(resolution, "resolution", 1, MAX_BLOCK_RESOLUTION,
                 f" (the block DP holds an (M+1)^2 table; at most {MAX_BLOCK_RESOLUTION})")
    K = _int_arg(blocks, "blocks", 1, M, f" (at most resolution={M} blocks)")
    lam = np.linspace(math.log(start / (1 - start)), math.log(stop / (1 - stop)), M + 1)
    tau = 1.0 / (1.0 + np.exp(-lam))
    tau[0], tau[-1] = start, stop
    Hc = _ugc_cumulative(prof, tau)
    i = np.arange(M + 1)
    with np.errstate(invalid="ignore"):
        S = lam[None, :] - lam[:, None]
        H = np.maximum(Hc[None, :] - Hc[:, None], 0.0)
        cost = np.where(i[None, :] > i[:, None], np.sqrt(S * H), np.inf)  # cost[i, j], i < j
    F = np.full(M + 1, np.inf)
    F[0] = 0.0
    back = np.zeros((K + 1, M + 1), dtype=np.int64)
    for k in range(1, K + 1):
        v = F[:, None] + cost  # v[i, j]
        a = np.argmin(v, axis=0)
        F = v[a, i]
        back[k] = a
    if not np.isfinite(F[M]):
        raise ValueError(f"blocks: {K} blocks do not fit on a grid of {M} cells")  # pragma: no cover
    cut = [M]
    j = M
    for k in range(K, 0, -1):
        j = int(back[k, j])
        cut.append(j)
    cut = np.array(cut[::-1])
    Sk = lam[cut[1:]] - lam[cut[:-1]]
    Hk = np.maximum(Hc[cut[1:]] - Hc[cut[:-1]], 0.0)
    return BlockPartition(edges=tau[cut], lengths=Sk, ugc=Hk, complexity=float(np.sum(np.sqrt(Sk * Hk)) ** 2))


def block_grid(
    profile,
    steps: int,
    *,
    blocks: int | None = None,
    start: float | None = None,
    stop: float | None = None,
    resolution: int = 256,
) -> tuple[Grid, BlockPartition]:
    r"""W26 Proposition 1's grid on the optimal block partition.

    For N = ``steps`` and K blocks with :math:`N \ge 2\{K + 2\log(\psi(T)/\psi(t_0))\}`
    (default: the largest such K, at least 1), the blocks come from
    :func:`block_partition`; block k gets
    :math:`\rho_k = \min\{1, (4\sqrt{C(\mathcal P)}/N)\sqrt{S_k/H_k}\}` and
    :math:`N_k = \lceil S_k/\log(1+\rho_k) \rceil` steps equally spaced in log reveal odds
    (Geo(ρ) inside the block, last step not longer), so that :math:`\sum_k N_k \le N` and
    W26 bounds the error by :math:`4C(\mathcal P)/N` (plus boundary terms, zero here). A
    block with :math:`H_k = 0` gets :math:`\rho_k = 1`. Returns the grid (with
    :math:`\sum_k N_k` steps) and the partition.
    """
    prof = _as_profile(profile)
    N = _int_arg(steps, "steps", 1)
    start, stop = _interval_args(prof, start, stop)
    if not (0 < start and stop < 1):
        raise ValueError(f"start, stop: log reveal odds need 0 < start < stop < 1, got {start}, {stop}")
    span = math.log((stop / (1 - stop)) / (start / (1 - start)))
    kmax = math.floor(N / 2 - 2 * span)
    if blocks is None:
        if kmax < 1:
            raise ValueError(
                "steps: Proposition 1 needs N >= 2(K + 2 log(psi(T)/psi(t0))) = "
                f"{2 * (1 + 2 * span):.1f} for one block; use more steps"
            )
        blocks = min(kmax, _int_arg(resolution, "resolution", 1, MAX_BLOCK_RESOLUTION))
    K = _int_arg(blocks, "blocks", 1)
    if K > kmax:
        raise ValueError(
            f"blocks: Proposition 1 allows at most {max(kmax, 0)} blocks with N={N} steps on this interval"
        )
    part = block_partition(prof, K, start=start, stop=stop, resolution=resolution)
    C = part.complexity
    lam_edges = np.log(part.edges / (1 - part.edges))
    pieces = [np.array([lam_edges[0]])]
    for k in range(K):
        Sk, Hk = part.lengths[k], part.ugc[k]
        rho = 1.0 if Hk <= 0 else min(1.0, 4 * math.sqrt(C) / N * math.sqrt(Sk / Hk))
        Nk = max(1, math.ceil(Sk / math.log1p(rho) - 1e-12))
        pieces.append(lam_edges[k] + (lam_edges[k + 1] - lam_edges[k]) * np.arange(1, Nk + 1) / Nk)
    lam = np.concatenate(pieces)
    t = 1.0 / (1.0 + np.exp(-lam))
    t[0], t[-1] = start, stop
    return Grid(t), part
