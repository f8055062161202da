r"""Samplers that revise what they revealed: ReMDM remasking and a parallel corrector, exactly.

The state of a revising sampler is no longer monotone: a revealed token can be masked again
or redrawn. The exact law is a Markov chain on partial states :math:`(A, x_A)` — the same
:math:`(K+1)^d` states as the monotone samplers — applied step by step
(:func:`revise_run`); :meth:`simulate` methods draw the same chain by Monte Carlo from any
conditional oracle. Every conditional is the true one, :math:`p(x_j \mid x_A)`, so what is
measured is the sampler's own error.

**ReMDM** (:class:`RemaskingSampler`; Wang et al., arXiv 2503.00307; the rule read from the
authors' ``diffusion.py``, samplers ``remdm-cap`` and ``remdm-rescale``). A grid of revealed
fractions :math:`0 = \alpha_0 < \dots < \alpha_N = 1` (MDLM's :math:`\alpha`; uniform for
the log-linear schedule). At the step from :math:`\alpha_t` to :math:`\alpha_s`, given the
state :math:`(A, x_A)`, simultaneously and independently: every revealed position is masked
again with probability :math:`\sigma`; every masked position is revealed with probability
:math:`(\alpha_s - (1 - \sigma)\alpha_t)/(1 - \alpha_t)` with a value drawn from
:math:`p(\cdot \mid x_A)`. ``schedule="cap"``: :math:`\sigma = \min\{\eta, (1 - \alpha_s)/\alpha_t\}`;
``"rescale"``: :math:`\sigma = \eta \min\{1, (1 - \alpha_s)/\alpha_t\}` (:math:`\alpha_t = 0`:
:math:`\eta` and :math:`\eta`). With :math:`\eta = 0` it is MDLM's ancestral sampler, i.e. the
Bernoulli-subset sampler of ``mt.Grid(alphas)`` (tested against the exact engine).

**Corrector** (:class:`CorrectorSampler`; the predictor–corrector idea of diffusers'
``DiscreteDDIMScheduler``, in this form ours). After each step of the random-order sampler
with the counts of a Schedule, the ``k`` revealed positions whose values are least likely
given the other revealed ones, :math:`p(x_j \mid x_{A \setminus j})` (ties to the lowest
position), are masked and redrawn, independently, from :math:`p(\cdot \mid x_{A \setminus R})`.
One corrector step costs one forward (the model sees the state with R masked).

**Editing** (:class:`EditingSampler`; LLaDA2.1 as diffusers 0.42 runs it:
``BlockRefinementScheduler.step`` with ``editing_threshold`` and the ``LLaDA2Pipeline`` loop).
Every forward draws a candidate at *every* position — masked j from :math:`p(\cdot \mid x_A)`,
committed j from the model's prediction at a visible position, which for the true law we take
to be the leave-one-out conditional :math:`p(\cdot \mid x_{A \setminus j})` (what j should be
given the rest; a model that ignored its own visible token) — all tempered by ``temperature``;
masked positions are committed by sample-then-select (:mod:`mdmtheory.samplers.select`, the
schedule's counts, ``threshold``), and a committed position is *replaced* by its candidate when
they differ and the candidate's (tempered, as diffusers') probability exceeds
``editing_threshold``. After the last mask, editing-only forwards follow while the previous one
edited something, at most ``max_post_steps`` + 1 of them — but the block ends right after
its S-th mask step (``num_inference_steps``), so post-steps happen only when a threshold
committed the last mask earlier (the pipeline's ``check_block_should_continue``; checked by
running diffusers' own pipeline with the exact law as its model).

Forwards: ReMDM runs N forwards; the corrector :math:`T + T'` (T' corrector steps: every
step but the last by default). :func:`revise_run` refuses more than
:data:`MAX_REVISE_WORK` terms. Derived here (the exact chains); tests/test_revise.py checks
them against Monte Carlo and the η = 0 case against the engine.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from itertools import combinations, product

import numpy as np

from ..joint import Joint
from ..schedules import Schedule, check_schedule
from .select import _Conditionals

__all__ = ["RemaskingSampler", "CorrectorSampler", "EditingSampler", "RevisionRun", "revise_run", "MAX_REVISE_WORK"]

#: Largest number of (state, transition) terms :func:`revise_run` sums per step.
MAX_REVISE_WORK = 5_000_000


def _mc_start(law, plan, n, seed):
    """(oracle, d, rng, x, revealed, lost) of a Monte Carlo run: checked, all masked."""
    from ..structured import as_oracle
    from .simulate import _check_n_seed

    n, seed = _check_n_seed(n, seed)
    oracle = as_oracle(law)
    d = oracle.d
    if plan is not None:
        check_schedule(plan, d, name="plan")
    return (oracle, d, np.random.default_rng(seed), np.zeros((n, d), dtype=np.int64), np.zeros((n, d), dtype=bool),
            np.zeros(n, dtype=bool))


@dataclass(frozen=True)
class RemaskingSampler:
    """ReMDM (module docstring): ``alphas`` the revealed fractions 0 = α_0 < … < α_N = 1,
    ``eta`` in [0, 1], ``schedule`` ``"cap"`` or ``"rescale"``."""

    alphas: tuple
    eta: float = 0.0
    schedule: str = "cap"

    def __post_init__(self):
        try:
            a = tuple(float(v) for v in self.alphas)
        except (TypeError, ValueError):
            raise ValueError(f"alphas: expected increasing revealed fractions from 0 to 1, got {self.alphas!r}") from None
        if len(a) < 2 or a[0] != 0.0 or a[-1] != 1.0 or any(not b > c for b, c in zip(a[1:], a)):
            raise ValueError(f"alphas: expected strictly increasing fractions 0 = a_0 < ... < a_N = 1, got {a!r}")
        e = self.eta
        if isinstance(e, bool) or not isinstance(e, numbers.Real) or not 0 <= e <= 1:
            raise ValueError(f"eta: expected a remasking strength in [0, 1], got {e!r}")
        if self.schedule not in ("cap", "rescale"):
            raise ValueError(f"schedule: expected 'cap' or 'rescale' (ReMDM's remdm-cap, remdm-rescale), "
                             f"got {self.schedule!r}")
        object.__setattr__(self, "alphas", a)
        object.__setattr__(self, "eta", float(e))

    @classmethod
    def uniform(cls, steps: int, eta: float = 0.0, schedule: str = "cap") -> "RemaskingSampler":
        """α_i = i / steps (MDLM's log-linear schedule at uniform times)."""
        if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 1:
            raise ValueError(f"steps: expected an integer >= 1, got {steps!r}")
        return cls(tuple(i / steps for i in range(steps + 1)), eta, schedule)

    @property
    def steps(self) -> int:
        return len(self.alphas) - 1

    def rates(self, i: int) -> tuple[float, float]:
        """(σ, unmask probability) of step i (0-based)."""
        at, as_ = self.alphas[i], self.alphas[i + 1]
        room = (1 - as_) / at if at > 0 else math.inf
        sigma = min(self.eta, room) if self.schedule == "cap" else self.eta * min(1.0, room)
        if at == 0:
            sigma = 0.0  # nothing is revealed yet (ReMDM's alpha_t = 0 branch remasks nothing)
        unmask = (as_ - (1 - sigma) * at) / (1 - at)
        return sigma, min(max(unmask, 0.0), 1.0)

    def forwards(self) -> int:
        return self.steps

    # -- Monte Carlo -------------------------------------------------------------------------
    def simulate(self, law, *, n: int, seed: int):
        """n samples from any conditional oracle (a Joint or a structured law): returns
        (samples (n, d), lost (n,)); lost: a state p never produces was reached."""
        from ..structured import _inverse_cdf

        oracle, d, rng, x, rv, lost = _mc_start(law, None, n, seed)
        for i in range(self.steps):
            sigma, beta = self.rates(i)
            rows = np.flatnonzero(~lost)
            reach = (oracle.log_marginal(x[rows], rv[rows]) > -np.inf) | rv[rows].all(axis=1)
            lost[rows[~reach]] = True
            rows = rows[reach]
            xs, r = x[rows], rv[rows]
            probs = oracle.conditionals(xs, r)
            draw = _inverse_cdf(probs, rng.random(xs.shape))
            u = rng.random(xs.shape)
            remask = r & (u < sigma)
            reveal = ~r & (u < beta)
            x[rows] = np.where(reveal, draw, xs)
            rv[rows] = (r & ~remask) | reveal
        if not (lost | rv.all(axis=1)).all():  # pragma: no cover - alpha_N = 1 reveals everything
            raise AssertionError("RemaskingSampler: masked positions after the last step")
        return np.where(rv, x, -1), lost


@dataclass(frozen=True)
class CorrectorSampler:
    """Random order with the counts of ``plan``, and after each of the steps in ``after``
    (default: every step but the last) a corrector step redrawing the ``k`` least likely
    revealed positions (module docstring)."""

    plan: Schedule
    k: int = 1
    after: tuple | None = None

    def __post_init__(self):
        if not isinstance(self.plan, Schedule):
            raise ValueError(f"plan: expected a Schedule, got {type(self.plan).__name__}")
        if isinstance(self.k, bool) or not isinstance(self.k, numbers.Integral) or self.k < 1:
            raise ValueError(f"k: expected the number of positions each corrector step redraws (>= 1), got {self.k!r}")
        after = tuple(range(self.plan.steps - 1)) if self.after is None else tuple(self.after)
        if any(isinstance(t, bool) or not isinstance(t, numbers.Integral) or not 0 <= t < self.plan.steps
               for t in after) or len(set(after)) != len(after):
            raise ValueError(f"after: expected distinct step indices in 0..{self.plan.steps - 1}, got {self.after!r}")
        object.__setattr__(self, "after", tuple(sorted(int(t) for t in after)))

    def forwards(self) -> int:
        return self.plan.steps + len(self.after)

    def simulate(self, law, *, n: int, seed: int):
        """n samples from any conditional oracle: (samples (n, d), lost (n,))."""
        from ..structured import _inverse_cdf, loo_conditionals

        oracle, d, rng, x, rv, lost = _mc_start(law, self.plan, n, seed)

        def live():
            rows = np.flatnonzero(~lost)
            reach = (oracle.log_marginal(x[rows], rv[rows]) > -np.inf) | rv[rows].all(axis=1)
            lost[rows[~reach]] = True
            return rows[reach]

        for t, size in enumerate(self.plan.sizes):
            rows = live()
            xs, r = x[rows], rv[rows]
            keys = np.where(r, np.inf, rng.random(r.shape))
            order = np.argsort(keys, axis=1, kind="stable")[:, :size]
            chosen = np.zeros(r.shape, dtype=bool)
            np.put_along_axis(chosen, order, True, axis=1)
            chosen &= ~r
            draw = _inverse_cdf(oracle.conditionals(xs, r), rng.random(xs.shape))
            x[rows] = np.where(chosen, draw, xs)
            rv[rows] = r | chosen
            if t not in self.after:
                continue
            rows = live()
            xs, r = x[rows], rv[rows]
            own = np.take_along_axis(loo_conditionals(oracle, xs, r), xs[..., None], axis=-1)[..., 0]
            conf = np.where(r, np.round(own, 12), np.inf)
            order = np.argsort(conf, axis=1, kind="stable")[:, :self.k]  # least likely first, lowest index on ties
            redo = np.zeros(r.shape, dtype=bool)
            np.put_along_axis(redo, order, True, axis=1)
            redo &= r
            keep = r & ~redo
            ok = oracle.log_marginal(xs, keep) > -np.inf
            lost[rows[~ok]] = True
            rows, xs, keep, redo = rows[ok], xs[ok], keep[ok], redo[ok]
            draw = _inverse_cdf(oracle.conditionals(xs, keep), rng.random(xs.shape))
            x[rows] = np.where(redo, draw, xs)
        return np.where(rv, x, -1), lost


@dataclass(frozen=True)
class EditingSampler:
    """Sample-then-select with LLaDA2.1 editing (module docstring)."""

    plan: Schedule
    editing_threshold: float = 0.5
    threshold: float | None = None
    temperature: float = 1.0
    max_post_steps: int = 16

    def __post_init__(self):
        from .select import SampleThenSelectPlanner

        if not isinstance(self.plan, Schedule):
            raise ValueError(f"plan: expected a Schedule, got {type(self.plan).__name__}")
        SampleThenSelectPlanner(self.threshold, self.temperature, "tempered")  # the commit rule's own checks
        e = self.editing_threshold
        if isinstance(e, bool) or not isinstance(e, numbers.Real) or not 0 < e < 1:
            raise ValueError(f"editing_threshold: expected a probability in (0, 1) (diffusers edits a committed token "
                             f"whose new candidate is more likely than it), got {e!r}")
        m = self.max_post_steps
        if isinstance(m, bool) or not isinstance(m, numbers.Integral) or m < 0:
            raise ValueError(f"max_post_steps: expected an integer >= 0, got {m!r}")
        object.__setattr__(self, "editing_threshold", float(e))

    def simulate(self, law, *, n: int, seed: int):
        """n samples: (samples (n, d), lost (n,), forwards (n,))."""
        from ..structured import _inverse_cdf, loo_conditionals
        from .select import _round, select_commits, tempered

        oracle, d, rng, x, rv, lost = _mc_start(law, self.plan, n, seed)
        n = x.shape[0]
        forwards = np.zeros(n, dtype=np.int64)
        active = np.ones(n, dtype=bool)
        post = np.zeros(n, dtype=np.int64)
        sizes = list(self.plan.sizes)
        t = 0
        while True:
            masked_rows = ~rv.all(axis=1)
            run = ~lost & active & (masked_rows | (post <= self.max_post_steps))
            if not run.any():
                break
            rows = np.flatnonzero(run)
            reach = (oracle.log_marginal(x[rows], rv[rows]) > -np.inf) | rv[rows].all(axis=1)
            lost[rows[~reach]] = True
            rows = rows[reach]
            if rows.size == 0:
                break
            xs, r = x[rows], rv[rows]
            full = r.all(axis=1)
            post[rows[full]] += 1
            with np.errstate(invalid="ignore", divide="ignore"):
                loo = loo_conditionals(oracle, xs, r)
            # a full sample off p's support can leave a position without a prediction: lost
            bad = (r & ~(np.isfinite(loo).all(axis=-1) & (loo.sum(axis=-1) > 0.5))).any(axis=1)
            if bad.any():
                lost[rows[bad]] = True
                rows, xs, r, full, loo = rows[~bad], xs[~bad], r[~bad], full[~bad], loo[~bad]
                if rows.size == 0:
                    continue
            with np.errstate(invalid="ignore", divide="ignore"):  # full rows off p's support: no masked row
                P = np.where(r[..., None], loo, oracle.conditionals(xs, r))
            S = tempered(P, self.temperature)
            y = np.minimum(_inverse_cdf(S, rng.random(xs.shape)), oracle.K - 1)
            conf = np.take_along_axis(S, y[..., None], axis=-1)[..., 0]
            step = [sizes[min(int(f), len(sizes) - 1)] for f in forwards[rows]]
            commit = select_commits(conf, ~r, np.array(step), self.threshold) & ~full[:, None]
            edit = r & (y != xs) & (_round(conf) > self.editing_threshold)
            x[rows] = np.where(commit | edit, y, xs)
            rv[rows] = r | commit
            forwards[rows] += 1
            # a row stops after its S-th mask step, or after a forward that began with no mask
            # and edited nothing (diffusers' check_block_should_continue)
            stop = (full & ~edit.any(axis=1)) | (~full & (forwards[rows] >= len(sizes)))
            active[rows[stop]] = False
            t += 1
            if t > len(sizes) + self.max_post_steps + 2:  # pragma: no cover - bounded by construction
                break
        return np.where(rv, x, -1), lost, forwards

    def forwards(self) -> int:
        return self.plan.steps + self.max_post_steps + 1  # at most


@dataclass(frozen=True)
class RevisionRun:
    """Exact law of a revising sampler (``law``, with lost mass) and its forwards (the
    expected number for the editing sampler, whose post-steps stop early)."""

    law: Joint
    forwards: float


def _bern_subsets(items: tuple, prob: float):
    """Every subset S of ``items`` with probability prob^|S| (1 − prob)^(n − |S|) (> 0 only)."""
    n = len(items)
    for r in range(n + 1):
        w = prob**r * (1 - prob) ** (n - r)
        if w == 0.0:
            continue
        for S in combinations(items, r):
            yield S, w


def _settle(states: dict, cond: _Conditionals, d: int) -> tuple[dict, float]:
    """Drop (as lost) the states with masked positions whose revealed values p never produces:
    their conditionals do not exist. A full state is kept even off p's support (an output)."""
    live, lost = {}, 0.0
    for (A, xA), q in states.items():
        if len(A) == d or not A or cond.marginal(A)[xA] > 0:
            live[(A, xA)] = q
        else:
            lost += q
    return live, lost


def _add(nxt: dict, vals: dict, q: float) -> None:
    A = tuple(sorted(vals))
    key = (A, tuple(vals[j] for j in A))
    nxt[key] = nxt.get(key, 0.0) + q


def _remdm_step(states, cond, d, sigma, beta):
    nxt: dict = {}
    for (A, xA), q in states.items():
        M = tuple(j for j in range(d) if j not in A)
        P = cond.rows(A, xA, M) if M else None
        base = dict(zip(A, xA))
        for R, wr in _bern_subsets(A, sigma):
            keep = {j: v for j, v in base.items() if j not in R}
            for B, wb in _bern_subsets(M, beta):
                idx = [M.index(j) for j in B]
                for ys in product(*[np.flatnonzero(P[i] > 0) for i in idx]):
                    w = q * wr * wb
                    for i, y in zip(idx, ys):
                        w *= P[i, y]
                    vals = dict(keep)
                    vals.update(zip(B, (int(y) for y in ys)))
                    _add(nxt, vals, w)
    return nxt


def _loo(cond: _Conditionals, A: tuple, xA: tuple, j: int) -> float:
    """p(x_j | x_{A minus j}) at the state's own value."""
    rest = tuple(i for i in A if i != j)
    xr = tuple(v for i, v in zip(A, xA) if i != j)
    row = cond.rows(rest, xr, (j,))[0]
    return float(row[xA[A.index(j)]])


def _corrector_step(states, cond, d, k):
    nxt: dict = {}
    lost = 0.0
    for (A, xA), q in states.items():
        conf = {j: round(_loo(cond, A, xA, j), 12) for j in A}
        R = tuple(sorted(sorted(A, key=lambda j: (conf[j], j))[:k]))
        rest = tuple(j for j in A if j not in R)
        xr = tuple(v for j, v in zip(A, xA) if j not in R)
        if rest and not cond.marginal(rest)[xr] > 0:  # only from an output off p's support
            lost += q
            continue
        P = cond.rows(rest, xr, R)
        base = dict(zip(rest, xr))
        for ys in product(*[np.flatnonzero(P[i] > 0) for i in range(len(R))]):
            w = q
            for i, y in enumerate(ys):
                w *= P[i, y]
            vals = dict(base)
            vals.update(zip(R, (int(y) for y in ys)))
            _add(nxt, vals, w)
    return nxt, lost


def _random_step(states, cond, d, size):
    nxt: dict = {}
    for (A, xA), q in states.items():
        M = tuple(j for j in range(d) if j not in A)
        size_ = min(size, len(M))
        P = cond.rows(A, xA, M)
        wB = 1.0 / math.comb(len(M), size_)
        base = dict(zip(A, xA))
        for B in combinations(range(len(M)), size_):
            for ys in product(*[np.flatnonzero(P[i] > 0) for i in B]):
                w = q * wB
                for i, y in zip(B, ys):
                    w *= P[i, y]
                vals = dict(base)
                vals.update(zip((M[i] for i in B), (int(y) for y in ys)))
                _add(nxt, vals, w)
    return nxt


def revise_run(p: Joint, sampler) -> RevisionRun:
    """Exact output law of a :class:`RemaskingSampler` or :class:`CorrectorSampler` on ``p``."""
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
    d, K = p.d, p.K
    work = (K + 1) ** d * 2**d * K**d
    if work > MAX_REVISE_WORK:
        raise ValueError(f"p: the exact revising chain needs up to ~{work:.2g} terms per step (d={d}, K={K}), above "
                         f"{MAX_REVISE_WORK:,}; use the sampler's simulate()")
    cond = _Conditionals(p)
    states: dict = {((), ()): 1.0}
    lost = 0.0
    if isinstance(sampler, RemaskingSampler):
        for i in range(sampler.steps):
            sigma, beta = sampler.rates(i)
            states, l_ = _settle(_remdm_step(states, cond, d, sigma, beta), cond, d)
            lost += l_
    elif isinstance(sampler, CorrectorSampler):
        check_schedule(sampler.plan, d, name="plan")
        for t, size in enumerate(sampler.plan.sizes):
            states, l_ = _settle(_random_step(states, cond, d, size), cond, d)
            lost += l_
            if t in sampler.after:
                nxt, l1 = _corrector_step(states, cond, d, sampler.k)
                states, l2 = _settle(nxt, cond, d)
                lost += l1 + l2
    elif isinstance(sampler, EditingSampler):
        check_schedule(sampler.plan, d, name="plan")
        return _editing_run(p, sampler, cond)
    else:
        raise ValueError(f"sampler: expected a RemaskingSampler, CorrectorSampler or EditingSampler, "
                         f"got {type(sampler).__name__}")
    out = np.zeros(p.table.shape)
    for (A, xA), q in states.items():
        if len(A) != d:  # pragma: no cover - both samplers end with everything revealed
            raise AssertionError("revise_run: masked positions after the last step")
        out[xA] += q
    return RevisionRun(Joint(out, lost=lost), sampler.forwards())


def _editing_run(p: Joint, sampler: EditingSampler, cond: _Conditionals) -> RevisionRun:
    """Exact chain of the editing sampler: states (A, x_A, post-steps taken, still running)."""
    from .select import _round, tempered

    d, K = p.d, p.K
    if (K + 1) ** d * K**d > MAX_REVISE_WORK:
        raise ValueError(f"p: the exact editing chain enumerates every candidate vector (~{(K + 1) ** d * K**d:.2g} "
                         f"terms, d={d}, K={K}), above {MAX_REVISE_WORK:,}; use the sampler's simulate()")
    sizes = list(sampler.plan.sizes)
    th, eth = sampler.threshold, sampler.editing_threshold
    states = {((), (), 0, 0): 1.0}  # (A, x_A, forwards so far, post-steps so far) -> prob of running
    out = np.zeros(p.table.shape)
    lost, fw = 0.0, 0.0
    while states:
        nxt: dict = {}
        for (A, xA, f, post), q in states.items():
            full = len(A) == d
            if full:
                post += 1
            vals = dict(zip(A, xA))
            rows = np.empty((d, K))
            M = tuple(j for j in range(d) if j not in A)
            if M:
                rows[list(M)] = cond.rows(A, xA, M)
            undefined = False
            for j in A:
                rest = tuple(i for i in A if i != j)
                xr = tuple(vals[i] for i in rest)
                if rest and not cond.marginal(rest)[xr] > 0:  # only off p's support: no prediction at j
                    undefined = True
                    break
                rows[j] = cond.rows(rest, xr, (j,))[0]
            if undefined:
                lost += q
                continue
            S = tempered(rows, sampler.temperature)
            C = _round(S)
            k = min(sizes[min(f, len(sizes) - 1)], len(M))
            fw += q
            for ys in product(*[np.flatnonzero(S[j] > 0) for j in range(d)]):
                w = q
                for j, y in enumerate(ys):
                    w *= S[j, y]
                if w == 0.0:
                    continue
                conf = [C[j, y] for j, y in enumerate(ys)]
                commit = set()
                if M:
                    order = sorted(M, key=lambda j: (-conf[j], j))
                    above = [j for j in M if conf[j] > th] if th is not None else []
                    commit = set(above) if th is not None and len(above) >= k else set(order[:k])
                edits = [j for j in A if ys[j] != vals[j] and conf[j] > eth]
                nv = dict(vals)
                nv.update({j: int(ys[j]) for j in commit})
                nv.update({j: int(ys[j]) for j in edits})
                A2 = tuple(sorted(nv))
                x2 = tuple(nv[j] for j in A2)
                # the pipeline stops after its S-th mask step (num_inference_steps; the counts have
                # then committed every mask), after a forward that began with no mask and edited
                # nothing, or once the post-steps exceed max_post_steps
                if (full and (not edits or post > sampler.max_post_steps)) or (not full and f + 1 >= len(sizes)):
                    if len(A2) != d:  # pragma: no cover - the counts sum to d and commits are floors
                        raise AssertionError("EditingSampler: masks left after the last mask step")
                    out[x2] += w
                    continue
                if len(A2) < d and not cond.marginal(A2)[x2] > 0:
                    lost += w
                    continue
                key = (A2, x2, f + 1, post)
                nxt[key] = nxt.get(key, 0.0) + w
        states = nxt
    return RevisionRun(Joint(out, lost=lost), float(fw))
