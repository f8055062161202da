"""Exports for the serving engines (issue 29 §2): SGLang's ``--dllm-algorithm`` + YAML and
vLLM's ``DiffusionConfig``, checked against each engine's source — restated here as small
tables and rules, each with its file and line — and against the engine's own code: SGLang's
``LowConfidence`` class and vLLM's ``DiffusionConfig``, run from the installed engine or else
from the wheels' files stored verbatim in engine_sources (their RECORD hashes checked).

Sources: sglang 0.5.23 and vllm 0.34.0, the PyPI wheels (sha256 00b3cd5b…9937 and
79ca4b3c…4ca2), read file by file; the rules match sgl-project/sglang
``python/sglang/srt/dllm/algorithm/low_confidence.py`` at commit
0564b5215b333749d722348c3b3d9b92c3de8c44 and vllm-project/vllm ``vllm/config/diffusion.py`` at
commit 5c6ec2cc60d253d4d4341c0606fc3c0bbed9c930.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.exports.sglang import SGLANG_VERSION, to_sglang
from mdmtheory.exports.vllm import VLLM_VERSION, to_vllm

#: The engines' own files, stored verbatim under tests/exports/engine_sources (Apache-2.0) so
#: that the default run executes the engines' code without installing the engines: name ->
#: (wheel, the file's path in it, its sha256 as the wheel's RECORD lists it). The wheels:
#: https://pypi.org/project/vllm/0.34.0/ (vllm-0.34.0-cp38-abi3-manylinux_2_28_x86_64.whl,
#: sha256 79ca4b3cd74aec08c4bf476bdf0cb15735b605ae5368526a2faae1e30f044ca2) and
#: https://pypi.org/project/sglang/0.5.23/ (sglang-0.5.23-cp311-cp311-manylinux_2_34_x86_64.whl,
#: sha256 00b3cd5b265ac76c64185fbb6b95424f324ddd9f428d0306b77bc9db9d859937).
ENGINE_SOURCES = Path(__file__).parent / "engine_sources"
ENGINE_FILES = {
    "vllm-0.34.0_vllm_config_diffusion.py.txt": (
        "vllm-0.34.0", "vllm/config/diffusion.py", "H6n9JHioZgmKKKNYa1WvL5c4ZWt4E6VddlOcEN2Z_o0"),
    "vllm-0.34.0_vllm_config_utils.py.txt": (
        "vllm-0.34.0", "vllm/config/utils.py", "X2iGIZbOS9-1SSUOq9kFNE6M7syfl4InlSpmducMhxk"),
    "sglang-0.5.23_sglang_srt_dllm_algorithm_base.py.txt": (
        "sglang-0.5.23", "sglang/srt/dllm/algorithm/base.py", "ROnZq-K49CN_SVTL0qzcNI4qzDEv73K6wrbmj5d6Gzg"),
    "sglang-0.5.23_sglang_srt_dllm_algorithm_low_confidence.py.txt": (
        "sglang-0.5.23", "sglang/srt/dllm/algorithm/low_confidence.py", "7We-1t-jeq3Y_iZNjFCgJCyWSQtT-IaSUsa0bvA45QI"),
}


def _engine_source(name):
    """A stored engine file's text, after checking it is byte for byte the wheel's (its RECORD hash)."""
    data = (ENGINE_SOURCES / name).read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    wheel, path, want = ENGINE_FILES[name]
    assert digest == want, f"{name}: not {wheel}'s {path} (sha256 {digest}, the wheel's RECORD says {want})"
    return data.decode("utf-8")


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
    pytest.importorskip("torch")
    LowConfidence = _engine_low_confidence()
    for model in _models(Bk):
        for row in design:
            seen, forwards = _engine_block(LowConfidence, cfg, Bk, model)
            assert seen == row and forwards == e["forwards_per_block"] == len(row) + 1
    assert e["forwards"] == e["forwards_per_block"] * (d // Bk)


@pytest.mark.parametrize("sizes, B, match", [
    ((1, 3), None, r"^schedule: SGLang 0\.5\.23 has no per-step counts: .* this one commits \[\[1, 3\]\] in blocks of 4"),
    ((2, 2), None, r"^schedule: SGLang .* one token per step \(LowConfidence threshold 1\.0\) or one step"),
    ((1, 1, 2), 2, r"^schedule: .*commits \[\[1, 1\], \[2\]\] in blocks of 2"),  # mixed rules: one threshold
    ((2, 2), 3, r"^block_length: must divide d=4"),
])
def test_sglang_refuses_what_a_threshold_cannot_run(sizes, B, match):
    with pytest.raises(ValueError, match=match):
        to_sglang(mt.Schedule(sizes), block_length=B)


def _sglang_source(rel):
    """(path, text) of sglang's ``srt/<rel>``: the installed file, or, when sglang is not
    installed, sglang 0.5.23's as stored in engine_sources (its RECORD hash checked)."""
    import importlib.util
    import os

    spec = importlib.util.find_spec("sglang")
    if spec is None:
        name = "sglang-0.5.23_sglang_srt_" + rel.replace("/", "_") + ".txt"
        return name, _engine_source(name)
    path = os.path.join(spec.submodule_search_locations[0], "srt", *rel.split("/"))
    return path, open(path, encoding="utf-8").read()


