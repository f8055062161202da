"""Schedule families, block plans, conversions and JSON (mdmtheory.schedules).

References are written here independently of the package: closed-form targets recomputed
with ``math``, the DUS round of each offset from its a-adic valuation, exact round trips.
"""

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mdmtheory as mt
from mdmtheory.laws.families import markov_chain_entropy_coefficients
from mdmtheory.optimal import optimal_schedule, schedule_path_kl
from mdmtheory.information import Profile
from mdmtheory.schedules import (
    BlockPlan,
    Grid,
    Schedule,
    check_schedule,
    cosine_schedule,
    dilated_plan,
    geometric_grid,
    geometric_schedule,
    grid_to_schedule,
    linear_schedule,
    loglinear_grid,
    masking_schedule,
    round_cumulative,
    schedule_to_grid,
    semi_autoregressive_plan,
)
from mdmtheory.optimal import sqrt_rule_schedule
from mdmtheory.testing import schedules


def _valid(sched, d, T=None):
    assert isinstance(sched, Schedule)
    assert sum(sched.sizes) == d
    assert all(isinstance(k, int) and k >= 1 for k in sched.sizes)
    if T is not None:
        assert len(sched.sizes) == T


@st.composite
def d_and_steps(draw, d_max=60, d_min=1):
    d = draw(st.integers(d_min, d_max))
    return d, draw(st.integers(1, d))


def compositions(d_max=25):
    """Schedules of any d in 1..d_max (mdmtheory.testing.schedules of a drawn d)."""
    return st.integers(1, d_max).flatmap(schedules)


# -- existing behaviour is kept ----------------------------------------------------------------
def test_schedule_and_grid_basics_unchanged():
    assert Schedule.constant(7, 3).sizes == (2, 2, 3)
    assert Schedule((2, 1, 1)).starts == (0, 2, 3)
    assert check_schedule((1, 2), 3) == Schedule((1, 2))
    with pytest.raises(ValueError, match="expected d=4"):
        check_schedule((1, 2), 4)
    g = Grid.uniform(4)
    assert g.times == (0.0, 0.25, 0.5, 0.75, 1.0)
    assert g.betas[0] == 0.25


# -- families sum to d with positive steps -----------------------------------------------------
@given(d_and_steps())
def test_card_families_are_compositions(case):
    d, T = case
    for fam in (Schedule.constant, linear_schedule, cosine_schedule):
        _valid(fam(d, T), d, T)
    if d >= 3 and T >= 3:
        _valid(geometric_schedule(d, T), d, T)
    phi = 1.0 / (1.0 + np.arange(d))  # a strictly decreasing profile
    if d >= 2:
        _valid(sqrt_rule_schedule(phi, T), d, T)


@given(d_and_steps(d_max=40), st.integers(1, 40), st.integers(2, 4))
def test_block_plans_partition_positions(case, block, base):
    d, steps = case
    block = min(block, d)
    for plan in (dilated_plan(d, block, base), semi_autoregressive_plan(d, block, min(steps, block))):
        assert sorted(j for b in plan.blocks for j in b) == list(range(d))
        _valid(plan.schedule, d, plan.steps)
        assert len(plan.step_blocks) == plan.steps == len(plan.step_masks)
        assert BlockPlan.from_json(plan.to_json()) == plan


def test_cosine_matches_maskgit_formula_where_valid():
    d, T = 1000, 8
    masked = [math.floor(d * math.cos(math.pi / 2 * t / T) + 1e-9) for t in range(T + 1)]
    assert masked[0] == d and masked[-1] == 0
    assert cosine_schedule(d, T).sizes == tuple(masked[t - 1] - masked[t] for t in range(1, T + 1))
    # T = 3: cos(pi/3) = 1/2 exactly, the guard keeps floor(d/2)
    assert cosine_schedule(10, 3).cumulative == (0, 10 - math.floor(10 * math.cos(math.pi / 6)), 5, 10)


def test_cosine_flat_start_gets_one_token_per_step():
    d, T = 20, 16  # d cos(pi/2 t/T) drops by < 1 token in the first steps
    raw = [d - math.floor(d * math.cos(math.pi / 2 * t / T) + 1e-9) for t in range(T + 1)]
    assert any(raw[t] == raw[t - 1] for t in range(1, T + 1))  # the plain formula has empty steps
    sched = cosine_schedule(d, T)
    _valid(sched, d, T)
    s = sched.cumulative
    for t in range(1, T + 1):  # never behind the formula, ahead only by the forced single tokens
        assert s[t] >= raw[t]
        assert s[t] == raw[t] or s[t] == s[t - 1] + 1


