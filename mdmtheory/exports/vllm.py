r"""What of a designed schedule vLLM can run: its forward budget, in ``DiffusionConfig`` and
``generation_config.json`` form.

vLLM serves discrete diffusion through ``DiffusionConfig`` (``--diffusion-config JSON``,
``LLM(diffusion_config={...})``): a pydantic dataclass with extra fields forbidden and two
fields, ``canvas_length`` (int > 0: the block, also the speculative tokens scheduled per
step) and ``max_denoising_steps`` (int or None: "Maximum number of denoising iterations per
canvas block. If not set, read from the model's generation_config.json"). Read from vLLM
0.34.0 (the PyPI wheel, sha256 79ca4b3c…4ca2): ``vllm/config/diffusion.py`` (the same text
as vllm-project/vllm ``vllm/config/diffusion.py`` at commit
5c6ec2cc60d253d4d4341c0606fc3c0bbed9c930), ``vllm/config/utils.py`` (``extra="forbid"``),
``vllm/engine/arg_utils.py`` lines 1907-1909 and 2215-2221 (the option, ``json.loads`` then
``DiffusionConfig(**cfg)``), ``vllm/utils/diffusion.py`` (the per-request ``extra_args``:
``diffusion_max_steps`` a positive int, ``diffusion_canvas_length`` at most the served
canvas).

**vLLM's only dLLM is DiffusionGemma** (``vllm/model_executor/models/diffusion_gemma.py``):
a canvas of *uniform random tokens* (no mask token) denoised by the EntropyBound sampler —
each step sorts the positions by entropy and accepts the longest prefix whose entropy sum
minus its largest entry is at most ``entropy_bound``, renoising the rest — until the canvas
is stable and confident or ``max_denoising_steps`` is reached, then one commit forward. Its
model runner reads ``generation_config.json``'s ``max_denoising_steps`` (default 48, below
``DiffusionConfig``'s), ``stability_threshold``, ``t_min``, ``t_max``,
``confidence_threshold`` and ``sampler_config`` (``_cls_name`` holding "EntropyBound",
``entropy_bound`` > 0) (lines 878-892 and 930-954). There is no count per step to set, and
the accepted positions are renoised again later, so a masked-diffusion schedule has no
counterpart. :func:`to_vllm` refuses it, naming that; with ``budget_only=True`` it writes
what vLLM can run of it: the same canvas and at most the same denoising steps (the engine's
own acceptance rule deciding the rest).

**The vLLM dllm plugin** (vllm-project/dllm-plugin at 0c53db5, read: ``vllm_dllm_plugin/config.py``,
``remasking/llada2_default.py``, ``docs/CONTRACTS.md``) serves LLaDA2.0 in blocks of
``DRAFT_SIZE = 32`` positions. Its ``Llada2DefaultRemaskingPolicy.apply`` reads one
``remasking_config`` mapping per step with ``commit_confidence_threshold`` (float),
``mask_token_id``, ``denoise_steps``, ``denoise_step_index`` (ints) and ``num_transfer`` (an int
override of the step's transfer count, >= 0). It counts the masked positions whose arg-max
probability is *strictly* above the threshold (h); if h >= ``num_transfer`` it commits all h,
else the ``min(num_transfer, masked)`` most confident masked positions (lowest index on ties).
A softmax probability is never above 1.0, so with the threshold 1.0 every step commits exactly
its ``num_transfer``: a designed schedule runs there exactly when its block length is 32.
:func:`dllm_plugin_configs` writes those per-step mappings (``to_vllm`` adds them as
``dllm_plugin`` where the block length is 32). At 0c53db5 the plugin has no worker passing
per-step configs yet (its issue #10): the mappings are what ``apply`` takes, step by step.
"""

from __future__ import annotations

import json

from .._moved import renamed_keywords
from ..schedules.plans import Schedule
from .._validate import int_arg as _int_arg
from .formats import _llada_blocks

__all__ = ["to_vllm", "VLLM_VERSION", "dllm_plugin_configs", "DLLM_PLUGIN_DRAFT_SIZE"]

#: The vLLM release read (PyPI wheel).
VLLM_VERSION = "0.34.0"

#: The block (``DRAFT_SIZE``) of the vLLM dllm plugin as read (vllm-project/dllm-plugin
#: ``vllm_dllm_plugin/config.py`` at 0c53db5): the only block length it runs.
DLLM_PLUGIN_DRAFT_SIZE = 32

#: The plugin commit read.
DLLM_PLUGIN_COMMIT = "0c53db5"


