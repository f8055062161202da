"""Inputs shared by the commands: laws (``.npy`` tables, token-sequence files, named
families), profiles (CSV/JSON) and plans (sizes, constant steps, reveal-time grids).

Every reader raises :class:`~mdmtheory.cli._common.UsageError` naming the option and the fix.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
from pathlib import Path

import numpy as np

from ._common import MAX_OUTCOMES, PLANNER_NAMES, renamed, UsageError

# The library wings are imported inside the functions that use them: the parser (``--help``)
# is built from this module and must not load them (issue 39 item 7).


def _families():
    from ..laws import families

    return families

__all__ = ["FAMILIES", "MAX_ALPHABET", "MAX_SCHEDULE_D", "add_law_arguments", "add_token_arguments", "load_law",
           "read_tokens", "load_profile", "law_given", "MAX_LAW_D", "DATA_HELP", "check_planner", "planner_help", "check_law_options", "law_option", "plan_option", "add_plan_arguments", "load_plan", "int_list", "float_list"]

#: Named laws for ``--family`` (each takes d).
FAMILIES = {
    "markov": ("sticky binary Markov chain, P = [[.9, .1], [.2, .8]]",
               lambda d: _families().markov_chain([[0.9, 0.1], [0.2, 0.8]], d)),
    "parity": ("uniform bits conditioned on even parity", lambda d: _families().parity(d)),
    "repeated": ("one uniform bit copied d times", lambda d: _families().repeated(d)),
    "noisy-bit": ("a uniform bit, each copy flipped with probability 0.1",
                  lambda d: _families().noisy_repeated_bit(d, 0.1)),
    "ising": ("Ising chain, coupling 0.6, field 0.2",
              lambda d: _families().ising_chain(d, coupling=0.6, field=0.2)),
    "dirichlet": ("random law, Dirichlet(0.5) table, seed 0",
                  lambda d: _families().dirichlet(d, 2, alpha=0.5, seed=0)),
}

#: Largest table the exact commands accept (K^d outcomes): the package's dense limit
#: (:data:`mdmtheory.laws.joint.MAX_OUTCOMES`, copied light in ``_common``), so the 26^5 word
#: law fits (its exact work takes seconds).

#: Largest alphabet a token file may imply when no model fixes it (tokens 0..MAX_ALPHABET-1,
#: or --K up to it): checked right after reading, before any table, oracle or embedding of
#: that size is built (a stray token 10^9 would otherwise ask for a 10^9-letter alphabet).
MAX_ALPHABET = 1 << 16

#: Longest profile ``mdmtheory schedule`` designs for: the log-linear comparison column
#: (the Bernoulli path KL of an MDLM grid) costs of order d^2 T, about 2 s at d = 256, T = 256.
MAX_SCHEDULE_D = 256

#: Largest profile value ``schedule --profile`` accepts (nats): far above any cross-entropy
#: a model reaches (-log 1e-300 is 691 nats), small enough that no sum of d * T values overflows.
MAX_PROFILE_VALUE = 1e12

#: Relative tolerance of the profile checks of ``schedule --profile`` (``>= 0`` and
#: non-increasing), scaled by max(1, max |phi|).
PROFILE_TOL = 1e-9


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


def add_token_arguments(parser, *, K: bool = True) -> None:
    """The options of every command that reads a token file: ``--chars`` (and ``--K``)."""
    parser.add_argument("--chars", action="store_true",
                        help="token files are text whose characters are the tokens (one sequence per line)")
    if K:
        parser.add_argument("--K", type=int, default=None,
                            help=f"alphabet size of integer token files (default max token + 1; at most {MAX_ALPHABET})")


#: Longest --family law of the exact commands (--d): its K^d table and sampler laws take seconds.
MAX_LAW_D = 16

#: What --data is, in every command's help (the one token-file reader, :func:`read_tokens`).
DATA_HELP = ("token rows: .npy (n, d) integers, or text with one sequence of whitespace- or comma-separated "
             "integers per line (characters with --chars)")


def add_law_arguments(parser: argparse.ArgumentParser, *, required: bool = True, data_help: str | None = None,
                      tokens_dest: str = "data") -> None:
    g = parser.add_argument_group("law (give one)")
    g.add_argument("--table", metavar="FILE.npy", help="joint probability table of shape (K,)*d")
    g.add_argument("--data", metavar="FILE", help=data_help or f"{DATA_HELP}; the law is their empirical law")
    renamed(g, "--tokens", "--data", metavar="FILE", dest=tokens_dest)
    g.add_argument("--family", choices=sorted(FAMILIES), help="a named law (with --d)")
    g.add_argument("--d", type=int, default=None,
                   help=f"sequence length for --family, 2..{MAX_LAW_D} (default 8; the exact commands' limit)")
    add_token_arguments(g)
    parser.set_defaults(_law_required=required)


def _message(exc) -> str:
    msg = " ".join(str(exc).split())
    return msg[len("DATA: "):] if msg.startswith("DATA: ") else msg


def _check_npy_header(path: str, option: str) -> None:
    """A .npy file's header is believed only as far as the file's size backs it."""
    try:
        with open(path, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _, dtype = read(fh)
            data = os.fstat(fh.fileno()).st_size - fh.tell()
    except (ValueError, OSError, SyntaxError, TypeError) as exc:
        raise UsageError(f"{option}: {path!r} is not a readable .npy array ({_message(exc)})") from None
    cells = math.prod(shape)
    if dtype.hasobject or cells * dtype.itemsize > data:
        raise UsageError(f"{option}: the .npy header of {path!r} claims shape {shape} of {dtype} "
                         f"({cells * dtype.itemsize:,} bytes) but the file holds {data:,} bytes of data: "
                         "a truncated or corrupt file")


def read_tokens(path: str, option: str = "--data", *, chars: bool = False, K: int | None = None,
                alphabet=None, limit: int = MAX_ALPHABET) -> tuple[np.ndarray, tuple]:
    """Token sequences (n, d) and their alphabet from a ``.npy`` or text file: the one
    reader of every command (:func:`mdmtheory.data.load_sequences`), errors named
    after ``option``.

    ``chars``: each character is a token; with ``alphabet`` (a model's recorded alphabet)
    character c is outcome ``alphabet.index(c)``, else the alphabet is the sorted characters
    seen. ``K`` (integer tokens): the alphabet size, else max token + 1, at most ``limit``
    (:data:`MAX_ALPHABET` unless a model's own alphabet is larger).
    """
    from ..data.datasets import load_sequences

    if K is not None and chars:
        raise UsageError("--K: only for integer tokens; with --chars the alphabet is the characters seen")
    if K is not None and not 2 <= K <= MAX_ALPHABET:
        raise UsageError(f"--K: expected an alphabet size in 2..{MAX_ALPHABET}, got {K}")
    if os.fspath(path).endswith(".npy") and os.path.isfile(path):
        if chars:
            raise UsageError(f"--chars: only for text files; {path!r} is a .npy array of integer tokens")
        _check_npy_header(path, option)
    # without K the reader is given the limit as K: it builds the alphabet tuple(range(K)),
    # so a stray token 10^9 must not be allowed to ask for 10^9 of them
    cap = K if K is not None or chars else limit
    try:
        seq, seen = load_sequences(path, chars=chars, K=cap)
    except FileNotFoundError:
        raise UsageError(f"{option}: no such file {path!r}") from None
    except (ValueError, OSError) as exc:
        msg = _message(exc)
        if K is None and not chars and f"out of range 0..{limit - 1} " in msg:
            raise UsageError(f"{option}: {msg.split(';')[0]}: tokens are outcome indices 0..K-1 with K at most "
                             f"{limit:,} (map your tokens to 0..K-1 first)") from None
        raise UsageError(f"{option}: {msg}") from None
    except RecursionError:
        raise UsageError(f"{option}: cannot read {path!r}") from None
    if chars and alphabet is not None:
        index = {a: k for k, a in enumerate(alphabet)}
        missing = sorted(c for c in seen if c is not None and c not in index)
        if missing:
            shown = "".join(missing[:20]) + ("..." if len(missing) > 20 else "")
            raise UsageError(f"{option}: characters {shown!r} are not in the model's alphabet "
                             f"({''.join(str(a) for a in alphabet)!r})")
        lut = np.array([index.get(c, 0) for c in seen], dtype=np.int64)
        return lut[seq], tuple(alphabet)
    if K is None and not chars:
        seen = tuple(range(max(int(seq.max()) + 1, 2)))
    return seq, seen


def _check_size(K: int, d: int, option: str) -> None:
    if float(K) ** d > MAX_OUTCOMES:
        raise UsageError(f"{option}: K^d = {K}^{d} outcomes is too large for exact work (max {MAX_OUTCOMES:,}); "
                         "use 'mdmtheory estimate' (Monte Carlo) for larger laws")


#: The options that give a law, in the order they are named in errors.
LAW_SOURCES = ("table", "data", "family")


def law_given(args) -> bool:
    return any(getattr(args, o, None) is not None for o in LAW_SOURCES)


def check_law_options(args) -> None:
    """The options that only go with one law source are refused with another (never ignored)."""
    if getattr(args, "K", None) is not None and getattr(args, "data", None) is None:
        raise UsageError("--K: only with --data (a --table or --family law has its own alphabet)")
    if getattr(args, "chars", False) and getattr(args, "data", None) is None:
        raise UsageError("--chars: only with a token file (--data)")
    if getattr(args, "d", None) is not None and getattr(args, "family", None) is None:
        raise UsageError("--d: only with --family (a --table or --data law has its own length)")


def planner_help(extra: str) -> str:
    """``--planner``'s help: the names it accepts (the built-in planners, :data:`PLANNER_NAMES`:
    the help does not import the samplers), and ``extra``."""
    return f"planner name: {', '.join(sorted(PLANNER_NAMES))} ({extra})"


def check_planner(name: str, option: str = "--planner") -> None:
    """``name`` a registered planner (the names this command accepts), refused otherwise."""
    from ..samplers.planners import PLANNERS

    if name not in PLANNERS:
        raise UsageError(f"{option}: unknown planner {name!r}; choose one of {', '.join(sorted(PLANNERS))}")


def load_law(args, alphabet=None) -> tuple[Joint, str, str]:
    """(law, name, source) from ``--table``, ``--data`` or ``--family``; ``alphabet`` (a
    model's): ``--data --chars`` read through it, so the law's outcome k is the model's."""
    given = [o for o in LAW_SOURCES if getattr(args, o, None) is not None]
    if len(given) > 1:
        raise UsageError(f"--{given[0]}, --{given[1]}: give only one law")
    if not given:
        raise UsageError("--table, --data or --family: give one law (a .npy table, a token file or a named law)")
    check_law_options(args)
    if args.table is not None:
        from ..laws.joint import Joint

        p = Path(args.table)
        if not p.is_file():
            raise UsageError(f"--table: no such file {args.table!r}")
        try:
            table = np.load(p, allow_pickle=False, mmap_mode="r")  # the shape is checked before reading
        except (ValueError, OSError, SyntaxError, TypeError) as exc:
            raise UsageError(f"--table: cannot read {args.table!r} as a .npy array ({_message(exc)})") from None
        if table.ndim >= 1:
            _check_size(table.shape[0], table.ndim, "--table")
        table = np.array(table)
        try:
            law = Joint(table)
        except ValueError as exc:
            raise UsageError(f"--table: {_message(exc)}") from None
        return law, p.stem, f"joint table {p.name} (d = {law.d}, K = {law.K})"
    if args.data is not None:
        seq, seen = read_tokens(args.data, "--data", chars=args.chars, K=args.K,
                                alphabet=alphabet if args.chars else None)
        return empirical_law(seq, len(seen), args.data, seen if args.chars else None)
    d = 8 if args.d is None else args.d
    if not 2 <= d <= MAX_LAW_D:
        raise UsageError(f"--d: expected a length in 2..{MAX_LAW_D} (the exact commands' limit for --family), got {d}")
    text, make = FAMILIES[args.family]
    return make(d), f"{args.family} (d={d})", f"built-in family '{args.family}': {text}, d = {d}"


def empirical_law(seq: np.ndarray, K: int, path: str, letters=None, option: str = "--data") -> tuple[Joint, str, str]:
    """(law, name, source) of the empirical law of the rows ``seq`` (outcomes 0..K-1) read
    from ``path``; ``letters``: the characters of a ``--chars`` file, named in the source."""
    _check_size(K, seq.shape[1], option)
    try:
        law = _families().empirical(seq, K=K)
    except ValueError as exc:
        raise UsageError(f"{option}: {_message(exc)}") from None
    shown = f", alphabet {''.join(str(c) for c in letters if c is not None)!r}" if letters is not None else ""
    return law, Path(path).stem, (f"empirical law of {seq.shape[0]} sequences in {Path(path).name} "
                                  f"(d = {law.d}, K = {law.K}{shown})")


def load_profile(path: str, option: str = "--profile") -> tuple[Profile, np.ndarray | None]:
    """A profile from CSV (one value per row, or a header with a ``phi``/``value``/``c`` column
    and optionally a ``stderr`` column) or JSON (a list, or an object with ``values``, ``phi``
    or ``profile``, and optionally ``stderr``). Returns (profile, stderr or None).

    Refused, naming the first offending index m: a value below 0, or an increase
    phi_{m+1} > phi_m beyond the tolerance — :data:`PROFILE_TOL` relative, plus three
    standard errors of the difference when the file gives them (a noisy estimate).
    """
    from ..information.profile import Profile

    p = Path(path)
    if not p.is_file():
        raise UsageError(f"{option}: no such file {path!r}")
    stderr = None
    try:
        text = p.read_text(encoding="utf-8")
        if p.suffix == ".json":
            obj = json.loads(text)
            if isinstance(obj, dict):
                for key in ("values", "phi", "profile"):
                    if key in obj:
                        se = obj.get("stderr")
                        obj = obj[key]
                        stderr = None if se is None else [float(v) for v in se]
                        break
                else:
                    raise UsageError(f"{option}: JSON object needs a 'values', 'phi' or 'profile' list")
            if not isinstance(obj, list):
                raise UsageError(f"{option}: expected a JSON list of numbers (or an object with 'values'), "
                                 f"got {type(obj).__name__}")
            values = [float(v) for v in obj]
        else:
            rows = [r for r in csv.reader(text.splitlines()) if r and not r[0].startswith("#")]
            col, se_col = -1, None
            if rows and not _is_number(rows[0][-1]):
                head = [h.strip().lower() for h in rows[0]]
                col = next((head.index(k) for k in ("phi", "value", "values", "c", "cross_entropy") if k in head), -1)
                se_col = head.index("stderr") if "stderr" in head else None
                rows = rows[1:]
            values = [float(r[col]) for r in rows]
            if se_col is not None:
                stderr = [float(r[se_col]) for r in rows]
    except UsageError:
        raise
    except (ValueError, TypeError, IndexError, UnicodeDecodeError, RecursionError, csv.Error) as exc:
        raise UsageError(f"{option}: cannot read a profile from {path!r} ({_message(exc) or type(exc).__name__})") from None
    try:
        prof = Profile(values)
    except ValueError as exc:
        raise UsageError(f"{option}: {_message(exc)}") from None
    if prof.d > MAX_SCHEDULE_D:
        raise UsageError(f"{option}: {prof.d} values; the schedule command designs for d <= {MAX_SCHEDULE_D}")
    se = None
    if stderr is not None:
        se = np.asarray(stderr, dtype=np.float64)
        if se.shape != prof.values.shape or not np.all(np.isfinite(se)) or np.any(se < 0):
            raise UsageError(f"{option}: the stderr column must hold {prof.d} finite values >= 0")
    _check_profile(prof.values, se, option)
    return prof, se


def _check_profile(v: np.ndarray, se, option: str) -> None:
    """A profile (phi_m, or a model's c(m)) is >= 0 and non-increasing in m, up to tolerance."""
    big = np.flatnonzero(np.abs(v) > MAX_PROFILE_VALUE)
    if big.size:
        m = int(big[0])
        raise UsageError(f"{option}: value {v[m]:.6g} at m = {m} is beyond the maximum {MAX_PROFILE_VALUE:g} nats "
                         "of a profile")
    tol = PROFILE_TOL * max(1.0, float(np.abs(v).max()))
    neg = np.flatnonzero(v < -tol)
    if neg.size:
        m = int(neg[0])
        raise UsageError(f"{option}: value {v[m]:.6g} at m = {m} is negative; a profile (phi_m, or a model's "
                         "cross-entropy c(m)) is >= 0 nats")
    rise = np.diff(v)
    allowed = tol + (0.0 if se is None else 3.0 * np.sqrt(se[:-1] ** 2 + se[1:] ** 2))
    bad = np.flatnonzero(rise > allowed)
    if bad.size:
        m = int(bad[0])
        within = "" if se is None else " and three standard errors"
        raise UsageError(f"{option}: the profile increases from m = {m} to m = {m + 1} ({v[m]:.6g} -> {v[m + 1]:.6g}), "
                         f"beyond the tolerance{within}; a profile is non-increasing in m "
                         "(give phi_m or c(m) for m = 0..d-1, in order)")


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
    from ..schedules.plans import Grid, Schedule

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


def law_option(args) -> str:
    """The option that gave the law (for errors the library raises about it)."""
    return next((f"--{o}" for o in LAW_SOURCES if getattr(args, o, None) is not None), "--family")


def plan_option(args) -> str:
    """The option that gave the plan (default --steps)."""
    return next((f"--{o}" for o in ("sizes", "steps", "grid") if getattr(args, o, None) is not None), "--steps")


def plan_given(args) -> str:
    """The plan as the user wrote it (``--steps 2``, ``--sizes 1,2,3``, ``--grid 0,0.5,1``)."""
    for o in ("sizes", "steps", "grid"):
        v = getattr(args, o, None)
        if v is not None:
            return f"--{o} " + (",".join(f"{x:g}" if isinstance(x, float) else str(x) for x in v)
                                if isinstance(v, list) else str(v))
    return "--steps 2 (the default)"


def plan_dict(plan) -> dict:
    from ..schedules.plans import Schedule

    if isinstance(plan, Schedule):
        return {"kind": "schedule", "sizes": list(plan.sizes), "steps": plan.steps}
    return {"kind": "grid", "times": list(plan.times), "steps": plan.steps}


#: Largest --n-per-level and --n-path (draws; each is one model forward row).
MAX_DRAWS = 10**7


def check_draws(option: str, v: int) -> None:
    """At least 2 draws (a standard error needs two), at most MAX_DRAWS."""
    if not 2 <= v <= MAX_DRAWS:
        raise UsageError(f"{option}: expected a number of draws in 2..{MAX_DRAWS:,}, got {v}")


def check_seed(v: int) -> None:
    if not 0 <= v < 2**32:
        raise UsageError(f"--seed: expected an integer in 0..2**32-1, got {v}")
