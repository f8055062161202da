r"""Symbolic (sympy) joints with parameters, exact information quantities, and derivations.

The same quantities as the numeric package, as exact sympy expressions:

* **Joints with parameters** — :class:`SymbolicJoint` holds a table of shape ``(K,)*d``
  whose entries are sympy expressions (symbols, rationals). Constructors:
  :func:`from_table` (any table), :func:`general_law` (one symbol per outcome),
  :func:`two_state_markov_chain`, :func:`noisy_repeated_bit`, :func:`repeated`,
  :func:`parity`, :func:`from_joint` (a numeric :class:`~mdmtheory.Joint`, exactly).
  :func:`substitute` fixes some parameters; :func:`to_joint` (or
  :meth:`SymbolicJoint.subs`) gives the numeric :class:`~mdmtheory.Joint`.
* **Exact quantities** — :func:`subset_entropies` (indexed by bitmask, bit j = position
  j, as :func:`mdmtheory.subset_entropies`), :func:`entropy_coefficients`,
  :func:`information_profile`, :func:`total_correlation`,
  :func:`dual_total_correlation`, :func:`path_kl` (profile identity), the gain polynomial
  :func:`gain` (Bernstein form), :func:`info`, the UGC :func:`ugc`, :func:`ugc_card`,
  :func:`gamma_umask`. Substituting rationals and evaluating (:func:`to_float`) agrees
  with the numeric JAX results to float64 precision.
* **Derivations** (functions returning sympy expressions; each docstring states the
  result): :func:`repeated_symbol_closed_forms`, :func:`parity_closed_forms` and
  :func:`markov_chain_closed_forms` for a symbolic number of positions d (docs/theory.md §6);
  :func:`square_root_rule` (Euler–Lagrange solution of the continuum schedule problem)
  and :func:`power_law_schedule` (the geometric schedule of a :math:`1/s` profile);
  :func:`riemann_bound_certificate` (the Riemann bound by telescoping, docs/theory.md §2).

All logs are natural. Entropy terms are :math:`-q \log q` over the entries of a marginal
that are not identically zero; at a parameter value where an entry vanishes (a boundary
such as ``eps = 0``) substitute into the *joint* first (:func:`substitute`), not into the
finished expression (which would give ``0 * log 0 = nan``; :func:`to_float` refuses it).

Symbols used by the results (substitute into them): :data:`TIME` (t), :data:`D_SYMBOL`
(d), :data:`M_SYMBOL` (m), :data:`LAMBDA_SYMBOL` (log reveal odds), :data:`S_SYMBOL`
(tokens revealed), :data:`STEPS_SYMBOL` (T), :data:`TAU_SYMBOL` (step index).

Families with structure (exchangeable laws, stationary chains) compute entropies from
their closed-form rules instead of marginalizing the table, so they work for larger d
(the tests check the rule against the table).
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Mapping, NamedTuple

import numpy as np
import sympy as sp
from sympy.calculus.euler import euler_equations

from ._estimate import Record, record_dict
from .information.profile import Profile
from .laws.joint import Joint, NORMALIZATION_TOL, positions_to_mask
from .schedules.plans import check_schedule, Grid, Schedule
from ._moved import renamed_keywords
from ._validate import int_arg as _int_arg, MAX_NDIM

__all__ = [
    # joints
    "SymbolicJoint",
    "MAX_SYMBOLIC_OUTCOMES",
    "TIME",
    "from_table",
    "from_joint",
    "general_law",
    "two_state_markov_chain",
    "noisy_repeated_bit",
    "repeated",
    "parity",
    "substitute",
    "to_joint",
    "to_float",
    # quantities
    "subset_entropy",
    "subset_entropies",
    "entropy",
    "entropy_coefficients",
    "information_profile",
    "sum_of_entropies",
    "total_correlation",
    "dual_total_correlation",
    "sum_mutual_information",
    "tse_complexity",
    "card_gain_coefficients",
    "step_path_kl",
    "path_kl",
    "gain",
    "info",
    "ugc",
    "ugc_card",
    "gamma_umask",
    # derivations
    "D_SYMBOL",
    "M_SYMBOL",
    "LAMBDA_SYMBOL",
    "S_SYMBOL",
    "STEPS_SYMBOL",
    "TAU_SYMBOL",
    "ClosedForms",
    "repeated_symbol_closed_forms",
    "parity_closed_forms",
    "markov_chain_closed_forms",
    "bernstein_sum",
    "ContinuumSchedule",
    "square_root_rule",
    "continuum_path_kl",
    "continuum_steps",
    "PowerLawSchedule",
    "power_law_schedule",
    "RiemannCertificate",
    "riemann_bound_certificate",
]

#: Largest table (K**d entries) a :class:`SymbolicJoint` materializes. Structured families
#: compute entropies from their rules without the table, so they may be larger.
MAX_SYMBOLIC_OUTCOMES = 1 << 14

#: The reveal time t of the Bernoulli sampler; default variable of :func:`gain`/:func:`info`.
TIME = sp.Symbol("t", real=True)


# ======================================================================================
# exact scalars
# ======================================================================================
def _symbol(value, name: str) -> sp.Symbol:
    """A sympy Symbol (a variable of integration)."""
    if not isinstance(value, sp.Symbol):
        raise ValueError(f"{name}: expected a sympy Symbol, got {type(value).__name__}")
    return value


def _exact(value, name: str, *, allow_float: bool = True) -> sp.Expr:
    """A sympy expression; Python/numpy/sympy floats become the *exact* rational they hold.

    ``allow_float=False`` refuses floats (a table must be exact to be checked exactly).
    """
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected a number or sympy expression, got the bool {value!r}")
    if isinstance(value, Fraction):
        return sp.Rational(value.numerator, value.denominator)
    if isinstance(value, numbers.Integral):
        return sp.Integer(int(value))
    if isinstance(value, numbers.Real) and not isinstance(value, sp.Basic):
        if not allow_float:
            raise ValueError(
                f"{name}: got the float {value!r}; pass exact values (int, fractions.Fraction, "
                "sympy.Rational, symbols) or use symbolic.from_joint for a numeric table"
            )
        f = float(value)
        if not math.isfinite(f):
            raise ValueError(f"{name}: expected a finite number, got {value!r}")
        return sp.Rational(f)
    if isinstance(value, str):
        raise ValueError(f"{name}: got the string {value!r}; pass a sympy.Symbol or an exact number")
    if isinstance(value, (complex, np.complexfloating)):
        raise ValueError(f"{name}: expected a real number or sympy expression, got the complex {value!r}")
    try:
        expr = value if isinstance(value, sp.Basic) else sp.sympify(value, strict=True)
    except (sp.SympifyError, TypeError) as exc:
        raise ValueError(f"{name}: cannot be read as a sympy expression ({exc})") from None
    if not isinstance(expr, sp.Expr):
        raise ValueError(f"{name}: expected a scalar sympy expression, got {type(expr).__name__}")
    floats = expr.atoms(sp.Float)
    if floats:
        if not allow_float:
            raise ValueError(
                f"{name}: contains the float(s) {sorted(map(str, floats))}; pass exact rationals "
                "(sympy.Rational) or use symbolic.from_joint for a numeric table"
            )
        expr = expr.xreplace({f: sp.Rational(f) for f in floats})
    if expr.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        raise ValueError(f"{name}: contains nan or an infinity ({expr})")
    return expr


def _parameter(value, name: str) -> sp.Expr:
    """A family parameter: a string becomes a positive Symbol of that name."""
    if isinstance(value, str):
        if not value:
            raise ValueError(f"{name}: the empty string is not a symbol name")
        return sp.Symbol(value, positive=True)
    return _exact(value, name)


def _check_interval(expr: sp.Expr, name: str, lo, hi, *, open_lo: bool = False) -> None:
    """Refuse a value decidably outside [lo, hi] (or (lo, hi]); symbols pass when undecidable."""
    if expr.is_extended_real is False:
        raise ValueError(f"{name}: must be real, got {expr}")
    below = (expr <= lo) if open_lo else (expr < lo)
    if below is sp.true or (expr > hi) is sp.true:
        bracket = "(" if open_lo else "["
        raise ValueError(f"{name}: must lie in {bracket}{lo}, {hi}], got {expr}")


def _entropy_of(probabilities) -> sp.Expr:
    r""":math:`-\sum q \log q` over the entries that are not identically zero."""
    terms = []
    for q in probabilities:
        if q == 0 or q.is_zero is True:
            continue
        terms.append(-q * sp.log(q))
    return sp.Add(*terms)


# ======================================================================================
# the record
# ======================================================================================
class _Exchangeable(NamedTuple):
    """H(X_S) depends only on |S|: ``level(m)`` for m >= 1."""

    level: Callable[[int], sp.Expr]


class _StationaryChain(NamedTuple):
    """H(X_S) = H(pi) + sum of gap(g) over consecutive elements of S at gap g."""

    stationary_entropy: sp.Expr
    gap: Callable[[int], sp.Expr]


@dataclass(frozen=True, eq=False, init=False)
class SymbolicJoint(Record):
    r"""A law on :math:`[K]^d` whose table entries are sympy expressions.

    Parameters
    ----------
    table : array_like, shape ``(K,)*d``
        Nested lists / sympy Array / numpy object array of exact entries (int,
        ``fractions.Fraction``, ``sympy.Rational``, symbols and expressions). Floats are
        refused (use :func:`from_joint`). ``K >= 2``, ``d >= 1``,
        ``K**d <= MAX_SYMBOLIC_OUTCOMES``.
    name : str, keyword-only
        A label (families set their own).
    tol : number, keyword-only
        For a table without symbols: allowed :math:`|\sum p - 1|` (default 0: exact).

    Validation (where decidable): every entry real and not negative; the entries sum to
    1 (``sum - 1`` is reduced with ``cancel``, then ``simplify``; a provably non-zero
    remainder is an error, an undecidable one is accepted).

    Attributes
    ----------
    d, K : int
    parameters : tuple of sympy.Symbol
        Free symbols of the table, sorted by name.
    name : str
    table : sympy.ImmutableDenseNDimArray (property; built on first use for families)

    Examples
    --------
    >>> import sympy as sp
    >>> a, b = sp.symbols("a b", positive=True)
    >>> p = two_state_markov_chain(a, b, 3)
    >>> p.d, p.K, p.parameters
    (3, 2, (a, b))
    >>> to_joint(p, {a: sp.Rational(1, 5), b: sp.Rational(1, 3)}).d
    3
    """

    d: int
    K: int
    parameters: tuple
    name: str

    def __init__(self, table, *, name: str = "table", tol=0):
        tol = _exact(tol, "tol")
        if not (tol.is_number and tol >= 0):
            raise ValueError(f"tol: expected a number >= 0, got {tol}")
        arr = _validated_table(table, tol=tol)
        _fill(self, arr.ndim, arr.shape[0], arr, None, None, name, tol=tol)

    @property
    def table(self) -> sp.ImmutableDenseNDimArray:
        """The table as an immutable sympy Array of shape ``(K,)*d``."""
        key = "array"
        if key not in self._cache:
            self._cache[key] = sp.ImmutableDenseNDimArray(self._entries().tolist())
        return self._cache[key]

    def _entries(self) -> np.ndarray:
        """Read-only numpy object array of the entries (built lazily for families)."""
        if self._table is None:
            if self.K**self.d > MAX_SYMBOLIC_OUTCOMES:
                raise ValueError(
                    f"d: the table of K**d = {self.K}**{self.d} = {self.K**self.d} entries exceeds "
                    f"MAX_SYMBOLIC_OUTCOMES = {MAX_SYMBOLIC_OUTCOMES}; the structured quantities "
                    "(entropies, profile, gain) still work without it"
                )
            arr = self._builder()
            arr.setflags(write=False)
            object.__setattr__(self, "_table", arr)
        return self._table

    def subs(self, values: Mapping | None = None) -> Joint:
        """Numeric :class:`~mdmtheory.Joint` after substituting ``values`` (see :func:`to_joint`)."""
        return to_joint(self, values)

    def __repr__(self) -> str:
        params = ", ".join(map(str, self.parameters))
        return f"SymbolicJoint({self.name}, d={self.d}, K={self.K}, parameters=({params}))"


def _fill(obj, d, K, table, builder, structure, name, recipe=None, parameters=None, tol=0):
    object.__setattr__(obj, "_tol", tol)
    object.__setattr__(obj, "d", int(d))
    object.__setattr__(obj, "K", int(K))
    object.__setattr__(obj, "name", str(name))
    object.__setattr__(obj, "_table", table)
    object.__setattr__(obj, "_builder", builder)
    object.__setattr__(obj, "_structure", structure)
    object.__setattr__(obj, "_recipe", recipe)
    object.__setattr__(obj, "_cache", {})
    if parameters is None:
        free = set()
        for x in table.flat:
            free |= x.free_symbols
        parameters = free
    object.__setattr__(obj, "parameters", tuple(sorted(parameters, key=str)))
    if table is not None:
        table.setflags(write=False)


def _family(d, K, builder, structure, name, recipe, parameters) -> SymbolicJoint:
    obj = object.__new__(SymbolicJoint)
    _fill(obj, d, K, None, builder, structure, name, recipe, parameters)
    return obj


def _free_symbols(*exprs) -> set:
    out = set()
    for e in exprs:
        out |= sp.sympify(e).free_symbols
    return out


def _validated_table(table, *, tol=0, allow_float: bool = False) -> np.ndarray:
    if isinstance(table, Joint):
        raise ValueError("table: is a numeric mdmtheory.Joint; use symbolic.from_joint(p)")
    if isinstance(table, SymbolicJoint):
        return table._entries()
    _refuse_text(table)
    try:
        arr = sp.Array(table)
    except (TypeError, ValueError, sp.SympifyError, RecursionError) as exc:
        raise ValueError(f"table: cannot be read as an array of shape (K,)*d ({exc})") from None
    shape = arr.shape
    if len(shape) == 0:
        raise ValueError("table: expected an array of shape (K,)*d with d >= 1, got a scalar")
    K = shape[0]
    if K < 2 or any(n != K for n in shape):
        raise ValueError(
            f"table: every axis must have the same length K >= 2 (one axis per position), got shape {shape}"
        )
    size = K ** len(shape)
    if size > MAX_SYMBOLIC_OUTCOMES:
        raise ValueError(
            f"table: K**d = {size} entries exceeds MAX_SYMBOLIC_OUTCOMES = {MAX_SYMBOLIC_OUTCOMES}; "
            "use a structured family or the numeric package"
        )
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        x = _exact(arr[idx], f"table{list(idx)}", allow_float=allow_float)
        if x.is_extended_real is False:
            raise ValueError(f"table: entry {list(idx)} = {x} is not real")
        if x.is_negative is True:
            raise ValueError(f"table: entry {list(idx)} = {x} is negative")
        out[idx] = x
    _check_normalized(out, tol=tol)
    return out


def _refuse_text(table, depth: int = 0) -> None:
    """Text is not an entry: ``sp.Array`` iterates a string's characters without end."""
    if isinstance(table, (str, bytes, bytearray)):
        raise ValueError(f"table: entries must be numbers or sympy expressions, got {table[:40]!r} "
                         "(a symbol is sympy.Symbol('a'))")
    if depth > MAX_NDIM:
        raise ValueError(f"table: nested more than {MAX_NDIM} deep; expected an array of shape (K,)*d")
    if isinstance(table, (list, tuple)):
        for x in table:
            _refuse_text(x, depth + 1)
    elif isinstance(table, np.ndarray) and table.dtype.kind in "USO":
        for x in table.ravel().tolist():
            _refuse_text(x, depth + 1)


