"""``mdmtheory schedule``: optimal schedules for a profile, beside the usual families.

The profile is an exact one (from a law) or any profile file — e.g. a model's cross-entropy
profile c(m) from ``mdmtheory estimate --csv``: the optimal schedule for c minimizes the
model's path KL up to a schedule-independent constant (DESIGN §2).
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from ._common import progress, UsageError
from ._inputs import add_law_arguments, check_law_options, law_given, law_option, load_law, load_profile

HELP = "optimal schedule(s) for a profile (law or CSV/JSON file) vs constant, cosine, log-linear, geometric"
EXAMPLE = "mdmtheory schedule --profile phi.csv --steps 3"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", metavar="FILE",
                        help="profile as CSV (m,phi or m,c,stderr) or JSON (list or {'values': [...]}): values >= 0, "
                             "non-increasing in m (up to 1e-9 relative, plus 3 standard errors with a stderr column)")
    add_law_arguments(parser)
    parser.add_argument("--steps", type=int, metavar="T",
                        help="number of sampling steps T: one row (default: every T = 1..d; for d > 32 the powers of "
                             "two and d)")


#: The log-linear grid's start: MDLM's eps = 1e-3 would draw the first 0.1% of the tokens exactly
#: before the grid, a step the table would not count; started at 0 it makes exactly T forwards.
LOGLINEAR_EPS = 0.0

#: Column names of the table (the JSON keys of "families").
LLADA_SPLIT = "LLaDA split"


def _families(prof, T: int) -> dict:
    """Path KL of each family at T forwards: constant (Schedule.constant, the remainder last),
    LLaDA's split (get_num_transfer_tokens, the remainder first), cosine, log-linear (the MDLM
    grid started at t = 0: T forwards) and geometric (3 <= T <= d)."""
    from ..information.divergence import path_kl
    from ..schedules.families import cosine_schedule, geometric_schedule, loglinear_grid
    from ..schedules.plans import Schedule
    from ..exports.formats import llada_default_counts

    d = prof.d
    out = {"constant": path_kl(prof, Schedule.constant(d, T)),
           LLADA_SPLIT: path_kl(prof, Schedule(llada_default_counts(d, T))),
           "cosine": path_kl(prof, cosine_schedule(d, T)),
           "log-linear (MDLM grid)": path_kl(prof, loglinear_grid(T, eps=LOGLINEAR_EPS))}
    out["geometric"] = path_kl(prof, geometric_schedule(d, T)) if d >= 3 and 3 <= T <= d else None
    return out


#: A schedule with fewer steps is used only when it costs this much less (nats): ties keep T.
PROFILE_TIE = 1e-12


#: Longest profile whose default table lists every T = 1..d (above it: log-spaced T).
ALL_STEPS_D = 32


def default_steps(d: int) -> list[int]:
    """Every T = 1..d for d <= ALL_STEPS_D, else 1, 2, 4, ... (powers of two) and d."""
    if d <= ALL_STEPS_D:
        return list(range(1, d + 1))
    return sorted({min(1 << i, d) for i in range(d.bit_length())} | {d})


def run(args) -> dict:
    from ..information.profile import information_profile
    from ..optimal.card import pareto_frontier
    from ..design.profile import profile_warning

    given = law_given(args)
    if args.profile is not None and given:
        raise UsageError(f"--profile, {law_option(args)}: give a profile file or a law, not both")
    se, K = None, None
    if args.profile is not None:
        check_law_options(args)
        prof, se = load_profile(args.profile)
        source = f"profile file {args.profile}"
    elif given:
        law, name, source = load_law(args)
        prof, K = information_profile(law), law.K
    else:
        raise UsageError("--profile: give a profile file (CSV/JSON) or a law (--table, --data or --family)")
    d = prof.d
    if args.steps is not None and not 1 <= args.steps <= d:
        raise UsageError(f"--steps: expected 1 <= T <= d = {d}, got {args.steps}")
    Ts = [args.steps] if args.steps is not None else default_steps(d)
    fr = pareto_frontier(prof, max(Ts))
    rows = []
    for T in progress(Ts, quiet=args.quiet, desc="schedules", unit="T"):
        # at most T forwards: on a rising profile fewer steps can cost less (a non-increasing
        # one never: there the optimum uses all T)
        costs = np.asarray(fr.path_kl[:T], dtype=np.float64)
        used = T if costs[T - 1] <= costs.min() + PROFILE_TIE else 1 + int(np.argmin(costs))
        s = fr.schedule(used)
        rows.append({"steps": T, "sizes": list(s.sizes), "steps_used": used, "path_kl": float(fr.path_kl[used - 1]),
                     "families": _families(prof, T)})
    return {"source": source, "d": d, "nonincreasing": prof.is_nonincreasing(), "profile": prof.values.tolist(),
            "warning": profile_warning(prof.values, K, stderr=se), "schedules": rows}


#: Width of a value column of the table (a family's full name is its header: never cut).
_COL = 10


def render(result: dict) -> str:
    fams = list(result["schedules"][0]["families"])
    lines = [f"{result['source']} (d = {result['d']}); path KL in nats (Riemann defect of the profile)",
             "every column at T forwards: constant = Schedule.constant (remainder last); LLaDA split = LLaDA's "
             "get_num_transfer_tokens (remainder first);",
             "log-linear = the MDLM Bernoulli grid started at t = 0 (with MDLM's eps = 1e-3 its exact draws before "
             "t0 would be a free extra step)"]
    if result.get("warning"):
        lines.append(f"WARNING: {result['warning']}")
    elif not result["nonincreasing"]:
        lines.append("note: the profile is not non-increasing (a noisy estimate?): the exact DP is used")
    widths = [max(_COL, len(f)) for f in fams]
    head = f"{'T':>4}  {'optimal':>10}  " + "  ".join(f"{f:>{w}}" for f, w in zip(fams, widths)) + "  optimal sizes"
    lines.append(head)
    for r in result["schedules"]:
        vals = "  ".join(f"{'-' if v is None or (isinstance(v, float) and math.isnan(v)) else f'{v:.6f}':>{w}}"
                         for v, w in zip(r["families"].values(), widths))
        fewer = ("" if r.get("steps_used", r["steps"]) == r["steps"] else
                 f" ({r['steps_used']} of the {r['steps']} forwards: fewer steps cost less on this rising profile)")
        lines.append(f"{r['steps']:>4}  {r['path_kl']:10.6f}  {vals}  {r['sizes']}{fewer}")
    if any(r["families"]["geometric"] is None for r in result["schedules"]):
        lines.append("geometric '-': W26's geometric schedule needs 3 <= T <= d (a first and a last step around its "
                     "geometric middle), d >= 3")
    return "\n".join(lines)
