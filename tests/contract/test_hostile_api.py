"""The public API walked by itself, every argument fed hostile values from one table (issue 30).

Each round of hostile-input fixes hardened the modules that existed; new modules arrived
unhardened. This test finds the public callables by itself — every callable named in the
``__all__`` of ``mdmtheory``, of each wing and of the wing modules in :data:`EXTRA_MODULES`;
for a class its constructor and the public methods of a valid instance — reads each
signature, and calls it once per (argument, hostile value): that argument takes a value
from :data:`HOSTILE` while every other argument takes a valid value (:data:`VALID` by
parameter name, :data:`OVERRIDES` per callable). The contract (:func:`fuzz_harness.guarded`):

* the only exception is a ``ValueError`` whose message starts with an argument's name
  (``"name: ..."``);
* each call answers within :data:`CALL_SECONDS` (a SIGALRM timer stops a hang);
* a refused call leaves no file behind (the calls run in an empty temporary folder);
* a number argument (its valid value is an int or a float) refuses what is not a number:
  text, None (unless None is its default), bools, containers and objects.

A public callable with no valid-argument recipe fails :func:`test_every_callable_has_a_recipe`
unless :data:`NO_RECIPE` names it with the reason, so a new function is walked, or flagged,
without touching this file (:func:`test_a_new_unchecked_function_is_flagged` plants one).
Callables of the wings another branch hardens are strict xfails (:data:`PENDING_OTHER_WING`).

The default run feeds the ``core`` values of :data:`HOSTILE`; the ``slow`` variant feeds
every value and, for each callable, every pair of arguments hostile at once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import decimal
import fractions
import importlib
import inspect
import math
import os
import re
import time
import zlib

import numpy as np
import pytest

import mdmtheory as mt
from fuzz_harness import alarm, _ARG_NAME, Hang, _deep

#: Longest time one walked call may take.
CALL_SECONDS = 20.0

WINGS = ("laws", "schedules", "information", "exports", "data", "samplers", "bounds", "optimal", "bridge",
         "design", "report", "symbolic", "testing")
#: Wing modules whose own ``__all__`` is public API reached by module path (``mt.families``,
#: the framework integrations of ``exports``).
EXTRA_MODULES = ("laws.families", "information.ugc", "exports.diffusers", "exports.dllm", "exports.dream",
                 "exports.llada", "exports.mdlm", "exports.sglang", "exports.vllm", "samplers.ties",
                 "bounds.tightness", "bridge.tiny", "bridge.train")
#: modules under mdmtheory/ with an ``__all__`` that are not walked, with the reason (issue 38:
#: test_every_module_is_walked_or_skipped fails on a new module in neither place)
SKIPPED_MODULES = {
    "mdmtheory._estimate": "private: the records' base classes, walked through every record (test_records.py)",
    "mdmtheory._jax": "private: the JAX backend switches (jit, x64)",
    "mdmtheory._validate": "private: the argument checks themselves (test_validation.py); every walked callable runs them",
    "mdmtheory.bridge._dist": "private: the torch.distributed helpers that bridge.distributed re-exports",
    "mdmtheory.bridge.distributed": "needs a torch.distributed process group (torchrun); tests/bridge/test_distributed*.py",
    "mdmtheory.bridge.attention": "its callables take the attention tensors of a model's forward (trace_forward on a "
                                  "TinyMDM); tests/bridge/test_attention*.py; walked by benchmarks/bench_hostile.py --fuzz",
    "mdmtheory.report.plots": "matplotlib figures of a Report's sections (records the report builds), walked through "
                              "report.render_html / write_html (slow run)",
    "mdmtheory.samplers.kernel": "unvalidated by design: the exact engine's jax-traceable kernels on the arrays the "
                                 "engine builds, walked through exact_run / sampler_law",
    "mdmtheory.cli": "the CLI: tests/contract/test_hostile_cli.py, test_fuzz_cli.py and benchmarks/bench_hostile.py --fuzz",
}
#: CLI modules (``mdmtheory.cli.*``): all skipped for the reason of ``mdmtheory.cli``
SKIPPED_PACKAGES = ("mdmtheory.cli.",)


# == the one table of hostile values ==========================================================
class _Opaque:
    def __repr__(self):
        return "<object>"


#: id -> (value factory, core). ``core`` values run in ``make test``; the slow run feeds all.
HOSTILE = {
    "True": (lambda: True, True),
    "np.bool_": (lambda: np.bool_(False), False),
    "None": (lambda: None, True),
    "nan": (lambda: math.nan, True),
    "inf": (lambda: math.inf, False),
    "-inf": (lambda: -math.inf, True),
    "1e400": (lambda: decimal.Decimal("1e400"), False),
    "-1e400": (lambda: decimal.Decimal("-1e400"), False),
    "10**12": (lambda: 10**12, True),
    "10**400": (lambda: 10**400, True),
    "-10**400": (lambda: -(10**400), False),
    "fraction": (lambda: fractions.Fraction(10**400, 3), False),
    "-1": (lambda: -1, True),
    "0": (lambda: 0, False),
    "0.5": (lambda: 0.5, False),
    "1+1j": (lambda: 1 + 1j, False),
    "str": (lambda: "x", True),
    "numeric str": (lambda: "3", False),
    "bytes": (lambda: b"1", False),
    "[]": (lambda: [], True),
    "empty array": (lambda: np.zeros((0, 0)), False),
    "ragged": (lambda: [[0, 1], [1]], True),
    "deep list": (lambda: _deep(40), False),
    "mismatched": (lambda: np.zeros((2, 7), dtype=np.int64), True),
    "float matrix": (lambda: np.full((3, 3), 0.25), False),
    "dict": (lambda: {"a": 1}, True),
    "object": (lambda: _Opaque(), False),
}
CORE = [k for k, (_, core) in HOSTILE.items() if core]


# == semantic hostile values (issue 38): right type, wrong meaning ==============================
def _sub_normalised(valid):
    return mt.Joint(valid.table * 0.8, lost=0.2)


def _planner_class(valid):
    return type(mt.samplers.as_sampler(valid)) if not isinstance(valid, type) else valid


def _other_planner(valid):
    """A planner lacking what the valid one has: own step sizes for a Schedule planner, else one
    that needs a Schedule (a capability the function may need and this one lacks)."""
    cap = mt.samplers.as_sampler(valid).capabilities
    return mt.samplers.EntropyThresholdPlanner() if "Schedule" in cap.plans else mt.samplers.ConfidencePlanner()


def _nan_entry(valid):
    out = np.array(valid, dtype=np.float64, copy=True)
    out.flat[0] = np.nan
    return out


def _duplicated(valid):
    v = list(valid)
    return tuple([v[0], v[0]] + v[2:])


def _is_float_array(v):
    return isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.size > 0


def _is_positions(v):
    return isinstance(v, (tuple, list)) and len(v) >= 1 and all(
        isinstance(j, (int, np.integer)) and not isinstance(j, bool) for j in v)


#: id -> (applies(parameter name, valid value), make(valid value), must_refuse). A semantic value
#: goes to every argument it applies to in the default run; ``must_refuse``: accepting it fails
#: the walk (unless SEMANTIC_OK names the argument with its reason); every value must not crash,
#: hang or return a NaN the valid call does not.
SEMANTIC = {
    "sub-normalised law": (lambda n, v: isinstance(v, mt.Joint) and v.lost == 0, _sub_normalised, True),
    "impossible entropies": (lambda n, v: isinstance(v, mt.Joint), lambda v: np.array([0.0, 0.5, 0.5, 0.2]), True),
    "unnormalised table": (lambda n, v: n == "table" and _is_float_array(v) and abs(float(v.sum()) - 1) < 1e-9,
                           lambda v: np.asarray(v) * 1.5, True),
    "NaN entry": (lambda n, v: _is_float_array(v), _nan_entry, True),
    "duplicate positions": (lambda n, v: n in POSITION_ARGS and _is_positions(v), _duplicated, True),
    "planner class": (lambda n, v: n == "planner" and v is not None, _planner_class, True),
    "planner lacking a capability": (lambda n, v: n == "planner" and v is not None, _other_planner, False),
    "impossible profile": (lambda n, v: n in PROFILE_ARGS and isinstance(v, mt.information.Profile),
                           lambda v: mt.information.Profile(np.linspace(0.1, 0.9, v.d)), False),
}
#: arguments that are positions (each at most once)
POSITION_ARGS = {"positions", "given", "block", "revealed", "blk"}
#: arguments that are profiles
PROFILE_ARGS = {"profile", "prof", "phi"}
#: values every number argument gets in the default run too (issue 38: ±inf everywhere)
NUMBER_EXTRA = ("inf", "-inf")
#: (callable, argument, semantic id) where accepting the value is right, with the reason
SEMANTIC_OK: dict[tuple[str, str, str], str] = {
    **{(q, "q", "sub-normalised law"): "q is a sampler's output law, documented to carry lost mass"
       for q in ("information.kl", "information.tv", "information.off_support_mass", "bounds.token_error_rate",
                 "bounds.sequence_error_rate", "samplers.transition_rate")},
    ("bridge.OutputLawEstimate.zscores", "exact", "sub-normalised law"):
        "exact is the sampler's exact output law, documented to carry lost mass (lost samples are counted)",
}
#: the default run feeds every argument these core values and ROTATE of the others (chosen by
#: the argument's name, so that every core value reaches every wing); the slow run feeds all
ALWAYS = ("None", "str", "10**400", "nan")
ROTATE = 2


def default_values(qual: str, param: str) -> list[str]:
    rest = [k for k in CORE if k not in ALWAYS]
    i = zlib.crc32(f"{qual}.{param}".encode()) % len(rest)
    return list(ALWAYS) + [rest[(i + j) % len(rest)] for j in range(ROTATE)]
#: values a number argument must refuse (not numbers, nor arrays a vectorized function may take)
NOT_NUMBERS = {"True", "np.bool_", "str", "numeric str", "bytes", "dict", "object", "1+1j"}


# == valid values ==============================================================================
def _chain():
    return mt.laws.families.markov_chain([[0.8, 0.2], [0.3, 0.7]], 4)


P = _chain()
PLAN = mt.Schedule((2, 2))
TRANSITION = [[0.8, 0.2], [0.3, 0.7]]
SAMPLES = mt.laws.TableLaw(P).sample(64, np.random.default_rng(0))


def _profile():
    return mt.information_profile(P)


#: valid value factories by parameter name (the default when no override names the parameter)
VALID = {
    "p": lambda: P, "q": lambda: P, "law": lambda: P, "joint": lambda: P,
    "table": lambda: P.table, "plan": lambda: PLAN, "schedule": lambda: PLAN, "planner": lambda: "random",
    "grid": lambda: mt.Grid.uniform(2), "profile": lambda: _profile(), "prof": lambda: _profile(),
    "d": lambda: 4, "K": lambda: 2, "steps": lambda: 2, "max_steps": lambda: 2, "n": lambda: 8,
    "seed": lambda: 0, "rng": lambda: np.random.default_rng(0), "sizes": lambda: (2, 2),
    "times": lambda: (0.0, 0.5, 1.0), "start": lambda: 0.25, "stop": lambda: 0.75, "eps": lambda: 0.5,
    "transition": lambda: TRANSITION, "samples": lambda: SAMPLES.copy(), "xs": lambda: SAMPLES[:4].copy(),
    "x": lambda: SAMPLES[:4].copy(), "revealed": lambda: np.tile([True, False, True, False], (4, 1)),
    "confidence": lambda: 0.9, "edges": lambda: [0.25, 0.5, 0.75], "a": lambda: 0, "b": lambda: 2,
    "t": lambda: 0.5, "s": lambda: 0.5, "lam": lambda: 0.0, "interval": lambda: (0.25, 0.75),
    "block_length": lambda: 2, "steps_per_block": lambda: 1, "max_size": lambda: 2, "blocks": lambda: 2,
    "resolution": lambda: 32, "penalty": lambda: 0.1, "positions": lambda: (0, 1), "j": lambda: 0,
    "given": lambda: (1,), "values": lambda: (0, 1), "counts": lambda: (2, 4), "tau": lambda: 0.5,
    "gamma": lambda: 0.5, "size": lambda: 2, "mask": lambda: 3, "text": lambda: PLAN.to_json(),
    "e": lambda: mt.information.entropy_coefficients(P), "threshold": lambda: 0.5, "temperature": lambda: 1.0,
    "probs": lambda: np.array([[0.9, 0.1], [0.4, 0.6]]), "free": lambda: np.array([True, True]),
    "k": lambda: 1, "scores": lambda: np.array([0.9, 0.6]), "rs": lambda: mt.RandomSchedule.deterministic(PLAN),
    "transition_rates": lambda: None, "matrix": lambda: np.full((2, 2), 0.5), "eta": lambda: 0.0,
    "length": lambda: 4, "base": lambda: 2, "background": lambda: (0.5, 0.5), "alpha": lambda: 1.0,
    "confidences": lambda: (0.9, 0.8, 0.7), "f": lambda: 1.0, "left": lambda: 2,
}

#: the folder each walked call runs in (set by the fixture); recipes that read files put them here
ROOT: list = []


def _exact_model():
    from mdmtheory import bridge

    return bridge.ExactModel(P)


def _masked():
    from mdmtheory import bridge

    return bridge.MaskedModel(_exact_model(), mask_id=2)


def _oracle():
    return mt.laws.TableLaw(P)


def _sym(name):
    from mdmtheory import symbolic

    return getattr(symbolic, name)


def _saved_scheduler():
    from mdmtheory.exports import diffusers

    return diffusers.save_scheduler([2, 2], os.path.join(ROOT[0], "scheduler"))


def _npy():
    path = os.path.join(ROOT[0], "x.npy")
    np.save(path, SAMPLES)
    return path


def _sequences_file():
    path = os.path.join(ROOT[0], "seq.txt")
    with open(path, "w") as fh:
        fh.write("0 1 1 0\n1 0 1 1\n")
    return path


class _LladaModule:
    """A stand-in for LLaDA's generate module: ``patch`` swaps its global."""

    @staticmethod
    def get_num_transfer_tokens(mask_index, steps):
        return None


