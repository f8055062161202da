r"""The optimal adaptive plan: the best state-dependent choice of reveal sets (issue 37).

**The decision process.** A factorized decoder with the exact one-token conditionals is in
state :math:`(A, x_A)` (A the revealed set, :math:`p(x_A) > 0`); it chooses a non-empty set
S of masked positions as a function of the state, draws :math:`x_S` from
:math:`\prod_{i \in S} p(x_i \mid x_A)` and pays, in path KL, the conditional total
correlation

.. math::

    C(S \mid x_A) = \sum_{i \in S} H(X_i \mid x_A) - H(X_S \mid x_A).

Under the exact trajectory law (:math:`x_S \sim p(x_S \mid x_A)`) the path KL of a
deterministic state-dependent plan is :math:`\mathbb{E} \sum_t C(S_t \mid x_{A_t})`
(docs/theory.md §2, ``proofs/path_kl_identity.md``; per state this is the one-step identity
of ``proofs/deterministic_planner_kl.md``), and the output law's KL is at most the path KL
(``proofs/kl_le_path_kl.md``). The path KL is an additive cost over a finite MDP, so its
minimum is the Bellman recursion (``proofs/adaptive_plan.md``)

.. math::

    V_t(A, x_A) = \min_{S} \Bigl[ C(S \mid x_A)
        + \sum_{x_S} p(x_S \mid x_A)\, V_{t-1}(A \cup S, x_{A \cup S}) \Bigr],

with :math:`V_0 = 0` at the full state and :math:`+\infty` elsewhere (``steps=T``: exactly
T steps, so :math:`|S| \le |\text{masked}| - (t - 1)` is forced by the infinities), or the
stationary :math:`V = \min_S [C + \lambda + \mathbb{E} V]` (``penalty=λ`` per forward).

**How it is computed.** Everything lives on the package's marginal lattice ``(K+1,)*d``
(:func:`mdmtheory.samplers.kernel.marginal_lattice`: a state is one entry, slot K = masked).
Writing :math:`U = P\,(V + \log P)` on the lattice, the expectation term and
:math:`-H(X_S \mid x_A)` together are :math:`\frac{1}{p(x_A)}\sum_{x_S} U[x_A, x_S] - \log p(x_A)`;
the sums over :math:`x_S` for **every** pair (state, S) are one tensor of shape
``(K+2,)*d`` (slot K+1 on axis j: j in S, summed over its values), built axis by axis. For
``actions="any"`` the minimum over S is separable by axis (for each masked axis, keep slot K
or K+1), so one Bellman application is :math:`O(d (K+2)^d)` numpy work, with no Python loop
over states or sets. For ``actions="confidence"`` the candidate sets of a state are its n
most confident masked positions, n = 1..m (confidence :math:`\max_v p(v \mid x_A)`; equal
confidences broken by the **lowest index**); they are read from the same tensor by
precomputed indices, :math:`d (K+1)^d` entries. ``steps=T`` takes T applications (each
yields :math:`V_t`), ``penalty`` at most d (stopped when V no longer changes: every state's
value depends only on states with more positions revealed).

**Cost.** States :math:`\sum_A K^{|A|} = (K+1)^d`; (state, action) pairs
:math:`\sum_{A \cap S = \emptyset} K^{|A|} = (K+2)^d` for ``"any"`` (:math:`3^d` pairs (A, S)
times the values); ``"confidence"`` reads :math:`d (K+1)^d` of them but builds the same
``(K+2)^d`` sums. Memory: a few float64 arrays of :math:`(K+2)^d` entries; refused above
:data:`MAX_ADAPTIVE_ENTRIES` (d = 14 binary; d = 11 at K = 3).

**Which forwards.** The path KL is an expectation along the *data's* trajectory
(:math:`x_S \sim p(x_S \mid x_A)`), so the MDP counts forwards along the same trajectory:
``penalty`` and ``forwards`` act on :math:`\mathbb{E}_p[\text{forwards}]` (the record's
``path_forwards``). The sampler's own expected forwards (``forwards``, the engine's count
under the sampler's law, as every ``Run`` reports it) differ for a plan whose number of steps
depends on the values: on a random d = 5 binary law the λ = 0.1 optimum takes 2.650 forwards
along the data's paths and 2.686 along its own (tests/optimal/test_optimal_adaptive.py). With
``steps=T`` both are T.

**forwards=F.** The constrained problem min path KL s.t. E_p[forwards] ≤ F is solved by its
Lagrangian: bisection on λ over the penalized problem. Where the budget falls strictly
between the forwards of two deterministic optimal policies (λ just below and just above the
breakpoint), the optimum of the constrained problem (over policies that may randomize) is the
**mixture of the two policies drawn once at the start** with the weight that meets the budget
exactly. A mixture drawn at the start is not a function of the state, so it does not fit a
planner's ``moves(ctx)``: the record then holds both deterministic planners
(``planners``) and their ``weights``, its ``law`` is the mixture of their laws and ``planner``
is None.

**given.** Positions revealed from the start (a prompt): :math:`x_G \sim p(x_G)`, then the
plan. The value is :math:`\sum_{x_G} p(x_G)\, V(G, x_G)`; the engine runs are per prompt on
the conditioned law (:meth:`AdaptivePlan.prompt_planner`), and ``law`` is the joint law of
(prompt, response). ``planner`` is None then (the engine and Monte Carlo start from the
empty state).

**Honest limits (issue 37 part 4).** (1) The optimum is over plans that see only revealed
values. Sample-then-select (:mod:`mdmtheory.samplers.select`) draws candidate values first
and commits the confident ones: it sees values the plan has not revealed, is outside this
class, and its law is not a product along a path (computed anyway in
``test_sample_then_select_distance``: on random d = 4 laws at two steps its KL is several
times this optimum). (2) This is the optimum of the **path KL**. For a deterministic plan the output-law
KL equals the path KL (``proofs/deterministic_planner_kl.md``: the path is a function of the
output), so among deterministic state-dependent plans it is also the KL optimum; randomized
rules (random order, the ``forwards=`` mixture) have KL < path KL and can beat it in KL: on
the seed-0 random d = 4 binary law random order with the schedule (3, 1) has KL 0.0447
against 0.0499 for the 2-step optimum (tests/optimal/test_optimal_adaptive.py,
``test_kl_can_beat_path_kl_optimum``; docs/theory.md §16). (3) The conditionals are exact; with a model's conditionals the
policy is still the table computed from p.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from itertools import product

import numpy as np

from .._estimate import Record
from ..laws.joint import Joint
from ..samplers.base import PositionSampler
from ..samplers.kernel import marginal_lattice
from ..samplers.engine import exact_run
from ..information.divergence import kl as _kl

__all__ = ["AdaptivePlan", "AdaptivePlanner", "adaptive_plan", "MAX_ADAPTIVE_ENTRIES"]

#: Largest (K+2)^d (the (state, action) sums) :func:`adaptive_plan` builds: 2^28 (d = 14 binary).
MAX_ADAPTIVE_ENTRIES = 2**28
_ACTIONS = ("any", "confidence")


# ---- the lattice algebra --------------------------------------------------------------
def _extend_sum(U: np.ndarray, K: int) -> np.ndarray:
    """``(K+1,)*d`` -> ``(K+2,)*d``: slot K+1 on axis j is the sum of slots 0..K-1."""
    for ax in range(U.ndim):
        head = U[(slice(None),) * ax + (slice(0, K),)]
        U = np.concatenate([U, head.sum(axis=ax, keepdims=True)], axis=ax)
    return U


def _ext_map(X: np.ndarray, K: int, axes=None) -> np.ndarray:
    """Read ``X`` (slots 0..K on ``axes``) at the extended slots 0..K+1 (K+1 -> K)."""
    m = np.array(list(range(K + 1)) + [K])
    axes = range(X.ndim) if axes is None else axes
    for ax in axes:
        X = np.take(X, m, axis=ax)
    return X


class _Model:
    """What the recursion needs from p, computed once: the lattice, logs, one-token
    entropies, and the per-action constants."""

    def __init__(self, table: np.ndarray, actions: str):
        d, K = table.ndim, table.shape[0]
        self.d, self.K, self.actions = d, K, actions
        P = np.asarray(marginal_lattice(np.asarray(table, dtype=np.float64), xp=np))
        self.P = P
        self.ok = P > 0
        self.logP = np.log(np.where(self.ok, P, 1.0))
        self.pinv = np.where(self.ok, 1.0 / np.where(self.ok, P, 1.0), 0.0)
        plogp = P * self.logP
        # H_j(x) = H(X_j | x_A) at states with j masked: log P - sum_v P_v log P_v / P
        self.H = []
        self.conf = []
        for j in range(d):
            at = (slice(None),) * j
            s = plogp[at + (slice(0, K),)].sum(axis=j, keepdims=True)
            Pm = P[at + (slice(K, K + 1),)]
            okm = Pm > 0
            h = np.where(okm, np.log(np.where(okm, Pm, 1.0)) - s / np.where(okm, Pm, 1.0), 0.0)
            self.H.append(np.maximum(h, 0.0))
            c = P[at + (slice(0, K),)].max(axis=j, keepdims=True) / np.where(okm, Pm, 1.0)
            self.conf.append(np.where(okm, c, 0.0))
        self.ext_shape = (K + 2,) * d
        self.ext_stride = np.array([(K + 2) ** (d - 1 - j) for j in range(d)], dtype=np.int64)
        # flat extended index of each lattice state (same slots)
        base = np.zeros(P.shape, dtype=np.int64)
        for j in range(d):
            base = base + np.arange(K + 1, dtype=np.int64).reshape((1,) * j + (K + 1,) + (1,) * (d - j - 1)) \
                * self.ext_stride[j]
        self.base = base
        if actions == "any":
            cst = _ext_map(-self.logP, K)
            for j in range(d):
                hj = _ext_map(self.H[j], K, [a for a in range(d) if a != j])
                cst[(slice(None),) * j + (slice(K + 1, K + 2),)] += hj
            cst[(slice(0, K + 1),) * d] = np.inf  # S = empty is not an action
            self.cst = cst
            self.pinv_ext = _ext_map(self.pinv, K)
        else:
            N = P.size
            masked = np.stack([np.broadcast_to(np.arange(K + 1).reshape((1,) * j + (K + 1,) + (1,) * (d - j - 1))
                                               == K, P.shape).ravel() for j in range(d)], axis=1)
            conf = np.full((N, d), -np.inf)
            Hm = np.zeros((N, d))
            for j in range(d):
                full_c = np.zeros(P.shape)
                full_h = np.zeros(P.shape)
                sl = (slice(None),) * j + (slice(K, K + 1),)
                full_c[sl] = self.conf[j]
                full_h[sl] = self.H[j]
                conf[:, j] = np.where(masked[:, j], full_c.ravel(), -np.inf)
                Hm[:, j] = full_h.ravel()
            # the n most confident masked positions: sort by -confidence, equal ones by lowest index
            order = np.argsort(-conf, axis=1, kind="stable")
            m = masked.sum(axis=1)
            self.order = order
            self.m = m
            self.conf_idx = base.ravel()[:, None] + np.cumsum(self.ext_stride[order], axis=1)
            cst = np.cumsum(np.take_along_axis(Hm, order, axis=1), axis=1) - self.logP.ravel()[:, None]
            self.conf_void = np.arange(d)[None, :] >= m[:, None]
            cst[self.conf_void] = np.inf
            self.conf_cst = cst
            self.conf_masks = np.cumsum(np.left_shift(np.int64(1), order.astype(np.int64)), axis=1)

    def step(self, V: np.ndarray, lam: float):
        """One Bellman application: (new V, chosen masks, the extended index of each choice)."""
        d, K = self.d, self.K
        with np.errstate(invalid="ignore", over="ignore"):
            U = np.where(self.ok, self.P * (V + self.logP), 0.0)
        R = _extend_sum(U, K)
        if self.actions == "any":
            Q = R * self.pinv_ext
            del R
            Q += self.cst
            B = None
            for ax in range(d):
                at = (slice(None),) * ax
                q0, q1 = Q[at + (slice(K, K + 1),)], Q[at + (slice(K + 1, K + 2),)]
                take = q1 < q0
                if B is None:
                    b0 = np.zeros(q0.shape, dtype=np.int64)
                    b1 = np.full(q1.shape, 1 << ax, dtype=np.int64)
                    Bk = np.zeros(Q[at + (slice(0, K),)].shape, dtype=np.int64)
                else:
                    b0, b1, Bk = B[at + (slice(K, K + 1),)], B[at + (slice(K + 1, K + 2),)] + (1 << ax), \
                        B[at + (slice(0, K),)]
                newq = np.concatenate([Q[at + (slice(0, K),)], np.where(take, q1, q0)], axis=ax)
                B = np.concatenate([Bk, np.where(take, b1, b0)], axis=ax)
                Q = newq
            Vn = Q + lam
            masks = B
        else:
            with np.errstate(invalid="ignore"):  # the slots n >= m index nothing: set to +inf below
                q = R.ravel()[self.conf_idx] * self.pinv.ravel()[:, None] + self.conf_cst
            q[self.conf_void] = np.inf
            n = np.argmin(q, axis=1)
            r = np.arange(q.shape[0])
            Vn = (q[r, n] + lam).reshape(self.P.shape)
            masks = self.conf_masks[r, n].reshape(self.P.shape)
        return Vn, masks

    def full(self):
        return (slice(0, self.K),) * self.d


def _after(model: _Model, masks: np.ndarray, F: np.ndarray) -> np.ndarray:
    """E[F(next state)] under the policy ``masks`` at every state: the same extended sums."""
    d, K = model.d, model.K
    R = _extend_sum(np.where(model.ok, model.P * F, 0.0), K).ravel()
    idx = model.base.copy()
    for j in range(d):
        idx += ((masks >> j) & 1) * model.ext_stride[j]
    return R[idx] * model.pinv


# ---- the planner -------------------------------------------------------------------------
class AdaptivePlanner(PositionSampler):
    """The optimal adaptive plan as a planner of positions: at step t in state (A, x_A) it
    reveals ``policy[t][x]`` (a mask; x the lattice index of the state, slot K = masked) —
    for a stationary plan one policy for every step. ``needs_schedule = False`` (run with
    plan=None), ``takes_plan = False``. Exact engine: :meth:`moves`. Monte Carlo (simulate,
    the bridge): :meth:`select_oracle` reads the revealed values (``needs_oracle``);
    :meth:`select`, which sees only the conditionals, is refused by name."""

    name = "adaptive_optimum"
    needs_schedule = False
    takes_plan = False
    needs_oracle = True
    deterministic = True
    ties = None

    def __init__(self, policies, d: int, K: int, horizon: int | None):
        self.policies = tuple(np.asarray(a) for a in policies)
        self.d, self.K, self.horizon = int(d), int(K), horizon

    def __repr__(self):
        h = "stationary" if self.horizon is None else f"steps={self.horizon}"
        return f"AdaptivePlanner(d={self.d}, K={self.K}, {h})"

    def _policy(self, step: int) -> np.ndarray:
        if self.horizon is None:
            return self.policies[0]
        if not 0 <= step < self.horizon:
            raise ValueError(f"plan: the plan has {self.horizon} steps, step {step} asked")
        return self.policies[self.horizon - 1 - step]

    def _check(self, d, K):
        if (d, K) != (self.d, self.K):
            raise ValueError(f"p: the plan was computed for d={self.d}, K={self.K}; got d={d}, K={K}")

    def moves(self, ctx):
        if ctx.size is not None:
            raise ValueError("plan: the adaptive optimum chooses its own sets; pass plan=None")
        self._check(ctx.d, ctx.K)
        pol = self._policy(ctx.step)
        K = self.K
        sl = tuple(slice(0, K) if ctx.revealed >> j & 1 else slice(K, K + 1) for j in range(self.d))
        masks = pol[sl]
        reach = np.broadcast_to(ctx.reachable, masks.shape)
        for B in np.unique(masks[reach]):
            yield int(B), (masks == B).astype(np.float64)

    def select(self, step, size, probs, free, rng=None):
        raise ValueError("planner: the adaptive optimum reads the revealed values, not only the conditionals; run it "
                         "with mdmtheory.simulate / bridge.sample (they call select_oracle) or the exact engine")

    def select_oracle(self, step, size, probs, free, oracle, x, revealed) -> np.ndarray:
        """Monte Carlo: the policy's sets (n, d) at the samples' states (x, revealed)."""
        if size is not None:
            raise ValueError("plan: the adaptive optimum chooses its own sets; pass plan=None")
        x, revealed = np.asarray(x), np.asarray(revealed, dtype=bool)
        self._check(x.shape[1], self.K)
        idx = tuple(np.where(revealed[:, j], x[:, j], self.K) for j in range(self.d))
        masks = self._policy(step)[idx]
        return ((masks[:, None] >> np.arange(self.d)) & 1).astype(bool)


# ---- the record ------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class AdaptivePlan(Record):
    """The optimal adaptive plan (module docstring).

    Attributes
    ----------
    path_kl : the optimal value, :math:`\\min \\mathbb{E}\\sum_t C(S_t \\mid x_{A_t})` (for
        ``penalty``: the path KL of the optimal policy, without the penalty).
    kl : the exact KL(p ‖ q) of the plan's output law (≤ path_kl; equal for a deterministic
        plan, below it possibly for the two-plan mixture of ``forwards=``).
    forwards : expected number of forwards (= steps: one model call per step) under the
        sampler's own law (the engine's count, as every ``Run`` reports it).
    path_forwards : expected forwards along the data's trajectory, what ``penalty`` and
        ``forwards=`` act on (module docstring, "Which forwards").
    forwards_law : probability of each number of forwards (index = count).
    law : the output law q (a Joint; with ``given``, the joint law of prompt and response).
    actions : ``"any"`` or ``"confidence"``.
    penalty : the λ per forward used (None for ``steps``).
    steps : T for ``steps=T``, else None.
    planner : the plan as a planner (None for a randomized plan or with ``given``).
    planners, weights : the deterministic planners and the probability of each (one planner
        with weight 1, or the two of a randomized ``forwards=`` plan).
    given : the positions revealed from the start.
    """

    path_kl: float
    kl: float
    forwards: float
    forwards_law: np.ndarray
    path_forwards: float
    law: Joint
    actions: str
    penalty: float | None
    steps: int | None
    planner: AdaptivePlanner | None
    planners: tuple = ()
    weights: tuple = ()
    given: tuple = ()

    def prompt_planner(self, values, which: int = 0) -> AdaptivePlanner:
        """The planner of the law conditioned on the prompt ``x_given = values`` (the response
        positions renumbered 0..|R|-1 in increasing order), to run on ``p.condition(given, values)``."""
        n = len(self.planners)
        if isinstance(which, (bool, np.bool_)) or not isinstance(which, numbers.Integral) or not 0 <= which < n:
            raise ValueError(f"which: expected the index of one of the {n} planners (0..{n - 1}), got {which!r:.40}")
        pl = self.planners[which]
        G = list(self.given)
        try:
            vals = [v for v in values]
        except TypeError:
            raise ValueError(f"values: expected {len(G)} prompt values (a sequence of tokens), got {values!r:.40}") from None
        if len(vals) != len(G) or any(isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral)
                                      or not 0 <= v < pl.K for v in vals):
            raise ValueError(f"values: expected {len(G)} prompt tokens in 0..{pl.K - 1}, got {values!r:.40}")
        return _sub_planner(pl, G, [int(v) for v in vals])


def _sub_planner(pl: AdaptivePlanner, G, values) -> AdaptivePlanner:
    d, K = pl.d, pl.K
    R = [j for j in range(d) if j not in G]
    sl = tuple(int(values[G.index(j)]) if j in G else slice(None) for j in range(d))
    pols = []
    for pol in pl.policies:
        sub = pol[sl]
        out = np.zeros(sub.shape, dtype=np.int64)
        for r, j in enumerate(R):
            out |= ((sub >> j) & 1) << r
        pols.append(out)
    return AdaptivePlanner(pols, len(R), K, pl.horizon)


# ---- the solver ------------------------------------------------------------------------
def _check_args(p, steps, forwards, penalty, given, actions):
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
    if p.lost:
        raise ValueError("p: has lost mass; the data law must be normalized")
    if sum(a is not None for a in (steps, forwards, penalty)) != 1:
        raise ValueError("steps: give exactly one of steps=T, forwards=F or penalty=λ")
    if not isinstance(actions, str) or actions not in _ACTIONS:
        raise ValueError(f"actions: expected 'any' or 'confidence', got {actions!r:.40}")
    d, K = p.d, p.K
    try:
        G = sorted({int(g) for g in given})
    except (TypeError, ValueError):
        raise ValueError(f"given: expected positions (integers in 0..{d - 1}), got {given!r:.40}") from None
    if any(isinstance(g, (bool, np.bool_)) or not isinstance(g, numbers.Integral) for g in given) \
            or any(not 0 <= g < d for g in G):
        raise ValueError(f"given: expected positions (integers in 0..{d - 1}), got {given!r:.40}")
    n = d - len(G)
    if n < 1:
        raise ValueError("given: every position is given; nothing is left to decode")
    if (K + 2) ** d > MAX_ADAPTIVE_ENTRIES:
        raise ValueError(
            f"p: d={d}, K={K} needs (K+2)^d = {(K + 2) ** d:.3g} (state, action) sums, above MAX_ADAPTIVE_ENTRIES = "
            f"2^28 (states (K+1)^d, actions 3^d sets per value for 'any', d (K+1)^d for 'confidence'); use a smaller "
            "law (fewer positions or a coarser alphabet) or estimate a given plan's path KL by Monte Carlo "
            "(mt.estimate_kl, mdmtheory.bridge)")
    if steps is not None:
        if isinstance(steps, (bool, np.bool_)) or not isinstance(steps, numbers.Integral) or not 1 <= steps <= n:
            raise ValueError(f"steps: expected an integer in 1..{n} (one step per decoded position at most), got {steps!r:.40}")
    if penalty is not None:
        if isinstance(penalty, (bool, np.bool_)) or not isinstance(penalty, numbers.Real) \
                or not math.isfinite(penalty) or penalty < 0:
            raise ValueError(f"penalty: expected a finite λ >= 0 (nats per forward), got {penalty!r:.40}")
    if forwards is not None:
        if isinstance(forwards, (bool, np.bool_)) or not isinstance(forwards, numbers.Real) \
                or not math.isfinite(forwards) or forwards < 1:
            raise ValueError(f"forwards: expected an expected number of forwards >= 1 (every plan takes one), "
                             f"got {forwards!r:.40}")
    return G


def _root(model: _Model, G, arr: np.ndarray) -> float:
    """Σ_{x_G} p(x_G) arr(G, x_G)."""
    K = model.K
    sl = tuple(slice(0, K) if j in G else K for j in range(model.d))
    w = model.P[sl]
    v = arr[sl]
    return float(np.sum(np.where(w > 0, w * np.where(w > 0, v, 0.0), 0.0)))


def _solve_steps(model: _Model, T: int):
    d, K = model.d, model.K
    V = np.full(model.P.shape, np.inf)
    V[model.full()] = 0.0
    pols = []
    for _ in range(T):
        V, masks = model.step(V, 0.0)
        V[model.full()] = np.inf
        pols.append(masks)
    return V, pols


def _solve_penalty(model: _Model, lam: float):
    V = np.zeros(model.P.shape)
    masks = None
    for _ in range(model.d):
        Vn, masks = model.step(V, lam)
        Vn[model.full()] = 0.0
        same = np.array_equal(Vn, V)
        V = Vn
        if same:
            break
    F = np.zeros(model.P.shape)
    for _ in range(model.d):
        Fn = 1.0 + _after(model, masks, F)
        Fn[model.full()] = 0.0
        if np.array_equal(Fn, F):
            break
        F = Fn
    return V, masks, F


def _runs(p: Joint, planner: AdaptivePlanner, G):
    """(joint law table, lost, forwards law, kl, engine path KL) of one deterministic planner."""
    d, K = p.d, p.K
    if not G:
        r = exact_run(p, None, planner, trajectory=True)
        return r.law.table, r.law.lost, np.asarray(r.step_counts, dtype=np.float64), r.path_kl
    table = np.zeros(p.table.shape)
    lost = 0.0
    fl = np.zeros(d + 2)
    path = 0.0
    pG = p.marginal(G)
    R = [j for j in range(d) if j not in G]
    for v in product(range(K), repeat=len(G)):
        w = float(pG[v])
        if w <= 0:
            continue
        cond = p.condition(G, list(v))
        r = exact_run(cond, None, _sub_planner(planner, G, v), trajectory=True)
        sl = tuple(v[G.index(j)] if j in G else slice(None) for j in range(d))
        table[sl] += w * r.law.table
        lost += w * r.law.lost
        sc = np.asarray(r.step_counts, dtype=np.float64)
        fl[:sc.size] += w * sc
        path += w * r.path_kl
    return table, lost, fl, path


def adaptive_plan(p, *, steps=None, forwards=None, penalty=None, given=(), actions="any") -> AdaptivePlan:
    r"""The optimal adaptive plan of ``p`` (module docstring): the minimum over state-dependent
    plans of the path KL :math:`\mathbb{E}\sum_t C(S_t \mid x_{A_t})`.

    Parameters
    ----------
    p : the law (a :class:`~mdmtheory.Joint`).
    steps : exactly T steps (each reveals at least one position); or
    forwards : expected forwards at most F (Lagrangian by bisection on λ; a mixture of two
        deterministic policies drawn at the start where the budget falls between them); or
    penalty : λ ≥ 0 nats per forward: minimize E[path KL] + λ E[forwards] (stationary).
    given : positions revealed from the start (x_given drawn from p's marginal).
    actions : ``"any"`` (every non-empty set of masked positions) or ``"confidence"`` (the n
        most confident masked positions, n chosen per state; confidence max_v p(v | x_A),
        equal confidences broken by the lowest index).

    Returns an :class:`AdaptivePlan`; its ``planner`` runs through ``mt.sampler_law(p, None,
    planner=...)``, ``mt.simulate``, ``mt.compare`` and ``mdmtheory.bridge.sample``, and the
    engine's path KL of it (``exact_run(p, None, planner, trajectory=True).path_kl``) equals
    ``path_kl``.
    """
    G = _check_args(p, steps, forwards, penalty, given, actions)
    model = _Model(p.table, actions)
    d, K = p.d, p.K
    if steps is not None:
        V, pols = _solve_steps(model, int(steps))
        plans = [(AdaptivePlanner(pols, d, K, int(steps)), 1.0, _root(model, G, V), float(steps))]
        lam = None
    else:
        def solve(lam):
            V, masks, F = _solve_penalty(model, lam)
            f = _root(model, G, F)
            return AdaptivePlanner([masks], d, K, None), 1.0, _root(model, G, V) - lam * f, f

        if penalty is not None:
            lam = float(penalty)
            plans = [solve(lam)]
        else:
            F = float(forwards)
            lo, hi = 0.0, d * math.log(K) + 1.0
            a = solve(lo)
            if a[3] <= F + 1e-12:
                plans, lam = [a], lo
            else:
                b = solve(hi)
                for _ in range(200):
                    mid = 0.5 * (lo + hi)
                    if not lo < mid < hi or hi - lo <= 1e-14 * hi:
                        break
                    m = solve(mid)
                    if m[3] <= F + 1e-12:
                        hi, b = mid, m
                    else:
                        lo, a = mid, m
                lam = hi
                if b[3] >= F - 1e-12 or a[3] - b[3] <= 1e-12:
                    plans = [b]
                else:
                    w = (F - b[3]) / (a[3] - b[3])
                    plans = [(a[0], w, a[2], a[3]), (b[0], 1.0 - w, b[2], b[3])]
    table = np.zeros(p.table.shape)
    lost = 0.0
    fl = np.zeros(d + 2)
    value = pf = 0.0
    for pl, w, val, f in plans:
        t, l_, f_, _ = _runs(p, pl, G)
        table += w * t
        lost += w * l_
        fl[:f_.size] += w * f_
        value += w * val
        pf += w * f
    law = Joint(table, lost=lost)
    last = int(np.max(np.nonzero(fl > 0)[0])) + 1 if np.any(fl > 0) else 1
    fl = fl[:last]
    return AdaptivePlan(
        path_kl=float(value),
        kl=float(_kl(p, law)),
        forwards=float(np.dot(np.arange(fl.size), fl) / fl.sum()),
        forwards_law=fl / fl.sum(),
        path_forwards=float(pf),
        law=law,
        actions=actions,
        penalty=lam,
        steps=None if steps is None else int(steps),
        planner=plans[0][0] if len(plans) == 1 and not G else None,
        planners=tuple(pl[0] for pl in plans),
        weights=tuple(float(pl[1]) for pl in plans),
        given=tuple(G),
    )
