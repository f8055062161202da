r"""Argument checks of the bridge (torch side): devices, dtypes, flags, choices, integer arrays.

Every check raises ``ValueError`` whose message starts with the argument's name and says what
is accepted (the rule of :mod:`mdmtheory._validate`, whose ``int_arg`` / ``real_arg`` the
bridge also uses). Nothing is coerced: a float array is not an array of token ids, ``"no"`` is
not a flag, ``"float"`` is not a dtype.

Documented limits of the bridge
-------------------------------
==========================  ===========  ===============================================
constant                    value        what it bounds
==========================  ===========  ===============================================
:data:`MAX_TOKEN_ID`        2**31 - 1    a token id (``mask_id``, ``vocab`` entries)
:data:`MAX_BATCH`           2**20        sequences in one forward (``max_batch``,
                                         ``batch_size``)
:data:`MAX_DRAWS`           2**24        Monte Carlo draws of one estimate (levels ×
                                         ``n_per_level``; ``n``)
:data:`MAX_RESAMPLES`       10**5        ``n_resamples`` of optimal_schedule_estimate
==========================  ===========  ===============================================

The tiny model's own limits are in :mod:`mdmtheory.bridge.tiny`, training's in
:mod:`mdmtheory.bridge.train`.
"""

from __future__ import annotations

import numpy as np
import torch

from .._validate import _short

#: Largest token id accepted (int32 embeddings; LLaDA's mask is 126336).
MAX_TOKEN_ID = 2**31 - 1
#: Largest number of sequences in one forward.
MAX_BATCH = 1 << 20
#: Largest number of Monte Carlo draws of one estimate.
MAX_DRAWS = 1 << 24
#: Largest number of resampled profiles in optimal_schedule_estimate.
MAX_RESAMPLES = 10**5

short = _short


def check_bool(value, name: str) -> bool:
    """True or False (also numpy's bool); 0, 1, "yes" and arrays are refused."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected True or False, got {_short(value)}")
    return bool(value)


def check_choice(value, name: str, options) -> str:
    """One of the string ``options`` (anything that is not such a string is refused)."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name}: expected one of {', '.join(repr(o) for o in options)}, got {_short(value)}")
    return value


def check_device(device, name: str = "device"):
    """None or a usable torch device (``"cpu"``, ``"cuda"``, ``"cuda:1"``, a torch.device)."""
    if device is None:
        return None
    if not isinstance(device, (str, torch.device)):
        raise ValueError(f"{name}: expected a torch device such as 'cpu' or 'cuda', got {_short(device)}")
    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError, TypeError):
        raise ValueError(f"{name}: {_short(device)} is not a torch device; expected e.g. 'cpu', 'cuda' or 'cuda:0'") from None
    if dev.type == "meta":
        raise ValueError(f"{name}: the meta device holds no data; expected e.g. 'cpu' or 'cuda'")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"{name}: {str(dev)!r} but CUDA is not available here; use 'cpu'")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"{name}: {str(dev)!r} but only {torch.cuda.device_count()} CUDA device(s) exist")
    elif dev.type != "cpu":
        try:
            torch.empty(0, device=dev)
        except (RuntimeError, AssertionError, ValueError, TypeError):
            raise ValueError(f"{name}: the device {str(dev)!r} is not available here; use 'cpu'") from None
    return dev


def check_dtype(dtype, name: str = "dtype"):
    """None or a floating torch dtype (torch.float32, torch.float64, torch.bfloat16, ...)."""
    if dtype is None:
        return None
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(
            f"{name}: expected a floating torch dtype such as torch.float32 or torch.bfloat16, got {_short(dtype)}"
        )
    return dtype


