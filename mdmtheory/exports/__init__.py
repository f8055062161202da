"""Exports: a plan in the conventions of the pipelines and samplers people run.

:mod:`.formats` writes a schedule as each sampler counts it (plain dicts: LLaDA's
``num_transfer_tokens``, Dream's time grid, MDLM's ``(t, dt)``, dllm's α(t), JSON); the
adapters below plug it into the sampler's own code.

Our own code, written against each library's published interface; none of those packages is
needed to import this one (torch and diffusers are imported only when a function that needs
them is called).

* :mod:`.diffusers` — :func:`.diffusers.block_refinement_scheduler`, a
  ``diffusers.BlockRefinementScheduler`` subclass committing the designed counts per step,
  for ``LLaDA2Pipeline`` unchanged (``pip install 'mdmtheory[pipelines]'``).
* :mod:`.llada` — LLaDA's and Fast-dLLM's ``generate``: :func:`.llada.patch` swaps their
  module-level ``get_num_transfer_tokens`` for the plan's counts, block by block.
* :mod:`.dream` — Dream's ``_sample``: :func:`.dream.plan_timesteps`, the grid to use in place
  of its ``linspace``, refusing a ``steps`` that differs from the plan's.
* :mod:`.mdlm` — MDLM's ``Diffusion._sample`` loop with a per-step ``dt``: :func:`.mdlm.sample`.
* :mod:`.dllm` — :class:`.dllm.PlanAlphaScheduler`, an α(t) scheduler with dllm's interface.
* :mod:`.sglang` — :func:`.sglang.to_sglang`, SGLang's ``--dllm-algorithm LowConfidence`` and
  its YAML, for the schedules a threshold reproduces (SGLang takes no per-step counts).
* :mod:`.vllm` — :func:`.vllm.to_vllm`, vLLM's ``DiffusionConfig``: the forward budget only
  (its one dLLM, DiffusionGemma, accepts by an entropy budget, not by counts).

docs/design-from-data.md ("Exports") shows each in use; tests/exports/test_formats.py runs each
through its sampler's rule as that sampler's source implements it, and
tests/exports/test_diffusers.py runs diffusers' own ``LLaDA2Pipeline``.
"""

from . import formats
from .formats import *  # noqa: F401,F403

__all__ = [*formats.__all__]
