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

from .._estimate import Estimate, Record
from .._moved import renamed_keywords
from .._validate import float_array as _float_array, int_arg as _int_arg, LIMITS, samples_array as _samples_array
from .._validate import sample_args as _sample_args
from .families import _initial_law, markov_chain, markov_chain_entropy_coefficients, check_transition
from .joint import Joint, Marginals, joint_arg

__all__ = ["check_batch", 
    "inverse_cdf",
    "ConditionalOracle",
    "MAX_MIXTURE_ENTRIES",
    "TableLaw",
    "MarkovChainLaw",
    "MixtureOfProductsLaw",
    "HiddenMarkovLaw",
    "as_oracle",
    "loo_conditionals",
    "InformationProfileEstimate",
    "estimate_information_profile",
    "empirical_oracle",
]


class ConditionalOracle(Protocol):
    d: int
    K: int

    def conditionals(self, x: np.ndarray, revealed: np.ndarray) -> np.ndarray: ...

    def log_marginal(self, x: np.ndarray, revealed: np.ndarray) -> np.ndarray: ...

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray: ...


def _revealed_mask(revealed) -> np.ndarray:
    """A bool mask; 0/1 integers are accepted, floats (0.5 would cast to True) and text are not."""
    try:
        r = np.asarray(revealed)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"revealed: cannot be read as a bool array ({str(exc)[:80]})") from None
    if r.dtype.kind == "b":
        return r
    if r.dtype.kind in "iu" and np.all((r == 0) | (r == 1)):
        return r.astype(bool)
    raise ValueError(f"revealed: expected a bool array (or 0/1 integers), got dtype {r.dtype}")


def _token_array(x) -> np.ndarray:
    if isinstance(x, (str, bytes)) or x is None:
        raise ValueError(f"x: expected an integer array (n, d), got {type(x).__name__}")
    try:
        return np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"x: cannot be read as an integer array ({str(exc)[:80]})") from None


def check_batch(x, revealed, d: int, K: int) -> tuple[np.ndarray, np.ndarray]:
    """``(x, revealed)`` checked as two (n, d) arrays: token ids in 0..K-1 and a bool mask; a
    ValueError naming ``x, revealed`` otherwise (what an oracle's ``conditionals`` is given)."""
    x = _token_array(x)
    revealed = _revealed_mask(revealed)
    if x.ndim != 2 or x.shape[1] != d or revealed.shape != x.shape:
        raise ValueError(f"x, revealed: expected two (n, d={d}) arrays, got {x.shape} and {revealed.shape}")
    if x.dtype.kind not in "iu":
        raise ValueError(f"x: expected integer tokens, got dtype {x.dtype}")
    if np.any(revealed & ((x < 0) | (x >= K))):
        raise ValueError(f"x: revealed values must be tokens in 0..{K - 1}")
    return np.where(revealed, x, 0).astype(np.int64), revealed


