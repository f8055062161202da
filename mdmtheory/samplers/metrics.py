r"""The sampler-centric evaluation of Tang et al. (arXiv 2602.19619, ICML 2026), with the
theory beside it.

Tang et al. replace the denoiser by the exact posterior of a ground-truth Markov chain, so
that only the sampler errs, and score the generated sequences by their **transition
statistics**: with :math:`\hat p(j \mid i)` the empirical transition frequencies of all
bigrams (position t → t + 1, every position, every sample), :math:`w_i` the share of bigrams
that start at i, and P the chain's transition matrix,

.. math::

    \text{KL-rate} = \sum_i w_i\, \mathrm{KL}\bigl(\hat p(\cdot \mid i) \,\|\, P(i, \cdot)\bigr),
    \qquad
    \text{TV-rate} = \sum_i w_i\, \mathrm{TV}\bigl(\hat p(\cdot \mid i), P(i, \cdot)\bigr).

(Definitions as in the authors' released metric code, ``full_kl_rate_sparse_teleport``;
their chain adds a teleport term to P, ours is any :class:`~mdmtheory.laws.MarkovChainLaw`.)
Both are plug-in estimates: at a finite number of bigrams they are positive even for an exact
sampler (the KL-rate by about (#observed transitions − #rows)/(2 · #bigrams)), so the
examples report the same statistics for exact draws from the chain as the floor.
:func:`transition_rates` gives basic (reverse-percentile) bootstrap intervals over samples:
they correct the plug-in's upward bias, so they are intervals for the sampler's true rate
and can lie below the plug-in value itself (for exact draws they contain 0); the point
estimate that goes with them is the bias-corrected one (``kl_rate_corrected``), which the
examples print beside the interval.

Beside each measured curve the package's own prediction: the exact path KL of the
random-order sampler with the same counts, from the chain's closed-form profile
(:func:`mdmtheory.laws.families.markov_chain_entropy_coefficients`), per transition (divided by
d − 1) — a different functional of the same error (a sequence-level divergence bound versus a
bigram statistic); both vanish only at one token per step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._estimate import Record
from .._validate import int_arg, samples_array, seed_arg, work_bound
from ..laws.families import check_transition, markov_chain_entropy_coefficients
from ..information.divergence import path_kl
from ..information.profile import Profile
from ..schedules.plans import Schedule
from ..laws.joint import Joint, joint_arg

__all__ = ["pooled_bigrams", "TransitionRates", "transition_rates", "transition_rate", "path_kl_per_transition"]


@dataclass(frozen=True)
class TransitionRates(Record):
    r"""KL-rate and TV-rate (nats; module docstring) with bootstrap intervals (``*_ci``,
    level 95%), over ``bigrams`` bigrams of ``n`` samples (lost samples excluded).

    ``kl_rate`` and ``tv_rate`` are the plug-in values, biased upward at a finite number of
    bigrams; the intervals are for the true rates, so a plug-in value can lie above its own
    interval (issue 31 §12). ``kl_rate_corrected`` and ``tv_rate_corrected`` are the
    bootstrap bias-corrected estimates :math:`2\hat\theta - \overline{\theta^*}` (clipped at
    0), the point estimates that go with the intervals."""

    kl_rate: float
    tv_rate: float
    kl_rate_ci: tuple[float, float]
    tv_rate_ci: tuple[float, float]
    n: int
    bigrams: int
    kl_rate_corrected: float = float("nan")
    tv_rate_corrected: float = float("nan")


def _rates(counts: np.ndarray, i: np.ndarray, Pij: np.ndarray, logP: np.ndarray, K: int) -> tuple[float, float]:
    r"""(KL-rate, TV-rate) from sparse bigram counts: ``counts[m]`` of the observed bigram
    (i[m], j[m]) (every observed bigram once, counts may be 0), ``Pij[m]`` = P[i[m], j[m]] and
    ``logP`` its log (fixed by the observed bigrams: :func:`_bigram_terms`, once per call of
    :func:`transition_rates`, not per resample). Only the observed bigrams are touched:
    KL-rate = Σ (c_ij / N) log(p̂_ij / P_ij); the TV of row i is
    ½ (1 + Σ_{j observed} (|p̂_ij − P_ij| − P_ij)), since P's row sums to 1 and p̂ is 0 off the
    observed j (the dense formula ½ Σ_j |p̂_ij − P_ij| term by term)."""
    row = np.bincount(i, counts, minlength=K)
    tot = row.sum()
    w = row / tot
    ph = counts / np.maximum(row[i], 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kl_terms = np.where(ph > 0, ph * (np.log(ph) - logP), 0.0)
    kl = float(np.sum(w[i] * kl_terms))
    tv_rows = 0.5 * (1.0 + np.bincount(i, np.abs(ph - Pij) - Pij, minlength=K))
    tv = float(np.sum(w * tv_rows * (row > 0)))
    return kl, tv


def _bigram_terms(ids: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(i, P_ij, log P_ij, K) of the observed bigram ids i·K + j: what :func:`_rates` reads
    besides the counts, the same for the point estimate and every resample."""
    K = P.shape[0]
    i, j = ids // K, ids % K
    Pij = P[i, j]
    with np.errstate(divide="ignore"):
        logP = np.log(Pij)
    return i, Pij, logP, K


