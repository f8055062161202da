"""Bad input raises ValueError naming the argument (docs/design.md §6); nothing is silently
clipped, renormalized or turned into NaN."""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass

import numpy as np
import pytest

from mdmtheory.information import kl, path_kl, step_path_kl
from mdmtheory.information import entropy, entropy_coefficients, subset_entropies, total_correlation
from mdmtheory.laws import NORMALIZATION_TOL, Joint
from mdmtheory.information import Profile, information_profile
from mdmtheory.samplers.engine import exact_run, sampler_law
from mdmtheory.samplers.planners import RandomPlanner, resolve_planner
from mdmtheory.schedules import Grid, Schedule, check_schedule

joint_mod = importlib.import_module("mdmtheory.laws.joint")
engine_mod = importlib.import_module("mdmtheory.samplers.engine")


def uniform(K, d):
    return Joint(np.full((K,) * d, float(K) ** -d))


# -- Joint -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "table",
    [
        1.0,  # scalar
        np.float64(0.5),
        [],  # empty axis
        [1.0],  # K = 1
        np.ones((1, 1)),  # K = 1, d = 2
        np.full((2, 3), 1 / 6),  # unequal axes
        np.full((3, 2, 3), 1 / 18),
        [[0.5], [0.25, 0.25]],  # ragged
        "abc",
        [[0.6, -0.1], [0.25, 0.25]],  # negative
        [[np.nan, 0.5], [0.25, 0.25]],
        [[np.inf, 0.5], [0.25, 0.25]],
        [[0.5, 0.5], [0.25, 0.25]],  # sums to 1.5
        [[0.25, 0.25], [0.25, 0.25 - 2e-9]],  # off by 2e-9 > NORMALIZATION_TOL
        [[0.25, 0.25], [0.25, 0.25 + 2e-9]],
        np.zeros((2, 2)),
    ],
)
def test_joint_rejects_bad_tables(table):
    with pytest.raises(ValueError, match=r"^table: "):
        Joint(table)


@pytest.mark.parametrize("off", [5e-10, -5e-10, 0.9 * NORMALIZATION_TOL])
def test_joint_rescales_within_tolerance_once(off):
    # tolerance model (joint.py docstring): accepted within NORMALIZATION_TOL, then rescaled
    # once so that the stored law sums to 1 to rounding
    raw = np.array([[0.25, 0.25], [0.25, 0.25 + off]])
    p = Joint(raw)
    assert raw.sum() != 1.0
    assert abs(p.table.sum() - 1.0) <= 4e-16 < abs(raw.sum() - 1.0)
    np.testing.assert_allclose(p.table, raw / raw.sum(), rtol=1e-15, atol=0)
    assert p.table.dtype == np.float64 and not p.table.flags.writeable


def test_joint_stores_normalized_tables_bit_for_bit():
    raw = np.array([[0.1, 0.2], [0.3, 0.4]])
    assert raw.sum() == 1.0
    assert np.array_equal(Joint(raw).table, raw)
    sub = np.array([0.25, 0.5])
    assert np.array_equal(Joint(sub, lost=0.25).table, sub)


@pytest.mark.parametrize("off", [5e-10, -5e-10])
def test_identities_hold_to_rounding_for_tables_within_tolerance(off):
    # a product law off by `off`: its profile must stay flat (non-increasing exactly), KL
    # between the law and its own sampler law must be >= 0, and TC >= 0
    raw = np.full((2, 2, 2), 1 / 8)
    raw[0, 0, 0] += off
    p = Joint(raw)
    phi = information_profile(p).values
    assert np.all(np.diff(phi) <= 0)
    assert abs(phi.sum() - 3 * math.log(2)) < 1e-14
    q = sampler_law(p, Schedule((3,)))
    assert 0.0 <= kl(p, q) <= path_kl(p, Schedule((3,))) + 1e-15
    assert total_correlation(p) >= -1e-15


def test_joint_holds_its_own_copy():
    raw = np.array([[0.25, 0.25], [0.25, 0.25 + 5e-10]])
    p = Joint(raw)
    raw[0, 0] = 0.0
    assert p.table[0, 0] == pytest.approx(0.25, rel=1e-9)


@pytest.mark.parametrize("lost", [-0.1, 1.5, math.nan, math.inf])
def test_joint_rejects_bad_lost(lost):
    with pytest.raises(ValueError, match=r"^lost: "):
        Joint([0.5, 0.5], lost=lost)


