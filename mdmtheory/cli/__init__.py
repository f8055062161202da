"""Command line: ``mdmtheory <command> [options]``, a thin layer over the library.

``mdmtheory`` alone (or ``python -m mdmtheory``, ``make demo``) runs the main job. Every
command has ``--json`` (prints exactly the dict its ``run`` returned) and ``--quiet``; every
user error is one line on stderr and exit code 2. See :mod:`mdmtheory.cli._common` for how a
command module is written.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import os
import re
import sys
from pathlib import Path

from ._common import UsageError, dumps, plain_words, take_notes

__all__ = ["main", "COMMANDS"]

# command name -> module under mdmtheory.cli (imported only when used)
COMMANDS = {
    "demo": "demo",
    "profile": "profile",
    "exact": "exact",
    "bounds": "bounds",
    "schedule": "schedule",
    "estimate": "estimate",
    "report": "report",
    "design": "design",
    "train": "train",
    "tune": "tune",
}


def _load(name: str):
    return importlib.import_module(f".{COMMANDS[name]}", __name__)


def _help(name: str) -> str:
    """The one-line ``HELP`` of a command, read from its module's source without importing it
    (a command module imports the wings it runs: ``mdmtheory --help`` lists every command and
    must not load the library; issue 31 item 14). Falls back to importing the module when its
    ``HELP`` is not a plain string literal."""
    spec = importlib.util.find_spec(f".{COMMANDS[name]}", __name__)
    try:
        tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
        for node in tree.body:
            if (isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["HELP"]
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                return node.value.value
    except (OSError, SyntaxError, TypeError):
        pass
    return _load(name).HELP


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``mdmtheory CMD: error: ...`` on stderr, exit code 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


def build_parser(commands=None) -> argparse.ArgumentParser:
    """The ``mdmtheory`` parser. ``commands``: names of the commands whose modules are
    imported and whose options are added, the others are listed by their help line only
    (:func:`main` names the one command that runs, or none for ``mdmtheory --help``);
    default: every command in full."""
    load = set(COMMANDS) if commands is None else set(commands)
    if not load <= set(COMMANDS):
        raise ValueError(f"commands: expected names among {', '.join(COMMANDS)}, got {sorted(load - set(COMMANDS))}")
    parser = _Parser(
        prog="mdmtheory",
        description="Exact and Monte Carlo verification of masked-diffusion theory.",
        epilog="Run 'mdmtheory COMMAND --help' for an example of each command.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if name not in load:
            sub.add_parser(name, help=_help(name))
            continue
        mod = _load(name)
        p = sub.add_parser(
            name,
            help=mod.HELP,
            description=mod.HELP,
            epilog=f"example:\n  {mod.EXAMPLE}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        mod.add_arguments(p)
        p.add_argument("--json", action="store_true", help="print the result as one JSON object")
        p.add_argument("--quiet", action="store_true", help="no progress bars")
        p.set_defaults(_module=mod, _parser=p)
    return parser


#: glibc ``mallopt`` parameters (malloc.h) and the values :func:`_tune_allocator` sets.
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_MMAP_THRESHOLD = 32 << 20  # glibc's largest (HEAP_MAX / 2 on 64-bit): arrays up to 32 MiB come from the heap
_TRIM_THRESHOLD = 1 << 30  # freed heap memory up to 1 GiB is kept for the next array, not returned
_TOP_PAD = 64 << 20


def _tune_allocator() -> bool:
    """Keep freed numpy temporaries in the process instead of returning each to the kernel.

    The default report spent 12-14 s of system time beside 58 s of user time (issue 39 item 7,
    benchmarks/RESULTS.md §19). Per-thread accounting put all of it in the main thread (5
    threads, the BLAS and torch pools idle: no oversubscription on that machine), with 0.7
    million minor page faults: glibc serves an allocation above its mmap threshold (128 KiB,
    raised only as blocks are freed) with a fresh mmap and unmaps it on free, so every large
    temporary of the exact laws faults in zeroed pages again (transparent huge pages: 2 MiB at
    a time). A fixed 32 MiB threshold and a 1 GiB trim threshold keep those blocks on the heap
    for reuse: 3 s of system time, 0.17 million faults, the same user time and output.

    Called once by :func:`main` (the command line), never at import of the library: a program
    that imports mdmtheory keeps its own allocator settings. Linux glibc only; elsewhere (or
    without ctypes) a no-op. Returns whether the settings were applied."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError, ImportError):  # musl or no libc symbol: nothing to tune
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return all(mallopt(k, v) == 1 for k, v in ((_M_MMAP_THRESHOLD, _MMAP_THRESHOLD),
                                                (_M_TRIM_THRESHOLD, _TRIM_THRESHOLD), (_M_TOP_PAD, _TOP_PAD)))


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        argv = ["demo", *argv]  # bare `mdmtheory [--d N]` runs the main job
    argv = _glue_negative_lists(argv)
    # only the command that runs is imported (`mdmtheory --help` imports none)
    parser = build_parser([argv[0]] if argv[0] in COMMANDS else [])
    args, extra = parser.parse_known_args(argv)
    if extra:  # named by the command that refused them: "mdmtheory profile: error: ..."
        getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help()
        return 0
    mod = args._module
    if not any(a in ("-h", "--help") for a in argv):  # a command that runs (--help ends in the parser)
        _tune_allocator()
    take_notes()  # notes of an earlier call in the same process (tests) are not this one's
    try:
        result = mod.run(args)
    except (UsageError, ValueError, FileNotFoundError, OSError) as exc:
        msg = (_os_error_words(exc, args) if isinstance(exc, OSError) else None) or plain_words(exc) or \
            type(exc).__name__
        take_notes()  # the refusal is the only line
        print(f"mdmtheory {args.command}: error: {msg}", file=sys.stderr)
        return 2
    except BaseException:
        take_notes()
        raise
    for line in take_notes():
        print(line, file=sys.stderr)
    if result is not None:  # None: nothing to print (e.g. a torchrun rank other than 0)
        try:
            print(dumps(result) if args.json else mod.render(result), flush=True)
        except BrokenPipeError:
            _quiet_broken_pipe()
    return 0


