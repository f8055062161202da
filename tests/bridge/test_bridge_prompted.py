"""Prompts and blocks in every bridge estimator (issue 18): ``prompt_length=`` and ``response_length=``.

On ``ExactModel`` of a law the estimates agree by z-score with the exact conditional values:
brute force on sliced tables (bridge_reference, no mdmtheory) for the prompted profile and
learning error; the package's exact engine (``mt.samplers.prompted_kl``, ``mt.information_profile(p,
given=)``, ``mdmtheory.optimal.block_profiles``, ``mt.information.expected_dyadic_estimate`` of
``Joint.condition``) where the issue asks for agreement with it.
"""

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.optimal import block_profiles
from mdmtheory.laws import as_oracle

torch = pytest.importorskip("torch")
from mdmtheory import bridge  # noqa: E402

from bridge_reference import brute_profile, cross_entropy_profile, marginal, z  # noqa: E402

torch.set_num_threads(1)


def _samples(p, n, seed=0):
    return np.asarray(as_oracle(p).sample(n, np.random.default_rng(seed)), dtype=np.int64)


def _prompt_slices(table, g):
    """[(p(x_<g = v), table of the response given v)] by slicing the table (no mdmtheory)."""
    K = table.shape[0]
    out = []
    for v in np.ndindex(*(K,) * g):
        sub = table[v]
        w = sub.sum()
        if w > 0:
            out.append((w, sub / w))
    return out


def _mismatched(p: mt.Joint, seed=21) -> mt.Joint:
    other = mt.families.dirichlet(p.d, p.K, seed=seed).table
    return mt.Joint(0.7 * p.table + 0.3 * other)


P5 = mt.families.dirichlet(5, 2, alpha=0.6, seed=31)


# -- prompt_length on the remaining estimators ------------------------------------------------
@pytest.mark.parametrize("g", [1, 2])
def test_prompted_factorization_error_random_order_is_the_prompted_path_kl(g):
    sched = mt.Schedule((2, 1) if g == 2 else (2, 2))
    est = bridge.estimate_factorization_error(bridge.ExactModel(P5), _samples(P5, 1500), sched, "random", seed=2,
                                              prompt_length=g)
    exact = mt.path_kl(mt.information_profile(P5, given=range(g)), sched)
    # independent: Σ_v p(v) path KL of the conditioned table, Σ_t k_t φ_v(s_t) − H(X_R | v)
    brute = sum(w * (sum(k * brute_profile(t)[s] for s, k in zip(sched.starts, sched.sizes)) - brute_profile(t).sum())
                for w, t in _prompt_slices(P5.table, g))
    assert exact == pytest.approx(brute, abs=1e-12)
    assert est.kind == "path_kl" and abs(z(est.value, exact, est.stderr)) < 5, (est.value, exact, est.stderr)
    assert est.forwards == 1500 * (5 - g)  # one forward per generated token; the prompt costs nothing
    assert est.step_means.shape == (5 - g,)


@pytest.mark.parametrize("planner,sizes", [("confidence", (2, 1, 1)), ("left_to_right", (1, 3)),
                                           (mt.samplers.SemiAutoregressivePlanner(block_length=2, steps_per_block=1), None)],
                         ids=["confidence", "left_to_right", "semi_ar"])
def test_prompted_factorization_error_of_a_planner_is_the_prompted_kl(planner, sizes):
    g = 1
    plan = None if sizes is None else mt.Schedule(sizes)
    est = bridge.estimate_factorization_error(bridge.ExactModel(P5), _samples(P5, 1500), plan, planner, seed=3,
                                              prompt_length=g)
    exact = mt.samplers.prompted_kl(P5, plan, given=range(g), planner=planner)
    # ties="random" (the default) is labelled a path KL; P5 has no ties, so it is the KL
    random_ties = getattr(mt.samplers.resolve_planner(planner), "ties", None) == "random"
    assert est.kind == ("path_kl" if random_ties else "kl") and abs(z(est.value, exact, est.stderr)) < 5, \
        (est.value, exact, est.stderr)


def test_prompted_factorization_error_never_chooses_the_prompt():
    seen = []

    class Spy(mt.samplers.ConfidencePlanner):
        def select(self, step, size, probs, free, rng=None):
            seen.append(free.shape)
            return super().select(step, size, probs, free, rng)

    bridge.estimate_factorization_error(bridge.ExactModel(P5), _samples(P5, 20), mt.Schedule((1, 2)), Spy(), seed=0,
                                        prompt_length=2)
    assert seen and all(s[1] == 3 for s in seen)  # the planner sees the 3 response positions only


