"""``mdmtheory design --data FILE``: the optimal schedule for a data file (or a model), exported.

``--data`` (the positional DATA of earlier releases still works, with a note on stderr) is
a text file (one sequence per line: integer tokens separated by spaces, or characters with
``--chars``) or a ``.npy`` integer array (n, d). Small empirical laws are used exactly (the
output says so); otherwise, or with ``--model``, the cross-entropy profile is estimated with
confidence intervals (mdmtheory.design).

Text with the user's tokenizer instead of ``--data``: ``--text FILE`` (one sequence per line) or
``--jsonl FILE`` (prompt/response pairs) with ``--tokenizer DIR`` (:mod:`mdmtheory.cli._text`).
``--prompt-length G``: the first G positions of every row are the prompt (always visible);
the design is for the response.

**Blocks** (``--forwards F``, or ``--budget EPS`` with ``--block-length B1,B2,...``): the
semi-autoregressive design of :mod:`mdmtheory.optimal.blocks` — for each candidate block
length, the forwards and the (exact or estimated, with CI) path KL, and the pick; with
``--budget`` the fewest forwards within EPS. With ``--steps T``, one ``--block-length B`` is
the block length of the ``--format llada`` export. ``--format diffusers`` exports it for
diffusers' ``LLaDA2Pipeline`` (``--scheduler-out DIR`` writes the scheduler's config, read
back by ``mdmtheory.exports.diffusers.load_scheduler``); ``--format llada`` for LLaDA's
``generate`` (``mdmtheory.exports.llada.patch``).

``--certify EPS`` (instead of ``--steps``/``--budget``): W26's certified schedule
(mdmtheory.design.certify_data) — a step count N and a Bernoulli grid t_0 … t_N whose
KL is ≤ EPS with probability ≥ ``--confidence``. From ``--data`` alone it is about sampling the
empirical law; with ``--model`` about the model's own law (the output says which).
"""

from __future__ import annotations

import argparse

from ._common import check_folder_output, EXACT_LIMIT, EXPORT_FORMATS, note, options_for, say_renamed, UsageError
from ._inputs import check_draws, check_seed, DATA_HELP, int_list
from ._models import add_model_arguments
from ._text import add_text_arguments, facts_lines, no_text_options, read_rows, text_given

#: Export formats of ``design``: the sampler conventions of mdmtheory.exports, diffusers, and the
#: serving engines (SGLang: only the schedules a threshold reproduces; vLLM: the forward budget).
FORMATS = EXPORT_FORMATS + ("diffusers", "sglang", "vllm")
#: Formats with blocks (the others are one-block samplers: MDLM, Dream, dllm).
BLOCK_FORMATS = ("json", "llada", "diffusers", "sglang", "vllm")

#: Library argument names -> the options that gave them.
_OPTIONS = {"steps": "--steps", "budget": "--budget", "target_kl": "--budget", "n_per_level": "--n-per-level",
            "seed": "--seed",
            "exact_limit": "--exact-limit", "samples": "--data", "x": "--data", "model": "--model", "eps": "--certify",
            "confidence": "--confidence", "K": "--data", "forwards": "--forwards", "block_lengths": "--block-length",
            "block_length": "--block-length", "prompt_length": "--prompt-length"}
_BLOCK_OPTIONS = _OPTIONS


def _names(args) -> dict:
    """:data:`_OPTIONS` with the data's library names (samples, K) as the option that gave the
    rows (``--text``/``--jsonl`` rows are refused as those, not as ``--data``)."""
    rows = "--text" if getattr(args, "text", None) else "--jsonl" if getattr(args, "jsonl", None) else "--data"
    return dict(_OPTIONS, samples=rows, x=rows, K=rows)

