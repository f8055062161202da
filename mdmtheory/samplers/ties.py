r"""How a rule that ranks positions by a score breaks ties: ``ties="random" | "lowest" | "topk"``.

Every rule that commits the best positions by a score — the confidence, margin and entropy
planners, semi-autoregressive blocks, the threshold rule's fallback, the entropy-budget
prefix, sample-then-select, the corrector — must say which of several *equal* scores goes
first. On laws with exact symmetries (Markov and Ising chains, repeated and noisy bits) equal
scores are common, and the tie rule changes the output law, often more than the choice of
sampler does. Three rules:

* ``"random"`` (the default): uniform over the tied sets. At a step that needs k positions,
  the positions ranked strictly before the *boundary cluster* are committed, and of the m
  positions of that cluster the r still needed are a uniformly random r-subset: each of the
  :math:`\binom{m}{r}` subsets has weight :math:`1/\binom{m}{r}`, and the exact law is the
  mixture. It is the limit of an infinitesimal i.i.d. continuous perturbation of the scores
  (every order of the tied positions equally likely), so it depends on no convention — the
  rule a model whose logits carry a little noise runs.
* ``"lowest"``: the lowest positions of the boundary cluster (the package's rule before the
  option existed).
* ``"topk"``: the positions that ``torch.topk`` returns when called as LLaDA's
  ``generate.py`` and diffusers' ``BlockRefinementScheduler`` call it: a 1-D float64 vector of
  scores (equal scores of a cluster made bit-identical), ``-inf`` at positions that are not
  eligible (revealed, or outside the block being decoded), ``torch.topk(v, k)``. Which of
  several equal values torch returns first is an implementation detail of torch: it can differ
  between CPU and CUDA and between torch versions. The rule is exact for the torch it runs on,
  and platform-dependent. The order also depends on the vector's length: diffusers'
  scheduler passes only the current block (``layout="block"``, :data:`TOPK_LAYOUTS`), LLaDA the
  whole sequence (the default); they agree when the block is the whole sequence. (diffusers
  passes float32, LLaDA float64; on CPU torch's order of equal values agreed between the two
  dtypes on every pattern tried.)

Ties are clusters: positions are sorted by (group ascending, score descending), and
consecutive sorted scores of one group closer than :data:`TIE_TOL` are chained into one
cluster — so that values equal in exact arithmetic but computed from different marginals
(equal up to ~1e-16) tie instead of being ordered by rounding noise. ``group`` (semi-AR
blocks, DUS rounds, PC-Sampler blocks) ranks before the score.

Monte Carlo (:func:`sample_choice`) draws the random rule's subset directly: it ranks the
boundary cluster by i.i.d. uniform keys.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

import numpy as np

from .._estimate import Record
from .._validate import _short, bool_array, float_array, int_arg, name_arg

__all__ = ["TIE_RULES", "DEFAULT_TIES", "TIE_TOL", "MAX_TIE_BRANCHES", "TOPK_LAYOUTS", "check_ties", "Choice", "clusters",
           "tie_choices", "sample_choice", "topk_positions"]

#: The tie rules every ranked rule accepts (module docstring).
TIE_RULES = ("random", "lowest", "topk")
#: The default: uniform over the tied sets (convention-free; module docstring).
DEFAULT_TIES = "random"
#: Consecutive sorted scores closer than this are one tie cluster.
TIE_TOL = 1e-12
#: Most (state, tie resolution) rows one call of :func:`tie_choices` may produce under
#: ``ties="random"`` (a boundary cluster of m positions needing r has C(m, r) resolutions).
MAX_TIE_BRANCHES = 4_000_000


def check_ties(ties, name: str = "ties") -> str:
    """``ties`` if it is one of :data:`TIE_RULES`, else a ValueError naming ``name``."""
    name = name_arg(name)
    if not isinstance(ties, str) or ties not in TIE_RULES:
        raise ValueError(f"{name}: expected one of {list(TIE_RULES)} ('random': uniform over tied positions; "
                         f"'lowest': lowest position first; 'topk': torch.topk's order), got {ties!r}")
    return ties


@dataclass(frozen=True)
class Choice(Record):
    """The reveal sets a ranked rule chooses for N rows, one output row per resolution.

    ``rows[i]`` is the input row of output row i, ``chosen[i]`` its (d,) bool reveal set and
    ``weight[i]`` its probability (1 unless ``ties="random"`` splits a cluster); the weights
    of one input row sum to 1. ``split[n]`` is True where the boundary cluster of input row n
    had more positions than were needed, i.e. where the tie rule decided the set.
    """

    rows: np.ndarray
    chosen: np.ndarray
    weight: np.ndarray
    split: np.ndarray


def _tie_args(scores, free, group=None):
    """The arguments every public function of this module shares, checked (issue 38): ``free``
    an (N, d) bool array, ``scores`` a real array of its shape with no NaN or +inf on a free
    position (−inf ranks last; entries off the free positions are not read), ``group`` None or
    d integers. Returns (scores, free, group) as arrays."""
    free = bool_array(free, "free", ndim=2)
    scores = float_array(scores, "scores", finite=False)
    if scores.shape != free.shape:
        raise ValueError(f"scores: expected the shape of free {free.shape}, got {scores.shape}")
    bad = free & (np.isnan(scores) | np.isposinf(scores))
    if bad.any():
        raise ValueError("scores: NaN or +inf on a free position (a NaN has no rank); give finite scores "
                         "(-inf ranks last)")
    if group is not None:
        g = float_array(group, "group", ndim=1)
        if g.shape != (free.shape[1],) or np.any(g != np.round(g)) or np.any(np.abs(g) >= 2.0**62):
            raise ValueError(f"group: expected {free.shape[1]} integers (one group per position, lower first) or None, "
                             f"got {_short(group)}")
        group = g.astype(np.int64)
    return scores, free, group


def _k_arg(k, free) -> np.ndarray:
    """``k``: a count, or one per row, each an integer in 0..(free positions of its row)."""
    if isinstance(k, (bool, np.bool_)) or k is None or isinstance(k, (str, bytes, dict)):
        raise ValueError(f"k: expected an integer count (or one per row), got {_short(k)}")
    try:
        raw = np.asarray(k)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"k: expected an integer count (or one per row), got {_short(k)}") from None
    if raw.dtype.kind not in "iu" or raw.ndim > 1 or (raw.ndim == 1 and raw.shape[0] != free.shape[0]):
        raise ValueError(f"k: expected an integer count (or {free.shape[0]} of them, one per row), got {_short(k)}")
    if raw.dtype.kind == "u" and raw.size and int(raw.max()) > free.shape[1]:
        raise ValueError(f"k: asks for {int(raw.max())} positions of {free.shape[1]}")
    k = np.broadcast_to(raw.astype(np.int64), (free.shape[0],))
    if np.any(k < 0) or np.any(k > free.sum(axis=1)):
        raise ValueError("k: asks for more positions than are masked (or a negative count); "
                         "give 0 <= k <= the free positions of each row")
    return k


def clusters(scores, free, group=None) -> np.ndarray:
    """(N, d) int64 tie-cluster ids: lower ids rank first; equal ids are tied (module docstring).

    ``scores`` (N, d) higher first (finite on free positions), ``free`` (N, d) bool, ``group``
    (d,) ints (lower first) or None. Positions that are not free get the largest id of their row
    plus one."""
    scores, free, group = _tie_args(scores, free, group)
    N, d = free.shape
    idx = np.broadcast_to(np.arange(d), (N, d))
    g0 = np.zeros(d, dtype=np.int64) if group is None else np.asarray(group, dtype=np.int64)
    g = np.where(free, g0[None, :], np.iinfo(np.int64).max)
    s = np.where(free, scores, 0.0)
    first = np.lexsort((idx, -s, g), axis=-1)
    ss = np.take_along_axis(s, first, axis=1)
    sg = np.take_along_axis(g, first, axis=1)
    brk = np.ones((N, d), dtype=bool)
    brk[:, 1:] = (sg[:, 1:] != sg[:, :-1]) | (ss[:, :-1] - ss[:, 1:] > TIE_TOL)
    out = np.empty((N, d), dtype=np.int64)
    np.put_along_axis(out, first, np.cumsum(brk, axis=1), axis=1)
    return out


def _boundary(cl, free, k):
    """Per row: the positions surely chosen (cluster before the boundary), the boundary
    cluster's members and how many of them are needed."""
    N, d = free.shape
    k = np.broadcast_to(np.asarray(k, dtype=np.int64), (N,))
    if np.any(k < 0) or np.any(k > free.sum(axis=1)):
        raise ValueError("k: asks for more positions than are masked (or a negative count)")
    order = np.lexsort((np.broadcast_to(np.arange(d), (N, d)), cl), axis=-1)
    last = cl[np.arange(N), order[np.arange(N), np.maximum(k - 1, 0)]]  # the boundary cluster
    last = np.where(k > 0, last, np.iinfo(np.int64).min)
    sure = free & (cl < last[:, None])
    tied = free & (cl == last[:, None])
    need = k - sure.sum(axis=1)
    return sure, tied, need


