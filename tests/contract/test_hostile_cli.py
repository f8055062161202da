"""Every command and every option of the CLI against one table of hostile values (issue 30 §2).

The table is read from the argparse parsers themselves (:func:`mdmtheory.cli.build_parser`),
so a new command or option is covered without editing this file. Each option that takes a
value gets every entry of :data:`HOSTILE` — negative, zero, 10**12, 10**400, nan, inf, an
empty string, a word where a number goes, a missing file, a folder where a file goes and a
file where a folder goes — put into a small valid command line of its command (the one of
:func:`_bases` that already uses the option, else the command's first). The contract:

* the call ends within :data:`CALL_SECONDS` and no exception escapes ``main``;
* exit code 2 with exactly one line on stderr, ``mdmtheory CMD: error: ...``, that names the
  option (argparse's ``argument --opt`` form included), no traceback, nothing on stdout, and
  nothing left on disk (the test's folder, outputs included, is byte-for-byte as before);
* or exit code 0 when the value is one the option documents as valid (:func:`_valid`: zero
  for a count that may be zero, a seed, a flag-like choice, ...); then its outputs may be written.

``make test`` runs a deterministic sample (every command, every hostile kind; at most
:data:`SAMPLE` calls, about 4 s); ``pytest -m slow tests/contract/test_hostile_cli.py`` the
whole table (every option × every value: 1,133 calls today, about 40 s).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
from fuzz_harness import run_cli  # main under an alarm in a folder (shared with the other CLI table)

from mdmtheory.cli import COMMANDS, build_parser

#: Longest time one call may take (the first calls import torch).
CALL_SECONDS = 60.0
#: Calls of the default-run sample.
SAMPLE = 120

#: The hostile values, by kind; "{missing}", "{dir}" and "{file}" are filled from the fixture.
HOSTILE = {
    "negative": "-5",
    "zero": "0",
    "1e12": "1000000000000",
    "10**400": "1" + "0" * 400,
    "nan": "nan",
    "inf": "inf",
    "empty": "",
    "word": "abc",
    "missing file": "{missing}",
    "folder for a file": "{dir}",
    "file for a folder": "{file}",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The inputs the command lines read (never modified) and an output folder."""
    root = tmp_path_factory.mktemp("hostilecli")
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, size=(40, 4))
    (root / "tokens.txt").write_text("\n".join(" ".join(map(str, r)) for r in x) + "\n")
    (root / "profile.csv").write_text("m,phi\n0,0.9\n1,0.5\n2,0.3\n3,0.1\n")
    (root / "words.txt").write_text("a b a b\nb a b a\na a b b\n" * 5)
    (root / "pairs.jsonl").write_text("\n".join(json.dumps({"prompt": "a b", "response": "b a b a"}) for _ in range(8)))
    (root / "notes.txt").write_text("hello world\n")  # a file, and no valid input of any option
    (root / "out").mkdir()
    (root / "folder").mkdir()
    f = {"root": root, "missing": str(root / "no_such_file.txt"), "dir": str(root / "folder"),
         "file": str(root / "notes.txt")}
    try:
        import torch

        from mdmtheory.bridge.tiny import TinyConfig, TinyMDM, save_checkpoint

        torch.manual_seed(0)
        f["tiny"], _ = save_checkpoint(TinyMDM(TinyConfig(vocab_size=2, seq_len=4, d_model=8, n_layers=1, n_heads=2,
                                                          d_ff=16)), root / "tiny.safetensors")
    except ImportError:
        f["tiny"] = None
    try:
        import transformers
        from tokenizers import Tokenizer, models, pre_tokenizers

        tk = Tokenizer(models.WordLevel(vocab={"a": 0, "b": 1, "[PAD]": 2, "[UNK]": 3}, unk_token="[UNK]"))
        tk.pre_tokenizer = pre_tokenizers.Whitespace()
        transformers.PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="[PAD]",
                                             unk_token="[UNK]").save_pretrained(root / "tok")
        f["tok"] = str(root / "tok")
        from pipeline_reference import word_level_bert_folder

        word_level_bert_folder(root / "hf", ["a", "b"], 8)  # a BERT masked LM reading at most 8 positions
        f["hf"] = str(root / "hf")
    except ImportError:
        f["tok"] = f["hf"] = None
    ORIGINALS.clear()
    ORIGINALS.update({p: Path(p).read_bytes() for p, d in _tree(root).items() if d != "dir"})
    return f


