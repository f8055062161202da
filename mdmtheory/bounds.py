r"""Published bounds on the factorization error, one function each, with their source.

Every function returns a :class:`Bound`: its value (nats), the quantity it bounds, its
kind (``"upper"``: value >= quantity; ``"lower"``: value <= quantity; ``"asymptotic"``:
an asymptotic value, not an inequality) and metadata — source paper, theorem or equation,
assumptions — so that a table can show it beside the exact value. Items marked [P] in
THEORY.md are claims the test-suite checks, not facts; where an exact check refuted a
claim, the stated form is kept (its test is a strict xfail with the counterexample) and a
corrected form sits beside it.

:func:`compare` evaluates, for a joint law and a plan (schedule or grid), the exact KL of
the output law, the path KL and every applicable bound, in one table.

Papers: LC25 = Li & Cai, arXiv 2505.21400; W26 = Wainwright, *The data geometry of
masking diffusion* (2026); DHW26 = Dmitriev et al. Formulas: THEORY.md §2–3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validate import LIMITS as _LIMITS
from ._validate import int_arg
from .divergence import kl as _kl
from .joint import Joint
from .schedules import Grid, Schedule, check_schedule
from .ugc import (
    _card_pair,
    _edges,
    _increments,
    _interval,
    _ugc,
    as_profile,
    effective_total_correlation,
    fine_complexity,
    gain_coefficients,
    log_odds,
    from_log_odds,
    partition_complexity,
    ugc_card,
)

__all__ = [
    "Bound",
    "UPPER",
    "LOWER",
    "ASYMPTOTIC",
    "riemann_bound",
    "lc25_bound",
    "lc25_lower_bound",
    "lc25_lower_bound_corrected",
    "w26_lemma4",
    "w26_lemma5",
    "w26_theorem1",
    "w26_theorem1_card",
    "w26_corollary1",
    "w26_proposition1",
    "w26_proposition1_lower",
    "w26_proposition1_lower_corrected",
    "w26_theorem3",
    "ugc_total_bound",
    "dhw_sandwich",
    "dhw_tc_bound",
    "ComparisonRow",
    "Comparison",
    "compare",
    "HOLD_RTOL",
]

UPPER, LOWER, ASYMPTOTIC = "upper", "lower", "asymptotic"
#: Relative tolerance of :meth:`Bound.holds` and :func:`compare` (see there for the scale).
HOLD_RTOL = 1e-12


@dataclass(frozen=True)
class Bound:
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
    """

    name: str
    value: float
    bounds: str  # the quantity bounded, e.g. "path_kl" or "kl"
    source: str
    statement: str
    assumptions: tuple[str, ...] = field(default_factory=tuple)
    kind: str = UPPER
    plan: Any = None

    def holds(self, exact: float, *, scale: float = 0.0, rtol: float = HOLD_RTOL) -> bool | None:
        """Whether the bound holds against the exact quantity, within
        ``rtol * max(|value|, |exact|, scale)`` (``scale``: the problem's natural size, e.g.
        :math:`\\sum_i H(X_i)`, so that rounding of a zero quantity is not a violation).
        None for an asymptotic statement."""
        if self.kind == ASYMPTOTIC:
            return None
        v, e = float(self.value), float(exact)
        if math.isinf(v):
            return v > 0 if self.kind == UPPER else v < 0
        tol = rtol * max(abs(v), abs(e), float(scale))
        return v >= e - tol if self.kind == UPPER else v <= e + tol


# -- helpers ------------------------------------------------------------------------------
def _schedule(schedule, d: int) -> Schedule:
    return check_schedule(schedule if isinstance(schedule, Schedule) else Schedule(schedule), d)


def _grid(grid) -> Grid:
    if isinstance(grid, Grid):
        return grid
    return Grid(grid)


def _psi(t: float) -> float:
    return math.inf if t >= 1.0 else t / (1.0 - t)


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