def test_masking_schedule_validates_gamma():
    with pytest.raises(ValueError, match="gamma"):
        masking_schedule(10, 3, lambda r: r)  # increasing
    with pytest.raises(ValueError, match="gamma"):
        masking_schedule(10, 3, lambda r: np.ones(2))
    assert masking_schedule(12, 4, lambda r: 1 - r) == Schedule.constant(12, 4)


def test_linear_schedule_sizes_grow_linearly():
    d, T = 55, 10  # d t(t+1)/(T(T+1)) is an integer: sizes are exactly 1..10
    assert linear_schedule(d, T).sizes == tuple(range(1, 11))
    s = linear_schedule(1000, 7).sizes
    assert all(b >= a for a, b in zip(s, s[1:]))


def test_round_cumulative():
    assert round_cumulative([0, 2, 5, 9], 9).sizes == (2, 3, 4)  # valid integers are kept
    assert round_cumulative([0, 0.4, 0.6, 3], 3).sizes == (1, 1, 1)  # pushed forward
    assert round_cumulative([0, 2.5, 5], 5).sizes == (3, 2)  # halves up
    assert round_cumulative([0, 5, 5, 5], 5).sizes == (3, 1, 1)  # room left for the last steps
    with pytest.raises(ValueError, match="at most d"):
        round_cumulative([0, 1, 2, 3], 2)
    with pytest.raises(ValueError, match="start at 0"):
        round_cumulative([1, 3], 3)
    with pytest.raises(ValueError, match="non-decreasing"):
        round_cumulative([0, 2, 1, 3], 3)


# -- grids -------------------------------------------------------------------------------------
def test_loglinear_grid_is_mdlm_alpha():
    g = loglinear_grid(5, eps=0.01)
    for j, t in enumerate(g.times):  # revealed fraction = alpha_s at s = 1 - j/N
        s = 1 - j / 5
        assert t == pytest.approx(1 - (1 - 0.01) * s, abs=1e-15)
    assert loglinear_grid(4, eps=0.0) == Grid.uniform(4)
    with pytest.raises(ValueError, match="eps"):
        loglinear_grid(4, eps=1.0)


@given(st.floats(0.01, 0.45), st.floats(0.55, 0.99), st.integers(1, 30))
def test_geometric_grid_steps_form(a, b, N):
    g = geometric_grid(a, b, steps=N)
    assert g.steps == N and g.times[0] == a and g.times[-1] == b
    psi = np.array([t / (1 - t) for t in g.times])
    rho = math.exp(math.log((b / (1 - b)) / (a / (1 - a))) / N) - 1  # W26 Corollary 1
    assert np.allclose(psi[1:] / psi[:-1], 1 + rho, rtol=1e-10)


@given(st.floats(0.01, 0.45), st.floats(0.55, 0.99), st.floats(0.05, 3.0))
def test_geometric_grid_rho_form_follows_the_recursion(a, b, rho):
    g = geometric_grid(a, b, rho=rho)
    psi_T = b / (1 - b)
    psi = a / (1 - a)
    ref = [a]
    while psi < psi_T * (1 - 1e-12):  # psi(t_{j+1}) = min{(1 + rho) psi(t_j), psi(T)}
        psi = min((1 + rho) * psi, psi_T)
        ref.append(psi / (1 + psi))
    ref[-1] = b
    assert np.allclose(g.times, ref, rtol=1e-10, atol=1e-14)
    assert g.steps == math.ceil(math.log(psi_T / (a / (1 - a))) / math.log1p(rho) - 1e-12)


def test_geometric_grid_arguments():
    with pytest.raises(ValueError, match="exactly one"):
        geometric_grid(0.1, 0.9)
    with pytest.raises(ValueError, match="0 < start < stop < 1"):
        geometric_grid(0.0, 0.9, steps=3)
    with pytest.raises(ValueError, match="rho"):
        geometric_grid(0.1, 0.9, rho=-0.5)


def test_geometric_schedule_card_analogue():
    for d, T in [(3, 3), (10, 4), (100, 12), (1000, 30)]:
        s = geometric_schedule(d, T)
        _valid(s, d, T)
        assert s.sizes[0] == 1 and s.sizes[-1] == 1  # exact first and last token
    s = geometric_schedule(1000, 30).sizes
    mid = s.index(max(s))
    assert all(x <= y for x, y in zip(s[1:mid], s[2 : mid + 1]))  # grows, then shrinks
    assert all(x >= y for x, y in zip(s[mid:-1], s[mid + 1 :]))
    with pytest.raises(ValueError, match="steps"):
        geometric_schedule(10, 2)


