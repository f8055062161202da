r"""Exact parallel sampling by speculation: ASSD and self-speculative masked diffusion, exactly.

A masked diffusion model gives, at a partial state, the one-token conditionals
:math:`p(x_j \mid x_A)` of every masked position; an any-subset (or causal) model also gives the
*sequential* conditionals :math:`p(x_{\sigma(i)} \mid x_A, x_{\sigma(n)}, \dots,
x_{\sigma(i-1)})` along an order :math:`\sigma`. Speculation drafts a window of W positions
from the product of the first (one call), scores the drafts with the second, and keeps a prefix
by speculative (rejection) sampling, so the output is the joint **exactly**.

**One iteration** (state: the first n positions of the order revealed, values a; window
:math:`W' = \min(W, d - n)`; :math:`q_i(y) = p(x_{\sigma(n+i-1)} = y \mid a)`,
:math:`p_i(y \mid y_{<i}) = p(x_{\sigma(n+i-1)} = y \mid a, y_{<i})`):

1. draft :math:`y_1, \dots, y_{W'}` independently, :math:`y_i \sim q_i`;
2. for i = 1, 2, …: accept :math:`y_i` with probability :math:`\min\{1, p_i(y_i \mid
   y_{<i}) / q_i(y_i)\}`; at the first rejection draw the value from the residual
   :math:`(p_i(\cdot \mid y_{<i}) - q_i)_+` normalized, and stop.

Since :math:`q_1 = p_1` the first draft is always accepted, so an iteration reveals at least one
token, and at least two when :math:`W' \ge 2` (the second is accepted or replaced by its residual
draw). The new values :math:`c_1 \dots c_L` have probability

.. math:: \prod_{i<L} \min\{q_i, p_i\}(c_i)\,\big[(p_L - q_L)_+(c_L) + [L = W']\,\min\{q_L, p_L\}(c_L)\big],

which sums over the two cases (stop at L by rejection; all W' accepted) to :math:`\prod_{i \le L}
p_i(c_i)` — the joint. :func:`speculative_run` pushes the mass through this formula (the test
enumerates the drafts and the accept events instead).

**Sources and forwards.**

* ``scheme="assd"``: Guo & Ermon, *Reviving Any-Subset Autoregressive Models with Principled
  Parallel Sampling and Speculative Decoding* (arXiv 2504.20456), ASSD. The algorithm as
  read from the authors' code, ``gabeguo/any-order-speculative-decoding``,
  ``speculative_decoding.py`` (commit 83a444d), function ``speculative_decoding``: a fixed
  order ``sigma``; per iteration one *draft* call (the W' positions each conditioned on the
  revealed ones only: ``calc_parallel_perm_mask``), then one *oracle* call on the drafted
  sequence (the sequential conditionals: ``create_gt_perm_mask``); acceptance
  ``r < min(1, gt/pred)`` (``r_atol = 0``), the residual ``max(gt - pred, 0)`` normalized on
  rejection, then ``break``; no bonus token; when one position is left (``n == seqlen - 1``)
  the draft is committed without the oracle call. Forwards = model calls as ``nfe_count``
  counts them: 2 per iteration, 1 for that last single-token iteration. The paper's claim
  (abstract; the full text could not be read here) is that the number of calls never exceeds
  the number of tokens: true for W ≥ 2 (an iteration of 2 calls reveals ≥ 2 tokens), false for
  W = 1 (2d − 1 calls: the oracle call confirms a token that is always accepted).
* ``scheme="self_speculative"``: Campbell, De Bortoli, Shi & Doucet, *Self-Speculative Masked
  Diffusions* (arXiv 2510.03929). Read from the abstract only (status "our reading"): a
  non-causal trunk gives the factorized draft, a causal final layer verifies the drafts "in a
  single forward pass" with speculative sampling. With the true conditionals the drafted and
  verified laws are those above, so the law is the same as ASSD's; forwards = iterations (one
  pass each), never above d.

Every conditional is the true one, so the law is exactly p (KL = 0 to rounding) whatever the
window and the order; what the schemes differ in is the number of forwards, whose exact law
:func:`speculative_run` gives (``forwards``: the probability of each count).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._estimate import Record
from .._moved import renamed_keywords
from .base import OwnChainSampler, Run
from ..laws.joint import Joint, joint_arg
from ..laws.oracles import as_oracle, inverse_cdf
from .._validate import int_arg, LIMITS, tol_arg, work_bound
from .base import planner_arg
from ..information.divergence import kl
from ..schedules.plans import Schedule
from .engine import exact_run
from .simulate import _check_n_seed

__all__ = ["SpeculativeSampler", "SpeculativeRun", "speculative_run", "SPECULATIVE_SCHEMES", "min_exact_steps",
           "MAX_SPECULATIVE_ENTRIES", "MAX_EXACT_PLANS"]

#: Most Schedules :func:`min_exact_steps` may run exactly (it tries every composition of d).
MAX_EXACT_PLANS = 1 << 14
#: Most float64 entries the exact run's mass arrays may hold, (d+1)(2d+1)·Σ_n K^n (256 MiB):
#: checked before anything is allocated (parity(22) would ask for 32 GiB).
MAX_SPECULATIVE_ENTRIES = 1 << 25

#: The schemes and the source each one's forward count is read from.
SPECULATIVE_SCHEMES = {
    "assd": "Guo & Ermon, arXiv 2504.20456; gabeguo/any-order-speculative-decoding@83a444d",
    "self_speculative": "Campbell et al., arXiv 2510.03929 (abstract)",
}


@dataclass(frozen=True)
class SpeculativeSampler(OwnChainSampler, Record):
    """A speculative sampler (module docstring): ``scheme`` ``"assd"`` or
    ``"self_speculative"`` (how forwards are counted), ``window`` W ≥ 1 the draft length (None:
    every masked position; ASSD's code has ``k = 10``), ``order`` a permutation of
    range(d) (None: left to right).

    ``mt.sampler_law(p, None, sampler)`` and ``mt.simulate(p, None, sampler, n=, seed=)`` run
    it (it carries no plan; ``simulate`` returns forwards per sample)."""

    scheme: str = "assd"
    window: int | None = None
    order: tuple | None = None

    #: it drafts and verifies (its own chain, :class:`~mdmtheory.samplers.base.OwnChainSampler`); it
    #: revises nothing
    revises: ClassVar[bool] = False

    def __post_init__(self):
        if not isinstance(self.scheme, str) or self.scheme not in SPECULATIVE_SCHEMES:
            raise ValueError(f"scheme: expected one of {sorted(SPECULATIVE_SCHEMES)}, got {self.scheme!r}")
        w = self.window
        if w is not None and (isinstance(w, bool) or not isinstance(w, numbers.Integral) or w < 1):
            raise ValueError(f"window: expected an integer >= 1 (the draft length) or None (all masked), got {w!r}")
        if self.order is not None:
            try:
                if isinstance(self.order, (str, bytes, dict)) or not all(
                        isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in self.order):
                    raise TypeError
                o = tuple(int(v) for v in self.order)
            except (TypeError, ValueError):
                raise ValueError(f"order: expected a permutation of range(d), got {self.order!r}") from None
            if sorted(o) != list(range(len(o))):
                raise ValueError(f"order: expected a permutation of range(d), got {self.order!r}")
            object.__setattr__(self, "order", o)
        if w is not None:
            object.__setattr__(self, "window", int(w))

    def _order(self, d: int) -> tuple:
        if self.order is None:
            return tuple(range(d))
        if len(self.order) != d:
            raise ValueError(f"order: has {len(self.order)} positions, the law has d = {d}; pass a permutation "
                             f"of range({d})")
        return self.order

    def _window(self, d: int) -> int:
        return d if self.window is None else min(self.window, d)

    def cost(self, left: int) -> int:
        """Forwards of one iteration that starts with ``left`` >= 1 masked positions (at most
        2**16, the documented limit of d)."""
        left = int_arg(left, "left", 1, LIMITS["d"], " (masked positions at the start of the iteration)")
        if self.scheme == "self_speculative":
            return 1
        return 1 if left == 1 else 2

    @property
    def _own_plan(self):
        return None

    def _run(self, p) -> "SpeculativeRun":
        return speculative_run(p, self)

    # -- Monte Carlo -------------------------------------------------------------------------
    def _simulate(self, p, *, n: int, seed: int):
        r"""n samples from any conditional oracle: (samples (n, d), lost (n,), forwards (n,),
        calls (n,)). ``forwards`` counts as the scheme does (:meth:`cost`); ``calls`` counts the
        oracle's invocations that included the sample: per iteration one draft call and, when
        the window W' >= 2, one call for the W' - 1 sequential conditionals
        :math:`p_i(\cdot \mid y_{<i})`, i = 2..W', stacked into one batch (an any-subset model
        gives them in one pass; a masked model, e.g. one driven by :mod:`mdmtheory.bridge`, takes
        the W' - 1 partial sequences as one batch). :math:`p_1 = q_1` needs no call. So
        ``calls`` = ASSD's ``forwards`` for every window W >= 2 (and d at W = 1, where ASSD's
        code spends 2d - 1)."""
        n, seed = _check_n_seed(n, seed)
        oracle = as_oracle(p)
        d = oracle.d
        order = np.asarray(self._order(d))
        W = self._window(d)
        rng = np.random.default_rng(seed)
        x = np.zeros((n, d), dtype=np.int64)
        done = np.zeros(n, dtype=np.int64)  # revealed prefix length of the order
        forwards = np.zeros(n, dtype=np.int64)
        calls = np.zeros(n, dtype=np.int64)
        lost = np.zeros(n, dtype=bool)
        while True:
            live = np.flatnonzero((done < d) & ~lost)
            if live.size == 0:
                break
            for m in np.unique(done[live]):
                rows = live[done[live] == m]
                r = rows.size
                w = min(W, d - m)
                pos = order[m:m + w]
                rv = np.zeros((r, d), dtype=bool)
                rv[:, order[:m]] = True
                q = oracle.conditionals(x[rows], rv)[:, pos, :]  # (r, w, K): the drafts' laws
                calls[rows] += 1
                if not np.all(np.isfinite(q)) or np.any(q.sum(axis=-1) <= 0):  # pragma: no cover
                    lost[rows] = True
                    continue
                y = inverse_cdf(q, rng.random((r, w)))
                xd = x[rows].copy()
                xd[:, pos] = y
                # the targets p_i(. | y_<i), i = 2..w, from one stacked call (row k, i at k*(w-1) + i-2)
                target = q.copy()
                if w > 1:
                    rvs = np.repeat(rv, w - 1, axis=0)
                    for i in range(1, w):
                        rvs[i - 1::w - 1, pos[:i]] = True
                    out = oracle.conditionals(np.repeat(xd, w - 1, axis=0), rvs).reshape(r, w - 1, d, -1)
                    target[:, 1:, :] = out[:, np.arange(w - 1), pos[1:], :]
                    calls[rows] += 1
                    if not np.all(np.isfinite(target)) or np.any(target.sum(axis=-1) <= 0):  # pragma: no cover
                        lost[rows] = True
                        continue
                going = np.ones(r, dtype=bool)
                reached = np.zeros(r, dtype=np.int64)
                idx = np.arange(r)
                for i in range(w):
                    qi, pi = q[idx, i, y[:, i]], target[idx, i, y[:, i]]
                    with np.errstate(divide="ignore", invalid="ignore"):
                        ratio = np.where(qi > 0, pi / np.where(qi > 0, qi, 1.0), 0.0)
                    accept = rng.random(r) < np.minimum(1.0, ratio)
                    rej = going & ~accept
                    if rej.any():
                        res = np.maximum(target[rej, i, :] - q[rej, i, :], 0.0)
                        res = res / res.sum(axis=-1, keepdims=True)
                        xd[np.flatnonzero(rej), pos[i]] = inverse_cdf(res, rng.random(int(rej.sum())))
                    reached[going] = i + 1
                    going &= accept
                x[rows] = xd
                forwards[rows] += self.cost(d - m)
                done[rows] = m + reached
        return x, lost, forwards, calls


@dataclass(frozen=True, eq=False)
class SpeculativeRun(Run):
    """Exact run of a :class:`SpeculativeSampler`: ``law`` (the output law; = p), ``forwards``
    (the expected model calls as the scheme counts them), ``forwards_law`` (``[c]`` = probability
    of c model calls), ``iterations`` (``[t]`` = probability of t iterations), ``max_forwards``
    (the largest count with positive probability), ``scheme``."""

    forwards_law: np.ndarray
    iterations: np.ndarray
    max_forwards: int
    scheme: str


@renamed_keywords(sampler="planner")
def speculative_run(p: Joint, planner: SpeculativeSampler | None = None) -> SpeculativeRun:
    r"""The exact law and forward count of a speculative sampler on p (module docstring).

    Mass over (iterations, forwards, revealed prefix of the order) is pushed through the
    iteration's outcome law :math:`\prod_{i<L}\min\{q_i,p_i\}\,[(p_L-q_L)_+ + [L=W']\min\{q_L,p_L\}]`;
    work :math:`O(d^3 K^d)` at most.

    >>> import mdmtheory as mt
    >>> run = mt.samplers.speculative_run(mt.families.parity(3))
    >>> round(mt.kl(mt.families.parity(3), run.law), 12), run.max_forwards
    (0.0, 2)
    """
    sampler = planner
    if sampler is None:
        sampler = SpeculativeSampler()
    if not isinstance(sampler, SpeculativeSampler):
        raise ValueError(f"planner: expected a SpeculativeSampler, got {type(sampler).__name__}")
    p = joint_arg(p, what="the data law (the exact run enumerates its K^d states)")
    d, K = p.d, p.K
    work_bound((d + 1) * (2 * d + 1) * sum(K**n for n in range(d + 1)), MAX_SPECULATIVE_ENTRIES, "p",
               f"the exact speculative run's mass entries (d+1)(2d+1)·sum_n K^n (d={d}, K={K}; use the sampler's "
               f"simulate() for larger laws)")
    order = sampler._order(d)
    W = sampler._window(d)
    T = np.transpose(np.asarray(p.table, dtype=np.float64), order)  # axes in sampling order
    P = [T.sum(axis=tuple(range(n, d))) if n < d else T for n in range(d + 1)]  # prefix marginals
    F = 2 * d + 1
    mass = [np.zeros((d + 1, F) + (K,) * n) for n in range(d + 1)]
    mass[0][0, 0] = 1.0

    def cond(num, den):
        den = den[..., None]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)

    # the verifier's sequential conditionals p(x_(m) | x_(<m)), (K,)*m, m = 1..d: each depends on
    # m = n + L only, so it is computed once here, not again for every start n of a window
    targets = [None] + [cond(P[m], P[m - 1]) for m in range(1, d + 1)]
    for n in range(d):
        M = mass[n]
        if not M.any():
            continue
        w = min(W, d - n)
        inc = sampler.cost(d - n)
        acc = np.ones((K,) * n)
        for L in range(1, w + 1):
            axis = n + L - 1
            others = tuple(a for a in range(n, d) if a != axis)
            q = cond(T.sum(axis=others) if others else T, P[n])  # (K,)*n + (K,)
            q = q.reshape((K,) * n + (1,) * (L - 1) + (K,))
            target = targets[n + L]  # (K,)*(n+L)
            end = acc[..., None] * np.maximum(target - q, 0.0)
            acc = acc[..., None] * np.minimum(target, q)
            if L == w:
                end = end + acc
            add = M.reshape(M.shape + (1,) * L) * end  # (iters, forwards, K^(n+L))
            mass[n + L][1:, inc:] += add[:-1, :F - inc]
    final = mass[d]
    table = final.sum(axis=(0, 1))
    inv = np.argsort(order)
    law = Joint(np.transpose(table, inv))
    forwards = final.reshape(d + 1, F, -1).sum(axis=(0, 2))
    iterations = final.reshape(d + 1, F, -1).sum(axis=(1, 2))
    pos = np.flatnonzero(forwards > 1e-15)
    return SpeculativeRun(
        law=law,
        forwards=float(np.dot(np.arange(F), forwards)),
        forwards_law=forwards,
        iterations=iterations,
        max_forwards=int(pos[-1]) if pos.size else 0,
        scheme=sampler.scheme,
    )


# -- how few steps exact sampling needs without speculation ---------------------------------------
def min_exact_steps(p: Joint, planner="random", *, tol: float = 1e-12, max_steps: int | None = None):
    r"""The fewest steps T of a factorized sampler (no remasking, no speculation) whose output
    law is exactly p: the smallest T such that some :class:`~mdmtheory.Schedule` of T steps,
    run with ``planner`` by the exact engine, has :math:`\mathrm{KL}(p \,\|\, q) \le` ``tol``.
    Returns ``(T, schedule)`` (the first such schedule in lexicographic order), or
    ``(None, None)`` when no schedule of at most ``max_steps`` (default d) steps is exact.
    Every composition of d into T parts is tried (:math:`2^{d-1}` in all).

    Used for Jiang, Haghtalab & Chen (arXiv 2512.25014) on parity (docs/theory.md §8): with the
    true conditionals, parity of d ≥ 2 bits needs T = 2 (``Schedule((d-1, 1))``).

    >>> import mdmtheory as mt
    >>> mt.samplers.min_exact_steps(mt.families.parity(4))[0]
    2
    """
    from itertools import combinations

    p = joint_arg(p)
    tol = tol_arg(tol)  # finite: tol=inf would make every plan "exact" (issue 38)
    planner_arg(planner, needs=("schedule",))
    d = p.d
    top = d if max_steps is None else int_arg(max_steps, "max_steps", 1, hint=" (or None: d)")
    work_bound(sum(math.comb(d - 1, T - 1) for T in range(1, min(top, d) + 1)), MAX_EXACT_PLANS, "p",
               f"the number of Schedules of d={d} positions in at most {min(top, d)} steps (exact runs)")
    for T in range(1, min(top, d) + 1):
        for cuts in combinations(range(1, d), T - 1):
            edges = (0, *cuts, d)
            plan = Schedule(tuple(b - a for a, b in zip(edges, edges[1:])))
            if kl(p, exact_run(p, plan, planner).law) <= tol:
                return T, plan
    return None, None
