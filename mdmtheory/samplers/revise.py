r"""Samplers that revise what they revealed: ReMDM remasking and a parallel corrector, exactly.

The state of a revising sampler is no longer monotone: a revealed token can be masked again
or redrawn. The exact law is a Markov chain on partial states :math:`(A, x_A)` — the same
:math:`(K+1)^d` states as the monotone samplers — applied step by step
(:func:`revise_run`, below); :meth:`simulate` methods draw the same chain by Monte Carlo from any
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
given the other revealed ones, :math:`p(x_j \mid x_{A \setminus j})` (equal ones, to 12
decimals, resolved by ``ties``: ``"random"`` uniform over the tied sets, the exact chain
branching over them with weights :math:`1/\binom{m}{r}`; ``"lowest"`` the lowest position;
``"topk"`` ``torch.topk`` of the negated likelihood level on the length-d row with ``-inf`` at
the masked positions — the corrector is the package's own rule, so this is how a pipeline
would rank it, not a pipeline's code), are masked and redrawn, independently, from
:math:`p(\cdot \mid x_{A \setminus R})`. One corrector step costs one forward (the model sees
the state with R masked).

**Editing** (:class:`EditingSampler`; LLaDA2.1 as diffusers 0.42 runs it:
``BlockRefinementScheduler.step`` with ``editing_threshold`` and the ``LLaDA2Pipeline`` loop).
Every forward draws a candidate at *every* position — masked j from :math:`p(\cdot \mid x_A)`,
committed j from the model's prediction at a visible position, which for the true law we take
to be the leave-one-out conditional :math:`p(\cdot \mid x_{A \setminus j})` (what j should be
given the rest; a model that ignored its own visible token) — all tempered by ``temperature``;
masked positions are committed by sample-then-select (:mod:`mdmtheory.samplers.select`, the
schedule's counts, ``threshold``, its tie rule ``ties``: the only ranking in diffusers' step,
whose edits are a threshold test), and a committed position is *replaced* by its candidate when
they differ and the candidate's (tempered, as diffusers') probability exceeds
``editing_threshold``. After the last mask, editing-only forwards follow while the previous one
edited something, at most ``max_post_steps`` + 1 of them — but the block ends right after
its S-th mask step (``num_inference_steps``), so post-steps happen only when a threshold
committed the last mask earlier (the pipeline's ``check_block_should_continue``; checked by
running diffusers' own pipeline with the exact law as its model).

Forwards: ReMDM runs N forwards; the corrector :math:`T + T'` (T' corrector steps: every
step but the last by default).

**The exact chain** (:func:`revise_run`) runs on the sparse-chain kernel of
:mod:`mdmtheory.samplers.kernel`: the live states are a sorted array of flat indices into the
:math:`(K+1)^d` marginal lattice (slot K = masked), with their mass. A step writes, for all
live states at once, one term (state, target state, weight) per transition with positive
weight — the product over positions of the per-position factors above (ReMDM: kept
:math:`1 - \sigma` or masked :math:`\sigma` at a revealed position, stays masked
:math:`1 - \beta` or takes y with :math:`\beta\, p(y \mid x_A)` at a masked one; the
corrector: :math:`\binom{m}{k_t}^{-1} \prod p(y_j \mid x_A)` over the chosen set, then the
redraw :math:`\prod_{j \in R} p(y_j \mid x_{A \setminus R})`; editing: every candidate
vector, :math:`\prod_j S_j(y_j)`), each conditional a ratio of two lattice entries; the
targets are classified by ``chain_targets`` (full states stay live: the chain runs on after
everything is revealed; a state with masked positions whose revealed values p never
produces is lost, its conditionals do not exist) and the mass is pushed by
``chain_apply``. Lost mass, as in :meth:`simulate`: a full state is kept even off p's
support (an output); the corrector loses a state whose kept part p never produces; editing
loses a state where a leave-one-out prediction is undefined. The editing chain also carries
the post-step counter (state key: lattice index + :math:`(K+1)^d` × post-steps). Under
``ties="random"`` a tied choice (the corrector's R, editing's mask commits) is one term per
tied subset; every chain carries a second mass, that of the runs no tie rule has decided yet,
pushed with the untied terms' weights, for ``RevisionRun.tie_mass``.
:func:`revise_run` refuses a chain whose steps can have more than :data:`MAX_REVISE_WORK`
terms (every state of a level live: :math:`(3K+1)^d` for ReMDM); a step at the limit takes
about a second and 1–2 GB. Derived here (the exact chains); tests/samplers/test_revise.py checks
them against independent per-position and trajectory enumerations (backward recursions),
Monte Carlo and the η = 0 case against the engine.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from typing import ClassVar

import numpy as np

from .._estimate import Record
from .base import OwnChainSampler, Run
from ..laws.joint import Joint, joint_arg
from ..laws.oracles import inverse_cdf, loo_conditionals
from .._moved import renamed_keywords
from .._validate import float_array, int_arg, prob_arg, size_arg
from ..schedules.plans import check_schedule, Grid, Schedule
from .kernel import (
    chain_apply,
    chain_targets,
    ChainStep,
    distinct_states,
    empty_state,
    FINISHED,
    lattice_strides,
    LOST,
    marginal_lattice,
    output_index,
    state_conditionals,
    state_values,
)
from .ties import check_ties, DEFAULT_TIES, sample_choice, TIE_TOL, tie_choices
from ..laws.oracles import as_oracle
from .simulate import _check_n_seed
from .select import _round, commit_choices, confidence_rows, tempered, SampleThenSelectPlanner, select_commits
from .._validate import bool_arg, choice_arg

__all__ = ["RemaskingSampler", "CorrectorSampler", "EditingSampler", "RevisionRun", "revise_run",
           "MAX_REVISE_WORK", "ReMDMSampler", "remdm_run", "nucleus", "REMDM_SCHEDULES", "REMDM_SOURCE"]

#: Largest number of (state, transition) terms one step of :func:`revise_run` may have (an
#: upper bound from the sampler and (d, K), every state of a level live): about a second
#: and 1–2 GB per step at the limit.
MAX_REVISE_WORK = 10_000_000


def _mc_start(law, plan, n, seed):
    """(oracle, d, rng, x, revealed, lost) of a Monte Carlo run: checked, all masked."""
    n, seed = _check_n_seed(n, seed)
    oracle = as_oracle(law)
    d = oracle.d
    if plan is not None:
        check_schedule(plan, d, name="plan")
    return (oracle, d, np.random.default_rng(seed), np.zeros((n, d), dtype=np.int64), np.zeros((n, d), dtype=bool),
            np.zeros(n, dtype=bool))


class _Revising(OwnChainSampler):
    """The protocol of a revising sampler (:class:`~mdmtheory.samplers.base.OwnChainSampler`):
    it carries its plan (``_own_plan``), its exact run is :func:`revise_run`, its Monte Carlo
    its ``_simulate``."""

    revises: ClassVar[bool] = True

    def _run(self, p) -> "RevisionRun":
        return revise_run(p, self)

    @property
    def _own_plan(self):
        return self.plan


@dataclass(frozen=True)
class RemaskingSampler(_Revising, Record):
    """ReMDM (module docstring): ``alphas`` the revealed fractions 0 = α_0 < … < α_N = 1,
    ``eta`` in [0, 1], ``schedule`` ``"cap"`` or ``"rescale"``."""

    alphas: tuple
    eta: float = 0.0
    schedule: str = "cap"

    def __post_init__(self):
        arr = float_array(self.alphas, "alphas", ndim=1, what="(N + 1,) increasing from 0 to 1")
        int_arg(arr.size - 1, "steps", 1, hint=" (alphas holds steps + 1 fractions)")
        a = tuple(arr.tolist())
        if len(a) < 2 or a[0] != 0.0 or a[-1] != 1.0 or any(not b > c for b, c in zip(a[1:], a)):
            raise ValueError(f"alphas: expected strictly increasing fractions 0 = a_0 < ... < a_N = 1, got {a!r}")
        e = prob_arg(self.eta, "eta")
        if not isinstance(self.schedule, str) or self.schedule not in ("cap", "rescale"):
            raise ValueError(f"schedule: expected 'cap' or 'rescale' (ReMDM's remdm-cap, remdm-rescale), "
                             f"got {self.schedule!r}")
        object.__setattr__(self, "alphas", a)
        object.__setattr__(self, "eta", float(e))

    @classmethod
    def uniform(cls, steps: int, eta: float = 0.0, schedule: str = "cap") -> "RemaskingSampler":
        """α_i = i / steps (MDLM's log-linear schedule at uniform times); steps <= 2**16."""
        steps = size_arg(steps, "steps")
        return cls(tuple(i / steps for i in range(steps + 1)), eta, schedule)

    @property
    def steps(self) -> int:
        return len(self.alphas) - 1

    def rates(self, i: int) -> tuple[float, float]:
        """(σ, unmask probability) of step i (0-based)."""
        i = int_arg(i, "i", 0, self.steps - 1)
        at, as_ = self.alphas[i], self.alphas[i + 1]
        room = (1 - as_) / at if at > 0 else math.inf
        sigma = min(self.eta, room) if self.schedule == "cap" else self.eta * min(1.0, room)
        if at == 0:
            sigma = 0.0  # nothing is revealed yet (ReMDM's alpha_t = 0 branch remasks nothing)
        unmask = (as_ - (1 - sigma) * at) / (1 - at)
        return sigma, min(max(unmask, 0.0), 1.0)

    def forwards(self) -> int:
        return self.steps

    @property
    def _own_plan(self):
        return Grid(self.alphas)

    # -- Monte Carlo -------------------------------------------------------------------------
    @renamed_keywords(law="p")
    def _simulate(self, p, *, n: int, seed: int):
        """n samples from any conditional oracle (a Joint or a structured law): returns
        (samples (n, d), lost (n,)); lost: a state p never produces was reached."""

        oracle, d, rng, x, rv, lost = _mc_start(p, None, n, seed)
        for i in range(self.steps):
            sigma, beta = self.rates(i)
            rows = np.flatnonzero(~lost)
            reach = (oracle.log_marginal(x[rows], rv[rows]) > -np.inf) | rv[rows].all(axis=1)
            lost[rows[~reach]] = True
            rows = rows[reach]
            xs, r = x[rows], rv[rows]
            probs = oracle.conditionals(xs, r)
            draw = inverse_cdf(probs, rng.random(xs.shape))
            u = rng.random(xs.shape)
            remask = r & (u < sigma)
            reveal = ~r & (u < beta)
            x[rows] = np.where(reveal, draw, xs)
            rv[rows] = (r & ~remask) | reveal
        if not (lost | rv.all(axis=1)).all():  # pragma: no cover - alpha_N = 1 reveals everything
            raise AssertionError("RemaskingSampler: masked positions after the last step")
        return np.where(rv, x, -1), lost


def _redo_mc(own, rev, k, ties, rng):
    """Monte Carlo of the corrector's choice: the k revealed positions with the least ``own``
    likelihood (rounded to 12 decimals), ties by the rule."""
    lev = -np.rint(np.round(own, 12) * 1e12)  # higher first: least likely first
    k = np.minimum(k, rev.sum(axis=1))
    if ties == "random":
        return sample_choice(np.where(rev, lev, 0.0), rev, k, rng)
    return tie_choices(np.where(rev, lev, 0.0), rev, k, ties).chosen


@dataclass(frozen=True)
class CorrectorSampler(_Revising, Record):
    """Random order with the counts of ``plan``, and after each of the steps in ``after``
    (default: every step but the last) a corrector step redrawing the ``k`` least likely
    revealed positions, equal likelihoods (to 12 decimals) resolved by ``ties``: ``"random"``
    (uniform over the tied sets, the default), ``"lowest"`` (lowest position first) or
    ``"topk"`` (``torch.topk`` of the negated score, as a pipeline would call it; module
    docstring)."""

    plan: Schedule
    k: int = 1
    after: tuple | None = None
    ties: str = DEFAULT_TIES

    def __post_init__(self):
        if not isinstance(self.plan, Schedule):
            raise ValueError(f"plan: expected a Schedule, got {type(self.plan).__name__}")
        if isinstance(self.k, bool) or not isinstance(self.k, numbers.Integral) or self.k < 1:
            raise ValueError(f"k: expected the number of positions each corrector step redraws (>= 1), got {self.k!r}")
        if self.after is not None and (isinstance(self.after, (str, bytes, dict)) or not hasattr(self.after, "__len__")
                                       or len(self.after) > self.plan.steps):
            raise ValueError(f"after: expected distinct step indices in 0..{self.plan.steps - 1}, got {self.after!r}")
        after = tuple(range(self.plan.steps - 1)) if self.after is None else tuple(self.after)
        if any(isinstance(t, bool) or not isinstance(t, numbers.Integral) or not 0 <= t < self.plan.steps
               for t in after) or len(set(after)) != len(after):
            raise ValueError(f"after: expected distinct step indices in 0..{self.plan.steps - 1}, got {self.after!r}")
        check_ties(self.ties)
        object.__setattr__(self, "after", tuple(sorted(int(t) for t in after)))

    def forwards(self) -> int:
        return self.plan.steps + len(self.after)

    @renamed_keywords(law="p")
    def _simulate(self, p, *, n: int, seed: int):
        """n samples from any conditional oracle: (samples (n, d), lost (n,))."""

        oracle, d, rng, x, rv, lost = _mc_start(p, self.plan, n, seed)

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
            draw = inverse_cdf(oracle.conditionals(xs, r), rng.random(xs.shape))
            x[rows] = np.where(chosen, draw, xs)
            rv[rows] = r | chosen
            if t not in self.after:
                continue
            rows = live()
            xs, r = x[rows], rv[rows]
            own = np.take_along_axis(loo_conditionals(oracle, xs, r), xs[..., None], axis=-1)[..., 0]
            redo = _redo_mc(own, r, self.k, self.ties, rng)
            keep = r & ~redo
            ok = oracle.log_marginal(xs, keep) > -np.inf
            lost[rows[~ok]] = True
            rows, xs, keep, redo = rows[ok], xs[ok], keep[ok], redo[ok]
            draw = inverse_cdf(oracle.conditionals(xs, keep), rng.random(xs.shape))
            x[rows] = np.where(redo, draw, xs)
        return np.where(rv, x, -1), lost


@dataclass(frozen=True)
class EditingSampler(_Revising, Record):
    """Sample-then-select with LLaDA2.1 editing (module docstring)."""

    plan: Schedule
    editing_threshold: float = 0.5
    threshold: float | None = None
    temperature: float = 1.0
    max_post_steps: int = 16
    ties: str = DEFAULT_TIES

    def __post_init__(self):
        if not isinstance(self.plan, Schedule):
            raise ValueError(f"plan: expected a Schedule, got {type(self.plan).__name__}")
        SampleThenSelectPlanner(self.threshold, self.temperature, "tempered", self.ties)  # the commit rule's checks
        e = self.editing_threshold
        if isinstance(e, bool) or not isinstance(e, numbers.Real) or not 0 < e < 1:
            raise ValueError(f"editing_threshold: expected a probability in (0, 1) (diffusers edits a committed token "
                             f"whose new candidate is more likely than it), got {e!r}")
        m = int_arg(self.max_post_steps, "max_post_steps", 0)  # documented limit: LIMITS (2**10)
        object.__setattr__(self, "editing_threshold", float(e))
        object.__setattr__(self, "max_post_steps", m)

    @renamed_keywords(law="p")
    def _simulate(self, p, *, n: int, seed: int):
        """n samples: (samples (n, d), lost (n,), forwards (n,))."""
        oracle, d, rng, x, rv, lost = _mc_start(p, self.plan, n, seed)
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
            y = np.minimum(inverse_cdf(S, rng.random(xs.shape)), oracle.K - 1)
            conf = np.take_along_axis(confidence_rows(P, S, "tempered", self.temperature), y[..., None], axis=-1)[..., 0]
            step = [sizes[min(int(f), len(sizes) - 1)] for f in forwards[rows]]
            commit = select_commits(conf, ~r, np.array(step), self.threshold, self.ties, rng) & ~full[:, None]
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


#: The pipeline whose model calls the editing sampler's :attr:`RevisionRun.forwards` counts.
EDITING_PIPELINE = "diffusers 0.42 LLaDA2Pipeline (one block, editing_threshold)"


@dataclass(frozen=True)
class RevisionRun(Run):  # pipeline: the loop its forwards are counted for (None: the sampler's own)
    """Exact law of a revising sampler (``law``, with lost mass), its forwards and the
    pipeline they are counted for (``pipeline``; None where the sampler is ours, not a
    pipeline's loop).

    Editing (:data:`EDITING_PIPELINE`): the expected model calls of diffusers'
    ``LLaDA2Pipeline`` block loop, one per pass — the mask steps, then, when a threshold
    committed the last mask before the S-th step, the post passes that begin with no mask
    (the first always; another while the previous one edited something, at most
    ``max_post_steps`` + 1), as ``check_block_should_continue`` decides (diffusers 0.42.1,
    schedulers/scheduling_block_refinement.py); tests/exports/test_pipeline_forwards.py counts the
    model's calls in the pipeline itself. ReMDM: its N steps; corrector: T + T'.

    ``ties``: the tie rule of the ranking the sampler runs (None for ReMDM, which ranks
    nothing); ``tie_mass``: the probability that the run passes through a step whose chosen
    set the tie rule decided (0: the law is the same under every rule)."""



# -- the exact chains, on the sparse-chain kernel (samplers/kernel.py) ---------------------------
# Live states: a sorted array of flat lattice indices and their mass. A step builds its terms
# (live state, target state, weight) for all live states at once, classifies the targets with
# kernel.chain_targets (full states stay live: these samplers run on after everything is
# revealed) and pushes the mass with kernel.chain_apply.


#: Candidate vectors per chunk of states in the editing chain (bounds its (terms, d) temporaries).
_CHUNK = 1 << 18


def _expand(W: np.ndarray, digit=None, base=None):
    r"""Every value vector with a positive product of per-position weights.

    ``W`` (N, m, V) :math:`\ge 0` -> ``(row, code, w)``: one entry per row n and vector
    :math:`(v_0, \dots, v_{m-1})` with every factor :math:`W[n, i, v_i] > 0`, ``w`` the
    product of the factors and ``code`` :math:`= \mathrm{base}_n + \sum_i v_i\,
    \mathrm{digit}_{n,i}` (default: base 0, digit :math:`V^{m-1-i}`; for V = K + 1 over all
    positions with K = masked, the flat lattice index of the target state). Rows with the
    same number of positive options at every position are expanded together: the positions
    with one option folded into a per-row constant, one broadcast outer product per other
    position, written into the preallocated result."""
    N, d, V = W.shape
    Wt = np.moveaxis(W, 2, 0).reshape(V, N * d)  # value-major: no inner loops over length V
    # opt[r, n, j]: the r-th positive option of (n, j) in increasing value; wopt its weight
    opt, wopt = np.zeros((V, N * d), dtype=np.int64), np.zeros((V, N * d))
    cnt = np.zeros(N * d, dtype=np.int64)
    for v in range(V):
        m = np.flatnonzero(Wt[v] > 0)
        opt[cnt[m], m], wopt[cnt[m], m] = v, Wt[v, m]
        cnt[m] += 1
    opt, wopt, counts = opt.reshape(V, N, d), wopt.reshape(V, N, d), cnt.reshape(N, d)
    if digit is None:
        digit = V ** np.arange(d - 1, -1, -1, dtype=np.int64)
    digit = np.broadcast_to(np.asarray(digit, dtype=np.int64), (N, d))
    base = np.zeros(N, dtype=np.int64) if base is None else np.asarray(base, dtype=np.int64)
    key = counts @ ((V + 1) ** np.arange(d - 1, -1, -1, dtype=np.int64))  # the signature as one integer
    order = np.argsort(key, kind="stable")
    cuts = np.flatnonzero(np.diff(key[order])) + 1
    groups = [(counts[g[0]], g) for g in np.split(order, cuts) if g.size and counts[g[0]].all()]
    total = sum(int(np.prod(c)) * g.size for c, g in groups)
    row, code, w = np.empty(total, dtype=np.int64), np.empty(total, dtype=np.int64), np.empty(total)
    at = 0
    for c, h in groups:
        n_vec, G = int(np.prod(c)), h.size
        one, many = np.flatnonzero(c == 1), np.flatnonzero(c > 1)
        cd = base[h] + (opt[0][h][:, one] * digit[h][:, one]).sum(axis=1)
        wt = np.prod(wopt[0][h][:, one], axis=1)
        # the longer of (rows, vectors) as the contiguous last axis (numpy's inner loops are
        # slow over axes of length 2 or 3)
        rows_last = G >= n_vec
        cd, wt = (cd[None], wt[None]) if rows_last else (cd[:, None], wt[:, None])
        for j in many:
            vj, wj = opt[:c[j], h, j] * digit[h, j], wopt[:c[j], h, j]  # (options, rows)
            if rows_last:  # (vectors so far, rows)
                cd = (cd[None] + vj[:, None]).reshape(-1, G)
                wt = (wt[None] * wj[:, None]).reshape(-1, G)
            else:  # (rows, vectors so far)
                cd = (cd[:, None] + vj.T[:, :, None]).reshape(G, -1)
                wt = (wt[:, None] * wj.T[:, :, None]).reshape(G, -1)
        sl = slice(at, at + n_vec * G)
        code[sl], w[sl] = cd.reshape(-1), wt.reshape(-1)
        row[sl] = np.tile(h, n_vec) if rows_last else np.repeat(h, n_vec)
        at += n_vec * G
    return row, code, w


def _push(masses, src, tgt, w, Pf, d, K, w0=None, lost_src=None, lost_w=None, lost_w0=None):
    """One step: terms (src, tgt, w), targets settled by chain_targets (full states stay live,
    masked states at a zero-probability prefix lost); ``lost_src`` / ``lost_w``: mass of live
    states that is lost. ``masses`` = (mass, mass0): mass0, the mass of the runs no tie rule
    has decided yet, moves with the weights ``w0`` (default ``w``); while no tie has been
    decided the two are one array object and one chain is applied. Returns (live, (mass',
    mass0'), (lost, lost0))."""
    u, at = distinct_states(tgt, Pf.shape[0])  # chain_targets on the distinct targets only
    dst_u, _, live = chain_targets(u, Pf, d, K, finish_full=False, distinct=True)
    dst = dst_u[at]
    w0 = w if w0 is None else w0
    if lost_src is not None and lost_src.size:
        src = np.concatenate([src, lost_src])
        dst = np.concatenate([dst, np.full(lost_src.size, LOST, dtype=np.int64)])
        w = np.concatenate([w, lost_w])
        w0 = np.concatenate([w0, lost_w if lost_w0 is None else lost_w0])

    def apply(m, ww):
        n_, _, l_, _ = chain_apply(m, ChainStep(src=src, dst=dst, out=np.zeros_like(dst), live=live, w=ww), Pf, 1,
                                   xp=np)
        return n_, l_

    new, lost = apply(masses[0], w)
    if masses[1] is masses[0] and (w0 is w or np.array_equal(w0, w)):
        return live, (new, new), (lost, lost)  # no tie decided so far: one chain (the same object)
    new0, lost0 = apply(masses[1], w0)
    return live, (new, new0), (lost, lost0)


def _remdm_step(live, masses, Pf, d, K, sigma, beta):
    """ReMDM step: revealed j kept (1 − σ) or masked (σ); masked j stays (1 − β) or takes y
    (β p(y | x_A)); all positions independently."""
    vals = state_values(live, d, K)
    rev = vals < K
    W = np.zeros((live.size, d, K + 1))
    W[..., :K] = beta * state_conditionals(Pf, live, d, K)  # 0 on revealed rows
    W[..., K] = np.where(rev, sigma, 1 - beta)
    n, j = np.nonzero(rev)
    W[n, j, vals[n, j]] = 1 - sigma
    src, tgt, w = _expand(W)
    return _push(masses, src, tgt, w, Pf, d, K)


def _random_step(live, masses, Pf, d, K, size):
    """Random-order step: ``size`` (at most all) of the masked positions, uniformly, each
    drawn from p(· | x_A). States grouped by their number of masked positions."""
    vals = state_values(live, d, K)
    free = vals == K
    m = free.sum(axis=1)
    P = state_conditionals(Pf, live, d, K)
    stride = lattice_strides(d, K)
    srcs, tgts, ws = [], [], []
    for mm in np.unique(m):
        g = np.flatnonzero(m == mm)
        s = min(size, int(mm))
        combos = np.array(list(combinations(range(int(mm)), s)), dtype=np.int64).reshape(-1, s)
        nb = combos.shape[0]
        where = np.argsort(~free[g], axis=1, kind="stable")[:, :mm][:, combos].reshape(g.size * nb, s)
        src = np.repeat(g, nb)  # one row per (state, chosen set B)
        W = P[src[:, None], where]  # (rows, s, K): the conditionals of the chosen positions
        row, tgt, w = _expand(W, digit=stride[where], base=live[src] - K * stride[where].sum(axis=1))
        srcs.append(src[row])
        tgts.append(tgt)
        ws.append(w / math.comb(int(mm), s))
    return _push(masses, np.concatenate(srcs), np.concatenate(tgts), np.concatenate(ws), Pf, d, K)


def _corrector_step(live, masses, Pf, d, K, k, ties):
    """Corrector step: the k revealed positions least likely given the other revealed ones
    (rounded to 12 decimals; an undefined prediction counts as 0), equal ones resolved by
    ``ties`` (:func:`mdmtheory.samplers.ties.tie_choices` on the negated integer levels
    rint(p 10^12): ``"random"`` one branch per tied subset, ``"topk"`` torch.topk of that
    length-d vector with -inf at the masked positions), redrawn from p(· | x_{A∖R}); lost when
    p(x_{A∖R}) = 0 (only from an output off p's support)."""
    vals = state_values(live, d, K)
    rev = vals < K
    stride = lattice_strides(d, K)
    hid = live[:, None] + (K - vals) * stride  # the state with j masked (revealed j)
    den = Pf[hid]
    # p(x_{A minus j}) = 0 (only at an output off p's support): no prediction at j, which
    # counts as confidence 0, as the oracles' conditionals give it to simulate()
    loo = np.where(den > 0, Pf[live][:, None] / np.where(den > 0, den, 1.0), 0.0)
    lev = np.where(rev, -np.rint(np.round(loo, 12) * 1e12), 0.0)  # higher first: least likely first
    ch = tie_choices(lev, rev, np.minimum(k, rev.sum(axis=1)), ties)
    rows = ch.rows
    R = np.argsort(~ch.chosen, axis=1, kind="stable")[:, :k]  # the chosen positions first
    redo = np.take_along_axis(ch.chosen, R, axis=1)  # (N, k): False where fewer than k are revealed
    off = np.where(redo, (K - np.take_along_axis(vals[rows], R, axis=1)) * stride[R], 0)
    kidx = live[rows] + off.sum(axis=1)  # the state with R masked
    ok = Pf[kidx] > 0
    g = np.flatnonzero(ok)
    P = state_conditionals(Pf, kidx[g], d, K)
    W = np.take_along_axis(P, R[g][..., None], axis=1)  # (n, k, K)
    W[~redo[g]] = np.eye(1, K)  # a padding slot: one option, weight 1, digit 0
    dig = np.where(redo[g], stride[R[g]], 0)
    row, tgt, w = _expand(W, digit=dig, base=kidx[g] - K * dig.sum(axis=1))
    src = rows[g[row]]
    w = w * ch.weight[g[row]]
    bad = np.flatnonzero(~ok)
    lw = ch.weight[bad]
    return _push(masses, src, tgt, w, Pf, d, K, w0=w * ~ch.split[src], lost_src=rows[bad], lost_w=lw,
                 lost_w0=lw * ~ch.split[rows[bad]])


def _terms_bound(sampler, d: int, K: int) -> int:
    """Most terms one step of the exact chain can have (every state of its level live)."""
    if isinstance(sampler, RemaskingSampler):  # 2 options per revealed, K + 1 per masked position
        return (3 * K + 1) ** d
    if isinstance(sampler, CorrectorSampler):
        worst, a = 1, 0
        for t, size in enumerate(sampler.plan.sizes):
            s = min(size, d - a)
            worst = max(worst, math.comb(d, a) * K**a * math.comb(d - a, s) * K**s)
            a += s
            if t in sampler.after:
                worst = max(worst, math.comb(d, a) * K ** (a + min(sampler.k, a)))
        return worst
    # editing: K^d candidate vectors per state. Before forward f >= 1 the masked states have
    # a_f = k_0 + ... + k_{f-1} revealed positions (at least a_f with a threshold), and only
    # for f < S; full states are live only with a threshold (it committed the last mask
    # early), with at most min(f, max_post_steps + 1) post-step counters
    sizes, top, th = sampler.plan.sizes, sampler.max_post_steps, sampler.threshold
    worst = 1  # forward 0: the empty state
    for f in range(1, len(sizes) + top + 1):
        a = sum(sizes[:f])
        states = 0
        if f < len(sizes):
            states = sum(math.comb(d, b) * K**b for b in range(a, d)) if th is not None else math.comb(d, a) * K**a
        if th is not None:
            states += K**d * min(f, top + 1)
        worst = max(worst, states)
    return worst * K**d


@renamed_keywords(sampler="planner")
def revise_run(p: Joint, planner) -> RevisionRun:
    """Exact output law of a :class:`RemaskingSampler`, :class:`CorrectorSampler` or
    :class:`EditingSampler` on ``p``."""
    sampler = planner
    p = joint_arg(p)
    if not isinstance(sampler, (RemaskingSampler, CorrectorSampler, EditingSampler)):
        raise ValueError(f"planner: expected a RemaskingSampler, CorrectorSampler or EditingSampler, "
                         f"got {type(sampler).__name__}")
    d, K = p.d, p.K
    if not isinstance(sampler, RemaskingSampler):
        check_schedule(sampler.plan, d, name="plan")
    work = _terms_bound(sampler, d, K)
    if isinstance(sampler, EditingSampler):
        if work > MAX_REVISE_WORK:
            raise ValueError(f"p: the exact editing chain enumerates every candidate vector (~{work:.2g} terms per "
                             f"step, d={d}, K={K}), above {MAX_REVISE_WORK:,}; use the sampler's simulate()")
    elif work > MAX_REVISE_WORK:
        raise ValueError(f"p: the exact revising chain needs up to ~{work:.2g} terms per step (d={d}, K={K}), above "
                         f"{MAX_REVISE_WORK:,}; use the sampler's simulate()")
    Pf = marginal_lattice(p.table, xp=np).ravel()
    if isinstance(sampler, EditingSampler):
        return _editing_run(p, sampler, Pf)
    start = np.ones(1)
    live, masses = np.array([empty_state(d, K)], dtype=np.int64), (start, start)  # one object: no tie yet
    lost, lost0 = 0.0, 0.0
    if isinstance(sampler, RemaskingSampler):
        for i in range(sampler.steps):
            sigma, beta = sampler.rates(i)
            live, masses, l_ = _remdm_step(live, masses, Pf, d, K, sigma, beta)
            lost, lost0 = lost + l_[0], lost0 + l_[1]
    else:
        for t, size in enumerate(sampler.plan.sizes):
            live, masses, l_ = _random_step(live, masses, Pf, d, K, size)
            lost, lost0 = lost + l_[0], lost0 + l_[1]
            if t in sampler.after:
                live, masses, l_ = _corrector_step(live, masses, Pf, d, K, sampler.k, sampler.ties)
                lost, lost0 = lost + l_[0], lost0 + l_[1]
    vals = state_values(live, d, K)
    if (vals == K).any():  # pragma: no cover - both samplers end with everything revealed
        raise AssertionError("revise_run: masked positions after the last step")
    out = np.bincount(output_index(vals, K), masses[0], minlength=K**d)
    ties = None if isinstance(sampler, RemaskingSampler) else sampler.ties
    return RevisionRun(law=Joint(out.reshape(p.table.shape), lost=lost), forwards=sampler.forwards(), ties=ties,
                       tie_mass=max(0.0, (float(masses[0].sum()) + lost) - (float(masses[1].sum()) + lost0)))


@lru_cache(maxsize=None)
def _candidates(d: int, K: int) -> np.ndarray:
    """(K^d, d) every candidate vector, row c the base-K digits of c."""
    return (np.arange(K**d, dtype=np.int64)[:, None] // K ** np.arange(d - 1, -1, -1, dtype=np.int64)) % K


def _editing_terms(S, C, vals, rev, full, post, f, sampler, Pf, d, K):
    """The terms of one editing forward from states with tempered rows ``S`` (n, d, K) and
    confidence rows ``C`` (:func:`mdmtheory.samplers.select.confidence_rows`):
    (row, weight, weight0, class, key) with class 0 live (key: lattice index + L *
    post-steps), 1 finished (key: output index), 2 lost (a masked state at a zero-probability
    prefix); weight0 is 0 where the tie rule decided the committed masks (the commits of
    :func:`mdmtheory.samplers.select.commit_choices`: one term per resolution under
    ``ties="random"``)."""
    sizes = sampler.plan.sizes
    stride = lattice_strides(d, K)
    C = _round(C)
    row, code, w = _expand(S)  # every candidate vector with positive probability
    ys = _candidates(d, K)[code]  # (terms, d): a table lookup, much cheaper than // and %
    conf = C.reshape(-1)[(row[:, None] * d + np.arange(d)) * K + ys]
    v0, r0 = vals[row], rev[row]
    ch = commit_choices(conf, ~r0, sizes[min(f, len(sizes) - 1)], sampler.threshold, sampler.ties)
    t = ch.rows  # one term per (candidate vector, tie resolution)
    row, w, ys, conf, v0, r0, commit = row[t], w[t] * ch.weight, ys[t], conf[t], v0[t], r0[t], ch.chosen
    w0 = w * ~ch.split[t]
    full0, pst = full[row], post[row]
    edit = r0 & (ys != v0) & (conf > sampler.editing_threshold)
    new = np.where(commit | edit, ys, v0)
    del ys, conf, v0, r0, commit
    # the pipeline stops after its S-th mask step (num_inference_steps; the counts have then
    # committed every mask), after a forward that began with no mask and edited nothing, or
    # once the post-steps exceed max_post_steps
    fin = (full0 & (~edit.any(axis=1) | (pst > sampler.max_post_steps))) | (~full0 & (f + 1 >= len(sizes)))
    masked = (new == K).any(axis=1)
    if (fin & masked).any():  # pragma: no cover - the counts sum to d and commits are floors
        raise AssertionError("EditingSampler: masks left after the last mask step")
    tgt = new @ stride
    cls = np.where(fin, 1, np.where(masked & ~(Pf[tgt] > 0), 2, 0)).astype(np.int8)
    key = np.where(fin, output_index(np.where(new < K, new, 0), K), tgt + Pf.shape[0] * pst)
    return row, w, w0, cls, key


def _revision_step(mass, mass0, g, bad, hid, den, terms, Pf, d, K, max_post):
    """One step of a revising chain whose live states are keys ``lattice index + L * post``
    (the editing sampler; SGLang's JointThreshold): ``terms(P, h)`` gives, for the states ``g[h]``
    and their rows ``P`` (p(. | x_A) at masked j, the leave-one-out prediction at revealed j),
    (row, w, w0, cls, key) — each term's state row, its weight under the tie rule and under no
    decided tie, its class (0 live, 1 finished, else lost) and its next key or output index.
    States in ``bad`` (a revealed position without a prediction) are lost. Returns (next keys,
    mass, output, lost, untied mass, its output, its lost)."""
    L = Pf.shape[0]
    stride = lattice_strides(d, K)
    yv = np.arange(K, dtype=np.int64)
    parts = [(g[:0], np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int8), g[:0])]
    per = max(1, _CHUNK // K**d)  # states per chunk
    for a in range(0, g.size, per):
        h = g[a:a + per]
        P = Pf[hid[h][..., None] + (yv - K) * stride[:, None]] / den[h][..., None]
        row, w, w0, cls, key = terms(P, h)
        parts.append((h[row], w, w0, cls, key))
    src, w, w0, cls, key = (np.concatenate(c) for c in zip(*parts))
    nxt, at = distinct_states(key[cls == 0], L * (max_post + 2))
    dst = np.full(src.shape, LOST, dtype=np.int64)
    dst[cls == 0] = at
    dst[cls == 1] = FINISHED
    lost_rows = np.flatnonzero(bad)
    step = ChainStep(src=np.concatenate([src, lost_rows]),
                     dst=np.concatenate([dst, np.full(lost_rows.size, LOST, dtype=np.int64)]),
                     out=np.concatenate([np.where(cls == 1, key, 0), np.zeros(lost_rows.size, dtype=np.int64)]),
                     live=nxt, w=np.concatenate([w, np.ones(lost_rows.size)]))
    new, o_, l_, _ = chain_apply(mass, step, Pf, K**d, xp=np)
    if mass0 is mass and np.array_equal(w0, w):  # no tie decided so far: one chain
        mass0, o0, l0 = new, o_, l_
    else:
        step0 = dataclasses.replace(step, w=np.concatenate([w0, np.ones(lost_rows.size)]))
        mass0, o0, l0, _ = chain_apply(mass0, step0, Pf, K**d, xp=np)
    return nxt, new, o_, l_, mass0, o0, l0


def _editing_run(p: Joint, sampler: EditingSampler, Pf: np.ndarray) -> RevisionRun:
    """Exact chain of the editing sampler: live states (x_A, post-steps so far) as keys
    ``lattice index + L * post`` (L = (K+1)^d), all at the same forward f."""
    d, K = p.d, p.K
    L = Pf.shape[0]
    stride = lattice_strides(d, K)
    keys, mass = np.array([empty_state(d, K)], dtype=np.int64), np.ones(1)
    mass0 = mass  # the mass of the runs no tie rule has decided yet (the same object until a tie)
    out = np.zeros(K**d)
    lost, fw, f, untied, total = 0.0, 0.0, 0, 0.0, 0.0
    while keys.size:
        idx, post = keys % L, keys // L
        vals = state_values(idx, d, K)
        rev = vals < K
        full = rev.all(axis=1)
        post = post + full
        # row j of a state: p(. | x_{A minus j}) at revealed j (the leave-one-out prediction),
        # p(. | x_A) at masked j; both the marginal with j set to y over the one with j masked
        hid = idx[:, None] + (K - vals) * stride
        den = Pf[hid]
        # off p's support a position can be left without a prediction: lost
        bad = (rev & ~(den > 0)).any(axis=1)
        g = np.flatnonzero(~bad)
        fw += float(mass[g].sum())
        def terms(P, h):
            S = tempered(P, sampler.temperature)
            C = confidence_rows(P, S, "tempered", sampler.temperature)
            return _editing_terms(S, C, vals[h], rev[h], full[h], post[h], f, sampler, Pf, d, K)

        nxt, new, o_, l_, mass0, o0, l0 = _revision_step(mass, mass0, g, bad, hid, den, terms, Pf, d, K,
                                                         sampler.max_post_steps)
        mass = new
        untied += float(o0.sum()) + l0
        total += float(o_.sum()) + l_  # the same sums: exactly untied where no tie occurred
        out += o_
        lost += l_
        keys = nxt
        f += 1
    return RevisionRun(law=Joint(out.reshape(p.table.shape), lost=lost), forwards=float(fw), pipeline=EDITING_PIPELINE,
                       ties=sampler.ties,
                       tie_mass=max(0.0, total - untied))


# -- ReMDM as its authors run it ---------------------------------------------------------------
#: The source the :class:`ReMDMSampler` step is read from.
REMDM_SOURCE = "kuleshov-group/remdm@f830d659, diffusion.py, Diffusion._ddpm_caching_update and _sample"
#: The samplers of ReMDM's ``sampling.sampler`` that :class:`ReMDMSampler` runs.
REMDM_SCHEDULES = ("mdlm", "cap", "rescale", "conf", "loop")


def nucleus(P: np.ndarray, top_p: float, ties: str = DEFAULT_TIES) -> tuple[np.ndarray, np.ndarray]:
    r"""ReMDM's nucleus (top-p) filter of rows ``P`` (..., K) of probabilities: returns
    (filtered rows, split) — ``split`` (...) True where the tie rule decided which tokens stay.

    As ``diffusion.py`` (kuleshov-group/remdm@f830d659, ``_ddpm_caching_update``): sort
    descending, keep token i of the sorted row iff the cumulative sum up to it is
    :math:`\le` ``top_p`` (the first always), renormalize. Equal probabilities straddling the cut
    (a boundary cluster of m equal values of which r are kept): ``ties="random"`` keeps a
    uniformly random r of them, so each is kept with probability r/m (the row is the average of
    the filtered rows, what an independent draw per position sees); ``"lowest"`` and ``"topk"``
    keep the lowest token ids (torch.sort(descending=True) on CPU keeps equal values in index
    order for the rows tested in tests/samplers/test_remdm.py). ``top_p >= 1``: the rows
    unchanged. A zero row (a revealed position) stays zero."""
    P = float_array(P, "P", what="(..., K) rows of probabilities")
    if P.ndim < 1 or P.shape[-1] < 1 or (P < 0).any():
        raise ValueError(f"P: expected (..., K) rows of nonnegative probabilities, got shape {P.shape}")
    sums = P.sum(axis=-1)
    if np.any((np.abs(sums - 1.0) > 1e-9) & (sums != 0.0)):  # issue 38: a row is a law (or a zero row)
        bad = sums[(np.abs(sums - 1.0) > 1e-9) & (sums != 0.0)].ravel()[0]
        raise ValueError(f"P: each row must sum to 1 (a law over K tokens) or be all zero (a revealed position), "
                         f"got a row summing to {bad:.6g}")
    top_p = prob_arg(top_p, "top_p", low_open=True)
    check_ties(ties)
    split = np.zeros(P.shape[:-1], dtype=bool)
    if top_p >= 1:
        return P, split
    K = P.shape[-1]
    flat = P.reshape(-1, K)
    order = np.lexsort((np.broadcast_to(np.arange(K), flat.shape), -flat), axis=-1)  # stable: lowest id first
    s = np.take_along_axis(flat, order, axis=1)
    keep_sorted = np.cumsum(s, axis=1) <= top_p
    keep_sorted[:, 0] = True
    n_keep = keep_sorted.sum(axis=1)
    keep = np.zeros(flat.shape)
    np.put_along_axis(keep, order, keep_sorted.astype(np.float64), axis=1)
    if ties == "random":  # the boundary value: its m equal tokens share the r kept slots
        last = s[np.arange(flat.shape[0]), n_keep - 1]
        tied = np.abs(flat - last[:, None]) <= TIE_TOL
        m = tied.sum(axis=1)
        r = (keep.astype(bool) & tied).sum(axis=1)
        frac = np.where(m > 0, r / np.maximum(m, 1), 0.0)
        keep = np.where(tied, frac[:, None], keep)
        split = ((r < m) & (flat.sum(axis=1) > 0)).reshape(split.shape)
    out = flat * keep
    tot = out.sum(axis=1, keepdims=True)
    out = np.where(tot > 0, out / np.where(tot > 0, tot, 1.0), 0.0)
    return out.reshape(P.shape), split


@dataclass(frozen=True)
class ReMDMSampler(_Revising, Record):
    r"""ReMDM as its authors run it (module docstring, "ReMDM as its authors run it"):
    ``steps`` N, ``schedule`` one of :data:`REMDM_SCHEDULES` (``sampling.sampler``), ``eta``
    η, ``t_on``, ``t_off``, ``alpha_on`` (``remdm-loop`` only), ``top_p`` (``nucleus_p``),
    ``eps`` (the last time, ``_sample``'s 1e-5), ``noise_removal`` (greedy fill of what is
    still masked after the last step) and ``ties`` (equal probabilities at the nucleus cut and
    in the greedy fill)."""

    steps: int
    schedule: str = "loop"
    eta: float = 0.02
    t_on: float = 0.55
    t_off: float = 0.05
    alpha_on: float = 0.9
    top_p: float = 1.0
    eps: float = 1e-5
    noise_removal: bool = True
    ties: str = DEFAULT_TIES

    def __post_init__(self):
        n = size_arg(self.steps, "steps")
        choice_arg(self.schedule, "schedule", REMDM_SCHEDULES)
        e = prob_arg(self.eta, "eta")
        p = prob_arg(self.top_p, "top_p", low_open=True)
        eps = prob_arg(self.eps, "eps", high_open=True)
        bool_arg(self.noise_removal, "noise_removal")
        check_ties(self.ties)
        t_on, t_off, a_on = (prob_arg(self.t_on, "t_on"), prob_arg(self.t_off, "t_off"),
                             prob_arg(self.alpha_on, "alpha_on"))
        if self.schedule == "loop":
            if not (eps < t_off < t_on < 1):
                raise ValueError(f"t_on: remdm-loop needs eps < t_off < t_on < 1, got t_off={t_off!r}, t_on={t_on!r}, "
                                 f"eps={eps!r}")
            if not 0 < a_on < 1 or a_on * (1 + e) > 1:
                raise ValueError(f"alpha_on: remdm-loop needs 0 < alpha_on < 1 and alpha_on (1 + eta) <= 1 (the mask "
                                 f"weight of its loop step is 1 - alpha_on (1 + eta)), got alpha_on={a_on!r}, eta={e!r}")
        if not self.noise_removal and eps > 0:
            raise ValueError("noise_removal: without it positions can still be masked after the last step (eps > 0); "
                             "pass noise_removal=True or eps=0")
        for f, v in (("steps", n), ("eta", e), ("top_p", p), ("eps", eps), ("t_on", t_on), ("t_off", t_off),
                     ("alpha_on", a_on), ("noise_removal", bool(self.noise_removal))):
            object.__setattr__(self, f, v)

    @property
    def _own_plan(self):
        return None

    def times(self) -> np.ndarray:
        """(N + 1,) the times ``torch.linspace(1, eps, N + 1)`` of ``_sample`` (in float64)."""
        return np.linspace(1.0, self.eps, self.steps + 1)

    def rates(self, i: int) -> tuple[float, float]:
        r"""(σ, β) of step i (0-based): a revealed position is masked again with probability σ
        (for ``"conf"`` the largest :math:`\sigma_{\max}`, shared by the softmax of the
        confidences), a masked one revealed with probability β — the code's weights
        ``q_xs`` / ``q_xs_2`` normalized as ``_sample_categorical`` draws them (negative
        weights never win)."""
        i = int_arg(i, "i", 0, self.steps - 1)
        dt = (1 - self.eps) / self.steps
        t = float(self.times()[i])
        mt, ms = t, t - dt
        at, as_ = 1 - mt, 1 - ms
        sch, eta = self.schedule, self.eta
        if sch == "loop":
            a_on, t_on, t_off = self.alpha_on, self.t_on, self.t_off
            if t > t_on:
                mt, ms = 1 - (1 - t) * a_on / (1 - t_on), 1 - (1 - t + dt) * a_on / (1 - t_on)
            elif t <= t_off:
                mt, ms = t * (1 - a_on) / t_off, (t - dt) * (1 - a_on) / t_off
            else:  # the loop: ReMDM at alpha_on
                return eta, _share(eta * a_on / (1 - a_on), (1 - a_on - a_on * eta) / (1 - a_on))
            return 0.0, _share(mt - ms, ms)
        if sch == "mdlm":
            return 0.0, _share(mt - ms, ms)
        if sch == "cap":
            sigma = min(eta, (1 - as_) / at) if at > 0 else eta
        elif sch == "rescale":
            sigma = eta * (min(1.0, (1 - as_) / at) if at > 0 else 1.0)
        else:  # conf: sigma_max; masked positions have sigma = 0
            smax = min(1.0, (1 - as_) / at) if at > 0 else 1.0
            return smax, _share((as_ - at) / (1 - at), (1 - as_) / (1 - at))
        return sigma, _share((as_ - (1 - sigma) * at) / (1 - at), (1 - as_ - sigma * at) / (1 - at))

    def forwards(self) -> int:
        """Most model calls: one per step (fewer when a step changes nothing: the code reuses its
        cached prediction), one for the noise removal."""
        return self.steps + int(self.noise_removal)

    def _run(self, p) -> "RevisionRun":
        return remdm_run(p, self)

    # -- Monte Carlo -------------------------------------------------------------------------
    def _simulate(self, p, *, n: int, seed: int):
        """n samples from any conditional oracle: (samples (n, d), lost (n,), forwards (n,))."""

        oracle, d, rng, x, rv, lost = _mc_start(p, None, n, seed)
        conf = np.full((x.shape[0], d), -np.inf)
        forwards = np.zeros(x.shape[0], dtype=np.int64)
        cached = np.zeros(x.shape[0], dtype=bool)
        for i in range(self.steps):
            sigma, beta = self.rates(i)
            rows = np.flatnonzero(~lost)
            reach = (oracle.log_marginal(x[rows], rv[rows]) > -np.inf) | rv[rows].all(axis=1)
            lost[rows[~reach]] = True
            rows = rows[reach]
            xs, r = x[rows], rv[rows]
            forwards[rows] += ~cached[rows]
            with np.errstate(invalid="ignore", divide="ignore"):
                P = np.where(r[..., None], 0.0, oracle.conditionals(xs, r))
            P, _ = nucleus(P, self.top_p, self.ties)  # "random": the average row, drawn per position
            draw = np.minimum(inverse_cdf(P, rng.random(xs.shape)), oracle.K - 1)
            sig = _conf_sigma(conf[rows], r, sigma) if self.schedule == "conf" else np.where(r, sigma, 0.0)
            u = rng.random(xs.shape)
            remask = r & (u < sig)
            reveal = ~r & (u < beta)
            x[rows] = np.where(reveal, draw, xs)
            rv[rows] = (r & ~remask) | reveal
            if self.schedule == "conf":
                c = conf[rows]
                c = np.where(reveal, -np.take_along_axis(P, draw[..., None], axis=-1)[..., 0], c)
                conf[rows] = np.where(remask, -np.inf, c)
            cached[rows] = ~(remask | reveal).any(axis=1)
        rows = np.flatnonzero(~lost)
        if self.noise_removal:
            forwards[rows] += 1
            left = rows[~rv[rows].all(axis=1)]
            if left.size:
                ok = oracle.log_marginal(x[left], rv[left]) > -np.inf
                lost[left[~ok]] = True
                left = left[ok]
                P = oracle.conditionals(x[left], rv[left])
                fill = _greedy(P, self.ties, rng)
                x[left] = np.where(rv[left], x[left], fill)
                rv[left] = True
        return np.where(rv, x, -1), lost, forwards


def _share(reveal: float, stay: float) -> float:
    """The reveal probability of weights (reveal, stay) as ``_sample_categorical`` draws them:
    proportional to the positive parts."""
    a, b = max(reveal, 0.0), max(stay, 0.0)
    return a / (a + b) if a + b > 0 else 0.0


def _conf_sigma(conf: np.ndarray, rev: np.ndarray, smax: float) -> np.ndarray:
    r"""remdm-conf's per-position σ: ``softmax(conf)`` over the positions (masked ones have
    confidence −∞, so weight 0), times σ_max; 0 where nothing is revealed."""
    c = np.where(rev, conf, -np.inf)
    top = np.max(np.where(rev, c, -np.inf), axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.where(rev, np.exp(c - top), 0.0)
    tot = e.sum(axis=-1, keepdims=True)
    return np.where(tot > 0, e / np.where(tot > 0, tot, 1.0), 0.0) * smax


def _greedy(P: np.ndarray, ties: str, rng=None) -> np.ndarray:
    """The noise removal's ``argmax``: per row the most likely token; equal ones (to
    :data:`TIE_TOL`) the lowest id (``torch.argmax`` returns the first maximum) or, with
    ``ties="random"``, a uniform one (drawn with ``rng``)."""
    top = P.max(axis=-1, keepdims=True)
    tied = P >= top - TIE_TOL
    if ties != "random" or rng is None:
        return np.argmax(tied, axis=-1)
    keys = np.where(tied, rng.random(P.shape), -1.0)
    return np.argmax(keys, axis=-1)


@renamed_keywords(sampler="planner")
def remdm_run(p: Joint, planner: ReMDMSampler) -> RevisionRun:
    r"""Exact output law of a :class:`ReMDMSampler` on ``p``: the chain on states
    (A, x_A) — and, for ``"conf"``, the confidences of the revealed positions (each the
    filtered probability its value was drawn with) — then the noise removal.

    ``forwards``: the expected model calls as ``_sample`` makes them: step 0, then every step
    whose previous step changed the state (an unchanged one reuses ``p_x0_cache``), then the
    noise removal's call. ``tie_mass``: the probability of passing a step that reveals a
    position whose nucleus cut, or a greedy fill, the tie rule decided."""
    sampler = planner
    p = joint_arg(p)
    if not isinstance(sampler, ReMDMSampler):
        raise ValueError(f"planner: expected a ReMDMSampler, got {type(sampler).__name__}")
    d, K = p.d, p.K
    work = (3 * K + 1) ** d
    if work > MAX_REVISE_WORK:
        raise ValueError(f"p: the exact ReMDM chain needs up to ~{work:.2g} terms per step (d={d}, K={K}), above "
                         f"{MAX_REVISE_WORK:,}; use the sampler's simulate()")
    Pf = marginal_lattice(p.table, xp=np).ravel()
    conf_mode = sampler.schedule == "conf"
    idx = np.array([empty_state(d, K)], dtype=np.int64)
    conf = np.full((1, d), -np.inf)
    mass, mass0 = np.ones(1), np.ones(1)
    lost, lost0, fw, changed = 0.0, 0.0, 0.0, 1.0
    for i in range(sampler.steps):
        sigma, beta = sampler.rates(i)
        fw += changed  # the runs the previous step changed: a forward (the others reuse p_x0_cache)
        vals = state_values(idx, d, K)
        rev = vals < K
        P, split = nucleus(state_conditionals(Pf, idx, d, K), sampler.top_p, sampler.ties)
        sig = _conf_sigma(conf, rev, sigma) if conf_mode else np.where(rev, sigma, 0.0)
        W = np.zeros((idx.size, d, K + 1))
        W[..., :K] = beta * P
        W[..., K] = np.where(rev, sig, 1 - beta)
        n_, j_ = np.nonzero(rev)
        W[n_, j_, vals[n_, j_]] = 1 - sig[n_, j_]
        terms = float(np.prod((W > 0).sum(axis=-1).astype(np.float64), axis=1).sum())
        if terms > MAX_REVISE_WORK:  # remdm-conf: the confidences multiply the live states
            raise ValueError(f"p: step {i} of the exact ReMDM chain has {terms:.3g} terms ({idx.size:,} live states"
                             f"{' with their confidences' if conf_mode else ''}), above {MAX_REVISE_WORK:,}; "
                             f"use the sampler's simulate() or fewer steps")
        row, tgt, w = _expand(W)
        tv = state_values(tgt, d, K)
        rv0 = rev[row]
        revealed = ~rv0 & (tv < K)
        w0 = w * ~(revealed & split[row]).any(axis=1)
        bad = (tv == K).any(axis=1) & ~(Pf[tgt] > 0)  # a masked state at a zero-probability prefix
        changed = float((mass[row] * w)[(tgt != idx[row]) & ~bad].sum())
        lost += float((mass[row] * w)[bad].sum())
        lost0 += float((mass0[row] * w0)[bad].sum())
        g = ~bad
        row, tgt, w, w0, tv, rv0, revealed = row[g], tgt[g], w[g], w0[g], tv[g], rv0[g], revealed[g]
        if conf_mode:
            c = conf[row]
            new = np.take_along_axis(P[row], np.minimum(tv, K - 1)[..., None], axis=-1)[..., 0]
            c = np.where(revealed, -new, c)
            c = np.where(rv0 & (tv == K), -np.inf, c)
            key = np.concatenate([tgt[:, None].astype(np.float64), np.round(c, 12)], axis=1)
            uk, inv = np.unique(key, axis=0, return_inverse=True)
            inv = inv.reshape(-1)
            idx, conf = uk[:, 0].astype(np.int64), uk[:, 1:]
        else:
            idx, inv = np.unique(tgt, return_inverse=True)
            conf = np.full((idx.size, d), -np.inf)
        mass_new = np.bincount(inv, mass[row] * w, minlength=idx.size)
        mass0 = np.bincount(inv, mass0[row] * w0, minlength=idx.size)
        mass = mass_new
    vals = state_values(idx, d, K)
    if sampler.noise_removal:
        fw += float(mass.sum())  # the noise removal's call, for every run not lost
        left = (vals == K).any(axis=1)
        if left.any():
            h = np.flatnonzero(left)
            P = state_conditionals(Pf, idx[h], d, K)
            top = P.max(axis=-1, keepdims=True)
            tied = (P >= top - TIE_TOL) & (P > 0)
            if sampler.ties == "random":  # each tied maximum with weight 1/m, per position
                W = tied / np.maximum(tied.sum(axis=-1, keepdims=True), 1)
                sp = (tied.sum(axis=-1) > 1).any(axis=1)
            else:  # torch.argmax: the first maximum
                W = np.zeros_like(P)
                np.put_along_axis(W, np.argmax(tied, axis=-1)[..., None], 1.0, axis=-1)
                sp = np.zeros(h.size, dtype=bool)
            rvh = vals[h] < K
            n_, j_ = np.nonzero(rvh)
            W[n_, j_] = 0.0
            W[n_, j_, vals[h][n_, j_]] = 1.0
            row, code, w = _expand(W)  # code: the output's flat index (base-K digits)
            out_m = np.bincount(code, mass[h[row]] * w, minlength=K**d)
            out0 = np.bincount(code, mass0[h[row]] * w * ~sp[row], minlength=K**d)
            keep = ~left
        else:
            out_m, out0, keep = np.zeros(K**d), np.zeros(K**d), np.ones(idx.size, dtype=bool)
    else:
        keep, out_m, out0 = np.ones(idx.size, dtype=bool), np.zeros(K**d), np.zeros(K**d)
    if (vals[keep] == K).any():  # pragma: no cover - eps = 0 or the noise removal fills every mask
        raise AssertionError("remdm_run: masked positions after the last step")
    out_m = out_m + np.bincount(output_index(vals[keep], K), mass[keep], minlength=K**d)
    out0 = out0 + np.bincount(output_index(vals[keep], K), mass0[keep], minlength=K**d)
    tie_mass = max(0.0, (float(out_m.sum()) + lost) - (float(out0.sum()) + lost0))
    return RevisionRun(law=Joint(out_m.reshape(p.table.shape), lost=lost), forwards=fw, pipeline=REMDM_SOURCE,
                       ties=sampler.ties,
                       tie_mass=tie_mass)