def _check_normalized(arr: np.ndarray, *, tol=0) -> None:
    excess = sp.cancel(sp.Add(*arr.flat) - 1)
    if excess == 0:
        return
    if excess.is_number:
        if tol and abs(float(excess)) <= float(tol):
            return
        raise ValueError(
            f"table: the entries sum to 1 + ({excess}), expected exactly 1; normalize it "
            "yourself (nothing is renormalized silently)"
        )
    if excess.is_zero is False:
        raise ValueError(f"table: the entries sum to 1 + ({excess}), which is not 0")
    excess = sp.simplify(excess)
    if excess != 0 and (excess.is_number or excess.is_zero is False):
        raise ValueError(f"table: the entries sum to 1 + ({excess}), which is not 0")
    # otherwise undecidable by sympy: accepted (documented)


# ======================================================================================
# constructors
# ======================================================================================
def from_table(table, *, name: str = "table") -> SymbolicJoint:
    """A :class:`SymbolicJoint` from a table of symbols / exact expressions (validated)."""
    return SymbolicJoint(table, name=name)


def from_joint(p: Joint) -> SymbolicJoint:
    r"""The numeric law ``p`` with every float64 entry replaced by the rational it holds exactly.

    Lossless: the symbolic quantities of the result, evaluated, reproduce the numeric ones
    of ``p``. The sum is checked with the numeric tolerance
    :data:`~mdmtheory.laws.NORMALIZATION_TOL` (the floats need not sum to exactly 1).
    """
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
    if p.lost:
        raise ValueError(f"p: has lost mass {p.lost:.3g}; only normalized laws convert")
    if p.table.size > MAX_SYMBOLIC_OUTCOMES:
        raise ValueError(f"p: K**d = {p.table.size} exceeds MAX_SYMBOLIC_OUTCOMES = {MAX_SYMBOLIC_OUTCOMES}")
    arr = np.empty(p.table.shape, dtype=object)
    for idx in np.ndindex(*p.table.shape):
        arr[idx] = sp.Rational(float(p.table[idx]))
    _check_normalized(arr, tol=NORMALIZATION_TOL)
    obj = object.__new__(SymbolicJoint)
    _fill(obj, p.d, p.K, arr, None, None, "from_joint", tol=NORMALIZATION_TOL)
    return obj


def general_law(d: int, K: int = 2, *, prefix: str = "p") -> SymbolicJoint:
    r"""The general law on :math:`[K]^d`: one positive symbol per outcome, the last one
    :math:`1 - \sum` of the others.

    Symbols are named ``p_<x_0 x_1 ... x_{d-1}>`` (e.g. ``p_010``; digits separated by
    ``_`` when K > 10). Meant for d = 2 or 3 (the table-based entropies cost
    :math:`2^d K^d` sympy operations).

    Examples
    --------
    >>> general_law(2).parameters
    (p_00, p_01, p_10)
    """
    d = _int_arg(d, "d", 1)
    K = _int_arg(K, "K", 2)
    if K**d > MAX_SYMBOLIC_OUTCOMES:
        raise ValueError(f"d: K**d = {K**d} exceeds MAX_SYMBOLIC_OUTCOMES = {MAX_SYMBOLIC_OUTCOMES}")
    sep = "" if K <= 10 else "_"
    arr = np.empty((K,) * d, dtype=object)
    outcomes = list(np.ndindex(*(K,) * d))
    syms = [sp.Symbol(f"{prefix}_" + sep.join(map(str, x)), positive=True) for x in outcomes[:-1]]
    for x, s in zip(outcomes[:-1], syms):
        arr[x] = s
    arr[outcomes[-1]] = 1 - sp.Add(*syms)
    obj = object.__new__(SymbolicJoint)
    _fill(obj, d, K, arr, None, None, f"general_law(d={d}, K={K})")
    return obj


def _chain_parts(a: sp.Expr, b: sp.Expr):
    """Stationary law, its entropy and the gap entropies of P = [[1-a, a], [b, 1-b]]."""
    s = a + b
    pi0, pi1 = b / s, a / s
    lam = 1 - s

    def gap(g: int) -> sp.Expr:
        # P^g = 1 pi + lam^g (I - 1 pi): P^g(0,1) = a(1 - lam^g)/s, P^g(1,0) = b(1 - lam^g)/s
        lg = lam**g
        p01, p00 = a * (1 - lg) / s, (b + a * lg) / s
        p10, p11 = b * (1 - lg) / s, (a + b * lg) / s
        return pi0 * _entropy_of([p00, p01]) + pi1 * _entropy_of([p10, p11])

    return (pi0, pi1), _entropy_of([pi0, pi1]), gap


