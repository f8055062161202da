"""Issue 31 §1–8: what the report and ``mdmtheory schedule`` show is true and readable.

Each claim of a table, caption or plot is checked against a reference written here from the
definition (path KL term by term, the optimum by enumerating compositions, the Bernoulli
grid's path KL by enumerating its multinomial counts, the bigram statistics by enumerating
outcomes). Plots are checked on the numbers and the labels, legend and annotations they are
drawn from, not on pixels.
"""

import itertools
import json
import math

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.cli import main
from mdmtheory.laws import families
from mdmtheory.report import plots
from mdmtheory.report.report import (
    LLADA_SPLIT,
    _bounds_caption,
    _bounds_section,
    _family_curves,
    frontier_caption,
    _KLCache,
    _none_progress,
    _transition_inf_html,
    bound_name,
    planners_caption,
    transition_parts,
)
from reference import compositions, profile_path_kl


# -- references ------------------------------------------------------------------------------
def _brute_optimum(phi, T):
    return min(profile_path_kl(phi, c) for c in compositions(len(phi), T))


def _multinomial_counts(d, parts):
    """Every count vector of d tokens over ``parts`` cells (zeros allowed)."""
    for cuts in itertools.combinations_with_replacement(range(d + 1), parts - 1):
        b = (0, *cuts, d)
        yield tuple(y - x for x, y in zip(b, b[1:]))


def _brute_grid_path_kl(phi, times):
    """Path KL of a Bernoulli grid t_0 < ... < t_N = 1: each token falls in [0, t_0) (drawn
    exactly before the grid: no cost) or in step j's interval, independently with probability
    its length; the path KL is the expectation of the schedule of nonempty steps."""
    d = len(phi)
    widths = [times[0]] + [b - a for a, b in zip(times, times[1:])]
    total = 0.0
    for counts in _multinomial_counts(d, len(widths)):
        pr = math.factorial(d)
        for c, w in zip(counts, widths):
            pr *= w**c / math.factorial(c)
        if pr == 0:
            continue
        s, cost = counts[0], 0.0
        for k in counts[1:]:
            cost += sum(phi[s] - phi[m] for m in range(s, s + k))
            s += k
        total += pr * cost
    return total


def _front_loaded(d, T):
    """LLaDA's get_num_transfer_tokens (ML-GSAI/LLaDA generate.py): floor, remainder first."""
    return [d // T + (1 if i < d % T else 0) for i in range(T)]


LAWS = {
    "markov": lambda: families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 6),
    "parity": lambda: families.parity(5),
    "dirichlet": lambda: families.dirichlet(2, 5, alpha=0.3, seed=1),
}


# -- §1: the optimum at T forwards is never beaten, every family at T forwards ---------------
@pytest.mark.parametrize("name", sorted(LAWS))
def test_frontier_families_at_equal_forwards_never_beat_the_optimum(name):
    p = LAWS[name]()
    prof = mt.information_profile(p)
    phi, d = prof.values, p.d
    Ts = list(range(1, d + 1))
    fam = _family_curves(prof, Ts)
    assert set(fam) == {"constant", LLADA_SPLIT, "cosine", "log-linear (MDLM grid)", "geometric"}
    for i, T in enumerate(Ts):
        best = _brute_optimum(phi, T)
        for fname, vals in fam.items():
            assert np.isnan(vals[i]) or vals[i] >= best - 1e-12, (fname, T, vals[i], best)
        # the log-linear column is the uniform grid from t = 0: T forwards, no free exact draw
        ref = _brute_grid_path_kl(phi, [0.0] + [j / T for j in range(1, T + 1)])
        assert fam["log-linear (MDLM grid)"][i] == pytest.approx(ref, abs=1e-10)
        assert fam[LLADA_SPLIT][i] == pytest.approx(profile_path_kl(phi, _front_loaded(d, T)), abs=1e-12)


def test_mdlm_eps_draw_is_the_free_step_the_table_no_longer_counts():
    """Why: with MDLM's eps = 1e-3 the grid's exact draws before t_0 beat the one-step optimum."""
    p = LAWS["markov"]()
    phi = mt.information_profile(p).values
    free = _brute_grid_path_kl(phi, [1e-3, 1.0])
    assert free < _brute_optimum(phi, 1) - 1e-6  # what the old table showed as "log-linear beats optimal"


