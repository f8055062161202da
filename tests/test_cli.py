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
