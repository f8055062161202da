r"""The JAX core of the exact law engine: state updates on the marginal lattice.

Every array here lives on the **marginal lattice**: a tensor of shape ``(K+1,)*d`` whose
index :math:`K` on axis j means "position j masked / summed out". The marginal tensor

.. math::

    P[x] = p(x_A), \qquad A = \{j : x_j < K\},

holds every marginal of every subset (each summed from its parent, one axis at a time), and
a sampler's state :math:`(A, x_A)` (docs/design.md §3) is one entry of the same shape: the
revealed set is the set of axes with a value below K. Every sampler's step is the same
update of the state mass,

.. math::

    m'(A \cup B, x_{A \cup B}) \mathrel{+}= m(A, x_A)\, w_B(x_A)
    \prod_{j \in B} \frac{P[x_A, x_j, \ast]}{P[x_A, \ast]}

(for samplers that revise, also moves to states that are not supersets), stored in the
layout that holds only what carries mass:

* **lattice**: ``M`` a ``(K+1,)*d`` tensor, a step a few broadcast products of slices —
  the Bernoulli-subset grids, whose states cover every revealed set
  (:func:`bernoulli_step`, :func:`complete`);
* **levels**: random order under a Schedule, every state of step t at :math:`|A| = s_t`,
  level n a ``(C(d, n), K**n)`` array (:func:`level_step`);
* **sparse chains**: the samplers whose moves depend on the values (adaptive planners,
  sample-then-select, remasking, correctors, editing): the live states as flat lattice
  indices, one term per (state, transition) (:class:`ChainStep`, :func:`chain_apply`).

Every function takes the array namespace ``xp``: ``jax.numpy`` (float64 under
:func:`mdmtheory._jax.x64`; then the same code runs under ``jax.jit``, ``jax.grad`` with
respect to the table, and ``jax.vmap``) or ``numpy`` (the same operations without tracing
or compilation, for one-off laws where XLA's compile time per shape would dominate). Divisions and logarithms use the double-``where`` form (the untaken branch
never sees 0), so zero-probability prefixes give neither NaN values nor NaN gradients.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, product
from math import comb

import numpy as np

from .._estimate import Record
from .._jax import jnp

__all__ = [
    "marginal_lattice",
    "lattice_entropies",
    "settle",
    "level_step",
    "level_marginals",
    "bernoulli_step",
    "bernoulli_first",
    "bernoulli_start",
    "complete",
    "ix",
    "lattice_strides",
    "empty_state",
    "state_values",
    "state_index",
    "output_index",
    "state_conditionals",
    "ChainStep",
    "FINISHED",
    "LOST",
    "distinct_states",
    "chain_targets",
    "chain_apply",
]


def ix(d: int, K: int, vals=(), masked=()) -> tuple:
    """Index tuple: axes in ``vals`` take the values 0..K-1, axes in ``masked`` the masked
    slot (kept as a length-1 axis), all others the whole axis."""
    out = [slice(None)] * d
    for j in vals:
        out[j] = slice(0, K)
    for j in masked:
        out[j] = slice(K, K + 1)
    return tuple(out)


def _sl(a, start: int, stop: int, axis: int):
    return a[(slice(None),) * axis + (slice(start, stop),)]


def _add_at(xp, a, idx, v):
    """``a[idx] += v`` as a value (in place for numpy, ``.at[].add`` for JAX)."""
    if xp is np:
        a[idx] += v
        return a
    return a.at[idx].add(v)


def _set_at(xp, a, idx, v):
    if xp is np:
        a = a.copy()
        a[idx] = v
        return a
    return a.at[idx].set(v)


def _safe_div(xp, num, den):
    ok = den > 0
    return xp.where(ok, num / xp.where(ok, den, 1.0), 0.0)


def _safe_log(xp, x, ok):
    return xp.log(xp.where(ok, x, 1.0))


def marginal_lattice(table, xp=jnp):
    """``(K,)*d`` table -> ``(K+1,)*d`` tensor of all marginals (slot K = summed out)."""
    t = table
    for ax in range(t.ndim):
        t = xp.concatenate([t, t.sum(axis=ax, keepdims=True)], ax)
    return t


def lattice_entropies(P, K: int, xp=jnp):
    r"""All :math:`2^d` subset entropies from the marginal lattice, as a ``(2,)*d`` tensor
    (index 1 on axis j = position j in the subset): :math:`-\sum P \log P` folded per axis."""
    ok = P > 0
    t = xp.where(ok, -P * _safe_log(xp, P, ok), 0.0)
    for ax in range(P.ndim):
        kept = _sl(t, 0, K, ax).sum(axis=ax, keepdims=True)
        summed = _sl(t, K, K + 1, ax)
        t = xp.concatenate([summed, kept], ax)
    return t


def settle(M, P, K: int, xp=jnp):
    """Move finished mass out and drop mass at zero-probability prefixes.

    Returns ``(M, finished, lost)``: ``finished`` is the ``(K,)*d`` mass at the full state
    (it goes to the output law, whatever p(x)), ``lost`` the mass at unreachable
    :math:`x_A` (p(x_A) = 0) of the unfinished states (docs/design.md §6).
    """
    d = M.ndim
    full = ix(d, K, vals=range(d))
    finished = M[full]
    M = _set_at(xp, M, full, 0.0)
    reach = P > 0
    lost = xp.sum(xp.where(reach, 0.0, M))
    return xp.where(reach, M, 0.0), finished, lost


def bernoulli_start(P, K: int, t0, xp=jnp):
    """Exact initialization of a grid with :math:`t_0 > 0`: every position revealed
    independently with probability :math:`t_0`, :math:`x_A \\sim p_A`."""
    d = P.ndim
    w = xp.concatenate([xp.full((K,), t0), xp.reshape(1.0 - t0, (1,))])
    M = P
    for j in range(d):
        M = M * xp.reshape(w, (1,) * j + (K + 1,) + (1,) * (d - j - 1))
    return M


def bernoulli_first(P, K: int, beta, xp=jnp):
    r""":func:`bernoulli_step` from the empty state alone (a grid with :math:`t_0 = 0`): each
    position revealed independently with probability :math:`\beta` and drawn from its
    marginal, :math:`M'[x] = \prod_j (\beta\, p(x_j)\ \text{or}\ 1 - \beta)` — an outer
    product, :math:`(K+1)^d` work. ``P[(K,)*d]`` (the total, 1) divides the marginals as the
    general step's conditionals do."""
    d = P.ndim
    total = P[(K,) * d]
    M = xp.ones((1,) * d)
    for j in range(d):
        pj = xp.reshape(P[tuple(slice(0, K) if i == j else K for i in range(d))], (K,))
        w = xp.concatenate([beta * _safe_div(xp, pj, total), xp.reshape(1.0 - beta, (1,))])
        M = M * xp.reshape(w, (1,) * j + (K + 1,) + (1,) * (d - j - 1))
    return M


