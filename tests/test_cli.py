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


def test_demo_rejects_large_d():
    with pytest.raises(SystemExit):
        main(["--d", "40"])
