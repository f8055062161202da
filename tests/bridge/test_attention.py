"""Attention diagnostics (issue 13): metrics against brute force, hand-built models whose
anchors are known, the memory-bounded mode against the full one, and the sampling loop
against the exact law of a small Joint."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from mdmtheory import Schedule  # noqa: E402
from mdmtheory.bridge import attention as att  # noqa: E402
from mdmtheory.bridge import MaskedModel  # noqa: E402
from mdmtheory.report import plots  # noqa: E402
from mdmtheory.samplers import ConfidencePlanner, ThresholdPlanner  # noqa: E402

torch.set_num_threads(1)


# -- stand-in models ---------------------------------------------------------------------
class AnchorModel(nn.Module):
    """Hand-built attention whose anchor is known: in layer l every query row puts weight
    ``w[h]`` (head h) on the anchor and spreads the rest uniformly; the anchor is
    ``before[l]`` while fewer than ``switch`` positions are revealed, then ``after[l]``.
    Logits are uniform over the K outcomes (mask column -inf)."""

    def __init__(self, d, K, before, after, switch, weights=(0.5, 0.3, 0.7)):
        super().__init__()
        self.d, self.K, self.mask_id = d, K, K
        self.before, self.after, self.switch = list(before), list(after), switch
        self.weights = list(weights)
        self.dummy = nn.Parameter(torch.zeros(1))

    def forward(self, ids, output_attentions=False):
        B, L = ids.shape
        n_rev = (ids != self.mask_id).sum(dim=1)  # (B,)
        logits = torch.zeros(B, L, self.K + 1)
        logits[..., self.mask_id] = float("-inf")
        atts = []
        for a0, a1 in zip(self.before, self.after):
            anchor = torch.where(n_rev < self.switch, a0, a1)  # (B,)
            heads = []
            for w in self.weights:
                A = torch.full((B, L, L), (1 - w) / (L - 1))
                A[torch.arange(B), :, anchor] = w
                heads.append(A)
            atts.append(torch.stack(heads, dim=1))
        return (logits, tuple(atts) if output_attentions else None)


class ExactTableModel(nn.Module):
    """Logits = log of the exact conditionals of a Joint (a brute-force ExactModel), with
    random but fixed attention from a seeded generator (rows softmax-normalized)."""

    def __init__(self, table, n_layers=2, n_heads=2, perm=None):
        super().__init__()
        self.table = np.asarray(table)
        self.d, self.K = self.table.ndim, self.table.shape[0]
        self.mask_id = self.K
        g = torch.Generator().manual_seed(1)
        self.qk = torch.randn(n_layers, n_heads, self.K + 1, self.d, 3, generator=g, dtype=torch.float64)
        self.perm = list(range(n_heads)) if perm is None else list(perm)
        self.dummy = nn.Parameter(torch.zeros(1))

    def conditionals(self, ids):
        B, d = ids.shape
        out = np.zeros((B, d, self.K))
        for b in range(B):
            rev = [k for k in range(d) if ids[b, k] != self.mask_id]
            for j in range(d):
                if j in rev:
                    out[b, j] = 1.0 / self.K
                    continue
                idx = tuple(int(ids[b, k]) if k in rev else slice(None) for k in range(d))
                sub = self.table[idx]  # axes: the masked positions in order
                masked = [k for k in range(d) if k not in rev]
                axis = masked.index(j)
                m = sub.sum(axis=tuple(a for a in range(sub.ndim) if a != axis))
                out[b, j] = m / m.sum()
        return out

    def forward(self, ids, output_attentions=False):
        B, L = ids.shape
        probs = torch.as_tensor(self.conditionals(ids.numpy()))
        logits = torch.cat([probs.log(), torch.full((B, L, 1), float("-inf"), dtype=torch.float64)], dim=-1)
        atts = []
        pos = torch.arange(L)
        for layer in self.qk:
            heads = []
            for h in self.perm:
                f = layer[h][ids, pos[None, :]]  # (B, L, 3) features of token and position
                scores = f @ f.transpose(-1, -2)
                heads.append(scores.softmax(dim=-1))
            atts.append(torch.stack(heads, dim=1))
        return (logits, tuple(atts) if output_attentions else None)


def dirichlet_maps(shape, L, seed):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.ones(L), size=shape + (L,))


# -- metrics: brute force ----------------------------------------------------------------
def test_received_attention_is_the_column_mean():
    A = dirichlet_maps((3, 2), 6, 0)
    s = att.received_attention(A)
    for a, b in itertools.product(range(3), range(2)):
        for j in range(6):
            assert s[a, b, j] == pytest.approx(sum(A[a, b, i, j] for i in range(6)) / 6, abs=1e-15)
    np.testing.assert_allclose(s.sum(axis=-1), 1.0, atol=1e-12)


def test_received_attention_accepts_torch():
    A = dirichlet_maps((2,), 5, 1)
    np.testing.assert_array_equal(att.received_attention(torch.as_tensor(A)), att.received_attention(A))


def test_anchor_rule_threshold_by_hand():
    s = np.full(40, 0.005)
    s[[3, 11]] = [0.4, 0.42]  # two spikes among 40: z ~ sqrt(38 / 2) > 3, both pass
    mu, sigma = s.mean(), s.std()
    assert all(s[j] > mu + 3 * sigma for j in (3, 11))
    np.testing.assert_array_equal(np.flatnonzero(att.anchors(s)), [3, 11])
    # the paper's additive script rule (s > mu + 3) passes nothing and falls back to the arg max;
    # ours does not follow it
    assert not np.any(s > mu + 3.0)


def test_anchor_fallback_is_the_argmax_lowest_index_on_ties():
    s = np.array([0.2, 0.3, 0.3, 0.2])
    np.testing.assert_array_equal(att.anchors(s), [False, True, False, False])
    # eps = 0: every position above the mean passes
    np.testing.assert_array_equal(att.anchors(s, eps=0.0), [False, True, True, False])
    # uniform: nothing passes, the fallback is position 0
    np.testing.assert_array_equal(np.flatnonzero(att.anchors(np.full(7, 1 / 7))), [0])


@given(st.integers(2, 10), st.integers(0, 10**6))
def test_samuelson_short_sequences_always_fall_back(L, seed):
    """max_j (s_j - mu)/sigma <= sqrt(L - 1) <= 3 for L <= 10: eps = 3 is always the arg max."""
    s = np.random.default_rng(seed).dirichlet(np.full(L, 0.3))
    a = att.anchors(s)
    assert a.sum() == 1 and a[np.argmax(s)]


@given(st.integers(11, 40), st.integers(0, 10**6))
def test_one_spike_passes_when_long_enough(L, seed):
    """A single spike among L - 1 equal values has z = sqrt(L - 1) > 3 for L >= 11."""
    rng = np.random.default_rng(seed)
    s = np.full(L, rng.uniform(0.001, 0.01))
    j = int(rng.integers(L))
    s[j] += rng.uniform(0.05, 1.0)
    assert math.sqrt(L - 1) > 3
    np.testing.assert_array_equal(np.flatnonzero(att.anchors(s)), [j])


@given(st.integers(0, 10**6), st.integers(2, 4))
def test_absorption_over_a_partition_sums_to_one(seed, parts):
    rng = np.random.default_rng(seed)
    L = 9
    A = dirichlet_maps((4,), L, seed)
    label = rng.integers(parts, size=L)
    total = sum(att.absorption(A, label == p) for p in range(parts))
    np.testing.assert_allclose(total, 1.0, atol=1e-12)
    # brute force for one set
    S = np.flatnonzero(label == 0)
    for a in range(4):
        want = sum(A[a, i, j] for i in range(L) for j in S) / A[a].sum()
        assert att.absorption(A[a], S) == pytest.approx(want, abs=1e-14)


def test_absorption_stats_mean_and_std_over_samples():
    A = dirichlet_maps((5, 3), 6, 2)
    v = att.absorption(A, [0])  # (5, 3)
    mean, std = att.absorption_stats(v)
    np.testing.assert_allclose(mean, [np.mean(v[:, k]) for k in range(3)])
    np.testing.assert_allclose(std, [np.sqrt(np.mean((v[:, k] - v[:, k].mean()) ** 2)) for k in range(3)])


def test_drift_counts_moves_and_distance():
    L, T = 16, 6
    s = np.full((T, L), 0.02)
    tops = [2, 2, 2, 9, 9, 4]
    for t, j in enumerate(tops):
        s[t, j] = 0.7
    s /= s.sum(axis=1, keepdims=True)
    r = att.drift(s)
    assert int(r.moves) == 2
    np.testing.assert_array_equal(r.changed, [False, False, True, False, True])
    np.testing.assert_array_equal(r.shift, [0, 0, 7, 0, 5])
    np.testing.assert_array_equal(r.jaccard, [0, 0, 1, 0, 1])
    np.testing.assert_array_equal(r.top, tops)
    assert r.rate == pytest.approx(2 / 5)
    assert r.mean_shift == pytest.approx(12 / 5)


def test_drift_jaccard_of_overlapping_sets():
    L = 30
    s = np.full((2, L), 0.01)
    s[0, [1, 2]] = 0.5
    s[1, [2, 3]] = 0.5
    r = att.drift(s)
    np.testing.assert_array_equal(r.anchors[0].nonzero()[0], [1, 2])
    assert r.jaccard[0] == pytest.approx(1 - 1 / 3)


def test_row_entropy_brute_force():
    A = dirichlet_maps((2,), 5, 3)
    A[0, 0] = [1, 0, 0, 0, 0]
    H = att.row_entropy(A)
    for a, i in itertools.product(range(2), range(5)):
        want = -sum(p * math.log(p) for p in A[a, i] if p > 0)
        assert H[a, i] == pytest.approx(want, abs=1e-13)
    assert H[0, 0] == 0.0


def test_masked_share_brute_force():
    L = 7
    A = dirichlet_maps((3,), L, 4)
    rng = np.random.default_rng(5)
    M = rng.random((3, L)) < 0.5
    M[:, 0] = True
    for q in ("all", "masked"):
        got = att.masked_share(A, M, queries=q)
        for a in range(3):
            rows = range(L) if q == "all" else [i for i in range(L) if M[a, i]]
            num = sum(A[a, i, j] for i in rows for j in range(L) if M[a, j])
            den = sum(A[a, i, j] for i in rows for j in range(L))
            assert got[a] == pytest.approx(num / den, abs=1e-14)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: att.received_attention(np.ones((3, 3))), "sum to 1"),
        (lambda: att.received_attention(-np.eye(3) + 2 * np.eye(3)[[1, 2, 0]]), "non-negative"),
        (lambda: att.received_attention(np.array([[np.nan, 1.0]])), "NaN"),
        (lambda: att.received_attention(np.ones(3) / 3), "queries, keys"),
        # empty axes: no NaN from a mean over nothing, no row that "sums to 1" by having no keys
        (lambda: att.received_attention(np.zeros((0, 3))), "one query row"),
        (lambda: att.absorption(np.zeros((2, 0, 3)), [0]), "one query row"),
        (lambda: att.row_entropy(np.zeros((2, 0))), "one key column"),
        (lambda: att.anchors(np.ones(3), eps=-1), "eps"),
        (lambda: att.anchors(np.ones(3), eps=float("nan")), "eps"),
        (lambda: att.absorption(np.eye(3), [5]), "S"),
        (lambda: att.absorption(np.eye(3), np.ones(4, dtype=bool)), "S"),
        (lambda: att.drift(np.ones((1, 4)) / 4), "T >= 2"),
        (lambda: att.masked_share(np.eye(3), np.zeros(3, dtype=bool), queries="masked"), "masked"),
        (lambda: att.masked_share(np.eye(3), np.ones(3, dtype=bool), queries="keys"), "queries"),
    ],
)
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# -- the sampling loop -------------------------------------------------------------------
D, K, SWITCH = 16, 3, 6
BEFORE, AFTER = [0, 4], [15, 9]


@pytest.fixture(scope="module")
def anchor_traces():
    model = AnchorModel(D, K, BEFORE, AFTER, SWITCH)
    sched = Schedule.constant(D, D)  # one token per step: step t sees t revealed positions
    full = att.trace_sampling(model, D, sched, n=3, seed=0, keep="full")
    small = att.trace_sampling(model, D, sched, n=3, seed=0, keep="summary")
    return model, full, small


def test_detector_finds_the_known_anchor_and_its_move(anchor_traces):
    _, full, _ = anchor_traces
    s = full.received()  # (n, T, layers, L)
    assert s.shape == (3, D, 2, D)
    for layer, (a0, a1) in enumerate(zip(BEFORE, AFTER)):
        a = att.anchors(s[:, :, layer])
        want = np.zeros((D, D), dtype=bool)
        want[:SWITCH, a0] = True
        want[SWITCH:, a1] = True
        for k in range(3):
            np.testing.assert_array_equal(a[k], want)
        r = att.drift(s[:, :, layer])
        np.testing.assert_array_equal(r.moves, [1, 1, 1])
        np.testing.assert_array_equal(r.changed[0], np.arange(D - 1) == SWITCH - 1)
        np.testing.assert_array_equal(r.shift[:, SWITCH - 1], [abs(a1 - a0)] * 3)
    summ = att.floating_summary(full)
    np.testing.assert_allclose(summ.drift_rate, 1 / (D - 1))
    np.testing.assert_allclose(summ.top_shift, [abs(a - b) / (D - 1) for a, b in zip(BEFORE, AFTER)])
    np.testing.assert_allclose(summ.n_anchors, 1.0)
    np.testing.assert_allclose(summ.fallback, 0.0)
    # absorption of the anchor = the head-averaged anchor weight (0.5 + 0.3 + 0.7) / 3
    np.testing.assert_allclose(summ.absorption_mean, 0.5, atol=1e-12)
    np.testing.assert_allclose(summ.absorption_std, 0.0, atol=1e-12)
    np.testing.assert_allclose(summ.top_share[0, [BEFORE[0], AFTER[0]]], [SWITCH / D, 1 - SWITCH / D])


def test_trace_records_the_sampler_path(anchor_traces):
    _, full, _ = anchor_traces
    assert full.active.all()
    np.testing.assert_array_equal(full.revealed.sum(axis=-1), np.broadcast_to(np.arange(D), (3, D)))
    np.testing.assert_array_equal(full.chosen.sum(axis=-1), 1)
    # the revealed set grows by the chosen positions
    np.testing.assert_array_equal(full.revealed[:, 1:], full.revealed[:, :-1] | full.chosen[:, :-1])
    assert full.samples.min() >= 0 and full.samples.max() < K


def test_memory_bounded_mode_gives_the_same_metrics(anchor_traces):
    _, full, small = anchor_traces
    assert small.maps is None
    for name in ("colsum_masked", "colsum_revealed", "entropy", "revealed", "chosen", "samples"):
        np.testing.assert_array_equal(getattr(small, name), getattr(full, name))
    a, b = att.floating_summary(full), att.floating_summary(small)
    for k, v in a.to_dict().items():
        assert v == b.to_dict()[k], k


def test_summary_columns_equal_the_metrics_of_the_full_maps():
    model = ExactTableModel(np.random.default_rng(0).dirichlet(np.ones(8)).reshape(2, 2, 2))
    tr = att.trace_sampling(model, 3, Schedule([1, 2]), n=5, seed=3, keep="full")
    maps = tr.maps  # (n, T, layers, L, L)
    np.testing.assert_allclose(tr.received(), att.received_attention(maps), atol=1e-14)
    np.testing.assert_allclose(tr.entropy, att.row_entropy(maps), atol=1e-14)
    masked = ~tr.revealed[:, :, None, :]
    summ = att.floating_summary(tr, eps=0.5)
    want = att.masked_share(maps, np.broadcast_to(masked, maps.shape[:-1])).mean(axis=1).mean(axis=0)
    np.testing.assert_allclose(summ.masked_share, want, atol=1e-14)
    want_ent = att.row_entropy(maps).mean(axis=-1).mean(axis=1).mean(axis=0)
    np.testing.assert_allclose(summ.entropy, want_ent, atol=1e-14)
    # absorption of the anchor set, brute force from the maps
    s = att.received_attention(maps)
    ab = att.absorption(maps, att.anchors(s, eps=0.5))
    np.testing.assert_allclose(summ.absorption_mean, ab.mean(axis=1).mean(axis=0), atol=1e-14)
    # masked-query received attention: mean of the masked rows
    sm = tr.received("masked")
    for a, t in itertools.product(range(5), range(2)):
        rows = np.flatnonzero(~tr.revealed[a, t])
        np.testing.assert_allclose(sm[a, t], maps[a, t][:, rows].mean(axis=1), atol=1e-14)


def test_metrics_are_invariant_to_head_order():
    table = np.random.default_rng(1).dirichlet(np.ones(8)).reshape(2, 2, 2)
    a = att.trace_sampling(ExactTableModel(table, n_heads=3), 3, Schedule([1, 1, 1]), n=6, seed=2, keep="full")
    b = att.trace_sampling(ExactTableModel(table, n_heads=3, perm=[2, 0, 1]), 3, Schedule([1, 1, 1]), n=6, seed=2, keep="full")
    np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_allclose(a.maps, b.maps, atol=1e-15)
    sa, sb = att.floating_summary(a, eps=0.5), att.floating_summary(b, eps=0.5)
    for k, v in sa.to_dict().items():
        if k != "queries":
            np.testing.assert_allclose(v, sb.to_dict()[k], atol=1e-12, err_msg=k)


def test_one_token_per_step_samples_follow_the_law():
    """With exact conditionals and k_t = 1 the factorized sampler is exact: z-scores < 5."""
    table = np.random.default_rng(7).dirichlet(np.ones(8)).reshape(2, 2, 2)
    n = 3000
    tr = att.trace_sampling(ExactTableModel(table, n_layers=1, n_heads=1), 3, Schedule([1, 1, 1]), n=n, seed=11)
    counts = np.zeros((2, 2, 2))
    np.add.at(counts, tuple(tr.samples.T), 1)
    p = table
    z = (counts / n - p) / np.sqrt(p * (1 - p) / n)
    assert np.max(np.abs(z)) < 5


def test_vocab_maps_outcomes_to_token_ids():
    """Outcome k is token vocab[k]: a model over 6 ids, mask id 0, outcomes at ids 5 and 2."""

    class Fixed(nn.Module):
        mask_id = 0

        def forward(self, ids, output_attentions=False):
            assert set(ids.unique().tolist()) <= {0, 2, 5}
            B, L = ids.shape
            logits = torch.full((B, L, 6), -30.0)
            logits[..., 2] = 0.0  # outcome 1 certain
            A = torch.full((B, 1, L, L), 1.0 / L)
            return logits, (A,)

    tr = att.trace_sampling(MaskedModel(Fixed(), mask_id=0, vocab=[5, 2]), 4, Schedule([2, 2]), n=2, seed=0)
    np.testing.assert_array_equal(tr.samples, 1)


def test_model_keywords_warn_and_match_the_masked_model():
    """mask_id=, vocab=, shift= belong to the model (MaskedModel); as keywords of trace_sampling they work for
    one release with a DeprecationWarning and give the same trace."""
    torch.manual_seed(0)
    model = tiny.TinyMDM(tiny.TinyConfig(vocab_size=3, seq_len=4, n_layers=1)).eval()
    new = att.trace_sampling(MaskedModel(model, mask_id=3, vocab=[2, 0, 1]), 4, Schedule([2, 2]), n=3, seed=1,
                             keep="full")
    with pytest.warns(DeprecationWarning, match=r"bridge.MaskedModel\(model, mask_id=..., vocab=...\)\)"):
        old = att.trace_sampling(model, 4, Schedule([2, 2]), n=3, seed=1, keep="full", mask_id=3, vocab=[2, 0, 1])
    np.testing.assert_array_equal(old.samples, new.samples)
    np.testing.assert_array_equal(old.maps, new.maps)
    with pytest.raises(TypeError, match="unexpected keyword argument 'mask'"):
        att.trace_sampling(model, 4, Schedule([2, 2]), n=3, seed=1, mask=3)


def test_adaptive_planners_drive_the_loop():
    table = np.random.default_rng(4).dirichlet(np.ones(16)).reshape(2, 2, 2, 2)
    model = ExactTableModel(table)
    tr = att.trace_sampling(model, 4, Schedule([2, 2]), ConfidencePlanner(), n=4, seed=0)
    assert tr.steps == 2 and tr.active.all()
    tr2 = att.trace_sampling(model, 4, None, ThresholdPlanner(0.6), n=8, seed=0)
    assert 1 <= tr2.steps <= 4
    # inactive steps come after the active ones and hold zeros
    assert np.all(np.diff(tr2.active.astype(int), axis=1) <= 0)
    assert np.all(tr2.colsum_masked[~tr2.active] == 0)
    summ = att.floating_summary(tr2, eps=0.5)
    assert np.all(np.isfinite(summ.drift_rate)) and summ.entropy.shape == (2,)


def test_trace_forward_shows_a_fixed_sink():
    """A causal stand-in with a BOS sink: absorption of {0} is its weight, drift is nil."""

    class Causal(nn.Module):
        mask_id = 3

        def forward(self, ids, output_attentions=False):
            B, L = ids.shape
            A = torch.zeros(B, 2, L, L)
            for i in range(L):
                A[:, :, i, : i + 1] = 0.2 / max(i, 1)
                A[:, :, i, 0] = 0.8 if i else 1.0
            return torch.zeros(B, L, 4), (A,)

    tr = att.trace_forward(Causal(), torch.zeros(4, 12, dtype=torch.long))
    mean, std = att.absorption_stats(att.absorption(tr.maps[:, 0], [0]))
    want = (1.0 + 0.8 * 11) / 12
    np.testing.assert_allclose(mean, want)
    np.testing.assert_allclose(std, 0.0, atol=1e-15)
    summ = att.floating_summary(tr)
    np.testing.assert_allclose(summ.top_share[0, 0], 1.0)
    np.testing.assert_allclose(summ.absorption_mean, want)


def test_extraction_errors_name_the_fix():
    class NoAttention(nn.Module):
        mask_id = 2

        def forward(self, ids, output_attentions=False):
            return torch.zeros(ids.shape[0], ids.shape[1], 3), None

    with pytest.raises(ValueError, match="eager"):
        att.trace_sampling(NoAttention(), 3, Schedule([3]), n=2, seed=0)
    model = AnchorModel(4, 2, [0], [1], 2)
    from mdmtheory.schedules import Grid

    with pytest.raises(ValueError, match="plan"):
        att.trace_sampling(model, 4, Grid.uniform(3), n=2, seed=0)
    with pytest.raises(ValueError, match="plan"):
        att.trace_sampling(model, 4, Schedule([1, 1]), n=2, seed=0)
    with pytest.raises(ValueError, match="keep"):
        att.trace_sampling(model, 4, Schedule([4]), n=2, seed=0, keep="maps")
    with pytest.raises(ValueError, match="seed"):
        att.trace_sampling(model, 4, Schedule([4]), n=2, seed=-1)
    with pytest.raises(ValueError, match="mask_id"):
        att.trace_sampling(lambda ids, output_attentions: None, 4, Schedule([4]), n=2, seed=0)


def test_plots_render(tmp_path, anchor_traces):
    import matplotlib.pyplot as plt

    _, full, _ = anchor_traces
    before = plt.get_fignums()
    fig = plots.plot_received(full.received()[0, :, 0])
    fig.savefig(tmp_path / "heat.png")
    summ = att.floating_summary(full)
    fig2 = plots.plot_absorption({"MDM": (summ.absorption_mean, summ.absorption_std), "AR": ([0.9, 0.8], [0.01, 0.02])})
    fig2.savefig(tmp_path / "abs.png")
    assert (tmp_path / "heat.png").stat().st_size > 0 and (tmp_path / "abs.png").stat().st_size > 0
    # drawn without pyplot: no figure registered for the caller to close (no backend switched)
    assert plt.get_fignums() == before


# -- the tiny MDM and its causal baseline (branch data11) --------------------------------
tiny = pytest.importorskip("mdmtheory.bridge.tiny")


def _head_mean(model, ids):
    with torch.no_grad():
        out = model(ids, output_attentions=True)
    return np.stack([a.double().mean(dim=1).numpy() for a in out.attentions], axis=1)


def test_tiny_mdm_trace_holds_its_own_attention():
    """The recorded maps are the model's head-averaged maps at the recorded states."""
    torch.manual_seed(0)
    model = tiny.TinyMDM(tiny.TinyConfig(vocab_size=4, seq_len=10, n_layers=2, n_heads=4)).eval()
    tr = att.trace_sampling(model, 10, Schedule.constant(10, 4), n=3, seed=1, keep="full")
    assert tr.maps.shape == (3, 4, 2, 10, 10)
    for t in range(4):
        ids = torch.as_tensor(np.where(tr.revealed[:, t], tr.samples, model.mask_id))
        np.testing.assert_allclose(tr.maps[:, t], _head_mean(model, ids), atol=1e-6)