def _bigram_ids(x: np.ndarray, K: int) -> tuple[np.ndarray, np.ndarray]:
    """The observed bigram ids (sorted, each once; id = prev·K + next) and (n, d − 1) each
    sample's bigrams as positions in that list: the counts of any reweighting of the samples
    without an (n, K²) array."""
    key = x[:, :-1].astype(np.int64) * K + x[:, 1:]
    if K * K <= _MARK_IDS:  # a mark per possible id: linear, no sort
        seen = np.bincount(key.ravel(), minlength=K * K) > 0
        ids = np.flatnonzero(seen)
        return ids, (np.cumsum(seen) - 1)[key]
    ids, inv = np.unique(key, return_inverse=True)
    return ids, inv.reshape(key.shape)


#: Largest K² for which :func:`_bigram_ids` numbers the ids by a mark array (K² entries)
#: instead of sorting the n (d − 1) bigrams.
_MARK_IDS = 1 << 22


def transition_rates(samples, transition, *, n_boot: int = 200, seed: int = 0) -> TransitionRates:
    """KL-rate and TV-rate of ``samples`` (n, d) against ``transition`` (K, K), with a basic
    bootstrap interval over samples (``n_boot`` resamples, seeded). Rows holding −1
    (lost samples) are excluded. Where the KL-rate is infinite (a sampled transition the
    chain never makes) its interval is ``(inf, inf)``: every resample holding that sample is
    infinite too, and a basic interval ``2·kl − q`` would be NaN.

    Counted sparsely: each sample's bigrams become ids i·K + j, numbered over the distinct
    ids observed (``np.unique``), and a resample is a weight per sample (how often it was
    drawn), its counts one ``np.bincount`` over the n (d − 1) bigrams — memory O(n d) whatever
    K (the dense (n, K²) per-sample counts this replaces needed 64 GiB at K = 4096). The
    bootstrap's work, ``n_boot`` · n · (d − 1), is at most 2**33."""
    P = check_transition(transition)
    K = P.shape[0]
    x = samples_array(samples, "samples", min_rows=0, min_cols=2)  # -1 rows (lost samples) are dropped next
    x = x[(x >= 0).all(axis=1)]
    if x.shape[0] < 2:
        raise ValueError("samples: fewer than 2 complete samples")
    if x.max() >= K:
        raise ValueError(f"samples: token {int(x.max())} is not a state of the {K}-state chain")
    n_boot = int_arg(n_boot, "n_boot", 10, 100_000)
    seed = seed_arg(seed)
    n, m = x.shape[0], x.shape[1] - 1
    work_bound(n_boot * n * m, 1 << 33, "n_boot", "the bootstrap's work n_boot·n·(d − 1)")
    ids, inv = _bigram_ids(x, K)
    flat = inv.ravel()
    terms = _bigram_terms(ids, P)
    kl, tv = _rates(np.bincount(flat, minlength=ids.size).astype(np.float64), *terms)
    rng = np.random.default_rng(seed)
    boots = np.empty((n_boot, 2))
    for b in range(n_boot):  # the same draws as resampling the rows of the dense counts
        times = np.bincount(rng.integers(0, n, n), minlength=n).astype(np.float64)
        boots[b] = _rates(np.bincount(flat, np.repeat(times, m), minlength=ids.size), *terms)
    # basic (reverse-percentile) bootstrap: a resample with repeated rows has fewer distinct
    # bigram contexts, so the plug-in rates shift up under resampling; reflecting the
    # percentiles about the estimate removes that shift (the percentile interval would not
    # even contain the estimate)
    with np.errstate(invalid="ignore"):  # inf - inf where the KL-rate is infinite: set below
        qlo, qhi = np.percentile(boots, [2.5, 97.5], axis=0)
        lo, hi = 2 * np.array([kl, tv]) - qhi, 2 * np.array([kl, tv]) - qlo
    lo = np.maximum(lo, 0.0)
    with np.errstate(invalid="ignore"):  # inf - inf where the KL-rate is infinite: set below
        corrected = np.maximum(2 * np.array([kl, tv]) - boots.mean(axis=0), 0.0)  # bias-corrected point estimates
    if math.isinf(kl):
        lo[0] = hi[0] = corrected[0] = math.inf
    return TransitionRates(kl, tv, (float(lo[0]), float(hi[0])), (float(lo[1]), float(hi[1])), int(n),
                           int(n * m), float(corrected[0]), float(corrected[1]))


