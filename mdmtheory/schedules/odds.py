r"""Reveal odds :math:`\psi(t) = t/(1-t)` and their inverse :math:`\psi^{-1}(s) = s/(1+s)`.

A reveal time :math:`t \in [0, 1]` (the fraction of positions revealed) has odds
:math:`\psi(t) = t/(1-t) \in [0, \infty]`, with :math:`\psi(0) = 0` and :math:`\psi(1) = \infty`;
:math:`\psi^{-1}(s) = s/(1+s)` maps them back (:math:`\psi^{-1}(\infty) = 1`). W26's geometric
grid, its bounds' factors :math:`\psi(b)/\psi(a) - 1` and its dyadic grid are written in them
(Wainwright 2026, *The data geometry of masking diffusion*, §2.2, Corollary 1, §4.3).

The one place the formula is written. Two forms:

* :func:`psi`, :func:`psi_inverse`: validated and vectorized (a float for a scalar, an array
  otherwise), ``inf`` at t = 1 and 1 at s = inf; bad input raises a ValueError naming the
  argument. :func:`mdmtheory.information.dyadic.psi` / ``psi_inverse`` and
  the old ``mdmtheory.information.ugc.reveal_odds`` is :func:`psi`.
* :func:`log_odds`, :func:`from_log_odds`: :math:`\lambda = \log\psi(t)` and back
  (:math:`r = e^\lambda/(1+e^\lambda)`), the coordinate W26's UGC density and geometric grids are
  written in; validated and vectorized like :func:`psi`.
* :func:`psi_raw`, :func:`psi_inverse_raw`: the bare formulas, unvalidated, for callers that have
  checked their times already; they work on Python floats, numpy arrays and traced JAX arrays
  alike (no branch on the value). ``psi_raw(1.0)`` divides by zero (a Python float raises, numpy
  gives ``inf`` with a warning); :func:`psi_scalar` is the scalar form with ``inf`` at
  :math:`t \ge 1`.
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import float_array

__all__ = ["psi", "psi_inverse", "psi_raw", "psi_inverse_raw", "psi_scalar", "log_odds", "from_log_odds"]


def psi_raw(t):
    r""":math:`\psi(t) = t/(1-t)`, unvalidated: floats, numpy arrays and JAX arrays (traceable)."""
    return t / (1.0 - t)


def psi_inverse_raw(s):
    r""":math:`\psi^{-1}(s) = s/(1+s)`, unvalidated: floats, numpy arrays and JAX arrays."""
    return s / (1.0 + s)


def psi_scalar(t: float) -> float:
    r""":math:`\psi(t)` of one real t, ``inf`` at :math:`t \ge 1` (no validation)."""
    return math.inf if t >= 1.0 else psi_raw(t)


def _scalar_or_array(out: np.ndarray):
    return out if out.ndim else float(out)


def _times(t) -> np.ndarray:
    t = float_array(t, "t", what="reveal times in [0, 1]")
    if np.any(t < 0) or np.any(t > 1):
        raise ValueError("t: reveal times must lie in [0, 1]")
    return t


def psi(t):
    r"""Reveal odds :math:`\psi(t) = t/(1-t)` of reveal times t in [0, 1] (vectorized; ``inf`` at t = 1).

    A float for a scalar t, a float64 array of t's shape otherwise.
    """
    t = _times(t)
    return _scalar_or_array(np.where(t < 1.0, psi_raw(np.where(t < 1.0, t, 0.0)), np.inf))


def psi_inverse(s):
    r""":math:`\psi^{-1}(s) = s/(1+s)` of reveal odds s in [0, inf] (vectorized; 1 at s = inf).

    A float for a scalar s, a float64 array of s's shape otherwise.
    """
    s = float_array(s, "s", what="reveal odds in [0, inf]", finite=False)
    if np.any(np.isnan(s)) or np.any(s < 0):
        raise ValueError("s: reveal odds must lie in [0, inf] (no NaN)")
    with np.errstate(invalid="ignore"):
        out = psi_inverse_raw(s)
    return _scalar_or_array(np.where(np.isinf(s), 1.0, out))


def log_odds(t):
    r""":math:`\lambda = \log\psi(t) = \log t - \log(1-t)` (``-inf`` at 0, ``inf`` at 1)."""
    t = _times(t)
    with np.errstate(divide="ignore"):
        out = np.log(t) - np.log1p(-t)
    return _scalar_or_array(out)


def from_log_odds(lam):
    r""":math:`r = e^\lambda/(1 + e^\lambda)`, the reveal time of log-odds :math:`\lambda`."""
    lam = float_array(lam, "lam", what="log reveal odds", finite=False)
    if np.any(np.isnan(lam)):
        raise ValueError("lam: contains NaN")
    out = np.where(lam >= 0, 1.0 / (1.0 + np.exp(-np.abs(lam))), np.exp(-np.abs(lam)) / (1.0 + np.exp(-np.abs(lam))))
    return _scalar_or_array(out)
