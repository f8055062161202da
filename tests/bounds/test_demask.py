"""DEMASK (arXiv 2604.02560v1; issue 28 item 4): the dependency-bounded greedy rule and its TV bound
under sub-additivity, against references written here from the definitions (our reading of the
abstract and of a summary of Theorem 1: mdmtheory/samplers/demask.py):

* D_ij = E_{x_j ~ p(.|x_A)} TV(p(x_i | x_A, x_j), p(x_i | x_A)) (expected TV influence);
* the rule: confidence order (ties by lowest index), the first always, then each position whose
  added dependency on the chosen set keeps the running sum <= tau;
* Theorem 1: under sub-additivity TV(p_S, prod_j p_j) <= tau on the committed set.

The brute force uses dictionaries over tuples and shares no code with the package.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.bounds import dependency_matrix, demask_checks
from mdmtheory.samplers import DemaskPlanner, exact_run


# -- brute force --------------------------------------------------------------------------------
def cond(table, A, xa, S):
    """p(x_S | x_A = xa) as a dict, or None when p(x_A) = 0."""
    d, K = table.ndim, table.shape[0]
    out, tot = {}, 0.0
    for x in itertools.product(range(K), repeat=d):
        if all(x[a] == v for a, v in zip(A, xa)):
            z = tuple(x[j] for j in S)
            out[z] = out.get(z, 0.0) + table[x]
            tot += table[x]
    if tot <= 0:
        return None
    return {z: v / tot for z, v in out.items()}


def brute_D(table, A, xa):
    d, K = table.ndim, table.shape[0]
    free = [j for j in range(d) if j not in A]
    D = np.zeros((d, d))
    for i in free:
        pi = cond(table, A, xa, (i,))
        for j in free:
            if j == i:
                continue
            pj = cond(table, A, xa, (j,))
            tot = 0.0
            for v in range(K):
                if pj[(v,)] <= 0:
                    continue
                after = cond(table, tuple(A) + (j,), tuple(xa) + (v,), (i,))
                tot += pj[(v,)] * 0.5 * sum(abs(after[(u,)] - pi[(u,)]) for u in range(K))
            D[i, j] = tot
    return D


def brute_rule(table, A, xa, tau):
    d, K = table.ndim, table.shape[0]
    free = [j for j in range(d) if j not in A]
    conf = {j: max(cond(table, A, xa, (j,)).values()) for j in free}
    order = sorted(free, key=lambda j: (-round(conf[j], 9), j))
    D = brute_D(table, A, xa)
    S, C = [order[0]], 0.0
    for i in order[1:]:
        inc = sum(D[i, j] for j in S)
        if C + inc <= tau + 1e-9:
            S.append(i)
            C += inc
    return tuple(sorted(S))


def brute_law(table, tau):
    """The exact output law of the rule with the exact conditionals, by recursion over states."""
    d, K = table.ndim, table.shape[0]
    law = np.zeros(table.shape)

    def go(A, xa, w):
        if len(A) == d:
            x = [0] * d
            for a, v in zip(A, xa):
                x[a] = v
            law[tuple(x)] += w
            return
        S = brute_rule(table, A, xa, tau)
        margs = [cond(table, A, xa, (j,)) for j in S]
        for z in itertools.product(range(K), repeat=len(S)):
            pz = math.prod(m[(v,)] for m, v in zip(margs, z))
            if pz > 0:
                go(tuple(A) + S, tuple(xa) + z, w * pz)

    go((), (), 1.0)
    return law


def tv_product(table, A, xa, S):
    joint = cond(table, A, xa, S)
    margs = [cond(table, A, xa, (j,)) for j in S]
    return 0.5 * sum(abs(joint.get(z, 0.0) - math.prod(m[(v,)] for m, v in zip(margs, z)))
                     for z in itertools.product(range(table.shape[0]), repeat=len(S)))


LAWS = {
    "dirichlet(4,2)": mt.families.dirichlet(4, 2, alpha=0.4, seed=1),
    "dirichlet(3,3)": mt.families.dirichlet(3, 3, alpha=0.5, seed=2),
    "markov": mt.families.markov_chain([[0.8, 0.2], [0.3, 0.7]], 4),
}


# -- the dependency -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(LAWS))
def test_dependency_matrix_is_the_expected_tv_influence(name):
    p = LAWS[name]
    t = p.table
    for A, xa in [((), ()), ((1,), (0,)), ((0, 2), (1, 0))]:
        if cond(t, A, xa, ()) is None:
            continue
        np.testing.assert_allclose(dependency_matrix(p, A, xa), brute_D(t, A, xa), atol=1e-12)


def test_dependency_is_symmetric_and_the_pair_tv():
    """E_{x_j} TV(p(x_i|x_j), p(x_i)) = TV(p_ij, p_i p_j): symmetric, so the pair form of the bound
    (|S| = 2) is an identity."""
    t = LAWS["dirichlet(3,3)"].table
    D = brute_D(t, (), ())
    for i, j in itertools.combinations(range(3), 2):
        assert D[i, j] == pytest.approx(D[j, i], abs=1e-12)
        assert D[i, j] == pytest.approx(tv_product(t, (), (), (i, j)), abs=1e-12)


# -- the rule in the three engines --------------------------------------------------------------
@pytest.mark.parametrize("name", list(LAWS))
@pytest.mark.parametrize("tau", [0.0, 0.03, 0.15, 5.0])
def test_exact_engine_follows_the_rule(name, tau):
    p = LAWS[name]
    q = exact_run(p, None, DemaskPlanner(tau, law=p)).law.table
    np.testing.assert_allclose(q, brute_law(p.table, tau), atol=1e-12)


def test_monte_carlo_follows_the_exact_law():
    p = LAWS["dirichlet(4,2)"]
    n = 6000
    sim = mt.simulate(p, None, DemaskPlanner(0.05), n=n, seed=3)
    q = exact_run(p, None, DemaskPlanner(0.05, law=p)).law.table.ravel()
    freq = np.bincount(np.ravel_multi_index(sim.samples.T, p.table.shape), minlength=q.size) / n
    se = np.sqrt(np.maximum(q * (1 - q), 1e-12) / n)
    assert np.all(np.abs(freq - q) / se < 4.5)


def test_planner_refusals():
    p = LAWS["markov"]
    with pytest.raises(ValueError, match="tau"):
        DemaskPlanner(-0.1)
    with pytest.raises(ValueError, match="min_confidence"):
        DemaskPlanner(0.1, min_confidence=1.5)
    with pytest.raises(ValueError, match="law"):
        DemaskPlanner(0.1, law="p")
    with pytest.raises(ValueError, match="ties"):
        DemaskPlanner(0.1, ties="random")
    with pytest.raises(ValueError, match="law"):
        exact_run(p, None, DemaskPlanner(0.1))
    with pytest.raises(ValueError, match="law"):
        exact_run(p, None, DemaskPlanner(0.1, law=LAWS["dirichlet(4,2)"]))
    with pytest.raises(ValueError, match="plan"):
        mt.simulate(p, mt.Schedule((2, 2)), DemaskPlanner(0.1), n=4, seed=0)


# -- the statements -----------------------------------------------------------------------------
def test_parity_breaks_sub_additivity_and_the_unconditional_bound():
    """Parity on 3 bits: every pair independent (D = 0) yet TV(p, q) = 1/2 at the empty state;
    the rule commits all three at once (C = 0 <= tau) — the bound needs its assumption."""
    p = mt.families.parity(3)
    t = p.table
    assert np.allclose(brute_D(t, (), ()), 0.0)
    assert tv_product(t, (), (), (0, 1, 2)) == pytest.approx(0.5)
    assert brute_rule(t, (), (), 0.1) == (0, 1, 2)
    checks = {c.name: c for c in demask_checks(p, planner=DemaskPlanner(0.1))}
    assert checks["demask_assumption"].violations > 0
    assert checks["demask_subadditive_tv"].violations == 1 and checks["demask_subadditive_tv"].cases == 1
    assert checks["demask_tv_budget"].violations > 0
    assert checks["demask_tv_budget"].exact == pytest.approx(0.5)
    assert checks["demask_theorem1"].violations == 0 and checks["demask_hybrid"].violations == 0


@pytest.mark.parametrize("name", list(LAWS) + ["noisy_bit", "ising"])
def test_statements_against_brute_force(name):
    p = {**LAWS, "noisy_bit": mt.families.noisy_repeated_bit(4, 0.1), "ising": mt.families.ising_chain(4, 0.8)}[name]
    t, d, tau = p.table, p.d, 0.08
    viol = {"sub": 0, "hyb": 0, "thm": 0, "budget": 0, "assume": 0}
    worst_thm = 0.0
    for r in range(d):
        for A in itertools.combinations(range(d), r):
            for xa in itertools.product(range(p.K), repeat=r):
                if cond(t, A, xa, ()) is None:
                    continue
                D = brute_D(t, A, xa)
                free = [j for j in range(d) if j not in A]
                for n in range(2, len(free) + 1):
                    for S in itertools.combinations(free, n):
                        tv = tv_product(t, A, xa, S)
                        C = sum(D[i, j] for i, j in itertools.combinations(S, 2))
                        hyb = sum(_influence(t, A, xa, S[:k], S[k]) for k in range(1, n))
                        viol["hyb"] += tv > hyb + 1e-12
                        if n >= 3:
                            viol["sub"] += tv > C + 1e-12
                            for a in S:
                                T = tuple(b for b in S if b != a)
                                viol["assume"] += _influence(t, A, xa, T, a) > sum(D[a, b] for b in T) + 1e-12
                S = brute_rule(t, A, xa, tau)
                if len(S) >= 2:
                    tv = tv_product(t, A, xa, S)
                    C = sum(D[i, j] for i, j in itertools.combinations(S, 2))
                    viol["budget"] += tv > tau + 1e-9
                    if tv <= C + 1e-12:
                        viol["thm"] += tv > tau + 1e-9
                        worst_thm = max(worst_thm, tv / tau)
    got = {c.name: c for c in demask_checks(p, planner=DemaskPlanner(tau))}
    assert viol["hyb"] == got["demask_hybrid"].violations == 0  # derived here: always
    assert viol["thm"] == got["demask_theorem1"].violations == 0  # under its hypothesis
    assert viol["sub"] == got["demask_subadditive_tv"].violations
    assert viol["assume"] == got["demask_assumption"].violations
    assert viol["budget"] == got["demask_tv_budget"].violations
    assert got["demask_theorem1"].ratio == pytest.approx(worst_thm, abs=1e-9)


def _influence(t, A, xa, T, i):
    """E_{x_T ~ p(.|x_A)} TV(p(x_i | x_A, x_T), p(x_i | x_A)), from the definition."""
    K = t.shape[0]
    pT = cond(t, A, xa, tuple(T))
    pi = cond(t, A, xa, (i,))
    tot = 0.0
    for z, w in pT.items():
        if w <= 0:
            continue
        after = cond(t, tuple(A) + tuple(T), tuple(xa) + z, (i,))
        tot += w * 0.5 * sum(abs(after[(u,)] - pi[(u,)]) for u in range(K))
    return tot


def test_theorem_is_attained_under_its_hypothesis():
    """Tightness (derived here): p = p_12 x p_3 with D_12 = tau makes the rule commit all three at
    the empty state with TV(p_S, q_S) = D_12 = tau: ratio exactly 1."""
    tau = 0.1
    p12 = np.array([[0.25 + tau / 2, 0.25 - tau / 2], [0.25 - tau / 2, 0.25 + tau / 2]])  # TV(p12, p1 p2) = tau
    table = p12[:, :, None] * np.array([0.7, 0.3])[None, None, :]
    p = mt.Joint(table)
    assert brute_D(table, (), ())[0, 1] == pytest.approx(tau)
    assert brute_rule(table, (), (), tau) == (0, 1, 2)
    assert tv_product(table, (), (), (0, 1, 2)) == pytest.approx(tau)
    got = {c.name: c for c in demask_checks(p, planner=DemaskPlanner(tau), names=["demask_theorem1"])}
    assert got["demask_theorem1"].ratio == pytest.approx(1.0, abs=1e-9)
    assert got["demask_theorem1"].worst[2] == (0, 1, 2)


def test_check_refusals():
    p = LAWS["markov"]
    with pytest.raises(ValueError, match="planner"):
        demask_checks(p, names=["demask_theorem1"])
    with pytest.raises(ValueError, match="names"):
        demask_checks(p, names=["nope"])
    with pytest.raises(ValueError, match="p"):
        demask_checks(np.ones((2, 2)) / 4)
    with pytest.raises(ValueError, match="values"):
        dependency_matrix(mt.families.parity(3), (0, 1), (0,))


# -- the stored search (benchmarks/tightness_demask.py, quoted in benchmarks/RESULTS.md §5e) ----------
def _bench():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "tightness_demask.py"
    spec = importlib.util.spec_from_file_location("tightness_demask", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _stored():
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "tightness" / "summary_demask.tsv"
    lines = [ln.split("\t") for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
    return [dict(zip(lines[0], ln)) for ln in lines[1:]]


def test_stored_search_reaches_the_sum_mod_k_law_and_no_more_than_one_over_tau():
    """Without its assumption the rule's first set can have TV up to 1 (so TV/τ <= 1/τ); the sum-mod-K
    law (pairwise independent for d >= 3) has D = 0, TV = 1 − 1/K: the search found at least that."""
    B = _bench()
    rows = _stored()
    assert {(int(r["d"]), int(r["K"])) for r in rows} == set(B.GRID)
    for r in rows:
        d, K, v = int(r["d"]), int(r["K"]), float(r["tv_budget_ratio"])
        x = np.array(list(itertools.product(range(K), repeat=d)))
        law = np.where(x.sum(axis=1) % K == 0, 1.0, 0.0).reshape((K,) * d)
        assert B.budget_ratio(law) == pytest.approx((1 - 1 / K) / B.TAU, abs=1e-9)
        assert (1 - 1 / K) / B.TAU - 1e-6 <= v <= 1 / B.TAU + 1e-9, (d, K, v)
        assert int(r["assumption_violations"]) <= int(r["assumption_cases"])


def test_results_md_quotes_the_stored_search():
    import pathlib

    text = (pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "RESULTS.md").read_text()
    sec = text[text.index("## 5e. DEMASK"):]
    sec = sec[:sec.index("\n## ", 5)]
    stored = {(int(r["d"]), int(r["K"])): r["tv_budget_ratio"] for r in _stored()}
    for line in sec.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 7 and cells[0] in ("2", "3", "4"):
            for d, c in zip(range(3, 9), cells[1:]):
                assert c == stored.get((d, int(cells[0])), "—"), (d, cells[0], c)
