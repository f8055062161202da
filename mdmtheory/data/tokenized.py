r"""Text in, with the user's own tokenizer: rows of token ids, a prompt length and a vocabulary.

Two inputs (issue 18 §3):

* :func:`load_text` — one sequence per line (unconditional data);
* :func:`load_jsonl` — one JSON object per line with string fields ``prompt`` and
  ``response`` (prompt/response pairs).

The tokenizer is a local Hugging Face tokenizer folder (``AutoTokenizer.from_pretrained(path,
local_files_only=True)``; nothing is downloaded) or an already loaded tokenizer object. No
special tokens are added (``add_special_tokens=False``): the rows are exactly the tokens of
the text.

**Fixed length, with a stated rule.** Estimators need rows of one length d.

* prompt: the last ``prompt_length`` tokens are kept (the ones next to the response) and a
  shorter prompt is **left**-padded with the pad token;
* response (and plain text): the first ``length`` tokens are kept and a shorter one is
  **right**-padded with the pad token — as LLaDA pads answers with EOS, the padding is part
  of what the model generates and is scored like any other token.

The pad token is ``pad_id`` if given, else the tokenizer's ``pad_token_id``, else its
``eos_token_id`` (refused when it has neither). :class:`TokenizedData` reports how many rows
were cut and how many padded.

**The tokenizer is checked, not trusted** (issue 30 §3). Its vocabulary size V is
``len(tokenizer)`` (or ``vocab_size`` / ``get_vocab_size()``) where it says one; the pad id
must lie in 0..V−1 (else 0..:data:`MAX_TOKEN_ID`), checked before any line is read, and
every id it returns must be an integer in the same range (``ValueError`` naming
``tokenizer``, with the line). A folder whose ``tokenizer_config.json`` names a class that
its files are not is refused: a ``tokenizer_class`` transformers does not know (it would
silently load another class), or a class whose vocabulary differs from the folder's own
``tokenizer.json`` (e.g. ``BertTokenizer`` over a word-level file: it adds ``[CLS]`` and
``[SEP]`` ids the model never saw).

**Outcomes.** The bridge scores a position over an outcome vocabulary ``vocab`` (token ids;
outcome k is token ``vocab[k]``, :mod:`mdmtheory.bridge.model`). The default is the sorted
set of token ids seen in the rows (pad included); :meth:`TokenizedData.outcomes` maps the
rows to outcome indices for the estimators, with ``prompt_length`` for the positions that
are never masked, scored or counted.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from .._estimate import Record
from .._validate import int_arg

__all__ = ["TokenizedData", "load_tokenizer", "load_text", "load_jsonl", "MAX_ROWS", "MAX_LENGTH", "MAX_TOKEN_ID"]

#: Largest number of rows read (checked while reading, before tokenizing more).
MAX_ROWS = 1_000_000
#: Largest row length (prompt + response tokens).
MAX_LENGTH = 1 << 16
#: Largest token id of a tokenizer that does not say its vocabulary size (the bridge's limit, int32).
MAX_TOKEN_ID = 2**31 - 1


@dataclass(frozen=True, eq=False)
class TokenizedData(Record):
    """Rows of token ids (n, prompt_length + response length), immutable.

    Attributes: ``ids`` (int64, read-only), ``prompt_length``, ``pad_id``, ``vocab`` (sorted
    token ids seen), ``n_cut_prompt``/``n_cut`` (rows whose prompt / response or text was
    truncated), ``n_padded_prompt``/``n_padded`` (rows padded), ``rule`` (the rule in words).
    """

    ids: np.ndarray
    prompt_length: int
    pad_id: int
    vocab: tuple[int, ...]
    n_cut_prompt: int
    n_cut: int
    n_padded_prompt: int
    n_padded: int
    rule: str

    @property
    def n(self) -> int:
        return int(self.ids.shape[0])

    @property
    def d(self) -> int:
        return int(self.ids.shape[1])

    def outcomes(self, vocab=None) -> np.ndarray:
        """Rows as outcome indices: entry k stands for token ``vocab[k]`` (default: ``self.vocab``).

        Raises ValueError naming the first token id that is not in ``vocab``.
        """
        want = f"vocab: expected a non-empty sequence of distinct token ids (integers in 0..{MAX_TOKEN_ID})"
        if vocab is not None and (isinstance(vocab, (str, bytes, bytearray, dict, set, bool, np.bool_))
                                  or not hasattr(vocab, "__len__")):
            raise ValueError(f"{want}, got {_short(vocab)}")
        try:
            raw = np.asarray(self.vocab if vocab is None else list(vocab))
            if raw.dtype.kind not in "iu" or raw.ndim != 1 or (
                    raw.size and (raw.min() < 0 or raw.max() > MAX_TOKEN_ID)):
                raise ValueError
            v = raw.astype(np.int64)
        except (TypeError, ValueError, OverflowError, RecursionError):
            raise ValueError(f"{want}, got {_short(vocab)}") from None
        if v.ndim != 1 or v.size == 0 or len(set(v.tolist())) != v.size:
            raise ValueError(f"vocab: expected a non-empty sequence of distinct token ids, got {vocab!r}")
        order = np.argsort(v)
        pos = np.searchsorted(v[order], self.ids)
        pos = np.minimum(pos, v.size - 1)
        ok = v[order][pos] == self.ids
        if not ok.all():
            r, c = map(int, np.argwhere(~ok)[0])
            raise ValueError(f"vocab: token id {int(self.ids[r, c])} (row {r}, position {c}) is not an outcome; "
                             "add it to vocab or leave vocab to the default (every token seen)")
        return order[pos].astype(np.int64)

    def summary(self) -> dict:
        return {"n": self.n, "d": self.d, "prompt_length": self.prompt_length, "pad_id": self.pad_id,
                "K": len(self.vocab), "cut_prompt": self.n_cut_prompt, "cut": self.n_cut,
                "padded_prompt": self.n_padded_prompt, "padded": self.n_padded, "rule": self.rule}


def load_tokenizer(tokenizer):
    """A tokenizer object, or a local folder loaded with ``local_files_only=True``."""
    if not isinstance(tokenizer, (str, os.PathLike)):
        if not callable(getattr(tokenizer, "encode", None)):
            raise ValueError(f"tokenizer: expected a tokenizer folder or an object with encode(), got {tokenizer!r}")
        return tokenizer
    path = os.fspath(tokenizer)
    if not os.path.isdir(path):
        raise ValueError(f"tokenizer: no such folder {path!r} (a local Hugging Face tokenizer folder)")
    try:
        from transformers import AutoTokenizer
    except ImportError:  # pragma: no cover - the test extra has it
        raise ValueError("tokenizer: needs transformers: pip install 'mdmtheory[pipelines]'") from None
    named = _named_class(path)
    try:
        tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    except Exception as exc:  # a garbage folder raises many kinds of errors
        raise ValueError(f"tokenizer: {path!r} is not a tokenizer folder ({type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:200]})") from None
    _check_class(path, named, tok)
    _check_loaded_class(path, named, tok)
    return tok


def _check_loaded_class(path: str, named, tok) -> None:
    """The object loaded is the class tokenizer_config.json names (issue 38): transformers maps
    some names to another class (``PreTrainedTokenizer`` names the Python backend; AutoTokenizer
    loads the tokenizers backend instead), and a folder is what it says or is refused. A slow
    name whose fast sibling was loaded (``XTokenizer`` / ``XTokenizerFast``) is the same class."""
    if named is None:
        return
    from transformers.models.auto.tokenization_auto import tokenizer_class_from_name

    want = tokenizer_class_from_name(named)
    if want is None or isinstance(tok, want):
        return
    def stem(name: str) -> str:
        return name[:-4] if name.endswith("Fast") else name

    if stem(type(tok).__name__) == stem(want.__name__):
        return
    raise ValueError(f"tokenizer: {path!r}: tokenizer_config.json names class {named!r} ({want.__name__}), but "
                     f"transformers loaded a {type(tok).__name__}; fix tokenizer_class in tokenizer_config.json "
                     "(e.g. 'PreTrainedTokenizerFast' for a tokenizer.json)")


def _named_class(path: str):
    """The ``tokenizer_class`` named by the folder's tokenizer_config.json (None if none), refused
    when transformers does not know it (``AutoTokenizer`` would silently load another class)."""
    cfg = os.path.join(path, "tokenizer_config.json")
    if not os.path.isfile(cfg):
        return None
    try:
        with open(cfg, encoding="utf-8") as fh:
            conf = json.loads(fh.read(1 << 24))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"tokenizer: {path!r}: its tokenizer_config.json cannot be read ({type(exc).__name__})") from None
    name = conf.get("tokenizer_class") if isinstance(conf, dict) else None
    if not isinstance(name, str) or conf.get("auto_map"):  # remote code names its own classes
        return None
    from transformers.models.auto.tokenization_auto import tokenizer_class_from_name

    if tokenizer_class_from_name(name) is None:
        raise ValueError(f"tokenizer: {path!r}: tokenizer_config.json names tokenizer_class {name!r}, which transformers "
                         "does not know (another class would be loaded in its place); fix tokenizer_class, e.g. "
                         "'PreTrainedTokenizerFast' for a tokenizer.json")
    return name


def _check_class(path: str, named, tok) -> None:
    """The loaded class's vocabulary is the folder's own ``tokenizer.json`` (same tokens at the
    same ids, none added): else the class named in tokenizer_config.json is not what the files are."""
    file = os.path.join(path, "tokenizer.json")
    get_vocab = getattr(tok, "get_vocab", None)
    if not os.path.isfile(file) or not callable(get_vocab):
        return
    try:
        from tokenizers import Tokenizer

        own = Tokenizer.from_file(file).get_vocab(with_added_tokens=True)
        seen = dict(get_vocab())
    except Exception:  # noqa: BLE001 - a file the loaded class did not read as tokenizers JSON: nothing to compare
        return
    moved = sorted(t for t, i in own.items() if seen.get(t) != i)
    added = sorted(t for t in seen if t not in own and t not in _declared_tokens(path))
    if moved or added:
        what = (f"adds tokens {', '.join(map(repr, added[:4]))}{' ...' if len(added) > 4 else ''} that tokenizer.json "
                "does not have" if added else
                f"reads tokens {', '.join(map(repr, moved[:4]))}{' ...' if len(moved) > 4 else ''} at other ids")
        raise ValueError(f"tokenizer: {path!r}: tokenizer_config.json names class {named or type(tok).__name__!r}, "
                         f"but the folder's tokenizer.json is another tokenizer (the class {what}); fix or remove "
                         "tokenizer_class in tokenizer_config.json")


def _declared_tokens(path: str) -> set:
    """Tokens the folder declares besides tokenizer.json (tokenizer_config.json's
    ``added_tokens_decoder``, special_tokens_map.json, added_tokens.json): a class that adds
    them reads the folder as saved, not another tokenizer."""
    out: set = set()

    def strings(v):
        if isinstance(v, str):
            out.add(v)
        elif isinstance(v, dict):
            if isinstance(v.get("content"), str):
                out.add(v["content"])
            else:
                for k, w in v.items():
                    strings(w)
                    if isinstance(w, int):
                        out.add(k)
        elif isinstance(v, list):
            for w in v:
                strings(w)

    for name in ("tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"):
        try:
            with open(os.path.join(path, name), encoding="utf-8") as fh:
                conf = json.loads(fh.read(1 << 24))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            continue
        if name == "tokenizer_config.json":
            conf = {k: v for k, v in conf.items() if k != "tokenizer_class"} if isinstance(conf, dict) else {}
        strings(conf)
    return out


def _vocab_size(tok):
    """The tokenizer's vocabulary size V (ids 0..V−1) where it says one, else None."""
    for get in (lambda: len(tok), lambda: tok.vocab_size, lambda: tok.get_vocab_size(True)):
        try:
            V = get()
        except Exception:  # noqa: BLE001 - an object without that way of saying it
            continue
        if isinstance(V, (int, np.integer)) and not isinstance(V, (bool, np.bool_)) and 0 < V <= MAX_TOKEN_ID + 1:
            return int(V)
    return None


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _pad_id(tok, pad_id, V) -> int:
    """The pad id: given, else the tokenizer's pad, else its EOS; a token id of the tokenizer
    (0..V−1, V its vocabulary size, else 0..MAX_TOKEN_ID)."""
    top = MAX_TOKEN_ID if V is None else V - 1
    where = "" if V is None else f" (the tokenizer's vocabulary has ids 0..{top})"
    if pad_id is None:
        pad_id = getattr(tok, "pad_token_id", None)
        if pad_id is None:
            pad_id = getattr(tok, "eos_token_id", None)
        if pad_id is None:
            raise ValueError("pad_id: the tokenizer has no pad or EOS token; give pad_id (a token id)")
        return int_arg(pad_id, "pad_id", 0, top, f"{where}; the tokenizer's own pad/EOS id is not a token id of "
                       "its vocabulary: give pad_id")
    return int_arg(pad_id, "pad_id", 0, top, f"{where}; give a token id of the tokenizer (e.g. its pad or EOS)")


