"""diffusers' own LLaDA2Pipeline + BlockRefinementScheduler, run with the exact law as its
model, against mdmtheory's exact sample-then-select and editing laws (z-scores).

The model is the true law: at a masked position it returns log p(x_j | x_A), at a visible one
the leave-one-out log p(x_j | x_{A minus j}) (our reading of an editing model, the one
EditingSampler uses). The pipeline draws a candidate everywhere, commits the most confident
(its tempered probability), edits committed tokens above editing_threshold and runs its
post-step; the exact chains must give the same law. Settings where a batch behaves as one
row: threshold=1.0 (every row commits exactly the scheduled counts) and max_post_steps=0
(one post forward for every row)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")
diffusers = pytest.importorskip("diffusers")
transformers = pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

import mdmtheory as mt  # noqa: E402
from mdmtheory.integrations.diffusers import block_refinement_scheduler  # noqa: E402
from mdmtheory.samplers import EditingSampler, SampleThenSelectPlanner, revise_run, select_run  # noqa: E402

D, K = 4, 2


def _tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"a": 0, "b": 1, "[MASK]": 2, "[UNK]": 3}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tk, mask_token="[MASK]", unk_token="[UNK]")


class ExactLawModel(torch.nn.Module):
    """Logits of the true law for the last D positions (the response block); the prompt block
    before it is ignored (the law is of the response alone)."""

    def __init__(self, p: mt.Joint, mask_id: int, vocab: int):
        super().__init__()
        self.table = torch.tensor(p.table.ravel(), dtype=torch.float64)
        cells = np.stack(np.unravel_index(np.arange(K**D), (K,) * D), axis=1)
        self.cells = torch.tensor(cells)
        self.mask_id, self.vocab = mask_id, vocab
        self.anchor = torch.nn.Parameter(torch.zeros(1))

    @property
    def device(self):
        return self.anchor.device

    @property
    def dtype(self):
        return torch.float32

    def forward(self, x, attention_mask=None, position_ids=None):
        B, L = x.shape
        r = x[:, -D:]
        rev = r != self.mask_id  # (B, D)
        match = (self.cells[None] == r[:, None, :]) | ~rev[:, None, :]  # (B, cells, D)
        out = torch.full((B, L, self.vocab), -torch.inf, dtype=torch.float64)
        for j in range(D):
            others = torch.cat([match[:, :, :j], match[:, :, j + 1:]], dim=2).all(dim=2)  # (B, cells)
            w = others * self.table[None]
            for v in range(K):
                out[:, L - D + j, v] = torch.log((w * (self.cells[None, :, j] == v)).sum(1) / w.sum(1))
        out[:, : L - D, 0] = 0.0
        return SimpleNamespace(logits=out.float())


def _run(p, counts, *, editing_threshold, n, seed):
    tok = _tokenizer()
    sched = block_refinement_scheduler(counts, block_length=D)
    pipe = diffusers.LLaDA2Pipeline(model=ExactLawModel(p, tok.mask_token_id, len(tok)), scheduler=sched,
                                    tokenizer=tok)
    pipe.set_progress_bar_config(disable=True)
    prompt = torch.zeros((n, D), dtype=torch.long)
    out = pipe(input_ids=prompt, gen_length=D, block_length=D, num_inference_steps=len(counts), threshold=1.0,
               editing_threshold=editing_threshold, max_post_steps=0, eos_early_stop=False, temperature=1.0,
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
