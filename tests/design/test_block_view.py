"""The block design scores each block on the view the pipeline runs (issue 39 items 1 and 2).

diffusers' ``LLaDA2Pipeline`` runs the model on ``x[:, :current_window_end]`` (the later blocks
absent); LLaDA's ``generate`` on the whole row (the later blocks masked). The model here makes
the difference visible: its logits at every position add the number of *later* positions
present in the input, so a block sees a different model in the two views. The test runs
diffusers' own pipeline with it, records every model input, and checks that the design's
per-block estimates in the ``"truncated"`` view were made on inputs of exactly the pipeline's
shape and prefix, that their values are the closed form of this model on those inputs, and
that the ``"masked"`` view gives another estimate.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")  # pipeline_reference (the model base LLaDA2Pipeline reads)

from pipeline_reference import PipelineModel  # noqa: E402

from mdmtheory.design import estimate_block_profiles  # noqa: E402
from mdmtheory.design.blocks import FORMAT_VIEWS, estimate_design_blocks  # noqa: E402
from mdmtheory.design.from_data import design_blocks_from_data  # noqa: E402
from mdmtheory.design.profile import profile_rises  # noqa: E402

V, MASK = 3, 2  # tokens 0, 1 and the mask
BETA = 0.4


class LaterCount(PipelineModel):
    """logits[i] = (0, BETA * #later positions present in the input, -inf for the mask), the
    same at every position of one input; records each input row (as a tuple)."""

    def __init__(self):
        super().__init__()
        self.mask_id = MASK
        self.inputs = []

    def forward(self, x, attention_mask=None, position_ids=None):
        self.inputs += [tuple(r) for r in x.tolist()]
        B, L = x.shape
        later = (L - 1 - torch.arange(L, dtype=torch.float64))  # positions after i that are present
        out = torch.zeros(B, L, V, dtype=torch.float64)
        out[..., 1] = BETA * later
        out[..., MASK] = -torch.inf
        return SimpleNamespace(logits=out)


def _nll(tok, later):
    """-log q(tok) of this model at a position with ``later`` positions after it in the input."""
    z = np.array([0.0, BETA * later])
    return float(np.logaddexp(z[0], z[1]) - z[tok])


def test_truncated_view_feeds_the_model_what_llada2pipeline_feeds_it():
    diffusers = pytest.importorskip("diffusers")
    pytest.importorskip("tokenizers")
    pytest.importorskip("transformers")
    from pipeline_reference import tokenizer  # a = 0, b = 1, [MASK] = 2
    from mdmtheory.exports.diffusers import block_refinement_scheduler

    g, B, nb = 2, 2, 3
    d = g + nb * B
    rows = np.array([[0, 1, 0, 0, 1, 1, 0, 1], [1, 1, 0, 1, 0, 0, 1, 0]])
    # the pipeline's own loop, one designed count list per block
    tok = tokenizer()
    assert tok.mask_token_id == MASK
    pipe_model = LaterCount()
    pipe = diffusers.LLaDA2Pipeline(model=pipe_model, scheduler=block_refinement_scheduler([[1, 1]] * nb,
                                                                                           block_length=B),
                                    tokenizer=tok)
    pipe.set_progress_bar_config(disable=True)
    pipe(input_ids=torch.tensor(rows[:1, :g]), gen_length=nb * B, block_length=B, num_inference_steps=2,
         threshold=1.0, editing_threshold=None, eos_early_stop=False, temperature=0.0, output_type="seq")
    pipe_lengths = sorted({len(r) for r in pipe_model.inputs})
    assert pipe_lengths == [g + (b + 1) * B for b in range(nb)]  # the truncated window, as read
    for r in pipe_model.inputs:  # prompt, then earlier blocks filled, the current block partly masked
        b = (len(r) - g) // B - 1
        assert r[:g] == tuple(rows[0, :g])
        assert MASK not in r[:g + b * B]

    design_model = LaterCount()
    ests = estimate_block_profiles(design_model, rows, B, prompt_length=g, n_per_level=4, view="truncated")
    lengths = sorted({len(r) for r in design_model.inputs if MASK in r})  # the probe forward is all masks
    assert lengths == pipe_lengths
    for r in design_model.inputs:
        if all(t == MASK for t in r):
            continue
        b = (len(r) - g) // B - 1
        assert any(r[:g + b * B] == tuple(x[:g + b * B]) for x in rows)  # prompt and earlier blocks, unmasked
        assert MASK not in r[:g + b * B]
    # closed form: every masked position of block b sees L - 1 - i later positions of an input of
    # L = g + (b + 1) B; the level-m value is the mean over rows, revealed sets and masked positions,
    # computed here by enumerating every revealed set of the block (the draws cover them uniformly)
    import itertools

    for b, e in enumerate(ests):
        L = g + (b + 1) * B
        for m in range(B):
            vals = [np.mean([_nll(x[g + b * B + j], L - 1 - (g + b * B + j)) for j in range(B) if j not in A])
                    for x in rows for A in itertools.combinations(range(B), m)]
            lo, hi = min(vals), max(vals)
            assert lo - 1e-9 <= e.values[m] <= hi + 1e-9
            if hi - lo < 1e-12:  # every draw has the same value: the estimate is that value
                assert e.values[m] == pytest.approx(lo, abs=1e-9)

    masked = estimate_block_profiles(LaterCount(), rows, B, prompt_length=g, n_per_level=4, view="masked")
    assert not np.allclose(masked[0].values, ests[0].values)  # block 0 sees 4 more positions there
    np.testing.assert_allclose(masked[-1].values, ests[-1].values, atol=1e-12)  # the last block: same input
    assert FORMAT_VIEWS["diffusers"] == "truncated" and FORMAT_VIEWS["llada"] == "masked"


def test_masked_view_is_the_full_row_with_later_blocks_masked():
    """What LLaDA's generate feeds: the whole row, later blocks all mask tokens; the values are
    this model's closed form with d - 1 - i later positions."""
    g, B = 0, 2
    rows = np.array([[1, 1, 1, 1], [1, 1, 1, 1]])
    model = LaterCount()
    ests = estimate_block_profiles(model, rows, B, prompt_length=g, n_per_level=3, view="masked")
    assert {len(r) for r in model.inputs} == {4}
    for r in model.inputs:
        if MASK in r[:2] or all(t == MASK for t in r):
            assert r[2:] == (MASK, MASK) or all(t == MASK for t in r)
    for b, e in enumerate(ests):
        for m in range(B):  # all rows 1: a level's value is the mean over the masked positions
            import itertools

            vals = [np.mean([_nll(1, 3 - (b * B + j)) for j in range(B) if j not in A])
                    for A in itertools.combinations(range(B), m)]
            assert min(vals) - 1e-9 <= e.values[m] <= max(vals) + 1e-9
    tr = estimate_block_profiles(LaterCount(), rows, B, n_per_level=3, view="truncated")
    assert tr[0].values[B - 1] == pytest.approx(_nll(1, 0))  # block 0 truncated: its last position has nothing after
    assert ests[0].values[B - 1] == pytest.approx(_nll(1, 2))  # masked: two later positions


def test_view_is_named_in_the_record_and_checked():
    rows = np.array([[0, 1, 0, 1], [1, 1, 0, 0], [0, 0, 1, 1]])
    res = estimate_design_blocks(LaterCount(), rows, forwards=4, block_lengths=[2], n_per_level=4, view="truncated")
    assert res.view == "truncated" and res.to_dict()["view"] == "truncated" and "truncated" in res.note
    res = design_blocks_from_data(rows, K=2, model=LaterCount(), forwards=4, block_lengths=[2], n_per_level=4)
    assert res.view == "masked"
    with pytest.raises(ValueError, match="^view:"):
        estimate_design_blocks(LaterCount(), rows, forwards=4, block_lengths=[2], n_per_level=4, view="absent")
    with pytest.raises(ValueError, match="^view:"):
        design_blocks_from_data(rows, K=2, forwards=4, block_lengths=[2], view=None)


class Rising(torch.nn.Module):
    """A model that gets worse the more it is shown: q(true token) falls with the revealed count
    (it predicts the opposite of the majority of what it sees), so its profile rises."""

    def __init__(self):
        super().__init__()
        self.mask_id = MASK
        self.anchor = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x, attention_mask=None, position_ids=None):
        B, L = x.shape
        shown = (x != MASK).sum(dim=1, keepdim=True).to(torch.float64)  # (B, 1)
        out = torch.zeros(B, L, V, dtype=torch.float64)
        out[..., 0] = 2.0 * shown  # the data are all 1: more shown, less mass on 1
        out[..., MASK] = -torch.inf
        return SimpleNamespace(logits=out)


