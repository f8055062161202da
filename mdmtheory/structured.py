r"""Laws given by their conditionals: what Monte Carlo simulation needs, without a table.

A *conditional oracle* answers, for a batch of n partially revealed sequences (values
``x`` of shape (n, d), revealed set ``revealed`` of shape (n, d), each row its own A):

* ``conditionals(x, revealed)`` — :math:`p(x_j = v \mid x_A)` for every position j and token
  v, shape (n, d, K); rows of revealed positions and of unreachable prefixes
  (:math:`p(x_A) = 0`) are 0;
* ``log_marginal(x, revealed)`` — :math:`\log p(x_A)`, shape (n,), ``-inf`` where
  :math:`p(x_A) = 0` (0 for the empty set);
* ``sample(n, rng)`` — n exact draws :math:`x \sim p`, shape (n, d).

:class:`TableLaw` wraps a dense :class:`~mdmtheory.Joint` (small d); :class:`MarkovChainLaw`
is a Markov chain of any length d (hundreds are fine): restricted to the revealed positions
it is again a Markov chain, so forward–backward over the revealed positions reduces to the
nearest revealed neighbours l < j < r of a masked position j,

.. math::

    p(x_j = v \mid x_A) = \frac{\mu_l P^{j-l}(x_l, v)\, P^{r-j}(v, x_r)}
                               {\sum_u \mu_l P^{j-l}(x_l, u)\, P^{r-j}(u, x_r)},

(the forward factor is :math:`\mu_j(v) = (\pi P^j)(v)` without a left neighbour, the
backward factor 1 without a right one), and
:math:`p(x_A) = \mu_{s_1}(x_{s_1}) \prod_k P^{s_{k+1} - s_k}(x_{s_k}, x_{s_{k+1}})`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ._validate import int_arg as _int_arg
from .families import _initial_law, _transition, markov_chain, markov_chain_entropy_coefficients
from .joint import Joint, Marginals

__all__ = ["ConditionalOracle", "TableLaw", "MarkovChainLaw", "as_oracle"]


class ConditionalOracle(Protocol):
    d: int
    K: int

    def conditionals(self, x: np.ndarray, revealed: np.ndarray) -> np.ndarray: ...

    def log_marginal(self, x: np.ndarray, revealed: np.ndarray) -> np.ndarray: ...

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray: ...


def _check_batch(x, revealed, d: int, K: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x)
    revealed = np.asarray(revealed, dtype=bool)
    if x.ndim != 2 or x.shape[1] != d or revealed.shape != x.shape:
        raise ValueError(f"x, revealed: expected two (n, d={d}) arrays, got {x.shape} and {revealed.shape}")
    if x.dtype.kind not in "iu":
        raise ValueError(f"x: expected integer tokens, got dtype {x.dtype}")
    if np.any(revealed & ((x < 0) | (x >= K))):
        raise ValueError(f"x: revealed values must be tokens in 0..{K - 1}")
    return np.where(revealed, x, 0).astype(np.int64), revealed


def _inverse_cdf(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Token v with cdf(v-1) <= u * total < cdf(v) along the last axis (zero-mass tokens never)."""
    cdf = np.cumsum(probs, axis=-1)
    return (cdf <= u[..., None] * cdf[..., -1:]).sum(axis=-1)


