"""A tuned threshold run in diffusers' own LLaDA2Pipeline (issue 37 §3): the pipeline's model
calls, counted while the unpatched pipeline runs with the exact law as its model, against the
forwards the Tuning record states (z-test); and the SGLang export of a tuned entropy rule read
back as SGLang's algorithm files read their YAML (sglang is not installed: the readers are the
files' ``config.algorithm_config.get`` lines, quoted in mdmtheory.exports.sglang)."""

from __future__ import annotations

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory.exports.diffusers import tuned_threshold_call
from mdmtheory.exports.sglang import tuned_algorithm_config
from mdmtheory.laws.families import markov_chain

P = markov_chain(np.array([[0.9, 0.1], [0.2, 0.8]]), 4)


@pytest.mark.parametrize("n_runs", [80, pytest.param(500, marks=pytest.mark.slow)])  # one-row runs, ~0.07 s each
def test_tuned_threshold_runs_in_diffusers_with_the_stated_forwards(n_runs):
    torch = pytest.importorskip("torch")
    diffusers = pytest.importorskip("diffusers")
    pytest.importorskip("transformers")
    pytest.importorskip("tokenizers")
    from pipeline_reference import ExactLawModel, tokenizer

    t = mt.optimal.tune("diffusers_threshold", P, forwards=3.5, values=(0.5, 0.7, 0.8, 0.9))
    assert 2 < t.expected_forwards <= 3.5 and t.value in (0.5, 0.7, 0.8)
    e = tuned_threshold_call(t)
    call = e["pipeline_call"]
    assert call["threshold"] == t.value and e["expected_forwards"] == t.expected_forwards
    tok = tokenizer()
    model = ExactLawModel(P, tok.mask_token_id, len(tok))
    pipe = diffusers.LLaDA2Pipeline(model=model, scheduler=diffusers.BlockRefinementScheduler(), tokenizer=tok)
    pipe.set_progress_bar_config(disable=True)
    g = torch.Generator().manual_seed(7)
    calls = []
    for _ in range(n_runs):
        model.calls = 0
        out = pipe(input_ids=torch.zeros((1, 0), dtype=torch.long), generator=g, output_type="seq", **call)
        assert not (out.sequences == tok.mask_token_id).any()
        calls.append(model.calls)
    calls = np.asarray(calls, dtype=np.float64)
    se = calls.std(ddof=1) / np.sqrt(calls.size)
    assert se > 0 and abs(calls.mean() - t.expected_forwards) < 5 * se


def test_tuned_threshold_export_refusals():
    with pytest.raises(ValueError, match="^tuning: this export takes a tuning of 'diffusers_threshold'"):
        tuned_threshold_call(mt.optimal.tune("threshold", P, forwards=3))
    with pytest.raises(ValueError, match="^tuning: it has no pick"):
        tuned_threshold_call(mt.optimal.tune("diffusers_threshold", P, values=(0.5,)))
    with pytest.raises(ValueError, match="^tuning: expected"):
        tuned_threshold_call({"planner": "diffusers_threshold"})


@pytest.mark.parametrize("rule, algo, key, extra", [("entropy_threshold", "EntropyThreshold", "threshold", 0),
                                                    ("entropy_budget", "EBSampling", "gamma", 1)])
def test_sglang_config_of_a_tuned_entropy_rule(rule, algo, key, extra):
    yaml = pytest.importorskip("yaml")
    t = mt.optimal.tune(rule, P, forwards=4)
    e = tuned_algorithm_config(t.to_dict())
    cfg = yaml.safe_load(e["yaml"])  # what SGLang's config.py reads from --dllm-algorithm-config
    assert isinstance(cfg, dict) and cfg == e["dllm_algorithm_config"]
    default = {"threshold": 0.95, "gamma": 0.15}[key]  # the files' .get(key, default)
    assert cfg.get(key, default) == t.value and cfg["block_size"] == P.d
    assert e["dllm_algorithm"] == algo and e["launch"][1] == algo
    # SGLang's forwards: EntropyThreshold is the tuned rule itself (steps + 1); EBSampling adds its final forward
    sg = mt.samplers.serving.EBSamplingPlanner(t.value) if rule == "entropy_budget" else None
    if sg is not None:
        run = mt.samplers.as_sampler(sg).exact_run(P, None)
        assert e["expected_forwards"] == pytest.approx(run.forwards, abs=1e-12)
    assert e["expected_forwards"] == pytest.approx(t.expected_forwards + extra, abs=1e-12)
    with pytest.raises(ValueError, match="^tuning: this export takes"):
        tuned_algorithm_config(mt.optimal.tune("factor", P, forwards=4))


#: Fast-dLLM's generate as read (NVlabs/Fast-dLLM llada/generate.py at f6b35ec): its keyword names
FASTDLLM_GENERATE = ("steps", "gen_length", "block_length", "temperature", "remasking", "mask_id", "threshold",
                     "factor", "step_callback")


@pytest.mark.parametrize("rule", ["threshold", "factor"])
def test_fastdllm_kwargs_of_a_tuned_rule(rule):
    from mdmtheory.exports.llada import tuned_generate_kwargs

    t = mt.optimal.tune(rule, P, forwards=3)
    e = tuned_generate_kwargs(t)
    kw = e["generate_kwargs"]
    assert set(kw) <= set(FASTDLLM_GENERATE) and e["exact"] is False
    assert kw[rule] == t.value and kw["factor" if rule == "threshold" else "threshold"] is None
    # generate's own asserts: gen_length % block_length == 0, steps % num_blocks == 0
    assert kw["gen_length"] % kw["block_length"] == 0 and kw["steps"] % (kw["gen_length"] // kw["block_length"]) == 0
    with pytest.raises(ValueError, match="^tuning: this export takes"):
        tuned_generate_kwargs(mt.optimal.tune("frechet", P, forwards=3))
