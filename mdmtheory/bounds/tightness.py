r"""Tightness search: how close does each bound come to the exact quantity it bounds?

For a bound that is a function of the information profile, the *tightness ratio* of a
joint law p is

.. math::

    \rho(p) = \frac{\text{exact}(p)}{\text{bound}(p)} \ (\text{upper bounds}), \qquad
    \rho(p) = \frac{\text{bound}(p)}{\text{exact}(p)} \ (\text{lower bounds}),

maximized over the plans of a small family (all schedules, a set of grids, ...). A valid
bound has :math:`\rho \le 1`; the search maximizes :math:`\rho` over joints, with the table
softmax-parametrized (:math:`p = \mathrm{softmax}(\theta)` on :math:`[K]^d`) and
``jax.grad`` through a small differentiable re-implementation of the exact pipeline
(all :math:`2^d` subset entropies :math:`\to e_m \to \varphi \to` path KL / UGC / bound),
for d <= 8. The exact-KL targets (:func:`kl_targets`) differentiate the output law's
:math:`\mathrm{KL}(p \| q)` itself (:func:`mdmtheory.sampler_kl`). Adam ascent on :math:`\log\rho`, several seeded restarts. The best table is
then re-evaluated with the package's exact numpy functions
(:mod:`mdmtheory.bounds`, :mod:`mdmtheory.information.divergence`): the reported ratio is that one.

Only denominators of at least ``FLOOR`` times :math:`\max(1, \sum_i H(X_i))` nats enter a
ratio, so rounding noise of nearly independent or nearly deterministic laws (absolute
errors ~1e-16) cannot pose as tightness.

:func:`fastdllm_targets` probes Fast-dLLM Theorem 1 and Fast-dLLM++'s Lemma A.1
(:mod:`mdmtheory.bounds.fastdllm`) on the table itself, the whole sequence as the candidate set.

Everything JAX runs inside ``with x64():`` (float64), never flipping global config.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.special import comb

from .._estimate import Record
from .._validate import int_arg, real_arg, seed_arg
from ..information.divergence import path_kl as _path_kl
from ..information.profile import information_profile
from ..laws.joint import Joint
from ..samplers.engine import sampler_kl
from ..schedules.odds import psi_raw
from ..schedules.plans import compositions as _compositions, Grid, Schedule
from .._jax import jax, jnp, x64
from .._moved import module_getattr as _module_getattr
from ..information import ugc as _u
from ..samplers import kernel as _kernel
from .. import bounds as _b
from . import fastdllm as _fd
from ..information.entropies import sum_of_entropies
from ..information.divergence import kl as _kl
from ..samplers import sampler_law

__all__ = [
    "MAX_D",
    "FLOOR",
    "TightnessTarget",
    "TightnessResult",
    "jax_subset_entropies",
    "jax_profile",
    "jax_gain",
    "jax_ugc",
    "jax_gamma_umask",
    "jax_path_kl",
    "targets",
    "kl_targets",
    "fastdllm_targets",
    "tightness_search",
]

#: Largest d for the differentiable pipeline (the exact engine's lattice, (K+1)^d entries,
#: and for exact-KL targets one compiled law per plan).
MAX_D = 8
#: Floor (times max(1, sum_i H(X_i))) below which a denominator does not enter a ratio.
FLOOR = 1e-9


# -- differentiable exact pipeline -------------------------------------------------------
def _masks_info(d: int):
    pc = np.array([bin(m).count("1") for m in range(1 << d)])
    M = np.zeros((d + 1, 1 << d))
    for m in range(1 << d):
        M[pc[m], m] = 1.0 / comb(d, pc[m], exact=True)
    return M


def jax_subset_entropies(table) -> jax.Array:
    r""":math:`H(X_S)` for all :math:`2^d` bitmasks S (bit j = position j), differentiable.

    The exact engine's lattice (:func:`mdmtheory.samplers.kernel.lattice_entropies`): every
    marginal summed from its parent, :math:`-m\log m` guarded so that the value and the
    gradient are finite at m = 0.
    """
    d, K = table.ndim, table.shape[0]
    H = _kernel.lattice_entropies(_kernel.marginal_lattice(table), K)
    return jnp.transpose(H, tuple(reversed(range(d)))).reshape(-1)


def jax_profile(table) -> jax.Array:
    r"""Profile :math:`\varphi_m = e_{m+1} - e_m` of a table, differentiable (d <= 8)."""
    d = table.ndim
    if d > MAX_D:
        raise ValueError(f"table: the differentiable pipeline takes d <= {MAX_D}, got d={d}")
    e = jnp.asarray(_masks_info(d)) @ jax_subset_entropies(table)
    return jnp.diff(e)


def _bernstein(n: int, t) -> jax.Array:
    t = jnp.asarray(t)[..., None]
    j = np.arange(n + 1)
    c = np.array([comb(n, k, exact=True) for k in j], dtype=np.float64)
    return c * jnp.power(t, j) * jnp.power(1.0 - t, n - j)


def jax_gain(phi, t) -> jax.Array:
    r""":math:`h(t) = \sum_j B_{j,d-1}(t)\, d(\varphi_0 - \varphi_j)`."""
    d = phi.shape[0]
    return _bernstein(d - 1, t) @ (d * (phi[0] - phi))


def _gain_derivative(phi, t) -> jax.Array:
    d = phi.shape[0]
    if d == 1:
        return jnp.zeros(jnp.shape(t))
    return (d - 1) * (_bernstein(d - 2, t) @ (d * (phi[:-1] - phi[1:])))


def _gauss(a: float, b: float, n: int):
    x, w = np.polynomial.legendre.leggauss(n)
    return a + (b - a) * (x + 1) / 2, (b - a) / 2 * w


def jax_ugc(phi, a: float, b: float) -> jax.Array:
    r""":math:`H(a, b) = \int_a^b t(1-t)h'(t)\,dt` (exact Gauss–Legendre; a, b static)."""
    u, w = _gauss(a, b, phi.shape[0] // 2 + 2)
    return jnp.dot(w, u * (1 - u) * _gain_derivative(phi, u))


def _ugc_traced(phi, a, b):
    """H(a, b) with traced endpoints (Gauss–Legendre nodes mapped at run time)."""
    x, w = np.polynomial.legendre.leggauss(phi.shape[0] // 2 + 2)
    u = a + (b - a) * (x + 1) / 2
    return (b - a) / 2 * jnp.dot(w, u * (1 - u) * _gain_derivative(phi, u))


def jax_gamma_umask(phi, a, b) -> jax.Array:
    r""":math:`\Gamma_{umask}(a, b) = \int_a^b (h(u) - h(a))\,du` (a, b may be traced)."""
    x, w = np.polynomial.legendre.leggauss(phi.shape[0] // 2 + 2)
    u = a + (b - a) * (x + 1) / 2
    return (b - a) / 2 * jnp.dot(w, jax_gain(phi, u) - jax_gain(phi, a))


def _card_path(phi, sizes) -> jax.Array:
    total = 0.0
    s = 0
    for k in sizes:
        total = total + jnp.sum(phi[s] - phi[s : s + k])
        s += k
    return total


def jax_path_kl(phi, plan) -> jax.Array:
    r"""Path KL of a :class:`Schedule` (profile Riemann defect) or a :class:`Grid`
    (:math:`\sum_j \Gamma_{umask}(t_j, t_{j+1})`), differentiable in :math:`\varphi`."""
    if isinstance(plan, Grid):
        t = plan.times
        return sum(jax_gamma_umask(phi, t[j], t[j + 1]) for j in range(plan.steps))
    return _card_path(phi, plan.sizes if isinstance(plan, Schedule) else Schedule(plan).sizes)


def _jax_dhw(phi) -> jax.Array:
    c = math.exp(-1.0)
    u, w = _gauss(0.0, c, phi.shape[0] // 2 + 2)
    left = jnp.dot(w, u * _gain_derivative(phi, u))
    u, w = _gauss(c, 1.0, max(64, 2 * phi.shape[0]))
    return left + jnp.dot(w, -u * np.log(u) * _gain_derivative(phi, u))


def _all_compositions(d: int) -> list[tuple[int, ...]]:
    """Every composition of d, in the order the targets were written for (the first part largest
    first: descending lexicographic order of the tuples)."""
    return sorted(_compositions(d), reverse=True)


# -- targets ------------------------------------------------------------------------------
@dataclass(frozen=True)
class TightnessTarget(Record):
    """A bound family to probe: its JAX ratio and its exact (numpy, package) ratio.

    ``pairs(phi)`` (JAX) returns two vectors (numerator, denominator) over the plans of the
    family; the ratio is the largest numerator/denominator over plans whose denominator is
    at least ``FLOOR * scale``. ``exact_pairs(joint)`` does the same with the package's
    numpy functions (the reported value). ``kind`` says which side is the bound.
    """

    name: str
    kind: str
    description: str
    d: int
    K: int
    pairs: Callable
    exact_pairs: Callable
    #: ``pairs`` takes the table (exact-KL targets) instead of the profile
    on_table: bool = False


def _ratio_from_pairs(num, den, scale, xp):
    ok = den > FLOOR * xp.maximum(scale, 1.0)
    r = xp.where(ok, num / xp.where(ok, den, 1.0), 0.0)
    return r.max()


def _scale_np(p: Joint) -> float:
    return max(sum_of_entropies(p), 1e-300)


def _upper_card_target(name, bound_fn, np_bound, d, K, description, scheds=None):
    """Upper bound on the path KL of the card sampler, over schedules (default: all with
    k_max >= 2); ``bound_fn(phi, sizes)`` in JAX, ``np_bound(profile, Schedule)`` a
    :mod:`mdmtheory.bounds` function."""
    if scheds is None:
        scheds = [s for s in _all_compositions(d) if max(s) >= 2]

    def pairs(phi):
        num = jnp.stack([_card_path(phi, s) for s in scheds])
        den = jnp.stack([jnp.asarray(bound_fn(phi, s)) for s in scheds])
        return num, den

    def exact_pairs(p):
        prof = information_profile(p)
        num = np.array([_path_kl(prof, Schedule(s)) for s in scheds])
        den = np.array([np_bound(prof, Schedule(s)).value for s in scheds])
        return num, den

    return TightnessTarget(name, _b.UPPER, description, d, K, pairs, exact_pairs)


def targets(d: int, K: int = 2) -> dict[str, TightnessTarget]:
    """The standard targets for laws on [K]^d (d <= 8): every bound of
    :mod:`mdmtheory.bounds` that is a function of the profile, each over a small plan family.

    * ``riemann``, ``lc25_theorem1``, ``w26_theorem1_card``: path KL over all schedules with
      k_max >= 2 (``w26_theorem1_card`` only where its value is finite). LC25 bounds the KL of
      the output law, which is <= path KL: the ratio here is an upper bound on its tightness
      against KL.
    * ``w26_lemma5``: Γ_card(a, b) over 0 <= a, b - a >= 2, b < d.
    * ``w26_lemma4``: Γ_umask(a, b) over a, b in {0.1, 0.3, 0.5, 0.7, 0.9}.
    * ``w26_theorem1``: path KL of uniform grids on [0.1, 0.9] with 1..4 steps.
    * ``w26_corollary1``: Geo(ρ) grids on [1/d, 1-1/d] with N = ceil(L)..ceil(L)+3 (d >= 3).
    * ``w26_proposition1``: the block grid of one and two blocks on the canonical interval,
      N = ceil(2(K + 2L)) (d >= 3).
    * ``optimal_grid_error_lower`` (derived here): lower bound on the optimal N-step error
      against Geo grids with N = 1..4 on [1/d, 1-1/d] (a ratio > 1 would refute it, since
      the optimum is <= any grid) (d >= 3).
    * ``lc25_lower_our_reading``: our reading of the LC25 lower bound (reading "revealed")
      against the worst path KL over schedules with k_max = s, s = 2..d.
    * ``ugc_total``, ``dhw_lower``, ``dhw_upper``, ``dhw_tc``: the UGC aggregates.
    """
    if not (isinstance(d, int) and 2 <= d <= MAX_D):
        raise ValueError(f"d: expected an integer in 2..{MAX_D}, got {d!r}")
    if not (isinstance(K, int) and K >= 2) or K**d > 1 << 12:
        raise ValueError(f"K: expected an integer >= 2 with K**d <= 4096, got {K!r}")
    out: dict[str, TightnessTarget] = {}

    def riemann(phi, s):
        return (max(s) - 1) * (phi[0] - phi[-1])

    def lc25(phi, s):
        return ((1 << (max(s) - 1).bit_length()) - 1) * (phi[0] - phi[-1])

    def hcard_card(phi, a, b):
        dd = phi.shape[0]
        hc = dd * (phi[0] - phi)
        j = np.arange(a + 1, b)
        if j.size == 0:
            return 0.0
        return jnp.sum(j / dd * (1 - j / dd) * (hc[j] - hc[j - 1]))

    def lemma5(phi, a, b):
        if b - a <= 1:
            return 0.0
        return (psi_raw(b / d) / psi_raw((a + 1) / d) - 1.0) * hcard_card(phi, a, b)

    def thm1card(phi, s):
        total, a = 0.0, 0
        for k in s:
            total = total + lemma5(phi, a, a + k)
            a += k
        return total

    out["riemann"] = _upper_card_target("riemann", riemann, _b.riemann_bound, d, K, "Riemann bound vs path KL, all schedules")
    out["lc25_theorem1"] = _upper_card_target(
        "lc25_theorem1", lc25, _b.lc25_bound, d, K, "LC25 Theorem 1 vs path KL (>= KL), all schedules"
    )
    finite = [s for s in _all_compositions(d) if s[-1] == 1 and max(s) >= 2]
    if finite:
        out["w26_theorem1_card"] = _upper_card_target(
            "w26_theorem1_card", thm1card, _b.w26_theorem1_card, d, K,
            "W26 Theorem 1 (card) vs path KL, schedules ending with a 1-step (else the bound is inf)", finite,
        )
    pairs5 = [(a, b) for a in range(d) for b in range(a + 2, d)]
    if pairs5:
        out["w26_lemma5"] = TightnessTarget(
            "w26_lemma5", _b.UPPER, "W26 Lemma 5 vs Gamma_card(a, b), b - a >= 2, b < d", d, K,
            lambda phi: (
                jnp.stack([jnp.sum(phi[a] - phi[a:b]) for a, b in pairs5]),
                jnp.stack([jnp.asarray(lemma5(phi, a, b)) for a, b in pairs5]),
            ),
            lambda p: (
                np.array([_u.gamma_card(information_profile(p), a, b) for a, b in pairs5]),
                np.array([_b.w26_lemma5(information_profile(p), a, b).value for a, b in pairs5]),
            ),
        )
    pts = (0.1, 0.3, 0.5, 0.7, 0.9)
    pairs4 = [(a, b) for a in pts for b in pts if a < b]
    out["w26_lemma4"] = TightnessTarget(
        "w26_lemma4", _b.UPPER, "W26 Lemma 4 vs Gamma_umask(a, b), a, b in {0.1, ..., 0.9}", d, K,
        lambda phi: (
            jnp.stack([jax_gamma_umask(phi, a, b) for a, b in pairs4]),
            jnp.stack([(psi_raw(b) / psi_raw(a) - 1.0) * jax_ugc(phi, a, b) for a, b in pairs4]),
        ),
        lambda p: (
            np.array([_u.gamma_umask(information_profile(p), a, b) for a, b in pairs4]),
            np.array([_b.w26_lemma4(information_profile(p), a, b).value for a, b in pairs4]),
        ),
    )
    grids1 = [Grid(np.linspace(0.1, 0.9, n + 1)) for n in range(1, 5)]
    out["w26_theorem1"] = TightnessTarget(
        "w26_theorem1", _b.UPPER, "W26 Theorem 1 vs path KL, uniform grids on [0.1, 0.9], 1..4 steps", d, K,
        lambda phi: (
            jnp.stack([jax_path_kl(phi, g) for g in grids1]),
            jnp.stack([sum((psi_raw(g.times[j + 1]) / psi_raw(g.times[j]) - 1.0) * jax_ugc(phi, g.times[j], g.times[j + 1]) for j in range(g.steps)) for g in grids1]),
        ),
        lambda p: (
            np.array([_path_kl(information_profile(p), g) for g in grids1]),
            np.array([_b.w26_theorem1(information_profile(p), g).value for g in grids1]),
        ),
    )
    if d >= 3:
        lo, hi = 1.0 / d, 1.0 - 1.0 / d
        L = math.log(psi_raw(hi) / psi_raw(lo))
        geo = [_b._geo_grid(lo, hi, n) for n in range(math.ceil(L), math.ceil(L) + 4)]
        out["w26_corollary1"] = TightnessTarget(
            "w26_corollary1", _b.UPPER, "W26 Corollary 1 vs path KL of Geo(rho) grids on [1/d, 1-1/d]", d, K,
            lambda phi: (
                jnp.stack([jax_path_kl(phi, g) for g in geo]),
                jnp.stack([2.0 * jax_ugc(phi, lo, hi) / g.steps * L for g in geo]),
            ),
            lambda p: (
                np.array([_path_kl(information_profile(p), g) for g in geo]),
                np.array([_b.w26_corollary1(information_profile(p), g).value for g in geo]),
            ),
        )
        partitions = [(lo, hi), (lo, 0.5, hi)]
        out["w26_proposition1"] = _prop1_target(d, K, partitions, L)
        geo_small = [_b._geo_grid(lo, hi, n) for n in range(1, 5)]

        out["optimal_grid_error_lower"] = TightnessTarget(
            "optimal_grid_error_lower", _b.LOWER, "lower bound on the optimal grid error (derived here, one block) vs Geo grids N = 1..4", d, K,
            lambda phi: (
                jnp.stack([_jax_optimal_grid_error_lower(phi, lo, hi, g.steps) for g in geo_small]),
                jnp.stack([jax_path_kl(phi, g) for g in geo_small]),
            ),
            lambda p: (
                np.array([_b.optimal_grid_error_lower(information_profile(p), (lo, hi), g.steps).value for g in geo_small]),
                np.array([_path_kl(information_profile(p), g) for g in geo_small]),
            ),
        )
    by_kmax = {s: [c for c in _all_compositions(d) if max(c) == s] for s in range(2, d + 1)}

    def lc25_low(phi, s):
        hc = d * (phi[0] - phi)
        total, j = 0.0, 0
        while True:
            size = min(1 << j, d - 1)
            if size == d - 1:
                total = total + 2.0 ** (1 - j) * hc[size]
                break
            total = total + 2.0**-j * hc[size]
            j += 1
        return s / (16 * d) * total

    out["lc25_lower_our_reading"] = TightnessTarget(
        "lc25_lower_our_reading", _b.LOWER, "LC25 lower bound, our reading ('revealed') vs worst path KL with k_max = s, s = 2..d", d, K,
        lambda phi: (
            jnp.stack([lc25_low(phi, s) for s in by_kmax]),
            jnp.stack([jnp.max(jnp.stack([_card_path(phi, c) for c in cs])) for cs in by_kmax.values()]),
        ),
        lambda p: (
            np.array([_b.lc25_lower_our_reading(information_profile(p), s).value for s in by_kmax]),
            np.array([max(_path_kl(information_profile(p), Schedule(c)) for c in cs) for cs in by_kmax.values()]),
        ),
    )

    def tc_dtc(phi):
        H = phi.sum()
        return d * phi[0] - H, H - d * phi[-1]

    e_ratio = math.e / (math.e - 1.0)
    out["ugc_total"] = TightnessTarget(
        "ugc_total", _b.UPPER, "H(0,1) <= min(TC, DTC)", d, K,
        lambda phi: (jnp.stack([jax_ugc(phi, 0.0, 1.0)]), jnp.stack([jnp.minimum(*tc_dtc(phi))])),
        lambda p: (np.array([_u.ugc(p, 0.0, 1.0)]), np.array([_b.ugc_total_bound(p).value])),
    )
    out["dhw_lower"] = TightnessTarget(
        "dhw_lower", _b.LOWER, "H(0,1) <= DHW", d, K,
        lambda phi: (jnp.stack([jax_ugc(phi, 0.0, 1.0)]), jnp.stack([_jax_dhw(phi)])),
        lambda p: (np.array([_b.dhw_sandwich(p)[0].value]), np.array([_u.effective_total_correlation(p)])),
    )
    out["dhw_upper"] = TightnessTarget(
        "dhw_upper", _b.UPPER, "DHW <= (e/(e-1)) H(0,1)", d, K,
        lambda phi: (jnp.stack([_jax_dhw(phi)]), jnp.stack([e_ratio * jax_ugc(phi, 0.0, 1.0)])),
        lambda p: (np.array([_u.effective_total_correlation(p)]), np.array([_b.dhw_sandwich(p)[1].value])),
    )
    out["dhw_tc"] = TightnessTarget(
        "dhw_tc", _b.UPPER, "DHW <= min(TC, DTC)", d, K,
        lambda phi: (jnp.stack([_jax_dhw(phi)]), jnp.stack([jnp.minimum(*tc_dtc(phi))])),
        lambda p: (np.array([_u.effective_total_correlation(p)]), np.array([_b.dhw_tc_bound(p).value])),
    )
    return out


def _jax_optimal_grid_error_lower(phi, lo: float, hi: float, N: int):
    """Single-block :func:`mdmtheory.bounds.optimal_grid_error_lower`: min Bernstein coefficient of h' on [lo, hi]."""
    d = phi.shape[0]
    c = (d - 1) * d * (phi[:-1] - phi[1:])
    n = d - 2
    coef = [c[i] for i in range(n + 1)]

    def split(cs, t, keep_right):
        cs = list(cs)
        left, right = [], [None] * (n + 1)
        for r in range(n + 1):
            left.append(cs[0])
            right[n - r] = cs[n - r]
            cs = [(1 - t) * cs[i] + t * cs[i + 1] for i in range(n - r)]
        return right if keep_right else left

    right = split(coef, lo, True)
    sub = split(right, (hi - lo) / (1 - lo), False)
    m = jnp.maximum(jnp.min(jnp.stack(sub)), 0.0)
    return m * (hi - lo) ** 2 / (2 * N)