def int_array(value, name: str, what: str = "") -> np.ndarray:
    """An integer numpy array read without coercion (torch tensors allowed).

    Refused: None, strings, bools, floats (``0.7`` is not token 0), object arrays, ragged or
    deep lists, integers beyond int64.
    """
    shape = f" {what}" if what else ""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy() if value.dtype != torch.bfloat16 else value.detach().float().cpu().numpy()
    if value is None or isinstance(value, (str, bytes, bytearray, bool, np.bool_, dict, set)):
        raise ValueError(f"{name}: expected an integer array{shape}, got {_short(value)}")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError, RecursionError, MemoryError) as exc:
        msg = str(exc).splitlines()[0][:100] if str(exc) else type(exc).__name__
        raise ValueError(f"{name}: cannot be read as an integer array{shape} ({msg})") from None
    if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and arr.size == 0):
        raise ValueError(f"{name}: expected integer {what or 'values'}, got dtype {arr.dtype}")
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"{name}: values must be < 2**63, got {int(arr.max())}")
    return arr.astype(np.int64)


def bool_array(value, name: str, what: str = "") -> np.ndarray:
    """A bool numpy array: bools, or integers 0/1 (floats such as 0.5 are refused, not cast)."""
    shape = f" {what}" if what else ""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    if value is None or isinstance(value, (str, bytes, bytearray, dict, set)):
        raise ValueError(f"{name}: expected a bool array{shape}, got {_short(value)}")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError, RecursionError, MemoryError) as exc:
        msg = str(exc).splitlines()[0][:100] if str(exc) else type(exc).__name__
        raise ValueError(f"{name}: cannot be read as a bool array{shape} ({msg})") from None
    if arr.dtype == bool:
        return arr
    if arr.dtype.kind in "iu" and (arr.size == 0 or (arr.min() >= 0 and arr.max() <= 1)):
        return arr.astype(bool)
    raise ValueError(f"{name}: expected a bool array{shape} (True/False or 0/1), got dtype {arr.dtype}")


# -- the position limit of a Hugging Face config (issue 30 §5) -------------------------------
#: Config fields that state the longest sequence a Hugging Face model reads, in the order they
#: are looked up (BERT/LLaDA-style ``max_position_embeddings``, GPT-2's ``n_positions``, LLaDA's
#: ``max_sequence_length``, others' spellings); also inside a ``text_config``.
POSITION_FIELDS = ("max_position_embeddings", "n_positions", "max_sequence_length", "max_seq_len", "seq_length",
                   "n_ctx")
#: Model types whose learned position ids start after the padding index (RoBERTa's
#: ``create_position_ids_from_input_ids``: position = padding_idx + 1 + i), so a row holds at
#: most max_position_embeddings − pad_token_id − 1 tokens (514 → 512 for roberta-base).
OFFSET_POSITION_MODEL_TYPES = frozenset({"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert",
                                         "roberta-prelayernorm", "data2vec-text", "longformer", "xmod", "ibert",
                                         "mpnet", "luke"})


def position_limit(config):
    """The longest row (tokens) a Hugging Face model reads, from its config (a transformers
    config object or the dict of ``config.json``): the first of :data:`POSITION_FIELDS` that is
    a positive integer (also under ``text_config``), less the padding offset of
    :data:`OFFSET_POSITION_MODEL_TYPES`; None when the config states none (e.g. a callable)."""
    return position_limit_field(config)[0]


def position_limit_field(config) -> tuple:
    """(:func:`position_limit`, the config field it came from, ``"field = value"``), or
    (None, None) when the config states none."""
    get = config.get if isinstance(config, dict) else (lambda k, default=None: getattr(config, k, default))
    for prefix, where in (("", get), ("text_config.", _sub(get("text_config")))):
        if where is None:
            continue
        for field in POSITION_FIELDS:
            v = where(field)
            if isinstance(v, int) and not isinstance(v, bool) and v > 0:
                said = f"{prefix}{field} = {v}"
                if get("model_type") in OFFSET_POSITION_MODEL_TYPES:
                    pad = get("pad_token_id")
                    pad = pad if isinstance(pad, int) and not isinstance(pad, bool) and pad >= 0 else 1
                    v -= pad + 1
                    said += f", less the padding offset {pad + 1}"
                return (v, said) if v > 0 else (None, None)
    return None, None


def _sub(cfg):
    if cfg is None:
        return None
    return cfg.get if isinstance(cfg, dict) else (lambda k, default=None: getattr(cfg, k, default))