def test_joint_lost_must_complete_the_mass():
    Joint([0.25, 0.5], lost=0.25)  # fine
    with pytest.raises(ValueError, match=r"^table: .*lost"):
        Joint([0.25, 0.5], lost=0.5)


def test_joint_size_limit(monkeypatch):
    monkeypatch.setattr(joint_mod, "MAX_OUTCOMES", 8)
    Joint(np.full((2,) * 3, 1 / 8))
    with pytest.raises(ValueError, match=r"^table: .*exceeds the exact limit"):
        Joint(np.full((2,) * 4, 1 / 16))


def test_joint_marginal_and_conditional_arguments():
    p = Joint(np.array([[0.5, 0.0], [0.0, 0.5]]))
    with pytest.raises(ValueError, match=r"^positions: "):
        p.marginal([2])
    with pytest.raises(ValueError, match=r"^positions: "):
        p.marginal([0, 0])
    with pytest.raises(ValueError, match=r"^given: .*probability 0"):
        Joint(np.array([[1.0, 0.0], [0.0, 0.0]])).conditional(1, {0: 1})
    with pytest.raises(ValueError, match=r"^given: "):
        p.conditional(1, {0: 2})
    with pytest.raises(ValueError, match=r"^j: "):
        p.conditional(0, {0: 1})


# -- entropies and profiles ---------------------------------------------------------------
def test_entropies_refuse_lost_mass():
    q = Joint([0.25, 0.5], lost=0.25)
    for f in (subset_entropies, entropy, total_correlation, information_profile):
        with pytest.raises(ValueError, match=r"^p: .*lost"):
            f(q)
    with pytest.raises(ValueError, match=r"^p: .*lost"):
        path_kl(q, Schedule((1,)))


@pytest.mark.parametrize(
    "bad", [np.zeros(3), np.zeros((2, 2)), np.zeros(1), [1.0, "x"], [0.0, math.nan], [0.0, math.inf], None]
)
def test_entropy_functionals_refuse_bad_vectors(bad):
    with pytest.raises(ValueError, match=r"^p: "):
        entropy_coefficients(bad)


def test_subset_entropies_refuse_non_joint():
    with pytest.raises(ValueError, match=r"^p: "):
        subset_entropies(np.full((2, 2), 0.25))


@pytest.mark.parametrize("values", [[], [[0.1, 0.2]], [0.1, math.nan], [math.inf], "ab", 0.3])
def test_profile_rejects_bad_values(values):
    with pytest.raises(ValueError, match=r"^values: "):
        Profile(values)


@pytest.mark.parametrize("e", [[0.1, 0.5], [0.0], [[0.0, 1.0]]])
def test_profile_from_bad_entropy_coefficients(e):
    with pytest.raises(ValueError, match=r"^e: "):
        Profile.from_entropy_coefficients(e)


# -- schedules and grids ------------------------------------------------------------------
@pytest.mark.parametrize(
    "sizes",
    [(), (2, 0, 1), (3, -1), (1.5, 1.5), (True, 1), (None, 1), ("a",), ("2",), ([1, 2],), 3, None, (math.nan,), (math.inf,)],
)
def test_schedule_rejects_bad_sizes(sizes):
    with pytest.raises(ValueError, match=r"^sizes: "):
        Schedule(sizes)


def test_schedule_accepts_integral_numbers():
    assert Schedule((np.int64(2), 1.0, np.float64(3.0))).sizes == (2, 1, 3)
    assert Schedule(np.array([1, 2])).sizes == (1, 2)


def test_schedule_must_sum_to_d():
    p = uniform(2, 4)
    for sizes in [(2, 1), (3, 2)]:
        with pytest.raises(ValueError, match=r"^schedule: .*expected d=4"):
            check_schedule(sizes, 4)
        # the message names the caller's argument (plan) and the fix (sum to d)
        with pytest.raises(ValueError, match=r"^plan: .*expected d=4"):
            exact_run(p, Schedule(sizes))
        with pytest.raises(ValueError, match=r"^plan: .*expected d=4"):
            path_kl(p, Schedule(sizes))
        with pytest.raises(ValueError, match=r"^plan: .*expected d=4"):
            step_path_kl(information_profile(p), sizes)


