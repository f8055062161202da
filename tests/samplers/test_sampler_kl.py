"""mt.sampler_kl: the exact KL as a JAX function of the table (jit, grad, vmap).

References: the output law by brute-force enumeration of orders / assignments (the
references of tests/samplers/test_engine.py), central finite differences for gradients, a Python
loop for vmap. One law shape (K = 2, d = 4) throughout, so each plan compiles once.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory._jax import x64
from reference import random_table
from test_engine import brute_bernoulli, brute_random_order

SCHED = mt.Schedule((2, 1, 1))
GRID = mt.Grid((0.1, 0.5, 0.8))


def brute_kl(table, plan):
    q = brute_random_order(table, plan.sizes)[0] if isinstance(plan, mt.Schedule) else brute_bernoulli(table, plan.times)[0]
    sup = table > 0
    return float(np.sum(table[sup] * np.log(table[sup] / q[sup])))


def softmax_table(theta):
    return jax.nn.softmax(theta.ravel()).reshape((2,) * 4)


@pytest.mark.parametrize("plan", [SCHED, GRID], ids=["schedule", "grid"])
def test_value_matches_enumeration_and_jit(plan):
    for seed, zeros in ((0, 0.0), (1, 0.5)):  # the second law has lost mass
        table = random_table(2, 4, seed, zeros=zeros)
        ref = brute_kl(table, plan)
        with x64():
            assert float(mt.sampler_kl(table, plan)) == pytest.approx(ref, abs=1e-12)
            jitted = jax.jit(lambda t: mt.sampler_kl(t, plan))(jnp.asarray(table))
            assert float(jitted) == pytest.approx(ref, abs=1e-12)


@pytest.mark.slow  # ~10 s per plan: compiling the gradient
@pytest.mark.parametrize("plan", [SCHED, GRID], ids=["schedule", "grid"])
def test_gradient_matches_central_differences(plan):
    rng = np.random.default_rng(3)
    theta = rng.normal(size=(2,) * 4) * 1.5
    f = lambda th: mt.sampler_kl(softmax_table(th), plan)  # noqa: E731
    with x64():
        g = np.asarray(jax.grad(f)(jnp.asarray(theta)))
        h = 1e-5
        fd = np.zeros_like(theta)
        for idx in np.ndindex(theta.shape):
            e = np.zeros_like(theta)
            e[idx] = h
            fd[idx] = (float(f(jnp.asarray(theta + e))) - float(f(jnp.asarray(theta - e)))) / (2 * h)
    assert np.abs(g).max() > 1e-3  # not a vacuous comparison
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_gradient_at_zero_probability_prefixes_is_finite():
    table = random_table(2, 4, 1, zeros=0.5)
    with x64():
        for plan in (SCHED,):
            assert mt.exact_run(mt.Joint(table), plan).lost > 0.01
            g = np.asarray(jax.grad(lambda t: mt.sampler_kl(t, plan))(jnp.asarray(table)))
            assert np.all(np.isfinite(g))


@pytest.mark.slow
def test_vmap_matches_loop():
    thetas = np.random.default_rng(5).normal(size=(3,) + (2,) * 4)
    with x64():
        tables = jax.vmap(softmax_table)(jnp.asarray(thetas))
        for plan in (SCHED, GRID):
            batched = np.asarray(jax.vmap(lambda t: mt.sampler_kl(t, plan))(tables))
            loop = [float(mt.sampler_kl(tables[i], plan)) for i in range(3)]
            np.testing.assert_allclose(batched, loop, rtol=0, atol=1e-13)


def test_planners_and_errors():
    table = random_table(2, 4, 2)
    p = mt.Joint(table)
    for planner in ("left_to_right", "confidence"):
        ref = mt.kl(p, mt.sampler_law(p, SCHED, planner))
        assert float(mt.sampler_kl(table, SCHED, planner=planner)) == pytest.approx(ref, abs=1e-12)
    with x64():  # an order that does not read the law works under jit
        val = jax.jit(lambda t: mt.sampler_kl(t, SCHED, planner="left_to_right"))(jnp.asarray(table))
        assert float(val) == pytest.approx(mt.kl(p, mt.sampler_law(p, SCHED, "left_to_right")), abs=1e-12)
        with pytest.raises(ValueError, match="^planner: "):
            jax.jit(lambda t: mt.sampler_kl(t, SCHED, planner="confidence"))(jnp.asarray(table))
    with pytest.raises(ValueError, match="^table: "):
        mt.sampler_kl(np.ones((2, 3)) / 6, SCHED)
    with pytest.raises(ValueError, match="^table: "):
        mt.sampler_kl(np.full((2,) * 4, 0.1), SCHED)  # not normalized
    with pytest.raises(ValueError, match="^plan: "):
        mt.sampler_kl(table, (2, 2))


def test_exact_run_backends_agree():
    """The kernel under numpy and jit-compiled JAX: the same law, lost mass and reveal law."""
    p = mt.Joint(random_table(2, 4, 1, zeros=0.5))
    for plan in (SCHED, GRID):
        a, b = mt.exact_run(p, plan, backend="numpy"), mt.exact_run(p, plan, backend="jax")
        np.testing.assert_allclose(a.law.table, b.law.table, rtol=0, atol=1e-15)
        assert a.lost == pytest.approx(b.lost, abs=1e-15) and a.lost > 0
        np.testing.assert_allclose(a.reveal_steps, b.reveal_steps, rtol=0, atol=1e-15)
    with pytest.raises(ValueError, match="^backend: "):
        mt.exact_run(p, SCHED, backend="gpu")