HELP = "optimal schedule for a data file or a model, exported for LLaDA/Dream/MDLM/dllm/diffusers/SGLang/vLLM"
EXAMPLE = "mdmtheory design --data words.txt --chars --steps 3 --format llada"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", metavar="FILE", help=f"{DATA_HELP}; or give --text/--jsonl with --tokenizer")
    parser.add_argument("old_data", metavar="DATA", nargs="?", help=argparse.SUPPRESS)  # the old positional DATA
    add_model_arguments(parser, extra="; without it the design is for the data's empirical law")
    g = parser.add_mutually_exclusive_group(required=True)
    g.add_argument("--steps", type=int, metavar="T", help="number of steps, 1 <= T <= d")
    g.add_argument("--forwards", type=int, metavar="F",
                   help="block design: F forwards in all (F/num_blocks per block), least path KL over --block-length")
    g.add_argument("--budget", type=float, metavar="EPS", help="path-KL budget in nats (> 0): the fewest steps "
                   "(with --block-length: forwards) within it")
    g.add_argument("--certify", type=float, metavar="EPS",
                   help="certified grid (W26 Thm 2): KL <= EPS nats (> 0) with probability >= --confidence")
    parser.add_argument("--confidence", type=float, default=None,
                        help="--certify: probability in (0, 1) that the bound holds (default 0.95)")
    parser.add_argument("--prompt-length", type=int, metavar="G", default=None,
                        help="the first G positions of every row are the prompt (always visible; --jsonl: the prompt "
                             "tokens kept, its last G)")
    parser.add_argument("--block-length", type=int_list, metavar="B1,B2,...",
                        help="block length(s), each dividing the response length: with --forwards or --budget the "
                             "candidates of a block design (default with --forwards: every divisor); with --steps "
                             "and --format llada or sglang one B, the export's blocks (steps/num_blocks steps each, else refused)")
    from ._common import renamed

    renamed(parser, "--block-lengths", "--block-length", type=int_list, metavar="B1,B2,...")
    parser.add_argument("--format", default="json", choices=FORMATS,
                        help="export convention (default json); sglang: only designs SGLang's threshold runs, one "
                             "token per step or one step per block (others refused before estimating); vllm: the "
                             "forward budget only (vLLM takes no per-step counts: exact false)")
    parser.add_argument("--scheduler-out", metavar="DIR",
                        help="--format diffusers: write the scheduler config there (a new or empty folder), for "
                             "mdmtheory.exports.diffusers.load_scheduler(DIR)")
    parser.add_argument("--overwrite", action="store_true",
                        help="--scheduler-out: replace the scheduler_config.json of an earlier run (else refused)")
    parser.add_argument("--chars", action="store_true",
                        help="--data lines are characters, one token each (with --model: the model's alphabet)")
    parser.add_argument("--n-per-level", type=int, default=1000,
                        help="estimator draws per level (default 1000; 2 to 10,000,000)")
    parser.add_argument("--seed", type=int, default=0, help="estimator seed (default 0)")
    parser.add_argument("--exact-limit", type=int, default=EXACT_LIMIT,
                        help=f"largest K^d used exactly (default {EXACT_LIMIT})")
    add_text_arguments(parser)


def _sglang_before_estimating(args, r: int, blocks: bool) -> None:
    """``--format sglang``: refused before any estimate unless the design is one SGLang runs,
    naming the ``--steps``/``--forwards`` that would work (issue 39 item 3: the refusal came
    after an 11-minute estimate). SGLang 0.5.23 commits by a confidence threshold
    (``LowConfidence``, docs/pipelines.md "Serving engines"), so within a block of B tokens it
    runs one token per step (S = B: F = r forwards in all over a response of r tokens) or one
    step (S = 1: F = r / B). A block design with F forwards is constrained to the block length
    B = r / F for the second (said in a note)."""
    if args.format != "sglang":
        return
    fix = (f"SGLang 0.5.23 commits by a confidence threshold, so it runs a design only with one token per step or "
           f"one step per block: give --steps {r} (one token per step) or --steps 1 (the response of {r} tokens in one "
           f"step), or --forwards F with --block-length {r}/F; or another --format (json, llada, diffusers carry "
           "per-step counts); nothing was estimated")
    if not blocks:
        if args.steps is None:
            raise UsageError(f"--budget: with --format sglang the fewest steps are known only after estimating; {fix}")
        if args.steps not in (1, r):
            raise UsageError(f"--format sglang: --steps {args.steps} on a response of {r} tokens: {fix}")
        return
    if args.forwards is None:
        raise UsageError(f"--budget: with --format sglang the fewest forwards are known only after estimating; {fix}")
    F = args.forwards
    if F == r:  # one token per step in every candidate block length
        return
    cands = args.block_length if args.block_length is not None else [B for B in range(1, r + 1) if r % B == 0]
    ok = [B for B in cands if B * F == r]
    if not ok:
        works = [f"--forwards {r // B} --block-length {B}" for B in cands if r % B == 0][:4]
        raise UsageError(f"--format sglang: --forwards {F} runs in SGLang only as one step per block of "
                         f"{r}/{F} tokens" + ("" if r % F == 0 else f" ({r} is not a multiple of {F})")
                         + f" or with --forwards {r} (one token per step); it would work with "
                         + ", ".join(works) + f" or --forwards {r}; nothing was estimated")
    if list(cands) != ok:
        note(f"mdmtheory design: note: --format sglang: the block design is constrained to --block-length {ok[0]} "
             f"(one step per block: SGLang's threshold runs it); --forwards {r} would allow one token per step in any "
             "block length")
        args.block_length = ok


