"""Corruption beyond masks (issue 29 §3): the exact engine of mdmtheory.samplers.uniform against
enumerations written here from the definitions.

The forward process is enumerated from its events (docs/theory.md §15): corruption events form
a Poisson process whose no-event probability up to t is alpha_t; thinned, the mask events have
no-event probability alpha_t**mix and the uniform redraws alpha_t**(1 - mix), independently. A
token that met a mask event is the mask; else, if it met a redraw, it is uniform on the K
tokens; else it is x0. The reverse step is the exact conditional law of x_s,i given x_t under
the joint of (x0, x_s, x_t) built from those events; the sampler's law sums over every path of
noisy states. The DiffusionGemma renoise sampler is re-enumerated from transformers 5.24.0
``models/diffusion_gemma/generation_diffusion_gemma.py`` (EntropyBoundSampler.accept_canvas /
renoise_canvas, LinearTemperatureScheduleLogitsProcessor) with the time integral by quadrature;
its step is checked against those transformers classes themselves on every enumerated canvas.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate

import mdmtheory as mt
from mdmtheory.samplers import uniform as U

MASK = "M"


def _token_law(x, K, no_mask, no_redraw):
    """Law of a token after one interval's events, from its value x (or the mask)."""
    if x == MASK:
        return {MASK: 1.0}
    out = {MASK: 1.0 - no_mask}
    for y in range(K):
        out[y] = out.get(y, 0.0) + no_mask * (1.0 - no_redraw) / K
    out[x] += no_mask * no_redraw
    return out


def _interval(K, a_from, a_to, mix):
    """Event probabilities from alpha a_from to a_to (a_to <= a_from)."""
    ratio = a_to / a_from if a_from > 0 else 1.0
    return ratio**mix, ratio ** (1.0 - mix)


def _alphabet(K, mix):
    return list(range(K)) + ([MASK] if mix > 0 else [])


def _joint_xs_xt(p, a_s, a_t, mix):
    """{(x0, xs, xt): prob} by enumerating the events of [0, s] and (s, t] per token."""
    K, d = p.K, p.d
    e1 = _interval(K, 1.0, a_s, mix)
    e2 = _interval(K, a_s, a_t, mix)
    out = {}
    for x0 in itertools.product(range(K), repeat=d):
        w0 = p.table[x0]
        if w0 == 0:
            continue
        per = []
        for i in range(d):
            cells = {}
            for ys, ws in _token_law(x0[i], K, *e1).items():
                for yt, wt in _token_law(ys, K, *e2).items():
                    cells[(ys, yt)] = cells.get((ys, yt), 0.0) + ws * wt
            per.append(cells)
        for combo in itertools.product(*[list(c.items()) for c in per]):
            w = w0 * math.prod(c[1] for c in combo)
            xs = tuple(c[0][0] for c in combo)
            xt = tuple(c[0][1] for c in combo)
            out[(x0, xs, xt)] = out.get((x0, xs, xt), 0.0) + w
    return out


def _reverse_reference(p, a_t, a_s, mix):
    """{xt: [per-position {y: P(x_s,i = y | x_t)}]} from the enumerated joint."""
    J = _joint_xs_xt(p, a_s, a_t, mix)
    tot, cell = {}, {}
    for (x0, xs, xt), w in J.items():
        tot[xt] = tot.get(xt, 0.0) + w
        for i, y in enumerate(xs):
            cell[(xt, i, y)] = cell.get((xt, i, y), 0.0) + w
    return {xt: [{y: cell.get((xt, i, y), 0.0) / z for y in _alphabet(p.K, mix)} for i in range(p.d)]
            for xt, z in tot.items() if z > 0}


def _sampler_reference(p, steps, mix, alphas):
    """Output law (table, lost) of the factorized ancestral sampler, summing over all paths."""
    K, d = p.K, p.d
    start = tuple([MASK] * d) if mix > 0 else None
    states = {start: 1.0} if start else {x: K**-d for x in itertools.product(range(K), repeat=d)}
    lost = 0.0
    for k in range(steps, 0, -1):
        rev = _reverse_reference(p, alphas[k], alphas[k - 1], mix)
        new = {}
        for x, m in states.items():
            if x not in rev:
                lost += m
                continue
            for y in itertools.product(_alphabet(K, mix), repeat=d):
                w = m * math.prod(rev[x][i][y[i]] for i in range(d))
                if w:
                    new[y] = new.get(y, 0.0) + w
        states = new
    table = np.zeros((K,) * d)
    for y, m in states.items():
        assert MASK not in y  # at alpha = 1 every token is visible
        table[y] += m
    return table, lost


