r"""IMDM's lower bound on the factorization error of standard MDMs, and its synthetic task, exactly.

Source: Yoo, Kim, Lee & Hong, *Infinite Mask Diffusion for Few-Step Distillation* (IMDM), arXiv
2605.10518v1 (ICML 2026). **What could be read**: the abstract and introduction opening (arXiv
HTML), the project page (ugness.github.io/official_imdm), a third-party summary
(emergentmind.com/papers/2605.10518: the error "is formally lower-bounded by the conditional
mutual information between token pairs simultaneously unmasked", "a lower bound on the
conditional total correlation for any MDM") and the authors' code (``Ugness/IMDM`` at commit
168e9d4: ``dataloader.py``, class ``SyntheticAlign``, one uniform token of a vocabulary of
``vocab_size`` repeated over the sequence; ``configs/data/synthetic-align.yaml``). The paper's
section with the bound, its exact form and IMDM's construction could not be read: the bound below
is **our reading**; the rest is derived or verified here.

**The factorization error** of a step that reveals a set B at a state :math:`(A, x_A)`: a
standard MDM (one deterministic mask state) predicts each position from the same input, so its
step law is a product :math:`\prod_{j \in B} q_j(x_j \mid x_A)`, and

.. math:: \mathrm{KL}\Big(p(x_B \mid x_A) \,\Big\|\, \prod_{j \in B} q_j\Big)
          = \mathrm{TC}(X_B \mid x_A) + \sum_{j \in B} \mathrm{KL}(p_j \,\|\, q_j)
          \ \ge\ \mathrm{TC}(X_B \mid x_A) \ \ge\ \max_{i \ne j \in B} I(X_i; X_j \mid x_A)

(**derived here**: the identity is the chain rule of KL against a product; TC of a set is at
least that of any pair in it). No training or distillation of a product denoiser goes below
:math:`\mathrm{TC}`; the pairwise form is our reading of the paper's bound. Summing the pairs
instead (:math:`\sum_{i<j} I`) is **not** a lower bound: on the synthetic task,
:math:`\mathrm{TC} = (n-1)\log K < \binom n2 \log K` for n >= 3 (statement ``imdm_pairsum``,
which fails there).

**Over a run** (the random planner with a Schedule): the path factorization error of any product
denoiser is at least :math:`\mathbb E \sum_t \mathrm{TC}(X_{B_t} \mid x_{A_t})` — the exact path
KL of the exact-conditional sampler (:func:`mdmtheory.exact_run`, ``path_kl``) — which is at least
:func:`imdm_lower`, the expected sum of the largest pairwise conditional mutual information of each
step's set.

**The synthetic task** (the code's ``SyntheticAlign``): :math:`X_1 = \dots = X_d \sim
\mathrm{Unif}[K]`, the family :func:`mdmtheory.families.repeated`. A schedule whose first step
reveals :math:`k_1` tokens has path KL = output-law KL = :math:`(k_1 - 1)\log K` (once one token is
revealed the rest are determined), and :func:`imdm_lower` = :math:`\log K` when
:math:`k_1 \ge 2`: one step (:math:`k_1 = d`) costs :math:`(d-1)\log K`, while two steps of sizes
(1, d-1) cost 0. **IMDM's construction** (our reading of "a stochastic infinite-state mask",
"partition-and-map"): each mask carries its own continuous latent :math:`u_j`, and the denoiser,
seeing all of them, can return at every position a point mass that is a deterministic function of
the latents; :func:`partition_map` does this with the first latent (the unit interval cut into
consecutive cells of lengths p(x)), so one step reaches p exactly (factorization error 0).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .._validate import float_array
from ..laws.joint import Joint, Marginals, joint_arg
from ._core import Bound, LOWER, OUR_READING, _schedule
from .fastdllm import StatementCheck, _Acc, _conditional
from .registry import random_order_schedule, register_rows

__all__ = ["IMDM_STATEMENTS", "imdm_checks", "imdm_lower", "partition_map"]

_SRC = "IMDM (Yoo et al. 2026, arXiv 2605.10518v1)"

#: name -> (kind, source, status, statement); the exact quantity is TC(X_B | x_A)
IMDM_STATEMENTS = {
    "imdm_pair_lower": (LOWER, f"{_SRC}, the factorization-error lower bound (via a summary; our reading)", OUR_READING,
                        "TC(X_B | x_A) >= max_{i != j in B} I(X_i; X_j | x_A)"),
    "imdm_pairsum": (LOWER, f"{_SRC}, the bound read as a sum over pairs (a reading that fails)", OUR_READING,
                     "TC(X_B | x_A) >= sum_{i < j in B} I(X_i; X_j | x_A)"),
}


class _IAcc(_Acc):
    def __init__(self, name):
        self.name = name
        self.kind = IMDM_STATEMENTS[name][0]
        self.cases = 0
        self.violations = 0
        self.best = (-math.inf, math.nan, math.nan, ())

    def result(self) -> StatementCheck:
        kind, source, status, statement = IMDM_STATEMENTS[self.name]
        ratio, e, b, w = self.best
        if self.cases == 0 or ratio == -math.inf:  # no case formed a ratio (+inf: a zero bound violated)
            ratio = math.nan
        return StatementCheck(self.name, kind, source, status, statement, self.cases, self.violations, ratio, e, b, w)


def _h(P: np.ndarray) -> np.ndarray:
    """Entropies (nats) of the rows of P (N, ...)."""
    flat = P.reshape(P.shape[0], -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(flat > 0, flat * np.log(np.where(flat > 0, flat, 1.0)), 0.0).sum(axis=1)


def _tc_pairs(P: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TC, max pairwise MI and the sum of pairwise MI of joints P (N, K, ..., K)."""
    n = P.ndim - 1
    H1 = [_h(P.sum(axis=tuple(1 + c for c in range(n) if c != a))) for a in range(n)]
    tc = np.maximum(sum(H1) - _h(P), 0.0)
    mis = []
    for a, b in itertools.combinations(range(n), 2):
        M = P.sum(axis=tuple(1 + c for c in range(n) if c not in (a, b))) if n > 2 else P
        mis.append(np.maximum(H1[a] + H1[b] - _h(M), 0.0))
    mis = np.stack(mis, axis=1) if mis else np.zeros((P.shape[0], 1))
    return tc, mis.max(axis=1), mis.sum(axis=1)


