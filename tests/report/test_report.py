"""The report: its numbers against brute-force references, every section in the HTML, images decode.

References are written here: entropies from the table, the path KL from its definition
Σ_t k_t φ(s_t) − H, the optimum by enumerating every composition of d, the recommended T
by scanning; the exact KL comes from the engine, which has its own tests.
"""

import base64
import io
import itertools
import json
import re
import shutil
import subprocess

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.laws import families
from mdmtheory.report import AttentionOptions, EXPORT_CONVENTIONS, SECTIONS, Report, build_report, render_html, step_counts, write_html
from mdmtheory.schedules import cosine_schedule, loglinear_grid
from reference import compositions, profile_path_kl


def _entropy(t):
    t = t[t > 0]
    return float(-(t * np.log(t)).sum())


def _brute_profile(p):
    """φ_m = mean over |A| = m, j ∉ A of H(X_j | X_A), from marginal entropies of the table."""
    d, T = p.d, p.table

    def H(S):
        axes = tuple(i for i in range(d) if i not in S)
        return _entropy(T.sum(axis=axes).ravel()) if S else 0.0

    phi = []
    for m in range(d):
        vals = [H(set(A) | {j}) - H(set(A)) for A in itertools.combinations(range(d), m) for j in range(d) if j not in A]
        phi.append(np.mean(vals))
    return np.array(phi)


@pytest.fixture(scope="module")
def law():
    return families.markov_chain([[0.9, 0.1], [0.3, 0.7]], 5)


@pytest.fixture(scope="module")
def report(law):
    return build_report(law, name="chain", source="test chain", target_kl=0.05)


def test_step_counts_cover_1_and_d():
    for d in (1, 2, 7, 13, 1000):
        Ts = step_counts(d)
        assert Ts[0] == 1 and Ts[-1] == d and Ts == sorted(set(Ts))
    assert step_counts(6) == [1, 2, 3, 4, 5, 6]


def test_law_and_profile_sections_match_brute_force(law, report):
    H = _entropy(law.table.ravel())
    assert report.law["entropy"] == pytest.approx(H, abs=1e-12)
    marg = sum(_entropy(law.table.sum(axis=tuple(j for j in range(5) if j != i))) for i in range(5))
    assert report.law["tc"] == pytest.approx(marg - H, abs=1e-12)
    np.testing.assert_allclose(report.profile["phi"], _brute_profile(law), atol=1e-12)
    assert report.profile["cross_entropy"] is None
    assert report.law["source"] == "test chain" and report.law["d"] == 5 and report.law["K"] == 2


def test_gain_section_is_consistent(report):
    g = report.gain
    phi = np.array(report.profile["phi"])
    # h(0) = 0 and h(1) = d (φ_0 − φ_{d−1}) (Bernstein end coefficients)
    assert g["h"][0] == pytest.approx(0.0, abs=1e-12)
    assert g["h"][-1] == pytest.approx(5 * (phi[0] - phi[-1]), abs=1e-12)
    assert np.all(np.diff(g["h"]) >= -1e-12)  # non-decreasing for an exact profile
    assert min(g["density"]) >= -1e-15 and g["C_ugc"] >= g["P_ugc"] - 1e-12  # Cauchy–Schwarz


def test_bounds_section_orders_exact_below_every_upper_bound(law, report):
    b = report.bounds
    assert b["steps"] == [1, 2, 3, 4, 5] and b["all_hold"]
    phi = np.array(report.profile["phi"])
    for i, T in enumerate(b["steps"]):
        sizes = list(mt.Schedule.constant(5, T).sizes)
        assert b["path_kl"][i] == pytest.approx(profile_path_kl(phi, sizes), abs=1e-12)
        assert b["kl"][i] <= b["path_kl"][i] + 1e-12
        for s in b["series"].values():
            exact = b["kl"][i] if s["quantity"] == "kl" else b["path_kl"][i]
            if s["kind"] == "upper":
                assert s["values"][i] >= exact - 1e-12
    assert b["kl"][0] == pytest.approx(report.law["tc"], abs=1e-10)  # one step: KL = TC
    assert abs(b["kl"][-1]) < 1e-12  # one token per step is exact
    assert {"data_processing", "riemann", "lc25_theorem1"} <= set(b["series"])


def test_frontier_is_the_brute_force_optimum_and_below_card_families(report):
    f = report.frontier
    phi = np.array(report.profile["phi"])
    for i, T in enumerate(f["steps"]):
        best = min(profile_path_kl(phi, c) for c in compositions(5, T))
        assert f["optimal"][i] == pytest.approx(best, abs=1e-12)
        assert profile_path_kl(phi, f["optimal_schedules"][i]) == pytest.approx(best, abs=1e-12)
        for name in ("constant", "cosine", "geometric"):
            v = f["families"][name][i]
            assert np.isnan(v) or v >= best - 1e-12
        assert f["optimal_exact_kl"][i] <= f["optimal"][i] + 1e-12


