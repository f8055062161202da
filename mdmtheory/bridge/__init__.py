r"""The bridge: the package's quantities by Monte Carlo on any torch masked-diffusion model.

``import mdmtheory`` never imports torch; ``import mdmtheory.bridge`` does (extra
``bridge``: ``pip install 'mdmtheory[bridge]'``). See ``docs/bridge.md``.

* Models: :class:`MaskedModel` (the protocol every estimator reads: mask id, outcome
  vocabulary, Dream's right shift, an optional time input, batching, device/dtype),
  :func:`as_masked_model`, :class:`ExactModel` (the exact conditionals of a law as a torch
  module, the reference), :class:`ModelOracle` (a model seen as a conditional oracle),
  :func:`from_pretrained` (a local Hugging Face folder; never downloads).
* Estimators (seeded, batched, float64 sufficient statistics, ``torch.distributed``-aware):
  :func:`estimate_profile`, :func:`estimate_path_cross_entropy`, :func:`compare_plans`,
  :func:`optimal_schedule_estimate`, :func:`estimate_factorization_error`,
  :func:`estimate_learning_error`, :func:`estimate_dyadic`.
* Corruption beyond masks (:mod:`mdmtheory.bridge.uniform`): :class:`TableDenoiser`,
  :class:`DiffusionGemmaDenoiser`, :func:`ancestral_samples`, :func:`renoise_samples`,
  :func:`output_law_estimate` (docs/theory.md §15).
* Scale-out: :mod:`mdmtheory.bridge.distributed` (``torchrun``).

Submodules written elsewhere (``tiny``, ``train``, ``attention``) load on first access.
"""

from __future__ import annotations

import importlib

try:
    import torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without torch
    raise ImportError(
        "mdmtheory.bridge needs torch: pip install 'mdmtheory[bridge]' "
        f"(Hugging Face models also need 'mdmtheory[hf]'); import failed with: {exc}"
    ) from None

from . import estimators, hf, model, sampling, uniform
from .estimators import *  # noqa: F401,F403
from .hf import *  # noqa: F401,F403
from .model import *  # noqa: F401,F403
from .sampling import *  # noqa: F401,F403
from .uniform import *  # noqa: F401,F403

_LAZY = ("tiny", "train", "attention", "distributed")


def __getattr__(name):
    if name in _LAZY:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'mdmtheory.bridge' has no attribute {name!r}")


__all__ = [*model.__all__, *hf.__all__, *estimators.__all__, *sampling.__all__, *uniform.__all__]