def _prop1_target(d, K, partitions, L_unused):
    """W26 Proposition 1: the block grid depends on the law (ρ_k from C(P), S_k, H_k). In
    JAX each block gets N slots λ_{k-1} + i log(1+ρ_k), clipped at λ_k (clipped slots are
    zero-length steps, adding nothing), so the path KL is exact and differentiable."""
    specs = []
    for edges in partitions:
        tau = np.array(edges, dtype=np.float64)
        lam = np.log(tau) - np.log1p(-tau)
        Kb = tau.shape[0] - 1
        L = float(lam[-1] - lam[0])
        N = math.ceil(2 * (Kb + 2 * L))
        specs.append((tau, lam, N))

    def pairs(phi):
        nums, dens = [], []
        for tau, lam, N in specs:
            S = np.diff(lam)
            H = jnp.stack([jax_ugc(phi, tau[k], tau[k + 1]) for k in range(S.shape[0])])
            C = jnp.sum(jnp.sqrt(S * jnp.maximum(H, 0.0))) ** 2
            total = 0.0
            for k in range(S.shape[0]):
                rho = jnp.where(H[k] > 0, jnp.minimum(1.0, 4.0 * jnp.sqrt(C) / N * jnp.sqrt(S[k] / jnp.where(H[k] > 0, H[k], 1.0))), 1.0)
                pts = jnp.minimum(lam[k] + jnp.log1p(rho) * jnp.arange(N + 1), lam[k + 1])
                t = 1.0 / (1.0 + jnp.exp(-pts))
                total = total + sum(jax_gamma_umask(phi, t[i], t[i + 1]) for i in range(N))
            nums.append(total)
            dens.append(4.0 * C / N)
        return jnp.stack(nums), jnp.stack(dens)

    def exact_pairs(p):
        prof = information_profile(p)
        nums, dens = [], []
        for tau, lam, N in specs:
            b = _b.w26_proposition1(prof, tau, N)
            nums.append(_path_kl(prof, b.plan))
            dens.append(b.value)
        return np.array(nums), np.array(dens)

    return TightnessTarget("w26_proposition1", _b.UPPER, "W26 Prop. 1 (4 C(P)/N) vs path KL of its block grid, 1 and 2 blocks", d, K, pairs, exact_pairs)


