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
their chain adds a teleport term to P, ours is any :class:`~mdmtheory.structured.MarkovChainLaw`.)
Both are plug-in estimates: at a finite number of bigrams they are positive even for an exact
sampler (the KL-rate by about (#observed transitions − #rows)/(2 · #bigrams)), so
:func:`transition_rates` reports the same statistics for exact draws from the chain as the
floor, and bootstrap intervals over samples.

Beside each measured curve the package's own prediction: the exact path KL of the
random-order sampler with the same counts, from the chain's closed-form profile
(:func:`mdmtheory.families.markov_chain_entropy_coefficients`), per transition (divided by
d − 1) — a different functional of the same error (a sequence-level divergence bound versus a
bigram statistic); both vanish only at one token per step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TransitionRates", "transition_rates", "path_kl_per_transition"]


@dataclass(frozen=True)
class TransitionRates:
    """KL-rate and TV-rate (nats; module docstring) with bootstrap intervals (``*_ci``,
    level 95%), over ``bigrams`` bigrams of ``n`` samples (lost samples excluded)."""

    kl_rate: float
    tv_rate: float
    kl_rate_ci: tuple[float, float]
    tv_rate_ci: tuple[float, float]
    n: int
    bigrams: int


def _rates(counts: np.ndarray, P: np.ndarray) -> tuple[float, float]:
    row = counts.sum(axis=1)
    tot = row.sum()
    w = row / tot
    with np.errstate(divide="ignore", invalid="ignore"):
        ph = np.where(row[:, None] > 0, counts / np.maximum(row[:, None], 1), 0.0)
        terms = np.where(ph > 0, ph * (np.log(ph) - np.log(P)), 0.0)
    kl = float(np.sum(w * terms.sum(axis=1)))
    tv = float(np.sum(w * 0.5 * np.abs(ph - P).sum(axis=1) * (row > 0)))
    return kl, tv


def _bigram_counts(x: np.ndarray, K: int) -> np.ndarray:
    """(n, K*K) per-sample bigram counts (flattened prev*K + next)."""
    key = x[:, :-1] * K + x[:, 1:]
    n = x.shape[0]
    out = np.zeros((n, K * K), dtype=np.int64)
    np.add.at(out, (np.repeat(np.arange(n), key.shape[1]), key.ravel()), 1)
    return out


def transition_rates(samples, transition, *, n_boot: int = 200, seed: int = 0) -> TransitionRates:
    """KL-rate and TV-rate of ``samples`` (n, d) against ``transition`` (K, K), with a basic
    bootstrap interval over samples (``n_boot`` resamples, seeded). Rows holding −1
    (lost samples) are excluded."""
    from .families import _transition

    P = _transition(transition)
    K = P.shape[0]
    x = np.asarray(samples)
    if x.ndim != 2 or x.shape[1] < 2 or x.dtype.kind not in "iu":
        raise ValueError(f"samples: expected an integer array (n, d) with d >= 2, got shape {x.shape}")
    x = x[(x >= 0).all(axis=1)]
    if x.shape[0] < 2:
        raise ValueError("samples: fewer than 2 complete samples")
    if x.max() >= K:
        raise ValueError(f"samples: token {int(x.max())} is not a state of the {K}-state chain")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or not 10 <= n_boot <= 100_000:
        raise ValueError(f"n_boot: expected an integer in 10..100000, got {n_boot!r}")
    per = _bigram_counts(x, K)
    kl, tv = _rates(per.sum(axis=0).reshape(K, K), P)
    rng = np.random.default_rng(seed)
    boots = np.array([_rates(per[rng.integers(0, x.shape[0], x.shape[0])].sum(axis=0).reshape(K, K), P)
                      for _ in range(n_boot)])
    # basic (reverse-percentile) bootstrap: a resample with repeated rows has fewer distinct
    # bigram contexts, so the plug-in rates shift up under resampling; reflecting the
    # percentiles about the estimate removes that shift (the percentile interval would not
    # even contain the estimate)
    qlo, qhi = np.percentile(boots, [2.5, 97.5], axis=0)
    lo, hi = 2 * np.array([kl, tv]) - qhi, 2 * np.array([kl, tv]) - qlo
    lo = np.maximum(lo, 0.0)
    return TransitionRates(kl, tv, (float(lo[0]), float(hi[0])), (float(lo[1]), float(hi[1])), int(x.shape[0]),
                           int(per.sum()))


def path_kl_per_transition(transition, d: int, steps: int) -> float:
    """Exact path KL of random order with ``Schedule.constant(d, steps)`` on the stationary
    chain (closed-form profile), divided by the d − 1 transitions."""
    from .divergence import path_kl
    from .families import markov_chain_entropy_coefficients
    from .profile import Profile
    from .schedules import Schedule

    e = markov_chain_entropy_coefficients(transition, d)
    prof = Profile(np.diff(e))
    return float(path_kl(prof, Schedule.constant(d, steps)) / max(d - 1, 1))
