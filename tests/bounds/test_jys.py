"""Jump Your Steps (issue 28 item 6): its KLUB and its schedule search, against references
written here from the authors' code (enkeejunior1/jump-your-steps@3de34f6):

* ``ddms/sedd.py``: masked at time t with probability t (log-linear noise, eps -> 0), nested
  masks in t, reverse rate of a masked position R_t(j, v) = sigma(t) (1 - m)/m p(v | x_A) =
  p(v | x_A)/t; the Euler step from t to u reveals with probability (t - u)/t;
* ``jys.py`` ``klub_algorithm1_t_q_data``: (t2 - t3) E sum_{j masked at t2} sum_v
  R2 log(R2/R1), x_{t1}, x_{t2} from the nested forward process;
* the CTMC Girsanov formula: KL of path laws = E int sum_v [R log(R/R') - R + R'] ds.

The brute force enumerates x and the nested masks with dictionaries; it shares no code with
mdmtheory.bounds.jys (the exact path KL comes from the engine's trajectory KL).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate

import mdmtheory as mt
from mdmtheory.bounds import jys_gain, jys_klub, jys_schedule


_COND: dict = {}


def conditional(table, A, x, j):
    """p(x_j = . | x_A) by summing the table over the sequences that agree with x on A (memoized)."""
    d, K = table.ndim, table.shape[0]
    key = (id(table), tuple(A), tuple(x[a] for a in A), j)
    if key not in _COND:
        num = np.zeros(K)
        for y in itertools.product(range(K), repeat=d):
            if all(y[a] == x[a] for a in A):
                num[y[j]] += table[y]
        _COND[key] = num / num.sum()
    return _COND[key]


def nested_states(d, t_hi, t_lo):
    """(masked at t_hi, masked at t_lo, probability) over the nested forward masks:
    each position masked at t_lo (prob t_lo), at t_hi only (t_hi - t_lo), or revealed (1 - t_hi)."""
    for kinds in itertools.product((0, 1, 2), repeat=d):
        pr = math.prod((t_lo, t_hi - t_lo, 1.0 - t_hi)[k] for k in kinds)
        if pr > 0:
            yield ([j for j in range(d) if kinds[j] < 2], [j for j in range(d) if kinds[j] == 0], pr)


def brute_integrand(table, t_hi, s, full):
    """E sum_{j masked at s} sum_v [R_s log(R_s/R_hat) (- R_s + R_hat if full)], R_hat frozen at t_hi."""
    d = table.ndim
    total = 0.0
    for x in itertools.product(range(table.shape[0]), repeat=d):
        if table[x] == 0:
            continue
        for M_hi, M_s, pr in nested_states(d, t_hi, s):
            A_hi = [j for j in range(d) if j not in M_hi]
            A_s = [j for j in range(d) if j not in M_s]
            for j in M_s:
                Rs = conditional(table, A_s, x, j) / s
                Rh = conditional(table, A_hi, x, j) / t_hi
                m = Rs > 0
                term = float(np.sum(Rs[m] * np.log(Rs[m] / Rh[m])))
                if full:
                    term += float(-Rs.sum() + Rh.sum())
                total += table[x] * pr * term
    return total


def engine_path_kl(p, times):
    return mt.exact_run(p, mt.Grid(times), trajectory=True).path_kl


LAW = mt.families.dirichlet(3, 2, alpha=0.7, seed=5)


@pytest.mark.parametrize("t1, t2, t3", [(1.0, 0.5, 0.0), (0.9, 0.4, 0.1)])
def test_gain_is_the_expectation_of_klub_algorithm1(t1, t2, t3):
    """jys_gain('code') = what klub_algorithm1_t_q_data averages, with the exact model; the
    'girsanov' form adds -R2 + R1; the 'kl' form is the exact drop of the path KL."""
    code = (t2 - t3) * brute_integrand(LAW.table, t1, t2, full=False)
    full = (t2 - t3) * brute_integrand(LAW.table, t1, t2, full=True)
    assert jys_gain(LAW, t1, t2, t3, form="code") == pytest.approx(code, rel=1e-10, abs=1e-13)
    assert jys_gain(LAW, t1, t2, t3, form="girsanov") == pytest.approx(full, rel=1e-10, abs=1e-13)
    drop = engine_path_kl(LAW, (1 - t1, 1 - t3)) - engine_path_kl(LAW, (1 - t1, 1 - t2, 1 - t3))
    assert jys_gain(LAW, t1, t2, t3, form="kl") == pytest.approx(drop, rel=1e-9, abs=1e-13)


def test_klub_is_the_girsanov_integral_and_bounds_the_path_kl():
    """jys_klub = sum over steps of the Girsanov integral with rates frozen at the step's start
    (quadrature of the enumerated integrand), >= the engine's path KL >= the output-law KL."""
    times = (0.0, 0.45, 0.9)  # reveal times; JYS times 1 > 0.55 > 0.1 (u = 0 is covered by the gain test)
    for form, full in (("girsanov", True), ("code", False)):
        ref = sum(integrate.quad(lambda s, t=1 - a: brute_integrand(LAW.table, t, s, full), 1 - b, 1 - a,
                                 epsabs=1e-10, epsrel=1e-8, limit=100)[0] for a, b in zip(times[:-1], times[1:]))
        assert jys_klub(LAW, mt.Grid(times), form=form).value == pytest.approx(ref, rel=1e-6)
    path = engine_path_kl(LAW, times)
    assert jys_klub(LAW, mt.Grid(times), form="kl").value == pytest.approx(path, rel=1e-10)
    klq = mt.kl(LAW, mt.sampler_law(LAW, mt.Grid(times)))
    for form in ("girsanov", "code"):
        assert jys_klub(LAW, mt.Grid(times), form=form).value >= path >= klq - 1e-15


