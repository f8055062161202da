"""Fuzz of every CLI command: ``mdmtheory.cli.main(argv)`` in-process with hostile options.

Each generated call starts from a small valid command line and replaces or adds a few
options (and the token file of --data) with hostile values: negative, huge and non-finite
numbers, garbage text, missing files and folders, empty and binary files, a ``.npy``
whose header claims a huge shape, ragged token files, a token of 10^9, deep JSON, a
garbage Hugging Face folder, unknown names. The contract (issue 17):

* the exit code is 0 or 2, never a traceback (any exception escaping ``main`` fails);
* on 2, stderr is exactly one line ``mdmtheory CMD: error: ...`` that names an option or
  argument (``--opt`` or argparse's ``argument --opt`` forms);
* every call ends within :data:`CALL_SECONDS` (a SIGALRM timer, as in tests/contract/test_fuzz.py);
* nothing is created outside the test's folder (the repository and the missing folders
  named in the options are checked after each call).

Two profiles: a fast derandomized one in ``make test`` and a ``slow`` one
(``pytest -m slow tests/contract/test_fuzz_cli.py``) of thousands of calls; ``-s`` prints the count.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
from fuzz_harness import run_cli  # main under an alarm in a folder (shared with the other CLI table)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mdmtheory.cli import COMMANDS, build_parser

#: Longest time one call may take (the first calls import torch and jit-compile).
CALL_SECONDS = 90.0
CALLS = {"n": 0, "ok": 0, "refused": 0}
REPO = Path(__file__).resolve().parents[2]

_NAMED = re.compile(r"^(--[A-Za-z][\w-]*|argument |the following arguments are required: |one of the arguments |"
                    r"unrecognized arguments: |ambiguous option: |invalid choice: )")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The files the fuzz points options at (made once; the calls never modify them)."""
    root = tmp_path_factory.mktemp("fuzzcli")
    f = {}

    def put(name, data):
        p = root / name
        p.write_bytes(data) if isinstance(data, bytes) else p.write_text(data)
        f[name] = str(p)

    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, size=(40, 4))
    put("tokens.txt", "\n".join(" ".join(map(str, r)) for r in x) + "\n")
    np.save(root / "tokens.npy", x)
    f["tokens.npy"] = str(root / "tokens.npy")
    put("chars.txt", "abca\nbcab\ncabc\nabca\n")
    put("empty.txt", "")
    put("empty.npy", b"")
    put("binary.bin", bytes(range(256)) * 4)
    put("ragged.txt", "0 1 0 1\n1 0\n")
    put("billion.txt", "0 1 0 1\n1 0 1 1000000000\n")
    put("negative.txt", "0 1 0 -1\n")
    put("floats.npy", b"")
    np.save(root / "floats.npy", rng.random((3, 4)))
    with open(root / "huge.npy", "wb") as fh:
        np.lib.format.write_array_header_1_0(fh, {"descr": "<i8", "fortran_order": False, "shape": (10**9, 4)})
        fh.write(b"\0" * 64)
    f["huge.npy"] = str(root / "huge.npy")
    np.save(root / "table.npy", np.full((2, 2, 2), 1 / 8))
    f["table.npy"] = str(root / "table.npy")
    put("profile.csv", "m,phi\n0,0.9\n1,0.5\n2,0.3\n3,0.1\n")
    put("profile.json", json.dumps({"values": [0.9, 0.5, 0.3, 0.1], "stderr": [0.01] * 4}))
    put("rising.json", "[0.1, 0.5, 0.9]")
    put("negprof.json", "[0.5, -0.5]")
    put("deep.json", "[" * 100_000 + "]" * 100_000)
    put("bigprof.json", "[1e308, 1e308, 1e307]")
    put("nanprof.csv", "m,phi\n0,nan\n1,0.1\n")
    hf = root / "hf_garbage"
    hf.mkdir()
    (hf / "config.json").write_text("{ not json")
    f["hf_garbage"] = str(hf)
    f["dir"] = str(root)
    f["missing"] = str(root / "no_such_file.txt")
    f["missing_dir"] = str(root / "no_such_dir")
    f["out.html"] = str(root / "out" / "r.html")
    f["out.csv"] = str(root / "out" / "c.csv")
    f["out.safetensors"] = str(root / "out" / "m.safetensors")
    (root / "out").mkdir()
    f["root"] = str(root)
    try:
        import torch

        from mdmtheory.bridge.tiny import TinyConfig, TinyMDM, save_checkpoint

        torch.manual_seed(0)
        st_path, _ = save_checkpoint(TinyMDM(TinyConfig(vocab_size=2, seq_len=4, d_model=8, n_layers=1, n_heads=2,
                                                        d_ff=16)), root / "tiny.safetensors")
        f["tiny"] = st_path
        put("corrupt.safetensors", b"\x10\x00\x00\x00\x00\x00\x00\x00{\"a\": [1, 2, 3]}" + b"\0" * 8)
        (root / "corrupt.json").write_text('{"format": "mdmtheory.tiny/1", "config": {"vocab_size": 1e12}}')
    except ImportError:
        f["tiny"] = f["missing"]
        put("corrupt.safetensors", b"")
    # an output option may be pointed at an input file (a valid overwrite): check_call
    # restores the inputs after each call so every call starts from the same files
    f["_originals"] = {p: Path(p).read_bytes() for p in map(str, root.iterdir()) if Path(p).is_file()}
    return f


