r"""Exact law of any planner-driven sampler, by propagating mass over states (A, x_A).

At step t the sampler is in a state (A, x_A) with some mass :math:`m(A, x_A)`; the planner
picks B (possibly depending on :math:`x_A`) and the sampler draws each :math:`x_j`,
:math:`j \in B`, independently from :math:`p(x_j \mid x_A)`:

.. math::

    m(A \cup B, x_{A \cup B}) \mathrel{+}= m(A, x_A)\, w_B(x_A)
    \prod_{j \in B} p(x_j \mid x_A).

The mass reaching a state depends only on the values on A, so one tensor over the marginal
lattice ``(K+1,)*d`` (slot K = masked) holds every state at once, and each step is a few
broadcast products of slices, written in JAX (:mod:`mdmtheory.samplers.kernel`, float64,
docs/design.md §3). The same code gives the output law, the lost mass, the reveal-step law,
the trajectory KL and, through :func:`sampler_kl`, a KL that ``jax.jit``, ``jax.grad`` and
``jax.vmap`` accept.

How the weights :math:`w_B` reach the kernel:

* ``"random"`` with a :class:`Schedule` (uniform :math:`k_t`-subset of the masked positions):
  every state of step t has :math:`|A| = s_t = k_1 + \dots + k_{t-1}`, so the weight is the
  number :math:`1/\binom{d-s_t}{k_t}`, and only the level :math:`|A| = s_t` is stored: the
  kernel's level layout (:func:`kernel.level_step`), the per-(state, move) work vectorized.
* a :class:`Grid` (Bernoulli-subset sampler): the kernel's axis-by-axis Bernoulli step
  (numpy splits it into pieces of :data:`GRID_BLOCK_ENTRIES`).
* any other planner (the deterministic planners of :mod:`.adaptive`, or any object with
  ``moves(ctx)``): the kernel's sparse chain. The planner is applied at the live states of
  each step — a deterministic planner once per step for all of them (its ``_choose`` on the
  (N, d, K) conditionals, as in Monte Carlo), any other through ``moves(ctx)`` once per
  revealed set — and every (state, B, :math:`y_B`) becomes one term; only states that carry
  mass are stored.

Zero-probability prefixes: mass at an :math:`x_A` with :math:`p(x_A) = 0` (reachable only
through a factorized step) cannot continue — the exact conditionals are undefined there —
and is moved to ``lost`` (docs/design.md §6).

With ``trajectory=True`` the engine also returns the KL between the trajectory laws (exact
one-at-a-time path measure vs factorized),

.. math::

    \mathrm{KL}_{\text{path}} = \mathbb{E}_{\text{exact}} \sum_t
    \mathrm{TC}(X_{B_t} \mid X_{A_t} = x_{A_t}),

step by step. For planners whose weights do not depend on :math:`x_A` (random order,
Bernoulli grids) it is computed from the subset entropies: the step from the revealed-set
law :math:`\pi_t` contributes :math:`\sum_A \pi_t(A) [H(A) - \sum_B w_B H(A\cup B) + \sum_B
w_B \sum_{j\in B} (H(A\cup j) - H(A))]` — for the random planner the profile formula
(proofs/path_kl_identity.md); for the other planners pointwise from the exact path measure
:math:`\pi(A \mid x_A)`; for deterministic planners it equals KL(p‖q).

:func:`sampler_law` is the one entry point for the exact law of every sampler the package
runs: the planners above with any plan (a :class:`BlockPlan` runs the planner inside each
step's block, a :class:`RandomSchedule` is the mixture over its compositions), and, through a
hook on their objects (this module imports neither), sample-then-select
(:mod:`mdmtheory.samplers.select`) and the revising samplers (:mod:`mdmtheory.samplers.revise`).

Ties: a scored planner with ``ties="random"`` (the default) is deterministic given
:math:`x_A` except at states whose boundary tie cluster is split; there the chain carries one
term per resolution with weight :math:`1/\binom{m}{r}` (:mod:`mdmtheory.samplers.ties`), so
the law is the mixture and the trajectory KL an upper bound on KL(p‖q) (equal when
``tie_mass`` is 0). :func:`mdmtheory.samplers.spread.tie_spread` compares the three tie rules.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from functools import partial
from itertools import combinations
from math import comb

import numpy as np

from .._validate import _short, float_array
from ..laws.joint import Joint, Marginals
from ..schedules.plans import BlockPlan, check_schedule, Grid, RandomSchedule, Schedule
from .._jax import jax, jit, jnp, x64
from .adaptive import _Deterministic
from .base import as_sampler, bind, PositionSampler, Run, StepContext
from . import kernel as _k

__all__ = ["ExactRun", "exact_run", "sampler_law", "sampler_kl", "MAX_STATE_ENTRIES", "MAX_LEVEL_ENTRIES",
           "MAX_GRID_ENTRIES"]

#: Largest (K+1)**d (total size of all marginals / states) the exact engine accepts.
MAX_STATE_ENTRIES = 1 << 25
#: The same limit for random order under a Schedule (the level layout: the two levels of a step
#: at a time, the marginal lattice the only (K+1)^d array): d = 18 binary (3^18 = 3.9e8
#: entries, 3.1 GB) fits; its run is minutes on CPU, for an accelerator.
MAX_LEVEL_ENTRIES = 1 << 29
#: Largest (2K+1)**d (the Bernoulli step's working tensor) of a Grid in JAX (``sampler_kl``,
#: ``backend="jax"``/``"eager"``); the numpy backend splits larger steps into pieces of at
#: most :data:`GRID_BLOCK_ENTRIES` and accepts every Grid up to :data:`MAX_STATE_ENTRIES`.
MAX_GRID_ENTRIES = 1 << 26
#: Working-tensor size of one piece of a numpy Bernoulli step (kernel.bernoulli_step).
GRID_BLOCK_ENTRIES = 1 << 22
_WEIGHT_TOL = 1e-9


@dataclass(frozen=True)
class ExactRun(Run):
    r"""Everything the exact engine computes in one pass (a :class:`~mdmtheory.samplers.base.Run`).

    Attributes
    ----------
    law : the output law q (a :class:`Joint`; its ``lost`` is the mass stuck at
        zero-probability prefixes).
    reveal_steps : (d, n_cols) array; ``[j, t]`` is the probability (under the sampler)
        that position j is revealed at step t. Column 0 is the exact initialization (grids
        with t_0 > 0), columns 1.. the planner's steps, and for grids the last column the
        exact completion above t_N.
    step_counts : ``[t]`` = probability that the last token is revealed at step t
        (same column convention).
    forwards : the expected number of steps, one forward each (:attr:`expected_steps`).
    path_kl : trajectory KL (``trajectory=True``), else None.
    step_kl : its contribution of each column, else None.
    ties : the planner's tie rule (``"random"``, ``"lowest"``, ``"topk"``;
        :mod:`mdmtheory.samplers.ties`), None for planners without scores.
    tie_mass : the probability, under the sampler, that the run passes through a state at
        which the tie rule decided the reveal set (a second chain carries the mass of the runs
        that have not yet; the first entries are summed). 0 means the result does not depend
        on the tie rule; > 0 means the rule was used, and
        :func:`mdmtheory.samplers.spread.tie_spread` tells whether
        the law changes with it.
    """

    reveal_steps: np.ndarray
    step_counts: np.ndarray
    step_kl: np.ndarray | None = None

    @property
    def expected_steps(self) -> float:
        """Mean index of the step that reveals the last token (given it finishes)."""
        t = np.arange(self.step_counts.shape[0])
        return float((t * self.step_counts).sum() / self.step_counts.sum())


def _check_size(d: int, K: int, grid: bool, name: str = "p", jax_grid: bool = True, levels: bool = False) -> None:
    n = (K + 1) ** d
    limit = MAX_LEVEL_ENTRIES if levels else MAX_STATE_ENTRIES
    if n > limit:
        more = "" if levels else f"; random order with a Schedule accepts up to {MAX_LEVEL_ENTRIES}"
        raise ValueError(
            f"{name}: exact sampler laws need (K+1)**d = {n} state entries, above the limit "
            f"{limit} (d={d}, K={K}{more}); use Monte Carlo simulation for larger laws"
        )
    if grid and jax_grid and (2 * K + 1) ** d > MAX_GRID_ENTRIES:
        raise ValueError(
            f"{name}: the exact law of a Grid in JAX needs (2K+1)**d = {(2 * K + 1) ** d} working "
            f"entries, above the limit {MAX_GRID_ENTRIES} (d={d}, K={K}); use exact_run with the "
            "numpy backend (it splits the step), a Schedule (random order) or Monte Carlo simulation"
        )


def _levels(plan, sampler) -> bool:
    """Whether (plan, sampler) runs on the level layout (random order with a Schedule)."""
    return isinstance(plan, Schedule) and sampler.capabilities.random_order


# ---- block plans: the planner's choice inside the block of each step ---------------------
class _RandomInBlocks(PositionSampler):
    """Random order inside the blocks of a :class:`BlockPlan`: step t reveals a uniformly
    random :math:`k_t`-subset of the masked positions of its block ``blocks[t]`` (the sparse
    chain: not the level layout of an unrestricted random order)."""

    name = "random"
    needs_schedule = True
    allows_empty = False
    uses_probs = False

    def __init__(self, blocks):
        self.blocks = blocks

    def moves(self, ctx: StepContext):
        block = set(self.blocks[ctx.step])
        cand = [j for j in ctx.free if j in block]
        w = 1.0 / comb(len(cand), ctx.size)
        for B in combinations(cand, ctx.size):
            yield sum(1 << j for j in B), w


class _InBlocks(_Deterministic):
    """A planner of :mod:`.adaptive` inside the blocks of a :class:`BlockPlan`: its rule
    (scores, order, tie rule) applied to the masked positions of the step's block only, the
    plan's sizes. Monte Carlo restricts the masked set the same way (:mod:`.simulate`)."""

    needs_schedule = True

    def __init__(self, inner: _Deterministic, blocks):
        self.inner, self.blocks = inner, blocks
        self.name, self.uses_probs, self.ties = inner.name, inner.uses_probs, inner.ties

    def _in_block(self, step, free):
        mask = np.zeros(free.shape[-1], dtype=bool)
        mask[list(self.blocks[step])] = True
        return np.asarray(free, dtype=bool) & mask

    def _step_size(self, step, size, d):
        self.inner._step_size(step, size, d)  # a planner that chooses its own sizes refuses a plan here
        return size

    def _choice(self, step, size, probs, free):
        return self.inner._choice(step, size, probs, self._in_block(step, free))

    def _choose(self, step, size, probs, free, rng=None):
        return self.inner._choose(step, size, probs, self._in_block(step, free), rng)