def _bases(f) -> dict:
    """Small valid command lines per command (cheap to run when nothing is hostile); the
    text bases reach the tokenizer options with a value they use."""
    r = f["root"]
    b = {
        "demo": [["demo", "--d", "3"]],
        "profile": [["profile", "--family", "markov", "--d", "3"]],
        "exact": [["exact", "--family", "parity", "--d", "3", "--steps", "2"]],
        "bounds": [["bounds", "--family", "parity", "--d", "3", "--steps", "2"]],
        "schedule": [["schedule", "--profile", str(r / "profile.csv")]],
        "estimate": [["estimate", "--model", str(f["tiny"]), "--data", str(r / "tokens.txt"), "--n-per-level", "3",
                      "--n-path", "3"]],
        "report": [["report", "--family", "markov", "--d", "4", "--out", str(r / "out" / "r.html"), "--planners",
                    "random", "--columns", "1,2", "--n-per-level", "3", "--attention-samples", "2",
                    "--attention-info-samples", "2"]],
        "design": [["design", "--data", str(r / "tokens.txt"), "--steps", "2", "--n-per-level", "5"]],
        "train": [["train", "--data", str(r / "tokens.txt"), "--out", str(r / "out" / "m.safetensors"),
                   "--train-steps", "1", "--batch-size", "2"]],
    }
    if f["tok"] is not None:
        b["design"] += [["design", "--text", str(r / "words.txt"), "--tokenizer", f["tok"], "--length", "4",
                         "--steps", "2", "--pad-id", "2", "--vocab", "seen"],
                        ["design", "--jsonl", str(r / "pairs.jsonl"), "--tokenizer", f["tok"], "--prompt-length", "2",
                         "--response-length", "4", "--steps", "2"]]
    if f.get("hf") is not None:  # a Hugging Face folder: --mask-id and the text options against a real model
        b["estimate"] += [["estimate", "--model", f["hf"], "--text", str(r / "words.txt"), "--tokenizer", f["hf"],
                           "--length", "4", "--mask-id", "3", "--n-per-level", "2"]]
    if f["tiny"] is None:
        for cmd in ("estimate", "train"):
            b.pop(cmd)
    return b


def _options(cmd: str) -> list[str]:
    """The options of ``cmd`` that take a value, read from its parser (help, flags and the
    old spellings kept for one release excluded: they print their own note)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[cmd]
    return [a.option_strings[0] for a in sub._actions
            if a.option_strings and a.nargs != 0 and a.help != argparse.SUPPRESS and "-h" not in a.option_strings]


#: Hostile-looking values that options document as valid (exit 0 allowed), by option: zero
#: where a count, an id or a seed may be zero; a target may be 0 or huge. An option missing
#: here whose value is accepted fails the test: read its help, then add it (or refuse the value).
VALID = {
    "--seed": {"zero", "1e12"},
    "--prompt-length": {"zero"},
    "--pad-id": {"zero"},
    "--levels": {"zero"},
    "--target": {"zero", "1e12"},
    "--text": {"file for a folder"},  # any UTF-8 text is text
}


def _valid(opt: str, kind: str) -> bool:
    return kind in VALID.get(opt, ())


def _wrote_it(value: str, cwd: Path, new: set) -> bool:
    """An output option's value taken as the path of a new file it wrote (``-5`` and ``abc``
    are file names; the existing file or folder kinds must be refused)."""
    path = os.path.join(cwd, value) if value and not os.path.isabs(value) else value
    return bool(value) and os.path.normpath(path) in {os.path.normpath(p) for p in new}


def cases(f) -> list[tuple]:
    """(command, option, kind, argv) for every command, option and hostile value."""
    out = []
    bases = _bases(f)
    for cmd in sorted(COMMANDS):
        if cmd not in bases:
            continue
        for opt in _options(cmd):
            base = next((b for b in bases[cmd] if opt in b), bases[cmd][0])
            for kind, value in HOSTILE.items():
                value = value.format(**{k: f[k] for k in ("missing", "dir", "file")})
                argv = list(base)
                if opt in argv:
                    argv[argv.index(opt) + 1] = value
                else:
                    argv += [opt, value]
                out.append((cmd, opt, kind, argv))
    return out


def _tree(root: Path) -> dict:
    """Every file and folder under root with a digest of its bytes."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            out[os.path.join(dirpath, d)] = "dir"
        for name in filenames:
            p = os.path.join(dirpath, name)
            out[p] = hashlib.sha256(Path(p).read_bytes()).hexdigest()
    return out


