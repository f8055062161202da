r"""The JAX core of the exact law engine: state updates on the marginal lattice.

Every array here lives on the **marginal lattice**: a tensor of shape ``(K+1,)*d`` whose
index :math:`K` on axis j means "position j masked / summed out". The marginal tensor

.. math::

    P[x] = p(x_A), \qquad A = \{j : x_j < K\},

holds every marginal of every subset (each summed from its parent, one axis at a time), and
the sampler's state mass :math:`m(A, x_A)` (docs/design.md §3) is one tensor ``M`` of the
same shape: ``M[x]`` is the mass of the state whose revealed set is the set of axes with a
value below K. A step that reveals B with factorized draws is then, for all revealed sets A
disjoint from B at once, a broadcast product of slices:

.. math::

    M'[x_A, x_B, \ast] \mathrel{+}= M[x_A, \ast_B, \ast]\, w_B(x_A)
    \prod_{j \in B} \frac{P[x_A, x_j, \ast]}{P[x_A, \ast]} .

Every function takes the array namespace ``xp``: ``jax.numpy`` (float64 under
:func:`mdmtheory._jax.x64`; then the same code runs under ``jax.jit``, ``jax.grad`` with
respect to the table, and ``jax.vmap``) or ``numpy`` (the same operations without tracing
or compilation, for one-off laws where XLA's compile time per shape would dominate). Divisions and logarithms use the double-``where`` form (the untaken branch
never sees 0), so zero-probability prefixes give neither NaN values nor NaN gradients.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

__all__ = [
    "marginal_lattice",
    "lattice_entropies",
    "settle",
    "subset_step",
    "bernoulli_step",
    "bernoulli_start",
    "complete",
    "ix",
]


def ix(d: int, K: int, vals=(), masked=()) -> tuple:
    """Index tuple: axes in ``vals`` take the values 0..K-1, axes in ``masked`` the masked
    slot (kept as a length-1 axis), all others the whole axis."""
    out = [slice(None)] * d
    for j in vals:
        out[j] = slice(0, K)
    for j in masked:
        out[j] = slice(K, K + 1)
    return tuple(out)


def _sl(a, start: int, stop: int, axis: int):
    return a[(slice(None),) * axis + (slice(start, stop),)]


def _add_at(xp, a, idx, v):
    """``a[idx] += v`` as a value (in place for numpy, ``.at[].add`` for JAX)."""
    if xp is np:
        a[idx] += v
        return a
    return a.at[idx].add(v)


def _set_at(xp, a, idx, v):
    if xp is np:
        a = a.copy()
        a[idx] = v
        return a
    return a.at[idx].set(v)


def _safe_div(xp, num, den):
    ok = den > 0
    return xp.where(ok, num / xp.where(ok, den, 1.0), 0.0)


def _safe_log(xp, x, ok):
    return xp.log(xp.where(ok, x, 1.0))


def marginal_lattice(table, xp=jnp):
    """``(K,)*d`` table -> ``(K+1,)*d`` tensor of all marginals (slot K = summed out)."""
    t = table
    for ax in range(t.ndim):
        t = xp.concatenate([t, t.sum(axis=ax, keepdims=True)], ax)
    return t


def lattice_entropies(P, K: int, xp=jnp):
    r"""All :math:`2^d` subset entropies from the marginal lattice, as a ``(2,)*d`` tensor
    (index 1 on axis j = position j in the subset): :math:`-\sum P \log P` folded per axis."""
    ok = P > 0
    t = xp.where(ok, -P * _safe_log(xp, P, ok), 0.0)
    for ax in range(P.ndim):
        kept = _sl(t, 0, K, ax).sum(axis=ax, keepdims=True)
        summed = _sl(t, K, K + 1, ax)
        t = xp.concatenate([summed, kept], ax)
    return t


def settle(M, P, K: int, xp=jnp):
    """Move finished mass out and drop mass at zero-probability prefixes.

    Returns ``(M, finished, lost)``: ``finished`` is the ``(K,)*d`` mass at the full state
    (it goes to the output law, whatever p(x)), ``lost`` the mass at unreachable
    :math:`x_A` (p(x_A) = 0) of the unfinished states (docs/design.md §6).
    """
    d = M.ndim
    full = ix(d, K, vals=range(d))
    finished = M[full]
    M = _set_at(xp, M, full, 0.0)
    reach = P > 0
    lost = xp.sum(xp.where(reach, 0.0, M))
    return xp.where(reach, M, 0.0), finished, lost


def conditionals(P, K: int, xp=jnp) -> list:
    r"""``C[j]`` = :math:`p(x_j \mid x_A)` for every A not containing j, on the lattice (length
    K on axis j, K+1 elsewhere; 0 where p(x_A) = 0). Computed once per law, they turn each
    move of :func:`subset_step` into |B| slice products (memory d (K+1)^d)."""
    d = P.ndim
    return [_safe_div(xp, _sl(P, 0, K, j), _sl(P, K, K + 1, j)) for j in range(d)]


def masked_fold(M, K: int, xp=jnp):
    """``(2,)*d`` sums of M by which axes are masked (index 1) or revealed (index 0)."""
    F = M
    for ax in range(M.ndim):
        F = xp.concatenate([_sl(F, 0, K, ax).sum(axis=ax, keepdims=True), _sl(F, K, K + 1, ax)], ax)
    return F


def subset_step(M, P, K: int, moves, Pi=None, xp=jnp, C=None):
    r"""One step over a static list of reveal sets.

    ``moves`` is a list of ``(B, W)``: B a bitmask, W the weight of revealing B — a Python
    float (the same for every state that carries mass) or an array of the slice shape
    (length 1 on the axes of B, K+1 elsewhere) giving :math:`w_B(A, x_A)`. ``M`` must be
    settled. With ``Pi`` (the exact path measure :math:`\pi(A \mid x_A)` on the lattice) also
    returns its update and the step's trajectory KL
    :math:`\sum \pi\, w_B\, p(x_{A\cup B}) \log \frac{p(x_B \mid x_A)}{\prod_j p(x_j \mid x_A)}`.

    ``C``: the lattice conditionals of :func:`conditionals` (else sliced from P per move).

    Returns ``(M', masses, Pi', kl)`` with ``masses[i]`` the mass moved by ``moves[i]``.
    """
    d = M.ndim
    F = masked_fold(M, K, xp)
    new = xp.zeros_like(M)
    new_pi = None if Pi is None else xp.zeros_like(Pi)
    kl = 0.0
    masses = []
    for B, W in moves:
        Bl = [j for j in range(d) if B >> j & 1]
        src = ix(d, K, masked=Bl)
        dst = ix(d, K, vals=Bl)
        m = M[src] * W
        out = m
        if C is None:
            PA = P[src]
            for j in Bl:
                out = out * _safe_div(xp, P[ix(d, K, vals=[j], masked=[i for i in Bl if i != j])], PA)
        elif xp is np and Bl:  # the conditionals' product first (output size), then m in place
            out = C[Bl[0]][ix(d, K, masked=Bl[1:])]  # a view of C: never written to
            if len(Bl) == 1:
                out = out * m
            else:
                for j in Bl[1:]:
                    out = out * C[j][ix(d, K, masked=[i for i in Bl if i != j])]
                out *= m
        else:
            for j in Bl:
                out = out * C[j][ix(d, K, masked=[i for i in Bl if i != j])]
        new = _add_at(xp, new, dst, out)
        if isinstance(W, float):  # from the masked-axes sums: no pass over the slice
            masses.append(W * xp.sum(F[tuple(1 if B >> j & 1 else slice(None) for j in range(d))]))
        else:
            masses.append(xp.sum(m))
        if Pi is not None:
            piw = Pi[src] * W
            new_pi = _add_at(xp, new_pi, dst, xp.broadcast_to(piw, out.shape))
            if len(Bl) >= 2:  # one token has TC = 0 exactly
                PA = P[src]
                PAB = P[dst]
                ok = PAB > 0
                lA = _safe_log(xp, PA, ok)
                s = _safe_log(xp, PAB, ok) - lA
                for j in Bl:
                    s = s - (_safe_log(xp, P[ix(d, K, vals=[j], masked=[i for i in Bl if i != j])], ok) - lA)
                kl = kl + xp.sum(xp.where(ok, piw * PAB * s, 0.0))
    return new, masses, new_pi, kl


def bernoulli_start(P, K: int, t0, xp=jnp):
    """Exact initialization of a grid with :math:`t_0 > 0`: every position revealed
    independently with probability :math:`t_0`, :math:`x_A \\sim p_A`."""
    d = P.ndim
    w = xp.concatenate([xp.full((K,), t0), xp.reshape(1.0 - t0, (1,))])
    M = P
    for j in range(d):
        M = M * xp.reshape(w, (1,) * j + (K + 1,) + (1,) * (d - j - 1))
    return M


def bernoulli_step(M, P, K: int, beta, xp=jnp):
    r"""One Bernoulli-subset step: every masked position revealed independently with
    probability :math:`\beta`, the revealed ones drawn independently from
    :math:`p(x_j \mid x_A)`.

    Processed axis by axis: a processed axis has 2K+1 slots (values revealed before the
    step, masked, values revealed in this step), and the conditionals of later axes look
    only at the values revealed before the step (the new slots read the masked marginal).
    Memory :math:`(2K+1)^d`. ``M`` must be settled.

    Returns ``(M', masked_mass)`` with ``masked_mass[j]`` the mass of states where j is
    masked (each moves j with probability beta).
    """
    d = M.ndim
    masked_mass = [xp.sum(M[ix(d, K, masked=[j])]) for j in range(d)]
    Pe = P
    for j in range(d):
        mv = _sl(M, 0, K, j)
        mm = _sl(M, K, K + 1, j)
        pv = _sl(Pe, 0, K, j)
        pm = _sl(Pe, K, K + 1, j)
        M = xp.concatenate([mv, (1.0 - beta) * mm, beta * mm * _safe_div(xp, pv, pm)], j)
        if j + 1 < d:
            Pe = xp.concatenate([Pe, xp.repeat(pm, K, j)], j)
    for j in range(d):
        old = _sl(M, 0, K, j)
        fresh = _sl(M, K + 1, 2 * K + 1, j)
        M = xp.concatenate([old + fresh, _sl(M, K, K + 1, j)], j)
    return M, masked_mass


def complete(M, P, K: int, xp=jnp):
    r"""Exact completion of every unfinished state: :math:`q(x) \mathrel{+}=
    \sum_A m(A, x_A)\, p(x) / p(x_A)`. ``M`` must be settled. Returns the ``(K,)*d``
    contribution.

    The masked positions are filled one axis at a time with the chain rule,
    :math:`p(x)/p(x_A) = \prod_i p(x_{A \cup \{j_1..j_i\}}) / p(x_{A \cup \{j_1..j_{i-1}\}})`:
    every factor is at most 1, so nothing overflows where :math:`p(x_A)` is tiny (the
    quotient m / p(x_A) alone can exceed 1e308).
    """
    R = M
    Pc = P
    for ax in range(M.ndim):
        ratio = _safe_div(xp, _sl(Pc, 0, K, ax), _sl(Pc, K, K + 1, ax))
        R = _sl(R, 0, K, ax) + _sl(R, K, K + 1, ax) * ratio
        Pc = _sl(Pc, 0, K, ax)
    return R
