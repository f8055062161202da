"""Exports for the serving engines (issue 29 §2): SGLang's ``--dllm-algorithm`` + YAML and
vLLM's ``DiffusionConfig``, checked against each engine's source — restated here as small
tables and rules, each with its file and line — and, where the engine imports, against its
own code (skipped otherwise, with the reason).

Sources: sglang 0.5.23 and vllm 0.34.0, the PyPI wheels (sha256 00b3cd5b…9937 and
79ca4b3c…4ca2), read file by file; the rules match sgl-project/sglang
``python/sglang/srt/dllm/algorithm/low_confidence.py`` at commit
0564b5215b333749d722348c3b3d9b92c3de8c44 and vllm-project/vllm ``vllm/config/diffusion.py`` at
commit 5c6ec2cc60d253d4d4341c0606fc3c0bbed9c930.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.exports.sglang import SGLANG_VERSION, to_sglang
from mdmtheory.exports.vllm import VLLM_VERSION, to_vllm

# == SGLang ====================================================================================
#: sglang 0.5.23: the server options (sglang/srt/arg_groups/fields/exec_.py lines 1129-1142).
SGLANG_OPTIONS = {"--dllm-algorithm": ("str", None), "--dllm-algorithm-config": ("path of a YAML file", None),
                  "--dllm-fdfo": ("bool", True)}
#: algorithm -> the YAML keys its __init__ reads, default (sglang/srt/dllm/algorithm/<file>.py, lines).
SGLANG_ALGORITHMS = {
    "LowConfidence": {"threshold": 0.95},  # low_confidence.py:17
    "JointThreshold": {"threshold": 0.5, "edit_threshold": 0, "max_post_edit_steps": 16,
                       "penalty_lambda": 0},  # joint_threshold.py:117-122
    "JointThresholdInDel": {"threshold": 0.5, "edit_threshold": 0, "max_post_edit_steps": 16},  # :24-27
    "Gemma4Renoise": {"max_denoising_steps": 48},  # gemma4_renoise.py:180 (and its sections)
}
#: read by config.py for every algorithm: yaml.safe_load of a mapping (148-151), block_size (154).
SGLANG_COMMON = {"block_size": int}


def low_confidence_step(conf_greedy, masked, threshold):
    """One LowConfidence step as low_confidence.py lines 33-48 write it, for one row: ``done``
    when no mask is left at the step's start; else commit every mask whose greedy-token
    probability is *strictly* above ``threshold``, or, when none is, the most confident mask
    (torch.argmax: the first of equal ones)."""
    if not masked.any():
        return True, np.zeros_like(masked)
    c = np.where(masked, conf_greedy, -np.inf)
    take = c > threshold
    if not take.any():
        take = np.zeros_like(masked)
        take[int(np.argmax(c))] = True
    return False, take


def sglang_block(logits_fn, B, threshold, masks=None):
    """A block run by ``DllmAlgorithm._run_sync`` (base.py lines 119-133): a forward, then
    steps until one finds no mask, a forward after each that did not. Returns (committed per
    step, forwards)."""
    masked = np.ones(B, dtype=bool) if masks is None else masks.copy()
    forwards, seen = 1, []
    probs = logits_fn(masked)
    for _ in range(B + 1):  # max_steps = block_size + 1 (base.py:72-73)
        done, take = low_confidence_step(probs.max(axis=-1), masked, threshold)
        if done:
            break
        seen.append(int(take.sum()))
        masked &= ~take
        probs = logits_fn(masked)
        forwards += 1
    return seen, forwards


def _softmax32(z):
    z = np.asarray(z, dtype=np.float32)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _models(B, V=6, seed=0):
    """Random logits, uniform ones (greedy probability exactly 1/V) and logits so peaked that
    float32 rounds the greedy probability to 1.0 — the cases where a threshold rule could
    commit other than the design."""
    rng = np.random.default_rng(seed)
    peaked = np.zeros((B, V), dtype=np.float32)
    peaked[:, 0] = 200.0
    return [lambda m, r=rng: _softmax32(3 * r.standard_normal((B, V))), lambda m: _softmax32(np.zeros((B, V))),
            lambda m: _softmax32(peaked)]


@pytest.mark.parametrize("sizes, B", [((1, 1, 1, 1), None), ((1,) * 6, 2), ((4,), None), ((2, 2, 2), 2), ((1,), None)])
def test_sglang_export_runs_the_design_under_the_sources_rule(sizes, B):
    e = to_sglang(mt.Schedule(sizes), block_length=B)
    import yaml

    cfg = yaml.safe_load(e["yaml"])  # config.py:148: what the server reads from --dllm-algorithm-config
    assert isinstance(cfg, dict) and cfg == e["dllm_algorithm_config"]
    assert e["dllm_algorithm"] in SGLANG_ALGORITHMS
    assert set(cfg) <= set(SGLANG_ALGORITHMS[e["dllm_algorithm"]]) | set(SGLANG_COMMON)
    assert isinstance(cfg["block_size"], int) and isinstance(cfg["threshold"], float)
    assert e["launch"] == ["--dllm-algorithm", "LowConfidence", "--dllm-algorithm-config", "CONFIG.yaml"]
    assert set(e["launch"][::2]) <= set(SGLANG_OPTIONS)
    Bk = cfg["block_size"]
    d = sum(sizes)
    design = [list(sizes[i:i + len(sizes) * Bk // d]) for i in range(0, len(sizes), len(sizes) * Bk // d)]
    assert e["counts"] == design and e["engine"] == f"sglang {SGLANG_VERSION}"
    for model in _models(Bk):
        for row in design:
            seen, forwards = sglang_block(model, Bk, cfg["threshold"])
            assert seen == row and forwards == e["forwards_per_block"] == len(row) + 1
    assert e["forwards"] == e["forwards_per_block"] * (d // Bk)


def test_sglang_default_threshold_would_not_run_the_design():
    """Control: the algorithm's own default (0.95) commits every peaked mask at once, so the
    check above can fail, and the exported threshold matters."""
    seen, _ = sglang_block(_models(4)[2], 4, SGLANG_ALGORITHMS["LowConfidence"]["threshold"])
    assert seen == [4] != to_sglang([1, 1, 1, 1])["counts"][0]


@pytest.mark.parametrize("sizes, B, match", [
    ((1, 3), None, r"^plan: SGLang 0\.5\.23 has no per-step counts: .* this one commits \[\[1, 3\]\] in blocks of 4"),
    ((2, 2), None, r"^plan: SGLang .* one token per step \(LowConfidence threshold 1\.0\) or one step"),
    ((1, 1, 2), 2, r"^plan: .*commits \[\[1, 1\], \[2\]\] in blocks of 2"),  # mixed rules: one threshold
    ((2, 2), 3, r"^block_length: must divide d=4"),
])
def test_sglang_refuses_what_a_threshold_cannot_run(sizes, B, match):
    with pytest.raises(ValueError, match=match):
        to_sglang(mt.Schedule(sizes), block_length=B)


def _engine_low_confidence():
    """sglang's own ``LowConfidence`` class, or a skip when sglang is not installed. Imported
    when the serving stack imports (torch, triton, torchvision, sgl-kernel, ...); else its
    installed low_confidence.py is compiled with its three ``from sglang...`` imports (the
    base class, DllmConfig and ForwardBatch, used only as names and for ``block_size`` /
    ``mask_id``) stubbed: the step that decides the commits is the engine's code, unchanged."""
    import importlib.util
    import re
    import types

    spec = importlib.util.find_spec("sglang")
    if spec is None:
        pytest.skip("sglang is not installed (pip install sglang; this test runs its LowConfidence.step)")
    try:
        from sglang.srt.dllm.algorithm.low_confidence import LowConfidence

        return LowConfidence
    except Exception:  # noqa: BLE001 - the serving stack does not import here: compile the one file
        pass
    import os

    path = os.path.join(spec.submodule_search_locations[0], "srt", "dllm", "algorithm", "low_confidence.py")
    src = open(path, encoding="utf-8").read()
    src, n = re.subn(r"^from sglang\..*$", "", src, flags=re.M)
    assert n == 3, f"{path}: expected its three sglang imports, found {n}"

    class DllmAlgorithm:  # base.py: __init__ keeps block_size and mask_id (and fdfo)
        def __init__(self, config):
            self.block_size, self.mask_id, self.fdfo = config.block_size, config.mask_id, False

    ns = {"DllmAlgorithm": DllmAlgorithm, "DllmConfig": object, "ForwardBatch": object,
          "__name__": "low_confidence"}
    exec(compile(src, path, "exec"), ns)  # noqa: S102 - the engine's source, as installed
    return ns["LowConfidence"]