def test_masked_model_is_unwrapped():
    from mdmtheory.bridge import MaskedModel

    torch.manual_seed(0)
    model = tiny.TinyMDM(tiny.TinyConfig(vocab_size=3, seq_len=6, n_layers=1)).eval()
    a = att.trace_sampling(MaskedModel(model, mask_id=model.mask_id), 6, Schedule([2, 2, 2]), n=2, seed=0)
    b = att.trace_sampling(model, 6, Schedule([2, 2, 2]), n=2, seed=0)
    np.testing.assert_array_equal(a.samples, b.samples)
    np.testing.assert_allclose(a.colsum_masked, b.colsum_masked)


def test_causal_baseline_maps_are_causal_with_bos_first():
    torch.manual_seed(0)
    model = tiny.TinyMDM(tiny.TinyConfig(vocab_size=4, seq_len=8, causal=True)).eval()
    x = torch.as_tensor(np.random.default_rng(0).integers(4, size=(5, 8)))
    tr = att.trace_forward(model, x)
    maps = tr.maps[:, 0]
    assert np.all(np.triu(maps, k=1) == 0)
    np.testing.assert_allclose(maps[..., 0, 0], 1.0)  # the BOS query sees only BOS
    # BOS (key 0) absorbs at least the first row's full weight: 1/8
    assert np.all(att.absorption(maps, [0]) >= 1 / 8 - 1e-12)


