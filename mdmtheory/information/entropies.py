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
and one block. Float64; the walk and the blocks' adds in numpy, the logarithm (which
dominates) of the blocks of large tables in one jit-compiled XLA call for its vectorized log: building the
blocks in XLA (concatenations) or the whole lattice in one jit call measured slower
(benchmarks/RESULTS.md §12). When JAX's default device is an accelerator the blocks run
there instead (:func:`_compute_xla`, the walk of main's kernel, jit-compiled JAX).
"""

from __future__ import annotations

import threading
import weakref
from functools import partial

import numpy as np
from scipy.special import comb

from ..laws.joint import Joint
from .._jax import default_backend, jax, jit, jnp, x64
from .._validate import float_array
from .._validate import int_arg, subset_entropies_arg

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
BLOCK_ENTRIES = 1 << 17
#: At most this many leading positions are expanded per block (at least 16 columns of kept
#: trailing values per block, the contiguous axis of every vectorized operation).
BLOCK_AXES = 6
#: With blocks of at least this many columns, -x log x and the column sums of each block run
#: in one jit-compiled XLA call (a vectorized log: 1.75x faster than numpy's at d = 20,
#: RESULTS §12; a few block shapes compiled once per process); smaller tables stay in
#: numpy (no compile).
XLA_MIN_COLS = 64
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


@jit
def _neg_xlogx_columns(L):
    return -jnp.sum(L * jnp.log(jnp.maximum(L, _TINY)), axis=-1)


def _block_entropies(part: np.ndarray, K: int, xla: bool = False) -> np.ndarray:
    r"""``part`` of shape ``(K,)*m + (c,)`` (c columns: values of the kept trailing
    positions) -> ``(K+1,)*m``: for each pattern of leading positions (slot K =
    marginalized), :math:`-\sum x \log x` over the columns and the pattern's entries.
    ``xla``: the logarithm and the column sums in one compiled call."""
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
    if xla:
        with x64():
            return np.asarray(_neg_xlogx_columns(L))
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
    cols = 1  # a power of K: every leaf's column count is a multiple of it or below it
    while cols * K * (K + 1) ** m <= BLOCK_ENTRIES:
        cols *= K
    xla = cols >= XLA_MIN_COLS
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
            # a leaf has K**n_kept columns: a multiple of cols or a power of K below it, so
            # the XLA path compiles log_K(cols) + 1 block shapes per (K, m) and process
            part = t[..., start : start + cols]
            res = _block_entropies(part, K, True) if xla else _block_entropies(part, K)
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


# ---- the same walk in JAX, for accelerators ------------------------------------------------
#: Largest block (float64 entries) materialized at once by the JAX kernel.
XLA_BLOCK_ENTRIES = 1 << 20


@partial(jit, static_argnums=(1,))
def _block_entropies_xla(block: jax.Array, K: int) -> jax.Array:
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


def _compute_xla(table: np.ndarray) -> np.ndarray:
    """The same walk with the blocks in jit-compiled JAX (leading positions walked, trailing
    ones expanded, batch axis first): used when JAX's default device is an accelerator, where
    the blocks run on the device; on CPU :func:`_compute` is faster (no compile per shape)."""
    d, K = table.ndim, table.shape[0]
    # m trailing positions are expanded inside the kernel; the r = d - m leading ones are
    # walked as {kept, marginalized} patterns. The kept leading values form the kernel's
    # batch axis, fed in chunks (entropy contributions add over batch rows).
    m = d
    while m > 0 and (K + 1) ** m > XLA_BLOCK_ENTRIES // 16:
        m -= 1
    r = d - m
    # batches are K**n_kept rows: a chunk that is a power of K divides every larger batch;
    # smaller batches are padded with zero rows (they add nothing), so in the split regime
    # the kernel compiles for one shape only (compilation was ~20% of the time at d = 20)
    chunk = 1
    while chunk * K * (K + 1) ** m <= XLA_BLOCK_ENTRIES:
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
                res = np.asarray(_block_entropies_xla(jnp.asarray(part), K))
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
        H = _compute(p.table) if default_backend() == "cpu" else _compute_xla(p.table)
        H.setflags(write=False)
        _CACHE[p] = H
    return H


def _as_entropies(x) -> np.ndarray:
    if isinstance(x, Joint):
        return subset_entropies(x)
    return subset_entropies_arg(x, "p")  # finite, H(empty) = 0, monotone, submodular (issue 38)


def _dim(H: np.ndarray) -> int:
    return H.shape[0].bit_length() - 1


def popcounts(d: int) -> np.ndarray:
    """Number of set bits of every mask ``0 .. 2**d - 1`` (d <= 26: a 2**d array)."""
    d = int_arg(d, "d", 0, 26)
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
    r"""Tononi–Sporns–Edelman complexity :math:`\sum_{k=1}^d (e_k - (k/d) e_d)`.

    :func:`mdmtheory.information.ugc.tse` is the same formula on a Joint's or a Profile's
    :math:`e_m` (the profile's, rounded through φ, for a Joint).
    """
    return _tse_from_coefficients(entropy_coefficients(p))


def _tse_from_coefficients(e: np.ndarray) -> float:
    r""":math:`\sum_{k=1}^d (e_k - (k/d) e_d)` of :math:`e_0, \dots, e_d` (the one place of the formula)."""
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