def _engine_low_confidence():
    """sglang's own ``LowConfidence`` class on its own ``DllmAlgorithm`` base. Imported when
    the serving stack imports (torch, triton, torchvision, sgl-kernel, ...); else base.py and
    low_confidence.py (installed, or as stored) are compiled with their ``from sglang...``
    imports stubbed: the names they bind are used only in annotations, by the server
    (``from_server_args``) and, in ``_run_sync``, through the model runner and forward batch
    the test passes; ``is_npu`` is False. The loop and the step are the engine's code."""
    try:
        from sglang.srt.dllm.algorithm.low_confidence import LowConfidence

        return LowConfidence
    except Exception:  # noqa: BLE001 - not installed, or the serving stack does not import here
        pass
    path, src = _sglang_source("dllm/algorithm/base.py")
    src, n = re.subn(r"^from sglang\..*$", "", src, flags=re.M)
    assert n == 7, f"{path}: expected its seven sglang imports, found {n}"
    base = {"__name__": "sglang_dllm_algorithm_base", "is_npu": lambda: False}
    base.update(dict.fromkeys(["get_algorithm", "DllmConfig", "LogitsProcessorOutput", "ForwardBatch",
                               "ModelRunner", "ServerArgs"], object))
    exec(compile(src, path, "exec"), base)  # noqa: S102 - the engine's source
    path, src = _sglang_source("dllm/algorithm/low_confidence.py")
    src, n = re.subn(r"^from sglang\..*$", "", src, flags=re.M)
    assert n == 3, f"{path}: expected its three sglang imports, found {n}"
    ns = {"DllmAlgorithm": base["DllmAlgorithm"], "DllmConfig": object, "ForwardBatch": object,
          "__name__": "sglang_dllm_algorithm_low_confidence"}
    exec(compile(src, path, "exec"), ns)  # noqa: S102 - the engine's source
    return ns["LowConfidence"]


def _engine_block(LowConfidence, algorithm_config, B, model, V=6):
    """One block of B masks run by sglang's own ``run`` (``_run_sync``, the default loop) of
    ``LowConfidence`` with ``algorithm_config``, with ``model`` (masked -> probabilities, V
    columns) as the model runner. Returns (committed per step, forwards)."""
    import torch

    algo = LowConfidence(SimpleNamespace(algorithm="LowConfidence", algorithm_config=algorithm_config,
                                         block_size=B, mask_id=V, first_done_first_out_mode=False))
    ids = torch.full((B,), V, dtype=torch.long)
    fb = SimpleNamespace(batch_size=1, input_ids=ids, dllm_prompt_mask=None)
    left = []  # masks at each forward

    def forward(batch, pp_proxy_tensors=None):
        masked = (batch.input_ids == V).numpy()
        left.append(int(masked.sum()))
        logits = torch.log(torch.tensor(model(masked)).clamp_min(1e-30))
        logits = torch.cat([logits, torch.full((B, 1), -1e9)], dim=-1)  # the mask id's column
        return SimpleNamespace(logits_output=SimpleNamespace(full_logits=logits), can_run_graph=False)

    algo.run(SimpleNamespace(forward=forward), fb)
    assert int((ids == V).sum()) == 0, "the engine's loop left masks"
    return [a - b for a, b in zip(left, left[1:])], len(left)