def test_teacher_forcing_reveals_the_targets():
    table = np.random.default_rng(3).dirichlet(np.ones(8)).reshape(2, 2, 2)
    x = np.array([[0, 1, 1], [1, 0, 0], [1, 1, 1]])
    model = ExactTableModel(table)
    tr = att.trace_sampling(model, 3, Schedule([1, 1, 1]), ConfidencePlanner(), n=3, seed=0, keep="full", targets=x)
    np.testing.assert_array_equal(tr.samples, x)
    # the planner saw the model's probabilities at the teacher-forced states
    for a, t in itertools.product(range(3), range(2)):
        ids = torch.as_tensor(np.where(tr.revealed[a, t], x[a], model.mask_id))[None]
        probs = model.conditionals(ids.numpy())[0]
        free = ~tr.revealed[a, t]
        chosen = ConfidencePlanner().select(t, 1, probs[None], free[None])[0]
        np.testing.assert_array_equal(tr.chosen[a, t], chosen)
    with pytest.raises(ValueError, match="targets"):
        att.trace_sampling(model, 3, Schedule([3]), n=2, seed=0, targets=x)


def test_hugging_face_model_through_eager_attention():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.BertConfig(
        vocab_size=8, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=16,
    )
    cfg._attn_implementation = "eager"
    model = transformers.BertForMaskedLM(cfg).eval()
    tr = att.trace_sampling(MaskedModel(model, mask_id=7), 6, Schedule([2, 2, 2]), n=3, seed=0, keep="full")
    assert tr.maps.shape == (3, 3, 2, 6, 6)
    for t in range(3):
        ids = torch.as_tensor(np.where(tr.revealed[:, t], tr.samples, 7))
        with torch.no_grad():
            out = model(ids, output_attentions=True)
        want = np.stack([a.double().mean(dim=1).numpy() for a in out.attentions], axis=1)
        np.testing.assert_allclose(tr.maps[:, t], want, atol=1e-6)


