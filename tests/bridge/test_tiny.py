"""TinyMDM: shapes, bidirectional vs causal dependence, attention maps, strict checkpoints."""

import json
from importlib.resources import files

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from mdmtheory.bridge.tiny import (  # noqa: E402
    FORMAT,
    PRETRAINED,
    TinyConfig,
    TinyMDM,
    load_checkpoint,
    load_pretrained,
    save_checkpoint,
)


def _model(causal=False, K=5, d=6, seed=0):
    torch.manual_seed(seed)
    return TinyMDM(TinyConfig(vocab_size=K, seq_len=d, d_model=16, n_layers=2, n_heads=2, d_ff=32, causal=causal)).eval()


def _ids(K=5, d=6, B=3, seed=1, masked=True):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, K, (B, d), generator=g)
    if masked:
        x[:, ::2] = K
    return x


def test_shapes_mask_column_and_attention_rows():
    m = _model()
    out = m(_ids(), output_attentions=True)
    assert out.logits.shape == (3, 6, 6) and m.mask_id == 5
    assert torch.all(torch.isneginf(out.logits[..., 5])) and torch.all(torch.isfinite(out.logits[..., :5]))
    assert len(out.attentions) == 2
    for a in out.attentions:
        assert a.shape == (3, 2, 6, 6) and torch.all(a >= 0)
        torch.testing.assert_close(a.sum(-1), torch.ones(3, 2, 6))
    assert m(_ids()).attentions is None


def test_mdm_is_bidirectional():
    m = _model()
    x = _ids(masked=False)
    y = x.clone()
    y[:, -1] = (y[:, -1] + 1) % 5
    with torch.no_grad():
        a, b = m(x).logits, m(y).logits
    assert not torch.allclose(a[:, 0], b[:, 0])  # the first position sees the last


def test_causal_baseline_reads_only_the_prefix():
    m = _model(causal=True)
    x = _ids(masked=False)
    with torch.no_grad():
        base = m(x, output_attentions=True)
        for j in range(6):  # changing x_j changes the logits at i > j only (they predict x_i | x_<i)
            y = x.clone()
            y[:, j] = (y[:, j] + 1) % 5
            out = m(y).logits
            torch.testing.assert_close(out[:, : j + 1], base.logits[:, : j + 1])
            if j < 5:
                assert not torch.allclose(out[:, j + 1], base.logits[:, j + 1])
    for a in base.attentions:  # causal: no weight on later keys; query 0 (BOS) attends to itself
        assert torch.all(a.triu(1) == 0)
        torch.testing.assert_close(a[..., 0, 0], torch.ones(3, 2))
    with pytest.raises(ValueError, match="0..K-1"):
        m(torch.full((1, 6), 5))  # the mask/BOS id is not a data token for the AR model


