r"""The information profile :math:`\varphi` (docs/design.md §2, docs/theory.md §1).

.. math::

    \varphi_m = f(m) = e_{m+1} - e_m
    = \mathop{\mathrm{mean}}_{|A| = m,\ j \notin A} H(X_j \mid X_A), \qquad m = 0, \dots, d-1,

the mean entropy of a fresh position given m uniformly random revealed ones.
:math:`\varphi` is non-increasing and :math:`\sum_m \varphi_m = H(X)`
(proof: proofs/profile_identities.md). The information curve
:math:`Z(i) = \varphi_0 - \varphi_i` is the same object seen from the other side.

A :class:`Profile` may also hold a *cross-entropy* profile :math:`c(i) = f(i) + \varepsilon(i)`
measured on a model (the MDM training loss at i revealed tokens); it need not be
monotone, and its sum is not H(X).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .entropies import entropy_coefficients
from .joint import Joint

__all__ = ["Profile", "information_profile"]


@dataclass(frozen=True, eq=False, init=False)
class Profile:
    r"""Values :math:`\varphi_0, \dots, \varphi_{d-1}` (nats), an immutable record.

    Parameters
    ----------
    values : array_like, shape (d,)
        Finite values, d >= 1.
    """

    values: np.ndarray

    def __init__(self, values):
        try:
            v = np.array(values, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"values: cannot be read as a float64 vector ({exc})") from None
        if v.ndim != 1 or v.shape[0] < 1:
            raise ValueError(f"values: expected a non-empty 1-d vector, got shape {v.shape}")
        if not np.all(np.isfinite(v)):
            raise ValueError("values: contains NaN or infinite entries")
        v.setflags(write=False)
        object.__setattr__(self, "values", v)

    @classmethod
    def from_entropy_coefficients(cls, e) -> "Profile":
        r"""Profile from :math:`e_0 = 0, e_1, \dots, e_d` (differences)."""
        try:
            e = np.asarray(e, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"e: expected a float vector e_0..e_d, got {e!r}") from None
        if not np.all(np.isfinite(e)):
            raise ValueError("e: contains NaN or infinite entries")
        if e.ndim != 1 or e.shape[0] < 2:
            raise ValueError(f"e: expected e_0..e_d (length d+1 >= 2), got shape {e.shape}")
        if e[0] != 0.0:
            raise ValueError(f"e: e_0 must be 0 (entropy of the empty set), got {e[0]}")
        return cls(np.diff(e))

    @property
    def d(self) -> int:
        return self.values.shape[0]

    @property
    def entropy(self) -> float:
        r""":math:`\sum_m \varphi_m` (= H(X) for an exact profile)."""
        return float(self.values.sum())

    @property
    def entropy_coefficients(self) -> np.ndarray:
        r""":math:`e_m = \sum_{i < m} \varphi_i`, m = 0..d."""
        return np.concatenate([[0.0], np.cumsum(self.values)])

    @property
    def curve(self) -> np.ndarray:
        r"""Information curve :math:`Z(i) = \varphi_0 - \varphi_i`."""
        return self.values[0] - self.values

    def is_nonincreasing(self, tol: float = 1e-12) -> bool:
        """Whether the values are non-increasing up to ``tol`` (scaled by the largest value)."""
        scale = max(1.0, float(np.abs(self.values).max()))
        return bool(np.all(np.diff(self.values) <= tol * scale))

    def __repr__(self) -> str:
        return f"Profile(d={self.d}, values={np.array2string(self.values, precision=4)})"


def information_profile(p: Joint) -> Profile:
    r"""Exact information profile of a joint law from all :math:`2^d` subset entropies.

    Proof: proofs/profile_identities.md (tests/proofs/test_profile_identities.py).
    """
    return Profile.from_entropy_coefficients(entropy_coefficients(p))
