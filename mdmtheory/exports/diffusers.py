r"""A designed schedule as a ``diffusers.BlockRefinementScheduler`` (``LLaDA2Pipeline``).

diffusers (≥ 0.42) generates block by block: ``LLaDA2Pipeline`` cuts prompt + response into
blocks of ``block_length`` absolute positions, skips the blocks made only of prompt, and
runs up to ``num_inference_steps`` forwards in every other block. At step s of a block its
scheduler commits ``num_transfer_tokens[s]`` masked positions — the top ones by the
probability of their *sampled* token (sample-then-select), or every position above
``threshold`` when at least that many qualify. ``BlockRefinementScheduler`` takes those
counts from its method ``get_num_transfer_tokens`` (an even split, remainder front-loaded),
the same for every block. (Read from diffusers' ``schedulers/scheduling_block_refinement.py``
and ``pipelines/llada2/pipeline_llada2.py``, version 0.42.1.)

:func:`block_refinement_scheduler` returns a subclass whose counts are the designed ones:
one list for every block, or one list per generated block (the block in progress is
recognised by the pipeline's ``timestep`` returning to 0, which happens once per block).

For the committed counts to be *exactly* the designed ones, run the pipeline with

* ``threshold=1.0`` — the pipeline passes its own ``threshold`` (default 0.7) to every
  ``scheduler.step``, overriding the scheduler's config; a probability never exceeds 1, so
  each step then commits exactly its count;
* ``num_inference_steps=len(counts_of_a_block)`` and ``block_length`` equal to the design's
  (the pipeline lowers ``num_inference_steps`` to ``gen_length // minimal_topk``; keep
  ``minimal_topk=1``);
* ``gen_length`` a multiple of ``block_length`` (one list per block: their number times
  ``block_length``; the pipeline's default is 2,048): the pipeline pads the last block past
  the response and would spend part of that block's counts there, cut from the output;
* a prompt length that is a multiple of ``block_length`` (a block that holds the end of the
  prompt has fewer masks than ``block_length``);
* ``editing_threshold=None`` to keep committed tokens (LLaDA2.1 editing replaces committed
  tokens; it does not change how many masks each step commits, but adds post-steps), and
  ``eos_early_stop=False`` (a row that emitted EOS is frozen and commits nothing more).

The scheduler refuses the wrong ``gen_length`` and prompt length, naming the value to pass:
diffusers passes it neither, so it reads both from the calling ``LLaDA2Pipeline.__call__``
at ``set_timesteps`` (skipped when called otherwise).

A lower ``threshold`` keeps diffusers' rule on top: the counts become floors per step, and a
block whose masks run out at step F < S costs F + 1 forwards, not F (the block loop calls the
model once more and ends on finding no mask; :class:`mdmtheory.samplers.SelectRun`).
With ``threshold=1.0`` every block costs exactly S forwards.

Saved pipelines: ``ScheduledBlockRefinementScheduler`` is an attribute of this module (built
on first access, module ``__getattr__``), the name ``save_pretrained`` writes in
``model_index.json``; ``LLaDA2Pipeline.from_pretrained(DIR, tokenizer=...)`` reads it back with
its counts once this module is imported (diffusers looks such a library up in
``sys.modules`` only). diffusers' own ``BlockRefinementScheduler.from_pretrained`` of the
folder ignores the counts (a logged warning) and commits its even split:
:func:`check_scheduler` says so for a folder, :func:`load_scheduler` reads either folder.
(tests/exports/test_diffusers_roundtrip.py)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from .._validate import prob_arg, int_arg, path_arg
from .formats import llada_default_counts

__all__ = ["block_refinement_scheduler", "check_counts", "scheduler_config", "save_scheduler", "load_scheduler",
           "check_scheduler", "SchedulerCheck", "tuned_threshold_call"]


def _diffusers():
    try:
        import diffusers  # noqa: F401
        import torch  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the test extra installs both
        raise ImportError(
            "mdmtheory.exports.diffusers needs diffusers and torch: pip install 'mdmtheory[pipelines]'"
        ) from exc


def check_counts(counts, *, block_length: int | None = None) -> tuple[tuple[int, ...], ...]:
    """Validate ``counts`` (one list, or one list per block) and return one tuple per block.

    Every list has the same length S (the pipeline runs S forwards in every block), entries
    are integers ≥ 1 (a zero is a forward that commits nothing) and each list sums to
    ``block_length`` (default: the sum of the first list).
    """
    if isinstance(counts, (str, bytes, bytearray, dict, set, frozenset)) or not hasattr(counts, "__iter__"):
        # a dict iterates its keys and a set has no order: neither is a list of counts (issue 38)
        raise ValueError(f"counts: expected a list of per-step counts or one list per block, got {type(counts).__name__}"
                         f" {counts!r:.60}")
    try:
        rows = list(counts)
    except TypeError:
        raise ValueError(f"counts: expected a list of per-step counts or one list per block, got {counts!r}") from None
    if not rows:
        raise ValueError("counts: empty; give the tokens committed at each step, e.g. [4, 2, 1, 1]")
    nested = all(hasattr(r, "__iter__") for r in rows)
    if not nested and any(hasattr(r, "__iter__") for r in rows):
        raise ValueError("counts: mixes numbers and lists; give one list, or one list per block")
    if nested and any(isinstance(r, (str, bytes, bytearray, dict, set, frozenset)) for r in rows):
        raise ValueError("counts: a block's counts must be a list (not text, a dict or a set)")
    blocks = [list(r) for r in rows] if nested else [rows]
    for b, row in enumerate(blocks):
        for k in row:
            if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
                raise ValueError(f"counts: block {b} has {k!r}; counts are integers")
            if int(k) < 1:
                raise ValueError(f"counts: block {b} has a step committing {k} tokens; every step must commit >= 1 "
                                 "(a zero-count step is a forward that reveals nothing)")
    blocks = [tuple(int(k) for k in row) for row in blocks]
    S = len(blocks[0])
    if S == 0 or any(len(r) != S for r in blocks):
        raise ValueError(f"counts: every block needs the same number of steps (the pipeline runs "
                         f"num_inference_steps in each), got lengths {[len(r) for r in blocks]}")
    B = sum(blocks[0]) if block_length is None else block_length
    if isinstance(B, (bool, np.bool_)) or not isinstance(B, (int, np.integer)) or B < 1:
        raise ValueError(f"block_length: expected an integer >= 1, got {block_length!r}")
    bad = [b for b, r in enumerate(blocks) if sum(r) != B]
    if bad:
        raise ValueError(f"counts: block {bad[0]} commits {sum(blocks[bad[0]])} tokens, expected block_length={B}")
    return tuple(blocks)


def _pipeline_call_args():
    """``gen_length`` and ``prompt_length`` of the ``LLaDA2Pipeline.__call__`` that is calling
    ``scheduler.set_timesteps`` (diffusers 0.42.1 computes both before that call and passes
    neither to the scheduler), or None when the caller is not such a frame."""
    import inspect

    f = inspect.currentframe()
    try:
        for _ in range(4):
            f = f.f_back if f is not None else None
            if f is None:
                return None
            loc = f.f_locals
            if f.f_code.co_name == "__call__" and "gen_length" in loc and "prompt_length" in loc:
                gen, prompt = loc["gen_length"], loc["prompt_length"]
                if isinstance(gen, int) and isinstance(prompt, int):
                    return {"gen_length": gen, "prompt_length": prompt}
                return None
        return None
    finally:
        del f


@lru_cache(maxsize=None)
def _scheduler_class():
    _diffusers()
    import torch
    from diffusers import BlockRefinementScheduler
    from diffusers.configuration_utils import register_to_config

    class ScheduledBlockRefinementScheduler(BlockRefinementScheduler):
        """``BlockRefinementScheduler`` with designed per-step counts (mdmtheory)."""

        @register_to_config
        def __init__(self, counts=((32,),), block_length: int = 32, num_inference_steps: int = 1,
                     threshold: float = 1.0, editing_threshold=None, minimal_topk: int = 1):
            super().__init__(block_length=block_length, num_inference_steps=num_inference_steps,
                             threshold=threshold, editing_threshold=editing_threshold, minimal_topk=minimal_topk)
            self._counts = check_counts(counts, block_length=block_length)
            self._block = -1

        def get_num_transfer_tokens(self, block_length: int, num_inference_steps: int):
            S = len(self._counts[0])
            if block_length != self.config.block_length:
                raise ValueError(f"block_length: the pipeline runs blocks of {block_length}, the design has "
                                 f"block_length={self.config.block_length}; pass block_length={self.config.block_length}")
            if num_inference_steps != S:
                raise ValueError(f"num_inference_steps: the pipeline runs {num_inference_steps} steps per block, the "
                                 f"design has {S}; pass num_inference_steps={S} — or, if you did, the pipeline "
                                 f"lowered it to gen_length // minimal_topk: pass minimal_topk=1 and gen_length a "
                                 f"multiple of block_length={block_length} (at least {block_length} >= {S})")
            return torch.tensor(self._counts[0], dtype=torch.long)

        def set_timesteps(self, num_inference_steps, device=None, block_length=None):
            self._check_call(_pipeline_call_args())
            super().set_timesteps(num_inference_steps, device=device, block_length=block_length)
            self._block = -1
            self._device = device

        def _check_call(self, args):
            """Refuse a pipeline call whose response does not fill whole designed blocks."""
            if args is None:
                return
            B = self.config.block_length
            gen, prompt = args["gen_length"], args["prompt_length"]
            if gen % B:
                fix = f"{-(-gen // B) * B}" + (f" or {gen // B * B}" if gen > B else "")
                raise ValueError(
                    f"gen_length: {gen} is not a multiple of block_length={B}; the pipeline pads the last block "
                    f"with {-gen % B} positions past the response and spends part of that block's designed counts "
                    f"there (cut from the output); pass gen_length={fix}")
            if len(self._counts) > 1 and gen != len(self._counts) * B:
                raise ValueError(f"gen_length: the counts are designed for {len(self._counts)} blocks of {B}; pass "
                                 f"gen_length={len(self._counts) * B}, got {gen}")
            if prompt % B:
                raise ValueError(f"input_ids: the prompt has {prompt} tokens, not a multiple of block_length={B} (a "
                                 f"block holding the end of the prompt has fewer than {B} masks); left-pad it to "
                                 f"{-(-prompt // B) * B} tokens")

        def step(self, model_output, timestep, sample, *args, **kwargs):
            if int(timestep) == 0:  # the pipeline's step index restarts at 0 once per block
                self._block += 1
                if len(self._counts) > 1:
                    if self._block >= len(self._counts):
                        raise ValueError(f"counts: designed for {len(self._counts)} generated blocks, the pipeline "
                                         f"runs more; pass gen_length={len(self._counts) * self.config.block_length}")
                    self._transfer_schedule = torch.tensor(self._counts[self._block], dtype=torch.long)
                mask_id = kwargs.get("mask_token_id")
                if mask_id is not None:
                    n = int((sample == mask_id).sum(dim=-1).max())
                    want = self.config.block_length
                    if n != want:
                        raise ValueError(
                            f"counts: this block has {n} masked positions, the design commits {want}; the prompt "
                            f"ends inside a block — use a prompt length that is a multiple of block_length={want} "
                            "(left-pad the prompt) or design the first block for its masks")
            return super().step(model_output, timestep, sample, *args, **kwargs)

        @property
        def counts(self) -> tuple[tuple[int, ...], ...]:
            """The designed counts, one tuple per block (one tuple: every block)."""
            return self._counts

    # a module attribute (PEP 562 ``__getattr__`` below), found by name as pickle and diffusers' loader look it up
    ScheduledBlockRefinementScheduler.__qualname__ = ScheduledBlockRefinementScheduler.__name__
    return ScheduledBlockRefinementScheduler


def __getattr__(name: str):
    """PEP 562: the scheduler class, and diffusers' ``SchedulerMixin``, as attributes of this
    module, built on first access (importing this module does not import diffusers).

    ``save_pretrained`` records our scheduler in ``model_index.json`` as
    ``["mdmtheory.exports.diffusers", "ScheduledBlockRefinementScheduler"]`` (the class's
    ``__module__``; diffusers 0.42.1 ``pipeline_loading_utils._fetch_class_library_tuple``).
    ``from_pretrained`` resolves that entry in ``get_class_obj_and_candidates`` with
    ``getattr(module, "ScheduledBlockRefinementScheduler")``, then looks up its loadable base
    classes *in the same module* (``getattr(module, "SchedulerMixin", None)`` and the other
    names of ``LOADABLE_CLASSES``) to pick the ``from_pretrained`` that loads it; passing the
    scheduler in (``from_pretrained(dir, scheduler=...)``) goes through the same lookup in
    ``maybe_raise_or_warn``. Both names are served here; every other name is an
    ``AttributeError``, as diffusers expects of the other base classes."""
    if name == "ScheduledBlockRefinementScheduler":
        return _scheduler_class()
    if name == "SchedulerMixin":
        _diffusers()
        from diffusers import SchedulerMixin

        return SchedulerMixin
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def block_refinement_scheduler(counts, *, block_length: int | None = None, threshold: float = 1.0,
                               editing_threshold: float | None = None, minimal_topk: int = 1):
    """A ``diffusers.BlockRefinementScheduler`` committing the designed counts per step.

    Parameters
    ----------
    counts : one list of per-step counts (every block) or one list per generated block;
        each list sums to ``block_length`` and all have the same length S.
    block_length : positions per block (default: the sum of a list).
    threshold, editing_threshold, minimal_topk : the scheduler's config (see the module
        docstring: the pipeline's own ``threshold`` argument overrides ``threshold``).

    Returns
    -------
    A subclass instance, usable as ``LLaDA2Pipeline(model, scheduler, tokenizer)(input_ids=...,
    block_length=B, num_inference_steps=S, threshold=1.0, editing_threshold=None,
    eos_early_stop=False)``; its config round-trips through ``save_config``/``from_config``.
    """
    blocks = check_counts(counts, block_length=block_length)
    B = sum(blocks[0])
    threshold = prob_arg(threshold, "threshold")
    if editing_threshold is not None:
        editing_threshold = prob_arg(editing_threshold, "editing_threshold")
    if (isinstance(minimal_topk, (bool, np.bool_)) or not isinstance(minimal_topk, (int, np.integer))
            or minimal_topk != 1):
        raise ValueError(f"minimal_topk: must be 1 for designed counts (the pipeline lowers num_inference_steps to "
                         f"gen_length // minimal_topk), got {minimal_topk!r}")
    cls = _scheduler_class()
    return cls(counts=[list(r) for r in blocks], block_length=B, num_inference_steps=len(blocks[0]),
               threshold=threshold, editing_threshold=editing_threshold, minimal_topk=1)


def scheduler_config(counts, *, block_length: int | None = None, prompt_length: int = 0,
                     gen_length: int | None = None) -> dict:
    """The design as plain JSON: what :func:`block_refinement_scheduler` and the pipeline call
    take (no diffusers import). ``prompt_length``: the prompt tokens of the design, a multiple
    of ``block_length`` for the counts to hold in every block (left-pad the prompt).
    ``gen_length``: the response tokens (default: ``block_length`` times the number of lists
    — one block for a single list); a multiple of ``block_length``, and with one list per
    block their number of blocks.

    ``pipeline_call`` holds every argument the counts need, ``gen_length`` included (the
    pipeline's default is 2,048 tokens); ``python`` is one line that runs as printed once
    ``model``, ``tokenizer`` and ``input_ids`` (the prompt ids, (batch, prompt_length); a
    (1, 0) tensor for no prompt) are defined. ``forwards`` is the model calls it makes:
    ``num_inference_steps`` per block (threshold 1.0 commits exactly each step's count, so
    the block ends with its S-th step, diffusers' ``check_block_should_continue``)."""
    blocks = check_counts(counts, block_length=block_length)
    B, S = sum(blocks[0]), len(blocks[0])
    prompt_length = int_arg(prompt_length, "prompt_length", 0)
    one = len(set(blocks)) == 1
    if gen_length is None:
        gen_length = B * len(blocks)
    if isinstance(gen_length, (bool, np.bool_)) or not isinstance(gen_length, (int, np.integer)) or gen_length < 1:
        raise ValueError(f"gen_length: expected a number of response tokens >= 1, got {gen_length!r}")
    gen_length = int(gen_length)
    if gen_length % B:
        raise ValueError(f"gen_length: {gen_length} is not a multiple of block_length={B} (the pipeline pads the last "
                         f"block and spends part of its counts past the response); pass a multiple of {B}")
    if len(blocks) > 1 and gen_length != B * len(blocks):
        raise ValueError(f"gen_length: the counts hold {len(blocks)} blocks of {B}: pass gen_length={B * len(blocks)}, "
                         f"got {gen_length}")
    rows = [list(blocks[0])] if one else [list(r) for r in blocks]
    call = {"gen_length": gen_length, "block_length": B, "num_inference_steps": S, "threshold": 1.0,
            "editing_threshold": None, "eos_early_stop": False, "minimal_topk": 1}
    return {
        "format": "diffusers",
        "counts": rows,
        "block_length": B,
        "num_inference_steps": S,
        "gen_length": gen_length,
        "forwards_per_block": S,
        "forwards": S * (gen_length // B),
        "prompt_length": prompt_length,
        "pipeline_call": call,
        "python": ("from diffusers import LLaDA2Pipeline; "
                   "from mdmtheory.exports.diffusers import block_refinement_scheduler; "
                   f"scheduler = block_refinement_scheduler({rows if not one else rows[0]}, block_length={B}); "
                   "out = LLaDA2Pipeline(model, scheduler, tokenizer)(input_ids=input_ids, "
                   + ", ".join(f"{k}={v!r}" for k, v in call.items()) + ")"),
        "note": ("model, tokenizer: yours; input_ids: the prompt ids, (batch, prompt_length) with prompt_length a "
                 "multiple of block_length (no prompt: torch.zeros((1, 0), dtype=torch.long))"
                 + ("" if prompt_length % B == 0 else f" — it is {prompt_length}: left-pad the prompt to "
                                                      f"{-(-prompt_length // B) * B} tokens")
                 + "; the pipeline's own threshold argument overrides the scheduler's: threshold=1.0 gives exact "
                   "counts"),
    }


def save_scheduler(counts, path, *, block_length: int | None = None) -> str:
    """Write the scheduler's config (``scheduler_config.json``) to the folder ``path``
    (created); :func:`load_scheduler` reads it back. Returns the folder."""
    import os

    path = path_arg(path)
    sched = block_refinement_scheduler(counts, block_length=block_length)
    try:
        os.makedirs(path, exist_ok=True)
        sched.save_config(path)
    except OSError as exc:  # issue 38: a name too long, a file in the way, no permission: by name
        raise ValueError(f"path: cannot write the scheduler folder ({exc.strerror or type(exc).__name__}): "
                         f"{path[:60]!r}{'...' if len(path) > 60 else ''}") from None
    return os.fspath(path)


#: ``model_index.json``'s entry for our scheduler: the module ``from_pretrained`` resolves it in.
MODEL_INDEX_ENTRY = ("mdmtheory.exports.diffusers", "ScheduledBlockRefinementScheduler")


@dataclass(frozen=True)
class SchedulerCheck:
    """What a saved scheduler folder holds, and what each class that can read it commits.

    ``config``: the ``scheduler_config.json`` read. ``class_name``: its ``_class_name``.
    ``model_index``: the pipeline's ``model_index.json`` entry for the scheduler
    (``(module, class)``) when ``path`` was a pipeline folder, else None. ``counts``: the
    designed counts (one tuple per block; one tuple: every block), None for a config of
    diffusers' own ``BlockRefinementScheduler``. ``block_length``, ``num_inference_steps``:
    the config's. ``stock_counts``: what diffusers' ``BlockRefinementScheduler`` commits in
    every block when it loads this folder and runs ``num_inference_steps`` steps of
    ``block_length`` — its ``get_num_transfer_tokens``, the even split with the remainder
    front-loaded; it ignores ``counts`` (diffusers 0.42.1 only logs "The config attributes
    {'counts': ...} were passed to BlockRefinementScheduler, but are not expected and will be
    ignored"). ``stock_keeps_counts``: whether that equals the design in every block.
    ``reader``: the call that loads the folder with its counts."""

    config: str
    class_name: str
    model_index: tuple[str, str] | None
    counts: tuple[tuple[int, ...], ...] | None
    block_length: int
    num_inference_steps: int
    stock_counts: tuple[int, ...]
    stock_keeps_counts: bool
    reader: str

    def to_dict(self) -> dict:
        return {"config": self.config, "class_name": self.class_name,
                "model_index": None if self.model_index is None else list(self.model_index),
                "counts": None if self.counts is None else [list(r) for r in self.counts],
                "block_length": self.block_length, "num_inference_steps": self.num_inference_steps,
                "stock_counts": list(self.stock_counts), "stock_keeps_counts": self.stock_keeps_counts,
                "reader": self.reader}


def _read_json(f: str, what: str):
    import json

    try:
        with open(f, encoding="utf-8") as fh:
            cfg = json.load(fh)
    except (OSError, ValueError, RecursionError) as exc:
        raise ValueError(f"path: {f!r} is not {what} ({type(exc).__name__})") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"path: {f!r} is not {what} (a JSON object)")
    return cfg


def check_scheduler(path) -> SchedulerCheck:
    """Read a saved scheduler — its folder (``scheduler_config.json``) or the folder of a
    saved pipeline (``model_index.json`` and ``scheduler/``) — without diffusers, and say
    which class reads its counts (:class:`SchedulerCheck`).

    A folder of our scheduler loads with its counts through :func:`load_scheduler`,
    ``ScheduledBlockRefinementScheduler.from_pretrained`` and, for a pipeline folder,
    ``LLaDA2Pipeline.from_pretrained`` once this module is imported (diffusers resolves a
    component of a library outside its own only from ``sys.modules``: ``import
    mdmtheory.exports.diffusers`` first). Loaded with diffusers' ``BlockRefinementScheduler``
    it commits ``stock_counts`` instead; ``stock_keeps_counts`` says whether that loses the
    design."""
    return _check_scheduler(path)[0]


def _check_scheduler(path) -> tuple[SchedulerCheck, dict]:
    """:func:`check_scheduler`'s check and the ``scheduler_config.json`` it read."""
    import os

    path = path_arg(path)
    entry = None
    if not os.path.isfile(os.path.join(path, "scheduler_config.json")) and os.path.isfile(
            os.path.join(path, "model_index.json")):
        index = _read_json(os.path.join(path, "model_index.json"), "a pipeline's model_index.json")
        e = index.get("scheduler")
        if not (isinstance(e, list) and len(e) == 2 and all(isinstance(x, str) for x in e)):
            raise ValueError(f"path: the pipeline saved in {path!r} has no scheduler entry in model_index.json "
                             f"(got {e!r})")
        entry = (e[0], e[1])
        path = os.path.join(path, "scheduler")
    f = os.path.join(path, "scheduler_config.json")
    if not os.path.isfile(f):
        raise ValueError(f"path: {path!r} has no scheduler_config.json (write it with save_scheduler, "
                         "LLaDA2Pipeline.save_pretrained, or mdmtheory design --format diffusers --scheduler-out DIR)")
    cfg = _read_json(f, "a scheduler config")
    name = cfg.get("_class_name")
    if name not in (MODEL_INDEX_ENTRY[1], "BlockRefinementScheduler"):
        raise ValueError(f"path: {f!r} is a config of {name!r}, not of a BlockRefinementScheduler")
    ours = name == MODEL_INDEX_ENTRY[1]
    try:
        counts = check_counts(cfg.get("counts"), block_length=cfg.get("block_length")) if ours else None
        B = int(cfg.get("block_length", 32)) if counts is None else sum(counts[0])
        S = cfg.get("num_inference_steps", 32) if counts is None else len(counts[0])
        from .._validate import int_arg

        B, S = int_arg(B, "block_length", 1), int_arg(S, "num_inference_steps", 1)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"path: {f!r} holds a bad config: {exc}") from None
    if counts is not None and cfg.get("num_inference_steps", S) != S:
        raise ValueError(f"path: {f!r} has num_inference_steps={cfg.get('num_inference_steps')!r} for counts of "
                         f"{S} steps")
    stock = tuple(llada_default_counts(B, S))
    keeps = counts is not None and all(c == stock for c in counts)
    reader = ("mdmtheory.exports.diffusers.load_scheduler(path)" if ours
              else "diffusers.BlockRefinementScheduler.from_pretrained(path) (no designed counts)")
    return SchedulerCheck(config=f, class_name=name, model_index=entry, counts=counts, block_length=B,
                          num_inference_steps=S, stock_counts=stock, stock_keeps_counts=keeps, reader=reader), cfg


def load_scheduler(path):
    """The scheduler saved by :func:`save_scheduler`, ``LLaDA2Pipeline.save_pretrained`` or
    ``mdmtheory design --scheduler-out`` — ``path`` is the scheduler's folder or the saved
    pipeline's — with its designed counts. A folder of diffusers' own
    ``BlockRefinementScheduler`` (no counts) is refused, naming the class that reads it
    (:func:`check_scheduler`)."""
    chk, cfg = _check_scheduler(path)
    if chk.counts is None:
        raise ValueError(f"path: {chk.config!r} is a config of diffusers' BlockRefinementScheduler: it holds no "
                         f"designed counts (that class commits {list(chk.stock_counts)} in every block); load it "
                         "with diffusers.BlockRefinementScheduler.from_pretrained, or save a design with "
                         "save_scheduler(counts, path)")
    return block_refinement_scheduler([list(r) for r in chk.counts], block_length=chk.block_length,
                                      threshold=cfg.get("threshold", 1.0),
                                      editing_threshold=cfg.get("editing_threshold"),
                                      minimal_topk=cfg.get("minimal_topk", 1))


def _read_tuning(tuning, rules) -> dict:
    """The fields the exporters read from a tuned parameter: a
    :class:`mdmtheory.optimal.Tuning` (or its ``to_dict()``) with a pick, of one of ``rules``.
    Returns planner, parameter, value, expected_forwards, d, method."""
    t = tuning.to_dict() if hasattr(tuning, "to_dict") and not isinstance(tuning, dict) else tuning
    keys = ("planner", "parameter", "value", "expected_forwards", "d", "method")
    if not isinstance(t, dict) or not all(k in t for k in keys):
        raise ValueError(f"tuning: expected a mdmtheory.optimal.Tuning (or its to_dict()), got {tuning!r:.80}")
    if t["planner"] not in rules:
        raise ValueError(f"tuning: this export takes a tuning of {' or '.join(map(repr, rules))}, got one of "
                         f"{t['planner']!r}")
    v = t["value"]
    if v is None:
        raise ValueError("tuning: it has no pick (tune with forwards= or target_kl=)")
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) or not np.isfinite(v):
        raise ValueError(f"tuning: expected a finite picked value, got {v!r:.80}")
    d = t["d"]
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"tuning: expected the tuned sequence length d >= 1, got {d!r:.80}")
    return {k: t[k] for k in keys}


