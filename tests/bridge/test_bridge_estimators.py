"""Every bridge estimator on ExactModel against exact values (z-scores, fixed seeds).

References: brute-force enumeration (bridge_reference.py) for the cross-entropy profile of a
mismatched model and the learning error; the package's exact engine (mt.sampler_law + mt.kl,
mt.path_kl, mt.information.expected_dyadic_estimate) where the task asks for agreement with it.
"""

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.laws import MarkovChainLaw, as_oracle

torch = pytest.importorskip("torch")
from mdmtheory import bridge  # noqa: E402

from bridge_reference import brute_profile, cross_entropy_profile, path_cross_entropy, z  # noqa: E402

torch.set_num_threads(1)


def _markov7():
    P = np.array([[0.85, 0.15], [0.3, 0.7]])
    return MarkovChainLaw(P, 7)


LAWS = {
    "dirichlet_d6_K2": lambda: mt.families.dirichlet(6, 2, alpha=0.7, seed=3),
    "dirichlet_d5_K3": lambda: mt.families.dirichlet(5, 3, seed=4),
    "markov_d4_K4": lambda: mt.families.markov_chain(np.random.default_rng(5).dirichlet(np.ones(4), size=4), 4),
    "markov_oracle_d7_K2": _markov7,
}


def _joint(law):
    return law if isinstance(law, mt.Joint) else law.to_joint()


def _samples(law, n, seed=0):
    return as_oracle(law).sample(n, np.random.default_rng(seed))


def _mismatched(p: mt.Joint, seed=11) -> mt.Joint:
    """A full-support model law close to p (so every conditional of it is defined)."""
    other = mt.families.dirichlet(p.d, p.K, seed=seed).table
    return mt.Joint(0.7 * p.table + 0.3 * other)


@pytest.mark.parametrize("name", sorted(LAWS))
def test_profile_of_exact_model_is_the_information_profile(name):
    law = LAWS[name]()
    p = _joint(law)
    npl = 300
    est = bridge.estimate_profile(bridge.ExactModel(law), _samples(law, p.d * npl), n_per_level=npl, seed=1)
    phi = brute_profile(p.table)
    zs = [z(v, e, s) for v, e, s in zip(est.values, phi, est.stderr)]
    assert max(abs(x) for x in zs) < 5, zs
    assert est.forwards == p.d * npl
    assert np.array_equal(est.levels, np.arange(p.d)) and np.all(est.counts == npl)


@pytest.mark.parametrize("name", ["dirichlet_d5_K3", "markov_d4_K4"])
def test_profile_of_mismatched_model_is_the_cross_entropy(name):
    p = _joint(LAWS[name]())
    q = _mismatched(p)
    est = bridge.estimate_profile(bridge.ExactModel(q), _samples(p, 2000), levels=[0, 2, 3], n_per_level=400, seed=2)
    c = cross_entropy_profile(p.table, q.table)
    phi = brute_profile(p.table)
    assert np.all(c[[0, 2, 3]] > phi[[0, 2, 3]])  # a mismatched model pays a learning error
    for i, v, s in zip(est.levels, est.values, est.stderr):
        assert abs(z(v, c[i], s)) < 5


def test_profile_does_not_depend_on_batching():
    p = _joint(LAWS["dirichlet_d5_K3"]())
    xs = _samples(p, 500)
    a = bridge.estimate_profile(bridge.MaskedModel(bridge.ExactModel(p), mask_id=3, max_batch=7), xs, n_per_level=40, seed=3)
    b = bridge.estimate_profile(bridge.MaskedModel(bridge.ExactModel(p), mask_id=3, max_batch=256), xs, n_per_level=40, seed=3)
    np.testing.assert_allclose(a.values, b.values, rtol=1e-12, atol=1e-12)
    c = bridge.estimate_profile(bridge.ExactModel(p), xs, n_per_level=40, seed=4)
    assert not np.allclose(a.values[1:], c.values[1:])  # the seed matters


