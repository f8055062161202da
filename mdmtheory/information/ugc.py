r"""The unmasking growth complexity (UGC) of W26: gain polynomial, UGC, complexities, defects.

Notation of docs/theory.md §3. With :math:`A_{i,t}` including each position of
:math:`[d]\setminus\{i\}` independently with probability t,

.. math::

    h(t) = \sum_i \mathbb{E}\, I(X_i; X_{A_{i,t}})
         = \sum_{j=0}^{d-1} \binom{d-1}{j} t^j (1-t)^{d-1-j} h^{card}_j,
    \qquad h^{card}_j = d(\varphi_0 - \varphi_j),

    \mathrm{Info}(X; X_t) = \sum_{m=0}^{d} \binom{d}{m} t^m (1-t)^{d-m} e_m,
    \qquad h(u) = S(X) - \tfrac{d}{du}\mathrm{Info}(X; X_u),

    H(a, b) = \int_a^b t(1-t)\, h'(t)\, dt \quad\text{(the UGC of } [a, b]\text{)},

    \Gamma_{umask}(a, b) = \int_a^b (b - u) h'(u)\, du = \int_a^b \bigl(h(u) - h(a)\bigr) du
    = (b - a)(S - h(a)) - \bigl(\mathrm{Info}(X; X_b) - \mathrm{Info}(X; X_a)\bigr).

In log reveal odds :math:`\lambda = \log\psi(t)`, :math:`\psi(t) = t/(1-t)`, the UGC has
density :math:`q(\lambda) = r^2(1-r)^2 h'(r)` with :math:`r = e^\lambda/(1+e^\lambda)`.
On the canonical interval :math:`[1/d, 1-1/d]` (:math:`\lambda \in [-\ell_d, \ell_d]`,
:math:`\ell_d = \log(d-1)`) W26 defines the coarse complexity
:math:`C_{ugc} = 2\ell_d H(1/d, 1-1/d)`, the partition complexity
:math:`C(\mathcal P) = (\sum_k \sqrt{S_k H_k})^2` and the fine complexity
:math:`P_{ugc} = (\int \sqrt{q}\, d\lambda)^2 = (\int_{1/d}^{1-1/d} \sqrt{h'(t)}\, dt)^2`.

Every function takes a :class:`~mdmtheory.Joint` or a :class:`~mdmtheory.Profile`; all of
them are functionals of the entropy coefficients :math:`e_m` (equivalently the profile).
Source: Wainwright (2026), *The data geometry of masking diffusion* (W26, arXiv 2608.13520),
§2.2 eqs. (2a)–(6), §3.2 eqs. (15a)–(16b), §4.2 eq. (27), §6.1.2 eqs. (50a)–(51b), App. A–C
(places and statuses: docs/theory.md);
DHW26 for the effective total correlation. Proofs/checks: tests/information/test_ugc.py.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy import integrate
from scipy.special import gammaln, xlog1py, xlogy

from .._moved import renamed_keywords
from .._validate import float_array, int_arg, name_arg, real_arg, _short
from .entropies import _tse_from_coefficients
from .._moved import module_getattr as _module_getattr
from .profile import as_profile as _as_profile, Profile
from ..schedules.odds import from_log_odds as _from_log_odds, log_odds as _log_odds

__all__ = [
    "bernstein_basis",
    "gain_coefficients",
    "gain",
    "gain_derivative",
    "info",
    "ugc",
    "ugc_card",
    "ugc_density",
    "canonical_interval",
    "coarse_complexity",
    "partition_complexity",
    "fine_complexity",
    "effective_total_correlation",
    "tse",
    "gamma_umask",
    "gamma_card",
    "check_interval",
    "check_card_pair",
    "check_edges",
    "profile_increments",
    "profile_ugc",
]

#: Relative size (to the largest |φ|) below which a profile increment counts as rounding.
MONOTONE_TOL = 1e-12
#: Largest |φ| computed on directly; above it the defects are computed on φ / max|φ| and
#: scaled back (they are linear in φ), so d·φ never overflows float64.
_RESCALE_ABOVE = 1e200


def _times(t, name: str = "t") -> np.ndarray:
    t = float_array(t, name, what="reveal times in [0, 1]")
    if np.any(t < 0) or np.any(t > 1):
        raise ValueError(f"{name}: reveal times must lie in [0, 1]")
    return t


def check_interval(a, b, name: str = "a, b") -> tuple[float, float]:
    """Reveal times ``0 <= a <= b <= 1`` as floats (a ValueError naming ``name`` otherwise)."""
    name = name_arg(name)
    lo, hi = name.split(", ") if ", " in name else ("a", "b")
    try:
        a, b = real_arg(a, lo), real_arg(b, hi)
    except ValueError as exc:
        raise ValueError(f"{name}: expected reveal times 0 <= {lo} <= {hi} <= 1 ({exc})") from None
    if not (0.0 <= a <= b <= 1.0):
        raise ValueError(f"{name}: need 0 <= {lo} <= {hi} <= 1, got {lo}={a}, {hi}={b}")
    return a, b


# -- gain polynomial ----------------------------------------------------------------------
def bernstein_basis(n: int, t) -> np.ndarray:
    r"""Bernstein basis :math:`\binom{n}{j} t^j (1-t)^{n-j}`, j = 0..n, shape ``t.shape + (n+1,)``.

    Evaluated in log space (``gammaln``, ``xlogy``, ``xlog1py``): exact 0/1 at the end
    points, no overflow for tiny t (scipy's ``binom.pmf`` overflows at t = 2.2e-308) and
    relative accuracy ~1e-13 up to n in the thousands.
    """
    return _bernstein(int_arg(n, "n", 0), _times(t))


def _bernstein(n: int, t: np.ndarray) -> np.ndarray:
    """:func:`bernstein_basis` for validated arguments (the quadrature hot path)."""
    t = t[..., None]
    j = np.arange(n + 1)
    logc = gammaln(n + 1) - gammaln(j + 1) - gammaln(n - j + 1)
    return np.exp(logc + xlogy(j, t) + xlog1py(n - j, -t))


def gain_coefficients(p) -> np.ndarray:
    r"""Bernstein coefficients :math:`h^{card}_j = d(\varphi_0 - \varphi_j)`, j = 0..d-1.

    :math:`h^{card}_j = \sum_i` mean over uniform j-subsets B of :math:`[d]\setminus\{i\}` of
    :math:`I(X_i; X_B)` (W26; docs/theory.md §1). :math:`h^{card}_0 = 0`,
    :math:`h^{card}_{d-1} = TC + DTC`.
    """
    phi = _as_profile(p).values
    return phi.shape[0] * (phi[0] - phi)


def profile_increments(prof: Profile, *, strict: bool) -> np.ndarray:
    r""":math:`h^{card}_{j+1} - h^{card}_j = d(\varphi_j - \varphi_{j+1})`, j = 0..d-2.

    ``strict``: an exact profile is non-increasing, so its increments are >= 0 up to
    rounding; increments within ``MONOTONE_TOL`` (relative to max |φ|) of zero are set to
    zero, and a larger negative one raises ValueError (a cross-entropy profile that is not
    monotone has no UGC geometry).
    """
    if not isinstance(prof, Profile):
        raise ValueError(f"prof: expected a mdmtheory.Profile (as_profile(p)), got {type(prof).__name__}")
    if not isinstance(strict, (bool, np.bool_)):
        raise ValueError(f"strict: expected True or False, got {strict!r:.40}")
    phi = prof.values
    d = phi.shape[0]
    inc = d * (phi[:-1] - phi[1:])
    if strict and inc.size:
        tol = MONOTONE_TOL * d * max(1.0, float(np.abs(phi).max()))
        if np.any(inc < -tol):
            j = int(np.argmin(inc))
            raise ValueError(
                f"p: the profile increases at m={j} (by {-inc[j] / d:.3g} nats); this quantity "
                "needs a non-increasing (exact) profile"
            )
        inc = np.where(inc < 0, 0.0, inc)
    return inc


def gain(p, t):
    r"""Gain polynomial :math:`h(t)` in Bernstein form (vectorized over t)."""
    hcard = gain_coefficients(p)
    d = hcard.shape[0]
    return _bernstein(d - 1, _times(t)) @ hcard


def _gain_derivative(prof: Profile, t: np.ndarray, *, strict: bool = False) -> np.ndarray:
    d = prof.d
    if d == 1:
        return np.zeros(t.shape)
    inc = profile_increments(prof, strict=strict)
    return (d - 1) * (_bernstein(d - 2, np.asarray(t, dtype=np.float64)) @ inc)


def gain_derivative(p, t):
    r""":math:`h'(t) = (d-1)\sum_{j=0}^{d-2} \binom{d-2}{j} t^j (1-t)^{d-2-j}
    (h^{card}_{j+1} - h^{card}_j)`, the derivative of the Bernstein form (vectorized).

    Non-negative for an exact (non-increasing) profile.
    """
    return _gain_derivative(_as_profile(p), _times(t))


def info(p, t):
    r""":math:`\mathrm{Info}(X; X_t)`, the mean entropy of a Bernoulli(t) revealed set."""
    e = _as_profile(p).entropy_coefficients
    d = e.shape[0] - 1
    t = _times(t)
    return _bernstein(d, t) @ e


# -- UGC ------------------------------------------------------------------------------
def _gauss(a: float, b: float, n: int):
    x, w = np.polynomial.legendre.leggauss(n)
    return a + (b - a) * (x + 1) / 2, (b - a) / 2 * w


def profile_ugc(prof: Profile, a: float, b: float) -> float:
    """:func:`ugc` of a :class:`Profile` on an interval already checked (:func:`check_interval`):
    no conversion, no validation (the bounds' inner loops)."""
    if b == a:
        return 0.0
    u, w = _gauss(a, b, prof.d // 2 + 2)  # integrand has degree <= d: exact
    val = float(np.dot(w, u * (1 - u) * _gain_derivative(prof, u)))
    # a flat profile (product law) gives increments of +-1 ulp: a UGC of -1e-17 is rounding
    # of 0 (negative masses would make partition complexities raise and W26 bounds NaN)
    if val < 0 and val >= -MONOTONE_TOL * prof.d * max(1.0, float(np.abs(prof.values).max())) * (b - a):
        return 0.0
    return val


@renamed_keywords(a="start", b="stop")
def ugc(p, start: float, stop: float) -> float:
    r"""UGC :math:`H(a, b) = \int_a^b t(1-t) h'(t)\, dt` (W26, eq. of the UGC; docs/theory.md §3),
    on the interval [a, b] = [``start``, ``stop``] of reveal times.

    Exact: Gauss–Legendre with :math:`\lfloor d/2 \rfloor + 2` nodes integrates the
    degree-d polynomial integrand exactly, and the integrand is non-negative for an exact
    profile (nothing cancels). Additive over intervals; equals
    :math:`\int_{\log\psi(a)}^{\log\psi(b)} q(\lambda)\, d\lambda`.
    """
    a, b = check_interval(start, stop, "start, stop")
    return profile_ugc(_as_profile(p), a, b)


def ugc_card(p, a: int, b: int) -> float:
    r"""Card UGC :math:`H^{card}(a, b) = \sum_{j=a+1}^{b-1} \frac{j}{d}\bigl(1-\frac{j}{d}\bigr)
    (h^{card}_j - h^{card}_{j-1})`, integers :math:`0 \le a \le b \le d` (W26; docs/theory.md §3).

    :math:`H(0, 1) = \frac{d}{d+1} H^{card}(0, d)`.
    """
    prof = _as_profile(p)
    d = prof.d
    a, b = check_card_pair(a, b, d)
    if b - a < 2:
        return 0.0
    hc = gain_coefficients(prof)
    j = np.arange(a + 1, b)
    return float(np.sum(j / d * (1 - j / d) * (hc[j] - hc[j - 1])))


def check_card_pair(a, b, d: int) -> tuple[int, int]:
    """Integer counts ``0 <= a <= b <= d``; integral floats (``3.0``) are accepted, while bools,
    strings, non-integral values and numbers beyond float64 (``10**400``, ``Fraction(10**400)``)
    are refused before any float conversion can overflow."""
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, numbers.Integral) or d < 1:
        raise ValueError(f"d: expected the number of positions, an integer >= 1, got {d!r:.40}")
    out = []
    for name, v in (("a", a), ("b", b)):
        integral = False
        if isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)):
            integral, v = True, int(v)
        elif isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)):
            try:
                fv = float(v)
            except (OverflowError, ValueError, TypeError):
                fv = math.nan
            if math.isfinite(fv) and fv.is_integer() and v == fv:
                integral, v = True, int(fv)
        if not integral:
            raise ValueError(f"{name}: expected an integer count of revealed tokens in 0..{d}, got {_short(v)}")
        out.append(v)
    a, b = out
    if not (0 <= a <= b <= d):
        raise ValueError(f"a, b: need 0 <= a <= b <= d={d}, got a={_short(a)}, b={_short(b)}")
    return a, b