def two_state_markov_chain(a, b, d: int) -> SymbolicJoint:
    r"""Stationary two-state Markov chain :math:`X_1 \to \dots \to X_d`.

    .. math::

        P = \begin{pmatrix} 1-a & a \\ b & 1-b \end{pmatrix}, \qquad
        \pi = \Bigl(\frac{b}{a+b}, \frac{a}{a+b}\Bigr), \qquad
        P^g = \mathbf 1 \pi + \lambda^g (I - \mathbf 1 \pi),\ \lambda = 1 - a - b.

    Entropies use :math:`H(X_S) = H(\pi) + \sum_k h_{s_{k+1}-s_k}` with
    :math:`h_g = H(X_g \mid X_0) = \sum_x \pi_x H(P^g(x, \cdot))` (docs/theory.md §6), so any
    d works without the :math:`2^d` table. Numeric twin:
    ``mdmtheory.laws.families.markov_chain([[1-a, a], [b, 1-b]], d)``.

    Parameters
    ----------
    a, b : sympy expressions, exact numbers in [0, 1] (a + b > 0), or strings (a
        positive Symbol of that name).
    d : int, >= 1
    """
    a, b = _parameter(a, "a"), _parameter(b, "b")
    d = _int_arg(d, "d", 1)
    _check_interval(a, "a", 0, 1)
    _check_interval(b, "b", 0, 1)
    if (a + b).is_zero is True:
        raise ValueError("a, b: a + b = 0 leaves every state absorbing; the stationary law is not unique")
    (pi0, pi1), H_pi, gap = _chain_parts(a, b)
    P = ((1 - a, a), (b, 1 - b))

    def build() -> np.ndarray:
        arr = np.empty((2,) * d, dtype=object)
        for x in np.ndindex(*(2,) * d):
            w = pi0 if x[0] == 0 else pi1
            for i in range(d - 1):
                w = w * P[x[i]][x[i + 1]]
            arr[x] = w
        return arr

    return _family(
        d, 2, build, _StationaryChain(H_pi, gap), f"two_state_markov_chain(a={a}, b={b}, d={d})",
        (two_state_markov_chain, (a, b, d)), _free_symbols(a, b),
    )


def noisy_repeated_bit(eps, d: int) -> SymbolicJoint:
    r"""A fair bit seen through d independent binary symmetric channels of flip probability ε.

    .. math::

        p(x) = \tfrac12 \varepsilon^{|x|}(1-\varepsilon)^{d-|x|}
             + \tfrac12 \varepsilon^{d-|x|}(1-\varepsilon)^{|x|}, \qquad
        H(X_S) = -\sum_{j=0}^{m} \binom{m}{j} q_{m,j} \log q_{m,j}\ (|S| = m),

    with :math:`q_{m,j} = \tfrac12 \varepsilon^j (1-\varepsilon)^{m-j} + \tfrac12
    \varepsilon^{m-j}(1-\varepsilon)^j` (exchangeable: entropies depend only on |S|).
    Numeric twin: ``mdmtheory.laws.families.noisy_repeated_bit(d, eps)`` (note the argument
    order there).

    Parameters
    ----------
    eps : sympy expression, exact number in [0, 1/2], or a string (positive Symbol).
    d : int, >= 1
    """
    eps = _parameter(eps, "eps")
    d = _int_arg(d, "d", 1)
    _check_interval(eps, "eps", 0, sp.Rational(1, 2))
    half = sp.Rational(1, 2)

    def q(m: int, j: int) -> sp.Expr:
        return half * eps**j * (1 - eps) ** (m - j) + half * eps ** (m - j) * (1 - eps) ** j

    def level(m: int) -> sp.Expr:
        terms = []
        for j in range(m + 1):
            qj = q(m, j)
            if qj == 0 or qj.is_zero is True:
                continue
            terms.append(-sp.binomial(m, j) * qj * sp.log(qj))
        return sp.Add(*terms)

    def build() -> np.ndarray:
        arr = np.empty((2,) * d, dtype=object)
        for x in np.ndindex(*(2,) * d):
            arr[x] = q(d, sum(x))
        return arr

    return _family(
        d, 2, build, _Exchangeable(level), f"noisy_repeated_bit(eps={eps}, d={d})",
        (noisy_repeated_bit, (eps, d)), _free_symbols(eps),
    )


def repeated(d: int, K: int = 2, weights=None) -> SymbolicJoint:
    r"""One symbol copied to every position, :math:`X_1 = \dots = X_d \sim w`.

    .. math:: H(X_S) = H(w) \ (S \ne \emptyset), \qquad H(w) = \log K \text{ for uniform } w.

    Parameters
    ----------
    d : int, >= 1
    K : int, >= 2
    weights : sequence of K exact entries / symbols summing to 1, optional (default uniform).
        Numeric twin: ``mdmtheory.laws.families.repeated(d, K, weights)``.
    """
    d = _int_arg(d, "d", 1)
    K = _int_arg(K, "K", 2)
    if weights is None:
        w = [sp.Rational(1, K)] * K
    else:
        if isinstance(weights, (str, bytes)) or not hasattr(weights, "__len__"):
            raise ValueError(f"weights: expected a sequence of K={K} entries, got {weights!r}")
        w = [_parameter(x, f"weights[{i}]") for i, x in enumerate(weights)]
        if len(w) != K:
            raise ValueError(f"weights: has length {len(w)} but K={K}; pass K={len(w)}")
        arr = np.empty((K,), dtype=object)
        arr[:] = w
        for i, x in enumerate(w):
            _check_interval(x, f"weights[{i}]", 0, 1)
        try:
            _check_normalized(arr)
        except ValueError as exc:
            raise ValueError(str(exc).replace("table:", "weights:")) from None
    H_w = _entropy_of(w)

    def build() -> np.ndarray:
        arr = np.full((K,) * d, sp.Integer(0), dtype=object)
        for k in range(K):
            arr[(k,) * d] = w[k]
        return arr

    return _family(
        d, K, build, _Exchangeable(lambda m: H_w), f"repeated(d={d}, K={K})",
        (repeated, (d, K, None if weights is None else tuple(w))), _free_symbols(*w),
    )


def parity(d: int) -> SymbolicJoint:
    r"""Global parity: :math:`X_1, \dots, X_{d-1}` fair bits, :math:`X_d` their XOR.

    Uniform on the :math:`2^{d-1}` even-weight strings (exchangeable):
    :math:`H(X_S) = \min(|S|, d-1) \log 2`. Numeric twin ``mdmtheory.laws.families.parity(d)``.
    """
    d = _int_arg(d, "d", 2)
    mass = sp.Rational(1, 2 ** (d - 1))

    def build() -> np.ndarray:
        arr = np.full((2,) * d, sp.Integer(0), dtype=object)
        for x in np.ndindex(*(2,) * d):
            if sum(x) % 2 == 0:
                arr[x] = mass
        return arr

    return _family(
        d, 2, build, _Exchangeable(lambda m: min(m, d - 1) * sp.log(2)), f"parity(d={d})",
        (parity, (d,)), set(),
    )


# ======================================================================================
# substitution and evaluation
# ======================================================================================
def _values(values, parameters=None) -> dict:
    """Normalize a substitution mapping (keys: Symbols or their names; values exact)."""
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise ValueError(f"values: expected a mapping {{symbol: value}}, got {type(values).__name__}")
    by_name = {str(s): s for s in (parameters or ())}
    out = {}
    for key, val in values.items():
        if isinstance(key, str):
            if parameters is not None and key not in by_name:
                raise ValueError(f"values: {key!r} is not a parameter (parameters: {sorted(by_name)})")
            key = by_name.get(key, sp.Symbol(key))
        elif not isinstance(key, sp.Symbol):
            raise ValueError(f"values: keys must be sympy Symbols or their names, got {key!r}")
        elif parameters is not None and key not in parameters:
            raise ValueError(f"values: {key} is not a parameter (parameters: {sorted(by_name)})")
        out[key] = _exact(val, f"values[{key}]")
    return out


def substitute(p: SymbolicJoint, values: Mapping) -> SymbolicJoint:
    """``p`` with some or all parameters replaced by exact values (floats: their exact rational).

    Families are rebuilt from their substituted parameters, so structural zeros (e.g.
    ``eps = 0``) are dropped from the entropy sums instead of giving ``0 log 0``.
    """
    if not isinstance(p, SymbolicJoint):
        raise ValueError(f"p: expected a SymbolicJoint, got {type(p).__name__}")
    vals = _values(values, p.parameters)
    if not vals:
        return p
    if p._recipe is not None:
        fn, args = p._recipe
        new = [
            tuple(sp.sympify(x).subs(vals) for x in a) if isinstance(a, tuple)
            else (a.subs(vals) if isinstance(a, sp.Basic) else a)
            for a in args
        ]
        return fn(*new)
    arr = np.empty(p._entries().shape, dtype=object)
    for idx in np.ndindex(*arr.shape):
        arr[idx] = p._entries()[idx].subs(vals)
    return SymbolicJoint(arr, name=p.name, tol=p._tol)


def to_joint(p: SymbolicJoint, values: Mapping | None = None) -> Joint:
    """Numeric :class:`~mdmtheory.Joint` (float64) after substituting every parameter.

    Raises ValueError if a parameter is left free or an entry is negative / not real.
    """
    if not isinstance(p, SymbolicJoint):
        raise ValueError(f"p: expected a SymbolicJoint, got {type(p).__name__}")
    vals = _values(values, p.parameters)
    missing = [s for s in p.parameters if s not in vals]
    if missing:
        raise ValueError(f"values: no value for the parameter(s) {missing}; all are needed for a numeric Joint")
    ent = p._entries()
    out = np.empty(ent.shape, dtype=np.float64)
    for idx in np.ndindex(*ent.shape):
        x = ent[idx].subs(vals)
        if not x.is_number:
            raise ValueError(f"values: entry {list(idx)} is still symbolic after substitution: {x}")
        if x.is_extended_real is False or (x < 0) is sp.true:
            raise ValueError(f"values: entry {list(idx)} = {x} is not a probability")
        out[idx] = float(sp.N(x, 30))
    return Joint(out)


