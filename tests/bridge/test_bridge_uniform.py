"""Corruption beyond masks on torch models (issue 29 §3): the bridge's Monte Carlo samplers
z-tested against the exact engine (mdmtheory.samplers.uniform) on the exact model of a table,
and transformers' DiffusionGemma loaded by from_pretrained and driven by the same loop.

The DiffusionGemma model is built from transformers' own config classes at a tiny size
(transformers 5.24.0, ``models/diffusion_gemma``; a small ``gemma4_vision`` tower, since the
encoder always builds one), saved with ``save_pretrained`` and loaded back; nothing is
downloaded. That the bridge's loop is what DiffusionGemma runs is checked by equality with the
model's own ``generate`` under the same seed.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import mdmtheory as mt
from mdmtheory import bridge
from mdmtheory.bridge import uniform as BU
from mdmtheory.samplers import uniform as U

transformers = pytest.importorskip("transformers")

Z_MAX = 4.5  # per-cell |z| bound (8 cells per law; a false alarm has probability ~5e-5)


def _law(seed, d=3, K=2):
    t = np.random.default_rng(seed).dirichlet(np.ones(K**d))
    return mt.Joint((t / t.sum()).reshape((K,) * d))


@pytest.mark.parametrize("mix", [0.0, 0.5, 1.0])
def test_ancestral_samples_match_the_exact_law(mix):
    p = _law(21)
    x = bridge.ancestral_samples(bridge.TableDenoiser(p, mix), n=6000, steps=3, seed=11, mix=mix)
    q = U.corruption_law(p, 3, mix=mix)
    est = bridge.output_law_estimate(p, x)
    assert np.abs(est.zscores(q)).max() < Z_MAX
    assert abs(est.kl - mt.kl(p, q)) < 0.03  # the plug-in KL, near the exact one


def test_renoise_samples_match_the_exact_law():
    p = _law(21)
    x = bridge.renoise_samples(bridge.TableDenoiser(p), n=4000, steps=4, seed=3)
    q = U.renoise_law(p, 4)
    est = bridge.output_law_estimate(p, x)
    assert np.abs(est.zscores(q)).max() < Z_MAX
    assert est.tv == pytest.approx(mt.tv(p, q), abs=0.03)


def test_the_seed_decides_and_the_global_rng_is_left_alone():
    p = _law(4)
    m = bridge.TableDenoiser(p)
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    a = bridge.renoise_samples(m, n=50, steps=3, seed=9)
    assert torch.rand(1) == before
    np.testing.assert_array_equal(a, bridge.renoise_samples(m, n=50, steps=3, seed=9))


def test_output_law_estimate_from_the_definition():
    p = mt.Joint(np.array([[0.5, 0.25], [0.25, 0.0]]))
    x = np.array([[0, 0], [0, 0], [0, 1], [1, 0]])
    est = bridge.output_law_estimate(p, x)
    np.testing.assert_allclose(est.law, [[0.5, 0.25], [0.25, 0.0]])
    assert est.kl == pytest.approx(0.0, abs=1e-15) and est.tv == pytest.approx(0.0, abs=1e-15)
    est = bridge.output_law_estimate(p, x[:3])  # q-hat = (2/3, 1/3, 0, 0): misses (1, 0)
    assert est.kl == np.inf and est.tv == pytest.approx(0.5 * (abs(0.5 - 2 / 3) + abs(0.25 - 1 / 3) + 0.25))
    np.testing.assert_allclose(est.stderr, np.sqrt(est.law * (1 - est.law) / 3))
    with pytest.raises(ValueError, match=r"^samples: outcome indices must lie in 0..1"):
        bridge.output_law_estimate(p, np.array([[0, 2]]))


# -- DiffusionGemma through from_pretrained --
def _tiny_diffusion_gemma(canvas_length=3, vocab=6):
    cfg_cls = getattr(transformers, "DiffusionGemmaConfig", None)
    if cfg_cls is None:
        pytest.skip("this transformers has no DiffusionGemma")
    text = dict(vocab_size=vocab, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                num_key_value_heads=1, head_dim=8, global_head_dim=8, num_experts=2, top_k_experts=1,
                moe_intermediate_size=16)
    vision = dict(model_type="gemma4_vision", hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                  num_attention_heads=2, num_key_value_heads=1, head_dim=8)
    torch.manual_seed(0)
    cfg = cfg_cls(text_config=text, vision_config=vision, canvas_length=canvas_length)
    return transformers.DiffusionGemmaForBlockDiffusion(cfg).eval()


@pytest.fixture(scope="module")
def gemma_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("diffusion_gemma")
    _tiny_diffusion_gemma().save_pretrained(folder)
    return folder


def test_from_pretrained_loads_diffusion_gemma_and_the_loop_drives_it(gemma_folder):
    m = bridge.from_pretrained(gemma_folder, device="cpu")
    assert isinstance(m, bridge.DiffusionGemmaDenoiser)
    assert (m.canvas_length, m.vocab_size) == (3, 6)
    ours = bridge.renoise_samples(m, n=64, steps=3, seed=5, entropy_bound=0.5)
    assert ours.shape == (64, 3) and ours.min() >= 0 and ours.max() < 6
    np.testing.assert_array_equal(ours, bridge.renoise_samples(m, n=64, steps=3, seed=5, entropy_bound=0.5))
    # the published loop, in the default run: transformers' own generate draws the same answers (~1 s)
    np.testing.assert_array_equal(ours, m.generate(64, 3, seed=5, entropy_bound=0.5))
    est = bridge.output_law_estimate(mt.Joint(np.full((6,) * 3, 6.0**-3)), ours)
    assert est.n == 64 and 0 <= est.tv <= 1


@pytest.mark.slow  # the default run compares one case (steps 3, bound 0.5) in the test above
@pytest.mark.parametrize("steps,bound", [(1, 0.1), (3, 0.5), (4, 0.1), (6, 2.0)])
def test_the_loop_is_diffusion_gemmas_generate_at_other_steps_and_bounds(gemma_folder, steps, bound):
    m = bridge.from_pretrained(gemma_folder, device="cpu")
    np.testing.assert_array_equal(bridge.renoise_samples(m, n=8, steps=steps, seed=7, entropy_bound=bound),
                                  m.generate(8, steps, seed=7, entropy_bound=bound))


def test_a_bf16_model_follows_generate(gemma_folder):
    # transformers hands the self-conditioning logits on in the embeddings' dtype; before the
    # denoiser did the same, 62 of 64 rows matched here
    m = bridge.from_pretrained(gemma_folder, device="cpu")
    m.model.to(torch.bfloat16)
    np.testing.assert_array_equal(bridge.renoise_samples(m, n=64, steps=6, seed=7, entropy_bound=2.0),
                                  m.generate(64, 6, seed=7, entropy_bound=2.0))


def test_diffusion_gemma_refuses_the_masked_model_options_by_name(gemma_folder, tmp_path):
    with pytest.raises(ValueError, match=r"^mask_id: a 'diffusion_gemma' model is uniform-corruption diffusion"):
        bridge.from_pretrained(gemma_folder, mask_id=0)
    with pytest.raises(ValueError, match=r"^shift: does not apply"):
        bridge.from_pretrained(gemma_folder, shift=True)
    cfg = _tiny_diffusion_gemma().config
    cfg.save_pretrained(tmp_path)  # a config without weights
    with pytest.raises(ValueError, match=r"^path: .*the DiffusionGemma model cannot be loaded from this folder"):
        bridge.from_pretrained(tmp_path)
    with pytest.raises(ValueError, match=r"^model: expected a DiffusionGemmaForBlockDiffusion"):
        bridge.DiffusionGemmaDenoiser(torch.nn.Linear(2, 2))


def test_bad_arguments_are_refused_by_name():
    p = _law(1)
    m = bridge.TableDenoiser(p, 0.5)
    with pytest.raises(ValueError, match=r"^alpha: the time-free denoiser is defined for uniform noise"):
        bridge.renoise_samples(m, n=2, steps=2, seed=0)
    with pytest.raises(ValueError, match=r"^model: expected a callable with integer attributes"):
        bridge.ancestral_samples(lambda x, a: x, n=2, steps=2, seed=0)
    with pytest.raises(ValueError, match=r"^entropy_bound: expected a float > 0"):
        bridge.renoise_samples(bridge.TableDenoiser(p), n=2, steps=2, seed=0, entropy_bound=-1.0)
    with pytest.raises(ValueError, match=r"^ids: expected"):
        m(torch.zeros((1, 2), dtype=torch.long), 0.5)
    with pytest.raises(ValueError, match=r"^exact: expected a Joint of shape"):
        bridge.output_law_estimate(p, np.zeros((2, 3), dtype=np.int64)).zscores(mt.families.parity(2))