def _in_blocks(planner, plan: BlockPlan):
    """The planner that runs ``planner`` inside the blocks of ``plan`` (with ``plan.schedule``)."""
    obj = planner
    if obj.capabilities.random_order:
        return _RandomInBlocks(plan.step_blocks)
    if isinstance(obj, _Deterministic):
        return _InBlocks(obj, plan.step_blocks)
    raise ValueError(f"planner: a BlockPlan runs 'random' or a planner of mdmtheory.samplers.adaptive inside its "
                     f"blocks, got {getattr(obj, 'name', type(obj).__name__)!r}")


# ---- plans: what the kernel runs ----------------------------------------------------------
@dataclass(frozen=True)
class _RandomPlan:
    sizes: tuple[int, ...]


@dataclass(frozen=True)
class _GridPlan:
    times: tuple[float, ...]

    @property
    def complete(self) -> bool:
        return self.times[-1] < 1.0


@dataclass(frozen=True, eq=False)
class _ChainPlan:
    """Any other planner, on the kernel's sparse chain: ``steps[t]`` is a
    :class:`kernel.ChainStep` (the terms from the live states of step t, factors = the
    planner's weight times the conditionals of the revealed values) and ``reveal[t]`` the
    (live states, d) weight with which each live state reveals each position."""

    steps: tuple
    reveal: tuple
    n_cols: int
    Pf: np.ndarray  # the flat marginal lattice of the table the plan was built from (numpy)
    split: tuple = ()  # per step, (live states,) bool: the tie rule decided the set (or None)