def test_klub_is_loose_by_a_law_free_timing_term():
    """At a product law the path KL is 0 and the KLUB is d * sum tau > 0 (ratio exact/KLUB = 0)."""
    p = mt.families.product([[0.3, 0.7]] * 3)
    g = mt.Grid((0.0, 0.5, 1.0))
    assert engine_path_kl(p, g.times) == pytest.approx(0.0, abs=1e-14)
    # tau(1, 0.5) + tau(0.5, 0) = [(1 - 0.25)/2 - 0.5 log 2] + 0.25 (girsanov)
    assert jys_klub(p, g).value == pytest.approx(3 * (0.375 - 0.5 * math.log(2) + 0.25), rel=1e-12)


def test_search_first_split_on_a_product_law_is_one_over_e():
    """On a product law h = 0 and the code's gain from (1, 1e-5) is (v2 - 1e-5) d log(1/v2):
    its maximum is near v2 = 1/e, whatever the law's marginals — the code's timing term alone
    places the split."""
    p = mt.families.product([[0.2, 0.8]] * 4)
    s = jys_schedule(p, 2, src_steps=1024)
    assert s.times[0] == 1.0 and s.times[-1] == pytest.approx(1e-5)
    assert abs(s.times[1] - math.exp(-1)) < 2.0 / 1024


def test_kl_form_search_finds_the_best_two_step_grid_on_the_candidates():
    """With the exact path-KL gain (form 'kl') one round picks the candidate time of least
    path KL (brute force over the candidate grid, engine path KL)."""
    p = mt.families.dirichlet(4, 2, alpha=0.5, seed=3)
    src = 64
    s = jys_schedule(p, 2, src_steps=src, form="kl")
    space = np.linspace(1.0, 1e-5, src + 1)
    best = min(engine_path_kl(p, (0.0, 1 - v, 1 - 1e-5)) for v in space[1:-1])
    assert engine_path_kl(p, s.grid.times) <= best + 1e-9


def test_code_search_is_not_the_path_kl_optimum():
    """The code's search (timing term included) misses the best grid on parity(4), 2 steps:
    path KL 0.4188 at t = 0.332 against 0.4007 at t = 0.25 (optimal_grid, same end points)."""
    p = mt.families.parity(4)
    s = jys_schedule(p, 2)
    opt = mt.optimal.optimal_grid(p, 2, start=s.grid.times[0], stop=s.grid.times[-1])
    jp, op = engine_path_kl(p, s.grid.times), engine_path_kl(p, opt.times)
    assert jp > op + 0.01
    assert s.times[1] == pytest.approx(0.332, abs=5e-4) and jp == pytest.approx(0.4188, abs=5e-5)
    assert 1 - opt.times[1] == pytest.approx(0.25, abs=1e-3) and op == pytest.approx(0.4007, abs=5e-5)


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="steps"):
        jys_schedule(LAW, 3)
    with pytest.raises(ValueError, match="form"):
        jys_klub(LAW, mt.Grid((0.0, 1.0)), form="nope")
    with pytest.raises(ValueError, match="t1, t2, t3"):
        jys_gain(LAW, 0.2, 0.5, 0.1)
    with pytest.raises(ValueError, match="grid"):
        jys_klub(LAW, mt.Schedule((3,)))


def _stored():
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "tightness" / "summary_jys.tsv"
    lines = [ln.split("\t") for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
    return [dict(zip(lines[0], ln)) for ln in lines[1:]]


def test_stored_klub_tightness_is_the_repeated_symbol_closed_form():
    """benchmarks/tightness_jys.py's largest path KL/KLUB at every (d, K) is one step on the
    repeated symbol: path KL = TC = (d - 1) log K (to O(1e-5)), KLUB = TC + d tau(1, 1e-5), tau = (1 - u^2)/2
    - u log(1/u) (the Girsanov timing term written out here); recomputed for d <= 4 from the law."""
    u = 1e-5
    tau = (1 - u * u) / 2 - u * math.log(1 / u)
    rows = [r for r in _stored() if r["target"] == "path_over_klub"]
    assert {(int(r["d"]), int(r["K"])) for r in rows} == {(d, K) for d in range(3, 9) for K in (2, 3, 4)}
    for r in rows:
        d, K = int(r["d"]), int(r["K"])
        tc = (d - 1) * math.log(K)
        assert (r["law"], r["grid"]) == (f"repeated(K={K})", "uniform N=1")
        # the grid stops at 1 - 1e-5 (the rest is the exact completion): path KL = TC - O(1e-5)
        assert float(r["best_ratio"]) == pytest.approx(tc / (tc + d * tau), abs=5e-5)
        if d <= 4:
            p = mt.families.repeated(d, K)
            g = mt.Grid((0.0, 1 - u))
            assert engine_path_kl(p, g.times) / jys_klub(p, g).value == pytest.approx(float(r["best_ratio"]), abs=2e-6)


def test_compare_lists_the_klub_rows_for_grids():
    c = mt.compare(LAW, mt.Grid((0.0, 0.5, 0.9)))
    for name in ("jys_klub_girsanov", "jys_klub_code"):
        row = c.row(name)
        assert row.holds and row.exact == pytest.approx(c.path_kl, rel=1e-9) and row.status == "our reading"
    assert c.row("jys_klub_code").value > c.row("jys_klub_girsanov").value > c.path_kl
