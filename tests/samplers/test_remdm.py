"""ReMDM as its authors run it (issue 29 §1): :class:`ReMDMSampler` against an enumeration
written in this test from the published step — kuleshov-group/remdm@f830d659, diffusion.py,
``Diffusion._ddpm_caching_update`` (samplers mdlm, remdm-cap, remdm-rescale, remdm-conf,
remdm-loop, nucleus_p) and ``_sample`` (time grid, p_x0 cache, noise removal) — Monte Carlo,
and the special cases the package already has."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.samplers import (RemaskingSampler, ReMDMSampler, nucleus, remdm_run, revise_run)


def _cond(table, x):
    """p(· | x_A) at every masked position of x (-1 = masked), from the table by sums."""
    d, K = table.ndim, table.shape[0]
    out = {}
    for j in range(d):
        if x[j] >= 0:
            continue
        row = np.zeros(K)
        for y in itertools.product(range(K), repeat=d):
            if all(x[i] < 0 or x[i] == y[i] for i in range(d)):
                row[y[j]] += table[y]
        out[j] = row / row.sum() if row.sum() > 0 else None
    return out


def _top_p(row, top_p):
    """diffusion.py's nucleus lines on one row, with python's stable sort (equal values in index
    order): sorted_probs, cumsum <= p, the first always kept, renormalized."""
    if top_p >= 1:
        return row
    order = sorted(range(len(row)), key=lambda v: -row[v])
    keep, c = np.zeros(len(row)), 0.0
    for r, v in enumerate(order):
        c += row[v]
        if c <= top_p or r == 0:
            keep[v] = row[v]
    return keep / keep.sum()


def _weights(s, t, dt):
    """(remask probability σ at a revealed position, or σ_max for conf; the categorical weights
    (reveal, stay masked) at a masked one), transcribed from _ddpm_caching_update."""
    mct, mcs = t, t - dt
    at, as_ = 1 - mct, 1 - mcs
    if s.schedule == "mdlm":
        return 0.0, (mct - mcs, mcs)
    if s.schedule == "cap":
        sig = min(s.eta, (1 - as_) / at) if at > 0 else s.eta
        return sig, (as_ - (1 - sig) * at, 1 - as_ - sig * at)
    if s.schedule == "rescale":
        sig = s.eta * (min(1, (1 - as_) / at) if at > 0 else 1)
        return sig, (as_ - (1 - sig) * at, 1 - as_ - sig * at)
    if s.schedule == "conf":
        smax = min(1, (1 - as_) / at) if at > 0 else 1
        return smax, (as_ - at, 1 - as_)  # masked: sigma = 0
    if t > s.t_on:
        mct, mcs = 1 - (1 - t) * s.alpha_on / (1 - s.t_on), 1 - (1 - t + dt) * s.alpha_on / (1 - s.t_on)
    elif t <= s.t_off:
        mct, mcs = t * (1 - s.alpha_on) / s.t_off, (t - dt) * (1 - s.alpha_on) / s.t_off
    else:
        a = s.alpha_on
        return s.eta, (a - (1 - s.eta) * a, 1 - a - a * s.eta)
    return 0.0, (mct - mcs, mcs)


def _enumerate(table, s):
    """The exact law by a dict over (x with -1 masked, conf) states, one position at a time;
    returns (law (K,)*d, lost, expected forwards)."""
    d, K = table.ndim, table.shape[0]
    states = {((-1,) * d, (-math.inf,) * d, True): 1.0}  # (x, conf, the previous step changed x)
    times = np.linspace(1, s.eps, s.steps + 1)
    dt = (1 - s.eps) / s.steps
    lost = fw = 0.0
    for i in range(s.steps):
        sig0, (wr, ws) = _weights(s, float(times[i]), dt)
        new = {}
        for (x, conf, changed), m in states.items():
            fw += m * changed
            cond = _cond(table, x)
            rev = [v >= 0 for v in x]
            if s.schedule == "conf":  # eta = softmax(conf) over positions, 0 at masked ones
                e = [math.exp(c) if r else 0.0 for c, r in zip(conf, rev)]
                sig = [sig0 * v / sum(e) if sum(e) > 0 else 0.0 for v in e]
            else:
                sig = [sig0 if r else 0.0 for r in rev]
            opts = []  # per position: [(new value, conf, prob)]
            for j in range(d):
                if rev[j]:  # p_x0 one-hot at x_j (subs): keep 1 - sigma, mask sigma
                    a, b = max(1 - sig[j], 0.0), max(sig[j], 0.0)
                    opts.append([(x[j], conf[j], a / (a + b)), (-1, -math.inf, b / (a + b))])
                else:
                    px = _top_p(cond[j], s.top_p)
                    a, b = max(wr, 0.0), max(ws, 0.0)  # _sample_categorical: positive weights, normalized
                    opts.append([(v, -px[v], a / (a + b) * px[v]) for v in range(K) if px[v] > 0]
                                + [(-1, -math.inf, b / (a + b))])
            for combo in itertools.product(*opts):
                w = math.prod(c[2] for c in combo)
                if w == 0:
                    continue
                y = tuple(c[0] for c in combo)
                cf = tuple(c[1] for c in combo) if s.schedule == "conf" else (-math.inf,) * d
                if min(y) < 0 and sum(table[z] for z in itertools.product(range(K), repeat=d)
                                      if all(a < 0 or a == b for a, b in zip(y, z))) == 0:
                    lost += m * w
                    continue
                key = (y, tuple(round(c, 12) for c in cf), y != x)
                new[key] = new.get(key, 0.0) + m * w
        states = new
    law = np.zeros(table.shape)
    fw += sum(states.values())  # the noise removal's forward
    for (x, _c, _ch), m in states.items():
        if min(x) >= 0:
            law[x] += m
            continue
        cond = _cond(table, x)  # forward(x).argmax(-1): the first maximum
        law[tuple(x[j] if x[j] >= 0 else int(np.argmax(cond[j])) for j in range(d))] += m
    return law, lost, fw


def _law(seed, K=3, d=3, alpha=0.6):
    return mt.Joint(np.random.default_rng(seed).dirichlet(np.full(K**d, alpha)).reshape((K,) * d))


@pytest.mark.parametrize("schedule,top_p,K", [
    ("mdlm", 1.0, 3), ("cap", 0.8, 3), pytest.param("rescale", 1.0, 3, marks=pytest.mark.slow), ("conf", 0.8, 3),
    pytest.param("conf", 1.0, 2, marks=pytest.mark.slow), ("loop", 0.8, 3)])
def test_exact_chain_is_the_published_step_enumerated(schedule, top_p, K):
    p = _law(1, K=K)
    s = ReMDMSampler(5, schedule, eta=0.15, t_on=0.6, t_off=0.2, alpha_on=0.7, top_p=top_p, eps=1e-2, ties="lowest")
    law, lost, fw = _enumerate(p.table, s)
    r = remdm_run(p, s)
    assert np.abs(r.law.table - law).max() < 1e-12 and r.law.lost == pytest.approx(lost, abs=1e-12)
    assert r.forwards == pytest.approx(fw, abs=1e-12) and r.forwards <= s.forwards()


def test_a_law_with_zeros_loses_what_the_enumeration_loses():
    t = _law(2, K=2, d=3).table.copy()
    t[0, 1, :] = 0  # p(x_0 = 0, x_1 = 1) = 0: revealing both at once from the empty state is lost
    p = mt.Joint(t / t.sum())
    s = ReMDMSampler(4, "cap", eta=0.4, eps=0.0, ties="lowest")
    law, lost, fw = _enumerate(p.table, s)
    r = remdm_run(p, s)
    assert lost > 1e-4 and r.law.lost == pytest.approx(lost, abs=1e-12)
    assert np.abs(r.law.table - law).max() < 1e-12 and r.forwards == pytest.approx(fw, abs=1e-12)


def test_nucleus_is_torch_running_the_published_lines():
    """diffusion.py's nucleus lines run in torch (float64) on rows with and without ties at the
    cut: ``ties="lowest"`` is what torch.sort(descending=True) keeps on this platform, and
    ``"random"`` the average over the tied tokens kept."""
    torch = pytest.importorskip("torch")
    rows = np.array([[0.5, 0.3, 0.2], [0.25, 0.5, 0.25], [0.4, 0.4, 0.2], [0.2, 0.4, 0.4], [0.1, 0.1, 0.8],
                     [1 / 3, 1 / 3, 1 / 3]])
    for top_p in (0.5, 0.7, 0.9):
        p_x0 = torch.tensor(rows)
        sorted_probs, sorted_indices = torch.sort(p_x0, descending=True, dim=-1)
        cumulative_probs = torch.cumsum(sorted_probs, dim=-1)
        top_p_mask = cumulative_probs <= top_p
        top_p_mask[..., 0] = True
        nucleus_probs = sorted_probs * top_p_mask
        nucleus_probs /= nucleus_probs.sum(dim=-1, keepdim=True)
        ref = torch.zeros_like(p_x0).scatter_(-1, sorted_indices, nucleus_probs).numpy()
        got, _ = nucleus(rows, top_p, "lowest")
        assert np.abs(got - ref).max() < 1e-15, top_p
        for r, row in enumerate(rows):
            assert np.allclose(got[r], _top_p(row, top_p))
    avg, split = nucleus(rows, 0.5, "random")  # row 2: one of the two 0.4s, each half the time
    assert np.allclose(avg[2], [0.5, 0.5, 0.0]) and split[2] and not split[0]


@pytest.mark.parametrize("schedule", [pytest.param("conf", marks=pytest.mark.slow), "loop"])
def test_monte_carlo_agrees_with_the_exact_law(schedule):
    p = _law(3)
    s = ReMDMSampler(6, schedule, eta=0.1, t_on=0.6, t_off=0.2, alpha_on=0.7, top_p=0.9)
    r = remdm_run(p, s)
    n = 20000
    sim = mt.simulate(p, None, s, n=n, seed=4)
    emp = np.bincount(mt.samplers.kernel.output_index(sim.samples, 3), minlength=27) / n
    q = r.law.table.ravel()
    z = np.abs(emp - q) / np.sqrt(np.maximum(q * (1 - q), 1e-12) / n)
    assert z.max() < 4.5
    f = sim.forwards.astype(float)
    assert abs(f.mean() - r.forwards) < 4.5 * f.std() / math.sqrt(n) + 1e-12


def test_the_special_cases_the_package_has():
    """η = 0, eps = 0: MDLM's ancestral sampler, the Bernoulli grid of the revealed fractions
    1 − t_i; cap and rescale with eps = 0: RemaskingSampler on those fractions."""
    p = _law(5, K=2, d=4)
    s = ReMDMSampler(4, "mdlm", eps=0.0)
    grid = mt.Grid(tuple(1 - s.times()))
    assert np.abs(remdm_run(p, s).law.table - mt.sampler_law(p, grid).table).max() < 1e-13
    for sch in ("cap", "rescale"):
        s = ReMDMSampler(4, sch, eta=0.3, eps=0.0)
        old = revise_run(p, RemaskingSampler(tuple(1 - s.times()), 0.3, sch)).law
        assert np.abs(mt.sampler_law(p, None, s).table - old.table).max() < 1e-13


def test_the_authors_settings_and_refusals():
    s = ReMDMSampler(1024, "loop", eta=0.02, t_on=0.55, t_off=0.05, alpha_on=0.9, top_p=0.9)  # scripts/remdm-loop.sh
    assert s.rates(600) == pytest.approx((0.02, 0.02 * 0.9 / 0.1))  # the loop: ReMDM at alpha_on
    with pytest.raises(ValueError, match=r"^alpha_on:"):
        ReMDMSampler(8, "loop", eta=0.2, alpha_on=0.9)
    with pytest.raises(ValueError, match=r"^t_on:"):
        ReMDMSampler(8, "loop", t_on=0.1, t_off=0.2)
    with pytest.raises(ValueError, match=r"^schedule:"):
        ReMDMSampler(8, "remdm-loop")
    with pytest.raises(ValueError, match=r"^noise_removal:"):
        ReMDMSampler(8, "cap", noise_removal=False)
    with pytest.raises(ValueError, match=r"^top_p:"):
        ReMDMSampler(8, "cap", top_p=0.0)


def test_bridge_runs_it_on_a_torch_model():
    pytest.importorskip("torch")
    from mdmtheory import bridge

    p = _law(6, K=2, d=4, alpha=2.0)
    s = ReMDMSampler(5, "loop", eta=0.1, t_on=0.6, t_off=0.2, alpha_on=0.7, top_p=0.95)
    n = 6000
    sim = s.simulate(bridge.model_law(bridge.ExactModel(p), 4), n=n, seed=7)
    samples, lost = sim.samples, sim.lost
    assert not lost.any()
    q = remdm_run(p, s).law.table.ravel()
    emp = np.bincount(mt.samplers.kernel.output_index(samples, 2), minlength=16) / n
    assert (np.abs(emp - q) / np.sqrt(np.maximum(q * (1 - q), 1e-12) / n)).max() < 4.5
