r"""Hypothesis strategies for property-based tests of masked-diffusion theory.

The strategies generate *valid* inputs only: every :class:`~mdmtheory.Joint` is built by
exact normalization (``w / w.sum()``, so it sums to 1 within ~1e-16), every
:class:`~mdmtheory.Schedule` sums to its d, every :class:`~mdmtheory.Grid` is strictly
increasing in [0, 1]. They are what ``tests/proofs/`` uses to check each result of
``proofs/``; use them to test your own bounds:

.. code-block:: python

    from hypothesis import given
    import mdmtheory as mt
    from mdmtheory.testing import joint_and_schedule

    @given(joint_and_schedule(d=(2, 4), K=(2, 3)))
    def test_my_bound(case):
        p, sched = case
        assert mt.path_kl(p, sched) <= my_bound(p, sched) + 1e-12

hypothesis is a test extra: ``pip install 'mdmtheory[test]'``.

Strategies
----------
joints
    Random tables (with exact zeros and entries ~1e-12) and draws from
    :mod:`mdmtheory.laws.families`.
schedules
    Compositions of d.
grids
    Reveal-time grids, with or without the boundary (exact initialization / completion).
intervals
    Reveal-time intervals ``(a, b)`` with ``0 < a < b < 1``.
profiles
    Non-negative profiles, non-increasing by default.
joint_and_schedule, joint_and_grid
    A joint and a schedule (grid) that fits it.
"""

from __future__ import annotations

import math

import numpy as np

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - exercised only without the test extra
    raise ImportError(
        "mdmtheory.testing needs hypothesis, a test extra: pip install 'mdmtheory[test]'"
    ) from exc

from .laws.joint import Joint
from ._validate import _short, bool_arg, int_arg, real_arg
from .information.profile import Profile
from .schedules.plans import Grid, Schedule
from .laws import families as fam

__all__ = [
    "joints",
    "schedules",
    "grids",
    "intervals",
    "profiles",
    "joint_and_schedule",
    "joint_and_grid",
    "TABLE_STYLES",
    "FAMILY_NAMES",
]

#: Styles of random tables drawn by :func:`joints` (see its docstring).
TABLE_STYLES = ("dense", "sparse", "near_degenerate", "mixed")
#: Families of :mod:`mdmtheory.laws.families` drawn by :func:`joints` (binary-only ones need K = 2).
FAMILY_NAMES = (
    "product",
    "repeated",
    "parity",
    "xorsat",
    "markov_chain",
    "noisy_repeated_bit",
    "mixture_of_products",
    "ising_chain",
    "dirichlet",
)
_BINARY_ONLY = {"parity", "xorsat", "noisy_repeated_bit", "ising_chain"}

_REGULAR = st.floats(min_value=1e-3, max_value=1.0, allow_nan=False, allow_infinity=False)
_TINY = st.floats(min_value=1e-13, max_value=1e-11, allow_nan=False, allow_infinity=False)


#: Largest d, K or step count a strategy draws (small laws and plans: every draw is enumerated).
MAX_RANGE = 64


