"""Brute-force references of the bridge tests (dense tables, enumeration; never mdmtheory.bridge)."""

from __future__ import annotations

import itertools

import numpy as np

from reference import brute_profile, marginal  # noqa: F401  (re-exported for the tests)


def cross_entropy_profile(p_table, q_table) -> np.ndarray:
    """c(i) = mean over |A| = i, j not in A of E_p[-log q(X_j | X_A)], by enumeration."""
    p = np.asarray(p_table, dtype=np.float64)
    q = np.asarray(q_table, dtype=np.float64)
    d = p.ndim
    out = []
    for i in range(d):
        vals = []
        for A in itertools.combinations(range(d), i):
            qA = marginal(q, set(A)) if A else np.ones((1,) * d)
            for j in range(d):
                if j in A:
                    continue
                qAj = marginal(q, set(A) | {j})
                cond = np.broadcast_to(qAj / qA, p.shape)
                vals.append(float(-np.sum(p[p > 0] * np.log(cond[p > 0]))))
        out.append(np.mean(vals))
    return np.array(out)


def path_cross_entropy(c, sizes) -> float:
    """sum_t k_t c(s_t)."""
    s, total = 0, 0.0
    for k in sizes:
        total += k * c[s]
        s += k
    return total


def z(value, exact, stderr, floor=1e-9) -> float:
    return float((value - exact) / max(stderr, floor))