@pytest.mark.parametrize("name,sizes", [("dirichlet_d6_K2", (3, 2, 1)), ("markov_oracle_d7_K2", (1, 2, 4)), ("dirichlet_d5_K3", (5,))])
def test_path_cross_entropy_of_exact_model_is_path_kl_plus_entropy(name, sizes):
    law = LAWS[name]()
    p = _joint(law)
    sched = mt.Schedule(sizes)
    r = bridge.estimate_path_cross_entropy(bridge.ExactModel(law), _samples(law, 1500), sched, n=1500, seed=5)
    exact = mt.path_kl(p, sched) + mt.entropy(p)
    assert abs(z(r.value, exact, r.stderr)) < 5
    assert r.forwards == 1500 * len(sizes)
    assert r.step_values.shape == (len(sizes),)
    assert r.ci()[0] < r.value < r.ci()[1]


def test_compare_plans_paired_differences_on_a_mismatched_model():
    p = _joint(LAWS["dirichlet_d6_K2"]())
    q = _mismatched(p)
    c = cross_entropy_profile(p.table, q.table)
    plans = [mt.Schedule((2, 2, 2)), mt.Schedule((1, 2, 3)), mt.Schedule((3, 2, 1))]
    cmp = bridge.compare_plans(bridge.ExactModel(q), _samples(p, 1500), plans, n=1500, seed=6)
    exact = np.array([path_cross_entropy(c, s.sizes) for s in plans])
    for a in range(3):
        assert abs(z(cmp.values[a], exact[a], cmp.stderr[a])) < 5
        for b in range(3):
            if a != b:
                assert abs(z(cmp.difference[a, b], exact[a] - exact[b], cmp.difference_stderr[a, b])) < 5
                # pairing: the difference is known better than from two independent estimates
                assert cmp.difference_stderr[a, b] < np.hypot(cmp.stderr[a], cmp.stderr[b])
    assert cmp.forwards == 1500 * len(cmp.levels)  # shared levels are evaluated once per draw
    assert cmp.best == int(np.argmin(exact))


PLANNERS = [
    ("random", (2, 2, 2)),
    ("confidence", (2, 2, 2)),
    ("margin", (3, 2, 1)),
    ("entropy", (1, 3, 2)),
    ("left_to_right", (2, 2, 2)),
    (mt.samplers.SemiAutoregressivePlanner(block_length=3, steps_per_block=2), None),
    (mt.samplers.ThresholdPlanner(tau=0.6), None),
    (mt.samplers.EntropyBudgetPlanner(gamma=0.4), None),
]


@pytest.mark.parametrize("planner,sizes", PLANNERS, ids=lambda v: getattr(v, "name", str(v)))
def test_factorization_error_agrees_with_the_exact_engine(planner, sizes):
    p = mt.families.dirichlet(6, 2, alpha=0.5, seed=8)
    plan = None if sizes is None else mt.Schedule(sizes)
    est = bridge.estimate_factorization_error(bridge.ExactModel(p), _samples(p, 1200), plan, planner, seed=9)
    if planner == "random":
        exact = mt.path_kl(p, plan)
        assert est.kind == "path_kl"
    else:
        exact = mt.kl(p, mt.sampler_law(p, plan, planner))
        # ties="random" (the scored planners' default) draws split ties: the estimate is then labelled a path
        # KL, which on this tie-free law (exact_run(...).tie_mass == 0) is the KL
        random_ties = getattr(mt.samplers.resolve_planner(planner), "ties", None) == "random"
        assert est.kind == ("path_kl" if random_ties else "kl")
        if random_ties:
            assert mt.exact_run(p, plan, planner).tie_mass == 0
    assert abs(z(est.value, exact, est.stderr)) < 5, (est.value, exact, est.stderr)
    assert est.forwards == 1200 * p.d  # one forward per revealed token along the path
    assert est.step_means.sum() == pytest.approx(est.value, rel=1e-9, abs=1e-12)


def test_factorization_error_on_a_k3_law_and_a_markov_oracle():
    p = LAWS["dirichlet_d5_K3"]()
    est = bridge.estimate_factorization_error(bridge.ExactModel(p), _samples(p, 1500), mt.Schedule((2, 2, 1)), "confidence", seed=10)
    assert abs(z(est.value, mt.kl(p, mt.sampler_law(p, mt.Schedule((2, 2, 1)), "confidence")), est.stderr)) < 5
    law = LAWS["markov_oracle_d7_K2"]()
    sched = mt.Schedule((3, 2, 2))
    est = bridge.estimate_factorization_error(bridge.ExactModel(law), _samples(law, 1500), sched, "random", seed=10)
    assert abs(z(est.value, mt.path_kl(law.to_joint(), sched), est.stderr)) < 5


