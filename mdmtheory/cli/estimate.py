"""``mdmtheory estimate``: Monte Carlo estimates on a real model (the bridge), with CIs.

Loads a checkpoint (a mdmtheory checkpoint, or a local Hugging Face folder — never
downloaded), reads token sequences, and calls the public bridge estimators:
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
from pathlib import Path

import numpy as np

from ._common import UsageError
from ._inputs import int_list, read_tokens

HELP = "Monte Carlo cross-entropy profile (and path cross-entropy of a plan) of a checkpoint on token data"
EXAMPLE = "mdmtheory estimate --checkpoint model.safetensors --data words.txt --n-per-level 500 --csv c.csv"


def _bridge():
    try:
        from .. import bridge
    except ImportError as exc:
        raise UsageError(f"the bridge needs torch: pip install 'mdmtheory[bridge]' ({exc})") from None
    return bridge


def load_model(path: str, *, mask_id: int | None = None, shift: bool = False, trust_remote_code: bool = False):
    """A MaskedModel from a shipped name (``words``, ``markov``), a mdmtheory checkpoint file,
    or a local Hugging Face folder."""
    bridge = _bridge()
    from ..bridge.tiny import PRETRAINED, load_checkpoint, load_pretrained

    p = Path(path)
    if not p.exists() and path in PRETRAINED:
        return bridge.as_masked_model(load_pretrained(path))
    if not p.exists():
        raise UsageError(f"--checkpoint: no such file or folder {path!r} (or a shipped name: {', '.join(PRETRAINED)})")
    if p.is_dir() and (p / "config.json").is_file():
        return bridge.from_pretrained(str(p), mask_id=mask_id, shift=shift, trust_remote_code=trust_remote_code)
    return bridge.as_masked_model(load_checkpoint(str(p)))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--checkpoint", required=True, metavar="PATH",
                        help="mdmtheory checkpoint, shipped name (words, markov), or local Hugging Face folder (never downloaded)")
    parser.add_argument("--data", required=True, metavar="FILE",
                        help="token sequences (outcome indices 0..K-1): .npy (n, d) or text, one per line")
    parser.add_argument("--levels", type=int_list, metavar="M1,M2,...", help="revealed counts m (default 0..d-1)")
    parser.add_argument("--n-per-level", type=int, default=1000, help="Monte Carlo draws per level (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--sizes", type=int_list, metavar="K1,K2,...",
                        help="also estimate the path cross-entropy of this schedule")
    parser.add_argument("--n-path", type=int, default=1000, help="draws for the path cross-entropy (default 1000)")
    parser.add_argument("--mask-id", type=int, help="mask token id (Hugging Face folders without one)")
    parser.add_argument("--shift", action="store_true", help="logits shifted right by one (Dream)")
    parser.add_argument("--trust-remote-code", action="store_true", help="allow a local folder's own model code")
    parser.add_argument("--csv", metavar="OUT.csv", help="write the profile as CSV (m,c,stderr): input of 'schedule'")


def run(args) -> dict | None:
    for opt, v in (("--n-per-level", args.n_per_level), ("--n-path", args.n_path)):
        if v < 1:
            raise UsageError(f"{opt}: expected a positive integer, got {v}")
    samples = read_tokens(args.data, "--data")
    model = load_model(args.checkpoint, mask_id=args.mask_id, shift=args.shift,
                       trust_remote_code=args.trust_remote_code)
    bridge = _bridge()
    rank = bridge.distributed.init_from_env().rank  # a no-op outside torchrun
    est = bridge.estimate_profile(model, samples, levels=args.levels, n_per_level=args.n_per_level, seed=args.seed)
    levels = np.asarray(est.levels).tolist()
    values = np.asarray(est.values, dtype=np.float64).tolist()
    stderr = np.asarray(est.stderr, dtype=np.float64).tolist()
    out = {"checkpoint": args.checkpoint, "data": args.data, "n": int(samples.shape[0]), "d": int(samples.shape[1]),
           "levels": levels, "values": values, "stderr": stderr, "forwards": int(getattr(est, "forwards", 0) or 0),
           "path": None}
    if args.sizes is not None:
        from ..schedules import Schedule

        r = bridge.estimate_path_cross_entropy(model, samples, Schedule(args.sizes), n=args.n_path, seed=args.seed)
        out["path"] = {"sizes": list(args.sizes), "value": float(r.value), "stderr": float(r.stderr),
                       "forwards": int(getattr(r, "forwards", 0) or 0)}
    if rank != 0:
        return None  # under torchrun, rank 0 alone reports
    out["world_size"] = bridge.distributed.world().size
    if args.csv:
        with Path(args.csv).open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["m", "c", "stderr"])
            w.writerows([m, repr(v), repr(s)] for m, v, s in zip(levels, values, stderr))
        out["csv"] = args.csv
    return out


def render(result: dict) -> str:
    lines = [f"{result['checkpoint']} on {result['data']} (n = {result['n']}, d = {result['d']}); "
             "cross-entropy profile c(m), nats per token, 95% CI",
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