def _use_patch(module, plan):
    from mdmtheory.exports import llada

    with llada.patch(module, plan):
        pass


_UNIFORMS = lambda: np.random.default_rng(1).random((8, 4))  # noqa: E731
_SYMBOLIC = {"p": lambda: _sym("from_joint")(mt.laws.families.parity(3)), "plan": lambda: (1, 2),
             "schedule": lambda: (1, 2), "d": lambda: 3, "a": lambda: 0, "b": lambda: 2}

#: per-callable valid arguments (qualified name -> {parameter: factory}); they win over VALID
OVERRIDES: dict[str, dict] = {
    "bounds.cl26_bounds": {"planner": lambda: mt.samplers.EntropyBudgetPlanner(0.5)},
    "bounds.cl26_kl_budget": {"expected_data_steps": lambda: 2.0},
    "bounds.cl26_steps_bound": {"entropy": lambda: 1.0},
    "bounds.conditional_total_correlation": {"block": lambda: (0, 1)},
    "bounds.data_path_steps": {"planner": lambda: mt.samplers.EntropyBudgetPlanner(0.5)},
    "bounds.feng25_scaling": {"family": lambda: mt.bounds.golden_mean_chain, "ds": lambda: [3],
                              "ter_target": lambda: 0.1, "ser_target": lambda: 0.1},
    "bounds.fewest_steps": {"ter_target": lambda: 0.1, "ser_target": lambda: 0.1},
    "bounds.golden_mean_chain": {"stay": lambda: 0.5},
    "bounds.markov_rates_mc": {"n": lambda: 8},
    "bounds.ngram_chain": {"conditional": lambda: [[[0.9, 0.1], [0.8, 0.2]], [[0.2, 0.8], [0.1, 0.9]]]},
    "bounds.pb25_partition_lower": {"partition": lambda: ((0, 1), (2, 3))},
    "bridge.MaskedModel": {"model": _exact_model, "mask_id": lambda: 2},
    "bridge.ModelOracle": {"model": _masked},
    "bridge.as_masked_model": {"obj": _exact_model},
    "bridge.compare_plans": {"model": _masked, "plans": lambda: [PLAN, mt.Schedule((1, 3))], "n": lambda: 8},
    "bridge.estimate_dyadic": {"model": _masked, "n": lambda: 8},
    "bridge.estimate_factorization_error": {"model": _masked, "n": lambda: 8},
    "bridge.estimate_learning_error": {"model": _masked, "n_per_level": lambda: 8},
    "bridge.estimate_path_cross_entropy": {"model": _masked, "n": lambda: 8},
    "bridge.estimate_profile": {"model": _masked, "n_per_level": lambda: 8},
    "bridge.model_law": {"model": _masked},
    "bridge.optimal_schedule_estimate": {
        "estimate": lambda: __import__("mdmtheory.bridge", fromlist=["x"]).estimate_profile(
            _masked(), SAMPLES, n_per_level=8), "n_resamples": lambda: 4},
    "bridge.sample": {"model": _masked},
    "bridge.speculative_sample": {"model": _masked, "planner": lambda: mt.samplers.SpeculativeSampler("assd", 2)},
    "bridge.uniforms": {"stream": lambda: 0, "index": lambda: np.arange(3), "width": lambda: 4},
    "data.load_sequences": {"path": _sequences_file},
    "data.read_npy": {"path": _npy},
    "design.certify": {"samples_or_n": lambda: 64, "options": lambda: mt.design.CertificateOptions(interval=(0.25, 0.75))},
    "design.certify_blocks": {"p": lambda: P, "edges": lambda: [0.25, 0.5, 0.75]},
    "design.certify_data": {"options": lambda: mt.design.CertificateOptions(interval=(0.25, 0.75))},
    "design.empirical_bernstein_radius": {"values": lambda: [0.1, 0.2, 0.3], "value_range": lambda: 1.0},
    "design.estimate_design_blocks": {"model": _oracle, "forwards": lambda: 2, "n_per_level": lambda: 8},
    "design.estimate_block_profiles": {"model": _oracle, "n_per_level": lambda: 8},
    "design.estimate_cross_entropy_profile": {"model": _oracle, "n_per_level": lambda: 8},
    "design.design": {"steps": lambda: 2},
    "design.design_blocks_from_data": {"forwards": lambda: 2},
    "design.interval_statistics": {"xs": lambda: SAMPLES[:8].copy(), "U": _UNIFORMS, "tau": lambda: (0.25, 0.5, 0.75),
                                   "resolution": lambda: 2},
    "exports.diffusers.load_scheduler": {"path": _saved_scheduler},
    "exports.diffusers.check_scheduler": {"path": _saved_scheduler},
    "exports.diffusers.save_scheduler": {"counts": lambda: [2, 2], "path": lambda: "scheduler"},
    "exports.vllm.to_vllm": {"budget_only": lambda: True},
    "exports.vllm.dllm_plugin_configs": {"plan": lambda: mt.Schedule((16, 16)), "block_length": lambda: 32},
    "exports.sglang.to_sglang": {"plan": lambda: mt.Schedule((1, 1, 1, 1))},
    "exports.sglang.tuned_algorithm_config": {
        "tuning": lambda: mt.optimal.tune("entropy_threshold", P, forwards=5, values=(0.3, 0.6))},
    "exports.diffusers.tuned_threshold_call": {
        "tuning": lambda: mt.optimal.tune("diffusers_threshold", P, forwards=4, values=(0.5, 0.9))},
    "exports.llada.tuned_generate_kwargs": {
        "tuning": lambda: mt.optimal.tune("factor", P, forwards=4, values=(0.5, 1.0))},
    "optimal.tune": {"planner": lambda: "threshold", "forwards": lambda: 4, "values": lambda: (0.9, 1.01)},
    # one grid value: the valid call never meets an interval overlap (a refusal by design, tested in tests/design)
    "design.estimate_tune": {"model": _masked, "planner": lambda: "threshold", "forwards": lambda: 4,
                             "values": lambda: (1.01,), "n": lambda: 8},
    "exports.dllm.PlanAlphaScheduler": {"t": lambda: (1.0, 0.5, 0.0), "alpha_nodes": lambda: (0.0, 0.5, 1.0)},
    "exports.dllm_counts": {"t": lambda: (1.0, 0.5, 0.0), "alpha_nodes": lambda: (0.0, 0.5, 1.0)},
    "exports.llada.patch": {"module": lambda: _LladaModule(), "exported": lambda: mt.exports.to_llada(PLAN)},
    "exports.to_dream": {"eps": lambda: 1e-3},
    "exports.dream_counts": {"times": lambda: [1.0, 0.5, 0.001]},
    "information.dyadic_terms": {"xs": lambda: SAMPLES[:8].copy(), "U": _UNIFORMS},
    "laws.HiddenMarkovLaw": {"initial": lambda: [0.5, 0.5], "emission": lambda: [[0.7, 0.3], [0.1, 0.9]],
                             "d": lambda: 3},
    "laws.MixtureOfProductsLaw": {"weights": lambda: [0.5, 0.5], "probs": lambda: [[[0.9, 0.1]] * 3, [[0.1, 0.9]] * 3]},
    "laws.families.empirical": {"sequences": lambda: SAMPLES.copy()},
    "laws.families.ising_chain": {"d": lambda: 3, "coupling": lambda: 0.5, "field": lambda: 0.1},
    "laws.families.mixture_of_products": {"weights": lambda: [1.0], "marginals": lambda: [[[0.5, 0.5]] * 2]},
    "laws.families.product": {"marginals": lambda: [[0.5, 0.5], [0.3, 0.7]]},
    "laws.families.xorsat": {"A": lambda: [[1, 0], [0, 1], [1, 1]]},
    "report.render_html": {"report": lambda: mt.report.build_report(P, steps=[1, 2], planners=("random",))},
    "report.write_html": {"report": lambda: mt.report.build_report(P, steps=[1, 2], planners=("random",)),
                          "path": lambda: "r.html"},
    "report.build_report": {"steps": lambda: [1, 2], "planners": lambda: ("random",)},
    "report.step_costs": {"sched": lambda: PLAN},
    "samplers.BernoulliPlanner": {"betas": lambda: (0.5, 1.0)},
    "samplers.RemaskingSampler": {"alphas": lambda: (0.0, 0.5, 1.0)},
    "samplers.commit_choices": {"conf": lambda: np.array([0.9, 0.6]), "threshold": lambda: None},
    "samplers.select_commits": {"conf": lambda: np.array([0.9, 0.6]), "threshold": lambda: None},
    "samplers.comparison_table": {"laws": lambda: {"chain": P}, "planners": lambda: ["random"], "steps": lambda: [2]},
    "samplers.confidence_rows": {"P": lambda: np.array([[0.9, 0.1]]), "S": lambda: np.array([[0.8, 0.2]]),
                                 "confidence": lambda: "tempered"},
    "samplers.empirical_reveal_matrix": {"reveal_step": lambda: np.array([[0, 1, 1, 0]] * 3)},
    "samplers.revise_run": {"planner": lambda: mt.samplers.RemaskingSampler.uniform(2)},
    "samplers.serving_run": {"planner": lambda: mt.samplers.EntropyThresholdPlanner()},
    "samplers.HierarchyBlockPlanner": {"sub_block_size": lambda: 2, "block_size": lambda: 2},
    "samplers.FullAttnMultiBlockPlanner": {"block_size": lambda: 2, "block_add_threshold": lambda: 0.1,
                                           "decoded_token_threshold": lambda: 0.95},
    "samplers.JointThresholdSampler": {"edit_threshold": lambda: 0.5, "max_post_edit_steps": lambda: 1},
    "schedules.dilated_plan": {"block": lambda: 2},
    "schedules.round_cumulative": {"targets": lambda: [0.0, 1.5, 4.0]},
    "symbolic.bernstein_sum": {"coefficient": lambda: _sym("sp").Symbol("j") ** 2,
                               "j": lambda: _sym("sp").Symbol("j"), "n": lambda: 3},
    "symbolic.continuum_path_kl": {"k": lambda: 1, "slope": lambda: 1},
    "symbolic.continuum_steps": {"k": lambda: 1},
    "symbolic.to_float": {"expr": lambda: _sym("sp").Rational(1, 3)},
}