@pytest.mark.parametrize("sizes, B", [((1, 1, 1, 1), None), ((4,), None), ((1,) * 6, 2), ((2, 2, 2), 2)])
def test_sglang_engine_step_runs_the_export(sizes, B):
    """sglang's own LowConfidence.step, configured from the exported YAML, commits the design,
    in the forwards the export says (the loop of base.py's ``_run_sync`` around it)."""
    LowConfidence = _engine_low_confidence()
    torch = pytest.importorskip("torch")
    import yaml

    e = to_sglang(mt.Schedule(sizes), block_length=B)
    cfg = yaml.safe_load(e["yaml"])
    Bk, V = cfg["block_size"], 6
    algo = LowConfidence(SimpleNamespace(algorithm=e["dllm_algorithm"], algorithm_config=cfg, block_size=Bk,
                                         mask_id=V, first_done_first_out_mode=False))
    for model in _models(Bk, V):
        for row in e["counts"]:
            ids = torch.full((Bk,), V, dtype=torch.long)
            fb = SimpleNamespace(batch_size=1, input_ids=ids, dllm_prompt_mask=None)
            seen, forwards = [], 1
            for _ in range(Bk + 1):
                before = int((ids == V).sum())
                logits = torch.log(torch.tensor(model((ids == V).numpy())).clamp_min(1e-30))
                logits = torch.cat([logits, torch.full((Bk, 1), -1e9)], dim=-1)  # the mask id's column
                if all(algo.step(fb, logits, [None])):
                    break
                seen.append(before - int((ids == V).sum()))
                forwards += 1
            assert seen == row and forwards == e["forwards_per_block"]


