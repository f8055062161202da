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

Arguments: those of ``mt.sampler_law`` (:func:`mdmtheory.samplers.engine.sampler_law`), so
that a sampler's exact law and its Monte Carlo are asked the same way. Plans: a Schedule, a
Grid (the Bernoulli-subset sampler), a BlockPlan (the planner on the masked positions of each
step's block), a RandomSchedule (one composition drawn per sample, each composition's samples
on a stream of their own), or None. Planners: the deterministic planners of
:mod:`mdmtheory.samplers.adaptive` (their ``select`` method),
:class:`~mdmtheory.samplers.planners.RandomPlanner` (``"random"``), and in :func:`simulate`
:class:`~mdmtheory.samplers.select.SampleThenSelectPlanner`, which draws a candidate
everywhere and commits the most confident (:mod:`mdmtheory.samplers.select`), and the
revising samplers of :mod:`mdmtheory.samplers.revise` (their own ``simulate``).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from .._estimate import Estimate, Record
from .._moved import renamed_keywords
from ..laws.oracles import as_oracle, inverse_cdf
from ..schedules.plans import BlockPlan, check_schedule, Grid, RandomSchedule, Schedule
from .._validate import int_arg
from .base import as_sampler, bind, Simulation
from .._validate import real_arg

__all__ = ["planner_setup", "choose_positions", "KLEstimate", "simulate", "estimate_kl", "STDERR_FLOOR"]

#: Smallest standard error used by :meth:`KLEstimate.zscore` (rounding of the log-ratios).
STDERR_FLOOR = 1e-12


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
        exact = real_arg(exact, "exact")
        return float((self.value - exact) / max(self.stderr, STDERR_FLOOR))


def _check_n_seed(n, seed):
    n = int_arg(n, "n", 2, None, " (number of samples)")
    seed = int_arg(seed, "seed", 0, None, " (explicit seed)")
    return n, seed


def planner_setup(plan, planner, d: int, *, values_ok: bool = False):
    """(planner, is_random, sizes) of a Monte Carlo run on d positions: the one rule of every
    Monte Carlo path (this module, ``mdmtheory.bridge``); sizes are ``None`` per step for
    planners that choose their own. ``values_ok``: the caller draws the sampler's own values
    (:func:`simulate`), so sample-then-select is allowed; estimators that follow the data's
    path refuse it."""
    if isinstance(plan, Grid):
        raise ValueError("plan: this Monte Carlo takes a Schedule or None (Grids: mdmtheory.samplers.simulate "
                         "and estimate_kl, or the exact engine)")
    planner = as_sampler(planner)
    cap = planner.capabilities
    is_random = cap.random_order
    if cap.commits_values and not values_ok:
        raise ValueError("planner: sample-then-select commits the values it drew, not the data's: the pointwise "
                         "log-ratio along x's own path is not its KL; for a small law use "
                         "mt.kl(p, mt.sampler_law(p, plan, planner)) (exact), for samples simulate")
    if not is_random and not hasattr(planner, "select") and not cap.commits_values:
        raise ValueError(
            f"planner: {planner.name!r} has no Monte Carlo select(); "
            "use 'random' or a planner from mdmtheory.samplers.adaptive"
        )
    if plan is None:
        if cap.needs_plan:
            raise ValueError(f"plan: planner {planner.name!r} needs a Schedule")
        sizes = [None] * d
    else:
        sizes = list(check_schedule(plan, d, name="plan").sizes)
    return planner, is_random, sizes


def _oracle(p):
    """``as_oracle(p)``, its refusal naming the argument ``p``."""
    try:
        return as_oracle(p)
    except ValueError as exc:
        raise ValueError(f"p: {str(exc).removeprefix('law: ')}") from None


def _setup(p, plan, planner, *, values_ok: bool = False):
    oracle = _oracle(p)
    return (oracle, *planner_setup(plan, planner, oracle.d, values_ok=values_ok))


def _grid_setup(p, plan: Grid, planner):
    """The Bernoulli-subset sampler of a Grid (as the exact engine runs it): positions with
    U_i <= t_0 drawn exactly (jointly) at the start, each masked position revealed at step j
    with probability beta_j, the rest completed exactly (jointly) when t_N < 1."""
    planner = as_sampler(planner)
    if not (planner.capabilities.random_order and "Grid" in planner.capabilities.plans) or planner.allows_empty:
        raise ValueError(f"planner: a Grid drives the Bernoulli-subset sampler; use planner='random' "
                         f"(or 'bernoulli'), got {planner.name!r}")
    return _oracle(p), plan.betas, float(plan.times[0]), bool(plan.times[-1] < 1.0)