def to_float(expr, values: Mapping | None = None, *, digits: int = 30) -> float:
    """Evaluate ``expr`` (after substituting ``values``) with ``digits`` significant digits.

    Refuses results that are not finite real numbers (e.g. ``0 log 0`` after substituting
    a boundary value: use :func:`substitute` on the joint first).
    """
    expr = _exact(expr, "expr")
    digits = _int_arg(digits, "digits", 1, 10_000)
    vals = _values(values)
    x = expr.xreplace(vals) if vals else expr
    if not x.is_number:
        raise ValueError(f"values: the expression still has free symbols {sorted(map(str, x.free_symbols))}")
    v = sp.N(x, digits)
    if v.has(sp.nan) or not v.is_real or not v.is_finite:
        raise ValueError(
            f"expr: evaluates to {v} (not a finite real number); if a probability vanishes at "
            "these values, substitute into the joint first: symbolic.substitute(p, values)"
        )
    return float(v)


# ======================================================================================
# entropies and the profile
# ======================================================================================
def _check_joint(p) -> SymbolicJoint:
    if not isinstance(p, SymbolicJoint):
        raise ValueError(f"p: expected a symbolic.SymbolicJoint, got {type(p).__name__}")
    return p


def _marginal(p: SymbolicJoint, mask: int) -> np.ndarray:
    """Marginal table of the positions in ``mask`` (axes in increasing position order)."""
    full = (1 << p.d) - 1
    if mask == full:
        return p._entries()
    key = ("marginal", mask)
    if key not in p._cache:
        j = next(i for i in range(p.d) if not mask >> i & 1)
        parent = mask | (1 << j)
        axis = bin(parent & ((1 << j) - 1)).count("1")
        m = _marginal(p, parent).sum(axis=axis)
        m = np.asarray(m, dtype=object)
        for idx in np.ndindex(*m.shape):
            x = m[idx]
            m[idx] = sp.cancel(x) if x.free_symbols else x
        p._cache[key] = m
    return p._cache[key]


def _subset_entropy_mask(p: SymbolicJoint, mask: int) -> sp.Expr:
    if mask == 0:
        return sp.Integer(0)
    key = ("H", mask)
    if key in p._cache:
        return p._cache[key]
    st = p._structure
    m = bin(mask).count("1")
    if isinstance(st, _Exchangeable):
        lkey = ("level", m)
        if lkey not in p._cache:
            p._cache[lkey] = sp.sympify(st.level(m))
        H = p._cache[lkey]
    elif isinstance(st, _StationaryChain):
        pos = [i for i in range(p.d) if mask >> i & 1]
        H = st.stationary_entropy + sp.Add(*[_gap(p, b - a) for a, b in zip(pos, pos[1:])])
    else:
        H = _entropy_of(list(_marginal(p, mask).flat))
    p._cache[key] = H
    return H


def _gap(p: SymbolicJoint, g: int) -> sp.Expr:
    key = ("gap", g)
    if key not in p._cache:
        p._cache[key] = p._structure.gap(g)
    return p._cache[key]


def subset_entropy(p: SymbolicJoint, positions) -> sp.Expr:
    r""":math:`H(X_S)` (nats) for the positions S (an iterable of ints in ``0..d-1``)."""
    _check_joint(p)
    if isinstance(positions, (str, bytes, dict)) or not hasattr(positions, "__iter__"):
        raise ValueError(f"positions: expected an iterable of positions in 0..{p.d - 1}, got {positions!r}")
    pos = list(positions)
    mask = positions_to_mask(pos, p.d)  # integers in 0..d-1 (refused by name otherwise)
    if len(set(pos)) != len(pos):
        raise ValueError(f"positions: repeated entries in {pos}")
    return _subset_entropy_mask(p, mask)


def subset_entropies(p: SymbolicJoint) -> tuple:
    r"""All :math:`2^d` subset entropies :math:`H(X_S)`, indexed by bitmask (bit j = position j).

    Same indexing as :func:`mdmtheory.subset_entropies`; entry 0 is :math:`H(\emptyset) = 0`.
    """
    _check_joint(p)
    return tuple(_subset_entropy_mask(p, mask) for mask in range(1 << p.d))


def entropy(p: SymbolicJoint) -> sp.Expr:
    """Joint entropy :math:`H(X)`."""
    _check_joint(p)
    return _subset_entropy_mask(p, (1 << p.d) - 1)


def entropy_coefficients(p: SymbolicJoint) -> tuple:
    r""":math:`e_m = \binom{d}{m}^{-1}\sum_{|S|=m} H(X_S)`, m = 0..d (docs/theory.md §1).

    Exchangeable families: :math:`e_m = H(X_{[m]})`. Stationary chains: the gap formula
    :math:`e_m = H(\pi) + \sum_{g=1}^{d-m+1} \frac{(d-g)\binom{d-g-1}{m-2}}{\binom{d}{m}} h_g`
    (m >= 2). Otherwise the mean over subsets.
    """
    _check_joint(p)
    key = ("e",)
    if key in p._cache:
        return p._cache[key]
    d, st = p.d, p._structure
    if isinstance(st, _Exchangeable):
        e = [sp.Integer(0)] + [_subset_entropy_mask(p, (1 << m) - 1) for m in range(1, d + 1)]
    elif isinstance(st, _StationaryChain):
        e = [sp.Integer(0), st.stationary_entropy]
        for m in range(2, d + 1):
            terms = [
                sp.Rational((d - g) * math.comb(d - g - 1, m - 2), math.comb(d, m)) * _gap(p, g)
                for g in range(1, d - m + 2)
            ]
            e.append(st.stationary_entropy + sp.Add(*terms))
    else:
        sums = [[] for _ in range(d + 1)]
        for mask in range(1, 1 << d):
            sums[bin(mask).count("1")].append(_subset_entropy_mask(p, mask))
        e = [sp.Integer(0)] + [sp.Add(*sums[m]) / math.comb(d, m) for m in range(1, d + 1)]
    p._cache[key] = tuple(e)
    return p._cache[key]


def information_profile(p: SymbolicJoint) -> tuple:
    r"""Profile :math:`\varphi_m = e_{m+1} - e_m`, m = 0..d-1, as a tuple of sympy expressions.

    Non-increasing with :math:`\sum_m \varphi_m = H(X)` (proofs/profile_identities.md).
    Numeric twin: :func:`mdmtheory.information_profile`.
    """
    e = entropy_coefficients(p)
    return tuple(e[m + 1] - e[m] for m in range(p.d))


def sum_of_entropies(p: SymbolicJoint) -> sp.Expr:
    r""":math:`S(X) = \sum_i H(X_i)`."""
    _check_joint(p)
    return sp.Add(*[_subset_entropy_mask(p, 1 << i) for i in range(p.d)])


def total_correlation(p: SymbolicJoint) -> sp.Expr:
    r""":math:`TC = \sum_i H(X_i) - H(X)`."""
    return sum_of_entropies(p) - entropy(p)


def dual_total_correlation(p: SymbolicJoint) -> sp.Expr:
    r""":math:`DTC = H(X) - \sum_i H(X_i \mid X_{-i}) = \sum_i H(X_{-i}) - (d-1) H(X)`."""
    _check_joint(p)
    full = (1 << p.d) - 1
    return sp.Add(*[_subset_entropy_mask(p, full ^ (1 << i)) for i in range(p.d)]) - (p.d - 1) * entropy(p)


def sum_mutual_information(p: SymbolicJoint) -> sp.Expr:
    r""":math:`\sum_i I(X_i; X_{-i}) = TC + DTC`."""
    return total_correlation(p) + dual_total_correlation(p)


def tse_complexity(p: SymbolicJoint) -> sp.Expr:
    r"""Tononi–Sporns–Edelman complexity :math:`\sum_{k=1}^d (e_k - (k/d) e_d)`."""
    e = entropy_coefficients(p)
    d = p.d
    return sp.Add(*[e[k] - sp.Rational(k, d) * e[d] for k in range(1, d + 1)])


def _profile_of(x) -> tuple:
    """Profile of a SymbolicJoint, or a given profile (sequence / numeric Profile) as exact values."""
    if isinstance(x, SymbolicJoint):
        return information_profile(x)
    if isinstance(x, Profile):
        return tuple(sp.Rational(float(v)) for v in x.values)
    if isinstance(x, Joint):
        raise ValueError("p: is a numeric Joint; convert it with symbolic.from_joint(p)")
    if isinstance(x, (str, bytes)) or not hasattr(x, "__len__"):
        raise ValueError(f"p: expected a SymbolicJoint or a sequence of profile values, got {type(x).__name__}")
    vals = tuple(_exact(v, f"profile[{i}]") for i, v in enumerate(x))
    if not vals:
        raise ValueError("p: the profile needs at least one value (d >= 1)")
    return vals


def card_gain_coefficients(p) -> tuple:
    r""":math:`h^{card}_j = d(\varphi_0 - \varphi_j)`, j = 0..d-1 (``p``: joint or profile)."""
    phi = _profile_of(p)
    d = len(phi)
    return tuple(d * (phi[0] - phi[j]) for j in range(d))


# ======================================================================================
# path KL, gain polynomial, UGC
# ======================================================================================
def step_path_kl(p, plan) -> tuple:
    r"""Per-step parts of the path KL (``p``: joint or profile; ``plan``: Schedule, sizes, Grid).

    Schedule: term t is :math:`\sum_{m=s_t}^{s_t+k_t-1} (\varphi_{s_t} - \varphi_m)`
    (docs/theory.md §2). Grid (times converted to their exact rationals): term j is
    :func:`gamma_umask` :math:`(t_j, t_{j+1})`.
    """
    phi = _profile_of(p)
    if isinstance(plan, Grid):
        t = [sp.Rational(x) for x in plan.times]
        return tuple(gamma_umask(phi, t[j], t[j + 1]) for j in range(plan.steps))
    sched = check_schedule(plan, len(phi), name="plan")
    return tuple(
        sp.Add(*[phi[s] - phi[m] for m in range(s, s + k)]) for s, k in zip(sched.starts, sched.sizes)
    )


