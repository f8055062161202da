"""Every export of mdmtheory.exports run through its sampler's per-step rule, as that sampler's
published source implements it.

Each rule below is our own re-statement, written from the file named in its comment (counts,
rounding, dtypes, dt, what the block loop overwrites); the export is run through it for every
composition of d <= 8 (255 schedules), several block lengths and batch 2, and the realized
per-step counts must be the schedule's sizes: exactly for the count-based samplers (LLaDA,
Fast-dLLM with threshold=None, Dream's non-origin algorithms, dllm), and for the Bernoulli
ones (MDLM, Dream 'origin') the per-step reveal probability must be k_j / n_masked up to
float32 rounding, so the expected counts are the sizes. The cases that failed before the fix
are here too: MDLM with the grid-only edit, the LLaDA snippet that named an argument the block
loop overwrites, Dream with steps other than the export's, and LLaDA's zero-count padding.
"""

import json
import math
import subprocess
import sys
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory import exports
from mdmtheory.exports import dream as dream_int
from mdmtheory.exports import llada as llada_int
from mdmtheory.exports import mdlm as mdlm_int
from mdmtheory.exports.dllm import PlanAlphaScheduler

from reference import compositions

torch = pytest.importorskip("torch")


ALL = [mt.Schedule(c) for d in range(1, 9) for c in compositions(d)]
SMALL = [s for s in ALL if s.d <= 6]  # the second variant of a rule runs on these 63
SCHEDS = [mt.Schedule((1, 2, 4, 1)), mt.Schedule((8,)), mt.Schedule((1,) * 8), mt.Schedule((3, 3, 2))]


def test_compositions_are_all_of_them():
    assert len(ALL) == sum(2 ** (d - 1) for d in range(1, 9)) == 255
    assert len(set(ALL)) == 255 and all(s.d <= 8 for s in ALL)


# == LLaDA ==================================================================================
def llada_rule(counts_fn, *, steps, gen_length, block_length, batch=2, prompt=3, seed=0, line=None, arg=None):
    """ML-GSAI/LLaDA generate.py, generate(): asserts gen_length % block_length == 0 and
    steps % num_blocks == 0, then steps = steps // num_blocks; per block b,
    num_transfer_tokens = get_num_transfer_tokens(block_mask_index, steps) (the module global);
    per step i the confidences beyond the block are -inf, non-masks are -inf, and row j takes
    topk(confidence[j], k=num_transfer_tokens[j, i]) and writes the prediction there (a
    non-mask position keeps its token). ``line(current, block_mask, steps, b)`` replaces the
    counts line (an edited generate); ``arg`` is the value an added argument named
    ``num_transfer_tokens`` would hold before the loop overwrites it.
    Returns realized[b][i][j] (masks revealed), whether any reveal fell outside the block,
    and the masks left."""
    g = torch.Generator().manual_seed(seed)
    L = prompt + gen_length
    masked = torch.zeros(batch, L, dtype=torch.bool)
    masked[:, prompt:] = True
    assert gen_length % block_length == 0
    num_blocks = gen_length // block_length
    assert steps % num_blocks == 0
    steps = steps // num_blocks
    num_transfer_tokens = arg
    realized, outside = [], False
    for b in range(num_blocks):
        lo, hi = prompt + b * block_length, prompt + (b + 1) * block_length
        block_mask_index = masked[:, lo:hi]
        if line is None:
            num_transfer_tokens = counts_fn(block_mask_index, steps)
        else:
            num_transfer_tokens = line(num_transfer_tokens, block_mask_index, steps, b)
        rows = []
        for i in range(steps):
            x0_p = torch.rand(batch, L, generator=g, dtype=torch.float64)
            x0_p[:, hi:] = -np.inf
            confidence = torch.where(masked, x0_p, torch.tensor(-np.inf, dtype=torch.float64))
            step = []
            for j in range(batch):
                _, select = torch.topk(confidence[j], k=num_transfer_tokens[j, i])
                new = select[masked[j, select]]
                outside |= bool(((new < lo) | (new >= hi)).any())
                masked[j, new] = False
                step.append(int(new.numel()))
            rows.append(step)
        realized.append(rows)
    return realized, outside, int(masked.sum())


def _llada_cases():
    for s in ALL:
        for B in range(1, s.d + 1):
            if s.d % B == 0:
                yield s, B


def _llada_fits(s, B):
    """Our statement of when a schedule fits LLaDA's blocks: every block boundary is a
    cumulative count and every block holds steps / num_blocks steps."""
    nb = s.d // B
    if s.steps % nb:
        return False
    cum = set(s.cumulative)
    if any(b * B not in cum for b in range(nb + 1)):
        return False
    per = [sum(1 for c in s.cumulative[1:] if b * B < c <= (b + 1) * B) for b in range(nb)]
    return len(set(per)) == 1


def test_llada_plan_runs_in_llada_generate_with_several_blocks_and_batch_2():
    """Through LLaDA's own loop with the module global patched: every row of every block
    reveals the plan's counts, inside its block, in exactly `steps` forwards."""
    fits = 0
    for s, B in _llada_cases():
        if not _llada_fits(s, B):
            continue
        fits += 1
        exported = exports.to_llada(s, block_length=B)
        module = SimpleNamespace(get_num_transfer_tokens=lambda m, n: pytest.fail("not patched"))
        with llada_int.patch(module, exported) as counts:
            got, outside, left = llada_rule(lambda m, n: module.get_num_transfer_tokens(m, n), steps=exported["steps"],
                                            gen_length=exported["gen_length"], block_length=exported["block_length"])
        assert counts.calls == exported["num_blocks"] and not outside and left == 0
        for b, rows in enumerate(got):
            assert [r[0] for r in rows] == [r[1] for r in rows] == exported["num_transfer_tokens"][b]
        # the realized steps, read in order, are the schedule itself
        flat = [r[0] for rows in got for r in rows]
        assert flat == list(s.sizes) and len(flat) == exported["steps"] == s.steps
    assert fits > 255 + 30  # one block always fits (255 cases), plus the multi-block fits


