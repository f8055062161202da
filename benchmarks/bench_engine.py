"""Exact engine and information profile vs bare kernels doing the same work, in one run.

Profile (all 2^d subset entropies, K = 2): ``mdmtheory.subset_entropies`` on a fresh
``Joint`` vs the tight depth-first kernel written here (each marginal summed from its
parent, 3^d - 2^d adds; -x log x once per lattice entry, 3^d, vectorized log; folded back
per axis) with numpy's log and with XLA's, and vs the whole lattice in one jit call
(d <= 16). The kernels run interleaved, each repetition in the same load; the ratio is the
package over the fastest bare kernel. Law: ``mdmtheory.exact_run(p, Schedule((2,)*(d/2)))``
(random order: the level layout of samplers/kernel.py, numpy) vs a reference doing the
per-state updates directly (dict of keepdims arrays per revealed set, one broadcast product
per (state, move), no planner objects, no checks). Planners: ``exact_run(p, Schedule,
planner)`` for the adaptive planners (the kernel's sparse chain) vs the same per-state
reference with the planner's choices (its ``moves(ctx)`` once per revealed set, one
broadcast product per chosen B: what the engine of the first releases did). Peak RSS
(ru_maxrss, monotone over the run) after each row.

    PYTHONPATH=. python benchmarks/bench_engine.py --profile-d 16 18 20 --law-d 10 12 14 --planner-d 10 12 14
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from itertools import combinations
from math import comb

import numpy as np

import mdmtheory as mt


def rss_mib() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / 1024 if sys.platform != "darwin" else r / 2**20


def best(fn, reps):
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


# -- profile ---------------------------------------------------------------------------
_TINY = float(np.finfo(np.float64).tiny)


def _tight_walk(table: np.ndarray, m: int, cols: int, neg_xlogx_cols) -> np.ndarray:
    """The tight depth-first kernel (K = 2). Trailing positions m..d-1 walked depth-first,
    each marginal summed from its parent (one add per entry); at each leaf the leading m
    positions expanded into a preallocated (3,)*m + (cols,) lattice block, each new slot one
    add of its two parent slots (3^d - 2^d adds in all), the kept trailing values as the
    contiguous last axis; ``neg_xlogx_cols`` takes -x log x of every entry (3^d) and sums
    the columns; the (3,)*m result folded to the 2^m subsets."""
    d = table.ndim
    m = min(d, m)
    H = np.zeros(1 << d)
    head = (slice(0, 2),) * m
    lead = sum((np.arange(2) << j).reshape((1,) * j + (2,) + (1,) * (m - j - 1)) for j in range(m))
    lead = np.broadcast_to(lead, (2,) * m).ravel() if m else np.zeros(1, dtype=np.int64)
    bufs: dict = {}
    fills = [((slice(None),) * ax, (slice(0, 2),) * (m - ax - 1)) for ax in range(m)]

    def leaf(t, mask):
        t = t.reshape((2,) * m + (-1,))
        n = t.shape[-1]
        c = min(cols, n)
        L = bufs.get(c)
        if L is None:
            L = bufs[c] = np.empty((3,) * m + (c,))
        acc = np.zeros((3,) * m)
        for s in range(0, n, c):
            Lv = L if n - s >= c else L[..., : n - s]  # (a partial last block: numpy only)
            Lv[head] = t[..., s : s + c]
            for pre, post in fills:
                np.add(Lv[pre + (0,) + post], Lv[pre + (1,) + post], out=Lv[pre + (2,) + post])
            acc += neg_xlogx_cols(Lv)
        for ax in range(m):
            pre = (slice(None),) * ax
            acc = np.concatenate([acc[pre + (slice(2, 3),)], acc[pre + (slice(0, 2),)].sum(axis=ax, keepdims=True)], axis=ax)
        H[mask + lead] = acc.ravel()

    def walk(t, i, mask, kept):
        if i == d:
            leaf(t, mask)
            return
        walk(t, i + 1, mask | (1 << i), kept + 1)
        walk(t.sum(axis=m + kept), i + 1, mask, kept)

    walk(np.ascontiguousarray(table), m, 0, 0)
    H[0] = 0.0
    return H


def _np_neg_xlogx_cols(L):
    tmp = np.maximum(L, _TINY)
    np.log(tmp, out=tmp)
    tmp *= L
    return -tmp.sum(axis=-1)


_XLA_FN = []


def _xla_neg_xlogx_cols(L):
    import jax
    import jax.numpy as jnp

    from mdmtheory._jax import x64

    if not _XLA_FN:
        _XLA_FN.append(jax.jit(lambda a: -jnp.sum(a * jnp.log(jnp.maximum(a, _TINY)), axis=-1)))
    with x64():
        return np.asarray(_XLA_FN[0](L))


#: (name, m leading axes per block, columns per block, -x log x of a block)
BARE = [
    ("bare-np", 6, 89, _np_neg_xlogx_cols),  # numpy's log
    ("bare-xla", 6, 64, _xla_neg_xlogx_cols),  # XLA's vectorized log (compiled per block shape)
    ("bare-xla128", 6, 128, _xla_neg_xlogx_cols),
]


def bare_entropies(table: np.ndarray, variant: int = 0) -> np.ndarray:
    _, m, cols, f = BARE[variant]
    return _tight_walk(table, m, cols, f)


def bare_jax_oneshot(table: np.ndarray) -> np.ndarray:
    """The whole lattice in one jit-compiled call (no blocking): memory 3^d float64."""
    import jax
    import jax.numpy as jnp

    from mdmtheory._jax import x64

    d = table.ndim
    with x64():
        f = _ONESHOT.get(d)
        if f is None:
            def run(t):
                for ax in range(d):
                    t = jnp.concatenate([t, t.sum(axis=ax, keepdims=True)], axis=ax)
                t = -t * jnp.log(jnp.maximum(t, 1e-300))
                for ax in range(d):
                    t = jnp.concatenate([jax.lax.slice_in_dim(t, 2, 3, axis=ax),
                                         jax.lax.slice_in_dim(t, 0, 2, axis=ax).sum(axis=ax, keepdims=True)], axis=ax)
                return t
            f = _ONESHOT[d] = jax.jit(run)
        H = np.asarray(f(jnp.asarray(table)))
    return np.transpose(H, tuple(reversed(range(d)))).reshape(-1)


_ONESHOT: dict = {}


# -- law -------------------------------------------------------------------------------
def _marginals(table: np.ndarray):
    """S (bitmask) -> keepdims marginal of S, each summed from a cached parent."""
    full = (1 << table.ndim) - 1
    cache = {full: table}

    def marg(S):
        a = cache.get(S)
        if a is None:
            miss = ~S & full
            j = (miss & -miss).bit_length() - 1
            a = cache[S] = marg(S | (1 << j)).sum(axis=j, keepdims=True)
        return a

    return marg


def reference_law(table: np.ndarray, sizes) -> np.ndarray:
    d = table.ndim
    full = (1 << d) - 1
    marg = _marginals(table)

    states = {0: np.ones((1,) * d)}
    for k in sizes:
        new = {}
        for A, m in states.items():
            pA = marg(A)
            ok = pA > 0
            m = np.where(ok, m, 0.0) * (1.0 / comb(d - A.bit_count(), k))
            den = np.where(ok, pA, 1.0)
            free = [j for j in range(d) if not A >> j & 1]
            cond = {j: np.where(ok, marg(A | (1 << j)) / den, 0.0) for j in free}
            for B in combinations(free, k):
                out = m
                for j in B:
                    out = out * cond[j]
                key = A | sum(1 << j for j in B)
                prev = new.get(key)
                if prev is None:
                    new[key] = out
                else:
                    prev += out
        states = new
    return states[full]


def reference_planner_law(table: np.ndarray, sizes, planner) -> np.ndarray:
    """Per-state reference for a planner: a dict {A: keepdims mass over x_A}, the planner's
    moves once per A, one broadcast product per (A, B) (no lost-mass bookkeeping: the
    laws benchmarked have no zeros)."""
    from mdmtheory.samplers.planners import StepContext, resolve_planner

    planner = resolve_planner(planner)
    d, K = table.ndim, table.shape[0]
    full = (1 << d) - 1
    marg = _marginals(table)

    states = {0: np.ones((1,) * d)}
    for t, k in enumerate(sizes):
        new = {}
        for A, m in states.items():
            if A == full:
                new[A] = new.get(A, 0.0) + m
                continue
            pA = marg(A)
            cond = {}

            def c(j, A=A, pA=pA, cond=cond):
                if j not in cond:
                    cond[j] = marg(A | (1 << j)) / pA
                return cond[j]

            free = tuple(j for j in range(d) if not A >> j & 1)
            ctx = StepContext(t, A, k, d, K, free, pA > 0, c)
            for B, w in planner.moves(ctx):
                out = m * w
                for j in range(d):
                    if B >> j & 1:
                        out = out * c(j)
                prev = new.get(A | B)
                new[A | B] = out if prev is None else prev + out
        states = new
    return states[full]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile-d", type=int, nargs="*", default=[16, 18, 20])
    ap.add_argument("--law-d", type=int, nargs="*", default=[14])
    ap.add_argument("--planner-d", type=int, nargs="*", default=[10, 12, 14])
    ap.add_argument("--planners", nargs="*", default=["confidence", "margin", "entropy"])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--jit", action="store_true", help="also time backend='jax' (XLA compile: minutes at d >= 10)")
    a = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    print("profile: all 2^d subset entropies, K = 2; seconds, best of --reps, all kernels in this process")
    print("bare-*: the tight depth-first kernel (3^d - 2^d adds, 3^d x log x); one-shot: the whole lattice in one jit call (d <= 16)")
    names = [b[0] for b in BARE]
    print(f"{'d':>3} {'package':>9} " + " ".join(f"{n:>11}" for n in names) + f" {'one-shot':>9} {'pkg/fastest':>11} {'ns/entry':>9} {'max |dH|':>9} {'RSS MiB':>8}")
    for d in a.profile_d:
        table = rng.dirichlet(np.full(2**d, 0.5)).reshape((2,) * d)
        small = rng.dirichlet(np.full(2 ** min(d, 13), 0.5)).reshape((2,) * min(d, 13))
        mt.information.subset_entropies(mt.Joint(small))  # warm-up: compile the full-block shape
        for i in range(len(BARE)):
            bare_entropies(small, i)
        reps = a.reps if d <= 18 else 1
        H_pkg = None

        def pkg():
            nonlocal H_pkg
            H_pkg = mt.information.subset_entropies(mt.Joint(table))  # a fresh Joint: no cache

        times = {"package": []}
        for n in names + ["one-shot"]:
            times[n] = []
        err = 0.0
        if d <= 16:
            bare_jax_oneshot(table)  # compile
        for _ in range(reps):  # interleaved: each kernel sees the same load
            times["package"].append(best(pkg, 1))
            for i, n in enumerate(names):
                t0 = time.perf_counter()
                H = bare_entropies(table, i)
                times[n].append(time.perf_counter() - t0)
                err = max(err, float(np.abs(H_pkg - np.maximum(H, 0.0)).max()))
            if d <= 16:
                times["one-shot"].append(best(lambda: bare_jax_oneshot(table), 1))
        t = {k: (min(v) if v else float("nan")) for k, v in times.items()}
        fastest = min(v for k, v in t.items() if k != "package" and v == v)
        cells = " ".join(f"{t[n]:>11.3f}" for n in names)
        print(f"{d:>3} {t['package']:>9.3f} {cells} {t['one-shot']:>9.3f} {t['package'] / fastest:>11.2f} {t['package'] / 3**d * 1e9:>9.2f} {err:>9.1e} {rss_mib():>8.0f}", flush=True)
    print("\nlaw: exact_run(p, Schedule((2,)*(d/2))), random planner, K = 2; best of --reps, interleaved with the reference")
    print(f"{'d':>3} {'package s':>10} {'jit s':>8} {'compile s':>10} {'reference s':>12} {'ratio':>6} {'max |dq|':>9} {'RSS MiB':>8}")
    for d in a.law_d:
        table = rng.dirichlet(np.full(2**d, 0.5)).reshape((2,) * d)
        p = mt.Joint(table)
        sched = mt.Schedule((2,) * (d // 2) + ((1,) if d % 2 else ()))
        t_first = t_jax = float("nan")
        if a.jit:
            t0 = time.perf_counter()
            mt.exact_run(p, sched, backend="jax")
            t_first = time.perf_counter() - t0
            t_jax = best(lambda: mt.exact_run(p, sched, backend="jax"), a.reps)
        mt.exact_run(mt.Joint(table), sched)  # warm-up: the layout's index tables
        t_pkg, t_ref = [], []
        for _ in range(a.reps):  # interleaved: both see the same load
            t_pkg.append(best(lambda: mt.exact_run(p, sched), 1))
            t_ref.append(best(lambda: reference_law(table, sched.sizes), 1))
        t_pkg, t_ref = min(t_pkg), min(t_ref)
        q = mt.exact_run(p, sched).law.table
        err = float(np.abs(q - reference_law(table, sched.sizes)).max())
        print(f"{d:>3} {t_pkg:>10.3f} {t_jax:>8.3f} {t_first - t_jax:>10.2f} {t_ref:>12.3f} {t_pkg / t_ref:>6.2f} {err:>9.1e} {rss_mib():>8.0f}", flush=True)
    print("\nplanners: exact_run(p, Schedule((2,)*(d/2)), planner), K = 2 (the sparse chain) vs the per-state "
          "reference with the planner's moves; best of --reps, interleaved")
    print(f"{'d':>3} {'planner':>11} {'package s':>10} {'reference s':>12} {'ratio':>6} {'max |dq|':>9} {'RSS MiB':>8}")
    for d in a.planner_d:
        table = rng.dirichlet(np.full(2**d, 0.5)).reshape((2,) * d)
        p = mt.Joint(table)
        sched = mt.Schedule((2,) * (d // 2) + ((1,) if d % 2 else ()))
        for name in a.planners:
            t_pkg, t_ref = [], []
            for _ in range(a.reps):
                t_pkg.append(best(lambda: mt.exact_run(p, sched, name), 1))
                t_ref.append(best(lambda: reference_planner_law(table, sched.sizes, name), 1))
            q = mt.exact_run(p, sched, name).law.table
            err = float(np.abs(q - reference_planner_law(table, sched.sizes, name)).max())
            print(f"{d:>3} {name:>11} {min(t_pkg):>10.3f} {min(t_ref):>12.3f} {min(t_pkg) / min(t_ref):>6.2f} "
                  f"{err:>9.1e} {rss_mib():>8.0f}", flush=True)
    return 0


if __name__ == "__main__":
    main()