@lru_cache(maxsize=256)
def _subsets(m: int, r: int) -> np.ndarray:
    """(C(m, r), m) bool: every r-subset of m slots."""
    out = np.zeros((math.comb(m, r), m), dtype=bool)
    for i, c in enumerate(combinations(range(m), r)):
        out[i, list(c)] = True
    out.flags.writeable = False
    return out


#: How ``ties="topk"`` lays out the vector it passes to torch.topk (torch's tie order depends on
#: the vector's length): ``"sequence"`` — LLaDA's ``generate.py`` (ML-GSAI/LLaDA@41760b9): the
#: whole sequence, ``-inf`` outside the block being decoded; ``"block"`` — diffusers 0.42's
#: ``BlockRefinementScheduler.step``: the block's positions only (its ``sample`` is the block).
TOPK_LAYOUTS = ("sequence", "block")


def tie_choices(scores, free, k, ties: str = DEFAULT_TIES, group=None, layout: str = "sequence") -> Choice:
    r"""The top-``k`` free positions of each row by (``group``, score), ties by the rule ``ties``.

    Parameters
    ----------
    scores : (N, d) floats, higher first.
    free : (N, d) bool, the eligible positions.
    k : int or (N,) ints, ``0 <= k[n] <= free[n].sum()``.
    ties : one of :data:`TIE_RULES` (module docstring).
    group : (d,) ints or None; lower groups rank first.
    layout : ``"topk"`` only: :data:`TOPK_LAYOUTS` (the vector torch.topk sees).

    Returns a :class:`Choice`: one output row per input row for ``"lowest"`` and ``"topk"``,
    and :math:`\binom{m}{r}` rows of weight :math:`1/\binom{m}{r}` for an input row whose
    boundary cluster of m positions is split (r of them needed) under ``"random"``.
    """
    ties = check_ties(ties)
    scores, free, group = _tie_args(scores, free, group)
    k = _k_arg(k, free)
    N, d = free.shape
    cl = clusters(scores, free, group)
    sure, tied, need = _boundary(cl, free, k)
    m = tied.sum(axis=1)
    split = (need > 0) & (need < m)
    rows = np.arange(N)
    if not split.any():
        return Choice(rows, sure | tied & (need > 0)[:, None], np.ones(N), split)
    if ties == "lowest":
        rank = np.cumsum(tied, axis=1)  # 1-based rank among the tied, by position
        return Choice(rows, sure | (tied & (rank <= need[:, None])), np.ones(N), split)
    if ties == "topk":
        if not isinstance(layout, str) or layout not in TOPK_LAYOUTS:
            raise ValueError(f"layout: expected one of {list(TOPK_LAYOUTS)}, got {layout!r}")
        return Choice(rows, _topk_resolve(scores, cl, free, sure, tied, need, group, split, layout), np.ones(N),
                      split)
    # random: every r-subset of the boundary cluster, equally likely
    n_rows = np.where(split, [math.comb(int(a), int(b)) for a, b in zip(m, need)], 1)
    if int(n_rows.sum()) > MAX_TIE_BRANCHES:
        raise ValueError(f"ties: resolving the tied positions uniformly needs {int(n_rows.sum()):,} branches, above "
                         f"{MAX_TIE_BRANCHES:,}; use ties='lowest' or 'topk' for the exact law, or Monte Carlo")
    out_rows, out_chosen, out_w = [rows[~split]], [sure[~split] | tied[~split] & (need[~split] > 0)[:, None]], \
        [np.ones(int((~split).sum()))]
    for mm, rr in {(int(a), int(b)) for a, b in zip(m[split], need[split])}:
        sel = np.flatnonzero(split & (m == mm) & (need == rr))
        sub = _subsets(mm, rr)  # (S, mm)
        slots = np.nonzero(tied[sel])[1].reshape(sel.size, mm)  # tied positions of each row, increasing
        ch = np.repeat(sure[sel], sub.shape[0], axis=0)
        r_idx = np.repeat(np.arange(sel.size), sub.shape[0])
        s_idx = np.tile(np.arange(sub.shape[0]), sel.size)
        cols = np.where(sub[s_idx], slots[r_idx], d)  # d: not chosen
        pad = np.zeros((ch.shape[0], d + 1), dtype=bool)
        pad[:, :d] = ch
        pad[np.arange(ch.shape[0])[:, None], cols] = True
        out_rows.append(sel[r_idx])
        out_chosen.append(pad[:, :d])
        out_w.append(np.full(ch.shape[0], 1.0 / sub.shape[0]))
    return Choice(np.concatenate(out_rows), np.concatenate(out_chosen), np.concatenate(out_w), split)


