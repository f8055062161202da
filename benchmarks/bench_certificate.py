"""How conservative is the certificate? Certified N vs the least N whose optimal grid is within eps.

For exact small laws: certify (n samples, confidence 0.95, corrected weights) with W26's
rule (8 C+/eps) and the tight rule, both forms; exact KL of the certified Geo grid; and
N_opt = the least N for which mt.optimal_grid on the same interval has exact KL <= eps.
Run: python benchmarks/bench_certificate.py

``--blocks``: how much W26's multi-block certificate saves (mt.design.certify_blocks, W26 Theorem 2
§4.4.1 with the boundary DP §4.4.2, split samples): certified steps for K = 1, 2, 3, 4 blocks
(rule "tight" = least N whose allocation meets eps; rule "w26" = Theorem 2 as printed),
the single-block mt.certify, the oracle K = 3 block allocation (true H_k on the certified
edges), and N_opt; every certified grid's exact KL is checked <= eps.
Run: python benchmarks/bench_certificate.py --blocks [--quick]
"""

from __future__ import annotations

import time

import numpy as np

import mdmtheory as mt
from mdmtheory.design import certify
from mdmtheory.design import CertificateOptions


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
    ap.add_argument("--blocks", action="store_true", help="multi-block certificates (certify_blocks) instead")
    a = ap.parse_args(argv)
    if a.blocks:
        return blocks(a.quick)
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
                    c = certify(p, 4000, eps, seed=0, options=CertificateOptions(form=form, rule=rule))
                    kl = mt.kl(p, mt.sampler_law(p, c.grid))
                    print(f"{name:<14} {eps:>6} {No:>5} | {form:<7} {rule:<5} {c.steps:>6} {c.steps / No:>6.1f} "
                          f"{kl:>9.2e} {c.bound:>9.2e}")
            print(f"  ({time.perf_counter() - t:.1f} s)")


def blocks(quick: bool = False):
    import math

    from mdmtheory.design.certificate_blocks import _greedy

    laws = {
        "noisy rep. bit d=6 η=.01": mt.families.noisy_repeated_bit(6, 0.01),
        "repeated d=6": mt.families.repeated(6),
        "parity d=6": mt.families.parity(6),
        "markov d=6": mt.families.markov_chain([[0.95, 0.05], [0.1, 0.9]], d=6),
    }
    if quick:
        laws = dict(list(laws.items())[:1])
    eps, n = 0.05, 2000
    print(f"eps = {eps}, n = {n} samples, confidence 0.95, corrected weights, form entropy")
    print(f"{'law':<26} {'N_opt':>5} {'certify':>7} {'tight':>6} | {'K=1':>5} {'K=2':>5} {'K=3':>5} {'K=4':>5} | "
          f"{'K=3 w26':>7} {'oracle K=3':>10} | {'max KL':>8}")
    for name, p in laws.items():
        t = time.perf_counter()
        d = p.d
        No = n_opt(p, eps, 1 / d, 1 - 1 / d)
        c1 = certify(p, n, eps, seed=0, options=CertificateOptions(form="entropy"))
        c1t = certify(p, n, eps, seed=0, options=CertificateOptions(form="entropy", rule="tight"))
        ks, kls = {}, [mt.kl(p, mt.sampler_law(p, c.grid)) for c in (c1, c1t)]
        for K in (1, 2, 3, 4):
            c = mt.design.certify_blocks(n, eps, blocks=K, p=p, seed=0, options=CertificateOptions(rule="tight"))
            ks[K] = c
            kls.append(mt.kl(p, mt.sampler_law(p, c.grid)))
        w = mt.design.certify_blocks(n, eps, blocks=3, p=p, seed=0, options=CertificateOptions(rule="w26"))
        kls.append(mt.kl(p, mt.sampler_law(p, w.grid)))
        e = ks[3].edges
        Htrue = np.array([mt.information.ugc.ugc(p, a, b) for a, b in zip(e[:-1], e[1:])])
        oracle = sum(_greedy(np.array(ks[3].S), Htrue, eps))
        assert max(kls) <= eps
        print(f"{name:<26} {No:>5} {c1.steps:>7} {c1t.steps:>6} | " + " ".join(f"{ks[K].steps:>5}" for K in (1, 2, 3, 4))
              + f" | {w.steps:>7} {oracle:>10} | {max(kls):>8.2e}   ({time.perf_counter() - t:.0f} s)")


if __name__ == "__main__":
    main()
