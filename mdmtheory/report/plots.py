"""Figures of the report, drawn from its record of numbers (matplotlib, imported here only).

Each ``*_figure`` takes one section dict of :class:`mdmtheory.report.Report` and returns a
``matplotlib.figure.Figure`` drawn on the Agg canvas, without pyplot: no global backend is
switched and no window opens. :func:`png` renders a figure to PNG bytes.
"""

from __future__ import annotations

import io
import math

import numpy as np

from .._validate import _short

#: z for a two-sided 95% normal interval.
Z95 = 1.959963984540054

#: Values at or below this (nats) are rounding noise around an exact 0 and are not drawn on log axes.
ZERO = 1e-12

#: Anchor rings of :func:`plot_received` (marker area in pt², edge width in pt) and the revealed
#: dots of :func:`attention_heatmap_figure` (pt²): a dot's diameter sqrt(REVEALED_SIZE) fits inside
#: the ring's hole sqrt(ANCHOR_SIZE) − 2·ANCHOR_LW, so a revealed anchor shows both (issue 31 §8).
ANCHOR_SIZE = 110.0
ANCHOR_LW = 1.5
REVEALED_SIZE = 14.0

#: Largest number of cells of a received-attention heatmap (:func:`plot_received`).
MAX_PLOT_CELLS = 1 << 16

__all__ = [
    "profile_figure",
    "gain_figure",
    "bounds_figure",
    "bounds_lines",
    "coinciding",
    "frontier_figure",
    "planners_figure",
    "schedule_figure",
    "schedule_bars",
    "attention_heatmap_figure",
    "absorption_figure",
    "information_figure",
    "png",
    "plot_received",
    "plot_absorption",
]


def _figure(ncols: int = 1, width: float = 7.0, height: float = 3.8, nrows: int = 1):
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("plots need matplotlib: pip install 'mdmtheory[report]'") from None
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(nrows, ncols, i + 1) for i in range(nrows * ncols)]
    return fig, axes


