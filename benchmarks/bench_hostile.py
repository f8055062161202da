"""Cost of the issue-9 checks on hot paths (validation, underflow detection, rescaling).

Times, best of several runs: ``exact_run`` (d = 7, T = 3, trajectory; includes the
underflow check), ``pareto_frontier`` (d = 4096, T = 512; includes the power-of-two
rescaling), ``ugc.fine_complexity`` (d = 7; quadrature callback without validation), and the
validated ``ugc.bernstein_basis`` against its unvalidated core, printing the ratio.

Run:  OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_hostile.py

``--fuzz N --seed S`` (issue 38): N fuzzed calls instead of the timings, over every callable the
API walker reaches (tests/contract/test_hostile_api.py: its targets, valid recipes and contract)
and, for a share ``--cli-share`` of them, the CLI in-process (tests/contract/test_fuzz_cli.py's
valid command lines and files). Each API call replaces 1 or 2 arguments of the valid call by a
value drawn from the walker's hostile table, its semantic table (sub-normalised laws,
impossible entropies, NaN entries, duplicate positions, planner classes, ...) or a random
mutation of the valid value (±inf/NaN/huge/negative numbers, numpy scalars, NaN/inf/negative/
reshaped/empty/object arrays, Joints of another shape, garbage text). The contract is the
walker's (``check_call``): only a ValueError naming an argument, no hang (20 s alarm), no file
left by a refusal, no NaN result the valid call does not have, no accepted invalid value.
Prints the calls, the failures (each once, by callable and value class) and the time.

Run:  OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python benchmarks/bench_hostile.py --fuzz 20000 --seed 1
"""

import time

import numpy as np

import mdmtheory as mt
from mdmtheory.information import ugc


def best(fn, reps):
    fn()
    out = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t)
    return out


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="accepted for run_all --quick (this script is already short)")
    ap.add_argument("--fuzz", type=int, default=0, metavar="N", help="run N fuzzed calls instead of the timings")
    ap.add_argument("--seed", type=int, default=0, help="fuzz seed")
    ap.add_argument("--cli-share", type=float, default=0.02, help="share of the fuzzed calls that run the CLI")
    args = ap.parse_args(argv)
    if args.fuzz:
        return fuzz(args.fuzz, args.seed, args.cli_share)
    p = mt.families.dirichlet(7, 2, 0.5, seed=1)
    prof = mt.information_profile(p)
    c = np.sort(np.random.default_rng(0).random(4096))[::-1]
    t = np.linspace(0, 1, 64)
    print(f"exact_run d=7 T=3 trajectory: {best(lambda: mt.exact_run(p, mt.Schedule.constant(7, 3), trajectory=True), 5) * 1e3:.2f} ms")
    print(f"pareto_frontier d=4096 T=512: {best(lambda: mt.pareto_frontier(c, 512), 3) * 1e3:.1f} ms")
    print(f"fine_complexity d=7: {best(lambda: ugc.fine_complexity(prof), 5) * 1e3:.2f} ms")
    checked = best(lambda: ugc.bernstein_basis(20, t), 200)
    raw = best(lambda: ugc._bernstein(20, t), 200)
    print(f"bernstein_basis(20, 64 points): validated {checked * 1e6:.1f} us, core {raw * 1e6:.1f} us, ratio {checked / raw:.2f}")


