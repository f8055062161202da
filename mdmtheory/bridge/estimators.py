r"""Monte Carlo estimators on any torch MDM (:class:`~mdmtheory.bridge.MaskedModel`).

Notation of docs/design.md §2 (``docs/bridge.md``): data X with law p on [K]^d, model
conditionals :math:`\hat p(x_j \mid x_A)`, the **cross-entropy profile**

.. math:: c(i) = \mathop{\mathrm{mean}}_{|A| = i,\ j \notin A}
          \mathbb E\bigl[-\log \hat p(X_j \mid X_A)\bigr] = \varphi_i + \varepsilon(i),

the MDM training loss at i revealed tokens; :math:`\varphi` the information profile and
:math:`\varepsilon(i) = \mathrm{mean}\, \mathbb E\, \mathrm{KL}(p(\cdot \mid X_A) \,\|\,
\hat p(\cdot \mid X_A))` the learning error. For a Schedule k,
:math:`\sum_t k_t c(s_t) = \mathrm{KL}_{\text{path}}(\hat p, k) + H(X)` (path KL of the
model's random-order sampler plus a constant).

Conventions shared by every estimator
-------------------------------------
* ``samples``: integer (n, d) outcome indices (clean data). Draw g uses sample
  ``g mod n``: the draws of one level use distinct samples when there are enough, and the
  standard error then covers the sampling of the data as well.
* Randomness (reveal sets, orders, reveal times) of draw g is a counter-based hash of
  (seed, stream, g): independent of batching, of the device and of sharding, so
  several processes (:mod:`mdmtheory.bridge.distributed`) reproduce one process.
* Accumulation in float64 of sufficient statistics (counts, sums, sums of squares or of
  outer products); ``forwards`` counts the sequences the model evaluated (all ranks).
* Standard errors are :math:`s/\sqrt n` (ddof = 1); ``ci(confidence)`` is the normal interval.
* Limits (checked before any forward; :mod:`mdmtheory.bridge._checks`): at most
  :data:`~mdmtheory.bridge._checks.MAX_DRAWS` = 2**24 draws per estimate (levels ×
  ``n_per_level``; ``n`` × levels for :func:`compare_plans`; ``n`` elsewhere) and
  :data:`~mdmtheory.bridge._checks.MAX_RESAMPLES` = 10**5 ``n_resamples``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import norm

from ..information.montecarlo import (
    PROFILE_STREAM,  # noqa: F401 (the profile stream, read here by benchmarks)
    chunks as _chunks,
    cross_entropy_sums,
    mean_se as _mean_se,
    reveal as _reveal,
    uniforms as _uniforms,
)
from ..information.dyadic import dyadic_grid, dyadic_terms, dyadic_weights, WEIGHTS
from ..information.profile import Profile, ProfileEstimate
from ..laws.oracles import as_oracle
from ..samplers.simulate import choose_positions, planner_setup
from ..schedules.plans import check_schedule, Grid, Schedule
from .._estimate import Estimate, PlanRecord
from .._moved import renamed_keywords
from .._validate import int_arg, normal_quantile_arg, real_arg, samples_array
from ._checks import check_choice, int_array, MAX_DRAWS, MAX_RESAMPLES, short
from ._dist import all_reduce_sum, world
from .model import as_masked_model
from ..optimal.card import optimal_schedule

__all__ = [
    "ProfileEstimate",
    "PathEstimate",
    "PlanComparison",
    "ScheduleEstimate",
    "FactorizationEstimate",
    "DyadicModelEstimate",
    "estimate_profile",
    "estimate_path_cross_entropy",
    "compare_plans",
    "optimal_schedule_estimate",
    "estimate_factorization_error",
    "estimate_learning_error",
    "estimate_dyadic",
    "uniforms",
]

# streams of the counter-based generator (one per estimator, so estimators never share draws)
_PATH, _FACTOR, _LEARN, _DYADIC, _TIES = 2, 3, 4, 5, 6  # PROFILE_STREAM = 1: information.montecarlo


# -- counter-based randomness (uniforms: information.montecarlo) ----------------------------
class _CounterDraws:
    """The ``rng.random((n, w))`` a planner with ``ties="random"`` asks for (its split ties),
    as uniforms of (seed, stream, draw index, step): independent of batching and sharding like
    every other draw here."""

    def __init__(self, seed: int, index, step: int, n_steps: int):
        self.seed, self.index = seed, np.asarray(index, dtype=np.int64) * (n_steps + 1) + step

    def random(self, shape):
        return _uniforms(self.seed, _TIES, self.index, shape[1])


def uniforms(seed: int, stream: int, index, width: int) -> np.ndarray:
    """Uniforms in [0, 1), shape (len(index), width): the estimators' counter-based draws, a pure
    function of (seed, stream, draw index g, column) (splitmix64, Steele, Lea & Flood 2014; see
    :mod:`mdmtheory.information.montecarlo`).

    ``seed``, ``stream``: integers in 0..2**63 − 1; ``index``: a 1-D array of draw indices in
    0..2**63 − 1, at most ``MAX_DRAWS`` of them; ``width``: 1..2**16 columns (a row's positions).
    """
    seed = int_arg(seed, "seed", 0, hint=" (a seed)")
    stream = int_arg(stream, "stream", 0)
    width = int_arg(width, "width", 1, 1 << 16, hint=" (columns: positions of a row)")
    idx = int_array(index, "index", "of draw indices (1-D)")
    if idx.ndim != 1 or idx.shape[0] > MAX_DRAWS or (idx.size and int(idx.min()) < 0):
        raise ValueError(f"index: expected a 1-D array of at most {MAX_DRAWS} draw indices >= 0, got {short(index)}")
    return _uniforms(seed, stream, idx.astype(np.int64), width)


# -- argument checks ---------------------------------------------------------------------
def _check_seed(seed) -> int:
    return int_arg(seed, "seed", 0, hint=" (an explicit non-negative seed)")


def _check_samples(samples, model, name: str = "samples") -> np.ndarray:
    xs = samples_array(int_array(samples, name, "outcome indices (n, d)"), name)  # int_array: torch tensors too
    model.check_length(xs.shape[1], name)
    model.resolve(xs.shape[1])
    if xs.min() < 0 or xs.max() >= model.K:
        raise ValueError(
            f"{name}: outcome indices must lie in 0..{model.K - 1} (outcome k is token vocab[k]; "
            f"found {int(xs.min())}..{int(xs.max())})"
        )
    return xs.astype(np.int64)


def _check_levels(levels, d: int) -> np.ndarray:
    if levels is None:
        return np.arange(d, dtype=np.int64)
    try:
        lv = np.atleast_1d(int_array(levels, "levels"))
    except ValueError:
        lv = None
    if lv is None or lv.ndim != 1 or lv.shape[0] == 0 or lv.min() < 0 or lv.max() >= d:
        raise ValueError(f"levels: expected distinct integers in 0..{d - 1} (numbers of revealed tokens), got {short(levels)}")
    if np.unique(lv).shape[0] != lv.shape[0]:
        raise ValueError(f"levels: contains repeated levels: {short(levels)}")
    return lv.astype(np.int64)


def _check_count(n, name: str, minimum: int = 2, per: int = 1) -> int:
    """A number of draws, >= minimum; ``per`` draws each (levels) stay within MAX_DRAWS in all."""
    top = MAX_DRAWS // max(per, 1)
    hint = f" (at most {MAX_DRAWS} draws in all: {per} levels x {name})" if per > 1 else ""
    return int_arg(n, name, minimum, max(top, minimum), hint=hint)


def _prepare(model, samples, seed):
    """What every estimator starts with: the model as a MaskedModel, the checked samples
    (int64 outcome indices, which also fixes the model's d) and the checked seed."""
    model = as_masked_model(model)
    return model, _check_samples(samples, model), _check_seed(seed)


def _check_level(level) -> float:
    """A confidence in (0, 1) whose normal quantile is finite (``_validate.normal_quantile_arg``:
    closer to 1 than 1 − 2**−52 the interval would be infinite or NaN)."""
    if isinstance(level, (bool, np.bool_)) or not (isinstance(level, numbers.Real) and 0 < level < 1):
        raise ValueError(f"confidence: expected a confidence level in (0, 1), e.g. 0.95, got {short(level)}")
    normal_quantile_arg(level)
    return float(level)


def _z(level: float) -> float:
    return float(norm.ppf(0.5 + level / 2))


def _masked_nll(model, x_in: np.ndarray, target: np.ndarray, lo: int = 0, hi=None) -> np.ndarray:
    """Sum over the masked positions lo..hi−1 of −log p̂(target_j | x_in), float64 (rows,);
    masked positions outside lo..hi−1 (later blocks) are never scored."""
    lp = model._score(x_in, target, lo, hi)
    return -lp.sum(dim=1).cpu().numpy()


def _check_prompt_length(prompt_length, d: int) -> int:
    if isinstance(prompt_length, (bool, np.bool_)) or not isinstance(prompt_length, numbers.Integral) \
            or not 0 <= prompt_length < d:
        raise ValueError(f"prompt_length: expected an integer in 0..{d - 1} (the first positions of each row are "
                         f"the prompt; at least one response position), got {prompt_length!r}")
    return int(prompt_length)


def _check_response_length(response_length, D: int, g: int) -> int:
    """The response length L (None: every position after the prompt)."""
    if response_length is None:
        return D - g
    if isinstance(response_length, (bool, np.bool_)) or not isinstance(response_length, numbers.Integral) \
            or not 1 <= response_length <= D - g:
        raise ValueError(f"response_length: expected None (every position after the prompt) or an integer in "
                         f"1..{D - g} (positions prompt_length..prompt_length + response_length - 1 are the response, "
                         f"later ones stay masked; rows have {D} positions, prompt_length={g}), got {response_length!r}")
    return int(response_length)


# -- records ---------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class PlanComparison(Estimate):
    r"""Path cross-entropies :math:`\sum_t k_t c(s_t)` of several plans on the same draws.

    Attributes
    ----------
    plans : the Schedules.
    values, stderr : (P,) nats per sequence.
    difference, difference_stderr : (P, P), ``values[a] - values[b]`` from the paired draws
        (H(X) cancels; the standard error uses the covariance of the draws).
    n : draws; forwards : sequences evaluated.
    levels : the levels s_t that were evaluated; level_values : (L,) their c(s) estimates.
    """

    plans: tuple
    values: np.ndarray
    stderr: np.ndarray
    difference: np.ndarray
    difference_stderr: np.ndarray
    n: int
    forwards: int
    levels: np.ndarray
    level_values: np.ndarray

    point = "values"

    @property
    def best(self) -> int:
        """Index of the plan with the least estimated path cross-entropy."""
        return int(np.argmin(self.values))

    def zscore(self, a: int, b: int) -> float:
        """(values[a] − values[b]) / its paired standard error; ``a``, ``b``: plan indices. With a
        zero standard error (a plan against itself, or paired draws that never differ) it is 0
        where the difference is 0 and ±inf otherwise, never NaN."""
        top = len(self.plans) - 1
        a, b = int_arg(a, "a", 0, top, hint=" (a plan index)"), int_arg(b, "b", 0, top, hint=" (a plan index)")
        se, diff = self.difference_stderr[a, b], float(self.difference[a, b])
        if se > 0:
            return float(diff / se)
        return 0.0 if diff == 0 else math.copysign(math.inf, diff)


@dataclass(frozen=True, eq=False)
class PathEstimate(Estimate):
    r""":math:`\sum_t k_t c(s_t)` of one schedule (nats per sequence).

    With an exact model it is :math:`\mathrm{KL}_{\text{path}}(k) + H(X)`.
    ``step_values`` are the terms :math:`k_t\, c(s_t)`.
    """

    value: float
    stderr: float
    n: int
    forwards: int
    plan: Schedule
    step_values: np.ndarray

    @renamed_keywords(level="confidence")
    def ci(self, confidence: float = 0.95) -> tuple[float, float]:
        z = _z(_check_level(confidence))
        return self.value - z * self.stderr, self.value + z * self.stderr


@dataclass(frozen=True, eq=False)
class ScheduleEstimate(Estimate, PlanRecord):
    r"""The optimal schedule of an estimated profile, with its uncertainty.

    Attributes
    ----------
    schedule : the T-step schedule minimizing :math:`\sum_t k_t \hat c(s_t)`.
    value, stderr : its estimated path cross-entropy and standard error
        (:math:`\sqrt{\sum_t k_t^2 \mathrm{se}(s_t)^2}`, levels independent).
    ci : normal interval at ``level`` (the ``confidence`` asked for).
    stability : fraction of resampled profiles whose optimum is ``schedule``.
    alternatives : {sizes: count} of the optima over the resamples (most frequent first).
    n_resamples : number of resampled profiles.
    """

    schedule: Schedule
    value: float
    stderr: float
    ci: tuple[float, float]
    level: float
    stability: float
    alternatives: dict
    n_resamples: int


@dataclass(frozen=True, eq=False)
class FactorizationEstimate(Estimate):
    r"""Factorization error of a sampler along its own path (nats).

    ``kind = "kl"`` (deterministic planner: estimates KL(p‖q) for an exact model) or
    ``"path_kl"`` (random order: the path KL). ``step_means`` (d,) are the mean terms of each
    step (0 past a draw's last step); ``mean_steps`` the mean number of steps and
    ``steps_stderr`` its standard error (the draws' step counts are independent; 0 when every
    draw takes the same number of steps).
    """

    value: float
    stderr: float
    n: int
    forwards: int
    kind: str
    step_means: np.ndarray
    mean_steps: float
    steps_stderr: float = math.nan

    @renamed_keywords(level="confidence")
    def ci(self, confidence: float = 0.95) -> tuple[float, float]:
        z = _z(_check_level(confidence))
        return self.value - z * self.stderr, self.value + z * self.stderr


@dataclass(frozen=True, eq=False)
class DyadicModelEstimate(Estimate):
    r"""W26's dyadic estimate Q of the UGC H(a, b) with the model's conditionals.

    ``value`` estimates :math:`\mathbb E Q` (with the exact model:
    :func:`mdmtheory.information.expected_dyadic_estimate`); ``grid``, ``weights``, ``kind`` as
    in :class:`mdmtheory.information.DyadicEstimate`.
    """

    value: float
    stderr: float
    n: int
    forwards: int
    grid: np.ndarray
    weights: np.ndarray
    kind: str

    @renamed_keywords(level="confidence")
    def ci(self, confidence: float = 0.95) -> tuple[float, float]:
        z = _z(_check_level(confidence))
        return self.value - z * self.stderr, self.value + z * self.stderr


# -- the cross-entropy profile -------------------------------------------------------------
def _level_estimate(w, model, f0, lv, n_per_level, total, sumsq, kind, d) -> ProfileEstimate:
    """All-reduce per-level sums (and the forward count) across ranks; mean and s.e. per level."""
    forwards = np.array([model.forwards - f0], dtype=np.float64)
    total, sumsq, forwards = all_reduce_sum(w, [total, sumsq, forwards], model.device)
    counts = np.full(len(lv), n_per_level, dtype=np.int64)
    mean, se = _mean_se(counts, total, sumsq)
    return ProfileEstimate(lv, mean, se, counts, int(forwards[0]), kind, d)


def estimate_profile(model, samples, *, levels=None, n_per_level: int = 1000, seed: int = 0, distributed=None,
                     prompt_length: int = 0, response_length: int | None = None) -> ProfileEstimate:
    r"""The cross-entropy profile c(i) by Monte Carlo, stratified by level.

    ``prompt_length = g``: the first g positions of every row are a prompt, always visible,
    never masked, scored or counted; levels and the result then refer to the d − g response
    positions and the estimate is the response's profile averaged over the prompts of the
    data (``mt.information_profile(p, given=range(g))`` for an exact model).

    ``response_length = L`` (default: every position after the prompt): positions
    g..g+L−1 are the response; positions ≥ g + L are **always masked**, never revealed nor
    scored (a semi-autoregressive sampler's later blocks while it decodes the current one).
    The estimate is then the profile of the L response positions given the prompt with the
    later positions marginalized: the profile of block b of length L given the prompt and
    the earlier blocks is ``estimate_profile(model, x, prompt_length=g + b*L,
    response_length=L)`` (``mdmtheory.optimal.block_profiles(p, L, given=range(g))[b]`` for
    an exact model).

    Draw g = (level ℓ, r): sample :math:`x` (``g mod n``), a uniformly random revealed set A
    with :math:`|A| = i_\ell`; **one forward** scores every masked position,

    .. math:: Y_g = \frac{1}{d - i} \sum_{j \notin A} -\log \hat p(x_j \mid x_A),
              \qquad \mathbb E\, Y_g = c(i)

    (the MDM loss at i revealed tokens, docs/design.md §2; averaging over j is the conditional
    expectation of the single-position estimator given (x, A), so never worse). Draws of all
    levels are batched together; ``n_per_level`` per level.

    Parameters
    ----------
    model : MaskedModel, or a module/callable accepted by :func:`as_masked_model`.
    samples : integer (n, d) outcome indices.
    levels : integers in 0..d−1 (default: all).
    n_per_level : draws per level (>= 2).
    seed : seed of the counter-based generator.
    distributed : None (use torch.distributed if initialized), True or False.

    Returns
    -------
    ProfileEstimate
    """
    model, xs, seed = _prepare(model, samples, seed)
    D = xs.shape[1]
    gp = _check_prompt_length(prompt_length, D)
    d = _check_response_length(response_length, D, gp)  # only response positions are revealed, scored or counted
    lv = _check_levels(levels, d)
    L = lv.shape[0]
    n_per_level = _check_count(n_per_level, "n_per_level", per=L)
    w = world(distributed)
    f0 = model.forwards
    total, sumsq = cross_entropy_sums(lambda x_in, x: _masked_nll(model, x_in, x, gp, gp + d), xs, lv, n_per_level,
                                      seed, w.shard(L * n_per_level), 4 * model.max_batch, gp, d)
    return _level_estimate(w, model, f0, lv, n_per_level, total, sumsq, "cross_entropy", d)


# -- path cross-entropy of schedules ---------------------------------------------------------
def _check_plans(plans, d: int) -> tuple:
    out = []
    for k, plan in enumerate(plans):
        if isinstance(plan, Grid):
            raise ValueError(f"plans[{k}]: a Grid; the bridge takes Schedules (card sizes summing to d)")
        if not isinstance(plan, Schedule):
            try:
                plan = Schedule(plan)
            except ValueError as exc:
                raise ValueError(f"{f'plans[{k}]' if len(plans) > 1 else 'plan'}: {exc}") from None
        out.append(check_schedule(plan, d, name=f"plans[{k}]" if len(plans) > 1 else "plan"))
    if not out:
        raise ValueError("plans: expected at least one Schedule")
    return tuple(out)


def compare_plans(model, samples, plans, *, n: int = 1000, seed: int = 0, distributed=None,
                  prompt_length: int = 0, response_length: int | None = None) -> PlanComparison:
    r"""Path cross-entropies :math:`\sum_t k_t c(s_t)` of several schedules, paired.

    Draw g: sample x and one uniformly random order π of the positions (common to every
    plan); for every level s that starts a step of some plan, the revealed set is the first s
    positions of π and one forward gives
    :math:`Y_s = \frac{1}{d-s}\sum_{j \notin A_s} -\log \hat p(x_j \mid x_{A_s})`. Plan k's
    estimate is :math:`\sum_t k_t Y_{s_t}` on the same draws, so differences between plans
    have small variance (H(X) and most of the noise cancel); the standard errors come from
    the covariance of the Y's. Forwards: n × (number of distinct levels). With
    ``prompt_length = g`` the plans are schedules of the d − g response positions and the
    prompt is always visible (as in :func:`estimate_profile`); with ``response_length = L``
    the plans are schedules of the L positions g..g+L−1 and later positions stay masked
    (one block of a semi-autoregressive plan, given the prompt and the earlier blocks).
    """
    model, xs, seed = _prepare(model, samples, seed)
    n_s, D = xs.shape
    gp = _check_prompt_length(prompt_length, D)
    d = _check_response_length(response_length, D, gp)  # plans are schedules of the response positions
    if isinstance(plans, (Schedule, Grid)) or (
        isinstance(plans, (list, tuple, np.ndarray)) and len(plans) > 0 and all(isinstance(v, numbers.Integral) for v in plans)
    ):
        plans = [plans]  # one plan given as a Schedule or as its sizes
    if not isinstance(plans, (list, tuple)):
        raise ValueError(f"plans: expected a list of Schedules, got {type(plans).__name__}")
    plans = _check_plans(list(plans), d)
    lv = np.unique(np.concatenate([np.asarray(p.starts) for p in plans]))
    L = lv.shape[0]
    n = _check_count(n, "n", per=L)
    W = np.zeros((len(plans), L))
    for a, p in enumerate(plans):
        for s, k in zip(p.starts, p.sizes):
            W[a, np.searchsorted(lv, s)] += k
    w = world(distributed)
    f0 = model.forwards
    total, outer = np.zeros(L), np.zeros((L, L))
    for g in _chunks(w.shard(n), model.max_batch):
        x = xs[g % n_s]
        u = _uniforms(seed, _PATH, g, d)
        Y = np.empty((g.shape[0], L))
        for li, s in enumerate(lv):
            Y[:, li] = _masked_nll(model, _reveal(x, u, np.full(g.shape[0], s), gp, d), x, gp, gp + d) / (d - s)
        total += Y.sum(axis=0)
        outer += Y.T @ Y
    forwards = np.array([model.forwards - f0], dtype=np.float64)
    total, outer, forwards = all_reduce_sum(w, [total, outer, forwards], model.device)
    mean = total / n
    cov = (outer - n * np.outer(mean, mean)) / (n - 1) / n  # covariance of the mean
    values = W @ mean
    C = W @ cov @ W.T
    var = np.maximum(np.diag(C), 0.0)
    dvar = np.maximum(var[:, None] + var[None, :] - 2 * C, 0.0)
    return PlanComparison(
        plans=plans,
        values=values,
        stderr=np.sqrt(var),
        difference=values[:, None] - values[None, :],
        difference_stderr=np.sqrt(dvar),
        n=n,
        forwards=int(forwards[0]),
        levels=lv,
        level_values=mean,
    )


def estimate_path_cross_entropy(model, samples, plan, *, n: int = 1000, seed: int = 0, distributed=None,
                                prompt_length: int = 0, response_length: int | None = None) -> PathEstimate:
    r""":math:`\sum_t k_t c(s_t)` of one Schedule, nats per sequence (see :func:`compare_plans`).

    With an exact model this is :math:`\mathrm{KL}_{\text{path}}(k) + H(X)`; for any model
    it is the path KL of its random-order sampler plus H(X) (docs/design.md §2).
    ``prompt_length``, ``response_length``: as in :func:`compare_plans` (one block of a
    semi-autoregressive plan: the block's path KL plus H(X_block | prompt, earlier blocks)).
    """
    cmp = compare_plans(model, samples, [plan], n=n, seed=seed, distributed=distributed, prompt_length=prompt_length,
                        response_length=response_length)
    sched = cmp.plans[0]
    steps = np.array([k * cmp.level_values[np.searchsorted(cmp.levels, s)] for s, k in zip(sched.starts, sched.sizes)])
    return PathEstimate(float(cmp.values[0]), float(cmp.stderr[0]), cmp.n, cmp.forwards, sched, steps)


# -- optimal schedule with its uncertainty ----------------------------------------------------
@renamed_keywords(level="confidence")
def optimal_schedule_estimate(estimate: ProfileEstimate, steps: int, *, n_resamples: int = 200, seed: int = 0,
                              confidence: float = 0.95) -> ScheduleEstimate:
    r"""The T-step schedule optimal for an estimated profile, and how sure that is.

    The schedule minimizes :math:`\sum_t k_t \hat c(s_t)` (:func:`mdmtheory.optimal_schedule`,
    exact for any profile). Uncertainty: (i) the standard error of its path cross-entropy
    from the per-level standard errors (levels are independent strata when each draw has its
    own sample; reused samples make this approximate); (ii) ``stability``, the fraction of
    ``n_resamples`` profiles :math:`\hat c + \mathrm{se} \cdot Z` (Z standard normal per level,
    the normal law of each level's mean; ``numpy.random.default_rng(seed)``) whose optimum is
    the same schedule. The value is optimistic (it was selected on the same estimate):
    re-estimate it on fresh draws with :func:`estimate_path_cross_entropy` for an unbiased CI.
    """
    if not isinstance(estimate, ProfileEstimate) or estimate.quantity != "cross_entropy":
        raise ValueError("estimate: expected the ProfileEstimate of estimate_profile (a cross-entropy profile)")
    prof = estimate.profile
    d = prof.d
    steps = int_arg(steps, "steps", 1, d)
    n_resamples = int_arg(n_resamples, "n_resamples", 1, MAX_RESAMPLES)
    seed = _check_seed(seed)
    level = _check_level(confidence)
    sched = optimal_schedule(prof, steps)
    start_of = np.asarray(sched.starts)
    k = np.asarray(sched.sizes)
    value = float(np.dot(k, estimate.values[start_of]))
    stderr = float(np.sqrt(np.dot(k * k, estimate.stderr[start_of] ** 2)))
    rng = np.random.default_rng(seed)
    counts: dict = {}
    for _ in range(n_resamples):
        c = estimate.values + estimate.stderr * rng.standard_normal(d)
        key = optimal_schedule(Profile(c), steps).sizes
        counts[key] = counts.get(key, 0) + 1
    alternatives = dict(sorted(counts.items(), key=lambda kv: -kv[1]))
    z = _z(level)
    return ScheduleEstimate(
        schedule=sched,
        value=value,
        stderr=stderr,
        ci=(value - z * stderr, value + z * stderr),
        level=level,
        stability=counts.get(sched.sizes, 0) / n_resamples,
        alternatives=alternatives,
        n_resamples=n_resamples,
    )


# -- factorization error of a sampler along its own path --------------------------------------
def estimate_factorization_error(model, samples, plan=None, planner="random", *, n: int | None = None, seed: int = 0,
                                 distributed=None, prompt_length: int = 0) -> FactorizationEstimate:
    r"""Factorization error of the model's sampler along the path of each sample, by the chain rule.

    For draw g (sample x): the planner, driven by the model's conditionals
    :math:`\hat p(\cdot \mid x_{A_t})` (its ``select`` method, the very rule of
    :mod:`mdmtheory.samplers.adaptive`; or a uniformly random order cut by the schedule),
    picks :math:`B_t`; inside the step the tokens are scored one at a time (chain rule, in
    the order :math:`b_1, b_2, \dots`: random order for ``"random"``, increasing position
    otherwise):

    .. math:: L(x) = \sum_t \Bigl[\sum_{m} \log \hat p(x_{b_m} \mid x_{A_t \cup
              \{b_1..b_{m-1}\}}) - \sum_{j \in B_t} \log \hat p(x_j \mid x_{A_t})\Bigr].

    With the exact model the chain is :math:`\log p(x_{B_t} \mid x_{A_t})`, so L is the
    pointwise per-step total correlation of :func:`mdmtheory.estimate_kl`:
    :math:`\mathbb E L = \mathrm{KL}(p \,\|\, q)` for a deterministic planner and the path KL
    for the random order. Forwards per draw: d (one per revealed token).

    Parameters
    ----------
    model, samples : as in :func:`estimate_profile` (samples: clean data, x ~ p).
    plan : Schedule, or None for planners with their own sizes (threshold, entropy budget,
        LLaDA blocks with ``steps_per_block``).
    planner : ``"random"``, a registered name or a planner object with ``select``.
    n : number of draws (default: one per sample).
    prompt_length : g; the first g positions of every row are a prompt, revealed from the
        start and never chosen, scored or counted: ``plan`` is a schedule of the D − g
        response positions, the planner sees only those (numbered 0..D−g−1, as
        :func:`mdmtheory.samplers.prompted_kl`), forwards per draw are D − g, and with the
        exact model the expectation is ``mt.samplers.prompted_kl(p, plan, given=range(g),
        planner=...)`` (deterministic planner) or the prompted path KL
        ``mt.path_kl(mt.information_profile(p, given=range(g)), plan)`` (random order).
    """
    model, xs, seed = _prepare(model, samples, seed)
    n_s, D = xs.shape
    gp = _check_prompt_length(prompt_length, D)
    d = D - gp  # the response: what the sampler generates
    n = _check_count(n_s if n is None else n, "n")
    planner, is_random, sizes = planner_setup(plan, planner, d)
    w = world(distributed)
    f0 = model.forwards
    total, sumsq = np.zeros(1), np.zeros(1)
    step_sums = np.zeros(d)
    step_count, step_sq = np.zeros(1), np.zeros(1)
    for g in _chunks(w.shard(n), 4 * model.max_batch):
        x = xs[g % n_s]
        m = g.shape[0]
        # random order of the response
        key = np.concatenate([np.zeros((m, gp)), _uniforms(seed, _FACTOR, g, d)], axis=1)
        revealed = np.zeros((m, D), dtype=bool)
        revealed[:, :gp] = True  # the prompt: visible from the start
        L = np.zeros(m)
        n_steps = np.zeros(m)
        for t, size in enumerate(sizes):
            rows = np.flatnonzero(~revealed.all(axis=1))
            if rows.size == 0:
                break
            xr, rv = x[rows], revealed[rows]
            x_in = np.where(rv, xr, -1)
            free = ~rv
            if is_random:
                lp_single = model.score(x_in, xr).cpu().numpy()
                k = np.where(free, key[rows], np.inf)
                order = np.argsort(k, axis=1, kind="stable")[:, :size]
                chosen = np.zeros_like(free)
                np.put_along_axis(chosen, order, True, axis=1)
                prio = np.where(chosen, key[rows], np.inf)
            else:
                lp = model.log_probs(x_in)
                probs = torch.exp(lp).cpu().numpy()
                lp_single = np.take_along_axis(lp.cpu().numpy(), xr[..., None], axis=2)[..., 0]
                chosen = np.zeros_like(free)  # the planner sees the response positions only
                draws = _CounterDraws(seed, g[rows], t, len(sizes))  # split ties under ties="random"
                chosen[:, gp:] = choose_positions(planner, False, t, size, probs[:, gp:], free[:, gp:], draws)  # select() and its checks
                prio = np.where(chosen, np.arange(D, dtype=np.float64)[None, :], np.inf)
            # position of each chosen token inside its step (0 = first scored)
            member = np.argsort(np.argsort(prio, axis=1, kind="stable"), axis=1, kind="stable")
            member = np.where(chosen, member, D)
            term = np.zeros(rows.size)
            for mm in range(1, int(chosen.sum(axis=1).max())):
                sub = np.flatnonzero(chosen.sum(axis=1) > mm)
                x_mm = np.where(rv[sub] | (member[sub] < mm), xr[sub], -1)
                chain = model.score(x_mm, xr[sub]).cpu().numpy()
                at = member[sub] == mm
                term[sub] += (chain * at).sum(axis=1) - (lp_single[sub] * at).sum(axis=1)
            L[rows] += term
            step_sums[t] += term.sum()
            revealed[rows] = rv | chosen
            n_steps[rows] += 1
            step_count += rows.size
        if not revealed.all():
            raise ValueError("plan: some paths still have masked positions after the last step")
        total += L.sum()
        sumsq += (L * L).sum()
        step_sq += (n_steps * n_steps).sum()
    forwards = np.array([model.forwards - f0], dtype=np.float64)
    total, sumsq, step_sums, step_count, step_sq, forwards = all_reduce_sum(
        w, [total, sumsq, step_sums, step_count, step_sq, forwards], model.device)
    mean, se = _mean_se(n, total, sumsq)
    _, steps_se = _mean_se(n, step_count, step_sq)
    kind = "path_kl" if is_random or not getattr(planner, "deterministic", False) else "kl"
    return FactorizationEstimate(float(mean[0]), float(se[0]), n, int(forwards[0]), kind, step_sums / n, float(step_count[0] / n),
                                 float(steps_se[0]))


# -- learning error ------------------------------------------------------------------------
@renamed_keywords(law="p")
def estimate_learning_error(model, p, *, levels=None, n_per_level: int = 1000, seed: int = 0, distributed=None,
                            prompt_length: int = 0) -> ProfileEstimate:
    r"""The learning error :math:`\varepsilon(i) = c(i) - \varphi_i` where the data law is known.

    Draw g = (level, r): :math:`x \sim p` (``p.sample`` with ``numpy.random.default_rng(seed)``,
    the same on every rank), A uniform with |A| = i, one forward, and the exact KL of the
    two conditionals averaged over the masked positions,

    .. math:: Y_g = \frac{1}{d-i}\sum_{j \notin A}
              \mathrm{KL}\bigl(p(\cdot \mid x_A) \,\|\, \hat p(\cdot \mid x_A)\bigr),
              \qquad \mathbb E\, Y_g = \varepsilon(i)

    (docs/design.md §2; the expectation over :math:`x_j` is done exactly, so this has less
    variance than :math:`\hat c(i) - \varphi_i`). ``p``: a Joint or a conditional oracle.

    ``prompt_length = g``: the first g positions are a prompt, always visible, never masked
    or counted; levels refer to the d − g response positions and the estimate is the
    prompt-averaged learning error of the response,
    :math:`\mathbb E_{x_{<g}}\, \varepsilon_i\bigl(p(\cdot \mid x_{<g}),
    \hat p(\cdot \mid x_{<g})\bigr)` (:func:`estimate_profile` minus
    ``mt.information_profile(p, given=range(g))``).
    """
    model = as_masked_model(model)
    oracle = as_oracle(p)
    D = int(oracle.d)
    model.resolve(D)
    if model.K != oracle.K:
        raise ValueError(f"p: has K={oracle.K} outcomes but the model has K={model.K}")
    seed = _check_seed(seed)
    gp = _check_prompt_length(prompt_length, D)
    d = D - gp
    lv = _check_levels(levels, d)
    L = lv.shape[0]
    n_per_level = _check_count(n_per_level, "n_per_level", per=L)
    xs_all = np.asarray(oracle.sample(L * n_per_level, np.random.default_rng(seed)), dtype=np.int64)
    w = world(distributed)
    f0 = model.forwards
    total, sumsq = np.zeros(L), np.zeros(L)
    for g in _chunks(w.shard(L * n_per_level), model.max_batch):
        ell = g // n_per_level
        i = lv[ell]
        x = xs_all[g]
        x_in = _reveal(x, _uniforms(seed, _LEARN, g, d), i, gp)
        rv = x_in >= 0
        lq = model.log_probs(x_in).cpu().numpy()
        p = np.asarray(oracle.conditionals(np.where(rv, x, 0), rv), dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            kl = np.where(p > 0, p * (np.log(np.where(p > 0, p, 1.0)) - lq), 0.0).sum(axis=-1)
        kl = np.where(rv, 0.0, kl)
        if not np.all(np.isfinite(kl)):
            raise ValueError("model: gives probability 0 to a value the law can take (infinite learning error)")
        Y = kl.sum(axis=1) / (d - i)
        np.add.at(total, ell, Y)
        np.add.at(sumsq, ell, Y * Y)
    return _level_estimate(w, model, f0, lv, n_per_level, total, sumsq, "learning_error", d)


# -- W26's dyadic estimate of the UGC --------------------------------------------------------
class _PromptedOracle:
    r"""The model's leave-one-out conditionals of the response positions of a fixed batch of
    rows whose prompts (first g positions) are always revealed: the ``loo_conditionals``
    that :func:`mdmtheory.information.dyadic_terms` reads, for an oracle of dimension D − g.

    Row j is :math:`\hat p(x_j = \cdot \mid x_{\text{prompt}}, x_{A \setminus \{j\}})`:
    the ordinary conditional for a masked j, one more forward with j masked for a revealed
    response position j (as :func:`mdmtheory.laws.loo_conditionals`); a prompt
    position is never masked.
    """

    def __init__(self, model, prompts: np.ndarray, d: int):
        self.model, self.prompts, self.d, self.K = model, prompts, d, model.K

    def _probs(self, prompts, x, revealed):
        inp = np.concatenate([prompts, np.where(revealed, x, -1)], axis=1)
        return torch.exp(self.model.log_probs(inp)).cpu().numpy()[:, prompts.shape[1]:]

    def conditionals(self, x, revealed):
        revealed = np.asarray(revealed, dtype=bool)
        return np.where(revealed[..., None], 0.0, self._probs(self.prompts, np.asarray(x, dtype=np.int64), revealed))

    def loo_conditionals(self, x, revealed):
        x, revealed = np.asarray(x, dtype=np.int64), np.asarray(revealed, dtype=bool)
        out = self._probs(self.prompts, x, revealed)
        rows, cols = np.nonzero(revealed)
        for lo in range(0, rows.size, 1 << 16):
            r, c = rows[lo : lo + (1 << 16)], cols[lo : lo + (1 << 16)]
            rev = revealed[r].copy()
            rev[np.arange(r.size), c] = False
            out[r, c] = self._probs(self.prompts[r], x[r], rev)[np.arange(r.size), c]
        return out


@renamed_keywords(a="start", b="stop")
def estimate_dyadic(model, samples, start: float, stop: float, *, weights: str = "corrected", n: int | None = None,
                    seed: int = 0, distributed=None, prompt_length: int = 0) -> DyadicModelEstimate:
    r"""W26 §4's dyadic estimator Q of the UGC H(a, b) (a = ``start``, b = ``stop``), with the
    model's conditionals.

    As :func:`mdmtheory.information.dyadic_estimate` (the coupling of its module docstring), with
    :math:`\hat p` in place of p: draw g has a clean sample x and iid uniform reveal times U
    (counter-based); at each grid time :math:`v_j`,
    :math:`\hat\mu_i(\cdot, X_{v_j|i}) = \hat p(x_i = \cdot \mid x_{\{k \ne i : U_k \le v_j\}})`,
    and

    .. math:: Q = \sum_j w_j \sum_i \mathrm{KL}\bigl(\hat\mu_i(\cdot, X_{v_{j+1}|i}) \,\|\,
              \hat\mu_i(\cdot, X_{v_j|i})\bigr).

    Weights ``"corrected"`` :math:`v_j(1 - v_{j+1})` (:math:`\mathbb E Q \le H \le 2\,
    \mathbb E Q` always) or W26's ``"stated"`` :math:`v_{j+1} - v_j` (fails on a partial last
    interval; docs/theory.md §5). Forwards per draw and grid time: 1 + the number of revealed
    positions (each needs its own forward with itself masked).

    ``prompt_length = g``: the first g positions are a prompt, revealed at every time (never
    given a reveal time, never left out, never summed over); Q is the dyadic estimate of the
    response given the prompt, and with the exact model its expectation is
    :math:`\sum_v p(x_{<g} = v)\, \mathbb E Q\bigl(p(\cdot \mid x_{<g} = v)\bigr)`.
    Forwards per draw and grid time: 1 + the number of revealed response positions.
    """
    model, xs, seed = _prepare(model, samples, seed)
    n_s, D = xs.shape
    gp = _check_prompt_length(prompt_length, D)
    d = D - gp
    n = _check_count(n_s if n is None else n, "n")
    a, b = real_arg(start, "start"), real_arg(stop, "stop")
    weights = check_choice(weights, "weights", WEIGHTS)
    v = dyadic_grid(a, b)
    wts = dyadic_weights(v, weights)
    w = world(distributed)
    f0 = model.forwards
    total, sumsq = np.zeros(1), np.zeros(1)
    for g in _chunks(w.shard(n), max(1, model.max_batch // max(1, d))):
        x = xs[g % n_s]
        U = _uniforms(seed, _DYADIC, g, d)
        oracle = _PromptedOracle(model, x[:, :gp], d)
        T, _ = dyadic_terms(oracle, x[:, gp:], U, v, form="kl")  # leave-one-out conditionals of the model
        if not np.all(np.isfinite(T)):
            raise ValueError("model: a conditional gives probability 0 where a later one does not (infinite KL)")
        Q = T @ wts
        total += Q.sum()
        sumsq += (Q * Q).sum()
    forwards = np.array([model.forwards - f0], dtype=np.float64)
    total, sumsq, forwards = all_reduce_sum(w, [total, sumsq, forwards], model.device)
    mean, se = _mean_se(n, total, sumsq)
    return DyadicModelEstimate(float(mean[0]), float(se[0]), n, int(forwards[0]), v, wts, weights)