def _check_flags(args) -> bool:
    """Option combinations, before any file is read; returns whether this is a block design."""
    if args.old_data is not None:
        if args.data is not None:
            raise UsageError(f"--data: give the token file once (got --data {args.data!r} and DATA {args.old_data!r})")
        say_renamed("DATA (positional)", "--data DATA")
        args.data = args.old_data
    blocks = args.forwards is not None or (args.block_length is not None and args.budget is not None)
    if args.block_length is not None and not blocks:
        if args.certify is not None:
            raise UsageError("--block-length: --certify certifies one block (W26 Thm 2); drop --block-length")
        if args.format not in ("llada", "sglang"):
            raise UsageError("--block-length: with --steps only for --format llada or sglang (the export's block "
                             "length); a block design takes --forwards F or --budget EPS")
        if len(args.block_length) != 1:
            raise UsageError(f"--block-length: with --steps give one block length (the {args.format} export's); "
                             "candidates go with --forwards F or --budget EPS")
    if blocks and args.format not in BLOCK_FORMATS:
        raise UsageError(f"--format: {args.format} samples the whole response in one block; a block design exports "
                         f"as {', '.join(BLOCK_FORMATS)}")
    if args.scheduler_out is not None and args.format != "diffusers":
        raise UsageError("--scheduler-out: only with --format diffusers")
    if args.overwrite and args.scheduler_out is None:
        raise UsageError("--overwrite: only with --scheduler-out (the one file design writes)")
    if args.certify is not None:
        if not args.certify > 0:  # also refuses nan
            raise UsageError(f"--certify: expected EPS > 0 nats, got {args.certify}")
        if args.confidence is not None and not 0 < args.confidence < 1:
            raise UsageError(f"--confidence: expected a probability in (0, 1), e.g. 0.95, got {args.confidence}")
        if args.format != "json":
            raise UsageError("--format: --certify gives a Bernoulli time grid (JSON \"times\"); use --format json")
        if args.prompt_length:
            raise UsageError("--prompt-length: --certify certifies unconditional sampling; drop the prompt")
    elif args.confidence is not None:
        raise UsageError("--confidence: only with --certify (estimated designs report 95% CIs)")
    if args.budget is not None and not args.budget > 0:
        raise UsageError(f"--budget: expected EPS > 0 nats, got {args.budget}")
    if args.forwards is not None and args.forwards < 1:
        raise UsageError(f"--forwards: expected a number of forwards >= 1, got {args.forwards}")
    if args.prompt_length is not None and args.prompt_length < 0:
        raise UsageError(f"--prompt-length: expected a number of prompt tokens >= 0, got {args.prompt_length}")
    check_draws("--n-per-level", args.n_per_level)
    check_seed(args.seed)
    if not 1 <= args.exact_limit <= EXACT_LIMIT:
        raise UsageError(f"--exact-limit: expected a number of cells in 1..{EXACT_LIMIT:,} (the dense limit), "
                         f"got {args.exact_limit}")
    if text_given(args):
        if args.data is not None:
            raise UsageError(f"--data: give one of --data, --text and --jsonl (got --data {args.data!r} and "
                             f"{'--text' if args.text else '--jsonl'})")
        if args.chars:
            raise UsageError("--chars: only for a token file (--text/--jsonl are read with --tokenizer)")
    else:
        if args.data is None:
            raise UsageError("--data: give a token file, or --text FILE / --jsonl FILE with --tokenizer DIR")
        no_text_options(args, args.model)
    if args.model is None:
        for flag, v in (("--mask-id", args.mask_id is not None), ("--shift", args.shift),
                        ("--trust-remote-code", args.trust_remote_code)):
            if v:
                raise UsageError(f"{flag}: only with --model (a Hugging Face folder)")
    _check_response_length(args, blocks)
    return blocks