def _random_law(d, K, seed, zeros=0):
    rng = np.random.default_rng(seed)
    t = rng.dirichlet(np.ones(K**d))
    if zeros:
        t[rng.choice(K**d, zeros, replace=False)] = 0.0
    return mt.Joint((t / t.sum()).reshape((K,) * d))


@pytest.mark.parametrize("mix", [0.0, 0.4, 1.0])
@pytest.mark.parametrize("noise", ["linear", "cosine"])
def test_sampler_law_matches_the_path_enumeration(mix, noise):
    p = _random_law(2, 2, 3, zeros=1)
    for steps in (1, 3):
        alphas = list(U.corruption_alphas(steps, noise))
        ref, lost = _sampler_reference(p, steps, mix, alphas)
        run = U.corruption_run(p, steps, mix=mix, noise=noise)
        np.testing.assert_allclose(run.law.table, ref, atol=1e-12)
        assert run.law.lost == pytest.approx(lost, abs=1e-12)
    q = U.corruption_law(_random_law(2, 3, 5), 2, mix=mix, noise=noise)  # K = 3
    ref, _ = _sampler_reference(_random_law(2, 3, 5), 2, mix, list(U.corruption_alphas(2, noise)))
    np.testing.assert_allclose(q.table, ref, atol=1e-12)


def test_masked_steps_lose_mass_where_the_prefix_is_unreachable():
    p = mt.families.parity(2)  # two equal... x1 = x0 xor 0: support {00, 11}
    run = U.corruption_run(p, 2, mix=1.0)
    ref, lost = _sampler_reference(p, 2, 1.0, list(U.corruption_alphas(2)))
    assert run.law.lost == pytest.approx(lost, abs=1e-12)
    np.testing.assert_allclose(run.law.table, ref, atol=1e-12)


def test_denoiser_and_kernels_from_the_definition():
    p = _random_law(3, 2, 8)
    a, mix = 0.37, 0.3
    post = U.corruption_denoiser(p, a, mix)
    J = _joint_xs_xt(p, a, a, mix)  # x_s = x_t: (s, t] has no events
    Kp = 3
    pair, tot = {}, {}
    for (x0, xs, xt), w in J.items():
        pair[(x0, xt)] = pair.get((x0, xt), 0.0) + w
        tot[xt] = tot.get(xt, 0.0) + w
    for (x0, xt), w in pair.items():
        row = np.ravel_multi_index(tuple(2 if v == MASK else v for v in xt), (Kp,) * 3)
        expect = w / tot[xt] if tot[xt] > 0 else np.nan
        assert post[row, np.ravel_multi_index(x0, (2,) * 3)] == pytest.approx(expect, abs=1e-12, nan_ok=True)
    k = U.corruption_kernel(2, a, mix)
    for x0 in range(2):
        law = _token_law(x0, 2, *_interval(2, 1.0, a, mix))
        assert k[x0].tolist() == pytest.approx([law[0], law[1], law[MASK]], abs=1e-15)
    mu = U.corruption_marginals(p, a, mix)
    np.testing.assert_allclose(mu.sum(axis=2), 1.0)


def test_duo_compute_posterior_is_the_reverse_step_with_the_reweighted_denoiser():
    """s-sahoo/duo, algo.py, DUO_BASE._compute_posterior (commit 0299855), written here from
    its formula: (α_t K x 1[x_t] + (α_t/α_s − α_t) 1[x_t] + (α_s − α_t) x + (1 − α_t/α_s)(1 − α_s)/K)
    / (α_t K x[x_t] + 1 − α_t). With x = μ_i(x0)/k_t(x_t,i | x0), renormalized, it is the exact
    one-token reverse kernel; with x = μ_i itself it is not (it conditions on x_t twice)."""
    p = _random_law(3, 3, 11)
    K, at, as_ = 3, 0.3, 0.7
    r = U.corruption_reverse_kernels(p, at, as_, 0.0)
    mu = U.corruption_marginals(p, at, 0.0)
    xt_all = np.array(np.unravel_index(np.arange(K**3), (K,) * 3)).T
    kt = U.corruption_kernel(K, at, 0.0)

    def duo(x, xt):
        oh = np.eye(K)[xt]
        return ((at * K * x * oh + (at / as_ - at) * oh + (as_ - at) * x + (1 - at / as_) * (1 - as_) / K)
                / (at * K * x[xt] + 1 - at))

    worst_plain = 0.0
    for s, xt in enumerate(xt_all):
        for i in range(3):
            x = mu[s, i] / kt[:, xt[i]]
            np.testing.assert_allclose(duo(x / x.sum(), xt[i]), r[s, i], atol=1e-12)
            worst_plain = max(worst_plain, np.abs(duo(mu[s, i], xt[i]) - r[s, i]).max())
    assert worst_plain > 1e-3


