"""Exact KL(p‖q) of practical planners at the same number of steps, on the families of Joint.

Prints (1) the comparison table planner × law × T → exact KL (nats) on the constant
schedule of T steps, T in {2, 3, d/2}; (2) the ratio confidence / random; (3) the
variable-size planners (threshold, entropy budget) with their exact expected number of
steps, beside random order at the nearest T; (4) decoding-bias statistics of the
confidence planner.

    python examples/planner_comparison.py [--d 6] [--fast]
"""

from __future__ import annotations

import argparse

import numpy as np

import mdmtheory as mt
from mdmtheory.laws import families
from mdmtheory.samplers import comparison_table, reveal_diagnostics
from mdmtheory.samplers import (
    DilatedPlanner,
    EntropyBudgetPlanner,
    SemiAutoregressivePlanner,
    ThresholdPlanner,
    exact_run,
)


def laws(d: int) -> dict[str, mt.Joint]:
    rng = np.random.default_rng(0)
    m = rng.dirichlet([1.0, 1.0], size=(2, d))
    return {
        "markov": families.markov_chain([[0.9, 0.1], [0.2, 0.8]], d),
        "parity": families.parity(d),
        "repeated": families.repeated(d),
        "noisy_bit": families.noisy_repeated_bit(d, 0.1),
        "ising": families.ising_chain(d, coupling=0.6, field=0.2),
        "mixture": families.mixture_of_products([0.3, 0.7], m),
        "dirichlet": families.dirichlet(d, 2, alpha=0.5, seed=0),
        # K = 3: confidence, margin and entropy no longer induce the same order
        "dirichlet_K3": families.dirichlet(d, 3, alpha=0.5, seed=0),
        "markov_K3": families.markov_chain([[0.8, 0.15, 0.05], [0.1, 0.6, 0.3], [0.3, 0.1, 0.6]], d),
    }


def _show(v: float) -> float:
    """Display only: rounding noise around an exact 0 prints as 0."""
    return v if abs(v) >= 1e-12 else 0.0


def compare_planners(d: int) -> dict:
    ps = laws(d)
    planners = {
        "random": "random",
        "l2r": "left_to_right",
        "confidence": "confidence",
        "margin": "margin",
        "entropy": "entropy",
        f"semi_ar({d // 2})": SemiAutoregressivePlanner(block_length=d // 2),
        "dilated": DilatedPlanner(),
    }
    Ts = sorted({2, 3, d // 2})
    table = comparison_table(ps, planners, Ts)
    print(f"Exact KL(p||q) in nats, d = {d}, K = 2 (K = 3 for *_K3), constant schedule of T steps\n")
    print(table.format(4))

    ratio = table.ratio("confidence")
    print("\nconfidence / random KL per row:")
    for (law, T), r in zip(table.steps, ratio):
        print(f"  {law:<13} T={T}: {r:8.3f}")
    finite = ratio[np.isfinite(ratio) & (ratio > 0)]
    rnd = table.kl[:, table.planners.index("random")]
    conf = table.kl[:, table.planners.index("confidence")]
    print(
        f"\nconfidence < random in {int((conf < rnd - 1e-12).sum())} of {len(rnd)} rows, "
        f"> random in {int((conf > rnd + 1e-12).sum())}; geometric mean ratio {np.exp(np.log(finite).mean()):.3f}"
    )
    for name in table.planners:
        col = table.kl[:, table.planners.index(name)]
        print(f"  mean KL {name:<12} {col.mean():.4f}")

    print("\nVariable-size planners (exact; plan=None): E[steps], KL; random at the nearest T")
    for lname, p in ps.items():
        for pl in (ThresholdPlanner(0.9), ThresholdPlanner(0.7), EntropyBudgetPlanner(0.1), EntropyBudgetPlanner(0.5)):
            run = exact_run(p, None, pl)
            T = int(np.clip(round(run.expected_steps), 1, d))
            rnd = mt.kl(p, mt.sampler_law(p, mt.Schedule.constant(d, T)))
            label = f"{pl.name}({getattr(pl, 'tau', getattr(pl, 'gamma', ''))})"
            print(
                f"  {lname:<13} {label:<20} E[steps]={run.expected_steps:5.2f}  KL={_show(mt.kl(p, run.law)):.4f}"
                f"   random T={T}: {_show(rnd):.4f}"
            )

    T = Ts[-1]
    print(f"\nDecoding bias of 'confidence' at T = {T} (boundary < 0: ends first; l2r = Spearman)")
    for lname, p in ps.items():
        diag = reveal_diagnostics(p, mt.Schedule.constant(d, T), "confidence")
        print(
            f"  {lname:<13} mean step {np.array2string(diag.mean_step, precision=2)}"
            f"  boundary {diag.boundary_bias:+.3f}  l2r {diag.left_to_right:+.3f}"
        )
    return {"table": table}


def main(argv=None) -> dict:
    if isinstance(argv, int):  # main(d), as tests/samplers/test_diagnostics.py calls it
        return compare_planners(argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=6, help="sequence length (6 or 7 runs in seconds)")
    ap.add_argument("--fast", action="store_true", help="d = 4 (CI)")
    args = ap.parse_args(argv)
    return compare_planners(4 if args.fast else args.d)


if __name__ == "__main__":
    main()
