r"""Argument checks shared by the modules: clear ValueErrors that name the argument.

One place decides what an integer, a real number and an array of reals are, and how large a
size may be. Every check raises ``ValueError`` whose message starts with the argument's name
(``"d: ..."``) and says what would be accepted; nothing is clipped, rounded or coerced from
text.

What is refused everywhere
--------------------------
* ``bool`` / ``numpy.bool_`` where a number is expected (``True`` is not 1 here);
* strings and bytes, also numeric ones (``"3"``, ``"0.5"``), and arrays of them;
* object arrays whose elements are not real numbers, complex numbers, ragged or deeply
  nested lists (more than 32 axes), and numbers too large for float64 (``10**400``);
* NaN and ±inf, unless a function documents that it accepts them.

One check per kind of argument (issue 38)
-----------------------------------------
A function declares its arguments by the check it calls at its top, and gets the same
refusal as every other function: a law (:func:`law_arg`; ``mdmtheory.laws.joint_arg`` for a
Joint: no lost mass unless the function documents that it takes a sampler's law), a planner
(``mdmtheory.samplers.planner_arg``, in the samplers wing because it resolves names: the class
itself refused, the capabilities the function needs read from ``Capabilities``), scores
(:func:`scores_arg`: no NaN), positions (:func:`positions_arg`: integers in 0..d−1, each
once), a profile (:func:`profile_arg`: non-negative, non-increasing) and subset entropies
(:func:`subset_entropies_arg`: the polymatroid axioms), numbers (:func:`int_arg`,
:func:`real_arg`: ±inf, NaN, 10**400 refused; numpy integers read as Python ints), values
within a range (:func:`in_range_array`).

Documented limits
-----------------
Sizes are refused beyond these maxima (``ValueError`` naming the argument and the limit),
before anything is allocated or looped over:

==================  =============  ===================================================
argument            maximum        why
==================  =============  ===================================================
``d``               2**16          positions of a law, profile, schedule or plan
``K``               2**24          alphabet size (dense tables also need K**d <= 2**24)
``steps``           2**16          steps of a schedule or grid (card schedules: <= d)
``max_steps``       2**16          as ``steps``
``steps_per_block`` 2**16          as ``steps``
``n``               2**24          Monte Carlo samples per call
``n_per_level``     2**24          Monte Carlo draws per level of a profile estimate
``resolution``      2**20          grid points of a discretized search
``blocks``          2**20          blocks of a partition (<= resolution)
``maxiter``         10**6          optimizer iterations
``length``          2**16          positions of a block or sequence (as ``d``)
``block_length``    2**16          positions of a block (as ``d``)
``max_post_steps``  2**10          revision steps after the last mask (each one a pass of the engine)
``n`` · ``d``       2**27          entries of the samples one ``sample(n, rng)`` call draws
any other integer   2**63 - 1      fits numpy's int64 (seeds, bases, block lengths)
==================  =============  ===================================================

Dense tables: at most :data:`mdmtheory.laws.MAX_OUTCOMES` = 2**24 entries (K**d); the exact
sampler engine: at most (K+1)**d <= 2**25 state entries (2**29 for random order with a Schedule,
whose level layout holds only the two levels of a step); mixtures of products and the
empirical oracle: at most :data:`mdmtheory.laws.MAX_MIXTURE_ENTRIES` = 2**26 entries
M·d·K; the block DP: ``resolution`` <= :data:`mdmtheory.optimal.card.MAX_BLOCK_RESOLUTION` = 4096.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["LIMITS", "INT_MAX", "MAX_NDIM", "int_arg", "size_arg", "seed_arg", "rng_arg", "real_arg", "tol_arg", "prob_arg",
           "float_array", "samples_array", "path_arg", "file_arg", "NoSuchFile", "work_bound",
           "sample_args", "MAX_SAMPLE_ENTRIES", "choice_arg", "bool_arg", "bool_array", "name_arg",
           "law_arg", "scores_arg", "positions_arg", "profile_arg", "PROFILE_TOL", "in_range_array",
           "subset_entropies_arg"]

#: Largest integer accepted for an argument without its own entry in :data:`LIMITS`.
INT_MAX = 2**63 - 1
#: Documented maximum of each size argument, by argument name (see the module docstring).
LIMITS = {
    "d": 1 << 16,
    "K": 1 << 24,
    "steps": 1 << 16,
    "max_steps": 1 << 16,
    "steps_per_block": 1 << 16,
    "n": 1 << 24,
    "n_per_level": 1 << 24,
    "resolution": 1 << 20,
    "blocks": 1 << 20,
    "maxiter": 10**6,
    "length": 1 << 16,
    "block_length": 1 << 16,
    "max_post_steps": 1 << 10,
}
#: Deepest nesting of an array argument (numpy's own limit is 64 axes).
MAX_NDIM = 32


def _is_bool(value) -> bool:
    return isinstance(value, (bool, np.bool_))


def int_arg(value, name: str, minimum: int, maximum: int | None = None, hint: str = "") -> int:
    """An integer argument in ``minimum..maximum`` (bools, floats and strings are refused).

    The maximum is also capped by the documented limit of ``name`` in :data:`LIMITS` (or
    :data:`INT_MAX`); the error then names that limit.
    """
    limit = LIMITS.get(name, INT_MAX)
    capped = maximum is None or maximum > limit
    top = limit if capped else maximum
    rng = f"in {minimum}..{top}"
    if _is_bool(value) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name}: expected an integer {rng}, got {_short(value)}{hint}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name}: expected an integer {rng}, got {value}{hint}")
    if value > top:
        why = f" (the documented limit of {name!r} is {limit})" if capped else hint
        raise ValueError(f"{name}: expected an integer {rng}, got {_short(value)}{why}")
    return value


def size_arg(value, name: str, minimum: int = 1, maximum: int | None = None, hint: str = "") -> int:
    """A size (a count of positions, steps, samples, rounds, ...): an integer ``>= minimum``
    and at most ``maximum`` or the documented limit of ``name`` (:data:`LIMITS`). A name with
    no entry in :data:`LIMITS` must pass its own documented ``maximum``: every loop whose
    length comes from the user is bounded before work."""
    if maximum is None and name not in LIMITS:
        raise TypeError(f"size_arg({name!r}): a size without an entry in LIMITS needs its documented maximum")
    return int_arg(value, name, minimum, maximum, hint)


def seed_arg(value, name: str = "seed") -> int:
    """A seed: an integer in 0..2**63 − 1 (bools, floats, text, None, dicts and arrays refused)."""
    return int_arg(value, name, 0, INT_MAX, " (a seed)")


def choice_arg(value, name: str, options) -> str:
    """One of the strings ``options`` (anything else, arrays included, refused by name)."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name}: expected one of {tuple(options)}, got {_short(value)}")
    return value


