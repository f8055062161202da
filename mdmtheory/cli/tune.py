"""``mdmtheory tune``: an adaptive rule's parameter tuned to a forward budget.

``--planner NAME`` (threshold, factor, frechet, entropy_budget, entropy_threshold,
joint_threshold, diffusers_threshold) with ``--forwards F`` (the value with expected forwards <= F and the least
KL) or ``--target-kl EPS`` (the value with KL <= EPS and the fewest forwards), on

* a law (``--family NAME --d N``, ``--table FILE.npy`` or ``--data FILE``: the data's empirical
  law): exact runs of the rule on every grid value (:func:`mdmtheory.optimal.tune`);
* a model and data (``--model M --data D``): Monte Carlo along the rule's path on the data
  rows, with 95% intervals; refused where the pick is not separated from another value
  (:func:`mdmtheory.design.estimate_tune`: the fix is more draws, ``--n``).

``--values v1,v2,...`` replaces the rule's default grid (mdmtheory.optimal.DEFAULT_GRIDS);
``--ties`` the tie rule. The output carries the whole curve and the exports of the picked value
(diffusers' ``LLaDA2Pipeline(threshold=...)`` for ``diffusers_threshold``; SGLang's algorithm config for
the rules SGLang has; Fast-dLLM's ``generate`` keywords for ``threshold`` and ``factor``; a refusal, with
its reason, for the others).
"""

from __future__ import annotations

import argparse

from ._common import options_for, UsageError
from ._inputs import add_law_arguments, check_draws, check_seed, float_list, law_given

HELP = "tune an adaptive rule's parameter (threshold, factor, ...) to a forward budget, exactly or from data"
EXAMPLE = "mdmtheory tune --planner threshold --forwards 4 --family markov --d 6 --json"

#: The rules ``--planner`` takes (mdmtheory.optimal.TUNABLE; a literal so --help imports nothing).
RULES = ("threshold", "factor", "frechet", "entropy_budget", "entropy_threshold", "joint_threshold",
         "diffusers_threshold")
TIES = ("random", "lowest", "topk")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ._models import add_model_arguments

    parser.add_argument("--planner", required=True, choices=RULES, help="the rule whose parameter is tuned")
    g = parser.add_mutually_exclusive_group()
    g.add_argument("--forwards", type=float, metavar="F", help="budget of expected forwards (> 0)")
    g.add_argument("--target-kl", type=float, metavar="EPS", help="KL target in nats (>= 0): the fewest forwards")
    parser.add_argument("--values", type=float_list, metavar="V1,V2,...", help="the parameter grid (default: the rule's)")
    parser.add_argument("--ties", choices=TIES, default=None, help="tie rule (default: the rule's own)")
    add_law_arguments(parser, required=False, data_help="token rows: with --model the data the rule runs on; "
                                                        "without, the law is their empirical law")
    add_model_arguments(parser, extra="; with --data: tune from Monte Carlo on the model")
    parser.add_argument("--n", type=int, default=1000, help="--model: draws per grid value (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="--model: seed of the draws (default 0)")


_NAMES = {"forwards": "--forwards", "target_kl": "--target-kl", "values": "--values", "ties": "--ties",
          "planner": "--planner", "n": "--n", "seed": "--seed", "samples": "--data", "p": "--family"}


def _exports(t) -> dict:
    from ..exports.diffusers import tuned_threshold_call
    from ..exports.llada import tuned_generate_kwargs
    from ..exports.sglang import tuned_algorithm_config

    out = {}
    for name, f in (("diffusers", tuned_threshold_call), ("sglang", tuned_algorithm_config),
                    ("fastdllm", tuned_generate_kwargs)):
        try:
            out[name] = f(t.to_dict())
        except ValueError as e:
            out[name] = {"refused": str(e)}
    return out


def run(args) -> dict:
    if args.model is None:
        for flag, v in (("--mask-id", args.mask_id is not None), ("--shift", args.shift),
                        ("--trust-remote-code", args.trust_remote_code)):
            if v:
                raise UsageError(f"{flag}: only with --model")
        if args.n != 1000 or args.seed != 0:
            raise UsageError(f"{'--n' if args.n != 1000 else '--seed'}: only with --model (the exact route draws nothing)")
    else:
        check_draws("--n", args.n)
        check_seed(args.seed)
    if args.forwards is None and args.target_kl is None:
        raise UsageError("--forwards or --target-kl: give the budget to tune to")
    if args.values is not None and not args.values:
        raise UsageError("--values: expected comma-separated numbers, got none")
    if args.model is not None:
        if args.data is None:
            raise UsageError("--data: with --model give the token rows the rule runs on")
        for o in ("table", "family"):
            if getattr(args, o) is not None:
                raise UsageError(f"--{o}: with --model the rule runs on --data; drop --{o}")
        if args.d is not None or args.K is not None:
            raise UsageError(f"{'--d' if args.d is not None else '--K'}: only without --model")
        from ._models import load_model, read_model_data
        from ..design.tune import estimate_tune

        loaded = load_model(args.model, "--model", mask_id=args.mask_id, shift=args.shift,
                            trust_remote_code=args.trust_remote_code)
        x = read_model_data(args.data, "--data", loaded, chars=args.chars)
        with options_for(_NAMES, default="--model"):
            t = estimate_tune(loaded.masked(), x, args.planner, forwards=args.forwards, target_kl=args.target_kl,
                              values=args.values, ties=args.ties, n=args.n, seed=args.seed)
        source = f"{loaded.describe()} on {x.shape[0]} rows of {args.data}"
    else:
        if not law_given(args):
            raise UsageError("--family, --table or --data: give the law to tune on (or --model with --data)")
        from ._inputs import law_option, load_law
        from ..optimal.tune import tune

        law, name, source = load_law(args)
        with options_for(dict(_NAMES, p=law_option(args)), default=law_option(args)):
            t = tune(args.planner, law, forwards=args.forwards, target_kl=args.target_kl, values=args.values,
                     ties=args.ties)
    out = t.to_dict()
    out["source"] = source
    out["exports"] = _exports(t)
    return out


def render(r: dict) -> str:
    lines = [f"{r['planner']} ({r['parameter']}) on {r['source']} [{r['method']}]"]
    if r["method"] == "estimated":
        lines.append(r["note"])
    est = r["method"] == "estimated"
    for i, v in enumerate(r["values"]):
        mark = "*" if i == r["best"] else " "
        pk = r["path_kl"][i]
        pk = "-" if pk is None else f"{pk:.5g}" + (f" ± {1.96 * r['kl_stderr'][i]:.2g}" if est else "")
        kl = r["kl"][i]
        fw = f"{r['forwards'][i]:.4g}" + (f" ± {1.96 * r['forwards_stderr'][i]:.2g}" if est else "")
        lines.append(f"{mark} {r['parameter']} = {v:<8g} forwards {fw:<16} KL {'-' if kl is None else f'{kl:.5g}':<10} "
                     f"path KL {pk}")
    if r["best"] is not None:
        what = f"<= {r['limit']:g} forwards" if r["budget"] == "forwards" else f"KL <= {r['limit']:g}"
        lines.append(f"pick ({what}): {r['parameter']} = {r['value']:g}, {r['expected_forwards']:.4g} expected forwards")
    return "\n".join(lines)