def bernoulli_step(M, P, K: int, beta, xp=jnp, max_entries=None):
    r"""One Bernoulli-subset step: every masked position revealed independently with
    probability :math:`\beta`, the revealed ones drawn independently from
    :math:`p(x_j \mid x_A)`.

    Processed axis by axis: a processed axis has 2K+1 slots (values revealed before the
    step, masked, values revealed in this step), and the conditionals of later axes look
    only at the values revealed before the step (the new slots read the masked marginal).
    The work is :math:`(2K+1)^d` (one term per (A, B, x_{A \cup B}), as a per-state loop);
    the working tensor is bounded by ``max_entries``: above it the leading axes are split by
    their slot (:func:`_bernoulli_chunked`). ``M`` must be settled.

    Returns ``(M', masked_mass)`` with ``masked_mass[j]`` the mass of states where j is
    masked (each moves j with probability beta).
    """
    d = M.ndim
    masked_mass = [xp.sum(M[ix(d, K, masked=[j])]) for j in range(d)]
    if max_entries is not None and (2 * K + 1) ** d > max_entries:
        return _bernoulli_chunked(M, P, K, beta, xp, max_entries), masked_mass
    return _bernoulli_full(M, P, K, beta, xp), masked_mass


def _bernoulli_full(M, P, K: int, beta, xp):
    d = M.ndim
    # a concrete beta = 1 (every masked position revealed, e.g. a grid's step to t = 1) has
    # no "still masked" slot: (2K)^d instead of (2K+1)^d
    every = isinstance(beta, (float, int)) and beta == 1.0
    stay = 0 if every else 1
    Pe = P
    for j in range(d):
        mv = _sl(M, 0, K, j)
        mm = _sl(M, K, K + 1, j)
        pv = _sl(Pe, 0, K, j)
        pm = _sl(Pe, K, K + 1, j)
        parts = [mv] + ([] if every else [(1.0 - beta) * mm]) + [beta * mm * _safe_div(xp, pv, pm)]
        M = xp.concatenate(parts, j)
        if j + 1 < d:
            Pe = xp.concatenate([Pe, xp.repeat(pm, K - 1 + stay, j)], j)
    for j in range(d):
        old = _sl(M, 0, K, j)
        fresh = _sl(M, K + stay, 2 * K + stay, j)
        rest = [_sl(M, K, K + 1, j)] if stay else [xp.zeros_like(_sl(old, 0, 1, j))]
        M = xp.concatenate([old + fresh] + rest, j)
    return M