def _check_response_length(args, blocks: bool) -> None:
    """What the arguments alone decide once the response length n is an option (``--jsonl``'s
    ``--response-length``, ``--text``'s ``--length`` minus ``--prompt-length``): refused before
    any file is read, any model loaded or any profile estimated (issue 38 item G). A block
    length must divide n, the forwards are at most n and must split evenly over the blocks of
    some candidate block length, and ``--steps`` is at most n."""
    if getattr(args, "jsonl", None) is not None:
        n = getattr(args, "response_length", None)
    elif getattr(args, "text", None) is not None and getattr(args, "length", None) is not None:
        n = args.length - (args.prompt_length or 0)
    else:
        return  # n is known only once the token file is read (cheap, before any model)
    if n is None or n < 1:
        return  # the text options refuse it with their own message
    for B in args.block_length or ():
        if not 1 <= B <= n or n % B:
            raise UsageError(f"--block-length: must divide the response length {n} "
                             f"(divisors: {[b for b in range(1, n + 1) if n % b == 0]}), got {B}")
    if blocks and args.forwards is not None:
        if args.forwards > n:
            raise UsageError(f"--forwards: at most the response length {n} (one token per forward), got {args.forwards}")
        Bs = args.block_length or [b for b in range(1, n + 1) if n % b == 0]
        if not any(args.forwards % (n // B) == 0 for B in Bs):
            raise UsageError(f"--forwards: {args.forwards} forwards split evenly over the blocks of no candidate block "
                             f"length ({', '.join(f'B={B}: {n // B} blocks' for B in Bs)}); give a multiple of the "
                             f"number of blocks")
    if not blocks and args.certify is None and args.steps is not None and not 1 <= args.steps <= n:
        raise UsageError(f"--steps: expected 1 <= T <= {n} (the response length), got {args.steps}")


def run(args) -> dict:
    # the wings are imported here, not at the top: ``design --help`` imports none (issue 39 item 7)
    from ..design.blocks import FORMAT_VIEWS, separation
    from ..design.from_data import design_blocks_from_data, design
    from ..exports import formats as exports

    blocks = _check_flags(args)
    out_dir = None if args.scheduler_out is None else check_folder_output(
        args.scheduler_out, "--scheduler-out", keep=("scheduler_config.json",), overwrite=args.overwrite)
    x, K, g, loaded, facts = read_rows(args, "data", "--data", args.model, "--model")
    model = None if loaded is None else (loaded.module if loaded.kind != "hf" and loaded.vocab is None
                                         else loaded.masked())
    if args.certify is not None:
        r = _certify(args, x, K, model)
        r.update(facts)
        return r
    conf = 0.95
    r_len = x.shape[1] - g
    _sglang_before_estimating(args, r_len, blocks)
    if blocks:
        with options_for(_names(args)):
            res = design_blocks_from_data(x, K=K, model=model, forwards=args.forwards, target_kl=args.budget,
                               block_lengths=args.block_length, prompt_length=g, exact_limit=args.exact_limit,
                               n_per_level=args.n_per_level, seed=args.seed, confidence=conf,
                               view=FORMAT_VIEWS.get(args.format, "masked"))  # the view the --format's loop runs
        best = res.best
        out = {"method": res.method, "note": res.note, "design": "blocks", "n": int(x.shape[0]), "d": int(x.shape[1]),
               "K": int(K if K is not None else max(int(x.max()) + 1, 2)), "prompt_length": g,
               "response_length": r_len, "forwards_asked": args.forwards, "budget": args.budget, "view": res.view,
               "rising": list(res.rising),
               "candidates": [c.to_dict() for c in res.candidates], "best": best.to_dict(),
               "separation": separation(res.candidates, best, args.n_per_level)}
        export = _export_blocks(args, best.counts, best.block_length, g)
    else:
        if args.steps is not None and not 1 <= args.steps <= r_len:
            raise UsageError(f"--steps: expected 1 <= T <= {r_len} (the response length), got {args.steps}")
        with options_for(_names(args)):
            res = design(x, K=K, model=model, steps=args.steps, target_kl=args.budget, exact_limit=args.exact_limit,
                         n_per_level=args.n_per_level, seed=args.seed, confidence=conf, prompt_length=g)
        out = {
            "method": res.method,
            "note": res.note,
            "n": res.n,
            "d": res.d,
            "K": res.K,
            "prompt_length": g,
            "steps": res.steps,
            "sizes": list(res.sizes),
            "budget": res.target_kl,
            "path_kl": res.path_kl,
            "path_kl_ci": list(res.ci) if res.ci else None,
            "path_cross_entropy": res.path_cross_entropy,
            "path_cross_entropy_ci": list(res.ci_cross_entropy) if res.ci_cross_entropy else None,
            "profile": res.profile.values.tolist(),
            "profile_stderr": None if res.stderr is None else res.stderr.tolist(),
            "memorized": res.memorized,
            "warning": res.warning,
            "memorization": None if res.memorization is None else res.memorization.to_dict(),
        }
        if args.format in ("diffusers", "sglang", "vllm"):  # sglang: --block-length B cuts the schedule (its block_size)
            B = args.block_length[0] if args.format == "sglang" and args.block_length else r_len
            export = _export_blocks(args, (res.sizes,), B, g)
        else:
            kw = {"block_length": args.block_length[0]} if args.format == "llada" and args.block_length else {}
            export = exports.export(res.schedule, args.format, **kw)  # its block_length: errors name the option
    out["export"] = export
    if out_dir is not None:
        from ..exports.diffusers import save_scheduler

        save_scheduler(export["counts"] if len(export["counts"]) > 1 else export["counts"][0], out_dir,
                       block_length=export["block_length"])
        out["scheduler_out"] = str(out_dir)
    out.update(facts)
    return out


def _export_blocks(args, counts, B: int, g: int) -> dict:
    from ..exports import formats as exports
    from ..schedules.plans import Schedule

    if args.format == "diffusers":
        from ..exports.diffusers import scheduler_config

        return scheduler_config([list(c) for c in counts], block_length=B, prompt_length=g,
                                gen_length=B * len(counts))
    flat = Schedule([k for c in counts for k in c])
    if args.format in ("sglang", "vllm"):  # mdmtheory.exports.sglang / .vllm: a refusal names what the engine lacks
        with options_for({"block_length": "--block-length"}, default="--format"):
            if args.format == "sglang":
                from ..exports.sglang import to_sglang

                return to_sglang(flat, block_length=B)
            from ..exports.vllm import to_vllm

            return to_vllm(flat, block_length=B, budget_only=True)
    if args.format == "llada":
        with options_for(_BLOCK_OPTIONS):
            return exports.to_llada(flat, block_length=B)
    e = exports.to_json(flat)
    e.update({"block_length": B, "steps_per_block": len(counts[0]), "counts": [list(c) for c in counts]})
    return e


def _certify(args, x, K, model) -> dict:
    from ..design.certificate import certify_data

    if x.shape[0] < 2:
        raise UsageError(f"--data: --certify needs at least 2 sequences, got {x.shape[0]}")
    conf = 0.95 if args.confidence is None else args.confidence
    with options_for(_names(args)):
        cert, note = certify_data(x, args.certify, K=K, model=model, confidence=conf, seed=args.seed)
    d = int(x.shape[1])
    Kx = int(K if K is not None else max(int(x.max()) + 1, 2))
    out = {"method": "certificate", "law": "empirical" if model is None else "model", "note": note,
           "d": d, "K": Kx}
    out.update(cert.to_dict())
    before, after = cert.outside_draws(d)
    out["outside_draws"] = {"before_t0": before, "after_T": after}
    out["exact_minimum"] = None
    if model is None:  # the empirical law is exact: the fewest steps it needs, when small
        from ..design.certificate import exact_minimum_steps
        from ..laws.families import empirical

        best = exact_minimum_steps(empirical(x, Kx), args.certify) if Kx**d <= EXACT_LIMIT else None
        if best is not None:
            out["exact_minimum"] = {"steps": best[0], "sizes": list(best[1]), "kl": best[2]}
    return out


def render(r: dict) -> str:
    if r["method"] == "certificate":
        t0, T = r["interval"]
        return "\n".join([
            f"mdmtheory design: {r['note']}",
            f"n = {r['n']} sequences, d = {r['d']}, K = {r['K']}",
            f"certified: {r['steps']} steps, KL <= {r['bound']:.4g} nats (<= eps = {r['eps']:g}) "
            f"with probability >= {r['confidence']:g}",
        ] + _certificate_reading(r) + [
            f"estimated complexity C = {r['complexity']:.4f}, upper bound {r['complexity_upper']:.4f} "
            f"(Q = {r['estimate']:.4f} +- {r['stderr']:.4f}, B = {r['upper']:.4f})",
            f"Bernoulli grid Geo on [{t0:.4g}, {T:.4g}], exact draws outside; times (--json): "
            + " ".join(f"{t:.4g}" for t in r["times"][:8]) + (" ..." if len(r["times"]) > 8 else ""),
        ])
    lines = [f"mdmtheory design: {r['note']}", f"n = {r['n']} sequences, d = {r['d']}, K = {r['K']}"
             + (f", prompt {r['prompt_length']} tokens" if r.get("prompt_length") else "")]
    lines += facts_lines(r)
    if r.get("design") == "blocks":
        return "\n".join(lines + _block_lines(r))
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
        if lo <= 0:
            lines.append("NOTE: the interval reaches 0" + (" and the estimate is negative" if r["path_kl"] < 0 else "")
                         + ": a path KL is >= 0, so at these draws per level this schedule cannot be told from one "
                         "that loses nothing; more draws per level (--n-per-level) would tell")
        lo, hi = r["path_cross_entropy_ci"]
        lines.append(f"path cross-entropy: {r['path_cross_entropy']:.4f} nats/sequence, 95% CI [{lo:.4f}, {hi:.4f}]")
    return "\n".join(lines + _export_lines(r))


def _certificate_reading(r: dict) -> list[str]:
    """What the certificate's count is, beside what the law needs (issue 31 §11)."""
    d, N = r["d"], r["steps"]
    lines = [f"  {N} is the certificate's budget: the grid steps W26 Theorem 2 needs to guarantee the bound from "
             f"samples, not the steps a sampler needs (d = {d} one-token steps are always exact: KL 0)"]
    od = r.get("outside_draws")
    if od is not None:
        lines.append(f"  plus the draws outside [t0, T] the bound takes as exact: on average {od['before_t0']:.3g} "
                     f"token(s) before t0 and {od['after_T']:.3g} after T (one forward per token drawn exactly), "
                     f"about {N + od['before_t0'] + od['after_T']:.4g} forwards in all")
    m = r.get("exact_minimum")
    if m is not None:
        lines.append(f"  exact minimum on this {r['law']} law: {m['steps']} step(s), sizes {m['sizes']}, exact KL "
                     f"{m['kl']:.4g} nats <= eps (every schedule of d = {d} tried)")
    return lines


def _block_lines(r: dict) -> list[str]:
    est = r["method"] == "estimated"
    head = (f"block design for {r['response_length']} response tokens, "
            + (f"{r['forwards_asked']} forwards" if r["forwards_asked"] is not None else
               f"fewest forwards with path KL {'upper CI ' if est else ''}<= {r['budget']:g} nats"))
    if est and r.get("view"):
        head += (f"; each block scored with the later blocks {r['view']}"
                 + (" (absent, as the pipeline runs them)" if r["view"] == "truncated" else ""))
    lines = [head, f"{'block':>6} {'steps/block':>11} {'forwards':>8} {'path KL':>10}" + ("  95% CI" if est else "")]
    for c in r["candidates"]:
        if c["path_kl"] is None:
            lines.append(f"{c['block_length']:>6} {'-':>11} {'-':>8} {'-':>10}  ({c['reason']})")
            continue
        ci = f"  [{c['path_kl_ci'][0]:.4f}, {c['path_kl_ci'][1]:.4f}]" if est else ""
        lines.append(f"{c['block_length']:>6} {c['steps_per_block']:>11} {c['forwards']:>8} {c['path_kl']:>10.4f}{ci}")
    b = r["best"]
    counts = b["counts"]
    shown = counts[0] if all(c == counts[0] for c in counts) else counts
    sep = r.get("separation")
    lines.append(("pick (within noise, see below)" if sep else "pick") + f": block_length {b['block_length']}, "
                 f"{b['steps_per_block']} steps per block, {b['forwards']} forwards, counts {shown}"
                 + (" in every block" if shown is counts[0] else ""))
    if sep:
        lines.append("NOTE: not a design: the pick's 95% CI overlaps those of block length(s) "
                     + ", ".join(map(str, sep["tied"])) + ", so on these samples the candidates cannot be told apart"
                     + ("" if sep["factor"] is None else
                        f"; about {sep['factor']:.3g}x the draws per level (--n-per-level {sep['n_per_level']}) would "
                        "separate them, if the estimates stay where they are")
                     + ("" if sep["factor"] is not None else "; their estimates are equal: more draws cannot separate "
                        "them, the choice does not matter on this model"))
        if sep["negative"]:
            lines.append("NOTE: negative path KLs (block length(s) " + ", ".join(map(str, sep["negative"]))
                         + ") are noise, or a model whose profile rises: the sampler's path KL is >= 0, but a "
                         "rising cross-entropy profile gives a truly negative Riemann defect")
    rising = r.get("rising") or []
    if rising:
        lines.append("WARNING: the block profiles rise beyond their noise (block length(s) " + ", ".join(map(str, rising))
                     + "; the rise check of `schedule --profile`): an exact profile never rises, and a model that uses "
                     "its context does not either, so the path KLs of those candidates are this model's, not the "
                     "data's; train the model further (or check it) before using the design")
    return lines + _export_lines(r)


def _yaml_value(v) -> str:
    """A value of the SGLang export as a YAML scalar or flow collection (its block reads as
    YAML, issue 39 item 3): JSON for lists, dicts, None and a string YAML would misread (a
    ``: `` or `` #`` inside, a leading indicator); other values as printed."""
    import json

    if isinstance(v, (list, tuple, dict)) or v is None:
        return json.dumps(v)
    if isinstance(v, str) and (": " in v or " #" in v or v[:1] in "!&*{}[]|>'\"%@`#,?:-" or v != v.strip()):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def _export_lines(r: dict) -> list[str]:
    e = r["export"]
    lines = [f"export ({e['format']}):"]
    for k, v in e.items():
        if k == "format":
            continue
        if isinstance(v, str) and "\n" in v.strip("\n"):  # SGLang's YAML: a block, each line indented under its key
            lines.append(f"  {k}: |")
            lines += [f"    {ln}" for ln in v.strip("\n").splitlines()]
        else:  # SGLang's block reads as YAML; the others print values as Python (their lines are pasted as code)
            lines.append(f"  {k}: {_yaml_value(v) if e['format'] == 'sglang' else v}")
    if r.get("scheduler_out"):
        lines.append(f"wrote {r['scheduler_out']}/scheduler_config.json "
                     "(mdmtheory.exports.diffusers.load_scheduler reads it)")
    return lines
