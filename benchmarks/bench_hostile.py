"""Cost of the issue-9 checks on hot paths (validation, underflow detection, rescaling).

Times, best of several runs: ``exact_run`` (d = 7, T = 3, trajectory; includes the
underflow check), ``pareto_frontier`` (d = 4096, T = 512; includes the power-of-two
rescaling), ``ugc.fine_complexity`` (d = 7; quadrature callback without validation), and the
validated ``ugc.bernstein_basis`` against its unvalidated core, printing the ratio.

Run:  OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_hostile.py
"""

import time

import numpy as np

import mdmtheory as mt
from mdmtheory.information import ugc


def best(fn, reps):
    fn()
    out = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t)
    return out


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="accepted for run_all --quick (this script is already short)")
    ap.parse_args(argv)
    p = mt.families.dirichlet(7, 2, 0.5, seed=1)
    prof = mt.information_profile(p)
    c = np.sort(np.random.default_rng(0).random(4096))[::-1]
    t = np.linspace(0, 1, 64)
    print(f"exact_run d=7 T=3 trajectory: {best(lambda: mt.exact_run(p, mt.Schedule.constant(7, 3), trajectory=True), 5) * 1e3:.2f} ms")
    print(f"pareto_frontier d=4096 T=512: {best(lambda: mt.pareto_frontier(c, 512), 3) * 1e3:.1f} ms")
    print(f"fine_complexity d=7: {best(lambda: ugc.fine_complexity(prof), 5) * 1e3:.2f} ms")
    checked = best(lambda: ugc.bernstein_basis(20, t), 200)
    raw = best(lambda: ugc._bernstein(20, t), 200)
    print(f"bernstein_basis(20, 64 points): validated {checked * 1e6:.1f} us, core {raw * 1e6:.1f} us, ratio {checked / raw:.2f}")


if __name__ == "__main__":
    main()