def test_schedule_cli_optimum_is_never_beaten_in_its_table(capsys, tmp_path):
    phi = [2.9, 2.4, 2.35, 2.0, 1.7, 1.6]  # a non-increasing model profile (nats)
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"values": phi}))
    assert main(["schedule", "--profile", str(f), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for r in out["schedules"]:
        assert r["path_kl"] == pytest.approx(_brute_optimum(phi, r["steps"]), abs=1e-12)
        for name, v in r["families"].items():
            assert v is None or v >= r["path_kl"] - 1e-12, (r["steps"], name, v)
        assert r["families"]["LLaDA split"] == pytest.approx(profile_path_kl(phi, _front_loaded(6, r["steps"])))


def test_schedule_cli_header_names_every_column_in_full(capsys, tmp_path):
    """§7: the header was cut to 12 characters ("log-linear (")."""
    f = tmp_path / "c.json"
    f.write_text(json.dumps([0.9, 0.5, 0.45, 0.2]))
    assert main(["schedule", "--profile", str(f), "--steps", "3"]) == 0
    text = capsys.readouterr().out
    head = next(line for line in text.splitlines() if line.lstrip().startswith("T "))
    for name in ("optimal", "constant", "LLaDA split", "cosine", "log-linear (MDLM grid)", "geometric"):
        assert name in head
    assert "started at t = 0" in text and "remainder first" in text


def test_frontier_caption_names_the_families_that_reach_the_optimum():
    p = LAWS["markov"]()
    prof = mt.information_profile(p)
    Ts = list(range(1, p.d + 1))
    fam = _family_curves(prof, Ts)
    opt = [_brute_optimum(prof.values, T) for T in Ts]
    f = {"steps": Ts, "optimal": opt, "families": fam, "model_designed": None}
    cap = frontier_caption(f)
    for name, vals in fam.items():
        at = [T for T, v, o in zip(Ts, vals, opt) if T > 1 and o > 1e-12 and abs(v - o) <= 1e-9 * o]
        label = "constant (remainder last)" if name == "constant" else name
        said = f"{label} is optimal at T = {', '.join(map(str, at))}"
        assert (said in cap) == bool(at), (name, at)
    assert any(v for v in fam.values())  # the chain: cosine reaches the optimum at some T
    assert "cosine is optimal at T = " in cap


# -- §2: the bounds figure and its caption ----------------------------------------------------
@pytest.fixture(scope="module")
def bounds_markov():
    p = families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 5)
    return _bounds_section(p, [1, 2, 3, 4, 5], _none_progress, _KLCache(p))


def test_bounds_caption_separates_published_and_derived_and_lists_every_bound(bounds_markov):
    b = bounds_markov
    cap = _bounds_caption(b)
    pub, own = cap.split("Published: ")[1].split(".")[0], cap.split("Derived here: ")[1].split(".")[0]
    for name, s in b["series"].items():
        assert s["status"] == {"riemann": "derived here", "data_processing": "derived here",
                               "pb25_schedule_lower": "derived here", "lc25_theorem1": "paper, via summary",
                               "w26_theorem1_card": "paper"}.get(name, s["status"])
        finite = [v for v in s["values"] if math.isfinite(v) and v > 1e-12]
        reader = bound_name(name)
        if name == "data_processing" or not finite:
            assert reader in cap.split("Not drawn: ")[1], name  # listed as not drawn, with why
        elif s["status"] == "derived here":
            assert reader in own and reader not in pub, name
        else:
            assert reader in pub and reader not in own, name
    assert "pb25_schedule_lower" in b["series"] and "ParallelBench" in cap
    assert "dashed lines are published" not in cap.lower()


def test_bounds_legend_uses_reader_names_and_line_styles_follow_status(bounds_markov):
    fig = plots.bounds_figure(bounds_markov)
    ax = fig.axes[0]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]  # below the axes (long labels)
    assert not any("_" in t for t in labels), labels  # no identifiers
    assert any(t.startswith("LC25 Theorem 1 (≥ KL; paper, via summary)") for t in labels)
    by_label = {line.get_label(): line for line in ax.get_lines()}
    for name, s in bounds_markov["series"].items():
        lab = next((t for t in labels if t.startswith(bound_name(name) + " (")), None)
        if lab is None:
            continue
        line = by_label[lab]
        assert line.get_linestyle() == ("-." if s["status"] == "derived here" else "--"), name
        assert line.get_marker() == ("^" if s["kind"] == "upper" else "v"), name


