r""":func:`compare`: for one law and one plan, the exact KL of the output law, the path KL and
every applicable bound, in one table (:class:`Comparison` of :class:`ComparisonRow`).
(The module is ``comparison``, not ``compare``, so that ``mdmtheory.bounds.compare`` stays
the function.)"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._estimate import Record
from ..information.divergence import kl as _kl
from ..information.ugc import as_profile, effective_total_correlation, log_odds, _ugc
from ..laws.joint import Joint
from ..schedules.plans import Grid, Schedule
from ._core import Bound, DERIVED, HOLD_RTOL, OUR_READING, _is_geometric
from .derived import optimal_grid_error_lower, riemann_bound
from .dhw26 import dhw26_dimension_bound, dhw_sandwich, dhw_tc_bound
from .demask import demask_checks as _demask_checks
from .cl26 import MAX_D as _CL26_MAX_D, cl26_bounds
from .fastdllm import IMPLICATION, statement_checks as _statement_checks
from .feng25 import sequence_error_rate, token_error_rate
from .jys import jys_klub
from .imdm import imdm_lower
from .lc25 import lc25_bound, lc25_lower_our_reading, worst_path_kl
from .pb25 import COMPARE_MAX_D as _PB25_MAX_D, pb25_partition_lower, pb25_schedule_lower
from .w26 import (
    ugc_total_bound,
    w26_block_objective_min,
    w26_corollary1,
    w26_proposition1_dp_lower,
    w26_theorem1,
    w26_theorem1_card,
    w26_theorem3,
)
from .zyb26 import rejection_cost, _reverse_kl, zyb26_verification_lower

__all__ = [
    "ComparisonRow",
    "Comparison",
    "compare",
]


@dataclass(frozen=True)
class ComparisonRow(Record):
    """One row of :func:`compare`: an exact quantity (kind ``"exact"``) or a bound.

    ``slack`` = bound / exact (1 when they are equal, including 0 = 0 and inf = inf; inf when
    exact = 0 < bound or bound = inf; 0 when exact = inf > bound; None for exact rows);
    ``holds`` is None for exact, asymptotic and reference rows (kind ``"reference"``: a cost
    set beside the exact one for comparison, not a bound on it); ``status`` is the bound's
    :attr:`Bound.status` (``"paper"``, ``"paper, via summary"``, ``"our reading"``,
    ``"derived here"``; ``"exact"`` for exact rows; a speculative sampler's rows carry the
    status docs/theory.md §8 gives them, ``"verified here"`` included).
    """

    name: str
    kind: str
    quantity: str
    value: float
    exact: float | None
    slack: float | None
    holds: bool | None
    source: str = ""
    status: str = ""


@dataclass(frozen=True)
class Comparison(Record):
    """Immutable table returned by :func:`compare`; ``str()`` prints aligned columns."""

    rows: tuple[ComparisonRow, ...]
    plan: Any
    planner: str
    #: the exact output law q the rows were computed from (so callers need not recompute it)
    law: Joint | None = field(default=None, repr=False, compare=False)

    @property
    def kl(self) -> float:
        return self.row("kl").value

    @property
    def path_kl(self) -> float:
        return self.row("path_kl").value

    def row(self, name: str) -> ComparisonRow:
        """The row of that name (``ValueError`` naming the rows there are otherwise)."""
        for r in self.rows:
            if isinstance(name, str) and r.name == name:
                return r
        raise ValueError(f"name: no row {name!r}; the rows are {', '.join(r.name for r in self.rows)}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.rows)

    @property
    def all_hold(self) -> bool:
        """Whether every (non-asymptotic) bound holds."""
        return all(r.holds is not False for r in self.rows)

    def __str__(self) -> str:
        cols = ("name", "kind", "status", "quantity", "value", "exact", "slack", "holds")
        head = cols

        def fmt(x):
            if x is None:
                return "-"
            if isinstance(x, bool):
                return "yes" if x else "NO"
            if isinstance(x, float):
                return f"{x:.6g}"
            return str(x)

        body = [tuple(fmt(getattr(r, f) or None) if f == "status" else fmt(getattr(r, f)) for f in cols) for r in self.rows]
        widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
        lines = ["  ".join(c.ljust(w) if i < 4 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in [head] + body]
        title = f"compare: plan={self.plan!r}, planner={self.planner!r}"
        return "\n".join([title, lines[0], "-" * len(lines[0])] + lines[1:])


def _slack(value: float, exact: float) -> float:
    """bound / exact, defined everywhere: 1 when they are equal (0 = 0 and inf = inf
    included), inf when exact = 0 < bound or bound = inf > exact, 0 when exact = inf > bound."""
    if value == exact:
        return 1.0
    if exact == 0.0 or math.isinf(value):
        return math.inf
    if math.isinf(exact):
        return 0.0
    return value / exact


def _row(bound: Bound, exact: float | None, scale: float) -> ComparisonRow:
    holds = None if exact is None else bound.holds(exact, scale=scale)
    slack = None if exact is None else _slack(bound.value, exact)
    return ComparisonRow(bound.name, bound.kind, bound.bounds, float(bound.value), exact, slack, holds, bound.source, bound.status)


def _planner_name(planner) -> str | None:
    return planner if isinstance(planner, str) else getattr(planner, "name", None)


#: planners whose committed sets get the Fast-dLLM / Fast-dLLM++ rows in :func:`compare`
_STEP_RULES = ("factor", "frechet")
#: those rows: statement name -> the step quantity it is about
_STEP_ROWS = {"fastdllm_greedy": "step_mode_gap", "fastdllm_tv": "step_tv", "fastdllm_kl": "step_kl",
              "fdpp_lemma_a1": "step_joint_correct", "fdpp_theorem41": "step_mode_gap"}


def _step_rows(p: Joint, planner) -> list[ComparisonRow]:
    """One row per statement of :data:`_STEP_ROWS` on the sets the planner commits (every state
    with p(x_A) > 0): the worst case's bound beside its exact value; implications (value 0,
    exact = the smallest mode gap, slack None) hold when every certified set's mode is x*."""
    rows = []
    for c in _statement_checks(p, planner=planner, names=tuple(_STEP_ROWS)):
        if c.cases == 0:
            continue
        slack = None if c.kind == IMPLICATION else _slack(c.bound, c.exact)
        rows.append(ComparisonRow(c.name, c.kind, _STEP_ROWS[c.name], float(c.bound), float(c.exact), slack,
                                  c.holds, c.source, c.status))
    return rows