def ugc_density(p, lam):
    r"""Density of the UGC in log reveal odds, :math:`q(\lambda) = r^2(1-r)^2 h'(r)`,
    :math:`r = e^\lambda/(1+e^\lambda)` (vectorized; W26)."""
    prof = _as_profile(p)
    r = np.asarray(_from_log_odds(lam))
    out = (r * (1 - r)) ** 2 * _gain_derivative(prof, r)
    return out if out.ndim else float(out)


def canonical_interval(d: int) -> tuple[float, float]:
    r"""W26's canonical interval :math:`[1/d, 1 - 1/d]` (:math:`\lambda \in [-\ell_d, \ell_d]`,
    :math:`\ell_d = \log(d - 1)`); needs d >= 2."""
    d = int_arg(d, "d", 2, None, " (the canonical interval [1/d, 1-1/d] needs d >= 2)")
    return 1.0 / d, 1.0 - 1.0 / d


def _resolve_interval(prof: Profile, interval) -> tuple[float, float]:
    if interval is None:
        return canonical_interval(prof.d)
    try:
        a, b = interval
    except (TypeError, ValueError):
        raise ValueError(f"interval: expected a pair (a, b), got {interval!r}") from None
    return check_interval(a, b, "interval")


def coarse_complexity(p, interval=None) -> float:
    r"""Coarse complexity :math:`C_{ugc} = (\lambda(b) - \lambda(a))\, H(a, b)`; on the
    canonical interval (default) :math:`2\ell_d H(1/d, 1-1/d)` (W26).

    ``interval`` must lie inside (0, 1) (finite log-odds length).
    """
    prof = _as_profile(p)
    a, b = _resolve_interval(prof, interval)
    if not (0.0 < a and b < 1.0):
        raise ValueError(f"interval: needs 0 < a <= b < 1 (finite log-odds length), got ({a}, {b})")
    return float((_log_odds(b) - _log_odds(a)) * profile_ugc(prof, a, b))