def _check_p(p) -> Joint:
    p = joint_arg(p, what="the data law (the checks enumerate its table)")
    if p.d > 8:
        raise ValueError(f"p: the IMDM checks enumerate every state and set (3^d shapes); d <= 8, got d={p.d}")
    return p


def imdm_checks(p, *, names=None) -> tuple[StatementCheck, ...]:
    r"""Check :data:`IMDM_STATEMENTS` on every state :math:`(A, x_A)` with :math:`p(x_A) > 0` and
    every set B of >= 2 masked positions: the exact :math:`\mathrm{TC}(X_B \mid x_A)` (the least
    factorization error of a product denoiser) against each lower bound; ratio = bound/exact (the
    largest, over cases with exact > 1e-9). d <= 8."""
    p = _check_p(p)
    if names is not None and (isinstance(names, (str, bytes, dict))
                              or not isinstance(names, (list, tuple, set, frozenset))):
        raise ValueError(f"names: expected a list of statement names from {list(IMDM_STATEMENTS)}, got {names!r:.80}")
    names = tuple(IMDM_STATEMENTS) if names is None else tuple(names)
    for nm in names:
        if not isinstance(nm, str) or nm not in IMDM_STATEMENTS:
            raise ValueError(f"names: unknown statement {nm!r:.80}; known: {list(IMDM_STATEMENTS)}")
    accs = {nm: _IAcc(nm) for nm in names}
    d = p.d
    for amask in range((1 << d) - 1):
        A = tuple(i for i in range(d) if amask >> i & 1)
        free = tuple(i for i in range(d) if not amask >> i & 1)
        for r in range(2, len(free) + 1):
            for S in itertools.combinations(free, r):
                vals, P = _conditional(p.table, A, S)
                if not len(vals):
                    continue
                tc, mx, sm = _tc_pairs(P)

                def where(i, A=A, vals=vals, S=S):
                    return (A, tuple(int(v) for v in vals[i]), S)

                hyp = np.ones(len(vals), bool)
                if "imdm_pair_lower" in accs:
                    accs["imdm_pair_lower"].add(hyp, tc, mx, where)
                if "imdm_pairsum" in accs:
                    accs["imdm_pairsum"].add(hyp, tc, sm, where)
    return tuple(accs[nm].result() for nm in names)


