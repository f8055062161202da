r"""Divergences: exact KL (forward and reverse), total variation, the path KL of a schedule
or grid, and its per-step parts.

Path KL of the fixed-cardinality sampler (LZ25, CCL25; docs/design.md §2, docs/theory.md §2):

.. math::

    \mathrm{KL}_{\text{path}}(k) = \sum_t \sum_{m = s_t}^{s_t + k_t - 1}
    \bigl(\varphi_{s_t} - \varphi_m\bigr) = \sum_t k_t \varphi_{s_t} - H(X),

a left-Riemann-sum error of the profile; each step's term is the expected total
correlation :math:`\mathbb{E}\,\mathrm{TC}(X_{B_t} \mid X_{A_t})` of that step. For a grid
of the Bernoulli-subset sampler it is :math:`\sum_j \Gamma_{umask}(t_j, t_{j+1})` (W26;
exact initialization and completion add nothing). By data processing
:math:`\mathrm{KL}(p \,\|\, q) \le \mathrm{KL}_{\text{path}}`.

Proofs: proofs/path_kl_identity.md, proofs/kl_le_path_kl.md.
"""

from __future__ import annotations

import numpy as np
from scipy.special import rel_entr

from ..laws.joint import Joint
from ..schedules.plans import check_schedule, Grid
from .profile import as_profile
from .ugc import gamma_umask

__all__ = ["card_path_terms", "kl", "reverse_kl", "off_support_mass", "tv", "path_kl", "step_path_kl"]


def kl(p: Joint, q: Joint) -> float:
    r""":math:`\mathrm{KL}(p \,\|\, q) = \sum_x p(x) \log(p(x)/q(x))` in nats.

    Support rules: terms with p(x) = 0 are 0; any x with q(x) = 0 < p(x) gives ``inf``.
    ``q`` may be sub-normalized (a sampler law with lost mass); p must not be.

    Computed term by term with ``rel_entr`` (never as cross-entropy minus entropy: a KL of
    1e-18 between nearby laws keeps ~1e-8 relative accuracy). Both records are normalized to
    rounding (tolerance model in :mod:`mdmtheory.laws.joint`), so the sum can fall below 0 only by
    rounding (~1e-16); such a sum is returned as 0 — the only clipping — and the result is
    never negative.
    """
    _pair(p, q)
    return max(float(np.sum(rel_entr(p.table, q.table))), 0.0)


def _pair(p, q) -> None:
    for name, x in (("p", p), ("q", q)):
        if not isinstance(x, Joint):
            raise ValueError(f"{name}: expected a mdmtheory.Joint, got {type(x).__name__}")
    if p.table.shape != q.table.shape:
        raise ValueError(f"q: shape {q.table.shape} does not match p's {p.table.shape}")
    if p.lost:
        raise ValueError("p: has lost mass; the first argument must be a normalized law")


def off_support_mass(p: Joint, q: Joint) -> float:
    r""":math:`q(\{x : p(x) = 0\})`: the mass the sampler law q puts where p has none (the
    lost mass of a sub-normalized q is not included: it is ``q.lost``)."""
    _pair(p, q)
    return float(q.table[p.table == 0].sum())


def reverse_kl(p: Joint, q: Joint, *, lost: str = "refuse") -> float:
    r"""Reverse KL :math:`\mathrm{KL}(q \,\|\, p) = \sum_x q(x) \log(q(x)/p(x))`, nats.

    ``inf`` when q puts mass where p has none (:func:`off_support_mass` says how much); the
    mode-seeking side of the error, what a user sees as implausible samples. A sampler law
    with lost mass (``q.lost > 0``) is refused unless told what the lost mass is:
    ``lost="outcome"`` — one more outcome, which p never produces (so the reverse KL is
    ``inf``, as :func:`tv` counts it); ``lost="condition"`` — q given that the sample finished,
    :math:`q(x)/(1 - \text{lost})`, the lost mass the caller's to report (``q.lost``).
    Computed with ``rel_entr``; clipped at 0 only against rounding (as :func:`kl`).
    """
    _pair(p, q)
    if not isinstance(lost, str) or lost not in ("refuse", "condition", "outcome"):
        raise ValueError(f"lost: expected 'refuse', 'outcome' or 'condition', got {lost!r}")
    Q = q.table
    if q.lost:
        if lost == "refuse":
            raise ValueError(f"q: has lost mass {q.lost:.3g} (samples that never finish); pass lost='outcome' "
                             "(an outcome p never produces: the reverse KL is inf) or lost='condition' (the law "
                             "of the finished samples, with q.lost reported beside it)")
        if lost == "outcome":
            return float("inf")
        Q = Q / Q.sum()
    return max(float(np.sum(rel_entr(Q, p.table))), 0.0)


def tv(p: Joint, q: Joint) -> float:
    r"""Total variation :math:`\tfrac12 \sum_x |p(x) - q(x)| + \tfrac12\,\text{lost}`: the lost
    mass of a sub-normalized q counts as one more outcome that p never produces, so
    TV = 1 means disjoint and TV ≥ lost/2: a sampler that fails to finish is never hidden.
    Pinsker: :math:`\mathrm{TV} \le \sqrt{\mathrm{KL}(p\|q)/2}` (both directions)."""
    _pair(p, q)
    return float(0.5 * (np.abs(p.table - q.table).sum() + q.lost))


def step_path_kl(p, plan) -> np.ndarray:
    r"""Expected total correlation of each step: the per-step parts of the path KL.

    ``p`` is a :class:`Joint` or a :class:`Profile`; ``plan`` a :class:`Schedule` (term t is
    :math:`\sum_{m=s_t}^{s_t+k_t-1} (\varphi_{s_t} - \varphi_m)`) or a :class:`Grid` (term j
    is :math:`\Gamma_{umask}(t_j, t_{j+1})`).
    """
    prof = as_profile(p)
    if isinstance(plan, Grid):
        t = plan.times
        return np.array([gamma_umask(prof, t[j], t[j + 1]) for j in range(plan.steps)])
    sched = check_schedule(plan, prof.d, name="plan")
    terms = card_path_terms(prof.values, sched)
    return np.array([float(np.sum(terms[s : s + k])) for s, k in zip(sched.starts, sched.sizes)])


def card_path_terms(phi: np.ndarray, sched) -> np.ndarray:
    r"""The path KL of a card schedule term by term: :math:`\varphi_{s(m)} - \varphi_m`,
    m = 0..d-1, with :math:`s(m)` the start of the step revealing the (m+1)-th token.

    The one place of the formula: :func:`step_path_kl` sums it step by step,
    :func:`mdmtheory.optimal.card.schedule_path_kl` all at once (never as
    :math:`J(k) - \sum_i \varphi_i`: no cancellation). ``sched`` is a checked Schedule of
    length ``phi.shape[0]``.
    """
    return phi[np.repeat(np.asarray(sched.starts), sched.sizes)] - phi


def path_kl(p, plan) -> float:
    r"""Path KL of a schedule or grid (sum of :func:`step_path_kl`).

    With a cross-entropy profile c (a model's loss curve) this is the Riemann defect
    :math:`\sum_t k_t c(s_t) - \sum_i c(i)`, which differs from the model's path KL by the
    schedule-independent :math:`\sum_i \varepsilon(i)`.
    """
    return float(np.sum(step_path_kl(p, plan)))
