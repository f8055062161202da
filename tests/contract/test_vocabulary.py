"""One name per concept (docs/design.md, "Vocabulary"): old keywords work for one release.

``_moved.renamed_keywords`` maps an old keyword to its new name with a DeprecationWarning;
each renamed keyword of the public API gives the same result as the new one.
"""

from __future__ import annotations

import inspect
import warnings

import pytest

from mdmtheory import _moved


def _f(p, steps=1, *, max_iter=10):
    return (p, steps, max_iter)


def _renamed():
    return _moved.renamed_keywords(law="p", maxiter="max_iter")(_f)


def test_new_keywords_and_positional_calls_do_not_warn():
    f = _renamed()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(1, 2, max_iter=3) == (1, 2, 3)
        assert f(p=1) == (1, 1, 10)


def test_old_keyword_gives_the_same_call_and_warns():
    f = _renamed()
    with pytest.warns(DeprecationWarning, match=r"_f\(law=\.\.\.\) is now _f\(p=\.\.\.\); the old keyword "
                                                r"works for one release"):
        assert f(law=1, steps=2) == (1, 2, 10)
    with pytest.warns(DeprecationWarning, match=r"maxiter=.*max_iter="):
        assert f(1, maxiter=7) == (1, 1, 7)


def test_old_and_new_keyword_together_is_a_type_error_naming_both():
    f = _renamed()
    with pytest.raises(TypeError, match=r"'law'.*'p'"):
        f(law=1, p=2)


def test_signature_and_name_are_the_new_ones():
    f = _renamed()
    assert f.__name__ == "_f"
    assert list(inspect.signature(f).parameters) == ["p", "steps", "max_iter"]
    assert f.__renamed_keywords__ == {"law": "p", "maxiter": "max_iter"}


def test_a_rename_to_a_missing_parameter_or_from_a_live_one_is_refused():
    with pytest.raises(ValueError, match="no parameter 'q'"):
        _moved.renamed_keywords(law="q")(_f)
    with pytest.raises(ValueError, match="old parameter 'steps'"):
        _moved.renamed_keywords(steps="p")(_f)
    with pytest.raises(ValueError, match="different parameter"):
        _moved.renamed_keywords(p="p")


def test_the_pytest_filter_turns_a_stray_old_keyword_into_an_error():
    """pyproject's filterwarnings matches the message, so the package and tests use new names."""
    f = _renamed()
    with pytest.raises(DeprecationWarning, match="the old keyword works for one release"):
        f(law=1)


# -- every renamed keyword of the public API: the old keyword, same result, one warning ----------
def _law():
    from mdmtheory.laws import MarkovChainLaw

    return MarkovChainLaw([[0.8, 0.2], [0.3, 0.7]], d=4)


def _joint():
    import mdmtheory as mt

    return mt.families.markov_chain([[0.8, 0.2], [0.3, 0.7]], d=4)


def _same(x, y):
    """Equal results: arrays, records (their fields) and tuples, recursively, exactly."""
    import dataclasses

    import numpy as np

    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        assert type(x) is type(y)
        for f in dataclasses.fields(x):
            _same(getattr(x, f.name), getattr(y, f.name))
    elif isinstance(x, tuple) and hasattr(x, "_fields"):
        assert type(x) is type(y)
        for a, b in zip(x, y):
            _same(a, b)
    elif isinstance(x, (tuple, list)):
        assert len(x) == len(y)
        for a, b in zip(x, y):
            _same(a, b)
    elif isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        np.testing.assert_array_equal(x, y)
    else:
        assert x == y or (x != x and y != y), (x, y)


