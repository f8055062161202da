"""The factor and Fréchet rules (issue 28 items 1-2) driven by a torch model: on an ExactModel the
bridge's samples follow the exact engine's law of the same planner (z-scores)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

import mdmtheory as mt  # noqa: E402
from mdmtheory import bridge  # noqa: E402
from mdmtheory.samplers import FactorPlanner, FrechetPlanner, exact_run  # noqa: E402

P = mt.families.dirichlet(4, 2, alpha=0.4, seed=1)


@pytest.mark.parametrize("planner", [FactorPlanner(0.75), FrechetPlanner(0.25)], ids=lambda pl: pl.name)
def test_rule_on_an_exact_model_follows_the_exact_law(planner):
    n = 3000
    samples = bridge.sample(bridge.ExactModel(P), 4, None, planner, n=n, seed=5).samples
    q = exact_run(P, None, planner).law.table.ravel()
    freq = np.bincount(np.ravel_multi_index(samples.T, P.table.shape), minlength=q.size) / n
    se = np.sqrt(np.maximum(q * (1 - q), 1e-12) / n)
    assert np.all(np.abs(freq - q) / se < 4.5)


def test_rules_drive_a_trained_tiny_transformer():
    """A real torch network (the shipped tiny MDM, d = 5, K = 26): the rules run on its conditionals
    and size their own steps — f huge commits everything at once, f = 0 without the quirk one token
    per step (no confidence of this network is exactly 1), Fréchet at δ = 0.25 in between."""
    model = bridge.tiny.load_pretrained("words")
    d, n = 5, 8
    runs, sims = {}, {}
    for key, planner in {"all": FactorPlanner(1e9), "one": FactorPlanner(0.0, reference_quirk=False),
                         "frechet": FrechetPlanner(0.25)}.items():
        sim = bridge.sample(model, d, None, planner, n=n, seed=2)
        assert sim.samples.shape == (n, d) and sim.samples.min() >= 0 and sim.samples.max() < 26
        assert not sim.lost.any()
        runs[key], sims[key] = sim.steps, sim
    assert (runs["all"] == 1).all() and (runs["one"] == d).all()
    assert ((1 <= runs["frechet"]) & (runs["frechet"] <= d)).all()
    # Fréchet, step by step: replayed from the network's own conditionals at each visited state,
    # each step reveals the n most confident masked positions, n = 1 + #{n >= 2 : G_n > δ} with
    # G_n = Σ_{j<=n} c_(j) - (n - 1) - (1 - c_(n)) (Fast-dLLM++ eq. 5; the count written out here)
    sim, oracle = sims["frechet"], bridge.model_law(model, d)
    for t in range(1, int(sim.steps.max()) + 1):
        rv = (sim.reveal_step > 0) & (sim.reveal_step < t)
        rows = np.flatnonzero(~rv.all(axis=1))
        conf = oracle.conditionals(sim.samples[rows], rv[rows]).max(axis=-1)
        for r, c in zip(rows, conf):
            free = ~rv[r]
            cs = np.sort(c[free])[::-1]
            want = 1 + sum(1 for k in range(2, cs.size + 1) if cs[:k].sum() - (k - 1) - (1 - cs[k - 1]) > 0.25 + 1e-12)
            got = sim.reveal_step[r] == t
            assert got.sum() == want, (t, r, cs)
            assert c[got].min() >= c[free & ~got].max(initial=-np.inf) - 1e-12  # the most confident ones