def _chain_plan(table: np.ndarray, planner_obj, sizes: list) -> _ChainPlan:
    """Apply the planner at every live state, step by step, and collect the terms.

    Deterministic planners (:mod:`.adaptive`) are asked once per step for all live states
    (their ``_choose`` on the (N, d, K) conditionals, as in Monte Carlo); any other planner
    through ``moves(ctx)`` once per revealed set, its weights read at the live x_A."""
    d, K = table.ndim, table.shape[0]
    Pf = np.reshape(_k.marginal_lattice(np.asarray(table, dtype=np.float64), xp=np), (-1,))
    live = np.array([_k.empty_state(d, K)], dtype=np.int64)
    fast = isinstance(planner_obj, _Deterministic)
    marg = None if fast else Marginals(table)
    steps, reveal, splits = [], [], []
    for t, size in enumerate(sizes):
        if not live.size:
            break
        vals = _k.state_values(live, d, K)
        free = vals == K
        n_free = free.sum(axis=1)
        if size is not None and np.any(n_free < size):
            raise ValueError(f"plan: step {t} asks for {size} tokens, only {int(n_free.min())} are masked")
        if fast:
            src, chosen, w, split = _deterministic_moves(planner_obj, t, size, Pf, live, free, d, K)
        else:
            src, chosen, w = _general_moves(planner_obj, t, size, marg, vals, free, d, K)
            split = None
        splits.append(split if split is not None and split.any() else None)
        if np.any(chosen & ~free[src]):
            raise ValueError("planner: proposed a reveal set overlapping the revealed set")
        counts = chosen.sum(axis=1)
        if np.any(counts == 0):
            raise ValueError("planner: proposed an empty reveal set")
        if size is not None and np.any(counts != size):
            raise ValueError(f"planner: proposed {int(counts[counts != size][0])} tokens at a step of size {size}")
        rv = np.zeros((live.shape[0], d))
        np.add.at(rv, src, chosen * w[:, None])
        reveal.append(rv)
        step = _expand(live, src, chosen, w, Pf, d, K)
        steps.append(step)
        live = step.live
    if live.size:
        A = int(((_k.state_values(live[:1], d, K)[0] < K) << np.arange(d)).sum())
        raise ValueError(
            f"planner: state {A:#b} still has masked positions after {len(sizes)} steps "
            "(a planner that chooses its own sizes must reveal at least one token per step)"
        )
    return _ChainPlan(tuple(steps), tuple(reveal), len(sizes) + 1, Pf, tuple(splits))


def _deterministic_moves(planner_obj, t, size, Pf, live, free, d, K):
    """(source, chosen, weight, split) of a planner of :mod:`.adaptive`, all live states at
    once: one term per live state, or under ``ties="random"`` one per resolution of a split
    tie, weight :math:`1/\binom{m}{r}` (:func:`mdmtheory.samplers.ties.tie_choices`; numpy
    constants, like the indicators); ``split`` (live states,) marks the states whose set the
    tie rule decided."""
    step_size = planner_obj._step_size(t, size, d)
    if planner_obj.uses_probs:
        probs = _k.state_conditionals(Pf, live, d, K)
    else:
        probs = np.zeros((live.shape[0], d, K))
    ch = planner_obj._choice(t, step_size, probs, free)
    return ch.rows, np.asarray(ch.chosen, dtype=bool), np.asarray(ch.weight, dtype=np.float64), ch.split


def _check_move(move) -> tuple[int, np.ndarray]:
    """One item of a planner's ``moves(ctx)``: a pair (mask, weight), the mask an integer
    (bit j: position j), the weight real (a scalar or an array over x_A)."""
    try:
        B, w = move
    except (TypeError, ValueError):
        raise ValueError(f"planner: moves(ctx) must yield (mask, weight) pairs, got {_short(move)}") from None
    if isinstance(B, (bool, np.bool_)) or not isinstance(B, numbers.Integral) or B < 0:
        raise ValueError(f"planner: proposed the reveal set {_short(B)}; a reveal set is an integer mask >= 0 "
                         "(bit j: position j), e.g. 0b101 for positions 0 and 2")
    return int(B), float_array(w, "planner", finite=False)


