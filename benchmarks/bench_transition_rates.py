"""``transition_rates``: sparse bigram counts (now) vs the dense (n, K²) per-sample counts (before).

The dense reference is the formula the package used before issue 29 §1, kept here only as the
baseline: an (n, K²) int64 array of per-sample bigram counts, a bootstrap resample the sum of
its drawn rows. Both run in the same process on the same samples (a K-state stay/move walk),
one after the other; the figures are wall-clock seconds (best of ``--reps``) and the
tracemalloc peak of one call (MiB; it includes the checked copy of the (K, K) matrix that transition_rates makes: 128 MiB at K = 4096). Sizes whose dense array would
exceed ``--dense-max`` MiB run the sparse counts only.

    PYTHONPATH=. python benchmarks/bench_transition_rates.py
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from mdmtheory.samplers import transition_rates


def dense_rates(x, P, n_boot, seed):
    """The old dense computation (point values and the bootstrap's plug-ins); also the reference
    of tests/samplers/test_metrics.py::test_sparse_counts_give_the_dense_formulas_values,
    which loads it from this file."""
    K = P.shape[0]
    per = np.zeros((x.shape[0], K * K), dtype=np.int64)
    np.add.at(per, (np.repeat(np.arange(x.shape[0]), x.shape[1] - 1), (x[:, :-1] * K + x[:, 1:]).ravel()), 1)

    def rates(c):
        c = c.reshape(K, K).astype(float)
        row = c.sum(axis=1)
        w = row / row.sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            ph = np.where(row[:, None] > 0, c / np.maximum(row[:, None], 1), 0.0)
            kl = np.where(ph > 0, ph * (np.log(ph) - np.log(P)), 0.0).sum(axis=1)
        return float(np.sum(w * kl)), float(np.sum(w * 0.5 * np.abs(ph - P).sum(axis=1) * (row > 0)))

    rng = np.random.default_rng(seed)
    boots = [rates(per[rng.integers(0, x.shape[0], x.shape[0])].sum(axis=0)) for _ in range(n_boot)]
    return rates(per.sum(axis=0)), boots


def measure(f, reps):
    best, peak, out = np.inf, 0, None
    for _ in range(reps):
        tracemalloc.start()
        t0 = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t0)
        peak = max(peak, tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    return best, peak / 2**20, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--n-boot", type=int, default=20)
    ap.add_argument("--dense-max", type=float, default=600.0, help="largest dense array to run (MiB)")
    a = ap.parse_args()
    print("| K | n | d | dense (n, K²) MiB | dense s | dense peak MiB | sparse s | sparse peak MiB | max |Δ rate| |")
    print("|---|---|---|---|---|---|---|---|---|")
    for K, n, d in [(27, 2000, 64), (27, 20000, 64), (27, 200000, 64), (256, 2000, 64), (4096, 2000, 64)]:
        rng = np.random.default_rng(0)
        P = np.full((K, K), 0.5 / (K - 1))
        np.fill_diagonal(P, 0.5)
        x = np.cumsum(rng.integers(0, 2, size=(n, d)), axis=1) % K
        dense_mib = n * K * K * 8 / 2**20
        ts, ms, r = measure(lambda: transition_rates(x, P, n_boot=a.n_boot, seed=1), a.reps)
        if dense_mib <= a.dense_max:
            td, md, ((kl, tv), _) = measure(lambda: dense_rates(x, P, a.n_boot, 1), a.reps)
            diff = max(abs(kl - r.kl_rate), abs(tv - r.tv_rate))
            dense = f"{td:.3f} | {md:.0f}"
            dd = f"{diff:.1e}"
        else:
            dense, dd = "— | —", "—"
        print(f"| {K} | {n} | {d} | {dense_mib:,.0f} | {dense} | {ts:.3f} | {ms:.1f} | {dd} |")


if __name__ == "__main__":
    main()
