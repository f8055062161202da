r"""Bounds derived here (not published results): the Riemann bound on the card path KL
(from LZ25/CCL25's profile identity; proofs/riemann_bound.md) and the lower bound on the
optimal N-step grid error (proofs/optimal_grid_error_lower.md). docs/theory.md §2–3."""

from __future__ import annotations

import numpy as np

from ..information.profile import as_profile
from ..information.ugc import check_edges, profile_increments
from ._core import Bound, DERIVED, LOWER, _schedule, _steps_arg
from .registry import random_order_grid, random_order_schedule, register_rows

__all__ = [
    "riemann_bound",
    "optimal_grid_error_lower",
]


def riemann_bound(p, schedule) -> Bound:
    r"""Riemann bound (derived here; docs/theory.md §2):

    .. math::

        \mathrm{KL}_{\text{path}}(k) \le \frac{k_{\max} - 1}{d} \sum_i I(X_i; X_{-i})
        = (k_{\max} - 1)(\varphi_0 - \varphi_{d-1}).

    Each step's defect :math:`\sum_{m} (\varphi_{s} - \varphi_m)` is at most
    :math:`(k-1)(\varphi_s - \varphi_{s+k-1})` since :math:`\varphi` is non-increasing, and
    the decrements telescope. Proof: proofs/riemann_bound.md.
    """
    prof = as_profile(p)
    sched = _schedule(schedule, prof.d)
    profile_increments(prof, strict=True)  # the telescoping needs a non-increasing profile
    phi = prof.values
    value = (sched.max_size - 1) * float(phi[0] - phi[-1])
    return Bound(
        name="riemann",
        value=value,
        bounds="path_kl",
        source="derived here from LZ25/CCL25's profile identity (proofs/riemann_bound.md)",
        statement="KL_path(k) <= ((k_max - 1)/d) * sum_i I(X_i; X_-i)",
        assumptions=("exact profile (non-increasing)",),
        status=DERIVED,
    )


def _bernstein_min(coef: np.ndarray, a: float, b: float) -> float:
    r"""A lower bound on :math:`\min_{[a,b]}` of the Bernstein polynomial with coefficients
    ``coef`` on [0, 1]: the smallest Bernstein coefficient on [a, b] (convex-hull property),
    computed by two de Casteljau subdivisions."""
    c = np.array(coef, dtype=np.float64)
    n = c.shape[0] - 1
    if n == 0:
        return float(c[0])

    def right_part(c, t):  # coefficients on [t, 1]
        c = c.copy()
        out = np.empty_like(c)
        for r in range(n + 1):
            out[n - r] = c[n - r]
            c[: n - r] = (1 - t) * c[: n - r] + t * c[1 : n - r + 1]
        return out

    def left_part(c, t):  # coefficients on [0, t]
        c = c.copy()
        out = np.empty_like(c)
        for r in range(n + 1):
            out[r] = c[0]
            c[: n - r] = (1 - t) * c[: n - r] + t * c[1 : n - r + 1]
        return out

    right = right_part(c, a)  # on [a, 1]
    sub = left_part(right, (b - a) / (1 - a)) if a < 1 else right
    return float(sub.min())


def optimal_grid_error_lower(p, edges, steps: int) -> Bound:
    r"""A lower bound on the **optimal N-step grid error**, derived here (not a published
    result; proof: proofs/optimal_grid_error_lower.md):

    .. math::

        \min_{N\text{-step grids on } [\tau_0, \tau_K]} \sum_j \Gamma_{umask}(t_j, t_{j+1})
        \;\ge\; \frac{\bigl(\sum_k \sqrt{m_k}\, L_k\bigr)^2}{2(N + K - 1)},

    for any partition :math:`\tau_0 < \dots < \tau_K` of the grid's interval, with
    :math:`L_k = \tau_k - \tau_{k-1}` and :math:`m_k \le \min_{[\tau_{k-1}, \tau_k]} h'`
    (the smallest Bernstein coefficient of h' on the block: the convex-hull property).

    Proof sketch: cut every grid step at the block edges (at most N + K − 1 pieces); a piece
    [c, e] inside block k contributes at least :math:`m_k (e - c)^2/2` to
    :math:`\Gamma_{umask} = \int (t_{j+1} - u) h'(u)\,du`; Cauchy–Schwarz over the pieces.
    Refining the partition (K << N) tends to W26 Theorem 3's :math:`P/(2N)` on the t-scale.

    Why it exists: (28c) of W26 Proposition 1 (:func:`w26_proposition1_dp_lower`) is easily
    misread as "optimal error >= C(P)/N", which is false (repeated bit, d = 3, N = 1 on
    [1/3, 2/3]: optimal error (5/27) log 2 = 0.128 < C(P) = (13/27) (log 2)^2 = 0.231;
    docs/theory.md §3). This is a true finite-N lower bound of the same kind.
    """
    prof = as_profile(p)
    N = _steps_arg(steps)
    tau = check_edges(edges)
    d = prof.d
    K = tau.shape[0] - 1
    if d == 1:
        value = 0.0
    else:
        coef = (d - 1) * profile_increments(prof, strict=True)  # Bernstein coefficients of h'
        m = np.array([max(0.0, _bernstein_min(coef, tau[k], tau[k + 1])) for k in range(K)])
        value = float(np.sum(np.sqrt(m) * np.diff(tau)) ** 2 / (2 * (N + K - 1)))
    return Bound(
        name="optimal_grid_error_lower",
        value=value,
        bounds=f"optimal_path_kl(N={N}, [{tau[0]:.6g}, {tau[-1]:.6g}])",
        source="derived here (proofs/optimal_grid_error_lower.md)",
        statement="min over N-step grids of KL_path >= (sum_k sqrt(min_k h') L_k)^2 / (2(N + K - 1))",
        assumptions=("grids from tau_0 to tau_K with exact initialization and completion",),
        kind=LOWER,
        status=DERIVED,
    )


# -- rows of compare (docs/design.md, "How to add a bound") ----------------------------------
@register_rows("data_processing", source=__name__, order=50, applies=lambda ctx: ctx.path_kl is not None)
def _data_processing_rows(ctx):
    dp = Bound("data_processing", ctx.path_kl, "kl", "data processing inequality (proofs/kl_le_path_kl.md)",
               "KL(p||q) <= KL_path", status=DERIVED)
    return [ctx.row(dp, ctx.kl_exact)]


@register_rows("riemann", source=__name__, order=110, applies=random_order_schedule)
def _riemann_rows(ctx):
    b = riemann_bound(ctx.profile, ctx.plan)
    return [ctx.row(b, ctx.exact(b.bounds))]


def _grid_block(ctx) -> bool:
    return random_order_grid(ctx) and 0.0 < ctx.plan.times[0] and ctx.plan.times[-1] < 1.0


@register_rows("optimal_grid_error_lower", source=__name__, order=210, applies=_grid_block)
def _optimal_grid_rows(ctx):
    block = (ctx.plan.times[0], ctx.plan.times[-1])
    return [ctx.row(optimal_grid_error_lower(ctx.profile, block, ctx.plan.steps), ctx.path_kl)]
