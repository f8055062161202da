"""Every sampler on a torch model (issue 20 Done-when): the model as the oracle of the Monte
Carlo samplers; on an ExactModel the samples follow the exact laws (z-scores)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

import mdmtheory as mt  # noqa: E402
from mdmtheory import bridge  # noqa: E402
from mdmtheory.schedules import RandomSchedule
from mdmtheory.samplers import random_schedule_law  # noqa: E402
from mdmtheory.samplers import (RemaskingSampler, SampleThenSelectPlanner, exact_run, revise_run,  # noqa: E402
                                select_run)

P = mt.families.dirichlet(4, 2, alpha=0.7, seed=4)  # full support: an ExactModel loses nothing either


def _z(law, samples, n):
    q = law.table.ravel()
    freq = np.bincount(np.ravel_multi_index(samples.T, P.table.shape), minlength=q.size) / n
    se = np.sqrt(np.maximum(q * (1 - q), 1e-12) / n)
    return np.abs(freq - q) / se


@pytest.mark.parametrize("case", ["sts", "grid", "random_sizes", "remdm"])
def test_samplers_on_an_exact_model_follow_the_exact_law(case):
    model = bridge.ExactModel(P)
    n = 6000
    if case == "sts":
        sim = bridge.sample(model, 4, mt.Schedule((2, 2)), SampleThenSelectPlanner(), n=n, seed=0)
        law, samples = select_run(P, mt.Schedule((2, 2))).law, sim.samples
    elif case == "grid":
        g = mt.Grid((0.0, 0.4, 1.0))
        law, samples = exact_run(P, g).law, bridge.sample(model, 4, g, n=n, seed=1).samples
    elif case == "random_sizes":
        rs = RandomSchedule({(2, 2): 0.5, (1, 3): 0.5})
        law, samples = random_schedule_law(P, rs), bridge.sample(model, 4, rs, n=n, seed=2).samples
    else:
        s = RemaskingSampler.uniform(3, 0.5)
        law = revise_run(P, s).law
        sim = s.simulate(bridge.model_law(model, 4), n=n, seed=3)
        samples, lost = sim.samples, sim.lost
        assert not lost.any()
    assert np.all(_z(law, samples, n) < 4.5)


def test_model_law_is_not_a_data_source():
    law = bridge.model_law(bridge.ExactModel(P), 4)
    with pytest.raises(ValueError, match=r"^law: a model is not a data source"):
        law.sample(3, np.random.default_rng(0))


def test_sample_then_select_runs_on_the_shipped_tiny_model():
    model = bridge.tiny.load_pretrained("words")
    sim = bridge.sample(model, 5, mt.Schedule((2, 1, 2)), SampleThenSelectPlanner(temperature=0.5), n=40, seed=0)
    assert sim.samples.shape == (40, 5) and sim.samples.min() >= 0 and sim.samples.max() < 26
    assert not sim.lost.any() and (sim.steps == 3).all()
