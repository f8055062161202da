"""Hugging Face adapter: a randomly initialized small BERT saved to a local folder (never downloads)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from mdmtheory import bridge  # noqa: E402

torch.set_num_threads(1)

MASK, VOCAB = 4, [5, 6, 7, 8]  # BERT-style: special ids below 5, outcomes 5..8, V = 20


@pytest.fixture(scope="module")
def bert_folder(tmp_path_factory):
    torch.manual_seed(0)
    cfg = transformers.BertConfig(
        vocab_size=20, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=37, max_position_embeddings=16, mask_token_id=MASK,
    )
    folder = tmp_path_factory.mktemp("bert")
    transformers.BertForMaskedLM(cfg).save_pretrained(folder)
    return folder


def test_local_bert_log_probs_match_the_model(bert_folder):
    m = bridge.from_pretrained(bert_folder, vocab=VOCAB, device="cpu")
    assert type(m.model).__name__ == "BertForMaskedLM"
    assert m.mask_id == MASK  # read from the config
    assert m.model.config._attn_implementation == "sdpa"  # the fast path unless attention maps are asked for
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, size=(6, 7))
    x[rng.random(x.shape) < 0.5] = -1
    got = m.log_probs(x).numpy()
    ids = torch.as_tensor(np.where(x < 0, MASK, np.array(VOCAB)[np.maximum(x, 0)]))
    with torch.no_grad():
        logits = m.model(ids).logits[..., VOCAB].double()
    np.testing.assert_allclose(got, torch.log_softmax(logits, -1).numpy(), atol=1e-5)
    est = bridge.estimate_profile(m, rng.integers(0, 4, size=(40, 7)), levels=[0, 3, 6], n_per_level=10, seed=0)
    assert np.all(np.isfinite(est.values)) and est.forwards == 30
    # a random head is about uniform over the 4 outcomes: c(i) near log 4
    assert np.all(np.abs(est.values - np.log(4)) < 1.0)


def test_distributed_entry_point_runs_in_one_process(bert_folder, tmp_path):
    xs = np.random.default_rng(1).integers(0, 4, size=(30, 6))
    np.save(tmp_path / "x.npy", xs)
    np.save(tmp_path / "v.npy", np.array(VOCAB))
    out = tmp_path / "out.json"
    rc = bridge.distributed.main([
        "profile", "--hf", str(bert_folder), "--vocab-file", str(tmp_path / "v.npy"),
        "--samples", str(tmp_path / "x.npy"), "--levels", "0,2", "--n-per-level", "5", "--out", str(out),
    ])
    import json

    res = json.loads(out.read_text())
    assert rc == 0 and res["levels"] == [0, 2] and res["world_size"] == 1 and res["forwards"] == 10
    direct = bridge.estimate_profile(bridge.from_pretrained(bert_folder, vocab=VOCAB, device="cpu"), xs, levels=[0, 2], n_per_level=5, seed=0)
    np.testing.assert_allclose(res["values"], direct.values, rtol=1e-6)


def test_distributed_entry_point_takes_a_prompt_and_a_block(bert_folder, tmp_path, capsys):
    xs = np.random.default_rng(4).integers(0, 4, size=(20, 7))
    np.save(tmp_path / "x.npy", xs)
    np.save(tmp_path / "v.npy", np.array(VOCAB))
    out = tmp_path / "out.json"
    common = ["profile", "--hf", str(bert_folder), "--vocab-file", str(tmp_path / "v.npy"),
              "--samples", str(tmp_path / "x.npy"), "--n-per-level", "4", "--out", str(out)]
    assert bridge.distributed.main(common + ["--prompt-length", "2", "--response-length", "3"]) == 0
    import json

    res = json.loads(out.read_text())
    assert res["prompt_length"] == 2 and res["response_length"] == 3 and res["levels"] == [0, 1, 2]
    direct = bridge.estimate_profile(bridge.from_pretrained(bert_folder, vocab=VOCAB, device="cpu"), xs, n_per_level=4,
                                     seed=0, prompt_length=2, response_length=3)
    np.testing.assert_allclose(res["values"], direct.values, rtol=1e-6)
    assert bridge.distributed.main(common + ["--prompt-length", "2", "--response-length", "6"]) == 2
    assert "error: response_length: expected None" in capsys.readouterr().err


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match=r"^path: .* is not a local folder; the bridge never downloads"):
        bridge.from_pretrained(tmp_path / "nope")
    with pytest.raises(ValueError, match=r"^path: .* has no config.json"):
        bridge.from_pretrained(tmp_path)


def test_base_class_fallback_and_missing_mask_id(tmp_path):
    cfg = transformers.GPT2Config(vocab_size=20, n_embd=16, n_layer=1, n_head=2, n_positions=16, bos_token_id=0, eos_token_id=0)
    transformers.GPT2Model(cfg).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match=r"^mask_id: the folder.s config has no mask_token_id"):
        bridge.from_pretrained(tmp_path)
    m = bridge.from_pretrained(tmp_path, mask_id=19, device="cpu")  # no masked-LM class: AutoModel
    assert type(m.model).__name__ == "GPT2Model"
    with pytest.raises(ValueError, match=r"^model: returned .*hidden states"):
        m.log_probs(np.full((1, 4), -1))


# -- issue 17, item 12: untrusted folders and unchecked options -------------------------------------
@pytest.mark.parametrize("text", ["{", "[]", '{"model_type": "nope"}', "[" * 50000 + "]" * 50000])
def test_garbage_config_json_is_a_value_error(tmp_path, text):
    (tmp_path / "config.json").write_text(text)
    with pytest.raises(ValueError, match=r"^path: .*(config\.json cannot be read|cannot be loaded)"):
        bridge.from_pretrained(tmp_path, mask_id=3, device="cpu")


def test_config_without_weights_is_a_value_error(tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "bert", "vocab_size": 20, "hidden_size": 8, '
                                          '"num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 8}')
    with pytest.raises(ValueError, match=r"^path: .*cannot be loaded"):  # formerly an OSError traceback
        bridge.from_pretrained(tmp_path, mask_id=3, device="cpu")


def test_sdpa_by_default_eager_for_attention_maps(bert_folder):
    """Issue 18: SDPA unless attentions=True; the attention diagnostics switch an SDPA model
    to eager for their forwards (transformers 5.x returns no maps from SDPA) and back."""
    fast = bridge.from_pretrained(bert_folder, vocab=VOCAB, device="cpu")
    eager = bridge.from_pretrained(bert_folder, vocab=VOCAB, device="cpu", attentions=True)
    assert fast.model.config._attn_implementation == "sdpa"
    assert eager.model.config._attn_implementation == "eager"
    x = np.random.default_rng(2).integers(-1, 4, size=(5, 7))
    np.testing.assert_allclose(fast.log_probs(x).numpy(), eager.log_probs(x).numpy(), atol=1e-5)
    ids = torch.as_tensor(np.random.default_rng(3).integers(5, 9, size=(3, 7)))
    maps = bridge.attention.attention_maps(fast.model, ids)
    assert fast.model.config._attn_implementation == "sdpa"  # restored
    np.testing.assert_allclose(maps, bridge.attention.attention_maps(eager.model, ids), atol=1e-6)
    assert maps.shape == (3, 2, 7, 7)
    with pytest.raises(ValueError, match=r"^attentions: expected True or False"):
        bridge.from_pretrained(bert_folder, attentions="yes")


def test_options_are_checked_before_loading(bert_folder):
    with pytest.raises(ValueError, match=r"^trust_remote_code: expected True or False"):  # "no" was True
        bridge.from_pretrained(bert_folder, trust_remote_code="no")
    with pytest.raises(ValueError, match=r"^device: 'nope' is not a torch device"):
        bridge.from_pretrained(bert_folder, device="nope")
    with pytest.raises(ValueError, match=r"^dtype: expected a floating torch dtype"):
        bridge.from_pretrained(bert_folder, dtype="float")


def test_mask_id_outside_the_vocabulary_is_a_value_error(bert_folder):
    """`estimate --mask-id 99` on a 20-token model: formerly an IndexError from the embedding."""
    with pytest.raises(ValueError, match=r"^mask_id: 99 is not a token id of this model \(its embedding has 20 rows"):
        bridge.from_pretrained(bert_folder, mask_id=99, device="cpu")


def test_diffusion_gemma_is_no_longer_refused_and_its_masked_options_are(tmp_path):
    """transformers' DiffusionGemmaForBlockDiffusion is uniform-corruption block diffusion
    (its generation loop renoises non-accepted positions with random tokens): formerly refused,
    now loaded as the renoise sampler's model (issue 29 §3; loading and sampling:
    tests/bridge/test_bridge_uniform.py). The masked-model options are refused by name before
    any weight is read; a folder with the real class's config and no weights is a path error."""
    cfg_cls = getattr(transformers, "DiffusionGemmaConfig", None)
    if cfg_cls is None:
        pytest.skip("this transformers has no DiffusionGemma")
    text = dict(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                num_key_value_heads=1, head_dim=8)
    cfg_cls(text_config=text, vision_config=None).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match=r"^mask_id: a 'diffusion_gemma' model is uniform-corruption diffusion"):
        bridge.hf.from_pretrained(tmp_path, mask_id=0)
    with pytest.raises(ValueError, match=r"^path: .*the DiffusionGemma model cannot be loaded from this folder"):
        bridge.hf.from_pretrained(tmp_path)


