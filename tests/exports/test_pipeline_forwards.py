"""Forwards as diffusers' own LLaDA2Pipeline makes them (issue 26 §3.1): the model's calls are
counted while the unpatched pipeline runs, with the exact law as its model, and compared with
``SelectRun.forwards`` and ``RevisionRun.forwards``.

The pipeline (diffusers 0.42.1, pipelines/llada2/pipeline_llada2.py) calls the model at the
top of every pass of its block loop; ``check_block_should_continue``
(schedulers/scheduling_block_refinement.py) ends the block after the S-th pass that began
with masks, or after a pass that began with none (editing off) — so a threshold that
commits the last mask at step F < S costs F + 1 forwards, not F. Runs are one row each: the
pipeline decides ``masks_remaining`` for the whole batch."""

from __future__ import annotations


import numpy as np
import pytest

torch = pytest.importorskip("torch")
diffusers = pytest.importorskip("diffusers")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

import mdmtheory as mt  # noqa: E402
from mdmtheory.exports.diffusers import block_refinement_scheduler  # noqa: E402
from mdmtheory.samplers import EditingSampler, SampleThenSelectPlanner, revise_run, select_run  # noqa: E402
from pipeline_reference import ExactLawModel, tokenizer  # noqa: E402


def _forwards(p, counts, *, threshold, editing_threshold, max_post_steps=16, n, seed):
    """The model calls of n one-row runs of diffusers' LLaDA2Pipeline (one block of d)."""
    tok = tokenizer()
    model = ExactLawModel(p, tok.mask_token_id, len(tok))
    pipe = diffusers.LLaDA2Pipeline(model=model, scheduler=block_refinement_scheduler(counts), tokenizer=tok)
    pipe.set_progress_bar_config(disable=True)
    g = torch.Generator().manual_seed(seed)
    calls = []
    for _ in range(n):
        model.calls = 0
        out = pipe(input_ids=torch.zeros((1, p.d), dtype=torch.long), gen_length=p.d, block_length=p.d,
                   num_inference_steps=len(counts), threshold=threshold, editing_threshold=editing_threshold,
                   max_post_steps=max_post_steps, eos_early_stop=False, temperature=1.0, generator=g,
                   output_type="seq")
        assert not (out.sequences == tok.mask_token_id).any()
        calls.append(model.calls)
    return np.array(calls, dtype=np.float64)


def test_threshold_that_finishes_one_step_early_saves_no_forward():
    # the reviewer's case: counts [2, 2, 2] at threshold 0.7 on the stay-0.9 chain finishes at
    # the 2nd step in ~39% of runs (mask steps 2.61), but the pipeline always calls the model 3 times
    p = mt.families.markov_chain([[0.9, 0.1], [0.1, 0.9]], 6)
    run = select_run(p, mt.Schedule((2, 2, 2)), SampleThenSelectPlanner(threshold=0.7, confidence="tempered"))
    calls = _forwards(p, [2, 2, 2], threshold=0.7, editing_threshold=None, n=150, seed=0)
    assert run.mask_steps < 2.7  # the old count
    assert calls.min() == calls.max() == 3
    assert run.forwards == pytest.approx(3.0, abs=1e-9)


def test_expected_forwards_are_the_pipelines_model_calls():
    # one mask per step on a sticky chain: the threshold often commits the rest at step 2 or 3
    # of 4, so the pipeline's extra pass and a real saving both happen
    p = mt.families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 4)
    run = select_run(p, mt.Schedule((1, 1, 1, 1)), SampleThenSelectPlanner(threshold=0.6, confidence="tempered"))
    n = 600
    calls = _forwards(p, [1, 1, 1, 1], threshold=0.6, editing_threshold=None, n=n, seed=1)
    se = calls.std() / np.sqrt(n)
    assert abs(calls.mean() - run.forwards) < 4.5 * se + 1e-9
    assert abs(calls.mean() - run.mask_steps) > 6 * se  # the mask steps are not the forwards
    assert run.forwards < 4  # and a threshold does save forwards here


@pytest.mark.parametrize("threshold, post", [(None, 16), (0.6, 0), (0.6, 2)])
def test_editing_forwards_are_the_pipelines_model_calls(threshold, post):
    p = mt.families.markov_chain([[0.85, 0.15], [0.25, 0.75]], 4)
    counts = [1, 1, 2]
    run = revise_run(p, EditingSampler(mt.Schedule(counts), editing_threshold=0.5, threshold=threshold,
                                       max_post_steps=post))
    assert "LLaDA2Pipeline" in run.pipeline
    n = 500
    calls = _forwards(p, counts, threshold=1.0 if threshold is None else threshold, editing_threshold=0.5,
                      max_post_steps=post, n=n, seed=2)
    if threshold is None:  # every step commits its count: the block ends with its 3rd mask step
        assert run.forwards == pytest.approx(3.0) and calls.min() == calls.max() == 3
    else:
        se = calls.std() / np.sqrt(n)
        assert abs(calls.mean() - run.forwards) < 4.5 * se + 1e-9
        assert calls.max() > 3 or post == 0
