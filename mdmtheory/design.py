r"""Schedule design for new data: data (or a model) → profile → optimal schedule → exports.

Two routes (docs/design-from-data.md):

* **exact** — the empirical law of the samples, :math:`\hat p(x) = \#\{x\}/n`, when its
  dense table fits (:math:`K^d \le` ``exact_limit``) and no model is given: its exact
  information profile, the exact optimal schedule (:func:`mdmtheory.optimal_schedule`) and
  its exact path KL *on the empirical law*.
* **estimated** — with ``model`` (a TinyMDM, an nn.Module with ``mask_id``, or a
  conditional oracle), or when the table is too large (then the model is the empirical law
  itself, :func:`mdmtheory.certificate.empirical_oracle`): the cross-entropy profile
  :math:`c(m) = \mathbb E_{x, |A| = m, j \notin A}[-\log q(x_j \mid x_A)]` estimated on
  the samples with standard errors (:func:`mdmtheory.bridge.estimate_profile` for torch
  models, the same estimator in numpy for oracles), the optimal schedule for c (exact DP
  on the estimate), and the schedule's Riemann defect
  :math:`\sum_t k_t c(s_t) - \sum_m c(m)` — the model's path KL up to a
  schedule-independent learning error (:func:`mdmtheory.path_kl`) — with a normal
  confidence interval (levels are estimated independently, so the variance is
  :math:`\sum_m w_m^2 \mathrm{se}_m^2` with the defect's weights :math:`w_m`).

With ``budget`` instead of ``steps``: the fewest steps whose path KL (exact) or whose upper
confidence bound (estimated) is ``<= budget``. The interval does not account for choosing
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

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from ._validate import int_arg as _int_arg
from ._validate import real_arg as _real_arg
from .joint import MAX_OUTCOMES
from .optimal import optimal_schedule, pareto_frontier, schedule_path_kl
from .profile import Profile, information_profile
from .schedules import Schedule

__all__ = ["Design", "Memorization", "ProfileEstimate", "design", "block_design", "estimate_profile", "defect_weights",
           "memorization", "MEMORIZATION_THRESHOLD"]

#: Default largest empirical table (K**d cells) designed on exactly (the dense limit, 2**24).
EXACT_LIMIT = MAX_OUTCOMES

#: A level is memorized when more than this fraction of its (row, revealed set) draws have a
#: context shared by no other row (module docstring, "Memorization").
MEMORIZATION_THRESHOLD = 0.5

#: Revealed sets per level in :func:`memorization` (all of them when a level has fewer).
MEMORIZATION_SUBSETS = 64


@dataclass(frozen=True)
class ProfileEstimate:
    """Estimated cross-entropy profile: ``values[m]`` ± ``stderr[m]`` at ``levels[m]`` revealed."""

    levels: np.ndarray
    values: np.ndarray
    stderr: np.ndarray
    forwards: int


@dataclass(frozen=True)
class Design:
    r"""Result of :func:`design`.

    ``method`` is ``"exact"`` (empirical law used exactly) or ``"estimated"``; ``path_kl`` is
    the exact path KL on the empirical law, or the estimated Riemann defect with ``ci``
    (two-sided, level ``confidence``); ``path_cross_entropy`` (estimated only) is
    :math:`\sum_t k_t c(s_t)`, nats per sequence, with ``ci_cross_entropy``.
    ``memorization`` (without a model: the data's empirical law is designed on) is
    :func:`memorization` of the samples; ``warning`` is set when it flags the profile as
    memorized (then the schedule is an artefact of the rows; see the module docstring).
    ``prompt_length`` g: the schedule and profile are of the d − g response positions.
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
    budget: float | None
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
    def steps(self) -> int:
        return self.schedule.steps

    @property
    def sizes(self) -> tuple:
        return self.schedule.sizes


@dataclass(frozen=True)
class Memorization:
    r"""Result of :func:`memorization`: how much of the empirical profile is memorized rows.

    ``unique[m]`` is u(m), the fraction of (row, revealed set A with |A| = m) pairs whose
    context :math:`x_A` no other row shares, ± ``stderr[m]`` (0 where every A of that size
    was enumerated); ``memorized_from`` is the first level with u(m) > ``threshold`` (None
    if none), ``memorized`` whether there is one; ``distinct`` is the number of distinct rows.
    """

    unique: np.ndarray
    stderr: np.ndarray
    subsets: np.ndarray
    threshold: float
    memorized_from: int | None
    n: int
    distinct: int

    @property
    def memorized(self) -> bool:
        return self.memorized_from is not None

    def to_dict(self) -> dict:
        return {"memorized": self.memorized, "memorized_from": self.memorized_from, "threshold": self.threshold,
                "unique_context": self.unique.tolist(), "unique_context_stderr": self.stderr.tolist(),
                "subsets": self.subsets.tolist(), "n": self.n, "distinct_rows": self.distinct}


def _unique_fractions(x: np.ndarray, subsets: np.ndarray, K: int) -> np.ndarray:
    """For each row of ``subsets`` (S, m) of column indices: the fraction of the rows of x whose
    restriction to those columns occurs once in x."""
    S, m = subsets.shape
    n = x.shape[0]
    if m == 0:
        return np.full(S, 1.0 if n == 1 else 0.0)
    if m * math.log2(K) < 62:  # one exact mixed-radix integer per row and subset, one sort per level
        keys = np.sort(x[:, subsets] @ (K ** np.arange(m, dtype=np.int64)), axis=0)  # (n, S)
        if n == 1:
            return np.ones(S)
        new = np.ones((n + 1, S), bool)
        new[1:-1] = keys[1:] != keys[:-1]  # a value starts at i (and the next one at i + 1)
        return np.mean(new[:-1] & new[1:], axis=0)  # unique: starts at i and the next starts at i + 1
    out = np.empty(S)
    for s_, A in enumerate(subsets):  # exact, slower: rows as byte strings
        sub = np.ascontiguousarray(x[:, A])
        key = sub.view(np.dtype((np.void, sub.dtype.itemsize * m))).ravel()
        _, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
        out[s_] = np.mean(cnt[inv.ravel()] == 1)
    return out


def memorization(samples, *, subsets: int = MEMORIZATION_SUBSETS, seed: int = 0,
                 threshold: float = MEMORIZATION_THRESHOLD, prompt_length: int = 0) -> Memorization:
    r"""The memorized part of the empirical profile of ``samples`` (module docstring).

    .. math:: u(m) = \Pr_{i, |A| = m}\big[\,\nexists\, i' \ne i : x_{i', A} = x_{i, A}\big],

    i uniform over the n rows, A uniform among the subsets of size m. At such a draw the
    empirical conditional of every masked token is a point mass (its profile term is 0) and
    the leave-one-out conditional is undefined. For each level, u(m) is averaged over every
    subset of size m when there are at most ``subsets`` of them (exact), else over
    ``subsets`` uniform draws (seeded; ``stderr`` is their standard error). Duplicated rows
    share their contexts, so an n ≫ K^d sample has u ≈ 0 at every level.

    ``prompt_length = g``: the context is the prompt (positions 0..g−1, always revealed)
    and m response positions; levels m = 0..d−g−1.
    """
    x = np.asarray(samples)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1 or x.dtype.kind not in "iu":
        raise ValueError(f"samples: expected an integer array (n, d) with n, d >= 1, got shape {x.shape}, dtype {x.dtype}")
    S = _int_arg(subsets, "subsets", 2)
    threshold = _real_arg(threshold, "threshold")
    if not 0 <= threshold < 1:
        raise ValueError(f"threshold: expected a fraction in [0, 1), got {threshold}")
    rng = np.random.default_rng(_int_arg(seed, "seed", 0))
    n, D = x.shape
    g, d = _window(prompt_length, None, D)
    x = x.astype(np.int64)
    K = max(int(x.max()) + 1, 2)
    u, se, used = np.zeros(d), np.zeros(d), np.zeros(d, np.int64)
    for m in range(d):
        if math.comb(d, m) <= S:
            subs = np.array(list(itertools.combinations(range(d), m)), dtype=np.int64).reshape(math.comb(d, m), m)
        else:
            subs = np.sort(np.argsort(rng.random((S, d)), axis=1)[:, :m], axis=1)
        if g:
            subs = np.concatenate([np.broadcast_to(np.arange(g), (subs.shape[0], g)), subs + g], axis=1)
        vals = _unique_fractions(x, subs, K)
        if len(vals) < math.comb(d, m):
            se[m] = float(np.std(vals, ddof=1) / math.sqrt(len(vals)))
        u[m], used[m] = float(np.mean(vals)), len(vals)
    over = np.flatnonzero(u > threshold)
    distinct = int(np.unique(x, axis=0).shape[0])
    return Memorization(u, se, used, threshold, int(over[0]) if over.size else None, n, distinct)


def _memorization_warning(mem: Memorization, K: int, d: int) -> str:
    m = mem.memorized_from
    return (
        f"memorized: with m = {m} of d = {d} tokens revealed, {mem.unique[m]:.0%} of the rows have a context that "
        f"no other row shares (n = {mem.n} rows, {mem.distinct} distinct, K^d = {K}^{d}); at such contexts the "
        "empirical profile is 0 by construction, so this schedule fits the rows, not the law they come from. "
        "Design from a model instead: --model CKPT (a trained MDM), `mdmtheory train DATA --out M.safetensors` "
        "then `mdmtheory design DATA --model M.safetensors`, or in Python a structured law fitted to the data "
        "(e.g. mdmtheory.structured.MarkovChainLaw) passed as design(samples, model=law)"
    )


def defect_weights(schedule: Schedule) -> np.ndarray:
    r"""Weights :math:`w_m` with :math:`\sum_t k_t c(s_t) - \sum_m c(m) = \sum_m w_m c(m)`."""
    w = -np.ones(schedule.d)
    for s, k in zip(schedule.starts, schedule.sizes):
        w[s] += k
    return w


# -- estimation --------------------------------------------------------------------------------
def _is_oracle(model) -> bool:
    return all(hasattr(model, a) for a in ("d", "K", "conditionals")) and not hasattr(model, "forward")


def model_outcomes(model) -> int | None:
    """The number of outcomes a model scores, where it can be read without a forward: an
    oracle's ``K``, a TinyMDM's ``config.vocab_size``, a ``MaskedModel`` with a known vocabulary
    (None otherwise)."""
    if _is_oracle(model):
        return int(model.K)
    vs = getattr(getattr(model, "config", None), "vocab_size", None)
    if type(model).__name__ == "TinyMDM" and vs is not None:
        return int(vs)
    if type(model).__name__ == "MaskedModel":
        try:
            return int(model.K)
        except ValueError:  # vocabulary not resolved yet
            return None
    return None


def check_model_outcomes(model, K: int) -> None:
    """One rule for every kind of model (oracle or torch): it must score exactly the K
    outcomes of the data (K as given, or max + 1 of the data)."""
    m = model_outcomes(model)
    if m is not None and m != K:
        raise ValueError(f"model: has K={m} outcomes, the data have K={K}; pass K={m} if the data simply "
                         "do not use every outcome of the model")


def _check_model(model, K: int) -> None:
    """Refuse what has no masked-diffusion profile, before any work."""
    check_model_outcomes(model, K)
    if _is_oracle(model):
        return
    if getattr(model, "causal", False) or getattr(getattr(model, "config", None), "causal", False):
        raise ValueError("model: a causal (autoregressive) model has no masked-diffusion profile; use an MDM checkpoint")
    if not hasattr(model, "mask_id") and type(model).__name__ != "MaskedModel":
        raise ValueError(
            f"model: expected a TinyMDM checkpoint, an nn.Module with a mask_id, a bridge.MaskedModel or a "
            f"conditional oracle, got {type(model).__name__}"
        )


def _window(prompt_length, response_length, d: int) -> tuple[int, int]:
    """(g, L) checked: the prompt is positions 0..g−1, the response g..g+L−1, the rest masked."""
    if isinstance(prompt_length, (bool, np.bool_)) or not isinstance(prompt_length, (int, np.integer)) \
            or not 0 <= prompt_length < d:
        raise ValueError(f"prompt_length: expected an integer in 0..{d - 1} (the first positions of each row are "
                         f"the prompt; at least one response position), got {prompt_length!r}")
    g = int(prompt_length)
    if response_length is None:
        return g, d - g
    if isinstance(response_length, (bool, np.bool_)) or not isinstance(response_length, (int, np.integer)) \
            or not 1 <= response_length <= d - g:
        raise ValueError(f"response_length: expected an integer in 1..{d - g} (positions after the prompt; "
                         f"None for all of them), got {response_length!r}")
    return g, int(response_length)


def estimate_profile(model, samples, *, n_per_level: int = 1000, seed: int = 0, batch: int = 512,
                     prompt_length: int = 0, response_length: int | None = None) -> ProfileEstimate:
    r"""Cross-entropy profile of ``model`` on ``samples``, with standard errors.

    For each level m = 0..d−1: ``n_per_level`` sequences drawn from ``samples`` with
    replacement and a uniformly random revealed set of size m each (seeded); the value of
    one draw is the mean of :math:`-\log q(x_j \mid x_A)` over its d − m masked positions
    (an unbiased draw of c(m)); the estimate is the mean of the draws and its standard
    error their standard deviation over √n.

    Torch models (a TinyMDM, an ``nn.Module`` with ``mask_id``, a ``bridge.MaskedModel``) go
    through :func:`mdmtheory.bridge.estimate_profile` (batched, seeded per draw,
    distributed-ready); a conditional oracle (``d``, ``K``, ``conditionals``) is scored
    here with numpy, so designing from an oracle needs no torch.

    ``prompt_length = g``: positions 0..g−1 are always revealed and never scored; the levels
    are m = 0..L−1 revealed *response* positions, L = ``response_length`` (default d − g).
    Positions g + L.. are always masked and never scored (the later blocks of a
    semi-autoregressive sampler; :func:`mdmtheory.blocks.estimate_block_profiles`).
    """
    x_all = np.asarray(samples)
    n_all, d = x_all.shape
    n = _int_arg(n_per_level, "n_per_level", 2)
    seed = _int_arg(seed, "seed", 0)
    g, L = _window(prompt_length, response_length, d)
    if not _is_oracle(model):
        from . import bridge

        kw = {} if (g, L) == (0, d) else {"prompt_length": g}
        if g + L < d:
            kw["response_length"] = L
        est = bridge.estimate_profile(bridge.as_masked_model(model), x_all, n_per_level=n, seed=seed, **kw)
        return ProfileEstimate(np.asarray(est.levels), np.asarray(est.values, float),
                               np.asarray(est.stderr, float), int(est.forwards))
    rng = np.random.default_rng(seed)
    vals, ses, forwards = np.empty(L), np.empty(L), 0
    for m in range(L):
        draws = []
        for lo in range(0, n, batch):
            b = min(batch, n - lo)
            x = x_all[rng.integers(0, n_all, size=b)]
            order = np.argsort(rng.random((b, L)), axis=1)
            win = np.zeros((b, L), bool)
            np.put_along_axis(win, order[:, :m], True, axis=1)
            rev = np.zeros((b, d), bool)
            rev[:, :g] = True
            rev[:, g:g + L] = win
            with np.errstate(divide="ignore"):
                lq = np.log(model.conditionals(x, rev))
            forwards += b
            ll = np.take_along_axis(lq, x[..., None], axis=-1)[..., 0][:, g:g + L]
            ce = np.where(win, 0.0, -ll)
            draws.append(ce.sum(1) / (L - m))
        v = np.concatenate(draws)
        vals[m] = v.mean()
        ses[m] = v.std(ddof=1) / math.sqrt(n)
    if not np.all(np.isfinite(vals)):
        bad = int(np.argmin(np.isfinite(vals)))
        raise ValueError(
            f"model: gives probability 0 to an observed token at level {bad}: the cross-entropy is infinite "
            "(the data are outside the model's support)"
        )
    return ProfileEstimate(np.arange(L), vals, ses, forwards)


# -- design ------------------------------------------------------------------------------------
def design(
    samples,
    *,
    K: int | None = None,
    model=None,
    steps: int | None = None,
    budget: float | None = None,
    exact_limit: int = EXACT_LIMIT,
    n_per_level: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    prompt_length: int = 0,
) -> Design:
    r"""The optimal schedule for data (module docstring): exactly on the empirical law when
    it is small enough and no model is given, else from an estimated profile.

    Parameters
    ----------
    samples : int array (n, d), outcome indices 0..K−1 (e.g. from
        :func:`mdmtheory.datasets.load_sequences`).
    K : alphabet size (default max + 1, at least 2).
    model : optional; a TinyMDM (or an ``nn.Module`` with ``mask_id``) or a conditional oracle.
        Without one, a table over ``exact_limit`` is estimated on the empirical law's own
        conditionals (the profile's estimate then targets the empirical law's profile).
    steps, budget : exactly one: T in 1..d, or a path-KL budget > 0 (nats).
    exact_limit : largest K**d designed on exactly (at most ``MAX_OUTCOMES``).
    n_per_level, seed, confidence : the estimator's draws per level, seed, CI level.
    prompt_length : the first g positions of every row are a prompt (always visible): the
        design is for the d − g response positions, on the profile of the response given the
        prompt averaged over the data's prompts (exact: ``information_profile(p̂, given=
        range(g))``; estimated: ``estimate_profile(..., prompt_length=g)``).
    """
    x = np.asarray(samples)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1 or x.dtype.kind not in "iu":
        raise ValueError(f"samples: expected an integer array (n, d) with n, d >= 1, got shape {x.shape}, dtype {x.dtype}")
    n, d = x.shape
    K = max(int(x.max()) + 1, 2) if K is None else _int_arg(K, "K", 2)
    if x.min() < 0 or x.max() >= K:
        raise ValueError(f"samples: outcome indices must lie in 0..{K - 1}")
    if (steps is None) == (budget is None):
        raise ValueError("steps/budget: give exactly one of steps (T) or budget (EPS)")
    g, r = _window(prompt_length, None, d)
    if steps is not None:
        steps = _int_arg(steps, "steps", 1, r, f" (T must be <= {r}, the response length: each step reveals at "
                         "least one token)")
    if budget is not None:
        budget = _real_arg(budget, "budget")
        if budget <= 0:
            raise ValueError(f"budget: expected EPS > 0 nats, got {budget}")
    exact_limit = _int_arg(exact_limit, "exact_limit", 1, MAX_OUTCOMES)
    n_per_level = _int_arg(n_per_level, "n_per_level", 2)  # documented limit: _validate.LIMITS
    confidence = _real_arg(confidence, "confidence")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence: expected a level in (0, 1), got {confidence}")
    z = float(norm.ppf(0.5 + confidence / 2))
    small = d * math.log(K) <= math.log(exact_limit) + 1e-12
    mem = warning = None
    if model is None:
        mem = memorization(x, seed=seed, prompt_length=g)
        warning = _memorization_warning(mem, K, d) if mem.memorized else None
    given = f", given the prompt (first {g} positions)" if g else ""

    if model is None and small:
        from .families import empirical

        prof = information_profile(empirical(x, K), given=range(g)) if g else information_profile(empirical(x, K))
        if steps is not None:
            sched = optimal_schedule(prof, steps)
        else:
            front = pareto_frontier(prof, r)
            sched = next(front.schedule(T) for T in range(1, r + 1) if schedule_path_kl(prof, front.schedule(T)) <= budget)
        note = f"exact: the empirical law of the {n} sequences ({K}^{d} = {K**d} cells) is used exactly{given}"
        return Design(sched, "exact", prof, None, schedule_path_kl(prof, sched), None, None, None,
                      n, d, K, budget, confidence, note, mem, warning, g)

    if model is None:
        # too large for a dense table: the empirical law's own conditionals (a mixture of point
        # masses, one per distinct row), so the estimate is of the empirical law's profile
        from .certificate import empirical_oracle

        law, what = empirical_oracle(x, K), f"the empirical law ({K}^{d} cells, over exact_limit={exact_limit})"
    else:
        _check_model(model, K)
        law, what = model, "the model"
    est = estimate_profile(law, x, n_per_level=n_per_level, seed=seed, prompt_length=g)
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
        sched = next(front.schedule(T) for T in range(1, r + 1) if stats(front.schedule(T))[1][1] <= budget)
    kl, ci, ce, ci_ce = stats(sched)
    note = (
        f"estimated: cross-entropy profile of {what} on {n} sequences{given}, {n_per_level} draws per level "
        f"({est.forwards} forward rows); {int(round(confidence * 100))}% normal CIs"
    )
    return Design(sched, "estimated", prof, se, kl, ci, ce, ci_ce, n, d, K, budget, confidence, note, mem, warning, g)


def block_design(
    samples,
    *,
    K: int | None = None,
    model=None,
    forwards: int | None = None,
    budget: float | None = None,
    block_lengths=None,
    prompt_length: int = 0,
    exact_limit: int = EXACT_LIMIT,
    n_per_level: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
):
    r"""Block (semi-autoregressive) design for data: the routes of :func:`design`, with
    blocks (:mod:`mdmtheory.blocks`).

    Exactly :func:`mdmtheory.blocks.design_blocks` on the empirical law (given the prompt)
    when it is small enough and no model is given; else
    :func:`mdmtheory.blocks.estimate_block_design` on the model (or on the empirical law's
    own conditionals when the table is too large), each candidate with its CI. Returns a
    :class:`mdmtheory.blocks.BlockDesign`. Without a model the data's memorization is checked
    as in :func:`design` (with the prompt as context) and a memorized empirical law is
    flagged in ``note`` with the honest routes.
    """
    from . import blocks

    x = np.asarray(samples)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1 or x.dtype.kind not in "iu":
        raise ValueError(f"samples: expected an integer array (n, d) with n, d >= 1, got shape {x.shape}, dtype {x.dtype}")
    n, d = x.shape
    K = max(int(x.max()) + 1, 2) if K is None else _int_arg(K, "K", 2)
    if x.min() < 0 or x.max() >= K:
        raise ValueError(f"samples: outcome indices must lie in 0..{K - 1}")
    g, _ = _window(prompt_length, None, d)
    exact_limit = _int_arg(exact_limit, "exact_limit", 1, MAX_OUTCOMES)
    warn = ""
    if model is None:
        mem = memorization(x, seed=seed, prompt_length=g)
        warn = f"; WARNING: {_memorization_warning(mem, K, d)}" if mem.memorized else ""
        if d * math.log(K) <= math.log(exact_limit) + 1e-12:
            from .families import empirical

            res = blocks.design_blocks(empirical(x, K), forwards=forwards, budget=budget,
                                       block_lengths=block_lengths, given=range(g))
            note = f"exact: block profiles of the empirical law of the {n} sequences ({K}^{d} cells) given the prompt"
            return blocks.BlockDesign(res.candidates, res.best, "exact", note + warn)
        from .certificate import empirical_oracle

        law = empirical_oracle(x, K)
    else:
        _check_model(model, K)
        law = model
    res = blocks.estimate_block_design(law, x, forwards=forwards, budget=budget, block_lengths=block_lengths,
                                       prompt_length=g, n_per_level=n_per_level, seed=seed, confidence=confidence)
    return blocks.BlockDesign(res.candidates, res.best, "estimated", res.note + warn)
