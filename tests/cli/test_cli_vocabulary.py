"""The command line speaks one language (issue 27 §2b).

* one option name per concept, the table of docs/design.md §4 "Command-line vocabulary"
  read back against every command's parser;
* the old spellings work for one release: the same result as the new one, and exactly one
  line ``mdmtheory: OLD is now NEW (the old spelling works for one release)`` on stderr;
* messages in the user's terms: plain numbers, the planner names the command accepts,
  ``--mask-id``, the plan as written, unknown options named by their command;
* ``report`` reads text with the user's tokenizer and ``--vocab`` like ``design`` and ``estimate``;
* the torchrun entry points import without a RuntimeWarning.
"""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

from mdmtheory.cli import build_parser, COMMANDS, main
from mdmtheory.laws import families

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _run(capsys, argv):
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse's own errors
        rc = exc.code
    cap = capsys.readouterr()
    return rc, cap.out, [line for line in cap.err.splitlines() if line.strip()]


def _json(capsys, argv):
    rc, out, err = _run(capsys, [*argv, "--json", "--quiet"])
    assert rc == 0, err
    return json.loads(out), err


def _subparser(cmd):
    parser = build_parser()
    return next(a for a in parser._actions if a.dest == "command").choices[cmd]


def _visible_options(cmd) -> set[str]:
    """The options ``mdmtheory CMD --help`` shows (old spellings are hidden)."""
    import argparse

    return {s for a in _subparser(cmd)._actions if a.help != argparse.SUPPRESS for s in a.option_strings}


def _tokens_file(tmp_path, name="t.txt", d=3, n=60, seed=0):
    x = np.random.default_rng(seed).integers(0, 2, size=(n, d))
    path = tmp_path / name
    path.write_text("\n".join(" ".join(map(str, r)) for r in x) + "\n")
    return str(path), x


# -- the table ---------------------------------------------------------------------------------

