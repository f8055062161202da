"""diffusers' own LLaDA2Pipeline + BlockRefinementScheduler, run with the exact law as its
model, against mdmtheory's exact sample-then-select and editing laws (z-scores).

The model is the true law: at a masked position it returns log p(x_j | x_A), at a visible one
the leave-one-out log p(x_j | x_{A minus j}) (our reading of an editing model, the one
EditingSampler uses). The pipeline draws a candidate everywhere, commits the most confident
(its tempered probability), edits committed tokens above editing_threshold and runs its
post-step; the exact chains must give the same law. Settings where a batch behaves as one
row: threshold=1.0 (every row commits exactly the scheduled counts) and max_post_steps=0
(one post forward for every row).

Ties (issue 26 §2): on a law with exact symmetries (the sticky Markov chain) confidences of
different positions are equal in exact arithmetic; the model rounds its conditionals to 12
decimals before the log, so tied confidences are bit-identical in the pipeline's float32 row
as well, and the pipeline's torch.topk (BlockRefinementScheduler.step: ``torch.topk(
confidence[b], k)`` on the block's float32 row with -inf at committed positions) picks among
them in torch's own order — the package's ``ties="topk"`` law, not "lowest" nor "random"."""

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

D, K = 4, 2


def _run(p, counts, *, editing_threshold, n, seed, temperature=1.0):
    tok = tokenizer()
    sched = block_refinement_scheduler(counts, block_length=D)
    pipe = diffusers.LLaDA2Pipeline(model=ExactLawModel(p, tok.mask_token_id, len(tok), decimals=12), scheduler=sched,
                                    tokenizer=tok)
    pipe.set_progress_bar_config(disable=True)
    prompt = torch.zeros((n, D), dtype=torch.long)
    out = pipe(input_ids=prompt, gen_length=D, block_length=D, num_inference_steps=len(counts), threshold=1.0,
               editing_threshold=editing_threshold, max_post_steps=0, eos_early_stop=False, temperature=temperature,
               generator=torch.Generator().manual_seed(seed), output_type="seq")
    return out.sequences[:, -D:].numpy()


def _z(law, x, n):
    q = law.table.ravel()
    freq = np.bincount(np.ravel_multi_index(x.T, (K,) * D), minlength=q.size) / n
    return np.abs(freq - q) / np.sqrt(np.maximum(q * (1 - q), 1e-12) / n)


@pytest.mark.parametrize("counts", [[2, 2], [1, 3]])
def test_pipeline_with_the_exact_law_follows_the_exact_editing_law(counts):
    # a law without ties between confidences: torch.topk's order on ties is not the package's
    # lowest-index rule (a symmetric chain differs there, as it should)
    p = mt.families.dirichlet(D, K, alpha=0.8, seed=2)
    n = 6000
    x = _run(p, counts, editing_threshold=0.5, n=n, seed=1)
    assert x.min() >= 0 and x.max() < K
    law = revise_run(p, EditingSampler(mt.Schedule(counts), editing_threshold=0.5, max_post_steps=0)).law
    assert np.all(_z(law, x, n) < 4.5)
    if counts == [2, 2]:  # and the editing mattered: without it the law is measurably different
        sts = select_run(p, mt.Schedule(counts), SampleThenSelectPlanner(None, 1.0, "tempered")).law
        assert np.abs(law.table - sts.table).max() > 0.01
        assert np.any(_z(sts, x, n) > 6)  # the pipeline's samples tell the two laws apart


def test_pipeline_without_editing_follows_the_exact_sample_then_select_law():
    p = mt.families.dirichlet(D, K, alpha=0.8, seed=2)
    n = 6000
    x = _run(p, [2, 1, 1], editing_threshold=None, n=n, seed=2)
    law = select_run(p, mt.Schedule((2, 1, 1)), SampleThenSelectPlanner(None, 1.0, "tempered")).law
    assert np.all(_z(law, x, n) < 4.5)


def _chi2(law, x, n):
    """Pearson's chi-square of the samples x against ``law`` over its cells with q > 0 (samples
    outside them make it infinite) and its degrees of freedom."""
    q = law.table.ravel()
    cnt = np.bincount(np.ravel_multi_index(x.T, (K,) * D), minlength=q.size)
    if cnt[q <= 0].any():
        return np.inf, int((q > 0).sum()) - 1
    e = n * q[q > 0]
    return float(((cnt[q > 0] - e) ** 2 / e).sum()), int((q > 0).sum()) - 1


@pytest.mark.parametrize("counts, eth", [([2, 2], None), ([1, 2, 1], None), ([2, 2], 0.5)])
def test_pipeline_on_a_tied_law_follows_the_topk_rule(counts, eth):
    # the sticky Markov chain: every first-step confidence is 1/2 (tied everywhere), later
    # ones tie by symmetry; the pipeline must follow ties="topk" and not "lowest"
    p = mt.families.markov_chain([[0.9, 0.1], [0.1, 0.9]], D)
    n = 6000
    x = _run(p, counts, editing_threshold=eth, n=n, seed=7)

    def law(ties):
        if eth is None:
            return select_run(p, mt.Schedule(counts), SampleThenSelectPlanner(None, 1.0, "tempered", ties)).law
        return revise_run(p, EditingSampler(mt.Schedule(counts), editing_threshold=eth, max_post_steps=0,
                                            ties=ties)).law

    topk, lowest = law("topk"), law("lowest")
    chi, df = _chi2(topk, x, n)
    assert chi < df + 6 * np.sqrt(2 * df)  # ~ df +- sqrt(2 df) under the law; 6 sigma
    assert np.all(_z(topk, x, n) < 4.5)
    if np.abs(topk.table - lowest.table).max() > 0.01:  # where the rules differ, "lowest" is rejected
        chi_l, df_l = _chi2(lowest, x, n)
        assert chi_l > df_l + 20 * np.sqrt(2 * df_l)


@pytest.mark.parametrize("counts", [[2, 2], [1, 2, 1]])
def test_greedy_pipeline_scores_by_the_untempered_probability(counts):
    # temperature 0: diffusers' _sample_from_logits takes the arg max and scores it by the plain
    # softmax; a tempered one-hot would score every position 1 (all tied). On a law without
    # ties the pipeline is deterministic, and the exact law is the point mass on its output.
    p = mt.families.dirichlet(D, K, alpha=0.8, seed=3)  # a law where the greedy order matters
    x = _run(p, counts, editing_threshold=None, n=4, seed=3, temperature=0.0)
    assert (x == x[0]).all()
    for ties in ("random", "lowest", "topk"):
        q = select_run(p, mt.Schedule(counts), SampleThenSelectPlanner(None, 0.0, "tempered", ties)).law
        assert q.table[tuple(x[0])] == pytest.approx(1.0, abs=1e-12), ties
