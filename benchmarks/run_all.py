"""Run every ``benchmarks/bench_*.py`` in turn, each in its own subprocess, and print its output.

Scripts are discovered by glob (sorted by name), so new ``bench_*.py`` files are picked up
without editing this file. Arguments are passed through to every script (e.g. ``--quick``
for the smoke versions). Exit status: 0 when every script exited 0, else 1; a summary
table with each script's exit status and wall time is printed at the end.

Run:  .venv/bin/python benchmarks/run_all.py [--quick] [--timeout SECONDS] [-k SUBSTRING]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from _util import print_machine, print_table

HERE = Path(__file__).resolve().parent


def discover(pattern: str | None = None) -> list[Path]:
    """All ``bench_*.py`` scripts beside this file, sorted; optionally filtered by substring."""
    scripts = sorted(HERE.glob("bench_*.py"))
    if pattern:
        scripts = [s for s in scripts if pattern in s.name]
    return scripts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="pass --quick to every script")
    ap.add_argument("--timeout", type=float, default=1800.0, help="per script, seconds (default 1800)")
    ap.add_argument("-k", dest="pattern", help="only scripts whose file name contains this")
    args, extra = ap.parse_known_args(argv)
    scripts = discover(args.pattern)
    if not scripts:
        print(f"no bench_*.py scripts found in {HERE}" + (f" matching {args.pattern!r}" if args.pattern else ""))
        return 1
    print_machine(f"run_all: {len(scripts)} benchmark script(s)")
    summary = []
    for script in scripts:
        cmd = [sys.executable, str(script)] + (["--quick"] if args.quick else []) + extra
        print(f"\n{'=' * 100}\n$ {' '.join(cmd)}\n", flush=True)
        t0 = time.perf_counter()
        try:
            # output streams straight through (not captured), so long runs show progress
            rc = subprocess.run(cmd, timeout=args.timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        wall = time.perf_counter() - t0
        summary.append([script.name, rc, f"{wall:.1f} s"])
    print(f"\n{'=' * 100}\nsummary")
    print_table(["script", "exit", "wall"], summary)
    return 0 if all(r[1] == 0 for r in summary) else 1


if __name__ == "__main__":
    sys.exit(main())