def test_coinciding_curves_are_found_and_said(bounds_markov):
    b = bounds_markov
    plan = plots.bounds_lines(b)
    curves = {"exact KL": b["kl"], "exact path KL": b["path_kl"]}
    curves.update({bound_name(x["name"]): x["values"] for x in plan["drawn"]})
    expect = set()
    for (a, va), (c, vc) in itertools.combinations(curves.items(), 2):
        for T, x, y in zip(b["steps"], va, vc):
            if math.isfinite(x) and math.isfinite(y) and x > 1e-12 and abs(x - y) <= 1e-9 * max(abs(x), abs(y)):
                expect.add((a, c, T))
    got = {(a, c, T) for names, at in plan["coincide"] for a, c in itertools.combinations(names, 2) for T in at}
    assert got == expect
    # each (group, T) once: the caption says every coincidence in one sentence per group
    seen = [(frozenset(names), T) for names, at in plan["coincide"] for T in at]
    assert len(seen) == len(set(seen))
    cap = _bounds_caption(b)
    for names, at in plan["coincide"]:
        assert f"{names[-2]} and {names[-1]} coincide at T = {', '.join(map(str, at))}" in cap


def test_parity_coincidences_are_grouped_not_listed_pair_by_pair():
    p = families.parity(6)
    b = _bounds_section(p, [1, 2, 3, 4, 5, 6], _none_progress, _KLCache(p))
    plan = plots.bounds_lines(b)
    at4 = [set(names) for names, at in plan["coincide"] if 4 in at]
    assert len(at4) == 1 and {"exact KL", "exact path KL"} <= at4[0]  # one group per step count here
    assert _bounds_caption(b).count("coincide at") == len(plan["coincide"]) <= 3


# -- §3: no autoscaling onto rounding --------------------------------------------------------
def test_flat_values_fix_the_axis_and_say_all_equal():
    T = [1, 2, 3, 4, 5, 6, 7, 8]
    kl = [[math.log(2) * (1 + 1e-15 * ((i + j) % 3 - 1)) for j in range(3)] for i in range(7)] + [[0.0] * 3]
    fig = plots.planners_figure({"steps": T, "planners": ["random", "confidence", "margin"], "kl": kl})
    ax = fig.axes[0]
    lo, hi = ax.get_ylim()
    assert hi / lo >= 3.0  # not a 1e-15 window
    assert any(t.get_text().startswith("all equal: 0.693147") for t in ax.texts)
    # a real spread is autoscaled as before
    kl2 = [[0.7 / T_] * 3 for T_ in T]
    ax2 = plots.planners_figure({"steps": T, "planners": ["a", "b", "c"], "kl": kl2}).axes[0]
    assert not any("all equal" in t.get_text() for t in ax2.texts)
    assert plots.flat_value([1.0, 1.0 + 1e-12, 0.0, float("inf")]) == pytest.approx(1.0)
    assert plots.flat_value([1.0, 1.001]) is None


def test_parity_planners_caption_says_all_equal():
    p = families.parity(5)
    Ts = [1, 2, 3, 4, 5]
    cache = _KLCache(p)
    kl = np.array([[cache(mt.Schedule.constant(5, T), pl) for pl in ("random", "confidence")] for T in Ts])
    assert np.allclose(kl[:-1], math.log(2), rtol=0, atol=1e-12)  # parity: log 2 at every T < d
    assert "every drawn value is 0.693147 nats (all equal" in planners_caption({"kl": kl.tolist()})
    assert "all equal" not in planners_caption({"kl": [[0.5, 0.4], [0.2, 0.0]]})


def test_planners_that_coincide_are_said_and_stay_visible():
    kl = [[1.0, 2.0, 2.0], [0.5, 0.9, 0.9], [0.2, 0.4, 0.3], [0.0, 0.0, 0.0]]
    pl = {"steps": [1, 2, 3, 4], "planners": ["random", "confidence", "margin"], "kl": kl}
    cap = planners_caption(pl)
    assert "confidence and margin give the same KL at T = 2" in cap and "random and" not in cap  # T = 1: one law
    pl2 = {**pl, "kl": [[2.0, 2.0, 2.0], [0.5, 0.9, 0.9], [0.2, 0.3, 0.3], [0.0, 0.0, 0.0]]}
    assert "confidence and margin give the same KL at every drawn T" in planners_caption(pl2)
    sizes = [line.get_markersize() for line in plots.planners_figure(pl).axes[0].get_lines()]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == 3


# -- §4: the transition KL-rate's infinities explained, the finite part shown ----------------
def _brute_bigrams(table):
    d, K = table.ndim, table.shape[0]
    C = np.zeros((K, K))
    for x in itertools.product(range(K), repeat=d):
        for t in range(d - 1):
            C[x[t], x[t + 1]] += table[x]
    return C