def partition_complexity(p, edges) -> float:
    r"""Partition complexity :math:`C(\mathcal P) = \bigl(\sum_k \sqrt{S_k H_k}\bigr)^2` (W26).

    ``edges`` are reveal times :math:`0 < \tau_0 < \tau_1 < \dots < \tau_K < 1` (block k is
    :math:`[\tau_{k-1}, \tau_k]`); :math:`S_k = \lambda(\tau_k) - \lambda(\tau_{k-1})` is its
    log-odds length and :math:`H_k = H(\tau_{k-1}, \tau_k)` its UGC. One block gives
    :math:`C_{ugc}`; refining decreases C toward :math:`P_{ugc}` (Cauchy–Schwarz).
    """
    prof = _as_profile(p)
    tau = check_edges(edges)
    S, H = _blocks(prof, tau)
    return float(np.sum(np.sqrt(S * H)) ** 2)


def check_edges(edges) -> np.ndarray:
    """Partition edges: at least two reveal times, strictly increasing, strictly inside (0, 1)."""
    tau = float_array(edges, "edges", what="(K+1,)", finite=False)
    if tau.ndim != 1 or tau.shape[0] < 2:
        raise ValueError(f"edges: need at least two reveal times, got {edges!r}")
    if not np.all(np.isfinite(tau)) or tau[0] <= 0 or tau[-1] >= 1:
        raise ValueError(f"edges: must lie strictly inside (0, 1), got [{tau[0]}, {tau[-1]}]")
    if np.any(np.diff(tau) <= 0):
        raise ValueError("edges: must be strictly increasing")
    return tau


