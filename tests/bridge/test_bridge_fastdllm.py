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
    n = 6000
    samples = bridge.sample(bridge.ExactModel(P), 4, None, planner, n=n, seed=5).samples
    q = exact_run(P, None, planner).law.table.ravel()
    freq = np.bincount(np.ravel_multi_index(samples.T, P.table.shape), minlength=q.size) / n
    se = np.sqrt(np.maximum(q * (1 - q), 1e-12) / n)
    assert np.all(np.abs(freq - q) / se < 4.5)
