"""Exact law of sample-then-select: ``select_run`` (sparse chain, numpy) vs the naive loop.

The naive reference written here is the algorithm ``select_run`` replaced: a Python dict
{(revealed positions, their values): probability}, and for each state a Python loop over
the committed sets B, their values y_B and the positions outside B, multiplying the
product formula of ``mdmtheory.samplers.select`` term by term (conditionals from
``joint.Marginals``). The package computes the same terms for all live states of a step
at once (``kernel.chain_targets`` / ``kernel.chain_apply``). Both run in this process,
interleaved, on the same laws; laws, lost mass, expected forwards and step commits must
agree to 1e-12 (max abs difference printed); the ratio is naive / package (best of reps;
the naive loop runs reps // 2 times). Last, the package alone near its size limit
(``MAX_SELECT_WORK``): wall and CPU seconds and peak RSS.

    PYTHONPATH=. python benchmarks/bench_select.py [--reps 3] [--quick]
"""

from __future__ import annotations

import argparse
import time
from itertools import combinations, product

import numpy as np

import mdmtheory as mt
from mdmtheory.laws import Joint, Marginals
from mdmtheory.samplers import SampleThenSelectPlanner, select_run
from mdmtheory.samplers.select import MAX_SELECT_WORK, _round, select_work, tempered

from _util import peak_rss_mib, print_machine


# -- the naive reference: one (state, committed set, values) term at a time ---------------
def _rows(marg, K, A, xA, M):
    def marginal(cols):
        if not cols:
            return np.array(1.0)
        return marg(sum(1 << j for j in cols)).reshape((K,) * len(cols))

    base = marginal(A)[xA] if A else 1.0
    out = np.empty((len(M), K))
    for r, j in enumerate(M):
        cols = tuple(sorted(A + (j,)))
        idx = list(xA)
        idx.insert(cols.index(j), slice(None))
        out[r] = marginal(cols)[tuple(idx)] / base
    return out, marginal


def _terms(P, M, k, planner):
    S = tempered(P, planner.temperature)
    C = _round(S if planner.confidence == "tempered" else P)
    m, K = P.shape
    k = min(k, m)
    th = planner.threshold
    for B in combinations(range(m), k):
        rest = [i for i in range(m) if i not in B]
        for ys in product(range(K), repeat=k):
            w = 1.0
            for b, y in zip(B, ys):
                w *= S[b, y]
            if w == 0.0:
                continue
            cw, jw = min((C[b, y], -b) for b, y in zip(B, ys))
            jw = -jw
            if th is not None and cw > th:
                continue
            for i in rest:
                below = (C[i] < cw) | ((C[i] == cw) & (i > jw))
                w *= float(S[i][below].sum())
                if w == 0.0:
                    break
            if w:
                yield tuple(M[b] for b in B), ys, w
    if th is None:
        return
    low = C <= th
    p_low = np.array([float(S[i][low[i]].sum()) for i in range(m)])
    for size in range(k, m + 1):
        for B in combinations(range(m), size):
            rest_p = 1.0
            for i in range(m):
                if i not in B:
                    rest_p *= p_low[i]
            if rest_p == 0.0:
                continue
            choices = [[y for y in range(K) if C[b, y] > th and S[b, y] > 0] for b in B]
            for ys in product(*choices):
                w = rest_p
                for b, y in zip(B, ys):
                    w *= S[b, y]
                if w:
                    yield tuple(M[b] for b in B), ys, w


def naive_select_run(p: Joint, sizes, planner):
    """(law table, lost, expected mask steps, step commits) by the dict loop."""
    d, K = p.d, p.K
    marg = Marginals(p.table)
    states = {((), ()): 1.0}
    done = np.zeros(p.table.shape)
    forwards, lost = 0.0, 0.0
    commits = np.zeros(len(sizes))
    for t, k in enumerate(sizes):
        nxt = {}
        for (A, xA), q in states.items():
            M = tuple(j for j in range(d) if j not in A)
            forwards += q
            P, marginal = _rows(marg, K, A, xA, M)
            for B, ys, w in _terms(P, M, k, planner):
                vals = dict(zip(A, xA))
                vals.update(zip(B, ys))
                A2 = tuple(sorted(vals))
                key = (A2, tuple(vals[j] for j in A2))
                nxt[key] = nxt.get(key, 0.0) + q * w
                commits[t] += q * w * len(B)
        states = {}
        for (A, xA), q in nxt.items():
            if len(A) == d:
                done[xA] += q
            elif _rows(marg, K, A, xA, ())[1](A)[xA] > 0:
                states[(A, xA)] = q
            else:
                lost += q
        if not states:
            break
    return done, lost, forwards, commits


