"""``mdmtheory report``: the main job as one self-contained HTML file (and its ``--json`` twin).

Sections (see :mod:`mdmtheory.report`): the law and its source; the information profile
and, with a model, its cross-entropy profile with CIs; the gain h(t) and UGC density; exact
KL, path KL and every applicable bound across step counts; the Pareto frontier against the
usual schedule families; planners compared; the recommended schedule and its exports; with
a model, its attention while it samples (floating anchors, a causal baseline's BOS sink, and
attention against the exact information of the revealed positions).
"""

from __future__ import annotations

import argparse
import functools

from ._common import check_output, DEFAULT_PLANNERS, note, options_for, progress, renamed_line, UsageError
from ._inputs import (add_law_arguments, check_law_options, check_planner, DATA_HELP, empirical_law, int_list, load_law,
                      planner_help)
from ._models import add_model_arguments, load_model, LoadedModel
from ._text import add_text_arguments, no_text_options, read_rows, text_given, token_file_vocab

HELP = "one self-contained HTML report with plots (default: the embedded law); --json prints its numbers"
EXAMPLE = "mdmtheory report --family markov --d 8 --out report.html"

DEFAULT_OUT = "mdmtheory-report.html"

#: Step budget of the default report (five-letter words, d = 5): the step count where the choice of
#: schedule matters (T = 2 and 4 have one best schedule up to order; at T = 3 the optimum beats the families).
DEFAULT_RECOMMEND_STEPS = 3


def default_law(model: bool = True, seed: int = 0):
    """The embedded default: the exact law of five-letter English words (wordfreq) and the
    shipped tiny MDM trained on it, with 4000 words drawn from the law for its estimates.

    Returns (law, name, source, model_or_None, samples_or_None); the causal baseline
    ``words-ar`` is :func:`default_baseline`.
    """
    from ..data import datasets

    ds = datasets.words()
    source = f"{ds.source}; licence: {ds.licence}"
    if not model:
        return ds.joint, "five-letter words", source, None, None
    from ..bridge.tiny import load_pretrained

    source += "; model: the shipped checkpoint 'words' (mdmtheory.bridge.tiny.load_pretrained('words'))"
    return ds.joint, "five-letter words", source, load_pretrained("words"), ds.sample(4000, seed=seed)


def default_baseline():
    """The shipped causal baseline trained on the same words (``words-ar``)."""
    from ..bridge.tiny import load_pretrained

    return load_pretrained("words-ar")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_law_arguments(parser, required=False, tokens_dest="tokens", data_help=f"{DATA_HELP}; the law is their empirical law and --model "
                      "is scored on them (with --table or --family: only the rows the model is scored on; "
                      "default: 4000 draws of the law)")
    add_text_arguments(parser, jsonl=False)
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="FILE.html", help=f"output file (default {DEFAULT_OUT})")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out file (else refused)")
    parser.add_argument("--columns", type=int_list, metavar="T1,T2,...", dest="steps",
                        help="the step counts T of the report's tables and plots, one column each "
                             "(default: 1..d, log-spaced)")
    parser.add_argument("--steps", type=int_list, metavar="T", action=_StepsAction, dest="recommend_steps",
                        help="as in every command, one step count: recommend a schedule with T steps "
                             "(= --recommend-steps T)")
    parser.add_argument("--planners", default=",".join(DEFAULT_PLANNERS),
                        help=planner_help(f"comma-separated; default {','.join(DEFAULT_PLANNERS)}"))
    parser.add_argument("--target", type=float, default=None,
                        help="recommend the fewest steps whose optimal path KL <= TARGET nats (default 5%% of H(X))")
    parser.add_argument("--recommend-steps", type=int, metavar="T", action=_RecommendAction,
                        help=f"recommend a schedule with T steps instead (default report: {DEFAULT_RECOMMEND_STEPS})")
    m = parser.add_argument_group("model (optional): the cross-entropy profile of a model")
    add_model_arguments(m)
    m.add_argument("--n-per-level", type=int, default=400,
                   help="Monte Carlo draws per level (default 400, not estimate's and design's 1000: here the "
                        "profile is drawn beside the exact one and the default report stays under a few minutes; "
                        "give 1000 for the CIs estimate prints)")
    m.add_argument("--seed", type=int, default=0, help="seed of the estimates (default 0)")
    m.add_argument("--no-model", action="store_true", help="skip the model section of the default report")
    a = parser.add_argument_group("attention (with a model): floating anchors and information")
    a.add_argument("--baseline", metavar="PATH", help="a causal mdmtheory checkpoint or causal Hugging Face folder "
                   "trained on the same data (its token ids are the outcome indices) "
                   "(BOS as key 0; default report: the shipped 'words-ar')")
    a.add_argument("--attention-samples", type=int, default=200, metavar="N",
                   help="samples traced while the model samples (default 200, at most 10000)")
    a.add_argument("--attention-info-samples", type=int, default=48, metavar="N",
                   help="teacher-forced samples for attention vs information (default 48, at most 10000)")
    a.add_argument("--attention-steps", type=int, metavar="T",
                   help="trace with the constant schedule of T steps (default: the recommended schedule)")
    a.add_argument("--no-attention", action="store_true", help="skip the attention section")


