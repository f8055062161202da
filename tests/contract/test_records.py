"""Every public result record has a JSON-ready ``to_dict()`` holding every field.

The records are found by introspection: every dataclass or NamedTuple named in the
``__all__`` of a module of a wing (and ``symbolic``). For each, a real instance is built by
calling the function that returns it on a small law (a record no public function returns,
such as a planner's :class:`StepContext`, by its constructor), then ``json.dumps`` of its
``to_dict()`` must work and the dict must name every field.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import pkgutil

import numpy as np
import pytest

import mdmtheory as mt
from mdmtheory import Estimate

WINGS = ("laws", "schedules", "information", "exports", "data", "samplers", "bounds", "optimal", "bridge",
         "design", "report")


def _is_record(obj) -> bool:
    return isinstance(obj, type) and (dataclasses.is_dataclass(obj) or (issubclass(obj, tuple) and hasattr(obj, "_fields")))


def _record_classes() -> dict[str, type]:
    out = {}
    names = []
    for wing in WINGS:
        pkg = importlib.import_module(f"mdmtheory.{wing}")
        names.append(pkg.__name__)
        names += [m.name for m in pkgutil.iter_modules(pkg.__path__, f"{pkg.__name__}.")]
    names.append("mdmtheory.symbolic")
    for name in names:
        mod = importlib.import_module(name)
        for attr in getattr(mod, "__all__", ()):
            obj = getattr(mod, attr, None)
            if _is_record(obj):
                out[obj.__name__] = obj
    return out


RECORDS = _record_classes()

# keys the to_dicts written before this contract use for a field (the CLI's --json reads them)
RENAMED = {
    "Certificate": {"grid": "times"},
    "Memorization": {"unique": "unique_context", "stderr": "unique_context_stderr", "distinct": "distinct_rows"},
    "BlockCandidate": {"ci": "path_kl_ci"},
    "BlockCertificate": {"grid": "times"},
}

# to_dicts written before this contract that keep a non-finite float as a float (json.dumps
# writes Infinity, as their --json twins did)
LOOSE = {"Report", "Certificate", "BlockCertificate", "FloatingSummary", "InformationCorrelation"}


# -- small laws and models -------------------------------------------------------------------
def _chain():
    return mt.families.markov_chain([[0.8, 0.2], [0.3, 0.7]], 4)


def _samples(n=64, seed=0):
    from mdmtheory.laws import TableLaw

    return TableLaw(_chain()).sample(n, np.random.default_rng(seed))


def _tiny():
    from mdmtheory.bridge import tiny

    return tiny.TinyMDM(tiny.TinyConfig(vocab_size=2, seq_len=4, n_layers=1, n_heads=2)).eval()


def _exact_model():
    from mdmtheory import bridge

    return bridge.ExactModel(_chain())


def _trace():
    from mdmtheory.bridge import attention

    return attention.trace_sampling(_tiny(), 4, mt.Schedule([1, 1, 2]), n=2, seed=0, keep="full")


def _tokenized(tmp_path):
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    from mdmtheory.data import load_text

    text = ["the cat sat on the mat", "a dog ran far away", "the end of the text"]
    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(text * 3, trainers.BpeTrainer(vocab_size=40, special_tokens=["[PAD]", "[MASK]", "[UNK]"]))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", mask_token="[MASK]",
                                                unk_token="[UNK]")
    fast.save_pretrained(tmp_path / "tok")
    (tmp_path / "t.txt").write_text("\n".join(text) + "\n")
    return load_text(tmp_path / "t.txt", tmp_path / "tok", length=4)


def _profile_estimate():
    from mdmtheory.design import estimate_cross_entropy_profile

    from mdmtheory.laws import TableLaw

    return estimate_cross_entropy_profile(TableLaw(_chain()), _samples(), n_per_level=8)


def _builders(tmp_path):
    from mdmtheory import bounds, data, design, information, laws, optimal, report, samplers, schedules, symbolic

    p = _chain()
    plan = mt.Schedule([2, 2])
    x = _samples()
    b = {}
    # laws
    b["Joint"] = lambda: p
    b["TableLaw"] = lambda: laws.TableLaw(p)
    b["MarkovChainLaw"] = lambda: laws.MarkovChainLaw([[0.8, 0.2], [0.3, 0.7]], 4)
    b["MixtureOfProductsLaw"] = lambda: laws.empirical_oracle(x)
    b["HiddenMarkovLaw"] = lambda: laws.HiddenMarkovLaw([0.5, 0.5], [[0.9, 0.1], [0.2, 0.8]], [[0.7, 0.3], [0.1, 0.9]], 3)
    b["InformationProfileEstimate"] = lambda: laws.estimate_information_profile(p, 8)
    # schedules
    b["Schedule"] = lambda: schedules.cosine_schedule(4, 2)
    b["Grid"] = lambda: schedules.loglinear_grid(3)
    b["BlockPlan"] = lambda: schedules.semi_autoregressive_plan(4, 2, 1)
    # information
    b["Profile"] = lambda: information.information_profile(p)
    b["ProfileEstimate"] = _profile_estimate
    b["Lemma1"] = lambda: information.w26_lemma1(p, 0.25, 0.75)
    b["DyadicEstimate"] = lambda: information.dyadic_estimate(p, 0.25, 0.75, n=8, seed=0)
    # data
    b["Dataset"] = lambda: data.phonemes(length=4)
    b["TokenizedData"] = lambda: _tokenized(tmp_path)
    # samplers
    b["StepContext"] = lambda: samplers.StepContext(1, np.zeros(4, bool), 2, 4, 2, np.arange(4), None, None)
    b["RandomPlanner"] = lambda: samplers.RandomPlanner()
    b["BernoulliPlanner"] = lambda: samplers.BernoulliPlanner((0.5, 1.0))
    for name in ("LeftToRightPlanner", "ConfidencePlanner", "MarginPlanner", "EntropyPlanner"):
        b[name] = (lambda n: lambda: getattr(samplers, n)())(name)
    b["SemiAutoregressivePlanner"] = lambda: samplers.SemiAutoregressivePlanner(2)
    b["ThresholdPlanner"] = lambda: samplers.ThresholdPlanner(0.5)
    b["EntropyBudgetPlanner"] = lambda: samplers.EntropyBudgetPlanner(0.5)
    b["FactorPlanner"] = lambda: samplers.FactorPlanner(0.75)
    b["FrechetPlanner"] = lambda: samplers.FrechetPlanner(0.25)
    b["DemaskPlanner"] = lambda: samplers.DemaskPlanner(0.1)
    b["DilatedPlanner"] = lambda: samplers.DilatedPlanner(2)
    b["PositionCalibratedPlanner"] = lambda: samplers.PositionCalibratedPlanner((0.5, 0.5))
    b["ExactRun"] = lambda: mt.exact_run(p, plan)
    b["Run"] = lambda: samplers.as_sampler("random").exact_run(p, mt.RandomSchedule.deterministic(plan))
    b["Capabilities"] = lambda: samplers.as_sampler("confidence").capabilities
    b["CompareContext"] = lambda: mt.bounds.compare_context(p, plan)
    b["RowFamily"] = lambda: mt.bounds.REGISTERED[0]
    b["CorruptionRun"] = lambda: mt.samplers.corruption_run(p, 2, mix=0.5)  # issue 29 §3
    b["SampleThenSelectPlanner"] = lambda: samplers.SampleThenSelectPlanner()
    b["SelectRun"] = lambda: samplers.select_run(p, plan)
    b["SelectionBias"] = lambda: samplers.selection_bias(p, 2)
    b["RemaskingSampler"] = lambda: samplers.RemaskingSampler.uniform(2)
    b["CorrectorSampler"] = lambda: samplers.CorrectorSampler(plan)
    b["EditingSampler"] = lambda: samplers.EditingSampler(plan)
    b["RevisionRun"] = lambda: samplers.revise_run(p, samplers.RemaskingSampler.uniform(2))
    b["SpeculativeSampler"] = lambda: samplers.SpeculativeSampler("assd", 2)
    b["ReMDMSampler"] = lambda: samplers.ReMDMSampler(2, "loop", top_p=0.9)
    b["InfoGainSampler"] = lambda: samplers.InfoGainSampler(candidates=2)
    b["InfoGainRun"] = lambda: samplers.infogain_run(p, samplers.InfoGainSampler(candidates=2))
    b["SpeculativeRun"] = lambda: samplers.speculative_run(p, samplers.SpeculativeSampler("assd", 2))
    b["EntropyThresholdPlanner"] = lambda: samplers.EntropyThresholdPlanner()
    b["EBSamplingPlanner"] = lambda: samplers.EBSamplingPlanner()
    b["HierarchyBlockPlanner"] = lambda: samplers.HierarchyBlockPlanner(sub_block_size=2)
    b["FullAttnMultiBlockPlanner"] = lambda: samplers.FullAttnMultiBlockPlanner(block_size=2)
    b["JointThresholdSampler"] = lambda: samplers.JointThresholdSampler(max_post_edit_steps=1)
    b["ServingRun"] = lambda: samplers.serving_run(p, samplers.EntropyThresholdPlanner())
    b["Simulation"] = lambda: mt.simulate(p, plan, n=8, seed=0)
    b["KLEstimate"] = lambda: mt.estimate_kl(p, plan, n=8, seed=0)
    b["TieSpread"] = lambda: samplers.tie_spread(p, plan, "confidence")
    b["RevealDiagnostics"] = lambda: samplers.reveal_diagnostics(p, plan)
    b["ComparisonTable"] = lambda: samplers.comparison_table({"chain": p}, ["random"], [2])
    b["DuelRanking"] = lambda: samplers.duel_ranking(p, [("l2r", samplers.LeftToRightPlanner(), plan)])
    b["TransitionRates"] = lambda: samplers.transition_rates(x, [[0.8, 0.2], [0.3, 0.7]], n_boot=10)
    b["ChainStep"] = lambda: samplers.kernel.ChainStep(src=np.zeros(1, np.int64), dst=np.zeros(1, np.int64),
                                                       out=np.zeros(1, np.int64), live=np.ones(1, bool), w=1.0)
    b["Choice"] = lambda: samplers.ties.tie_choices(np.array([[0.3, 0.3, 0.1]]), np.ones((1, 3), bool), 1)
    # bounds
    b["Bound"] = lambda: bounds.riemann_bound(p, plan)
    b["BlockAllocation"] = lambda: bounds.w26_block_objective_min(p, [0.25, 0.75], 2)
    b["ZC26Check"] = lambda: bounds.zc26_check(p, mt.RandomSchedule.deterministic(plan))
    b["StatementCheck"] = lambda: bounds.statement_checks(p)[0]
    b["JysSearch"] = lambda: bounds.jys_schedule(p, 2, src_steps=64)
    b["CL26Point"] = lambda: bounds.cl26_point(p, 0.5)
    b["FengRates"] = lambda: bounds.feng25_rates(p, 2)
    b["FengSteps"] = lambda: bounds.fewest_steps(p, ter_target=0.1, ser_target=0.1)
    b["FengEstimate"] = lambda: bounds.markov_rates_mc([[0.8, 0.2], [0.3, 0.7]], 4, 2, n=8, seed=0)
    b["Comparison"] = lambda: mt.compare(p, plan)
    b["ComparisonRow"] = lambda: mt.compare(p, plan).rows[0]
    b["TightnessTarget"] = lambda: next(iter(bounds.tightness.targets(3).values()))
    b["TightnessResult"] = lambda: bounds.tightness.tightness_search(
        next(iter(bounds.tightness.targets(3).values())), restarts=1, steps=2, check_every=1)
    # optimal
    b["Frontier"] = lambda: mt.pareto_frontier(information.information_profile(p), 2)
    b["LagrangianFrontier"] = lambda: optimal.lagrangian_frontier(information.information_profile(p), 2)
    b["BlockPartition"] = lambda: optimal.block_partition(information.information_profile(p), 2)
    b["BlockDesign"] = lambda: optimal.design_blocks(p, forwards=2, given=[0])
    b["BlockCandidate"] = lambda: optimal.design_blocks(p, forwards=2, given=[0]).best
    b["RandomizedOptimum"] = lambda: optimal.optimal_random_schedule(p, steps=2)
    b["Tuning"] = lambda: optimal.tune("threshold", p, forwards=3, values=[0.6, 0.9])
    b["AdaptivePlan"] = lambda: optimal.adaptive_plan(p, steps=2)
    # bridge
    b["TinyConfig"] = lambda: _tiny().config
    b["TinyOutput"] = lambda: _tiny()(__import__("torch").zeros((1, 4), dtype=__import__("torch").long))
    b["TrainResult"] = lambda: __import__("mdmtheory.bridge.train", fromlist=["train"]).train(_tiny(), x, steps=2, batch_size=8)
    b["AttentionTrace"] = _trace
    b["Drift"] = lambda: __import__("mdmtheory.bridge.attention", fromlist=["drift"]).drift(_trace().received()[:, :, 0])
    b["FloatingSummary"] = lambda: __import__("mdmtheory.bridge.attention", fromlist=["f"]).floating_summary(_trace())
    b["InformationCorrelation"] = lambda: __import__("mdmtheory.bridge.attention", fromlist=["f"]) \
        .attention_information_correlation(_trace(), p)
    b["PathEstimate"] = lambda: _bridge().estimate_path_cross_entropy(_exact_model(), x, plan, n=8)
    b["SpeculativeSimulation"] = lambda: _bridge().speculative_sample(_exact_model(), 4, None, n=8, seed=0)
    b["PlanComparison"] = lambda: _bridge().compare_plans(_exact_model(), x, [plan, mt.Schedule([1, 3])], n=8)
    b["OutputLawEstimate"] = lambda: _bridge().output_law_estimate(p, x)  # issue 29 §3
    b["ScheduleEstimate"] = lambda: _bridge().optimal_schedule_estimate(
        _bridge().estimate_profile(_exact_model(), x, n_per_level=8), 2, n_resamples=4)
    b["FactorizationEstimate"] = lambda: _bridge().estimate_factorization_error(_exact_model(), x, plan, n=8)
    b["DyadicModelEstimate"] = lambda: _bridge().estimate_dyadic(_exact_model(), x, 0.25, 0.75, n=8)
    # design
    b["Memorization"] = lambda: design.memorization(x)
    b["Design"] = lambda: design.design(x, K=2, steps=2)
    b["Certificate"] = lambda: design.certify(p, 64, 0.5, options=mt.design.CertificateOptions(interval=(0.25, 0.75)))
    b["BlockCertificate"] = lambda: design.certify_blocks(x, 0.5, p=p, edges=[0.25, 0.5, 0.75])
    b["CertificateOptions"] = lambda: design.CertificateOptions(form="entropy", interval=(0.25, 0.75))
    # exports
    b["SchedulerCheck"] = lambda: __import__("mdmtheory.exports.diffusers", fromlist=["f"]).check_scheduler(
        __import__("mdmtheory.exports.diffusers", fromlist=["f"]).save_scheduler([2, 1, 1], tmp_path / "scheduler"))
    # report
    b["AttentionOptions"] = lambda: report.AttentionOptions(model=_tiny(), steps=2)
    b["Report"] = lambda: report.build_report(p, steps=[1, 2], planners=("random",))
    # symbolic
    b["SymbolicJoint"] = lambda: symbolic.from_joint(mt.families.parity(3))
    b["ClosedForms"] = lambda: symbolic.parity_closed_forms()
    b["ContinuumSchedule"] = lambda: symbolic.square_root_rule()
    b["PowerLawSchedule"] = lambda: symbolic.power_law_schedule()
    b["RiemannCertificate"] = lambda: symbolic.riemann_bound_certificate([1, 2])
    return b


def _bridge():
    from mdmtheory import bridge

    return bridge


def test_every_record_is_found():
    assert len(RECORDS) >= 70
    for name in ("ProfileEstimate", "KLEstimate", "Certificate", "Report", "Schedule", "AttentionTrace"):
        assert name in RECORDS


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_record_to_dict_is_json_and_holds_every_field(name, tmp_path):
    cls = RECORDS[name]
    assert callable(getattr(cls, "to_dict", None)), f"{name}: no to_dict"
    builders = _builders(tmp_path)
    assert name in builders, f"{name}: add a builder (the function that returns it, on a small law)"
    rec = builders[name]()
    assert isinstance(rec, cls), f"{name}: the builder returned a {type(rec).__name__}"
    d = rec.to_dict()
    assert isinstance(d, dict)
    json.loads(json.dumps(d, allow_nan=name in LOOSE))  # strict JSON: non-finite floats are strings
    fields = cls._fields if issubclass(cls, tuple) else [f.name for f in dataclasses.fields(cls)]
    renamed = RENAMED.get(name, {})
    for f in fields:
        assert renamed.get(f, f) in d, f"{name}.to_dict(): no key for the field {f!r}"


# -- the one base of every estimate ----------------------------------------------------------
ESTIMATES = ("InformationProfileEstimate", "ProfileEstimate", "KLEstimate", "DyadicEstimate", "PathEstimate",
             "PlanComparison", "ScheduleEstimate", "FactorizationEstimate", "DyadicModelEstimate", "OutputLawEstimate")


@pytest.mark.parametrize("name", ESTIMATES)
def test_estimates_share_the_base(name, tmp_path):
    assert issubclass(RECORDS[name], Estimate)
    rec = _builders(tmp_path)[name]()
    v = np.asarray(rec.estimate, dtype=float)
    se = np.asarray(rec.stderr, dtype=float)
    lo, hi = rec.confidence_interval(0.9)
    z = 1.6448536269514722  # Phi^-1(0.95), from the definition of a two-sided 90% interval
    np.testing.assert_allclose(lo, v - z * se, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hi, v + z * se, rtol=1e-12, atol=1e-12)
    lo95, hi95 = rec.confidence_interval()
    np.testing.assert_allclose(np.asarray(hi95) - np.asarray(lo95), 2 * 1.959963984540054 * se, rtol=1e-12, atol=1e-12)


def test_confidence_interval_matches_the_normal_quantile_and_refuses_bad_levels():
    from statistics import NormalDist

    rec = mt.estimate_kl(_chain(), mt.Schedule([2, 2]), n=32, seed=1)
    for level in (0.5, 0.9, 0.99):
        z = NormalDist().inv_cdf((1 + level) / 2)
        lo, hi = rec.confidence_interval(level)
        assert math.isclose(lo, rec.value - z * rec.stderr) and math.isclose(hi, rec.value + z * rec.stderr)
    assert np.allclose(rec.confidence_interval(rec.level), rec.ci)  # the interval estimate_kl stored
    for bad in (0, 1, 1.5, -0.1, True, "0.9", float("nan")):
        with pytest.raises(ValueError, match="^confidence:"):
            rec.confidence_interval(bad)


def test_one_profile_estimate_for_design_and_bridge():
    from mdmtheory import bridge, design, information
    from mdmtheory.laws import TableLaw

    assert design.ProfileEstimate is bridge.ProfileEstimate is information.ProfileEstimate
    x = _samples()
    oracle = design.estimate_cross_entropy_profile(TableLaw(_chain()), x, n_per_level=8)
    torch_model = design.estimate_cross_entropy_profile(bridge.MaskedModel(_exact_model(), mask_id=2), x, n_per_level=8)
    for est in (oracle, torch_model):
        assert isinstance(est, design.ProfileEstimate)
        assert est.quantity == "cross_entropy" and est.d == 4
        assert np.array_equal(est.counts, np.full(4, 8)) and np.array_equal(est.n, est.counts)
        assert np.array_equal(est.profile.values, est.values)


def test_every_record_with_one_best_plan_has_plan():
    """Design, RandomizedOptimum, Certificate, BlockCertificate (and the bridge's
    ScheduleEstimate): ``.plan`` is the plan field, and the exact engine runs it."""
    from mdmtheory import design, optimal

    p = mt.families.markov_chain([[0.9, 0.1], [0.2, 0.8]], 4)
    x = mt.laws.as_oracle(p).sample(300, np.random.default_rng(0))
    recs = [(design.design(x, steps=2), "schedule"),
            (optimal.optimal_random_schedule(p, steps=2), "schedule"),
            (design.certify(p, 200, 0.5, seed=0), "grid"),
            (design.certify_blocks(x, 0.5, p=p, edges=[0.25, 0.5, 0.75]), "grid")]
    try:
        from mdmtheory import bridge

        est = bridge.estimate_profile(bridge.ExactModel(p), x, n_per_level=50, seed=0)
        recs.append((bridge.optimal_schedule_estimate(est, 2, n_resamples=20), "schedule"))
    except ImportError:  # no torch: the bridge's record is checked where torch is
        pass
    for rec, field in recs:
        assert rec.plan is getattr(rec, field), type(rec).__name__
        q = mt.sampler_law(p, rec.plan)
        assert abs(q.table.sum() + q.lost - 1) < 1e-12
