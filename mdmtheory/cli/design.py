"""``mdmtheory design DATA``: the optimal schedule for a data file (or a model), exported.

DATA is a text file (one sequence per line: integer tokens separated by spaces, or
characters with ``--chars``) or a ``.npy`` integer array (n, d). Small empirical laws are
used exactly (the output says so); otherwise, or with ``--model``, the cross-entropy profile
is estimated with confidence intervals (mdmtheory.design).

``--certify EPS`` (instead of ``--steps``/``--budget``): W26's certified schedule
(mdmtheory.certificate.certify_data) — a step count N and a Bernoulli grid t_0 … t_N whose
KL is ≤ EPS with probability ≥ ``--confidence``. From DATA alone it is about sampling the
empirical law; with ``--model`` about the model's own law (the output says which).
"""

from __future__ import annotations

import argparse

from .. import exports
from ..design import EXACT_LIMIT, design
from ._common import UsageError, options_for
from ._inputs import read_tokens
from ._models import load_model
from .estimate import check_draws, check_seed, read_model_data

#: Library argument names -> the options (or DATA) that gave them.
_OPTIONS = {"steps": "--steps", "budget": "--budget", "n_per_level": "--n-per-level", "seed": "--seed",
            "exact_limit": "--exact-limit", "samples": "DATA", "x": "DATA", "model": "--model", "eps": "--certify",
            "confidence": "--confidence", "K": "DATA"}

HELP = "optimal schedule for a data file or a model, exported for LLaDA/Dream/MDLM/dllm"
EXAMPLE = "mdmtheory design words.txt --chars --steps 3 --format llada"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", metavar="DATA", help="text file (one sequence per line) or .npy (n, d) integer array")
    parser.add_argument("--model", metavar="CKPT", help="an mdmtheory checkpoint (.safetensors) or a shipped name (words, markov)")
    g = parser.add_mutually_exclusive_group(required=True)
    g.add_argument("--steps", type=int, metavar="T", help="number of steps, 1 <= T <= d")
    g.add_argument("--budget", type=float, metavar="EPS", help="path-KL budget in nats (> 0): the fewest steps within it")
    g.add_argument("--certify", type=float, metavar="EPS",
                   help="certified grid (W26 Thm 2): KL <= EPS nats (> 0) with probability >= --confidence")
    parser.add_argument("--confidence", type=float, default=None,
                        help="--certify: probability in (0, 1) that the bound holds (default 0.95)")
    parser.add_argument("--format", default="json", choices=exports.FORMATS, help="export convention (default json)")
    parser.add_argument("--block-length", type=int, default=None, help="LLaDA block length (divides d; the schedule must fit its blocks "
                        "with steps/num_blocks steps each, else refused; default d)")
    parser.add_argument("--chars", action="store_true",
                        help="DATA lines are characters, one token each (with --model: the checkpoint's alphabet)")
    parser.add_argument("--n-per-level", type=int, default=1000,
                        help="estimator draws per level (default 1000; 2 to 10,000,000)")
    parser.add_argument("--seed", type=int, default=0, help="estimator seed (default 0)")
    parser.add_argument("--exact-limit", type=int, default=EXACT_LIMIT,
                        help=f"largest K^d used exactly (default {EXACT_LIMIT})")