_PROBS = lambda: np.full((1, 4, 2), 0.5)  # noqa: E731
_FREE = lambda: np.array([[True, True, False, True]])  # noqa: E731
_CONF = lambda: np.array([[0.9, 0.6, 0.0, 0.3]])  # noqa: E731
OVERRIDES.update({
    "bounds.Bound.holds": {"exact": lambda: 0.1},
    "bounds.Comparison.row": {"name": lambda: mt.compare(P, PLAN).rows[0].name},
    "bounds.w26_corollary1": {"plan": lambda: 3},
    "bounds.w26_proposition1": {"steps": lambda: 16},
    "bounds.zc26_check": {"plan": lambda: mt.RandomSchedule.deterministic(PLAN)},
    "bridge.PlanComparison.zscore": {"a": lambda: 0, "b": lambda: 1},
    "design.interval_statistics": {**OVERRIDES["design.interval_statistics"], "p": _oracle},
    "exports.dllm.PlanAlphaScheduler.from_plan": {"exported": lambda: mt.exports.to_dllm(PLAN)},
    "exports.dllm.PlanAlphaScheduler.reverse_mask_prob": {"s": lambda: 0.25, "t": lambda: 0.5},
    "exports.dream.plan_timesteps": {"exported": lambda: mt.exports.to_dream(PLAN), "steps": lambda: 2},
    "exports.llada.PlanCounts": {"exported": lambda: mt.exports.to_llada(PLAN)},
    "exports.mdlm.plan_steps": {"exported": lambda: mt.exports.to_mdlm(PLAN)},
    "information.as_profile": {"x": _profile},
    "information.dyadic_terms": {**OVERRIDES["information.dyadic_terms"], "p": _oracle, "grid": lambda: np.array([0.25, 0.5, 0.75])},
    "information.dyadic_weights": {"grid": lambda: [0.25, 0.5, 0.75]},
    "laws.loo_conditionals": {"p": _oracle},
    "information.oracle_samples": {"samples": lambda: None},
    "laws.families.blocks": {"*": lambda: (P, P)},
    "optimal.block_grid": {"steps": lambda: 16},
    "optimal.block_path_kl": {"counts": lambda: ((1, 1), (1, 1))},
    "optimal.design_blocks": {"forwards": lambda: 2},
    "optimal.optimal_random_schedule": {"steps": lambda: 2},
    "optimal.adaptive_plan": {"steps": lambda: 2},
    "optimal.AdaptivePlan.prompt_planner": {"values": lambda: ()},
    "samplers.ComparisonTable.value": {"law": lambda: "chain", "T": lambda: 2},
    "samplers.KLEstimate.zscore": {"exact": lambda: 0.1},
    "samplers.RemaskingSampler.rates": {"i": lambda: 0},
    "samplers.ReMDMSampler.rates": {"i": lambda: 0},
    "samplers.remdm_run": {"planner": lambda: mt.samplers.ReMDMSampler(2, "cap")},
    "samplers.nucleus": {"P": lambda: np.array([[0.5, 0.3, 0.2]]), "top_p": lambda: 0.6},
    "samplers.infogain_run": {"planner": lambda: mt.samplers.InfoGainSampler(candidates=2)},
    "samplers.PositionCalibratedPlanner.scores": {"probs": _PROBS},
    "samplers.SampleThenSelectPlanner.draw": {"probs": _PROBS, "free": _FREE},
    "samplers.commit_choices": {"conf": _CONF, "free": _FREE, "threshold": lambda: None},
    "samplers.select_commits": {"conf": _CONF, "free": _FREE, "threshold": lambda: None,
                                "rng": lambda: np.random.default_rng(0)},
    "samplers.ranking": {"scores": _CONF, "free": _FREE},
    "samplers.ranked_choice": {"scores": _CONF, "free": _FREE},
    "samplers.prompted_kl": {"given": lambda: (0,), "plan": lambda: mt.Schedule((1, 2))},
    "samplers.runs_by_ties": {"planner": lambda: "confidence"},
    "samplers.tie_spread": {"planner": lambda: "confidence"},
    "schedules.BlockPlan": {"blocks": lambda: ((0, 1), (2, 3)), "sizes": lambda: ((1, 1), (1, 1))},
    "schedules.BlockPlan.from_json": {"text": lambda: mt.BlockPlan(((0, 1), (2, 3)), ((1, 1), (1, 1))).to_json()},
    "schedules.Grid.from_json": {"text": lambda: mt.Grid.uniform(2).to_json()},
    "schedules.RandomSchedule": {"law": lambda: {(2, 2): 0.5, (1, 3): 0.5}},
    "schedules.Schedule.from_cumulative": {"counts": lambda: (0, 2, 4)},
    "schedules.geometric_grid": {"steps": lambda: 2},
    "schedules.geometric_schedule": {"steps": lambda: 3},
    "schedules.masking_schedule": {"gamma": lambda: (lambda r: 1 - r)},
    "symbolic.SymbolicJoint": {"table": lambda: [[_sym("sp").Rational(1, 4)] * 2] * 2},
    "symbolic.from_table": {"table": lambda: [[_sym("sp").Rational(1, 4)] * 2] * 2},
    "symbolic.two_state_markov_chain": {"a": lambda: _sym("sp").Rational(1, 3), "b": lambda: _sym("sp").Rational(1, 4)},
    "laws.HiddenMarkovLaw": {**OVERRIDES["laws.HiddenMarkovLaw"], "d": lambda: 4},
    "laws.MixtureOfProductsLaw": {"weights": lambda: [0.5, 0.5], "probs": lambda: [[[0.9, 0.1]] * 4, [[0.1, 0.9]] * 4]},
})
for _q in ("bridge.estimate_factorization_error", "bridge.sample", "samplers.estimate_kl", "samplers.exact_run",
           "samplers.reveal_diagnostics", "samplers.sampler_law", "samplers.simulate",
           *(f"samplers.{c}.{m}" for c in ("ConfidencePlanner", "EntropyPlanner", "LeftToRightPlanner", "MarginPlanner",
                                           "RandomPlanner", "SampleThenSelectPlanner") for m in ("exact_run", "simulate"))):
    OVERRIDES.setdefault(_q, {})["plan"] = lambda: PLAN