def _vocabulary_table() -> list[tuple[str, str, list[str]]]:
    """(option, meaning, commands) of each row of the table under the heading."""
    text = (ROOT / "docs" / "design.md").read_text()
    lines = text[text.index("### Command-line vocabulary"):].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[first:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if len(cells) != 3 or not cells[0].startswith("`--"):
            continue
        option = re.match(r"`(--[\w-]+)", cells[0])[1]
        rows.append((option, cells[1], re.findall(r"`(\w+)`", cells[2])))
    return rows


def test_the_vocabulary_table_is_what_the_parsers_accept():
    rows = _vocabulary_table()
    assert len(rows) >= 8
    options = {o for o, _, _ in rows}
    assert {"--model", "--data", "--steps", "--block-length", "--train-steps", "--d", "--vocab",
            "--tokenizer"} <= options
    for option, meaning, commands in rows:
        assert commands and set(commands) <= set(COMMANDS), (option, commands)
        for cmd in COMMANDS:  # listed commands have it; every other command does not
            assert (option in _visible_options(cmd)) == (cmd in commands), (option, cmd)


def test_old_spellings_are_gone_from_every_help():
    for cmd in COMMANDS:
        shown = _visible_options(cmd)
        assert not shown & {"--checkpoint", "--tokens", "--block-lengths"}, cmd
        sub = _subparser(cmd)
        assert "DATA" not in sub.format_usage(), cmd
        assert "--checkpoint" not in sub.format_help() and "--tokens" not in sub.format_help(), cmd
    assert "--steps" not in _visible_options("train")


# -- old spellings -----------------------------------------------------------------------------

@pytest.mark.parametrize("cmd, old, new", [
    ("profile", "--tokens", "--data"), ("exact", "--tokens", "--data"), ("bounds", "--tokens", "--data"),
    ("schedule", "--tokens", "--data"), ("estimate", "--checkpoint", "--model"), ("design", "--checkpoint", "--model"),
    ("report", "--checkpoint", "--model"), ("design", "--block-lengths", "--block-length"),
    ("train", "--steps", "--train-steps"),
])
def test_an_old_option_parses_as_the_new_one_with_one_line(capsys, cmd, old, new):
    value = "2,4" if "block" in old else "7" if old == "--steps" else "some/path"
    extra = {"design": ["--forwards", "2"], "train": ["--out", "m.safetensors"]}.get(cmd, [])
    args = build_parser().parse_args([cmd, old, value, *extra])
    capsys.readouterr()
    ref = build_parser().parse_args([cmd, new, value, *extra])
    err = capsys.readouterr().err
    assert err == ""  # the new spelling says nothing
    dest = new.lstrip("-").replace("-", "_")
    assert getattr(args, dest) == getattr(ref, dest) == ([2, 4] if "block" in old else 7 if old == "--steps" else value)
    build_parser().parse_args([cmd, old, value, *extra])
    assert capsys.readouterr().err.splitlines() == [f"mdmtheory: {old} is now {new} (the old spelling works for one release)"]


def test_old_spellings_give_the_new_results(capsys, tmp_path):
    path, _ = _tokens_file(tmp_path)
    for cmd in (["profile"], ["exact", "--steps", "2"], ["bounds", "--sizes", "1,2"], ["schedule", "--steps", "2"]):
        new, err_new = _json(capsys, [*cmd, "--data", path])
        old, err_old = _json(capsys, [*cmd, "--tokens", path])
        assert old == new and err_new == []
        assert err_old == ["mdmtheory: --tokens is now --data (the old spelling works for one release)"]
    new, _ = _json(capsys, ["design", "--data", path, "--steps", "2"])
    old, err = _json(capsys, ["design", path, "--steps", "2"])
    assert old == new and err == ["mdmtheory: DATA (positional) is now --data DATA (the old spelling works for one release)"]
    new, _ = _json(capsys, ["design", "--data", path, "--forwards", "2", "--block-length", "1,3"])
    old, err = _json(capsys, ["design", "--data", path, "--forwards", "2", "--block-lengths", "1,3"])
    assert old == new and [c["block_length"] for c in new["candidates"]] == [3, 1]
    assert err == ["mdmtheory: --block-lengths is now --block-length (the old spelling works for one release)"]


def test_estimate_takes_the_old_checkpoint_spelling(capsys, tmp_path):
    pytest.importorskip("torch")
    w = tmp_path / "w.txt"
    w.write_text("0 1 2 3 4\n1 2 3 4 0\n4 4 3 2 1\n")
    base = ["estimate", "--data", str(w), "--n-per-level", "5", "--levels", "0,4"]
    new, _ = _json(capsys, [*base, "--model", "words"])
    old, err = _json(capsys, [*base, "--checkpoint", "words"])
    assert old == new and err == ["mdmtheory: --checkpoint is now --model (the old spelling works for one release)"]
    rc, _, err = _run(capsys, base)
    assert rc == 2 and err == ["mdmtheory estimate: error: --model: give the model to estimate on (a checkpoint, a "
                               "shipped name or a Hugging Face folder)"]


def test_train_takes_the_old_positional_data_and_steps(capsys, tmp_path):
    pytest.importorskip("torch")
    path, _ = _tokens_file(tmp_path, d=4)
    new, _ = _json(capsys, ["train", "--data", path, "--out", str(tmp_path / "a.safetensors"), "--train-steps", "2",
                            "--batch-size", "4"])
    old, err = _json(capsys, ["train", path, "--out", str(tmp_path / "b.safetensors"), "--steps", "2",
                              "--batch-size", "4"])
    assert new["final_loss"] == old["final_loss"] and new["parameters"] == old["parameters"]
    assert sorted(err) == sorted(["mdmtheory: --steps is now --train-steps (the old spelling works for one release)",
                                  "mdmtheory: DATA (positional) is now --data DATA (the old spelling works for one "
                                  "release)"])
    rc, _, err = _run(capsys, ["train", path, "--data", path, "--out", str(tmp_path / "c.safetensors")])
    assert rc == 2 and err[-1].startswith("mdmtheory train: error: --data: give the data once")


def test_report_old_tokens_beside_data_keeps_its_two_files(capsys, tmp_path):
    """``report --tokens T --data D`` (old): the law of T, the model scored on D."""
    pytest.importorskip("torch")
    from mdmtheory.bridge.tiny import TinyConfig, TinyMDM, save_checkpoint
    import torch

    torch.manual_seed(0)
    st, _ = save_checkpoint(TinyMDM(TinyConfig(vocab_size=2, seq_len=3, d_model=8, n_layers=1, n_heads=2, d_ff=16)),
                            tmp_path / "m.safetensors")
    law_path, x = _tokens_file(tmp_path, "law.txt", seed=1)
    rows_path, _ = _tokens_file(tmp_path, "rows.txt", n=30, seed=2)
    base = ["report", "--model", st, "--n-per-level", "5", "--columns", "1,3", "--planners", "random", "--no-attention",
            "--out", str(tmp_path / "r.html"), "--overwrite"]
    old, err = _json(capsys, [*base, "--tokens", law_path, "--data", rows_path])
    assert err == ["mdmtheory: --tokens is now --data (the old spelling works for one release)"]
    ref = families.empirical(x, K=2)
    assert old["profile"]["phi"] == pytest.approx(_phi(ref))
    new, _ = _json(capsys, [*base, "--data", law_path])  # new: one file, the law and the rows
    assert new["profile"]["phi"] == pytest.approx(_phi(ref))


def _phi(law) -> list[float]:
    """phi_m = E H(X_i | X_S) over |S| = m, i not in S, from the table (the definition)."""
    from itertools import combinations

    t, d = law.table, law.d
    out = []
    for m in range(d):
        vals = []
        for S in combinations(range(d), m):
            for i in set(range(d)) - set(S):
                keep = tuple(sorted(S + (i,)))
                joint = t.sum(axis=tuple(j for j in range(d) if j not in keep))
                cond = joint.sum(axis=keep.index(i), keepdims=True)
                with np.errstate(divide="ignore", invalid="ignore"):
                    h = -np.nansum(np.where(joint > 0, joint * np.log(joint / cond), 0.0))
                vals.append(h)
        out.append(float(np.mean(vals)))
    return out


# -- messages in the user's terms ---------------------------------------------------------------

def test_grid_errors_print_plain_numbers(capsys):
    rc, _, err = _run(capsys, ["exact", "--family", "parity", "--d", "4", "--grid", "0.5,0.2"])
    assert rc == 2 and len(err) == 1 and err[0].startswith("mdmtheory exact: error: --grid: ")
    assert "np." not in err[0] and "0.5, 0.2" in err[0]


@pytest.mark.parametrize("argv, option", [
    (["exact", "--family", "parity", "--d", "4", "--planner", "nope"], "--planner"),
    (["bounds", "--family", "parity", "--d", "4", "--planner", "nope"], "--planner"),
    (["report", "--family", "parity", "--d", "4", "--planners", "random,nope"], "--planners"),
])
def test_planner_errors_name_the_planners_the_command_accepts(capsys, argv, option):
    from mdmtheory.samplers.planners import PLANNERS

    rc, _, err = _run(capsys, argv)
    assert rc == 2 and len(err) == 1 and f"error: {option}: unknown planner 'nope'" in err[0]
    assert "moves(ctx)" not in err[0] and "object" not in err[0]
    assert err[0].endswith("choose one of " + ", ".join(sorted(PLANNERS)))
    assert ", ".join(sorted(PLANNERS)) in " ".join(_subparser(argv[0]).format_help().split())


def test_the_missing_mask_error_names_the_option(capsys, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from mdmtheory import bridge
    from mdmtheory.cli._common import plain_words

    assert plain_words("mask_id: none found; pass mask_id= (LLaDA: 126336)") == \
        "mask_id: none found; give --mask-id ID (LLaDA: 126336)"
    assert plain_words("pass mask_id=...") == "give --mask-id ID"

    def no_mask(*a, **k):  # the library's own message, as bridge.hf raises it for a config without a mask
        raise ValueError("mask_id: the config has no mask_token_id and the tokenizer names none; pass mask_id= "
                         "(the model's mask token id; LLaDA: 126336)")

    monkeypatch.setattr(bridge, "from_pretrained", no_mask)
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "config.json").write_text("{}")
    (tmp_path / "x.txt").write_text("0 1\n1 0\n")
    rc, _, err = _run(capsys, ["estimate", "--model", str(tmp_path / "hf"), "--data", str(tmp_path / "x.txt")])
    assert rc == 2 and len(err) == 1
    assert err[0].startswith("mdmtheory estimate: error: --mask-id: ") and "give --mask-id ID" in err[0]
    assert "mask_id=" not in err[0]


def test_bounds_prints_the_plan_as_written(capsys):
    for plan, shown in ((["--steps", "2"], "plan --steps 2 (sizes 2,2, 2 steps)"),
                        (["--sizes", "1,3"], "plan --sizes 1,3 (sizes 1,3, 2 steps)"),
                        (["--grid", "0,0.5,1"], "plan --grid 0,0.5,1 (grid 0,0.5,1, 2 steps)"),
                        ([], "plan --steps 2 (the default) (sizes 2,2, 2 steps)")):
        rc, out, _ = _run(capsys, ["bounds", "--family", "parity", "--d", "4", *plan])
        assert rc == 0 and out.splitlines()[0] == f"parity (d=4): {shown}, planner random", out.splitlines()[0]
        assert "{" not in out and "'kind'" not in out
        rc, out, _ = _run(capsys, ["exact", "--family", "parity", "--d", "4", *plan])
        assert rc == 0 and "{" not in out and f"plan: {' '.join(plan) or '--steps 2 (the default)'}: " in out


@pytest.mark.parametrize("cmd", sorted(COMMANDS))
def test_unknown_options_are_named_by_their_command(capsys, cmd):
    extra = {"design": ["--steps", "2"], "train": ["--out", "m.safetensors"], "tune": ["--planner", "threshold"]}.get(cmd, [])
    rc, _, err = _run(capsys, [cmd, *extra, "--no-such-option", "--other=3"])
    assert rc == 2 and err == [f"mdmtheory {cmd}: error: unrecognized arguments: --no-such-option --other=3"]


@pytest.mark.parametrize("argv, limit", [(["demo", "--d", "13"], "2..12"), (["profile", "--family", "parity", "--d", "17"], "2..16"),
                                          (["exact", "--family", "parity", "--d", "1"], "2..16")])
def test_d_limits_are_stated_in_help_and_error(capsys, argv, limit):
    rc, _, err = _run(capsys, argv)
    assert rc == 2 and len(err) == 1 and f"--d: expected a length in {limit}" in err[0]
    helps = {a.help for a in _subparser(argv[0])._actions if "--d" in a.option_strings}
    assert any(limit in h for h in helps)


def test_train_d_limit_is_stated_in_help_and_error(capsys, tmp_path):
    from mdmtheory.cli.train import MAX_D

    rc, _, err = _run(capsys, ["train", "--data", "markov", "--d", str(MAX_D + 1), "--out", str(tmp_path / "m.safetensors")])
    assert rc == 2 and len(err) == 1 and f"--d: expected a length in 2..{MAX_D}" in err[0]
    assert any(f"2..{MAX_D}" in (a.help or "") for a in _subparser("train")._actions if "--d" in a.option_strings)


# -- report reads text and token ids like design and estimate --------------------------------

def _hf_folder(path: pathlib.Path):
    pytest.importorskip("transformers")
    pytest.importorskip("torch")
    pytest.importorskip("tokenizers")
    from pipeline_reference import word_level_bert_folder

    return word_level_bert_folder(path, "abcdef", 16)[1]


def test_report_reads_text_with_the_tokenizer_and_vocab(capsys, tmp_path):
    vocab = _hf_folder(tmp_path / "hf")
    lines = ["a b c", "b c a", "a b c", "c c a", "b a b", "a b c"]
    (tmp_path / "t.txt").write_text("\n".join(lines) + "\n")
    rows = [[vocab[w] for w in line.split()] for line in lines]
    seen = sorted({t for r in rows for t in r})
    x = np.array([[seen.index(t) for t in r] for r in rows])
    ref = families.empirical(x, K=len(seen))
    base = ["report", "--text", str(tmp_path / "t.txt"), "--tokenizer", str(tmp_path / "hf"), "--length", "3",
            "--steps", "1,3", "--planners", "random", "--out", str(tmp_path / "r.html"), "--overwrite"]
    capsys.readouterr()
    out, _ = _json(capsys, base)  # no model: the law of the tokenized rows, outcomes the ids seen
    assert out["profile"]["phi"] == pytest.approx(_phi(ref)) and out["outcomes"]["vocab"] == seen
    out, _ = _json(capsys, [*base, "--model", str(tmp_path / "hf"), "--n-per-level", "5", "--no-attention"])
    assert out["model"]["vocab"] == seen and out["model"]["mask_id"] == vocab["[MASK]"]
    assert out["profile"]["phi"] == pytest.approx(_phi(ref)) and out["profile"]["cross_entropy"] is not None
    # --vocab: the outcome token ids, named; a law of K = 4 outcomes (d unchanged)
    ids = [vocab[w] for w in "abcd"]
    out, _ = _json(capsys, [*base, "--model", str(tmp_path / "hf"), "--n-per-level", "5", "--no-attention",
                            "--vocab", ",".join(map(str, ids))])
    assert out["model"]["vocab"] == ids and out["law"]["K"] == 4
    # a --family law with a Hugging Face model: --vocab names the token id of each outcome
    out, _ = _json(capsys, ["report", "--family", "markov", "--d", "3", "--model", str(tmp_path / "hf"),
                            "--vocab", f"{vocab['a']},{vocab['b']}", "--n-per-level", "5", "--no-attention",
                            "--steps", "1,3", "--planners", "random", "--out", str(tmp_path / "r.html"), "--overwrite"])
    assert out["law"]["K"] == 2 and out["profile"]["cross_entropy"] is not None
    rc, _, err = _run(capsys, ["report", "--family", "markov", "--d", "3", "--vocab", "1,2", "--out",
                               str(tmp_path / "r.html"), "--overwrite"])
    assert rc == 2 and err[0].startswith("mdmtheory report: error: --vocab:")


# -- the torchrun entry points -------------------------------------------------------------------

@pytest.mark.parametrize("module", ["mdmtheory.bridge.distributed", "mdmtheory"])
def test_the_torchrun_entry_points_import_without_a_runtime_warning(module):
    """``torchrun -m mdmtheory.bridge.distributed`` printed ``RuntimeWarning: ... found in
    sys.modules after import of package ...`` on every process; the job and ``-m mdmtheory``
    run with RuntimeWarnings as errors and say nothing on stderr."""
    pytest.importorskip("torch")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-m", module, "estimate" if module == "mdmtheory"
                        else "profile", "--help"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "RuntimeWarning" not in r.stderr and "sys.modules" not in r.stderr
    assert r.stderr == ""


def test_estimate_token_file_with_vocab_ids_is_the_bridge_with_that_vocabulary(capsys, tmp_path):
    """``--vocab IDS`` with a token file: outcome k is token id IDS[k] (the bridge's ``vocab=``)."""
    vocab = _hf_folder(tmp_path / "hf")
    from mdmtheory import bridge

    x = np.random.default_rng(0).integers(0, 3, size=(20, 3))
    np.save(tmp_path / "x.npy", x)
    ids = [vocab["c"], vocab["a"], vocab["f"]]
    capsys.readouterr()
    out, _ = _json(capsys, ["estimate", "--model", str(tmp_path / "hf"), "--data", str(tmp_path / "x.npy"),
                            "--vocab", ",".join(map(str, ids)), "--n-per-level", "10"])
    ref = bridge.estimate_profile(bridge.from_pretrained(str(tmp_path / "hf"), vocab=ids), x, n_per_level=10, seed=0)
    capsys.readouterr()  # transformers' loading bar of the reference
    assert out["values"] == pytest.approx(np.asarray(ref.values).tolist(), rel=1e-12)
    assert out["model"]["vocab"] == ids and out["model"]["K"] == 3
    rc, _, err = _run(capsys, ["estimate", "--model", str(tmp_path / "hf"), "--data", str(tmp_path / "x.npy"),
                               "--vocab", "seen"])
    assert rc == 2 and err[0].startswith("mdmtheory estimate: error: --vocab: 'seen'")
    rc, _, err = _run(capsys, ["design", "--data", str(tmp_path / "x.npy"), "--steps", "2", "--vocab", "1,2,3"])
    assert rc == 2 and err[0].startswith("mdmtheory design: error: --vocab: without --text/--jsonl")


@pytest.mark.parametrize("cmd", sorted(COMMANDS))
def test_every_example_speaks_the_new_vocabulary(capsys, cmd):
    """``mdmtheory CMD --help``'s example parses without an old-spelling line."""
    import importlib
    import shlex

    example = importlib.import_module(f"mdmtheory.cli.{COMMANDS[cmd]}").EXAMPLE
    argv = shlex.split(example)
    assert argv[:2] == ["mdmtheory", cmd]
    build_parser().parse_args(argv[1:])
    assert capsys.readouterr().err == ""
