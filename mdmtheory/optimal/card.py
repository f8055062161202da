r"""Optimal schedules: exact card schedules, the steps/path-KL frontier, optimal Bernoulli grids.

**Card sampler** (docs/design.md §2, docs/theory.md §4). For a profile c (the exact information
profile φ, or a model's cross-entropy profile) and T steps, minimize

.. math::

    J(k) = \sum_{t=1}^T k_t\, c(s_t) \quad\text{over compositions } k \text{ of } d
    \text{ into } T \text{ parts}, \qquad
    \mathrm{KL}_{\text{path}}(k) = J(k) - \sum_i c(i)
    = \sum_t \sum_{m=s_t}^{s_t+k_t-1} \bigl(c(s_t) - c(m)\bigr).

The step cost :math:`w(s, e) = (e - s)\,c(s)` is *affine in the end point e*, and
satisfies the quadrangle (Monge) inequality
:math:`w(a, c) + w(b, e) \le w(a, e) + w(b, c)` (a <= b <= c <= e) iff c is
non-increasing — then :math:`w(a,e) + w(b,c) - w(a,c) - w(b,e) = (e - c)(c(a) - c(b))`.
Both facts give the fast exact algorithm used here (the convex-hull trick, the
specialization of Monge DP to affine costs):

* *At most t steps.* Let :math:`G_t(e)` be the least cost of covering the first e tokens
  in at most t steps. For non-increasing c, :math:`G_t(e) = \min_{0 \le s \le d-1}
  [G_{t-1}(s) + (e - s)c(s)]` over **all** s, not only s < e: for s >= e the term is
  >= :math:`G_{t-1}(e)` (cut an optimal path to s at e: the removed tokens each cost
  :math:`\ge c(s)`), which is the s = e ("no step") term. So each layer is the lower
  envelope of the d lines :math:`x \mapsto G_{t-1}(s) - s\,c(s) + x\,c(s)` with sorted
  slopes, evaluated at x = 0..d: O(d) per layer after a hull, vectorized in numpy
  (:func:`_envelope_layers`). Splitting a step never raises the cost when c is non-increasing,
  so the optimum with exactly T steps equals :math:`G_T(d)` (T <= d); a path with fewer
  steps is split (single tokens peeled off the end of the largest steps) to exactly T.
* All layers t = 1..T_max give the whole frontier (every T at once) in
  :math:`O(T_{\max}\, d)` — the same order as :math:`T_{\max}` Lagrangian solves, with
  a schedule for every T and no convexity assumption; :func:`lagrangian_frontier` is the
  WQS ("Aliens") search, kept as an independent check.
* A profile that is not non-increasing (beyond ``tol``, rounding) has no Monge
  structure: :func:`optimal_schedule` then runs the plain exact DP in
  :math:`O(T d^2)` (:func:`_dp_layers`).

**Bernoulli sampler** (docs/theory.md §3, W26). For a grid :math:`t_0 < \dots < t_N` the path
KL is :math:`\sum_j \Gamma_{umask}(t_j, t_{j+1})`,
:math:`\Gamma_{umask}(a, b) = \int_a^b (h(u) - h(a))\,du`, exact from the gain polynomial
h. :func:`optimal_grid` minimizes it over the interior times (L-BFGS-B on softmax
increments, started from the equal-:math:`\sqrt{h'}` grid of W26 Theorem 3,
:func:`equal_mass_grid`); :func:`block_partition` is W26's block-boundary DP
(Proposition 1) on a fine λ-grid with edge cost :math:`\sqrt{(\lambda_j - \lambda_i)
H(\tau_i, \tau_j)}`, :math:`H(a, b) = \int_a^b t(1-t)h'(t)\,dt`; :func:`block_grid` is the
grid of Proposition 1 built on it.

Sources: Lavenant & Zanella (2025), arXiv 2510.25544; Chen, Cong & Li (2025),
arXiv 2511.04647; Wainwright (2026), *The data geometry of masking diffusion* (W26).
Checks: tests/optimal/test_optimal.py (brute force over all compositions, Monge inequality,
Theorem 3 convergence).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._estimate import Record
from ..information.profile import monotone_gap, MONOTONE_TOL as _PROFILE_MONOTONE_TOL, Profile
from ..information.divergence import card_path_terms
from ..information.profile import as_profile
from ..schedules.plans import round_cumulative, Schedule
from .._validate import int_arg as _int_arg, real_arg as _real_arg, tol_arg as _tol_arg
from ..laws.joint import Joint
from ..information.profile import information_profile

__all__ = [
    "optimal_schedule",
    "pareto_frontier",
    "Frontier",
    "penalized_schedule",
    "lagrangian_frontier",
    "LagrangianFrontier",
    "schedule_path_kl",
    "sqrt_rule_schedule",
]

#: Relative rise (to max|c|) that counts as rounding: the package's one rule,
#: :data:`mdmtheory.information.MONOTONE_TOL` (:meth:`~mdmtheory.information.Profile.is_nonincreasing`).
MONOTONE_TOL = _PROFILE_MONOTONE_TOL


# -- profiles -------------------------------------------------------------------------------
def _as_profile(profile) -> Profile:
    return as_profile(profile, name="profile", vectors=True)


_monotone_gap = monotone_gap

#: Largest ``resolution`` of :func:`block_partition` / :func:`block_grid` (an (M+1)^2 table).
MAX_BLOCK_RESOLUTION = 1 << 12


# -- exact layers: fast envelope and plain DP -----------------------------------------------
def _envelope_hull(A: np.ndarray, c: np.ndarray, idx: np.ndarray, max_rounds: int = 24) -> np.ndarray:
    """Lower hull (in s order, slopes c strictly decreasing) of the lines A(s) + x c(s), s in idx.

    Vectorized rounds remove every line that is nowhere strictly below its two neighbours;
    after ``max_rounds`` rounds (adversarial input) the sequential monotone chain finishes
    in O(n). Either way the result is the hull.
    """
    rounds = 0
    while idx.size >= 3:
        Ai, ci = A[idx], c[idx]
        dA, dc = Ai[1:] - Ai[:-1], ci[:-1] - ci[1:]
        useless = dA[:-1] * dc[1:] >= dA[1:] * dc[:-1]
        if not useless.any():
            break
        rounds += 1
        if rounds > max_rounds:
            return _hull_sequential(A, c, idx)
        keep = np.ones(idx.size, dtype=bool)
        keep[1:-1] = ~useless
        idx = idx[keep]
    return idx


def _hull_sequential(A: np.ndarray, c: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Monotone chain: the same hull as :func:`_envelope_hull`, one line at a time."""
    out: list[int] = []
    Al, cl = A.tolist(), c.tolist()
    for s in idx.tolist():
        while len(out) >= 2:
            p, u = out[-2], out[-1]
            if (Al[u] - Al[p]) * (cl[u] - cl[s]) >= (Al[s] - Al[u]) * (cl[p] - cl[u]):
                out.pop()
            else:
                break
        out.append(s)
    return np.asarray(out, dtype=np.int64)


