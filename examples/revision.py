"""Does revising what was revealed lower KL at the same number of forwards? Exact answers.

ReMDM remasking (arXiv 2503.00307: cap and rescale schedules, η from 0.05 to 1) against MDLM
(η = 0) with the same N forwards; a least-likely corrector after every step but the last
(2T − 1 forwards) against plain random order with T and with 2T − 1 steps; LLaDA2.1 editing
(diffusers' editing_threshold, post-steps included; the model's prediction at a visible
position taken as the leave-one-out conditional) against sample-then-select without it and
random order (mdmtheory.samplers.revise; every conditional is the true one).

    python examples/revision.py [--fast]
"""

from __future__ import annotations

import argparse

import mdmtheory as mt
from mdmtheory.samplers import (CorrectorSampler, EditingSampler, RemaskingSampler, SampleThenSelectPlanner, revise_run,
                                sampler_law, select_run)

ETAS = (0.05, 0.1, 0.2, 0.5, 1.0)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fast", action="store_true", help="d = 4 (the tests run this)")
    a = ap.parse_args(argv)
    d = 4 if a.fast else 5
    out: dict = {}
    print(f"d = {d}. ReMDM vs MDLM, same N forwards (best eta, schedule); corrector vs more steps")
    for name, p in mt.families.sampler_laws(d).items():
        parts = []
        for N in (2, 3):
            base = mt.kl(p, revise_run(p, RemaskingSampler.uniform(N, 0.0)).law)
            best = min((mt.kl(p, revise_run(p, RemaskingSampler.uniform(N, e, s)).law), e, s)
                       for e in ETAS for s in ("cap", "rescale"))
            out[name, "remdm", N] = (base, best[0])
            parts.append(f"N={N}: MDLM {base:.4f}, ReMDM {best[0]:.4f} (eta {best[1]}, {best[2]})")
        for T in [T for T in (2, 3) if 2 * T - 1 <= d]:
            plain = mt.kl(p, sampler_law(p, mt.Schedule.constant(d, T)))
            corr = mt.kl(p, revise_run(p, CorrectorSampler(mt.Schedule.constant(d, T), k=1)).law)
            more = mt.kl(p, sampler_law(p, mt.Schedule.constant(d, 2 * T - 1)))
            out[name, "corrector", T] = (plain, corr, more)
            parts.append(f"T={T}: random {plain:.4f}, +corrector ({2 * T - 1} fw) {corr:.4f}, "
                         f"random {2 * T - 1} steps {more:.4f}")
        plan = mt.Schedule((2, 2, 1)) if d == 5 else mt.Schedule((2, 2))
        sts = select_run(p, plan, SampleThenSelectPlanner(None, 1.0, "tempered"))
        rnd = mt.kl(p, sampler_law(p, plan))
        eds = {eth: revise_run(p, EditingSampler(plan, editing_threshold=eth)) for eth in (0.5, 0.7, 0.9)}
        out[name, "editing"] = (mt.kl(p, sts.law), sts.forwards,
                                {e: (mt.kl(p, r.law), r.forwards) for e, r in eds.items()}, rnd)
        parts.append(f"counts {list(plan.sizes)}: sample-then-select {mt.kl(p, sts.law):.4f}; editing "
                     + ", ".join(f"{e}: {mt.kl(p, r.law):.4f} ({r.forwards:.2f} fw)" for e, r in eds.items())
                     + f"; random order {rnd:.4f}")
        print(f"{name}\n  " + "\n  ".join(parts))
    return out


if __name__ == "__main__":
    main()
