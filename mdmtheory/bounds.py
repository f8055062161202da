r"""Published bounds on the factorization error, one function each, with their source.

Every function returns a :class:`Bound`: its value (nats) and metadata — source paper,
theorem or equation, assumptions — so that a table can show it beside the exact value.
Items marked [P] in THEORY.md are claims the test-suite checks, not facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .schedules import Schedule, check_schedule
from .ugc import as_profile

__all__ = ["Bound", "riemann_bound"]


@dataclass(frozen=True)
class Bound:
    """A bound's value and where it comes from."""

    name: str
    value: float
    bounds: str  # the quantity bounded, e.g. "path_kl" or "kl"
    source: str
    statement: str
    assumptions: tuple[str, ...] = field(default_factory=tuple)


def riemann_bound(p, schedule) -> Bound:
    r"""Riemann bound (THEORY.md §2, [D]):

    .. math::

        \mathrm{KL}_{\text{path}}(k) \le \frac{k_{\max} - 1}{d} \sum_i I(X_i; X_{-i})
        = (k_{\max} - 1)(\varphi_0 - \varphi_{d-1}).

    Each step's defect :math:`\sum_{m} (\varphi_{s} - \varphi_m)` is at most
    :math:`(k-1)(\varphi_s - \varphi_{s+k-1})` since :math:`\varphi` is non-increasing, and
    the decrements telescope. Proof: proofs/riemann_bound.md.
    """
    prof = as_profile(p)
    sched = check_schedule(schedule if isinstance(schedule, Schedule) else Schedule(schedule), prof.d)
    phi = prof.values
    value = (sched.max_size - 1) * float(phi[0] - phi[-1])
    return Bound(
        name="riemann",
        value=value,
        bounds="path_kl",
        source="THEORY.md §2 (derived from LZ25/CCL25's profile identity)",
        statement="KL_path(k) <= ((k_max - 1)/d) * sum_i I(X_i; X_-i)",
        assumptions=("exact profile (non-increasing)",),
    )
