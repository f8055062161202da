"""The sampler protocol (mdmtheory.samplers.base; docs/design.md §8, "A sampler").

1. Every sampler family implements the protocol: ``as_sampler`` resolves it, it has a
   ``Capabilities`` record, its ``exact_run`` returns a ``Run`` whose law is what
   ``mt.sampler_law`` gives, its ``simulate`` a ``Simulation``.
2. The hubs ask the object, never its class or name: a static check of their code (no
   ``isinstance`` on a sampler class, no comparison of a planner's name with a string, no
   ``getattr`` of the old duck-typed flags).
3. The newcomer's job: a toy rule defined in this file alone gets ``sampler_law``,
   ``simulate``, ``compare`` rows and the report's frontier, without editing any other file.
"""

from __future__ import annotations

import ast
import itertools
import math
import pathlib
from dataclasses import dataclass

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory import samplers
from mdmtheory._estimate import Record
from mdmtheory.samplers.base import Capabilities, PositionSampler, Run, Simulation, as_sampler

PKG = pathlib.Path(mt.__file__).resolve().parent
P = mt.laws.families.markov_chain([[0.8, 0.2], [0.3, 0.7]], 4)
S = mt.Schedule((2, 1, 1))

#: one sampler of each family, with the plan it runs
FAMILIES = [
    ("random", S),
    ("left_to_right", S),
    (samplers.ConfidencePlanner(ties="lowest"), S),
    (samplers.ThresholdPlanner(0.7), None),
    (samplers.EntropyThresholdPlanner(0.5), None),
    (samplers.DemaskPlanner(0.1, law=P), None),
    (samplers.SampleThenSelectPlanner(), S),
    (samplers.RemaskingSampler.uniform(2), None),
    (samplers.CorrectorSampler(S, 1), None),
    (samplers.ReMDMSampler(4, "cap"), None),
    (samplers.SpeculativeSampler("assd", 2), None),
    (samplers.InfoGainSampler(candidates=2), None),
    (samplers.JointThresholdSampler(0.5, max_post_edit_steps=1), None),
]


@pytest.mark.parametrize("planner, plan", FAMILIES, ids=lambda x: getattr(x, "name", type(x).__name__))
def test_every_family_implements_the_protocol(planner, plan):
    s = as_sampler(planner, plan=plan)
    assert isinstance(s, samplers.Sampler)
    cap = s.capabilities
    assert isinstance(cap, Capabilities) and isinstance(s.name, str) and s.name
    run = s.exact_run(P, plan)
    assert isinstance(run, Run) and math.isfinite(run.forwards) and run.forwards >= 1
    assert abs(run.law.table.sum() + run.law.lost - 1.0) < 1e-9
    np.testing.assert_array_equal(run.law.table, mt.sampler_law(P, plan, planner).table)
    sim = s.simulate(P, plan, n=64, seed=0)
    assert isinstance(sim, Simulation) and sim.samples.shape == (64, P.d)
    assert not (cap.positions and cap.revises)  # a planner of positions never revises what it revealed
    if cap.path_kl:  # the trajectory KL bounds the KL (data processing)
        path = s.exact_run(P, plan, trajectory=True).path_kl
        assert path >= mt.kl(P, run.law) - 1e-12


def test_as_sampler_resolves_once_and_checks_ties_and_plan():
    s = as_sampler("confidence", ties="lowest", plan=S)
    assert s.ties == "lowest" and as_sampler(s) is s  # an object with the protocol is itself
    with pytest.raises(ValueError, match="^ties: 'random' ranks nothing"):
        as_sampler("random", ties="lowest")
    with pytest.raises(ValueError, match="^plan: "):
        as_sampler("confidence", plan=None)
    with pytest.raises(ValueError, match="^planner: pass an instance"):
        as_sampler(samplers.InfoGainSampler)
    with pytest.raises(ValueError, match="^plan: .*carries its own plan"):
        as_sampler(samplers.CorrectorSampler(S, 1), plan=mt.Schedule((1, 3)))


