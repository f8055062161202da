r"""Tuning an adaptive rule's parameter to a forward budget, exactly (issue 37 §3).

The adaptive rules that serving pipelines run have one knob each: the confidence threshold
τ of Fast-dLLM / diffusers' ``LLaDA2Pipeline`` (:class:`~mdmtheory.samplers.ThresholdPlanner`),
Fast-dLLM's factor f (:class:`~mdmtheory.samplers.FactorPlanner`), Fast-dLLM++'s Fréchet
margin δ (:class:`~mdmtheory.samplers.FrechetPlanner`), the entropy budget γ of EB-Sampler /
Cai & Li / SGLang ``EBSampling`` (:class:`~mdmtheory.samplers.EntropyBudgetPlanner`), SGLang's
``EntropyThreshold`` θ (:class:`~mdmtheory.samplers.serving.EntropyThresholdPlanner`) and
SGLang's ``JointThreshold`` θ (:class:`~mdmtheory.samplers.serving.JointThresholdSampler`).
Users tune the knob by trial on benchmarks. On a law held exactly the trial is exact: for
each value v on a grid the sampler's exact run
``as_sampler(rule(v)).exact_run(p, None, trajectory=True)`` gives

* ``forwards[v]`` — the expected model calls as the rule's pipeline counts them
  (:attr:`~mdmtheory.samplers.Run.forwards`: steps for the Fast-dLLM / diffusers rules,
  steps + 1 for SGLang's files, :mod:`mdmtheory.samplers.serving`);
* ``kl[v]`` = KL(p‖q_v), q_v the rule's exact output law (:func:`mdmtheory.kl`);
* ``path_kl[v]`` — the trajectory KL (an upper bound on ``kl[v]``; None for a revising rule
  such as JointThreshold, which has no path of reveals);
* ``lost[v]`` — the rule's mass stuck at zero-probability prefixes.

The pick. With ``forwards=F``: among the values with ``forwards[v] <= F`` (+1e-9), the
smallest ``kl[v]`` (ties: fewer forwards, then the earlier grid value). With
``target_kl=ε``: among the values with ``kl[v] <= ε`` (+1e-12), the fewest forwards (ties:
smaller KL, then the earlier grid value). The pick is the best *on the grid*: the maps
v ↦ forwards, v ↦ KL are step functions of v (the rule changes only where v crosses a
confidence or entropy the law produces), so a finer grid can only help; ``values=`` sets it.

Default grids (:data:`DEFAULT_GRIDS`; chosen to span each rule from one token per step to
all at once on small laws, K ≤ 4):

* ``threshold`` τ: 0.1, 0.2, …, 0.9, 0.95, 0.99, 1.0 (τ ≤ 1/K commits every masked position;
  τ = 1 only the certain ones, at least one);
* ``factor`` f: 0, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5 (f = 0: one per step, up to the
  reference code's m = 2 quirk; large f: all);
* ``frechet`` δ: −1, −0.5, −0.25, 0, 0.1, 0.25, 0.5, 0.75, 0.9, 1 (δ ≥ 1: one per step,
  since the score :math:`G_n \le c_{(n)} \le 1`);
* ``entropy_budget`` γ (nats): 0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3;
* ``entropy_threshold`` θ (nats): 0, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.65, 0.7, 0.75, 0.95, 1.25, 2
  (finer near log 2, the largest entropy of a binary position);
* ``joint_threshold`` θ: 0.1, 0.2, …, 0.9, 0.95, 0.99;
* ``diffusers_threshold`` τ: 0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99 (diffusers takes
  τ in [0, 1)).

``"diffusers_threshold"`` is the rule diffusers' ``LLaDA2Pipeline`` runs with its ``threshold``
(0.42.1, :mod:`mdmtheory.samplers.select`): one block of d positions, ``num_inference_steps =
d`` (the scheduler's even split: one mask per step as the floor), temperature 1, and each step
commits every masked position whose *sampled* token's tempered probability exceeds τ, else the
most confident one — sample-then-select
(:class:`~mdmtheory.samplers.SampleThenSelectPlanner`, ``confidence="tempered"``) on the
Schedule (1, …, 1), forwards as the pipeline counts them (a block that runs out of masks at step
F < d costs F + 1). It is not ``"threshold"`` (Fast-dLLM's rule: positions by the arg max's
probability, values drawn after): the two differ in what they commit and in forwards; only
``"diffusers_threshold"`` exports to the pipeline (:func:`mdmtheory.exports.diffusers.tuned_threshold_call`).

A *family* is any callable ``v -> sampler`` (a planner instance or anything
:func:`~mdmtheory.samplers.as_sampler` takes); its grid is ``values=`` or, when absent, the
callable's own ``values`` attribute.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .._estimate import Record
from ..information.divergence import kl as _kl
from ..laws.joint import Joint
from ..samplers.adaptive import EntropyBudgetPlanner, FactorPlanner, FrechetPlanner, ThresholdPlanner
from ..samplers.base import as_sampler
from ..samplers.select import SampleThenSelectPlanner
from ..schedules.plans import Schedule
from ..samplers.serving import EntropyThresholdPlanner, JointThresholdSampler
from ..samplers.ties import check_ties
from .._validate import real_arg

__all__ = ["Tuning", "tune", "DEFAULT_GRIDS", "TUNABLE"]

#: rule name -> (the planner class, its parameter's name, what the parameter is)
TUNABLE = {
    "threshold": (ThresholdPlanner, "tau", "confidence threshold τ (Fast-dLLM / diffusers LLaDA2Pipeline threshold)"),
    "factor": (FactorPlanner, "f", "Fast-dLLM factor f"),
    "frechet": (FrechetPlanner, "delta", "Fast-dLLM++ Fréchet margin δ"),
    "entropy_budget": (EntropyBudgetPlanner, "gamma", "entropy budget γ in nats (EB-Sampler, Cai & Li, SGLang EBSampling)"),
    "entropy_threshold": (EntropyThresholdPlanner, "threshold", "SGLang EntropyThreshold θ in nats"),
    "joint_threshold": (JointThresholdSampler, "threshold", "SGLang JointThreshold θ (a probability)"),
    "diffusers_threshold": (SampleThenSelectPlanner, "threshold",
                            "diffusers LLaDA2Pipeline threshold (sample-then-select, one block, one mask per step floor)"),
}

#: fixed arguments of a rule's class besides its parameter
_FIXED = {"diffusers_threshold": {"confidence": "tempered", "temperature": 1.0}}
#: the plan a rule runs on a law of d positions (None: the rule chooses its own sizes)
_PLANS = {"diffusers_threshold": lambda d: Schedule((1,) * d)}

#: The default grid of each rule (module docstring says why these).
DEFAULT_GRIDS = {
    "threshold": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0),
    "factor": (0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0),
    "frechet": (-1.0, -0.5, -0.25, 0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0),
    "entropy_budget": (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0),
    "entropy_threshold": (0.0, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.65, 0.7, 0.75, 0.95, 1.25, 2.0),
    "joint_threshold": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99),
    "diffusers_threshold": (0.0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99),
}

_F_TOL, _KL_TOL = 1e-9, 1e-12


@dataclass(frozen=True)
class Tuning(Record):
    r"""A rule's exact curve over its parameter and the value picked for a budget (:func:`tune`).

    ``planner`` the rule's name (``"family"`` for a callable), ``parameter`` its parameter's
    name (``"tau"``, ``"f"``, ...); ``values``, ``forwards``, ``kl``, ``path_kl`` (None entries
    for a rule with no path of reveals), ``lost``: the curve, one entry per grid value;
    ``ties`` the tie rule run; ``budget`` ``"forwards"``, ``"target_kl"`` or None (curve only),
    ``limit`` its value; ``best`` the index of the pick on the grid (None without a budget),
    ``value`` the picked parameter and ``expected_forwards``, ``best_kl``, ``best_path_kl`` its
    numbers; ``method`` ``"exact"`` or ``"estimated"`` (:func:`mdmtheory.design.estimate_tune`,
    which also fills the standard errors ``kl_stderr`` (of the path KL estimate) and
    ``forwards_stderr``, and ``n``); ``d`` the sequence length tuned for (the exports need it)."""

    planner: str
    parameter: str
    values: tuple
    forwards: tuple
    kl: tuple
    path_kl: tuple
    lost: tuple
    ties: str | None = None
    budget: str | None = None
    limit: float | None = None
    best: int | None = None
    method: str = "exact"
    kl_stderr: tuple | None = None
    forwards_stderr: tuple | None = None
    n: int | None = None
    d: int | None = None
    note: str = ""

    @property
    def value(self):
        """The picked parameter value (None without a budget)."""
        return None if self.best is None else self.values[self.best]

    @property
    def expected_forwards(self) -> float | None:
        return None if self.best is None else self.forwards[self.best]

    @property
    def best_kl(self) -> float | None:
        return None if self.best is None else self.kl[self.best]

    @property
    def best_path_kl(self) -> float | None:
        return None if self.best is None else self.path_kl[self.best]

    def to_dict(self) -> dict:
        out = super().to_dict()
        out.update(value=self.value, expected_forwards=self.expected_forwards, best_kl=self.best_kl,
                   best_path_kl=self.best_path_kl)
        return out


def _grid(values, default, what: str) -> tuple:
    if values is None:
        if default is None:
            raise ValueError(f"values: {what} has no default grid; pass values=[v1, v2, ...]")
        values = default
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise ValueError(f"values: expected a non-empty list of finite numbers (the parameter grid), got {values!r:.80}")
    out = []
    for v in values:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)):
            raise ValueError(f"values: expected finite numbers (the parameter grid), got {v!r:.80}")
        out.append(float(v))
    if not out:
        raise ValueError("values: expected a non-empty list of finite numbers (the parameter grid), got an empty one")
    if len(set(out)) != len(out):
        raise ValueError(f"values: expected distinct numbers, got {out}")
    if len(out) > 1000:
        raise ValueError(f"values: at most 1000 grid values (one exact run each), got {len(out)}")
    return tuple(out)


def check_budget(forwards, target_kl) -> tuple[str | None, float | None]:
    """``forwards`` / ``target_kl`` checked: at most one, a positive finite number."""
    if forwards is not None and target_kl is not None:
        raise ValueError("forwards: give forwards= or target_kl=, not both")
    if forwards is not None:
        f = real_arg(forwards, "forwards")
        if f <= 0:
            raise ValueError(f"forwards: expected a positive budget of expected model calls, got {f:g}")
        return "forwards", f
    if target_kl is not None:
        e = real_arg(target_kl, "target_kl")
        if e < 0:
            raise ValueError(f"target_kl: expected a KL target in nats (>= 0), got {e:g}")
        return "target_kl", e
    return None, None


def resolve_rule(planner, values, ties):
    """(name, parameter, grid, make) for a rule's name or a family (callable)."""
    if ties is not None:
        check_ties(ties)
    if isinstance(planner, str):
        if planner not in TUNABLE:
            raise ValueError(f"planner: expected one of {', '.join(TUNABLE)} or a callable value -> sampler, "
                             f"got {planner!r}")
        cls, param, _ = TUNABLE[planner]
        grid = _grid(values, DEFAULT_GRIDS[planner], planner)

        def make(v):
            kw = {param: v, **_FIXED.get(planner, {})}
            if ties is not None:
                kw["ties"] = ties
            return cls(**kw)
        return planner, param, grid, make, _PLANS.get(planner)
    if callable(planner) and not isinstance(planner, type):
        grid = _grid(values, getattr(planner, "values", None), "a family (callable)")

        def make(v):
            return as_sampler(planner(v), ties=ties)
        return "family", "value", grid, make, None
    raise ValueError(f"planner: expected one of {', '.join(TUNABLE)} or a callable value -> sampler, got {planner!r:.80}")


