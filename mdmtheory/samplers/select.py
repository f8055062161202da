r"""Sample-then-select: draw a token at every masked position, keep the most confident.

The samplers people run at temperature > 0 — LLaDA's ``low_confidence`` remasking
(ML-GSAI/LLaDA ``generate.py``), Fast-dLLM, diffusers' ``BlockRefinementScheduler`` — do not
choose positions from :math:`x_A` and then draw them. At a step with :math:`k` commits, from
the state :math:`(A, x_A)` with masked set :math:`M`:

1. every :math:`j \in M` draws a candidate :math:`y_j \sim s_j`, independently, where
   :math:`s_j \propto p(\cdot \mid x_A)^{1/\tau}` (temperature :math:`\tau`; :math:`\tau = 0`:
   the arg max, lowest token on ties);
2. its confidence is :math:`c_j = p(y_j \mid x_A)` (``confidence="untempered"``: LLaDA,
   whose Gumbel-max draw is scored by the plain softmax) or :math:`s_j(y_j)`
   (``"tempered"``: diffusers 0.42's ``_sample_from_logits`` returns the probability of the
   token under the tempered distribution it sampled from; at :math:`\tau = 0` its greedy branch
   scores the arg max by the plain softmax, :math:`p(y_j \mid x_A)`: :func:`confidence_rows`);
3. the :math:`k` most confident are committed with their candidates, equal confidences
   (to :data:`CONFIDENCE_DECIMALS` decimals) at the boundary resolved by the rule ``ties``
   (below); the rest are discarded. With a ``threshold`` :math:`\theta` (diffusers): every
   :math:`j` with :math:`c_j > \theta` is committed if at least :math:`k` qualify, else the
   top :math:`k` — then :math:`k` is a floor and a step can commit more; the sampler stops
   when nothing is masked (fewer mask steps than the schedule's; the pipeline then makes one
   more forward, :class:`SelectRun`).

Which positions are committed depends on the drawn values, so committed values are biased
toward likely tokens: the committed value at j does not follow :math:`p(\cdot \mid x_A)`.

**Exact law** (:func:`select_run`). Under ``ties="lowest"`` write
:math:`\kappa_j(y) = (c_j(y), -j)` (lexicographic: ties go to the lowest position; the other
rules are below). The committed set is B with values :math:`y_B`, |B| = k,
exactly when every position outside B ranks below the weakest member of B,
:math:`w = \min_{j \in B} \kappa_j(y_j)`; the candidates are independent, so

.. math::

    P(B, y_B \mid x_A) = \prod_{j \in B} s_j(y_j)
    \prod_{i \in M \setminus B} \Pr_{Y \sim s_i}\bigl[\kappa_i(Y) < w\bigr],

a sum over :math:`\binom{|M|}{k} K^k` terms instead of the :math:`K^{|M|}` candidate vectors
(this is ``ties="lowest"``). With a threshold, add the sets :math:`B` (|B| ≥ k) of all positions above it,
:math:`\prod_{j\in B} s_j(y_j)[c_j > \theta] \prod_{i \notin B} \Pr[c_i(Y) \le \theta]`, and
keep the top-k term only where :math:`c_w \le \theta` (fewer than k above). Derived here;
tests/samplers/test_select.py checks it against the enumeration of every candidate vector.

**Ties** (issue 26 §2). Write :math:`\ell_j(y) = \mathrm{rint}(c_j(y)\,10^{12})` (the level;
equal levels tie). ``ties="random"`` resolves the boundary uniformly: given the candidates,
let :math:`\ell^*` be the k-th largest level, :math:`a` the positions above it and :math:`m`
those at it; the committed set is the :math:`a` above plus a uniformly random
:math:`(k-a)`-subset of the :math:`m` — the limit of an infinitesimal i.i.d. continuous
perturbation of the confidences (every order of the tied positions equally likely), so it
depends on no convention. Its law: fix B, |B| = k, with values :math:`y_B`, weakest level
:math:`\ell = \min_{b\in B} \ell_b(y_b)` and :math:`r \ge 1` members at it. B is the committed
set exactly when every outsider has level :math:`\le \ell` and, with :math:`u` outsiders at
:math:`\ell` (a cluster of :math:`r + u`, of which :math:`r` are needed: the members of B above
:math:`\ell` are surely in), the uniform subset is B's r, probability
:math:`1/\binom{r+u}{r}`. The candidates are independent, so

.. math::

    P(B, y_B \mid x_A) = \prod_{b\in B} s_b(y_b) \sum_{u=0}^{|M|-k}
    \frac{e_u}{\binom{r+u}{r}}, \qquad
    \sum_u e_u z^u = \prod_{i\in M\setminus B}\bigl(\mathrm{lo}_i + z\,\mathrm{eq}_i\bigr),

:math:`\mathrm{lo}_i = \Pr_{Y\sim s_i}[\ell_i(Y) < \ell]`, :math:`\mathrm{eq}_i = \Pr[\ell_i(Y) =
\ell]`: :math:`e_u` is the Poisson-binomial probability that exactly u outsiders tie and the
rest are below (a DP over the outsiders per term). ``"lowest"`` is the formula above with
:math:`\Pr[\kappa_i < w]` = :math:`\mathrm{lo}_i + [i > b_w]\,\mathrm{eq}_i`. With a threshold the
tie rule matters only in the top-k branch (the threshold branch commits every position above
θ, no ranking), whose term is kept where :math:`c_w \le \theta` under either rule. At
temperature 0 the :math:`s_j` are point masses and the same formula applies (lo, eq ∈ {0, 1}).
``"topk"``: the positions ``torch.topk`` returns for the vector the pipelines pass — LLaDA's
``generate.py`` (ML-GSAI/LLaDA): ``torch.topk(confidence[j], k)`` on a float64 row of the whole
sequence with ``-inf`` at revealed positions and beyond the block; diffusers 0.42.1
``BlockRefinementScheduler.step``: ``torch.topk(confidence[b], k)`` on the block's float32 row
with ``-inf`` at committed positions — here a length-d float64 row (no prompt, one block:
diffusers with ``block_length = d``, LLaDA with no prompt and one block), the rounded
confidences bit-identical on ties (torch.topk returned the same indices for the float32 row, the
float64 row and a batched call on every pattern tried: tests/samplers/test_ties_select.py). Which of
several equal values torch returns depends on the whole vector, so there is no product formula:
the exact law enumerates the :math:`K^{|M|}` candidate vectors of each state and calls
torch.topk on them (bounded by :data:`MAX_TOPK_VECTORS`); it is exact for the torch it runs on,
and platform-dependent (CPU/CUDA, torch version).

**Tie mass.** ``SelectRun.tie_mass`` is the probability that the run passes through a step
where the rule decided the committed set (u ≥ 1 in the top-k branch). The chain carries a
second mass, that of the runs no rule has decided yet, pushed with the weights of the terms at
u = 0 (:math:`\prod s \prod \mathrm{lo}_i`, the same under every rule; for ``"topk"`` the vectors
whose boundary is not tied); tie_mass is the finished-or-lost mass minus its untied part.
tests/samplers/test_ties_select.py checks the three rules and tie_mass against the enumeration of every
candidate vector with the ties written out (every order of the masked positions averaged;
torch.topk called on each vector).

**Computation.** A sparse chain of :mod:`mdmtheory.samplers.kernel`, as for the other
samplers whose moves depend on x_A: the live states of a step are sorted flat indices of
the marginal lattice. States with the same number m of masked positions share one
numbering of the terms in relative positions (committed set B of 0..m-1, values y_B), so
each term is one column of arrays of shape (states, terms): the draws s and confidences c
of all states at once (``kernel.state_conditionals``), the weakest member as the least
integer key :math:`\mathrm{rint}(c\,10^{12})\,m + (m - 1 - b)`, and the factors
:math:`\Pr[\kappa_i(Y) < \kappa_b(y)]` tabulated per state for every (i, b, y). The
threshold terms run over the at most :math:`\lceil 1/\theta \rceil - 1` values above θ of
each position. Targets are the source index plus
:math:`\sum_{b \in B} (y_b - K)\,\mathrm{stride}_b`; ``kernel.chain_targets`` classifies
them (full: output, even off p's support; masked at :math:`p(x_A) = 0`: lost) and
``kernel.chain_apply`` pushes the mass. Cost: the (state, term) pairs, bounded before any
work by the step-by-step count of reachable states (:data:`MAX_SELECT_WORK`).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

import numpy as np

from .._estimate import Record
from ..laws.joint import Joint, joint_arg
from ..laws.oracles import inverse_cdf
from ..schedules.plans import check_schedule, RandomSchedule, Schedule
from .base import bound, Capabilities, check_plan, mixture_run, Run, Simulation
from .ties import check_ties, DEFAULT_TIES, tie_choices
from . import kernel
from .engine import _check_size
from .._validate import bool_array, choice_arg, float_array, int_arg, real_arg, rng_arg

__all__ = ["select_work", "SampleThenSelectPlanner", "SelectRun", "select_run", "tempered", "confidence_rows", "select_commits",
           "commit_choices", "SelectionBias", "selection_bias", "MAX_SELECT_WORK",
           "MAX_TOPK_VECTORS", "SELECT_PIPELINE"]

#: Largest bound on the (state, committed set, committed values) terms :func:`select_run`
#: computes (its ``select_work``): about 10-20 s and 1.5 GB at the limit on one CPU core when the
#: bound is reached (benchmarks/bench_select.py); most laws reach a fraction of it.
MAX_SELECT_WORK = 20_000_000

#: Largest number of (state, candidate vector) pairs the ``ties="topk"`` law enumerates (it
#: calls torch.topk on every candidate vector: which of tied positions torch returns depends
#: on the whole vector, so no product formula exists).
MAX_TOPK_VECTORS = 4_000_000

#: Confidences are compared after rounding to this many decimals: values that are equal in
#: exact arithmetic (a symmetric law's 1/2 computed from two different marginals) must tie,
#: not be ordered by rounding noise (1e-16), which would make the law jump.
CONFIDENCE_DECIMALS = 12


def _round(c):
    return np.round(c, CONFIDENCE_DECIMALS)


@dataclass(frozen=True)
class SampleThenSelectPlanner(Record):
    """Sample-then-select (module docstring): ``threshold`` None (exact top-k) or in [0, 1);
    ``temperature`` ≥ 0 (0: greedy arg max); ``confidence`` ``"untempered"`` (LLaDA) or
    ``"tempered"`` (diffusers); ``ties`` how equal confidences at the boundary of the top k
    are resolved: ``"random"`` (uniform over the tied sets, the default), ``"lowest"``
    (lowest position first) or ``"topk"`` (torch.topk's order, as LLaDA and diffusers call
    it; platform-dependent). Run with a Schedule: step t commits k_t positions (a floor
    with a threshold)."""

    threshold: float | None = None
    temperature: float = 1.0
    confidence: str = "untempered"
    ties: str = DEFAULT_TIES
    name: str = "sample_then_select"
    needs_schedule: bool = True
    allows_empty: bool = False
    commits_values: bool = True

    def __post_init__(self):
        t = self.threshold
        if t is not None and (isinstance(t, bool) or not isinstance(t, numbers.Real)
                              or not 0 <= real_arg(t, "threshold") < 1):
            raise ValueError(f"threshold: expected None or a probability in [0, 1) (diffusers commits every "
                             f"position whose confidence exceeds it), got {t!r}")
        T = self.temperature
        if isinstance(T, bool) or not isinstance(T, numbers.Real) or not (0 <= real_arg(T, "temperature") < math.inf):
            raise ValueError(f"temperature: expected a finite number >= 0 (0: greedy), got {T!r}")
        if not isinstance(self.confidence, str) or self.confidence not in ("untempered", "tempered"):
            raise ValueError(f"confidence: expected 'untempered' (LLaDA) or 'tempered' (diffusers), "
                             f"got {self.confidence!r}")
        check_ties(self.ties)
        object.__setattr__(self, "threshold", None if t is None else float(t))
        object.__setattr__(self, "temperature", float(T))

    def moves(self, ctx):
        """Not a position planner: what it commits depends on the values it draws."""
        raise ValueError("planner: sample-then-select commits the values it drew, so it has no position moves; "
                         "its exact law is mt.sampler_law(p, plan, planner) (select_run for the run's other fields) and "
                         "its Monte Carlo mt.simulate(p, plan, planner)")

    @property
    def capabilities(self) -> Capabilities:
        """It commits the values it drew (no pointwise log-ratio along the data's path); its
        Monte Carlo is the positions' loop, values first."""
        return Capabilities(plans=("Schedule", "RandomSchedule"), scored=True, commits_values=True)

    def exact_run(self, p, plan=None, *, trajectory: bool = False) -> Run:
        """:func:`select_run` with a Schedule; a RandomSchedule: the mixture over its
        compositions (no trajectory KL: ``path_kl`` None)."""
        check_plan(self, plan)
        if isinstance(plan, RandomSchedule):
            return mixture_run(p, plan, lambda c: select_run(p, c, self))
        return select_run(p, plan, self)

    def simulate(self, p, plan=None, *, n: int, seed: int) -> Simulation:
        """n samples: the shared Monte Carlo loop of :mod:`.simulate` (values first, then the
        positions)."""
        check_plan(self, plan)
        return bound("simulate")(p, plan, self, n=n, seed=seed)

    def draw(self, probs: np.ndarray, free: np.ndarray, size, rng) -> tuple[np.ndarray, np.ndarray]:
        """One Monte Carlo step on a batch: (committed (n, d) bool, candidates (n, d))."""

        probs, free = _probs_free(probs, free)
        rng = rng_arg(rng)
        K = probs.shape[-1]
        P = np.where(free[..., None], probs, 1.0 / K)  # revealed rows are not drawn (any valid row)
        with np.errstate(invalid="ignore", divide="ignore"):
            S = tempered(P, self.temperature)
        y = np.minimum(inverse_cdf(S, rng.random(free.shape)), K - 1)
        C = np.take_along_axis(confidence_rows(P, S, self.confidence, self.temperature), y[..., None], axis=-1)[..., 0]
        return select_commits(C, free, size, self.threshold, self.ties, rng), y


def confidence_rows(P: np.ndarray, S: np.ndarray, confidence: str, temperature: float) -> np.ndarray:
    """The rows whose entry at the drawn token is its confidence: the tempered rows ``S`` for
    ``confidence="tempered"`` at temperature > 0, else the untempered ``P``. At temperature 0
    diffusers' ``_sample_from_logits`` (0.42.1, greedy branch) takes the arg max and scores it
    by the plain softmax, so a tempered one-hot (every confidence 1, all tied) is not what it
    runs."""
    choice_arg(confidence, "confidence", ("untempered", "tempered"))
    if real_arg(temperature, "temperature") < 0:
        raise ValueError(f"temperature: expected a number >= 0, got {temperature!r}")
    P = float_array(P, "P", what="(..., K) rows of probabilities")  # issue 38: no NaN rows
    S = float_array(S, "S", what="(..., K) rows of probabilities")
    if P.shape != S.shape:
        raise ValueError(f"S: expected the shape of P {P.shape}, got {S.shape}")
    return S if confidence == "tempered" and temperature > 0 else P


def tempered(probs: np.ndarray, temperature: float) -> np.ndarray:
    r"""Rows :math:`p^{1/\tau}` renormalized along the last axis (log space); :math:`\tau = 0`:
    the one-hot of the arg max (lowest index on ties, values equal to
    :data:`CONFIDENCE_DECIMALS` decimals tie); :math:`\tau = 1`: ``probs`` itself."""
    P = float_array(probs, "probs", what="(..., K) rows of probabilities")
    if P.ndim < 1 or P.shape[-1] < 1 or np.any(P < 0):
        raise ValueError(f"probs: expected (..., K) rows of probabilities >= 0 (K >= 1), got shape {P.shape}")
    temperature = real_arg(temperature, "temperature")
    if temperature < 0:
        raise ValueError(f"temperature: expected a number >= 0 (0: greedy), got {temperature!r}")
    if temperature == 1.0:
        return P
    if temperature == 0.0:  # ties (equal to CONFIDENCE_DECIMALS decimals) to the lowest token
        out = np.zeros_like(P)
        np.put_along_axis(out, np.argmax(_round(P), axis=-1)[..., None], 1.0, axis=-1)
        return out
    with np.errstate(divide="ignore"):
        L = np.log(P) / temperature
    L = L - np.max(L, axis=-1, keepdims=True)
    E = np.exp(L)
    return E / E.sum(axis=-1, keepdims=True)


def _levels(conf):
    """Confidences as integer levels rint(c 10^12) (float64, exact): equal levels tie."""
    return np.rint(_round(np.asarray(conf, dtype=np.float64)) * 10.0**CONFIDENCE_DECIMALS)


def _topk_rows(conf, free, k) -> np.ndarray:
    """(n, d) bool: ``torch.topk`` of each row's vector as the pipelines build it — the
    confidences (rounded to :data:`CONFIDENCE_DECIMALS` decimals, so equal ones are
    bit-identical) at the masked positions, ``-inf`` at the others, length d — for k (int or
    (n,)). Rows with the same k go through one batched call (tests/samplers/test_ties_select.py checks
    that a batched call returns the indices of the 1-D call LLaDA and diffusers make)."""
    conf = _round(np.asarray(conf, dtype=np.float64))
    free = np.asarray(free, dtype=bool)
    n, d = free.shape
    k = np.broadcast_to(np.asarray(k, dtype=np.int64), (n,))
    out = np.zeros((n, d), dtype=bool)
    v = np.where(free, conf, -np.inf)
    try:
        import torch
    except ImportError:  # pragma: no cover - depends on the environment
        raise ValueError("ties: 'topk' calls torch.topk; pip install 'mdmtheory[bridge]', or use ties='random' "
                         "or 'lowest'") from None
    for kk in np.unique(k):
        rows = np.flatnonzero(k == kk)
        if kk <= 0 or not rows.size:
            continue
        idx = torch.topk(torch.as_tensor(np.ascontiguousarray(v[rows])), int(kk), dim=-1).indices.numpy()
        out[rows[:, None], idx] = True
    return out


def _probs_free(probs, free):
    """(probs (n, d, K) float64 in [0, 1], free (n, d) bool), checked."""
    probs = float_array(probs, "probs", ndim=3, what="(n, d, K)")
    if probs.shape[-1] < 1 or np.any(probs < 0) or np.any(probs > 1):
        raise ValueError(f"probs: expected (n, d, K) probabilities in [0, 1], got shape {probs.shape}")
    free = bool_array(free, "free", shape=probs.shape[:2])
    return probs, free


def _batch(conf, free, k, threshold):
    """(conf (n, d) float64, free (n, d) bool, k (n,) int64) of a commit rule, checked."""
    conf = float_array(conf, "conf", ndim=2, what="(n, d)", finite=False)
    if np.any(np.isnan(conf)):
        raise ValueError("conf: contains NaN")
    free = bool_array(free, "free", shape=conf.shape)
    n, d = conf.shape
    if isinstance(k, (numbers.Integral, np.integer)) and not isinstance(k, (bool, np.bool_)):
        k = np.full(n, min(int_arg(k, "k", 0), d))  # more than d commits what is free (clipped below)
    else:
        k = float_array(k, "k", ndim=1, what="(n,) integers")
        if k.shape != (n,) or np.any(k != np.round(k)) or np.any(k < 0):
            raise ValueError(f"k: expected an integer >= 0 or (n,) of them, got shape {k.shape}")
        k = np.minimum(k, d).astype(np.int64)
    if threshold is not None:
        real_arg(threshold, "threshold")
    return conf, free, k


def select_commits(conf: np.ndarray, free: np.ndarray, k, threshold: float | None, ties: str = DEFAULT_TIES,
                   rng=None) -> np.ndarray:
    """The committed positions of each row: (n, d) bool, from confidences (n, d), the masked
    positions ``free`` (n, d) and the step count k (int or (n,)); top k by confidence, equal
    confidences (to :data:`CONFIDENCE_DECIMALS` decimals) by the rule ``ties`` — ``"random"``
    a uniformly random order of the tied positions (i.i.d. uniform keys from ``rng``),
    ``"lowest"`` the lowest position first, ``"topk"`` torch.topk's choice (:func:`_topk_rows`);
    with ``threshold``: every masked position above it when at least k are, else the top k."""
    ties = check_ties(ties)
    conf, free, k = _batch(conf, free, k, threshold)
    conf = _round(conf)
    n, d = conf.shape
    k = np.minimum(k, free.sum(axis=1))
    if ties == "random":
        if rng is None:
            raise ValueError("rng: ties='random' draws the order of tied positions; pass a numpy Generator "
                             "(or use ties='lowest' / 'topk')")
        tb = rng_arg(rng).random((n, d))
    else:
        tb = np.broadcast_to(np.arange(d, dtype=np.float64), (n, d))
    if ties == "topk":
        chosen = _topk_rows(conf, free, k)
    else:
        order = np.lexsort((tb, np.where(free, -conf, np.inf)), axis=-1)  # most confident first, ties by tb
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.broadcast_to(np.arange(d), (n, d)), axis=1)
        chosen = free & (rank < k[:, None])
    if threshold is not None:
        above = free & (conf > threshold)
        many = above.sum(axis=1) >= k
        chosen = np.where(many[:, None], above, chosen)
    return chosen