# -- square-root rule --------------------------------------------------------------------------
def test_sqrt_rule_linear_profile_gives_constant_sizes():
    d, T = 60, 7
    phi = np.linspace(2.0, 1.0, d)  # -phi' constant: k(s) constant
    s = sqrt_rule_schedule(phi, T)
    _valid(s, d, T)
    assert max(s.sizes) - min(s.sizes) <= 1


def test_sqrt_rule_is_near_optimal_when_d_over_T_is_large():
    """LZ25: the square-root rule is asymptotically optimal (d/T -> infinity)."""
    c = np.diff(markov_chain_entropy_coefficients([[0.95, 0.05], [0.1, 0.9]], 1000))
    for T in (10, 20):
        ratio = schedule_path_kl(c, sqrt_rule_schedule(c, T)) / schedule_path_kl(c, optimal_schedule(c, T))
        assert 1.0 <= ratio < 1.01
    power = (np.arange(1000) + 1.0) ** -0.5
    assert schedule_path_kl(power, sqrt_rule_schedule(power, 20)) < 1.02 * schedule_path_kl(
        power, optimal_schedule(power, 20)
    )


def test_sqrt_rule_flat_tail_reveals_the_rest_at_once():
    phi = np.zeros(12)
    phi[0] = math.log(2)  # repeated bit: one token determines the others
    s = sqrt_rule_schedule(Profile(phi), 4)
    assert s.sizes == (1, 1, 1, 9)
    assert schedule_path_kl(phi, s) == 0.0


def test_sqrt_rule_arguments():
    with pytest.raises(ValueError, match="increases"):
        sqrt_rule_schedule([1.0, 0.5, 0.7], 2)
    with pytest.raises(ValueError, match="constant"):
        sqrt_rule_schedule([0.3, 0.3, 0.3], 2)
    with pytest.raises(ValueError, match="steps"):
        sqrt_rule_schedule([0.3, 0.2], 3)
    assert sqrt_rule_schedule([0.3, 0.3 + 1e-17, 0.1], 2).d == 3  # rounding noise is tolerated


# -- block plans -------------------------------------------------------------------------------
def _dus_round(offset, R, a):
    """Round of an offset: 1 for multiples of a^(R-1), else R - (a-adic valuation)."""
    if offset % a ** (R - 1) == 0:
        return 1
    v = 0
    while offset % a ** (v + 1) == 0:
        v += 1
    return R - v


@pytest.mark.parametrize("B,a", [(8, 2), (6, 2), (9, 3), (10, 3), (16, 4), (5, 5), (2, 2), (1, 2), (7, 7)])
def test_dilated_rounds(B, a):
    plan = dilated_plan(B, B, a)
    R = max(1, math.ceil(round(math.log(B, a), 12))) if B > 1 else 1
    assert len(plan.blocks) == R
    for r, blk in enumerate(plan.blocks, start=1):
        assert blk == tuple(o for o in range(B) if _dus_round(o, R, a) == r)
        assert plan.sizes[r - 1] == (len(blk),)


def test_dilated_example_and_blocks():
    assert dilated_plan(8, 8).blocks == ((0, 4), (2, 6), (1, 3, 5, 7))
    plan = dilated_plan(10, 4)  # blocks [0,4), [4,8), [8,10); a block of 2 takes ceil(log2 2) = 1 round
    assert plan.blocks == ((0, 2), (1, 3), (4, 6), (5, 7), (8, 9))
    assert plan.schedule.sizes == (2, 2, 2, 2, 2)
    assert plan.step_masks[0] == 0b101


def test_semi_autoregressive_plan():
    plan = semi_autoregressive_plan(10, 4, 3)
    assert plan.blocks == ((0, 1, 2, 3), (4, 5, 6, 7), (8, 9))
    assert plan.sizes == ((1, 1, 2), (1, 1, 2), (1, 1))
    assert plan.step_blocks[3] == (4, 5, 6, 7)
    with pytest.raises(ValueError, match="steps_per_block"):
        semi_autoregressive_plan(10, 4, 5)
    with pytest.raises(ValueError, match="block_length"):
        semi_autoregressive_plan(10, 0, 1)


def test_block_plan_validation():
    with pytest.raises(ValueError, match="partition"):
        BlockPlan([(0, 1), (1, 2)], [(2,), (2,)])
    with pytest.raises(ValueError, match="sum to"):
        BlockPlan([(0, 1)], [(1,)])
    with pytest.raises(ValueError, match="empty"):
        BlockPlan([(), (0,)], [(), (1,)])
    with pytest.raises(ValueError, match="one composition per block"):
        BlockPlan([(0,)], [])