def pick(budget, limit, forwards, kl, values, *, what="KL", param="value") -> int | None:
    """Index of the pick (module docstring); a ValueError naming the budget's argument and the
    nearest feasible budget when no value meets it."""
    if budget is None:
        return None
    fw, kv = np.asarray(forwards, float), np.asarray(kl, float)
    idx = np.arange(fw.size)
    if budget == "forwards":
        ok = fw <= limit + _F_TOL
        if not ok.any():
            j = int(np.argmin(fw))
            raise ValueError(f"forwards: no value on the grid runs in <= {limit:g} expected forwards; the fewest "
                             f"is {fw[j]:.6g} (at {param}={values[j]:g}): raise forwards to >= {fw[j]:.6g} or widen values=")
        near = ok & (kv <= kv[ok].min() + _KL_TOL)  # equal KL up to rounding: the fewest forwards
        return int(np.lexsort((idx, kv, fw, ~near))[0])
    else:
        ok = kv <= limit + _KL_TOL
        if not ok.any():
            j = int(np.argmin(kv))
            raise ValueError(f"target_kl: no value on the grid has {what} <= {limit:g}; the smallest is "
                             f"{kv[j]:.6g} (at {param}={values[j]:g}): raise target_kl to >= {kv[j]:.6g} or widen values=")
        near = ok & (fw <= fw[ok].min() + _F_TOL)  # equal forwards up to rounding: the smallest KL
        return int(np.lexsort((idx, fw, kv, ~near))[0])


