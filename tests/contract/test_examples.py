"""Every example runs in fast mode (as CI does) and prints numbers that agree with theory.

Examples are loaded from their files and their ``main(["--fast"])`` called in-process (one
JAX start-up for all). Checks are on what the examples claim, with references written here.
"""

import importlib.util
import math
import pathlib

import numpy as np
import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _run(name, capsys):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.main(["--fast"])
    text = capsys.readouterr().out
    assert text.strip(), f"{name} printed nothing"
    return out, text


def test_every_example_is_tested():
    tested = {"dimension_independence", "optimal_vs_cosine", "planner_comparison", "w26_repeated_bit_parity",
              "dyadic_counterexample", "attention_floating", "w26_mixtures", "w26_printed_numbers"}
    present = {p.stem for p in EXAMPLES.glob("*.py")}
    tested.add("word_schedule")
    tested.add("prompted_blocks")
    tested.add("sample_then_select")
    tested.add("random_sizes")
    tested.add("revision")
    tested.add("sampler_centric")
    tested.add("kl_sweep")
    tested.add("findings")
    assert present <= tested, present - tested


def test_dimension_independence(capsys):
    out, _ = _run("dimension_independence", capsys)
    assert out["check_err"] < 1e-12
    consts = [r[2] for r in out["rows"]]
    assert all(r[3] <= r[2] + 1e-12 for r in out["rows"])  # optimal <= constant
    assert all(c <= out["riemann"] + 1e-12 for c in consts)  # d-free Riemann bound
    assert max(consts) / min(consts) < 1.5  # bounded while d grows 25x


def test_optimal_vs_cosine(capsys):
    out, _ = _run("optimal_vs_cosine", capsys)
    for (law, T, s), (exact, path) in out.items():
        assert exact <= path + 1e-12
        assert out[(law, T, "optimal")][1] <= path + 1e-12  # the optimum of the path KL


def test_planner_comparison(capsys):
    out, text = _run("planner_comparison", capsys)
    table = out["table"]
    assert "confidence / random" in text and table.kl.shape[1] == 7
    assert np.all(table.kl >= -1e-12)


def test_w26_repeated_bit_parity(capsys):
    out, _ = _run("w26_repeated_bit_parity", capsys)
    assert out["check_err"] < 1e-12
    rows = out["rows"]
    # repeated bit: h(t) = d log 2 (1 − (1 − t)^{d−1}) (THEORY §6); C_ugc = 2 ℓ_d H(1/d, 1 − 1/d) by quadrature here
    from scipy.integrate import quad

    d = rows[2][0]
    hp = lambda t: d * math.log(2) * (d - 1) * (1 - t) ** (d - 2)  # noqa: E731
    H, _ = quad(lambda t: t * (1 - t) * hp(t), 1 / d, 1 - 1 / d, epsabs=1e-14)
    assert rows[2][1] == pytest.approx(2 * math.log(d - 1) * H, rel=1e-10)
    P, _ = quad(lambda t: math.sqrt(hp(t)), 1 / d, 1 - 1 / d, epsabs=1e-14)
    assert rows[2][2] == pytest.approx(P**2, rel=1e-8)
    ratio = [r[1] / r[2] / math.log(r[0]) for r in rows]
    assert abs(ratio[-1] - ratio[-2]) < 0.05 and rows[-1][1] / rows[-1][2] > 2 * rows[0][1] / rows[0][2]


def test_dyadic_counterexample(capsys):
    out, text = _run("dyadic_counterexample", capsys)
    H, eq, ok = out[("repeated bit d=3", "stated")]
    assert not ok and H > 2 * eq
    assert all(out[(n, "corrected")][2] for n in ("repeated bit d=3", "dirichlet d=3"))
    assert abs(out["z"]) < 5


def test_word_schedule(capsys):
    pytest.importorskip("torch")
    pytest.importorskip("wordfreq")
    import itertools

    out, _ = _run("word_schedule", capsys)
    phi, c, se = out["phi"], out["c"], out["stderr"]
    assert np.all(c >= phi - 5 * se)  # cross-entropy >= entropy (Gibbs), up to Monte Carlo error
    d = len(phi)
    for r in out["rows"]:
        T = r["T"]
        best = min(
            sum((b[i + 1] - b[i]) * phi[b[i]] for i in range(T)) - phi.sum()
            for cuts in itertools.combinations(range(1, d), T - 1)
            for b in [(0,) + cuts + (d,)]
        )
        assert r["path_optimal"] == pytest.approx(best, abs=1e-10)
        assert r["path_designed"] >= best - 1e-10