#: docs/theory.md §8: the status of each speculative statement, by scheme
_SPECULATIVE_STATUS = {
    "assd": {"exact": "verified here", "calls": "our reading"},
    "self_speculative": {"exact": "our reading", "calls": "our reading"},
}
_SPECULATIVE_SOURCE = {
    "assd": "Guo & Ermon, arXiv 2504.20456 (abstract); code gabeguo/any-order-speculative-decoding@83a444d",
    "self_speculative": "Campbell et al., arXiv 2510.03929 (abstract and opening)",
}


def _speculative_rows(p: Joint, sampler, scale: float):
    """The exact law of a :class:`~mdmtheory.samplers.SpeculativeSampler` and its rows
    (docs/theory.md §8): exactness (KL = 0), the expected and largest number of model calls,
    calls <= d (the abstract's "upper bounded by the number of tokens"), and the rejection
    sampler's expected proposals E[M] >= e^TC (Zhang et al., :func:`rejection_cost`) beside the
    expected calls."""
    from ..samplers.speculative import speculative_run  # deferred, as compare's exact_run

    run = speculative_run(p, sampler)
    kl_exact = _kl(p, run.law)
    status, source = _SPECULATIVE_STATUS[sampler.scheme], _SPECULATIVE_SOURCE[sampler.scheme]
    exact_b = Bound("speculative_exact", 0.0, "kl", source, "KL(p||q) = 0: speculation samples the joint exactly")
    calls = "model calls (nfe_count)" if sampler.scheme == "assd" else "forward passes (one per iteration)"
    ef, mf, d = float(run.expected_forwards), float(run.max_forwards), float(p.d)
    em = float(rejection_cost(p))
    rows = [
        ComparisonRow("expected_forwards", "exact", "forwards", ef, None, None, None,
                      f"E[{calls}] (samplers.speculative_run)", "exact"),
        ComparisonRow("max_forwards", "exact", "forwards", mf, None, None, None,
                      f"largest count of {calls} with positive probability", "exact"),
        ComparisonRow("speculative_exact", "upper", "kl", 0.0, kl_exact, None,
                      exact_b.holds(kl_exact, scale=scale), source, status["exact"]),
        ComparisonRow("speculative_calls_le_d", "upper", "max_forwards", d, mf, _slack(d, mf), d >= mf,
                      source + ": calls <= tokens (d)", status["calls"]),
        ComparisonRow("rejection_vs_speculative", "reference", "expected_forwards", em, ef, _slack(em, ef), None,
                      "rejection from the product of marginals: E[M] proposals (Zhang et al.; >= e^TC)",
                      "verified here"),
    ]
    return run.law, kl_exact, rows


