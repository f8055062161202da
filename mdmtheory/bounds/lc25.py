r"""LC25 = Li & Cai 2025, arXiv 2505.21400 (NeurIPS 2025): fixed-cardinality random-order
sampler. v1 (May 2025) is titled *A Convergence Theory for Diffusion Language Models: An
Information-Theoretic Perspective*; v2 (revised December 2025) *Breaking AR's Sampling
Bottleneck: Provable Acceleration via Diffusion Language Models*.

**How it was read.** Only the openings of the arXiv HTML pages of v1 and v2 could be read
(title, authors, dates, abstract, first sentences of §1): no theorem, section or equation.
The v2 abstract adds that the theory "covers the regime T < L" and keeps "matching upper and
lower bounds, up to some constant factor". The statements below come from third-party
summaries (no equation numbers; they number the upper bound Theorem 1 and the lower bound
Theorem 2): Theorem 1 has status ``"paper, via summary"``, the lower bound ``"our reading"``
(docs/theory.md §2)."""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..information.profile import as_profile
from ..information.ugc import gain_coefficients, profile_increments
from .._validate import _short
from ._core import Bound, LOWER, OUR_READING, _schedule, SUMMARY
from .registry import random_order_schedule, register_rows

__all__ = [
    "lc25_bound",
    "worst_path_kl",
    "lc25_lower_our_reading",
]


def lc25_bound(p, schedule) -> Bound:
    r"""LC25 Theorem 1 (Li & Cai 2025, arXiv 2505.21400), exact predictor:

    .. math::

        \mathrm{KL}(p \,\|\, q_k) \le \frac{2^{\lceil \log_2 k_{\max} \rceil} - 1}{d}
        \sum_i I(X_i; X_{-i}).

    Coincides with :func:`riemann_bound` when :math:`k_{\max}` is a power of two and is
    looser otherwise, so it also bounds the path KL. LC25's left side (the KL given the
    reveal sets, averaged over them) is the path KL, which is >= the output-law KL; the
    package checks both. **Read from third-party summaries** of LC25 (of its own text only
    the abstracts of v1 and v2 could be read; no equation number): status
    ``"paper, via summary"``. Held on every exact check here (docs/theory.md §2).
    """
    prof = as_profile(p)
    sched = _schedule(schedule, prof.d)
    profile_increments(prof, strict=True)  # stated for exact (non-increasing) profiles
    phi = prof.values
    k = sched.max_size
    factor = (1 << (k - 1).bit_length()) - 1  # 2^ceil(log2 k) - 1
    return Bound(
        name="lc25_theorem1",
        value=factor * float(phi[0] - phi[-1]),
        bounds="kl",
        source="Li & Cai 2025 (LC25, arXiv 2505.21400 v1/v2), Theorem 1 (read from third-party summaries; abstract only read)",
        statement="KL(p||q_k) <= ((2^ceil(log2 k_max) - 1)/d) * sum_i I(X_i; X_-i) (+ training error, 0 here)",
        assumptions=("random-order fixed-cardinality sampler", "exact conditionals (training error 0)"),
        status=SUMMARY,
    )


def _lc25_levels(hcard: np.ndarray, reading: str) -> float:
    r""":math:`\sum_{j \ge 0} 2^{-j} h^{card}_{m_j}` with :math:`m_j` the revealed count of
    level j (see :func:`lc25_lower_our_reading`); the geometric tail after the sizes
    saturate is summed in closed form."""
    d = hcard.shape[0]
    if d == 1:
        return 0.0
    total, j = 0.0, 0
    while True:
        size = min(1 << j, d - 1)
        m = size if reading == "revealed" else d - 1 - size
        if size == d - 1:  # saturated: sum_{i >= j} 2^-i = 2^(1-j)
            return total + 2.0 ** (1 - j) * float(hcard[m])
        total += 2.0**-j * float(hcard[m])
        j += 1


def worst_path_kl(p, max_size: int) -> float:
    r"""The largest path KL over the schedules whose largest step is exactly ``max_size``:

    .. math:: \max_{k:\ k_{\max} = s} \mathrm{KL}_{\text{path}}(k)
              = \max_k \sum_t \sum_{m=s_t}^{s_t+k_t-1} (\varphi_{s_t} - \varphi_m),

    by dynamic programming over the revealed count (state: revealed count and whether a
    step of size s has been taken), :math:`O(d\,s)`. The quantity that
    :func:`lc25_lower_our_reading` is compared with.
    """
    prof = as_profile(p)
    d = prof.d
    s = _max_size_arg(max_size, d)
    phi = np.asarray(prof.values, dtype=np.float64)
    cum = np.concatenate([[0.0], np.cumsum(phi)])

    def gamma(a: int, b: int) -> float:  # one step's defect: (b - a) phi_a - sum_{m<b} phi_m
        return (b - a) * float(phi[a]) - float(cum[b] - cum[a])

    # best[a][f]: max defect from a revealed to d, f = a step of size s was taken already
    best = np.full((d + 1, 2), -math.inf)
    best[d, 1] = 0.0
    for a in range(d - 1, -1, -1):
        for f in (0, 1):
            for k in range(1, min(s, d - a) + 1):
                nxt = best[a + k, 1 if (f or k == s) else 0]
                if nxt > -math.inf:
                    best[a, f] = max(best[a, f], gamma(a, a + k) + nxt)
    return float(best[0, 0])