def _blocks_setup(oracle, plan: BlockPlan, planner):
    """(planner, is_random, sizes, blocks) of a BlockPlan: the planner runs on the masked
    positions of each step's block (``blocks[t]``, a (d,) mask), the plan's sizes."""
    if plan.d != oracle.d:
        raise ValueError(f"plan: a BlockPlan of {plan.d} positions, but the law has d = {oracle.d}")
    planner, is_random, sizes = planner_setup(plan.schedule, planner, oracle.d)
    blocks = np.zeros((plan.steps, oracle.d), dtype=bool)
    for t, b in enumerate(plan.step_blocks):
        blocks[t, list(b)] = True
    return planner, is_random, sizes, blocks


def _reachable(oracle, rows, x, revealed, lost):
    """The rows whose revealed values p can produce, with their (x, revealed); the others are
    marked ``lost`` (no conditional exists after a prefix of probability 0)."""
    xs, rv = x[rows], revealed[rows]
    reach = oracle.log_marginal(xs, rv) > -np.inf
    lost[rows[~reach]] = True
    return rows[reach], xs[reach], rv[reach]


class _Batch:
    """The set-up every Monte Carlo loop of :func:`simulate` shares: n samples of the oracle,
    all masked (or ``revealed`` with values ``x``), and what a step does to them."""

    def __init__(self, oracle, n: int, x=None, revealed=None):
        d = oracle.d
        self.oracle = oracle
        self.x = np.zeros((n, d), dtype=np.int64) if x is None else x
        self.revealed = np.zeros((n, d), dtype=bool) if revealed is None else revealed
        self.lost = np.zeros(n, dtype=bool)
        self.reveal_step = np.zeros((n, d), dtype=np.int64)
        self.steps = np.zeros(n, dtype=np.int64)

    def unfinished(self) -> np.ndarray:
        return np.flatnonzero(~self.lost & ~self.revealed.all(axis=1))

    def live(self):
        """(rows, x, revealed) of the unfinished samples that can go on (the others marked
        lost), or None when every sample is finished or lost."""
        rows = self.unfinished()
        if rows.size == 0:
            return None
        return _reachable(self.oracle, rows, self.x, self.revealed, self.lost)

    def commit(self, t: int, rows, xs, rv, chosen, draw):
        """Step t reveals ``chosen`` with the values ``draw`` in the samples ``rows``."""
        self.x[rows] = np.where(chosen, draw, xs)
        self.revealed[rows] = rv | chosen
        self.reveal_step[rows] = np.where(chosen, t + 1, self.reveal_step[rows])
        self.steps[rows] = t + 1

    def result(self) -> Simulation:
        return Simulation(samples=np.where(self.revealed, self.x, -1), lost=self.lost,
                          reveal_step=self.reveal_step, steps=self.steps)


def _exact_draw(oracle, x, revealed, todo, rng):
    """Fill the positions ``todo`` (n, d) of each row exactly from p(x_todo | x_revealed), one
    position at a time through the one-token conditionals (the chain rule)."""
    x, rv = x.copy(), revealed.copy()
    for j in range(oracle.d):
        rows = np.flatnonzero(todo[:, j])
        if rows.size == 0:
            continue
        probs = oracle.conditionals(x[rows], rv[rows])[:, j]
        x[rows, j] = inverse_cdf(probs, rng.random(rows.size))
        rv[rows, j] = True
    return x


def _bernoulli_chosen(free, beta, rng):
    return free & (rng.random(free.shape) < beta)


def choose_positions(planner, is_random, step, size, probs, free, rng):
    """The (N, d) bool set one Monte Carlo step reveals: ``size`` uniformly random free positions
    when ``is_random``, else the planner's choice from the conditionals ``probs``. Unvalidated:
    the inner loop of :func:`simulate` and of the estimators of :mod:`mdmtheory.bridge`."""
    if is_random:
        keys = np.where(free, rng.random(free.shape), np.inf)
        order = np.argsort(keys, axis=1, kind="stable")[:, :size]
        chosen = np.zeros(free.shape, dtype=bool)
        np.put_along_axis(chosen, order, True, axis=1)
    elif getattr(planner, "ties", None) == "random":  # split ties drawn from rng (mdmtheory.samplers.ties)
        chosen = np.asarray(planner.select(step, size, probs, free, rng=rng), dtype=bool)
    else:
        chosen = np.asarray(planner.select(step, size, probs, free), dtype=bool)
    return _checked(chosen, free, size)


