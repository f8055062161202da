"""Train the shipped checkpoints (mdmtheory/checkpoints/*.safetensors + .json), seeded, CPU.

    OMP_NUM_THREADS=1 python benchmarks/train_checkpoints.py            # all three
    OMP_NUM_THREADS=1 python benchmarks/train_checkpoints.py words-ar   # one

Each run writes the command, seed, data and final loss into the checkpoint's JSON, so the
file says how to reproduce it. One thread (the machine is shared); a few minutes each.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import torch

from mdmtheory import datasets
from mdmtheory.bridge.tiny import TinyConfig, TinyMDM, save_checkpoint
from mdmtheory.bridge.train import train

OUT = Path(__file__).resolve().parents[1] / "mdmtheory" / "checkpoints"

# name -> (dataset factory, n training samples, causal, train kwargs)
RECIPES = {
    "words": (lambda: datasets.words(), 200_000, False, dict(steps=3000, batch_size=256, lr=3e-3)),
    "words-ar": (lambda: datasets.words(), 200_000, True, dict(steps=2000, batch_size=256, lr=3e-3)),
    "markov": (lambda: datasets.markov(64), 50_000, False, dict(steps=1200, batch_size=64, lr=3e-3)),
}
SEED = 0


def make(name: str) -> None:
    factory, n, causal, kw = RECIPES[name]
    ds = factory()
    x = ds.sample(n, seed=SEED)
    torch.manual_seed(SEED)
    model = TinyMDM(TinyConfig(vocab_size=ds.K, seq_len=ds.d, causal=causal))
    t0 = time.perf_counter()
    res = train(model, x, seed=SEED, **kw)
    secs = time.perf_counter() - t0
    info = {
        "command": f"OMP_NUM_THREADS=1 python benchmarks/train_checkpoints.py {name}",
        "seed": SEED,
        "data": f"{ds.name}: {n} samples, seed {SEED}; {ds.source}",
        "licence_of_data": ds.licence,
        "alphabet": list(ds.alphabet),
        "objective": "next-token cross-entropy" if causal else "MDM ELBO (t ~ U(1e-3, 1), 1/t weight)",
        "train": kw,
        "final_loss": res.losses[-1],
        "seconds": round(secs, 1),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
    }
    st, _ = save_checkpoint(model, OUT / f"{name}.safetensors", info=info)
    print(f"{name}: {model.num_parameters()} parameters, loss {res.losses[0]:.3f} -> {res.losses[-1]:.3f}, "
          f"{secs:.0f} s, {os.path.getsize(st) / 1e6:.2f} MB", flush=True)


if __name__ == "__main__":
    torch.set_num_threads(1)
    for name in sys.argv[1:] or list(RECIPES):
        make(name)
