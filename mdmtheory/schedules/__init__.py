r"""Plans: how many tokens each step reveals. The records (:mod:`.plans`: :class:`Schedule`,
:class:`Grid`, :class:`BlockPlan`, :class:`RandomSchedule`) and the families people run
(:mod:`.families`: cosine, linear, log-linear, geometric, DUS, semi-autoregressive), and the
reveal odds :math:`\psi(t) = t/(1-t)` they are measured in (:mod:`.odds`).

The lowest wing beside :mod:`mdmtheory.laws`: it imports no other wing. A plan chosen from a
law's profile is in :mod:`mdmtheory.optimal`.
"""

from . import families, odds, plans
from .families import *  # noqa: F401,F403
from .odds import *  # noqa: F401,F403
from .plans import *  # noqa: F401,F403
from .._moved import module_getattr as _module_getattr

__all__ = [*plans.__all__, *families.__all__, *odds.__all__]


def __getattr__(name):
    return _module_getattr(__name__, name)
