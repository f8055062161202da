r"""DEMASK's dependency-bounded greedy selection as a planner (exact, Monte Carlo, torch bridge).

Source: Ringel, Ali & Romano, *Dependency-Guided Parallel Decoding in Discrete Diffusion
Language Models* (DEMASK), arXiv 2604.02560v1. **What could be read**: the abstract (arXiv
HTML opening, and its Markdown copy at fast.hugflare.com) and a summary page quoting the paper's
Limitations section (api.emergentmind.com, "characterize error propagation from dependency
estimation to TV bound"). The body (the selection algorithm, the definition of the dependency
matrix, the assumption and Theorem 1 with its proof) and the authors' code
(``liranringel/demask``) could not be read here. So every detail below is **our reading** of
these sentences:

* "a lightweight dependency predictor ... estimates pairwise conditional influences between
  masked positions"; the summary: the true matrix **D** is "defined by expected
  total-variation influences";
* "a greedy selection algorithm identifies positions with bounded cumulative dependency for
  simultaneous unmasking";
* "Under a sub-additivity assumption, we prove this bounds the total variation distance
  between our parallel sampling and the model's joint" (Theorem 1: TV(P(Y_S|X, Y_U),
  Q(Y_S|X, Y_U)) <= τ with the true D).

**The dependency** (our reading). At a state :math:`(A, x_A)`, for masked :math:`i \ne j`,

.. math:: D_{ij} = \mathbb E_{x_j \sim p(\cdot \mid x_A)}\,
          \mathrm{TV}\big(p(x_i \mid x_A, x_j),\ p(x_i \mid x_A)\big),

the expected change of i's marginal when j is revealed. From exact conditionals this equals
:math:`\mathrm{TV}(p(x_i, x_j \mid x_A),\ p(x_i \mid x_A)\,p(x_j \mid x_A))` (multiply out the
expectation), so it is symmetric. In the exact engine it is computed from the law's table; in
Monte Carlo and in the bridge from the oracle's conditionals at :math:`x_A` and at
:math:`(x_A, x_j = v)` for every masked j and token v (d·K extra oracle calls per step; the
paper's predictor is trained to estimate these influences in one forward pass; we use the
quantity it estimates, not a predictor). From a model the matrix need not be symmetric; the
rule uses :math:`D_{ij}` = influence of j on i.

**The rule** (our reading). Masked positions are ranked by confidence
:math:`c_j = \max_v p(x_j = v \mid x_A)` (highest first; equal confidences within
:data:`~mdmtheory.samplers.ties.TIE_TOL` by lowest index: ``ties="lowest"``). The most
confident position is always committed. Each further position i in rank order with
:math:`c_i \ge` ``min_confidence`` is added when the cumulative dependency stays within the
budget,

.. math:: C + \sum_{j \in S} D_{ij} \le \tau \quad\Rightarrow\quad S \leftarrow S \cup \{i\},\
          C \leftarrow C + \sum_{j \in S} D_{ij},

and skipped otherwise (the scan continues). With symmetric D the committed set's
:math:`C(S) = \sum_{\{i, j\} \subseteq S} D_{ij} \le \tau`. The statements about it are in
:mod:`mdmtheory.bounds.demask`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._estimate import Record
from .._validate import real_arg
from ..laws.joint import Joint
from .adaptive import ranking
from .base import PositionSampler
from .ties import TIE_TOL

__all__ = ["pairwise_dependency", "law_dependencies", "demask_select", "DemaskPlanner"]


def pairwise_dependency(P: np.ndarray) -> np.ndarray:
    r"""Exact :math:`D_{ij}` for a batch of conditional joints of two positions.

    ``P`` (N, K, K): :math:`p(x_i = u, x_j = v \mid x_A)` (rows summing to 1, or all 0 for an
    unreachable state); returns (N,) :math:`\mathrm{TV}(p_{ij}, p_i \otimes p_j)` = the expected
    TV influence of j on i (and of i on j).
    """
    P = np.asarray(P, dtype=np.float64)
    pi = P.sum(axis=2)
    pj = P.sum(axis=1)
    return 0.5 * np.abs(P - pi[:, :, None] * pj[:, None, :]).sum(axis=(1, 2))


def law_dependencies(table: np.ndarray, A: tuple, free: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Conditionals (N, d, K) and D (N, d, d) at every x_A (C order over A's positions), from
    the table; unreachable rows are 0."""
    d, K = table.ndim, table.shape[0]
    N = K ** len(A)

    def cond(S):
        keep = tuple(sorted(A + S))
        marg = table.sum(axis=tuple(i for i in range(d) if i not in keep))
        marg = np.transpose(marg, [keep.index(i) for i in A + S]).reshape((N,) + (K,) * len(S))
        tot = marg.reshape(N, -1).sum(axis=1)
        return np.divide(marg, tot.reshape((-1,) + (1,) * len(S)), out=np.zeros(marg.shape),
                         where=tot.reshape((-1,) + (1,) * len(S)) > 0)

    probs = np.zeros((N, d, K))
    for j in free:
        probs[:, j, :] = cond((j,))
    D = np.zeros((N, d, d))
    for i, j in itertools.combinations(free, 2):
        D[:, i, j] = D[:, j, i] = pairwise_dependency(cond((i, j)))
    return probs, D


