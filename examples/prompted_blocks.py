"""A response to a prompt, block by block: which block length and counts for F forwards?

The law: a sticky binary Markov chain on d = 12 positions; the first 4 are the prompt, the
other 8 the response. For each forward budget F the exact block design
(mdmtheory.optimal.design_blocks) lists every block length that can run F forwards, its
exact path KL with the best counts inside each block, and the pick; then the pick is
handed to diffusers as a BlockRefinementScheduler (mdmtheory.exports.diffusers) when
diffusers is installed.

    python examples/prompted_blocks.py [--fast]
"""

from __future__ import annotations

import argparse

import mdmtheory as mt
from mdmtheory.optimal import design_blocks


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fast", action="store_true", help="d = 10 (prompt 2) instead of 12 (prompt 4)")
    args = ap.parse_args(argv)
    d, g = (10, 2) if args.fast else (12, 4)
    p = mt.families.markov_chain([[0.9, 0.1], [0.3, 0.7]], d)
    prompt = list(range(g))
    n = d - g
    plain = mt.information_profile(p)
    prof = mt.information_profile(p, given=prompt)
    print(f"Markov chain, d = {d}: prompt = positions 0..{g - 1}, response = {n} positions")
    print("profile of the response given the prompt (nats):", " ".join(f"{v:.4f}" for v in prof.values))
    print("profile of the first n positions, no prompt:  ", " ".join(f"{v:.4f}" for v in plain.values[:n]))
    rows = []
    print(f"\n{'forwards':>8}  " + "  ".join(f"B={B:<2} path KL" for B in (1, 2, 4, 8) if n % B == 0))
    for F in range(1, n + 1):
        des = design_blocks(p, forwards=F, given=prompt)
        by_B = {c.block_length: c for c in des.candidates}
        cells = []
        for B in sorted(by_B):
            c = by_B[B]
            cells.append(f"{c.path_kl:12.5f}" if c.path_kl is not None else f"{'-':>12}")
        print(f"{F:>8}  " + "  ".join(cells) + f"   pick B={des.best.block_length} counts {list(map(list, des.best.counts))}")
        rows.append({"forwards": F, **des.to_dict()})
    out = {"d": d, "prompt": prompt, "prompted_profile": prof.values.tolist(), "rows": rows}
    try:
        from mdmtheory.exports.diffusers import block_refinement_scheduler
    except ImportError:  # pragma: no cover
        return out
    best = rows[n // 2 - 1]["best"]
    try:
        sched = block_refinement_scheduler(best["counts"], block_length=best["block_length"])
    except ImportError:
        print("\n(diffusers not installed: pip install 'mdmtheory[pipelines]')")
        return out
    print(f"\nfor {n // 2} forwards: LLaDA2Pipeline(model, scheduler, tokenizer)(input_ids=..., "
          f"gen_length={n}, block_length={best['block_length']}, num_inference_steps={best['steps_per_block']}, "
          f"threshold=1.0, editing_threshold=None, eos_early_stop=False) with scheduler counts {sched.counts}")
    out["scheduler_counts"] = [list(c) for c in sched.counts]
    return out


if __name__ == "__main__":
    main()
