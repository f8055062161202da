r"""Bounds on the factorization error, one function each, with their source and status.

Every function returns a :class:`Bound`: its value (nats), the quantity it bounds, its
kind (``"upper"``: value >= quantity; ``"lower"``: value <= quantity; ``"asymptotic"``:
an asymptotic value, not an inequality), its **status** — ``"paper"`` (the statement as
the cited paper gives it), ``"paper, via summary"`` (a paper's statement known to us only
from third-party summaries), ``"our reading"`` (our interpretation of an ambiguous
statement: a conjecture checked here, never reported as the paper's result) or
``"derived here"`` (proved in ``proofs/`` or in the docstring) — and metadata (source
paper with section/equation, assumptions), so that a table can show it beside the exact
value. Every formula, its source and its status: docs/theory.md.

:func:`compare` evaluates, for a joint law and a plan (schedule or grid), the exact KL of
the output law, the path KL and every applicable bound, in one table.

Papers: LC25 = Li & Cai, arXiv 2505.21400; W26 = Wainwright, *The data geometry of
masking diffusion* (2026), arXiv 2608.13520 (read in full; places: docs/theory.md); DHW26 = Dmitriev et al. Formulas: docs/theory.md §2–3.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from ._validate import LIMITS as _LIMITS
from ._validate import _short, int_arg
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
    "PAPER",
    "SUMMARY",
    "OUR_READING",
    "DERIVED",
    "STATUSES",
    "riemann_bound",
    "lc25_bound",
    "worst_path_kl",
    "lc25_lower_our_reading",
    "w26_lemma4",
    "w26_lemma5",
    "w26_theorem1",
    "w26_theorem1_card",
    "w26_corollary1",
    "w26_proposition1",
    "BlockAllocation",
    "w26_block_objective_min",
    "w26_proposition1_dp_lower",
    "optimal_grid_error_lower",
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
#: Status of a bound's statement (:attr:`Bound.status`, the ``status`` column of tables).
PAPER, SUMMARY, OUR_READING, DERIVED = "paper", "paper, via summary", "our reading", "derived here"
STATUSES = (PAPER, SUMMARY, OUR_READING, DERIVED)
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
        if self.kind not in (UPPER, LOWER, ASYMPTOTIC):
            raise ValueError(f"kind: expected one of {(UPPER, LOWER, ASYMPTOTIC)}, got {self.kind!r}")
        if self.status not in STATUSES + ("",):
            raise ValueError(f"status: expected one of {STATUSES} (or ''), got {self.status!r}")

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
    _increments(prof, strict=True)  # the telescoping needs a non-increasing profile
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


def lc25_bound(p, schedule) -> Bound:
    r"""LC25 Theorem 1 (Li & Cai 2025, arXiv 2505.21400), exact predictor:

    .. math::

        \mathrm{KL}(p \,\|\, q_k) \le \frac{2^{\lceil \log_2 k_{\max} \rceil} - 1}{d}
        \sum_i I(X_i; X_{-i}).

    Coincides with :func:`riemann_bound` when :math:`k_{\max}` is a power of two and is
    looser otherwise, so it also bounds the path KL. LC25's left side (the KL given the
    reveal sets, averaged over them) is the path KL, which is >= the output-law KL; the
    package checks both. **Read from third-party summaries** of LC25 (its primary text was
    not available to us; no equation number): status ``"paper, via summary"``. Held on
    every exact check here (docs/theory.md §2).
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
        source="Li & Cai 2025 (LC25, arXiv 2505.21400), Theorem 1 (read from third-party summaries)",
        statement="KL(p||q_k) <= ((2^ceil(log2 k_max) - 1)/d) * sum_i I(X_i; X_-i) (+ training error, 0 here)",
        assumptions=("random-order fixed-cardinality sampler", "exact conditionals (training error 0)"),
        status=SUMMARY,
    )


def _lc25_levels(hcard: np.ndarray, reading: str) -> float:
    r""":math:`\sum_{j \ge 0} 2^{-j} h^{card}_{m_j}` with :math:`m_j` the revealed count of
    level j (see :func:`lc25_lower_our_reading`); the geometric tail after the sizes
    saturate is summed in closed form."""
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


