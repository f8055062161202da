"""Fast-dLLM Theorem 1 and Fast-dLLM++'s Fréchet statements (issue 28 items 1-2), against
references written here from the papers' text:

* Fast-dLLM (arXiv 2505.22618) §3.3 Theorem 1 and Appendix A (Step 3: the tightness law);
* Fast-dLLM++ (arXiv 2606.02955v2) eq. (5) L_n, U_n; Lemma A.1 (eq. 12); Theorem 4.1; Corollary
  4.2 (eqs. 7-8); Proposition 4.3 (eqs. 9, 30, 31); Corollary 4.4; Lemma 4.6 (eq. 11); Cor. 4.7.

The brute force enumerates states and candidate sets with dictionaries over tuples and computes
every quantity from its definition; it shares no code with mdmtheory.bounds.fastdllm.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mdmtheory as mt
from mdmtheory.bounds import (fastdllm_counterexample, fastdllm_theorem1, fdpp_theorem41, frechet_extremal,
                              frechet_robust, frechet_terms, kl_counterexample, statement_checks)
from mdmtheory.samplers import FactorPlanner, FrechetPlanner


# -- brute force from the definitions -----------------------------------------------------------
def brute_cases(table):
    """Yield (A, x_A, S, joint dict over x_S) for every state with p(x_A) > 0 and S in A^c."""
    d, K = table.ndim, table.shape[0]
    xs = list(itertools.product(range(K), repeat=d))
    for r in range(d):
        for A in itertools.combinations(range(d), r):
            free = [j for j in range(d) if j not in A]
            for xa in itertools.product(range(K), repeat=r):
                rows = [x for x in xs if all(x[a] == v for a, v in zip(A, xa))]
                tot = sum(table[x] for x in rows)
                if tot <= 0:
                    continue
                for n in range(1, len(free) + 1):
                    for S in itertools.combinations(free, n):
                        joint = {}
                        for x in rows:
                            z = tuple(x[j] for j in S)
                            joint[z] = joint.get(z, 0.0) + table[x] / tot
                        yield A, xa, S, joint


def brute_measures(joint, n, K):
    zs = list(itertools.product(range(K), repeat=n))
    P = {z: joint.get(z, 0.0) for z in zs}
    marg = [[sum(P[z] for z in zs if z[j] == v) for v in range(K)] for j in range(n)]
    c = [max(m) for m in marg]
    xstar = tuple(m.index(max(m)) for m in marg)
    Q = {z: math.prod(marg[j][z[j]] for j in range(n)) for z in zs}
    eps = max(1 - cj for cj in c)
    tv = 0.5 * sum(abs(P[z] - Q[z]) for z in zs)
    l2 = math.sqrt(sum((P[z] - Q[z]) ** 2 for z in zs))
    kl = sum(P[z] * math.log(P[z] / Q[z]) for z in zs if P[z] > 0)
    others = [P[z] for z in zs if z != xstar]
    gap = P[xstar] - (max(others) if others else -math.inf)
    qothers = [Q[z] for z in zs if z != xstar]
    dq = Q[xstar] - (max(qothers) if qothers else -math.inf)
    cs = sorted(c, reverse=True)
    L = max(0.0, sum(cs) - (n - 1))
    U = 1 - cs[-1]
    return dict(eps=eps, epssum=sum(1 - cj for cj in c), tv=tv, l2=l2, kl=kl, gap=gap, pstar=P[xstar], dq=dq, L=L, U=U)


def hb(e):
    return 0.0 if e <= 0 or e >= 1 else -e * math.log(e) - (1 - e) * math.log(1 - e)


def brute_checks(table):
    """For each statement: (cases, violations, worst ratio) from the definitions."""
    K = table.shape[0]
    out = {k: [0, 0, -math.inf] for k in ("tv", "tv_sum", "kl", "lemma_a1", "greedy", "thm41", "lemma46", "cor47")}

    def upd(key, bad, ratio=None):
        out[key][0] += 1
        out[key][1] += int(bad)
        if ratio is not None:
            out[key][2] = max(out[key][2], ratio)

    for A, xa, S, joint in brute_cases(table):
        n = len(S)
        m = brute_measures(joint, n, K)
        eps = m["eps"]
        if (n + 1) * eps < 1 - 1e-12:
            upd("greedy", not (m["gap"] > 0 and m["dq"] > 0))  # arg max p = arg max q = x*
        if n >= 2:
            b = (3 * n - 1) / 2 * eps
            upd("tv", m["tv"] > b + 1e-12, m["tv"] / b if b > 1e-9 else None)
            b = m["epssum"]  # derived here: TV <= sum_j (1 - c_j)
            upd("tv_sum", m["tv"] > b + 1e-12, m["tv"] / b if b > 1e-9 else None)
            if (n + 1) * eps <= 1 + 1e-12:
                b = (n - 1) * (hb(eps) + eps * math.log(K - 1))
                upd("kl", m["kl"] > b + 1e-12, m["kl"] / b if b > 1e-9 else None)
            upd("lemma_a1", m["L"] > m["pstar"] + 1e-12, m["L"] / m["pstar"] if m["pstar"] > 1e-9 else None)
        if m["L"] > m["U"] + 1e-12:
            upd("thm41", not m["gap"] > 0)
        if m["dq"] > 1e-12 and m["tv"] < m["dq"] / 2 - 1e-12:
            upd("lemma46", not m["gap"] > 0)
        if m["dq"] > 1e-12 and m["kl"] < m["dq"] ** 2 / 2 - 1e-12:
            upd("cor47", not m["gap"] > 0)
    return out


NAMES = {"fastdllm_greedy": "greedy", "fastdllm_tv": "tv", "tv_sum_eps": "tv_sum", "fastdllm_kl": "kl", "fdpp_lemma_a1": "lemma_a1",
         "fdpp_theorem41": "thm41", "fdpp_lemma46": "lemma46", "fdpp_corollary47": "cor47"}


@pytest.mark.parametrize("law", [
    lambda: mt.families.dirichlet(4, 2, alpha=0.3, seed=3),
    lambda: mt.families.dirichlet(3, 3, alpha=0.25, seed=7),
    lambda: mt.families.markov_chain([[0.95, 0.05], [0.1, 0.9]], 4),
], ids=["dirichlet4", "dirichlet3_K3", "markov4"])
def test_checks_match_the_brute_force(law):
    p = law()
    ref = brute_checks(p.table)
    got = {c.name: c for c in statement_checks(p)}
    for name, key in NAMES.items():
        cases, bad, ratio = ref[key]
        c = got[name]
        assert (c.cases, c.violations) == (cases, bad), name
        assert c.holds
        if c.kind != "implication":
            assert c.ratio == pytest.approx(ratio, rel=1e-9), name
            assert c.ratio <= 1 + 1e-12
    assert ref["greedy"][0] > 0 and ref["thm41"][0] >= ref["greedy"][0]  # Fréchet certifies at least as much


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 4), st.integers(2, 3), st.floats(0.05, 2.0), st.integers(0, 10**6))
def test_every_statement_holds_on_random_laws(d, K, alpha, seed):
    if K ** d > 81:
        d = 3
    p = mt.families.dirichlet(d, K, alpha=alpha, seed=seed)
    for c in statement_checks(p):
        assert c.holds, (c.name, c.worst, c.exact, c.bound)
        if c.kind == "upper":
            assert not c.ratio > 1 + 1e-9
        if c.kind == "lower":
            assert not c.ratio > 1 + 1e-9


def test_theorem1_greedy_case_certified_sets_agree():
    # a near-deterministic chain: many certified sets; on each the joint mode is the marginal arg max
    p = mt.families.markov_chain([[0.97, 0.03], [0.05, 0.95]], 5)
    g, tv, l2, kl = fastdllm_theorem1(p)
    assert g.cases > 100 and g.violations == 0 and g.ratio > 0
    assert tv.holds and l2.holds and kl.holds


# -- tightness of the 1/(n+1) condition (Appendix A, Step 3) ------------------------------------------
@pytest.mark.parametrize("n", [2, 3, 4, 5])
@pytest.mark.parametrize("excess", [1e-3, 0.05, 0.2])
def test_the_papers_construction_breaks_greedy_agreement_beyond_one_over_n_plus_one(n, excess):
    eps = 1 / (n + 1) + excess
    p = fastdllm_counterexample(n, eps)
    t = p.table
    zs = list(itertools.product((0, 1), repeat=n))
    marg0 = [sum(t[z] for z in zs if z[j] == 0) for j in range(n)]
    assert all(m > 1 - eps for m in marg0)  # the high-confidence hypothesis, x* = 0
    assert max(zs, key=lambda z: t[z]) != (0,) * n and t[(0,) * n] < max(t[z] for z in zs if z != (0,) * n)
    q = {z: math.prod(marg0[j] if z[j] == 0 else 1 - marg0[j] for j in range(n)) for z in zs}
    assert max(zs, key=q.get) == (0,) * n  # argmax q = x*
    assert (n + 1) * (1 - min(marg0)) > 1  # outside Part 1's hypothesis, as it must be


@pytest.mark.xfail(strict=True, reason="Fast-dLLM Theorem 1's tightness claim at n = 1: there p = q, so the arg "
                                       "maxes always agree (the paper's Step 3 law has x* = 0 not the arg max of q)")
def test_tightness_claim_at_n_equal_one():
    p = fastdllm_counterexample(1, 0.7)
    q = p.table  # n = 1: the product of marginals is the joint itself
    assert int(np.argmax(p.table)) != int(np.argmax(q))


@pytest.mark.xfail(strict=True, reason="Fast-dLLM Theorem 1's KL bound read for any eps > 0 (the statement says "
                                       "'small eps'): two equal uniform bits, KL = ln 2, every marginal > 1 - eps for "
                                       "eps = 0.99, bound (n-1)(H_b(0.99) + 0.99 ln 1) = 0.056")
def test_kl_bound_for_any_admissible_eps():
    p = kl_counterexample(2)
    t = p.table
    kl = sum(t[a, b] * math.log(t[a, b] / (t[a].sum() * t[:, b].sum())) for a in range(2) for b in range(2) if t[a, b] > 0)
    eps = 0.99
    assert min(t.sum(axis=1).max(), t.sum(axis=0).max()) > 1 - eps
    assert kl < (2 - 1) * (hb(eps) + eps * math.log(2 - 1))


def test_kl_counterexample_is_outside_the_small_eps_reading():
    p = kl_counterexample(3)
    kl = [c for c in statement_checks(p, names=("fastdllm_kl",))][0]
    assert kl.cases == 0  # (n+1) eps* = 3 * 2/3 > 1: no pair in the hypothesis


# -- Fréchet: Lemma A.1 is attained, Theorem 4.1's condition cannot be weakened -----------------------
@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6))
def test_frechet_extremal_law_attains_lemma_a1(conf):
    p = frechet_extremal(conf)
    n = len(conf)
    t = p.table
    zs = list(itertools.product((0, 1), repeat=n))
    for j in range(n):
        assert sum(t[z] for z in zs if z[j] == 0) == pytest.approx(conf[j], abs=1e-12)
    L = max(0.0, sum(conf) - (n - 1))
    assert t[(0,) * n] == pytest.approx(L, abs=1e-12)
    if sum(1 - c for c in conf) <= 1:  # disjoint errors: the best competitor has exactly U_n
        assert max(t[z] for z in zs if z != (0,) * n) == pytest.approx(1 - min(conf), abs=1e-12) or n == 1


def test_theorem41_condition_is_necessary_on_the_extremal_law():
    # L_n <= U_n: the extremal law's x* = 0 is not the unique mode
    for conf in ([0.8, 0.7], [0.9, 0.9, 0.8], [0.75, 0.75, 0.75], [0.95, 0.9, 0.85, 0.8]):
        n = len(conf)
        L, U = max(0.0, sum(conf) - (n - 1)), 1 - min(conf)
        t = frechet_extremal(conf).table
        best_other = max(v for z, v in np.ndenumerate(t) if z != (0,) * n)
        assert (t[(0,) * n] > best_other) == (L > U)


# -- the profile statements ------------------------------------------------------------------------------
profiles = st.lists(st.floats(0.0, 1.0), min_size=1, max_size=8)


@settings(max_examples=80, deadline=None)
@given(profiles, st.floats(0.0, 1.0))
def test_proposition_43_and_corollaries_42_44(conf, delta):
    terms = frechet_terms(conf)
    cs = sorted(conf, reverse=True)
    for n in range(1, len(cs) + 1):
        S = sum(cs[:n])
        L = max(0.0, S - (n - 1))
        U = 1 - cs[n - 1]
        F = (n + 1) * cs[n - 1] - n
        B = sum(cs[j] - cs[n - 1] for j in range(n - 1))
        assert terms["L"][n - 1] == pytest.approx(L, abs=1e-12)
        assert terms["F"][n - 1] == pytest.approx(F, abs=1e-12)
        assert terms["B"][n - 1] == pytest.approx(B, abs=1e-12)
        G = L - U
        assert B >= 0
        if L > 0:  # Proposition 4.3, eq. (9)
            assert G == pytest.approx(F + B, abs=1e-12)
            assert (B == 0) == all(c == cs[n - 1] for c in cs[:n])
        f = 1 - delta
        if (n + 1) * (1 - cs[n - 1]) < f - 1e-12:  # Corollary 4.4 (i): factor accepts => Fréchet accepts
            assert G > delta
        if L > 0 and abs(F - delta) > 1e-12 and abs(F + B - delta) > 1e-12:  # (ii): strict separation
            assert (F <= delta < F + B) == ((G > delta) and not (n + 1) * (1 - cs[n - 1]) < f)
        if L > 0 and abs(G - delta) > 1e-12:  # Remark 4.5, eq. (10): factor with f_eff = 1 - delta + B_n
            assert (G > delta) == ((n + 1) * (1 - cs[n - 1]) < 1 - delta + B)
        if all(c == cs[0] for c in cs[:n]) and abs(G - delta) > 1e-12:  # Corollary 4.2, eq. (7)
            assert (G > delta) == (cs[0] > 1 - (1 - delta) / (n + 1))


def test_corollary_44_dominance_holds_for_the_stated_factor_rule_not_the_coded_one():
    rng = np.random.default_rng(0)
    rows = -np.sort(-rng.uniform(0.3, 1.0, size=(4000, 6)), axis=1)
    for m in range(1, 7):
        r = rows[:, :m]
        mm = np.full(len(r), m)
        for delta in (0.0, 0.25, 0.5):
            fr = FrechetPlanner(delta).count(r, mm)
            assert np.all(FactorPlanner(1 - delta, reference_quirk=False).count(r, mm) <= fr)
            coded = FactorPlanner(1 - delta).count(r, mm)
            if m == 2:  # the code's last-position quirk commits both where Fréchet takes one
                assert np.any(coded > fr)


def test_planner_restricted_checks():
    p = mt.families.dirichlet(5, 2, alpha=0.3, seed=2)
    # the stated factor rule with f <= 1 commits only sets inside Part 1's hypothesis (n >= 2, up to the boundary)
    g = statement_checks(p, planner=FactorPlanner(0.9, ties="lowest", reference_quirk=False), names=("fastdllm_greedy",))[0]
    allsets = statement_checks(p, planner=FactorPlanner(0.9, ties="lowest", reference_quirk=False), names=("fastdllm_tv",))[0]
    assert g.violations == 0 and g.cases >= allsets.cases
    for c in fdpp_theorem41(p, planner=FrechetPlanner(0.0, ties="lowest")):
        assert c.holds


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="p"):
        statement_checks(np.ones((2, 2)) / 4)
    with pytest.raises(ValueError, match="names"):
        statement_checks(mt.families.parity(3), names=("nope",))
    with pytest.raises(ValueError, match="eps"):
        fastdllm_counterexample(3, 0.2)
    with pytest.raises(ValueError, match="n"):
        fastdllm_counterexample(0, 0.9)
    with pytest.raises(ValueError, match="confidences"):
        frechet_terms([1.2])
    with pytest.raises(ValueError, match="confidences"):
        frechet_extremal([])
    with pytest.raises(ValueError, match="max_n"):
        statement_checks(mt.families.parity(3), max_n=0)
    with pytest.raises(ValueError, match="planner"):
        statement_checks(mt.families.parity(3), planner="random")


def test_compare_rows_for_the_factor_and_frechet_rules():
    p = mt.families.dirichlet(4, 2, alpha=0.3, seed=3)
    for planner in (FactorPlanner(0.75, ties="lowest"), FrechetPlanner(0.25, ties="lowest")):
        cmp = mt.compare(p, None, planner)
        checks = {c.name: c for c in statement_checks(p, planner=planner)}
        for name in ("fastdllm_tv", "fastdllm_kl", "fdpp_lemma_a1"):
            row, c = cmp.row(name), checks[name]
            assert (row.value, row.exact, row.holds, row.status) == (c.bound, c.exact, True, c.status)
            # the exact column is the definition's value at the reported worst case
            A, xa, S = c.worst
            joint = next(j for a, x, s, j in brute_cases(p.table) if (a, x, s) == (A, xa, S))
            m = brute_measures(joint, len(S), p.K)
            assert row.exact == pytest.approx({"fastdllm_tv": m["tv"], "fastdllm_kl": m["kl"],
                                               "fdpp_lemma_a1": m["pstar"]}[name], rel=1e-9, abs=1e-15)
        assert cmp.row("fdpp_theorem41").kind == "implication" and cmp.all_hold
        assert cmp.kl == pytest.approx(mt.kl(p, mt.sampler_law(p, None, planner)), rel=1e-12)
    with pytest.raises(ValueError, match="plan"):
        mt.compare(p, None, "random")
    assert "fastdllm_tv" not in mt.compare(p, mt.Schedule((2, 2))).names


@pytest.mark.parametrize("n", [2, 3, 5, 6])
def test_tightness_laws(n):
    """The laws that reach the sup of each ratio, computed from the definitions: X_1 = ... = X_n
    with P(X != x*) = e. TV/((3n-1)/2 e) -> 2n/(3n-1) and TV/(n e) -> 1 as e -> 0; with uniform
    errors over K letters KL = (n-1)(H_b(e) + e ln(K-1)) exactly (the KL bound is attained)."""
    e = 1e-5
    t = np.zeros((2,) * n)
    t[(0,) * n], t[(1,) * n] = 1 - e, e
    zs = list(itertools.product((0, 1), repeat=n))
    q = {z: math.prod((1 - e) if v == 0 else e for v in z) for z in zs}
    tv = 0.5 * sum(abs(t[z] - q[z]) for z in zs)
    assert tv / ((3 * n - 1) / 2 * e) == pytest.approx(2 * n / (3 * n - 1), rel=1e-4)
    assert tv / (n * e) == pytest.approx(1.0, rel=1e-4) and tv <= n * e
    tvc = {c.name: c for c in statement_checks(mt.Joint(t), names=("fastdllm_tv", "tv_sum_eps"))}
    # over every subset of the law the worst is a pair: 2k/(3k-1) falls with k
    assert tvc["fastdllm_tv"].ratio == pytest.approx(4 / 5, rel=1e-4)
    assert tvc["tv_sum_eps"].ratio == pytest.approx(1.0, rel=1e-4)
    for K in (2, 3, 4):
        if K ** n > 1000:
            continue
        eps = 1 / (n + 1)
        w = [1 - eps] + [eps / (K - 1)] * (K - 1)
        p = mt.families.repeated(n, K, weights=w)
        kl = (n - 1) * -sum(x * math.log(x) for x in w)  # TC of the repeated symbol
        bound = (n - 1) * (hb(eps) + eps * math.log(K - 1))
        assert kl == pytest.approx(bound, rel=1e-12)
        c = statement_checks(p, names=("fastdllm_kl",), max_n=n)[0]
        assert c.holds and c.ratio == pytest.approx(1.0, rel=1e-9)


# -- the stored benchmark runs (slow) --------------------------------------------------------------------
def _bench():
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "tightness_fastdllm.py"
    spec = importlib.util.spec_from_file_location("tightness_fastdllm", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _stored(name):
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "tightness" / name
    lines = [ln.split("\t") for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]
    return [dict(zip(lines[0], ln)) for ln in lines[1:]]


@pytest.mark.slow
def test_tightness_search_reaches_the_stored_ratios_and_no_more_than_the_sups():
    B = _bench()
    stored = {(r["target"], int(r["d"]), int(r["K"])): float(r["best_ratio"]) for r in _stored("summary_fastdllm.tsv")}
    assert {(d, K) for _, d, K in stored} == {(d, K) for d in range(3, 9) for K in (2, 3, 4)}
    for (name, d, K), v in stored.items():  # no search went past the sup the tests derive
        sup = 2 * d / (3 * d - 1) if name == "fastdllm_tv" else 1.0
        assert v <= sup + 1e-6, (name, d, K, v)
        assert v >= sup - 1e-5, (name, d, K, v)
    for name, d, K, kind, adam, climb, best in B.search(1, 40, 0, 6, 30, pairs=[(3, 2), (4, 3)]):
        sup = 2 * d / (3 * d - 1) if name == "fastdllm_tv" else 1.0
        assert stored[name, d, K] - 1e-3 <= best <= sup + 1e-6, (name, d, K, best)


def test_the_stored_rule_table_is_the_exact_kl():
    B = _bench()
    rows = {(r["family"], int(r["d"]), r["rule"]): (float(r["kl"]), float(r["expected_steps"]))
            for r in _stored("rules_fastdllm.tsv")}
    for fam, make in B.FAMILIES.items():
        for d in range(3, 7):
            p = make(d)
            for rname, pl in B.RULES.items():
                run = mt.exact_run(p, None, pl)
                steps = float(np.dot(np.arange(len(run.step_counts)), run.step_counts))
                kl, st = rows[fam, d, rname]
                assert mt.kl(p, run.law) == pytest.approx(kl, abs=1e-6) and steps == pytest.approx(st, abs=1e-4)


# -- Appendix C: calibration-robust certificate ----------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=7), st.floats(0.0, 0.3))
def test_corollary_c2_penalty(conf, eta):
    from mdmtheory.bounds import frechet_robust

    n = len(conf)
    r = frechet_robust(conf, eta)
    lower = [max(0.0, c - eta) for c in conf]
    assert r["L"] == pytest.approx(max(0.0, sum(lower) - (n - 1)), abs=1e-12)
    assert r["U"] == pytest.approx(1 - min(lower), abs=1e-12)
    G_hat = max(0.0, sum(conf) - (n - 1)) - (1 - min(conf))
    if min(conf) >= eta and sum(lower) - (n - 1) > 0:  # eq. (52): no clipping, robust bound active
        assert r["G"] == pytest.approx(G_hat - (n + 1) * eta, abs=1e-12)


def test_proposition_c1_on_overconfident_reports():
    """True law p, reported confidences c + u with 0 <= u <= eta (overconfidence within the allowance):
    wherever the robust certificate holds on a set, its arg max tuple is the unique mode of p_S."""
    from mdmtheory.bounds import frechet_robust

    rng = np.random.default_rng(4)
    p = mt.families.markov_chain([[0.95, 0.05], [0.08, 0.92]], 4)
    certified = 0
    for A, xa, S, joint in brute_cases(p.table):
        n = len(S)
        zs = list(itertools.product((0, 1), repeat=n))
        marg = [[sum(joint.get(z, 0.0) for z in zs if z[j] == v) for v in (0, 1)] for j in range(n)]
        c = np.array([max(m) for m in marg])
        eta = 0.05
        reported = np.minimum(1.0, c + rng.uniform(0, eta, n))
        if frechet_robust(reported, eta)["G"] > 1e-12:
            certified += 1
            xstar = tuple(int(np.argmax(m)) for m in marg)
            assert all(joint.get(xstar, 0.0) > joint.get(z, 0.0) for z in zs if z != xstar)
    assert certified > 20


# -- issue 30: the Fréchet quantities and statement_checks refuse hostile values by name --------------
@pytest.mark.parametrize("bad", [None, "0.9", True, 10**400, [0.9, "x"], [[0.9], [0.8, 0.7]], [], [0.5, 1.5],
                                 [0.5, float("nan")], {"a": 1}])
def test_frechet_functions_refuse_bad_confidences(bad):
    """np.asarray(..., float64) took '0.9' and True as numbers and raised OverflowError for 10**400."""
    for fn in (frechet_terms, frechet_extremal, lambda c: frechet_robust(c, 0.0)):
        with pytest.raises(ValueError, match=r"^confidences: "):
            fn(bad)


def test_frechet_extremal_size_and_robust_eta():
    """The extremal law is a 2^n table: n > 24 refused before work; eta one per confidence or a scalar."""
    with pytest.raises(ValueError, match=r"^confidences: 25 positions"):
        frechet_extremal([0.99] * 25)
    c = [0.9, 0.8, 0.7]
    lower = np.maximum(0.0, np.array(c) - 0.1)  # Appendix C: the conservative confidences
    np.testing.assert_allclose(frechet_robust(c, 0.1)["lower"], lower)
    np.testing.assert_allclose(frechet_robust(c, [0.1] * len(c))["lower"], lower)  # one per confidence
    with pytest.raises(ValueError, match="^eta: "):  # issue 38: a one-element list is not the scalar
        frechet_robust(c, [0.1])
    np.testing.assert_allclose(frechet_robust(c, [0.1, 0.1, 0.1])["lower"], lower)
    for eta in [True, None, "0.1", -0.1, [0.1, 0.1], [[0.1]], float("inf")]:
        with pytest.raises(ValueError, match=r"^eta: "):
            frechet_robust(c, eta)


@pytest.mark.parametrize("names", [5, 10**400, float("nan"), "kl", {"a": 1}, [{"a": 1}], [None]])
def test_statement_checks_refuses_bad_names(names):
    """names=5 raised "TypeError: 'int' object is not iterable"."""
    with pytest.raises(ValueError, match=r"^names: "):
        statement_checks(mt.families.repeated(2), names=names)
