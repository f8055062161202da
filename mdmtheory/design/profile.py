r"""The profile of a model on data, and the checks every design from data starts with."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ..information.montecarlo import cross_entropy_sums, mean_se
from ..information.profile import ProfileEstimate
from ..laws.joint import MAX_OUTCOMES
from ..schedules.plans import Schedule
from .._estimate import Record
from .._validate import int_arg as _int_arg, real_arg as _real_arg, row_length, samples_array as _samples_array
from .._moved import module_getattr

__all__ = [
    "Memorization",
    "ProfileEstimate",
    "estimate_cross_entropy_profile",
    "defect_weights",
    "memorization",
    "MEMORIZATION_THRESHOLD",
]


#: Default largest empirical table (K**d cells) designed on exactly (the dense limit, 2**24).
EXACT_LIMIT = MAX_OUTCOMES


#: A level is memorized when more than this fraction of its (row, revealed set) draws have a
#: context shared by no other row (module docstring, "Memorization").
MEMORIZATION_THRESHOLD = 0.5


#: Revealed sets per level in :func:`memorization` (all of them when a level has fewer).
MEMORIZATION_SUBSETS = 64

#: Largest work :math:`S \cdot n \cdot L^2` of :func:`memorization` (S revealed sets per level, n rows,
#: L response positions: each of the L levels keys the n rows on up to L columns per set), checked
#: before any work: about a minute at the measured 0.2–0.3·10^9 per second (n = 1000, L = 256, S = 64
#: is 2^32 and takes 17 s).
MAX_MEMORIZATION_WORK = 1 << 34


@dataclass(frozen=True)
class Memorization(Record):
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

    Limits, checked before any work: rows of at most 2**16 tokens (``_validate.LIMITS["d"]``)
    and a work :math:`S n L^2 \le` :data:`MAX_MEMORIZATION_WORK` (L = d − g levels).
    """
    x = _samples_array(samples, "samples")
    row_length(x.shape[1])
    S = _int_arg(subsets, "subsets", 2)
    threshold = _real_arg(threshold, "threshold")
    if not 0 <= threshold < 1:
        raise ValueError(f"threshold: expected a fraction in [0, 1), got {threshold}")
    rng = np.random.default_rng(_int_arg(seed, "seed", 0))
    n, D = x.shape
    g, d = _window(prompt_length, None, D)
    work = S * n * d * d
    if work > MAX_MEMORIZATION_WORK:
        raise ValueError(f"samples: {n} rows of {d} response tokens with subsets={S} is a memorization check of "
                         f"S·n·d^2 = {work:.3g} steps, over the limit {MAX_MEMORIZATION_WORK:.3g} "
                         "(MAX_MEMORIZATION_WORK); give fewer rows or fewer subsets")
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
        "(e.g. mdmtheory.laws.MarkovChainLaw) passed as design(samples, model=law)"
    )


#: Relative tolerance of :func:`profile_warning` (a rise or an excess over log K smaller than
#: this times max(1, max |c|) is rounding, not a finding).
PROFILE_WARNING_RTOL = 1e-9


def _rises(c: np.ndarray, stderr):
    """(rounding tolerance, level steps c(m+1) - c(m), the steps that rise, those that rise beyond
    three standard errors of the difference — or beyond rounding without ``stderr``)."""
    tol = PROFILE_WARNING_RTOL * max(1.0, float(np.max(np.abs(c))))
    rise = np.diff(c)
    up = np.flatnonzero(rise > tol)
    se = None if stderr is None else np.asarray(stderr, dtype=np.float64).ravel()
    if se is not None and se.shape != c.shape:
        raise ValueError(f"stderr: expected {c.size} standard errors, one per level, got {se.size}")
    beyond = up if se is None else up[rise[up] > 3.0 * np.sqrt(se[up] ** 2 + se[up + 1] ** 2) + tol]
    return tol, rise, up, beyond


def profile_rises(values, stderr=None) -> bool:
    """Whether a profile rises beyond its noise: the rise check of :func:`profile_warning` alone
    (``design``'s block profiles, issue 39 item 2). ``values``: c(0..L-1); ``stderr``: their
    standard errors (None: any rise beyond rounding counts)."""
    c = np.asarray(values, dtype=np.float64).ravel()
    return bool(c.size and _rises(c, stderr)[3].size)


