r"""Hugging Face adapter: a **local** checkpoint folder as a :class:`MaskedModel` (never downloads).

:func:`from_pretrained` loads with ``local_files_only=True``: first the masked-LM class
(``AutoModelForMaskedLM``: BERT-style encoders, MDLM), then the base class (``AutoModel``:
LLaDA and Dream register their diffusion model there and return ``.logits``).
``trust_remote_code`` is passed through only when the user sets it (LLaDA, Dream and MDLM
ship their model code in the folder). Attention: transformers' default implementation (SDPA
where the model supports it, the fast path for the estimators), or
``attn_implementation="eager"`` with ``attentions=True`` (transformers 5.x returns attention
maps only from eager attention; :mod:`mdmtheory.bridge.attention` also switches a loaded
model to eager for the forwards that need the maps).

The mask id comes from ``mask_id``, else the config's ``mask_token_id``, else the folder's
tokenizer (``AutoTokenizer``, local files only); otherwise a ``ValueError`` asks for it.

A ``diffusion_gemma`` folder (transformers' ``DiffusionGemmaForBlockDiffusion``, uniform
corruption: no mask) loads as a :class:`~mdmtheory.bridge.uniform.DiffusionGemmaDenoiser`, the
model of the renoise sampler (:func:`mdmtheory.bridge.uniform.renoise_samples`); ``mask_id``,
``vocab``, ``shift``, ``time_input`` and ``attentions`` do not apply to it and are refused.
"""

from __future__ import annotations

from pathlib import Path

import torch

from .._validate import int_arg
from ._checks import check_bool, check_device, check_dtype, MAX_BATCH, MAX_TOKEN_ID
from ._checks import position_limit, position_limit_field  # noqa: F401 - the bridge's public spelling
from .model import MaskedModel
from .uniform import DiffusionGemmaDenoiser

__all__ = ["from_pretrained", "position_limit"]

def _load_errors() -> tuple:
    """What a missing or corrupt weights file raises while loading (safetensors' own
    ``SafetensorError`` is no OSError: a truncated header was a traceback)."""
    errors = (OSError, KeyError, TypeError, AttributeError, IndexError, RuntimeError, MemoryError, RecursionError,
              EOFError)
    try:
        from safetensors import SafetensorError
    except ImportError:  # pragma: no cover - transformers needs safetensors
        return errors
    return errors + (SafetensorError,)


#: Hugging Face model types of uniform-corruption block diffusion (transformers'
#: ``DiffusionGemmaForBlockDiffusion``, whose generation loop renoises non-accepted positions
#: with random tokens): no masked-diffusion conditionals, so :func:`from_pretrained` returns
#: them as a :class:`~mdmtheory.bridge.uniform.DiffusionGemmaDenoiser` (issue 29 §3).
UNIFORM_CORRUPTION_MODEL_TYPES = frozenset({"diffusion_gemma"})


def _transformers():
    try:
        import transformers
    except ImportError:
        raise ImportError("Hugging Face models need transformers: pip install 'mdmtheory[hf]'") from None
    return transformers


#: Files one of which a folder must hold for its own tokenizer to be read (without them
#: ``AutoTokenizer`` builds a default tokenizer of the model type, with a made-up mask id).
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json", "tokenizer.model",
                   "spiece.model", "sentencepiece.bpe.model")


def _mask_id_of(path: Path, config, trust_remote_code: bool):
    """The config's ``mask_token_id``, else the mask id of the tokenizer *saved in the folder*
    (None when it has no tokenizer files: no default tokenizer is made up)."""
    mid = getattr(config, "mask_token_id", None)
    if isinstance(mid, int) and not isinstance(mid, bool):
        return mid
    if not any((path / f).is_file() for f in TOKENIZER_FILES):
        return None
    tf = _transformers()
    try:
        tok = tf.AutoTokenizer.from_pretrained(str(path), local_files_only=True, trust_remote_code=trust_remote_code)
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError, ImportError):
        return None
    mid = getattr(tok, "mask_token_id", None)
    return mid if isinstance(mid, int) else None


def _diffusion_gemma(folder: Path, config, common: dict, dtype, device, unused: dict, shift: bool, attentions: bool):
    """A ``diffusion_gemma`` folder as a DiffusionGemmaDenoiser (the masked-model options refused by name)."""
    for name, value in unused.items():
        if value is not None:
            raise ValueError(f"{name}: a 'diffusion_gemma' model is uniform-corruption diffusion (no mask, no time "
                             "input); leave it unset (docs/theory.md §15)")
    if shift or attentions:
        raise ValueError(f"{'shift' if shift else 'attentions'}: does not apply to a 'diffusion_gemma' model; leave it False")

    tf = _transformers()
    kw = dict(common, config=config)
    if dtype is not None:
        kw["dtype"] = dtype
    try:
        model = tf.DiffusionGemmaForBlockDiffusion.from_pretrained(str(folder), **kw)
    except (ValueError,) + _load_errors() as exc:
        raise ValueError(
            f"path: {str(folder)!r}: the DiffusionGemma model cannot be loaded from this folder "
            f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
        ) from None
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return DiffusionGemmaDenoiser(model.to(device))


