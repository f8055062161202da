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

Every wing and name here loads on first use (``import mdmtheory`` imports no wing, numpy
included; JAX, torch and matplotlib come when a function needs them), as do ``mt.symbolic``
(sympy) and ``mt.testing`` (hypothesis strategies, a test extra). Old import paths work for
one release with a DeprecationWarning (:mod:`._moved`).
"""

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING

from . import _moved

_moved.install()

__version__ = "0.1.0"

#: Every name below is imported on first use (PEP 562): ``import mdmtheory`` loads no wing, so
#: ``mdmtheory --help`` and a script that needs one wing do not pay for all of them (numpy,
#: scipy.stats and the wings: ~1 s of CPU; issue 31 item 14). ``from mdmtheory import Joint``
#: and ``mt.laws`` work as before; a name is bound in this module once it is loaded.
_WINGS = ("laws", "schedules", "information", "exports", "data", "samplers", "bounds", "optimal", "design",
          "report")
_LAZY = ("symbolic", "testing")
#: name -> the module it comes from
_FROM = {
    "Estimate": "._estimate",
    "Bound": ".bounds", "compare": ".bounds",
    "Certificate": ".design", "certify": ".design",
    "entropy": ".information", "information_profile": ".information", "kl": ".information",
    "path_kl": ".information", "tv": ".information", "Profile": ".information",
    "Joint": ".laws", "families": ".laws",
    "optimal_grid": ".optimal", "optimal_schedule": ".optimal", "pareto_frontier": ".optimal",
    "ExactRun": ".samplers", "estimate_kl": ".samplers", "exact_run": ".samplers", "sampler_kl": ".samplers",
    "sampler_law": ".samplers", "simulate": ".samplers",
    "BlockPlan": ".schedules", "Grid": ".schedules", "RandomSchedule": ".schedules", "Schedule": ".schedules",
}

if _TYPE_CHECKING:  # what a type checker or an IDE sees: the same names, imported eagerly
    from . import bounds, data, design, exports, information, laws, optimal, report, samplers, schedules
    from ._estimate import Estimate
    from .bounds import Bound, compare
    from .design import Certificate, certify
    from .information import entropy, information_profile, kl, path_kl, Profile, tv
    from .laws import families, Joint
    from .optimal import optimal_grid, optimal_schedule, pareto_frontier
    from .samplers import estimate_kl, exact_run, ExactRun, sampler_kl, sampler_law, simulate
    from .schedules import BlockPlan, Grid, RandomSchedule, Schedule


def __getattr__(name):
    if name in _WINGS or name in _LAZY:
        return _importlib.import_module(f".{name}", __name__)  # the import binds it here
    if name in _FROM:
        value = getattr(_importlib.import_module(_FROM[name], __name__), name)
        globals()[name] = value
        return value
    return _moved.module_getattr(__name__, name)


def __dir__():
    return sorted(set(globals()) | set(__all__))


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