def worst_path_kl(p, max_size: int) -> float:
    r"""The largest path KL over the schedules whose largest step is exactly ``max_size``:

    .. math:: \max_{k:\ k_{\max} = s} \mathrm{KL}_{\text{path}}(k)
              = \max_k \sum_t \sum_{m=s_t}^{s_t+k_t-1} (\varphi_{s_t} - \varphi_m),

    by dynamic programming over the revealed count (state: revealed count and whether a
    step of size s has been taken), :math:`O(d\,s)`. The quantity that
    :func:`lc25_lower_our_reading` is compared with.
    """
    prof = as_profile(p)
    d = prof.d
    s = _max_size_arg(max_size, d)
    phi = np.asarray(prof.values, dtype=np.float64)
    cum = np.concatenate([[0.0], np.cumsum(phi)])

    def gamma(a: int, b: int) -> float:  # one step's defect: (b - a) phi_a - sum_{m<b} phi_m
        return (b - a) * float(phi[a]) - float(cum[b] - cum[a])

    # best[a][f]: max defect from a revealed to d, f = a step of size s was taken already
    best = np.full((d + 1, 2), -math.inf)
    best[d, 1] = 0.0
    for a in range(d - 1, -1, -1):
        for f in (0, 1):
            for k in range(1, min(s, d - a) + 1):
                nxt = best[a + k, 1 if (f or k == s) else 0]
                if nxt > -math.inf:
                    best[a, f] = max(best[a, f], gamma(a, a + k) + nxt)
    return float(best[0, 0])


def lc25_lower_our_reading(p, max_size: int, *, reading: str = "revealed") -> Bound:
    r"""**Our reading** of the LC25 lower bound (Li & Cai 2025, arXiv 2505.21400), a
    conjecture checked here, not LC25's theorem:

    .. math::

        \max_{k:\ k_{\max} = s} \mathrm{KL}_{\text{path}}(k) \;\ge\; \frac{s}{16 d}
        \sum_i \sum_{j \ge 0} 2^{-j}\, \mathbb{E}\, I\bigl(X_i; X_{W_j^{(-i)}}\bigr)
        \qquad (2 \le s \le d).

    **Where the statement comes from.** Only third-party summaries of LC25 were available
    to us (no section or equation number); they give "for some masking schedule, error
    >= (k_max/(16 d)) sum_i sum_{j>=0} 2^-j E I(X_i; X o W_j^(-i))" with "random subsets
    W_j of increasing size", and define neither W_j, the operation o, the error, nor the
    quantifiers. Read literally at k_max = 1 it contradicts LC25's own Theorem 1 (whose
    bound is 0 there), so the literal reading cannot be the theorem; every choice below is
    ours:

    * :math:`W_j^{(-i)}` is a uniformly random subset of :math:`[d]\setminus\{i\}` of size
      :math:`\min(2^j, d-1)`; then :math:`\sum_i \mathbb E\, I(X_i; X_W) = h^{card}_{|W|}`;
    * ``reading="revealed"`` (default): :math:`X \circ W` is X revealed on W;
      ``reading="masked"``: X with W masked (revealed on the complement of
      :math:`W \cup \{i\}`, of size :math:`d - 1 - |W|`);
    * the error is the **path KL** (LC25 Theorem 1's left side, the KL given the reveal
      sets averaged over them, is the path KL), "some schedule" is the worst schedule whose
      largest step is s (:func:`worst_path_kl`), and :math:`s \ge 2` (at s = 1 the sampler
      is exact).

    Status: held on every exact check here (hypothesis over random and near-degenerate
    laws, d <= 5, both readings; tightness search: best ratio 0.375 at d = 3), **not
    proved**. Against the output-law KL instead of the path KL it fails at s = 2 on
    near-deterministic laws (tests/test_bounds.py), which says nothing about LC25.
    docs/theory.md §2.
    """
    prof = as_profile(p)
    d = prof.d
    s = _max_size_arg(max_size, d)
    if s < 2:
        raise ValueError(
            f"max_size: our reading of the LC25 lower bound is for k_max >= 2 (at k_max = 1 the sampler is exact), got {s}"
        )
    if reading not in ("revealed", "masked"):
        raise ValueError(f"reading: expected 'revealed' or 'masked', got {reading!r}")
    value = s / (16 * d) * _lc25_levels(gain_coefficients(prof), reading)
    return Bound(
        name="lc25_lower_our_reading",
        value=value,
        bounds=f"max_path_kl(k_max={s})",
        source="our reading of Li & Cai 2025 (LC25, arXiv 2505.21400) lower bound, from third-party summaries",
        statement="max over schedules with k_max = s >= 2 of KL_path >= (s/(16 d)) sum_i sum_j 2^-j E I(X_i; X o W_j^(-i))",
        assumptions=(
            f"our reading: X o W = X {reading} on W, |W_j| = min(2^j, d-1), W uniform",
            "error = path KL; 'some schedule' = the worst schedule with k_max = s",
            "conjecture: checked on exact examples, not proved",
        ),
        kind=LOWER,
        status=OUR_READING,
    )


