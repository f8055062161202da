"""Exact information of revealed positions (issue 13, beyond the paper): brute force from
the table, the average of the pointwise value is the CMI, Markov screening, and the
attention-information correlation on traces built by hand."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mdmtheory import Joint
from mdmtheory.bridge import attention as att
from mdmtheory.laws import MarkovChainLaw


def random_joint(K, d, seed, zeros=0.0):
    rng = np.random.default_rng(seed)
    w = rng.dirichlet(np.ones(K**d))
    if zeros:
        w[rng.random(K**d) < zeros] = 0.0
        w[0] += 1e-3
        w /= w.sum()
    return Joint(w.reshape((K,) * d))


def brute_cmi(table, i, j, C):
    """I(X_i; X_j | X_C) by enumerating every outcome."""
    d, K = table.ndim, table.shape[0]
    p = {}
    for x in itertools.product(range(K), repeat=d):
        key = (x[i], x[j], tuple(x[c] for c in C))
        p[key] = p.get(key, 0.0) + table[x]
    pc, pic, pjc = {}, {}, {}
    for (a, b, c), v in p.items():
        pc[c] = pc.get(c, 0.0) + v
        pic[(a, c)] = pic.get((a, c), 0.0) + v
        pjc[(b, c)] = pjc.get((b, c), 0.0) + v
    return sum(v * math.log(v * pc[c] / (pic[(a, c)] * pjc[(b, c)])) for (a, b, c), v in p.items() if v > 0)


def brute_pointwise(table, i, j, x, C):
    """MI of (X_i, X_j) under p( . | X_C = x_C), from the sliced table."""
    d = table.ndim
    idx = tuple(x[k] if k in C else slice(None) for k in range(d))
    sub = table[idx]
    free = [k for k in range(d) if k not in C]
    ai, aj = free.index(i), free.index(j)
    m = sub.sum(axis=tuple(a for a in range(sub.ndim) if a not in (ai, aj)))
    if ai > aj:
        m = m.T
    m = m / m.sum()
    pi, pj = m.sum(axis=1), m.sum(axis=0)
    return sum(m[a, b] * math.log(m[a, b] / (pi[a] * pj[b])) for a in range(m.shape[0]) for b in range(m.shape[1]) if m[a, b] > 0)


@given(st.integers(0, 10**6), st.integers(2, 3), st.integers(3, 4))
def test_cmi_matches_enumeration(seed, K, d):
    p = random_joint(K, d, seed, zeros=0.3)
    rng = np.random.default_rng(seed)
    i, j = rng.choice(d, 2, replace=False)
    C = [k for k in range(d) if k not in (i, j) and rng.random() < 0.5]
    assert att.conditional_mutual_information(p, i, j, C) == pytest.approx(brute_cmi(p.table, i, j, C), abs=1e-12)


@given(st.integers(0, 10**6), st.integers(2, 3))
def test_pointwise_information_matches_the_sliced_table(seed, K):
    d = 4
    p = random_joint(K, d, seed, zeros=0.2)
    rng = np.random.default_rng(seed + 1)
    flat = rng.choice(K**d, p=p.table.ravel())
    x = np.array(np.unravel_index(flat, p.table.shape))
    rv = rng.random(d) < 0.5
    rv[rng.integers(d)] = True
    rv[rng.integers(d)] = False
    info = att.revealed_information(p, x, rv)
    A = [int(k) for k in np.flatnonzero(rv)]
    for i in range(d):
        for j in range(d):
            if rv[i] or not rv[j]:
                assert info[i, j] == 0.0
                continue
            C = [k for k in A if k != j]
            assert info[i, j] == pytest.approx(brute_pointwise(p.table, i, j, x, C), abs=1e-12)


def test_average_of_pointwise_information_is_the_cmi():
    """E_{x_C ~ p} I(X_i; X_j | X_C = x_C) = I(X_i; X_j | X_C)."""
    K, d = 3, 4
    p = random_joint(K, d, 9)
    rv = np.array([True, True, False, False])  # A = {0, 1}; j = 1, C = {0}; i in {2, 3}
    avg = np.zeros((d, d))
    for x0, x1 in itertools.product(range(K), repeat=2):
        # weight p(x_C = x0) for j = 1 (x_1 is integrated inside the pointwise value)
        info = att.revealed_information(p, np.array([x0, x1, 0, 0]), rv)
        avg[:, 1] += p.marginal([0])[x0] * info[:, 1] / K  # every x1 gives the same value for j = 1
    exact = att.revealed_information(p, np.array([0, 0, 0, 0]), rv, kind="average")
    for i in (2, 3):
        assert avg[i, 1] == pytest.approx(exact[i, 1], abs=1e-12)
        assert exact[i, 1] == pytest.approx(att.conditional_mutual_information(p, i, 1, [0]), abs=1e-15)


def test_pointwise_value_does_not_depend_on_the_value_of_j():
    p = random_joint(3, 3, 2)
    rv = np.array([True, True, False])
    vals = {att.revealed_information(p, np.array([1, v, 0]), rv)[2, 1] for v in range(3)}
    assert max(vals) - min(vals) < 1e-15


def test_markov_chain_only_nearest_revealed_neighbours_inform():
    """Markov screening: given the nearest revealed neighbours, farther ones carry nothing;
    the oracle path (MarkovChainLaw) equals the dense path (its Joint)."""
    P = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.3, 0.3, 0.4]])
    law = MarkovChainLaw(P, 6)
    joint = law.to_joint()
    x = np.array([0, 1, 2, 1, 0, 2])
    rv = np.array([True, True, False, False, True, True])
    a = att.revealed_information(law, x, rv)
    b = att.revealed_information(joint, x, rv)
    np.testing.assert_allclose(a, b, atol=1e-12)
    for i in (2, 3):
        assert a[i, 0] == pytest.approx(0.0, abs=1e-12) and a[i, 5] == pytest.approx(0.0, abs=1e-12)
        assert a[i, 1] > 1e-4 and a[i, 4] > 1e-4


def test_impossible_state_and_bad_arguments():
    table = np.zeros((2, 2))
    table[0, 0] = table[1, 1] = 0.5
    p = Joint(table)
    with pytest.raises(ValueError, match="probability 0"):
        att.revealed_information(p, np.array([0, 1]), np.array([True, True]))
    with pytest.raises(ValueError, match="kind"):
        att.revealed_information(p, np.array([0, 0]), np.array([True, False]), kind="mean")
    with pytest.raises(ValueError, match="i, j"):
        att.conditional_mutual_information(p, 1, 1)
    with pytest.raises(ValueError, match="given"):
        att.conditional_mutual_information(p, 0, 1, [1])
    with pytest.raises(ValueError, match="Joint"):
        att.revealed_information(MarkovChainLaw(np.eye(2) * 0.5 + 0.25, 3), np.zeros(3, int), np.array([1, 0, 0], bool), kind="average")
    # an XOR pair: X_1 tells everything about X_0 (log 2)
    info = att.revealed_information(p, np.array([0, 0]), np.array([False, True]))
    assert info[0, 1] == pytest.approx(math.log(2))


def _trace_from_rows(law, rows_fn, n=6, seed=0):
    """An AttentionTrace whose maps come from rows_fn(info_row) at every masked query."""
    oracle_law = law
    d = law.d
    rng = np.random.default_rng(seed)
    flat = rng.choice(law.K**d, size=n, p=law.table.ravel())
    samples = np.stack(np.unravel_index(flat, law.table.shape), axis=1)
    T = 2
    revealed = np.zeros((n, T, d), dtype=bool)
    maps = np.zeros((n, T, 1, d, d))
    for a in range(n):
        order = rng.permutation(d)
        for t, m in enumerate((2, 3)):
            rv = np.zeros(d, dtype=bool)
            rv[order[:m]] = True
            revealed[a, t] = rv
            info = att.revealed_information(oracle_law, samples[a], rv)
            for i in range(d):
                row = np.full(d, 1e-3)
                if not rv[i]:
                    row[rv] += rows_fn(info[i, rv])
                maps[a, t, 0, i] = row / row.sum()
    cm, cr, ent = att.summarize_maps(maps, revealed)
    return att.AttentionTrace(
        samples=samples, revealed=revealed, chosen=np.zeros_like(revealed), active=np.ones((n, T), bool),
        colsum_masked=cm, colsum_revealed=cr, entropy=ent, maps=maps,
    )


def test_correlation_is_one_when_attention_follows_information():
    law = random_joint(3, 5, 4)
    tr = _trace_from_rows(law, lambda v: v)
    r = att.attention_information_correlation(tr, law)
    assert r.n_cases[0] > 10
    assert r.rho_mean[0] == pytest.approx(1.0)
    assert r.top_hit[0] == pytest.approx(1.0)
    assert r.top_hit_chance < 0.7
    r2 = att.attention_information_correlation(_trace_from_rows(law, lambda v: 1.0 / (v + 1e-3)), law)
    assert r2.rho_mean[0] == pytest.approx(-1.0)
    assert r2.top_hit[0] < 0.2


def test_correlation_requires_maps_and_counts_impossible_states():
    table = np.zeros((2, 2, 2))
    table[0, 0, 0] = table[1, 1, 1] = 0.5
    law = Joint(table)
    maps = np.full((1, 1, 1, 3, 3), 1 / 3)
    rv = np.array([[[True, True, False]]])
    cm, cr, ent = att.summarize_maps(maps, rv)
    tr = att.AttentionTrace(
        samples=np.array([[0, 1, 0]]), revealed=rv, chosen=np.zeros_like(rv), active=np.ones((1, 1), bool),
        colsum_masked=cm, colsum_revealed=cr, entropy=ent, maps=maps,
    )
    r = att.attention_information_correlation(tr, law)
    assert r.impossible == 1 and r.n_cases[0] == 0
    with pytest.raises(ValueError, match="keep"):
        att.attention_information_correlation(
            att.AttentionTrace(tr.samples, rv, tr.chosen, tr.active, cm, cr, ent, None), law
        )