@pytest.mark.parametrize("d,steps,name", [(0, 1, "d"), (2.0, 1, "d"), (3, 0, "steps"), (3, 4, "steps"), (3, 1.0, "steps")])
def test_schedule_constant_arguments(d, steps, name):
    with pytest.raises(ValueError, match=rf"^{name}: "):
        Schedule.constant(d, steps)


@pytest.mark.parametrize(
    "times",
    [
        (0.5,),
        (),
        0.5,
        (0.0, 0.5, 0.5),
        (0.0, 0.7, 0.3, 1.0),
        (1.0, 0.0),
        (-0.1, 0.5),
        (0.0, 1.1),
        (0.0, math.nan),
        (0.0, math.inf),
        ((0.0, 1.0),),
        ("a", "b"),
    ],
)
def test_grid_rejects_bad_times(times):
    with pytest.raises(ValueError, match=r"^times: "):
        Grid(times)


def test_grid_uniform_steps():
    with pytest.raises(ValueError, match=r"^steps: "):
        Grid.uniform(0)


# -- the engine ---------------------------------------------------------------------------
def test_engine_refuses_bad_laws(monkeypatch):
    with pytest.raises(ValueError, match=r"^p: "):
        exact_run(np.full((2, 2), 0.25), Schedule((2,)))
    with pytest.raises(ValueError, match=r"^p: .*lost"):
        exact_run(Joint([0.25, 0.5], lost=0.25), Schedule((1,)))
    monkeypatch.setattr(engine_mod, "MAX_STATE_ENTRIES", 3**3)
    monkeypatch.setattr(engine_mod, "MAX_LEVEL_ENTRIES", 3**4)
    exact_run(uniform(2, 3), Schedule((3,)), "confidence")  # (K+1)^d = 27: at the limit, fine
    with pytest.raises(ValueError, match=r"^p: .*\(K\+1\)\*\*d = 81.*up to 81.*Monte Carlo"):
        exact_run(uniform(2, 4), Schedule((4,)), "confidence")
    with pytest.raises(ValueError, match=r"^p: .*Monte Carlo"):
        sampler_law(uniform(2, 4), Grid((0.0, 1.0)))
    # random order with a Schedule (the level layout) has its own, larger limit
    exact_run(uniform(2, 4), Schedule((4,)))
    with pytest.raises(ValueError, match=r"^p: .*\(K\+1\)\*\*d = 243 state entries, above the limit 81 .*Monte Carlo"):
        exact_run(uniform(2, 5), Schedule((5,)))


@pytest.mark.parametrize("planner", ["nope", "Random", 3, None, object()])
def test_unknown_planners(planner):
    with pytest.raises(ValueError, match=r"^planner: "):
        resolve_planner(planner)
    with pytest.raises(ValueError, match=r"^planner: "):
        sampler_law(uniform(2, 3), Schedule((2, 1)), planner=planner)


def test_grid_needs_a_bernoulli_planner():
    grid = Grid((0.0, 0.5, 1.0))
    # the planner object is its name (mt.samplers.as_sampler resolves both the same way)
    assert np.array_equal(sampler_law(uniform(2, 3), grid, planner=RandomPlanner()).table,
                          sampler_law(uniform(2, 3), grid, planner="random").table)
    with pytest.raises(ValueError, match=r"^planner: .*Grid"):
        sampler_law(uniform(2, 3), grid, planner="confidence")


def test_random_planner_needs_a_schedule():
    with pytest.raises(ValueError, match=r"^plan: "):
        exact_run(uniform(2, 3), None, "random")


