r"""The Monte Carlo core of the cross-entropy profile, numpy only (no torch).

With model conditionals :math:`\hat p(x_j \mid x_A)` and data X, the cross-entropy profile is

.. math:: c(i) = \mathop{\mathrm{mean}}_{|A| = i,\ j \notin A}
          \mathbb E\bigl[-\log \hat p(X_j \mid X_A)\bigr]

(docs/design.md §2; :math:`c = \varphi` for the true conditionals). Draw g of level
:math:`\ell` (``g // n_per_level``) takes sample ``g mod n`` and the revealed set A of the
:math:`i_\ell` response positions of lowest :func:`uniforms` ``(seed, 1, g, ·)``; one
scoring of every masked response position gives
:math:`Y_g = \frac{1}{L - i}\sum_{j \notin A} -\log \hat p(x_j \mid x_A)`, with
:math:`\mathbb E\, Y_g = c(i)`. The draws are a pure function of (seed, g): the sums do not
depend on how the draws are batched or sharded across processes.

One implementation behind :func:`mdmtheory.bridge.estimate_profile` (a torch model, sharded
across ranks) and :func:`mdmtheory.design.estimate_cross_entropy_profile` (a conditional oracle, numpy):
each passes its own scoring function. Its names are the kernels those two share (unvalidated:
walked through them).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["PROFILE_STREAM", "uniforms", "reveal", "mean_se", "chunks", "cross_entropy_sums"]

#: Stream of the counter-based generator used by the profile estimator.
PROFILE_STREAM = 1


def _splitmix(z: np.ndarray) -> np.ndarray:
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def uniforms(seed: int, stream: int, index, width: int) -> np.ndarray:
    """Uniforms in [0, 1), shape (len(index), width), a pure function of (seed, stream, g, column).

    splitmix64 (Steele, Lea & Flood 2014) of the counter; 53 random bits per value.
    """
    with np.errstate(over="ignore"):
        key = _splitmix(_splitmix(np.array([seed], dtype=np.uint64)) ^ np.array([stream], dtype=np.uint64))
        g = _splitmix(key ^ _splitmix(np.asarray(index, dtype=np.uint64)))
        cols = np.arange(width, dtype=np.uint64) * np.uint64(0xD1B54A32D192ED03)
        h = _splitmix(g[:, None] ^ cols[None, :])
    return (h >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def reveal(x: np.ndarray, u: np.ndarray, counts, g: int, L: int | None = None) -> np.ndarray:
    """Rows with the prompt (first g positions) visible and, of the response (the next L
    positions), the ``counts`` positions of lowest uniform ``u`` revealed; every other
    response position and every position after the response masked (-1)."""
    L = x.shape[1] - g if L is None else L
    rank = np.argsort(np.argsort(u, axis=1), axis=1)
    resp = np.where(rank < np.reshape(counts, (-1, 1)), x[:, g : g + L], -1)
    if g == 0 and L == x.shape[1]:
        return resp
    return np.concatenate([x[:, :g], resp, np.full((x.shape[0], x.shape[1] - g - L), -1, dtype=resp.dtype)], axis=1)


def mean_se(count, total, sumsq):
    """Mean and standard error s/√n (ddof = 1) per level from counts, sums and sums of squares."""
    count = np.asarray(count, dtype=np.float64)
    mean = total / count
    var = (sumsq - total * mean) / np.maximum(count - 1, 1)
    return mean, np.sqrt(np.maximum(var, 0.0) / count)  # max: rounding of a zero variance


def chunks(idx: np.ndarray, size: int):
    """The index array ``idx`` in consecutive slices of at most ``size``."""
    for lo in range(0, idx.shape[0], size):
        yield idx[lo : lo + size]


def cross_entropy_sums(nll: Callable[[np.ndarray, np.ndarray], np.ndarray], xs: np.ndarray, levels: np.ndarray,
                       n_per_level: int, seed: int, draws: np.ndarray, batch: int, g: int, L: int):
    r"""Per-level sums :math:`\sum Y_g` and :math:`\sum Y_g^2` over the draws ``draws``.

    ``nll(x_in, x)``: for rows ``x`` (int64, (b, D)) and their masked form ``x_in`` (-1 where
    masked), the float64 sums over the masked response positions g..g+L−1 of
    :math:`-\log \hat p(x_j \mid x_{in})` (shape (b,)). ``xs``: the checked samples (n, D);
    ``levels``: the numbers of revealed response positions; draws are indices into
    ``len(levels) * n_per_level`` (all of them, or one rank's shard), scored ``batch`` at a time.
    Returns (total, sumsq), float64 of shape (len(levels),).
    """
    n_s = xs.shape[0]
    total, sumsq = np.zeros(levels.shape[0]), np.zeros(levels.shape[0])
    for idx in chunks(draws, batch):
        ell = idx // n_per_level
        i = levels[ell]
        x = xs[idx % n_s]
        x_in = reveal(x, uniforms(seed, PROFILE_STREAM, idx, L), i, g, L)
        Y = nll(x_in, x) / (L - i)
        np.add.at(total, ell, Y)
        np.add.at(sumsq, ell, Y * Y)
    return total, sumsq