def _ctx():
    return mt.bounds.compare_context(P, PLAN)


OVERRIDES.update({
    "bounds.CompareContext.exact": {"quantity": lambda: "kl"},
    "bounds.CompareContext.row": {"bound": lambda: mt.bounds.riemann_bound(_profile(), PLAN), "exact": lambda: 0.1},
    "bounds.random_order_grid": {"ctx": _ctx},
    "bounds.random_order_schedule": {"ctx": _ctx},
    "information.profile_increments": {"strict": lambda: False},
    "information.check_interval": {"a": lambda: 0.2, "b": lambda: 0.8},
    "information.check_card_pair": {"a": lambda: 1, "b": lambda: 2, "d": lambda: 3},
    "samplers.Capabilities": {"plans": lambda: ("Schedule",)},
    "samplers.check_plan": {"sampler": lambda: mt.samplers.ConfidencePlanner()},
    "samplers.mixture_run": {"rs": lambda: mt.RandomSchedule.deterministic(PLAN),
                             "run_of": lambda: lambda c: mt.samplers.exact_run(P, c)},
})

def _block_design():
    return mt.design.estimate_design_blocks(_oracle(), SAMPLES, forwards=2, n_per_level=8)


_SORTED_CONF = lambda: np.array([[0.9, 0.6, 0.3, 0.0], [0.8, 0.8, 0.0, 0.0]])  # noqa: E731
OVERRIDES.update({
    "bridge.position_limit": {"config": lambda: {"max_position_embeddings": 64}},
    "design.separation": {"candidates": lambda: _block_design().candidates, "best": lambda: _block_design().best},
    "samplers.FactorPlanner.count": {"sorted_conf": _SORTED_CONF, "n_free": lambda: np.array([3, 2])},
    "samplers.FrechetPlanner.count": {"sorted_conf": _SORTED_CONF, "n_free": lambda: np.array([[3], [2]])},
    "bounds.partition_map": {"u": lambda: np.random.default_rng(0).random((4, 2))},
    "bounds.dependency_matrix": {"revealed": lambda: (0,), "values": lambda: (0,)},
    "bounds.demask_checks": {"planner": lambda: mt.samplers.DemaskPlanner(0.1)},
})

_L2R = lambda: mt.samplers.LeftToRightPlanner()  # noqa: E731
OVERRIDES.update({  # issue 28 items 6-7: Jump Your Steps, DUEL
    "bounds.jys_gain": {"t1": lambda: 0.9, "t2": lambda: 0.5, "t3": lambda: 0.1},
    "bounds.jys_schedule": {"steps": lambda: 2, "src_steps": lambda: 64},
    "samplers.duel_log_likelihood": {"x": lambda: (0, 1, 0, 1), "planner": _L2R, "plan": lambda: PLAN},
    "samplers.duel_log_likelihoods": {"planner": _L2R, "plan": lambda: PLAN},
    "samplers.duel_nll": {"planner": _L2R, "plan": lambda: PLAN},
    "samplers.duel_ranking": {"candidates": lambda: [("left_to_right", mt.samplers.LeftToRightPlanner(), PLAN)]},
})

# issue 29 §3: the corruption engine (mdmtheory.samplers.uniform); "schedule" is a name there
OVERRIDES.update({
    "samplers.corruption_alphas": {"noise": lambda: "linear"},
    "samplers.corruption_kernel": {"alpha": lambda: 0.5, "mix": lambda: 0.5},
    "samplers.corruption_denoiser": {"alpha": lambda: 0.5, "mix": lambda: 0.5},
    "samplers.corruption_marginals": {"alpha": lambda: 0.5, "mix": lambda: 0.5},
    "samplers.corruption_reverse_kernels": {"alpha_t": lambda: 0.25, "alpha_s": lambda: 0.75, "mix": lambda: 0.5},
    "samplers.corruption_run": {"mix": lambda: 0.5, "noise": lambda: "linear"},
    "samplers.corruption_law": {"mix": lambda: 0.5, "noise": lambda: "cosine"},
    "samplers.renoise_law": {"entropy_bound": lambda: 0.1, "t_min": lambda: 0.4, "t_max": lambda: 0.8},
    "bridge.TableDenoiser": {"mix": lambda: 0.5},
    "bridge.ancestral_samples": {"model": lambda: _table_denoiser(0.5), "mix": lambda: 0.5, "noise": lambda: "linear"},
    "bridge.renoise_samples": {"model": lambda: _table_denoiser(0.0), "entropy_bound": lambda: 0.1,
                               "t_min": lambda: 0.4, "t_max": lambda: 0.8},
    "bridge.OutputLawEstimate.zscores": {"exact": lambda: P},
})


def _tiny_config(causal=False):
    from mdmtheory.bridge import tiny

    return tiny.TinyConfig(vocab_size=2, seq_len=4, d_model=8, n_layers=1, n_heads=2, d_ff=8, causal=causal)


def _tiny_model(causal=False):
    from mdmtheory.bridge import tiny

    return tiny.TinyMDM(_tiny_config(causal))


def _tiny_saved():
    from mdmtheory.bridge import tiny

    return tiny.save_checkpoint(_tiny_model(), os.path.join(ROOT[0], "tiny.safetensors"))[0]


def _ids():
    import torch

    return torch.as_tensor(SAMPLES[:8].copy())


def _kl_target():
    from mdmtheory.bounds import tightness

    return next(iter(tightness.kl_targets(3).values()))


OVERRIDES.update({  # issue 38: the modules the walk did not reach
    "samplers.ties.check_ties": {"ties": lambda: "random"},
    "samplers.ties.topk_positions": {"v": lambda: np.array([0.5, 0.2, 0.1])},
    "samplers.ties.clusters": {"scores": _CONF, "free": _FREE},
    "samplers.ties.tie_choices": {"scores": _CONF, "free": _FREE},
    "samplers.ties.sample_choice": {"scores": _CONF, "free": _FREE},
    "bounds.tightness.targets": {"d": lambda: 3},
    "bounds.tightness.kl_targets": {"d": lambda: 3},
    "bounds.tightness.fastdllm_targets": {"d": lambda: 3},
    "bounds.tightness.tightness_search": {"target": _kl_target, "restarts": lambda: 1, "steps": lambda: 4,
                                          "check_every": lambda: 2},
    "bridge.tiny.TinyConfig": {"vocab_size": lambda: 2, "seq_len": lambda: 4, "d_model": lambda: 8,
                               "n_layers": lambda: 1, "n_heads": lambda: 2, "d_ff": lambda: 8},
    "bridge.tiny.TinyMDM": {"config": _tiny_config},
    "bridge.tiny.save_checkpoint": {"model": _tiny_model, "path": lambda: "m.safetensors"},
    "bridge.tiny.load_checkpoint": {"path": _tiny_saved},
    "bridge.tiny.load_pretrained": {"name": lambda: "markov"},
    "bridge.train.train": {"model": _tiny_model, "samples": lambda: SAMPLES[:16].copy(), "steps": lambda: 2,
                           "batch_size": lambda: 8, "log_every": lambda: 1},
    "bridge.train.mdm_loss": {"model": _tiny_model, "x": _ids, "gen": lambda: __import__("torch").Generator().manual_seed(0)},
    "bridge.train.ar_loss": {"model": lambda: _tiny_model(causal=True), "x": _ids},
})


