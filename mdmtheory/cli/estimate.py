"""``mdmtheory estimate``: Monte Carlo estimates on a real model (the bridge), with CIs.

Loads ``--model`` (a mdmtheory checkpoint, a shipped name, or a local Hugging Face folder —
never downloaded), reads the token rows of ``--data`` (or ``--text``/``--jsonl``), and calls the public bridge estimators:
``bridge.estimate_profile`` (the cross-entropy profile c(m) with standard errors) and, for a
plan, ``bridge.estimate_path_cross_entropy`` (Σ_t k_t c(s_t), nats per sequence). Runs under
``torchrun`` too (``torchrun --nproc_per_node N -m mdmtheory estimate ...``): the process
group is initialized from torchrun's environment, the estimators shard their draws by rank
and all-reduce their sufficient statistics, and rank 0 alone prints (and writes ``--csv``)
the result, which equals the one-process result for the same seed.
"""

from __future__ import annotations

import argparse
import csv

import numpy as np

from ._common import check_output, options_for, UsageError
from ._inputs import check_draws, check_seed, int_list, MAX_DRAWS

HELP = "Monte Carlo cross-entropy profile (and path cross-entropy of a plan) of a model on token data"
EXAMPLE = "mdmtheory estimate --model model.safetensors --data words.txt --n-per-level 500 --csv c.csv"


def _bridge():
    try:
        from .. import bridge
    except ImportError as exc:
        raise UsageError(f"--model: the bridge needs torch: pip install 'mdmtheory[bridge]' ({exc})") from None
    return bridge


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ._inputs import DATA_HELP
    from ._models import add_model_arguments

    add_model_arguments(parser, extra=" (required)")
    parser.add_argument("--data", metavar="FILE",
                        help=f"{DATA_HELP}: outcome indices 0..K-1 of the model (its alphabet's characters with --chars)")
    parser.add_argument("--chars", action="store_true",
                        help="--data is text whose characters are tokens, read through the model's alphabet")
    parser.add_argument("--levels", type=int_list, metavar="M1,M2,...", help="revealed counts m (default 0..d-1)")
    parser.add_argument("--n-per-level", type=int, default=1000,
                        help=f"Monte Carlo draws per level (default 1000; 2 to {MAX_DRAWS:,})")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--sizes", type=int_list, metavar="K1,K2,...",
                        help="also estimate the path cross-entropy of this schedule")
    parser.add_argument("--n-path", type=int, default=1000,
                        help=f"draws for the path cross-entropy (default 1000; 2 to {MAX_DRAWS:,})")
    parser.add_argument("--csv", metavar="OUT.csv", help="write the profile as CSV (m,c,stderr): input of 'schedule'")
    parser.add_argument("--overwrite", action="store_true", help="--csv: replace an existing file (else refused)")
    parser.add_argument("--prompt-length", type=int, metavar="G", default=None,
                        help="the first G positions of every row are the prompt: always visible, never scored "
                             "(--jsonl: the prompt tokens kept, its last G)")
    from ._text import add_text_arguments

    add_text_arguments(parser)


