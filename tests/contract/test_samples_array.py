"""The one check of integer samples (mdmtheory._validate.samples_array) and its callers.

References from the definition: an (n, d) array of integer tokens, with the row/column
minimums, the row length and the alphabet each caller asks for; the message names the
argument.
"""

import numpy as np
import pytest

from mdmtheory._validate import samples_array


def test_accepts_integer_samples_and_returns_int64():
    for x in ([[0, 1], [1, 0]], np.array([[0, 1, 2]], dtype=np.uint8), np.array([[3, 4]], dtype=np.int32)):
        got = samples_array(x)
        assert got.dtype == np.int64 and got.shape == np.shape(x) and got.tolist() == np.asarray(x).tolist()
    assert samples_array([[1.0, 2.0]], integral_floats=True).tolist() == [[1, 2]]
    assert samples_array(np.zeros((0, 3), int), min_rows=0).shape == (0, 3)
    assert samples_array([[-1, 0, 1]]).tolist() == [[-1, 0, 1]]  # no K: -1 (a lost sample) is the caller's


@pytest.mark.parametrize(
    "value, kw, match",
    [
        (None, {}, r"^samples: expected an integer array \(n, d\), got None"),
        ("abc", {}, r"^samples: expected an integer array"),
        (True, {}, r"^samples: expected an integer array"),
        ([[0, 1], [0]], {}, r"^samples: cannot be read as an integer array"),
        ([0, 1], {}, r"^samples: expected a non-empty integer array \(n, d\) with n, d >= 1, got shape \(2,\)"),
        (np.zeros((0, 2), int), {}, r"^samples: expected a non-empty integer array"),
        ([[0.5, 1.0]], {}, r"dtype float64"),
        ([[0.5, 1.0]], {"integral_floats": True}, r"dtype float64"),
        ([[np.nan, 1.0]], {"integral_floats": True}, r"dtype float64"),
        ([[0, 1]], {"min_rows": 2}, r"with n >= 2 and d >= 1, got shape \(1, 2\)"),
        ([[0, 1]], {"d": 3}, r"\(n, d=3\) with n >= 1, got shape \(1, 2\)"),
        ([[0, 1, 2]], {"min_rows": 0, "min_cols": 4}, r"^samples: expected an integer array \(n, d\) with d >= 4"),
        ([[0, 3]], {"K": 3}, r"^samples: outcome indices must lie in 0\.\.2, got 0\.\.3"),
        ([[-1, 0]], {"K": 3}, r"^samples: outcome indices must lie in 0\.\.2, got -1\.\.0"),
        ([[0, 5]], {"K": 2, "tokens": "tokens"}, r"^samples: tokens must lie in 0\.\.1"),
        (np.array([[0, 2**64 - 1]], dtype=np.uint64), {}, r"^samples: token 18446744073709551615 out of range"),
        ([[1e250, 0.0]], {"integral_floats": True}, r"^samples: token 1e\+250 out of range"),  # the cast would wrap
    ],
)
def test_refusals_name_the_argument(value, kw, match):
    with pytest.raises(ValueError, match=match):
        samples_array(value, **kw)
    with pytest.raises(ValueError, match=r"^rows: "):
        samples_array(value, "rows", **kw)


def test_callers_share_the_check():
    """Every caller refuses a 1-d array and a float array the same way, naming its argument."""
    from mdmtheory.design import certify_data, design, memorization
    from mdmtheory.laws import empirical_oracle, families

    for fn, name in [(empirical_oracle, "samples"), (memorization, "samples"), (lambda x: design(x), "samples"),
                     (families.empirical, "sequences"), (lambda x: certify_data(x, 0.1), "samples")]:
        for bad in ([0, 1, 1], [[0.5, 1.0], [1.0, 0.0]]):
            with pytest.raises(ValueError, match=rf"^{name}: expected a"):
                fn(bad)
