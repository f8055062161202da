"""``mdmtheory tune`` (issue 37 §3): the JSON is the library's Tuning, errors are one line with
exit code 2, the exports ride along."""

from __future__ import annotations

import json

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.cli import main
from mdmtheory.cli.tune import RULES
from mdmtheory.laws.families import markov_chain


def _run(capsys, argv):
    capsys.readouterr()
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def test_rules_are_the_library_rules():
    assert set(RULES) == set(mt.optimal.TUNABLE)


def test_tune_family_json_is_the_library_record(capsys, tmp_path):
    P = np.array([[0.8, 0.2], [0.3, 0.7]])
    p = markov_chain(P, 5)
    np.save(tmp_path / "t.npy", p.table)
    rc, out, err = _run(capsys, ["tune", "--planner", "threshold", "--forwards", "3.5", "--table",
                                 str(tmp_path / "t.npy"), "--json"])
    assert rc == 0, err
    r = json.loads(out)
    ref = mt.optimal.tune("threshold", p, forwards=3.5)
    assert r["value"] == ref.value and r["forwards"] == pytest.approx(list(ref.forwards), abs=1e-12)
    assert r["kl"] == pytest.approx(list(ref.kl), abs=1e-12) and r["method"] == "exact"
    assert "refused" in r["exports"]["diffusers"]  # Fast-dLLM's threshold is not the pipeline's rule
    rc, out, err = _run(capsys, ["tune", "--planner", "diffusers_threshold", "--forwards", "3.5", "--table",
                                 str(tmp_path / "t.npy"), "--values", "0.5,0.7,0.9", "--json"])
    r = json.loads(out)
    assert rc == 0 and r["exports"]["diffusers"]["pipeline_call"]["threshold"] == r["value"]
    rc, out, err = _run(capsys, ["tune", "--planner", "entropy_budget", "--target-kl", "0.05", "--family", "markov",
                                 "--d", "4"])
    assert rc == 0 and "pick (KL <= 0.05)" in out


@pytest.mark.parametrize("argv, head", [
    (["--forwards", "0.5", "--family", "markov", "--d", "4"], "--forwards: no value"),
    (["--family", "markov", "--d", "4"], "--forwards or --target-kl"),
    (["--forwards", "3", "--family", "markov", "--d", "4", "--values", "nan"], "--values"),
    (["--forwards", "3", "--family", "markov", "--d", "4", "--n", "5"], "--n: only with --model"),
    (["--forwards", "3"], "--family, --table or --data"),
    (["--forwards", "3", "--family", "markov", "--model", "markov"], "--data"),
])
def test_errors_are_one_line(capsys, argv, head):
    rc, out, err = _run(capsys, ["tune", "--planner", "threshold", *argv])
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("mdmtheory tune: error: " + head), err


def test_tune_from_a_model_and_data(capsys, tmp_path):
    pytest.importorskip("torch")
    from mdmtheory.bridge.tiny import TinyConfig, TinyMDM, save_checkpoint
    import torch

    torch.manual_seed(0)
    st, _ = save_checkpoint(TinyMDM(TinyConfig(vocab_size=2, seq_len=4, d_model=8, n_layers=1, n_heads=2, d_ff=16)),
                            tmp_path / "m.safetensors")
    x = np.random.default_rng(0).integers(0, 2, size=(30, 4))
    np.savetxt(tmp_path / "x.txt", x, fmt="%d")
    rc, out, err = _run(capsys, ["tune", "--planner", "threshold", "--forwards", "4", "--values", "0.9,1.01",
                                 "--model", st, "--data", str(tmp_path / "x.txt"), "--n", "30", "--json"])
    assert rc == 0, err
    r = json.loads(out)
    assert r["method"] == "estimated" and r["n"] == 30 and len(r["kl_stderr"]) == 2
    assert r["forwards"][1] == 4.0  # τ > 1: one token per step on every row
