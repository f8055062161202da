"""Feng et al., token vs sequence error rate (arXiv 2502.09622; issue 28 item 5;
mdmtheory.bounds.feng25).

Definitions used here (our reading of the paper's abstract: only it and the opening of §1 could
be read), not the package's code:
* TER excess = (1/d) (E_{x~q}[-log p(x)] - H(p)): per-token log-perplexity of the generated
  sequences under the true law, minus its optimum;
* SER = P_q(x is not a sequence of the language) = 1 - sum_{x: p(x) > 0} q(x);
* the T-step sampler: a uniformly random assignment of the positions to T steps with the given
  sizes; the positions of one step drawn independently from p(x_j | revealed values); a run that
  reaches a prefix of probability 0 is an error.
"""

from __future__ import annotations

import csv
import itertools
import math
from pathlib import Path

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory import families
from mdmtheory.bounds import feng25 as F

TSV = Path(__file__).resolve().parents[2] / "benchmarks" / "tightness" / "feng25_steps.tsv"


def brute_law(table: np.ndarray, sizes) -> np.ndarray:
    """Output law of the random-order sampler with these step sizes, by enumerating every
    assignment of positions to steps (all equally likely) and every value."""
    d, K = table.ndim, table.shape[0]
    q = np.zeros(table.shape)
    assigns = []
    for perm in itertools.permutations(range(d)):
        cuts = np.cumsum((0,) + tuple(sizes))
        steps = tuple(tuple(sorted(perm[a:b])) for a, b in zip(cuts[:-1], cuts[1:]))
        assigns.append(steps)
    for steps in assigns:
        w0 = 1.0 / len(assigns)

        def go(t, revealed, mass):
            if t == len(steps):
                q[tuple(revealed[i] for i in range(d))] += mass
                return
            idx = tuple(revealed.get(i, slice(None)) for i in range(d))
            sub = table[idx]
            free = [i for i in range(d) if i not in revealed]
            tot = sub.sum()
            if tot <= 0:
                return
            cond = {j: sub.sum(axis=tuple(a for a in range(len(free)) if a != k)) / tot for k, j in enumerate(free)}
            for vals in itertools.product(range(K), repeat=len(steps[t])):
                w = math.prod(cond[j][v] for j, v in zip(steps[t], vals))
                if w > 0:
                    go(t + 1, {**revealed, **dict(zip(steps[t], vals))}, mass * w)

        go(0, {}, w0)
    return q


def ter(p, q):
    d = p.ndim
    if np.any((q > 0) & (p == 0)):
        return math.inf
    m = p > 0
    return float((-(q[m] * np.log(p[m])).sum() / q.sum() + (p[m] * np.log(p[m])).sum()) / d)


def ser(p, q):
    return 1.0 - float(q[p > 0].sum())


def test_rates_of_hand_laws():
    p = mt.Joint(np.array([[0.5, 0.25], [0.25, 0.0]]))
    q = mt.Joint(np.array([[0.25, 0.25], [0.25, 0.25]]))
    assert F.sequence_error_rate(p, q) == pytest.approx(0.25)
    assert F.token_error_rate(p, q) == math.inf
    q2 = mt.Joint(np.array([[1.0, 0.0], [0.0, 0.0]]))
    # E_q[-log p] = log 2, H(p) = 1.5 log 2: excess (log 2 - 1.5 log 2)/2 < 0
    assert F.token_error_rate(p, q2) == pytest.approx(-0.25 * math.log(2))
    assert F.sequence_error_rate(p, q2) == 0.0
    assert F.token_error_rate(p, p) == pytest.approx(0.0, abs=1e-15)


def test_equal_schedule_sizes():
    for d in range(1, 9):
        for T in range(1, d + 1):
            s = F.equal_schedule(d, T).sizes
            assert sum(s) == d and len(s) == T and max(s) - min(s) <= 1 and list(s) == sorted(s, reverse=True)


def test_ngram_and_golden_laws_from_their_formulas():
    c = np.array([[[0.7, 0.3], [0.4, 0.6]], [[0.2, 0.8], [0.5, 0.5]]])
    p = F.ngram_chain(c, 5)
    for x in itertools.product(range(2), repeat=5):
        want = 0.25 * math.prod(c[x[i - 2], x[i - 1], x[i]] for i in range(2, 5))
        assert p.table[x] == pytest.approx(want, abs=1e-15)
    g = F.golden_mean_chain(5, 0.6)
    for x in itertools.product(range(2), repeat=5):
        bad = any(x[i] == x[i + 1] == 1 for i in range(4))
        assert (g.table[x] == 0) == bad


@pytest.mark.parametrize("law", ["markov", "golden", "trigram"])
def test_rates_match_the_brute_force_sampler(law):
    p = {"markov": lambda: families.markov_chain([[0.8, 0.2], [0.3, 0.7]], 4),
         "golden": lambda: F.golden_mean_chain(4, 0.5),
         "trigram": lambda: F.ngram_chain(np.array([[[0.9, 0.1], [0.8, 0.2]], [[0.2, 0.8], [0.1, 0.9]]]), 4)}[law]()
    for T in range(1, 5):
        q = brute_law(p.table, F.equal_schedule(4, T).sizes)
        r = F.feng25_rates(p, T)
        assert r.ser == pytest.approx(ser(p.table, q), abs=1e-12)
        assert r.ter == pytest.approx(ter(p.table, q), abs=1e-12) or (math.isinf(r.ter) and math.isinf(ter(p.table, q)))
    assert F.feng25_rates(p, 4).ser == pytest.approx(0.0, abs=1e-12)  # one token per step: exact


