"""Do randomized step sizes ever beat the best deterministic schedule? Exact answers.

Zhao & Cai (arXiv 2602.20126) draw the tokens per step at random. For each law below and each
step count T, the best law on compositions with T steps (exact output-law KL, EM over all
compositions; mdmtheory.samplers.randomized) against the best deterministic T-step schedule, and
for the path KL the linear programme at integer expected forwards (a mix of step counts).

    python examples/random_sizes.py [--fast]
"""

from __future__ import annotations

import argparse

import mdmtheory as mt
from mdmtheory.optimal import optimal_random_schedule


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fast", action="store_true", help="d = 4 (the tests run this)")
    a = ap.parse_args(argv)
    d = 4 if a.fast else 6
    out = {}
    print(f"d = {d}: output-law KL, best deterministic vs best randomized (same T); path KL, the same at "
          "expected forwards T")
    print(f"{'law':26s} {'T':>2s} {'KL det':>9s} {'KL rand':>9s} {'gain':>6s} {'path det':>9s} {'path LP':>9s}")
    for name, p in mt.families.sampler_laws(d).items():
        for T in range(2, d):
            r = optimal_random_schedule(p, steps=T)
            lp = optimal_random_schedule(p, forwards=float(T), objective="path_kl")
            out[name, T] = (r.deterministic_value, r.value, lp.deterministic_value, lp.value)
            print(f"{name:26s} {T:2d} {r.deterministic_value:9.5f} {r.value:9.5f} {r.gain / r.deterministic_value:6.1%}"
                  f" {lp.deterministic_value:9.5f} {lp.value:9.5f}")
    return out


if __name__ == "__main__":
    main()