def _envelope_layers(c: np.ndarray, T: int) -> np.ndarray:
    r"""Layers of the at-most-t DP for a non-increasing c, vectorized over e.

    Returns ``opt`` (T+1, d+1): for each layer t and end e, the start s of the last step of
    a least-cost cover of the first e tokens in at most t steps (:math:`G_t(e)`); an entry
    >= e means "no step in layer t" (backtracking clamps it to e). Each layer evaluates the
    lower envelope of the lines :math:`A(s) + x\,c(s)`, :math:`A(s) = G_{t-1}(s) - s\,c(s)`
    (slopes decreasing in s) at x = 0..d: equal slopes keep the lowest line (the first on
    ties). With :math:`b_k` the crossing of lines k and k+1 and :math:`K_k = \lceil b_k
    \rceil`, line k+1 is at most line k at an integer x iff :math:`x \ge K_k`; when K is
    non-decreasing, chaining these comparisons shows that the best line at integer x is
    the one after the :math:`\#\{k : K_k \le x\}` breakpoints (a histogram and a
    cumulative sum; ties go to the later line). Otherwise lines that are nowhere strictly
    below their hull neighbours are removed in rounds (a line that is not a vertex of the
    hull of three is not a vertex of the whole hull) and the same count runs on the hull.
    Only two rows of G are kept.
    """
    d = c.shape[0]
    e_all = np.arange(d + 1, dtype=np.float64)
    s_all = np.arange(d)
    sc = s_all * c
    opt = np.empty((T + 1, d + 1), dtype=np.int32)  # int32: half the memory traffic
    opt[0] = np.arange(d + 1)
    opt[1] = 0
    bufs = (e_all * c[0], np.empty(d + 1))  # G_1(e) = e c(0); two rows of G, alternating
    lines = (bufs[0][:d], bufs[1][:d])
    gath = np.empty(d + 1)
    A = np.empty(d)
    dc = c[:-1] - c[1:]
    strict = bool(np.all(dc > 0))
    dA, b, kf = np.empty(d - 1), np.empty(d - 1), np.empty(d - 1)
    db = np.empty(max(d - 2, 0))
    ki = np.empty(d - 1, dtype=np.intp)
    A1, A0, b1, b0, K1, K0 = A[1:], A[:-1], b[1:], b[:-1], kf[1:], kf[:-1]
    if not strict:
        # runs of equal slopes: keep one line per run (the lowest, the first on ties)
        run_start = np.flatnonzero(np.concatenate([[True], dc > 0]))
        run_of = np.repeat(np.arange(run_start.size), np.diff(np.append(run_start, d)))
    # hot loop: ufuncs with positional output arguments (measurably less call overhead)
    sub, div, mul, add, ceil, take = np.subtract, np.divide, np.multiply, np.add, np.ceil, np.take
    accumulate, bincount = np.add.accumulate, np.bincount
    # a subnormal slope gap dc makes a breakpoint overflow to inf; it is clipped to d + 1,
    # which is right (that line never wins), so the overflow is not an error
    with np.errstate(over="ignore"):
        for t in range(2, T + 1):
            p = t & 1
            cur = bufs[1 - p]
            sub(lines[p], sc, A)
            o = opt[t]
            if strict:
                sub(A1, A0, dA)
                div(dA, dc, b)  # line k+1 is at most line k at x iff x >= b_k
                np.minimum(b, d + 1, out=kf)
                ceil(kf, kf)  # K_k = ceil(b_k): for integer x, x >= b_k iff x >= K_k
                if d <= 2 or sub(K1, K0, db).min() >= 0:
                    # K non-decreasing: at every integer x the best line is the one after the
                    # #{k : K_k <= x} breakpoints (chain the pairwise comparisons both ways)
                    if d > 1 and kf[0] < 0:  # b >= 1 in exact arithmetic; guard against rounding
                        np.maximum(kf, 0, out=kf)
                    ki[...] = kf
                    accumulate(bincount(ki, None, d + 2)[: d + 1], 0, None, o)
                else:
                    keep = np.ones(d, dtype=bool)
                    keep[1:-1] = b1 > b0
                    _hull_layer(A, c, s_all[keep], o)
            else:
                mins = np.minimum.reduceat(A, run_start)
                first = np.minimum.reduceat(np.where(A <= mins[run_of], s_all, d), run_start)
                _hull_layer(A, c, first, o)
            # G_t(e) = A(o) + e c(o); for o >= e this equals G_{t-1}(e) (the no-step line)
            take(c, o, None, gath)
            mul(e_all, gath, cur)
            take(A, o, None, gath)
            add(cur, gath, cur)
    return opt


