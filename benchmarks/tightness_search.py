"""Tightness search over joint laws for every profile-function bound (mdmtheory.bounds.tightness).

For each (d, K) and each target of ``mdmtheory.bounds.tightness.targets(d, K)`` this runs
``tightness_search`` with several seeded restarts, prints a table of the best ratios
(exact/bound for upper bounds, bound/exact for lower bounds; > 1 means the bound is
violated), and saves each maximizing law as ``benchmarks/tightness/<target>_d<d>K<K>.npy``
(a (K,)*d float64 table, at most a few hundred bytes) plus ``summary_d<ds>K<K>.tsv``.

Usage::

    .venv/bin/python benchmarks/tightness_search.py                 # d = 3, 4; K = 2
    .venv/bin/python benchmarks/tightness_search.py --d 3 --K 3 --restarts 4 --steps 300
    .venv/bin/python benchmarks/tightness_search.py --kl --d 3 4 5 6   # exact output-law KL / bound

``--kl`` runs ``mdmtheory.bounds.tightness.kl_targets`` instead: the exact side is KL(p || q) of
the output law, differentiated through the exact engine (``mt.sampler_kl``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from mdmtheory.bounds.tightness import kl_targets, targets, tightness_search

OUT = Path(__file__).resolve().parent / "tightness"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, nargs="+", default=[3, 4])
    ap.add_argument("--K", type=int, default=2)
    ap.add_argument("--restarts", type=int, default=6)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--targets", nargs="*", default=None, help="target names (default: all)")
    ap.add_argument("--kl", action="store_true", help="the exact output-law KL targets (kl_targets)")
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    head = f"{'target':34s} {'d':>2s} {'K':>2s} {'kind':6s} {'start':>8s} {'best':>10s}  restarts"
    print(head)
    print("-" * len(head))
    for d in args.d:
        for name, tg in (kl_targets if args.kl else targets)(d, args.K).items():
            if args.targets and name not in args.targets:
                continue
            t0 = time.perf_counter()
            res = tightness_search(tg, restarts=args.restarts, steps=args.steps, seed=args.seed)
            np.save(OUT / f"{name}_d{d}K{args.K}.npy", res.table)
            per = " ".join(f"{r:.4f}" for r in res.restart_ratios)
            flag = "  VIOLATED" if res.ratio > 1 + 1e-9 else ""
            print(f"{name:34s} {d:2d} {args.K:2d} {tg.kind:6s} {res.start_ratio:8.4f} {res.ratio:10.6f}  [{per}] {time.perf_counter() - t0:.0f}s{flag}", flush=True)
            rows.append((name, d, args.K, tg.kind, res.start_ratio, res.ratio, tg.description))
    tag = "-".join(str(d) for d in args.d)
    kind = "kl_" if args.kl else ""
    summary = OUT / (f"summary_{kind}d{tag}K{args.K}.tsv" if args.targets is None
                     else f"summary_{kind}d{tag}K{args.K}_partial.tsv")
    with open(summary, "w") as f:
        f.write(f"# restarts={args.restarts} steps={args.steps} seed={args.seed}\n")
        f.write("target\td\tK\tkind\tstart_ratio\tbest_ratio\tdescription\n")
        for r in rows:
            f.write("\t".join([r[0], str(r[1]), str(r[2]), r[3], f"{r[4]:.6f}", f"{r[5]:.6f}", r[6]]) + "\n")


if __name__ == "__main__":
    main()