# -- LZ25 / CCL25 / LC25: fixed-cardinality sampler --------------------------------------
def riemann_bound(p, schedule) -> Bound:
    r"""Riemann bound (THEORY.md §2, [D]):

    .. math::

        \mathrm{KL}_{\text{path}}(k) \le \frac{k_{\max} - 1}{d} \sum_i I(X_i; X_{-i})
        = (k_{\max} - 1)(\varphi_0 - \varphi_{d-1}).

    Each step's defect :math:`\sum_{m} (\varphi_{s} - \varphi_m)` is at most
    :math:`(k-1)(\varphi_s - \varphi_{s+k-1})` since :math:`\varphi` is non-increasing, and
    the decrements telescope. Proof: proofs/riemann_bound.md.
    """
    prof = as_profile(p)
    sched = _schedule(schedule, prof.d)
    _increments(prof, strict=True)  # the telescoping needs a non-increasing profile
    phi = prof.values
    value = (sched.max_size - 1) * float(phi[0] - phi[-1])
    return Bound(
        name="riemann",
        value=value,
        bounds="path_kl",
        source="THEORY.md §2 (derived from LZ25/CCL25's profile identity)",
        statement="KL_path(k) <= ((k_max - 1)/d) * sum_i I(X_i; X_-i)",
        assumptions=("exact profile (non-increasing)",),
    )


def lc25_bound(p, schedule) -> Bound:
    r"""LC25 Theorem 1 (Li & Cai 2025, arXiv 2505.21400), exact predictor:

    .. math::

        \mathrm{KL}(p \,\|\, q_k) \le \frac{2^{\lceil \log_2 k_{\max} \rceil} - 1}{d}
        \sum_i I(X_i; X_{-i}).

    Coincides with :func:`riemann_bound` when :math:`k_{\max}` is a power of two and is
    looser otherwise, so it also bounds the path KL.
    """
    prof = as_profile(p)
    sched = _schedule(schedule, prof.d)
    _increments(prof, strict=True)  # stated for exact (non-increasing) profiles
    phi = prof.values
    k = sched.max_size
    factor = (1 << (k - 1).bit_length()) - 1  # 2^ceil(log2 k) - 1
    return Bound(
        name="lc25_theorem1",
        value=factor * float(phi[0] - phi[-1]),
        bounds="kl",
        source="Li & Cai 2025 (LC25, arXiv 2505.21400), Theorem 1",
        statement="KL(p||q_k) <= ((2^ceil(log2 k_max) - 1)/d) * sum_i I(X_i; X_-i) (+ training error, 0 here)",
        assumptions=("random-order fixed-cardinality sampler", "exact conditionals (training error 0)"),
    )


def _lc25_levels(hcard: np.ndarray, reading: str) -> float:
    r""":math:`\sum_{j \ge 0} 2^{-j} h^{card}_{m_j}` with :math:`m_j` the revealed count of
    level j (see :func:`lc25_lower_bound`); the geometric tail after the sizes saturate is
    summed in closed form."""
    d = hcard.shape[0]
    if d == 1:
        return 0.0
    total, j = 0.0, 0
    while True:
        size = min(1 << j, d - 1)
        m = size if reading == "revealed" else d - 1 - size
        if size == d - 1:  # saturated: sum_{i >= j} 2^-i = 2^(1-j)
            return total + 2.0 ** (1 - j) * float(hcard[m])
        total += 2.0**-j * float(hcard[m])
        j += 1


