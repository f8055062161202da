"""The exact engine's benchmark scripts run (small sizes on CPU), in this process: the
ratios they print come from laws that agree with their references (each script exits with
an error when they do not)."""

import importlib.util
import re
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name):
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bench_engine_small(capsys):
    assert _load("bench_engine").main(["--profile-d", "8", "--law-d", "6", "--planner-d", "6",
                                       "--planners", "confidence", "--reps", "1"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if re.match(r"^\s+6\s+confidence\s", line)]
    assert len(rows) == 1
    assert float(rows[0][5]) < 1e-15  # max |dq| between the chain and the per-state reference


def test_gpu_exact_quick_runs_on_cpu(capsys):
    _load("gpu_exact").main(["--quick", "--law-backend", "numpy"])
    out = capsys.readouterr().out
    assert re.search(r"^\s+law\s+6\s", out, re.M) and re.search(r"^\s+profile\s+10\s", out, re.M)


def test_bench_select_and_revise_quick(capsys):
    assert _load("bench_select").main(["--quick", "--reps", "1"]) == 0
    assert _load("bench_revise").main(["--quick", "--reps", "1"]) == 0
    out = capsys.readouterr().out
    assert "ReMDM" in out and "corrector" in out and "editing" in out


def test_bench_cost_quick(capsys):
    """issue 31 item 14: the import and --help rows, each in a fresh process; the script's own
    checks (--help at most 0.5 s of CPU, no JAX on import) decide its exit status."""
    rc = _load("bench_cost").main(["--quick"])
    out = capsys.readouterr().out
    assert re.search(r"^\| import mdmtheory\s+\| [\d.]+ \(", out, re.M) and "met: import mdmtheory loads no jax" in out
    assert rc == 0, out
