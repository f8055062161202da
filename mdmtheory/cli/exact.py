"""``mdmtheory exact``: the exact output law of a sampler (plan + planner), its KL and path KL."""

from __future__ import annotations

import argparse

from ._common import options_for
from ._inputs import (add_law_arguments, add_plan_arguments, check_planner, law_option, load_law, load_plan,
                      plan_dict, plan_given, plan_option, planner_help)

HELP = "exact KL(p||q) and path KL of a sampler's output law for one plan and planner"
EXAMPLE = "mdmtheory exact --family parity --d 6 --sizes 1,2,3 --planner confidence --json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_law_arguments(parser)
    add_plan_arguments(parser)
    parser.add_argument("--planner", default="random",
                        help=planner_help("default random; a grid always uses the Bernoulli sampler"))


def run(args) -> dict:
    from ..information.divergence import kl
    from ..samplers import exact_run

    check_planner(args.planner)
    law, name, source = load_law(args)
    plan = load_plan(args, law.d)
    with options_for({"planner": "--planner", "plan": plan_option(args), "p": law_option(args)},
                     default=law_option(args)):
        res = exact_run(law, plan, args.planner, trajectory=True)
        res_kl = kl(law, res.law)
    return {
        "name": name,
        "source": source,
        "d": law.d,
        "K": law.K,
        "plan": plan_dict(plan), "plan_given": plan_given(args),
        "planner": args.planner,
        "kl": res_kl,
        "path_kl": float(res.path_kl),
        # the engine's columns are [initialization, step 1, ..., step T (, completion)]; the
        # initialization and completion draws are exact (no KL), so the steps' own terms are
        # columns 1..T: mt.information.step_path_kl(law, plan) for the random planner
        "step_path_kl": [float(x) for x in res.step_kl[1 : 1 + plan.steps]],
        "lost": float(res.law.lost),
    }


def render(result: dict) -> str:
    plan = result["plan"]
    what = f"sizes {plan['sizes']}" if plan["kind"] == "schedule" else f"grid {plan['times']}"
    return "\n".join([
        f"{result['name']}: {result['source']}",
        f"plan: {result['plan_given']}: {what} ({plan['steps']} steps), planner {result['planner']}",
        f"exact KL(p||q) = {result['kl']:.8g} nats",
        f"path KL        = {result['path_kl']:.8g} nats   (>= KL by data processing)",
        f"per step       = {', '.join(f'{x:.4g}' for x in result['step_path_kl'])}",
        f"lost mass      = {result['lost']:.3g}   (mass stuck at zero-probability prefixes)",
    ])
