r"""Multi-block certified schedules: W26 Theorem 2 (§4.4.1) and its boundary DP (§4.4.2).

W26 = Wainwright (2026), *The data geometry of masking diffusion: certified-optimal
schedules via unmasking growth complexity*, arXiv 2608.13520 (read in full; every item with
its place and status: docs/theory.md §3 and §5). Notation: :math:`\psi(t) = t/(1-t)`,
:math:`\lambda = \varphi(t) = \log\psi(t)`, UGC :math:`H(a, b) = \int_a^b t(1-t)h'(t)\,dt`
(W26 eq. 2c).

**1. Blocks** (W26 §4.1, eq. 25). A partition :math:`t_0 = b_0 < \dots < b_K = T` of the
reveal interval (default the canonical :math:`[1/d, 1-1/d]`, W26 §5.1), block lengths
:math:`S_k = \varphi(b_{k+1}) - \varphi(b_k)` and UGC masses :math:`H_k = H(b_k, b_{k+1})`.

**2. Per-block upper bounds** (W26 Prop. 2, eqs. 32–34, 36a; Theorem 2's union bound (57)).
For each block the dyadic statistic Q of :mod:`mdmtheory.information.dyadic` along one coupled reveal
trajectory per clean sample, with the corrected weights :math:`w_j = v_j(1 - v_{j+1})`
(default; W26's stated :math:`v_{j+1} - v_j` with ``weights="stated"`` — docs/theory.md §5:
eq. (32c) fails on a partial last interval), and the one-sided empirical-Bernstein bound
:math:`B_k \ge \mathbb E Q_k` of :func:`mdmtheory.design.certify` (same ``form``,
truncation and range; confidence :math:`1 - \alpha/K` per block, so all K hold together
with probability :math:`\ge 1 - \alpha`). Then :math:`U_k := 2B_k \ge 2\mathbb E Q_k \ge
H_k` plays the role of W26's :math:`\hat H_{k,m} + \hat r_k` (:math:`\hat H = 2\bar Q`,
eq. 33b; our radius is one-sided Maurer–Pontil on our truncation, derived here, where W26's
(34b) is two-sided on a truncation at a known moment bound :math:`B_\alpha`, eq. 33a, which
exact-conditional laws do not supply).

**3. Step allocation** (``rule``). Surrogate complexity
:math:`\hat C = (\sum_k \sqrt{S_k U_k})^2` (W26 eq. 36b).

* ``"w26"`` — W26 Theorem 2 as printed: budget :math:`N = \max\{\lceil 8\hat C/\varepsilon
  \rceil, \lceil 2(K + 2L)\rceil\}` (eq. 38 and Theorem 2's condition
  :math:`N \ge 2\{K + 2(\varphi(T) - \varphi(t_0))\}`, :math:`L = \varphi(T) - \varphi(t_0)`;
  the condition is what makes :math:`\sum_k \hat N_k \le N` in the proof §6.4.2),
  multipliers :math:`\hat\rho_k = \min\{1, (4\sqrt{\hat C}/N)\sqrt{S_k/U_k}\}` (eq. 37a),
  :math:`\hat N_k = \lceil S_k/\log(1+\hat\rho_k)\rceil` steps in block k (proof §6.4.1),
  placed at equal log-odds spacing (each step's odds ratio is then
  :math:`e^{S_k/\hat N_k} \le 1 + \hat\rho_k`, the Geo(:math:`\hat\rho_k`) guarantee with
  no clipped last step). W26 reserves :math:`\varepsilon/2` for the initialization and
  completion terms (§4.4.1 after Theorem 2); here both are 0 (exact draws before
  :math:`t_0` and after T), so the certified bound is at most :math:`\varepsilon/2`.
* ``"tight"`` — the least total N whose best allocation (W26's integer program (26b), with
  :math:`U_k` for :math:`H_k`) has :math:`\sum_k (e^{S_k/N_k} - 1) U_k \le \varepsilon`
  (greedy marginal allocation: each term is convex and decreasing in :math:`N_k`, so greedy
  is exact for every N).

Either way the certified grid has :math:`N_k` equal log-odds steps in block k, and W26
Theorem 1 (eq. 17a, no boundary terms) gives on the event :math:`U_k \ge H_k\ \forall k`

.. math::

    \mathrm{KL}(p \,\|\, q_{\text{grid}}) \le \sum_k (e^{S_k/N_k} - 1) H_k
    \le \sum_k (e^{S_k/N_k} - 1) U_k =: \text{bound} \le \varepsilon .

**4. Boundaries** (W26 §4.4.2, eqs. 39a–b). Candidate times :math:`\tau_0 = t_0 < \dots <
\tau_J = T` equally spaced in :math:`\lambda` at ``resolution`` points per doubling of the
odds (spacing :math:`\log 2/r`; the last cell may be shorter), so that every dyadic grid of
every candidate interval lies on the candidate grid. The DP minimizes
:math:`\sum_k e(j_k, j_{k+1})`, :math:`e(i, j) = \sqrt{S(\tau_i, \tau_j)\,U(\tau_i, \tau_j)}`
over exactly K blocks (W26 writes :math:`\mathsf H`; with samples its "data-dependent
version" uses confidence bounds — W26 gives no construction). Two valid constructions here:

* ``boundaries="split"`` (default): the DP runs on the first ``split`` fraction of the
  samples, the certificate (step 2) on the others — the chosen partition is independent of
  the certifying samples, so Theorem 2 for a fixed partition applies (derived here).
* ``boundaries="union"``: one set of samples; the DP's upper bounds hold for all
  :math:`J(J+1)/2` candidate intervals at once (confidence :math:`1 - \alpha/P` each, P the
  number of candidate intervals), so in particular for the chosen blocks (derived here).

Given ``edges`` the partition is fixed and every sample certifies (no DP).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import rel_entr, xlogy

from .._estimate import PlanRecord, Record
from .._moved import options_from, renamed_keyword
from ..information.dyadic import check_oracle, dyadic_weights, FORMS, oracle_samples, WEIGHTS
from ..laws.joint import Joint
from ..laws.oracles import empirical_oracle, loo_conditionals, MixtureOfProductsLaw
from ..schedules.plans import Grid
from .._moved import renamed_keywords
from .._validate import choice_arg as _choice_arg, float_array as _float_array, int_arg as _int_arg, LIMITS, \
    real_arg as _real_arg, samples_array as _samples_array, work_bound as _work_bound
from .certificate import CertificateOptions, _confidence, empirical_bernstein_radius, _interval, _range_entropy

__all__ = ["BlockCertificate", "certify_blocks", "BLOCK_RULES", "BOUNDARIES", "candidate_grid", "interval_statistics"]

#: Step allocation rules: W26 Theorem 2 as printed, or the least N whose allocation meets eps.
BLOCK_RULES = ("w26", "tight")
#: How block boundaries are chosen from data when ``edges`` is not given.
BOUNDARIES = ("split", "union")
#: Most entries n·(J + 1)² of :func:`interval_statistics`' table Q (2 GiB of float64).
MAX_INTERVAL_ENTRIES = 1 << 28


def _lam(t):
    t = np.asarray(t, dtype=np.float64)
    return np.log(t) - np.log1p(-t)


def _from_lam(lam):
    return 1.0 / (1.0 + np.exp(-np.asarray(lam, dtype=np.float64)))


@renamed_keywords(t0="start", T="stop")
def candidate_grid(start: float, stop: float, resolution: int = 4) -> tuple[np.ndarray, int]:
    r"""Candidate boundaries :math:`\tau_0 = t_0 < \dots < \tau_J = T` for W26's DP (§4.4.2),
    :math:`t_0` = ``start``, T = ``stop``.

    Equally spaced in log reveal odds with ``resolution`` = r points per doubling
    (spacing :math:`\log 2 / r`), the last cell possibly shorter (a cell under 1e-9 of the
    spacing is merged), so that :math:`\psi(\tau_{i+r}) = 2\psi(\tau_i)`: the dyadic grid
    (W26 eq. 32a) of every candidate interval :math:`[\tau_i, \tau_j]` is
    :math:`\tau_i, \tau_{i+r}, \tau_{i+2r}, \dots, \tau_j`. Returns ``(tau, r)``.

    Examples
    --------
    >>> tau, r = candidate_grid(0.2, 0.8, 2)   # psi: 0.25 ... 4, four doublings
    >>> tau.shape[0], r
    (9, 2)
    """
    r = _int_arg(resolution, "resolution", 1, 64)
    t0, T = _real_arg(start, "start"), _real_arg(stop, "stop")
    if not 0.0 < t0 < T < 1.0:
        raise ValueError(f"start, stop: expected reveal times 0 < start < stop < 1, got ({t0}, {T})")
    l0, l1 = float(_lam(t0)), float(_lam(T))
    h = math.log(2.0) / r
    n = int(math.floor((l1 - l0) / h + 1e-9))
    lam = l0 + h * np.arange(n + 1)
    if l1 - lam[-1] > 1e-9 * h:
        lam = np.append(lam, l1)
    else:
        lam[-1] = l1
    tau = _from_lam(lam)
    tau[0], tau[-1] = t0, T
    return tau, r


def _dyadic_path(i: int, j: int, r: int) -> list[int]:
    """Indices of the dyadic grid of [tau_i, tau_j] on a candidate grid with r points per doubling."""
    return list(range(i, j, r)) + [j]


@dataclass(frozen=True)
class IntervalStatistics(Record):
    r"""Per-sample dyadic statistics Q of every candidate interval (see :func:`interval_statistics`).

    ``Q[:, i, j]`` (i < j) is Q of :math:`[\tau_i, \tau_j]` for each sample (truncated for
    ``form="kl"``), ``R[i, j]`` the length of an interval surely holding every value,
    ``bias[i, j]`` the truncation bias allowance (0 for ``form="entropy"``), ``W[i, j]`` the
    sum of the weights.
    """

    tau: np.ndarray
    resolution: int
    Q: np.ndarray
    R: np.ndarray
    bias: np.ndarray
    W: np.ndarray
    cut: float


@renamed_keywords(law="p")
def interval_statistics(p, xs, U, tau, resolution, *, weights="corrected", form="entropy", tail=1e-3,
                        batch=256) -> IntervalStatistics:
    r"""Q of every candidate interval :math:`[\tau_i, \tau_j]` from one coupled trajectory per sample.

    The conditionals :math:`\mu_i(\cdot, X_{\tau_p|i})` (:func:`~mdmtheory.laws.loo_conditionals`
    at the reveal set :math:`\{k: U_k \le \tau_p\}`) are computed once per candidate time;
    the per-step terms :math:`T_{ab}` (``"kl"``: :math:`\sum_i \mathrm{KL}(C_{b,i}\|C_{a,i})`;
    ``"entropy"``: :math:`\sum_i H(C_{a,i}) - H(C_{b,i})`) for :math:`0 < b - a \le r`;
    then :math:`Q_{ij} = \sum w_{ab} T_{ab}` over the dyadic path of :math:`[\tau_i, \tau_j]`
    (the same number :mod:`mdmtheory.information.dyadic` gives for that interval with the same samples
    and U). ``form="kl"``: each :math:`T_{ab}` is cut at :math:`d(m_{ab}\log K + \tau)` as in
    :func:`mdmtheory.design.certify`, one τ for all intervals
    (:math:`\tau = \max\{0, \log(d\,W_{\max}/\mathrm{tail})\}`), bias allowance
    :math:`d e^{-\tau} W_{ij} \le` ``tail``.
    """
    p = _fast_oracle(p) if isinstance(p, Joint) else check_oracle(p, "p")
    d, K = int(p.d), int(p.K)
    xs = _samples_array(xs, "xs", d=d, K=K)
    U = _float_array(U, "U", ndim=2, what=f"(n, d) = {xs.shape}")
    if U.shape != xs.shape or np.any(U < 0) or np.any(U > 1):
        raise ValueError(f"U: expected uniform reveal times in [0, 1] of the shape of xs {xs.shape}, "
                         f"got shape {U.shape}")
    tau = _float_array(tau, "tau", ndim=1, what="(J + 1,)")
    if tau.shape[0] < 2 or np.any(np.diff(tau) <= 0) or tau[0] <= 0 or tau[-1] >= 1:
        raise ValueError(f"tau: expected increasing candidate times 0 < tau_0 < ... < tau_J < 1 (candidate_grid), "
                         f"got {tau.shape[0]} values")
    r = _int_arg(resolution, "resolution", 1, 64)
    weights = _choice_arg(weights, "weights", WEIGHTS)
    form = _choice_arg(form, "form", FORMS)
    tail = _real_arg(tail, "tail")
    if not tail > 0:
        raise ValueError(f"tail: expected a truncation allowance > 0 (nats), got {tail}")
    batch = _int_arg(batch, "batch", 1)
    J = tau.shape[0] - 1
    n = xs.shape[0]
    _work_bound(n * (J + 1) ** 2, MAX_INTERVAL_ENTRIES, "tau", f"n·(J + 1)² = {n}·{J + 1}² interval statistics")
    # weights and ranges of every candidate interval
    Wmat = np.zeros((J + 1, J + 1))
    wstep = {}
    for i in range(J):
        for j in range(i + 1, J + 1):
            path = _dyadic_path(i, j, r)
            w = dyadic_weights(tau[path], weights)
            Wmat[i, j] = w.sum()
            wstep[i, j] = (path, w)
    Wmax = float(Wmat.max())
    if form == "kl":
        tr = max(0.0, math.log(d * Wmax / tail))
        bias = d * math.exp(-tr) * Wmat
    else:
        tr = 0.0
        bias = np.zeros_like(Wmat)
    R = np.zeros_like(Wmat)
    for (i, j), (path, w) in wstep.items():
        R[i, j] = (d * d * math.log(K) * float(w.max()) + d * tr * float(w.sum())) if form == "kl" \
            else _range_entropy(w, d, K)
    Q = np.zeros((n, J + 1, J + 1))
    cut = total = 0
    for s in range(0, n, batch):
        x, u = xs[s : s + batch], U[s : s + batch]
        b = x.shape[0]
        C = [loo_conditionals(p, x, u <= tp) for tp in tau]
        Tab = {}
        if form == "entropy":
            ent = np.stack([-np.sum(xlogy(c, c), axis=(1, 2)) for c in C], axis=1)  # (b, J+1)
        for a in range(J):
            for g in range(1, r + 1):
                bb = a + g
                if bb > J:
                    break
                if form == "kl":
                    t = rel_entr(C[bb], C[a]).sum(axis=(1, 2))
                    m = ((u > tau[a]) & (u <= tau[bb])).sum(axis=1)
                    c = d * (m * math.log(K) + tr)
                    cut += int(np.sum(t > c))
                    total += b
                    t = np.minimum(t, c)
                else:
                    t = ent[:, a] - ent[:, bb]
                Tab[a, bb] = t
        for (i, j), (path, w) in wstep.items():
            acc = np.zeros(b)
            for k in range(len(path) - 1):
                acc += w[k] * Tab[path[k], path[k + 1]]
            Q[s : s + b, i, j] = acc
    return IntervalStatistics(tau=tau, resolution=r, Q=Q, R=R, bias=bias, W=Wmat, cut=cut / max(1, total))


def _upper(stats: IntervalStatistics, i: int, j: int, rows: np.ndarray, conf: float) -> tuple[float, float, float]:
    """(mean, radius, U = 2 (mean + radius + bias)) of the interval (i, j) on the given sample rows."""
    q = stats.Q[rows, i, j]
    mean = float(q.mean())
    rad = empirical_bernstein_radius(q, float(stats.R[i, j]), conf)
    return mean, rad, 2.0 * (mean + rad + float(stats.bias[i, j]))


def _dp(lam: np.ndarray, Umat: np.ndarray, K: int) -> list[int]:
    """W26 eq. (39b): indices 0 = j_0 < ... < j_K = J minimizing sum_k sqrt(S U)."""
    J = lam.shape[0] - 1
    S = lam[None, :] - lam[:, None]
    idx = np.arange(J + 1)
    with np.errstate(invalid="ignore"):
        cost = np.where(idx[None, :] > idx[:, None], np.sqrt(np.maximum(S, 0) * np.maximum(Umat, 0)), np.inf)
    F = np.full(J + 1, np.inf)
    F[0] = 0.0
    back = np.zeros((K + 1, J + 1), dtype=np.int64)
    for k in range(1, K + 1):
        v = F[:, None] + cost
        back[k] = np.argmin(v, axis=0)
        F = v[back[k], idx]
    path = [J]
    for k in range(K, 0, -1):
        path.append(int(back[k, path[-1]]))
    return path[::-1]


def _greedy(S: np.ndarray, U: np.ndarray, eps: float) -> list[int]:
    """Least total steps with sum_k (exp(S_k/N_k) - 1) U_k <= eps (exact: convex separable terms)."""
    import heapq

    N = [1] * len(S)
    f = lambda k, m: math.expm1(S[k] / m) * U[k] if U[k] > 0 else 0.0  # noqa: E731
    val = sum(f(k, 1) for k in range(len(S)))
    heap = [(-(f(k, 1) - f(k, 2)), k) for k in range(len(S)) if U[k] > 0]
    heapq.heapify(heap)
    while val > eps:
        if sum(N) > LIMITS["steps"] or not heap:
            raise ValueError(f"eps: {eps:g} needs more than {LIMITS['steps']} steps; give a larger eps or more samples")
        gain, k = heapq.heappop(heap)
        val += gain  # gain = -(f(N) - f(N+1))
        N[k] += 1
        heapq.heappush(heap, (-(f(k, N[k]) - f(k, N[k] + 1)), k))
    return N


@dataclass(frozen=True)
class BlockCertificate(PlanRecord):
    r"""A certified multi-block schedule (module docstring for every symbol).

    Attributes
    ----------
    grid : Grid
        The certified grid: ``block_steps[k]`` equal log-odds steps in block k.
    steps : int
        :math:`\sum_k N_k`, the number of unmasking rounds the grid runs.
    bound : float
        :math:`\sum_k (e^{S_k/N_k} - 1) U_k`: w.p. ≥ ``confidence`` the sampler's KL is at
        most this; ≤ ``eps`` (≤ eps/2 for ``rule="w26"``).
    edges : tuple of float
        Block boundaries :math:`b_0 = t_0 < \dots < b_K = T`.
    block_steps : tuple of int
    S : tuple of float
        Block lengths in log reveal odds (W26 eq. 25).
    upper : tuple of float
        :math:`U_k = 2B_k \ge H_k` (W26's :math:`\hat H_{k,m} + \hat r_k`).
    estimate : tuple of float
        :math:`2\bar Q_k` (W26's :math:`\hat H_{k,m}`, eq. 33b, untruncated for ``"entropy"``).
    radius : tuple of float
        Empirical-Bernstein radii of :math:`\bar Q_k`.
    complexity : float
        :math:`\hat C = (\sum_k\sqrt{S_k U_k})^2` (W26 eq. 36b).
    budget : int or None
        ``rule="w26"``: W26's N (eq. 38 and Theorem 2's condition); None for ``"tight"``.
    blocks, n_select, n_certify : int
        ``blocks`` is the number of blocks (W26's K; ``.K`` reads it for one release).
    confidence, eps : float
    weights, form, rule, boundaries : str
    """

    plan_field = "grid"

    grid: Grid
    steps: int
    bound: float
    edges: tuple
    block_steps: tuple
    S: tuple
    upper: tuple
    estimate: tuple
    radius: tuple
    complexity: float
    budget: int | None
    blocks: int
    n_select: int
    n_certify: int
    confidence: float
    eps: float
    weights: str
    form: str
    rule: str
    boundaries: str


    @property
    def times(self) -> tuple[float, ...]:
        return self.grid.times

    @property
    def K(self) -> int:
        """The number of blocks, under its old name (``blocks``; ``K`` is the alphabet size)."""
        import warnings

        warnings.warn("BlockCertificate.K is now BlockCertificate.blocks (K is the alphabet size everywhere else); "
                      "the old keyword works for one release (docs/design.md, 'Vocabulary')",
                      DeprecationWarning, stacklevel=2)
        return self.blocks

    def to_dict(self) -> dict:
        """JSON-ready: ``"times"`` (readable by ``mt.Grid``), ``"steps"``, ``"bound"``, ``"edges"``, …
        (``"K"`` repeats ``"blocks"`` for one release)."""
        out = {"times": list(self.grid.times)}
        for k in ("steps", "bound", "blocks", "budget", "complexity", "n_select", "n_certify", "confidence", "eps",
                  "weights", "form", "rule", "boundaries"):
            out[k] = getattr(self, k)
        for k in ("edges", "block_steps", "S", "upper", "estimate", "radius"):
            out[k] = list(getattr(self, k))
        out["K"] = self.blocks
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict())


def _fast_oracle(p: Joint):
    """The same conditionals as a Joint, faster: a mixture of point masses on its support."""
    check_oracle(p)  # validates (normalized, no lost mass)
    idx = np.flatnonzero(p.table.ravel() > 0)
    if idx.shape[0] > (1 << 12):
        return check_oracle(p)
    rows = np.stack(np.unravel_index(idx, p.table.shape), axis=1)
    probs = (rows[..., None] == np.arange(p.K)).astype(np.float64)
    w = p.table.ravel()[idx]
    return MixtureOfProductsLaw(w / w.sum(), probs)


def _grid_from_blocks(edges: np.ndarray, Nk) -> Grid:
    lam_e = _lam(edges)
    pts = [lam_e[0]]
    for k, m in enumerate(Nk):
        pts.extend((lam_e[k] + (lam_e[k + 1] - lam_e[k]) * np.arange(1, m + 1) / m).tolist())
    t = _from_lam(np.array(pts))
    # the block edges exactly (no rounding drift)
    pos = np.concatenate([[0], np.cumsum(Nk)])
    t[pos] = edges
    return Grid(t)


@renamed_keywords(law="p")
def certify_blocks(
    samples,
    eps: float,
    *,
    blocks: int = 3,
    p=None,
    edges=None,
    confidence: float = 0.95,
    options: CertificateOptions | None = None,
    boundaries: str = "split",
    split: float = 0.5,
    resolution: int = 4,
    seed: int = 0,
    batch: int = 256,
    **old,
) -> BlockCertificate:
    r"""A certified K-block schedule with KL ≤ ``eps`` w.p. ≥ ``confidence`` (W26 Theorem 2, §4.4).

    Parameters
    ----------
    samples : int or array_like (n, d)
        Clean samples (outcome indices 0..K_alphabet−1), or how many to draw with
        ``p.sample``.
    eps : float
        Target KL in nats (> 0).
    blocks : int
        Number of blocks (W26's K; ≥ 1). ``blocks=1`` is Theorem 2 with a single block.
        (``K=`` for one release, with a DeprecationWarning: ``K`` is the alphabet size
        everywhere else.)
    p : Joint or conditional oracle, optional
        Supplies the conditionals (a :class:`~mdmtheory.Joint`, a law from
        :mod:`mdmtheory.laws.oracles`, ``mdmtheory.bridge.ModelOracle``). Default: the
        empirical law of ``samples`` (:func:`mdmtheory.laws.empirical_oracle`; the
        certificate is then about sampling the empirical law).
    edges : sequence of float, optional
        Fixed block boundaries :math:`t_0 = b_0 < \dots < b_K = T` (then no DP, and
        ``blocks`` and the interval are taken from them).
    confidence : float
        :math:`1 - \alpha`.
    options : CertificateOptions, optional
        ``weights``, ``form`` (default here ``"entropy"``), ``rule`` (step allocation,
        module docstring step 3), ``interval`` ((t0, T), default ``(1/d, 1 - 1/d)``) and
        ``tail``, as in :func:`mdmtheory.design.certify`; the old keywords work for one
        release with a DeprecationWarning.
    boundaries : {"split", "union"}
        How the DP's data and the certificate's data relate (module docstring, step 4).
    split : float
        ``boundaries="split"``: fraction of the samples that choose the boundaries.
    resolution : int
        Candidate boundaries per doubling of the reveal odds.
    seed, batch
        As in :func:`mdmtheory.design.certify`.

    Returns
    -------
    BlockCertificate
        ``.grid`` is the certified :class:`~mdmtheory.Grid`.

    Examples
    --------
    >>> import mdmtheory as mt
    >>> p = mt.families.repeated(6)
    >>> cert = certify_blocks(3000, 0.05, blocks=3, p=p, seed=1)
    >>> cert.blocks, cert.bound <= 0.025
    (3, True)
    >>> bool(mt.kl(p, mt.sampler_law(p, cert.grid)) <= 0.05)
    True
    """
    K = renamed_keyword(old, "K", "blocks", blocks, 3, where="certify_blocks")
    opts = options_from(CertificateOptions, options, old, where="certify_blocks", defaults={"form": "entropy"})
    weights, form, rule, interval, tail = opts.weights, opts.form, opts.rule, opts.interval, opts.tail
    eps = _real_arg(eps, "eps")
    if not eps > 0:
        raise ValueError(f"eps: expected a target KL > 0 (nats), got {eps}")
    conf = _confidence(confidence)
    weights = _choice_arg(weights, "weights", WEIGHTS)
    form = _choice_arg(form, "form", FORMS)
    rule = _choice_arg(rule, "rule", BLOCK_RULES)
    boundaries = _choice_arg(boundaries, "boundaries", BOUNDARIES)
    K = _int_arg(K, "blocks", 1)  # checked even when edges fix the blocks
    resolution = _int_arg(resolution, "resolution", 1, 64)
    tail = _real_arg(tail, "tail")
    if not tail > 0:
        raise ValueError(f"tail: expected a truncation allowance > 0 (nats), got {tail}")
    split = _real_arg(split, "split")
    if not 0 < split < 1:
        raise ValueError(f"split: expected a fraction in (0, 1) of the samples for the boundaries, got {split}")
    seed = _int_arg(seed, "seed", 0)
    batch = _int_arg(batch, "batch", 1)
    rng = np.random.default_rng(seed)
    if samples is None:
        raise ValueError("samples: expected clean samples (n, d) or a number of samples n to draw from p, got None")
    drawn = isinstance(samples, (int, np.integer)) and not isinstance(samples, (bool, np.bool_))
    if drawn:
        samples = _int_arg(samples, "samples", 2, LIMITS["n"], " (samples to draw)")
    if p is None:
        if drawn:
            raise ValueError("samples: without p, give the clean samples (n, d) (the empirical law is certified)")
        p = empirical_oracle(np.asarray(samples))
    p = _fast_oracle(p) if isinstance(p, Joint) else check_oracle(p)
    d = int(p.d)
    xs = oracle_samples(p, None, samples, rng) if drawn else oracle_samples(p, samples, None, rng)
    n = xs.shape[0]
    U = rng.random(xs.shape)

    if edges is not None:
        e = _float_array(edges, "edges", what="(K + 1,)")
        if e.ndim != 1 or e.shape[0] < 2 or not np.all(np.isfinite(e)) or np.any(np.diff(e) <= 0) \
                or e[0] <= 0 or e[-1] >= 1:
            raise ValueError(f"edges: expected increasing block boundaries 0 < b_0 < ... < b_K < 1, got {edges!r}")
        Kb = e.shape[0] - 1
        tau, r = e, 1  # candidate grid = the edges; each block gets its own dyadic grid below
        sel = np.arange(0)
        cert_rows = np.arange(n)
        chosen = list(range(Kb + 1))
        stats = None
    else:
        Kb = _int_arg(K, "blocks", 1)
        t0, T = _interval(interval, d)
        tau, r = candidate_grid(t0, T, resolution)
        J = tau.shape[0] - 1
        if Kb > J:
            raise ValueError(f"blocks: {Kb} blocks need at least {Kb} candidate cells, the grid has {J}; "
                             "raise resolution or lower blocks")
        if Kb == 1:
            sel, cert_rows, chosen, stats = np.arange(0), np.arange(n), [0, J], None
        else:
            if boundaries == "split":
                n_sel = int(round(split * n))
                if n_sel < 2 or n - n_sel < 2:
                    raise ValueError(f"samples: split={split} of n={n} leaves fewer than 2 samples on one side")
                sel, cert_rows = np.arange(n_sel), np.arange(n_sel, n)
                conf_pair = conf
            else:
                sel = cert_rows = np.arange(n)
                conf_pair = 1.0 - (1.0 - conf) / (J * (J + 1) / 2)
            stats = interval_statistics(p, xs, U, tau, r, weights=weights, form=form, tail=tail, batch=batch)
            Umat = np.zeros((J + 1, J + 1))
            for i in range(J):
                for j in range(i + 1, J + 1):
                    Umat[i, j] = _upper(stats, i, j, sel, conf_pair)[2]
            chosen = _dp(_lam(tau), Umat, Kb)
    e = tau[chosen]
    # certify the chosen blocks on the certifying rows
    conf_k = 1.0 - (1.0 - conf) / Kb
    if stats is not None:  # Q of the chosen blocks is already there (the candidate grid holds their dyadic grids)
        ck = conf_pair if boundaries == "union" else conf_k
        vals = [_upper(stats, chosen[k], chosen[k + 1], cert_rows, ck) for k in range(Kb)]
    else:
        vals = []
        for k in range(Kb):
            tk, rk = candidate_grid(e[k], e[k + 1], 1)
            st1 = interval_statistics(p, xs[cert_rows], U[cert_rows], tk, rk, weights=weights, form=form,
                                      tail=tail, batch=batch)
            vals.append(_upper(st1, 0, tk.shape[0] - 1, np.arange(cert_rows.shape[0]), conf_k))
    mean = np.array([v[0] for v in vals])
    rad = np.array([v[1] for v in vals])
    Uk = np.maximum(np.array([v[2] for v in vals]), 0.0)
    S = np.diff(_lam(e))
    Chat = float(np.sum(np.sqrt(S * Uk)) ** 2)
    L = float(S.sum())
    if rule == "w26":
        need = max(8.0 * Chat / eps, 2.0 * (Kb + 2.0 * L))
        if not need <= LIMITS["steps"]:
            raise ValueError(f"eps: {eps:g} needs a budget of about {need:.3g} steps, beyond the documented "
                             f"limit steps <= {LIMITS['steps']}; give a larger eps or more samples")
        budget = math.ceil(need)
        Nk = []
        for k in range(Kb):
            rho = 1.0 if Uk[k] <= 0 else min(1.0, 4.0 * math.sqrt(Chat) / budget * math.sqrt(S[k] / Uk[k]))
            Nk.append(max(1, math.ceil(S[k] / math.log1p(rho) - 1e-12)))
    else:
        budget = None
        Nk = _greedy(S, Uk, eps)
    bound = float(sum(math.expm1(S[k] / Nk[k]) * Uk[k] for k in range(Kb) if Uk[k] > 0))
    return BlockCertificate(
        grid=_grid_from_blocks(e, Nk),
        steps=int(sum(Nk)),
        bound=bound,
        edges=tuple(float(x) for x in e),
        block_steps=tuple(int(x) for x in Nk),
        S=tuple(float(x) for x in S),
        upper=tuple(float(x) for x in Uk),
        estimate=tuple(float(2 * x) for x in mean),
        radius=tuple(float(x) for x in rad),
        complexity=Chat,
        budget=budget,
        blocks=Kb,
        n_select=int(sel.shape[0]) if boundaries == "split" else (n if stats is not None else 0),
        n_certify=int(cert_rows.shape[0]),
        confidence=conf,
        eps=eps,
        weights=weights,
        form=form,
        rule=rule,
        boundaries=boundaries,
    )