@dataclass(frozen=True, eq=False)
class TableLaw:
    """Conditional oracle of a dense :class:`~mdmtheory.Joint` (marginals cached per subset)."""

    joint: Joint
    _marginals: Marginals = field(init=False, repr=False)

    def __post_init__(self):
        if not isinstance(self.joint, Joint):
            raise ValueError(f"joint: expected a mdmtheory.Joint, got {type(self.joint).__name__}")
        if self.joint.lost:
            raise ValueError("joint: has lost mass; a data law must be normalized")
        object.__setattr__(self, "_marginals", Marginals(self.joint.table))

    @property
    def d(self) -> int:
        return self.joint.d

    @property
    def K(self) -> int:
        return self.joint.K

    def _index(self, A: int, x: np.ndarray, rows: np.ndarray) -> tuple:
        """Index of a keepdims marginal of A at the revealed values of the given rows."""
        return tuple(x[rows, i] if A >> i & 1 else 0 for i in range(self.d))

    def _groups(self, revealed):
        masks = (revealed.astype(np.int64) << np.arange(self.d, dtype=np.int64)).sum(axis=1)
        for A in np.unique(masks):
            yield int(A), np.flatnonzero(masks == A)

    def conditionals(self, x, revealed):
        x, revealed = _check_batch(x, revealed, self.d, self.K)
        out = np.zeros(x.shape + (self.K,))
        for A, rows in self._groups(revealed):
            idx = self._index(A, x, rows)
            pA = np.broadcast_to(self._marginals(A)[idx], (rows.size,))
            reach = pA > 0
            for j in range(self.d):
                if A >> j & 1:
                    continue
                # keepdims marginal with x_j's axis moved last: (rows, K) after indexing
                m = np.moveaxis(self._marginals(A | (1 << j)), j, -1)
                joint = np.broadcast_to(m[idx[:j] + idx[j + 1 :]], (rows.size, self.K))
                out[rows, j] = np.divide(joint, pA[:, None], out=np.zeros(joint.shape), where=reach[:, None])
        return out

    def log_marginal(self, x, revealed):
        x, revealed = _check_batch(x, revealed, self.d, self.K)
        out = np.zeros(x.shape[0])
        for A, rows in self._groups(revealed):
            if A:
                pA = self._marginals(A)[self._index(A, x, rows)]
                with np.errstate(divide="ignore"):
                    out[rows] = np.log(pA)
        return out

    def sample(self, n, rng):
        cdf = np.cumsum(self.joint.table.ravel())
        u = rng.random(n)
        # scale by cdf[-1], not by a differently rounded sum: u * cdf[-1] < cdf[-1] always, so
        # the search never runs past the end onto a zero-probability outcome
        idx = np.searchsorted(cdf, u * cdf[-1], side="right")
        return np.stack(np.unravel_index(idx, self.joint.table.shape), axis=1).astype(np.int64)