def test_grid_sampler_draws_each_position_s_step_uniformly():
    """planner="grid": the continuous-time MDM on T equal intervals = each position's step label
    iid uniform on 1..T (empty steps skipped), then the steps in order."""
    p = F.golden_mean_chain(3, 0.6)
    T, d = 2, 3
    q = np.zeros(p.table.shape)
    for labels in itertools.product(range(T), repeat=d):
        sizes = [sum(lab == t for lab in labels) for t in range(T)]
        order = sorted(range(d), key=lambda j: labels[j])
        # brute_law averages over all orders with these sizes; with fixed labels take the one order
        qq = brute_law_fixed(p.table, [tuple(j for j in order if labels[j] == t) for t in range(T) if sizes[t]])
        q += qq / T**d
    r = F.feng25_rates(p, T, planner="grid")
    assert r.ser == pytest.approx(ser(p.table, q), abs=1e-12)


def brute_law_fixed(table, steps):
    """Output law for a fixed sequence of reveal sets (the inner recursion of :func:`brute_law`)."""
    d, K = table.ndim, table.shape[0]
    q = np.zeros(table.shape)

    def go(t, revealed, mass):
        if t == len(steps):
            q[tuple(revealed[i] for i in range(d))] += mass
            return
        idx = tuple(revealed.get(i, slice(None)) for i in range(d))
        sub = table[idx]
        free = [i for i in range(d) if i not in revealed]
        tot = sub.sum()
        if tot <= 0:
            return
        cond = {j: sub.sum(axis=tuple(a for a in range(len(free)) if a != k)) / tot for k, j in enumerate(free)}
        for vals in itertools.product(range(K), repeat=len(steps[t])):
            w = math.prod(cond[j][v] for j, v in zip(steps[t], vals))
            if w > 0:
                go(t + 1, {**revealed, **dict(zip(steps[t], vals))}, mass * w)

    go(0, {}, 1.0)
    return q


def test_fewest_steps_scans_the_rates():
    p = F.golden_mean_chain(6)
    r = F.fewest_steps(p, ter_target=0.0, ser_target=0.1)
    want = next(T for T in range(1, 7) if F.feng25_rates(p, T).ser <= 0.1)
    assert r.ser_steps == want
    assert r.ter_steps is not None and r.ter_steps >= r.ser_steps  # TER is infinite while SER > 0
    (s,) = F.feng25_scaling(lambda d: F.golden_mean_chain(d), [6], ter_target=0.0, ser_target=0.1)
    assert s == r


def test_monte_carlo_rates_follow_the_exact_ones():
    """markov_rates_mc at d = 6 against the exact rates (p(x) written here from the chain)."""
    for P in ([[0.9, 0.1], [0.1, 0.9]], [[0.5, 0.5], [1.0, 0.0]]):
        p = families.markov_chain(P, 6)
        for T in (3,):
            est = F.markov_rates_mc(P, 6, T, n=1500, seed=1)
            exact = F.feng25_rates(p, T)
            assert abs(est.ser - exact.ser) <= 5 * max(est.ser_se, 1e-3)
            if math.isfinite(exact.ter) and est.ser == 0:
                assert abs(est.ter - exact.ter) <= 5 * est.ter_se


def test_stored_scaling_table_rows():
    """benchmarks/feng25_steps.py's rows at d <= 6 recomputed (the region reads the rest)."""
    rows = list(csv.DictReader(open(TSV), delimiter="\t"))
    fams = {"markov(0.9)": lambda d: families.markov_chain([[0.9, 0.1], [0.1, 0.9]], d),
            "golden(0.5)": lambda d: F.golden_mean_chain(d, 0.5)}
    seen = 0
    for row in rows:
        d = int(row["d"])
        if row["family"] in fams and d <= 6:
            r = F.feng25_rates(fams[row["family"]](d), int(row["T"]))
            assert float(row["ser"]) == pytest.approx(r.ser, abs=2e-6)
            assert float(row["ter"]) == pytest.approx(r.ter, abs=2e-6) or math.isinf(r.ter)
            seen += 1
    assert seen >= 20


@pytest.mark.parametrize("call, name", [
    (lambda: F.token_error_rate("p", F.golden_mean_chain(3)), "p"),
    (lambda: F.sequence_error_rate(F.golden_mean_chain(3), F.golden_mean_chain(4)), "q"),
    (lambda: F.equal_schedule(4, 5), "steps"),
    (lambda: F.golden_mean_chain(4, 1.0), "stay"),
    (lambda: F.ngram_chain(np.ones((2, 2)), 3), "conditional"),
    (lambda: F.feng25_rates(F.golden_mean_chain(3), 2, planner="fast"), "planner"),
    (lambda: F.fewest_steps(F.golden_mean_chain(3), ter_target=-0.1, ser_target=0.1), "ter_target"),
    (lambda: F.feng25_scaling(3, [3], ter_target=0.1, ser_target=0.1), "family"),
    (lambda: F.markov_rates_mc([[0.9, 0.1], [0.1, 0.9]], 6, 7, n=10, seed=0), "steps"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        call()