def _bernoulli_chunked(M, P, K: int, beta, xp, max_entries: int):
    r""":func:`_bernoulli_full` with the first r axes split by their slot after the step
    (value revealed before, still masked, value revealed now): (2K+1)^r pieces, each the
    full step on the d - r other axes, of size (2K+1)^(d-r) <= ``max_entries``.

    A piece fixes, on each split axis i, the state before the step (x_i = v or masked: the
    mass ``M`` and the conditioning marginals ``P`` are sliced there) and the factor of the
    step: 1, :math:`1-\beta`, or :math:`\beta\, p(x_i = v \mid x_A)` with A the revealed
    set before the step (its conditioning reads the masked slot of the other split axes that
    are revealed now, as the axis-by-axis kernel does)."""
    d = M.ndim
    r = 0
    while (2 * K + 1) ** (d - r) > max_entries:
        r += 1
    out = xp.zeros_like(M)
    slots = [("old", v) for v in range(K)] + [("stay", K)] + [("fresh", v) for v in range(K)]
    for pattern in product(slots, repeat=r):
        before = tuple(v if kind == "old" else K for kind, v in pattern)  # the state A
        after = tuple(K if kind == "stay" else v for kind, v in pattern)
        Pc = P[before]
        Mc = M[before]
        if isinstance(beta, (float, int)) and beta == 1.0 and any(kind == "stay" for kind, _ in pattern):
            continue  # nothing stays masked
        for i, (kind, v) in enumerate(pattern):
            if kind == "stay":
                Mc = Mc * (1.0 - beta)
            elif kind == "fresh":
                Mc = Mc * (beta * _safe_div(xp, P[before[:i] + (v,) + before[i + 1 :]], Pc))
        if d == r:
            res = Mc
        else:
            res = _bernoulli_full(Mc, Pc, K, beta, xp)
        out = _add_at(xp, out, after, res)
    return out


def complete(M, P, K: int, xp=jnp):
    r"""Exact completion of every unfinished state: :math:`q(x) \mathrel{+}=
    \sum_A m(A, x_A)\, p(x) / p(x_A)`. ``M`` must be settled. Returns the ``(K,)*d``
    contribution.

    The masked positions are filled one axis at a time with the chain rule,
    :math:`p(x)/p(x_A) = \prod_i p(x_{A \cup \{j_1..j_i\}}) / p(x_{A \cup \{j_1..j_{i-1}\}})`:
    every factor is at most 1, so nothing overflows where :math:`p(x_A)` is tiny (the
    quotient m / p(x_A) alone can exceed 1e308).
    """
    R = M
    Pc = P
    for ax in range(M.ndim):
        ratio = _safe_div(xp, _sl(Pc, 0, K, ax), _sl(Pc, K, K + 1, ax))
        R = _sl(R, 0, K, ax) + _sl(R, K, K + 1, ax) * ratio
        Pc = _sl(Pc, 0, K, ax)
    return R


