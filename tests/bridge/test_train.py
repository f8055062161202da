"""Training: a few seeded steps lower the loss, runs are reproducible, bad input is refused."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mdmtheory.laws import families  # noqa: E402
from mdmtheory.bridge.tiny import TinyConfig, TinyMDM  # noqa: E402
from mdmtheory.bridge.train import train  # noqa: E402
from mdmtheory.laws import as_oracle  # noqa: E402


def _data(n=4000, seed=0):
    p = families.markov_chain(np.array([[0.9, 0.1, 0.0], [0.05, 0.9, 0.05], [0.1, 0.0, 0.9]]), 4)
    return p, as_oracle(p).sample(n, np.random.default_rng(seed))


def _model(causal=False, seed=0):
    torch.manual_seed(seed)
    return TinyMDM(TinyConfig(vocab_size=3, seq_len=4, d_model=16, n_layers=1, n_heads=2, d_ff=32, causal=causal))


def _exact_mdm_xent(model, p):
    """E_x E_{A}[ mean over masked j of -log q(x_j | x_A) ] averaged over |A| = 0..d-1, by enumeration."""
    import itertools

    d, K = p.d, p.K
    xs = np.array(list(itertools.product(range(K), repeat=d)))
    w = p.table.reshape(-1)
    total = 0.0
    for A in range(2**d - 1):  # every revealed set except "all revealed"
        rev = np.array([(A >> j) & 1 for j in range(d)], bool)
        ids = torch.tensor(np.where(rev, xs, K))
        with torch.no_grad():
            lp = torch.log_softmax(model(ids).logits.double(), -1).numpy()
        ce = -np.take_along_axis(lp, xs[..., None], -1)[..., 0][:, ~rev].mean(1)
        total += float(np.sum(w * ce))
    return total / (2**d - 1)


def _exact_ar_xent(model, p):
    import itertools

    xs = np.array(list(itertools.product(range(p.K), repeat=p.d)))
    with torch.no_grad():
        lp = torch.log_softmax(model(torch.tensor(xs)).logits.double(), -1).numpy()
    nll = -np.take_along_axis(lp, xs[..., None], -1)[..., 0].sum(1)
    return float(np.sum(p.table.reshape(-1) * nll))


@pytest.mark.parametrize("weighting", ["elbo", "mean"])
def test_mdm_training_lowers_the_exact_loss(weighting):
    p, x = _data()
    m = _model()
    before = _exact_mdm_xent(m, p)
    res = train(m, x, steps=150, batch_size=128, lr=1e-2, seed=0, weighting=weighting, log_every=50)
    after = _exact_mdm_xent(m, p)
    assert after < before - 0.2, (before, after)
    assert len(res.losses) == 3 and res.losses[-1] < res.losses[0]
    assert not m.training


def test_ar_training_lowers_the_exact_nll():
    p, x = _data()
    m = _model(causal=True)
    before = _exact_ar_xent(m, p)
    train(m, x, steps=150, batch_size=128, lr=1e-2, seed=0)
    after = _exact_ar_xent(m, p)
    H = -float(np.sum(p.table[p.table > 0] * np.log(p.table[p.table > 0])))
    assert after < before - 0.5 and after >= H - 1e-9  # cross-entropy never beats the entropy


def test_training_is_reproducible():
    _, x = _data()
    a, b = _model(), _model()
    ra = train(a, x, steps=20, batch_size=32, seed=5)
    rb = train(b, x, steps=20, batch_size=32, seed=5)
    assert ra.losses == rb.losses
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert torch.equal(pa, pb)
    c = _model()
    assert train(c, x, steps=20, batch_size=32, seed=6).losses != ra.losses


def test_train_refuses_bad_input():
    _, x = _data(n=10)
    m = _model()
    with pytest.raises(ValueError, match="samples"):
        train(m, x[:, :3], steps=1)
    with pytest.raises(ValueError, match="0..2"):
        train(m, x + 1, steps=1)
    with pytest.raises(ValueError, match="steps"):
        train(m, x, steps=0)
    with pytest.raises(ValueError, match="lr"):
        train(m, x, steps=1, lr=-1.0)
    with pytest.raises(ValueError, match="weighting"):
        train(m, x, steps=1, weighting="t2")
    with pytest.raises(ValueError, match="TinyMDM"):
        train(torch.nn.Linear(2, 2), x, steps=1)


def test_cli_train_writes_a_loadable_checkpoint(tmp_path, capsys):
    import json

    from mdmtheory.bridge.tiny import load_checkpoint
    from mdmtheory.cli import main

    f = tmp_path / "w.txt"
    f.write_text("abc\nbca\ncab\nabc\n")
    out = tmp_path / "m.safetensors"
    argv = ["train", "--data", str(f), "--chars", "--out", str(out), "--train-steps", "5", "--batch-size", "8", "--json", "--quiet"]
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)
    m = load_checkpoint(res["checkpoint"])
    assert m.config.vocab_size == 3 and m.config.seq_len == 3
    meta = json.loads((tmp_path / "m.json").read_text())
    assert meta["info"]["alphabet"] == ["a", "b", "c"] and meta["info"]["seed"] == 0
    assert main(["train", "--data", str(f), "--chars", "--out", str(tmp_path / "m.pt"), "--train-steps", "1"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_cli_train_bad_threads_is_one_line_and_no_bar_off_a_terminal(tmp_path, capsys):
    """--threads 0 was a RuntimeError traceback from torch.set_num_threads; and without a
    terminal on stderr the progress bar stays silent (the CLI's rule), even without --quiet."""
    from mdmtheory.cli import main

    f = tmp_path / "w.txt"
    f.write_text("abc\nbca\ncab\nabc\n")
    out = str(tmp_path / "m.safetensors")
    assert main(["train", "--data", str(f), "--chars", "--out", out, "--train-steps", "2", "--threads", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mdmtheory train: error: --threads"), err
    threads = torch.get_num_threads()
    try:
        assert main(["train", "--data", str(f), "--chars", "--out", out, "--train-steps", "2", "--batch-size", "4"]) == 0
    finally:
        torch.set_num_threads(threads)
    assert capsys.readouterr().err == ""


def test_weight_decay_is_validated():
    _, x = _data(n=50)
    for bad in (-0.1, float("nan"), "0.1"):
        with pytest.raises(ValueError, match="weight_decay"):
            train(_model(), x, steps=1, weight_decay=bad)


# -- issue 17, item 12 ------------------------------------------------------------------------------
def test_sizes_and_arguments_are_checked_before_training():
    from mdmtheory.bridge.train import MAX_THREADS, mdm_loss

    _, x = _data(n=50)
    m = _model()
    before = [p.detach().clone() for p in m.parameters()]
    threads = torch.get_num_threads()
    with pytest.raises(ValueError, match=r"^batch_size: .*MAX_BATCH_TOKENS"):  # formerly an allocator RuntimeError
        train(m, x, steps=1, batch_size=10**12)
    with pytest.raises(ValueError, match=rf"^num_threads: expected an integer in 1\.\.{MAX_THREADS}"):  # formerly MemoryError
        train(m, x, steps=1, num_threads=100000)
    with pytest.raises(ValueError, match=r"^weighting: expected one of"):
        train(m, x, steps=1, weighting=np.array(["elbo"]))
    with pytest.raises(ValueError, match=r"^samples: expected integer outcome indices"):
        train(m, x.astype(float), steps=1)
    with pytest.raises(ValueError, match=r"^samples: expected an integer array"):
        train(m, "0123", steps=1)
    with pytest.raises(ValueError, match=r"^gen: expected a torch.Generator"):
        mdm_loss(m, torch.as_tensor(x[:4]), 0)
    with pytest.raises(ValueError, match=r"^x: expected a non-empty LongTensor"):
        mdm_loss(m, x[:4], torch.Generator())
    assert torch.get_num_threads() == threads
    assert all(torch.equal(a, b) for a, b in zip(before, m.parameters()))  # nothing trained


def test_a_huge_or_diverging_learning_rate_is_named():
    _, x = _data(n=50)
    with pytest.raises(ValueError, match=r"^lr: expected a learning rate in \(0, 1000\]"):  # formerly a torch overflow
        train(_model(), x, steps=1, lr=1e300, batch_size=8)
    m = _model()
    with torch.no_grad():
        m.head.bias[0] = float("nan")
    with pytest.raises(ValueError, match=r"^lr: the training loss became nan"):  # formerly trained on NaN silently
        train(m, x, steps=2, batch_size=8)
