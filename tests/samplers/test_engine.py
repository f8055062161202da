"""Tests of the exact law engine (mdmtheory.samplers.engine) against brute force.

References written here:

* random-order fixed-cardinality sampler: enumerate all d! permutations, cut each into
  blocks of the schedule, and for every x multiply the factorized conditionals
  p(x_j | x_A), computed from marginals of the table; average over permutations.
* Bernoulli-subset sampler on a grid t_0 < ... < t_N: enumerate the reveal-step
  assignment of every position -- "init" (prob t_0), step j (prob t_{j+1} - t_j) or
  "completion" (prob 1 - t_N); init drawn jointly from p, each step factorized given the
  revealed positions, completion jointly from the exact conditional.
* trajectory KL: the same enumerations, summing E_p TC(X_B | X_A) over the steps.

Zero-probability prefixes (docs/design.md §6): mass that reaches a partial sequence x_A with
p(x_A) = 0 while some position is still masked cannot continue (the exact conditionals
are undefined); it is ``lost``. Mass reaching a full sequence x with p(x) = 0 at the last
factorized step stays in q.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mdmtheory.information import kl, path_kl, step_path_kl
from mdmtheory.information import total_correlation
from mdmtheory.laws import Joint
from mdmtheory.samplers.engine import exact_run, sampler_law
from mdmtheory.schedules import Grid, Schedule
from mdmtheory.testing import schedules
from reference import random_table

TOL = 1e-12


# -- brute-force references -----------------------------------------------------------
class Marg:
    """Marginals p(x_S) as full-shape arrays (constant along positions outside S)."""

    def __init__(self, table):
        self.table = np.asarray(table, dtype=np.float64)
        self.d, self.K = self.table.ndim, self.table.shape[0]
        self._cache = {}

    def __call__(self, S) -> np.ndarray:
        S = frozenset(S)
        if S not in self._cache:
            rest = tuple(j for j in range(self.d) if j not in S)
            m = self.table.sum(axis=rest, keepdims=True) if rest else self.table
            self._cache[S] = np.broadcast_to(m, self.table.shape)
        return self._cache[S]

    def cond(self, j, A) -> np.ndarray:
        """p(x_j | x_A), 0 where p(x_A) = 0."""
        num, den = self(set(A) | {j}), self(A)
        return np.divide(num, den, out=np.zeros(self.table.shape), where=den > 0)

    def tc(self, B, A) -> float:
        """E_p TC(X_B | X_A) = sum_x p(x) log[p(x_B | x_A) / prod_j p(x_j | x_A)]."""
        if len(B) < 2:
            return 0.0
        sup = self.table > 0
        log = lambda S: np.log(self(S)[sup])  # noqa: E731  all > 0 on the support of p
        val = log(set(A) | set(B)) + (len(B) - 1) * log(A) - sum(log(set(A) | {j}) for j in B)
        return float(np.sum(self.table[sup] * val))


def brute_random_order(table, sizes):
    """(q, lost, per-step E TC) of the random-order sampler, over all d! permutations."""
    P = Marg(table)
    d, K = P.d, P.K
    q = np.zeros(P.table.shape)
    lost = 0.0
    tc = np.zeros(len(sizes))
    cuts = np.concatenate([[0], np.cumsum(sizes)])
    perms = list(itertools.permutations(range(d)))
    for perm in perms:
        f = np.ones(P.table.shape)  # mass of the factorized path, a function of x_A
        A: tuple = ()
        for t, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
            if t > 0:  # A non-empty and not full: an unreachable prefix is stuck
                stuck = P(A) == 0
                lost += float(np.sum(f[stuck])) / K ** (d - len(A))
                f = np.where(stuck, 0.0, f)
            B = perm[a:b]
            for j in B:
                f = f * P.cond(j, A)
            tc[t] += P.tc(B, A)
            A = A + B
        q += f
    n = len(perms)
    return q / n, lost / n, tc / n


def brute_bernoulli(table, times):
    """(q, lost, per-step E TC) of the Bernoulli-subset sampler on the grid ``times``."""
    P = Marg(table)
    d, K = P.d, P.K
    t = list(times)
    N = len(t) - 1
    labels = ["init"] + list(range(N)) + ["done"]
    probs = [t[0]] + [t[j + 1] - t[j] for j in range(N)] + [1.0 - t[N]]
    q = np.zeros(P.table.shape)
    lost = 0.0
    tc = np.zeros(N)
    everything = frozenset(range(d))
    for assign in itertools.product(range(len(labels)), repeat=d):
        w = math.prod(probs[a] for a in assign)
        if w == 0.0:
            continue
        A = frozenset(i for i in range(d) if assign[i] == 0)
        f = P(A).copy()  # exact initialization: x_A ~ p_A
        for j in range(N):
            B = tuple(i for i in range(d) if assign[i] == j + 1)
            for i in B:
                f = f * P.cond(i, A)
            tc[j] += w * P.tc(B, A)
            A = A | set(B)
            if A != everything:
                stuck = P(A) == 0
                lost += w * float(np.sum(f[stuck])) / K ** (d - len(A))
                f = np.where(stuck, 0.0, f)
        if A != everything:  # exact completion from p(x_rest | x_A)
            f = f * np.divide(P.table, P(A), out=np.zeros(P.table.shape), where=P(A) > 0)
        q += w * f
    return q, lost, tc


def sparse_table(K, d, seed, n_support):
    """Uniform-ish law on a few outcomes: many zero-probability prefixes."""
    rng = np.random.default_rng(seed)
    table = np.zeros(K**d)
    table[rng.choice(K**d, size=n_support, replace=False)] = rng.dirichlet(np.ones(n_support))
    return table.reshape((K,) * d)


# -- the random-order sampler --------------------------------------------------------------
RANDOM_CASES = [
    # (table, schedule)
    (random_table(2, 3, 0), (2, 1)),
    (random_table(2, 3, 1), (1, 2)),
    (random_table(2, 4, 2, zeros=0.3), (2, 2)),
    (random_table(2, 4, 3), (1, 2, 1)),
    (random_table(2, 5, 4, zeros=0.5), (3, 2)),
    (random_table(2, 6, 5), (2, 3, 1)),
    (random_table(2, 6, 6, zeros=0.6), (1, 1, 4)),
    (random_table(3, 3, 7), (2, 1)),
    (random_table(3, 3, 8, zeros=0.4), (1, 2)),
    (random_table(3, 4, 9, zeros=0.5), (2, 2)),
    (random_table(3, 4, 10), (3, 1)),
    (random_table(3, 5, 11, zeros=0.7), (2, 1, 2)),
    (sparse_table(2, 4, 12, 3), (2, 1, 1)),
    (sparse_table(3, 4, 13, 5), (2, 2)),
    (sparse_table(3, 5, 14, 6), (1, 3, 1)),
    (sparse_table(2, 6, 15, 5), (2, 2, 2)),
]


@pytest.mark.parametrize("table,sizes", RANDOM_CASES)
def test_random_order_law_matches_permutation_enumeration(table, sizes):
    q_ref, lost_ref, tc_ref = brute_random_order(table, sizes)
    p = Joint(table)
    run = exact_run(p, Schedule(sizes), "random", trajectory=True)
    np.testing.assert_allclose(run.law.table, q_ref, rtol=0, atol=TOL)
    assert run.law.lost == pytest.approx(lost_ref, abs=TOL)
    assert run.lost == run.law.lost
    assert run.law.table.sum() + run.lost == pytest.approx(1.0, abs=TOL)
    # trajectory KL: column 0 is the (empty) initialization, columns 1.. the steps
    assert run.step_kl.shape == (len(sizes) + 1,)
    assert run.step_kl[0] == 0.0
    np.testing.assert_allclose(run.step_kl[1:], tc_ref, rtol=0, atol=TOL)
    assert run.path_kl == pytest.approx(tc_ref.sum(), abs=TOL)
    # the profile identity (CCL25/LZ25): same numbers from the entropies alone
    np.testing.assert_allclose(step_path_kl(p, Schedule(sizes)), tc_ref, rtol=0, atol=TOL)
    assert path_kl(p, Schedule(sizes)) == pytest.approx(tc_ref.sum(), abs=TOL)
    # and the law alone is what sampler_law returns
    np.testing.assert_array_equal(sampler_law(p, Schedule(sizes)).table, run.law.table)


def test_some_cases_have_lost_mass():
    """The table of cases really exercises zero-probability prefixes."""
    lost = [brute_random_order(t, s)[1] for t, s in RANDOM_CASES[12:]]
    assert min(lost) > 0.01


def test_lost_mass_hand_example():
    """p uniform on {00, 11} (d = 3 with X_3 = X_1): schedule (2, 1).

    Step 1 draws X_i, X_j independently uniform: disagreeing pairs (prob 1/2) are
    unreachable for (X_1, X_2) and (X_2, X_3) and (X_1, X_3) alike, so lost = 1/2 and
    q = p / 2 (agreeing pairs complete exactly).
    """
    table = np.zeros((2, 2, 2))
    table[0, 0, 0] = table[1, 1, 1] = 0.5
    q = sampler_law(Joint(table), Schedule((2, 1)))
    assert q.lost == pytest.approx(0.5, abs=1e-15)
    np.testing.assert_allclose(q.table, table / 2, atol=1e-15)
    # one step: a product of uniforms, nothing lost, mass on sequences outside supp(p)
    q1 = sampler_law(Joint(table), Schedule((3,)))
    assert q1.lost == 0.0
    np.testing.assert_allclose(q1.table, 1 / 8, atol=1e-15)


def test_reveal_steps_of_random_planner():
    """Full-support law: position j is revealed at step t with probability k_t / d."""
    sizes = (2, 1, 3)
    run = exact_run(Joint(random_table(2, 6, 3)), Schedule(sizes))
    expect = np.array([[0.0] + [k / 6 for k in sizes]] * 6)
    np.testing.assert_allclose(run.reveal_steps, expect, atol=TOL)
    np.testing.assert_allclose(run.step_counts, [0, 0, 0, 1], atol=TOL)
    assert run.expected_steps == pytest.approx(3.0)


# -- the Bernoulli-subset sampler ----------------------------------------------------------
BERNOULLI_CASES = [
    (random_table(2, 3, 20), (0.0, 0.4, 1.0)),
    (random_table(2, 3, 21, zeros=0.4), (0.0, 0.2, 0.5, 1.0)),
    (random_table(2, 4, 22), (0.0, 1.0)),
    (random_table(2, 4, 23, zeros=0.3), (0.1, 0.5, 0.9)),
    (random_table(3, 3, 24, zeros=0.5), (0.2, 0.6, 1.0)),
    (random_table(3, 3, 25), (0.0, 0.3, 0.7)),
    (random_table(2, 5, 26, zeros=0.5), (0.15, 0.4, 0.6, 0.85)),
    (random_table(2, 5, 27), (0.0, 0.25, 0.5, 1.0)),
    (sparse_table(2, 4, 28, 3), (0.0, 0.5, 1.0)),
    (sparse_table(3, 3, 29, 4), (0.25, 0.5, 0.75)),
    (sparse_table(2, 5, 30, 4), (0.0, 0.3, 0.6, 1.0)),
]


@pytest.mark.parametrize("table,times", BERNOULLI_CASES)
def test_bernoulli_law_matches_assignment_enumeration(table, times):
    q_ref, lost_ref, tc_ref = brute_bernoulli(table, times)
    p, grid = Joint(table), Grid(times)
    run = exact_run(p, grid, trajectory=True)
    np.testing.assert_allclose(run.law.table, q_ref, rtol=0, atol=TOL)
    assert run.lost == pytest.approx(lost_ref, abs=TOL)
    assert run.law.table.sum() + run.lost == pytest.approx(1.0, abs=TOL)
    N, complete = grid.steps, times[-1] < 1.0
    assert run.step_kl.shape == (N + 1 + complete,)
    assert run.step_kl[0] == 0.0 and (not complete or run.step_kl[-1] == 0.0)
    np.testing.assert_allclose(run.step_kl[1 : N + 1], tc_ref, rtol=0, atol=TOL)
    assert run.path_kl == pytest.approx(tc_ref.sum(), abs=TOL)
    # sum of Gamma_umask over the grid (W26), from the profile alone
    np.testing.assert_allclose(step_path_kl(p, grid), tc_ref, rtol=0, atol=1e-11)
    assert path_kl(p, grid) == pytest.approx(tc_ref.sum(), abs=1e-11)
    # the planner name 'bernoulli' is the same sampler
    np.testing.assert_array_equal(sampler_law(p, grid, planner="bernoulli").table, run.law.table)


def test_bernoulli_cases_have_lost_mass():
    assert max(brute_bernoulli(t, g)[1] for t, g in BERNOULLI_CASES[8:]) > 0.01


def test_bernoulli_reveal_steps():
    """Full-support law: P(revealed at init) = t_0, at step j t_{j+1} - t_j, after 1 - t_N."""
    times = (0.1, 0.35, 0.8)
    run = exact_run(Joint(random_table(2, 4, 5)), Grid(times))
    expect = [0.1, 0.25, 0.45, 0.2]
    np.testing.assert_allclose(run.reveal_steps, [expect] * 4, atol=TOL)
    assert run.step_counts.sum() == pytest.approx(1.0)


def test_one_step_grid_is_product_of_marginals():
    """Grid (0, 1): one step revealing everything: q = prod_i p_i, KL = path KL = TC."""
    table = random_table(3, 3, 7, zeros=0.3)
    p = Joint(table)
    run = exact_run(p, Grid((0.0, 1.0)), trajectory=True)
    marg = [table.sum(axis=tuple(k for k in range(3) if k != i)) for i in range(3)]
    np.testing.assert_allclose(run.law.table, np.einsum("i,j,k->ijk", *marg), atol=TOL)
    tc = total_correlation(p)
    assert kl(p, run.law) == pytest.approx(tc, abs=TOL)
    assert run.path_kl == pytest.approx(tc, abs=TOL)
    assert path_kl(p, Grid((0.0, 1.0))) == pytest.approx(tc, abs=1e-11)


# -- identities on random joints -----------------------------------------------------------
@st.composite
def joints(draw, max_d=5, max_K=3, max_outcomes=243):
    K = draw(st.integers(2, max_K))
    d = draw(st.integers(1, max_d))
    while K**d > max_outcomes:
        d -= 1
    seed = draw(st.integers(0, 2**32 - 1))
    kind = draw(st.sampled_from(["dense", "zeros", "peaked", "sparse"]))
    if kind == "sparse":
        return sparse_table(K, d, seed, draw(st.integers(1, min(K**d, 6))))
    zeros = {"dense": 0.0, "zeros": 0.5, "peaked": 0.0}[kind]
    alpha = 0.02 if kind == "peaked" else draw(st.sampled_from([0.3, 1.0, 5.0]))
    return random_table(K, d, seed, zeros=zeros, alpha=alpha)


@st.composite
def grids(draw):
    n = draw(st.integers(2, 4))
    times = sorted(draw(st.sets(st.integers(0, 20), min_size=n, max_size=n)))
    return Grid(np.array(times) / 20)


def _check_law(p, run):
    """Shared checks: a sub-probability table summing to 1 - lost, KL <= path KL."""
    q = run.law
    assert np.all(q.table >= 0)
    assert q.table.sum() == pytest.approx(1.0 - q.lost, abs=TOL)
    assert np.all(q.table[p.table > 0] > 0)  # every outcome of p is reachable
    div = kl(p, q)
    assert -TOL <= div <= run.path_kl + TOL  # data processing
    return div


def _check_invariance(table, plan, run, div, data):
    """Permuting positions (plan unchanged) transposes q; relabelling the tokens of one
    position relabels q; the KL, the path KL and the lost mass do not change."""
    d, K = table.ndim, table.shape[0]
    if data.draw(st.booleans(), label="permute positions (else relabel tokens)"):
        perm = data.draw(st.permutations(range(d)))
        move = lambda t: np.transpose(t, perm)  # noqa: E731
    else:
        axis = data.draw(st.integers(0, d - 1))
        relabel = data.draw(st.permutations(range(K)))
        move = lambda t: np.take(t, relabel, axis=axis)  # noqa: E731
    p2 = Joint(move(table))
    run2 = exact_run(p2, plan, trajectory=True)
    np.testing.assert_allclose(run2.law.table, move(run.law.table), rtol=0, atol=TOL)
    assert run2.lost == pytest.approx(run.lost, abs=TOL)
    assert kl(p2, run2.law) == pytest.approx(div, abs=1e-11)
    assert run2.path_kl == pytest.approx(run.path_kl, abs=1e-11)


@given(table=joints(max_outcomes=81), data=st.data())
def test_random_order_identities(table, data):
    p = Joint(table)
    sched = data.draw(schedules(table.ndim))
    run = exact_run(p, sched, trajectory=True)
    div = _check_law(p, run)
    assert run.path_kl == pytest.approx(path_kl(p, sched), abs=1e-11)
    _check_invariance(table, sched, run, div, data)


@given(table=joints(max_outcomes=81), grid=grids(), data=st.data())
def test_bernoulli_identities(table, grid, data):
    p = Joint(table)
    run = exact_run(p, grid, trajectory=True)
    div = _check_law(p, run)
    assert run.path_kl == pytest.approx(path_kl(p, grid), abs=1e-11)
    _check_invariance(table, grid, run, div, data)


@given(table=joints())
def test_one_step_and_one_token_per_step(table):
    d = table.ndim
    p = Joint(table)
    # T = 1: q is the product of the marginals and KL = path KL = TC
    one = exact_run(p, Schedule((d,)), trajectory=True)
    tc = total_correlation(p)
    assert one.lost == 0.0
    assert kl(p, one.law) == pytest.approx(tc, abs=1e-11)
    assert one.path_kl == pytest.approx(tc, abs=1e-11)
    assert path_kl(p, Schedule((d,))) == pytest.approx(tc, abs=1e-11)
    # one token per step: autoregression in a random order reproduces p exactly
    ar = exact_run(p, Schedule((1,) * d), trajectory=True)
    assert ar.lost == 0.0
    np.testing.assert_allclose(ar.law.table, table, rtol=0, atol=TOL)
    assert abs(kl(p, ar.law)) <= TOL
    assert ar.path_kl == 0.0


@given(
    K=st.integers(2, 3),
    d=st.integers(1, 5),
    seed=st.integers(0, 2**32 - 1),
    data=st.data(),
)
def test_product_laws_are_sampled_exactly(K, d, seed, data):
    rng = np.random.default_rng(seed)
    rows = rng.dirichlet(np.full(K, 0.5), size=d)
    table = rows[0]
    for r in rows[1:]:
        table = np.multiply.outer(table, r)
    p = Joint(table / table.sum())
    for plan in (data.draw(schedules(d)), data.draw(grids())):
        run = exact_run(p, plan, trajectory=True)
        assert run.lost == 0.0
        np.testing.assert_allclose(run.law.table, p.table, rtol=0, atol=TOL)
        assert abs(kl(p, run.law)) <= TOL
        assert abs(run.path_kl) <= TOL
        assert abs(path_kl(p, plan)) <= 1e-11


def test_grid_law_of_a_near_degenerate_law_is_finite():
    """Issue 17: a valid law whose marginals reach 1e-300 gave NaN in the exact completion
    (m / p(x_A) overflowed before the product with p(x)); the assignment enumeration is the
    reference."""
    from mdmtheory.laws.families import dirichlet

    p = dirichlet(7, 2, 0.001, seed=874543)
    times = (1e-12, 0.6387, 0.7507)
    run = exact_run(p, Grid(times), trajectory=True)
    q_ref, lost_ref, tc_ref = brute_bernoulli(p.table, times)
    assert np.all(np.isfinite(run.law.table))
    np.testing.assert_allclose(run.law.table, q_ref, rtol=0, atol=TOL)
    assert run.lost == pytest.approx(lost_ref, abs=TOL)
    assert run.path_kl == pytest.approx(tc_ref.sum(), abs=TOL)
    assert np.isfinite(kl(p, run.law))


# -- layouts and sizes of the kernel (issue 19) ---------------------------------------------
@pytest.mark.parametrize("case", [3, 6, 10, 14], ids=["zeros", "grid-t0", "K3-t0", "sparse"])
@pytest.mark.parametrize("block", [5, 49], ids=["one-axis-pieces", "two-axis-pieces"])
def test_bernoulli_step_in_pieces_matches_enumeration(monkeypatch, case, block):
    """A Bernoulli step larger than GRID_BLOCK_ENTRIES is split by the slots of its leading
    axes; with tiny pieces (every axis but the last few split) the law, lost mass, reveal law
    and trajectory KL are still the assignment enumeration's."""
    from mdmtheory.samplers import engine

    table, times = BERNOULLI_CASES[case] if case < len(BERNOULLI_CASES) else (sparse_table(3, 4, 31, 6), (0.0, 0.4, 0.8))
    q_ref, lost_ref, tc_ref = brute_bernoulli(table, times)
    whole = exact_run(Joint(table), Grid(times), trajectory=True)
    monkeypatch.setattr(engine, "GRID_BLOCK_ENTRIES", block)
    run = exact_run(Joint(table), Grid(times), trajectory=True)
    np.testing.assert_allclose(run.law.table, q_ref, rtol=0, atol=TOL)
    assert run.lost == pytest.approx(lost_ref, abs=TOL)
    assert run.path_kl == pytest.approx(tc_ref.sum(), abs=TOL)
    np.testing.assert_allclose(run.reveal_steps, whole.reveal_steps, rtol=0, atol=TOL)
    np.testing.assert_allclose(run.step_counts, whole.step_counts, rtol=0, atol=TOL)