def _hull_layer(A: np.ndarray, c: np.ndarray, candidates: np.ndarray, o: np.ndarray) -> None:
    """One layer when not every line is on the hull: prune, then o(e) = the hull line after
    the breakpoints <= e (written into ``o``)."""
    d = c.shape[0]
    idx = _envelope_hull(A, c, candidates)
    with np.errstate(over="ignore"):  # a subnormal slope gap: the breakpoint is past d, clipped below
        bb = (A[idx[1:]] - A[idx[:-1]]) / (c[idx[:-1]] - c[idx[1:]])
    kk = np.maximum(np.minimum(np.ceil(bb), d + 1), 0).astype(np.intp)
    o[:] = idx[np.cumsum(np.bincount(kk, minlength=d + 2)[: d + 1])]


def _dp_layers(c: np.ndarray, T: int) -> np.ndarray:
    r"""Plain exact DP with exactly t steps, :math:`O(T d^2)`, any c (reference and fallback).

    :math:`F_t(e) = \min_{t-1 \le s < e} F_{t-1}(s) + (e - s)c(s)`; ties go to the smallest
    s (``argmin``). Vectorized over (e, s) in row blocks.
    """
    d = c.shape[0]
    F = np.full((T + 1, d + 1), np.inf)
    opt = np.full((T + 1, d + 1), -1, dtype=np.int32)
    F[0, 0] = 0.0
    s = np.arange(d)
    block = max(1, min(d + 1, (1 << 22) // max(d, 1)))
    for t in range(1, T + 1):
        prev = F[t - 1, :d]
        for lo in range(0, d + 1, block):
            e = np.arange(lo, min(d + 1, lo + block))[:, None]
            with np.errstate(invalid="ignore"):
                v = np.where(s[None, :] < e, prev[None, :] + (e - s[None, :]) * c[None, :], np.inf)
            a = np.argmin(v, axis=1)
            val = v[np.arange(v.shape[0]), a]
            F[t, lo : lo + v.shape[0]] = val
            opt[t, lo : lo + v.shape[0]] = np.where(np.isfinite(val), a, -1)
    return opt


def _backtrack(opt: np.ndarray, T: int, d: int) -> list[int]:
    """Cumulative counts of the path ending at (T, d); steps with opt == e are skipped."""
    cuts = [d]
    e = d
    for t in range(T, 0, -1):
        s = min(int(opt[t, e]), e)
        if s < 0:
            raise RuntimeError("internal: no path")  # pragma: no cover
        if s != e:
            cuts.append(s)
            e = s
    if e != 0:
        raise RuntimeError("internal: path does not start at 0")  # pragma: no cover
    return cuts[::-1]


def _split_to(sizes: list[int], T: int) -> list[int]:
    """Split steps until there are T: peel one token off the end of the largest (last on ties)."""
    sizes = list(sizes)
    while len(sizes) < T:
        k = max(sizes)
        i = len(sizes) - 1 - sizes[::-1].index(k)
        sizes[i : i + 1] = [k - 1, 1]
    return sizes


def schedule_path_kl(profile, schedule) -> float:
    r"""Path KL of a card schedule, :math:`\sum_t \sum_{m \in \text{step } t} (c(s_t) - c(m))`.

    Summed term by term (never as :math:`J(k) - \sum_i c(i)`: no cancellation); the same
    terms as :func:`mdmtheory.information.divergence.path_kl`, summed at once instead of
    step by step (so the two may differ in the last bits).
    """
    c = _as_profile(profile).values
    sched = schedule if isinstance(schedule, Schedule) else Schedule(schedule)
    if sched.d != c.shape[0]:
        raise ValueError(f"schedule: sizes sum to {sched.d}, expected d={c.shape[0]}")
    return float(np.sum(card_path_terms(c, sched)))


def _unit_exponent(c: np.ndarray) -> int:
    """k with max|c| * 2**k in [0.5, 1): scaling by a power of two is exact (no rounding),
    so the search is scale-invariant over the whole float64 range."""
    top = float(np.abs(c).max())
    return 0 if top == 0.0 else -math.frexp(top)[1]


def _times_pow2(x, k: int):
    """x * 2**k without intermediate overflow (inf when the result overflows)."""
    with np.errstate(over="ignore"):
        return np.ldexp(x, k)


def _resolve_method(c: np.ndarray, method: str, tol: float) -> tuple[str, np.ndarray, int]:
    """(method, the profile the search runs on, the exponent k it was scaled by).

    The search runs on ``c * 2**k`` (max |c| scaled into [0.5, 1) by a power of two):
    the optimum does not change when the profile is multiplied by a constant, and the
    envelope never compares values of 1e250 or 1e-200 directly.
    """
    if not isinstance(method, str) or method not in ("auto", "envelope", "dp"):
        raise ValueError(f"method: expected 'auto', 'envelope' or 'dp', got {method!r}")
    tol = _tol_arg(tol)
    factor = _unit_exponent(c)
    c = _times_pow2(c, factor)
    # the package's one rule (Profile.is_nonincreasing): rise <= tol * max|c|
    scale = float(np.abs(c).max())
    gap = _monotone_gap(c)
    monotone = gap <= tol * scale
    if method == "envelope" and not monotone:
        raise ValueError(
            f"method: 'envelope' needs a non-increasing profile, but it rises by {gap:.3g}; "
            "use method='dp' (exact for any profile) or 'auto'"
        )
    if method == "auto":
        method = "envelope" if monotone else "dp"
    # within the rounding tolerance the envelope runs on the running minimum of c; a schedule
    # optimal for it is optimal for c up to 2 d * gap <= 2 d tol max(1, max|c|)
    return method, (np.minimum.accumulate(c) if method == "envelope" else c), factor


def _layers(c: np.ndarray, T: int, method: str) -> np.ndarray:
    return _envelope_layers(c, T) if method == "envelope" else _dp_layers(c, T)


def optimal_schedule(profile, steps: int, *, method: str = "auto", tol: float = MONOTONE_TOL) -> Schedule:
    r"""The T-step card schedule of least path KL, exact (docs/design.md §2).

    Minimizes :math:`\sum_t k_t c(s_t)` over all compositions of d into T = ``steps``
    parts, equivalently the path KL :math:`\sum_t k_t c(s_t) - \sum_i c(i)`.

    Parameters
    ----------
    profile : Joint, Profile or array_like (d,)
        The exact profile φ or a model's cross-entropy profile c.
    steps : int, 1 <= steps <= d
    method : {'auto', 'envelope', 'dp'}
        ``'envelope'``: the lower-envelope (convex-hull-trick) layers of the module
        docstring, :math:`O(T d)` (each layer's hull: at most 24 vectorized pruning rounds,
        then an O(d) sequential pass; smooth profiles need 0 rounds), exact for
        non-increasing c. ``'dp'``: the plain exact DP, :math:`O(T d^2)`, any c.
        ``'auto'`` (default): envelope when c is non-increasing up to ``tol``, else dp —
        a profile that is not non-increasing has no Monge structure and gets the plain
        DP, never an approximation.
    tol : float
        Increases of c up to ``tol`` × max(1, max|c|) count as rounding (exact profiles
        computed from entropies carry ~1e-16 noise): the envelope then runs on the running
        minimum of c and the schedule is optimal for c within
        :math:`2 d \cdot \max_s (c(s) - \min_{u \le s} c(u))`.

    Resolution: the search runs on the profile scaled by a power of two (exact) so that
    max|c| is about 1; the result is optimal for any positive multiple of c, to within
    :math:`\approx d \cdot 2^{-52} \max|c|` in path KL. Path-KL differences far below
    that (a profile spanning 1 and 1e-200) are below float64 resolution of the sums and
    are not resolved.

    Returns
    -------
    Schedule
        An optimal schedule. Ties: when several compositions attain the optimum (e.g. where
        c is flat), which one is returned is deterministic but depends on the method —
        compare path KLs, not sizes. The envelope method breaks ties toward later step
        starts and, when fewer than T steps are optimal, splits single tokens off the end
        of the largest steps; the dp method takes the smallest start of each last step.
    """
    c = _as_profile(profile).values
    d = c.shape[0]
    steps = _int_arg(steps, "steps", 1, d, f" (a schedule of d={d} tokens has at most d steps)")
    method, cc, _ = _resolve_method(c, method, _real_arg(tol, "tol"))
    opt = _layers(cc, steps, method)
    cuts = _backtrack(opt, steps, d)
    return Schedule(_split_to(list(np.diff(cuts)), steps))


def _all_cuts(opt: np.ndarray, T_max: int, d: int) -> np.ndarray:
    r"""Backtrack every T = 1..T_max at once: ``cuts[T-1, :T+1]`` are the cumulative counts
    :math:`0 = s_1 \le \dots \le s_{T+1} = d` of the optimal path with at most T steps
    (equal neighbours: a layer without a step). Vectorized over T: lane T is at layer
    T - j in round j."""
    width = T_max + 1
    cuts = np.zeros(T_max * width, dtype=np.int32)
    lanes = np.arange(T_max)
    cuts[lanes * width + lanes + 1] = d
    flat = opt.ravel()
    stride = opt.shape[1]
    cur = np.full(T_max, d, dtype=np.int64)
    # lane i (T = i + 1) is at layer L = i + 1 - j in round j: opt index L*stride + e, and
    # the cut before layer L goes to cuts[i, L - 1], flat index i*(width + 1) - j
    opt_base = (lanes + 1) * stride
    cut_base = lanes * (width + 1)
    for j in range(T_max):
        c_j = cur[j:]
        k = opt_base[j:] + c_j
        k -= j * stride
        np.minimum(flat[k], c_j, out=c_j)
        cuts[cut_base[j:] - j] = c_j
    if np.any(cur != 0):
        raise RuntimeError("internal: a backtracked path does not start at 0")  # pragma: no cover
    return cuts.reshape(T_max, width)


def _frontier_kls(c: np.ndarray, cuts: np.ndarray) -> tuple[np.ndarray, bool]:
    """Path KL of every lane's path, term by term: sum_m (c(start of m's step) - c(m)) >= 0;
    and whether some lane has an empty layer (fewer steps than its T)."""
    T_max, d = cuts.shape[0], c.shape[0]
    out = np.empty(T_max)
    chunk = max(1, (1 << 15) // max(d, 1))  # ~32k elements per block: stays in cache
    col = np.arange(T_max)
    empty = False
    for lo in range(0, T_max, chunk):
        rows = np.arange(lo, min(T_max, lo + chunk))
        tri = col[None, :] <= rows[:, None]  # steps t < T of lane T = row + 1
        block = cuts[rows]
        starts = block[:, :-1][tri]
        sizes = np.diff(block, axis=1)[tri]
        empty = empty or not sizes.all()
        start_of = np.repeat(starts, sizes).reshape(rows.size, d)
        out[rows] = np.sum(c[start_of] - c[None, :], axis=1)
    return out, empty


@dataclass(frozen=True, eq=False)
class Frontier(Record):
    r"""Optimal path KL for every step count T = 1..T_max (the steps / path-KL frontier).

    ``path_kl[T-1]`` is the least path KL with T steps and :meth:`schedule` (T) an optimal
    schedule (:attr:`schedules` builds them all). ``method`` is the algorithm used
    ('envelope' or 'dp'). For a non-increasing profile the frontier is convex in T (Monge
    costs); :attr:`penalties` gives, for each T, the interval of per-step prices λ at which
    T steps are optimal for path KL + λ T (the Lagrangian view, :func:`penalized_schedule`).
    """

    steps: np.ndarray
    path_kl: np.ndarray
    cuts: np.ndarray
    method: str

    @property
    def d(self) -> int:
        return int(self.cuts[0, 1])

    def schedule(self, steps: int) -> Schedule:
        """An optimal schedule with ``steps`` steps (1 <= steps <= T_max)."""
        T = _int_arg(steps, "steps", 1, int(self.steps[-1]))
        sizes = np.diff(self.cuts[T - 1, : T + 1])
        return Schedule(_split_to([int(k) for k in sizes if k > 0], T))

    @property
    def schedules(self) -> tuple[Schedule, ...]:
        """Optimal schedules for T = 1..T_max (built on access)."""
        return tuple(self.schedule(T) for T in self.steps)

    @property
    def penalties(self) -> np.ndarray:
        r"""(T_max, 2): :math:`[\mathrm{KL}(T) - \mathrm{KL}(T+1),\ \mathrm{KL}(T-1) - \mathrm{KL}(T)]`
        (+∞ above for T = 1; below for T = T_max: 0 if T_max = d, else unknown, NaN)."""
        v = self.path_kl
        lo = np.append(v[:-1] - v[1:], 0.0 if int(self.steps[-1]) == self.d else np.nan)
        hi = np.concatenate([[np.inf], v[:-1] - v[1:]])
        return np.stack([lo, hi], axis=1)

    def __repr__(self) -> str:
        return f"Frontier(d={self.d}, T=1..{int(self.steps[-1])}, method={self.method!r})"


def pareto_frontier(profile, max_steps: int, *, method: str = "auto", tol: float = MONOTONE_TOL) -> Frontier:
    r"""Optimal schedule and path KL for every T = 1..``max_steps`` at once.

    One pass of the layered DP (see :func:`optimal_schedule` for ``method``, ``tol`` and
    ties) up to T_max = ``max_steps`` gives the optimum for every T <= T_max:
    :math:`O(T_{\max} d)` with the envelope method, then one vectorized backtrack for all
    T. Path KLs are summed term by term (no cancellation). Cross-checked in the tests
    against the per-T DP and the Lagrangian (WQS) search :func:`lagrangian_frontier`.
    """
    c = _as_profile(profile).values
    d = c.shape[0]
    T = _int_arg(max_steps, "max_steps", 1, d, f" (a schedule of d={d} tokens has at most d steps)")
    method, cc, _ = _resolve_method(c, method, _real_arg(tol, "tol"))
    opt = _layers(cc, T, method)
    cuts = _all_cuts(opt, T, d)
    kls, empty = _frontier_kls(c, cuts)
    # lanes with fewer than T real steps (flat stretches) are split; recompute their KL
    short = []
    if empty:
        short = np.flatnonzero(np.sum(np.diff(cuts, axis=1) > 0, axis=1) < np.arange(1, T + 1))
    fr = Frontier(steps=np.arange(1, T + 1), path_kl=kls, cuts=cuts, method=method)
    for i in short:
        kls[i] = schedule_path_kl(Profile(c), fr.schedule(int(i) + 1))
    for arr in (fr.steps, kls, cuts):
        arr.setflags(write=False)
    return fr


# -- Lagrangian (WQS / "Aliens") ------------------------------------------------------------
def _penalized(c: np.ndarray, lam: float) -> tuple[float, list[int]]:
    r"""min over any number of steps of :math:`\sum_t (k_t c(s_t) + \lambda)`, c non-increasing.

    Online convex-hull trick: lines :math:`G(s) - s c(s) + x c(s)` enter in order of s
    (decreasing slopes) once G(s) is known; queries x = e increase. O(d), exact. Ties go to
    the earlier line (fewer, longer last steps).
    """
    d = c.shape[0]
    cl = c.tolist()
    G = [0.0] * (d + 1)
    arg = [0] * (d + 1)
    qs: list[int] = []
    qA: list[float] = []
    head = 0
    for e in range(1, d + 1):
        s = e - 1
        A = G[s] - s * cl[s]
        # push line s (slopes non-increasing)
        while len(qs) - head >= 1 and cl[qs[-1]] == cl[s]:
            if A < qA[-1]:
                qs.pop()
                qA.pop()
            else:
                break
        if not (len(qs) - head >= 1 and cl[qs[-1]] == cl[s]):
            while len(qs) - head >= 2:
                p, u = qs[-2], qs[-1]
                if (qA[-1] - qA[-2]) * (cl[u] - cl[s]) >= (A - qA[-1]) * (cl[p] - cl[u]):
                    qs.pop()
                    qA.pop()
                else:
                    break
            qs.append(s)
            qA.append(A)
        head = min(head, len(qs) - 1)
        while len(qs) - head >= 2 and qA[head + 1] + e * cl[qs[head + 1]] < qA[head] + e * cl[qs[head]]:
            head += 1
        best = qs[head]
        G[e] = G[best] + (e - best) * cl[best] + lam
        arg[e] = best
    cuts = [d]
    e = d
    while e > 0:
        e = arg[e]
        cuts.append(e)
    return G[d], cuts[::-1]


def penalized_schedule(profile, penalty: float) -> Schedule:
    r"""The schedule minimizing path KL + ``penalty`` × (number of steps), over all T.

    The Lagrangian relaxation behind the WQS ("Aliens") search: for a non-increasing
    profile the frontier :math:`T \mapsto \mathrm{KL}^*(T)` is convex, so every T is
    optimal for some price λ >= 0 (:attr:`Frontier.penalties`). Exact, O(d) (online
    convex-hull trick). Needs a non-increasing profile (up to the rounding tolerance of
    :func:`optimal_schedule`).
    """
    c = _as_profile(profile).values
    lam = _real_arg(penalty, "penalty")
    if lam < 0:
        raise ValueError(f"penalty: expected a price >= 0 per step, got {lam}")
    method, cc, factor = _resolve_method(c, "auto", MONOTONE_TOL)
    if method != "envelope":
        raise ValueError(
            "profile: the Lagrangian search needs a non-increasing profile; use pareto_frontier(method='dp')"
        )
    lam = float(_times_pow2(lam, factor))
    if lam == math.inf:  # the price dwarfs every profile: one step
        return Schedule((c.shape[0],))
    _, cuts = _penalized(cc, lam)
    return Schedule(np.diff(cuts))


@dataclass(frozen=True)
class LagrangianFrontier(Record):
    """Frontier from the Lagrangian search: path KL for every T, schedules at the hull vertices."""

    steps: np.ndarray
    path_kl: np.ndarray
    vertices: tuple[int, ...]
    vertex_schedules: tuple[Schedule, ...]
    solves: int


def lagrangian_frontier(profile, max_steps: int) -> LagrangianFrontier:
    r"""Every T = 1..``max_steps`` by the Lagrangian (WQS / "Aliens") search.

    For a non-increasing profile :math:`\mathrm{KL}^*(T)` is convex in T (Monge costs), so
    it is the lower convex hull of the points :math:`(T, \mathrm{KL}^*(T))`. The hull is
    found by the Eisner–Severance recursion: between two known vertices
    :math:`(T_1, K_1), (T_2, K_2)` solve the penalized problem at the slope
    :math:`\lambda = (K_1 - K_2)/(T_2 - T_1)` (:func:`penalized_schedule`); a solution
    strictly below the chord is a new vertex, otherwise the chord is a hull edge and the
    values between are on it. One O(d) solve per vertex and per edge. Returns the path KL
    at every T (interpolated along edges, exact by convexity) and the schedules at the
    vertices. An independent check of :func:`pareto_frontier`.
    """
    c = _as_profile(profile).values
    d = c.shape[0]
    T = _int_arg(max_steps, "max_steps", 1, d, f" (a schedule of d={d} tokens has at most d steps)")
    method, cc, factor = _resolve_method(c, "auto", MONOTONE_TOL)
    if method != "envelope":
        raise ValueError(
            "profile: the Lagrangian search needs a non-increasing profile; use pareto_frontier(method='dp')"
        )
    scale = float(np.abs(c).max()) * d
    solves = 0

    def kl_of(cuts):
        sizes = np.diff(cuts)
        start_of = np.repeat(np.asarray(cuts[:-1]), sizes)
        return float(np.sum(c[start_of] - c))

    # endpoints: T = 1 (one step) and T = d (path KL 0)
    verts = {1: (kl_of([0, d]), [0, d]), d: (kl_of(list(range(d + 1))), list(range(d + 1)))}
    stack = [(1, d)] if d > 1 else []
    while stack:
        T1, T2 = stack.pop()
        if T1 >= T or T2 - T1 <= 1:
            continue
        K1, K2 = verts[T1][0], verts[T2][0]
        lam = (K1 - K2) / (T2 - T1)
        _, cuts = _penalized(cc, max(float(_times_pow2(lam, factor)), 0.0))
        solves += 1
        T3 = len(cuts) - 1
        K3 = kl_of(cuts)
        chord = K1 + lam * T1
        if T1 < T3 < T2 and K3 + lam * T3 < chord - 1e-12 * scale:
            verts[T3] = (K3, cuts)
            stack.extend([(T1, T3), (T3, T2)])
    vt = np.array(sorted(verts))
    vk = np.array([verts[t][0] for t in vt])
    steps = np.arange(1, T + 1)
    kls = np.interp(steps, vt, vk)
    inside = [t for t in vt if t <= T]
    return LagrangianFrontier(
        steps=steps,
        path_kl=kls,
        vertices=tuple(int(t) for t in inside),
        vertex_schedules=tuple(Schedule(np.diff(verts[t][1])) for t in inside),
        solves=solves,
    )


def _profile_values(profile) -> np.ndarray:
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
