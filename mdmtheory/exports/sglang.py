r"""A designed schedule in the form SGLang's diffusion-LLM server takes, where SGLang can run it.

SGLang serves dLLMs with ``--dllm-algorithm NAME`` and ``--dllm-algorithm-config FILE`` ("Must
be a YAML file": ``yaml.safe_load`` of a mapping, whose ``block_size`` overrides the
architecture's; every other key is read by the algorithm class). Read from sglang 0.5.23
(the PyPI wheel, sha256 00b3cd5b…9937): ``sglang/srt/arg_groups/fields/exec_.py`` lines
1129-1142 (the three options; ``--dllm-fdfo`` on by default), ``sglang/srt/dllm/config.py``
lines 53 (LLaDA2's block_size 32), 148-154 (the YAML) and 158-162 (an MoE LLaDA2 checkpoint
refuses a block_size other than its own), ``sglang/srt/dllm/algorithm/*.py`` (the
algorithms), the same rule as sgl-project/sglang ``python/sglang/srt/dllm/algorithm/
low_confidence.py`` at commit 0564b5215b333749d722348c3b3d9b92c3de8c44.

**SGLang takes no per-step counts.** Its algorithms are threshold rules: ``LowConfidence``
(``threshold``, default 0.95) commits, in every step of a block, each masked position whose
greedy token's probability is *strictly* above ``threshold``, else the single most confident
one (low_confidence.py lines 17, 40-48); ``JointThreshold`` / ``JointThresholdInDel``
(``threshold``, ``edit_threshold``, ``max_post_edit_steps``, ``penalty_lambda``) add
token-to-token edits; ``Gemma4Renoise`` is DiffusionGemma's uniform-noise sampler. So a
designed schedule runs exactly only where a threshold reproduces its counts whatever the
model says:

* one token per step — ``threshold: 1.0`` (a probability is never above 1, so every step
  takes the fallback: the most confident mask), S = B steps per block;
* one step per block — ``threshold: 0.0`` (the greedy token's probability is at least
  1/vocabulary > 0 at every mask, so every mask of the block is above it).

:func:`to_sglang` writes those two (the server's options and the YAML), and refuses every
other schedule with the reason: what SGLang lacks is a count per step.

Forwards: the block loop (``DllmAlgorithm._run_sync``, base.py lines 119-133; the FDFO loop
likewise) calls the model once before the first step and once after every step that began
with masks, and ends on a step that finds none: S + 1 forwards per block of S steps.
"""

from __future__ import annotations

from .._moved import renamed_keywords
from ..schedules.plans import Schedule
from .._validate import int_arg as _int_arg
from .formats import _llada_blocks
from .diffusers import _read_tuning

__all__ = ["to_sglang", "tuned_algorithm_config", "SGLANG_VERSION"]

#: The sglang release read (PyPI wheel).
SGLANG_VERSION = "0.5.23"

