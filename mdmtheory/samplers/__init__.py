"""Samplers: planners, the exact law engine and (later) Monte Carlo simulation."""

from .engine import ExactRun, exact_run, sampler_law
from .planners import (
    PLANNERS,
    BernoulliPlanner,
    Planner,
    RandomPlanner,
    StepContext,
    register_planner,
    resolve_planner,
)

__all__ = [
    "ExactRun",
    "exact_run",
    "sampler_law",
    "PLANNERS",
    "BernoulliPlanner",
    "Planner",
    "RandomPlanner",
    "StepContext",
    "register_planner",
    "resolve_planner",
]