# -- issue 30 §5: the model's position limit and corrupt weights, refused by name before work --
def test_rows_beyond_the_configs_position_limit_are_refused_before_a_forward(bert_folder):
    m = bridge.from_pretrained(bert_folder, vocab=VOCAB, device="cpu")
    assert m.max_length == 16  # the config's max_position_embeddings
    x = np.zeros((2, 17), dtype=np.int64)
    with pytest.raises(ValueError, match=r"^samples: sequences of length 17, but this model reads at most 16 positions"):
        bridge.estimate_profile(m, x, n_per_level=2)
    bare = bridge.from_pretrained(bert_folder, device="cpu")  # no vocab: resolve(d) probes a forward of d
    with pytest.raises(ValueError, match=r"^d: sequences of length 17"):
        bare.resolve(17)
    assert m.forwards == bare.forwards == 0
    # 16 positions fit (a forward of 17 is what BERT refuses with a torch traceback)
    est = bridge.estimate_profile(m, np.zeros((2, 16), dtype=np.int64), levels=[0], n_per_level=2)
    assert np.isfinite(est.values).all()


@pytest.mark.parametrize("cfg, limit", [
    ({"max_position_embeddings": 64}, 64),
    ({"n_positions": 1024, "max_position_embeddings": 8}, 8),  # looked up in POSITION_FIELDS order
    ({"n_positions": 1024}, 1024),
    ({"max_sequence_length": 4096}, 4096),  # LLaDA's spelling
    ({"text_config": {"max_position_embeddings": 32}}, 32),
    ({"model_type": "roberta", "max_position_embeddings": 514, "pad_token_id": 1}, 512),  # ids start at pad + 1
    ({"max_position_embeddings": True}, None),
    ({"max_position_embeddings": 0}, None),
    ({}, None),
])
def test_position_limit_of_a_config(cfg, limit):
    from mdmtheory.bridge.hf import position_limit

    assert position_limit(cfg) == limit
    assert position_limit(transformers.PretrainedConfig(**cfg)) == limit


def test_roberta_limit_is_the_longest_row_it_reads(tmp_path):
    """The RoBERTa offset from the model itself: a row of the limit runs, one more fails in torch."""
    from mdmtheory.bridge.hf import position_limit

    cfg = transformers.RobertaConfig(vocab_size=12, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=8, max_position_embeddings=10, pad_token_id=1)
    model = transformers.RobertaForMaskedLM(cfg).eval()
    L = position_limit(cfg)
    with torch.no_grad():
        model(torch.full((1, L), 5))
        with pytest.raises((IndexError, RuntimeError)):
            model(torch.full((1, L + 1), 5))


@pytest.mark.parametrize("damage", [lambda b: b[:100], lambda b: b"\x00" * 8, lambda b: b"\xff" * 64])
def test_corrupt_weights_are_a_value_error_naming_the_folder(bert_folder, tmp_path, damage):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(bert_folder, bad)
    w = bad / "model.safetensors"
    w.write_bytes(damage(w.read_bytes()))
    with pytest.raises(ValueError, match=r"^path: .*the model cannot be loaded from this folder"):
        bridge.from_pretrained(bad, vocab=VOCAB, device="cpu")
