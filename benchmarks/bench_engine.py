"""Exact engine and information profile vs bare kernels doing the same work, in one run.

Profile (all 2^d subset entropies, K = 2): ``mdmtheory.subset_entropies`` on a fresh
``Joint`` vs a bare depth-first numpy kernel doing the same entries: each marginal summed
from its parent (3^d - 2^d adds), -x log x once per lattice entry (3^d, vectorized log),
folded back per axis. Law: ``mdmtheory.exact_run(p, Schedule((2,)*(d/2)))`` (the lattice
kernel, jit-compiled JAX; compile time printed apart) vs a reference doing the per-state
updates directly (dict of keepdims arrays per revealed set, one broadcast product per
(state, move), no planner objects, no checks). Ratios are printed from the same process;
peak RSS (ru_maxrss, monotone over the run) after each part.

    PYTHONPATH=. python benchmarks/bench_engine.py --profile-d 16 18 20 --law-d 14
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
BLOCK = 10  # trailing axes expanded at once (3^10 = 59049 entries per leading pattern)


def bare_entropies(table: np.ndarray) -> np.ndarray:
    d, K = table.ndim, table.shape[0]
    m = min(d, BLOCK)
    r = d - m
    H = np.empty(1 << d)
    tail = np.arange(1 << m) << r

    def block(t):  # t: (rows,) + (K,)*m -> (2,)*m entropies summed over rows
        for ax in range(1, m + 1):
            t = np.concatenate([t, t.sum(axis=ax, keepdims=True)], axis=ax)
        neg = t * np.log(np.maximum(t, 1e-300))
        out = -neg.sum(axis=0)
        for ax in range(m):
            out = np.concatenate([out[(slice(None),) * ax + (slice(K, K + 1),)],
                                  out[(slice(None),) * ax + (slice(0, K),)].sum(axis=ax, keepdims=True)], axis=ax)
        return out

    def walk(t, i, lead, kept):
        if i == r:
            H[lead + tail] = np.transpose(block(t.reshape((-1,) + (K,) * m)), tuple(reversed(range(m)))).reshape(-1)
            return
        walk(t, i + 1, lead | (1 << i), kept + 1)
        walk(t.sum(axis=kept), i + 1, lead, kept)

    walk(table, 0, 0, 0)
    return H


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
def reference_law(table: np.ndarray, sizes) -> np.ndarray:
    d = table.ndim
    full = (1 << d) - 1
    cache = {full: table}

    def marg(S):
        a = cache.get(S)
        if a is None:
            miss = ~S & full
            j = (miss & -miss).bit_length() - 1
            a = cache[S] = marg(S | (1 << j)).sum(axis=j, keepdims=True)
        return a

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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile-d", type=int, nargs="*", default=[16, 18, 20])
    ap.add_argument("--law-d", type=int, nargs="*", default=[14])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--jit", action="store_true", help="also time backend='jax' (XLA compile: minutes at d >= 10)")
    a = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    print("profile: all 2^d subset entropies, K = 2")
    print("bare: depth-first numpy kernel; one-shot: the whole lattice in one jit call (d <= 16)")
    print(f"{'d':>3} {'package s':>10} {'bare s':>9} {'one-shot s':>11} {'ratio':>6} {'ns/entry pkg':>13} {'max |dH|':>9} {'RSS MiB':>8}")
    for d in a.profile_d:
        table = rng.dirichlet(np.full(2**d, 0.5)).reshape((2,) * d)
        mt.subset_entropies(mt.Joint(table))  # warm-up: compile
        H_pkg = None

        def pkg():
            nonlocal H_pkg
            H_pkg = mt.subset_entropies(mt.Joint(table))  # a fresh Joint: no cache

        reps = a.reps if d <= 18 else 1
        t_pkg = best(pkg, reps)
        H_bare = None

        def bare():
            nonlocal H_bare
            H_bare = bare_entropies(table)

        t_bare = best(bare, reps)
        t_one = float("nan")
        if d <= 16:
            bare_jax_oneshot(table)  # compile
            t_one = best(lambda: bare_jax_oneshot(table), reps)
        H_bare[0] = 0.0
        err = float(np.abs(H_pkg - np.maximum(H_bare, 0.0)).max())
        fastest = min(t_bare, t_one) if t_one == t_one else t_bare
        print(f"{d:>3} {t_pkg:>10.3f} {t_bare:>9.3f} {t_one:>11.3f} {t_pkg / fastest:>6.2f} {t_pkg / 3**d * 1e9:>13.2f} {err:>9.1e} {rss_mib():>8.0f}", flush=True)
    print("\nlaw: exact_run(p, Schedule((2,)*(d/2))), random planner, K = 2")
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
        t_pkg = best(lambda: mt.exact_run(p, sched), a.reps)
        q = mt.exact_run(p, sched).law.table
        t_ref = best(lambda: reference_law(table, sched.sizes), 1)
        err = float(np.abs(q - reference_law(table, sched.sizes)).max())
        print(f"{d:>3} {t_pkg:>10.3f} {t_jax:>8.3f} {t_first - t_jax:>10.2f} {t_ref:>12.3f} {t_pkg / t_ref:>6.2f} {err:>9.1e} {rss_mib():>8.0f}", flush=True)


if __name__ == "__main__":
    main()
