"""DEMASK's rule (issue 28 item 4) driven by a torch model: the dependencies come from the model's
conditionals at x_A and at (x_A, x_j = v) (mdmtheory/samplers/demask.py); on an ExactModel the
bridge's samples follow the exact engine's law of the same rule (z-scores)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

import mdmtheory as mt  # noqa: E402
from mdmtheory import bridge  # noqa: E402
from mdmtheory.samplers import DemaskPlanner, exact_run  # noqa: E402

P = mt.families.dirichlet(4, 2, alpha=0.4, seed=1)


def test_rule_on_an_exact_model_follows_the_exact_law():
    n = 800
    samples = bridge.sample(bridge.ExactModel(P), 4, None, DemaskPlanner(0.05), n=n, seed=5).samples
    q = exact_run(P, None, DemaskPlanner(0.05, law=P)).law.table.ravel()
    freq = np.bincount(np.ravel_multi_index(samples.T, P.table.shape), minlength=q.size) / n
    se = np.sqrt(np.maximum(q * (1 - q), 1e-12) / n)
    assert np.all(np.abs(freq - q) / se < 4.5)


@pytest.mark.slow
def test_rule_drives_a_trained_tiny_transformer():
    """(slow: ~25 s on 2 cores, d·K = 130 model rows per step) The shipped tiny MDM (d = 5, K = 26): a huge budget commits everything at once, tau = 0 with
    min_confidence = 1 one token per step, tau = 0.05 in between."""
    model = bridge.tiny.load_pretrained("words")
    d, n = 5, 4
    runs = {}
    for key, planner in {"all": DemaskPlanner(1e9), "one": DemaskPlanner(0.0, min_confidence=1.0),
                         "mid": DemaskPlanner(0.05)}.items():
        sim = bridge.sample(model, d, None, planner, n=n, seed=2)
        assert sim.samples.shape == (n, d) and sim.samples.min() >= 0 and sim.samples.max() < 26
        assert not sim.lost.any()
        runs[key] = sim.steps
    assert (runs["all"] == 1).all() and (runs["one"] == d).all()
    assert ((1 <= runs["mid"]) & (runs["mid"] <= d)).all()
