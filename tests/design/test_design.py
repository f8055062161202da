"""mdmtheory design: exact route = optimal_schedule on the empirical law, estimated route on
exact conditionals, every export format from the CLI, one-line errors (the exports themselves:
tests/exports/test_formats.py)."""

import itertools
import json

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.data import datasets
from mdmtheory import exports
from mdmtheory.laws import families, oracles as structured
from mdmtheory.cli import main
from mdmtheory.design import defect_weights, design, estimate_cross_entropy_profile, memorization
from mdmtheory.design import CertificateOptions
from mdmtheory.laws import as_oracle


def _markov_samples(n=400, d=5, seed=0):
    p = families.markov_chain(np.array([[0.8, 0.2, 0.0], [0.1, 0.7, 0.2], [0.3, 0.0, 0.7]]), d)
    return p, as_oracle(p).sample(n, np.random.default_rng(seed))


def _write(tmp_path, x, name="data.txt"):
    f = tmp_path / name
    f.write_text("\n".join(" ".join(str(v) for v in row) for row in x) + "\n")
    return f


def _brute_best(prof, T):
    """Least path KL over all compositions of d into T parts, by enumeration."""
    d = prof.d
    best = np.inf
    for cuts in itertools.combinations(range(1, d), T - 1):
        sizes = np.diff((0,) + cuts + (d,))
        best = min(best, mt.path_kl(prof, mt.Schedule(sizes)))
    return best


