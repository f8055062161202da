"""Tightness runs for the 2026 bounds of issue 20 §4 (PB25, ZYB26, ZC26, DHW26).

For each target and (d, K): seeded random laws (Dirichlet tables at several concentrations
and the families) followed by a hill climb on the log-table (Gaussian steps, kept when the
ratio grows). The ratio is exact/bound for upper bounds and bound/exact for lower bounds
(> 1: violated); for ZC26's asymptotic rates it is E[path KL]/rate under the uniform law on
compositions into K parts, the constant the O-tilde would have to hide, and for the
misreading "random-order output KL >= L*_T" it is L*_T / KL (> 1: the misreading fails).
Worst ratio per target, printed as a table and written to
``benchmarks/tightness/summary_2026_d<ds>K<K>.tsv``.

Usage::

    .venv/bin/python benchmarks/tightness_2026.py                  # d = 3, 4; K = 2
    .venv/bin/python benchmarks/tightness_2026.py --d 3 --K 3 --starts 20 --climb 100
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from pathlib import Path

import numpy as np

import mdmtheory as mt
from mdmtheory import bounds as B

OUT = Path(__file__).resolve().parent / "tightness"
#: Exact quantities below this (nats) are rounding-level: no ratio is formed from them.
FLOOR = 1e-9


def comps(d, K):
    for cuts in itertools.combinations(range(1, d), K - 1):
        e = (0,) + cuts + (d,)
        yield tuple(b - a for a, b in zip(e, e[1:]))


def _expected_uniform_path_kl(p, K):
    return float(np.mean([mt.path_kl(p, mt.Schedule(c)) for c in comps(p.d, K)]))


def targets(d, K=2):
    """name -> (kind, f(p) -> ratio) with ratio > 1 meaning violated (or: larger = tighter)."""
    scale = d * math.log(K)
    sched = [mt.Schedule(c) for K in range(2, d) for c in comps(d, K)] or [mt.Schedule([1] * d)]

    def ratio(b, e):  # equal within Bound.holds' tolerance: 1; below FLOOR: rounding, no ratio
        if abs(b - e) <= B.HOLD_RTOL * max(abs(b), abs(e), scale):
            return min(1.0, b / e) if e > 0 else 1.0
        return b / e if e > FLOOR else (math.inf if b > FLOOR else 0.0)

    def pb25_fixed(p):
        return max(ratio(B.pb25_partition_lower(p, [tuple(range(s, s + k)) for s, k in zip(sc.starts, sc.sizes)]).value,
                         mt.kl(p, mt.sampler_law(p, sc, "left_to_right"))) for sc in sched)

    def pb25_path(p):
        return max(ratio(B.pb25_schedule_lower(p, sc).value, mt.path_kl(p, sc)) for sc in sched)

    def pb25_misreading(p):
        return max(ratio(B.pb25_optimal_lower(p, sc.steps).value, mt.kl(p, mt.sampler_law(p, sc))) for sc in sched)

    def zyb26(p):
        return B.zyb26_verification_lower(p).value / B.rejection_cost(p)

    def dhw26(p):
        return mt.information.effective_total_correlation(p) / B.dhw26_dimension_bound(p).value

    def zc26(which):
        def f(p):
            out = 0.0
            for K in range(1, d + 1):
                rate = B.zc26_rates(p, K)[which].value
                if rate > 1e-9:
                    out = max(out, _expected_uniform_path_kl(p, K) / rate)
            return out
        return f

    return {
        "pb25_partition_lower": ("lower", pb25_fixed),
        "pb25_schedule_lower": ("lower", pb25_path),
        "pb25_misread_vs_output_kl": ("lower", pb25_misreading),
        "zyb26_verification_lower": ("lower", zyb26),
        "dhw26_dimension": ("upper", dhw26),
        "zc26_tc_rate": ("asympt", zc26(0)),
        "zc26_dtc_rate": ("asympt", zc26(1)),
    }


def starts(d, K, n, rng):
    yield mt.families.repeated(d, K)
    if K == 2:
        yield mt.families.noisy_repeated_bit(d, 0.05)
        yield mt.families.parity(d)
    for i in range(n):
        a = [0.05, 0.3, 1.0, 5.0][i % 4]
        yield mt.Joint(rng.dirichlet(np.full(K**d, a)).reshape((K,) * d))


def ratio_of(f, p):
    try:
        r = f(p)
    except ValueError:
        return -math.inf
    return r if math.isfinite(r) else (math.inf if r > 0 else -math.inf)


def climb(f, p, steps, rng):
    best, r = p, ratio_of(f, p)
    logt = np.log(np.maximum(p.table, 1e-12))
    for _ in range(steps):
        cand = logt + rng.normal(0.0, 0.5, logt.shape)
        w = np.exp(cand - cand.max())
        q = mt.Joint(w / w.sum())
        rq = ratio_of(f, q)
        if rq > r:
            best, r, logt = q, rq, cand
    return best, r


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, nargs="+", default=[3, 4])
    ap.add_argument("--K", type=int, default=2)
    ap.add_argument("--starts", type=int, default=12)
    ap.add_argument("--climb", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    head = f"{'target':28s} {'d':>2s} {'K':>2s} {'kind':6s} {'best':>10s}  time"
    print(head)
    print("-" * len(head))
    for d in args.d:
        for name, (kind, f) in targets(d, args.K).items():
            rng = np.random.default_rng(args.seed)
            t0 = time.perf_counter()
            pool = sorted(((ratio_of(f, p), i, p) for i, p in enumerate(starts(d, args.K, args.starts, rng))), key=lambda x: -x[0])
            best = pool[0][0]
            for _, _, p in pool[:3]:  # climb from the three best starts
                _, r = climb(f, p, args.climb, rng)
                best = max(best, r)
            flag = "  VIOLATED" if kind in ("lower", "upper") and best > 1 + 1e-9 else ""
            print(f"{name:28s} {d:2d} {args.K:2d} {kind:6s} {best:10.6f}  {time.perf_counter() - t0:.0f}s{flag}", flush=True)
            rows.append((name, d, args.K, kind, best))
    tag = "-".join(str(d) for d in args.d)
    with open(OUT / f"summary_2026_d{tag}K{args.K}.tsv", "w") as fh:
        fh.write(f"# starts={args.starts} climb={args.climb} seed={args.seed}\n")
        fh.write("target\td\tK\tkind\tbest_ratio\n")
        for r in rows:
            fh.write(f"{r[0]}\t{r[1]}\t{r[2]}\t{r[3]}\t{r[4]:.6f}\n")


if __name__ == "__main__":
    main()
