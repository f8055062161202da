"""Benchmark 2 (issue 2): exact law of the random-order sampler, engine vs permutations.

The random-order fixed-cardinality sampler with schedule k = (k_1, ..., k_T) draws a
uniform permutation of [d], cuts it into blocks B_1, ..., B_T of sizes k_t and draws the
tokens of B_t independently from :math:`p(x_j \\mid x_{A_t})` (docs/design.md §2). Its law is

.. math::

    q(x) = \\frac{1}{d!} \\sum_{\\sigma \\in S_d} \\prod_t \\prod_{j \\in B_t(\\sigma)}
    p(x_j \\mid x_{A_t(\\sigma)}).

The naive reference written here enumerates all d! permutations and, for each, multiplies
the conditionals over all x at once (numpy broadcasting). Two variants:

* ``naive``: each marginal :math:`p(x_A)` summed from the full table when needed;
* ``naive+memo``: the same loop with marginals memoized per subset (a stronger baseline).

Where a prefix has :math:`p(x_A) = 0` the conditional is set to 0, so that mass is
missing from q (the package keeps it apart as ``lost``); the lost masses are compared too.
The package is ``mdmtheory.sampler_law(p, Schedule(k))`` (pure numpy, no JIT). Laws must
agree to 1e-12 (max abs difference printed). Target of the issue: >= 100x at d = 7.

Run:  .venv/bin/python benchmarks/bench_random_law.py [--quick]
"""

from __future__ import annotations

import argparse
import math
import sys
from itertools import permutations

import numpy as np

from _util import fmt_s, print_machine, print_table, time_calls

TARGET = 100.0
TOL = 1e-12


def naive_law(table: np.ndarray, sizes, *, memo: bool) -> np.ndarray:
    """q(x) by enumeration of all d! permutations cut into blocks of the given sizes."""
    d = table.ndim
    full = (1 << d) - 1
    cache: dict[int, np.ndarray] = {}

    def marg(mask: int) -> np.ndarray:  # p(x_A) in keepdims form
        if memo and mask in cache:
            return cache[mask]
        rest = tuple(j for j in range(d) if not mask >> j & 1)
        m = table.sum(axis=rest, keepdims=True) if rest else table
        if memo:
            cache[mask] = m
        return m

    def conditional(j: int, A: int) -> np.ndarray:  # p(x_j | x_A), 0 where p(x_A) = 0
        pA, pAj = marg(A), marg(A | 1 << j)
        return np.divide(pAj, pA, out=np.zeros(pAj.shape), where=pA > 0)

    q = np.zeros(table.shape)
    for perm in permutations(range(d)):
        prod = np.ones((1,) * d)
        A, start = 0, 0
        for k in sizes:
            block = perm[start:start + k]
            for j in block:  # independent draws given x_A
                prod = prod * conditional(j, A)
            for j in block:
                A |= 1 << j
            start += k
        assert A == full
        q += prod
    return q / math.factorial(d)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small smoke version (< 30 s)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import mdmtheory as mt

    if args.quick:
        cases = [(7, (2, 2, 2, 1)), (7, (3, 4))]
        reps_pkg, reps_naive, reps_plain = 5, 1, 1
    else:
        cases = [(7, (2, 2, 2, 1)), (7, (3, 4)), (7, (1,) * 7), (8, (2, 2, 2, 2))]
        reps_pkg, reps_naive, reps_plain = 20, 3, 1
    print_machine("bench_random_law: exact random-order law vs enumeration of d! permutations, K = 2"
                  + (" (quick)" if args.quick else ""))
    print(f"   law: mt.families.dirichlet(d, 2, alpha=1.0, seed={args.seed}) (full support); "
          "check also on mt.families.repeated(d) (lost mass > 0)")

    rows, ratios, worst = [], {}, 0.0
    for d, sizes in cases:
        p = mt.families.dirichlet(d, 2, alpha=1.0, seed=args.seed)
        sched = mt.Schedule(sizes)
        mt.sampler_law(p, sched)  # warm-up (imports, allocator)
        t_pkg = time_calls(lambda i: (lambda: mt.sampler_law(p, sched)), repeat=reps_pkg)
        t_memo = time_calls(lambda i: (lambda: naive_law(p.table, sizes, memo=True)), repeat=reps_naive)
        t_plain = time_calls(lambda i: (lambda: naive_law(p.table, sizes, memo=False)), repeat=reps_plain)
        q = mt.sampler_law(p, sched)
        diff = float(np.abs(q.table - naive_law(p.table, sizes, memo=True)).max())
        diff_plain = float(np.abs(q.table - naive_law(p.table, sizes, memo=False)).max())
        # zero-probability prefixes: the all-equal law loses mass at mixed prefixes
        rep = mt.families.repeated(d)
        q_rep = mt.sampler_law(rep, sched)
        ref_rep = naive_law(rep.table, sizes, memo=True)
        diff_rep = max(float(np.abs(q_rep.table - ref_rep).max()),
                       abs(q_rep.lost - (1.0 - ref_rep.sum())))
        worst = max(worst, diff, diff_plain, diff_rep)
        r_plain, r_memo = t_plain.best / t_pkg.best, t_memo.best / t_pkg.best
        ratios[(d, sizes)] = (r_plain, r_memo)
        rows.append([d, sizes, math.factorial(d), str(t_pkg), fmt_s(t_plain.best), fmt_s(t_memo.best),
                     f"{r_plain:.0f}", f"{r_memo:.0f}", f"{max(diff, diff_plain):.1e}",
                     f"{diff_rep:.1e} (lost {q_rep.lost:.3f})"])
    print()
    print_table(["d", "schedule", "perms", "mdmtheory.sampler_law", "naive", "naive+memo",
                 "ratio naive", "ratio memo", "max|dq|", "max|dq| repeated"], rows)
    print()
    for (d, sizes), (r_plain, r_memo) in ratios.items():
        if d == 7:
            met = "MET" if r_plain >= TARGET else "MISSED"
            print(f"RATIO d={d} {sizes}: naive/package = {r_plain:.0f}x, naive+memo/package = "
                  f"{r_memo:.0f}x; target >= {TARGET:.0f}x (vs naive): {met}")
    ok = worst <= TOL
    print(f"largest difference from the references: {worst:.2e} (tolerance {TOL:g}): "
          + ("OK" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