def _range(value, name: str, minimum: int, maximum: int = MAX_RANGE) -> tuple[int, int]:
    """An int or an inclusive ``(lo, hi)`` pair in ``minimum..maximum``, validated."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        lo = hi = int_arg(value, name, minimum, maximum)
    else:
        if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__") or len(value) != 2:
            raise ValueError(f"{name}: expected an int or an inclusive (lo, hi) pair, got {_short(value)}")
        lo, hi = (int_arg(x, name, minimum, maximum) for x in value)
    if lo < minimum or hi < lo:
        raise ValueError(f"{name}: need {minimum} <= lo <= hi, got ({lo}, {hi})")
    return lo, hi


def _normalized(w: np.ndarray) -> np.ndarray:
    """Exact normalization of non-negative weights with a positive sum."""
    return w / w.sum()


@st.composite
def _distribution(draw, K: int, allow_zeros: bool = True) -> np.ndarray:
    """A probability vector of length K (optionally with exact zeros)."""
    elem = st.one_of(_REGULAR, st.just(0.0)) if allow_zeros else _REGULAR
    w = np.array(draw(st.lists(elem, min_size=K, max_size=K)), dtype=np.float64)
    if w.sum() <= 0:
        w[draw(st.integers(0, K - 1))] = 1.0
    return _normalized(w)


@st.composite
def _random_table(draw, d: int, K: int, allow_zeros: bool, near_degenerate: bool) -> Joint:
    n = K**d
    styles = ["dense"]
    if allow_zeros:
        styles.append("sparse")
    if near_degenerate:
        styles.append("near_degenerate")
    if allow_zeros or near_degenerate:
        styles.append("mixed")
    style = draw(st.sampled_from(styles))
    regular = draw(st.lists(_REGULAR, min_size=n, max_size=n))
    w = np.array(regular, dtype=np.float64)
    if style == "sparse":
        keep = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
        w = np.where(keep, w, 0.0)
    elif style == "near_degenerate":
        # a few regular entries, the rest ~1e-12 (and exact zeros when allowed)
        big = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
        tiny = np.array(draw(st.lists(_TINY, min_size=n, max_size=n)))
        small = tiny
        if allow_zeros:
            zero = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
            small = np.where(zero & ~big, 0.0, tiny)
        w = np.where(big, w, small)
    elif style == "mixed":
        choices = [_REGULAR]
        if allow_zeros:
            choices.append(st.just(0.0))
        if near_degenerate:
            choices.append(_TINY)
        w = np.array(draw(st.lists(st.one_of(*choices), min_size=n, max_size=n)), dtype=np.float64)
    if w.sum() <= 0 or (style == "near_degenerate" and not np.any(w >= 1e-3)):
        w[draw(st.integers(0, n - 1))] = 1.0
    return Joint(_normalized(w).reshape((K,) * d))


@st.composite
def _family(draw, d: int, K: int, allow_zeros: bool) -> Joint:
    names = [f for f in FAMILY_NAMES if K == 2 or f not in _BINARY_ONLY]
    if d < 2:
        names = [f for f in names if f != "parity"]
    name = draw(st.sampled_from(names))
    dist = _distribution(K, allow_zeros)
    if name == "product":
        return fam.product(np.stack([draw(dist) for _ in range(d)]))
    if name == "repeated":
        return fam.repeated(d, K, draw(dist))
    if name == "parity":
        return fam.parity(d)
    if name == "xorsat":
        r = draw(st.integers(1, d))
        bits = draw(st.lists(st.integers(0, 1), min_size=d * r, max_size=d * r))
        return fam.xorsat(np.array(bits).reshape(d, r))
    if name == "markov_chain":
        P = np.stack([draw(dist) for _ in range(K)])
        return fam.markov_chain(P, d, initial=draw(dist))
    if name == "noisy_repeated_bit":
        return fam.noisy_repeated_bit(d, draw(st.floats(0.0, 0.5)))
    if name == "mixture_of_products":
        M = draw(st.integers(1, 3))
        marg = np.stack([np.stack([draw(dist) for _ in range(d)]) for _ in range(M)])
        return fam.mixture_of_products(draw(_distribution(M, allow_zeros)), marg)
    if name == "ising_chain":
        return fam.ising_chain(d, draw(st.floats(-3.0, 3.0)), draw(st.floats(-2.0, 2.0)))
    return fam.dirichlet(d, K, alpha=draw(st.floats(0.2, 2.0)), seed=draw(st.integers(0, 2**31 - 1)))


def joints(
    d=(2, 4),
    K=(2, 3),
    *,
    allow_zeros: bool = True,
    near_degenerate: bool = True,
    families: bool = True,
    max_outcomes: int = 256,
):
    r"""Strategy for valid joint laws :class:`~mdmtheory.Joint` on :math:`[K]^d`.

    Half of the draws (when ``families``) come from :mod:`mdmtheory.laws.families` — product,
    repeated symbol, parity, XORSAT, Markov chain (any initial law), noisy repeated bit,
    mixtures of products, Ising chain, Dirichlet — with random parameters; the others
    are random tables in one of :data:`TABLE_STYLES`:

    ``dense``
        entries in [1e-3, 1], normalized;
    ``sparse``
        a random subset of the entries set to exactly 0;
    ``near_degenerate``
        a few regular entries, the others ~1e-12 (and exact zeros);
    ``mixed``
        each entry regular, 0, or ~1e-12.

    Tables are normalized exactly (``w / w.sum()``); nothing needs renormalizing.

    Parameters
    ----------
    d, K : int or (lo, hi)
        Number of positions and alphabet size (inclusive ranges). Pairs with
        ``K**d > max_outcomes`` are never drawn.
    allow_zeros : bool
        Allow exact zeros (sparse tables, families with zero parameters).
    near_degenerate : bool
        Allow entries ~1e-12.
    families : bool
        Also draw from :mod:`mdmtheory.laws.families`.
    max_outcomes : int
        Largest table size ``K**d`` drawn (keeps tests fast).

    Returns
    -------
    hypothesis.strategies.SearchStrategy[Joint]

    Examples
    --------
    >>> from hypothesis import given
    >>> import mdmtheory as mt
    >>> @given(joints(d=3, K=2))
    ... def test_profile_sums_to_entropy(p):
    ...     assert abs(mt.information_profile(p).entropy - mt.entropy(p)) < 1e-9
    >>> test_profile_sums_to_entropy()
    """
    d_lo, d_hi = _range(d, "d", 1)
    K_lo, K_hi = _range(K, "K", 2)
    max_outcomes = int_arg(max_outcomes, "max_outcomes", 2, 1 << 24)
    pairs = [(dd, kk) for dd in range(d_lo, d_hi + 1) for kk in range(K_lo, K_hi + 1) if kk**dd <= max_outcomes]
    if not pairs:
        raise ValueError(
            f"max_outcomes: no (d, K) in d={d!r}, K={K!r} has K**d <= {max_outcomes}; raise it or shrink d, K"
        )

    @st.composite
    def strategy(draw):
        dd, kk = draw(st.sampled_from(pairs))
        if families and draw(st.booleans()):
            return draw(_family(dd, kk, allow_zeros))
        return draw(_random_table(dd, kk, allow_zeros, near_degenerate))

    return strategy()


def schedules(d: int, *, steps=None):
    r"""Strategy for schedules :class:`~mdmtheory.Schedule` of d tokens (compositions of d).

    Parameters
    ----------
    d : int
        Number of positions (>= 1).
    steps : int or (lo, hi), optional
        Number of steps T (default any, 1..d).

    Examples
    --------
    >>> from hypothesis import given
    >>> @given(schedules(5, steps=(2, 3)))
    ... def test_sizes(s):
    ...     assert sum(s.sizes) == 5 and 2 <= s.steps <= 3
    >>> test_sizes()
    """
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"d: expected a positive integer, got {d!r}")
    d = int(d)
    lo, hi = (1, d) if steps is None else _range(steps, "steps", 1)
    if hi > d:
        raise ValueError(f"steps: at most d={d} steps (every step reveals a token), got up to {hi}")

    @st.composite
    def strategy(draw):
        T = draw(st.integers(lo, hi))
        cuts = sorted(draw(st.sets(st.integers(1, d - 1), min_size=T - 1, max_size=T - 1))) if T > 1 else []
        return Schedule(np.diff([0, *cuts, d]))

    return strategy()


def grids(*, steps=(1, 4), allow_boundary: bool = True, interior: bool = False, min_gap: float = 1e-3):
    r"""Strategy for reveal-time grids :class:`~mdmtheory.Grid`, :math:`0 \le t_0 < \dots < t_N \le 1`.

    Parameters
    ----------
    steps : int or (lo, hi)
        Number of steps N (inclusive range).
    allow_boundary : bool
        Also draw grids with :math:`t_0 > 0` (exact initialization) and/or
        :math:`t_N < 1` (exact completion); otherwise :math:`t_0 = 0, t_N = 1`.
    interior : bool
        Always :math:`0 < t_0` and :math:`t_N < 1` (e.g. for the UGC, where
        :math:`\psi(0) = 0` and :math:`\psi(1) = \infty`).
    min_gap : float
        Smallest step :math:`t_{j+1} - t_j`, and smallest :math:`t_0` and :math:`1 - t_N`
        when those are drawn away from the boundary; must be > 0.

    Examples
    --------
    >>> from hypothesis import given
    >>> @given(grids(steps=3, interior=True))
    ... def test_times(g):
    ...     assert 0 < g.times[0] and g.times[-1] < 1 and g.steps == 3
    >>> test_times()
    """
    lo, hi = _range(steps, "steps", 1)
    if not (0.0 < real_arg(min_gap, "min_gap") and (hi + 2) * min_gap < 1.0):
        raise ValueError(f"min_gap: need 0 < min_gap and (steps + 2) * min_gap < 1, got {min_gap}")
    unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False, allow_subnormal=False)

    @st.composite
    def strategy(draw):
        N = draw(st.integers(lo, hi))
        start = end = False
        if interior:
            start = end = True
        elif allow_boundary:
            start, end = draw(st.booleans()), draw(st.booleans())
        gaps = np.array(draw(st.lists(unit, min_size=N, max_size=N)), dtype=np.float64)
        b0 = draw(unit) if start else 0.0
        b1 = draw(unit) if end else 0.0
        n_fixed = N + int(start) + int(end)
        free = 1.0 - n_fixed * min_gap
        total = b0 + b1 + gaps.sum()
        if total <= 0:
            gaps[:] = 1.0
            b0, b1 = float(start), float(end)
            total = b0 + b1 + N
        lead = (min_gap + free * (b0 / total)) if start else 0.0
        steps_ = min_gap + free * (gaps / total)
        t = np.concatenate([[lead], lead + np.cumsum(steps_)])
        if not end:  # the trailing gap is 0: land exactly on 1 (rounding aside)
            t[-1] = 1.0
        return Grid(t)

    return strategy()


def intervals(*, min_gap: float = 1e-3):
    r"""Strategy for reveal-time intervals ``(a, b)`` with ``0 < a < b < 1``.

    Both ends and the width are at least ``min_gap`` away from each other and from 0, 1.

    Examples
    --------
    >>> from hypothesis import given
    >>> @given(intervals())
    ... def test_interval(ab):
    ...     a, b = ab
    ...     assert 0 < a < b < 1
    >>> test_interval()
    """
    return grids(steps=1, interior=True, min_gap=min_gap).map(lambda g: g.times)


def profiles(d=(1, 8), *, monotone: bool = True, max_value: float = math.log(4)):
    r"""Strategy for :class:`~mdmtheory.Profile` values :math:`\varphi_0, \dots, \varphi_{d-1} \ge 0`.

    Parameters
    ----------
    d : int or (lo, hi)
        Length.
    monotone : bool
        Non-increasing (an exact information profile, or a cost the Monge DP accepts);
        exact ties are drawn too. False gives arbitrary non-negative values (e.g. a
        model's cross-entropy profile).
    max_value : float
        Upper bound of :math:`\varphi_0` (monotone) or of every value.

    Examples
    --------
    >>> from hypothesis import given
    >>> @given(profiles(4))
    ... def test_monotone(prof):
    ...     assert prof.is_nonincreasing(tol=0.0)
    >>> test_monotone()
    """
    lo, hi = _range(d, "d", 1)
    bool_arg(monotone, "monotone")
    if real_arg(max_value, "max_value") < 0:
        raise ValueError(f"max_value: expected a number >= 0, got {max_value!r}")
    value = st.one_of(st.just(0.0), st.floats(min_value=0.0, max_value=1.0, allow_nan=False))

    @st.composite
    def strategy(draw):
        n = draw(st.integers(lo, hi))
        raw = np.array(draw(st.lists(value, min_size=n, max_size=n)), dtype=np.float64)
        if not monotone:
            return Profile(max_value * raw)
        # v_m = max_value * (sum of raw[m:]) / max(1, sum raw): non-increasing, ties where raw = 0
        tail = np.cumsum(raw[::-1])[::-1]
        scale = max(1.0, float(tail[0])) if n else 1.0
        return Profile(max_value * tail / scale)

    return strategy()


def joint_and_schedule(d=(2, 4), K=(2, 3), *, steps=None, **joint_options):
    r"""Strategy for pairs ``(p, schedule)`` with a schedule of p's d positions.

    Parameters
    ----------
    d, K, **joint_options
        Passed to :func:`joints`.
    steps : int or (lo, hi), optional
        Passed to :func:`schedules` (clipped to at most d steps).

    Examples
    --------
    >>> from hypothesis import given
    >>> import mdmtheory as mt
    >>> @given(joint_and_schedule(d=3, K=2))
    ... def test_path_kl_nonneg(case):
    ...     p, sched = case
    ...     assert mt.path_kl(p, sched) >= -1e-12
    >>> test_path_kl_nonneg()
    """
    base = joints(d, K, **joint_options)

    @st.composite
    def strategy(draw):
        p = draw(base)
        s = None
        if steps is not None:
            s_lo, s_hi = _range(steps, "steps", 1)
            s = (min(s_lo, p.d), min(s_hi, p.d))
        return p, draw(schedules(p.d, steps=s))

    return strategy()


def joint_and_grid(d=(2, 4), K=(2, 3), *, steps=(1, 3), allow_boundary: bool = True, **joint_options):
    r"""Strategy for pairs ``(p, grid)``: a joint (:func:`joints`) and a grid (:func:`grids`).

    Examples
    --------
    >>> from hypothesis import given
    >>> import mdmtheory as mt
    >>> @given(joint_and_grid(d=3, K=2, steps=2))
    ... def test_grid_path_kl_nonneg(case):
    ...     p, grid = case
    ...     assert mt.path_kl(p, grid) >= -1e-12
    >>> test_grid_path_kl_nonneg()
    """
    return st.tuples(joints(d, K, **joint_options), grids(steps=steps, allow_boundary=allow_boundary))