def profile_warning(values, K: int | None = None, *, stderr=None) -> str | None:
    r"""The one rule, shared by ``mdmtheory design --model`` and ``mdmtheory schedule --profile``
    (issue 31 §10), for a profile that no well-trained model has; None when there is nothing to say.

    * **Worse than uniform** (K known): :math:`\max_m c(m) > \log K`. A uniform guess over the
      K symbols has cross-entropy exactly :math:`\log K` at every level, so such a model
      predicts worse than not looking at all (an untrained or broken model): always a warning.
    * **It rises beyond its noise**: :math:`c(m+1) - c(m)` above three standard errors of the
      difference (``stderr`` given) or above rounding (none given). The exact profile
      :math:`arphi_m` is non-increasing (conditioning on more revealed tokens never raises
      the mean entropy), and so is the cross-entropy of a model that uses what it is shown.
    * **It rises within its noise and K is unknown** (a profile file): a warning too, since
      whether the model beats uniform cannot be checked; it names the alphabets for which the
      curve would be worse than uniform, :math:`K < e^{\max c}`. With K known and the curve
      below log K, a rise within noise is estimation noise and says nothing.

    A schedule designed on a flagged profile is the optimum for *that* curve, not a design
    for the data: the warning says so. Rounding: :data:`PROFILE_WARNING_RTOL`.
    """
    c = np.asarray(values, dtype=np.float64).ravel()
    if c.size == 0:
        return None
    tol, rise, up, beyond = _rises(c, stderr)
    top = int(np.argmax(c))
    worse = K is not None and c[top] > math.log(int(K)) + tol
    if not (worse or beyond.size or (K is None and up.size)):
        return None
    out = []
    if worse:
        out.append(f"the model is worse than uniform: c(m) = {c[top]:.4g} nats at m = {top} is above log K = "
                   f"log {int(K)} = {math.log(int(K)):.4g} nats, the cross-entropy of a uniform guess over the K "
                   "symbols (an untrained or broken model)")
    if up.size:
        m = int(up[np.argmax(rise[up])])
        noise = ("" if stderr is None else " (beyond three standard errors: not estimation noise)" if beyond.size else
                 " (within three standard errors: possibly estimation noise; more draws per level would tell)")
        out.append(f"the profile rises ({len(up)} of {c.size - 1} level steps; the largest from m = {m} to m = "
                   f"{m + 1}: {c[m]:.4g} -> {c[m + 1]:.4g} nats){noise}; an exact profile never rises, and a model "
                   "that uses its context does not either")
    if K is None and c[top] > tol:
        out.append(f"it is worse than uniform for every alphabet of K < e^{c[top]:.4g} = {math.exp(c[top]):.4g} "
                   "symbols (a uniform guess has cross-entropy log K; the file does not say K)")
    return ("; ".join(out) + ". The schedule below is optimal for this curve, not a design for the data: train the "
            "model further (or check it) before using it")


def defect_weights(schedule: Schedule) -> np.ndarray:
    r"""Weights :math:`w_m` with :math:`\sum_t k_t c(s_t) - \sum_m c(m) = \sum_m w_m c(m)`.

    ``schedule``: a :class:`~mdmtheory.schedules.Schedule` (or its card step sizes)."""
    if not isinstance(schedule, Schedule):
        if schedule is None or isinstance(schedule, (str, bytes, dict)):
            raise ValueError(f"schedule: expected a Schedule (card step sizes summing to d), got {schedule!r:.80}")
        try:
            schedule = Schedule(schedule)
        except ValueError as exc:
            raise ValueError(f"schedule: expected a Schedule (card step sizes summing to d); {exc}") from None
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


def check_samples_for_model(model, x: np.ndarray) -> np.ndarray:
    """The samples (n, d) checked against what ``model`` reads, before any forward, by name
    ``samples``: tokens are outcome indices 0..K−1 of the model (its K read without a forward,
    :func:`model_outcomes`) and rows have the model's length (an oracle's ``d``, a TinyMDM's
    ``seq_len``) where it has one."""
    K = model_outcomes(model)
    if K is not None:
        x = _samples_array(x, "samples", K=K, tokens=f"tokens (outcome indices of the model, which has K = {K})")
    if _is_oracle(model):
        L = model.d
    elif type(model).__name__ == "TinyMDM":
        L = getattr(getattr(model, "config", None), "seq_len", None)
    else:
        L = None
    if isinstance(L, (int, np.integer)) and not isinstance(L, bool) and x.shape[1] != int(L):
        raise ValueError(f"samples: rows have {x.shape[1]} tokens but the model reads rows of d = {int(L)}; give rows "
                         f"of {int(L)} tokens")
    return x


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


