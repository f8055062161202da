"""MDLM's sampling loop run on the dict :func:`mdmtheory.exports.to_mdlm` exported.

MDLM's ``Diffusion._sample`` (kuleshov-group/mdlm, diffusion.py) steps through
``linspace(1, eps, num_steps + 1)`` with one constant ``dt = (1 - eps) / num_steps``; every
step calls the configured update with ``(x, t, dt)``, then a final noise-removal pass at
``t = eps`` takes the arg max of the model. A non-uniform schedule needs a different dt at
every step, which that loop cannot take, so :func:`sample` is that loop written with the
exported per-step ``dt``: it calls the same methods of the MDLM object (``_sample_prior``,
``_ddpm_caching_update`` / ``_ddpm_update`` / ``_analytic_update``, ``noise``, ``forward``,
``_denoiser_update``) in the same order, and nothing else changes.

Like MDLM's own entry ``restore_model_and_sample`` (diffusion.py; what its ``main.py``
calls for ``mode=sample_eval``), :func:`sample` samples with the EMA weights and the network
in eval mode (its DiT has dropout 0.1): it stores the weights of ``backbone`` and ``noise``,
copies the EMA in (``ema.store`` / ``ema.copy_to``, when ``diffusion.ema`` is set; main.py
sets it to None for ``eval.disable_ema``), calls ``.eval()`` on both, and afterwards
restores the weights (``ema.restore``) and each module's previous mode (MDLM's entry sets
train mode back unconditionally; the same when called from training).

The same as an edit of ``_sample``: ``timesteps = torch.tensor(exported["times"],
device=self.device)``, ``num_steps = exported["steps"]``, and ``dt = exported["dt"][i]`` as the first
line of the loop body (in place of the constant ``dt``).
"""

from __future__ import annotations

from .._moved import renamed_keywords
from .._validate import int_arg
from .formats import _exported_fields

__all__ = ["plan_steps", "sample"]


@renamed_keywords(plan="exported")
def plan_steps(exported) -> list[tuple[float, float]]:
    """The per-step ``(t, dt)`` pairs of ``exported`` (the dict of :func:`mdmtheory.exports.to_mdlm`),
    checked (decreasing t in (0, 1], 0 < dt <= t)."""
    f = _exported_fields(exported, "mdlm", {"times": "floats", "dt": "floats", "steps": "int", "counts": "ints"})
    times, dts = f["times"], f["dt"]
    if len(dts) != f["steps"] or len(times) != len(dts) + 1:
        raise ValueError(f"exported: expected steps={f['steps']} values of dt and steps + 1 times, "
                         f"got {len(dts)} and {len(times)}")
    if not all(0 < dt <= t <= 1 for t, dt in zip(times, dts)) or any(a <= b for a, b in zip(times, times[1:])):
        raise ValueError("exported: times must decrease from 1 and every dt must lie in (0, t]")
    return list(zip(times[:-1], dts))


@renamed_keywords(plan="exported")
def sample(diffusion, exported):
    """Samples from MDLM's ``Diffusion`` object on the steps of ``exported`` (the dict of
    :func:`mdmtheory.exports.to_mdlm`; one batch of
    ``config.loader.eval_batch_size`` sequences of ``config.model.length`` tokens, as
    ``_sample`` draws), with the EMA weights and in eval mode as ``restore_model_and_sample``
    (module docstring). Step j reveals each remaining mask with probability
    :math:`k_j / (d - C_{j-1})`; the last step reaches s = 0 and reveals the rest."""
    pairs = plan_steps(exported)
    try:  # the object MDLM's Diffusion is, read by what sample uses (issue 38: a float is no model)
        length = diffusion.config.model.length
        diffusion.parameterization
    except AttributeError:
        raise ValueError(f"diffusion: expected MDLM's Diffusion object (with config.model.length and "
                         f"parameterization), got {type(diffusion).__name__}") from None
    length = int_arg(length, "diffusion", 1, hint=" (its config.model.length)")
    if sum(exported["counts"]) != length:  # counts checked by plan_steps
        raise ValueError(f"exported: reveals {sum(exported['counts'])} tokens, the model generates "
                         f"config.model.length={length}; export a schedule with d={length}")
    if diffusion.parameterization == "ar":
        raise ValueError("diffusion: an autoregressive MDLM model has no diffusion steps")
    with _sampling_weights(diffusion):
        return _loop(diffusion, exported, pairs, length)


def _parameters(diffusion):
    import itertools

    return itertools.chain(*(m.parameters() for m in _modules(diffusion)))


def _modules(diffusion):
    """The torch modules MDLM's entry switches: ``backbone`` and ``noise`` (where present)."""
    import torch

    return [m for m in (getattr(diffusion, "backbone", None), getattr(diffusion, "noise", None))
            if isinstance(m, torch.nn.Module)]


class _sampling_weights:
    """EMA weights and eval mode for the duration of a ``with`` block, as MDLM's
    ``restore_model_and_sample`` (kuleshov-group/mdlm diffusion.py) sets them."""

    def __init__(self, diffusion):
        self.diffusion = diffusion

    def __enter__(self):
        d = self.diffusion
        self.ema = getattr(d, "ema", None)
        if self.ema:
            self.ema.store(_parameters(d))
            self.ema.copy_to(_parameters(d))
        self.modes = [(m, m.training) for m in _modules(d)]
        for m, _ in self.modes:
            m.eval()
        return self

    def __exit__(self, *exc):
        if self.ema:
            self.ema.restore(_parameters(self.diffusion))
        for m, mode in self.modes:
            m.train(mode)
        return False


def _loop(diffusion, exported, pairs, length):
    import torch

    device = diffusion.device
    with torch.no_grad():
        x = diffusion._sample_prior(int(diffusion.config.loader.eval_batch_size), length).to(device)
        cached = None
        for t_j, dt in pairs:
            t = torch.full((x.shape[0], 1), t_j, dtype=torch.float32, device=device)
            if diffusion.sampler == "ddpm":
                x = diffusion._ddpm_update(x, t, dt)
            elif diffusion.sampler == "ddpm_cache":
                cached, x_next = diffusion._ddpm_caching_update(x, t, dt, p_x0=cached)
                if diffusion.time_conditioning or not torch.allclose(x_next, x):
                    cached = None  # the cache holds only while nothing changed and t is not an input
                x = x_next
            else:
                x = diffusion._analytic_update(x, t, dt)
        if diffusion.config.sampling.noise_removal:
            t = torch.full((x.shape[0], 1), float(exported["times"][-1]), dtype=torch.float32, device=device)
            if diffusion.sampler == "analytic":
                x = diffusion._denoiser_update(x, t)
            else:
                x = diffusion.forward(x, diffusion.noise(t)[0]).argmax(dim=-1)
    return x
