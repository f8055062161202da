"""What the main job costs (issue 31 item 13: ``make demo`` peaked at 4.7 GB, now about a third
of it; benchmarks/bench_cost.py measures the demo itself). The demo's peak was one exact
run at T = 1: one step from the empty state, K^d terms, each held as several int64 arrays and
copied on the way. The law of that step is known from the definition — every position is
revealed at once with its value drawn from its marginal, whatever the planner — so the lean
terms are checked against it, and their memory is bounded in a fresh process.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.samplers import engine, exact_run, resolve_planner, SampleThenSelectPlanner, select_run

ROOT = Path(mt.__file__).resolve().parents[1]


def _product_of_marginals(table: np.ndarray) -> np.ndarray:
    d = table.ndim
    out = np.ones(())
    for j in range(d):
        pj = table.sum(axis=tuple(i for i in range(d) if i != j))
        out = np.multiply.outer(out, pj)
    return out


@pytest.mark.parametrize("planner", ["confidence", "left_to_right", "entropy"])
def test_one_step_from_the_empty_state_samples_the_product_of_the_marginals(planner):
    p = mt.families.dirichlet(5, 4, seed=3)
    ref = _product_of_marginals(p.table)
    q = exact_run(p, mt.Schedule((5,)), planner).law
    assert q.lost == 0.0
    np.testing.assert_allclose(q.table, ref, rtol=0, atol=1e-16)
    if planner == "confidence":
        s = select_run(p, mt.Schedule((5,)), SampleThenSelectPlanner()).law
        np.testing.assert_allclose(s.table, ref, rtol=0, atol=1e-16)


def test_chain_terms_are_int32_where_the_lattice_allows():
    """Half the memory of the terms (their lattice indices and sources) when (K+1)^d fits."""
    p = mt.families.dirichlet(5, 4, seed=3)
    plan = engine._chain_plan(p.table, resolve_planner("confidence"), [2, 3])
    for step in plan.steps:
        assert step.num.dtype == step.den.dtype == step.src.dtype == np.int32
        assert step.dst.dtype == step.out.dtype == step.live.dtype == np.int32


def test_a_one_step_run_holds_few_bytes_per_term():
    """K = 12, d = 5: 12^5 = 0.25 M terms in one step. Before: ~365 bytes per term at the peak
    (int64 terms, np.unique's sort, (states, d) value arrays, concatenated copies); now ~160, of
    which ~80 per term at the words law's 12 M terms (the rest: the lattice, fixed)."""
    code = """
import numpy as np, mdmtheory as mt
from mdmtheory.samplers import exact_run
p = mt.families.dirichlet(5, 12, seed=0)
exact_run(mt.families.dirichlet(3, 2, seed=0), mt.Schedule((3,)), "confidence")  # imports, small
def status(key):
    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith(key)) * 1024
before = status('VmRSS')
exact_run(p, mt.Schedule((5,)), "confidence")
print(status('VmHWM') - before)
"""
    if not Path("/proc/self/status").exists():
        pytest.skip("needs Linux /proc for the peak resident set size")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT), check=True)
    grew = int(out.stdout.strip().splitlines()[-1])
    assert grew <= 240 * 12**5, f"{grew / 12**5:.0f} bytes per term"


def test_the_report_reads_one_step_planner_laws_from_the_random_one():
    """The report's KL cache takes every planner's one-step law from the random planner's (the
    demo's peak was four chain runs of K^d terms at T = 1): the same KL as each planner's own
    exact run, and no tie mass."""
    from mdmtheory.information import kl
    from mdmtheory.report.report import _KLCache, DEFAULT_PLANNERS

    p = mt.families.dirichlet(4, 3, seed=5)
    cache = _KLCache(p)
    one = mt.Schedule((4,))
    for pl in DEFAULT_PLANNERS:
        run = exact_run(p, one, pl)
        assert abs(cache(one, pl) - kl(p, run.law)) < 1e-13 and run.tie_mass == 0.0
        assert cache.tie_mass.get(((4,), pl), 0.0) == 0.0
    assert cache(mt.Schedule((2, 2)), "confidence") == kl(p, exact_run(p, mt.Schedule((2, 2)), "confidence").law)