def test_transition_parts_by_enumeration():
    p = families.markov_chain([[0.9, 0.1], [0.0, 1.0]], 4, initial=[0.5, 0.5])  # 1 -> 0 never happens
    q = mt.sampler_law(p, mt.Schedule.constant(4, 1))  # the product of marginals makes 1 -> 0
    Cp, Cq = _brute_bigrams(p.table), _brute_bigrams(q.table)
    share = sum(Cq[i, j] for i in range(2) for j in range(2) if Cp[i, j] == 0) / Cq.sum()
    rest = 0.0
    for i in range(2):
        ok = [j for j in range(2) if Cp[i, j] > 0]
        m = sum(Cq[i, j] for j in ok)
        for j in ok:
            if Cq[i, j] > 0:
                qt, pt = Cq[i, j] / m, Cp[i, j] / Cp[i].sum()
                rest += Cq[i].sum() / Cq.sum() * qt * math.log(qt / pt)
    got = transition_parts(p, q)
    assert share > 0 and got[0] == pytest.approx(share, abs=1e-12) and got[1] == pytest.approx(rest, abs=1e-12)
    from mdmtheory.samplers import transition_rate

    assert math.isinf(transition_rate(p, q))
    q2 = mt.sampler_law(p, mt.Schedule.constant(4, 4))  # exact: nothing impossible, the rate itself
    assert transition_parts(p, q2)[0] == 0.0
    assert transition_parts(p, q2)[1] == pytest.approx(transition_rate(p, q2), abs=1e-12)


def test_infinite_transition_rates_are_explained_with_their_finite_part():
    p = families.markov_chain([[0.9, 0.1], [0.0, 1.0]], 4, initial=[0.5, 0.5])
    cache, Ts = _KLCache(p), [1, 2, 4]
    scheds = [mt.Schedule.constant(4, T) for T in Ts]
    pl = {"steps": Ts, "planners": ["random"], "transition_kl_rate": [[cache.rate(s)] for s in scheds],
          "transition_impossible_share": [[cache.rate_parts(s)[0]] for s in scheds],
          "transition_kl_rate_rest": [[cache.rate_parts(s)[1]] for s in scheds]}
    assert math.isinf(pl["transition_kl_rate"][0][0]) and pl["transition_impossible_share"][0][0] > 0
    assert pl["transition_impossible_share"][-1][0] == 0.0  # T = d: exact, nothing impossible
    text = "".join(_transition_inf_html(pl))
    assert "pairs (bigrams) that the data never makes" in text and "KL-rate on the possible bigrams" in text
    assert "T = 1" in text and "T = 4" not in text.split("here at")[1].split(")")[0]
    assert _transition_inf_html({**pl, "transition_kl_rate": [[0.1], [0.1], [0.0]]}) == []


# -- §5: the schedule figure's labels are readable and not under the legend -------------------
def test_schedule_figure_cost_labels_are_readable_and_clear_of_the_legend():
    rec = {"sizes": [2, 1, 2], "constant_sizes": [1, 2, 2], "llada_sizes": [2, 2, 1],
           "step_costs": [0.5, 0.0, 0.42], "constant_step_costs": [0.0, 0.6, 0.596],
           "llada_step_costs": [0.5, 0.6, 0.2]}
    fig = plots.schedule_figure(rec)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    ax = fig.axes[0]
    leg = ax.get_legend()
    assert [t.get_text() for t in leg.get_texts()] == ["recommended", "constant (remainder last)",
                                                       "LLaDA split (remainder first)"]
    box = leg.get_window_extent(r)
    labels = [t for t in ax.texts if t.get_text()]
    assert len(labels) == 9
    for t in labels:
        assert t.get_fontsize() >= 9
        assert not box.overlaps(t.get_window_extent(r)), t.get_text()
    assert "nats" in ax.get_title()


# -- §8: revealed dots stay visible inside the anchor rings ----------------------------------
def test_revealed_dots_sit_above_and_inside_the_anchor_rings():
    pytest.importorskip("torch")
    T, L = 3, 5
    s = [[[1.0 if j == t else 0.1 for j in range(L)] for t in range(T)]]
    a = {"layers": 1, "sizes": [2, 2, 1], "received_sample": s, "received_mean": s, "n": 4, "eps": 1.0,
         "revealed_sample": [[j < t for j in range(L)] for t in range(T)]}
    ax = plots.attention_heatmap_figure(a).axes[0]
    rings = [c for c in ax.collections if c.get_label() == "anchor"]
    dots = [c for c in ax.collections if c.get_label() == "revealed"]
    assert rings and dots
    ring, dot = rings[0], dots[0]
    assert dot.get_zorder() > ring.get_zorder()
    hole = math.sqrt(ring.get_sizes()[0]) - 2 * ring.get_linewidths()[0]
    assert math.sqrt(dot.get_sizes()[0]) < hole
