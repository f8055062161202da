"""Issue 18 §5: a Hugging Face folder without ``mask_token_id`` in its config and without a
tokenizer of its own is refused; transformers would otherwise build a default tokenizer of
the model type and hand back *its* mask id (4 for BERT), a token the model never saw as a mask."""

import pytest

transformers = pytest.importorskip("transformers")
pytest.importorskip("torch")

from mdmtheory import bridge  # noqa: E402


def _bert(path, **kw):
    cfg = transformers.BertConfig(vocab_size=30, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                  intermediate_size=8, max_position_embeddings=16, **kw)
    transformers.BertForMaskedLM(cfg).save_pretrained(path)


def test_bert_folder_without_mask_id_or_tokenizer_is_refused(tmp_path):
    _bert(tmp_path)
    # what transformers does with such a folder: a made-up tokenizer with its own mask id
    made_up = transformers.AutoTokenizer.from_pretrained(str(tmp_path), local_files_only=True)
    assert made_up.mask_token_id is not None
    with pytest.raises(ValueError, match=r"^mask_id: .*no mask_token_id.*pass mask_id="):
        bridge.from_pretrained(tmp_path, device="cpu")
    assert bridge.from_pretrained(tmp_path, mask_id=29, device="cpu").mask_id == 29


def test_mask_id_from_config_and_from_a_saved_tokenizer(tmp_path):
    _bert(tmp_path / "cfg", mask_token_id=7)
    assert bridge.from_pretrained(tmp_path / "cfg", device="cpu").mask_id == 7
    tokenizers = pytest.importorskip("tokenizers")
    _bert(tmp_path / "tok")
    tk = tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0, "a": 1, "[MASK]": 5}, unk_token="[UNK]"))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]", mask_token="[MASK]")
    fast.save_pretrained(tmp_path / "tok")
    assert bridge.from_pretrained(tmp_path / "tok", device="cpu").mask_id == 5