def test_every_corruption_converges_with_exact_denoisers():
    """With the exact per-position denoiser none of the three plateaus: KL -> 0 with the steps
    (the ancestral masked sampler too; docs/theory.md §15)."""
    p = mt.families.sampler_laws(3)["markov chain (stay 0.9)"]
    for mix in (0.0, 0.5, 1.0):
        kls = [mt.kl(p, U.corruption_law(p, T, mix=mix)) for T in (4, 16, 64)]
        assert kls[0] > kls[1] > kls[2] and kls[2] < 1e-3
    def h(t):
        t = np.asarray(t).ravel()
        return -float(np.sum(t[t > 0] * np.log(t[t > 0])))

    tc = sum(h(p.marginal([j])) for j in range(3)) - h(p.table)  # one step: the product of the marginals
    for mix in (0.0, 0.5, 1.0):
        assert mt.kl(p, U.corruption_law(p, 1, mix=mix)) == pytest.approx(tc, rel=1e-10)


# -- DiffusionGemma's entropy-bound renoise sampler --
def _time_free_reference(p):
    K, d = p.K, p.d
    mu = {}
    for x in itertools.product(range(K), repeat=d):
        w = np.zeros((d, K))
        for x0 in itertools.product(range(K), repeat=d):
            f = lambda a: math.prod(a * (x[i] == x0[i]) + (1 - a) / K for i in range(d))  # noqa: E731
            v = p.table[x0] * integrate.quad(f, 0.0, 1.0, epsabs=1e-14, epsrel=1e-14)[0]
            for i in range(d):
                w[i, x0[i]] += v
        mu[x] = w / w.sum(axis=1, keepdims=True)
    return mu


def _renoise_step(mu_x, cur, steps, bound, t_min, t_max):
    """(tempered rows, accepted positions) of one step at a canvas whose marginals are mu_x (d, K)."""
    d = len(mu_x)
    temp = t_min + (t_max - t_min) * cur / steps
    pr = [np.exp(np.log(mu_x[i]) / temp) for i in range(d)]
    pr = [v / v.sum() for v in pr]
    H = [-sum(v * math.log(v) for v in q if v > 0) for q in pr]
    order = sorted(range(d), key=lambda i: (H[i], i))
    acc, cum = set(), 0.0
    for i in order:
        cum += H[i]
        if cum - H[i] <= bound:  # sorted ascending: the running max is H[i]
            acc.add(i)
    return pr, acc


def _renoise_reference(p, steps, bound, t_min, t_max):
    K, d = p.K, p.d
    mu = _time_free_reference(p)
    states = {x: K**-d for x in itertools.product(range(K), repeat=d)}
    for cur in range(steps, 1, -1):
        new = {}
        for x, m in states.items():
            pr, acc = _renoise_step(mu[x], cur, steps, bound, t_min, t_max)
            for y in itertools.product(range(K), repeat=d):
                w = m * math.prod(pr[i][y[i]] if i in acc else 1.0 / K for i in range(d))
                new[y] = new.get(y, 0.0) + w
        states = new
    out = np.zeros((K,) * d)
    for x, m in states.items():
        out[tuple(int(np.argmax(mu[x][i])) for i in range(d))] += m
    return out


@pytest.mark.parametrize("steps,bound", [(1, 0.1), (3, 0.1), (4, 0.7)])
def test_renoise_law_matches_the_enumeration(steps, bound):
    p = _random_law(3, 2, 21)
    q = U.renoise_law(p, steps, entropy_bound=bound, t_min=0.4, t_max=0.8)
    np.testing.assert_allclose(q.table, _renoise_reference(p, steps, bound, 0.4, 0.8), atol=1e-10)