def bool_arg(value, name: str) -> bool:
    """A flag: ``True`` or ``False`` (numpy bools too); numbers, text and arrays refused."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected True or False, got {_short(value)}")
    return bool(value)


def name_arg(value, name: str = "name") -> str:
    """The argument name a helper puts at the head of its errors: a non-empty str."""
    if not isinstance(value, str) or not _NAME.match(value):
        raise ValueError(f"{name}: expected the caller's argument name (a letter, _ or a CLI option's -- first, at most 60 printable "
                         f"characters, e.g. 'p' or 'a, b'), got {_short(value)}")
    return value


#: What an argument label at the head of an error may be (``p``, ``a, b``, ``family(d)``, ``j/given``).
_NAME = __import__("re").compile(r"^(--)?[A-Za-z_][\w ,./()\[\]*'-]{0,59}$")


def rng_arg(value, name: str = "rng") -> np.random.Generator:
    """A ``numpy.random.Generator`` (``numpy.random.default_rng(seed)``); nothing is coerced."""
    if not isinstance(value, np.random.Generator):
        raise ValueError(f"{name}: expected a numpy.random.Generator (numpy.random.default_rng(seed)), "
                         f"got {_short(value)}")
    return value


#: Most entries n·d of one call's samples (a (n, d) int64 array of 1 GiB).
MAX_SAMPLE_ENTRIES = 1 << 27


def sample_args(n, rng, d: int) -> tuple[int, np.random.Generator]:
    """``(n, rng)`` of a ``sample(n, rng)`` method: ``n`` a size (<= ``LIMITS['n']``), the
    (n, d) draw at most :data:`MAX_SAMPLE_ENTRIES` entries, ``rng`` a numpy Generator."""
    n = int_arg(n, "n", 0)
    rng = rng_arg(rng)
    work_bound(n * max(int(d), 1), MAX_SAMPLE_ENTRIES, "n", f"n·d = {n}·{d} sample entries")
    return n, rng


def real_arg(value, name: str) -> float:
    """A finite real scalar (bools, strings and numbers beyond float64 refused)."""
    if _is_bool(value) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}: expected a finite real number, got {_short(value)}")
    try:
        value = float(value)
    except (OverflowError, ValueError, TypeError):
        raise ValueError(f"{name}: expected a finite real number, got {_short(value)} (beyond float64)") from None
    if not math.isfinite(value):
        raise ValueError(f"{name}: expected a finite real number, got {value}")
    return value


def tol_arg(tol, name: str = "tol") -> float:
    """A tolerance: a real >= 0 (a ValueError naming ``name`` otherwise)."""
    tol = real_arg(tol, name)
    if tol < 0:
        raise ValueError(f"{name}: expected a tolerance >= 0, got {tol}")
    return tol


def prob_arg(value, name: str, *, low_open: bool = False, high_open: bool = False) -> float:
    """A probability: a finite real in [0, 1] (``low_open`` / ``high_open``: 0 / 1 excluded)."""
    x = real_arg(value, name)
    if x < 0 or x > 1 or (low_open and x == 0) or (high_open and x == 1):
        rng = f"{'(' if low_open else '['}0, 1{')' if high_open else ']'}"
        raise ValueError(f"{name}: expected a probability in {rng}, got {x!r}")
    return x


def path_arg(value, name: str = "path") -> str:
    """A file-system path: a non-empty ``str`` or ``os.PathLike`` (bytes, numbers, lists and
    NUL characters refused); returned as ``str``. Whether it exists is the caller's check."""
    import os

    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected a path (str or pathlib.Path), got {_short(value)}")
    if not value or "\0" in value:
        raise ValueError(f"{name}: expected a non-empty path without NUL characters, got {_short(value)}")
    return value


