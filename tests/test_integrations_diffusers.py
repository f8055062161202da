"""diffusers' own LLaDA2Pipeline runs a designed schedule through our scheduler subclass.

The pipeline and BlockRefinementScheduler are diffusers' code, unpatched; the model is a
tiny seeded torch module with the interface the pipeline calls
(``model(x, attention_mask=..., position_ids=...).logits``), the tokenizer is built here
with the ``tokenizers`` library (no download). The committed counts are read from the
pipeline's own ``transfer_index`` through ``callback_on_step_end``.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
diffusers = pytest.importorskip("diffusers")
pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")

from mdmtheory.integrations.diffusers import block_refinement_scheduler, check_counts  # noqa: E402

WORDS = ["a", "b", "c", "d", "e", "f", "g", "h"]


def _tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {w: i for i, w in enumerate(WORDS)}
    vocab.update({"[MASK]": len(vocab), "[UNK]": len(vocab) + 1})
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, mask_token="[MASK]", unk_token="[UNK]")


class TinyModel(torch.nn.Module):
    """Seeded embedding + linear head: logits (B, L, V) that depend on every token."""

    def __init__(self, vocab: int, mask_id: int):
        super().__init__()
        self.mask_id = mask_id
        g = torch.Generator().manual_seed(0)
        self.emb = torch.nn.Parameter(torch.randn(vocab, 8, generator=g))
        self.pos = torch.nn.Parameter(torch.randn(64, 8, generator=g))
        self.head = torch.nn.Parameter(torch.randn(8, vocab, generator=g))

    @property
    def device(self):  # diffusers reads .device and .dtype of its components
        return self.emb.device

    @property
    def dtype(self):
        return self.emb.dtype

    def forward(self, x, attention_mask=None, position_ids=None):
        h = self.emb[x] + self.pos[position_ids]
        h = h + h.mean(dim=1, keepdim=True)  # bidirectional mixing
        logits = h @ self.head
        logits[..., self.mask_id] = -torch.inf  # an MDM never predicts the mask token
        return SimpleNamespace(logits=logits)


def _run(counts, *, block_length, gen_length, prompt, temperature=0.0, threshold=1.0):
    tok = _tokenizer()
    sched = block_refinement_scheduler(counts, block_length=block_length)
    pipe = diffusers.LLaDA2Pipeline(model=TinyModel(len(tok), tok.mask_token_id), scheduler=sched, tokenizer=tok)
    pipe.set_progress_bar_config(disable=True)
    seen = []

    def cb(pipeline, step, timestep, kw):
        seen.append(kw["transfer_index"].sum(dim=-1).tolist())
        return {}

    S = len(sched.counts[0])
    out = pipe(input_ids=prompt, gen_length=gen_length, block_length=block_length, num_inference_steps=S,
               threshold=threshold, editing_threshold=None, eos_early_stop=False, temperature=temperature,
               generator=torch.Generator().manual_seed(1), output_type="seq",
               callback_on_step_end=cb, callback_on_step_end_tensor_inputs=["transfer_index"])
    return out.sequences, seen, tok


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_one_list_for_every_block_batch_two(temperature):
    prompt = torch.tensor([[0, 1, 2, 3], [4, 5, 6, 7]])
    seqs, seen, tok = _run([2, 1, 1], block_length=4, gen_length=12, prompt=prompt, temperature=temperature)
    # 3 generated blocks x 3 steps, each row committing the designed count at each step
    assert seen == [[k, k] for _ in range(3) for k in (2, 1, 1)]
    assert seqs.shape == (2, 12) and not (seqs == tok.mask_token_id).any()


def test_one_list_per_block():
    counts = [[3, 1], [1, 3], [2, 2]]
    prompt = torch.tensor([[0, 1, 2, 3, 4, 5, 6, 7]] * 2)
    seqs, seen, tok = _run(counts, block_length=4, gen_length=12, prompt=prompt)
    assert seen == [[k, k] for row in counts for k in row]
    assert not (seqs == tok.mask_token_id).any()


def test_even_split_is_diffusers_default_so_the_design_actually_changes_counts():
    """Control: the stock scheduler at the same steps commits the even split [2, 1, 1]
    front-loaded — our [1, 1, 2] differs, so the test above can fail."""
    stock = diffusers.BlockRefinementScheduler(block_length=4, num_inference_steps=3)
    assert stock.get_num_transfer_tokens(4, 3).tolist() == [2, 1, 1]
    prompt = torch.tensor([[0, 1, 2, 3]])
    _, seen, _ = _run([1, 1, 2], block_length=4, gen_length=8, prompt=prompt)
    assert seen == [[1], [1], [2], [1], [1], [2]]


def test_pipeline_default_threshold_overrides_the_counts():
    """With the pipeline's threshold < 1, diffusers commits every position above it: the
    counts become floors (documented), so exact counts need threshold=1.0."""
    prompt = torch.tensor([[0, 1, 2, 3]])
    _, seen, _ = _run([1, 1, 1, 1], block_length=4, gen_length=4, prompt=prompt, threshold=0.0)
    assert seen[0] == [4]


def test_config_round_trip():
    s = block_refinement_scheduler([[2, 2], [3, 1]])
    t = type(s).from_config(s.config)
    assert t.counts == ((2, 2), (3, 1)) and t.config.block_length == 4 and t.config.num_inference_steps == 2


@pytest.mark.parametrize("kw, match", [
    (dict(block_length=4, gen_length=8, prompt=torch.tensor([[0, 1]])), "counts: this block has 2 masked"),
    (dict(block_length=4, gen_length=16, prompt=torch.tensor([[0, 1, 2, 3]])), "counts: designed for 2"),
])
def test_pipeline_mismatches_are_refused_with_the_fix(kw, match):
    with pytest.raises(ValueError, match=match):
        _run([[2, 2], [1, 3]], **kw)


def test_wrong_steps_are_refused():
    tok = _tokenizer()
    sched = block_refinement_scheduler([2, 2])
    pipe = diffusers.LLaDA2Pipeline(model=TinyModel(len(tok), tok.mask_token_id), scheduler=sched, tokenizer=tok)
    pipe.set_progress_bar_config(disable=True)
    with pytest.raises(ValueError, match="num_inference_steps: .* pass num_inference_steps=2"):
        pipe(input_ids=torch.tensor([[0, 1, 2, 3]]), gen_length=4, block_length=4, num_inference_steps=3,
             threshold=1.0, output_type="seq")


@pytest.mark.parametrize("counts, kw, match", [
    ([], {}, "counts: empty"),
    ([2, 0, 2], {}, "counts: block 0 has a step committing 0"),
    ([[2, 2], [4]], {}, "counts: every block needs the same number of steps"),
    ([[2, 2], [1, 2]], {}, "counts: block 1 commits 3"),
    ([2, 2], {"block_length": 5}, "counts: block 0 commits 4"),
    ([2.0, 2], {}, "counts: block 0 has 2.0"),
    ([2, [2]], {}, "counts: mixes"),
    (5, {}, "counts: expected a list"),
])
def test_bad_counts(counts, kw, match):
    with pytest.raises(ValueError, match=match):
        check_counts(counts, **kw)
