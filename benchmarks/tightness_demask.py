"""Tightness of DEMASK's TV bound (issue 28 item 4) by search, and how often its assumption fails.

For each (d, K), d = 3..8 (K = 2), d = 3..5 (K = 3, 4):

* ``tv_budget``: the largest TV(p_S, q_S)/τ (τ = 0.1) over the sets DEMASK's rule commits at the
  empty state — the theorem's conclusion without its sub-additivity assumption — maximized over
  laws by a hill climb on the log-table from structured starts (parity-like XOR laws, Dirichlet
  laws); under the assumption the ratio is at most 1 (attained: ``tests/bounds/test_demask.py``).
* ``assumption_fail``: the fraction of (state, set) cases, |S| >= 3, where the set form of the
  assumption fails (TV(p_S, q_S) > Σ_{pairs} D_ij), over ``--laws`` Dirichlet laws (α = 0.3, 1).

Small budgets (minutes on 2 cores); written to ``benchmarks/tightness/summary_demask.tsv``.

Usage::

    .venv/bin/python benchmarks/tightness_demask.py [--climb 60 --laws 4 --seed 0]
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

import numpy as np

import mdmtheory as mt
from mdmtheory.bounds.demask import demask_checks
from mdmtheory.samplers.demask import law_dependencies, demask_select

OUT = Path(__file__).resolve().parent / "tightness"
GRID = [(d, 2) for d in range(3, 9)] + [(d, K) for K in (3, 4) for d in range(3, 6)]
TAU = 0.1


def budget_ratio(table: np.ndarray) -> float:
    """max TV(p_S, q_S)/τ over the set the rule commits at the empty state (the first step)."""
    d, K = table.ndim, table.shape[0]
    table = table / table.sum()
    probs, D = law_dependencies(table, (), tuple(range(d)))
    chosen, _ = demask_select(probs, D, np.ones((1, d), bool), TAU)
    S = tuple(np.flatnonzero(chosen[0]))
    if len(S) < 2:
        return 0.0
    P = table.sum(axis=tuple(i for i in range(d) if i not in S))
    q = np.ones(())
    for a in range(len(S)):
        q = np.multiply.outer(q, P.sum(axis=tuple(b for b in range(len(S)) if b != a)))
    return float(0.5 * np.abs(P - q).sum() / TAU)


def starts(d: int, K: int, rng):
    x = np.array(list(itertools.product(range(K), repeat=d)))
    yield np.where(x.sum(axis=1) % K == 0, 1.0, 0.0).reshape((K,) * d)  # sum mod K = 0
    yield np.where(x[:, :-1].sum(axis=1) % K == x[:, -1], 1.0, 0.0).reshape((K,) * d)
    for a in (0.1, 0.5):
        yield rng.dirichlet(np.full(K**d, a)).reshape((K,) * d)


def climb(table, steps: int, rng):
    best = budget_ratio(table)
    logt = np.log(np.maximum(table, 1e-12))
    for _ in range(steps):
        cand = logt + rng.normal(0.0, rng.choice([0.05, 0.3, 1.0]), logt.shape)
        w = np.exp(cand - cand.max())
        r = budget_ratio(w / w.sum())
        if r > best:
            best, logt = r, cand
    return best


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--climb", type=int, default=60)
    ap.add_argument("--laws", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    for d, K in GRID:
        t0 = time.perf_counter()
        rng = np.random.default_rng([args.seed, d, K])
        best = max(climb(t, args.climb, rng) for t in starts(d, K, rng))
        cases = bad = 0
        if K ** d <= 4096 and d <= 6:
            for i in range(args.laws):
                p = mt.families.dirichlet(d, K, alpha=(0.3, 1.0)[i % 2], seed=args.seed + i)
                c = demask_checks(p, names=["demask_subadditive_tv"])[0]
                cases += c.cases
                bad += c.violations
        frac = bad / cases if cases else float("nan")
        rows.append((d, K, best, cases, bad, frac))
        print(f"d={d} K={K} tv_budget={best:.4f} assumption_fail={bad}/{cases} ({frac:.3f}) "
              f"{time.perf_counter() - t0:.0f}s", flush=True)
    with open(OUT / "summary_demask.tsv", "w") as fh:
        fh.write(f"# tau={TAU} climb={args.climb} laws={args.laws} seed={args.seed}\n")
        fh.write("d\tK\ttv_budget_ratio\tassumption_cases\tassumption_violations\tassumption_fail_fraction\n")
        for r in rows:
            fh.write(f"{r[0]}\t{r[1]}\t{r[2]:.6f}\t{r[3]}\t{r[4]}\t{r[5]:.6f}\n")


if __name__ == "__main__":
    main()