def inverse_cdf(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Token v with cdf(v-1) <= u * total < cdf(v) along the last axis (zero-mass tokens never):
    the draw every Monte Carlo loop of the package makes from a row of conditionals and a
    uniform. Unvalidated by design (the inner loop; its callers check their arrays)."""
    cdf = np.cumsum(probs, axis=-1)
    return (cdf <= u[..., None] * cdf[..., -1:]).sum(axis=-1)


@dataclass(frozen=True, eq=False)
class TableLaw(Record):
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
        x, revealed = check_batch(x, revealed, self.d, self.K)
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
        x, revealed = check_batch(x, revealed, self.d, self.K)
        out = np.zeros(x.shape[0])
        for A, rows in self._groups(revealed):
            if A:
                pA = self._marginals(A)[self._index(A, x, rows)]
                with np.errstate(divide="ignore"):
                    out[rows] = np.log(pA)
        return out

    def sample(self, n, rng):
        n, rng = _sample_args(n, rng, self.d)
        cdf = np.cumsum(self.joint.table.ravel())
        u = rng.random(n)
        # scale by cdf[-1], not by a differently rounded sum: u * cdf[-1] < cdf[-1] always, so
        # the search never runs past the end onto a zero-probability outcome
        idx = np.searchsorted(cdf, u * cdf[-1], side="right")
        return np.stack(np.unravel_index(idx, self.joint.table.shape), axis=1).astype(np.int64)


@dataclass(frozen=True, eq=False, init=False)
class MarkovChainLaw(Record):
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
        P = check_transition(transition)
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
        """The dense table (small d only; see :func:`mdmtheory.laws.families.markov_chain`)."""
        return markov_chain(self.transition, self.d, self.initial)

    def entropy_coefficients(self) -> np.ndarray:
        r""":math:`e_0, \dots, e_d` (stationary chains; :func:`~mdmtheory.laws.families.markov_chain_entropy_coefficients`)."""
        return markov_chain_entropy_coefficients(self.transition, self.d, self.initial)

    def _neighbours(self, revealed):
        d = self.d
        idx = np.arange(d)
        left = np.maximum.accumulate(np.where(revealed, idx, -1), axis=1)
        right = np.minimum.accumulate(np.where(revealed, idx, d)[:, ::-1], axis=1)[:, ::-1]
        return left, right

    def conditionals(self, x, revealed):
        x, revealed = check_batch(x, revealed, self.d, self.K)
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
        x, revealed = check_batch(x, revealed, self.d, self.K)
        with np.errstate(divide="ignore"):
            return np.log(self._factors(x, revealed)).sum(axis=1)

    def sample(self, n, rng):
        n, rng = _sample_args(n, rng, self.d)
        x = np.empty((n, self.d), dtype=np.int64)
        u = rng.random((n, self.d))
        x[:, 0] = inverse_cdf(np.broadcast_to(self.initial, (n, self.K)), u[:, 0])
        for i in range(1, self.d):
            x[:, i] = inverse_cdf(self.transition[x[:, i - 1]], u[:, i])
        return x


@renamed_keywords(law="p")
def as_oracle(p) -> ConditionalOracle:
    """A conditional oracle from a :class:`~mdmtheory.Joint` or an object with the oracle methods."""
    if isinstance(p, Joint):
        return TableLaw(joint_arg(p, what="a data law (its conditionals are the oracle)"))
    if all(hasattr(p, a) for a in ("d", "K", "conditionals", "log_marginal", "sample")):
        return p
    raise ValueError(
        f"p: expected a mdmtheory.Joint or a conditional oracle (d, K, conditionals, "
        f"log_marginal, sample), got {type(p).__name__}"
    )


# -- leave-one-out conditionals: what the dyadic estimator needs --------------------------------
@renamed_keywords(law="p")
def loo_conditionals(p, x, revealed, *, max_rows: int = 1 << 16) -> np.ndarray:
    r"""Row j is :math:`p(x_j = \cdot \mid x_{A \setminus \{j\}})` for *every* position j.

    For a masked j this is the ordinary conditional; for a revealed j it is the conditional
    with j itself forced masked (the :math:`X_{t|i}` of W26 §4). Laws that can do better
    provide a ``loo_conditionals(x, revealed)`` method (Markov chains, mixtures of
    products and hidden Markov models here: one pass for all j); any other oracle (a
    :class:`TableLaw`, a model seen through ``mdmtheory.bridge.ModelOracle``) needs only
    ``conditionals(x, revealed)``: every row is expanded into one copy per revealed
    position with that position masked, and the copies go through ``conditionals`` in
    batches of at most ``max_rows`` rows.

    Parameters
    ----------
    p : conditional oracle (anything with ``d``, ``K`` and ``conditionals``)
    x : (n, d) int array; values at unrevealed positions are ignored
    revealed : (n, d) bool array

    Returns
    -------
    numpy.ndarray, shape (n, d, K)
    """
    if not all(hasattr(p, a) for a in ("d", "K", "conditionals")):
        raise ValueError(f"p: expected a conditional oracle (d, K, conditionals), got {type(p).__name__}")
    max_rows = _int_arg(max_rows, "max_rows", 1)
    own = getattr(p, "loo_conditionals", None)
    if own is not None:
        return own(x, revealed)
    x = _token_array(x)
    revealed = _revealed_mask(revealed)
    d = int(p.d)
    if x.ndim != 2 or x.shape[1] != d or revealed.shape != x.shape:
        raise ValueError(f"x, revealed: expected two (n, d={d}) arrays, got {x.shape} and {revealed.shape}")
    n = x.shape[0]
    out = np.array(p.conditionals(x, revealed), dtype=np.float64, copy=True)
    rows, cols = np.nonzero(revealed)
    for s in range(0, rows.size, max_rows):
        r, c = rows[s : s + max_rows], cols[s : s + max_rows]
        rev = revealed[r].copy()
        rev[np.arange(r.size), c] = False
        cond = np.asarray(p.conditionals(x[r], rev), dtype=np.float64)
        out[r, c] = cond[np.arange(r.size), c]
    if out.shape[:2] != (n, d):
        raise ValueError(f"p: conditionals returned shape {out.shape}, expected (n={n}, d={d}, K)")
    return out


def _markov_loo(self, x, revealed):
    """Leave-one-out conditionals of a Markov chain: nearest revealed neighbours other than j."""
    x, revealed = check_batch(x, revealed, self.d, self.K)
    d, K = self.d, self.K
    n = x.shape[0]
    j = np.arange(d)[None, :]
    left, right = self._neighbours(revealed)
    # exclusive neighbours: the inclusive ones of j - 1 and j + 1
    left = np.concatenate([np.full((n, 1), -1), left[:, :-1]], axis=1)
    right = np.concatenate([right[:, 1:], np.full((n, 1), d)], axis=1)
    has_l, has_r = left >= 0, right < d
    xl = np.take_along_axis(x, np.clip(left, 0, d - 1), axis=1)
    xr = np.take_along_axis(x, np.clip(right, 0, d - 1), axis=1)
    fwd = self._fwd_table[np.where(has_l, (j - left) * K + xl, d * K + j)]
    bwd = self._bwd_table[np.where(has_r, (right - j) * K + xr, d * K)]
    un = fwd * bwd
    z = un.sum(axis=-1, keepdims=True)
    reach = np.all(self._factors(x, revealed) > 0, axis=1)
    ok = (z > 0) & reach[:, None, None]
    return np.divide(un, z, out=np.zeros(un.shape), where=ok)


MarkovChainLaw.loo_conditionals = _markov_loo


def _prob_array(value, name: str, ndim: int, last_axis_sums: bool = True) -> np.ndarray:
    a = _float_array(value, name, ndim=ndim)  # refuses strings, bools, NaN, inf
    if a.size == 0:
        raise ValueError(f"{name}: expected a non-empty array, got shape {a.shape}")
    if np.any(a < 0):
        raise ValueError(f"{name}: entries must be non-negative (min {a.min():.3g})")
    if last_axis_sums and not np.allclose(a.sum(axis=-1), 1.0, rtol=0, atol=1e-9):
        raise ValueError(f"{name}: each row (last axis) must sum to 1 within 1e-9; normalize it first")
    a.setflags(write=False)
    return a


#: Most entries M·d·K of a :class:`MixtureOfProductsLaw` (512 MiB of float64, twice: the
#: table and its logarithm).
MAX_MIXTURE_ENTRIES = 1 << 26


def _check_mixture_shape(shape) -> None:
    if len(shape) != 3:
        return  # _prob_array names the wrong number of axes
    M, d, K = (int(v) for v in shape)
    if d > LIMITS["d"]:
        raise ValueError(f"probs: {d} positions exceed the documented limit d <= {LIMITS['d']}")
    if K > LIMITS["K"]:
        raise ValueError(f"probs: {K} outcomes exceed the documented limit K <= {LIMITS['K']}")
    if M * d * K > MAX_MIXTURE_ENTRIES:
        raise ValueError(f"probs: M*d*K = {M * d * K} entries exceed the documented limit "
                         f"{MAX_MIXTURE_ENTRIES} (fewer components, positions or outcomes)")


def _logsumexp(a: np.ndarray, axis: int = -1) -> np.ndarray:
    """log Σ exp along ``axis``; -inf for an all -inf slice (no warnings, no NaN)."""
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(a - m), axis=axis)) + np.squeeze(m, axis=axis)


@dataclass(frozen=True, eq=False, init=False)
class MixtureOfProductsLaw(Record):
    r"""Mixture of M product laws: :math:`p(x) = \sum_m w_m \prod_k \pi_{m,k}(x_k)`, any d.

    The posterior over components given the revealed tokens,
    :math:`\log p(m \mid x_A) = \log w_m + \sum_{k \in A} \log \pi_{m,k}(x_k) - \log p(x_A)`,
    gives every conditional,
    :math:`p(x_j = v \mid x_A) = \sum_m p(m \mid x_A)\, \pi_{m,j}(v)` (all in log space; the
    per-component log-likelihoods are one matrix product of the one-hot revealed tokens
    with :math:`\log \pi`). Cost :math:`O(n M d K)` per call, in chunks of rows.

    Parameters
    ----------
    weights : (M,) mixture weights, summing to 1.
    probs : (M, d, K) per-component, per-position token laws (rows sum to 1);
        d <= 2**16 and K <= 2**24 (the limits of :mod:`mdmtheory._validate`), and at most
        :data:`MAX_MIXTURE_ENTRIES` = 2**26 entries M·d·K, checked before the table is read.
    """

    weights: np.ndarray
    probs: np.ndarray
    _logw: np.ndarray
    _logp: np.ndarray  # (d K, M): log pi_{m,k}(v) at row k K + v (-inf allowed)
    _finite: bool

    def __init__(self, weights, probs):
        shape = np.shape(probs) if isinstance(probs, np.ndarray) else None
        if shape is not None:  # an array's size is known before anything is copied
            _check_mixture_shape(shape)
        w = _prob_array(weights, "weights", 1)
        P = _prob_array(probs, "probs", 3)
        _check_mixture_shape(P.shape)
        if P.shape[0] != w.shape[0]:
            raise ValueError(f"probs: expected shape (M={w.shape[0]}, d, K), got {P.shape}")
        with np.errstate(divide="ignore"):
            logw = np.log(w)
            logp = np.ascontiguousarray(np.log(P).reshape(P.shape[0], -1).T)
        for name, v in (("weights", w), ("probs", P), ("_logw", logw), ("_logp", logp)):
            v.setflags(write=False)
            object.__setattr__(self, name, v)
        object.__setattr__(self, "_finite", bool(np.all(np.isfinite(logp)) and np.all(np.isfinite(logw))))

    @property
    def d(self) -> int:
        return self.probs.shape[1]

    @property
    def K(self) -> int:
        return self.probs.shape[2]

    @property
    def M(self) -> int:
        return self.probs.shape[0]

    def __repr__(self) -> str:
        return f"MixtureOfProductsLaw(M={self.M}, d={self.d}, K={self.K})"

    def _chunk(self) -> int:
        return max(1, (1 << 22) // max(1, self.M * self.d))

    def _loglik(self, x, revealed) -> np.ndarray:
        """(n, M): log w_m + Σ_{k in A} log π_{m,k}(x_k); -inf where a revealed token is impossible."""
        n, d, K = x.shape[0], self.d, self.K
        cols = np.arange(d) * K + x  # (n, d)
        out = np.empty((n, self.M))
        if self._finite:  # one matrix product of the one-hot revealed tokens with log pi
            step = max(1, (1 << 22) // max(1, self.M))
            for s in range(0, n, step):
                c, r = cols[s : s + step], revealed[s : s + step]
                onehot = np.zeros((c.shape[0], d * K))
                np.put_along_axis(onehot, c, r.astype(np.float64), axis=1)
                out[s : s + c.shape[0]] = self._logw + onehot @ self._logp
            return out
        for s in range(0, n, self._chunk()):
            c, r = cols[s : s + self._chunk()], revealed[s : s + self._chunk()]
            g = self._logp[c]  # (b, d, M)
            out[s : s + c.shape[0]] = self._logw + np.where(r[..., None], g, 0.0).sum(axis=1)
        return out

    def log_marginal(self, x, revealed):
        x, revealed = check_batch(x, revealed, self.d, self.K)
        return _logsumexp(self._loglik(x, revealed), axis=1)

    def _posterior_mix(self, L: np.ndarray):
        """Σ_m softmax(L)_m π_m, shape (n, d K); rows with p(x_A) = 0 are 0. Overwrites L.

        One exp per entry (shifted by the row maximum, so the normalizer is ≥ 1), then one
        float64 matrix product per chunk of rows, normalized after the product (profiled at
        d = 64, M = 2^16: the exp and the product are the cost; see benchmarks/RESULTS.md §6).
        """
        n = L.shape[0]
        flat = self.probs.reshape(self.M, -1)
        out = np.empty((n, flat.shape[1]))
        ok = np.empty(n, dtype=bool)
        step = max(1, (1 << 21) // max(1, self.M))
        cut = 40.0 + float(np.log(self.M))
        for s in range(0, n, step):
            Lc = L[s : s + step]
            m = Lc.max(axis=1)
            okc = np.isfinite(m)
            Lc -= np.where(okc, m, 0.0)[:, None]
            # components below e^-cut of the row maximum carry < M e^-cut = e^-40 of the mass
            # (under float64 rounding of the normalizer >= 1): left out of the product
            keep = np.flatnonzero((Lc > -cut).any(axis=0))
            if keep.size < self.M // 2:
                e = np.exp(Lc[:, keep])
                mix = e @ flat[keep]
            else:
                e = np.exp(Lc, out=Lc)  # rows with p(x_A) = 0 are exp(-inf) = 0 throughout
                mix = e @ flat
            z = e.sum(axis=1)
            np.divide(mix, np.where(okc, z, 1.0)[:, None], out=out[s : s + step])
            ok[s : s + step] = okc
        return out, ok

    def conditionals(self, x, revealed):
        x, revealed = check_batch(x, revealed, self.d, self.K)
        mix, _ = self._posterior_mix(self._loglik(x, revealed))
        out = mix.reshape(x.shape[0], self.d, self.K)
        out[revealed] = 0.0
        return out

    def loo_conditionals(self, x, revealed):
        r"""Row j: :math:`p(x_j \mid x_{A\setminus\{j\}})`, from :math:`\log p(m \mid x_A)` minus j's own term."""
        x, revealed = check_batch(x, revealed, self.d, self.K)
        n, d, K = x.shape[0], self.d, self.K
        out = np.zeros((n, d, K))
        step = max(1, self._chunk() // 2)
        P = self.probs  # (M, d, K)
        for s in range(0, n, step):
            xs, rs = x[s : s + step], revealed[s : s + step]
            g = self._logp[np.arange(d) * K + xs]  # (b, d, M)
            gr = np.where(rs[..., None], g, 0.0)
            fin = np.isfinite(gr)
            gf = np.where(fin, gr, 0.0)
            # finite part and count of impossible revealed tokens, so that removing j's own
            # term is exact also when it is log 0 = -inf (never -inf - -inf)
            F = self._logw + gf.sum(axis=1)  # (b, M)
            ninf = (~fin).sum(axis=1)  # (b, M)
            Lj = F[:, None, :] - gf  # (b, d, M)
            Lj = np.where((ninf[:, None, :] - ~fin) == 0, Lj, -np.inf)
            lz = _logsumexp(Lj, axis=2)  # (b, d)
            ok = np.isfinite(lz)
            post = np.exp(Lj - np.where(ok, lz, 0.0)[..., None]) * ok[..., None]  # (b, d, M)
            out[s : s + xs.shape[0]] = np.matmul(post.transpose(1, 0, 2), P.transpose(1, 0, 2)).transpose(1, 0, 2)
        return out

    def sample(self, n, rng):
        n, rng = _sample_args(n, rng, self.d)
        comp = inverse_cdf(np.broadcast_to(self.weights, (n, self.M)), rng.random(n))
        return inverse_cdf(self.probs[comp], rng.random((n, self.d))).astype(np.int64)

    def to_joint(self) -> Joint:
        """The dense table :math:`\\sum_m w_m \\bigotimes_k \\pi_{m,k}` (small d only)."""
        if self.K**self.d > 1 << 22:
            raise ValueError(f"d: the dense table has K**d = {self.K ** self.d} entries; keep K**d <= {1 << 22}")
        t = self.weights.copy()
        for k in range(self.d):
            t = t[..., None] * self.probs[(slice(None),) + (None,) * k + (k,)]
        return Joint(t.sum(axis=0))


@dataclass(frozen=True, eq=False, init=False)
class HiddenMarkovLaw(Record):
    r"""Hidden Markov model :math:`Z_0 \to \dots \to Z_{d-1}` (S states), :math:`X_j \mid Z_j \sim E(Z_j, \cdot)`.

    Conditionals by forward–backward restricted to the revealed positions (an unrevealed
    position contributes emission likelihood 1):
    :math:`\alpha_j(s) \propto p(x_{A \cap [0, j)}, Z_j = s)`,
    :math:`\beta_j(s) \propto p(x_{A \cap (j, d)} \mid Z_j = s)` and

    .. math:: p(x_j = v \mid x_{A \setminus \{j\}}) \propto \sum_s \alpha_j(s)\,\beta_j(s)\,E(s, v),

    which is the conditional of a masked j and the leave-one-out conditional of a revealed
    one. Scaled recursions (each step normalized), :math:`\log p(x_A) = \sum_j \log c_j`.
    Cost :math:`O(n d S^2)`, one Python loop over positions.

    Parameters
    ----------
    initial : (S,) law of :math:`Z_0`.
    transition : (S, S) row-stochastic matrix.
    emission : (S, K) row-stochastic matrix.
    d : sequence length (>= 1).
    """

    initial: np.ndarray
    transition: np.ndarray
    emission: np.ndarray
    d: int

    def __init__(self, initial, transition, emission, d: int):
        pi = _prob_array(initial, "initial", 1)
        T = _prob_array(transition, "transition", 2)
        E = _prob_array(emission, "emission", 2)
        S = pi.shape[0]
        if T.shape != (S, S):
            raise ValueError(f"transition: expected shape (S={S}, S={S}), got {T.shape}")
        if E.shape[0] != S:
            raise ValueError(f"emission: expected shape (S={S}, K), got {E.shape}")
        object.__setattr__(self, "initial", pi)
        object.__setattr__(self, "transition", T)
        object.__setattr__(self, "emission", E)
        object.__setattr__(self, "d", _int_arg(d, "d", 1))

    @property
    def K(self) -> int:
        return self.emission.shape[1]

    @property
    def S(self) -> int:
        return self.initial.shape[0]

    def __repr__(self) -> str:
        return f"HiddenMarkovLaw(S={self.S}, d={self.d}, K={self.K})"

    def _passes(self, x, revealed):
        """Scaled forward predictions α_j, backward β_j (n, d, S) and log c_j (n, d); reachability."""
        n, d, S = x.shape[0], self.d, self.S
        e = np.where(revealed[..., None], self.emission.T[x], 1.0)  # (n, d, S)
        alpha = np.empty((n, d, S))
        logc = np.zeros((n, d))
        reach = np.ones(n, dtype=bool)
        a = np.broadcast_to(self.initial, (n, S)).copy()
        for j in range(d):
            alpha[:, j] = a
            f = a * e[:, j]
            c = f.sum(axis=1)
            good = c > 0
            reach &= good
            with np.errstate(divide="ignore"):
                logc[:, j] = np.log(c)
            f = np.divide(f, c[:, None], out=a.copy(), where=good[:, None])  # unreachable: keep going
            a = f @ self.transition
        beta = np.empty((n, d, S))
        b = np.ones((n, S))
        for j in range(d - 1, -1, -1):
            beta[:, j] = b
            g = (e[:, j] * b) @ self.transition.T
            z = g.sum(axis=1, keepdims=True)
            b = np.divide(g, z, out=np.ones_like(g), where=z > 0)
        return alpha, beta, logc, reach

    def loo_conditionals(self, x, revealed):
        x, revealed = check_batch(x, revealed, self.d, self.K)
        alpha, beta, _, reach = self._passes(x, revealed)
        un = (alpha * beta) @ self.emission  # (n, d, K)
        z = un.sum(axis=-1, keepdims=True)
        ok = (z > 0) & reach[:, None, None]
        return np.divide(un, z, out=np.zeros(un.shape), where=ok)

    def conditionals(self, x, revealed):
        out = self.loo_conditionals(x, revealed)
        out[np.asarray(revealed, dtype=bool)] = 0.0
        return out

    def log_marginal(self, x, revealed):
        x, revealed = check_batch(x, revealed, self.d, self.K)
        _, _, logc, reach = self._passes(x, revealed)
        return np.where(reach, logc.sum(axis=1), -np.inf)

    def sample(self, n, rng):
        n, rng = _sample_args(n, rng, self.d)
        z = np.empty((n, self.d), dtype=np.int64)
        z[:, 0] = inverse_cdf(np.broadcast_to(self.initial, (n, self.S)), rng.random(n))
        for j in range(1, self.d):
            z[:, j] = inverse_cdf(self.transition[z[:, j - 1]], rng.random(n))
        return inverse_cdf(self.emission[z], rng.random((n, self.d))).astype(np.int64)

    def to_joint(self) -> Joint:
        """The dense table, by the forward recursion over all prefixes (small d only)."""
        if self.K**self.d * self.S > 1 << 22:
            raise ValueError(f"d: the dense table has K**d = {self.K ** self.d} entries; too large")
        # f[x_0..x_j, s] = p(x_0..x_j, Z_j = s)
        f = self.initial[None, :] * self.emission.T  # (K, S)
        for _ in range(1, self.d):
            f = (f @ self.transition)[..., None, :] * self.emission.T  # (..., K, S)
        return Joint(f.sum(axis=-1))


# -- the information profile of a law given by its conditionals (Monte Carlo) -----------------
@dataclass(frozen=True)
class InformationProfileEstimate(Estimate):
    r"""Monte Carlo information profile :math:`\hat\varphi_j` with standard errors (nats).

    ``values[j]`` estimates :math:`\varphi_j` (j = 0..d-1), ``stderr[j]`` its standard
    error, ``per_sample`` (n, d) the per-sample values (for batch means / bootstrap).
    """

    values: np.ndarray
    stderr: np.ndarray
    per_sample: np.ndarray

    point = "values"

    @property
    def n(self) -> int:
        return int(self.per_sample.shape[0])

    def gain_coefficients(self) -> tuple[np.ndarray, np.ndarray]:
        r""":math:`\hat h^{card}_j = d(\hat\varphi_0 - \hat\varphi_j)` and their standard errors (paired)."""
        d = self.values.shape[0]
        diff = d * (self.per_sample[:, :1] - self.per_sample)
        return diff.mean(axis=0), diff.std(axis=0, ddof=1) / np.sqrt(self.n)


@renamed_keywords(law="p")
def estimate_information_profile(p, n: int, *, seed: int = 0, batch: int = 4096) -> InformationProfileEstimate:
    r"""Monte Carlo :math:`\varphi_j = \text{mean}_{|A| = j,\, i \notin A} H(X_i \mid X_A)` from the conditionals.

    Per clean sample :math:`X \sim p` one uniform random order π; for every level j,
    :math:`A = \{\pi_1, \dots, \pi_j\}` and the value
    :math:`\frac{1}{d-j}\sum_{i \notin A} H\bigl(p(\cdot \mid X_A)_i\bigr)` — the entropy of
    the exact conditional, whose mean over X is :math:`H(X_i \mid X_A)` (a Rao–Blackwellized
    form of :math:`\mathbb E[-\log p(X_i \mid X_A)]`). Nested sets along one order give
    common random numbers across levels, so differences :math:`\varphi_0 - \varphi_j` (the
    gain coefficients) have small variance. Cost: n·d rows of ``conditionals``.

    Parameters
    ----------
    p : conditional oracle with ``sample`` (or a Joint)
    n : int
        Number of clean samples (>= 2).
    seed : int
    batch : int
        Rows per ``conditionals`` call.
    """
    p = as_oracle(p)
    n = _int_arg(n, "n", 2)
    batch = _int_arg(batch, "batch", 1)
    rng = np.random.default_rng(_int_arg(seed, "seed", 0))
    d = int(p.d)
    xs = np.asarray(p.sample(n, rng))
    order = np.argsort(rng.random((n, d)), axis=1)
    rank = np.argsort(order, axis=1)  # rank[r, k]: position of k in the order
    rows_x = np.repeat(xs, d, axis=0)
    levels = np.tile(np.arange(d), n)
    rev_all = np.repeat(rank, d, axis=0) < levels[:, None]  # A = the first j of the order
    vals = np.empty(n * d)
    for s in range(0, n * d, batch):
        c = p.conditionals(rows_x[s : s + batch], rev_all[s : s + batch])
        ent = -np.sum(np.where(c > 0, c * np.log(np.where(c > 0, c, 1.0)), 0.0), axis=-1)
        ent[rev_all[s : s + batch]] = 0.0
        vals[s : s + batch] = ent.sum(axis=1) / (d - levels[s : s + batch])
    per = vals.reshape(n, d)
    return InformationProfileEstimate(values=per.mean(axis=0), stderr=per.std(axis=0, ddof=1) / np.sqrt(n), per_sample=per)


def empirical_oracle(samples, K: int | None = None) -> MixtureOfProductsLaw:
    r"""The empirical law :math:`\hat p(x) = \#\{x\}/n` as a conditional oracle, at any d.

    A mixture of point masses, one component per distinct row (weight = its frequency), so
    :math:`\hat p(x_j = v \mid x_A)` is the frequency of v at j among the observed rows
    that agree with :math:`x_A` (:class:`~mdmtheory.laws.MixtureOfProductsLaw`).
    Limits, checked before the table is built: d <= 2**16, tokens below K <= 2**24, and
    (distinct rows)·d·K <= :data:`~mdmtheory.laws.MAX_MIXTURE_ENTRIES` = 2**26.

    Examples
    --------
    >>> law = empirical_oracle(np.array([[0, 1], [0, 1], [1, 1], [1, 0]]))
    >>> law.conditionals(np.array([[0, 1]]), np.array([[False, True]]))[0, 0].round(4).tolist()
    [0.6667, 0.3333]
    """
    x = _samples_array(samples, "samples")
    if x.shape[1] > LIMITS["d"]:
        raise ValueError(f"samples: {x.shape[1]} positions exceed the documented limit d <= {LIMITS['d']}")
    if x.min() < 0:
        raise ValueError("samples: tokens must be non-negative integers")
    if K is None:
        if int(x.max()) >= LIMITS["K"]:
            raise ValueError(f"samples: a token {int(x.max())} would make an alphabet beyond the "
                             f"documented limit K <= {LIMITS['K']}; map the tokens to 0..K-1")
        K = max(int(x.max()) + 1, 2)
    else:
        K = _int_arg(K, "K", 2)
    if x.max() >= K:
        raise ValueError(f"samples: tokens must lie in 0..{K - 1}")
    rows, counts = np.unique(x, axis=0, return_counts=True)
    if rows.shape[0] * x.shape[1] * K > MAX_MIXTURE_ENTRIES:
        raise ValueError(f"samples: {rows.shape[0]} distinct rows x d={x.shape[1]} x K={K} exceed the "
                         f"documented limit of {MAX_MIXTURE_ENTRIES} entries of the empirical oracle")
    probs = (rows[..., None] == np.arange(K)).astype(np.float64)
    return MixtureOfProductsLaw(counts / counts.sum(), probs)
