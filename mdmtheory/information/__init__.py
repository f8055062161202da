"""Information: what a law's structure costs a sampler. Subset entropies and the classical
dependence measures (:mod:`.entropies`), the information profile (:mod:`.profile`), the
gain/UGC view of W26 (:mod:`.ugc`), the dyadic decomposition (:mod:`.dyadic`) and the
divergences: KL, TV, path KL (:mod:`.divergence`); the Monte Carlo kernels of the
cross-entropy profile estimator (:mod:`.montecarlo`).

``mt.information.ugc`` is the module (its function ``ugc`` is ``mt.information.ugc.ugc``).
"""

from . import divergence, dyadic, entropies, montecarlo, profile, ugc as _ugc_module
from .divergence import *  # noqa: F401,F403
from .dyadic import *  # noqa: F401,F403
from .entropies import *  # noqa: F401,F403
from .montecarlo import *  # noqa: F401,F403
from .profile import *  # noqa: F401,F403
from .ugc import *  # noqa: F401,F403
from .._moved import module_getattr as _module_getattr

ugc = _ugc_module

__all__ = [
    *divergence.__all__,
    *dyadic.__all__,
    *entropies.__all__,
    *montecarlo.__all__,
    *profile.__all__,
    *(name for name in _ugc_module.__all__ if name != "ugc"),
    "ugc",
]


def __getattr__(name):
    return _module_getattr(__name__, name)