def test_attention_maps_are_the_weights_used():
    """Recompute layer 0 by hand from its parameters: same probabilities, same output."""
    m = _model()
    x = _ids()
    with torch.no_grad():
        out = m(x, output_attentions=True)
        blk = m.blocks[0]
        h = m.tok(x) + m.pos.weight[None]
        q, k, v = blk.qkv(blk.ln1(h)).chunk(3, dim=-1)
        B, L, D = h.shape
        split = lambda t: t.view(B, L, 2, D // 2).transpose(1, 2)  # noqa: E731
        s = split(q) @ split(k).transpose(-1, -2) / np.sqrt(D // 2)
        ref = torch.exp(s - s.max(-1, keepdim=True).values)
        ref = ref / ref.sum(-1, keepdim=True)
    torch.testing.assert_close(out.attentions[0], ref)


def test_bad_input_is_refused():
    m = _model()
    with pytest.raises(ValueError, match="shape"):
        m(torch.zeros(2, 5, dtype=torch.long))
    with pytest.raises(ValueError, match="0..K"):
        m(torch.full((1, 6), 6))
    with pytest.raises(ValueError, match="integer"):
        m(torch.zeros(1, 6))
    with pytest.raises(ValueError, match="n_heads"):
        TinyConfig(vocab_size=3, seq_len=2, d_model=10, n_heads=3)


@pytest.mark.parametrize("causal", [False, True])
def test_save_load_gives_identical_logits(tmp_path, causal):
    m = _model(causal=causal)
    st, js = save_checkpoint(m, tmp_path / "m.safetensors", info={"seed": 0})
    back = load_checkpoint(st)
    x = _ids(masked=not causal)
    with torch.no_grad():
        assert torch.equal(m(x).logits, back(x).logits)
    assert back.config == m.config and json.load(open(js))["info"] == {"seed": 0}
    assert load_checkpoint(js).config == m.config  # either file of the pair names it


def test_refuses_files_that_are_not_ours(tmp_path):
    from safetensors.torch import save_file

    m = _model()
    torch.save(m.state_dict(), tmp_path / "m.pt")
    with pytest.raises(ValueError, match="not a .safetensors"):
        load_checkpoint(tmp_path / "m.pt")
    with pytest.raises(FileNotFoundError):
        load_checkpoint(tmp_path / "missing.safetensors")
    # a foreign safetensors file with no JSON, then with a JSON lacking our tag
    save_file({"w": torch.zeros(2)}, tmp_path / "f.safetensors")
    with pytest.raises(FileNotFoundError, match="JSON"):
        load_checkpoint(tmp_path / "f.safetensors")
    (tmp_path / "f.json").write_text('{"config": {}}')
    with pytest.raises(ValueError, match="not an mdmtheory checkpoint"):
        load_checkpoint(tmp_path / "f.safetensors")
    # our JSON beside a foreign safetensors file
    st, js = save_checkpoint(m, tmp_path / "g.safetensors")
    save_file({k: v.contiguous() for k, v in m.state_dict().items()}, st)  # no format tag
    with pytest.raises(ValueError, match="no format tag"):
        load_checkpoint(st)
    # garbage bytes
    st, js = save_checkpoint(m, tmp_path / "h.safetensors")
    open(st, "wb").write(b"not a safetensors file at all")
    with pytest.raises(ValueError, match="not a safetensors file"):
        load_checkpoint(st)
    # our tag but a config that disagrees with the JSON
    st, js = save_checkpoint(m, tmp_path / "i.safetensors")
    meta = json.load(open(js))
    meta["config"]["d_ff"] = 64
    json.dump(meta, open(js, "w"))
    with pytest.raises(ValueError, match="disagree"):
        load_checkpoint(st)


@pytest.mark.parametrize("name", PRETRAINED)
def test_shipped_checkpoints_are_package_data(name):
    folder = files("mdmtheory.checkpoints")
    st, js = folder / f"{name}.safetensors", folder / f"{name}.json"
    assert st.is_file() and js.is_file()
    meta = json.loads(js.read_text())
    assert meta["format"] == FORMAT and "command" in meta["info"] and "seed" in meta["info"]
    m = load_pretrained(name)
    assert m.config.causal == (name == "words-ar")
    assert (m.config.vocab_size, m.config.seq_len) == ((26, 5) if name.startswith("words") else (4, 64))
    assert len(st.read_bytes()) < 1_000_000
    with pytest.raises(ValueError, match="one of"):
        load_pretrained("nope")


def test_pyproject_ships_the_checkpoints():
    """pyproject declares the checkpoint files as package data (for non-editable installs)."""
    import pathlib
    import tomllib

    root = pathlib.Path(__file__).resolve().parents[2]
    cfg = tomllib.loads((root / "pyproject.toml").read_text())
    pats = cfg["tool"]["setuptools"]["package-data"]["mdmtheory.checkpoints"]
    assert "*.safetensors" in pats and "*.json" in pats


# -- issue 17, item 12: documented limits and untrusted files -------------------------------------
@pytest.mark.parametrize("field, value", [("d_model", 2**40), ("n_layers", 2**40), ("seq_len", 2**40),
                                          ("vocab_size", 2**40), ("d_ff", 2**40)])
def test_config_sizes_have_a_documented_maximum(field, value):
    """Formerly: 2**40 layers hung building modules; d_model 2**40 passed the config."""
    kw = dict(vocab_size=3, seq_len=4, d_model=4, n_heads=1, n_layers=1, d_ff=4)
    kw[field] = value
    with pytest.raises(ValueError, match=rf"^{field}: expected an integer in 1\.\.|^{field}: expected an integer in 2\.\."):
        TinyConfig(**kw)


def test_parameter_count_is_capped_and_exact():
    from mdmtheory.bridge.tiny import MAX_PARAMETERS

    cfg = TinyConfig(vocab_size=5, seq_len=6, d_model=16, n_layers=2, n_heads=2, d_ff=32)
    assert cfg.num_parameters() == TinyMDM(cfg).num_parameters()  # closed form = counted
    with pytest.raises(ValueError, match=rf"^d_model, n_layers, d_ff: .* at most {MAX_PARAMETERS}"):
        TinyConfig(vocab_size=3, seq_len=4, d_model=1 << 14, n_heads=1, n_layers=256, d_ff=1 << 14)


def test_save_checkpoint_into_a_missing_folder_names_the_path(tmp_path):
    with pytest.raises(ValueError, match=r"^path: the folder .* does not exist"):  # formerly a SafetensorError
        save_checkpoint(_model(), tmp_path / "missing" / "m.safetensors")


def test_save_checkpoint_is_atomic(tmp_path):
    """Non-serializable info formerly left the new weights beside a truncated JSON."""
    m = _model()
    path = tmp_path / "m.safetensors"
    save_checkpoint(m, path, info={"run": 1})
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for bad in ({"x": object()}, {"x": float("nan")}, [1, 2]):
        with pytest.raises(ValueError, match=r"^info: "):
            save_checkpoint(_model(seed=1), path, info=bad)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # old pair intact, no temp files
    assert json.loads((tmp_path / "m.json").read_text())["info"] == {"run": 1}


def _pair_files(tmp_path):
    save_checkpoint(_model(), tmp_path / "m.safetensors")
    return tmp_path / "m.safetensors", tmp_path / "m.json"


@pytest.mark.parametrize("field, value", [("d_model", 2**40), ("n_layers", 2**40), ("seq_len", True), ("d_ff", "8")])
def test_checkpoint_json_claiming_a_huge_shape_is_refused(tmp_path, field, value):
    st, js = _pair_files(tmp_path)
    meta = json.loads(js.read_text())
    meta["config"][field] = value
    js.write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=rf"^model: .* has an invalid config \({field}: "):
        load_checkpoint(st)


def test_deep_or_corrupt_checkpoint_files_are_value_errors(tmp_path):
    st, js = _pair_files(tmp_path)
    good = st.read_bytes()
    js_text = js.read_text()
    js.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(ValueError, match=r"^model: .* is not readable JSON"):  # formerly a RecursionError
        load_checkpoint(st)
    js.write_text(js_text)
    st.write_bytes((2**62).to_bytes(8, "little") + good[8:])  # a header length beyond the file
    with pytest.raises(ValueError, match=r"^model: .* is not a safetensors file"):
        load_checkpoint(st)
    st.write_bytes(good[: len(good) // 2])
    with pytest.raises(ValueError, match=r"^model: "):
        load_checkpoint(st)
    st.write_bytes(good)
    with pytest.raises(ValueError, match=r"^device: 'nope' is not a torch device"):
        load_checkpoint(st, device="nope")
    with pytest.raises(ValueError, match=r"^path: expected a file path"):
        load_checkpoint(None)
    with pytest.raises(ValueError, match=r"^name: expected one of"):
        load_pretrained(["words"])
