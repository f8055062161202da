"""Issue 31 §9–11: numbers a user can interpret — candidates within noise said so, one rule for
a rising or worse-than-uniform profile, certificates set beside what the law needs.

References are written here: interval overlaps and the draws that would separate two
estimates from the CI half-widths, log K of a uniform guess, the exact KL of every schedule
of a small law for the fewest steps.
"""

import itertools
import json
import math

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.cli import main
from mdmtheory.design import design_blocks_from_data, certify, design, exact_minimum_steps, separation
from mdmtheory.design.profile import profile_warning
from mdmtheory.laws import families
from mdmtheory.laws.oracles import as_oracle


# -- §9: a pick within noise is not a design -------------------------------------------------
@pytest.fixture(scope="module")
def noisy_blocks():
    """A model that ignores context (a product law): every plan's true path KL is 0, so the
    estimates differ by noise only."""
    p = families.markov_chain([[0.8, 0.2], [0.3, 0.7]], 8)
    x = as_oracle(p).sample(300, np.random.default_rng(0))
    model = as_oracle(families.product([[0.6, 0.4]] * 8))
    return x, design_blocks_from_data(x, K=2, model=model, forwards=4, n_per_level=200)


def test_separation_by_its_definition(noisy_blocks):
    _, res = noisy_blocks
    best = res.best
    sep = separation(res.candidates, best, 200)
    est = [c for c in res.candidates if c.path_kl is not None and c.block_length != best.block_length]
    tied = [c for c in est if c.ci[0] <= best.ci[1] and best.ci[0] <= c.ci[1]]
    assert tied, "the fixture should give overlapping intervals"
    assert sep["tied"] == [c.block_length for c in tied]
    hb = (best.ci[1] - best.ci[0]) / 2
    f = max(((hb + (c.ci[1] - c.ci[0]) / 2) / abs(c.path_kl - best.path_kl)) ** 2 for c in tied)
    assert sep["factor"] == pytest.approx(f, rel=1e-12) and sep["n_per_level"] == math.ceil(f * 200)
    assert sep["negative"] == [c.block_length for c in res.candidates if c.path_kl is not None and c.path_kl < 0]
    # separated intervals: nothing to say
    from mdmtheory.optimal.blocks import BlockCandidate

    a = BlockCandidate(4, 2, ((2, 2),), 4, 0.1, ci=(0.09, 0.11))
    b = BlockCandidate(2, 1, ((2,), (2,)), 4, 0.5, ci=(0.45, 0.55))
    assert separation([a, b], a, 100) is None
    assert separation([a, b], BlockCandidate(4, 2, ((2, 2),), 4, 0.1), 100) is None  # exact: no intervals
    z1 = BlockCandidate(4, 4, ((1, 1, 1, 1),), 4, 0.0, ci=(0.0, 0.0))  # one token per step: exactly 0
    z2 = BlockCandidate(2, 2, ((1, 1), (1, 1)), 4, 0.0, ci=(0.0, 0.0))
    assert separation([z1, z2], z1, 100) is None  # equal and exact: not noise


def test_design_cli_says_the_pick_is_within_noise(noisy_blocks):
    from mdmtheory.cli.design import _block_lines

    _, res = noisy_blocks
    r = {"response_length": 8, "forwards_asked": 4, "budget": None, "method": "estimated",
         "candidates": [c.to_dict() for c in res.candidates], "best": res.best.to_dict(),
         "separation": separation(res.candidates, res.best, 200), "export": {"format": "json"}}
    text = "\n".join(_block_lines(r))
    assert "pick (within noise" in text and "not a design" in text and "cannot be told apart" in text
    assert f"--n-per-level {r['separation']['n_per_level']}" in text
    assert "noise, or a model whose profile rises" in text and "path KL is >= 0" in text


# -- §10: one rule for a profile no trained model has -----------------------------------------
def test_profile_warning_rises_and_worse_than_uniform():
    c = [1.889, 1.95, 1.988]  # the 1-step model on K = 3
    w = profile_warning(c, 3)
    assert "rises" in w and "m = 0 to m = 1" in w
    assert "worse than uniform" in w and f"log 3 = {math.log(3):.4g}" in w and "1.988" in w
    # a sound profile: nothing to say
    assert profile_warning([1.0, 0.8, 0.5], 3) is None
    # below log K but rising: only the rise; without K, the alphabets where it is worse
    w2 = profile_warning([0.5, 0.6], None)
    assert "rises" in w2 and f"K < e^0.6 = {math.exp(0.6):.4g}" in w2 and "is above log K" not in w2
    # within three standard errors: said so (K unknown), nothing to say (K known, below log K)
    assert "within three standard errors" in profile_warning([0.5, 0.51], None, stderr=[0.01, 0.01])
    assert profile_warning([0.5, 0.51], 2, stderr=[0.01, 0.01]) is None
    assert "beyond three standard errors" in profile_warning([0.5, 0.6], 2, stderr=[0.01, 0.01])
    # worse than uniform without a rise
    assert "worse than uniform" in profile_warning([0.75, 0.7], 2) and "rises" not in profile_warning([0.75, 0.7], 2)


