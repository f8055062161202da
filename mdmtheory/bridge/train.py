r"""Training a :class:`~mdmtheory.bridge.tiny.TinyMDM`: the MDM loss, or next-token for the AR baseline.

**MDM loss** (MDLM, Sahoo et al. 2024, eq. 10 with the linear schedule α_t = 1 − t; LLaDA,
Nie et al. 2025, eq. 3). Per sequence draw :math:`t \sim U(\epsilon, 1)` (ε = 1e-3 as in
LLaDA's pre-training code), mask each position independently with probability t, and take

.. math::

    \mathcal L = \mathbb E\Bigl[\frac{1}{t\,d} \sum_{i:\ x^t_i = M} -\log q_\theta(x_i \mid x^t)\Bigr],

the continuous-time ELBO (``weighting="elbo"``, the default): :math:`d\,\mathcal L` bounds
:math:`-\log q_\theta(x)`. ``weighting="mean"`` instead averages the cross-entropy over the
masked tokens (no 1/t; lower variance, the same minimizer — the exact conditionals).

**AR loss**: mean next-token cross-entropy :math:`-\frac1d \sum_i \log q_\theta(x_i \mid x_{<i})`.

Seeded: the model's initialization is the caller's; :func:`train` seeds its own
``torch.Generator`` for batches, masks and times. The thread count is the caller's
(``torch.set_num_threads``) unless ``num_threads`` is given.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from .._validate import int_arg as _int_arg
from .._validate import real_arg as _real_arg
from .tiny import TinyMDM

__all__ = ["train", "mdm_loss", "ar_loss", "TrainResult", "EPS_TIME"]

#: Smallest mask fraction drawn (LLaDA's ε).
EPS_TIME = 1e-3


@dataclass(frozen=True)
class TrainResult:
    """``losses``: the training loss every ``log_every`` steps (mean over those steps)."""

    steps: int
    losses: tuple
    log_every: int


def _as_samples(samples, model: TinyMDM) -> torch.Tensor:
    x = torch.as_tensor(np.asarray(samples))
    K, d = model.config.vocab_size, model.config.seq_len
    if x.ndim != 2 or x.shape[1] != d or x.shape[0] < 1:
        raise ValueError(f"samples: expected an integer array of shape (n, {d}), got {tuple(x.shape)}")
    if x.dtype not in (torch.int64, torch.int32, torch.int16, torch.uint8, torch.int8):
        raise ValueError(f"samples: expected integer outcome indices, got dtype {x.dtype}")
    if int(x.min()) < 0 or int(x.max()) >= K:
        raise ValueError(f"samples: outcome indices must lie in 0..{K - 1}, got {int(x.min())}..{int(x.max())}")
    return x.long()


def mdm_loss(model: TinyMDM, x: torch.Tensor, gen: torch.Generator, *, weighting: str = "elbo") -> torch.Tensor:
    """One Monte Carlo draw of the MDM loss on a batch ``x`` (B, d) (module docstring)."""
    B, d = x.shape
    t = EPS_TIME + (1 - EPS_TIME) * torch.rand(B, 1, generator=gen)
    masked = torch.rand(B, d, generator=gen) < t
    ids = torch.where(masked, torch.full_like(x, model.mask_id), x)
    logits = model(ids).logits
    ce = F.cross_entropy(logits.reshape(B * d, -1), x.reshape(-1), reduction="none").view(B, d)
    ce = ce * masked
    if weighting == "elbo":
        return (ce.sum(1) / (t[:, 0] * d)).mean()
    if weighting == "mean":
        return ce.sum() / masked.sum().clamp(min=1)
    raise ValueError(f"weighting: expected 'elbo' or 'mean', got {weighting!r}")


def ar_loss(model: TinyMDM, x: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy of the causal baseline."""
    B, d = x.shape
    logits = model(x).logits
    return F.cross_entropy(logits.reshape(B * d, -1), x.reshape(-1))


def train(
    model: TinyMDM,
    samples,
    *,
    steps: int,
    batch_size: int = 256,
    lr: float = 3e-3,
    seed: int = 0,
    weighting: str = "elbo",
    weight_decay: float = 0.0,
    log_every: int = 50,
    num_threads: int | None = None,
    progress: bool = False,
) -> TrainResult:
    r"""Train in place with AdamW and a cosine learning-rate decay; returns the loss log.

    ``samples`` (n, d) are outcome indices; each step draws ``batch_size`` of them with
    replacement (seeded). The MDM loss for ``causal=False`` models, next-token for the AR
    baseline. Deterministic for a fixed seed, initialization and thread count.
    """
    if not isinstance(model, TinyMDM):
        raise ValueError(f"model: expected a TinyMDM, got {type(model).__name__}")
    steps = _int_arg(steps, "steps", 1)
    batch_size = _int_arg(batch_size, "batch_size", 1)
    seed = _int_arg(seed, "seed", 0)
    log_every = _int_arg(log_every, "log_every", 1)
    lr = _real_arg(lr, "lr")
    if lr <= 0:
        raise ValueError(f"lr: expected a learning rate > 0, got {lr}")
    weight_decay = _real_arg(weight_decay, "weight_decay")
    if weight_decay < 0:
        raise ValueError(f"weight_decay: expected a decay >= 0, got {weight_decay}")
    if weighting not in ("elbo", "mean"):
        raise ValueError(f"weighting: expected 'elbo' or 'mean', got {weighting!r}")
    x_all = _as_samples(samples, model)
    if num_threads is not None:
        torch.set_num_threads(_int_arg(num_threads, "num_threads", 1))
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps, eta_min=lr / 20)
    model.train()
    losses, acc = [], []
    it = range(steps)
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(it, desc="train", leave=False)
    for _ in it:
        idx = torch.randint(0, x_all.shape[0], (batch_size,), generator=gen)
        x = x_all[idx]
        loss = ar_loss(model, x) if model.causal else mdm_loss(model, x, gen, weighting=weighting)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        acc.append(loss.detach().item())
        if len(acc) == log_every:
            losses.append(sum(acc) / len(acc))
            acc = []
    if acc:
        losses.append(sum(acc) / len(acc))
    model.eval()
    return TrainResult(steps=steps, losses=tuple(losses), log_every=log_every)