def estimate_cross_entropy_profile(model, samples, *, n_per_level: int = 1000, seed: int = 0, batch: int = 512,
                                   prompt_length: int = 0, response_length: int | None = None) -> ProfileEstimate:
    r"""Cross-entropy profile of ``model`` on ``samples``, with standard errors: any model, a
    conditional oracle (numpy) or a torch model (through :func:`mdmtheory.bridge.estimate_profile`,
    the torch estimator with ``levels`` and ``distributed``). Was ``design.estimate_profile``, a
    namesake of the bridge's (the old name works for one release).

    For each level m = 0..d−1: ``n_per_level`` draws; draw r of level m takes row
    ``(m·n_per_level + r) mod n`` of ``samples`` and a uniformly random revealed set of size m
    (counter-based, seeded); the value of one draw is the mean of
    :math:`-\log q(x_j \mid x_A)` over its d − m masked positions (an unbiased draw of
    c(m)); the estimate is the mean of the draws and its standard error their standard
    deviation over √n. The same draws as :func:`mdmtheory.bridge.estimate_profile` with the
    same seed (one implementation, :mod:`mdmtheory.information.montecarlo`), so an oracle
    and a torch model of the same conditionals give the same estimate up to rounding;
    ``batch`` (rows per ``conditionals`` call) does not change the result.

    Torch models (a TinyMDM, an ``nn.Module`` with ``mask_id``, a ``bridge.MaskedModel``) go
    through :func:`mdmtheory.bridge.estimate_profile` (batched, seeded per draw,
    distributed-ready); a conditional oracle (``d``, ``K``, ``conditionals``) is scored
    here with numpy, so designing from an oracle needs no torch.

    ``prompt_length = g``: positions 0..g−1 are always revealed and never scored; the levels
    are m = 0..L−1 revealed *response* positions, L = ``response_length`` (default d − g).
    Positions g + L.. are always masked and never scored (the later blocks of a
    semi-autoregressive sampler; :func:`mdmtheory.design.estimate_block_profiles`).
    """
    x_all = _samples_array(samples, "samples")
    d = row_length(x_all.shape[1])
    n = _int_arg(n_per_level, "n_per_level", 2)
    seed = _int_arg(seed, "seed", 0)
    g, L = _window(prompt_length, response_length, d)
    x_all = check_samples_for_model(model, x_all)
    if not _is_oracle(model):
        from .. import bridge

        kw = {} if (g, L) == (0, d) else {"prompt_length": g}
        if g + L < d:
            kw["response_length"] = L
        est = bridge.estimate_profile(bridge.as_masked_model(model), x_all, n_per_level=n, seed=seed, **kw)
        return est
    batch = _int_arg(batch, "batch", 1)
    xs = _samples_array(x_all, "samples", K=int(model.K))

    def nll(x_in, x):  # -log q(x_j | x_A) summed over the masked response positions
        rev = x_in >= 0
        with np.errstate(divide="ignore"):
            lq = np.log(model.conditionals(x, rev))
        ll = np.take_along_axis(lq, x[..., None], axis=-1)[..., 0][:, g:g + L]
        return np.where(rev[:, g:g + L], 0.0, -ll).sum(1)

    levels = np.arange(L, dtype=np.int64)
    total, sumsq = cross_entropy_sums(nll, xs, levels, n, seed, np.arange(L * n, dtype=np.int64), batch, g, L)
    with np.errstate(invalid="ignore"):  # inf - inf in the variance of an infinite level: refused below
        vals, ses = mean_se(np.full(L, n), total, sumsq)
    forwards = L * n
    if not np.all(np.isfinite(vals)):
        bad = int(np.argmin(np.isfinite(vals)))
        raise ValueError(
            f"model: gives probability 0 to an observed token at level {bad}: the cross-entropy is infinite "
            "(the data are outside the model's support)"
        )
    return ProfileEstimate(np.arange(L), vals, ses, np.full(L, n, dtype=np.int64), forwards, "cross_entropy", d)


def __getattr__(name):
    """Old names of this module (``_moved.NAMES``), working for one release with a warning."""
    return module_getattr(__name__, name)