def _checked(chosen, free, size):
    """A planner's reveal sets (n, d), checked: masked positions only, non-empty, of the step's size."""
    if chosen.shape != free.shape or np.any(chosen & ~free):
        raise ValueError("planner: select() returned positions that are not masked")
    counts = chosen.sum(axis=1)
    if np.any(counts == 0):
        raise ValueError("planner: select() proposed an empty reveal set")
    if size is not None and np.any(counts != size):
        raise ValueError(f"planner: select() proposed a step of the wrong size (expected {size})")
    return chosen


@renamed_keywords(law="p")
def simulate(p, plan=None, planner="random", *, n: int, seed: int, ties=None) -> Simulation:
    """Draw n samples of a sampler: the Monte Carlo twin of :func:`mt.sampler_law
    <mdmtheory.samplers.engine.sampler_law>`, with the same arguments.

    Parameters
    ----------
    p : a :class:`~mdmtheory.Joint` or a conditional oracle (e.g. MarkovChainLaw). (``law=``
        is the old name: it works for one release, with a DeprecationWarning.)
    plan : a Schedule, a Grid (``"random"``/``"bernoulli"``: the Bernoulli-subset sampler), a
        BlockPlan (the planner on the masked positions of each step's block), a RandomSchedule
        (one composition drawn per sample), or None (planners with their own sizes; the
        revising samplers, which carry their plan).
    planner : ``"random"``, a registered name, a planner object with ``select``, a
        ``SampleThenSelectPlanner`` (Schedule or RandomSchedule), or a revising sampler
        (``RemaskingSampler``, ``CorrectorSampler``, ``EditingSampler``: their ``simulate``).
    n, seed : number of samples; seed of ``np.random.default_rng``.
    ties : None (the planner's rule) or a tie rule that replaces it (as in ``sampler_law``).

    The revising samplers return ``reveal_step`` and ``steps`` None (a position can be
    revealed, masked and revealed again) and, for editing, ``forwards`` per sample.
    """
    n, seed = _check_n_seed(n, seed)
    sampler = as_sampler(planner, ties=ties, plan=plan)
    return sampler.simulate(p, plan, n=n, seed=seed)


@bind("simulate")
def _positions_simulate(p, plan, planner, *, n: int, seed: int) -> Simulation:
    """The shared Monte Carlo of the planners of positions and sample-then-select (the
    protocol's ``simulate`` of both, bound in :mod:`.base`): one loop over the steps."""
    n, seed = _check_n_seed(n, seed)
    if isinstance(plan, Grid):
        return _simulate_grid(p, plan, planner, n, seed)
    if isinstance(plan, RandomSchedule):
        return _simulate_random_sizes(p, plan, planner, n, seed)
    oracle = _oracle(p)
    if isinstance(plan, BlockPlan):
        planner, is_random, sizes, blocks = _blocks_setup(oracle, plan, planner)
    else:
        planner, is_random, sizes = planner_setup(plan, planner, oracle.d, values_ok=True)
        blocks = None
    return _simulate_sizes(oracle, planner, is_random, sizes, blocks, n, np.random.default_rng(seed))


def _simulate_sizes(oracle, planner, is_random, sizes, blocks, n: int, rng) -> Simulation:
    """The factorized sampler with the step sizes ``sizes`` (None: the planner's own), the
    candidates of step t restricted to ``blocks[t]`` when given."""
    run = _Batch(oracle, n)
    for t, size in enumerate(sizes):
        live = run.live()
        if live is None:
            break
        rows, xs, rv = live
        if rows.size == 0:
            continue
        probs = oracle.conditionals(xs, rv)
        free = ~rv if blocks is None else ~rv & blocks[t]
        if planner.capabilities.commits_values:  # sample-then-select: values first, then positions
            chosen, draw = planner.draw(probs, free, size, rng)
        else:
            if getattr(planner, "needs_oracle", False):  # reads conditionals at other states (DemaskPlanner)
                chosen = _checked(np.asarray(planner.select_oracle(t, size, probs, free, oracle, xs, rv), dtype=bool),
                                  free, size)
            else:
                chosen = choose_positions(planner, is_random, t, size, probs, free, rng)
            draw = inverse_cdf(probs, rng.random(xs.shape))
        run.commit(t, rows, xs, rv, chosen, draw)
    if run.unfinished().size:
        raise ValueError("plan: some samples still have masked positions after the last step")
    return run.result()


