"""Feng et al. (arXiv 2502.09622; issue 28 item 5): token vs sequence error rate of the T-step
random-order sampler (equal sizes, ``mdmtheory.bounds.feng25``) at every T = 1..d, exactly,
on n-gram laws as d grows.

Families: ``markov(0.9)`` (bigram, full support: TER), ``trigram`` (the 3-gram of
``TRIGRAM``, full support: TER) and ``golden(0.5)`` (the bigram with 11 forbidden:
SER). d = 4..``--max-d`` (default 13; (K+1)^d engine states). Written to
``benchmarks/tightness/feng25_steps.tsv`` (family, d, T, ter, ser, kl); the findings region
``feng25`` reads it and derives the fewest T per target, and tests/bounds/test_feng25.py
recomputes its rows at d <= 7.

``--mc``: beyond the engine's d, Monte Carlo (:func:`mdmtheory.bounds.feng25.markov_rates_mc`,
n = 400 samples, seed 0) of the TER excess on ``markov(0.9)`` at d = 50..400 and T = 6, 8, 10,
and of the SER on ``golden(0.5)`` at d = 25..100 with T = 12 and T = d/4, d/2, 3d/4; written to
``benchmarks/tightness/feng25_mc.tsv``.

Usage::

    .venv/bin/python benchmarks/feng25_steps.py [--max-d 13] [--mc]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import mdmtheory as mt
from mdmtheory.bounds import feng25 as F

OUT = Path(__file__).resolve().parent / "tightness"
#: p(x_i | x_{i-2}, x_{i-1}) of the trigram family: mostly repeat x_{i-2} (a period-2 pattern)
TRIGRAM = np.array([[[0.9, 0.1], [0.8, 0.2]], [[0.2, 0.8], [0.1, 0.9]]])
FAMILIES = {
    "markov(0.9)": lambda d: mt.families.markov_chain([[0.9, 0.1], [0.1, 0.9]], d),
    "trigram": lambda d: F.ngram_chain(TRIGRAM, d),
    "golden(0.5)": lambda d: F.golden_mean_chain(d, 0.5),
}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-d", type=int, default=13)
    ap.add_argument("--mc", action="store_true")
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    if args.mc:
        mc()
        return
    rows = []
    for fam, make in FAMILIES.items():
        for d in range(4, args.max_d + 1):
            t0 = time.perf_counter()
            p = make(d)
            for T in range(1, d + 1):
                r = F.feng25_rates(p, T)
                rows.append((fam, d, T, r.ter, r.ser, r.kl))
            print(f"{fam} d={d} {time.perf_counter() - t0:.1f}s", flush=True)
    with open(OUT / "feng25_steps.tsv", "w") as fh:
        fh.write("family\td\tT\tter\tser\tkl\n")
        for r in rows:
            fh.write(f"{r[0]}\t{r[1]}\t{r[2]}\t{r[3]:.6f}\t{r[4]:.6f}\t{r[5]:.6f}\n")


MC_N, MC_SEED = 400, 0


def mc() -> None:
    rows = []
    for d in (50, 100, 200, 400):
        for T in (6, 8, 10):
            rows.append(("markov(0.9)", F.markov_rates_mc([[0.9, 0.1], [0.1, 0.9]], d, T, n=MC_N, seed=MC_SEED)))
            print(rows[-1], flush=True)
    for d in (25, 50, 100):
        for T in (12, d // 4, d // 2, 3 * d // 4):
            rows.append(("golden(0.5)", F.markov_rates_mc([[0.5, 0.5], [1.0, 0.0]], d, T, n=MC_N, seed=MC_SEED)))
            print(rows[-1], flush=True)
    with open(OUT / "feng25_mc.tsv", "w") as fh:
        fh.write("family\td\tT\tn\tter\tter_se\tser\tser_se\n")
        for fam, r in rows:
            fh.write(f"{fam}\t{r.d}\t{r.steps}\t{r.n}\t{r.ter:.6f}\t{r.ter_se:.6f}\t{r.ser:.6f}\t{r.ser_se:.6f}\n")


if __name__ == "__main__":
    main()
