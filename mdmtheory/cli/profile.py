"""``mdmtheory profile``: the exact information profile of a law, with H(X), TC and DTC."""

from __future__ import annotations

import argparse
import csv

from ._common import check_output, UsageError
from ._inputs import add_law_arguments, load_law

HELP = "exact information profile phi_m of a law (table, token sequences or named family)"
EXAMPLE = "mdmtheory profile --family markov --d 8 --csv phi.csv"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_law_arguments(parser)
    parser.add_argument("--csv", metavar="OUT.csv", help="also write the profile as CSV (m,phi): input of 'schedule'")
    parser.add_argument("--overwrite", action="store_true", help="--csv: replace an existing file (else refused)")


def run(args) -> dict:
    from ..information.entropies import dual_total_correlation, total_correlation
    from ..information.profile import information_profile

    if args.overwrite and args.csv is None:
        raise UsageError("--overwrite: only with --csv (the one file profile writes)")
    path = None if args.csv is None else check_output(args.csv, "--csv", overwrite=args.overwrite)
    law, name, source = load_law(args)
    prof = information_profile(law)
    out = {
        "name": name,
        "source": source,
        "d": law.d,
        "K": law.K,
        "entropy": prof.entropy,
        "tc": total_correlation(law),
        "dtc": dual_total_correlation(law),
        "profile": prof.values.tolist(),
        "curve": prof.curve.tolist(),
    }
    if path is not None:
        with path.open("w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["m", "phi"])
            w.writerows([m, repr(float(v))] for m, v in enumerate(prof.values))
        out["csv"] = str(path)
    return out


def render(result: dict) -> str:
    lines = [
        f"{result['name']}: {result['source']}",
        f"H(X) = {result['entropy']:.6f} nats   TC = {result['tc']:.6f}   DTC = {result['dtc']:.6f}",
        f"{'m':>4}  {'phi_m':>10}  {'Z(m) = phi_0 - phi_m':>20}",
    ]
    lines += [f"{m:>4}  {v:10.6f}  {z:20.6f}" for m, (v, z) in enumerate(zip(result["profile"], result["curve"]))]
    if "csv" in result:
        lines.append(f"wrote {result['csv']}")
    return "\n".join(lines)
