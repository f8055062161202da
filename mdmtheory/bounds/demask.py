r"""DEMASK's TV bound under sub-additivity, checked exactly on every state and committed set.

Source: Ringel, Ali & Romano, arXiv 2604.02560v1 (DEMASK). **What could be read**: the abstract
and a summary quoting the Limitations section (see :mod:`mdmtheory.samplers.demask`); the body,
with the algorithm, the assumption and Theorem 1, could not be read here. Every paper statement
below is therefore **our reading**.

**Setting.** At a state :math:`(A, x_A)` with :math:`p(x_A) > 0` and a set S of masked
positions, :math:`p_S = p(x_S \mid x_A)`, :math:`q_S = \prod_{j \in S} p(x_j \mid x_A)` (what
parallel decoding samples), and the pairwise dependency
:math:`D_{ij} = \mathbb E_{x_j} \mathrm{TV}(p(x_i \mid x_A, x_j), p(x_i \mid x_A)) =
\mathrm{TV}(p_{\{i,j\}}, p_i \otimes p_j)` (``samplers.demask.pairwise_dependency``).

Statements (:data:`STATEMENTS`):

* ``demask_assumption`` (our reading of "a sub-additivity assumption"): the influence of a set
  T on one position is at most the sum of the pairwise influences,
  :math:`\mathbb E_{x_T} \mathrm{TV}(p(x_i \mid x_A, x_T), p(x_i \mid x_A)) =
  \mathrm{TV}(p_{T \cup i}, p_T \otimes p_i) \le \sum_{j \in T} D_{ij}` (|T| >= 2; |T| = 1 is
  the definition).
* ``demask_subadditive_tv`` (our reading, the set form the theorem needs):
  :math:`\mathrm{TV}(p_S, q_S) \le C(S) = \sum_{\{i,j\} \subseteq S} D_{ij}` (|S| >= 3; at
  |S| = 2 it is an identity, :math:`\mathrm{TV}(p_{ij}, p_i p_j) = D_{ij}`).
* ``demask_hybrid`` (**derived here**, always true): with S in increasing index order
  :math:`s_1 < \dots < s_n`, :math:`\mathrm{TV}(p_S, q_S) \le \sum_{k \ge 2}
  \mathrm{TV}(p_{s_{\le k}}, p_{s_{<k}} \otimes p_{s_k})` — the triangle inequality through the
  hybrids :math:`p_{s_{\le k}} \otimes \prod_{m > k} p_{s_m}`, each term the expected influence of
  the earlier positions on :math:`s_k`. So ``demask_assumption`` (applied to each term) implies
  ``demask_subadditive_tv``.
* ``demask_theorem1`` (our reading of Theorem 1), on the set the planner commits at each state:
  where the set form of the assumption holds there, :math:`\mathrm{TV}(p_S, q_S) \le \tau`
  (the rule keeps :math:`C(S) \le \tau`).
* ``demask_tv_budget``: the same conclusion with the hypothesis dropped, on every committed set —
  it fails on parity (pairwise independent positions, :math:`D = 0`, yet
  :math:`\mathrm{TV}(p_S, q_S) = 1/2`), which is why the theorem needs its assumption.

Tightness (**derived here**): under its hypothesis the theorem is attained for every n >= 2: for
:math:`p = p_{12} \otimes p_3 \otimes \dots`, :math:`\mathrm{TV}(p_S, q_S) = D_{12} = C(S)`, and
the rule commits S when :math:`D_{12} = \tau`. Without it the ratio TV/C is unbounded (parity).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .._validate import int_arg
from ..laws.joint import Joint, joint_arg
from ..samplers.ties import TIE_TOL
from ..samplers.demask import DemaskPlanner, law_dependencies, demask_select, pairwise_dependency
from ._core import DERIVED, OUR_READING, UPPER
from .fastdllm import StatementCheck, _Acc, _conditional
from .registry import _slack as slack, ComparisonRow, register_rows

__all__ = ["DEMASK_STATEMENTS", "demask_checks", "dependency_matrix"]

_MARGIN = 1e-12
_SRC = "DEMASK (Ringel et al. 2026, arXiv 2604.02560v1)"

#: name -> (kind, source, status, statement)
DEMASK_STATEMENTS = {
    "demask_assumption": (UPPER, f"{_SRC}, the sub-additivity assumption (abstract; our reading)", OUR_READING,
                          "TV(p_{T+i}, p_T x p_i) <= sum_{j in T} D_ij  (|T| >= 2)"),
    "demask_subadditive_tv": (UPPER, f"{_SRC}, the assumption in set form (our reading)", OUR_READING,
                              "TV(p_S, q_S) <= C(S) = sum_{i<j in S} D_ij  (|S| >= 3)"),
    "demask_hybrid": (UPPER, "derived here (bounds/demask.py docstring): triangle inequality through hybrids", DERIVED,
                      "TV(p_S, q_S) <= sum_k TV(p_{s<=k}, p_{s<k} x p_{s_k})"),
    "demask_theorem1": (UPPER, f"{_SRC}, Theorem 1 (via a summary of the paper; our reading)", OUR_READING,
                        "set-form sub-additivity at (x_A, S)  =>  TV(p_S, q_S) <= tau  (S the rule's set)"),
    "demask_tv_budget": (UPPER, f"{_SRC}, Theorem 1 without its assumption", OUR_READING,
                         "TV(p_S, q_S) <= tau on every committed set S"),
}
_PLANNER_ONLY = ("demask_theorem1", "demask_tv_budget")
_ALL_SETS = ("demask_assumption", "demask_subadditive_tv", "demask_hybrid")


class _DAcc(_Acc):
    """fastdllm's accumulator over this module's statements."""

    def __init__(self, name):
        self.name = name
        self.kind = DEMASK_STATEMENTS[name][0]
        self.cases = 0
        self.violations = 0
        self.best = (-math.inf, math.nan, math.nan, ())

    def result(self) -> StatementCheck:
        kind, source, status, statement = DEMASK_STATEMENTS[self.name]
        ratio, e, b, w = self.best
        if self.cases == 0 or ratio == -math.inf:  # no case formed a ratio (+inf: a zero bound violated)
            ratio = math.nan
        return StatementCheck(self.name, kind, source, status, statement, self.cases, self.violations, ratio, e, b, w)


def _tv_split(P: np.ndarray, first: tuple, second: tuple) -> np.ndarray:
    """TV(p_{first+second}, p_first x p_second) for joints P (N, K, ..., K) over the axes given
    (0-based within S; both disjoint, covering the axes they name)."""
    n = P.ndim - 1
    keep = tuple(sorted(first + second))
    M = P.sum(axis=tuple(1 + a for a in range(n) if a not in keep)) if len(keep) < n else P
    pos = {a: i for i, a in enumerate(keep)}
    pa = M.sum(axis=tuple(1 + pos[a] for a in second))
    pb = M.sum(axis=tuple(1 + pos[a] for a in first))
    ea = [slice(None)] + [slice(None) if a in first else None for a in keep]
    eb = [slice(None)] + [slice(None) if a in second else None for a in keep]
    return 0.5 * np.abs(M - pa[tuple(ea)] * pb[tuple(eb)]).reshape(M.shape[0], -1).sum(axis=1)


def _pairs_D(P: np.ndarray) -> np.ndarray:
    """(N, n, n) D within S from the joints P (N, K, ..., K)."""
    N, n = P.shape[0], P.ndim - 1
    D = np.zeros((N, n, n))
    for a, b in itertools.combinations(range(n), 2):
        M = P.sum(axis=tuple(1 + c for c in range(n) if c not in (a, b))) if n > 2 else P
        D[:, a, b] = D[:, b, a] = pairwise_dependency(M)
    return D


def _set_values(P: np.ndarray) -> dict:
    n = P.ndim - 1
    D = _pairs_D(P)
    C = np.triu(D, 1).sum(axis=(1, 2))
    tv = _tv_split(P, tuple(range(n - 1)), (n - 1,)) if n == 2 else None
    if tv is None:  # TV(p_S, prod of marginals)
        N = P.shape[0]
        q = P.sum(axis=tuple(range(2, n + 1)))
        for j in range(1, n):
            mj = P.sum(axis=tuple(1 + c for c in range(n) if c != j))
            q = (q[:, :, None] * mj[:, None, :]).reshape(N, -1)
        tv = 0.5 * np.abs(P.reshape(N, -1) - q).sum(axis=1)
    hybrid = sum(_tv_split(P, tuple(range(k)), (k,)) for k in range(1, n))
    return {"n": n, "D": D, "C": C, "tv": tv, "hybrid": hybrid, "P": P}


def _check_p(p) -> Joint:
    p = joint_arg(p, what="the data law (the checks enumerate its table)")
    if p.d > 8:
        raise ValueError(f"p: the DEMASK checks enumerate every state and set (3^d shapes); d <= 8, got d={p.d}")
    return p


def dependency_matrix(p, revealed=(), values=()) -> np.ndarray:
    r"""DEMASK's exact pairwise dependency :math:`D_{ij}` at one state, a (d, d) array.

    ``revealed``: positions of A (distinct, in 0..d-1), ``values``: their tokens (same length);
    :math:`p(x_A)` must be > 0. Entries with i or j revealed, and the diagonal, are 0.
    """
    p = _check_p(p)
    try:
        A = tuple(int_arg(a, "revealed", 0, p.d - 1) for a in revealed)
        vals = tuple(int_arg(v, "values", 0, p.K - 1) for v in values)
    except TypeError:
        raise ValueError("revealed: expected a sequence of positions and values a sequence of tokens") from None
    if len(set(A)) != len(A):
        raise ValueError(f"revealed: positions must be distinct, got {A}")
    if len(vals) != len(A):
        raise ValueError(f"values: expected {len(A)} tokens (one per revealed position), got {len(vals)}")
    free = tuple(j for j in range(p.d) if j not in A)
    order = sorted(range(len(A)), key=lambda i: A[i])
    As, vs = tuple(A[i] for i in order), tuple(vals[i] for i in order)
    probs, D = law_dependencies(p.table, As, free)
    row = int(np.ravel_multi_index(vs, (p.K,) * len(vs))) if vs else 0
    if not probs[row, free[0]].sum() > 0:
        raise ValueError(f"values: the state x_A = {vs} at A = {As} has probability 0 under p")
    return D[row]


def _planner_sets(p: Joint, planner: DemaskPlanner):
    """(A, x_A values, S, P) for the set the rule commits at every state with p(x_A) > 0."""
    d, table = p.d, p.table
    for amask in range((1 << d) - 1):
        A = tuple(i for i in range(d) if amask >> i & 1)
        free = tuple(i for i in range(d) if not amask >> i & 1)
        vals, _ = _conditional(table, A, ())
        if not len(vals):
            continue
        probs, D = law_dependencies(table, A, free)
        rows = np.ravel_multi_index(tuple(vals.T), (p.K,) * len(A)) if A else np.zeros(len(vals), np.int64)
        fm = np.zeros((len(vals), d), dtype=bool)
        fm[:, list(free)] = True
        chosen, _ = demask_select(probs[rows], D[rows], fm, float(planner.tau), float(planner.min_confidence))
        keys = (chosen.astype(np.int64) << np.arange(d)).sum(axis=1)
        for key in np.unique(keys):
            sel = np.flatnonzero(keys == key)
            S = tuple(i for i in range(d) if int(key) >> i & 1)
            _, P = _conditional(table, A, S)
            yield A, vals[sel], S, P[sel]


def _all_sets(p: Joint, min_n: int):
    d, table = p.d, p.table
    for amask in range((1 << d) - 1):
        A = tuple(i for i in range(d) if amask >> i & 1)
        free = tuple(i for i in range(d) if not amask >> i & 1)
        for r in range(min_n, len(free) + 1):
            for S in itertools.combinations(free, r):
                vals, P = _conditional(table, A, S)
                if len(vals):
                    yield A, vals, S, P


def demask_checks(p, *, planner=None, names=None) -> tuple[StatementCheck, ...]:
    r"""Check :data:`DEMASK_STATEMENTS` on every state of p, exactly (module docstring).

    ``planner``: a :class:`~mdmtheory.samplers.DemaskPlanner` (its τ, min_confidence) for
    ``demask_theorem1`` and ``demask_tv_budget`` (the set it commits at each state with
    :math:`p(x_A) > 0`); the other statements run over every state and every set of masked
    positions (|S| >= 2, >= 3 where the statement needs it). ``names``: a subset (default all
    that apply). Returns one :class:`~mdmtheory.bounds.StatementCheck` per statement; the
    ratio is the largest exact/bound over cases with bound > 1e-9 (a violation with a zero
    bound, as on parity, is counted but forms no ratio). d <= 8.
    """
    p = _check_p(p)
    if planner is not None and not isinstance(planner, DemaskPlanner):
        raise ValueError(f"planner: expected a mdmtheory.samplers.DemaskPlanner or None, got {type(planner).__name__}")
    default = _ALL_SETS + (_PLANNER_ONLY if planner is not None else ())
    if names is not None and (isinstance(names, (str, bytes, dict))
                              or not isinstance(names, (list, tuple, set, frozenset))):
        raise ValueError(f"names: expected a list of statement names from {list(DEMASK_STATEMENTS)}, got {names!r:.80}")
    names = default if names is None else tuple(names)
    for nm in names:
        if not isinstance(nm, str) or nm not in DEMASK_STATEMENTS:
            raise ValueError(f"names: unknown statement {nm!r:.80}; known: {list(DEMASK_STATEMENTS)}")
        if nm in _PLANNER_ONLY and planner is None:
            raise ValueError(f"planner: the statement {nm!r} is about the rule's sets; pass planner=DemaskPlanner(tau)")
    accs = {nm: _DAcc(nm) for nm in names}
    set_names = [nm for nm in names if nm in _ALL_SETS]
    if set_names:
        for A, vals, S, P in _all_sets(p, 2):
            m = _set_values(P)
            n = m["n"]

            def where(i, A=A, vals=vals, S=S):
                return (A, tuple(int(v) for v in vals[i]), S)

            if "demask_hybrid" in accs:
                accs["demask_hybrid"].add(np.ones(len(vals), bool), m["tv"], m["hybrid"], where)
            if n >= 3 and "demask_subadditive_tv" in accs:
                accs["demask_subadditive_tv"].add(np.ones(len(vals), bool), m["tv"], m["C"], where)
            if n >= 3 and "demask_assumption" in accs:
                for a in range(n):
                    rest = tuple(b for b in range(n) if b != a)
                    exact = _tv_split(P, rest, (a,))
                    bound = m["D"][:, a, list(rest)].sum(axis=1)
                    accs["demask_assumption"].add(np.ones(len(vals), bool), exact, bound, where)
    if planner is not None and any(nm in accs for nm in _PLANNER_ONLY):
        tau = float(planner.tau)
        for A, vals, S, P in _planner_sets(p, planner):
            if len(S) < 2:
                tv = np.zeros(len(vals))
                hyp = np.ones(len(vals), bool)
            else:
                m = _set_values(P)
                tv = m["tv"]
                hyp = tv <= m["C"] + _MARGIN * np.maximum(1.0, m["C"])

            def where(i, A=A, vals=vals, S=S):
                return (A, tuple(int(v) for v in vals[i]), S)

            bound = np.full(len(vals), tau + TIE_TOL)  # the rule's own rounding allowance
            if "demask_theorem1" in accs:
                accs["demask_theorem1"].add(hyp, tv, bound, where)
            if "demask_tv_budget" in accs:
                accs["demask_tv_budget"].add(np.ones(len(vals), bool), tv, bound, where)
    return tuple(accs[nm].result() for nm in names)


# -- rows of compare (docs/design.md, "How to add a bound") ----------------------------------
@register_rows("demask", source=__name__, order=430,
               applies=lambda ctx: isinstance(ctx.sampler, DemaskPlanner) and ctx.d <= 8)
def _demask_rows(ctx):
    """Theorem 1 on the sets the rule commits (under its assumption, and without it): the worst
    case's TV beside τ (:func:`demask_checks`)."""
    rows = []
    for c in demask_checks(ctx.p, planner=ctx.sampler, names=("demask_theorem1", "demask_tv_budget")):
        if c.cases:
            rows.append(ComparisonRow(c.name, c.kind, "step_tv", float(c.bound), float(c.exact),
                                      slack(c.bound, c.exact), c.holds, c.source, c.status))
    return rows

