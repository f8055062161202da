r"""Block (semi-autoregressive) plans under a forward-pass budget, exactly.

LLaDA's ``generate`` and diffusers' ``LLaDA2Pipeline`` cut the response into consecutive
blocks of ``block_length`` positions and finish each block before the next, running the
same number S of forwards in every block (LLaDA: ``steps // num_blocks``). The unit users
pay is a **forward**: a plan with n_b blocks costs n_b · S forwards, whatever the counts.

With random order inside a block (LLaDA ``remasking='random'``), block b is the
random-order factorized sampler on its positions :math:`B_b`, with the prompt and the
earlier blocks :math:`E_b = G \cup B_1 \cup \dots \cup B_{b-1}` revealed and the later
blocks masked (never seen). Its path KL is therefore the path KL of the *prompted*
profile of the marginal law of :math:`E_b \cup B_b` given :math:`E_b`
(:func:`mdmtheory.information_profile` with ``given``), and the plan's path KL adds up:

.. math::

    \mathrm{KL}_{\text{path}}(\text{plan}) = \sum_b \Bigl[\sum_t k_{b,t}\,
    \varphi^{(b)}(s_{b,t}) - H(X_{B_b} \mid X_{E_b})\Bigr],
    \qquad \varphi^{(b)}_m = \mathop{\mathrm{mean}}_{A \subseteq B_b,\ |A| = m,\ j \in B_b \setminus A}
    H(X_j \mid X_A, X_{E_b}).

Given S, the blocks decouple, so the best counts of each block are
:func:`mdmtheory.optimal_schedule` of its profile with S steps (exact), and the best plan
for F forwards is the best block length among those with F divisible by n_b. Checked
against brute force over every block plan, each block's path KL by enumerating its
orders, in tests/optimal/test_blocks.py. Derived here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._estimate import Record
from .._validate import int_arg, real_arg
from .._moved import renamed_keyword
from ..information.profile import information_profile, Profile
from ..laws.joint import Joint
from ..laws.prompts import check_given
from ..schedules.plans import Schedule
from .card import optimal_schedule
from ..information.divergence import path_kl

__all__ = ["check_block_length", "check_block_ask", "check_block_lengths", "choose_block_length", 
    "BlockCandidate",
    "BlockDesign",
    "response_blocks",
    "block_profiles",
    "block_path_kl",
    "design_blocks",
]


@dataclass(frozen=True)
class BlockCandidate(Record):
    """One candidate: ``block_length``, the counts of each block, its forwards and path KL
    (``path_kl`` is None and ``reason`` says why when the candidate cannot meet the ask).
    Estimated designs (:func:`estimate_design_blocks`) also carry ``ci``, the two-sided
    normal confidence interval of ``path_kl``."""

    block_length: int
    steps_per_block: int | None
    counts: tuple[tuple[int, ...], ...] | None
    forwards: int | None
    path_kl: float | None
    reason: str = ""
    ci: tuple[float, float] | None = None

    def to_dict(self) -> dict:
        return {"block_length": self.block_length, "steps_per_block": self.steps_per_block,
                "counts": None if self.counts is None else [list(c) for c in self.counts],
                "forwards": self.forwards, "path_kl": self.path_kl,
                "path_kl_ci": None if self.ci is None else list(self.ci), "reason": self.reason}


@dataclass(frozen=True)
class BlockDesign(Record):
    """Every candidate block length (``candidates``) and the pick (``best``); ``method`` is
    ``"exact"`` (:func:`design_blocks`) or ``"estimated"`` (:func:`estimate_design_blocks`),
    ``note`` says on what; ``view`` what the model saw of the later blocks while a block was
    scored (``"masked"``: mask tokens, as in an exact design where they are marginalized;
    ``"truncated"``: absent, as diffusers' LLaDA2Pipeline runs it; issue 39 item 1); ``rising``
    the candidate block lengths one of whose estimated block profiles rises beyond its noise (a
    rising profile gives a truly negative Riemann defect, so a negative path KL there is the
    model's, not noise; issue 39 item 2)."""

    candidates: tuple[BlockCandidate, ...]
    best: BlockCandidate
    method: str = "exact"
    note: str = ""
    view: str = "masked"
    rising: tuple[int, ...] = ()

    def to_dict(self) -> dict:
        return {"method": self.method, "note": self.note, "view": self.view, "rising": list(self.rising),
                "best": self.best.to_dict(),
                "candidates": [c.to_dict() for c in self.candidates]}


def _given(p: Joint, given) -> list[int]:
    return sorted(check_given(p, given))


def check_block_length(B, n: int) -> int:
    """``B`` checked as a block length: an integer in 1..n dividing the response length n."""
    if isinstance(B, (bool, np.bool_)) or not isinstance(B, (int, np.integer)) or not 1 <= B <= n:
        raise ValueError(f"block_length: expected an integer in 1..{n} (the response length), got {B!r}")
    if n % B:
        raise ValueError(f"block_length: must divide the response length {n} (LLaDA needs "
                         f"gen_length % block_length == 0), got {B}")
    return int(B)


def response_blocks(p: Joint, block_length: int, *, given=()) -> tuple[tuple[int, ...], ...]:
    """The response positions (all but ``given``, increasing) cut into consecutive blocks."""
    G = _given(p, given)
    R = [j for j in range(p.d) if j not in G]
    B = check_block_length(block_length, len(R))
    return tuple(tuple(R[i:i + B]) for i in range(0, len(R), B))


def block_profiles(p: Joint, block_length: int, *, given=()) -> tuple[Profile, ...]:
    """The prompted profile φ^(b) of each block given the prompt and the earlier blocks
    (later blocks marginalized: they are masked while block b is generated)."""
    G = _given(p, given)
    out = []
    earlier = list(G)
    for block in response_blocks(p, block_length, given=G):
        seen = sorted(earlier + list(block))
        marg = Joint(p.marginal(seen)) if len(seen) < p.d else p
        idx = [seen.index(j) for j in earlier]
        out.append(information_profile(marg, given=idx) if idx else information_profile(marg))
        earlier += list(block)
    return tuple(out)


def _counts(counts, nb: int, B: int) -> list[Schedule]:
    try:
        rows = [list(c) for c in counts]
    except TypeError:
        raise ValueError(f"counts: expected one list of counts per block, got {counts!r}") from None
    if len(rows) != nb:
        raise ValueError(f"counts: expected one list per block ({nb} blocks), got {len(rows)}")
    out = []
    for b, row in enumerate(rows):
        try:
            s = Schedule(row)
        except ValueError as exc:
            raise ValueError(f"counts: block {b}: {exc}") from None
        if s.d != B:
            raise ValueError(f"counts: block {b} sums to {s.d}, expected block_length={B}")
        out.append(s)
    return out


def block_path_kl(p: Joint, counts, *, block_length: int, given=()) -> float:
    """Exact path KL of a block plan (random order inside each block; module docstring).

    ``counts``: one list of per-step counts per block, each summing to ``block_length``.
    """
    profs = block_profiles(p, block_length, given=given)
    scheds = _counts(counts, len(profs), profs[0].d)
    return float(sum(path_kl(f, s) for f, s in zip(profs, scheds)))


def _plan_for(profs, B: int, S: int) -> tuple[tuple[tuple[int, ...], ...], float]:
    scheds = [optimal_schedule(f, steps=S) for f in profs]
    return tuple(s.sizes for s in scheds), float(sum(path_kl(f, s) for f, s in zip(profs, scheds)))


def check_block_ask(forwards, target_kl, n: int):
    """Exactly one of ``forwards`` (an integer in 1..n) and ``target_kl`` (nats >= 0), checked."""
    if (forwards is None) == (target_kl is None):
        raise ValueError("forwards/target_kl: give exactly one (forwards=F, or target_kl=EPS nats)")
    if forwards is not None:
        forwards = int_arg(forwards, "forwards", 1, n, " (at most the response length)")
    if target_kl is not None:  # real_arg: 10**400 and numpy's odd scalars are refused by name, not by np.isfinite
        target_kl = real_arg(target_kl, "target_kl")
        if target_kl < 0:
            raise ValueError(f"target_kl: expected a finite path-KL target >= 0 nats, got {target_kl!r}")
    return forwards, target_kl


def check_block_lengths(block_lengths, n: int) -> list[int]:
    """The candidate block lengths (default: every divisor of n), each checked by
    :func:`check_block_length`."""
    if block_lengths is None:
        block_lengths = [B for B in range(1, n + 1) if n % B == 0]
    if isinstance(block_lengths, (str, bytes)):
        raise ValueError(f"block_lengths: expected a list of block lengths, got {block_lengths!r}")
    try:
        Bs = sorted({check_block_length(B, n) for B in block_lengths}, reverse=True)
    except TypeError:
        raise ValueError(f"block_lengths: expected a list of block lengths, got {block_lengths!r}") from None
    if not Bs:
        raise ValueError("block_lengths: empty; give at least one block length dividing the response length")
    return Bs


def choose_block_length(Bs, n: int, forwards, target_kl, plan_for) -> tuple[tuple[BlockCandidate, ...], BlockCandidate]:
    """The candidate loop shared by the exact and the estimated route. ``plan_for(B, S)``
    returns (counts, path KL, CI or None); with a path-KL target, a plan qualifies when its path KL
    (exact) or the upper end of its CI (estimated) is <= target_kl."""
    cands = []
    for B in Bs:
        nb = n // B
        if forwards is not None:
            if forwards % nb:  # (F <= n makes S = F / n_b <= B automatically)
                cands.append(BlockCandidate(B, None, None, None, None,
                                       f"{forwards} forwards do not split evenly over {nb} blocks"))
                continue
            S = forwards // nb
            counts, v, ci = plan_for(B, S)
            cands.append(BlockCandidate(B, S, counts, forwards, v, ci=ci))
        else:
            for S in range(1, B + 1):
                counts, v, ci = plan_for(B, S)
                if (v if ci is None else ci[1]) <= target_kl:
                    cands.append(BlockCandidate(B, S, counts, S * nb, v, ci=ci))
                    break
            else:  # unreachable: S = B (one token per step) has path KL 0, exactly and in the estimate
                cands.append(BlockCandidate(B, None, None, None, None, "no plan within target_kl"))
    ok = [c for c in cands if c.path_kl is not None]
    if not ok:
        raise ValueError(f"forwards: no candidate block length can run {forwards} forwards "
                         f"({'; '.join(f'B={c.block_length}: {c.reason}' for c in cands)})")
    if forwards is not None:
        best = min(ok, key=lambda c: (c.path_kl, -c.block_length))
    else:
        best = min(ok, key=lambda c: (c.forwards, c.path_kl, -c.block_length))
    return tuple(cands), best


def design_blocks(p: Joint, *, forwards: int | None = None, target_kl: float | None = None,
                  block_lengths=None, given=(), **old) -> BlockDesign:
    r"""The block plan of least path KL for ``forwards`` forwards, or the fewest forwards
    whose path KL is ≤ ``target_kl`` nats (give exactly one; ``budget=`` for one release,
    with a DeprecationWarning: a budget is a number of forwards or steps).

    Every block length in ``block_lengths`` (default: every divisor of the response length
    n) is a candidate; with n_b = n / B blocks, a candidate needs F divisible by n_b
    (else it is listed with the reason; S = F / n_b ≤ B follows from F ≤ n). Inside each block the counts are
    the exact optimum for its profile (:func:`block_profiles`). Ties go to the larger block.
    """
    target_kl = renamed_keyword(old, "budget", "target_kl", target_kl, None, where="design_blocks")
    if old:
        raise TypeError(f"design_blocks() got an unexpected keyword argument {next(iter(old))!r}")
    G = _given(p, given)
    n = p.d - len(G)
    check_block_ask(forwards, target_kl, n)
    Bs = check_block_lengths(block_lengths, n)
    profs = {B: block_profiles(p, B, given=G) for B in Bs}

    def plan_for(B, S):
        return (*_plan_for(profs[B], B, S), None)

    cands, best = choose_block_length(Bs, n, forwards, target_kl, plan_for)
    return BlockDesign(cands, best, "exact", f"exact: block profiles of the law given {len(G)} prompt positions")