def _table_denoiser(mix):
    from mdmtheory import bridge

    return bridge.TableDenoiser(P, mix)

#: instances for the methods where the records contract's builder does not fit
INSTANCES = {
    "bridge.tiny.TinyMDM": _tiny_model,
    "bounds.CompareContext": _ctx,
    "samplers.DemaskPlanner": lambda: mt.samplers.DemaskPlanner(0.1, law=P),
    "data.Dataset": lambda: mt.data.markov(d=4),
    "samplers.PositionCalibratedPlanner": lambda: mt.samplers.PositionCalibratedPlanner(
        (0.5, 0.5), block_length=2, steps_per_block=1),
    "samplers.SemiAutoregressivePlanner": lambda: mt.samplers.SemiAutoregressivePlanner(2, 1),
    "samplers.CorruptionRun": lambda: mt.samplers.corruption_run(P, 2, mix=0.5),
    "bridge.OutputLawEstimate": lambda: __import__("mdmtheory.bridge", fromlist=["x"]).output_law_estimate(P, SAMPLES),
}
for _name in ("from_joint", "to_joint", "substitute"):
    OVERRIDES.setdefault(f"symbolic.{_name}", {})
OVERRIDES["symbolic.from_joint"]["p"] = lambda: mt.laws.families.parity(3)
OVERRIDES["symbolic.substitute"]["values"] = lambda: {}
OVERRIDES["symbolic.to_joint"]["values"] = lambda: None

#: callables the walk cannot call with valid arguments, with the reason (a new public callable
#: with no recipe fails test_every_callable_has_a_recipe until it gets one or an entry here)
NO_RECIPE: dict[str, str] = {
    "optimal.AdaptivePlanner": "built by optimal.adaptive_plan (walked) from its own policy tables; its hooks are "
                               "walked through the engine and simulate on the record's planner (tests/optimal/test_optimal_adaptive.py)",
    "laws.joint_arg": "a checker of its caller's argument (law_arg), walked through every exact function taking p",
    "samplers.planner_arg": "a checker of its caller's argument (the planner), walked through the bounds and samplers "
                            "that call it (statement_checks, min_exact_steps)",
    "bounds.tightness.jax_subset_entropies": "unvalidated by design: a jax-traceable kernel of the differentiable "
                                             "tightness search (traced arrays), walked through tightness_search",
    "bounds.tightness.jax_profile": "unvalidated by design: as jax_subset_entropies (walked through tightness_search)",
    "bounds.tightness.jax_gain": "unvalidated by design: as jax_subset_entropies (walked through tightness_search)",
    "bounds.tightness.jax_ugc": "unvalidated by design: as jax_subset_entropies (walked through tightness_search)",
    "bounds.tightness.jax_gamma_umask": "unvalidated by design: as jax_subset_entropies (walked through tightness_search)",
    "bounds.tightness.jax_path_kl": "unvalidated by design: as jax_subset_entropies (walked through tightness_search)",
    "bridge.tiny.TinyMDM.forward": "torch's nn.Module hook (a LongTensor of ids), called through the bridge's samplers",
    "mdmtheory.Estimate": "the abstract base of the estimate records; confidence_interval is walked on each of them",
    "laws.ConditionalOracle": "a Protocol: its methods are walked on TableLaw, MarkovChainLaw, ...",
    "samplers.Planner": "a Protocol: moves is walked on each planner",
    "bounds.register_rows": "changes the process-wide registry of compare's rows; tests/bounds/test_registry.py",
    "bounds.unregister_rows": "changes the process-wide registry of compare's rows; tests/bounds/test_registry.py",
    "samplers.Sampler": "a Protocol: exact_run and simulate are walked on each sampler family",
    "samplers.BernoulliPlanner.exact_run": "a moves-level building block with betas of its own: the hubs run the "
                                           "Bernoulli sampler of a Grid as planner='bernoulli' (walked through them)",
    "samplers.BernoulliPlanner.simulate": "as its exact_run: planner='bernoulli' with a Grid is walked",
    "samplers.PositionSampler": "the protocol's base of the planners of positions: walked on each planner",
    "samplers.OwnChainSampler": "the protocol's base of the samplers with their own chain: walked on each of them",
    "bridge.ExactModel.forward": "torch's nn.Module hook (a LongTensor of ids), called through MaskedModel",
    "bridge.MaskedModel.score": "takes torch tensors from the estimators; walked through bridge.estimate_*",
    "bridge.TableDenoiser.forward": "torch's nn.Module hook (a LongTensor of noisy ids), called through the samplers",
    "bridge.DiffusionGemmaDenoiser": "wraps a transformers DiffusionGemmaForBlockDiffusion; tests/bridge/test_bridge_uniform.py",
    "schedules.psi_raw": "unvalidated by design: the jax-traceable kernel of schedules.psi (walked)",
    "schedules.psi_inverse_raw": "unvalidated by design: the jax-traceable kernel of schedules.psi_inverse (walked)",
    "schedules.psi_scalar": "unvalidated by design: the inner-loop scalar of schedules.psi (walked)",
    "information.profile_ugc": "unvalidated by design: the bounds' inner loop on a checked interval (ugc is walked)",
    "laws.inverse_cdf": "unvalidated by design: the inner-loop draw of every Monte Carlo loop (walked through them)",
    "samplers.pairwise_dependency": "unvalidated by design: an inner-loop kernel, walked through its callers (DemaskPlanner, bounds.demask_checks)",
    "samplers.law_dependencies": "unvalidated by design: an inner-loop kernel, walked through its callers (DemaskPlanner, bounds.demask_checks)",
    "samplers.demask_select": "unvalidated by design: an inner-loop kernel, walked through its callers (DemaskPlanner, bounds.demask_checks)",
    "samplers.planner_setup": "unvalidated by design: an inner-loop kernel, walked through its callers (simulate, estimate_kl, bridge.estimate_*)",
    "samplers.choose_positions": "unvalidated by design: an inner-loop kernel, walked through its callers (simulate, estimate_kl, bridge.estimate_*)",
    "samplers.select_work": "unvalidated by design: an inner-loop kernel, walked through its callers (select_run's work bound before any work; report)",
    "samplers.pooled_bigrams": "unvalidated by design: an inner-loop kernel, walked through its callers (transition_rates, report)",
    "information.card_path_terms": "unvalidated by design: an inner-loop kernel, walked through its callers (step_path_kl, optimal's card schedules)",
    "information.uniforms": "unvalidated by design: an inner-loop kernel, walked through its callers (bridge.estimate_profile, design.estimate_cross_entropy_profile)",
    "information.reveal": "unvalidated by design: an inner-loop kernel, walked through its callers (bridge.estimate_profile, design.estimate_cross_entropy_profile)",
    "information.mean_se": "unvalidated by design: an inner-loop kernel, walked through its callers (bridge.estimate_profile, design.estimate_cross_entropy_profile)",
    "information.chunks": "unvalidated by design: an inner-loop kernel, walked through its callers (bridge.estimate_profile, design.estimate_cross_entropy_profile)",
    "information.cross_entropy_sums": "unvalidated by design: an inner-loop kernel, walked through its callers (bridge.estimate_profile, design.estimate_cross_entropy_profile)",
    "information.check_oracle": "a checker of its caller's arguments (a ValueError naming the caller's argument), walked through its callers (information.dyadic_*, design.certify, design.certify_blocks)",
    "laws.check_batch": "a checker of its caller's arguments (a ValueError naming the caller's argument), walked through its callers (every oracle's conditionals, bridge's models)",
    "laws.families.check_transition": "a checker of its caller's arguments (a ValueError naming the caller's argument), walked through its callers (families.markov, samplers.transition_rates)",
    "optimal.check_block_length": "a checker of its caller's arguments (a ValueError naming the caller's argument), walked through its callers (optimal.design_blocks, design.estimate_design_blocks)",
    "optimal.check_block_ask": "a checker of its caller's arguments (a ValueError naming the caller's argument), walked through its callers (optimal.design_blocks, design.estimate_design_blocks)",
    "optimal.check_block_lengths": "a checker of its caller's arguments (a ValueError naming the caller's argument), walked through its callers (optimal.design_blocks, design.estimate_design_blocks)",
    "optimal.choose_block_length": "unvalidated by design: an inner-loop kernel, walked through its callers (optimal.design_blocks, design.estimate_design_blocks)",
    "samplers.register_planner": "changes the process-wide planner registry; its checks: tests/samplers",
    "bridge.from_pretrained": "loads a Hugging Face checkpoint folder (transformers); tests/bridge/test_bridge_hf.py",
    "data.load_tokenizer": "needs a trained tokenizer folder (transformers); tests/data/test_tokenized.py",
    "data.load_text": "needs a trained tokenizer folder (transformers); tests/data/test_tokenized.py",
    "data.load_jsonl": "needs a trained tokenizer folder (transformers); tests/data/test_tokenized.py",
    "exports.mdlm.sample": "needs MDLM's Diffusion object (kuleshov-group/mdlm); tests/exports/test_pipeline_forwards.py",
}