def _law_rows(p: Joint, scale: float) -> list[ComparisonRow]:
    """The rows about the law alone: H(0,1) <= min(TC, DTC), the DHW26 sandwich and bounds, ZYB26."""
    prof = as_profile(p)
    H01 = _ugc(prof, 0.0, 1.0)
    dhw = effective_total_correlation(prof)
    lo, hi = dhw_sandwich(prof)
    return [_row(ugc_total_bound(prof), H01, scale), _row(lo, dhw, scale), _row(hi, dhw, scale),
            _row(dhw_tc_bound(prof), dhw, scale), _row(dhw26_dimension_bound(p), dhw, scale),
            _row(zyb26_verification_lower(p), rejection_cost(p), scale)]


_FENG = "Feng et al., arXiv 2502.09622 (our reading of TER/SER; bounds.feng25)"

#: DUEL rows walk every sequence: laws with at most this many (K**d)
DUEL_MAX_SEQUENCES = 64
_DUEL = ("DUEL, Turok, De Sa & Kuleshov, arXiv 2603.01367 (abstract; giladturok/duel-code@0afae1c "
         "exact_likelihood.py): log q(x) = sum of log p(x_j | x_A) along the planner's path")


def _duel_rows(p: Joint, plan, planner, kl_exact: float, tie_mass: float, scale: float) -> list[ComparisonRow]:
    """DUEL's likelihood as an identity: its NLL minus H(p) against the exact KL, for planners
    deterministic given x_A (:mod:`mdmtheory.samplers.likelihood`). A planner with
    ``ties="random"`` that split a tie is scored under the fixed lowest-index rule (DUEL's code
    uses torch.topk's; "lowest" needs no torch): the row then describes another sampler (holds
    None, name ``duel_likelihood_lowest``)."""
    import dataclasses

    from ..samplers.adaptive import _Deterministic
    from ..samplers.likelihood import duel_nll
    from ..samplers.planners import resolve_planner

    obj = resolve_planner(planner)
    if not isinstance(obj, _Deterministic) or isinstance(plan, Grid) or p.K ** p.d > DUEL_MAX_SEQUENCES:
        return []
    split = getattr(obj, "ties", None) == "random" and tie_mass > 0
    if getattr(obj, "ties", None) == "random":
        obj = dataclasses.replace(obj, ties="lowest")
    t = p.table[p.table > 0]
    value = duel_nll(p, obj, plan) + float(np.sum(t * np.log(t)))
    holds = None if split else bool(abs(value - kl_exact) <= HOLD_RTOL * max(abs(value), abs(kl_exact), scale))
    return [ComparisonRow("duel_likelihood_lowest" if split else "duel_likelihood", "identity", "kl", value, kl_exact,
                          _slack(value, kl_exact), holds, _DUEL, OUR_READING)]
#: largest table (entries) for which compare lists IMDM's row (its enumeration of states and sets)
_IMDM_MAX_TABLE = 1 << 20


