"""Text in, with the user's tokenizer, on the command line (``design``, ``estimate``, ``report``).

``--text FILE`` (one sequence per line) or ``--jsonl FILE`` (objects with string fields
``prompt`` and ``response``), tokenized with ``--tokenizer DIR`` (a local Hugging Face
tokenizer folder, ``local_files_only``) by :mod:`mdmtheory.data.tokenized`, cut or padded to
``--length`` (text) or ``--prompt-length`` + ``--response-length`` (JSONL) with the rule it
states. ``--vocab`` chooses the outcomes, the token ids that are scored: ``seen`` (default:
every token id in the rows, pad included), ``all`` (every id of the model but its mask), or
a list ``ID,ID,...`` or a file of whitespace-separated ids. With a token file and ``--model``,
``--vocab IDS`` names the token id of each outcome index (outcome k is id ``IDS[k]``; default
``all``: every id of the model but its mask, in order).

Every error is one :class:`~mdmtheory.cli._common.UsageError` naming the option.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass

import numpy as np

from ._common import note, options_for, UsageError
from ._inputs import read_tokens
from ._models import check_samples, KIND_WORDS, load_model, vocab_words

__all__ = ["add_text_arguments", "text_given", "TextData", "read_text", "read_rows", "facts_lines", "parse_vocab",
           "vocab_summary"]

#: Library argument names -> options (mdmtheory.data.tokenized).
_NAMES = {"length": "--length", "prompt_length": "--prompt-length", "response_length": "--response-length",
          "pad_id": "--pad-id", "tokenizer": "--tokenizer", "vocab": "--vocab"}


def add_text_arguments(parser: argparse.ArgumentParser, *, jsonl: bool = True) -> None:
    """The text options; ``jsonl=False`` (``report``, whose laws have no prompt): ``--text`` only."""
    g = parser.add_argument_group("text with a tokenizer (instead of a token file)")
    g.add_argument("--text", metavar="FILE", help="text, one sequence per line (needs --tokenizer and --length)")
    if jsonl:
        g.add_argument("--jsonl", metavar="FILE", help="JSON lines with string fields 'prompt' and 'response' "
                       "(needs --tokenizer, --prompt-length and --response-length)")
    else:
        parser.set_defaults(jsonl=None, response_length=None)
    g.add_argument("--tokenizer", metavar="DIR", help="a local Hugging Face tokenizer folder (never downloaded)")
    g.add_argument("--length", type=int, metavar="N", help="--text: tokens per row (longer rows cut, shorter right-padded)")
    if jsonl:
        g.add_argument("--response-length", type=int, metavar="N",
                       help="--jsonl: response tokens per row (first N kept, shorter right-padded)")
    g.add_argument("--pad-id", type=int, metavar="ID", help="padding token id (default: the tokenizer's pad, else EOS)")
    g.add_argument("--vocab", metavar="seen|all|IDS",
                   help="outcome token ids: 'seen' (default with --text: every id in the rows), 'all' (default "
                        "with a token file: every id of the model but its mask), comma-separated ids, or a file of "
                        "ids (with a token file and --model: outcome k is the k-th id)")


def text_given(args) -> bool:
    return getattr(args, "text", None) is not None or getattr(args, "jsonl", None) is not None


def parse_vocab(value: str | None):
    """'seen' (None), 'all', or a tuple of distinct token ids (a list or a file of them)."""
    if value is None or value == "seen":
        return None
    if value == "all":
        return "all"
    if os.path.isfile(value):
        try:
            with open(value, encoding="utf-8") as fh:
                text = fh.read(1 << 24)
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--vocab: cannot read {value!r} ({type(exc).__name__})") from None
        parts = text.split()
    else:
        parts = [p for p in value.replace(" ", "").split(",") if p]
    try:
        ids = [int(p) for p in parts]
    except ValueError:
        raise UsageError(f"--vocab: expected 'seen', 'all', comma-separated token ids or a file of ids, "
                         f"got {value[:80]!r}") from None
    if not ids or min(ids) < 0 or len(set(ids)) != len(ids):
        raise UsageError("--vocab: expected distinct token ids >= 0 (at least one)")
    return tuple(ids)


@dataclass(frozen=True)
class TextData:
    """Tokenized rows: ``data`` (a :class:`mdmtheory.data.TokenizedData`), the option
    that gave them, and the outcome choice (None = seen, "all", or token ids)."""

    data: object
    option: str
    vocab: object


def read_text(args, *, prompt_option: bool = True) -> TextData:
    """The rows of ``--text``/``--jsonl`` (exactly one), checked option by option."""
    from ..data import tokenized

    if args.text is not None and args.jsonl is not None:
        raise UsageError("--jsonl: give one of --text and --jsonl")
    if args.tokenizer is None:
        raise UsageError(f"--tokenizer: {'--text' if args.text else '--jsonl'} needs a local tokenizer folder "
                         "(--tokenizer DIR, e.g. the model's folder)")
    vocab = parse_vocab(args.vocab)
    option = "--text" if args.text is not None else "--jsonl"
    names = dict(_NAMES, path=option)
    with options_for(names):
        if args.pad_id is not None:  # a token id at all, before the tokenizer is read (its vocabulary: below)
            from .._validate import int_arg

            int_arg(args.pad_id, "pad_id", 0, tokenized.MAX_TOKEN_ID)
        if args.text is not None:
            for o in ("response_length",):
                if getattr(args, o) is not None:
                    raise UsageError(f"--{o.replace('_', '-')}: only with --jsonl (--text rows have --length tokens)")
            if args.length is None:
                raise UsageError("--length: --text needs the row length in tokens (longer rows are cut)")
            if prompt_option and getattr(args, "prompt_length", None):
                raise UsageError("--prompt-length: with --text every row is a response; prompts come with --jsonl")
            data = tokenized.load_text(args.text, args.tokenizer, length=args.length, pad_id=args.pad_id)
        else:
            if args.length is not None:
                raise UsageError("--length: only with --text (--jsonl rows have --prompt-length + --response-length)")
            if getattr(args, "prompt_length", None) is None or args.response_length is None:
                raise UsageError("--response-length: --jsonl needs --prompt-length and --response-length (tokens kept "
                                 "of each; a prompt keeps its last tokens, a response its first)")
            data = tokenized.load_jsonl(args.jsonl, args.tokenizer, prompt_length=args.prompt_length,
                                        response_length=args.response_length, pad_id=args.pad_id)
    if data.n_padded_prompt:  # said, not silent: a prompt padded on the left changes what the model sees
        # printed once the command succeeds (a refusal later on is then the only line)
        note(f"mdmtheory {getattr(args, 'command', None) or 'design'}: note: {data.n_padded_prompt} of {data.n} "
             f"prompts are shorter than --prompt-length {data.prompt_length} tokens and were left-padded with token "
             f"{data.pad_id} (--pad-id); lower --prompt-length to pad less")
    return TextData(data, option, vocab)


def _position_limit(spec) -> tuple:
    """(longest row, the config field in words) of a Hugging Face folder's config.json, read as
    JSON before anything is tokenized or loaded; (None, None) when it is not a folder with a
    readable config stating one (the model loader then reports what is wrong)."""
    cfg = os.path.join(os.fspath(spec), "config.json")
    if not os.path.isdir(spec) or not os.path.isfile(cfg):  # os.path: False for a name too long, never raises
        return None, None
    try:
        with open(cfg, encoding="utf-8") as fh:
            conf = json.loads(fh.read(1 << 24))
        from ..bridge.hf import position_limit_field
    except (OSError, UnicodeDecodeError, ValueError, RecursionError, ImportError):
        return None, None
    return position_limit_field(conf) if isinstance(conf, dict) else (None, None)


def check_positions(args, model_spec) -> None:
    """The rows' length from the text options against the Hugging Face model's position limit
    (``max_position_embeddings`` or its config's equivalent), before any work: one line naming
    the options and the limit (it was a torch traceback after loading)."""
    L, said = _position_limit(model_spec)
    if L is None:
        return
    where = f"{model_spec!r} reads at most {L} positions (config.json: {said})"
    if getattr(args, "text", None) is not None:
        n = args.length
        if isinstance(n, int) and n > L:
            raise UsageError(f"--length: {n} tokens per row, but the model {where}; give --length <= {L}")
    elif getattr(args, "jsonl", None) is not None:
        g, r = getattr(args, "prompt_length", None), getattr(args, "response_length", None)
        if isinstance(g, int) and isinstance(r, int) and g >= 0 and r >= 1 and g + r > L:
            raise UsageError(f"--prompt-length, --response-length: {g} + {r} = {g + r} tokens per row, but the model "
                             f"{where}; give --prompt-length + --response-length <= {L}")


def no_text_options(args, model: str | None = None) -> None:
    """Refuse the text options when the data is a token file (they would be ignored);
    ``--vocab`` goes with a token file only as the token ids of a ``model``'s outcomes."""
    for opt in ("tokenizer", "length", "response_length", "pad_id"):
        if getattr(args, opt, None) is not None:
            flag = "--" + opt.replace("_", "-")
            raise UsageError(f"{flag}: only with --text or --jsonl (a token file holds outcome indices already)")
    token_file_vocab(args, model)


def token_file_vocab(args, model: str | None):
    """``--vocab`` with a token file: None (every id of the model but its mask) or the
    token ids of the outcomes 0..K-1 of ``model``; 'seen' and a vocab without a model are refused."""
    value = getattr(args, "vocab", None)
    if value is None:
        return None
    if model is None:
        raise UsageError("--vocab: without --text/--jsonl it names the token ids of a model's outcomes; give "
                         "--model (or --text/--jsonl with --tokenizer)")
    if value == "seen":
        raise UsageError("--vocab: 'seen' reads token ids in --text/--jsonl rows; a token file holds outcome "
                         "indices already (give 'all' or the ids of outcomes 0..K-1)")
    vocab = parse_vocab(value)
    return None if vocab == "all" else vocab


def outcomes(text: TextData, model_vocab=None) -> tuple[np.ndarray, tuple]:
    """(rows as outcome indices, the outcome token ids) for the chosen vocabulary.

    ``model_vocab``: the model's own outcome ids when ``--vocab all`` was resolved by it."""
    if text.vocab == "all":
        if model_vocab is None:
            raise UsageError("--vocab: 'all' means every token id of the model but its mask; give --model, "
                             "or 'seen' / a list of ids")
        ids = tuple(model_vocab)
    elif text.vocab is None:
        ids = tuple(text.data.vocab)
    else:
        ids = tuple(text.vocab)
    with options_for({"vocab": "--vocab"}):
        x = text.data.outcomes(ids)
    return x, ids


def vocab_summary(ids) -> str:
    ids = list(ids)
    return f"{len(ids)} token ids [{vocab_words(ids)}]"


def _not_the_models_tokenizer(args, model_spec, seen) -> str | None:
    """When the ids a tokenizer gave the rows do not fit the model (an id beyond its vocabulary,
    or its mask id among them): the message that the tokenizer is not this model's, with both
    vocabulary sizes and mask ids (it read "the mask id 4 is one of the outcome token ids ...
    fix --mask-id", issue 39 item 3); None when the sizes do not show it."""
    conf = {}
    try:
        with open(os.path.join(os.fspath(model_spec), "config.json"), encoding="utf-8") as fh:
            conf = json.loads(fh.read(1 << 24))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError, TypeError):
        pass
    V = conf.get("vocab_size") if isinstance(conf, dict) else None
    mask = args.mask_id if args.mask_id is not None else (conf.get("mask_token_id") if isinstance(conf, dict) else None)
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(args.tokenizer, local_files_only=True)
        Vt, tmask = len(tok), tok.mask_token_id
    except Exception:  # noqa: BLE001 - read_text loaded it already; without it, no diagnosis
        return None
    if mask is None:  # the mask id of the tokenizer saved in the model's folder (the bridge's rule)
        try:
            mask = AutoTokenizer.from_pretrained(model_spec, local_files_only=True).mask_token_id
        except Exception:  # noqa: BLE001 - a folder without a tokenizer: the mask id stays unknown
            pass
    seen = [int(v) for v in seen]
    beyond = isinstance(V, int) and max(seen, default=-1) >= V
    masked = isinstance(mask, int) and mask in seen
    if not (beyond or masked or (isinstance(V, int) and Vt > V)):
        return None
    shown = lambda m: "none" if m is None else str(m)  # noqa: E731
    return (f"--tokenizer: {args.tokenizer!r} is not the tokenizer of {model_spec!r}: the tokenizer has {Vt:,} token ids "
            f"(mask id {shown(tmask)}) and gave the rows ids up to {max(seen, default=0)}, the model has "
            f"{'an unknown number of' if V is None else f'{V:,}'} token ids (mask id {shown(mask)})"
            + (f"; its mask id {mask} is among the rows' ids" if masked else "")
            + "; give the model's own tokenizer (usually its folder: --tokenizer MODEL_DIR)")


