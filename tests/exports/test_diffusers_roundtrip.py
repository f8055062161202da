"""A pipeline holding our scheduler survives ``save_pretrained`` / ``from_pretrained`` (issue 29 §2).

diffusers 0.42.1 writes a component of a library outside its own under the class's
``__module__`` (``pipeline_loading_utils._fetch_class_library_tuple``) and reads it back
with ``getattr(sys.modules[module], class_name)``, then looks up the loadable base classes
(``SchedulerMixin``, ...) in that same module (``get_class_obj_and_candidates``,
``maybe_raise_or_warn``). Before this test the class was built inside a function and
``LLaDA2Pipeline.from_pretrained(dir)`` failed ("has no class
ScheduledBlockRefinementScheduler"). The model here is a diffusers ``ModelMixin`` so that the
whole pipeline saves and loads; the committed counts are read from the pipeline's own
``transfer_index`` through ``callback_on_step_end``, as in tests/exports/test_diffusers.py.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
diffusers = pytest.importorskip("diffusers")
pytest.importorskip("tokenizers")
pytest.importorskip("transformers")

from diffusers.configuration_utils import ConfigMixin, register_to_config  # noqa: E402
from diffusers.models.modeling_utils import ModelMixin  # noqa: E402

import mdmtheory.exports.diffusers as mdiff  # noqa: E402
from mdmtheory.exports.diffusers import (  # noqa: E402
    MODEL_INDEX_ENTRY, block_refinement_scheduler, check_scheduler, load_scheduler, save_scheduler)
from test_diffusers import _tokenizer  # noqa: E402


class SavedTinyModel(ModelMixin, ConfigMixin):
    """The seeded embedding + linear head of test_diffusers.TinyModel as a diffusers model, so
    that ``save_pretrained`` writes it and ``from_pretrained`` reads it back."""

    @register_to_config
    def __init__(self, vocab: int = 10, mask_id: int = 8):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.emb = torch.nn.Parameter(torch.randn(vocab, 8, generator=g))
        self.pos = torch.nn.Parameter(torch.randn(64, 8, generator=g))
        self.head = torch.nn.Parameter(torch.randn(8, vocab, generator=g))

    def forward(self, x, attention_mask=None, position_ids=None):
        h = self.emb[x] + self.pos[position_ids]
        h = h + h.mean(dim=1, keepdim=True)
        logits = h @ self.head
        logits[..., self.config.mask_id] = -torch.inf
        return SimpleNamespace(logits=logits)


def _pipeline(scheduler):
    tok = _tokenizer()
    pipe = diffusers.LLaDA2Pipeline(model=SavedTinyModel(len(tok), tok.mask_token_id), scheduler=scheduler,
                                    tokenizer=tok)
    pipe.set_progress_bar_config(disable=True)
    return pipe


def _committed(pipe, *, S, B, gen_length, prompt, temperature=0.0):
    """(sequences, committed per step per row) of one pipeline call, counted in its own loop."""
    seen = []

    def cb(pipeline, step, timestep, kw):
        seen.append(kw["transfer_index"].sum(dim=-1).tolist())
        return {}

    out = pipe(input_ids=prompt, gen_length=gen_length, block_length=B, num_inference_steps=S, threshold=1.0,
               editing_threshold=None, eos_early_stop=False, temperature=temperature,
               generator=torch.Generator().manual_seed(1), output_type="seq",
               callback_on_step_end=cb, callback_on_step_end_tensor_inputs=["transfer_index"])
    return out.sequences, seen


def _load(folder):
    """``LLaDA2Pipeline.from_pretrained(folder)``, the tokenizer passed in: diffusers 0.42.1
    writes the tokenizer's model_index entry but not its folder (``save_pretrained`` saves only
    the ``expected_modules``, the ``__init__`` arguments without a default, and LLaDA2Pipeline's
    ``tokenizer`` defaults to None), so loading without it fails in diffusers, whatever the
    scheduler. Model and scheduler are read from the folder."""
    pipe = diffusers.LLaDA2Pipeline.from_pretrained(folder, tokenizer=_tokenizer())
    pipe.set_progress_bar_config(disable=True)
    return pipe


@pytest.mark.parametrize("counts, B, temperature", [([1, 1, 2], 4, 0.0), ([[3, 1], [1, 3], [2, 2]], 4, 1.0)])
def test_pipeline_round_trip_keeps_the_counts_and_commits_them(tmp_path, counts, B, temperature):
    pipe = _pipeline(block_refinement_scheduler(counts, block_length=B))
    pipe.save_pretrained(tmp_path)
    index = json.loads((tmp_path / "model_index.json").read_text())
    assert tuple(index["scheduler"]) == MODEL_INDEX_ENTRY == (mdiff.__name__, "ScheduledBlockRefinementScheduler")
    loaded = _load(tmp_path)
    assert type(loaded.scheduler) is type(pipe.scheduler) and loaded.scheduler.counts == pipe.scheduler.counts
    assert isinstance(loaded.model, SavedTinyModel)  # the whole pipeline came back, model included
    rows = [list(r) for r in pipe.scheduler.counts]
    blocks = 3
    design = [k for b in range(blocks) for k in rows[b if len(rows) > 1 else 0]]
    prompt = torch.tensor([[0, 1, 2, 3], [4, 5, 6, 7]])
    S = len(rows[0])
    seq0, seen0 = _committed(pipe, S=S, B=B, gen_length=B * blocks, prompt=prompt, temperature=temperature)
    seq1, seen1 = _committed(loaded, S=S, B=B, gen_length=B * blocks, prompt=prompt, temperature=temperature)
    assert seen1 == [[k, k] for k in design] == seen0  # both rows commit the design at every step
    assert torch.equal(seq0, seq1)  # the same model, scheduler and seed: the same tokens


def test_passing_the_loaded_scheduler_to_from_pretrained(tmp_path):
    """The issue's second failing call: ``from_pretrained(dir, scheduler=load_scheduler(...))``
    (diffusers checks the passed object's class against the saved entry's base class, looked
    up in our module)."""
    pipe = _pipeline(block_refinement_scheduler([1, 1, 2]))
    pipe.save_pretrained(tmp_path)
    for folder in (tmp_path, tmp_path / "scheduler"):  # the pipeline's folder or the scheduler's
        sched = load_scheduler(folder)
        loaded = diffusers.LLaDA2Pipeline.from_pretrained(tmp_path, scheduler=sched, tokenizer=_tokenizer())
        assert loaded.scheduler is sched and sched.counts == ((1, 1, 2),)


def test_saved_scheduler_alone(tmp_path):
    save_scheduler([[2, 1, 1], [1, 1, 2]], tmp_path / "s")
    cls = mdiff.ScheduledBlockRefinementScheduler  # a module attribute (PEP 562), as diffusers reads it
    assert cls is type(block_refinement_scheduler([2, 2])) and cls.__qualname__ == cls.__name__
    for sched in (load_scheduler(tmp_path / "s"), cls.from_pretrained(tmp_path / "s")):
        assert type(sched) is cls and sched.counts == ((2, 1, 1), (1, 1, 2))
        assert sched.config.block_length == 4 and sched.config.num_inference_steps == 3
    copy = pickle.loads(pickle.dumps(load_scheduler(tmp_path / "s")))  # found by name, so it pickles
    assert type(copy) is cls and copy.counts == ((2, 1, 1), (1, 1, 2))
    chk = check_scheduler(tmp_path / "s")
    assert chk.counts == ((2, 1, 1), (1, 1, 2)) and chk.model_index is None and chk.class_name == cls.__name__
    assert "load_scheduler" in chk.reader


def test_stock_block_refinement_scheduler_drops_the_counts_and_the_check_says_so(tmp_path):
    """diffusers' own class reads our folder with a logged warning and commits its even split
    (counted in the pipeline's loop); :func:`check_scheduler` names that split from the
    definition (⌊B/S⌋ per step, the first B mod S steps one more) and the loss."""
    pipe = _pipeline(block_refinement_scheduler([1, 1, 2]))
    pipe.save_pretrained(tmp_path)
    stock = diffusers.BlockRefinementScheduler.from_pretrained(tmp_path / "scheduler")
    assert type(stock) is diffusers.BlockRefinementScheduler and stock.get_num_transfer_tokens(4, 3).tolist() == [2, 1, 1]
    pipe.scheduler = stock
    _, seen = _committed(pipe, S=3, B=4, gen_length=4, prompt=torch.zeros((1, 4), dtype=torch.long))
    even = [4 // 3 + (1 if i < 4 % 3 else 0) for i in range(3)]
    assert [s[0] for s in seen] == even == [2, 1, 1]
    for folder in (tmp_path, tmp_path / "scheduler"):
        chk = check_scheduler(folder)
        assert chk.counts == ((1, 1, 2),) and list(chk.stock_counts) == even and not chk.stock_keeps_counts
    assert check_scheduler(tmp_path).model_index == MODEL_INDEX_ENTRY
    save_scheduler([2, 1, 1], tmp_path / "even")  # a design equal to the even split survives either class
    assert check_scheduler(tmp_path / "even").stock_keeps_counts


def test_a_stock_config_is_refused_by_load_scheduler_naming_its_class(tmp_path):
    diffusers.BlockRefinementScheduler(block_length=8, num_inference_steps=3).save_config(tmp_path)
    chk = check_scheduler(tmp_path)
    assert chk.counts is None and chk.stock_counts == (3, 3, 2) and "BlockRefinementScheduler.from_pretrained" in chk.reader
    with pytest.raises(ValueError, match=r"^path: .*diffusers' BlockRefinementScheduler: it holds no designed counts "
                                         r"\(that class commits \[3, 3, 2\] in every block\)"):
        load_scheduler(tmp_path)


def test_stock_counts_are_diffusers_own_split(tmp_path):
    """``stock_counts`` is our restatement of diffusers' even split; here it is compared with
    ``BlockRefinementScheduler.get_num_transfer_tokens`` itself, run on the config diffusers
    loads from the folder, for stock and designed folders over a grid of (B, S)."""
    for B in range(1, 13):
        for S in range(1, B + 1):
            folder = tmp_path / f"stock-{B}-{S}"
            diffusers.BlockRefinementScheduler(block_length=B, num_inference_steps=S).save_config(folder)
            ours = save_scheduler([B - S + 1] + [1] * (S - 1), tmp_path / f"ours-{B}-{S}")
            for f in (folder, ours):
                stock = diffusers.BlockRefinementScheduler.from_pretrained(f)
                own = stock.get_num_transfer_tokens(stock.config.block_length, stock.config.num_inference_steps)
                chk = check_scheduler(f)
                assert list(chk.stock_counts) == own.tolist() and (chk.block_length, chk.num_inference_steps) == (B, S)
                assert chk.stock_keeps_counts == (chk.counts is not None and list(chk.counts[0]) == own.tolist())


@pytest.mark.parametrize("content, match", [
    (None, "has no scheduler_config.json"),
    ("{", "is not a scheduler config"),
    ('{"_class_name": "DDPMScheduler"}', "is a config of 'DDPMScheduler'"),
    ('{"_class_name": "ScheduledBlockRefinementScheduler", "counts": [[2, 0]]}', "holds a bad config: counts"),
    ('{"_class_name": "ScheduledBlockRefinementScheduler", "counts": [[2, 2]], "num_inference_steps": 3}',
     "num_inference_steps=3 for counts of 2 steps"),
])
def test_bad_folders_are_refused(tmp_path, content, match):
    if content is not None:
        (tmp_path / "scheduler_config.json").write_text(content)
    with pytest.raises(ValueError, match=rf"^path: .*{match}"):
        check_scheduler(tmp_path)


def test_importing_the_module_imports_no_diffusers():
    """The class is built on first access: ``import mdmtheory.exports.diffusers`` alone loads
    neither diffusers nor torch (a fresh process); another name is an AttributeError, as
    diffusers' loader expects of the base classes it does not find."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(mdiff.__file__))))
    code = ("import sys, mdmtheory.exports.diffusers\n"
            "print(sorted({'diffusers', 'torch', 'transformers'} & {m.split('.')[0] for m in sys.modules}))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=root,
                         env=dict(os.environ, PYTHONPATH=root))
    assert out.stdout.strip() == "[]"
    assert mdiff.SchedulerMixin is diffusers.SchedulerMixin
    with pytest.raises(AttributeError, match="has no attribute 'ModelMixin'"):
        mdiff.ModelMixin  # noqa: B018