# == vLLM ======================================================================================
#: vllm 0.34.0 vllm/config/diffusion.py: the fields of DiffusionConfig (a pydantic dataclass,
#: extra="forbid" by vllm/config/utils.py:72): name -> (type, constraint, default), lines 20-27.
VLLM_DIFFUSION_CONFIG = {"canvas_length": (int, "gt 0", None), "max_denoising_steps": ((int, type(None)), None, None)}
#: vllm/utils/diffusion.py lines 75-80: a request's step cap.
VLLM_EXTRA_ARGS = {"diffusion_max_steps": "positive int, not bool"}
#: generation_config.json keys the DiffusionGemma model runner reads
#: (vllm/model_executor/models/diffusion_gemma.py lines 881, 892, 931-954).
VLLM_GENERATION_CONFIG = {"max_denoising_steps", "stability_threshold", "t_min", "t_max", "confidence_threshold",
                          "sampler_config"}


def _diffusion_config_class():
    """DiffusionConfig as vllm/config/diffusion.py declares it, with vllm/config/utils.py's
    default ``ConfigDict(extra="forbid")``: the engine's parsing, restated (vLLM itself does
    not import here)."""
    from pydantic import ConfigDict, Field
    from pydantic.dataclasses import dataclass

    @dataclass(config=ConfigDict(extra="forbid"))
    class DiffusionConfig:
        canvas_length: int = Field(default=None, gt=0)
        max_denoising_steps: int | None = None

    return DiffusionConfig


