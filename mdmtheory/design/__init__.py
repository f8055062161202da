"""Design from data: a model's profile on data and its checks (:mod:`.profile`), the plan
(:func:`design`, :func:`design_blocks_from_data`, :func:`estimate_design_blocks`: :mod:`.from_data`,
:mod:`.blocks`) and certificates with confidence (:mod:`.certificate`, :mod:`.certificate_blocks`), and a rule's parameter
tuned to a forward budget from data (:func:`estimate_tune`: :mod:`.tune`)."""

from . import blocks, certificate, certificate_blocks, from_data, profile, tune
from .blocks import *  # noqa: F401,F403
from .certificate import *  # noqa: F401,F403
from .certificate_blocks import *  # noqa: F401,F403
from .from_data import *  # noqa: F401,F403
from .profile import *  # noqa: F401,F403
from .tune import *  # noqa: F401,F403
from .._moved import module_getattr as _module_getattr

__all__ = [*profile.__all__, *from_data.__all__, *blocks.__all__, *certificate.__all__, *certificate_blocks.__all__, *tune.__all__]


def __getattr__(name):
    return _module_getattr(__name__, name)
