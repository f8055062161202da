"""The fuzz harness shared by tests/contract/test_fuzz.py and tests/bridge/test_fuzz_bridge.py.

:func:`guarded` calls a function and asserts the contract of hostile input: the only exception
is a ``ValueError`` whose message names the argument (``"name: ..."``), and the call answers
within :data:`CALL_SECONDS`. :func:`twice` registers a property fast (``make test``) and
``slow``-marked.
"""

from __future__ import annotations

import contextlib
import re
import signal
import time

import pytest
from hypothesis import HealthCheck, given, settings

#: Longest time any single generated call may take (the first calls jit-compile).
CALL_SECONDS = 20.0
CALLS = {"n": 0, "accepted": 0, "refused": 0}
_ARG_NAME = re.compile(r"^[A-Za-z_][\w ,./()\[\]*'-]{0,60}: ")


class Hang(BaseException):
    """Raised by the alarm: a call ran past CALL_SECONDS (BaseException: not swallowed)."""


@contextlib.contextmanager
def alarm(seconds: float = CALL_SECONDS):
    """Raise :class:`Hang` inside the ``with`` block once ``seconds`` have passed (a SIGALRM
    timer); the timer is stopped and the previous handler restored on the way out."""
    def ring(signum, frame):
        raise Hang(f"call ran longer than {seconds} s")

    old = signal.signal(signal.SIGALRM, ring)
    # then every second again: a Hang raised inside a callback that swallows exceptions (jax's
    # gc callback prints "Exception ignored") would otherwise leave the call running unbounded
    signal.setitimer(signal.ITIMER_REAL, seconds, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def guarded(fn, *args, **kw):
    """Call ``fn``; return ``(True, value)`` or ``(False, ValueError)``; anything else fails."""
    CALLS["n"] += 1
    t0 = time.perf_counter()
    try:
        with alarm():
            out = fn(*args, **kw)
    except ValueError as exc:
        CALLS["refused"] += 1
        msg = str(exc)
        assert _ARG_NAME.match(msg), f"ValueError does not name an argument: {msg!r}"
        return False, exc
    except Hang:
        pytest.fail(f"{getattr(fn, '__qualname__', fn)} hung (> {CALL_SECONDS} s)")
    assert time.perf_counter() - t0 < CALL_SECONDS
    CALLS["accepted"] += 1
    return True, out


def _profiles(fast: int, slow: int):
    common = dict(deadline=None, suppress_health_check=list(HealthCheck), database=None)
    return (settings(max_examples=fast, derandomize=True, **common),
            settings(max_examples=slow, derandomize=False, **common))


def twice(fast: int, slow: int, *strategies):
    """Register the property twice: fast (make test) and ``slow``-marked."""
    f_set, s_set = _profiles(fast, slow)

    def deco(body):
        fast_test = f_set(given(*strategies)(body))
        slow_test = pytest.mark.slow(s_set(given(*strategies)(body)))
        return fast_test, slow_test

    return deco


# -- hostile values -----------------------------------------------------------------------
class _Deep(list):
    """A list nested n deep (short repr: hypothesis prints failing examples)."""

    def __repr__(self):
        return f"<list nested {self.depth} deep>"


def _deep(n, leaf=(0.5, 0.5)):
    x = list(leaf)
    for _ in range(n - 1):
        x = [x]
    out = _Deep([x])
    out.depth = n
    return out


def run_cli(argv: list, *, cwd, seconds: float, what: str) -> tuple[int, str, str]:
    """Run ``mdmtheory`` (``cli.main``) on ``argv`` plus ``--quiet`` inside the folder ``cwd``
    under a ``seconds`` alarm; return ``(exit code, stdout, stderr)``. A hang or any exception
    escaping ``main`` fails the test (``what`` says which call). Shared by the CLI fuzz and the
    CLI hostile table."""
    import io
    import os
    from contextlib import redirect_stderr, redirect_stdout

    from mdmtheory.cli import main

    out, err = io.StringIO(), io.StringIO()
    back = os.getcwd()
    os.chdir(cwd)  # a default output (mdmtheory-report.html) lands in the test's folder
    try:
        with alarm(seconds), redirect_stdout(out), redirect_stderr(err):
            try:
                rc = main([*argv, "--quiet"])
            except SystemExit as exc:  # argparse's own errors
                rc = exc.code
    except Hang:
        pytest.fail(f"hung (> {seconds} s): {what}")
    except Exception as exc:  # noqa: BLE001 - any escape fails the contract
        pytest.fail(f"{type(exc).__name__} escaped main for {what}: {exc!r}\nargv: {argv}")
    finally:
        os.chdir(back)
    return rc, out.getvalue(), err.getvalue()
