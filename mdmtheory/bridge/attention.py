r"""Attention diagnostics of masked diffusion models: floating anchors across steps and layers.

Autoregressive transformers send much of their attention to a fixed *sink* (the first
token); masked diffusion models (bidirectional attention) have been reported to show
*floating* anchors: positions that absorb attention move across denoising steps and layers
(Attention Floating, arXiv 2601.07894). This module measures that on any torch model
that returns attention maps, while it samples, and relates the anchors to the information
structure of data whose law is known exactly.

Everything is computed from the **head-averaged map** of layer :math:`\ell`

.. math::

    A^{(\ell)} = \frac1H \sum_{h=1}^H \operatorname{softmax}\Bigl(\frac{Q_h K_h^\top}{\sqrt{d_h}}\Bigr)
    \qquad (\text{rows } i = \text{queries, columns } j = \text{keys; each row sums to 1}).

Metrics (pure functions on arrays, numpy or torch; leading axes are batch axes):

* :func:`received_attention` — :math:`s_j = \frac1L \sum_i A_{ij}` (arXiv 2601.07894).
* :func:`anchors` — :math:`\{j : s_j > \mu(s) + \varepsilon\,\sigma(s)\}`, ε = 3, σ the population
  standard deviation (ddof = 0); when no position passes, the arg max of s (lowest index on
  ties). This is the rule of the authors' code (``NEUIR/Attention-Floating`` at 7d6be0a,
  ``QK_decomposition.py`` and ``create_temporal.py``; the paper's text was not read); one of
  its scripts (``absorption_comparison.py``) adds ε to the mean of the other columns
  instead, under which only the arg max fallback ever fires — we do not copy that
  (docs/attention.md). Note (Samuelson's inequality) :math:`\max_j (s_j - \mu)/\sigma \le \sqrt{L-1}`:
  for L ≤ 10 positions no position can pass ε = 3, and the rule is always the arg max.
* :func:`absorption` — :math:`\sum_{j\in S}\sum_i A_{ij} / \sum_{ij} A_{ij}` (per layer);
  :func:`absorption_stats` gives mean ± std over samples.
* :func:`drift` — between consecutive steps: whether the anchor set changed, its Jaccard
  distance :math:`1 - |S_t \cap S_{t-1}|/|S_t \cup S_{t-1}|`, and the move
  :math:`|j^*_t - j^*_{t-1}|` of the top anchor :math:`j^* = \arg\max_j s_j`.
* :func:`row_entropy` — :math:`-\sum_j A_{ij}\log A_{ij}` per query row (nats).
* :func:`masked_share` — share of attention that lands on masked (vs revealed) keys.

Extraction: :func:`trace_sampling` runs the factorized sampler with the model's own
probabilities (any planner of :mod:`mdmtheory.samplers` and any Schedule) and records, at
every step and layer, either the full maps (``keep="full"``) or only what the metrics need
(``keep="summary"``: column sums split by masked/revealed queries and row entropies, O(L d)
per step instead of O(L d²)). :func:`trace_forward` does one forward pass (the causal
baseline). :func:`floating_summary` reduces a trace to per-layer numbers.

Beyond the paper: :func:`revealed_information` gives, for a state :math:`(A, x_A)` of the
sampler, the exact information :math:`I(X_i; X_j \mid X_{A\setminus j})` of every revealed j
about every masked i, and :func:`attention_information_correlation` the Spearman rank
correlation per layer between :math:`A^{(\ell)}_{ij}` and it.

torch is imported only by the extraction functions (extra ``bridge``); matplotlib only by
the plotting functions (extra ``report``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.special import entr, xlogy
from scipy.stats import rankdata

from .._estimate import Record, record_dict
from .._moved import renamed_keywords
from .._validate import float_array, int_arg, real_arg, _short
from ._checks import bool_array as _b, int_array, MAX_TOKEN_ID, check_bool
from ..samplers.simulate import choose_positions, planner_setup
from ..schedules.plans import Grid
from ..laws.oracles import inverse_cdf, as_oracle
from ..laws.joint import Joint, positions_to_mask
from .._moved import module_getattr

#: Largest ``batch_size`` of the extraction functions (sequences per forward).
MAX_BATCH = 1 << 20
#: Largest number of attention-map entries a function builds (n x steps x layers x L x L for
#: ``keep="full"``, n x steps x layers x L otherwise): 2**28 float64 = 2 GiB.
MAX_ENTRIES = 1 << 28

__all__ = ["as_float_array", 
    "received_attention",
    "anchors",
    "absorption",
    "absorption_stats",
    "Drift",
    "drift",
    "row_entropy",
    "masked_share",
    "AttentionTrace",
    "summarize_maps",
    "attention_maps",
    "trace_sampling",
    "trace_forward",
    "FloatingSummary",
    "floating_summary",
    "conditional_mutual_information",
    "revealed_information",
    "InformationCorrelation",
    "attention_information_correlation",
]

#: Largest allowed deviation of an attention row sum from 1 (float32 models, bf16 upcast).
ROW_SUM_TOL = 1e-3
DEFAULT_EPS = 3.0


# -- input handling ----------------------------------------------------------------------
def as_float_array(a, name: str) -> np.ndarray:
    """float64 numpy copy of an array or a torch tensor (without importing torch)."""
    if hasattr(a, "detach") and hasattr(a, "cpu"):
        if getattr(a, "dtype", None) is not None and getattr(a.dtype, "is_floating_point", True) is False:
            raise ValueError(f"{name}: expected real numbers, got a {a.dtype} tensor")
        a = a.detach().cpu().double().numpy()
    if isinstance(a, np.ndarray) and a.dtype == bool:
        raise ValueError(f"{name}: expected real numbers, got a bool array")
    arr = float_array(a, name, finite=False)  # strings, bools, deep lists refused; nothing coerced
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    return arr


def _check_maps(A, name: str = "A") -> np.ndarray:
    """Attention maps (..., Lq, L): finite, non-negative, rows summing to 1."""
    A = as_float_array(A, name)
    if A.ndim < 2:
        raise ValueError(f"{name}: expected attention maps of shape (..., queries, keys), got shape {A.shape}")
    if A.shape[-1] == 0 or A.shape[-2] == 0:
        raise ValueError(f"{name}: expected at least one query row and one key column, got shape {A.shape}")
    if np.any(A < 0):
        raise ValueError(f"{name}: attention weights must be non-negative (pass softmax probabilities, not scores)")
    rows = A.sum(axis=-1)
    if np.any(np.abs(rows - 1.0) > ROW_SUM_TOL):
        worst = float(np.max(np.abs(rows - 1.0)))
        raise ValueError(
            f"{name}: every query row must sum to 1 (softmax probabilities, rows = queries); "
            f"worst deviation {worst:.3g}"
        )
    return A


def _check_eps(eps) -> float:
    eps = real_arg(eps, "eps")
    if eps < 0:
        raise ValueError(f"eps: the anchor threshold multiplier must be >= 0, got {eps}")
    return eps


def _check_broadcast(mask: np.ndarray, shape, name: str) -> None:
    try:
        np.broadcast_shapes(mask.shape, shape)
    except ValueError:
        raise ValueError(f"{name}: shape {mask.shape} does not broadcast against the maps' {tuple(shape)}") from None


def _check_queries(queries) -> str:
    if not isinstance(queries, str) or queries not in ("all", "masked"):
        raise ValueError(f'queries: expected "all" or "masked", got {_short(queries)}')
    return queries


def _check_keep(keep) -> str:
    if not isinstance(keep, str) or keep not in ("full", "summary"):
        raise ValueError(f'keep: expected "full" or "summary", got {_short(keep)}')
    return keep


def _check_set(S, L: int, name: str) -> np.ndarray:
    """A set of key positions as a bool mask (..., L): a bool array, or a list of indices."""
    if S is None or isinstance(S, (str, bytes, dict, set, bool, np.bool_)):
        raise ValueError(f"{name}: expected a bool mask (..., {L}) or a 1-D list of positions, got {_short(S)}")
    try:
        arr = np.asarray(S.detach().cpu() if hasattr(S, "detach") else S)
    except (TypeError, ValueError, OverflowError, RecursionError):
        raise ValueError(f"{name}: cannot be read as a bool mask (..., {L}) or a list of positions") from None
    if arr.dtype == bool:
        if arr.shape[-1:] != (L,):
            raise ValueError(f"{name}: a bool mask must have last axis of length {L}, got shape {arr.shape}")
        return arr
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
        raise ValueError(f"{name}: expected a bool mask (..., {L}) or a 1-D list of positions, got {_short(S)}")
    if np.any((arr < 0) | (arr >= L)):
        raise ValueError(f"{name}: positions must lie in 0..{L - 1} (no -1: nothing wraps), got {_short(arr.tolist())}")
    mask = np.zeros(L, dtype=bool)
    mask[arr.astype(np.int64)] = True  # an empty list (float dtype) is the empty set
    return mask


# -- metrics -----------------------------------------------------------------------------
def received_attention(A) -> np.ndarray:
    r"""Received attention :math:`s_j = \frac1L \sum_i A_{ij}` of every key position j.

    Parameters
    ----------
    A : (..., L, L) attention maps, rows = queries (numpy or torch); a (..., Lq, L) map
        averages over its Lq query rows.

    Returns
    -------
    (..., L) float64; sums to 1 along the last axis.

    References
    ----------
    Attention Floating, arXiv 2601.07894.

    Examples
    --------
    >>> A = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0], [0.5, 0.0, 0.5]])
    >>> received_attention(A)
    array([0.66666667, 0.16666667, 0.16666667])
    """
    A = _check_maps(A)
    return A.mean(axis=-2)


def anchors(s, *, eps: float = DEFAULT_EPS) -> np.ndarray:
    r"""Anchor positions: :math:`\{j : s_j > \mu(s) + \varepsilon\,\sigma(s)\}`, else the arg max.

    μ and σ are the mean and population standard deviation (ddof = 0) of s along the last
    axis. When no position passes the threshold the set is :math:`\{\arg\max_j s_j\}` (lowest
    index on ties), so every set is non-empty. This is the rule of the authors' code
    (arXiv 2601.07894; ``NEUIR/Attention-Floating`` at 7d6be0a,
    ``src/visualization/QK_decomposition.py``, ε = 3; the paper's text was not read); its
    ``absorption_comparison.py`` compares with the mean of the other scores plus ε instead,
    which we do not follow. By Samuelson's inequality no
    position can pass when :math:`\varepsilon \ge \sqrt{L-1}` (e.g. ε = 3 and L ≤ 10).

    Parameters
    ----------
    s : (..., L) received attention (:func:`received_attention`), or any scores.
    eps : threshold multiplier ε >= 0.

    Returns
    -------
    (..., L) bool mask.

    Examples
    --------
    >>> s = np.full(20, 0.02); s[7] = 0.62
    >>> np.flatnonzero(anchors(s))
    array([7])
    >>> anchors(np.array([0.1, 0.5, 0.4]))   # L = 3: nothing passes, the arg max
    array([False,  True, False])
    """
    s = as_float_array(s, "s")
    eps = _check_eps(eps)
    if s.ndim < 1 or s.shape[-1] == 0:
        raise ValueError(f"s: expected scores with a non-empty last axis, got shape {s.shape}")
    mu = s.mean(axis=-1, keepdims=True)
    sigma = s.std(axis=-1, keepdims=True)
    passed = s > mu + eps * sigma
    top = np.argmax(s, axis=-1)
    fallback = np.zeros_like(passed)
    np.put_along_axis(fallback, top[..., None], True, axis=-1)
    return np.where(passed.any(axis=-1, keepdims=True), passed, fallback)


def _absorption_from_colsums(c: np.ndarray, S: np.ndarray) -> np.ndarray:
    total = c.sum(axis=-1)
    return np.where(S, c, 0.0).sum(axis=-1) / total


def absorption(A, S) -> np.ndarray:
    r"""Share of all attention absorbed by the key set S: :math:`\sum_{j\in S}\sum_i A_{ij} / \sum_{ij} A_{ij}`.

    Parameters
    ----------
    A : (..., Lq, L) attention maps (rows = queries).
    S : a bool mask (..., L) (broadcast against the maps' leading axes) or a list of
        positions, e.g. ``[0]`` for the BOS sink of an autoregressive model.

    Returns
    -------
    (...,) float64 in [0, 1]; over a partition of the positions the values sum to 1.

    References
    ----------
    Attention Floating, arXiv 2601.07894 (absorption of the sink / anchors).

    Examples
    --------
    >>> A = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0], [0.5, 0.0, 0.5]])
    >>> float(absorption(A, [0]))
    0.6666666666666666
    """
    A = _check_maps(A)
    S = _check_set(S, A.shape[-1], "S")
    c = A.sum(axis=-2)
    _check_broadcast(S, c.shape, "S")
    return _absorption_from_colsums(c, S)


def absorption_stats(values, *, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation (ddof = 0) of absorption values over the samples axis.

    ``absorption_stats(absorption(maps, S))`` with maps (n, layers, L, L) gives two
    (layers,) arrays: the per-layer mean ± std over the n samples.
    """
    v = as_float_array(values, "values")
    if v.ndim == 0:
        raise ValueError(f"values: expected at least one sample along axis {_short(axis)}, got a scalar")
    axis = int_arg(axis, "axis", -v.ndim, v.ndim - 1)
    if v.shape[axis] == 0:
        raise ValueError(f"values: expected at least one sample along axis {axis}, got shape {v.shape}")
    return v.mean(axis=axis), v.std(axis=axis)


