"""mt.optimal.tune: a rule's parameter tuned to a forward budget, against a brute-force loop
written here over the same grid (issue 37 §3)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.laws.families import markov_chain
from mdmtheory.samplers import EntropyBudgetPlanner, FactorPlanner, FrechetPlanner, ThresholdPlanner
from mdmtheory.samplers.serving import EntropyThresholdPlanner, JointThresholdSampler

tune = mt.optimal.tune

LAWS = {
    "chain4": markov_chain(np.array([[0.9, 0.1], [0.2, 0.8]]), 4),
    "chain5": markov_chain(np.array([[0.8, 0.2], [0.3, 0.7]]), 5),
    "chain4k3": markov_chain(np.array([[0.6, 0.3, 0.1], [0.1, 0.8, 0.1], [0.25, 0.25, 0.5]]), 4),
    "chain6": markov_chain(np.array([[0.7, 0.3], [0.4, 0.6]]), 6),
}
RULES = {"threshold": lambda v: ThresholdPlanner(v), "factor": lambda v: FactorPlanner(v),
         "frechet": lambda v: FrechetPlanner(v), "entropy_budget": lambda v: EntropyBudgetPlanner(v),
         "entropy_threshold": lambda v: EntropyThresholdPlanner(v)}


def _kl(p, q):  # brute force, written here: sum over outcomes with p > 0
    P, Q = p.table.ravel(), q.table.ravel()
    m = P > 0
    return float(np.sum(P[m] * (np.log(P[m]) - np.log(Q[m]))))


def _brute(rule, p, grid):
    rows = []
    for v in grid:
        run = mt.samplers.as_sampler(RULES[rule](v)).exact_run(p, None, trajectory=True)
        rows.append((v, run.forwards, _kl(p, run.law), run.path_kl))
    return rows


CASES = [(r, law) for r in sorted(RULES) for law in ("chain4", "chain4k3")] + \
    [("threshold", "chain5"), ("threshold", "chain6"), ("entropy_budget", "chain6"), ("frechet", "chain5")]


@pytest.mark.parametrize("rule, law", CASES)
def test_tune_matches_a_brute_force_loop(rule, law):
    p = LAWS[law]
    grid = mt.optimal.DEFAULT_GRIDS[rule]
    rows = _brute(rule, p, grid)
    fws = [r[1] for r in rows]
    for F in (1.0, float(np.median(fws)), float(max(fws))):
        feas = [r for r in rows if r[1] <= F + 1e-9]
        if not feas:
            with pytest.raises(ValueError, match="forwards"):
                tune(rule, p, forwards=F)
            continue
        t = tune(rule, p, forwards=F)
        best_kl = min(r[2] for r in feas)
        assert t.best_kl == pytest.approx(best_kl, abs=1e-12)
        assert t.expected_forwards <= F + 1e-9
        # the fewest forwards among the values with that KL
        assert t.expected_forwards == pytest.approx(min(r[1] for r in feas if r[2] <= best_kl + 1e-12), abs=1e-9)
        assert t.best_path_kl is None or t.best_path_kl >= t.best_kl - 1e-12  # KL <= path KL
    np.testing.assert_allclose(t.kl, [r[2] for r in rows], atol=1e-12)
    np.testing.assert_allclose(t.forwards, fws, atol=1e-12)
    kls = [r[2] for r in rows]
    for eps in (0.0, max(0.0, float(np.median(kls))), max(0.0, float(max(kls)))):
        feas = [r for r in rows if r[2] <= eps + 1e-12]
        if not feas:
            with pytest.raises(ValueError, match="target_kl: no value"):
                tune(rule, p, target_kl=eps)
            continue
        t = tune(rule, p, target_kl=eps)
        assert t.expected_forwards == pytest.approx(min(r[1] for r in feas), abs=1e-9)
        assert t.best_kl <= eps + 1e-12


def test_monotone_where_it_holds():
    """Checked on these laws, not assumed: threshold τ ↑ ⇒ forwards ↑ (a higher τ commits a
    subset at each state); entropy budget γ ↑ and entropy threshold θ ↑ ⇒ forwards ↓;
    factor f ↑ ⇒ forwards ↓; Fréchet δ ↑ ⇒ forwards ↑. (Subset at every state does not make
    the expected count monotone in general — the paths differ — so this is a check.)"""
    for p in LAWS.values():
        fw = lambda rule: np.diff(tune(rule, p).forwards)
        assert np.all(fw("threshold") >= -1e-12)
        assert np.all(fw("frechet") >= -1e-12)
        assert np.all(fw("entropy_budget") <= 1e-12)
        assert np.all(fw("entropy_threshold") <= 1e-12)
        assert np.all(fw("factor") <= 1e-12)


def test_extremes_in_closed_form():
    """τ = 1.01 (> 1) reveals one token per step: d forwards, KL 0; τ ≤ 1/K reveals all at
    once: 1 forward and KL = the total correlation Σ H(X_i) − H(X)."""
    p = LAWS["chain5"]
    t = tune("threshold", p, values=[0.5, 1.01])
    assert t.forwards == pytest.approx((1.0, 5.0))
    P = p.table
    H = -np.sum(P[P > 0] * np.log(P[P > 0]))
    Hi = 0.0
    for i in range(p.d):
        m = P.sum(axis=tuple(j for j in range(p.d) if j != i))
        Hi -= np.sum(m[m > 0] * np.log(m[m > 0]))
    assert t.kl[0] == pytest.approx(Hi - H, abs=1e-12)
    assert t.kl[1] == pytest.approx(0.0, abs=1e-12)


def test_family_joint_threshold_and_record():
    p = LAWS["chain4"]
    fam = lambda v: ThresholdPlanner(v, ties="lowest")
    a = tune(fam, p, forwards=3, values=[0.5, 0.8, 0.95])
    b = tune("threshold", p, forwards=3, values=[0.5, 0.8, 0.95], ties="lowest")
    assert a.kl == b.kl and a.best == b.best and a.planner == "family" and b.ties == "lowest"
    j = tune("joint_threshold", p, values=[0.5, 0.9], target_kl=10.0)
    assert all(x is None for x in j.path_kl)
    run = mt.samplers.as_sampler(JointThresholdSampler(0.9)).exact_run(p, None)
    assert j.kl[1] == pytest.approx(_kl(p, run.law), abs=1e-12)
    d = json.loads(json.dumps(a.to_dict()))
    assert d["value"] == a.value and d["forwards"] == list(a.forwards)


@pytest.mark.parametrize("kw, match", [
    (dict(forwards=0.5), "forwards: no value.*raise forwards to >= 1"),
    (dict(target_kl=-1.0), "target_kl"),
    (dict(forwards=3, target_kl=0.1), "forwards: give forwards= or target_kl=, not both"),
    (dict(values=[]), "values"),
    (dict(values=[0.5, float("nan")]), "values"),
    (dict(values=[0.5, 0.5]), "values"),
])
def test_bad_input(kw, match):
    with pytest.raises(ValueError, match=match):
        tune("threshold", LAWS["chain4"], **kw)


def test_bad_rule_and_law():
    with pytest.raises(ValueError, match="planner"):
        tune("nope", LAWS["chain4"])
    with pytest.raises(ValueError, match="values: a family"):
        tune(lambda v: ThresholdPlanner(v), LAWS["chain4"])
    with pytest.raises(ValueError, match="^p:"):
        tune("threshold", np.ones(4))
    with pytest.raises(ValueError, match="values: f=-1"):
        tune("factor", LAWS["chain4"], values=[-1.0])
    with pytest.raises(ValueError, match="target_kl: no value.*raise target_kl to >= "):
        tune("threshold", LAWS["chain4"], target_kl=0.0, values=[0.1])