def _general_moves(planner_obj, t, size, marg, vals, free, d, K):
    """(source, chosen, weight) of a planner's ``moves(ctx)``, called once per revealed set
    of the live states with the exact conditionals over every x_A; its weights (scalars or
    arrays over x_A) are read at the live states' values and checked to sum to 1."""
    full = (1 << d) - 1
    masks = (~free).astype(np.int64) @ (1 << np.arange(d, dtype=np.int64))
    allows_empty = bool(getattr(planner_obj, "allows_empty", False))
    src, chosen, w_out = [], [], []
    for A in np.unique(masks):
        A = int(A)
        rows = np.flatnonzero(masks == A)
        shape = tuple(K if A >> j & 1 else 1 for j in range(d))
        pA = np.reshape(marg(A), shape)
        reach_x = pA > 0
        all_reach = bool(reach_x.all())
        free_j = tuple(j for j in range(d) if not A >> j & 1)
        conds: dict[int, np.ndarray] = {}

        def cond(j, A=A, pA=pA, reach_x=reach_x, all_reach=all_reach, conds=conds):
            c = conds.get(j)
            if c is None:
                pAj = np.reshape(marg(A | (1 << j)), tuple(K if (A | 1 << j) >> i & 1 else 1 for i in range(d)))
                c = pAj / pA if all_reach else np.divide(pAj, pA, out=np.zeros(pAj.shape), where=reach_x)
                conds[j] = c
            return c

        ctx = StepContext(t, A, size, d, K, free_j, reach_x, cond)
        at = tuple(np.where(vals[rows, j] < K, vals[rows, j], 0) for j in range(d))  # x_A of each live row
        total = np.zeros(rows.shape[0])
        for move in planner_obj.moves(ctx):
            B, w = _check_move(move)
            if B & ~full:
                raise ValueError(f"planner: proposed B={B:#b} with positions outside 0..{d - 1}")
            if B & A:
                raise ValueError(f"planner: proposed B={B:#b} overlapping the revealed set {A:#b}")
            if B == 0 and not allows_empty:
                raise ValueError("planner: proposed an empty reveal set")
            if size is not None and B.bit_count() != size:
                raise ValueError(f"planner: proposed {B.bit_count()} tokens at a step of size {size}")
            if not np.all(w >= 0):
                raise ValueError(f"planner: proposed a negative or NaN weight for B={B:#b}")
            wr = np.broadcast_to(w, shape)[at] if w.ndim else np.full(rows.shape[0], float(w))
            total += wr
            keep = wr > 0
            if not keep.any():
                continue
            src.append(rows[keep])
            chosen.append(np.broadcast_to((B >> np.arange(d)) & 1 == 1, (int(keep.sum()), d)))
            w_out.append(wr[keep])
        if np.any(np.abs(total - 1.0) > _WEIGHT_TOL):
            raise ValueError(
                f"planner: weights of the moves from state {A:#b} do not sum to 1 "
                f"(got {total[np.abs(total - 1.0) > _WEIGHT_TOL][:4]})"
            )
    if not src:
        return np.zeros(0, dtype=np.int64), np.zeros((0, d), dtype=bool), np.zeros(0)
    return np.concatenate(src), np.concatenate(chosen), np.concatenate(w_out)


def _expand(live, src, chosen, w, Pf, d, K) -> "_k.ChainStep":
    r"""The terms of one step: every (state, reveal set B, values y_B), with target
    :math:`x_A \cup y_B`, factor w and the conditionals :math:`P[x_A, y_b] / P[x_A]`, one
    per b in B (padded with the denominator itself: factor 1). Lattice indices and term
    sources are int32 when the lattice allows (:func:`kernel.index_dtype`): the terms are
    the largest arrays of a run (K^d of them at the last step)."""
    idx = _k.index_dtype(d, K)
    stride = _k.lattice_strides(d, K).astype(idx)
    counts = chosen.sum(axis=1)
    kmax = int(counts.max()) if counts.size else 0
    parts = []
    for k in np.unique(counts):
        k = int(k)
        rows = np.flatnonzero(counts == k)
        pos = np.nonzero(chosen[rows])[1].reshape(rows.shape[0], k)  # chosen positions, increasing
        ys = np.indices((K,) * k, dtype=idx).reshape(k, -1).T  # (K^k, k), C order
        ys -= K
        base = live[src[rows]].astype(idx)
        num = np.empty((rows.shape[0],) + ys.shape, dtype=idx)
        np.multiply(ys[None, :, :], stride[pos][:, None, :], out=num)  # (n, K^k, k): the steps
        del ys
        tgt = num.sum(axis=2, dtype=idx)
        tgt += base[:, None]
        num += base[:, None, None]  # in place (the terms are the largest arrays of a run)
        den = np.broadcast_to(base[:, None], tgt.shape)
        if k < kmax:
            num = np.concatenate([num, np.broadcast_to(den[..., None], tgt.shape + (kmax - k,))], axis=2)
        parts.append((np.repeat(src[rows].astype(idx), K**k), tgt.ravel(), num.reshape(-1, kmax), den.ravel(),
                      np.repeat(w[rows], K**k)))
    # one part (every state reveals as many tokens): its arrays as they are, not copied
    src_t, tgt_t, num_t, den_t, w_t = (parts[0][i] if len(parts) == 1 else np.concatenate([p_[i] for p_ in parts])
                                       for i in range(5))
    del parts
    dst, out, nxt = _k.chain_targets(tgt_t, Pf, d, K)
    del tgt_t
    ones = bool(np.all(w_t == 1.0))
    return _k.ChainStep(src_t, dst, out, nxt, None if ones else w_t, num_t, den_t)


