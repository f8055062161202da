"""Prompted and block designs from data (issue 18 §1-2): the estimated route against the
exact one on an exact oracle (z-scores), the data-level dispatcher against the exact block
DP, and the prompt-aware memorization against a direct count."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.optimal import blocks
from mdmtheory.design.blocks import estimate_design_blocks, estimate_block_profiles
from mdmtheory.design import design_blocks_from_data, design, estimate_cross_entropy_profile, memorization
from mdmtheory.laws.families import empirical
from mdmtheory.laws import as_oracle

Z = 4.5  # |z| bound per check (many checks; a true failure is far beyond)


def _law(d=6, K=2, seed=3):
    return mt.families.dirichlet(d, K, alpha=0.4, seed=seed)


def _rows(p, n, seed=0):
    return as_oracle(p).sample(n, np.random.default_rng(seed))


def test_oracle_estimate_with_prompt_matches_the_prompted_profile():
    p = _law()
    x = _rows(p, 4000)
    g = 2
    exact = mt.information_profile(p, given=range(g)).values
    est = estimate_cross_entropy_profile(as_oracle(p), x, n_per_level=3000, seed=1, prompt_length=g)
    assert est.values.shape == (p.d - g,)
    z = (est.values - exact) / est.stderr
    assert np.all(np.abs(z) < Z), z


@pytest.mark.parametrize("B", [1, 2, 4])
def test_oracle_block_profiles_match_the_exact_block_profiles(B):
    p = _law(d=6)
    x = _rows(p, 4000, seed=2)
    g = 2
    ests = estimate_block_profiles(as_oracle(p), x, B, prompt_length=g, n_per_level=2000, seed=5)
    exact = blocks.block_profiles(p, B, given=range(g))
    assert len(ests) == len(exact) == (p.d - g) // B
    for e, f in zip(ests, exact):
        se = np.where(e.stderr > 0, e.stderr, 1.0)
        assert np.all(np.abs(e.values - f.values) / se < Z)


def test_estimated_block_design_ci_covers_the_exact_path_kl_of_its_counts():
    p = _law(d=6)
    x = _rows(p, 5000, seed=4)
    res = estimate_design_blocks(as_oracle(p), x, forwards=2, block_lengths=[2, 4], prompt_length=2,
                                       n_per_level=3000, seed=7)
    assert res.method == "estimated" and "prompt length 2" in res.note
    for c in res.candidates:
        exact = blocks.block_path_kl(p, c.counts, block_length=c.block_length, given=range(2))
        lo, hi = c.ci
        half = (hi - lo) / 2
        assert abs(c.path_kl - exact) <= Z / 1.96 * half + 1e-12
    ex = blocks.design_blocks(p, forwards=2, block_lengths=[2, 4], given=range(2))
    assert [c.forwards for c in res.candidates] == [c.forwards for c in ex.candidates]


def test_estimated_budget_uses_the_upper_end_and_one_token_steps_cost_nothing():
    p = _law(d=4)
    x = _rows(p, 2000, seed=8)
    res = estimate_design_blocks(as_oracle(p), x, target_kl=0.0, block_lengths=[4], n_per_level=200, seed=1)
    assert res.best.forwards == 4 and res.best.path_kl == 0 and res.best.ci == (0.0, 0.0)
    loose = estimate_design_blocks(as_oracle(p), x, target_kl=1e9, block_lengths=[4, 2], n_per_level=200, seed=1)
    assert loose.best.forwards == 1 and loose.best.block_length == 4
    for c in loose.candidates:
        assert c.ci[1] <= 1e9


def test_data_block_design_exact_route_is_the_exact_dp_on_the_empirical_law():
    p = _law(d=6, seed=9)
    x = _rows(p, 300, seed=1)
    res = design_blocks_from_data(x, forwards=2, block_lengths=[2, 4], prompt_length=2)
    ref = blocks.design_blocks(empirical(x, 2), forwards=2, block_lengths=[2, 4], given=range(2))
    assert res.method == "exact" and res.best == ref.best and res.candidates == ref.candidates


def test_data_block_design_estimated_route_and_bad_input():
    p = _law(d=6, seed=9)
    x = _rows(p, 300, seed=1)
    res = design_blocks_from_data(x, forwards=2, block_lengths=[4], prompt_length=2, exact_limit=10, n_per_level=50)
    assert res.method == "estimated" and res.best.ci is not None
    with pytest.raises(ValueError, match=r"^prompt_length:"):
        design_blocks_from_data(x, forwards=2, prompt_length=6)
    with pytest.raises(ValueError, match=r"^block_length: must divide the response length 4"):
        design_blocks_from_data(x, forwards=2, block_lengths=[3], prompt_length=2)
    with pytest.raises(ValueError, match=r"^forwards/target_kl: give exactly one"):
        design_blocks_from_data(x, prompt_length=2)
    with pytest.raises(ValueError, match=r"^block_lengths: expected a list"):
        design_blocks_from_data(x, forwards=2, block_lengths="4", prompt_length=2)


def test_prompted_design_exact_route():
    p = _law(d=5, seed=2)
    x = _rows(p, 400, seed=3)
    res = design(x, steps=2, prompt_length=2)
    prof = mt.information_profile(empirical(x, 2), given=range(2))
    assert res.prompt_length == 2 and res.schedule.d == 3
    assert np.allclose(res.profile.values, prof.values)
    assert res.schedule == mt.optimal_schedule(prof, 2)
    with pytest.raises(ValueError, match=r"^steps: .*response length"):
        design(x, steps=4, prompt_length=2)


def test_prompted_design_estimated_route_agrees_with_the_exact_prompted_profile():
    p = _law(d=6, seed=4)
    x = _rows(p, 3000, seed=5)
    res = design(x, steps=2, model=as_oracle(p), prompt_length=3, n_per_level=2000)
    exact = mt.information_profile(p, given=range(3)).values
    assert res.method == "estimated" and res.schedule.d == 3
    assert np.all(np.abs(res.profile.values - exact) / res.stderr < Z)


def test_prompted_memorization_counts_contexts_with_the_prompt():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, size=(40, 5))
    g = 2
    mem = memorization(x, prompt_length=g, subsets=1000)
    for m in range(5 - g):
        fr = []
        for A in itertools.combinations(range(g, 5), m):
            cols = list(range(g)) + list(A)
            keys = [tuple(r) for r in x[:, cols]]
            fr.append(np.mean([keys.count(k) == 1 for k in keys]))
        assert mem.unique[m] == pytest.approx(np.mean(fr), abs=1e-12)
    assert mem.unique.shape == (3,)


def test_estimated_budget_keyword_is_target_kl_for_one_release():
    p = mt.families.markov_chain([[0.9, 0.1], [0.2, 0.8]], d=4)
    x = as_oracle(p).sample(300, np.random.default_rng(0))
    new = estimate_design_blocks(as_oracle(p), x, target_kl=0.5, block_lengths=[4, 2], n_per_level=50, seed=1)
    with pytest.warns(DeprecationWarning, match=r"estimate_design_blocks\(budget=\.\.\.\) is now"):
        old = estimate_design_blocks(as_oracle(p), x, budget=0.5, block_lengths=[4, 2], n_per_level=50, seed=1)
    assert old == new


# -- issue 30: the API walker's finds ----------------------------------------------------------------
def test_block_seeds_and_draw_counts_are_checked_before_work():
    """seed + b raised TypeError for a None or text seed and accepted True; design_blocks_from_data's
    exact route never read n_per_level (True accepted)."""
    p = mt.families.markov_chain([[0.8, 0.2], [0.3, 0.7]], 4)
    x = mt.laws.TableLaw(p).sample(32, np.random.default_rng(0))
    for seed in [True, None, "1", [], -1, 2**63 - 1]:
        with pytest.raises(ValueError, match=r"^seed: "):
            estimate_block_profiles(as_oracle(p), x, 2, n_per_level=4, seed=seed)
        with pytest.raises(ValueError, match=r"^seed: "):
            estimate_design_blocks(as_oracle(p), x, forwards=2, n_per_level=4, seed=seed)
    for n in [True, "8", None, 1]:
        with pytest.raises(ValueError, match=r"^n_per_level: "):
            design_blocks_from_data(x, forwards=2, n_per_level=n)


def test_separation_refuses_what_is_not_a_candidate():
    """separation iterated its arguments unchecked (TypeError for True, AttributeError for a list)."""
    from mdmtheory.design import separation

    p = mt.families.markov_chain([[0.8, 0.2], [0.3, 0.7]], 4)
    x = mt.laws.TableLaw(p).sample(64, np.random.default_rng(0))
    res = estimate_design_blocks(as_oracle(p), x, forwards=2, n_per_level=8)
    separation(res.candidates, res.best, 8)  # the valid call
    separation([c.to_dict() for c in res.candidates], res.best.to_dict())  # the CLI's dicts
    for args, name in [((True, res.best), "candidates"), (("ab", res.best), "candidates"),
                       (([1, 2], res.best), r"candidates\[0\]"), ((res.candidates, None), "best"),
                       ((res.candidates, {"path_kl": 0.1}), "best"), ((res.candidates, res.best, True), "n_per_level"),
                       ((res.candidates, res.best, 10**400), "n_per_level")]:
        with pytest.raises(ValueError, match=f"^{name}: "):
            separation(*args)