def _names(line: str, opt: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", line) is not None


def check(f, cmd, opt, kind, argv):
    root = f["root"]
    before = _tree(root)
    rc, stdout, text = run_cli(argv, cwd=root / "out", seconds=CALL_SECONDS, what=f"{opt} = {kind}: {argv}")
    where = f"{cmd} {opt} = {kind} ({argv})"
    assert "Traceback" not in text, f"{where}\n{text}"
    if rc == 0:
        after = _tree(root)
        value = argv[argv.index(opt) + 1]
        ok = _valid(opt, kind) or _wrote_it(value, root / "out", set(after) - set(before))
        _restore(root, before)
        if ok:
            return rc
    assert rc == 2, f"{where}: exit code {rc}, expected 2\nstderr: {text}\nstdout: {stdout[:300]}"
    lines = text.strip().splitlines()
    assert len(lines) == 1, f"{where}: expected one line on stderr, got {lines}"
    head = f"mdmtheory {cmd}: error: "
    assert lines[0].startswith(head), f"{where}: {lines[0]!r}"
    assert _names(lines[0], opt), f"{where}: the error does not name {opt}: {lines[0]!r}"
    assert stdout == "", f"{where}: printed on stdout although refused"
    after = _tree(root)
    _restore(root, before)
    assert after == before, f"{where}: refused but left files behind or changed them"
    return rc


def _restore(root: Path, before: dict) -> None:
    """After a run: remove what it wrote and put back what it changed (every call starts
    from the same files; a changed input is also a failure of a refused call)."""
    import shutil

    for p in sorted(set(_tree(root)) - set(before), key=len, reverse=True):
        if os.path.isdir(p):
            shutil.rmtree(p, ignore_errors=True)
        elif os.path.exists(p):
            os.remove(p)
    for p, digest in before.items():
        if digest != "dir" and hashlib.sha256(Path(p).read_bytes()).hexdigest() != digest:
            Path(p).write_bytes(ORIGINALS[p])


#: The bytes of every file of the test's folder before the first call (filled by the fixture).
ORIGINALS: dict = {}


def _sample(all_cases, n: int) -> list:
    """A deterministic sample of the table: every command and every hostile kind present."""
    rng = np.random.default_rng(30)
    order = [all_cases[i] for i in rng.permutation(len(all_cases))]
    picked, seen = [], set()
    for c in order:  # first the cases that add a command or a kind not yet covered
        key = {("cmd", c[0]), ("kind", c[2])}
        if not key <= seen:
            picked.append(c)
            seen |= key
    for c in order:
        if len(picked) >= n:
            break
        if c not in picked:
            picked.append(c)
    return picked


def test_the_table_covers_every_command_and_option(files):
    """The table is read from the parsers: every command with a base, every value-taking option."""
    table = cases(files)
    covered = {(c, o) for c, o, _, _ in table}
    for cmd in _bases(files):
        assert cmd in COMMANDS
        for opt in _options(cmd):
            assert (cmd, opt) in covered
    assert {k for _, _, k, _ in table} == set(HOSTILE)
    # an option added to a parser is in the table without editing it
    import mdmtheory.cli.demo as demo

    old = demo.add_arguments

    def plus(parser):
        old(parser)
        parser.add_argument("--brand-new", type=int, default=1)

    demo.add_arguments = plus
    try:
        assert ("demo", "--brand-new") in {(c, o) for c, o, _, _ in cases(files)}
    finally:
        demo.add_arguments = old


def test_hostile_cli_sample(files):
    for case in _sample(cases(files), SAMPLE):
        check(files, *case)


@pytest.mark.slow
def test_hostile_cli_full_table(files):
    failures = []
    for case in cases(files):
        try:
            check(files, *case)
        except pytest.fail.Exception as exc:
            failures.append(str(exc).splitlines()[0][:400])
        except AssertionError as exc:
            failures.append(str(exc).splitlines()[0][:400])
    assert not failures, f"{len(failures)} failing cases:\n" + "\n".join(failures)