#: methods that are the sampler engine's hooks on a planner (``moves(ctx)``, ``select(step, ...)``):
#: called by exact_run / simulate with the StepContext and arrays they build, walked through them
ENGINE_HOOKS = {"moves": "exact engine hook (StepContext)", "select": "Monte Carlo hook (the engine's arrays)",
                "select_oracle": "Monte Carlo hook of DemaskPlanner (the engine's arrays and oracle)"}

#: result records: built by the library (the functions that return them are walked, and their
#: methods on the instance test_records builds); their constructors take the library's own
#: values and are not walked
RESULT_RECORDS = frozenset({
    "samplers.ties.Choice", "bounds.tightness.TightnessTarget", "bounds.tightness.TightnessResult",
    "bridge.tiny.TinyOutput", "bridge.train.TrainResult",
    "samplers.Run", "samplers.Capabilities", "bounds.CompareContext", "bounds.RowFamily",
    "bounds.BlockAllocation", "bounds.Bound", "bounds.CL26Point", "bounds.Comparison", "bounds.ComparisonRow",
    "bounds.FengEstimate", "bounds.FengRates", "bounds.FengSteps", "bounds.JysSearch", "bounds.StatementCheck",
    "bounds.ZC26Check",
    "bridge.DyadicModelEstimate", "bridge.FactorizationEstimate", "bridge.PathEstimate",
    "bridge.PlanComparison", "bridge.ScheduleEstimate", "bridge.SpeculativeSimulation", "data.Dataset", "data.TokenizedData",
    "design.BlockCertificate", "design.Certificate", "design.Design", "design.Memorization",
    "exports.diffusers.SchedulerCheck",
    "information.DyadicEstimate", "information.Lemma1", "information.ProfileEstimate",
    "laws.InformationProfileEstimate", "optimal.BlockCandidate", "optimal.BlockDesign",
    "optimal.AdaptivePlan", "optimal.BlockPartition", "optimal.Frontier", "optimal.LagrangianFrontier",
    "optimal.RandomizedOptimum", "optimal.Tuning",
    "report.Report", "samplers.ComparisonTable", "samplers.ExactRun", "samplers.KLEstimate",
    "samplers.RevealDiagnostics", "samplers.RevisionRun", "samplers.SelectRun", "samplers.SelectionBias",
    "samplers.Simulation", "samplers.ServingRun", "samplers.SpeculativeRun", "samplers.InfoGainRun", "samplers.StepContext",
    "samplers.TieSpread", "samplers.TransitionRates", "samplers.DuelRanking", "samplers.CorruptionRun", "bridge.OutputLawEstimate",
    "symbolic.ClosedForms", "symbolic.ContinuumSchedule", "symbolic.PowerLawSchedule",
    "symbolic.RiemannCertificate",
})

#: callables of a wing hardened on another branch whose walk fails today: strict xfails (walked
#: with every core value), removed when that branch is merged. Empty: every wing passes the walk.
PENDING_OTHER_WING: dict[str, str] = {}


# == finding the public callables ==============================================================
def _modules():
    yield "mdmtheory", mt
    for name in WINGS + EXTRA_MODULES:
        yield name, importlib.import_module(f"mdmtheory.{name}")


def _is_record(cls) -> bool:
    return dataclasses.is_dataclass(cls) or (issubclass(cls, tuple) and hasattr(cls, "_fields"))


def public_api() -> dict[str, object]:
    """{qualified name: callable} for every callable named in a walked ``__all__``; each object
    once, under its wing's name (``schedules.Schedule``, not ``mdmtheory.Schedule``)."""
    found, seen = {}, set()
    mods = list(_modules())
    for label, mod in mods[1:] + mods[:1]:
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name, None)
            if not callable(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            found[f"{label}.{name}"] = obj
    return found


def _public_methods(cls):
    """(name, kind) of the public methods a class defines in the package: kind 'class' for
    class- and staticmethods (called on the class), 'instance' otherwise."""
    out = []
    for name in dir(cls):
        if name.startswith("_"):
            continue
        raw = inspect.getattr_static(cls, name)
        owner = next((k for k in cls.__mro__ if name in vars(k)), None)
        if owner is None or not owner.__module__.startswith("mdmtheory"):
            continue
        if isinstance(raw, (classmethod, staticmethod)):
            out.append((name, "class"))
        elif inspect.isfunction(raw):
            out.append((name, "instance"))
    return out


def targets() -> dict[str, tuple]:
    """{qualified name: (kind, object, owner class or None)}: functions, constructors, methods."""
    out = {}
    for qual, obj in public_api().items():
        if inspect.isclass(obj):
            out[qual] = ("constructor", obj, None)
            for name, kind in _public_methods(obj):
                out[f"{qual}.{name}"] = (kind, getattr(obj, name) if kind == "class" else name, obj)
        else:
            out[qual] = ("function", obj, None)
    return out


# == building calls ===========================================================================
_EMPTY = inspect.Parameter.empty


def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _walked(sig):
    return [p for p in sig.parameters.values()
            if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]


def _valid_value(qual, param):
    """A factory of a valid value for ``param`` of ``qual``, or None (the default is valid)."""
    over = OVERRIDES.get(qual, {})
    if param.name in over:
        return over[param.name]
    if qual.startswith("symbolic.") and param.name in _SYMBOLIC and param.default is _EMPTY:
        return _SYMBOLIC[param.name]
    if param.default is not _EMPTY:
        return None
    return VALID.get(param.name)


def _instance(cls, builders):
    """A valid instance of ``cls``: the records contract's builder, else the constructor recipe."""
    qual = _qual_of(cls)
    if qual in INSTANCES:
        return INSTANCES[qual]()
    if cls.__name__ in builders and qual not in OVERRIDES:
        return builders[cls.__name__]()
    fn, args, kw = _call_for(qual, cls)
    return fn(*args, **kw)


_QUALS: dict[int, str] = {}


def _qual_of(cls):
    if not _QUALS:
        _QUALS.update({id(v): k for k, v in public_api().items()})
    return _QUALS.get(id(cls), cls.__name__)


def _call_for(qual, fn, replace=None):
    """(fn, args, kwargs) of the valid call of ``fn``; ``replace`` {name: value} substitutes."""
    sig = _signature(fn)
    args, kw = list(OVERRIDES.get(qual, {}).get("*", tuple)()), {}
    for param in _walked(sig):
        if replace and param.name in replace:
            value = replace[param.name]
        else:
            make = _valid_value(qual, param)
            if make is None:
                if param.default is _EMPTY:
                    raise LookupError(f"{qual}: no valid value for the argument {param.name!r}")
                if param.kind is inspect.Parameter.POSITIONAL_ONLY:
                    value = param.default
                else:
                    continue
            else:
                value = make()
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            args.append(value)
        else:
            kw[param.name] = value
    return fn, args, kw


def _resolve(qual, builders):
    """(callable, its signature) for a target: the method bound to a valid instance."""
    kind, obj, owner = TARGETS[qual]
    if kind == "instance":
        obj = getattr(_instance(owner, builders), obj)
    return obj, _signature(obj)


# == one guarded call ==========================================================================
def _files(root="."):
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs} | {
        os.path.join(d, s) for d, ss, _ in os.walk(root) for s in ss}


def _outcome(fn, args, kw):
    """('ok', value) | ('refused', message) | ('crash', text) | ('hang', text)."""
    try:
        with alarm(CALL_SECONDS):
            out = fn(*args, **kw)
        if isinstance(out, contextlib.AbstractContextManager) and not isinstance(out, mt.Joint):
            with alarm(CALL_SECONDS), out:
                pass
    except Hang as exc:
        return "hang", str(exc)
    except ValueError as exc:
        return "refused", str(exc)
    except (Exception, RecursionError) as exc:  # noqa: BLE001 - the contract: nothing else escapes
        return "crash", f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
    return "ok", out


#: (callable, argument) where text is a documented value: a string names a positive sympy Symbol
TEXT_OK = {("symbolic.noisy_repeated_bit", "eps"), ("symbolic.two_state_markov_chain", "a"),
           ("symbolic.two_state_markov_chain", "b"), ("symbolic.markov_chain_closed_forms", "a"),
           ("symbolic.markov_chain_closed_forms", "b")}


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


#: names a message may start with besides the callable's own parameters and the instance's
#: fields: the package's vocabulary ("p", "plan", ...), and the field of the record an argument
#: is read as (a plan read as Schedule(sizes) or Grid(times), a profile as Profile(values)),
#: the names of the helper a value is passed on to (the step size k of a commit rule, the
#: interval end hi of the continuum rule, one block_length of block_lengths)
ALIASES = {"format", "p", "plan", "law", "samples", "table", "d", "K", "steps", "planner", "j/given",
           "sizes", "times", "values", "profile", "k", "hi", "block_length"}


