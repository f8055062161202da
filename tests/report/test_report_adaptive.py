"""The report's comparison with the optimal adaptive plan (issue 37 §2): at each T of the
planners' table, the optimum over state-dependent plans (``adaptive_plan``) beside the best
planner, its points on the accuracy-vs-parallelism frontier, a plot and one sentence."""

import pathlib

import pytest

import mdmtheory as mt
from mdmtheory.report import build_report
from mdmtheory.report.report import adaptive_summary, PARALLELISM_ADAPTIVE_MAX, render_html


def _law():
    return mt.laws.families.markov_chain([[0.85, 0.15], [0.3, 0.7]], 4)


def test_the_optimum_is_below_every_deterministic_planner_and_joins_the_frontier():
    p = _law()
    rep = build_report(p, steps=[1, 2, 4], planners=("random", "left_to_right", "confidence"))
    par = rep.to_dict()["planners"]["parallelism"]
    rows = par["adaptive"]
    assert [a["T"] for a in rows] == [1, 2, 4]
    for a in rows:
        sched = mt.Schedule.constant(p.d, a["T"])
        for planner in ("left_to_right", mt.samplers.ConfidencePlanner(ties="lowest")):  # deterministic plans
            assert a["optimum"] <= mt.kl(p, mt.sampler_law(p, sched, planner)) + 1e-12
        assert a["optimum"] <= a["optimum_confidence"] + 1e-12
        assert a["loss"] == pytest.approx(a["best_kl"] - a["optimum"], abs=1e-15)
    one = rows[0]  # T = 1: every plan reveals all positions at once: KL = TC
    assert one["optimum"] == pytest.approx(mt.information.total_correlation(p), abs=1e-12)
    assert rows[-1]["optimum"] == pytest.approx(0.0, abs=1e-12)  # T = d: one token per step is exact
    assert any(q["planner"] == "adaptive optimum" for q in par["points"])
    text = render_html(rep)
    assert "The optimal adaptive plan (mdmtheory.optimal.adaptive_plan)" in text and "loses at most" in text


def test_the_summary_says_where_a_randomized_rule_beats_the_optimum():
    rows = [{"T": 2, "optimum": 0.05, "optimum_confidence": 0.06, "best_planner": "random", "best_kl": 0.04,
             "loss": -0.01},
            {"T": 3, "optimum": 0.02, "optimum_confidence": 0.02, "best_planner": "confidence", "best_kl": 0.03,
             "loss": 0.01}]
    s = adaptive_summary(rows)
    assert "loses at most 0.01 nats" in s and "at T = 2 a randomized rule" in s


def test_a_law_beyond_the_limit_is_skipped_with_a_note():
    d = 1
    while 4 ** d <= PARALLELISM_ADAPTIVE_MAX:
        d += 1
    p = mt.laws.families.markov_chain([[0.9, 0.1], [0.2, 0.8]], d)
    from mdmtheory.report.report import _adaptive_rows

    skipped, pts = [], []
    assert _adaptive_rows(p, [d], ["random"], [[0.0]], pts, skipped) is None
    assert "optimal adaptive plan" in skipped[0] and not pts


def test_the_confidence_optimum_is_for_lowest_index_ties_only():
    """docs/theory.md §16: the "confidence" optimum breaks ties by the lowest index; the
    confidence planner with ties="random" reaches other tied sets and beats it in path KL here."""
    p = mt.laws.families.markov_chain([[0.85, 0.15], [0.3, 0.7]], 6)
    opt = mt.optimal.adaptive_plan(p, steps=3, actions="confidence")
    sched = mt.Schedule.constant(6, 3)
    lowest = mt.exact_run(p, sched, mt.samplers.ConfidencePlanner(ties="lowest"), trajectory=True)
    drawn = mt.exact_run(p, sched, mt.samplers.ConfidencePlanner(ties="random"), trajectory=True)
    assert opt.path_kl <= lowest.path_kl + 1e-12  # in the class: not better than the optimum
    text = " ".join((pathlib.Path(mt.__file__).parents[1] / "docs" / "theory.md").read_text().split())
    assert f"path KL {drawn.path_kl:.4f} against this optimum's {opt.path_kl:.4f}" in text  # the numbers docs print
    assert drawn.path_kl < opt.path_kl - 1e-3  # outside the class (other tie resolutions)
