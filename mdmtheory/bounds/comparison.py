r""":func:`compare`: for one law and one plan, the exact KL of the output law, the path KL and
every applicable bound, in one table (:class:`Comparison` of :class:`ComparisonRow`).
(The module is ``comparison``, not ``compare``, so that ``mdmtheory.bounds.compare`` stays
the function.) The bounds are not named here: each paper module registers its rows
(:mod:`.registry`; docs/design.md, "How to add a bound")."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import Any

from .._estimate import Record
from ..information.divergence import kl as _kl, reverse_kl as _reverse_kl
from ..information.profile import as_profile
from ..laws.joint import Joint
from ..samplers.base import as_sampler
from ..schedules.plans import Grid, Schedule
from .feng25 import sequence_error_rate, token_error_rate
from .registry import _slack, REGISTERED, CompareContext, ComparisonRow  # noqa: F401 (_slack: old home)

__all__ = [
    "ComparisonRow",
    "Comparison",
    "compare",
    "compare_context",
]


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


_FENG = "Feng et al., arXiv 2502.09622 (our reading of TER/SER; bounds.feng25)"
_SAMPLER_LAW = "exact output law (mdmtheory.sampler_law)"


def _exact_rows(ctx: CompareContext) -> list[ComparisonRow]:
    """KL, the path KL (where the sampler has one), the reverse KL and, for the planners of
    positions, Feng et al.'s two rates of the output law."""
    def exact(name, quantity, value, source):
        return ComparisonRow(name, "exact", quantity, value, None, None, None, source, "exact")

    q, cap = ctx.run.law, ctx.capabilities
    # a sampler running its own chain: its run function (samplers.speculative_run), else its exact_run
    mod = type(ctx.sampler).__module__
    fn = f"{mod.rsplit('.', 1)[-1]}_run"
    run_name = f"samplers.{fn}" if hasattr(sys.modules.get(mod), fn) else f"{type(ctx.sampler).__name__}.exact_run"
    rows = [exact("kl", "kl", ctx.kl_exact, _SAMPLER_LAW if cap.positions else f"exact output law ({run_name})")]
    if ctx.path_kl is not None:
        rows.append(exact("path_kl", "path_kl", ctx.path_kl, "trajectory KL (mdmtheory.exact_run)"))
    rows.append(exact("reverse_kl", "reverse_kl", _reverse_kl(ctx.p, q, lost="outcome"),
                      "KL(q||p) of the output law (inf off p's support; ZYB26 claim (2))"))
    if cap.positions:
        rows += [exact("token_error_rate", "ter", token_error_rate(ctx.p, q),
                       _FENG + ": excess per-token log-perplexity of the output law"),
                 exact("sequence_error_rate", "ser", sequence_error_rate(ctx.p, q),
                       _FENG + ": mass of the output law off p's support (lost runs included)")]
    return rows


