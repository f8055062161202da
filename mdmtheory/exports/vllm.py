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
"""

from __future__ import annotations

import json

from .._moved import renamed_keywords
from ..schedules.plans import Schedule
from .._validate import int_arg as _int_arg
from .formats import _llada_blocks

__all__ = ["to_vllm", "VLLM_VERSION"]

#: The vLLM release read (PyPI wheel).
VLLM_VERSION = "0.34.0"


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
            "be run there: pass budget_only=True for its forward budget (the canvas and the step cap), or run "
            "it with diffusers' LLaDA2Pipeline (--format diffusers) or LLaDA's generate (--format llada)")

    blocks = _llada_blocks(s, B)
    S = max(len(r) for r in blocks)
    if any(len(r) != S for r in blocks):
        raise ValueError(f"block_length: the schedule spends {[len(r) for r in blocks]} steps in its blocks of {B}; "
                         "vLLM caps every canvas at the same max_denoising_steps: use a block length whose blocks "
                         f"take equal steps, or block_length={d}")
    cfg = {"canvas_length": B, "max_denoising_steps": S}
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
                 "by these counts, and may stop a canvas before S steps (stable and confident)"),
    }
