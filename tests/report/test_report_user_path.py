"""Issue 39 item 5: the report's defects a new user met, each checked on the numbers drawn.

* §7: step costs that are rounding noise around an exact 0 (parity: 4.9e-15, 7.8e-16) show as
  0 above the bars and in the caption's sums, as the tables show them;
* §8 without a model names the option that exists (``--model``, not ``--checkpoint``);
* §5: the optimum's exact 0 (parity from T = 2) cannot sit on a log axis: it is drawn on the
  bottom edge with its own legend entry, and the caption says so;
* §4: a "–" (IMDM at T = d) has a legend saying which bound is missing where, and why;
* §5: the "optimal sizes" cells do not wrap mid-list;
* §8: "BOS is the most attended key" has its null: under uniform causal attention BOS is the
  most attended key in every sample (checked by exact arithmetic here).
"""

from __future__ import annotations

from fractions import Fraction

import pytest

import mdmtheory as mt
from mdmtheory.laws import families
from mdmtheory.report import plots
from mdmtheory.report.report import (
    _attention_html,
    _bos_verdict,
    _bounds_section,
    _family_curves,
    _KLCache,
    _none_progress,
    bounds_gap_note,
    frontier_caption,
    schedule_caption,
    uniform_causal_top_is_bos,
)
from reference import compositions, profile_path_kl

TINY = [4.9e-15, 7.8e-16]


def test_rounding_noise_shows_as_zero_above_the_bars():
    rec = {"sizes": [3, 1], "constant_sizes": [2, 2], "step_costs": TINY, "constant_step_costs": [0.69, 0.0]}
    fig = plots.schedule_figure(rec)
    labels = [t.get_text() for t in fig.axes[0].texts if t.get_text()]
    assert labels[:2] == ["0", "0"], labels
    assert "0.69" in labels and not any("e-" in t for t in labels), labels
    assert plots.cost_label(6e-13) == "6e-13"  # above the rounding threshold: shown as it is


def test_rounding_noise_shows_as_zero_in_the_schedule_caption():
    phi = list(mt.information_profile(families.parity(4)).values)
    rec = {"steps": 2, "sizes": [3, 1], "constant_sizes": [2, 2], "step_costs": TINY, "path_kl": sum(TINY),
           "constant_step_costs": [float(phi[0] - phi[1]), 0.0], "constant_path_kl": float(phi[0] - phi[1]),
           "differs_from_constant": True}
    cap = schedule_caption(rec, phi)
    assert "Optimal: 0 + 0 = 0 nats" in cap, cap
    assert "e-15" not in cap and "e-16" not in cap


def test_no_model_section_names_the_model_option():
    text = " ".join(_attention_html(None))
    assert "--model PATH" in text and "--checkpoint" not in text


def _parity_frontier(d=5):
    p = families.parity(d)
    prof = mt.information_profile(p)
    Ts = list(range(1, d + 1))
    opt = [min(profile_path_kl(prof.values, c) for c in compositions(d, T)) for T in Ts]  # brute force
    return {"steps": Ts, "optimal": opt, "optimal_exact_kl": opt, "families": _family_curves(prof, Ts),
            "model_designed": None}


def test_the_optimums_exact_zero_is_drawn_on_the_bottom_edge_and_said():
    f = _parity_frontier()
    zero_at = [T for T, v in zip(f["steps"], f["optimal"]) if abs(v) < 1e-12]
    assert zero_at == [2, 3, 4, 5]  # parity: one step of d - 1 free bits, then the forced one
    fig = plots.frontier_figure(f)
    ax = fig.axes[0]
    marks = [ln for ln in ax.get_lines() if ln.get_label() == "optimal path KL = 0 (bottom edge)"]
    assert len(marks) == 1 and list(marks[0].get_xdata()) == zero_at
    assert "optimal path KL = 0 (bottom edge)" in [t.get_text() for t in ax.get_legend().get_texts()]
    cap = frontier_caption(f)
    assert "exactly 0 from T = 2 on" in cap and "bottom edge" in cap


def test_a_frontier_without_zeros_draws_no_edge_mark():
    p = families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 4)
    prof = mt.information_profile(p)
    Ts = [1, 2, 3]
    opt = [min(profile_path_kl(prof.values, c) for c in compositions(4, T)) for T in Ts]
    f = {"steps": Ts, "optimal": opt, "optimal_exact_kl": opt, "families": _family_curves(prof, Ts),
         "model_designed": None}
    ax = plots.frontier_figure(f).axes[0]
    assert not [ln for ln in ax.get_lines() if "bottom edge" in ln.get_label()]
    assert "bottom edge" not in frontier_caption(f)


def test_a_dash_in_the_bounds_table_has_its_legend():
    p = families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 4)
    b = _bounds_section(p, [1, 2, 3, 4], _none_progress, _KLCache(p))
    imdm = [n for n in b["series"] if n.startswith("imdm")]
    assert imdm, list(b["series"])
    values = b["series"][imdm[0]]["values"]
    assert values[-1] != values[-1] and all(v == v for v in values[:-1])  # nan only at T = d = 4
    note = bounds_gap_note(b)
    assert note is not None and "at T = 4" in note and "at least 2 tokens" in note
    b_full = dict(b, series={n: s for n, s in b["series"].items() if n not in imdm})
    if all(v == v for s in b_full["series"].values() for v in s["values"]):
        assert bounds_gap_note(b_full) is None


@pytest.mark.parametrize("d", [2, 3, 5, 8, 13])
def test_bos_is_always_the_most_attended_key_under_uniform_causal_attention(d):
    # received attention of key j: (1/d) sum over queries i >= j of 1/(i + 1), exactly
    s = [sum(Fraction(1, i + 1) for i in range(j, d)) / d for j in range(d)]
    assert max(range(d), key=lambda j: s[j]) == 0 and s.count(max(s)) == 1
    assert uniform_causal_top_is_bos(d) == 1.0


def test_the_bos_verdict_gives_the_null_beside_the_rate():
    b = {"bos_mean": [0.2, 0.1], "uniform_causal_bos": 0.25, "top_is_bos": [0.715, 0.5],
         "uniform_causal_top_is_bos": 1.0}
    text = _bos_verdict(b)
    assert "71.5%" in text and "100.0%" in text and "no sign of a sink by itself" in text, text
