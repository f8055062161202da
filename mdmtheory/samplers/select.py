r"""Sample-then-select: draw a token at every masked position, keep the most confident.

The samplers people run at temperature > 0 — LLaDA's ``low_confidence`` remasking
(ML-GSAI/LLaDA ``generate.py``), Fast-dLLM, diffusers' ``BlockRefinementScheduler`` — do not
choose positions from :math:`x_A` and then draw them. At a step with :math:`k` commits, from
the state :math:`(A, x_A)` with masked set :math:`M`:

1. every :math:`j \in M` draws a candidate :math:`y_j \sim s_j`, independently, where
   :math:`s_j \propto p(\cdot \mid x_A)^{1/\tau}` (temperature :math:`\tau`; :math:`\tau = 0`:
   the arg max, lowest token on ties);
2. its confidence is :math:`c_j = p(y_j \mid x_A)` (``confidence="untempered"``: LLaDA,
   whose Gumbel-max draw is scored by the plain softmax) or :math:`s_j(y_j)`
   (``"tempered"``: diffusers 0.42's ``_sample_from_logits`` returns the probability of the
   token under the tempered distribution it sampled from);
3. the :math:`k` most confident are committed with their candidates, ties to the lowest
   position (confidences equal to :data:`CONFIDENCE_DECIMALS` decimals tie); the rest are
   discarded. With a ``threshold`` :math:`\theta` (diffusers): every
   :math:`j` with :math:`c_j > \theta` is committed if at least :math:`k` qualify, else the
   top :math:`k` — then :math:`k` is a floor and a step can commit more; the sampler stops
   when nothing is masked (fewer forwards than the schedule's steps).

Which positions are committed depends on the drawn values, so committed values are biased
toward likely tokens: the committed value at j does not follow :math:`p(\cdot \mid x_A)`.

**Exact law** (:func:`select_run`). Write :math:`\kappa_j(y) = (c_j(y), -j)` (lexicographic:
ties go to the lowest position). The committed set is B with values :math:`y_B`, |B| = k,
exactly when every position outside B ranks below the weakest member of B,
:math:`w = \min_{j \in B} \kappa_j(y_j)`; the candidates are independent, so

.. math::

    P(B, y_B \mid x_A) = \prod_{j \in B} s_j(y_j)
    \prod_{i \in M \setminus B} \Pr_{Y \sim s_i}\bigl[\kappa_i(Y) < w\bigr],

a sum over :math:`\binom{|M|}{k} K^k` terms instead of the :math:`K^{|M|}` candidate vectors.
With a threshold, add the sets :math:`B` (|B| ≥ k) of all positions above it,
:math:`\prod_{j\in B} s_j(y_j)[c_j > \theta] \prod_{i \notin B} \Pr[c_i(Y) \le \theta]`, and
keep the top-k term only where :math:`c_w \le \theta` (fewer than k above). Derived here;
tests/test_select.py checks it against the enumeration of every candidate vector.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from itertools import combinations, product

import numpy as np

from ..joint import Joint
from ..schedules import Schedule, check_schedule

__all__ = ["SampleThenSelectPlanner", "SelectRun", "select_run", "tempered", "select_commits",
           "SelectionBias", "selection_bias", "MAX_SELECT_WORK"]

#: Largest number of (state, committed set, committed values) terms :func:`select_run` sums.
MAX_SELECT_WORK = 5_000_000

#: Confidences are compared after rounding to this many decimals: values that are equal in
#: exact arithmetic (a symmetric law's 1/2 computed from two different marginals) must tie,
#: not be ordered by rounding noise (1e-16), which would make the law jump.
CONFIDENCE_DECIMALS = 12


def _round(c):
    return np.round(c, CONFIDENCE_DECIMALS)


@dataclass(frozen=True)
class SampleThenSelectPlanner:
    """Sample-then-select (module docstring): ``threshold`` None (exact top-k) or in [0, 1);
    ``temperature`` ≥ 0 (0: greedy arg max); ``confidence`` ``"untempered"`` (LLaDA) or
    ``"tempered"`` (diffusers). Run with a Schedule: step t commits k_t positions (a floor
    with a threshold)."""

    threshold: float | None = None
    temperature: float = 1.0
    confidence: str = "untempered"
    name: str = "sample_then_select"
    needs_schedule: bool = True
    allows_empty: bool = False
    commits_values: bool = True

    def __post_init__(self):
        t = self.threshold
        if t is not None and (isinstance(t, bool) or not isinstance(t, numbers.Real) or not 0 <= t < 1):
            raise ValueError(f"threshold: expected None or a probability in [0, 1) (diffusers commits every "
                             f"position whose confidence exceeds it), got {t!r}")
        T = self.temperature
        if isinstance(T, bool) or not isinstance(T, numbers.Real) or not (0 <= T < math.inf):
            raise ValueError(f"temperature: expected a finite number >= 0 (0: greedy), got {T!r}")
        if self.confidence not in ("untempered", "tempered"):
            raise ValueError(f"confidence: expected 'untempered' (LLaDA) or 'tempered' (diffusers), "
                             f"got {self.confidence!r}")
        object.__setattr__(self, "threshold", None if t is None else float(t))
        object.__setattr__(self, "temperature", float(T))

    def moves(self, ctx):
        """Not a position planner: what it commits depends on the values it draws."""
        raise ValueError("planner: sample-then-select commits the values it drew, so it has no position moves; "
                         "its exact law is mdmtheory.samplers.select_run(p, plan, planner) and its Monte Carlo "
                         "is mdmtheory.samplers.simulate(law, plan, planner)")

    def draw(self, probs: np.ndarray, free: np.ndarray, size, rng) -> tuple[np.ndarray, np.ndarray]:
        """One Monte Carlo step on a batch: (committed (n, d) bool, candidates (n, d))."""
        from ..structured import _inverse_cdf

        K = probs.shape[-1]
        P = np.where(free[..., None], probs, 1.0 / K)  # revealed rows are not drawn (any valid row)
        with np.errstate(invalid="ignore", divide="ignore"):
            S = tempered(P, self.temperature)
        y = np.minimum(_inverse_cdf(S, rng.random(free.shape)), K - 1)
        C = np.take_along_axis(S if self.confidence == "tempered" else P, y[..., None], axis=-1)[..., 0]
        return select_commits(C, free, size, self.threshold), y


def tempered(probs: np.ndarray, temperature: float) -> np.ndarray:
    r"""Rows :math:`p^{1/\tau}` renormalized along the last axis (log space); :math:`\tau = 0`:
    the one-hot of the arg max (lowest index on ties, values equal to
    :data:`CONFIDENCE_DECIMALS` decimals tie); :math:`\tau = 1`: ``probs`` itself."""
    P = np.asarray(probs, dtype=np.float64)
    if temperature == 1.0:
        return P
    if temperature == 0.0:  # ties (equal to CONFIDENCE_DECIMALS decimals) to the lowest token
        out = np.zeros_like(P)
        np.put_along_axis(out, np.argmax(_round(P), axis=-1)[..., None], 1.0, axis=-1)
        return out
    with np.errstate(divide="ignore"):
        L = np.log(P) / temperature
    L = L - np.max(L, axis=-1, keepdims=True)
    E = np.exp(L)
    return E / E.sum(axis=-1, keepdims=True)


def select_commits(conf: np.ndarray, free: np.ndarray, k, threshold: float | None) -> np.ndarray:
    """The committed positions of each row: (n, d) bool, from confidences (n, d), the masked
    positions ``free`` (n, d) and the step count k (int or (n,)); top k by confidence, ties
    to the lowest position; with ``threshold``: every masked position above it when at least
    k are, else the top k."""
    conf = _round(np.asarray(conf, dtype=np.float64))
    free = np.asarray(free, dtype=bool)
    n, d = conf.shape
    k = np.minimum(np.broadcast_to(np.asarray(k), (n,)), free.sum(axis=1))
    key = np.where(free, -conf, np.inf)
    order = np.argsort(key, axis=1, kind="stable")  # most confident first, lowest index on ties
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(d)[None, :].repeat(n, 0), axis=1)
    chosen = free & (rank < k[:, None])
    if threshold is not None:
        above = free & (conf > threshold)
        many = above.sum(axis=1) >= k
        chosen = np.where(many[:, None], above, chosen)
    return chosen


# -- the exact law --------------------------------------------------------------------------
@dataclass(frozen=True)
class SelectRun:
    """Exact law of a sample-then-select run: ``law`` (a Joint; its ``lost`` is the mass of
    runs that committed, in one step, values whose combination p never produces, so that no
    conditional exists after it — as for any factorized step), ``expected_forwards`` (steps
    with something still masked), ``step_commits[t]`` the expected number of positions
    committed at step t."""

    law: Joint
    expected_forwards: float
    step_commits: np.ndarray


def _work(K: int, d: int, sizes, threshold) -> int:
    kmax = max(sizes)
    per = sum(math.comb(d, k) * K**k for k in range(kmax, d + 1)) if threshold is not None else \
        math.comb(d, kmax) * K**kmax
    return (K + 1) ** d * max(per, 1)


class _Conditionals:
    """p(· | x_A) for every masked j, from the marginals of the table (``joint.Marginals``:
    each summed once from a cached parent)."""

    def __init__(self, p: Joint):
        from ..joint import Marginals

        self.p, self.d, self.K = p, p.d, p.K
        self._marginals = Marginals(p.table)

    def marginal(self, cols: tuple) -> np.ndarray:
        """The marginal of the increasing positions ``cols``, axes in that order."""
        if not cols:
            return np.array(1.0)
        m = self._marginals(sum(1 << j for j in cols))
        return m.reshape(tuple(self.K for _ in cols))

    def rows(self, A: tuple, xA: tuple, M: tuple) -> np.ndarray:
        """(|M|, K) conditionals at the state (A, x_A)."""
        base = self.marginal(A)[xA] if A else 1.0
        out = np.empty((len(M), self.K))
        for r, j in enumerate(M):
            cols = tuple(sorted(A + (j,)))
            m = self.marginal(cols)
            pos = cols.index(j)
            idx = list(xA)
            idx.insert(pos, slice(None))
            out[r] = m[tuple(idx)] / base
        return out


def _step_terms(P: np.ndarray, M: tuple, k: int, planner: SampleThenSelectPlanner):
    """Yield (committed positions, committed values, probability) from one state, by the
    product formula of the module docstring. P: (|M|, K) conditionals."""
    S = tempered(P, planner.temperature)
    C = _round(S if planner.confidence == "tempered" else P)
    m, K = P.shape
    k = min(k, m)
    th = planner.threshold
    # Pr_i[κ_i(Y) < (c, -j)] for the candidate values: below c, or equal to c with i > j
    for B in combinations(range(m), k):
        rest = [i for i in range(m) if i not in B]
        for ys in product(range(K), repeat=k):
            w = 1.0
            for b, y in zip(B, ys):
                w *= S[b, y]
            if w == 0.0:
                continue
            cw, jw = min(((C[b, y], -b) for b, y in zip(B, ys)))
            jw = -jw
            if th is not None and cw > th:
                continue  # at least k above the threshold: the threshold branch commits them all
            for i in rest:
                below = (C[i] < cw) | ((C[i] == cw) & (i > jw))
                w *= float(S[i][below].sum())
                if w == 0.0:
                    break
            if w:
                yield tuple(M[b] for b in B), ys, w
    if th is None:
        return
    low = (C <= th)
    p_low = np.array([float(S[i][low[i]].sum()) for i in range(m)])
    for size in range(k, m + 1):
        for B in combinations(range(m), size):
            rest_p = 1.0
            for i in range(m):
                if i not in B:
                    rest_p *= p_low[i]
            if rest_p == 0.0:
                continue
            choices = [[y for y in range(K) if C[b, y] > th and S[b, y] > 0] for b in B]
            for ys in product(*choices):
                w = rest_p
                for b, y in zip(B, ys):
                    w *= S[b, y]
                if w:
                    yield tuple(M[b] for b in B), ys, w


def select_run(p: Joint, plan, planner: SampleThenSelectPlanner | None = None) -> SelectRun:
    """Exact output law of sample-then-select with the Schedule ``plan`` (module docstring).

    States are (revealed set, its values) with their probability, advanced step by step by
    the product formula; a state with nothing masked stops (no forward). Refused past
    :data:`MAX_SELECT_WORK` terms (use :func:`mdmtheory.samplers.simulate`).
    """
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
    planner = SampleThenSelectPlanner() if planner is None else planner
    if not isinstance(planner, SampleThenSelectPlanner):
        raise ValueError(f"planner: expected a SampleThenSelectPlanner, got {type(planner).__name__}")
    sched = check_schedule(plan, p.d, name="plan")
    if not isinstance(sched, Schedule):
        raise ValueError("plan: sample-then-select runs a Schedule (counts per step), not a Grid")
    work = _work(p.K, p.d, sched.sizes, planner.threshold)
    if work > MAX_SELECT_WORK:
        raise ValueError(f"p: the exact sample-then-select law needs ~{work:.2g} terms (d={p.d}, K={p.K}, largest "
                         f"step {max(sched.sizes)}), above {MAX_SELECT_WORK:,}; use Monte Carlo "
                         "(mdmtheory.samplers.simulate with this planner)")
    cond = _Conditionals(p)
    d = p.d
    states: dict[tuple, float] = {((), ()): 1.0}  # (revealed positions increasing, their values) -> prob
    done = np.zeros(p.table.shape)
    forwards, lost = 0.0, 0.0
    commits = np.zeros(len(sched.sizes))
    for t, k in enumerate(sched.sizes):
        nxt: dict[tuple, float] = {}
        for (A, xA), q in states.items():
            M = tuple(j for j in range(d) if j not in A)
            forwards += q
            P = cond.rows(A, xA, M)
            for B, ys, w in _step_terms(P, M, k, planner):
                vals = dict(zip(A, xA))
                vals.update(zip(B, ys))
                A2 = tuple(sorted(vals))
                key = (A2, tuple(vals[j] for j in A2))
                nxt[key] = nxt.get(key, 0.0) + q * w
                commits[t] += q * w * len(B)
        states = {}
        for (A, xA), q in nxt.items():
            if len(A) == d:
                done[xA] += q  # an output, even off p's support (as the exact engine counts it)
            elif cond.marginal(A)[xA] > 0:
                states[(A, xA)] = q
            else:  # independent draws made a prefix p never produces: no conditional, lost
                lost += q
        if not states:
            break
    if states:  # cannot happen: every step commits at least min(k_t, masked) and the k_t sum to d
        raise AssertionError("select_run: masked positions left after the last step")
    return SelectRun(Joint(done, lost=lost), float(forwards), commits)


# -- the bias of the committed values ---------------------------------------------------------
@dataclass(frozen=True)
class SelectionBias:
    """One sample-then-select step from the empty state (or from ``given`` values):
    ``commit_prob[j]`` the probability that j is committed, ``committed[j]`` the law of its
    committed value given that it is (NaN rows where it never is), ``conditional[j]`` the
    true p(x_j | given), and ``tv[j]`` their total variation — the bias."""

    commit_prob: np.ndarray
    committed: np.ndarray
    conditional: np.ndarray
    tv: np.ndarray


def selection_bias(p: Joint, size: int, planner: SampleThenSelectPlanner | None = None) -> SelectionBias:
    """The bias of one step of ``size`` commits from nothing revealed (module docstring)."""
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
    planner = SampleThenSelectPlanner() if planner is None else planner
    if isinstance(size, bool) or not isinstance(size, numbers.Integral) or not 1 <= size <= p.d:
        raise ValueError(f"size: expected an integer in 1..{p.d}, got {size!r}")
    M = tuple(range(p.d))
    P = _Conditionals(p).rows((), (), M)
    got = np.zeros((p.d, p.K))
    for B, ys, w in _step_terms(P, M, int(size), planner):
        for j, y in zip(B, ys):
            got[j, y] += w
    prob = got.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        law = got / prob[:, None]
    tv = 0.5 * np.abs(law - P).sum(axis=1)
    return SelectionBias(prob, law, P, tv)
