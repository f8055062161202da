"""JAX, imported on first use, in float64 without flipping the caller's global configuration.

This is the one module of the package that names ``jax``. Importing it costs seconds (1.75 s
of CPU on a quiet 2-core machine, 8.5 s on a loaded one; benchmarks/RESULTS.md §14, "Cost of the main
job"), so ``import mdmtheory`` and ``mdmtheory --help`` must not pay it (issue 31 item 14).
The modules that compute with JAX write ``from .._jax import jax, jit, jnp, x64``:

* :data:`jax` and :data:`jnp` stand for ``jax`` and ``jax.numpy``; the real module is imported
  on the first attribute read (``jnp.sum``), so a function pays for JAX when it runs, not
  when its module is imported. ``xp is np`` tests on an array namespace are unchanged.
* :func:`jit` is ``jax.jit`` for module-level decorators: the function is wrapped by
  ``jax.jit`` on its first call (a decorator runs at import time, ``jax.jit`` would import JAX
  there).
* :func:`default_backend` is ``jax.default_backend()``, answered ``"cpu"`` without importing
  JAX where no accelerator can be found (the entropies choose their kernel by it).

This is the pattern of :class:`importlib.util.LazyLoader`, kept out of ``sys.modules`` so that
``"jax" in sys.modules`` still says whether JAX was imported (tests/contract/test_layout.py).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import os
import threading

__all__ = ["jax", "jnp", "jit", "x64", "default_backend"]


class _LazyModule:
    """Stands for the module ``name``; imports it on the first attribute read."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_module", None)

    def _load(self):
        module = self._module
        if module is None:
            module = importlib.import_module(self._name)
            object.__setattr__(self, "_module", module)
        return module

    def __getattr__(self, attr: str):
        return getattr(self._load(), attr)

    def __setattr__(self, attr: str, value) -> None:
        raise AttributeError(f"mdmtheory._jax: {self._name} is read-only here")

    def __dir__(self):
        return dir(self._load())

    def __repr__(self) -> str:
        state = "imported" if self._module is not None else "not imported yet"
        return f"<lazy module {self._name!r} ({state})>"


jax = _LazyModule("jax")
jnp = _LazyModule("jax.numpy")


class _LazyJit:
    """``jax.jit(fun, **options)``, built on the first call (or the first attribute read:
    ``.lower``, ``.clear_cache``, ...)."""

    def __init__(self, fun, options: dict):
        functools.update_wrapper(self, fun)
        self._fun, self._options, self._jitted = fun, options, None
        self._lock = threading.Lock()

    def _compiled(self):
        jitted = self._jitted
        if jitted is None:
            with self._lock:
                if self._jitted is None:
                    self._jitted = jax.jit(self._fun, **self._options)
                jitted = self._jitted
        return jitted

    def __call__(self, *args, **kwargs):
        return self._compiled()(*args, **kwargs)

    def __getattr__(self, attr: str):
        if attr.startswith("__") or attr in ("_fun", "_options", "_jitted", "_lock"):
            raise AttributeError(attr)
        return getattr(self._compiled(), attr)


def jit(fun=None, **options):
    """``jax.jit`` as a decorator that imports JAX on the decorated function's first call:
    ``@jit`` or ``@partial(jit, static_argnums=(1,))`` at module level."""
    if fun is None:
        return functools.partial(jit, **options)
    return _LazyJit(fun, options)


@functools.lru_cache(maxsize=None)
def _cpu_only() -> bool:
    """True when JAX can find no backend but the CPU: ``JAX_PLATFORMS=cpu``, or nothing
    installed that gives it another. JAX finds GPUs (and other devices) through PJRT plugins,
    the modules of the ``jax_plugins`` namespace package or of the ``jax_plugins`` entry-point
    group, or ``PJRT_NAMES_AND_LIBRARY_PATHS``; and TPUs through libtpu (jax 0.10.2,
    jax/_src/xla_bridge.py: ``discover_pjrt_plugins``, ``register_backend_factory('tpu', ...)``,
    ``make_tpu_client``)."""
    if os.environ.get("JAX_PLATFORMS", "").strip().lower() == "cpu":
        return True
    if any(os.environ.get(v) for v in ("JAX_PLATFORMS", "PJRT_NAMES_AND_LIBRARY_PATHS", "TPU_LIBRARY_PATH")):
        return False
    if any(importlib.util.find_spec(m) is not None for m in ("jax_plugins", "libtpu")):
        return False
    from importlib.metadata import entry_points

    return not entry_points(group="jax_plugins")


def default_backend() -> str:
    """``jax.default_backend()`` ("cpu", "gpu", "tpu"); ``"cpu"`` without importing JAX when JAX
    is not imported yet and can find no other backend (:func:`_cpu_only`)."""
    if jax._module is None and _cpu_only():
        return "cpu"
    return jax.default_backend()


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
