r"""A tiny bidirectional transformer MDM (and its causal autoregressive baseline), torch.

:class:`TinyMDM` is a pre-LayerNorm transformer encoder small enough to train in CPU
minutes and to ship in the repository (≈ 70 k parameters at the defaults, < 0.3 MB):

* **MDM** (``causal=False``): input ids ``(B, d)`` in ``0..K`` (K is the mask id,
  ``mask_id = K``), full bidirectional attention, learned position embeddings; output
  logits ``(B, d, K+1)`` whose mask column is ``-inf`` (the model never predicts the mask).
  No time input (the MDLM/LLaDA time-independent parameterization) and no carry-over of
  revealed tokens: logits at revealed positions are whatever the network says and are
  ignored by every estimator.
* **AR baseline** (``causal=True``): input the data ``x`` ``(B, d)``; the network reads
  ``[BOS, x_0, …, x_{d−2}]`` (BOS is id K) under a causal mask and the logits at position
  i predict :math:`x_i` given :math:`x_{<i}`. Attention maps have BOS at key position 0.

``model(ids, output_attentions=True)`` also returns, per layer, the softmax attention
probabilities ``(B, H, d, d)`` (rows are queries), computed explicitly (no fused kernel) so
they are exactly the weights used.

Checkpoints: :func:`save_checkpoint` writes ``NAME.safetensors`` (weights, with our format
tag in its metadata) and ``NAME.json`` (config and provenance); :func:`load_checkpoint`
reads only that pair and refuses anything else (pickles, foreign safetensors, mismatched
shapes). :func:`load_pretrained` loads the checkpoints shipped as package data.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from .._estimate import Record, record_dict
from .._validate import int_arg as _int_arg
from ._checks import check_device

__all__ = [
    "TinyConfig",
    "TinyMDM",
    "TinyOutput",
    "save_checkpoint",
    "load_checkpoint",
    "load_pretrained",
    "PRETRAINED",
    "FORMAT",
]

#: Format tag written into every checkpoint (safetensors metadata and the JSON file).
FORMAT = "mdmtheory.tiny/1"
#: Names of the shipped checkpoints (files under ``mdmtheory/checkpoints/``).
PRETRAINED = ("words", "words-ar", "markov")
#: Largest ``vocab_size`` (K) of a TinyMDM.
MAX_VOCAB = 1 << 20
#: Largest ``seq_len`` (d): attention maps and the causal mask are d x d.
MAX_SEQ_LEN = 1 << 12
#: Largest ``d_model`` and ``d_ff``.
MAX_WIDTH = 1 << 14
#: Largest ``n_layers``.
MAX_LAYERS = 256
#: Largest number of parameters of a TinyConfig (1 GiB of float32), checked before allocation.
MAX_PARAMETERS = 1 << 28
#: Largest checkpoint JSON file, in bytes (read before parsing).
MAX_JSON_BYTES = 1 << 20


@dataclass(frozen=True)
class TinyConfig(Record):
    """Shape of a :class:`TinyMDM`. ``vocab_size`` is K (outcomes); ``seq_len`` is d.

    Limits (``ValueError`` naming the field, before anything is allocated): ``vocab_size``
    <= :data:`MAX_VOCAB`, ``seq_len`` <= :data:`MAX_SEQ_LEN`, ``d_model`` and ``d_ff`` <=
    :data:`MAX_WIDTH`, ``n_layers`` <= :data:`MAX_LAYERS`, and in all at most
    :data:`MAX_PARAMETERS` parameters (:meth:`num_parameters`).
    """

    vocab_size: int
    seq_len: int
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 128
    causal: bool = False

    def __post_init__(self):
        # stored as Python ints: np.uint8(1) would wrap in num_parameters' arithmetic (issue 38)
        for field, low, high in (("vocab_size", 2, MAX_VOCAB), ("seq_len", 1, MAX_SEQ_LEN), ("d_model", 1, MAX_WIDTH),
                                 ("n_layers", 1, MAX_LAYERS), ("n_heads", 1, MAX_WIDTH), ("d_ff", 1, MAX_WIDTH)):
            object.__setattr__(self, field, _int_arg(getattr(self, field), field, low, high))
        if self.d_model % self.n_heads:
            raise ValueError(f"n_heads: must divide d_model={self.d_model}, got {self.n_heads}")
        if not isinstance(self.causal, bool):
            raise ValueError(f"causal: expected True or False, got {self.causal!r:.60}")
        if self.num_parameters() > MAX_PARAMETERS:
            raise ValueError(
                f"d_model, n_layers, d_ff: this config has {self.num_parameters()} parameters; at most "
                f"{MAX_PARAMETERS} (MAX_PARAMETERS); make the model smaller"
            )

    def num_parameters(self) -> int:
        """Number of parameters of a TinyMDM of this shape (closed form, nothing allocated)."""
        D, F, V = self.d_model, self.d_ff, self.vocab_size + 1
        block = 2 * D + (3 * D * D + 3 * D) + (D * D + D) + 2 * D + (D * F + F) + (F * D + D)
        return V * D + self.seq_len * D + self.n_layers * block + 2 * D + D * V + V


class TinyOutput(NamedTuple):
    """``logits`` (B, d, K+1); ``attentions`` None or one (B, H, d, d) tensor per layer."""

    logits: torch.Tensor
    attentions: tuple | None

    def to_dict(self) -> dict:
        """Every field by name, JSON-ready (numpy arrays as lists, non-finite floats as strings)."""
        return record_dict(self)


class _Block(nn.Module):
    def __init__(self, cfg: TinyConfig):
        super().__init__()
        self.n_heads = cfg.n_heads
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.ff = nn.Sequential(nn.Linear(cfg.d_model, cfg.d_ff), nn.GELU(), nn.Linear(cfg.d_ff, cfg.d_model))

    def forward(self, h, bias):
        B, L, D = h.shape
        H = self.n_heads
        q, k, v = self.qkv(self.ln1(h)).view(B, L, 3, H, D // H).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(D // H)
        if bias is not None:
            scores = scores + bias
        att = scores.softmax(dim=-1)  # (B, H, L, L), rows = queries
        h = h + self.proj((att @ v).transpose(1, 2).reshape(B, L, D))
        h = h + self.ff(self.ln2(h))
        return h, att


class TinyMDM(nn.Module):
    r"""Small transformer: bidirectional MDM, or the causal AR baseline with ``causal=True``.

    Parameters
    ----------
    config : TinyConfig

    Attributes
    ----------
    mask_id : int
        K: the mask token (MDM) or BOS (AR). Embeddings cover ids ``0..K``.

    Examples
    --------
    >>> import torch
    >>> m = TinyMDM(TinyConfig(vocab_size=3, seq_len=4))
    >>> out = m(torch.tensor([[0, 3, 2, 3]]), output_attentions=True)
    >>> out.logits.shape, len(out.attentions), out.attentions[0].shape
    (torch.Size([1, 4, 4]), 2, torch.Size([1, 4, 4, 4]))
    """

    def __init__(self, config: TinyConfig):
        super().__init__()
        if not isinstance(config, TinyConfig):
            raise ValueError(f"config: expected a TinyConfig, got {type(config).__name__}")
        self.config = config
        self.mask_id = config.vocab_size
        self.tok = nn.Embedding(config.vocab_size + 1, config.d_model)
        self.pos = nn.Embedding(config.seq_len, config.d_model)
        self.blocks = nn.ModuleList([_Block(config) for _ in range(config.n_layers)])
        self.ln_f = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size + 1)
        nn.init.normal_(self.tok.weight, std=0.02)
        nn.init.normal_(self.pos.weight, std=0.02)
        if config.causal:
            causal = torch.full((config.seq_len, config.seq_len), float("-inf")).triu(1)
            self.register_buffer("_causal_bias", causal, persistent=False)
        else:
            self._causal_bias = None

    @property
    def causal(self) -> bool:
        return self.config.causal

    def forward(self, ids, output_attentions: bool = False) -> TinyOutput:
        cfg = self.config
        if not isinstance(ids, torch.Tensor) or ids.dtype not in (torch.int64, torch.int32):
            got = f"a {ids.dtype} tensor" if isinstance(ids, torch.Tensor) else type(ids).__name__
            raise ValueError(f"ids: expected an integer (Long) tensor of shape (B, {cfg.seq_len}), got {got}")
        if not isinstance(output_attentions, (bool, np.bool_)):
            raise ValueError(f"output_attentions: expected True or False, got {output_attentions!r:.60}")
        if ids.ndim != 2 or ids.shape[1] != cfg.seq_len:
            got = f"sequences of length {ids.shape[1]} (shape {tuple(ids.shape)})" if ids.ndim == 2 else f"shape {tuple(ids.shape)}"
            raise ValueError(
                f"ids: this model reads sequences of exactly d = {cfg.seq_len} tokens (its seq_len), got {got}; "
                f"give (B, {cfg.seq_len}) token ids, or train a model at your length"
            )
        top = cfg.vocab_size if not cfg.causal else cfg.vocab_size - 1
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) > top):
            lo, hi = int(ids.min()), int(ids.max())
            if cfg.causal and lo >= 0 and hi == cfg.vocab_size:
                raise ValueError(
                    f"ids: token {hi} is the mask id, but this is a causal (autoregressive) model: it reads "
                    f"clean data tokens 0..K-1 = 0..{top} only and cannot fill in masked sequences; use a "
                    "masked-diffusion model (causal=False, e.g. the 'words' checkpoint) for masked inputs"
                )
            what = "0..K (K = mask id)" if not cfg.causal else "0..K-1 (data tokens)"
            raise ValueError(f"ids: tokens must lie in {what} = 0..{top}, got {lo}..{hi}")
        ids = ids.long()
        if cfg.causal:  # [BOS, x_0, ..., x_{d-2}]
            bos = torch.full_like(ids[:, :1], self.mask_id)
            ids = torch.cat([bos, ids[:, :-1]], dim=1)
        h = self.tok(ids) + self.pos.weight[None, : ids.shape[1]]
        atts = []
        for blk in self.blocks:
            h, att = blk(h, self._causal_bias)
            if output_attentions:
                atts.append(att)
        logits = self.head(self.ln_f(h))
        logits = logits.masked_fill(
            torch.arange(cfg.vocab_size + 1, device=logits.device) == self.mask_id, float("-inf")
        )
        return TinyOutput(logits, tuple(atts) if output_attentions else None)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


# -- checkpoints ------------------------------------------------------------------------------
def _pair(path) -> tuple[str, str]:
    if isinstance(path, (bool, np.bool_)) or not isinstance(path, (str, bytes, os.PathLike)):
        raise ValueError(f"path: expected a file path ending in .safetensors, got {path!r:.60}")
    path = os.fsdecode(path)
    root, ext = os.path.splitext(path)
    if ext == ".json":
        ext = ".safetensors"
    if ext != ".safetensors":
        raise ValueError(
            f"path: {path!r} is not a .safetensors checkpoint; mdmtheory loads only its own "
            "safetensors + JSON pairs (never pickles such as .pt/.bin)"
        )
    return root + ".safetensors", root + ".json"


def save_checkpoint(model: TinyMDM, path, *, info: dict | None = None) -> tuple[str, str]:
    """Write ``path`` (``.safetensors``, weights + format tag) and the sibling ``.json``
    (format, config, ``info`` — e.g. the command and seed that trained it). Returns both paths.

    Checked before anything is written: the folder exists, ``info`` is a dict that JSON can
    write (no NaN, no objects, no nesting deeper than Python's limit). Atomic: both files are
    written to temporary files in the same folder and then moved into place with
    ``os.replace``; on any failure the temporary files are removed and an existing pair is
    left as it was.
    """
    import tempfile

    from safetensors.torch import save_file

    if not isinstance(model, TinyMDM):
        raise ValueError(f"model: expected a TinyMDM, got {type(model).__name__}")
    st, js = _pair(path)
    folder = os.path.dirname(os.path.abspath(st))
    if not os.path.isdir(folder):
        raise ValueError(f"path: the folder {folder!r} does not exist; create it first")
    if info is not None and not isinstance(info, dict):
        raise ValueError(f"info: expected a dict (or None), got {type(info).__name__}")
    cfg = asdict(model.config)
    try:
        text = json.dumps({"format": FORMAT, "config": cfg, "info": info or {}}, indent=2, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"info: cannot be written as JSON ({' '.join(str(exc).split())[:120]}); use numbers, strings, lists and dicts") from None
    state = {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in model.state_dict().items()}
    tmps = []
    try:
        for suffix in (".safetensors", ".json"):
            fd, tmp = tempfile.mkstemp(prefix=".tmp-ckpt-", suffix=suffix, dir=folder)
            os.close(fd)
            tmps.append(tmp)
        save_file(state, tmps[0], metadata={"format": FORMAT, "config": json.dumps(cfg, sort_keys=True)})
        with open(tmps[1], "w") as fh:
            fh.write(text + "\n")
        os.replace(tmps[0], st)
        os.replace(tmps[1], js)
        tmps = []
    finally:
        for tmp in tmps:
            try:
                os.remove(tmp)
            except OSError:
                pass
    return st, js


def read_checkpoint_info(path) -> dict:
    """The JSON side of a checkpoint (format, config, info), validated (at most
    :data:`MAX_JSON_BYTES` bytes; deep nesting is refused)."""
    _, js = _pair(path)
    if not os.path.isfile(js):
        raise FileNotFoundError(f"model: {js!r} (the checkpoint's JSON config) does not exist")
    if os.path.getsize(js) > MAX_JSON_BYTES:
        raise ValueError(f"model: {js!r} is larger than {MAX_JSON_BYTES} bytes; not an mdmtheory checkpoint config")
    try:
        with open(js, encoding="utf-8") as fh:
            meta = json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError, ValueError) as exc:
        msg = " ".join(str(exc).split())[:120] or type(exc).__name__
        raise ValueError(f"model: {js!r} is not readable JSON ({msg}); not an mdmtheory checkpoint") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or not isinstance(meta.get("config"), dict):
        raise ValueError(f"model: {js!r} is not an mdmtheory checkpoint (no format tag {FORMAT!r})")
    return meta


def load_checkpoint(path, *, device=None) -> TinyMDM:
    """Load a checkpoint written by :func:`save_checkpoint` (in eval mode).

    Refuses: a path that is not ``.safetensors``/``.json``; a missing file; a JSON without
    our format tag or with a config beyond the limits of :class:`TinyConfig` (checked before
    any tensor is read); a safetensors file that is not one (or lacks our tag, or disagrees
    with the JSON config); missing, extra or mis-shaped tensors (checked from the header,
    before loading); non-finite weights.
    """
    from safetensors import SafetensorError, safe_open

    device = check_device(device)
    st, js = _pair(path)
    if not os.path.isfile(st):
        raise FileNotFoundError(f"model: {st!r} does not exist")
    meta = read_checkpoint_info(st)
    try:
        cfg = TinyConfig(**meta["config"])
    except TypeError as exc:
        raise ValueError(f"model: {js!r} has an invalid config ({exc})") from None
    except ValueError as exc:
        raise ValueError(f"model: {js!r} has an invalid config ({exc})") from None
    expected = {k: tuple(v.shape) for k, v in TinyMDM(cfg).state_dict().items()}
    try:
        with safe_open(st, framework="pt") as fh:
            tag = fh.metadata() or {}
            if tag.get("format") != FORMAT:
                raise ValueError(f"model: {st!r} is a safetensors file but not an mdmtheory checkpoint (no format tag)")
            try:
                tag_cfg = json.loads(tag.get("config", "{}"))
            except (json.JSONDecodeError, RecursionError):
                tag_cfg = None
            if tag_cfg != meta["config"]:
                raise ValueError(f"model: {st!r} and {js!r} disagree on the config; they are not one checkpoint")
            keys = set(fh.keys())
            if keys != set(expected) or any(tuple(fh.get_slice(k).get_shape()) != expected[k] for k in expected):
                raise ValueError(f"model: {st!r}: tensor names or shapes do not match its config")
            state = {k: fh.get_tensor(k) for k in expected}
    except (SafetensorError, OSError) as exc:
        raise ValueError(f"model: {st!r} is not a safetensors file ({' '.join(str(exc).split())[:120]})") from None
    if any(not t.is_floating_point() or not torch.isfinite(t).all() for t in state.values()):
        raise ValueError(f"model: {st!r} holds non-float or non-finite (NaN/inf) weights; the checkpoint is corrupt")
    model = TinyMDM(cfg)
    model.load_state_dict(state)
    model.eval()
    return model.to(device) if device is not None else model


def pretrained_path(name: str):
    """Path (an ``importlib.resources`` Traversable) of a shipped checkpoint's safetensors file."""
    from importlib.resources import files

    if not isinstance(name, str) or name not in PRETRAINED:
        raise ValueError(f"name: expected one of {', '.join(PRETRAINED)}, got {name!r:.60}")
    return files("mdmtheory.checkpoints") / f"{name}.safetensors"


def load_pretrained(name: str, *, device=None) -> TinyMDM:
    """A shipped checkpoint: ``"words"`` (MDM on :func:`mdmtheory.data.words`),
    ``"words-ar"`` (its causal baseline) or ``"markov"`` (MDM on
    :func:`mdmtheory.data.markov`, d = 64). Provenance is in the ``.json`` beside it."""
    from importlib.resources import as_file

    with as_file(pretrained_path(name)) as st:
        if not os.path.isfile(st):
            raise FileNotFoundError(f"name: the shipped checkpoint {name!r} is missing from this installation ({st})")
        with as_file(pretrained_path(name).parent / f"{name}.json"):
            return load_checkpoint(st, device=device)