def test_llada_old_snippet_breaks_with_several_blocks():
    """The old doc's edit, `num_transfer_tokens = torch.tensor(num_transfer_tokens[num_block])
    .expand(batch, -1)` with the plan passed as an argument named num_transfer_tokens: the loop
    overwrites that name at block 0, so block 1 reads row 1 of block 0's counts (batch 2:
    wrong counts, silently) or fails (batch 1)."""
    def old_line(batch):
        return lambda current, m, steps, b: torch.as_tensor(current[b]).expand(batch, -1)

    wrong = right = 0
    for s, B in _llada_cases():
        if s.d // B < 2 or not _llada_fits(s, B):
            continue
        exported = exports.to_llada(s, block_length=B)
        rows = exported["num_transfer_tokens"]
        try:
            got, _, _ = llada_rule(None, steps=exported["steps"], gen_length=s.d, block_length=B, line=old_line(2),
                                   arg=rows)
            ok = all([r[0] for r in got[b]] == rows[b] for b in range(len(rows)))
        except IndexError:  # three blocks or more: row 2 of a batch of 2
            ok = False
        # right only with two blocks that repeat block 0
        assert ok == (len(rows) == 2 and rows[1] == rows[0])
        wrong += not ok
        right += ok
        with pytest.raises(IndexError):
            llada_rule(None, steps=exported["steps"], gen_length=s.d, block_length=B, batch=1, line=old_line(1), arg=rows)
    assert wrong > 0 and right > 0


def test_llada_refuses_plans_that_need_more_forwards_than_steps():
    """Padding refusal: whenever the schedule does not fit the blocks, LLaDA would run more
    forwards than the schedule's steps (the old export printed steps = 24 for 8 asked);
    to_llada refuses with a ValueError naming block_length and steps."""
    refused = 0
    for s, B in _llada_cases():
        if _llada_fits(s, B):
            exports.to_llada(s, block_length=B)
            continue
        refused += 1
        with pytest.raises(ValueError, match=r"^block_length: .*steps=") as exc:
            exports.to_llada(s, block_length=B)
        msg = str(exc.value)
        assert f"num_blocks={s.d // B}" in msg and "\n" not in msg
    assert refused > 100
    with pytest.raises(ValueError, match="forwards"):  # the case: 3 blocks of 8, 8 steps
        exports.to_llada(mt.Schedule((3,) * 8), block_length=8)
    with pytest.raises(ValueError, match="divide"):
        exports.to_llada(mt.Schedule((2, 3)), block_length=2)


