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
from scipy.special import comb

from ..laws.joint import Joint, positions_to_mask, prompt_positions
from .._moved import renamed_keywords
from .._estimate import Estimate, Record
from .._validate import bool_arg, float_array, LIMITS, name_arg, PROFILE_TOL, tol_arg
from .entropies import entropy_coefficients, popcounts, subset_entropies

__all__ = ["Profile", "ProfileEstimate", "information_profile", "as_profile", "MONOTONE_TOL", "monotone_gap"]

#: Relative rise (to max |φ|) above the running minimum that still counts as rounding: the
#: one monotonicity tolerance of the package (:meth:`Profile.is_nonincreasing`).
MONOTONE_TOL = PROFILE_TOL


def monotone_gap(values) -> float:
    r""":math:`\max_s (c_s - \min_{u \le s} c_u)` (>= 0): how far ``values`` are from non-increasing."""
    c = float_array(values, "values", ndim=1, what="(d,)", finite=False)
    if np.any(np.isnan(c)):
        raise ValueError("values: contains NaN")
    return float(np.max(c - np.minimum.accumulate(c))) if c.size else 0.0


@dataclass(frozen=True, eq=False, init=False)
class Profile(Record):
    r"""Values :math:`\varphi_0, \dots, \varphi_{d-1}` (nats), an immutable record.

    Parameters
    ----------
    values : array_like, shape (d,)
        Finite values, d >= 1.
    """

    values: np.ndarray

    def __init__(self, values):
        if isinstance(values, Profile):
            values = values.values
        v = float_array(values, "values", ndim=1, what="(d,)")
        if v.shape[0] < 1:
            raise ValueError(f"values: expected a non-empty 1-d vector, got shape {v.shape}")
        if v.shape[0] > LIMITS["d"]:
            raise ValueError(f"values: {v.shape[0]} positions exceed the documented limit d <= {LIMITS['d']}")
        v.setflags(write=False)
        object.__setattr__(self, "values", v)

    @classmethod
    def from_entropy_coefficients(cls, e) -> "Profile":
        r"""Profile from :math:`e_0 = 0, e_1, \dots, e_d` (differences)."""
        e = float_array(e, "e", what="(d+1,), e_0..e_d")
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

    def is_nonincreasing(self, tol: float = None) -> bool:
        r"""Whether the values are non-increasing up to ``tol`` (default :data:`MONOTONE_TOL`).

        The one rule of the package (:func:`monotone_gap`): the largest rise above the running
        minimum, :math:`\max_s (\varphi_s - \min_{u \le s} \varphi_u)`, is at most
        ``tol · max|φ|`` — relative to the profile's own scale, so multiplying a profile by a
        constant never changes the answer. :func:`mdmtheory.optimal.optimal_schedule`,
        :func:`~mdmtheory.optimal.lagrangian_frontier` and the UGC functions accept exactly
        the profiles accepted here (with the same ``tol``).
        """
        tol = MONOTONE_TOL if tol is None else tol_arg(tol)
        return monotone_gap(self.values) <= tol * float(np.abs(self.values).max())

    def __repr__(self) -> str:
        return f"Profile(d={self.d}, values={np.array2string(self.values, precision=4)})"


