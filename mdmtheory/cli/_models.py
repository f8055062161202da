"""Models named on the command line: a shipped name, a mdmtheory checkpoint or a local
Hugging Face folder, loaded once with what the commands check before any work — the
number of outcomes K, the length d (None for a Hugging Face model), the recorded alphabet,
and whether it is a causal baseline.

Every error is a :class:`~mdmtheory.cli._common.UsageError` naming the option and saying
what the user gave and what to give instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._common import renamed, UsageError
from ._inputs import MAX_ALPHABET, read_tokens

__all__ = ["LoadedModel", "load_model", "check_samples", "add_model_arguments", "MODEL_HELP"]

#: What --model is, in every command's help.
MODEL_HELP = ("a mdmtheory checkpoint (.safetensors), a shipped name (words, markov), or a local Hugging Face "
              "folder (never downloaded)")


def add_model_arguments(parser, *, extra: str = "") -> None:
    """``--model`` (old spelling ``--checkpoint``) and the Hugging Face options that go with
    it: ``--mask-id``, ``--shift``, ``--trust-remote-code`` (design, estimate, report)."""
    parser.add_argument("--model", metavar="MODEL", help=MODEL_HELP + extra)
    renamed(parser, "--checkpoint", "--model", metavar="MODEL")
    parser.add_argument("--mask-id", type=int, metavar="ID",
                        help="mask token id (Hugging Face folders whose config has none)")
    parser.add_argument("--shift", action="store_true", help="logits shifted right by one (Dream; Hugging Face only)")
    parser.add_argument("--trust-remote-code", action="store_true",
                        help="allow a local folder's own model code (Hugging Face folders only)")


#: The kinds of model, in words.
KIND_WORDS = {"shipped": "the shipped checkpoint", "checkpoint": "the checkpoint", "hf": "the Hugging Face folder"}


@dataclass(frozen=True)
class LoadedModel:
    """A model and its facts. ``module`` is the TinyMDM (mdmtheory checkpoints) or the
    bridge's MaskedModel (Hugging Face folders); ``masked()`` gives the MaskedModel."""

    module: object
    spec: str
    option: str
    kind: str  # "shipped", "checkpoint" or "hf"
    K: int | None
    d: int | None
    alphabet: tuple | None
    causal: bool
    vocab: tuple | None = None

    def masked(self):
        """The bridge's MaskedModel (one per LoadedModel: its outcome vocabulary is fixed once)."""
        from .. import bridge

        if self.kind == "hf":
            return self.module
        cached = self.__dict__.get("_masked")
        if cached is None:
            cached = bridge.as_masked_model(self.module, **({} if self.vocab is None else {"vocab": self.vocab}))
            object.__setattr__(self, "_masked", cached)
        return cached

    def facts(self, d: int | None = None, vocab_rule: str | None = None) -> dict:
        """What every command prints about the model it used: mask id, K and outcomes
        (``vocab_rule``: how the outcome ids were chosen, in words)."""
        m = self.masked()
        if d is not None:
            m.resolve(d)
        v = m.vocab
        return {"model": self.spec, "kind": self.kind, "mask_id": int(m.mask_id),
                "K": None if v is None else len(v),
                "vocab": None if v is None else list(v),
                "vocab_rule": vocab_rule or ("every token id of the model but the mask" if self.vocab is None
                                             else "the token ids given")}

    def describe(self) -> str:
        what = KIND_WORDS
        return f"{what[self.kind]} {self.spec!r}"


def _torch(option: str):
    try:
        import torch  # noqa: F401

        from .. import bridge  # noqa: F401
    except ImportError as exc:
        raise UsageError(f"{option}: the bridge needs torch: pip install 'mdmtheory[bridge]' ({exc})") from None