def path_kl(p, plan) -> sp.Expr:
    r"""Path KL, the profile identity :math:`\sum_t k_t \varphi_{s_t} - \sum_m \varphi_m`.

    ``p``: :class:`SymbolicJoint` or a profile; ``plan``: :class:`~mdmtheory.Schedule`
    (or sizes), or a :class:`~mdmtheory.Grid` (sum of :func:`gamma_umask`).
    Numeric twin: :func:`mdmtheory.path_kl`. Proof: proofs/path_kl_identity.md
    (tests/proofs/test_path_kl_identity.py).
    """
    phi = _profile_of(p)
    if isinstance(plan, Grid):
        return sp.Add(*step_path_kl(phi, plan))
    sched = check_schedule(plan, len(phi), name="plan")
    return sp.Add(*[k * phi[s] for s, k in zip(sched.starts, sched.sizes)]) - sp.Add(*phi)


def _bernstein(n: int, j: int, t) -> sp.Expr:
    return sp.binomial(n, j) * t**j * (1 - t) ** (n - j)


def gain(p, t=TIME) -> sp.Expr:
    r"""Gain polynomial in Bernstein form (W26 App. B.2 eq. (65a); docs/theory.md §3):

    .. math:: h(t) = \sum_{j=0}^{d-1} \binom{d-1}{j} t^j (1-t)^{d-1-j} h^{card}_j,
              \qquad h^{card}_j = d(\varphi_0 - \varphi_j).

    A polynomial of degree <= d-1 in ``t`` (``sympy.Poly(h, t)``); ``t`` may also be a
    number. Numeric twin: :func:`mdmtheory.information.gain`. Proof: proofs/bernstein_gain.md
    (tests/proofs/test_bernstein_gain.py).
    """
    hc = card_gain_coefficients(p)
    n = len(hc) - 1
    t = _exact(t, "t")
    return sp.Add(*[_bernstein(n, j, t) * hc[j] for j in range(n + 1)])


def info(p, t=TIME) -> sp.Expr:
    r""":math:`\mathrm{Info}(X; X_t) = \sum_{m=0}^{d} \binom{d}{m} t^m (1-t)^{d-m} e_m`.

    ``p``: joint or profile. Numeric twin: :func:`mdmtheory.information.info`.
    """
    phi = _profile_of(p)
    d = len(phi)
    e = [sp.Integer(0)]
    for v in phi:
        e.append(e[-1] + v)
    t = _exact(t, "t")
    return sp.Add(*[_bernstein(d, m, t) * e[m] for m in range(d + 1)])


def _interval(start, stop):
    a, b = _exact(start, "start"), _exact(stop, "stop")
    _check_interval(a, "start", 0, 1)
    _check_interval(b, "stop", 0, 1)
    if (b < a) is sp.true:
        raise ValueError(f"start, stop: need start <= stop, got start={a}, stop={b}")
    return a, b


_U = sp.Symbol("u", real=True)


@renamed_keywords(a="start", b="stop")
def ugc(p, start, stop) -> sp.Expr:
    r"""Unmasking growth complexity :math:`H(a, b) = \int_a^b t(1-t)\, h'(t)\, dt` (W26 §2.2 eq. (2c)).

    Exact: :math:`\sum_j h^{card}_j \int_a^b t(1-t) B_j'(t)\,dt` with the rational
    polynomial integrals done by ``sympy.Poly``. a = ``start``, b = ``stop``: numbers in
    [0, 1] or symbols.
    """
    hc = card_gain_coefficients(p)
    a, b = _interval(start, stop)
    n = len(hc) - 1
    out = []
    for j in range(n + 1):
        F = sp.Poly(_U * (1 - _U) * sp.diff(_bernstein(n, j, _U), _U), _U).integrate()
        w = F.as_expr().subs(_U, b) - F.as_expr().subs(_U, a)
        if w != 0:
            out.append(sp.expand(w) * hc[j])
    return sp.Add(*out)


def ugc_card(p, a: int, b: int) -> sp.Expr:
    r"""Card UGC :math:`H^{card}(a, b) = \sum_{j=a+1}^{b-1} \frac jd (1 - \frac jd)(h^{card}_j - h^{card}_{j-1})`.

    Integers :math:`0 \le a < b \le d` (docs/theory.md §3; :math:`H(0,1) = \frac{d}{d+1} H^{card}(0, d)`).
    """
    hc = card_gain_coefficients(p)
    d = len(hc)
    a, b = _int_arg(a, "a", 0), _int_arg(b, "b", 0)
    if not a < b <= d:
        raise ValueError(f"a, b: need 0 <= a < b <= d={d}, got a={a}, b={b}")
    return sp.Add(*[
        sp.Rational(j, d) * (1 - sp.Rational(j, d)) * (hc[j] - hc[j - 1]) for j in range(a + 1, b)
    ])


@renamed_keywords(a="start", b="stop")
def gamma_umask(p, start, stop) -> sp.Expr:
    r"""One-step defect of the Bernoulli sampler :math:`\Gamma(a, b) = \int_a^b (h(u) - h(a))\,du`,
    a = ``start``, b = ``stop``.

    Exact (rational polynomial integrals times :math:`h^{card}_j`). Numeric twin:
    :func:`mdmtheory.information.gamma_umask`.
    """
    hc = card_gain_coefficients(p)
    a, b = _interval(start, stop)
    n = len(hc) - 1
    out = []
    for j in range(n + 1):
        B = _bernstein(n, j, _U)
        F = sp.Poly(B, _U).integrate().as_expr()
        w = F.subs(_U, b) - F.subs(_U, a) - (b - a) * B.subs(_U, a)
        if w != 0:
            out.append(sp.expand(w) * hc[j])
    return sp.Add(*out)


# ======================================================================================
# derivations for a symbolic number of positions
# ======================================================================================
class ClosedForms(NamedTuple):
    r"""Closed forms of a family for a symbolic number of positions ``d``.

    Fields that sympy could not derive for the family are ``None``.

    Attributes
    ----------
    d : sympy.Symbol (positive integer)
    entropy : :math:`H(X)`
    entropy_coefficient : sympy.Lambda, :math:`m \mapsto e_m` (0 <= m <= d)
    profile : sympy.Lambda, :math:`m \mapsto \varphi_m` (0 <= m <= d-1)
    total_correlation, dual_total_correlation : expressions in d
    gain : :math:`h(t)` from the Bernstein form (variable :data:`TIME`)
    gain_via_info : :math:`h(t) = S(X) - \frac{d}{dt}\mathrm{Info}(X; X_t)`, an independent route
    ugc_total : :math:`H(0, 1) = \int_0^1 t(1-t) h'(t)\,dt`
    tc_from_gain, dtc_from_gain : :math:`\int_0^1 (1-t) h'` and :math:`\int_0^1 t h'`
    ugc_density : :math:`q(\lambda) = r^2 (1-r)^2 h'(r)`, :math:`r = e^\lambda/(1+e^\lambda)`
    """

    d: sp.Symbol
    entropy: sp.Expr
    entropy_coefficient: sp.Lambda
    profile: sp.Lambda
    total_correlation: sp.Expr
    dual_total_correlation: sp.Expr
    gain: sp.Expr | None = None
    gain_via_info: sp.Expr | None = None
    ugc_total: sp.Expr | None = None
    tc_from_gain: sp.Expr | None = None
    dtc_from_gain: sp.Expr | None = None
    ugc_density: sp.Expr | None = None

    def to_dict(self) -> dict:
        """Every field by name, JSON-ready (numpy arrays as lists, non-finite floats as strings)."""
        return record_dict(self)


#: Symbols of the derivations (public names so users can substitute into the results).
D_SYMBOL = sp.Symbol("d", integer=True, positive=True)
M_SYMBOL = sp.Symbol("m", integer=True, nonnegative=True)
LAMBDA_SYMBOL = sp.Symbol("lambda", real=True)
_J = sp.Symbol("j", integer=True, nonnegative=True)
_N = sp.Symbol("n", integer=True, nonnegative=True)  # internal: d = n + offset, so d >= offset
_Z = sp.Symbol("z", positive=True)


@functools.lru_cache(maxsize=None)
def _binomial_generating_function(n) -> sp.Expr:
    r""":math:`G(z) = \sum_{j=0}^{n} \binom{n}{j} z^j = (1+z)^n`, derived with sympy.

    sympy's ``Sum.doit`` only returns this under a spurious convergence condition
    (:math:`|z| \le 1`); instead the terms are identified as those of the terminating
    hypergeometric series :math:`{}_1F_0(-n;;-z)` (term identity checked by ``combsimp``)
    and the series is summed by ``hyperexpand``.
    """
    ratio = sp.combsimp(sp.rf(-n, _J) * (-1) ** _J / sp.factorial(_J) / sp.binomial(n, _J))
    if ratio != 1:  # pragma: no cover - sympy regression guard
        raise RuntimeError(f"sympy could not identify the binomial terms as 1F0 terms ({ratio})")
    return sp.hyperexpand(sp.hyper([-n], [], -_Z))


#: Largest polynomial degree (and numeric n) of :func:`bernstein_sum` (one derivative per degree).
MAX_BERNSTEIN_DEGREE = 64


