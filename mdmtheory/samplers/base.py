r"""The sampler protocol: what every sampler the package runs is, and what the hubs ask it.

A **sampler** is a decoding rule — which positions a step reveals (and, for some rules,
which values it commits, remasks or edits) — that produces an output law q from a data law
p. Every family implements one protocol:

.. code-block:: python

    class Sampler(Protocol):
        name: str                                   # how tables and reports label it
        capabilities: Capabilities                  # what it can do (one frozen record)
        def exact_run(self, p, plan=None, *, trajectory=False) -> Run: ...
        def simulate(self, p, plan=None, *, n, seed) -> Simulation: ...

:func:`as_sampler` turns what a user passes as ``planner=`` (a registered name, an
instance, or any object with ``moves(ctx)``) into a sampler **once**, with its tie rule
replaced (``ties=``) and its plan checked against its capabilities (``plan=``). The hubs —
``mt.sampler_law``, ``mt.simulate``, ``estimate_kl``, ``sampler_kl``, ``compare``,
``tie_spread``, the report and the bridge — call :func:`as_sampler` and then read
:class:`Capabilities`; none of them tests a sampler's class or name
(``tests/contract/test_sampler_protocol.py``).

Families (docs/design.md, "How to add a sampler"):

* position planners (:class:`PositionSampler`: :mod:`.planners`, :mod:`.adaptive`,
  :mod:`.demask`, the SGLang planners of :mod:`.serving`): the exact engine
  (:func:`mdmtheory.samplers.engine.exact_run`) and the shared Monte Carlo step of
  :mod:`.simulate`;
* sample-then-select (:mod:`.select`): the same Monte Carlo loop, values first;
* samplers that run their own chain (:mod:`.revise`, :mod:`.speculative`,
  :mod:`.infogain`, SGLang's JointThreshold): their own exact run and loop.

Every exact run is a :class:`Run`: the output law, the expected model calls as the
pipeline counts them (``forwards``), the tie rule and the mass on which it decided.

The engine and the simulator register themselves here (:func:`bind`) so that this module,
imported by every family, imports neither (no import circle; docs/design.md, "Layout").
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass, field
from itertools import combinations
from math import comb
from typing import Callable, Protocol, runtime_checkable

import numpy as np

from .._estimate import Record
from .._moved import renamed_keywords
from ..laws.joint import Joint, joint_arg
from ..schedules.plans import BlockPlan, Grid, RandomSchedule, Schedule
from .ties import check_ties

__all__ = [
    "Capabilities",
    "Sampler",
    "PositionSampler",
    "OwnChainSampler",
    "Run",
    "Simulation",
    "as_sampler",
    "planner_arg",
    "NEEDS",
    "check_plan",
    "plan_kind",
    "mixture_run",
    "PLAN_KINDS",
]

#: The plan kinds a sampler can run, by the name :func:`plan_kind` gives them.
PLAN_KINDS = ("Schedule", "Grid", "BlockPlan", "RandomSchedule", "none")
_PLAN_TYPES = {"Schedule": Schedule, "Grid": Grid, "BlockPlan": BlockPlan, "RandomSchedule": RandomSchedule}


def plan_kind(plan) -> str:
    """The kind of a plan (:data:`PLAN_KINDS`): ``"none"`` for None, else its class's name;
    a ValueError naming ``plan`` for anything else."""
    if plan is None:
        return "none"
    for name, cls in _PLAN_TYPES.items():
        if isinstance(plan, cls):
            return name
    raise ValueError(f"plan: expected a mdmtheory.Schedule, Grid, BlockPlan, RandomSchedule or None, "
                     f"got {type(plan).__name__}")


@dataclass(frozen=True)
class Capabilities(Record):
    """What a sampler can do: the one record the hubs read instead of its class or name.

    Attributes
    ----------
    plans : the plan kinds it runs (:data:`PLAN_KINDS`; ``"none"``: it chooses its own sizes
        or carries its plan).
    carried_plan : the plan it carries (the revising samplers: ReMDM's Grid of alphas, the
        corrector's Schedule), which ``plan=`` may repeat; None otherwise.
    reads_law : its choices read the conditionals (False: an order that does not depend on
        the law, which the JAX kernel can differentiate through).
    scored : it ranks by scores and so has a tie rule (``ties=`` applies).
    deterministic : the reveal set is a function of the revealed values (a fixed tie rule):
        its KL equals the pointwise path sum (DUEL's likelihood, :mod:`.likelihood`).
    random_order : the theory's uniformly random order (the bounds about q_k apply).
    order : a fixed reveal order (left to right: ``(0, 1, ..., d-1)``) when the rule has one
        that does not depend on the law or d (``"prefix"`` for left to right), else None.
    positions : it is a planner of positions on the exact engine (reveal steps, the
        trajectory KL, the kernel's sparse chain).
    commits_values : it commits values it drew before choosing positions (sample-then-select).
    revises : it may remask or edit what it revealed, or draft and verify (no pointwise
        log-ratio along the data's path: :func:`~mdmtheory.samplers.simulate.estimate_kl`
        refuses it).
    path_kl : ``exact_run(p, plan, trajectory=True)`` gives the trajectory KL.
    ranked : it reveals the top free positions of a rank computed from x_A (the ranked rules
        of :mod:`.adaptive`), so under a fixed tie rule DUEL's product of conditionals along
        its path is its likelihood (:func:`~mdmtheory.samplers.likelihood.duel_nll`).
    jax : :func:`~mdmtheory.samplers.engine.sampler_kl` runs it (JAX, differentiable).
    """

    plans: tuple[str, ...]
    carried_plan: object = None
    reads_law: bool = True
    scored: bool = False
    deterministic: bool = False
    random_order: bool = False
    order: str | None = None
    positions: bool = False
    commits_values: bool = False
    revises: bool = False
    path_kl: bool = False
    jax: bool = False
    ranked: bool = False

    def __post_init__(self):
        plans = self.plans
        if isinstance(plans, str) or not isinstance(plans, (tuple, list)) or \
                not all(isinstance(k, str) and k in PLAN_KINDS for k in plans):
            raise ValueError(f"plans: expected a tuple of plan kinds among {list(PLAN_KINDS)}, got {plans!r:.80}")
        object.__setattr__(self, "plans", tuple(plans))
        for f in dataclasses.fields(self):
            if f.type == "bool" and not isinstance(getattr(self, f.name), (bool, np.bool_)):
                raise ValueError(f"{f.name}: expected True or False, got {getattr(self, f.name)!r:.40}")
        if self.order is not None and not isinstance(self.order, str):
            raise ValueError(f"order: expected None or the name of a fixed order (e.g. 'prefix'), got {self.order!r:.40}")

    @property
    def own_sizes(self) -> bool:
        """It runs with ``plan=None`` (it chooses its own sizes, or carries its plan)."""
        return "none" in self.plans

    @property
    def needs_plan(self) -> bool:
        """It needs a plan's sizes (``plan=None`` is refused)."""
        return "none" not in self.plans


@dataclass(frozen=True, kw_only=True)
class Run(Record):
    r"""What every exact run shares; each family's record extends it.

    Attributes
    ----------
    law : the output law q (a :class:`~mdmtheory.Joint`; its ``lost`` is the mass stuck at
        zero-probability prefixes).
    forwards : the expected number of model calls (forwards) as the sampler's pipeline
        counts them: one per step for the position planners, the steps + 1 of SGLang's
        loops, ASSD's ``nfe_count``, ... (each family's docstring says how).
    ties : the tie rule used (``"random"``, ``"lowest"``, ``"topk"``), None when the rule
        ranks nothing.
    tie_mass : the probability that the tie rule decided a set on the run (0: the law does
        not depend on the rule).
    path_kl : the trajectory KL when asked for and defined, else None.
    pipeline : the loop whose model calls ``forwards`` counts (None: one forward per step of
        the sampler's own loop).
    """

    law: Joint
    forwards: float = math.nan
    ties: str | None = None
    tie_mass: float = 0.0
    path_kl: float | None = None
    pipeline: str | None = None

    @property
    def lost(self) -> float:
        """Mass stuck at zero-probability prefixes (the law's ``lost``)."""
        return self.law.lost

    @property
    def depends_on_ties(self) -> bool:
        """Whether the tie rule decided a reveal set on some path of positive mass."""
        return self.tie_mass > 0.0

    @property
    def expected_forwards(self) -> float:
        """Old name of :attr:`forwards` (works for one release, with a DeprecationWarning)."""
        warnings.warn(f"{type(self).__name__}.expected_forwards: the old attribute works for one release; "
                      "use .forwards (expected model calls as the pipeline counts them)",
                      DeprecationWarning, stacklevel=2)
        return self.forwards


@dataclass(frozen=True)
class Simulation(Record):
    """Samples of a sampler (what every sampler's ``simulate`` returns) and where each
    position was revealed.

    Attributes
    ----------
    samples : (n, d) int64 tokens; rows of lost samples hold -1 at positions never drawn.
    lost : (n,) bool, the sample hit a prefix with p(x_A) = 0 (its remaining steps undefined).
    reveal_step : (n, d) int64, the step (1-based) at which each position was revealed, 0 if
        never (lost samples); None for the samplers that run their own chain (a position may
        be revealed, masked and revealed again).
    steps : (n,) int64, number of steps each sample took; None for those samplers.
    forwards : (n,) int64, the model calls of each sample where the sampler counts them per
        sample (the samplers that run their own chain), else None.
    calls : (n,) int64, the oracle's invocations that included each sample where they differ
        from the forwards (speculative sampling), else None.
    """

    samples: np.ndarray
    lost: np.ndarray
    reveal_step: np.ndarray | None
    steps: np.ndarray | None
    forwards: np.ndarray | None = None
    calls: np.ndarray | None = None


def mixture_run(p: Joint, rs: RandomSchedule, run_of: Callable[[Schedule], Run]) -> Run:
    r"""The run of a :class:`~mdmtheory.RandomSchedule`: :math:`\sum_c \pi(c)\, q_c` over its
    compositions c (``run_of(Schedule(c))`` is the run of one), lost mass, forwards, tie mass and
    trajectory KL averaged with the same weights (the composition is drawn first: part of the
    trajectory)."""
    p = joint_arg(p)
    if not isinstance(rs, RandomSchedule):
        raise ValueError(f"rs: expected a mdmtheory.RandomSchedule, got {type(rs).__name__}")
    if not callable(run_of):
        raise ValueError(f"run_of: expected a function Schedule -> Run, got {type(run_of).__name__}")
    if rs.d != p.d:
        raise ValueError(f"plan: compositions of {rs.d}, but the law has d = {p.d}")
    table = np.zeros(p.table.shape)
    lost = forwards = tie_mass = 0.0
    path: float | None = 0.0
    ties = None
    for c, w in rs.law.items():
        r = run_of(Schedule(c))
        if r.law.table.shape != table.shape:  # issue 38: a run of another law is refused by name
            raise ValueError(f"run_of: its runs have laws of shape {r.law.table.shape}, p has {table.shape}; "
                             f"give run_of the runs of p")
        table += w * r.law.table
        lost += w * r.law.lost
        forwards += w * r.forwards
        tie_mass += w * r.tie_mass
        path = None if path is None or r.path_kl is None else path + w * r.path_kl
        ties = r.ties
    return Run(law=Joint(table, lost=lost), forwards=forwards, ties=ties, tie_mass=tie_mass, path_kl=path)


# ---- the step context a planner of positions sees ----------------------------------------
@dataclass(frozen=True)
class StepContext(Record):
    """What a planner sees at one state of one step.

    Attributes
    ----------
    step : 0-based step index.
    revealed : bitmask of the revealed set A.
    size : tokens to reveal at this step (a schedule's k_t), or None.
    d, K : shape of the law.
    free : positions not yet revealed, increasing.
    reachable : bool array (keepdims shape), False where p(x_A) = 0.
    conditional : j -> p(x_j | x_A) as an array with length K on the axes of A and of j and
        1 elsewhere (0 where x_A is unreachable).
    """

    step: int
    revealed: int
    size: int | None
    d: int
    K: int
    free: tuple[int, ...]
    reachable: np.ndarray
    conditional: Callable[[int], np.ndarray]

    @property
    def shape(self) -> tuple[int, ...]:
        """Keepdims shape of arrays over x_A."""
        return tuple(self.K if self.revealed >> j & 1 else 1 for j in range(self.d))


@runtime_checkable
class Sampler(Protocol):
    """The protocol (module docstring): a name, its capabilities, an exact run, a Monte Carlo."""

    name: str

    @property
    def capabilities(self) -> Capabilities: ...

    def exact_run(self, p, plan=None, *, trajectory: bool = False) -> Run: ...

    def simulate(self, p, plan=None, *, n: int, seed: int): ...


# ---- where the engine and the simulator plug in ------------------------------------------
_BOUND: dict[str, Callable] = {}


def bind(name: str, fn: Callable | None = None) -> Callable:
    """Register the engine's or the simulator's entry for :class:`PositionSampler` (``name``
    ``"exact_run"`` or ``"simulate"``); called when those modules are imported. Without
    ``fn``, a decorator."""
    if fn is None:
        return lambda f: bind(name, f)
    _BOUND[name] = fn
    return fn


def bound(name: str) -> Callable:
    try:
        return _BOUND[name]
    except KeyError:  # pragma: no cover - mdmtheory.samplers imports both
        raise RuntimeError(f"mdmtheory.samplers was not imported ({name} unbound); import mdmtheory") from None


class PositionSampler:
    """The protocol for planners of positions (which positions a step reveals; each revealed
    value drawn from its one-token conditional): the exact engine and the shared Monte Carlo
    step. A subclass sets ``name`` and ``needs_schedule`` and defines ``moves(ctx)`` (any
    planner) or the ranked choice of :mod:`.adaptive`; it may refine :attr:`capabilities`."""

    __slots__ = ()
    allows_empty = False
    #: whether the rule reads the conditionals
    uses_probs = True
    #: whether it runs a plan's sizes (False: it chooses its own sizes only)
    takes_plan = True
    #: whether it reveals the top positions of a rank (:attr:`Capabilities.ranked`)
    ranked_rule = False

    @property
    def capabilities(self) -> Capabilities:
        own = not getattr(self, "needs_schedule", True)
        ties = getattr(self, "ties", None)
        plans = ("Schedule", "BlockPlan", "RandomSchedule") if self.takes_plan else ()
        return Capabilities(
            plans=("none",) + plans if own else plans,
            reads_law=bool(getattr(self, "uses_probs", True)),
            scored=ties is not None,
            deterministic=bool(getattr(self, "deterministic", False)),
            positions=True,
            path_kl=True,
            jax=True,
            ranked=bool(self.ranked_rule),
        )

    def exact_run(self, p, plan=None, *, trajectory: bool = False, backend: str = "auto") -> Run:
        """The exact run (:func:`mdmtheory.samplers.engine.exact_run`; a RandomSchedule: the
        mixture over its compositions, :func:`mixture_run`)."""
        if isinstance(plan, RandomSchedule):
            return mixture_run(p, plan, lambda c: self.exact_run(p, c, trajectory=trajectory, backend=backend))
        return bound("exact_run")(p, plan, self, trajectory=trajectory, backend=backend)

    def simulate(self, p, plan=None, *, n: int, seed: int):
        """n samples (a :class:`~mdmtheory.samplers.Simulation`): the shared Monte Carlo step."""
        return bound("simulate")(p, plan, self, n=n, seed=seed)


class _MovesSampler(PositionSampler):
    """A user's planner that has ``moves(ctx)`` but not the protocol: the engine and the
    simulator run it as a planner of positions (its ``needs_schedule``, ``allows_empty``)."""

    def __init__(self, planner):
        self.planner = planner
        self.name = str(getattr(planner, "name", type(planner).__name__))
        self.needs_schedule = bool(getattr(planner, "needs_schedule", True))
        self.allows_empty = bool(getattr(planner, "allows_empty", False))
        self.ties = getattr(planner, "ties", None)
        self.deterministic = bool(getattr(planner, "deterministic", False))

    def moves(self, ctx):
        return self.planner.moves(ctx)

    def select(self, *args, **kwargs):
        if not hasattr(self.planner, "select"):
            raise ValueError(f"planner: {self.name!r} has no Monte Carlo select(); give it one, or use 'random' or "
                             "a planner from mdmtheory.samplers.adaptive")
        return self.planner.select(*args, **kwargs)

    def __repr__(self):
        return repr(self.planner)


@dataclass(frozen=True)
class RandomPlanner(PositionSampler, Record):
    """Uniformly random ``size``-subset of the masked positions (the main sampler); with a
    :class:`~mdmtheory.Grid` (or under the name ``"bernoulli"``), the Bernoulli-subset sampler
    of that grid."""

    name: str = "random"
    needs_schedule: bool = True
    allows_empty: bool = False
    uses_probs = False

    @property
    def capabilities(self) -> Capabilities:
        plans = ("Grid",) if self.name == "bernoulli" else ("Schedule", "Grid", "BlockPlan", "RandomSchedule")
        return Capabilities(plans=plans, reads_law=False, random_order=True, positions=True, path_kl=True, jax=True)

    def moves(self, ctx: StepContext):
        w = 1.0 / comb(len(ctx.free), ctx.size)
        for B in combinations(ctx.free, ctx.size):
            yield sum(1 << j for j in B), w


#: Planner factories by name, taking no argument (``sampler_law(..., planner=name)``).
PLANNERS: dict[str, Callable[[], object]] = {"random": RandomPlanner,
                                             "bernoulli": lambda: RandomPlanner(name="bernoulli")}


def register_planner(name: str, factory: Callable[[], object]) -> None:
    """Make ``planner=name`` available to every hub (the factory takes no argument)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"name: expected a non-empty string, got {name!r}")
    if not callable(factory):
        raise ValueError(f"factory: expected a callable taking no argument, got {type(factory).__name__}")
    PLANNERS[name] = factory


class OwnChainSampler:
    """The protocol for samplers that run their own chain (they revise what they revealed,
    draft and verify, or look ahead): a subclass defines ``_run(p) -> Run`` (its exact run),
    ``_simulate(p, *, n, seed) -> (samples, lost[, forwards[, calls]])`` (its Monte Carlo on
    any conditional oracle) and ``_own_plan`` (the plan it carries, or None)."""

    __slots__ = ()
    #: may remask, edit or verify: no pointwise log-ratio along the data's path
    revises = True

    @property
    def name(self) -> str:
        """How tables label it: its class name (a subclass may set its own)."""
        return type(self).__name__

    @property
    def _own_plan(self):
        return None

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(plans=("none",), carried_plan=self._own_plan,
                            scored=getattr(self, "ties", None) is not None, revises=bool(self.revises))

    def exact_run(self, p, plan=None, *, trajectory: bool = False) -> Run:
        """Its exact run (``trajectory`` is accepted for the protocol: these runs have no
        trajectory KL, ``path_kl`` None)."""
        check_plan(self, plan)
        return self._run(p)

    @renamed_keywords(law="p")
    def simulate(self, p, plan=None, *, n: int, seed: int) -> Simulation:
        """n samples from any conditional oracle (a :class:`~mdmtheory.Joint`, a structured law,
        a model through :func:`mdmtheory.bridge.model_law`)."""
        check_plan(self, plan)
        out = self._simulate(p, n=n, seed=seed)
        return Simulation(samples=out[0], lost=out[1], reveal_step=None, steps=None,
                          forwards=out[2] if len(out) > 2 else None, calls=out[3] if len(out) > 3 else None)


def _resolve(planner):
    """The object behind ``planner`` (a registered name, an instance with the protocol, or an
    object with ``moves(ctx)``), before ties and plan."""
    if isinstance(planner, str):
        try:
            obj = PLANNERS[planner]()
        except KeyError:
            raise ValueError(
                f"planner: unknown name {planner!r}; known: {sorted(PLANNERS)} "
                "(or pass a sampler object, or an object with a moves(ctx) method)"
            ) from None
    else:
        obj = planner
    if isinstance(obj, type):
        raise ValueError(f"planner: pass an instance, e.g. {obj.__name__}(...), not the class")
    if hasattr(obj, "capabilities") and hasattr(obj, "exact_run") and hasattr(obj, "simulate"):
        return obj
    if hasattr(obj, "moves"):
        return _MovesSampler(obj)
    raise ValueError(f"planner: expected a planner name, a sampler of mdmtheory.samplers or an object with "
                     f"moves(ctx), got {type(obj).__name__}")


#: capabilities a function may need of its planner (:func:`planner_arg`): name -> (test on
#: :class:`Capabilities`, what it means in words, for the error)
NEEDS = {
    "schedule": (lambda c: "Schedule" in c.plans, "runs a Schedule of step sizes, e.g. 'random', 'confidence'"),
    "own_sizes": (lambda c: "none" in c.plans,
                  "chooses its own step sizes (plan=None), e.g. EntropyThresholdPlanner() or FrechetPlanner()"),
    "positions": (lambda c: c.positions, "is a planner of positions on the exact engine, e.g. 'random', 'confidence'"),
    "scored": (lambda c: c.scored, "ranks by scores, e.g. 'confidence', 'margin', 'entropy'"),
    "deterministic": (lambda c: c.deterministic, "reveals a function of the revealed values (a fixed tie rule)"),
    "path_kl": (lambda c: c.path_kl, "gives the trajectory KL (exact_run(p, plan, trajectory=True))"),
    "no_revision": (lambda c: not c.revises, "never remasks, edits or drafts what it revealed"),
}


def planner_arg(planner, name: str = "planner", *, needs=(), kind=None, example: str = ""):
    """The planner argument of a function, checked once: resolved as :func:`as_sampler` does (a
    registered name, a sampler instance, an object with ``moves(ctx)``; the class itself is
    refused: "pass an instance"), an instance of ``kind`` when given, and with every capability
    in ``needs`` (keys of :data:`NEEDS`, read from :class:`Capabilities`, never from a class
    name). Returns the resolved sampler. Each refusal is one ValueError naming ``name``."""
    if isinstance(planner, type):
        raise ValueError(f"{name}: pass an instance, e.g. {planner.__name__}({example}), not the class")
    if kind is not None and not isinstance(planner, kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        raise ValueError(f"{name}: expected a {' or '.join(k.__name__ for k in kinds)}, got {type(planner).__name__}")
    try:
        s = _resolve(planner)
    except ValueError as exc:
        raise ValueError(f"{name}: {str(exc).split(': ', 1)[-1]}") from None
    cap = s.capabilities
    for need in needs:
        test, words = NEEDS[need]
        if not test(cap):
            raise ValueError(f"{name}: {getattr(s, 'name', type(s).__name__)!r} lacks what this function needs: "
                             f"a planner that {words}")
    return s


def as_sampler(planner="random", *, ties=None, plan=...):
    """The sampler behind ``planner``, resolved once: a registered name, a sampler instance,
    or any object with ``moves(ctx)`` (run as a planner of positions).

    Parameters
    ----------
    planner : a name (``"random"``, ``"confidence"``, ...), a sampler, or a ``moves`` object.
    ties : None (the sampler's own rule) or a tie rule (:data:`~mdmtheory.samplers.ties.TIE_RULES`)
        that replaces it; refused for a sampler that ranks nothing.
    plan : when given (None included), checked against the sampler's capabilities: its kind
        among ``capabilities.plans``, and a carried plan repeated exactly; a ValueError names
        ``plan`` and what the sampler runs otherwise.
    """
    s = _resolve(planner)
    if ties is not None:
        check_ties(ties)
        if not s.capabilities.scored or not dataclasses.is_dataclass(s) or \
                "ties" not in {f.name for f in dataclasses.fields(s)}:
            raise ValueError(f"ties: {s.name!r} ranks nothing, so it has no tie rule; ties= applies to the scored "
                             "samplers (confidence, margin, entropy, semi-AR, threshold, entropy budget, PC-Sampler, "
                             "sample-then-select, the corrector, editing)")
        s = dataclasses.replace(s, ties=ties)
    if plan is not ...:
        check_plan(s, plan)
    return s


def check_plan(sampler, plan) -> None:
    """``plan`` against ``sampler.capabilities`` (see :func:`as_sampler`)."""
    if not isinstance(getattr(sampler, "capabilities", None), Capabilities):
        raise ValueError(f"sampler: expected a sampler (mt.samplers.as_sampler(planner)), got {type(sampler).__name__}")
    cap = sampler.capabilities
    kind = plan_kind(plan)
    carried = cap.carried_plan
    if carried is not None:
        if plan is not None and not (type(plan) is type(carried) and plan == carried):
            raise ValueError(f"plan: {type(sampler).__name__} carries its own plan ({carried!r}); pass plan=None "
                             f"(or that plan), got {plan!r}")
        return
    if kind in cap.plans:
        return
    if kind == "none":
        raise ValueError(f"plan: planner {sampler.name!r} needs a plan ({', '.join(cap.plans)}), e.g. "
                         "mt.Schedule(sizes); plan=None runs the planners that choose their own sizes")
    if cap.plans == ("none",):
        raise ValueError(f"plan: {sampler.name!r} chooses its own step sizes (or carries its plan); pass plan=None, "
                         f"got a {kind}")
    if kind == "Grid" and cap.positions:
        raise ValueError(f"planner: a Grid drives the Bernoulli-subset sampler; use planner='random' "
                         f"(or 'bernoulli'), got {sampler.name!r}")
    raise ValueError(f"plan: {sampler.name!r} runs a {' or a '.join(k for k in cap.plans if k != 'none')}, "
                     f"got a {kind}")