def lc25_lower_our_reading(p, max_size: int, *, reading: str = "revealed") -> Bound:
    r"""**Our reading** of the LC25 lower bound (Li & Cai 2025, arXiv 2505.21400), a
    conjecture checked here, not LC25's theorem:

    .. math::

        \max_{k:\ k_{\max} = s} \mathrm{KL}_{\text{path}}(k) \;\ge\; \frac{s}{16 d}
        \sum_i \sum_{j \ge 0} 2^{-j}\, \mathbb{E}\, I\bigl(X_i; X_{W_j^{(-i)}}\bigr)
        \qquad (2 \le s \le d).

    **Where the statement comes from.** Of LC25's own text only the abstracts (v1, v2) could
    be read; they claim "matching upper and lower bounds, up to some constant factor" and
    state no bound. Third-party summaries (no equation number; they call it Theorem 2) give
    "there exist masking schedules" whose error is ">= (s_max/(16 L)) sum_i sum_{j>=0} 2^-j
    E I(X_i; X o W_j^(-i)) + eps_train" with "random subsets W_j of increasing size", and
    define neither W_j, the operation o, nor the error. Read literally at k_max = 1 it
    contradicts LC25's own Theorem 1 (whose bound is 0 there), so the literal reading
    cannot be the theorem; every choice below is ours:

    * :math:`W_j^{(-i)}` is a uniformly random subset of :math:`[d]\setminus\{i\}` of size
      :math:`\min(2^j, d-1)`; then :math:`\sum_i \mathbb E\, I(X_i; X_W) = h^{card}_{|W|}`;
    * ``reading="revealed"`` (default): :math:`X \circ W` is X revealed on W;
      ``reading="masked"``: X with W masked (revealed on the complement of
      :math:`W \cup \{i\}`, of size :math:`d - 1 - |W|`);
    * the error is the **path KL** (LC25 Theorem 1's left side, the KL given the reveal
      sets averaged over them, is the path KL), "there exist masking schedules" is read as
      "the worst schedule whose largest step is s" (:func:`worst_path_kl`; an existence
      statement at fixed s is a statement about that maximum), :math:`s \ge 2` (at s = 1
      the sampler is exact), and the training error is 0.

    Status: held on every exact check here (hypothesis over random and near-degenerate
    laws, d <= 5, both readings; tightness search: best ratio 0.375 at d = 3), **not
    proved**. Against the output-law KL instead of the path KL it fails at s = 2 on
    near-deterministic laws (tests/bounds/test_bounds.py), which says nothing about LC25.
    docs/theory.md §2.
    """
    prof = as_profile(p)
    d = prof.d
    s = _max_size_arg(max_size, d)
    if s < 2:
        raise ValueError(
            f"max_size: our reading of the LC25 lower bound is for k_max >= 2 (at k_max = 1 the sampler is exact), got {s}"
        )
    if not isinstance(reading, str) or reading not in ("revealed", "masked"):
        raise ValueError(f"reading: expected 'revealed' or 'masked', got {reading!r}")
    value = s / (16 * d) * _lc25_levels(gain_coefficients(prof), reading)
    return Bound(
        name="lc25_lower_our_reading",
        value=value,
        bounds=f"max_path_kl(k_max={s})",
        source="our reading of Li & Cai 2025 (LC25, arXiv 2505.21400 v1/v2) lower bound (Theorem 2 per third-party summaries; abstract only read)",
        statement="max over schedules with k_max = s >= 2 of KL_path >= (s/(16 d)) sum_i sum_j 2^-j E I(X_i; X o W_j^(-i))",
        assumptions=(
            f"our reading: X o W = X {reading} on W, |W_j| = min(2^j, d-1), W uniform",
            "error = path KL; 'some schedule' = the worst schedule with k_max = s",
            "conjecture: checked on exact examples, not proved",
        ),
        kind=LOWER,
        status=OUR_READING,
    )


def _max_size_arg(max_size, d: int) -> int:
    """An integer step size in 1..d (integral floats accepted; 10**400 or Fraction refused
    without a float overflow)."""
    ok = False
    if isinstance(max_size, numbers.Integral) and not isinstance(max_size, (bool, np.bool_)):
        ok = True
    elif isinstance(max_size, numbers.Real) and not isinstance(max_size, (bool, np.bool_)):
        try:
            f = float(max_size)
            ok = math.isfinite(f) and f.is_integer() and f == max_size
        except (OverflowError, TypeError, ValueError):
            ok = False
    if not ok or not 1 <= int(max_size) <= d:
        raise ValueError(f"max_size: expected an integer in 1..d={d}, got {_short(max_size)}")
    return int(max_size)


# -- rows of compare (docs/design.md, "How to add a bound") ----------------------------------
@register_rows("lc25_theorem1", source=__name__, order=120, applies=random_order_schedule)
def _theorem1_rows(ctx):
    b = lc25_bound(ctx.profile, ctx.plan)
    return [ctx.row(b, ctx.exact(b.bounds))]


@register_rows("lc25_lower_our_reading", source=__name__, order=140,
               applies=lambda ctx: random_order_schedule(ctx) and ctx.plan.max_size >= 2)
def _lower_rows(ctx):
    s = ctx.plan.max_size
    return [ctx.row(lc25_lower_our_reading(ctx.profile, s), worst_path_kl(ctx.profile, s))]