# -- issue 17, item 12: unchecked arguments -----------------------------------------------------------
def test_masks_and_ids_are_not_cast_from_floats_or_strings():
    A = dirichlet_maps((2,), 4, 0)
    with pytest.raises(ValueError, match=r"^revealed: expected a bool array"):  # formerly 0.5 -> True
        att.summarize_maps(A[:, None], np.full((2, 4), 0.5))
    with pytest.raises(ValueError, match=r"^A: "):  # formerly the string "0.25" read as a number
        att.received_attention([["0.25", "0.75"], ["0.5", "0.5"]])
    with pytest.raises(ValueError, match=r"^queries: expected"):  # formerly numpy's ambiguous truth value
        att.masked_share(A, [0], queries=np.array(["all"]))
    with pytest.raises(ValueError, match=r"^S: shape \(3, 4\) does not broadcast"):
        att.absorption(A, np.ones((3, 4), bool))
    with pytest.raises(ValueError, match=r"^axis: expected an integer"):
        att.absorption_stats(np.ones((3, 2)), axis=5)
    with pytest.raises(ValueError, match=r"^x: expected integer outcome indices"):
        from mdmtheory import Joint

        att.revealed_information(Joint(np.full((2, 2), 0.25)), np.array([0.0, 1.0]), np.array([True, False]))
    with pytest.raises(ValueError, match=r"^revealed: expected a bool array"):
        att.revealed_information(Joint(np.full((2, 2), 0.25)), np.array([0, 1]), np.array([0.5, 0.0]))