def test_llada_plan_fields_and_llada_default():
    e = exports.to_llada(mt.Schedule((1, 3, 3, 1)), block_length=4)
    assert e["num_transfer_tokens"] == [[1, 3], [3, 1]] and e["steps"] == 4 and e["steps_per_block"] == 2
    assert e["num_blocks"] == 2 and e["gen_length"] == 8 and e["threshold"] is None
    assert e["llada_default"] == [[2, 2], [2, 2]]
    # LLaDA's own get_num_transfer_tokens (generate.py): base = n // steps, the first n % steps get one more
    for n in range(1, 20):
        for S in range(1, n + 1):
            row = exports.llada_default_counts(n, S)
            assert row == [n // S + (i < n % S) for i in range(S)]


def test_llada_patch_checks_what_generate_passes_and_restores():
    exported = exports.to_llada(mt.Schedule((1, 3, 3, 1)), block_length=4)
    def own(mask_index, steps):
        return None

    module = SimpleNamespace(get_num_transfer_tokens=own)
    with pytest.raises(ValueError, match="^steps: .*steps=4"):
        with llada_int.patch(module, exported):
            module.get_num_transfer_tokens(torch.ones(2, 4, dtype=torch.bool), 4)  # generate called with steps=8
    assert module.get_num_transfer_tokens is own
    with pytest.raises(ValueError, match="^block_length:"):
        with llada_int.patch(module, exported):
            module.get_num_transfer_tokens(torch.ones(2, 8, dtype=torch.bool), 2)
    with pytest.raises(ValueError, match="^gen_length:"):
        with llada_int.patch(module, exported):
            module.get_num_transfer_tokens(torch.ones(2, 4, dtype=torch.bool), 2)  # one block of two
    with pytest.raises(ValueError, match="^module:"):
        with llada_int.patch(SimpleNamespace(), exported):
            pass
    with pytest.raises(ValueError, match="^exported:"):
        llada_int.PlanCounts(exports.to_dream(mt.Schedule((1, 1))))


# == Fast-dLLM ==============================================================================
def fast_dllm_rule(counts_fn, *, steps, gen_length, block_length, threshold=None, prompt=3, seed=0):
    """NVlabs/Fast-dLLM llada/generate.py, generate() with get_transfer_index(): batch 1; per
    block num_transfer_tokens = get_num_transfer_tokens(block_mask_index, steps // num_blocks);
    a while loop, one forward each, mask_index zeroed beyond the block; with threshold=None
    row 0 takes topk(confidence, num_transfer_tokens[:, i]); with a threshold it takes every
    mask of the block ranked by confidence, keeps the first and drops the others below the
    threshold; the block ends when it has no masks. Returns realized counts per block, nfe."""
    g = torch.Generator().manual_seed(seed)
    L = prompt + gen_length
    masked = torch.zeros(1, L, dtype=torch.bool)
    masked[:, prompt:] = True
    assert gen_length % block_length == 0
    num_blocks = gen_length // block_length
    assert steps % num_blocks == 0
    steps = steps // num_blocks
    nfe, realized = 0, []
    for b in range(num_blocks):
        lo, hi = prompt + b * block_length, prompt + (b + 1) * block_length
        num_transfer_tokens = counts_fn(masked[:, lo:hi], steps)
        i, rows = 0, []
        while True:
            nfe += 1
            mask_index = masked.clone()
            mask_index[:, hi:] = False
            x0_p = torch.rand(1, L, generator=g, dtype=torch.float64)
            confidence = torch.where(mask_index, x0_p, torch.tensor(-np.inf, dtype=torch.float64))
            k = int(mask_index.sum()) if threshold is not None else int(num_transfer_tokens[0, i])
            _, select = torch.topk(confidence[0], k=k)
            keep = torch.ones(k, dtype=torch.bool)
            if threshold is not None:
                keep[1:] = confidence[0, select[1:]] >= threshold
            new = select[keep]
            masked[0, new] = False
            rows.append(int(new.numel()))
            i += 1
            if not masked[0, lo:hi].any():
                break
        realized.append(rows)
    return realized, nfe


def test_fast_dllm_counts_hold_with_threshold_none_only():
    holds = differs = 0
    for s, B in _llada_cases():
        if not _llada_fits(s, B):
            continue
        exported = exports.to_llada(s, block_length=B)
        assert exported["threshold"] is None
        module = SimpleNamespace(get_num_transfer_tokens=lambda m, n: pytest.fail("not patched"))
        with llada_int.patch(module, exported):
            got, nfe = fast_dllm_rule(module.get_num_transfer_tokens, steps=exported["steps"], gen_length=s.d,
                                      block_length=B, threshold=exported["threshold"])
        assert got == exported["num_transfer_tokens"] and nfe == s.steps
        holds += 1
        if s.d > 6:
            continue
        with llada_int.patch(module, exported):
            got, nfe = fast_dllm_rule(module.get_num_transfer_tokens, steps=exported["steps"], gen_length=s.d,
                                      block_length=B, threshold=0.9)
        differs += got != exported["num_transfer_tokens"]
    assert holds > 255 + 30 and differs > 50  # with a threshold the confidences decide, not the plan


# == Dream ==================================================================================
def dream_rule(times, steps, d, *, alg="maskgit_plus", batch=2, seed=0):
    """Dream's DreamGenerationMixin._sample (generation_utils.py, shipped with the Dream
    checkpoints; the copy read: ZHZisZZ/dllm dllm/pipelines/dream/models/generation_utils.py)
    with its timesteps line replaced by torch.tensor(times): for i in range(steps),
    t, s = timesteps[i], timesteps[i + 1] (float32). 'origin': each mask revealed if
    torch.rand < p_transfer = 1 - s/t (1 at the last step). Other algs:
    num_mask_token = mask_index.sum() / batch (float32), k = int(num_mask_token * (1 - s/t)),
    int(num_mask_token) at the last step, topk of the confidences at the masks of each row.
    Returns per-step realized counts (per row) and, for 'origin', the reveal probabilities
    P(torch.rand < p) for float32 uniforms (multiples of 2**-24)."""
    g = torch.Generator().manual_seed(seed)
    timesteps = torch.tensor(times)
    assert timesteps.dtype == torch.float32
    masked = torch.ones(batch, d, dtype=torch.bool)
    counts, probs = [], []
    for i in range(steps):
        mask_index = masked.clone()
        t, s = timesteps[i], timesteps[i + 1]
        if alg == "origin":
            p_transfer = 1 - s / t if i < steps - 1 else 1
            p = torch.as_tensor(p_transfer, dtype=torch.float32).double().item()
            probs.append(min(1.0, math.ceil(p * 2**24) / 2**24))
            reveal = (torch.rand(batch, d, generator=g) < p_transfer) & mask_index
        else:
            num_mask_token = mask_index.sum() / mask_index.shape[0]
            k = int(num_mask_token * (1 - s / t)) if i < steps - 1 else int(num_mask_token)
            confidence = torch.where(mask_index, torch.rand(batch, d, generator=g), torch.tensor(-np.inf))
            reveal = torch.zeros_like(masked)
            if k > 0:
                _, idx = torch.topk(confidence, k)
                reveal.scatter_(1, idx, True)
            reveal &= mask_index
        masked &= ~reveal
        counts.append(reveal.sum(1).tolist())
    return counts, probs, int(masked.sum())


def test_dream_count_algorithms_reveal_the_sizes():
    """maskgit_plus / topk_margin / entropy: exact counts on every composition, batch 2 (the
    float32 ulp nudging is what makes int() land on k_j)."""
    more = [mt.Schedule((1,) * 64), mt.Schedule((3, 5, 7, 11, 13, 25)), mt.Schedule((4,) * 64),
            mt.Schedule(tuple(range(1, 23))), mt.Schedule.constant(999, 37)]
    for s in ALL + more:
        exported = exports.to_dream(s)
        got, _, left = dream_rule(exported["times"], exported["steps"], s.d)
        assert [c[0] for c in got] == [c[1] for c in got] == list(s.sizes) and left == 0, s
        assert exported["exact"] and exported["counts_from_grid"] == list(s.sizes)


def test_dream_plain_grid_without_nudging_truncates():
    """Why the nudging stays: the un-nudged float32 grid gives (1, 1, 4, 2) for (1, 2, 4, 1)."""
    plain = [float(v) for v in np.float32(1 - np.cumsum([0, 1, 2, 4]) / 8)] + [1e-3]
    got, _, _ = dream_rule(plain, 4, 8)
    assert [c[0] for c in got] == [1, 1, 4, 2]


def test_dream_origin_reveal_probability_is_k_over_n():
    """'origin' is Bernoulli: at step j each of the n_j = d - C_{j-1} masks goes with
    probability k_j / n_j (up to float32: |error| <= 2**-22), so E[count_j] = k_j."""
    worst = 0.0
    for s in ALL:
        exported = exports.to_dream(s)
        _, probs, left = dream_rule(exported["times"], exported["steps"], s.d, alg="origin")
        n = s.d - np.array(s.starts)
        worst = max(worst, float(np.max(np.abs(np.array(probs) - np.array(s.sizes) / n))))
        expected = s.d * np.cumprod(np.r_[1.0, 1 - np.array(probs[:-1])]) * np.array(probs)
        np.testing.assert_allclose(expected, s.sizes, atol=1e-5)
        assert left == 0  # the last step reveals the rest
    assert worst <= 2**-22, worst


def test_dream_needs_steps_equal_to_the_exports():
    s = mt.Schedule((1, 2, 4, 1))
    exported = exports.to_dream(s)
    with pytest.raises(IndexError):  # more steps than the grid: timesteps[i + 1] past its end
        dream_rule(exported["times"], exported["steps"] + 1, s.d)
    got, _, _ = dream_rule(exported["times"], exported["steps"] - 1, s.d)  # fewer: the last one flushes early
    assert [c[0] for c in got] == [1, 2, 5] != list(s.sizes)
    for bad in (exported["steps"] - 1, exported["steps"] + 1, 4.5, True):
        with pytest.raises(ValueError, match="^steps: .*steps=4"):
            dream_int.plan_timesteps(exported, bad)
    ts = dream_int.plan_timesteps(exported, 4)
    assert ts.dtype == torch.float32 and ts.tolist()[:-1] == exported["times"][:-1]  # float32 values, unchanged
    with pytest.raises(ValueError, match="^exported:"):
        dream_int.plan_timesteps(exports.to_mdlm(s), 4)


# == MDLM ===================================================================================
class MdlmRule:
    """kuleshov-group/mdlm diffusion.py, the parts _sample calls, on a uniform toy model:
    _sample_prior (all [MASK]); log-linear noise sigma(t) = -log1p(-(1 - 1e-3) t)
    (noise_schedule.py); forward with the SUBS parameterization (no mass on [MASK], an
    unmasked position copies itself); _ddpm_caching_update(x, t, dt): move_t = t,
    move_s = t - dt, q_xs = p_x0 (move_t - move_s) with q_xs[mask] = move_s, sampled by
    (q_xs / (1e-10 - log(rand + 1e-10))).argmax; _ddpm_update: the same with
    move = 1 - exp(-sigma). Records each update's reveal probability, q_xs off the mask over
    the total, as those float32 values give it (float64 arithmetic on them)."""

    def __init__(self, d, *, batch=2, sampler="ddpm_cache", noise_removal=True, K=3, seed=0):
        self.config = SimpleNamespace(model=SimpleNamespace(length=d), loader=SimpleNamespace(eval_batch_size=batch),
                                      sampling=SimpleNamespace(noise_removal=noise_removal))
        self.parameterization, self.sampler, self.time_conditioning, self.device = "subs", sampler, False, "cpu"
        self.mask_index, self.K = K, K
        self.g = torch.Generator().manual_seed(seed)
        self.probs, self.counts, self.forwards = [], [], 0

    def _sample_prior(self, *batch_dims):
        return self.mask_index * torch.ones(*batch_dims, dtype=torch.int64)

    def noise(self, t):
        eps = 1e-3
        return -torch.log1p(-(1 - eps) * t), (1 - eps) / (1 - (1 - eps) * t)

    def forward(self, x, sigma):
        self.forwards += 1
        logits = torch.zeros(*x.shape, self.K + 1)
        logits[:, :, self.mask_index] = -1e6
        logits = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
        known = x != self.mask_index
        logits[known] = -1e6
        logits[known, x[known]] = 0
        return logits

    def _step(self, x, p_x0, move_t, move_s):
        q_xs = p_x0 * (move_t - move_s)
        q_xs[:, :, self.mask_index] = move_s[:, :, 0]
        masked = x == self.mask_index
        # what a masked position sees (the toy's p_x0 is the same at every mask): row 0's q
        pm = torch.full((self.K + 1,), 1 / self.K)
        pm[self.mask_index] = 0
        q = pm * (move_t[0, 0] - move_s[0, 0])
        q[self.mask_index] = move_s[0, 0, 0]
        q = q.double()
        self.probs.append(float(1 - q[self.mask_index] / q.sum()))
        masked = x == self.mask_index
        u = torch.rand(q_xs.shape, generator=self.g)
        _x = (q_xs / (1e-10 - (u + 1e-10).log())).argmax(dim=-1)
        copy_flag = (~masked).to(x.dtype)
        out = copy_flag * x + (1 - copy_flag) * _x
        self.counts.append(((x == self.mask_index) & (out != self.mask_index)).sum(1).tolist())
        return out

    def _ddpm_caching_update(self, x, t, dt, p_x0=None):
        sigma_t, _ = self.noise(t)
        t = t.squeeze(-1)
        move_t, move_s = t[:, None, None], (t - dt)[:, None, None]
        if p_x0 is None:
            p_x0 = self.forward(x, sigma_t).exp()
        return p_x0, self._step(x, p_x0, move_t, move_s)

    def _ddpm_update(self, x, t, dt):
        sigma_t, _ = self.noise(t)
        sigma_s, _ = self.noise(t - dt)
        move_t = (1 - torch.exp(-sigma_t.squeeze(-1)))[:, None, None]
        move_s = (1 - torch.exp(-sigma_s.squeeze(-1)))[:, None, None]
        return self._step(x, self.forward(x, sigma_t).exp(), move_t, move_s)


def mdlm_grid_only(model, times, eps=1e-5):
    """MDLM's _sample (diffusion.py) after the old doc's edit: timesteps = torch.tensor(times),
    the rest untouched, so dt = (1 - eps) / num_steps stays constant."""
    num_steps = len(times) - 1
    x = model._sample_prior(model.config.loader.eval_batch_size, model.config.model.length)
    timesteps = torch.tensor(times)
    dt = (1 - eps) / num_steps
    p_x0_cache = None
    for i in range(num_steps):
        t = timesteps[i] * torch.ones(x.shape[0], 1)
        p_x0_cache, x_next = model._ddpm_caching_update(x, t, dt, p_x0=p_x0_cache)
        if not torch.allclose(x_next, x) or model.time_conditioning:
            p_x0_cache = None
        x = x_next
    return x


def _mdlm_right(s, probs):
    """Per-step reveal probability k_j / (d - C_{j-1}) (the expected counts are then the sizes)."""
    want = np.array(s.sizes) / (s.d - np.array(s.starts))
    return len(probs) == s.steps and np.allclose(probs, want, rtol=0, atol=1e-6)


@pytest.mark.parametrize("sampler", ["ddpm_cache", "ddpm"])
def test_mdlm_plan_through_mdlm_loop_reveals_k_over_n(sampler):
    right = 0
    cases = ALL if sampler == "ddpm_cache" else SMALL  # ddpm_cache is MDLM's default
    for s in cases:
        exported = exports.to_mdlm(s)
        model = MdlmRule(s.d, sampler=sampler, noise_removal=False)
        x = mdlm_int.sample(model, exported)
        assert _mdlm_right(s, model.probs), (s, model.probs)
        expected = s.d * np.cumprod(np.r_[1.0, 1 - np.array(model.probs[:-1])]) * np.array(model.probs)
        np.testing.assert_allclose(expected, s.sizes, atol=1e-5)
        assert model.probs[-1] == 1.0 and not (x == model.mask_index).any()  # s = 0: nothing left over
        assert sum(sum(c) for c in model.counts) == 2 * s.d
        right += 1
    assert right == len(cases)


def test_mdlm_grid_only_edit_gives_wrong_counts_on_non_uniform_schedules():
    """The old doc's edit (grid replaced, dt constant) reveals dt / t_j at step j: right (to
    1e-3 tokens in expectation) only on the uniform schedules."""
    right = []
    for s in ALL:
        exported = exports.to_mdlm(s)
        model = MdlmRule(s.d)
        mdlm_grid_only(model, exported["times"])
        p = np.clip(model.probs, 0, 1)
        expected = s.d * np.cumprod(np.r_[1.0, 1 - p[:-1]]) * p
        if len(p) == s.steps and np.allclose(expected[:-1], s.sizes[:-1], atol=1e-3):
            right.append(s)
    uniform = [s for s in ALL if len(set(s.sizes)) == 1]
    assert right == uniform and len(uniform) == 20
    model = MdlmRule(8)
    mdlm_grid_only(model, exports.to_mdlm(mt.Schedule((1, 2, 4, 1)))["times"])
    assert abs(model.probs[0] - 1 / 8) > 0.1 and abs(model.probs[2] - 4 / 5) > 0.3


def test_mdlm_plan_pairs_and_checks():
    s = mt.Schedule((1, 2, 4, 1))
    exported = exports.to_mdlm(s)
    t, dt = np.float32(exported["times"]), np.float32(exported["dt"])
    assert exported["times"][:-1] == [float(v) for v in t[:-1]] and exported["dt"] == [float(v) for v in dt]  # float32
    assert list(t[:-2] - dt[:-1]) == list(t[1:-1]) and t[-2] - dt[-1] == 0 and exported["times"][-1] == 1e-5
    assert mdlm_int.plan_steps(exported) == list(zip(exported["times"][:-1], exported["dt"]))
    with pytest.raises(ValueError, match="^exported: reveals 8"):
        mdlm_int.sample(MdlmRule(9), exported)
    bad = dict(exported, dt=exported["dt"][:-1])
    with pytest.raises(ValueError, match="^exported:"):
        mdlm_int.plan_steps(bad)
    runs = []
    for removal in (False, True):  # noise removal: one more forward, nothing left to fill
        model = MdlmRule(8, noise_removal=removal)
        runs.append((mdlm_int.sample(model, exported), model.forwards))
    assert torch.equal(runs[0][0], runs[1][0]) and runs[1][1] == runs[0][1] + 1 <= exported["steps"] + 1


class _Ema:
    """MDLM's ExponentialMovingAverage (kuleshov-group/mdlm models/ema.py) as
    restore_model_and_sample uses it: store(params) keeps copies, copy_to(params) writes the
    shadow (EMA) weights in, restore(params) puts the stored ones back."""

    def __init__(self, shadow):
        self.shadow, self.stored = [s.clone() for s in shadow], None

    def store(self, params):
        self.stored = [p.detach().clone() for p in params]

    def copy_to(self, params):
        for s, p in zip(self.shadow, params):
            p.data.copy_(s)

    def restore(self, params):
        for s, p in zip(self.stored, params):
            p.data.copy_(s)


class MdlmWithNetwork(MdlmRule):
    """MdlmRule with the parts restore_model_and_sample switches: a ``backbone`` with dropout
    (MDLM's small DiT has dropout 0.1) and an EMA of its weights; every forward records
    whether the backbone was in training mode and which weight it saw."""

    def __init__(self, d, **kw):
        super().__init__(d, **kw)
        self.backbone = torch.nn.Sequential(torch.nn.Dropout(0.1), torch.nn.Linear(1, 1, bias=False))
        with torch.no_grad():
            self.backbone[1].weight.fill_(1.0)  # the raw (last optimizer step) weight
        self.ema = _Ema([torch.full((1, 1), 2.0)])  # the EMA weight
        self.seen = []

    def forward(self, x, sigma):
        self.seen.append((self.backbone.training, float(self.backbone[1].weight.detach())))
        return super().forward(x, sigma)


def test_mdlm_samples_with_ema_weights_in_eval_mode_as_its_entry_does():
    exported = exports.to_mdlm(mt.Schedule((1, 2, 4, 1)))
    model = MdlmWithNetwork(8)
    model.backbone.train()
    mdlm_int.sample(model, exported)
    assert model.seen and all(s == (False, 2.0) for s in model.seen)  # eval mode, EMA weight
    assert model.backbone.training and float(model.backbone[1].weight.detach()) == 1.0  # both restored
    model.ema = None  # main.py's eval.disable_ema: eval mode, raw weights
    model.seen.clear()
    mdlm_int.sample(model, exported)
    assert all(s == (False, 1.0) for s in model.seen) and model.backbone.training


# == dllm ===================================================================================
class DllmBase:
    """ZHZisZZ/dllm dllm/core/schedulers/alpha.py, BaseAlphaScheduler's public methods as
    they use a subclass's hooks: arguments cast to float32 tensors, alpha(i) = _alpha(i),
    __call__ = alpha, reverse_mask_prob(s, t) = (1 - self(s)) / (1 - self(t)), a float when
    both are floats."""

    def __call__(self, t):
        return self.alpha(t)

    def alpha(self, i):
        out = self._alpha(torch.as_tensor(i, dtype=torch.float32))
        return out.item() if isinstance(i, float) else out

    def reverse_mask_prob(self, s, t):
        t_t, s_t = torch.as_tensor(t, dtype=torch.float32), torch.as_tensor(s, dtype=torch.float32)
        assert bool(torch.all(s_t < t_t))
        out = (1 - self(s_t)) / (1 - self(t_t))
        return out.item() if isinstance(t, float) and isinstance(s, float) else out


class HooksOnly(DllmBase):
    """dllm's base methods around our hooks only (what a subclass of BaseAlphaScheduler sees)."""

    def __init__(self, ours):
        self._alpha, self._alpha_derivative = ours._alpha, ours._alpha_derivative


def dllm_rule(scheduler, n, steps, batch=2):
    """ZHZisZZ/dllm dllm/core/samplers/utils.py, get_num_transfer_tokens(stochastic=False):
    per row, for j = 0..steps-1 with t = (steps - j)/steps, s = (steps - 1 - j)/steps,
    p = 1 - scheduler.reverse_mask_prob(s=s, t=t); k = torch.round(mask_num (float64) * p),
    capped at mask_num; mask_num -= k; stop at 0; then each row's zero counts are removed
    (the sampler runs one forward per remaining count)."""
    mask_num = torch.full((batch, 1), n, dtype=torch.int64)
    out = torch.zeros(batch, steps, dtype=torch.int64)
    for i in range(batch):
        for t, s, j in zip(range(steps, 0, -1), range(steps - 1, -1, -1), range(steps)):
            s /= steps
            t /= steps
            p = 1 - scheduler.reverse_mask_prob(s=s, t=t)
            out[i, j] = torch.round(mask_num[i, 0].to(torch.float64) * p).to(torch.int64)
            out[i, j] = torch.minimum(out[i, j], mask_num[i, 0])
            mask_num[i, 0] -= out[i, j]
            if mask_num[i, 0].item() == 0:
                break
    return [row[row > 0].tolist() for row in out]


def test_dllm_scheduler_reproduces_the_counts_through_dllms_rule():
    for s in ALL:
        exported = exports.to_dllm(s)
        assert "alpha" not in exported and exported["max_new_tokens"] == s.d  # the field no longer hides alpha()
        ours = PlanAlphaScheduler.from_plan(exported)
        for sched in (ours, HooksOnly(ours)) if s.d <= 6 else (ours,):
            assert dllm_rule(sched, s.d, exported["steps"]) == [list(s.sizes)] * 2, s
        assert exports.dllm_counts(exported["t"], exported["alpha_nodes"], s.d) == list(s.sizes)


def test_dllm_scheduler_interface():
    exported = exports.to_dllm(mt.Schedule((1, 2, 4, 1)))
    sch = PlanAlphaScheduler.from_plan(exported)
    assert sch.alpha(1.0) == 0.0 and sch.alpha(0.0) == 1.0 and sch(0.75) == pytest.approx(1 / 8)
    assert isinstance(sch.alpha(0.5), float) and sch.alpha(0.5) == pytest.approx(3 / 8)
    tt = torch.tensor([1.0, 0.875, 0.5, 0.0])  # between nodes 1 and 0.75: alpha goes 0 -> 1/8
    np.testing.assert_allclose(sch.alpha(tt).numpy(), [0, 1 / 16, 3 / 8, 1], atol=1e-7)
    assert sch.alpha(tt).dtype == torch.float32
    # alpha' is the segment slope: -(k_{j+1}/d) / (1/S), negative as dllm's linear alpha' = -1
    np.testing.assert_allclose(sch.alpha_derivative(np.array([0.9, 0.6, 0.3, 0.1, 0.0])),
                               [-0.5, -1.0, -2.0, -0.5, -0.5])
    assert sch.reverse_mask_prob(0.5, 0.75) == pytest.approx((1 - 3 / 8) / (1 - 1 / 8))
    assert sch.weight(0.6) == pytest.approx(1.0 / (1 - sch.alpha(0.6) + 1e-6), rel=1e-6)
    with pytest.raises(ValueError, match="^t:"):
        sch.alpha(1.5)
    with pytest.raises(ValueError, match="^s:"):
        sch.reverse_mask_prob(0.75, 0.5)
    with pytest.raises(ValueError, match="^alpha_nodes:"):
        PlanAlphaScheduler([1, 0.5, 0], [0, 0.7, 0.6])

    class Sub(PlanAlphaScheduler, DllmBase):  # what `class S(PlanAlphaScheduler, BaseAlphaScheduler)` gives
        pass

    assert Sub(exported["t"], exported["alpha_nodes"]).reverse_mask_prob(0.5, 0.75) == sch.reverse_mask_prob(0.5, 0.75)


def test_integrations_import_neither_torch_nor_dllm_at_module_level():
    """mdmtheory.exports must import without torch or dllm: no module-level import of
    either (torch is imported inside the functions that need it; dllm never)."""
    import ast
    import pathlib

    import mdmtheory.exports as pkg

    files = sorted(pathlib.Path(pkg.__file__).parent.glob("*.py"))
    assert {f.stem for f in files} >= {"__init__", "llada", "dream", "mdlm", "dllm"}
    for f in files:
        tree = ast.parse(f.read_text())
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        names = {a.name.split(".")[0] for n in top if isinstance(n, ast.Import) for a in n.names}
        names |= {(n.module or "").split(".")[0] for n in top if isinstance(n, ast.ImportFrom)}
        assert not names & {"torch", "dllm", "transformers"}, (f.name, names)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert (node.module or "").split(".")[0] != "dllm", f.name


@pytest.mark.slow
def test_integrations_import_without_torch_or_dllm():
    code = ("import sys; sys.modules['dllm'] = None\n"
            "import mdmtheory.exports.llada, mdmtheory.exports.dream, mdmtheory.exports.mdlm\n"
            "from mdmtheory.exports.dllm import PlanAlphaScheduler\n"
            "from mdmtheory.exports import to_dllm; import mdmtheory as mt\n"
            "s = PlanAlphaScheduler.from_plan(to_dllm(mt.Schedule((1, 2, 4, 1))))\n"
            "print(s.alpha(0.5), s.reverse_mask_prob(0.5, 0.75), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    a, r, loaded = out.stdout.split()
    assert float(a) == pytest.approx(3 / 8) and float(r) == pytest.approx(5 / 7, rel=1e-6) and loaded == "False"


@pytest.mark.parametrize("s", SCHEDS)
def test_time_grids_and_nodes_have_their_shape(s):
    for fmt, eps in (("dream", 1e-3), ("mdlm", 1e-5)):
        t = np.array(exports.export(s, fmt)["times"])
        assert t[0] == 1.0 and np.all(np.diff(t) < 0) and len(t) == s.steps + 1
        assert t[-1] == eps
        np.testing.assert_allclose(t[:-1], 1 - np.array(s.cumulative[:-1]) / s.d, atol=1e-6)
    e = exports.to_dllm(s)
    t, a = np.array(e["t"]), np.array(e["alpha_nodes"])
    assert t[0] == 1 and t[-1] == 0 and np.all(np.diff(t) < 0) and a[0] == 0 and a[-1] == 1
    np.testing.assert_allclose(a, np.array(s.cumulative) / s.d, atol=1e-15)
    with pytest.raises(ValueError, match="^eps:"):
        exports.to_mdlm(s, eps=1 / s.d)


def test_cli_llada_refuses_padding_and_keeps_valid_block_plans(tmp_path, capsys):
    """`design --format llada --block-length B --steps T`: never a changed step count (the
    old export printed steps: 24 for --steps 8 in three blocks): one line, exit 2, naming
    block_length and steps; a schedule that fits the blocks still exports."""
    from mdmtheory.cli import main

    rng = np.random.default_rng(0)
    f = tmp_path / "x.txt"
    f.write_text("\n".join(" ".join(map(str, r)) for r in rng.integers(0, 2, (300, 6))) + "\n")
    assert main(["design", "--data", str(f), "--steps", "3", "--format", "llada", "--block-length", "3"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "block_length:" in err and "steps=3" in err and "num_blocks=2" in err
    assert main(["design", "--data", str(f), "--steps", "6", "--format", "llada", "--block-length", "3", "--json"]) == 0
    e = json.loads(capsys.readouterr().out)["export"]
    assert e["steps"] == 6 and e["num_transfer_tokens"] == [[1, 1, 1], [1, 1, 1]]


# == json, dispatch =========================================================================
@pytest.mark.parametrize("s", SCHEDS)
def test_json_export_reads_back(s):
    e = exports.to_json(s)
    text = json.dumps(e)
    assert mt.Schedule.from_json(text) == s
    g = mt.Grid.from_json(text)
    assert mt.schedules.grid_to_schedule(g, s.d) == s


@pytest.mark.parametrize("fmt", exports.FORMATS)
def test_every_export_is_json(fmt):
    e = exports.export(mt.Schedule((1, 2, 4, 1)), fmt)
    assert json.loads(json.dumps(e)) == e and e["format"] == fmt and e["steps"] == 4


def test_export_rejects_unknown_format():
    with pytest.raises(ValueError, match="format"):
        exports.export(mt.Schedule((1, 1)), "vllm")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exports.export(mt.Schedule((1, 1)), "llada", block_length=1)


def test_llada_refuses_a_gen_length_that_repeats_the_plan():
    # a whole multiple with matching steps would run [1, 3, 3, 1] as [1, 3, 3, 1, 1, 3, 3, 1]
    exported = exports.to_llada(mt.Schedule((1, 3, 3, 1)), block_length=4)
    module = SimpleNamespace(get_num_transfer_tokens=lambda m, n: pytest.fail("not patched"))
    with pytest.raises(ValueError, match=r"^gen_length: llada_rule was called with gen_length=16, the plan generates "
                                         r"8 .*run the plan again.*gen_length=8"):
        with llada_int.patch(module, exported):
            llada_rule(lambda m, n: module.get_num_transfer_tokens(m, n), steps=2 * exported["steps"], gen_length=16,
                       block_length=4)
    with llada_int.patch(module, exported):  # the plan's own length runs
        got, _, left = llada_rule(lambda m, n: module.get_num_transfer_tokens(m, n), steps=exported["steps"],
                                  gen_length=8, block_length=4)
    assert [r[0] for rows in got for r in rows] == [1, 3, 3, 1] and left == 0


def generate_with_prefix_cache(module, *, steps, gen_length, block_length):
    """The block loop of NVlabs/Fast-dLLM 24cc59e llada/generate.py generate_with_prefix_cache
    (lines 125-169), its indexing only: step 0 reads num_transfer_tokens[:, 0], then
    ``i = 1; while True:`` reads num_transfer_tokens[:, i] and only then tests the block.
    Returns the counts read per block."""
    num_blocks = gen_length // block_length
    steps = steps // num_blocks
    masked = torch.ones(1, gen_length, dtype=torch.bool)
    read = []
    for b in range(num_blocks):
        lo, hi = b * block_length, (b + 1) * block_length
        num_transfer_tokens = module.get_num_transfer_tokens(masked[:, lo:hi], steps)
        rows = [int(num_transfer_tokens[0, 0])]
        masked[0, lo:lo + rows[0]] = False
        i = 1
        while True:
            k = int(num_transfer_tokens[0, i])  # IndexError when steps == 1
            left = torch.nonzero(masked[0, lo:hi])[:k, 0] + lo
            masked[0, left] = False
            rows.append(k)
            if not masked[0, lo:hi].any():
                break
            i += 1
        read.append(rows)
    return read


def _fast_dllm_counts(mask_index, steps):
    """Fast-dLLM's own get_num_transfer_tokens (llada/generate.py): floor, remainder first."""
    n = mask_index.sum(dim=1, keepdim=True)
    out = torch.zeros(n.size(0), steps, dtype=torch.int64) + n // steps
    for r in range(n.size(0)):
        out[r, : int(n[r, 0] % steps)] += 1
    return out


def test_fast_dllm_cached_loops_refuse_one_step_per_block():
    exported = exports.to_llada(mt.Schedule((4, 4)), block_length=4)
    assert exported["steps_per_block"] == 1
    # the upstream loop itself breaks on one step per block, with its own counts
    with pytest.raises(IndexError):
        generate_with_prefix_cache(SimpleNamespace(get_num_transfer_tokens=_fast_dllm_counts), steps=2,
                                   gen_length=8, block_length=4)
    module = SimpleNamespace(get_num_transfer_tokens=_fast_dllm_counts)
    with pytest.raises(ValueError, match=r"^exported: one step per block breaks Fast-dLLM's generate_with_prefix_cache"):
        with llada_int.patch(module, exported):
            generate_with_prefix_cache(module, steps=exported["steps"], gen_length=8, block_length=4)
    # two steps per block run there, with the plan's counts
    plan2 = exports.to_llada(mt.Schedule((1, 3, 3, 1)), block_length=4)
    with llada_int.patch(module, plan2):
        assert generate_with_prefix_cache(module, steps=plan2["steps"], gen_length=8, block_length=4) == [[1, 3], [3, 1]]


@pytest.mark.parametrize("fmt", ["llada", "dream", "mdlm", "dllm", "json"])
def test_cli_export_runs_as_printed_through_its_samplers_loop(tmp_path, capsys, fmt):
    """`mdmtheory design DATA --steps 3 --format FMT`: the printed export, taken as printed
    (the JSON the CLI prints), run through that sampler's own loop as its source states it
    (the rules above), reveals the printed schedule in the printed number of steps."""
    from mdmtheory.cli import main

    rng = np.random.default_rng(0)
    d = 6
    x = np.zeros((300, d), dtype=np.int64)
    x[:, 0] = rng.integers(0, 2, 300)
    for j in range(1, d):
        x[:, j] = np.where(rng.random(300) < 0.9, x[:, j - 1], 1 - x[:, j - 1])
    np.save(tmp_path / "x.npy", x)
    capsys.readouterr()
    assert main(["design", "--data", str(tmp_path / "x.npy"), "--steps", "3", "--format", fmt, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    e, sizes = out["export"], out["sizes"]
    assert e["format"] == fmt and e["steps"] == 3 == len(sizes) and sum(sizes) == d
    if fmt == "llada":
        module = SimpleNamespace(get_num_transfer_tokens=lambda m, n: pytest.fail("not patched"))
        with llada_int.patch(module, e):
            got, outside, left = llada_rule(lambda m, n: module.get_num_transfer_tokens(m, n), steps=e["steps"],
                                            gen_length=e["gen_length"], block_length=e["block_length"])
        assert [r[0] for rows in got for r in rows] == sizes and not outside and left == 0
    elif fmt == "dream":
        got, _, left = dream_rule(e["times"], e["steps"], d)
        assert [c[0] for c in got] == sizes and left == 0
    elif fmt == "mdlm":
        model = MdlmRule(d, noise_removal=False)
        mdlm_int.sample(model, e)
        assert _mdlm_right(mt.Schedule(sizes), model.probs) and model.forwards == e["steps"]
    elif fmt == "dllm":
        assert dllm_rule(PlanAlphaScheduler.from_plan(e), d, e["steps"]) == [sizes] * 2
    else:
        assert list(mt.Schedule.from_json(json.dumps(e)).sizes) == sizes