@renamed_keywords(schedule="plan")
def to_sglang(plan, *, block_length: int | None = None) -> dict:
    """The plan (a Schedule or its sizes) as ``--dllm-algorithm LowConfidence`` with its YAML config, where a
    threshold reproduces it exactly; else ``ValueError`` naming what SGLang lacks.

    ``block_length``: SGLang's ``block_size`` (default d, one block); it must divide d, and
    the schedule is cut at the block boundaries (as :func:`mdmtheory.exports.to_llada` cuts
    it). Every block must then be one token per step (``threshold: 1.0``) or one step
    (``threshold: 0.0``) — the same for all blocks, since the threshold is the server's.

    Returns ``dllm_algorithm``, ``dllm_algorithm_config`` (the YAML's mapping), ``yaml``
    (its text), ``launch`` (the server options, with ``CONFIG.yaml`` the file holding
    ``yaml``), ``block_length``, ``num_blocks``, ``steps_per_block``, ``counts`` (what
    SGLang commits per step in each block: the design), ``forwards_per_block`` (S + 1) and
    ``forwards``, ``engine`` and a ``note``. A prompt that ends inside a block leaves that
    block fewer masks (``threshold: 0.0`` still commits them in one step; ``1.0`` takes
    one per step, fewer steps)."""
    s = plan if isinstance(plan, Schedule) else Schedule(plan)
    d = s.d
    B = d if block_length is None else _int_arg(block_length, "block_length", 1, d)
    if d % B:
        raise ValueError(f"block_length: must divide d={d} (SGLang cuts the response into blocks of block_size), "
                         f"got {B}")
    blocks = _llada_blocks(s, B)
    ones = all(all(k == 1 for k in row) for row in blocks)
    whole = all(row == [B] for row in blocks)
    if not (ones or whole):
        raise ValueError(
            f"plan: SGLang {SGLANG_VERSION} has no per-step counts: its dLLM algorithms (LowConfidence, "
            "JointThreshold, JointThresholdInDel, Gemma4Renoise) commit by a confidence threshold, so it runs a "
            "designed schedule exactly only when every block is one token per step (LowConfidence threshold 1.0) "
            f"or one step (threshold 0.0); this one commits {blocks} in blocks of {B}. Run it with diffusers' "
            "LLaDA2Pipeline (--format diffusers) or LLaDA's generate (--format llada)")
    threshold = 1.0 if ones else 0.0
    S = len(blocks[0])
    cfg = {"threshold": threshold, "block_size": B}
    return {
        "format": "sglang",
        "engine": f"sglang {SGLANG_VERSION}",
        "dllm_algorithm": "LowConfidence",
        "dllm_algorithm_config": cfg,
        "yaml": f"threshold: {threshold}\nblock_size: {B}\n",
        "launch": ["--dllm-algorithm", "LowConfidence", "--dllm-algorithm-config", "CONFIG.yaml"],
        "steps": s.steps,
        "block_length": B,
        "num_blocks": d // B,
        "steps_per_block": S,
        "counts": blocks,
        "forwards_per_block": S + 1,
        "forwards": (S + 1) * (d // B),
        "note": ("threshold 1.0: no probability exceeds it, every step commits the most confident mask; "
                 if threshold == 1.0 else
                 "threshold 0.0: every mask's greedy probability exceeds it, each block is one step; ")
                + "an MoE LLaDA2 checkpoint refuses a block_size other than its own (32)",
    }


#: tuned rule -> (SGLang algorithm, its YAML key, forwards SGLang adds to the tuned rule's)
_TUNED = {"entropy_threshold": ("EntropyThreshold", "threshold", 0),
          "entropy_budget": ("EBSampling", "gamma", 1)}


def tuned_algorithm_config(tuning) -> dict:
    """A tuned parameter (:func:`mdmtheory.optimal.tune`) as SGLang's ``--dllm-algorithm`` and
    its YAML config, for the rules SGLang has: ``"entropy_threshold"`` → ``EntropyThreshold``
    (``threshold``, nats; its forwards are the tuned ones: steps + 1,
    :mod:`mdmtheory.samplers.serving`), ``"entropy_budget"`` → ``EBSampling`` (``gamma``, nats;
    the same prefix rule, whose file adds one final forward: tuned forwards + 1).
    ``block_size`` is the tuned d (one block). Other rules are refused by name: SGLang's
    ``LowConfidence`` commits the greedy token (Fast-dLLM's ``"threshold"`` draws values), and
    the tuned ``"joint_threshold"`` runs at temperature 1 where SGLang's file is greedy. The keys
    are the files' ``config.algorithm_config.get("threshold", 0.95)`` (``entropy_threshold.py``
    at sgl-project/sglang 26eb1bf) and ``.get("gamma", 0.15)`` (``eb_sampling.py`` at 38c8d9b);
    the algorithms read from the sglang 0.5.23 wheel for :func:`to_sglang` do not include them,
    and sglang is not installed here, so the YAML is checked against those readers, not run."""
    t = _read_tuning(tuning, tuple(_TUNED))
    algo, key, extra = _TUNED[t["planner"]]
    v, d = float(t["value"]), int(t["d"])
    if v < 0:
        raise ValueError(f"tuning: SGLang's {algo} takes {key} >= 0 (nats), got {v}")
    cfg = {key: v, "block_size": d}
    return {
        "format": "sglang",
        "engine": f"sglang {SGLANG_VERSION}",
        "dllm_algorithm": algo,
        "dllm_algorithm_config": cfg,
        "yaml": f"{key}: {v!r}\nblock_size: {d}\n",
        "launch": ["--dllm-algorithm", algo, "--dllm-algorithm-config", "CONFIG.yaml"],
        "expected_forwards": float(t["expected_forwards"]) + extra,
        "method": t["method"],
        "note": (f"{key} {v:g} tuned ({t['method']}) on blocks of {d}; forwards per block as SGLang's {algo} loop "
                 "counts them" + (" (the tuned EB-Sampler's steps + 1 final forward)" if extra else "")
                 + "; an MoE LLaDA2 checkpoint refuses a block_size other than its own (32)"),
    }
