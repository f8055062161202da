r"""Tuning a rule's parameter to a forward budget from a model and data: the estimated half of
:func:`mdmtheory.optimal.tune` (issue 37 §3).

For each value v on the grid, the rule ``rule(v)`` runs along the path of every data row x
(x from ``samples``) with the model's conditionals :math:`\hat p(\cdot \mid x_A)`, and
:func:`mdmtheory.bridge.estimate_factorization_error` sums the pointwise per-step total
correlation

.. math:: L_v(x) = \sum_t \Bigl[\log \hat p(x_{B_t} \mid x_{A_t})
          - \sum_{j \in B_t} \log \hat p(x_j \mid x_{A_t})\Bigr]

(the joint term by the chain rule inside the step). With the exact model and x ~ p,
:math:`\mathbb E L_v` is the rule's KL(p‖q_v) when no tie is split and its path KL otherwise
(:func:`mdmtheory.estimate_kl`, the same estimator on an oracle), so the estimate is the
path KL column of :func:`mdmtheory.optimal.tune`. The rule's forwards are its steps along
the same paths plus the pipeline's extra forwards (SGLang's files: one final forward,
``extra_forwards``), with the standard error of the per-row step counts. Every value is
estimated on the same rows and the same seed (common random numbers: two values that act
alike on every row give identical estimates).

The pick. With ``forwards=F``: among the values whose estimated forwards are <= F, the
smallest estimated path KL (ties: fewer forwards). It is **refused** (ValueError naming the
fix: more samples) where the pick cannot be told from another feasible value: their normal
confidence intervals overlap (the rule of :func:`mdmtheory.design.separation`: two
zero-width intervals are never tied, and values with identical estimates are the same rule on
these rows, not competitors), or the pick's forwards interval contains F. With
``target_kl=ε``: the fewest estimated forwards among the values whose path-KL interval lies
below ε (upper end <= ε), refused where the pick's forwards interval overlaps another such
value's. Choosing on the same rows makes the intervals optimistic; confirm on fresh rows.
On a trained model the estimate can fall below 0 beyond its noise (the model's conditionals
are not those of one joint law, or the rows are not its samples): the ``note`` says so, and the
value is then the model's factorization error along the data, not a KL.
A revising rule (``"joint_threshold"``) or a sample-then-select one (``"diffusers_threshold"``) has
no pointwise log-ratio along the data's path: refused (use the exact
:func:`mdmtheory.optimal.tune` on a law, or simulate).
"""

from __future__ import annotations

import math

import numpy as np

from ..optimal.tune import check_budget, resolve_rule, Tuning
from .._validate import INT_MAX, int_arg, normal_quantile_arg, row_length, samples_array
from ..samplers.base import as_sampler
from .profile import check_samples_for_model

__all__ = ["estimate_tune"]