def _bases(f):
    """A small valid command line per command (cheap to run when nothing is hostile)."""
    return {
        "demo": ["demo", "--d", "3"],
        "profile": ["profile", "--family", "markov", "--d", "3"],
        "exact": ["exact", "--family", "parity", "--d", "3", "--steps", "2"],
        "bounds": ["bounds", "--family", "parity", "--d", "3", "--steps", "2"],
        "schedule": ["schedule", "--profile", f["profile.csv"]],
        "estimate": ["estimate", "--model", f["tiny"], "--data", f["tokens.txt"], "--n-per-level", "3",
                     "--n-path", "3"],
        "report": ["report", "--family", "markov", "--d", "4", "--out", f["out.html"], "--planners", "random",
                   "--columns", "1,2", "--n-per-level", "3", "--attention-samples", "2", "--attention-info-samples", "2"],
        "design": ["design", "--data", f["tokens.txt"], "--steps", "2", "--n-per-level", "5"],
        "train": ["train", "--data", f["tokens.txt"], "--out", f["out.safetensors"], "--train-steps", "1", "--batch-size", "2"],
        "tune": ["tune", "--planner", "threshold", "--forwards", "3", "--family", "markov", "--d", "3"],
    }


NUMBERS = ["-5", "0", "-1", "1", "2", "3", "1000000000000", str(10**30), "nan", "inf", "-inf", "1e400", "0.5",
           "-0.5", "abc", "", "1,2", "-1,5", "1,,2", "0,nan", "3,1", "0,0.5,1", "2,2"]
NAMES = ["random", "confidence", "nope", "markov", "parity", "words", "words-ar", "json", "llada", "mdlm", ""]
PATHS = ["tokens.txt", "tokens.npy", "chars.txt", "empty.txt", "empty.npy", "binary.bin", "ragged.txt", "billion.txt",
         "negative.txt", "floats.npy", "huge.npy", "table.npy", "profile.csv", "profile.json", "rising.json",
         "negprof.json", "deep.json", "bigprof.json", "nanprof.csv", "hf_garbage", "dir", "missing", "missing_dir",
         "tiny", "corrupt.safetensors", "out.html", "out.csv", "out.safetensors"]