# ---- the level layout: random order, only the revealed sets that carry mass ---------------
#
# Under a random-order Schedule every state of step t has |A| = s_t = k_1 + ... + k_{t-1}.
# Level n is stored as an array of shape (C(d, n), K**n): row r is the r-th n-subset A of
# [d] in colex order, its K**n entries the values x_A in C order over A's sorted positions.
# A step n -> n + k is written from the target side: a target A' (sorted positions
# a_1 < ... < a_{n+k}) is reached from A = A' \ B for each k-subset I of the *relative*
# indices 1..n+k (B = a_I), and the value of the source x_A is x_{A'} without the axes I —
# a broadcast that depends on I only, not on A'. So each step is C(n+k, k) gathers of whole
# levels and broadcast products: the work is the per-(state, move) work, no Python per state.


def _binom_table(d: int) -> np.ndarray:
    return np.array([[comb(a, i) for i in range(d + 2)] for a in range(d + 1)], dtype=np.int64)


def colex_rank(sub: np.ndarray, d: int) -> np.ndarray:
    """Rank of each row (sorted positions) of ``sub`` among the subsets of its size in colex
    order: :math:`\\sum_i \\binom{a_i}{i+1}` (0-based i)."""
    if sub.shape[1] == 0:
        return np.zeros(sub.shape[0], dtype=np.int64)
    return _binom_table(d)[sub, np.arange(1, sub.shape[1] + 1)].sum(axis=1)


@lru_cache(maxsize=None)
def level_subsets(d: int, n: int) -> np.ndarray:
    """The n-subsets of [d] as rows of sorted positions, in colex order (row = rank)."""
    sub = np.array(list(combinations(range(d), n)), dtype=np.int64).reshape(comb(d, n), n)
    out = np.empty_like(sub)
    out[colex_rank(sub, d)] = sub
    out.setflags(write=False)
    return out


@lru_cache(maxsize=None)
def level_masks(d: int, n: int) -> np.ndarray:
    """``(C(d, n), d)`` membership (1 where position j is in the row's subset)."""
    sub = level_subsets(d, n)
    out = np.zeros((sub.shape[0], d))
    np.put_along_axis(out, sub, 1.0, axis=1)
    out.setflags(write=False)
    return out


@lru_cache(maxsize=32)
def level_index(d: int, K: int, n: int) -> np.ndarray:
    """``(C(d, n), K**n)`` flat indices of level n's entries into the ``(K+1,)*d`` lattice."""
    sub = level_subsets(d, n)
    stride = (K + 1) ** np.arange(d - 1, -1, -1, dtype=np.int64)
    base = K * stride.sum() - K * stride[sub].sum(axis=1)  # every axis masked, then A's opened
    # base + sum_j stride[A_j] y_j over the (K,)*n values y in C order, one axis at a time in
    # the result's own dtype (the (n, K^n) int64 value matrix was 0.5 GB at the words law's n = 5)
    R = sub.shape[0]
    idx = np.empty((R,) + (K,) * n, dtype=np.int32 if (K + 1) ** d < 2**31 else np.int64)
    idx[...] = base.reshape((R,) + (1,) * n)
    for j in range(n):
        idx += (stride[sub[:, j]][:, None] * np.arange(K)).astype(idx.dtype).reshape(
            (R,) + (1,) * j + (K,) + (1,) * (n - j - 1))
    idx = idx.reshape(R, K**n)
    idx.setflags(write=False)
    return idx


