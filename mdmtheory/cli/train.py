"""``mdmtheory train``: train a tiny MDM (or the AR baseline) on a data file or a named dataset."""

from __future__ import annotations

import argparse
import os

from ._common import options_for, renamed, say_renamed, UsageError

HELP = "train a tiny masked-diffusion model (or --causal baseline) and save a safetensors checkpoint"
EXAMPLE = "mdmtheory train --data words --train-steps 3000 --out words.safetensors"

DATASETS = ("words", "markov", "phonemes")


#: Largest values of the size options (each is checked before any work).
MAX_SAMPLES = 10**7  # --n, draws from a named dataset
MAX_STEPS = 10**7  # --train-steps, optimizer steps
MAX_BATCH = 1 << 16  # --batch-size
MAX_D = 1 << 12  # --d of the markov dataset


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ._inputs import DATA_HELP

    parser.add_argument("--data", metavar="FILE|NAME", help=f"a named dataset ({', '.join(DATASETS)}) or a file of {DATA_HELP}")
    parser.add_argument("old_data", metavar="DATA", nargs="?", help=argparse.SUPPRESS)  # the old positional DATA
    parser.add_argument("--out", required=True, help="checkpoint path (.safetensors; a .json is written beside it); "
                        "its folder must exist, and an existing checkpoint there is refused unless --overwrite")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace an existing checkpoint at --out (its .safetensors and .json)")
    parser.add_argument("--chars", action="store_true", help="--data file lines are characters, one token each")
    parser.add_argument("--causal", action="store_true", help="train the autoregressive baseline instead")
    parser.add_argument("--n", type=int, default=None,
                        help=f"samples drawn from a named dataset (default 200000, at most {MAX_SAMPLES:,})")
    parser.add_argument("--d", type=int, default=None,
                        help=f"length of the markov dataset, 2..{MAX_D} (default 64; the tiny model's limit)")
    parser.add_argument("--train-steps", type=int, default=2000, metavar="N",
                        help=f"optimizer steps (default 2000, at most {MAX_STEPS:,})")
    renamed(parser, "--steps", "--train-steps", type=int, metavar="N")
    parser.add_argument("--batch-size", type=int, default=256, help=f"default 256, at most {MAX_BATCH:,}")
    parser.add_argument("--lr", type=float, default=3e-3, help="learning rate > 0 (default 3e-3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads, 1..number of CPUs (default 1)")


def _check_arguments(args) -> None:
    from ._common import check_output
    from ._inputs import check_seed

    if args.old_data is not None:
        if args.data is not None:
            raise UsageError(f"--data: give the data once (got --data {args.data!r} and DATA {args.old_data!r})")
        say_renamed("DATA (positional)", "--data DATA")
        args.data = args.old_data
    if args.data is None:
        raise UsageError(f"--data: give a named dataset ({', '.join(DATASETS)}) or a token file")
    for opt, v, top in (("--train-steps", args.train_steps, MAX_STEPS), ("--batch-size", args.batch_size, MAX_BATCH),
                        ("--threads", args.threads, max(1, os.cpu_count() or 1))):
        if not 1 <= v <= top:
            raise UsageError(f"{opt}: expected an integer in 1..{top:,}, got {v}")
    if not 0 < args.lr < float("inf"):  # also refuses nan
        raise UsageError(f"--lr: expected a learning rate > 0 (finite), got {args.lr}")
    check_seed(args.seed)
    named = args.data in DATASETS and not os.path.exists(args.data)
    if named:
        if args.chars:
            raise UsageError(f"--chars: only for a data file; {args.data!r} is a named dataset")
        if args.n is not None and not 1 <= args.n <= MAX_SAMPLES:
            raise UsageError(f"--n: expected a number of samples in 1..{MAX_SAMPLES:,}, got {args.n}")
        if args.d is not None and args.data != "markov":
            raise UsageError(f"--d: only for the markov dataset; {args.data!r} has its own length")
        if args.d is not None and not 2 <= args.d <= MAX_D:
            raise UsageError(f"--d: expected a length in 2..{MAX_D} (the tiny model's limit for markov), got {args.d}")
    else:
        if not os.path.isfile(args.data):  # before torch is imported (3.8 s): issue 38 item G
            raise UsageError(f"--data: {args.data!r} is neither a named dataset ({', '.join(DATASETS)}) nor a file")
        for opt, v in (("--n", args.n), ("--d", args.d)):
            if v is not None:
                raise UsageError(f"{opt}: only for a named dataset ({', '.join(DATASETS)}); a data file has its own rows")
    out = check_output(args.out, "--out", suffix=".safetensors", overwrite=args.overwrite)
    check_output(str(out)[: -len(".safetensors")] + ".json", "--out", overwrite=args.overwrite)


def run(args) -> dict:
    import sys

    _check_arguments(args)
    import torch

    from ..data import datasets
    from ..bridge.tiny import TinyConfig, TinyMDM, save_checkpoint
    from ..bridge.train import train
    from ._inputs import read_tokens

    if args.data in DATASETS and not os.path.exists(args.data):
        n = 200_000 if args.n is None else args.n
        ds = {"words": datasets.words, "phonemes": datasets.phonemes,
              "markov": lambda: datasets.markov(64 if args.d is None else args.d)}[args.data]()
        x, alphabet, what = ds.sample(n, seed=args.seed), list(ds.alphabet), f"{ds.name}: {ds.source}"
    else:
        if not os.path.exists(args.data):  # a typo of a dataset name reads as one (issue 39 item 3)
            raise UsageError(f"--data: {args.data!r} is neither a named dataset ({', '.join(DATASETS)}) nor a file")
        x, alphabet = read_tokens(args.data, "--data", chars=args.chars)
        alphabet, what = list(alphabet), f"file {args.data}"
        if x.shape[1] > MAX_D:
            raise UsageError(f"--data: rows of {x.shape[1]} tokens; train builds models for d <= {MAX_D}")
    torch.manual_seed(args.seed)
    model = TinyMDM(TinyConfig(vocab_size=len(alphabet), seq_len=x.shape[1], causal=args.causal))
    # the bar follows the CLI's rule: silent with --quiet or when stderr is not a terminal
    names = {"lr": "--lr", "steps": "--train-steps", "batch_size": "--batch-size", "seed": "--seed",
             "num_threads": "--threads", "samples": "--data"}
    with options_for(names):  # the library's limits (e.g. lr <= MAX_LR) named as the options the user typed
        res = train(model, x, steps=args.train_steps, batch_size=args.batch_size, lr=args.lr, seed=args.seed,
                    num_threads=args.threads, progress=not args.quiet and sys.stderr.isatty())
    info = {"command": "mdmtheory train " + " ".join(f"{k}={v}" for k, v in sorted(vars(args).items()) if not k.startswith("_") and k != "old_data"),
            "seed": args.seed, "data": what, "alphabet": [a if a is None else str(a) for a in alphabet],
            "final_loss": res.losses[-1]}
    st, js = save_checkpoint(model, args.out, info=info)
    return {"checkpoint": st, "config": js, "parameters": model.num_parameters(),
            "first_loss": res.losses[0], "final_loss": res.losses[-1]}


def render(r: dict) -> str:
    return (f"trained {r['parameters']} parameters: loss {r['first_loss']:.4f} -> {r['final_loss']:.4f}\n"
            f"saved {r['checkpoint']} and {r['config']}")
