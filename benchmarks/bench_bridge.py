"""Benchmark (issue 10): ``bridge.estimate_profile`` against a naive loop, on CPU.

Model: a randomly initialized torch transformer encoder (``nn.TransformerEncoder``,
d_model 64, 2 layers, 4 heads; K = 16 outcomes + the mask), sequences of length d = 32.

* **Package**: ``estimate_profile(model, samples, n_per_level=N)`` at every level: one
  forward per draw (sample, revealed set A) scores all d − i masked positions, draws of all
  levels batched together (max_batch 64).
* **Naive**: the same draws (the same A, from the bridge's counter-based generator), one
  forward of batch 1 per (sample, level, position), i.e. d − i forwards per draw.

Both give the same per-draw values (checked, 1e-5); the ratio of wall times is printed
(target ≥ 20×). Then the Monte Carlo cost: forwards needed for a 95% half-width of
±0.01 nats per level, for the package's estimator (all masked positions of one forward
averaged) and for the single-position estimator (one position per forward), from the
variances measured in the same run.

Run:  .venv/bin/python benchmarks/bench_bridge.py [--quick]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from _util import fmt_s, print_machine, print_table, time_once

TARGET_RATIO = 20.0
HALF_WIDTH = 0.01


def make_model(K: int, d: int, seed: int = 0):
    import torch

    torch.manual_seed(seed)

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.mask_id = K
            self.tok = torch.nn.Embedding(K + 1, 64)
            self.pos = torch.nn.Parameter(0.1 * torch.randn(d, 64))
            layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
            self.enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = torch.nn.Linear(64, K + 1)

        def forward(self, ids):
            return self.head(self.enc(self.tok(ids) + self.pos))

    return Encoder().eval()


def naive(model, xs, levels, n_per_level, seed):
    """One forward (batch 1) per (sample, level, position); the same draws as the package."""
    import torch

    from mdmtheory.information.montecarlo import PROFILE_STREAM, uniforms

    K = model.mask_id
    n_s, d = xs.shape
    Y = np.zeros((len(levels), n_per_level))
    singles = [[] for _ in levels]
    with torch.inference_mode():
        for li, i in enumerate(levels):
            for r in range(n_per_level):
                g = li * n_per_level + r
                x = xs[g % n_s]
                rank = np.argsort(np.argsort(uniforms(seed, PROFILE_STREAM, np.array([g]), d)[0]))
                ids = torch.as_tensor(np.where(rank < i, x, K))[None]
                tot = 0.0
                for j in np.flatnonzero(rank >= i):
                    logits = model(ids)[0, j, :K].double()
                    v = float(-(logits[x[j]] - torch.logsumexp(logits, 0)))
                    singles[li].append(v)
                    tot += v
                Y[li, r] = tot / (d - i)
    return Y.mean(axis=1), singles


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke version (smaller)")
    args = ap.parse_args(argv)
    import torch

    from mdmtheory import bridge

    torch.set_num_threads(1)
    print_machine("bench_bridge: estimate_profile vs one forward per (sample, level, position)")
    K, d = 16, (12 if args.quick else 32)
    n_timing = 2 if args.quick else 8
    model = make_model(K, d)
    xs = np.random.default_rng(0).integers(0, K, size=(4096, d))
    levels = list(range(d))
    mm = bridge.MaskedModel(model, mask_id=K, max_batch=64)
    t_pkg, est = time_once(lambda: bridge.estimate_profile(mm, xs, n_per_level=n_timing, seed=0))
    t_pkg = min(t_pkg, time_once(lambda: bridge.estimate_profile(mm, xs, n_per_level=n_timing, seed=0))[0])
    t_naive, (naive_vals, singles) = time_once(lambda: naive(model, xs, levels, n_timing, 0))
    diff = float(np.max(np.abs(naive_vals - est.values)))
    naive_forwards = sum(len(s) for s in singles)
    ratio = t_naive / t_pkg
    print_table(
        ["method", "forwards", "time", "ratio"],
        [
            ["estimate_profile (batched, all positions per forward)", est.forwards, fmt_s(t_pkg), "1"],
            ["naive loop (batch 1, one position per forward)", naive_forwards, fmt_s(t_naive), f"{ratio:.1f}x"],
        ],
    )
    print(f"\nlargest difference between the two: {diff:.2e} nats (d = {d}, K = {K}, {n_timing} draws per level)")
    # forwards needed for +-0.01 nats (95%) per level, from the variances of a larger run
    n_var = 16 if args.quick else 256
    big = bridge.estimate_profile(mm, xs, n_per_level=n_var, seed=1)
    z = 1.96
    need_all = np.ceil((z * big.stderr * np.sqrt(n_var) / HALF_WIDTH) ** 2)
    sd_single = np.array([np.std(s, ddof=1) for s in singles])
    need_one = np.ceil((z * sd_single / HALF_WIDTH) ** 2)
    rows = []
    for i in sorted({0, d // 4, d // 2, 3 * d // 4, d - 1}):
        rows.append([i, f"{big.values[i]:.3f}", int(need_all[i]), int(need_one[i])])
    print("\nforwards per level for a 95% half-width of 0.01 nats:")
    print_table(["level i", "c(i) (nats)", "package (all masked positions)", "single position per forward"], rows)
    print(f"all {d} levels: package {int(need_all.sum())} forwards, single-position {int(need_one.sum())}")
    ok = diff < 1e-5 and (args.quick or ratio >= TARGET_RATIO)
    print(f"\ntarget >= {TARGET_RATIO:.0f}x: {'met' if ratio >= TARGET_RATIO else 'NOT met'} ({ratio:.1f}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