def lc25_lower_bound(p, max_size: int, *, reading: str = "revealed") -> Bound:
    r"""LC25 lower bound (THEORY.md §2, [P]), as stated:

    .. math::

        \max_{k:\ k_{\max} = s} \mathrm{KL}(p \,\|\, q_k) \;\ge\; \frac{s}{16 d}
        \sum_i \sum_{j \ge 0} 2^{-j}\, \mathbb{E}\, I\bigl(X_i; X \circ W_j^{(-i)}\bigr).

    **Reading** (the statement in THEORY.md is ambiguous; the paper was not available):
    :math:`W_j^{(-i)}` is a uniformly random subset of :math:`[d]\setminus\{i\}` of size
    :math:`\min(2^j, d-1)` ("growing size"), and "some schedule" is the worst schedule
    whose largest step is s. Then :math:`\sum_i \mathbb{E} I(X_i; X_W) = h^{card}_{|W|}`.
    ``reading="revealed"`` (default) takes :math:`X \circ W` to be X revealed on W;
    ``reading="masked"`` takes it to be X with W masked (revealed on the complement of
    :math:`W \cup \{i\}`, size :math:`d - 1 - |W|`).

    **Fails** on exact checks (strict xfails in tests/test_bounds.py): at s = 1 for every
    law with dependence (the sampler is then exact, error 0), and at s = 2 against the
    output-law KL of near-deterministic laws, under both readings. See
    :func:`lc25_lower_bound_corrected`.
    """
    prof = as_profile(p)
    d = prof.d
    s = _max_size_arg(max_size, d)
    if reading not in ("revealed", "masked"):
        raise ValueError(f"reading: expected 'revealed' or 'masked', got {reading!r}")
    value = s / (16 * d) * _lc25_levels(gain_coefficients(prof), reading)
    return Bound(
        name="lc25_lower",
        value=value,
        bounds=f"max_kl(k_max={s})",
        source="Li & Cai 2025 (LC25, arXiv 2505.21400), lower bound (as quoted in THEORY.md §2)",
        statement="some schedule with k_max = s has KL >= (s/(16 d)) sum_i sum_j 2^-j E I(X_i; X o W_j^(-i))",
        assumptions=(f"reading: X o W = X {reading} on W, |W_j| = min(2^j, d-1)",),
        kind=LOWER,
    )


def lc25_lower_bound_corrected(p, max_size: int, *, reading: str = "revealed") -> Bound:
    r"""LC25 lower bound, corrected: same value, stated for the **path KL** and for
    :math:`s = k_{\max} \ge 2`:

    .. math::

        \max_{k:\ k_{\max} = s} \mathrm{KL}_{\text{path}}(k) \;\ge\; \frac{s}{16 d}
        \sum_i \sum_{j \ge 0} 2^{-j}\, \mathbb{E}\, I\bigl(X_i; X \circ W_j^{(-i)}\bigr)
        \quad (s \ge 2), \qquad 0 \ (s = 1).

    Two exact refutations of the stated form (tests/test_bounds.py, strict xfails):
    (i) s = 1: the sampler is exact (KL = 0) while the right side is positive for any law
    with dependence; (ii) s = 2, d = 3: near-deterministic laws whose output-law KL is much
    smaller than their path KL (ratio 2.6 at KL ~ 1e-3 under the "revealed" reading, 4.2 at
    KL ~ 1e-7 under the "masked" one). Against the path KL (which is >= KL, and is the
    quantity LZ25/CCL25 make exact) the value held on every exact check here (hypothesis
    over random and near-degenerate laws, d <= 5, both readings, and the tightness search:
    best ratio 0.375 at d = 3), but it is **not proved** here.
    """
    b = lc25_lower_bound(p, max_size, reading=reading)
    s = int(max_size)
    return Bound(
        name="lc25_lower_corrected",
        value=0.0 if s == 1 else b.value,
        bounds=f"max_path_kl(k_max={s})",
        source=b.source + "; corrected here: path KL, k_max >= 2 (empirical, not proved)",
        statement="some schedule with k_max = s >= 2 has KL_path >= (s/(16 d)) sum_i sum_j 2^-j E I(X_i; X o W_j^(-i))",
        assumptions=b.assumptions + ("k_max >= 2 (else the bound is 0)", "bounds the path KL, not the output-law KL"),
        kind=LOWER,
    )


def _max_size_arg(max_size, d: int) -> int:
    try:
        ok = not isinstance(max_size, (bool, np.bool_)) and float(max_size).is_integer()
    except (TypeError, ValueError):
        ok = False
    if not ok or not 1 <= int(max_size) <= d:
        raise ValueError(f"max_size: expected an integer in 1..d={d}, got {max_size!r}")
    return int(max_size)


# -- W26: one-step lemmas -----------------------------------------------------------------
def w26_lemma4(p, a: float, b: float) -> Bound:
    r"""W26 Lemma 4: :math:`\Gamma_{umask}(a, b) \le (\psi(b)/\psi(a) - 1)\, H(a, b)`.

    ``inf`` when a = 0 or b = 1 (:math:`\psi(0) = 0`, :math:`\psi(1) = \infty`) unless
    H(a, b) = 0 (then :math:`h' \equiv 0` on [a, b] and the defect is 0).
    """
    prof = as_profile(p)
    a, b = _interval(a, b)
    H = _ugc(prof, a, b)
    factor = 0.0 if a == b else (math.inf if a == 0.0 or b == 1.0 else _psi(b) / _psi(a) - 1.0)
    return Bound(
        name="w26_lemma4",
        value=_times_product(factor, H),
        bounds=f"gamma_umask({a:.6g}, {b:.6g})",
        source="Wainwright 2026 (W26), Lemma 4",
        statement="Gamma_umask(a, b) <= (psi(b)/psi(a) - 1) * H(a, b)",
        assumptions=("0 < a <= b < 1 for a finite value",),
    )


