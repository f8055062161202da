"""Exact profile and exact law on an accelerator: entries/s and the ratio to memory bandwidth.

Profile: ``mdmtheory.subset_entropies`` (on an accelerator the JAX block walk,
``entropies._compute_xla``: blocks bound the memory, so d = 24 binary, 3^24 = 2.8e11
lattice entries, streams through the device in blocks; on CPU the numpy walk). Law:
``exact_run(p, Schedule((2,)*(d/2)), backend=...)`` (random order: the level layout of
samplers/kernel.py, the two levels of a step at a time; d = 18 binary is within its limit,
``engine.MAX_LEVEL_ENTRIES``). The default backend is ``"eager"`` (JAX op by op on the
device): under ``"jax"`` (jit) the level layout's gather indices — up to 7.6e7 entries per
level at d = 18 — become constants of the compiled graph. Eager JAX compiles each
operation's shape once (the first call: 92 s at d = 12 on CPU), so the law is timed on
its second call. Bytes per
entry are counted as 16 (one float64 written, one read: the least any kernel moves); the
ratio is (entries/s x 16 B) / peak bandwidth, the bandwidth read from the device with NVML
(bus width x 2 x max memory clock) when available, else not printed. Runs on CPU too
(``--quick``: tiny sizes, a smoke test).

    PYTHONPATH=. python benchmarks/gpu_exact.py                 # d = 24 profile, d = 18 law
    PYTHONPATH=. python benchmarks/gpu_exact.py --quick         # d = 10 profile, d = 6 law
"""

from __future__ import annotations

import argparse
import time
from math import comb

import jax
import numpy as np

import mdmtheory as mt


def bandwidth_bytes_per_s():
    """Peak memory bandwidth of GPU 0 from NVML, or None."""
    try:
        import pynvml  # noqa: PLC0415

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        bus = pynvml.nvmlDeviceGetMemoryBusWidth(h)  # bits
        clock = pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM)  # MHz
        return 2.0 * clock * 1e6 * bus / 8.0
    except Exception:  # no NVML, no GPU: the ratio is not printed
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (CPU smoke test)")
    ap.add_argument("--profile-d", type=int, default=None)
    ap.add_argument("--law-d", type=int, default=None)
    ap.add_argument("--law-backend", choices=("eager", "jax", "numpy"), default="eager")
    a = ap.parse_args(argv)
    dp = a.profile_d or (10 if a.quick else 24)
    dl = a.law_d or (6 if a.quick else 18)
    dev = jax.devices()[0]
    bw = bandwidth_bytes_per_s()
    print(f"device: {dev.platform} {getattr(dev, 'device_kind', '')}; peak bandwidth: "
          f"{'unknown' if bw is None else f'{bw / 1e9:.0f} GB/s'}")
    rng = np.random.default_rng(0)
    rows = []
    table = rng.dirichlet(np.full(2**dp, 0.5)).reshape((2,) * dp)
    mt.information.subset_entropies(mt.Joint(np.full((2,) * dp, 0.5**dp)))  # compile the block shapes
    t = time.perf_counter()
    H = mt.information.subset_entropies(mt.Joint(table))
    el = time.perf_counter() - t
    rows.append(("profile", dp, 3**dp, el, float(H[-1])))
    table = rng.dirichlet(np.full(2**dl, 0.5)).reshape((2,) * dl)
    p = mt.Joint(table)
    sched = mt.Schedule((2,) * (dl // 2) + ((1,) if dl % 2 else ()))
    t = time.perf_counter()
    mt.exact_run(p, sched, backend=a.law_backend)
    first = time.perf_counter() - t
    t = time.perf_counter()
    q = mt.exact_run(p, sched, backend=a.law_backend).law
    el = time.perf_counter() - t
    # entries written by the level layout: step n -> n + k makes C(d, n+k) C(n+k, k) products
    # of K^(n+k) entries (one per (state, move, x))
    n, entries = 0, 0
    for k in sched.sizes:
        entries += comb(dl, n + k) * comb(n + k, k) * 2 ** (n + k)
        n += k
    rows.append(("law", dl, entries, el, mt.kl(p, q)))
    print(f"law ({a.law_backend}) first call {first:.1f} s, second {el:.1f} s")
    print(f"{'what':>8} {'d':>3} {'entries':>10} {'s':>9} {'entries/s':>10} {'ratio to bandwidth':>19} {'value':>10}")
    for what, d, n, el, val in rows:
        ratio = "n/a" if bw is None else f"{n * 16 / el / bw:.3f}"
        print(f"{what:>8} {d:>3} {n:>10.3g} {el:>9.3f} {n / el:>10.3g} {ratio:>19} {val:>10.4f}")


if __name__ == "__main__":
    main()
