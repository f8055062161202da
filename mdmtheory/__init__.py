"""mdmtheory: exact, symbolic and Monte Carlo verification of masked diffusion theory.

Top level: the public API of docs/design.md §4 and the names most users need. Submodules hold
the rest (``mt.ugc``, ``mt.bounds``, ``mt.optimal``, ``mt.schedules``, ``mt.samplers``,
``mt.diagnostics``, ``mt.structured``, ``mt.dyadic``); ``mt.symbolic`` (sympy),
``mt.tightness`` and ``mt.testing`` (hypothesis, a test extra) load on first use.
"""

import importlib

from . import blocks, random_sizes, bounds, diagnostics, dyadic, families, optimal, prompted, samplers, schedules, structured, ugc
from .bounds import Bound, compare
from .certificate import Certificate, certify
from .certificate_blocks import BlockCertificate, certify_blocks
from .divergence import kl, off_support_mass, path_kl, reverse_kl, step_path_kl, tv
from .random_sizes import RandomSchedule
from .entropies import (
    card_gain_coefficients,
    dual_total_correlation,
    entropy,
    entropy_coefficients,
    subset_entropies,
    sum_mutual_information,
    sum_of_entropies,
    total_correlation,
    tse_complexity,
)
from .joint import Joint
from .optimal import optimal_grid, optimal_schedule, pareto_frontier
from .profile import Profile, information_profile
from .prompted import prompted_kl
from .samplers import (
    ConfidencePlanner,
    DilatedPlanner,
    EntropyBudgetPlanner,
    EntropyPlanner,
    ExactRun,
    LeftToRightPlanner,
    MarginPlanner,
    PositionCalibratedPlanner,
    RandomPlanner,
    SemiAutoregressivePlanner,
    ThresholdPlanner,
    estimate_kl,
    exact_run,
    register_planner,
    sampler_kl,
    sampler_law,
    simulate,
)
from .schedules import Grid, Schedule

__version__ = "0.1.0"

_LAZY = ("symbolic", "tightness", "testing")


def __getattr__(name):
    if name in _LAZY:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'mdmtheory' has no attribute {name!r}")


__all__ = [
    # submodules
    "blocks",
    "bounds",
    "diagnostics",
    "dyadic",
    "families",
    "optimal",
    "prompted",
    "samplers",
    "schedules",
    "structured",
    "ugc",
    # records
    "Joint",
    "Profile",
    "Schedule",
    "Grid",
    "ExactRun",
    "Bound",
    "Certificate",
    # entropies and the profile
    "subset_entropies",
    "entropy",
    "entropy_coefficients",
    "total_correlation",
    "dual_total_correlation",
    "sum_of_entropies",
    "sum_mutual_information",
    "tse_complexity",
    "card_gain_coefficients",
    "information_profile",
    # samplers
    "sampler_law",
    "sampler_kl",
    "exact_run",
    "simulate",
    "estimate_kl",
    "register_planner",
    "RandomPlanner",
    "LeftToRightPlanner",
    "ConfidencePlanner",
    "MarginPlanner",
    "EntropyPlanner",
    "SemiAutoregressivePlanner",
    "ThresholdPlanner",
    "EntropyBudgetPlanner",
    "DilatedPlanner",
    "PositionCalibratedPlanner",
    # divergences, bounds, schedules
    "kl",
    "reverse_kl",
    "RandomSchedule",
    "off_support_mass",
    "tv",
    "path_kl",
    "step_path_kl",
    "prompted_kl",
    "compare",
    "optimal_schedule",
    "pareto_frontier",
    "optimal_grid",
    "certify",
    "certify_blocks",
    "BlockCertificate",
]