def _cases():
    """(label, call, new keywords, old keywords): the renames of docs/design.md, "Vocabulary"."""
    import numpy as np

    import mdmtheory as mt
    from mdmtheory.bounds import w26
    from mdmtheory.design.certificate_blocks import candidate_grid
    from mdmtheory.information import dyadic, ugc
    from mdmtheory.laws import oracles
    from mdmtheory.optimal import grid

    from fractions import Fraction as R

    from mdmtheory import symbolic

    from mdmtheory import exports
    from mdmtheory.exports import dllm, llada, mdlm, sglang, vllm

    law, p = _law(), _joint()
    sched = mt.Schedule((1, 3, 2, 2))
    prof = mt.information_profile(p)
    sym = symbolic.noisy_repeated_bit(R(1, 10), 3)
    xs = np.array([[0, 1, 1, 0], [1, 1, 0, 0]])
    rv = np.array([[True, False, True, False], [False, False, False, True]])
    U = np.array([[0.1, 0.5, 0.9, 0.3], [0.7, 0.2, 0.4, 0.6]])
    v = dyadic.dyadic_grid(0.2, 0.8)
    gen = lambda: np.random.default_rng(5)  # noqa: E731 - a fresh Generator per call
    return [
        ("as_oracle", lambda **k: oracles.as_oracle(**k).conditionals(xs, rv), {"p": p}, {"law": p}),
        ("loo_conditionals", lambda **k: oracles.loo_conditionals(x=xs, revealed=rv, **k), {"p": law}, {"law": law}),
        ("estimate_information_profile", lambda **k: oracles.estimate_information_profile(n=20, seed=3, **k),
         {"p": law}, {"law": law}),
        ("dyadic_terms", lambda **k: dyadic.dyadic_terms(xs=xs, U=U, grid=v, **k), {"p": law}, {"law": law}),
        ("oracle_samples", lambda **k: dyadic.oracle_samples(samples=None, n=6, rng=gen(), **k),
         {"p": law}, {"law": law}),
        ("dyadic_grid", dyadic.dyadic_grid, {"start": 0.2, "stop": 0.8}, {"a": 0.2, "b": 0.8}),
        ("w26_lemma1", lambda **k: dyadic.w26_lemma1(p, **k), {"start": 0.2, "stop": 0.8}, {"a": 0.2, "b": 0.8}),
        ("expected_dyadic_estimate", lambda **k: dyadic.expected_dyadic_estimate(p, **k),
         {"start": 0.2, "stop": 0.8}, {"a": 0.2, "b": 0.8}),
        ("dyadic_estimate (table)", lambda **k: dyadic.dyadic_estimate(p, n=30, seed=2, **k),
         {"start": 0.2, "stop": 0.8}, {"a": 0.2, "b": 0.8}),
        ("dyadic_estimate (oracle)", lambda **k: dyadic.dyadic_estimate(law, n=30, seed=2, form="entropy", **k),
         {"start": 0.2, "stop": 0.8}, {"b": 0.8, "a": 0.2}),
        ("ugc", lambda **k: ugc.ugc(prof, **k), {"start": 0.1, "stop": 0.7}, {"a": 0.1, "b": 0.7}),
        ("gamma_umask", lambda **k: ugc.gamma_umask(prof, **k), {"start": 0.1, "stop": 0.7}, {"a": 0.1, "b": 0.7}),
        ("w26_lemma4", lambda **k: w26.w26_lemma4(prof, **k), {"start": 0.1, "stop": 0.7}, {"a": 0.1, "b": 0.7}),
        ("candidate_grid", lambda **k: candidate_grid(resolution=2, **k), {"start": 0.2, "stop": 0.8},
         {"t0": 0.2, "T": 0.8}),
        ("optimal_grid", lambda **k: grid.optimal_grid(prof, 3, **k), {"max_iter": 40}, {"maxiter": 40}),
        ("feng25_rates", lambda **k: mt.bounds.feng25_rates(p, 2, **k), {"planner": "grid"}, {"sampler": "grid"}),
        ("fewest_steps", lambda **k: mt.bounds.fewest_steps(p, ter_target=0.1, ser_target=0.1, **k),
         {"planner": "grid"}, {"sampler": "grid"}),
        ("feng25_scaling", lambda **k: mt.bounds.feng25_scaling(lambda d: p, [p.d], ter_target=0.1, ser_target=0.1, **k),
         {"planner": "grid"}, {"sampler": "grid"}),
        ("revise_run", lambda **k: mt.samplers.revise_run(p, **k), {"planner": mt.samplers.RemaskingSampler.uniform(2)},
         {"sampler": mt.samplers.RemaskingSampler.uniform(2)}),
        ("speculative_run", lambda **k: mt.samplers.speculative_run(p, **k),
         {"planner": mt.samplers.SpeculativeSampler()}, {"sampler": mt.samplers.SpeculativeSampler()}),
        ("infogain_run", lambda **k: mt.samplers.infogain_run(p, **k),
         {"planner": mt.samplers.InfoGainSampler(candidates=2)}, {"sampler": mt.samplers.InfoGainSampler(candidates=2)}),
        ("remdm_run", lambda **k: mt.samplers.remdm_run(p, **k),
         {"planner": mt.samplers.ReMDMSampler(p.d, "cap")}, {"sampler": mt.samplers.ReMDMSampler(p.d, "cap")}),
        ("serving_run", lambda **k: mt.samplers.serving_run(p, **k),
         {"planner": mt.samplers.EntropyThresholdPlanner()}, {"rule": mt.samplers.EntropyThresholdPlanner()}),
        ("corruption_run", lambda **k: mt.samplers.corruption_run(p, 2, mix=0.5, **k), {"noise": "cosine"},
         {"schedule": "cosine"}),
        ("corruption_law", lambda **k: mt.samplers.corruption_law(p, 2, **k), {"noise": "cosine"},
         {"schedule": "cosine"}),
        ("corruption_alphas", lambda **k: mt.samplers.corruption_alphas(3, **k), {"noise": "cosine"},
         {"schedule": "cosine"}),
        ("RemaskingSampler.simulate", lambda **k: mt.samplers.RemaskingSampler.uniform(3, 0.5).simulate(n=8, seed=1, **k),
         {"p": law}, {"law": law}),
        ("CorrectorSampler.simulate",
         lambda **k: mt.samplers.CorrectorSampler(mt.Schedule((2, 1, 1)), k=1).simulate(n=8, seed=1, **k),
         {"p": law}, {"law": law}),
        ("symbolic.ugc", lambda **k: symbolic.ugc(sym, **k), {"start": R(1, 5), "stop": R(4, 5)},
         {"a": R(1, 5), "b": R(4, 5)}),
        ("symbolic.gamma_umask", lambda **k: symbolic.gamma_umask(sym, **k), {"start": R(1, 5), "stop": R(4, 5)},
         {"a": R(1, 5), "b": R(4, 5)}),
        ("EditingSampler.simulate",
         lambda **k: mt.samplers.EditingSampler(mt.Schedule((2, 2))).simulate(n=8, seed=1, **k), {"p": law},
         {"law": law}),
        # the exporters take the plan as `plan` (was `schedule`) ...
        *[(f"exports.{fn.__name__}", fn, {"plan": sched}, {"schedule": sched}) for fn in (
            exports.to_llada, exports.to_dream, exports.to_mdlm, exports.to_dllm, exports.to_json, exports.export)],
        ("exports.to_llada (blocks)", lambda **k: exports.to_llada(block_length=4, **k), {"plan": sched},
         {"schedule": sched}),
        ("exports.export (fmt)", lambda **k: exports.export(fmt="dream", **k), {"plan": sched}, {"schedule": sched}),
        ("sglang.to_sglang", lambda **k: sglang.to_sglang(**k), {"plan": [1, 1, 1, 1]}, {"schedule": [1, 1, 1, 1]}),
        ("vllm.to_vllm", lambda **k: vllm.to_vllm(budget_only=True, **k), {"plan": sched}, {"schedule": sched}),
        # ... and the adapters take the dict an exporter returned as `exported` (was `plan`)
        ("mdlm.plan_steps", mdlm.plan_steps, {"exported": exports.to_mdlm(sched)},
         {"plan": exports.to_mdlm(sched)}),
        ("dllm.PlanAlphaScheduler.from_plan", lambda **k: repr(dllm.PlanAlphaScheduler.from_plan(**k)),
         {"exported": exports.to_dllm(sched)}, {"plan": exports.to_dllm(sched)}),
        ("llada.PlanCounts", lambda **k: llada.PlanCounts(**k).rows, {"exported": exports.to_llada(sched)},
         {"plan": exports.to_llada(sched)}),
    ]