@pytest.mark.parametrize("name", ["dirichlet_d5_K3", "markov_d4_K4"])
def test_learning_error_is_cross_entropy_minus_information_profile(name):
    p = _joint(LAWS[name]())
    q = _mismatched(p, seed=12)
    est = bridge.estimate_learning_error(bridge.ExactModel(q), p, n_per_level=300, seed=13)
    eps = cross_entropy_profile(p.table, q.table) - brute_profile(p.table)
    for v, e, s in zip(est.values, eps, est.stderr):
        assert abs(z(v, e, s)) < 5
    assert est.quantity == "learning_error"
    exact_model = bridge.estimate_learning_error(bridge.ExactModel(p), p, levels=[1, 2], n_per_level=20, seed=0)
    np.testing.assert_allclose(exact_model.values, 0.0, atol=1e-12)


@pytest.mark.parametrize("weights", ["corrected", "stated"])
def test_dyadic_estimate_agrees_with_the_exact_expectation(weights):
    p = mt.families.dirichlet(4, 3, alpha=0.6, seed=14)
    est = bridge.estimate_dyadic(bridge.ExactModel(p), _samples(p, 800), 0.2, 0.75, weights=weights, seed=15)
    exact = mt.information.expected_dyadic_estimate(p, 0.2, 0.75, weights=weights)
    assert abs(z(est.value, exact, est.stderr)) < 5
    assert est.kind == weights and est.grid[0] == 0.2 and est.grid[-1] == 0.75
    # cost as documented: per draw and grid time, 1 forward + 1 per revealed position
    from mdmtheory.bridge.estimators import _DYADIC, uniforms

    U = uniforms(15, _DYADIC, np.arange(800), 4)
    assert est.forwards == sum(800 + int((U <= v).sum()) for v in est.grid)


def test_dyadic_estimate_refuses_an_infinite_kl():
    def f(ids):  # outcome 1 impossible while nothing is revealed, possible afterwards
        out = torch.zeros(ids.shape + (3,), dtype=torch.float64)
        out[..., 2] = -torch.inf  # the mask column
        out[(ids == 2).all(dim=1), :, 1] = -torch.inf
        return out

    m = bridge.MaskedModel(f, mask_id=2, vocab=[0, 1])
    with pytest.raises(ValueError, match=r"^model: a conditional gives probability 0 where a later one does not"):
        bridge.estimate_dyadic(m, np.zeros((50, 4), dtype=int), 0.2, 0.75, seed=0)


def test_optimal_schedule_estimate_finds_the_exact_optimum():
    p = mt.families.dirichlet(6, 2, alpha=0.5, seed=16)
    est = bridge.estimate_profile(bridge.ExactModel(p), _samples(p, 6000), n_per_level=1000, seed=17)
    res = bridge.optimal_schedule_estimate(est, 3, n_resamples=100, seed=0)
    phi = brute_profile(p.table)
    exact_best = mt.optimal_schedule(mt.Profile(phi), 3)
    # the estimated optimum is optimal for the exact profile, or within noise of it
    exact_value = path_cross_entropy(phi, res.schedule.sizes)
    assert exact_value - path_cross_entropy(phi, exact_best.sizes) < 5 * res.stderr
    assert abs(z(res.value, exact_value, res.stderr)) < 5
    assert 0 < res.stability <= 1 and sum(res.alternatives.values()) == 100
    assert res.ci[0] < res.value < res.ci[1]


def _coverage(repeats: int, n_per_level: int) -> float:
    p = mt.families.dirichlet(4, 2, seed=18)
    phi = brute_profile(p.table)
    m = bridge.ExactModel(p)
    hits = total = 0
    for r in range(repeats):
        xs = _samples(p, 2 * n_per_level, seed=100 + r)
        est = bridge.estimate_profile(m, xs, levels=[1, 2], n_per_level=n_per_level, seed=r)
        lo, hi = est.ci(0.9)
        hits += int(np.sum((lo <= phi[[1, 2]]) & (phi[[1, 2]] <= hi)))
        total += 2
    return hits / total


def test_confidence_intervals_cover():
    # 60 intervals at 90%: P(coverage < 0.75) ~ 1e-4 for correct intervals
    assert _coverage(30, 60) >= 0.75