def _demask_rows(p: Joint, planner) -> list[ComparisonRow]:
    """DEMASK's Theorem 1 on the sets the rule commits (under its assumption, and without it):
    the worst case's TV beside τ (:func:`~mdmtheory.bounds.demask.demask_checks`)."""
    rows = []
    for c in _demask_checks(p, planner=planner, names=("demask_theorem1", "demask_tv_budget")):
        if c.cases:
            rows.append(ComparisonRow(c.name, c.kind, "step_tv", float(c.bound), float(c.exact),
                                      _slack(c.bound, c.exact), c.holds, c.source, c.status))
    return rows


def compare(p, plan, planner: str = "random") -> Comparison:
    r"""Exact KL, path KL and every applicable bound for one law and one plan.

    Parameters
    ----------
    p : :class:`~mdmtheory.Joint` (the exact output law needs the table).
    plan : :class:`Schedule` (fixed-cardinality sampler) or :class:`Grid` (Bernoulli-subset).
    planner : planner name or object for the exact engine; the published bounds are for
        the random planner (``"random"``; a Grid always uses the Bernoulli sampler). For
        other planners only the exact rows and data processing are reported.

    Rows: ``kl`` = KL(p‖q) of the output law (:func:`mdmtheory.sampler_law`), ``path_kl``
    (trajectory KL, :func:`mdmtheory.exact_run`), then each bound with its value, the exact
    quantity it bounds, slack = bound/exact and whether it holds within
    ``HOLD_RTOL * max(|bound|, |exact|, d log K)`` (d log K, the largest possible
    :math:`\sum_i H(X_i)`, is the problem's scale: KL and entropies carry absolute rounding
    errors ~1e-16 even for nearly deterministic laws, so rounding of a zero quantity is not
    a violation). Each row carries the bound's status (``paper``, ``paper, via summary``,
    ``our reading``, ``derived here``), printed in the table.

    Schedule rows: data processing, Riemann, LC25 Theorem 1, W26 Theorem 1 (card), and
    (k_max >= 2) *our reading* of the LC25 lower bound, whose exact column is the worst path
    KL over all schedules with this plan's k_max (:func:`worst_path_kl`), not this plan's,
    and (d <= 8) PB25's conditional-TC bound minimized over partitions with the plan's sizes
    (:func:`pb25_schedule_lower`, against the path KL). Schedule with the ``left_to_right``
    planner: PB25's bound for its fixed partition (:func:`pb25_partition_lower`, an
    equality with the exact conditionals).
    Grid rows: data processing, W26 Theorem 1, Corollary 1 (geometric grids), and on the
    single block [t_0, t_N]: W26 Proposition 1's (28c) (exact column: the minimum of the
    block objective, :func:`w26_block_objective_min`), the lower bound on the optimal
    error derived here (:func:`optimal_grid_error_lower`, checked against this grid:
    necessary, not sufficient), Theorem 3 (asymptotic, no verdict). Law rows: H(0,1) <=
    min(TC, DTC), the DHW26 sandwich, DHW <= min(TC, DTC), DHW <= d log K (DHW26's
    abstract) and our reading of ZYB26's verification cost (:func:`zyb26_verification_lower`
    against :func:`rejection_cost`). Step rows (planner a :class:`~mdmtheory.samplers.FactorPlanner`
    or :class:`~mdmtheory.samplers.FrechetPlanner`, d <= 8; ``plan=None`` is then accepted): on
    the set the rule commits at every state, Fast-dLLM Theorem 1 (greedy agreement, TV, KL) and
    Fast-dLLM++ Lemma A.1 and Theorem 4.1 (:func:`~mdmtheory.bounds.fastdllm.statement_checks`),
    each with the worst case's bound and exact value; the greedy statements are of kind
    ``"implication"`` (value 0, exact the smallest mode gap among the certified sets, slack None),
    listed only when some committed set meets their hypothesis. Speculative rows (planner a
    :class:`~mdmtheory.samplers.SpeculativeSampler`, ``plan=None``; docs/theory.md §8): the exact
    rows ``kl`` and ``reverse_kl`` of its output law, ``expected_forwards`` and ``max_forwards``
    (model calls as the scheme counts them), ``speculative_exact`` (KL = 0, within the tolerance
    above; slack None: the bound is 0), ``speculative_calls_le_d`` (largest count <= d; fails
    for ASSD at window 1, 2d − 1 calls) and ``rejection_vs_speculative`` (kind ``"reference"``: the rejection sampler's
    E[M] proposals, :func:`rejection_cost`, beside the expected calls; slack = their ratio),
    then the law rows; no ``path_kl`` (a speculative run reveals a random number of positions
    per iteration, chosen by the values: no fixed-set reference path to compare with) and so
    no data processing row. Grid rows also carry JYS's KLUB
    (:func:`~mdmtheory.bounds.jys.jys_klub`, Girsanov and code forms, against the path KL); a
    planner deterministic given x_A (fixed order or scored, K**d <= 64: the row walks every sequence) carries DUEL's
    likelihood (row ``duel_likelihood``, kind ``"identity"``: its expected NLL minus H(p)
    against the exact KL; under ``ties="random"`` with a split tie ``duel_likelihood_lowest``,
    holds None: a fixed tie rule scores another sampler). Every plan also carries two exact rows
    of Feng et al.'s rates (our reading, :mod:`~mdmtheory.bounds.feng25`): ``token_error_rate``
    (excess per-token log-perplexity of the output law; inf when it puts mass off p's support)
    and ``sequence_error_rate`` (its mass off p's support, lost runs included). Planner a
    :class:`~mdmtheory.samplers.DemaskPlanner` (d <= 8): DEMASK's Theorem 1 on its committed sets
    (``demask_theorem1``, under the sub-additivity assumption; ``demask_tv_budget``, without it:
    fails on parity), the worst TV beside τ. Schedule with the random planner (d <= 8, at most 2^20 table
    entries, a step of >= 2): our reading of IMDM's factorization-error lower bound (:func:`~mdmtheory.bounds.imdm.imdm_lower`,
    against the path KL). Entropy-sum rows (planner an
    :class:`~mdmtheory.samplers.EntropyBudgetPlanner`, Cai & Li's rule, ``plan=None``):
    :func:`~mdmtheory.bounds.cl26.cl26_bounds`, (D1) path KL <= τ E_p[T] and (D2) E_p[T] <= 1 +
    (d − 1)H/τ, derived here, against the exact path KL and data-path E_p[T]. The exact row ``reverse_kl`` is KL(q‖p) of the output
    law (inf when q puts mass off p's support). ZC26's rates (:func:`zc26_rates`) are for
    random-size schedules, a plan kind compare does not take yet, so they are not listed.
    """
    from ..samplers import exact_run  # deferred: samplers imports divergence, which imports ugc

    if not isinstance(p, Joint):
        raise ValueError(f"p: compare needs a mdmtheory.Joint (exact output law), got {type(p).__name__}")
    from ..samplers.speculative import SpeculativeSampler

    if isinstance(planner, SpeculativeSampler):
        if plan is not None:
            raise ValueError(f"plan: a SpeculativeSampler carries no plan (its window sets what it drafts); pass "
                             f"plan=None, got {type(plan).__name__}")
        scale = p.d * math.log(p.K)
        law, kl_exact, spec = _speculative_rows(p, planner, scale)
        rkl, _ = _reverse_kl(p, law)
        rows = [
            ComparisonRow("kl", "exact", "kl", kl_exact, None, None, None, "exact output law (samplers.speculative_run)",
                          "exact"),
            ComparisonRow("reverse_kl", "exact", "reverse_kl", rkl, None, None, None,
                          "KL(q||p) of the output law (inf off p's support; ZYB26 claim (2))", "exact"),
            *spec,
        ]
        rows += _law_rows(p, scale)
        return Comparison(rows=tuple(rows), plan=None, planner=repr(planner), law=law)
    self_sized = plan is None and not isinstance(planner, str) and getattr(planner, "needs_schedule", True) is False
    if not (isinstance(plan, (Schedule, Grid)) or self_sized):
        raise ValueError(f"plan: expected a mdmtheory.Schedule or Grid (None only with a planner that chooses its own "
                         f"sizes, e.g. FactorPlanner), got {type(plan).__name__}")
    run = exact_run(p, plan, planner, trajectory=True)
    kl_exact = _kl(p, run.law)
    path = float(run.path_kl)
    prof = as_profile(p)
    scale = p.d * math.log(p.K)
    rkl, _ = _reverse_kl(p, run.law)
    rows = [
        ComparisonRow("kl", "exact", "kl", kl_exact, None, None, None, "exact output law (mdmtheory.sampler_law)", "exact"),
        ComparisonRow("path_kl", "exact", "path_kl", path, None, None, None, "trajectory KL (mdmtheory.exact_run)", "exact"),
        ComparisonRow("reverse_kl", "exact", "reverse_kl", rkl, None, None, None,
                      "KL(q||p) of the output law (inf off p's support; ZYB26 claim (2))", "exact"),
        ComparisonRow("token_error_rate", "exact", "ter", token_error_rate(p, run.law), None, None, None,
                      _FENG + ": excess per-token log-perplexity of the output law", "exact"),
        ComparisonRow("sequence_error_rate", "exact", "ser", sequence_error_rate(p, run.law), None, None, None,
                      _FENG + ": mass of the output law off p's support (lost runs included)", "exact"),
    ]
    dp = Bound(
        "data_processing", path, "kl", "data processing inequality (proofs/kl_le_path_kl.md)", "KL(p||q) <= KL_path", status=DERIVED
    )
    rows.append(_row(dp, kl_exact, scale))
    is_random = _planner_name(planner) == "random"
    exact_of = {"path_kl": path, "kl": kl_exact}
    if isinstance(plan, Schedule) and is_random:
        for b in (riemann_bound(prof, plan), lc25_bound(prof, plan), w26_theorem1_card(prof, plan)):
            rows.append(_row(b, exact_of[b.bounds], scale))
        s = plan.max_size
        if s >= 2:
            rows.append(_row(lc25_lower_our_reading(prof, s), worst_path_kl(prof, s), scale))
        if p.d <= _PB25_MAX_D:
            rows.append(_row(pb25_schedule_lower(p, plan), path, scale))
    elif isinstance(plan, Schedule) and _planner_name(planner) == "left_to_right":
        cuts = [tuple(range(s0, s0 + k)) for s0, k in zip(plan.starts, plan.sizes)]
        rows.append(_row(pb25_partition_lower(p, cuts), kl_exact, scale))
    elif isinstance(plan, Grid):
        rows.append(_row(w26_theorem1(prof, plan), path, scale))
        rows.append(_row(jys_klub(prof, plan), path, scale))
        rows.append(_row(jys_klub(prof, plan, form="code"), path, scale))
        t0, tN, N = plan.times[0], plan.times[-1], plan.steps
        if _is_geometric(plan) and N >= float(log_odds(tN) - log_odds(t0)):
            rows.append(_row(w26_corollary1(prof, plan), path, scale))
        if 0.0 < t0 and tN < 1.0:
            block = (t0, tN)
            rows.append(_row(w26_proposition1_dp_lower(prof, block, N), w26_block_objective_min(prof, block, N).value, scale))
            rows.append(_row(optimal_grid_error_lower(prof, block, N), path, scale))
            rows.append(_row(w26_theorem3(prof, N, start=t0, stop=tN), None, scale))
    rows += _law_rows(p, scale)
    if _planner_name(planner) in _STEP_RULES and p.d <= 8:
        rows += _step_rows(p, planner)
    rows += _duel_rows(p, plan, planner, kl_exact, run.tie_mass, scale)
    if _planner_name(planner) == "demask" and p.d <= 8:
        rows += _demask_rows(p, planner)
    if isinstance(plan, Schedule) and is_random and p.d <= 8 and p.table.size <= _IMDM_MAX_TABLE and plan.max_size >= 2:
        rows.append(_row(imdm_lower(p, plan), path, scale))
    if _planner_name(planner) == "entropy_budget" and plan is None and p.d <= _CL26_MAX_D:
        rows += [_row(b, exact, scale) for b, exact in cl26_bounds(p, planner)]
    return Comparison(rows=tuple(rows), plan=plan, planner=planner if isinstance(planner, str) else repr(planner),
                      law=run.law)