def run(args) -> dict:
    if args.block_length is not None and args.format != "llada":
        raise UsageError("--block-length: only with --format llada")
    if args.certify is not None:
        if not args.certify > 0:  # also refuses nan
            raise UsageError(f"--certify: expected EPS > 0 nats, got {args.certify}")
        if args.confidence is not None and not 0 < args.confidence < 1:
            raise UsageError(f"--confidence: expected a probability in (0, 1), e.g. 0.95, got {args.confidence}")
        if args.format != "json":
            raise UsageError("--format: --certify gives a Bernoulli time grid (JSON \"times\"); use --format json")
    elif args.confidence is not None:
        raise UsageError("--confidence: only with --certify")
    kw = {"block_length": args.block_length} if args.format == "llada" else {}
    check_draws("--n-per-level", args.n_per_level)
    check_seed(args.seed)
    if not 1 <= args.exact_limit <= EXACT_LIMIT:
        raise UsageError(f"--exact-limit: expected a number of cells in 1..{EXACT_LIMIT:,} (the dense limit), "
                         f"got {args.exact_limit}")
    model, K = None, None
    if args.model is not None:
        loaded = load_model(args.model, "--model")
        if loaded.kind == "hf":
            raise UsageError(f"--model: {args.model!r} is a Hugging Face folder; design takes a mdmtheory checkpoint "
                             "(estimate a folder's profile with 'mdmtheory estimate', then 'mdmtheory schedule --profile')")
        model, K = loaded.module, loaded.K
        x = read_model_data(args.data, "DATA", loaded, chars=args.chars)
    else:
        x, _ = read_tokens(args.data, "DATA", chars=args.chars)
    if args.certify is not None:
        return _certify(args, x, K, model)
    if args.steps is not None and not 1 <= args.steps <= x.shape[1]:
        raise UsageError(f"--steps: expected 1 <= T <= d={x.shape[1]}, got {args.steps}")
    if args.budget is not None and not args.budget > 0:
        raise UsageError(f"--budget: expected EPS > 0 nats, got {args.budget}")
    with options_for(_OPTIONS):
        res = design(x, K=K, model=model, steps=args.steps, budget=args.budget, exact_limit=args.exact_limit,
                     n_per_level=args.n_per_level, seed=args.seed)
    out = {
        "method": res.method,
        "note": res.note,
        "n": res.n,
        "d": res.d,
        "K": res.K,
        "steps": res.steps,
        "sizes": list(res.sizes),
        "budget": res.budget,
        "path_kl": res.path_kl,
        "path_kl_ci": list(res.ci) if res.ci else None,
        "path_cross_entropy": res.path_cross_entropy,
        "path_cross_entropy_ci": list(res.ci_cross_entropy) if res.ci_cross_entropy else None,
        "profile": res.profile.values.tolist(),
        "profile_stderr": None if res.stderr is None else res.stderr.tolist(),
        "export": exports.export(res.schedule, args.format, **kw),
        "memorized": res.memorized,
        "warning": res.warning,
        "memorization": None if res.memorization is None else res.memorization.to_dict(),
    }
    return out


def _certify(args, x, K, model) -> dict:
    from ..certificate import certify_data

    if x.shape[0] < 2:
        raise UsageError(f"DATA: --certify needs at least 2 sequences, got {x.shape[0]}")
    conf = 0.95 if args.confidence is None else args.confidence
    with options_for(_OPTIONS):
        cert, note = certify_data(x, args.certify, K=K, model=model, confidence=conf, seed=args.seed)
    out = {"method": "certificate", "law": "empirical" if model is None else "model", "note": note,
           "d": int(x.shape[1]), "K": int(K if K is not None else max(int(x.max()) + 1, 2))}
    out.update(cert.to_dict())
    return out


def render(r: dict) -> str:
    if r["method"] == "certificate":
        t0, T = r["interval"]
        return "\n".join([
            f"mdmtheory design: {r['note']}",
            f"n = {r['n']} sequences, d = {r['d']}, K = {r['K']}",
            f"certified: {r['steps']} steps, KL <= {r['bound']:.4g} nats (<= eps = {r['eps']:g}) "
            f"with probability >= {r['confidence']:g}",
            f"estimated complexity C = {r['complexity']:.4f}, upper bound {r['complexity_upper']:.4f} "
            f"(Q = {r['estimate']:.4f} +- {r['stderr']:.4f}, B = {r['upper']:.4f})",
            f"Bernoulli grid Geo on [{t0:.4g}, {T:.4g}], exact draws outside; times (--json): "
            + " ".join(f"{t:.4g}" for t in r["times"][:8]) + (" ..." if len(r["times"]) > 8 else ""),
        ])
    lines = [f"mdmtheory design: {r['note']}", f"n = {r['n']} sequences, d = {r['d']}, K = {r['K']}"]
    if r.get("warning"):
        lines.append(f"WARNING: {r['warning']}")
    prof = " ".join(f"{v:.4f}" for v in r["profile"])
    lines.append(("exact profile" if r["method"] == "exact" else "estimated cross-entropy profile") + f" (nats): {prof}")
    if r["budget"] is not None:
        lines.append(f"budget {r['budget']:g} nats: fewest steps = {r['steps']}")
    lines.append(("schedule of the memorized empirical law (not a design for the data's source)" if r.get("memorized")
                  else "optimal schedule") + f", T = {r['steps']}: sizes {r['sizes']}")
    if r["method"] == "exact":
        lines.append(f"path KL (exact, on the empirical law): {r['path_kl']:.6f} nats")
    else:
        lo, hi = r["path_kl_ci"]
        lines.append(f"path KL (Riemann defect of the model's profile): {r['path_kl']:.4f} nats, 95% CI [{lo:.4f}, {hi:.4f}]")
        lo, hi = r["path_cross_entropy_ci"]
        lines.append(f"path cross-entropy: {r['path_cross_entropy']:.4f} nats/sequence, 95% CI [{lo:.4f}, {hi:.4f}]")
    e = r["export"]
    lines.append(f"export ({e['format']}):")
    lines += [f"  {k}: {v}" for k, v in e.items() if k != "format"]
    return "\n".join(lines)
