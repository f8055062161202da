"""The main job (make demo): runs, covers both embedded laws, and its numbers are ordered."""

import re

import pytest

from mdmtheory.cli import main


def test_demo_runs_and_orders_its_numbers(capsys):
    assert main(["--d", "6"]) == 0
    out = capsys.readouterr().out
    assert "Markov chain" in out and "global parity" in out
    rows = re.findall(r"^\s+(\[.*?\]|optimal T=\d: \[.*?\])\s+(\d+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)", out, re.M)
    assert len(rows) >= 10
    for _, _, exact, path, riemann in rows:
        exact, path, riemann = float(exact), float(path), float(riemann)
        assert exact <= path + 1e-6 <= riemann + 2e-6  # printed to 6 decimals


def test_demo_rejects_large_d_in_one_line(capsys):
    assert main(["--d", "40"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--d" in err[0]


def test_unknown_option_is_one_line_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["demo", "--no-such-option"])
    assert exc.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_demo_json_parses_back(capsys):
    import json

    assert main(["demo", "--d", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["d"] == 4 and len(out["laws"]) == 2
    for law in out["laws"]:
        assert abs(sum(law["profile"]) - law["entropy"]) < 1e-9


# -- every command: --json parsed back and checked against the library; bad input one line, exit 2
import itertools  # noqa: E402
import json  # noqa: E402

import numpy as np  # noqa: E402

import mdmtheory as mt  # noqa: E402
from mdmtheory.laws import families  # noqa: E402
from mdmtheory.cli import COMMANDS, build_parser  # noqa: E402


def _json(capsys, argv):
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _one_line_error(capsys, argv, word):
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse errors
        rc = exc.code
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, err
    assert word in err[0], err[0]


@pytest.fixture
def chain_table(tmp_path):
    p = families.markov_chain([[0.7, 0.3], [0.4, 0.6]], 4)
    path = tmp_path / "chain.npy"
    np.save(path, p.table)
    return p, str(path)


def test_every_command_has_help_with_an_example(capsys):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in COMMANDS:
        text = sub.choices[name].format_help()
        assert "example:" in text and f"mdmtheory {name}" in text and "--json" in text


def test_profile_json_matches_the_library_and_writes_csv(capsys, chain_table, tmp_path):
    p, path = chain_table
    out = _json(capsys, ["profile", "--table", path, "--csv", str(tmp_path / "phi.csv")])
    np.testing.assert_allclose(out["profile"], mt.information_profile(p).values, atol=1e-13)
    assert out["entropy"] == pytest.approx(-np.sum(p.table * np.log(p.table)), abs=1e-12)
    rows = (tmp_path / "phi.csv").read_text().splitlines()
    assert rows[0] == "m,phi" and len(rows) == 5
    np.testing.assert_allclose([float(r.split(",")[1]) for r in rows[1:]], out["profile"], rtol=0, atol=0)


def test_profile_from_token_sequences_is_the_empirical_law(capsys, tmp_path):
    seqs = np.array([[0, 1, 1], [0, 1, 1], [1, 0, 2], [0, 0, 0]])
    f = tmp_path / "seq.txt"
    f.write_text("\n".join(" ".join(map(str, s)) for s in seqs) + "\n")
    out = _json(capsys, ["profile", "--data", str(f)])
    assert out["d"] == 3 and out["K"] == 3
    assert out["entropy"] == pytest.approx(-(0.5 * np.log(0.5) + 2 * 0.25 * np.log(0.25)), abs=1e-12)
    np.save(tmp_path / "seq.npy", seqs)
    assert _json(capsys, ["profile", "--data", str(tmp_path / "seq.npy")])["profile"] == out["profile"]


def test_exact_json_matches_the_engine(capsys, chain_table):
    p, path = chain_table
    out = _json(capsys, ["exact", "--table", path, "--sizes", "1,3", "--planner", "confidence"])
    q = mt.sampler_law(p, mt.Schedule((1, 3)), planner="confidence")
    assert out["kl"] == pytest.approx(mt.kl(p, q), abs=1e-14)
    assert out["kl"] <= out["path_kl"] + 1e-12 and out["plan"]["sizes"] == [1, 3]
    g = _json(capsys, ["exact", "--table", path, "--grid", "0,0.5,1"])
    assert g["plan"]["kind"] == "grid" and g["path_kl"] == pytest.approx(mt.path_kl(p, mt.Grid((0, 0.5, 1))), abs=1e-12)


def test_bounds_json_rows_hold(capsys, chain_table):
    _, path = chain_table
    out = _json(capsys, ["bounds", "--table", path, "--steps", "2"])
    names = [r["name"] for r in out["rows"]]
    assert names[:2] == ["kl", "path_kl"] and "riemann" in names and out["all_hold"]
    kl, pk = out["rows"][0]["value"], out["rows"][1]["value"]
    for r in out["rows"]:
        if r["kind"] == "upper" and r["quantity"] in ("kl", "path_kl"):
            v = float("inf") if r["value"] == "inf" else r["value"]
            assert v >= (kl if r["quantity"] == "kl" else pk) - 1e-12


def _brute_best(phi, T):
    d, best = len(phi), float("inf")
    for cuts in itertools.combinations(range(1, d), T - 1):
        b = (0,) + cuts + (d,)
        best = min(best, sum((b[i + 1] - b[i]) * phi[b[i]] for i in range(T)) - sum(phi))
    return best


def test_schedule_from_a_profile_file_is_the_brute_force_optimum(capsys, tmp_path):
    phi = [0.9, 0.5, 0.45, 0.2, 0.19, 0.1]
    (tmp_path / "c.json").write_text(json.dumps({"values": phi}))
    out = _json(capsys, ["schedule", "--profile", str(tmp_path / "c.json")])
    assert [r["steps"] for r in out["schedules"]] == [1, 2, 3, 4, 5, 6]
    for r in out["schedules"]:
        assert r["path_kl"] == pytest.approx(_brute_best(phi, r["steps"]), abs=1e-12)
        assert r["families"]["constant"] >= r["path_kl"] - 1e-12
    (tmp_path / "c.csv").write_text("m,c,stderr\n" + "\n".join(f"{m},{v},0.01" for m, v in enumerate(phi)))
    one = _json(capsys, ["schedule", "--profile", str(tmp_path / "c.csv"), "--steps", "3"])
    assert one["schedules"][0]["sizes"] == out["schedules"][2]["sizes"]


def test_report_command_writes_html_and_json_twin(capsys, tmp_path):
    out = _json(capsys, ["report", "--family", "parity", "--d", "4", "--out", str(tmp_path / "r.html"),
                         "--planners", "random,confidence"])
    text = (tmp_path / "r.html").read_text()
    assert out["path"] == str(tmp_path / "r.html") and "<h2" in text
    assert out["planners"]["planners"] == ["random", "confidence"]
    assert out["bounds"]["kl"][0] == pytest.approx(np.log(2), abs=1e-12)  # parity: one step loses 1 bit (TC)
    assert main(["report", "--family", "markov", "--d", "4", "--out", str(tmp_path / "s.html"), "--quiet"]) == 0
    assert str(tmp_path / "s.html") in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, word",
    [
        (["profile"], "law"),
        (["profile", "--table", "/no/such.npy"], "--table"),
        (["profile", "--family", "markov", "--d", "40"], "--d"),
        (["profile", "--family", "markov", "--table", "x.npy"], "give only one"),
        (["exact", "--family", "markov", "--d", "4", "--sizes", "1,2"], "--sizes"),
        (["exact", "--family", "markov", "--d", "4", "--steps", "9"], "--steps"),
        (["exact", "--family", "markov", "--d", "4", "--sizes", "1,x"], "--sizes"),
        (["exact", "--family", "markov", "--d", "4", "--planner", "nope"], "planner"),
        (["bounds", "--family", "markov", "--d", "4", "--grid", "0.5,0.2"], "--grid"),
        (["schedule"], "--profile"),
        (["schedule", "--profile", "/no/such.csv"], "--profile"),
        (["report", "--family", "markov", "--d", "4", "--target", "-1"], "target"),
        (["report", "--data", "x.txt", "--no-model"], "--data"),
        (["estimate", "--model", "words", "--data", "/no/such.txt"], "--data"),
        (["nosuchcommand"], "invalid choice"),
    ],
)
def test_bad_inputs_are_one_line_exit_2(capsys, monkeypatch, tmp_path, argv, word):
    # in an empty folder: `make demo` leaves mdmtheory-report.html in the checkout, and report's
    # default --out would then be refused before the input the case is about
    monkeypatch.chdir(tmp_path)
    _one_line_error(capsys, argv, word)


def test_bad_files_are_one_line_exit_2(capsys, tmp_path):
    bad = tmp_path / "bad.npy"
    np.save(bad, np.array([[0.5, 0.6], [0.1, 0.1]]))
    _one_line_error(capsys, ["profile", "--table", str(bad)], "--table")
    (tmp_path / "t.txt").write_text("0 1\n1 0 1\n")
    _one_line_error(capsys, ["profile", "--data", str(tmp_path / "t.txt")], "--data: ragged lines")
    (tmp_path / "p.csv").write_text("m,phi\n0,abc\n")
    _one_line_error(capsys, ["schedule", "--profile", str(tmp_path / "p.csv")], "--profile")
    (tmp_path / "p.json").write_text('{"other": 1}')
    _one_line_error(capsys, ["schedule", "--profile", str(tmp_path / "p.json")], "--profile")
    # 2^25 cells, over the dense limit 2^24; a sparse file, refused from its header alone
    np.lib.format.open_memmap(tmp_path / "big.npy", mode="w+", dtype=np.float32, shape=(2,) * 25).flush()
    _one_line_error(capsys, ["profile", "--table", str(tmp_path / "big.npy")], "too large")


@pytest.fixture
def tiny_checkpoint(tmp_path):
    torch = pytest.importorskip("torch")
    from mdmtheory.bridge.tiny import TinyConfig, TinyMDM, save_checkpoint

    torch.manual_seed(0)
    model = TinyMDM(TinyConfig(vocab_size=2, seq_len=4, d_model=16, n_layers=1, n_heads=2, d_ff=32))
    st, _ = save_checkpoint(model, tmp_path / "m.safetensors")
    seqs = families.markov_chain([[0.7, 0.3], [0.4, 0.6]], 4)
    rng = np.random.default_rng(0)
    idx = rng.choice(16, size=300, p=seqs.table.ravel())
    data = np.stack(np.unravel_index(idx, (2,) * 4), axis=1)
    np.save(tmp_path / "data.npy", data)
    return st, str(tmp_path / "data.npy"), data


def test_estimate_is_the_bridge_estimator_on_the_loaded_checkpoint(capsys, tiny_checkpoint, tmp_path):
    from mdmtheory import bridge
    from mdmtheory.bridge.tiny import load_checkpoint

    st, data_path, data = tiny_checkpoint
    out = _json(capsys, ["estimate", "--model", st, "--data", data_path, "--n-per-level", "50",
                         "--sizes", "2,2", "--n-path", "50", "--csv", str(tmp_path / "c.csv")])
    ref = bridge.estimate_profile(load_checkpoint(st), data, n_per_level=50, seed=0)
    np.testing.assert_allclose(out["values"], np.asarray(ref.values), rtol=1e-12)
    assert out["levels"] == [0, 1, 2, 3] and all(s > 0 for s in out["stderr"])
    assert out["path"]["sizes"] == [2, 2] and out["path"]["stderr"] > 0
    sched = _json(capsys, ["schedule", "--profile", str(tmp_path / "c.csv"), "--steps", "2"])
    assert sum(sched["schedules"][0]["sizes"]) == 4
    _one_line_error(capsys, ["estimate", "--model", str(tmp_path / "none.safetensors"), "--data", data_path],
                    "--model")


def test_report_with_a_checkpoint_has_the_model_section(capsys, tiny_checkpoint, tmp_path):
    st, data_path, _ = tiny_checkpoint
    out = _json(capsys, ["report", "--table", _save_chain(tmp_path), "--model", st, "--data", data_path,
                         "--n-per-level", "50", "--steps", "1,2,4", "--planners", "random", "--out", str(tmp_path / "r.html")])
    ce = out["profile"]["cross_entropy"]
    assert ce["levels"] == [0, 1, 2, 3] and out["frontier"]["model_designed"] is not None
    assert "c(m) model" in (tmp_path / "r.html").read_text()


def _save_chain(tmp_path):
    path = tmp_path / "chain.npy"
    np.save(path, families.markov_chain([[0.7, 0.3], [0.4, 0.6]], 4).table)
    return str(path)


# -- issue 17: what a new user hits --------------------------------------------------------
def _err_line(capsys, argv) -> str:
    try:
        rc = main(argv)
    except SystemExit as exc:
        rc = exc.code
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1, (rc, err)
    return err[0]


@pytest.mark.parametrize("values, word", [
    ([0.5, 0.3, -0.1], "m = 2"),  # negative: the "optimal" path KL came out negative
    ([0.2, 0.5, 0.1], "m = 0 to m = 1"),  # increasing
])
def test_schedule_refuses_a_profile_that_is_not_a_profile(capsys, tmp_path, values, word):
    f = tmp_path / "p.json"
    f.write_text(json.dumps(values))
    line = _err_line(capsys, ["schedule", "--profile", str(f)])
    assert line.startswith("mdmtheory schedule: error: --profile:") and word in line


def test_schedule_accepts_an_increase_within_the_files_standard_errors(capsys, tmp_path):
    phi, se = [0.9, 0.5, 0.51, 0.2], [0.01, 0.01, 0.01, 0.01]  # 0.5 -> 0.51: within 3 SE of the difference
    f = tmp_path / "c.csv"
    f.write_text("m,c,stderr\n" + "\n".join(f"{m},{v},{s}" for m, (v, s) in enumerate(zip(phi, se))))
    out = _json(capsys, ["schedule", "--profile", str(f)])
    assert out["nonincreasing"] is False and [r["steps"] for r in out["schedules"]] == [1, 2, 3, 4]
    f.write_text("m,c,stderr\n" + "\n".join(f"{m},{v},0.001" for m, v in enumerate(phi)))
    assert "m = 1 to m = 2" in _err_line(capsys, ["schedule", "--profile", str(f)])


def test_every_command_that_reads_tokens_takes_chars(capsys, tmp_path):
    text = tmp_path / "w.txt"
    text.write_text("abc\nabc\nbca\ncab\n")
    ints = tmp_path / "w.npy"
    np.save(ints, np.array([[0, 1, 2], [0, 1, 2], [1, 2, 0], [2, 0, 1]]))
    for cmd in (["profile"], ["exact"], ["bounds"], ["schedule"]):
        a = _json(capsys, [*cmd, "--data", str(text), "--chars"])
        b = _json(capsys, [*cmd, "--data", str(ints)])
        a.pop("source"), b.pop("source"), a.pop("name", None), b.pop("name", None)
        assert a == b, cmd
    # without --chars the hint names an option the command has
    line = _err_line(capsys, ["profile", "--data", str(text)])
    assert "--chars" in line
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name in ("profile", "exact", "bounds", "schedule", "estimate", "report", "design", "train"):
        assert "--chars" in sub.choices[name].format_help(), name


def test_estimate_reads_characters_through_the_checkpoints_alphabet(capsys, tmp_path):
    pytest.importorskip("torch")
    from mdmtheory.bridge.tiny import load_pretrained, pretrained_path, read_checkpoint_info

    alphabet = read_checkpoint_info(str(pretrained_path("words")))["info"]["alphabet"]
    words = ["there", "about", "which"]
    (tmp_path / "w.txt").write_text("\n".join(words) + "\n")
    np.save(tmp_path / "w.npy", np.array([[alphabet.index(c) for c in w] for w in words]))
    a = _json(capsys, ["estimate", "--model", "words", "--data", str(tmp_path / "w.txt"), "--chars",
                       "--n-per-level", "20"])
    b = _json(capsys, ["estimate", "--model", "words", "--data", str(tmp_path / "w.npy"), "--n-per-level", "20"])
    assert a["values"] == b["values"] and load_pretrained("words").config.seq_len == a["d"]


def test_broken_pipe_is_quiet(tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(mt.__file__))))
    p = subprocess.Popen([sys.executable, "-m", "mdmtheory", "bounds", "--family", "markov", "--d", "4", "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    p.stdout.close()  # the reader is gone before the first write (as `| head` after its lines)
    err = p.stderr.read().decode()
    p.wait(timeout=120)
    assert err == "" and p.returncode == 0, err


def test_broken_pipe_in_process(capsys, monkeypatch):
    class Gone:
        def write(self, s):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr("sys.stdout", Gone())
    assert main(["bounds", "--family", "markov", "--d", "4"]) == 0


@pytest.mark.parametrize("argv, option", [
    (["profile", "--family", "markov", "--d", "4", "--csv", "{missing}/phi.csv"], "--csv"),
    (["report", "--family", "markov", "--d", "4", "--out", "{missing}/r.html"], "--out"),
    (["train", "--data", "{data}", "--out", "{missing}/x.safetensors", "--train-steps", "1"], "--out"),
    (["estimate", "--model", "words", "--data", "{data}", "--csv", "{missing}/c.csv"], "--csv"),
    (["train", "--data", "{data}", "--out", "{tmp}", "--train-steps", "1"], "--out"),  # a folder, not a file
])
def test_output_paths_are_checked_before_any_work(capsys, tmp_path, monkeypatch, argv, option):
    if argv[0] in ("train", "estimate"):
        pytest.importorskip("torch")
    (tmp_path / "w.txt").write_text("0 1 2 3 4\n1 2 3 4 0\n")
    sub = {"missing": str(tmp_path / "no" / "dir"), "data": str(tmp_path / "w.txt"), "tmp": str(tmp_path)}
    argv = [a.format(**sub) for a in argv]
    import mdmtheory.bridge.train as T
    import mdmtheory.report as R

    def never(*a, **k):
        raise AssertionError("work started before the output path was checked")

    monkeypatch.setattr(T, "train", never)
    monkeypatch.setattr(R, "build_report", never)
    monkeypatch.setattr("mdmtheory.report.report.build_report", never)  # the CLI imports it when it runs
    line = _err_line(capsys, argv)
    assert f"error: {option}:" in line
    assert not (tmp_path / "no").exists()  # nothing created


@pytest.mark.parametrize("argv, option", [
    (["profile", "--family", "markov", "--K", "3"], "--K"),
    (["profile", "--table", "{table}", "--d", "5"], "--d"),
    (["profile", "--family", "markov", "--chars"], "--chars"),
    (["estimate", "--model", "words", "--data", "{data}", "--mask-id", "3"], "--mask-id"),
    (["estimate", "--model", "words", "--data", "{data}", "--shift"], "--shift"),
    (["design", "--data", "{data}", "--steps", "2", "--n-per-level", "-5"], "--n-per-level"),
    (["report", "--family", "markov", "--d", "5", "--model", "words", "--out", "{tmp}/r.html"], "--model"),
    (["report", "--family", "markov", "--d", "6", "--model", "words", "--out", "{tmp}/r.html"], "--model"),
    (["report", "--no-model", "--model", "words", "--out", "{tmp}/r.html"], "--model"),
    (["train", "--data", "{data}", "--out", "{tmp}/m.safetensors", "--n", "5"], "--n"),
])
def test_options_are_never_silently_ignored(capsys, tmp_path, chain_table, argv, option):
    if any(a in argv for a in ("estimate", "report", "train")) and "--model" in argv or argv[0] == "train":
        pytest.importorskip("torch")
    (tmp_path / "w.txt").write_text("0 1 2 3 4\n1 2 3 4 0\n")
    sub = {"data": str(tmp_path / "w.txt"), "tmp": str(tmp_path), "table": chain_table[1]}
    line = _err_line(capsys, [a.format(**sub) for a in argv])
    assert f"error: {option}:" in line


def test_model_data_mismatches_speak_the_users_words(capsys, tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "r7.txt").write_text("0 1 2 3 4 5 6\n")
    line = _err_line(capsys, ["estimate", "--model", "words", "--data", str(tmp_path / "r7.txt")])
    assert "--data: rows have 7 tokens" in line and "d = 5" in line and "ids" not in line
    (tmp_path / "r5.txt").write_text("0 1 2 3 4\n")
    line = _err_line(capsys, ["estimate", "--model", "words-ar", "--data", str(tmp_path / "r5.txt")])
    assert "--model:" in line and "causal" in line and "26..26" not in line
    (tmp_path / "big.txt").write_text("0 1 2 3 30\n")
    line = _err_line(capsys, ["estimate", "--model", "words", "--data", str(tmp_path / "big.txt")])
    assert "--data: token 30" in line and "K = 26" in line


def test_exact_per_step_path_kl_is_the_librarys(capsys, chain_table):
    p, path = chain_table
    for plan, obj in ((["--sizes", "1,3"], mt.Schedule((1, 3))), (["--steps", "4"], mt.Schedule.constant(4, 4)),
                      (["--grid", "0.1,0.5,0.9"], mt.Grid((0.1, 0.5, 0.9)))):
        out = _json(capsys, ["exact", "--table", path, *plan])
        ref = mt.information.step_path_kl(p, obj)
        assert len(out["step_path_kl"]) == len(ref) == out["plan"]["steps"]
        np.testing.assert_allclose(out["step_path_kl"], ref, atol=1e-12)
        assert sum(out["step_path_kl"]) == pytest.approx(out["path_kl"], abs=1e-12)


def test_bounds_table_has_the_status_column_of_compare(capsys, chain_table):
    p, path = chain_table
    out = _json(capsys, ["bounds", "--table", path, "--steps", "2"])
    cmp = mt.compare(p, mt.Schedule.constant(4, 2))
    assert [r["status"] for r in out["rows"]] == [r.status for r in cmp.rows]
    assert main(["bounds", "--table", path, "--steps", "2"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert "status" in text[1].split()
    assert any("paper" in line for line in text[3:])


def test_a_token_of_a_billion_is_refused_before_work(capsys, tmp_path):
    (tmp_path / "t.txt").write_text("0 1\n1 1000000000\n")
    for argv in (["profile", "--data", str(tmp_path / "t.txt")], ["design", "--data", str(tmp_path / "t.txt"), "--steps", "1"]):
        line = _err_line(capsys, argv)
        assert "65,536" in line and "--data" in line
    # a .npy header that claims more than the file holds is not believed
    f = tmp_path / "h.npy"
    with open(f, "wb") as fh:  # claims 8 GB of int64, holds 16 bytes
        np.lib.format.write_array_header_1_0(fh, {"descr": "<i8", "fortran_order": False, "shape": (10**9, 1)})
        fh.write(np.zeros(2, dtype=np.int64).tobytes())
    for argv in (["profile", "--data", str(f)], ["design", "--data", str(f), "--steps", "1"]):
        line = _err_line(capsys, argv)
        assert "header" in line and "claims shape (1000000000, 1)" in line


def test_hugging_face_mask_id_out_of_the_vocabulary_is_refused(capsys, tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=20, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                  intermediate_size=16, max_position_embeddings=8, mask_token_id=4)
    transformers.BertForMaskedLM(cfg).save_pretrained(tmp_path / "bert")
    capsys.readouterr()  # transformers' own progress bar while saving
    (tmp_path / "x.txt").write_text("0 1 2\n3 2 1\n")
    line = _err_line(capsys, ["estimate", "--model", str(tmp_path / "bert"), "--data", str(tmp_path / "x.txt"),
                              "--mask-id", "99"])
    assert "--mask-id: 99" in line and "0..19" in line
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text("{ not json")
    line = _err_line(capsys, ["estimate", "--model", str(tmp_path / "bad"), "--data", str(tmp_path / "x.txt")])
    assert line.startswith("mdmtheory estimate: error: --model:")
    out = _json(capsys, ["estimate", "--model", str(tmp_path / "bert"), "--data", str(tmp_path / "x.txt"),
                         "--n-per-level", "3"])
    assert out["d"] == 3 and len(out["values"]) == 3


# -- issue 18 §5: one loader for every command ------------------------------------------------
def test_report_baseline_takes_a_causal_hugging_face_folder_like_a_checkpoint(capsys, tiny_checkpoint, tmp_path):
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    from mdmtheory.bridge.tiny import TinyConfig, TinyMDM, save_checkpoint

    st, data_path, _ = tiny_checkpoint
    torch.manual_seed(1)
    ar, _ = save_checkpoint(TinyMDM(TinyConfig(vocab_size=2, seq_len=4, d_model=16, n_layers=1, n_heads=2, d_ff=32,
                                               causal=True)), tmp_path / "ar.safetensors")
    cfg = transformers.GPT2Config(vocab_size=4, n_embd=16, n_layer=2, n_head=2, n_positions=8)
    transformers.GPT2LMHeadModel(cfg).save_pretrained(tmp_path / "gpt2")
    base = ["report", "--table", _save_chain(tmp_path), "--model", st, "--n-per-level", "20", "--columns", "1,2",
            "--planners", "random", "--attention-samples", "8", "--attention-info-samples", "4"]
    for b in (ar, str(tmp_path / "gpt2")):
        capsys.readouterr()
        out = _json(capsys, base + ["--baseline", b, "--out", str(tmp_path / "r.html"), "--overwrite"])
        bl = out["attention"]["baseline"]
        assert len(bl["bos_mean"]) == (1 if b == ar else 2)  # one value per layer of the baseline
        assert all(0 <= v <= 1 for v in bl["bos_mean"])
    # a masked (non-causal) folder is refused as a baseline, by name
    transformers.BertForMaskedLM(transformers.BertConfig(vocab_size=4, hidden_size=8, num_hidden_layers=1,
                                                         num_attention_heads=2, intermediate_size=8)).save_pretrained(
        tmp_path / "bert")
    capsys.readouterr()
    assert main(base + ["--baseline", str(tmp_path / "bert"), "--out", str(tmp_path / "r.html"), "--overwrite"]) == 2
    assert "--baseline: " in capsys.readouterr().err