@pytest.mark.parametrize("sizes, B", [((1, 2, 1), None), ((2, 2, 1, 3), 4), ((3, 1, 2, 2), 4)])
def test_vllm_budget_parses_as_diffusion_config(sizes, B):
    pytest.importorskip("pydantic")
    e = to_vllm(mt.Schedule(sizes), block_length=B, budget_only=True)
    cls = _diffusion_config_class()
    cfg = cls(**json.loads(e["cli"][1]))  # arg_utils.py 1907-1909 and 2215-2221: json.loads, then **cfg
    assert e["cli"][0] == "--diffusion-config" and set(e["diffusion_config"]) <= set(VLLM_DIFFUSION_CONFIG)
    Bk = B or sum(sizes)
    steps = {len(r) for r in e["counts"]}
    assert cfg.canvas_length == Bk and {cfg.max_denoising_steps} == steps and e["exact"] is False
    assert set(e["generation_config"]) <= VLLM_GENERATION_CONFIG and set(e["extra_args"]) <= set(VLLM_EXTRA_ARGS)
    cap = e["extra_args"]["diffusion_max_steps"]
    assert isinstance(cap, int) and not isinstance(cap, bool) and cap > 0
    assert e["max_forwards_per_block"] == cfg.max_denoising_steps + 1 and e["engine"] == f"vllm {VLLM_VERSION}"
    with pytest.raises(Exception):  # the restated class can refuse: the check above can fail
        cls(canvas_length=0)
    with pytest.raises(Exception):
        cls(canvas_length=4, counts=[1, 3])


def test_vllm_engine_parses_the_export():
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        pytest.skip("vllm is not installed (pip install vllm; the test imports only vllm.config.diffusion)")
    try:
        from vllm.config.diffusion import DiffusionConfig
    except Exception as exc:  # noqa: BLE001 - any failure to import the engine is a skip
        pytest.skip(f"vllm does not import here ({type(exc).__name__}: {exc})")
    e = to_vllm(mt.Schedule((2, 2)), budget_only=True)
    cfg = DiffusionConfig(**json.loads(e["cli"][1]))
    assert (cfg.canvas_length, cfg.max_denoising_steps) == (4, 2)
    import dataclasses

    assert {f.name for f in dataclasses.fields(DiffusionConfig)} == set(VLLM_DIFFUSION_CONFIG)  # the table above
    for bad in ({"canvas_length": 0}, {"canvas_length": 4, "counts": [2, 2]}):
        with pytest.raises(Exception):
            DiffusionConfig(**bad)


@pytest.mark.parametrize("kw, match", [
    ({}, r"^plan: vLLM 0\.34\.0 has no per-step counts: .*DiffusionGemma.*budget_only=True"),
    ({"budget_only": 1}, r"^budget_only: expected True or False"),
    ({"budget_only": True, "block_length": 2}, r"^block_length: the schedule spends \[1, 2\] steps"),
    ({"budget_only": True, "block_length": 3}, r"^block_length: must divide d=4"),
])
def test_vllm_refusals(kw, match):
    with pytest.raises(ValueError, match=match):
        to_vllm(mt.Schedule((2, 1, 1)), **kw)


# == the CLI ===================================================================================
def test_cli_design_prints_the_engine_exports(tmp_path, capsys):
    """``mdmtheory design --format sglang|vllm``: the export of the designed schedule, and a
    refusal naming the option and what SGLang lacks when a threshold cannot run the design."""
    from mdmtheory.cli import main

    data = tmp_path / "x.txt"
    data.write_text("0 1 0 1\n1 0 1 0\n0 0 1 1\n1 1 0 0\n")
    for steps, sglang_ok in ((4, True), (1, True), (2, False)):
        argv = ["design", "--data", str(data), "--steps", str(steps), "--json"]
        assert main(argv + ["--format", "vllm"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["export"]["diffusion_config"] == {"canvas_length": 4, "max_denoising_steps": steps}
        rc = main(argv + ["--format", "sglang"])
        captured = capsys.readouterr()
        if sglang_ok:
            e = json.loads(captured.out)["export"]
            assert rc == 0 and e["counts"] == [[1] * 4 if steps == 4 else [4]]
        else:
            # refused before estimating, naming the --steps SGLang runs (issue 39 item 3)
            assert rc == 2 and "--format sglang: --steps 2 on a response of 4 tokens" in captured.err
            assert "--steps 4 (one token per step)" in captured.err and "nothing was estimated" in captured.err