def test_planners_section_random_column_is_the_bounds_exact_kl(report):
    pl = report.planners
    j = pl["planners"].index("random")
    np.testing.assert_allclose([row[j] for row in pl["kl"]], report.bounds["kl"], atol=1e-13)
    assert all(abs(row[k]) < 1e-12 for row in pl["kl"][-1:] for k in range(len(row)))  # T = d exact


def test_recommended_is_the_fewest_steps_meeting_the_target(report):
    rec = report.recommended
    phi = np.array(report.profile["phi"])
    best = {T: min(profile_path_kl(phi, c) for c in compositions(5, T)) for T in range(1, 6)}
    expected = min(T for T in best if best[T] <= 0.05)
    assert rec["steps"] == expected and sum(rec["sizes"]) == 5
    assert rec["path_kl"] == pytest.approx(best[expected], abs=1e-12)
    assert rec["exact_kl"] <= rec["path_kl"] + 1e-12
    assert rec["meets_target"] is True and rec["exact_optimal_sizes"] == rec["sizes"]


def test_recommended_exports_follow_each_sampler_convention(report):
    """Every export of mdmtheory.exports, checked against its convention written out here."""
    rec = report.recommended
    ex = rec["exports"]
    assert set(ex) == {"llada", "dream", "mdlm", "dllm", "json"}
    assert set(ex) == set(EXPORT_CONVENTIONS)
    sizes = rec["sizes"]
    C = np.cumsum([0] + sizes)  # revealed counts C_0 = 0, ..., C_S = d
    S = len(sizes)
    # LLaDA, one block of gen_length = d: the counts themselves
    assert ex["llada"]["num_transfer_tokens"] == [sizes] and ex["llada"]["block_length"] == 5
    # Dream / MDLM: masked fraction 1 - C_j/d, the last node replaced by eps
    for fmt, eps in (("dream", 1e-3), ("mdlm", 1e-5)):
        t = np.array(ex[fmt]["times"])
        tol = 1e-6  # both float32 (Dream's and MDLM's dtype); Dream's nudged by ulps
        np.testing.assert_allclose(t[:-1], 1 - C[:-1] / 5, atol=tol)
        assert t[-1] == eps and np.all(np.diff(t) < 0)
        # a mask survives from t to s with probability s/t: expected reveals are the sizes
        left, expected = 5.0, []
        for j in range(S):
            k = left * (1 - t[j + 1] / t[j]) if j < S - 1 else left
            expected.append(k)
            left -= k
        np.testing.assert_allclose(expected, sizes, atol=1e-5)
    # MDLM: per-step dt, s = t - dt is the next time, and the last step reaches s = 0
    t, dt = np.array(ex["mdlm"]["times"]), np.array(ex["mdlm"]["dt"])
    np.testing.assert_allclose(t[:-1] - dt, np.r_[t[1:-1], 0.0], atol=1e-7)
    # Dream's non-origin algorithms take int(n_masked (1 - s/t)) in float32, the rest at the last step
    t32, left, got = np.array(ex["dream"]["times"], dtype=np.float32), 5, []
    for j in range(S):
        k = left if j == S - 1 else int(left * (np.float32(1) - t32[j + 1] / t32[j]))
        got.append(k)
        left -= k
    assert ex["dream"]["counts_from_grid"] == got and ex["dream"]["exact"] == (got == sizes)
    assert ex["dream"]["counts"] == sizes
    # dllm: alpha(t_j) = C_j/d on t_j = 1 - j/S
    np.testing.assert_allclose(ex["dllm"]["alpha_nodes"], C / 5)
    np.testing.assert_allclose(ex["dllm"]["t"], 1 - np.arange(S + 1) / S)
    # our json: read back by the package
    assert list(mt.Schedule.from_json(json.dumps(ex["json"])).sizes) == sizes
    np.testing.assert_allclose(ex["json"]["times"], C / 5)  # reveal times C_j/d, j = 0..S


def test_unavailable_export_is_said_not_dropped():
    from mdmtheory.report.report import _exports

    # Dream's eps = 1e-3 needs d < 1000: the record says why instead of failing or hiding it
    ex = _exports(mt.Schedule.constant(1000, 10))
    assert "eps" in ex["dream"]["unavailable"] and ex["dream"]["format"] == "dream"
    assert ex["mdlm"]["times"][-1] == 1e-5 and sum(ex["llada"]["num_transfer_tokens"][0]) == 1000