def topk_positions(v: np.ndarray, k: int) -> np.ndarray:
    """The positions ``torch.topk`` returns for the 1-D float64 vector ``v`` and count ``k``
    (as LLaDA and diffusers call it); imports torch (extra ``bridge``)."""
    try:
        import torch
    except ImportError:  # pragma: no cover - depends on the environment
        raise ValueError("ties: 'topk' calls torch.topk; pip install 'mdmtheory[bridge]', or use ties='random' "
                         "or 'lowest'") from None
    v = float_array(v, "v", ndim=1, what="(d,) scores", finite=False)
    if np.isnan(v).any():
        raise ValueError("v: contains NaN scores (a NaN has no rank); give real scores (-inf: never chosen)")
    k = int_arg(k, "k", 0, v.shape[0], " (k <= the length of v)")
    return torch.topk(torch.as_tensor(v), k).indices.numpy()


def _topk_resolve(scores, cl, free, sure, tied, need, group, split, layout="sequence"):
    """torch.topk on each split row: the block (group) of the boundary cluster, the scores of a
    cluster made bit-identical (its best member's), ``-inf`` elsewhere; positions of earlier
    groups that are chosen stay chosen. ``layout="block"``: the vector holds the block's
    positions only (in increasing order), as diffusers' scheduler passes it."""
    scores = np.asarray(scores, dtype=np.float64)
    N, d = free.shape
    g0 = np.zeros(d, dtype=np.int64) if group is None else np.asarray(group, dtype=np.int64)
    chosen = sure | tied & (need > 0)[:, None]
    for n in np.flatnonzero(split):
        gb = g0[np.flatnonzero(tied[n])[0]]  # the boundary cluster's group
        here = free[n] & (g0 == gb)
        canon = np.full(d, -np.inf)
        for c in np.unique(cl[n][here]):
            members = here & (cl[n] == c)
            canon[members] = scores[n][members].max()
        k_here = int((sure[n] & here).sum() + need[n])
        row = sure[n] & ~here
        if layout == "block":
            members = np.flatnonzero(g0 == gb)
            row[members[topk_positions(canon[members], k_here)]] = True
        else:
            row[topk_positions(canon, k_here)] = True
        chosen[n] = row
    return chosen


def sample_choice(scores, free, k, rng, group=None) -> np.ndarray:
    """Monte Carlo of ``ties="random"``: (N, d) bool, the top-``k`` by (group, score) with each
    tie cluster ordered by i.i.d. uniform keys drawn from ``rng``."""
    scores, free, group = _tie_args(scores, free, group)
    k = _k_arg(k, free)
    if not callable(getattr(rng, "random", None)):  # a numpy Generator, or the bridge's counter-based draws
        raise ValueError(f"rng: expected a numpy.random.Generator (numpy.random.default_rng(seed)), got {_short(rng)}")
    N, d = free.shape
    cl = clusters(scores, free, group)
    order = np.lexsort((rng.random((N, d)), cl), axis=-1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(d), (N, d)), axis=1)
    return free & (rank < k[:, None])
