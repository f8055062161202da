"""Train the shipped checkpoints (mdmtheory/checkpoints/*.safetensors + .json), seeded, CPU.

    OMP_NUM_THREADS=1 python benchmarks/train_checkpoints.py            # all three
    OMP_NUM_THREADS=1 python benchmarks/train_checkpoints.py words-ar   # one

Each run writes the command, seed, data and final loss into the checkpoint's JSON, so the
file says how to reproduce it. One thread (the machine is shared); about ten CPU-minutes for
each word checkpoint, five for markov.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import torch

from mdmtheory.data import datasets
from mdmtheory.bridge.tiny import TinyConfig, TinyMDM, save_checkpoint
from mdmtheory.bridge.train import train

# The word checkpoints (MDM and its causal baseline share shape and budget for a fair
# comparison). Chosen by 1500-step pilots on the MDM (learning error c - phi at m = 3 / 4,
# 2000 draws per level, s.e. ~0.025): the earlier 64x2 shape with the ELBO weight, 3000
# steps: 0.65 / 0.52; 96x3, lr 3e-3: ELBO 0.73 / 0.73, "mean" 0.56 / 0.62; "mean" lr 1e-2
# 1.39 / 1.59, lr 1.5e-3 0.55 / 0.58; 64x2 with d_ff 768: 0.64 / 0.65; 128x2: 0.63 / 0.67.
# The error falls mostly with the number of steps; 8000 fit in ~10 minutes on one thread.
WORDS_MODEL = dict(d_model=96, n_layers=3, d_ff=192)
WORDS_TRAIN = dict(steps=8000, batch_size=256, lr=2e-3, weighting="mean")

OUT = Path(__file__).resolve().parents[1] / "mdmtheory" / "checkpoints"

# name -> (dataset factory, n training samples, causal, TinyConfig kwargs, train kwargs)
RECIPES = {
    "words": (lambda: datasets.words(), 200_000, False, WORDS_MODEL, WORDS_TRAIN),
    "words-ar": (lambda: datasets.words(), 200_000, True, WORDS_MODEL, WORDS_TRAIN),
    "markov": (lambda: datasets.markov(64), 50_000, False, {}, dict(steps=1200, batch_size=64, lr=3e-3)),
}
SEED = 0
OBJECTIVE = {
    "elbo": "MDM ELBO (t ~ U(1e-3, 1), 1/t weight)",
    "mean": "MDM loss, t ~ U(1e-3, 1), cross-entropy averaged over masked tokens (no 1/t weight)",
}


def make(name: str) -> None:
    factory, n, causal, shape, kw = RECIPES[name]
    ds = factory()
    x = ds.sample(n, seed=SEED)
    torch.manual_seed(SEED)
    model = TinyMDM(TinyConfig(vocab_size=ds.K, seq_len=ds.d, causal=causal, **shape))
    t0 = time.perf_counter()
    if causal:
        kw = {k: v for k, v in kw.items() if k != "weighting"}  # the AR loss has no weighting
    res = train(model, x, seed=SEED, **kw)
    secs = time.perf_counter() - t0
    info = {
        "command": f"OMP_NUM_THREADS=1 python benchmarks/train_checkpoints.py {name}",
        "seed": SEED,
        "data": f"{ds.name}: {n} samples, seed {SEED}; {ds.source}",
        "licence_of_data": ds.licence,
        "alphabet": list(ds.alphabet),
        "objective": "next-token cross-entropy" if causal else OBJECTIVE[kw.get("weighting", "elbo")],
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
