"""What every command shares: one-line errors with exit code 2, JSON output, progress bars.

A command is a module ``mdmtheory.cli.<name>`` with

* ``HELP`` — one line for ``mdmtheory --help``;
* ``EXAMPLE`` — one runnable example, shown by ``mdmtheory <name> --help``;
* ``add_arguments(parser)`` — its own arguments (``--json`` and ``--quiet`` are added for it);
* ``run(args) -> dict | None`` — calls public library functions and returns a JSON-able dict
  (exactly what ``--json`` prints); user errors raise :class:`UsageError` or ``ValueError``;
* ``render(result) -> str`` — the human-readable text of that dict.

A command that writes files checks every output path with :func:`check_output` before it
does any work (a missing folder is refused, never created), so a long run is never lost to
a typo in ``--out``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path

__all__ = ["UsageError", "note", "take_notes", "check_output", "options_for", "to_jsonable", "dumps", "progress", "renamed", "say_renamed",
           "plain_words"]


#: Light copies of the library constants the parsers show in ``--help``: building a parser
#: imports no wing (issue 39 item 7: a subcommand's ``--help`` cost 0.8-1.7 s of CPU, numpy,
#: scipy.stats and the wings). tests/cli/test_cli_cost.py checks each equals its source.
#: :data:`mdmtheory.samplers.PLANNERS` (the built-in planners; one registered at run time is
#: accepted by the commands but not listed in their help):
PLANNER_NAMES = ("bernoulli", "confidence", "dilated", "entropy", "left_to_right", "margin", "random",
                 "sample_then_select")
#: :data:`mdmtheory.report.report.DEFAULT_PLANNERS`
DEFAULT_PLANNERS = ("random", "left_to_right", "confidence", "margin", "entropy")
#: :data:`mdmtheory.laws.joint.MAX_OUTCOMES` and :data:`mdmtheory.design.profile.EXACT_LIMIT`
MAX_OUTCOMES = 1 << 24
EXACT_LIMIT = 1 << 24
#: :data:`mdmtheory.exports.formats.FORMATS`
EXPORT_FORMATS = ("json", "llada", "dream", "mdlm", "dllm")


class UsageError(ValueError):
    """A user error the CLI reports as one line on stderr with exit code 2."""


#: Notes a command leaves for the user (e.g. "prompts were left-padded"): printed on stderr
#: by :func:`mdmtheory.cli.main` once the command has succeeded, dropped when it fails, so a
#: refusal is the only line (issue 39 item 3).
_NOTES: list[str] = []


def note(text: str) -> None:
    """Leave a one-line note for the end of a successful command (see :data:`_NOTES`)."""
    _NOTES.append(" ".join(str(text).split()))


def take_notes() -> list[str]:
    """The notes left so far, emptied."""
    out = list(_NOTES)
    _NOTES.clear()
    return out


def renamed_line(old: str, new: str) -> str:
    """The line that says an old spelling works for one release (docs/design.md §4)."""
    return f"mdmtheory: {old} is now {new} (the old spelling works for one release)"


def say_renamed(old: str, new: str) -> None:
    """The one stderr line of an old spelling (it works for one release; docs/design.md §4,
    "Command-line vocabulary")."""
    print(renamed_line(old, new), file=sys.stderr)


def renamed(parser, old: str, new: str, **kwargs) -> None:
    """Accept the old option name ``old`` as ``new`` (same ``dest``, hidden from ``--help``):
    it works as before and says so once on stderr (:func:`say_renamed`)."""
    import argparse

    base = kwargs.pop("action", "store")
    kind = {"store": argparse._StoreAction, "store_true": argparse._StoreTrueAction}[base]

    class _Renamed(kind):
        def __call__(self, parser_, namespace, values, option_string=None):
            say_renamed(old, new)
            super().__call__(parser_, namespace, values, option_string)

    dest = kwargs.pop("dest", new.lstrip("-").replace("-", "_"))
    parser.add_argument(old, action=_Renamed, dest=dest, help=argparse.SUPPRESS, **kwargs)


#: numpy scalar reprs a library message may carry ("np.float64(0.5)"), shown as plain numbers.
_NP_SCALAR = re.compile(r"\bnp\.(?:float|int|uint|bool_?|str_)\w*\(([^()]*)\)")


def plain_words(msg: str) -> str:
    """A library message in the user's terms: one line, numpy scalars as plain numbers
    (``np.float64(0.5)`` -> ``0.5``), the Python keyword of the mask id as its option."""
    msg = " ".join(str(msg).split())
    msg = _NP_SCALAR.sub(r"\1", msg)
    return msg.replace("pass mask_id=...", "give --mask-id ID").replace("pass mask_id=", "give --mask-id ID")


def check_output(path, option: str, *, suffix: str | None = None, overwrite: bool | None = None) -> Path:
    """``path`` checked as a file the command will write, before any work.

    Refused (:class:`UsageError` naming ``option``): a path whose folder does not exist
    (it is not created), is not a folder or is not writable; a path that is an existing
    folder; with ``suffix``, a path that does not end with it; with ``overwrite=False``, an
    existing file (the command's ``--overwrite`` allows replacing it; None: no such option).
    """
    text = os.fspath(path)
    if not text or "\0" in text:
        raise UsageError(f"{option}: expected a file path, got {text!r}")
    p = Path(text)
    if suffix is not None and not text.endswith(suffix):
        raise UsageError(f"{option}: expected a {suffix} path, got {text!r}")
    if p.is_dir():
        raise UsageError(f"{option}: {text!r} is a folder; give a file path inside it")
    if overwrite is False and (p.exists() or p.is_symlink()):
        raise UsageError(f"{option}: {text!r} exists; give --overwrite to replace it, or another path")
    parent = p.parent
    if not parent.exists():
        raise UsageError(f"{option}: the folder {str(parent)!r} does not exist; create it first (it is never created "
                         "for you) or choose another path")
    if not parent.is_dir():
        raise UsageError(f"{option}: {str(parent)!r} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{option}: the folder {str(parent)!r} is not writable")
    return p


def check_folder_output(path, option: str, *, keep=(), overwrite: bool = False) -> Path:
    """``path`` checked as a folder the command will write into, before any work: a new
    folder (its parent must exist; it is created when written) or an existing empty one;
    with ``overwrite`` (the command's ``--overwrite``) one that holds only the files in
    ``keep``, which are replaced (without it they are refused: nothing is overwritten silently)."""
    text = os.fspath(path)
    if not text or "\0" in text:
        raise UsageError(f"{option}: expected a folder path, got {text!r}")
    p = Path(text)
    if p.exists():
        if not p.is_dir():
            raise UsageError(f"{option}: {text!r} is a file; give a folder (new or empty)")
        other = sorted(q.name for q in p.iterdir() if q.name not in keep)
        kept = sorted(q.name for q in p.iterdir() if q.name in keep)
        if kept and not other and not overwrite:
            raise UsageError(f"{option}: the folder {text!r} already holds {', '.join(kept)}; give --overwrite to "
                             "replace it, or a new or empty folder")
        if other:
            raise UsageError(f"{option}: the folder {text!r} is not empty ({', '.join(other[:3])}"
                             f"{', ...' if len(other) > 3 else ''}); give a new or empty folder")
        if not os.access(p, os.W_OK | os.X_OK):
            raise UsageError(f"{option}: the folder {text!r} is not writable")
        return p
    parent = p.parent
    if not parent.is_dir():
        raise UsageError(f"{option}: the folder {str(parent)!r} does not exist; create it first or choose another path")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{option}: the folder {str(parent)!r} is not writable")
    return p


@contextmanager
def options_for(mapping: dict, default: str | None = None):
    """Library ``ValueError("name: ...")`` raised inside the block, re-raised as a
    :class:`UsageError` naming the command-line option ``mapping[name]`` (or ``default``
    for any other message), so the user reads the option they typed."""
    try:
        yield
    except UsageError:
        raise
    except ValueError as exc:
        msg = " ".join(str(exc).split())
        name, sep, rest = msg.partition(": ")
        if sep and name in mapping:
            raise UsageError(f"{mapping[name]}: {rest}") from None
        if default is not None:
            raise UsageError(f"{default}: {msg}") from None
        raise


def to_jsonable(obj):
    """numpy scalars/arrays, tuples and non-finite floats made JSON-safe (inf -> "inf"): the
    one convention of every record's ``to_dict`` (:func:`mdmtheory._estimate.jsonable`)."""
    from .._estimate import jsonable

    return jsonable(obj)


def dumps(result: dict) -> str:
    return json.dumps(to_jsonable(result), indent=2, sort_keys=False)


def progress(iterable=None, *, quiet: bool = False, **kwargs):
    """A tqdm bar on stderr, silent when stderr is not a terminal or with ``--quiet``."""
    from tqdm.auto import tqdm

    disable = quiet or not sys.stderr.isatty()
    return tqdm(iterable, disable=disable, file=sys.stderr, **kwargs)
