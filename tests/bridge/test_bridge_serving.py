"""SGLang's dLLM rules (issue 29 §1, mdmtheory.samplers.serving) driven by a torch model: on an
ExactModel of a table the bridge's samples follow the exact law of the same rule (z-scores), and
the rules run on the shipped tiny transformer."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

import mdmtheory as mt  # noqa: E402
from mdmtheory import bridge  # noqa: E402
from mdmtheory.samplers import (  # noqa: E402
    EBSamplingPlanner,
    EntropyThresholdPlanner,
    FullAttnMultiBlockPlanner,
    HierarchyBlockPlanner,
    JointThresholdSampler,
    serving_run,
)

P = mt.families.dirichlet(4, 2, alpha=0.4, seed=1)
RULES = [EntropyThresholdPlanner(0.5), EBSamplingPlanner(0.3), HierarchyBlockPlanner(0.8, sub_block_size=2),
         FullAttnMultiBlockPlanner(0.5, block_size=2), JointThresholdSampler(0.6, edit_threshold=0.7,
                                                                              max_post_edit_steps=1)]
# the default run drives the revising sampler (its own Monte Carlo loop) and one planner; the
# planners share simulate()'s planner path, so the others run under -m slow
PARAMS = [pytest.param(r, id=type(r).__name__,
                       marks=() if isinstance(r, (JointThresholdSampler, HierarchyBlockPlanner)) else pytest.mark.slow)
          for r in RULES]


@pytest.mark.parametrize("rule", PARAMS)
def test_rules_on_an_exact_model_follow_the_exact_law(rule):
    n = 1000
    model = bridge.ExactModel(P)
    sim = bridge.sample(model, 4, None, rule, n=n, seed=5)
    assert not sim.lost.any()
    q = serving_run(P, rule).law.table.ravel()
    freq = np.bincount(np.ravel_multi_index(sim.samples.T, P.table.shape), minlength=q.size) / n
    rare = q * n < 5  # cells too rare for a normal z-score are pooled into one
    q, freq = np.r_[q[~rare], q[rare].sum()], np.r_[freq[~rare], freq[rare].sum()]
    se = np.sqrt(np.maximum(q * (1 - q), 1e-12) / n)
    assert np.all(np.abs(freq - q) / se < 4.5), type(rule).__name__


@pytest.mark.parametrize("rule", [pytest.param(r, id=type(r).__name__, marks=() if isinstance(r, JointThresholdSampler)
                                               else pytest.mark.slow) for r in RULES])
def test_rules_drive_the_tiny_transformer(rule):
    """The shipped tiny MDM (d = 5, K = 26): every rule completes the sequence; JointThreshold
    reports its forwards per sample within the file's bound."""
    model = bridge.tiny.load_pretrained("words")
    d, n = 5, 2
    sim = bridge.sample(model, d, None, rule, n=n, seed=2)
    assert sim.samples.shape == (n, d) and sim.samples.min() >= 0 and sim.samples.max() < 26
    assert not sim.lost.any()
    if isinstance(rule, JointThresholdSampler):
        assert ((2 <= sim.forwards) & (sim.forwards <= rule.max_forwards(d))).all()
    else:
        assert ((1 <= sim.steps) & (sim.steps <= d)).all()
