"""``mdmtheory train``: train a tiny MDM (or the AR baseline) on a data file or a named dataset."""

from __future__ import annotations

import argparse

from ._common import UsageError

HELP = "train a tiny masked-diffusion model (or --causal baseline) and save a safetensors checkpoint"
EXAMPLE = "mdmtheory train words --steps 3000 --out words.safetensors"

DATASETS = ("words", "markov", "phonemes")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", metavar="DATA", help=f"a named dataset ({', '.join(DATASETS)}) or a data file (see design)")
    parser.add_argument("--out", required=True, help="checkpoint path (.safetensors; a .json is written beside it)")
    parser.add_argument("--chars", action="store_true", help="DATA file lines are characters")
    parser.add_argument("--causal", action="store_true", help="train the autoregressive baseline instead")
    parser.add_argument("--n", type=int, default=200_000, help="samples drawn from a named dataset (default 200000)")
    parser.add_argument("--d", type=int, default=64, help="length of the markov dataset (default 64)")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")


def run(args) -> dict:
    import os
    import sys

    import torch

    from .. import datasets
    from ..bridge.tiny import TinyConfig, TinyMDM, save_checkpoint
    from ..bridge.train import train

    if not str(args.out).endswith(".safetensors"):
        raise UsageError(f"--out: expected a .safetensors path, got {args.out!r}")
    if args.data in DATASETS and not os.path.exists(args.data):
        ds = {"words": datasets.words, "phonemes": datasets.phonemes,
              "markov": lambda: datasets.markov(args.d)}[args.data]()
        x, alphabet, what = ds.sample(args.n, seed=args.seed), list(ds.alphabet), f"{ds.name}: {ds.source}"
    else:
        x, alphabet = datasets.load_sequences(args.data, chars=args.chars)
        alphabet, what = list(alphabet), f"file {args.data}"
    torch.manual_seed(args.seed)
    model = TinyMDM(TinyConfig(vocab_size=len(alphabet), seq_len=x.shape[1], causal=args.causal))
    # train() validates --threads (torch.set_num_threads(0) is a RuntimeError); the bar follows
    # the CLI's rule: silent with --quiet or when stderr is not a terminal
    res = train(model, x, steps=args.steps, batch_size=args.batch_size, lr=args.lr, seed=args.seed,
                num_threads=args.threads, progress=not args.quiet and sys.stderr.isatty())
    info = {"command": "mdmtheory train " + " ".join(f"{k}={v}" for k, v in sorted(vars(args).items()) if not k.startswith("_")),
            "seed": args.seed, "data": what, "alphabet": [a if a is None else str(a) for a in alphabet],
            "final_loss": res.losses[-1]}
    st, js = save_checkpoint(model, args.out, info=info)
    return {"checkpoint": st, "config": js, "parameters": model.num_parameters(),
            "first_loss": res.losses[0], "final_loss": res.losses[-1]}


def render(r: dict) -> str:
    return (f"trained {r['parameters']} parameters: loss {r['first_loss']:.4f} -> {r['final_loss']:.4f}\n"
            f"saved {r['checkpoint']} and {r['config']}")
