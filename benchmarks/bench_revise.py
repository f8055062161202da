"""Exact revising chains: ``revise_run`` (sparse-chain kernel, vectorized) vs the old dict chain.

The reference is the algorithm ``mdmtheory.samplers.revise`` used before the sparse-chain
kernel, kept here only as the naive baseline (and as an independent check: the laws and lost
masses must agree to 1e-12): a dict of partial states {(A, x_A): prob} and, per state, Python
loops over its transitions (ReMDM: remasked subset × revealed subset × values; corrector: the
random-order step and the least-likely redraw; editing: every candidate vector). Both run in
the same process on the same law, one after the other; the figures are the best of ``--reps``
runs, wall-clock and CPU time (the machine may be shared), and the ratio is old / new.

    PYTHONPATH=. python benchmarks/bench_revise.py            # sizes near the old limit
    PYTHONPATH=. python benchmarks/bench_revise.py --big      # also sizes near the new limit (new only)
"""

from __future__ import annotations

import argparse
import math
import resource
import sys
import time
from itertools import combinations, product

import numpy as np

import mdmtheory as mt
from mdmtheory.samplers import CorrectorSampler, EditingSampler, RemaskingSampler, revise_run
from mdmtheory.samplers.revise import MAX_REVISE_WORK, _terms_bound
from mdmtheory.samplers.select import _round, tempered


# -- the old dict chain (naive reference) -----------------------------------------------------

class _Conditionals:
    """p(· | x_A) for every masked j, from the marginals of the table (``joint.Marginals``:
    each summed once from a cached parent): what the former dict chains read."""

    def __init__(self, p: Joint):
        from mdmtheory.laws import Marginals

        self.p, self.d, self.K = p, p.d, p.K
        self._marginals = Marginals(p.table)

    def marginal(self, cols: tuple) -> np.ndarray:
        """The marginal of the increasing positions ``cols``, axes in that order."""
        if not cols:
            return np.array(1.0)
        m = self._marginals(sum(1 << j for j in cols))
        return m.reshape(tuple(self.K for _ in cols))

    def rows(self, A: tuple, xA: tuple, M: tuple) -> np.ndarray:
        """(|M|, K) conditionals at the state (A, x_A)."""
        base = self.marginal(A)[xA] if A else 1.0
        out = np.empty((len(M), self.K))
        for r, j in enumerate(M):
            cols = tuple(sorted(A + (j,)))
            m = self.marginal(cols)
            pos = cols.index(j)
            idx = list(xA)
            idx.insert(pos, slice(None))
            out[r] = m[tuple(idx)] / base
        return out


def _bern_subsets(items, prob):
    n = len(items)
    for r in range(n + 1):
        w = prob**r * (1 - prob) ** (n - r)
        if w == 0.0:
            continue
        for S in combinations(items, r):
            yield S, w


def _settle(states, cond, d):
    live, lost = {}, 0.0
    for (A, xA), q in states.items():
        if len(A) == d or not A or cond.marginal(A)[xA] > 0:
            live[(A, xA)] = q
        else:
            lost += q
    return live, lost


def _add(nxt, vals, q):
    A = tuple(sorted(vals))
    key = (A, tuple(vals[j] for j in A))
    nxt[key] = nxt.get(key, 0.0) + q


def _remdm_step(states, cond, d, sigma, beta):
    nxt = {}
    for (A, xA), q in states.items():
        M = tuple(j for j in range(d) if j not in A)
        P = cond.rows(A, xA, M) if M else None
        base = dict(zip(A, xA))
        for R, wr in _bern_subsets(A, sigma):
            keep = {j: v for j, v in base.items() if j not in R}
            for B, wb in _bern_subsets(M, beta):
                idx = [M.index(j) for j in B]
                for ys in product(*[np.flatnonzero(P[i] > 0) for i in idx]):
                    w = q * wr * wb
                    for i, y in zip(idx, ys):
                        w *= P[i, y]
                    vals = dict(keep)
                    vals.update(zip(B, (int(y) for y in ys)))
                    _add(nxt, vals, w)
    return nxt


def _loo(cond, A, xA, j):
    rest = tuple(i for i in A if i != j)
    xr = tuple(v for i, v in zip(A, xA) if i != j)
    row = cond.rows(rest, xr, (j,))[0]
    return float(row[xA[A.index(j)]])