# -- conversions and JSON ----------------------------------------------------------------------
@given(compositions())
def test_schedule_grid_schedule_round_trip(sched):
    g = schedule_to_grid(sched)
    assert g.times[0] == 0.0 and g.times[-1] == 1.0
    assert np.allclose(np.diff(g.times) * sched.d, sched.sizes, atol=1e-12)
    assert grid_to_schedule(g, sched.d) == sched


@given(compositions())
def test_grid_on_multiples_of_one_over_d_round_trips(sched):
    d = sched.d
    g = Grid(np.array(sched.cumulative) / d)
    back = schedule_to_grid(grid_to_schedule(g, d))
    assert np.allclose(back.times, g.times, atol=1e-15)


def test_grid_to_schedule_exact_boundary_tokens():
    g = geometric_grid(0.1, 0.9, steps=3)  # d = 20: 2 init tokens, 2 completion tokens
    s = grid_to_schedule(g, 20)
    _valid(s, 20, 2 + 3 + 2)
    assert s.sizes[:2] == (1, 1) and s.sizes[-2:] == (1, 1)
    counts = s.cumulative[2:-2]
    assert counts == tuple(int(math.floor(20 * t + 0.5)) for t in g.times)
    with pytest.raises(ValueError, match="coarser grid"):
        grid_to_schedule(Grid.uniform(30), 10)


def test_json_round_trips():
    s = Schedule((3, 1, 2))
    assert Schedule.from_json(s.to_json()) == s
    assert Schedule.from_json("[3, 1, 2]") == s
    g = geometric_grid(0.1, 0.9, steps=5)
    assert Grid.from_json(g.to_json()) == g  # json keeps float64 exactly (repr round trip)
    assert json.loads(g.to_json()) == {"times": list(g.times)}
    plan = semi_autoregressive_plan(7, 3, 2)
    assert json.loads(plan.to_json())["blocks"][0] == {"positions": [0, 1, 2], "sizes": [1, 2]}
    with pytest.raises(ValueError, match="JSON"):
        Schedule.from_json("{not json")
    with pytest.raises(ValueError, match="sizes"):
        Schedule.from_json('{"times": [0, 1]}')
    with pytest.raises(ValueError, match="at least one token"):
        Schedule.from_json("[2, 0]")
    with pytest.raises(ValueError, match="JSON string"):
        Grid.from_json([0.0, 1.0])


def test_family_arguments_are_validated():
    with pytest.raises(ValueError, match="steps"):
        linear_schedule(5, 6)
    with pytest.raises(ValueError, match="d"):
        cosine_schedule(0, 1)
    with pytest.raises(ValueError, match="integer"):
        cosine_schedule(5.0, 2)
    with pytest.raises(ValueError, match="base"):
        dilated_plan(8, 8, base=1)
    with pytest.raises(ValueError, match="block"):
        dilated_plan(8, 9)


def test_grid_to_schedule_when_boundary_rounding_overtakes_interior_times():
    # m_0 = round(10 * 0.06) = 1 > 10 * 0.07: the interior target must not fall below it
    from mdmtheory.schedules import grid_to_schedule

    for times in [(0.06, 0.07, 1.0), (0.0, 0.93, 0.94)]:
        s = grid_to_schedule(mt.Grid(times), 10)
        assert s.d == 10 and min(s.sizes) >= 1 and s.steps == 3


def test_sqrt_rule_rejects_bad_tolerance():
    from mdmtheory.optimal import sqrt_rule_schedule

    for tol in (float("nan"), -1.0, "x"):
        with pytest.raises(ValueError, match="^tol:"):
            sqrt_rule_schedule([0.1, 0.5, 0.2, 0.0], 2, tol=tol)


def test_geometric_grid_from_a_subnormal_start_has_finite_steps():
    """psi(stop)/psi(start) overflows for a subnormal start: the log-odds span is taken as a
    difference of logs (found by the slow fuzz run)."""
    g = geometric_grid(7.257075582243559e-308, 0.9375, steps=1)
    assert g.times == (7.257075582243559e-308, 0.9375)
    g = geometric_grid(1e-300, 0.5, steps=3)
    lam = np.log(np.asarray(g.times) / (1 - np.asarray(g.times)))
    np.testing.assert_allclose(np.diff(lam), np.log(1.0 / 1e-300) / 3, rtol=1e-12)  # equal log-odds steps
