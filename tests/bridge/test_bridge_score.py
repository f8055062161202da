"""MaskedModel.score without copying the logits (issue 18, throughput) against a direct reference.

The reference is the definition, in float64 on the raw logits: for a masked position j (reading
the logits row j, or j − 1 with ``shift``), log_softmax over the outcome columns ``vocab``,
taken at the target's column. Every way the outcome columns can sit in the logits is covered:
every id but the mask (mask in the middle: the log-sum-exp minus the mask's share), one slice,
an arbitrary gather; and rows where the mask holds most of the mass (the exact recompute).
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from mdmtheory import bridge  # noqa: E402

V, D = 12, 6


def _logits_model(dtype, *, mask_id, hot_mask=False):
    gen = torch.Generator().manual_seed(0)
    table = torch.randn(V + 1, D, V, generator=gen, dtype=torch.float64) * 3

    def f(ids):
        # depends on the ids (the sum of the row's tokens) so rows differ
        out = table[(ids.sum(dim=1) % (V + 1))].clone()
        if hot_mask:
            out[:, ::2, mask_id] = 40.0  # the mask column holds almost all the mass at even rows
        return out.to(dtype)

    return f


def _reference(f, ids, tgt_tokens, vocab, shift):
    raw = f(ids).to(torch.float64)
    if shift:
        raw = torch.cat([raw[:, :1], raw[:, :-1]], dim=1)
    lp = torch.log_softmax(raw[..., vocab], dim=-1)
    col = {int(v): k for k, v in enumerate(vocab)}
    out = torch.zeros(ids.shape, dtype=torch.float64)
    for b in range(ids.shape[0]):
        for j in range(ids.shape[1]):
            out[b, j] = lp[b, j, col[int(tgt_tokens[b, j])]]
    return out


VOCABS = {
    "all_but_mask": (5, None),  # mask id 5 in the middle: every other column is an outcome
    "slice": (0, list(range(3, 10))),
    "gather": (1, [7, 2, 9, 0, 11]),
}


@pytest.mark.parametrize("name", sorted(VOCABS))
@pytest.mark.parametrize("shift", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=str)
@pytest.mark.parametrize("hot_mask", [False, True])
def test_score_is_log_softmax_over_the_outcomes(name, shift, dtype, hot_mask):
    mask_id, vocab = VOCABS[name]
    f = _logits_model(dtype, mask_id=mask_id, hot_mask=hot_mask)
    m = bridge.MaskedModel(f, mask_id=mask_id, vocab=vocab, shift=shift)
    m.resolve(D)
    voc = torch.as_tensor(m.vocab)
    rng = np.random.default_rng(1)
    target = rng.integers(0, m.K, size=(9, D))
    x = np.where(rng.random((9, D)) < 0.5, -1, target)
    got = m.score(x, target)
    ids = torch.where(torch.as_tensor(x) < 0, mask_id, voc[torch.as_tensor(x).clamp(min=0)])
    want = _reference(f, ids, voc[torch.as_tensor(target)], voc, shift)
    want = torch.where(torch.as_tensor(x) < 0, want, torch.zeros((), dtype=torch.float64))
    tol = 1e-12 if dtype == torch.float64 else 2e-5 * 40
    torch.testing.assert_close(got, want, atol=tol, rtol=0)
    # a column range scores those positions only, the same values
    torch.testing.assert_close(m._score(x, target, 2, 5), got[:, 2:5], atol=0, rtol=0)


def test_nan_at_a_scored_position_is_refused_and_an_all_minus_inf_row_named():
    def nan(ids):
        out = torch.zeros(ids.shape + (4,))
        out[:, 1, 2] = float("nan")
        return out

    m = bridge.MaskedModel(nan, mask_id=1)  # outcomes 0, 2, 3: every id but the mask
    with pytest.raises(ValueError, match=r"^model: returned NaN or \+inf logits"):
        m.score(np.full((2, 3), -1), np.zeros((2, 3), dtype=int))

    def dead(ids):  # every outcome -inf, the mask column finite
        out = torch.full(ids.shape + (4,), -torch.inf)
        out[..., 1] = 0.0
        return out

    with pytest.raises(ValueError, match=r"^model: gives -inf to every outcome at a masked position"):
        bridge.MaskedModel(dead, mask_id=1).score(np.full((2, 3), -1), np.zeros((2, 3), dtype=int))

    def all_dead(ids):
        return torch.full(ids.shape + (4,), -torch.inf)

    with pytest.raises(ValueError, match=r"^model: gives -inf to every outcome at a masked position"):
        bridge.MaskedModel(all_dead, mask_id=1).score(np.full((2, 3), -1), np.zeros((2, 3), dtype=int))


def test_score_in_many_small_chunks_is_the_same(monkeypatch):
    """The log-sum-exp runs over chunks of copied rows; chunks of 2 rows give the same values."""
    from mdmtheory.bridge import model as model_mod

    f = _logits_model(torch.float32, mask_id=5)
    m = bridge.MaskedModel(f, mask_id=5)
    rng = np.random.default_rng(2)
    target = rng.integers(0, V - 1, size=(7, D))
    x = np.where(rng.random((7, D)) < 0.6, -1, target)
    whole = m.score(x, target)
    monkeypatch.setattr(model_mod, "_LSE_CHUNK", 2 * V)
    torch.testing.assert_close(m.score(x, target), whole, atol=0, rtol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("offset", [120.0, -300.0, 800.0, -900.0])
def test_score_of_huge_or_tiny_logits_is_shifted_exactly(dtype, offset):
    """Σ exp ℓ overflows (ℓ > 88 in float32, > 709 in float64) or underflows: those rows are
    recomputed shifted by their maximum; the result is the log-softmax of the definition."""
    base = _logits_model(torch.float64, mask_id=5)

    def f(ids):
        out = base(ids)
        out[:, 1::2] += offset  # odd positions shifted
        return out.to(dtype)

    m = bridge.MaskedModel(f, mask_id=5)
    m.resolve(D)
    voc = torch.as_tensor(m.vocab)
    rng = np.random.default_rng(3)
    target = rng.integers(0, m.K, size=(5, D))
    x = np.full((5, D), -1)
    got = m.score(x, target)
    ids = torch.full((5, D), 5)
    want = _reference(f, ids, voc[torch.as_tensor(target)], voc, False)
    torch.testing.assert_close(got, want, atol=1e-12 if dtype == torch.float64 else 1e-3, rtol=0)
