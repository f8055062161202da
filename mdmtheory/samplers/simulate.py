r"""Monte Carlo simulation of planner-driven samplers, and Monte Carlo KL estimates.

Works from a *conditional oracle* (:mod:`mdmtheory.laws.oracles`): a dense
:class:`~mdmtheory.Joint` or a structured law such as
:class:`~mdmtheory.laws.MarkovChainLaw`, so d in the hundreds is fine. Randomness comes
only from ``np.random.default_rng(seed)``.

* :func:`simulate` runs the factorized sampler: at step t every :math:`j \in B_t` is drawn
  independently from :math:`p(x_j \mid x_{A_t})`; the samples follow the sampler's law q.
  A sample that reaches a prefix with :math:`p(x_A) = 0` stops there and is counted as lost
  (docs/design.md §6).
* :func:`estimate_kl` draws :math:`x \sim p` exactly, follows the planner's path for x and
  sums the pointwise per-step total correlation

  .. math::

      L(x) = \sum_t \Bigl[\log p(x_{B_t} \mid x_{A_t})
             - \sum_{j \in B_t} \log p(x_j \mid x_{A_t})\Bigr].

  For a deterministic planner :math:`L(x) = \log p(x)/q(x)` (the path of x is unique), so
  :math:`\mathbb{E}_p L = \mathrm{KL}(p \,\|\, q)`; for a random planner (random order drawn
  along the way, or a scored planner with ``ties="random"``, whose split ties are drawn)
  :math:`\mathbb{E} L` is the trajectory (path) KL, an upper bound on KL(p‖q) that is what
  can be estimated without evaluating q (``exact_run(..., trajectory=True).path_kl``; equal
  to the KL when no tie is split, ``tie_mass == 0``). The interval is
  :math:`\bar L \pm z\, s/\sqrt n` (normal approximation).

Planners: the deterministic planners of :mod:`mdmtheory.samplers.adaptive` (their ``select``
method), :class:`~mdmtheory.samplers.planners.RandomPlanner` (``"random"``), and in
:func:`simulate` :class:`~mdmtheory.samplers.select.SampleThenSelectPlanner`, which draws a
candidate everywhere and commits the most confident (:mod:`mdmtheory.samplers.select`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from .._estimate import Estimate, Record
from ..laws.oracles import as_oracle, _inverse_cdf
from ..schedules.plans import check_schedule, Grid
from .._validate import int_arg
from .planners import RandomPlanner, resolve_planner

__all__ = ["Simulation", "KLEstimate", "simulate", "estimate_kl", "STDERR_FLOOR"]

#: Smallest standard error used by :meth:`KLEstimate.zscore` (rounding of the log-ratios).
STDERR_FLOOR = 1e-12


@dataclass(frozen=True)
class Simulation(Record):
    """Samples of a sampler and where each position was revealed.

    Attributes
    ----------
    samples : (n, d) int64 tokens; rows of lost samples hold -1 at positions never drawn.
    lost : (n,) bool, the sample hit a prefix with p(x_A) = 0 (its remaining steps undefined).
    reveal_step : (n, d) int64, the step (1-based) at which each position was revealed, 0 if
        never (lost samples).
    steps : (n,) int64, number of steps each sample took.
    """

    samples: np.ndarray
    lost: np.ndarray
    reveal_step: np.ndarray
    steps: np.ndarray


@dataclass(frozen=True)
class KLEstimate(Estimate):
    r"""Monte Carlo estimate of KL(p‖q) (deterministic planners) or of the path KL (random).

    Attributes
    ----------
    value : the sample mean :math:`\bar L`.
    stderr : :math:`s / \sqrt n` (s the sample standard deviation, ddof = 1).
    ci : (low, high), :math:`\bar L \pm z \cdot \mathrm{stderr}` at ``level``.
    level : confidence level of ``ci``.
    n : number of samples.
    kind : ``"kl"`` (deterministic planner: estimates KL(p‖q)) or ``"path_kl"``.
    log_ratios : (n,) the per-sample :math:`L(x)`.
    step_means : (n_steps,) mean per-step term (estimates the expected TC of each step; 0
        for steps a sample did not take).
    reveal_step : (n, d) step at which each position was revealed along the path.
    steps : (n,) number of steps of each path.
    """

    value: float
    stderr: float
    ci: tuple[float, float]
    level: float
    n: int
    kind: str
    log_ratios: np.ndarray
    step_means: np.ndarray
    reveal_step: np.ndarray
    steps: np.ndarray

    def zscore(self, exact: float) -> float:
        """(value - exact) / stderr, the stderr floored at :data:`STDERR_FLOOR`.

        The floor is the rounding level of the summed log-ratios: a planner that is exact
        (KL = 0, every log-ratio ~1e-16) must not give a huge z from rounding noise.
        """
        return float((self.value - exact) / max(self.stderr, STDERR_FLOOR))


def _check_n_seed(n, seed):
    n = int_arg(n, "n", 2, None, " (number of samples)")
    seed = int_arg(seed, "seed", 0, None, " (explicit seed)")
    return n, seed


def _planner_setup(plan, planner, d: int, *, values_ok: bool = False):
    """(planner, is_random, sizes) of a Monte Carlo run on d positions: the one rule of every
    Monte Carlo path (this module, ``mdmtheory.bridge``); sizes are ``None`` per step for
    planners that choose their own. ``values_ok``: the caller draws the sampler's own values
    (:func:`simulate`), so sample-then-select is allowed; estimators that follow the data's
    path refuse it."""
    if isinstance(plan, Grid):
        raise ValueError("plan: this Monte Carlo takes a Schedule or None (Grids: mdmtheory.samplers.simulate "
                         "and estimate_kl, or the exact engine)")
    planner = resolve_planner(planner)
    is_random = isinstance(planner, RandomPlanner)
    if getattr(planner, "commits_values", False) and not values_ok:
        raise ValueError("planner: sample-then-select commits the values it drew, not the data's: the pointwise "
                         "log-ratio along x's own path is not its KL; use select_run (exact) or simulate")
    if not is_random and not hasattr(planner, "select") and not getattr(planner, "commits_values", False):
        raise ValueError(
            f"planner: {getattr(planner, 'name', planner)!r} has no Monte Carlo select(); "
            "use 'random' or a planner from mdmtheory.samplers.adaptive"
        )
    if plan is None:
        if getattr(planner, "needs_schedule", True):
            raise ValueError(f"plan: planner {getattr(planner, 'name', planner)!r} needs a Schedule")
        sizes = [None] * d
    else:
        sizes = list(check_schedule(plan, d, name="plan").sizes)
    return planner, is_random, sizes


def _setup(law, plan, planner, *, values_ok: bool = False):
    oracle = as_oracle(law)
    return (oracle, *_planner_setup(plan, planner, oracle.d, values_ok=values_ok))


def _grid_setup(law, plan: Grid, planner):
    """The Bernoulli-subset sampler of a Grid (as the exact engine runs it): positions with
    U_i <= t_0 drawn exactly (jointly) at the start, each masked position revealed at step j
    with probability beta_j, the rest completed exactly (jointly) when t_N < 1."""
    if not (isinstance(planner, str) and planner in ("random", "bernoulli")):
        raise ValueError(f"planner: a Grid drives the Bernoulli-subset sampler; use planner='random' "
                         f"(or 'bernoulli'), got {planner!r}")
    return as_oracle(law), plan.betas, float(plan.times[0]), bool(plan.times[-1] < 1.0)


def _reachable(oracle, rows, x, revealed, lost):
    """The rows whose revealed values p can produce, with their (x, revealed); the others are
    marked ``lost`` (no conditional exists after a prefix of probability 0)."""
    xs, rv = x[rows], revealed[rows]
    reach = oracle.log_marginal(xs, rv) > -np.inf
    lost[rows[~reach]] = True
    return rows[reach], xs[reach], rv[reach]


def _exact_draw(oracle, x, revealed, todo, rng):
    """Fill the positions ``todo`` (n, d) of each row exactly from p(x_todo | x_revealed), one
    position at a time through the one-token conditionals (the chain rule)."""
    x, rv = x.copy(), revealed.copy()
    for j in range(oracle.d):
        rows = np.flatnonzero(todo[:, j])
        if rows.size == 0:
            continue
        probs = oracle.conditionals(x[rows], rv[rows])[:, j]
        x[rows, j] = _inverse_cdf(probs, rng.random(rows.size))
        rv[rows, j] = True
    return x


def _bernoulli_chosen(free, beta, rng):
    return free & (rng.random(free.shape) < beta)


def _choose(planner, is_random, step, size, probs, free, rng):
    if is_random:
        keys = np.where(free, rng.random(free.shape), np.inf)
        order = np.argsort(keys, axis=1, kind="stable")[:, :size]
        chosen = np.zeros(free.shape, dtype=bool)
        np.put_along_axis(chosen, order, True, axis=1)
    elif getattr(planner, "ties", None) == "random":  # split ties drawn from rng (mdmtheory.samplers.ties)
        chosen = np.asarray(planner.select(step, size, probs, free, rng=rng), dtype=bool)
    else:
        chosen = np.asarray(planner.select(step, size, probs, free), dtype=bool)
    if chosen.shape != free.shape or np.any(chosen & ~free):
        raise ValueError("planner: select() returned positions that are not masked")
    counts = chosen.sum(axis=1)
    if np.any(counts == 0):
        raise ValueError("planner: select() proposed an empty reveal set")
    if size is not None and np.any(counts != size):
        raise ValueError(f"planner: select() proposed a step of the wrong size (expected {size})")
    return chosen


def simulate(law, plan=None, planner="random", *, n: int, seed: int) -> Simulation:
    """Draw n samples of the factorized sampler (see the module docstring).

    Parameters
    ----------
    law : a :class:`~mdmtheory.Joint` or a conditional oracle (e.g. MarkovChainLaw).
    plan : a Schedule, or None for planners that choose their own sizes.
    planner : ``"random"``, a registered name, or a planner object with ``select``.
    n, seed : number of samples; seed of ``np.random.default_rng``.
    """
    n, seed = _check_n_seed(n, seed)
    if isinstance(plan, Grid):
        return _simulate_grid(law, plan, planner, n, seed)
    from ..schedules.plans import RandomSchedule

    if isinstance(plan, RandomSchedule):
        return _simulate_random_sizes(law, plan, planner, n, seed)
    oracle, planner, is_random, sizes = _setup(law, plan, planner, values_ok=True)
    rng = np.random.default_rng(seed)
    d = oracle.d
    x = np.zeros((n, d), dtype=np.int64)
    revealed = np.zeros((n, d), dtype=bool)
    lost = np.zeros(n, dtype=bool)
    reveal_step = np.zeros((n, d), dtype=np.int64)
    steps = np.zeros(n, dtype=np.int64)
    for t, size in enumerate(sizes):
        rows = np.flatnonzero(~lost & ~revealed.all(axis=1))
        if rows.size == 0:
            break
        rows, xs, rv = _reachable(oracle, rows, x, revealed, lost)
        if rows.size == 0:
            continue
        probs = oracle.conditionals(xs, rv)
        if getattr(planner, "commits_values", False):  # sample-then-select: values first, then positions
            chosen, draw = planner.draw(probs, ~rv, size, rng)
        else:
            chosen = _choose(planner, is_random, t, size, probs, ~rv, rng)
            draw = _inverse_cdf(probs, rng.random(xs.shape))
        x[rows] = np.where(chosen, draw, xs)
        revealed[rows] = rv | chosen
        reveal_step[rows] = np.where(chosen, t + 1, reveal_step[rows])
        steps[rows] = t + 1
    if not (lost | revealed.all(axis=1)).all():
        raise ValueError("plan: some samples still have masked positions after the last step")
    samples = np.where(revealed, x, -1)
    return Simulation(samples=samples, lost=lost, reveal_step=reveal_step, steps=steps)


def _simulate_random_sizes(law, plan, planner, n: int, seed: int) -> Simulation:
    """:func:`simulate` of a RandomSchedule: one composition drawn per sample (seeded), then
    each composition's samples run as a Schedule (its own stream), rows in draw order."""
    from ..schedules.plans import Schedule

    rng = np.random.default_rng(seed)
    comps = plan.sample(n, rng)
    d = plan.d
    samples = np.empty((n, d), dtype=np.int64)
    lost = np.zeros(n, dtype=bool)
    reveal_step = np.zeros((n, d), dtype=np.int64)
    steps = np.zeros(n, dtype=np.int64)
    for i, c in enumerate(sorted(set(comps))):
        rows = np.array([r for r, cc in enumerate(comps) if cc == c])
        if rows.size < 2:  # simulate needs n >= 2; draw two and keep one
            sim = simulate(law, Schedule(c), planner, n=2, seed=int(rng.integers(2**32)))
            sl = slice(0, 1)
        else:
            sim = simulate(law, Schedule(c), planner, n=rows.size, seed=int(rng.integers(2**32)))
            sl = slice(None)
        samples[rows], lost[rows] = sim.samples[sl], sim.lost[sl]
        reveal_step[rows], steps[rows] = sim.reveal_step[sl], sim.steps[sl]
    return Simulation(samples=samples, lost=lost, reveal_step=reveal_step, steps=steps)