@dataclass(frozen=True, eq=False)
class ProfileEstimate(Estimate):
    r"""Per-level estimates (nats): the cross-entropy profile c(i) or the learning error ε(i).

    One record for :func:`mdmtheory.design.estimate_cross_entropy_profile` (numpy oracles, or a torch model
    through the bridge) and :func:`mdmtheory.bridge.estimate_profile` (it was two namesakes,
    the design one with four of these fields). An :class:`~mdmtheory.Estimate`.

    Attributes
    ----------
    levels : (L,) numbers of revealed tokens i.
    values, stderr : (L,) estimates and standard errors.
    counts : (L,) number of draws per level (also ``n``).
    forwards : sequences evaluated by the model (all ranks).
    quantity : ``"cross_entropy"`` or ``"learning_error"``.
    d : sequence length.
    """

    levels: np.ndarray
    values: np.ndarray
    stderr: np.ndarray
    counts: np.ndarray
    forwards: int
    quantity: str = "cross_entropy"
    d: int | None = None

    point = "values"

    @property
    def n(self) -> np.ndarray:
        """Draws per level (``counts``)."""
        return self.counts

    @renamed_keywords(level="confidence")
    def ci(self, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Normal confidence intervals (low, high) per level (:meth:`confidence_interval`)."""
        return self.confidence_interval(confidence)

    @property
    def profile(self):
        """The values as a :class:`~mdmtheory.Profile` (needs every level 0..d−1)."""
        if self.d is None or not np.array_equal(self.levels, np.arange(self.d)):
            raise ValueError("levels: a Profile needs every level 0..d-1 (estimate with levels=None)")
        return Profile(self.values)


def _nonincreasing(v: np.ndarray) -> np.ndarray:
    """Least-squares non-increasing fit (pool adjacent violators); keeps the sum."""
    sums: list[float] = []
    counts: list[int] = []
    for x in v.tolist():
        sums.append(x)
        counts.append(1)
        while len(sums) > 1 and sums[-2] / counts[-2] <= sums[-1] / counts[-1]:
            s, c = sums.pop(), counts.pop()
            sums[-1] += s
            counts[-1] += c
    return np.repeat([s / c for s, c in zip(sums, counts)], counts)


def _fix_rounding(v: np.ndarray) -> Profile:
    """Remove rounding-level rises and negatives of a computed profile (see below)."""
    if np.all(np.diff(v) <= 0) and v[-1] >= 0:
        return Profile(v)
    # conditional entropies are >= 0: a last value of -1e-32 is rounding of 0
    fixed = np.maximum(_nonincreasing(v), 0.0)
    if np.max(np.abs(fixed - v)) > 1e-9 * max(1.0, float(np.abs(v).max())):
        raise RuntimeError(f"information_profile: the computed profile rises beyond rounding: {v}")
    return Profile(fixed)


def information_profile(p: Joint, given=None) -> Profile:
    r"""Exact information profile of a joint law from all :math:`2^d` subset entropies.

    φ is non-increasing (a theorem), but differences of entropies carry rounding errors
    ~1e-16 · H, so a flat stretch (a product law) can come out rising by an ulp. Where the
    computed values rise, adjacent values are pooled to their mean (pool adjacent
    violators), which keeps :math:`\sum_m \varphi_m = H(X)` and changes no value by more
    than the rounding it removes; the result is non-increasing exactly. Values below 0 by
    rounding (a conditional entropy of -1e-32) are set to 0. Rises larger than
    rounding (1e-9 · max(1, H)) would be a bug and raise ``RuntimeError``.

    **Prompted profile** (``given`` = positions G of a prompt, R = [d] ∖ G the response):
    the profile of the response averaged over the law of the prompt,

    .. math::

        \varphi^G_m = \mathbb{E}_{x_G}\, \varphi_m\bigl(p(\cdot \mid x_G)\bigr)
        = \mathop{\mathrm{mean}}_{A \subseteq R,\ |A| = m,\ j \in R \setminus A}
          H(X_j \mid X_A, X_G), \qquad m = 0, \dots, |R| - 1,

    (conditional entropy is the average over x_G of the entropy given x_G), computed as the
    differences of :math:`e^G_m = \mathrm{mean}_{|A| = m} H(X_{A \cup G}) - H(X_G)`. It is
    non-increasing and sums to :math:`H(X_R \mid X_G)`; path KL and the optimal schedule
    are linear in φ, so ``path_kl(information_profile(p, given=G), plan)`` is the prompt-
    averaged path KL of the response and ``optimal_schedule`` of it the best schedule for
    the task (checked against ``p.condition`` prompt by prompt in tests/samplers/test_prompted.py).

    Proof: proofs/profile_identities.md (tests/proofs/test_profile_identities.py).
    """
    if given is None:
        phi = Profile.from_entropy_coefficients(entropy_coefficients(p)).values
        if isinstance(p, Joint):
            return _fix_rounding(phi)
        try:  # a vector of subset entropies: a rise is the caller's vector, not a bug
            return _fix_rounding(phi)
        except RuntimeError as exc:
            raise ValueError(f"p: these 2**d subset entropies are not those of a law ({exc}); "
                             "pass a Joint or the subset_entropies of one") from None
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
    G = prompt_positions(given, p.d)
    g = positions_to_mask(G, p.d, name="given")
    if not G:
        return information_profile(p)
    H = subset_entropies(p)
    masks = np.arange(1 << p.d)
    sup = (masks & g) == g  # subsets containing the prompt
    n = p.d - len(G)
    sizes = popcounts(p.d)[sup] - len(G)
    e = np.bincount(sizes, weights=H[sup] - H[g], minlength=n + 1) / comb(n, np.arange(n + 1), exact=False)
    e[0] = 0.0
    return _fix_rounding(np.diff(e))


def as_profile(x, *, name: str = "p", vectors: bool = False) -> Profile:
    """The exact profile of a Joint, or a Profile as it is.

    ``vectors=True`` also accepts a plain finite vector of profile values (e.g. a model's
    cross-entropy curve). ``name`` is the caller's argument name, used in errors.
    """
    name = name_arg(name)
    if isinstance(x, Profile):
        return x
    if isinstance(x, Joint):
        return information_profile(x)
    if bool_arg(vectors, "vectors"):
        try:
            return Profile(x)
        except ValueError as exc:
            raise ValueError(f"{name}: expected a Joint, a Profile or a finite vector ({exc})") from None
    raise ValueError(f"{name}: expected a mdmtheory.Joint or Profile, got {type(x).__name__}")