class _StepsAction(argparse.Action):
    """``report --steps``: one step count T means what it means in every other command, a
    schedule of T steps (here: the recommendation, ``--recommend-steps T``); a list
    ``T1,T2,...`` is the old spelling of ``--columns`` (issue 39 item 4: ``--steps 3`` gave one
    column, not a 3-step recommendation), which works for one release with the stderr line."""

    def __call__(self, parser, namespace, values, option_string=None):
        if not values:
            parser.error("--steps: expected one step count T (the report's columns are --columns T1,T2,...)")
        if len(values) == 1:
            if getattr(namespace, "_recommend_given", False):
                parser.error("--steps, --recommend-steps: give one of the two (they both recommend T steps)")
            namespace.recommend_steps = values[0]
            namespace._recommend_given = True
            namespace._recommend_option = "--steps"
            return
        # said once the report is written (a visible option: a refusal stays the only line)
        note(renamed_line("--steps T1,T2,...", "--columns T1,T2,..."))
        namespace.steps = values


class _RecommendAction(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, "_recommend_given", False):
            parser.error("--steps, --recommend-steps: give one of the two (they both recommend T steps)")
        namespace.recommend_steps = values
        namespace._recommend_given = True


#: Largest --attention-samples and --attention-info-samples (each traces one sampling run).
MAX_ATTENTION_SAMPLES = 10_000

_LIBRARY_OPTIONS = {"steps": "--columns", "target": "--target", "target_kl": "--target", "recommend_steps": "--recommend-steps",
                    "attention_steps": "--attention-steps", "attention_samples": "--attention-samples",
                    "attention_info_samples": "--attention-info-samples", "attention_seed": "--seed",
                    "planners": "--planners", "planner": "--planners"}


def _check_arguments(args) -> tuple[str, ...]:
    """Every option checked before any work (the ranges that need d are checked in run)."""
    from ..samplers import resolve_planner
    from ._inputs import check_draws, check_seed

    check_draws("--n-per-level", args.n_per_level)
    check_seed(args.seed)
    for opt in ("attention_samples", "attention_info_samples"):
        v = getattr(args, opt)
        if not 1 <= v <= MAX_ATTENTION_SAMPLES:
            raise UsageError(f"--{opt.replace('_', '-')}: expected a number of samples in 1..{MAX_ATTENTION_SAMPLES:,}, got {v}")
    if args.target is not None and not 0 <= args.target < float("inf"):  # also refuses nan
        raise UsageError(f"--target: expected a KL target >= 0 nats (finite), got {args.target}")
    if args.target is not None and args.recommend_steps is not None:
        raise UsageError("--target, --recommend-steps: give one way to choose the recommended schedule")
    planners = tuple(p for p in args.planners.split(",") if p)
    if not planners:
        raise UsageError("--planners: give at least one planner name (comma-separated)")
    for name in planners:
        check_planner(name, "--planners")
        with options_for({"planner": "--planners"}):
            resolve_planner(name)
    for flag, v in (("--mask-id", args.mask_id is not None), ("--shift", args.shift),
                    ("--trust-remote-code", args.trust_remote_code)):
        if v and args.model is None:
            raise UsageError(f"{flag}: only with --model (a Hugging Face folder)")
    if args.baseline is not None and (args.no_model or args.no_attention):
        raise UsageError("--baseline: the baseline is compared with the model's attention; drop --no-model/--no-attention")
    if args.model is not None and args.no_model:
        raise UsageError("--model: --no-model drops the model section; give one of the two")
    if args.attention_steps is not None and args.no_attention:
        raise UsageError("--attention-steps: --no-attention drops the attention section; give one of the two")
    if text_given(args):
        if args.data is not None or args.tokens is not None:
            raise UsageError("--text: give one of --data and --text")
        if args.chars:
            raise UsageError("--chars: only with --data (--text is read with --tokenizer)")
    else:
        no_text_options(args, args.model)
    if args.tokens is not None:  # the old spelling of --data (a law, when --data gives the model's rows)
        if args.data is None:
            args.data, args.tokens = args.tokens, None
    check_law_options(args)
    return planners


