r"""Bounds on the factorization error, one function each, with their source and status;
one module per source.

Every function returns a :class:`Bound`: its value (nats), the quantity it bounds, its
kind (``"upper"``: value >= quantity; ``"lower"``: value <= quantity; ``"asymptotic"``:
an asymptotic value, not an inequality), its **status** — ``"paper"`` (the statement as
the cited paper gives it), ``"paper, via summary"`` (a paper's statement known to us only
from third-party summaries), ``"our reading"`` (our interpretation of an ambiguous
statement: a conjecture checked here, never reported as the paper's result) or
``"derived here"`` (proved in ``proofs/`` or in the docstring) — and metadata (source
paper with section/equation, assumptions), so that a table can show it beside the exact
value. Every formula, its source and its status: docs/theory.md.

:func:`compare` evaluates, for a joint law and a plan (schedule or grid), the exact KL of
the output law, the path KL and every applicable bound, in one table.

Modules (docs/design.md §8): :mod:`._core` (the :class:`Bound` record, kinds, statuses,
helpers), :mod:`.lc25` (LC25 = Li & Cai, arXiv 2505.21400), :mod:`.w26` (W26 =
Wainwright, arXiv 2608.13520, read in full; places: docs/theory.md), :mod:`.dhw26`
(DHW26 = Dmitriev, Huang & Wei, arXiv 2602.15008, effective total correlation), :mod:`.zc26`
(ZC26 = Zhao & Cai, arXiv 2602.20126, randomized sizes), :mod:`.pb25` (PB25 = Kang et al.,
ParallelBench, arXiv 2510.04767, read in full; conditional total correlation), :mod:`.zyb26` (ZYB26 =
Zhang et al., arXiv 2602.00286, reverse KL and verification cost), :mod:`.derived` (bounds
derived here, among them the Riemann bound built on LZ25/CCL25's profile identity) and
:mod:`.comparison` (the table, :func:`compare`); :mod:`.tightness` (the largest exact/bound
ratio found by search, JAX; loaded on first use).
"""

import importlib as _importlib

# private names re-exported for the package's own tests and tightness targets
# (_slack, _bernstein_min, _geo_grid, _is_geometric): they moved, they did not change
from ._core import (
    ASYMPTOTIC,
    DERIVED,
    HOLD_RTOL,
    LOWER,
    OUR_READING,
    PAPER,
    STATUSES,
    SUMMARY,
    UPPER,
    Bound,
    _geo_grid,
    _is_geometric,
)
from .comparison import Comparison, ComparisonRow, _slack, compare
from .derived import _bernstein_min, optimal_grid_error_lower, riemann_bound
from .dhw26 import dhw26_dimension_bound, dhw_sandwich, dhw_tc_bound
from .lc25 import lc25_bound, lc25_lower_our_reading, worst_path_kl
from .pb25 import (
    conditional_total_correlation,
    pb25_input_dependent_lower,
    pb25_optimal_lower,
    pb25_partition_lower,
    pb25_schedule_lower,
)
from .w26 import (
    BlockAllocation,
    ugc_total_bound,
    w26_block_objective_min,
    w26_corollary1,
    w26_lemma4,
    w26_lemma5,
    w26_proposition1,
    w26_proposition1_dp_lower,
    w26_theorem1,
    w26_theorem1_card,
    w26_theorem3,
)
from .zc26 import ZC26Check, zc26_check, zc26_rates
from .zyb26 import rejection_cost, zyb26_verification_lower

__all__ = [
    "Bound",
    "UPPER",
    "LOWER",
    "ASYMPTOTIC",
    "PAPER",
    "SUMMARY",
    "OUR_READING",
    "DERIVED",
    "STATUSES",
    "riemann_bound",
    "lc25_bound",
    "worst_path_kl",
    "lc25_lower_our_reading",
    "w26_lemma4",
    "w26_lemma5",
    "w26_theorem1",
    "w26_theorem1_card",
    "w26_corollary1",
    "w26_proposition1",
    "BlockAllocation",
    "w26_block_objective_min",
    "w26_proposition1_dp_lower",
    "optimal_grid_error_lower",
    "w26_theorem3",
    "ugc_total_bound",
    "dhw_sandwich",
    "dhw_tc_bound",
    "dhw26_dimension_bound",
    "zc26_rates",
    "zc26_check",
    "ZC26Check",
    "conditional_total_correlation",
    "pb25_partition_lower",
    "pb25_schedule_lower",
    "pb25_optimal_lower",
    "pb25_input_dependent_lower",
    "rejection_cost",
    "zyb26_verification_lower",
    "ComparisonRow",
    "Comparison",
    "compare",
    "HOLD_RTOL",
]


def __getattr__(name):
    if name == "tightness":
        return _importlib.import_module(".tightness", __name__)
    raise AttributeError(f"module 'mdmtheory.bounds' has no attribute {name!r}")
