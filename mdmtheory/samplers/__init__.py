"""Samplers: planners, the exact law engine and Monte Carlo simulation."""

from .adaptive import (
    ConfidencePlanner,
    DilatedPlanner,
    EntropyBudgetPlanner,
    EntropyPlanner,
    LeftToRightPlanner,
    MarginPlanner,
    PositionCalibratedPlanner,
    SemiAutoregressivePlanner,
    ThresholdPlanner,
    background_frequency,
    dilated_levels,
    llada_step_sizes,
)
from .engine import ExactRun, exact_run, sampler_kl, sampler_law
from .planners import (
    PLANNERS,
    BernoulliPlanner,
    Planner,
    RandomPlanner,
    StepContext,
    register_planner,
    resolve_planner,
)
from .revise import CorrectorSampler, EditingSampler, RemaskingSampler, RevisionRun, revise_run
from .select import SampleThenSelectPlanner, SelectionBias, SelectRun, select_run, selection_bias
from .spread import TieSpread, runs_by_ties, tie_spread
from .simulate import KLEstimate, Simulation, estimate_kl, simulate

register_planner("sample_then_select", SampleThenSelectPlanner)

__all__ = [
    "ExactRun",
    "exact_run",
    "sampler_law",
    "sampler_kl",
    "TieSpread",
    "tie_spread",
    "runs_by_ties",
    "PLANNERS",
    "BernoulliPlanner",
    "Planner",
    "RandomPlanner",
    "StepContext",
    "register_planner",
    "resolve_planner",
    "LeftToRightPlanner",
    "ConfidencePlanner",
    "MarginPlanner",
    "EntropyPlanner",
    "SemiAutoregressivePlanner",
    "ThresholdPlanner",
    "EntropyBudgetPlanner",
    "DilatedPlanner",
    "PositionCalibratedPlanner",
    "llada_step_sizes",
    "dilated_levels",
    "background_frequency",
    "Simulation",
    "KLEstimate",
    "simulate",
    "estimate_kl",
    "SampleThenSelectPlanner",
    "SelectRun",
    "select_run",
    "SelectionBias",
    "selection_bias",
    "RemaskingSampler",
    "CorrectorSampler",
    "EditingSampler",
    "RevisionRun",
    "revise_run",
]
