r"""The report: every number of the main job for one law (and optionally a model), and its HTML.

:func:`build_report` computes, for an exact law p (a :class:`~mdmtheory.Joint`):

1. **law** — where it came from, d, K, H(X), TC, DTC;
2. **profile** — the information profile :math:`\varphi_m` and, for a model, its
   cross-entropy profile :math:`c(m) = \varphi_m + \varepsilon(m)` with 95% confidence
   intervals (DESIGN §2: the MDM training loss at m revealed tokens);
3. **gain** — W26's gain polynomial h(t), the UGC density :math:`q(\lambda)` in log reveal
   odds and the complexities :math:`C_{ugc}`, :math:`P_{ugc}` (:mod:`mdmtheory.information.ugc`);
4. **bounds** — for a range of step counts T (constant schedules, random planner), the exact
   KL, the path KL and every applicable published bound (:func:`mdmtheory.compare`);
5. **frontier** — the optimal path KL for every T (:func:`mdmtheory.pareto_frontier`)
   against the constant, cosine, log-linear (MDLM Bernoulli grid) and geometric schedules;
6. **planners** — exact KL of practical planners at equal step counts;
7. **recommended** — the fewest steps whose optimal path KL is at most ``target`` (nats),
   the schedule, its exact KL and its exports (:mod:`mdmtheory.exports`: LLaDA, Dream,
   MDLM, dllm, ours);
8. **attention** (when a torch model is given) — :mod:`mdmtheory.bridge.attention` while the
   model samples with the recommended schedule: received attention per step and layer with
   its anchors, absorption per layer against a causal baseline's BOS sink, and the Spearman
   correlation per layer between attention and the exact information
   :math:`I(X_i; X_j \mid X_{A\setminus j})` of the revealed positions (arXiv 2601.07894 for
   the anchors; the information comparison is ours).

The HTML opens with a summary (the first screen): the step budget or target in words, and
the optimal schedule's path KL against constant, cosine, log-linear and geometric at that
budget (section 7's ``gains``). Anchor absorption is compared with its row-permutation null
(:func:`anchor_null`: an arg max is at least 1/d by construction), the causal baseline's BOS
with uniform causal attention (below it: no sink).

:func:`write_html` turns the record into one self-contained HTML file (PNG plots embedded as
base64, inline CSS, no scripts, no network). The record's :meth:`Report.to_dict` is the
``--json`` twin of that file: the same numbers.
"""

from __future__ import annotations

import base64
import html
import math
import types
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .._estimate import Record
from .._moved import options_from
from .. import bounds as _bounds
from ..exports import formats as _export
from ..exports.formats import llada_default_counts
from ..information import ugc as _ugc
from .._moved import renamed_keywords
from .._validate import int_arg, real_arg
from ..information.divergence import kl, path_kl
from ..samplers.base import as_sampler
from ..information.entropies import dual_total_correlation, entropy, total_correlation
from ..laws.joint import Joint
from ..optimal.adaptive import adaptive_plan
from ..optimal.card import pareto_frontier
from .plots import ROUNDING, Z95  # one constant for the CIs of the record and of the figures
from ..information.profile import Profile, information_profile
from ..samplers import exact_run
from ..samplers.infogain import InfoGainSampler
from ..samplers.revise import ReMDMSampler
from ..samplers.serving import SERVING_RULES
from ..schedules.plans import Schedule
from ..schedules.families import cosine_schedule, geometric_schedule, loglinear_grid
from ..samplers.metrics import pooled_bigrams, transition_rate
from ..samplers import tie_spread, SampleThenSelectPlanner, ThresholdPlanner, select_run
from ..laws.families import product
from ..samplers import select as _select
from ..samplers.select import SELECT_PIPELINE, select_work
from ..laws.oracles import as_oracle
from . import plots
from .plots import bounds_lines
from .._validate import path_arg

__all__ = ["Report", "AttentionOptions", "build_report", "write_html", "render_html", "step_counts", "step_costs", "DEFAULT_PLANNERS",
           "SECTIONS", "EXPORT_CONVENTIONS"]

#: Planners compared in section 6 (registered names of :mod:`mdmtheory.samplers`).
DEFAULT_PLANNERS = ("random", "left_to_right", "confidence", "margin", "entropy")

#: Section keys of the record and their HTML titles, in order.
SECTIONS = {
    "law": "1. The law and where it comes from",
    "profile": "2. Information profile",
    "gain": "3. Gain h(t) and UGC density",
    "bounds": "4. Exact KL, path KL and published bounds",
    "frontier": "5. Pareto frontier: steps vs KL",
    "planners": "6. Planners compared at equal steps",
    "recommended": "7. Recommended schedule and exports",
    "attention": "8. Attention: floating anchors and where the information is",
}

#: Defaults of the attention section: free-running samples, teacher-forced samples for the
#: information correlation, anchor threshold ε (arXiv 2601.07894).
ATTENTION_SAMPLES = 200
ATTENTION_INFO_SAMPLES = 48
ATTENTION_EPS = 3.0


@dataclass(frozen=True)
class AttentionOptions(Record):
    """Section 8 of the report: ``attention=`` of :func:`build_report`.

    Attributes
    ----------
    model : torch MDM returning attention maps (the tiny MDM, a Hugging Face model loaded
        with eager attention, a bridge ``MaskedModel``) whose outcomes are the law's (needs
        the ``bridge`` extra); None: no section 8.
    baseline : optional causal model trained on the same data (the tiny AR model, BOS as
        key 0): its BOS absorption per layer beside the MDM's anchors.
    steps : trace with the constant schedule of this many steps instead of the recommended
        schedule.
    samples, info_samples, seed : free-running samples, teacher-forced samples (data x ~
        law) for the information correlation, and the seed.
    eps : anchor threshold ε of :func:`mdmtheory.bridge.attention.anchors`.
    """

    model: Any = None
    baseline: Any = None
    steps: int | None = None
    samples: int = ATTENTION_SAMPLES
    info_samples: int = ATTENTION_INFO_SAMPLES
    seed: int = 0
    eps: float = ATTENTION_EPS

    def __post_init__(self):  # types here; ranges and models by build_report (as attention_*)
        if self.steps is not None:
            int_arg(self.steps, "steps", -(2**63))
        int_arg(self.samples, "samples", -(2**63), 1 << 20)
        int_arg(self.info_samples, "info_samples", -(2**63), 1 << 20)
        int_arg(self.seed, "seed", -(2**63))
        real_arg(self.eps, "eps")


@dataclass(frozen=True)
class Report(Record):
    """Every number of the report, one JSON-able dict per section (see :data:`SECTIONS`)."""

    law: dict
    profile: dict
    gain: dict
    bounds: dict
    frontier: dict
    planners: dict
    recommended: dict
    attention: dict | None = None

    def to_dict(self) -> dict:
        """The ``--json`` twin of the HTML file (floats; ``inf`` as in the record)."""
        return asdict(self)


def step_counts(d: int, n: int = 12) -> list[int]:
    """Step counts 1..d, all of them for d <= n, else about n log-spaced ones (1 and d kept).

    >>> step_counts(5)
    [1, 2, 3, 4, 5]
    >>> step_counts(1000, 6)
    [1, 4, 16, 63, 251, 1000]
    """
    d = int_arg(d, "d", 1)
    n = int_arg(n, "n", 2)
    if d <= n:
        return list(range(1, d + 1))
    return sorted({int(round(x)) for x in np.geomspace(1, d, n)})


def _none_progress(iterable, **_):
    return iterable


def _law_section(p: Joint, name: str, source: str) -> dict:
    return {
        "name": name,
        "source": source,
        "d": p.d,
        "K": p.K,
        "outcomes": int(p.K**p.d),
        "support": int(np.count_nonzero(p.table)),
        "entropy": entropy(p),
        "tc": total_correlation(p),
        "dtc": dual_total_correlation(p),
    }


def _cross_entropy_section(phi: np.ndarray, estimate) -> dict | None:
    if estimate is None:
        return None
    try:
        levels = np.asarray(estimate.levels, dtype=np.int64)
        values = np.asarray(estimate.values, dtype=np.float64)
        stderr = np.asarray(estimate.stderr, dtype=np.float64)
    except (AttributeError, TypeError, ValueError):
        raise ValueError(
            "cross_entropy: expected a record with .levels, .values and .stderr "
            "(e.g. mdmtheory.bridge.estimate_profile(...))"
        ) from None
    d = phi.shape[0]
    if not (levels.shape == values.shape == stderr.shape) or levels.ndim != 1 or levels.size == 0:
        raise ValueError("cross_entropy: levels, values and stderr must be 1-d vectors of one length")
    if levels.min() < 0 or levels.max() >= d:
        raise ValueError(f"cross_entropy: levels must lie in 0..d-1 = 0..{d - 1}")
    if not (np.all(np.isfinite(values)) and np.all(np.isfinite(stderr)) and np.all(stderr >= 0)):
        raise ValueError("cross_entropy: values and stderr must be finite, stderr >= 0")
    return {
        "levels": levels.tolist(),
        "values": values.tolist(),
        "stderr": stderr.tolist(),
        "ci_low": (values - Z95 * stderr).tolist(),
        "ci_high": (values + Z95 * stderr).tolist(),
        "learning_error": (values - phi[levels]).tolist(),
        "forwards": int(getattr(estimate, "forwards", 0) or 0),
    }


def _gain_section(prof: Profile, n: int = 201) -> dict:
    d = prof.d
    t = np.linspace(0.0, 1.0, n)
    out = {"t": t.tolist(), "h": np.asarray(_ugc.gain(prof, t)).tolist(), "ugc_total": _ugc.ugc(prof, 0.0, 1.0)}
    if d >= 3:
        ell = math.log(d - 1)
        lam = np.linspace(-ell - 2.0, ell + 2.0, n)
        out.update(
            lam=lam.tolist(),
            density=np.asarray(_ugc.ugc_density(prof, lam)).tolist(),
            canonical=[-ell, ell],
            C_ugc=_ugc.coarse_complexity(prof),
            P_ugc=_ugc.fine_complexity(prof) if prof.is_nonincreasing() else None,
        )
    else:
        out.update(lam=[], density=[], canonical=None, C_ugc=None, P_ugc=None)
    return out


class _KLCache:
    """Exact KL(p‖q) and Tang et al.'s transition KL-rate (mdmtheory.samplers.metrics) per
    (schedule sizes, planner name): each sampler law is computed once."""

    def __init__(self, p: Joint):
        self.p, self.values, self.rates, self.tie_mass, self.parts = p, {}, {}, {}, {}

    def add(self, sched: Schedule, planner, q: Joint) -> None:
        """Record a sampler law computed elsewhere (section 4's comparison)."""
        key = (tuple(sched.sizes), str(planner))
        self.values[key] = kl(self.p, q)
        self.rates[key] = transition_rate(self.p, q) if self.p.d > 1 else 0.0
        self.parts[key] = transition_parts(self.p, q) if self.p.d > 1 else (0.0, 0.0)

    def __call__(self, sched: Schedule, planner="random") -> float:
        key = (tuple(sched.sizes), str(planner))
        if key not in self.values and len(key[0]) == 1 and key[1] != "random":
            # one step of size d: every planner reveals every position at once, each value from
            # its marginal, so its law is the random planner's (tests/contract/test_cost.py checks
            # it against exact_run); its own exact run, K^d chain terms, was the demo's peak memory
            rkey = (key[0], "random")
            self(sched, "random")
            self.values[key], self.rates[key], self.tie_mass[key] = self.values[rkey], self.rates[rkey], 0.0
            self.parts[key] = self.parts[rkey]
        if key not in self.values:
            run = exact_run(self.p, sched, planner)
            self.add(sched, planner, run.law)
            self.tie_mass[key] = run.tie_mass
        return self.values[key]

    def rate(self, sched: Schedule, planner="random") -> float:
        self(sched, planner)
        return self.rates[(tuple(sched.sizes), str(planner))]

    def rate_parts(self, sched: Schedule, planner="random") -> tuple[float, float]:
        self(sched, planner)
        return self.parts[(tuple(sched.sizes), str(planner))]