@pytest.mark.slow  # ~18 s (it trains two tiny models); its quantities are tested in tests/bridge/test_attention*.py
def test_attention_floating(capsys):
    pytest.importorskip("torch")
    pytest.importorskip("wordfreq")
    out, _ = _run("attention_floating", capsys)
    d = 5
    # absorption of one position is a share of the attention: in [0, 1]; uniform causal
    # attention gives BOS the mean of 1/(i+1) over the d query rows
    assert out["ar_bos_uniform_causal"] == pytest.approx(sum(1 / (i + 1) for i in range(d)) / d)
    for key in ("mdm_position0_absorption", "ar_bos_absorption"):
        m = np.asarray(out[key]["mean"])
        assert np.all((m >= 0) & (m <= 1))
    for kind in ("info_pointwise", "info_average"):
        rho = np.asarray(out[kind]["rho_mean"], dtype=float)
        assert np.all(np.abs(rho[np.isfinite(rho)]) <= 1 + 1e-12)


def test_w26_mixtures(capsys):
    import re

    _, text = _run("w26_mixtures", capsys)
    rows = re.findall(r"^\s*32\s+256\s+\d+\s+([\d.]+)±\S+\s+([\d.]+)±\S+\s+([\d.]+)±\S+\s+([\d.]+)±", text, re.M)
    assert rows, text
    for c_ugc, c_p, p_ugc, ratio in (tuple(map(float, r)) for r in rows):
        # W26: C_ugc >= C(P) (Cauchy-Schwarz) and C(P) >= P_ugc, all three from one estimated profile
        assert c_ugc >= c_p >= p_ugc and ratio == pytest.approx(c_ugc / p_ugc, rel=1e-2)


