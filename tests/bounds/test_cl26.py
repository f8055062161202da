"""Cai & Li's entropy-sum rule (arXiv 2603.22248; issue 28 item 3; mdmtheory.bounds.cl26).

Definitions used here, written from the paper's abstract (the only text that could be read) and
from the definitions of KL and entropy, not from the package's code:
* the rule: sort the masked positions by increasing conditional entropy H_j = H(X_j | x_A)
  (ties by lowest index) and unmask them one by one "until the cumulative entropy exceeds a
  threshold" tau, the crossing token included (all of them if the sum never exceeds tau);
* the sampler: the positions of one iteration are drawn independently from their conditionals
  given the revealed values; the number of iterations T is counted per run;
* the data path: the same rule run on the values of a sequence x drawn from p.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory import families
from mdmtheory.bounds import cl26
from mdmtheory.samplers import EntropyBudgetPlanner, exact_run, simulate


# -- from the definitions ----------------------------------------------------------------------
def H(w):
    w = np.asarray(w, dtype=float)
    w = w[w > 0]
    return float(-(w * np.log(w)).sum())


def rule(cond: dict, tau: float, tol: float = 1e-12) -> tuple:
    """The positions one iteration unmasks: cond maps each masked position to its conditional law.
    ``tol``: "exceeds" means by more than the package's tie tolerance (1e-12 nats), so that
    rounding of entropies that are 0 does not decide."""
    order = sorted(cond, key=lambda j: (round(H(cond[j]), 9), j))  # equal entropies (to rounding): lowest index
    out, total = [], 0.0
    for j in order:
        out.append(j)
        total += H(cond[j])
        if total > tau + tol:
            break
    return tuple(sorted(out))


def conditionals(table: np.ndarray, revealed: dict) -> dict:
    """p(x_j = . | x_A = revealed) for every masked j (None when p(x_A) = 0)."""
    d = table.ndim
    idx = tuple(revealed.get(i, slice(None)) for i in range(d))
    sub = table[idx]  # axes: the masked positions in order
    free = [i for i in range(d) if i not in revealed]
    tot = sub.sum()
    if tot <= 0:
        return None
    return {j: sub.sum(axis=tuple(a for a in range(len(free)) if a != k)) / tot for k, j in enumerate(free)}


def brute_sampler(table: np.ndarray, tau: float):
    """Output law q (with the mass of runs stuck at p(x_A) = 0 dropped) and law of T, by recursion."""
    d, K = table.ndim, table.shape[0]
    q = np.zeros(table.shape)
    steps = np.zeros(d + 1)

    def go(revealed, mass, t):
        if len(revealed) == d:
            q[tuple(revealed[i] for i in range(d))] += mass
            steps[t] += mass
            return
        cond = conditionals(table, revealed)
        if cond is None:
            return
        B = rule(cond, tau)
        for vals in itertools.product(range(K), repeat=len(B)):
            w = math.prod(cond[j][v] for j, v in zip(B, vals))
            if w > 0:
                go({**revealed, **dict(zip(B, vals))}, mass * w, t + 1)

    go({}, 1.0, 0)
    return q, steps


def data_steps(table: np.ndarray, tau: float) -> float:
    """E_p[T]: the rule followed on each sequence x's own values."""
    d = table.ndim
    total = 0.0
    for x in itertools.product(range(table.shape[0]), repeat=d):
        if table[x] == 0:
            continue
        revealed, t = {}, 0
        while len(revealed) < d:
            B = rule(conditionals(table, revealed), tau)
            revealed.update({j: x[j] for j in B})
            t += 1
        total += table[x] * t
    return total


def rule_random_ties(cond: dict, tau: float) -> list:
    """Every set the rule may unmask under a uniformly random order among equal entropies, with
    its probability: the count n of :func:`rule`, the positions of lower entropy, and a uniform
    subset of the tied block at the boundary."""
    B = rule(cond, tau)
    h = {j: round(H(cond[j]), 9) for j in cond}
    edge = max(h[j] for j in B)
    below = [j for j in B if h[j] < edge]
    tied = sorted(j for j in cond if h[j] == edge)
    need = len(B) - len(below)
    subsets = list(itertools.combinations(tied, need))
    return [(tuple(sorted(below + list(c))), 1.0 / len(subsets)) for c in subsets]


