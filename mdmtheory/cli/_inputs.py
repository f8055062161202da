"""Inputs shared by the commands: laws (``.npy`` tables, token-sequence files, named
families), profiles (CSV/JSON) and plans (sizes, constant steps, reveal-time grids).

Every reader raises :class:`~mdmtheory.cli._common.UsageError` naming the option and the fix.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np

from .. import families
from ..joint import Joint
from ..profile import Profile
from ..schedules import Grid, Schedule
from ._common import UsageError

__all__ = ["FAMILIES", "add_law_arguments", "load_law", "read_tokens", "load_profile", "add_plan_arguments",
           "load_plan", "int_list", "float_list"]

#: Named laws for ``--family`` (each takes d).
FAMILIES = {
    "markov": ("sticky binary Markov chain, P = [[.9, .1], [.2, .8]]",
               lambda d: families.markov_chain([[0.9, 0.1], [0.2, 0.8]], d)),
    "parity": ("uniform bits conditioned on even parity", families.parity),
    "repeated": ("one uniform bit copied d times", families.repeated),
    "noisy-bit": ("a uniform bit, each copy flipped with probability 0.1",
                  lambda d: families.noisy_repeated_bit(d, 0.1)),
    "ising": ("Ising chain, coupling 0.6, field 0.2", lambda d: families.ising_chain(d, coupling=0.6, field=0.2)),
    "dirichlet": ("random law, Dirichlet(0.5) table, seed 0", lambda d: families.dirichlet(d, 2, alpha=0.5, seed=0)),
}

#: Largest table the exact commands accept (K^d outcomes): the package's dense limit, so
#: the 26^5 word law fits (its exact work takes seconds).
from ..joint import MAX_OUTCOMES  # noqa: E402


def int_list(text: str) -> list[int]:
    """``"2,2,4"`` -> [2, 2, 4] (argparse type)."""
    try:
        return [int(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def float_list(text: str) -> list[float]:
    """``"0,0.5,1"`` -> [0.0, 0.5, 1.0] (argparse type)."""
    try:
        return [float(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def add_law_arguments(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    g = parser.add_argument_group("law (give one)")
    g.add_argument("--table", metavar="FILE.npy", help="joint probability table of shape (K,)*d")
    g.add_argument("--tokens", metavar="FILE",
                   help="token sequences (their empirical law): .npy (n, d) integers, or text with one "
                        "sequence of whitespace- or comma-separated integers per line")
    g.add_argument("--family", choices=sorted(FAMILIES), help="a named law (with --d)")
    g.add_argument("--d", type=int, default=8, help="sequence length for --family (default 8)")
    g.add_argument("--K", type=int, default=None, help="alphabet size for --tokens (default max token + 1)")
    parser.set_defaults(_law_required=required)


def read_tokens(path: str, option: str = "--tokens") -> np.ndarray:
    """Token sequences (n, d) from a ``.npy`` file or a text file (one sequence per line):
    :func:`mdmtheory.datasets.load_sequences`, its errors named after ``option``."""
    from ..datasets import load_sequences

    try:
        seq, _ = load_sequences(path)
    except (FileNotFoundError, ValueError) as exc:
        msg = " ".join(str(exc).split())
        raise UsageError(f"{option}: {msg[len('DATA: '):] if msg.startswith('DATA: ') else msg}") from None
    return seq


def _check_size(K: int, d: int, option: str) -> None:
    if float(K) ** d > MAX_OUTCOMES:
        raise UsageError(f"{option}: K^d = {K}^{d} outcomes is too large for exact work (max {MAX_OUTCOMES:,}); "
                         "use 'mdmtheory estimate' (Monte Carlo) for larger laws")


def load_law(args) -> tuple[Joint, str, str]:
    """(law, name, source) from ``--table``, ``--tokens`` or ``--family``."""
    given = [o for o in ("table", "tokens", "family") if getattr(args, o, None) is not None]
    if len(given) > 1:
        raise UsageError(f"--{given[0]}, --{given[1]}: give only one law")
    if not given:
        raise UsageError("law: give one of --table FILE.npy, --tokens FILE or --family NAME")
    if args.table is not None:
        p = Path(args.table)
        if not p.is_file():
            raise UsageError(f"--table: no such file {args.table!r}")
        try:
            table = np.load(p, allow_pickle=False, mmap_mode="r")  # the shape is checked before reading
        except (ValueError, OSError) as exc:
            raise UsageError(f"--table: cannot read {args.table!r} as a .npy array ({exc})") from None
        if table.ndim >= 1:
            _check_size(table.shape[0], table.ndim, "--table")
        table = np.array(table)
        try:
            law = Joint(table)
        except ValueError as exc:
            raise UsageError(f"--table: {exc}") from None
        return law, p.stem, f"joint table {p.name} (d = {law.d}, K = {law.K})"
    if args.tokens is not None:
        seq = read_tokens(args.tokens)
        K = args.K if args.K is not None else max(2, int(seq.max()) + 1)
        _check_size(K, seq.shape[1], "--tokens")
        try:
            law = families.empirical(seq, K=K)
        except ValueError as exc:
            raise UsageError(f"--tokens: {exc}") from None
        return law, Path(args.tokens).stem, (f"empirical law of {seq.shape[0]} sequences in {Path(args.tokens).name} "
                                             f"(d = {law.d}, K = {law.K})")
    if not 2 <= args.d <= 16:
        raise UsageError(f"--d: choose 2 <= d <= 16 for an exact law, got {args.d}")
    text, make = FAMILIES[args.family]
    return make(args.d), f"{args.family} (d={args.d})", f"built-in family '{args.family}': {text}, d = {args.d}"


def load_profile(path: str, option: str = "--profile") -> Profile:
    """A profile from CSV (one value per row, or a header with a ``phi``/``value``/``c`` column)
    or JSON (a list, or an object with ``values``, ``phi`` or ``profile``)."""
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"{option}: no such file {path!r}")
    text = p.read_text()
    try:
        if p.suffix == ".json":
            obj = json.loads(text)
            if isinstance(obj, dict):
                for key in ("values", "phi", "profile"):
                    if key in obj:
                        obj = obj[key]
                        break
                else:
                    raise UsageError(f"{option}: JSON object needs a 'values', 'phi' or 'profile' list")
            values = [float(v) for v in obj]
        else:
            rows = [r for r in csv.reader(text.splitlines()) if r and not r[0].startswith("#")]
            col = -1
            if rows and not _is_number(rows[0][-1]):
                head = [h.strip().lower() for h in rows[0]]
                col = next((head.index(k) for k in ("phi", "value", "values", "c", "cross_entropy") if k in head), -1)
                rows = rows[1:]
            values = [float(r[col]) for r in rows]
    except (ValueError, TypeError, IndexError, json.JSONDecodeError) as exc:
        if isinstance(exc, UsageError):
            raise
        raise UsageError(f"{option}: cannot read a profile from {path!r} ({' '.join(str(exc).split())})") from None
    try:
        return Profile(values)
    except ValueError as exc:
        raise UsageError(f"{option}: {exc}") from None


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def add_plan_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("plan (give one; default: --steps 2)")
    g.add_argument("--sizes", type=int_list, metavar="K1,K2,...", help="tokens revealed per step (sum d)")
    g.add_argument("--steps", type=int, metavar="T", help="constant schedule with T steps")
    g.add_argument("--grid", type=float_list, metavar="T0,...,TN", help="reveal-time grid (Bernoulli sampler)")


def load_plan(args, d: int):
    """A Schedule or Grid from ``--sizes``, ``--steps`` or ``--grid`` (default: 2 constant steps)."""
    given = [o for o in ("sizes", "steps", "grid") if getattr(args, o, None) is not None]
    if len(given) > 1:
        raise UsageError(f"--{given[0]}, --{given[1]}: give only one plan")
    try:
        if args.sizes is not None:
            if sum(args.sizes) != d:
                raise UsageError(f"--sizes: the sizes sum to {sum(args.sizes)}; they must sum to d = {d}")
            return Schedule(args.sizes)
        if args.grid is not None:
            return Grid(args.grid)
        T = 2 if args.steps is None else args.steps
        if not 1 <= T <= d:
            raise UsageError(f"--steps: expected 1 <= T <= d = {d}, got {T}")
        return Schedule.constant(d, T)
    except UsageError:
        raise
    except ValueError as exc:
        raise UsageError(f"--{given[0] if given else 'steps'}: {' '.join(str(exc).split())}") from None


def plan_dict(plan) -> dict:
    if isinstance(plan, Schedule):
        return {"kind": "schedule", "sizes": list(plan.sizes), "steps": plan.steps}
    return {"kind": "grid", "times": list(plan.times), "steps": plan.steps}