@pytest.mark.parametrize("g", [1, 2])
def test_prompted_learning_error_is_the_prompt_average_of_the_conditional_learning_errors(g):
    q = _mismatched(P5)
    est = bridge.estimate_learning_error(bridge.ExactModel(q), P5, n_per_level=300, seed=4, prompt_length=g)
    # ε^G(i) = Σ_v p(v) [c_{p_v, q_v}(i) − φ_{p_v}(i)], q_v the model's law given the same prompt
    want = 0.0
    for v in np.ndindex(*(2,) * g):
        w = P5.table[v].sum()
        if w > 0:
            pv, qv = P5.table[v] / w, q.table[v] / q.table[v].sum()
            want = want + w * (cross_entropy_profile(pv, qv) - brute_profile(pv))
    assert est.d == 5 - g and np.array_equal(est.levels, np.arange(5 - g))
    zs = [z(v, e, s) for v, e, s in zip(est.values, want, est.stderr)]
    assert max(abs(x) for x in zs) < 5, zs
    same = bridge.estimate_learning_error(bridge.ExactModel(P5), P5, n_per_level=20, seed=0, prompt_length=g)
    np.testing.assert_allclose(same.values, 0.0, atol=1e-12)


def test_prompted_dyadic_estimate_is_the_prompt_average_of_the_conditional_expectations():
    p = mt.families.dirichlet(4, 3, alpha=0.6, seed=14)
    g, n = 1, 800
    est = bridge.estimate_dyadic(bridge.ExactModel(p), _samples(p, n), 0.2, 0.75, seed=5, prompt_length=g)
    exact = sum(w * mt.information.expected_dyadic_estimate(p.condition([0], list(v)), 0.2, 0.75)
                for v, w in mt.laws.prompt_law(p, [0]))
    assert abs(z(est.value, exact, est.stderr)) < 5, (est.value, exact, est.stderr)
    from mdmtheory.bridge.estimators import _DYADIC, uniforms

    U = uniforms(5, _DYADIC, np.arange(n), 4 - g)  # reveal times of the response only
    assert est.forwards == sum(n + int((U <= v).sum()) for v in est.grid)


def test_repeated_bit_given_its_prompt_has_no_factorization_error_nor_dyadic_information():
    p = mt.families.repeated(4)
    xs = _samples(p, 100)
    f = bridge.estimate_factorization_error(bridge.ExactModel(p), xs, mt.Schedule((3,)), "random", seed=0, prompt_length=1)
    assert f.value == 0.0  # without the prompt: TC of the bits = 2 log 2
    q = bridge.estimate_dyadic(bridge.ExactModel(p), xs, 0.2, 0.8, seed=0, prompt_length=1)
    assert q.value == 0.0


def test_the_prompt_is_never_masked_by_any_estimator():
    """A model that records its inputs: in every forward of every estimator with
    prompt_length=2 the prompt columns hold the data's tokens, never the mask."""
    g = 2
    inputs = []
    exact = bridge.ExactModel(P5)

    def f(ids):
        inputs.append(ids.clone())
        return exact(ids)

    xs = _samples(P5, 40)
    m = bridge.MaskedModel(f, mask_id=2, vocab=[0, 1])
    bridge.estimate_profile(m, xs, n_per_level=4, seed=0, prompt_length=g)
    bridge.compare_plans(m, xs, [mt.Schedule((1, 2))], n=8, seed=0, prompt_length=g)
    bridge.estimate_factorization_error(m, xs[:8], mt.Schedule((2, 1)), "random", seed=0, prompt_length=g)
    bridge.estimate_factorization_error(m, xs[:8], mt.Schedule((2, 1)), "confidence", seed=0, prompt_length=g)
    bridge.estimate_learning_error(m, P5, n_per_level=4, seed=0, prompt_length=g)
    bridge.estimate_dyadic(m, xs[:8], 0.2, 0.8, seed=0, prompt_length=g)
    ids = torch.cat(inputs)
    assert ids.shape[0] > 100 and bool((ids[:, :g] != 2).all())
    assert bool((ids[:, g:] == 2).any())  # the response is masked somewhere (the check can fail)


# -- response_length: later positions always masked (blocks) ----------------------------------
def _brute_block_profile(table, g, L, b):
    """φ of block b (positions g+bL..g+bL+L−1) given positions < g+bL, later positions summed out."""
    seen = g + (b + 1) * L
    marg = table.sum(axis=tuple(range(seen, table.ndim))) if seen < table.ndim else table
    out = 0.0
    for w, t in _prompt_slices(marg, g + b * L):
        out = out + w * brute_profile(t)
    return out


@pytest.mark.parametrize("g,L,b", [(0, 2, 0), (1, 2, 0), (1, 2, 1), (0, 3, 1)])
def test_block_profile_estimate_is_the_exact_block_profile(g, L, b):
    p = mt.families.dirichlet(g + 2 * L, 2, alpha=0.6, seed=32)  # two blocks
    npl = 400
    est = bridge.estimate_profile(bridge.ExactModel(p), _samples(p, 2000), n_per_level=npl, seed=6,
                                  prompt_length=g + b * L, response_length=L)
    want = block_profiles(p, L, given=range(g))[b].values
    np.testing.assert_allclose(want, _brute_block_profile(p.table, g, L, b), atol=1e-12)
    assert est.d == L and np.array_equal(est.levels, np.arange(L)) and est.forwards == L * npl
    zs = [z(v, e, s) for v, e, s in zip(est.values, want, est.stderr)]
    assert max(abs(x) for x in zs) < 5, zs