@pytest.mark.slow
def test_confidence_intervals_cover_slow():
    cov = _coverage(300, 200)
    assert abs(cov - 0.9) < 0.04


# -- issue 17, item 12: sizes with a documented maximum, checked before work ------------------------
def test_sizes_beyond_the_documented_maxima_are_refused_before_work():
    import time

    from mdmtheory.bridge._checks import MAX_DRAWS, MAX_RESAMPLES

    p = mt.families.dirichlet(3, 2, seed=0)
    xs = np.asarray(as_oracle(p).sample(5, np.random.default_rng(0)), dtype=np.int64)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=rf"^n_per_level: .*at most {MAX_DRAWS} draws in all"):  # formerly MemoryError
        bridge.estimate_profile(bridge.ExactModel(p), xs, n_per_level=10**12)
    with pytest.raises(ValueError, match=r"^n_per_level: "):
        bridge.estimate_learning_error(bridge.ExactModel(p), p, n_per_level=10**12)
    with pytest.raises(ValueError, match=r"^n: "):
        bridge.compare_plans(bridge.ExactModel(p), xs, [[1, 2], [3]], n=MAX_DRAWS)  # 2 levels x n > MAX_DRAWS
    est = bridge.estimate_profile(bridge.ExactModel(p), xs, n_per_level=3)
    with pytest.raises(ValueError, match=rf"^n_resamples: expected an integer in 1\.\.{MAX_RESAMPLES}"):  # formerly a hang
        bridge.optimal_schedule_estimate(est, 2, n_resamples=10**12)
    with pytest.raises(ValueError, match=r"^distributed: expected None \(auto\), True or False"):
        bridge.estimate_profile(bridge.ExactModel(p), xs, n_per_level=2, distributed=np.array([1, 0]))
    with pytest.raises(ValueError, match=r"^weights: expected one of"):  # formerly numpy's ambiguous truth value
        bridge.estimate_dyadic(bridge.ExactModel(p), xs, 0.1, 0.9, weights=np.array(["stated"]))
    assert time.perf_counter() - t0 < 5


def _brute_prompted_profile(table, g):
    """Σ_v p(x_{<g} = v) φ(p(· | x_{<g} = v)) by slicing the table (no mdmtheory)."""
    out = 0.0
    K = table.shape[0]
    for v in np.ndindex(*(K,) * g):
        sub = table[v]
        w = sub.sum()
        if w > 0:
            out = out + w * brute_profile(sub / w)
    return out


@pytest.mark.parametrize("g", [1, 2])
def test_prompted_profile_of_exact_model_is_the_prompted_information_profile(g):
    """prompt_length=g: the first g positions are always visible and never scored; the
    estimate is the response's profile averaged over the prompt law (z-scores)."""
    p = mt.families.dirichlet(5, 2, alpha=0.7, seed=8)
    npl = 400
    est = bridge.estimate_profile(bridge.ExactModel(p), _samples(p, 3000), n_per_level=npl, seed=3, prompt_length=g)
    want = _brute_prompted_profile(p.table, g)
    assert est.d == 5 - g and np.array_equal(est.levels, np.arange(5 - g))
    zs = [z(v, e, s) for v, e, s in zip(est.values, want, est.stderr)]
    assert max(abs(x) for x in zs) < 5, zs
    np.testing.assert_allclose(want, mt.information_profile(p, given=range(g)).values, atol=1e-12)


def test_prompt_is_visible_and_never_scored():
    """Repeated bit: given the prompt bit every response token is certain, so the
    prompted estimate is exactly 0, while without a prompt c(0) = log 2."""
    p = mt.families.repeated(4)
    xs = _samples(p, 200)
    est = bridge.estimate_profile(bridge.ExactModel(p), xs, n_per_level=50, seed=1, prompt_length=1)
    assert np.all(est.values == 0.0) and est.d == 3
    plain = bridge.estimate_profile(bridge.ExactModel(p), xs, levels=[0], n_per_level=50, seed=1)
    assert plain.values[0] == pytest.approx(np.log(2))


