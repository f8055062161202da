"""mdmtheory: exact, symbolic and Monte Carlo verification of masked diffusion theory.

The top level holds the records and verbs a user starts from; everything else lives in its
wing (docs/design.md, "Layout"), each wing importing only the wings below it:

* :mod:`~mdmtheory.laws` (joint tables, families, oracles, prompts) and
  :mod:`~mdmtheory.schedules` (plans and their families);
* :mod:`~mdmtheory.information` (entropies, the profile, UGC, dyadic, divergences) and
  :mod:`~mdmtheory.exports` (a plan in each sampler's conventions, adapters);
* :mod:`~mdmtheory.data` (token data) and :mod:`~mdmtheory.samplers` (exact laws, Monte Carlo);
* :mod:`~mdmtheory.bounds` (every published bound) and :mod:`~mdmtheory.optimal` (best plans);
* :mod:`mdmtheory.bridge` (torch models; ``import mdmtheory.bridge``, extra ``bridge``);
* :mod:`~mdmtheory.design` (plans from data, certificates) and :mod:`~mdmtheory.report`;
* :mod:`mdmtheory.cli` (the ``mdmtheory`` command).

``mt.symbolic`` (sympy) and ``mt.testing`` (hypothesis strategies, a test extra) load on first
use. Old import paths work for one release with a DeprecationWarning (:mod:`._moved`).
"""

import importlib as _importlib

from . import _moved
from ._estimate import Estimate
from . import bounds, data, design, exports, information, laws, optimal, report, samplers, schedules
from .bounds import Bound, compare
from .design import Certificate, certify
from .information import entropy, information_profile, kl, path_kl, tv
from .laws import Joint, families
from .information import Profile
from .optimal import optimal_grid, optimal_schedule, pareto_frontier
from .samplers import ExactRun, estimate_kl, exact_run, sampler_kl, sampler_law, simulate
from .schedules import BlockPlan, Grid, RandomSchedule, Schedule

_moved.install()

__version__ = "0.1.0"

_LAZY = ("symbolic", "testing")


def __getattr__(name):
    if name in _LAZY:
        return _importlib.import_module(f".{name}", __name__)
    return _moved.module_getattr(__name__, name)


__all__ = [
    # wings
    "laws",
    "families",
    "schedules",
    "information",
    "exports",
    "data",
    "samplers",
    "bounds",
    "optimal",
    "design",
    "report",
    # records
    "Joint",
    "Profile",
    "Schedule",
    "Grid",
    "BlockPlan",
    "RandomSchedule",
    "ExactRun",
    "Bound",
    "Certificate",
    "Estimate",
    # verbs
    "information_profile",
    "entropy",
    "kl",
    "tv",
    "path_kl",
    "sampler_law",
    "sampler_kl",
    "exact_run",
    "simulate",
    "estimate_kl",
    "compare",
    "optimal_schedule",
    "optimal_grid",
    "pareto_frontier",
    "certify",
]
