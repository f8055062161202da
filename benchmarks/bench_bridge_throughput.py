"""Benchmark (issue 18): the bridge's ``estimate_profile`` throughput against the model's own forward, on CPU.

Model: a randomly initialized Hugging Face ``BertForMaskedLM`` built from a config (hidden
128, 4 layers, 4 heads, FFN 512, vocabulary V = 20 000: ~3.5M parameters), saved to a
temporary folder and loaded back with ``bridge.from_pretrained`` as a user would (local
files only, no download; transformers' default attention, SDPA). Sequences of d = 128
tokens, batches of ``--batch`` sequences, float32, ``torch.set_num_threads(--threads)``.

Measured in one run, on the same module, alternating one batch of each ``--repeat`` times
(a shared machine's load then hits both alike):

1. **forward**: ``model(ids).logits`` on one batch of B sequences masked at the levels below
   (tokens/s = B·d / s);
2. **bridge**: ``bridge.estimate_profile`` on the same model (MaskedModel, ``max_batch = B``)
   at B/2 evenly spaced levels, 2 draws each (one forward batch), ``forwards · d / s``: the
   counter-based draws, the masking, the same forward, the log-sum-exp over the outcome
   columns of the masked positions, the gather of the targets and the float64 accumulation;
3. the **ratio** (2)/(1): the median over the alternations of the paired ratio, by CPU time
   of this process (the figure least disturbed by other jobs on a shared machine) and by
   wall time, for two outcome sets: every id but the mask
   (``vocab=None``, mask id 4 inside the vocabulary) and one slice of ids
   (``vocab=range(5, V)``). Target ≥ 0.9.

Run:  OMP_NUM_THREADS=1 python benchmarks/bench_bridge_throughput.py [--quick]
Prints a table and one JSON line (prefix ``@@RESULT``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile

import numpy as np

from _util import time_once_cpu

MASK = 4
TARGET = 0.9


def build(args, folder):
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=args.vocab, hidden_size=args.hidden, num_hidden_layers=args.layers,
                                  num_attention_heads=4, intermediate_size=4 * args.hidden,
                                  max_position_embeddings=max(128, args.d), mask_token_id=MASK)
    transformers.BertForMaskedLM(cfg).save_pretrained(folder)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a tiny configuration (smoke test)")
    ap.add_argument("--d", type=int, default=None, help="sequence length (default 128; 16 with --quick)")
    ap.add_argument("--vocab", type=int, default=None, help="vocabulary size V (default 20000; 200 with --quick)")
    ap.add_argument("--hidden", type=int, default=None, help="hidden size (default 128; 32 with --quick)")
    ap.add_argument("--layers", type=int, default=None, help="layers (default 4; 1 with --quick)")
    ap.add_argument("--batch", type=int, default=None, help="sequences per forward (default 32; 4 with --quick)")
    ap.add_argument("--repeat", type=int, default=None, help="alternations of forward and estimator (default 20; 2 with --quick)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = ap.parse_args(argv)
    import torch

    from mdmtheory import bridge

    q = args.quick
    args.d = args.d or (16 if q else 128)
    args.vocab = args.vocab or (200 if q else 20000)
    args.hidden = args.hidden or (32 if q else 128)
    args.layers = args.layers or (1 if q else 4)
    B = args.batch or (4 if q else 32)
    repeat = args.repeat or (2 if q else 20)
    torch.set_num_threads(args.threads)
    d, V = args.d, args.vocab
    with tempfile.TemporaryDirectory() as folder:
        build(args, folder)
        models = {"all ids but the mask": bridge.from_pretrained(folder, max_batch=B, device="cpu"),
                  "one slice (5..V-1)": bridge.from_pretrained(folder, vocab=range(5, V), max_batch=B, device="cpu")}
    module = models["all ids but the mask"].model
    impl = module.config._attn_implementation
    n_params = sum(p.numel() for p in module.parameters())
    rng = np.random.default_rng(0)
    xs = rng.integers(0, V - 5, size=(4 * B, d))  # outcome indices valid for both outcome sets
    # one unit = one forward batch of B sequences: the estimator at B/2 evenly spaced levels,
    # 2 draws each (a new seed per unit, so the levels' draws change); the forward on B
    # sequences masked at the same levels
    levels = np.unique(np.linspace(0, d - 1, max(1, B // 2)).round().astype(int))
    npl = max(2, B // len(levels))
    frac = np.repeat(levels, npl)[:B] / d
    ids = torch.as_tensor(np.where(rng.random((B, d)) < 1 - frac[:, None], MASK, xs[:B] + 5))

    def run():
        with torch.inference_mode():
            module(ids).logits  # noqa: B018 (freed inside the timing, as in a user's loop and in the bridge)

    def forward():
        wall, cpu, _ = time_once_cpu(run)
        return B * d / wall, B * d / cpu

    def profile(m, seed):
        wall, cpu, est = time_once_cpu(lambda: bridge.estimate_profile(m, xs, levels=levels, n_per_level=npl, seed=seed))
        return est.forwards * d / wall, est.forwards * d / cpu, est

    forward()
    for m in models.values():  # warm-up
        profile(m, 0)
    fwd = {"wall": [], "cpu": []}
    tps = {n: {"wall": [], "cpu": []} for n in models}
    ratios = {n: {"wall": [], "cpu": []} for n in models}
    est = {}
    for r in range(repeat):  # alternate, so that both see the same load of a shared machine
        for name, m in models.items():
            f = forward()
            *t, est[name] = profile(m, 1 + r)
            for k, clock in enumerate(("wall", "cpu")):
                fwd[clock].append(f[k])
                tps[name][clock].append(t[k])
                ratios[name][clock].append(t[k] / f[k])
    med = {n: {c: float(np.median(ratios[n][c])) for c in ("wall", "cpu")} for n in models}
    print(f"model: BertForMaskedLM, {n_params / 1e6:.2f}M parameters, float32, attention {impl}, d={d}, V={V}, "
          f"batch={B}, threads={args.threads}; {repeat} alternations of one forward batch and one estimator batch")
    print("tokens/s: best over the alternations; ratio: median over the alternations of bridge / forward")
    print(f"{'outcome set':24s} {'clock':>5s} {'forward tok/s':>14s} {'bridge tok/s':>14s} {'ratio':>7s}")
    for name in models:
        for clock in ("cpu", "wall"):
            print(f"{name:24s} {clock:>5s} {max(fwd[clock]):14.0f} {max(tps[name][clock]):14.0f} {med[name][clock]:7.3f}")
    print(f"target: ratio >= {TARGET} (CPU time: this process only, the figure least disturbed by other jobs)")
    res = {"params": int(n_params), "attention": impl, "d": d, "V": V, "batch": B, "threads": args.threads,
           "repeat": repeat, "forward_tokens_per_s": {c: max(fwd[c]) for c in ("wall", "cpu")},
           "bridge_tokens_per_s": {n: {c: max(tps[n][c]) for c in ("wall", "cpu")} for n in models},
           "ratio_median": med, "c0": {name: float(e.values[0]) for name, e in est.items()}}
    print("@@RESULT " + json.dumps(res))
    return 0 if all(np.all(np.isfinite(e.values)) for e in est.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