def test_prompted_path_cross_entropy_is_prompted_path_kl_plus_conditional_entropy():
    p = mt.families.dirichlet(5, 2, alpha=0.7, seed=8)
    g, sched = 2, mt.Schedule((2, 1))
    r = bridge.estimate_path_cross_entropy(bridge.ExactModel(p), _samples(p, 2000), sched, n=2000, seed=4,
                                           prompt_length=g)
    phi = _brute_prompted_profile(p.table, g)
    want = sum(k * phi[s] for s, k in zip(sched.starts, sched.sizes))  # Σ k_t φ^G(s_t)
    assert abs(z(r.value, want, r.stderr)) < 5


@pytest.mark.parametrize("bad", [-1, 5, 2.0, True, "1"])
def test_prompt_length_is_checked(bad):
    p = mt.families.dirichlet(5, 2, alpha=0.7, seed=8)
    with pytest.raises(ValueError, match="prompt_length: expected an integer in 0..4"):
        bridge.estimate_profile(bridge.ExactModel(p), _samples(p, 10), n_per_level=2, prompt_length=bad)


# -- issue 30: the API walker's finds in the bridge ------------------------------------------------
@pytest.mark.parametrize("obj", [True, None, 3, "model", [1, 2], {"mask_id": 2}])
def test_a_model_that_is_not_callable_is_refused_by_name(obj):
    """Not a module nor a callable: 'model (obj): ...' (it was 'mask_id: required for a bool')."""
    with pytest.raises(ValueError, match=r"^model \(obj\): expected a torch MDM"):
        bridge.as_masked_model(obj)
    x = mt.laws.TableLaw(mt.laws.families.markov_chain([[0.8, 0.2], [0.3, 0.7]], 3)).sample(
        8, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"^model \(obj\)"):
        bridge.estimate_profile(obj, x, n_per_level=4)


def test_public_uniforms_checks_its_arguments_and_matches_the_kernel():
    """bridge.uniforms: the same numbers as the estimators' kernel (splitmix64 of the counter,
    recomputed here from its definition), each argument refused by name."""
    from mdmtheory.information.montecarlo import uniforms as kernel

    M = (1 << 64) - 1

    def splitmix(z):
        z = (z + 0x9E3779B97F4A7C15) & M
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
        return z ^ (z >> 31)

    seed, stream, index, width = 7, 2, [0, 5, 9], 3
    key = splitmix(splitmix(seed) ^ stream)
    ref = [[(splitmix(splitmix(key ^ splitmix(g)) ^ ((c * 0xD1B54A32D192ED03) & M)) >> 11) / 2.0**53
            for c in range(width)] for g in index]
    np.testing.assert_array_equal(bridge.uniforms(seed, stream, np.array(index), width), ref)
    np.testing.assert_array_equal(kernel(seed, stream, np.array(index), width), ref)
    for kw, name in [({"seed": True}, "seed"), ({"seed": -1}, "seed"), ({"stream": "1"}, "stream"),
                     ({"width": 0}, "width"), ({"width": 10**12}, "width"), ({"index": None}, "index"),
                     ({"index": [[0, 1]]}, "index"), ({"index": [-1]}, "index"), ({"index": [0.5]}, "index")]:
        args = {"seed": seed, "stream": stream, "index": index, "width": width, **kw}
        with pytest.raises(ValueError, match=f"^{name}: "):
            bridge.uniforms(**args)


def test_zscore_and_resolve_refuse_non_indices():
    """PlanComparison.zscore(True, 0) indexed a bool mask; resolve(True) passed a bool as d."""
    p = mt.laws.families.markov_chain([[0.8, 0.2], [0.3, 0.7]], 3)
    model = bridge.MaskedModel(bridge.ExactModel(p), mask_id=2)
    x = mt.laws.TableLaw(p).sample(16, np.random.default_rng(0))
    cmp = bridge.compare_plans(model, x, [mt.Schedule((1, 2)), mt.Schedule((3,))], n=8)
    assert cmp.zscore(0, 1) == pytest.approx(float(cmp.difference[0, 1] / cmp.difference_stderr[0, 1]))
    for a, b in [(True, 0), (0, 2), (-1, 0), (0.0, 1), (np.float64(0), 1)]:
        with pytest.raises(ValueError, match=r"^(a|b): expected an integer in 0\.\.1"):
            cmp.zscore(a, b)
    for d in [True, None, "3", 0, 10**400]:
        with pytest.raises(ValueError, match=r"^d: "):
            model.resolve(d)
    with pytest.raises(ValueError, match=r"^samples: expected an integer"):
        model.check_length(np.zeros((2, 7), dtype=np.int64))
