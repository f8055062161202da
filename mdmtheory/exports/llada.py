"""The dict :func:`mdmtheory.exports.to_llada` exported, inside LLaDA's or Fast-dLLM's own ``generate``.

Both ``generate`` functions (ML-GSAI/LLaDA generate.py; NVlabs/Fast-dLLM llada/generate.py,
also ``generate_with_prefix_cache`` and ``generate_with_dual_cache``) compute, at the start of
every block, ``num_transfer_tokens = get_num_transfer_tokens(block_mask_index, steps)`` by a
call to the module-level function of that name, with ``steps`` already divided by the number
of blocks; step i of the block then reveals ``num_transfer_tokens[j, i]`` masks of row j.
:func:`patch` replaces that module global for the duration of a ``with`` block by
:class:`PlanCounts`, whose b-th call returns block b's counts for every row of the batch. No
line of their code is edited, and no argument the block loop overwrites is involved.

Fast-dLLM uses these counts only with ``threshold=None`` (the exported ``threshold`` field).
Its cached loops ``generate_with_prefix_cache`` and ``generate_with_dual_cache`` break on a
plan with one step per block in the version read (NVlabs/Fast-dLLM 24cc59e, llada/generate.py
lines 153-169 and 216-230): after the block's first forward (``num_transfer_tokens[:, 0]``,
the whole block) they enter ``while True`` and read ``num_transfer_tokens[:, i]`` with
``i = 1`` before testing whether the block is full — an IndexError on a (batch, 1) tensor.
(A later version, f6b35ec, tests the block first.) :class:`PlanCounts` refuses such a plan
when one of those two functions calls it; ``generate`` (no cache) runs it.

The checks that need what ``generate`` was called with (``gen_length``; which function
called) read it from the calling frame's arguments, since ``get_num_transfer_tokens`` is
passed only the block's mask and the steps; where no such frame is found they are skipped.
"""

from __future__ import annotations

import contextlib

from .._moved import renamed_keywords
from .._validate import bool_array, int_arg
from .diffusers import _read_tuning
from .formats import _exported_fields

__all__ = ["PlanCounts", "patch", "tuned_generate_kwargs"]


#: Fast-dLLM's cached loops that index num_transfer_tokens[:, 1] before testing the block
#: (NVlabs/Fast-dLLM 24cc59e, llada/generate.py): a plan with one step per block breaks them.
CACHED_LOOPS = ("generate_with_prefix_cache", "generate_with_dual_cache")


def _caller():
    """(function name, gen_length) of the nearest calling frame (up to 4 up) that holds an
    integer ``gen_length`` argument — LLaDA's or Fast-dLLM's ``generate`` — else (None, None)."""
    import inspect

    f = inspect.currentframe()
    try:
        for _ in range(5):
            f = f.f_back if f is not None else None
            if f is None:
                break
            g = f.f_locals.get("gen_length")
            if isinstance(g, int) and not isinstance(g, bool):
                return f.f_code.co_name, g
        return None, None
    finally:
        del f


def _exported_rows(exported) -> tuple[list[list[int]], int, int]:
    f = _exported_fields(exported, "llada",
                     {"num_transfer_tokens": "int_rows", "block_length": "int", "steps_per_block": "int"})
    rows, B, S = f["num_transfer_tokens"], f["block_length"], f["steps_per_block"]
    if not rows or any(len(r) != S or sum(r) != B or min(r) < 0 for r in rows):
        raise ValueError(f"exported: every row of num_transfer_tokens must hold steps_per_block={S} counts summing to "
                         f"block_length={B}, got {rows}")
    return rows, B, S


class PlanCounts:
    """A drop-in for LLaDA's ``get_num_transfer_tokens(mask_index, steps)``: its b-th call
    (modulo ``num_blocks``) returns block b's counts as an int64 tensor (batch, steps).

    Each call checks what it can see: ``steps`` must be ``steps_per_block`` (LLaDA passes
    ``steps // num_blocks``, so call ``generate`` with ``steps = exported["steps"]``), and every
    row must have ``block_length`` masks in the block (``block_length = exported["block_length"]``);
    otherwise it raises ``ValueError`` rather than reveal other counts. ``exported`` is the
    dict of :func:`mdmtheory.exports.to_llada`.
    """

    @renamed_keywords(plan="exported")
    def __init__(self, exported):
        self.rows, self.block_length, self.steps_per_block = _exported_rows(exported)
        self.num_blocks = len(self.rows)
        self.gen_length = self.num_blocks * self.block_length
        self.calls = 0

    def __call__(self, mask_index, steps):
        import torch

        steps = int_arg(steps, "steps", 1)  # inf, 2.5, None, 10**400: refused by name (issue 38)
        if not isinstance(mask_index, torch.Tensor):
            mask_index = torch.as_tensor(bool_array(mask_index, "mask_index", ndim=2))
        if mask_index.ndim != 2 or mask_index.dtype != torch.bool:
            raise ValueError(f"mask_index: expected a (batch, block_length) bool tensor, as LLaDA's generate passes, "
                             f"got shape {tuple(mask_index.shape)}, dtype {mask_index.dtype}")
        name, gen = _caller()
        if gen is not None and gen != self.gen_length:
            what = ("would run the plan again in its extra blocks" if gen % self.gen_length == 0
                    else "does not run the plan")
            raise ValueError(f"gen_length: {name} was called with gen_length={gen}, the plan generates "
                             f"{self.gen_length} ({self.num_blocks} blocks of {self.block_length}) and another length "
                             f"{what}; call it with gen_length={self.gen_length}")
        if name in CACHED_LOOPS and self.steps_per_block == 1:
            raise ValueError(f"exported: one step per block breaks Fast-dLLM's {name} (NVlabs/Fast-dLLM 24cc59e, "
                             "llada/generate.py: its while loop reads num_transfer_tokens[:, 1] before it tests "
                             "the block, an IndexError); run it with Fast-dLLM's generate, or design at least 2 "
                             "steps per block")

        if steps != self.steps_per_block:
            raise ValueError(f"steps: generate ran {steps} steps per block, the plan has {self.steps_per_block}; "
                             f"call generate with steps={self.steps_per_block * self.num_blocks} (the plan's 'steps')")
        if mask_index.shape[-1] != self.block_length:
            raise ValueError(f"block_length: generate used blocks of {mask_index.shape[-1]} positions, the plan has "
                             f"{self.block_length}; call generate with block_length={self.block_length}")
        n = mask_index.sum(dim=1)
        if not bool((n == self.block_length).all()):
            raise ValueError(f"mask_index: the plan reveals {self.block_length} masks per block, the block holds "
                             f"{n.tolist()} (a prompt with mask tokens in the generated region?)")
        row = self.rows[self.calls % self.num_blocks]
        self.calls += 1
        return torch.tensor(row, dtype=torch.int64, device=mask_index.device).expand(mask_index.shape[0], -1).clone()