def w26_lemma5(p, a: int, b: int) -> Bound:
    r"""W26 Lemma 5 (card analogue of Lemma 4), integers :math:`0 \le a \le b \le d`:

    .. math::

        \Gamma_{card}(a, b) \le \Bigl(\frac{\psi(b/d)}{\psi((a+1)/d)} - 1\Bigr)
        H^{card}(a, b).

    Steps of size :math:`\le 1` have defect and bound 0; b = d with b - a >= 2 has factor
    :math:`\psi(1) = \infty` (value ``inf`` unless :math:`H^{card} = 0`).
    """
    prof = as_profile(p)
    d = prof.d
    a, b = _card_pair(a, b, d)
    H = ugc_card(prof, a, b)
    if b - a <= 1:
        factor = 0.0
    else:
        factor = math.inf if b == d else _psi(b / d) / _psi((a + 1) / d) - 1.0
    return Bound(
        name="w26_lemma5",
        value=_times_product(factor, H),
        bounds=f"gamma_card({a}, {b})",
        source="Wainwright 2026 (W26), Lemma 5",
        statement="Gamma_card(a, b) <= (psi(b/d)/psi((a+1)/d) - 1) * H^card(a, b)",
        assumptions=("b < d for a finite value when b - a >= 2",),
    )


# -- W26: grids ---------------------------------------------------------------------------
def w26_theorem1(p, grid) -> Bound:
    r"""W26 Theorem 1 (Bernoulli-subset sampler on the grid :math:`t_0 < \dots < t_N`):

    .. math::

        \mathrm{KL} \le \sum_{j=0}^{N-1} \Bigl(\frac{\psi(t_{j+1})}{\psi(t_j)} - 1\Bigr)
        H(t_j, t_{j+1}) + \text{init} + \text{completion}.

    The boundary terms are 0 here (exact initialization below :math:`t_0`, exact completion
    above :math:`t_N`, DESIGN.md §3). It is the sum of Lemma 4 over the steps, so it bounds
    the path KL :math:`\sum_j \Gamma_{umask}(t_j, t_{j+1})` (>= KL of the output law).
    ``inf`` when :math:`t_0 = 0` or :math:`t_N = 1`.
    """
    prof = as_profile(p)
    g = _grid(grid)
    t = g.times
    value = sum(w26_lemma4(prof, t[j], t[j + 1]).value for j in range(g.steps))
    return Bound(
        name="w26_theorem1",
        value=float(value),
        bounds="path_kl",
        source="Wainwright 2026 (W26), Theorem 1",
        statement="KL <= sum_j (psi(t_{j+1})/psi(t_j) - 1) H(t_j, t_{j+1}) + boundary terms (0 here)",
        assumptions=("Bernoulli-subset sampler", "exact initialization and completion", "0 < t_0, t_N < 1 for a finite value"),
        plan=g,
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
        source="Wainwright 2026 (W26), Theorem 1 (card version)",
        statement="KL_path(k) <= sum_t (psi(s_{t+1}/d)/psi((s_t+1)/d) - 1) H^card(s_t, s_{t+1})",
        assumptions=("random-order fixed-cardinality sampler",),
        plan=sched,
    )


def _endpoints(prof, start, stop) -> tuple[float, float]:
    if start is None and stop is None:
        if prof.d < 3:
            raise ValueError(f"p: the canonical interval [1/d, 1-1/d] is a point for d={prof.d}; pass start, stop")
        return 1.0 / prof.d, 1.0 - 1.0 / prof.d
    if start is None or stop is None:
        raise ValueError("start, stop: give both or neither (default: the canonical interval)")
    a, b = _interval(start, stop, "start, stop")
    if not (0.0 < a < b < 1.0):
        raise ValueError(f"start, stop: need 0 < start < stop < 1, got ({a}, {b})")
    return a, b


