"""Objects other libraries take unchanged: a schedule designed here, in the form a
pipeline or sampler accepts it (no patch of the other library's code).

* :mod:`mdmtheory.integrations.diffusers` — a ``diffusers.BlockRefinementScheduler`` whose
  per-step commit counts are a designed schedule (``LLaDA2Pipeline``).

Each submodule imports its library lazily; ``pip install 'mdmtheory[pipelines]'``.
"""
