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

from mdmtheory.exports.diffusers import block_refinement_scheduler, check_counts, scheduler_config  # noqa: E402

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
    (dict(block_length=4, gen_length=8, prompt=torch.tensor([[0, 1]])), "input_ids: the prompt has 2 tokens"),
    (dict(block_length=4, gen_length=16, prompt=torch.tensor([[0, 1, 2, 3]])), "gen_length: the counts are designed for 2"),
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


# -- the printed export, run as printed (issue 26 §3.2-3) ---------------------------------------
class CountingModel(TinyModel):
    """TinyModel counting its forward calls."""

    calls = 0

    def forward(self, x, attention_mask=None, position_ids=None):
        self.calls += 1
        return super().forward(x, attention_mask=attention_mask, position_ids=position_ids)


def _markov_rows(path, d, n=300, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    x = np.zeros((n, d), dtype=np.int64)
    x[:, 0] = rng.integers(0, 2, n)
    for j in range(1, d):
        x[:, j] = np.where(rng.random(n) < 0.9, x[:, j - 1], 1 - x[:, j - 1])
    np.save(path, x)


def _run_printed(export, prompt_len):
    """The export's ``pipeline_call`` and its ``python`` line, each run as printed through
    diffusers' LLaDA2Pipeline; returns [(model calls, generated length, committed per step)]."""
    tok = _tokenizer()
    results = []
    for how in ("pipeline_call", "python"):
        model = CountingModel(len(tok), tok.mask_token_id)
        input_ids = torch.zeros((1, prompt_len), dtype=torch.long)
        if how == "pipeline_call":
            sched = block_refinement_scheduler(export["counts"] if len(export["counts"]) > 1 else export["counts"][0],
                                               block_length=export["block_length"])
            out = diffusers.LLaDA2Pipeline(model, sched, tok)(input_ids=input_ids, **export["pipeline_call"])
        else:
            ns = {"model": model, "tokenizer": tok, "input_ids": input_ids}
            exec(export["python"], ns)  # noqa: S102 - the printed line, literally
            out = ns["out"]
        results.append((model.calls, out.sequences.shape[1]))
    return results


@pytest.mark.parametrize("response, prompt, blocks", [(16, 0, "16,8,4"), (8, 4, "8,4")])
def test_printed_diffusers_export_runs_the_design(tmp_path, capsys, response, prompt, blocks):
    """`mdmtheory design --data markov16.npy --forwards 4 --block-length 16,8,4 --format diffusers`
    (and a design with a prompt): the printed pipeline_call and python line, passed to
    LLaDA2Pipeline as printed, generate the designed tokens in the designed forwards (without
    gen_length the pipeline would generate its default 2,048 tokens in 512 forwards)."""
    import json

    from mdmtheory.cli import main

    _markov_rows(tmp_path / "markov.npy", response + prompt)
    capsys.readouterr()
    argv = ["design", "--data", str(tmp_path / "markov.npy"), "--forwards", "4", "--block-length", blocks,
            "--format", "diffusers"] + (["--prompt-length", str(prompt)] if prompt else [])
    assert main(argv + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    e = out["export"]
    B = out["best"]["block_length"]
    assert out["best"]["forwards"] == 4 and e["forwards"] == 4 and e["pipeline_call"]["gen_length"] == response
    padded = -(-prompt // B) * B  # the note: left-pad the prompt to a multiple of block_length
    assert (f"left-pad the prompt to {padded} tokens" in e["note"]) == (padded != prompt)
    for calls, length in _run_printed(e, prompt_len=padded):
        assert calls == 4 and length == response, (B, calls, length)
    if padded != prompt:  # the prompt as it is, unpadded, is refused with the fix
        with pytest.raises(ValueError, match=rf"^input_ids: the prompt has {prompt} tokens.*left-pad it to {padded}"):
            _run_printed(e, prompt_len=prompt)
    # and the text output prints the same call
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert f"pipeline_call: {e['pipeline_call']}" in text and f"python: {e['python']}" in text


def test_gen_length_not_a_multiple_of_block_length_is_refused():
    # counts [2, 3, 3], B = 8, prompt 8, gen_length 12: the last block's 4 padding positions
    # would take part of each step's count (only [2, 0, 2] landed in the response)
    with pytest.raises(ValueError, match=r"^gen_length: 12 is not a multiple of block_length=8.*gen_length=16 or 8"):
        _run([2, 3, 3], block_length=8, gen_length=12, prompt=torch.zeros((1, 8), dtype=torch.long))
    with pytest.raises(ValueError, match=r"^gen_length: 12 is not a multiple"):
        scheduler_config([2, 3, 3], gen_length=12)


def test_gen_length_below_the_steps_names_gen_length():
    # the pipeline lowers num_inference_steps to gen_length // minimal_topk = 2: the user
    # passed num_inference_steps=4 and minimal_topk=1 already; the fix is gen_length
    with pytest.raises(ValueError, match=r"^gen_length: 2 is not a multiple of block_length=4.*gen_length=4"):
        _run([1, 1, 1, 1], block_length=4, gen_length=2, prompt=torch.zeros((1, 4), dtype=torch.long))


def test_per_block_counts_need_their_gen_length():
    with pytest.raises(ValueError, match=r"^gen_length: the counts are designed for 2 blocks of 4; pass gen_length=8"):
        _run([[2, 2], [1, 3]], block_length=4, gen_length=4, prompt=torch.zeros((1, 4), dtype=torch.long))
    assert scheduler_config([[2, 2], [1, 3]])["pipeline_call"]["gen_length"] == 8
    assert scheduler_config([2, 2], gen_length=12)["forwards"] == 6