def test_grid_size_limit_is_the_state_limit(monkeypatch):
    """A Grid is accepted whenever (K+1)**d fits, as for a Schedule (K = 2, d = 12 was
    refused for its (2K+1)**d working tensor): shown on d = 5 with the JAX-side limit set
    below 5**5; the JAX backends keep that limit and name the numpy one."""
    from mdmtheory.samplers import engine

    table, times = BERNOULLI_CASES[6]
    monkeypatch.setattr(engine, "MAX_GRID_ENTRIES", 5**5 - 1)
    q_ref, lost_ref, _ = brute_bernoulli(table, times)
    run = exact_run(Joint(table), Grid(times))
    np.testing.assert_allclose(run.law.table, q_ref, rtol=0, atol=TOL)
    assert run.lost == pytest.approx(lost_ref, abs=TOL)
    with pytest.raises(ValueError, match="^p: .*numpy backend"):
        exact_run(Joint(table), Grid(times), backend="eager")


@pytest.mark.parametrize("K,d,sizes", [(2, 7, (3, 1, 2, 1)), (3, 5, (2, 1, 2)), (3, 6, (2, 2, 2)), (4, 4, (2, 2))])
def test_level_layout_of_random_order_matches_enumeration(K, d, sizes):
    """The random-order engine keeps only the revealed sets of size s_t (kernel.level_step);
    against the permutation enumeration on laws with lost mass, larger d than RANDOM_CASES."""
    table = sparse_table(K, d, 40 + d, K ** (d - 2))
    q_ref, lost_ref, tc_ref = brute_random_order(table, sizes)
    run = exact_run(Joint(table), Schedule(sizes), trajectory=True)
    assert lost_ref > 1e-3
    np.testing.assert_allclose(run.law.table, q_ref, rtol=0, atol=TOL)
    assert run.lost == pytest.approx(lost_ref, abs=TOL)
    np.testing.assert_allclose(run.step_kl[1:], tc_ref, rtol=0, atol=TOL)
