r"""An α(t) scheduler with dllm's interface, through the nodes of the dict
:func:`mdmtheory.exports.to_dllm` exported.

dllm's schedulers (ZHZisZZ/dllm, dllm/core/schedulers/alpha.py, ``BaseAlphaScheduler``) give
α(t), the unmasked fraction at diffusion time t ∈ [0, 1] (α(1) = 0, α(0) = 1), through two
hooks, ``_alpha(t)`` and ``_alpha_derivative(t)``, on float32 tensors; the public methods
``alpha``, ``alpha_derivative``, ``__call__``, ``reverse_mask_prob(s, t) = (1 − α(s))/(1 −
α(t))`` and ``weight(t) = −α'(t)/(1 − α(t) + 1e-6)`` are built on them. dllm's samplers use
only ``reverse_mask_prob`` (dllm/core/samplers/utils.py, ``get_num_transfer_tokens``).

:class:`PlanAlphaScheduler` implements the same methods and hooks, our own code, with α
linear between the plan's nodes :math:`(t_j, C_j/d)`, :math:`t_j = 1 - j/S`, so that dllm's
count rule on its grid t = j/S gives back the schedule's sizes. It needs neither dllm nor
torch to import; with dllm installed, ``class S(PlanAlphaScheduler, BaseAlphaScheduler):
pass`` is a registered dllm scheduler with the same behaviour (our ``__init__`` comes first).
"""

from __future__ import annotations

import numpy as np

from .._moved import renamed_keywords
from .._validate import float_array
from .formats import _exported_fields

__all__ = ["PlanAlphaScheduler"]


def _as_float32(x, name: str = "t"):
    """(float64 numpy array of x's float32 values, a function mapping a float64 result back to
    x's kind: float, numpy array, or torch tensor on x's device). Text, None, bools, ragged or
    non-real input: ``ValueError`` naming ``name``."""
    if type(x).__module__.startswith("torch"):
        import torch

        x32 = torch.as_tensor(x, dtype=torch.float32)
        return x32.detach().cpu().numpy().astype(np.float64), (
            lambda v: torch.as_tensor(np.asarray(v, dtype=np.float32), device=x32.device))

    # real numbers only (range checked by the callers); times lie in [0, 1], where float64 holds x exactly
    arr = float_array(x, name, finite=False).astype(np.float32).astype(np.float64)
    if isinstance(x, (float, int, np.floating, np.integer)) and not isinstance(x, bool):
        return arr, lambda v: float(np.float32(v))
    return arr, lambda v: np.asarray(v, dtype=np.float32)


class PlanAlphaScheduler:
    r"""α(t) piecewise linear through nodes :math:`(t_j, \alpha_j)`, :math:`1 = t_0 > \dots >
    t_S = 0`, :math:`0 = \alpha_0 < \dots < \alpha_S = 1`; α' is the slope of the segment
    :math:`(t_{j+1}, t_j]` holding t (the first segment's at t = 0).

    Arguments are evaluated in float32, as dllm does; a Python float gives a float, an array
    or torch tensor one of the same kind (float32). Times outside [0, 1] raise ValueError.
    """

    def __init__(self, t, alpha_nodes):
        t = float_array(t, "t", ndim=1, what="(S + 1,) from 1 down to 0")
        a = float_array(alpha_nodes, "alpha_nodes", ndim=1, what="(S + 1,) from 0 up to 1")
        if t.shape != a.shape or t.size < 2:  # both 1-d (float_array's ndim)
            raise ValueError(f"t: expected as many nodes as alpha_nodes (at least 2), got {t.shape} and {a.shape}")
        if not (t[0] == 1 and t[-1] == 0 and np.all(np.diff(t) < 0)):
            raise ValueError("t: nodes must decrease strictly from 1 to 0 (dllm samples from t = 1 to t = 0)")
        if not (a[0] == 0 and a[-1] == 1 and np.all(np.diff(a) > 0)):
            raise ValueError("alpha_nodes: must increase strictly from alpha(1) = 0 to alpha(0) = 1")
        self._t = t[::-1].copy()  # increasing, for np.interp
        self._a = a[::-1].copy()

    @classmethod
    @renamed_keywords(plan="exported")
    def from_plan(cls, exported) -> "PlanAlphaScheduler":
        """The scheduler of ``exported``, the dict of :func:`mdmtheory.exports.to_dllm`."""
        f = _exported_fields(exported, "dllm", {"t": "floats", "alpha_nodes": "floats"})
        return cls(f["t"], f["alpha_nodes"])

    def __repr__(self) -> str:
        return f"PlanAlphaScheduler(steps={self._t.size - 1})"

    # -- dllm's hooks ------------------------------------------------------------------------
    def _alpha(self, t):
        v, back = _as_float32(t)
        return back(np.interp(v, self._t, self._a))

    def _alpha_derivative(self, t):
        v, back = _as_float32(t)
        j = np.clip(np.searchsorted(self._t, v, side="left"), 1, self._t.size - 1)
        slope = (self._a[j] - self._a[j - 1]) / (self._t[j] - self._t[j - 1])
        return back(slope)

    # -- dllm's public methods ---------------------------------------------------------------
    @staticmethod
    def _check(t, name):
        v, _ = _as_float32(t)
        if not np.all((0 <= v) & (v <= 1)):
            raise ValueError(f"{name}: diffusion times lie in [0, 1], got {t}")

    def __call__(self, t):
        return self.alpha(t)

    def alpha(self, t):
        self._check(t, "t")
        return self._alpha(t)

    def alpha_derivative(self, t):
        self._check(t, "t")
        return self._alpha_derivative(t)

    def reverse_mask_prob(self, s, t):
        """(1 − α(s)) / (1 − α(t)): the chance that a mask at time t is still masked at s < t."""
        sv, _ = _as_float32(s, "s")
        tv, back = _as_float32(t)
        if sv.shape != tv.shape:
            raise ValueError(f"s: expected the shape of t {tv.shape}, got {sv.shape}")
        if not (np.all((0 <= sv) & (sv < 1) & (0 < tv) & (tv <= 1)) and np.all(sv < tv)):
            raise ValueError(f"s: need 0 <= s < t <= 1 elementwise, got s={s}, t={t}")
        one = np.float32(1)
        num = one - np.asarray(self._alpha(s), dtype=np.float32)
        den = one - np.asarray(self._alpha(t), dtype=np.float32)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = num / den  # float32 arithmetic, as dllm computes it
        tiny = den == 0
        if np.any(tiny):
            # alpha(t) rounds to 1 in float32 (t within float32 rounding of 0): dllm's 0/0 is
            # NaN; the ratio of the mask fractions 1 - alpha, read off the nodes in float64
            # (exact near t = 0), is the value it rounds away
            m = lambda x: np.interp(x, self._t, 1.0 - self._a)  # noqa: E731
            out = np.where(tiny, (m(sv) / m(tv)).astype(np.float32), out)
        return back(out)

    def weight(self, t):
        """−α'(t) / (1 − α(t) + 1e-6), dllm's loss weight."""
        self._check(t, "t")
        a = np.asarray(self._alpha(t), dtype=np.float32)
        da = np.asarray(self._alpha_derivative(t), dtype=np.float32)
        _, back = _as_float32(t)
        return back(-da / (np.float32(1) - a + np.float32(1e-6)))