def _check_steps(args, d: int) -> None:
    for opt, values in (("--columns", args.steps or []),
                        (getattr(args, "_recommend_option", "--recommend-steps"), [args.recommend_steps]),
                        ("--attention-steps", [args.attention_steps])):
        bad = [T for T in values if T is not None and not 1 <= T <= d]
        if bad:
            raise UsageError(f"{opt}: expected step counts 1 <= T <= d = {d}, got {bad[0]}")
    if args.steps is not None and not args.steps:
        raise UsageError("--columns: give at least one step count")


def _model_matches_law(m, law, what: str) -> None:
    """The model's outcomes and length must be the law's: its estimates are compared with it."""
    if _outcomes(m) != law.K or (m.d is not None and m.d != law.d):
        dk = f"K = {_outcomes(m)} outcomes" + ("" if m.d is None else f" and d = {m.d} positions")
        raise UsageError(f"{m.option}: {m.describe()} has {dk}, but the law ({what}) has K = {law.K}, d = {law.d}; "
                         "give a model trained on this law" + (", or --K to match" if what.startswith("--data") else "")
                         + " (or drop the option)")


def _outcomes(m) -> int | None:
    """The number of outcomes of a loaded model (its --vocab ids when given)."""
    return len(m.vocab) if m.vocab is not None else m.K


def _load(args, vocab=None):
    return load_model(args.model, "--model", mask_id=args.mask_id, shift=args.shift,
                      trust_remote_code=args.trust_remote_code, vocab=vocab)


def run(args) -> dict:
    # the report is imported here, not at the top: ``report --help`` imports no wing (issue 39 item 7)
    from ..report.report import AttentionOptions, build_report, write_html

    planners = _check_arguments(args)
    out_path = check_output(args.out, "--out", overwrite=args.overwrite)
    rows_given = args.data is not None or text_given(args)
    law_option = next((o for o in ("table", "family", "tokens") if getattr(args, o) is not None), None)
    baseline = args.baseline
    model = None
    samples = None
    facts = {}
    if law_option is not None:
        # the law from --table / --family (or the old --tokens beside --data); --data or --text:
        # the rows the model is scored on
        if rows_given and args.model is None:
            rows = "--data" if args.data is not None else "--text"  # the option the user gave
            raise UsageError(f"{rows}: with --table or --family it gives the rows a model is scored on; give --model "
                             f"(or drop {rows})")
        law_args = argparse.Namespace(**{**vars(args), "data": args.tokens,
                                         "chars": args.chars and args.tokens is not None})
        check_law_options(law_args)
        if args.model is not None and rows_given:
            samples, _, _, model, facts = read_rows(args, "data", "--data", args.model, "--model")
        elif args.model is not None:
            model = _load(args, token_file_vocab(args, args.model))
        if law_args.chars and model is not None and model.alphabet is None:
            raise UsageError(f"--chars: {model.describe()} does not record a character alphabet; give --data as "
                             "integer outcome indices")
        law, name, source = load_law(law_args, alphabet=None if model is None else model.alphabet)
        what = f"--{law_option} {getattr(args, law_option)}".replace("--tokens", "--data")
        if args.family is not None:
            what += f" --d {8 if args.d is None else args.d}"
    elif rows_given:
        # the law is the empirical law of the rows; a model is scored on the same rows
        option = "--data" if args.data is not None else "--text"
        if args.model is not None and args.K is not None:
            raise UsageError("--K: with --model the model fixes the alphabet (drop --K)")
        if args.model is not None or text_given(args):
            samples, K, _, model, facts = read_rows(args, "data", option, args.model, "--model")
            letters = model.alphabet if model is not None and args.chars else None
            law, name, source = empirical_law(samples, K if K is not None else _outcomes(model),
                                              args.data or args.text, letters, option)
        else:
            law, name, source = load_law(args)
        what = f"{option} {args.data or args.text}"
    else:
        want_default_model = not args.no_model and args.model is None
        law, name, source, default_model, samples = default_law(want_default_model, args.seed)
        what = "the default five-letter words"
        if args.model is not None:
            model = _load(args, token_file_vocab(args, args.model))
            samples = None
        elif default_model is not None:
            model = LoadedModel(default_model, "words", "--model", "shipped", default_model.config.vocab_size,
                                default_model.config.seq_len, None, False)
            if baseline is None and not args.no_attention:
                baseline = default_baseline()
                source += "; causal baseline: the shipped checkpoint 'words-ar'"
    if model is None and args.baseline is not None:
        raise UsageError("--baseline: the baseline is compared with a model's attention; give --model")
    _check_steps(args, law.d)
    if model is not None:
        _model_matches_law(model, law, what)
    if isinstance(baseline, str):
        b = load_model(baseline, "--baseline", masked=False)
        if not b.causal:
            raise UsageError(f"--baseline: {b.describe()} is not a causal model (train one with "
                             "'mdmtheory train --data FILE --causal', or give a causal Hugging Face folder)")
        if b.kind == "hf":
            # a causal LM reads the law's outcome indices as its token ids 0..K-1 (trained on the same data)
            if b.K is None or _outcomes(model) is None or b.K < _outcomes(model) or (b.d is not None and b.d < law.d):
                raise UsageError(f"--baseline: {b.describe()} has {b.K} token ids and {b.d} positions; it reads the "
                                 f"law's outcome indices 0..{law.K - 1} as token ids over d = {law.d} positions: "
                                 "train it on the same data")
        elif b.K != _outcomes(model) or b.d != model.d:
            raise UsageError(f"--baseline: {b.describe()} has K = {b.K}, d = {b.d}; the model has K = {_outcomes(model)}, "
                             f"d = {model.d}: train the baseline on the same data")
        baseline = b.module
    cross_entropy = None
    masked = None
    if model is not None:
        if samples is None:
            import numpy as np

            from ..laws.oracles import as_oracle

            samples = as_oracle(law).sample(4000, np.random.default_rng(args.seed))
        from ..bridge import estimate_profile

        masked = model.masked()
        cross_entropy = estimate_profile(masked, samples, n_per_level=args.n_per_level, seed=args.seed)
    use_attention = model is not None and not args.no_attention
    with options_for(_LIBRARY_OPTIONS):
        report = build_report(
            law, name=name, source=source, steps=args.steps, planners=planners, target_kl=args.target,
            recommend_steps=(DEFAULT_RECOMMEND_STEPS if law_option is None and not rows_given and args.target is None
                             and args.recommend_steps is None else args.recommend_steps), cross_entropy=cross_entropy,
            attention=AttentionOptions(model=masked if use_attention else None,
                                       baseline=baseline if use_attention else None, steps=args.attention_steps,
                                       samples=args.attention_samples, info_samples=args.attention_info_samples,
                                       seed=args.seed),
            progress=functools.partial(progress, quiet=args.quiet, leave=False),
        )
    path = write_html(report, out_path)
    return {"path": str(path), **report.to_dict(), **facts}