def kl_targets(d: int, K: int = 2) -> dict[str, TightnessTarget]:
    r"""Targets whose exact side is the output law's :math:`\mathrm{KL}(p \| q)` (not the
    path KL), differentiated through the exact engine (:func:`mdmtheory.sampler_kl`), over
    the constant schedules with T = 1..d-1 steps (each compiles once; d <= 8):

    * ``kl_vs_path_kl``: KL over the path KL (:math:`\mathrm{KL} \le` path KL, so <= 1), at
      T = 2..d-1 only: at T = 1 (one step from nothing) KL = TC = path KL for every law, so
      the ratio would be 1 whatever the law (d = 2 has only T = 1, and keeps it).
    * ``kl_riemann``, ``kl_lc25_theorem1``: KL over the Riemann and LC25 Theorem 1 bounds.
    """
    if not (isinstance(d, int) and 2 <= d <= MAX_D):
        raise ValueError(f"d: expected an integer in 2..{MAX_D}, got {d!r}")
    if not (isinstance(K, int) and K >= 2) or K**d > 1 << 12:
        raise ValueError(f"K: expected an integer >= 2 with K**d <= 4096, got {K!r}")
    scheds = [Schedule.constant(d, T) for T in range(1, d)]

    def make(name, jbound, npbound, description, scheds=scheds):
        def pairs(table):
            phi = jax_profile(table)
            num = jnp.stack([sampler_kl(table, s) for s in scheds])
            den = jnp.stack([jnp.asarray(jbound(phi, s), dtype=num.dtype) for s in scheds])
            return num, den

        def exact_pairs(p):
            prof = information_profile(p)
            num = np.array([_kl(p, sampler_law(p, s)) for s in scheds])
            den = np.array([npbound(p, prof, s) for s in scheds])
            return num, den

        return TightnessTarget(name, _b.UPPER, description, d, K, pairs, exact_pairs, on_table=True)

    def rb(phi, s):
        return (max(s.sizes) - 1) * (phi[0] - phi[-1])

    def lc(phi, s):
        return ((1 << (max(s.sizes) - 1).bit_length()) - 1) * (phi[0] - phi[-1])

    return {
        "kl_vs_path_kl": make(
            "kl_vs_path_kl", lambda phi, s: _card_path(phi, s.sizes), lambda p, prof, s: _path_kl(prof, s),
            "exact KL of the output law vs path KL, constant schedules with T >= 2",
            [s for s in scheds if s.steps >= 2] or scheds,
        ),
        "kl_riemann": make(
            "kl_riemann", rb, lambda p, prof, s: _b.riemann_bound(prof, s).value,
            "exact KL vs the Riemann bound, constant schedules",
        ),
        "kl_lc25_theorem1": make(
            "kl_lc25_theorem1", lc, lambda p, prof, s: _b.lc25_bound(prof, s).value,
            "exact KL vs LC25 Theorem 1, constant schedules",
        ),
    }


