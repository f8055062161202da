"""Samplers: how a masked diffusion model generates, exactly and by Monte Carlo.

The sampler protocol (:mod:`.base`: :class:`Sampler`, :class:`Capabilities`, :class:`Run`,
:func:`as_sampler`), planners (:mod:`.planners`, :mod:`.adaptive`, :mod:`.demask`: which positions a step reveals), the exact law
engine (:mod:`.engine` on :mod:`.kernel`, with the tie rules of :mod:`.ties`), DUEL's exact likelihood of a
deterministic planner (:mod:`.likelihood`), the samplers
that are not one planner (:mod:`.select`: sample-then-select; :mod:`.revise`: remasking,
correctors, editing; :mod:`.speculative`: exact speculative sampling (ASSD); :mod:`.serving`: SGLang's dLLM decoding rules; :mod:`.infogain`: the Info-Gain look-ahead; :mod:`.randomized`: random step sizes; :mod:`.prompted`: with a prompt;
:mod:`.uniform`: uniform, hybrid and renoise corruption instead of masks),
Monte Carlo (:mod:`.simulate`), and what a run shows (:mod:`.diagnostics`, :mod:`.metrics`,
:mod:`.spread`).
"""

from . import (
    adaptive,
    base,
    demask,
    diagnostics,
    engine,
    infogain,
    kernel,
    likelihood,
    metrics,
    planners,
    prompted,
    randomized,
    revise,
    select,
    serving,
    simulate as _simulate_module,
    speculative,
    spread,
    ties,
    uniform,
)
from .adaptive import *  # noqa: F401,F403
from .base import *  # noqa: F401,F403
from .demask import *  # noqa: F401,F403
from .diagnostics import *  # noqa: F401,F403
from .engine import *  # noqa: F401,F403
from .infogain import *  # noqa: F401,F403
from .likelihood import *  # noqa: F401,F403
from .metrics import *  # noqa: F401,F403
from .planners import *  # noqa: F401,F403
from .prompted import *  # noqa: F401,F403
from .randomized import *  # noqa: F401,F403
from .revise import *  # noqa: F401,F403
from .select import *  # noqa: F401,F403
from .serving import *  # noqa: F401,F403
from .simulate import *  # noqa: F401,F403
from .speculative import *  # noqa: F401,F403
from .spread import *  # noqa: F401,F403
from .uniform import *  # noqa: F401,F403

register_planner("sample_then_select", SampleThenSelectPlanner)  # noqa: F405

__all__ = [
    *base.__all__,
    *planners.__all__,
    *adaptive.__all__,
    *demask.__all__,
    *engine.__all__,
    *likelihood.__all__,
    *select.__all__,
    *revise.__all__,
    *randomized.__all__,
    *prompted.__all__,
    *speculative.__all__,
    *serving.__all__,
    *infogain.__all__,
    *_simulate_module.__all__,
    *spread.__all__,
    *diagnostics.__all__,
    *metrics.__all__,
    *uniform.__all__,
]