def _blocks(prof: Profile, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lam = np.log(tau) - np.log1p(-tau)
    S = np.diff(lam)
    H = np.array([profile_ugc(prof, tau[k], tau[k + 1]) for k in range(tau.shape[0] - 1)])
    if np.any(H < 0):
        raise ValueError("p: negative UGC on a block; the profile is not non-increasing")
    return S, H


def fine_complexity(p, interval=None) -> float:
    r"""Fine complexity :math:`P_{ugc} = \bigl(\int_a^b \sqrt{h'(t)}\, dt\bigr)^2
    = \bigl(\int \sqrt{q(\lambda)}\, d\lambda\bigr)^2`, canonical interval by default (W26,
    Theorem 3: the optimal N-step error is :math:`P_{ugc}/(2N) + o(1/N)`).

    :math:`\sqrt{h'}` is not a polynomial: adaptive quadrature (scipy ``quad``, relative
    tolerance 1e-12). Needs a non-increasing profile (see ``MONOTONE_TOL``).
    """
    prof = _as_profile(p)
    a, b = _resolve_interval(prof, interval)
    if b == a or prof.d == 1:
        return 0.0
    profile_increments(prof, strict=True)  # validate

    def f(t):
        return math.sqrt(float(_gain_derivative(prof, np.asarray(t), strict=True)))

    val, _ = integrate.quad(f, a, b, epsabs=0.0, epsrel=1e-12, limit=500)
    return float(val) ** 2


def effective_total_correlation(p) -> float:
    r"""DHW26 effective total correlation
    :math:`\int_0^1 t \min\{1, -\log t\}\, h'(t)\, dt`.

    :math:`H(0,1) \le \mathrm{DHW} \le \frac{e}{e-1} H(0, 1)` and
    :math:`\mathrm{DHW} \le \min(TC, DTC)` (docs/theory.md §3). On :math:`[0, 1/e]` the integrand is
    a polynomial (exact Gauss–Legendre); on :math:`[1/e, 1]` it is analytic (Gauss–Legendre
    with :math:`\max(64, 2d)` nodes, converged to rounding).
    """
    prof = _as_profile(p)
    d = prof.d
    if d == 1:
        return 0.0
    c = math.exp(-1.0)
    u, w = _gauss(0.0, c, d // 2 + 2)
    left = np.dot(w, u * _gain_derivative(prof, u))
    u, w = _gauss(c, 1.0, max(64, 2 * d))
    right = np.dot(w, -u * np.log(u) * _gain_derivative(prof, u))
    return float(left + right)


def tse(p) -> float:
    r"""Tononi–Sporns–Edelman complexity :math:`\sum_{k=1}^d (e_k - \frac{k}{d} e_d)`
    of the profile's :math:`e_m`: :func:`mdmtheory.information.entropies.tse_complexity`'s
    formula (equal up to rounding for a Joint, whose :math:`e_m` it reads through φ); also
    accepts a Profile.

    :math:`H(0, 1) = 2\,\mathrm{TSE}/(d+1)`.
    """
    return _tse_from_coefficients(_as_profile(p).entropy_coefficients)


# -- one-step defects -----------------------------------------------------------------
@renamed_keywords(a="start", b="stop")
def gamma_umask(p, start: float, stop: float) -> float:
    r"""One-step defect :math:`\Gamma_{umask}(a, b) = \int_a^b (h(u) - h(a))\,du`, exact, of
    the step from a = ``start`` to b = ``stop``.

    Gauss–Legendre quadrature with enough nodes to integrate the degree-(d-1) polynomial
    exactly; the integrand is non-negative (h is non-decreasing), so nothing cancels.
    """
    a, b = check_interval(start, stop, "start, stop")
    prof = _as_profile(p)
    if b == a:
        return 0.0
    scale = float(np.abs(prof.values).max())
    if scale > _RESCALE_ABOVE:  # d (φ_0 - φ_m) would overflow: work on φ / scale (exact: linear)
        val = gamma_umask(Profile(prof.values / scale), a, b) * scale
        if not math.isfinite(val):
            raise ValueError(f"p: the one-step defect exceeds float64 (profile values up to {scale:.3g})")
        return val
    n = prof.d // 2 + 2
    x, w = np.polynomial.legendre.leggauss(n)
    u = a + (b - a) * (x + 1) / 2
    vals = gain(prof, u) - gain(prof, np.array(a))
    return float((b - a) / 2 * np.dot(w, vals))


def gamma_card(p, a: int, b: int) -> float:
    r"""Card one-step defect :math:`\Gamma_{card}(a, b) = (b - a)\varphi_a - (e_b - e_a)
    = \sum_{m=a}^{b-1} (\varphi_a - \varphi_m)`: the expected total correlation of one
    fixed-cardinality step revealing b - a tokens after a (docs/theory.md §2)."""
    prof = _as_profile(p)
    a, b = check_card_pair(a, b, prof.d)
    if b == a:
        return 0.0
    phi = prof.values
    return float(np.sum(phi[a] - phi[a:b]))


def __getattr__(name):
    return _module_getattr(__name__, name)