def test_recommend_steps_overrides_target(law):
    r = build_report(law, steps=[1, 5], planners=("random",), recommend_steps=2)
    assert r.recommended["steps"] == 2 and r.bounds["steps"] == [1, 5]


class _Estimate:
    def __init__(self, levels, values, stderr):
        self.levels, self.values, self.stderr, self.forwards = levels, values, stderr, 10


def test_cross_entropy_section_and_model_designed_schedule(law):
    phi = mt.information_profile(law).values
    eps = np.array([0.0, 0.3, 0.0, 0.0, 0.0])  # a model wrong at one level: designs a different schedule
    est = _Estimate(np.arange(5), phi + eps, np.full(5, 0.01))
    r = build_report(law, steps=[2, 3], planners=("random",), cross_entropy=est)
    ce = r.profile["cross_entropy"]
    np.testing.assert_allclose(ce["learning_error"], eps, atol=1e-12)
    np.testing.assert_allclose(np.array(ce["ci_high"]) - ce["values"], 1.959963984540054 * 0.01)
    md = r.frontier["model_designed"]
    for i, T in enumerate([2, 3]):
        assert sum(md["schedules"][i]) == 5 and len(md["schedules"][i]) == T
        assert md["path_kl"][i] >= r.frontier["optimal"][i] - 1e-12
        assert md["path_kl"][i] == pytest.approx(profile_path_kl(phi, md["schedules"][i]), abs=1e-12)
    rec = r.recommended  # the law is known: the exact optimum is recommended, the model's design beside it
    assert rec["sizes"] == list(mt.optimal_schedule(mt.information_profile(law), rec["steps"]).sizes)
    mdr = rec["model_designed"]
    assert sum(mdr["sizes"]) == 5 and len(mdr["sizes"]) == rec["steps"]
    assert mdr["path_kl"] == pytest.approx(profile_path_kl(phi, mdr["sizes"]), abs=1e-12)
    assert mdr["regret"] == pytest.approx(mdr["path_kl"] - rec["path_kl"], abs=1e-12) and mdr["regret"] >= 0


@pytest.mark.parametrize(
    "kwargs, word",
    [
        ({"steps": [0]}, "steps"),
        ({"steps": [9]}, "steps"),
        ({"target_kl": -1.0}, "target_kl"),
        ({"target_kl": float("nan")}, "target_kl"),
        ({"recommend_steps": 6}, "recommend_steps"),
        ({"planners": ()}, "planners"),
        ({"cross_entropy": object()}, "cross_entropy"),
        ({"cross_entropy": _Estimate([0, 7], [1.0, 1.0], [0.1, 0.1])}, "cross_entropy"),
        ({"cross_entropy": _Estimate([0], [float("nan")], [0.1])}, "cross_entropy"),
    ],
)
def test_bad_arguments_name_themselves(law, kwargs, word):
    with pytest.raises(ValueError, match=word):
        build_report(law, **kwargs)


def test_bad_law_is_refused():
    with pytest.raises(ValueError, match="^p: expected a mdmtheory.Joint"):
        build_report(np.ones((2, 2)) / 4)
    with pytest.raises(ValueError, match="report"):
        write_html({"law": {}}, "x.html")


def _images(text):
    return re.findall(r'<img alt="([^"]*)" src="data:image/png;base64,([A-Za-z0-9+/=]+)">', text)


def test_html_has_every_section_and_every_image_decodes(report, tmp_path):
    from PIL import Image

    path = write_html(report, tmp_path / "sub" / "r.html")
    text = path.read_text(encoding="utf-8")
    for key, title in SECTIONS.items():
        assert f'<h2 id="{key}">{title}</h2>' in text
    imgs = _images(text)
    assert len(imgs) == 7  # six sections' figures and the optimal adaptive plan's (section 6)
    for alt, b64 in imgs:
        im = Image.open(io.BytesIO(base64.b64decode(b64)))
        im.load()
        assert im.format == "PNG" and im.size[0] > 100 and im.size[1] > 100, alt
    assert text.count("<figcaption>") == 7
    # issue 31 §5: the geometric column's "–" below T = 3 is explained where it is shown
    assert np.isnan(report.frontier["families"]["geometric"][0]) and "3 ≤ T ≤ d" in text
    # self-contained: no script, no stylesheet link, no remote address
    assert "<script" not in text and "<link" not in text and "http" not in text.replace("&quot;", "")


