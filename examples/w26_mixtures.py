"""W26 Figures 2 and 4, reproduced in kind: complexities of random-centre mixtures of products.

Model (our reading; W26 does not publish its centres): M = 2**(d/4) centres c_m drawn
uniformly from {0,1}^d (seeded), uniform weights 1/M, and component m is the product law
with X_k = c_{m,k} flipped independently with probability ZETA (default 0.02 = W26's η,
Figure 2 caption, §2.2.1; 0.1 gives C_ugc / P_ugc ~ 1.7 at d = 32). d = 32, 48, 64.
W26 does not give its centres or seed. All of W26's printed numbers: w26_printed_numbers.py.

No dense table exists at these d (2**64 outcomes). The profile phi_j = mean H(X_i | X_A),
|A| = j, is estimated by Monte Carlo from the exact conditionals
(mdmtheory.laws.estimate_information_profile: per exact sample one random order, the entropy of
the exact conditional at every level; h^card_j = d (phi_0 - phi_j)), projected onto
non-increasing sequences (isotonic regression; rounding-level noise otherwise breaks the
monotonicity the UGC functionals need), then C_ugc, C(P) (W26 block DP, BLOCKS blocks)
and P_ugc on the canonical interval [1/d, 1 - 1/d]. Standard errors: batch means over 5
groups of samples. W26's printed ratios C_ugc / P_ugc: 2.19, 3.13, 3.85.

Results (``--zeta 0.02 --n 200``, seeds 0-2, benchmarks/RESULTS.md §6; the d = 64 row with
OMP_NUM_THREADS=1 took 27-58 s per seed on a shared 2-core machine):

====  =====  ===========  =========  =========  ===================  ===========
d     M      C_ugc        C(P)       P_ugc      C_ugc/P_ugc (seeds)  W26 printed
====  =====  ===========  =========  =========  ===================  ===========
32    256    24.7-25.0    11.8-12.1  11.3-11.7  2.14, 2.18, 2.18     2.19
48    4096   43.0-43.5    14.2-14.8  13.5-14.1  3.07, 3.11, 3.19     3.13
64    65536  62.87-62.93  16.4-17.6  15.4-16.6  3.86, 3.80, 4.07     3.85
====  =====  ===========  =========  =========  ===================  ===========

(± batch-means standard errors: about 0.2 on C_ugc, 0.1-0.4 on C(P) and P_ugc, 0.03-0.08 on
the ratio.) W26 also prints C_ugc ≈ 65.0, C(P) ≈ 23.5 (3 blocks) and P_ugc ≈ 16.9 for d = 64
(§2.2.2, Figure 4); examples/w26_printed_numbers.py compares them.

Run: python examples/w26_mixtures.py [--fast] [--seeds 3] [--n 200] [--zeta 0.02] [--dims 32 48 64]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.optimize import isotonic_regression

import mdmtheory as mt
from mdmtheory.optimal import block_partition
from mdmtheory.laws import MixtureOfProductsLaw, estimate_information_profile

PRINTED_RATIO = {32: 2.19, 48: 3.13, 64: 3.85}
BLOCKS = 8


def mixture(d: int, zeta: float, seed: int) -> MixtureOfProductsLaw:
    M = 2 ** (d // 4)
    c = np.random.default_rng(seed).integers(0, 2, (M, d))
    probs = np.where(c[..., None] == np.arange(2), 1.0 - zeta, zeta)
    return MixtureOfProductsLaw(np.full(M, 1.0 / M), probs)


def complexities(phi: np.ndarray) -> tuple[float, float, float]:
    phi = isotonic_regression(phi, increasing=False).x
    prof = mt.Profile(phi)
    c = mt.information.coarse_complexity(prof)
    part = block_partition(prof, BLOCKS).complexity
    p = mt.information.fine_complexity(prof)
    return c, part, p


def run(d: int, zeta: float, seed: int, n: int, groups: int = 5) -> dict:
    law = mixture(d, zeta, seed)
    est = estimate_information_profile(law, n, seed=seed + 1000, batch=512)
    full = complexities(est.values)
    parts = np.array([complexities(g.mean(axis=0)) for g in np.array_split(est.per_sample, groups)])
    ratios = parts[:, 0] / parts[:, 2]
    se = parts.std(axis=0, ddof=1) / np.sqrt(groups)
    return {"C_ugc": full[0], "C_P": full[1], "P_ugc": full[2], "ratio": full[0] / full[2],
            "se": (*se, ratios.std(ddof=1) / np.sqrt(groups)), "TC+DTC": d * (est.values[0] - est.values[-1])}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fast", action="store_true", help="d = 32 only, 2 seeds, 60 samples")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--zeta", type=float, default=0.02)
    ap.add_argument("--dims", type=int, nargs="+", default=[32, 48, 64], choices=sorted(PRINTED_RATIO))
    args = ap.parse_args(argv)
    dims, seeds, n = ((32,), 2, 60) if args.fast else (tuple(args.dims), args.seeds, args.n)
    print(f"zeta = {args.zeta}, n = {n} exact samples per law, C(P) with {BLOCKS} blocks (W26 block DP)")
    print(f"{'d':>3} {'M':>6} {'seed':>4} {'C_ugc':>14} {'C(P)':>14} {'P_ugc':>14} {'C/P':>12} {'W26 C/P':>8} {'s':>5}")
    results = {}
    for d in dims:
        rs = results[d] = []
        for seed in range(seeds):
            t = time.perf_counter()
            r = run(d, args.zeta, seed, n)
            rs.append(r)
            se = r["se"]
            print(f"{d:>3} {2 ** (d // 4):>6} {seed:>4} {r['C_ugc']:>8.3f}±{se[0]:<5.3f} {r['C_P']:>8.3f}±{se[1]:<5.3f} "
                  f"{r['P_ugc']:>8.3f}±{se[2]:<5.3f} {r['ratio']:>6.3f}±{se[3]:<5.3f} {PRINTED_RATIO[d]:>8} "
                  f"{time.perf_counter() - t:>5.1f}")
        ratios = [r["ratio"] for r in rs]
        print(f"{d:>3} spread over seeds: C/P in [{min(ratios):.3f}, {max(ratios):.3f}], printed {PRINTED_RATIO[d]}")
    return results


if __name__ == "__main__":
    main()