def _length(x, name: str, minimum: int) -> int:
    return int_arg(x, name, minimum, MAX_LENGTH)


def _encode(tok, text: str, V, no: int) -> list[int]:
    """The ids of one line, checked: integers in 0..V−1 (0..MAX_TOKEN_ID when V is unknown)."""
    top = MAX_TOKEN_ID if V is None else V - 1
    ids = tok.encode(text, add_special_tokens=False) if _takes_special(tok) else tok.encode(text)
    if hasattr(ids, "ids"):  # a tokenizers.Tokenizer returns an Encoding
        ids = ids.ids
    try:
        ids = list(ids)
    except TypeError:
        raise ValueError(f"tokenizer: encode() returned {_short(ids)} for line {no}; expected a list of token "
                         "ids") from None
    for i in ids:
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) or not 0 <= i <= top:
            raise ValueError(f"tokenizer: returned {_short(i)} for line {no}, not a token id of its vocabulary "
                             f"(0..{top}); the tokenizer is inconsistent with its own vocabulary")
    return [int(i) for i in ids]


def _takes_special(tok) -> bool:
    import inspect

    try:
        return "add_special_tokens" in inspect.signature(tok.encode).parameters
    except (TypeError, ValueError):
        return False


def _check_path(path) -> str:
    try:
        path = os.fspath(path)
    except TypeError:
        raise ValueError(f"path: expected a file path, got {path!r}") from None
    if not os.path.isfile(path):
        raise ValueError(f"path: no such file {path!r}")
    return path