def test_prompted_blocks(capsys):
    """One block of the whole response is the plain optimal schedule of the prompted
    profile; the pick is the best candidate; the scheduler carries the pick's counts."""
    import mdmtheory as mt

    out, text = _run("prompted_blocks", capsys)
    p = mt.families.markov_chain([[0.9, 0.1], [0.3, 0.7]], out["d"])
    prof = mt.information_profile(p, given=out["prompt"])
    n = prof.d
    for row in out["rows"]:
        F = row["forwards"]
        whole = [c for c in row["candidates"] if c["block_length"] == n][0]
        assert whole["path_kl"] == pytest.approx(mt.path_kl(prof, mt.optimal_schedule(prof, steps=F)), abs=1e-12)
        feasible = [c["path_kl"] for c in row["candidates"] if c["path_kl"] is not None]
        assert row["best"]["path_kl"] == min(feasible)
    if "scheduler_counts" in out:
        assert out["scheduler_counts"] == out["rows"][n // 2 - 1]["best"]["counts"]
    assert "pick B=" in text


def test_w26_printed_numbers(capsys):
    """W26's printed numbers (arXiv 2608.13520): the exact ones must match to the printed digits."""
    out, text = _run("w26_printed_numbers", capsys)
    assert out["nrb_check"] < 1e-10  # the exchangeable closed form = the dense table at d = 6
    # Figure 1 caption: Ratio in {4.51, 2.16, 1.65} "up to two digits" (d = 128, exact here)
    for eta, printed in ((0.01, 4.51), (0.30, 2.16), (0.45, 1.65)):
        assert abs(out["fig1"][eta]["ratio"] - printed) < 0.01, (eta, out["fig1"][eta]["ratio"])
    err_a, err_b, r_rep, r_par, H, H_printed = out["rep_par"]
    assert err_a < 1e-10 and err_b < 1e-10 and abs(r_rep - r_par) < 1e-5 * r_rep  # eqs. (24a-b), mirror laws (quadrature ~1e-6)
    assert H == pytest.approx(H_printed, rel=1e-9)  # §3.4: H(0, 1) = ((d - 1)/(d + 1)) log 2
    assert out["xorsat_check"] < 4  # the A-averaged formula against exact tables
    gains = [r["C_ugc"] / r["C3"] / math.sqrt(d * math.log(d)) for d, r in sorted(out["xorsat"].items())]
    assert all(b >= a for a, b in zip(gains, gains[1:]))  # Lemma 2: gain of 3 blocks >= c sqrt(d log d)
    assert "§2.2.2, Fig. 4" not in text or "65" in text


@pytest.mark.slow  # 7 s; the sample-then-select region of docs/findings.md (tests/contract/test_docs.py) re-runs the same example by default
def test_sample_then_select(capsys):
    from scipy.stats import norm

    out, text = _run("sample_then_select", capsys)
    d = out["d"]
    one = (1,) * d
    for name in ("parity", "markov chain (stay 0.9)"):
        assert out[(name, one, "random")][0] == pytest.approx(0.0, abs=1e-12)  # one token per step is exact
    # parity: every conditional is uniform until the last, which is a point mass: selecting
    # by confidence cannot bias a uniform draw, so sample-then-select is exact there too
    assert out[("parity", one, "STS T=1")][0] == pytest.approx(0.0, abs=1e-12)
    # on the chain it is not: bias toward likely tokens even at one token per step
    assert out[("markov chain (stay 0.9)", one, "STS T=1")][0] > 0.1
    assert out[("markov chain (stay 0.9)", one, "greedy")][0] == math.inf  # a point mass
    # Monte Carlo of random order agrees with the exact share of real words
    share, se, _ = out["words", "random order"]
    assert abs(share - out["words", "random", "exact"]) < norm.ppf(0.9995) * se
    assert "share of samples that are words" in text


def test_random_sizes(capsys):
    out, text = _run("random_sizes", capsys)
    for (name, T), (kl_det, kl_rand, path_det, path_lp) in out.items():
        assert kl_rand <= kl_det + 1e-15 and path_lp <= path_det + 1e-12  # a vertex is a feasible mixture
        assert kl_det <= path_det + 1e-12  # data processing: KL <= path KL
    assert "best randomized" in text


def test_revision(capsys):
    out, text = _run("revision", capsys)
    for key, v in out.items():
        if key[1] == "editing":
            sts, sts_fw, eds, rnd = v
            # exact counts: the block ends with its last mask step, editing costs no forward
            assert all(fw == pytest.approx(sts_fw) for _, fw in eds.values())
            continue
        if key[1] == "remdm":
            base, best = v
            if key[2] == 2:  # two steps: the cap (1 - alpha_s)/alpha_t is 0 or alpha_t = 0: no remasking
                assert best == pytest.approx(base, abs=1e-12)
        else:
            plain, corr, more = v
            assert min(plain, corr, more) >= 0 and max(plain, corr, more) < math.log(2) * 4
    assert "corrector" in text


def test_sampler_centric(capsys):
    out, text = _run("sampler_centric", capsys)
    rows = out["rows"]
    d = out["d"]
    theory = {T: v[0] for T, v in rows.items()}
    assert theory[d] == pytest.approx(0.0, abs=1e-12) and theory[min(rows)] > theory[d]
    # random order at one token per step is exact: its KL-rate is the plug-in floor's size
    few, full = rows[min(rows)][1]["random"], rows[d][1]["random"]
    assert full.kl_rate < few.kl_rate
    assert full.kl_rate_ci[0] <= out["floor"].kl_rate * 3
    assert "plug-in" in text and "the floor" in text
    # issue 31 §12: every printed point estimate lies in its own interval (the bias-corrected one;
    # the plug-in is biased upward and the text says it can lie above the interval)
    import re

    cells = re.findall(r"(-?\d+\.\d+) \[(-?\d+\.\d+),(-?\d+\.\d+)\]", text)
    assert len(cells) == 3 * len(rows)
    for v, lo, hi in cells:
        assert float(lo) - 5e-4 <= float(v) <= float(hi) + 5e-4, (v, lo, hi)
    for _, rates in rows.values():
        for r in rates.values():
            assert r.kl_rate_ci[0] <= r.kl_rate_corrected <= r.kl_rate_ci[1]
    assert "can lie above its own interval" in text


@pytest.mark.slow  # ~5 s; default twins of what it checks: tests/samplers/test_kernel.py::test_chain_under_vmap_equals_a_loop
# (vmap = a loop) and ::test_chain_kl_value_and_gradient (grad = finite differences)
def test_kl_sweep(capsys):
    out, text = _run("kl_sweep", capsys)
    assert out["err_loop"] < 1e-12  # vmap over the family = a loop of exact_run on mt.families.ising_chain
    assert out["err_fd"] < 1e-7  # vmap(grad) = central finite differences of the exact KL
    assert out["kl"][0] < 1e-15  # J = 0: independent bits, the factorized sampler is exact
    assert "vmap" in text


def test_findings(capsys):
    """--fast lists the generated regions and their files (tests/contract/test_docs.py compares their text)."""
    out, text = _run("findings", capsys)
    assert all(len(files) == 1 for files in out.values()), out
    assert out["readme-summary"] == ["README.md"] and "(slow)" in text
