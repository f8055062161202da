"""Checks of proofs/deterministic_planner_kl.md: for a planner deterministic given x_A,
q(x) is the product along the path of x and KL(p || q) = E_p sum_t TC(x_{B_t} | x_{A_t})
pointwise = the trajectory KL."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import rel_entr

import mdmtheory as mt
from mdmtheory.samplers.adaptive import (
    ConfidencePlanner,
    EntropyBudgetPlanner,
    FactorPlanner,
    FrechetPlanner,
    EntropyPlanner,
    LeftToRightPlanner,
    MarginPlanner,
    ThresholdPlanner,
)
from mdmtheory.testing import joint_and_schedule, joints
from reference import marginal


def cond_vec(table, j, A, x):
    """p(x_j = . | x_A) at the values x (a length-K vector); None if p(x_A) = 0."""
    m = np.moveaxis(marginal(table, set(A) | {j}), j, -1)
    idx = tuple(x[k] if k in A else 0 for k in range(table.ndim) if k != j)
    row = m[idx]
    return row / row.sum() if row.sum() > 0 else None


def joint_cond(table, B, A, x):
    """p(x_B | x_A) at x."""
    num = marginal(table, set(A) | set(B))[tuple(x[k] if k in set(A) | set(B) else 0 for k in range(table.ndim))]
    den = marginal(table, set(A))[tuple(x[k] if k in A else 0 for k in range(table.ndim))] if A else 1.0
    return num / den


def state_tc(table, A, B, x):
    """TC(X_B | X_A = x_A) = KL(p(x_B | x_A) || prod_j p(x_j | x_A)), by enumerating x_B."""
    d = table.ndim
    Bs = sorted(B)
    sub = marginal(table, set(A) | set(B))[tuple(x[k] if k in A else slice(None) if k in B else 0 for k in range(d))]
    sub = sub / sub.sum()  # law of x_B given x_A, axes in increasing position order
    marg = [cond_vec(table, j, A, x) for j in Bs]
    prod = marg[0]
    for m in marg[1:]:
        prod = np.multiply.outer(prod, m)
    return float(np.sum(rel_entr(sub, prod.reshape(sub.shape))))


@dataclass(frozen=True)
class RandomRulePlanner:
    """Deterministic given (A, x_A): a pseudo-random non-empty subset of the free positions."""

    seed: int
    name: str = "random_rule"
    needs_schedule: bool = False
    allows_empty: bool = False

    def choose(self, A, xA, free):
        rng = np.random.default_rng([self.seed, A, *xA])
        pick = [j for j in free if rng.random() < 0.4]
        return pick or [free[int(rng.integers(len(free)))]]

    def moves(self, ctx):
        A = ctx.revealed
        Apos = [k for k in range(ctx.d) if A >> k & 1]
        groups = {}
        for xA in itertools.product(range(ctx.K), repeat=len(Apos)):
            B = sum(1 << j for j in self.choose(A, xA, list(ctx.free)))
            ind = groups.setdefault(B, np.zeros(ctx.shape))
            ind[tuple(xA[Apos.index(k)] if k in Apos else 0 for k in range(ctx.d))] = 1.0
        yield from groups.items()

    def path(self, table, x):
        d, A, steps = table.ndim, [], []
        while len(A) < d:
            free = [j for j in range(d) if j not in A]
            B = self.choose(sum(1 << k for k in A), tuple(x[k] for k in sorted(A)), free)
            steps.append((sorted(A), sorted(B)))
            A = A + list(B)
        return steps


def check_paths(p, law, path_of):
    """Items (1)-(3) of the proof for every x in the support, given a path function."""
    t = p.table
    kl_pointwise = kl_states = 0.0
    seen = {}
    for x in itertools.product(range(p.K), repeat=p.d):
        px = t[x]
        if px <= 0:
            continue
        steps = path_of(x)
        qx = math.prod(cond_vec(t, j, A, x)[x[j]] for A, B in steps for j in B)
        assert math.isclose(law.table[x], qx, rel_tol=1e-9, abs_tol=1e-300)
        chain = math.prod(joint_cond(t, B, A, x) for A, B in steps)
        assert math.isclose(chain, px, rel_tol=1e-9)
        log_terms = sum(math.log(joint_cond(t, B, A, x)) - sum(math.log(cond_vec(t, j, A, x)[x[j]]) for j in B)
                        for A, B in steps)
        assert abs(math.log(px / qx) - log_terms) <= 1e-9 * max(1.0, abs(log_terms))
        kl_pointwise += px * log_terms
        for A, B in steps:  # per-state TC, each state (A, x_A) counted once with mass p(x_A)
            key = (tuple(A), tuple(x[k] for k in A))
            if key in seen:
                assert seen[key] == tuple(B)  # B is a function of the state
                continue
            seen[key] = tuple(B)
            pA = float(marginal(t, set(A))[tuple(x[k] if k in A else 0 for k in range(p.d))]) if A else 1.0
            kl_states += pA * state_tc(t, A, B, x)
    return kl_pointwise, kl_states


@given(joints(d=(2, 4), K=(2, 3), max_outcomes=81), st.integers(0, 2**32 - 1))
def test_random_deterministic_planner(p, seed):
    planner = RandomRulePlanner(seed)
    run = mt.exact_run(p, None, planner, trajectory=True)
    kl_pointwise, kl_states = check_paths(p, run.law, lambda x: planner.path(p.table, x))
    kl = mt.kl(p, run.law)
    tol = 1e-10 * max(1.0, p.d * math.log(p.K))
    assert abs(kl - kl_pointwise) <= tol and abs(kl - kl_states) <= tol
    assert abs(run.path_kl - kl) <= tol
    assert abs(run.law.table.sum() + run.lost - 1.0) <= 1e-12


def simulate(planner, table, schedule, x):
    """The path of x under a package planner, using its own (Monte Carlo) rule ``select``."""
    d, K = table.ndim, table.shape[0]
    A, steps, t = [], [], 0
    while len(A) < d:
        probs = np.zeros((1, d, K))
        free = np.zeros((1, d), dtype=bool)
        for j in range(d):
            if j not in A:
                probs[0, j] = cond_vec(table, j, A, x)
                free[0, j] = True
        size = None if schedule is None else schedule.sizes[t]
        B = [int(j) for j in np.flatnonzero(planner.select(t, size, probs, free)[0])]
        steps.append((sorted(A), B))
        A = A + B
        t += 1
    return steps


# deterministic given x_A: a fixed tie rule (ties="random" draws among tied positions; its law is
# a mixture and its path KL an upper bound, tests/samplers/test_ties.py)
PLANNERS = st.sampled_from([
    ("left_to_right", lambda: LeftToRightPlanner(), True),
    ("confidence", lambda: ConfidencePlanner(ties="lowest"), True),
    ("margin", lambda: MarginPlanner(ties="topk"), True),
    ("entropy", lambda: EntropyPlanner(ties="lowest"), True),
    ("threshold", lambda: ThresholdPlanner(0.6, ties="lowest"), False),
    ("entropy_budget", lambda: EntropyBudgetPlanner(0.5, ties="topk"), False),
    ("factor", lambda: FactorPlanner(0.75, ties="lowest"), False),
    ("frechet", lambda: FrechetPlanner(0.25, ties="topk"), False),
])


@given(joint_and_schedule(d=(2, 4), K=(2, 3), max_outcomes=81), PLANNERS)
def test_package_adaptive_planners(case, planner_spec):
    p, sched = case
    name, make, with_schedule = planner_spec
    planner = make()
    plan = sched if with_schedule else None
    run = mt.exact_run(p, plan, planner, trajectory=True)
    kl_pointwise, kl_states = check_paths(p, run.law, lambda x: simulate(planner, p.table, plan, x))
    kl = mt.kl(p, run.law)
    tol = 1e-10 * max(1.0, p.d * math.log(p.K))
    assert abs(kl - kl_pointwise) <= tol and abs(kl - kl_states) <= tol, name
    assert abs(run.path_kl - kl) <= tol, name


def test_random_planner_has_a_gap():
    p = mt.families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 4)
    sched = mt.Schedule((2, 2))
    run = mt.exact_run(p, sched, "random", trajectory=True)
    assert mt.kl(p, run.law) < run.path_kl - 1e-3
