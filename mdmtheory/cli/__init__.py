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
import sys
from pathlib import Path

from ._common import UsageError, dumps, plain_words

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


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help"):
        argv = ["demo", *argv]  # bare `mdmtheory [--d N]` runs the main job
    # only the command that runs is imported (`mdmtheory --help` imports none)
    parser = build_parser([argv[0]] if argv[0] in COMMANDS else [])
    args, extra = parser.parse_known_args(argv)
    if extra:  # named by the command that refused them: "mdmtheory profile: error: ..."
        getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help()
        return 0
    mod = args._module
    try:
        result = mod.run(args)
    except (UsageError, ValueError, FileNotFoundError, OSError) as exc:
        msg = (_os_error_words(exc, args) if isinstance(exc, OSError) else None) or plain_words(exc) or \
            type(exc).__name__
        print(f"mdmtheory {args.command}: error: {msg}", file=sys.stderr)
        return 2
    if result is not None:  # None: nothing to print (e.g. a torchrun rank other than 0)
        try:
            print(dumps(result) if args.json else mod.render(result), flush=True)
        except BrokenPipeError:
            _quiet_broken_pipe()
    return 0


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
