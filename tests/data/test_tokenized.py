"""Text and JSONL in with a local tokenizer folder built here with ``tokenizers`` (no download)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("tokenizers")
transformers = pytest.importorskip("transformers")

from mdmtheory.data import load_jsonl, load_text, load_tokenizer  # noqa: E402

TEXT = ["the cat sat", "a dog ran far away", "the end"]


@pytest.fixture(scope="module")
def tok_dir(tmp_path_factory):
    """A BPE tokenizer trained on the test text, saved as a Hugging Face folder."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(TEXT * 5, trainers.BpeTrainer(vocab_size=60, special_tokens=["[PAD]", "[MASK]", "[UNK]"]))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", mask_token="[MASK]",
                                                unk_token="[UNK]")
    d = tmp_path_factory.mktemp("tok")
    fast.save_pretrained(d)
    return d


def test_text_rows_are_the_tokenizers_own_ids_cut_and_padded(tok_dir, tmp_path):
    f = tmp_path / "t.txt"
    f.write_text("\n".join(TEXT[:2]) + "\n\n" + TEXT[2] + "\n")
    tok = load_tokenizer(tok_dir)
    enc = [tok.encode(t, add_special_tokens=False) for t in TEXT]
    L = 4
    data = load_text(f, tok_dir, length=L)
    pad = tok.pad_token_id
    want = [(e[:L] + [pad] * (L - len(e)))[:L] for e in enc]
    assert data.ids.tolist() == want
    assert data.n_cut == sum(len(e) > L for e in enc) and data.n_padded == sum(len(e) < L for e in enc)
    assert data.prompt_length == 0 and data.vocab == tuple(sorted(set(np.ravel(want).tolist())))
    # outcomes are indices into vocab: mapping back gives the ids
    out = data.outcomes()
    assert (np.asarray(data.vocab)[out] == data.ids).all()


def test_jsonl_prompt_keeps_its_end_response_its_start(tok_dir, tmp_path):
    pairs = [("the cat sat", "a dog"), ("the", "a dog ran far away")]
    f = tmp_path / "p.jsonl"
    f.write_text("\n".join(json.dumps({"prompt": a, "response": b}) for a, b in pairs))
    tok = load_tokenizer(tok_dir)
    pad = tok.pad_token_id
    Lp, Lr = 2, 3
    data = load_jsonl(f, tok_dir, prompt_length=Lp, response_length=Lr)
    for row, (a, b) in zip(data.ids.tolist(), pairs):
        ea, eb = tok.encode(a, add_special_tokens=False), tok.encode(b, add_special_tokens=False)
        pa = ea[-Lp:] if len(ea) >= Lp else [pad] * (Lp - len(ea)) + ea
        rb = eb[:Lr] if len(eb) >= Lr else eb + [pad] * (Lr - len(eb))
        assert row == pa + rb
    assert data.prompt_length == Lp and data.d == Lp + Lr
    s = data.summary()
    assert s["cut_prompt"] + s["padded_prompt"] >= 1 and "left-padded" in s["rule"]


def test_outcomes_refuse_a_token_outside_vocab(tok_dir, tmp_path):
    f = tmp_path / "t.txt"
    f.write_text("the cat sat\n")
    data = load_text(f, tok_dir, length=3)
    with pytest.raises(ValueError, match="vocab: token id"):
        data.outcomes(vocab=[data.vocab[0]])


@pytest.mark.parametrize("content, kw, match", [
    ("", dict(length=3), "path: no rows"),
    ("x\n", dict(length=0), "length: expected an integer"),
    ("x\n", dict(length=True), "length: expected an integer"),
    ("x\n", dict(length=3, pad_id=-1), "pad_id: expected"),
])
def test_bad_text_input(tok_dir, tmp_path, content, kw, match):
    f = tmp_path / "t.txt"
    f.write_text(content)
    with pytest.raises(ValueError, match=match):
        load_text(f, tok_dir, **kw)


@pytest.mark.parametrize("line, match", [
    ("{not json", "path: line 1 is not a JSON object"),
    ('{"prompt": "a"}', "path: line 1 needs string fields"),
    ('[1, 2]', "path: line 1 needs string fields"),
    ("[" * 100000 + "]" * 100000, "path: line 1"),
])
def test_bad_jsonl(tok_dir, tmp_path, line, match):
    f = tmp_path / "p.jsonl"
    f.write_text(line + "\n")
    with pytest.raises(ValueError, match=match):
        load_jsonl(f, tok_dir, prompt_length=2, response_length=2)


def test_bad_tokenizer_and_files(tmp_path):
    with pytest.raises(ValueError, match="tokenizer: no such folder"):
        load_tokenizer(tmp_path / "missing")
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "tokenizer.json").write_text("garbage")
    with pytest.raises(ValueError, match="tokenizer: .* is not a tokenizer folder"):
        load_tokenizer(tmp_path / "junk")
    with pytest.raises(ValueError, match="tokenizer: expected a tokenizer folder"):
        load_tokenizer(42)
    with pytest.raises(ValueError, match="path: no such file"):
        load_text(tmp_path / "nope.txt", object.__new__(type("T", (), {"encode": lambda s, t: [1]})), length=2)
    (tmp_path / "bin.txt").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match="path: .* is not UTF-8"):
        load_text(tmp_path / "bin.txt", object.__new__(type("T", (), {"encode": lambda s, t: [1], "pad_token_id": 0})),
                  length=2)