#: A value that starts with a minus and holds a comma: a list of numbers (``-1,7``), which
#: argparse would read as an option ("expected one argument").
_NEGATIVE_LIST = re.compile(r"^-[0-9.][0-9.eE+-]*(,[-0-9.eE+]*)+$")


def _glue_negative_lists(argv: list[str]) -> list[str]:
    """``--sizes -1,7`` -> ``--sizes=-1,7``: argparse takes a value starting with ``-`` for an
    option unless it is one plain negative number, so a list whose first number is negative
    reached the user as "expected one argument" (issue 39 item 3); glued, the option reads it
    and its own check names what is wrong with the value."""
    out = []
    for i, a in enumerate(argv):
        if out and _NEGATIVE_LIST.match(a) and out[-1].startswith("--") and "=" not in out[-1] and i > 0:
            out[-1] = f"{out[-1]}={a}"
        else:
            out.append(a)
    return out


def _os_error_words(exc: OSError, args) -> str | None:
    """An OSError about a file the user named (a name too long, a folder without permission),
    as one line naming the option that gave it: ``--model: File name too long: '1000...'``."""
    name = getattr(exc, "filename", None)
    if not isinstance(name, str) or not name:
        return None
    parser = getattr(args, "_parser", None)
    for action in getattr(parser, "_actions", ()):
        value = getattr(args, action.dest, None)
        if action.option_strings and isinstance(value, str) and value and (name == value or name.startswith(value)):
            shown = repr(name) if len(name) <= 80 else repr(name[:60]) + f"... ({len(name)} characters)"
            return f"{action.option_strings[0]}: {exc.strerror or type(exc).__name__}: {shown}"
    return None


def _quiet_broken_pipe() -> None:
    """The reader went away (``mdmtheory ... | head``): the standard handling of EPIPE —
    point stdout at devnull so the interpreter's final flush does not raise again, and
    exit quietly (the result was the reader's to cut short, not an error of ours)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor (tests)
        pass
