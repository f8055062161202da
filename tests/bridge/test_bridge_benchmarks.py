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


def test_gpu_bridge_quick_runs_on_cpu(capsys):
    assert _load("gpu_bridge").main(["--quick", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "@@RESULT" in out and '"device": "cpu"' in out


def test_bench_bridge_quick_agrees_with_the_naive_loop(capsys):
    assert _load("bench_bridge").main(["--quick"]) == 0
    assert "largest difference between the two" in capsys.readouterr().out
