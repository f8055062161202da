"""Validation on truth: designing schedules from a model or from samples, against exact optima.

    OMP_NUM_THREADS=1 python benchmarks/validate_design.py [--n-per-level 2000] [--words-only]

1. Word data (d = 5, K = 26, exact law known): the shipped ``words`` MDM's cross-entropy
   profile c(m) (estimated on fresh samples) vs the exact profile φ(m) — the gap is the
   learning error; for T = 2, 3, 4 the schedule optimal for c, its exact path KL on the true
   law, and the exact optimum (regret = the difference).
2. Markov data (d = 64): regret of designing from n samples against the closed-form
   optimum, (a) plug-in: fit the transition matrix by counts, closed-form profile of the
   fit; (b) the shipped ``markov`` MDM's estimated profile.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import mdmtheory as mt
from mdmtheory.data import datasets
from mdmtheory.bridge.tiny import load_pretrained
from mdmtheory.design import estimate_cross_entropy_profile
from mdmtheory.laws.families import markov_chain_entropy_coefficients


def regret_rows(true_prof, c, Ts):
    rows = []
    for T in Ts:
        s_hat = mt.optimal_schedule(c, T)
        s_opt = mt.optimal_schedule(true_prof, T)
        kl_hat, kl_opt = mt.path_kl(true_prof, s_hat), mt.path_kl(true_prof, s_opt)
        rows.append((T, s_hat.sizes, s_opt.sizes, kl_hat, kl_opt, kl_hat - kl_opt))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-per-level", type=int, default=2000)
    ap.add_argument("--words-only", action="store_true", help="skip part 2 (Markov d = 64)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)

    # 0. exact work on the 26^5 word law, timed
    ds = datasets.words()
    t0 = time.perf_counter()
    joint = ds.joint
    t1 = time.perf_counter()
    phi = ds.profile()
    t2 = time.perf_counter()
    q = mt.sampler_law(joint, mt.Schedule((2, 1, 2)))
    kl3 = mt.kl(joint, q)
    t3 = time.perf_counter()
    print(f"== words exact (26^5 cells): joint {t1 - t0:.2f} s, profile {t2 - t1:.2f} s, "
          f"sampler_law + kl for T=3 {t3 - t2:.2f} s (KL = {kl3:.4f})")

    # 1. words
    t0 = time.perf_counter()
    est = estimate_cross_entropy_profile(load_pretrained("words"), ds.sample(50_000, seed=123), n_per_level=args.n_per_level, seed=7)
    print(f"== words: estimate {time.perf_counter() - t0:.1f} s, {est.forwards} forward rows")
    print(" m   exact phi   model c (± se)     learning error c - phi")
    for m in range(5):
        print(f" {m}   {phi.values[m]:.4f}     {est.values[m]:.4f} ± {est.stderr[m]:.4f}   {est.values[m] - phi.values[m]:+.4f}")
    print(f" sum: H(X) = {phi.entropy:.4f}, sum c = {est.values.sum():.4f} (MDM NLL bound)")
    print(" T  schedule from model  exact optimum  path KL(model's)  path KL(opt)  regret")
    for T, sh, so, kh, ko, r in regret_rows(phi, mt.Profile(est.values), (2, 3, 4)):
        print(f" {T}  {str(sh):<19}  {str(so):<13}  {kh:.6f}          {ko:.6f}      {r:.6f}")
    # the causal baseline: its exact NLL on the word law (sum over the support) vs H(X)
    ws, pw = datasets.word_list()
    xs = torch.tensor([[ord(ch) - 97 for ch in w] for w in ws])
    with torch.no_grad():
        lp = torch.log_softmax(load_pretrained("words-ar")(xs).logits.double(), -1)
    nll = -lp.gather(-1, xs[..., None])[..., 0].sum(1).numpy()
    print(f" AR baseline (words-ar): exact NLL {float(np.sum(pw * nll)):.4f} nats vs H(X) = {phi.entropy:.4f}"
          f" (learning error {float(np.sum(pw * nll)) - phi.entropy:.4f}); MDM bound sum c = {est.values.sum():.4f}")
    # exact KL of the sampler law (not only path KL) for the designed schedules
    for T in (2, 3, 4):
        s = mt.optimal_schedule(mt.Profile(est.values), T)
        print(f" T={T}: exact KL(p || sampler law) of the model-designed schedule = {mt.kl(ds.joint, mt.sampler_law(ds.joint, s)):.6f}")

    if args.words_only:
        return
    # 2. Markov d = 64
    mk = datasets.markov(64)
    phi = mk.profile()
    Ts = (4, 8, 16)
    print("\n== markov d=64: plug-in transition fit from n samples (closed-form profile of the fit)")
    print(" n        " + "  ".join(f"regret T={T:<3}" for T in Ts) + "   (mean over 5 seeds)")
    for n in (10, 100, 1000, 10_000):
        regs = []
        for seed in range(5):
            x = mk.sample(n, seed=1000 + seed)
            C = np.ones((mk.K, mk.K)) * 1e-3  # tiny pseudo-count keeps rows stochastic
            np.add.at(C, (x[:, :-1].ravel(), x[:, 1:].ravel()), 1)
            P = C / C.sum(1, keepdims=True)
            c = mt.Profile.from_entropy_coefficients(markov_chain_entropy_coefficients(P, 64))
            regs.append([r for *_, r in regret_rows(phi, c, Ts)])
        print(f" {n:<8} " + "  ".join(f"{v:.3e}   " for v in np.mean(regs, axis=0)))
    print("\n== markov d=64: shipped MDM, estimated profile")
    t0 = time.perf_counter()
    est = estimate_cross_entropy_profile(load_pretrained("markov"), mk.sample(20_000, seed=321), n_per_level=args.n_per_level // 4, seed=7)
    print(f" estimate {time.perf_counter() - t0:.1f} s; learning error sum(c - phi) = {np.sum(est.values - phi.values):.4f} nats"
          f" (max |c - phi| = {np.max(np.abs(est.values - phi.values)):.4f})")
    for T, sh, so, kh, ko, r in regret_rows(phi, mt.Profile(est.values), Ts):
        print(f" T={T}: path KL of model-designed {kh:.5f}, optimum {ko:.5f}, regret {r:.2e}")

    print(" control: the same estimator on the chain's exact conditionals (Monte Carlo noise only), mean of 3 seeds")
    x = mk.sample(20_000, seed=321)
    for npl in (args.n_per_level // 4, args.n_per_level):
        regs = [[r for *_, r in regret_rows(phi, mt.Profile(estimate_cross_entropy_profile(mk.law, x, n_per_level=npl, seed=s).values), Ts)]
                for s in range(3)]
        print(f" {npl} draws/level: regret " + " / ".join(f"{v:.3f}" for v in np.mean(regs, axis=0)))


if __name__ == "__main__":
    main()
