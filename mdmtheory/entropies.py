r"""All :math:`2^d` subset entropies in one pass, and the quantities derived from them.

``subset_entropies(p)[mask]`` is :math:`H(X_S)` in nats, with S the positions whose bits
are set in ``mask`` (bit j is position j). Everything else in this module is a cheap
functional of that vector (docs/theory.md §1):

.. math::

    e_m = \binom{d}{m}^{-1} \sum_{|S| = m} H(X_S), \qquad
    S(X) = \sum_i H(X_i), \qquad TC = S(X) - H(X), \qquad
    DTC = H(X) - \sum_i H(X_i \mid X_{-i}),

    \mathrm{TSE} = \sum_{k=1}^{d} \bigl(e_k - \tfrac{k}{d} e_d\bigr), \qquad
    \sum_i I(X_i; X_{-i}) = TC + DTC.

**Algorithm.** A depth-first walk over the trailing positions m..d-1: each node holds the
marginal of the leading positions and the kept trailing ones, a child sums one more
position out of its parent (never out of the full table). At a leaf, the leading m
positions are expanded in cache-sized blocks: every axis gets a "marginalized" slot filled
from its parent slots, so a block of shape ``(K+1,)*m`` holds every marginal of every
subset of the leading positions; :math:`-x \log x` is applied once per entry and each axis
is folded back to {kept, marginalized}. Work: one add per marginal entry that is not a
table entry and one :math:`x \log x` per marginal entry (:math:`3^d - 2^d` and
:math:`3^d` for K = 2); memory: the table, the walk's path of marginals (< 2x the table)
and one block. numpy, float64, no compilation: on cache-sized blocks the logarithm
dominates, and handing blocks to XLA for its vectorized log, or building the whole lattice
in one jit call, measured slower (benchmarks/RESULTS.md §12).
"""

from __future__ import annotations

import threading
import weakref

import numpy as np
from scipy.special import comb

from ._validate import float_array
from .joint import Joint

__all__ = [
    "subset_entropies",
    "entropy",
    "entropy_coefficients",
    "total_correlation",
    "dual_total_correlation",
    "sum_of_entropies",
    "tse_complexity",
    "sum_mutual_information",
    "card_gain_coefficients",
    "popcounts",
]

#: Largest lattice block (float64 entries, including the marginalized slots) held at once:
#: cache-sized, the walk is memory-bound.
BLOCK_ENTRIES = 1 << 16
#: At most this many leading positions are expanded per block (at least 16 columns of kept
#: trailing values per block, the contiguous axis of every vectorized operation).
BLOCK_AXES = 6
_TINY = float(np.finfo(np.float64).tiny)

_CACHE: "weakref.WeakKeyDictionary[Joint, np.ndarray]" = weakref.WeakKeyDictionary()
_SCRATCH = threading.local()