CASES = _cases()


@pytest.mark.parametrize("label, call, new, old", CASES, ids=[c[0] for c in CASES])
def test_old_keyword_same_result_with_a_warning(label, call, new, old):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new names: no warning at all
        want = call(**new)
    with pytest.warns(DeprecationWarning, match="the old keyword works for one release") as record:
        got = call(**old)
    assert len(record) == len(old)  # one warning per old keyword
    _same(got, want)
    with pytest.raises(TypeError, match="got both"):
        call(**old, **new)


def test_bridge_old_keywords_same_result_with_a_warning():
    pytest.importorskip("torch")
    import numpy as np

    from mdmtheory import bridge
    from mdmtheory.bridge import attention

    p = _joint()
    xs = np.asarray(_law().sample(40, np.random.default_rng(0)))
    model = bridge.ExactModel(p)
    est = bridge.estimate_profile(model, xs, n_per_level=5, seed=0)
    x, rv = np.array([0, 1, 1, 0]), np.array([True, False, True, False])
    cases = [
        (lambda **k: bridge.ExactModel(**k).law.conditionals(xs[:2], rv[None].repeat(2, 0)), {"p": p}, {"law": p}),
        (lambda **k: bridge.estimate_learning_error(model, n_per_level=3, seed=1, **k), {"p": p}, {"law": p}),
        (lambda **k: bridge.estimate_dyadic(model, xs, n=6, seed=1, **k), {"start": 0.2, "stop": 0.8},
         {"a": 0.2, "b": 0.8}),
        (est.ci, {"confidence": 0.9}, {"level": 0.9}),
        (lambda **k: bridge.optimal_schedule_estimate(est, 2, n_resamples=5, seed=1, **k), {"confidence": 0.9},
         {"level": 0.9}),
        (lambda **k: attention.revealed_information(x=x, revealed=rv, **k), {"p": p}, {"law": p}),
        (lambda **k: attention.conditional_mutual_information(i=0, j=2, given=[1], **k), {"p": p}, {"joint": p}),
    ]
    for call, new, old in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            want = call(**new)
        with pytest.warns(DeprecationWarning, match="the old keyword works for one release"):
            got = call(**old)
        _same(got, want)
    # the record keeps its field name: ScheduleEstimate.level is the confidence asked for
    assert bridge.optimal_schedule_estimate(est, 2, n_resamples=5, seed=1, confidence=0.9).level == 0.9


