"""The vLLM dllm plugin runs designed per-step counts as ``num_transfer`` (issue 39 item 8).

Read: vllm-project/dllm-plugin at 0c53db5, ``vllm_dllm_plugin/remasking/llada2_default.py``
(``Llada2DefaultRemaskingPolicy.apply``) and ``vllm_dllm_plugin/config.py``. The reader, as
read: the keys ``commit_confidence_threshold`` (float), ``mask_token_id``, ``denoise_steps``,
``denoise_step_index`` (ints) and ``num_transfer`` (int >= 0, overriding the schedule entry);
h = the masked positions with arg-max probability strictly above the threshold; if h >=
num_transfer all h are committed, else the min(num_transfer, masked) most confident masked
positions; the block is emitted when no mask is left. DRAFT_SIZE = 32. The plugin is not
installed here (it needs vLLM); the test applies that reading to the exported mappings with
arbitrary probabilities in [0, 1], written here, not taken from the package.
"""

from __future__ import annotations

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.exports.vllm import DLLM_PLUGIN_DRAFT_SIZE, dllm_plugin_configs, to_vllm

KEYS = {"commit_confidence_threshold": float, "mask_token_id": int, "denoise_steps": int, "denoise_step_index": int,
        "num_transfer": int}


def _commits(cfg, probs, masked):
    """How many positions one step of the plugin commits, by the reading above."""
    thr = float(cfg["commit_confidence_threshold"])
    h = int(np.sum(masked & (probs > thr)))
    k = int(cfg["num_transfer"])
    assert k >= 0
    return h if h >= k else min(k, int(masked.sum()))


@pytest.mark.parametrize("sizes", [(32,), (1,) * 32, (5, 11, 16), (16, 16, 30, 2), (3, 29, 32)])
def test_each_step_commits_its_designed_count(sizes):
    assert DLLM_PLUGIN_DRAFT_SIZE == 32
    plan = mt.Schedule(sizes)
    cfgs = dllm_plugin_configs(plan, block_length=32, mask_token_id=7)
    rng = np.random.default_rng(len(sizes))
    designed = _cut(sizes)
    assert len(cfgs) == plan.d // 32
    for b, block in enumerate(cfgs):
        masked = np.ones(32, bool)
        got = []
        for t, cfg in enumerate(block):
            assert set(cfg) == set(KEYS) and all(isinstance(cfg[k], v) for k, v in KEYS.items())
            assert cfg["denoise_step_index"] == t and cfg["denoise_steps"] == len(block) and cfg["mask_token_id"] == 7
            probs = rng.random(32)
            probs[rng.integers(32)] = 1.0  # a certain position is still not strictly above 1.0
            n = _commits(cfg, probs, masked)
            idx = np.flatnonzero(masked)[:n]
            masked[idx] = False
            got.append(n)
        assert got == designed[b]
        assert not masked.any()  # the block is emitted after its last step


def _cut(sizes):
    """The schedule cut into blocks of 32 by hand (sizes never straddle a boundary here)."""
    out, row, acc = [], [], 0
    for k in sizes:
        row.append(k)
        acc += k
        if acc % 32 == 0:
            out.append(row)
            row = []
    return out


def test_to_vllm_adds_the_plugin_configs_where_it_runs_them():
    e = to_vllm(mt.Schedule((16, 16)), budget_only=True)
    assert e["dllm_plugin"] == dllm_plugin_configs(mt.Schedule((16, 16)))
    e = to_vllm(mt.Schedule((2, 2)), budget_only=True)
    assert e["dllm_plugin"] is None and "blocks of 32" in e["note"]
    with pytest.raises(ValueError, match="^block_length:.*DRAFT_SIZE = 32"):
        dllm_plugin_configs(mt.Schedule((2, 2)))
    with pytest.raises(ValueError, match="dllm_plugin_configs"):
        to_vllm(mt.Schedule((16, 16)))