def commit_choices(conf: np.ndarray, free: np.ndarray, k, threshold: float | None, ties: str = DEFAULT_TIES):
    """The committed sets of :func:`select_commits` for every resolution of the ties, as a
    :class:`mdmtheory.samplers.ties.Choice` (``ties="random"``: one output row of weight
    :math:`1/\binom{m}{r}` per r-subset of the m tied positions at the boundary; ``split[n]``:
    the tie rule decided row n's set). With a threshold, rows with at least k positions above
    it commit them all (no ranking, never split)."""
    ties = check_ties(ties)
    conf, free, k = _batch(conf, free, k, threshold)
    conf = _round(conf)
    n, d = conf.shape
    k = np.minimum(k, free.sum(axis=1))
    many = np.zeros(n, dtype=bool)
    if threshold is not None:
        above = free & (conf > threshold)
        many = above.sum(axis=1) >= k
    ch = tie_choices(_levels(conf), free, k, "lowest" if ties == "topk" else ties)
    chosen, split = ch.chosen, ch.split & ~many
    if ties == "topk" and split.any():
        s = np.flatnonzero(split)
        chosen = chosen.copy()
        chosen[s] = _topk_rows(conf[s], free[s], k[s])
    if many.any():
        chosen = np.where(many[ch.rows][:, None], above[ch.rows], chosen)
        if ties == "random":  # a split row whose threshold branch commits: one row again
            keep = ~many[ch.rows] | (np.r_[True, ch.rows[1:] != ch.rows[:-1]])
            w = np.where(many[ch.rows], 1.0, ch.weight)
            return type(ch)(ch.rows[keep], chosen[keep], w[keep], split)
    return type(ch)(ch.rows, chosen, ch.weight, split)


