"""Argument checks shared by the modules: clear ValueErrors that name the argument."""

from __future__ import annotations

import math
import numbers

import numpy as np


def int_arg(value, name: str, minimum: int, maximum: int | None = None, hint: str = "") -> int:
    """An integer argument in ``minimum..maximum`` (bools and floats are refused)."""
    rng = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name}: expected an integer {rng}, got {value!r}{hint}")
    value = int(value)
    if value < minimum or (maximum is not None and value > maximum):
        raise ValueError(f"{name}: expected an integer {rng}, got {value}{hint}")
    return value


def real_arg(value, name: str) -> float:
    """A finite real scalar (bools refused)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}: expected a finite real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name}: expected a finite real number, got {value}")
    return value
