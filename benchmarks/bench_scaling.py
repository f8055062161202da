"""Benchmark 3 (issue 2): scaling of the exact computations with d, K = 2 (time, peak RSS).

Each configuration runs in a fresh subprocess, so its peak resident set size
(``getrusage(RUSAGE_SELF).ru_maxrss``; tracemalloc misses JAX buffers) is its own. The
baseline after ``import mdmtheory`` and building the law (current RSS / peak RSS so far) is
printed beside it: importing JAX alone peaks near 300 MiB, so small configurations show
that import peak, not their own work.

* ``profile``: ``information_profile(p)`` for d = 8, 10, ..., 20. First call in the fresh
  process (JIT compilation included) and a second call on a fresh ``Joint`` (warm; the
  entropies are cached per record). Targets: d = 20 in <= 30 s and <= 4 GB.
  Checked: :math:`\\sum_m \\varphi_m = H(X)` with H(X) computed here from the table, and
  :math:`\\varphi` non-increasing.
* ``law``: ``sampler_law(p, Schedule((2,)*(d//2)))`` for d = 8, 10, 12, 14 (random order,
  two tokens per step). Target: d = 14 in <= 60 s. Checked: table + lost = 1, and
  :math:`0 \\le KL(p\\|q) \\le KL_{path}` (data processing, docs/design.md §2).
* ``bernoulli``: ``sampler_law(p, Grid.uniform(N))`` for d = 4..10, N = 4 and N = d // 2.
  Checked: table + lost = 1; for d <= 6 the law equals a brute-force reference written
  here (enumeration of all N^d assignments of positions to reveal steps).

The law is ``mt.families.dirichlet(d, 2, alpha=1.0, seed=0)`` (full support, no structure
to exploit). The column "ns/entry" divides the time by :math:`(K+1)^d = 3^d`, the total
size of all marginals (the work of the all-subsets entropy pass and of the state space).

Run:  .venv/bin/python benchmarks/bench_scaling.py [--quick] [--only profile|law|bernoulli] [--d D]
      .venv/bin/python benchmarks/bench_scaling.py --child profile --d 20 --cprofile
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from itertools import product

import numpy as np
from scipy.special import xlogy

from _util import (
    current_rss_mib,
    emit_json,
    fmt_s,
    peak_rss_mib,
    print_machine,
    print_table,
    run_child,
    time_once,
    time_once_cpu,
)

TARGETS = {("profile", 20): (30.0, 4096.0), ("law", 14): (60.0, None)}
CHILD_TIMEOUT = 400.0


# ---- brute-force reference for the Bernoulli sampler ------------------------------------------
def bernoulli_reference(table: np.ndarray, N: int) -> np.ndarray:
    """Law of the uniform-grid Bernoulli sampler by enumerating reveal steps.

    With the grid 0, 1/N, ..., 1 each position is revealed at step n in 1..N with
    probability 1/N, independently; step n draws its positions independently given the
    earlier ones. Conditionals at unreachable prefixes are 0 (that mass is 'lost').
    """
    d = table.ndim

    def marg(mask: int) -> np.ndarray:
        rest = tuple(j for j in range(d) if not mask >> j & 1)
        return table.sum(axis=rest, keepdims=True) if rest else table

    q = np.zeros(table.shape)
    for steps in product(range(N), repeat=d):
        prod = np.ones((1,) * d)
        A = 0
        for n in range(N):
            B = [j for j in range(d) if steps[j] == n]
            pA = marg(A)
            for j in B:
                pAj = marg(A | 1 << j)
                prod = prod * np.divide(pAj, pA, out=np.zeros(pAj.shape), where=pA > 0)
            for j in B:
                A |= 1 << j
        q += prod
    return q / N**d


# ---- child: one configuration in a fresh process -----------------------------------------------
def child(kind: str, d: int, N: int | None, seed: int, use_cprofile: bool, budget: float) -> None:
    t0 = time.perf_counter()
    import mdmtheory as mt

    t_import = time.perf_counter() - t0
    t_build, p = time_once(lambda: mt.families.dirichlet(d, 2, alpha=1.0, seed=seed))
    rss_setup = current_rss_mib()
    peak_setup = peak_rss_mib()

    if kind == "profile":
        def call(law):
            return mt.information_profile(law)
    elif kind == "law":
        plan = mt.Schedule((2,) * (d // 2))

        def call(law):
            return mt.sampler_law(law, plan)
    elif kind == "bernoulli":
        plan = mt.Grid.uniform(N)

        def call(law):
            return mt.sampler_law(law, plan)
    else:
        raise ValueError(f"kind: unknown {kind!r}")

    prof = None
    if use_cprofile:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    t_first, cpu_first, out = time_once_cpu(lambda: call(p))
    if prof is not None:
        prof.disable()
    # second call on a fresh record (entropies are cached per Joint); repeat small ones
    seconds = []
    while not seconds or (sum(seconds) < budget and len(seconds) < 20 and t_first < 2.0):
        fresh = mt.Joint(p.table)
        dt, _ = time_once(lambda: call(fresh))
        seconds.append(dt)
        if kind == "profile" and t_first > 10.0:
            break
    peak = peak_rss_mib()

    checks: dict[str, float] = {}
    if kind == "profile":
        H = float(-xlogy(p.table, p.table).sum())
        checks["|sum f - H(X)|"] = abs(out.entropy - H)
        checks["max increase of f"] = float(max(0.0, np.diff(out.values).max(initial=0.0)))
        ok = checks["|sum f - H(X)|"] <= 1e-9 * max(1.0, H) and out.is_nonincreasing()
    else:
        checks["|sum q + lost - 1|"] = abs(float(out.table.sum()) + out.lost - 1.0)
        kl = mt.kl(p, out)
        checks["KL(p||q)"] = kl
        ok = checks["|sum q + lost - 1|"] <= 1e-12 and 0.0 <= kl < math.inf
        if kind == "law":
            pk = mt.path_kl(p, plan)
            checks["path KL"] = pk
            ok = ok and kl <= pk + 1e-12
        if kind == "bernoulli" and d <= 6:
            ref = bernoulli_reference(p.table, N)
            checks["max|q - brute force|"] = float(np.abs(out.table - ref).max())
            ok = ok and checks["max|q - brute force|"] <= 1e-12
    if prof is not None:
        import pstats

        print(f"cProfile of the first call ({kind}, d={d}):")
        pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(15)
    emit_json({
        "kind": kind, "d": d, "N": N, "import_s": t_import, "build_s": t_build,
        "first_s": t_first, "first_cpu_s": cpu_first, "second_s": min(seconds), "n_second": len(seconds),
        "rss_setup_mib": rss_setup, "peak_setup_mib": peak_setup, "peak_rss_mib": peak, "checks": checks, "ok": bool(ok),
    })


# ---- parent -------------------------------------------------------------------------------------
def configurations(quick: bool, only: str | None):
    if quick:
        prof_d, law_d, bern_d = [10], [8], [5]
    else:
        prof_d, law_d, bern_d = [8, 10, 12, 14, 16, 18, 20], [8, 10, 12, 14], list(range(4, 11))
    out = []
    if only in (None, "profile"):
        out += [("profile", d, None) for d in prof_d]
    if only in (None, "law"):
        out += [("law", d, None) for d in law_d]
    if only in (None, "bernoulli"):
        out += [("bernoulli", d, N) for d in bern_d for N in sorted({4, d // 2})]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small smoke version (< 30 s)")
    ap.add_argument("--only", choices=["profile", "law", "bernoulli"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--child", choices=["profile", "law", "bernoulli"],
                    help="run one configuration in this process (used internally)")
    ap.add_argument("--d", type=int, help="only this d (with --child: the configuration's d)")
    ap.add_argument("--N", type=int, help="grid steps (bernoulli)")
    ap.add_argument("--cprofile", action="store_true", help="with --child: cProfile the first call")
    args = ap.parse_args(argv)
    if args.child:
        if args.d is None or (args.child == "bernoulli" and args.N is None):
            ap.error("--child needs --d (and --N for bernoulli)")
        child(args.child, args.d, args.N, args.seed, args.cprofile, 0.2 if args.quick else 1.0)
        return 0

    print_machine("bench_scaling: exact computations vs d, K = 2, one fresh process per row"
                  + (" (quick)" if args.quick else ""))
    print(f"   law: mt.families.dirichlet(d, 2, alpha=1.0, seed={args.seed})")
    rows, all_ok, verdicts = [], True, []
    for kind, d, N in configurations(args.quick, args.only):
        if args.d is not None and d != args.d:
            continue
        cmd = [__file__, "--child", kind, "--d", str(d), "--seed", str(args.seed)]
        if args.quick:
            cmd.append("--quick")
        if N is not None:
            cmd += ["--N", str(N)]
        res = run_child(cmd, timeout=CHILD_TIMEOUT)
        what = {"profile": "information_profile", "law": f"Schedule((2,)*{d // 2})",
                "bernoulli": f"Grid.uniform({N})"}[kind]
        if "error" in res:
            all_ok = False
            rows.append([kind, d, what, 2**d, "ERROR", res["error"], "", "", "", ""])
            continue
        checks = ", ".join(f"{k} {v:.2g}" for k, v in res["checks"].items())
        all_ok = all_ok and res["ok"]
        rows.append([kind, d, what, 2**d, f"{fmt_s(res['first_s'])} (cpu {fmt_s(res['first_cpu_s'])})",
                     fmt_s(res["second_s"]) + ("" if res["n_second"] == 1 else f" (best of {res['n_second']})"),
                     f"{res['second_s'] / 3**d * 1e9:.1f}",
                     f"{res['peak_rss_mib']:.0f}",
                     f"{res['rss_setup_mib']:.0f} / {res['peak_setup_mib']:.0f}",
                     ("ok: " if res["ok"] else "FAIL: ") + checks])
        target = TARGETS.get((kind, d))
        if target is not None:
            t_max, m_max = target
            met = res["first_s"] <= t_max and (m_max is None or res["peak_rss_mib"] <= m_max)
            verdicts.append(
                f"TARGET {kind} d={d}: first call {fmt_s(res['first_s'])} (<= {t_max:.0f} s; "
                f"cpu {fmt_s(res['first_cpu_s'])}), "
                f"warm {fmt_s(res['second_s'])}, peak RSS {res['peak_rss_mib']:.0f} MiB"
                + (f" (<= {m_max:.0f} MiB)" if m_max else "") + f": {'MET' if met else 'MISSED'}")
    print()
    print_table(["kind", "d", "configuration", "K^d", "first call (wall, cpu)", "warm call", "ns/entry (warm/3^d)",
                 "peak RSS MiB", "after setup: RSS / peak MiB", "checks"], rows)
    print()
    for v in verdicts:
        print(v)
    print("all checks passed" if all_ok else "SOME CHECKS FAILED")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