# -- issue 30 §3: the tokenizer's output and the pad id are checked, not trusted -------------
def _vocab_size_from_file(folder) -> int:
    """V from the folder's own tokenizer.json (its model vocabulary and added tokens), read as JSON."""
    spec = json.loads((folder / "tokenizer.json").read_text())
    ids = set(spec["model"]["vocab"].values()) | {t["id"] for t in spec.get("added_tokens", [])}
    return max(ids) + 1


@pytest.mark.parametrize("pad_id", [10**23, -1, True, 1.0, "3", "V"])
def test_pad_id_must_be_a_token_id_of_the_tokenizer(tok_dir, tmp_path, pad_id):
    f = tmp_path / "t.txt"
    f.write_text("the\n")  # one token: the row is padded
    if pad_id == "V":
        pad_id = _vocab_size_from_file(tok_dir)
    with pytest.raises(ValueError, match=r"^pad_id: expected an integer in 0\.\."):
        load_text(f, tok_dir, length=4, pad_id=pad_id)
    with pytest.raises(ValueError, match=r"^pad_id: expected an integer in 0\.\."):
        load_jsonl(tmp_path / "t.txt", tok_dir, prompt_length=2, response_length=2, pad_id=pad_id)


def test_the_last_token_id_is_a_valid_pad(tok_dir, tmp_path):
    f = tmp_path / "t.txt"
    f.write_text("the\n")
    V = _vocab_size_from_file(tok_dir)
    data = load_text(f, tok_dir, length=4, pad_id=V - 1)
    assert data.ids[0, 1:].tolist() == [V - 1] * 3


class _Tok:
    """A tokenizer object that says its vocabulary size (len) and returns what it is told to."""

    pad_token_id = 0

    def __init__(self, ids, V=5):
        self.ids, self.V = ids, V

    def __len__(self):
        return self.V

    def encode(self, text):
        return self.ids


@pytest.mark.parametrize("ids", [[1, 5], [1, -1], [True], [1.0], [10**30], None])
def test_ids_outside_the_tokenizers_vocabulary_are_refused(tmp_path, ids):
    f = tmp_path / "t.txt"
    f.write_text("x\n")
    with pytest.raises(ValueError, match=r"^tokenizer: .*line 1"):
        load_text(f, _Tok(ids), length=2)
    assert load_text(f, _Tok([1, 4]), length=2).ids.tolist() == [[1, 4]]  # 0..V-1 is fine


def test_outcomes_refuse_ids_beyond_int64(tok_dir, tmp_path):
    f = tmp_path / "t.txt"
    f.write_text("the cat\n")
    data = load_text(f, tok_dir, length=2)
    with pytest.raises(ValueError, match=r"^vocab: expected a non-empty sequence"):
        data.outcomes([10**30, 1])


@pytest.mark.parametrize("cls, ok", [("PreTrainedTokenizerFast", True), ("BertTokenizer", False),
                                     ("GPT2Tokenizer", False), ("NoSuchTokenizer", False)])
def test_a_folder_whose_tokenizer_class_lies_is_refused(tmp_path, cls, ok):
    """A word-level tokenizer.json under a config naming another class: transformers loads that
    class (BertTokenizer adds [CLS]/[SEP], GPT2Tokenizer <|endoftext|>; an unknown name falls
    back silently), whose ids are not the file's."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {w: i for i, w in enumerate(["a", "b", "[PAD]", "[UNK]"])}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    d = tmp_path / "tok"
    transformers.PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="[PAD]", unk_token="[UNK]").save_pretrained(d)
    cfg = json.loads((d / "tokenizer_config.json").read_text())
    cfg["tokenizer_class"] = cls
    (d / "tokenizer_config.json").write_text(json.dumps(cfg))
    if ok:
        assert load_tokenizer(d).encode("a b", add_special_tokens=False) == [0, 1]
    else:
        with pytest.raises(ValueError, match=rf"^tokenizer: .*{cls}"):
            load_tokenizer(d)


def test_tokens_the_folder_declares_beside_tokenizer_json_are_not_a_lie(tmp_path):
    """A special token the folder declares only in special_tokens_map.json (as older saved folders
    do) is added by the class it names: that is the folder as saved, not another tokenizer.
    A class adding tokens nobody declared is still refused (the test above)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {w: i for i, w in enumerate(["a", "b", "[PAD]", "[UNK]"])}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    d = tmp_path / "tok"
    transformers.PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="[PAD]", unk_token="[UNK]").save_pretrained(d)
    (d / "special_tokens_map.json").write_text(json.dumps({"pad_token": "[PAD]", "unk_token": "[UNK]",
                                                            "additional_special_tokens": ["<extra>"]}))
    tok = load_tokenizer(d)
    assert "<extra>" in tok.get_vocab() and "<extra>" not in vocab  # the class did add it
    assert tok.encode("a b", add_special_tokens=False) == [0, 1]
