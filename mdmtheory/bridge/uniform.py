r"""Corruption beyond masks on torch models: the uniform/hybrid ancestral sampler and
DiffusionGemma's renoise sampler by Monte Carlo, checked against
:mod:`mdmtheory.samplers.uniform` (docs/theory.md §15).

* :class:`TableDenoiser`: the exact denoiser of a table as a torch module (the reference):
  ``forward(ids, alpha)`` returns :math:`\log \mu_i(x_{0,i} \mid x_t)` at untouched-probability
  α (``alpha=None``: the time-free denoiser DiffusionGemma's model stands for).
* :func:`ancestral_samples`: the ancestral sampler (uniform, hybrid or masked corruption)
  driven by any module ``model(ids, alpha) -> logits (B, d, K)``.
* :func:`renoise_samples`: DiffusionGemma's entropy-bound renoise loop driven by any
  ``model(canvas, self_conditioning_logits) -> logits (B, d, K)``; the acceptance, renoising
  and temperature steps are transformers' own classes (``EntropyBoundSampler``,
  ``LinearTemperatureScheduleLogitsProcessor`` of
  ``transformers/models/diffusion_gemma/generation_diffusion_gemma.py``, transformers 5.24.0),
  called in the order of ``DiffusionGemmaGenerationMixin._denoising_step``, so that with the
  same seed it draws what ``generate`` draws.
* :class:`DiffusionGemmaDenoiser`: a loaded ``DiffusionGemmaForBlockDiffusion`` seen as that
  model (one canvas after a prompt); :func:`mdmtheory.bridge.from_pretrained` returns one for a
  ``diffusion_gemma`` folder. What its forward computes: logits for the clean token of every
  canvas position given the noisy canvas, the prompt (encoder cache) and the previous step's
  logits (self-conditioning); it is given no time. That is a per-position posterior of a
  time-free uniform-noise denoiser only up to self-conditioning, which an exact denoiser ignores.
* :func:`output_law_estimate`: the output law from samples (frequencies and their standard
  errors) and the plug-in KL(p‖q̂) and TV against an exact table.

The adaptive stopping of ``generate`` (``StableAndConfidentStoppingCriteria``) is off here
(every run takes ``steps`` steps; :meth:`DiffusionGemmaDenoiser.generate` passes
``stability_threshold=steps``, which the history of ``steps`` argmax canvases never meets).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from scipy.special import rel_entr

from .._estimate import Estimate
from .._moved import renamed_keywords
from .._validate import choice_arg, prob_arg, samples_array, seed_arg, size_arg
from ..laws.joint import Joint
from ..samplers import uniform as _u
from ._checks import MAX_DRAWS

__all__ = [
    "TableDenoiser",
    "DiffusionGemmaDenoiser",
    "OutputLawEstimate",
    "ancestral_samples",
    "renoise_samples",
    "output_law_estimate",
]


class TableDenoiser(torch.nn.Module):
    r"""The exact per-position denoiser of a table, as a torch module.

    ``forward(ids, alpha=None, self_conditioning_logits=None)``: ids (B, d) noisy tokens
    (0..K−1, and K the mask when ``mix > 0``); returns float64 logits (B, d, K) =
    :math:`\log \mu_i(x_{0,i} \mid x_t)` (−inf for impossible values; 0 where the noisy state
    has probability 0, a uniform answer never reached by the exact engine's mass). ``alpha``:
    the untouched probability of the forward process (:mod:`mdmtheory.samplers.uniform`),
    or None for the time-free denoiser (``mix`` must then be 0). Self-conditioning is ignored.
    """

    def __init__(self, p, mix=0.0):
        super().__init__()
        self.law = _u._joint(p)
        self.mix = prob_arg(mix, "mix")
        self.d, self.K = self.law.d, self.law.K
        self.canvas_length, self.vocab_size = self.d, self.K
        self._states = _u._states(self.d, self.K, self.mix)
        self._cache: dict = {}

    def _table(self, alpha) -> np.ndarray:
        key = None if alpha is None else float(alpha)
        if key not in self._cache:
            if key is None:
                if self.mix > 0:
                    raise ValueError("alpha: the time-free denoiser is defined for uniform noise (mix = 0) only")
                mu = _u.time_free_marginals(self.law)
            else:
                mu = _u.corruption_marginals(self.law, prob_arg(key, "alpha"), self.mix)
            with np.errstate(divide="ignore"):
                lg = np.log(np.where(np.isnan(mu), 1.0, mu))
            self._cache = {key: lg}  # one time at a time: the samplers ask step by step
        return self._cache[key]

    def forward(self, ids, alpha=None, self_conditioning_logits=None):
        if not isinstance(ids, torch.Tensor) or ids.dtype not in (torch.int64, torch.int32):
            raise ValueError(f"ids: expected a (B, {self.d}) LongTensor of noisy tokens")
        Kp = self.K + (1 if self.mix > 0 else 0)
        if ids.ndim != 2 or ids.shape[1] != self.d or (ids.numel() and (ids.min() < 0 or ids.max() >= Kp)):
            raise ValueError(f"ids: expected (B, {self.d}) tokens in 0..{Kp - 1}, got shape {tuple(ids.shape)}")
        lg = self._table(alpha)
        x = ids.cpu().numpy()
        idx = np.ravel_multi_index(tuple(x.T), (Kp,) * self.d)
        return torch.from_numpy(lg[idx]).to(ids.device)


class DiffusionGemmaDenoiser:
    """A ``DiffusionGemmaForBlockDiffusion`` as the renoise sampler's model: one canvas of
    ``canvas_length`` positions after ``prompt`` (default: the BOS token).

    ``__call__(canvas, self_conditioning_logits)`` runs the model's forward (encoder on the
    prompt, decoder on the canvas, positions as ``generate`` numbers them) and returns its
    float32 logits (B, canvas_length, vocab_size). :meth:`generate` runs the model's own
    ``generate`` (adaptive stopping off) and returns the canvas tokens.
    """

    def __init__(self, model, prompt=None):
        cfg = getattr(model, "config", None)
        if getattr(cfg, "model_type", None) != "diffusion_gemma":
            raise ValueError(f"model: expected a DiffusionGemmaForBlockDiffusion, got {type(model).__name__}")
        self.model = model.eval()
        self.canvas_length = int(cfg.canvas_length)
        self.vocab_size = int(cfg.text_config.vocab_size)
        if prompt is None:
            bos = cfg.text_config.bos_token_id
            prompt = (2 if bos is None else int(bos),)
        ids = np.asarray(prompt)
        if ids.ndim != 1 or ids.size < 1 or not np.issubdtype(ids.dtype, np.integer) or \
                ids.min() < 0 or ids.max() >= self.vocab_size:
            raise ValueError(f"prompt: expected a non-empty sequence of token ids in 0..{self.vocab_size - 1}")
        self.prompt = torch.as_tensor(ids, dtype=torch.long)
        self.d, self.K = self.canvas_length, self.vocab_size

    @property
    def device(self):
        return next(self.model.parameters()).device

    @torch.no_grad()
    def __call__(self, canvas, self_conditioning_logits=None):
        B, P = canvas.shape[0], self.prompt.numel()
        dev = self.device
        if self_conditioning_logits is not None:
            # as transformers' _denoising_step hands them on: on the model's device, in the dtype
            # of the decoder's embeddings (bf16 models differ from generate otherwise)
            emb = self.model.model.decoder.embed_tokens.weight
            self_conditioning_logits = self_conditioning_logits.to(device=dev, dtype=emb.dtype)
        out = self.model(
            input_ids=self.prompt.to(dev).expand(B, -1),
            position_ids=torch.arange(P, device=dev, dtype=torch.int32)[None],
            decoder_input_ids=canvas.to(dev),
            decoder_position_ids=torch.arange(P, P + self.canvas_length, device=dev, dtype=torch.int32)[None],
            self_conditioning_logits=self_conditioning_logits,
        )
        return out.logits

    @torch.no_grad()
    def generate(self, n: int, steps: int, *, seed: int, entropy_bound=0.1, t_min=0.4, t_max=0.8) -> np.ndarray:
        """``model.generate`` on n copies of the prompt, one canvas, ``steps`` denoising steps,
        adaptive stopping off; returns the (n, canvas_length) canvas it answers."""
        from transformers.models.diffusion_gemma.generation_diffusion_gemma import EntropyBoundSamplerConfig

        n = size_arg(n, "n", 1, MAX_DRAWS)
        steps = size_arg(steps, "steps", 1)
        seed = seed_arg(seed)
        bound, t_min, t_max = _u._renoise_args(entropy_bound, t_min, t_max)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            out = self.model.generate(
                self.prompt.to(self.device)[None].expand(n, -1), max_new_tokens=self.canvas_length,
                max_denoising_steps=steps, sampler_config=EntropyBoundSamplerConfig(entropy_bound=bound),
                t_min=t_min, t_max=t_max, stability_threshold=steps, confidence_threshold=1e-300,
                eos_token_id=None, pad_token_id=None, disable_compile=True)
        return out.sequences[:, -self.canvas_length:].cpu().numpy().astype(np.int64)


def _model_dims(model):
    d, K = getattr(model, "canvas_length", None), getattr(model, "vocab_size", None)
    if not callable(model) or not isinstance(d, int) or not isinstance(K, int) or d < 1 or K < 2:
        raise ValueError("model: expected a callable with integer attributes canvas_length (d) and vocab_size (K), "
                         "e.g. a TableDenoiser or a DiffusionGemmaDenoiser")
    return d, K


def _check_logits(logits, n, d, K):
    if not isinstance(logits, torch.Tensor) or tuple(logits.shape) != (n, d, K):
        shape = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits).__name__
        raise ValueError(f"model: expected logits of shape ({n}, {d}, {K}), got {shape}")
    return logits


@torch.no_grad()
def renoise_samples(model, *, n: int, steps: int, seed: int, entropy_bound=0.1, t_min=0.4, t_max=0.8) -> np.ndarray:
    r"""(n, d) answers of DiffusionGemma's entropy-bound renoise loop driven by ``model``
    (module docstring): uniform canvas, ``steps`` steps (``cur_step`` = steps..1), each step
    the model's logits at the current canvas (self-conditioned on the previous step's
    tempered logits), tempered, one draw per position, transformers' ``accept_canvas`` and
    ``renoise_canvas``; the answer is the argmax of the last step's logits. Torch's global RNG
    is seeded with ``seed`` inside a fork (left as it was), drawn in ``generate``'s order.
    Its exact law for a :class:`TableDenoiser`: :func:`mdmtheory.samplers.renoise_law`."""
    from transformers.models.diffusion_gemma.generation_diffusion_gemma import (
        EntropyBoundSampler, EntropyBoundSamplerConfig, LinearTemperatureScheduleLogitsProcessor)

    d, K = _model_dims(model)
    n = size_arg(n, "n", 1, MAX_DRAWS)
    steps = size_arg(steps, "steps", 1)
    seed = seed_arg(seed)
    bound, t_min, t_max = _u._renoise_args(entropy_bound, t_min, t_max)
    sampler = EntropyBoundSampler(EntropyBoundSamplerConfig(entropy_bound=bound), d, K, steps)
    temper = LinearTemperatureScheduleLogitsProcessor(t_min, t_max, steps)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        canvas = sampler.initialize_canvas(n, torch.device("cpu"))
        self_cond, argmax = None, canvas
        for cur in reversed(range(1, steps + 1)):
            logits = _check_logits(model(canvas, self_conditioning_logits=self_cond), n, d, K).cpu()
            processed = temper(None, logits, cur_step=torch.tensor(cur, dtype=torch.int32))
            probs = torch.softmax(processed, dim=-1, dtype=torch.float32)
            drawn = torch.multinomial(probs.reshape(-1, K), num_samples=1).reshape(n, d)
            argmax = torch.argmax(processed, dim=-1)
            accepted = sampler.accept_canvas(canvas, drawn, processed, cur)
            canvas = sampler.renoise_canvas(accepted, cur)
            self_cond = processed
    return argmax.numpy().astype(np.int64)


@torch.no_grad()
@renamed_keywords(schedule="noise")
def ancestral_samples(model, *, n: int, steps: int, seed: int, mix=0.0, noise: str = "linear") -> np.ndarray:
    r"""(n, d) samples of the ancestral corruption sampler driven by ``model(ids, alpha)``
    (logits of the clean token per position, (B, d, K)): the prior (all masks, id K, if
    ``mix > 0``, else uniform), then at each of the ``steps`` times every position drawn
    from :math:`r_i(y \mid x_t) = \sum_{x_0} \mu_i(x_0)\, k_s(y \mid x_0) k_{t|s}(x_{t,i} \mid y)
    / k_t(x_{t,i} \mid x_0)`, μ the model's softmax (:mod:`mdmtheory.samplers.uniform`).
    Its exact law for a :class:`TableDenoiser`: :func:`mdmtheory.samplers.corruption_law`."""
    d, K = _model_dims(model)
    n = size_arg(n, "n", 1, MAX_DRAWS)
    steps = size_arg(steps, "steps", 1)
    seed = seed_arg(seed)
    mix = prob_arg(mix, "mix")
    noise = choice_arg(noise, "noise", _u.CORRUPTION_SCHEDULES)
    alphas = _u.corruption_alphas(steps, noise)
    rng = np.random.default_rng(seed)
    Kp = K + (1 if mix > 0 else 0)
    x = np.full((n, d), K if mix > 0 else 0, dtype=np.int64)
    if mix == 0:
        x = rng.integers(0, K, size=(n, d))
    for k in range(steps, 0, -1):
        at, as_ = float(alphas[k]), float(alphas[k - 1])
        logits = _check_logits(model(torch.from_numpy(x), at), n, d, K)
        mu = torch.softmax(logits.to(torch.float64), dim=-1).cpu().numpy()  # (n, d, K)
        r = np.einsum("nia,niay->niy", mu, _u._reverse_weights(K, at, as_, mix, x))  # weights (n, d, K, K')
        r = r / r.sum(axis=-1, keepdims=True)
        u = rng.random((n, d, 1))
        x = np.minimum((np.cumsum(r, axis=-1) < u).sum(axis=-1), Kp - 1).astype(np.int64)
    return x


@dataclass(frozen=True)
class OutputLawEstimate(Estimate):
    r"""A sampler's output law from n samples, against an exact table p.

    Attributes
    ----------
    law : (K,)*d frequencies :math:`\hat q`.
    stderr : (K,)*d standard errors :math:`\sqrt{\hat q(1-\hat q)/n}`.
    n : the number of samples.
    kl : plug-in :math:`\mathrm{KL}(p \,\|\, \hat q)` (inf where :math:`\hat q` misses p's
        support; biased, consistent).
    tv : plug-in :math:`\mathrm{TV}(p, \hat q)`.
    """

    point = "law"
    law: np.ndarray
    stderr: np.ndarray
    n: int
    kl: float
    tv: float

    def zscores(self, exact) -> np.ndarray:
        r"""Per-outcome :math:`(\hat q - q)/\sqrt{q(1-q)/n}` against an exact law q (a Joint of
        the same shape; cells with q = 0 or 1 give 0 if matched, inf if not)."""
        q = exact.table if isinstance(exact, Joint) else None
        if q is None or q.shape != self.law.shape:
            raise ValueError(f"exact: expected a Joint of shape {self.law.shape}")
        sd = np.sqrt(q * (1 - q) / self.n)
        diff = self.law - q
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(sd > 0, diff / np.where(sd > 0, sd, 1.0), np.where(diff == 0, 0.0, np.inf))
        return z


def output_law_estimate(p, samples) -> OutputLawEstimate:
    """The frequencies of ``samples`` ((n, d) tokens 0..K−1) with their standard errors, and the
    plug-in KL(p‖q̂) and TV(p, q̂) against the exact table ``p``."""
    p = _u._joint(p)
    x = samples_array(samples.cpu().numpy() if isinstance(samples, torch.Tensor) else samples, "samples",
                      d=p.d, K=p.K)
    n = x.shape[0]
    idx = np.ravel_multi_index(tuple(x.T), (p.K,) * p.d)
    q = (np.bincount(idx, minlength=p.K**p.d) / n).reshape((p.K,) * p.d)
    P = p.table
    return OutputLawEstimate(law=q, stderr=np.sqrt(q * (1 - q) / n), n=n, kl=float(rel_entr(P, q).sum()),
                             tv=float(0.5 * np.abs(P - q).sum()))