class NoSuchFile(FileNotFoundError, ValueError):
    """A path argument that names no file: a ``FileNotFoundError`` (what ``open`` raises) that is
    also a ``ValueError`` naming the argument, as every other refused argument."""


def file_arg(value, name: str = "path") -> str:
    """An existing file: :func:`path_arg`, then :class:`NoSuchFile` (``"name: no such file
    ..."``) when nothing is there. ``bytes`` paths are decoded (``os.fsdecode``)."""
    import os

    if isinstance(value, (bytes, bytearray)):
        value = os.fsdecode(bytes(value))
    path = path_arg(value, name)
    if not os.path.isfile(path):
        raise NoSuchFile(f"{name}: no such file {path!r}")
    return path


def work_bound(count: int, limit: int, name: str, what: str) -> None:
    """Refuse before work a loop or allocation of ``count`` units beyond its documented
    ``limit``: ``ValueError("name: ...")`` saying what was counted (``what``)."""
    if count > limit:
        raise ValueError(f"{name}: {what} is {count if count < 10**18 else f'about 2**{count.bit_length()}'}, "
                         f"beyond the documented limit {limit}")


def float_array(value, name: str, *, ndim: int | None = None, what: str = "", finite: bool = True) -> np.ndarray:
    """A new float64 array read from numbers only (see the module docstring for what is refused).

    ``ndim``: required number of axes; ``what``: the expected shape in words, for errors;
    ``finite``: refuse NaN and ±inf.
    """
    shape = f" of shape {what}" if what else ""
    if isinstance(value, (str, bytes, bytearray)) or _is_bool(value) or value is None:
        raise ValueError(f"{name}: expected an array of real numbers{shape}, got {_short(value)}")
    try:
        raw = np.asarray(value)
        if raw.dtype.kind == "O":  # elements of unknown type: each must be a real number
            flat = raw.ravel()
            if not all(isinstance(x, numbers.Real) and not _is_bool(x) for x in flat):
                raise ValueError("elements must be real numbers")
            arr = np.array(flat.tolist(), dtype=np.float64).reshape(raw.shape)
        elif raw.dtype.kind in "iuf":
            arr = np.array(raw, dtype=np.float64)
        else:
            raise ValueError(f"elements must be real numbers, got dtype {raw.dtype}")
    except (TypeError, ValueError, OverflowError, RecursionError, MemoryError) as exc:
        msg = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise ValueError(f"{name}: cannot be read as an array of real numbers{shape} ({msg})") from None
    if arr.ndim > MAX_NDIM:
        raise ValueError(f"{name}: nested {arr.ndim} deep; expected an array{shape}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name}: expected an array{shape} ({ndim} axes), got shape {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: contains NaN or infinite entries")
    return arr