def _corrector_step(states, cond, d, k):
    nxt, lost = {}, 0.0
    for (A, xA), q in states.items():
        conf = {j: round(_loo(cond, A, xA, j), 12) for j in A}
        R = tuple(sorted(sorted(A, key=lambda j: (conf[j], j))[:k]))
        rest = tuple(j for j in A if j not in R)
        xr = tuple(v for j, v in zip(A, xA) if j not in R)
        if rest and not cond.marginal(rest)[xr] > 0:
            lost += q
            continue
        P = cond.rows(rest, xr, R)
        base = dict(zip(rest, xr))
        for ys in product(*[np.flatnonzero(P[i] > 0) for i in range(len(R))]):
            w = q
            for i, y in enumerate(ys):
                w *= P[i, y]
            vals = dict(base)
            vals.update(zip(R, (int(y) for y in ys)))
            _add(nxt, vals, w)
    return nxt, lost


def _random_step(states, cond, d, size):
    nxt = {}
    for (A, xA), q in states.items():
        M = tuple(j for j in range(d) if j not in A)
        size_ = min(size, len(M))
        P = cond.rows(A, xA, M)
        wB = 1.0 / math.comb(len(M), size_)
        base = dict(zip(A, xA))
        for B in combinations(range(len(M)), size_):
            for ys in product(*[np.flatnonzero(P[i] > 0) for i in B]):
                w = q * wB
                for i, y in zip(B, ys):
                    w *= P[i, y]
                vals = dict(base)
                vals.update(zip((M[i] for i in B), (int(y) for y in ys)))
                _add(nxt, vals, w)
    return nxt


def _old_editing(p, sampler, cond):
    d, K = p.d, p.K
    sizes = list(sampler.plan.sizes)
    th, eth = sampler.threshold, sampler.editing_threshold
    states = {((), (), 0, 0): 1.0}
    out = np.zeros(p.table.shape)
    lost, fw = 0.0, 0.0
    while states:
        nxt = {}
        for (A, xA, f, post), q in states.items():
            full = len(A) == d
            if full:
                post += 1
            vals = dict(zip(A, xA))
            rows = np.empty((d, K))
            M = tuple(j for j in range(d) if j not in A)
            if M:
                rows[list(M)] = cond.rows(A, xA, M)
            undefined = False
            for j in A:
                rest = tuple(i for i in A if i != j)
                xr = tuple(vals[i] for i in rest)
                if rest and not cond.marginal(rest)[xr] > 0:
                    undefined = True
                    break
                rows[j] = cond.rows(rest, xr, (j,))[0]
            if undefined:
                lost += q
                continue
            S = tempered(rows, sampler.temperature)
            C = _round(S)
            k = min(sizes[min(f, len(sizes) - 1)], len(M))
            fw += q
            for ys in product(*[np.flatnonzero(S[j] > 0) for j in range(d)]):
                w = q
                for j, y in enumerate(ys):
                    w *= S[j, y]
                if w == 0.0:
                    continue
                conf = [C[j, y] for j, y in enumerate(ys)]
                commit = set()
                if M:
                    order = sorted(M, key=lambda j: (-conf[j], j))
                    above = [j for j in M if conf[j] > th] if th is not None else []
                    commit = set(above) if th is not None and len(above) >= k else set(order[:k])
                edits = [j for j in A if ys[j] != vals[j] and conf[j] > eth]
                nv = dict(vals)
                nv.update({j: int(ys[j]) for j in commit})
                nv.update({j: int(ys[j]) for j in edits})
                A2 = tuple(sorted(nv))
                x2 = tuple(nv[j] for j in A2)
                if (full and (not edits or post > sampler.max_post_steps)) or (not full and f + 1 >= len(sizes)):
                    out[x2] += w
                    continue
                if len(A2) < d and not cond.marginal(A2)[x2] > 0:
                    lost += w
                    continue
                key = (A2, x2, f + 1, post)
                nxt[key] = nxt.get(key, 0.0) + w
        states = nxt
    return mt.Joint(out, lost=lost), float(fw)


def old_revise_run(p, sampler):
    """The old dict chain: (law, forwards), no size limit."""
    d = p.d
    cond = _Conditionals(p)
    if isinstance(sampler, EditingSampler):
        return _old_editing(p, sampler, cond)
    states = {((), ()): 1.0}
    lost = 0.0
    if isinstance(sampler, RemaskingSampler):
        for i in range(sampler.steps):
            sigma, beta = sampler.rates(i)
            states, l_ = _settle(_remdm_step(states, cond, d, sigma, beta), cond, d)
            lost += l_
    else:
        for t, size in enumerate(sampler.plan.sizes):
            states, l_ = _settle(_random_step(states, cond, d, size), cond, d)
            lost += l_
            if t in sampler.after:
                nxt, l1 = _corrector_step(states, cond, d, sampler.k)
                states, l2 = _settle(nxt, cond, d)
                lost += l1 + l2
    out = np.zeros(p.table.shape)
    for (A, xA), q in states.items():
        out[xA] += q
    return mt.Joint(out, lost=lost), float(sampler.forwards())