# -- the exact law --------------------------------------------------------------------------
#: The pipeline whose model calls :attr:`SelectRun.forwards` counts.
SELECT_PIPELINE = "diffusers 0.42 LLaDA2Pipeline (one block, editing_threshold=None)"


@dataclass(frozen=True)
class SelectRun(Run):
    r"""Exact law of a sample-then-select run: ``law`` (a Joint; its ``lost`` is the mass of
    runs that committed, in one step, values whose combination p never produces, so that no
    conditional exists after it — as for any factorized step), ``forwards`` (the
    expected model calls of :attr:`pipeline`), ``mask_steps`` (the expected steps that began
    with something masked), ``step_commits[t]`` the expected number of positions committed
    at step t, ``pipeline`` (:data:`SELECT_PIPELINE`), ``ties`` the planner's tie rule and
    ``tie_mass`` the probability that the run passes through a step whose committed set the
    tie rule decided (a tie at the boundary of the top k, over the candidates too): 0 means
    the law is the same under every rule, and a positive value that it depends on the rule.

    **Forwards as the pipeline makes them.** diffusers' ``LLaDA2Pipeline`` (0.42.1,
    pipelines/llada2/pipeline_llada2.py, ``__call__``) calls the model at the top of every
    pass of its block loop, *before* it looks at the scheduler's output, and
    ``BlockRefinementScheduler.check_block_should_continue``
    (schedulers/scheduling_block_refinement.py) ends the block after a pass that began with
    masks once ``step_idx`` reaches ``num_inference_steps`` = S, or after a pass that began
    with no mask (editing off). A run whose masks are all committed after F mask steps
    therefore makes :math:`F` forwards when :math:`F = S` and :math:`F + 1` when
    :math:`F < S` (a threshold finished it early: one more pass finds the block full). So

    .. math::

        E[\text{forwards}] = E[F] + \Pr[F < S],

    and a threshold saves a forward only when it finishes at least two steps early.
    Without a threshold F = S always (each step commits exactly its count), so both are S —
    as in LLaDA's ``generate`` (ML-GSAI/LLaDA generate.py: S forwards per block). Lost runs
    (no conditional after a step) count the forwards made until they are lost."""

    step_commits: np.ndarray
    mask_steps: float = float("nan")


