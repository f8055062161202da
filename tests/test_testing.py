"""Tests of mdmtheory.testing: the strategies produce valid and diverse objects.

Validity is checked against the definitions (tables non-negative and normalized within
1e-9, schedules summing to d, grids strictly increasing in [0, 1], profiles non-increasing),
diversity by collecting a few hundred draws and counting features that the proofs' tests
rely on: exact zeros, entries ~1e-12, several (d, K), family laws (product laws,
single-symbol diagonals, parity), boundary and interior grids.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from mdmtheory import Grid, Joint, Profile, Schedule
from mdmtheory.laws import NORMALIZATION_TOL
from mdmtheory.testing import (
    grids,
    intervals,
    joint_and_grid,
    joint_and_schedule,
    joints,
    profiles,
    schedules,
)

N_DRAWS = 300


def collect(strategy, n=N_DRAWS):
    """Draw n examples deterministically (derandomized hypothesis run)."""
    out = []

    @settings(max_examples=n, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(x):
        out.append(x)

    run()
    return out


def is_product(table):
    """Whether the table equals the outer product of its one-position marginals."""
    d = table.ndim
    margs = [table.sum(axis=tuple(k for k in range(d) if k != i)) for i in range(d)]
    outer = margs[0]
    for m in margs[1:]:
        outer = np.multiply.outer(outer, m)
    return np.allclose(outer, table, atol=1e-14, rtol=1e-10)


def is_diagonal(table):
    """Support only on constant sequences (the repeated-symbol family)."""
    K, d = table.shape[0], table.ndim
    off = table.copy()
    for k in range(K):
        off[(k,) * d] = 0.0
    return bool(np.all(off == 0.0))


def is_parity(table):
    if table.shape[0] != 2 or table.ndim < 2:
        return False
    even = np.indices(table.shape).sum(axis=0) % 2 == 0
    return bool(np.allclose(table, np.where(even, 2.0 ** -(table.ndim - 1), 0.0), rtol=0, atol=1e-15))


@pytest.fixture(scope="module")
def joint_draws():
    return collect(joints(d=(2, 4), K=(2, 3)))


def test_joints_are_valid(joint_draws):
    for p in joint_draws:
        assert isinstance(p, Joint) and p.lost == 0.0
        t = p.table
        assert t.dtype == np.float64 and np.all(np.isfinite(t)) and np.all(t >= 0)
        assert abs(t.sum() - 1.0) <= NORMALIZATION_TOL
        assert 2 <= p.d <= 4 and 2 <= p.K <= 3 and p.K**p.d <= 256


def test_joints_are_diverse(joint_draws):
    shapes = {(p.d, p.K) for p in joint_draws}
    assert len(shapes) >= 5, shapes  # (2,2) (2,3) (3,2) (3,3) (4,2) (4,3): 4**3 = 81 <= 256
    with_zeros = sum(bool(np.any(p.table == 0.0)) for p in joint_draws)
    tiny = sum(bool(np.any((p.table > 0) & (p.table < 1e-10))) for p in joint_draws)
    full_support = sum(bool(np.all(p.table > 0)) for p in joint_draws)
    products = sum(is_product(p.table) for p in joint_draws)
    diagonal = sum(is_diagonal(p.table) for p in joint_draws)
    parity = sum(is_parity(p.table) for p in joint_draws)
    counts = dict(zeros=with_zeros, tiny=tiny, full=full_support, products=products,
                  diagonal=diagonal, parity=parity)
    assert with_zeros >= 20 and tiny >= 10 and full_support >= 20, counts
    assert products >= 5 and diagonal >= 3 and parity >= 1, counts
    # not all the same law
    assert len({p.table.tobytes() for p in joint_draws}) >= N_DRAWS // 2


def test_joint_options_are_respected():
    for p in collect(joints(d=3, K=2, allow_zeros=False, near_degenerate=False, families=False), 100):
        assert p.d == 3 and p.K == 2
        assert p.table.min() >= 1e-3 / 8  # entries in [1e-3, 1], 8 of them
    for p in collect(joints(d=(1, 6), K=(2, 5), max_outcomes=64), 100):
        assert p.K**p.d <= 64


def test_joint_and_schedule_fit():
    draws = collect(joint_and_schedule(d=(2, 4), K=2), 200)
    for p, s in draws:
        assert isinstance(s, Schedule) and sum(s.sizes) == p.d and min(s.sizes) >= 1
    assert {s.steps for _, s in draws} >= {1, 2, 3, 4}
    for p, s in collect(joint_and_schedule(d=4, K=2, steps=2), 50):
        assert s.steps == 2


@pytest.mark.parametrize("d", [1, 2, 5, 7])
def test_schedules_cover_all_compositions_of_small_d(d):
    draws = collect(schedules(d), 400)
    for s in draws:
        assert sum(s.sizes) == d and all(k >= 1 for k in s.sizes)
    seen = {s.sizes for s in draws}
    if d <= 5:  # 2**(d-1) compositions: every one appears
        assert len(seen) == 2 ** (d - 1)
    else:
        assert len(seen) >= 40


def test_grids_valid_and_diverse():
    draws = collect(grids(steps=(1, 4)), 400)
    starts = ends = plain = 0
    for g in draws:
        assert isinstance(g, Grid)
        t = np.array(g.times)
        assert 0.0 <= t[0] and t[-1] <= 1.0 and np.all(np.diff(t) >= 1e-3 * (1 - 1e-12))
        starts += t[0] > 0
        ends += t[-1] < 1
        plain += t[0] == 0.0 and t[-1] == 1.0
    assert starts >= 50 and ends >= 50 and plain >= 50, (starts, ends, plain)
    assert {g.steps for g in draws} == {1, 2, 3, 4}
    for g in collect(grids(steps=2, allow_boundary=False), 100):
        assert g.times[0] == 0.0 and g.times[-1] == 1.0 and g.steps == 2
    for g in collect(grids(steps=(1, 3), interior=True), 100):
        assert g.times[0] >= 1e-3 and g.times[-1] <= 1 - 1e-3 + 1e-12


def test_intervals():
    draws = collect(intervals(), 200)
    for a, b in draws:
        assert 0 < a < b < 1
    widths = [b - a for a, b in draws]
    assert min(widths) < 0.05 and max(widths) > 0.5


def test_profiles():
    draws = collect(profiles((1, 6)), 300)
    ties = 0
    for prof in draws:
        assert isinstance(prof, Profile)
        v = prof.values
        assert np.all(v >= 0) and np.all(np.diff(v) <= 0)
        ties += bool(np.any(np.diff(v) == 0)) and v.shape[0] > 1
    assert ties >= 20 and {p.d for p in draws} == set(range(1, 7))
    free = collect(profiles(5, monotone=False), 200)
    assert all(np.all(p.values >= 0) for p in free)
    assert sum(not p.is_nonincreasing(tol=0.0) for p in free) >= 50


def test_joint_and_grid():
    for p, g in collect(joint_and_grid(d=3, K=2, steps=2), 50):
        assert p.d == 3 and g.steps == 2


@pytest.mark.parametrize(
    "make",
    [
        lambda: joints(d=0),
        lambda: joints(d=(3, 2)),
        lambda: joints(K=1),
        lambda: joints(d=8, K=3, max_outcomes=100),
        lambda: joints(d="x"),
        lambda: schedules(0),
        lambda: schedules(3, steps=4),
        lambda: grids(steps=0),
        lambda: grids(min_gap=0.0),
        lambda: grids(steps=3, min_gap=0.3),
        lambda: profiles(0),
    ],
)
def test_bad_arguments_raise_valueerror(make):
    with pytest.raises(ValueError):
        make()


def test_import_error_message_names_the_extra(monkeypatch):
    import builtins
    import importlib
    import sys

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "hypothesis" or name.startswith("hypothesis."):
            raise ImportError("no hypothesis")
        return real_import(name, *args, **kwargs)

    saved = sys.modules.pop("mdmtheory.testing")
    monkeypatch.setattr(builtins, "__import__", fake_import)
    try:
        with pytest.raises(ImportError, match=r"pip install 'mdmtheory\[test\]'"):
            importlib.import_module("mdmtheory.testing")
    finally:
        monkeypatch.setattr(builtins, "__import__", real_import)
        sys.modules["mdmtheory.testing"] = saved