def w26_corollary1(p, plan, *, start: float | None = None, stop: float | None = None) -> Bound:
    r"""W26 Corollary 1 (geometric grid Geo(ρ)): with N equal log-odds steps from
    :math:`t_0` to T, :math:`N \ge \log(\psi(T)/\psi(t_0))`,

    .. math::

        \mathrm{KL} \le \frac{2 H(t_0, T)}{N} \log\frac{\psi(T)}{\psi(t_0)}
        + \text{boundary terms} \quad (= 2 C_{ugc}/N \text{ on } [1/d, 1 - 1/d]).

    ``plan``: a step count N (the Geo(ρ) grid on [start, stop], default the canonical
    interval, is built by a private helper and returned as ``Bound.plan``) or a
    :class:`Grid` that is geometric in log-odds (else ValueError). Boundary terms are 0
    (exact initialization/completion). Bounds the path KL of that grid.
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
    value = 2.0 * _ugc(prof, t0, T) / N * L
    return Bound(
        name="w26_corollary1",
        value=float(value),
        bounds="path_kl",
        source="Wainwright 2026 (W26), Corollary 1",
        statement="Geo(rho) grid: KL <= (2 H(t_0, T)/N) log(psi(T)/psi(t_0)) + boundary terms (0 here)",
        assumptions=("N >= log(psi(T)/psi(t_0))", "exact initialization and completion"),
        plan=grid,
    )


def _block_data(prof, edges):
    tau = _edges(edges)
    lam = np.log(tau) - np.log1p(-tau)
    S = np.diff(lam)
    H = np.array([_ugc(prof, tau[k], tau[k + 1]) for k in range(tau.shape[0] - 1)])
    return tau, lam, S, H


def _steps_arg(steps) -> int:
    return int_arg(steps, "steps", 1)


def w26_proposition1(p, edges, steps: int) -> Bound:
    r"""W26 Proposition 1 (block schedule), upper bound.

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
        source="Wainwright 2026 (W26), Proposition 1",
        statement="block grid with sum_k N_k <= N steps: KL <= 4 C(P)/N + boundary terms (0 here)",
        assumptions=("N >= 2(K + 2 log(psi(T)/psi(t_0)))", "exact initialization and completion"),
        plan=grid,
    )