def _msg(exc) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def load_model(spec: str, option: str = "--model", *, mask_id=None, shift: bool = False,
               trust_remote_code: bool = False, masked: bool = True, vocab=None) -> LoadedModel:
    """Load ``spec``. ``--mask-id``, ``--shift`` and ``--trust-remote-code`` are Hugging Face
    options: with a mdmtheory checkpoint (which has its own mask id K) they are refused, not
    ignored. ``masked``: refuse a causal baseline (it cannot predict masked positions).
    ``vocab``: the outcome token ids (``--vocab``; default every id but the mask)."""
    _torch(option)
    from ..bridge.tiny import PRETRAINED, load_checkpoint, pretrained_path, read_checkpoint_info

    p = Path(spec)
    if p.is_dir():
        if not (p / "config.json").is_file():
            raise UsageError(f"{option}: the folder {spec!r} has no config.json: give a mdmtheory checkpoint "
                             "(.safetensors) or a Hugging Face folder saved with save_pretrained")
        if mask_id is not None and mask_id < 0:
            raise UsageError(f"--mask-id: expected a token id >= 0, got {mask_id}")
        if not masked:
            return _load_hf_causal(spec, option, trust_remote_code=trust_remote_code)
        return _load_hf(spec, option, mask_id=mask_id, shift=shift, trust_remote_code=trust_remote_code, vocab=vocab)
    hf_opts = [o for o, v in (("--mask-id", mask_id is not None), ("--shift", shift),
                              ("--trust-remote-code", trust_remote_code)) if v]
    if p.is_file() or spec in PRETRAINED:
        kind = "checkpoint" if p.is_file() else "shipped"
        if hf_opts:
            raise UsageError(f"{hf_opts[0]}: only for a Hugging Face folder; {spec!r} is a mdmtheory checkpoint, "
                             "whose mask id and layout are its own (drop the option)")
        path = str(p) if kind == "checkpoint" else str(pretrained_path(spec))
        try:
            module = load_checkpoint(path)
            info = read_checkpoint_info(path).get("info", {}) or {}
        except (ValueError, OSError, KeyError, TypeError, RecursionError) as exc:
            raise UsageError(f"{option}: cannot read {spec!r} as a mdmtheory checkpoint ({_msg(exc)})") from None
        cfg = module.config
        alphabet = info.get("alphabet") if isinstance(info, dict) else None
        if not (isinstance(alphabet, list) and len(alphabet) == cfg.vocab_size):
            alphabet = None
        causal = bool(cfg.causal)
        K = cfg.vocab_size
        if causal and masked:
            raise UsageError(f"{option}: {spec!r} is a causal (autoregressive) baseline, which cannot predict masked "
                             "positions; give a masked-diffusion checkpoint (e.g. one trained without --causal)")
        if vocab is not None:
            bad = [v for v in vocab if v >= K]
            if bad:
                raise UsageError(f"--vocab: token id {bad[0]} is not an outcome of {spec!r}, whose tokens are 0..{K - 1} "
                                 f"(its mask is {K})")
        return LoadedModel(module, spec, option, kind, K, cfg.seq_len, None if alphabet is None else tuple(alphabet),
                           causal, None if vocab is None else tuple(vocab))
    raise UsageError(f"{option}: no such file or folder {spec!r} (or a shipped name: {', '.join(PRETRAINED)})")


def _load_hf(spec, option, *, mask_id, shift, trust_remote_code, vocab=None) -> LoadedModel:
    from .. import bridge

    bars = _quiet_transformers()
    try:
        model = bridge.from_pretrained(spec, mask_id=mask_id, shift=shift, trust_remote_code=trust_remote_code,
                                       vocab=vocab)
    except (ValueError, OSError, KeyError, TypeError, AttributeError, RecursionError, ImportError) as exc:
        msg = _msg(exc)
        if msg.startswith("mask_id:"):
            from ._common import plain_words

            rest = plain_words(msg[len("mask_id:"):].strip())
            raise UsageError(f"--mask-id: {rest}" + ("" if "--mask-id ID" in rest else " (give --mask-id ID)")) from None
        if msg.startswith("vocab:"):
            rest = msg[len('vocab:'):].strip()
            if "mask id" in rest:  # the outcomes (given, or the ids seen in the rows) hold the mask: either is wrong
                import re

                mid = re.search(r"mask id (\d+)", rest)
                raise UsageError(f"--mask-id, --vocab: the mask id {mid.group(1) if mid else mask_id} is one of the "
                                 "outcome token ids (--vocab; default every token id seen in the rows); the mask is "
                                 "never an outcome: fix --mask-id or drop it from --vocab") from None
            raise UsageError(f"--vocab: {rest}") from None
        if msg.startswith(f"path: {str(Path(spec).expanduser())!r}: "):  # the folder is named once
            msg = msg[len(f"path: {str(Path(spec).expanduser())!r}: "):]
        raise UsageError(f"{option}: cannot load the Hugging Face folder {spec!r} ({msg[:300]})") from None
    finally:
        bars()
    V = _vocab_size(model.model)
    if V is not None and not 0 <= model.mask_id < V:
        raise UsageError(f"--mask-id: {model.mask_id} is not a token id of this model (its vocabulary has ids 0..{V - 1})")
    return LoadedModel(model, spec, option, "hf", None if V is None else V - 1, None, None, False,
                       None if vocab is None else tuple(vocab))


