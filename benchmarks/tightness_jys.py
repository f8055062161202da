"""Tightness of Jump Your Steps' KLUB and the quality of its schedule search (issue 28 item 6).

For each (d, K), d = 3..8, K = 2..4, over a small set of laws (the repeated symbol, parity at
K = 2, a Markov chain, and Dirichlet(α) laws, α in {0.1, 0.3, 1}, seeds 0..2) and grids on JYS's
interval [1, 1e-5] (reveal times [0, 1 − 1e-5]: the uniform grids with N = 1, 2, 4 steps and
JYS's own grids for N = 2, 4, from :func:`mdmtheory.bounds.jys_schedule` run on that law):

* ``path_over_klub``: the largest path KL / KLUB (:func:`mdmtheory.bounds.jys_klub`, Girsanov
  form); ``path_over_klub_code``: the same with the code's form; ``kl_over_klub``: output-law
  KL / KLUB (where the exact grid law is cheap: (2K+1)^d <= 2^22);
* ``klub_over_path_min``: the smallest KLUB / path KL (how close the bound comes, from above);
* ``jys_over_optimal_path`` / ``jys_over_optimal_kl``: the largest path KL (output-law KL) of
  JYS's N-step grid over that of the package's ``optimal_grid`` with the same end points.

Written to ``benchmarks/tightness/summary_jys.tsv`` (one row per target and (d, K): the ratio,
the law and grid reaching it). A small budget (no optimizer over laws): the figures are what
these laws reach, a lower estimate of each supremum. Usage::

    .venv/bin/python benchmarks/tightness_jys.py
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

import mdmtheory as mt
from mdmtheory.bounds import jys_klub, jys_schedule
from mdmtheory.information.divergence import path_kl
from mdmtheory.optimal import optimal_grid

OUT = Path(__file__).resolve().parent / "tightness"
GRID = [(d, K) for K in (2, 3, 4) for d in range(3, 9)]
TARGETS = ("path_over_klub", "path_over_klub_code", "kl_over_klub", "klub_over_path_min",
           "jys_over_optimal_path", "jys_over_optimal_kl")
STOP = 1.0 - 1e-5


def laws(d: int, K: int):
    out = {f"repeated(K={K})": mt.families.repeated(d, K)}
    if K == 2:
        out["parity"] = mt.families.parity(d)
        out["markov(0.9)"] = mt.families.markov_chain([[0.9, 0.1], [0.1, 0.9]], d)
    for a in (0.1, 0.3, 1.0):
        for s in range(3):
            out[f"dirichlet({a},seed={s})"] = mt.families.dirichlet(d, K, alpha=a, seed=s)
    return out


def cheap_law(d: int, K: int) -> bool:
    return (2 * K + 1) ** d <= 1 << 22


def run(pairs=GRID):
    rows = []
    for d, K in pairs:
        t0 = time.time()
        best = {t: (-math.inf if t != "klub_over_path_min" else math.inf, "", "") for t in TARGETS}

        def keep(target, value, law, grid):
            v0 = best[target][0]
            if (value < v0) if target == "klub_over_path_min" else (value > v0):
                best[target] = (value, law, grid)

        for name, p in laws(d, K).items():
            prof = mt.information_profile(p)
            grids = {f"uniform N={n}": mt.Grid.uniform(n, 0.0, STOP) for n in (1, 2, 4)}
            for n in (2, 4):
                grids[f"jys N={n}"] = jys_schedule(prof, n).grid
            kls = {}
            for gname, g in grids.items():
                pk = path_kl(prof, g)
                kb, kc = jys_klub(prof, g).value, jys_klub(prof, g, form="code").value
                keep("path_over_klub", pk / kb, name, gname)
                keep("path_over_klub_code", pk / kc, name, gname)
                if pk > 1e-12:
                    keep("klub_over_path_min", kb / pk, name, gname)
                if cheap_law(d, K):
                    kls[gname] = mt.kl(p, mt.sampler_law(p, g))
                    keep("kl_over_klub", kls[gname] / kb, name, gname)
            for n in (2, 4):
                opt = optimal_grid(prof, n, start=0.0, stop=STOP)
                op = path_kl(prof, opt)
                if op > 1e-12:
                    keep("jys_over_optimal_path", path_kl(prof, grids[f"jys N={n}"]) / op, name, f"N={n}")
                if cheap_law(d, K):
                    ok = mt.kl(p, mt.sampler_law(p, opt))
                    if ok > 1e-12:
                        keep("jys_over_optimal_kl", kls[f"jys N={n}"] / ok, name, f"N={n}")
        for t in TARGETS:
            v, law, grid = best[t]
            rows.append((t, d, K, v, law, grid))
        print(f"d={d} K={K}: {time.time() - t0:.1f}s", flush=True)
    return rows


def write(rows, path=OUT / "summary_jys.tsv"):
    lines = ["# benchmarks/tightness_jys.py: JYS KLUB tightness and JYS schedule vs optimal_grid",
             "target\td\tK\tbest_ratio\tlaw\tgrid"]
    for t, d, K, v, law, grid in rows:
        lines.append(f"{t}\t{d}\t{K}\t{v:.6f}\t{law}\t{grid}" if math.isfinite(v) else f"{t}\t{d}\t{K}\tnan\t-\t-")
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.parse_args()
    write(run())
