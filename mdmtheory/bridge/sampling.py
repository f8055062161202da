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

:func:`speculative_sample` drives the speculative samplers of
:mod:`mdmtheory.samplers.speculative` (ASSD, Guo & Ermon arXiv 2504.20456; self-speculative
masked diffusion, Campbell et al. arXiv 2510.03929) with the model as drafter and verifier and
counts the model's calls per sample: per iteration one call on the revealed state (the
draft's one-token conditionals) and, when the window W' >= 2, one call on the W' − 1 partial
sequences (revealed, y_1..y_{i−1}), i = 2..W', as one batch (the sequential conditionals the
verifier needs; ASSD's any-subset model computes them in one pass, a masked model in one
batch). For every window W >= 2 this is ASSD's count (its code's ``nfe_count``), so on an
:class:`ExactModel` the law of ``calls`` is ``speculative_run(p, SpeculativeSampler("assd",
W)).forwards`` whatever the scheme; ``forwards`` is the scheme's own count (one pass per
iteration for the self-speculative model, whose causal head a masked model does not have).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._estimate import Record
from .._moved import renamed_keywords
from .._validate import int_arg
from .model import ModelOracle
from ..samplers import simulate
from ..samplers.speculative import SpeculativeSampler

__all__ = ["model_law", "sample", "speculative_sample", "SpeculativeSimulation"]


class _ModelLaw(ModelOracle):
    """ModelOracle with the two methods the samplers' oracle protocol also names."""

    def log_marginal(self, x, revealed):
        return np.zeros(np.shape(x)[0])

    def sample(self, n, rng):
        raise ValueError("law: a model is not a data source; the samplers draw from it through conditionals only")


def model_law(model, d: int):
    """The model as a conditional oracle on sequences of length ``d`` (module docstring)."""
    d = int_arg(d, "d", 1)
    if callable(getattr(model, "check_length", None)):  # issue 38: d against the model's length, before any draw
        model.check_length(d, "d")
    return _ModelLaw(model, d)


def sample(model, d: int, plan=None, planner="random", *, n: int, seed: int):
    """``mdmtheory.samplers.simulate`` with the model's conditionals (module docstring)."""
    return simulate(model_law(model, d), plan, planner, n=n, seed=seed)


@dataclass(frozen=True, eq=False)
class SpeculativeSimulation(Record):
    """:func:`speculative_sample`'s draws: ``samples`` (n, d), ``lost`` (n,), ``forwards`` (n,):
    the scheme's count (``SpeculativeSampler.cost``), ``calls`` (n,): the model calls each sample
    took (module docstring), ``scheme``."""

    samples: np.ndarray
    lost: np.ndarray
    forwards: np.ndarray
    calls: np.ndarray
    scheme: str


@renamed_keywords(sampler="planner")
def speculative_sample(model, d: int, planner=None, *, n: int, seed: int) -> SpeculativeSimulation:
    """n samples of a :class:`~mdmtheory.samplers.SpeculativeSampler` (default ASSD, full
    window) drafted and verified by ``model`` on sequences of length ``d``, with each sample's
    model calls counted (module docstring)."""
    sampler = planner

    if sampler is None:
        sampler = SpeculativeSampler()
    if not isinstance(sampler, SpeculativeSampler):
        raise ValueError(f"planner: expected a mdmtheory.samplers.SpeculativeSampler, got {type(sampler).__name__}")
    sim = sampler.simulate(model_law(model, d), n=n, seed=seed)
    x, lost, forwards, calls = sim.samples, sim.lost, sim.forwards, sim.calls
    return SpeculativeSimulation(samples=x, lost=lost, forwards=forwards, calls=calls, scheme=sampler.scheme)
