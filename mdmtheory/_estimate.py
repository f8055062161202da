r"""The records every wing shares: JSON-ready results and the one base of every estimate.

* :class:`Record`: a mixin giving a frozen dataclass ``to_dict()`` (every field, JSON-ready
  by :func:`jsonable`); NamedTuples call :func:`record_dict` from their own ``to_dict``.
* :class:`Estimate`: the base of every Monte Carlo estimate (``KLEstimate``,
  ``PathEstimate``, ``ProfileEstimate``, …): a point value (``value``, or ``values`` per
  level), its standard error ``stderr`` and the number of draws ``n``, with the normal
  interval :meth:`Estimate.confidence_interval`.
* :class:`PlanRecord`: a record that recommends one plan has ``plan``.

Below every wing (docs/design.md, "Layout"): numpy and the standard library only.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np
from ._validate import normal_quantile_arg

__all__ = ["Estimate", "PlanRecord", "Record", "jsonable", "record_dict"]


def jsonable(obj):
    """``obj`` made JSON-safe: numpy arrays and tuples to lists, numpy scalars to Python
    numbers, non-finite floats to ``"inf"``, ``"-inf"``, ``"nan"`` (the CLI's ``--json``
    convention), records to their ``to_dict()``, anything else without a JSON form to its
    ``repr``.

    >>> jsonable({"a": np.array([1.0, np.inf]), "b": (np.int64(2), None)})
    {'a': [1.0, 'inf'], 'b': [2, None]}
    """
    if obj is None or isinstance(obj, (str, bool)):
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, (numbers.Integral, np.integer)):
        return int(obj)
    if isinstance(obj, (numbers.Real, np.floating)):
        x = float(obj)
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return x
    if isinstance(obj, dict):
        return {str(jsonable(k)) if not isinstance(k, str) else k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if hasattr(obj, "shape") and hasattr(obj, "tolist") and hasattr(obj, "detach"):  # a torch tensor
        return jsonable(obj.detach().cpu().tolist())
    if hasattr(obj, "to_dict") and callable(obj.to_dict) and not isinstance(obj, type):
        return obj.to_dict()
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return record_dict(obj)
    return repr(obj)


def record_dict(rec) -> dict:
    """Every field of a dataclass or NamedTuple ``rec``, by name, JSON-ready (:func:`jsonable`)."""
    names = rec._fields if isinstance(rec, tuple) else [f.name for f in dataclasses.fields(rec)]
    return {name: jsonable(getattr(rec, name)) for name in names}


class Record:
    """Mixin of the frozen result records: ``to_dict()`` holds every field, JSON-ready, so
    ``json.dumps(rec.to_dict())`` works (arrays as lists, ``inf`` as ``"inf"``)."""

    __slots__ = ()

    def to_dict(self) -> dict:
        """Every field by name, JSON-ready (numpy arrays as lists, non-finite floats as strings)."""
        return record_dict(self)


def check_confidence(confidence) -> float:
    """A confidence in (0, 1), or a ValueError naming ``confidence``."""
    if isinstance(confidence, (bool, np.bool_)) or not (isinstance(confidence, numbers.Real) and 0 < confidence < 1):
        raise ValueError(f"confidence: expected a probability in (0, 1), e.g. 0.95, got {confidence!r}")
    return float(confidence)


def normal_quantile(confidence: float) -> float:
    r"""The two-sided normal quantile :math:`z = \Phi^{-1}\bigl((1 + c)/2\bigr)` (1.96 at c = 0.95);
    a confidence so close to 1 that the quantile is infinite in float64 is refused by name
    (:func:`mdmtheory._validate.normal_quantile_arg`)."""
    return normal_quantile_arg(check_confidence(confidence))


class Estimate(Record):
    r"""Base of every Monte Carlo estimate: a point value, its standard error, the draws.

    A subclass is a frozen dataclass with fields (or properties) ``stderr`` and ``n`` and
    a point value named by the class attribute ``point`` (``"value"`` by default;
    ``"values"`` for a per-level estimate, whose ``stderr`` is then an array of the same
    shape). :meth:`confidence_interval` is the normal approximation
    :math:`\hat\theta \pm z_{(1+c)/2}\,\mathrm{se}` at confidence c (the central limit theorem
    over the n independent draws; Wasserman, *All of Statistics*, Thm. 6.16).

    >>> from mdmtheory import samplers
    >>> isinstance(samplers.KLEstimate, type) and issubclass(samplers.KLEstimate, Estimate)
    True
    """

    __slots__ = ()

    #: Name of the field holding the point value.
    point = "value"

    @property
    def estimate(self):
        """The point value (``value`` or ``values``, by :attr:`point`)."""
        return getattr(self, self.point)

    def confidence_interval(self, confidence: float = 0.95):
        """Normal interval ``(lo, hi)`` holding the point with probability ``confidence``:
        point ∓ z·stderr (arrays per level). ``confidence``, not ``level``: a level is a
        level of the profile (docs/design.md, "Vocabulary")."""
        z = normal_quantile(confidence)
        v, se = self.estimate, self.stderr
        if isinstance(v, np.ndarray) or isinstance(se, np.ndarray):
            v, se = np.asarray(v, dtype=np.float64), np.asarray(se, dtype=np.float64)
            return v - z * se, v + z * se
        return float(v) - z * float(se), float(v) + z * float(se)


class PlanRecord(Record):
    """A record that recommends one plan: ``plan`` is that plan (whatever the record calls its
    field, :attr:`plan_field`), the object ``mt.sampler_law``, ``mt.simulate`` and the
    exports take."""

    __slots__ = ()
    #: Name of the field holding the recommended plan.
    plan_field = "schedule"

    @property
    def plan(self):
        """The recommended plan (the field named by :attr:`plan_field`)."""
        return getattr(self, self.plan_field)