def w26_proposition1_lower(p, edges, steps: int) -> Bound:
    r"""W26 Proposition 1, lower bound as stated (THEORY.md §3): the optimal N-step error
    on :math:`[\tau_0, \tau_K]` is at least :math:`C(\mathcal P)/N`.

    **Fails** (tests/test_bounds.py, strict xfail): :math:`C(\mathcal P) \ge P_{ugc}` for
    every partition (Cauchy–Schwarz on each block), so the claim would give
    :math:`N \cdot \mathrm{opt}_N \ge P_{ugc}`, contradicting Theorem 3
    (:math:`N \cdot \mathrm{opt}_N \to P_{ugc}/2`); concrete grids beat it already at
    d = 3. See :func:`w26_proposition1_lower_corrected`.
    """
    prof = as_profile(p)
    N = _steps_arg(steps)
    tau = _edges(edges)
    return Bound(
        name="w26_proposition1_lower",
        value=partition_complexity(prof, tau) / N,
        bounds=f"optimal_path_kl(N={N}, [{tau[0]:.6g}, {tau[-1]:.6g}])",
        source="Wainwright 2026 (W26), Proposition 1 (lower bound, as quoted in THEORY.md §3)",
        statement="min over N-step grids on [tau_0, tau_K] of KL >= C(P)/N",
        assumptions=("refuted by exact checks: see w26_proposition1_lower_corrected",),
        kind=LOWER,
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


def w26_proposition1_lower_corrected(p, edges, steps: int) -> Bound:
    r"""A certified lower bound on the optimal N-step error, in place of the refuted
    :math:`C(\mathcal P)/N` (derived here, [D]):

    .. math::

        \min_{N\text{-step grids on } [\tau_0, \tau_K]} \sum_j \Gamma_{umask}(t_j, t_{j+1})
        \;\ge\; \frac{\bigl(\sum_k \sqrt{m_k}\, L_k\bigr)^2}{2(N + K - 1)},

    with :math:`L_k = \tau_k - \tau_{k-1}` and :math:`m_k \le \min_{[\tau_{k-1}, \tau_k]} h'`
    (the smallest Bernstein coefficient of h' on the block, exact arithmetic of the
    convex-hull property).

    Proof: cut every grid step at the block edges; at most N + K - 1 pieces. On a piece
    [c, e] of step [t_j, t_{j+1}] inside block k, :math:`t_{j+1} - u \ge e - u` and
    :math:`h' \ge m_k`, so its contribution to :math:`\Gamma_{umask}` is at least
    :math:`m_k (e - c)^2/2`. With :math:`n_k` pieces in block k,
    :math:`\sum_k m_k L_k^2/(2 n_k) \ge (\sum_k \sqrt{m_k} L_k)^2/(2\sum_k n_k)` by
    Cauchy–Schwarz. Refining the partition (K << N) tends to :math:`P/(2N)` of Theorem 3
    on the t-scale: :math:`\sum_k \sqrt{m_k} L_k \to \int \sqrt{h'}`.
    """
    prof = as_profile(p)
    N = _steps_arg(steps)
    tau = _edges(edges)
    d = prof.d
    K = tau.shape[0] - 1
    if d == 1:
        value = 0.0
    else:
        coef = (d - 1) * _increments(prof, strict=True)  # Bernstein coefficients of h'
        m = np.array([max(0.0, _bernstein_min(coef, tau[k], tau[k + 1])) for k in range(K)])
        value = float(np.sum(np.sqrt(m) * np.diff(tau)) ** 2 / (2 * (N + K - 1)))
    return Bound(
        name="w26_proposition1_lower_corrected",
        value=value,
        bounds=f"optimal_path_kl(N={N}, [{tau[0]:.6g}, {tau[-1]:.6g}])",
        source="derived here (replaces W26 Proposition 1's lower bound C(P)/N, refuted)",
        statement="min over N-step grids of KL_path >= (sum_k sqrt(min_k h') L_k)^2 / (2(N + K - 1))",
        assumptions=("grids from tau_0 to tau_K with exact initialization and completion",),
        kind=LOWER,
    )


def w26_theorem3(p, steps: int, *, start: float | None = None, stop: float | None = None) -> Bound:
    r"""W26 Theorem 3 (fine partition), an **asymptotic value, not a bound**:

    .. math:: \min_{N\text{-step grids}} \mathrm{KL} = \frac{P_{ugc}}{2N} + o(1/N),

    :math:`P_{ugc} = (\int_a^b \sqrt{h'})^2` on [start, stop] (default the canonical
    interval). At finite N the optimum can lie below :math:`P_{ugc}/(2N)`; test the
    convergence of N times the optimal error, not an inequality.
    """
    prof = as_profile(p)
    N = _steps_arg(steps)
    a, b = _endpoints(prof, start, stop)
    return Bound(
        name="w26_theorem3",
        value=fine_complexity(prof, (a, b)) / (2 * N),
        bounds=f"optimal_path_kl(N={N}, [{a:.6g}, {b:.6g}])",
        source="Wainwright 2026 (W26), Theorem 3",
        statement="optimal N-step error = P_ugc/(2N) + o(1/N)  (asymptotic, N -> infinity)",
        assumptions=("asymptotic statement: no finite-N inequality",),
        kind=ASYMPTOTIC,
    )


# -- UGC aggregates ------------------------------------------------------------------------
def _tc_dtc(prof) -> tuple[float, float]:
    r"""TC and DTC from the profile: :math:`TC = \int_0^1 (1-t)h'`, :math:`DTC = \int_0^1 t h'`,
    i.e. :math:`TC = d\varphi_0 - H(X)` and :math:`DTC = H(X) - d\varphi_{d-1}`."""
    phi = prof.values
    d = prof.d
    H = float(phi.sum())
    return d * float(phi[0]) - H, H - d * float(phi[-1])


def ugc_total_bound(p) -> Bound:
    r""":math:`H(0, 1) \le \min(TC, DTC)` (W26; THEORY.md §3)."""
    prof = as_profile(p)
    tc, dtc = _tc_dtc(prof)
    return Bound(
        name="ugc_total",
        value=min(tc, dtc),
        bounds="ugc(0, 1)",
        source="Wainwright 2026 (W26), UGC aggregates (THEORY.md §3)",
        statement="H(0, 1) <= min(TC, DTC)",
    )


def dhw_sandwich(p) -> tuple[Bound, Bound]:
    r"""DHW26 effective TC against the UGC (THEORY.md §3):

    .. math:: H(0, 1) \le \mathrm{DHW} \le \frac{e}{e-1} H(0, 1).

    Returns (lower, upper), both bounding ``"dhw"``; from
    :math:`t(1-t) \le t\min\{1, -\log t\} \le \frac{e}{e-1} t(1-t)` on [0, 1].
    """
    H = _ugc(as_profile(p), 0.0, 1.0)
    src = "Dmitriev et al. (DHW26) effective total correlation vs W26's UGC (THEORY.md §3)"
    return (
        Bound(name="dhw_lower", value=H, bounds="dhw", source=src, statement="H(0, 1) <= DHW", kind=LOWER),
        Bound(name="dhw_upper", value=math.e / (math.e - 1) * H, bounds="dhw", source=src, statement="DHW <= (e/(e-1)) H(0, 1)"),
    )


def dhw_tc_bound(p) -> Bound:
    r""":math:`\mathrm{DHW} \le \min(TC, DTC)` (THEORY.md §3)."""
    tc, dtc = _tc_dtc(as_profile(p))
    return Bound(
        name="dhw_tc",
        value=min(tc, dtc),
        bounds="dhw",
        source="Dmitriev et al. (DHW26), effective total correlation (THEORY.md §3)",
        statement="DHW <= min(TC, DTC)",
    )


# -- the comparison table ------------------------------------------------------------------
@dataclass(frozen=True)
class ComparisonRow:
    """One row of :func:`compare`: an exact quantity (kind ``"exact"``) or a bound.

    ``slack`` = bound / exact (1 when they are equal, including 0 = 0 and inf = inf; inf when
    exact = 0 < bound or bound = inf; 0 when exact = inf > bound; None for exact rows); ``holds`` is None for exact and asymptotic rows.
    """

    name: str
    kind: str
    quantity: str
    value: float
    exact: float | None
    slack: float | None
    holds: bool | None
    source: str = ""


@dataclass(frozen=True)
class Comparison:
    """Immutable table returned by :func:`compare`; ``str()`` prints aligned columns."""

    rows: tuple[ComparisonRow, ...]
    plan: Any
    planner: str

    @property
    def kl(self) -> float:
        return self.row("kl").value

    @property
    def path_kl(self) -> float:
        return self.row("path_kl").value

    def row(self, name: str) -> ComparisonRow:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.rows)

    @property
    def all_hold(self) -> bool:
        """Whether every (non-asymptotic) bound holds."""
        return all(r.holds is not False for r in self.rows)

    def __str__(self) -> str:
        head = ("name", "kind", "quantity", "value", "exact", "slack", "holds")

        def fmt(x):
            if x is None:
                return "-"
            if isinstance(x, bool):
                return "yes" if x else "NO"
            if isinstance(x, float):
                return f"{x:.6g}"
            return str(x)

        body = [tuple(fmt(getattr(r, f)) for f in ("name", "kind", "quantity", "value", "exact", "slack", "holds")) for r in self.rows]
        widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
        lines = ["  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in [head] + body]
        title = f"compare: plan={self.plan!r}, planner={self.planner!r}"
        return "\n".join([title, lines[0], "-" * len(lines[0])] + lines[1:])


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


def _row(bound: Bound, exact: float | None, scale: float) -> ComparisonRow:
    holds = None if exact is None else bound.holds(exact, scale=scale)
    slack = None if exact is None else _slack(bound.value, exact)
    return ComparisonRow(bound.name, bound.kind, bound.bounds, float(bound.value), exact, slack, holds, bound.source)


def compare(p, plan, planner: str = "random") -> Comparison:
    r"""Exact KL, path KL and every applicable bound for one law and one plan.

    Parameters
    ----------
    p : :class:`~mdmtheory.Joint` (the exact output law needs the table).
    plan : :class:`Schedule` (fixed-cardinality sampler) or :class:`Grid` (Bernoulli-subset).
    planner : planner name or object for the exact engine; the published bounds are for
        the random planner (``"random"``; a Grid always uses the Bernoulli sampler). For
        other planners only the exact rows and data processing are reported.

    Rows: ``kl`` = KL(p‖q) of the output law (:func:`mdmtheory.sampler_law`), ``path_kl``
    (trajectory KL, :func:`mdmtheory.exact_run`), then each bound with its value, the exact
    quantity it bounds, slack = bound/exact and whether it holds within
    ``HOLD_RTOL * max(|bound|, |exact|, d log K)`` (d log K, the largest possible
    :math:`\sum_i H(X_i)`, is the problem's scale: KL and entropies carry absolute rounding
    errors ~1e-16 even for nearly deterministic laws, so rounding of a zero quantity is not
    a violation). Schedule rows: data processing, Riemann, LC25
    Theorem 1, W26 Theorem 1 (card). Grid rows: data processing, W26 Theorem 1, Corollary 1
    (geometric grids), Proposition 1's lower bound as stated and corrected on the single
    block [t_0, t_N] (a lower bound on the *optimal* error, checked against this grid:
    necessary, not sufficient), Theorem 3 (asymptotic, no verdict). Law rows: H(0,1) <=
    min(TC, DTC) and the DHW26 sandwich.
    """
    from .samplers import exact_run  # deferred: samplers imports divergence, which imports ugc

    if not isinstance(p, Joint):
        raise ValueError(f"p: compare needs a mdmtheory.Joint (exact output law), got {type(p).__name__}")
    if not isinstance(plan, (Schedule, Grid)):
        raise ValueError(f"plan: expected a mdmtheory.Schedule or Grid, got {type(plan).__name__}")
    run = exact_run(p, plan, planner, trajectory=True)
    kl_exact = _kl(p, run.law)
    path = float(run.path_kl)
    prof = as_profile(p)
    scale = p.d * math.log(p.K)
    rows = [
        ComparisonRow("kl", "exact", "kl", kl_exact, None, None, None, "exact output law (mdmtheory.sampler_law)"),
        ComparisonRow("path_kl", "exact", "path_kl", path, None, None, None, "trajectory KL (mdmtheory.exact_run)"),
    ]
    dp = Bound("data_processing", path, "kl", "data processing inequality (THEORY.md §2)", "KL(p||q) <= KL_path")
    rows.append(_row(dp, kl_exact, scale))
    is_random = (isinstance(planner, str) and planner == "random") or getattr(planner, "name", None) == "random"
    exact_of = {"path_kl": path, "kl": kl_exact}
    if isinstance(plan, Schedule) and is_random:
        for b in (riemann_bound(prof, plan), lc25_bound(prof, plan), w26_theorem1_card(prof, plan)):
            rows.append(_row(b, exact_of[b.bounds], scale))
    elif isinstance(plan, Grid):
        rows.append(_row(w26_theorem1(prof, plan), path, scale))
        t0, tN, N = plan.times[0], plan.times[-1], plan.steps
        if _is_geometric(plan) and N >= float(log_odds(tN) - log_odds(t0)):
            rows.append(_row(w26_corollary1(prof, plan), path, scale))
        if 0.0 < t0 and tN < 1.0:
            rows.append(_row(w26_proposition1_lower(prof, (t0, tN), N), path, scale))
            rows.append(_row(w26_proposition1_lower_corrected(prof, (t0, tN), N), path, scale))
            rows.append(_row(w26_theorem3(prof, N, start=t0, stop=tN), None, scale))
    H01 = _ugc(prof, 0.0, 1.0)
    dhw = effective_total_correlation(prof)
    rows.append(_row(ugc_total_bound(prof), H01, scale))
    lo, hi = dhw_sandwich(prof)
    rows.append(_row(lo, dhw, scale))
    rows.append(_row(hi, dhw, scale))
    rows.append(_row(dhw_tc_bound(prof), dhw, scale))
    return Comparison(rows=tuple(rows), plan=plan, planner=planner if isinstance(planner, str) else repr(planner))