def _max_size_arg(max_size, d: int) -> int:
    """An integer step size in 1..d (integral floats accepted; 10**400 or Fraction refused
    without a float overflow)."""
    ok = False
    if isinstance(max_size, numbers.Integral) and not isinstance(max_size, (bool, np.bool_)):
        ok = True
    elif isinstance(max_size, numbers.Real) and not isinstance(max_size, (bool, np.bool_)):
        try:
            f = float(max_size)
            ok = math.isfinite(f) and f.is_integer() and f == max_size
        except (OverflowError, TypeError, ValueError):
            ok = False
    if not ok or not 1 <= int(max_size) <= d:
        raise ValueError(f"max_size: expected an integer in 1..d={d}, got {_short(max_size)}")
    return int(max_size)


# -- W26: one-step lemmas -----------------------------------------------------------------
def w26_lemma4(p, a: float, b: float) -> Bound:
    r"""W26 Lemma 4: :math:`\Gamma_{umask}(a, b) \le (\psi(b)/\psi(a) - 1)\, H(a, b)`
    (W26 §6.1.1, eq. (49), for 0 < a < b < 1; verified here, docs/theory.md §3).

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
    value = 2.0 * _ugc(prof, t0, T) / N * L
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
    tau = _edges(edges)
    lam = np.log(tau) - np.log1p(-tau)
    S = np.diff(lam)
    H = np.array([_ugc(prof, tau[k], tau[k + 1]) for k in range(tau.shape[0] - 1)])
    return tau, lam, S, H


def _steps_arg(steps) -> int:
    return int_arg(steps, "steps", 1)


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
    tau = _edges(edges)
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
        name="optimal_grid_error_lower",
        value=value,
        bounds=f"optimal_path_kl(N={N}, [{tau[0]:.6g}, {tau[-1]:.6g}])",
        source="derived here (proofs/optimal_grid_error_lower.md)",
        statement="min over N-step grids of KL_path >= (sum_k sqrt(min_k h') L_k)^2 / (2(N + K - 1))",
        assumptions=("grids from tau_0 to tau_K with exact initialization and completion",),
        kind=LOWER,
        status=DERIVED,
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


# -- UGC aggregates ------------------------------------------------------------------------
def _tc_dtc(prof) -> tuple[float, float]:
    r"""TC and DTC from the profile: :math:`TC = \int_0^1 (1-t)h'`, :math:`DTC = \int_0^1 t h'`,
    i.e. :math:`TC = d\varphi_0 - H(X)` and :math:`DTC = H(X) - d\varphi_{d-1}`."""
    phi = prof.values
    d = prof.d
    H = float(phi.sum())
    return d * float(phi[0]) - H, H - d * float(phi[-1])


def ugc_total_bound(p) -> Bound:
    r""":math:`H(0, 1) \le \min(TC, DTC)`, derived here (docs/theory.md §3): pointwise
    :math:`t(1-t) \le \min(t, 1-t)` under :math:`\int h'` with
    :math:`TC = \int_0^1 (1-t) h'` and :math:`DTC = \int_0^1 t h'`."""
    prof = as_profile(p)
    tc, dtc = _tc_dtc(prof)
    return Bound(
        name="ugc_total",
        value=min(tc, dtc),
        bounds="ugc(0, 1)",
        source="Wainwright 2026 (W26), App. A, eq. (61c); checked here (docs/theory.md §3)",
        statement="H(0, 1) <= min(TC, DTC)",
        status=DERIVED,
    )


def dhw_sandwich(p) -> tuple[Bound, Bound]:
    r"""DHW26 effective TC against the UGC, derived here (docs/theory.md §3):

    .. math:: H(0, 1) \le \mathrm{DHW} \le \frac{e}{e-1} H(0, 1).

    Returns (lower, upper), both bounding ``"dhw"``; from
    :math:`t(1-t) \le t\min\{1, -\log t\} \le \frac{e}{e-1} t(1-t)` on [0, 1].
    """
    H = _ugc(as_profile(p), 0.0, 1.0)
    src = "Wainwright 2026 (W26), App. A, Proposition 3, eq. (62c); checked here (docs/theory.md §3)"
    return (
        Bound(name="dhw_lower", value=H, bounds="dhw", source=src, statement="H(0, 1) <= DHW", kind=LOWER, status=DERIVED),
        Bound(name="dhw_upper", value=math.e / (math.e - 1) * H, bounds="dhw", source=src, statement="DHW <= (e/(e-1)) H(0, 1)", status=DERIVED),
    )


def dhw_tc_bound(p) -> Bound:
    r""":math:`\mathrm{DHW} \le \min(TC, DTC)`, derived here (docs/theory.md §3):
    :math:`t\min\{1, -\log t\} \le \min(t, 1 - t)` on [0, 1]."""
    tc, dtc = _tc_dtc(as_profile(p))
    return Bound(
        name="dhw_tc",
        value=min(tc, dtc),
        bounds="dhw",
        source="derived here: DHW26's effective total correlation (docs/theory.md §3)",
        statement="DHW <= min(TC, DTC)",
        status=DERIVED,
    )


# -- the comparison table ------------------------------------------------------------------
@dataclass(frozen=True)
class ComparisonRow:
    """One row of :func:`compare`: an exact quantity (kind ``"exact"``) or a bound.

    ``slack`` = bound / exact (1 when they are equal, including 0 = 0 and inf = inf; inf when
    exact = 0 < bound or bound = inf; 0 when exact = inf > bound; None for exact rows);
    ``holds`` is None for exact and asymptotic rows; ``status`` is the bound's
    :attr:`Bound.status` (``"paper"``, ``"paper, via summary"``, ``"our reading"``,
    ``"derived here"``; ``"exact"`` for exact rows).
    """

    name: str
    kind: str
    quantity: str
    value: float
    exact: float | None
    slack: float | None
    holds: bool | None
    source: str = ""
    status: str = ""


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
        cols = ("name", "kind", "status", "quantity", "value", "exact", "slack", "holds")
        head = cols

        def fmt(x):
            if x is None:
                return "-"
            if isinstance(x, bool):
                return "yes" if x else "NO"
            if isinstance(x, float):
                return f"{x:.6g}"
            return str(x)

        body = [tuple(fmt(getattr(r, f) or None) if f == "status" else fmt(getattr(r, f)) for f in cols) for r in self.rows]
        widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
        lines = ["  ".join(c.ljust(w) if i < 4 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in [head] + body]
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
    return ComparisonRow(bound.name, bound.kind, bound.bounds, float(bound.value), exact, slack, holds, bound.source, bound.status)


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
    a violation). Each row carries the bound's status (``paper``, ``paper, via summary``,
    ``our reading``, ``derived here``), printed in the table.

    Schedule rows: data processing, Riemann, LC25 Theorem 1, W26 Theorem 1 (card), and
    (k_max >= 2) *our reading* of the LC25 lower bound, whose exact column is the worst path
    KL over all schedules with this plan's k_max (:func:`worst_path_kl`), not this plan's.
    Grid rows: data processing, W26 Theorem 1, Corollary 1 (geometric grids), and on the
    single block [t_0, t_N]: W26 Proposition 1's (28c) (exact column: the minimum of the
    block objective, :func:`w26_block_objective_min`), the lower bound on the optimal
    error derived here (:func:`optimal_grid_error_lower`, checked against this grid:
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
        ComparisonRow("kl", "exact", "kl", kl_exact, None, None, None, "exact output law (mdmtheory.sampler_law)", "exact"),
        ComparisonRow("path_kl", "exact", "path_kl", path, None, None, None, "trajectory KL (mdmtheory.exact_run)", "exact"),
    ]
    dp = Bound(
        "data_processing", path, "kl", "data processing inequality (proofs/kl_le_path_kl.md)", "KL(p||q) <= KL_path", status=DERIVED
    )
    rows.append(_row(dp, kl_exact, scale))
    is_random = (isinstance(planner, str) and planner == "random") or getattr(planner, "name", None) == "random"
    exact_of = {"path_kl": path, "kl": kl_exact}
    if isinstance(plan, Schedule) and is_random:
        for b in (riemann_bound(prof, plan), lc25_bound(prof, plan), w26_theorem1_card(prof, plan)):
            rows.append(_row(b, exact_of[b.bounds], scale))
        s = plan.max_size
        if s >= 2:
            rows.append(_row(lc25_lower_our_reading(prof, s), worst_path_kl(prof, s), scale))
    elif isinstance(plan, Grid):
        rows.append(_row(w26_theorem1(prof, plan), path, scale))
        t0, tN, N = plan.times[0], plan.times[-1], plan.steps
        if _is_geometric(plan) and N >= float(log_odds(tN) - log_odds(t0)):
            rows.append(_row(w26_corollary1(prof, plan), path, scale))
        if 0.0 < t0 and tN < 1.0:
            block = (t0, tN)
            rows.append(_row(w26_proposition1_dp_lower(prof, block, N), w26_block_objective_min(prof, block, N).value, scale))
            rows.append(_row(optimal_grid_error_lower(prof, block, N), path, scale))
            rows.append(_row(w26_theorem3(prof, N, start=t0, stop=tN), None, scale))
    H01 = _ugc(prof, 0.0, 1.0)
    dhw = effective_total_correlation(prof)
    rows.append(_row(ugc_total_bound(prof), H01, scale))
    lo, hi = dhw_sandwich(prof)
    rows.append(_row(lo, dhw, scale))
    rows.append(_row(hi, dhw, scale))
    rows.append(_row(dhw_tc_bound(prof), dhw, scale))
    return Comparison(rows=tuple(rows), plan=plan, planner=planner if isinstance(planner, str) else repr(planner))