def test_design_with_a_model_worse_than_uniform_warns_with_the_same_rule():
    """A model with the chain's transitions reversed: given neighbours it predicts the wrong
    value, so its cross-entropy rises above log 2 once tokens are revealed."""
    p = families.markov_chain([[0.9, 0.1], [0.1, 0.9]], 5)
    x = as_oracle(p).sample(400, np.random.default_rng(1))
    model = as_oracle(families.markov_chain([[0.1, 0.9], [0.9, 0.1]], 5))
    res = design(x, K=2, model=model, steps=2, n_per_level=300)
    c = res.profile.values
    assert c[-1] > math.log(2) and c[-1] > c[0]  # the reference facts the warning states
    assert res.warning == profile_warning(c, 2, stderr=res.stderr)
    assert "worse than uniform" in res.warning and "rises" in res.warning
    # a sound model: no warning
    good = design(x, K=2, model=as_oracle(p), steps=2, n_per_level=300)
    assert good.warning is None


def test_schedule_cli_warns_with_the_same_rule(capsys, tmp_path):
    c, se = [1.889, 1.95, 1.988], [0.05, 0.05, 0.05]
    f = tmp_path / "c.csv"
    f.write_text("m,c,stderr\n" + "\n".join(f"{m},{v},{s}" for m, (v, s) in enumerate(zip(c, se))))
    assert main(["schedule", "--profile", str(f), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["warning"] == profile_warning(c, None, stderr=se)
    assert main(["schedule", "--profile", str(f)]) == 0
    text = capsys.readouterr().out
    assert "WARNING: the profile rises" in text and "worse than uniform for every alphabet of K < e^1.988" in text
    # on a rising profile fewer steps cost less: the optimum at T forwards may use fewer
    for r in out["schedules"]:
        T = r["steps"]
        brute = min(sum((b[i + 1] - b[i]) * c[b[i]] for i in range(len(b) - 1)) - sum(c)
                    for t in range(1, T + 1) for cuts in itertools.combinations(range(1, 3), t - 1)
                    for b in [(0, *cuts, 3)])
        assert r["path_kl"] == pytest.approx(brute, abs=1e-12)
        assert all(v is None or v >= r["path_kl"] - 1e-12 for v in r["families"].values())


# -- §11: certificates beside what the law needs ---------------------------------------------
def test_exact_minimum_steps_on_repeated_bits():
    p = families.repeated(4)
    # one step: KL = TC = 3 log 2; [1, 3]: the first token fixes the rest, KL 0
    assert exact_minimum_steps(p, 0.05) == (2, (1, 3), 0.0)
    assert exact_minimum_steps(p, 3 * math.log(2) + 1e-9)[0] == 1
    cert = certify(p, 4000, 0.05)
    assert cert.steps > 4  # the certificate's budget, far above what the law needs
    t0, T = cert.interval
    assert cert.outside_draws(4) == pytest.approx((4 * t0, 4 * (1 - T)))
    assert cert.outside_draws(4) == pytest.approx((1.0, 1.0))  # canonical interval (1/d, 1 - 1/d)
    with pytest.raises(ValueError, match="^p:"):
        exact_minimum_steps(as_oracle(p), 0.05)


def test_exact_minimum_steps_is_the_least_over_every_schedule():
    p = families.markov_chain([[0.8, 0.2], [0.3, 0.7]], 5)
    eps = 0.05
    got = exact_minimum_steps(p, eps)
    least = min(T for T in range(1, 6) for c in itertools.product((0, 1), repeat=4)
                if sum(c) == T - 1 and mt.kl(p, mt.sampler_law(p, mt.Schedule(
                    [b - a for a, b in zip((0, *[i + 1 for i in range(4) if c[i]]), (*[i + 1 for i in range(4) if c[i]], 5))])))
                <= eps)
    assert got[0] == least and sum(got[1]) == 5 and got[2] <= eps


def test_design_certify_says_what_the_count_is(capsys, tmp_path):
    x = np.repeat(np.array([[0, 0, 0, 0], [1, 1, 1, 1]]), 50, axis=0)
    f = tmp_path / "rep.npy"
    np.save(f, x)
    assert main(["design", "--data", str(f), "--certify", "0.05", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["exact_minimum"] == {"steps": 2, "sizes": [1, 3], "kl": 0.0}
    t0, T = out["interval"]
    assert out["outside_draws"] == pytest.approx({"before_t0": 4 * t0, "after_T": 4 * (1 - T)})
    assert main(["design", "--data", str(f), "--certify", "0.05"]) == 0
    text = capsys.readouterr().out
    assert f"{out['steps']} is the certificate's budget" in text and "not the steps a sampler needs" in text
    assert "exact minimum on this empirical law: 2 step(s), sizes [1, 3]" in text
    assert "before t0" in text and "after T" in text
