"""What the tie rules cost: the exact law under ``ties="random"`` and ``"topk"`` against
``"lowest"`` (one reveal set per state, no branching: the baseline).

``"random"`` carries one chain term per resolution of a split tie cluster (C(m, r) of them),
``"topk"`` calls torch.topk once per split state (the position planners) or per candidate
vector (sample-then-select). The law is the sticky Markov chain (stay 0.9), tied at every
first step; two tokens per step. Best of ``--reps`` runs, wall-clock; ratio = rule / lowest.

    PYTHONPATH=. python benchmarks/bench_ties.py [--quick] [--reps 3]
"""

from __future__ import annotations

import argparse

import mdmtheory as mt
from mdmtheory.samplers import ConfidencePlanner, SampleThenSelectPlanner, exact_run, select_run
from mdmtheory.samplers.ties import TIE_RULES

from _util import print_machine, time_calls


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes only (what the suite runs)")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args(argv)
    print_machine("tie rules: exact law under each rule, against 'lowest'")
    cases = [("confidence", 8), ("sample-then-select", 6)] if a.quick else \
        [("confidence", 8), ("confidence", 12), ("confidence", 14), ("sample-then-select", 6), ("sample-then-select", 8)]
    exact_run(mt.families.markov_chain([[0.9, 0.1], [0.1, 0.9]], 4), mt.Schedule((2, 2)),
              ConfidencePlanner(ties="topk"))  # imports torch once, outside the timings
    print(f"{'sampler':<20} {'d':>3} " + " ".join(f"{r + ' s':>10}" for r in TIE_RULES) + "  random/lowest  topk/lowest")
    for name, d in cases:
        p = mt.families.markov_chain([[0.9, 0.1], [0.1, 0.9]], d)
        plan = mt.Schedule.constant(d, d // 2)
        if name == "confidence":
            def run(r):
                return exact_run(p, plan, ConfidencePlanner(ties=r))
        else:
            def run(r):
                return select_run(p, plan, SampleThenSelectPlanner(ties=r))
        t = {r: time_calls(lambda i, r=r: lambda: run(r), repeat=a.reps).best for r in TIE_RULES}
        print(f"{name:<20} {d:>3} " + " ".join(f"{t[r]:>10.4f}" for r in TIE_RULES)
              + f"  {t['random'] / t['lowest']:>13.1f}  {t['topk'] / t['lowest']:>11.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
