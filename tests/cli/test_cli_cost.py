"""Issue 39 item 7: every subcommand's ``--help`` is cheap (it cost 0.8-1.7 s of CPU:
``report --help`` imported the report and scipy.stats).

Counted, not timed, so it cannot flake: in a fresh process, ``mdmtheory CMD --help`` must
import no mdmtheory wing and none of the heavy libraries (scipy, JAX, torch, matplotlib,
transformers, diffusers, sympy, tqdm); numpy is allowed (about 0.1 s). The parsers show a few
library constants in their help: their light copies in ``mdmtheory.cli._common`` are checked
against the library here. benchmarks/bench_cli_cost.py times the same commands
(benchmarks/RESULTS.md §19).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mdmtheory.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("scipy", "jax", "jaxlib", "torch", "matplotlib", "transformers", "diffusers", "sympy", "tqdm", "tokenizers",
         "wordfreq", "hypothesis")

PROBE = """
import contextlib, io, json, sys
from mdmtheory.cli import main
cmds = {cmds!r}
out = {{}}
for cmd in cmds:
    before = set(sys.modules)
    with contextlib.redirect_stdout(io.StringIO()) as text:
        try:
            main([cmd, "--help"])
        except SystemExit:
            pass
    assert "usage: mdmtheory " + cmd in text.getvalue(), text.getvalue()[:200]
print(json.dumps(sorted(m for m in sys.modules
                        if m.split(".")[0] in {heavy!r}
                        or m.startswith("mdmtheory.") and m.split(".")[1] not in ("cli", "_moved"))))
"""


def _loaded_after_help(cmds) -> list[str]:
    out = subprocess.run([sys.executable, "-c", PROBE.format(cmds=list(cmds), heavy=HEAVY)], capture_output=True,
                         text=True, cwd=str(ROOT), check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("cmd", sorted(COMMANDS))
def test_each_command_help_imports_no_wing_and_no_heavy_library(cmd):
    assert _loaded_after_help([cmd]) == []


def test_the_probe_sees_a_heavy_import():
    """The check can fail: a command whose parser imports a wing is caught."""
    code = PROBE.format(cmds=["profile"], heavy=HEAVY).replace(
        "from mdmtheory.cli import main", "from mdmtheory.cli import main\nimport mdmtheory.information.profile")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT), check=True)
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert "mdmtheory.information" in loaded and "scipy" in loaded


def test_the_light_copies_of_library_constants_equal_their_source():
    from mdmtheory.cli import _common
    from mdmtheory.design.profile import EXACT_LIMIT
    from mdmtheory.exports.formats import FORMATS
    from mdmtheory.laws.joint import MAX_OUTCOMES
    from mdmtheory.report.report import DEFAULT_PLANNERS
    from mdmtheory.samplers import PLANNERS

    assert set(_common.PLANNER_NAMES) == set(PLANNERS)
    assert _common.DEFAULT_PLANNERS == tuple(DEFAULT_PLANNERS)
    assert _common.MAX_OUTCOMES == MAX_OUTCOMES and _common.EXACT_LIMIT == EXACT_LIMIT
    assert _common.EXPORT_FORMATS == tuple(FORMATS)


def test_the_allocator_is_tuned_by_the_command_line_only():
    """``mdmtheory.cli.main`` sets glibc's mmap and trim thresholds for a command that runs
    (benchmarks/RESULTS.md §19: the report's system time was page faults of fresh temporaries);
    importing the library or building the parsers does not."""
    import platform

    code = ("import mdmtheory.cli as c, mdmtheory, sys\ncalls = []\nreal = c._tune_allocator\n"
            "c._tune_allocator = lambda: calls.append(1) or real()\n"
            "import mdmtheory.information\nc.build_parser(['profile'])\nassert calls == [], calls\n"
            "import contextlib, io\nwith contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert c.main(['profile', '--family', 'markov', '--d', '3', '--json']) == 0\n"
            "print(len(calls), real())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT), check=True)
    n, applied = out.stdout.split()
    assert n == "1"
    if sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc":
        assert applied == "True"
