"""The dyadic estimator from any conditional oracle (W26 §4; docs/theory.md §5).

Monte Carlo means of both per-sample forms (W26's KL, the bounded entropy difference)
against the exact E Q (enumeration of nested reveal sets on the dense table), by z-score;
the oracle path and the table path agree; the entropy form is surely bounded."""

from __future__ import annotations

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.information import dyadic_estimate, dyadic_grid, dyadic_terms, expected_dyadic_estimate
from mdmtheory.laws import HiddenMarkovLaw, MarkovChainLaw, MixtureOfProductsLaw


def laws():
    rng = np.random.default_rng(11)
    w = rng.dirichlet(np.ones(3))
    P = rng.dirichlet(np.ones(2) * 0.5, size=(3, 4))
    hmm = HiddenMarkovLaw(rng.dirichlet(np.ones(2)), [[0.9, 0.1], [0.2, 0.8]], [[0.95, 0.05], [0.1, 0.9]], 4)
    return {
        "mixture": MixtureOfProductsLaw(w, P),
        "hmm": hmm,
        "markov": MarkovChainLaw([[0.85, 0.15], [0.3, 0.7]], 4),
    }


@pytest.mark.parametrize("name", ["mixture", "hmm", "markov"])
@pytest.mark.parametrize("form", ["kl", "entropy"])
@pytest.mark.parametrize("weights", ["corrected", "stated"])
def test_oracle_mean_matches_exact(name, form, weights):
    law = laws()[name]
    exact = expected_dyadic_estimate(law.to_joint(), 0.1, 0.85, weights=weights)
    est = dyadic_estimate(law, 0.1, 0.85, n=3000, seed=3, weights=weights, form=form)
    assert est.n == 3000
    assert abs(est.mean - exact) < 5 * est.stderr


def test_joint_through_oracle_path_matches_table_path():
    p = laws()["mixture"].to_joint()
    xs = mt.laws.as_oracle(p).sample(500, np.random.default_rng(0))
    a = dyadic_estimate(p, 0.2, 0.7, samples=xs, seed=4)  # table path
    b = dyadic_estimate(mt.laws.as_oracle(p), 0.2, 0.7, samples=xs, seed=4)  # oracle path
    np.testing.assert_allclose(a.values, b.values, rtol=1e-10, atol=1e-13)


def test_entropy_form_is_bounded_and_kl_form_nonnegative():
    law = laws()["hmm"]
    rng = np.random.default_rng(5)
    xs = law.sample(400, rng)
    U = rng.random(xs.shape)
    v = dyadic_grid(0.05, 0.95)
    Tk, counts = dyadic_terms(law, xs, U, v, form="kl")
    Te, _ = dyadic_terms(law, xs, U, v, form="entropy")
    assert np.all(Tk >= -1e-15)
    assert np.all(np.abs(Te) <= law.d * np.log(law.K) + 1e-12)
    # brute-force count of positions revealed within each interval
    for j in range(v.size - 1):
        np.testing.assert_array_equal(counts[:, j], ((U > v[j]) & (U <= v[j + 1])).sum(axis=1))


def test_bad_oracle_and_samples_raise():
    with pytest.raises(ValueError, match="^p: "):
        dyadic_estimate(object(), 0.1, 0.9)
    law = laws()["mixture"]
    with pytest.raises(ValueError, match="samples"):
        dyadic_estimate(law, 0.1, 0.9, samples=np.zeros((5, 3), int))
    with pytest.raises(ValueError, match="form"):
        dyadic_estimate(law, 0.1, 0.9, form="nope")
