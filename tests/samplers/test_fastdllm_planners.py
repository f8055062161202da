"""Fast-dLLM's factor rule and Fast-dLLM++'s Fréchet rule (issue 28 items 1-2): the exact engine
against a brute-force sampler written here from the papers' definitions, Monte Carlo against
the exact law, and the authors' loop (``get_transfer_index_dynamic``, Ringo-Star/FastdLLM_plusplus
v1/llada/generate.py at 29fd034) re-stated in plain Python, quirk included.

Definitions used (not the package's code):
* confidence c_i = max_v p(x_i = v | x_A) (temperature 0), sorted c_(1) >= ... >= c_(m);
* factor rule (Fast-dLLM++ §5 quoting Fast-dLLM): accept n when (n+1)(1 - c_(n)) <= f (the
  code's ``c < 1 - f/(n+1)`` stops), n >= 1;
* Fréchet rule (Fast-dLLM++ Algorithm 1, eq. 5): largest n with
  sum_{j<=n} c_(j) - (n-1) - (1 - c_(n)) > delta, n >= 1.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mdmtheory as mt
from mdmtheory import families
from mdmtheory.samplers import FactorPlanner, FrechetPlanner, exact_run, simulate


# -- the rules, from the definitions ------------------------------------------------------------
def factor_stated(cs, f):
    """Largest n with (n+1)(1 - c_(n)) <= f, at least 1 (the stated rule)."""
    best = 1
    for n in range(2, len(cs) + 1):
        if (n + 1) * (1 - cs[n - 1]) <= f + 1e-12:
            best = n
        else:
            break
    return best


def factor_as_coded(cs, f):
    """The authors' loop in words: thresholds 1 - f/(n+1) (the first replaced by -1); walk the
    sorted confidences, stop at the first below its threshold; the stop index i is the count,
    except that i = 0 or i = m - 1 becomes i + 1 (so a failure at the last position commits all)."""
    m = len(cs)
    th = [-1.0] + [1 - f / (n + 1) for n in range(2, m + 1)]
    i = 0
    for i in range(m):
        if cs[i] < th[i] - 1e-12:
            break
    if i == 0 or i == m - 1:
        i += 1
    return i


def frechet_rule(cs, delta):
    best = 1
    for n in range(2, len(cs) + 1):
        L = sum(cs[:n]) - (n - 1)
        U = 1 - cs[n - 1]
        if L - U > delta + 1e-12:
            best = n
    return best


def brute_law(table, rule):
    """The output law of the rule, by recursion over states: conditionals summed from the table,
    the n most confident positions (ties to the lowest index) drawn from their marginals."""
    d, K = table.ndim, table.shape[0]
    q = np.zeros_like(table)
    xs = list(itertools.product(range(K), repeat=d))

    def go(vals, weight):
        masked = [j for j in range(d) if vals[j] is None]
        if not masked:
            q[tuple(vals)] += weight
            return
        match = [x for x in xs if all(vals[j] is None or x[j] == vals[j] for j in range(d))]
        tot = sum(table[x] for x in match)
        if tot <= 0:
            return
        cond = {j: np.array([sum(table[x] for x in match if x[j] == v) for v in range(K)]) / tot for j in masked}
        order = sorted(masked, key=lambda j: (-cond[j].max(), j))
        n = rule([cond[j].max() for j in order])
        B = order[:n]
        for vs in itertools.product(range(K), repeat=n):
            w = math.prod(cond[j][v] for j, v in zip(B, vs))
            if w > 0:
                nv = list(vals)
                for j, v in zip(B, vs):
                    nv[j] = v
                go(nv, weight * w)

    go([None] * d, 1.0)
    return q


LAWS = {
    "dirichlet5": lambda: families.dirichlet(5, 2, alpha=0.5, seed=2),
    "dirichlet4_K3": lambda: families.dirichlet(4, 3, alpha=0.3, seed=5),
    "markov5": lambda: families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 5),
}
RULES = [
    ("factor_code_0.75", FactorPlanner(0.75, ties="lowest"), lambda cs: factor_as_coded(cs, 0.75)),
    ("factor_code_1.5", FactorPlanner(1.5, ties="lowest"), lambda cs: factor_as_coded(cs, 1.5)),
    ("factor_stated_1", FactorPlanner(1.0, ties="lowest", reference_quirk=False), lambda cs: factor_stated(cs, 1.0)),
    ("frechet_0.25", FrechetPlanner(0.25, ties="lowest"), lambda cs: frechet_rule(cs, 0.25)),
    ("frechet_0", FrechetPlanner(0.0, ties="lowest"), lambda cs: frechet_rule(cs, 0.0)),
]


@pytest.mark.parametrize("lname", sorted(LAWS))
@pytest.mark.parametrize("rname,planner,rule", RULES, ids=[r[0] for r in RULES])
def test_exact_engine_matches_a_brute_force_sampler(lname, rname, planner, rule):
    p = LAWS[lname]()
    q = exact_run(p, None, planner).law.table
    np.testing.assert_allclose(q, brute_law(p.table, rule), atol=1e-12)


@settings(max_examples=12, deadline=None)
@given(st.integers(2, 4), st.integers(2, 3), st.floats(0.1, 2.0), st.integers(0, 10**6), st.floats(0.0, 2.0),
       st.booleans())
def test_exact_engine_matches_the_brute_force_on_random_laws(d, K, alpha, seed, param, frechet):
    if K ** d > 27:
        d = 3
    p = families.dirichlet(d, K, alpha=alpha, seed=seed)
    if frechet:
        planner, rule = FrechetPlanner(1 - param, ties="lowest"), (lambda cs: frechet_rule(cs, 1 - param))
    else:
        planner, rule = FactorPlanner(param, ties="lowest"), (lambda cs: factor_as_coded(cs, param))
    np.testing.assert_allclose(exact_run(p, None, planner).law.table, brute_law(p.table, rule), atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=9), st.floats(0.0, 3.0))
def test_counts_match_the_rules_on_any_profile(conf, f):
    cs = sorted(conf, reverse=True)
    row = np.array([cs + [0.0]])
    m = np.array([len(cs)])
    # stay off the boundary, where the package's TIE_TOL and the reference's 1e-12 may differ
    gaps = [abs((n + 1) * (1 - cs[n - 1]) - f) for n in range(2, len(cs) + 1)]
    if all(g > 1e-9 for g in gaps):
        assert FactorPlanner(f).count(row, m)[0] == factor_as_coded(cs, f)
        assert FactorPlanner(f, reference_quirk=False).count(row, m)[0] == factor_stated(cs, f)
    delta = 1.0 - f
    scores = [sum(cs[:n]) - (n - 1) - (1 - cs[n - 1]) - delta for n in range(2, len(cs) + 1)]
    if all(abs(s) > 1e-9 for s in scores):
        assert FrechetPlanner(delta).count(row, m)[0] == frechet_rule(cs, delta)


def test_the_reference_quirk_commits_the_last_two_together():
    # two masked positions, the second far below 1 - f/3: the authors' loop still commits both
    cs = np.array([[0.99, 0.5]])
    assert factor_as_coded([0.99, 0.5], 0.75) == 2
    assert FactorPlanner(0.75).count(cs, np.array([2]))[0] == 2
    assert FactorPlanner(0.75, reference_quirk=False).count(cs, np.array([2]))[0] == 1
    # and on a law: x0 = x1 (perfectly dependent), uniform: the factor rule as coded reveals both
    # at once (KL = log 2), the stated rule one at a time (KL = 0)
    p = families.repeated(2)
    assert mt.kl(p, exact_run(p, None, FactorPlanner(0.75)).law) == pytest.approx(math.log(2))
    assert mt.kl(p, exact_run(p, None, FactorPlanner(0.75, reference_quirk=False)).law) == pytest.approx(0.0, abs=1e-15)


def test_equal_confidences_make_frechet_the_matched_factor_rule():
    # Fast-dLLM++ Corollary 4.2 / eq. (8) on flat profiles: Fréchet(delta) = Factor(f = 1 - delta)
    for c in np.linspace(0.5, 1.0, 23):
        for m in range(1, 8):
            for delta in (0.0, 0.1, 0.25, 0.5):
                row = np.full((1, m), c)
                a = FrechetPlanner(delta).count(row, np.array([m]))[0]
                b = factor_stated([c] * m, 1 - delta)
                if all(abs((n + 1) * (1 - c) - (1 - delta)) > 1e-9 for n in range(2, m + 1)):
                    assert a == b, (c, m, delta)


@pytest.mark.parametrize("planner", [FactorPlanner(0.75), FactorPlanner(1.0, reference_quirk=False),
                                     FrechetPlanner(0.25), FrechetPlanner.from_factor(0.75, ties="lowest")],
                         ids=repr)
def test_simulation_follows_the_exact_law(planner):
    p = families.dirichlet(4, 2, alpha=0.4, seed=1)
    run = exact_run(p, None, planner)
    n = 20000
    sim = simulate(p, None, planner, n=n, seed=3)
    counts = np.zeros(p.table.shape)
    np.add.at(counts, tuple(sim.samples[~sim.lost].T), 1)
    q = run.law.table
    sd = np.sqrt(np.maximum(q * (1 - q), 1e-300) / n)
    assert np.all(counts[q == 0] == 0)
    assert np.max(np.abs((counts / n - q)[q > 0] / sd[q > 0])) < 5


def test_planners_refuse_bad_input_by_name():
    with pytest.raises(ValueError, match="f"):
        FactorPlanner(-0.1)
    with pytest.raises(ValueError, match="f"):
        FactorPlanner(float("nan"))
    with pytest.raises(ValueError, match="delta"):
        FrechetPlanner(float("inf"))
    with pytest.raises(ValueError, match="ties"):
        FrechetPlanner(0.2, ties="best")
    with pytest.raises(ValueError, match="reference_quirk"):
        FactorPlanner(1.0, reference_quirk="yes")
    with pytest.raises(ValueError, match="plan"):
        exact_run(families.parity(3), mt.Schedule((1, 2)), FactorPlanner(1.0))
    with pytest.raises(ValueError, match="plan"):
        exact_run(families.parity(3), mt.Schedule((1, 2)), FrechetPlanner(0.1))


def test_exported():
    assert {"FactorPlanner", "FrechetPlanner"} <= set(mt.samplers.__all__)


# -- issue 30: the public count methods check their arguments (the engine calls _count) --------------
def _count_reference(rule, cs, m):
    """The counts from the rules' definitions, one row at a time: factor, the first failure of
    c_(n) >= 1 - f/(n+1) (n >= 2) with the reference quirk; Fréchet, the prefixes with
    G_n = sum_{j<=n} c_(j) - (n-1) - (1 - c_(n)) > delta (G_1 = +inf)."""
    out = []
    for row, mm in zip(cs, m):
        if isinstance(rule, FactorPlanner):
            k = 1
            while k < mm and row[k] >= 1 - rule.f / (k + 2) - 1e-12:
                k += 1
            if rule.reference_quirk and k == mm - 1:
                k = mm
        else:
            k = 1 + sum(1 for n in range(2, mm + 1) if sum(row[:n]) - (n - 1) - (1 - row[n - 1]) > rule.delta + 1e-12)
        out.append(min(k, mm))
    return out


def test_count_matches_the_definitions_and_refuses_bad_arguments():
    cs = np.array([[0.99, 0.97, 0.9, 0.2], [0.8, 0.8, 0.0, 0.0], [0.95, 0.6, 0.55, 0.5]])
    m = np.array([4, 2, 3])
    for rule in (FactorPlanner(1.0), FactorPlanner(0.5, reference_quirk=False), FrechetPlanner(0.25),
                 FrechetPlanner.from_factor(0.9)):
        assert rule.count(cs, m).tolist() == _count_reference(rule, cs, m)
        assert rule.count(cs, m[:, None]).tolist() == _count_reference(rule, cs, m)
        for kw, name in [({"sorted_conf": None}, "sorted_conf"), ({"sorted_conf": cs[0]}, "sorted_conf"),
                         ({"sorted_conf": cs + 1}, "sorted_conf"), ({"sorted_conf": cs[:, ::-1]}, "sorted_conf"),
                         ({"sorted_conf": "x"}, "sorted_conf"), ({"n_free": True}, "n_free"),
                         ({"n_free": None}, "n_free"), ({"n_free": m[:2]}, "n_free"), ({"n_free": m + 5}, "n_free"),
                         ({"n_free": m - 3}, "n_free"), ({"n_free": m * 0.5}, "n_free")]:
            args = {"sorted_conf": cs, "n_free": m, **kw}
            with pytest.raises(ValueError, match=f"^{name}: "):
                rule.count(**args)