def run(args) -> dict | None:
    if args.model is None:  # not required by argparse: the old spelling --checkpoint gives it too
        raise UsageError("--model: give the model to estimate on (a checkpoint, a shipped name or a Hugging Face folder)")
    for opt, v in (("--n-per-level", args.n_per_level), ("--n-path", args.n_path)):
        check_draws(opt, v)
    check_seed(args.seed)
    if args.overwrite and args.csv is None:
        raise UsageError("--overwrite: only with --csv (the one file estimate writes)")
    csv_path = None if args.csv is None else check_output(args.csv, "--csv", overwrite=args.overwrite)
    from ._text import no_text_options, read_rows, text_given

    if text_given(args):
        if args.data is not None:
            raise UsageError("--data: give one of --data, --text and --jsonl")
        if args.chars:
            raise UsageError("--chars: only with --data (--text/--jsonl are read with --tokenizer)")
    elif args.data is None:
        raise UsageError("--data: give a token file, or --text FILE / --jsonl FILE with --tokenizer DIR")
    else:
        no_text_options(args, args.model)
    if args.prompt_length is not None and args.prompt_length < 0:
        raise UsageError(f"--prompt-length: expected a number of prompt tokens >= 0, got {args.prompt_length}")
    samples, _, g, model, facts = read_rows(args, "data", "--data", args.model, "--model")
    d = samples.shape[1] - g  # levels and sizes are of the response
    if args.levels is not None and (not args.levels or len(set(args.levels)) != len(args.levels)
                                    or min(args.levels) < 0 or max(args.levels) >= d):
        raise UsageError(f"--levels: expected distinct revealed counts in 0..{d - 1} (rows have {d} response "
                         f"tokens), got {','.join(map(str, args.levels))}")
    if args.sizes is not None and (not args.sizes or min(args.sizes) < 1 or sum(args.sizes) != d):
        raise UsageError(f"--sizes: expected positive step sizes summing to {d} (the rows' response length), "
                         f"got {','.join(map(str, args.sizes))}")
    kw = {"prompt_length": g} if g else {}
    bridge = _bridge()
    masked = model.masked()
    with bridge.distributed.group_from_env() as world:  # a no-op outside torchrun; closed on every rank
        names = {"n_per_level": "--n-per-level", "n": "--n-path", "levels": "--levels", "seed": "--seed",
                 "samples": "--data", "schedule": "--sizes", "plan": "--sizes", "sizes": "--sizes"}
        with options_for(names):
            est = bridge.estimate_profile(masked, samples, levels=args.levels, n_per_level=args.n_per_level,
                                          seed=args.seed, **kw)
        levels = np.asarray(est.levels).tolist()
        values = np.asarray(est.values, dtype=np.float64).tolist()
        stderr = np.asarray(est.stderr, dtype=np.float64).tolist()
        out = {"checkpoint": args.model, "data": args.data or args.text or args.jsonl, "n": int(samples.shape[0]),
               "d": int(samples.shape[1]), "prompt_length": g,
               "levels": levels, "values": values, "stderr": stderr, "forwards": int(getattr(est, "forwards", 0) or 0),
               "path": None}
        if args.sizes is not None:
            from ..schedules.plans import Schedule

            with options_for(names):
                r = bridge.estimate_path_cross_entropy(masked, samples, Schedule(args.sizes), n=args.n_path,
                                                       seed=args.seed, **kw)
            out["path"] = {"sizes": list(args.sizes), "value": float(r.value), "stderr": float(r.stderr),
                           "forwards": int(getattr(r, "forwards", 0) or 0)}
    if world.rank != 0:
        return None  # under torchrun, rank 0 alone reports
    out["world_size"] = world.size
    out.update(facts)
    if csv_path is not None:
        with csv_path.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["m", "c", "stderr"])
            w.writerows([m, repr(v), repr(s)] for m, v, s in zip(levels, values, stderr))
        out["csv"] = args.csv
    return out


def render(result: dict) -> str:
    from ._text import facts_lines

    g = result.get("prompt_length") or 0
    lines = [f"{result['checkpoint']} on {result['data']} (n = {result['n']}, d = {result['d']}"
             + (f", prompt {g} tokens: m counts revealed response tokens" if g else "") + "); "
             "cross-entropy profile c(m), nats per token, 95% CI", *facts_lines(result),
             f"{'m':>4}  {'c(m)':>10}  {'95% CI':>23}"]
    for m, v, s in zip(result["levels"], result["values"], result["stderr"]):
        lines.append(f"{m:>4}  {v:10.5f}  [{v - 1.96 * s:10.5f}, {v + 1.96 * s:10.5f}]")
    if result["path"]:
        p = result["path"]
        lines.append(f"path cross-entropy of {p['sizes']}: {p['value']:.5f} ± {1.96 * p['stderr']:.5f} nats per sequence")
    lines.append(f"model forwards: {result['forwards']}")
    if "csv" in result:
        lines.append(f"wrote {result['csv']}")
    return "\n".join(lines)
