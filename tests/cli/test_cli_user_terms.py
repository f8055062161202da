"""Issue 39 items 3 and 4: the command line says what it means, in the user's terms.

* a tokenizer that is not the model's is named as such, with both vocabulary sizes and mask
  ids (it read "the mask id 4 is one of the outcome token ids ... fix --mask-id");
* ``exact --sizes -1,7``: the option reads the list and its own check names what is wrong
  (argparse said "expected one argument": a value starting with ``-`` is read as an option);
* ``train --data nosuchset`` lists the named data sets;
* ``design``'s one-line help names every export format;
* a note (prompts left-padded) is printed only after a command succeeds: a refusal is the
  only line;
* ``report --steps T`` is one step count, as everywhere (the recommended schedule's T); the
  columns are ``--columns T1,T2,...``, and ``--steps T1,T2,...`` is its old spelling.
"""

from __future__ import annotations

import re

import pytest

from mdmtheory.cli import build_parser, main


def _one_error_line(capsys, argv) -> str:
    capsys.readouterr()
    assert main(argv) == 2, argv
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, lines
    assert captured.out == ""
    return lines[0]


def test_a_negative_first_number_in_a_list_reaches_the_options_own_check(capsys):
    line = _one_error_line(capsys, ["exact", "--family", "markov", "--d", "6", "--sizes", "-1,7"])
    assert line.startswith("mdmtheory exact: error: --sizes: ") and "-1" in line, line
    assert "expected one argument" not in line
    # the same values with '=' (what the glue produces) give the same line
    assert _one_error_line(capsys, ["exact", "--family", "markov", "--d", "6", "--sizes=-1,7"]) == line


def test_a_lone_negative_number_and_an_option_after_an_option_are_left_alone(capsys):
    from mdmtheory.cli import _glue_negative_lists

    assert _glue_negative_lists(["exact", "--sizes", "-1,7"]) == ["exact", "--sizes=-1,7"]
    assert _glue_negative_lists(["exact", "--seed", "-3"]) == ["exact", "--seed", "-3"]  # argparse reads it
    assert _glue_negative_lists(["exact", "--json", "--sizes", "1,7"]) == ["exact", "--json", "--sizes", "1,7"]
    assert _glue_negative_lists(["-1,7"]) == ["-1,7"]


def test_train_with_an_unknown_dataset_name_lists_the_named_ones(capsys, tmp_path):
    line = _one_error_line(capsys, ["train", "--data", "nosuchset", "--out", str(tmp_path / "m.safetensors")])
    from mdmtheory.cli.train import DATASETS

    assert "'nosuchset'" in line and all(name in line for name in DATASETS), line


def test_design_one_line_help_names_every_export_format():
    from mdmtheory.cli import _help
    from mdmtheory.cli.design import FORMATS

    line = _help("design").lower()
    names = {"json": None, "llada": "llada", "dream": "dream", "mdlm": "mdlm", "dllm": "dllm",
             "diffusers": "diffusers", "sglang": "sglang", "vllm": "vllm"}
    assert set(FORMATS) == set(names)
    for fmt, word in names.items():
        assert word is None or word in line, (fmt, line)


def test_notes_are_printed_after_success_and_dropped_on_a_refusal(capsys, monkeypatch):
    from mdmtheory.cli import _common, profile

    real = profile.run

    def with_note(args):
        _common.note("mdmtheory profile: note: a note from the rows")
        return real(args)

    monkeypatch.setattr(profile, "run", with_note)
    capsys.readouterr()
    assert main(["profile", "--family", "markov", "--d", "3", "--json"]) == 0
    assert capsys.readouterr().err.strip().splitlines() == ["mdmtheory profile: note: a note from the rows"]
    line = _one_error_line(capsys, ["profile", "--family", "markov", "--d", "99"])  # refused after the note
    assert line.startswith("mdmtheory profile: error: --d")


def _report_args(argv, capsys=None):
    return build_parser(["report"]).parse_args(["report", *argv])


def test_report_steps_is_one_step_count_and_columns_are_columns(capsys):
    capsys.readouterr()
    a = _report_args(["--steps", "3"])
    assert a.recommend_steps == 3 and a.steps is None
    assert capsys.readouterr().err == ""
    a = _report_args(["--columns", "1,2,5"])
    assert a.steps == [1, 2, 5] and a.recommend_steps is None
    a = _report_args(["--recommend-steps", "2"])
    assert a.recommend_steps == 2
    # the old spelling of the columns: said once on stderr when the command succeeds
    from mdmtheory.cli import _common

    _common.take_notes()
    a = _report_args(["--steps", "1,3"])
    assert a.steps == [1, 3] and a.recommend_steps is None
    assert _common.take_notes() == [
        "mdmtheory: --steps T1,T2,... is now --columns T1,T2,... (the old spelling works for one release)"]


def test_report_steps_3_asks_the_report_for_a_3_step_recommendation_and_default_columns(monkeypatch, tmp_path):
    seen = {}

    class Stop(Exception):
        pass

    def fake(law, **kw):
        seen.update(kw)
        raise Stop

    monkeypatch.setattr("mdmtheory.report.report.build_report", fake)
    with pytest.raises(Stop):
        main(["report", "--family", "markov", "--d", "6", "--steps", "3", "--quiet", "--out", str(tmp_path / "r.html")])
    assert seen["recommend_steps"] == 3 and seen["steps"] is None  # one recommendation, the default columns
    seen.clear()
    with pytest.raises(Stop):
        main(["report", "--family", "markov", "--d", "6", "--columns", "2,3", "--quiet", "--out",
              str(tmp_path / "r.html")])
    assert seen["steps"] == [2, 3] and seen["recommend_steps"] is None