class Drift(NamedTuple):
    r"""How the anchor set moves between consecutive steps (:func:`drift`).

    Attributes
    ----------
    anchors : (..., T, L) bool, the anchor set of every step.
    changed : (..., T-1) bool, :math:`S_t \ne S_{t-1}`.
    jaccard : (..., T-1) Jaccard distance :math:`1 - |S_t\cap S_{t-1}| / |S_t\cup S_{t-1}|`.
    top : (..., T) int, the top anchor :math:`\arg\max_j s_j` (lowest index on ties).
    shift : (..., T-1) int, :math:`|j^*_t - j^*_{t-1}|`.
    """

    anchors: np.ndarray
    changed: np.ndarray
    jaccard: np.ndarray
    top: np.ndarray
    shift: np.ndarray

    @property
    def moves(self) -> np.ndarray:
        """Number of steps at which the anchor set changed."""
        return self.changed.sum(axis=-1)

    @property
    def rate(self) -> np.ndarray:
        """Share of transitions at which the anchor set changed."""
        return self.changed.mean(axis=-1)

    @property
    def mean_jaccard(self) -> np.ndarray:
        return self.jaccard.mean(axis=-1)

    @property
    def mean_shift(self) -> np.ndarray:
        return self.shift.mean(axis=-1)

    def to_dict(self) -> dict:
        """Every field by name, JSON-ready (numpy arrays as lists, non-finite floats as strings)."""
        return record_dict(self)


