r"""Joint laws on :math:`[K]^d`: a validated dense probability table.

A :class:`Joint` is an immutable record holding a float64 table of shape ``(K,)*d``.
Positions are numbered ``0 .. d-1``; a set of positions A is often passed as a bitmask
``sum(1 << j for j in A)`` (bit j is position j).

A sampler law may be *sub-normalized*: when a factorized step produces a partial sequence
:math:`x_A` with :math:`p(x_A) = 0` the exact conditionals are undefined, and the mass that
reached it is kept apart as ``lost`` (docs/design.md §6). The table then sums to ``1 - lost``. Data laws have
``lost == 0``.

Tolerance model
---------------
*Normalized* means: the entries are finite and non-negative and
:math:`|\sum_x p(x) + \mathrm{lost} - 1| \le` :data:`NORMALIZATION_TOL` (1e-9). A table
outside that tolerance is refused (``ValueError``: normalize it yourself). A table inside it
is stored bit for bit when it is normalized to rounding already
(:math:`|\sum_x p(x) + \mathrm{lost} - 1| \le` :data:`RESCALE_TOL` = 1e-13) and is
otherwise **rescaled exactly once at construction**, ``table * ((1 - lost) / table.sum())``;
either way the stored law is normalized to float64 rounding. Every identity the tests check therefore holds to rounding
(~1e-15 relative), not merely to the 1e-9 acceptance tolerance: H = Σφ, φ non-increasing
(:func:`~mdmtheory.information_profile` also removes rounding-level rises, see there),
table + lost = 1, 0 <= KL(p‖q) <= path KL (:func:`~mdmtheory.kl` returns a rounding-level
negative sum as 0, the one documented clipping). Nothing else is ever rescaled, clipped or renormalized.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

import numpy as np

from .._estimate import Record
from .._validate import float_array, int_arg, law_arg, positions_arg, name_arg, real_arg, _short

__all__ = ["Joint", "Marginals", "NORMALIZATION_TOL", "RESCALE_TOL", "MAX_OUTCOMES", "positions_to_mask", "mask_to_positions", "prompt_positions", "joint_arg"]

#: Largest allowed deviation of ``table.sum() + lost`` from 1.
NORMALIZATION_TOL = 1e-9
#: Tables off by more than this (and at most NORMALIZATION_TOL) are rescaled at construction;
#: closer ones are normalized to rounding already and are stored bit for bit.
RESCALE_TOL = 1e-13
#: Largest dense table (K**d entries) accepted for exact work (2**24, 128 MiB of float64).
MAX_OUTCOMES = 1 << 24


def joint_arg(p, name: str = "p", *, lost_ok: bool = False, what: str = "a data law") -> "Joint":
    """The law argument of an exact function: a :class:`Joint` instance (not the class, not an
    oracle) with no lost mass unless ``lost_ok`` (:func:`mdmtheory._validate.law_arg`)."""
    return law_arg(p, name, law_type=Joint, lost_ok=lost_ok, what=what)


def positions_to_mask(positions: Iterable[int], d: int, *, name: str = "positions") -> int:
    """Bitmask of a set of positions, validating that each lies in ``0 .. d-1``."""
    name = name_arg(name)
    d = int_arg(d, "d", 1)
    mask = 0
    for j in positions_arg(positions, name, d):  # integers in 0..d-1, each once (issue 38)
        mask |= 1 << j
    return mask


def prompt_positions(given, d: int, *, name: str = "given") -> list[int]:
    """Prompt positions, checked: an iterable of distinct integers in 0..d−1 leaving at
    least one response position; returned as a list in the order given."""
    name = name_arg(name)
    try:
        G = [int(j) if isinstance(j, np.integer) else j for j in given]
    except TypeError:
        raise ValueError(f"{name}: expected an iterable of prompt positions, e.g. [0, 1], got {given!r}") from None
    positions_to_mask(G, d, name=name)
    if len(set(G)) != len(G):
        raise ValueError(f"{name}: repeated entries in {G}")
    if len(G) >= d:
        raise ValueError(f"{name}: a prompt of all d={d} positions leaves no response; give at most d - 1")
    return G


def mask_to_positions(mask: int, d: int) -> tuple[int, ...]:
    """Sorted positions of a bitmask (``d`` <= 2**16; ``mask`` an integer in 0..2**d - 1)."""
    d = int_arg(d, "d", 1)
    if isinstance(mask, (bool, np.bool_)) or not isinstance(mask, (int, np.integer)) or not 0 <= int(mask) < (1 << d):
        raise ValueError(f"mask: expected an integer bitmask in 0..2**{d}-1, got {type(mask).__name__}")
    mask = int(mask)
    return tuple(j for j in range(d) if mask >> j & 1)


@dataclass(frozen=True, eq=False, init=False)
class Joint(Record):
    r"""A probability law :math:`p` on :math:`[K]^d` as a dense float64 table.

    Parameters
    ----------
    table : array_like, shape ``(K,)*d``
        Probabilities, ``K >= 2``, ``d >= 1``. Entries must be finite and non-negative and
        sum to ``1 - lost`` within :data:`NORMALIZATION_TOL`; such a table is rescaled once
        to sum to ``1 - lost`` to rounding (the tolerance model of the module docstring).
    lost : float, keyword-only
        Mass kept apart by a sampler at zero-probability prefixes (0 for data laws).

    Examples
    --------
    >>> p = Joint([[0.5, 0.0], [0.0, 0.5]])
    >>> p.d, p.K
    (2, 2)
    >>> p.marginal([1])
    array([0.5, 0.5])
    """

    table: np.ndarray
    lost: float

    def __init__(self, table, *, lost: float = 0.0):
        arr = float_array(table, "table", what="(K,)*d", finite=False)
        if arr.ndim == 0:
            raise ValueError("table: expected an array of shape (K,)*d with d >= 1, got a scalar")
        K = arr.shape[0]
        if K < 2 or any(n != K for n in arr.shape):
            raise ValueError(
                f"table: every axis must have the same length K >= 2 (one axis per position), "
                f"got shape {arr.shape}"
            )
        if arr.size > MAX_OUTCOMES:
            raise ValueError(
                f"table: K**d = {arr.size} outcomes exceeds the exact limit {MAX_OUTCOMES}; "
                "use a structured family or the Monte Carlo estimators for larger laws"
            )
        if not np.all(np.isfinite(arr)):
            raise ValueError("table: contains NaN or infinite entries")
        if np.any(arr < 0):
            raise ValueError(f"table: contains negative entries (min {arr.min():.3g})")
        lost = real_arg(lost, "lost")
        if not 0.0 <= lost <= 1.0:
            raise ValueError(f"lost: must be a mass in [0, 1], got {lost}")
        total = float(arr.sum())
        if not abs(total + lost - 1.0) <= NORMALIZATION_TOL:
            raise ValueError(
                f"table: sums to {total!r} (+ lost {lost!r}), expected 1 within "
                f"{NORMALIZATION_TOL}; normalize it yourself (nothing is renormalized silently)"
            )
        if abs(total + lost - 1.0) > RESCALE_TOL and total > 0.0:  # rescale once (module docstring)
            arr *= (1.0 - lost) / total
        arr.setflags(write=False)
        object.__setattr__(self, "table", arr)
        object.__setattr__(self, "lost", lost)

    # -- shape -------------------------------------------------------------------------
    @property
    def d(self) -> int:
        """Number of positions."""
        return self.table.ndim

    @property
    def K(self) -> int:
        """Alphabet size."""
        return self.table.shape[0]

    def __repr__(self) -> str:
        extra = f", lost={self.lost:.3g}" if self.lost else ""
        return f"Joint(d={self.d}, K={self.K}{extra})"

    # -- marginals and conditionals -----------------------------------------------------
    def marginal(self, positions: Iterable[int]) -> np.ndarray:
        """Marginal table of ``X_A``, axes in the order the positions are given."""
        try:
            pos = list(positions)
        except TypeError:
            raise ValueError(f"positions: expected an iterable of positions, e.g. [j], got {positions!r}") from None
        positions_to_mask(pos, self.d, name="positions")
        if len(set(pos)) != len(pos):
            raise ValueError(f"positions: repeated entries in {pos}")
        rest = tuple(j for j in range(self.d) if j not in pos)
        m = self.table.sum(axis=rest) if rest else np.array(self.table)
        order = np.argsort(np.argsort(pos)) if pos else []
        return np.transpose(m, order) if pos else m

    def conditional(self, j: int, given: Mapping[int, int] | None = None) -> np.ndarray:
        r""":math:`p(x_j \mid x_A)` as a length-K vector, for the revealed values ``given``.

        Raises ValueError when :math:`p(x_A) = 0`: the prefix is unreachable and the
        conditional is undefined (see :meth:`conditional_table` for all prefixes at once).
        """
        if given is not None and not isinstance(given, Mapping):
            raise ValueError(f"given: expected a mapping {{position: token}}, got {given!r}")
        given = dict(given or {})
        positions_to_mask(list(given), self.d, name="given")
        positions_to_mask([j], self.d, name="j")
        if j in given:
            raise ValueError(f"j: position {j} is already revealed in given")
        for i, v in given.items():
            if not (isinstance(v, (int, np.integer)) and 0 <= v < self.K):
                raise ValueError(f"given: value {v!r} at position {i} is not a token in 0..{self.K - 1}")
        A = sorted(given)
        joint = self.marginal(A + [j])[tuple(given[i] for i in A)]
        mass = joint.sum()
        if mass <= 0:
            raise ValueError(f"given: the prefix {given} has probability 0 (unreachable); "
                             "the conditional is undefined there")
        return joint / mass

    def conditional_table(self, j: int, given: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
        r"""All conditionals :math:`p(x_j \mid x_A)` at once.

        Returns ``(cond, reachable)``: ``cond`` has shape ``(K,)*(|A|+1)`` (axes: A in
        increasing order, then x_j); ``reachable`` has shape ``(K,)*|A|`` and is False
        where :math:`p(x_A) = 0`; those rows of ``cond`` are 0 (undefined, never NaN).
        """
        try:
            A = list(given)
        except TypeError:
            raise ValueError(f"given: expected an iterable of positions (e.g. [] or [0, 2]), got {given!r}") from None
        positions_to_mask(A, self.d, name="given")
        positions_to_mask([j], self.d, name="j")
        A = sorted(A)
        if j in A:
            raise ValueError(f"j: position {j} is already in given")
        joint = self.marginal(A + [j])
        mass = joint.sum(axis=-1)
        reachable = mass > 0
        cond = np.divide(joint, mass[..., None], out=np.zeros_like(joint), where=reachable[..., None])
        return cond, reachable

    # -- prompts -------------------------------------------------------------------------
    def condition(self, positions: Iterable[int], values: Iterable[int]) -> "Joint":
        r"""The law of the other positions given :math:`X_G = v` (a prompt).

        .. math::

            p(x_R \mid x_G = v) = \frac{p(x_R, x_G = v)}{p(x_G = v)}, \qquad R = [d] \setminus G,

        a :class:`Joint` on the :math:`|R|` remaining positions, in increasing order. The
        given positions are fixed, never sampled, scored or counted: every exact function
        applied to the result is the prompt-conditioned quantity (the response's profile,
        sampler law, KL and optimal schedule). Averages over the law of the prompt:
        ``information_profile(p, given=G)`` and :func:`mdmtheory.samplers.prompted_kl`.

        Raises ValueError when :math:`p(x_G = v) = 0` (the prompt is impossible under p),
        when ``positions`` has repeats or leaves no position to generate, or when a value
        is not a token.

        >>> p = Joint([[0.4, 0.1], [0.1, 0.4]])
        >>> p.condition([0], [1]).table
        array([0.2, 0.8])
        """
        G = prompt_positions(positions, self.d, name="positions")
        try:
            vals = list(values)
        except TypeError:
            raise ValueError(f"values: expected one token per position, e.g. condition([0, 1], [3, 2]), "
                             f"got {values!r}") from None
        if len(vals) != len(G):
            raise ValueError(f"values: expected one token per position ({len(G)}), got {len(vals)}")
        for i, v in zip(G, vals):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or not 0 <= v < self.K:
                raise ValueError(f"values: {v!r} at position {i} is not a token in 0..{self.K - 1}")
        if self.lost:
            raise ValueError(f"p: has lost mass {self.lost:.3g}; condition a normalized law")
        index = [slice(None)] * self.d
        for i, v in zip(G, vals):
            index[i] = int(v)
        sub = self.table[tuple(index)]
        mass = float(sub.sum())
        if not mass > 0:
            raise ValueError(f"values: the prompt {dict(zip(G, vals))} has probability 0 under p "
                             "(the conditional law is undefined)")
        return Joint(sub / mass)


class Marginals:
    """Marginals of a table by bitmask, in keepdims form (length K on the axes of the set,
    1 elsewhere), each summed from a cached parent with one more position, never from the
    full table. Memory: at most (K+1)**d entries when every subset is requested.
    """

    def __init__(self, table: np.ndarray):
        if isinstance(table, Joint):
            table = table.table
        if not isinstance(table, np.ndarray) or table.dtype.kind != "f" or table.ndim < 1:
            raise ValueError(f"table: expected a float numpy array (a Joint's table), got {type(table).__name__}")
        if not np.all(np.isfinite(table)) or (table < 0).any() or float(table.sum()) > 1.0 + NORMALIZATION_TOL:
            # issue 38: the marginals of a law's table (finite, >= 0, mass at most 1: a sampler law's
            # table sums to 1 - lost)
            raise ValueError(f"table: expected a law's table (finite, >= 0, summing to at most 1 within "
                             f"{NORMALIZATION_TOL}), got a sum of {float(np.nansum(table)):.6g} or a NaN/negative entry")
        self.full = (1 << table.ndim) - 1
        self.cache = {self.full: table}

    def __call__(self, mask: int) -> np.ndarray:
        arr = self.cache.get(mask)
        if arr is None:
            missing = ~mask & self.full
            j = (missing & -missing).bit_length() - 1  # lowest position not in mask
            arr = self(mask | (1 << j)).sum(axis=j, keepdims=True)
            self.cache[mask] = arr
        return arr
