r"""Randomized step sizes: a law on compositions of d, its exact sampler law and path KL,
and the best randomized schedule against the best deterministic one.

Zhao & Cai (arXiv 2602.20126) draw the number of tokens revealed per step at random. A
:class:`RandomSchedule` is any law :math:`\pi` on compositions c of d (one composition drawn
per sample, then the random-order sampler with those counts). Its output law is the mixture

.. math:: q_\pi = \sum_c \pi(c)\, q_c ,

and its path KL — the composition is part of the trajectory and drawn the same way under
the reference path measure — is :math:`\sum_c \pi(c)\, \mathrm{KL}_{\text{path}}(c)`.
Expected forwards: :math:`\sum_c \pi(c)\,|c|`.

**Is randomization ever better?** (:func:`optimal_random_schedule`.) The path KL is linear
in :math:`\pi`: at a fixed number of steps its minimum is a deterministic schedule, and at a
fixed *expected* number of forwards F it is a linear programme whose optimum mixes at most
two step counts (solved exactly with ``scipy.optimize.linprog``) — randomization helps the
path KL exactly where :math:`T \mapsto \min_{|c| = T} \mathrm{KL}_{\text{path}}(c)` is not
convex at F. The output-law KL :math:`\mathrm{KL}(p \,\|\, q_\pi)` is convex in
:math:`\pi` (convexity of KL in its second argument), so a mixture can beat every
deterministic schedule with the same steps; its minimum over the compositions with T steps
is found by the mixture-weights EM iteration
:math:`\pi_c \leftarrow \pi_c \sum_x p(x)\, q_c(x) / q_\pi(x)` (monotone, converging to the
global minimum of this convex problem). Derived here; tests/test_random_sizes.py checks each
against the definition.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from ._validate import int_arg, real_arg
from .joint import Joint
from .schedules import Schedule, check_schedule

__all__ = ["RandomSchedule", "random_schedule_law", "random_path_kl", "compositions", "RandomizedOptimum",
           "optimal_random_schedule", "MAX_COMPOSITIONS"]

#: Largest support of a RandomSchedule (and number of compositions searched).
MAX_COMPOSITIONS = 1 << 16


def compositions(d: int, steps: int | None = None):
    """Every composition of d (ordered positive parts), or those with ``steps`` parts."""
    if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 1:
        raise ValueError(f"d: expected an integer >= 1, got {d!r}")
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, numbers.Integral)
                              or not 1 <= steps <= d):
        raise ValueError(f"steps: expected an integer in 1..{d}, got {steps!r}")
    n = 2 ** (d - 1) if steps is None else math.comb(d - 1, steps - 1)
    if n > MAX_COMPOSITIONS:
        raise ValueError(f"d: {n} compositions exceed {MAX_COMPOSITIONS}; give the support of the law explicitly")
    out = []
    for cuts in range(2 ** (d - 1)):
        if steps is not None and bin(cuts).count("1") != steps - 1:
            continue
        sizes, run = [], 1
        for i in range(d - 1):
            if cuts >> i & 1:
                sizes.append(run)
                run = 1
            else:
                run += 1
        sizes.append(run)
        out.append(tuple(sizes))
    return out


class RandomSchedule:
    """A law on compositions of d: ``RandomSchedule({(2, 2): 0.5, (1, 3): 0.5})`` or
    ``RandomSchedule(compositions, weights)``. Weights are probabilities (>= 0, summing to 1
    within 1e-12: never renormalized); zero weights are dropped."""

    def __init__(self, law, weights=None):
        if weights is None:
            if not isinstance(law, dict):
                raise ValueError("law: expected a dict {sizes: probability} or (compositions, weights)")
            items = list(law.items())
        else:
            comps = list(law)
            w = list(weights)
            if len(comps) != len(w):
                raise ValueError(f"weights: {len(w)} weights for {len(comps)} compositions")
            items = list(zip(comps, w))
        if not items:
            raise ValueError("law: empty; give at least one composition")
        if len(items) > MAX_COMPOSITIONS:
            raise ValueError(f"law: {len(items)} compositions exceed {MAX_COMPOSITIONS}")
        out: dict[tuple, float] = {}
        d = None
        for c, w in items:
            try:
                s = Schedule(c)
            except (ValueError, TypeError) as exc:
                raise ValueError(f"law: {c!r} is not a composition ({exc})") from None
            if d is None:
                d = s.d
            elif s.d != d:
                raise ValueError(f"law: compositions of different lengths ({d} and {s.d})")
            if isinstance(w, bool) or not isinstance(w, numbers.Real) or not (0 <= w <= 1):
                raise ValueError(f"weights: expected probabilities in [0, 1], got {w!r} for {c!r}")
            if s.sizes in out:
                raise ValueError(f"law: {s.sizes} appears twice")
            if w > 0:
                out[s.sizes] = float(w)
        total = sum(out.values())
        if abs(total - 1.0) > 1e-12:
            raise ValueError(f"weights: sum to {total!r}, expected 1 (they are never renormalized)")
        self._law = out
        self._d = d

    @property
    def d(self) -> int:
        return self._d

    @property
    def law(self) -> dict:
        """{sizes: probability}, zero weights dropped."""
        return dict(self._law)

    @property
    def expected_steps(self) -> float:
        """Expected forwards :math:`\\sum_c \\pi(c) |c|`."""
        return float(sum(w * len(c) for c, w in self._law.items()))

    @classmethod
    def deterministic(cls, schedule) -> "RandomSchedule":
        s = Schedule(schedule.sizes if isinstance(schedule, Schedule) else schedule)
        return cls({s.sizes: 1.0})

    def sample(self, n: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
        """n compositions drawn from the law."""
        comps = list(self._law)
        idx = rng.choice(len(comps), size=n, p=np.array([self._law[c] for c in comps]))
        return [comps[i] for i in idx]

    def __repr__(self) -> str:
        return f"RandomSchedule({self._law!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, RandomSchedule) and other._law == self._law

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._law.items())))


def _check(p, rs):
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
    if not isinstance(rs, RandomSchedule):
        raise ValueError(f"plan: expected a RandomSchedule, got {type(rs).__name__}")
    if rs.d != p.d:
        raise ValueError(f"plan: compositions of {rs.d}, but the law has d = {p.d}")


def random_schedule_law(p: Joint, rs: RandomSchedule) -> Joint:
    """Exact output law :math:`q_\\pi = \\sum_c \\pi(c) q_c` (random order), lost mass included."""
    from .samplers import sampler_law

    _check(p, rs)
    table = np.zeros(p.table.shape)
    lost = 0.0
    for c, w in rs.law.items():
        q = sampler_law(p, Schedule(c))
        table += w * q.table
        lost += w * q.lost
    return Joint(table, lost=lost)


def random_path_kl(p, rs: RandomSchedule) -> float:
    """:math:`\\sum_c \\pi(c)\\, \\mathrm{KL}_{\\text{path}}(c)` (``p`` a Joint or a profile)."""
    from .divergence import path_kl

    if not isinstance(rs, RandomSchedule):
        raise ValueError(f"plan: expected a RandomSchedule, got {type(rs).__name__}")
    return float(sum(w * path_kl(p, check_schedule(Schedule(c), rs.d, name="plan")) for c, w in rs.law.items()))


@dataclass(frozen=True)
class RandomizedOptimum:
    """The best randomized schedule (``schedule``, ``value``) against the best deterministic
    one with the same steps or expected forwards (``deterministic``, ``deterministic_value``);
    ``objective`` is ``"kl"`` (output law) or ``"path_kl"``; ``gain`` = deterministic − randomized;
    ``gap`` a certified bound on ``value`` minus the optimum (0 for the exact ``"path_kl"``
    solutions; :func:`_em_weights` for ``"kl"``)."""

    objective: str
    forwards: float
    schedule: RandomSchedule
    value: float
    deterministic: Schedule | None
    deterministic_value: float
    gap: float = 0.0

    @property
    def gain(self) -> float:
        return self.deterministic_value - self.value


def optimal_random_schedule(p: Joint, *, steps: int | None = None, forwards: float | None = None,
                            objective: str = "kl", tol: float = 1e-12, max_iter: int = 20000) -> RandomizedOptimum:
    """Best law on compositions (module docstring): ``steps=T`` (every composition drawn has T
    steps) or ``forwards=F`` (expected steps F, any mix; ``objective="path_kl"`` only, solved
    as a linear programme). ``objective="kl"`` minimizes KL(p ‖ q_π) by the EM iteration,
    accelerated, until the certified gap to the optimum is at most ``tol`` nats
    (:func:`_em_weights`); a ValueError if ``max_iter`` iterations do not reach it."""
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
    if objective not in ("kl", "path_kl"):
        raise ValueError(f"objective: expected 'kl' or 'path_kl', got {objective!r}")
    if (steps is None) == (forwards is None):
        raise ValueError("steps/forwards: give exactly one")
    d = p.d
    if forwards is not None:
        if objective != "path_kl":
            raise ValueError("objective: forwards= mixes step counts as a linear programme, for objective='path_kl'")
        if isinstance(forwards, bool) or not isinstance(forwards, numbers.Real) or not 1 <= forwards <= d:
            raise ValueError(f"forwards: expected a number of expected steps in [1, {d}], got {forwards!r}")
        return _lp(p, float(forwards))
    tol = real_arg(tol, "tol")
    if tol < 0:
        raise ValueError(f"tol: expected a gap in nats >= 0, got {tol!r}")
    max_iter = int_arg(max_iter, "max_iter", 1, 10**7)
    comps = compositions(d, steps)
    if objective == "path_kl":
        from .optimal import optimal_schedule
        from .profile import information_profile

        prof = information_profile(p)
        best = optimal_schedule(prof, steps)
        v = random_path_kl(prof, RandomSchedule.deterministic(best))
        return RandomizedOptimum("path_kl", float(steps), RandomSchedule.deterministic(best), v, best, v)
    from .divergence import kl
    from .samplers import sampler_law

    laws = [sampler_law(p, Schedule(c)) for c in comps]
    Q = np.stack([q.table.ravel() for q in laws])  # (C, n)
    P = p.table.ravel()
    sup = P > 0
    Qs, Ps = Q[:, sup], P[sup]
    kls = np.array([kl(p, q) for q in laws])
    i0 = int(np.argmin(kls))
    pi, gap = _em_weights(Qs, Ps, tol, int(max_iter))
    pi[pi < 1e-10] = 0.0  # EM leaves vanishing weights on the boundary; the value is recomputed below
    pi = pi / pi.sum()
    with np.errstate(divide="ignore"):  # a point left uncovered by the pruning: gap inf, value inf below
        gap = max(0.0, math.log(float(np.max(Qs @ (Ps / (pi @ Qs))))))  # the certificate, at the pruned weights
    rs = RandomSchedule({c: w for c, w in zip(comps, pi) if w > 0})
    value = kl(p, random_schedule_law(p, rs))
    if value > kls[i0]:  # the EM starts inside the simplex; never report worse than a vertex
        rs, value = RandomSchedule({comps[i0]: 1.0}), float(kls[i0])
    return RandomizedOptimum("kl", float(steps), rs, float(value), Schedule(comps[i0]), float(kls[i0]), gap)


def _em_weights(Q: np.ndarray, P: np.ndarray, tol: float, max_iter: int) -> tuple[np.ndarray, float]:
    r"""Weights :math:`\pi` on the rows of ``Q`` (C, n) minimizing
    :math:`f(\pi) = \sum_x P(x) \log(P(x) / (\pi Q)(x))` (``P`` > 0 on the n columns), and a
    certified bound on :math:`f(\pi) - \min f`.

    The EM map :math:`\pi_c \leftarrow \pi_c r_c`, :math:`r_c = \sum_x P(x) Q_c(x) / (\pi Q)(x)`,
    decreases f but can crawl (steps below 1e-13 nats long before the optimum), so each round
    takes two EM steps and the SQUAREM extrapolation (Varadhan & Roland 2008, Scand. J. Stat.
    35, scheme S3), kept only when it lies inside the simplex and does not increase f. It stops
    when the bound of Cover (1984, IEEE Trans. IT 30, Theorem 1 — the log-optimal portfolio)
    is at most ``tol``: by Jensen, for every :math:`\pi^*`,

    .. math:: f(\pi) - f(\pi^*) = \sum_x P \log \frac{(\pi^* Q)(x)}{(\pi Q)(x)}
              \le \log \sum_c \pi^*_c r_c \le \log \max_c r_c .
    """
    C = Q.shape[0]

    def em(w):
        w = w * (Q @ (P / (w @ Q)))
        return w / w.sum()

    def f(w):
        return float(np.sum(P * np.log(P / (w @ Q))))

    pi = np.full(C, 1.0 / C)
    for _ in range(max_iter):
        gap = math.log(float(np.max(Q @ (P / (pi @ Q)))))
        if gap <= tol:
            return pi, max(gap, 0.0)
        p1 = em(pi)
        p2 = em(p1)
        r, v = p1 - pi, p2 - 2 * p1 + pi
        nv = float(np.linalg.norm(v))
        cand = p2
        if nv > 0:
            a = min(-float(np.linalg.norm(r)) / nv, -1.0)
            x = pi - 2 * a * r + a * a * v
            if np.all(x > 0):
                x = em(x / x.sum())
                if f(x) <= f(p2):
                    cand = x
        pi = cand
    raise ValueError(f"max_iter: the EM did not certify a gap <= tol={tol:g} nats in {max_iter} iterations "
                     f"(gap {gap:.3g}); raise max_iter or tol")


def _lp(p: Joint, F: float) -> RandomizedOptimum:
    from scipy.optimize import linprog

    from .divergence import path_kl
    from .optimal import optimal_schedule
    from .profile import information_profile

    prof = information_profile(p)
    d = p.d
    best = {T: optimal_schedule(prof, T) for T in range(1, d + 1)}  # per step count, the optimum
    vals = np.array([path_kl(prof, best[T]) for T in range(1, d + 1)])
    Ts = np.arange(1, d + 1, dtype=float)
    res = linprog(vals, A_eq=np.stack([np.ones(d), Ts]), b_eq=[1.0, F], bounds=[(0, 1)] * d, method="highs")
    if not res.success:  # pragma: no cover - the feasible set is a non-empty segment
        raise ValueError(f"forwards: the linear programme failed ({res.message})")
    pi = np.where(res.x > 1e-12, res.x, 0.0)
    pi = pi / pi.sum()
    rs = RandomSchedule({best[T].sizes: float(w) for T, w in zip(range(1, d + 1), pi) if w > 0})
    value = float(pi @ vals)
    det = None
    dv = math.inf
    if abs(F - round(F)) < 1e-12:
        det = best[int(round(F))]
        dv = float(vals[int(round(F)) - 1])
    return RandomizedOptimum("path_kl", F, rs, value, det, dv)