def drift(s, *, eps: float = DEFAULT_EPS) -> Drift:
    r"""Anchor drift along the step axis of received attention s (..., T, L), T >= 2.

    "How often": the anchor set (:func:`anchors`) differs from the previous step's;
    "how far": the Jaccard distance between the two sets and the move
    :math:`|j^*_t - j^*_{t-1}|` of the top anchor (in positions). A fixed sink gives zero
    on all three; a floating anchor that jumps by k positions at one step gives one move,
    Jaccard distance 1 and shift k at that step.

    Examples
    --------
    >>> s = np.array([[0.8, 0.1, 0.1], [0.8, 0.1, 0.1], [0.1, 0.1, 0.8]])
    >>> r = drift(s)
    >>> int(r.moves), r.shift.tolist(), r.jaccard.tolist()
    (1, [0, 2], [0.0, 1.0])
    """
    s = as_float_array(s, "s")
    if s.ndim < 2 or s.shape[-2] < 2:
        raise ValueError(f"s: expected received attention of shape (..., T, L) with T >= 2 steps, got {s.shape}")
    a = anchors(s, eps=eps)
    prev, cur = a[..., :-1, :], a[..., 1:, :]
    inter = (prev & cur).sum(axis=-1)
    union = (prev | cur).sum(axis=-1)  # >= 1: anchor sets are never empty
    top = np.argmax(s, axis=-1)
    return Drift(
        anchors=a,
        changed=np.any(prev != cur, axis=-1),
        jaccard=1.0 - inter / union,
        top=top,
        shift=np.abs(np.diff(top, axis=-1)),
    )


def row_entropy(A) -> np.ndarray:
    r"""Entropy of every query row, :math:`-\sum_j A_{ij}\log A_{ij}` (nats, 0 log 0 = 0).

    Returns (..., Lq); 0 for a row on one key, :math:`\log L` for a uniform row.

    Examples
    --------
    >>> row_entropy(np.array([[1.0, 0.0], [0.5, 0.5]])).round(4).tolist()
    [0.0, 0.6931]
    """
    A = _check_maps(A)
    return entr(A).sum(axis=-1)


def masked_share(A, masked, *, queries: str = "all") -> np.ndarray:
    r"""Share of attention that lands on masked keys (1 minus the share on revealed keys).

    .. math:: \frac{\sum_{i\in Q}\sum_{j \in M} A_{ij}}{\sum_{i\in Q}\sum_j A_{ij}},

    M the masked positions, Q the query rows: all rows (``queries="all"``) or the masked
    ones (``"masked"``, the rows whose outputs the sampler reads).

    Parameters
    ----------
    A : (..., L, L) maps.
    masked : (..., L) bool, True at masked positions (broadcast against A's leading axes).
    queries : ``"all"`` or ``"masked"``.
    """
    A = _check_maps(A)
    M = _check_set(masked, A.shape[-1], "masked")
    queries = _check_queries(queries)
    _check_broadcast(M, A.shape[:-2] + A.shape[-1:], "masked")
    if queries == "all":
        c = A.sum(axis=-2)
    elif queries == "masked":
        if np.any(~M.any(axis=-1)):
            raise ValueError('masked: queries="masked" needs at least one masked position in every map')
        c = np.where(M[..., :, None], A, 0.0).sum(axis=-2)
    else:
        raise ValueError(f'queries: expected "all" or "masked", got {queries!r}')
    return _absorption_from_colsums(c, np.broadcast_to(M, c.shape))


# -- traces ------------------------------------------------------------------------------
@dataclass(frozen=True)
class AttentionTrace(Record):
    r"""Attention recorded at every step and layer of sampling runs.

    n samples, T steps, ``n_layers`` layers, L positions. Steps at which a sample had
    nothing left to reveal (variable-size planners) are inactive and hold zeros.

    Attributes
    ----------
    samples : (n, L) int64 outcome indices produced (``-1`` where never revealed).
    revealed : (n, T, L) bool, the revealed set :math:`A_t` at the forward pass of step t.
    chosen : (n, T, L) bool, the positions revealed by step t.
    active : (n, T) bool, the sample took step t.
    colsum_masked : (n, T, n_layers, L) :math:`\sum_{i \notin A_t} A^{(\ell)}_{ij}` (masked queries).
    colsum_revealed : (n, T, n_layers, L) :math:`\sum_{i \in A_t} A^{(\ell)}_{ij}`.
    entropy : (n, T, n_layers, L) row entropy of every query (nats).
    maps : (n, T, n_layers, L, L) head-averaged maps (``keep="full"``), else None.
    """

    samples: np.ndarray
    revealed: np.ndarray
    chosen: np.ndarray
    active: np.ndarray
    colsum_masked: np.ndarray
    colsum_revealed: np.ndarray
    entropy: np.ndarray
    maps: np.ndarray | None = None

    @property
    def n(self) -> int:
        return self.samples.shape[0]

    @property
    def steps(self) -> int:
        return self.revealed.shape[1]

    @property
    def n_layers(self) -> int:
        return self.colsum_masked.shape[2]

    @property
    def length(self) -> int:
        return self.samples.shape[1]

    def received(self, queries: str = "all") -> np.ndarray:
        r"""(n, T, n_layers, L) received attention :math:`s_j` at every step and layer.

        ``queries="all"``: :math:`\frac1L\sum_i A_{ij}` (the paper's definition);
        ``"masked"``: the mean over the masked query rows only. Inactive steps hold zeros.
        """
        queries = _check_queries(queries)
        if queries == "all":
            return (self.colsum_masked + self.colsum_revealed) / self.length
        if queries == "masked":
            nq = (~self.revealed).sum(axis=-1)[:, :, None, None]
            return np.divide(self.colsum_masked, nq, out=np.zeros_like(self.colsum_masked), where=nq > 0)
        raise ValueError(f'queries: expected "all" or "masked", got {queries!r}')


