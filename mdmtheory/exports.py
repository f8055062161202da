r"""A card schedule exported in the conventions of the samplers people run.

A schedule :math:`k_1, \dots, k_T` (tokens revealed per step, :math:`\sum_t k_t = d`) with
cumulative counts :math:`C_j = k_1 + \dots + k_j`. Every export is a plain dict (JSON-able);
docs/design-from-data.md shows where each one plugs in.

* :func:`to_llada` — LLaDA's ``num_transfer_tokens``: integer counts per step for each
  block of ``block_length`` positions (LLaDA's semi-autoregressive blocks).
* :func:`to_dream` / :func:`to_mdlm` — a decreasing time grid :math:`1 = t_0 > \dots > t_S`
  (the masked fraction, linear schedule α_t = 1 − t) that reveals the chosen counts in
  expectation, ending at ε; plus the exact counts for samplers that take them.
* :func:`to_dllm` — α(t) (the unmasked fraction) on dllm's step grid t = j/S.
* :func:`to_json` — our own form, read back by ``mt.Schedule.from_json`` (key ``sizes``)
  and ``mt.Grid.from_json`` (key ``times``).

Source of each convention: ECOSYSTEM notes on LLaDA ``get_num_transfer_tokens``, Dream
``diffusion_generate`` (eps=1e-3), MDLM (``linspace(1, 1e-5, T+1)``) and dllm's schedulers,
summarized in docs/design-from-data.md.
"""

from __future__ import annotations

import numpy as np

from ._validate import int_arg as _int_arg
from ._validate import real_arg as _real_arg
from .schedules import Schedule, schedule_to_grid

__all__ = [
    "FORMATS",
    "export",
    "to_llada",
    "llada_default_counts",
    "to_dream",
    "to_mdlm",
    "to_dllm",
    "to_json",
    "dream_counts",
    "dllm_counts",
]

FORMATS = ("json", "llada", "dream", "mdlm", "dllm")
DREAM_EPS = 1e-3
MDLM_EPS = 1e-5


def _sched(schedule) -> Schedule:
    return schedule if isinstance(schedule, Schedule) else Schedule(schedule)


def llada_default_counts(n: int, steps: int) -> list[int]:
    """What LLaDA's ``get_num_transfer_tokens`` computes itself for a block of n masks in S
    steps: ⌊n/S⌋ each, the first n mod S steps one more (the remainder front-loaded)."""
    n = _int_arg(n, "n", 1)
    steps = _int_arg(steps, "steps", 1)
    base, rem = divmod(n, steps)
    return [base + (1 if i < rem else 0) for i in range(steps)]


