r"""The decoding rules of a serving engine: SGLang's dLLM algorithms, exactly.

SGLang serves masked diffusion LLMs with ``--dllm-algorithm NAME`` and a YAML
``algorithm_config``; each algorithm is one file of ``python/sglang/srt/dllm/algorithm/`` whose
class is registered under its class name (``__init__.py``: ``import_algorithms`` maps
``module.Algorithm.__name__``). This module brings five of them into the exact engine, read
from ``sgl-project/sglang`` (file and commit below; the repository snapshot is too large to
fetch whole, so each file was read at the commit named):

* **EntropyThreshold** (``entropy_threshold.py`` at 26eb1bf): :class:`EntropyThresholdPlanner`.
* **EBSampling** (``eb_sampling.py`` at 38c8d9b): :class:`EBSamplingPlanner` — the same rule as
  :class:`~mdmtheory.samplers.adaptive.EntropyBudgetPlanner` (EB-Sampler), with SGLang's
  default γ and forwards.
* **HierarchyBlock** (``hierarchy_block.py`` at 0146dbc; Fast-dLLM v2's sub-block decoding
  with token inheritance): :class:`HierarchyBlockPlanner`.
* **FullAttnMultiBlock** (``full_attn_multi_block.py`` at 26eb1bf; d3LLM's multi-block
  decoding for full-attention models): :class:`FullAttnMultiBlockPlanner`.
* **JointThreshold** (``joint_threshold.py`` at 17d5721, step API of ``base.py`` at 0929d6d;
  mask-to-token commits above a threshold plus token-to-token edits of visible tokens, the
  production form of LLaDA2.1 editing): :class:`JointThresholdSampler`, a revising sampler.

**Values.** SGLang's five files commit the arg max of each position's logits (temperature 0)
and score positions by the plain softmax. On an exact law that is one deterministic output, so
the package follows its own convention for ranked rules (:mod:`.adaptive`): the four
planners choose *positions* exactly as SGLang's step does from the conditionals
:math:`p(\cdot \mid x_A)` (confidence :math:`\max_v p(v \mid x_A)`, entropies), and the
revealed values are drawn from those conditionals, so the law is a product along the path and
KL(p‖q) is each rule's own error. :class:`JointThresholdSampler` draws a candidate at every
position from the tempered prediction and scores it by its tempered probability, as SGLang's
``sampling.py`` ``sample_block_tokens`` does for ``LowConfidence`` (at temperature 0: the arg
max and its plain probability, SGLang's ``joint_threshold.py`` as read); see its docstring.

**Forwards** (model calls for one block, as each file's loop makes them; ``serving_run``):

* EntropyThreshold: one forward per step, then one final forward (its ``nfe``): steps + 1.
* EBSampling: one forward per step, then one final forward: steps + 1.
* HierarchyBlock: one forward per step inside a sub-block and one final forward per block,
  whose last-position arg max is inherited as the next block's first token (that step costs
  no forward): steps + 1.
* FullAttnMultiBlock: one forward per step (its ``nfe``; the final forward runs only when
  masks remain, which never happens here): steps.
* JointThreshold: ``base.py`` ``_run_sync`` makes a first forward, then runs ``step`` and,
  unless the step reported the block done, another forward. In the step API as read at
  17d5721 (base 0929d6d) ``step`` reported done only on the step *after* the one that set
  ``finished``, which costs one more forward. In the tensor-path ``joint_threshold.py`` read
  in the code index (stored without its commit: ``step`` returns ``states["finished"]``, "a
  terminating step changes no tokens, so its forward already wrote final KV") — the count
  issue 39 measured in the sglang 0.5.23 wheel (greedy rows: 2 forwards) — and in the
  pre-refactor ``run`` at cabd454 (its persisting
  forward runs only when the last step changed tokens, and a finishing step never does),
  the step that finishes reports done at once: a block costs the steps up to and including
  the finishing one, each on its own forward (issue 39 item 8). This module counts that.

**Ties.** ``ties`` as every ranked rule has it (:mod:`.ties`): ``"random"`` (default),
``"lowest"``, ``"topk"``. SGLang's own tie rule: EntropyThreshold and JointThreshold call
``torch.topk`` (``"topk"``; for the entropy rule on the negated entropy, which torch may order
differently from ``topk(largest=False)``); HierarchyBlock and FullAttnMultiBlock call
``torch.argmax`` / ``argmin``, which return the first extremal index (``"lowest"``);
EBSampling calls ``torch.argsort`` (not stable: platform-dependent).

vLLM's dLLM support (the ``vllm-project`` plugins) was not compared here.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from .._estimate import Record
from .base import check_plan, OwnChainSampler, Run
from ..laws.joint import Joint, joint_arg
from ..laws.oracles import inverse_cdf, loo_conditionals
from .._validate import int_arg, real_arg
from .._moved import renamed_keywords
from .adaptive import _Deterministic, _confidence, EntropyBudgetPlanner
from .engine import _position_run as _engine_run
from .kernel import (
    empty_state,
    lattice_strides,
    marginal_lattice,
    output_index,
    state_values,
)
from .ties import check_ties, DEFAULT_TIES, TIE_TOL
from .revise import _candidates, _expand, _revision_step, _mc_start
from .select import _round, commit_choices, confidence_rows, tempered, select_commits

__all__ = ["EntropyThresholdPlanner", "EBSamplingPlanner", "HierarchyBlockPlanner", "FullAttnMultiBlockPlanner",
           "JointThresholdSampler", "ServingRun", "serving_run", "SERVING_RULES", "SGLANG_SOURCES", "JOINT_SCORING_SOURCES",
           "MAX_JOINT_WORK"]

#: Where each rule was read: SGLang algorithm name -> (repository, file, commit).
SGLANG_SOURCES = {
    "EntropyThreshold": ("sgl-project/sglang", "python/sglang/srt/dllm/algorithm/entropy_threshold.py",
                         "26eb1bf9ebe348a2a25be404df8d4ca248d2b1ec"),
    "EBSampling": ("sgl-project/sglang", "python/sglang/srt/dllm/algorithm/eb_sampling.py",
                   "38c8d9bccb95e7307339215d536edbcf4807d193"),
    "HierarchyBlock": ("sgl-project/sglang", "python/sglang/srt/dllm/algorithm/hierarchy_block.py",
                       "0146dbcdcb74d884dd476ac145bfebb5df97d084"),
    "FullAttnMultiBlock": ("sgl-project/sglang", "python/sglang/srt/dllm/algorithm/full_attn_multi_block.py",
                           "26eb1bf9ebe348a2a25be404df8d4ca248d2b1ec"),
    "JointThreshold": ("sgl-project/sglang", "python/sglang/srt/dllm/algorithm/joint_threshold.py",
                       "17d57211575786d0abf1683309f9e3b1545b8210"),
    # JointThresholdSampler(scoring="relative"): the commit confidence of SGLang main (JOINT_SCORING_SOURCES)
    "JointThreshold/relative": ("sgl-project/sglang", "python/sglang/srt/dllm/sampling.py",
                                "0026bd4de636cc1660258efe29b6a241bf21bcd9"),
}

#: The candidate scoring of :class:`JointThresholdSampler` above temperature 0, per SGLang version:
#: ``scoring`` -> (version, repository, file, commit). ``"tempered"``: the drawn candidate's tempered
#: probability (the ``sample_block_tokens`` form of ``LowConfidence`` that the 0.5.23 release's greedy
#: ``joint_threshold.py`` is modelled on at temperature > 0); ``"relative"``: SGLang main's
#: ``DllmSamplingPlan.sample`` (``python/sglang/srt/dllm/sampling.py`` at 0026bd4), whose commit
#: confidence is ``min(argmax_probs, exp((z_t - z_max) / T))`` — the greedy arg-max probability
#: (plain softmax) and the drawn token's tempered probability relative to the most likely one's.
#: At temperature 0 both are the arg max scored by its plain probability.
JOINT_SCORING_SOURCES = {
    "tempered": ("0.5.23", "sgl-project/sglang", "python/sglang/srt/dllm/algorithm/joint_threshold.py",
                 "17d57211575786d0abf1683309f9e3b1545b8210"),
    "relative": ("main", "sgl-project/sglang", "python/sglang/srt/dllm/sampling.py",
                 "0026bd4de636cc1660258efe29b6a241bf21bcd9"),
}


def _entropy(probs: np.ndarray, eps: float) -> np.ndarray:
    r""":math:`-\sum_v p_v \log(p_v + \epsilon)` per row (SGLang's smoothed entropies; eps = 0:
    the plain entropy, 0 log 0 = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(probs > 0, probs * np.log(probs + eps), 0.0)
    return -terms.sum(axis=-1)


def _unit(value, name: str, what: str) -> float:
    """A finite real in [0, 1]."""
    v = real_arg(value, name)
    if not 0 <= v <= 1:
        raise ValueError(f"{name}: expected {what} in [0, 1], got {value!r}")
    return float(v)


def _nonneg(value, name: str, what: str) -> float:
    v = real_arg(value, name)
    if v < 0:
        raise ValueError(f"{name}: expected {what} >= 0, got {value!r}")
    return float(v)


def _opt_size(value, name: str):
    return None if value is None else int_arg(value, name, 1)


class _Own(_Deterministic):
    """A planner that chooses its own sizes (plan=None) and counts forwards as its file does."""

    takes_plan: ClassVar[bool] = False  # it chooses its own sizes only

    needs_schedule: ClassVar[bool] = False
    #: forwards = steps + this (the final forwards of the file's loop)
    extra_forwards: ClassVar[int] = 1
    sglang_algorithm: ClassVar[str] = ""

    def _step_size(self, step, size, d):
        if size is not None:
            raise ValueError(f"plan: {type(self).__name__} chooses its own step sizes; pass plan=None")
        return None

    def exact_run(self, p, plan=None, *, trajectory: bool = False, backend: str = "auto") -> "ServingRun":
        """:func:`serving_run`: the engine's run, forwards counted as the SGLang file's loop."""
        check_plan(self, plan)
        return serving_run(p, self, trajectory=trajectory)


@dataclass(frozen=True)
class EntropyThresholdPlanner(_Own):
    r"""SGLang ``EntropyThreshold``: the lowest-entropy masked position, plus every masked
    position whose entropy is below ``threshold``.

    With :math:`H_j = -\sum_v p(v \mid x_A) \log(p(v \mid x_A) + 10^{-8})` (the file's
    ``sample_tokens_with_entropy``, "copied from d3LLM"), a step reveals

    .. math:: B(x_A) = \{j^*\} \cup \{j \in M : H_j < \theta\}, \qquad
              j^* = \arg\min_{j \in M} H_j,

    strict ``<`` (within :data:`TIE_TOL` of θ counts as equal: not below); ties for
    :math:`j^*` by ``ties`` (the file: ``torch.topk(full_entropy, num_mask, largest=False)``).
    Default θ = 0.95 (nats), the file's. Forwards: steps + 1.
    """

    threshold: float = 0.95
    ties: str = DEFAULT_TIES
    name: ClassVar[str] = "sglang_entropy_threshold"
    sglang_algorithm: ClassVar[str] = "EntropyThreshold"

    def __post_init__(self):
        object.__setattr__(self, "threshold", _nonneg(self.threshold, "threshold", "an entropy threshold (nats)"))
        check_ties(self.ties)

    def _rank(self, step, size, probs, free):
        H = _entropy(probs, 1e-8)
        below = free & (H < self.threshold - TIE_TOL)
        return -H, (~below.any(axis=1)).astype(np.int64), None, below


@dataclass(frozen=True)
class EBSamplingPlanner(EntropyBudgetPlanner, _Own):
    r"""SGLang ``EBSampling``: masked positions by increasing entropy, the first always, the
    i-th (i ≥ 2) while the entropies before it sum to at most ``gamma`` (the file's
    ``cumsum(sorted_entropies[:-1]) <= gamma``; exact ``log_softmax`` entropies, nats).

    This is :class:`~mdmtheory.samplers.adaptive.EntropyBudgetPlanner` (EB-Sampler's
    ``acc_entropy - cummax_entropy <= gamma`` on sorted entropies is the same prefix), with
    SGLang's default γ = 0.15; the file suppresses the mask token's logit first, which a law
    over K tokens has not. Forwards: steps + 1 (the file's final forward)."""

    gamma: float = 0.15
    ties: str = DEFAULT_TIES
    name: ClassVar[str] = "sglang_eb_sampling"
    sglang_algorithm: ClassVar[str] = "EBSampling"

    _step_size = _Own._step_size


@dataclass(frozen=True)
class HierarchyBlockPlanner(_Own):
    r"""SGLang ``HierarchyBlock`` (Fast-dLLM v2): blocks of ``block_size`` left to right, each
    cut into sub-blocks of ``sub_block_size`` decoded left to right; inside the current
    sub-block, every masked position with confidence :math:`\max_v p(v \mid x_A) >` ``threshold``,
    or (none) the most confident one (the file: ``conf.argmax()``, first maximum: ``ties="lowest"``).

    Token inheritance: after a block, the file's final forward takes the arg max at the block's
    last position (its logits predict the next token, the file's ``token_shift``) and writes it
    into the first position of the next block. Here that is a step revealing the next block's
    first position alone, drawn from :math:`p(x_j \mid x_A)`; it costs no forward. So forwards
    = (steps − (blocks − 1)) + blocks = steps + 1.

    ``block_size`` None: one block of all d positions. SGLang's block is always its full
    ``block_size`` and the file decodes ``block_size // sub_block_size`` sub-blocks, so only
    a block that is a multiple of the sub-block is decoded completely (with d = 6 and the
    default sub-block of 8 the file's loop would decode nothing); here a shorter last block or
    sub-block is decoded too (the obvious extension). Defaults: threshold 0.9, sub-block 8
    (the file's).
    """

    threshold: float = 0.9
    sub_block_size: int = 8
    block_size: int | None = None
    ties: str = DEFAULT_TIES
    name: ClassVar[str] = "sglang_hierarchy_block"
    sglang_algorithm: ClassVar[str] = "HierarchyBlock"

    def __post_init__(self):
        object.__setattr__(self, "threshold", real_arg(self.threshold, "threshold"))
        int_arg(self.sub_block_size, "sub_block_size", 1)
        _opt_size(self.block_size, "block_size")
        check_ties(self.ties)

    def groups(self, d: int) -> np.ndarray:
        """(d,) the sub-block of each position, numbered in decoding order."""
        d = int_arg(d, "d", 1)
        B = d if self.block_size is None else self.block_size
        pos = np.arange(d)
        return (pos // B) * d + (pos % B) // self.sub_block_size

    def _rank(self, step, size, probs, free):
        N, d = free.shape
        B = d if self.block_size is None else self.block_size
        group = self.groups(d)
        first = np.argmax(free, axis=1)  # the lowest masked position (every row has one)
        inherit = (first % B == 0) & (first > 0)
        conf = _confidence(probs)
        cur = free & (group[None, :] == group[first][:, None])
        above = cur & (conf > self.threshold + TIE_TOL)
        extra = np.where(inherit[:, None], np.arange(d)[None, :] == first[:, None], above)
        k = (~inherit & ~above.any(axis=1)).astype(np.int64)
        return conf, k, group, extra


@dataclass(frozen=True)
class FullAttnMultiBlockPlanner(_Own):
    r"""SGLang ``FullAttnMultiBlock`` (d3LLM's multi-block decoding, no cache): blocks of
    ``block_size`` decoded in parallel as they are activated.

    With :math:`c_b` the masked count of block b, :math:`n_b` its length and
    :math:`\pi_b = 1 - c_b/n_b` its progress: block 0 is active and fully active; block
    :math:`b \ge 1` is active when :math:`\pi_{b-1} \ge` ``block_add_threshold`` or
    :math:`c_{b-1} = 0`, fully active when also :math:`\pi_{b-1} \ge`
    ``decoded_token_threshold`` (both monotone in the revealed set, so the file's sticky flags
    are functions of :math:`x_A`). ``active_end`` is the end of the rightmost active block
    that is fully active or has masks. A step reveals every masked position before
    ``active_end`` with :math:`H_j = -\sum_v p \log(p + 10^{-12}) <` ``threshold`` (strict), and,
    when none of them lies in the first fully active block with masks (the first block with
    masks, for decoded_token_threshold ≤ 1), that block's lowest-entropy masked position (the
    file: ``argmin``, first minimum: ``ties="lowest"``). Forwards: steps (the file's ``nfe``).

    Defaults: threshold 0.4, block_add_threshold 0.1, decoded_token_threshold 0.95 (the
    file's; ``cache_delay_iter`` and ``refresh_interval`` only mark blocks cached).
    ``block_size`` None: one block.
    """

    threshold: float = 0.4
    block_size: int | None = None
    block_add_threshold: float = 0.1
    decoded_token_threshold: float = 0.95
    ties: str = DEFAULT_TIES
    name: ClassVar[str] = "sglang_full_attn_multi_block"
    extra_forwards: ClassVar[int] = 0
    sglang_algorithm: ClassVar[str] = "FullAttnMultiBlock"

    def __post_init__(self):
        object.__setattr__(self, "threshold", _nonneg(self.threshold, "threshold", "an entropy threshold (nats)"))
        _opt_size(self.block_size, "block_size")
        object.__setattr__(self, "block_add_threshold",
                           _unit(self.block_add_threshold, "block_add_threshold", "a fraction of a block"))
        object.__setattr__(self, "decoded_token_threshold",
                           _unit(self.decoded_token_threshold, "decoded_token_threshold", "a fraction of a block"))
        check_ties(self.ties)

    def _rank(self, step, size, probs, free):
        N, d = free.shape
        B = d if self.block_size is None else self.block_size
        pos = np.arange(d)
        blk = pos // B
        nb = int(blk[-1]) + 1
        onehot = blk[:, None] == np.arange(nb)[None, :]  # (d, nb)
        counts = free.astype(np.int64) @ onehot.astype(np.int64)  # (N, nb)
        totals = onehot.sum(axis=0)
        ends = np.minimum((np.arange(nb) + 1) * B, d)
        prog = 1 - counts / totals
        active = np.ones((N, nb), dtype=bool)
        fully = np.zeros((N, nb), dtype=bool)
        fully[:, 0] = True
        for b in range(1, nb):
            active[:, b] = (prog[:, b - 1] >= self.block_add_threshold) | (counts[:, b - 1] == 0)
            fully[:, b] = active[:, b] & (prog[:, b - 1] >= self.decoded_token_threshold)
        open_ = active & (fully | (counts > 0))
        active_end = np.where(open_, ends[None, :], 0).max(axis=1)
        H = _entropy(probs, 1e-12)
        transfer = free & (pos[None, :] < active_end[:, None]) & (H < self.threshold - TIE_TOL)
        fa = fully & (counts > 0)
        has = fa.any(axis=1)
        fb = np.argmax(fa, axis=1)
        need = has & ~(transfer & (blk[None, :] == fb[:, None])).any(axis=1)
        return -H, need.astype(np.int64), blk, transfer


# -- JointThreshold: a revising sampler --------------------------------------------------------
@dataclass(frozen=True)
class JointThresholdSampler(OwnChainSampler, Record):
    r"""SGLang ``JointThreshold``: mask-to-token commits above a threshold plus token-to-token
    edits of visible tokens, until nothing changes or the post-edit budget is spent.

    One block of all d positions, every one masked at the start (no prompt inside the block:
    SGLang never edits the positions that were visible when the block began). Each forward
    gives a candidate at every position: a masked j draws :math:`y_j` from
    :math:`p(\cdot \mid x_A)`, a visible j from the model's prediction at a visible position,
    for the true law the leave-one-out conditional :math:`p(\cdot \mid x_{A \setminus j})` (as
    :class:`~mdmtheory.samplers.revise.EditingSampler`), both tempered by ``temperature``
    (0: the arg max, lowest token on ties); the candidate's confidence :math:`c_j` is its
    tempered probability (at 0: its plain probability). The file's ``step``, at commit 17d5721:

    1. masks left: commit every masked j with :math:`c_j >` ``threshold``, or if none the most
       confident masked one (``torch.topk(confidence, k=1)``; ties by ``ties``);
       no mask left: ``post_edit_steps += 1``, and if it exceeds ``max_post_edit_steps`` the
       block is finished (nothing written);
    2. edit every visible j with :math:`y_j \ne x_j` and :math:`c_j >` ``edit_threshold``;
    3. nothing to commit or edit: finished; else write all of them.

    Confidences are compared after rounding to 12 decimals (:mod:`.select`). Forwards: the
    steps up to and including the finishing one (module docstring). ``penalty_lambda``
    (a repetition penalty, default 0 in the file) is not modelled. Defaults: threshold 0.5,
    edit_threshold 0, max_post_edit_steps 16 (the file's), temperature 1 (SGLang's file is
    greedy: ``temperature=0`` is it as read; at 1 it is the ``sample_block_tokens`` form of
    SGLang's ``LowConfidence``, whose output law is not a point mass). A sampling variant of
    the pre-refactor file also exists (found in the code index without its repository; it
    imports ``sample_from_logits_dllm``): it picks the mask-to-token positions by the arg-max
    confidence and samples only their values, keeps the edits greedy, and samples the last
    post-edit step from the summed logits; it is not modelled here.

    Exact law: :func:`serving_run` / ``mt.sampler_law(p, None, sampler)`` (a chain over
    (state, post-edit count) with every candidate vector per state, like the editing chain of
    :mod:`.revise`; lost: a masked state at a zero-probability prefix, or a leave-one-out
    prediction that does not exist). Monte Carlo: ``mt.simulate(p, None, sampler)``.

    ``scoring`` (above temperature 0; :data:`JOINT_SCORING_SOURCES` pins each to its SGLang
    version): ``"tempered"`` (default, as above) or ``"relative"``, SGLang main's
    :math:`c_j = \min(\max_v p(v \mid \cdot),\ \exp((z_{y_j} - z_{\max}) / T))` with z the
    logits, i.e. the arg-max probability capped by the candidate's tempered probability relative
    to the most likely token's (:math:`\exp((z_y - z_{\max})/T) = S_y / \max_v S_v`, S the
    tempered row). At temperature 0 the two agree (the arg max and its plain probability).
    """

    threshold: float = 0.5
    edit_threshold: float = 0.0
    max_post_edit_steps: int = 16
    temperature: float = 1.0
    ties: str = DEFAULT_TIES
    scoring: str = "tempered"
    name: ClassVar[str] = "sglang_joint_threshold"
    revises: ClassVar[bool] = True
    sglang_algorithm: ClassVar[str] = "JointThreshold"

    def __post_init__(self):
        object.__setattr__(self, "threshold", _unit(self.threshold, "threshold", "a probability"))
        object.__setattr__(self, "edit_threshold", _unit(self.edit_threshold, "edit_threshold", "a probability"))
        object.__setattr__(self, "max_post_edit_steps", int_arg(self.max_post_edit_steps, "max_post_edit_steps", 0,
                                                                1 << 10))
        T = self.temperature
        if isinstance(T, bool) or not isinstance(T, numbers.Real) or not 0 <= real_arg(T, "temperature") < np.inf:
            raise ValueError(f"temperature: expected a finite number >= 0 (0: greedy, SGLang's file), got {T!r}")
        object.__setattr__(self, "temperature", float(T))
        check_ties(self.ties)
        if not isinstance(self.scoring, str) or self.scoring not in JOINT_SCORING_SOURCES:
            raise ValueError(f"scoring: expected one of {', '.join(map(repr, JOINT_SCORING_SOURCES))} (SGLang 0.5.23's "
                             f"tempered probability, or main's min(p_argmax, exp((z_t - z_max)/T))), got {self.scoring!r:.80}")

    @property
    def _own_plan(self):
        return None

    def _run(self, p) -> "ServingRun":
        return serving_run(p, self)

    def max_forwards(self, d: int) -> int:
        """The most forwards a block of d positions can take: d mask steps, the post-edit
        steps and the finishing step, one forward each (SGLang's ``max_steps``: d + max_post_edit_steps + 1)."""
        return int_arg(d, "d", 1) + self.max_post_edit_steps + 1

    def _rows(self, P):
        S = tempered(P, self.temperature)
        if self.scoring == "relative" and self.temperature > 0:  # main: min(p_argmax, S_v / max S)
            top = np.max(S, axis=-1, keepdims=True)
            with np.errstate(invalid="ignore", divide="ignore"):
                rel = np.where(top > 0, S / np.where(top > 0, top, 1.0), 0.0)
            return S, np.minimum(np.max(P, axis=-1, keepdims=True), rel)
        C = confidence_rows(P, S, "tempered", self.temperature)
        return S, C

    def _simulate(self, p, *, n: int, seed: int):
        """n samples from any conditional oracle: (samples (n, d), lost (n,), forwards (n,))."""
        oracle, d, rng, x, rv, lost = _mc_start(p, None, n, seed)
        n = x.shape[0]
        forwards = np.ones(n, dtype=np.int64)  # the first forward
        active = np.ones(n, dtype=bool)
        post = np.zeros(n, dtype=np.int64)
        while True:
            rows = np.flatnonzero(active & ~lost)
            if rows.size == 0:
                break
            reach = (oracle.log_marginal(x[rows], rv[rows]) > -np.inf) | rv[rows].all(axis=1)
            lost[rows[~reach]] = True
            rows = rows[reach]
            xs, r = x[rows], rv[rows]
            with np.errstate(invalid="ignore", divide="ignore"):
                loo = loo_conditionals(oracle, xs, r)
            bad = (r & ~(np.isfinite(loo).all(axis=-1) & (loo.sum(axis=-1) > 0.5))).any(axis=1)
            lost[rows[bad]] = True
            rows, xs, r, loo = rows[~bad], xs[~bad], r[~bad], loo[~bad]
            if rows.size == 0:
                continue
            with np.errstate(invalid="ignore", divide="ignore"):
                P = np.where(r[..., None], loo, oracle.conditionals(xs, r))
            S, C = self._rows(P)
            y = np.minimum(inverse_cdf(S, rng.random(xs.shape)), oracle.K - 1)
            conf = _round(np.take_along_axis(C, y[..., None], axis=-1)[..., 0])
            full = r.all(axis=1)
            post[rows[full]] += 1
            over = full & (post[rows] > self.max_post_edit_steps)
            commit = select_commits(conf, ~r, 1, self.threshold, self.ties, rng) & ~full[:, None]
            edit = r & (y != xs) & (conf > self.edit_threshold) & ~over[:, None]
            change = commit | edit
            x[rows] = np.where(change, y, xs)
            rv[rows] = r | commit
            stop = over | ~change.any(axis=1)
            forwards[rows[~stop]] += 1  # a step that goes on needs the next forward; the finishing one does not
            active[rows[stop]] = False
        return np.where(rv, x, -1), lost, forwards


def _joint_terms(S, C, vals, rev, post, sampler, Pf, d, K):
    """The terms of one JointThreshold step from states with tempered rows S and confidence
    rows C: (row, weight, weight0, class, key); class 0 live (key: lattice index + L * post),
    1 finished (key: output index), 2 lost (a masked state at a zero-probability prefix)."""
    stride = lattice_strides(d, K)
    C = _round(C)
    row, code, w = _expand(S)
    ys = _candidates(d, K)[code]
    conf = C.reshape(-1)[(row[:, None] * d + np.arange(d)) * K + ys]
    ch = commit_choices(conf, ~rev[row], 1, sampler.threshold, sampler.ties)
    t = ch.rows
    row, w, ys, conf = row[t], w[t] * ch.weight, ys[t], conf[t]
    w0 = w * ~ch.split[t]
    v0, r0 = vals[row], rev[row]
    full = r0.all(axis=1)
    pst = post[row] + full
    over = full & (pst > sampler.max_post_edit_steps)
    commit = ch.chosen & ~full[:, None]
    edit = r0 & (ys != v0) & (conf > sampler.edit_threshold) & ~over[:, None]
    change = commit | edit
    new = np.where(change, ys, v0)
    fin = over | ~change.any(axis=1)
    masked = (new == K).any(axis=1)
    tgt = new @ stride
    cls = np.where(fin, 1, np.where(masked & ~(Pf[tgt] > 0), 2, 0)).astype(np.int8)
    key = np.where(fin, output_index(np.where(new < K, new, 0), K), tgt + Pf.shape[0] * pst)
    return row, w, w0, cls, key


#: Largest number of (state, candidate vector) terms one JointThreshold step may have (every
#: state of the lattice live, each post-edit count, K^d candidates): d = 7 binary with a
#: post-edit budget of 2, or d = 6 with the default 16, take about a second.
MAX_JOINT_WORK = 2_000_000


def _joint_run(p: Joint, sampler: JointThresholdSampler) -> "ServingRun":
    d, K = p.d, p.K
    states = (K + 1) ** d * (sampler.max_post_edit_steps + 1)
    if states * K**d > MAX_JOINT_WORK:
        raise ValueError(f"p: the exact JointThreshold chain enumerates every candidate vector of every state (~"
                         f"{states * K**d:.2g} terms per step, d={d}, K={K}), above {MAX_JOINT_WORK:,}; use "
                         "mt.simulate(p, None, sampler)")
    Pf = marginal_lattice(p.table, xp=np).ravel()
    L = Pf.shape[0]
    stride = lattice_strides(d, K)
    keys, mass = np.array([empty_state(d, K)], dtype=np.int64), np.ones(1)
    mass0 = mass
    out = np.zeros(K**d)
    fw = np.zeros(sampler.max_forwards(d) + 1)
    lost, f, untied, total = 0.0, 0, 0.0, 0.0
    while keys.size:
        idx, post = keys % L, keys // L
        vals = state_values(idx, d, K)
        rev = vals < K
        hid = idx[:, None] + (K - vals) * stride
        den = Pf[hid]
        bad = (rev & ~(den > 0)).any(axis=1)
        g = np.flatnonzero(~bad)
        def terms(P, h):
            S, C = sampler._rows(P)
            return _joint_terms(S, C, vals[h], rev[h], post[h], sampler, Pf, d, K)

        nxt, new, o_, l_, mass0, o0, l0 = _revision_step(mass, mass0, g, bad, hid, den, terms, Pf, d, K,
                                                         sampler.max_post_edit_steps)
        mass = new
        untied += float(o0.sum()) + l0
        total += float(o_.sum()) + l_
        out += o_
        fw[f + 1] += float(o_.sum())  # finished at step f (0-based): f + 1 steps, one forward each
        lost += l_
        keys = nxt
        f += 1
    run = _serving(Joint(out.reshape(p.table.shape), lost=lost), fw, sampler.sglang_algorithm, sampler.ties,
                   max(0.0, total - untied))
    if sampler.scoring != "tempered" and sampler.temperature > 0:
        version, _repo, path, commit = JOINT_SCORING_SOURCES[sampler.scoring]
        run = replace(run, pipeline=f"{run.pipeline}, scoring of SGLang {version} ({path.rsplit('/', 1)[-1]} @ "
                                    f"{commit[:7]})")
    return run


# -- one record for every rule ------------------------------------------------------------------
@dataclass(frozen=True)
class ServingRun(Run):
    """Exact run of a serving rule on a law: ``law`` (its ``lost`` the mass stuck at a
    zero-probability prefix or without a prediction), ``forwards`` (the mean number of model
    calls of a run that finishes), ``forwards_law`` (``[f]`` = probability that the block took
    f model calls, as the SGLang file's loop makes them, among the runs that finish),
    ``algorithm`` (SGLang's name), ``ties``, ``tie_mass`` and ``path_kl`` (as
    :class:`~mdmtheory.samplers.engine.ExactRun`; None for JointThreshold, which edits)."""

    forwards_law: np.ndarray
    algorithm: str


def _serving(law: Joint, fw: np.ndarray, algorithm: str, ties, tie_mass: float, path_kl=None) -> ServingRun:
    f = np.arange(fw.shape[0])
    s = fw.sum()
    _repo, path, commit = SGLANG_SOURCES[algorithm]
    return ServingRun(law=law, forwards=float((f * fw).sum() / s) if s > 0 else float("nan"), forwards_law=fw,
                      algorithm=algorithm, ties=ties, tie_mass=float(tie_mass), path_kl=path_kl,
                      pipeline=f"SGLang {algorithm} ({path.rsplit('/', 1)[-1]} @ {commit[:7]})")


@renamed_keywords(rule="planner")
def serving_run(p: Joint, planner, *, trajectory: bool = False) -> ServingRun:
    """The exact run of a serving rule of this module on ``p``: its law, lost mass, forwards
    and tie mass (the four planners through :func:`~mdmtheory.samplers.engine.exact_run`, with
    the trajectory KL when ``trajectory``; the JointThreshold chain above). ``rule=`` is the
    old name of ``planner`` (works for one release, with a DeprecationWarning)."""
    rule = planner
    p = joint_arg(p)  # issue 38: the JointThreshold chain too (it took a law with lost mass)
    if isinstance(rule, JointThresholdSampler):
        return _joint_run(p, rule)
    if not isinstance(rule, _Own):
        raise ValueError(f"planner: expected a serving rule of mdmtheory.samplers.serving (EntropyThresholdPlanner, "
                         f"EBSamplingPlanner, HierarchyBlockPlanner, FullAttnMultiBlockPlanner, "
                         f"JointThresholdSampler), got {type(rule).__name__}")
    run = _engine_run(p, None, rule, trajectory=trajectory)
    steps = np.asarray(run.step_counts, dtype=np.float64)  # [t] = P(last token revealed at step t)
    fw = np.zeros(steps.shape[0] + rule.extra_forwards)
    fw[rule.extra_forwards:] = steps
    return _serving(run.law, fw, rule.sglang_algorithm, run.ties, run.tie_mass, run.path_kl)


#: Serving-rule points the report's accuracy-vs-parallelism frontier adds when the exact law
#: is within its size limit: (name, setting, rule). A simple list; add rules here.
SERVING_RULES: tuple = (
    ("sglang_entropy_threshold", "threshold = 0.95", EntropyThresholdPlanner(0.95)),
    ("sglang_eb_sampling", "gamma = 0.15", EBSamplingPlanner(0.15)),
    ("sglang_hierarchy_block", "threshold = 0.9, sub-block 2", HierarchyBlockPlanner(0.9, sub_block_size=2)),
    ("sglang_full_attn_multi_block", "threshold = 0.4, block 2", FullAttnMultiBlockPlanner(0.4, block_size=2)),
    ("sglang_joint_threshold", "threshold = 0.5, edit 0.9, 2 post-edit steps, T = 1",
     JointThresholdSampler(0.5, edit_threshold=0.9, max_post_edit_steps=2)),
)
