"""Shared helpers of the benchmark scripts: timing, peak memory, machine description, tables.

The benchmark scripts are run as ``python benchmarks/bench_X.py``; Python then puts
``benchmarks/`` first on ``sys.path``, so they import this module as ``_util``.

Timing is wall-clock (``time.perf_counter``), best and median over repeats: the machine
is shared, so the best of several runs is the figure least disturbed by other jobs.
Peak memory is the process's peak resident set size (``getrusage(RUSAGE_SELF).ru_maxrss``):
tracemalloc does not see JAX/XLA buffers, RSS does. Peak RSS is per process, so a
benchmark that wants a per-configuration peak runs each configuration in a fresh
subprocess (:func:`run_child`).
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Callable, Sequence

__all__ = [
    "Timing",
    "time_calls",
    "time_once",
    "time_once_cpu",
    "peak_rss_mib",
    "machine_info",
    "print_machine",
    "print_table",
    "run_child",
    "emit_json",
    "current_rss_mib",
    "fmt_s",
    "JSON_PREFIX",
]

#: Prefix of the one line a child process prints with its JSON result.
JSON_PREFIX = "@@RESULT "


@dataclass(frozen=True)
class Timing:
    """Wall-clock seconds of repeated calls."""

    best: float
    median: float
    runs: int

    def __str__(self) -> str:
        return f"{fmt_s(self.best)} (median {fmt_s(self.median)}, n={self.runs})"


def time_once(fn: Callable[[], object]) -> tuple[float, object]:
    """Seconds taken by one call of ``fn`` and its result."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def time_once_cpu(fn: Callable[[], object]) -> tuple[float, float, object]:
    """Wall seconds, CPU seconds of this process (all threads) and the result of one call.

    CPU time is less sensitive than wall time to other jobs on a shared machine; it can
    exceed the wall time when the call runs on several threads (XLA does).
    """
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, time.process_time() - c0, out


def time_calls(make_call: Callable[[int], Callable[[], object]], *, repeat: int,
               min_total: float = 0.0) -> Timing:
    """Time ``repeat`` calls (more while the total is under ``min_total`` seconds).

    ``make_call(i)`` returns the i-th zero-argument callable; it is built *outside* the
    timed region, so per-call setup (e.g. a fresh record, to defeat a cache) is not timed.
    """
    times: list[float] = []
    total = 0.0
    i = 0
    while i < repeat or (total < min_total and i < 100 * max(repeat, 1)):
        call = make_call(i)
        dt, _ = time_once(call)
        times.append(dt)
        total += dt
        i += 1
    return Timing(min(times), statistics.median(times), len(times))


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, MiB (Linux reports KiB)."""
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if sys.platform == "darwin":  # pragma: no cover - bytes there
        kib /= 1024
    return kib / 1024.0


def current_rss_mib() -> float:
    """Current resident set size (Linux /proc), MiB; NaN where unavailable."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):  # pragma: no cover
        return float("nan")


def _version(name: str) -> str:
    try:
        mod = __import__(name)
        return str(getattr(mod, "__version__", "?"))
    except ImportError:
        return "not installed"


def machine_info() -> dict:
    """What the figures depend on: CPUs, load, Python and library versions."""
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        affinity = os.cpu_count()
    try:
        load = os.getloadavg()
    except OSError:  # pragma: no cover
        load = (float("nan"),) * 3
    return {
        "cpus_usable": affinity,
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "jax": _version("jax"),
        "dit": _version("dit"),
        "mdmtheory": _version("mdmtheory"),
        "loadavg_1m": round(load[0], 2),
    }


def print_machine(title: str) -> None:
    info = machine_info()
    print(f"== {title}")
    print("   " + ", ".join(f"{k}={v}" for k, v in info.items()))
    print(f"   date {time.strftime('%Y-%m-%d %H:%M:%S')}; command: "
          f"{os.path.relpath(sys.executable)} {' '.join(sys.argv)}")


def fmt_s(seconds: float) -> str:
    """Seconds in a readable unit."""
    if seconds != seconds:  # NaN
        return "—"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A plain-text table, columns left-aligned (also valid Markdown)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    print(line(cells[0]))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in cells[1:]:
        print(line(r))


def emit_json(obj: dict) -> None:
    """Print a child's result on one line that :func:`run_child` finds."""
    print(JSON_PREFIX + json.dumps(obj), flush=True)


def run_child(args: Sequence[str], *, timeout: float) -> dict:
    """Run ``python <args>`` in a fresh process and return the JSON it emitted.

    On failure or timeout returns ``{"error": ...}`` instead of raising, so that one bad
    configuration does not hide the others.
    """
    cmd = [sys.executable, *args]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:.0f} s"}
    wall = time.perf_counter() - t0
    for line in proc.stdout.splitlines():
        if line.startswith(JSON_PREFIX):
            out = json.loads(line[len(JSON_PREFIX):])
            out["process_wall_s"] = wall
            out["child_stdout"] = "\n".join(
                ln for ln in proc.stdout.splitlines() if not ln.startswith(JSON_PREFIX))
            return out
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
    return {"error": f"exit {proc.returncode}: " + " / ".join(tail)}