def data_steps_random_ties(table: np.ndarray, tau: float) -> float:
    """E_p[T] with random tie resolution: recursion over the data path of each x."""
    d = table.ndim

    def go(x, revealed, t):
        if len(revealed) == d:
            return t
        return sum(w * go(x, {**revealed, **{j: x[j] for j in B}}, t + 1)
                   for B, w in rule_random_ties(conditionals(table, revealed), tau))

    return sum(table[x] * go(x, {}, 0) for x in itertools.product(range(table.shape[0]), repeat=d) if table[x] > 0)


def kl(p, q):
    m = p > 0
    return float((p[m] * (np.log(p[m]) - np.log(q[m]))).sum()) if np.all(q[m] > 0) else math.inf


LAWS = {
    "markov": lambda: families.markov_chain([[0.85, 0.15], [0.3, 0.7]], 4),
    "dirichlet_K3": lambda: families.dirichlet(3, 3, alpha=0.4, seed=2),
    "dirichlet_K2": lambda: families.dirichlet(4, 2, alpha=0.3, seed=5),
    "noisy_bit": lambda: families.noisy_repeated_bit(4, 0.1),
}
TAUS = (0.05, 0.4, 1.0, 3.0)


# -- the rule is EntropyBudgetPlanner(gamma = tau) ----------------------------------------------
def test_the_entropy_sum_rule_is_the_entropy_budget_planner():
    rng = np.random.default_rng(0)
    for _ in range(150):
        d, K = int(rng.integers(2, 7)), int(rng.integers(2, 5))
        probs = rng.dirichlet(np.full(K, rng.choice([0.1, 0.5, 2.0])), size=(1, d))
        if rng.random() < 0.3:  # exact ties in entropy
            probs[0, 1] = probs[0, 0]
        free = rng.random((1, d)) < 0.8
        free[0, int(rng.integers(d))] = True
        tau = float(rng.choice([0.0, 0.1, 0.5, 1.0, 2.5]))
        want = rule({j: probs[0, j] for j in range(d) if free[0, j]}, tau)
        ch = EntropyBudgetPlanner(tau, ties="lowest")._choice(0, None, probs, free)
        got = tuple(int(j) for j in np.flatnonzero(ch.chosen[0]))
        assert got == want, (probs, free, tau)


@pytest.mark.parametrize("name", sorted(LAWS))
def test_exact_engine_and_data_path_match_the_brute_force(name):
    p = LAWS[name]()
    for tau in TAUS:
        q, steps = brute_sampler(p.table, tau)
        planner = EntropyBudgetPlanner(tau, ties="lowest")
        run = exact_run(p, None, planner)
        np.testing.assert_allclose(run.law.table, q, atol=1e-12)
        np.testing.assert_allclose(run.step_counts[: p.d + 1], steps, atol=1e-12)
        ep = float(np.dot(np.arange(p.d + 1), cl26.data_path_steps(p, planner)))
        assert ep == pytest.approx(data_steps(p.table, tau), abs=1e-12)
        pt = cl26.cl26_point(p, tau)
        assert pt.kl == pytest.approx(kl(p.table, q), abs=1e-12)
        assert pt.expected_steps == pytest.approx(np.dot(np.arange(p.d + 1), steps) / steps.sum(), abs=1e-12)
        assert pt.entropy == pytest.approx(H(p.table.ravel()), abs=1e-12)


def test_data_path_with_random_ties_matches_the_brute_force():
    p = LAWS["noisy_bit"]()  # symmetric: equal entropies, split ties
    split = 0.0
    for tau in (0.4, 1.0):
        planner = EntropyBudgetPlanner(tau, ties="random")
        got = float(np.dot(np.arange(p.d + 1), cl26.data_path_steps(p, planner)))
        assert got == pytest.approx(data_steps_random_ties(p.table, tau), abs=1e-12)
        split += exact_run(p, None, planner).tie_mass
    assert split > 0


# -- the bounds derived here ---------------------------------------------------------------------
@pytest.mark.parametrize("ties", ["lowest", "random"])
def test_derived_bounds_hold(ties):
    """(D1) KL <= path KL <= tau E_p[T] and (D2) E_p[T] <= 1 + (d-1) H / tau on random laws."""
    for seed in range(6):
        p = families.dirichlet(4, 2 + seed % 2, alpha=(0.1, 0.5, 1.0)[seed % 3], seed=seed)
        for tau in TAUS:
            pt = cl26.cl26_point(p, tau, ties=ties)
            assert pt.kl <= pt.path_kl + 1e-12
            assert pt.path_kl <= pt.kl_budget * (1 + 1e-12) + 1e-12
            assert pt.expected_data_steps <= pt.steps_bound * (1 + 1e-12)
            assert pt.c_kl <= pt.expected_data_steps + 1e-12 <= p.d + 1e-9


