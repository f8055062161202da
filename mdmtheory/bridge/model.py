r"""The model protocol of the bridge: what every estimator reads from a torch MDM.

A masked-diffusion model is a map from a partially masked sequence to one distribution per
position. Real models differ in how they are called and what they return (LLaDA, Dream,
MDLM, dllm; ``docs/bridge.md``); :class:`MaskedModel` hides the differences:

* ``model``: an ``nn.Module`` or any callable ``ids (B, d) LongTensor -> logits (B, d, V)``
  (a tensor, or an object with ``.logits`` such as a Hugging Face ``ModelOutput``);
* ``mask_id``: the token id of the mask;
* ``vocab``: the token ids that count as *outcomes*; outcome k is token ``vocab[k]``.
  Every other column of the logits (the mask, padding, special tokens, the unused tail of a
  padded embedding) is **dropped and the rest renormalized**:

  .. math:: \hat p(x_j = k \mid x_A) = \frac{\exp \ell_{j, \mathrm{vocab}[k]}}
            {\sum_{k'} \exp \ell_{j, \mathrm{vocab}[k']}},

  i.e. the model's distribution conditioned on the token being an outcome. ``vocab=None``
  means every column except ``mask_id`` (so ``vocab[k] = k`` when the mask is the last id);
* ``shift``: Dream-style models predict token i from the logits at i − 1; the bridge then
  reads ``logits[:, i - 1]`` for position i and ``logits[:, 0]`` for position 0 (Dream's
  own ``cat([logits[:, :1], logits[:, :-1]])``; position 0 should be a prompt token);
* ``time_input``: for models conditioned on the noise level (MDLM's σ), a callable
  ``time_input(mask_fraction) -> dict`` of extra keyword arguments of the call, given the
  float64 tensor (B,) of the fraction of masked positions of each row (e.g. MDLM with the
  log-linear schedule, where the mask probability at σ is :math:`1 - e^{-\sigma}`:
  ``lambda f: {"sigma": -torch.log1p(-f.clamp(max=1 - 1e-3))}``);
* ``max_batch``: the largest batch of one forward; ``device``/``dtype``: where the model
  runs (the module is moved/cast when given; otherwise read from its parameters).

Samples everywhere are integer arrays of outcome indices 0..K−1 (−1 = masked).

Log-probabilities are computed in float32 (float64 when the logits are float64) from the
model's logits and returned in float64. Logits may be −inf (probability 0; the exact model
uses it) but never NaN or +inf: those raise ``ValueError`` (``log_probs`` checks every
logit; ``score``, the estimators' fast path, checks the ones it reads: the outcome columns
of the masked positions it scores).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from ..laws.oracles import as_oracle, check_batch
from .._moved import renamed_keywords
from .._validate import int_arg, name_arg
from ._checks import check_bool, check_device, check_dtype, int_array, MAX_BATCH, MAX_TOKEN_ID, position_limit, short

__all__ = ["MaskedModel", "as_masked_model", "ExactModel", "ModelOracle"]

_BAD_LOGITS = "model: returned NaN or +inf logits (only -inf, probability 0, is allowed)"
#: Logits per chunk of the log-sum-exp of :meth:`MaskedModel.score` on CPU (2**19: 2 MiB float32).
_LSE_CHUNK = 1 << 19
#: The same on CUDA (2**27: 512 MiB float32; large kernels, bounded memory).
_LSE_CHUNK_CUDA = 1 << 27
#: Smallest Σ_k exp ℓ_k taken without a shift by the row's maximum: every term below the
#: smallest normal number (or flushed to 0) then changes the sum by < V · 1.2e-38 (float32),
#: far below its rounding; smaller sums, and +inf or NaN, are recomputed shifted.
_SAFE_SUM = {torch.float32: 1e-20, torch.float64: 1e-200}


def _embedding_rows(model):
    """Number of token ids the model embeds, when it says so (TinyMDM, Hugging Face), else None."""
    if isinstance(model, torch.nn.Embedding):
        return model.num_embeddings
    try:
        emb = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else getattr(model, "tok", None)
    except (AttributeError, NotImplementedError, TypeError):
        emb = None
    n = getattr(emb, "num_embeddings", None)
    if isinstance(n, int) and n > 0:
        return n
    if isinstance(model, ExactModel):
        return model.K + 1
    return None


def _fixed_length(model):
    """The only sequence length a model reads (TinyMDM: seq_len; ExactModel: d), else None."""
    if isinstance(model, ExactModel):
        return model.d
    L = getattr(getattr(model, "config", None), "seq_len", None)
    return L if isinstance(L, int) and not isinstance(L, bool) and isinstance(model, torch.nn.Module) else None


def _position_limit(model):
    """The longest row a Hugging Face model reads (:func:`mdmtheory.bridge.hf.position_limit`
    of its ``config``), else None (a TinyMDM has its one length; callables say nothing)."""
    config = getattr(model, "config", None)
    if config is None or not hasattr(config, "to_dict") or not isinstance(model, torch.nn.Module):
        return None
    return position_limit(config)


def _module_place(model):
    """(device, dtype) of the first floating parameter or buffer of a module, else (cpu, None)."""
    if isinstance(model, torch.nn.Module):
        for t in list(model.parameters()) + list(model.buffers()):
            if t.is_floating_point():
                return t.device, t.dtype
    return torch.device("cpu"), None


class MaskedModel:
    """A torch MDM seen through the bridge's protocol (see the module docstring).

    Parameters
    ----------
    model : torch.nn.Module or callable
        ``ids (B, d) LongTensor [, **time kwargs] -> logits (B, d, V)`` or an object with
        ``.logits``.
    mask_id : int
        Token id of the mask.
    vocab : sequence of int, optional
        Token ids of the K outcomes (distinct, without ``mask_id``). Default: every logit
        column except ``mask_id``.
    shift : bool
        Read position i's prediction from the logits at i − 1 (Dream).
    time_input : callable, optional
        ``mask_fraction (B,) float64 tensor -> dict`` of extra keyword arguments.
    max_batch : int
        Largest number of sequences per forward (<= ``MAX_BATCH`` = 2**20).
    device, dtype : optional
        Move / cast the module there (``nn.Module`` only); default: where it already is.
        ``device``: a device that exists here; ``dtype``: a floating torch dtype.

    ``mask_id`` and ``vocab`` ids are <= ``MAX_TOKEN_ID`` = 2**31 − 1 and, when the model
    says how many ids it embeds (TinyMDM, Hugging Face ``get_input_embeddings``), below
    that; a causal TinyMDM is refused (it cannot read masked sequences).

    Attributes
    ----------
    forwards : int
        Number of sequences evaluated so far (the estimators report their share).
    """

    def __init__(self, model, *, mask_id, vocab=None, shift=False, time_input=None, max_batch=256, device=None, dtype=None):
        if not callable(model):
            raise ValueError(f"model: expected a torch.nn.Module or a callable ids -> logits, got {type(model).__name__}")
        if getattr(getattr(model, "config", None), "causal", False) is True and hasattr(model, "mask_id"):
            raise ValueError(
                "model: a causal (autoregressive) TinyMDM reads only clean data tokens, never masked "
                "sequences; the bridge estimators need a masked-diffusion model (causal=False), e.g. the "
                "shipped 'words' checkpoint instead of 'words-ar'"
            )
        self.mask_id = int_arg(mask_id, "mask_id", 0, MAX_TOKEN_ID)
        self.shift = check_bool(shift, "shift")
        if time_input is not None and not callable(time_input):
            raise ValueError(f"time_input: expected a callable mask_fraction -> dict of kwargs, got {short(time_input)}")
        self.time_input = time_input
        self.max_batch = int_arg(max_batch, "max_batch", 1, MAX_BATCH)
        device = check_device(device)
        dtype = check_dtype(dtype)
        if (device is not None or dtype is not None) and not isinstance(model, torch.nn.Module):
            raise ValueError("device, dtype: only an nn.Module can be moved or cast; place your callable's model yourself")
        n_emb = _embedding_rows(model)
        if n_emb is not None and self.mask_id >= n_emb:
            raise ValueError(
                f"mask_id: {self.mask_id} is not a token id of this model (its embedding has {n_emb} rows, "
                f"ids 0..{n_emb - 1}); pass the model's mask token id"
            )
        if isinstance(model, torch.nn.Module):
            if device is not None or dtype is not None:
                model = model.to(device=device, dtype=dtype)
            model.eval()
        place_device, place_dtype = _module_place(model)
        self.device = device if device is not None else place_device
        self.dtype = dtype if dtype is not None else place_dtype
        self.model = model
        self.forwards = 0
        self._vocab = None
        self._length = _fixed_length(model)
        self.max_length = None if self._length is not None else _position_limit(model)
        if vocab is None and isinstance(model, ExactModel):
            vocab = range(model.K)
        if vocab is not None:
            v = int_array(list(vocab) if isinstance(vocab, range) else vocab, "vocab", "token ids")
            if v.ndim != 1 or v.shape[0] < 1 or v.min() < 0 or v.max() > MAX_TOKEN_ID:
                raise ValueError(
                    f"vocab: expected a non-empty 1-d sequence of token ids in 0..{MAX_TOKEN_ID}, got {short(vocab)}"
                )
            if np.unique(v).shape[0] != v.shape[0]:
                raise ValueError("vocab: contains repeated token ids")
            if np.any(v == self.mask_id):
                raise ValueError(
                    f"vocab: contains the mask id {self.mask_id}; the mask is never an outcome "
                    "(drop it from vocab or fix mask_id)"
                )
            if n_emb is not None and v.max() >= n_emb:
                raise ValueError(f"vocab: token id {int(v.max())} is not a token of this model (ids 0..{n_emb - 1})")
            self._set_vocab(v)
        own = getattr(model, "mask_id", None)
        if isinstance(own, int) and not isinstance(own, bool) and isinstance(model, torch.nn.Module) and own != self.mask_id:
            raise ValueError(
                f"mask_id: {self.mask_id} given, but this model's own mask id is {own} (model.mask_id); "
                f"drop mask_id or pass {own}"
            )

    def check_length(self, d: int, name: str = "samples") -> None:
        """Refuse sequences of a length the model cannot read (a TinyMDM's seq_len, an ExactModel's d,
        more tokens than a Hugging Face config's position limit ``max_length``), before any forward.
        ``d``: a sequence length (an integer >= 1); ``name``: the argument the rows came from."""
        name = name_arg(name)
        d = int_arg(d, name, 1, hint=" (a sequence length)")
        if self.max_length is not None and d > self.max_length:
            raise ValueError(
                f"{name}: sequences of length {d}, but this model reads at most {self.max_length} positions (its "
                f"config's position limit, e.g. max_position_embeddings); give rows of at most {self.max_length} tokens"
            )
        if self._length is not None and d != self._length:
            raise ValueError(
                f"{name}: sequences of length {d}, but this model reads sequences of exactly "
                f"{self._length} tokens (it was built for d = {self._length}); give data of length "
                f"{self._length} or a model trained at d = {d}"
            )

    # -- vocabulary ------------------------------------------------------------------------
    def resolve(self, d: int) -> None:
        """Fix the outcome vocabulary (``vocab=None``: one probe forward of length d >= 1)."""
        d = int_arg(d, "d", 1, hint=" (a sequence length)")
        if self._vocab is not None:
            return
        self.check_length(d, "d")
        ids = torch.full((1, d), self.mask_id, dtype=torch.long, device=self.device)
        V = self._call(ids).shape[-1]
        if self.mask_id >= V:
            raise ValueError(
                f"mask_id: {self.mask_id} is outside the model's logits (ids 0..{V - 1}); pass the "
                "model's mask token id"
            )
        keep = [i for i in range(V) if i != self.mask_id]
        if not keep:
            raise ValueError("model: its logits have no column besides the mask")
        self._set_vocab(np.array(keep, dtype=np.int64))

    def _set_vocab(self, v: np.ndarray) -> None:
        v = np.asarray(v, dtype=np.int64)
        self._vocab = torch.as_tensor(v, device=self.device)
        self._contiguous = bool(np.array_equal(v, np.arange(v[0], v[0] + v.shape[0])))
        self._abm = (None, False)

    @property
    def K(self) -> int:
        """Number of outcomes (needs ``vocab`` or a first call of :meth:`resolve`)."""
        if self._vocab is None:
            raise ValueError("vocab: unknown until the first forward; call resolve(d) or pass vocab")
        return int(self._vocab.shape[0])

    @property
    def vocab(self) -> tuple[int, ...] | None:
        return None if self._vocab is None else tuple(int(v) for v in self._vocab.tolist())

    # -- forwards --------------------------------------------------------------------------
    def _call(self, ids, check: bool = True):
        """Raw logits (b, d, V) of one batch of token ids, checked (``check=False``: the shape
        only; the caller then checks the values it reads, as :meth:`score` does)."""
        b, d = ids.shape
        kwargs = {}
        if self.time_input is not None:
            frac = (ids == self.mask_id).to(torch.float64).mean(dim=1)
            kwargs = self.time_input(frac)
            if not isinstance(kwargs, Mapping):
                raise ValueError(f"time_input: must return a dict of keyword arguments, got {type(kwargs).__name__}")
        with torch.inference_mode():
            try:
                out = self.model(ids, **kwargs)
            except IndexError as exc:  # an embedding lookup past the model's vocabulary
                raise ValueError(
                    f"mask_id, vocab: the model failed on token ids {int(ids.min())}..{int(ids.max())} "
                    f"({' '.join(str(exc).split())[:120]}); mask_id and vocab must be token ids of this model"
                ) from None
        logits = out if isinstance(out, torch.Tensor) else getattr(out, "logits", None)
        if not isinstance(logits, torch.Tensor):
            raise ValueError(
                f"model: returned {type(out).__name__}; expected logits (B, d, V) as a tensor or "
                "an object with .logits (a base model without an LM head gives hidden states)"
            )
        self.forwards += b
        need = 1 + (self.mask_id if self._vocab is None else max(int(self._vocab.max()), 0))
        if logits.ndim != 3 or logits.shape[0] != b or logits.shape[1] != d or (self._vocab is not None and logits.shape[2] < need):
            raise ValueError(
                f"model: returned logits of shape {tuple(logits.shape)}, expected ({b}, {d}, V)"
                + (f" with V >= {need} (the largest vocab id + 1)" if self._vocab is not None else "")
            )
        if check and (torch.isnan(logits).any() or torch.isposinf(logits).any()):
            raise ValueError(_BAD_LOGITS)
        return logits

    def _ids(self, x) -> torch.Tensor:
        arr = int_array(x, "x", "outcome indices (B, d), -1 = masked")
        if arr.ndim != 2 or arr.shape[1] < 1:
            raise ValueError(f"x: expected an integer (B, d) array of outcome indices (-1 = masked), got shape {arr.shape}")
        x = torch.as_tensor(arr, device=self.device)
        self.check_length(x.shape[1], "x")
        self.resolve(x.shape[1])
        if x.numel() and (x.min() < -1 or x.max() >= self.K):
            raise ValueError(f"x: outcome indices must lie in 0..{self.K - 1} (-1 = masked)")
        return torch.where(x < 0, torch.full_like(x, self.mask_id), self._vocab[x.clamp(min=0)])

    def _lse_rows(self, flat, idx) -> torch.Tensor:
        r"""log Σ_k exp ℓ_{vocab[k]} of the rows ``flat[idx]`` of the (rows, V) logits, float32
        (float64 for float64 logits).

        The rows are copied in chunks of about ``_LSE_CHUNK`` logits into one reused buffer
        (cache-resident on CPU; ``_LSE_CHUNK_CUDA`` on CUDA), never the whole (b, d, V)
        logits; in each chunk the outcome columns are taken in place (every id but the mask:
        the mask column set to −inf; a slice: a view; otherwise ``index_select``) and
        :math:`\log \sum_k e^{\ell_k}` is computed directly (``exp_``, sum, log). Rows where
        that is not safe, a sum outside [``_SAFE_SUM``, ∞) (a logit above ~88 in float32,
        all of them below ~−46, NaN), are recomputed with the row's maximum subtracted
        first, so the result is the log-sum-exp to float rounding: a row that is −inf
        everywhere gives −inf (the caller names it), NaN or +inf give NaN or +inf.
        """
        V = flat.shape[-1]
        out_dtype = torch.float64 if flat.dtype == torch.float64 else torch.float32
        dev = flat.device
        n = idx.shape[0]
        chunk = max(1, (_LSE_CHUNK_CUDA if dev.type == "cuda" else _LSE_CHUNK) // max(V, 1))
        mode = "slice" if self._contiguous else ("mask" if self._all_but_mask(V) else "gather")
        lo_v = int(self._vocab[0])
        buf = torch.empty((min(chunk, n), V), dtype=flat.dtype, device=dev)  # reused: no new pages per chunk
        wide = buf if flat.dtype == out_dtype else torch.empty(buf.shape, dtype=out_dtype, device=dev)

        def outcomes(rows):  # the outcome columns of the copied rows, in place where possible
            if mode == "slice":
                return rows[:, lo_v : lo_v + self.K]
            if mode == "gather":
                return rows.index_select(1, self._vocab)
            rows.select(1, self.mask_id).fill_(-torch.inf)
            return rows

        total = torch.empty(n, dtype=out_dtype, device=dev)
        for s in range(0, n, chunk):
            i = idx[s : s + chunk]
            m = i.shape[0]
            rows = torch.index_select(flat, 0, i, out=buf[:m])
            if wide is not buf:  # bf16/half logits: the sum in float32
                rows = wide[:m].copy_(rows)
            torch.sum(outcomes(rows).exp_(), dim=1, out=total[s : s + m])
        out = total.log()
        redo = ~((total >= _SAFE_SUM[out_dtype]) & (total < torch.inf))
        where = redo.nonzero()[:, 0]  # rare: an overflow, an underflow or NaN; shift by the row's maximum
        for s in range(0, where.shape[0], chunk):
            w = where[s : s + chunk]
            rows = outcomes(flat.index_select(0, idx[w]).to(out_dtype))
            mx = rows.amax(dim=1, keepdim=True)
            mx = torch.where(torch.isneginf(mx), torch.zeros((), dtype=out_dtype, device=dev), mx)
            out[w] = rows.sub_(mx).exp_().sum(dim=1).log_().add_(mx[:, 0])
        return out

    def _all_but_mask(self, V: int) -> bool:
        """Whether the outcomes are every id of the V logit columns except the mask (cached per V)."""
        if self._abm[0] != V:
            v = self._vocab.cpu().numpy()
            ok = v.shape[0] == V - 1 and 0 <= self.mask_id < V and np.array_equal(v, np.delete(np.arange(V), self.mask_id))
            self._abm = (V, ok)
        return self._abm[1]

    def _outcome_logits(self, ids) -> torch.Tensor:
        """Logits over the K outcomes, shifted, in float32 (float64 if the model gives float64)."""
        logits = self._call(ids)
        if self.shift:
            logits = torch.cat([logits[:, :1], logits[:, :-1]], dim=1)
        lo, K = int(self._vocab[0]), self.K
        if self._contiguous:  # a view, no copy of (B, d, V)
            logits = logits[..., lo : lo + K]
        else:
            logits = logits.index_select(-1, self._vocab)
        return logits.to(torch.float64 if logits.dtype == torch.float64 else torch.float32)

    def _batches(self, n: int):
        for lo in range(0, n, self.max_batch):
            yield slice(lo, min(n, lo + self.max_batch))

    def log_probs(self, x) -> torch.Tensor:
        r""":math:`\log \hat p(x_j = k \mid x_A)`, float64 tensor (B, d, K) on the model's device.

        ``x``: integer (B, d) outcome indices with −1 at masked positions. Rows of revealed
        positions are whatever the model says there (not used by the estimators).
        """
        ids = self._ids(x)
        out = []
        for sl in self._batches(ids.shape[0]):
            lp = torch.log_softmax(self._outcome_logits(ids[sl]), dim=-1).to(torch.float64)
            masked = ids[sl] == self.mask_id
            if torch.isnan(lp[masked]).any():
                raise ValueError("model: gives -inf to every outcome at a masked position (no distribution)")
            out.append(lp)
        return torch.cat(out) if out else torch.zeros((0, ids.shape[1], self.K), dtype=torch.float64, device=self.device)

    def score(self, x, target) -> torch.Tensor:
        r""":math:`\log \hat p(\mathrm{target}_j \mid x_A)` at the masked positions of x, 0 elsewhere.

        ``x`` (B, d) outcome indices (−1 = masked), ``target`` (B, d) outcome indices (the
        clean sequences). Returns float64 (B, d) on the model's device; one forward per row.

        Cost beyond the forward: the log-sum-exp over the outcome columns of the *masked*
        positions only, in small chunks of copied rows (the (B, d, V) logits are never
        copied nor converted), and one gathered logit per masked position. The logits it
        reads (the outcome columns of the masked positions) must not be NaN or +inf;
        nothing else of the logits is read or checked.
        """
        return self._score(x, target, 0, None)

    def _score(self, x, target, lo: int, hi) -> torch.Tensor:
        """:meth:`score` of positions lo..hi−1 only (B, hi − lo); other positions are never
        read (a masked position outside the range is neither scored nor checked)."""
        ids = self._ids(x)
        try:
            tgt_np = int_array(target, "target")
        except ValueError as exc:
            raise ValueError(f"target: expected integer outcome indices of the shape of x {tuple(ids.shape)} ({exc})") from None
        if tuple(tgt_np.shape) != tuple(ids.shape):
            raise ValueError(
                f"target: expected integer outcome indices of the shape of x {tuple(ids.shape)}, got shape {tgt_np.shape}"
            )
        tgt = torch.as_tensor(tgt_np, device=self.device)
        if tgt.numel() and (tgt.min() < 0 or tgt.max() >= self.K):
            raise ValueError(f"target: outcome indices must lie in 0..{self.K - 1} (the clean sequences, no -1)")
        d = ids.shape[1]
        hi = d if hi is None else hi
        pos = torch.arange(lo, hi, device=self.device)
        src = (pos - 1).clamp(min=0) if self.shift else pos  # the logits row each position reads
        out = []
        for sl in self._batches(ids.shape[0]):
            logits = self._call(ids[sl], check=False)
            b, V = logits.shape[0], logits.shape[-1]
            flat = logits.reshape(b * d, V)  # a view of the model's (b, d, V) logits
            masked = ids[sl, lo:hi] == self.mask_id
            bi, ji = masked.nonzero(as_tuple=True)
            rows = bi * d + src[ji]
            lse = self._lse_rows(flat, rows)
            if torch.isnan(lse).any() or torch.isposinf(lse).any():
                raise ValueError(_BAD_LOGITS)
            own = flat[rows, self._vocab[tgt[sl, lo:hi][bi, ji]]].to(lse.dtype)
            lp = torch.zeros(masked.shape, dtype=torch.float64, device=self.device)
            lp[bi, ji] = (own - lse).to(torch.float64)
            if torch.isnan(lp).any():
                raise ValueError("model: gives -inf to every outcome at a masked position (no distribution)")
            if torch.isneginf(lp).any():
                raise ValueError(
                    "model: assigns probability 0 to an observed token (log p = -inf); the "
                    "cross-entropy is infinite"
                )
            out.append(lp)
        return torch.cat(out) if out else torch.zeros((0, hi - lo), dtype=torch.float64, device=self.device)

    def __repr__(self) -> str:
        name = type(self.model).__name__
        return (
            f"MaskedModel({name}, mask_id={self.mask_id}, K={None if self._vocab is None else self.K}, "
            f"shift={self.shift}, device={self.device})"
        )


def as_masked_model(obj, **kw) -> MaskedModel:
    """A :class:`MaskedModel` from a MaskedModel (unchanged), a module with ``mask_id``, or a callable.

    Keyword arguments go to :class:`MaskedModel`; ``mask_id`` defaults to ``obj.mask_id``
    (:class:`ExactModel`, TinyMDM) and is required otherwise.
    """
    if isinstance(obj, MaskedModel):
        if kw:
            raise ValueError(f"model: already a MaskedModel; options {sorted(kw)} cannot be changed here")
        return obj
    if not callable(obj):
        raise ValueError(f"model (obj): expected a torch MDM (an nn.Module or a callable ids -> logits) or a "
                         f"MaskedModel, got {short(obj)}")
    if "mask_id" not in kw:
        mask_id = getattr(obj, "mask_id", None)
        if mask_id is None:
            raise ValueError(
                f"mask_id: required for a {type(obj).__name__} without a mask_id attribute "
                "(e.g. 126336 for LLaDA, 151666 for Dream)"
            )
        kw["mask_id"] = mask_id
    return MaskedModel(obj, **kw)


class ExactModel(torch.nn.Module):
    r"""The exact conditionals of a law as a torch MDM: the reference of every estimator.

    ``forward(ids)``: ids (B, d) with tokens 0..K−1 and the mask id K; returns float64 logits
    (B, d, K + 1) = :math:`\log p(x_j = v \mid x_A)` at masked positions (−inf for
    impossible values), a one-hot (0 / −inf) at revealed positions (as MDLM's carry-over),
    and −inf in the mask column. At a prefix with :math:`p(x_A) = 0` (never reached by a
    sample of p) the conditional is undefined; the model returns the uniform law there.

    Parameters
    ----------
    p : Joint or conditional oracle (``d``, ``K``, ``conditionals``, ``log_marginal``,
        ``sample``: what :func:`mdmtheory.laws.as_oracle` accepts); kept as ``.law``.
    """

    @renamed_keywords(law="p")
    def __init__(self, p):
        super().__init__()
        self.law = as_oracle(p)
        self.d = int(self.law.d)
        self.K = int(self.law.K)
        self.mask_id = self.K
        self.vocab_size = self.K + 1

    def forward(self, ids):
        device = ids.device if isinstance(ids, torch.Tensor) else torch.device("cpu")
        x = int_array(ids, "ids", f"token ids (B, {self.d})")
        if x.ndim != 2 or x.shape[1] != self.d:
            raise ValueError(
                f"ids: this exact model reads sequences of d = {self.d} tokens, got an array of shape "
                f"{x.shape}; give (B, {self.d}) token ids"
            )
        if x.size and (x.min() < 0 or x.max() > self.K):
            raise ValueError(
                f"ids: tokens must lie in 0..{self.K} (outcomes 0..{self.K - 1}, {self.K} = mask), "
                f"got {int(x.min())}..{int(x.max())}"
            )
        revealed = x != self.K
        xs = np.where(revealed, x, 0).astype(np.int64)
        probs = np.asarray(self.law.conditionals(xs, revealed), dtype=np.float64)
        dead = ~revealed & (probs.sum(axis=-1) <= 0)
        probs = np.where(dead[..., None], 1.0 / self.K, probs)
        probs = np.where(revealed[..., None], np.arange(self.K) == xs[..., None], probs)
        with np.errstate(divide="ignore"):
            logp = np.log(probs)
        out = np.concatenate([logp, np.full(x.shape + (1,), -np.inf)], axis=-1)
        return torch.from_numpy(out).to(device)


class ModelOracle:
    """A :class:`MaskedModel` seen as a conditional oracle (``conditionals`` only).

    ``conditionals(x, revealed)`` returns the model's :math:`\\hat p(x_j = v \\mid x_A)`,
    float64 numpy (n, d, K), rows of revealed positions 0 (as the oracles of
    :mod:`mdmtheory.laws.oracles`). ``d`` is fixed by the first call unless given.
    """

    def __init__(self, model, d: int | None = None):
        self.model = as_masked_model(model)
        self.d = None if d is None else int_arg(d, "d", 1)
        if self.d is not None:
            self.model.resolve(self.d)

    @property
    def K(self) -> int:
        return self.model.K

    def conditionals(self, x, revealed):
        for name, v in (("x", x), ("revealed", revealed)):  # ragged or deep: numpy's own errors name nothing
            try:
                np.asarray(v)
            except (TypeError, ValueError, OverflowError, RecursionError, MemoryError):
                raise ValueError(f"{name}: cannot be read as an (n, d) array, got {short(v)}") from None
        if self.d is None:
            shape = np.shape(x)
            if len(shape) != 2:
                raise ValueError(f"x, revealed: expected two (n, d) arrays, got x of shape {shape}")
            self.d = int_arg(shape[1], "d", 1)
            self.model.resolve(self.d)
        x, revealed = check_batch(x, revealed, self.d, self.K)
        inp = np.where(revealed, x, -1)
        p = torch.exp(self.model.log_probs(inp)).cpu().numpy()
        return np.where(revealed[..., None], 0.0, p)