def summarize_maps(maps, revealed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What the metrics need from maps (..., n_layers, L, L) at revealed sets (..., L).

    Returns ``(colsum_masked, colsum_revealed, entropy)``, each (..., n_layers, L): column
    sums over the masked and over the revealed query rows, and the row entropies. The
    memory-bounded mode of :func:`trace_sampling` keeps only these.
    """
    A = _check_maps(maps, "maps")
    if A.ndim < 3 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"maps: expected square maps (..., n_layers, L, L), got shape {A.shape}")
    rv0 = bool_array(revealed, "revealed", "(..., L)")
    if rv0.ndim < 1 or rv0.shape[-1] != A.shape[-1]:
        raise ValueError(f"revealed: expected a bool array (..., {A.shape[-1]}), got shape {rv0.shape}")
    _check_broadcast(rv0, A.shape[:-3] + A.shape[-1:], "revealed")
    rv = rv0[..., None, :, None]  # query axis
    cm = np.where(rv, 0.0, A).sum(axis=-2)
    cr = np.where(rv, A, 0.0).sum(axis=-2)
    return cm, cr, entr(A).sum(axis=-1)


def bool_array(value, name, what=""):
    """A bool array (bools or 0/1 integers; floats refused, not cast). See bridge._checks."""
    return _b(value, name, what)


def _torch():
    try:
        import torch
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "mdmtheory.bridge.attention needs torch: pip install 'mdmtheory[bridge]'"
        ) from None
    return torch


def _forward(model, ids):
    """(logits (B, L, V), attentions tuple of (B, H, L, L)) from one forward pass."""
    if not callable(model):
        raise ValueError(f"model: expected an nn.Module or callable returning attention maps, got {type(model).__name__}")
    if getattr(getattr(model, "config", None), "causal", False) is True and hasattr(model, "mask_id") and bool((ids == model.mask_id).any()):
        raise ValueError(
            f"ids: token {model.mask_id} is the mask id, but this is a causal (autoregressive) model that reads "
            "clean data tokens only; feed it data, or use a masked-diffusion model for masked inputs"
        )
    impl = getattr(getattr(model, "config", None), "_attn_implementation", None)
    switch = isinstance(impl, str) and impl != "eager" and callable(getattr(model, "set_attn_implementation", None))
    if switch:  # a Hugging Face model on SDPA/flash (bridge.from_pretrained's default) returns no maps
        model.set_attn_implementation("eager")
    try:
        out = model(ids, output_attentions=True)
    finally:
        if switch:
            model.set_attn_implementation(impl)
    if isinstance(out, (tuple, list)):
        logits, attentions = out[0], out[1] if len(out) > 1 else None
    else:
        logits = getattr(out, "logits", None)
        attentions = getattr(out, "attentions", None)
    if logits is None:
        raise ValueError("model: its output has no logits (expected .logits or a (logits, attentions) tuple)")
    if not attentions:
        raise ValueError(
            "model: returned no attention maps for output_attentions=True; for Hugging Face models "
            'load with attn_implementation="eager" (fused kernels do not return the maps)'
        )
    return logits, attentions


def _head_average(attentions, B: int, L: int):
    torch = _torch()
    layers = []
    for k, a in enumerate(attentions):
        if a is None or a.ndim != 4 or a.shape[0] != B or a.shape[-2:] != (L, L):
            shape = None if a is None else tuple(a.shape)
            raise ValueError(f"model: attention of layer {k} has shape {shape}, expected ({B}, heads, {L}, {L})")
        layers.append(a.to(torch.float64).mean(dim=1))
    return torch.stack(layers, dim=1).cpu().numpy()  # (B, n_layers, L, L)


def attention_maps(model, ids, *, batch_size: int = 64) -> np.ndarray:
    r"""Head-averaged maps :math:`A^{(\ell)}` of a model on a batch of token ids.

    Parameters
    ----------
    model : an ``nn.Module`` (or callable) accepting ``model(ids, output_attentions=True)``
        and returning ``(logits, attentions)`` or an object with ``.logits`` and
        ``.attentions`` (the tiny MDM; Hugging Face models loaded with
        ``attn_implementation="eager"``); attentions: one (B, H, L, L) tensor per layer.
    ids : (B, L) token ids (LongTensor or integer array), already including any BOS.

    Returns
    -------
    (B, n_layers, L, L) float64 numpy array, rows = queries.
    """
    torch = _torch()

    batch_size = int_arg(batch_size, "batch_size", 1, MAX_BATCH)
    ids = torch.as_tensor(int_array(ids, "ids", "token ids (B, L)"))
    if ids.ndim != 2 or ids.shape[0] < 1 or ids.shape[1] < 1:
        raise ValueError(f"ids: expected a non-empty (B, L) batch of token ids, got shape {tuple(ids.shape)}")
    if int(ids.min()) < 0:
        raise ValueError(f"ids: token ids must be >= 0 (no -1: nothing wraps), got {int(ids.min())}")
    device = _model_device(model)
    out = []
    with torch.no_grad():
        for lo in range(0, ids.shape[0], batch_size):
            chunk = ids[lo : lo + batch_size].to(device)
            _, att = _forward(model, chunk)
            out.append(_head_average(att, chunk.shape[0], chunk.shape[1]))
    return np.concatenate(out, axis=0)


def _model_device(model):
    torch = _torch()
    try:
        return next(model.parameters()).device
    except (AttributeError, StopIteration):
        return torch.device("cpu")


def _record(maps, revealed_rows, keep):
    cm, cr, ent = summarize_maps(maps, revealed_rows)
    return cm, cr, ent, (maps if keep == "full" else None)


def trace_forward(model, ids, *, revealed=None, keep: str = "full", batch_size: int = 64) -> AttentionTrace:
    """A one-step trace of a single forward pass (e.g. the causal baseline on data).

    ``ids`` (n, L) are fed as they are (include the BOS of an autoregressive model);
    ``revealed`` (n, L) bool, default all True (every position is context). ``samples`` of
    the trace holds the ids.
    """
    keep = _check_keep(keep)
    maps = attention_maps(model, ids, batch_size=batch_size)
    n, _, L, _ = maps.shape
    rv = np.ones((n, L), dtype=bool) if revealed is None else bool_array(revealed, "revealed", f"({n}, {L})")
    if rv.shape != (n, L):
        raise ValueError(f"revealed: expected a bool array of shape ({n}, {L}), got {rv.shape}")
    cm, cr, ent, full = _record(maps, rv, keep)
    ids_np = np.asarray(ids.detach().cpu() if hasattr(ids, "detach") else ids).astype(np.int64)
    return AttentionTrace(
        samples=ids_np,
        revealed=rv[:, None],
        chosen=np.zeros((n, 1, L), dtype=bool),
        active=np.ones((n, 1), dtype=bool),
        colsum_masked=cm[:, None],
        colsum_revealed=cr[:, None],
        entropy=ent[:, None],
        maps=None if full is None else full[:, None],
    )


def trace_sampling(
    model,
    d: int,
    plan=None,
    planner="random",
    *,
    n: int,
    seed: int,
    keep: str = "summary",
    batch_size: int = 64,
    targets=None,
    **old,
) -> AttentionTrace:
    r"""Sample n sequences of length d from a model and record its attention at every step.

    The factorized sampler of :func:`mdmtheory.samplers.simulate` driven by the *model*:
    at step t the model sees the current sequence (mask id at masked positions), its
    probabilities over the K outcomes (softmax of the logits restricted to ``vocab``, i.e.
    renormalized over the vocabulary) are handed to the planner, and every chosen position
    is drawn independently from them. Randomness: ``np.random.default_rng(seed)`` only.

    Parameters
    ----------
    model : an ``nn.Module`` (or callable) as in :func:`attention_maps`; it must accept the
        (B, d) ids and return logits (B, d, V) and per-layer (B, H, d, d) attentions, with
        a ``mask_id`` attribute; or a :class:`~mdmtheory.bridge.MaskedModel` wrapping one,
        which carries the mask id, the ``vocab`` (token ids of the K outcomes: outcome k is
        ``vocab[k]``; default every id of the logits except the mask id) and ``shift``
        (True for models whose logits at i-1 predict position i, Dream). The keywords
        ``mask_id=``, ``vocab=``, ``shift=`` work for one release with a DeprecationWarning
        (they belong to the model: ``MaskedModel(model, mask_id=..., vocab=..., shift=...)``).
    d : sequence length.
    plan : a :class:`~mdmtheory.Schedule` (sizes :math:`k_t`), or None for planners that
        choose their own sizes (ThresholdPlanner, EntropyBudgetPlanner, ...).
    planner : ``"random"``, a registered name, or a planner object with ``select``
        (:mod:`mdmtheory.samplers.adaptive`).
    n, seed : number of samples and the seed.
    keep : ``"summary"`` (memory-bounded: column sums and row entropies per step and layer)
        or ``"full"`` (also every head-averaged map).
    batch_size : largest forward batch.
    targets : optional (n, d) outcome indices, e.g. data x ~ p: *teacher forcing*, the
        chosen positions are revealed with these values instead of the model's draws (the
        planner still sees the model's probabilities), as
        :func:`mdmtheory.samplers.estimate_kl` follows a data sequence. Every state is then
        possible under the data law, which :func:`attention_information_correlation` needs.

    Returns
    -------
    :class:`AttentionTrace` (samples are outcome indices 0..K-1; ``targets`` when given).
    """
    for key in old:
        if key not in ("mask_id", "vocab", "shift"):
            raise TypeError(f"trace_sampling() got an unexpected keyword argument {key!r}")
    if old:
        import warnings

        warnings.warn(f"trace_sampling({', '.join(f'{k}=' for k in sorted(old))}) is now trace_sampling(bridge.MaskedModel("
                      f"model, {', '.join(f'{k}=...' for k in sorted(old))})); the old keyword works for one release "
                      "(docs/design.md, 'Vocabulary')",
                      DeprecationWarning, stacklevel=2)
    mask_id, vocab, shift = old.get("mask_id"), old.get("vocab"), old.get("shift", False)
    torch = _torch()
    d = int_arg(d, "d", 1)
    n = int_arg(n, "n", 1)
    seed = int_arg(seed, "seed", 0, hint=" (an explicit seed)")
    batch_size = int_arg(batch_size, "batch_size", 1, MAX_BATCH)
    keep = _check_keep(keep)
    shift = check_bool(shift, "shift")
    if hasattr(model, "log_probs") and hasattr(model, "model") and hasattr(model, "mask_id"):  # a bridge MaskedModel
        if getattr(model, "time_input", None) is not None:
            raise ValueError("model: time-conditioned models (time_input) are not supported by trace_sampling")
        mask_id = model.mask_id if mask_id is None else mask_id
        vocab = model.vocab if vocab is None else vocab
        shift = shift or model.shift
        model = model.model
    if mask_id is None:
        mask_id = getattr(model, "mask_id", None)
        if mask_id is None:
            raise ValueError("mask_id: the model has no mask_id attribute; pass bridge.MaskedModel(model, mask_id=...)")
    mask_id = int_arg(mask_id, "mask_id", 0, MAX_TOKEN_ID)
    if vocab is not None:
        v = int_array(list(vocab) if isinstance(vocab, range) else vocab, "vocab", "token ids")
        if v.ndim != 1 or v.shape[0] < 2 or v.min() < 0 or v.max() > MAX_TOKEN_ID or np.unique(v).shape[0] != v.shape[0]:
            raise ValueError(f"vocab: expected at least 2 distinct token ids in 0..{MAX_TOKEN_ID}, got {_short(vocab)}")
        if np.any(v == mask_id):
            raise ValueError(f"vocab: contains the mask id {mask_id}; the mask is never an outcome")
        vocab = v.tolist()
    if isinstance(plan, Grid):
        raise ValueError("plan: trace_sampling takes a Schedule or None (convert a Grid with grid_to_schedule)")
    planner, is_random, sizes = planner_setup(plan, planner, d)
    T = len(sizes)
    if targets is not None:
        targets = int_array(targets, "targets", f"outcome indices ({n}, {d})")
        if targets.shape != (n, d) or (targets.size and targets.min() < 0):
            raise ValueError(f"targets: expected ({n}, {d}) non-negative outcome indices, got shape {targets.shape}")
    T0 = len(sizes)
    if n * T0 * d * (d if keep == "full" else 1) > MAX_ENTRIES:
        raise ValueError(
            f"n: {n} samples x {T0} steps x {d} positions{' x ' + str(d) if keep == 'full' else ''} per layer "
            f"exceed {MAX_ENTRIES} recorded entries (MAX_ENTRIES); use fewer samples or keep=\"summary\""
        )
    rng = np.random.default_rng(seed)
    device = _model_device(model)
    vocab_t = None if vocab is None else torch.as_tensor(list(vocab), dtype=torch.long)

    x = np.zeros((n, d), dtype=np.int64)
    rv = np.zeros((n, d), dtype=bool)
    rec = dict(revealed=np.zeros((n, T, d), dtype=bool), chosen=np.zeros((n, T, d), dtype=bool), active=np.zeros((n, T), dtype=bool))
    arrays = None
    with torch.no_grad():
        for t, size in enumerate(sizes):
            rows = np.flatnonzero(~rv.all(axis=1))
            if rows.size == 0:
                break
            probs_all, maps_all = [], []
            for lo in range(0, rows.size, batch_size):
                r = rows[lo : lo + batch_size]
                if vocab_t is None:
                    tok = torch.as_tensor(x[r])
                else:
                    tok = vocab_t[torch.as_tensor(x[r])]
                ids = torch.where(torch.as_tensor(rv[r]), tok, torch.full_like(tok, mask_id)).to(device)
                logits, att = _forward(model, ids)
                if logits.ndim != 3 or logits.shape[:2] != (r.size, d):
                    raise ValueError(f"model: logits of shape {tuple(logits.shape)}, expected ({r.size}, {d}, V)")
                if vocab_t is None:
                    V = logits.shape[-1]
                    if not 0 <= mask_id < V:
                        raise ValueError(f"mask_id: {mask_id} is outside the logits' 0..{V - 1}; pass vocab=...")
                    vocab_t = torch.as_tensor([v for v in range(V) if v != mask_id], dtype=torch.long)
                lg = logits.to(torch.float64)
                if shift:
                    lg = torch.cat([lg[:, :1], lg[:, :-1]], dim=1)
                probs_all.append(torch.softmax(lg[..., vocab_t.to(lg.device)], dim=-1).cpu().numpy())
                maps_all.append(_head_average(att, r.size, d))
            probs = np.concatenate(probs_all)
            maps = np.concatenate(maps_all)
            free = ~rv[rows]
            chosen = choose_positions(planner, is_random, t, size, probs, free, rng)
            draw = inverse_cdf(probs, rng.random(free.shape))
            if targets is not None:
                if targets.max() >= probs.shape[-1]:
                    raise ValueError(f"targets: outcome indices must lie in 0..{probs.shape[-1] - 1}")
                draw = targets[rows]
            cm, cr, ent, full = _record(maps, rv[rows], keep)
            if arrays is None:
                nl = maps.shape[1]
                arrays = dict(
                    colsum_masked=np.zeros((n, T, nl, d)),
                    colsum_revealed=np.zeros((n, T, nl, d)),
                    entropy=np.zeros((n, T, nl, d)),
                    maps=np.zeros((n, T, nl, d, d)) if keep == "full" else None,
                )
            arrays["colsum_masked"][rows, t] = cm
            arrays["colsum_revealed"][rows, t] = cr
            arrays["entropy"][rows, t] = ent
            if full is not None:
                arrays["maps"][rows, t] = full
            rec["revealed"][rows, t] = rv[rows]
            rec["chosen"][rows, t] = chosen
            rec["active"][rows, t] = True
            x[rows] = np.where(chosen, draw, x[rows])
            rv[rows] |= chosen
    if not rv.all():
        raise ValueError("plan: some samples still have masked positions after the last step")
    used = int(rec["active"].any(axis=0).sum())
    cut = lambda a: None if a is None else a[:, :used]  # noqa: E731
    return AttentionTrace(
        samples=x,
        revealed=rec["revealed"][:, :used],
        chosen=rec["chosen"][:, :used],
        active=rec["active"][:, :used],
        colsum_masked=cut(arrays["colsum_masked"]),
        colsum_revealed=cut(arrays["colsum_revealed"]),
        entropy=cut(arrays["entropy"]),
        maps=cut(arrays["maps"]),
    )


# -- per-layer summary -------------------------------------------------------------------
@dataclass(frozen=True)
class FloatingSummary(Record):
    r"""Per-layer floating-anchor statistics of a trace (:func:`floating_summary`).

    Every field is an array over layers (first axis); means are over samples of per-sample
    means over their active steps.

    Attributes
    ----------
    eps : the anchor threshold multiplier used.
    queries : which query rows define s (``"all"`` or ``"masked"``).
    n_anchors : mean size of the anchor set.
    fallback : share of (sample, step) at which no position passed and the arg max was used.
    absorption_mean, absorption_std : absorption of the anchor set, mean ± std over samples.
    top_share : (layers, L) how often each position is the top anchor.
    drift_rate : share of transitions at which the anchor set changed (NaN-free: 0 when a
        sample has one active step).
    jaccard : mean Jaccard distance between consecutive anchor sets.
    top_shift : mean move of the top anchor, in positions.
    entropy : mean row entropy (nats) of the query rows.
    masked_share : share of attention on masked keys.
    """

    eps: float
    queries: str
    n_anchors: np.ndarray
    fallback: np.ndarray
    absorption_mean: np.ndarray
    absorption_std: np.ndarray
    top_share: np.ndarray
    drift_rate: np.ndarray
    jaccard: np.ndarray
    top_shift: np.ndarray
    entropy: np.ndarray
    masked_share: np.ndarray

    def to_dict(self) -> dict:
        """JSON-ready dict (lists of floats)."""
        out = {}
        for k, v in self.__dict__.items():
            out[k] = v.tolist() if isinstance(v, np.ndarray) else v
        return out


def floating_summary(trace: AttentionTrace, *, eps: float = DEFAULT_EPS, queries: str = "all") -> FloatingSummary:
    """Reduce a trace to per-layer anchor, absorption, drift, entropy and masked-share numbers.

    Uses only the memory-bounded part of the trace (column sums and row entropies), so a
    ``keep="summary"`` trace and a ``keep="full"`` trace of the same run give the same result.
    """
    if not isinstance(trace, AttentionTrace):
        raise ValueError(f"trace: expected an AttentionTrace, got {type(trace).__name__}")
    eps = _check_eps(eps)
    queries = _check_queries(queries)
    if queries == "masked" and np.any(trace.active & trace.revealed.all(axis=-1)):
        raise ValueError(
            'queries: "masked" needs a masked query at every active step, but this trace has a step with '
            'every position revealed (e.g. trace_forward on data); use queries="all"'
        )
    s = trace.received(queries)  # (n, T, nl, L)
    act = trace.active  # (n, T)
    n, T, nl, L = s.shape
    s_act = np.where(act[:, :, None, None], s, 1.0)  # inactive rows: dummy (weighted out below)
    # anchors and their drift along the steps (drift wants steps on the second-last axis)
    dr = drift(np.moveaxis(s_act, 2, 1), eps=eps) if T >= 2 else None  # (n, nl, T, L)
    a = anchors(s_act, eps=eps) if dr is None else np.moveaxis(dr.anchors, 1, 2)  # (n, T, nl, L)
    mu = s.mean(axis=-1, keepdims=True)
    passed = (s > mu + eps * s.std(axis=-1, keepdims=True)).any(axis=-1)  # (n, T, nl)
    if queries == "all":
        c = trace.colsum_masked + trace.colsum_revealed
        qmask = np.ones((n, T, 1, L), dtype=bool)
    else:
        c = trace.colsum_masked
        qmask = ~trace.revealed[:, :, None, :]
    total = c.sum(axis=-1)
    safe = np.where(act[:, :, None], total, 1.0)
    absorb = np.where(a, c, 0.0).sum(axis=-1) / safe  # (n, T, nl)
    msh = np.where(~trace.revealed[:, :, None, :], c, 0.0).sum(axis=-1) / safe
    nq = np.maximum(qmask.sum(axis=-1), 1)
    ent_mean = np.where(qmask, trace.entropy, 0.0).sum(axis=-1) / nq  # (n, T, nl)

    w = act[:, :, None].astype(np.float64)  # (n, T, 1)
    steps = np.maximum(w.sum(axis=1), 1.0)  # (n, 1)

    def per_sample(v):  # (n, T, nl) -> (n, nl) mean over active steps
        return (v * w).sum(axis=1) / steps

    absorb_s = per_sample(absorb)
    top = np.argmax(s, axis=-1)  # (n, T, nl)
    top_share = np.zeros((nl, L))
    for ell in range(nl):
        top_share[ell] = np.bincount(top[:, :, ell][act], minlength=L) / max(act.sum(), 1)
    # drift over consecutive active steps (active steps are a prefix of each sample's steps)
    both = (act[:, 1:] & act[:, :-1])[:, :, None]  # (n, T-1, 1)
    if dr is not None:
        changed, jac, shift = (np.moveaxis(v, 1, 2) for v in (dr.changed, dr.jaccard, dr.shift))  # (n, T-1, nl)
        ntr = np.maximum(both.sum(axis=1), 1)
        tr = lambda v: ((v * both).sum(axis=1) / ntr).mean(axis=0)  # noqa: E731
        drift_rate, jaccard, top_shift = tr(changed), tr(jac), tr(shift)
    else:
        drift_rate = jaccard = top_shift = np.zeros(nl)
    return FloatingSummary(
        eps=eps,
        queries=queries,
        n_anchors=per_sample(a.sum(axis=-1)).mean(axis=0),
        fallback=per_sample(~passed).mean(axis=0),
        absorption_mean=absorb_s.mean(axis=0),
        absorption_std=absorb_s.std(axis=0),
        top_share=top_share,
        drift_rate=drift_rate,
        jaccard=jaccard,
        top_shift=top_shift,
        entropy=per_sample(ent_mean).mean(axis=0),
        masked_share=per_sample(msh).mean(axis=0),
    )


# -- information ---------------------------------------------------------------------------
@renamed_keywords(joint="p")
def conditional_mutual_information(p, i: int, j: int, given=()) -> float:
    r"""Exact :math:`I(X_i; X_j \mid X_C)` of a :class:`~mdmtheory.Joint` (nats), averaged over :math:`x_C`.

    .. math:: I(X_i;X_j\mid X_C) = \sum p(x_i,x_j,x_C)\log\frac{p(x_i,x_j,x_C)\,p(x_C)}{p(x_i,x_C)\,p(x_j,x_C)}.

    Examples
    --------
    >>> import math
    >>> from mdmtheory import Joint
    >>> xor = Joint(np.array([[[.25, 0], [0, .25]], [[0, .25], [.25, 0]]]))  # X2 = X0 xor X1
    >>> round(conditional_mutual_information(xor, 0, 1), 12), round(conditional_mutual_information(xor, 0, 1, [2]) / math.log(2), 12)
    (0.0, 1.0)
    """
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
    d = p.d
    i = int_arg(i, "i", 0, d - 1)
    j = int_arg(j, "j", 0, d - 1)
    if i == j:
        raise ValueError(f"i, j: expected two different positions, got {i} twice")
    if given is None or isinstance(given, (str, bytes)) or not hasattr(given, "__iter__"):
        raise ValueError(f"given: expected a sequence of positions (e.g. () or [2]), got {_short(given)}")
    try:
        C = positions_to_mask(given, d, name="given")
    except (TypeError, OverflowError, RecursionError):
        raise ValueError(f"given: expected a sequence of positions in 0..{d - 1}, got {_short(given)}") from None
    if C >> i & 1 or C >> j & 1:
        raise ValueError("given: must not contain i or j")
    t = p.table
    drop = tuple(k for k in range(d) if not (k in (i, j) or C >> k & 1))
    pijc = t.sum(axis=drop, keepdims=True)
    pic = pijc.sum(axis=j, keepdims=True)
    pjc = pijc.sum(axis=i, keepdims=True)
    pc = pic.sum(axis=i, keepdims=True)
    num = pijc * pc
    den = pic * pjc
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(pijc > 0, num / np.where(den > 0, den, 1.0), 1.0)
    return float(max(np.sum(xlogy(pijc, ratio)), 0.0))


@renamed_keywords(law="p")
def revealed_information(p, x, revealed, *, kind: str = "pointwise") -> np.ndarray:
    r"""Information of each revealed position j about each masked position i at one state.

    For a state :math:`(A, x_A)` of the sampler (A the revealed set), ``out[i, j]`` for masked
    i and revealed j is

    * ``kind="pointwise"`` (default): :math:`I(X_i; X_j \mid X_{A\setminus j} = x_{A\setminus j})`,
      the mutual information of :math:`X_i` and :math:`X_j` under the law conditioned on the
      *values* of the other revealed positions:

      .. math:: \sum_v p(v \mid x_C)\, \mathrm{KL}\bigl(p(X_i \mid X_j = v, x_C) \,\|\, p(X_i \mid x_C)\bigr),
                \quad C = A\setminus\{j\};

      its average over :math:`x_C \sim p` is the conditional mutual information;
    * ``kind="average"``: :math:`I(X_i; X_j \mid X_{A\setminus j})` averaged over the law
      (depends on A only; :func:`conditional_mutual_information`; ``p`` must be a Joint).

    Entries with i revealed or j masked are 0.

    Parameters
    ----------
    p : a :class:`~mdmtheory.Joint` or a conditional oracle (``MarkovChainLaw``, ...);
        ``kind="average"`` needs a Joint.
    x : (d,) outcome indices (values at masked positions are ignored).
    revealed : (d,) bool.

    Returns
    -------
    (d, d) float64, nats.

    Raises
    ------
    ValueError when :math:`p(x_A) = 0` under the law (the state is impossible).
    """
    oracle = as_oracle(p)
    d, K = oracle.d, oracle.K
    if not isinstance(kind, str) or kind not in ("pointwise", "average"):
        raise ValueError(f'kind: expected "pointwise" or "average", got {_short(kind)}')

    x = int_array(x, "x", "outcome indices")
    rv = bool_array(revealed, "revealed", f"({d},)")
    if x.shape != (d,) or rv.shape != (d,):
        raise ValueError(f"x, revealed: expected two arrays of shape ({d},), got {x.shape} and {rv.shape}")
    if np.any(rv & ((x < 0) | (x >= K))):
        raise ValueError(f"x: revealed values must be outcome indices in 0..{K - 1}")
    x = np.where(rv, x, 0).astype(np.int64)
    if rv.any() and not oracle.log_marginal(x[None], rv[None])[0] > -np.inf:
        raise ValueError("x: the revealed values have probability 0 under the law (impossible state)")
    out = np.zeros((d, d))
    A = np.flatnonzero(rv)
    masked = ~rv
    if kind == "average":
        if not isinstance(p, Joint):
            raise ValueError('kind: "average" needs the law as a Joint; use kind="pointwise" for oracles')
        for i in np.flatnonzero(masked):
            for j in A:
                out[i, j] = conditional_mutual_information(p, int(i), int(j), [int(k) for k in A if k != j])
        return out
    if kind != "pointwise":
        raise ValueError(f'kind: expected "pointwise" or "average", got {kind!r}')
    if A.size == 0:
        return out
    # rows: for each j in A, one row with j hidden, then K rows with x_j = v
    m = A.size
    xs = np.repeat(x[None], m * (K + 1), axis=0)
    rvs = np.repeat(rv[None], m * (K + 1), axis=0)
    for a, j in enumerate(A):
        base = a * (K + 1)
        rvs[base, j] = False
        xs[base + 1 : base + K + 1, j] = np.arange(K)
    probs = oracle.conditionals(xs, rvs)  # (m (K+1), d, K)
    for a, j in enumerate(A):
        base = a * (K + 1)
        pj = probs[base, j]  # p(x_j = v | x_C), (K,)
        pi_c = probs[base]  # p(X_i | x_C), (d, K)
        pi_v = probs[base + 1 : base + K + 1]  # p(X_i | v, x_C), (K, d, K); zero rows when p(v|x_C) = 0
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(pi_v > 0, pi_v / np.where(pi_c[None] > 0, pi_c[None], 1.0), 1.0)
        kl = xlogy(pi_v, ratio).sum(axis=-1)  # (K, d)
        info = np.maximum((pj[:, None] * kl).sum(axis=0), 0.0)
        out[masked, j] = info[masked]
    return out


def _spearman(a: np.ndarray, b: np.ndarray) -> float | None:
    """Spearman rank correlation (average ranks on ties); None when either is constant."""
    ra, rb = rankdata(a), rankdata(b)
    ra -= ra.mean()
    rb -= rb.mean()
    den = np.sqrt((ra * ra).sum() * (rb * rb).sum())
    if den <= 0:
        return None
    return float((ra * rb).sum() / den)


@dataclass(frozen=True)
class InformationCorrelation(Record):
    r"""Attention vs information over (sample, step, masked query) cases, per layer.

    Attributes
    ----------
    rho_mean, rho_stderr : (layers,) mean Spearman correlation between :math:`A^{(\ell)}_{i,A}`
        and the information of the revealed positions about i, and its standard error.
    n_cases : (layers,) number of cases with a defined correlation.
    top_hit : (layers,) share of cases where the most attended revealed position is among
        the most informative ones.
    top_hit_chance : mean over those cases of (number of most informative positions)/|A|:
        the hit rate of a position drawn uniformly from A.
    anchor_info_rank : (layers,) mean normalized rank (0 least, 1 most informative) of the
        layer's top received-attention position among the revealed ones, when it is revealed.
    impossible : number of states skipped because p(x_A) = 0 under the law.
    kind : information used (``"pointwise"`` or ``"average"``).
    """

    rho_mean: np.ndarray
    rho_stderr: np.ndarray
    n_cases: np.ndarray
    top_hit: np.ndarray
    top_hit_chance: float
    anchor_info_rank: np.ndarray
    impossible: int
    kind: str

    def to_dict(self) -> dict:
        return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.__dict__.items()}


@renamed_keywords(law="p")
def attention_information_correlation(
    trace: AttentionTrace,
    p,
    *,
    kind: str = "pointwise",
    min_revealed: int = 2,
    max_states: int | None = None,
    tol: float = 1e-12,
) -> InformationCorrelation:
    r"""Do attention and information agree? Spearman correlation per layer over sampler states.

    For every active (sample, step) of a ``keep="full"`` trace with at least ``min_revealed``
    revealed positions and every masked query i, compare the row
    :math:`(A^{(\ell)}_{ij})_{j\in A}` with :math:`(I(X_i; X_j \mid X_{A\setminus j}))_{j\in A}`
    (:func:`revealed_information`). Cases where either vector is constant are skipped
    (the correlation is undefined). States impossible under the law (the model produced
    :math:`p(x_A) = 0`) are counted and skipped.

    Parameters
    ----------
    trace : a ``keep="full"`` :class:`AttentionTrace` whose samples are outcome indices of p.
    p : a Joint or conditional oracle with the trace's d.
    kind : ``"pointwise"`` or ``"average"`` (see :func:`revealed_information`).
    min_revealed : least |A| (>= 2) for a state to count.
    max_states : use at most this many states (in sample-major order), None for all.
    tol : information values within tol of the maximum count as "most informative".
    """
    if not isinstance(trace, AttentionTrace) or trace.maps is None:
        raise ValueError('trace: expected an AttentionTrace recorded with keep="full" (the maps are needed)')
    min_revealed = int_arg(min_revealed, "min_revealed", 2)
    if not isinstance(kind, str) or kind not in ("pointwise", "average"):
        raise ValueError(f'kind: expected "pointwise" or "average", got {_short(kind)}')
    tol = real_arg(tol, "tol")
    if tol < 0:
        raise ValueError(f"tol: expected a tolerance >= 0, got {tol}")
    if max_states is not None:
        max_states = int_arg(max_states, "max_states", 1)
    n, T, nl, L = trace.colsum_masked.shape
    rhos = [[] for _ in range(nl)]
    hits = np.zeros(nl)
    chance = []
    ranks = [[] for _ in range(nl)]
    impossible = 0
    states = 0
    s_all = trace.received("all")
    memo = {}  # kind="average" depends on the revealed set only
    for a in range(n):
        for t in range(T):
            rv = trace.revealed[a, t]
            if not trace.active[a, t] or rv.sum() < min_revealed:
                continue
            if max_states is not None and states >= max_states:
                break
            states += 1
            try:
                key = rv.tobytes()
                if kind == "average" and key in memo:
                    info = memo[key]
                else:
                    info = revealed_information(p, trace.samples[a], rv, kind=kind)
                    if kind == "average":
                        memo[key] = info
            except ValueError as exc:
                if "probability 0" in str(exc):
                    impossible += 1
                    continue
                raise
            A = np.flatnonzero(rv)
            for ell in range(nl):
                top = int(np.argmax(s_all[a, t, ell]))
                if rv[top]:
                    col = info[~rv][:, A].sum(axis=0)  # information of each revealed j, summed over queries
                    ranks[ell].append((rankdata(col)[list(A).index(top)] - 1) / max(A.size - 1, 1))
            for i in np.flatnonzero(~rv):
                v = info[i, A]
                best = v >= v.max() - tol
                if best.all():
                    continue
                chance.append(best.sum() / A.size)
                for ell in range(nl):
                    row = trace.maps[a, t, ell, i, A]
                    r = _spearman(row, v)
                    if r is None:
                        continue
                    rhos[ell].append(r)
                    hits[ell] += best[int(np.argmax(row))]
    n_cases = np.array([len(r) for r in rhos])
    rho_mean = np.array([np.mean(r) if r else 0.0 for r in rhos])
    rho_se = np.array([np.std(r, ddof=1) / np.sqrt(len(r)) if len(r) > 1 else 0.0 for r in rhos])
    return InformationCorrelation(
        rho_mean=rho_mean,
        rho_stderr=rho_se,
        n_cases=n_cases,
        top_hit=hits / np.maximum(n_cases, 1),
        top_hit_chance=float(np.mean(chance)) if chance else 0.0,
        anchor_info_rank=np.array([np.mean(r) if r else 0.0 for r in ranks]),
        impossible=impossible,
        kind=kind,
    )


def __getattr__(name):  # the plots moved to mdmtheory.report.plots

    return module_getattr(__name__, name)