def _by_composition(plan: RandomSchedule, d: int, n: int, seed: int):
    """One composition of ``plan`` drawn per sample (seeded), then for each composition (in
    sorted order) its rows and a seed of its own: yields (Schedule, rows, seed)."""
    if plan.d != d:
        raise ValueError(f"plan: compositions of {plan.d}, but the law has d = {d}")
    rng = np.random.default_rng(seed)
    comps = plan.sample(n, rng)
    for c in sorted(set(comps)):
        rows = np.array([r for r, cc in enumerate(comps) if cc == c])
        yield Schedule(c), rows, int(rng.integers(2**32))


def _simulate_random_sizes(p, plan: RandomSchedule, planner, n: int, seed: int) -> Simulation:
    """:func:`simulate` of a RandomSchedule: one composition drawn per sample (seeded), then
    each composition's samples run as a Schedule (its own stream), rows in draw order."""
    oracle = _oracle(p)
    d = oracle.d
    samples = np.empty((n, d), dtype=np.int64)
    lost = np.zeros(n, dtype=bool)
    reveal_step = np.zeros((n, d), dtype=np.int64)
    steps = np.zeros(n, dtype=np.int64)
    for sched, rows, sub in _by_composition(plan, d, n, seed):
        pl, is_random, sizes = planner_setup(sched, planner, d, values_ok=True)
        sim = _simulate_sizes(oracle, pl, is_random, sizes, None, rows.size, np.random.default_rng(sub))
        samples[rows], lost[rows] = sim.samples, sim.lost
        reveal_step[rows], steps[rows] = sim.reveal_step, sim.steps
    return Simulation(samples=samples, lost=lost, reveal_step=reveal_step, steps=steps)


def _simulate_grid(p, plan: Grid, planner, n: int, seed: int) -> Simulation:
    """:func:`simulate` of a Grid (see :func:`_grid_setup`); initialization tokens have
    reveal step 0, the exact completion step N + 1; ``steps`` counts the grid's steps taken."""
    oracle, betas, t0, complete = _grid_setup(p, plan, planner)
    rng = np.random.default_rng(seed)
    d = oracle.d
    if t0 > 0:
        revealed = rng.random((n, d)) < t0
        run = _Batch(oracle, n, np.where(revealed, oracle.sample(n, rng), 0), revealed)
    else:
        run = _Batch(oracle, n)
    for t, beta in enumerate(betas):
        live = run.live()
        if live is None:
            break
        rows, xs, rv = live
        if rows.size == 0:
            continue
        chosen = _bernoulli_chosen(~rv, beta, rng)
        draw = xs
        if chosen.any():
            draw = inverse_cdf(oracle.conditionals(xs, rv), rng.random(xs.shape))
        run.commit(t, rows, xs, rv, chosen, draw)
    if run.unfinished().size:
        if not complete:  # t_N = 1 reveals every position with probability 1
            raise ValueError("plan: some samples still have masked positions after the last step")
        rows, xs, rv = run.live()
        run.x[rows] = _exact_draw(oracle, xs, rv, ~rv, rng)
        run.reveal_step[rows] = np.where(rv, run.reveal_step[rows], len(betas) + 1)
        run.revealed[rows] = True
    return run.result()


def _path_terms(oracle, planner, is_random, sizes, blocks, grid, n: int, rng):
    """x ~ p and the per-step terms of L(x) along the planner's path for x: returns (terms
    (steps, n), reveal_step, steps). ``grid`` = (t0, complete) for a Grid (``sizes`` its
    betas), else None."""
    d = oracle.d
    x = oracle.sample(n, rng)
    t0 = grid[0] if grid else 0.0
    # a grid's initialization (U_i <= t_0) and completion are exact: they add nothing to L
    revealed = (rng.random((n, d)) < t0) if t0 > 0 else np.zeros((n, d), dtype=bool)
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
            free = ~rv if blocks is None else ~rv & blocks[t]
            chosen = choose_positions(planner, is_random, t, size, probs, free, rng)
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
    if not revealed.all() and not (grid and grid[1]):
        raise ValueError("plan: some paths still have masked positions after the last step")
    return terms, reveal_step, steps