def test_a_rising_profile_is_flagged_and_the_negative_note_says_so():
    rows = np.ones((4, 6), dtype=np.int64)
    res = estimate_design_blocks(Rising(), rows, forwards=6, block_lengths=[3, 6], n_per_level=3)
    assert set(res.rising) == {3, 6}
    ests = estimate_block_profiles(Rising(), rows, 6, n_per_level=3)
    assert np.all(np.diff(ests[0].values) > 0)  # by hand: c(m) = log(1 + e^{2m}), rising
    np.testing.assert_allclose(ests[0].values, [math.log1p(math.exp(2.0 * m)) for m in range(6)], rtol=1e-9)
    assert profile_rises(ests[0].values, ests[0].stderr)
    assert not profile_rises([3.0, 2.0, 1.0], [0.1, 0.1, 0.1])
    assert not profile_rises([1.0, 1.05, 0.5], [0.1, 0.1, 0.1])  # within three standard errors
    from mdmtheory.cli.design import _block_lines

    r = {"response_length": 6, "forwards_asked": 6, "method": "estimated", "view": "masked", "rising": [3],
         "candidates": [{"block_length": 3, "steps_per_block": 3, "forwards": 6, "path_kl": -0.2,
                         "path_kl_ci": [-0.4, 0.01]},
                        {"block_length": 6, "steps_per_block": 6, "forwards": 6, "path_kl": -0.1,
                         "path_kl_ci": [-0.3, 0.02]}],
         "best": {"block_length": 3, "steps_per_block": 3, "forwards": 6, "counts": [[1, 1, 1], [1, 1, 1]]},
         "separation": {"tied": [6], "factor": 4.0, "n_per_level": 40, "negative": [3, 6]},
         "export": {"format": "json"}}
    text = "\n".join(_block_lines(r))
    assert "noise, or a model whose profile rises" in text
    assert "WARNING: the block profiles rise" in text and "block length(s) 3;" in text
    r["rising"] = []
    assert "WARNING" not in "\n".join(_block_lines(r))


def test_a_fixed_length_model_is_refused_in_the_truncated_view_before_any_forward():
    from mdmtheory.bridge.tiny import TinyConfig, TinyMDM

    m = TinyMDM(TinyConfig(vocab_size=3, seq_len=4, d_model=8, n_layers=1, n_heads=2, d_ff=8))
    rows = np.array([[0, 1, 0, 1], [1, 1, 0, 0]])
    with pytest.raises(ValueError, match="^view: 'truncated'.*fixed length") as e:
        estimate_block_profiles(m, rows, 2, n_per_level=2, view="truncated")
    assert "view='masked'" in str(e.value)
    assert len(estimate_block_profiles(m, rows, 4, n_per_level=2, view="truncated")) == 1  # one block: nothing cut
    assert len(estimate_block_profiles(m, rows, 2, n_per_level=2, view="masked")) == 2