# -- renamed functions: the old name is the same object, with one warning ---------------------------
#: (module, old name) -> (module, new name): the renames of docs/design.md, "Vocabulary" (_moved.NAMES).
RENAMED_NAMES = {
    ("mdmtheory.design", "block_design"): ("mdmtheory.design", "design_blocks_from_data"),
    ("mdmtheory.design.from_data", "block_design"): ("mdmtheory.design.from_data", "design_blocks_from_data"),
    ("mdmtheory.design", "estimate_block_design"): ("mdmtheory.design", "estimate_design_blocks"),
    ("mdmtheory.design.blocks", "estimate_block_design"): ("mdmtheory.design.blocks", "estimate_design_blocks"),
    ("mdmtheory.design", "estimate_profile"): ("mdmtheory.design", "estimate_cross_entropy_profile"),
    ("mdmtheory.design.profile", "estimate_profile"): ("mdmtheory.design.profile", "estimate_cross_entropy_profile"),
}


@pytest.mark.parametrize("old, new", sorted(RENAMED_NAMES.items()), ids=[".".join(k) for k in sorted(RENAMED_NAMES)])
def test_old_function_name_is_the_new_function_with_a_warning(old, new):
    import importlib

    assert _moved.NAMES[old][1] == new[1]  # the one compat table holds it
    new_fn = getattr(importlib.import_module(new[0]), new[1])
    with pytest.warns(DeprecationWarning, match=rf"{old[1]} moved to .*\.{new[1]}; the old path works for one release"):
        assert getattr(importlib.import_module(old[0]), old[1]) is new_fn
    assert old[1] not in getattr(importlib.import_module(old[0]), "__all__", ())