def read_rows(args, data_attr: str, data_option: str, model_spec, model_option: str):
    """The rows of a command, as outcome indices: (x, K or None, prompt length, loaded model
    or None, facts to print). Rows come from the token file ``args.<data_attr>`` or from
    ``--text``/``--jsonl``; the model (``model_spec``, from ``model_option``) is loaded with
    the outcome ids of ``--vocab``; facts: the data's cut/pad counts, the model's mask id, K
    and outcome ids."""
    from ._models import read_model_data

    facts = {}
    if model_spec is not None and text_given(args):
        check_positions(args, model_spec)
    text = read_text(args) if text_given(args) else None
    if text is not None:
        facts["tokenized"] = dict(text.data.summary(), source=text.option)
        g = text.data.prompt_length
    else:
        g = getattr(args, "prompt_length", None) or 0
    loaded = None
    if model_spec is not None:
        vocab = None
        if text is not None and text.vocab != "all":
            vocab = text.data.vocab if text.vocab is None else text.vocab
        elif text is None:
            vocab = token_file_vocab(args, model_spec)
        try:
            loaded = load_model(model_spec, model_option, mask_id=args.mask_id, shift=args.shift,
                                trust_remote_code=args.trust_remote_code, vocab=vocab)
        except UsageError as exc:
            if text is not None and text.vocab is None:
                other = _not_the_models_tokenizer(args, model_spec, text.data.vocab)
                if other is not None:
                    raise UsageError(other) from None
            raise
        if text is not None:
            d = text.data.d
            if loaded.d is not None and d != loaded.d:
                raise UsageError(f"{text.option}: rows have {d} tokens but {loaded.describe()} was trained for "
                                 f"d = {loaded.d}; give --length (or --prompt-length + --response-length) {loaded.d}")
            masked = loaded.masked()
            try:
                masked.resolve(d)
            except (ValueError, RuntimeError, IndexError, TypeError) as exc:
                raise UsageError(f"{model_option}: the model fails on rows of {d} tokens ({' '.join(str(exc).split())[:300]})") from None
            x, _ = outcomes(text, masked.vocab)
            check_samples(x, loaded, text.option)
        else:
            x = read_model_data(getattr(args, data_attr), data_option, loaded, chars=args.chars)
        rule = None
        if text is None and getattr(args, "vocab", None) not in (None, "all"):
            rule = "the token ids given with --vocab, in order"
        if text is not None:
            rule = {None: "every token id seen in the data", "all": "every token id of the model but the mask"}.get(
                text.vocab if not isinstance(text.vocab, tuple) else "given", "the token ids given with --vocab")
        facts["model"] = loaded.facts(x.shape[1], rule)
        K = facts["model"]["K"]
    else:
        if text is not None:
            x, ids = outcomes(text)
            K = len(ids)
            facts["outcomes"] = {"K": K, "vocab": list(ids)}
        else:
            x, _ = read_tokens(getattr(args, data_attr), data_option, chars=args.chars)
            K = None
    d = x.shape[1]
    if not 0 <= g < d:
        raise UsageError(f"--prompt-length: expected 0..{d - 1} (rows have {d} tokens; at least one is the response), "
                         f"got {g}")
    return x, K, g, loaded, facts


def facts_lines(r: dict) -> list[str]:
    """The data and model facts of :func:`read_rows`, as printed lines."""
    out = []
    if "tokenized" in r:
        s = r["tokenized"]
        what = "responses" if s["prompt_length"] else "rows"
        out.append(f"data: {s['source']}, {s['n']} rows of {s['d']} tokens ({s['rule']}); cut: {s['cut']} {what}"
                   + (f", {s['cut_prompt']} prompts" if s["prompt_length"] else "")
                   + f"; padded: {s['padded']} {what}" + (f", {s['padded_prompt']} prompts" if s["prompt_length"] else ""))
    if "model" in r:
        m = r["model"]
        out.append(f"model: {KIND_WORDS[m['kind']]} {m['model']!r}, mask id {m['mask_id']}, K = {m['K']} outcomes "
                   f"({m['vocab_rule']}: {vocab_summary(m['vocab'])})")
    elif "outcomes" in r:
        out.append(f"outcomes: K = {r['outcomes']['K']} ({vocab_summary(r['outcomes']['vocab'])}, every token id seen)")
    return out