def _above_count(K: int, threshold) -> int:
    """The most values of one position whose confidence can exceed ``threshold``: the
    confidences of a position sum to 1 (to rounding), so fewer than 1/threshold."""
    if threshold is None:
        return 0
    return K if threshold == 0 else min(K, math.ceil((1 + 1e-9) / threshold) - 1)


def select_work(K: int, d: int, sizes, threshold) -> int:
    r"""An upper bound on the (state, term) pairs :func:`select_run` computes with the
    counts ``sizes``, before any work. A state with m masked positions has
    :math:`\binom{m}{k} K^k` top-k terms (k = min(k_t, m)) and, with a threshold, the
    :math:`\binom{m}{s} a^s` sets of s ≥ k positions above it (a: :func:`_above_count`);
    the states with r revealed after a step are at most :math:`\binom{d}{r} K^r` and at most
    the terms that reach r."""
    a = _above_count(K, threshold)
    states = {0: 1}  # revealed count -> bound on the live states
    total = 0
    for k_t in sizes:
        nxt: dict[int, int] = {}
        for r, n in states.items():
            m = d - r
            kk = min(k_t, m)
            moves = {kk: math.comb(m, kk) * K**kk}
            if threshold is not None:
                for s in range(kk, m + 1):
                    moves[s] = moves.get(s, 0) + math.comb(m, s) * a**s
            total += n * sum(moves.values())
            for s, c in moves.items():
                if r + s < d:
                    nxt[r + s] = nxt.get(r + s, 0) + n * c
        states = {r: min(n, math.comb(d, r) * K**r) for r, n in nxt.items()}
        if not states:
            break
    return total