# -- Fast-dLLM / Fast-dLLM++ (issue 28) ---------------------------------------------------
def fastdllm_targets(d: int, K: int = 2) -> dict[str, TightnessTarget]:
    r"""Fast-dLLM / Fast-dLLM++ targets (:mod:`mdmtheory.bounds.fastdllm`): the whole sequence as the
    candidate set (A = ∅, S = [d], n = d; every conditional law is a law, so the supremum over
    laws of one (n, K) is this). ``fastdllm_tv``, ``fastdllm_kl`` (upper: exact/bound; the KL
    only where (n+1)ε* <= 1, else the pair is dropped) and ``fdpp_lemma_a1`` (lower:
    :math:`L_n / p(x^\star)`), each pair rescored by ``statement_checks``' own measures."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 2 <= d <= MAX_D:
        raise ValueError(f"d: expected an integer in 2..{MAX_D}, got {d!r}")
    if isinstance(K, bool) or not isinstance(K, (int, np.integer)) or K < 2:
        raise ValueError(f"K: expected an integer >= 2, got {K!r}")
    axes = [tuple(a for a in range(d) if a != j) for j in range(d)]

    def jmeasures(table):
        marg = [table.sum(axis=axes[j]) for j in range(d)]
        c = jnp.stack([m.max() for m in marg])
        q = marg[0]
        for j in range(1, d):
            q = jnp.multiply.outer(q, marg[j])
        idx = [jnp.argmax(m) for m in marg]
        flat = table.reshape(-1)
        lin = 0
        for j in range(d):
            lin = lin * K + idx[j]
        return c, q, flat, lin

    def ex(p: Joint, name):
        m = _fd._measures(p.table[None], d, K)
        hyp, e, b = _fd._statement_values(name, m)
        if not bool(hyp[0]):
            return np.array([0.0]), np.array([0.0])
        return (np.array([e[0]]), np.array([b[0]])) if _fd.STATEMENTS[name][0] == _b.UPPER else (np.array([b[0]]), np.array([e[0]]))

    def tv_pairs(table):
        c, q, flat, _ = jmeasures(table)
        eps = 1.0 - c.min()
        return jnp.stack([0.5 * jnp.abs(table - q).sum()]), jnp.stack([(3 * d - 1) / 2 * eps])

    def kl_pairs(table):
        c, q, flat, _ = jmeasures(table)
        eps = 1.0 - c.min()
        safe = jnp.where(table > 0, table, 1.0)
        kl = jnp.sum(jnp.where(table > 0, table * (jnp.log(safe) - jnp.log(jnp.where(table > 0, q, 1.0))), 0.0))
        e = jnp.clip(eps, 1e-300, 1 - 1e-16)
        bound = (d - 1) * (-e * jnp.log(e) - (1 - e) * jnp.log1p(-e) + eps * math.log(K - 1))
        bound = jnp.where((d + 1) * eps <= 1, bound, 0.0)
        return jnp.stack([kl]), jnp.stack([bound])

    def frechet_pairs(table):
        c, q, flat, lin = jmeasures(table)
        L = jnp.maximum(0.0, c.sum() - (d - 1))
        return jnp.stack([L]), jnp.stack([flat[lin]])

    return {
        "fastdllm_tv": TightnessTarget("fastdllm_tv", _b.UPPER, "Fast-dLLM Thm 1 TV: TV(p, q) / ((3n-1)/2 eps*)", d, K,
                                       tv_pairs, lambda p: ex(p, "fastdllm_tv"), on_table=True),
        "fastdllm_kl": TightnessTarget("fastdllm_kl", _b.UPPER, "Fast-dLLM Thm 1 KL: KL / ((n-1)(H_b + eps ln(K-1)))", d, K,
                                       kl_pairs, lambda p: ex(p, "fastdllm_kl"), on_table=True),
        "fdpp_lemma_a1": TightnessTarget("fdpp_lemma_a1", _b.LOWER, "Fast-dLLM++ Lemma A.1: L_n / p(x*)", d, K,
                                         frechet_pairs, lambda p: ex(p, "fdpp_lemma_a1"), on_table=True),
    }


# -- search -------------------------------------------------------------------------------
@dataclass(frozen=True)
class TightnessResult(Record):
    """Outcome of :func:`tightness_search` for one target.

    ``ratio``: best ratio found, recomputed with the package's exact numpy functions on
    ``table``; ``start_ratio``: the best exact ratio among the restarts' starting tables;
    ``restart_ratios``: the best exact ratio of each restart; ``table``: the maximizing law.
    """

    target: str
    kind: str
    ratio: float
    start_ratio: float
    restart_ratios: tuple[float, ...]
    table: np.ndarray
    seed: int
    steps: int


def _exact_ratio(target: TightnessTarget, table: np.ndarray) -> float:
    p = Joint(table / table.sum())
    num, den = target.exact_pairs(p)  # lower bounds: (bound, exact); upper: (exact, bound)
    den = np.where(np.isfinite(den), den, 0.0)  # an infinite bound is vacuous: ratio 0
    return float(_ratio_from_pairs(np.asarray(num), np.asarray(den), _scale_np(p), np))


def _make_step(target: TightnessTarget, lr: float):
    d, K = target.d, target.K
    shape = (K,) * d

    def log_ratio(theta):
        table = jax.nn.softmax(theta).reshape(shape)
        phi = jax_profile(table)
        num, den = target.pairs(table) if target.on_table else target.pairs(phi)
        scale = jnp.sum(jnp.stack([jax_subset_entropies(table)[1 << j] for j in range(d)]))
        r = _ratio_from_pairs(num, den, scale, jnp)
        return jnp.log(jnp.maximum(r, 1e-300))

    vg = jax.value_and_grad(log_ratio)
    b1, b2, eps = 0.9, 0.999, 1e-8

    @jax.jit
    def step(theta, m, v, i):
        val, g = vg(theta)
        g = jnp.where(jnp.isfinite(g), g, 0.0)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        mh = m / (1 - b1 ** (i + 1))
        vh = v / (1 - b2 ** (i + 1))
        return theta + lr * mh / (jnp.sqrt(vh) + eps), m, v, val

    return step


def tightness_search(
    target: TightnessTarget,
    *,
    restarts: int = 4,
    steps: int = 400,
    seed: int = 0,
    lr: float = 0.05,
    init_scale: float = 2.0,
    check_every: int = 50,
) -> TightnessResult:
    r"""Maximize the tightness ratio of ``target`` over joint laws (Adam on
    :math:`\log\rho`, softmax logits).

    Restart r starts from logits :math:`\theta \sim N(0, s_r^2)`, seeded by
    ``(seed, r)``, with :math:`s_r` cycling through ``init_scale * (1, 2, 0.5)``. Every
    ``check_every`` steps (and at the end) the current table is evaluated exactly
    (numpy, package functions); the best exact ratio wins. Deterministic given the seed.
    """
    if not isinstance(target, TightnessTarget):  # issue 38: every argument checked before any work
        raise ValueError(f"target: expected a TightnessTarget (e.g. kl_targets(d)[name]), got {type(target).__name__}")
    restarts = int_arg(restarts, "restarts", 1, 1 << 10)
    steps = int_arg(steps, "steps", 1, 1 << 20)
    check_every = int_arg(check_every, "check_every", 1, 1 << 20)
    seed = seed_arg(seed)
    lr = real_arg(lr, "lr")
    if not 0 < lr <= 10:
        raise ValueError(f"lr: expected a learning rate in (0, 10], got {lr!r}")
    init_scale = real_arg(init_scale, "init_scale")
    if not 0 < init_scale <= 100:
        raise ValueError(f"init_scale: expected a logit scale in (0, 100], got {init_scale!r}")
    n = target.K**target.d
    best = (-math.inf, None)
    start_best = -math.inf
    per_restart = []
    scales = (1.0, 2.0, 0.5)
    with x64():
        step = _make_step(target, lr)
        for r in range(restarts):
            rng = np.random.default_rng([seed, r])
            theta0 = rng.normal(0.0, init_scale * scales[r % 3], size=n)
            theta = jnp.asarray(theta0)
            m = jnp.zeros(n)
            v = jnp.zeros(n)
            tab = np.asarray(jax.nn.softmax(theta)).reshape((target.K,) * target.d)
            r0 = _exact_ratio(target, tab)
            start_best = max(start_best, r0)
            rbest = (r0, tab)
            for i in range(steps):
                theta, m, v, _ = step(theta, m, v, i)
                if (i + 1) % check_every == 0 or i + 1 == steps:
                    tab = np.asarray(jax.nn.softmax(theta)).reshape((target.K,) * target.d)
                    ri = _exact_ratio(target, tab)
                    if ri > rbest[0]:
                        rbest = (ri, tab)
            per_restart.append(rbest[0])
            if rbest[0] > best[0]:
                best = rbest
    return TightnessResult(
        target=target.name,
        kind=target.kind,
        ratio=float(best[0]),
        start_ratio=float(start_best),
        restart_ratios=tuple(float(x) for x in per_restart),
        table=np.array(best[1] / best[1].sum()),
        seed=seed,
        steps=steps,
    )


def __getattr__(name):
    return _module_getattr(__name__, name)