def _resolve(p_table: np.ndarray | None, d: int, K: int, plan, planner_obj):
    """The kernel plan for (plan, sampler); ``p_table`` (numpy) is needed only by planners
    that read the conditionals."""
    cap = planner_obj.capabilities
    if isinstance(plan, Grid):
        if not (cap.random_order and "Grid" in cap.plans) or planner_obj.allows_empty:
            raise ValueError(
                f"planner: a Grid drives the Bernoulli-subset sampler; use planner='random' "
                f"(or 'bernoulli'), got {planner_obj.name!r}"
            )
        return _GridPlan(tuple(plan.times))
    if getattr(planner_obj, "allows_empty", False):
        raise ValueError(
            "plan: a planner that may reveal nothing in a step (Bernoulli) needs a Grid; "
            "pass mt.Grid(times) as plan"
        )
    if plan is None:
        if cap.needs_plan:
            raise ValueError(f"plan: planner {planner_obj.name!r} needs a Schedule")
        sizes: list = [None] * d  # at least one token per step: d steps at most
    else:
        sizes = list(check_schedule(plan, d, name="plan").sizes)
    if cap.random_order:
        return _RandomPlan(tuple(sizes))
    if p_table is None:
        if cap.reads_law:
            raise ValueError(
                f"planner: {planner_obj.name!r} chooses from the conditionals, so "
                "its choices need a concrete table; under jax.jit/grad/vmap use planner='random', a Grid, "
                "or a planner whose order does not read the law"
            )
        p_table = np.full((K,) * d, 1.0 / K**d)  # the choices do not read it
    return _chain_plan(p_table, planner_obj, sizes)


# ---- the propagation (pure JAX) -----------------------------------------------------------
def _cols(rows, d, n_cols, xp):
    """{(j, col): value} -> (d, n_cols) array."""
    out = [[0.0] * n_cols for _ in range(d)]
    for (j, c), v in rows.items():
        out[j][c] = v
    if not d:
        return xp.zeros((0, n_cols))
    return xp.stack([xp.stack([xp.asarray(v, dtype=np.float64) for v in row]) for row in out])


def _mean_entropies(Hl, d, xp):
    """e_m, m = 0..d, from the (2,)*d subset entropies."""
    pc = np.zeros((2,) * d, dtype=np.int64)
    for j in range(d):
        pc = pc + np.reshape([0, 1], (1,) * j + (2,) + (1,) * (d - j - 1))
    return [xp.sum(xp.where(pc == m, Hl, 0.0)) / comb(d, m) for m in range(d + 1)]


def _propagate(table, plan, K: int, trajectory: bool, grid_betas=None, xp=jnp):
    """Run the kernel. Returns (q, lost, reveal (d, n_cols), finish (n_cols), step_kl or None,
    tie_mass)."""
    d = table.ndim
    if isinstance(plan, _ChainPlan) and xp is np:  # built from this very table (exact_run)
        P = np.reshape(plan.Pf, (K + 1,) * d)
    else:
        P = _k.marginal_lattice(table, xp=xp)
    empty = (K,) * d
    start = _k._set_at(xp, xp.zeros_like(P), empty, 1.0)
    q = xp.zeros(table.shape)
    lost = 0.0
    tie = 0.0
    rows: dict = {}
    finish = []
    step_kl = []

    def add(j, c, v):
        rows[(j, c)] = rows.get((j, c), 0.0) + v

    def settle(M):
        nonlocal q, lost
        M, fin, l_ = _k.settle(M, P, K, xp=xp)
        q = q + fin
        lost = lost + l_
        finish.append(xp.sum(fin))
        return M

    if isinstance(plan, _GridPlan):
        times = plan.times
        betas = grid_betas
        t0 = times[0]
        M = _k.bernoulli_start(P, K, t0, xp=xp) if t0 > 0.0 else start
        for j in range(d):  # column 0: tokens drawn at initialization
            add(j, 0, xp.sum(M[_k.ix(d, K, vals=[j])]))
        for s in range(len(times) - 1):
            M = settle(M)
            if s == 0 and t0 == 0.0:  # only the empty state has mass: a product of 1-marginals
                M, masked = _k.bernoulli_first(P, K, betas[0], xp=xp), [xp.ones(())] * d
            else:
                blk = GRID_BLOCK_ENTRIES if xp is np else None
                M, masked = _k.bernoulli_step(M, P, K, betas[s], xp=xp, max_entries=blk)
            for j in range(d):
                add(j, s + 1, betas[s] * masked[j])
        last = len(times) - 1
        M = settle(M)
        if plan.complete:
            draw = _k.complete(M, P, K, xp=xp)
            q = q + draw
            finish.append(xp.sum(draw))
            for j in range(d):
                add(j, last + 1, xp.sum(M[_k.ix(d, K, masked=[j])]))
        n_cols = last + 1 + int(plan.complete)
        if trajectory:
            Hl = _k.lattice_entropies(P, K, xp=xp)
            step_kl = [0.0]
            for s in range(last):
                step_kl.append(_grid_step_kl(Hl, times[s], betas[s], xp))
            if plan.complete:
                step_kl.append(0.0)
    elif isinstance(plan, _RandomPlan):
        # the level layout (kernel.level_step): only the revealed sets of size s_t
        n_cols = len(plan.sizes) + 1
        e = _mean_entropies(_k.lattice_entropies(P, K, xp=xp), d, xp) if trajectory else None
        levels: dict = {}

        def marg(m):
            a = levels.get(m)
            if a is None:
                a = levels[m] = _k.level_marginals(P, K, m, xp=xp)
            return a

        S = xp.ones((1, 1))
        n = 0
        step_kl = [0.0]
        for t, k in enumerate(plan.sizes):
            Pn = marg(n)
            reach = Pn > 0
            lost = lost + xp.sum(xp.where(reach, 0.0, S))
            S = xp.where(reach, S, 0.0)
            finish.append(xp.zeros(()))
            # each state moves every masked j with probability k / (d - n)
            free_mass = (1.0 - _k.level_masks(d, n)).T @ xp.sum(S, axis=1)
            for j in range(d):
                add(j, t + 1, free_mass[j] * (k / (d - n)))
            S = _k.level_step(S, Pn, marg(n + 1), K, d, n, k, 1.0 / comb(d - n, k), xp=xp)
            if trajectory:
                step_kl.append((e[n] - e[n + k]) + k * (e[n + 1] - e[n]) if k >= 2 else 0.0)
            n += k
        q = xp.reshape(S, table.shape)  # level d: the full state, finished whatever p(x)
        finish.append(xp.sum(q))
    else:
        # the sparse chain: only the live states, one term per (state, B, y_B)
        Pf = xp.reshape(P, (-1,))
        n_cols = plan.n_cols
        mass = xp.ones((1,))
        pi = xp.ones((1,)) if trajectory else None
        # tie mass (exact_run only): a second chain of the runs that met no tie-decided state
        untied = xp.ones((1,)) if xp is np and any(sp is not None for sp in plan.split) else None
        q = xp.zeros((K**d,))
        finish.append(xp.zeros(()))
        step_kl = [0.0]
        for t, (step, rv) in enumerate(zip(plan.steps, plan.reveal)):
            moved = rv.T @ mass
            if untied is not None:  # runs not yet at a tie-decided state: the first entries count
                split = plan.split[t] if t < len(plan.split) else None
                if split is not None:
                    tie = tie + xp.sum(xp.where(split, untied, 0.0))
                    untied = xp.where(split, 0.0, untied)
                untied = _k.chain_apply(untied, step, Pf, K**d, xp=xp)[0]
            for j in range(d):
                add(j, t + 1, moved[j])
            new, out, lost_t = _k.chain_apply(mass, step, Pf, K**d, xp=xp)[:3]  # not the terms' masses
            q = q + out
            lost = lost + lost_t
            finish.append(xp.sum(out))
            del out
            if trajectory:
                step_kl.append(_chain_step_kl(pi, step, Pf, xp))
                pi = _k.chain_apply(pi, _k.ChainStep(step.src, step.dst, step.out, step.live, step.w), Pf, K**d, xp=xp)[0]
            mass = new
        step_kl += [0.0] * (n_cols - len(step_kl))  # the steps after every state finished
        q = xp.reshape(q, table.shape)
    finish = xp.stack([xp.asarray(f, dtype=np.float64) for f in finish] + [xp.zeros(())] * (n_cols - len(finish)))
    reveal = _cols(rows, d, n_cols, xp)
    skl = xp.stack([xp.asarray(x, dtype=np.float64) for x in step_kl]) if trajectory else None
    return q, xp.asarray(lost), reveal, finish, skl, xp.asarray(tie)


