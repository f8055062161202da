r"""Run any sampler of :mod:`mdmtheory.samplers` on a torch model: the model as the oracle.

:func:`model_law` wraps a model (a :class:`~mdmtheory.bridge.MaskedModel`, a TinyMDM, a
Hugging Face folder loaded with :func:`~mdmtheory.bridge.from_pretrained`, an
:class:`~mdmtheory.bridge.ExactModel`) into the conditional-oracle interface the Monte Carlo
samplers read: ``conditionals(x, revealed)`` are the model's one-position predictions.
``log_marginal`` is 0 (a softmax gives every revealed prefix positive probability, so no
sample is lost — unlike the exact law, an exact model with zeros excepted: see below), and
``sample`` is refused (a model is not a data source).

:func:`sample` then runs :func:`mdmtheory.samplers.simulate` — random order, the adaptive
planners, Bernoulli grids, random step sizes, sample-then-select — and the revising samplers
take the same object (``RemaskingSampler(...).simulate(model_law(model, d), n=, seed=)``).
On an :class:`ExactModel` of a full-support law the samples follow the exact sampler law
(tested against it by z-score).
"""

from __future__ import annotations

import numpy as np

from .._validate import int_arg
from .model import ModelOracle

__all__ = ["model_law", "sample"]


class _ModelLaw(ModelOracle):
    """ModelOracle with the two methods the samplers' oracle protocol also names."""

    def log_marginal(self, x, revealed):
        return np.zeros(np.shape(x)[0])

    def sample(self, n, rng):
        raise ValueError("law: a model is not a data source; the samplers draw from it through conditionals only")


def model_law(model, d: int):
    """The model as a conditional oracle on sequences of length ``d`` (module docstring)."""
    return _ModelLaw(model, int_arg(d, "d", 1))


def sample(model, d: int, plan=None, planner="random", *, n: int, seed: int):
    """``mdmtheory.samplers.simulate`` with the model's conditionals (module docstring)."""
    from ..samplers import simulate

    return simulate(model_law(model, d), plan, planner, n=n, seed=seed)