def _simulate_grid(law, plan: Grid, planner, n: int, seed: int) -> Simulation:
    """:func:`simulate` of a Grid (see :func:`_grid_setup`); initialization tokens have
    reveal step 0, the exact completion step N + 1; ``steps`` counts the grid's steps taken."""
    oracle, betas, t0, complete = _grid_setup(law, plan, planner)
    rng = np.random.default_rng(seed)
    d = oracle.d
    revealed = rng.random((n, d)) < t0 if t0 > 0 else np.zeros((n, d), dtype=bool)
    x = np.where(revealed, oracle.sample(n, rng), 0) if t0 > 0 else np.zeros((n, d), dtype=np.int64)
    lost = np.zeros(n, dtype=bool)
    reveal_step = np.zeros((n, d), dtype=np.int64)
    steps = np.zeros(n, dtype=np.int64)
    for t, beta in enumerate(betas):
        rows = np.flatnonzero(~lost & ~revealed.all(axis=1))
        if rows.size == 0:
            break
        rows, xs, rv = _reachable(oracle, rows, x, revealed, lost)
        if rows.size == 0:
            continue
        chosen = _bernoulli_chosen(~rv, beta, rng)
        if chosen.any():
            probs = oracle.conditionals(xs, rv)
            draw = _inverse_cdf(probs, rng.random(xs.shape))
            x[rows] = np.where(chosen, draw, xs)
        revealed[rows] = rv | chosen
        reveal_step[rows] = np.where(chosen, t + 1, reveal_step[rows])
        steps[rows] = t + 1
    rows = np.flatnonzero(~lost & ~revealed.all(axis=1))
    if rows.size:
        if not complete:  # t_N = 1 reveals every position with probability 1
            raise ValueError("plan: some samples still have masked positions after the last step")
        rows, xs, rv = _reachable(oracle, rows, x, revealed, lost)
        x[rows] = _exact_draw(oracle, xs, rv, ~rv, rng)
        reveal_step[rows] = np.where(rv, reveal_step[rows], len(betas) + 1)
        revealed[rows] = True
    samples = np.where(revealed, x, -1)
    return Simulation(samples=samples, lost=lost, reveal_step=reveal_step, steps=steps)