def demask_select(probs, D, free, tau: float, min_confidence: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The greedy rule (module docstring) on a batch: (chosen (N, d) bool, C (N,) the committed
    set's cumulative dependency). ``probs`` (N, d, K) one-token conditionals, ``D`` (N, d, d)
    with ``D[n, i, j]`` the influence of j on i, ``free`` (N, d) bool (each row non-empty)."""
    probs = np.asarray(probs, dtype=np.float64)
    D = np.asarray(D, dtype=np.float64)
    free = np.asarray(free, dtype=bool)
    conf = probs.max(axis=-1)
    order = ranking(np.where(free, conf, 0.0), free)
    N, d = free.shape
    rows = np.arange(N)
    chosen = np.zeros((N, d), dtype=bool)
    first = order[:, 0]
    chosen[rows, first] = free[rows, first]
    C = np.zeros(N)
    for r in range(1, d):
        i = order[:, r]
        ok = free[rows, i] & (conf[rows, i] >= min_confidence - TIE_TOL)
        inc = (D[rows, i, :] * chosen).sum(axis=1)
        add = ok & (C + inc <= tau + TIE_TOL)
        chosen[rows[add], i[add]] = True
        C = np.where(add, C + inc, C)
    return chosen, C


@dataclass(frozen=True)
class DemaskPlanner(PositionSampler, Record):
    r"""DEMASK's dependency-bounded greedy selection (our reading; :mod:`mdmtheory.samplers.demask`).

    Parameters
    ----------
    tau : the dependency budget τ >= 0 (τ = 0 still commits the most confident position and
        every further one with zero dependency on the set).
    min_confidence : positions below this confidence are never added (the first one always is);
        default 0 (every masked position is a candidate).
    law : the :class:`~mdmtheory.Joint` the exact engine runs on (the rule needs pairwise
        conditionals, which the engine's step context does not carry; the planner computes
        them from this table and checks its one-token conditionals against the engine's).
        Not needed for Monte Carlo and the bridge, which compute D from the oracle.

    Ties: ``"lowest"`` only (equal confidences by lowest index). Chooses its own step sizes:
    run it with ``plan=None``.
    """

    takes_plan: ClassVar[bool] = False  # it chooses its own sizes only

    tau: float
    min_confidence: float = 0.0
    law: Any = field(default=None, compare=False, repr=False)
    ties: str = "lowest"
    name: ClassVar[str] = "demask"
    needs_schedule: ClassVar[bool] = False
    allows_empty: ClassVar[bool] = False
    #: Monte Carlo calls :meth:`select_oracle` (D needs conditionals at other states)
    needs_oracle: ClassVar[bool] = True

    def __post_init__(self):
        if real_arg(self.tau, "tau") < 0:
            raise ValueError(f"tau: the dependency budget must be >= 0, got {self.tau}")
        c = real_arg(self.min_confidence, "min_confidence")
        if not 0.0 <= c <= 1.0:
            raise ValueError(f"min_confidence: expected a confidence in [0, 1], got {c}")
        if self.law is not None and not isinstance(self.law, Joint):
            raise ValueError(f"law: expected a mdmtheory.Joint (the law the exact engine runs on) or None, "
                             f"got {type(self.law).__name__}")
        if not (isinstance(self.ties, str) and self.ties == "lowest"):
            raise ValueError(f"ties: DemaskPlanner breaks equal confidences by lowest index only; pass ties='lowest', "
                             f"got {self.ties!r:.40}")

    @property
    def deterministic(self) -> bool:
        return True

    # -- exact engine ---------------------------------------------------------------------------
    def moves(self, ctx):
        if ctx.size is not None:
            raise ValueError("plan: DemaskPlanner chooses its own step sizes; pass plan=None")
        p = self.law
        if p is None:
            raise ValueError("law: the exact engine needs DemaskPlanner(tau, law=p) with the law it runs on "
                             "(the rule reads pairwise conditionals)")
        if (p.d, p.K) != (ctx.d, ctx.K):
            raise ValueError(f"law: the planner's law has d={p.d}, K={p.K}; the engine runs d={ctx.d}, K={ctx.K}")
        A = tuple(j for j in range(ctx.d) if ctx.revealed >> j & 1)
        probs, D = law_dependencies(p.table, A, ctx.free)
        j0 = ctx.free[0]
        eng = np.moveaxis(np.broadcast_to(ctx.conditional(j0), ctx.shape[:j0] + (ctx.K,) + ctx.shape[j0 + 1:]),
                          j0, -1).reshape(-1, ctx.K)
        reach = np.broadcast_to(ctx.reachable, ctx.shape).reshape(-1)
        if eng.shape[0] == probs.shape[0] and not np.allclose(eng[reach], probs[reach, j0], atol=1e-9):
            raise ValueError("law: the planner's law is not the one the engine runs on (pass law=p for the same p)")
        free = np.zeros((probs.shape[0], ctx.d), dtype=bool)
        free[:, list(ctx.free)] = True
        chosen, _ = demask_select(probs, D, free, float(self.tau), float(self.min_confidence))
        masks = (chosen.astype(np.int64) << np.arange(ctx.d, dtype=np.int64)).sum(axis=1)
        for B in np.unique(masks):
            yield int(B), (masks == B).astype(np.float64).reshape(ctx.shape)

    # -- Monte Carlo and the bridge -----------------------------------------------------------
    def select(self, step, size, probs, free, rng=None):
        raise ValueError("planner: DemaskPlanner reads pairwise dependencies (conditionals at other states); "
                         "run it with mdmtheory.simulate / bridge.sample (they call select_oracle) or the exact engine")

    def _dependencies(self, probs, free, oracle, x, revealed) -> np.ndarray:
        r"""D (n, d, d) from an oracle: ``D[:, i, j]`` = :math:`\sum_v p(x_j = v \mid x_A)\,
        \mathrm{TV}(p(x_i \mid x_A, x_j = v), p(x_i \mid x_A))` over masked i ≠ j."""
        n, d, K = probs.shape
        D = np.zeros((n, d, d))
        # every (row, j, v) with j masked and p(x_j = v | x_A) > 0, in one oracle call
        rows, js, vs = np.nonzero(free[:, :, None] & (probs > 0))
        if rows.size:
            x2 = np.array(np.asarray(x)[rows], copy=True)
            x2[np.arange(rows.size), js] = vs
            r2 = np.array(np.asarray(revealed)[rows], copy=True)
            r2[np.arange(rows.size), js] = True
            after = np.asarray(oracle.conditionals(x2, r2), dtype=np.float64)
            tv = 0.5 * np.abs(after - probs[rows]).sum(axis=-1)  # (m, d): TV at every position i
            np.add.at(D, (rows[:, None], np.arange(d)[None, :], js[:, None]), probs[rows, js, vs][:, None] * tv)
        both = free[:, :, None] & free[:, None, :] & ~np.eye(d, dtype=bool)[None]
        return np.where(both, D, 0.0)

    def select_oracle(self, step, size, probs, free, oracle, x, revealed) -> np.ndarray:
        """Monte Carlo: the committed positions (n, d) of a batch, D computed from ``oracle``."""
        if size is not None:
            raise ValueError("plan: DemaskPlanner chooses its own step sizes; pass plan=None")
        probs = np.asarray(probs, dtype=np.float64)
        free = np.asarray(free, dtype=bool)
        D = self._dependencies(probs, free, oracle, x, revealed)
        return demask_select(probs, D, free, float(self.tau), float(self.min_confidence))[0]
