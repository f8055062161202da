"""Reveal odds psi(t) = t/(1-t) and psi^{-1}(s) = s/(1+s) (mdmtheory.schedules.odds).

References from the definition with ``fractions.Fraction`` (exact), compared to the float
result rounded once; the aliases in information (dyadic.psi) are the same
functions.
"""

import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mdmtheory._jax import x64
from mdmtheory.information import dyadic
from mdmtheory.schedules import odds
from mdmtheory.schedules.odds import psi, psi_inverse, psi_inverse_raw, psi_raw, psi_scalar


def _psi_exact(t: float) -> float:
    """t/(1-t) from the definition, exact rationals then one rounding; inf at t = 1."""
    return math.inf if t == 1 else float(Fraction(t) / (1 - Fraction(t)))


def _psi_inverse_exact(s: float) -> float:
    return 1.0 if math.isinf(s) else float(Fraction(s) / (1 + Fraction(s)))


@given(st.floats(0, 1))
def test_psi_is_the_definition(t):
    # 1 - t is exact for t >= 1/2 (Sterbenz) and t/(1-t) is then correctly rounded
    ref = _psi_exact(t)
    got = psi(t)
    assert isinstance(got, float)
    if t >= 0.5 or t == 0:
        assert got == ref
    else:
        assert got == pytest.approx(ref, rel=4e-16)


def test_psi_ends_and_arrays():
    assert psi(0) == 0.0 and psi(0.0) == 0.0 and psi(1) == math.inf and psi(0.5) == 1.0 and psi(0.75) == 3.0
    t = np.array([[0.0, 0.25, 0.5], [0.8, 0.9, 1.0]])
    got = psi(t)
    assert isinstance(got, np.ndarray) and got.shape == (2, 3) and got.dtype == np.float64
    assert got[1, 2] == math.inf and got[0, 0] == 0.0 and got[0, 2] == 1.0 and got[1, 0] == _psi_exact(0.8)
    np.testing.assert_allclose(got[np.isfinite(got)], [_psi_exact(float(x)) for x in t.ravel()[:-1]], rtol=4e-16)
    assert psi([]).shape == (0,)


def test_psi_inverse_definition_and_round_trip():
    s = np.array([0.0, 1 / 3, 1.0, 3.0, 1e300, math.inf])
    got = psi_inverse(s)
    np.testing.assert_allclose(got, [_psi_inverse_exact(float(x)) for x in s], rtol=2e-16)
    assert got[0] == 0.0 and got[2] == 0.5 and got[-1] == 1.0
    assert psi_inverse(math.inf) == 1.0 and isinstance(psi_inverse(3.0), float) and psi_inverse(3.0) == 0.75
    t = np.linspace(0, 0.999, 101)
    np.testing.assert_allclose(psi_inverse(psi(t)), t, rtol=1e-13, atol=0)
    assert psi_inverse(psi(1.0)) == 1.0


@pytest.mark.parametrize(
    "fn, bad, match",
    [
        (psi, -0.1, "t: reveal times must lie in"),
        (psi, 1.5, "t: reveal times must lie in"),
        (psi, [0.2, math.nan], "t: contains NaN"),
        (psi, "0.5", "t: expected an array of real numbers"),
        (psi_inverse, -1.0, "s: reveal odds must lie in"),
        (psi_inverse, math.nan, "s: reveal odds must lie in"),
        (psi_inverse, None, "s: expected an array of real numbers"),
    ],
)
def test_bad_input_names_the_argument(fn, bad, match):
    with pytest.raises(ValueError, match=match):
        fn(bad)


def test_raw_forms_are_the_bare_formula():
    for t in (0.0, 0.1, 0.3, 0.5, 0.9, 1 - 2**-40):
        assert psi_raw(t) == t / (1.0 - t) and psi_scalar(t) == t / (1.0 - t)
        assert psi_inverse_raw(t) == t / (1.0 + t)
    assert psi_scalar(1.0) == math.inf and psi_scalar(1.5) == math.inf
    with pytest.raises(ZeroDivisionError):
        psi_raw(1.0)
    x = np.array([0.0, 0.2, 0.6])
    np.testing.assert_array_equal(psi_raw(x), x / (1.0 - x))
    np.testing.assert_array_equal(psi_inverse_raw(x), x / (1.0 + x))


def test_raw_forms_trace_under_jax():
    with x64():
        t = jnp.array([0.1, 0.5, 0.8], dtype=jnp.float64)
        got = jax.jit(psi_raw)(t)
        np.testing.assert_allclose(np.asarray(got), [_psi_exact(0.1), 1.0, 4.0], rtol=4e-16)
        # d psi / dt = 1/(1-t)^2, through the trace
        grad = jax.vmap(jax.grad(psi_raw))(t)
        np.testing.assert_allclose(np.asarray(grad), 1.0 / (1.0 - np.array([0.1, 0.5, 0.8])) ** 2, rtol=1e-15)
        back = jax.jit(psi_inverse_raw)(got)
        np.testing.assert_allclose(np.asarray(back), [0.1, 0.5, 0.8], rtol=1e-15)


def test_information_names_are_the_same_functions():
    assert dyadic.psi is psi and dyadic.psi_inverse is psi_inverse 
    assert set(odds.__all__) <= set(__import__("mdmtheory.schedules", fromlist=["__all__"]).__all__)
