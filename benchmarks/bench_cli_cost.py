"""Cost of every subcommand's ``--help`` and of the default report (issue 39 item 7), each
from a fresh process, CPU time from ``os.wait4`` (:func:`bench_cost.child_cost`).

* ``CMD --help`` for every command, now and (``--before PATH``) in another checkout of the
  package (the commit before the change, exported with ``git archive``): the parsers no longer
  import the wings (issue 39: 0.8-1.7 s of CPU each). Target: at most 0.3 s of CPU.
* ``--report``: ``mdmtheory report --out FILE`` (what ``make demo`` runs) with the command
  line's allocator settings (:func:`mdmtheory.cli._tune_allocator`) and with glibc's defaults
  (the same run with ``_tune_allocator`` replaced by a no-op: the naive baseline), user + sys
  and wall, the peak RSS, and the ratio of system time.

    PYTHONPATH=. python benchmarks/bench_cli_cost.py [--reps 3] [--before PATH] [--report]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from _util import print_machine, print_table
from bench_cost import _MODULES, best, ROOT

HEAVY = ("numpy", "scipy", "jax", "torch", "matplotlib")
COMMANDS = ("demo", "profile", "exact", "bounds", "schedule", "estimate", "report", "design", "train")
HELP_CPU_S = 0.3


def _help_code(cmd: str) -> str:
    return (f"{_MODULES.format(heavy=HEAVY)}; import sys, contextlib, io; from mdmtheory.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n    try:\n        main([{cmd!r}, '--help'])\n"
            "    except SystemExit:\n        pass")


def _report_code(html: str, tuned: bool) -> str:
    off = "" if tuned else "import mdmtheory.cli as c; c._tune_allocator = lambda: False; "
    return (f"{_MODULES.format(heavy=HEAVY)}; {off}import sys, runpy; sys.argv = ['mdmtheory', 'report', '--out', "
            f"{html!r}, '--overwrite', '--quiet']; runpy.run_module('mdmtheory', run_name='__main__')")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3, help="repeats of each --help row (the least CPU is kept)")
    ap.add_argument("--before", type=Path, help="another checkout (its folder holds mdmtheory/) measured the same way")
    ap.add_argument("--report", action="store_true", help="also the default report, tuned and default allocator")
    ap.add_argument("--quick", action="store_true", help="one repeat, no report (run_all --quick)")
    args = ap.parse_args(argv)
    reps = 1 if args.quick else args.reps
    print_machine("CLI cost (issue 39 item 7)")
    rows, worst = [], 0.0
    for cmd in COMMANDS:
        now = best(_help_code(cmd), ROOT, reps)
        worst = max(worst, now["cpu"])
        row = [f"{cmd} --help", f"{now['cpu']:.2f} ({now['user']:.2f} + {now['sys']:.2f})", now["modules"] or "-"]
        if args.before is not None:
            old = best(_help_code(cmd), args.before, reps)
            row += [f"{old['cpu']:.2f} ({old['user']:.2f} + {old['sys']:.2f})", old["modules"] or "-",
                    f"{old['cpu'] / now['cpu']:.1f}x"]
        rows.append(row)
    head = ["command", "now: CPU s (user + sys)", "now: loads"]
    if args.before is not None:
        head += ["before: CPU s (user + sys)", "before: loads", "before / now"]
    print_table(head, rows)
    print(f"largest --help: {worst:.2f} s CPU (target <= {HELP_CPU_S} s): {'met' if worst <= HELP_CPU_S else 'NOT met'}")
    if args.report and not args.quick:
        with tempfile.TemporaryDirectory() as tmp:
            html = str(Path(tmp) / "r.html")
            res = {name: best(_report_code(html, tuned), ROOT, 1) for name, tuned in
                   (("glibc defaults (naive)", False), ("CLI allocator settings", True))}
        print_table(["report (make demo)", "CPU s (user + sys)", "wall s", "peak MiB"],
                    [[k, f"{r['cpu']:.1f} ({r['user']:.1f} + {r['sys']:.1f})", f"{r['wall']:.1f}",
                      f"{r['peak_mib']:.0f}"] for k, r in res.items()])
        a, b = res["glibc defaults (naive)"], res["CLI allocator settings"]
        print(f"system time: {a['sys']:.1f} s -> {b['sys']:.1f} s ({a['sys'] / max(b['sys'], 1e-9):.1f}x less); "
              f"CPU {a['cpu'] / b['cpu']:.2f}x; wall {a['wall'] / b['wall']:.2f}x")
    return 0 if worst <= HELP_CPU_S else 1


if __name__ == "__main__":
    sys.exit(main())
