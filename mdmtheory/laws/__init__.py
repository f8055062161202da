"""Laws: what is sampled. Joint tables on [K]^d (:mod:`.joint`), the families the docs and
tests use (:mod:`.families`), laws too large for a table seen through their conditionals
(:mod:`.oracles`: Markov chains, mixtures of products, hidden Markov chains, the empirical
law of data) and laws with a prompt (:mod:`.prompts`).

The lowest wing: it imports no other wing (docs/design.md, "Layout").
"""

from . import families, joint, oracles, prompts
from .joint import *  # noqa: F401,F403
from .oracles import *  # noqa: F401,F403
from .prompts import *  # noqa: F401,F403

__all__ = ["families", *joint.__all__, *oracles.__all__, *prompts.__all__]