def bool_array(value, name: str, *, shape: tuple | None = None, ndim: int | None = None) -> np.ndarray:
    """A bool array (0/1 integers accepted; floats, text and objects refused), of ``shape``
    or ``ndim`` axes when given."""
    if value is None or isinstance(value, (str, bytes, bytearray, dict, set)):
        raise ValueError(f"{name}: expected a bool array, got {_short(value)}")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError, RecursionError, MemoryError) as exc:
        raise ValueError(f"{name}: cannot be read as a bool array ({str(exc)[:80]})") from None
    if arr.dtype.kind in "iu" and np.all((arr == 0) | (arr == 1)):
        arr = arr.astype(bool)
    if arr.dtype.kind != "b":
        raise ValueError(f"{name}: expected a bool array (or 0/1 integers), got dtype {arr.dtype}")
    if (shape is not None and arr.shape != tuple(shape)) or (ndim is not None and arr.ndim != ndim):
        want = shape if shape is not None else f"{ndim} axes"
        raise ValueError(f"{name}: expected a bool array of shape {want}, got shape {arr.shape}")
    return arr


def samples_array(value, name: str = "samples", *, d: int | None = None, K: int | None = None, min_rows: int = 1,
                  min_cols: int = 1, integral_floats: bool = False, tokens: str = "outcome indices") -> np.ndarray:
    """Samples as an (n, d) int64 array of tokens: the one check of integer samples.

    Refused (``ValueError`` starting with ``name``): None, text, bools, what numpy cannot
    read, arrays of another number of axes, fewer than ``min_rows`` rows or ``min_cols``
    columns, a row length other than ``d`` (when given), non-integer dtypes (floats are
    refused: ``0.7`` is not token 0; with ``integral_floats`` a float array whose entries are
    all finite integers is read as integers), and with ``K`` tokens outside 0..K−1
    (``tokens`` names them in the message). Without ``K`` negative tokens are not checked
    (callers that use −1 for a lost sample).
    """
    shape = "(n, d)" if d is None else f"(n, d={d})"
    if value is None or isinstance(value, (str, bytes, bytearray, dict, set)) or _is_bool(value):
        raise ValueError(f"{name}: expected an integer array {shape}, got {_short(value)}")
    try:
        x = np.asarray(value)
    except (TypeError, ValueError, OverflowError, RecursionError, MemoryError) as exc:
        msg = str(exc).splitlines()[0][:80] if str(exc) else type(exc).__name__
        raise ValueError(f"{name}: cannot be read as an integer array {shape} ({msg})") from None
    if integral_floats and x.dtype.kind == "f" and np.all(np.isfinite(x)) and np.all(x == np.round(x)):
        if x.size and float(np.max(np.abs(x))) >= 2.0**63:  # the cast would wrap (and warn)
            raise ValueError(f"{name}: token {float(np.max(np.abs(x))):g} out of range (tokens must be < 2**63)")
        x = x.astype(np.int64)
    sizes = [f"n >= {min_rows}" if min_rows > 0 else "", f"d >= {min_cols}" if d is None and min_cols > 0 else ""]
    if min_rows == min_cols and d is None and min_rows > 0:
        sizes = [f"n, d >= {min_rows}"]
    need = " and ".join(t for t in sizes if t)
    if (x.ndim != 2 or x.shape[0] < min_rows or x.shape[1] < min_cols or (d is not None and x.shape[1] != d)
            or x.dtype.kind not in "iu"):
        nonempty = min_rows > 0 and min_cols > 0
        raise ValueError(f"{name}: expected a{' non-empty' if nonempty else 'n'} integer array {shape}"
                         f"{' with ' + need if need else ''}, got shape {x.shape}, dtype {x.dtype}")
    if x.dtype.kind == "u" and x.size and int(x.max()) > INT_MAX:
        raise ValueError(f"{name}: token {int(x.max())} out of range (tokens must be < 2**63)")
    x = x.astype(np.int64)
    if K is not None and x.size and (int(x.min()) < 0 or int(x.max()) >= K):
        raise ValueError(f"{name}: {tokens} must lie in 0..{K - 1}, got {int(x.min())}..{int(x.max())}")
    return x


