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

__all__ = ["TokenizedData", "load_tokenizer", "load_text", "load_jsonl", "MAX_ROWS", "MAX_LENGTH"]

#: Largest number of rows read (checked while reading, before tokenizing more).
MAX_ROWS = 1_000_000
#: Largest row length (prompt + response tokens).
MAX_LENGTH = 1 << 16


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
        v = np.asarray(self.vocab if vocab is None else list(vocab), dtype=np.int64)
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
    try:
        return AutoTokenizer.from_pretrained(path, local_files_only=True)
    except Exception as exc:  # a garbage folder raises many kinds of errors
        raise ValueError(f"tokenizer: {path!r} is not a tokenizer folder ({type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:200]})") from None


def _pad_id(tok, pad_id) -> int:
    if pad_id is None:
        pad_id = getattr(tok, "pad_token_id", None)
        if pad_id is None:
            pad_id = getattr(tok, "eos_token_id", None)
        if pad_id is None:
            raise ValueError("pad_id: the tokenizer has no pad or EOS token; give pad_id (a token id)")
    if isinstance(pad_id, bool) or not isinstance(pad_id, (int, np.integer)) or pad_id < 0:
        raise ValueError(f"pad_id: expected a token id >= 0, got {pad_id!r}")
    return int(pad_id)


def _length(x, name: str, minimum: int) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not minimum <= x <= MAX_LENGTH:
        raise ValueError(f"{name}: expected an integer in {minimum}..{MAX_LENGTH}, got {x!r}")
    return int(x)


def _encode(tok, text: str) -> list[int]:
    ids = tok.encode(text, add_special_tokens=False) if _takes_special(tok) else tok.encode(text)
    if hasattr(ids, "ids"):  # a tokenizers.Tokenizer returns an Encoding
        ids = ids.ids
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
    tok = load_tokenizer(tokenizer)
    L = _length(length, "length", 1)
    pad = _pad_id(tok, pad_id)
    rows, cut, padded = [], 0, 0
    for _, line in _lines(path):
        if not line.strip():
            continue
        r, c, p = _fit_right(_encode(tok, line), L, pad)
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
    tok = load_tokenizer(tokenizer)
    Lp = _length(prompt_length, "prompt_length", 0)
    Lr = _length(response_length, "response_length", 1)
    if Lp + Lr > MAX_LENGTH:
        raise ValueError(f"prompt_length: prompt + response = {Lp + Lr} tokens exceed {MAX_LENGTH}")
    pad = _pad_id(tok, pad_id)
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
        pr, cp, pp = _fit_left(_encode(tok, obj["prompt"]), Lp, pad)
        rr, cr, pr_ = _fit_right(_encode(tok, obj["response"]), Lr, pad)
        rows.append(pr + rr)
        for i, flag in enumerate((cp, cr, pp, pr_)):
            counts[i] += flag
    rule = (f"prompt: last {Lp} tokens kept, shorter prompts left-padded; response: first {Lr} tokens kept, "
            f"shorter responses right-padded; pad token {pad}")
    return _finish(rows, Lp, pad, tuple(counts), rule)
