r"""CL26 = Cai & Li, *Confidence-Based Decoding is Provably Efficient for Diffusion Language
Models*, arXiv 2603.22248v1: the entropy-sum rule, its KL and its expected number of iterations.

**How it was read.** Only the abstract (arXiv listing and third-party pages that copy it) and
machine summaries of the paper could be read here; no section, algorithm box, theorem,
equation or constant. What the abstract says: the rule "continues unmasking tokens within each
iteration until the cumulative entropy exceeds a threshold", and it "achieves
:math:`\varepsilon`-accurate sampling in KL divergence with an expected number of iterations
:math:`\tilde O(H(X_0)/\varepsilon)`", :math:`H(X_0)` the entropy of the data law, "without
requiring prior knowledge or hyperparameter tuning". Everything below is therefore **our
reading** where it is about the paper, and **derived here** where it is proved here.

**The rule (our reading).** At a state :math:`(A, x_A)` sort the masked positions by
increasing conditional entropy :math:`H_j = H(X_j \mid x_A)` (the most confident first: the
abstract calls it a confidence-based rule), :math:`H_{(1)} \le H_{(2)} \le \dots`, and unmask
them one by one until the cumulative entropy :math:`S_n = \sum_{i \le n} H_{(i)}` exceeds the
threshold τ, the token that crosses it included; all of them if :math:`S_m \le \tau`. So the
step commits :math:`n = \min\{n : S_n > \tau\}` (or m) positions, i.e. the largest n with
:math:`S_{n-1} \le \tau`. Since the sort is increasing, :math:`S_{n-1} = S_n - \max_{i\le n}
H_{(i)}`: this is exactly EB-Sampler's rule (Ben-Hamu et al., arXiv 2505.24857), the package's
:class:`~mdmtheory.samplers.EntropyBudgetPlanner` with ``gamma`` = τ (tested against a
brute-force implementation of the sentence above in tests/bounds/test_cl26.py). Being that
planner, the rule is exact in the engine (``exact_run(p, None, planner)``, whose
``step_counts`` is the exact law of the number of iterations), simulated by ``mt.simulate``
and driven by a torch model by ``bridge.sample``.

**Derived here** (for any law; a planner deterministic given :math:`x_A`, or a mixture over
tie resolutions; :math:`T` = number of iterations along the path of a sequence drawn from p,
the planner deciding on the revealed values — the *data path*; proofs in the functions):

* (D1) :math:`\mathrm{KL}(p\|q) \le \mathrm{KL}_{\rm path} \le \tau\, \mathbb E_p[T]`
  (:func:`cl26_kl_budget`). Attained in the limit by the repeated symbol
  (:math:`X_1 = \dots = X_d`, marginal entropy :math:`h = \tau/(d-1)`: one step, KL = TC =
  :math:`(d-1)h = \tau`).
* (D2) :math:`\mathbb E_p[T] \le 1 + (d-1) H(X)/\tau` (:func:`cl26_steps_bound`). Attained in
  the limit by the same law with :math:`h \downarrow \tau/(d-1)` (two steps, H(X) = h).

The paper's :math:`\tilde O` cannot be refuted by finite computation; what can be measured is
the constant it must hide on given laws: with ε the exact KL the rule reaches at threshold τ
(the smallest ε for which the KL part holds), :math:`C_T = (\mathbb E_q[T] - 1)\,\varepsilon /
H(X)` — the number of iterations beyond the first, in units of :math:`H(X)/\varepsilon`,
:math:`\mathbb E_q` under the sampler — and, reading the threshold as ε, :math:`C_{KL} =
\mathrm{KL}/\tau`, which (D1) caps at :math:`\mathbb E_p[T] \le d`. :func:`cl26_point` returns
both for one law and one threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._estimate import Record
from .._validate import int_arg, real_arg
from ..laws.joint import Joint
from ._core import Bound, DERIVED
from .registry import register_rows
from ..information.divergence import kl as _kl
from ..samplers import EntropyBudgetPlanner, exact_run
from ..samplers.adaptive import EntropyBudgetPlanner
from ..samplers.base import planner_arg

__all__ = [
    "CL26Point",
    "cl26_point",
    "data_path_steps",
    "cl26_kl_budget",
    "cl26_steps_bound",
    "cl26_bounds",
]

_SOURCE = ("Cai & Li 2026 (arXiv 2603.22248v1), abstract only (our reading: the entropy-sum rule = "
           "EntropyBudgetPlanner(gamma=threshold))")
#: Largest d of the data-path enumeration (:func:`data_path_steps`): its states are at most (K+1)^d.
MAX_D = 10


def _check_p(p) -> Joint:
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint (the data path is enumerated from its table), got {type(p).__name__}")
    if p.d > MAX_D:
        raise ValueError(f"p: data_path_steps enumerates the revealed states ((K+1)^d); d <= {MAX_D}, got d={p.d}")
    if p.lost:
        raise ValueError("p: has lost mass; the data law must be normalized")
    return p


def _entropy(p: Joint) -> float:
    """H(X) in nats, from the table (numpy; the package's subset-entropy walk would load JAX)."""
    t = p.table[p.table > 0]
    return float(-(t * np.log(t)).sum())


def _check_planner(planner):
    planner = planner_arg(planner, needs=("own_sizes",), example="gamma")  # a class, a Schedule rule: refused
    if not planner.capabilities.ranked:  # the rule reads the entropies it ranks (a rule of samplers.adaptive)
        raise ValueError("planner: expected a self-sizing scored planner of mdmtheory.samplers.adaptive "
                         f"(e.g. EntropyBudgetPlanner(gamma)), got {planner!r:.80}")
    return planner


def _threshold(threshold) -> float:
    t = real_arg(threshold, "threshold")
    if t <= 0:
        raise ValueError(f"threshold: the entropy threshold must be > 0 (nats), got {threshold!r}")
    return t


def data_path_steps(p, planner) -> np.ndarray:
    r"""The law of the number of iterations T along the **data path**: x drawn from p, the
    planner choosing each reveal set from the conditionals :math:`p(\cdot \mid x_A)` at the
    values x has at the revealed positions (``out[t]`` = P_p(T = t), t = 0..d).

    This is the T of the path-KL identity :math:`\mathrm{KL}_{\rm path} = \mathbb E_p
    \sum_{t \le T} \mathrm{TC}(x_{B_t} \mid x_{A_t})` (docs/design.md §3); under the sampler's
    own law q the number of iterations is ``exact_run(p, None, planner).step_counts``. Computed by
    expanding every reached state (A, x_A) with its p-mass p(x_A) times the tie weights,
    one layer per iteration: at most :math:`(K+1)^d` states, d <= :data:`MAX_D`.
    """
    p = _check_p(p)
    planner = _check_planner(planner)
    d, K = p.d, p.K
    table = p.table
    margs: dict = {}

    def marg(cols, rows):
        """p(x_cols = rows[:, cols]) for each row (cols sorted), marginal tables cached."""
        cols = tuple(cols)
        if not cols:
            return np.ones(len(rows))
        if cols not in margs:
            margs[cols] = table.sum(axis=tuple(i for i in range(d) if i not in cols))
        return margs[cols][tuple(rows[:, c] for c in cols)]

    out = np.zeros(d + 1)
    layer = {0: (np.zeros((1, d), np.int64), np.ones(1))}  # revealed mask -> (value rows, p-mass x tie weights)
    for t in range(1, d + 1):
        nxt: dict = {}
        for amask, (vals, w) in layer.items():
            A = [i for i in range(d) if amask >> i & 1]
            free = [i for i in range(d) if not amask >> i & 1]
            pa = marg(A, vals)
            probs = np.zeros((len(vals), d, K))
            for j in free:
                cols = sorted(A + [j])
                for v in range(K):
                    vv = vals.copy()
                    vv[:, j] = v
                    probs[:, j, v] = marg(cols, vv) / pa
            fmask = np.zeros((len(vals), d), dtype=bool)
            fmask[:, free] = True
            ch = planner._choice(t - 1, None, probs, fmask)
            for i in range(len(ch.rows)):
                r = int(ch.rows[i])
                S = [j for j in range(d) if ch.chosen[i, j]]
                wr = w[r] * float(ch.weight[i])
                nmask = amask | sum(1 << j for j in S)
                if nmask == (1 << d) - 1:
                    out[t] += wr
                    continue
                rows = np.repeat(vals[r:r + 1], K ** len(S), axis=0)
                rows[:, S] = np.array(list(np.ndindex(*(K,) * len(S))), dtype=np.int64).reshape(-1, len(S))
                pr = marg(sorted(A + S), rows) / pa[r]
                keep = pr > 0
                item = (rows[keep], wr * pr[keep])
                if nmask in nxt:
                    nxt[nmask].append(item)
                else:
                    nxt[nmask] = [item]
        # merge equal value rows of one mask (tie resolutions reaching the same state)
        layer = {}
        for m, items in nxt.items():
            rows = np.vstack([a for a, _ in items])
            ws = np.concatenate([b for _, b in items])
            cols = [i for i in range(d) if m >> i & 1]
            key = np.ravel_multi_index(tuple(rows[:, cols].T), (K,) * len(cols))
            uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
            acc = np.zeros(len(uniq))
            np.add.at(acc, inv.ravel(), ws)
            layer[m] = (rows[first], acc)
        if not layer:
            break
    return out


def cl26_kl_budget(threshold: float, expected_data_steps: float) -> Bound:
    r"""(D1), derived here: :math:`\mathrm{KL}(p\|q) \le \mathrm{KL}_{\rm path} \le \tau\,
    \mathbb E_p[T]` for the entropy-sum rule at threshold τ.

    Proof. For a planner deterministic given :math:`x_A`, :math:`\mathrm{KL}_{\rm path} =
    \mathbb E_p \sum_t \mathrm{TC}(x_{B_t} \mid x_{A_t})` and, conditioning on :math:`x_{A_t}`
    (which fixes :math:`B_t`), :math:`\mathbb E[\mathrm{TC}(X_B \mid x_A) \mid x_A] = \sum_{j\in B}
    H_j - H(X_B \mid x_A) \le \sum_{j \in B} H_j - \max_{j\in B} H_j = S_{n-1} \le \tau` (a joint
    entropy is at least each marginal's; the rule stops with :math:`S_{n-1} \le \tau`). Summing
    over the steps of the path gives :math:`\tau\,\mathbb E_p[T]`; a random tie resolution is
    drawn the same way under p and q, so the path measure carries it and the bound holds per
    resolution. Equality: X_1 = … = X_d with marginal entropy τ/(d − 1) (one step, KL = TC = τ).
    """
    tau = _threshold(threshold)
    e = real_arg(expected_data_steps, "expected_data_steps")
    if e < 0:
        raise ValueError(f"expected_data_steps: expected a number of steps >= 0, got {expected_data_steps!r}")
    return Bound("cl26_kl_budget", tau * e, "path_kl", "derived here (mdmtheory.bounds.cl26, (D1)); rule of " + _SOURCE,
                 "KL(p||q) <= KL_path <= threshold * E_p[T]", status=DERIVED)


def cl26_steps_bound(threshold: float, entropy: float, d: int) -> Bound:
    r"""(D2), derived here: :math:`\mathbb E_p[T] \le 1 + (d-1) H(X)/\tau` iterations along the
    data path.

    Proof. A step that is not the last commits n <= d − 1 positions with :math:`S_n > \tau`;
    sorted increasingly, :math:`S_n \le n H_{(n)}` and :math:`H(X_B \mid x_A) \ge H_{(n)}`, so the
    step reveals :math:`H(X_{B_t} \mid x_{A_t}) > \tau/n \ge \tau/(d-1)` nats. By the chain rule
    along the path (B_t a function of :math:`x_{A_t}`), :math:`\mathbb E_p \sum_t H(X_{B_t}\mid
    x_{A_t}) = H(X)`, hence :math:`(\mathbb E_p[T] - 1)\,\tau/(d-1) \le H(X)`. Equality in the
    limit: X_1 = … = X_d, marginal entropy :math:`h \downarrow \tau/(d-1)` (d − 1 positions, then
    the last, determined: T = 2, H(X) = h).
    """
    tau = _threshold(threshold)
    h = real_arg(entropy, "entropy")
    if h < 0:
        raise ValueError(f"entropy: expected H(X) >= 0 (nats), got {entropy!r}")
    d = int_arg(d, "d", 1)
    return Bound("cl26_steps_bound", 1.0 + (d - 1) * h / tau, "data_path_steps",
                 "derived here (mdmtheory.bounds.cl26, (D2)); rule of " + _SOURCE,
                 "E_p[T] <= 1 + (d - 1) H(X) / threshold", status=DERIVED)


@dataclass(frozen=True)
class CL26Point(Record):
    r"""The entropy-sum rule at one threshold on one law, exactly (module docstring).

    ``threshold`` τ (nats); ``ties``; ``entropy`` H(X); ``kl`` KL(p‖q) of the output law;
    ``path_kl``; ``expected_steps`` :math:`\mathbb E_q[T]` (the sampler's own number of
    iterations, the paper's; over the runs that complete, ``lost`` the mass of those that stop at
    a prefix of probability 0); ``expected_data_steps`` :math:`\mathbb E_p[T]` (the data path);
    ``kl_budget`` τ·E_p[T] (D1) and ``steps_bound`` 1 + (d − 1)H/τ (D2); ``c_kl`` = KL/τ and
    ``c_steps`` = (E_q[T] − 1)·KL/H(X) (the constants the Õ must hide at ε = τ, resp. at ε = the
    KL reached; nan where H(X) = 0).
    """

    threshold: float
    ties: str
    d: int
    entropy: float
    kl: float
    path_kl: float
    expected_steps: float
    lost: float
    expected_data_steps: float
    kl_budget: float
    steps_bound: float
    c_kl: float
    c_steps: float


def cl26_point(p, threshold, *, ties: str = "lowest") -> CL26Point:
    """The entropy-sum rule (``EntropyBudgetPlanner(threshold, ties=ties)``) on p at one
    threshold: exact KL, path KL, E_q[T], E_p[T], the bounds (D1), (D2) and the constants."""
    p = _check_p(p)
    tau = _threshold(threshold)
    planner = EntropyBudgetPlanner(tau, ties=ties)
    run = exact_run(p, None, planner, trajectory=True)
    kl = float(_kl(p, run.law))
    done = float(run.step_counts.sum())  # < 1 when runs stop at a zero-probability prefix (lost mass)
    eq = float(np.dot(np.arange(run.step_counts.size), run.step_counts)) / done
    ep = float(np.dot(np.arange(p.d + 1), data_path_steps(p, planner)))
    h = _entropy(p)
    return CL26Point(tau, ties, p.d, h, kl, float(run.path_kl), eq, max(0.0, 1.0 - done), ep, tau * ep, 1.0 + (p.d - 1) * h / tau,
                     kl / tau, (eq - 1.0) * kl / h if h > 0 else math.nan)


def cl26_bounds(p, planner) -> tuple[tuple[Bound, float], ...]:
    """(D1) and (D2) for p and an ``EntropyBudgetPlanner``, each with the exact quantity it
    bounds (path KL, E_p[T]): the rows :func:`~mdmtheory.bounds.compare` adds for that planner."""
    p = _check_p(p)
    if not isinstance(planner, EntropyBudgetPlanner):
        raise ValueError(f"planner: expected an EntropyBudgetPlanner (the entropy-sum rule), got {planner!r:.80}")
    tau = float(planner.gamma)
    if tau <= 0:
        return ()
    ep = float(np.dot(np.arange(p.d + 1), data_path_steps(p, planner)))
    path = float(exact_run(p, None, planner, trajectory=True).path_kl)
    return ((cl26_kl_budget(tau, ep), path), (cl26_steps_bound(tau, _entropy(p), p.d), ep))


# -- rows of compare (docs/design.md, "How to add a bound") ----------------------------------
def _entropy_sum_rule(ctx) -> bool:
    """Cai & Li's rule (an EntropyBudgetPlanner, choosing its own sizes): this module's domain."""
    return isinstance(ctx.sampler, EntropyBudgetPlanner) and ctx.plan is None and ctx.d <= MAX_D


@register_rows("cl26", source=__name__, order=450, applies=_entropy_sum_rule)
def _cl26_rows(ctx):
    return [ctx.row(b, exact) for b, exact in cl26_bounds(ctx.p, ctx.sampler)]