def _work_topk(K: int, d: int, sizes, threshold) -> int:
    """An upper bound on the (state, candidate vector) pairs of the ``ties="topk"`` law:
    the states with r revealed before a step (at most C(d, r) K^r, any r reachable with a
    threshold) times K^(d - r) vectors each."""
    total, reach = 0, {0}
    for k_t in sizes:
        total += sum(math.comb(d, r) * K**r * K ** (d - r) for r in reach if r < d)
        reach = {min(d, r + s) for r in reach for s in (range(k_t, d - r + 1) if threshold is not None else [k_t])}
    return total


#: Elements of the largest intermediate array of one chunk of (states, terms).
_CHUNK = 1 << 20


@lru_cache(maxsize=64)
def _combos(m: int, k: int):
    """The k-subsets of 0..m-1 (C(m, k), k) increasing, and their complements (C(m, k), m - k)."""
    B = np.array(list(combinations(range(m), k)), dtype=np.int64).reshape(-1, k)
    inB = np.zeros((len(B), m), dtype=bool)
    inB[np.arange(len(B))[:, None], B] = True
    R = np.nonzero(~inB)[1].reshape(len(B), m - k)
    B.flags.writeable = R.flags.writeable = False
    return B, R


def _digits(t: np.ndarray, base: int, n: int) -> np.ndarray:
    """(len(t), n) base-``base`` digits of the integers t, most significant first."""
    return (t[:, None] // base ** np.arange(n - 1, -1, -1, dtype=np.int64)) % base


@lru_cache(maxsize=64)
def _inv_comb(m: int) -> np.ndarray:
    """(m + 1, m + 1) table 1 / C(r + u, r) for r, u in 0..m."""
    return np.array([[1.0 / math.comb(r + u, r) for u in range(m + 1)] for r in range(m + 1)])


def _terms(P: np.ndarray, k: int, planner: SampleThenSelectPlanner, pos=None, d=None):
    r"""The terms of one step (the product formula of the module docstring) at n states
    with m masked positions each, in blocks of at most :data:`_CHUNK` (state, term, position)
    entries.

    ``P`` (n, m, K): the conditionals of each state's masked positions, in increasing order;
    ``pos`` (n, m) their positions and ``d`` the length (read only by ``ties="topk"``, whose
    torch.topk call sees the whole vector).
    Yields ``(W, W0, codes)``: W (n, T) the probability of term T at each state, W0 (n, T) the
    part of it in which no tie decided the committed set (no outsider at the weakest member's
    level); codes the committed (relative position) * K + value of each member, -1 for none:
    (T, c) when the same for every state (the top-k terms), (n, T, c) otherwise (the threshold
    terms and ``ties="topk"``). Top-k terms are numbered by (committed set, values), both
    shared by every state with m masked positions. With levels
    :math:`\ell_j(y) = \mathrm{rint}(c_j(y)\,10^{12})` tabulated per state as
    :math:`\mathrm{lo}_i(b, y) = \Pr_{Y\sim s_i}[\ell_i(Y) < \ell_b(y)]` and
    :math:`\mathrm{eq}_i(b, y) = \Pr[\ell_i(Y) = \ell_b(y)]`, a term with members B, values
    y_B, weakest member w (lowest level; among equal levels the highest position) and r
    members at w's level has probability :math:`\prod_{b\in B} s_b(y_b)` times

    * ``"lowest"``: :math:`\prod_{i \notin B} (\mathrm{lo}_i(w) + [i > w]\,\mathrm{eq}_i(w))`;
    * ``"random"``: :math:`\sum_u e_u / \binom{r+u}{r}`, :math:`e_u` the coefficient of
      :math:`z^u` in :math:`\prod_{i \notin B} (\mathrm{lo}_i(w) + z\,\mathrm{eq}_i(w))`;

    kept only where :math:`c_w \le \theta`; W0 is :math:`\prod s \prod \mathrm{lo}_i(w)`.
    Threshold terms: every position committed with one of its (at most a) values above θ or
    not, at least k committed, with probability
    :math:`\prod_{b\in B} s_b(y_b) \prod_{i\notin B} \Pr[c_i \le \theta]` (no ranking: W0 = W)."""
    n, m, K = P.shape
    if planner.ties == "topk":
        yield from _terms_topk(P, k, planner, pos, d)
        return
    S = tempered(P, planner.temperature)
    C = _round(confidence_rows(P, S, planner.confidence, planner.temperature))
    kk = min(k, m)
    th = planner.threshold
    # the weakest member: lowest confidence, and among equal ones the highest position: the
    # least of the integer keys rint(c 10^12) m + (m - 1 - b) (c has 12 decimals: exact)
    lev = np.rint(C * 10.0**CONFIDENCE_DECIMALS).astype(np.int64)
    key = lev * m + (m - 1 - np.arange(m))[None, :, None]
    if m > kk:
        # LO / EQ[s, i, (b, y)] = Pr_{Y ~ s_i}[level_i(Y) < / = level_b(y)]
        lv_i, lv_b = lev[:, :, None, None, :], lev[:, None, :, :, None]
        LO = (S[:, :, None, None, :] * (lv_i < lv_b)).sum(axis=-1).reshape(n * m * m * K)
        EQ = (S[:, :, None, None, :] * (lv_i == lv_b)).sum(axis=-1).reshape(n * m * m * K)
        inv = _inv_comb(m)
    combos, rest = _combos(m, kk)
    nv = K**kk
    ys = _digits(np.arange(nv, dtype=np.int64), K, kk) if nv * kk <= _CHUNK else None  # the value vectors
    step = max(1, _CHUNK // (n * m))
    Sf, Cf, keyf, levf = S.reshape(n, m * K), C.reshape(n, m * K), key.reshape(n, m * K), lev.reshape(n, m * K)
    for t0 in range(0, len(combos) * nv, step):
        t = np.arange(t0, min(t0 + step, len(combos) * nv), dtype=np.int64)
        BY = combos[t // nv] * K + (ys[t % nv] if ys is not None else _digits(t % nv, K, kk))  # position K + value
        W = np.take(Sf, BY, axis=1).prod(axis=-1)
        W0 = W
        if m > kk or th is not None:
            kb = np.take(keyf, BY, axis=1)
            weakest = np.take_along_axis(np.broadcast_to(BY, kb.shape), kb.argmin(axis=-1)[..., None], axis=-1)[..., 0]
        if m > kk:
            at = (np.arange(n) * (m * m * K))[:, None] + weakest  # (n, T)
            out_at = at[..., None] + (rest[t // nv] * (m * K))[None]  # (n, T, m - kk)
            lo, eq = np.take(LO, out_at), np.take(EQ, out_at)
            W0 = W * lo.prod(axis=-1)
            if planner.ties == "lowest":  # an outsider may tie only above the weakest position
                after = rest[t // nv][None] > (weakest // K)[..., None]
                W = W * (lo + eq * after).prod(axis=-1)
            else:  # random: Poisson-binomial count u of tied outsiders, B's r chosen w.p. 1/C(r+u, r)
                lw = np.take_along_axis(levf, weakest, axis=1)
                r = (np.take(levf, BY, axis=1) == lw[..., None]).sum(axis=-1)  # (n, T)
                e = np.zeros(lo.shape[:-1] + (m - kk + 1,))
                e[..., 0] = 1.0
                for i in range(m - kk):
                    e[..., 1:] = e[..., 1:] * lo[..., i, None] + e[..., :-1] * eq[..., i, None]
                    e[..., 0] *= lo[..., i]
                W = W * (e * inv[r][..., : m - kk + 1]).sum(axis=-1)
        if th is not None:  # at least k above the threshold: the threshold branch commits them all
            low = np.take_along_axis(Cf, weakest, axis=1) > th
            W, W0 = np.where(low, 0.0, W), np.where(low, 0.0, W0)
        yield W, W0, BY
    if th is None:
        return
    above = C > th
    a = int(above.sum(axis=-1).max())
    vals = np.argsort(~above, axis=-1, kind="stable")[..., :a]  # (n, m, a): the values above, increasing
    F = np.concatenate([np.where(np.take_along_axis(above, vals, axis=-1), np.take_along_axis(S, vals, axis=-1), 0.0),
                        np.where(above, 0.0, S).sum(axis=-1, keepdims=True)], axis=-1).reshape(n, m * (a + 1))
    code = np.concatenate([np.arange(m)[None, :, None] * K + vals, np.full((n, m, 1), -1)], axis=-1).reshape(n, -1)
    for u0 in range(0, (a + 1) ** m, step):
        # U[T, i] = u < a: position i committed with its u-th value above; a: not committed
        U = _digits(np.arange(u0, min(u0 + step, (a + 1) ** m), dtype=np.int64), a + 1, m)
        U = U[(U < a).sum(axis=1) >= kk]
        if len(U):
            flat = np.arange(m)[None, :] * (a + 1) + U  # (T, m)
            W = np.take(F, flat, axis=1).prod(axis=-1)
            yield W, W, np.take(code, flat, axis=1)


def _terms_topk(P, k, planner, pos, d):
    """``ties="topk"``: every candidate vector with positive probability, its committed set
    from :func:`commit_choices` (torch.topk on the pipeline's vector: length d, the rounded
    confidences at the masked positions ``pos``, ``-inf`` elsewhere). Yields (W, W0, codes),
    codes (n, T, m) as the threshold terms'; W0 zero where the tie rule decided."""
    n, m, K = P.shape
    S = tempered(P, planner.temperature)
    C = _round(confidence_rows(P, S, planner.confidence, planner.temperature))
    kk = min(k, m)
    nv = K**m
    step = max(1, _CHUNK // (n * m))
    for t0 in range(0, nv, step):
        Y = _digits(np.arange(t0, min(t0 + step, nv), dtype=np.int64), K, m)  # (T, m)
        T = Y.shape[0]
        flat = np.arange(m)[None, :] * K + Y  # (T, m)
        W = np.take(S.reshape(n, m * K), flat, axis=1).prod(axis=-1)  # (n, T)
        ii, tt = np.nonzero(W)
        conf = np.full((ii.size, d), 0.0)
        free = np.zeros((ii.size, d), dtype=bool)
        conf[np.arange(ii.size)[:, None], pos[ii]] = np.take_along_axis(C.reshape(n, m * K)[ii], flat[tt], axis=1)
        free[np.arange(ii.size)[:, None], pos[ii]] = True
        ch = commit_choices(conf, free, kk, planner.threshold, "topk")
        got = np.take_along_axis(ch.chosen, pos[ii], axis=1)  # (terms, m) committed, relative
        codes = np.full((n, T, m), -1, dtype=np.int64)
        codes[ii, tt] = np.where(got, flat[tt], -1)
        W0 = W.copy()
        W0[ii[ch.split], tt[ch.split]] = 0.0
        yield W, W0, codes


def select_run(p: Joint, plan, planner: SampleThenSelectPlanner | None = None) -> SelectRun:
    """Exact output law of sample-then-select with the Schedule ``plan`` (module docstring).

    A sparse chain (:mod:`mdmtheory.samplers.kernel`): the live states of a step are flat
    indices into the marginal lattice; those with the same number of masked positions share
    one numbering of terms (:func:`_terms`), whose targets are classified by
    ``kernel.chain_targets`` (full states are outputs, masked states at p(x_A) = 0 are lost)
    and whose mass ``kernel.chain_apply`` pushes. A state with nothing masked stops (no
    mask step; the pipeline's one extra forward when that happens before the S-th step is
    counted in ``forwards``, :class:`SelectRun`). Refused past :data:`MAX_SELECT_WORK` terms (use
    :func:`mdmtheory.samplers.simulate`).
    """
    p = joint_arg(p)
    planner = SampleThenSelectPlanner() if planner is None else planner
    if not isinstance(planner, SampleThenSelectPlanner):
        raise ValueError(f"planner: expected a SampleThenSelectPlanner, got {type(planner).__name__}")
    _check_size(p.d, p.K, grid=False)  # the marginal lattice, (K+1)**d entries, before the terms are counted
    sched = check_schedule(plan, p.d, name="plan")
    if not isinstance(sched, Schedule):
        raise ValueError("plan: sample-then-select runs a Schedule (counts per step), not a Grid")
    if planner.ties == "topk":
        vec = _work_topk(p.K, p.d, sched.sizes, planner.threshold)
        if vec > MAX_TOPK_VECTORS:
            raise ValueError(f"p: the exact sample-then-select law under ties='topk' calls torch.topk on every "
                             f"candidate vector, ~{vec:.2g} (state, vector) pairs (d={p.d}, K={p.K}), above "
                             f"{MAX_TOPK_VECTORS:,}; use ties='random' or 'lowest' (product formulas), or Monte Carlo "
                             "(mdmtheory.samplers.simulate with this planner)")
    work = select_work(p.K, p.d, sched.sizes, planner.threshold)
    if work > MAX_SELECT_WORK:
        raise ValueError(f"p: the exact sample-then-select law needs ~{work:.2g} terms (d={p.d}, K={p.K}, largest "
                         f"step {max(sched.sizes)}), above {MAX_SELECT_WORK:,}; use Monte Carlo "
                         "(mdmtheory.samplers.simulate with this planner)")
    d, K = p.d, p.K
    Pf = kernel.marginal_lattice(p.table, xp=np).ravel()
    stride = kernel.lattice_strides(d, K)
    idx = kernel.index_dtype(d, K)  # the terms' sources and targets (int32 where the lattice allows)
    live = np.array([kernel.empty_state(d, K)], dtype=np.int64)
    mass = np.ones(1)
    mass0 = mass  # the mass of the runs no tie rule has decided yet (the same object until a tie)
    done = np.zeros(K**d)
    forwards, early, lost = 0.0, 0.0, 0.0
    untied, total = 0.0, 0.0  # the finished or lost mass of runs that no tie rule decided, of all runs
    commits = np.zeros(len(sched.sizes))
    for t, k in enumerate(sched.sizes):
        forwards += float(mass.sum())  # every live state has something masked: one mask step
        free = kernel.state_values(live, d, K) == K
        n_free = free.sum(axis=1)
        src, tgt, w, w0, nb = [], [], [], [], []
        w_parts = w  # the list itself: w0 shares its parts when no tie was possible
        for m in np.unique(n_free):
            rows = np.nonzero(n_free == m)[0]
            pos = np.nonzero(free[rows])[1].reshape(len(rows), m)  # masked positions, increasing
            kk = min(k, int(m))
            n_terms = max(math.comb(m, kk) * K**kk, (_above_count(K, planner.threshold) + 1) ** m
                          if planner.threshold is not None else 0, K**m if planner.ties == "topk" else 0)
            chunk = max(1, _CHUNK // max(n_terms * m, m * m * K * K))
            for a in range(0, len(rows), chunk):
                r, ps = rows[a:a + chunk], pos[a:a + chunk]
                P = kernel.state_conditionals(Pf, live[r], d, K)[np.arange(len(r))[:, None], ps]
                # move[s, b K + y] = (y - K) stride[b]: the index change of committing y at the
                # masked position b of state s (the last slot, code -1, commits nothing)
                move = np.zeros((len(r), m * K + 1), dtype=np.int64)
                move[:, :-1] = ((np.arange(K) - K)[None, None, :] * stride[ps][:, :, None]).reshape(len(r), m * K)
                for W, W0, codes in _terms(P, k, planner, ps, d):
                    ii, tt = np.nonzero(W)
                    if codes.ndim == 2:  # top-k: every member committed
                        cd = codes[tt] + (ii * (m * K + 1))[:, None]
                    else:
                        cd = codes[ii, tt]
                        cd = np.where(cd >= 0, cd, m * K) + (ii * (m * K + 1))[:, None]
                    src.append(r[ii].astype(idx))
                    tgt.append((live[r[ii]] + np.take(move, cd).sum(axis=1)).astype(idx))
                    w.append(W[ii, tt])
                    w0.append(w[-1] if W0 is W else W0[ii, tt])  # no tie possible: the same terms
                    nb.append(np.full(len(ii), kk, np.int16) if codes.ndim == 2 else
                              (codes[ii, tt] >= 0).sum(axis=1).astype(np.int16))
        # one list at a time (each list and its concatenation are alive together: a step of the
        # words law at T = 1 has K^d = 12 M terms, 95 MB per array)
        src = np.concatenate(src)
        w = np.concatenate(w)
        w0 = w if all(a is b for a, b in zip(w0, w_parts)) else np.concatenate(w0)
        del w_parts
        nb = np.concatenate(nb)
        tgt = np.concatenate(tgt)
        # the distinct targets and each term's among them (a mark on the lattice, not a sort)
        u, inv = kernel.distinct_states(tgt, Pf.shape[0])
        del tgt
        # classified in slices of sorted targets: each slice's live states follow the last's
        dst, out, nxt, n_live = [], [], [], 0
        for a in range(0, len(u), max(1, _CHUNK // d)):
            dst_a, out_a, nxt_a = kernel.chain_targets(u[a:a + max(1, _CHUNK // d)], Pf, d, K, finish_full=True,
                                                       distinct=True)
            dst.append(np.where(dst_a >= 0, dst_a + n_live, dst_a))
            out.append(out_a)
            nxt.append(nxt_a)
            n_live += len(nxt_a)
        dst, out, nxt = np.concatenate(dst), np.concatenate(out), np.concatenate(nxt)
        step = kernel.ChainStep(src=src, dst=dst[inv], out=out[inv], live=nxt, w=w)
        del inv, u, dst, out  # the per-target arrays: the step holds the per-term ones
        new, out_t, lost_t, moved = kernel.chain_apply(mass, step, Pf, K**d, xp=np)
        # no tie decided so far: one chain (w0 is w when no tie was possible: no (terms,) compare)
        if mass0 is mass and (w0 is w or np.array_equal(w0, w)):
            mass0, out0, lost0 = new, out_t, lost_t
        else:
            mass0, out0, lost0, _ = kernel.chain_apply(mass0, dataclasses.replace(step, w=w0), Pf, K**d, xp=np)
        mass = new
        untied += float(out0.sum()) + lost0
        total += float(out_t.sum()) + lost_t  # the same sums: exactly untied where no tie occurred
        done += out_t
        if t < len(sched.sizes) - 1:  # finished before the S-th mask step: the pipeline's extra pass
            early += float(out_t.sum())
        lost += lost_t
        commits[t] = float(moved @ nb)
        live = nxt
        if not live.size:
            break
    if live.size:  # cannot happen: every step commits at least min(k_t, masked) and the k_t sum to d
        raise AssertionError("select_run: masked positions left after the last step")
    return SelectRun(law=Joint(done.reshape(p.table.shape), lost=lost), forwards=float(forwards + early),
                     step_commits=commits, mask_steps=float(forwards), ties=planner.ties, pipeline=SELECT_PIPELINE,
                     tie_mass=max(0.0, total - untied))


# -- the bias of the committed values ---------------------------------------------------------
@dataclass(frozen=True)
class SelectionBias(Record):
    """One sample-then-select step from the empty state (or from ``given`` values):
    ``commit_prob[j]`` the probability that j is committed, ``committed[j]`` the law of its
    committed value given that it is (NaN rows where it never is: there is no such law),
    ``conditional[j]`` the true p(x_j | given), and ``tv[j]`` their total variation — the
    bias. Where j is never committed (``commit_prob[j] == 0``) ``tv[j]`` is defined as 0: the
    step commits no value there, so it brings no bias there (issue 31 §12; it was NaN, the
    TV of an undefined law). ``commit_prob * tv`` weighs each position's bias by how often
    the step commits it."""

    commit_prob: np.ndarray
    committed: np.ndarray
    conditional: np.ndarray
    tv: np.ndarray


def selection_bias(p: Joint, size: int, planner: SampleThenSelectPlanner | None = None) -> SelectionBias:
    """The bias of one step of ``size`` commits from nothing revealed (module docstring)."""
    p = joint_arg(p)
    planner = SampleThenSelectPlanner() if planner is None else planner
    if not isinstance(planner, SampleThenSelectPlanner):
        raise ValueError(f"planner: expected a SampleThenSelectPlanner, got {type(planner).__name__}")
    size = int_arg(size, "size", 1, p.d)
    _check_size(p.d, p.K, grid=False)  # the marginal lattice, (K+1)**d entries
    work = select_work(p.K, p.d, (size,), planner.threshold)
    if work > MAX_SELECT_WORK:
        raise ValueError(f"size: one step of {size} commits needs ~{work:.2g} terms (d={p.d}, K={p.K}), above "
                         f"{MAX_SELECT_WORK:,}; use Monte Carlo (mdmtheory.samplers.simulate with this planner)")
    d, K = p.d, p.K
    Pf = kernel.marginal_lattice(p.table, xp=np).ravel()
    P = kernel.state_conditionals(Pf, np.array([kernel.empty_state(d, K)]), d, K)[0]
    got = np.zeros(d * K)
    for W, _, codes in _terms(P[None], int(size), planner, np.arange(d)[None], d):
        cd = codes if codes.ndim == 2 else codes[0]
        got += np.bincount(cd[cd >= 0], weights=np.broadcast_to(W[0][:, None], cd.shape)[cd >= 0], minlength=d * K)
    got = got.reshape(d, K)
    prob = got.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        law = got / prob[:, None]
    tv = np.where(prob > 0, 0.5 * np.abs(law - P).sum(axis=1), 0.0)  # a NaN row (never committed): 0
    return SelectionBias(prob, law, P, tv)