def _lines(path):
    with open(path, encoding="utf-8", errors="strict") as fh:
        try:
            for no, line in enumerate(fh, 1):
                if no > MAX_ROWS:
                    raise ValueError(f"path: more than {MAX_ROWS} lines; split the file")
                yield no, line.rstrip("\n")
        except UnicodeDecodeError as exc:
            raise ValueError(f"path: {path!r} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _fit_right(ids, L, pad):
    return (ids[:L], len(ids) > L, len(ids) < L) if len(ids) >= L else (ids + [pad] * (L - len(ids)), False, True)


def _fit_left(ids, L, pad):
    if len(ids) >= L:
        return (ids[len(ids) - L:] if L else []), len(ids) > L, False
    return [pad] * (L - len(ids)) + ids, False, True


def _finish(rows, prompt_length, pad, counts, rule) -> TokenizedData:
    if not rows:
        raise ValueError("path: no rows (the file is empty or has only blank lines)")
    ids = np.asarray(rows, dtype=np.int64)
    ids.setflags(write=False)
    vocab = tuple(int(v) for v in np.unique(ids))
    return TokenizedData(ids, prompt_length, pad, vocab, *counts, rule)


def load_text(path, tokenizer, *, length: int, pad_id: int | None = None) -> TokenizedData:
    """One sequence per line (blank lines skipped), each cut or right-padded to ``length``."""
    path = _check_path(path)
    L = _length(length, "length", 1)
    if pad_id is not None:
        int_arg(pad_id, "pad_id", 0, MAX_TOKEN_ID)  # before the tokenizer is loaded
    tok = load_tokenizer(tokenizer)
    V = _vocab_size(tok)
    pad = _pad_id(tok, pad_id, V)
    rows, cut, padded = [], 0, 0
    for no, line in _lines(path):
        if not line.strip():
            continue
        r, c, p = _fit_right(_encode(tok, line, V, no), L, pad)
        rows.append(r)
        cut += c
        padded += p
    rule = f"first {L} tokens kept, shorter rows right-padded with token {pad}"
    return _finish(rows, 0, pad, (0, cut, 0, padded), rule)


def load_jsonl(path, tokenizer, *, prompt_length: int, response_length: int,
               pad_id: int | None = None) -> TokenizedData:
    """Prompt/response pairs: each line a JSON object with string fields ``prompt`` and
    ``response``; the prompt keeps its last ``prompt_length`` tokens (left-padded), the
    response its first ``response_length`` (right-padded)."""
    path = _check_path(path)
    Lp = _length(prompt_length, "prompt_length", 0)
    Lr = _length(response_length, "response_length", 1)
    if Lp + Lr > MAX_LENGTH:
        raise ValueError(f"prompt_length: prompt + response = {Lp + Lr} tokens exceed {MAX_LENGTH}")
    if pad_id is not None:
        int_arg(pad_id, "pad_id", 0, MAX_TOKEN_ID)  # before the tokenizer is loaded
    tok = load_tokenizer(tokenizer)
    V = _vocab_size(tok)
    pad = _pad_id(tok, pad_id, V)
    rows, counts = [], [0, 0, 0, 0]
    for no, line in _lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ValueError(f"path: line {no} is not a JSON object ({type(exc).__name__})") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("prompt"), str) or not isinstance(obj.get("response"), str):
            raise ValueError(f"path: line {no} needs string fields 'prompt' and 'response'")
        pr, cp, pp = _fit_left(_encode(tok, obj["prompt"], V, no), Lp, pad)
        rr, cr, pr_ = _fit_right(_encode(tok, obj["response"], V, no), Lr, pad)
        rows.append(pr + rr)
        for i, flag in enumerate((cp, cr, pp, pr_)):
            counts[i] += flag
    rule = (f"prompt: last {Lp} tokens kept, shorter prompts left-padded; response: first {Lr} tokens kept, "
            f"shorter responses right-padded; pad token {pad}")
    return _finish(rows, Lp, pad, tuple(counts), rule)
