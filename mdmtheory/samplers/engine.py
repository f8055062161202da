r"""Exact law of any planner-driven sampler, by propagating mass over states (A, x_A).

At step t the sampler is in a state (A, x_A) with some mass :math:`m(A, x_A)`; the planner
picks B (possibly depending on :math:`x_A`) and the sampler draws each :math:`x_j`,
:math:`j \in B`, independently from :math:`p(x_j \mid x_A)`:

.. math::

    m(A \cup B, x_{A \cup B}) \mathrel{+}= m(A, x_A)\, w_B(x_A)
    \prod_{j \in B} p(x_j \mid x_A).

The mass reaching a state depends only on the values on A, so one array over
:math:`x_A` per revealed set suffices (docs/design.md §3). Arrays are kept in *keepdims* form
(length K on the axes of A, 1 elsewhere), so every update is a broadcast product.

Zero-probability prefixes: mass at an :math:`x_A` with :math:`p(x_A) = 0` (reachable only
through a factorized step) cannot continue — the exact conditionals are undefined there —
and is moved to ``lost`` (docs/design.md §6).

With ``trajectory=True`` the engine also propagates the exact one-at-a-time path measure
:math:`\pi(A \mid x_A) p(x_A)` and accumulates

.. math::

    \mathrm{KL}_{\text{path}} = \mathbb{E}_{\text{exact}} \sum_t
    \mathrm{TC}(X_{B_t} \mid X_{A_t} = x_{A_t}),

the KL between the trajectory laws (exact vs factorized), step by step. For the random
planner it equals the profile formula (proofs/path_kl_identity.md); for deterministic
planners it equals KL(p‖q) pointwise along the single path of each x.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import rel_entr

from ..joint import Joint, Marginals
from ..schedules import Grid, check_schedule
from .planners import BernoulliPlanner, StepContext, resolve_planner

__all__ = ["ExactRun", "exact_run", "sampler_law", "MAX_STATE_ENTRIES"]

#: Largest (K+1)**d (total size of all marginals / states) the exact engine accepts.
MAX_STATE_ENTRIES = 1 << 25
_WEIGHT_TOL = 1e-9


@dataclass(frozen=True)
class ExactRun:
    """Everything the exact engine computes in one pass.

    Attributes
    ----------
    law : the output law q (a :class:`Joint`; its ``lost`` is the mass stuck at
        zero-probability prefixes).
    reveal_steps : (d, n_cols) array; ``[j, t]`` is the probability (under the sampler)
        that position j is revealed at step t. Column 0 is the exact initialization (grids
        with t_0 > 0), columns 1.. the planner's steps, and for grids the last column the
        exact completion above t_N.
    step_counts : ``[t]`` = probability that the last token is revealed at step t
        (same column convention).
    path_kl : trajectory KL (``trajectory=True``), else None.
    step_kl : its contribution of each column, else None.
    """

    law: Joint
    reveal_steps: np.ndarray
    step_counts: np.ndarray
    path_kl: float | None = None
    step_kl: np.ndarray | None = None

    @property
    def lost(self) -> float:
        return self.law.lost

    @property
    def expected_steps(self) -> float:
        """Mean index of the step that reveals the last token (given it finishes)."""
        t = np.arange(self.step_counts.shape[0])
        return float((t * self.step_counts).sum() / self.step_counts.sum())


def _check_size(p: Joint) -> None:
    n = (p.K + 1) ** p.d
    if n > MAX_STATE_ENTRIES:
        raise ValueError(
            f"p: exact sampler laws need (K+1)**d = {n} state entries, above the limit "
            f"{MAX_STATE_ENTRIES} (d={p.d}, K={p.K}); use Monte Carlo simulation for larger laws"
        )


def _log_terms(pAB: np.ndarray, pA: np.ndarray, conds: list) -> np.ndarray:
    r""":math:`p_{AB} \log(p_{AB} / (p_A \prod_j c_j))` in log space (no underflow), 0 where
    :math:`p_{AB} = 0`; where :math:`p_{AB} > 0` every factor is positive."""
    pos = pAB > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        log_den = np.log(pA) + sum(np.log(c) for c in conds)
        diff = np.where(pos, np.log(pAB) - log_den, 0.0)
    return np.where(pos, pAB * diff, 0.0)


def _add(states: dict, key: int, arr) -> None:
    prev = states.get(key)
    states[key] = arr if prev is None else prev + arr


def exact_run(p: Joint, plan=None, planner="random", *, trajectory: bool = False) -> ExactRun:
    """Run the exact law engine (see the module docstring).

    Parameters
    ----------
    p : the data law.
    plan : a :class:`Schedule` (sizes k_t; random or schedule-driven planners), a
        :class:`Grid` (Bernoulli-subset sampler; ``planner`` must be ``"random"`` or
        ``"bernoulli"``), or None for planners that choose their own sizes.
    planner : a registered name (``"random"``, ...) or a planner object.
    trajectory : also compute the trajectory (path) KL and its per-step parts.
    """
    if not isinstance(p, Joint):
        raise ValueError(f"p: expected a mdmtheory.Joint, got {type(p).__name__}")
    if p.lost:
        raise ValueError("p: has lost mass; the data law must be normalized")
    _check_size(p)
    d, K = p.d, p.K
    full = (1 << d) - 1
    marg = Marginals(p.table)
    ones = np.ones((1,) * d)

    # ---- plan: sizes per step, initial states, completion --------------------------
    start = {0: 1.0}  # P(A revealed before the first step)
    complete = False
    if isinstance(plan, Grid):
        if not (isinstance(planner, str) and planner in ("random", "bernoulli")):
            raise ValueError(
                f"planner: a Grid drives the Bernoulli-subset sampler; use planner='random' "
                f"(or 'bernoulli'), got {planner!r}"
            )
        planner_obj = BernoulliPlanner(plan.betas)
        sizes: list = [None] * plan.steps
        t0 = plan.times[0]
        complete = plan.times[-1] < 1.0
        if t0 > 0.0:  # exact initialization: A ~ Bernoulli(t_0) per position, x_A ~ p_A
            start = {A: t0 ** A.bit_count() * (1.0 - t0) ** (d - A.bit_count()) for A in range(full + 1)}
    else:
        planner_obj = resolve_planner(planner)
        if getattr(planner_obj, "allows_empty", False):
            raise ValueError(
                "plan: a planner that may reveal nothing in a step (Bernoulli) needs a Grid; "
                "pass mt.Grid(times) as plan"
            )
        if plan is None:
            if getattr(planner_obj, "needs_schedule", True):
                raise ValueError(f"plan: planner {getattr(planner_obj, 'name', planner)!r} needs a Schedule")
            sizes = [None] * d  # at least one token per step: d steps at most
        else:
            sizes = list(check_schedule(plan, d, name="plan").sizes)
    allows_empty = bool(getattr(planner_obj, "allows_empty", False))
    n_cols = len(sizes) + 1 + int(complete)
    reveal = np.zeros((d, n_cols))
    finish = np.zeros(n_cols)
    step_kl = np.zeros(n_cols) if trajectory else None
    # exact path measure pi(A | x_A): the initialization is exact, so pi = P(A) there
    states: dict[int, np.ndarray] = {A: w * (marg(A) if A else ones) for A, w in start.items()}
    pis = {A: w * ones for A, w in start.items()} if trajectory else {}
    for A, m in states.items():  # column 0: tokens drawn at initialization
        for j in range(d):
            if A >> j & 1:
                reveal[j, 0] += m.sum()
    q = np.zeros(p.table.shape)
    lost = 0.0

    # ---- steps ------------------------------------------------------------------------
    for t, size in enumerate(sizes):
        moved: dict[int, float] = {}
        new: dict[int, np.ndarray] = {}
        new_pi: dict[int, np.ndarray] = {}
        for A, m in states.items():
            if A == full:
                q += m
                finish[t] += m.sum()
                continue
            pA = marg(A)
            reach = pA > 0
            all_reach = bool(reach.all())
            if not all_reach:  # mass at zero-probability prefixes cannot continue
                lost += float(np.where(reach, 0.0, m).sum())
                m = np.where(reach, m, 0.0)
            m_total = float(m.sum())
            free = tuple(j for j in range(d) if not A >> j & 1)
            if size is not None and size > len(free):
                raise ValueError(f"plan: step {t} asks for {size} tokens, only {len(free)} are masked")
            conds: dict[int, np.ndarray] = {}

            def cond(j, A=A, pA=pA, reach=reach, all_reach=all_reach, conds=conds):
                c = conds.get(j)
                if c is None:
                    pAj = marg(A | (1 << j))
                    if all_reach:
                        c = pAj / pA
                    else:
                        c = np.divide(pAj, pA, out=np.zeros(pAj.shape), where=reach)
                    conds[j] = c
                return c

            ctx = StepContext(t, A, size, d, K, free, reach, cond)
            prod = {0: m}
            prod_p = {0: pA} if trajectory else None

            def product(B, base):
                # m * prod_{j in B} p(x_j | x_A), built from the product without B's top position
                out = base.get(B)
                if out is None:
                    top = B.bit_length() - 1
                    out = product(B & ~(1 << top), base) * cond(top)
                    base[B] = out
                return out

            total_w = 0.0
            for B, w in planner_obj.moves(ctx):
                if B & ~full:
                    raise ValueError(f"planner: proposed B={B:#b} with positions outside 0..{d - 1}")
                if B & A:
                    raise ValueError(f"planner: proposed B={B:#b} overlapping the revealed set {A:#b}")
                if B == 0 and not allows_empty:
                    raise ValueError("planner: proposed an empty reveal set")
                if size is not None and B.bit_count() != size:
                    raise ValueError(f"planner: proposed {B.bit_count()} tokens at a step of size {size}")
                if isinstance(w, float):  # fast path: x-independent weight
                    if not w >= 0.0:
                        raise ValueError(f"planner: proposed a negative or NaN weight for B={B:#b}")
                    total_w += w
                    if w == 0.0:
                        continue
                else:
                    w = np.asarray(w, dtype=np.float64)
                    if not np.all(w >= 0):
                        raise ValueError(f"planner: proposed a negative or NaN weight for B={B:#b}")
                    total_w = total_w + w
                    if not w.any():
                        continue
                mw = product(B, prod) * w
                key = A | B
                prev = new.get(key)
                if prev is None:
                    new[key] = mw
                else:
                    prev += mw  # both have the full keepdims shape of A | B
                # mass moved by B: the conditionals sum to 1 on reachable x_A, where m lives
                mass_b = w * m_total if isinstance(w, float) else float((m * w).sum())
                moved[B] = moved.get(B, 0.0) + mass_b
                if trajectory:
                    piw = pis[A] * w
                    _add(new_pi, key, piw)
                    if B & (B - 1):  # |B| >= 2; one token has TC = 0 exactly
                        pAB = marg(key)
                        terms = rel_entr(pAB, product(B, prod_p))
                        if not np.all(np.isfinite(terms)):  # the product of conditionals underflowed
                            terms = _log_terms(pAB, pA, [cond(j) for j in range(d) if B >> j & 1])
                        kl = float(np.sum(piw * terms))
                        step_kl[t + 1] += kl
            bad = np.abs(np.asarray(total_w) - 1.0) > _WEIGHT_TOL
            if np.any(bad & reach):
                raise ValueError(
                    f"planner: weights of the moves from state {A:#b} do not sum to 1 "
                    f"(got {np.asarray(total_w).ravel()[:4]})"
                )
        for B, mass in moved.items():
            reveal[[j for j in range(d) if B >> j & 1], t + 1] += mass
        states, pis = new, new_pi
    # ---- finished, completion -------------------------------------------------------
    last = len(sizes)
    for A, m in states.items():
        if A == full:
            q += m
            finish[last] += m.sum()
        elif complete:
            pA = marg(A)
            reach = pA > 0
            lost += float(np.where(reach, 0.0, m).sum())
            # m * p(x | x_A): the conditional (<= 1) first, so a marginal of 1e-300 cannot
            # overflow m / p(x_A) before the product (issue 17: NaN on a valid law)
            draw = m * np.divide(p.table, pA, out=np.zeros(p.table.shape), where=reach)
            q += draw
            finish[last + 1] += draw.sum()
            for j in range(d):
                if not A >> j & 1:
                    reveal[j, last + 1] += draw.sum()
        else:
            raise ValueError(
                f"planner: state {A:#b} still has masked positions after {last} steps "
                "(a planner that chooses its own sizes must reveal at least one token per step)"
            )
    underflow = (p.table > 0) & (q == 0)
    if np.any(underflow):
        # p(x) > 0 implies q(x) > 0 for every planner (each step along x's own path has
        # positive conditionals), so q(x) = 0 here is float64 underflow, not a zero of q
        x = tuple(int(i) for i in np.argwhere(underflow)[0])
        raise ValueError(
            f"p: the sampler law underflows float64: q{x} is a product of conditionals below "
            f"1e-308 while p{x} = {p.table[x]:.3g} > 0, so q and KL(p||q) cannot be represented; "
            "entries this small are beyond the exact engine (drop or merge them)"
        )
    law = Joint(q, lost=lost)
    return ExactRun(
        law=law,
        reveal_steps=reveal,
        step_counts=finish,
        path_kl=float(step_kl.sum()) if trajectory else None,
        step_kl=step_kl,
    )


def sampler_law(p: Joint, plan=None, planner="random") -> Joint:
    """Exact output law q of a sampler (see :func:`exact_run`).

    >>> import mdmtheory as mt
    >>> q = mt.sampler_law(mt.families.parity(3), mt.Schedule((3,)))
    >>> round(mt.kl(mt.families.parity(3), q), 6)  # = TC = log 2
    0.693147
    """
    return exact_run(p, plan, planner).law
