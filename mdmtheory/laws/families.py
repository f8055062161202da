r"""Named distributions on :math:`[K]^d` with closed forms (docs/theory.md §6).

Every family is a function that validates its arguments and returns a :class:`Joint`.
Positions are numbered ``0 .. d-1`` (the first axis of the table is position 0); all
logs are natural. Nothing is clipped or renormalized: an argument that is not a valid
probability vector (negative entries, sums off 1 by more than
:data:`~mdmtheory.laws.NORMALIZATION_TOL`) raises ``ValueError`` naming the argument.

Dense tables hold :math:`K^d` entries and are refused beyond
:data:`~mdmtheory.laws.MAX_OUTCOMES` (checked before anything is allocated). The
stationary Markov chain also has an :math:`O(d^2)` table-free route to its entropy
coefficients, :func:`markov_chain_entropy_coefficients`, for any ``d``.

Closed forms used by the tests: :math:`H(X) = \log K` for :func:`repeated`,
:math:`(d-1)\log 2` for :func:`parity`, :math:`\operatorname{rank}_{GF(2)}(A)\log 2`
for :func:`xorsat`, :math:`\sum_i H(X_i)` for :func:`product`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import entr

from .._validate import float_array as _float_array_checked, int_arg as _int_arg, real_arg as _real_arg, samples_array
from .joint import Joint, MAX_OUTCOMES, NORMALIZATION_TOL

__all__ = ["check_transition", 
    "product",
    "repeated",
    "parity",
    "xorsat",
    "blocks",
    "markov_chain",
    "stationary_distribution",
    "noisy_repeated_bit",
    "mixture_of_products",
    "ising_chain",
    "dirichlet",
    "empirical",
    "markov_chain_entropy_coefficients",
    "sampler_laws",
]


# -- argument validation ------------------------------------------------------------------
def _float_array(value, name: str, ndim: int, what: str) -> np.ndarray:
    """A finite float64 array with ``ndim`` axes (``what`` describes the expected shape)."""
    return _float_array_checked(value, name, ndim=ndim, what=what)


def _distributions(value, name: str, ndim: int, what: str, min_k: int = 2) -> np.ndarray:
    """Probability vectors along the last axis: non-negative, each summing to 1 within tol."""
    arr = _float_array(value, name, ndim, what)
    if arr.shape[-1] < min_k:
        raise ValueError(f"{name}: the last axis (the alphabet) needs length >= {min_k}, got shape {arr.shape}")
    if np.any(arr < 0):
        raise ValueError(f"{name}: contains negative entries (min {arr.min():.3g}); probabilities must be >= 0")
    sums = arr.sum(axis=-1)
    worst = float(np.max(np.abs(sums - 1.0))) if sums.size else 0.0
    if worst > NORMALIZATION_TOL:
        raise ValueError(
            f"{name}: each probability vector along the last axis must sum to 1 within "
            f"{NORMALIZATION_TOL} (worst deviation {worst:.3g}); normalize it yourself "
            "(nothing is renormalized silently)"
        )
    return arr


def _check_size(K: int, d: int, name: str = "d") -> None:
    """Refuse a dense table of ``K**d`` entries before allocating it (as Joint would)."""
    if d * math.log2(K) > math.log2(MAX_OUTCOMES) + 1e-9 or K**d > MAX_OUTCOMES:  # logs first: no 2**(10**6)
        raise ValueError(
            f"{name}: K**d = {K}**{d} outcomes exceeds the exact limit {MAX_OUTCOMES}; "
            "use a structured quantity (e.g. markov_chain_entropy_coefficients) or the "
            "Monte Carlo estimators for larger laws"
        )


def check_transition(value, name: str = "transition") -> np.ndarray:
    """A K x K row-stochastic matrix, K >= 2."""
    P = _distributions(value, name, 2, "(K, K), rows are distributions")
    if P.shape[0] != P.shape[1]:
        raise ValueError(f"{name}: expected a square (K, K) matrix, got shape {P.shape}")
    return P


def _outer_all(rows) -> np.ndarray:
    """Outer product of a sequence of 1-D arrays (axis i indexes rows[i])."""
    table = np.asarray(rows[0])
    for row in rows[1:]:
        table = np.multiply.outer(table, row)
    return table


# -- independent coordinates, copies, parity ----------------------------------------------
def product(marginals) -> Joint:
    r"""Independent coordinates.

    .. math:: p(x) = \prod_{i=1}^{d} m_i(x_i), \qquad H(X) = \sum_i H(m_i).

    Parameters
    ----------
    marginals : array_like, shape ``(d, K)``
        Row i is the law :math:`m_i` of :math:`X_i`.
    """
    m = _distributions(marginals, "marginals", 2, "(d, K), rows are distributions")
    d, K = m.shape
    if d < 1:
        raise ValueError("marginals: needs at least one row (d >= 1)")
    _check_size(K, d, "marginals")
    return Joint(_outer_all(list(m)))


def repeated(d: int, K: int = 2, weights=None) -> Joint:
    r"""One symbol copied to every position: :math:`X_1 = \dots = X_d \sim w`.

    .. math:: p(x) = w_k \,\mathbf 1\{x_1 = \dots = x_d = k\}, \qquad H(X) = H(w)

    (:math:`\log K` for the default uniform ``w``).

    Parameters
    ----------
    d : int, >= 1
    K : int, >= 2
        Alphabet size; must equal ``len(weights)`` when weights are given.
    weights : array_like, shape ``(K,)``, optional
        Law of the common symbol (default uniform).
    """
    d = _int_arg(d, "d", 1)
    K = _int_arg(K, "K", 2)
    if weights is None:
        w = np.full(K, 1.0 / K)
    else:
        w = _distributions(weights, "weights", 1, "(K,)")
        if w.shape[0] != K:
            raise ValueError(f"weights: has length {w.shape[0]} but K={K}; pass K={w.shape[0]}")
    _check_size(K, d)
    table = np.zeros((K,) * d)
    for k in range(K):
        table[(k,) * d] = w[k]
    return Joint(table)


def parity(d: int) -> Joint:
    r"""Global parity: :math:`X_1, \dots, X_{d-1}` iid uniform bits, :math:`X_d = \bigoplus_{i<d} X_i`.

    .. math:: p(x) = 2^{-(d-1)} \,\mathbf 1\Big\{\sum_i x_i \equiv 0 \pmod 2\Big\},
              \qquad H(X) = (d-1)\log 2.

    Parameters
    ----------
    d : int, >= 2
    """
    d = _int_arg(d, "d", 2)
    _check_size(2, d)
    even = np.indices((2,) * d).sum(axis=0) % 2 == 0
    return Joint(np.where(even, 2.0 ** -(d - 1), 0.0))


def xorsat(A) -> Joint:
    r"""Linear code over GF(2): :math:`X = A U \bmod 2` with :math:`U` uniform on :math:`\{0,1\}^r`.

    :math:`X` is uniform on the column span of :math:`A`:

    .. math:: p(x) = 2^{-\operatorname{rank}(A)} \,\mathbf 1\{x \in \operatorname{colspan}_{GF(2)} A\},
              \qquad H(X_i \mid X_R) = \log 2 \cdot \mathbf 1\{a_i \notin \operatorname{rowspan}(A_R)\}.

    Parameters
    ----------
    A : array_like of 0/1, shape ``(d, r)``
        Row i is :math:`a_i`, the set of hidden bits that :math:`X_i` sums.
    """
    try:
        arr = np.array(A)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"A: cannot be read as a 0/1 matrix of shape (d, r) ({exc})") from None
    if arr.ndim != 2 or arr.shape[0] < 1:
        raise ValueError(f"A: expected a 0/1 matrix of shape (d, r) with d >= 1, got shape {arr.shape}")
    if arr.dtype.kind not in "biuf" or not np.all((arr == 0) | (arr == 1)):
        raise ValueError("A: entries must be 0 or 1 (a matrix over GF(2))")
    d = arr.shape[0]
    _check_size(2, d, "A")
    span = _gf2_column_span(arr.astype(np.int64))
    table = np.zeros(2**d)
    table[span] = 1.0 / span.size
    return Joint(table.reshape((2,) * d))


def _gf2_column_span(A: np.ndarray) -> np.ndarray:
    """All vectors of the GF(2) column span of A, as C-order flat indices (row 0 = top bit)."""
    d = A.shape[0]
    weights = 1 << np.arange(d - 1, -1, -1, dtype=np.int64)
    basis: list[int] = []  # reduced so that leading bits are distinct
    for col in (A.T @ weights).tolist():
        for b in basis:
            col = min(col, col ^ b)
        if col:
            basis.append(col)
    span = np.zeros(1, dtype=np.int64)
    for b in basis:
        span = np.concatenate([span, span ^ b])
    return span


def blocks(*joints: Joint) -> Joint:
    r"""Independent blocks: the positions of ``joints[0]`` come first, then ``joints[1]``, ...

    .. math:: p(x) = \prod_b p_b(x_{B_b}), \qquad H(X) = \sum_b H(X_{B_b}).

    Parameters
    ----------
    *joints : Joint
        At least one, all with the same ``K`` and ``lost == 0``.
    """
    if not joints:
        raise ValueError("joints: pass at least one Joint")
    for i, p in enumerate(joints):
        if not isinstance(p, Joint):
            raise ValueError(f"joints: argument {i} is a {type(p).__name__}, expected a Joint")
        if p.lost != 0:
            raise ValueError(f"joints: argument {i} is sub-normalized (lost={p.lost:.3g}); blocks needs data laws")
    K = joints[0].K
    if any(p.K != K for p in joints):
        raise ValueError(f"joints: all blocks must share K, got K = {[p.K for p in joints]}")
    _check_size(K, sum(p.d for p in joints), "joints")
    return Joint(_outer_all([p.table for p in joints]))


# -- Markov chains ------------------------------------------------------------------------
def _closed_classes(P: np.ndarray) -> list[np.ndarray]:
    """Closed communicating classes of the support graph of P (as index arrays)."""
    K = P.shape[0]
    reach = (P > 0) | np.eye(K, dtype=bool)
    for _ in range(max(1, int(np.ceil(np.log2(K))))):
        reach = reach | ((reach.astype(np.int64) @ reach.astype(np.int64)) > 0)
    classes, seen = [], set()
    for i in range(K):
        if i in seen:
            continue
        cls = np.flatnonzero(reach[i] & reach[:, i])
        seen.update(cls.tolist())
        if np.array_equal(np.flatnonzero(reach[i]), cls):
            classes.append(cls)
    return classes


def _gth_stationary(P: np.ndarray) -> np.ndarray:
    """Stationary law of an irreducible stochastic matrix (Grassmann-Taksar-Heyman).

    Subtraction-free state reduction, so the result is non-negative and accurate to
    machine precision (Grassmann, Taksar & Heyman 1985, Oper. Res. 33(5)).
    """
    A = np.array(P, dtype=np.float64)
    n = A.shape[0]
    for k in range(n - 1, 0, -1):
        s = A[k, :k].sum()
        A[:k, k] /= s
        A[:k, :k] += np.outer(A[:k, k], A[k, :k])
    pi = np.zeros(n)
    pi[0] = 1.0
    for k in range(1, n):
        pi[k] = pi[:k] @ A[:k, k]
    return pi / pi.sum()


def stationary_distribution(transition) -> np.ndarray:
    r"""The unique stationary law :math:`\pi = \pi P` of a row-stochastic matrix.

    Raises ``ValueError`` when it is not unique (more than one closed communicating class).
    Transient states get probability exactly 0.
    """
    P = check_transition(transition)
    classes = _closed_classes(P)
    if len(classes) != 1:
        raise ValueError(
            f"transition: the stationary law is not unique ({len(classes)} closed classes "
            f"{[c.tolist() for c in classes]}); pass `initial` explicitly"
        )
    cls = classes[0]
    pi = np.zeros(P.shape[0])
    pi[cls] = _gth_stationary(P[np.ix_(cls, cls)])
    return pi


def _initial_law(P: np.ndarray, initial) -> np.ndarray:
    if initial is None:
        return stationary_distribution(P)
    pi = _distributions(initial, "initial", 1, "(K,)")
    if pi.shape[0] != P.shape[0]:
        raise ValueError(f"initial: has length {pi.shape[0]} but transition is {P.shape[0]} x {P.shape[0]}")
    return pi


def markov_chain(transition, d: int, initial=None) -> Joint:
    r"""Markov chain :math:`X_1 \to X_2 \to \dots \to X_d`.

    .. math:: p(x) = \pi(x_1) \prod_{i=1}^{d-1} P(x_i, x_{i+1}).

    Parameters
    ----------
    transition : array_like, shape ``(K, K)``
        Row-stochastic :math:`P(a, b) = \Pr(X_{i+1} = b \mid X_i = a)`.
    d : int, >= 1
    initial : array_like, shape ``(K,)``, optional
        Law :math:`\pi` of :math:`X_1`. Default: the stationary law of ``transition``
        (then every :math:`X_i \sim \pi`); it must then be unique, else pass ``initial``.
        A non-stationary ``initial`` is accepted: the result is then a (non-stationary)
        Markov chain with :math:`X_i \sim \pi P^{i-1}`.
    """
    P = check_transition(transition)
    d = _int_arg(d, "d", 1)
    pi = _initial_law(P, initial)
    _check_size(P.shape[0], d)
    table = pi
    for _ in range(d - 1):
        table = table[..., None] * P
    return Joint(table)


def _entropy_rows(M: np.ndarray) -> np.ndarray:
    """Entropy (nats) of each row of a row-stochastic matrix."""
    return entr(M).sum(axis=-1)


def _gap_weights(d: int, m: int) -> np.ndarray:
    r"""Mean number of consecutive pairs at gap g = 1 .. d-m+1 in a uniform m-subset of [d].

    .. math:: w_g = \frac{(d-g)\binom{d-g-1}{m-2}}{\binom{d}{m}}, \qquad
              w_1 = \frac{m(m-1)}{d}, \qquad \frac{w_{g+1}}{w_g} = \frac{d-g-m+1}{d-g},

    evaluated by the ratio recurrence (a cumulative product of numbers in [0, 1]): it keeps
    full relative precision for d in the thousands, where differences of log-binomials
    (``gammaln``) lose about 4 digits. Negligible tail terms may underflow to 0.
    """
    g = np.arange(1, d - m + 1, dtype=np.float64)
    with np.errstate(under="ignore"):
        tail = np.cumprod((d - g - m + 1) / (d - g))
    return (m * (m - 1) / d) * np.concatenate([[1.0], tail])


def markov_chain_entropy_coefficients(transition, d: int, initial=None) -> np.ndarray:
    r"""Entropy coefficients :math:`e_m = \binom{d}{m}^{-1}\sum_{|S|=m} H(X_S)` of a stationary chain.

    Restricted to :math:`S = \{s_1 < \dots < s_m\}` a stationary chain is again a Markov
    chain, so :math:`H(X_S) = H(\pi) + \sum_k h_{s_{k+1}-s_k}` with
    :math:`h_g = H(X_g \mid X_0) = \sum_a \pi_a H(P^g(a, \cdot))`. A pair at gap g is
    consecutive in :math:`(d-g)\binom{d-g-1}{m-2}` of the m-subsets, hence

    .. math:: e_0 = 0, \quad e_1 = H(\pi), \quad
              e_m = H(\pi) + \sum_{g=1}^{d-m+1} \frac{(d-g)\binom{d-g-1}{m-2}}{\binom{d}{m}}\, h_g
              \quad (m \ge 2),

    computed in :math:`O(d^2 + dK^3)` time and :math:`O(d)` memory without the
    :math:`K^d` table (weights by a ratio recurrence, see :func:`_gap_weights`). In
    particular :math:`e_d = H(\pi) + (d-1) h_1`, and the information profile is
    :math:`f(i) = e_{i+1} - e_i` (docs/design.md §2).

    Parameters
    ----------
    transition : array_like, shape ``(K, K)``
        Row-stochastic matrix.
    d : int, >= 1
        Chain length (thousands are fine).
    initial : array_like, shape ``(K,)``, optional
        Must be stationary (:math:`\|\pi P - \pi\|_1 \le 10^{-9}`); default the unique
        stationary law of ``transition``.

    Returns
    -------
    numpy.ndarray, shape ``(d + 1,)``, float64
        :math:`e_0, \dots, e_d` in nats.
    """
    P = check_transition(transition)
    d = _int_arg(d, "d", 1)
    pi = _initial_law(P, initial)
    drift = float(np.abs(pi @ P - pi).sum())
    if drift > NORMALIZATION_TOL:
        raise ValueError(
            f"initial: not stationary for transition (||initial P - initial||_1 = {drift:.3g}); "
            "the gap formula needs a stationary chain: pass a stationary law or omit initial, "
            "or build markov_chain(...) and use the exact profile"
        )
    h = np.empty(max(d - 1, 0))  # h[g-1] = H(X_g | X_0)
    Pg = np.eye(P.shape[0])
    for g in range(1, d):
        Pg = Pg @ P
        h[g - 1] = pi @ _entropy_rows(Pg)
    H_pi = float(entr(pi).sum())

    e = np.zeros(d + 1)
    e[1] = H_pi
    for m in range(2, d + 1):
        e[m] = H_pi + _gap_weights(d, m) @ h[: d - m + 1]
    return e


# -- noise, mixtures, Ising ---------------------------------------------------------------
def noisy_repeated_bit(d: int, eps: float) -> Joint:
    r"""A fair bit observed d times through independent binary symmetric channels.

    :math:`B \sim \mathrm{Ber}(1/2)`, :math:`X_i = B \oplus N_i`, :math:`N_i` iid
    :math:`\mathrm{Ber}(\varepsilon)`:

    .. math:: p(x) = \tfrac12 \prod_i \varepsilon^{x_i}(1-\varepsilon)^{1-x_i}
                   + \tfrac12 \prod_i \varepsilon^{1-x_i}(1-\varepsilon)^{x_i}.

    ``eps = 0`` is :func:`repeated` (d copies), ``eps = 1/2`` is uniform on :math:`\{0,1\}^d`.

    Parameters
    ----------
    d : int, >= 1
    eps : float in ``[0, 1/2]``
    """
    d = _int_arg(d, "d", 1)
    eps = _real_arg(eps, "eps")
    if not 0.0 <= eps <= 0.5:
        raise ValueError(f"eps: the flip probability must lie in [0, 1/2], got {eps} (use 1 - eps above 1/2)")
    _check_size(2, d)
    given_0 = np.tile([1.0 - eps, eps], (d, 1))
    return mixture_of_products([0.5, 0.5], np.stack([given_0, given_0[:, ::-1]]))


def mixture_of_products(weights, marginals) -> Joint:
    r"""Finite mixture of product laws (a latent class model).

    .. math:: p(x) = \sum_{c=1}^{M} w_c \prod_{i=1}^{d} m_{c,i}(x_i).

    Parameters
    ----------
    weights : array_like, shape ``(M,)``
        Mixture weights, a probability vector (M >= 1).
    marginals : array_like, shape ``(M, d, K)``
        ``marginals[c, i]`` is the law of :math:`X_i` in component c.
    """
    w = _distributions(weights, "weights", 1, "(M,)", min_k=1)
    m = _distributions(marginals, "marginals", 3, "(M, d, K), last axis distributions")
    M, d, K = m.shape
    if M != w.shape[0]:
        raise ValueError(f"marginals: has {M} components but weights has {w.shape[0]}; they must agree")
    if d < 1:
        raise ValueError("marginals: needs d >= 1 positions (shape (M, d, K))")
    _check_size(K, d, "marginals")
    table = np.zeros((K,) * d)
    for wc, mc in zip(w, m):
        table += wc * _outer_all(list(mc))
    return Joint(table)


def ising_chain(d: int, coupling: float, field: float = 0.0) -> Joint:
    r"""Open-boundary Ising chain on binary tokens, spins :math:`s_i = 2x_i - 1`.

    .. math:: p(x) = \frac{1}{Z} \exp\Big(J \sum_{i=1}^{d-1} s_i s_{i+1} + h \sum_{i=1}^{d} s_i\Big).

    The log-weights are shifted by their maximum before exponentiating, so large
    :math:`|J|, |h|` are safe.

    Parameters
    ----------
    d : int, >= 1
    coupling : float
        :math:`J` (> 0 ferromagnetic).
    field : float
        :math:`h` (> 0 favours token 1).
    """
    d = _int_arg(d, "d", 1)
    J = _real_arg(coupling, "coupling")
    h = _real_arg(field, "field")
    _check_size(2, d)
    s = 2.0 * np.indices((2,) * d) - 1.0
    # log-weights over M = max(|J|, |h|): M * (u - max u) never overflows (M * 0 = 0 at the
    # mode, -inf -> weight 0 elsewhere), so any finite J, h gives a finite table
    M = max(abs(J), abs(h))
    if M == 0.0:
        return Joint(np.full((2,) * d, 2.0**-d))
    u = (h / M) * s.sum(axis=0)
    if d > 1:
        u = u + (J / M) * (s[:-1] * s[1:]).sum(axis=0)
    with np.errstate(over="ignore"):
        w = np.exp(M * (u - u.max()))
    return Joint(w / w.sum())


# -- random and data-driven laws ----------------------------------------------------------
def dirichlet(d: int, K: int = 2, alpha: float = 1.0, seed: int = 0) -> Joint:
    r"""A random law: the table is one draw from a symmetric Dirichlet over :math:`K^d` outcomes.

    .. math:: (p(x))_{x \in [K]^d} \sim \mathrm{Dirichlet}(\alpha, \dots, \alpha).

    ``alpha = 1`` is uniform on the simplex; small ``alpha`` gives sparse, strongly
    dependent laws. Reproducible: the same ``seed`` gives the same table.

    Parameters
    ----------
    d : int, >= 1
    K : int, >= 2
    alpha : float, > 0
    seed : int, >= 0
        Seed of ``numpy.random.default_rng`` (no global RNG state is used).
    """
    d = _int_arg(d, "d", 1)
    K = _int_arg(K, "K", 2)
    alpha = _real_arg(alpha, "alpha")
    if alpha <= 0:
        raise ValueError(f"alpha: the Dirichlet concentration must be > 0, got {alpha}")
    seed = _int_arg(seed, "seed", 0)
    _check_size(K, d)
    table = np.random.default_rng(seed).dirichlet(np.full(K**d, alpha))
    if not np.all(np.isfinite(table)):  # every gamma draw underflowed (alpha far below 1)
        raise ValueError(f"alpha: {alpha} is too small to sample in float64; use a larger alpha")
    return Joint(table.reshape((K,) * d))


def empirical(sequences, K: int | None = None) -> Joint:
    r"""Empirical law of n observed sequences.

    .. math:: p(x) = \frac{1}{n} \#\{t : x^{(t)} = x\}.

    Parameters
    ----------
    sequences : array_like of int, shape ``(n, d)``
        Tokens in ``0 .. K-1``; integral floats are accepted, other values are errors.
    K : int, optional
        Alphabet size; default ``max(token) + 1`` and at least 2.
    """
    seq = samples_array(sequences, "sequences", integral_floats=True)
    n, d = seq.shape
    if seq.min() < 0:
        raise ValueError(f"sequences: tokens must be >= 0, found {seq.min()}")
    top = int(seq.max())
    K = max(top + 1, 2) if K is None else _int_arg(K, "K", 2)
    if top >= K:
        raise ValueError(f"sequences: token {top} is outside 0..{K - 1}; pass K >= {top + 1}")
    _check_size(K, d, "sequences")
    flat = np.ravel_multi_index(tuple(seq.T.astype(np.intp)), (K,) * d)
    return Joint((np.bincount(flat, minlength=K**d) / n).reshape((K,) * d))


def sampler_laws(d: int) -> dict[str, Joint]:
    r"""Four binary laws of length d with different kinds of dependence, the set the sampler
    examples compare (``examples/sample_then_select.py``, ``revision.py``,
    ``random_sizes.py``): a sticky Markov chain (stay 0.9), an Ising chain (J = 0.8), a
    Dirichlet(0.5) table (seed 0) and a noisy repeated bit (flip 0.1).

    >>> sorted(sampler_laws(3))[0]
    'dirichlet (alpha 0.5)'
    """
    return {
        "markov chain (stay 0.9)": markov_chain([[0.9, 0.1], [0.1, 0.9]], d),
        "ising chain (J = 0.8)": ising_chain(d, 0.8),
        "dirichlet (alpha 0.5)": dirichlet(d, 2, alpha=0.5, seed=0),
        "noisy repeated bit (0.1)": noisy_repeated_bit(d, 0.1),
    }
