"""How biased is sample-then-select? Exact laws on the families, Monte Carlo on the words.

LLaDA's ``low_confidence`` remasking and diffusers' ``BlockRefinementScheduler`` draw a token at
every masked position and commit the k most confident (mdmtheory.samplers.select). Beside the
random-order sampler with the same counts (the sampler the theory's path KL is about), this
prints the exact forward KL(p || q), total variation and reverse KL(q || p) of the output law
for: sample-then-select at temperature 1 (LLaDA's confidence: the untempered probability),
greedy (temperature 0) and with diffusers' threshold 0.7 on top (expected forwards shown).
Then the five-letter words (d = 5, K = 26): the exact random-order law against a Monte
Carlo of sample-then-select, as the share of samples that are real words (a sample that
commits, in one step, letters no word combines is lost and is no word, for both samplers).

    python examples/sample_then_select.py [--fast]
"""

from __future__ import annotations

import argparse

import numpy as np

import mdmtheory as mt
from mdmtheory.samplers import SampleThenSelectPlanner, sampler_law, select_run, simulate


def families(d: int):
    return {**mt.families.sampler_laws(d), "parity": mt.families.parity(d)}


def table(d: int, sizes: tuple[int, ...], out: dict) -> list[str]:
    sched = mt.Schedule(sizes)
    planners = {"STS T=1": SampleThenSelectPlanner(), "greedy": SampleThenSelectPlanner(temperature=0.0),
                "STS thr 0.7": SampleThenSelectPlanner(threshold=0.7)}
    head = f"{'law':26s} {'random KL':>9s} {'TV':>6s}" + "".join(f" | {n:>11s} KL    TV  revKL" for n in planners)
    lines = [f"d = {d}, counts {list(sizes)}", head]
    for name, p in families(d).items():
        q = sampler_law(p, sched)
        row = f"{name:26s} {mt.kl(p, q):9.4f} {mt.tv(p, q):6.3f}"
        out[(name, sizes, "random")] = (mt.kl(p, q), mt.tv(p, q), mt.information.reverse_kl(p, q), float(len(sizes)))
        for key, pl in planners.items():
            r = select_run(p, sched, pl)
            out[(name, sizes, key)] = (mt.kl(p, r.law), mt.tv(p, r.law), mt.information.reverse_kl(p, r.law), r.forwards)
            row += f" | {mt.kl(p, r.law):17.4f} {mt.tv(p, r.law):5.3f} {mt.information.reverse_kl(p, r.law):6.3f}"
            if pl.threshold is not None:
                row += f" ({r.forwards:.2f} fw)"
        lines.append(row)
    return lines


def words(n: int, sizes: tuple[int, ...], out: dict) -> list[str]:
    from mdmtheory.data import datasets

    w = datasets.words()
    p = w.joint
    sched = mt.Schedule(sizes)
    q = sampler_law(p, sched)
    lines = [f"five-letter words, counts {list(sizes)}: share of samples that are words (p > 0)",
             f"  random order (exact): {float(q.table[p.table > 0].sum()):.4f} (lost {q.lost:.4f}: a prefix no word "
             f"has), KL(p||q) = {mt.kl(p, q):.3f}"]
    out["words", "random", "exact"] = float(q.table[p.table > 0].sum())
    for name, pl in (("random order", "random"), ("sample-then-select T=1", SampleThenSelectPlanner()),
                     ("sample-then-select T=0.5", SampleThenSelectPlanner(temperature=0.5))):
        s = simulate(p, sched, pl, n=n, seed=0)
        ok = ~s.lost & (p.table[tuple(np.maximum(s.samples, 0).T)] > 0)  # a lost sample is no word
        share = ok.mean()
        se = np.sqrt(share * (1 - share) / n)
        distinct = len({tuple(r) for r in s.samples[ok]})
        out["words", name] = (float(share), float(se), distinct)
        lines.append(f"  {name} (Monte Carlo, n = {n}): {share:.4f} ± {1.96 * se:.4f}, {distinct} distinct words")
    return lines


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fast", action="store_true", help="d = 4 and fewer word samples (the tests run this)")
    a = ap.parse_args(argv)
    d, sizes = (4, (2, 2)) if a.fast else (6, (2, 2, 2))
    out: dict = {"d": d, "sizes": sizes}
    print("\n".join(table(d, sizes, out)))
    print("\n".join(table(d, (1,) * d, out)))
    print("\n".join(words(3000 if a.fast else 20000, (2, 1, 2), out)))
    return out


if __name__ == "__main__":
    main()