def bernstein_sum(coefficient, j: sp.Symbol, n, t=TIME) -> sp.Expr:
    r""":math:`\sum_{j=0}^{n} \binom{n}{j} t^j (1-t)^{n-j} c(j)` for a symbolic degree n.

    ``coefficient`` is a polynomial in ``j`` or a ``Piecewise`` of exceptional points
    ``(value, Eq(j, c))`` followed by a polynomial default ``(expr, True)``. The
    polynomial part uses :math:`\sum_j \binom nj j^k z^j = (z\partial_z)^k (1+z)^n`
    (see :func:`_binomial_generating_function`) with :math:`z = t/(1-t)`; each exceptional
    point adds its Bernstein basis polynomial times (value - default).
    """
    coefficient = _exact(coefficient, "coefficient")
    if not isinstance(j, sp.Symbol):
        raise ValueError(f"j: expected the sympy Symbol of the summation index, got {type(j).__name__}")
    n = _exact(n, "n")
    if n.is_number and not (n.is_integer and 0 <= n <= MAX_BERNSTEIN_DEGREE):
        raise ValueError(f"n: expected a symbol or an integer in 0..{MAX_BERNSTEIN_DEGREE}, got {n}")
    t = _exact(t, "t")
    if t.is_number and not 0 <= t < 1:
        raise ValueError(f"t: expected a symbol or a number in [0, 1), got {t}")
    exceptions = []
    default = coefficient
    if isinstance(coefficient, sp.Piecewise):
        default = None
        for value, cond in coefficient.args:
            if cond is sp.true:
                default = value
                break
            if not isinstance(cond, sp.Eq) or j not in cond.free_symbols:
                raise NotImplementedError(f"bernstein_sum: condition {cond} is not of the form Eq(j, c)")
            c = sp.solve(cond, j)
            if len(c) != 1:
                raise NotImplementedError(f"bernstein_sum: cannot solve {cond} for {j}")
            exceptions.append((c[0], value))
        if default is None:
            raise NotImplementedError("bernstein_sum: the Piecewise needs a final (expr, True) branch")
    try:
        poly = sp.Poly(default, j)
    except sp.PolynomialError:
        raise ValueError(f"coefficient: expected a polynomial in {j} (or a Piecewise ending in one), "
                         f"got {default}") from None
    if poly.degree() > MAX_BERNSTEIN_DEGREE:
        raise ValueError(f"coefficient: degree {poly.degree()} in {j}, beyond {MAX_BERNSTEIN_DEGREE}")
    G = _binomial_generating_function(n)
    total = sp.Integer(0)
    Gk = G
    for k in range(max(poly.degree(), -1) + 1):
        ck = poly.coeff_monomial(j**k)
        if ck != 0:
            total += ck * Gk
        Gk = _Z * sp.diff(Gk, _Z)
    total = sp.simplify((1 - t) ** n * total.subs(_Z, t / (1 - t)))
    for c, value in exceptions:
        total += sp.binomial(n, c) * t**c * (1 - t) ** (n - c) * sp.simplify(value.subs(j, c) - default.subs(j, c))
    return total


def _tidy_piecewise(pw: sp.Expr, var: sp.Symbol, lo, hi) -> sp.Expr:
    """Clean a Piecewise whose conditions are (conjunctions of) ``Eq(var, c)``.

    Branches with contradictory conditions or a point provably outside [lo, hi] are
    dropped; each exceptional value is evaluated at its point; exceptions equal to the
    default there are dropped. (Cheaper than ``simplify`` on Piecewise, by ~10x.)
    """
    if not isinstance(pw, sp.Piecewise):
        return sp.expand(pw)
    default = None
    points = []
    for value, cond in pw.args:
        if cond is sp.true:
            default = sp.expand(value)
            break
        eqs = cond.args if isinstance(cond, sp.And) else (cond,)
        sols = set()
        for eq in eqs:
            if not isinstance(eq, sp.Eq):
                raise NotImplementedError(f"_tidy_piecewise: condition {cond} is not Eq(var, c)")
            sol = sp.solve(eq, var)
            if len(sol) != 1:
                raise NotImplementedError(f"_tidy_piecewise: cannot solve {eq} for {var}")
            sols.add(sp.expand(sol[0]))
        if len(sols) != 1:
            if all((x - y).is_nonzero for x in sols for y in sols if x is not y):
                continue  # var cannot equal two different values
            raise NotImplementedError(f"_tidy_piecewise: cannot decide {cond}")
        (c,) = sols
        if (c - hi).is_positive or (lo - c).is_positive:
            continue
        if any(sp.expand(c - c0) == 0 for c0, _ in points):
            continue  # an earlier branch already covers this point
        points.append((c, sp.expand(value.subs(var, c))))
    if default is None:
        raise NotImplementedError("_tidy_piecewise: the Piecewise needs a final (expr, True) branch")
    branches = [(v, sp.Eq(var, c)) for c, v in points if sp.expand(v - default.subs(var, c)) != 0]
    return sp.Piecewise(*branches, (default, True)) if branches else default


def _integrate01(expr, t) -> sp.Expr:
    r""":math:`\int_0^1` of a sum of terms :math:`c\, t^a (1-t)^b` (symbolic a, b > -1).

    Term by term with Euler's Beta integral
    :math:`\int_0^1 t^a (1-t)^b\,dt = \Gamma(a+1)\Gamma(b+1)/\Gamma(a+b+2)`, then
    ``gammasimp``; any other term goes to ``sympy.integrate`` (which also gets these
    right, but takes seconds per term with symbolic exponents).
    """
    total = []
    for term in sp.Add.make_args(sp.expand(expr)):
        coeff, rest = term.as_independent(t, as_Add=False)
        powers = rest.as_powers_dict() if rest != 1 else {}
        a, b = sp.Integer(0), sp.Integer(0)
        ok = True
        for base, e in powers.items():
            if base == t:
                a += e
            elif sp.expand(base - (1 - t)) == 0:
                b += e
            elif sp.expand(base - (t - 1)) == 0 and e.is_integer:
                b += e
                coeff *= (-1) ** e
            else:
                ok = False
        if ok and (a + 1).is_positive and (b + 1).is_positive:
            total.append(coeff * sp.gamma(a + 1) * sp.gamma(b + 1) / sp.gamma(a + b + 2))
        else:
            total.append(sp.integrate(term, (t, 0, 1), conds="none"))
    return sp.simplify(sp.gammasimp(sp.Add(*total)))


def _exchangeable_closed_forms(level, offset: int) -> ClosedForms:
    r"""Closed forms of an exchangeable law with :math:`H(X_S) = \text{level}(|S|, d)`.

    ``level(m, d)`` returns a Piecewise in m (0 at m = 0). Internally d = n + offset
    with n >= 0, so conditions like d >= 2 are known to sympy.
    """
    d, m, t, j = D_SYMBOL, M_SYMBOL, TIME, _J
    dd = _N + offset  # d, known to be >= offset
    e = level(m, dd)
    H = sp.expand(e.subs(m, dd))
    phi = _tidy_piecewise(sp.piecewise_fold(e.subs(m, m + 1) - e), m, 0, dd - 1)
    S = dd * e.subs(m, 1)
    TC = sp.simplify(S - H)
    # DTC = sum_i H(X_{-i}) - (d-1) H(X), all H(X_{-i}) equal by exchangeability
    DTC = sp.simplify(dd * e.subs(m, dd - 1) - (dd - 1) * H)
    hcard = _tidy_piecewise(sp.piecewise_fold(dd * (phi.subs(m, 0) - phi.subs(m, j))), j, 0, dd - 1)
    h = bernstein_sum(hcard, j, dd - 1, t)
    # independent route: Info(X; X_t) = sum_m B_{d,m}(t) e_m, h = S - d/dt Info
    info_t = bernstein_sum(e.subs(m, j), j, dd, t)
    h_info = S - sp.diff(info_t, t)
    dh = sp.diff(h, t)
    ugc01 = _integrate01(t * (1 - t) * dh, t)
    tc_g = _integrate01((1 - t) * dh, t)
    dtc_g = _integrate01(t * dh, t)
    r = sp.exp(LAMBDA_SYMBOL) / (1 + sp.exp(LAMBDA_SYMBOL))
    dens = sp.factor(sp.powsimp(dh.subs(t, r) * r**2 * (1 - r) ** 2, force=True))
    back = {_N: d - offset}

    def out(x):
        return sp.factor_terms(sp.powsimp(x.subs(back)))

    return ClosedForms(
        d=d, entropy=out(H), entropy_coefficient=sp.Lambda(m, e.subs(back)),
        profile=sp.Lambda(m, phi.subs(back)), total_correlation=out(TC),
        dual_total_correlation=out(DTC), gain=out(h), gain_via_info=out(h_info),
        ugc_total=out(ugc01), tc_from_gain=out(tc_g), dtc_from_gain=out(dtc_g),
        ugc_density=out(dens),
    )


def repeated_symbol_closed_forms(symbol_entropy=None) -> ClosedForms:
    r"""Repeated symbol :math:`X_1 = \dots = X_d \sim w`, derived by sympy for symbolic d >= 2.

    Input: :math:`H(X_S) = H_w` for every non-empty S (``symbol_entropy``, default
    :math:`\log K` with ``K = Symbol('K', integer=True, positive=True)``, the uniform
    case). Derived (docs/theory.md §6):

    .. math::

        e_m = H_w\,[m \ge 1], \quad \varphi_m = H_w\,[m = 0], \quad
        TC = (d-1) H_w, \quad DTC = H_w,

        h(t) = d H_w \bigl(1 - (1-t)^{d-1}\bigr), \quad
        H(0,1) = \tfrac{d-1}{d+1} H_w, \quad
        q(\lambda) = d(d-1) H_w\, r^2 (1-r)^d,

    with :math:`\int_0^1 (1-t)h' = TC`, :math:`\int_0^1 t h' = DTC`. :math:`h` is derived
    twice: from the Bernstein form of :math:`h^{card}` and from
    :math:`S - \frac{d}{dt}\mathrm{Info}(X; X_t)`. The derivation runs once with an
    opaque symbol for :math:`H_w` (cached); ``symbol_entropy`` is substituted afterwards.
    """
    if symbol_entropy is None:
        symbol_entropy = sp.log(sp.Symbol("K", integer=True, positive=True))
    Hw = _exact(symbol_entropy, "symbol_entropy")
    cf = _repeated_symbol_derivation()
    return ClosedForms(*[x.xreplace({_H_W: Hw}) if isinstance(x, sp.Basic) else x for x in cf])


_H_W = sp.Symbol("H_w", positive=True)


@functools.lru_cache(maxsize=None)
def _repeated_symbol_derivation() -> ClosedForms:
    def level(m, dd):
        return sp.Piecewise((0, sp.Eq(m, 0)), (_H_W, True))

    return _exchangeable_closed_forms(level, 2)


