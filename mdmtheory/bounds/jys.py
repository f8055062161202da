r"""Jump Your Steps (JYS): its KL upper bound (KLUB) and its schedule search, exact.

Source: Park, Lai, Hayakawa, Takida & Mitsufuji, *Jump Your Steps: Optimizing Sampling
Schedule of Discrete Diffusion Models*, arXiv 2410.07761 (ICLR 2025). Of the paper's text only
the opening of the arXiv HTML page (abstract, first sentences of §1) and third-party summaries
could be read (the KLUB "via Girsanov's theorem for CTMCs", a "hierarchical breakdown"
search, "Algorithm 1: computation of KLUB(Q^s_{t→u} ‖ Q^s_u)"); the formulas below are read
from the authors' code, ``enkeejunior1/jump-your-steps`` at commit 3de34f6: ``jys.py``
(``klub_algorithm1_t_q_data``, ``golden_section_algo``), ``main.py`` (the search) and
``ddms/sedd.py`` (``Scheduler``, ``EulerScheduler``: the absorbing rates and the Euler step).
No code is copied; what it computes is rewritten here for an exact law.

**Setting** (masked/absorbing case, log-linear noise, ``ddms/sedd.py``). JYS time t runs from
1 (all masked) to 0; position j is masked at time t with probability t (the code's
:math:`1 - e^{-\bar\sigma(t)} = (1 - \epsilon) t`; here ε = 0), the masks nested in t (the
code draws :math:`x_{t_1}` and :math:`x_{t_2}` with the same generator seed). With exact
conditionals the reverse rate of a masked position j to token v is
:math:`R_t(j, v) = \sigma(t)\frac{1 - m}{m} p(v \mid x_A) = p(v \mid x_A)/t`. The Euler step
from t to u < t (``EulerScheduler.step``: identity + (t − u) R) reveals each masked position
with probability (t − u)/t, its value from :math:`p(\cdot \mid x_A)`: the package's
Bernoulli-subset grid in reveal time r = 1 − t (:class:`~mdmtheory.Grid`).

**The code's KLUB gain** (``klub_algorithm1_t_q_data``, times t1 > t2 > t3): with
:math:`x_{t_1}, x_{t_2}` from the nested forward process,
:math:`g = (t_2 - t_3)\,\mathbb{E}\sum_{j \in M_{t_2}}\sum_v R_{t_2}(j,v)\log(R_{t_2}(j,v)/R_{t_1}(j,v))`
(the Girsanov integrand of the interval [t3, t2] with the rate frozen at t1 instead of t2,
evaluated at its start; the code drops the :math:`-R_{t_2} + R_{t_1}` terms of the CTMC
Girsanov formula). Exactly, with the gain polynomial h of W26 (:func:`~mdmtheory.information.ugc.gain`):

.. math::

    g(t_1, t_2, t_3) = (t_2 - t_3)\,[h(1 - t_2) - h(1 - t_1) + d\,c(t_1/t_2)],

c(ρ) = log ρ (``form="code"``), log ρ − 1 + 1/ρ (``"girsanov"``, the full formula) or 0
(``"kl"``) — derived here: :math:`\sum_v R_2 \log(R_2/R_1) = (1/t_2)[\mathrm{KL}(p_j(\cdot|x_{A_2})
\| p_j(\cdot|x_{A_1})) + \log(t_1/t_2)]`, whose mean over the nested masks is
:math:`I(X_j; X_{A_2 \setminus A_1} \mid X_{A_1})`, and
:math:`\sum_j P(j \in M_{t_2})\,\mathbb{E}\,I = t_2 (h(1-t_2) - h(1-t_1))`. The ``"kl"`` gain is
exactly the drop of the path KL when t2 is inserted into the step t1 → t3
(Γ(a, c) − Γ(a, b) − Γ(b, c) = (c − b)(h(b) − h(a)) in reveal time). The timing term
d (t2 − t3) log(t1/t2) does not depend on the law.

**The KLUB of a schedule** 1 = t_0 > … > t_N: per interval (u, t], the Girsanov KL between
the true reverse CTMC and the CTMC with rates frozen at t,
:math:`\int_u^t \mathbb{E}\sum_{j\in M_s}\sum_v [R_s \log(R_s/\hat R) - R_s + \hat R]\,ds`
(``"girsanov"``) or without :math:`-R_s + \hat R` (``"code"``). Derived here: it equals
:math:`\Gamma_{umask}(1 - t, 1 - u) + d\,\tau(t, u)` with
:math:`\tau = (t^2 - u^2)/(2t) - u\log(t/u)` (girsanov) or :math:`(t - u) - u\log(t/u)`
(code), so KLUB = path KL + d Σ τ ≥ path KL ≥ KL(p ‖ q) (:func:`jys_klub`). The τ part is the
mismatch of the frozen total jump rate (1/t against 1/s), which the Euler step of the code does
not make (its reveal probability (t − u)/t is exact): it is what makes the KLUB loose, and it
is the same for every law (at a product law the path KL is 0 and the KLUB d Σ τ > 0).

**The search** (``main.py``, ``scheduler_name="euler"``): candidate times
``linspace(1, 1e-5, src + 1)``; start from the one step [1, 1e-5]; each round splits every
interval (v1, v3) at the v2 that **maximizes** the code's gain (``golden_section_algo`` on
−g over [v3 + ε, v1 − ε], ε = 1e-3, tolerance 0.25/src, 32 iterations, the best evaluated
point kept), snaps the times to the candidates and applies the code's two "manual
corrections" (indices at least 2 apart before a round, strictly increasing after it); after
log2(N) rounds the schedule has N steps (:func:`jys_schedule`). ``examples/findings.py``
(region ``jys``) and ``benchmarks/tightness_jys.py`` set the result beside the package's
optimal grid (:func:`~mdmtheory.optimal.optimal_grid`, same end points), the uniform grid and
the optimal card schedule (:func:`~mdmtheory.optimal.optimal_schedule`, same number of
steps), all exact (the optimal wing sits beside this one, so the comparison is not here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._estimate import Record
from .._validate import choice_arg, int_arg, real_arg
from ..information.profile import as_profile
from ..information.ugc import gain, gamma_umask
from ..schedules.plans import Grid
from ._core import Bound, OUR_READING
from .registry import random_order_grid, register_rows

__all__ = [
    "KLUB_FORMS",
    "jys_gain",
    "jys_klub",
    "JysSearch",
    "jys_schedule",
]

SOURCE = ("Park et al., Jump Your Steps, arXiv 2410.07761 (ICLR 2025); KLUB as computed by "
          "enkeejunior1/jump-your-steps@3de34f6 jys.py klub_algorithm1_t_q_data, search main.py")
#: ``"code"``: the Girsanov integrand without -R + R' (what jys.py sums); ``"girsanov"``: the
#: full CTMC Girsanov integrand; ``"kl"``: its KL part only (= the exact path KL).
KLUB_FORMS = ("code", "girsanov", "kl")
#: main.py's candidate grid ends at t = 1e-5 (``sample_eps``); its golden-section bracket is
#: shrunk by ``args.eps`` = 1e-3 at both ends.
SAMPLE_EPS = 1e-5
BRACKET_EPS = 1e-3
_PHI = 1.618  # jys.py's constant (not the exact golden ratio)


def _form(form) -> str:
    return choice_arg(form, "form", KLUB_FORMS)


def _rate_term(rho: float, form: str) -> float:
    """c(ρ) of the gain, ρ = t1/t2 >= 1."""
    if form == "kl":
        return 0.0
    c = math.log(rho)
    return c if form == "code" else c - 1.0 + 1.0 / rho


def _timing(t: float, u: float, form: str) -> float:
    r""":math:`\tau(t, u)`: the integral over s in (u, t] of the timing part, per position."""
    if form == "kl":
        return 0.0
    ulog = 0.0 if u == 0.0 else u * math.log(t / u)
    return (t - u) - ulog if form == "code" else (t * t - u * u) / (2.0 * t) - ulog


def jys_gain(p, t1, t2, t3, *, form: str = "code") -> float:
    r"""The exact value of JYS's ``klub_algorithm1`` for times 1 >= t1 > t2 > t3 >= 0 (JYS
    time: the mask probability), with the law's exact conditionals as the model:
    :math:`(t_2 - t_3)[h(1 - t_2) - h(1 - t_1) + d\,c(t_1/t_2)]` (module docstring; ``form``
    picks c). The search maximizes it over t2."""
    prof = as_profile(p)
    form = _form(form)
    t1, t2, t3 = (real_arg(v, n) for v, n in ((t1, "t1"), (t2, "t2"), (t3, "t3")))
    if not 0.0 <= t3 < t2 < t1 <= 1.0:
        raise ValueError(f"t1, t2, t3: need 0 <= t3 < t2 < t1 <= 1 (JYS time runs down), got {t1}, {t2}, {t3}")
    h = gain(prof, np.array([1.0 - t2, 1.0 - t1]))
    return float((t2 - t3) * (h[0] - h[1] + prof.d * _rate_term(t1 / t2, form)))


def _grid_arg(grid) -> Grid:
    if not isinstance(grid, Grid):
        raise ValueError(f"grid: expected a mdmtheory.Grid (reveal times r = 1 - JYS time), got {type(grid).__name__}")
    return grid


def jys_klub(p, grid, *, form: str = "girsanov") -> Bound:
    r"""JYS's KL upper bound of a Bernoulli grid (the Euler/τ-leaping schedule 1 − r_k),
    exact: :math:`\sum_k [\Gamma_{umask}(r_k, r_{k+1}) + d\,\tau(1 - r_k, 1 - r_{k+1})]`
    (module docstring), bounding the path KL and so the output-law KL. ``form="kl"`` drops
    the timing part (then it *is* the path KL). Status ``our reading``: the paper's definition
    could not be read; this is the Girsanov integral its code estimates."""
    prof = as_profile(p)
    grid = _grid_arg(grid)
    form = _form(form)
    r = grid.times
    kl_part = sum(gamma_umask(prof, a, b) for a, b in zip(r[:-1], r[1:]))
    timing = prof.d * sum(_timing(1.0 - a, 1.0 - b, form) for a, b in zip(r[:-1], r[1:]))
    return Bound(
        f"jys_klub_{form}", float(kl_part + timing), "path_kl", SOURCE + f"; form {form!r}",
        "KLUB = sum over steps of the Girsanov KL between the true reverse CTMC and the rates frozen at the "
        "step's start = path KL + d * sum tau",
        ("masked (absorbing) diffusion, log-linear noise, exact conditionals", "Euler/tau-leaping steps = Bernoulli grid"),
        status=OUR_READING,
    )


# -- the search (main.py, Euler branch) ------------------------------------------------------
def _golden_evaluations(f, a: float, c: float, err: float, max_iter: int) -> dict:
    """Every point jys.py's ``golden_section_algo`` evaluates, with f there (rewritten)."""
    b = a + (c - a) / (1 + _PHI)
    fa, fb, fc = f(a), f(b), f(c)
    seen = {a: fa, b: fb, c: fc}
    n = 0
    while c - a > err and n < max_iter:
        if b - a > c - b:
            x, left = b - (b - a) / (1 + _PHI), True
        else:
            x, left = b + (c - b) / (1 + _PHI), False
        fx = f(x)
        seen[x] = fx
        if fx < fb:
            b, fb = x, fx
        elif left:
            a, fa = x, fx
        else:
            c, fc = x, fx
        n += 1
    return seen