def dllm_plugin_configs(plan, *, block_length: int | None = None, mask_token_id: int = 1) -> list:
    """The plan as the vLLM dllm plugin's per-step ``remasking_config`` mappings (module
    docstring): one list per block, one mapping per step, ``num_transfer`` the step's designed
    count and ``commit_confidence_threshold`` 1.0 (no probability is strictly above it, so the
    count is what the step commits). ``block_length`` (default d) must be the plugin's
    ``DRAFT_SIZE`` = 32 and divide d; ``mask_token_id``: the model's (the plugin's default 1).
    ``ValueError`` naming the block length otherwise."""
    s = plan if isinstance(plan, Schedule) else Schedule(plan)
    d = s.d
    B = d if block_length is None else _int_arg(block_length, "block_length", 1, d)
    mask_token_id = _int_arg(mask_token_id, "mask_token_id", 0)
    if B != DLLM_PLUGIN_DRAFT_SIZE or d % B:
        raise ValueError(f"block_length: the vLLM dllm plugin ({DLLM_PLUGIN_COMMIT}) runs blocks of DRAFT_SIZE = "
                         f"{DLLM_PLUGIN_DRAFT_SIZE} positions only, got {B} (response {d}); design with "
                         f"--block-length {DLLM_PLUGIN_DRAFT_SIZE} and a response that is a multiple of it")
    blocks = _llada_blocks(s, B)
    return [[{"commit_confidence_threshold": 1.0, "mask_token_id": mask_token_id, "denoise_steps": len(row),
              "denoise_step_index": t, "num_transfer": int(k)} for t, k in enumerate(row)] for row in blocks]


@renamed_keywords(schedule="plan")
def to_vllm(plan, *, block_length: int | None = None, budget_only: bool = False) -> dict:
    """The forward budget of ``plan`` (a Schedule or its sizes) as vLLM's ``DiffusionConfig`` (with ``budget_only=True``);
    without it, ``ValueError``: vLLM has no per-step counts (see the module docstring).

    ``block_length``: the canvas (default d); it must divide d and the schedule must spend
    the same number of steps S in every block (cut as :func:`mdmtheory.exports.to_llada`
    cuts it). Returns ``diffusion_config`` (``{"canvas_length": B, "max_denoising_steps":
    S}``), ``cli`` (``--diffusion-config`` and its JSON), ``generation_config`` (the
    ``max_denoising_steps`` field, the same cap read when ``DiffusionConfig`` leaves it
    None), ``extra_args`` (the per-request cap ``diffusion_max_steps``), ``counts`` (the
    design, which vLLM does not follow), ``exact`` (False), ``max_forwards_per_block``
    (S denoising steps + 1 commit forward), ``engine`` and a ``note``."""
    if not isinstance(budget_only, bool):
        raise ValueError(f"budget_only: expected True or False, got {budget_only!r}")
    s = plan if isinstance(plan, Schedule) else Schedule(plan)
    d = s.d
    B = d if block_length is None else _int_arg(block_length, "block_length", 1, d)
    if d % B:
        raise ValueError(f"block_length: must divide d={d} (one canvas of canvas_length per block), got {B}")
    if not budget_only:
        raise ValueError(
            f"plan: vLLM {VLLM_VERSION} has no per-step counts: its one discrete-diffusion model, "
            "DiffusionGemma, denoises a canvas of uniform random tokens (no mask token) with the EntropyBound "
            "sampler, which accepts positions by an entropy budget and renoises the rest at every step; "
            f"DiffusionConfig holds only canvas_length and max_denoising_steps. The design {list(s.sizes)} cannot "
            "be run there: pass budget_only=True for its forward budget (the canvas and the step cap), run it in "
            f"blocks of {DLLM_PLUGIN_DRAFT_SIZE} with the vLLM dllm plugin (dllm_plugin_configs), or with diffusers' "
            "LLaDA2Pipeline (--format diffusers) or LLaDA's generate (--format llada)")

    blocks = _llada_blocks(s, B)
    S = max(len(r) for r in blocks)
    if any(len(r) != S for r in blocks):
        raise ValueError(f"block_length: the schedule spends {[len(r) for r in blocks]} steps in its blocks of {B}; "
                         "vLLM caps every canvas at the same max_denoising_steps: use a block length whose blocks "
                         f"take equal steps, or block_length={d}")
    cfg = {"canvas_length": B, "max_denoising_steps": S}
    plugin = dllm_plugin_configs(s, block_length=B) if B == DLLM_PLUGIN_DRAFT_SIZE else None
    return {
        "format": "vllm",
        "engine": f"vllm {VLLM_VERSION}",
        "diffusion_config": cfg,
        "cli": ["--diffusion-config", json.dumps(cfg)],
        "generation_config": {"max_denoising_steps": S},
        "extra_args": {"diffusion_max_steps": S},
        "steps": s.steps,
        "block_length": B,
        "num_blocks": d // B,
        "counts": blocks,
        "exact": False,
        "max_forwards_per_block": S + 1,
        "note": ("the forward budget only: vLLM's DiffusionGemma accepts positions by its EntropyBound rule, not "
                 "by these counts, and may stop a canvas before S steps (stable and confident)"
                 + ("; the vLLM dllm plugin runs the counts exactly: dllm_plugin holds its per-step remasking_config "
                    "(num_transfer = the count, threshold 1.0)" if plugin is not None else
                    f"; the vLLM dllm plugin would run the counts exactly, but only in blocks of "
                    f"{DLLM_PLUGIN_DRAFT_SIZE} (design with --block-length {DLLM_PLUGIN_DRAFT_SIZE})")),
        "dllm_plugin": plugin,
    }