def _load_hf_causal(spec, option, *, trust_remote_code) -> LoadedModel:
    """A causal (autoregressive) Hugging Face folder, e.g. a baseline for attention: loaded
    with ``AutoModelForCausalLM`` and eager attention (maps are read), never downloaded."""
    _torch(option)
    try:
        import transformers as tf
    except ImportError as exc:
        raise UsageError(f"{option}: a Hugging Face folder needs transformers: pip install 'mdmtheory[hf]' ({exc})") from None
    bars = _quiet_transformers()
    try:
        config = tf.AutoConfig.from_pretrained(spec, local_files_only=True, trust_remote_code=trust_remote_code)
        module = tf.AutoModelForCausalLM.from_pretrained(spec, config=config, local_files_only=True,
                                                         trust_remote_code=trust_remote_code,
                                                         attn_implementation="eager")
    except ValueError as exc:
        raise UsageError(f"{option}: {spec!r} is not a causal language model folder (no AutoModelForCausalLM class "
                         f"for its config: {_msg(exc)[:200]})") from None
    except (OSError, KeyError, TypeError, AttributeError, RecursionError, ImportError, RuntimeError) as exc:
        raise UsageError(f"{option}: cannot load the Hugging Face folder {spec!r} ({_msg(exc)[:300]})") from None
    finally:
        bars()
    module.eval()
    V = _vocab_size(module)
    L = next((getattr(config, a) for a in ("n_positions", "max_position_embeddings")
              if isinstance(getattr(config, a, None), int)), None)
    # causal is what it does, not what its class is called (BERT loads as BertLMHeadModel
    # and still attends to later keys unless is_decoder): no weight above the diagonal
    import torch

    n = 4 if L is None else max(2, min(L, 4))
    try:
        with torch.no_grad():
            att = module(torch.zeros((1, n), dtype=torch.long), output_attentions=True).attentions
        future = max(float(torch.triu(a[0].double(), diagonal=1).abs().max()) for a in att) if att else None
    except (RuntimeError, ValueError, TypeError, IndexError, AttributeError) as exc:
        raise UsageError(f"{option}: the model fails on a probe of {n} tokens ({_msg(exc)[:200]})") from None
    if future is None:
        raise UsageError(f"{option}: {spec!r} returns no attention maps (the baseline is compared by attention)")
    if future > 1e-6:
        raise UsageError(f"{option}: {spec!r} is not causal: its attention reaches later positions (weight "
                         f"{future:.3g} above the diagonal); give an autoregressive model")
    return LoadedModel(module, spec, option, "hf", V, L, None, True)


def _quiet_transformers():
    """transformers' loading bars off (stderr is the CLI's one error line); returns the undo."""
    try:
        from transformers.utils import logging as tf_logging
    except ImportError:
        return lambda: None
    was = tf_logging.is_progress_bar_enabled()
    tf_logging.disable_progress_bar()
    return tf_logging.enable_progress_bar if was else (lambda: None)


def _vocab_size(module):
    get = getattr(module, "get_input_embeddings", None)
    try:
        emb = get() if callable(get) else None
        n = getattr(emb, "num_embeddings", None)
        if n is None:
            n = getattr(getattr(module, "config", None), "vocab_size", None)
        return None if n is None else int(n)
    except (AttributeError, NotImplementedError, TypeError, ValueError):
        return None


def check_samples(x: np.ndarray, model: LoadedModel, data_option: str, *, chars: bool = False) -> None:
    """Rows of the data file against the model, in the user's words (before the bridge)."""
    n, d = x.shape
    if model.d is not None and d != model.d:
        raise UsageError(f"{data_option}: rows have {d} tokens but {model.describe()} was trained for d = {model.d}; "
                         f"give rows of {model.d} tokens or a model trained on rows of {d}")
    if model.kind == "hf":
        L = getattr(model.module, "max_length", None)
        if L is not None and d > L:
            raise UsageError(f"{data_option}: rows have {d} tokens, but {model.describe()} reads at most {L} positions "
                             "(its config's max_position_embeddings or equivalent); give rows of at most "
                             f"{L} tokens")
        try:
            model.module.resolve(d)
        except (ValueError, RuntimeError, IndexError, TypeError) as exc:
            raise UsageError(f"{model.option}: the model fails on rows of {d} tokens ({_msg(exc)[:300]})") from None
        K = model.module.K
    else:
        K = model.K if model.vocab is None else len(model.vocab)
    top = int(x.max())
    if top >= K:
        r, c = (int(v) for v in np.argwhere(x == top)[0])
        hint = ("" if chars or model.alphabet is None else
                f"; this model reads characters {''.join(map(str, model.alphabet))!r}: give them with --chars")
        if model.vocab is not None and model.kind != "hf":  # the outcomes were chosen by --vocab
            hint += f"; --vocab chose these {K} outcomes (token ids {vocab_words(model.vocab)})"
        raise UsageError(f"{data_option}: token {top} (row {r + 1}, position {c}) is not an outcome of "
                         f"{model.describe()}, which has K = {K} outcomes 0..{K - 1}{hint}")




def vocab_words(ids) -> str:
    """The first 8 token ids, comma-separated (",..." when there are more)."""
    ids = list(ids)
    return ",".join(map(str, ids[:8])) + (",..." if len(ids) > 8 else "")


def read_model_data(path: str, option: str, model, *, chars: bool) -> np.ndarray:
    """The data file read for ``model`` (a LoadedModel): characters mapped through the
    model's recorded alphabet with ``chars``; rows checked against the model's d and K."""
    if chars:
        if model.alphabet is None:
            raise UsageError(f"--chars: {model.describe()} does not record a character alphabet; give integer "
                             "tokens (outcome indices 0..K-1)")
        x, _ = read_tokens(path, option, chars=True, alphabet=model.alphabet)
    else:
        x, _ = read_tokens(path, option, limit=max(MAX_ALPHABET, model.K or 0))
    check_samples(x, model, option, chars=chars)
    return x