def test_report_old_steps_list_is_said_after_success_and_silent_on_a_refusal(capsys, tmp_path):
    line = _one_error_line(capsys, ["report", "--family", "markov", "--d", "4", "--steps", "1,9",
                                    "--out", str(tmp_path / "r.html")])
    assert line.startswith("mdmtheory report: error: --columns: expected step counts 1 <= T <= d = 4, got 9"), line
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:  # refused by the parser, as argparse's own errors are
        main(["report", "--family", "markov", "--d", "4", "--steps", ",", "--out", str(tmp_path / "r.html")])
    assert e.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "--steps: expected one step count T" in lines[0], lines


def test_report_steps_beside_recommend_steps_is_refused(capsys):
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        _report_args(["--steps", "3", "--recommend-steps", "2"])
    assert e.value.code == 2
    assert "--steps, --recommend-steps: give one of the two" in capsys.readouterr().err


def test_report_steps_out_of_range_names_steps(capsys, tmp_path):
    line = _one_error_line(capsys, ["report", "--family", "markov", "--d", "4", "--steps", "9",
                                    "--out", str(tmp_path / "r.html")])
    assert re.match(r"mdmtheory report: error: --steps: expected step counts 1 <= T <= d = 4, got 9", line), line


def _rows(tmp_path, d=4, n=40):
    import numpy as np

    x = np.random.default_rng(0).integers(0, 2, size=(n, d))
    f = tmp_path / "rows.txt"
    f.write_text("\n".join(" ".join(map(str, r)) for r in x) + "\n")
    return str(f)


@pytest.mark.parametrize("extra, expect", [
    (["--steps", "2"], "--format sglang: --steps 2 on a response of 4 tokens"),
    (["--budget", "0.1"], "--budget: with --format sglang"),
    (["--forwards", "3"], "--format sglang: --forwards 3 runs in SGLang only"),
])
def test_sglang_designs_it_cannot_run_are_refused_before_estimating(capsys, tmp_path, monkeypatch, extra, expect):
    from mdmtheory.design import from_data

    def boom(*a, **k):
        raise AssertionError("estimated before refusing")

    monkeypatch.setattr(from_data, "design", boom)
    monkeypatch.setattr(from_data, "design_blocks_from_data", boom)
    line = _one_error_line(capsys, ["design", "--data", _rows(tmp_path), *extra, "--format", "sglang"])
    assert line.startswith(f"mdmtheory design: error: {expect}"), line
    assert "--steps 4 (one token per step)" in line or "--forwards 4" in line, line
    assert "nothing was estimated" in line


def test_sglang_forwards_are_constrained_to_the_block_length_sglang_runs(capsys, tmp_path):
    import json

    capsys.readouterr()
    assert main(["design", "--data", _rows(tmp_path), "--forwards", "2", "--format", "sglang", "--json"]) == 0
    cap = capsys.readouterr()
    r = json.loads(cap.out)
    assert [c["block_length"] for c in r["candidates"]] == [2]  # F = 2 over r = 4: one step per block of 2
    assert "constrained to --block-length 2" in cap.err


def test_the_sglang_text_export_is_valid_yaml(capsys, tmp_path):
    from mdmtheory.cli.design import render

    capsys.readouterr()
    assert main(["design", "--data", _rows(tmp_path), "--steps", "4", "--format", "sglang", "--json"]) == 0
    import json

    r = json.loads(capsys.readouterr().out)
    text = render(r).splitlines()
    start = next(i for i, ln in enumerate(text) if ln.startswith("export (sglang):"))
    block = [text[start]] + [ln for ln in text[start + 1:] if ln.startswith("  ")]
    block = block[:1 + next((i for i, ln in enumerate(block[1:]) if not ln.startswith("  ")), len(block) - 1)]
    try:
        import yaml
    except ImportError:  # the line structure instead: every line under the header indented, no bare line
        assert all(ln.startswith("  ") for ln in block[1:])
        return
    parsed = yaml.safe_load("\n".join(block))["export (sglang)"]
    assert parsed["yaml"] == r["export"]["yaml"]  # the block scalar gives back SGLang's file exactly
    assert yaml.safe_load(parsed["yaml"]) == {"threshold": 1.0, "block_size": 4}


torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")


def test_a_tokenizer_that_is_not_the_models_is_named(capsys, tmp_path):
    """A 30-word tokenizer on an 11-id model (8 words, [PAD], [MASK] = 9, [UNK]): its ids reach
    past the model's vocabulary and hit its mask id."""
    from pipeline_reference import word_level_bert_folder

    word_level_bert_folder(tmp_path / "m", list("abcdefgh"), 16)
    many = [f"w{i}" for i in range(30)]
    word_level_bert_folder(tmp_path / "other", many, 16)
    (tmp_path / "t.txt").write_text("\n".join(" ".join(many[(3 * r + j) % 30] for j in range(4)) for r in range(12))
                                    + "\n")
    line = _one_error_line(capsys, ["estimate", "--text", str(tmp_path / "t.txt"), "--tokenizer",
                                    str(tmp_path / "other"), "--model", str(tmp_path / "m"), "--length", "4",
                                    "--n-per-level", "2"])
    assert line.startswith("mdmtheory estimate: error: --tokenizer: ") and "is not the tokenizer of" in line, line
    assert "33 token ids" in line and "11 token ids" in line and "mask id 9" in line, line  # both sizes, the mask
    assert "fix --mask-id" not in line
