r"""Feng et al. 2025, *Theoretical Benefit and Limitation of Diffusion Language Model*, arXiv
2502.09622: token error rate vs sequence error rate, and the steps each needs as d grows.

**How it was read.** Only the abstracts of v1 and v2 and the opening of the arXiv HTML (title,
authors, abstract, first paragraph of §1) could be read here, plus third-party summaries; no
definition, theorem, constant or rate. What that text says: "when using perplexity as the
metric, MDMs can achieve near-optimal perplexity in sampling steps regardless of sequence
length" (v2: "in a constant number of sampling steps, independent of sequence length"); "when
using the sequence error rate ... the required sampling steps must scale linearly with sequence
length to obtain 'correct' sequences" (v2: "in the worst case"); summaries add that the
analysis is on n-gram languages and hidden Markov models, and call the perplexity measure the
token error rate (TER) and the other the sequence error rate (SER). So everything here is
**our reading**:

* **TER** (per token, log-perplexity): :math:`\mathrm{TER}(q) = \frac1d \mathbb E_{x\sim q}[-\log
  p(x)]`, the per-token negative log-likelihood of the generated sequences under the true law
  p; its optimum is the true law's own, :math:`H(p)/d`. :func:`token_error_rate` returns the
  excess :math:`\mathrm{TER}(q) - H(p)/d` (infinite when q puts mass off p's support).
* **SER**: :math:`\mathrm{SER}(q) = 1 - \sum_{x:\,p(x) > 0} q(x)`, the probability that the
  generated sequence is not a sequence of the language (the runs that stop at a prefix of
  probability 0, the engine's lost mass, count as errors). It is 0 on a law of full support, so
  the SER statement needs a language with forbidden transitions (:func:`golden_mean_chain`).
* **The sampler**: the MDM reverse process with T steps and the true conditionals, tokens of
  one step drawn independently given the revealed ones. Two versions: ``"equal"`` — random order,
  T steps of sizes as equal as possible (``Schedule`` from :func:`equal_schedule`, the random
  planner); ``"grid"`` — the Bernoulli-subset sampler on the uniform grid of T intervals
  (``Grid.uniform(T)``: each position's reveal time uniform, the continuous-time MDM
  discretized), where sizes are random.

:func:`fewest_steps` gives, for one law, the fewest T whose TER excess (resp. SER) is at most a
target, by scanning T = 1..d (T = d is exact, both rates 0 with "equal"); :func:`feng25_scaling`
does it for a family at each d. Beyond the engine's d, :func:`markov_rates_mc` estimates both
rates of the same sampler on a Markov chain of any length by Monte Carlo (``mt.simulate`` on
:class:`~mdmtheory.laws.MarkovChainLaw`, whose p(x) is a product of transitions). The claim read as "T_TER(d) bounded in d, T_SER(d) growing
linearly in d" is checked on the numbers (docs/findings.md, region ``feng25``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._estimate import Record
from .._moved import renamed_keywords
from .._validate import float_array, int_arg, real_arg
from ..laws.joint import Joint, MAX_OUTCOMES
from ..schedules.plans import Grid, Schedule
from ..laws.families import markov_chain
from ..information.divergence import kl as _kl
from ..samplers import exact_run, simulate
from ..laws.oracles import MarkovChainLaw

__all__ = [
    "token_error_rate",
    "sequence_error_rate",
    "equal_schedule",
    "golden_mean_chain",
    "ngram_chain",
    "FengRates",
    "feng25_rates",
    "FengSteps",
    "fewest_steps",
    "feng25_scaling",
    "FengEstimate",
    "markov_rates_mc",
]

SAMPLERS = ("equal", "grid")


def _joint(p, name: str = "p") -> Joint:
    if not isinstance(p, Joint):
        raise ValueError(f"{name}: expected a mdmtheory.Joint, got {type(p).__name__}")
    return p


def _pair(p, q) -> tuple[Joint, Joint]:
    p, q = _joint(p), _joint(q, "q")
    if p.table.shape != q.table.shape:
        raise ValueError(f"q: expected a law on the same space as p {p.table.shape}, got {q.table.shape}")
    if p.lost:
        raise ValueError("p: has lost mass; the data law must be normalized")
    return p, q


def token_error_rate(p, q) -> float:
    r"""Excess per-token log-perplexity of q against the true law p (our reading of Feng et
    al.'s TER): :math:`\frac1d\big(\sum_x q(x)(-\log p(x)) - H(p)\big)`, nats per token.

    q may be sub-normalized (a sampler law with lost mass): the mean is over q's mass
    renormalized; ``inf`` when q puts mass where p(x) = 0. Can be negative (q more
    concentrated on p's likely sequences than p itself).
    """
    p, q = _pair(p, q)
    P, Q = p.table.ravel(), q.table.ravel()
    tot = Q.sum()
    if tot <= 0:
        raise ValueError("q: has no mass")
    if np.any((Q > 0) & (P == 0)):
        return math.inf
    pos = P > 0
    cross = float(-(Q[pos] * np.log(P[pos])).sum() / tot)
    h = float(-(P[pos] * np.log(P[pos])).sum())
    return (cross - h) / p.d


def sequence_error_rate(p, q) -> float:
    r""":math:`1 - \sum_{x : p(x) > 0} q(x)`: the probability that q's sequence is not in p's
    support (our reading of Feng et al.'s SER); q's lost mass counts as error."""
    p, q = _pair(p, q)
    return float(max(0.0, 1.0 - q.table[p.table > 0].sum()))


def equal_schedule(d: int, steps: int) -> Schedule:
    """T steps of sizes as equal as possible, the larger ones first (sizes ⌈d/T⌉, ⌊d/T⌋)."""
    d = int_arg(d, "d", 1)
    T = int_arg(steps, "steps", 1, d, hint=" (at most one step per position)")
    a, r = divmod(d, T)
    return Schedule(tuple([a + 1] * r + [a] * (T - r)))


def golden_mean_chain(d: int, stay: float = 0.5) -> Joint:
    r"""Binary Markov chain that never has two 1s in a row: from 0 it stays with probability
    ``stay``, from 1 it goes back to 0 (transition [[stay, 1 − stay], [1, 0]], started from its
    stationary law). A language with forbidden bigrams: two adjacent positions revealed in one
    step are drawn independently and are both 1 with positive probability, so the SER is > 0
    unless no two neighbours share a step."""
    s = real_arg(stay, "stay")
    if not 0 < s < 1:
        raise ValueError(f"stay: expected a probability in (0, 1), got {stay!r}")
    return markov_chain([[s, 1 - s], [1.0, 0.0]], int_arg(d, "d", 2))


def ngram_chain(conditional, d: int) -> Joint:
    r"""An n-gram language on :math:`[K]^d`: :math:`p(x) = \pi(x_{1:n-1}) \prod_{i \ge n}
    c(x_i \mid x_{i-n+1:i-1})` with ``conditional`` c of shape (K,)*n (last axis the next token,
    rows summing to 1) and π uniform on the first n − 1 tokens."""
    c = float_array(conditional, "conditional", what="(K,)*n")
    if c.ndim < 2 or c.size == 0 or len(set(c.shape)) != 1 or np.any(c < 0) or not np.allclose(c.sum(axis=-1), 1.0, atol=1e-9):
        raise ValueError(f"conditional: expected an array of shape (K,)*n, n >= 2, whose last axis is a law, got shape {c.shape}")
    n, K = c.ndim, c.shape[0]
    d = int_arg(d, "d", n - 1)
    if K ** d > MAX_OUTCOMES:
        raise ValueError(f"d: the table has K^d = {K}^{d} outcomes, above the limit {MAX_OUTCOMES} (MAX_OUTCOMES)")
    t = np.full((K,) * (n - 1), 1.0 / K ** (n - 1))
    for i in range(n - 1, d):
        t = t[..., None] * c.reshape((1,) * (i - n + 1) + c.shape)
    return Joint(t / t.sum())


@dataclass(frozen=True)
class FengRates(Record):
    """TER excess, SER and KL(p‖q) of the T-step sampler (``sampler``) on one law."""

    d: int
    steps: int
    sampler: str
    ter: float
    ser: float
    kl: float


def _planner(planner) -> str:
    if not isinstance(planner, str) or planner not in SAMPLERS:
        raise ValueError(f"planner: expected one of {SAMPLERS}, got {planner!r:.80}")
    return planner


@renamed_keywords(sampler="planner")
def feng25_rates(p, steps: int, *, planner: str = "equal") -> FengRates:
    """The output law of the T-step sampler on p, exactly (``exact_run``), and its rates."""
    p = _joint(p)
    sampler = _planner(planner)
    T = int_arg(steps, "steps", 1, p.d, hint=" (at most one step per position)")
    plan = equal_schedule(p.d, T) if sampler == "equal" else Grid.uniform(T)
    q = exact_run(p, plan, "random").law
    return FengRates(p.d, T, sampler, token_error_rate(p, q), sequence_error_rate(p, q), float(_kl(p, q)))


@dataclass(frozen=True)
class FengSteps(Record):
    """The fewest steps T reaching each target on one law (None: not reached by T = d, possible
    only with ``"grid"``), with the rates at every T scanned (``ter[T-1]``, ``ser[T-1]``)."""

    d: int
    sampler: str
    ter_target: float
    ser_target: float
    ter_steps: int | None
    ser_steps: int | None
    ter: tuple
    ser: tuple


def _target(x, name: str) -> float:
    v = real_arg(x, name)
    if v < 0:
        raise ValueError(f"{name}: expected a target >= 0, got {x!r}")
    return v


@renamed_keywords(sampler="planner")
def fewest_steps(p, *, ter_target: float, ser_target: float, planner: str = "equal") -> FengSteps:
    """Scan T = 1..d (stopping once both targets are met) and return the first T meeting each."""
    p = _joint(p)
    a, b = _target(ter_target, "ter_target"), _target(ser_target, "ser_target")
    sampler = _planner(planner)
    ters, sers = [], []
    t_ter = t_ser = None
    for T in range(1, p.d + 1):
        r = feng25_rates(p, T, planner=sampler)
        ters.append(r.ter)
        sers.append(r.ser)
        if t_ter is None and r.ter <= a:
            t_ter = T
        if t_ser is None and r.ser <= b:
            t_ser = T
        if t_ter is not None and t_ser is not None:
            break
    return FengSteps(p.d, sampler, a, b, t_ter, t_ser, tuple(ters), tuple(sers))


@renamed_keywords(sampler="planner")
def feng25_scaling(family, ds, *, ter_target: float, ser_target: float, planner: str = "equal") -> tuple[FengSteps, ...]:
    """:func:`fewest_steps` for ``family(d)`` (a callable returning a Joint) at each d of ``ds``."""
    if not callable(family):
        raise ValueError(f"family: expected a callable d -> mdmtheory.Joint, got {type(family).__name__}")
    if isinstance(ds, (str, bytes, dict)) or not hasattr(ds, "__iter__"):
        raise ValueError(f"ds: expected a list of sequence lengths, got {ds!r:.80}")
    ds = list(ds)
    if not ds:  # issue 38: an empty scaling is no answer
        raise ValueError("ds: expected at least one sequence length, e.g. [4, 6, 8]")
    out = []
    for d in ds:
        d = int_arg(d, "ds", 1)
        out.append(fewest_steps(_joint(family(d), "family(d)"), ter_target=ter_target, ser_target=ser_target,
                                planner=planner))
    return tuple(out)


@dataclass(frozen=True)
class FengEstimate(Record):
    """Monte Carlo TER excess and SER of the T-step sampler (equal sizes, random order) on a
    Markov chain, with their standard errors (``n`` samples, ``seed``)."""

    d: int
    steps: int
    n: int
    ter: float
    ter_se: float
    ser: float
    ser_se: float


def markov_rates_mc(transition, d: int, steps: int, *, n: int, seed: int) -> FengEstimate:
    r"""TER excess and SER of the T-step equal-size random-order sampler on the stationary
    Markov chain with this transition matrix, by ``mt.simulate`` (n samples).

    :math:`-\log p(x) = -\log \pi(x_1) - \sum_i \log P(x_i, x_{i+1})` per sample, H(p) =
    H(π) + (d − 1) Σ_a π_a H(P_a) exactly; SER counts the samples with a forbidden transition or
    lost at a prefix of probability 0; the TER excess is over the samples that are sequences of the
    language (``inf`` if some is not, as :func:`token_error_rate`).
    """
    law = MarkovChainLaw(transition, int_arg(d, "d", 2))
    T = int_arg(steps, "steps", 1, law.d, hint=" (at most one step per position)")
    n = int_arg(n, "n", 2)
    P, pi = law.transition, law.initial
    sim = simulate(law, equal_schedule(law.d, T), "random", n=n, seed=seed)
    x = np.where(sim.samples < 0, 0, sim.samples)
    with np.errstate(divide="ignore"):
        lp = np.log(pi[x[:, 0]]) + np.log(P[x[:, :-1], x[:, 1:]]).sum(axis=1)
    bad = sim.lost | ~np.isfinite(lp)
    ser = float(bad.mean())
    row_h = -(np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0)).sum(axis=1)
    h = float(-(pi[pi > 0] * np.log(pi[pi > 0])).sum() + (law.d - 1) * (pi @ row_h))
    if bad.any():  # an observed sample off p's support (or lost) proves q puts mass there: TER = inf
        ter, ter_se = math.inf, 0.0  # exactly, not an estimate: no sampling error (never NaN)
    else:
        ter = float((-lp.mean() - h) / law.d)
        ter_se = float(lp.std(ddof=1) / math.sqrt(n) / law.d)
    return FengEstimate(law.d, T, n, ter, ter_se, ser, float(math.sqrt(ser * (1 - ser) / n)))