# -- 2. the hubs ask capabilities ---------------------------------------------------------------
#: the hubs: module -> the functions checked (None: the whole module)
HUBS = {
    "samplers/engine.py": ("sampler_law", "sampler_kl", "exact_run"),
    "samplers/simulate.py": None,
    "samplers/spread.py": None,
    "bounds/comparison.py": None,
    "bounds/registry.py": None,
    "report/report.py": None,
    "bridge/estimators.py": None,
    "bridge/attention.py": None,
}
#: the duck-typed flags the protocol replaced
OLD_FLAGS = {"revises", "runs_itself", "commits_values", "needs_schedule", "_own_plan", "uses_probs", "allows_empty"}


def _sampler_classes() -> set[str]:
    names = {"_Deterministic", "_Own", "_Revising", "_ScoreTopK", "_ProfileCount"}
    for n in samplers.__all__:
        obj = getattr(samplers, n)
        if isinstance(obj, type) and (hasattr(obj, "exact_run") or hasattr(obj, "moves")):
            names.add(n)
    return names


def _violations(tree: ast.AST, classes: set[str]) -> list[str]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "issubclass") \
                and len(node.args) == 2:
            kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
            hit = [k.id if isinstance(k, ast.Name) else getattr(k, "attr", "") for k in kinds]
            if set(hit) & classes:
                out.append(f"line {node.lineno}: isinstance on a sampler class {sorted(set(hit) & classes)}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value in OLD_FLAGS:
            out.append(f"line {node.lineno}: {node.func.id}(..., {node.args[1].value!r}) (a duck-typed flag)")
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            named = any((isinstance(x, ast.Attribute) and x.attr == "name")
                        or (isinstance(x, ast.Call) and isinstance(x.func, ast.Name) and "name" in x.func.id)
                        for x in sides)
            const = any(isinstance(x, (ast.Constant, ast.Tuple, ast.List)) for x in sides)
            if named and const:
                out.append(f"line {node.lineno}: compares a planner's name with a constant")
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Call) and \
                isinstance(node.left.func, ast.Name) and node.left.func.id == "type":
            out.append(f"line {node.lineno}: type(...) is ... (a class test)")
    return out


def _hub_trees():
    for rel, funcs in HUBS.items():
        tree = ast.parse((PKG / rel).read_text(encoding="utf-8"))
        if funcs is None:
            yield rel, tree
            continue
        found = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert set(funcs) <= set(found), f"{rel}: the hub functions {sorted(set(funcs) - set(found))} moved"
        for f in funcs:
            yield f"{rel}:{f}", found[f]


def test_hubs_ask_capabilities_not_class_or_name():
    classes = _sampler_classes()
    assert {"ConfidencePlanner", "SpeculativeSampler", "SampleThenSelectPlanner", "RemaskingSampler"} <= classes
    bad = [f"{where} {v}" for where, tree in _hub_trees() for v in _violations(tree, classes)]
    assert not bad, "a hub tests a sampler's class or name (ask sampler.capabilities):\n" + "\n".join(bad)


def test_the_hub_check_can_fail():
    """The static check sees each kind of violation (a planted hub)."""
    planted = ast.parse("\n".join([
        "def hub(planner):",
        "    if isinstance(planner, SpeculativeSampler): pass",
        "    if getattr(planner, 'runs_itself', False): pass",
        "    if planner.name == 'demask': pass",
        "    if _planner_name(planner) in ('factor', 'frechet'): pass",
        "    if type(planner) is RandomPlanner: pass",
    ]))
    assert len(_violations(planted, _sampler_classes())) == 5