def estimate_kl(law, plan=None, planner="random", *, n: int, seed: int, level: float = 0.95) -> KLEstimate:
    r"""Monte Carlo estimate of KL(p‖q) (deterministic planner) or of the path KL (random).

    See the module docstring: x ~ p exactly, then the pointwise per-step TC summed along the
    planner's path for x. Returns a :class:`KLEstimate` with a normal confidence interval.
    """
    n, seed = _check_n_seed(n, seed)
    if not (isinstance(level, numbers.Real) and 0 < level < 1):
        raise ValueError(f"level: expected a confidence level in (0, 1), got {level!r}")
    grid = isinstance(plan, Grid)
    if grid:
        oracle, betas, t0, complete = _grid_setup(law, plan, planner)
        planner, is_random, sizes = None, True, list(betas)
    else:
        oracle, planner, is_random, sizes = _setup(law, plan, planner)
    rng = np.random.default_rng(seed)
    d = oracle.d
    x = oracle.sample(n, rng)
    # a grid's initialization (U_i <= t_0) and completion are exact: they add nothing to L
    revealed = (rng.random((n, d)) < t0) if grid and t0 > 0 else np.zeros((n, d), dtype=bool)
    reveal_step = np.zeros((n, d), dtype=np.int64)
    steps = np.zeros(n, dtype=np.int64)
    terms = np.zeros((len(sizes), n))
    log_pA = oracle.log_marginal(x, revealed) if revealed.any() else np.zeros(n)
    ar = np.arange(n)
    for t, size in enumerate(sizes):
        rows = np.flatnonzero(~revealed.all(axis=1))
        if rows.size == 0:
            terms = terms[:t]
            break
        xs, rv = x[rows], revealed[rows]
        probs = oracle.conditionals(xs, rv)
        if grid:
            chosen = _bernoulli_chosen(~rv, size, rng)  # size: this step's beta
        else:
            chosen = _choose(planner, is_random, t, size, probs, ~rv, rng)
        own = probs[ar[: rows.size, None], np.arange(d)[None, :], xs]  # p(x_j | x_A) at the true x_j
        with np.errstate(divide="ignore"):
            log_single = np.where(chosen, np.log(np.where(chosen, own, 1.0)), 0.0).sum(axis=1)
        new = rv | chosen
        log_pAB = oracle.log_marginal(xs, new)
        terms[t, rows] = (log_pAB - log_pA[rows]) - log_single
        log_pA[rows] = log_pAB
        revealed[rows] = new
        reveal_step[rows] = np.where(chosen, t + 1, reveal_step[rows])
        steps[rows] = t + 1
    if not revealed.all() and not (grid and complete):
        raise ValueError("plan: some paths still have masked positions after the last step")
    L = terms.sum(axis=0)
    if not np.all(np.isfinite(L)):  # x ~ p exactly: every factor along its own path is positive
        raise ValueError("law: a sample x ~ p has a zero conditional along its path (inconsistent oracle)")
    value = float(L.mean())
    stderr = float(L.std(ddof=1) / np.sqrt(n))
    z = float(norm.ppf(0.5 + level / 2))
    return KLEstimate(
        value=value,
        stderr=stderr,
        ci=(value - z * stderr, value + z * stderr),
        level=float(level),
        n=n,
        kind="path_kl" if is_random or not getattr(planner, "deterministic", False) else "kl",
        log_ratios=L,
        step_means=terms.mean(axis=1),
        reveal_step=reveal_step,
        steps=steps,
    )