def transition_parts(p: Joint, q: Joint) -> tuple[float, float]:
    r"""The two parts of Tang et al.'s transition KL-rate (:func:`mdmtheory.samplers.transition_rate`)
    when it is infinite: the share :math:`\pi = \sum_i w_i \sum_{j: P(j|i) = 0} Q(j \mid i)` of
    the output's bigrams that the data never makes (any π > 0 makes the rate ∞), and the rate
    on the rest, :math:`\sum_i w_i\, \mathrm{KL}(	ilde Q(\cdot \mid i) \,\|\, P(\cdot \mid i))`
    with :math:`	ilde Q(\cdot \mid i)` the output's transitions from i restricted to the pairs
    the data makes and renormalized (a row with no such pair adds nothing). Q, P, w as in
    :func:`~mdmtheory.samplers.transition_rate`. When π = 0 the second part is the rate itself."""
    Cq, Cp = pooled_bigrams(q.table), pooled_bigrams(p.table)
    tot = Cq.sum()
    if tot <= 0:
        return 0.0, 0.0
    rq = Cq.sum(axis=1)
    w = rq / tot
    P = np.divide(Cp, Cp.sum(axis=1, keepdims=True), out=np.zeros_like(Cp), where=Cp.sum(axis=1, keepdims=True) > 0)
    Q = np.divide(Cq, rq[:, None], out=np.zeros_like(Cq), where=rq[:, None] > 0)
    ok = P > 0
    share_i = np.where(ok, 0.0, Q).sum(axis=1)
    kept = np.where(ok, Q, 0.0)
    mass = kept.sum(axis=1, keepdims=True)
    Qt = np.divide(kept, mass, out=np.zeros_like(kept), where=mass > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(Qt > 0, Qt * (np.log(Qt) - np.log(np.where(ok, P, 1.0))), 0.0)
    return float(np.sum(w * share_i)), max(float(np.sum(w * terms.sum(axis=1))), 0.0)


#: The names a reader knows for the bounds of :func:`mdmtheory.compare` (legends, tables and
#: captions of section 4); any other bound is shown under its identifier.
BOUND_NAMES = {
    "data_processing": "data processing (KL ≤ path KL)",
    "riemann": "Riemann bound",
    "lc25_theorem1": "LC25 Theorem 1",
    "w26_theorem1_card": "W26 Theorem 1 (card)",
    "pb25_schedule_lower": "ParallelBench Theorem 1 (schedule lower bound)",
    "lc25_lower_our_reading": "LC25 lower bound (our reading)",
    "ugc_total": "W26 UGC total (Prop. 3)",
    "dhw_lower": "W26 DHW lower (Prop. 3)",
    "dhw_upper": "W26 DHW upper (Prop. 3)",
    "dhw_tc": "DHW via total correlation",
    "dhw26_dimension": "DHW26 dimension bound",
    "zyb26_verification_lower": "ZYB26 verification lower bound (our reading)",
    "imdm_pair_lower": "IMDM factorization-error lower bound (our reading)",
}


def bound_name(name: str) -> str:
    """The reader's name of a bound identifier (:data:`BOUND_NAMES`; else the identifier)."""
    return BOUND_NAMES.get(name, name)


def _bounds_section(p: Joint, Ts: list[int], progress, cache: _KLCache) -> dict:
    series: dict[str, dict] = {}
    law_rows: list[dict] = []
    exact_kl, exact_path = [], []
    for i, T in enumerate(progress(Ts, desc="bounds", unit="T")):
        cmp = _bounds.compare(p, Schedule.constant(p.d, T))
        cache.add(Schedule.constant(p.d, T), "random", cmp.law)
        exact_kl.append(cmp.kl)
        exact_path.append(cmp.path_kl)
        for r in cmp.rows:
            if r.kind == "exact":
                continue
            if r.quantity not in ("kl", "path_kl"):  # law-level rows: the same for every T
                if i == 0:
                    law_rows.append({"name": r.name, "kind": r.kind, "quantity": r.quantity, "value": r.value,
                                     "exact": r.exact, "holds": r.holds, "source": r.source, "status": r.status})
                continue
            s = series.setdefault(r.name, {"kind": r.kind, "quantity": r.quantity, "source": r.source,
                                           "status": r.status, "label": bound_name(r.name),
                                           "values": [math.nan] * len(Ts), "holds": [None] * len(Ts)})
            s["values"][i] = r.value
            s["holds"][i] = r.holds
    return {"steps": list(Ts), "kl": exact_kl, "path_kl": exact_path, "series": series, "law_rows": law_rows,
            "all_hold": all(h is not False for s in series.values() for h in s["holds"])
            and all(r["holds"] is not False for r in law_rows)}


#: The start of the log-linear grid of sections 5 and 7. MDLM's eps = 1e-3 draws the first 0.1%
#: of the tokens exactly before the grid (:func:`mdmtheory.schedules.loglinear_grid`): a step no
#: step count of the table counts, which let it beat the optimum at T = 1 (issue 31 §1). Started
#: at t = 0 every family makes exactly T forwards.
LOGLINEAR_EPS = 0.0

#: The equal split the pipelines use: LLaDA's ``get_num_transfer_tokens`` (ML-GSAI/LLaDA
#: generate.py at 41760b91240e934e7612b08d45a0642d680c098a; diffusers' LLaDA2 scheduler the
#: same) floors n/T and gives the remainder to the first steps, e.g. [2, 2, 1] for 5 tokens in
#: 3 steps, where :meth:`Schedule.constant` gives it to the last ones ([1, 2, 2]).
LLADA_SPLIT = "LLaDA split (remainder first)"


def _families(d: int) -> dict[str, Callable[[int], Any]]:
    """The compared families, each at T forwards (None where a family is undefined)."""
    return {
        "constant": lambda T: Schedule.constant(d, T),
        LLADA_SPLIT: lambda T: Schedule(llada_default_counts(d, T)),
        "cosine": lambda T: cosine_schedule(d, T),
        "log-linear (MDLM grid)": lambda T: loglinear_grid(T, eps=LOGLINEAR_EPS),
        "geometric": lambda T: geometric_schedule(d, T) if 3 <= T <= d and d >= 3 else None,
    }


def _family_curves(prof: Profile, Ts: list[int]) -> dict[str, list[float]]:
    out = {}
    for name, make in _families(prof.d).items():
        vals = []
        for T in Ts:
            plan = make(T)
            vals.append(math.nan if plan is None else path_kl(prof, plan))
        out[name] = vals
    return out


def _frontier_section(prof: Profile, fr, Ts: list[int], mf, cache: _KLCache) -> dict:
    """Section 5 from the exact frontier ``fr`` and (with a model) the model's frontier ``mf``."""
    opt = [float(fr.path_kl[T - 1]) for T in Ts]
    out = {
        "steps": list(Ts),
        "optimal": opt,
        "optimal_schedules": [list(fr.schedule(T).sizes) for T in Ts],
        "optimal_exact_kl": [cache(fr.schedule(T)) for T in Ts],
        "families": _family_curves(prof, Ts),
        "model_designed": None,
    }
    if mf is not None:
        # the schedule a user can design (from the model's loss curve), judged by the exact profile
        out["model_designed"] = {
            "path_kl": [path_kl(prof, mf.schedule(T)) for T in Ts],
            "schedules": [list(mf.schedule(T).sizes) for T in Ts],
        }
    return out


#: Confidence thresholds of the accuracy-vs-parallelism frontier (Fast-dLLM's rule, section 6).
PARALLELISM_THRESHOLDS = (0.5, 0.7, 0.8, 0.9, 0.95)
#: Largest (K+1)^d for which the report runs the threshold rule exactly: each threshold is a
#: full run on the exact engine's sparse chain (the five-letter words, 27^5 = 1.4e7 lattice
#: entries: 1.7-4 s per threshold), so the engine's own limit.
PARALLELISM_MAX_STATES = 1 << 25
#: More points of the frontier: (name, setting, rule) for any rule that chooses its own step
#: sizes — a position planner run with ``plan=None`` (forwards = its steps), a serving rule of
#: :mod:`mdmtheory.samplers.serving` (forwards as its engine's loop counts them) or a sampler
#: with its own exact run (the sampler protocol's ``exact_run``: revising, speculative; forwards
#: from its record). ``build_report(frontier_rules=...)`` adds more without editing this list.
#: Run when (K+1)^d <= :data:`PARALLELISM_RULES_MAX_STATES`
#: (and within the rule's own size limit; a rule beyond it is named in the skipped note).
#: A rule given as a plain function of d is built for the law's d (ReMDM's N = d steps).
PARALLELISM_RULES: tuple = SERVING_RULES + (
    ("remdm_loop", "N = d, eta 0.02, t_on 0.55, t_off 0.05, alpha_on 0.9 (the authors' script)",
     lambda d: ReMDMSampler(d, "loop")),
    ("info_gain", "8 candidates, temperature 1, position temperature 0.2, threshold 0.8",
     InfoGainSampler(temperature=1.0)),
)
#: Largest (K+1)^d for which the report runs :data:`PARALLELISM_RULES` (d = 10 binary): each is
#: a full exact run, and the report's default demo (the five-letter words, 27^5) stays as it was.
PARALLELISM_RULES_MAX_STATES = 3**10
#: Largest (K+2)^d for which the report solves the optimal adaptive plan
#: (:func:`mdmtheory.optimal.adaptive_plan`, both action sets) at each T of the planners' table
#: (d = 8 binary: a fraction of a second per T; the five-letter words, 29^5, are beyond it).
PARALLELISM_ADAPTIVE_MAX = 4**8


def _planners_section(p: Joint, Ts: list[int], planners, progress, cache: _KLCache, rules=None) -> dict:
    names = [str(pl) for pl in planners]
    rows = []
    for T in progress(Ts, desc="planners", unit="T"):
        sched = Schedule.constant(p.d, T)
        rows.append([cache(sched, pl) for pl in planners])
    rates = [[cache.rate(Schedule.constant(p.d, T), pl) for pl in planners] for T in Ts]
    parts = [[cache.rate_parts(Schedule.constant(p.d, T), pl) for pl in planners] for T in Ts]
    return {"steps": list(Ts), "planners": names, "kl": rows, "transition_kl_rate": rates,
            "transition_impossible_share": [[a for a, _ in row] for row in parts],
            "transition_kl_rate_rest": [[b for _, b in row] for row in parts],
            "parallelism": _parallelism(p, Ts, names, rows, progress, rules), "ties": _ties_line(p, Ts, planners, cache)}


def _ties_line(p: Joint, Ts: list[int], planners, cache: _KLCache) -> dict:
    """Whether the scored planners' KLs depend on the tie rule (issue 26 §2): their tie mass
    from the runs above (free), and :func:`mdmtheory.samplers.tie_spread` (three runs) at one
    T only, for the planners that met a tie."""
    hit = {}
    for pl in planners:
        if not as_sampler(pl).capabilities.scored:
            continue  # no scores, no ties
        m = max(cache.tie_mass.get((tuple(Schedule.constant(p.d, T).sizes), str(pl)), 0.0) for T in Ts)
        if m > 0:
            hit[str(pl)] = (pl, m)
    mid = [T for T in Ts if 1 < T < p.d]  # T = 1 and T = d: one outcome for every rule
    if not hit or not mid:
        return {"depends": False, "T": None, "spread": {},
                "text": "No scored planner met tied scores: the KLs above do not depend on the tie rule."}
    T = mid[len(mid) // 2]
    spread = {name: tie_spread(p, Schedule.constant(p.d, T), pl).by_rule() for name, (pl, _) in hit.items()}
    depends = any(max(v.values()) - min(v.values()) > 1e-9 for v in spread.values())
    at = "; ".join(f"{name}: " + ", ".join(f"{r} {v:.4g}" for r, v in kls.items()) for name, kls in spread.items())
    verdict = (f"at T = {T} their KLs depend on the tie rule" if depends else
               f"at T = {T} their KLs are the same under every tie rule (other T not checked)")
    text = (f"Ties: {', '.join(hit)} met tied scores (the table uses ties='random': uniform over tied "
            f"positions); {verdict}. KL at T = {T} by rule: {at}.")
    return {"depends": bool(depends), "T": T, "spread": spread, "text": text}


def _frontier_rules(rules) -> tuple:
    """``frontier_rules`` of :func:`build_report`, checked: (name, setting, planner) triples whose
    planner runs with ``plan=None``."""
    if isinstance(rules, (str, bytes, dict)) or not hasattr(rules, "__iter__"):
        raise ValueError(f"frontier_rules: expected (name, setting, planner) triples, got {type(rules).__name__}")
    out = []
    for item in rules:
        if not (isinstance(item, tuple) and len(item) == 3 and isinstance(item[0], str) and isinstance(item[1], str)):
            raise ValueError(f"frontier_rules: expected (name, setting, planner) triples, got {item!r:.80}")
        try:
            as_sampler(item[2], plan=None)
        except ValueError as err:
            raise ValueError(f"frontier_rules: {item[0]!r}: {err}") from None
        out.append(item)
    return tuple(out)


def _rule_run(p: Joint, rule) -> tuple:
    """(law, expected forwards, the loop they are counted in) of a :data:`PARALLELISM_RULES` rule."""
    sampler = as_sampler(rule, plan=None)
    r = sampler.exact_run(p, None)
    own = "one forward per step" if sampler.capabilities.positions else "the sampler's own loop"
    return r.law, float(r.forwards), r.pipeline or own


def _parallelism(p: Joint, Ts, names, rows, progress, rules=None) -> dict:
    """Accuracy vs parallelism (issue 20 §5): every (planner, setting) as expected tokens per
    forward d / E[forwards] and its exact KL; the frontier keeps the points no other point
    beats on both (more tokens per forward and no more KL). E[forwards] is the expected
    number of model calls of the loop each point stands for (issue 26 §3.1; ``pipeline`` of
    each point): the planners of the table at each T, T forwards (one per step); Fast-dLLM's
    threshold rule at :data:`PARALLELISM_THRESHOLDS` in its ``generate`` (NVlabs/Fast-dLLM
    llada/generate.py: the block loop breaks right after the step that fills the block, so
    its forwards are its steps, random: the exact law of the step count gives their mean);
    sample-then-select at temperature 1 (LLaDA's low_confidence; ML-GSAI/LLaDA generate.py
    and diffusers' LLaDA2Pipeline without a threshold both make T forwards, which
    ``SelectRun.forwards`` counts) where its exact law is within its size limit; and
    the rules of :data:`PARALLELISM_RULES` (SGLang's dLLM rules by default, forwards as each
    file's loop counts them) for (K+1)^d <= :data:`PARALLELISM_RULES_MAX_STATES` (``rules``: another
    such list in its place)."""
    d = p.d
    pts = []
    for T, row in zip(Ts, rows):
        for name, v in zip(names, row):
            pts.append({"planner": name, "setting": f"T = {T}", "tokens_per_forward": d / T, "kl": float(v),
                        "pipeline": "one forward per step"})
    skipped = []
    if (p.K + 1) ** d <= PARALLELISM_MAX_STATES:
        for tau in progress(PARALLELISM_THRESHOLDS, desc="thresholds", unit="tau"):
            run = exact_run(p, None, ThresholdPlanner(tau))
            pts.append({"planner": "threshold", "setting": f"tau = {tau}", "tokens_per_forward": d / run.expected_steps,
                        "kl": kl(p, run.law), "pipeline": "Fast-dLLM generate (ends with the step that fills it)"})
    else:
        skipped.append(f"the threshold rule: (K+1)^d = {(p.K + 1) ** d:,} states, above the report's "
                       f"{PARALLELISM_MAX_STATES:,} (each threshold is a full exact run; "
                       "mdmtheory.samplers.exact_run(p, None, ThresholdPlanner(tau)) computes it)")
    beyond = []
    for T in Ts:
        sched = Schedule.constant(d, T)
        if select_work(p.K, d, sched.sizes, None) > _select.MAX_SELECT_WORK:  # read at call time
            beyond.append(T)
            continue
        if len(sched.sizes) == 1:
            # one step of size d: a candidate drawn at every position from its marginal and all
            # committed, one forward — the product of the marginals (tests/contract/test_cost.py
            # checks it against select_run, whose K^d terms were the demo's peak memory)
            q = product([p.marginal([j]) for j in range(d)])
            pts.append({"planner": "sample_then_select", "setting": f"T = {T}", "tokens_per_forward": float(d),
                        "kl": kl(p, q), "pipeline": SELECT_PIPELINE})
            continue
        r = select_run(p, sched, SampleThenSelectPlanner())
        pts.append({"planner": "sample_then_select", "setting": f"T = {T}", "tokens_per_forward": d / r.forwards,
                    "kl": kl(p, r.law), "pipeline": r.pipeline})
    if beyond:
        skipped.append(f"sample-then-select at T = {', '.join(map(str, beyond))}: its exact law is beyond the size "
                       f"limit at K = {p.K}, d = {d} (mdmtheory.samplers.simulate estimates it)")
    if (p.K + 1) ** d <= PARALLELISM_RULES_MAX_STATES:
        for name, setting, rule in (PARALLELISM_RULES if rules is None else rules):
            try:
                if isinstance(rule, types.FunctionType):
                    rule = rule(d)
                law, forwards, pipeline = _rule_run(p, rule)
            except ValueError as err:  # the rule's own size limit
                skipped.append(f"{name} ({setting}): {err}")
                continue
            pts.append({"planner": name, "setting": setting, "tokens_per_forward": d / forwards, "kl": kl(p, law),
                        "lost": float(law.lost), "pipeline": pipeline})
    adaptive = _adaptive_rows(p, Ts, names, rows, pts, skipped)
    order = sorted(pts, key=lambda q: (-q["tokens_per_forward"], q["kl"]))
    front, best = [], float("inf")
    for q in order:  # from the most parallel down: keep a point when it lowers the best KL so far
        if q["kl"] < best - 1e-15:
            front.append(q)
            best = q["kl"]
    return {"points": pts, "frontier": front[::-1], "skipped": "; ".join(skipped) or None, "adaptive": adaptive}


def adaptive_summary(adaptive: list) -> str:
    """One sentence: how far the table's best planner is from the optimal adaptive plan at equal
    forwards (the largest loss over T, and where a randomized rule beats it in KL)."""
    worst = max(adaptive, key=lambda a: a["loss"])
    below = [a["T"] for a in adaptive if a["loss"] < -1e-12]
    text = (f"At equal forwards (T steps), the best planner of the table loses at most {worst['loss']:.4g} nats "
            f"against the optimal adaptive plan ({worst['best_planner']} at T = {worst['T']}: KL "
            f"{worst['best_kl']:.4g} against {worst['optimum']:.4g})")
    if below:
        text += (f"; at T = {', '.join(map(str, below))} a randomized rule of the table has a lower KL than the "
                 "optimum, which is optimal in path KL among the plans that see only revealed values (its KL "
                 "equals its path KL; a random order's KL sits below its own path KL)")
    return text + "."


def _adaptive_html(planners: dict, adaptive) -> list[str]:
    if not adaptive:
        return []
    out = ["<p>The optimal adaptive plan (mdmtheory.optimal.adaptive_plan): at each T, the reveal set is chosen "
           "from the revealed values to minimize the path KL exactly (a Bellman recursion over the states; "
           "docs/theory.md §16); “confidence” restricts it to the n most confident positions, n chosen per "
           "state, equal confidences by the lowest index: the best a confidence-threshold rule with that tie "
           "rule can do (other tie rules reach other sets). Exact zeros sit off the log axis. " + html.escape(adaptive_summary(adaptive))
           + "</p>"]
    out.append(_figure(plots.png(plots.adaptive_figure(planners, adaptive)),
                       "Exact KL of each planner of the table and of the optimal adaptive plan against the number of "
                       "steps T (one forward each).", "planners against the optimal adaptive plan"))
    out.append(_table(["T", "optimum (any set)", "optimum (most confident)", "best planner", "its KL", "loss (nats)"],
                      [[a["T"], a["optimum"], a["optimum_confidence"], a["best_planner"], a["best_kl"], a["loss"]]
                       for a in adaptive], left=0))
    return out


def _adaptive_rows(p: Joint, Ts, names, rows, pts, skipped) -> list | None:
    """The optimal adaptive plan at each T of the planners' table (issue 37 §2): its exact KL
    with every state-dependent reveal set allowed (``"any"``) and with the n most confident
    positions only (``"confidence"``: the best a confidence-threshold rule can do), beside the
    best planner of the table at the same T forwards; its points join the frontier. None (and
    a skipped note) above :data:`PARALLELISM_ADAPTIVE_MAX`."""
    d = p.d
    if not names or not len(Ts):
        return None  # no planner of the table to set beside it
    if (p.K + 2) ** d > PARALLELISM_ADAPTIVE_MAX:
        skipped.append(f"the optimal adaptive plan: (K+2)^d = {(p.K + 2) ** d:,} above the report's "
                       f"{PARALLELISM_ADAPTIVE_MAX:,} (mdmtheory.optimal.adaptive_plan(p, steps=T) computes it)")
        return None
    out = []
    for T, row in zip(Ts, rows):
        best = adaptive_plan(p, steps=T)
        conf = adaptive_plan(p, steps=T, actions="confidence")
        j = int(np.argmin(row))
        out.append({"T": int(T), "optimum": float(best.kl), "optimum_confidence": float(conf.kl),
                    "best_planner": names[j], "best_kl": float(row[j]), "loss": float(row[j]) - float(best.kl)})
        pts.append({"planner": "adaptive optimum", "setting": f"T = {T}", "tokens_per_forward": d / T,
                    "kl": float(best.kl), "pipeline": "one forward per step"})
    return out


#: Each export of :mod:`mdmtheory.exports` and the sampler convention it follows (section 7).
EXPORT_CONVENTIONS = {
    "llada": "LLaDA / Fast-dLLM generate(): integer num_transfer_tokens per step and block (one block of gen_length = d "
             "by default), plugged in with mdmtheory.exports.llada.patch; LLaDA's own get_num_transfer_tokens "
             "floors and front-loads the remainder (llada_default). Fast-dLLM follows the counts only with "
             "threshold=None.",
    "dream": "Dream diffusion_generate(): the decreasing time grid t_j = 1 - C_j/d (masked fraction, "
             "linear alpha), ending at eps = 1e-3, instead of linspace(1, eps, steps + 1), run with steps = the "
             "plan's steps; alg='origin' reveals k_j tokens in expectation, the other algorithms take "
             "int(n_masked (1 - s/t)) (counts_from_grid, exact says whether float32 reproduces the counts).",
    "mdlm": "MDLM Diffusion._sample: per-step pairs (t_j, dt_j) in place of linspace(1, eps, T + 1) and its constant "
            "dt (mdmtheory.exports.mdlm.sample); a mask is revealed from t to t - dt with probability dt/t, "
            "so k_j tokens in expectation (no counts).",
    "dllm": "dllm schedulers: alpha_nodes alpha(t_j) = C_j/d (unmasked fraction) on dllm's step grid t_j = 1 - j/S, "
            "as mdmtheory.exports.dllm.PlanAlphaScheduler; dllm's "
            "round(n_rem (1 - (1 - alpha(s))/(1 - alpha(t)))) gives back exactly k_j.",
    "json": "mdmtheory's own form: sizes for mt.Schedule.from_json, reveal times C_j/d for mt.Grid.from_json.",
}


def _exports(sched: Schedule) -> dict:
    """The schedule in every convention of :mod:`mdmtheory.exports` (an unavailable one holds
    ``{"format": ..., "unavailable": reason}``, e.g. Dream's eps = 1e-3 needs d < 1000)."""
    out = {}
    for fmt in EXPORT_CONVENTIONS:
        try:
            out[fmt] = _export.export(sched, fmt)
        except ValueError as exc:
            out[fmt] = {"format": fmt, "unavailable": str(exc)}
    return out


def _plural(n: int, word: str) -> str:
    """``1 step``, ``3 steps``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def step_costs(prof: Profile, sched: Schedule) -> list[float]:
    r"""Path KL of each step: a step of k tokens taken with s revealed costs
    :math:`\sum_{m=s}^{s+k-1} (\varphi_s - \varphi_m)` nats, the fall of the profile inside the
    step (their sum is :func:`mdmtheory.path_kl`; W26, the profile identity)."""
    if not isinstance(prof, Profile) or not isinstance(sched, Schedule) or sched.d != prof.d:
        raise ValueError(f"prof, sched: expected a Profile and a Schedule of its d, got {type(prof).__name__} and "
                         f"{type(sched).__name__}")
    phi = prof.values
    return [float(np.sum(phi[s] - phi[s:s + k])) for s, k in zip(sched.starts, sched.sizes)]


def _at_budget(prof: Profile, T: int) -> tuple[dict, dict]:
    """Path KL of the usual schedule families with T steps (NaN where a family is undefined),
    and the sizes of those that are schedules (the log-linear grid is a Bernoulli grid)."""
    d = prof.d
    sizes = {"constant": list(Schedule.constant(d, T).sizes), LLADA_SPLIT: llada_default_counts(d, T),
             "cosine": list(cosine_schedule(d, T).sizes)}
    if 3 <= T <= d and d >= 3:
        sizes["geometric"] = list(geometric_schedule(d, T).sizes)
    return {name: vals[0] for name, vals in _family_curves(prof, [T]).items()}, sizes


def _recommended_section(prof: Profile, fr, target: float, steps: int | None, mf, cache: _KLCache) -> dict:
    """Section 7. The report always has the exact law, so it recommends the exact optimum;
    with a model, the schedule a user would design from the model alone is shown beside it,
    judged under the exact law (its regret)."""
    d = prof.d
    ok = np.flatnonzero(np.asarray(fr.path_kl) <= target)
    target_steps = int(ok[0]) + 1 if ok.size else d
    if steps is None:
        steps = target_steps
        rule = f"fewest steps with optimal path KL <= target = {target:g} nats"
    else:
        rule = f"steps = {steps} (given)"
    sched = fr.schedule(steps)
    const = Schedule.constant(d, steps)
    pk = path_kl(prof, sched)
    families, family_sizes = _at_budget(prof, steps)
    families = {name: v for name, v in families.items() if math.isfinite(v)}  # undefined at this T: not listed
    gains = {name: {"path_kl": v, "saved": v - pk, "relative": (v - pk) / v if v > 0 else 0.0}
             for name, v in families.items() if math.isfinite(v)}
    const_pk = [path_kl(prof, Schedule.constant(d, T)) for T in range(1, d + 1)]
    model_designed = None
    if mf is not None:
        ms = mf.schedule(steps)
        mpk = path_kl(prof, ms)
        model_designed = {"sizes": list(ms.sizes), "path_kl": mpk, "exact_kl": cache(ms), "regret": max(mpk - pk, 0.0)}
    return {
        "rule": rule,
        "target": target,
        "target_fraction_of_entropy": target / prof.entropy if prof.entropy > 0 else None,
        "target_steps": target_steps,
        "designed_from": "exact information profile (the law is known)",
        "steps": steps,
        "sizes": list(sched.sizes),
        "path_kl": pk,
        "exact_kl": cache(sched),
        "constant_sizes": list(const.sizes),
        "constant_path_kl": path_kl(prof, const),
        "constant_exact_kl": cache(const),
        "differs_from_constant": tuple(sched.sizes) != tuple(const.sizes),
        "step_costs": step_costs(prof, sched),
        "constant_step_costs": step_costs(prof, const),
        "llada_sizes": llada_default_counts(d, steps),
        "llada_step_costs": step_costs(prof, Schedule(llada_default_counts(d, steps))),
        "families": families,
        "family_sizes": family_sizes,
        "gains": gains,
        "constant_steps_to_match": next(T for T in range(1, d + 1) if const_pk[T - 1] <= pk + 1e-12),
        "exact_optimal_sizes": list(sched.sizes),
        "exact_optimal_path_kl": pk,
        "meets_target": bool(pk <= target + 1e-12) if rule.startswith("fewest") else None,
        "model_designed": model_designed,
        "exports": _exports(sched),
    }


#: Row permutations per map in the anchor-absorption null (:func:`anchor_null`).
NULL_PERMUTATIONS = 16

#: Largest n·T·layers·d² kept as full maps for the null on the free-running trace itself.
NULL_FULL_LIMIT = 4_000_000


def anchor_null(maps, active, *, eps: float = ATTENTION_EPS, permutations: int = NULL_PERMUTATIONS,
                seed: int = 0) -> dict:
    r"""Row-permutation null of the anchor absorption: what the anchor rule absorbs when no key
    position is preferred.

    The anchor set is chosen on the received attention :math:`s_j = \frac1L\sum_i A_{ij}`
    (its arg max when no position passes μ + εσ), so its absorption is at least 1/d by
    construction, and more when the rows are peaked even at random keys. The null permutes
    each query row's weights over the keys independently (``permutations`` times, seeded):
    every row keeps its own peakedness, any position shared by the queries (a sink, an
    anchor) is destroyed. Returned per layer: the mean over samples of the per-sample mean
    over active steps (as :func:`mdmtheory.bridge.attention.floating_summary`), and the 95th
    percentile of those per-sample values.

    Parameters
    ----------
    maps : (n, T, layers, L, L) head-averaged maps (rows = queries, each row sums to 1).
    active : (n, T) bool, the steps each sample took.
    """
    from ..bridge.attention import anchors

    A = np.asarray(maps, dtype=np.float64)
    act = np.asarray(active, dtype=bool)
    rng = np.random.default_rng([int(seed), 2])
    w = act[:, :, None].astype(np.float64)
    steps = np.maximum(w.sum(axis=1), 1.0)
    per = []
    for _ in range(int(permutations)):
        idx = np.argsort(rng.random(A.shape), axis=-1)
        sp = np.take_along_axis(A, idx, axis=-1).mean(axis=-2)  # (n, T, layers, L)
        tot = np.where(act[:, :, None], sp.sum(axis=-1), 1.0)
        a = anchors(np.where(act[:, :, None, None], sp, 1.0), eps=eps)
        per.append((np.where(a, sp, 0.0).sum(axis=-1) / tot * w).sum(axis=1) / steps)  # (n, layers)
    v = np.concatenate(per, axis=0)
    return {"kind": "row permutation", "permutations": int(permutations),
            "mean": v.mean(axis=0).tolist(), "q95": np.quantile(v, 0.95, axis=0).tolist()}


def _attention_section(law: Joint, model, baseline, sched: Schedule, plan_from: str, n: int, n_info: int,
                       seed: int, eps: float, progress) -> dict:
    """Section 8 from :mod:`mdmtheory.bridge.attention` (imports torch)."""
    from ..bridge import attention as att

    d = law.d
    out = {
        "plan_from": plan_from,
        "sizes": list(sched.sizes),
        "n": n,
        "n_info": n_info,
        "seed": seed,
        "eps": eps,
        "eps_can_pass": bool(d > 1 and eps < math.sqrt(d - 1)),  # Samuelson: z_max <= sqrt(L - 1)
        "uniform_absorption": 1.0 / d,
        "baseline": None,
    }
    data = as_oracle(law).sample(max(n, n_info), np.random.default_rng([seed, 1]))

    def mdm():
        nl_guess = getattr(getattr(model, "config", None), "n_layers", None) or 8
        full = n * sched.steps * nl_guess * d * d <= NULL_FULL_LIMIT
        tr = att.trace_sampling(model, d, sched, "random", n=n, seed=seed, keep="full" if full else "summary")
        if full:
            out["anchor_null"] = dict(anchor_null(tr.maps, tr.active, eps=eps, seed=seed),
                                      trace="the same free-running samples")
        s = tr.received()  # (n, T, layers, L)
        nl = tr.n_layers
        c = tr.colsum_masked + tr.colsum_revealed
        pos0 = att.absorption_stats((c[..., 0] / c.sum(axis=-1)).mean(axis=1))  # key 0, per layer
        out.update(
            layers=nl,
            received_sample=[s[0, :, ell].tolist() for ell in range(nl)],
            revealed_sample=tr.revealed[0].tolist(),
            received_mean=[s[:, :, ell].mean(axis=0).tolist() for ell in range(nl)],
            mdm=att.floating_summary(tr, eps=eps).to_dict(),
            mdm_position0={"mean": pos0[0].tolist(), "std": pos0[1].tolist()},
        )

    def causal():
        if baseline is None:
            return
        import torch

        trb = att.trace_forward(baseline, torch.as_tensor(data[:n]), keep="full")
        bos = att.absorption_stats(att.absorption(trb.maps[:, 0], [0]))
        bsum = att.floating_summary(trb, eps=eps)
        out["baseline"] = {
            "bos_mean": bos[0].tolist(),
            "bos_std": bos[1].tolist(),
            "top_is_bos": [float(v) for v in np.asarray(bsum.top_share)[:, 0]],
            "uniform_causal_bos": float(np.mean(1.0 / np.arange(1, d + 1))),
            "uniform_causal_top_is_bos": uniform_causal_top_is_bos(d),
            "bos_over_uniform": (bos[0] / float(np.mean(1.0 / np.arange(1, d + 1)))).tolist(),
            "summary": bsum.to_dict(),
        }

    def information():
        # teacher forcing on data x ~ p: every state is possible under the exact law
        trf = att.trace_sampling(model, d, sched, "random", n=n_info, seed=seed, keep="full", targets=data[:n_info])
        if "anchor_null" not in out:
            out["anchor_null"] = dict(anchor_null(trf.maps, trf.active, eps=eps, seed=seed),
                                      trace=f"the {n_info} teacher-forced samples below")
        out["information"] = {kind: att.attention_information_correlation(trf, law, kind=kind).to_dict()
                              for kind in ("pointwise", "average")}

    for stage in progress([mdm, causal, information], desc="attention", unit="part"):
        stage()
    return out


@renamed_keywords(law="p", target="target_kl")
def build_report(
    p: Joint,
    *,
    name: str = "law",
    source: str = "",
    steps=None,
    planners=DEFAULT_PLANNERS,
    target_kl: float | None = None,
    recommend_steps: int | None = None,
    cross_entropy=None,
    attention: AttentionOptions | None = None,
    progress: Callable | None = None,
    frontier_rules=(),
    **old,
) -> Report:
    r"""Every number of the report for the exact law ``p`` (see the module docstring).

    Parameters
    ----------
    p : :class:`~mdmtheory.Joint` (exact sampler laws are computed: K^d up to ~10^6).
    name, source : what the law is and where it comes from (shown in section 1).
    steps : step counts T of sections 4–6 (default :func:`step_counts` (d)).
    planners : registered planner names compared in section 6.
    target_kl : nats; the recommended T is the fewest steps whose optimal path KL is at most
        ``target_kl`` (an upper bound on the exact KL, by data processing); default 5% of H(X).
    recommend_steps : recommend this T instead of applying ``target_kl``.
    cross_entropy : optional model estimate with ``.levels``, ``.values``, ``.stderr`` (nats),
        as returned by ``mdmtheory.bridge.estimate_profile``: shown beside φ with 95% CIs,
        and — when it covers every level 0..d−1 — used to design the recommended schedule
        (the exact profile then judges it).
    attention : optional :class:`AttentionOptions` (``model``, ``baseline``, ``steps``,
        ``samples``, ``info_samples``, ``seed``, ``eps``): section 8, the attention of a torch
        MDM (needs the ``bridge`` extra). The old keywords ``attention_model=``,
        ``attention_steps=``, … work for one release with a DeprecationWarning.
    progress : optional wrapper ``progress(iterable, desc=..., unit=...)`` (e.g.
        :func:`mdmtheory.cli._common.progress`).
    frontier_rules : more points of the accuracy-vs-parallelism frontier: ``(name, setting,
        planner)`` triples after :data:`PARALLELISM_RULES`, for any sampler that runs with
        ``plan=None`` (its exact run's ``forwards``; docs/design.md, "How to add a sampler").

    Returns
    -------
    Report
    """
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
    if p.lost:
        raise ValueError("p: has lost mass; pass a normalized data law")
    extra = _frontier_rules(frontier_rules)
    d = p.d
    if steps is not None and (isinstance(steps, (str, bytes, dict)) or not hasattr(steps, "__iter__")):
        raise ValueError(f"steps: expected step counts (a list of integers), got {steps!r}")
    Ts = step_counts(d) if steps is None else sorted({int_arg(T, "steps", 1, d) for T in steps})
    if not Ts:
        raise ValueError("steps: give at least one step count")
    target_kl = 0.05 * entropy(p) if target_kl is None else real_arg(target_kl, "target_kl")
    if target_kl < 0:
        raise ValueError(f"target_kl: expected a KL target >= 0 nats, got {target_kl}")
    if recommend_steps is not None:
        recommend_steps = int_arg(recommend_steps, "recommend_steps", 1, d)
    att = options_from(AttentionOptions, attention, old, where="build_report", name="attention", prefix="attention_")
    attention_model, attention_baseline, attention_steps = att.model, att.baseline, att.steps
    attention_samples, attention_info_samples, attention_seed, attention_eps = (att.samples, att.info_samples,
                                                                                att.seed, att.eps)
    if attention_steps is not None:
        attention_steps = int_arg(attention_steps, "attention_steps", 1, d)
    attention_samples = int_arg(attention_samples, "attention_samples", 1)
    attention_info_samples = int_arg(attention_info_samples, "attention_info_samples", 1)
    attention_seed = int_arg(attention_seed, "attention_seed", 0)
    attention_eps = real_arg(attention_eps, "attention_eps")
    if attention_eps < 0:
        raise ValueError(f"attention_eps: expected a threshold multiplier >= 0, got {attention_eps}")
    if attention_baseline is not None and attention_model is None:
        raise ValueError("attention_baseline: the baseline is compared with an MDM; give AttentionOptions(model=...) too")
    if isinstance(planners, str):
        planners = (planners,)
    if isinstance(planners, (bytes, dict, np.ndarray)) or not hasattr(planners, "__iter__"):
        raise ValueError(f"planners: expected planner names (a list of str), got {planners!r}")
    if not planners:
        raise ValueError("planners: give at least one planner name")
    if progress is not None and not callable(progress):
        raise ValueError(f"progress: expected None or a callable like tqdm, got {type(progress).__name__}")
    progress = progress or _none_progress

    prof = information_profile(p)
    ce = _cross_entropy_section(prof.values, cross_entropy)
    model_profile = None
    if ce is not None and sorted(ce["levels"]) == list(range(d)):
        order = np.argsort(ce["levels"])
        model_profile = Profile(np.asarray(ce["values"])[order])

    profile = {
        "m": list(range(d)),
        "phi": prof.values.tolist(),
        "curve": prof.curve.tolist(),
        "entropy": prof.entropy,
        "nonincreasing": prof.is_nonincreasing(),
        "cross_entropy": ce,
    }
    cache = _KLCache(p)
    bounds = _bounds_section(p, Ts, progress, cache)  # fills the cache first: each law is computed once
    fr = pareto_frontier(prof, d)  # sections 5 and 7 share the frontiers (each computed once)
    mf = None if model_profile is None else pareto_frontier(model_profile, d)
    frontier = _frontier_section(prof, fr, Ts, mf, cache)
    planners_ = _planners_section(p, Ts, planners, progress, cache, PARALLELISM_RULES + extra if extra else None)
    recommended = _recommended_section(prof, fr, target_kl, recommend_steps, mf, cache)
    attention = None
    if attention_model is not None:
        if attention_steps is None:
            plan, plan_from = Schedule(recommended["sizes"]), "the recommended schedule (section 7)"
        else:
            plan, plan_from = Schedule.constant(d, attention_steps), f"the constant schedule with {_plural(attention_steps, 'step')}"
        attention = _attention_section(p, attention_model, attention_baseline, plan, plan_from, attention_samples,
                                       attention_info_samples, attention_seed, attention_eps, progress)
    return Report(
        law=_law_section(p, name, source),
        profile=profile,
        gain=_gain_section(prof),
        bounds=bounds,
        frontier=frontier,
        planners=planners_,
        recommended=recommended,
        attention=attention,
    )


# -- HTML -----------------------------------------------------------------------------------
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}td,th{border:1px solid #ddd;padding:.25em .6em;text-align:right}
th{background:#f4f4f4}td.l,th.l{text-align:left}figure{margin:1em 0}img{max-width:100%;height:auto}
figcaption{font-size:.92em;color:#444;margin-top:.3em}code,pre{background:#f6f6f6;padding:.1em .3em}
pre{padding:.6em;overflow-x:auto}.bad{color:#b00;font-weight:bold}
"""


def _num(x, digits: int = 6) -> str:
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else '<span class="bad">NO</span>'
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if math.isnan(x):
        return "–"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{_r(x):.{digits}g}"


def _r(x) -> float:
    """Display only: rounding noise around an exact 0 (below :data:`ROUNDING`) shows as 0."""
    x = float(x)
    return 0.0 if abs(x) < ROUNDING else x


def bounds_gap_note(b: dict) -> str | None:
    """The legend of a "–" in the bounds table: which bounds are missing at which T, and why
    (a bound is listed only where its hypotheses hold); None when none is missing."""
    gaps, names = [], []
    for n, s in b["series"].items():
        at = [T for T, v in zip(b["steps"], s["values"]) if _missing(v)]
        if at:
            gaps.append(f"{bound_name(n)} at T = {', '.join(str(T) for T in at)}")
            names.append(n)
    if not gaps:
        return None
    why = (" IMDM's pairwise bound needs a step of at least 2 tokens: not at T = d, where every step reveals one."
           if any(n.startswith("imdm") for n in names) else "")
    return ("“–”: the bound is not listed at that step count, where its hypotheses exclude it (" + "; ".join(gaps)
            + ")." + why)


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _nowrap(text: str) -> str:
    """A cell kept on one line (a list of sizes is not cut mid-list)."""
    return f'<span style="white-space:nowrap">{html.escape(text)}</span>'


def _short(v) -> str:
    """A value of an export for the table: floats to 6 significant digits, lists inline."""
    if isinstance(v, float):
        return _num(v)
    if isinstance(v, list):
        return "[" + ", ".join(_short(x) for x in v) + "]"
    return str(v)


def _table(head: list[str], rows: list[list], left: int = 1) -> str:
    th = "".join(f'<th class="{"l" if i < left else ""}">{html.escape(h)}</th>' for i, h in enumerate(head))
    body = []
    for row in rows:
        cells = "".join(
            f'<td class="{"l" if i < left else ""}">{c if isinstance(c, str) and c.startswith("<") else html.escape(c) if isinstance(c, str) else _num(c)}</td>'
            for i, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{th}</tr>{''.join(body)}</table>"


def _figure(png: bytes, caption: str, alt: str) -> str:
    b64 = base64.b64encode(png).decode("ascii")
    return (f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{b64}">'
            f"<figcaption>{html.escape(caption)}</figcaption></figure>")


def _share(x) -> str:
    """A fraction as a percentage (so that 1.0 does not read as a count)."""
    return "–" if x is None or not math.isfinite(float(x)) else f"{100 * float(x):.1f}%"


def _layers(ells) -> str:
    ells = list(ells)
    return ("layer " if len(ells) == 1 else "layers ") + ", ".join(str(e) for e in ells)


def _anchor_verdict(absorption, null: dict) -> str:
    """Per layer: is the anchor absorption above the row-permutation null's 95th percentile?"""
    above = [ell for ell, (v, q) in enumerate(zip(absorption, null["q95"])) if v > q]
    below = [ell for ell in range(len(absorption)) if ell not in above]
    out = []
    if above:
        out.append(f"In {_layers(above)} the anchors absorb more than the null's 95th percentile: the queries share "
                   "a preferred position.")
    if below:
        out.append(f"In {_layers(below)} the anchors absorb no more than shuffled rows would (within the null's 95th "
                   "percentile): no anchor beyond what peaked rows give by chance.")
    return " ".join(out)


def uniform_causal_top_is_bos(d: int) -> float:
    """The null of "BOS is the most attended key": the share of samples where key 0 is the arg
    max of received attention s_j = (1/d) Σ_i A_ij under uniform causal attention
    (A_ij = 1/(i+1) for j ≤ i). s_j = (1/d) Σ_{i ≥ j} 1/(i+1) falls strictly in j, so BOS is the
    most attended key in every sample: 1.0 for every d ≥ 2 (issue 39 item 5: a baseline's
    "71.5 %" reads as a sink without it, and is below this null)."""
    d = int_arg(d, "d", 1)
    A = np.tril(np.ones((d, d))) / np.arange(1, d + 1)[:, None]
    s = A.mean(axis=0)
    return float(np.flatnonzero(s == s.max()).tolist() == [0])


def _bos_verdict(b: dict) -> str:
    """Per layer: BOS absorption against uniform causal attention (below it: no sink)."""
    u = b["uniform_causal_bos"]
    below = [ell for ell, v in enumerate(b["bos_mean"]) if v < u]
    above = [ell for ell, v in enumerate(b["bos_mean"]) if v >= u]
    out = []
    if below:
        out.append(f"Causal baseline: in {_layers(below)} BOS absorbs less than uniform causal attention would give it "
                   f"({_share(u)}): no attention sink there, BOS is attended less than by chance.")
    if above:
        out.append(f"Causal baseline: in {_layers(above)} BOS absorbs "
                   + ", ".join(f"{b['bos_mean'][ell] / u:.2g}×" for ell in above)
                   + f" what uniform causal attention would give it ({_share(u)}); a sink absorbs far more than that.")
    null_top = b.get("uniform_causal_top_is_bos")
    if null_top is not None and b.get("top_is_bos"):
        out.append(f"BOS is the most attended key in {', '.join(_share(v) for v in b['top_is_bos'])} of the samples "
                   f"(per layer); that is no sign of a sink by itself: under uniform causal attention BOS is the most "
                   f"attended key in {_share(null_top)} of them (every query sees it, so it receives the most).")
    return " ".join(out)


def _attention_html(a: dict | None) -> list[str]:
    parts = [f'<h2 id="attention">{SECTIONS["attention"]}</h2>']
    if a is None:
        return parts + ["<p>No model given: this section needs a torch MDM that returns its attention maps "
                        "(<code>mdmtheory report --model PATH</code>; the default report uses the shipped "
                        "<code>words</code> MDM and its causal baseline <code>words-ar</code>).</p>"]
    m, b, info = a["mdm"], a["baseline"], a["information"]
    nl = a["layers"]
    d = len(a["received_sample"][0][0])
    parts.append(f"<p>Head-averaged attention A<sup>(ℓ)</sup> of every layer, recorded while the model samples "
                 f"{a['n']} sequences with {html.escape(a['plan_from'])} (sizes {a['sizes']}), random order "
                 f"(<code>mdmtheory.bridge.attention.trace_sampling</code>). Received attention "
                 f"s_j = (1/L) Σ_i A_ij; anchors are the positions with s_j &gt; μ(s) + ε σ(s), ε = {a['eps']:g} "
                 "(arXiv 2601.07894), the arg max when none passes.</p>")
    if not a["eps_can_pass"]:
        parts.append(f"<p>With d = {d} positions no position can pass ε = {a['eps']:g} (Samuelson: "
                     f"max (s_j − μ)/σ ≤ √(d − 1) = {math.sqrt(max(d - 1, 0)):.3g}), so every anchor here is the arg "
                     "max: “floating” means the arg max moves.</p>")
    parts.append(_figure(plots.png(plots.attention_heatmap_figure(a)),
                         "Received attention s_j per step (rows, top to bottom) and position (columns), one column "
                         "per layer; red circles mark the anchors. Top: one sample, white dots mark the positions "
                         "already revealed at that step. Bottom: the mean over samples (circles: the anchors of the mean). A fixed sink is one bright "
                         "column; floating anchors are circles that change column from step to step or from layer "
                         "to layer.", "received attention heatmaps"))
    nul = a.get("anchor_null")
    rows = [
        ["anchors per step (mean count)", *m["n_anchors"]],
        ["share of steps where no position passed (arg max used)", *map(_share, m["fallback"])],
        ["share of step transitions where the anchor set changed (drift rate)", *map(_share, m["drift_rate"])],
        ["mean move of the top anchor (positions)", *m["top_shift"]],
        ["share of attention absorbed by the anchors", *map(_share, m["absorption_mean"])],
    ]
    if nul is not None:
        rows += [["… the same under the row-permutation null (mean)", *map(_share, nul["mean"])],
                 ["… the null's 95th percentile (per sample)", *map(_share, nul["q95"])]]
    rows += [
        ["share of attention absorbed by position 0", *map(_share, a["mdm_position0"]["mean"])],
        ["row entropy (nats; uniform log d = %.3f)" % math.log(d), *m["entropy"]],
        ["share of attention on masked keys", *map(_share, m["masked_share"])],
    ]
    if b is not None:
        rows += [["causal baseline: share of attention absorbed by BOS", *map(_share, b["bos_mean"])],
                 ["… uniform causal attention would give BOS", *[_share(b["uniform_causal_bos"])] * nl],
                 ["causal baseline: share of samples where BOS is the most attended key", *map(_share, b["top_is_bos"])]]
        null_top = b.get("uniform_causal_top_is_bos", uniform_causal_top_is_bos(d))
        rows += [["… the same under uniform causal attention (the null)", *[_share(null_top)] * nl]]
    parts.append(_table(["per layer"] + [f"layer {ell}" for ell in range(nl)], rows))
    if nul is not None:
        parts.append("<p>The anchor set is chosen as the most attended positions (the arg max here), so its absorption "
                     f"is at least 1/d = {_share(1 / d)} by construction, and higher whenever single rows are peaked. "
                     "Its null is the row-permutation null (<code>mdmtheory.report.report.anchor_null</code>): each query row's "
                     f"weights are shuffled over the keys ({nul['permutations']} times, on {html.escape(nul['trace'])}), "
                     "which keeps every row's peakedness and removes any position the queries share. "
                     + _anchor_verdict(m["absorption_mean"], nul) + "</p>")
    if b is not None:
        parts.append("<p>" + _bos_verdict(b) + "</p>")
    cap = ("Share of all attention absorbed per layer (mean ± std over samples): the MDM's anchor set and its "
           "position 0")
    if b is not None:
        cap += (", against the causal baseline's BOS (key 0) on data. An attention sink absorbs far more than "
                "uniform attention would (dashed: uniform causal attention gives BOS the mean of 1/(i+1))")
    cap += ("; dotted: 1/d, one position under uniform attention (the anchor curve is an arg max, so compare it with "
            "the row-permutation null in the table, not with 1/d). The closer a curve stays to its null, "
            "the weaker the sink or anchor.")
    parts.append(_figure(plots.png(plots.absorption_figure(a)), cap, "absorption per layer"))
    parts.append(f"<p>Where is the information? For {a['n_info']} samples teacher-forced on data x ~ p (so every "
                 "state is possible under the exact law), each masked query i and each revealed j: the exact "
                 "I(X_i; X_j | X_{A∖j}) — pointwise (given the values of the other revealed positions) and "
                 "averaged over the law — against A_ij, Spearman rank correlation per layer "
                 "(<code>attention_information_correlation</code>).</p>")
    parts.append(_figure(plots.png(plots.information_figure(a)),
                         "Left: mean Spearman ρ per layer between the attention a masked query pays to the revealed "
                         "positions and their exact information about it, with 95% CIs; ρ > 0 means the layer looks "
                         "where the information is, ρ ≈ 0 that it looks elsewhere. Right: how often the most attended "
                         "revealed position is a most informative one, against the chance of a uniform pick (dashed).",
                         "attention versus information"))
    rows = []
    for kind, c in info.items():
        rows += [[f"{kind}: Spearman ρ ± stderr",
                  *[f"{r:.3f} ± {e:.3f}" for r, e in zip(c["rho_mean"], c["rho_stderr"])]],
                 [f"{kind}: share of cases where the top-attended is most informative (chance {_share(c['top_hit_chance'])})",
                  *map(_share, c["top_hit"])],
                 [f"{kind}: information rank of the top anchor (0.5 = random)", *c["anchor_info_rank"]],
                 [f"{kind}: cases (count)", *c["n_cases"]]]
    if all(n == 0 for c in info.values() for n in c["n_cases"]):
        parts.append("<p>There is no case with a defined correlation: in every state the revealed positions carry "
                     "equal (e.g. zero) information about each masked one.</p>")
    parts.append(_table(["per layer"] + [f"layer {ell}" for ell in range(nl)], rows))
    return parts


def _bounds_caption(b: dict) -> str:
    """Caption of the bounds figure, from :func:`mdmtheory.report.plots.bounds_lines` (what is
    drawn, how, what is not and why, which curves coincide)."""
    plan = bounds_lines(b)
    cap = ("Constant schedules with T steps, random planner, log scales. Solid lines are exact: the KL of the "
           "sampler's output law (black circles) and the path KL (blue squares). Each bound is drawn with ▲ if it "
           "is an upper bound (it must lie above the exact quantity it bounds) and ▼ if a lower one (below it); "
           "dashed if its statement is published (status paper, paper via summary, or our reading of a paper), "
           "dash-dotted if it is derived here.")
    pub = [x["label"] for x in plan["drawn"] if x["published"]]
    own = [x["label"] for x in plan["drawn"] if not x["published"]]
    if pub:
        cap += " Published: " + "; ".join(pub) + "."
    if own:
        cap += " Derived here: " + "; ".join(own) + "."
    if plan["not_drawn"]:
        cap += " Not drawn: " + "; ".join(f"{n} ({why})" for n, why in plan["not_drawn"]) + "."
    for names, at in plan["coincide"]:
        who = ", ".join(names[:-1]) + " and " + names[-1]
        cap += f" {who} coincide at T = {', '.join(str(t) for t in at)}."
    if plan["coincide"]:
        cap += (" (Coinciding: equal to 1e-9 relative; the later line lies on the earlier ones there, drawn with "
                "smaller markers so that each stays visible.)")
    cap += " Zero values (T = d is exact) and infinite ones cannot be drawn on a log scale."
    return cap


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _falls_at(phi: list, starts) -> list[tuple[int, float]]:
    """(m, φ_{m−1} − φ_m) at each step start m >= 1: the falls no step pays."""
    return [(int(m), float(phi[m - 1] - phi[m])) for m in starts if m >= 1]


def schedule_caption(rec: dict, phi) -> str:
    """Caption of the recommended-schedule figure, from the numbers it shows (each claim computed)."""
    phi = list(phi)
    T = rec["steps"]
    opt, const = Schedule(rec["sizes"]), Schedule(rec["constant_sizes"])
    cap = (f"Tokens revealed at each step ({_plural(T, 'step')} in all) by the recommended schedule {rec['sizes']} "
           f"and by the constant one {rec['constant_sizes']}. A step of k tokens taken with s already revealed costs "
           "Σ_{m=s}^{s+k−1} (φ_s − φ_m) nats of path KL: the fall of the profile inside the step (numbers above "
           "the bars). Optimal: " + " + ".join(f"{_r(c):.3g}" for c in rec["step_costs"])
           + f" = {_r(rec['path_kl']):.3g} nats; constant (remainder last): "
           + " + ".join(f"{_r(c):.3g}" for c in rec["constant_step_costs"]) + f" = {_r(rec['constant_path_kl']):.3g} nats.")
    ll = rec.get("llada_sizes")
    if ll is not None and list(ll) != list(rec["constant_sizes"]):
        llk = float(sum(rec["llada_step_costs"]))
        cap += (f" LLaDA's generate and the diffusers pipelines split d/T with the remainder first, {list(ll)}: "
                + " + ".join(f"{_r(c):.3g}" for c in rec["llada_step_costs"]) + f" = {_r(llk):.3g} nats"
                + (f", so against the split they use the optimum saves {_pct((llk - rec['path_kl']) / llk)}."
                   if llk > 1e-12 else "."))
    if not rec["differs_from_constant"]:
        return cap + (" Here the optimum is the constant schedule itself: at this step count the choice of schedule "
                      "gains nothing (section 5 shows the step counts where it does).")
    if T >= 2:
        fo, fc = _falls_at(phi, opt.starts), _falls_at(phi, const.starts)
        cap += (" The optimum starts its steps at m = " + ", ".join(str(m) for m, _ in fo) + " revealed, so the "
                "falls there (" + ", ".join(f"φ_{m - 1} − φ_{m} = {f:.3g}" for m, f in fo) + " nats) are paid by no "
                "step; the constant schedule starts at m = " + ", ".join(str(m) for m, _ in fc) + ".")
        falls = np.asarray(phi[:-1]) - np.asarray(phi[1:])  # falls[m - 1] = φ_{m−1} − φ_m
        top = set((np.argsort(-falls, kind="stable")[:T - 1] + 1).tolist())
        if {m for m, _ in fo} == top and len(top) == T - 1:
            cap += " These are the " + ("steepest fall" if T == 2 else f"{T - 1} steepest falls") + " of the profile."
    return cap


def gain_caption(g: dict, law: dict) -> str:
    """Caption of the gain figure: h(t) is a sum over the d positions (so it may exceed log K)."""
    d, K = law["d"], law["K"]
    h1 = g["h"][-1]
    cap = ("Left: the gain h(t) = Σ_i E I(X_i; X_B), B ⊆ [d]∖{i} revealed independently with probability t: the "
           f"information the d = {d} positions together gain from a Bernoulli(t) revealed set. It is a sum over "
           f"positions, not one token's gain, so it can exceed log K = {math.log(K):.3g} nats (the most one token can "
           f"gain); here h(1) = TC + DTC = {h1:.3g} nats")
    cap += (", above log K." if h1 > math.log(K) else ".")
    cap += (" Flat h means tokens are nearly independent. Right: the UGC density q(λ) in log reveal odds; "
            "where it is large, steps must be small (the dashed lines mark W26's canonical interval [1/d, 1 − 1/d]).")
    return cap


def frontier_caption(f: dict) -> str:
    """Caption of the frontier figure; names the families that reach the optimum (their line
    then lies on the black one, :func:`mdmtheory.report.plots.coinciding`)."""
    cap = ("Path KL against the number of forwards T. The optimal schedule (black) is the lower envelope: no "
           "schedule with T forwards does better; the gap to each family is what the family wastes. Every family "
           "makes T forwards: constant puts the remainder of d/T on the last steps, the LLaDA split on the first "
           "(LLaDA's get_num_transfer_tokens), and the log-linear MDLM grid starts at t = 0 (MDLM's ε = 10⁻³ would "
           "draw its first tokens exactly before the grid, a free extra forward). Geometric (W26's: one token, a "
           "geometric grid of at least one step, one token) needs 3 ≤ T ≤ d: “–” below. Dotted: the exact KL of "
           "the optimal schedule's output law. Zero values (T = d) are not drawn on the log scale.")
    zero = [T for T, v in zip(f["steps"], f["optimal"]) if abs(float(v)) < ROUNDING]
    if zero and min(zero) < max(f["steps"]):
        cap += (f" The optimal path KL is exactly 0 from T = {min(zero)} on ({', '.join(str(T) for T in zero)}): "
                "those points of the black line are drawn as triangles on the bottom edge, at 0, which a log axis "
                "cannot show.")
    steps = list(f["steps"])
    keep = [i for i, T in enumerate(steps) if T > 1]  # at T = 1 every schedule is the one step [d]
    curves = [("optimal", [f["optimal"][i] for i in keep])]
    curves += [(FAMILY_LABELS.get(n, n), [v[i] for i in keep]) for n, v in f["families"].items()]
    reach: dict[str, list] = {}
    same = []
    for group, at in plots.coinciding(curves, [steps[i] for i in keep]):
        if "optimal" in group:
            for n in group:
                if n != "optimal":
                    reach.setdefault(n, []).extend(at)
        else:
            same.append((group, at))
    for n, at in reach.items():
        cap += f" {n} is optimal at T = {', '.join(map(str, sorted(at)))} (its line lies on the black one there)."
    for group, at in same:
        cap += (f" {', '.join(group[:-1])} and {group[-1]} coincide at T = {', '.join(map(str, at))} (one line lies "
                "on the other).")
    if f.get("model_designed") is not None:
        cap += (" Magenta: schedules designed from the model's cross-entropy profile, judged by the exact profile "
                "(above the black line by what the model's learning error costs).")
    return cap


def planners_caption(pl: dict) -> str:
    """Caption of the planners figure; says so when every drawn value is one value (the plot
    then fixes its axis around it, :func:`mdmtheory.report.plots.flat_value`)."""
    cap = ("Exact KL of each planner's output law on the constant schedule with T steps. Lower is "
           "better; at T = d every planner is exact (one token per step: zero, not drawn on the log scale).")
    flat = plots.flat_value(np.asarray(pl["kl"], dtype=np.float64))
    if flat is not None:
        cap += (f" Here every drawn value is {flat:.6g} nats (all equal to {plots.FLAT_RTOL:g} relative): no planner "
                "and no step count below d does better, and the axis is fixed around that value instead of magnifying "
                "rounding differences.")
        return cap
    kl = np.asarray(pl["kl"], dtype=np.float64)
    names = pl.get("planners") or [f"planner {j}" for j in range(kl.shape[1])]
    steps = pl.get("steps") or list(range(1, kl.shape[0] + 1))
    keep = [i for i, T in enumerate(steps) if T > 1]  # at T = 1 every planner is the one-step product law
    steps, kl = [steps[i] for i in keep], kl[keep]
    drawn = [T for T, row in zip(steps, kl) if np.any(np.isfinite(row) & (row > plots.ZERO))]
    for group, at in plots.coinciding([(n, kl[:, j]) for j, n in enumerate(names)], steps):
        where = "every drawn T" if at == drawn else "T = " + ", ".join(map(str, at))
        cap += (f" {', '.join(group[:-1])} and {group[-1]} give the same KL at {where} (to {plots.COINCIDE_RTOL:g} "
                "relative): their lines lie on one another, drawn with smaller markers the later they come.")
    return cap


def _transition_inf_html(pl: dict) -> list[str]:
    """Why a transition KL-rate is ∞ and its finite part (:func:`transition_parts`), when one is."""
    rates = pl["transition_kl_rate"]
    if not any(math.isinf(v) for row in rates for v in row) or "transition_impossible_share" not in pl:
        return []
    inf_T = [T for T, row in zip(pl["steps"], rates) if any(math.isinf(v) for v in row)]
    return [
        "<p>∞ means the output law makes consecutive pairs (bigrams) that the data never makes — a step that "
        "commits two neighbours at once draws them independently, so it can pair values the law never pairs — "
        "and a KL against a zero probability is infinite (here at T = " + ", ".join(map(str, inf_T)) + "). The "
        "tables below split it: the share of the output's bigrams the data never makes, and the KL-rate over the "
        "bigrams it does make (the output's transitions renormalized on them; "
        "mdmtheory.report.report.transition_parts). Where the share is 0, the second table is the rate itself.</p>",
        _table(["T"] + [f"{n}: share of impossible bigrams" for n in pl["planners"]],
               [[T] + [_share(v) for v in row] for T, row in zip(pl["steps"], pl["transition_impossible_share"])]),
        _table(["T"] + [f"{n}: KL-rate on the possible bigrams" for n in pl["planners"]],
               [[T] + row for T, row in zip(pl["steps"], pl["transition_kl_rate_rest"])]),
    ]


#: How the tables name the families (the record's keys are kept).
FAMILY_LABELS = {"constant": "constant (remainder last)"}


def _summary_html(r: Report) -> list[str]:
    """The first screen: what the report is for, the budget or target in words, and the gain."""
    law, rec = r.law, r.recommended
    T, d = rec["steps"], law["d"]
    out = [f"<p>Which tokens should a masked-diffusion sampler reveal at each step? This report answers it exactly for "
           f"{html.escape(law['name'])} (d = {d} tokens, K = {law['K']} symbols, entropy H(X) = {law['entropy']:.3g} "
           "nats). Its yardstick is the <b>path KL</b>: an exact upper bound on KL(p‖q), the divergence between the "
           "law p and the law q of what the sampler outputs with a given schedule of step sizes (sections 4–5).</p>"]
    frac = rec.get("target_fraction_of_entropy")
    tgt = f"{rec['target']:.3g} nats" + ("" if frac is None else f" ({_pct(frac)} of H(X))")
    if rec["rule"].startswith("fewest"):
        out.append(f"<p><b>Target</b>: a path KL of at most {tgt}, i.e. the sampler's output may be at most that far "
                   f"from the law in KL. The fewest steps whose optimal schedule meets it: <b>T = {T}</b>.</p>")
    else:
        out.append(f"<p><b>Step budget</b>: T = {_plural(T, 'step')} (network calls) to generate d = {d} tokens. "
                   f"(A target of {tgt} — the sampler's output at most that far from the law in KL — would need "
                   f"T = {rec['target_steps']}.)</p>")
    rows = [["optimal (recommended)", str(rec["sizes"]), rec["path_kl"], "–"]]
    for name, g in rec["gains"].items():
        sizes = (str(rec["family_sizes"][name]) if name in rec["family_sizes"] else
                 "Bernoulli grid from t = 0 (random counts)")
        name = FAMILY_LABELS.get(name, name)
        saved = (f"{g['saved']:.3g} nats ({_pct(g['relative'])})" if g["saved"] > 1e-12 else "0 (the same)")
        rows.append([name, sizes, g["path_kl"], saved])
    out.append(_table(["schedule, T = %d" % T, "sizes", "path KL (nats)", "saved by the optimum"], rows, left=2))
    if "geometric" not in rec["gains"]:
        out.append(f"<p>Geometric (W26's) is not shown: it needs 3 ≤ T ≤ d, here T = {T} (one token, a geometric "
                   "grid of at least one step, one token).</p>")
    out.append("<p>Every schedule here makes T forwards: constant is Schedule.constant (the remainder of d/T on the "
               "last steps), the LLaDA split is what LLaDA's generate and the diffusers pipelines use "
               "(get_num_transfer_tokens: the remainder on the first steps), and the log-linear MDLM grid starts at "
               "t = 0 (with MDLM's ε = 10⁻³ its exact draws before the grid would be a free extra step).</p>")
    line = (f"<p>Exact KL of the sampler's output law: optimal {rec['exact_kl']:.3g} nats, constant "
            f"{rec['constant_exact_kl']:.3g} nats.")
    if rec["constant_steps_to_match"] > T:
        line += (f" The constant schedule needs T = {rec['constant_steps_to_match']} to reach the optimum's path KL "
                 f"with {T}.")
    if not rec["differs_from_constant"]:
        line += " At this step count the optimal schedule is the constant one."
    out.append(line + "</p>")
    return out


def render_html(report: Report) -> str:
    """The report as one self-contained HTML document (a string)."""
    if not isinstance(report, Report):
        raise ValueError(f"report: expected a mdmtheory.report.Report, got {type(report).__name__}")

    r = report
    law = r.law
    parts = [f"<h1>mdmtheory report: {html.escape(law['name'])}</h1>"]
    parts.extend(_summary_html(r))

    # 1. law
    parts.append(f'<h2 id="law">{SECTIONS["law"]}</h2>')
    parts.append(f"<p>{html.escape(law['source'] or 'no source given')}</p>")
    parts.append(_table(["quantity", "value"], [
        ["sequence length d", law["d"]], ["alphabet size K", law["K"]], ["outcomes K^d", law["outcomes"]],
        ["support size", law["support"]], ["entropy H(X) (nats)", law["entropy"]],
        ["total correlation TC", law["tc"]], ["dual total correlation DTC", law["dtc"]],
    ]))

    # 2. profile
    parts.append(f'<h2 id="profile">{SECTIONS["profile"]}</h2>')
    ce = r.profile["cross_entropy"]
    cap = ("The information profile φ_m (mean conditional entropy of a new token given m revealed ones) "
           "falls from H(X_i) toward H(X_i | rest); the steeper the fall, the more a large step costs. "
           "The path KL of a schedule is the left-Riemann error of this curve.")
    if ce is not None:
        cap += (" Orange: the model's cross-entropy profile c(m) with 95% confidence intervals; "
                "its distance above φ is the model's learning error ε(m).")
    parts.append(_figure(plots.png(plots.profile_figure(r.profile)), cap, "information profile"))
    rows = [[m, phi] + ([] if ce is None else [None, None]) for m, phi in zip(r.profile["m"], r.profile["phi"])]
    if ce is not None:
        for lv, v, s in zip(ce["levels"], ce["values"], ce["stderr"]):
            rows[lv][2], rows[lv][3] = v, s
    parts.append(_table(["m", "φ_m"] + ([] if ce is None else ["c(m) model", "stderr"]), rows))

    # 3. gain
    g = r.gain
    parts.append(f'<h2 id="gain">{SECTIONS["gain"]}</h2>')
    parts.append(_figure(plots.png(plots.gain_figure(g)), gain_caption(g, law), "gain and UGC density"))
    parts.append(_table(["quantity", "value"], [["h(1) = TC + DTC (nats, a sum over positions)", g["h"][-1]],
                                                 ["log K (nats, the most one token can gain)", math.log(law["K"])],
                                                 ["UGC H(0, 1)", g["ugc_total"]], ["C_ugc (coarse)", g["C_ugc"]],
                                                 ["P_ugc (fine)", g["P_ugc"]]]))

    # 4. bounds
    b = r.bounds
    parts.append(f'<h2 id="bounds">{SECTIONS["bounds"]}</h2>')
    parts.append(_figure(plots.png(plots.bounds_figure(b)),
                         _bounds_caption(b), "bounds versus steps"))
    names = list(b["series"])
    rows = [[T, b["kl"][i], b["path_kl"][i]] + [b["series"][n]["values"][i] for n in names] for i, T in enumerate(b["steps"])]
    parts.append(_table(["T", "exact KL", "path KL"] + [bound_name(n) for n in names], rows))
    gap = bounds_gap_note(b)
    if gap:
        parts.append(f"<p>{html.escape(gap)}</p>")
    parts.append("<p>Sources: " + "; ".join(f"<b>{html.escape(bound_name(n))}</b> (<code>{html.escape(n)}</code>, "
                 f"{html.escape(s['kind'])} bound on {html.escape(s['quantity'])}, {html.escape(s.get('status') or '–')}): "
                 f"{html.escape(s['source'])}" for n, s in b["series"].items()) + "</p>")
    parts.append(_table(["law-level bound", "kind", "status", "quantity", "value", "exact", "holds"],
                        [[bound_name(x["name"]), x["kind"], x.get("status") or "–", x["quantity"], x["value"], x["exact"],
                          x["holds"]] for x in b["law_rows"]], left=4))
    parts.append(f"<p>Every bound holds: {_num(bool(b['all_hold']))}</p>")

    # 5. frontier
    f = r.frontier
    parts.append(f'<h2 id="frontier">{SECTIONS["frontier"]}</h2>')
    cap = frontier_caption(f)
    parts.append(_figure(plots.png(plots.frontier_figure(f)), cap, "Pareto frontier"))
    fam = list(f["families"])
    rows = [[T, f["optimal"][i], f["optimal_exact_kl"][i]] + [f["families"][n][i] for n in fam]
            + [_nowrap(str(f["optimal_schedules"][i]))] for i, T in enumerate(f["steps"])]
    parts.append(_table(["T", "optimal path KL", "optimal exact KL"] + [FAMILY_LABELS.get(n, n) for n in fam]
                        + ["optimal sizes"], rows))

    # 6. planners
    pl = r.planners
    parts.append(f'<h2 id="planners">{SECTIONS["planners"]}</h2>')
    parts.append(_figure(plots.png(plots.planners_figure(pl)), planners_caption(pl), "planners compared"))
    parts.append(_table(["T"] + pl["planners"], [[T] + row for T, row in zip(pl["steps"], pl["kl"])]))
    if pl.get("ties"):
        parts.append(f"<p>{html.escape(pl['ties']['text'])}</p>")
    if pl.get("transition_kl_rate"):
        parts.append("<p>The same sampler laws scored as Tang et al. (arXiv 2602.19619) score samplers: the "
                     "transition KL-rate of the bigram statistics (every consecutive pair) of the output law "
                     "against the law's, exact (mdmtheory.samplers.transition_rate). A sampler can match the "
                     "bigrams and still miss the law, or the reverse: compare the two tables.</p>")
        parts.append(_table(["T"] + pl["planners"], [[T] + row for T, row in zip(pl["steps"],
                                                                                 pl["transition_kl_rate"])]))
        parts.extend(_transition_inf_html(pl))
    par = pl.get("parallelism")
    if par:
        parts.append("<p>Accuracy against parallelism: expected tokens per forward (d over the expected number of "
                     "model calls of the loop that runs it) and exact KL, for every planner above at each T (T "
                     "forwards), Fast-dLLM's confidence threshold in its generate loop (which stops at the step "
                     "that fills the block: its forwards are its steps, a random number) and LLaDA's "
                     "sample-then-select at temperature 1 (T forwards in LLaDA's generate and in diffusers' "
                     "LLaDA2Pipeline; with a threshold diffusers' pipeline makes one more forward when the masks "
                     "run out before the last step, so a threshold saves forwards only by finishing at least two "
                     "steps early)"
                     + ("; and the rules of PARALLELISM_RULES (SGLang's dLLM algorithms by default, their forwards "
                        "as each engine's loop counts them for one block: " + html.escape(", ".join(sorted(
                            {q["pipeline"] for q in par["points"] if q.get("pipeline", "").startswith("SGLang")})))
                        + ")" if any(q.get("pipeline", "").startswith("SGLang") for q in par["points"]) else "")
                     + ". The frontier keeps the points that no other point beats with more tokens per "
                     "forward and no more KL." + (f" ({html.escape(par['skipped'])}.)" if par.get("skipped") else "")
                     + "</p>")
        parts.append(_table(["planner", "setting", "tokens per forward", "exact KL"],
                            [[q["planner"], q["setting"], q["tokens_per_forward"], q["kl"]] for q in par["frontier"]],
                            left=2))
        parts.extend(_adaptive_html(pl, par.get("adaptive")))

    # 7. recommended
    rec = r.recommended
    ex = rec["exports"]
    parts.append(f'<h2 id="recommended">{SECTIONS["recommended"]}</h2>')
    parts.append(_figure(plots.png(plots.schedule_figure(rec)), schedule_caption(rec, r.profile["phi"]),
                         "recommended schedule"))
    md = rec.get("model_designed")
    parts.append(_table(["quantity", "value"], [
        ["rule", rec["rule"]], ["designed from", rec["designed_from"]], ["steps T", rec["steps"]],
        ["sizes", str(rec["sizes"])], ["path KL", rec["path_kl"]], ["exact KL", rec["exact_kl"]],
        ["constant schedule path KL", rec["constant_path_kl"]], ["constant schedule exact KL", rec["constant_exact_kl"]],
    ] + ([] if rec["meets_target"] is None else [["path KL meets the target", rec["meets_target"]]])
      + ([] if md is None else [
        ["designed from the model alone: sizes", str(md["sizes"])],
        ["… its path KL under the exact law", md["path_kl"]], ["… its exact KL", md["exact_kl"]],
        ["… regret (path KL above the optimum)", md["regret"]]]), left=2))
    if md is not None and md["path_kl"] > rec["constant_path_kl"] + 1e-12:
        parts.append('<p class="bad">The schedule designed from the model alone is worse than the constant schedule '
                     "under the exact law: the model's learning error ε(m) (section 2) distorts its profile. A user "
                     "without the exact law would need a better model, or more draws per level.</p>")
    parts.append("<p>The recommended schedule exported for the samplers people run (<code>mdmtheory.exports</code>; "
                 "docs/design-from-data.md shows where each one plugs in). C_j = k_1 + … + k_j are the revealed "
                 "counts after step j.</p>")
    rows = []
    for fmt, e in ex.items():
        body_ = e.get("unavailable") or ", ".join(f"{k}: {_short(v)}" for k, v in e.items() if k != "format")
        rows.append([f"<code>{html.escape(fmt)}</code>", EXPORT_CONVENTIONS[fmt],
                     f"<code>{html.escape(body_)}</code>"])
    parts.append(_table(["export", "sampler convention it follows", "values"], rows, left=3))
    if ex["dream"].get("exact") is False:
        parts.append(f'<p class="bad">Dream: its non-origin algorithms would take {ex["dream"]["counts_from_grid"]} '
                     f'from this grid (float32 rounding of int(n_masked (1 − s/t))), not {ex["dream"]["counts"]}: '
                     "pass the counts, or use alg='origin' (the counts in expectation).</p>")

    parts.extend(_attention_html(r.attention))

    body = "\n".join(parts)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>mdmtheory report: '
            f"{html.escape(law['name'])}</title><style>{_CSS}</style></head><body>\n{body}\n</body></html>\n")


def write_html(report: Report, path) -> Path:
    """Write :func:`render_html` (report) to ``path`` (parent folders are created); returns the path."""
    if not isinstance(report, Report):
        raise ValueError(f"report: expected a mdmtheory.report.Report, got {type(report).__name__}")

    path = Path(path_arg(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(report), encoding="utf-8")
    return path