@renamed_keywords(law="p", level="confidence")
def estimate_kl(p, plan=None, planner="random", *, n: int, seed: int, confidence: float = 0.95,
                ties=None) -> KLEstimate:
    r"""Monte Carlo estimate of KL(p‖q) (deterministic planner) or of the path KL (random).

    See the module docstring: x ~ p exactly, then the pointwise per-step TC summed along the
    planner's path for x. Returns a :class:`KLEstimate` with a normal confidence interval.
    The arguments are those of :func:`simulate` (``law=``: the old name of ``p``; ``level=``: of
    ``confidence``). A
    RandomSchedule draws one composition per sample (the path KL of the mixture,
    :math:`\sum_c \pi(c)\,\mathrm{KL}_{\text{path}}(c)`); a BlockPlan restricts each step to
    its block. Sample-then-select and the revising samplers have no pointwise log-ratio along
    the data's path (they commit values they drew, or revise them): refused; their exact KL
    is ``mt.kl(p, mt.sampler_law(p, plan, planner))``.
    """
    n, seed = _check_n_seed(n, seed)
    if not (isinstance(confidence, numbers.Real) and 0 < confidence < 1):
        raise ValueError(f"confidence: expected a confidence level in (0, 1), got {confidence!r}")
    planner = as_sampler(planner, ties=ties)
    if not (planner.capabilities.positions or planner.capabilities.commits_values):
        raise ValueError(f"planner: {type(planner).__name__} revises what it revealed: the pointwise log-ratio "
                         "along x's own path is not its KL; for a small law use "
                         "mt.kl(p, mt.sampler_law(p, None, planner)) (exact), for samples simulate")
    kind = "kl"
    if isinstance(plan, RandomSchedule):
        oracle = _oracle(p)
        parts = []
        for sched, rows, sub in _by_composition(plan, oracle.d, n, seed):
            pl, is_random, sizes = planner_setup(sched, planner, oracle.d)
            parts.append((rows, _path_terms(oracle, pl, is_random, sizes, None, None, rows.size,
                                            np.random.default_rng(sub))))
        T = max(t.shape[0] for _, (t, _r, _s) in parts)
        terms = np.zeros((T, n))
        reveal_step = np.zeros((n, oracle.d), dtype=np.int64)
        steps = np.zeros(n, dtype=np.int64)
        for rows, (t, r, s) in parts:
            terms[: t.shape[0], rows], reveal_step[rows], steps[rows] = t, r, s
        kind = "path_kl"  # the composition is drawn: part of the trajectory
    else:
        grid = blocks = None
        if isinstance(plan, Grid):
            oracle, betas, t0, complete = _grid_setup(p, plan, planner)
            planner, is_random, sizes, grid = None, True, list(betas), (t0, complete)
        elif isinstance(plan, BlockPlan):
            oracle = _oracle(p)
            planner, is_random, sizes, blocks = _blocks_setup(oracle, plan, planner)
        else:
            oracle, planner, is_random, sizes = _setup(p, plan, planner)
        terms, reveal_step, steps = _path_terms(oracle, planner, is_random, sizes, blocks, grid, n,
                                                np.random.default_rng(seed))
        if is_random or not getattr(planner, "deterministic", False):
            kind = "path_kl"
    L = terms.sum(axis=0)
    if not np.all(np.isfinite(L)):  # x ~ p exactly: every factor along its own path is positive
        raise ValueError("p: a sample x ~ p has a zero conditional along its path (inconsistent oracle)")
    value = float(L.mean())
    stderr = float(L.std(ddof=1) / np.sqrt(n))
    z = float(norm.ppf(0.5 + confidence / 2))
    return KLEstimate(
        value=value,
        stderr=stderr,
        ci=(value - z * stderr, value + z * stderr),
        level=float(confidence),
        n=n,
        kind=kind,
        log_ratios=L,
        step_means=terms.mean(axis=1),
        reveal_step=reveal_step,
        steps=steps,
    )