def _chain_step_kl(pi, step, Pf, xp):
    r"""Trajectory KL of one chain step: :math:`\sum \pi\, w\, p(x_{A \cup B})
    \log \frac{p(x_{A\cup B})}{p(x_A) \prod_{b} p(x_b \mid x_A)}` over the terms (in log
    space: no underflow of the product; 0 where :math:`p(x_{A \cup B}) = 0`)."""
    if step.num is None or step.num.shape[1] < 2:
        return 0.0  # one token per term: TC = 0 exactly
    tgt_p = Pf[_chain_targets_index(step)]
    ok = tgt_p > 0
    lden = _k._safe_log(xp, Pf[step.den], ok)
    s = _k._safe_log(xp, tgt_p, ok) - lden
    for col in range(step.num.shape[1]):
        s = s - (_k._safe_log(xp, Pf[step.num[:, col]], ok) - lden)
    c = pi[step.src] if step.w is None else pi[step.src] * step.w
    return xp.sum(xp.where(ok, c * tgt_p * s, 0.0))


def _chain_targets_index(step):
    """Flat lattice index of each term's target, from its conditionals' indices: the state
    plus the revealed values, :math:`\\sum_c (\\mathrm{num}_c - \\mathrm{den})` (padding adds 0)."""
    return step.den + (step.num - step.den[:, None]).sum(axis=1)


def _grid_step_kl(Hl, t, beta, xp):
    r"""Trajectory KL of one Bernoulli step from the revealed-set law Bernoulli(t)^d."""
    d = Hl.ndim
    G = Hl  # sum_B w_B H(A u B), one axis at a time
    D = 0.0  # sum_{j not in A} (H(A u j) - H(A))
    pi = 1.0
    for ax in range(d):
        h0 = _k._sl(Hl, 0, 1, ax)
        h1 = _k._sl(Hl, 1, 2, ax)
        D = D + xp.concatenate([h1 - h0, xp.zeros_like(h0)], ax)
        g0 = _k._sl(G, 0, 1, ax)
        g1 = _k._sl(G, 1, 2, ax)
        G = xp.concatenate([(1.0 - beta) * g0 + beta * g1, g1], ax)
        pi = pi * xp.reshape(xp.asarray([1.0 - t, t]), (1,) * ax + (2,) + (1,) * (d - ax - 1))
    return xp.sum(pi * ((Hl - G) + beta * D))


@partial(jit, static_argnums=(1, 2, 3))
def _propagate_jit(table, plan, K, trajectory, grid_betas=None):
    return _propagate(table, plan, K, trajectory, grid_betas)


#: ``exact_run(backend="auto")`` runs the kernel with numpy: the kernel is unrolled over the
#: moves of every step, and XLA's compile time for that graph grows with d (random order,
#: d = 8, Schedule((2,)*4): 4 s for the law, 39 s with its gradient; benchmarks/RESULTS.md §12),
#: too much for one-off laws.
#: ``backend="jax"`` jit-compiles it (worth it for repeated calls on one shape, and what
#: :func:`sampler_kl` uses).
JIT_MIN_ENTRIES = None