@dataclass(frozen=True)
class BadPlanner:
    """A planner whose moves break one rule of the protocol."""

    fault: str
    name: str = "bad"
    needs_schedule: bool = True
    allows_empty: bool = False

    def moves(self, ctx):
        if self.fault == "overlap":  # always position 0, revealed after the first step
            yield 1, 1.0
        elif self.fault == "outside":
            yield 1 << ctx.d, 1.0
        elif self.fault == "size":
            yield sum(1 << j for j in ctx.free[: ctx.size + 1]), 1.0
        elif self.fault == "empty":
            yield 0, 1.0
        elif self.fault == "weights":
            for B, w in RandomPlanner().moves(ctx):
                yield B, 0.9 * w
        elif self.fault in ("negative", "nan"):  # weights summing to 1, one of them invalid
            moves = list(RandomPlanner().moves(ctx))  # 3 moves of weight 1/3 at step 0
            bad = 0.5 if self.fault == "negative" else math.nan
            if len(moves) > 1:
                moves[0], moves[1] = (moves[0][0], moves[0][1] + bad), (moves[1][0], moves[1][1] - bad)
            yield from moves
        elif self.fault == "array-weights":  # 1/2 where x_0 = 0 once position 0 is revealed
            w = np.ones(ctx.shape)
            if ctx.revealed & 1:
                w[(0,) + (slice(None),) * (ctx.d - 1)] = 0.5
            for B, v in RandomPlanner().moves(ctx):
                yield B, v * w


@pytest.mark.parametrize(
    "fault,message",
    [
        ("overlap", "overlapping"),
        ("outside", ""),
        ("size", "tokens at a step of size"),
        ("empty", "empty"),
        ("weights", "do not sum to 1"),
        ("array-weights", "do not sum to 1"),
        ("negative", "negative or NaN weight"),
        ("nan", "negative or NaN weight"),
    ],
)
def test_planners_with_bad_moves(fault, message):
    with pytest.raises(ValueError, match=rf"^planner: .*{message}"):
        exact_run(uniform(2, 3), Schedule((1, 1, 1)), BadPlanner(fault))


@dataclass(frozen=True)
class IdlePlanner:
    """Chooses its own sizes and never reveals anything."""

    name: str = "idle"
    needs_schedule: bool = False
    allows_empty: bool = True

    def moves(self, ctx):
        yield 0, 1.0


def test_planner_that_never_finishes():
    # a planner allowed to reveal nothing could loop forever without a Grid's completion
    with pytest.raises(ValueError, match=r"^plan: .*Grid"):
        exact_run(uniform(2, 2), None, IdlePlanner())


# -- divergences --------------------------------------------------------------------------
def test_kl_arguments():
    p2, p3 = uniform(2, 2), uniform(2, 3)
    with pytest.raises(ValueError, match=r"^q: .*shape"):
        kl(p2, p3)
    with pytest.raises(ValueError, match=r"^q: .*shape"):
        kl(p2, uniform(3, 2))
    with pytest.raises(ValueError, match=r"^p: "):
        kl(p2.table, p2)
    with pytest.raises(ValueError, match=r"^q: "):
        kl(p2, p2.table)
    with pytest.raises(ValueError, match=r"^p: .*lost"):
        kl(Joint([0.25, 0.5], lost=0.25), uniform(2, 1))


def test_path_kl_arguments():
    with pytest.raises(ValueError, match=r"^p: "):
        path_kl(np.full((2, 2), 0.25), Schedule((2,)))
    with pytest.raises(ValueError, match=r"^plan: sizes: "):  # the caller's argument, then Schedule's field
        path_kl(uniform(2, 2), (2, 0))


# -- regressions from review: wrong types raise ValueErrors naming the argument ------------------
def test_wrong_types_name_the_argument():
    from mdmtheory.information import Profile
    from mdmtheory.samplers import BernoulliPlanner, ConfidencePlanner

    p = Joint(np.full((2, 2, 2), 0.125))
    cases = [
        (lambda: Joint(np.full((2, 2), 0.25), lost=None), "^lost:"),
        (lambda: p.marginal(3), "^positions:"),
        (lambda: p.conditional(1, [0]), "^given:"),
        (lambda: Profile.from_entropy_coefficients("ab"), "^e:"),
        (lambda: Profile.from_entropy_coefficients([0.0, np.nan]), "^e:"),
        (lambda: exact_run(p, Schedule((1, 1, 1)), ConfidencePlanner), "^planner: pass an instance"),
        (lambda: exact_run(p, None, BernoulliPlanner((0.5, 1.0))), "^plan: .*Grid"),
        (lambda: BernoulliPlanner((1.5,)), "^betas:"),
    ]
    for call, pattern in cases:
        with pytest.raises(ValueError, match=pattern):
            call()