@functools.lru_cache(maxsize=None)
def parity_closed_forms() -> ClosedForms:
    r"""Global parity on d bits (:math:`X_d` = XOR of the others), derived by sympy for d >= 2.

    Input: :math:`H(X_S) = \min(|S|, d-1) \log 2`. Derived (docs/theory.md §6):

    .. math::

        \varphi_m = \log 2\,[m \le d-2], \quad TC = \log 2, \quad DTC = (d-1)\log 2, \quad
        h(t) = d \log 2\; t^{d-1}, \quad H(0, 1) = \tfrac{d-1}{d+1} \log 2,

    with :math:`q_{par}(\lambda) = q_{rep}(-\lambda)` (the repeated bit's density, K = 2).
    """

    def level(m, dd):
        return sp.Piecewise(((dd - 1) * sp.log(2), sp.Eq(m, dd)), (m * sp.log(2), True))

    return _exchangeable_closed_forms(level, 2)


def markov_chain_closed_forms(a=None, b=None) -> ClosedForms:
    r"""Stationary two-state chain :math:`P = [[1-a, a], [b, 1-b]]` for symbolic d >= 3.

    With :math:`h_g = H(X_g \mid X_0)` (closed form in :math:`\lambda^g`,
    :math:`\lambda = 1-a-b`) and the gap rule for :math:`H(X_S)`, sympy derives

    .. math::

        H(X) = H(\pi) + (d-1) h_1, \quad TC = (d-1)\bigl(H(\pi) - h_1\bigr), \quad
        DTC = H(\pi) - (d-1) h_1 + (d-2) h_2

    (removing an end position leaves d-2 unit gaps; removing an interior one leaves d-3
    unit gaps and one gap of 2). The entropy coefficient is returned as an unevaluated
    sum over gaps, :math:`e_m = H(\pi) + \sum_{g=1}^{d-m+1}
    \frac{(d-g)\binom{d-g-1}{m-2}}{\binom dm} h_g` (m >= 2): sympy finds no closed form
    for it (nor for the profile and gain polynomial) because :math:`h_g` is a sum of
    :math:`x \log x` terms in :math:`\lambda^g`; ``.doit()`` after substituting d and m.
    The fields for the gain polynomial are ``None``.
    """
    a = sp.Symbol("a", positive=True) if a is None else _parameter(a, "a")
    b = sp.Symbol("b", positive=True) if b is None else _parameter(b, "b")
    _check_interval(a, "a", 0, 1, open_lo=True)
    _check_interval(b, "b", 0, 1, open_lo=True)
    return _markov_chain_closed_forms(a, b)


@functools.lru_cache(maxsize=None)
def _markov_chain_closed_forms(a, b) -> ClosedForms:
    """The cached body of :func:`markov_chain_closed_forms` (arguments checked, hashable)."""
    d, m = D_SYMBOL, M_SYMBOL
    g = sp.Symbol("g", integer=True, positive=True)
    _, H_pi, gap = _chain_parts(a, b)
    # derive with opaque symbols for H(pi), h_1, h_2; substitute them at the end
    Hs, h1, h2 = sp.symbols("H_pi h_1 h_2")
    dd = _N + 3
    H = Hs + (dd - 1) * h1
    sum_minus_i = 2 * (Hs + (dd - 2) * h1) + (dd - 2) * (Hs + (dd - 3) * h1 + h2)
    TC = sp.factor(sp.expand(dd * Hs - H))
    DTC = sp.collect(sp.expand(sum_minus_i - (dd - 1) * H), [Hs, h1, h2])
    fill = {Hs: H_pi, h1: gap(1), h2: gap(2)}
    back = {_N: d - 3}

    def out(x):
        return sp.collect(sp.expand(x.subs(back)), [Hs, h1, h2], sp.factor).xreplace(fill)

    w = (d - g) * sp.binomial(d - g - 1, m - 2) / sp.binomial(d, m)
    e = sp.Piecewise((0, sp.Eq(m, 0)), (H_pi, sp.Eq(m, 1)), (H_pi + sp.Sum(w * gap(g), (g, 1, d - m + 1)), True))
    return ClosedForms(
        d=d, entropy=out(H), entropy_coefficient=sp.Lambda(m, e),
        profile=sp.Lambda(m, e.subs(m, m + 1) - e),
        total_correlation=sp.factor(TC.subs(back)).xreplace(fill),
        dual_total_correlation=out(DTC),
    )


# ======================================================================================
# continuum schedule problem
# ======================================================================================
class ContinuumSchedule(NamedTuple):
    r"""Solution of the continuum schedule problem (see :func:`square_root_rule`).

    Attributes
    ----------
    s : the position variable (tokens revealed so far)
    slope : :math:`w(s) = |c'(s)|`
    euler_lagrange : the Euler–Lagrange equation (sympy Eq) in k(s)
    step_size : optimal :math:`k(s) = \frac{\int \sqrt w}{T \sqrt{w(s)}}`
    multiplier : the Lagrange multiplier :math:`\mu = (\int \sqrt w)^2 / (2T^2)`
    sqrt_integral : :math:`\int_{lo}^{hi} \sqrt{w(s)}\, ds` (an unevaluated Integral for
        a generic w)
    error : optimal continuum path KL :math:`(\int \sqrt w)^2 / (2T)`
    steps : T
    """

    s: sp.Symbol
    slope: sp.Expr
    euler_lagrange: sp.Eq
    step_size: sp.Expr
    multiplier: sp.Expr
    sqrt_integral: sp.Expr
    error: sp.Expr
    steps: sp.Expr

    def to_dict(self) -> dict:
        """Every field by name, JSON-ready (numpy arrays as lists, non-finite floats as strings)."""
        return record_dict(self)


S_SYMBOL = sp.Symbol("s", nonnegative=True)
STEPS_SYMBOL = sp.Symbol("T", positive=True)


def continuum_path_kl(k, slope, s=S_SYMBOL, lo=0, hi=D_SYMBOL) -> sp.Expr:
    r"""Continuum path KL of a step-size function: :math:`\tfrac12 \int_{lo}^{hi} k(s)\,|c'(s)|\,ds`.

    A step of size k at s costs :math:`\sum_{m<k} (c(s) - c(s+m)) \approx \tfrac12 k^2 |c'(s)|`
    and there are :math:`ds/k` steps per unit of s (LZ25, regime d/T large).
    """
    k, slope = _exact(k, "k"), _exact(slope, "slope")
    return sp.integrate(k * slope, (_symbol(s, "s"), _exact(lo, "lo"), _exact(hi, "hi"))) / 2


def continuum_steps(k, s=S_SYMBOL, lo=0, hi=D_SYMBOL) -> sp.Expr:
    r"""Number of steps of a step-size function: :math:`\int_{lo}^{hi} ds / k(s)`."""
    k = _exact(k, "k")
    if k == 0:
        raise ValueError("k: the step size must not be 0")
    return sp.integrate(1 / k, (_symbol(s, "s"), _exact(lo, "lo"), _exact(hi, "hi")))


def square_root_rule(slope=None, *, s=S_SYMBOL, lo=0, hi=D_SYMBOL, steps=STEPS_SYMBOL) -> ContinuumSchedule:
    r"""Euler–Lagrange solution of the continuum schedule problem (LZ25's square-root rule).

    Minimize :math:`J[k] = \tfrac12 \int k(s)\, w(s)\, ds` (:func:`continuum_path_kl`,
    :math:`w = |c'|`) subject to :math:`\int ds / k(s) = T`. With the Lagrangian
    :math:`L = \tfrac12 k w + \mu / k`, sympy's ``euler_equations`` gives
    :math:`w/2 - \mu/k^2 = 0`, hence

    .. math::

        k(s) = \sqrt{2\mu / w(s)} \propto |c'(s)|^{-1/2}, \qquad
        \sqrt{2\mu} = \frac{1}{T}\int \sqrt{w}, \qquad
        J_{\min} = \frac{\bigl(\int \sqrt{|c'(s)|}\, ds\bigr)^2}{2T}.

    :math:`J` is convex in k (second variation :math:`\int 2\mu\, \eta^2 / k^3 > 0`), so
    this stationary point is the minimum. Source: LZ25 (arXiv 2510.25544), the
    square-root information-profile rule. Proof: proofs/sqrt_rule.md
    (tests/proofs/test_sqrt_rule.py; tests/test_symbolic.py checks the first variation).

    Parameters
    ----------
    slope : expression in ``s`` for :math:`w(s) = |c'(s)| > 0`; default a generic
        positive function ``w(s)`` (then ``sqrt_integral`` stays an unevaluated Integral).
    s, lo, hi, steps : the variable, the interval of s, and T.
    """
    s = _symbol(s, "s")
    lo, hi, steps = _exact(lo, "lo"), _exact(hi, "hi"), _exact(steps, "steps")
    if (hi - lo).is_number and not (hi - lo) > 0:
        raise ValueError(f"hi: the interval [lo, hi] must have hi > lo, got [{lo}, {hi}]")
    if steps.is_number and not steps > 0:
        raise ValueError(f"steps: expected a symbol or a number > 0, got {steps}")
    w = sp.Function("w")(s) if slope is None else _exact(slope, "slope")
    if w.is_number and not w > 0:
        raise ValueError(f"slope: w(s) = |c'(s)| must be > 0, got {w}")
    mu = sp.Symbol("mu", positive=True)
    kf = sp.Function("k")(s)
    (el,) = euler_equations(kf * w / 2 + mu / kf, [kf], [s])
    # solve EL for k > 0 (w > 0): stand-in positive symbols for k(s) and w(s)
    kk, ww = sp.Symbol("kappa", positive=True), sp.Symbol("omega", positive=True)
    sols = sp.solve(el.lhs.subs(kf, kk).subs(w, ww), kk)
    if len(sols) != 1:  # pragma: no cover - sympy regression guard
        raise RuntimeError(f"expected one positive root of the Euler-Lagrange equation, got {sols}")
    # sqrt(2 mu) = rho > 0 keeps sympy from producing sqrt(W**2) = |W|
    rho = sp.Symbol("rho", positive=True)
    k_rho = sp.simplify(sols[0].subs(mu, rho**2 / 2)).subs(ww, w)
    # both the constraint and J are multiples of W = int sqrt(w): factor them out exactly
    sw = sp.sqrt(w)
    c_steps = sp.simplify(1 / k_rho / sw)
    c_cost = sp.simplify(k_rho * w / sw / 2)
    if s in c_steps.free_symbols or s in c_cost.free_symbols:  # pragma: no cover
        raise RuntimeError("the Euler-Lagrange solution does not factor through sqrt(w)")
    W = sp.Integral(sw, (s, lo, hi))
    if slope is not None:
        W = sp.simplify(W.doit())
    (rho_star,) = sp.solve(sp.Eq(c_steps * W, steps), rho)
    return ContinuumSchedule(
        s=s, slope=w, euler_lagrange=el, step_size=sp.simplify(k_rho.subs(rho, rho_star)),
        multiplier=sp.simplify(rho_star**2 / 2), sqrt_integral=W,
        error=sp.simplify((c_cost * W).subs(rho, rho_star)), steps=steps,
    )


