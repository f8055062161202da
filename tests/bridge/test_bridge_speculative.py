"""The speculative samplers (issue 28 item 9) driven by a torch model: on an ExactModel of a table
the samples follow the joint and the model's calls per sample follow the exact law of ASSD's
forward count (``speculative_run``); the calls are counted on the torch module itself (a forward
hook), and the shipped tiny transformer runs the loop."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

import mdmtheory as mt  # noqa: E402
from mdmtheory import bridge  # noqa: E402
from mdmtheory.samplers import SpeculativeSampler, speculative_run  # noqa: E402

P = mt.families.dirichlet(4, 2, alpha=0.4, seed=1)


def _z_ok(counts, q, n, bound=4.5):
    freq = counts / n
    se = np.sqrt(np.maximum(q * (1 - q), 1e-12) / n)
    return bool(np.all(counts[q == 0] == 0) and np.all(np.abs(freq - q) / se < bound))


@pytest.mark.parametrize("scheme, W, order", [("assd", None, None), ("assd", 3, (2, 0, 3, 1)),
                                              ("self_speculative", None, (3, 1, 0, 2))])
def test_exact_model_samples_the_joint_and_calls_follow_the_exact_count(scheme, W, order):
    n = 3000
    s = SpeculativeSampler(scheme, W, order)
    sim = bridge.speculative_sample(bridge.ExactModel(P), 4, s, n=n, seed=7)
    assert not sim.lost.any() and sim.scheme == scheme
    law = np.bincount(np.ravel_multi_index(sim.samples.T, P.table.shape), minlength=16).astype(float)
    assert _z_ok(law, P.table.ravel(), n)  # exact: the joint itself
    # the model's calls: ASSD's count (draft call + one verify call unless one position is left)
    calls = speculative_run(P, SpeculativeSampler("assd", W, order)).forwards_law
    assert _z_ok(np.bincount(sim.calls, minlength=calls.size).astype(float), calls, n)
    own = speculative_run(P, s).forwards_law  # the scheme's count (self-speculative: one pass per iteration)
    assert _z_ok(np.bincount(sim.forwards, minlength=own.size).astype(float), own, n)


class _Counted(bridge.ExactModel):
    """The exact model that counts its forward invocations."""

    def __init__(self, p):
        super().__init__(p)
        self.invocations = 0

    def forward(self, ids):
        self.invocations += 1
        return super().forward(ids)


def test_calls_are_the_model_invocations():
    """Two samples share a call when they are at the same point of the order, so the torch
    module runs between max(calls) and sum(calls) times; on parity both take one iteration of
    the full window (2 calls, shared): the module runs exactly twice."""
    for seed in range(6):
        m = _Counted(P)
        sim = bridge.speculative_sample(m, 4, SpeculativeSampler("assd"), n=2, seed=seed)
        assert (sim.calls == sim.forwards).all()
        assert sim.calls.max() <= m.invocations <= sim.calls.sum()
    m = _Counted(mt.families.parity(5))
    sim = bridge.speculative_sample(m, 5, SpeculativeSampler("assd"), n=2, seed=0)
    assert sim.calls.tolist() == [2, 2] and m.invocations == 2
    with pytest.raises(ValueError, match="^planner: "):
        bridge.speculative_sample(bridge.ExactModel(P), 4, "assd", n=2, seed=0)


def test_speculation_drives_the_trained_tiny_transformer():
    """The shipped tiny MDM (d = 5, K = 26) as drafter and verifier: valid tokens, at most d calls
    for ASSD's full window (each iteration of 2 calls reveals >= 2 tokens), one pass per
    iteration for the self-speculative count, and the network runs between max(calls) and
    sum(calls) times for two samples."""
    model = bridge.tiny.load_pretrained("words")
    runs = []
    hook = model.register_forward_hook(lambda *a: runs.append(1))
    try:
        for scheme in ("assd", "self_speculative"):
            for seed in range(2):
                runs.clear()
                sim = bridge.speculative_sample(model, 5, SpeculativeSampler(scheme), n=2, seed=seed)
                assert sim.samples.shape == (2, 5) and 0 <= sim.samples.min() and sim.samples.max() < 26
                assert not sim.lost.any() and sim.calls.max() <= len(runs) <= sim.calls.sum() and sim.calls.max() <= 5
                want = sim.calls if scheme == "assd" else (sim.calls + 1) // 2  # iterations: 2 calls, the last maybe 1
                assert (sim.forwards == want).all()
    finally:
        hook.remove()
