"""Issue 30 §1: the command line's refusals that used to be tracebacks or silent overwrites.

Each case is one line on stderr naming the option, exit code 2, checked before any work (the
tokenizer and the model loaders are replaced by ones that fail the test if they run):

* the guide's own ``design --jsonl ... --model`` command with ``--prompt-length 100
  --response-length 8`` on a model whose config says ``max_position_embeddings = 64`` (a
  77-line torch traceback after loading); prompts shorter than ``--prompt-length`` are
  left-padded, and the command says so on stderr;
* ``--pad-id 99999999999999999999999`` (an OverflowError traceback) and a tokenizer folder
  whose ``tokenizer_config.json`` names a class its files are not;
* ``--scheduler-out DIR`` holding the ``scheduler_config.json`` of an earlier run and
  ``train --out`` on an existing checkpoint: refused unless ``--overwrite`` (they were
  replaced silently);
* ``estimate --model DIR`` on a folder whose weights are corrupt (a SafetensorError traceback).
"""

from __future__ import annotations

import json
import re
import shlex

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from mdmtheory.cli import main  # noqa: E402

WORDS = list("abcdefgh")
#: The position limit of the test model's config (BERT's max_position_embeddings).
POSITIONS = 64


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A local BERT masked-LM folder with its word-level tokenizer (max_position_embeddings = 64),
    6-word prompts with 8-word responses, and a 70-token data file."""
    from pipeline_reference import word_level_bert_folder

    root = tmp_path_factory.mktemp("guards")
    word_level_bert_folder(root / "m", WORDS, POSITIONS)
    rng = np.random.default_rng(0)
    with (root / "pairs.jsonl").open("w") as fh:
        for _ in range(6):
            fh.write(json.dumps({"prompt": " ".join(rng.choice(WORDS, 6)), "response": " ".join(rng.choice(WORDS, 8))})
                     + "\n")
    (root / "t.txt").write_text("a b c\nd e f g h\n")
    (root / "long.txt").write_text("\n".join(" ".join(["0"] * (POSITIONS + 6)) for _ in range(3)) + "\n")
    return root


def _guide_argv(folder, **subst) -> list[str]:
    """The command docs/guide.md prints (the one tests/cli/test_cli_pipelines.py runs), on this folder."""
    import pathlib

    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "guide.md").read_text()
    block = next(b for b in re.findall(r"```bash\n(.*?)```", text, re.S) if "--jsonl" in b)
    argv = shlex.split(block.replace("\\\n", " "))[1:]
    paths = {"pairs.jsonl": str(folder / "pairs.jsonl"), "./my-mdm": str(folder / "m"),
             "./designed-scheduler": str(folder / "sched-guide")}
    argv = [paths.get(a, a) for a in argv]
    for opt, value in subst.items():
        argv[argv.index(opt) + 1] = value
    return argv


def _refused(argv, capsys, match):
    capsys.readouterr()
    assert main(argv) == 2, argv
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, lines
    assert re.match(r"mdmtheory \w+: error: " + match, lines[0]), lines[0]
    assert captured.out == ""
    return lines[0]


@pytest.fixture
def no_work(monkeypatch):
    """Tokenizing or loading a model fails the test: the refusal must come first."""
    from mdmtheory import bridge
    from mdmtheory.data import tokenized

    def boom(*a, **k):
        raise AssertionError("work was done before the options were checked")

    for name in ("load_jsonl", "load_text", "load_tokenizer"):
        monkeypatch.setattr(tokenized, name, boom)
    monkeypatch.setattr(bridge, "from_pretrained", boom)


def test_guide_command_beyond_the_models_positions_is_one_line_before_work(folder, capsys, no_work):
    argv = _guide_argv(folder, **{"--prompt-length": "100", "--response-length": "8"})
    line = _refused(argv, capsys, r"--prompt-length, --response-length: ")
    assert "100 + 8 = 108" in line and f"at most {POSITIONS} positions" in line
    assert f"max_position_embeddings = {POSITIONS}" in line
    assert not (folder / "sched-guide").exists()


def test_text_length_beyond_the_models_positions(folder, capsys, no_work):
    line = _refused(["design", "--text", str(folder / "t.txt"), "--tokenizer", str(folder / "m"), "--model",
                     str(folder / "m"), "--length", str(POSITIONS + 1), "--steps", "2"], capsys, r"--length: ")
    assert f"at most {POSITIONS} positions" in line


def test_token_rows_beyond_the_models_positions(folder, capsys):
    line = _refused(["estimate", "--model", str(folder / "m"), "--data", str(folder / "long.txt"),
                     "--n-per-level", "2"], capsys, r"--data: rows have 70 tokens")
    assert f"at most {POSITIONS} positions" in line


def test_rows_that_fit_run_and_left_padding_is_said(folder, capsys):
    capsys.readouterr()
    # 6-word prompts, --prompt-length 10: every prompt is left-padded; 10 + 8 <= 64 fits
    assert main(["design", "--jsonl", str(folder / "pairs.jsonl"), "--tokenizer", str(folder / "m"), "--model",
                 str(folder / "m"), "--prompt-length", "10", "--response-length", "8", "--steps", "2",
                 "--n-per-level", "2", "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["tokenized"]["padded_prompt"] == 6
    assert re.search(r"note: 6 of 6 prompts are shorter than --prompt-length 10 tokens and were left-padded",
                     captured.err), captured.err
    # prompts that need no padding: no note
    assert main(["design", "--jsonl", str(folder / "pairs.jsonl"), "--tokenizer", str(folder / "m"), "--model",
                 str(folder / "m"), "--prompt-length", "4", "--response-length", "8", "--steps", "2",
                 "--n-per-level", "2", "--json"]) == 0
    assert "left-padded" not in capsys.readouterr().err


@pytest.mark.parametrize("pad", ["99999999999999999999999", "-1", str(2**31)])
def test_pad_id_beyond_any_token_id(folder, capsys, pad, no_work):
    _refused(["design", "--text", str(folder / "t.txt"), "--tokenizer", str(folder / "m"), "--length", "6",
              "--pad-id", pad, "--steps", "2"], capsys, r"--pad-id: expected an integer in 0\.\.")


def test_pad_id_beyond_the_tokenizers_vocabulary(folder, capsys):
    V = len(json.loads((folder / "m" / "tokenizer.json").read_text())["model"]["vocab"])
    line = _refused(["design", "--text", str(folder / "t.txt"), "--tokenizer", str(folder / "m"), "--length", "6",
                     "--pad-id", str(V), "--steps", "2"], capsys, rf"--pad-id: expected an integer in 0\.\.{V - 1}, ")
    assert str(V) in line


def test_tokenizer_folder_whose_class_lies(folder, tmp_path, capsys):
    import shutil

    lie = tmp_path / "lie"
    shutil.copytree(folder / "m", lie)
    cfg = json.loads((lie / "tokenizer_config.json").read_text())
    cfg["tokenizer_class"] = "BertTokenizer"  # the files are a word-level tokenizer.json
    (lie / "tokenizer_config.json").write_text(json.dumps(cfg))
    _refused(["design", "--text", str(folder / "t.txt"), "--tokenizer", str(lie), "--length", "4", "--steps", "2"],
             capsys, r"--tokenizer: .*BertTokenizer")


def test_scheduler_out_is_not_overwritten_silently(folder, tmp_path, capsys):
    out = tmp_path / "sched"
    out.mkdir()
    (out / "scheduler_config.json").write_text("{}")
    base = ["design", "--text", str(folder / "t.txt"), "--tokenizer", str(folder / "m"), "--length", "4",
            "--steps", "2", "--format", "diffusers", "--scheduler-out", str(out)]
    _refused(base, capsys, r"--scheduler-out: .*scheduler_config\.json.*--overwrite")
    assert (out / "scheduler_config.json").read_text() == "{}"
    _refused(["design", "--data", str(folder / "t.txt"), "--steps", "2", "--overwrite"], capsys, r"--overwrite: ")
    assert main(base + ["--overwrite"]) == 0
    assert json.loads((out / "scheduler_config.json").read_text())  # replaced by the design's config


def test_train_does_not_replace_a_checkpoint_silently(tmp_path, capsys):
    rng = np.random.default_rng(0)
    (tmp_path / "x.txt").write_text("\n".join(" ".join(map(str, r)) for r in rng.integers(0, 2, (20, 4))) + "\n")
    ckpt = tmp_path / "m.safetensors"
    base = ["train", "--data", str(tmp_path / "x.txt"), "--out", str(ckpt), "--train-steps", "1", "--batch-size", "2"]
    capsys.readouterr()
    assert main(base) == 0
    before = ckpt.read_bytes(), (tmp_path / "m.json").read_bytes()
    _refused(base + ["--seed", "1"], capsys, r"--out: .*exists; give --overwrite")
    assert (ckpt.read_bytes(), (tmp_path / "m.json").read_bytes()) == before
    (tmp_path / "n.json").write_text("{}")  # the .json beside a new .safetensors: refused as well
    _refused([*base[:4], str(tmp_path / "n.safetensors"), *base[5:]], capsys, r"--out: .*n\.json.*exists")
    assert main(base + ["--seed", "1", "--overwrite"]) == 0
    assert ckpt.read_bytes() != before[0]


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_estimate_on_corrupt_weights_is_one_line(folder, tmp_path, capsys, damage):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(folder / "m", bad)
    w = bad / "model.safetensors"
    w.write_bytes(w.read_bytes()[:200] if damage == "truncated" else b"\xff" * 64)
    line = _refused(["estimate", "--model", str(bad), "--data", str(folder / "t.txt"), "--n-per-level", "2"], capsys,
                    r"--model: cannot load the Hugging Face folder")
    assert "SafetensorError" in line or "safetensors" in line.lower()
