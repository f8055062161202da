"""GPU benchmark (issue 10): ``estimate_profile`` on a ~100M-parameter masked LM vs its plain forward.

Unattended, a few minutes on one GPU. Model: a randomly initialized Hugging Face
``BertForMaskedLM`` (hidden 768, 12 layers, 12 heads, FFN 3072, vocabulary V = 32000:
~110M parameters), bf16 on CUDA, sequence length d (default 512), built in memory (no
download, no folder). Outcomes are token ids 5..V−1, mask id 4.

Measured in one run, on the same model, batch size and device:

1. **plain forward throughput**: ``model(ids)`` on batches of ``--batch`` sequences
   (sequences/s), the ceiling;
2. **estimate_profile throughput**: forwards/s of ``bridge.estimate_profile`` at
   ``--levels`` evenly spaced levels (draws, masking, the forward, log-softmax over the
   outcomes, float64 accumulation), and the **ratio** to (1) (target ≥ 90%, issue 18);
3. **prompted blocks** (issue 18): the first ``--prompt`` positions a prompt, the rest cut
   into ``--blocks`` blocks of L positions; for each block b the per-block conditional
   profile given the prompt and the earlier blocks,
   ``estimate_profile(mm, xs, prompt_length=g + b*L, response_length=L)`` (later blocks
   always masked, as LLaDA's block decoding sees them), at ``--levels`` levels, with its
   forwards/s and ratio to (1).

Timing: ``torch.cuda.synchronize()`` before reading the clock on CUDA; one warm-up call
of each before timing. ``--quick`` runs a tiny configuration on CPU (a CI smoke test).
Prints a table and one JSON line (prefix ``@@RESULT``).

Run:  python benchmarks/gpu_bridge.py [--quick] [--device cuda] [--d 512] [--batch 32] [--prompt 128] [--blocks 4]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

MASK = 4
TARGET = 0.9


def _sync(device):
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def build(args, device):
    import torch
    import transformers

    torch.manual_seed(0)
    if args.quick:
        cfg = transformers.BertConfig(vocab_size=args.vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                      intermediate_size=64, max_position_embeddings=max(64, args.d))
    else:
        cfg = transformers.BertConfig(vocab_size=args.vocab, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                                      intermediate_size=3072, max_position_embeddings=max(512, args.d))
    model = transformers.BertForMaskedLM(cfg)
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    return model.to(device=device, dtype=dtype).eval(), dtype


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny model on CPU (smoke test)")
    ap.add_argument("--device", default=None, help="default: cuda when available (cpu with --quick)")
    ap.add_argument("--d", type=int, default=None, help="sequence length (default 512; 16 with --quick)")
    ap.add_argument("--vocab", type=int, default=None, help="vocabulary size V (default 32000; 64 with --quick)")
    ap.add_argument("--batch", type=int, default=None, help="sequences per forward (default 32; 8 with --quick)")
    ap.add_argument("--levels", type=int, default=8, help="number of evenly spaced levels")
    ap.add_argument("--n-per-level", type=int, default=None, help="draws per level (default 64; 4 with --quick)")
    ap.add_argument("--repeat", type=int, default=3, help="timed repetitions (best kept)")
    ap.add_argument("--prompt", type=int, default=None, help="prompt length g of the block section (default d/4)")
    ap.add_argument("--blocks", type=int, default=4, help="number of blocks of the response (default 4)")
    args = ap.parse_args(argv)
    import torch

    from mdmtheory import bridge

    args.d = args.d or (16 if args.quick else 512)
    args.vocab = args.vocab or (64 if args.quick else 32000)
    args.batch = args.batch or (8 if args.quick else 32)
    npl = args.n_per_level or (4 if args.quick else 64)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() and not args.quick else "cpu"))
    model, dtype = build(args, device)
    n_params = sum(p.numel() for p in model.parameters())
    V, d, B = args.vocab, args.d, args.batch
    levels = np.unique(np.linspace(0, d - 1, args.levels).round().astype(int))
    mm = bridge.MaskedModel(model, mask_id=MASK, vocab=range(5, V), max_batch=B)
    xs = np.random.default_rng(0).integers(0, V - 5, size=(max(1024, npl * len(levels)), d))
    ids = torch.as_tensor(np.where(np.random.default_rng(1).random((B, d)) < 0.5, MASK, xs[:B] + 5), device=device)

    def plain():
        with torch.inference_mode():
            model(ids).logits
        _sync(device)

    def profile():
        out = bridge.estimate_profile(mm, xs, levels=levels, n_per_level=npl, seed=0)
        _sync(device)
        return out

    n_plain = max(1, (npl * len(levels)) // B)
    plain()
    est = profile()  # warm-up (and the result)
    t_plain = t_prof = float("inf")
    for _ in range(args.repeat):
        _sync(device)
        t0 = time.perf_counter()
        for _ in range(n_plain):
            plain()
        t_plain = min(t_plain, (time.perf_counter() - t0) / (n_plain * B))
        t0 = time.perf_counter()
        est = profile()
        t_prof = min(t_prof, (time.perf_counter() - t0) / est.forwards)
    ratio = t_plain / t_prof
    # prompted, block-wise: block b given the prompt and blocks < b, later blocks masked
    g = d // 4 if args.prompt is None else args.prompt
    L = (d - g) // args.blocks
    if not (0 <= g < d and L >= 1):
        raise SystemExit(f"--prompt/--blocks: need 0 <= prompt < d and at least one position per block (d={d})")
    blevels = np.unique(np.linspace(0, L - 1, min(args.levels, L)).round().astype(int))
    blocks = []
    for b in range(args.blocks):
        tb = float("inf")
        for _ in range(args.repeat):  # best of --repeat, as above
            _sync(device)
            t0 = time.perf_counter()
            e = bridge.estimate_profile(mm, xs, levels=blevels, n_per_level=npl, seed=b, prompt_length=g + b * L,
                                        response_length=L)
            _sync(device)
            tb = min(tb, (time.perf_counter() - t0) / e.forwards)
        blocks.append({"block": b, "prompt_length": g + b * L, "response_length": L, "levels": blevels.tolist(),
                       "values": e.values.tolist(), "stderr": e.stderr.tolist(), "forwards_per_s": 1.0 / tb,
                       "ratio": t_plain / tb})
    res = {
        "device": str(device),
        "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
        "params": int(n_params),
        "dtype": str(dtype),
        "d": d,
        "V": V,
        "batch": B,
        "levels": levels.tolist(),
        "n_per_level": npl,
        "plain_sequences_per_s": 1.0 / t_plain,
        "profile_forwards_per_s": 1.0 / t_prof,
        "ratio": ratio,
        "profile_values": est.values.tolist(),
        "profile_stderr": est.stderr.tolist(),
        "prompt_length": g,
        "block_length": L,
        "blocks": blocks,
    }
    print(f"model: BertForMaskedLM, {n_params / 1e6:.1f}M parameters, {dtype}, d={d}, V={V}, batch={B}, device={device}")
    print(f"plain forward:    {1 / t_plain:10.1f} sequences/s")
    print(f"estimate_profile: {1 / t_prof:10.1f} forwards/s  ({100 * ratio:.0f}% of plain; target >= {100 * TARGET:.0f}%)")
    print("c(i) at levels", levels.tolist(), "=", np.round(est.values, 3).tolist(), "(random weights: about log V)")
    print(f"prompted blocks: prompt {g}, {args.blocks} blocks of {L} (later blocks masked), levels {blevels.tolist()}")
    for r in blocks:
        print(f"  block {r['block']}: prompt_length={r['prompt_length']:4d}  {r['forwards_per_s']:10.1f} forwards/s "
              f"({100 * r['ratio']:.0f}% of plain)  c = {np.round(r['values'], 3).tolist()}")
    print("@@RESULT " + json.dumps(res))
    ok = bool(np.all(np.isfinite(est.values))) and all(np.all(np.isfinite(r["values"])) for r in blocks)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
