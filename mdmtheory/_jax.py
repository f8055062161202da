"""JAX in float64 without flipping the caller's global configuration."""

from __future__ import annotations

import contextlib

import jax


def x64():
    """Context manager enabling 64-bit JAX types for the duration of a call.

    Uses ``jax.enable_x64`` (JAX >= 0.6) or ``jax.experimental.enable_x64`` (older); the
    caller's setting is restored on exit either way.
    """
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(True)
    try:  # pragma: no cover - older JAX
        from jax.experimental import enable_x64

        return enable_x64()
    except ImportError:  # pragma: no cover
        return contextlib.nullcontext()