# -- 3. a toy rule in this file alone -------------------------------------------------------------
@dataclass(frozen=True)
class EvenFirstPlanner(PositionSampler, Record):
    """Toy rule: each step reveals its k_t masked positions, even positions first (a fixed
    order that reads no conditional): 0, 2, ..., then 1, 3, ...."""

    name: str = "even_first"
    needs_schedule: bool = True
    uses_probs = False

    @staticmethod
    def _order(d):
        return sorted(range(d), key=lambda j: (j % 2, j))

    def moves(self, ctx):
        todo = [j for j in self._order(ctx.d) if j in ctx.free][: ctx.size]
        yield sum(1 << j for j in todo), 1.0

    def select(self, step, size, probs, free, rng=None):
        chosen = np.zeros(free.shape, dtype=bool)
        for r in range(free.shape[0]):
            chosen[r, [j for j in self._order(free.shape[1]) if free[r, j]][:size]] = True
        return chosen


@pytest.fixture
def toy():
    samplers.register_planner("even_first", EvenFirstPlanner)
    yield EvenFirstPlanner()
    samplers.PLANNERS.pop("even_first", None)


def _toy_law(p, sizes):
    """Brute force: q(x) = prod_t prod_{j in B_t} p(x_j | x_{A_t}) along the fixed blocks."""
    order = EvenFirstPlanner._order(p.d)
    blocks, s = [], 0
    for k in sizes:
        blocks.append(order[s:s + k])
        s += k
    q = np.zeros(p.table.shape)
    for x in itertools.product(range(p.K), repeat=p.d):
        prob, known = 1.0, []
        for B in blocks:
            den = p.marginal(known)[tuple(x[j] for j in known)] if known else 1.0
            for j in B:
                prob *= p.marginal(sorted(known + [j]))[tuple(x[i] for i in sorted(known + [j]))] / den
            known = known + B
        q[x] = prob
    return q


def test_a_toy_rule_gets_every_hub_without_editing_a_file(toy):
    sizes = (2, 1, 1)
    want = _toy_law(P, sizes)
    for planner in (toy, "even_first"):
        q = mt.sampler_law(P, mt.Schedule(sizes), planner)
        np.testing.assert_allclose(q.table, want, atol=1e-14)
    sim = mt.simulate(P, mt.Schedule(sizes), "even_first", n=4000, seed=3)
    freq = np.zeros(P.table.shape)
    np.add.at(freq, tuple(sim.samples.T), 1.0 / 4000)
    se = np.sqrt(want * (1 - want) / 4000) + 1e-12
    assert np.max(np.abs(freq - want) / se) < 5
    cmp = mt.compare(P, mt.Schedule(sizes), toy)
    assert cmp.kl == pytest.approx(mt.kl(P, mt.Joint(want)), abs=1e-12)
    assert {"kl", "path_kl", "reverse_kl", "data_processing"} <= set(cmp.names) and cmp.all_hold
    assert "riemann" not in cmp.names  # the random-order rows are not its rows


def test_a_toy_rule_joins_the_reports_frontier(toy):
    from mdmtheory.report import build_report

    @dataclass(frozen=True)
    class EvenFirstOwnSizes(EvenFirstPlanner):
        """The toy with its own sizes: two tokens per step."""

        name: str = "even_first_pairs"
        needs_schedule: bool = False

        def moves(self, ctx):
            todo = [j for j in self._order(ctx.d) if j in ctx.free][:2]
            yield sum(1 << j for j in todo), 1.0

        def _step_size(self, step, size, d):
            return 2

    rep = build_report(P, steps=[2, 4], planners=("random", "even_first"),
                       frontier_rules=(("even_first_pairs", "2 per step", EvenFirstOwnSizes()),))
    pts = rep.to_dict()["planners"]["parallelism"]["points"]
    names = {q["planner"] for q in pts}
    assert {"even_first", "even_first_pairs"} <= names
    pair = next(q for q in pts if q["planner"] == "even_first_pairs")
    assert pair["tokens_per_forward"] == pytest.approx(2.0)
    law = mt.sampler_law(P, None, EvenFirstOwnSizes())
    assert pair["kl"] == pytest.approx(mt.kl(P, law), abs=1e-12)
