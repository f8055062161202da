r"""Bounds on the factorization error, one function each, with their source and status;
one module per source.

Every function returns a :class:`Bound`: its value (nats), the quantity it bounds, its
kind (``"upper"``: value >= quantity; ``"lower"``: value <= quantity; ``"asymptotic"``:
an asymptotic value, not an inequality), its **status** — ``"paper"`` (the statement as
the cited paper gives it), ``"paper, via summary"`` (a paper's statement known to us only
from third-party summaries), ``"our reading"`` (our interpretation of an ambiguous
statement: a conjecture checked here, never reported as the paper's result) or
``"derived here"`` (proved in ``proofs/`` or in the docstring) — and metadata (source
paper with section/equation, assumptions), so that a table can show it beside the exact
value. Every formula, its source and its status: docs/theory.md.

:func:`compare` evaluates, for a joint law and a plan (schedule or grid), the exact KL of
the output law, the path KL and every applicable bound, in one table.

Modules (docs/design.md §8): :mod:`._core` (the :class:`Bound` record, kinds, statuses,
helpers), :mod:`.lc25` (LC25 = Li & Cai, arXiv 2505.21400), :mod:`.w26` (W26 =
Wainwright, arXiv 2608.13520, read in full; places: docs/theory.md), :mod:`.dhw26`
(DHW26 = Dmitriev, Huang & Wei, arXiv 2602.15008, effective total correlation), :mod:`.zc26`
(ZC26 = Zhao & Cai, arXiv 2602.20126, randomized sizes), :mod:`.pb25` (PB25 = Kang et al.,
ParallelBench, arXiv 2510.04767, read in full; conditional total correlation), :mod:`.zyb26` (ZYB26 =
Zhang et al., arXiv 2602.00286, reverse KL and verification cost), :mod:`.fastdllm`
(Fast-dLLM Theorem 1, arXiv 2505.22618, and Fast-dLLM++'s Fréchet certificate, arXiv
2606.02955v2, both read in full; checked on every state of a law), :mod:`.jys` (Jump Your
Steps, arXiv 2410.07761: its KLUB and schedule search, exact; read from the authors' code), :mod:`.demask` (DEMASK's TV
bound under sub-additivity, arXiv 2604.02560, our reading), :mod:`.imdm` (IMDM's factorization-error
lower bound, arXiv 2605.10518, our reading), :mod:`.cl26` (Cai & Li, arXiv 2603.22248, the
entropy-sum rule: abstract only), :mod:`.feng25` (Feng et al., arXiv 2502.09622, token vs
sequence error rate: abstract only), :mod:`.derived` (bounds
derived here, among them the Riemann bound built on LZ25/CCL25's profile identity) and
:mod:`.duel` (DUEL's likelihood row, arXiv 2603.01367), :mod:`.speculative` (the rows of a
speculative sampler, docs/theory.md §8), :mod:`.registry` (where each of these modules registers
its rows of :func:`compare`) and :mod:`.comparison` (the table, :func:`compare`); :mod:`.tightness` (the largest exact/bound
ratio found by search, JAX; loaded on first use).
"""

import importlib as _importlib

# every paper module is imported here: each registers its rows of compare (.registry)
from . import _core, registry  # noqa: I001 - the registry first
from . import cl26, comparison, demask, derived, dhw26, duel, fastdllm, feng25, imdm, jys, lc25, pb25, speculative
from . import w26, zc26, zyb26
from ._core import *  # noqa: F401,F403
from .comparison import *  # noqa: F401,F403
from .demask import *  # noqa: F401,F403
from .derived import *  # noqa: F401,F403
from .dhw26 import *  # noqa: F401,F403
from .duel import *  # noqa: F401,F403
from .cl26 import *  # noqa: F401,F403
from .fastdllm import *  # noqa: F401,F403
from .feng25 import *  # noqa: F401,F403
from .imdm import *  # noqa: F401,F403
from .jys import *  # noqa: F401,F403
from .lc25 import *  # noqa: F401,F403
from .pb25 import *  # noqa: F401,F403
from .registry import *  # noqa: F401,F403
from .w26 import *  # noqa: F401,F403
from .zc26 import *  # noqa: F401,F403
from .zyb26 import *  # noqa: F401,F403

# private names re-exported for the package's own tests and tightness targets: they moved,
# they did not change
from ._core import _geo_grid, _is_geometric  # noqa: F401
from .registry import _slack  # noqa: F401
from .derived import _bernstein_min  # noqa: F401

__all__ = [
    *_core.__all__,
    *derived.__all__,
    *lc25.__all__,
    *w26.__all__,
    *dhw26.__all__,
    *zc26.__all__,
    *pb25.__all__,
    *zyb26.__all__,
    *fastdllm.__all__,
    *jys.__all__,
    *demask.__all__,
    *imdm.__all__,
    *cl26.__all__,
    *feng25.__all__,
    *duel.__all__,
    *comparison.__all__,
    *registry.__all__[1:],
]


def __getattr__(name):
    if name == "tightness":
        return _importlib.import_module(".tightness", __name__)
    raise AttributeError(f"module 'mdmtheory.bounds' has no attribute {name!r}")
