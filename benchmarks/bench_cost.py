"""What the main job and the command cost (issue 31 items 13-14): ``make demo``'s peak memory
and CPU time, the CPU time of ``import mdmtheory`` and of ``mdmtheory --help``, and which
heavy libraries each loads, every figure from a fresh process: CPU time from ``os.wait4``
(the child's ``ru_utime``, ``ru_stime``), peak RSS from the child's ``VmHWM`` in
``/proc/self/status`` read as it exits (``ru_maxrss`` would not do: Linux keeps it across
``execve``, so a child's starts at its parent's peak).

``--before PATH`` measures a second checkout of the package the same way (e.g. the commit
before a change, exported with ``git archive``) and prints the ratio before / now. The
targets of issue 31: the demo's peak RSS at most 1.5 GB, ``mdmtheory --help`` at most 0.5 s
of CPU, ``import mdmtheory`` without JAX. CPU time, not wall time: the machine is shared.

    PYTHONPATH=. python benchmarks/bench_cost.py [--quick] [--reps 3] [--before PATH]

``--quick``: the ``import mdmtheory`` and ``--help`` rows only, one repeat (what the test suite
runs).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _util import print_machine, print_table

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "scipy", "jax", "torch", "matplotlib")
#: The issue's targets.
DEMO_PEAK_MIB = 1.5e9 / 2**20  # 1.5 GB, the decimal unit of the "4.7 GB" (= 4499 MiB): 1430.5 MiB
HELP_CPU_S = 0.5
#: Prints the heavy libraries a child has loaded and its peak RSS, on stderr (stdout is the
#: command's), as it exits.
_MODULES = ("import atexit, sys; atexit.register(lambda: print('@@modules', ','.join(m for m in {heavy!r} "
            "if m in sys.modules), '@@hwm', next(l.split()[1] for l in open('/proc/self/status') "
            "if l.startswith('VmHWM')), file=sys.stderr))")


def child_cost(code_or_args, tree: Path, timeout: float = 1800.0) -> dict:
    """Run ``python -c code`` (a str) or ``python args...`` with ``tree`` first on the path;
    returns user, sys and wall seconds, peak RSS (MiB), the heavy modules loaded, the exit
    status and the tail of stderr."""
    args = ["-c", code_or_args] if isinstance(code_or_args, str) else list(code_or_args)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, *args], cwd=str(tree), env=env, stdout=subprocess.DEVNULL, stderr=err)
        try:
            _, status, ru = os.wait4(proc.pid, 0)
        except BaseException:
            proc.kill()
            raise
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode(errors="replace")
    line = next((ln.split() for ln in text.splitlines() if ln.startswith("@@modules")), None)
    mods, hwm_kib = (None, float("nan")) if line is None else (line[1] if len(line) == 4 else "", float(line[-1]))
    return {"user": ru.ru_utime, "sys": ru.ru_stime, "cpu": ru.ru_utime + ru.ru_stime, "wall": wall,
            "peak_mib": hwm_kib / 1024, "modules": mods, "rc": proc.returncode, "stderr": text[-2000:]}


def best(cmd, tree: Path, reps: int) -> dict:
    """The run with the least CPU time among ``reps`` (the least disturbed by other jobs)."""
    runs = [child_cost(cmd, tree) for _ in range(reps)]
    for r in runs:
        if r["rc"] != 0:
            raise SystemExit(f"bench_cost: {cmd!r} in {tree} failed (exit {r['rc']}):\n{r['stderr']}")
    return min(runs, key=lambda r: r["cpu"])


def measure(tree: Path, reps: int, demo: bool) -> dict:
    watch = _MODULES.format(heavy=HEAVY)
    out = {
        "import mdmtheory": best(f"{watch}; import mdmtheory", tree, reps),
        "mdmtheory --help": best(f"{watch}; import sys; sys.argv = ['mdmtheory', '--help']; "
                                 "from mdmtheory.cli import main; main()", tree, reps),
    }
    if demo:
        out["import jax (for scale)"] = best(f"{watch}; import jax", tree, reps)
        with tempfile.TemporaryDirectory() as tmp:
            html = str(Path(tmp) / "report.html")
            # what `make demo` runs: python -m mdmtheory report --out mdmtheory-report.html
            out["make demo (report)"] = best(f"{watch}; import sys, runpy; sys.argv = ['mdmtheory', 'report', "
                                             f"'--out', {html!r}, '--quiet']; runpy.run_module('mdmtheory', "
                                             "run_name='__main__')", tree, 1)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="import and --help only, one repeat")
    ap.add_argument("--reps", type=int, default=3, help="repeats of the import and --help rows (best CPU kept)")
    ap.add_argument("--before", type=Path, help="a second checkout to compare with (its root: mdmtheory/ inside)")
    ap.add_argument("--no-demo", action="store_true", help="skip the demo row")
    a = ap.parse_args(argv)
    reps = 1 if a.quick else a.reps
    demo = not (a.quick or a.no_demo)
    print_machine("cost of the main job and of the command: fresh processes, best CPU of "
                  f"{reps} (demo: one run)")
    now = measure(ROOT, reps, demo)
    before = measure(a.before.resolve(), reps, demo) if a.before else None
    head = ["what", "CPU s (user + sys)", "wall s", "peak RSS MiB", "heavy modules loaded"]
    if before:
        head += ["before: CPU s", "before: peak MiB", "before: modules", "CPU before/now", "peak before/now"]
    rows = []
    for name, r in now.items():
        row = [name, f"{r['cpu']:.2f} ({r['user']:.2f} + {r['sys']:.2f})", f"{r['wall']:.2f}", f"{r['peak_mib']:.0f}",
               r["modules"] or "-"]
        if before:
            b = before[name]
            row += [f"{b['cpu']:.2f} ({b['user']:.2f} + {b['sys']:.2f})", f"{b['peak_mib']:.0f}", b["modules"] or "-",
                    f"{b['cpu'] / r['cpu']:.1f}x", f"{b['peak_mib'] / r['peak_mib']:.1f}x"]
        rows.append(row)
    print_table(head, rows)
    ok = True
    help_ = now["mdmtheory --help"]
    imp = now["import mdmtheory"]
    checks = [(f"mdmtheory --help CPU {help_['cpu']:.2f} s <= {HELP_CPU_S} s", help_["cpu"] <= HELP_CPU_S),
              ("import mdmtheory loads no jax, torch, matplotlib",
               not set((imp["modules"] or "").split(",")) & {"jax", "torch", "matplotlib"})]
    if demo:
        peak = now["make demo (report)"]["peak_mib"]
        checks.append((f"make demo peak RSS {peak:.0f} MiB <= {DEMO_PEAK_MIB:.0f} MiB", peak <= DEMO_PEAK_MIB))
    for text, good in checks:
        print(f"{'met' if good else 'MISSED'}: {text}")
        ok &= good
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