# -- the exact route -------------------------------------------------------------------------
@pytest.mark.parametrize("T", [1, 2, 3, 4])
def test_exact_route_matches_optimal_schedule_on_the_empirical_law(tmp_path, capsys, T):
    _, x = _markov_samples()
    f = _write(tmp_path, x)
    assert main(["design", "--data", str(f), "--steps", str(T), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    emp = families.empirical(x, 3)
    prof = mt.information_profile(emp)
    assert out["method"] == "exact" and "exact" in out["note"]
    assert out["steps"] == T and sum(out["sizes"]) == 5
    assert out["path_kl"] == pytest.approx(mt.path_kl(prof, mt.optimal_schedule(prof, T)), abs=1e-12)
    assert out["path_kl"] == pytest.approx(_brute_best(prof, T), abs=1e-12)
    assert out["path_kl"] == pytest.approx(mt.path_kl(emp, mt.Schedule(out["sizes"])), abs=1e-12)
    np.testing.assert_allclose(out["profile"], prof.values, atol=1e-12)


def test_budget_gives_the_fewest_steps(tmp_path, capsys):
    _, x = _markov_samples()
    prof = mt.information_profile(families.empirical(x, 3))
    best = [_brute_best(prof, T) for T in range(1, 6)]
    eps = (best[1] + best[2]) / 2  # T = 3 is the first within budget
    assert best[1] > eps >= best[2]
    assert main(["design", "--data", str(_write(tmp_path, x)), "--budget", str(eps), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["steps"] == 3 and out["path_kl"] <= eps


def test_chars_data_human_output(tmp_path, capsys):
    f = tmp_path / "w.txt"
    f.write_text("abc\nabd\nbbc\nabc\n")
    assert main(["design", "--data", str(f), "--chars", "--steps", "2"]) == 0
    text = capsys.readouterr().out
    assert "used exactly" in text and "optimal schedule, T = 2" in text


# -- the estimated route ---------------------------------------------------------------------
def test_estimator_is_unbiased_on_exact_conditionals():
    """With the true law's conditionals the cross-entropy profile is the exact profile: z-scores."""
    p, x = _markov_samples(n=4000)
    est = estimate_cross_entropy_profile(as_oracle(p), x, n_per_level=3000, seed=1)
    z = (est.values - mt.information_profile(p).values) / est.stderr
    assert np.all(np.abs(z[:-1]) < 5), z
    assert est.forwards == 5 * 3000


def test_estimated_route_on_exact_conditionals(tmp_path):
    p, x = _markov_samples(n=4000)
    prof = mt.information_profile(p)
    res = design(x, K=3, model=as_oracle(p), steps=2, n_per_level=3000, seed=2)
    assert res.method == "estimated" and res.stderr is not None
    # the schedule chosen from the estimate is (near) optimal on the true law
    assert mt.path_kl(prof, res.schedule) <= _brute_best(prof, 2) + 0.02
    lo, hi = res.ci
    true = mt.path_kl(prof, res.schedule)
    sd = (hi - lo) / (2 * 1.959964)
    assert abs(res.path_kl - true) < 5 * sd
    w = defect_weights(res.schedule)
    assert res.path_kl == pytest.approx(float(np.sum(w * res.profile.values)))
    assert res.path_cross_entropy == pytest.approx(res.path_kl + res.profile.entropy)


def test_estimated_route_on_a_tiny_checkpoint(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    from mdmtheory.bridge.tiny import TinyConfig, TinyMDM, save_checkpoint

    _, x = _markov_samples()
    torch.manual_seed(0)
    m = TinyMDM(TinyConfig(vocab_size=3, seq_len=5, d_model=8, n_layers=1, n_heads=2, d_ff=8))
    st, _ = save_checkpoint(m, tmp_path / "m.safetensors", info={"alphabet": ["0", "1", "2"]})
    f = _write(tmp_path, x)
    assert main(["design", "--data", str(f), "--model", st, "--steps", "2", "--n-per-level", "20", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "estimated" and len(out["profile_stderr"]) == 5
    # brute force: the model's c(m) on the empirical law of the data, every row and every
    # revealed set of size m enumerated; the estimate agrees by z-score
    exact = np.zeros(5)
    with torch.no_grad():
        for m_ in range(5):
            sets = [np.isin(np.arange(5), A) for A in itertools.combinations(range(5), m_)]
            for rev in sets:
                ids = torch.tensor(np.where(rev, x, 3))
                lp = torch.log_softmax(m(ids).logits.double(), -1).numpy()
                nll = -np.take_along_axis(lp, x[..., None], -1)[..., 0]
                exact[m_] += nll[:, ~rev].mean() / len(sets)
    z = (np.array(out["profile"]) - exact) / np.array(out["profile_stderr"])
    assert np.all(np.abs(z) < 5), z
    w = np.full(5, -1.0)  # the defect's weights by hand: k_t at each step start s_t, minus 1
    for st, k in zip(np.cumsum([0] + out["sizes"][:-1]), out["sizes"]):
        w[st] += k
    assert out["path_kl"] == pytest.approx(float(w @ np.array(out["profile"])), abs=1e-12)


# -- exports: tests/exports/test_formats.py runs each through its sampler's rule; here the CLI ------
@pytest.mark.parametrize("fmt", exports.FORMATS)
def test_cli_every_format(tmp_path, capsys, fmt):
    _, x = _markov_samples()
    assert main(["design", "--data", str(_write(tmp_path, x)), "--steps", "3", "--format", fmt, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["export"]["format"] == fmt and out["steps"] == 3
    assert main(["design", "--data", str(_write(tmp_path, x)), "--steps", "3", "--format", fmt]) == 0
    assert f"export ({fmt})" in capsys.readouterr().out


# -- bad input: one line on stderr, exit 2 ---------------------------------------------------
def _bad(tmp_path):
    good = _write(tmp_path, [[0, 1, 2], [2, 1, 0]], "good.txt")
    ragged = tmp_path / "ragged.txt"
    ragged.write_text("0 1 2\n0 1\n")
    neg = tmp_path / "neg.txt"
    neg.write_text("0 1 -2\n")
    foreign = tmp_path / "foreign.pt"
    foreign.write_bytes(b"\x80\x02pickle")
    from safetensors.numpy import save_file

    save_file({"w": np.zeros(2, np.float32)}, str(tmp_path / "alien.safetensors"))
    return [
        [str(tmp_path / "missing.txt"), "--steps", "1"],
        [str(ragged), "--steps", "1"],
        [str(neg), "--steps", "1"],
        [str(good), "--steps", "4"],
        [str(good), "--steps", "0"],
        [str(good), "--budget", "0"],
        [str(good), "--budget", "-1"],
        [str(good), "--steps", "1", "--model", str(foreign)],
        [str(good), "--steps", "1", "--model", str(tmp_path / "alien.safetensors")],
        [str(good), "--steps", "1", "--model", str(tmp_path / "nothing.safetensors")],
    ]


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    pytest.importorskip("safetensors")
    for argv in _bad(tmp_path):
        assert main(["design", "--data", *argv]) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("mdmtheory design: error:"), (argv, err)


def test_design_function_argument_errors():
    _, x = _markov_samples(n=20)
    with pytest.raises(ValueError, match="exactly one"):
        design(x, steps=2, target_kl=0.1)
    with pytest.raises(ValueError, match="steps"):
        design(x, steps=6)
    with pytest.raises(ValueError, match="^target_kl: "):
        design(x, target_kl=0.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        design(x, steps=2, colour=1)
    with pytest.raises(ValueError, match="exact_limit"):
        design(x, steps=2, exact_limit=0)


def test_too_large_for_the_table_estimates_the_empirical_law():
    """Over exact_limit and no model: the docs' estimated route on the empirical law's own
    conditionals (it used to refuse): z-scores against the dense empirical profile."""
    _, x = _markov_samples(n=300)
    prof = mt.information_profile(families.empirical(x, 3))
    res = design(x, K=3, steps=2, exact_limit=10, n_per_level=2000, seed=5)  # 3^5 cells > 10
    assert res.method == "estimated" and "empirical law" in res.note
    z = (res.profile.values - prof.values) / res.stderr
    assert np.all(np.abs(z[:-1]) < 5), z
    assert mt.path_kl(prof, res.schedule) <= _brute_best(prof, 2) + 0.02
    sd = (res.ci[1] - res.ci[0]) / (2 * 1.959964)
    assert abs(res.path_kl - mt.path_kl(prof, res.schedule)) < 5 * sd


def test_estimated_route_on_bridge_exact_model():
    """design(model=bridge.ExactModel(p)) goes through bridge.estimate_profile: the estimate
    matches the exact profile by z-score and the schedule is optimal on the true law."""
    pytest.importorskip("torch")
    bridge = pytest.importorskip("mdmtheory.bridge")
    if not hasattr(bridge, "ExactModel"):
        pytest.skip("bridge estimators not merged")
    p, x = _markov_samples(n=4000)
    prof = mt.information_profile(p)
    res = design(x, K=3, model=bridge.ExactModel(p), steps=3, n_per_level=2000, seed=4)
    z = (res.profile.values - prof.values) / res.stderr
    assert res.method == "estimated" and np.all(np.abs(z[:-1]) < 5), z
    assert mt.path_kl(prof, res.schedule) <= _brute_best(prof, 3) + 0.02


# -- --certify (issue 14) ----------------------------------------------------------------------
def test_certify_json_reads_back_and_holds_exactly_on_the_empirical_law(tmp_path, capsys):
    """The printed grid is a valid mt.Grid and its exact KL on the empirical law is <= EPS."""
    _, x = _markov_samples(n=300)
    f = _write(tmp_path, x)
    eps = 0.05
    assert main(["design", "--data", str(f), "--certify", str(eps), "--confidence", "0.9", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    g = mt.Grid(out["times"])
    assert g.steps == out["steps"] and out["confidence"] == 0.9 and out["bound"] <= eps
    assert out["law"] == "empirical" and "empirical law" in out["note"]
    pe = families.empirical(x, 3)
    assert mt.kl(pe, mt.sampler_law(pe, g)) <= eps
    assert main(["design", "--data", str(f), "--certify", str(eps)]) == 0  # the human-readable form
    assert "certified" in capsys.readouterr().out


def test_empirical_oracle_is_the_empirical_table():
    """Conditionals of the point-mass mixture = those of the dense empirical Joint (brute force),
    and certify_data = certify on the dense table with the same draws and seed."""
    from mdmtheory.design import certify, certify_data
    from mdmtheory.laws import empirical_oracle

    _, x = _markov_samples(n=80, seed=3)
    law, pe = empirical_oracle(x, 3), families.empirical(x, 3)
    rng = np.random.default_rng(0)
    rev = rng.random((50, 5)) < 0.5
    q = x[rng.integers(0, 80, 50)]
    want = np.zeros((50, 5, 3))
    for r in range(50):  # brute force: frequencies among the observed rows agreeing on A
        agree = np.all((x == q[r]) | ~rev[r], axis=1)
        for j in np.flatnonzero(~rev[r]):
            want[r, j] = np.bincount(x[agree, j], minlength=3) / agree.sum()
    np.testing.assert_allclose(law.conditionals(q, rev), want, atol=1e-12)
    np.testing.assert_allclose(law.conditionals(q, rev), as_oracle(pe).conditionals(q, rev), atol=1e-12)
    cert, note = certify_data(x, 0.05, K=3, seed=2, options=CertificateOptions(form="entropy"))
    draws = x[np.random.default_rng([2, 1]).integers(0, 80, size=80)]
    ref = certify(pe, draws, 0.05, seed=2, options=CertificateOptions(form="entropy"))
    assert cert.steps == ref.steps and cert.upper == pytest.approx(ref.upper, rel=1e-10, abs=1e-12)


def test_certify_on_a_tiny_checkpoint(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    from mdmtheory.bridge.tiny import TinyConfig, TinyMDM, save_checkpoint

    _, x = _markov_samples(n=40)
    torch.manual_seed(0)
    m = TinyMDM(TinyConfig(vocab_size=3, seq_len=5, d_model=8, n_layers=1, n_heads=2, d_ff=8))
    st, _ = save_checkpoint(m, tmp_path / "m.safetensors", info={"alphabet": ["0", "1", "2"]})
    f = _write(tmp_path, x)
    assert main(["design", "--data", str(f), "--model", st, "--certify", "0.1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["law"] == "model" and "model's own law" in out["note"]
    assert mt.Grid(out["times"]).steps == out["steps"] and out["bound"] <= 0.1


def test_certify_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    _, x = _markov_samples(n=20)
    f = str(_write(tmp_path, x))
    for argv in ([f, "--certify", "0"], [f, "--certify", "-0.1"], [f, "--certify", "nan"],
                 [f, "--certify", "0.1", "--confidence", "0"], [f, "--certify", "0.1", "--confidence", "1"],
                 [f, "--certify", "0.1", "--confidence", "1.5"], [f, "--certify", "0.1", "--steps", "2"],
                 [f, "--certify", "0.1", "--budget", "0.1"], [f, "--steps", "2", "--confidence", "0.9"],
                 [f, "--certify", "0.1", "--format", "llada"]):
        try:  # argparse's own errors (exclusive options) exit through SystemExit(2)
            rc = main(["design", "--data", *argv])
        except SystemExit as exc:
            rc = exc.code
        assert rc == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("mdmtheory design: error:"), (argv, err)


# -- memorization of the empirical law (issue 17, item 1) ------------------------------------
def _brute_unique(x, A):
    """Fraction of rows i for which no other row agrees with row i on every position of A."""
    n = x.shape[0]
    A = list(A)
    same = (x[:, None, A] == x[None, :, A]).all(axis=-1) if A else np.ones((n, n), bool)
    np.fill_diagonal(same, False)
    return float(np.mean(~same.any(axis=1)))


def test_memorization_is_the_brute_force_unique_context_rate():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3, size=(40, 5))
    x[30:] = x[:10]  # duplicates share every context
    mem = memorization(x)
    for m in range(5):
        subs = list(itertools.combinations(range(5), m))
        assert mem.subsets[m] == len(subs) and mem.stderr[m] == 0
        assert mem.unique[m] == pytest.approx(np.mean([_brute_unique(x, A) for A in subs]), abs=1e-12)
    assert mem.distinct == len({tuple(r) for r in x.tolist()})
    over = [m for m in range(5) if mem.unique[m] > 0.5]
    assert mem.memorized_from == (over[0] if over else None)
    # sampled levels (more subsets than `subsets`) agree with the full enumeration within their stderr
    x = rng.integers(0, 2, size=(60, 9))
    mem = memorization(x, subsets=40, seed=1)
    for m in range(9):
        exact = np.mean([_brute_unique(x, A) for A in itertools.combinations(range(9), m)])
        assert abs(mem.unique[m] - exact) <= 5 * mem.stderr[m] + 0.03, (m, mem.unique[m], exact)


def test_d32_markov_with_2000_rows_is_flagged_as_memorized(tmp_path, capsys):
    """n = 2000 rows of a d = 32 chain (n << 4^32): the empirical profile is memorized rows."""
    x = datasets.markov(d=32).sample(2000, seed=0)
    res = design(x, K=4, steps=8, n_per_level=20)
    assert res.memorized and res.warning is not None
    for route in ("--model", "mdmtheory train", "MarkovChainLaw"):
        assert route in res.warning
    m0 = res.memorization.memorized_from
    assert 0 < m0 < 32 and res.memorization.unique[m0 - 1] <= 0.5
    # an independent estimate (pairwise comparisons, other subsets) agrees that level m0 is mostly unique
    rng = np.random.default_rng(99)
    u = np.mean([_brute_unique(x, rng.permutation(32)[:m0]) for _ in range(8)])
    assert u > 0.5 and abs(u - res.memorization.unique[m0]) < 0.1
    np.save(tmp_path / "m.npy", x)
    assert main(["design", "--data", str(tmp_path / "m.npy"), "--steps", "8", "--n-per-level", "20", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["memorized"] is True and out["warning"] == res.warning
    assert out["memorization"]["memorized_from"] == m0
    from mdmtheory.cli.design import render

    text = render(out)  # the text form of the same result
    assert "WARNING: memorized" in text and "not a design for the data's source" in text
    assert "optimal schedule" not in text


def test_plenty_of_data_is_not_flagged(tmp_path, capsys):
    """n = 5000 >> K^d = 81: every context is shared, no warning."""
    _, x = _markov_samples(n=5000, d=4)
    res = design(x, K=3, steps=2)
    assert not res.memorized and res.warning is None
    assert np.all(res.memorization.unique < 0.05)
    f = _write(tmp_path, x)
    assert main(["design", "--data", str(f), "--steps", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["memorized"] is False and out["warning"] is None
    assert main(["design", "--data", str(f), "--steps", "2"]) == 0
    text = capsys.readouterr().out
    assert "WARNING" not in text and "optimal schedule, T = 2" in text


def test_a_structured_fit_is_an_honest_route_without_the_warning():
    """The route the warning offers: a Markov chain fitted to the rows, designed on as an oracle."""
    x = datasets.markov(d=32).sample(2000, seed=0)
    counts = np.ones((4, 4))
    np.add.at(counts, (x[:, :-1].ravel(), x[:, 1:].ravel()), 1)
    law = structured.MarkovChainLaw(counts / counts.sum(1, keepdims=True), 32)
    res = design(x, K=4, model=law, steps=8, n_per_level=50)
    assert res.memorization is None and res.warning is None and not res.memorized
    # its profile stays away from 0 where the empirical one is memorized
    assert res.profile.values[-1] > 0.1


def test_a_torch_model_with_more_outcomes_than_the_data_is_refused_like_an_oracle():
    """Issue 17 item 12 (inconsistency): design and certify_data refused an oracle whose K
    differs from the data's but accepted a torch model with more outcomes; one rule now,
    and K= given explicitly is the way to say the data do not use every outcome."""
    pytest.importorskip("torch")
    from mdmtheory.bridge.tiny import TinyConfig, TinyMDM
    from mdmtheory.design import certify_data
    from mdmtheory.design import design

    m = TinyMDM(TinyConfig(vocab_size=4, seq_len=3, d_model=8, n_layers=1, n_heads=2, d_ff=8))
    x = np.random.default_rng(0).integers(0, 3, size=(40, 3))  # tokens 0..2: K = 3 seen
    oracle = mt.laws.MarkovChainLaw(np.full((4, 4), 0.25), 3)
    for model in (m, oracle):
        with pytest.raises(ValueError, match="model: has K=4 outcomes, the data have K=3; pass K=4"):
            design(x, model=model, steps=2, n_per_level=4)
        with pytest.raises(ValueError, match="model: has K=4 outcomes, the data have K=3; pass K=4"):
            certify_data(x, 0.5, model=model)
    assert design(x, K=4, model=m, steps=2, n_per_level=4).K == 4


def test_oracle_estimate_is_the_bridge_estimate_on_the_same_draws():
    """design.estimate_cross_entropy_profile on an oracle and bridge.estimate_profile on a torch model of the
    same conditionals share the estimator (information.montecarlo): same draws for the same
    seed, so the same numbers up to rounding of the scores; the oracle's ``batch`` changes
    nothing (counter-based draws)."""
    pytest.importorskip("torch")
    from mdmtheory import bridge

    p, x = _markov_samples(n=300)
    for kw in ({}, {"prompt_length": 1}, {"prompt_length": 1, "response_length": 2}):
        a = estimate_cross_entropy_profile(as_oracle(p), x, n_per_level=200, seed=7, **kw)
        b = bridge.estimate_profile(bridge.ExactModel(p), x, n_per_level=200, seed=7, **kw)
        np.testing.assert_allclose(a.values, b.values, rtol=1e-13, atol=0)
        np.testing.assert_allclose(a.stderr, b.stderr, rtol=1e-9, atol=1e-15)
        assert a.forwards == b.forwards == int(np.sum(b.counts)) and np.array_equal(a.levels, b.levels)
        c = estimate_cross_entropy_profile(as_oracle(p), x, n_per_level=200, seed=7, batch=37, **kw)
        assert np.array_equal(c.values, a.values) and np.array_equal(c.stderr, a.stderr)


def test_budget_keyword_is_target_kl_for_one_release():
    """design/design_blocks_from_data(budget=EPS) (a path-KL target, not a number of steps): a DeprecationWarning and
    the same design as target_kl=EPS; Design.budget reads .target_kl with a warning."""
    _, x = _markov_samples(n=200)
    from mdmtheory.design import design_blocks_from_data

    new = design(x, target_kl=0.05)
    with pytest.warns(DeprecationWarning, match=r"design\(budget=\.\.\.\) is now design\(target_kl=\.\.\.\)"):
        old = design(x, budget=0.05)
    assert old.schedule == new.schedule and old.target_kl == new.target_kl == 0.05 and old.path_kl == new.path_kl
    with pytest.warns(DeprecationWarning, match="Design.budget"):
        assert new.budget == 0.05
    assert design(x, steps=2).target_kl is None
    bnew = design_blocks_from_data(x, target_kl=0.05)
    with pytest.warns(DeprecationWarning, match="design_blocks_from_data"):
        bold = design_blocks_from_data(x, budget=0.05)
    assert bold == bnew
    with pytest.raises(ValueError, match="^target_kl: give either"):
        design(x, target_kl=0.05, budget=0.05)


def test_defect_weights_takes_a_schedule_or_its_sizes_and_refuses_the_rest():
    """defect_weights(True) raised AttributeError ('bool' has no attribute 'd'). The weights from
    their definition: w_m = -1 + (k_t at m = s_t), so sum_t k_t c(s_t) - sum_m c(m) = sum_m w_m c(m)."""
    sizes = (1, 3, 2)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    ref = -np.ones(6)
    ref[starts] += sizes
    np.testing.assert_array_equal(defect_weights(mt.Schedule(sizes)), ref)
    np.testing.assert_array_equal(defect_weights(list(sizes)), ref)
    for bad in [True, None, 3.5, "12", {"a": 1}, [[0, 1], [1]], [0, 2]]:
        with pytest.raises(ValueError, match=r"^schedule: "):
            defect_weights(bad)
