"""The dict :func:`mdmtheory.exports.to_dream` exported, inside Dream's ``_sample``.

Dream's ``DreamGenerationMixin._sample`` (generation_utils.py, shipped with the Dream
checkpoints; a copy is in ZHZisZZ/dllm, dllm/pipelines/dream/models/generation_utils.py)
builds ``timesteps = torch.linspace(1, eps, steps + 1, device=x.device)`` and, at step
``i`` of ``range(steps)``, uses ``t, s = timesteps[i], timesteps[i + 1]``; step
``steps - 1`` reveals every mask left. Replace that line by
``timesteps = plan_timesteps(EXPORTED, steps, device=x.device)`` (this module's function; a
name other than ``timesteps``, which ``_sample`` assigns) and call
``diffusion_generate(..., steps=exported["steps"])``.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._moved import renamed_keywords
from .formats import _exported_fields

__all__ = ["plan_timesteps"]


@renamed_keywords(plan="exported")
def plan_timesteps(exported, steps, *, device=None):
    """The ``times`` of ``exported`` (the dict of :func:`mdmtheory.exports.to_dream`) as
    Dream's float32 ``timesteps`` tensor, for ``steps`` steps.

    Raises ``ValueError`` unless ``steps == exported["steps"]``: with more steps Dream indexes
    past the grid (IndexError at ``timesteps[i + 1]``), with fewer its last step flushes the
    remaining masks early and the counts differ from the plan's.
    """
    import torch

    f = _exported_fields(exported, "dream", {"steps": "int", "times": "floats"})
    S = f["steps"]
    if len(f["times"]) != S + 1:
        raise ValueError(f"exported: expected steps + 1 = {S + 1} times, got {len(f['times'])}")
    t = f["times"]
    if not all(0 <= x <= 1 for x in t) or any(a <= b for a, b in zip(t, t[1:])):
        # Dream's grid runs from t = 1 down towards 0 (linspace(1, eps, steps + 1)): issue 38
        raise ValueError(f"exported: times must decrease strictly within [0, 1] (Dream's grid from 1 towards eps), "
                         f"got {list(t)[:8]}; export the plan with mdmtheory.exports.to_dream")
    if isinstance(steps, (bool, np.bool_)) or not isinstance(steps, numbers.Integral) or int(steps) != S:
        raise ValueError(f"steps: Dream must run the plan's {S} steps (its grid has {S + 1} times), got {steps}; "
                         f"call diffusion_generate(..., steps={S})")
    if device is not None and not isinstance(device, (str, torch.device)):
        raise ValueError(f"device: expected None, a device name ('cpu', 'cuda:0') or a torch.device, got {device!r}")
    try:
        return torch.tensor(f["times"], dtype=torch.float32, device=device)
    except RuntimeError as exc:  # an unknown device name
        raise ValueError(f"device: {str(exc).splitlines()[0][:120]}") from None
