r"""A card schedule exported in the conventions of the samplers people run.

A schedule :math:`k_1, \dots, k_T` (tokens revealed per step, :math:`\sum_t k_t = d`) with
cumulative counts :math:`C_j = k_1 + \dots + k_j`. Every exporter takes it as ``plan`` (a
:class:`~mdmtheory.Schedule` or its sizes; ``schedule=`` works for one release) and returns
a plain dict (JSON-able), the *exported* dict: the adapters of :mod:`mdmtheory.exports` take
it as ``exported``. docs/design-from-data.md shows where each one plugs in.

* :func:`to_llada` — LLaDA's ``num_transfer_tokens``: integer counts per step for each block
  of ``block_length`` positions (ML-GSAI/LLaDA generate.py; also Fast-dLLM's
  llada/generate.py with ``threshold=None``). Refuses a block length that would cost extra
  forwards.
* :func:`to_dream` — Dream's decreasing time grid :math:`1 = t_0 > \dots > t_S = \varepsilon`
  (the masked fraction, linear schedule α_t = 1 − t), float32-nudged so that the count-based
  algorithms take exactly :math:`k_j`; run it with ``steps = S``.
* :func:`to_mdlm` — MDLM's per-step ``(t, dt)`` pairs (kuleshov-group/mdlm diffusion.py keeps
  one constant dt, so the grid alone is not enough).
* :func:`to_dllm` — the nodes of α(t) (the unmasked fraction) on dllm's step grid t = j/S
  (ZHZisZZ/dllm), for :class:`mdmtheory.exports.dllm.PlanAlphaScheduler`.
* :func:`to_json` — our own form, read back by ``mt.Schedule.from_json`` (key ``sizes``)
  and ``mt.Grid.from_json`` (key ``times``).

tests/exports/test_formats.py runs every export through its sampler's per-step rule as that
sampler's published source implements it.
"""

from __future__ import annotations

import numpy as np

from .._moved import renamed_keywords
from ..schedules.plans import Schedule, schedule_to_grid
from .._validate import float_array as _float_array, int_arg as _int_arg, LIMITS as _LIMITS, real_arg as _real_arg

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


def _sched(plan) -> Schedule:
    return plan if isinstance(plan, Schedule) else Schedule(plan)


def llada_default_counts(n: int, steps: int) -> list[int]:
    """What LLaDA's ``get_num_transfer_tokens`` computes itself for a block of n masks in S
    steps: ⌊n/S⌋ each, the first n mod S steps one more (the remainder front-loaded)."""
    n = _int_arg(n, "n", 1)
    steps = _int_arg(steps, "steps", 1)
    base, rem = divmod(n, steps)
    return [base + (1 if i < rem else 0) for i in range(steps)]