@dataclass(frozen=True, eq=False, init=False)
class MarkovChainLaw:
    r"""Markov chain :math:`X_0 \to \dots \to X_{d-1}` given by its transition matrix, any d.

    Parameters
    ----------
    transition : (K, K) row-stochastic matrix P.
    d : chain length (>= 1; hundreds are fine).
    initial : (K,) law of :math:`X_0`; default the stationary law of P (must be unique).
    """

    transition: np.ndarray
    d: int
    initial: np.ndarray
    marginals: np.ndarray  # (d, K): mu_j = initial P^j
    powers: np.ndarray  # (d, K, K): P^g, g = 0..d-1
    _fwd_table: np.ndarray  # (d K + d, K): P^g(a, .) at row g K + a, then mu_j
    _bwd_table: np.ndarray  # (d K + 1, K): P^g(., a) at row g K + a, then ones

    def __init__(self, transition, d: int, initial=None):
        P = _transition(transition)
        d = _int_arg(d, "d", 1)
        pi = _initial_law(P, initial)
        powers = np.empty((d, P.shape[0], P.shape[0]))
        powers[0] = np.eye(P.shape[0])
        mu = np.empty((d, P.shape[0]))
        mu[0] = pi
        for g in range(1, d):
            powers[g] = powers[g - 1] @ P
            mu[g] = mu[g - 1] @ P
        K = P.shape[0]
        fwd = np.concatenate([powers.reshape(d * K, K), mu])
        bwd = np.concatenate([powers.transpose(0, 2, 1).reshape(d * K, K), np.ones((1, K))])
        for name, v in (
            ("transition", P), ("initial", pi), ("marginals", mu), ("powers", powers),
            ("_fwd_table", fwd), ("_bwd_table", bwd),
        ):
            v.setflags(write=False)
            object.__setattr__(self, name, v)
        object.__setattr__(self, "d", d)

    @property
    def K(self) -> int:
        return self.transition.shape[0]

    def __repr__(self) -> str:
        return f"MarkovChainLaw(d={self.d}, K={self.K})"

    def to_joint(self) -> Joint:
        """The dense table (small d only; see :func:`mdmtheory.families.markov_chain`)."""
        return markov_chain(self.transition, self.d, self.initial)

    def entropy_coefficients(self) -> np.ndarray:
        r""":math:`e_0, \dots, e_d` (stationary chains; :func:`~mdmtheory.families.markov_chain_entropy_coefficients`)."""
        return markov_chain_entropy_coefficients(self.transition, self.d, self.initial)

    def _neighbours(self, revealed):
        d = self.d
        idx = np.arange(d)
        left = np.maximum.accumulate(np.where(revealed, idx, -1), axis=1)
        right = np.minimum.accumulate(np.where(revealed, idx, d)[:, ::-1], axis=1)[:, ::-1]
        return left, right

    def conditionals(self, x, revealed):
        x, revealed = _check_batch(x, revealed, self.d, self.K)
        d = self.d
        j = np.arange(d)[None, :]
        left, right = self._neighbours(revealed)
        has_l, has_r = left >= 0, right < d
        xl = np.take_along_axis(x, np.clip(left, 0, d - 1), axis=1)
        xr = np.take_along_axis(x, np.clip(right, 0, d - 1), axis=1)
        # one gather each from stacked tables: rows g*K + a of P^g (forward: P^g(a, .),
        # backward: P^g(., a)), then the marginals mu_j (forward) / a row of ones (backward)
        K = self.K
        fwd = self._fwd_table[np.where(has_l, (j - left) * K + xl, d * K + j)]
        bwd = self._bwd_table[np.where(has_r, (right - j) * K + xr, d * K)]
        un = fwd * bwd
        z = un.sum(axis=-1, keepdims=True)
        reach = np.all(self._factors(x, revealed) > 0, axis=1)  # p(x_A) > 0
        ok = (z > 0) & ~revealed[..., None] & reach[:, None, None]
        return np.divide(un, z, out=np.zeros(un.shape), where=ok)

    def _factors(self, x, revealed):
        """Factors of p(x_A) per position: mu or P^gap at revealed positions, 1 elsewhere."""
        d = self.d
        left, _ = self._neighbours(revealed)
        prev = np.concatenate([np.full((x.shape[0], 1), -1), left[:, :-1]], axis=1)  # nearest revealed < j
        j = np.broadcast_to(np.arange(d), x.shape)
        xp = np.take_along_axis(x, np.clip(prev, 0, d - 1), axis=1)
        has_p = prev >= 0
        K = self.K
        term = self._fwd_table[np.where(has_p, (j - prev) * K + xp, d * K + j), x]
        return np.where(revealed, term, 1.0)

    def log_marginal(self, x, revealed):
        x, revealed = _check_batch(x, revealed, self.d, self.K)
        with np.errstate(divide="ignore"):
            return np.log(self._factors(x, revealed)).sum(axis=1)

    def sample(self, n, rng):
        x = np.empty((n, self.d), dtype=np.int64)
        u = rng.random((n, self.d))
        x[:, 0] = _inverse_cdf(np.broadcast_to(self.initial, (n, self.K)), u[:, 0])
        for i in range(1, self.d):
            x[:, i] = _inverse_cdf(self.transition[x[:, i - 1]], u[:, i])
        return x


def as_oracle(law) -> ConditionalOracle:
    """A conditional oracle from a :class:`~mdmtheory.Joint` or an object with the oracle methods."""
    if isinstance(law, Joint):
        return TableLaw(law)
    if all(hasattr(law, a) for a in ("d", "K", "conditionals", "log_marginal", "sample")):
        return law
    raise ValueError(
        f"law: expected a mdmtheory.Joint or a conditional oracle (d, K, conditionals, "
        f"log_marginal, sample), got {type(law).__name__}"
    )
