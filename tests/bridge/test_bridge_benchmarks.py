"""The bridge's benchmark scripts run (``--quick``: small sizes on CPU), in this process."""

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name):
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))  # the scripts import benchmarks/_util.py as _util
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _result(out):
    import json

    return json.loads(next(line for line in out.splitlines() if line.startswith("@@RESULT "))[len("@@RESULT "):])


def test_gpu_bridge_quick_runs_on_cpu(capsys):
    assert _load("gpu_bridge").main(["--quick", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "@@RESULT" in out and '"device": "cpu"' in out
    # issue 18: the prompted, block-wise section (block b given the prompt and blocks < b)
    res = _result(out)
    g, L = res["prompt_length"], res["block_length"]
    assert "prompted blocks" in out and len(res["blocks"]) == 4
    assert [b["prompt_length"] for b in res["blocks"]] == [g + b * L for b in range(4)]
    assert all(b["response_length"] == L and b["forwards_per_s"] > 0 for b in res["blocks"])


def test_bridge_throughput_quick_runs(capsys):
    assert _load("bench_bridge_throughput").main(["--quick"]) == 0
    res = _result(capsys.readouterr().out)
    assert res["attention"] == "sdpa"  # bridge.from_pretrained's default load
    assert set(res["ratio_median"]) == {"all ids but the mask", "one slice (5..V-1)"}
    assert all(r["cpu"] > 0 and r["wall"] > 0 for r in res["ratio_median"].values())


def test_bench_bridge_quick_agrees_with_the_naive_loop(capsys):
    assert _load("bench_bridge").main(["--quick"]) == 0
    assert "largest difference between the two" in capsys.readouterr().out
