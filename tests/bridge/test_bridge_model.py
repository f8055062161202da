"""The model protocol: ExactModel, vocab renormalization, Dream's shift, time input, batching, bad input."""

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.laws import as_oracle

torch = pytest.importorskip("torch")
from mdmtheory import bridge  # noqa: E402

torch.set_num_threads(1)

P = mt.families.dirichlet(4, 3, seed=0)  # d = 4, K = 3, mask id 3


def _partial(n=50, seed=0):
    rng = np.random.default_rng(seed)
    x = as_oracle(P).sample(n, rng)
    masked = rng.random(x.shape) < 0.5
    return np.where(masked, -1, x), masked


def test_exact_model_log_probs_are_the_conditionals():
    x, masked = _partial()
    m = bridge.as_masked_model(bridge.ExactModel(P))
    assert m.K == 3 and m.mask_id == 3
    lp = m.log_probs(x).numpy()
    ref = as_oracle(P).conditionals(np.where(masked, 0, x), ~masked)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(np.exp(lp)[masked], ref[masked], atol=1e-12)
    # revealed positions carry a one-hot (MDLM's carry-over)
    np.testing.assert_allclose(np.exp(lp)[~masked], np.eye(3)[x[~masked]], atol=0)


def test_model_oracle_is_a_conditional_oracle():
    x, masked = _partial(seed=1)
    orc = bridge.ModelOracle(bridge.ExactModel(P))
    got = orc.conditionals(np.where(masked, 0, x), ~masked)
    ref = as_oracle(P).conditionals(np.where(masked, 0, x), ~masked)
    np.testing.assert_allclose(got, ref, atol=1e-12)
    assert orc.K == 3 and orc.d == 4