def _llada_blocks(s: Schedule, B: int) -> list[list[int]]:
    """The schedule cut into consecutive blocks of B positions, a step crossing a boundary split
    there (LLaDA finishes a block before it starts the next)."""
    blocks: list[list[int]] = [[] for _ in range(s.d // B)]
    pos = 0
    for k in s.sizes:
        while k > 0:
            b = pos // B
            take = min(k, (b + 1) * B - pos)
            blocks[b].append(take)
            pos += take
            k -= take
    return blocks


@renamed_keywords(schedule="plan")
def to_llada(plan, *, block_length: int | None = None) -> dict:
    r"""LLaDA ``num_transfer_tokens`` per block, for LLaDA's and Fast-dLLM's ``generate``.

    LLaDA's ``generate(model, prompt, steps, gen_length, block_length, ...)`` (ML-GSAI/LLaDA,
    generate.py) asserts ``gen_length % block_length == 0`` and ``steps % num_blocks == 0``,
    runs ``steps // num_blocks`` forwards in every block, finishes a block before the next, and
    at each forward of block b takes the ``num_transfer_tokens[:, i]`` most confident masks of
    that block, with ``num_transfer_tokens = get_num_transfer_tokens(block_mask_index,
    steps_per_block)`` recomputed at the start of each block. Fast-dLLM (NVlabs/Fast-dLLM,
    llada/generate.py) keeps that loop and those counts *only with* ``threshold=None``; with a
    threshold it reveals every mask whose confidence passes it, whatever the counts say.

    With ``block_length = d`` (default; one block, ``gen_length = d``) the counts are the
    schedule's sizes. With ``block_length = B < d`` (B must divide d) the schedule is cut at
    the block boundaries; it is exported only when that costs no extra forward: every
    boundary must be a cumulative count :math:`C_j` and every block must hold the same number
    of steps, ``steps / num_blocks``. Otherwise LLaDA would need split steps or zero-count
    padding steps (each a wasted forward), so this raises ``ValueError`` instead of changing
    the step count.

    Returns ``gen_length``, ``block_length``, ``num_blocks``, ``steps`` (the total, what
    ``generate`` takes), ``steps_per_block``, ``num_transfer_tokens`` (``num_blocks`` rows of
    ``steps_per_block`` counts, each row summing to ``block_length``), ``threshold``
    (``None``: the only Fast-dLLM setting under which the counts hold) and ``llada_default``
    (what LLaDA's own ``get_num_transfer_tokens`` would use: floor, remainder front-loaded).
    :func:`mdmtheory.exports.llada.patch` plugs it into either ``generate``.
    """
    s = _sched(plan)
    d = s.d
    B = d if block_length is None else _int_arg(block_length, "block_length", 1, d)
    if d % B:
        raise ValueError(f"block_length: must divide d={d} (LLaDA needs gen_length % block_length == 0), got {B}")
    nb = d // B
    blocks = _llada_blocks(s, B)
    S = max(len(c) for c in blocks)
    if nb * S != s.steps:
        raise ValueError(
            f"block_length: the {s.steps}-step schedule {list(s.sizes)} does not fit {nb} LLaDA blocks of "
            f"{B} tokens (per-block counts {blocks}): LLaDA runs steps/num_blocks forwards in every block, so this "
            f"plan would need {nb * S} forwards (split or zero-count padding steps) instead of steps={s.steps}. "
            f"It needs steps to be a multiple of num_blocks={nb} and each block's counts to sum to "
            f"block_length={B}; use block_length={d} (one block), or a schedule with steps/num_blocks steps "
            "in every block — or design per block: mdmtheory.optimal.design_blocks / `mdmtheory design --forwards F "
            "--block-length B --format llada`"
        )
    return {
        "format": "llada",
        "gen_length": d,
        "block_length": B,
        "num_blocks": nb,
        "steps": s.steps,
        "steps_per_block": S,
        "num_transfer_tokens": blocks,
        "threshold": None,
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
    per step, everything left at the last step (emulated in ``dtype``, float32 or float64).
    ``times``: the decreasing grid t_0 > ... > t_S > 0 (at most 2**16 + 1 times); ``d``: the
    tokens generated."""
    d = _int_arg(d, "d", 1)
    if not (dtype is np.float32 or dtype is np.float64):
        raise ValueError(f"dtype: expected numpy.float32 or numpy.float64, got {dtype!r}")
    t = _float_array(times, "times", ndim=1, what="(S + 1,) decreasing in (0, 1]")
    if not 2 <= t.size <= _MAX_PLAN_ENTRIES or not np.all(t > 0) or not np.all(np.diff(t) < 0):
        raise ValueError(f"times: expected 2..{_MAX_PLAN_ENTRIES} times decreasing in (0, 1], got {t.size} "
                         "(Dream's grid runs from 1 down to eps > 0)")
    t = t.astype(dtype)
    left, out = d, []
    for j in range(len(t) - 1):
        if j == len(t) - 2:
            k = left
        else:
            k = int(left * (dtype(1) - t[j + 1] / t[j]))
        out.append(k)
        left -= k
    return out


@renamed_keywords(schedule="plan")
def to_dream(plan, *, eps: float = DREAM_EPS) -> dict:
    r"""Dream: the time grid :math:`t_j = 1 - C_j/d` (j < S), :math:`t_S = \varepsilon`.

    Dream's ``DreamGenerationMixin._sample`` (generation_utils.py, shipped with the Dream
    checkpoints; a copy is in ZHZisZZ/dllm, dllm/pipelines/dream/models/generation_utils.py)
    builds ``timesteps = torch.linspace(1, eps, steps + 1)`` and at step ``i < steps`` reads
    ``t, s = timesteps[i], timesteps[i + 1]``; the step ``i = steps - 1`` reveals everything
    left. So the exported ``times`` must be run with ``steps`` equal to the export's ``steps``:
    more steps index past the grid (IndexError), fewer flush the rest early (wrong counts);
    :func:`mdmtheory.exports.dream.timesteps` checks it.

    ``alg='origin'`` reveals each mask with probability :math:`1 - t_{j}/t_{j-1}`, i.e.
    :math:`k_j / (d - C_{j-1})`: exactly :math:`k_j` tokens *in expectation*. The other
    algorithms take ``int(n_masked * (1 - s/t))`` tokens and everything left at the last
    step; in float32 (Dream's dtype) the quotient often rounds just below :math:`k_j` and
    ``int`` truncates it, so each :math:`t_{j+1}` is lowered by the fewest float32 ulps that
    give :math:`k_j` (the times are float32 values, exact in ``torch.tensor(times)``).
    ``counts_from_grid`` is that rule evaluated in float32 and ``exact`` says whether it
    reproduces the counts.
    """
    s = _sched(plan)
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


@renamed_keywords(schedule="plan")
def to_mdlm(plan, *, eps: float = MDLM_EPS) -> dict:
    r"""MDLM: the per-step pairs :math:`(t_j, \Delta t_j)` its update takes.

    MDLM's ``Diffusion._sample`` (kuleshov-group/mdlm, diffusion.py) loops over
    ``timesteps = linspace(1, eps, num_steps + 1)`` with one constant
    ``dt = (1 - eps) / num_steps`` and calls ``_ddpm_caching_update(x, t, dt)`` (or
    ``_ddpm_update``), which keeps a mask from t to ``s = t - dt`` with probability s/t (the
    masked fraction of the log-linear schedule, up to its constant factor 1 − ε). Replacing
    the grid alone keeps the constant dt: the reveal probability becomes dt/t_j, wrong on
    every non-uniform schedule. The step sizes must change with the grid.

    ``times`` is :math:`t_j = 1 - C_j/d` for j < S and :math:`t_S = \varepsilon` (the time of
    MDLM's final noise-removal pass); the :math:`t_j` are float32 values (MDLM's dtype); ``dt[j]`` is
    :math:`t_j - t_{j+1}` for j < S − 1, so step j reveals each of its
    :math:`d - C_{j-1}` masks with probability :math:`k_j / (d - C_{j-1})` — :math:`k_j` in
    expectation — and ``dt[S-1]`` is :math:`t_{S-1}` (s = 0), so the last step reveals every
    mask left and nothing is left to the noise-removal pass.
    :func:`mdmtheory.exports.mdlm.sample` runs MDLM's loop on these pairs.
    """
    s = _sched(plan)
    eps = _real_arg(eps, "eps")
    t = np.asarray(_time_grid(s, eps), dtype=np.float32)
    dt = t[:-1] - t[1:]  # float32 arithmetic, as MDLM computes t - dt
    dt[-1] = t[-2]  # the last step ends at s = 0: every remaining mask is revealed
    return {
        "format": "mdlm",
        "steps": s.steps,
        "times": [float(x) for x in t[:-1]] + [eps],  # float32 values; eps as given (only noise removal reads it)
        "dt": [float(x) for x in dt],
        "counts": list(s.sizes),
        "eps": eps,
    }


def dllm_counts(t, alpha_nodes, d: int) -> list[int]:
    """dllm's rule on a grid: ``round(n_rem * (1 - (1 - α(s)) / (1 - α(t))))``, zero-count
    steps dropped (the last step, α(s) = 1, reveals all that is left). ``t`` and
    ``alpha_nodes``: the nodes of :func:`to_dllm` (as many, at most 2**16 + 1)."""
    d = _int_arg(d, "d", 1)
    t = _float_array(t, "t", ndim=1, what="(S + 1,) from 1 down to 0")
    alpha_nodes = _float_array(alpha_nodes, "alpha_nodes", ndim=1, what="(S + 1,) from 0 up to 1")
    if not 2 <= t.size <= _MAX_PLAN_ENTRIES or alpha_nodes.shape != t.shape:
        raise ValueError(f"alpha_nodes: expected one node per time (2..{_MAX_PLAN_ENTRIES}), got {alpha_nodes.size} "
                         f"for {t.size} times")
    if np.any(alpha_nodes < 0) or np.any(alpha_nodes > 1) or np.any(np.diff(alpha_nodes) <= 0):
        raise ValueError("alpha_nodes: must increase strictly within [0, 1]")
    left, out = d, []
    for j in range(len(t) - 1):
        at, as_ = alpha_nodes[j], alpha_nodes[j + 1]
        frac = 1.0 if as_ >= 1 else 1.0 - (1.0 - as_) / (1.0 - at)
        k = int(round(left * frac))
        if k:
            out.append(k)
        left -= k
    return out


@renamed_keywords(schedule="plan")
def to_dllm(plan) -> dict:
    r"""dllm: the nodes of α (the unmasked fraction) on dllm's step grid :math:`t_j = 1 - j/S`.

    dllm's samplers (ZHZisZZ/dllm, dllm/core/samplers/utils.py ``get_num_transfer_tokens``)
    step t from 1 to 0 on ``t = (S - j)/S`` and reveal
    ``round(n_rem · (1 − scheduler.reverse_mask_prob(s, t)))`` tokens, where
    ``reverse_mask_prob(s, t) = (1 − α(s))/(1 − α(t))`` (dllm/core/schedulers/alpha.py).
    With :math:`\alpha(t_j) = C_j / d` (``alpha_nodes``; α(1) = 0, α(0) = 1) the argument
    of the rounding is :math:`k_j` up to float32 rounding, so the counts are exact.
    :class:`mdmtheory.exports.dllm.PlanAlphaScheduler` is that α as a scheduler
    (piecewise linear between the nodes); run it with ``steps = S`` and one block
    (``block_size >= max_new_tokens = d``). The field is ``alpha_nodes``, not ``alpha``, so
    that it never shadows a scheduler's ``alpha(t)`` method.
    """
    s = _sched(plan)
    S = s.steps
    t = [1.0 - j / S for j in range(S + 1)]
    alpha_nodes = [c / s.d for c in s.cumulative]
    return {"format": "dllm", "steps": S, "max_new_tokens": s.d, "t": t, "alpha_nodes": alpha_nodes,
            "counts": list(s.sizes)}


@renamed_keywords(schedule="plan")
def to_json(plan) -> dict:
    """Our form: ``sizes`` (``mt.Schedule.from_json``) and ``times`` (``mt.Grid.from_json``,
    the reveal-time grid t_j = C_j/d of :func:`mdmtheory.schedules.schedule_to_grid`)."""
    s = _sched(plan)
    return {"format": "json", "steps": s.steps, "sizes": list(s.sizes), "times": list(schedule_to_grid(s).times)}


@renamed_keywords(schedule="plan")
def export(plan, fmt: str = "json", **kw) -> dict:
    """Dispatch on ``fmt`` in :data:`FORMATS` (keyword options go to that exporter)."""
    fns = {"json": to_json, "llada": to_llada, "dream": to_dream, "mdlm": to_mdlm, "dllm": to_dllm}
    if not isinstance(fmt, str) or fmt not in fns:
        raise ValueError(f"format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    return fns[fmt](plan, **kw)



#: Most entries of one list field of an exported dict (a count or a time per step).
_MAX_PLAN_ENTRIES = _LIMITS["steps"] + 1


def _exported_fields(exported, fmt: str, spec: dict) -> dict:
    """The fields of ``exported`` (the dict ``to_<fmt>`` returns), each checked before use.

    ``spec`` maps a key to its kind: ``"int"`` (an integer >= 0, at most the documented limit
    of that name in ``_validate.LIMITS``), ``"floats"`` (a finite 1-d list of reals),
    ``"ints"`` (a list of integers >= 0) or ``"int_rows"`` (a list of such lists). A missing
    key or a bad value raises ``ValueError("exported: ...")`` naming the key: the adapters
    never index the dict with ``exported[key]`` or apply ``int()``/``float()`` to its raw values.
    """
    if not isinstance(exported, dict) or exported.get("format") != fmt:
        raise ValueError(f"exported: expected the dict of mdmtheory.exports.to_{fmt} (format {fmt!r})")
    out = {}
    for key, kind in spec.items():
        if key not in exported:
            raise ValueError(f"exported: the {fmt!r} dict has no {key!r}; pass the dict to_{fmt} returned, unedited")
        v = exported[key]
        try:
            if kind == "int":
                out[key] = _int_arg(v, key, 0)
            elif kind == "floats":
                arr = _float_array(v, key, ndim=1, what="(steps + 1,)")
                if arr.size > _MAX_PLAN_ENTRIES:
                    raise ValueError(f"{key}: {arr.size} entries, beyond {_MAX_PLAN_ENTRIES}")
                out[key] = arr.tolist()
            elif kind in ("ints", "int_rows"):
                rows = v if kind == "int_rows" else [v]
                if not isinstance(rows, (list, tuple)) or len(rows) > _MAX_PLAN_ENTRIES:
                    raise ValueError(f"{key}: expected a list of at most {_MAX_PLAN_ENTRIES} rows, "
                                     f"got {type(v).__name__}")
                checked = []
                for row in rows:
                    if not isinstance(row, (list, tuple)) or len(row) > _MAX_PLAN_ENTRIES:
                        raise ValueError(f"{key}: expected a list of at most {_MAX_PLAN_ENTRIES} integers, "
                                         f"got {type(row).__name__}")
                    checked.append([_int_arg(k, key, 0, _LIMITS["d"]) for k in row])
                out[key] = checked if kind == "int_rows" else checked[0]
            else:  # pragma: no cover - the callers' specs
                raise AssertionError(kind)
        except ValueError as exc:
            raise ValueError(f"exported: {exc}") from None
    return out
