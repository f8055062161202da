"""Tightness search: the differentiable pipeline equals the exact one; the search works."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.bounds import tightness as T
from mdmtheory.information import ugc as U
from mdmtheory._jax import x64


def table(d, K, seed, alpha=0.5):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.full(K**d, alpha)).reshape((K,) * d)


@pytest.mark.parametrize("d,K", [(2, 2), (3, 3), (5, 2)])
def test_jax_profile_matches_exact(d, K):
    for seed, alpha in ((0, 0.5), (1, 0.05)):
        t = table(d, K, seed, alpha)
        with x64():
            phi = np.asarray(T.jax_profile(jnp.asarray(t)))
        np.testing.assert_allclose(phi, mt.information_profile(mt.Joint(t)).values, atol=1e-13)


def test_jax_profile_handles_zeros_with_finite_gradient():
    import jax

    t = table(3, 2, 2)
    t.ravel()[[1, 4]] = 0.0
    t /= t.sum()
    with x64():
        g = jax.jit(jax.grad(lambda x: T.jax_profile(x)[0] - T.jax_profile(x)[-1]))(jnp.asarray(t))
    assert np.all(np.isfinite(np.asarray(g)))


def test_jax_quantities_match_exact():
    p = mt.Joint(table(4, 2, 3))
    prof = mt.information_profile(p)
    with x64():
        phi = jnp.asarray(prof.values)
        assert float(T.jax_path_kl(phi, mt.Schedule((2, 1, 1)))) == pytest.approx(mt.path_kl(p, mt.Schedule((2, 1, 1))), abs=1e-14)
        g = mt.Grid((0.1, 0.35, 0.8))
        assert float(T.jax_path_kl(phi, g)) == pytest.approx(mt.path_kl(p, g), abs=1e-14)
        assert float(T.jax_ugc(phi, 0.2, 0.9)) == pytest.approx(U.ugc(p, 0.2, 0.9), abs=1e-14)
        assert float(T.jax_gamma_umask(phi, 0.2, 0.9)) == pytest.approx(U.gamma_umask(p, 0.2, 0.9), abs=1e-14)
        np.testing.assert_allclose(np.asarray(T.jax_gain(phi, np.linspace(0, 1, 5))), U.gain(p, np.linspace(0, 1, 5)), atol=1e-13)
        assert float(T._jax_dhw(phi)) == pytest.approx(U.effective_total_correlation(p), abs=1e-14)


@pytest.mark.parametrize("d", [3, pytest.param(4, marks=pytest.mark.slow)])  # d = 4: the same code on bigger laws
def test_every_target_jax_equals_exact(d):
    """Each target's JAX (numerator, denominator) equals the package's exact numpy values."""
    p = mt.Joint(table(d, 2, 10 + d))
    with x64():
        phi = T.jax_profile(jnp.asarray(p.table))
        for name, tg in T.targets(d).items():
            num, den = (np.asarray(x) for x in tg.pairs(phi))
            enum, eden = tg.exact_pairs(p)
            fin = np.isfinite(eden)
            np.testing.assert_allclose(num, enum, atol=1e-12, err_msg=name)
            np.testing.assert_allclose(den[fin], eden[fin], atol=1e-12, err_msg=name)


def test_search_reaches_riemann_equality():
    """The Riemann bound is attained (repeated-bit-like laws with schedule (2, 1)); the
    search climbs from random starts to ratio ~1, never above (the bound is valid)."""
    tg = T.targets(3)["riemann"]
    res = T.tightness_search(tg, restarts=1, steps=150, seed=0, check_every=25)
    assert res.ratio > res.start_ratio
    assert 0.99 < res.ratio <= 1.0 + 1e-12
    assert res.table.shape == (2, 2, 2) and abs(res.table.sum() - 1) < 1e-12
    assert res.ratio == pytest.approx(T._exact_ratio(tg, res.table), abs=1e-15)


def test_search_is_seeded():
    tg = T.targets(2)["ugc_total"]
    a = T.tightness_search(tg, restarts=2, steps=5, seed=3, check_every=5)
    b = T.tightness_search(tg, restarts=2, steps=5, seed=3, check_every=5)
    assert a.restart_ratios == b.restart_ratios
    np.testing.assert_array_equal(a.table, b.table)


def test_floor_ignores_noise_level_denominators():
    num, den = np.array([1e-20, 0.5]), np.array([1e-22, 1.0])
    assert T._ratio_from_pairs(num, den, 1.0, np) == 0.5


def test_errors():
    with pytest.raises(ValueError, match="d"):
        T.targets(9)
    with pytest.raises(ValueError, match="K"):
        T.targets(6, K=5)
    with pytest.raises(ValueError, match="restarts"):
        T.tightness_search(T.targets(2)["ugc_total"], restarts=0)
    with x64(), pytest.raises(ValueError, match="d <= 8"):
        T.jax_profile(jnp.ones((2,) * 9) / 2**9)
    with pytest.raises(ValueError, match="d"):
        T.kl_targets(9)
    assert math.isfinite(T.FLOOR)


def test_kl_targets_jax_equal_exact():
    """The exact-KL targets compute the output law's KL through the engine: their JAX
    pairs equal the package's numpy values."""
    p = mt.Joint(table(3, 2, 21))
    tgs = T.kl_targets(3)
    with x64():
        for name, tg in tgs.items():
            num, den = (np.asarray(x) for x in tg.pairs(jnp.asarray(p.table)))
            enum, eden = tg.exact_pairs(p)
            np.testing.assert_allclose(num, enum, atol=1e-12, err_msg=name)
            np.testing.assert_allclose(den, eden, atol=1e-12, err_msg=name)


@pytest.mark.slow  # compiles the gradient of the exact law (~20 s on 2 loaded cores)
def test_kl_search_climbs_and_stays_valid():
    """Gradient ascent through sampler_kl raises KL / path KL and never passes 1."""
    tgs = T.kl_targets(3)
    res = T.tightness_search(tgs["kl_vs_path_kl"], restarts=1, steps=30, seed=0, check_every=10)
    assert res.ratio >= res.start_ratio
    assert 0 < res.ratio <= 1.0 + 1e-12