def _names_an_argument(message: str, names) -> bool:
    """The message's prefix (before the first ': ') holds a parameter name, a field of the
    instance or an alias: ``"exact: ..."``, ``"x, revealed: ..."``, ``"a, b: ..."``."""
    head = message.split(": ", 1)[0]
    words = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", head))
    return bool(words & (set(names) | ALIASES))


#: record fields whose NaN is a documented value, with where it is documented
DOCUMENTED_NAN_FIELDS = {
    ("StatementCheck", "ratio"): "bounds.StatementCheck: NaN when no case forms a ratio (every denominator <= 1e-9)",
    ("StatementCheck", "exact"): "bounds.StatementCheck: the worst case's values, NaN with the ratio",
    ("StatementCheck", "bound"): "bounds.StatementCheck: the worst case's values, NaN with the ratio",
}


def _has_nan(obj, depth: int = 0) -> bool:
    """Whether a result holds a NaN: floats, float arrays, and (3 levels deep) the fields of
    records, tuples, lists and dicts."""
    if isinstance(obj, (float, np.floating)):
        return bool(np.isnan(obj))
    if isinstance(obj, np.ndarray):
        return obj.dtype.kind in "fc" and bool(np.isnan(obj).any())
    if depth >= 3:
        return False
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return any(_has_nan(getattr(obj, f.name, None), depth + 1) for f in dataclasses.fields(obj)
                   if (type(obj).__name__, f.name) not in DOCUMENTED_NAN_FIELDS)
    if isinstance(obj, (tuple, list)):
        return any(_has_nan(x, depth + 1) for x in obj[:64])
    if isinstance(obj, dict):
        return any(_has_nan(x, depth + 1) for x in list(obj.values())[:64])
    return False


#: (callable, argument) where a NaN number is a documented value (e.g. "no threshold")
NAN_OK: dict[tuple[str, str], str] = {}
#: (callable, argument) whose hostile value gives a NaN in an accepted result, known and owned
#: elsewhere, with the reason (each one an open item, not a pass)
NAN_RESULT_KNOWN: dict[tuple[str, str], str] = {
    **{(q, "alpha"): "documented: at alpha = 0 (everything noised) the noisy states of probability 0 have NaN rows"
       for q in ("samplers.corruption_marginals", "samplers.corruption_denoiser")},
    **{(q, "mix"): "documented: a mix so small that 1 - alpha**mix rounds to 0 leaves the mask states of probability "
                   "0, their rows NaN (corruption_denoiser's docstring)"
       for q in ("samplers.corruption_marginals", "samplers.corruption_denoiser", "samplers.corruption_reverse_kernels")},
    ("samplers.corruption_reverse_kernels", "alpha_t"): "documented: at alpha_t = 0 the noisy states of probability 0 "
                                                         "have NaN rows (its docstring)",
}


def check_call(qual, fn, args, kw, hostile: dict, valid_number: dict, names=(), valid_nan: bool = True) -> str | None:
    """The contract for one call with ``hostile`` {argument: hostile id}; a failure text or None.
    ``valid_nan``: whether the valid call's result holds a NaN (then a NaN here is no failure)."""
    before = _files()
    t0 = time.perf_counter()
    what, out = _outcome(fn, args, kw)
    label = ", ".join(f"{k}={v}" for k, v in hostile.items())
    if what == "hang":
        return f"{qual}({label}): hung (> {CALL_SECONDS} s)"
    if what == "crash":
        return f"{qual}({label}): {out}"
    after = _files()
    if what == "refused":
        label_names = [v for k, v in kw.items() if k == "name" and isinstance(v, str)]  # the caller's label
        if not _ARG_NAME.match(out) or not _names_an_argument(out, [*names, *label_names]):
            return f"{qual}({label}): ValueError does not start with an argument's name: {out[:120]!r}"
        if after != before:
            return f"{qual}({label}): refused but left {sorted(after - before)}"
        return None
    for new in sorted(after - before, key=len, reverse=True):  # accepted output: cleared for the next call
        (os.rmdir if os.path.isdir(new) else os.remove)(new)
    for name, hid in hostile.items():
        text_ok = (qual, name) in TEXT_OK and hid in ("str", "numeric str")
        if name in valid_number and not text_ok and (hid in NOT_NUMBERS or (hid == "None" and valid_number[name])):
            return f"{qual}({label}): accepted a non-number for a number argument"
        if name in valid_number and hid == "nan" and (qual, name) not in NAN_OK:
            return f"{qual}({label}): accepted NaN for a number argument (refuse it by name, or list it in NAN_OK)"
        sem = SEMANTIC.get(hid)
        if sem is not None and sem[2] and (qual, name, hid) not in SEMANTIC_OK:
            return f"{qual}({label}): accepted an invalid value ({hid}); refuse it by name, or list it in SEMANTIC_OK"
    if (not valid_nan and "nan" not in hostile.values() and _has_nan(out)  # a NaN given may be echoed
            and not any((qual, k) in NAN_RESULT_KNOWN for k in hostile)):
        return f"{qual}({label}): returned a NaN (the valid call does not)"
    if time.perf_counter() - t0 > CALL_SECONDS:
        return f"{qual}({label}): took {time.perf_counter() - t0:.1f} s"
    return None


def prepare(qual, builders):
    """What a walk of ``qual`` needs (shared with benchmarks/bench_hostile.py --fuzz): a dict with
    the callable ``fn``, its walked ``params``, ``valid`` {name: valid value}, ``number``
    {number argument: whether None must be refused}, ``semantic`` {argument: {semantic id:
    factory}}, ``names`` (what a refusal may name) and ``valid_nan``; or a failure text when the
    valid call itself fails."""
    fn, sig = _resolve(qual, builders)
    params = _walked(sig)
    base = _call_for(qual, fn)
    what, out = _outcome(*base)
    if what != "ok":
        return f"{qual}: the valid call fails ({what}: {str(out)[:200]}); fix its recipe"
    valid_nan = _has_nan(out)
    # number arguments: {name: whether None must be refused}; the semantic values that apply
    number, semantic, valid = {}, {}, {}
    for param in params:
        make = _valid_value(qual, param)
        value = make() if make is not None else param.default
        valid[param.name] = value
        if _is_number(value):
            number[param.name] = param.default is not None
        for sid, (applies, build, _) in SEMANTIC.items():
            try:
                if applies(param.name, value):
                    built = build(value)  # built here: a valid value it cannot read gets no such case
                    semantic.setdefault(param.name, {})[sid] = (lambda b=built: b)
            except (ValueError, TypeError):  # a valid value the builder cannot read (a planner it cannot resolve)
                continue
    names = [p.name for p in params]
    if TARGETS[qual][2] is not None:  # a method or a class's constructor: the fields of the class too
        names += [f.name for f in dataclasses.fields(TARGETS[qual][2])] if dataclasses.is_dataclass(TARGETS[qual][2]) else []
    if TARGETS[qual][0] == "constructor" and dataclasses.is_dataclass(TARGETS[qual][1]):
        names += [f.name for f in dataclasses.fields(TARGETS[qual][1])]
    return {"fn": fn, "params": params, "valid": valid, "number": number, "semantic": semantic, "names": names,
            "valid_nan": valid_nan}


def walk(qual, builders, values, pairs=False) -> tuple[list[str], int]:
    """Every argument of ``qual`` fed each hostile value of ``values``; (failures, calls)."""
    prep = prepare(qual, builders)
    if isinstance(prep, str):
        return [prep], 1
    fn, params, number, semantic = prep["fn"], prep["params"], prep["number"], prep["semantic"]
    names, valid_nan = prep["names"], prep["valid_nan"]
    failures, calls = [], 1
    combos = [{p.name: h} for p in params for h in (values if values is not None else default_values(qual, p.name))]
    combos += [{name: h} for name in number for h in NUMBER_EXTRA
               if {name: h} not in combos]  # ±inf for every number (issue 38)
    combos += [{name: sid} for name, sids in semantic.items() for sid in sids]
    values = values if values is not None else CORE
    if pairs:  # every pair of arguments hostile at once, with the core values
        for i, p1 in enumerate(params):
            for p2 in params[i + 1:]:
                combos += [{p1.name: CORE[k], p2.name: CORE[(k + 1) % len(CORE)]} for k in range(len(CORE))]
    for hostile in combos:  # a method: the same instance throughout (a refused call must not change it)
        call = _call_for(qual, fn, {k: semantic[k][h]() if h in SEMANTIC else HOSTILE[h][0]()
                                    for k, h in hostile.items()})
        calls += 1
        bad = check_call(qual, *call, hostile, number, names, valid_nan)
        if bad:
            failures.append(bad)
    return failures, calls


TARGETS = targets()
#: calls made by the slow run (printed at the end of the module with -s)
WALKED = {"calls": 0}


@pytest.fixture(scope="module", autouse=True)
def _report_calls():
    yield
    if WALKED["calls"]:
        print(f"\nAPI walker: {WALKED['calls']} calls")