# == the fuzz harness (issue 38) ================================================================
def _mutations(value, rng):
    """(label, value) random mutations of one valid value; labels the walker's contract reads
    ("nan" for a NaN number; semantic ids are added by the caller)."""
    import fractions
    import math

    if isinstance(value, (bool, np.bool_)):
        return [("rand:int-for-bool", int(rng.integers(0, 3))), ("rand:str", "True")]
    if isinstance(value, (int, float, np.integer, np.floating)):
        big = 10 ** int(rng.integers(13, 400))
        return [("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf), ("rand:huge", big), ("rand:-huge", -big),
                ("rand:neg", -float(rng.random()) * 10 ** float(rng.uniform(-300, 3))),
                ("rand:tiny", float(rng.random()) * 1e-300), ("rand:uint8", np.uint8(rng.integers(0, 256))),
                ("rand:int64-neg", np.int64(-int(rng.integers(1, 10**6)))), ("rand:float32", np.float32(rng.random())),
                ("rand:fraction", fractions.Fraction(int(rng.integers(1, 7)), 3)), ("rand:-0.0", -0.0)]
    if isinstance(value, mt.Joint):
        d, K = value.d, value.K
        other = mt.Joint(np.full((K + 1,) * d, 1.0 / (K + 1) ** d)) if (K + 1) ** d <= 4096 else mt.Joint([0.5, 0.5])
        return [("sub-normalised law", mt.Joint(value.table * 0.5, lost=0.5)), ("rand:other-shape", other),
                ("rand:oracle", mt.laws.TableLaw(value)), ("impossible entropies", np.array([0.0, 0.9, 0.1, 0.5]))]
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiub" and value.size:
        v = value.astype(np.float64)
        out = [("NaN entry", np.where(np.arange(v.size).reshape(v.shape) == rng.integers(0, v.size), np.nan, v)),
               ("rand:inf entry", np.where(np.arange(v.size).reshape(v.shape) == 0, np.inf, v)),
               ("rand:negative", -np.abs(v) - 1), ("rand:huge", v * 1e308), ("rand:empty", v[:0]),
               ("rand:flat", v.ravel()), ("rand:extra-axis", v[None]), ("rand:objects", v.astype(object)),
               ("rand:text", v.astype(str))]
        if value.dtype.kind in "iub":
            out += [("rand:as-float", v + 0.5), ("rand:big-int", value.astype(np.int64) + 2**40)]
        return out
    if isinstance(value, (tuple, list)) and value:
        return [("rand:empty", type(value)()), ("rand:nested", [value, value]), ("rand:None-item", [None, *value[1:]]),
                ("rand:nan-item", [float("nan"), *value[1:]]), ("rand:huge-item", [10**30, *value[1:]])]
    if isinstance(value, str):
        return [("rand:garbage", "x" * int(rng.integers(0, 2000))), ("rand:upper", value.upper()),
                ("rand:nul", value + "\0")]
    return [("rand:None", None), ("rand:int", 1), ("rand:list", [value])]


def _cli_fuzz(n_calls, rng, stats, failures):
    """n_calls CLI command lines (tests/contract/test_fuzz_cli.py's bases, options and values)."""
    import tempfile
    from pathlib import Path

    import test_fuzz_cli as C

    class _Factory:
        def __init__(self):
            self.root = Path(tempfile.mkdtemp(prefix="fuzzcli"))

        def mktemp(self, name):
            p = self.root / name
            p.mkdir()
            return p

    f = C.files.__wrapped__(_Factory())
    bases = C._bases(f)
    for _ in range(n_calls):
        cmd = sorted(bases)[int(rng.integers(0, len(bases)))]
        argv = list(bases[cmd])
        for _ in range(int(rng.integers(1, 4))):
            kind = ["number", "name", "path"][int(rng.integers(0, 3))]
            value = (C.NUMBERS if kind == "number" else C.NAMES if kind == "name" else None)
            value = value[int(rng.integers(0, len(value)))] if value else f[C.PATHS[int(rng.integers(0, len(C.PATHS)))]]
            opt, takes = C.OPTIONS[cmd][int(rng.integers(0, len(C.OPTIONS[cmd])))]
            if opt in argv:
                if takes:
                    argv[argv.index(opt) + 1] = value
                continue
            argv += [opt, value] if takes else [opt]
        stats["cli"] += 1
        try:
            C.check_call(cmd, argv, f)
        except BaseException as exc:  # noqa: BLE001 - pytest.fail / AssertionError: one failure
            if isinstance(exc, KeyboardInterrupt):
                raise
            key = f"cli {cmd}: {str(exc).splitlines()[0][:160]}"
            failures.setdefault(key, argv)


def fuzz(n: int, seed: int, cli_share: float) -> int:
    import os
    import sys
    import tempfile
    import time as _time

    here = os.path.dirname(os.path.abspath(__file__))
    for sub in ("tests", os.path.join("tests", "contract")):
        sys.path.insert(0, os.path.join(here, "..", sub))
    import test_hostile_api as W
    from test_records import _builders

    rng = np.random.default_rng(seed)
    work = tempfile.mkdtemp(prefix="fuzzapi")
    os.makedirs(os.path.join(work, "work"))
    os.chdir(os.path.join(work, "work"))
    W.ROOT[:] = [work]
    from pathlib import Path

    builders = _builders(Path(work))
    quals = [c.values[0] for c in W._cases(default=False)]
    t0 = _time.perf_counter()
    stats = {"api": 0, "cli": 0, "refused": 0, "accepted": 0}
    failures: dict[str, str] = {}
    prepared: dict = {}
    n_cli = int(round(n * cli_share))
    while stats["api"] < n - n_cli:
        qual = quals[int(rng.integers(0, len(quals)))]
        if qual not in prepared:
            try:
                prepared[qual] = W.prepare(qual, builders)
            except Exception as exc:  # noqa: BLE001
                prepared[qual] = f"{qual}: prepare failed: {type(exc).__name__}: {exc}"
        prep = prepared[qual]
        if isinstance(prep, str):
            failures.setdefault(prep, "")
            continue
        params = [p.name for p in prep["params"]]
        if not params:
            continue
        k = 1 if len(params) == 1 or rng.random() < 0.7 else 2
        chosen = list(rng.choice(params, size=k, replace=False))
        hostile, values = {}, {}
        for name in chosen:
            name = str(name)
            pool = [("table", h, None) for h in W.HOSTILE] + [("semantic", sid, None) for sid in prep["semantic"].get(name, {})]
            pool += [("mutation", lab, v) for lab, v in _mutations(prep["valid"][name], rng)]
            src, lab, v = pool[int(rng.integers(0, len(pool)))]
            if src == "table":
                v = W.HOSTILE[lab][0]()
            elif src == "semantic":
                v = prep["semantic"][name][lab]()
            hostile[name], values[name] = lab, v
        call = W._call_for(qual, prep["fn"], values)
        stats["api"] += 1
        bad = W.check_call(qual, *call, hostile, prep["number"], prep["names"], prep["valid_nan"])
        if bad:
            key = qual + "(" + ", ".join(f"{a}={h}" for a, h in hostile.items()) + ")"
            failures.setdefault(key, bad)
    _cli_fuzz(n_cli, rng, stats, failures)
    dt = _time.perf_counter() - t0
    print(f"fuzz seed {seed}: {stats['api']} API calls over {len(quals)} callables + {stats['cli']} CLI calls "
          f"in {dt:.0f} s; {len(failures)} distinct failures")
    for key, text in sorted(failures.items()):
        print(f"  FAIL {key}: {str(text)[:300]}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