def _run(table: np.ndarray, plan, K: int, trajectory: bool, backend: str = "auto"):
    """Kernel on a concrete numpy table; returns numpy arrays."""
    if backend == "auto":
        backend = "numpy"
    betas = None if not isinstance(plan, _GridPlan) else np.asarray(Grid(plan.times).betas, dtype=np.float64)
    if backend == "numpy":
        with np.errstate(all="ignore"):  # 0 * inf cannot occur; underflow to 0 is legitimate
            out = _propagate(np.asarray(table, dtype=np.float64), plan, K, trajectory, betas, xp=np)
        return tuple(None if a is None else np.asarray(a, dtype=np.float64) for a in out)
    with x64():
        t = jnp.asarray(table, dtype=jnp.float64)
        b = None if betas is None else jnp.asarray(betas)
        out = _propagate_jit(t, plan, K, trajectory, b) if backend == "jax" else _propagate(t, plan, K, trajectory, b)
        return tuple(None if a is None else np.asarray(a, dtype=np.float64) for a in out)


def exact_run(p: Joint, plan=None, planner="random", *, trajectory: bool = False, backend: str = "auto") -> ExactRun:
    """Run the exact law engine (see the module docstring).

    Parameters
    ----------
    p : the data law.
    plan : a :class:`Schedule` (sizes k_t; random or schedule-driven planners), a
        :class:`Grid` (Bernoulli-subset sampler; ``planner`` must be ``"random"`` or
        ``"bernoulli"``), a :class:`BlockPlan` (the planner inside each step's block, the
        plan's sizes; ``"random"`` or a planner of :mod:`.adaptive`), or None for planners
        that choose their own sizes. (A RandomSchedule, sample-then-select and the revising
        samplers: :func:`sampler_law`.)
    planner : a registered name (``"random"``, ...) or a planner object.
    trajectory : also compute the trajectory (path) KL and its per-step parts.
    backend : ``"auto"`` (= ``"numpy"``, see :data:`JIT_MIN_ENTRIES`), ``"numpy"``,
        ``"jax"`` (jit, compiled once per (K, d, plan shape)) or ``"eager"`` (JAX op by op).
        The kernel code is the same; results agree to rounding.

    This is the planners' :meth:`~mdmtheory.samplers.base.PositionSampler.exact_run` (the
    protocol's exact run of every planner of positions); other samplers: :func:`sampler_law`.
    """
    sampler = as_sampler(planner)
    if not sampler.capabilities.positions:
        raise ValueError(f"planner: exact_run runs the planners of positions, not {sampler.name!r}; its exact run is "
                         f"mt.samplers.as_sampler(planner).exact_run(p, plan) (its law: mt.sampler_law)")
    return _position_run(p, plan, sampler, trajectory=trajectory, backend=backend)


@bind("exact_run")
def _position_run(p: Joint, plan, planner, *, trajectory: bool = False, backend: str = "auto") -> ExactRun:
    """:func:`exact_run` of a resolved planner of positions (the protocol's entry, bound in
    :mod:`.base`)."""
    if not isinstance(backend, str) or backend not in ("auto", "numpy", "jax", "eager"):
        raise ValueError(f"backend: expected 'auto', 'numpy', 'jax' or 'eager', got {backend!r}")
    if not isinstance(trajectory, (bool, np.bool_)):
        raise ValueError(f"trajectory: expected True or False, got {type(trajectory).__name__}")
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
    if p.lost:
        raise ValueError("p: has lost mass; the data law must be normalized")
    d, K = p.d, p.K
    if isinstance(plan, RandomSchedule):
        raise ValueError("plan: exact_run follows one plan; the law of a RandomSchedule (a mixture over its "
                         "compositions) is mt.sampler_law(p, plan, planner)")
    if isinstance(plan, BlockPlan):
        if plan.d != d:
            raise ValueError(f"plan: a BlockPlan of {plan.d} positions, but the law has d = {d}")
        planner, plan = _in_blocks(planner, plan), plan.schedule
    _check_size(d, K, isinstance(plan, Grid), jax_grid=backend in ("jax", "eager"), levels=_levels(plan, planner))
    kplan = _resolve(p.table, d, K, plan, planner)
    q, lost, reveal, finish, skl, tie = _run(p.table, kplan, K, trajectory, backend)
    lost = float(lost)
    underflow = (p.table > 0) & (q == 0)
    if np.any(underflow):
        # p(x) > 0 implies q(x) > 0 for every planner (each step along x's own path has
        # positive conditionals), so q(x) = 0 here is float64 underflow, not a zero of q
        x = tuple(int(i) for i in np.argwhere(underflow)[0])
        raise ValueError(
            f"p: the sampler law underflows float64: q{x} is a product of conditionals below "
            f"1e-308 while p{x} = {p.table[x]:.3g} > 0, so q and KL(p||q) cannot be represented; "
            "entries this small are beyond the exact engine (drop or merge them)"
        )
    law = Joint(q, lost=lost)
    t = np.arange(finish.shape[0])
    return ExactRun(
        law=law,
        reveal_steps=reveal,
        step_counts=finish,
        forwards=float((t * finish).sum() / finish.sum()) if finish.sum() > 0 else math.nan,
        path_kl=float(skl.sum()) if trajectory else None,
        step_kl=skl,
        ties=getattr(planner, "ties", None) if not isinstance(plan, Grid) else None,
        tie_mass=float(tie),
    )


