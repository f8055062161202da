r"""W26 §4.3: the dyadic estimator of the unmasking growth complexity :math:`H(a, b)`.

Notation of docs/theory.md §3 and §5 (W26 = Wainwright 2026, *The data geometry of masking
diffusion*, §4). :math:`\psi(t) = t/(1-t)` are the reveal odds,
:math:`h(t) = \sum_i \mathbb E\, I(X_i; X_{A_{i,t}})` the gain polynomial, and the UGC of
an interval :math:`0 < a < b < 1` is

.. math::

    H(a, b) = \int_a^b t(1-t)\, h'(t)\, dt

(docs/theory.md writes :math:`H(p, q)`; here the endpoints are ``a, b`` because ``p`` is the
law, as everywhere in the package). :math:`H(a, b)` itself is :func:`mdmtheory.information.ugc.ugc`.

**Dyadic grid.** :math:`a = v_0 < v_1 < \dots < v_J = b` with
:math:`\psi(v_j) = \min\{2^j \psi(a), \psi(b)\}`, :math:`J = \lceil \log_2(\psi(b)/\psi(a))
\rceil`: every interval doubles the reveal odds, except the last one, which is *partial*
(:math:`\psi(v_J)/\psi(v_{J-1}) \in (1, 2]`).

**How the estimator is read here (the coupling).** One clean sample :math:`X \sim p` and
one vector :math:`U \in (0,1)^d` of iid uniform reveal times; position k is revealed at
time v iff :math:`U_k \le v`. :math:`X_{v|i}` is the partially masked sequence at time v
with position i *forced masked*: the revealed set is
:math:`A_i(v) = \{k \ne i : U_k \le v\}`. The same U serves every i and every grid time
(one coupled reveal trajectory per sample), so :math:`A_i(v_j) \subseteq A_i(v_{j+1})`.
With :math:`\mu_i(\cdot, x_A) = p(x_i = \cdot \mid x_A)` the *exact* conditional of
position i given the revealed tokens,

.. math::

    Q = \sum_{j=0}^{J-1} w_j \sum_{i=1}^{d}
        \mathrm{KL}\bigl(\mu_i(\cdot, X_{v_{j+1}|i}) \,\big\|\, \mu_i(\cdot, X_{v_j|i})\bigr).

Its expectation is, per interval and position, a conditional mutual information:

.. math::

    \mathbb E\, \mathrm{KL}\bigl(\mu_i(\cdot, X_{A'}) \,\|\, \mu_i(\cdot, X_A)\bigr)
    = I(X_i; X_{A' \setminus A} \mid X_A), \qquad
    \mathbb E\, Q = \sum_j w_j \bigl(h(v_{j+1}) - h(v_j)\bigr).

**Weights.** W26 §4.3.2, eq. (32c) states :math:`w_j = v_{j+1} - v_j`
and claims :math:`\mathbb E Q \le H(a, b) \le 2\,\mathbb E Q` for arbitrary
:math:`0 < a < b < 1`. The lower half always holds; the upper half fails on the last,
partial interval (docs/theory.md §5; e.g. ``a = 0.3, b = 0.31``: one partial interval,
where :math:`H / \mathbb E Q \approx 21`). The corrected weights
:math:`w_j = v_j (1 - v_{j+1})` satisfy :math:`\mathbb E Q' \le H(a, b) \le 2\,\mathbb E Q'`
for every :math:`0 < a < b < 1`; on full dyadic intervals the two weights coincide.
W26's Proposition 2(A) (§4.3.2, its proof eq. 55a) and Theorem 2 (§4.4.1) use (32c) and inherit the gap: with the corrected
weights their :math:`(q - p) B_\alpha` becomes :math:`(\sum_j w_j) B_\alpha`.
Proof: proofs/dyadic_weights.md (tests/proofs/test_dyadic_weights.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product as _iproduct
from typing import NamedTuple

import numpy as np
from scipy.special import rel_entr, xlogy

from .._estimate import Estimate, record_dict
from ..laws.joint import Joint, Marginals
from ..laws.oracles import as_oracle, loo_conditionals
from .._moved import renamed_keywords
from .._validate import float_array, int_arg, real_arg, samples_array
from ..schedules.odds import psi, psi_inverse  # noqa: F401 (public here too: the same functions)
from .ugc import gain

__all__ = ["check_oracle", 
    "WEIGHTS",
    "psi",
    "psi_inverse",
    "dyadic_grid",
    "dyadic_weights",
    "Lemma1",
    "w26_lemma1",
    "DyadicEstimate",
    "expected_dyadic_estimate",
    "dyadic_estimate",
    "MAX_EXACT_PAIRS",
    "FORMS",
    "dyadic_terms",
    "oracle_samples",
]

#: Per-sample forms of the estimator: W26's KL of conditionals, or the entropy difference.
FORMS = ("kl", "entropy")

#: The two weight conventions: W26's stated ``v_{j+1} - v_j`` and the corrected ``v_j (1 - v_{j+1})``.
WEIGHTS = ("stated", "corrected")
#: Largest ``d * 3**(d-1) * K**d`` (nested reveal-set pairs times table size) for the exact expectation.
MAX_EXACT_PAIRS = 1 << 24


def _check_interval(start, stop) -> tuple[float, float]:
    a, b = real_arg(start, "start"), real_arg(stop, "stop")
    if not (0.0 < a < b < 1.0):
        raise ValueError(
            f"start, stop: the dyadic grid needs 0 < start < stop < 1 (psi(0) = 0 never doubles, "
            f"psi(1) = inf), got start={a}, stop={b}"
        )
    return a, b


@renamed_keywords(a="start", b="stop")
def dyadic_grid(start: float, stop: float) -> np.ndarray:
    r"""The dyadic grid :math:`v_0 = a < \dots < v_J = b`, :math:`\psi(v_j) = \min\{2^j\psi(a), \psi(b)\}`.

    Parameters
    ----------
    start, stop : float
        The reveal times a and b, ``0 < a < b < 1``.

    Returns
    -------
    numpy.ndarray, shape ``(J + 1,)``
        The first and last entries are exactly ``a`` and ``b``. When
        :math:`2^J \psi(a)` equals :math:`\psi(b)` up to a relative 1e-12 (rounding), the
        last interval is taken as full (its odds ratio is then 2 within 1e-12).

    Examples
    --------
    >>> dyadic_grid(0.2, 0.8).round(4)   # psi: 0.25, 0.5, 1, 2, 4
    array([0.2   , 0.3333, 0.5   , 0.6667, 0.8   ])
    >>> dyadic_grid(0.3, 0.31).round(2)  # a single, partial interval
    array([0.3 , 0.31])
    """
    a, b = _check_interval(start, stop)
    pa, pb = float(psi(a)), float(psi(b))
    v = [a]
    s = pa
    # a doubling that lands on psi(b) up to rounding ends the grid at b (no sliver interval)
    while 2.0 * s < pb * (1.0 - 1e-12):
        s *= 2.0
        v.append(float(psi_inverse(s)))
    v.append(b)
    return np.array(v)


def dyadic_weights(grid, weights: str = "corrected") -> np.ndarray:
    r"""Weights :math:`w_j` of the dyadic estimator on a grid :math:`v_0 < \dots < v_J`.

    ``"stated"`` (W26 §4): :math:`w_j = v_{j+1} - v_j`. ``"corrected"``:
    :math:`w_j = v_j(1 - v_{j+1})`. They agree exactly when
    :math:`\psi(v_{j+1}) = 2\psi(v_j)` (a full dyadic interval).

    Examples
    --------
    >>> v = dyadic_grid(0.2, 0.8)
    >>> bool(np.allclose(dyadic_weights(v, "stated"), dyadic_weights(v, "corrected")))
    True
    """
    v = float_array(grid, "grid", what="(J+1,), increasing reveal times in [0, 1]")
    if v.ndim != 1 or v.shape[0] < 2 or np.any(np.diff(v) <= 0) or v[0] < 0 or v[-1] > 1:
        raise ValueError(f"grid: expected increasing reveal times in [0, 1], got {grid!r}")
    if not isinstance(weights, str):
        raise ValueError(f"weights: expected one of {WEIGHTS}, got {type(weights).__name__}")
    if weights == "stated":
        return np.diff(v)
    if weights == "corrected":
        return v[:-1] * (1.0 - v[1:])
    raise ValueError(f"weights: expected one of {WEIGHTS}, got {weights!r}")


class Lemma1(NamedTuple):
    r"""W26 Lemma 1 on one interval [a, b] (see :func:`w26_lemma1`).

    Attributes
    ----------
    lower : :math:`D/c = a(1-b)\,(h(b) - h(a))`
    upper : :math:`((1+c)/c)\,D = b(1-a)\,(h(b) - h(a))`
    D : :math:`(b - a)(h(b) - h(a))`
    c : :math:`\psi(b)/\psi(a) - 1`
    """

    lower: float
    upper: float
    D: float
    c: float

    def to_dict(self) -> dict:
        """Every field by name, JSON-ready (numpy arrays as lists, non-finite floats as strings)."""
        return record_dict(self)


@renamed_keywords(a="start", b="stop")
def w26_lemma1(p, start: float, stop: float) -> Lemma1:
    r"""W26 Lemma 1 (§4.3.1, eqs. 31a–b): :math:`D/c \le H(a, b) \le ((1+c)/c)\, D` for :math:`0 < a < b < 1`.

    With :math:`c = \psi(b)/\psi(a) - 1 = (b-a)/(a(1-b))` and
    :math:`D = (b-a)(h(b)-h(a))` the two sides are exactly
    :math:`a(1-b)(h(b)-h(a))` and :math:`b(1-a)(h(b)-h(a))`, computed in that form (no
    division by a small c). :math:`H(a, b)` is :func:`mdmtheory.information.ugc.ugc`.
    Proof: proofs/w26_lemma1.md (tests/proofs/test_w26_lemma1.py).

    Parameters
    ----------
    p : Joint or Profile
    start, stop : float
        a and b, ``0 < a < b < 1``.

    Examples
    --------
    >>> import mdmtheory as mt
    >>> p = mt.families.repeated(3)
    >>> lem = w26_lemma1(p, 0.2, 0.6)
    >>> bool(lem.lower <= mt.information.ugc.ugc(p, 0.2, 0.6) <= lem.upper)
    True
    """
    a, b = _check_interval(start, stop)
    ha, hb = (float(x) for x in gain(p, np.array([a, b])))
    dh = hb - ha
    # c overflows to inf when a (1 - b) is below the float64 range (a = 1e-308, b = 1 - 1e-16)
    with np.errstate(over="ignore", divide="ignore"):
        c = float(np.float64(b - a) / np.float64(a) / np.float64(1.0 - b))
    return Lemma1(lower=a * (1.0 - b) * dh, upper=b * (1.0 - a) * dh, D=(b - a) * dh, c=c)


@dataclass(frozen=True)
class DyadicEstimate(Estimate):
    r"""A Monte Carlo dyadic estimate of :math:`H(a, b)` (see the module docstring).

    Attributes
    ----------
    values : numpy.ndarray, shape (n,)
        :math:`Q` of each clean sample (one coupled reveal trajectory each).
    grid : numpy.ndarray
        The dyadic grid :math:`v_0 < \dots < v_J`.
    weights : numpy.ndarray
        :math:`w_0, \dots, w_{J-1}`.
    kind : str
        ``"stated"`` or ``"corrected"``.
    """

    values: np.ndarray
    grid: np.ndarray
    weights: np.ndarray
    kind: str

    point = "mean"

    @property
    def n(self) -> int:
        return int(self.values.shape[0])

    @property
    def mean(self) -> float:
        """Sample mean of Q (an unbiased estimate of :math:`\\mathbb E Q`)."""
        return float(self.values.mean())

    @property
    def stderr(self) -> float:
        """Standard error of the mean, ``std(ddof=1) / sqrt(n)``."""
        return float(self.values.std(ddof=1) / np.sqrt(self.n))


def _check_law(p) -> Joint:
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
    if p.lost:
        raise ValueError(f"p: has lost mass {p.lost:.3g}; the estimator needs a normalized data law")
    return p


@renamed_keywords(a="start", b="stop")
def expected_dyadic_estimate(p: Joint, start: float, stop: float, *, weights: str = "corrected") -> float:
    r"""Exact :math:`\mathbb E Q` by enumerating the nested reveal sets.

    For each position i and interval j, every pair :math:`A \subseteq A' \subseteq
    [d]\setminus\{i\}` has probability
    :math:`v_j^{|A|} (v_{j+1} - v_j)^{|A' \setminus A|} (1 - v_{j+1})^{d-1-|A'|}` under the
    coupling, and the expected KL of the two conditionals of position i is computed from
    the conditional tables directly,

    .. math::

        \mathbb E_x \mathrm{KL}\bigl(p(\cdot \mid x_{A'}) \,\|\, p(\cdot \mid x_A)\bigr)
        = \sum_{x_{A'}} p(x_{A'}) \sum_{v} p(v \mid x_{A'})
          \log \frac{p(v \mid x_{A'})}{p(v \mid x_A)}

    (``rel_entr`` on the conditionals, no entropy differences, no products of small masses).
    Cost :math:`d\,3^{d-1}` table passes.

    Parameters
    ----------
    p : Joint
        The data law (normalized).
    start, stop : float
        a and b, ``0 < a < b < 1``.
    weights : {"corrected", "stated"}

    Returns
    -------
    float
        :math:`\mathbb E Q` in nats.

    Examples
    --------
    >>> import mdmtheory as mt
    >>> p = mt.families.repeated(3)
    >>> eq = expected_dyadic_estimate(p, 0.2, 0.8)
    >>> bool(eq <= mt.information.ugc.ugc(p, 0.2, 0.8) <= 2 * eq)
    True
    """
    p = _check_law(p)
    a, b = _check_interval(start, stop)
    v = dyadic_grid(a, b)
    w = dyadic_weights(v, weights)
    d, K = p.d, p.K
    cost = d * 3 ** (d - 1) * K**d
    if cost > MAX_EXACT_PAIRS:
        raise ValueError(
            f"p: the exact expectation needs d*3**(d-1)*K**d = {cost} table entries, above "
            f"{MAX_EXACT_PAIRS}; use dyadic_estimate (Monte Carlo) for larger laws"
        )
    marg = Marginals(p.table)
    lo, hi = v[:-1], v[1:]
    total = np.zeros(w.shape[0])
    for i in range(d):
        others = [k for k in range(d) if k != i]
        bit_i = 1 << i
        # state of each other position: 0 = in A, 1 = in A' \ A, 2 = outside A'
        for states in _iproduct(range(3), repeat=d - 1):
            A = sum(1 << k for k, s in zip(others, states) if s == 0)
            Ap = sum(1 << k for k, s in zip(others, states) if s <= 1)
            n0 = states.count(0)
            n1 = states.count(1)
            prob = lo**n0 * (hi - lo) ** n1 * (1.0 - hi) ** (d - 1 - n0 - n1)
            if n1 == 0 or not np.any(prob):
                continue  # A' = A: the two conditionals coincide, KL = 0
            # sum_{x_{A'}} p(x_{A'}) KL(p(. | x_{A'}) || p(. | x_A)), conditionals by division
            # (never products of small masses: entries ~1e-200 would underflow)
            pAp, pA = marg(Ap), marg(A)
            big = np.divide(marg(Ap | bit_i), pAp, out=np.zeros(marg(Ap | bit_i).shape), where=pAp > 0)
            small = np.divide(marg(A | bit_i), pA, out=np.zeros(marg(A | bit_i).shape), where=pA > 0)
            total += prob * float(np.sum(pAp * rel_entr(big, small)))
    return float(np.dot(w, total))


def _conditional_rows(marg: Marginals, i: int, A: int, xs: np.ndarray) -> np.ndarray:
    """Rows p(x_i = . | x_A) for the samples ``xs`` (shape (m, d)), shape (m, K)."""
    d = xs.shape[1]
    arr = np.moveaxis(marg(A | (1 << i)), i, -1)
    idx = tuple(xs[:, k] if A >> k & 1 else np.zeros(xs.shape[0], dtype=np.intp) for k in range(d) if k != i)
    rows = arr[idx] if idx else np.broadcast_to(arr, (xs.shape[0], arr.shape[-1]))
    mass = rows.sum(axis=-1, keepdims=True)
    return rows / mass


def _check_samples(p: Joint, samples) -> np.ndarray:
    xs = samples_array(samples, "samples", d=p.d, K=p.K, min_rows=2, integral_floats=True, tokens="tokens").astype(np.intp)
    if np.any(p.table[tuple(xs.T)] <= 0):
        raise ValueError("samples: contain a sequence with p(x) = 0; clean samples must come from p")
    return xs


@renamed_keywords(a="start", b="stop")
def dyadic_estimate(
    p,
    start: float,
    stop: float,
    *,
    n: int = 1000,
    seed: int = 0,
    samples=None,
    weights: str = "corrected",
    form: str = "kl",
    batch: int = 256,
) -> DyadicEstimate:
    r"""Monte Carlo dyadic estimator :math:`Q` of :math:`H(a, b)` (W26 §4), from samples.

    ``p`` is a :class:`~mdmtheory.Joint` or any conditional oracle (an object with ``d``,
    ``K`` and ``conditionals(x, revealed)``; ``sample(n, rng)`` too when ``samples`` is
    None): :class:`~mdmtheory.laws.MixtureOfProductsLaw`,
    :class:`~mdmtheory.laws.HiddenMarkovLaw`,
    :class:`~mdmtheory.laws.MarkovChainLaw`, or a model through
    ``mdmtheory.bridge.ModelOracle`` (then the conditionals are the model's, and Q
    estimates the model's dyadic quantity). See :func:`dyadic_terms` for ``form``
    (``"kl"``: W26's per-sample KL; ``"entropy"``: the bounded form with the same mean,
    oracles only). For a Joint with ``form="kl"`` the original table-indexing path runs.

    Each clean sample gets one uniform vector U (the coupled reveal trajectory of the module
    docstring); :math:`Q` sums, over the dyadic intervals and the positions, the KL between
    the exact conditionals :math:`p(x_i \mid x_{A_i(v_{j+1})})` and
    :math:`p(x_i \mid x_{A_i(v_j)})`.

    Parameters
    ----------
    p : Joint
        The data law; supplies the conditionals (and the samples when ``samples`` is None).
    start, stop : float
        a and b, ``0 < a < b < 1``.
    n : int
        Number of clean samples drawn from p when ``samples`` is None.
    seed : int
        Seed of ``numpy.random.default_rng`` for the samples (when drawn) and U.
    samples : array_like of int, shape ``(n, d)``, optional
        Clean samples; each must have p(x) > 0.
    weights : {"corrected", "stated"}

    form : {"kl", "entropy"}
    batch : int
        Samples per call of the oracle (oracle path).

    Returns
    -------
    DyadicEstimate

    Examples
    --------
    >>> import mdmtheory as mt
    >>> p = mt.families.markov_chain([[0.9, 0.1], [0.2, 0.8]], d=4)
    >>> est = dyadic_estimate(p, 0.1, 0.9, n=4000, seed=1)
    >>> exact = expected_dyadic_estimate(p, 0.1, 0.9)
    >>> bool(abs(est.mean - exact) < 5 * est.stderr)
    True
    >>> law = mt.laws.MarkovChainLaw([[0.9, 0.1], [0.2, 0.8]], d=4)
    >>> est = dyadic_estimate(law, 0.1, 0.9, n=4000, seed=1, form="entropy")
    >>> bool(abs(est.mean - exact) < 5 * est.stderr)
    True
    """
    if not isinstance(form, str) or form not in FORMS:
        raise ValueError(f"form: expected one of {FORMS}, got {form!r}")
    batch = int_arg(batch, "batch", 1, 1 << 24)
    if not isinstance(p, Joint) or form != "kl":
        return _oracle_estimate(p, start, stop, n=n, seed=seed, samples=samples, weights=weights, form=form,
                                batch=batch)
    p = _check_law(p)
    a, b = _check_interval(start, stop)
    seed = int_arg(seed, "seed", 0)
    rng = np.random.default_rng(seed)
    d, K = p.d, p.K
    if samples is None:
        n = int_arg(n, "n", 2, None, " (number of samples)")
        flat = p.table.ravel()
        idx = rng.choice(flat.shape[0], size=int(n), p=flat / flat.sum())
        xs = np.stack(np.unravel_index(idx, p.table.shape), axis=1).astype(np.intp)
    else:
        xs = _check_samples(p, samples)
    m = xs.shape[0]
    U = rng.random((m, d))
    v = dyadic_grid(a, b)
    w = dyadic_weights(v, weights)
    marg = Marginals(p.table)
    bits = 1 << np.arange(d)
    Q = np.zeros(m)
    for i in range(d):
        rows = []
        for vj in v:
            masks = ((U <= vj) * bits).sum(axis=1) & ~(1 << i)
            C = np.empty((m, K))
            for A in np.unique(masks):
                sel = masks == A
                C[sel] = _conditional_rows(marg, i, int(A), xs[sel])
            rows.append(C)
        for j in range(w.shape[0]):
            Q += w[j] * rel_entr(rows[j + 1], rows[j]).sum(axis=1)
    return DyadicEstimate(values=Q, grid=v, weights=w, kind=weights)


# -- any conditional oracle ---------------------------------------------------------------------
def _entropy_rows(c: np.ndarray) -> np.ndarray:
    return -np.sum(xlogy(c, c), axis=-1)


@renamed_keywords(law="p")
def dyadic_terms(p, xs: np.ndarray, U: np.ndarray, grid, *, form: str = "kl") -> tuple[np.ndarray, np.ndarray]:
    r"""Per-sample, per-interval dyadic terms :math:`\sum_i T_{ij}` and the reveal counts.

    With :math:`C_j = ` :func:`~mdmtheory.laws.loo_conditionals` at the reveal set
    :math:`\{k : U_k \le v_j\}` (row i is :math:`\mu_i(\cdot, X_{v_j|i})`):

    * ``form="kl"`` (W26 §4): :math:`T_{ij} = \mathrm{KL}(C_{j+1,i} \,\|\, C_{j,i})`;
    * ``form="entropy"``: :math:`T_{ij} = H(C_{j,i}) - H(C_{j+1,i})`. With exact
      conditionals its expectation is the same conditional mutual information
      :math:`I(X_i; X_{B} \mid X_A) = H(X_i \mid X_A) - H(X_i \mid X_{A'})` (docs/theory.md §5),
      and each term lies in :math:`[-\log K, \log K]`, so Q is bounded *surely* — what the
      empirical-Bernstein radius needs, with no truncation. (Our addition, not W26's.)

    Returns ``(T, counts)``: T of shape (n, J) (summed over positions i) and counts (n, J)
    of positions revealed inside each interval (:math:`|\{k : v_j < U_k \le v_{j+1}\}|`).
    """
    if not isinstance(form, str) or form not in FORMS:
        raise ValueError(f"form: expected one of {FORMS}, got {form!r}")
    p = _oracle_arg(p)
    xs = samples_array(xs, "xs", d=p.d, K=p.K, tokens="tokens")
    U = float_array(U, "U", ndim=2, what=f"(n={xs.shape[0]}, d={p.d}) uniforms")
    if U.shape != xs.shape or np.any(U < 0) or np.any(U > 1):
        raise ValueError(f"U: expected {xs.shape} uniforms in [0, 1] (one per sample and position), got {U.shape}")
    v = float_array(grid, "grid", ndim=1, what="(J + 1,) increasing reveal times in [0, 1]")
    if v.size < 2 or v.size > (1 << 16) or np.any(np.diff(v) <= 0) or v[0] < 0 or v[-1] > 1:
        raise ValueError(f"grid: expected 2..65536 increasing reveal times in [0, 1], got {v.size}")
    prev = None
    T = np.zeros((xs.shape[0], v.shape[0] - 1))
    for j, vj in enumerate(v):
        C = loo_conditionals(p, xs, U <= vj)
        if prev is not None:
            if form == "kl":
                T[:, j - 1] = rel_entr(C, prev).sum(axis=(1, 2))
            else:
                T[:, j - 1] = (_entropy_rows(prev) - _entropy_rows(C)).sum(axis=1)
        prev = C
    counts = np.stack([((U > lo) & (U <= hi)).sum(axis=1) for lo, hi in zip(v[:-1], v[1:])], axis=1)
    return T, counts


def _oracle_arg(p):
    """``p`` as a conditional oracle (a Joint through :func:`as_oracle`, unchecked for lost mass:
    :func:`check_oracle` checks that), or a ValueError naming ``p``."""
    if isinstance(p, Joint):
        p = as_oracle(p)
    if not all(hasattr(p, a) for a in ("d", "K", "conditionals")):
        raise ValueError(f"p: expected a conditional oracle (d, K, conditionals) or a Joint, got {type(p).__name__}")
    return p


def check_oracle(p, name: str = "law"):
    """A conditional oracle from ``p``: a :class:`~mdmtheory.Joint` (checked, wrapped by
    :func:`~mdmtheory.laws.oracles.as_oracle`) or an object with ``d``, ``K`` and
    ``conditionals``; a ValueError naming ``name`` (the caller's argument) otherwise."""
    if isinstance(p, Joint):
        _check_law(p)
        return as_oracle(p)
    if not all(hasattr(p, a) for a in ("d", "K", "conditionals")):
        raise ValueError(
            f"{name}: expected a mdmtheory.Joint or a conditional oracle (d, K, conditionals(x, revealed)), "
            f"got {type(p).__name__}"
        )
    return p


@renamed_keywords(law="p")
def oracle_samples(p, samples, n, rng: np.random.Generator) -> np.ndarray:
    """Validated clean samples (n, d): the given ones, or n drawn by ``p.sample(n, rng)``."""
    p = _oracle_arg(p)
    d, K = int_arg(p.d, "p", 1, hint=" (its d)"), int_arg(p.K, "p", 2, hint=" (its K)")
    if samples is None:
        n = int_arg(n, "n", 2)
        if not hasattr(p, "sample"):
            raise ValueError("samples: this oracle cannot sample (no .sample); pass clean samples (n, d)")
        return np.asarray(p.sample(n, rng), dtype=np.intp)
    xs = samples_array(samples, "samples", d=d, K=K, min_rows=2, integral_floats=True, tokens="tokens").astype(np.intp)
    if hasattr(p, "log_marginal") and np.any(np.isneginf(p.log_marginal(xs, np.ones(xs.shape, bool)))):
        raise ValueError("samples: contain a sequence with p(x) = 0; clean samples must come from p")
    return xs


def _oracle_estimate(law, start, stop, *, n, seed, samples, weights, form, batch) -> DyadicEstimate:
    law = check_oracle(law, "p")
    a, b = _check_interval(start, stop)
    seed = int_arg(seed, "seed", 0)
    batch = int_arg(batch, "batch", 1)
    rng = np.random.default_rng(seed)
    xs = oracle_samples(law, samples, n, rng)
    U = rng.random(xs.shape)
    v = dyadic_grid(a, b)
    w = dyadic_weights(v, weights)
    Q = np.empty(xs.shape[0])
    for s in range(0, xs.shape[0], batch):
        T, _ = dyadic_terms(law, xs[s : s + batch], U[s : s + batch], v, form=form)
        Q[s : s + batch] = T @ w
    return DyadicEstimate(values=Q, grid=v, weights=w, kind=weights)