def test_marginal_and_conditionals_with_unsorted_positions():
    rng = np.random.default_rng(3)
    t = rng.random((3, 3, 3, 3))
    t /= t.sum()
    p = Joint(t)
    # marginal over (2, 0): axes in the order given, by direct summation
    ref = t.sum(axis=(1, 3)).T
    assert np.allclose(p.marginal([2, 0]), ref, atol=1e-15)
    # conditional of position 1 given x_3 = 1, x_0 = 0, by direct slicing
    joint = t[0, :, :, 1].sum(axis=1)
    assert np.allclose(p.conditional(1, {3: 1, 0: 0}), joint / joint.sum(), atol=1e-15)
    cond, reach = p.conditional_table(1, [3, 0])
    assert cond.shape == (3, 3, 3) and reach.all()
    assert np.allclose(cond[0, 1], joint / joint.sum(), atol=1e-15)  # axes: sorted A = (0, 3), then x_1


# -- issue 9: one validator, documented limits, extreme magnitudes ------------------------
import mdmtheory as mt  # noqa: E402
from mdmtheory import _validate, bounds, optimal, schedules
from mdmtheory.laws import families
from mdmtheory.information import ugc  # noqa: E402
from mdmtheory.samplers import LeftToRightPlanner  # noqa: E402


@pytest.mark.parametrize("value", [True, np.bool_(False), "3", b"3", 3.0, None, 1 + 0j, [3]])
def test_int_arg_refuses_non_integers(value):
    with pytest.raises(ValueError, match=r"^d: expected an integer"):
        _validate.int_arg(value, "d", 1)


@pytest.mark.parametrize("name", sorted(_validate.LIMITS))
def test_every_documented_limit_is_enforced_and_named(name):
    limit = _validate.LIMITS[name]
    assert _validate.int_arg(limit, name, 0) == limit
    with pytest.raises(ValueError, match=rf"^{name}: .*documented limit of '{name}' is {limit}"):
        _validate.int_arg(limit + 1, name, 0)
    # the table in the module docstring (and in docs/guide.md) lists every limit
    assert f"``{name}``" in _validate.__doc__


@pytest.mark.parametrize("huge", [2**63, 2**64, 10**400, np.uint64(2**64 - 1)])
def test_huge_sizes_refused_fast(huge):
    # each would have looped or allocated for ever before (K**d with d = 2**64, ...)
    calls = [
        lambda: families.parity(huge),
        lambda: families.repeated(huge, 2),
        lambda: families.noisy_repeated_bit(huge, 0.1),
        lambda: mt.Schedule.constant(huge, 1),
        lambda: schedules.cosine_schedule(huge, 1),
        lambda: schedules.dilated_plan(huge, huge, huge),
        lambda: mt.Grid.uniform(huge),
        lambda: mt.simulate(families.parity(3), Schedule((1, 2)), n=huge, seed=0),
        lambda: families.markov_chain_entropy_coefficients([[0.5, 0.5], [0.5, 0.5]], huge),
        lambda: ugc.canonical_interval(huge),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=r"^\w+: expected an integer"):
            call()


@pytest.mark.parametrize(
    "value",
    [["0.5", "0.5"], np.array(["0.5", "0.5"]), np.array([0.5, "x"], dtype=object), [True, False],
     [[0.5, 0.5], [0.5]], [10**400, 0], "0.5", None, [0.5, 1 + 0j]],
)
def test_float_array_refuses_what_is_not_real_numbers(value):
    with pytest.raises(ValueError, match=r"^x: "):
        _validate.float_array(value, "x")


def test_float_array_reads_object_arrays_of_numbers_and_deep_lists_fail_cleanly():
    arr = _validate.float_array(np.array([0.25, 0.75], dtype=object), "x")
    assert arr.dtype == np.float64 and arr.tolist() == [0.25, 0.75]
    deep = [0.5, 0.5]
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ValueError, match=r"^table: "):
        Joint(deep)
    with pytest.raises(ValueError, match=r"^text: .*(nested|JSON)"):
        Schedule.from_json("[" * 100000)


def test_real_arg_refuses_numbers_beyond_float64():
    with pytest.raises(ValueError, match=r"^eps: .*beyond float64"):
        families.noisy_repeated_bit(3, 10**400)
    with pytest.raises(ValueError, match=r"^lost: "):
        Joint([0.5, 0.5], lost=10**400)


