r"""Scale-out on ``torch.distributed``: shard the draws by rank, all-reduce the sufficient statistics.

Every estimator of :mod:`mdmtheory.bridge.estimators` numbers its Monte Carlo draws
g = 0, 1, …, N − 1 and derives all the randomness of draw g from a counter-based hash of
(seed, stream, g) (never from a shared generator state). Rank r of a world of size W
evaluates the draws g ≡ r (mod W) and accumulates float64 sums, sums of squares (or of
outer products) and counts; one ``all_reduce(SUM)`` gives every rank the statistics of all
N draws. The result therefore equals one process with the same seed (up to the order of
float64 additions, ~1e-15 relative).

The estimators use the default process group when one is initialized (``distributed=None``);
backends: gloo on CPU, nccl on GPU (the reduced tensor then lives on the model's device).

Command line, under torchrun (one process per GPU or CPU worker)::

    torchrun --nproc_per_node 4 -m mdmtheory.bridge.distributed profile \
        --hf /path/to/local/model --mask-id 126336 --samples data.npy \
        --n-per-level 500 --seed 0 --out profile.json

``samples`` is an ``.npy`` integer array (n, d) of outcome indices (with ``--vocab-file``,
a ``.npy`` of the outcome token ids; default: every id except the mask). Rank 0 writes the
JSON. :func:`run_profile` is the same job as a function (the CLI ``estimate`` command calls it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

from ._dist import MAX_WORLD, World, all_reduce_sum, group_from_env, init_from_env, world
from .estimators import estimate_profile
from ..data.datasets import read_npy
from .hf import from_pretrained

# the primitives live in ._dist (the estimators import them without the job's argparse)
__all__ = ["World", "world", "all_reduce_sum", "init_from_env", "group_from_env", "MAX_WORLD", "run_profile", "main"]


def run_profile(model, samples, *, levels=None, n_per_level=1000, seed=0, prompt_length=0, response_length=None) -> dict:
    """Estimate the cross-entropy profile (sharded when a group is initialized) as a JSON-able dict
    (``prompt_length``, ``response_length``: as in :func:`~mdmtheory.bridge.estimate_profile`)."""
    est = estimate_profile(model, samples, levels=levels, n_per_level=n_per_level, seed=seed,
                           prompt_length=prompt_length, response_length=response_length)
    w = world()
    return {
        "prompt_length": int(prompt_length),
        "response_length": int(est.d),
        "levels": est.levels.tolist(),
        "values": est.values.tolist(),
        "stderr": est.stderr.tolist(),
        "forwards": int(est.forwards),
        "world_size": w.size,
        "seed": int(seed),
    }


def _levels_arg(text: str) -> list:
    try:
        return [int(s) for s in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mdmtheory.bridge.distributed", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="job", required=True)
    p = sub.add_parser("profile", help="cross-entropy profile c(i) of a local Hugging Face model")
    p.add_argument("--hf", required=True, help="local Hugging Face folder (never downloaded)")
    p.add_argument("--mask-id", type=int, default=None)
    p.add_argument("--vocab-file", default=None, help=".npy of the outcome token ids")
    p.add_argument("--shift", action="store_true", help="Dream-style right-shifted logits")
    p.add_argument("--trust-remote-code", action="store_true")
    p.add_argument("--samples", required=True, help=".npy integer array (n, d) of outcome indices")
    p.add_argument("--levels", default=None, type=_levels_arg, help="comma-separated levels (default: 0..d-1)")
    p.add_argument("--n-per-level", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--prompt-length", type=int, default=0,
                   help="the first positions of each row are a prompt: always visible, never scored (default 0)")
    p.add_argument("--response-length", type=int, default=None,
                   help="positions after prompt+response stay masked (a block; default: the rest of the row)")
    p.add_argument("--max-batch", type=int, default=64)
    p.add_argument("--out", default=None, help="JSON file written by rank 0 (default: stdout)")
    args = parser.parse_args(argv)
    try:
        return _profile_job(args)
    except (ValueError, FileNotFoundError) as exc:  # bad input: one line, exit status 2
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2


def _profile_job(args) -> int:
    if args.out and not os.path.isdir(os.path.dirname(os.path.abspath(args.out))):
        raise ValueError(f"--out: the folder of {args.out!r} does not exist; create it first")
    with group_from_env() as w:
        device = f"cuda:{torch.cuda.current_device()}" if torch.cuda.is_available() else "cpu"
        vocab = None if args.vocab_file is None else read_npy(args.vocab_file, "--vocab-file", ndim=1)
        samples = read_npy(args.samples, "--samples", ndim=2)
        model = from_pretrained(
            args.hf, mask_id=args.mask_id, vocab=vocab, shift=args.shift,
            trust_remote_code=args.trust_remote_code, max_batch=args.max_batch, device=device,
        )
        result = run_profile(model, samples, levels=args.levels, n_per_level=args.n_per_level, seed=args.seed,
                             prompt_length=args.prompt_length, response_length=args.response_length)
    if w.rank == 0:
        text = json.dumps(result)
        if args.out:
            with open(args.out, "w") as fh:
                fh.write(text + "\n")
        else:
            print(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
