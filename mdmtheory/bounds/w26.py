r"""W26 = Wainwright, *The data geometry of masking diffusion: certified-optimal schedules via
unmasking growth complexity* (2026), arXiv 2608.13520, read in full; every place cited here
is the one docs/theory.md records (its table of W26 items is the source of truth).

Lemmas 4 and 5 (one-step defects), Theorem 1 (grids and card schedules), Corollary 1
(Geo(rho)), Proposition 1 (block grids, upper part and (28c)), Theorem 3 (asymptotic) and
Proposition 3's H(0, 1) <= min(TC, DTC) (App. A eq. (61c)). Proposition 3's DHW26 sandwich
(eq. (62c)) sits in :mod:`mdmtheory.bounds.dhw26` with the other statements on DHW26's
quantity.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .._estimate import record_dict
from ..information.profile import as_profile
from ..information.ugc import (
    check_card_pair,
    check_edges,
    fine_complexity,
    check_interval,
    partition_complexity,
    profile_ugc,
    ugc_card,
)
from ..schedules.odds import from_log_odds, log_odds, psi_scalar
from ..schedules.plans import Grid
from .._moved import renamed_keywords
from .._validate import int_arg, LIMITS as _LIMITS
from ._core import (
    ASYMPTOTIC,
    Bound,
    _endpoints,
    _geo_grid,
    _grid,
    _is_geometric,
    LOWER,
    PAPER,
    _schedule,
    _steps_arg,
    _tc_dtc,
    _times_product,
)
from .registry import random_order_grid, random_order_schedule, register_rows

__all__ = [
    "w26_lemma4",
    "w26_lemma5",
    "w26_theorem1",
    "w26_theorem1_card",
    "w26_corollary1",
    "w26_proposition1",
    "BlockAllocation",
    "w26_block_objective_min",
    "w26_proposition1_dp_lower",
    "w26_theorem3",
    "ugc_total_bound",
]


# -- W26: one-step lemmas -----------------------------------------------------------------
@renamed_keywords(a="start", b="stop")
def w26_lemma4(p, start: float, stop: float) -> Bound:
    r"""W26 Lemma 4: :math:`\Gamma_{umask}(a, b) \le (\psi(b)/\psi(a) - 1)\, H(a, b)`
    (W26 §6.1.1, eq. (49), for 0 < a < b < 1; verified here, docs/theory.md §3);
    a = ``start``, b = ``stop``.

    ``inf`` when a = 0 or b = 1 (:math:`\psi(0) = 0`, :math:`\psi(1) = \infty`) unless
    H(a, b) = 0 (then :math:`h' \equiv 0` on [a, b] and the defect is 0).
    """
    prof = as_profile(p)
    a, b = check_interval(start, stop, "start, stop")
    H = profile_ugc(prof, a, b)
    factor = 0.0 if a == b else (math.inf if a == 0.0 or b == 1.0 else psi_scalar(b) / psi_scalar(a) - 1.0)
    return Bound(
        name="w26_lemma4",
        value=_times_product(factor, H),
        bounds=f"gamma_umask({a:.6g}, {b:.6g})",
        source="Wainwright 2026 (W26), §6.1.1, Lemma 4, eq. (49)",
        statement="Gamma_umask(a, b) <= (psi(b)/psi(a) - 1) * H(a, b)",
        assumptions=("0 < a <= b < 1 for a finite value",),
        status=PAPER,
    )


def w26_lemma5(p, a: int, b: int) -> Bound:
    r"""W26 Lemma 5 (W26 §6.2, eq. (53), stated for 0 <= a < b <= d - 1; verified here, docs/theory.md §3), integers
    :math:`0 \le a \le b \le d`:

    .. math::

        \Gamma_{card}(a, b) \le \Bigl(\frac{\psi(b/d)}{\psi((a+1)/d)} - 1\Bigr)
        H^{card}(a, b).

    Steps of size :math:`\le 1` have defect and bound 0; b = d with b - a >= 2 has factor
    :math:`\psi(1) = \infty` (value ``inf`` unless :math:`H^{card} = 0`).
    """
    prof = as_profile(p)
    d = prof.d
    a, b = check_card_pair(a, b, d)
    H = ugc_card(prof, a, b)
    if b - a <= 1:
        factor = 0.0
    else:
        factor = math.inf if b == d else psi_scalar(b / d) / psi_scalar((a + 1) / d) - 1.0
    return Bound(
        name="w26_lemma5",
        value=_times_product(factor, H),
        bounds=f"gamma_card({a}, {b})",
        source="Wainwright 2026 (W26), §6.2, Lemma 5, eq. (53)",
        statement="Gamma_card(a, b) <= (psi(b/d)/psi((a+1)/d) - 1) * H^card(a, b)",
        assumptions=("b < d for a finite value when b - a >= 2",),
        status=PAPER,
    )


# -- W26: grids ---------------------------------------------------------------------------
def w26_theorem1(p, grid) -> Bound:
    r"""W26 Theorem 1 (Bernoulli-subset sampler on the grid :math:`t_0 < \dots < t_N`):

    .. math::

        \mathrm{KL} \le \sum_{j=0}^{N-1} \Bigl(\frac{\psi(t_{j+1})}{\psi(t_j)} - 1\Bigr)
        H(t_j, t_{j+1}) + \text{init} + \text{completion}.

    The boundary terms are 0 here (exact initialization below :math:`t_0`, exact completion
    above :math:`t_N`, docs/design.md §3). It is the sum of Lemma 4 over the steps, so it bounds
    the path KL :math:`\sum_j \Gamma_{umask}(t_j, t_{j+1})` (>= KL of the output law).
    ``inf`` when :math:`t_0 = 0` or :math:`t_N = 1`. Verified here (docs/theory.md §3).
    """
    prof = as_profile(p)
    g = _grid(grid)
    t = g.times
    value = sum(w26_lemma4(prof, t[j], t[j + 1]).value for j in range(g.steps))
    return Bound(
        name="w26_theorem1",
        value=float(value),
        bounds="path_kl",
        source="Wainwright 2026 (W26), §3.2, Theorem 1, eq. (17a)",
        statement="KL <= sum_j (psi(t_{j+1})/psi(t_j) - 1) H(t_j, t_{j+1}) + boundary terms (0 here)",
        assumptions=("Bernoulli-subset sampler", "exact initialization and completion", "0 < t_0, t_N < 1 for a finite value"),
        plan=g,
        status=PAPER,
    )


def w26_theorem1_card(p, schedule) -> Bound:
    r"""W26 Theorem 1, card version (fixed-cardinality sampler, :math:`t_j = s_j/d`):

    .. math::

        \mathrm{KL}_{\text{path}}(k) \le \sum_t \Bigl(\frac{\psi(s_{t+1}/d)}{\psi((s_t+1)/d)}
        - 1\Bigr) H^{card}(s_t, s_{t+1}),

    the sum of :func:`w26_lemma5` over the steps. ``inf`` when the last step has size >= 2
    and positive :math:`H^{card}` (factor :math:`\psi(1) = \infty`).
    """
    prof = as_profile(p)
    sched = _schedule(schedule, prof.d)
    value = sum(w26_lemma5(prof, s, s + k).value for s, k in zip(sched.starts, sched.sizes))
    return Bound(
        name="w26_theorem1_card",
        value=float(value),
        bounds="path_kl",
        source="Wainwright 2026 (W26), §3.2, Theorem 1, eq. (17b)",
        statement="KL_path(k) <= sum_t (psi(s_{t+1}/d)/psi((s_t+1)/d) - 1) H^card(s_t, s_{t+1})",
        assumptions=("random-order fixed-cardinality sampler",),
        plan=sched,
        status=PAPER,
    )


def w26_corollary1(p, plan, *, start: float | None = None, stop: float | None = None) -> Bound:
    r"""W26 Corollary 1 (geometric grid Geo(ρ)): with N equal log-odds steps from
    :math:`t_0` to T, :math:`N \ge \log(\psi(T)/\psi(t_0))`,

    .. math::

        \mathrm{KL} \le \frac{2 H(t_0, T)}{N} \log\frac{\psi(T)}{\psi(t_0)}
        + \text{boundary terms} \quad (= 2 C_{ugc}/N \text{ on } [1/d, 1 - 1/d]).

    ``plan``: a step count N (the Geo(ρ) grid on [start, stop], default the canonical
    interval, is built by a private helper and returned as ``Bound.plan``) or a
    :class:`Grid` that is geometric in log-odds (else ValueError). Boundary terms are 0
    (exact initialization/completion). Bounds the path KL of that grid. Verified here
    (docs/theory.md §3).
    """
    prof = as_profile(p)
    if isinstance(plan, Grid):
        if not _is_geometric(plan):
            raise ValueError("plan: the grid is not geometric in log-odds (Geo(rho)); Corollary 1 does not apply")
        grid = plan
        t0, T, N = plan.times[0], plan.times[-1], plan.steps
    else:
        N = int_arg(plan, "plan", 1, _LIMITS["steps"], " (a step count N or a geometric Grid)")
        t0, T = _endpoints(prof, start, stop)
        grid = _geo_grid(t0, T, N)
    L = float(log_odds(T) - log_odds(t0))
    if N < L:
        raise ValueError(f"plan: Corollary 1 needs N >= log(psi(T)/psi(t_0)) = {L:.4g}, got N={N}")
    value = 2.0 * profile_ugc(prof, t0, T) / N * L
    return Bound(
        name="w26_corollary1",
        value=float(value),
        bounds="path_kl",
        source="Wainwright 2026 (W26), §3.3.1, Corollary 1, eq. (21)",
        statement="Geo(rho) grid: KL <= (2 H(t_0, T)/N) log(psi(T)/psi(t_0)) + boundary terms (0 here)",
        assumptions=("N >= log(psi(T)/psi(t_0))", "exact initialization and completion"),
        plan=grid,
        status=PAPER,
    )


def _block_data(prof, edges):
    tau = check_edges(edges)
    lam = np.log(tau) - np.log1p(-tau)
    S = np.diff(lam)
    H = np.array([profile_ugc(prof, tau[k], tau[k + 1]) for k in range(tau.shape[0] - 1)])
    return tau, lam, S, H


def w26_proposition1(p, edges, steps: int) -> Bound:
    r"""W26 Proposition 1 (block schedule), upper bound (W26 §4.2, eqs. 25–28b, read from
    the paper; verified here, docs/theory.md §3). Its lower part (28c) is
    :func:`w26_proposition1_dp_lower`.

    Blocks :math:`[\tau_{k-1}, \tau_k]`, k = 1..K, of log-odds length :math:`S_k` and UGC
    :math:`H_k`; budget :math:`N \ge 2\{K + 2\log(\psi(\tau_K)/\psi(\tau_0))\}`;
    :math:`\rho_k = \min\{1, (4\sqrt{C(\mathcal P)}/N)\sqrt{S_k/H_k}\}` (1 where
    :math:`H_k = 0`); in block k the grid multiplies :math:`\psi` by :math:`1+\rho_k`
    (the last step clipped at :math:`\tau_k`), :math:`N_k = \lceil S_k/\log(1+\rho_k)\rceil`
    steps. Claim: :math:`\sum_k N_k \le N` and

    .. math:: \mathrm{KL} \le 4 C(\mathcal P)/N + \text{boundary terms (0 here)}.

    The grid is returned as ``Bound.plan`` (it has :math:`\sum_k N_k` steps).
    """
    prof = as_profile(p)
    N = _steps_arg(steps)
    tau, lam, S, H = _block_data(prof, edges)
    K = S.shape[0]
    L = float(lam[-1] - lam[0])
    if N < 2 * (K + 2 * L):
        raise ValueError(f"steps: Proposition 1 needs N >= 2(K + 2 log(psi(T)/psi(t_0))) = {2 * (K + 2 * L):.4g}, got {N}")
    C = float(np.sum(np.sqrt(S * H)) ** 2)
    points = [lam[0]]
    for k in range(K):
        if H[k] > 0:
            rho = min(1.0, 4.0 * math.sqrt(C) / N * math.sqrt(S[k] / H[k]))
        else:
            rho = 1.0
        step = math.log1p(rho)
        n_k = math.ceil(S[k] / step)
        inner = lam[k] + step * np.arange(1, n_k)
        inner = inner[inner < lam[k + 1] - 1e-12 * max(1.0, abs(lam[k + 1]))]
        points.extend(inner.tolist())
        points.append(lam[k + 1])
    t = np.array(from_log_odds(np.array(points)))
    t[0], t[-1] = tau[0], tau[-1]
    grid = Grid(t)
    return Bound(
        name="w26_proposition1",
        value=4.0 * C / N,
        bounds="path_kl",
        source="Wainwright 2026 (W26), §4.2, Proposition 1 (read from the paper)",
        statement="block grid with sum_k N_k <= N steps: KL <= 4 C(P)/N + boundary terms (0 here)",
        assumptions=("N >= 2(K + 2 log(psi(T)/psi(t_0)))", "exact initialization and completion"),
        plan=grid,
        status=PAPER,
    )


class BlockAllocation(NamedTuple):
    """Result of :func:`w26_block_objective_min`: the minimum of W26's block objective and
    one allocation (steps per block) that attains it."""

    value: float
    steps: tuple[int, ...]

    def to_dict(self) -> dict:
        """Every field by name, JSON-ready (numpy arrays as lists, non-finite floats as strings)."""
        return record_dict(self)


def _block_terms(S: np.ndarray, H: np.ndarray, n: np.ndarray) -> np.ndarray:
    r""":math:`(e^{S_k/n} - 1) H_k` for every block k (rows) and step count n (columns);
    0 where :math:`H_k = 0` (whatever the factor)."""
    with np.errstate(over="ignore", invalid="ignore"):  # inf * 0 where H = 0: replaced by 0
        f = np.expm1(S[:, None] / n[None, :])
        prod = f * H[:, None]
    return np.where(H[:, None] > 0, prod, 0.0)


def w26_block_objective_min(p, edges, steps: int) -> BlockAllocation:
    r"""The minimum of W26's block objective over step allocations (the DP (26b) of W26
    §4.2): blocks :math:`[\tau_{k-1}, \tau_k]`, k = 1..K, of log-odds length :math:`S_k`
    and UGC :math:`H_k`,

    .. math::

        \min_{N_1 + \dots + N_K = N,\ N_k \ge 1} \sum_k \bigl(e^{S_k/N_k} - 1\bigr) H_k,

    exact, by dynamic programming over blocks (:math:`O(K N^2)`). It is the guarantee that
    W26's Theorem 1 gives to the grid with :math:`N_k` equal log-odds steps in block k
    (:math:`e^{S_k/N_k} = \psi(t_{j+1})/\psi(t_j)`), minimized over allocations; the
    quantity bounded below by :func:`w26_proposition1_dp_lower`. Needs N >= K.
    """
    prof = as_profile(p)
    N = _steps_arg(steps)
    _, _, S, H = _block_data(prof, edges)
    K = S.shape[0]
    if N < K:
        raise ValueError(f"steps: the block objective needs at least one step per block, N >= K = {K}, got {N}")
    n = np.arange(1, N + 1, dtype=np.float64)
    terms = _block_terms(S, H, n)  # terms[k, n - 1]
    # F[m] = min objective of the blocks so far with m steps in all (inf where infeasible)
    F = np.full(N + 1, math.inf)
    F[0] = 0.0
    choice = np.zeros((K, N + 1), dtype=np.int64)
    for k in range(K):
        G = np.full(N + 1, math.inf)
        for m in range(k + 1, N + 1):
            cand = F[m - 1 :: -1][: m] + terms[k, : m]  # cand[i] = F[m - 1 - i] + f_k(i + 1)
            i = int(np.argmin(cand))
            G[m], choice[k, m] = cand[i], i + 1
        F = G
    alloc, m = [], N
    for k in range(K - 1, -1, -1):
        alloc.append(int(choice[k, m]))
        m -= alloc[-1]
    return BlockAllocation(float(F[N]), tuple(alloc[::-1]))


def w26_proposition1_dp_lower(p, edges, steps: int) -> Bound:
    r"""W26 Proposition 1, eq. (28c), as stated (W26 §4.2, read from the paper's text): a
    lower bound on the **guarantee**, not on the sampling error,

    .. math::

        \min_{N_1 + \dots + N_K = N} \sum_k \bigl(e^{S_k/N_k} - 1\bigr) H_k
        \;\ge\; \frac{C(\mathcal P)}{N}, \qquad
        C(\mathcal P) = \Bigl(\sum_k \sqrt{S_k H_k}\Bigr)^2,

    the left side being the minimum of the DP (26b) (:func:`w26_block_objective_min`).
    Proof: :math:`e^x - 1 \ge x` and Cauchy–Schwarz,
    :math:`\sum_k S_k H_k / N_k \ge (\sum_k \sqrt{S_k H_k})^2 / \sum_k N_k`. W26 states no
    finite-N lower bound on the optimal sampling error itself; that reading is false (the
    optimal N-step error can sit below :math:`C(\mathcal P)/N`, docs/theory.md §3), and
    :func:`optimal_grid_error_lower` is a lower bound on that error derived here.
    Needs N >= K (one step per block at least).
    """
    prof = as_profile(p)
    N = _steps_arg(steps)
    tau = check_edges(edges)
    K = tau.shape[0] - 1
    if N < K:
        raise ValueError(f"steps: the block objective needs at least one step per block, N >= K = {K}, got {N}")
    return Bound(
        name="w26_proposition1_dp_lower",
        value=partition_complexity(prof, tau) / N,
        bounds=f"w26_block_objective_min(N={N})",
        source="Wainwright 2026 (W26), §4.2, Proposition 1, eq. (28c) (read from the paper)",
        statement="min over sum_k N_k = N of sum_k (exp(S_k/N_k) - 1) H_k (DP 26b) >= C(P)/N",
        assumptions=("N_k >= 1 steps per block, sum_k N_k = N", "bounds the guarantee, not the sampling error"),
        kind=LOWER,
        status=PAPER,
    )


def w26_theorem3(p, steps: int, *, start: float | None = None, stop: float | None = None) -> Bound:
    r"""W26 Theorem 3 (fine partition), an **asymptotic value, not a bound**:

    .. math:: \min_{N\text{-step grids}} \mathrm{KL} = \frac{P_{ugc}}{2N} + o(1/N),

    :math:`P_{ugc} = (\int_a^b \sqrt{h'})^2` on [start, stop] (default the canonical
    interval). At finite N the optimum can lie below :math:`P_{ugc}/(2N)`; test the
    convergence of N times the optimal error, not an inequality. Source: W26 §5.1,
    eqs. (41a–b) and (58), read from the paper (docs/theory.md §3).
    """
    prof = as_profile(p)
    N = _steps_arg(steps)
    a, b = _endpoints(prof, start, stop)
    return Bound(
        name="w26_theorem3",
        value=fine_complexity(prof, (a, b)) / (2 * N),
        bounds=f"optimal_path_kl(N={N}, [{a:.6g}, {b:.6g}])",
        source="Wainwright 2026 (W26), §5.1, Theorem 3, eqs. (41a-b), (58) (read from the paper)",
        statement="optimal N-step error = P_ugc/(2N) + o(1/N)  (asymptotic, N -> infinity)",
        assumptions=("asymptotic statement: no finite-N inequality",),
        kind=ASYMPTOTIC,
        status=PAPER,
    )


# -- W26 App. A, Proposition 3 -------------------------------------------------------------
def ugc_total_bound(p) -> Bound:
    r""":math:`H(0, 1) \le \min(TC, DTC)`, W26 App. A, Proposition 3, eq. (61c), verified
    here (docs/theory.md §3); the proof is one line: pointwise
    :math:`t(1-t) \le \min(t, 1-t)` under :math:`\int h'` with
    :math:`TC = \int_0^1 (1-t) h'` and :math:`DTC = \int_0^1 t h'`."""
    prof = as_profile(p)
    tc, dtc = _tc_dtc(prof)
    return Bound(
        name="ugc_total",
        value=min(tc, dtc),
        bounds="ugc(0, 1)",
        source="Wainwright 2026 (W26), App. A, Proposition 3, eq. (61c); verified here (docs/theory.md §3)",
        statement="H(0, 1) <= min(TC, DTC)",
        status=PAPER,
    )


# -- rows of compare (docs/design.md, "How to add a bound") ----------------------------------
@register_rows("w26_theorem1_card", source=__name__, order=130, applies=random_order_schedule)
def _theorem1_card_rows(ctx):
    b = w26_theorem1_card(ctx.profile, ctx.plan)
    return [ctx.row(b, ctx.exact(b.bounds))]


@register_rows("w26_theorem1", source=__name__, order=170, applies=random_order_grid)
def _theorem1_rows(ctx):
    return [ctx.row(w26_theorem1(ctx.profile, ctx.plan), ctx.path_kl)]


def _corollary1_applies(ctx) -> bool:
    if not random_order_grid(ctx):
        return False
    t0, tN = ctx.plan.times[0], ctx.plan.times[-1]
    return _is_geometric(ctx.plan) and ctx.plan.steps >= float(log_odds(tN) - log_odds(t0))


@register_rows("w26_corollary1", source=__name__, order=190, applies=_corollary1_applies)
def _corollary1_rows(ctx):
    return [ctx.row(w26_corollary1(ctx.profile, ctx.plan), ctx.path_kl)]


def _single_block(ctx) -> bool:
    return random_order_grid(ctx) and 0.0 < ctx.plan.times[0] and ctx.plan.times[-1] < 1.0


@register_rows("w26_proposition1_dp_lower", source=__name__, order=200, applies=_single_block)
def _proposition1_rows(ctx):
    block, N = (ctx.plan.times[0], ctx.plan.times[-1]), ctx.plan.steps
    return [ctx.row(w26_proposition1_dp_lower(ctx.profile, block, N), w26_block_objective_min(ctx.profile, block, N).value)]


@register_rows("w26_theorem3", source=__name__, order=220, applies=_single_block)
def _theorem3_rows(ctx):
    return [ctx.row(w26_theorem3(ctx.profile, ctx.plan.steps, start=ctx.plan.times[0], stop=ctx.plan.times[-1]), None)]


@register_rows("ugc_total", source=__name__, order=310, applies=lambda ctx: True)
def _ugc_total_rows(ctx):
    """H(0, 1) <= min(TC, DTC): about the law alone."""
    return [ctx.row(ugc_total_bound(ctx.profile), profile_ugc(ctx.profile, 0.0, 1.0))]