@pytest.mark.parametrize("sizes, B", [((1, 1, 1, 1), None), ((4,), None), ((1,) * 6, 2), ((2, 2, 2), 2)])
def test_sglang_engine_step_runs_the_export(sizes, B):
    """sglang's own LowConfidence, configured from the exported YAML and run by its own block
    loop (base.py's ``_run_sync``), commits the design, in the forwards the export says."""
    pytest.importorskip("torch")
    import yaml

    LowConfidence = _engine_low_confidence()
    e = to_sglang(mt.Schedule(sizes), block_length=B)
    cfg = yaml.safe_load(e["yaml"])
    Bk = cfg["block_size"]
    for model in _models(Bk):
        for row in e["counts"]:
            seen, forwards = _engine_block(LowConfidence, cfg, Bk, model)
            assert seen == row and forwards == e["forwards_per_block"]


def test_sglang_engine_default_threshold_would_not_run_the_design():
    """Control on the engine's code: LowConfidence's own default threshold (no YAML key)
    commits every peaked mask at once, so the check above can fail."""
    pytest.importorskip("torch")
    seen, forwards = _engine_block(_engine_low_confidence(), {"block_size": 4}, 4, _models(4)[2])
    assert (seen, forwards) == ([4], 2) and [4] != to_sglang([1, 1, 1, 1])["counts"][0]


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
    """vLLM 0.34.0's own DiffusionConfig without vLLM installed: its vllm/config/diffusion.py,
    as stored in engine_sources, run unchanged but for its one vLLM import, ``from
    vllm.config.utils import config``, bound to the ``config`` decorator compiled from the same
    wheel's vllm/config/utils.py (its three definitions, taken out by ``ast``: the module's
    other imports — torch, vllm.envs, vllm.logger — are not what the decorator uses)."""
    import ast
    from collections.abc import Callable
    from typing import Any, TypeVar, overload

    from pydantic import ConfigDict
    from pydantic.dataclasses import dataclass
    from pydantic.fields import Field as PydanticField
    from typing_extensions import dataclass_transform

    utils = "vllm-0.34.0_vllm_config_utils.py.txt"
    defs = [n for n in ast.parse(_engine_source(utils)).body if isinstance(n, ast.FunctionDef) and n.name == "config"]
    assert len(defs) == 3, f"{utils}: expected config's two overloads and its body, found {len(defs)}"
    ns = {"ConfigDict": ConfigDict, "dataclass": dataclass, "PydanticField": PydanticField, "Any": Any,
          "Callable": Callable, "overload": overload, "dataclass_transform": dataclass_transform,
          "ConfigT": TypeVar("ConfigT"), "__name__": "vllm.config.utils"}
    exec(compile(ast.Module(body=defs, type_ignores=[]), utils, "exec"), ns)  # noqa: S102 - vLLM's code
    name = "vllm-0.34.0_vllm_config_diffusion.py.txt"
    src, n = re.subn(r"^from vllm\.config\.utils import config$", "", _engine_source(name), flags=re.M)
    assert n == 1, f"{name}: expected its one vllm import, found {n}"
    import sys
    import types

    mod = sys.modules.get("_engine_sources_vllm_config_diffusion")  # pydantic resolves the fields there
    if mod is None:
        mod = types.ModuleType("_engine_sources_vllm_config_diffusion")
        mod.config = ns["config"]
        sys.modules[mod.__name__] = mod
        try:
            exec(compile(src, name, "exec"), mod.__dict__)  # noqa: S102 - vLLM's code
        except BaseException:
            del sys.modules[mod.__name__]
            raise
    return mod.DiffusionConfig


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
    with pytest.raises(Exception):  # the engine's class can refuse: the check above can fail
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
    ({}, r"^schedule: vLLM 0\.34\.0 has no per-step counts: .*DiffusionGemma.*budget_only=True"),
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
            assert rc == 2 and "--format: schedule: SGLang 0.5.23 has no per-step counts" in captured.err