def to_llada(schedule, *, block_length: int | None = None) -> dict:
    r"""LLaDA ``num_transfer_tokens`` per block.

    With ``block_length = d`` (default; one block, ``gen_length = d``) the counts are the
    schedule's sizes. With ``block_length = B < d`` (B must divide d) the global schedule is
    cut into LLaDA's sequential blocks: steps are taken in order and a step that crosses a
    block boundary is split there (LLaDA finishes a block before starting the next). LLaDA
    runs the same number of steps in every block, so shorter blocks are padded with
    zero-count steps at the end (a zero-count step is a wasted forward pass, nothing else).
    Every block's counts sum to B. ``llada_default`` is what LLaDA would use itself with the
    same number of steps per block (floor, remainder front-loaded).
    """
    s = _sched(schedule)
    d = s.d
    B = d if block_length is None else _int_arg(block_length, "block_length", 1, d)
    if d % B:
        raise ValueError(f"block_length: must divide d={d} (LLaDA needs gen_length % block_length == 0), got {B}")
    blocks: list[list[int]] = [[] for _ in range(d // B)]
    pos = 0
    for k in s.sizes:
        while k > 0:
            b = pos // B
            take = min(k, (b + 1) * B - pos)
            blocks[b].append(take)
            pos += take
            k -= take
    S = max(len(c) for c in blocks)
    padded = [c + [0] * (S - len(c)) for c in blocks]
    return {
        "format": "llada",
        "gen_length": d,
        "block_length": B,
        "num_blocks": d // B,
        "steps": S * (d // B),
        "steps_per_block": S,
        "num_transfer_tokens": padded,
        "llada_default": [llada_default_counts(B, S) for _ in blocks],
        "rounding": "exact integer counts (no rounding); LLaDA itself floors and front-loads the remainder",
    }


def _time_grid(s: Schedule, eps: float) -> list[float]:
    """t_j = 1 - C_j/d for j < S, t_S = eps: masked fraction after step j (linear alpha)."""
    d = s.d
    cum = np.asarray(s.cumulative, dtype=np.float64)
    if not 0 < eps < 1 / d:
        raise ValueError(f"eps: must lie in (0, 1/d) = (0, {1 / d:.3g}) so the grid stays decreasing, got {eps}")
    t = 1.0 - cum / d
    t[-1] = eps
    return [float(x) for x in t]


def _dream_grid(s: Schedule, eps: float) -> list[float]:
    """:func:`_time_grid` in float32 (Dream's dtype), each t_{j+1} lowered by the fewest ulps
    that make ``int(n_masked (1 - t_{j+1}/t_j))`` give k_j (the exact quotient k_j/n_masked
    rounds below k_j about half the time, and ``int`` then truncates to k_j − 1). The
    expected counts of ``alg='origin'`` move by ~1e-7 tokens."""
    t = [np.float32(x) for x in _time_grid(s, eps)]
    left = s.d
    for j, k in enumerate(s.sizes[:-1]):  # the last step flushes whatever is left
        tn = t[j + 1]
        for _ in range(64):
            if int(left * (np.float32(1) - tn / t[j])) >= k or tn <= t[-1]:
                break
            tn = np.nextafter(tn, np.float32(0))
        if t[-1] < tn:
            t[j + 1] = tn
        left -= k
    return [float(x) for x in t[:-1]] + [eps]  # t_S = eps as given (the last step flushes)


def dream_counts(times, d: int, dtype=np.float64) -> list[int]:
    """Counts Dream's non-``origin`` algorithms take on a grid: ``int(n_masked (1 - s/t))``
    per step, everything left at the last step (emulated in ``dtype``)."""
    t = np.asarray(times, dtype=dtype)
    left, out = d, []
    for j in range(len(t) - 1):
        if j == len(t) - 2:
            k = left
        else:
            k = int(left * (dtype(1) - t[j + 1] / t[j]))
        out.append(k)
        left -= k
    return out


def to_dream(schedule, *, eps: float = DREAM_EPS) -> dict:
    r"""Dream: the time grid :math:`t_j = 1 - C_j/d` (j < S), :math:`t_S = \varepsilon`.

    ``alg='origin'`` reveals each mask with probability :math:`1 - t_{j}/t_{j-1}`, i.e.
    :math:`k_j / (d - C_{j-1})`: exactly :math:`k_j` tokens *in expectation*. The other
    algorithms take ``int(n_masked * (1 - s/t))`` tokens and everything left at the last
    step; in float32 (Dream's dtype) the quotient often rounds just below :math:`k_j` and
    ``int`` truncates it, so each :math:`t_{j+1}` is lowered by the fewest float32 ulps that
    give :math:`k_j` (the times are float32 values, exact in ``torch.tensor(times)``).
    ``counts_from_grid`` is that rule evaluated in float32 and ``exact`` says whether it
    reproduces the counts — where not, pass ``counts`` instead of the grid.
    """
    s = _sched(schedule)
    eps = _real_arg(eps, "eps")
    times = _dream_grid(s, eps)
    got = dream_counts(times, s.d, np.float32)
    return {
        "format": "dream",
        "steps": s.steps,
        "times": times,
        "counts": list(s.sizes),
        "counts_from_grid": got,
        "exact": got == list(s.sizes),
        "eps": eps,
    }


def to_mdlm(schedule, *, eps: float = MDLM_EPS) -> dict:
    r"""MDLM: the same decreasing grid (masked fraction, log-linear noise means α_t = 1 − t
    up to ε) ending at ε = 1e-5; a mask is revealed between t and s with probability
    (t − s)/t, so step j reveals :math:`k_j` in expectation. MDLM does not take counts."""
    s = _sched(schedule)
    eps = _real_arg(eps, "eps")
    return {"format": "mdlm", "steps": s.steps, "times": _time_grid(s, eps), "counts": list(s.sizes), "eps": eps}


def dllm_counts(t, alpha, d: int) -> list[int]:
    """dllm's rule on a grid: ``round(n_rem * (1 - (1 - α(s)) / (1 - α(t))))``, zero-count
    steps dropped (the last step, α(s) = 1, reveals all that is left)."""
    left, out = d, []
    for j in range(len(t) - 1):
        at, as_ = alpha[j], alpha[j + 1]
        frac = 1.0 if as_ >= 1 else 1.0 - (1.0 - as_) / (1.0 - at)
        k = int(round(left * frac))
        if k:
            out.append(k)
        left -= k
    return out


def to_dllm(schedule) -> dict:
    r"""dllm: α on its step grid :math:`t_j = 1 - j/S` (sampling runs t from 1 to 0):
    :math:`\alpha(t_j) = C_j / d` (the unmasked fraction; α(1) = 0, α(0) = 1). dllm's
    rounding ``round(n_rem · (1 − (1 − α(s))/(1 − α(t))))`` gives back exactly
    :math:`k_j` (the argument is :math:`k_j` up to rounding). Use it as a tabulated
    scheduler (piecewise-linear α between the nodes)."""
    s = _sched(schedule)
    S = s.steps
    t = [1.0 - j / S for j in range(S + 1)]
    alpha = [c / s.d for c in s.cumulative]
    return {"format": "dllm", "steps": S, "t": t, "alpha": alpha, "counts": list(s.sizes)}


def to_json(schedule) -> dict:
    """Our form: ``sizes`` (``mt.Schedule.from_json``) and ``times`` (``mt.Grid.from_json``,
    the reveal-time grid t_j = C_j/d of :func:`mdmtheory.schedules.schedule_to_grid`)."""
    s = _sched(schedule)
    return {"format": "json", "steps": s.steps, "sizes": list(s.sizes), "times": list(schedule_to_grid(s).times)}


def export(schedule, fmt: str = "json", **kw) -> dict:
    """Dispatch on ``fmt`` in :data:`FORMATS` (keyword options go to that exporter)."""
    fns = {"json": to_json, "llada": to_llada, "dream": to_dream, "mdlm": to_mdlm, "dllm": to_dllm}
    if fmt not in fns:
        raise ValueError(f"format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    return fns[fmt](schedule, **kw)

