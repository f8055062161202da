"""Cai & Li's entropy-sum rule (issue 28 item 3): tightness of the bounds derived here and the
constants the paper's Õ must hide, by a small search over laws.

For each (d, K), d = 3..8 (K = 2), 3..7 (K = 3), 3..6 (K = 4), and each threshold τ of
``TAUS``, the rule (``EntropyBudgetPlanner(τ, ties="lowest")``) is run exactly
(:func:`mdmtheory.bounds.cl26.cl26_point`) on a pool of laws: the repeated symbol at marginal
entropies h = τ/(d−1)·(1 ± 1e-6) (the closed-form maximizers of (D1) and (D2)) and at uniform
weights, Markov and Ising chains, the noisy repeated bit, and ``N_RANDOM`` Dirichlet laws
(α = 0.1, 0.3, 1.0, seeded). Targets, each the largest over the pool:

* ``d1``  = path KL / (τ E_p[T])          ((D1); ≤ 1 proved)
* ``d2``  = (E_p[T] − 1) / ((d−1) H / τ)   ((D2); ≤ 1 proved)
* ``c_kl`` = KL / τ                         (the KL constant, threshold read as ε; ≤ d by (D1))
* ``c_steps`` = (E_q[T] − 1) · KL / H       (the iteration constant at ε = the KL reached,
  read as E[T] <= 1 + C H/ε)
* ``c_steps_small_eps`` = E_q[T] · KL / H over the points with 0 < KL <= H(X) (read as
  E[T] <= C H/ε in the regime ε <= H(X), where H/ε >= 1)

Written to ``benchmarks/tightness/summary_cl26.tsv`` (one row per target and (d, K), with the
maximizing law's name and τ). A search over a pool, not an optimizer: the figures are lower
bounds on the suprema (for d1, d2 the suprema are 1, proved, approached by the repeated symbol).

Usage::

    .venv/bin/python benchmarks/tightness_cl26.py [--random 12]
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

import mdmtheory as mt
from mdmtheory.bounds.cl26 import cl26_point

OUT = Path(__file__).resolve().parent / "tightness"
GRID = [(d, 2) for d in range(3, 9)] + [(d, 3) for d in range(3, 8)] + [(d, 4) for d in range(3, 7)]
TAUS = (0.05, 0.2, 0.5, 1.0, 2.0)
TARGETS = ("d1", "d2", "c_kl", "c_steps", "c_steps_small_eps")


def _weights_with_entropy(K: int, h: float):
    """Weights (1 − e, e/(K−1), ...) with entropy h (bisection on e in (0, (K−1)/K)); None if h > log K."""
    if h >= math.log(K):
        return None
    lo, hi = 0.0, (K - 1) / K
    for _ in range(200):
        e = (lo + hi) / 2
        w = np.r_[1 - e, np.full(K - 1, e / (K - 1))]
        hw = float(-(w[w > 0] * np.log(w[w > 0])).sum())
        lo, hi = (e, hi) if hw < h else (lo, e)
    return np.r_[1 - lo, np.full(K - 1, lo / (K - 1))]


def pool(d: int, K: int, tau: float, n_random: int):
    for f in (1 - 1e-6, 1 + 1e-6):
        w = _weights_with_entropy(K, tau / (d - 1) * f)
        if w is not None:
            yield f"repeated(h=tau/(d-1)*{f:.6f})", mt.families.repeated(d, K, weights=w)
    yield "repeated(uniform)", mt.families.repeated(d, K)
    if K == 2:
        yield "markov(0.9)", mt.families.markov_chain([[0.9, 0.1], [0.1, 0.9]], d)
        yield "markov(0.6)", mt.families.markov_chain([[0.6, 0.4], [0.4, 0.6]], d)
        yield "ising(1.0)", mt.families.ising_chain(d, 1.0)
        yield "noisy_bit(0.05)", mt.families.noisy_repeated_bit(d, 0.05)
    for i in range(n_random):
        a = (0.1, 0.3, 1.0)[i % 3]
        yield f"dirichlet({a},seed={i})", mt.families.dirichlet(d, K, alpha=a, seed=i)


def values(pt) -> dict:
    d1 = pt.path_kl / pt.kl_budget if pt.kl_budget > 1e-12 else 0.0
    den = (pt.d - 1) * pt.entropy / pt.threshold
    d2 = (pt.expected_data_steps - 1) / den if den > 1e-12 else 0.0
    c_steps = pt.c_steps if not math.isnan(pt.c_steps) else 0.0
    small = pt.expected_steps * pt.kl / pt.entropy if 0 < pt.kl <= pt.entropy else 0.0
    return {"d1": d1, "d2": d2, "c_kl": pt.c_kl, "c_steps": c_steps, "c_steps_small_eps": small}


def search(n_random: int) -> list[tuple]:
    rows = []
    for d, K in GRID:
        t0 = time.perf_counter()
        best = {t: (-1.0, "", 0.0) for t in TARGETS}
        for tau in TAUS:
            for name, p in pool(d, K, tau, n_random):
                v = values(cl26_point(p, tau, ties="lowest"))
                for t in TARGETS:
                    if v[t] > best[t][0]:
                        best[t] = (v[t], name, tau)
        for t in TARGETS:
            rows.append((t, d, K, best[t][0], best[t][1], best[t][2]))
        print(f"d={d} K={K} " + " ".join(f"{t}={best[t][0]:.4f}({best[t][1]},tau={best[t][2]})" for t in TARGETS)
              + f"  {time.perf_counter() - t0:.0f}s", flush=True)
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--random", type=int, default=12)
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    rows = search(args.random)
    with open(OUT / "summary_cl26.tsv", "w") as fh:
        fh.write(f"# random={args.random} taus={','.join(map(str, TAUS))} ties=lowest\n")
        fh.write("target\td\tK\tbest_ratio\tlaw\tthreshold\n")
        for r in rows:
            fh.write(f"{r[0]}\t{r[1]}\t{r[2]}\t{r[3]:.6f}\t{r[4]}\t{r[5]}\n")


if __name__ == "__main__":
    main()
