"""Test configuration: hypothesis profiles.

``ci`` (default): 100 examples per property, derandomized (the same cases on every run,
so CI never flakes), no deadline (first calls jit-compile). ``dev``: 20 examples.
``thorough``: 1000 examples. Select with ``HYPOTHESIS_PROFILE=thorough make test``.
"""

import os

from hypothesis import HealthCheck, settings

_common = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", max_examples=100, derandomize=True, **_common)
settings.register_profile("dev", max_examples=20, **_common)
settings.register_profile("thorough", max_examples=1000, **_common)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
