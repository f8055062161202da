"""``mdmtheory demo``: exact numbers on embedded laws (``python -m mdmtheory`` runs it).

For each embedded law — a small stationary Markov chain and the global parity law — print
its information profile and, for several schedules (constant ones, two lopsided ones and the
exact optimum for T = 2 and 4), the exact KL of the sampler's output law, the path KL
(profile identity) and the Riemann bound, with the slack Riemann / path KL.
"""

from __future__ import annotations

import argparse

import numpy as np

from ._common import UsageError

HELP = "exact KL, path KL and the Riemann bound for several schedules on embedded laws"
EXAMPLE = "mdmtheory demo --d 8"

DEFAULT_D = 8


def default_laws(d: int = DEFAULT_D) -> dict:
    """The embedded default laws."""
    from ..laws import families

    sticky = np.array([[0.9, 0.1], [0.2, 0.8]])
    return {
        f"Markov chain (P = [[.9,.1],[.2,.8]], d={d})": families.markov_chain(sticky, d),
        f"global parity (d={d})": families.parity(d),
    }


def default_schedules(d: int) -> list[Schedule]:
    from ..schedules.plans import Schedule

    out = [Schedule.constant(d, T) for T in (1, 2, 4, d // 2, d) if 1 <= T <= d]
    out.append(Schedule((1,) * (d // 2) + (d - d // 2,)))  # cautious start, one big last step
    out.append(Schedule((d - d // 2,) + (1,) * (d // 2)))  # big first step
    seen, unique = set(), []
    for s in out:
        if s.sizes not in seen:
            seen.add(s.sizes)
            unique.append(s)
    return unique


def _fmt(x: float) -> str:
    """Six decimals; rounding noise below 5e-13 (e.g. -1e-17 for an exact 0) prints as 0."""
    return f"{0.0 if abs(x) < 5e-13 else x:10.6f}"


def law_rows(p, name: str) -> dict:
    """Profile and, per schedule, exact KL, path KL and Riemann bound of one law."""
    from ..information.divergence import kl, path_kl
    from ..information.entropies import dual_total_correlation, entropy, total_correlation
    from ..information.profile import information_profile
    from ..optimal.card import optimal_schedule
    from ..bounds import riemann_bound
    from ..samplers import sampler_law

    prof = information_profile(p)
    schedules = [(str(list(s.sizes)), s) for s in default_schedules(p.d)]
    for T in (2, 4):  # the exact optimum for the same step counts as two constant schedules
        if T < p.d:
            s = optimal_schedule(prof, steps=T)
            schedules.append((f"optimal T={T}: {list(s.sizes)}", s))
    rows = []
    for label, sched in schedules:
        rows.append(
            {
                "label": label,
                "sizes": list(sched.sizes),
                "steps": sched.steps,
                "exact_kl": kl(p, sampler_law(p, sched)),
                "path_kl": path_kl(prof, sched),
                "riemann": riemann_bound(prof, sched).value,
            }
        )
    return {
        "name": name,
        "entropy": entropy(p),
        "tc": total_correlation(p),
        "dtc": dual_total_correlation(p),
        "profile": prof.values.tolist(),
        "schedules": rows,
    }


def render_law(law: dict) -> str:
    lines = [
        f"== {law['name']}",
        f"   H(X) = {law['entropy']:.6f} nats   TC = {law['tc']:.6f}   DTC = {law['dtc']:.6f}",
        "   profile phi_m (m = 0..d-1): " + " ".join(f"{v:.4f}" for v in law["profile"]),
        f"   {'schedule':<32}{'T':>3}  {'exact KL':>10}  {'path KL':>10}  {'Riemann':>10}  {'slack':>7}",
    ]
    for r in law["schedules"]:
        pk, rb = r["path_kl"], r["riemann"]
        slack = f"{rb / pk:7.2f}" if pk > 1e-12 else "    n/a"
        lines.append(
            f"   {r['label']:<32}{r['steps']:>3}  {_fmt(r['exact_kl'])}  {_fmt(pk)}  {_fmt(rb)}  {slack}"
        )
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--d", type=int, default=DEFAULT_D, help="sequence length, 2..12 (default 8; demo's limit: its exact sampler laws take seconds)")


def run(args) -> dict:
    if not 2 <= args.d <= 12:
        raise UsageError(f"--d: expected a length in 2..12 (demo's limit: exact sampler laws in seconds), got {args.d}")
    return {"d": args.d, "laws": [law_rows(p, name) for name, p in default_laws(args.d).items()]}


def render(result: dict) -> str:
    head = [
        "mdmtheory: exact factorization error of the random-order masked-diffusion sampler",
        "(nats; exact KL <= path KL <= Riemann bound; slack = Riemann / path KL)",
        "",
    ]
    return "\n".join(head + [render_law(law) + "\n" for law in result["laws"]])