def png(fig) -> bytes:
    """The figure as PNG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _positive(x) -> np.ndarray:
    """Values for a log axis: non-positive, infinite and missing ones become NaN (not drawn)."""
    a = np.array([math.nan if v is None else float(v) for v in x], dtype=np.float64)
    a[~np.isfinite(a) | (a <= ZERO)] = np.nan
    return a


#: Drawn values whose spread is below this, relative to their size, are one value (rounding):
#: the axis is fixed around it instead of autoscaled onto the noise.
FLAT_RTOL = 1e-9


def flat_value(values) -> float | None:
    """The common value of the finite positive ``values`` when they agree to :data:`FLAT_RTOL`
    relative (what a log axis would otherwise magnify), else None."""
    a = np.asarray(values, dtype=np.float64).ravel()
    a = a[np.isfinite(a) & (a > ZERO)]
    if a.size == 0 or a.max() - a.min() > FLAT_RTOL * a.max():
        return None
    return float(np.median(a))


def _log_axes(ax, steps=None) -> None:
    """Log-log axes with integer step counts written plainly on x."""
    from matplotlib.ticker import FuncFormatter, LogLocator

    ax.set_xscale("log")
    ys = [np.asarray(line.get_ydata(), dtype=np.float64) for line in ax.get_lines()]
    if not any(np.any(np.isfinite(y) & (y > 0)) for y in ys):  # e.g. a product law: every KL is 0
        ax.set_ylim(0.0, 1.0)
        ax.text(0.5, 0.5, "every value is 0 (nothing to draw on a log scale)", ha="center", va="center",
                transform=ax.transAxes)
        ax.grid(alpha=0.3, which="both")
        return
    ax.set_yscale("log")
    flat = flat_value(np.concatenate(ys))
    if flat is not None:  # autoscaling would blow rounding noise up to the whole axis
        ax.set_ylim(flat / 2.0, flat * 2.0)
        ax.text(0.5, 0.92, f"all equal: {flat:.6g} (differences below {FLAT_RTOL:g} relative are rounding)",
                ha="center", va="top", transform=ax.transAxes, fontsize=9)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda x, _: ""))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    # y: 1, 2, 5 per decade written plainly (0.2, 0.5, 1, 2, ...), so every decade is labelled
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda x, _: ""))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    if steps is not None and len(steps) <= 16:  # few step counts: label each one
        ax.set_xticks([float(t) for t in steps])
    ax.grid(alpha=0.3, which="both")


def profile_figure(profile: dict):
    fig, (ax,) = _figure()
    m = np.asarray(profile["m"])
    ax.plot(m, profile["phi"], "o-", color="k", label="information profile φ_m (exact)")
    ce = profile.get("cross_entropy")
    if ce is not None:
        lv = np.asarray(ce["levels"])
        v = np.asarray(ce["values"])
        err = np.asarray(ce["ci_high"]) - v
        ax.errorbar(lv, v, yerr=err, fmt="s--", color="tab:orange", capsize=3,
                    label="model cross-entropy c(m), 95% CI")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("m = number of revealed tokens")
    ax.set_ylabel("nats per token")
    ax.legend()
    ax.grid(alpha=0.3)
    return fig


def gain_figure(gain: dict):
    fig, (a1, a2) = _figure(2, width=9.0)
    a1.plot(gain["t"], gain["h"], color="tab:blue")
    a1.set_xlabel("reveal probability t")
    a1.set_ylabel("h(t) (nats)")
    a1.set_title("gain h(t)")
    a1.grid(alpha=0.3)
    if gain["lam"]:
        a2.plot(gain["lam"], gain["density"], color="tab:green")
        for x in gain["canonical"]:
            a2.axvline(x, ls="--", color="gray")
        a2.set_xlabel("log reveal odds λ = log(t / (1 − t))")
        a2.set_ylabel("q(λ)")
    else:
        a2.text(0.5, 0.5, "needs d ≥ 3", ha="center", va="center", transform=a2.transAxes)
    a2.set_title("UGC density")
    a2.grid(alpha=0.3)
    return fig


#: Statuses of published statements (:data:`mdmtheory.bounds.STATUSES` but "derived here").
PUBLISHED = ("paper", "paper, via summary", "our reading")

#: Relative agreement below which two drawn curves coincide at a step count (one hides the other).
COINCIDE_RTOL = 1e-9

_QUANTITY = {"kl": "KL", "path_kl": "path KL"}


def _same(a: float, b: float) -> bool:
    return math.isfinite(a) and math.isfinite(b) and abs(a - b) <= COINCIDE_RTOL * max(abs(a), abs(b), ZERO)


def bounds_lines(bounds: dict) -> dict:
    """What the bounds figure draws and how, from section 4's numbers (its caption says the same).

    Returns ``{"drawn": [...], "not_drawn": [(label, reason)], "coincide": [((name, ...), [T, ...])]}``:
    each drawn line has ``name``, ``reader`` (the reader's name), ``label`` (the reader's name, the side and quantity bounded,
    the status), ``values``, ``marker`` (^ upper, v lower), ``linestyle`` (-- published: paper,
    via summary or our reading; -. derived here) and ``published``. A bound is not drawn when
    it is the path KL itself (data processing) or has no finite positive value (a log axis);
    ``coincide`` lists the groups of curves (exact ones included) equal to one another to 1e-9
    relative, each with the step counts where they are (a later line covers the earlier ones).
    """
    T = list(bounds["steps"])
    drawn, not_drawn = [], []
    for name, s in bounds["series"].items():
        label = s.get("label", name)
        q = _QUANTITY.get(s["quantity"], s["quantity"])
        if name == "data_processing":
            not_drawn.append((label, "it is the exact path KL line itself"))
            continue
        y = _positive(s["values"])
        if np.all(np.isnan(y)):
            vals = [v for v in s["values"] if v is not None and not math.isnan(v)]
            why = ("infinite at every T here (vacuous)" if vals and all(math.isinf(v) for v in vals) else
                   "zero at every T here" if vals and all(abs(v) <= ZERO for v in vals) else
                   "infinite or zero at every T here")
            not_drawn.append((label, why))
            continue
        upper = s["kind"] == "upper"
        status = s.get("status") or "status not given"
        published = status in PUBLISHED
        drawn.append({"name": name, "reader": label, "values": [float("nan") if v is None else float(v) for v in s["values"]],
                      "label": f"{label} ({'≥' if upper else '≤'} {q}; {status})",
                      "marker": "^" if upper else "v", "linestyle": "--" if published else "-.",
                      "published": published, "kind": s["kind"]})
    curves = [("exact KL", [float(v) for v in bounds["kl"]]), ("exact path KL", [float(v) for v in bounds["path_kl"]])]
    curves += [(line["reader"], line["values"]) for line in drawn]
    return {"drawn": drawn, "not_drawn": not_drawn, "coincide": coinciding(curves, T)}


def coinciding(curves, steps) -> list[tuple[tuple, list]]:
    """Groups of curves ``[(name, values), ...]`` equal to one another (:data:`COINCIDE_RTOL`)
    at a drawn (finite, positive) point, each with the step counts where they are:
    ``[((name, ...), [T, ...]), ...]``; a later line covers the earlier ones there."""
    groups: dict[tuple, list] = {}
    for k, t in enumerate(steps):
        left = [i for i, (_, v) in enumerate(curves) if math.isfinite(float(v[k])) and float(v[k]) > ZERO]
        while left:
            i = left.pop(0)
            same = [j for j in left if _same(float(curves[i][1][k]), float(curves[j][1][k]))]
            if same:
                groups.setdefault(tuple(curves[j][0] for j in [i, *same]), []).append(t)
                left = [j for j in left if j not in same]
    return list(groups.items())


def bounds_figure(bounds: dict):
    fig, (ax,) = _figure(width=7.5, height=6.0)
    T = np.asarray(bounds["steps"], dtype=np.float64)
    ax.plot(T, _positive(bounds["kl"]), "o-", color="k", lw=2.2, ms=9, mfc="none", label="exact KL(p‖q)")
    ax.plot(T, _positive(bounds["path_kl"]), "s-", color="tab:blue", lw=2.2, ms=8, mfc="none", label="exact path KL")
    colors = iter(["tab:red", "tab:orange", "tab:purple", "tab:brown", "tab:pink", "tab:olive", "tab:cyan"])
    plan = bounds_lines(bounds)
    for k, line in enumerate(plan["drawn"]):  # later lines smaller and filled: a covered marker still shows
        ax.plot(T, _positive(line["values"]), marker=line["marker"], ls=line["linestyle"], color=next(colors, "gray"),
                ms=max(7.0 - 1.5 * k, 3.5), lw=1.4, label=line["label"])
    _log_axes(ax, T)
    ax.set_xlabel("steps T (constant schedule)")
    ax.set_ylabel("nats")
    # below the axes: the labels are long (name, side, status) and cover no line there
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=1, fontsize=8)
    return fig


def frontier_figure(frontier: dict):
    fig, (ax,) = _figure(height=4.4)
    T = np.asarray(frontier["steps"], dtype=np.float64)
    ax.plot(T, _positive(frontier["optimal"]), "o-", color="k", lw=2.4, label="optimal schedule (path KL)")
    ax.plot(T, _positive(frontier["optimal_exact_kl"]), "o:", color="k", label="optimal schedule (exact KL)")
    for j, (name, vals) in enumerate(frontier["families"].items()):  # later lines smaller: covered ones show
        ax.plot(T, _positive(vals), marker="sD^vP*"[j % 6], ls="-", lw=1.2, ms=max(7.0 - 1.0 * j, 3.0),
                label="constant (remainder last)" if name == "constant" else name)
    md = frontier.get("model_designed")
    if md is not None:
        ax.plot(T, _positive(md["path_kl"]), "x--", color="magenta", lw=1.6, ms=8, label="designed from model (path KL)")
    _log_axes(ax, T)
    zero = np.abs(np.asarray(frontier["optimal"], dtype=np.float64)) < ROUNDING
    if zero.any():  # exact 0 has no place on a log axis: a mark on the bottom edge, said in the legend
        ax.plot(T[zero], np.zeros(int(zero.sum())), "v", color="k", ms=9, clip_on=False,
                transform=ax.get_xaxis_transform(), label="optimal path KL = 0 (bottom edge)")
    ax.set_xlabel("steps T")
    ax.set_ylabel("nats")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)  # covers no line
    return fig


def planners_figure(planners: dict):
    fig, (ax,) = _figure()
    T = np.asarray(planners["steps"], dtype=np.float64)
    kl = np.asarray(planners["kl"], dtype=np.float64)
    marks = "osD^vP*X"
    for j, name in enumerate(planners["planners"]):  # later lines smaller: a covered one still shows
        ax.plot(T, _positive(kl[:, j]), marker=marks[j % len(marks)], ls="-", ms=max(8.0 - 1.5 * j, 3.0), label=name)
    _log_axes(ax, T)
    ax.set_xlabel("steps T (constant schedule)")
    ax.set_ylabel("exact KL(p‖q) (nats)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)  # covers no line
    return fig


def adaptive_figure(planners: dict, adaptive: list):
    """The planners' exact KL per T beside the optimal adaptive plan (both action sets)."""
    fig, (ax,) = _figure()
    T = np.asarray([a["T"] for a in adaptive], dtype=np.float64)
    kl = np.asarray(planners["kl"], dtype=np.float64)
    marks = "osD^vP*X"
    for j, name in enumerate(planners["planners"]):
        ax.plot(T, _positive(kl[:, j]), marker=marks[j % len(marks)], ls="-", lw=1.0, ms=max(7.0 - 1.0 * j, 3.0),
                label=name)
    ax.plot(T, _positive([a["optimum"] for a in adaptive]), "o-", color="k", lw=2.4, label="optimal adaptive plan")
    ax.plot(T, _positive([a["optimum_confidence"] for a in adaptive]), "o:", color="k",
            label="optimal adaptive, most confident")
    _log_axes(ax, T)
    ax.set_xlabel("steps T (forwards)")
    ax.set_ylabel("exact KL(p‖q) (nats)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    return fig

#: Values below this (nats) are rounding noise around an exact 0: shown as 0 in labels and
#: captions (the tables' rule, ``mdmtheory.report.report._num``).
ROUNDING = 5e-13

#: Font size of the per-step cost labels above the bars (points).
COST_LABEL_SIZE = 9


def cost_label(c: float) -> str:
    """The label above a bar: two significant digits, rounding noise (|c| < ROUNDING) as 0."""
    c = float(c)
    return "0" if abs(c) < ROUNDING else f"{c:.2g}"


def schedule_bars(recommended: dict) -> list[tuple[str, list[int], list[float] | None]]:
    """The bar groups of :func:`schedule_figure`: (legend label, sizes, step costs in nats):
    the recommended schedule, the constant one (remainder last) and, where it differs, the
    split LLaDA's pipelines use (remainder first)."""
    sizes = [int(k) for k in recommended["sizes"]]
    T, d = len(sizes), int(sum(sizes))
    const = recommended.get("constant_sizes") or list(np.diff([(t * d) // T for t in range(T + 1)]))
    groups = [("recommended", sizes, recommended.get("step_costs")),
              ("constant (remainder last)", [int(k) for k in const], recommended.get("constant_step_costs"))]
    llada = recommended.get("llada_sizes")
    if llada is not None and [int(k) for k in llada] != groups[1][1]:
        groups.append(("LLaDA split (remainder first)", [int(k) for k in llada], recommended.get("llada_step_costs")))
    return groups


def schedule_figure(recommended: dict):
    from matplotlib.ticker import MaxNLocator

    groups = schedule_bars(recommended)
    T = len(groups[0][1])
    fig, (ax,) = _figure(width=8.0, height=3.6)
    x = np.arange(1, T + 1)
    w = 0.8 / len(groups)
    colors = ["tab:blue", "lightgray", "tab:orange"]
    for g, (label, sizes, costs) in enumerate(groups):
        bars = ax.bar(x + (g - (len(groups) - 1) / 2) * w, sizes, width=w, label=label, color=colors[g])
        if costs is not None:  # each step's path KL above its bar
            ax.bar_label(bars, labels=[cost_label(c) for c in costs], fontsize=COST_LABEL_SIZE, padding=2)
    top = max(max(k) for _, k, _ in groups)
    ax.set_ylim(0, top * 1.3 + 0.5)
    ax.set_xlabel("step")
    ax.set_ylabel("tokens revealed")
    ax.set_title("numbers above the bars: path KL of each step (nats)", fontsize=10)
    ax.set_xticks(x)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)  # outside: it covers no label
    return fig


# -- attention (section 8; the drawing functions of mdmtheory.bridge.attention on our Axes) --
def attention_heatmap_figure(attention: dict):
    """Received attention, steps × positions, one column per layer: sample 0 (top, revealed
    positions dotted) and the mean over samples (bottom); anchors circled."""

    nl = attention["layers"]
    T = len(attention["sizes"])
    L = len(attention["received_sample"][0][0])
    fig, axes = _figure(nl, width=min(4.2 * nl, 10.0), height=2.2 + 0.55 * T * 2, nrows=2)
    rv = np.asarray(attention["revealed_sample"], dtype=bool)
    for ell in range(nl):
        top, bottom = axes[ell], axes[nl + ell]
        plot_received(np.asarray(attention["received_sample"][ell]), eps=attention["eps"], ax=top,
                      title=f"layer {ell}: one sample")
        tt, jj = np.nonzero(rv)
        # above the anchor rings and inside them (REVEALED_SIZE < the ring's hole), with a dark edge
        top.scatter(jj, tt, marker="o", s=REVEALED_SIZE, color="white", edgecolors="black", linewidths=0.5,
                    zorder=3, label="revealed")
        plot_received(np.asarray(attention["received_mean"][ell]), eps=attention["eps"], ax=bottom,
                      title=f"layer {ell}: mean of {attention['n']} samples")
        for ax in (top, bottom):
            ax.set_xlim(-0.5, L - 0.5)
    return fig


def absorption_figure(attention: dict):
    """Absorption per layer: the MDM's top anchor and its key 0 vs the causal baseline's BOS,
    with the uniform references."""

    fig, (ax,) = _figure(height=3.6)
    m = attention["mdm"]
    series = {f"MDM: anchor (ε = {attention['eps']:g})": (m["absorption_mean"], m["absorption_std"]),
              "MDM: position 0": (attention["mdm_position0"]["mean"], attention["mdm_position0"]["std"])}
    b = attention.get("baseline")
    if b is not None:
        series["causal baseline: BOS (key 0)"] = (b["bos_mean"], b["bos_std"])
    plot_absorption(series, ax=ax, title="share of attention absorbed, mean ± std over samples")
    ax.axhline(attention["uniform_absorption"], ls=":", color="gray", lw=1)
    ax.text(1.0, attention["uniform_absorption"], " uniform, 1/d", transform=ax.get_yaxis_transform(),
            va="center", ha="left", fontsize=7, color="gray")
    if b is not None:
        ax.axhline(b["uniform_causal_bos"], ls="--", color="gray", lw=1)
        ax.text(1.0, b["uniform_causal_bos"], " uniform causal BOS", transform=ax.get_yaxis_transform(),
                va="center", ha="left", fontsize=7, color="gray")
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3)
    return fig


def information_figure(attention: dict):
    """Per layer: Spearman ρ between A_ij and the exact information of the revealed j (95%
    CIs), and how often the most attended revealed position is a most informative one."""
    fig, (a1, a2) = _figure(2, width=9.0, height=3.4)
    info = attention["information"]
    kinds = list(info)
    nl = len(info[kinds[0]]["rho_mean"])
    x = np.arange(nl)
    w = 0.8 / len(kinds)
    for k, kind in enumerate(kinds):
        c = info[kind]
        off = (k - (len(kinds) - 1) / 2) * w
        a1.bar(x + off, c["rho_mean"], width=w, yerr=Z95 * np.asarray(c["rho_stderr"]), capsize=3,
               label=f"{kind} I(X_i; X_j | ·)")
        a2.bar(x + off, c["top_hit"], width=w, label=kind)
    if all(n == 0 for c in info.values() for n in c["n_cases"]):
        for ax in (a1, a2):
            ax.text(0.5, 0.5, "no case with a defined correlation", ha="center", va="center", transform=ax.transAxes)
    a1.axhline(0.0, color="k", lw=0.8)
    a1.set_ylim(-1, 1)
    a1.set_ylabel("Spearman ρ (95% CI)")
    a1.set_title("attention vs information")
    chance = info[kinds[0]]["top_hit_chance"]
    a2.axhline(chance, ls="--", color="gray", label=f"chance {chance:.2f}")
    a2.set_ylim(0, 1)
    a2.set_ylabel("share of cases")
    a2.set_title("top-attended = most informative")
    for ax in (a1, a2):
        ax.set_xticks(x, [f"layer {ell}" for ell in range(nl)])
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=7)
    return fig


def _check_plot_args(ax, title) -> None:
    if ax is not None:
        from matplotlib.axes import Axes

        if not isinstance(ax, Axes):
            raise ValueError(f"ax: expected a matplotlib Axes or None, got {type(ax).__name__}")
    if title is not None and not isinstance(title, str):
        raise ValueError(f"title: expected a string or None, got {_short(title)}")


def _new_axes(width: float, height: float):
    """A new Figure and its Axes on the Agg canvas, without pyplot (no global backend switched,
    no figure for the caller to close)."""
    fig, (ax,) = _figure(width=width, height=height)
    return fig, ax


def plot_received(s, *, eps: float | None = None, ax=None, title: str | None = None):
    """Heatmap of received attention, steps × positions, with the anchors marked.

    Parameters
    ----------
    s : (T, L) received attention of one sample and one layer (or averaged over layers),
        e.g. ``trace.received()[0, :, layer]``.
    eps : anchor threshold multiplier (:func:`mdmtheory.bridge.attention.anchors`; default
        ``None``: its ``DEFAULT_EPS``).
    ax : a matplotlib Axes, or None for a new figure (Agg canvas, constrained layout, not
        registered with pyplot); with an Axes the caller's figure is drawn on as it is.

    Returns
    -------
    The matplotlib Figure.
    """
    from ..bridge.attention import DEFAULT_EPS, as_float_array, anchors  # torch, imported on use

    eps = DEFAULT_EPS if eps is None else eps
    s = as_float_array(s, "s")
    if s.ndim != 2 or s.size == 0:
        raise ValueError(f"s: expected a non-empty (steps, positions) array, got shape {s.shape}")
    if s.size > MAX_PLOT_CELLS:
        raise ValueError(f"s: {s.size} cells; a heatmap shows at most {MAX_PLOT_CELLS} (MAX_PLOT_CELLS)")
    _check_plot_args(ax, title)
    if ax is None:  # 0.35 in per position, 0.3 in per step, at most 24 in
        fig, ax = _new_axes(min(2.0 + 0.35 * s.shape[1], 24.0), min(1.5 + 0.3 * s.shape[0], 24.0))
    else:
        fig = ax.figure
    im = ax.imshow(s, aspect="auto", cmap="viridis", origin="upper")
    a = anchors(s, eps=eps)
    tt, jj = np.nonzero(a)
    ax.scatter(jj, tt, marker="o", s=ANCHOR_SIZE, facecolors="none", edgecolors="red", linewidths=ANCHOR_LW,
               label="anchor", zorder=2)
    if s.shape[1] <= 32:
        ax.set_xticks(range(s.shape[1]))
    if s.shape[0] <= 32:
        ax.set_yticks(range(s.shape[0]), [str(t + 1) for t in range(s.shape[0])])
    ax.set_xlabel("position j")
    ax.set_ylabel("step t")
    ax.set_title(title or "received attention $s_j$")
    fig.colorbar(im, ax=ax)
    return fig


def plot_absorption(series: dict, *, ax=None, title: str | None = None):
    """Absorption per layer, mean ± std, one line per model (e.g. MDM anchors vs AR BOS).

    Parameters
    ----------
    series : name -> (mean (layers,), std (layers,)), e.g. from
        :func:`mdmtheory.bridge.attention.absorption_stats` or
        ``(summary.absorption_mean, summary.absorption_std)``.
    """
    from ..bridge.attention import as_float_array  # torch, imported on use

    if not isinstance(series, dict) or not series:
        raise ValueError("series: expected a non-empty dict name -> (mean, std)")
    _check_plot_args(ax, title)
    checked = {}
    for name, pair in series.items():
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"series: the value of {_short(name)} must be a pair (mean, std), got {_short(pair)}")
        mean = as_float_array(pair[0], "series mean").ravel()
        std = as_float_array(pair[1], "series std").ravel()
        if mean.size == 0 or mean.size != std.size or mean.size > 4096 or np.any(std < 0):
            raise ValueError(
                f"series: {_short(name)} needs mean and std of the same length 1..4096 (std >= 0), "
                f"got {mean.size} and {std.size}"
            )
        checked[name] = (mean, std)
    series = checked
    if ax is None:
        fig, ax = _new_axes(5.0, 3.2)
    else:
        fig = ax.figure
    for name, (mean, std) in series.items():
        mean, std = as_float_array(mean, f"series[{name!r}] mean"), as_float_array(std, f"series[{name!r}] std")
        layers = np.arange(mean.size)
        ax.errorbar(layers, mean, yerr=std, marker="o", capsize=3, label=str(name))
        ax.set_xticks(layers)
    ax.set_xlabel("layer")
    ax.set_ylabel("absorption")
    ax.set_ylim(0, 1)
    ax.set_title(title or "attention absorbed per layer")
    ax.legend()
    return fig