#: callables walked in the slow run only (their valid call alone takes ~0.1-0.5 s)
SLOW_ONLY = {
    "symbolic.square_root_rule": "sympy's Euler-Lagrange solve and integrals, ~0.5 s a call",
    "symbolic.power_law_schedule": "sympy's Euler-Lagrange solve and integrals, ~0.5 s a call",
    "report.write_html": "renders every figure of the report, ~0.3 s a call",
    "report.render_html": "renders every figure of the report, ~0.3 s a call",
    "data.phonemes": "builds the CMUdict law, ~0.3 s a call",
    "bounds.tightness.tightness_search": "jit-compiles the Adam search, ~1.8 s a walk (issue 38: the default walk keeps its time)",
    "bounds.tightness.TightnessResult.to_dict": "its record runs a tightness search, ~1.2 s a walk",
    "bridge.train.train": "trains a TinyMDM for 2 steps per call, ~1.2 s a walk",
    "bridge.train.TrainResult.to_dict": "its record trains a TinyMDM, ~1.5 s a walk",
}


def _cases(default: bool = False):
    out = []
    for qual in sorted(TARGETS):
        kind, obj, owner = TARGETS[qual]
        if qual in NO_RECIPE or qual in RESULT_RECORDS or owner is not None and (
                _qual_of(owner) in NO_RECIPE or kind == "instance" and obj in ENGINE_HOOKS):
            continue
        marks = [pytest.mark.xfail(strict=True, reason=PENDING_OTHER_WING[qual])] if qual in PENDING_OTHER_WING else []
        if default and qual in SLOW_ONLY:
            marks.append(pytest.mark.slow)
        out.append(pytest.param(qual, marks=marks, id=qual))
    return out


@pytest.fixture
def builders(tmp_path, monkeypatch):
    from test_records import _builders

    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    ROOT[:] = [str(tmp_path)]
    return _builders(tmp_path)


@pytest.mark.parametrize("qual", _cases(default=True))
def test_hostile_values_refused_by_name(qual, builders):
    failures, _ = walk(qual, builders, CORE if qual in PENDING_OTHER_WING else None)
    assert not failures, "\n".join(failures)


@pytest.mark.slow
@pytest.mark.parametrize("qual", _cases())
def test_hostile_values_refused_by_name_slow(qual, builders):
    failures, calls = walk(qual, builders, list(HOSTILE), pairs=True)
    WALKED["calls"] += calls
    assert not failures, "\n".join(failures)


def test_every_callable_has_a_recipe():
    """Each walked callable has a valid value for every required argument, or an entry in
    NO_RECIPE / RESULT_RECORDS saying why not (nothing new is skipped silently)."""
    missing = []
    for qual, (kind, obj, owner) in sorted(TARGETS.items()):
        if qual in NO_RECIPE or qual in RESULT_RECORDS or kind == "instance":
            continue
        for param in _walked(_signature(obj)):
            if param.default is _EMPTY and _valid_value(qual, param) is None:
                missing.append(f"{qual}: no valid value for the argument {param.name!r}")
    stale = sorted((set(NO_RECIPE) | set(RESULT_RECORDS) | set(OVERRIDES) | set(PENDING_OTHER_WING) | set(SLOW_ONLY)
                    | set(INSTANCES) | {q for q, _ in TEXT_OK}) - set(TARGETS))
    assert not missing, "add a recipe (VALID or OVERRIDES) or a NO_RECIPE entry:\n" + "\n".join(missing)
    assert not stale, f"entries naming no public callable: {stale}"


# == a new public function is walked without touching this file ================================
def _unchecked_steps(p, steps):
    """A deliberately unchecked function: ``int()`` on the raw argument, no size limit."""
    return [0.0] * int(steps)


def _checked_steps(p, steps):
    from mdmtheory._validate import int_arg
    from mdmtheory.laws import joint_arg

    joint_arg(p)
    return [0.0] * int_arg(steps, "steps", 1)


@contextlib.contextmanager
def _unchecked_on_enter(p, steps):
    """As :func:`_unchecked_steps`, but the argument is read when the ``with`` block is entered
    (a generator context manager such as ``exports.llada.patch``): the walker must enter it."""
    yield [0.0] * int(steps)


@pytest.mark.parametrize("fn, flagged", [(_unchecked_steps, True), (_unchecked_on_enter, True), (_checked_steps, False)],
                         ids=["unchecked", "unchecked on enter", "checked"])
def test_a_new_unchecked_function_is_flagged(fn, flagged, builders, monkeypatch):
    from mdmtheory import samplers

    monkeypatch.setattr(samplers, "planted_steps", fn, raising=False)
    monkeypatch.setattr(samplers, "__all__", [*samplers.__all__, "planted_steps"])
    found = targets()
    assert found.get("samplers.planted_steps") == ("function", fn, None)  # discovered from __all__ alone
    monkeypatch.setitem(TARGETS, "samplers.planted_steps", found["samplers.planted_steps"])
    assert "samplers.planted_steps" in [c.values[0] for c in _cases(default=True)]
    failures, calls = walk("samplers.planted_steps", builders, None)
    assert calls > 1
    if flagged:  # the walker names the class of each failure
        text = "\n".join(failures)
        for what in ("steps=str): ValueError does not start", "steps=None): TypeError", "steps=10**400): OverflowError"):
            assert what in text, text
    else:
        assert not failures, failures


# == the walker knows meaning, not only types (issue 38) =========================================
def _accepts_lost_mass(p, steps):
    """A deliberately unchecked exact function: reads p.table, never p.lost."""
    return float(p.table.sum()) * int_steps(steps)


def int_steps(steps):
    from mdmtheory._validate import int_arg

    return int_arg(steps, "steps", 1, 16)


def _crashes_on_a_planner_class(p, planner):
    """Resolves a name but uses anything else as an instance: a class crashes inside."""
    s = mt.samplers.as_sampler(planner) if isinstance(planner, str) else planner
    return s.exact_run(p, PLAN).law if isinstance(s.capabilities.plans, tuple) else None


def _checks_law_and_planner(p, planner):
    from mdmtheory.laws import joint_arg

    return mt.samplers.planner_arg(planner).exact_run(joint_arg(p), PLAN).law


@pytest.mark.parametrize("fn, expect", [
    (_accepts_lost_mass, "p=sub-normalised law): accepted an invalid value"),
    (_crashes_on_a_planner_class, "planner=planner class): AttributeError"),
    (_checks_law_and_planner, None)], ids=["accepts lost mass", "crashes on a planner class", "checked"])
def test_a_planted_semantic_failure_is_flagged(fn, expect, builders, monkeypatch):
    """The walker, unedited, fails a function that accepts a sub-normalised law or crashes on a
    planner class, and passes the same function written with joint_arg / planner_arg."""
    from mdmtheory import samplers

    monkeypatch.setattr(samplers, "planted_semantic", fn, raising=False)
    monkeypatch.setattr(samplers, "__all__", [*samplers.__all__, "planted_semantic"])
    monkeypatch.setitem(TARGETS, "samplers.planted_semantic", targets()["samplers.planted_semantic"])
    failures, calls = walk("samplers.planted_semantic", builders, None)
    assert calls > 1
    if expect is None:
        assert not failures, failures
    else:
        assert any(expect in f for f in failures), "\n".join(failures)


def _package_modules():
    import pkgutil

    for info in pkgutil.walk_packages(mt.__path__, "mdmtheory."):
        if info.name.rsplit(".", 1)[-1] == "__main__":  # runs the demo on import
            continue
        yield info.name, importlib.import_module(info.name)


def test_every_module_is_walked_or_skipped():
    """Every module under mdmtheory/ whose ``__all__`` names a callable is walked (a wing, or
    EXTRA_MODULES) or named in SKIPPED_MODULES with its reason (issue 38: samplers.ties,
    bounds.tightness, bridge.tiny/train were never walked)."""
    walked = {"mdmtheory"} | {f"mdmtheory.{m}" for m in WINGS + EXTRA_MODULES}
    seen, unlisted = set(), []
    for name, mod in _package_modules():
        seen.add(name)
        if not any(callable(getattr(mod, n, None)) for n in getattr(mod, "__all__", ())):
            continue
        if name in walked or name in SKIPPED_MODULES or name.startswith(SKIPPED_PACKAGES):
            continue
        # a module whose public callables are all re-exported by a walked module is walked
        api = {id(v) for v in public_api().values()}
        if all(id(getattr(mod, n)) in api for n in mod.__all__ if callable(getattr(mod, n, None))):
            continue
        unlisted.append(name)
    assert not unlisted, f"walk these modules (EXTRA_MODULES) or give SKIPPED_MODULES a reason: {unlisted}"
    stale = sorted(set(SKIPPED_MODULES) - seen)
    assert not stale, f"SKIPPED_MODULES names no module: {stale}"


def test_a_new_function_without_a_recipe_fails_loudly(monkeypatch):
    from mdmtheory import samplers

    def planted(p, mystery_argument):
        return p

    monkeypatch.setattr(samplers, "planted_recipe", planted, raising=False)
    monkeypatch.setattr(samplers, "__all__", [*samplers.__all__, "planted_recipe"])
    monkeypatch.setattr(__import__(__name__), "TARGETS", targets())
    with pytest.raises(AssertionError, match="samplers.planted_recipe: no valid value for the argument 'mystery_argument'"):
        test_every_callable_has_a_recipe()