@dataclass(frozen=True)
class JysSearch(Record):
    """Result of :func:`jys_schedule`.

    Attributes
    ----------
    grid : the schedule as a package :class:`~mdmtheory.Grid` (reveal times r = 1 − t).
    times : the JYS times 1 = t_0 > … > t_N (decreasing).
    indices : their indices in the candidate grid ``linspace(1, 1e-5, src_steps + 1)``.
    src_steps, form : the search's settings.
    """

    grid: Grid
    times: tuple[float, ...]
    indices: tuple[int, ...]
    src_steps: int
    form: str


def jys_schedule(p, steps: int, *, src_steps: int = 1024, form: str = "code", max_iter: int = 32) -> JysSearch:
    r"""JYS's hierarchical schedule search run exactly: ``main.py``'s Euler branch with the
    exact gain :func:`jys_gain` in place of the Monte Carlo ``klub_algorithm1_t_q_data``.

    ``steps`` must be a power of two (the search doubles the steps each round); ``src_steps``
    is ``--src_num_function_eval`` (the candidate grid), ``max_iter`` ``--max_iter``.
    ``form="code"`` is what the code maximizes; ``"kl"`` the same search on the exact path-KL
    gain. The code's second correction can push an index to src_steps + 1 (an IndexError
    there); here it stops at src_steps, and a schedule with repeated times is refused.
    """
    prof = as_profile(p)
    form = _form(form)
    steps = int_arg(steps, "steps", 1, 1 << 16)
    if steps & (steps - 1):
        raise ValueError(f"steps: the JYS search doubles the steps each round, so steps must be a power of two, got {steps}")
    src = int_arg(src_steps, "src_steps", 2, 1 << 20)
    if src < 2 * steps:
        raise ValueError(f"src_steps: need at least 2 * steps = {2 * steps} candidate intervals, got {src}")
    max_iter = int_arg(max_iter, "max_iter", 1, 10**6)
    space = np.linspace(1.0, SAMPLE_EPS, src + 1)
    err = 0.25 / src
    sched = [0, src]
    for _ in range(int(math.log2(steps))):
        for i in range(len(sched) - 1):
            if sched[i + 1] - sched[i] < 2:
                sched[i + 1] = min(sched[i] + 2, src)
        for i in range(len(sched) - 1, 0, -1):
            if sched[i] - sched[i - 1] < 2:
                sched[i - 1] = max(sched[i] - 2, 0)
        v = [float(space[i]) for i in sched]
        new = []
        for v1, v3 in zip(v[:-1], v[1:]):
            seen = _golden_evaluations(lambda v2, v1=v1, v3=v3: -jys_gain(prof, v1, v2, v3, form=form),
                                       v3 + BRACKET_EPS, v1 - BRACKET_EPS, err, max_iter)
            new += [v1, min(seen, key=seen.get)]
        new.append(v[-1])
        sched = [int(np.argmin(np.abs(space - x))) for x in new]
        for i in range(len(sched) - 1):
            if sched[i + 1] - sched[i] < 1:
                sched[i + 1] = min(sched[i] + 1, src)
    if any(b <= a for a, b in zip(sched[:-1], sched[1:])):
        raise ValueError(f"src_steps: the search left repeated times {sched}; use a finer candidate grid")
    times = tuple(float(space[i]) for i in sched)
    return JysSearch(Grid(tuple(1.0 - t for t in times)), times, tuple(sched), src, form)


# -- rows of compare (docs/design.md, "How to add a bound") ----------------------------------
@register_rows("jys_klub", source=__name__, order=180, applies=random_order_grid)
def _klub_rows(ctx):
    """The KLUB in its Girsanov and code forms, against the path KL."""
    return [ctx.row(jys_klub(ctx.profile, ctx.plan), ctx.path_kl),
            ctx.row(jys_klub(ctx.profile, ctx.plan, form="code"), ctx.path_kl)]
