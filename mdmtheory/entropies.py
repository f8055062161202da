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

**Algorithm.** Append to every axis of the table its sum over that axis (a "marginalized"
slot): after d such steps the tensor of shape ``(K+1,)*d`` holds every marginal of every
subset, each built from a parent marginal (one more position), never from the full table.
Then :math:`-x \log x` is applied once and each axis is folded back to
{kept, marginalized}. Memory is :math:`(K+1)^d`; for larger tables the leading axes are
split into {kept, summed} patterns (a depth-first walk, each pattern summed from its
parent) and the trailing axes are done in vectorized blocks of bounded size. JAX, float64.
"""

from __future__ import annotations

import weakref
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from scipy.special import comb

from ._jax import x64
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

#: Largest block (number of float64 entries) materialized at once by the JAX kernel; kept
#: cache-sized: the kernel is memory-bound, and small blocks ran ~2x faster per entry.
BLOCK_ENTRIES = 1 << 20
_TINY = float(np.finfo(np.float64).tiny)

_CACHE: "weakref.WeakKeyDictionary[Joint, np.ndarray]" = weakref.WeakKeyDictionary()


@partial(jax.jit, static_argnums=(1,))
def _block_entropies(block: jax.Array, K: int) -> jax.Array:
    """Entropies of all subsets of the trailing axes of ``block``.

    ``block`` has shape ``(B,) + (K,)*m``: axis 0 enumerates the values of positions that
    are kept in every subset (a flattened set of leading positions). Returns shape
    ``(2,)*m`` with index 1 = kept, 0 = marginalized, axis i = trailing position i.
    """
    m = block.ndim - 1
    t = block
    for ax in range(1, m + 1):  # marginal slot appended from the parent along each axis
        t = jnp.concatenate([t, t.sum(axis=ax, keepdims=True)], axis=ax)
    # -x log x with 0 log 0 = 0: x * log(max(x, tiny)) is exactly 0 at x = 0 and differs
    # from x log x by < 1e-305 on subnormals; 5x faster than xlogy on CPU.
    neg = -t * jnp.log(jnp.maximum(t, _TINY))
    out = neg.sum(axis=0)
    for ax in range(m):  # fold each axis back into (marginalized, kept)
        kept = jax.lax.slice_in_dim(out, 0, K, axis=ax).sum(axis=ax, keepdims=True)
        summed = jax.lax.slice_in_dim(out, K, K + 1, axis=ax)
        out = jnp.concatenate([summed, kept], axis=ax)
    return out


def _to_bitmask_order(block_out: np.ndarray) -> np.ndarray:
    """(2,)*m with axis i = position i  ->  flat vector indexed by bitmask (bit i = axis i)."""
    m = block_out.ndim
    return np.transpose(block_out, tuple(reversed(range(m)))).reshape(-1)


def _compute(table: np.ndarray) -> np.ndarray:
    d, K = table.ndim, table.shape[0]
    # m trailing positions are expanded inside the kernel; the r = d - m leading ones are
    # walked as {kept, marginalized} patterns. The kept leading values form the kernel's
    # batch axis, fed in chunks (entropy contributions add over batch rows).
    m = d
    while m > 0 and (K + 1) ** m > BLOCK_ENTRIES // 16:
        m -= 1
    r = d - m
    # batches are K**n_kept rows: a chunk that is a power of K divides every larger batch;
    # smaller batches are padded with zero rows (they add nothing), so in the split regime
    # the kernel compiles for one shape only (compilation was ~20% of the time at d = 20)
    chunk = 1
    while chunk * K * (K + 1) ** m <= BLOCK_ENTRIES:
        chunk *= K
    H = np.empty(1 << d, dtype=np.float64)
    tail_masks = np.arange(1 << m) << r

    def entropies_of(rows: np.ndarray) -> np.ndarray:
        out = None
        for start in range(0, rows.shape[0], chunk):
            part = rows[start : start + chunk]
            if r and part.shape[0] < chunk:
                part = np.concatenate([part, np.zeros((chunk - part.shape[0],) + part.shape[1:])])
            with x64():
                res = np.asarray(_block_entropies(jnp.asarray(part), K))
            out = res if out is None else out + res
        return out

    def walk(t: np.ndarray, i: int, lead_mask: int, n_kept: int) -> None:
        # t: table with the kept leading positions (< i) first, then positions i..d-1
        if i == r:
            rows = t.reshape((K**n_kept,) + (K,) * m)
            H[lead_mask + tail_masks] = _to_bitmask_order(entropies_of(rows))
            return
        walk(t, i + 1, lead_mask | (1 << i), n_kept + 1)  # keep position i
        walk(t.sum(axis=n_kept), i + 1, lead_mask, n_kept)  # marginalize it (from the parent)

    walk(np.asarray(table, dtype=np.float64), 0, 0, 0)
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