@pytest.mark.parametrize("d", [3, 5])
def test_the_repeated_symbol_attains_both_bounds(d):
    """X_1 = ... = X_d ~ (1 - e, e): at H(w) = tau/(d-1) one iteration, KL = TC = (d-1) H(w) = tau
    (D1 with equality); at H(w) just above it, two iterations and H(X) = H(w) ((D2) -> equality)."""
    tau = 0.3

    def law(h):
        lo, hi = 0.0, 0.5
        for _ in range(200):
            e = (lo + hi) / 2
            lo, hi = (e, hi) if H([1 - e, e]) < h else (lo, e)
        return families.repeated(d, 2, weights=[1 - lo, lo])

    at = cl26.cl26_point(law(tau / (d - 1) * (1 - 1e-9)), tau)
    assert at.expected_data_steps == pytest.approx(1.0) and at.path_kl / at.kl_budget == pytest.approx(1.0, abs=1e-6)
    above = cl26.cl26_point(law(tau / (d - 1) * (1 + 1e-6)), tau)
    assert above.expected_data_steps == pytest.approx(2.0)
    assert (above.expected_data_steps - 1) / ((d - 1) * above.entropy / tau) == pytest.approx(1.0, abs=1e-5)


def test_compare_lists_the_derived_rows():
    p = LAWS["markov"]()
    planner = EntropyBudgetPlanner(0.4, ties="lowest")
    rows = {r.name: r for r in mt.bounds.compare(p, None, planner).rows}
    assert rows["cl26_kl_budget"].holds and rows["cl26_kl_budget"].status == "derived here"
    assert rows["cl26_kl_budget"].exact == pytest.approx(rows["path_kl"].value)
    assert rows["cl26_steps_bound"].holds
    assert rows["cl26_steps_bound"].exact == pytest.approx(data_steps(p.table, 0.4), abs=1e-12)


# -- the rule in Monte Carlo and in the bridge -----------------------------------------------------
def chi2_pvalue(codes, q):
    """Pearson's chi-square p-value of the sample codes against q, cells with n q < 5 pooled."""
    from scipy.stats import chi2

    n = len(codes)
    obs = np.bincount(codes, minlength=q.size).astype(float)
    exp = n * q
    small = exp < 5
    o = np.r_[obs[~small], obs[small].sum()]
    e = np.r_[exp[~small], exp[small].sum()]
    keep = e > 0
    stat = float(((o[keep] - e[keep]) ** 2 / e[keep]).sum())
    return float(chi2.sf(stat, keep.sum() - 1))


def test_simulation_follows_the_exact_law():
    p = LAWS["dirichlet_K2"]()
    planner = EntropyBudgetPlanner(0.4, ties="lowest")
    n = 4000
    sim = simulate(p, None, planner, n=n, seed=3)
    q = exact_run(p, None, planner).law.table.ravel()
    assert chi2_pvalue(np.ravel_multi_index(sim.samples.T, p.table.shape), q) > 1e-4


def test_bridge_drives_the_rule_on_an_exact_model():
    pytest.importorskip("torch")
    from mdmtheory import bridge

    p = LAWS["dirichlet_K2"]()
    planner = EntropyBudgetPlanner(0.4, ties="lowest")
    n = 2000
    samples = bridge.sample(bridge.ExactModel(p), p.d, None, planner, n=n, seed=5).samples
    q = exact_run(p, None, planner).law.table.ravel()
    assert chi2_pvalue(np.ravel_multi_index(samples.T, p.table.shape), q) > 1e-4


# -- bad input -------------------------------------------------------------------------------------
@pytest.mark.parametrize("call, name", [
    (lambda: cl26.cl26_point(LAWS["markov"](), 0.0), "threshold"),
    (lambda: cl26.cl26_point(LAWS["markov"](), float("nan")), "threshold"),
    (lambda: cl26.cl26_point("law", 0.5), "p"),
    (lambda: cl26.data_path_steps(LAWS["markov"](), "random"), "planner"),
    (lambda: cl26.cl26_kl_budget(0.5, -1.0), "expected_data_steps"),
    (lambda: cl26.cl26_steps_bound(0.5, -0.1, 3), "entropy"),
    (lambda: cl26.cl26_steps_bound(0.5, 0.1, 0), "d"),
    (lambda: cl26.cl26_bounds(LAWS["markov"](), mt.samplers.ThresholdPlanner(0.9)), "planner"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        call()
