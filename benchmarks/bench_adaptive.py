"""Benchmark (issue 37 part 1): the optimal adaptive plan, ``mt.optimal.adaptive_plan``.

Three figures:

1. ``actions="any"`` at d = 10, K = 2 for every T = 1..10 (the recursion: one call per T;
   each T costs T Bellman applications of O(d (K+2)^d) array work). Target: under a minute on
   2 cores for all T together. Timed twice: the solver alone (the optimum and its policy
   tables) and the whole record (plus the engine's exact law of the planner, its KL and the
   law of the forwards).
2. ``actions="confidence"`` at d = 14, K = 2 for T = 2, 4, 7 (the solver; the
   (K+2)^d = 2^28 sums dominate: ~2 GiB per float64 array).
3. Against a brute-force recursion written here (plain Python over states (A, x_A) and
   subsets S, the conditionals from numpy marginals) at d = 6..8, K = 2: the same optimum
   (printed |Δ|) and the ratio.

Run:  PYTHONPATH=. python benchmarks/bench_adaptive.py [--quick]
(--quick: figures 1 and 3 only, d = 6..7 for the brute force)
"""

from __future__ import annotations

import itertools
import math
import sys
import time
from functools import lru_cache

import numpy as np

import mdmtheory as mt
from mdmtheory.optimal import adaptive as ad


def law(d, K=2, seed=0):
    rng = np.random.default_rng(seed)
    return mt.Joint(rng.dirichlet(np.full(K**d, 0.5)).reshape((K,) * d))


def solver(p, T=None, lam=None, actions="any"):
    """The recursion alone: the optimum at the empty state."""
    m = ad._Model(p.table, actions)
    if T is not None:
        V, _ = ad._solve_steps(m, T)
    else:
        V, _, _ = ad._solve_penalty(m, lam)
    return ad._root(m, [], V)


def brute(p, T):
    t = p.table
    d, K = p.d, p.K

    @lru_cache(None)
    def marg(vals):
        return float(t[tuple(slice(None) if v is None else v for v in vals)].sum())

    @lru_cache(None)
    def V(vals, s):
        m = [j for j in range(d) if vals[j] is None]
        if s == 0:
            return 0.0 if not m else math.inf
        if len(m) < s:
            return math.inf
        pa = marg(vals)
        best = math.inf
        for r in range(1, len(m) - s + 2):
            for S in itertools.combinations(m, r):
                c, ev = 0.0, 0.0
                marg_i = [dict() for _ in S]
                for ys in itertools.product(range(K), repeat=r):
                    v = list(vals)
                    for j, y in zip(S, ys):
                        v[j] = y
                    q = marg(tuple(v)) / pa
                    if q > 0:
                        c += q * math.log(q)
                        ev += q * V(tuple(v), s - 1)
                        for k, y in enumerate(ys):
                            marg_i[k][y] = marg_i[k].get(y, 0.0) + q
                c -= sum(q * math.log(q) for mi in marg_i for q in mi.values() if q > 0)
                best = min(best, c + ev)
        return best

    return V((None,) * d, T)


def main():
    quick = "--quick" in sys.argv
    print(f"machine: {mt.__name__} on {sys.platform}, numpy {np.__version__}")
    # 1. any, d = 10, every T
    p = law(10)
    t0 = time.perf_counter()
    vals = [solver(p, T) for T in range(1, 11)]
    t_solve = time.perf_counter() - t0
    t0 = time.perf_counter()
    recs = [ad.adaptive_plan(p, steps=T) for T in range(1, 11)]
    t_rec = time.perf_counter() - t0
    assert all(abs(v - r.path_kl) < 1e-12 for v, r in zip(vals, recs))
    print(f"[1] any, d=10, K=2, T=1..10: solver {t_solve:.2f} s, records (with the engine's law) {t_rec:.2f} s")
    print("    path KL by T: " + ", ".join(f"{v:.4g}" for v in vals))
    t0 = time.perf_counter()
    ad.adaptive_plan(p, penalty=0.01)
    print(f"    penalty=0.01 record: {time.perf_counter() - t0:.2f} s")
    p3 = law(10, K=3)
    t0 = time.perf_counter()
    solver(p3, 5)
    print(f"    any, d=10, K=3, T=5 solver: {time.perf_counter() - t0:.2f} s ((K+2)^d = {5**10:.3g})")
    # 2. confidence, d = 14
    if not quick:
        p14 = law(14)
        for T in (2, 4, 7):
            t0 = time.perf_counter()
            v = solver(p14, T, actions="confidence")
            print(f"[2] confidence, d=14, K=2, T={T}: solver {time.perf_counter() - t0:.1f} s, path KL {v:.5g}")
    # 3. brute force
    for d in ((6, 7) if quick else (6, 7, 8)):
        q = law(d, seed=d)
        T = d // 2
        t0 = time.perf_counter()
        b = brute(q, T)
        tb = time.perf_counter() - t0
        t0 = time.perf_counter()
        f = solver(q, T)
        tf = time.perf_counter() - t0
        print(f"[3] d={d}, T={T}: brute force {tb:.2f} s, solver {tf * 1e3:.1f} ms, ratio {tb / tf:.0f}x, |diff| {abs(b - f):.1e}")


if __name__ == "__main__":
    main()
