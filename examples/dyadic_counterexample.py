"""The dyadic-weights counterexample (W26 §4): stated weights break E Q <= H <= 2 E Q.

W26's dyadic estimator Q of the UGC H(a, b) uses weights w_j = v_{j+1} − v_j and claims
E Q <= H(a, b) <= 2 E Q. On an interval that is one partial dyadic piece — repeated bit,
d = 3, a = 0.3, b = 0.31 — the exact expectation gives H ≈ 0.0061 > 2 E Q ≈ 0.00058. The
corrected weights v_j (1 − v_{j+1}) satisfy the sandwich (proofs/dyadic_weights.md); a
Monte Carlo run of the estimator agrees with its exact expectation (z-score).

    python examples/dyadic_counterexample.py [--fast]
"""

from __future__ import annotations

import argparse

import mdmtheory as mt
from mdmtheory.information import dyadic_estimate, expected_dyadic_estimate


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fast", action="store_true", help="fewer Monte Carlo draws (CI)")
    args = ap.parse_args(argv)
    a, b = 0.3, 0.31
    out = {}
    for name, p in (("repeated bit d=3", mt.families.repeated(3)), ("dirichlet d=3", mt.families.dirichlet(3, 2, seed=1))):
        H = mt.information.ugc.ugc(p, a, b)
        print(f"{name}: H({a}, {b}) = {H:.7f}")
        for w in ("stated", "corrected"):
            eq = expected_dyadic_estimate(p, a, b, weights=w)
            ok = eq <= H <= 2 * eq
            out[(name, w)] = (H, eq, ok)
            print(f"  {w:<9} weights: E Q = {eq:.7f}, 2 E Q = {2 * eq:.7f}  "
                  f"E Q <= H <= 2 E Q: {'holds' if ok else 'FAILS'} (H / E Q = {H / eq:.2f})")
    p = mt.families.repeated(3)
    n = 2000 if args.fast else 20000
    est = dyadic_estimate(p, a, b, n=n, seed=0, weights="corrected")
    exact = expected_dyadic_estimate(p, a, b, weights="corrected")
    z = (est.mean - exact) / est.stderr if est.stderr > 0 else 0.0
    print(f"\nMonte Carlo (corrected, n = {n}): {est.mean:.7f} ± {est.stderr:.1e}; exact E Q = {exact:.7f}; z = {z:+.2f}")
    out["z"] = z
    return out


if __name__ == "__main__":
    main()