def tuned_threshold_call(tuning) -> dict:
    r"""A tuned ``"diffusers_threshold"`` (:func:`mdmtheory.optimal.tune`) as the
    ``LLaDA2Pipeline`` call that runs it: one block of the d tuned positions
    (``gen_length = block_length = num_inference_steps = d``: diffusers' own
    ``BlockRefinementScheduler`` then floors one mask per step), ``threshold`` the picked τ,
    ``temperature=1.0``, editing off, ``eos_early_stop=False``, ``minimal_topk=1``. No custom
    scheduler: diffusers' default split is the tuned rule's. ``expected_forwards`` is the
    record's: the model calls the pipeline makes on average (a block that runs out of masks at
    step F < d costs F + 1; :class:`mdmtheory.samplers.SelectRun`), for the law the tuning ran
    on (tests/exports/test_tuned_threshold.py counts them in diffusers 0.42.1). A prompt must
    end on a block boundary (left-pad it to a multiple of d) for the block to hold d masks.

    Only a tuning of ``"diffusers_threshold"``: the Fast-dLLM rule ``"threshold"`` ranks
    positions by the arg max's probability and draws values after; diffusers commits by the
    probability of the value it sampled — another rule, with other forwards."""
    t = _read_tuning(tuning, ("diffusers_threshold",))
    tau = prob_arg(t["value"], "tuning")
    if not tau < 1:
        raise ValueError(f"tuning: diffusers takes a threshold in [0, 1), got {tau}")
    d = int(t["d"])
    call = {"gen_length": d, "block_length": d, "num_inference_steps": d, "threshold": tau,
            "editing_threshold": None, "eos_early_stop": False, "minimal_topk": 1, "temperature": 1.0}
    return {
        "format": "diffusers",
        "pipeline_call": call,
        "expected_forwards": float(t["expected_forwards"]),
        "method": t["method"],
        "python": ("from diffusers import BlockRefinementScheduler, LLaDA2Pipeline; "
                   "out = LLaDA2Pipeline(model, BlockRefinementScheduler(), tokenizer)(input_ids=input_ids, "
                   + ", ".join(f"{k}={v!r}" for k, v in call.items()) + ")"),
        "note": (f"threshold {tau:g} tuned ({t['method']}) to {float(t['expected_forwards']):.4g} expected forwards per "
                 f"block of {d}; model, tokenizer: yours; input_ids: the prompt ids with the prompt a multiple of "
                 f"{d} tokens (no prompt: torch.zeros((1, 0), dtype=torch.long))"),
    }