def _pair_mi(marg, amask: int, pA: np.ndarray, i: int, j: int) -> np.ndarray:
    """I(X_i; X_j | x_A) at every x_A (keepdims over A; 0 where p(x_A) = 0), from the marginals."""
    pij = marg(amask | 1 << i | 1 << j)
    pi = marg(amask | 1 << i)
    pj = marg(amask | 1 << j)
    # in logs: p(x_i, x_j, x_A) > 0 makes each factor > 0, but the products pij·pA and pi·pj
    # underflow to 0 on tables with entries ~1e-300 (0/0: a NaN row in compare, issue 38)
    live = pij > 0

    def lg(x):
        return np.log(np.where(live, x, 1.0))

    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(live, pij * (lg(pij) + lg(pA) - lg(pi) - lg(pj)), 0.0)
        out = terms.sum(axis=(i, j), keepdims=True) / np.where(pA > 0, pA, 1.0)
    return np.maximum(out, 0.0)


def imdm_lower(p, plan) -> Bound:
    r"""Our reading of IMDM's bound for a run of the random planner with a Schedule: the expected
    sum over steps of the largest pairwise conditional mutual information in the step's set,

    .. math:: \sum_t \mathbb E_{A_t, B_t, x_{A_t}} \max_{i \ne j \in B_t} I(X_i; X_j \mid x_{A_t})
              \ \le\ \mathbb E \sum_t \mathrm{TC}(X_{B_t} \mid x_{A_t}) = \text{path KL},

    :math:`A_t` uniform among the subsets of size :math:`k_1 + \dots + k_{t-1}`, :math:`B_t` a
    uniform :math:`k_t`-subset of the rest (the random planner), :math:`x_{A_t} \sim p`. A lower
    bound on the path factorization error of any product denoiser (module docstring); kind
    ``"lower"``, bounds ``"path_kl"``. Exact enumeration, d <= 8.
    """
    p = _check_p(p)
    plan = _schedule(plan, p.d)
    d, total, start = p.d, 0.0, 0
    marg = Marginals(p.table)
    for k in plan.sizes:
        if k >= 2:
            acc, count = 0.0, 0
            for A in itertools.combinations(range(d), start):
                amask = sum(1 << a for a in A)
                pA = marg(amask)
                rest = tuple(i for i in range(d) if i not in A)
                mi = {pair: _pair_mi(marg, amask, pA, *pair) for pair in itertools.combinations(rest, 2)}
                for B in itertools.combinations(rest, k):
                    count += 1
                    mx = np.maximum.reduce([mi[pair] for pair in itertools.combinations(B, 2)])
                    acc += float((pA * mx).sum())
            total += acc / max(count, 1)
        start += k
    return Bound("imdm_pair_lower", total, "path_kl", f"{_SRC}, the factorization-error lower bound (our reading), "
                 "summed over the random planner's steps", "path KL >= sum_t E max_{i != j in B_t} I(X_i; X_j | x_A_t)",
                 ("random planner", "any product denoiser (a standard MDM's step law)"), LOWER, None, OUR_READING)


def partition_map(p, u) -> np.ndarray:
    r"""IMDM's one-step sampler in our reading (module docstring): latents ``u`` (n, m) in [0, 1)
    (m >= 1 per-position latents; only the first is read) to sequences (n, d): the unit interval
    is cut into consecutive cells of lengths p(x), x in lexicographic order, and every position
    returns its token of the cell holding :math:`u_1` — a point mass per position, so the step law
    is the law of the cell, p itself (factorization error 0)."""
    p = joint_arg(p)
    u = float_array(u, "u", ndim=2, what="(n, m) latents in [0, 1)")
    if u.shape[1] < 1 or np.any((u < 0) | (u >= 1)):
        raise ValueError(f"u: expected latents in [0, 1) with at least one column, got shape {u.shape}")
    cdf = np.cumsum(p.table.reshape(-1))
    idx = np.minimum(np.searchsorted(cdf, u[:, 0], side="right"), cdf.size - 1)
    return np.stack(np.unravel_index(idx, p.table.shape), axis=1).astype(np.int64)


# -- rows of compare (docs/design.md, "How to add a bound") ----------------------------------
#: largest table (entries) for which compare lists IMDM's row (its enumeration of states and sets)
COMPARE_MAX_TABLE = 1 << 20


@register_rows("imdm_pair_lower", source=__name__, order=440,
               applies=lambda ctx: random_order_schedule(ctx) and ctx.d <= 8 and ctx.p.table.size <= COMPARE_MAX_TABLE
               and ctx.plan.max_size >= 2)
def _imdm_rows(ctx):
    return [ctx.row(imdm_lower(ctx.p, ctx.plan), ctx.path_kl)]