def _z(x: float) -> float:
    """Display only: rounding noise around an exact 0 prints as 0."""
    return 0.0 if abs(x) < 5e-13 else x


def render(result: dict) -> str:
    rec = result["recommended"]
    b = result["bounds"]
    return "\n".join([
        f"{result['law']['name']}: {result['law']['source']}",
        f"every bound holds: {'yes' if b['all_hold'] else 'NO'} ({len(b['series'])} bounds x {len(b['steps'])} step counts)",
        f"recommended: {rec['steps']} step{'' if rec['steps'] == 1 else 's'}, sizes {rec['sizes']}, path KL "
        f"{_z(rec['path_kl']):.4g} nats (" + ", ".join(f"{k} {_z(g['path_kl']):.4g}" for k, g in rec["gains"].items())
        + f"), exact KL {_z(rec['exact_kl']):.4g} nats (constant schedule: {_z(rec['constant_exact_kl']):.4g})"
        + ("" if not rec.get("model_designed") else
           f"; designed from the model alone: {rec['model_designed']['sizes']}, "
           f"regret {_z(rec['model_designed']['regret']):.4g} nats"),
    ] + _attention_lines(result.get("attention")) + [f"report written to {result['path']}"])


def _attention_lines(a) -> list[str]:
    if a is None:
        return []
    f = lambda v: "/".join(f"{x:.2f}" for x in v)  # noqa: E731
    null = a.get("anchor_null")
    lines = [f"attention per layer: anchor absorption {f(a['mdm']['absorption_mean'])} (an arg max: "
             + (f"row-permutation null {f(null['mean'])}, 95th percentile {f(null['q95'])}" if null else
                f">= 1/d = {a['uniform_absorption']:.2f} by construction")
             + f"), anchor drift rate {f(a['mdm']['drift_rate'])}"]
    if a["baseline"] is not None:
        lines.append(f"causal baseline: BOS absorption {f(a['baseline']['bos_mean'])} "
                     f"(uniform causal {a['baseline']['uniform_causal_bos']:.2f}"
                     + ("; below it: no sink" if min(a["baseline"]["bos_mean"]) < a["baseline"]["uniform_causal_bos"]
                        else "") + ")")
    pw = a["information"]["pointwise"]
    lines.append(f"attention vs exact information, Spearman per layer: {f(pw['rho_mean'])} ({pw['n_cases'][0]} cases)")
    return lines