def test_html_with_model_shows_the_cross_entropy_and_to_dict_is_json(law):
    phi = mt.information_profile(law).values
    r = build_report(law, steps=[1, 2], planners=("random",), cross_entropy=_Estimate(np.arange(5), phi + 0.01, np.full(5, 0.002)))
    text = render_html(r)
    assert "c(m) model" in text and "learning error" in text
    d = json.loads(json.dumps(r.to_dict(), allow_nan=True))
    assert set(d) == set(SECTIONS) and isinstance(r, Report)


def _chromium():
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe:
        return exe
    if shutil.which("apt-get") is None:
        return None
    try:
        subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], check=True, capture_output=True, timeout=600)
    except (subprocess.SubprocessError, OSError):
        try:
            subprocess.run(["apt-get", "update", "-q"], check=True, capture_output=True, timeout=300)
            subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], check=True, capture_output=True, timeout=600)
        except (subprocess.SubprocessError, OSError):
            return None
    return shutil.which("chromium")


@pytest.mark.slow
@pytest.mark.parametrize("which, n_images", [("report", 6), ("att_report", 9)])
def test_images_render_in_headless_chromium(which, n_images, request, tmp_path):
    exe = _chromium()
    if exe is None:
        pytest.skip("Debian's chromium is not installed and 'apt-get install chromium' failed (no root or no network)")
    text = render_html(request.getfixturevalue(which))
    probe = ("<script>window.addEventListener('load',()=>{document.body.setAttribute('data-sizes',"
             "[...document.images].map(i=>i.naturalWidth+'x'+i.naturalHeight+'x'+"
             "Math.round(i.getBoundingClientRect().width)+'x'+Math.round(i.getBoundingClientRect().height)).join(' '))})"
             "</script>")
    page = tmp_path / "probe.html"
    page.write_text(text.replace("</body>", probe + "</body>"), encoding="utf-8")
    out = subprocess.run(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    m = re.search(r'data-sizes="([^"]*)"', out.stdout)
    assert m, f"chromium gave no DOM: {out.stderr[-500:]}"
    sizes = [tuple(int(v) for v in s.split("x")) for s in m.group(1).split()]
    assert len(sizes) == n_images
    assert all(min(s) > 0 for s in sizes), sizes


# -- section 8: attention (a tiny random-weight MDM and causal baseline; torch needed) --------
@pytest.fixture(scope="module")
def tiny_models():
    torch = pytest.importorskip("torch")
    from mdmtheory.bridge.tiny import TinyConfig, TinyMDM

    torch.manual_seed(0)
    mdm = TinyMDM(TinyConfig(vocab_size=2, seq_len=5, d_model=16, n_layers=2, n_heads=2, d_ff=32)).eval()
    ar = TinyMDM(TinyConfig(vocab_size=2, seq_len=5, d_model=16, n_layers=2, n_heads=2, d_ff=32, causal=True)).eval()
    return mdm, ar


@pytest.fixture(scope="module")
def att_report(law, tiny_models):
    mdm, ar = tiny_models
    return build_report(law, steps=[1, 5], planners=("random",), target_kl=0.05,
                        attention=AttentionOptions(model=mdm, baseline=ar, samples=30, info_samples=12, seed=3))


def test_attention_section_numbers(law, report, tiny_models, att_report):
    import torch

    from mdmtheory.laws import as_oracle

    a = att_report.attention
    assert report.attention is None
    assert a["sizes"] == att_report.recommended["sizes"] and a["layers"] == 2 and a["n"] == 30
    T = len(a["sizes"])
    for key in ("received_sample", "received_mean"):
        s = np.array(a[key])
        assert s.shape == (2, T, 5)
        np.testing.assert_allclose(s.sum(axis=-1), 1.0, atol=1e-9)  # received attention is a distribution
    rv = np.array(a["revealed_sample"])
    np.testing.assert_array_equal(rv.sum(axis=1), np.concatenate([[0], np.cumsum(a["sizes"])[:-1]]))
    # d = 5: Samuelson, sqrt(4) = 2 < 3: no position can pass, every anchor is the fallback
    assert a["eps_can_pass"] is False and a["mdm"]["fallback"] == [1.0, 1.0] and a["mdm"]["n_anchors"] == [1.0, 1.0]
    # causal baseline: BOS absorption by hand from the model's own attention tensors on the same data
    data = as_oracle(law).sample(30, np.random.default_rng([3, 1]))
    with torch.no_grad():
        _, att = tiny_models[1](torch.as_tensor(data), output_attentions=True)
    bos = np.array([layer.double().mean(dim=1)[:, :, 0].sum(dim=1).numpy() / 5 for layer in att])  # (layers, n)
    np.testing.assert_allclose(a["baseline"]["bos_mean"], bos.mean(axis=1), atol=1e-6)
    np.testing.assert_allclose(a["baseline"]["bos_std"], bos.std(axis=1), atol=1e-6)
    assert a["baseline"]["uniform_causal_bos"] == pytest.approx(sum(1 / k for k in range(1, 6)) / 5)
    for kind in ("pointwise", "average"):
        c = a["information"][kind]
        assert c["impossible"] == 0 and all(-1 <= r <= 1 for r in c["rho_mean"])
    json.loads(json.dumps(att_report.to_dict()))


def test_attention_information_is_empty_for_independent_positions(tiny_models):
    # a product law: every revealed position carries zero information, no correlation is defined
    mdm, _ = tiny_models
    law = mt.families.product([[0.3, 0.7]] * 5)
    r = build_report(law, steps=[5], planners=("random",),
                     attention=AttentionOptions(model=mdm, samples=5, info_samples=6, steps=5))
    assert r.attention["sizes"] == [1] * 5 and r.attention["baseline"] is None
    for c in r.attention["information"].values():
        assert c["n_cases"] == [0, 0]
    text = render_html(r)
    assert len(_images(text)) == 10 and "no case with a defined correlation" in text


def test_attention_arguments_name_themselves(law, tiny_models):
    mdm, ar = tiny_models
    for kwargs, word in [({"baseline": ar}, "attention_baseline"),
                         ({"model": mdm, "steps": 9}, "attention_steps"),
                         ({"model": mdm, "samples": 0}, "attention_samples"),
                         ({"model": mdm, "eps": -1.0}, "attention_eps")]:
        with pytest.raises(ValueError, match=word):
            build_report(law, steps=[1], planners=("random",), attention=AttentionOptions(**kwargs))
    with pytest.raises(ValueError, match="^attention: expected a report.AttentionOptions"):
        build_report(law, steps=[1], planners=("random",), attention=mdm)


def test_old_attention_keywords_warn_and_give_the_same_report(law, tiny_models):
    """attention_model=, attention_samples=, …: one release, a DeprecationWarning, the same numbers."""
    mdm, ar = tiny_models
    new = build_report(law, steps=[5], planners=("random",),
                       attention=AttentionOptions(model=mdm, baseline=ar, samples=5, info_samples=6, steps=5, seed=1))
    with pytest.warns(DeprecationWarning, match=r"attention=AttentionOptions\("):
        old = build_report(law, steps=[5], planners=("random",), attention_model=mdm, attention_baseline=ar,
                           attention_samples=5, attention_info_samples=6, attention_steps=5, attention_seed=1)
    assert json.dumps(old.to_dict()) == json.dumps(new.to_dict())
    with pytest.raises(TypeError, match="unexpected keyword argument 'attention_colour'"):
        build_report(law, steps=[5], attention_colour=1)


@pytest.fixture(scope="module")
def att_html(att_report):
    return render_html(att_report)


def test_html_with_attention_has_three_more_figures(att_html):
    from PIL import Image

    text = att_html
    assert f'<h2 id="attention">{SECTIONS["attention"]}</h2>' in text
    imgs = _images(text)
    assert len(imgs) == 10 and text.count("<figcaption>") == 10
    for alt, b64 in imgs:
        im = Image.open(io.BytesIO(base64.b64decode(b64)))
        im.load()
        assert im.size[0] > 100 and im.size[1] > 100, alt
    assert "causal baseline: share of attention absorbed by BOS" in text and "Spearman" in text


# -- issue 17 items 10 and 11: the default demo shows a gain; wording -------------------------
def _falls(phi):
    return {m: phi[m - 1] - phi[m] for m in range(1, len(phi))}


def _sparse_brute_profile(p):
    """_brute_profile from the support of the table (the 26^5 words table has 3524 words)."""
    idx = np.argwhere(p.table > 0)
    w = p.table[tuple(idx.T)]

    def H(S):
        if not S:
            return 0.0
        _, inv = np.unique(idx[:, sorted(S)], axis=0, return_inverse=True)
        return _entropy(np.bincount(inv.ravel(), weights=w))

    d = p.d
    phi = []
    for m in range(d):
        vals = [H(set(A) | {j}) - H(set(A)) for A in itertools.combinations(range(d), m) for j in range(d) if j not in A]
        phi.append(np.mean(vals))
    return np.array(phi)


def _brute_step_costs(phi, sizes):
    out, s = [], 0
    for k in sizes:
        out.append(sum(phi[s] - phi[m] for m in range(s, s + k)))
        s += k
    return out


@pytest.mark.slow  # ~15 s (3524-word support); default twins: test_frontier_is_the_brute_force_optimum_and_below_card_families,
# test_recommended_is_the_fewest_steps_meeting_the_target (brute force on the fixture law) and the `demo` region of
# docs/guide.md (tests/contract/test_docs.py), which renders these numbers
def test_default_demo_budget_beats_every_family_by_brute_force():
    """The default report (five-letter words, T = DEFAULT_RECOMMEND_STEPS): the optimum found by
    enumerating every schedule of T steps differs from the constant one and beats constant,
    cosine and log-linear by more than 15%; the caption's claims hold."""
    from mdmtheory.cli.report import DEFAULT_RECOMMEND_STEPS, default_law
    from mdmtheory.report.report import _KLCache, _recommended_section, schedule_caption

    law = default_law(model=False)[0]
    T, d = DEFAULT_RECOMMEND_STEPS, law.d
    phi = _sparse_brute_profile(law)
    best = list(min(compositions(d, T), key=lambda s: profile_path_kl(phi, s)))
    best_kl = profile_path_kl(phi, best)
    const = list(mt.Schedule.constant(d, T).sizes)
    assert best != const
    prof = mt.Profile(phi)
    for name, other in [("constant", profile_path_kl(phi, const)), ("cosine", profile_path_kl(phi, cosine_schedule(d, T).sizes)),
                        ("log-linear", mt.path_kl(prof, loglinear_grid(T, eps=0.0)))]:
        assert best_kl < 0.85 * other, (name, best_kl, other)
    # the first-screen numbers docs/guide.md quotes (the demo paragraph) are these
    from pathlib import Path

    guide = " ".join((Path(__file__).parents[2] / "docs" / "guide.md").read_text().split())
    assert f"optimal schedule {best} has path KL {best_kl:.3f} nats against {profile_path_kl(phi, const):.3f}" in guide
    assert f"{mt.path_kl(prof, loglinear_grid(T, eps=0.0)):.3f} for the log-linear MDLM grid started at t = 0" in guide
    front = [(d // T) + (1 if i < d % T else 0) for i in range(T)]  # LLaDA's get_num_transfer_tokens
    assert f"{profile_path_kl(phi, front):.3f} for the split LLaDA's pipelines use, {front}" in guide
    # the report's record and caption, on the same law and budget (exact KL not needed here)
    cache = _KLCache(law)
    cache.values = type("NoKL", (dict,), {"__missing__": lambda self, k: float("nan")})()
    rec = _recommended_section(prof, mt.pareto_frontier(prof, d), 0.3, T, None, cache)
    assert rec["sizes"] == best and rec["differs_from_constant"] and rec["path_kl"] == pytest.approx(best_kl, abs=1e-9)
    assert rec["gains"]["constant"]["saved"] == pytest.approx(profile_path_kl(phi, const) - best_kl, abs=1e-9)
    np.testing.assert_allclose(rec["step_costs"], _brute_step_costs(phi, best), atol=1e-9)
    assert rec["constant_steps_to_match"] > T  # constant needs more steps for the same path KL
    # issue 31 §1, §6: at equal forwards no family beats the optimum (the log-linear grid starts at
    # t = 0: MDLM's eps draw was a free step that beat it at T = 1); LLaDA's split, named as such
    from mdmtheory.report.report import LLADA_SPLIT, _family_curves, _summary_html

    fam = _family_curves(prof, list(range(1, d + 1)))
    for T_ in range(1, d + 1):
        opt_ = min(profile_path_kl(phi, c) for c in compositions(d, T_))
        assert all(np.isnan(v[T_ - 1]) or v[T_ - 1] >= opt_ - 1e-12 for v in fam.values()), T_
    front = [(d // T) + (1 if i < d % T else 0) for i in range(T)]  # LLaDA's get_num_transfer_tokens
    assert rec["llada_sizes"] == front == [2, 2, 1]
    llada = profile_path_kl(phi, front)
    assert rec["gains"][LLADA_SPLIT]["path_kl"] == pytest.approx(llada, abs=1e-12)
    first = "".join(_summary_html(type("R", (), {"law": {"name": "words", "d": d, "K": law.K, "entropy": prof.entropy},
                                                 "recommended": rec})()))
    assert "LLaDA split (remainder first)" in first and "constant (remainder last)" in first and "t = 0" in first
    assert f"{100 * (llada - best_kl) / llada:.0f}%" in schedule_caption(rec, phi)
    cap = schedule_caption(rec, phi)
    assert "gains nothing" not in cap
    for c in _brute_step_costs(phi, best) + _brute_step_costs(phi, const):
        assert f"{c:.3g}" in cap
    starts = np.cumsum([0] + best[:-1])[1:]
    f = _falls(phi)
    for m in starts:
        assert f"φ_{m - 1} − φ_{m} = {f[m]:.3g}" in cap
    if "steepest" in cap:  # the claim is true: the optimum's step starts are the T - 1 steepest falls
        assert set(starts.tolist()) == set(sorted(f, key=f.get, reverse=True)[:T - 1])


def test_default_report_uses_the_default_budget(monkeypatch, tmp_path):
    from mdmtheory.cli import main
    from mdmtheory.cli import report as cli_report

    seen = {}

    class Stop(Exception):
        pass

    def fake(law, **kw):
        seen.update(kw)
        raise Stop

    monkeypatch.setattr("mdmtheory.report.report.build_report", fake)  # cli.report imports it in run
    with pytest.raises(Stop):
        main(["report", "--no-model", "--quiet", "--out", str(tmp_path / "r.html")])
    assert seen["recommend_steps"] == cli_report.DEFAULT_RECOMMEND_STEPS and seen["target_kl"] is None
    seen.clear()
    with pytest.raises(Stop):
        main(["report", "--no-model", "--quiet", "--target", "0.3", "--out", str(tmp_path / "r.html")])
    assert seen["recommend_steps"] is None and seen["target_kl"] == 0.3


def test_first_screen_states_the_gain_and_the_target(law, report):
    rec = report.recommended
    text = render_html(report)
    first = text[:text.index('<h2 id="law">')]
    assert "Target" in first and "path KL of at most" in first and f"T = {rec['steps']}" in first
    phi = _brute_profile(law)
    for name in ("constant", "cosine"):
        other = profile_path_kl(phi, rec["family_sizes"][name])
        assert rec["gains"][name]["path_kl"] == pytest.approx(other, abs=1e-9)
        saved = other - rec["path_kl"]
        assert (f"{saved:.3g} nats" in first) if saved > 1e-12 else ("0 (the same)" in first)
    given = build_report(law, steps=[2], planners=("random",), recommend_steps=2)
    from mdmtheory.report.report import _summary_html

    first = "".join(_summary_html(given))
    assert "Step budget" in first and "T = 2 steps" in first
    assert "Geometric (W26's) is not shown: it needs 3 ≤ T ≤ d, here T = 2" in first  # issue 31 §5


def test_gain_caption_says_h_is_a_sum_over_positions(law, report):
    from mdmtheory.report.report import gain_caption

    t = law.table
    d = law.d
    H = _entropy(t.ravel())
    Hi = [_entropy(t.sum(axis=tuple(a for a in range(d) if a != i))) for i in range(d)]
    Hrest = [_entropy(t.sum(axis=i).ravel()) for i in range(d)]
    tc, dtc = sum(Hi) - H, H - sum(H - r for r in Hrest)
    assert report.gain["h"][-1] == pytest.approx(tc + dtc, abs=1e-9)  # h(1) = TC + DTC, brute force
    cap = gain_caption(report.gain, report.law)
    assert "sum over positions" in cap and "exceed log K" in cap and f"{tc + dtc:.3g}" in cap
    assert ("above log K" in cap) == (tc + dtc > np.log(law.K))
    big = gain_caption({"h": [0.0, 9.0]}, {"d": 5, "K": 2})
    assert "above log K" in big


def test_one_step_is_singular(law):
    from mdmtheory.cli.report import render

    r = build_report(law, steps=[1], planners=("random",), recommend_steps=1)
    text = render_html(r)
    assert "1 steps" not in text and "1 step" in text
    out = render({"path": "x.html", **r.to_dict()})
    assert "1 steps" not in out and "recommended: 1 step," in out


def test_anchor_null_is_the_brute_force_row_permutation_mean():
    from mdmtheory.bridge.attention import anchors
    from mdmtheory.report.report import anchor_null

    rng = np.random.default_rng(0)
    A = rng.dirichlet([0.5, 0.5, 0.5], size=(2, 1, 1, 3))  # (n=2, T=1, layers=1, L=3, L=3)
    perms = list(itertools.permutations(range(3)))
    exact = []
    for x in A[:, 0, 0]:
        vals = []
        for p in itertools.product(perms, repeat=3):  # each row permuted independently: 216 cases
            s = np.mean([x[i][list(p[i])] for i in range(3)], axis=0)
            vals.append(s[anchors(s, eps=3.0)].sum())
        exact.append(np.mean(vals))
    null = anchor_null(A, np.ones((2, 1), bool), eps=3.0, permutations=2000, seed=1)
    assert null["mean"][0] == pytest.approx(np.mean(exact), abs=0.01)
    assert null["mean"][0] > 1 / 3  # above 1/d: the arg max of random rows is not uniform
    # a sink (every row puts its mass on key 2) absorbs far more than its null
    row = np.full(10, 0.1 / 9)
    row[2] = 0.9
    sink = np.tile(row, (1, 1, 1, 10, 1))  # 10 queries, all on key 2
    nul = anchor_null(sink, np.ones((1, 1), bool), permutations=200)
    assert nul["q95"][0] < 0.5


def test_attention_wording_null_sink_and_shares(att_report, att_html):
    from mdmtheory.report.report import _bos_verdict

    a = att_report.attention
    assert len(a["anchor_null"]["mean"]) == a["layers"] and all(v >= 1 / 5 - 1e-12 for v in a["anchor_null"]["mean"])
    text = att_html
    assert "row-permutation null" in text and "at least 1/d" in text
    # shares print as percentages, not as counts (the arg max was used at every step: 100%)
    assert re.search(r"share of steps where no position passed \(arg max used\)</td>(<td[^>]*>100\.0%</td>){2}", text)
    b = a["baseline"]
    below = [v < b["uniform_causal_bos"] for v in b["bos_mean"]]
    assert ("no attention sink" in text) == any(below)
    v = _bos_verdict({"uniform_causal_bos": 0.4, "bos_mean": [0.3, 0.8]})
    assert "layer 0 BOS absorbs less than uniform" in v and "no attention sink" in v and "2×" in v


# -- issue 20 §5: accuracy against parallelism ------------------------------------------------
def test_parallelism_frontier_is_the_lower_envelope_of_its_points():
    import mdmtheory as mt
    from mdmtheory.report import build_report
    from mdmtheory.samplers import ThresholdPlanner, exact_run

    p = mt.families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 5)
    par = build_report(p, steps=[1, 2, 3, 5], planners=("random", "confidence")).planners["parallelism"]
    pts, front = par["points"], par["frontier"]
    # brute force: a point is on the frontier iff no other point beats it on both (report._parallelism's
    # definition): >= tokens per forward and < KL, or more tokens per forward and no more KL (under the
    # default ties='random' the threshold rule at tau = 0.9 is exact with more than one token per forward)
    def dominated(q):  # (laws equal in theory differ by rounding: compare to 1e-12)
        return any((o["tokens_per_forward"] >= q["tokens_per_forward"] - 1e-12 and o["kl"] < q["kl"] - 1e-12)
                   or (o["tokens_per_forward"] > q["tokens_per_forward"] + 1e-12 and o["kl"] <= q["kl"] + 1e-12)
                   for o in pts)
    undominated = sorted({(round(q["tokens_per_forward"], 9), round(q["kl"], 9)) for q in pts if not dominated(q)})
    assert sorted({(round(q["tokens_per_forward"], 9), round(q["kl"], 9)) for q in front}) == undominated
    run = exact_run(p, None, ThresholdPlanner(0.9))
    th = next(q for q in pts if q["setting"] == "tau = 0.9")
    assert th["tokens_per_forward"] == pytest.approx(5 / run.expected_steps)
    assert th["kl"] == pytest.approx(mt.kl(p, run.law))
    assert any(q["planner"] == "sample_then_select" for q in pts) and par["skipped"] is None
    # every point names the loop whose model calls it counts; sample-then-select without a
    # threshold: T forwards in LLaDA's generate and in diffusers' LLaDA2Pipeline (one per step)
    assert all(q.get("pipeline") for q in pts)
    for q in pts:
        if q["planner"] == "sample_then_select":
            T = int(q["setting"].split("= ")[1])
            assert "LLaDA2Pipeline" in q["pipeline"] and q["tokens_per_forward"] == pytest.approx(5 / T, abs=1e-12)


def test_parallelism_names_the_step_counts_it_skips(monkeypatch):
    # sample-then-select's exact law is computed at every T within its size limit and the
    # note names exactly the T beyond it (not "beyond the limit" while some T were computed)
    import mdmtheory as mt
    from mdmtheory.report.report import _parallelism
    from mdmtheory.samplers import select
    from mdmtheory.samplers.select import select_work

    p = mt.families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 5)
    Ts = [1, 2, 5]
    works = {T: select_work(2, 5, mt.Schedule.constant(5, T).sizes, None) for T in Ts}
    limit = min(works.values())
    within = [T for T in Ts if works[T] <= limit]
    beyond = [T for T in Ts if works[T] > limit]
    assert within and beyond
    monkeypatch.setattr(select, "MAX_SELECT_WORK", limit)
    par = _parallelism(p, Ts, [], [[] for _ in Ts], lambda it, **kw: it)
    got = [q["setting"] for q in par["points"] if q["planner"] == "sample_then_select"]
    assert got == [f"T = {T}" for T in within]
    assert f"sample-then-select at T = {', '.join(map(str, beyond))}:" in par["skipped"]