def from_pretrained(
    path,
    *,
    mask_id=None,
    vocab=None,
    shift: bool = False,
    trust_remote_code: bool = False,
    time_input=None,
    max_batch: int = 64,
    device=None,
    dtype=None,
    attentions: bool = False,
) -> MaskedModel:
    """A local Hugging Face folder as a :class:`MaskedModel` (a ``diffusion_gemma`` folder: a
    :class:`~mdmtheory.bridge.uniform.DiffusionGemmaDenoiser`, module docstring).

    Parameters
    ----------
    path : str or Path
        A folder with ``config.json`` and the weights (``save_pretrained`` output).
    mask_id : int, optional
        Token id of the mask (default: the config's or the tokenizer's ``mask_token_id``).
    vocab, shift, time_input, max_batch : see :class:`MaskedModel` (``shift=True`` for Dream).
    trust_remote_code : bool
        Run the model code shipped in the folder (LLaDA, Dream, MDLM); off by default.
    device : default ``"cuda"`` when available, else ``"cpu"``.
    dtype : torch dtype of the weights (default: the checkpoint's).
    attentions : bool
        Load with ``attn_implementation="eager"``, the implementation that returns attention
        maps (``output_attentions=True``). Default False: transformers' default (SDPA where
        the model supports it), faster and the same logits to rounding.
    """
    if not isinstance(path, (str, Path)):
        raise ValueError(f"path: expected a local folder (str or Path), got {type(path).__name__}")
    # every option is checked before anything is loaded
    trust_remote_code = check_bool(trust_remote_code, "trust_remote_code")  # "no" must not mean True
    check_bool(shift, "shift")
    attentions = check_bool(attentions, "attentions")
    if mask_id is not None:
        int_arg(mask_id, "mask_id", 0, MAX_TOKEN_ID)
    int_arg(max_batch, "max_batch", 1, MAX_BATCH)
    device = check_device(device)
    dtype = check_dtype(dtype)
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ValueError(
            f"path: {str(folder)!r} is not a local folder; the bridge never downloads — "
            "download the checkpoint first (e.g. huggingface-cli download NAME --local-dir DIR)"
        )
    if not (folder / "config.json").is_file():
        raise ValueError(f"path: {str(folder)!r} has no config.json (not a Hugging Face checkpoint folder)")
    tf = _transformers()
    common = dict(local_files_only=True, trust_remote_code=trust_remote_code)
    try:
        config = tf.AutoConfig.from_pretrained(str(folder), **common)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise ValueError(
            f"path: {str(folder)!r}: its config.json cannot be read as a Hugging Face config "
            f"({type(exc).__name__}: {' '.join(str(exc).split())[:160]})"
        ) from None
    if getattr(config, "model_type", None) in UNIFORM_CORRUPTION_MODEL_TYPES:
        return _diffusion_gemma(folder, config, common, dtype, device,
                                dict(mask_id=mask_id, vocab=vocab, time_input=time_input), shift, attentions)
    kw = dict(common, attn_implementation="eager") if attentions else dict(common)
    if dtype is not None:
        kw["dtype"] = dtype
    errors = []
    model = None
    for cls in (tf.AutoModelForMaskedLM, tf.AutoModel):
        try:
            model = cls.from_pretrained(str(folder), config=config, **kw)
            break
        except ValueError as exc:  # the config has no class registered for this auto class
            errors.append(f"{cls.__name__}: {' '.join(str(exc).split())[:200]}")
        except _load_errors() as exc:
            # missing or corrupt weights, sizes in the config that the weights (or memory) do not match
            raise ValueError(
                f"path: {str(folder)!r}: the model cannot be loaded from this folder "
                f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
            ) from None
    if model is None:
        raise ValueError(f"path: no masked-LM or base model class for this config ({'; '.join(errors)})")
    if mask_id is None:
        mask_id = _mask_id_of(folder, config, trust_remote_code)
        if mask_id is None:
            raise ValueError("mask_id: the folder's config has no mask_token_id and the folder holds no tokenizer "
                             "that names one; pass mask_id= (the model's mask token id; LLaDA: 126336)")
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    return MaskedModel(model, mask_id=mask_id, vocab=vocab, shift=shift, time_input=time_input, max_batch=max_batch, device=device)
