r"""Fast-dLLM Theorem 1 and Fast-dLLM++'s Fréchet certificate, checked exactly on every state.

Sources, both read in full:

* **Fast-dLLM** = Wu et al., *Fast-dLLM: Training-free Acceleration of Diffusion LLM by
  Enabling KV Cache and Parallel Decoding*, arXiv 2505.22618 (the text dated 2025-5-28, from
  the authors' repository ``NVlabs/Fast-dLLM``, ``paper/fast_dllm.pdf`` at commit 24cc59e).
  §3.3 Theorem 1 (eq. 4), proof and Remark 1 in Appendix A.
* **Fast-dLLM++** = Kasa et al., arXiv 2606.02955v2 (from ``Ringo-Star/FastdLLM_plusplus``,
  ``2606.02955v2.pdf`` at commit 29fd034). §4.1: Theorem 4.1 (eqs. 5–6), Corollary 4.2 (eqs.
  7–8), Proposition 4.3 (eq. 9), Corollary 4.4, §4.2 Lemma 4.6 (eq. 11) and Corollary 4.7;
  Appendix A: Lemma A.1 (eq. 12) and the proofs.

**Setting** (both papers). At a state of the sampler — revealed values :math:`x_A` (the papers'
evidence E) — and a candidate set S of n masked positions, :math:`p_S = p(x_S \mid x_A)` is the
joint, :math:`p_j` its marginals, :math:`q_S = \prod_{j \in S} p_j` the product of marginals
(what parallel decoding samples), :math:`c_j = \max_v p_j(v)` the confidences with arg maxes
:math:`x^\star_j` (lowest token on a tie), :math:`c_{(1)} \ge \dots \ge c_{(n)}` sorted.

**Fast-dLLM Theorem 1.** If :math:`p_j(x^\star_j) > 1 - \epsilon` for all j, then
(1) :math:`(n+1)\epsilon \le 1` gives :math:`\arg\max p_S = \arg\max q_S = x^\star` (eq. 4),
and the condition is tight: for :math:`\epsilon > 1/(n+1)` some law has
:math:`\arg\max p_S \ne \arg\max q_S`; (2) for n > 1,
:math:`D_{TV}(p_S, q_S) < \frac{3n-1}{2}\epsilon`,
:math:`\|p_S - q_S\|_r < ((n-1)^r + 2n)^{1/r}\epsilon` and
:math:`\mathrm{KL}(p_S \| q_S) < (n-1)(H_b(\epsilon) + \epsilon \ln(|V|-1))`.
The admissible ε are those above :math:`\epsilon^\star = \max_j (1 - c_j)`; every bound grows
with ε where the proof uses it, so each statement is checked at :math:`\epsilon = \epsilon^\star`
(the limit of admissible ε: the strict inequalities become ≤). Part 1 then applies when
:math:`(n+1)\epsilon^\star < 1`. The theorem asks for "some small ε > 0" without saying how
small; the KL bound is checked where :math:`(n+1)\epsilon^\star \le 1` (**our reading** of
"small": Part 1's regime). Read literally for any ε it fails: the proof's step
:math:`H_b(\epsilon_k') + \epsilon_k' \ln(|V|-1) < H_b(\epsilon) + \epsilon\ln(|V|-1)` needs
:math:`\epsilon \le (|V|-1)/|V|`, and for K = 2, :math:`\epsilon \to 1` makes the bound 0
(:func:`kl_counterexample`). **Derived here**: the TV bound has a sharper form,
:math:`D_{TV}(p_S, q_S) \le \sum_j (1 - c_j) \le n\epsilon^\star` — both :math:`p_S(x^\star)`
(Bonferroni, as in the paper's proof) and :math:`q_S(x^\star) = \prod_j c_j` are at least
:math:`1 - \sum_j (1 - c_j)`, and :math:`D_{TV} = 1 - \sum_z \min(p_S, q_S) \le
1 - \min(p_S(x^\star), q_S(x^\star))`; so the paper's :math:`\frac{3n-1}{2}\epsilon` is off by at
least the factor :math:`(3n-1)/(2n)` wherever :math:`n\epsilon^\star` is attained
(statement ``tv_sum_eps``). The tightness claim fails at n = 1 (then :math:`p_S = q_S`); the
paper's construction (Step 3) needs n ≥ 2 (:func:`fastdllm_counterexample`).

**Fast-dLLM++.** :math:`L_n = \max\{0, \sum_{j\le n} c_{(j)} - (n-1)\}` is a lower bound on
:math:`p_S(x^\star)` (Lemma A.1, the Fréchet–Hoeffding/Bonferroni bound; sharp:
:func:`frechet_extremal`); :math:`U_n = 1 - c_{(n)}` bounds every other tuple; Theorem 4.1:
:math:`L_n > U_n` makes :math:`x^\star` the unique maximizer of :math:`p_S` (eq. 21 gives the gap
:math:`p_S(x^\star) - \max_{z \ne x^\star} p_S(z) \ge L_n - U_n`). Lemma 4.6: with the mode gap
:math:`\Delta_Q = q_S(x^\star) - \max_{z\ne x^\star} q_S(z) > 0`,
:math:`D_{TV}(p_S, q_S) < \Delta_Q/2` makes :math:`x^\star` the unique maximizer of :math:`p_S`;
Corollary 4.7: so does :math:`\mathrm{KL}(p_S\|q_S) < \Delta_Q^2/2`. Corollary 4.2,
Proposition 4.3 and Corollary 4.4 are identities and implications between the Fréchet score
:math:`G_n = L_n - U_n` and the factor core :math:`F_n = (n+1)c_{(n)} - n`
(:func:`frechet_terms`): checked on profiles in the tests.

:func:`statement_checks` enumerates every state :math:`(A, x_A)` with :math:`p(x_A) > 0` and
every candidate set :math:`S \subseteq A^c` (or, given a planner, the set the planner commits
there) and returns one :class:`StatementCheck` per statement: the number of cases where the
hypothesis holds, the violations, and the worst case (largest exact/bound for upper bounds,
bound/exact for lower bounds, smallest mode gap for implications).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from .._estimate import Record
from .._validate import float_array, int_arg, real_arg
from ..laws.joint import Joint, joint_arg
from ._core import DERIVED, LOWER, OUR_READING, PAPER, UPPER
from .registry import _slack as slack, ComparisonRow, register_rows
from ..samplers.adaptive import FactorPlanner, FrechetPlanner
from ..samplers.base import planner_arg

__all__ = [
    "IMPLICATION",
    "StatementCheck",
    "STATEMENTS",
    "statement_checks",
    "fastdllm_theorem1",
    "fdpp_theorem41",
    "frechet_terms",
    "frechet_robust",
    "fastdllm_counterexample",
    "kl_counterexample",
    "frechet_extremal",
]

#: Kind of a statement "hypothesis ⇒ x* is the unique maximizer of p_S" (no bound value).
IMPLICATION = "implication"
#: A hypothesis must hold by this margin to count (the papers' strict inequalities, off rounding).
_MARGIN = 1e-12

_FD = "Fast-dLLM (Wu et al. 2025, arXiv 2505.22618) §3.3 Theorem 1"
_PP = "Fast-dLLM++ (Kasa et al. 2026, arXiv 2606.02955v2)"

#: name -> (kind, source, status, statement)
STATEMENTS = {
    "fastdllm_greedy": (IMPLICATION, f"{_FD}, part 1, eq. (4)", PAPER,
                        "(n+1) eps* < 1  =>  argmax p_S = argmax q_S = x*"),
    "fastdllm_tv": (UPPER, f"{_FD}, part 2 (TV)", PAPER, "TV(p_S, q_S) <= (3n-1)/2 eps*  (n > 1)"),
    "tv_sum_eps": (UPPER, "derived here (fastdllm module docstring): both p_S(x*) and q_S(x*) are >= 1 - sum_j (1 - c_j)",
                   DERIVED, "TV(p_S, q_S) <= sum_j (1 - c_j) <= n eps*  (n > 1)"),
    "fastdllm_l2": (UPPER, f"{_FD}, part 2 (L_p, p = 2)", PAPER, "||p_S - q_S||_2 <= ((n-1)^2 + 2n)^(1/2) eps*  (n > 1)"),
    "fastdllm_kl": (UPPER, f"{_FD}, part 2 (forward KL)", OUR_READING,
                    "KL(p_S||q_S) <= (n-1)(H_b(eps*) + eps* ln(K-1))  (n > 1; 'small eps' read as (n+1) eps* <= 1)"),
    "fdpp_lemma_a1": (LOWER, f"{_PP}, Lemma A.1, eq. (12) (L_n of eq. (5))", PAPER,
                      "p_S(x*) >= L_n = max(0, sum c_(j) - (n-1))"),
    "fdpp_theorem41": (IMPLICATION, f"{_PP}, Theorem 4.1, eqs. (5)-(6)", PAPER,
                       "L_n > U_n = 1 - c_(n)  =>  x* is the unique maximizer of p_S"),
    "fdpp_lemma46": (IMPLICATION, f"{_PP}, Lemma 4.6, eq. (11)", PAPER,
                     "TV(p_S, q_S) < Delta_Q / 2  =>  x* is the unique maximizer of p_S"),
    "fdpp_corollary47": (IMPLICATION, f"{_PP}, Corollary 4.7", PAPER,
                         "KL(p_S||q_S) < Delta_Q^2 / 2  =>  x* is the unique maximizer of p_S"),
}


@dataclass(frozen=True)
class StatementCheck(Record):
    """One statement checked on every (state, candidate set) of a law.

    ``cases``: pairs where the hypothesis holds (by :data:`_MARGIN`); ``violations``: those
    where the conclusion fails (a bound beyond ``1e-12 * max(1, |bound|, |exact|)``, or
    :math:`x^\\star` not the unique maximizer); ``ratio``: the largest exact/bound (upper),
    bound/exact (lower; pairs whose denominator is > 1e-9; NaN, with ``exact`` and ``bound``, when no
    case forms a ratio; +inf when a denominator within 1e-9 of 0
    stands under a numerator that is not, a violated zero bound whose case is kept), or for an implication the smallest mode gap
    :math:`p_S(x^\\star) - \\max_{z \\ne x^\\star} p_S(z)` (> 0 when it holds; for
    ``fastdllm_greedy`` the smaller of that gap and :math:`q_S`'s, both arg maxes being claimed); ``exact`` and
    ``bound`` at that worst case (an implication's bound is 0); ``worst``: the case as
    (revealed positions, their values, candidate set), () when ``cases == 0``.
    """

    name: str
    kind: str
    source: str
    status: str
    statement: str
    cases: int
    violations: int
    ratio: float
    exact: float
    bound: float
    worst: tuple

    @property
    def holds(self) -> bool:
        return self.violations == 0


# -- one batch of conditional joints ---------------------------------------------------------
def _measures(P: np.ndarray, n: int, K: int) -> dict:
    """Everything the statements need, for N conditional joints P of shape (N, K, ..., K)."""
    N = P.shape[0]
    flat = P.reshape(N, -1)
    marg = np.stack([P.sum(axis=tuple(a for a in range(1, n + 1) if a != j + 1)) for j in range(n)], axis=1)  # (N,n,K)
    c = marg.max(axis=2)
    star = marg.argmax(axis=2)
    idx = np.ravel_multi_index(tuple(star.T), (K,) * n) if n else np.zeros(N, np.int64)
    rows = np.arange(N)
    pstar = flat[rows, idx]
    other = flat.copy()
    other[rows, idx] = -np.inf
    pmax_other = other.max(axis=1) if flat.shape[1] > 1 else np.full(N, -np.inf)
    q = marg[:, 0, :]
    for j in range(1, n):
        q = (q[:, :, None] * marg[:, j, None, :]).reshape(N, -1)
    qo = q.copy()
    qo[rows, idx] = -np.inf
    qmax_other = qo.max(axis=1) if q.shape[1] > 1 else np.full(N, -np.inf)
    diff = flat - q
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = np.where(flat > 0, flat * (np.log(np.where(flat > 0, flat, 1.0)) - np.log(np.where(flat > 0, q, 1.0))), 0.0).sum(axis=1)
    eps = 1.0 - c.min(axis=1)
    cs = -np.sort(-c, axis=1)
    L = np.maximum(0.0, cs.sum(axis=1) - (n - 1))
    U = 1.0 - cs[:, -1]
    return dict(n=n, eps=eps, epssum=(1.0 - c).sum(axis=1), gap=pstar - pmax_other, pstar=pstar, tv=0.5 * np.abs(diff).sum(axis=1),
                l2=np.sqrt((diff**2).sum(axis=1)), kl=np.maximum(kl, 0.0), L=L, U=U,
                dq=q[rows, idx] - qmax_other, K=K)


def _hb(e):
    e = np.asarray(e, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((e > 0) & (e < 1), -e * np.log(np.where(e > 0, e, 1)) - (1 - e) * np.log(np.where(e < 1, 1 - e, 1)), 0.0)


def _statement_values(name: str, m: dict):
    """(hypothesis mask, exact, bound) of one statement on a batch."""
    n, eps, K = m["n"], m["eps"], m["K"]
    big = n >= 2
    if name == "fastdllm_greedy":  # both arg maxes are x*: the smaller of the two mode gaps is > 0
        return (n + 1) * eps < 1 - _MARGIN, np.minimum(m["gap"], m["dq"]), np.zeros_like(eps)
    if name == "fastdllm_tv":
        return np.full(eps.shape, big), m["tv"], (3 * n - 1) / 2 * eps
    if name == "tv_sum_eps":
        return np.full(eps.shape, big), m["tv"], m["epssum"]
    if name == "fastdllm_l2":
        return np.full(eps.shape, big), m["l2"], math.sqrt((n - 1) ** 2 + 2 * n) * eps
    if name == "fastdllm_kl":
        bound = (n - 1) * (_hb(eps) + eps * math.log(K - 1)) if K > 1 else np.zeros_like(eps)
        return big & ((n + 1) * eps <= 1 + _MARGIN), m["kl"], bound
    if name == "fdpp_lemma_a1":
        return np.full(eps.shape, big), m["pstar"], m["L"]
    if name == "fdpp_theorem41":
        return m["L"] > m["U"] + _MARGIN, m["gap"], np.zeros_like(eps)
    if name == "fdpp_lemma46":
        return (m["dq"] > _MARGIN) & (m["tv"] < m["dq"] / 2 - _MARGIN), m["gap"], np.zeros_like(eps)
    if name == "fdpp_corollary47":
        return (m["dq"] > _MARGIN) & (m["kl"] < m["dq"] ** 2 / 2 - _MARGIN), m["gap"], np.zeros_like(eps)
    raise ValueError(f"statements: unknown statement {name!r}; known: {sorted(STATEMENTS)}")


class _Acc:
    def __init__(self, name):
        self.name = name
        self.kind = STATEMENTS[name][0]
        self.cases = 0
        self.violations = 0
        self.best = (-math.inf if self.kind != IMPLICATION else math.inf, math.nan, math.nan, ())

    def add(self, hyp, exact, bound, where):
        if not hyp.any():
            return
        e, b = exact[hyp], bound[hyp]
        self.cases += int(hyp.sum())
        tol = 1e-12 * np.maximum(1.0, np.maximum(np.abs(e), np.abs(b)))
        if self.kind == IMPLICATION:
            bad = ~(e > 0)
            score = e
            i = int(np.argmin(score))
            if score[i] < self.best[0]:
                self.best = (float(score[i]), float(e[i]), 0.0, where(np.flatnonzero(hyp)[i]))
        else:
            bad = e > b + tol if self.kind == UPPER else b > e + tol
            num, den = (e, b) if self.kind == UPPER else (b, e)
            ok = den > 1e-9  # rounding-level denominators form no ratio ...
            # ... unless the numerator is not rounding-level: a bound of 0 under a positive exact
            # value is a violation of ratio inf, and its case is kept (never a NaN ratio, issue 38)
            zero_den = ~ok & (num > 1e-9)
            if ok.any() or zero_den.any():
                r = np.where(ok, num / np.where(ok, den, 1.0), np.where(zero_den, np.inf, -np.inf))
                i = int(np.argmax(r))
                if r[i] > self.best[0]:
                    self.best = (float(r[i]), float(e[i]), float(b[i]), where(np.flatnonzero(hyp)[i]))
        self.violations += int(bad.sum())

    def result(self) -> StatementCheck:
        kind, source, status, statement = STATEMENTS[self.name]
        ratio, e, b, w = self.best
        if self.cases == 0 or ratio == -math.inf:  # no case formed a ratio (+inf: a zero bound violated)
            ratio = math.nan
        return StatementCheck(self.name, kind, source, status, statement, self.cases, self.violations, ratio, e, b, w)


def _conditional(table: np.ndarray, A: tuple, S: tuple):
    """Rows x_A with p(x_A) > 0 (their values, (N, |A|)) and p(x_S | x_A), (N, K, ..., K)."""
    d, K = table.ndim, table.shape[0]
    keep = tuple(sorted(A + S))
    marg = table.sum(axis=tuple(i for i in range(d) if i not in keep))
    order = [keep.index(i) for i in A + S]
    marg = np.transpose(marg, order).reshape((K ** len(A),) + (K,) * len(S))
    tot = marg.reshape(marg.shape[0], -1).sum(axis=1)
    live = tot > 0
    allv = np.array(list(itertools.product(range(K), repeat=len(A))), dtype=np.int64) if A else np.zeros((1, 0), np.int64)
    vals = allv[live]
    P = marg[live] / tot[live].reshape((-1,) + (1,) * len(S))
    return vals, P


def _cases(p: Joint, planner=None, max_n=None):
    """(A, x_A values, S, P) batches: every S ⊆ A^c (|S| <= max_n), or the planner's sets."""
    d, K = p.d, p.K
    table = p.table
    for amask in range((1 << d) - 1):
        A = tuple(i for i in range(d) if amask >> i & 1)
        free = tuple(i for i in range(d) if not amask >> i & 1)
        if planner is None:
            top = len(free) if max_n is None else min(max_n, len(free))
            for r in range(1, top + 1):
                for S in itertools.combinations(free, r):
                    vals, P = _conditional(table, A, S)
                    if len(vals):
                        yield A, vals, S, P
            continue
        vals, _ = _conditional(table, A, ())
        if not len(vals):
            continue
        probs = np.zeros((len(vals), d, K))
        for j in free:
            _, Pj = _conditional(table, A, (j,))
            probs[:, j, :] = Pj
        fmask = np.zeros((len(vals), d), dtype=bool)
        fmask[:, list(free)] = True
        ch = planner._choice(0, None, probs, fmask)
        keys = (ch.chosen.astype(np.int64) << np.arange(d)).sum(axis=1)
        for key in np.unique(keys):
            rows = np.unique(ch.rows[keys == key])
            S = tuple(i for i in range(d) if int(key) >> i & 1)
            _, P = _conditional(table, A, S)
            yield A, vals[rows], S, P[rows]


def _check_p(p) -> Joint:
    p = joint_arg(p, what="the data law (the checks enumerate its table)")
    return p


def statement_checks(p, *, planner=None, max_n=None, names=None) -> tuple[StatementCheck, ...]:
    r"""Check the statements (:data:`STATEMENTS`) on every state of p, exactly.

    Parameters
    ----------
    p : :class:`~mdmtheory.Joint`.
    planner : None (every candidate set S of every state) or a planner with ``_choice``
        (:mod:`mdmtheory.samplers.adaptive`, e.g. :class:`~mdmtheory.samplers.FactorPlanner`):
        only the set it commits at each state (all states with :math:`p(x_A) > 0`, reachable or
        not; one set per state under ``ties="lowest"``/``"topk"``, each resolution under
        ``"random"``).
    max_n : largest |S| enumerated (None: all) when ``planner`` is None.
    names : the statements to check (default all, in :data:`STATEMENTS` order).

    The work is :math:`3^d` (state, set) shapes each over its :math:`K^{|A|}` values; d <= 8.
    """
    p = _check_p(p)
    if p.d > 8:
        raise ValueError(f"p: statement_checks enumerates every state and set (3^d shapes); d <= 8, got d={p.d}")
    if max_n is not None:
        max_n = int_arg(max_n, "max_n", 1)
    if names is not None and (isinstance(names, (str, bytes, dict))
                              or not isinstance(names, (list, tuple, set, frozenset))):
        raise ValueError(f"names: expected a list of statement names from {list(STATEMENTS)}, got {names!r:.80}")
    names = tuple(STATEMENTS) if names is None else tuple(names)
    for nm in names:
        if not isinstance(nm, str) or nm not in STATEMENTS:
            raise ValueError(f"names: unknown statement {nm!r:.80}; known: {list(STATEMENTS)}")
    if planner is not None:  # a class, a name, a rule needing a schedule: refused before any work
        planner = planner_arg(planner, needs=("own_sizes",), example="...")
    if planner is not None and not hasattr(planner, "_choice"):
        raise ValueError(f"planner: expected a scored planner of mdmtheory.samplers.adaptive (with _choice), got {planner!r}")
    accs = {nm: _Acc(nm) for nm in names}
    for A, vals, S, P in _cases(p, planner, max_n):
        m = _measures(P, len(S), p.K)

        def where(i, A=A, vals=vals, S=S):
            return (A, tuple(int(v) for v in vals[i]), S)

        for nm in names:
            hyp, exact, bound = _statement_values(nm, m)
            accs[nm].add(np.asarray(hyp, dtype=bool), exact, np.broadcast_to(bound, exact.shape), where)
    return tuple(accs[nm].result() for nm in names)


def fastdllm_theorem1(p, *, planner=None, max_n=None) -> tuple[StatementCheck, ...]:
    """Fast-dLLM Theorem 1 on every state of p: greedy agreement, TV, L2 and KL (module docstring)."""
    return statement_checks(p, planner=planner, max_n=max_n, names=("fastdllm_greedy", "fastdllm_tv", "fastdllm_l2", "fastdllm_kl"))


def fdpp_theorem41(p, *, planner=None, max_n=None) -> tuple[StatementCheck, ...]:
    """Fast-dLLM++ Lemma A.1, Theorem 4.1, Lemma 4.6 and Corollary 4.7 on every state of p."""
    return statement_checks(p, planner=planner, max_n=max_n,
                            names=("fdpp_lemma_a1", "fdpp_theorem41", "fdpp_lemma46", "fdpp_corollary47"))


# -- the confidence-profile statements ---------------------------------------------------------
#: Most positions of :func:`frechet_extremal` (a dense table of 2^n outcomes <= MAX_OUTCOMES).
MAX_EXTREMAL_N = 24


def _confidences(confidences) -> np.ndarray:
    """A non-empty 1-d float64 array of confidences in [0, 1] (the shared check, by name)."""
    c = float_array(confidences, "confidences", what="(m,)")
    if c.ndim != 1 or c.size == 0 or np.any((c < 0) | (c > 1)):
        raise ValueError(f"confidences: expected a non-empty 1-d array of values in [0, 1], got shape {c.shape}"
                         f"{'' if c.ndim != 1 or c.size == 0 else f', values {c.min():g}..{c.max():g}'}")
    return c


def frechet_terms(confidences) -> dict:
    r"""Fast-dLLM++'s quantities for one confidence profile, for every prefix n = 1..m.

    Sorted :math:`c_{(1)} \ge \dots \ge c_{(m)}`: ``L`` (:math:`\max\{0, \sum_{j \le n} c_{(j)} -
    (n-1)\}`, eq. 5), ``U`` (:math:`1 - c_{(n)}`), ``G`` (:math:`L_n - U_n`), ``F`` (the factor
    core :math:`(n+1)c_{(n)} - n`, eq. 30) and ``B`` (the heterogeneity bonus
    :math:`\sum_{j<n}(c_{(j)} - c_{(n)})`, eq. 31), each an (m,) array; Proposition 4.3 says
    G = F + B where :math:`L_n > 0`, with B >= 0 and B = 0 iff the prefix is flat.
    """
    c = _confidences(confidences)
    cs = -np.sort(-c)
    n = np.arange(1, cs.size + 1)
    L = np.maximum(0.0, np.cumsum(cs) - (n - 1))
    U = 1.0 - cs
    F = (n + 1) * cs - n
    B = np.cumsum(cs) - cs - (n - 1) * cs
    return {"c": cs, "L": L, "U": U, "G": L - U, "F": F, "B": np.maximum(B, 0.0)}


def frechet_robust(confidences, eta) -> dict:
    r"""Fast-dLLM++ Appendix C's calibration-robust certificate for one set S (eq. 51).

    Reported confidences :math:`\hat c_i` and allowances :math:`\eta_i \ge 0` (a scalar or one per
    position) give the conservative :math:`\underline c_i = \max\{0, \hat c_i - \eta_i\}`, and
    :math:`L_\eta = \max\{0, \sum_i \underline c_i - (|S|-1)\}`,
    :math:`U_\eta = 1 - \min_i \underline c_i`, :math:`G_\eta = L_\eta - U_\eta`. Proposition C.1:
    if the true confidences are :math:`\ge \underline c_i` and :math:`L_\eta > U_\eta`, the arg max
    tuple is the unique mode; Corollary C.2: for a uniform η with no clipping and
    :math:`L_\eta > 0`, :math:`G_\eta = \hat G - (|S|+1)\eta`. Returns floats ``L``, ``U``, ``G``
    and the (|S|,) array ``lower``.
    """
    c = _confidences(confidences)
    e = float_array(eta, "eta", what="() or (m,)")
    if e.ndim > 1 or (e.ndim == 1 and e.shape != c.shape) or np.any(e < 0):  # a list is one per position (issue 38)
        raise ValueError(f"eta: expected allowances >= 0 (a scalar or one per confidence, {c.size}), got {eta!r:.80}")
    e = np.broadcast_to(e, c.shape)
    lower = np.maximum(0.0, c - e)
    L = max(0.0, float(lower.sum()) - (c.size - 1))
    U = 1.0 - float(lower.min())
    return {"L": L, "U": U, "G": L - U, "lower": lower}


# -- constructions -------------------------------------------------------------------------------
def fastdllm_counterexample(n: int, eps: float) -> Joint:
    r"""The law of Fast-dLLM's Appendix A, Step 3 (tightness of :math:`1/(n+1)`).

    On :math:`\{0,1\}^n`, with :math:`\eta = (\epsilon - \frac1{n+1})/(n+1)`:
    :math:`p(e_j) = \frac1{n+1} + \frac{\eta}{n}` for the n one-hot vectors and
    :math:`p(0,\dots,0) = \frac1{n+1} - \eta`. Every marginal has :math:`p_j(0) = \frac{n}{n+1} -
    \frac{\eta}{n} > 1 - \epsilon`, yet :math:`x^\star = 0` is not a mode of p. Needs
    :math:`1/(n+1) < \epsilon \le 1` and n >= 1; for n = 1 the law is (p(0), p(1)) =
    :math:`(\frac12 - \eta, \frac12 + \eta)`, where p = q and the two arg maxes agree (the
    tightness claim fails at n = 1).
    """
    n = int_arg(n, "n", 1)
    eps = real_arg(eps, "eps")
    if not (1.0 / (n + 1) < eps <= 1.0):
        raise ValueError(f"eps: the construction needs 1/(n+1) < eps <= 1 (n={n}: eps > {1 / (n + 1):.6g}), got {eps}")
    eta = (eps - 1.0 / (n + 1)) / (n + 1)
    t = np.zeros((2,) * n)
    t[(0,) * n] = 1.0 / (n + 1) - eta
    for j in range(n):
        e = [0] * n
        e[j] = 1
        t[tuple(e)] = 1.0 / (n + 1) + eta / n
    return Joint(t / t.sum())


def kl_counterexample(K: int = 2) -> Joint:
    r"""Two copies of one uniform token on :math:`[K]^2`: :math:`X_1 = X_2`.

    Every marginal is uniform (:math:`c_j = 1/K`, :math:`\epsilon^\star = 1 - 1/K`) and
    :math:`\mathrm{KL}(p \| q) = \ln K`, while Fast-dLLM's bound at
    :math:`\epsilon^\star` is :math:`H_b(1 - 1/K) + (1 - 1/K)\ln(K-1) = \ln K` (equality, not the
    strict <) and any admissible larger ε gives less: for K = 2,
    :math:`H_b(\epsilon) \to 0` as :math:`\epsilon \to 1`. The KL part of Theorem 1 read for any
    ε > 0 fails here; with "small ε" ((n+1)ε <= 1) the law is outside the hypothesis.
    """
    K = int_arg(K, "K", 2)
    return Joint(np.eye(K) / K)


def frechet_extremal(confidences) -> Joint:
    r"""A law on :math:`\{0,1\}^n` with :math:`P(X_j = 0) = c_j` whose :math:`P(X = 0)` is
    exactly :math:`L_n = \max\{0, \sum_j c_j - (n-1)\}`: Lemma A.1 is attained (Fast-dLLM++,
    Appendix A, the citation note: the complement events disjoint, or covering).

    Construction: the error events :math:`\{X_j = 1\}` are consecutive arcs of lengths
    :math:`1 - c_j` on a circle of circumference 1, starting at 0; a uniform point of the circle
    gives X. Disjoint arcs when :math:`\sum_j (1 - c_j) \le 1` (then also
    :math:`P(e_j) = 1 - c_j`, so :math:`\max_{z \ne 0} P(z) = U_n` and Theorem 4.1's condition
    :math:`L_n > U_n` cannot be weakened); covering arcs otherwise (:math:`P(X = 0) = 0`).
    """
    c = _confidences(confidences)
    n = c.size
    if n > MAX_EXTREMAL_N:
        raise ValueError(f"confidences: {n} positions; the extremal law is a table of 2^n outcomes, n <= "
                         f"{MAX_EXTREMAL_N} (MAX_EXTREMAL_N)")
    starts = np.concatenate([[0.0], np.cumsum(1.0 - c)[:-1]])
    ends = starts + (1.0 - c)
    cuts = {0.0, 1.0}
    for s, e in zip(starts, ends):
        for x in (s, e):
            cuts.add(x % 1.0 if x != 1.0 else 1.0)
    cuts = np.array(sorted(cuts))
    t = np.zeros((2,) * n)
    for a, b in zip(cuts[:-1], cuts[1:]):
        if b - a <= 0:
            continue
        mid = (a + b) / 2
        z = tuple(int(((mid - s) % 1.0) < (e - s) and e > s) for s, e in zip(starts, ends))
        t[z] += b - a
    return Joint(t / t.sum())


# -- rows of compare (docs/design.md, "How to add a bound") ----------------------------------
#: the rows compare lists for the Factor and Fréchet rules: statement name -> the step quantity it is about
COMPARE_ROWS = {"fastdllm_greedy": "step_mode_gap", "fastdllm_tv": "step_tv", "fastdllm_kl": "step_kl",
                "fdpp_lemma_a1": "step_joint_correct", "fdpp_theorem41": "step_mode_gap"}


def _step_rule(ctx) -> bool:
    """The Factor and Fréchet rules (this module's domain), d <= 8."""
    return isinstance(ctx.sampler, (FactorPlanner, FrechetPlanner)) and ctx.d <= 8


@register_rows("fastdllm", source=__name__, order=410, applies=_step_rule)
def _step_rows(ctx):
    """One row per statement of :data:`COMPARE_ROWS` on the sets the rule commits (every state
    with p(x_A) > 0): the worst case's bound beside its exact value; implications (value 0,
    exact = the smallest mode gap, slack None) hold when every certified set's mode is x*."""
    rows = []
    for c in statement_checks(ctx.p, planner=ctx.sampler, names=tuple(COMPARE_ROWS)):
        if c.cases == 0:
            continue
        s = None if c.kind == IMPLICATION else slack(c.bound, c.exact)
        rows.append(ComparisonRow(c.name, c.kind, COMPARE_ROWS[c.name], float(c.bound), float(c.exact), s,
                                  c.holds, c.source, c.status))
    return rows