# == one check per kind of argument (issue 38) =================================================
def law_arg(p, name: str = "p", *, law_type=None, lost_ok: bool = False, what: str = "a data law") -> object:
    """A law argument: an instance of ``law_type`` (the caller passes :class:`mdmtheory.Joint`;
    this ground module imports no wing) with no lost mass unless ``lost_ok`` (a function that
    documents it takes the output law of a sampler). A Joint is normalized by construction
    (``table.sum() + lost == 1`` within 1e-9, :mod:`mdmtheory.laws.joint`), so the mass that is
    left to check is ``lost``: ``"p: has lost mass 0.2; ..."`` as ``sampler_law`` says it."""
    if law_type is not None and (isinstance(p, type) or not isinstance(p, law_type)):
        raise ValueError(f"{name}: expected a mdmtheory.{getattr(law_type, '__name__', 'law')} ({what}), "
                         f"got {type(p).__name__ if not isinstance(p, type) else 'the class ' + p.__name__}")
    lost = getattr(p, "lost", 0.0)
    if not lost_ok and isinstance(lost, numbers.Real) and lost > 0:
        raise ValueError(f"{name}: has lost mass {float(lost):.3g}; {what} must be normalized (lost=0): pass the "
                         f"data law, or renormalize, e.g. Joint(q.table / q.table.sum())")
    return p


def scores_arg(value, name: str = "scores", *, ndim: int | None = None, neg_inf: bool = False) -> np.ndarray:
    """Scores a rule ranks (confidences, margins, log-probabilities): a float64 array with no NaN
    (a NaN ranks anywhere); ``neg_inf``: −inf allowed (a position that can never be chosen)."""
    arr = float_array(value, name, ndim=ndim, finite=False)
    if np.isnan(arr).any():
        raise ValueError(f"{name}: contains NaN scores (a NaN has no rank); give finite scores")
    if np.isposinf(arr).any() or (not neg_inf and np.isneginf(arr).any()):
        raise ValueError(f"{name}: contains infinite scores; give finite scores"
                         f"{' (−inf marks a position never chosen)' if neg_inf else ''}")
    return arr


