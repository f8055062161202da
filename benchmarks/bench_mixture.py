"""Mixture-of-products conditionals at W26's d = 64 (M = 2^16 centres): where the time goes.

Times, on the rows mdmtheory.laws.estimate_information_profile asks for (per clean sample, one
random order, every level 0..d-1), the package's ``MixtureOfProductsLaw.conditionals``
(split into the log-likelihood product and the posterior mixture) against the naive
posterior (two exp passes over (n, M), one unpruned product: the code before issue 14's
speed-up), checks they agree, and prints ms per row and the ratio.
Run: OMP_NUM_THREADS=1 python benchmarks/bench_mixture.py [--samples 4] [--d 64]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mdmtheory.laws import MixtureOfProductsLaw
from mdmtheory.laws.oracles import _logsumexp


def naive_conditionals(law, x, revealed):
    L = law._loglik(x, revealed)
    lz = _logsumexp(L, axis=1)
    ok = np.isfinite(lz)
    post = np.exp(L - np.where(ok, lz, 0.0)[:, None]) * ok[:, None]
    out = (post @ law.probs.reshape(law.M, -1)).reshape(x.shape[0], law.d, law.K)
    out[revealed] = 0.0
    return out


def best(f, repeats=3):
    t = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = f()
        t.append(time.perf_counter() - t0)
    return min(t), r


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--zeta", type=float, default=0.02)
    ap.add_argument("--quick", action="store_true", help="d = 32, 2 samples (the smoke version)")
    a = ap.parse_args(argv)
    if a.quick:
        a.d, a.samples = 32, 2
    d, M = a.d, 2 ** (a.d // 4)
    rng = np.random.default_rng(0)
    c = rng.integers(0, 2, (M, d))
    law = MixtureOfProductsLaw(np.full(M, 1.0 / M), np.where(c[..., None] == np.arange(2), 1 - a.zeta, a.zeta))
    xs = law.sample(a.samples, rng)
    rank = np.argsort(np.argsort(rng.random((a.samples, d)), axis=1), axis=1)
    x = np.repeat(xs, d, axis=0)
    rev = np.repeat(rank, d, axis=0) < np.tile(np.arange(d), a.samples)[:, None]
    n = x.shape[0]
    t_ll, L = best(lambda: law._loglik(x, rev))
    t_mix, _ = best(lambda: law._posterior_mix(L.copy()))
    t_pkg, got = best(lambda: law.conditionals(x, rev))
    t_naive, want = best(lambda: naive_conditionals(law, x, rev))
    err = float(np.max(np.abs(got - want)))
    print(f"d = {d}, M = {M}, zeta = {a.zeta}, {n} rows (all levels of {a.samples} samples), best of 3")
    print(f"package: {1e3 * t_pkg / n:.3f} ms/row (log-likelihood product {1e3 * t_ll / n:.3f}, "
          f"posterior mixture {1e3 * t_mix / n:.3f})")
    print(f"naive:   {1e3 * t_naive / n:.3f} ms/row   ratio naive/package = {t_naive / t_pkg:.2f}x   "
          f"max |diff| = {err:.1e}")


if __name__ == "__main__":
    main()
