"""mdmtheory: exact, symbolic and Monte Carlo verification of masked diffusion theory.

Public API (DESIGN.md §4). Modules: joint, families, entropy, profile, schedules,
samplers, divergence, ugc, bounds.
"""

from . import families
from .divergence import kl, path_kl, step_path_kl
from .entropy import (
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
from .profile import Profile, information_profile
from .samplers import ExactRun, exact_run, sampler_law
from .schedules import Grid, Schedule

__version__ = "0.1.0"

__all__ = [
    "families",
    "Joint",
    "Profile",
    "Schedule",
    "Grid",
    "ExactRun",
    "information_profile",
    "subset_entropies",
    "entropy",
    "entropy_coefficients",
    "total_correlation",
    "dual_total_correlation",
    "sum_of_entropies",
    "sum_mutual_information",
    "tse_complexity",
    "card_gain_coefficients",
    "sampler_law",
    "exact_run",
    "kl",
    "path_kl",
    "step_path_kl",
]