@lru_cache(maxsize=None)
def level_moves(d: int, n: int, k: int) -> tuple:
    """For the step n -> n + k: one entry per k-subset I of the relative indices of the
    target, ``(I, src, rows)``: ``src[r]`` is the level-n row of A'_r minus its positions I,
    ``rows[i]`` the level-(n+1) row of A'_r minus I without I's i-th index (the set of the
    conditional :math:`p(x_{a_i} \\mid x_A)`), None where that is A'_r itself (k = 1)."""
    tgt = level_subsets(d, n + k)
    out = []
    for I in combinations(range(n + k), k):
        J = [i for i in range(n + k) if i not in I]
        src = colex_rank(tgt[:, J], d)
        rows = []
        for i in I:
            keep = sorted(J + [i])
            rows.append(None if len(keep) == n + k else colex_rank(tgt[:, keep], d))
        out.append((I, src, tuple(rows)))
    return tuple(out)


def level_marginals(P, K: int, n: int, xp=jnp):
    """Level n of the marginal lattice ``P`` in the level layout."""
    d = P.ndim
    return xp.reshape(P, (-1,))[level_index(d, K, n)]


def level_step(S, Pn, Pn1, K: int, d: int, n: int, k: int, w: float, xp=jnp):
    r"""One random-order step from level n (mass ``S``, marginals ``Pn``, settled) to level
    n + k, every move with weight ``w``:

    .. math::

        S'[A', x_{A'}] = w \sum_{B \subset A', |B| = k} S[A' \setminus B, x_{A' \setminus B}]
        \prod_{b \in B} \frac{p(x_{A' \setminus B \cup b})}{p(x_{A' \setminus B})}.

    ``Pn1``: level n + 1 of the marginals (for k = 1 the target level itself). Where
    :math:`p(x_A) = 0` the mass is 0 (settled) and so is every numerator (a sub-marginal),
    so the denominator is replaced by 1 there: no NaN in values or gradients. The
    conditionals (each at most 1) multiply the mass, never a quotient m / p(x_A).
    """
    R = comb(d, n + k)
    head = (R,)
    out = None
    for I, src, rows in level_moves(d, n, k):

        def spread(a, m, missing):  # (R, K**m) -> (R,) + K or 1 per target axis
            a = xp.reshape(a, head + (K,) * m)
            return xp.expand_dims(a, tuple(1 + i for i in missing)) if missing else a

        den = Pn[src]
        den = spread(xp.where(den > 0, den, 1.0), n, I)
        m_src = spread(S[src] * w, n, I)
        conds = []
        for i, r in zip(I, rows):
            num = Pn1 if r is None else Pn1[r]
            conds.append(spread(num, n + 1, [j for j in I if j != i]) / den)
        if xp is np:  # the same products, in place where the operand is fresh
            conds[0] *= m_src
            term = conds[0]
            for c in conds[1:]:
                term = term * c
            if out is None:
                out = np.array(np.broadcast_to(term, head + (K,) * (n + k)))
            else:
                out += term
        else:
            term = m_src
            for c in conds:
                term = term * c
            out = term if out is None else out + term
    return xp.reshape(out, (R, K ** (n + k)))


# ---- sparse chains: only the live states, one term per (state, transition) ----------------
#
# Samplers whose moves depend on x_A (the deterministic adaptive planners), on the drawn
# values (sample-then-select) or that revise what they revealed (remasking, correctors,
# editing) reach few of the (K+1)^d states, and each live state has few transitions. A step
# of such a chain is a list of terms (source state, target state, factor): the *structure*
# (which terms exist) is built once, in numpy, from the law's zero pattern and the sampler's
# rule; the *arithmetic* (mass through the terms) is :func:`chain_apply`, in numpy or JAX.
# States are flat indices into the ``(K+1,)*d`` lattice (C order, slot K = masked).


def index_dtype(d: int, K: int):
    """int32 when every flat index of the ``(K+1,)*d`` lattice (and d times the largest, a sum
    of d indices) fits in it, else int64: half the memory of the chain's index arrays."""
    return np.int32 if d * (K + 1) ** d < 2**31 else np.int64


def lattice_strides(d: int, K: int) -> np.ndarray:
    """Flat-index stride of each axis of the ``(K+1,)*d`` lattice (C order)."""
    return (K + 1) ** np.arange(d - 1, -1, -1, dtype=np.int64)


