r"""Block designs from a model and data: the estimated half of :mod:`mdmtheory.optimal.blocks`."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._moved import renamed_keyword
from ..information.profile import Profile
from ..optimal.blocks import check_block_length, BlockCandidate, BlockDesign, check_block_ask, check_block_lengths, choose_block_length
from ..optimal.card import optimal_schedule
from .._validate import INT_MAX, int_arg, LIMITS, row_length, samples_array
from .profile import estimate_cross_entropy_profile, _window, check_samples_for_model, defect_weights, _is_oracle, profile_rises
from .._validate import normal_quantile_arg
from .._moved import module_getattr

__all__ = [
    "BLOCK_VIEWS",
    "FORMAT_VIEWS",
    "estimate_block_profiles",
    "estimate_design_blocks",
    "separation",
]


#: What a block sampler's model sees of the later blocks while it decodes block b (issue 39 item 1):
#: ``"masked"`` — the whole row, later blocks all mask tokens; ``"truncated"`` — the row cut after
#: block b, later blocks absent. For a bidirectional model the two differ.
BLOCK_VIEWS = ("masked", "truncated")

#: The view each export format's own loop feeds its model, as read (issue 39 item 1):
#:
#: * ``diffusers``: ``LLaDA2Pipeline.__call__`` (diffusers, ``pipelines/llada2/pipeline_llada2.py``
#:   as installed) calls ``self.model(block_x, ...)`` with ``block_x = x[:, :current_window_end]``,
#:   ``current_window_end = (num_block + 1) * block_length``: truncated.
#: * ``sglang``: ``DllmAlgorithm._run_sync`` (``python/sglang/srt/dllm/algorithm/base.py`` at 0929d6d)
#:   forwards ``forward_batch.input_ids`` viewed as ``(batch_size, block_size)``: the current block
#:   only, the prompt and earlier blocks from the KV cache, nothing after: truncated.
#: * ``llada``: ``generate`` (ML-GSAI/LLaDA ``generate.py`` at 41760b9) calls ``model(x)`` on the whole
#:   ``prompt + gen_length`` row with the later blocks still ``mask_id``: masked.
#: * ``fastdllm``: NVlabs/Fast-dLLM ``llada/generate.py``: without a cache ``model(x)`` on the whole row;
#:   with the prefix cache ``model(x[:, current_block_start:], past_key_values=...)`` — the current and
#:   later (masked) blocks; the dual cache replaces the block inside the full row: masked.
#: * ``json`` (the package's own block sampler, :func:`mdmtheory.optimal.block_profiles`): masked.
#:
#: * ``vllm``: the dllm plugin's design (vllm-project/dllm-plugin ``docs/DESIGN_MVP.md`` at 0c53db5, its
#:   worker sequence: "forward one block plus KV context"; the worker itself is not written yet) and
#:   DiffusionGemma's canvases both forward the current block over the cached prefix: truncated.
#:
#: One-block formats (Dream, MDLM, dllm) have no later blocks: both views agree.
FORMAT_VIEWS = {"json": "masked", "llada": "masked", "fastdllm": "masked", "diffusers": "truncated",
                "sglang": "truncated", "vllm": "truncated"}


def check_view(view) -> str:
    """``view`` checked: one of :data:`BLOCK_VIEWS`."""
    if not isinstance(view, str) or view not in BLOCK_VIEWS:
        raise ValueError(f"view: expected one of {', '.join(map(repr, BLOCK_VIEWS))} (what the model sees of the later "
                         f"blocks: mask tokens, or nothing — diffusers' LLaDA2Pipeline and SGLang), got {view!r:.80}")
    return view


def estimate_block_profiles(model, samples, block_length: int, *, prompt_length: int = 0, n_per_level: int = 1000,
                            seed: int = 0, view: str = "masked") -> tuple:
    r"""Estimated cross-entropy profile of each block given the prompt and the earlier blocks.

    Block b holds positions :math:`g + bB, \dots, g + (b+1)B - 1` of every row (g =
    ``prompt_length``); its level-m value is
    :math:`c^{(b)}(m) = \mathbb E[-\log q(x_j \mid x_{E_b}, x_A)]`, A a uniform m-subset of
    the block, j a uniform masked position of the block, the prompt and earlier blocks
    :math:`E_b` visible and the later blocks **masked** (as the semi-autoregressive sampler
    sees them). One :func:`mdmtheory.design.estimate_cross_entropy_profile` per block (``prompt_length =
    g + bB``, ``response_length = B``), seeded ``seed + b``; on an exact model it estimates
    :func:`block_profiles` (later blocks marginalized = masked).

    ``view`` (:data:`BLOCK_VIEWS`): ``"masked"`` as above (LLaDA's ``generate``, Fast-dLLM, the
    package's block sampler); ``"truncated"``: the model is run on the rows cut after block b,
    positions ``0 .. g + (b+1)B - 1`` only, as diffusers' ``LLaDA2Pipeline`` and SGLang run it
    (:data:`FORMAT_VIEWS` says which loop feeds which). Both views use the same draws (rows,
    revealed sets), so they differ only by what the model sees. A conditional oracle's
    conditionals with the later positions unrevealed are the prefix's own (marginalized), so
    for an oracle the two views are one estimate; a torch model that reads rows of one fixed
    length cannot take a truncated row and is refused.
    """
    x = samples_array(samples, "samples")
    row_length(x.shape[1])
    seed = int_arg(seed, "seed", 0, INT_MAX - LIMITS["d"], " (block b is seeded seed + b)")
    g, n = _window(prompt_length, None, x.shape[1])
    B = check_block_length(block_length, n)
    view = check_view(view)
    x = check_samples_for_model(model, x)  # tokens and row length against the model, before any block
    if view == "truncated" and n // B > 1 and not _is_oracle(model):
        from .. import bridge  # torch-backed: imported only for a torch model

        try:
            bridge.as_masked_model(model).check_length(g + B, "view")
        except ValueError:
            raise ValueError(f"view: 'truncated' runs block 0 on rows cut to {g + B} tokens, but this model reads rows "
                             f"of one fixed length ({x.shape[1]}); use view='masked' (in the CLI: a --format whose loop masks the "
                             "later blocks, e.g. llada or json), or a model that reads shorter rows (as the pipeline's "
                             "does)") from None
    out = []
    for b in range(n // B):
        cut = x.shape[1] if view == "masked" or _is_oracle(model) else g + (b + 1) * B
        out.append(estimate_cross_entropy_profile(model, x[:, :cut], n_per_level=n_per_level, seed=seed + b,
                                                  prompt_length=g + b * B, response_length=B))
    return tuple(out)


def estimate_design_blocks(model, samples, *, forwards: int | None = None, target_kl: float | None = None,
                           block_lengths=None, prompt_length: int = 0, n_per_level: int = 1000, seed: int = 0,
                           confidence: float = 0.95, view: str = "masked", **old) -> BlockDesign:
    r""":func:`design_blocks` from a model's estimated block profiles, with confidence intervals.

    For each candidate B, :func:`estimate_block_profiles`; the counts of each block are the
    exact optimum (:func:`mdmtheory.optimal_schedule`) for its estimated profile with S steps,
    and the plan's path KL is the sum over blocks of the Riemann defects
    :math:`\sum_m w_m c^{(b)}(m)` (:func:`mdmtheory.design.defect_weights`): the model's
    path KL up to a learning error that does not depend on the counts. Blocks and levels
    are estimated independently, so the variance is :math:`\sum_{b,m} w_{b,m}^2
    \mathrm{se}_{b,m}^2`; the CI is normal at ``confidence``. With ``target_kl``: the fewest
    forwards whose CI upper end is <= target_kl (``budget=`` for one release, with a
    DeprecationWarning). Selection on the same estimate makes the CI
    optimistic; confirm on fresh samples (``compare_plans``).

    ``view``: what the model sees of the later blocks (:func:`estimate_block_profiles`;
    ``FORMAT_VIEWS[fmt]`` for the pipeline that will run the plan); the result's ``view``.
    """
    from scipy.stats import norm

    target_kl = renamed_keyword(old, "budget", "target_kl", target_kl, None, where="estimate_design_blocks")
    if old:
        raise TypeError(f"estimate_design_blocks() got an unexpected keyword argument {next(iter(old))!r}")
    x = samples_array(samples, "samples")
    row_length(x.shape[1])
    seed = int_arg(seed, "seed", 0, INT_MAX - LIMITS["d"], " (block b is seeded seed + b)")
    g, n = _window(prompt_length, None, x.shape[1])
    check_block_ask(forwards, target_kl, n)
    Bs = check_block_lengths(block_lengths, n)
    normal_quantile_arg(confidence)  # in (0, 1) with a finite quantile (never a (nan, nan) interval)
    confidence = float(confidence)
    z = float(norm.ppf(0.5 + confidence / 2))
    view = check_view(view)
    x = check_samples_for_model(model, x)
    ests, total = {}, 0
    for B in Bs:
        ests[B] = estimate_block_profiles(model, x, B, prompt_length=g, n_per_level=n_per_level, seed=seed, view=view)
        total += sum(e.forwards for e in ests[B])

    def plan_for(B, S):
        counts, kl, var = [], 0.0, 0.0
        for e in ests[B]:
            c, se = np.asarray(e.values, float), np.asarray(e.stderr, float)
            sched = optimal_schedule(Profile(c), S)
            w = defect_weights(sched)
            counts.append(sched.sizes)
            kl += float(w @ c)
            var += float(np.sum((w * se) ** 2))
        sd = float(np.sqrt(var))
        return tuple(counts), kl, (kl - z * sd, kl + z * sd)

    cands, best = choose_block_length(Bs, n, forwards, target_kl, plan_for)
    note = (f"estimated: block cross-entropy profiles of the model on {x.shape[0]} rows, prompt length "
            f"{g}, {n_per_level} draws per level ({total} forward rows); "
            f"{int(round(confidence * 100))}% normal CIs; later blocks {view} while a block is estimated")
    rising = tuple(B for B in Bs if any(profile_rises(e.values, e.stderr) for e in ests[B]))
    return BlockDesign(cands, best, "estimated", note, view, rising)


def separation(candidates, best, n_per_level: int | None = None) -> dict | None:
    r"""Whether an estimated pick can be told from the other candidates (issue 31 §9); None for
    an exact design (no intervals) or a pick whose interval overlaps no other candidate's.

    Compared with the pick are the candidates with an estimate at the same forwards. Those
    whose confidence interval overlaps the pick's are ``tied``: on these samples the pick is
    not distinguishable from them, and presenting it as the design would be reading noise.
    The intervals shrink as :math:`1/\sqrt{n}` with the draws per level n, so separating
    the pick from a tied candidate c needs about :math:`f_c = ((h_b + h_c) / |\Delta_c|)^2`
    times the draws (h the half-widths, Δ the difference of the estimates; the candidates
    share samples, so this is an order of magnitude, not a guarantee); ``factor`` is the
    largest :math:`f_c` (None when some estimates are equal: no number of draws separates
    them), ``n_per_level`` the draws per level it implies. Two candidates whose intervals have
    zero width (known exactly, e.g. one token per step) are not noise and are never tied.
    ``negative`` lists the candidates
    whose estimate is below 0: a path KL is >= 0, so those are noise around 0.
    """
    def get(c, k):
        return c.get(k) if isinstance(c, dict) else getattr(c, "ci" if k == "path_kl_ci" else k)

    def check(c, name):  # a BlockCandidate or its to_dict(): the fields read here, of the right types
        keys = ("block_length", "forwards", "path_kl", "path_kl_ci")
        if not (isinstance(c, BlockCandidate) or (isinstance(c, dict) and all(k in c for k in keys))):
            raise ValueError(f"{name}: expected a BlockCandidate (or its to_dict()), got {c!r:.80}")
        ci, v, f = get(c, "path_kl_ci"), get(c, "path_kl"), get(c, "forwards")
        ok = all(x is None or (isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))
                               and math.isfinite(x)) for x in (v, f, *(ci if isinstance(ci, (tuple, list)) else ())))
        if not ok or (ci is not None and not (isinstance(ci, (tuple, list)) and len(ci) == 2 and v is not None)):
            raise ValueError(f"{name}: expected finite path_kl, forwards and a (low, high) path_kl_ci (or None), "
                             f"got {c!r:.80}")

    if isinstance(candidates, (str, bytes, dict)) or not isinstance(candidates, (list, tuple)):
        raise ValueError(f"candidates: expected a list of BlockCandidates (BlockDesign.candidates), "
                         f"got {candidates!r:.80}")
    for i, c in enumerate(candidates):
        check(c, f"candidates[{i}]")
    check(best, "best")
    if n_per_level is not None:
        n_per_level = int_arg(n_per_level, "n_per_level", 1)
    bci = get(best, "path_kl_ci")
    if bci is None:
        return None
    bv, bf = get(best, "path_kl"), get(best, "forwards")
    hb = (bci[1] - bci[0]) / 2
    tied, factors = [], []
    negative = [get(c, "block_length") for c in candidates if get(c, "path_kl") is not None and get(c, "path_kl") < 0]
    for c in candidates:
        ci = get(c, "path_kl_ci")
        if c is best or ci is None or get(c, "forwards") != bf or get(c, "block_length") == get(best, "block_length"):
            continue
        if hb == 0 and ci[1] == ci[0]:  # both known exactly (e.g. one token per step: 0): no noise to speak of
            continue
        if ci[0] <= bci[1] and bci[0] <= ci[1]:
            tied.append(get(c, "block_length"))
            delta = abs(get(c, "path_kl") - bv)
            factors.append(None if delta == 0 else ((hb + (ci[1] - ci[0]) / 2) / delta) ** 2)
    if not tied:
        return None
    factor = None if any(f is None for f in factors) else max(factors)
    return {"tied": tied, "factor": factor, "negative": negative,
            "n_per_level": None if factor is None or n_per_level is None else int(np.ceil(factor * n_per_level))}


def __getattr__(name):
    """Old names of this module (``_moved.NAMES``), working for one release with a warning."""
    return module_getattr(__name__, name)
