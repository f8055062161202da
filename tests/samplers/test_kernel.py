"""The kernel's sparse chain (mdmtheory.samplers.kernel, "sparse chains") against brute force.

References written here:

* conditionals: p(x_j = v | x_A) summed directly from the table for every lattice state;
* a *stochastic* planner whose weights depend on x_A (it mixes "lowest masked position"
  and "two highest masked positions" with a weight read from the conditionals), through
  the engine's general ``moves(ctx)`` path: its exact law by a recursion over (A, x_A)
  written here (a dict of states, every B and every y_B), lost mass included;
* ``chain_apply`` in numpy and in JAX on the same structure, and ``jax.grad`` of the KL
  of a deterministic planner's law (choices held fixed) against finite differences.
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mdmtheory as mt
from mdmtheory._jax import x64
from mdmtheory.samplers import kernel as K_
from mdmtheory.samplers.engine import exact_run, sampler_kl
from reference import random_table

TOL = 1e-12


def _cond(table, A, xA, j):
    """p(x_j = . | x_A) from the table (A increasing positions, xA their values)."""
    d = table.ndim
    keep = sorted(A + [j])
    m = table.sum(axis=tuple(i for i in range(d) if i not in keep)) if len(keep) < d else table
    idx = tuple(slice(None) if i == j else xA[A.index(i)] for i in keep)
    row = m[idx]
    return row / row.sum() if row.sum() > 0 else np.zeros_like(row)


@given(st.integers(2, 3), st.integers(1, 4), st.integers(0, 10**6), st.sampled_from([0.0, 0.4]))
@settings(max_examples=25, deadline=None)
def test_state_conditionals_are_the_conditionals(K, d, seed, zeros):
    t = random_table(K, d, seed, zeros=zeros)
    Pf = np.reshape(K_.marginal_lattice(t, xp=np), (-1,))
    idx = np.arange(Pf.size)
    C = K_.state_conditionals(Pf, idx, d, K)
    vals = K_.state_values(idx, d, K)
    assert np.array_equal(K_.state_index(vals, K), idx)
    for n in range(idx.size):
        A = [j for j in range(d) if vals[n, j] < K]
        xA = [int(vals[n, j]) for j in A]
        for j in range(d):
            want = np.zeros(K) if j in A else _cond(t, A, xA, j)
            np.testing.assert_allclose(C[n, j], want, atol=TOL)


class _MixedPlanner:
    """From (A, x_A): the lowest masked position with probability c, the two highest masked
    ones with probability 1 - c, where c = p(x_lowest = 0 | x_A) (one position left: it)."""

    name = "mixed"
    needs_schedule = False
    allows_empty = False

    def moves(self, ctx):
        free = ctx.free
        lo = free[0]
        if len(free) == 1:
            yield 1 << lo, 1.0
            return
        c = np.take(ctx.conditional(lo), [0], axis=lo)  # keepdims over x_A
        yield 1 << lo, c
        yield (1 << free[-1]) | (1 << free[-2]), 1.0 - c

    def choices(self, table, A, xA):
        d = table.ndim
        free = [j for j in range(d) if j not in A]
        if len(free) == 1:
            return [((free[0],), 1.0)]
        c = float(_cond(table, A, xA, free[0])[0])
        return [((free[0],), c), ((free[-2], free[-1]), 1.0 - c)]


def _brute_law(table, planner):
    """Exact law by a recursion over the states {(A, x_A): mass}."""
    d, K = table.ndim, table.shape[0]
    q = np.zeros(table.shape)
    lost = 0.0
    states = {((), ()): 1.0}
    while states:
        nxt = {}
        for (A, xA), m in states.items():
            A_, xA_ = list(A), list(xA)
            for B, w in planner.choices(table, A_, xA_):
                if w == 0:
                    continue
                rows = [_cond(table, A_, xA_, j) for j in B]
                for ys in itertools.product(range(K), repeat=len(B)):
                    f = m * w * np.prod([r[y] for r, y in zip(rows, ys)])
                    vals = dict(zip(A, xA)) | dict(zip(B, ys))
                    A2 = tuple(sorted(vals))
                    x2 = tuple(vals[i] for i in A2)
                    if len(A2) == d:
                        q[x2] += f
                        continue
                    m2 = table.sum(axis=tuple(i for i in range(d) if i not in A2))
                    if m2[x2] > 0:
                        nxt[(A2, x2)] = nxt.get((A2, x2), 0.0) + f
                    else:
                        lost += f
        states = nxt
    return q, lost


@given(st.integers(2, 3), st.integers(1, 5), st.integers(0, 10**6), st.sampled_from([0.0, 0.3]))
@settings(max_examples=20, deadline=None)
def test_stochastic_planner_with_value_dependent_weights(K, d, seed, zeros):
    if K**d > 250:
        d = 4
    t = random_table(K, d, seed, zeros=zeros)
    run = exact_run(mt.Joint(t), None, _MixedPlanner(), trajectory=True)
    q, lost = _brute_law(t, _MixedPlanner())
    np.testing.assert_allclose(run.law.table, q, atol=TOL)
    assert abs(run.lost - lost) < TOL
    assert abs(run.law.table.sum() + run.lost - 1.0) < 1e-12
    # reveal steps: every position is revealed exactly once (given the run is not lost)
    assert run.reveal_steps.sum() <= d + 1e-12


@pytest.mark.slow  # ~7 s (compiling the eager chain); default twins: tests/samplers/test_sampler_kl.py::
# test_exact_run_backends_agree (numpy = JAX kernel) and ::test_planners_and_errors, test_ties.py::
# test_sampler_kl_follows_the_tie_rule (the JAX chain of adaptive planners = the numpy law)
@pytest.mark.parametrize("planner", ["confidence", "margin", "left_to_right"])
def test_chain_apply_numpy_equals_jax(planner):
    t = random_table(2, 6, 3, zeros=0.2)
    p = mt.Joint(t)
    plan = mt.Schedule((2, 1, 2, 1))
    np_law = exact_run(p, plan, planner, backend="numpy").law.table
    jx_law = exact_run(p, plan, planner, backend="eager").law.table
    np.testing.assert_allclose(np_law, jx_law, atol=1e-15)


def test_chain_kl_value_and_gradient():
    # confidence: the value on a concrete table; left_to_right (its order does not read the
    # law, so it runs under jax.grad): the gradient against central finite differences
    rng = np.random.default_rng(0)
    theta = rng.normal(size=(2,) * 4)
    plan = mt.Schedule((2, 2))

    def f(th):
        return sampler_kl(jax.nn.softmax(th.ravel()).reshape(th.shape), plan, planner="confidence")

    with x64():
        th = jnp.asarray(theta)
        # a planner that reads the conditionals takes its choices from a concrete table
        table = np.asarray(jax.nn.softmax(th.ravel()).reshape(th.shape))
        planned = exact_run(mt.Joint(table), plan, "confidence").law.table
        assert np.isclose(float(f(th)), mt.kl(mt.Joint(table), mt.Joint(planned)), atol=1e-12)
        g = np.asarray(jax.grad(lambda x: sampler_kl(jax.nn.softmax(x.ravel()).reshape(x.shape), plan,
                                                     planner="left_to_right"))(th))
    eps = 1e-6
    for pos in [(0, 0, 0, 0), (1, 0, 1, 1), (0, 1, 1, 0)]:
        e = np.zeros_like(theta)
        e[pos] = eps

        def val(x):
            tab = np.exp(x - x.max())
            tab = tab / tab.sum()
            return mt.kl(mt.Joint(tab), exact_run(mt.Joint(tab), plan, "left_to_right").law)

        fd = (val(theta + e) - val(theta - e)) / (2 * eps)
        assert abs(fd - g[pos]) < 1e-7


@given(st.integers(0, 10**6), st.sampled_from(["confidence", "entropy", "left_to_right"]))
@settings(max_examples=20, deadline=None)
def test_chain_trajectory_kl_equals_kl_with_tiny_entries(seed, planner):
    # the terms are computed from the logarithms of the marginals, never from the product
    # P[x_A] prod_b p(x_b | x_A) (which underflows for entries down to 1e-300); for a
    # deterministic planner the trajectory KL is KL(p || q) (docs/design.md §3)
    t = random_table(2, 5, seed, tiny=0.3, zeros=0.1)
    p = mt.Joint(t)
    try:
        run = exact_run(p, mt.Schedule((2, 2, 1)), planner, trajectory=True)
    except ValueError as e:  # q underflows float64 somewhere: refused, not a wrong number
        assert str(e).startswith("p: the sampler law underflows")
        return
    ref = mt.kl(p, run.law)
    assert np.isfinite(run.path_kl)
    assert abs(run.path_kl - ref) <= 1e-12 * max(1.0, abs(ref))


def test_chain_under_vmap_equals_a_loop():
    # a planner whose order does not read the law runs on a batch of traced tables; a law
    # with zeros loses mass at different states than the uniform structure: q is still right
    tabs = np.stack([random_table(2, 5, s, zeros=z) for s, z in [(1, 0.0), (2, 0.3), (3, 0.5)]])
    plan = mt.Schedule((2, 1, 2))
    with x64():
        got = np.asarray(jax.vmap(lambda t: sampler_kl(t, plan, planner="left_to_right"))(jnp.asarray(tabs)))
    want = [mt.kl(mt.Joint(t), exact_run(mt.Joint(t), plan, "left_to_right").law) for t in tabs]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