class PowerLawSchedule(NamedTuple):
    r"""The continuum-optimal schedule of a power-law profile (see :func:`power_law_schedule`).

    Attributes
    ----------
    profile : :math:`c(s) = A (s+\sigma)^{-\alpha}`
    continuum : the :class:`ContinuumSchedule`
    step_size : :math:`k(s)`
    revealed : :math:`s(\tau)`, tokens revealed after :math:`\tau` steps (continuum)
    growth : :math:`(s(\tau+1)+\sigma)/(s(\tau)+\sigma)`; free of :math:`\tau` iff geometric
    error : :math:`(\int_0^d \sqrt{|c'|})^2/(2T)`
    """

    profile: sp.Expr
    continuum: ContinuumSchedule
    step_size: sp.Expr
    revealed: sp.Expr
    growth: sp.Expr
    error: sp.Expr

    def to_dict(self) -> dict:
        """Every field by name, JSON-ready (numpy arrays as lists, non-finite floats as strings)."""
        return record_dict(self)


TAU_SYMBOL = sp.Symbol("tau", nonnegative=True)


#: Largest numeric exponent of :func:`power_law_schedule`, and largest numeric A and sigma.
MAX_POWER = 64
MAX_POWER_CONSTANT = 10**6


def power_law_schedule(alpha=1, *, amplitude=None, shift=None, d=D_SYMBOL, steps=STEPS_SYMBOL) -> PowerLawSchedule:
    r"""Square-root rule for :math:`c(s) = A (s+\sigma)^{-\alpha}` on :math:`[0, d]`.

    :math:`|c'| = \alpha A (s+\sigma)^{-\alpha-1}`, so
    :math:`k(s) \propto (s+\sigma)^{(\alpha+1)/2}`. For :math:`\alpha = 1`
    (:math:`c' \propto s^{-2}`) sympy derives

    .. math::

        k(s) = \frac{(s+\sigma)\log\frac{d+\sigma}{\sigma}}{T}, \qquad
        s(\tau) + \sigma = \sigma \Bigl(\frac{d+\sigma}{\sigma}\Bigr)^{\tau/T}, \qquad
        \text{error} = \frac{A \log^2\frac{d+\sigma}{\sigma}}{2T}:

    step sizes proportional to :math:`s+\sigma`, i.e. a *geometric* schedule with ratio
    :math:`((d+\sigma)/\sigma)^{1/T}`. For :math:`\alpha \ne 1` the growth ratio depends
    on :math:`\tau` (polynomial, not geometric, growth).

    Parameters
    ----------
    alpha : exact positive number (default 1) or positive symbol.
    amplitude, shift : A and σ (default positive symbols ``A``, ``sigma``).
    d, steps : interval end and number of steps (default symbols).
    """
    alpha = _exact(alpha, "alpha")
    if (alpha <= 0) is sp.true:
        raise ValueError(f"alpha: must be > 0, got {alpha}")
    if alpha.is_number and alpha > MAX_POWER:
        raise ValueError(f"alpha: at most {MAX_POWER} (sympy's integrals of (s + sigma)**(-alpha)), got {alpha}")
    if alpha.is_Rational and alpha.q > 1000:  # issue 38: a float32 0.637 is 10689/16777216 and sympy crawls
        raise ValueError(f"alpha: a rational with denominator <= 1000 (sympy's integrals crawl on 2**-24 fractions), "
                         f"got {alpha}; pass e.g. fractions.Fraction(2, 3) or round it")
    A = sp.Symbol("A", positive=True) if amplitude is None else _exact(amplitude, "amplitude")
    sigma = sp.Symbol("sigma", positive=True) if shift is None else _exact(shift, "shift")
    for name, x in (("amplitude", A), ("shift", sigma)):
        if x.is_number and not 0 < x <= MAX_POWER_CONSTANT:
            raise ValueError(f"{name}: a number must lie in (0, {MAX_POWER_CONSTANT}] (sympy's simplification of "
                             f"the logs slows with large exact numbers; use a symbol and substitute), got {x}")
    s, tau = S_SYMBOL, TAU_SYMBOL
    c = A * (s + sigma) ** (-alpha)
    w = sp.simplify(-sp.diff(c, s))
    cont = square_root_rule(w, s=s, lo=0, hi=d, steps=steps)
    k = sp.factor(sp.expand_log(cont.step_size, force=True))
    # k(s) = C (s + sigma)^p with a constant C: integrate and invert with C opaque (fast)
    power = (alpha + 1) / 2
    C_expr = sp.simplify(k / (s + sigma) ** power)
    if s in C_expr.free_symbols:  # pragma: no cover - sympy regression guard
        raise RuntimeError(f"step size {k} is not a constant times (s + sigma)**{power}")
    C, y = sp.Symbol("C", positive=True), sp.Symbol("y", positive=True)
    tau_of_s = sp.integrate(1 / (C * y**power), (y, sigma, s + sigma), conds="none", risch=False)
    sols = sp.solve(sp.Eq(tau_of_s, tau), s, simplify=False)
    revealed = growth = None
    if len(sols) == 1:
        revealed = sp.simplify(sols[0].subs(C, C_expr))
        growth = sp.simplify(
            sp.powsimp((revealed.subs(tau, tau + 1) + sigma) / (revealed + sigma), force=True)
        )
    return PowerLawSchedule(
        profile=c, continuum=cont, step_size=k, revealed=revealed, growth=growth,
        error=sp.factor(sp.expand_log(cont.error, force=True)),
    )


# ======================================================================================
# Riemann bound by telescoping
# ======================================================================================
class RiemannCertificate(NamedTuple):
    r"""The Riemann bound for one schedule and a generic non-increasing profile.

    Attributes
    ----------
    schedule : the :class:`~mdmtheory.Schedule`
    decrements : :math:`\delta_j = \varphi_j - \varphi_{j+1} \ge 0`, j = 0..d-2 (symbols)
    floor : :math:`\varphi_{d-1}` (symbol)
    profile : :math:`\varphi_m = \varphi_{d-1} + \sum_{j \ge m} \delta_j`
    path_kl : :math:`\sum_t k_t \varphi_{s_t} - \sum_m \varphi_m`, linear in the δ
    bound : :math:`(k_{\max} - 1)(\varphi_0 - \varphi_{d-1})`
    slack : bound - path_kl, expanded (linear in the δ, free of the floor)
    coefficients : coefficient of each :math:`\delta_j` in the slack
    holds : all coefficients >= 0 (then slack >= 0 for every non-increasing profile)
    """

    schedule: Schedule
    decrements: tuple
    floor: sp.Symbol
    profile: tuple
    path_kl: sp.Expr
    bound: sp.Expr
    slack: sp.Expr
    coefficients: tuple
    holds: bool

    def to_dict(self) -> dict:
        """Every field by name, JSON-ready (numpy arrays as lists, non-finite floats as strings)."""
        return record_dict(self)


def riemann_bound_certificate(schedule) -> RiemannCertificate:
    r"""Prove the Riemann bound for ``schedule`` on every non-increasing profile, symbolically.

    .. math::

        \mathrm{KL}_{\text{path}}(k) \le (k_{\max} - 1)(\varphi_0 - \varphi_{d-1}).

    Writing :math:`\varphi_m = \varphi_{d-1} + \sum_{j \ge m} \delta_j` with
    :math:`\delta_j \ge 0`, step t contributes
    :math:`\sum_{m=s}^{s+k-1}(\varphi_s - \varphi_m) = \sum_{j=s}^{s+k-2} (s+k-1-j)\,\delta_j`,
    each coefficient at most :math:`k - 1 \le k_{\max} - 1`, and
    :math:`\sum_j \delta_j = \varphi_0 - \varphi_{d-1}` telescopes. sympy expands the slack;
    its δ-coefficients are :math:`k_{\max} - 1 - (s+k-1-j) \ge 0` inside a step and
    :math:`k_{\max} - 1` on the decrements between steps. Equality holds for constant
    schedules on profiles that drop only at the first position of each step
    (coefficient 0 there). ``schedule``: a :class:`~mdmtheory.Schedule` or sizes (e.g.
    ``Schedule.constant(d, T)``). Proof: proofs/riemann_bound.md
    (tests/proofs/test_riemann_bound.py).

    Examples
    --------
    >>> cert = riemann_bound_certificate((2, 2))
    >>> cert.slack, cert.holds
    (delta_1, True)
    """
    sched = schedule if isinstance(schedule, Schedule) else Schedule(schedule)
    d = sched.d
    delta = tuple(sp.Symbol(f"delta_{j}", nonnegative=True) for j in range(d - 1))
    floor = sp.Symbol(f"phi_{d - 1}", real=True)
    phi = tuple(floor + sp.Add(*delta[m:]) for m in range(d))
    pk = sp.expand(path_kl(phi, sched))
    bound = (sched.max_size - 1) * (phi[0] - phi[-1])
    slack = sp.expand(bound - pk)
    if floor in slack.free_symbols:  # pragma: no cover - the floor always cancels
        raise RuntimeError("the floor did not cancel")
    coeffs = tuple(slack.coeff(x) for x in delta)
    rest = sp.expand(slack - sp.Add(*[c * x for c, x in zip(coeffs, delta)]))
    holds = rest == 0 and all(c >= 0 for c in coeffs)
    return RiemannCertificate(
        schedule=sched, decrements=delta, floor=floor, profile=phi, path_kl=pk, bound=bound,
        slack=slack, coefficients=coeffs, holds=bool(holds),
    )