@renamed_keywords(plan="exported")
@contextlib.contextmanager
def patch(module, exported):
    """Run ``module.generate`` (LLaDA's generate.py or Fast-dLLM's llada/generate.py, imported
    as a module) with the counts of ``exported`` (the dict of :func:`mdmtheory.exports.to_llada`)::

        import generate as llada                     # LLaDA's generate.py
        exported = to_llada(plan, block_length=32)
        with patch(llada, exported):
            out = llada.generate(model, prompt, steps=exported["steps"], gen_length=exported["gen_length"],
                                 block_length=exported["block_length"])   # Fast-dLLM: also threshold=None

    Restores the module's own ``get_num_transfer_tokens`` on exit, and raises ``ValueError``
    at a clean exit if the calls inside did not run whole plans (``gen_length`` other than
    the plan's). Yields the :class:`PlanCounts` in use.
    """
    if not callable(getattr(module, "get_num_transfer_tokens", None)):
        raise ValueError("module: has no get_num_transfer_tokens; pass LLaDA's generate module "
                         "(or Fast-dLLM's llada/generate module)")
    counts = PlanCounts(exported)
    own = module.get_num_transfer_tokens
    module.get_num_transfer_tokens = counts
    try:
        yield counts
    finally:
        module.get_num_transfer_tokens = own
    if counts.calls % counts.num_blocks:
        raise ValueError(f"gen_length: generate ran {counts.calls} blocks, not a multiple of the plan's "
                         f"{counts.num_blocks}; call generate with gen_length={counts.num_blocks * counts.block_length}")


def tuned_generate_kwargs(tuning) -> dict:
    r"""A tuned Fast-dLLM ``"threshold"`` or ``"factor"`` (:func:`mdmtheory.optimal.tune`) as the
    keyword arguments of Fast-dLLM's ``generate`` (NVlabs/Fast-dLLM ``llada/generate.py`` at
    f6b35ec: ``generate(model, prompt, steps, gen_length, block_length, temperature, remasking,
    mask_id, threshold, factor)``; also ``generate_with_prefix_cache`` and
    ``generate_with_dual_cache``): one block of the d tuned positions (``steps = gen_length =
    block_length = d``; with a threshold or a factor the steps only bound the counts' table),
    ``remasking="low_confidence"``, ``temperature=0.0`` (Fast-dLLM's default), and ``threshold=τ``,
    ``factor=None`` or ``threshold=None``, ``factor=f``.

    What carries over and what does not (``exact`` is False): at temperature 0 Fast-dLLM ranks the
    masked positions by the probability of the arg max, as :class:`~mdmtheory.samplers.ThresholdPlanner`
    and :class:`~mdmtheory.samplers.FactorPlanner` do, and runs one forward per step (its ``nfe``,
    the tuned forwards' count); but it commits the arg max where the tuned rule draws the value
    from the conditional (the package's convention for ranked rules, :mod:`mdmtheory.samplers.adaptive`),
    so later steps see other values and the forwards the record states are those of the drawn-value
    rule, not of greedy decoding. (At ``temperature=1`` Fast-dLLM's Gumbel draw is a sample and its
    confidence that sample's probability: sample-then-select, the rule of ``"diffusers_threshold"``
    with ``confidence="untempered"``.) Fast-dLLM is not installed here: these are the keyword
    names of the file as read."""
    t = _read_tuning(tuning, ("threshold", "factor"))
    v, d = float(t["value"]), int(t["d"])
    kw = {"steps": d, "gen_length": d, "block_length": d, "temperature": 0.0, "remasking": "low_confidence",
          "threshold": v if t["planner"] == "threshold" else None,
          "factor": v if t["planner"] == "factor" else None}
    return {
        "format": "fastdllm",
        "generate_kwargs": kw,
        "expected_forwards": float(t["expected_forwards"]),
        "exact": False,
        "method": t["method"],
        "note": (f"{t['parameter']} {v:g} tuned ({t['method']}) for the rule with values drawn from the conditionals "
                 f"({float(t['expected_forwards']):.4g} expected forwards per block of {d}); Fast-dLLM at temperature 0 "
                 "ranks positions the same way but commits the arg max, so its forwards on your model differ"),
    }