def test_old_function_name_gives_the_same_design():
    import numpy as np

    from mdmtheory import design
    from mdmtheory.laws import as_oracle

    p = _joint()
    x = np.asarray(_law().sample(60, np.random.default_rng(0)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = design.estimate_design_blocks(as_oracle(p), x, forwards=2, n_per_level=20, seed=1)
        want_prof = design.estimate_cross_entropy_profile(as_oracle(p), x, n_per_level=20, seed=1)
    with pytest.warns(DeprecationWarning, match="the old path works for one release"):
        got = design.estimate_block_design(as_oracle(p), x, forwards=2, n_per_level=20, seed=1)
    with pytest.warns(DeprecationWarning, match="the old path works for one release"):
        got_prof = design.estimate_profile(as_oracle(p), x, n_per_level=20, seed=1)
    _same(got, want)
    _same(got_prof, want_prof)


# -- the retired names stay retired ------------------------------------------------------------
#: Parameter names the table retires (docs/design.md, "Vocabulary") -> the one name now.
RETIRED = {"law": "p", "joint": "p", "maxiter": "max_iter", "t0": "start", "level": "confidence"}
#: Public callables that still take a retired name, and why (remove an entry when it is renamed).
STILL = {
    ("mdmtheory.samplers.diagnostics", "ComparisonTable.value", "law"): "a row's name (a string), not a law",
    ("mdmtheory.schedules.plans", "RandomSchedule", "law"): "the law of the step sizes, not the data law",
    ("mdmtheory.samplers.kernel", "bernoulli_start", "t0"): "one time t_0 of the JAX kernel, not an interval",
}


def _public_parameters():
    """(module, qualified name, parameter) of every public function, method and constructor:
    the ``__all__`` of the top level, of each wing and of each wing's modules."""
    import dataclasses
    import importlib
    import importlib.util

    wings = ["", ".laws", ".schedules", ".information", ".exports", ".data", ".samplers", ".bounds", ".optimal",
             ".bridge", ".design", ".report"]
    if importlib.util.find_spec("torch") is None:
        wings.remove(".bridge")
    import pkgutil

    import mdmtheory

    modules = ["mdmtheory" + w for w in wings] + [
        m.name for m in pkgutil.walk_packages(mdmtheory.__path__, "mdmtheory.")
        if m.name.split(".")[1] in {w.strip(".") for w in wings} and "._" not in m.name]
    seen, out = set(), set()
    for modname in modules:
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if not callable(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            owner = getattr(obj, "__module__", "") or ""
            record = inspect.isclass(obj) and (dataclasses.is_dataclass(obj) or hasattr(obj, "_fields"))
            # a record's constructor takes its fields, and record fields keep their names
            targets = [] if record else [(getattr(obj, "__qualname__", name), obj)]
            if inspect.isclass(obj):
                targets += [(f"{obj.__qualname__}.{a}", getattr(obj, a)) for a, v in vars(obj).items()
                            if not a.startswith("_") and callable(getattr(obj, a, None))
                            and isinstance(v, (classmethod, staticmethod, type(_f)))]
            for qual, fn in targets:
                try:
                    params = inspect.signature(fn).parameters
                except (TypeError, ValueError):
                    continue
                out |= {(owner, qual, q) for q in params}
    return out


def test_no_public_callable_takes_a_retired_name():
    found = {key for key in _public_parameters() if key[2] in RETIRED}
    unexpected = sorted(found - set(STILL))
    assert not unexpected, [f"{m}.{q}({n}=...): the name is {RETIRED[n]}" for m, q, n in unexpected]
    stale = sorted(set(STILL) - found)
    assert not stale, f"renamed since: drop these entries of STILL: {stale}"