def _scratch(shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Two reusable buffers of at least ``shape`` (last axis may be longer), per thread."""
    bufs = getattr(_SCRATCH, "bufs", None)
    if bufs is None or bufs[0].shape[:-1] != shape[:-1] or bufs[0].shape[-1] < shape[-1]:
        bufs = _SCRATCH.bufs = (np.empty(shape), np.empty(shape))
    c = shape[-1]
    return bufs[0][..., :c], bufs[1][..., :c]


def _block_entropies(part: np.ndarray, K: int) -> np.ndarray:
    r"""``part`` of shape ``(K,)*m + (c,)`` (c columns: values of the kept trailing
    positions) -> ``(K+1,)*m``: for each pattern of leading positions (slot K =
    marginalized), :math:`-\sum x \log x` over the columns and the pattern's entries."""
    m = part.ndim - 1
    L, tmp = _scratch((K + 1,) * m + (part.shape[-1],))
    L[(slice(0, K),) * m] = part
    for ax in range(m):  # slot K of axis ax from slots 0..K-1 (axes < ax already complete)
        pre = (slice(None),) * ax
        post = (slice(0, K),) * (m - ax - 1)
        dst = L[pre + (K,) + post]
        np.add(L[pre + (0,) + post], L[pre + (1,) + post], out=dst)
        for v in range(2, K):
            dst += L[pre + (v,) + post]
    # -x log x with 0 log 0 = 0: x log(max(x, tiny)) is exactly 0 at x = 0 and differs
    # from x log x by < 1e-305 on subnormals
    np.maximum(L, _TINY, out=tmp)
    np.log(tmp, out=tmp)
    tmp *= L
    return -tmp.sum(axis=-1)


def _fold(out: np.ndarray, K: int) -> np.ndarray:
    """``(K+1,)*m`` -> ``(2,)*m``: per axis, index 0 = marginalized, 1 = kept (summed)."""
    for ax in range(out.ndim):
        pre = (slice(None),) * ax
        out = np.concatenate([out[pre + (slice(K, K + 1),)], out[pre + (slice(0, K),)].sum(axis=ax, keepdims=True)], ax)
    return out


def _compute(table: np.ndarray) -> np.ndarray:
    d, K = table.ndim, table.shape[0]
    # m leading positions are expanded in blocks; the d - m trailing ones are walked as
    # {kept, marginalized} patterns, their kept values the blocks' columns, in chunks
    m = min(d, BLOCK_AXES)
    while m > 0 and (K + 1) ** m > BLOCK_ENTRIES // 16:
        m -= 1
    cols = max(1, BLOCK_ENTRIES // (K + 1) ** m)
    H = np.empty(1 << d, dtype=np.float64)
    lead = np.zeros((2,) * m, dtype=np.int64)  # bitmask of each folded block entry
    for j in range(m):
        lead = lead + (np.arange(2, dtype=np.int64) << j).reshape((1,) * j + (2,) + (1,) * (m - j - 1))
    lead = lead.ravel()

    def leaf(t: np.ndarray, mask: int) -> None:
        t = t.reshape((K,) * m + (-1,))
        n = t.shape[-1]
        acc = None
        for start in range(0, n, cols):
            res = _block_entropies(t[..., start : start + cols], K)
            acc = res if acc is None else acc + res
        H[mask + lead] = _fold(acc, K).ravel()

    def walk(t: np.ndarray, i: int, mask: int, n_kept: int) -> None:
        # t: the leading m positions, then the kept positions among m..i-1, then i..d-1
        if i == d:
            leaf(t, mask)
            return
        walk(t, i + 1, mask | (1 << i), n_kept + 1)  # keep position i
        walk(t.sum(axis=m + n_kept), i + 1, mask, n_kept)  # marginalize it (from the parent)

    walk(np.ascontiguousarray(table, dtype=np.float64), m, 0, 0)
    H[0] = 0.0
    # an entropy is >= 0; a near point mass stored as 1 + 1 ulp (normalized to rounding,
    # joint.py's tolerance model) gives -2e-16: that rounding is returned as 0
    np.maximum(H, 0.0, out=H)
    return H


def subset_entropies(p: Joint) -> np.ndarray:
    r"""Entropies :math:`H(X_S)` of all :math:`2^d` subsets, indexed by bitmask (nats).

    The result is cached per :class:`~mdmtheory.Joint` (records are immutable) and returned
    read-only. Requires ``p.lost == 0`` (a sub-normalized sampler law has no entropy).
    """
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
    if p.lost:
        raise ValueError(f"p: has lost mass {p.lost:.3g}; entropies need a normalized law")
    H = _CACHE.get(p)
    if H is None:
        H = _compute(p.table)
        H.setflags(write=False)
        _CACHE[p] = H
    return H


def _as_entropies(x) -> np.ndarray:
    if isinstance(x, Joint):
        return subset_entropies(x)
    try:
        H = float_array(x, "p", finite=False)
    except ValueError as exc:
        raise ValueError(f"p: expected a Joint or a vector of 2**d subset entropies ({exc})") from None
    n = H.shape[0] if H.ndim == 1 else 0
    if H.ndim != 1 or n < 2 or n & (n - 1):
        raise ValueError("p: expected a Joint or a vector of 2**d subset entropies")
    if not np.all(np.isfinite(H)):
        raise ValueError("p: the subset entropies contain NaN or infinite entries")
    if H[0] != 0.0 or np.any(H < 0):
        raise ValueError(
            "p: subset entropies must be >= 0 with H(empty set) = 0 at index 0 "
            f"(got H[0] = {H[0]:.3g}, min {H.min():.3g})"
        )
    return H


def _dim(H: np.ndarray) -> int:
    return H.shape[0].bit_length() - 1


def popcounts(d: int) -> np.ndarray:
    """Number of set bits of every mask ``0 .. 2**d - 1``."""
    masks = np.arange(1 << d, dtype=np.int64)
    c = np.zeros(1 << d, dtype=np.int64)
    for j in range(d):
        c += (masks >> j) & 1
    return c


def entropy(p) -> float:
    """Joint entropy :math:`H(X)` (nats)."""
    H = _as_entropies(p)
    return float(H[-1])


def entropy_coefficients(p) -> np.ndarray:
    r""":math:`e_m`, m = 0..d: mean entropy of a uniformly random m-subset (docs/theory.md §1)."""
    H = _as_entropies(p)
    d = _dim(H)
    sums = np.bincount(popcounts(d), weights=H, minlength=d + 1)
    return sums / comb(d, np.arange(d + 1), exact=False)


def sum_of_entropies(p) -> float:
    r""":math:`S(X) = \sum_i H(X_i)`."""
    H = _as_entropies(p)
    return float(sum(H[1 << j] for j in range(_dim(H))))


def total_correlation(p) -> float:
    r"""Total correlation :math:`TC = \sum_i H(X_i) - H(X)` (Watanabe)."""
    H = _as_entropies(p)
    return sum_of_entropies(H) - float(H[-1])


def dual_total_correlation(p) -> float:
    r"""Dual total correlation :math:`DTC = H(X) - \sum_i H(X_i \mid X_{-i})` (Han)."""
    H = _as_entropies(p)
    d = _dim(H)
    full = (1 << d) - 1
    return float(sum(H[full ^ (1 << j)] for j in range(d)) - (d - 1) * H[full])


def sum_mutual_information(p) -> float:
    r""":math:`\sum_i I(X_i; X_{-i}) = TC + DTC = d(\varphi_0 - \varphi_{d-1})`."""
    H = _as_entropies(p)
    return total_correlation(H) + dual_total_correlation(H)


def tse_complexity(p) -> float:
    r"""Tononi–Sporns–Edelman complexity :math:`\sum_{k=1}^d (e_k - (k/d) e_d)`."""
    e = entropy_coefficients(p)
    d = e.shape[0] - 1
    k = np.arange(1, d + 1)
    return float(np.sum(e[1:] - k / d * e[d]))


def card_gain_coefficients(p) -> np.ndarray:
    r"""Card gain coefficients :math:`h^{card}_j = d(\varphi_0 - \varphi_j)`, j = 0..d-1.

    :math:`h^{card}_j = \sum_i` mean over uniform j-subsets B of :math:`[d]\setminus\{i\}`
    of :math:`I(X_i; X_B)` (W26; docs/theory.md §1).
    """
    e = entropy_coefficients(p)
    phi = np.diff(e)
    return (phi.shape[0]) * (phi[0] - phi)