def test_block_path_cross_entropy_and_paired_plans():
    p = mt.families.dirichlet(5, 2, alpha=0.6, seed=33)
    g, L, b = 1, 2, 1
    phi = block_profiles(p, L, given=range(g))[b].values
    m, xs = bridge.ExactModel(p), _samples(p, 2000)
    r = bridge.estimate_path_cross_entropy(m, xs, mt.Schedule((1, 1)), n=2000, seed=7, prompt_length=g + b * L,
                                           response_length=L)
    assert abs(z(r.value, phi[0] + phi[1], r.stderr)) < 5
    cmp = bridge.compare_plans(m, xs, [mt.Schedule((1, 1)), mt.Schedule((2,))], n=2000, seed=7,
                               prompt_length=g + b * L, response_length=L)
    # difference of the two plans: φ(1) − φ(0) (paired; exact: the block's mutual information, negated)
    assert abs(z(cmp.difference[0, 1], phi[1] - phi[0], cmp.difference_stderr[0, 1])) < 5
    assert cmp.forwards == 2000 * 2


def test_later_positions_are_never_revealed_nor_scored():
    """A model that gives probability 0 to the data at positions >= g + L would make any
    score of them infinite, and records every input: later positions are always the mask."""
    p = mt.families.dirichlet(5, 2, alpha=0.6, seed=34)
    g, L = 1, 2
    inputs = []
    exact = bridge.ExactModel(p)

    def f(ids):
        inputs.append(ids.clone())
        out = exact(ids).clone()
        out[:, g + L:, :2] = -torch.inf  # no outcome possible after the response...
        out[:, g + L:, 0] = 0.0  # ...but outcome 0, which the data avoids below
        return out

    xs = _samples(p, 300)
    xs[:, g + L:] = 1
    m = bridge.MaskedModel(f, mask_id=2, vocab=[0, 1])
    est = bridge.estimate_profile(m, xs, n_per_level=30, seed=0, prompt_length=g, response_length=L)
    bridge.compare_plans(m, xs, [mt.Schedule((1, 1))], n=30, seed=0, prompt_length=g, response_length=L)
    ids = torch.cat([t for t in inputs if t.shape[1] == 5])
    assert bool((ids[:, g + L:] == 2).all()) and bool((ids[:, :g] != 2).all())
    assert np.all(np.isfinite(est.values))
    with pytest.raises(ValueError, match="probability 0 to an observed token"):  # scoring them would fail
        bridge.estimate_profile(m, xs, n_per_level=2, seed=0, prompt_length=g)


# -- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [-1, 5, 2.0, True, "1", None])
def test_prompt_length_is_checked_by_every_estimator(bad):
    m, xs = bridge.ExactModel(P5), _samples(P5, 10)
    msg = r"^prompt_length: expected an integer in 0\.\.4 \(the first positions of each row are the prompt"
    calls = [
        lambda: bridge.estimate_factorization_error(m, xs, mt.Schedule((1,)), "random", prompt_length=bad),
        lambda: bridge.estimate_learning_error(m, P5, n_per_level=2, prompt_length=bad),
        lambda: bridge.estimate_dyadic(m, xs, 0.2, 0.8, prompt_length=bad),
        lambda: bridge.compare_plans(m, xs, [mt.Schedule((1,))], n=2, prompt_length=bad),
        lambda: bridge.estimate_path_cross_entropy(m, xs, mt.Schedule((1,)), n=2, prompt_length=bad),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=msg):
            call()


@pytest.mark.parametrize("bad", [0, -1, 4, 2.0, True, "2", np.array([2])])
def test_response_length_is_checked(bad):
    m, xs = bridge.ExactModel(P5), _samples(P5, 10)
    msg = r"^response_length: expected None \(every position after the prompt\) or an integer in 1\.\.3 "
    with pytest.raises(ValueError, match=msg):
        bridge.estimate_profile(m, xs, n_per_level=2, prompt_length=2, response_length=bad)
    with pytest.raises(ValueError, match=msg):
        bridge.compare_plans(m, xs, [mt.Schedule((1,))], n=2, prompt_length=2, response_length=bad)
    with pytest.raises(ValueError, match=msg):
        bridge.estimate_path_cross_entropy(m, xs, mt.Schedule((1,)), n=2, prompt_length=2, response_length=bad)


def test_plan_and_levels_refer_to_the_response():
    m, xs = bridge.ExactModel(P5), _samples(P5, 10)
    with pytest.raises(ValueError, match=r"^levels: expected distinct integers in 0\.\.1"):
        bridge.estimate_profile(m, xs, levels=[2], n_per_level=2, prompt_length=1, response_length=2)
    with pytest.raises(ValueError, match=r"^plan"):
        bridge.compare_plans(m, xs, [mt.Schedule((1, 2))], n=2, prompt_length=1, response_length=2)
    with pytest.raises(ValueError, match=r"^plan"):
        bridge.estimate_factorization_error(m, xs, mt.Schedule((2, 2)), "random", prompt_length=2)
    with pytest.raises(ValueError, match=r"^levels: expected distinct integers in 0\.\.2"):
        bridge.estimate_learning_error(m, P5, levels=[3], n_per_level=2, prompt_length=2)