def empty_state(d: int, K: int) -> int:
    """Flat lattice index of the state with every position masked."""
    return int(K * lattice_strides(d, K).sum())


def state_values(idx: np.ndarray, d: int, K: int) -> np.ndarray:
    """(N, d) values of the states ``idx`` (K where masked)."""
    idx = np.asarray(idx, dtype=np.int64)
    return (idx[:, None] // lattice_strides(d, K)[None, :]) % (K + 1)


def state_index(vals: np.ndarray, K: int) -> np.ndarray:
    """Flat lattice index of the states with values ``vals`` (..., d), K = masked."""
    vals = np.asarray(vals, dtype=np.int64)
    return vals @ lattice_strides(vals.shape[-1], K)


def output_index(vals: np.ndarray, K: int) -> np.ndarray:
    """Flat index into the ``(K,)*d`` table of full states with values ``vals`` (..., d)."""
    vals = np.asarray(vals, dtype=np.int64)
    d = vals.shape[-1]
    return vals @ (K ** np.arange(d - 1, -1, -1, dtype=np.int64))


def state_conditionals(Pf: np.ndarray, idx: np.ndarray, d: int, K: int) -> np.ndarray:
    r"""(N, d, K) one-token conditionals :math:`p(x_j = v \mid x_A)` at the states ``idx``
    (``Pf`` the flat marginal lattice): for masked j the ratio of the marginal with j set to
    v to :math:`p(x_A)`; 0 on the rows of revealed positions and where :math:`p(x_A) = 0`."""
    idx = np.asarray(idx, dtype=np.int64)
    vals = state_values(idx, d, K)
    stride = lattice_strides(d, K)
    den = Pf[idx]
    free = vals == K
    v = np.arange(K, dtype=np.int64)
    # the state with j set to v: idx + (v - K) stride_j (only read where j is masked)
    num_idx = idx[:, None, None] + (v[None, None, :] - K) * stride[None, :, None]
    num = np.where(free[:, :, None], Pf[np.where(free[:, :, None], num_idx, idx[:, None, None])], 0.0)
    ok = den > 0
    return np.where(ok[:, None, None], num / np.where(ok, den, 1.0)[:, None, None], 0.0)


@dataclass(frozen=True)
class ChainStep(Record):
    r"""The terms of one chain step (structure only, no mass).

    Term i moves the mass of live state ``src[i]`` (a position in the step's live states)
    times its factor to ``dst[i]`` (a position in the next live states), or to the output
    (``dst[i] == FINISHED``, table entry ``out[i]``) or to the lost mass (``dst[i] == LOST``:
    a state with masked positions at a zero-probability prefix). The factor is ``w[i]`` (a
    number fixed by the structure, or 1 if None) times, if ``num`` is given, the product of
    the conditionals :math:`\prod_c P[\mathrm{num}[i, c]] / P[\mathrm{den}[i]]` (entries of
    ``num`` equal to ``den`` give a factor 1: rows of different lengths are padded with it).
    ``live`` holds the flat lattice indices of the next live states (sorted).
    """

    src: np.ndarray
    dst: np.ndarray
    out: np.ndarray
    live: np.ndarray
    w: np.ndarray | None = None
    num: np.ndarray | None = None
    den: np.ndarray | None = None


FINISHED = -1
LOST = -2
#: States classified at a time by :func:`chain_targets` (its (states, d) value arrays were the
#: peak of a run with K^d terms: 12 M states x d = 5 in int64, 0.5 GB per temporary).
CLASSIFY_CHUNK = 1 << 18


def distinct_states(keys: np.ndarray, size: int):
    """(the distinct keys, sorted; the position of each key among them), keys in [0, size):
    a mark on an array of ``size`` (the lattice, or a multiple of it) instead of a sort of
    the keys, cheaper when there are many terms per state."""
    idx = np.int32 if keys.dtype == np.int32 else np.int64  # int32 keys: int32 out (half the memory)
    seen = np.zeros(size, dtype=bool)
    seen[keys] = True
    u = np.flatnonzero(seen).astype(idx, copy=False)
    del seen
    pos = np.zeros(size, dtype=idx)
    pos[u] = np.arange(u.size, dtype=idx)
    return u, pos[keys]


def chain_targets(tgt: np.ndarray, Pf: np.ndarray, d: int, K: int, finish_full: bool = True,
                  distinct: bool = False):
    """Classify target states (flat lattice indices): returns ``(dst, out, live)`` of a
    :class:`ChainStep`. Full states are outputs when ``finish_full`` (monotone samplers),
    otherwise they stay live (revising samplers run on after everything is revealed);
    states with masked positions and :math:`p(x_A) = 0` are lost (their conditionals do not
    exist), all others are live. ``distinct``: ``tgt`` is already sorted with each state once
    (the caller deduplicated it), so it is not sorted again."""
    tgt = np.asarray(tgt)
    if tgt.dtype not in (np.int32, np.int64):
        tgt = tgt.astype(np.int64)
    if distinct:  # the caller deduplicated (sorted, each once): no second sort
        u, inv = tgt, slice(None)
    else:  # classify each distinct target once (a mark on the lattice, not a sort: less memory)
        u, inv = distinct_states(tgt, Pf.shape[0])
    full = np.empty(u.shape, dtype=bool)
    keep = np.empty(u.shape, dtype=bool)
    out_u = np.empty(u.shape, dtype=tgt.dtype)  # the indices keep the caller's width (int32: half)
    for a in range(0, u.shape[0], CLASSIFY_CHUNK):  # (chunk, d) values at a time, not (states, d)
        b = min(a + CLASSIFY_CHUNK, u.shape[0])
        vals = state_values(u[a:b], d, K)
        f = full[a:b] = (vals < K).all(axis=1)
        out_u[a:b] = np.where(f, output_index(np.where(vals < K, vals, 0), K), 0)
        lost = ~f & ~(Pf[u[a:b]] > 0)
        keep[a:b] = ~lost & ~f if finish_full else ~lost
    live = u[keep]
    dst_u = np.full(u.shape, LOST, dtype=tgt.dtype)
    dst_u[keep] = np.arange(live.shape[0])
    if finish_full:
        dst_u[full] = FINISHED
    return dst_u[inv], out_u[inv], live


def chain_apply(mass, step: ChainStep, Pf, n_out: int, xp=jnp):
    r"""Push ``mass`` (over the step's live states) through the terms of ``step``.

    Returns ``(mass', out, lost, moved)``: the mass over ``step.live``, the ``(K^d,)`` flat
    output mass of the terms that finished, the lost mass, and each term's moved mass (for
    the caller's accounting, e.g. the reveal-step law). ``Pf``: the flat marginal lattice
    (only read when ``step.num`` is given)."""
    c = mass[step.src]
    if step.w is not None:
        c = c * step.w
    if step.num is not None and xp is np:  # the same products in place: one array per term less
        den = Pf[step.den]
        den[~(den > 0)] = 1.0
        for col in range(step.num.shape[1]):
            f = Pf[step.num[:, col]]
            f /= den
            c *= f
            del f
        del den
    elif step.num is not None:
        den = Pf[step.den]
        den = xp.where(den > 0, den, 1.0)
        for col in range(step.num.shape[1]):
            c = c * (Pf[step.num[:, col]] / den)
    fin = step.dst == FINISHED
    lost_t = step.dst == LOST
    live_t = step.dst >= 0
    n_live = step.live.shape[0]
    if xp is np:
        # every term of a last step finishes: the arrays themselves, not a masked copy of each
        new = np.bincount(step.dst[live_t], c[live_t], minlength=n_live)
        every = bool(fin.all())
        out = np.bincount(step.out if every else step.out[fin], c if every else c[fin], minlength=n_out)
        lost = float(c[lost_t].sum())
    else:
        new = xp.zeros(n_live).at[step.dst[live_t]].add(c[live_t])
        out = xp.zeros(n_out).at[step.out[fin]].add(c[fin])
        lost = xp.sum(c[lost_t])
    return new, out, lost, c
