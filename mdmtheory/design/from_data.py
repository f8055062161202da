r"""Schedule design for new data: data (or a model) → profile → optimal schedule → exports.

Two routes (docs/design-from-data.md):

* **exact** — the empirical law of the samples, :math:`\hat p(x) = \#\{x\}/n`, when its
  dense table fits (:math:`K^d \le` ``exact_limit``) and no model is given: its exact
  information profile, the exact optimal schedule (:func:`mdmtheory.optimal_schedule`) and
  its exact path KL *on the empirical law*.
* **estimated** — with ``model`` (a TinyMDM, an nn.Module with ``mask_id``, or a
  conditional oracle), or when the table is too large (then the model is the empirical law
  itself, :func:`mdmtheory.laws.empirical_oracle`): the cross-entropy profile
  :math:`c(m) = \mathbb E_{x, |A| = m, j \notin A}[-\log q(x_j \mid x_A)]` estimated on
  the samples with standard errors (:func:`mdmtheory.bridge.estimate_profile` for torch
  models, the same estimator in numpy for oracles), the optimal schedule for c (exact DP
  on the estimate), and the schedule's Riemann defect
  :math:`\sum_t k_t c(s_t) - \sum_m c(m)` — the model's path KL up to a
  schedule-independent learning error (:func:`mdmtheory.path_kl`) — with a normal
  confidence interval (levels are estimated independently, so the variance is
  :math:`\sum_m w_m^2 \mathrm{se}_m^2` with the defect's weights :math:`w_m`).

With ``target_kl`` instead of ``steps``: the fewest steps whose path KL (exact) or whose upper
confidence bound (estimated) is ``<= target_kl``. The interval does not account for choosing
the schedule on the same estimate (selection optimism); use fresh samples to confirm.

**Memorization** (:func:`memorization`). Both routes without a model design for the
*empirical* law. When a row's revealed context :math:`x_A` is shared by no other row, the
empirical conditional :math:`\hat p(\cdot \mid x_A)` is the point mass at that row's own
tokens: its term in the level-m profile is exactly 0 whatever law produced the data, and the
held-out (leave-one-out) conditional at that draw is undefined — nothing else in the data
speaks for it. The fraction u(m) of such (row, A) draws at level m is the memorized part of
that level. With n ≪ K^d it approaches 1 as m grows, the empirical profile drops to 0 and
the optimal schedule ends with a large step that only the memorized rows justify. The result
is flagged ``memorized`` when u(m) > :data:`MEMORIZATION_THRESHOLD` (= 1/2: most of that
level's profile is zero by construction) at some level, with a ``warning`` naming the
honest routes (a model, ``mdmtheory train``, a structured law fitted to the data).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from .._estimate import PlanRecord
from .._moved import renamed_keyword
from ..information.profile import information_profile, Profile
from ..laws.joint import MAX_OUTCOMES
from ..optimal.card import optimal_schedule, pareto_frontier, schedule_path_kl
from ..schedules.plans import Schedule
from .._validate import (int_arg as _int_arg, normal_quantile_arg, real_arg as _real_arg, row_length,
                         samples_array as _samples_array)
from .profile import (
    _check_model,
    defect_weights,
    estimate_cross_entropy_profile,
    EXACT_LIMIT,
    Memorization,
    memorization,
    _memorization_warning,
    profile_warning,
    _window,
)
from ..optimal import blocks
from .blocks import check_view, estimate_design_blocks
from .._moved import module_getattr

__all__ = [
    "Design",
    "design",
    "design_blocks_from_data",
]


@dataclass(frozen=True)
class Design(PlanRecord):
    r"""Result of :func:`design`.

    ``method`` is ``"exact"`` (empirical law used exactly) or ``"estimated"``; ``path_kl`` is
    the exact path KL on the empirical law, or the estimated Riemann defect with ``ci``
    (two-sided, level ``confidence``); ``path_cross_entropy`` (estimated only) is
    :math:`\sum_t k_t c(s_t)`, nats per sequence, with ``ci_cross_entropy``.
    ``memorization`` (without a model: the data's empirical law is designed on) is
    :func:`memorization` of the samples; ``warning`` is set when it flags the profile as
    memorized (then the schedule is an artefact of the rows; see the module docstring) and, with a
    model, when its profile rises or is worse than uniform (:func:`~.profile.profile_warning`,
    the rule ``mdmtheory schedule --profile`` applies too).
    ``prompt_length`` g: the schedule and profile are of the d − g response positions.
    ``target_kl`` is the path-KL target asked for (None when ``steps`` was given; ``.budget``
    reads it for one release).
    """

    schedule: Schedule
    method: str
    profile: Profile
    stderr: np.ndarray | None
    path_kl: float
    ci: tuple | None
    path_cross_entropy: float | None
    ci_cross_entropy: tuple | None
    n: int
    d: int
    K: int
    target_kl: float | None
    confidence: float
    note: str
    memorization: Memorization | None = None
    warning: str | None = None
    prompt_length: int = 0


    @property
    def memorized(self) -> bool:
        """Whether the empirical profile is memorized (:func:`memorization`); False with a model."""
        return self.memorization is not None and self.memorization.memorized

    @property
    def budget(self) -> float | None:
        """The path-KL target under its old name (``target_kl``; a budget is a number of steps)."""
        import warnings

        warnings.warn("Design.budget is now Design.target_kl (a budget is a number of steps or forwards); the old "
                      "keyword works for one release (docs/design.md, 'Vocabulary')",
                      DeprecationWarning, stacklevel=2)
        return self.target_kl

    @property
    def steps(self) -> int:
        return self.schedule.steps

    @property
    def sizes(self) -> tuple:
        return self.schedule.sizes


# -- design ------------------------------------------------------------------------------------
def _samples_and_K(samples, K):
    """The samples as an (n, d) integer array of outcome indices and the alphabet size K
    (default max + 1, at least 2), checked; rows of at most 2**16 tokens (``_validate.LIMITS``)."""
    x = _samples_array(samples, "samples")
    row_length(x.shape[1])
    K = max(int(x.max()) + 1, 2) if K is None else _int_arg(K, "K", 2)
    return _samples_array(x, "samples", K=K), K


def design(
    samples,
    *,
    K: int | None = None,
    model=None,
    steps: int | None = None,
    target_kl: float | None = None,
    exact_limit: int = EXACT_LIMIT,
    n_per_level: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    prompt_length: int = 0,
    **old,
) -> Design:
    r"""The optimal schedule for data (module docstring): exactly on the empirical law when
    it is small enough and no model is given, else from an estimated profile.

    Parameters
    ----------
    samples : int array (n, d), outcome indices 0..K−1 (e.g. from
        :func:`mdmtheory.data.load_sequences`).
    K : alphabet size (default max + 1, at least 2).
    model : optional; a TinyMDM (or an ``nn.Module`` with ``mask_id``) or a conditional oracle.
        Without one, a table over ``exact_limit`` is estimated on the empirical law's own
        conditionals (the profile's estimate then targets the empirical law's profile).
    steps, target_kl : exactly one: T in 1..d, or a path-KL target > 0 (nats): the fewest
        steps within it (``budget=`` for one release, with a DeprecationWarning).
    exact_limit : largest K**d designed on exactly (at most ``MAX_OUTCOMES``).
    n_per_level, seed, confidence : the estimator's draws per level, seed, CI level.
    prompt_length : the first g positions of every row are a prompt (always visible): the
        design is for the d − g response positions, on the profile of the response given the
        prompt averaged over the data's prompts (exact: ``information_profile(p̂, given=
        range(g))``; estimated: ``estimate_cross_entropy_profile(..., prompt_length=g)``).
    """
    target_kl = renamed_keyword(old, "budget", "target_kl", target_kl, None, where="design")
    if old:
        raise TypeError(f"design() got an unexpected keyword argument {next(iter(old))!r}")
    x, K = _samples_and_K(samples, K)
    n, d = x.shape
    if (steps is None) == (target_kl is None):
        raise ValueError("steps/target_kl: give exactly one of steps (T) or target_kl (EPS)")
    g, r = _window(prompt_length, None, d)
    if steps is not None:
        steps = _int_arg(steps, "steps", 1, r, f" (T must be <= {r}, the response length: each step reveals at "
                         "least one token)")
    if target_kl is not None:
        target_kl = _real_arg(target_kl, "target_kl")
        if target_kl <= 0:
            raise ValueError(f"target_kl: expected EPS > 0 nats, got {target_kl}")
    exact_limit = _int_arg(exact_limit, "exact_limit", 1, MAX_OUTCOMES)
    n_per_level = _int_arg(n_per_level, "n_per_level", 2)  # documented limit: _validate.LIMITS
    normal_quantile_arg(confidence)  # in (0, 1) with a finite quantile (never a (nan, nan) interval)
    confidence = float(confidence)
    z = float(norm.ppf(0.5 + confidence / 2))
    small = d * math.log(K) <= math.log(exact_limit) + 1e-12
    mem = warning = None
    if model is None:
        mem = memorization(x, seed=seed, prompt_length=g)
        warning = _memorization_warning(mem, K, d) if mem.memorized else None
    given = f", given the prompt (first {g} positions)" if g else ""

    if model is None and small:
        from ..laws.families import empirical

        prof = information_profile(empirical(x, K), given=range(g)) if g else information_profile(empirical(x, K))
        if steps is not None:
            sched = optimal_schedule(prof, steps)
        else:
            front = pareto_frontier(prof, r)
            sched = next(front.schedule(T) for T in range(1, r + 1) if schedule_path_kl(prof, front.schedule(T)) <= target_kl)
        note = f"exact: the empirical law of the {n} sequences ({K}^{d} = {K**d} cells) is used exactly{given}"
        return Design(sched, "exact", prof, None, schedule_path_kl(prof, sched), None, None, None,
                      n, d, K, target_kl, confidence, note, mem, warning, g)

    if model is None:
        # too large for a dense table: the empirical law's own conditionals (a mixture of point
        # masses, one per distinct row), so the estimate is of the empirical law's profile
        from ..laws.oracles import empirical_oracle

        law, what = empirical_oracle(x, K), f"the empirical law ({K}^{d} cells, over exact_limit={exact_limit})"
    else:
        _check_model(model, K)
        law, what = model, "the model"
    est = estimate_cross_entropy_profile(law, x, n_per_level=n_per_level, seed=seed, prompt_length=g)
    c, se = est.values, est.stderr
    prof = Profile(c)

    def stats(s):
        w = defect_weights(s)
        kl = float(np.sum(w * c))
        sd = float(math.sqrt(np.sum((w * se) ** 2)))
        k = w + 1  # k_t at s_t, else 0: the path cross-entropy's weights
        ce = float(np.sum(k * c))
        sdce = float(math.sqrt(np.sum((k * se) ** 2)))
        return kl, (kl - z * sd, kl + z * sd), ce, (ce - z * sdce, ce + z * sdce)

    if steps is not None:
        sched = optimal_schedule(prof, steps)
    else:
        front = pareto_frontier(prof, r)
        sched = next(front.schedule(T) for T in range(1, r + 1) if stats(front.schedule(T))[1][1] <= target_kl)
    kl, ci, ce, ci_ce = stats(sched)
    if model is not None:  # the empirical law's own profile cannot be worse than uniform
        warning = profile_warning(c, K, stderr=se)
    note = (
        f"estimated: cross-entropy profile of {what} on {n} sequences{given}, {n_per_level} draws per level "
        f"({est.forwards} forward rows); {int(round(confidence * 100))}% normal CIs"
    )
    return Design(sched, "estimated", prof, se, kl, ci, ce, ci_ce, n, d, K, target_kl, confidence, note, mem, warning, g)


def design_blocks_from_data(
    samples,
    *,
    K: int | None = None,
    model=None,
    forwards: int | None = None,
    target_kl: float | None = None,
    block_lengths=None,
    prompt_length: int = 0,
    exact_limit: int = EXACT_LIMIT,
    n_per_level: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    view: str = "masked",
    **old,
):
    r"""Block (semi-autoregressive) design for data: the routes of :func:`design`, with
    blocks (:mod:`mdmtheory.optimal.blocks`).

    Exactly :func:`mdmtheory.optimal.design_blocks` on the empirical law (given the prompt)
    when it is small enough and no model is given; else
    :func:`mdmtheory.design.estimate_design_blocks` on the model (or on the empirical law's
    own conditionals when the table is too large), each candidate with its CI. Returns a
    :class:`mdmtheory.optimal.BlockDesign`. Without a model the data's memorization is checked
    as in :func:`design` (with the prompt as context) and a memorized empirical law is
    flagged in ``note`` with the honest routes. ``forwards`` or ``target_kl`` (a path-KL
    target in nats; ``budget=`` for one release, with a DeprecationWarning), as in
    :func:`mdmtheory.optimal.design_blocks`. ``view``: what the model sees of the later blocks
    (:func:`mdmtheory.design.estimate_block_profiles`; the exact route marginalizes them, which is
    both views of an exact law).
    """
    target_kl = renamed_keyword(old, "budget", "target_kl", target_kl, None, where="design_blocks_from_data")
    if old:
        raise TypeError(f"design_blocks_from_data() got an unexpected keyword argument {next(iter(old))!r}")
    x, K = _samples_and_K(samples, K)
    n, d = x.shape
    g, _ = _window(prompt_length, None, d)
    exact_limit = _int_arg(exact_limit, "exact_limit", 1, MAX_OUTCOMES)
    view = check_view(view)
    normal_quantile_arg(confidence)  # before the memorization check and the exact route
    n_per_level = _int_arg(n_per_level, "n_per_level", 2)  # also on the exact route, which does not use it
    warn = ""
    if model is None:
        mem = memorization(x, seed=seed, prompt_length=g)
        warn = f"; WARNING: {_memorization_warning(mem, K, d)}" if mem.memorized else ""
        if d * math.log(K) <= math.log(exact_limit) + 1e-12:
            from ..laws.families import empirical

            res = blocks.design_blocks(empirical(x, K), forwards=forwards, target_kl=target_kl,
                                       block_lengths=block_lengths, given=range(g))
            note = f"exact: block profiles of the empirical law of the {n} sequences ({K}^{d} cells) given the prompt"
            return blocks.BlockDesign(res.candidates, res.best, "exact", note + warn, view)
        from ..laws.oracles import empirical_oracle

        law = empirical_oracle(x, K)
    else:
        _check_model(model, K)
        law = model
    res = estimate_design_blocks(law, x, forwards=forwards, target_kl=target_kl, block_lengths=block_lengths,
                                       prompt_length=g, n_per_level=n_per_level, seed=seed, confidence=confidence,
                                       view=view)
    return blocks.BlockDesign(res.candidates, res.best, "estimated", res.note + warn, res.view, res.rising)


def __getattr__(name):
    """Old names of this module (``_moved.NAMES``), working for one release with a warning."""
    return module_getattr(__name__, name)