def positions_arg(value, name: str, d: int, *, unique: bool = True, min_len: int = 0,
                  max_len: int | None = None) -> tuple[int, ...]:
    """Positions of a d-position sequence: integers in 0..d−1 (bools, floats and text refused),
    without duplicates when ``unique`` (a position is revealed, or asked, once), between
    ``min_len`` and ``max_len`` entries (default d)."""
    if isinstance(value, (set, frozenset)):  # a set has no duplicates (and no order)
        value = sorted(value, key=lambda j: (not isinstance(j, numbers.Real), j if isinstance(j, numbers.Real) else 0))
    if value is None or isinstance(value, (str, bytes, bytearray, dict)) or _is_bool(value) \
            or isinstance(value, numbers.Number):
        raise ValueError(f"{name}: expected a sequence of positions in 0..{d - 1}, e.g. [0, 1], got {_short(value)}")
    if isinstance(value, np.ndarray) and value.ndim != 1:
        raise ValueError(f"{name}: expected a 1-d sequence of positions, got shape {value.shape}")
    try:
        items = list(value)
    except TypeError:
        raise ValueError(f"{name}: expected a sequence of positions in 0..{d - 1}, got {_short(value)}") from None
    top = d if max_len is None else max_len
    if not min_len <= len(items) <= top:
        raise ValueError(f"{name}: expected {min_len}..{top} positions, got {len(items)}")
    for j in items:
        if _is_bool(j) or not isinstance(j, numbers.Integral):
            raise ValueError(f"{name}: positions must be integers, got {_short(j)}")
        if not 0 <= int(j) < d:
            raise ValueError(f"{name}: position {j} is outside 0..{d - 1}")
    out = tuple(int(j) for j in items)
    if unique and len(set(out)) != len(out):
        dup = sorted({j for j in out if out.count(j) > 1})
        raise ValueError(f"{name}: repeated positions {dup}; give each position once")
    return out


#: Relative rise (to max |φ|) above the running minimum that still counts as rounding: the one
#: monotonicity tolerance of the package (``mdmtheory.information.MONOTONE_TOL`` is this value).
PROFILE_TOL = 1e-12


def profile_arg(values, name: str = "profile", *, tol: float = PROFILE_TOL, what: str = "an information profile"):
    """A profile that is a profile: a finite 1-d float array, non-negative and non-increasing.
    An information profile :math:`\varphi_i` (docs/theory.md) is the mean conditional mutual
    information of a position given i revealed ones; by the chain rule and the submodularity of
    entropy it is non-negative and non-increasing in i, so a vector that rises is no law's.
    The rule is the package's one (``Profile.is_nonincreasing``): the largest rise above the
    running minimum, and the most negative entry, at most ``tol · max|φ|``."""
    arr = float_array(values, name, ndim=1)
    scale = tol * (float(np.max(np.abs(arr))) if arr.size else 0.0)
    if arr.size and arr.min() < -scale:
        raise ValueError(f"{name}: has negative entries (min {arr.min():.3g}); {what} is non-negative")
    rise = arr - np.minimum.accumulate(arr) if arr.size else arr
    if arr.size and rise.max() > scale:
        i = int(np.argmax(rise > scale))
        raise ValueError(f"{name}: rises to {arr[i]:.6g} at index {i} after {np.min(arr[:i]):.6g}; {what} is "
                         f"non-increasing, so this vector is no law's")
    return arr