def path_kl_per_transition(transition, d: int, steps: int) -> float:
    """Exact path KL of random order with ``Schedule.constant(d, steps)`` on the stationary
    chain (closed-form profile), divided by the d − 1 transitions."""
    e = markov_chain_entropy_coefficients(transition, d)
    prof = Profile(np.diff(e))
    return float(path_kl(prof, Schedule.constant(d, steps)) / max(d - 1, 1))


def pooled_bigrams(table: np.ndarray) -> np.ndarray:
    """(K, K) expected bigram counts per sequence: sum over t of the (t, t+1) pair marginals."""
    d = table.ndim
    K = table.shape[0]
    C = np.zeros((K, K))
    for t in range(d - 1):
        C += table.sum(axis=tuple(a for a in range(d) if a not in (t, t + 1)))
    return C


def transition_rate(p, q) -> float:
    r"""The population KL-rate of Tang et al. between two laws on [K]^d (d ≥ 2):
    :math:`\sum_i w_i \mathrm{KL}(Q(\cdot \mid i) \,\|\, P(\cdot \mid i))` with Q, P the
    pooled bigram transitions of q and p (every consecutive pair, every position) and
    :math:`w_i` the share of q's bigrams starting at i — what :func:`transition_rates`
    estimates from samples of q when p is a Markov chain, exact here for any p (a sampler's
    exact output law against the data's). A q with lost mass is taken over its finished
    samples (as the Monte Carlo excludes lost rows); ``inf`` where q has a transition p
    never makes."""
    p = joint_arg(p)  # the data law: normalized; q may carry lost mass (documented above)
    q = joint_arg(q, "q", lost_ok=True)
    if p.table.shape != q.table.shape or p.d < 2:
        raise ValueError(f"q: expected a law of p's shape {p.table.shape} with d >= 2, got {q.table.shape}")
    Cq, Cp = pooled_bigrams(q.table), pooled_bigrams(p.table)
    w = Cq.sum(axis=1) / Cq.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        Q = np.where(Cq.sum(axis=1, keepdims=True) > 0, Cq / Cq.sum(axis=1, keepdims=True), 0.0)
        P = np.where(Cp.sum(axis=1, keepdims=True) > 0, Cp / Cp.sum(axis=1, keepdims=True), 0.0)
        terms = np.where(Q > 0, Q * (np.log(Q) - np.log(P)), 0.0)
    return max(float(np.sum(w * terms.sum(axis=1))), 0.0)
