"""How conservative is the certificate? Certified N vs the least N whose optimal grid is within eps.

For exact small laws: certify (n samples, confidence 0.95, corrected weights) with W26's
rule (8 C+/eps) and the tight rule, both forms; exact KL of the certified Geo grid; and
N_opt = the least N for which mt.optimal_grid on the same interval has exact KL <= eps.
Run: python benchmarks/bench_certificate.py
"""

from __future__ import annotations

import time


import mdmtheory as mt
from mdmtheory.certificate import certify


def n_opt(p, eps, lo, hi, n_max=400):
    for N in range(1, n_max + 1):
        g = mt.optimal_grid(p, N, start=lo, stop=hi)
        if mt.kl(p, mt.sampler_law(p, g)) <= eps:
            return N
    return None


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one law, one eps (the smoke version run_all --quick uses)")
    a = ap.parse_args(argv)
    laws = {
        "repeated d=5": mt.families.repeated(5),
        "markov d=5": mt.families.markov_chain([[0.9, 0.1], [0.25, 0.75]], d=5),
        "parity d=5": mt.families.parity(5),
    }
    print(f"{'law':<14} {'eps':>6} {'N_opt':>5} | {'form':<7} {'rule':<5} {'N_cert':>6} {'ratio':>6} {'KL_cert':>9} {'bound':>9}")
    if a.quick:
        laws = dict(list(laws.items())[:1])
    for name, p in laws.items():
        d = p.d
        lo, hi = 1 / d, 1 - 1 / d
        for eps in (0.05,) if a.quick else (0.05, 0.01):
            t = time.perf_counter()
            No = n_opt(p, eps, lo, hi)
            for form in ("kl", "entropy"):
                for rule in ("w26", "tight"):
                    c = certify(p, 4000, eps, seed=0, form=form, rule=rule)
                    kl = mt.kl(p, mt.sampler_law(p, c.grid))
                    print(f"{name:<14} {eps:>6} {No:>5} | {form:<7} {rule:<5} {c.steps:>6} {c.steps / No:>6.1f} "
                          f"{kl:>9.2e} {c.bound:>9.2e}")
            print(f"  ({time.perf_counter() - t:.1f} s)")


if __name__ == "__main__":
    main()