CASES = [  # (d, K, counts, threshold, temperature): at the former limit (5e6 of its looser terms)
    (8, 2, (3, 3, 2), None, 1.0),
    (6, 3, (3, 3), None, 1.0),
    (7, 2, (2, 2, 2, 1), 0.6, 1.0),
    (5, 3, (2, 2, 1), 0.6, 1.0),
    (6, 3, (2, 2, 2), None, 0.5),
]
BEYOND = [  # beyond the former limit: the naive loop takes seconds
    (8, 2, (2, 2, 2, 2), 0.6, 1.0),
    (9, 2, (3, 3, 3), None, 1.0),
    (10, 2, (2, 2, 2, 2, 2), None, 1.0),
    (8, 3, (2, 2, 2, 2), None, 1.0),
]
LIMIT = [  # near the new limit (MAX_SELECT_WORK), the package only: Dirichlet(50) reaches the most states
    (12, 2, (2, 1, 2, 5, 1, 1), None, 1.0),
    (10, 3, (2, 1, 2, 3, 2), None, 1.0),
    (5, 26, (5,), None, 1.0),
]
QUICK = [(6, 2, (2, 2, 2), None, 1.0), (5, 2, (2, 2, 1), 0.6, 1.0)]


def best(fn, reps):
    out, res = [], None
    for _ in range(reps):
        t = time.perf_counter()
        res = fn()
        out.append(time.perf_counter() - t)
    return min(out), res


def compare(cases, reps):
    print(f"{'d':>2} {'K':>2} {'counts':<14} {'thr':>4} {'T':>4} {'select_work':>9} {'naive s':>9} {'select_run s':>12} "
          f"{'ratio':>7} {'max diff':>9} {'RSS MiB':>8}")
    for d, K, sizes, th, T in cases:
        p = mt.families.dirichlet(d, K, alpha=0.5, seed=d * 10 + K)
        planner = SampleThenSelectPlanner(th, T, ties="lowest")  # the naive loop's rule
        select_run(p, mt.Schedule(sizes), planner)  # warm the caches
        t_naive, ref = best(lambda: naive_select_run(p, sizes, planner), max(1, reps // 2))
        t_pkg, run = best(lambda: select_run(p, mt.Schedule(sizes), planner), reps)
        diff = max(float(np.abs(run.law.table - ref[0]).max()), abs(run.law.lost - ref[1]),
                   abs(run.mask_steps - ref[2]), float(np.abs(run.step_commits - ref[3]).max()))
        if diff > 1e-12:
            raise SystemExit(f"select_run and the naive loop disagree by {diff:.3g}")
        print(f"{d:>2} {K:>2} {str(sizes):<14} {str(th):>4} {T:>4} {select_work(K, d, sizes, th):>9.2g} {t_naive:>9.3f} "
              f"{t_pkg:>12.4f} {t_naive / t_pkg:>6.1f}x {diff:>9.1e} {peak_rss_mib():>8.0f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="two small cases (a smoke run)")
    args = ap.parse_args(argv)
    print_machine("sample-then-select exact law: select_run vs the naive dict loop")
    if args.quick:
        compare(QUICK, args.reps)
        return 0
    print("-- at the former limit")
    compare(CASES, args.reps)
    print("-- beyond the former limit")
    compare(BEYOND, args.reps)
    print(f"-- near the new limit (MAX_SELECT_WORK = {MAX_SELECT_WORK:,}), select_run once; peak RSS of the process so far")
    print(f"{'d':>2} {'K':>2} {'counts':<20} {'select_work':>9} {'select_run s':>12} {'CPU s':>7} {'RSS MiB':>8}")
    for d, K, sizes, th, T in LIMIT:
        p = mt.families.dirichlet(d, K, alpha=50.0, seed=1)
        c0, t0 = time.process_time(), time.perf_counter()
        select_run(p, mt.Schedule(sizes), SampleThenSelectPlanner(th, T))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"{d:>2} {K:>2} {str(sizes):<20} {select_work(K, d, sizes, th):>9.2g} {wall:>12.2f} {cpu:>7.2f} "
              f"{peak_rss_mib():>8.0f}")


if __name__ == "__main__":
    main()
