"""Issue 30 §4: the design functions check sizes, confidences and samples against the model
before any work, each refusal a ValueError naming the argument.

* rows of more than 2**16 tokens (the documented limit of d, ``_validate.LIMITS``) are refused
  by ``design``, ``design_blocks_from_data``, ``memorization`` and the estimators (70,000 columns hung);
* a confidence whose normal quantile :math:`\\Phi^{-1}((1 + c)/2)` is infinite in float64 (the
  (nan, nan) interval of ``estimate_design_blocks(..., confidence=0.9999999999999999)``) is
  refused by name; the largest accepted one gives a finite interval;
* samples are checked against the model (outcome indices 0..K−1, the model's row length) by
  name ``samples`` before the first block is estimated.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from mdmtheory.design import design_blocks_from_data, design, memorization
from mdmtheory.design.blocks import estimate_design_blocks, estimate_block_profiles
from mdmtheory.design.profile import MAX_MEMORIZATION_WORK, estimate_cross_entropy_profile
from mdmtheory.laws import MarkovChainLaw, families
from mdmtheory.laws.oracles import as_oracle

#: Rows wider than the documented d <= 2**16.
WIDE = np.zeros((2, 70_000), dtype=np.int64)


def _quick(fn, match, seconds=2.0):
    t = time.perf_counter()
    with pytest.raises(ValueError, match=match):
        fn()
    assert time.perf_counter() - t < seconds, "refused only after work"


@pytest.mark.parametrize("call", [
    lambda: design(WIDE, steps=2),
    lambda: design_blocks_from_data(WIDE, forwards=2),
    lambda: memorization(WIDE),
    lambda: estimate_cross_entropy_profile(as_oracle(families.parity(4)), WIDE, n_per_level=2),
    lambda: estimate_block_profiles(as_oracle(families.parity(4)), WIDE, 2, n_per_level=2),
    lambda: estimate_design_blocks(as_oracle(families.parity(4)), WIDE, forwards=2, n_per_level=2),
], ids=["design", "design_blocks_from_data", "memorization", "estimate_cross_entropy_profile", "estimate_block_profiles",
        "estimate_design_blocks"])
def test_rows_beyond_the_documented_d_are_refused_before_work(call):
    _quick(call, r"^samples: rows of 70000 tokens; the documented limit is d <= 65536")


def test_memorization_work_has_a_documented_maximum():
    # S * n * d^2 from the definition: 64 subsets per level, d levels keyed on up to d columns
    n, d = 20_000, 200
    assert 64 * n * d * d > MAX_MEMORIZATION_WORK
    x = np.zeros((n, d), dtype=np.int64)
    _quick(lambda: memorization(x), r"^samples: .*MAX_MEMORIZATION_WORK")
    _quick(lambda: design(x, steps=2), r"^samples: .*MAX_MEMORIZATION_WORK")
    # the same rows with fewer subsets fit the bound and are checked as usual
    assert 2 * 500 * d * d <= MAX_MEMORIZATION_WORK


def _largest_confidence():
    """The largest float c < 1 with 0.5 + c/2 < 1 in float64, found by walking down from 1."""
    c = 1.0
    while not 0.5 + c / 2 < 1.0:
        c = np.nextafter(c, 0.0)
    return float(c)


@pytest.mark.parametrize("c", [0.9999999999999999, 1 - 1e-17, 1.0, 0.0, float("nan"), float("inf"), True, "0.95"])
def test_a_confidence_without_a_finite_quantile_is_refused(c):
    p = as_oracle(families.parity(4))
    x = np.array([[0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 0, 0]])
    for call in (lambda: estimate_design_blocks(p, x, forwards=2, n_per_level=3, confidence=c),
                 lambda: design(x, steps=2, confidence=c),
                 lambda: design(x, steps=2, model=p, n_per_level=3, confidence=c),
                 lambda: design_blocks_from_data(x, forwards=2, confidence=c)):
        _quick(call, r"^confidence: ")


def test_the_largest_accepted_confidence_gives_a_finite_interval():
    c = _largest_confidence()
    assert c < 1 and 0.5 + c / 2 < 1.0 and not 0.5 + np.nextafter(c, 2.0) / 2 < 1.0
    p = as_oracle(families.parity(4))
    x = np.array([[0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 0, 0]])
    res = estimate_design_blocks(p, x, forwards=2, n_per_level=3, confidence=c)
    for cand in res.candidates:
        if cand.ci is not None:
            assert np.all(np.isfinite(cand.ci)) and cand.ci[0] <= cand.path_kl <= cand.ci[1]
    d = design(x, steps=2, model=p, n_per_level=3, confidence=c)
    assert np.all(np.isfinite(d.ci)) and np.all(np.isfinite(d.ci_cross_entropy))


@pytest.mark.parametrize("model", [as_oracle(families.parity(4)), MarkovChainLaw(np.array([[0.9, 0.1], [0.2, 0.8]]), 4)],
                         ids=["oracle", "markov"])
def test_block_profiles_check_the_samples_against_the_model(model):
    beyond = np.array([[0, 1, 1, 3], [1, 1, 0, 0]])  # token 3 >= K = 2
    longer = np.array([[0, 1, 1, 0, 1, 1], [1, 1, 0, 0, 0, 0]])  # 6 tokens, the model reads 4
    for call in (lambda x: estimate_block_profiles(model, x, 2, n_per_level=3),
                 lambda x: estimate_design_blocks(model, x, forwards=2, n_per_level=3)):
        _quick(lambda: call(beyond), r"^samples: tokens .*K = 2.* 0\.\.1, got 0\.\.3")
        _quick(lambda: call(longer), r"^samples: rows have 6 tokens but the model reads rows of d = 4")


def test_normal_quantile_from_the_definition_and_refused_where_infinite():
    """z with Phi(z) = (1 + c)/2, Phi written with math.erf; c past 1 - 2**-52 refused by name
    (also by the records' confidence_interval, through _estimate.normal_quantile)."""
    import math

    from mdmtheory._estimate import normal_quantile
    from mdmtheory._validate import normal_quantile_arg

    for c in (1e-9, 0.5, 0.95, 0.999999, _largest_confidence()):
        for f in (normal_quantile_arg, normal_quantile):
            z = f(c)
            assert math.isfinite(z) and 0.5 * (1 + math.erf(z / math.sqrt(2))) == pytest.approx((1 + c) / 2, abs=1e-15)
    for f in (normal_quantile_arg, normal_quantile):
        with pytest.raises(ValueError, match=r"^confidence: "):
            f(0.9999999999999999)