def subset_entropies_arg(values, name: str = "p", *, tol: float = 1e-9) -> np.ndarray:
    r"""A vector of 2**d subset entropies :math:`H(X_S)` (index = bitmask of S) that some law could
    have: finite, :math:`H(\emptyset) = 0`, monotone (:math:`H(X_{S \cup i}) \ge H(X_S)`) and,
    for d <= 20, submodular (:math:`H(X_{S\cup i}) - H(X_S) \ge H(X_{S\cup j\cup i}) - H(X_{S\cup j})`,
    the local form, equivalent to the global one) — the polymatroid axioms every entropy vector
    satisfies (Fujishige 1978; Yeung, *Information Theory and Network Coding*, §13.2). Each within
    ``tol · max(1, max H)``. Work: d² passes over 2**(d−2) entries (submodularity is skipped above
    d = 20, where it would cost more than the functions that read the vector)."""
    H = float_array(values, name)
    n = H.shape[0] if H.ndim == 1 else 0
    if H.ndim != 1 or n < 2 or n & (n - 1):
        raise ValueError(f"{name}: expected a Joint or a vector of 2**d subset entropies (d >= 1), got shape {H.shape}")
    d = n.bit_length() - 1
    eps = tol * max(1.0, float(np.abs(H).max()))
    if H.min() < -eps:
        raise ValueError(f"{name}: subset entropies must be >= 0, got min {H.min():.3g}")
    if abs(H[0]) > eps:
        raise ValueError(f"{name}: H(empty set) at index 0 must be 0, got {H[0]:.3g}")
    cube = H.reshape((2,) * d)  # axis a <-> bit d-1-a of the index
    for a in range(d):
        gain = np.diff(cube, axis=a)
        if gain.min() < -eps:
            raise ValueError(f"{name}: adding position {d - 1 - a} lowers an entropy by {-gain.min():.3g}; subset "
                             f"entropies are monotone (H(X_S u i) >= H(X_S)), so this vector is no law's")
        if d <= 20:
            for b in range(d):
                if b != a and np.diff(gain, axis=b).max() > eps:
                    raise ValueError(f"{name}: the gain of position {d - 1 - a} grows when position {d - 1 - b} is "
                                     f"added; subset entropies are submodular, so this vector is no law's")
    return H


def in_range_array(values, name: str, low: float, high: float, *, ndim: int | None = 1) -> np.ndarray:
    """A finite float array whose entries lie in [low, high] (e.g. values a radius assumes bounded)."""
    arr = float_array(values, name, ndim=ndim)
    if arr.size and (arr.min() < low or arr.max() > high):
        raise ValueError(f"{name}: entries must lie in [{low:g}, {high:g}], got {arr.min():.6g}..{arr.max():.6g}")
    return arr


def _short(value) -> str:
    """repr of a value, shortened (a 10**400 integer or a deep list must not flood errors)."""
    if isinstance(value, numbers.Integral) and not _is_bool(value) and abs(int(value)) > 10**18:
        return f"an integer of {int(value).bit_length()} bits"
    try:
        text = repr(value)
    except (RecursionError, ValueError):
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."


def row_length(d: int, name: str = "samples") -> int:
    """The row length ``d`` of an (n, d) array argument ``name`` within the documented limit
    ``LIMITS["d"]`` (2**16 positions), checked before any per-position loop."""
    limit = LIMITS["d"]
    if d > limit:
        raise ValueError(f"{name}: rows of {d} tokens; the documented limit is d <= {limit} positions")
    return int(d)


def normal_quantile_arg(confidence, name: str = "confidence") -> float:
    r"""The quantile :math:`z = \Phi^{-1}((1 + c)/2)` of a two-sided normal interval at
    confidence c, finite: c must lie in (0, 1) and :math:`(1 + c)/2` must round below 1 in
    float64 (c <= 1 − 2**−52, z <= 8.2); closer to 1 the quantile is infinite and the interval
    would be (nan, nan) or (−inf, inf), so it is refused by ``name``."""
    from statistics import NormalDist

    c = real_arg(confidence, name)
    if not 0 < c < 1:
        raise ValueError(f"{name}: expected a probability in (0, 1), e.g. 0.95, got {c!r}")
    p = 0.5 + c / 2
    if not p < 1.0:
        raise ValueError(f"{name}: {c!r} is so close to 1 that the normal quantile z_((1+c)/2) is infinite in "
                         f"float64; give a confidence <= {1 - 2.0**-52!r}")
    return NormalDist().inv_cdf(p)
