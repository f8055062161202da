"""``mdmtheory schedule``: optimal schedules for a profile, beside the usual families.

The profile is an exact one (from a law) or any profile file — e.g. a model's cross-entropy
profile c(m) from ``mdmtheory estimate --csv``: the optimal schedule for c minimizes the
model's path KL up to a schedule-independent constant (DESIGN §2).
"""

from __future__ import annotations

import argparse
import math

from ..information.divergence import path_kl
from ..information.profile import information_profile
from ..optimal.card import pareto_frontier
from ..schedules.families import cosine_schedule, geometric_schedule, loglinear_grid
from ..schedules.plans import Schedule
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


def _families(prof, T: int) -> dict:
    d = prof.d
    out = {"constant": path_kl(prof, Schedule.constant(d, T)), "cosine": path_kl(prof, cosine_schedule(d, T)),
           "log-linear (MDLM grid)": path_kl(prof, loglinear_grid(T))}
    out["geometric"] = path_kl(prof, geometric_schedule(d, T)) if d >= 3 and 3 <= T <= d else None
    return out


#: Longest profile whose default table lists every T = 1..d (above it: log-spaced T).
ALL_STEPS_D = 32


def default_steps(d: int) -> list[int]:
    """Every T = 1..d for d <= ALL_STEPS_D, else 1, 2, 4, ... (powers of two) and d."""
    if d <= ALL_STEPS_D:
        return list(range(1, d + 1))
    return sorted({min(1 << i, d) for i in range(d.bit_length())} | {d})


def run(args) -> dict:
    given = law_given(args)
    if args.profile is not None and given:
        raise UsageError(f"--profile, {law_option(args)}: give a profile file or a law, not both")
    if args.profile is not None:
        check_law_options(args)
        prof, _ = load_profile(args.profile)
        source = f"profile file {args.profile}"
    elif given:
        law, name, source = load_law(args)
        prof = information_profile(law)
    else:
        raise UsageError("--profile: give a profile file (CSV/JSON) or a law (--table, --data or --family)")
    d = prof.d
    if args.steps is not None and not 1 <= args.steps <= d:
        raise UsageError(f"--steps: expected 1 <= T <= d = {d}, got {args.steps}")
    Ts = [args.steps] if args.steps is not None else default_steps(d)
    fr = pareto_frontier(prof, max(Ts))
    rows = []
    for T in progress(Ts, quiet=args.quiet, desc="schedules", unit="T"):
        s = fr.schedule(T)
        rows.append({"steps": T, "sizes": list(s.sizes), "path_kl": float(fr.path_kl[T - 1]),
                     "families": _families(prof, T)})
    return {"source": source, "d": d, "nonincreasing": prof.is_nonincreasing(), "profile": prof.values.tolist(),
            "schedules": rows}


def render(result: dict) -> str:
    fams = list(result["schedules"][0]["families"])
    lines = [f"{result['source']} (d = {result['d']}); path KL in nats (Riemann defect of the profile)"]
    if not result["nonincreasing"]:
        lines.append("note: the profile is not non-increasing (a noisy estimate?): the exact DP is used")
    head = f"{'T':>4}  {'optimal':>10}  " + "  ".join(f"{f[:12]:>12}" for f in fams) + "  optimal sizes"
    lines.append(head)
    for r in result["schedules"]:
        vals = "  ".join(f"{'-' if v is None or (isinstance(v, float) and math.isnan(v)) else f'{v:.6f}':>12}"
                         for v in r["families"].values())
        lines.append(f"{r['steps']:>4}  {r['path_kl']:10.6f}  {vals}  {r['sizes']}")
    return "\n".join(lines)
