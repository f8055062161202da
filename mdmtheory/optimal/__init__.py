"""The best plan for a law: card schedules by dynamic programming and their frontier
(:mod:`.card`), reveal-time grids (:mod:`.grid`), block designs (:mod:`.blocks`), the best
randomized schedule (:mod:`.randomized`), the optimal adaptive (state-dependent) plan
(:mod:`.adaptive`) and a rule's parameter tuned to a forward budget (:mod:`.tune`)."""

from . import adaptive, blocks, card, grid, randomized, tune as _tune_module
from .adaptive import *  # noqa: F401,F403
from .blocks import *  # noqa: F401,F403
from .card import *  # noqa: F401,F403
from .grid import *  # noqa: F401,F403
from .randomized import *  # noqa: F401,F403
from .tune import *  # noqa: F401,F403
from .._moved import module_getattr as _module_getattr

__all__ = [*card.__all__, *grid.__all__, *blocks.__all__, *randomized.__all__, *adaptive.__all__,
           *_tune_module.__all__]


def __getattr__(name):
    return _module_getattr(__name__, name)
