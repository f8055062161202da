"""``mdmtheory bounds``: exact KL, path KL and every applicable published bound, in one table."""

from __future__ import annotations

import argparse

from ._common import options_for
from ._inputs import (add_law_arguments, add_plan_arguments, check_planner, law_option, load_law, load_plan,
                      plan_dict, plan_given, plan_option, planner_help)

HELP = "the comparison table: exact KL, path KL and every applicable published bound for one plan"
EXAMPLE = "mdmtheory bounds --family markov --d 8 --steps 3"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_law_arguments(parser)
    add_plan_arguments(parser)
    parser.add_argument("--planner", default="random",
                        help=planner_help("of the exact rows; default random, which the bounds assume"))


def run(args) -> dict:
    from ..bounds import compare

    check_planner(args.planner)
    law, name, source = load_law(args)
    plan = load_plan(args, law.d)
    with options_for({"planner": "--planner", "plan": plan_option(args), "p": law_option(args)},
                     default=law_option(args)):
        cmp = compare(law, plan, args.planner)
    rows = [
        {"name": r.name, "kind": r.kind, "status": r.status, "quantity": r.quantity, "value": r.value, "exact": r.exact,
         "slack": r.slack, "holds": r.holds, "source": r.source}
        for r in cmp.rows
    ]
    return {"name": name, "source": source, "d": law.d, "K": law.K, "plan": plan_dict(plan), "plan_given": plan_given(args),
            "planner": args.planner, "rows": rows, "all_hold": cmp.all_hold}


def _f(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "NO"
    if isinstance(x, str):
        return x
    return f"{x:.6g}"


def _ints(values) -> str:
    return ",".join(f"{v:g}" for v in values)


def render(result: dict) -> str:
    head = ("name", "kind", "status", "quantity", "value", "exact", "slack", "holds")
    body = [tuple(_f(r[k] or None) if k == "status" else _f(r[k]) for k in head) for r in result["rows"]]
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
    plan = result["plan"]
    what = f"sizes {_ints(plan['sizes'])}" if plan["kind"] == "schedule" else f"grid {_ints(plan['times'])}"
    lines = [f"{result['name']}: plan {result['plan_given']} ({what}, {plan['steps']} steps), planner {result['planner']}"]
    for row in [head] + body:
        lines.append("  ".join(c.ljust(w) if i < 4 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
    lines.insert(2, "-" * len(lines[1]))
    lines.append(f"every bound holds: {'yes' if result['all_hold'] else 'NO'}")
    return "\n".join(lines)