def test_entropy_vectors_must_be_entropies():
    with pytest.raises(ValueError, match=r"^p: .*>= 0"):
        total_correlation([0.0, -1.0, 0.5, 0.2])
    with pytest.raises(ValueError, match=r"^p: "):
        entropy_coefficients(["0", "1", "1", "2"])
    with pytest.raises(ValueError, match=r"^p: "):
        entropy([False, True])


def test_sampler_law_underflow_is_refused_not_infinite_kl():
    # q(1, 1) = p(x0=1) p(x1=1) = 1e-400 underflows; before, q(1,1) = 0 < p(1,1) gave KL = inf
    # while the path KL was ~1e-196 (KL <= path KL broken)
    p = Joint([[1.0, 1e-200], [1e-200, 1e-200]])
    with pytest.raises(ValueError, match=r"^p: the sampler law underflows float64"):
        sampler_law(p, Schedule((2,)))
    # one token per step: exact sampler, no underflow; KL = 0 = path KL
    q = sampler_law(p, Schedule((1, 1)))
    assert kl(p, q) == 0.0 == path_kl(p, Schedule((1, 1)))


def test_optimal_schedule_is_scale_invariant_over_float64():
    rng = np.random.default_rng(5)
    for _ in range(20):
        c = np.sort(rng.random(9))[::-1]
        ref = {T: optimal.schedule_path_kl(c, optimal.optimal_schedule(c, T)) for T in range(1, 10)}
        for scale in (1e-300, 1e-200, 2.0**-1074 * 2**60, 1e250, 1e300):
            for T in range(1, 10):
                s = optimal.optimal_schedule(c * scale, T)
                assert optimal.schedule_path_kl(c, s) <= ref[T] * (1 + 1e-12) + 1e-15


def test_compare_slack_is_always_a_number():
    for value, exact, slack in [(math.inf, math.inf, 1.0), (0.0, 0.0, 1.0), (math.inf, 1.0, math.inf),
                                (1.0, 0.0, math.inf), (1.0, math.inf, 0.0), (3.0, 2.0, 1.5)]:
        assert bounds._slack(value, exact) == slack


def test_product_laws_have_flat_profiles_and_nonnegative_ugc():
    rng = np.random.default_rng(1)
    for d in (3, 4, 5):
        p = families.product(rng.dirichlet(np.ones(3), size=d))
        phi = information_profile(p).values
        assert np.all(np.diff(phi) <= 0)
        assert np.ptp(phi) <= 1e-15 * phi[0]  # flat to rounding
        a, b = ugc.canonical_interval(d)
        # a negative UGC mass of -1e-17 used to raise here and give NaN W26 bounds
        assert 0.0 <= ugc.partition_complexity(p, [a, 0.5, b]) <= 1e-14
        assert 0.0 <= bounds.w26_proposition1(p, [a, 0.5, b], 64).value <= 1e-14


def test_loglinear_grid_ends_exactly_at_one():
    for steps in range(1, 60):
        for eps in (0.0, 1e-3, 0.1, 0.3113329482362122, 0.5):
            g = schedules.loglinear_grid(steps, eps)
            assert g.times[-1] == 1.0 and g.times[0] == eps
            # no spurious exact-completion column in the engine
            run = exact_run(families.parity(3), g) if steps <= 3 else None
            if run is not None:
                assert run.step_counts.shape[0] == steps + 1


@pytest.mark.parametrize("J, h", [(1e300, 0.0), (1e308, 1e308), (-1e308, 5.0), (1e-300, -1e300), (0.0, 0.0)])
def test_ising_chain_finite_for_any_finite_parameters(J, h):
    p = families.ising_chain(4, J, h)
    assert np.all(np.isfinite(p.table))
    # brute force on the mode set: only the maximizers of J sum s_i s_i+1 + h sum s_i keep mass
    s = 2.0 * np.indices((2,) * 4) - 1.0
    energy = J * (s[:-1] * s[1:]).sum(axis=0) + h * s.sum(axis=0) if abs(J) < 1e300 else None
    if energy is not None and abs(h) < 1e300 and (J, h) != (0.0, 0.0):
        assert p.table[energy < energy.max() - 1.0].sum() < 1e-300


def test_left_to_right_planner_underflow_refused_too():
    p = Joint([[1.0, 1e-200], [1e-200, 1e-200]])
    with pytest.raises(ValueError, match=r"^p: the sampler law underflows"):
        sampler_law(p, Schedule((2,)), LeftToRightPlanner())