# -- the benchmark ----------------------------------------------------------------------------
def cases(big: bool):
    """(label, law, sampler, run the old chain too)."""
    out = []
    for d in (5, 6):
        out.append((f"ReMDM d={d} K=2 N=6", mt.families.dirichlet(d, 2, alpha=0.5, seed=d),
                    RemaskingSampler.uniform(6, 0.3, "cap"), True))
    out.append(("ReMDM d=4 K=3 N=6", mt.families.dirichlet(4, 3, alpha=0.5, seed=4),
                RemaskingSampler.uniform(6, 0.3, "cap"), True))
    for d in (6, 7):
        sizes = (2,) * (d // 2) + (1,) * (d % 2)
        out.append((f"corrector d={d} K=2 k=1", mt.families.dirichlet(d, 2, alpha=0.5, seed=d),
                    CorrectorSampler(mt.Schedule(sizes), k=1), True))
    for d in (5, 6):
        out.append((f"editing d={d} K=2 th=0.6", mt.families.dirichlet(d, 2, alpha=0.5, seed=d),
                    EditingSampler(mt.Schedule((2,) * (d // 2) + (1,) * (d % 2)), editing_threshold=0.5,
                                   threshold=0.6, max_post_steps=2), True))
    if big:  # near the new limit (MAX_REVISE_WORK terms per step)
        out.append(("ReMDM d=8 K=2 N=6", mt.families.dirichlet(8, 2, alpha=0.5, seed=8),
                    RemaskingSampler.uniform(6, 0.3, "cap"), False))
        out.append(("ReMDM d=7 K=3 N=6", mt.families.dirichlet(7, 3, alpha=0.5, seed=7),
                    RemaskingSampler.uniform(6, 0.3, "cap"), False))
        out.append(("corrector d=12 K=2 k=1", mt.families.dirichlet(12, 2, alpha=0.5, seed=12),
                    CorrectorSampler(mt.Schedule((2,) * 6), k=1), False))
        out.append(("editing d=9 K=2 th=None", mt.families.dirichlet(9, 2, alpha=0.5, seed=9),
                    EditingSampler(mt.Schedule((2, 2, 2, 2, 1)), editing_threshold=0.5), False))
        out.append(("editing d=8 K=2 th=0.6", mt.families.dirichlet(8, 2, alpha=0.5, seed=8),
                    EditingSampler(mt.Schedule((2,) * 4), editing_threshold=0.5, threshold=0.6,
                                   max_post_steps=2), False))
    return out


def rss_mib() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / 1024 if sys.platform != "darwin" else r / 2**20


def best(fn, reps):
    """Best wall-clock and best CPU time (``time.process_time``, less disturbed by other
    jobs on a shared machine) of ``reps`` calls, and the last result."""
    wall, cpu, res = math.inf, math.inf, None
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        res = fn()
        wall, cpu = min(wall, time.perf_counter() - t), min(cpu, time.process_time() - c)
    return wall, cpu, res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--big", action="store_true", help="also sizes only the new chain reaches")
    ap.add_argument("--quick", action="store_true", help="the first case of each sampler (a smoke run)")
    a = ap.parse_args(argv)
    print(f"MAX_REVISE_WORK = {MAX_REVISE_WORK:,} terms per step; best of {a.reps}; wall (CPU) seconds; "
          f"peak RSS after each row")
    print(f"{'case':28s} {'terms/step':>10s} {'old dict chain':>17s} {'revise_run':>16s} {'ratio':>13s} "
          f"{'max |diff|':>10s} {'RSS MiB':>8s}")
    todo = cases(a.big)
    if a.quick:  # the first case of each sampler
        todo = [c for i, c in enumerate(todo) if c[0].split()[0] not in {o[0].split()[0] for o in todo[:i]}]
    worst = 0.0
    for label, p, sampler, with_old in todo:
        bound = _terms_bound(sampler, p.d, p.K)
        w_new, c_new, run = best(lambda: revise_run(p, sampler), a.reps)
        new = f"{w_new:7.3f} ({c_new:6.3f})"
        if with_old:
            w_old, c_old, (law, fw) = best(lambda: old_revise_run(p, sampler), a.reps)
            diff = max(float(np.abs(law.table - run.law.table).max()), abs(law.lost - run.law.lost),
                       abs(fw - run.forwards))
            worst = max(worst, diff)
            cols = f"{w_old:7.3f} ({c_old:7.3f}) {new} {w_old / w_new:5.1f}x ({c_old / c_new:4.1f}x) {diff:10.1e}"
        else:
            cols = f"{'-':>17s} {new} {'-':>13s} {'-':>10s}"
        print(f"{label:28s} {bound:10.3g} {cols} {rss_mib():8.0f}", flush=True)
    if worst > 1e-12:
        raise SystemExit(f"revise_run and the dict chain disagree by {worst:.3g}")
    return 0

if __name__ == "__main__":
    main()
