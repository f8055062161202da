r"""The gain polynomial of the Bernoulli-subset sampler and its one-step defect (W26).

Notation of THEORY.md §3. With :math:`A_{i,t}` including each position of
:math:`[d]\setminus\{i\}` independently with probability t,

.. math::

    h(t) = \sum_i \mathbb{E}\, I(X_i; X_{A_{i,t}})
         = \sum_{j=0}^{d-1} \binom{d-1}{j} t^j (1-t)^{d-1-j} h^{card}_j,
    \qquad h^{card}_j = d(\varphi_0 - \varphi_j),

    \mathrm{Info}(X; X_t) = \sum_{m=0}^{d} \binom{d}{m} t^m (1-t)^{d-m} e_m,

    \Gamma_{umask}(a, b) = \int_a^b (b - u) h'(u)\, du = \int_a^b \bigl(h(u) - h(a)\bigr) du
    = (b - a)(S - h(a)) - \bigl(\mathrm{Info}(X; X_b) - \mathrm{Info}(X; X_a)\bigr).

:math:`\Gamma_{umask}(a, b)` is the expected total correlation of one Bernoulli step from
reveal time a to b (W26; proof: proofs/path_kl_identity.md). Every function takes a
:class:`~mdmtheory.Joint` or a :class:`~mdmtheory.Profile`.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binom

from .joint import Joint
from .profile import Profile, information_profile

__all__ = ["as_profile", "gain", "info", "gamma_umask"]


def as_profile(x) -> Profile:
    """The exact profile of a Joint, or a Profile as it is."""
    if isinstance(x, Profile):
        return x
    if isinstance(x, Joint):
        return information_profile(x)
    raise ValueError(f"p: expected a mdmtheory.Joint or Profile, got {type(x).__name__}")


def _times(t) -> np.ndarray:
    t = np.asarray(t, dtype=np.float64)
    if np.any(~np.isfinite(t)) or np.any(t < 0) or np.any(t > 1):
        raise ValueError("t: reveal times must lie in [0, 1]")
    return t


def gain(p, t):
    r"""Gain polynomial :math:`h(t)` in Bernstein form (vectorized over t)."""
    phi = as_profile(p).values
    d = phi.shape[0]
    hcard = d * (phi[0] - phi)
    t = _times(t)
    j = np.arange(d)
    return binom.pmf(j, d - 1, t[..., None]) @ hcard


def info(p, t):
    r""":math:`\mathrm{Info}(X; X_t)`, the mean entropy of a Bernoulli(t) revealed set."""
    e = as_profile(p).entropy_coefficients
    d = e.shape[0] - 1
    t = _times(t)
    return binom.pmf(np.arange(d + 1), d, t[..., None]) @ e


def gamma_umask(p, a: float, b: float) -> float:
    r"""One-step defect :math:`\Gamma_{umask}(a, b) = \int_a^b (h(u) - h(a))\,du`, exact.

    Gauss–Legendre quadrature with enough nodes to integrate the degree-(d-1) polynomial
    exactly; the integrand is non-negative (h is non-decreasing), so nothing cancels.
    """
    if not (0.0 <= a <= b <= 1.0):
        raise ValueError(f"a, b: need 0 <= a <= b <= 1, got a={a}, b={b}")
    prof = as_profile(p)
    if b == a:
        return 0.0
    n = prof.d // 2 + 2
    x, w = np.polynomial.legendre.leggauss(n)
    u = a + (b - a) * (x + 1) / 2
    vals = gain(prof, u) - gain(prof, np.array(a))
    return float((b - a) / 2 * np.dot(w, vals))