def _overlap(a, b) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def estimate_tune(model, samples, planner, *, forwards=None, target_kl=None, values=None, ties=None,
                  n: int | None = None, seed: int = 0, confidence: float = 0.95) -> Tuning:
    r""":func:`mdmtheory.optimal.tune` from a model and data, with confidence intervals.

    Parameters
    ----------
    model : a torch model the bridge reads (:func:`mdmtheory.bridge.as_masked_model`: a
        TinyMDM, an ``nn.Module`` with ``mask_id``, ``bridge.ExactModel(p)``).
    samples : (n_rows, d) clean data rows.
    planner, values, ties : as in :func:`mdmtheory.optimal.tune` (not ``"joint_threshold"``).
    forwards, target_kl : the budget (one of them, or neither: the curve alone).
    n : draws per value (default: one per row); seed : the draws' seed (the same for every
        value); confidence : the level of the normal intervals.

    Returns a :class:`~mdmtheory.optimal.Tuning` with ``method="estimated"``: ``path_kl``
    the estimates, ``kl`` the same where the rule splits no tie on the rows (kind ``"kl"``)
    else None, ``kl_stderr`` and ``forwards_stderr`` their standard errors.
    """
    from .. import bridge

    budget, limit = check_budget(forwards, target_kl)
    name, param, grid, make, plan_of = resolve_rule(planner, values, ties)
    if name in ("joint_threshold", "diffusers_threshold"):
        raise ValueError(f"planner: {name} commits values it drew (or revises them), so no pointwise log-ratio along "
                         "the data's path is its KL; tune it exactly on a law (mdmtheory.optimal.tune)")
    x = samples_array(samples, "samples")
    row_length(x.shape[1])
    seed = int_arg(seed, "seed", 0, INT_MAX)
    if n is not None:
        n = int_arg(n, "n", 2, 10 ** 8)
    z = normal_quantile_arg(confidence)
    mm = bridge.as_masked_model(model)
    x = check_samples_for_model(model, x)
    est, fw, fse, kinds = [], [], [], []
    for v in grid:
        try:
            s = as_sampler(make(v), plan=None)
        except ValueError as e:
            raise ValueError(f"values: {param}={v:g} is not a valid value for {name} ({e})") from None
        if not s.capabilities.positions:
            raise ValueError(f"planner: {s.name!r} commits values it drew (or revises them), so no pointwise "
                             "log-ratio along the data's path is its KL; tune it exactly on a law (mdmtheory.optimal.tune)")
        e = bridge.estimate_factorization_error(mm, x, None, s, n=n, seed=seed)
        est.append(e)
        fw.append(e.mean_steps + getattr(s, "extra_forwards", 0))
        fse.append(e.steps_stderr)
        kinds.append(e.kind)
    val = np.array([e.value for e in est])
    se = np.array([e.stderr for e in est])
    fw, fse = np.array(fw), np.array(fse)
    ci = [(v - z * s, v + z * s) for v, s in zip(val, se)]
    fci = [(f - z * s, f + z * s) for f, s in zip(fw, fse)]
    best = None
    if budget is not None:
        idx = np.arange(len(grid))
        if budget == "forwards":
            ok = fw <= limit + 1e-9
            if not ok.any():
                j = int(np.argmin(fw))
                raise ValueError(f"forwards: no value on the grid runs in <= {limit:g} estimated forwards; the fewest "
                                 f"is {fw[j]:.4g} (at {param}={grid[j]:g}): raise forwards or widen values=")
            order = [i for i in np.lexsort((idx, fw, val)) if ok[i]]
            best = int(order[0])
            if fci[best][1] > limit + 1e-9:
                raise ValueError(f"n: the pick {param}={grid[best]:g} runs in {fw[best]:.4g} forwards, interval "
                                 f"[{fci[best][0]:.4g}, {fci[best][1]:.4g}] containing the budget {limit:g}: more "
                                 "samples (n=, more rows) or another budget")
            rivals = [i for i in order[1:]
                      if not (abs(val[i] - val[best]) <= 1e-12 and abs(fw[i] - fw[best]) <= 1e-12)
                      and not (se[i] == 0 and se[best] == 0) and _overlap(ci[i], ci[best])]
            width = lambda i: ci[i][1] - ci[i][0]  # noqa: E731
        else:
            ok = np.array([c[1] <= limit + 1e-12 for c in ci])
            if not ok.any():
                j = int(np.argmin([c[1] for c in ci]))
                raise ValueError(f"target_kl: no value on the grid has a path-KL interval below {limit:g}; the lowest "
                                 f"upper end is {ci[j][1]:.4g} (at {param}={grid[j]:g}): raise target_kl or more samples")
            order = [i for i in np.lexsort((idx, val, fw)) if ok[i]]
            best = int(order[0])
            rivals = [i for i in order[1:] if abs(fw[i] - fw[best]) > 1e-12 and not (fse[i] == 0 and fse[best] == 0)
                      and _overlap(fci[i], fci[best])]
            width = lambda i: fci[i][1] - fci[i][0]  # noqa: E731
        if rivals:
            i = rivals[0]
            gap = abs((val if budget == "forwards" else fw)[i] - (val if budget == "forwards" else fw)[best])
            factor = ((width(i) + width(best)) / 2 / gap) ** 2 if gap > 0 else math.inf
            rows = est[best].n
            more = f"about {int(math.ceil(factor * rows))} draws" if math.isfinite(factor) else "more draws"
            raise ValueError(f"n: the pick {param}={grid[best]:g} and {param}={grid[i]:g} are not separated by their "
                             f"{confidence:.0%} intervals on {rows} draws; more samples ({more}) or a coarser grid")
    note = (f"estimated: the rule along {est[0].n} data paths through the model (seed {seed}); "
            f"{confidence:.0%} normal intervals")
    neg = [grid[i] for i in range(len(grid)) if ci[i][1] < 0]
    if neg:  # a KL is >= 0: below 0 beyond the noise, the model's conditionals are not one law's (or x is not its)
        note += (f"; negative beyond noise at {param}={', '.join(f'{v:g}' for v in neg)}: the model's conditionals "
                 "are not those of one joint law sampled by the data, so these are its factorization error along "
                 "the data, not a KL")
    return Tuning(planner=name, parameter=param, values=grid, forwards=tuple(float(f) for f in fw),
                  kl=tuple(float(v) if k == "kl" else None for v, k in zip(val, kinds)),
                  path_kl=tuple(float(v) for v in val), lost=tuple(0.0 for _ in grid), ties=ties,
                  budget=budget, limit=limit, best=best, method="estimated",
                  kl_stderr=tuple(float(s) for s in se), forwards_stderr=tuple(float(s) for s in fse),
                  n=int(est[0].n), d=int(x.shape[1]),
                  note=note)