def test_excluded_vocab_columns_are_dropped_and_renormalized():
    exact = bridge.ExactModel(P)

    def padded(ids):  # token ids: outcomes at 10, 12, 14; mask 0; junk with large logits elsewhere
        inner = torch.where(ids == 0, torch.full_like(ids, 3), (ids - 10) // 2)
        base = exact(inner)
        out = torch.full(ids.shape + (16,), 5.0, dtype=torch.float64)
        out[..., [10, 12, 14]] = base[..., :3]
        return out

    m = bridge.MaskedModel(padded, mask_id=0, vocab=[10, 12, 14])
    x, masked = _partial(seed=2)
    ref = bridge.as_masked_model(exact).log_probs(x)
    got = m.log_probs(x)
    np.testing.assert_allclose(got.numpy()[masked], ref.numpy()[masked], atol=1e-12)


def test_default_vocab_is_every_column_but_the_mask():
    m = bridge.MaskedModel(bridge.ExactModel(P), mask_id=3)
    m.resolve(4)
    assert m.vocab == (0, 1, 2)


def test_dream_shift_reads_position_i_from_logits_at_i_minus_one():
    exact = bridge.ExactModel(P)

    def dream_like(ids):  # position i's prediction sits at i - 1 (Dream's right shift)
        base = exact(ids)
        return torch.cat([base[:, 1:], base[:, -1:]], dim=1)

    x, masked = _partial(seed=3)
    ref = bridge.as_masked_model(exact).log_probs(x).numpy()
    got = bridge.MaskedModel(dream_like, mask_id=3, shift=True).log_probs(x).numpy()
    np.testing.assert_allclose(got[:, 1:][masked[:, 1:]], ref[:, 1:][masked[:, 1:]], atol=1e-12)
    unshifted = bridge.MaskedModel(dream_like, mask_id=3).log_probs(x).numpy()
    assert not np.allclose(unshifted[:, 1:][masked[:, 1:]], ref[:, 1:][masked[:, 1:]])


def test_time_input_receives_the_mask_fraction():
    exact = bridge.ExactModel(P)
    seen = []

    def mdlm_like(ids, sigma):
        seen.append(sigma.clone())
        return exact(ids)

    m = bridge.MaskedModel(mdlm_like, mask_id=3, vocab=[0, 1, 2], time_input=lambda f: {"sigma": -torch.log1p(-f.clamp(max=0.999))}, max_batch=8)
    x, masked = _partial(n=20, seed=4)
    m.log_probs(x)
    frac = masked.mean(axis=1)
    got = torch.cat(seen).numpy()
    np.testing.assert_allclose(got, -np.log1p(-np.minimum(frac, 0.999)), rtol=1e-12)
    assert len(seen) == 3 and m.forwards == 20  # batches of at most max_batch


def test_module_with_logits_attribute_and_device_dtype():
    class Out:
        def __init__(self, logits):
            self.logits = logits

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = bridge.ExactModel(P)
            self.scale = torch.nn.Parameter(torch.ones((), dtype=torch.float32))

        def forward(self, ids):
            return Out(self.inner(ids).to(self.scale.dtype) * self.scale)

    m = bridge.MaskedModel(Wrapped(), mask_id=3, dtype=torch.float64, device="cpu")
    assert m.dtype == torch.float64 and m.device == torch.device("cpu")
    x, masked = _partial(seed=5)
    ref = bridge.as_masked_model(bridge.ExactModel(P)).log_probs(x).numpy()
    np.testing.assert_allclose(m.log_probs(x).numpy()[masked], ref[masked], atol=1e-12)


# -- bad input: one clear ValueError naming the argument ----------------------------------------
def _samples(n=20):
    return as_oracle(P).sample(n, np.random.default_rng(0))


def test_logits_of_the_wrong_shape():
    m = bridge.MaskedModel(lambda ids: torch.zeros(ids.shape[0], ids.shape[1] + 1, 4), mask_id=3, vocab=[0, 1, 2])
    with pytest.raises(ValueError, match=r"^model: returned logits of shape"):
        bridge.estimate_profile(m, _samples(), n_per_level=2)
    m = bridge.MaskedModel(lambda ids: torch.zeros(ids.shape[0], ids.shape[1], 2), mask_id=3, vocab=[0, 1, 2])
    with pytest.raises(ValueError, match=r"^model: returned logits of shape .* V >= 3"):
        bridge.estimate_profile(m, _samples(), n_per_level=2)
    with pytest.raises(ValueError, match=r"^model: returned str"):
        bridge.MaskedModel(lambda ids: "x", mask_id=3, vocab=[0, 1, 2]).log_probs(np.zeros((1, 4), dtype=int))


def test_mask_id_inside_the_outcome_vocabulary():
    with pytest.raises(ValueError, match=r"^vocab: contains the mask id 2"):
        bridge.MaskedModel(bridge.ExactModel(P), mask_id=2, vocab=[0, 1, 2])
    with pytest.raises(ValueError, match=r"^vocab: contains repeated"):
        bridge.MaskedModel(bridge.ExactModel(P), mask_id=3, vocab=[0, 1, 1])


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_nan_or_inf_logits(bad):
    def f(ids):
        out = torch.zeros(ids.shape + (4,))
        out[0, 0, 1] = bad
        return out

    with pytest.raises(ValueError, match=r"^model: returned NaN or \+inf logits"):
        bridge.estimate_profile(bridge.MaskedModel(f, mask_id=3), _samples(), n_per_level=2)


def test_all_minus_inf_row_and_zero_probability_observation():
    def f(ids):
        return torch.full(ids.shape + (4,), -np.inf)

    with pytest.raises(ValueError, match=r"^model: gives -inf to every outcome"):
        bridge.MaskedModel(f, mask_id=3, vocab=[0, 1, 2]).log_probs(np.full((1, 4), -1))

    def g(ids):
        out = torch.zeros(ids.shape + (4,))
        out[..., 0] = -np.inf
        return out

    xs = np.zeros((4, 4), dtype=int)
    with pytest.raises(ValueError, match=r"^model: assigns probability 0 to an observed token"):
        bridge.estimate_profile(bridge.MaskedModel(g, mask_id=3), xs, n_per_level=2)


@pytest.mark.parametrize(
    "samples,msg",
    [
        (np.zeros((0, 4), dtype=int), r"^samples: expected a non-empty"),
        (np.zeros(4, dtype=int), r"^samples: expected a non-empty"),
        (np.full((3, 4), 3), r"^samples: outcome indices must lie in 0..2"),
        (np.full((3, 4), -1), r"^samples: outcome indices must lie in 0..2"),
        (np.zeros((3, 4)), r"^samples: expected integer outcome indices"),
    ],
)
def test_empty_or_out_of_vocabulary_samples(samples, msg):
    with pytest.raises(ValueError, match=msg):
        bridge.estimate_profile(bridge.ExactModel(P), samples, n_per_level=2)


def test_plan_not_summing_to_d():
    m = bridge.ExactModel(P)
    with pytest.raises(ValueError, match=r"^plan: .*sum"):
        bridge.estimate_path_cross_entropy(m, _samples(), mt.Schedule((2, 1)), n=4)
    with pytest.raises(ValueError, match=r"^plans\[1\]: .*sum"):
        bridge.compare_plans(m, _samples(), [mt.Schedule((2, 2)), mt.Schedule((3, 2))], n=4)
    with pytest.raises(ValueError, match=r"^plan: .*sum"):
        bridge.estimate_factorization_error(m, _samples(), mt.Schedule((1, 1)), "confidence")
    with pytest.raises(ValueError, match=r"^plan: .*needs a Schedule"):
        bridge.estimate_factorization_error(m, _samples(), None, "confidence")


def test_other_arguments_are_named():
    m = bridge.ExactModel(P)
    xs = _samples()
    with pytest.raises(ValueError, match=r"^levels:"):
        bridge.estimate_profile(m, xs, levels=[4])
    with pytest.raises(ValueError, match=r"^n_per_level:"):
        bridge.estimate_profile(m, xs, n_per_level=1)
    with pytest.raises(ValueError, match=r"^seed:"):
        bridge.estimate_profile(m, xs, seed=-1)
    with pytest.raises(ValueError, match=r"^planner:"):
        bridge.estimate_factorization_error(m, xs, mt.Schedule((2, 2)), "nonsense")
    with pytest.raises(ValueError, match=r"^mask_id:"):
        bridge.as_masked_model(lambda ids: ids)
    with pytest.raises(ValueError, match=r"^model: already a MaskedModel"):
        bridge.as_masked_model(bridge.as_masked_model(m), shift=True)
    with pytest.raises(ValueError, match=r"^weights:"):
        bridge.estimate_dyadic(m, xs, 0.2, 0.6, weights="other")
    with pytest.raises(ValueError, match=r"^p: expected a mdmtheory.Joint or a conditional oracle"):
        bridge.ExactModel(np.ones((2, 2)) / 4)
    with pytest.raises(ValueError, match=r"^p: expected a mdmtheory.Joint or a conditional oracle"):
        bridge.estimate_learning_error(m, "p")
    with pytest.raises(ValueError, match=r"^p: has K=2"):
        bridge.estimate_learning_error(m, mt.families.dirichlet(4, 2, seed=0))
    with pytest.raises(ValueError, match=r"^estimate:"):
        bridge.optimal_schedule_estimate(bridge.estimate_learning_error(m, P, n_per_level=2), 2)
    with pytest.raises(ValueError, match=r"^levels: a Profile needs every level"):
        bridge.optimal_schedule_estimate(bridge.estimate_profile(m, xs, levels=[0, 1], n_per_level=2), 2)


@pytest.mark.parametrize(
    "target,msg",
    [
        (np.full((2, 4), 3), r"^target: outcome indices must lie in 0..2"),
        (np.full((2, 4), -1), r"^target: outcome indices must lie in 0..2"),
        (np.zeros((2, 3), dtype=int), r"^target: expected integer outcome indices of the shape of x"),
        (np.zeros((2, 4)), r"^target: expected integer outcome indices"),
    ],
)
def test_score_refuses_a_bad_target(target, msg):
    # formerly a torch RuntimeError (index out of bounds, shape mismatch) or, for floats, a silent cast
    m = bridge.as_masked_model(bridge.ExactModel(P))
    with pytest.raises(ValueError, match=msg):
        m.score(np.full((2, 4), -1), target)


def test_model_oracle_refuses_what_the_other_oracles_refuse():
    orc = bridge.ModelOracle(bridge.ExactModel(P))
    with pytest.raises(ValueError, match=r"^x: expected integer tokens"):  # formerly 0.7 -> token 0
        orc.conditionals(np.full((1, 4), 0.7), np.ones((1, 4), bool))
    with pytest.raises(ValueError, match=r"^x: revealed values must be tokens in 0..2"):
        orc.conditionals(np.full((1, 4), 3), np.ones((1, 4), bool))
    with pytest.raises(ValueError, match=r"^x, revealed: expected two \(n, d=4\) arrays"):
        orc.conditionals(np.zeros((1, 5), dtype=int), np.ones((1, 5), bool))


# -- issue 17, item 12: hostile inputs, second round -------------------------------------------
def _tiny(causal=False, d=5):
    from mdmtheory.bridge.tiny import TinyConfig, TinyMDM

    torch.manual_seed(0)
    return TinyMDM(TinyConfig(vocab_size=3, seq_len=d, d_model=8, n_layers=1, n_heads=2, d_ff=8, causal=causal))


@pytest.mark.parametrize("kw, msg", [
    ({"device": "nope"}, r"^device: 'nope' is not a torch device"),  # formerly a RuntimeError
    ({"device": "cuda:99"}, r"^device: "),
    ({"device": 3}, r"^device: expected a torch device"),
    ({"dtype": "float"}, r"^dtype: expected a floating torch dtype"),  # formerly a TypeError inside .to()
    ({"dtype": torch.int64}, r"^dtype: expected a floating torch dtype"),
    ({"max_batch": 10**12}, r"^max_batch: expected an integer in 1\.\.1048576"),
    ({"mask_id": 2**40}, r"^mask_id: expected an integer in 0\.\.2147483647"),
    ({"shift": "no"}, r"^shift: expected True or False"),
    ({"vocab": [0.0, 1.0]}, r"^vocab: expected integer token ids"),
    ({"vocab": [2**63, 1]}, r"^vocab: "),
])
def test_masked_model_refuses_unchecked_arguments(kw, msg):
    kw = {"mask_id": 3, **kw}
    with pytest.raises(ValueError, match=msg):
        bridge.MaskedModel(bridge.ExactModel(P), **kw)


def test_mask_id_outside_the_model_is_a_value_error():
    """`estimate --mask-id 99` on a model with 4 embedding rows: formerly an IndexError traceback
    from the embedding lookup of the probe forward."""
    emb = torch.nn.Embedding(4, 3)  # ids 0..3, logits over 3 columns
    with pytest.raises(ValueError, match=r"^mask_id: 99 is not a token id of this model \(its embedding has 4 rows"):
        bridge.MaskedModel(emb, mask_id=99)
    with pytest.raises(ValueError, match=r"^mask_id: 2 given, but this model's own mask id is 3"):
        bridge.MaskedModel(_tiny(), mask_id=2)


def test_mask_id_beyond_a_callable_is_a_value_error():
    def lookup(ids):  # a callable without an embedding attribute: the IndexError comes from inside
        return torch.zeros(4, 3)[ids]

    with pytest.raises(ValueError, match=r"^mask_id, vocab: the model failed on token ids 99\.\.99"):
        bridge.estimate_profile(bridge.MaskedModel(lookup, mask_id=99), np.zeros((2, 4), int), n_per_level=2)


@pytest.mark.parametrize("samples, msg", [
    (None, r"^samples: expected an integer array"),  # formerly "got shape ()"
    ("abc", r"^samples: expected an integer array"),
    ([[0, 1], [0]], r"^samples: cannot be read as an integer array"),
    (np.zeros((2, 4), dtype=object), r"^samples: expected integer outcome indices"),
])
def test_samples_that_are_not_arrays(samples, msg):
    with pytest.raises(ValueError, match=msg):
        bridge.estimate_profile(bridge.ExactModel(P), samples, n_per_level=2)


def test_deep_samples_are_a_value_error():
    deep = [0, 1]
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ValueError, match=r"^samples: "):  # formerly a RecursionError
        bridge.estimate_profile(bridge.ExactModel(P), deep, n_per_level=2)


def test_messages_say_what_the_user_passed():
    """Formerly "ids: expected shape (B, 5), got (1, 7)" and "tokens ... got 26..26": internals."""
    with pytest.raises(ValueError, match=r"^samples: sequences of length 7, but this model reads sequences of exactly 5 tokens"):
        bridge.estimate_profile(_tiny(d=5), np.zeros((3, 7), int), n_per_level=2)
    with pytest.raises(ValueError, match=r"^model: a causal \(autoregressive\) TinyMDM .* masked-diffusion model"):
        bridge.estimate_profile(_tiny(causal=True), np.zeros((3, 5), int), n_per_level=2)
    with pytest.raises(ValueError, match=r"^ids: this model reads sequences of exactly d = 5 tokens .* got sequences of length 7"):
        _tiny(d=5)(torch.zeros((1, 7), dtype=torch.long))
    with pytest.raises(ValueError, match=r"^ids: token 3 is the mask id, but this is a causal \(autoregressive\) model"):
        _tiny(causal=True)(torch.full((1, 5), 3))