def tune(planner, p: Joint, *, forwards=None, target_kl=None, values=None, ties=None) -> Tuning:
    r"""The parameter of an adaptive rule meeting a forward budget with the smallest exact KL.

    Parameters
    ----------
    planner : a rule's name (:data:`TUNABLE`: ``"threshold"``, ``"factor"``, ``"frechet"``,
        ``"entropy_budget"``, ``"entropy_threshold"``, ``"joint_threshold"``) or a family, a
        callable ``v -> sampler`` (grid: ``values=`` or its ``values`` attribute).
    p : the law (:class:`~mdmtheory.Joint`).
    forwards : budget of expected forwards (as the rule's pipeline counts them): the pick is
        the value with ``forwards <= F`` and the smallest KL.
    target_kl : or a KL target ε: the value with ``KL <= ε`` and the fewest forwards.
    values : the grid (default :data:`DEFAULT_GRIDS`); ties : the tie rule (None: the rule's).

    Returns a :class:`Tuning` (the whole curve and the pick; see the module docstring for the
    ordering of ties). Neither budget: the curve alone (``best`` None).

    >>> import numpy as np, mdmtheory as mt
    >>> from mdmtheory.laws.families import markov_chain
    >>> p = markov_chain(np.array([[0.9, 0.1], [0.2, 0.8]]), 4)
    >>> t = mt.optimal.tune("threshold", p, forwards=3)
    >>> t.expected_forwards <= 3 and t.best_kl <= t.best_path_kl + 1e-12
    True
    """
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint (the law to tune on), got {type(p).__name__}")
    budget, limit = check_budget(forwards, target_kl)
    name, param, grid, make, plan_of = resolve_rule(planner, values, ties)
    plan = None if plan_of is None else plan_of(p.d)
    fw, kls, paths, lost, tie_names = [], [], [], [], set()
    for v in grid:
        try:
            s = make(v)
        except ValueError as e:
            raise ValueError(f"values: {param}={v:g} is not a valid value for {name} ({e})") from None
        s = as_sampler(s, plan=plan)
        run = s.exact_run(p, plan, trajectory=True)
        fw.append(float(run.forwards))
        kls.append(float(_kl(p, run.law)))
        paths.append(None if run.path_kl is None else float(run.path_kl))
        lost.append(float(run.lost))
        tie_names.add(run.ties)
    if not all(math.isfinite(f) for f in fw):
        raise ValueError(f"p: some runs of {name} never finish (forwards not finite); check p has mass")
    best = pick(budget, limit, fw, kls, grid, param=param)
    ties_run = next(iter(tie_names)) if len(tie_names) == 1 else ",".join(sorted(map(str, tie_names)))
    return Tuning(planner=name, parameter=param, values=grid, forwards=tuple(fw), kl=tuple(kls),
                  path_kl=tuple(paths), lost=tuple(lost), ties=ties_run, budget=budget, limit=limit, best=best,
                  d=p.d, note=f"exact runs of {name} on a law of d = {p.d}, K = {p.K}")