def compare(p, plan, planner="random") -> Comparison:
    r"""Exact KL, path KL and every applicable bound for one law and one plan.

    Parameters
    ----------
    p : :class:`~mdmtheory.Joint` (the exact output law needs the table).
    plan : :class:`Schedule` (fixed-cardinality sampler), :class:`Grid` (Bernoulli-subset), or
        None for a sampler that chooses its own sizes or carries its plan.
    planner : planner name or sampler, resolved once (:func:`~mdmtheory.samplers.base.as_sampler`).

    Rows: the exact rows ``kl`` (KL(p‖q) of the output law), ``path_kl`` (trajectory KL, where
    the sampler has one), ``reverse_kl`` (KL(q‖p), inf when q puts mass off p's support) and,
    for the planners of positions, Feng et al.'s ``token_error_rate`` and
    ``sequence_error_rate`` (:mod:`~mdmtheory.bounds.feng25`); then every registered family
    whose condition holds (:data:`~mdmtheory.bounds.registry.REGISTERED`, in its order): each
    bound with its value, the exact quantity it bounds, slack = bound/exact and whether it
    holds within ``HOLD_RTOL * max(|bound|, |exact|, d log K)`` (d log K, the largest possible
    :math:`\sum_i H(X_i)`, is the problem's scale: KL and entropies carry absolute rounding
    errors ~1e-16 even for nearly deterministic laws, so rounding of a zero quantity is not a
    violation), and its status (``paper``, ``paper, via summary``, ``our reading``, ``derived
    here``). The families, by module: data processing (:mod:`.derived`, where there is a path
    KL); a random order on a Schedule: Riemann (:mod:`.derived`), LC25 Theorem 1 and (k_max >=
    2) our reading of its lower bound against the worst path KL (:mod:`.lc25`), W26 Theorem 1
    (card) (:mod:`.w26`), PB25's conditional-TC bound (d <= 8, :mod:`.pb25`), IMDM (d <= 8,
    :mod:`.imdm`); left to right (``order="prefix"``) on a Schedule: PB25's fixed partition; a
    Grid: W26 Theorem 1, Corollary 1 (geometric grids), Proposition 1 (28c), Theorem 3
    (asymptotic) (:mod:`.w26`), JYS's KLUB (:mod:`.jys`), the optimal-grid lower bound
    (:mod:`.derived`); the law alone: H(0,1) <= min(TC, DTC) (:mod:`.w26`), DHW26
    (:mod:`.dhw26`), ZYB26's verification cost (:mod:`.zyb26`); one rule's own rows: the
    Factor and Fréchet rules (:mod:`.fastdllm`), DUEL's likelihood for the planners
    deterministic given x_A (:mod:`.duel`), DEMASK (:mod:`.demask`), the entropy-sum rule
    (:mod:`.cl26`), a speculative sampler (:mod:`.speculative`; it has no path KL and so no
    data processing row). docs/theory.md gives each formula, its source and its status.
    ZC26's rates (:func:`zc26_rates`) are for random-size schedules, a plan kind compare does
    not take yet, so they are not listed.
    """
    ctx = compare_context(p, plan, planner)
    rows = _exact_rows(ctx)
    for family in REGISTERED:
        if family.applies(ctx):
            rows += family.rows(ctx)
    return Comparison(rows=tuple(rows), plan=plan, planner=planner if isinstance(planner, str) else repr(planner),
                      law=ctx.run.law)


def compare_context(p, plan, planner="random") -> CompareContext:
    """The context :func:`compare` hands every registered row family: the sampler resolved once
    (:func:`~mdmtheory.samplers.base.as_sampler`), its plan checked, its exact run (with the
    trajectory KL where it has one), KL(p‖q), the profile and the scale. A new bound's rows can
    be tried on it directly (docs/design.md, "How to add a bound")."""
    if not isinstance(p, Joint):
        raise ValueError(f"p: compare needs a mdmtheory.Joint (exact output law), got {type(p).__name__}")
    sampler = as_sampler(planner)
    cap = sampler.capabilities
    if cap.positions and not (isinstance(plan, (Schedule, Grid)) or (plan is None and cap.own_sizes)):
        raise ValueError(f"plan: expected a mdmtheory.Schedule or Grid (None only with a planner that chooses its own "
                         f"sizes, e.g. FactorPlanner), got {type(plan).__name__}")
    if not cap.positions and plan is not None and cap.carried_plan is None:
        raise ValueError(f"plan: a {type(sampler).__name__} carries no plan (it chooses what each step reveals); "
                         f"pass plan=None, got {type(plan).__name__}")
    run = sampler.exact_run(p, plan, trajectory=cap.path_kl)
    return CompareContext(p=p, plan=plan, sampler=sampler, capabilities=cap, run=run, kl_exact=_kl(p, run.law),
                          path_kl=None if run.path_kl is None else float(run.path_kl), profile=as_profile(p),
                          scale=p.d * math.log(p.K))