def _options(cmd: str) -> list[tuple[str, bool]]:
    """(option, takes a value) of a command, from its parser (help excluded, and the old
    spellings kept for one release: they add their one stderr line, tests/cli checks them)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command").choices[cmd]
    out = []
    for a in sub._actions:
        if not a.option_strings or "-h" in a.option_strings or a.help == argparse.SUPPRESS:
            continue
        out.append((a.option_strings[0], a.nargs != 0))
    return out


OPTIONS = {cmd: _options(cmd) for cmd in COMMANDS}


@st.composite
def command_lines(draw, f):
    cmd = draw(st.sampled_from(sorted(COMMANDS)))
    argv = list(_bases(f)[cmd])
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["number", "name", "path", "missing_dir_out"]))
        if kind == "number":
            value = draw(st.sampled_from(NUMBERS))
        elif kind == "name":
            value = draw(st.sampled_from(NAMES))
        elif kind == "path":
            value = f[draw(st.sampled_from(PATHS))]
        else:
            value = os.path.join(f["missing_dir"], "x" + draw(st.sampled_from([".csv", ".html", ".safetensors"])))
        if cmd in ("design", "train") and draw(st.integers(0, 5)) == 0:
            argv[2] = value  # the token file of --data
            continue
        opt, takes = draw(st.sampled_from(OPTIONS[cmd]))
        if opt in argv:
            i = argv.index(opt)
            if takes:
                argv[i + 1] = value
            continue
        argv += [opt, value] if takes else [opt]
    return cmd, argv


def _snapshot(f):
    """The repository's top level, and whether the missing folder was created (never)."""
    return sorted(os.listdir(REPO)), os.path.isdir(f["missing_dir"])


def check_call(cmd, argv, f):
    """Run one command line under the contract; returns the exit code."""
    CALLS["n"] += 1
    before = _snapshot(f)
    rc, stdout, text = run_cli(argv, cwd=f["root"], seconds=CALL_SECONDS, what=str(argv))
    assert "Traceback" not in text, f"{argv}\n{text}"
    assert rc in (0, 2), f"exit code {rc}: {argv}\n{text}"
    if rc == 2:
        CALLS["refused"] += 1
        lines = text.strip().splitlines()
        assert len(lines) == 1, f"{argv}: expected one line on stderr, got {lines}"
        head = f"mdmtheory {cmd}: error: "
        assert lines[0].startswith(head), f"{argv}: {lines[0]!r}"
        assert _NAMED.match(lines[0][len(head):]), f"{argv}: the error names no option: {lines[0]!r}"
    else:
        CALLS["ok"] += 1
    assert _snapshot(f) == before, f"{argv}: created a file or folder outside the test's folder"
    if os.path.isfile(f["missing_dir"]):  # an output written to that name (its folder exists): allowed
        os.remove(f["missing_dir"])
    for path, data in f["_originals"].items():
        if not os.path.isfile(path) or Path(path).read_bytes() != data:
            Path(path).write_bytes(data)
    for key in ("out.html", "out.csv", "out.safetensors"):  # outputs go (an existing one is refused: --overwrite)
        for path in (f[key], f[key].rsplit(".", 1)[0] + ".json"):
            if os.path.isfile(path):
                os.remove(path)
    return rc


@pytest.fixture(scope="module", autouse=True)
def _report_calls():
    yield
    print(f"\nCLI fuzz: {CALLS['n']} calls ({CALLS['ok']} ran, {CALLS['refused']} refused)")


_common = dict(deadline=None, suppress_health_check=list(HealthCheck), database=None)


@settings(max_examples=40, derandomize=True, **_common)
@given(data=st.data())
def test_cli_fuzz(files, data):
    cmd, argv = data.draw(command_lines(files))
    check_call(cmd, argv, files)


@pytest.mark.slow
@settings(max_examples=5000, derandomize=False, **_common)
@given(data=st.data())
def test_cli_fuzz_slow(files, data):
    cmd, argv = data.draw(command_lines(files))
    check_call(cmd, argv, files)


@pytest.mark.slow
def test_every_base_command_line_runs(files):
    """The starting points are valid: a refusal in the fuzz is the hostile value's."""
    for cmd, argv in _bases(files).items():
        if files["tiny"] == files["missing"] and cmd in ("estimate", "train"):
            continue
        assert check_call(cmd, argv, files) == 0, argv
