"""Brute-force building blocks shared by the tests (independent of the package under test).

Everything here is computed directly from a dense numpy table by summation and
enumeration, never through mdmtheory, so that tests compare the package against it.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.special import xlogy


def marginal(table, keep):
    """Marginal of the positions in ``keep`` in keepdims form (length K on kept axes, 1 elsewhere)."""
    drop = tuple(k for k in range(table.ndim) if k not in keep)
    return table.sum(axis=drop, keepdims=True) if drop else table


def subset_entropy(table, S) -> float:
    """H(X_S) in nats by summing the table (H of the empty set is 0)."""
    m = marginal(table, set(S)) if S else np.ones(1)
    return float(-np.sum(xlogy(m, m)))


def brute_profile(table) -> np.ndarray:
    """phi_m = mean over |A| = m, j not in A of H(X_{A+j}) - H(X_A), by enumeration."""
    d = table.ndim
    H = {S: subset_entropy(table, S) for m in range(d + 1) for S in itertools.combinations(range(d), m)}
    return np.array(
        [
            np.mean([H[tuple(sorted(A + (j,)))] - H[A] for A in itertools.combinations(range(d), m) for j in range(d) if j not in A])
            for m in range(d)
        ]
    )


def compositions(d: int, parts: int | None = None):
    """Every composition of d (every schedule), as tuples; with ``parts = T`` only those of T
    parts, in lexicographic order of their cut points."""
    if parts is not None:
        for cuts in itertools.combinations(range(1, d), parts - 1):
            bounds = (0, *cuts, d)
            yield tuple(b - a for a, b in zip(bounds, bounds[1:]))
        return
    for cuts in itertools.product((0, 1), repeat=d - 1):
        out, k = [], 1
        for c in cuts:
            if c:
                out.append(k)
                k = 1
            else:
                k += 1
        out.append(k)
        yield tuple(out)


def profile_path_kl(phi, sizes) -> float:
    """Path KL of the schedule ``sizes`` from a profile phi (or a cross-entropy profile c):
    sum over steps t and the positions m of step t of phi(s_t) - phi(m), term by term
    (docs/theory.md §2), s_t the tokens revealed before step t."""
    s, out = 0, 0.0
    for k in sizes:
        out += sum(phi[s] - phi[m] for m in range(s, s + k))
        s += k
    return out


def random_table(K, d, seed, *, zeros=0.0, tiny=0.0, alpha=1.0):
    """Dirichlet(alpha) table with a fraction of exact zeros and of tiny (1e-13..1e-300) entries."""
    rng = np.random.default_rng(seed)
    w = rng.dirichlet(np.full(K**d, alpha))
    if zeros:
        w[rng.random(K**d) < zeros] = 0.0
    if tiny:
        sel = rng.random(K**d) < tiny
        w[sel] = 10.0 ** rng.uniform(-300, -13, size=int(sel.sum()))
    if w.sum() == 0:
        w[0] = 1.0
    return (w / w.sum()).reshape((K,) * d)


def make_table(d, K, seed, mode):
    """A seeded table of one of four shapes: dirichlet, sparse (near-degenerate, many exact
    zeros), near_independent (98% a product law), peaked."""
    rng = np.random.default_rng(seed)
    n = K**d
    if mode == "dirichlet":
        t = rng.dirichlet(np.full(n, 0.5))
    elif mode == "sparse":
        t = rng.dirichlet(np.full(n, 0.05))
        t[rng.random(n) < 0.3] = 0.0
        if t.sum() == 0:
            t[0] = 1.0
        t /= t.sum()
    elif mode == "near_independent":
        prod = np.ones(())
        for _ in range(d):
            prod = np.multiply.outer(prod, rng.dirichlet(np.ones(K)))
        t = 0.98 * prod.ravel() + 0.02 * rng.dirichlet(np.ones(n))
    else:  # peaked
        t = rng.dirichlet(np.full(n, 5.0)) ** 8
        t /= t.sum()
    return t.reshape((K,) * d)


def conditional(table, vals: dict, j: int) -> np.ndarray:
    """p(x_j = · | x_i = vals[i] for i in vals), by slicing the dense table (vals: {position: value})."""
    d = table.ndim
    sub = table[tuple(vals[i] if i in vals else slice(None) for i in range(d))]
    free = [i for i in range(d) if i not in vals]
    a = free.index(j)
    m = sub.sum(axis=tuple(b for b in range(len(free)) if b != a))
    return m / m.sum()