def test_the_enumerated_step_is_transformers_own_temperature_and_acceptance():
    """The enumeration's step (tempering, entropy-bound acceptance) against transformers'
    LinearTemperatureScheduleLogitsProcessor and EntropyBoundSampler.accept_canvas, run on every
    canvas of the enumeration: the reference is not our reading of that code alone."""
    torch = pytest.importorskip("torch")
    gd = pytest.importorskip("transformers.models.diffusion_gemma.generation_diffusion_gemma")
    p, steps = _random_law(3, 2, 21), 4
    mu = _time_free_reference(p)
    xs = list(mu)
    logits = torch.tensor(np.log(np.array([mu[x] for x in xs])))  # (8, 3, 2) float64
    sizes = set()
    for bound in (0.1, 0.7):
        sampler = gd.EntropyBoundSampler(gd.EntropyBoundSamplerConfig(entropy_bound=bound), 3, 2, steps)
        temper = gd.LinearTemperatureScheduleLogitsProcessor(0.4, 0.8, steps)
        for cur in range(steps, 1, -1):
            processed = temper(None, logits, cur_step=torch.tensor(cur, dtype=torch.int32))
            sampler.accept_canvas(torch.zeros((8, 3), dtype=torch.long), torch.ones((8, 3), dtype=torch.long),
                                  processed, cur)
            theirs = sampler.accepted_token_mask.numpy()
            probs = torch.softmax(processed, dim=-1).numpy()
            for s, x in enumerate(xs):
                pr, acc = _renoise_step(mu[x], cur, steps, bound, 0.4, 0.8)
                assert set(np.flatnonzero(theirs[s])) == acc
                np.testing.assert_allclose(np.array(pr), probs[s], atol=1e-6)  # their temperature is float32
                sizes.add(len(acc))
    assert len(sizes) > 1  # the bound splits: some canvases keep more positions than others


def test_time_free_marginals_match_quadrature():
    p = _random_law(3, 2, 4)
    mu = U.time_free_marginals(p)
    ref = _time_free_reference(p)
    for s, x in enumerate(itertools.product(range(2), repeat=3)):
        np.testing.assert_allclose(mu[s], ref[x], atol=1e-12)


def test_limits_and_bad_arguments_are_refused_by_name():
    big = mt.Joint(np.full((2,) * 8, 2.0**-8))  # 256 states: pure uniform fits, 6561 with masks do not
    assert U.corruption_marginals(big, 0.5, 0.0).shape == (256, 8, 2)
    with pytest.raises(ValueError, match=r"^p: the number of noisy states \(K\+1\)\*\*d is 6561, beyond the documented limit 4096"):
        U.corruption_law(big, 1, mix=0.5)
    with pytest.raises(ValueError, match=r"^p: the number of noisy states K\*\*d is 8192"):
        U.renoise_law(mt.Joint(np.full((2,) * 13, 2.0**-13)), 1)
    p = mt.families.parity(2)
    with pytest.raises(ValueError, match=r"^mix: expected a probability"):
        U.corruption_law(p, 2, mix=1.5)
    with pytest.raises(ValueError, match=r"^steps: expected an integer"):
        U.corruption_law(p, 0)
    with pytest.raises(ValueError, match=r"^noise: expected one of"):
        U.corruption_law(p, 2, noise="cos")
    with pytest.raises(ValueError, match=r"^p: expected a mdmtheory.Joint"):
        U.corruption_law(p.table, 2)
    with pytest.raises(ValueError, match=r"^alpha_t: the reverse step goes from alpha_t"):
        U.corruption_reverse_kernels(p, 0.8, 0.2)
    with pytest.raises(ValueError, match=r"^entropy_bound: expected a float > 0"):
        U.renoise_law(p, 2, entropy_bound=0.0)
    with pytest.raises(ValueError, match=r"^t_min: temperatures must lie in \(0, 100\]"):
        U.renoise_law(p, 2, t_min=0.0)
    with pytest.raises(ValueError, match=r"^t_max: temperatures must lie in \(0, 100\]"):
        U.renoise_law(p, 2, t_max=1e12)  # transformers' float32 temperature would cancel to 0