def sampler_law(p: Joint, plan=None, planner="random", *, ties=None) -> Joint:
    r"""Exact output law q of any sampler the package runs: the one entry point.

    Parameters
    ----------
    p : the data law (a :class:`Joint`).
    plan : a :class:`Schedule`, a :class:`Grid`, a :class:`BlockPlan`, a
        :class:`RandomSchedule`, or None (planners with their own sizes; the revising samplers,
        which carry their plan).
    planner : a registered name or a planner object (:mod:`.planners`, :mod:`.adaptive`), a
        :class:`~mdmtheory.samplers.select.SampleThenSelectPlanner`, or a revising sampler
        (:class:`~mdmtheory.samplers.revise.RemaskingSampler`, ``CorrectorSampler``,
        ``EditingSampler``).
    ties : None (the planner's own rule) or a tie rule (``"random"``, ``"lowest"``,
        ``"topk"``; :mod:`mdmtheory.samplers.ties`) that replaces it, for scored samplers.

    The combinations, and the run each one is (whose record has the extra fields):

    * a position planner with a Schedule, a Grid (``"random"``/``"bernoulli"`` only) or None:
      :func:`exact_run` (reveal steps, step counts, trajectory KL, tie mass);
    * a position planner with a BlockPlan (``"random"`` or a planner of :mod:`.adaptive`): the
      planner's choice restricted to the masked positions of each step's block, the plan's
      sizes; :func:`exact_run` takes the BlockPlan too;
    * a position planner or sample-then-select with a RandomSchedule: the mixture
      :math:`\sum_c \pi(c)\, q_c` over its compositions (random order:
      :func:`mdmtheory.samplers.randomized.random_schedule_law`);
    * sample-then-select with a Schedule: ``select_run(p, plan, planner).law`` (expected
      forwards, commits per step, tie mass);
    * a revising sampler with ``plan=None`` (or the plan it carries; another is refused):
      ``revise_run(p, planner).law`` (forwards, tie mass).

    >>> import mdmtheory as mt
    >>> q = mt.sampler_law(mt.families.parity(3), mt.Schedule((3,)))
    >>> round(mt.kl(mt.families.parity(3), q), 6)  # = TC = log 2
    0.693147
    """
    sampler = as_sampler(planner, ties=ties, plan=plan)
    return sampler.exact_run(p, plan).law


def sampler_kl(table, plan, *, planner="random"):
    r""":math:`\mathrm{KL}(p \,\|\, q_{\text{plan}}(p))` as a JAX float64 scalar, differentiable in p.

    The same kernel as :func:`exact_run`, in JAX: it works under ``jax.jit``, ``jax.grad``
    (with respect to ``table``; compose with a softmax or any smooth parametrization) and
    ``jax.vmap`` (over a leading batch axis of tables).

    Parameters
    ----------
    table : (K,)*d array (numpy or JAX), a normalized law. Concrete tables are checked like
        a :class:`~mdmtheory.Joint`; traced ones (inside jit/grad/vmap) cannot be.
    plan : a :class:`Schedule` or a :class:`Grid` (the domain of the JAX kernel; any other
        plan or sampler: ``mt.kl(p, mt.sampler_law(p, plan, planner))``).
    planner : ``"random"`` (default), or any planner :func:`exact_run` accepts. A planner that
        reads the conditionals (confidence, margin, ...) needs a concrete table: its choices
        are then held fixed (they are piecewise constant in p, so the gradient is that of
        the law with those choices, exact away from ties).

    Returns
    -------
    :math:`\sum_x p(x) \log(p(x)/q(x))`, terms with p(x) = 0 are 0, ``inf`` if some
    q(x) = 0 < p(x). Mass stuck at zero-probability prefixes stays out of q (q is
    sub-normalized, as ``exact_run(...).lost`` reports); no NaN in values or gradients
    (every division and logarithm is guarded on both branches).

    >>> import mdmtheory as mt, jax
    >>> p = mt.families.parity(3)
    >>> round(float(mt.sampler_kl(p.table, mt.Schedule((3,)))), 6)  # = TC = log 2
    0.693147
    """
    with x64():
        if not isinstance(table, jax.core.Tracer) and not type(table).__module__.startswith("jax"):
            table = float_array(table, "table", what="(K,)*d")
        t = jnp.asarray(table, dtype=jnp.float64)
        if t.ndim < 1 or any(s != t.shape[0] for s in t.shape) or t.shape[0] < 2:
            raise ValueError(f"table: expected a (K,)*d array with K >= 2, got shape {tuple(t.shape)}")
        d, K = t.ndim, t.shape[0]
        if not isinstance(plan, (Schedule, Grid)):
            raise ValueError(f"plan: sampler_kl takes a mdmtheory.Schedule or Grid, got {type(plan).__name__}; "
                             "for any other plan use mt.kl(p, mt.sampler_law(p, plan, planner))")
        sampler = as_sampler(planner)
        if not sampler.capabilities.jax:
            raise ValueError(f"planner: sampler_kl runs the planners of positions, not {type(sampler).__name__}; "
                             "use mt.kl(p, mt.sampler_law(p, plan, planner))")
        _check_size(d, K, isinstance(plan, Grid), name="table", levels=_levels(plan, sampler))
        concrete = None
        if not isinstance(t, jax.core.Tracer):
            concrete = np.asarray(t)
            Joint(concrete)  # the checks of a law (shape, sign, normalization), with their messages
        kplan = _resolve(concrete, d, K, plan, sampler)
        betas = None if not isinstance(kplan, _GridPlan) else jnp.asarray(Grid(kplan.times).betas)
        if isinstance(kplan, _ChainPlan):
            q = _propagate(t, kplan, K, False, betas)[0]
        else:
            q = _propagate_jit(t, kplan, K, False, betas)[0]
        ok = t > 0
        okq = ok & (q > 0)
        terms = jnp.where(okq, t * (jnp.log(jnp.where(ok, t, 1.0)) - jnp.log(jnp.where(okq, q, 1.0))), 0.0)
        missing = jnp.any(ok & ~okq)
        return jnp.sum(terms) + jnp.where(missing, jnp.inf, 0.0)
