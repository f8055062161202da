"""What every command shares: one-line errors with exit code 2, JSON output, progress bars.

A command is a module ``mdmtheory.cli.<name>`` with

* ``HELP`` — one line for ``mdmtheory --help``;
* ``EXAMPLE`` — one runnable example, shown by ``mdmtheory <name> --help``;
* ``add_arguments(parser)`` — its own arguments (``--json`` and ``--quiet`` are added for it);
* ``run(args) -> dict | None`` — calls public library functions and returns a JSON-able dict
  (exactly what ``--json`` prints); user errors raise :class:`UsageError` or ``ValueError``;
* ``render(result) -> str`` — the human-readable text of that dict.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np

__all__ = ["UsageError", "to_jsonable", "dumps", "progress"]


class UsageError(ValueError):
    """A user error the CLI reports as one line on stderr with exit code 2."""


def to_jsonable(obj):
    """numpy scalars/arrays, tuples and non-finite floats made JSON-safe (inf -> "inf")."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return x
    return obj


def dumps(result: dict) -> str:
    return json.dumps(to_jsonable(result), indent=2, sort_keys=False)


def progress(iterable=None, *, quiet: bool = False, **kwargs):
    """A tqdm bar on stderr, silent when stderr is not a terminal or with ``--quiet``."""
    from tqdm.auto import tqdm

    disable = quiet or not sys.stderr.isatty()
    return tqdm(iterable, disable=disable, file=sys.stderr, **kwargs)
