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

import torch
import torch.nn.functional as F

from .._estimate import Record
from .._validate import int_arg as _int_arg, real_arg as _real_arg
from ._checks import check_bool as _check_bool, check_choice as _check_choice, int_array as _int_array
from .tiny import TinyMDM

__all__ = ["train", "mdm_loss", "ar_loss", "TrainResult", "EPS_TIME", "MAX_BATCH_TOKENS", "MAX_THREADS", "MAX_LR"]

#: Smallest mask fraction drawn (LLaDA's ε).
EPS_TIME = 1e-3
#: Largest batch of one training step, in tokens (``batch_size`` x d).
MAX_BATCH_TOKENS = 1 << 22
#: Largest ``num_threads``.
MAX_THREADS = 256
#: Largest ``lr`` and ``weight_decay`` (torch's optimizers compute in float32).
MAX_LR = 1e3


@dataclass(frozen=True)
class TrainResult(Record):
    """``losses``: the training loss every ``log_every`` steps (mean over those steps)."""

    steps: int
    losses: tuple
    log_every: int


def _as_samples(samples, model: TinyMDM) -> torch.Tensor:
    K, d = model.config.vocab_size, model.config.seq_len
    x = torch.as_tensor(_int_array(samples, "samples", f"outcome indices (n, {d})"))
    if x.ndim != 2 or x.shape[1] != d or x.shape[0] < 1:
        got = f"sequences of length {x.shape[1]}" if x.ndim == 2 and x.shape[0] else f"shape {tuple(x.shape)}"
        raise ValueError(f"samples: this model reads sequences of d = {d} tokens (its seq_len), got {got}; give an (n, {d}) array")
    if int(x.min()) < 0 or int(x.max()) >= K:
        raise ValueError(f"samples: outcome indices must lie in 0..{K - 1}, got {int(x.min())}..{int(x.max())}")
    return x.long()


def check_batch(model, x) -> None:
    if not isinstance(model, TinyMDM):
        raise ValueError(f"model: expected a TinyMDM, got {type(model).__name__}")
    K, d = model.config.vocab_size, model.config.seq_len
    if not isinstance(x, torch.Tensor) or x.dtype != torch.int64 or x.ndim != 2 or x.shape[1] != d or x.shape[0] < 1:
        got = f"{x.dtype} {tuple(x.shape)}" if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(f"x: expected a non-empty LongTensor (B, {d}) of outcome indices, got {got}")
    if int(x.min()) < 0 or int(x.max()) >= K:
        raise ValueError(f"x: outcome indices must lie in 0..{K - 1}, got {int(x.min())}..{int(x.max())}")


def mdm_loss(model: TinyMDM, x: torch.Tensor, gen: torch.Generator, *, weighting: str = "elbo") -> torch.Tensor:
    """One Monte Carlo draw of the MDM loss on a batch ``x`` (B, d) (module docstring)."""
    check_batch(model, x)
    if not isinstance(gen, torch.Generator):
        raise ValueError(f"gen: expected a torch.Generator, got {type(gen).__name__}")
    weighting = _check_choice(weighting, "weighting", ("elbo", "mean"))
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
    check_batch(model, x)
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

    Limits: ``steps`` <= 2**16, ``batch_size`` x d <= :data:`MAX_BATCH_TOKENS`,
    ``num_threads`` <= :data:`MAX_THREADS`, ``lr`` and ``weight_decay`` <= :data:`MAX_LR`. A loss that becomes NaN or infinite (a learning
    rate too large) stops training with a ``ValueError`` naming ``lr``.
    """
    if not isinstance(model, TinyMDM):
        raise ValueError(f"model: expected a TinyMDM, got {type(model).__name__}")
    steps = _int_arg(steps, "steps", 1)
    d = model.config.seq_len
    batch_size = _int_arg(batch_size, "batch_size", 1, max(1, MAX_BATCH_TOKENS // d),
                          hint=f" (at most {MAX_BATCH_TOKENS} tokens per batch, MAX_BATCH_TOKENS, at d = {d})")
    seed = _int_arg(seed, "seed", 0)
    log_every = _int_arg(log_every, "log_every", 1)
    lr = _real_arg(lr, "lr")
    if not 0 < lr <= MAX_LR:
        raise ValueError(f"lr: expected a learning rate in (0, {MAX_LR:g}] (MAX_LR), got {lr}")
    weight_decay = _real_arg(weight_decay, "weight_decay")
    if not 0 <= weight_decay <= MAX_LR:
        raise ValueError(f"weight_decay: expected a decay in [0, {MAX_LR:g}] (MAX_LR), got {weight_decay}")
    weighting = _check_choice(weighting, "weighting", ("elbo", "mean"))
    progress = _check_bool(progress, "progress")
    x_all = _as_samples(samples, model)
    if num_threads is not None:
        torch.set_num_threads(_int_arg(num_threads, "num_threads", 1, MAX_THREADS))
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
        if not torch.isfinite(loss):
            model.eval()
            raise ValueError(
                f"lr: the training loss became {loss.item()} at step {len(losses) * log_every + len(acc) + 1} "
                f"(a learning rate too large for lr={lr}, or non-finite weights); lower it"
            )
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
