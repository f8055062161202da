"""The 2026 bounds (issue 20 §4) against brute force: PB25 (ParallelBench's conditional total
correlation), ZYB26 (reverse KL, verification cost), ZC26 (randomized sizes), DHW26 (effective
total correlation <= d log K). docs/theory.md §2–3 says how each paper was read.

Every reference is computed here from the table by enumeration (tests/reference.py): subset
entropies, the output law of a fixed-partition factorized sampler point by point, the
random-order law as the average over permutations, the rejection envelope by loops over the
outcomes, the gain polynomial from the brute-force profile and scipy quadrature.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.special import comb, xlogy

import mdmtheory as mt
from mdmtheory import bounds as B
from mdmtheory.testing import joints
from reference import brute_profile, compositions, subset_entropy

SETTINGS = settings(max_examples=25, deadline=None)


# -- brute-force references --------------------------------------------------------------
def cond_tc(table, block, given=()):
    """E_{x_A} [sum_{i in B} H(X_i | x_A) - H(X_B | x_A)] from subset entropies."""
    A = tuple(sorted(given))
    HA = subset_entropy(table, A)
    s = sum(subset_entropy(table, tuple(sorted(A + (i,)))) - HA for i in block)
    return s - (subset_entropy(table, tuple(sorted(A + tuple(block)))) - HA)


def marg_at(table, S, x):
    """P(X_S = x_S) by summing the table."""
    if not S:
        return 1.0
    drop = tuple(k for k in range(table.ndim) if k not in S)
    m = table.sum(axis=drop) if drop else table
    return float(m[tuple(x[k] for k in sorted(S))])


def partition_law(table, partition, cond=None):
    """q(x) = prod_t prod_{i in S_t} r(x_i | x_{S_<t}), r the exact one-token conditionals
    (or ``cond(t, i, x) -> prob``), for every outcome x."""
    d, K = table.ndim, table.shape[0]
    q = np.zeros(table.shape)
    for x in itertools.product(range(K), repeat=d):
        val, A = 1.0, ()
        for t, S in enumerate(partition):
            for i in S:
                if cond is not None:
                    val *= cond(t, i, x)
                else:
                    den = marg_at(table, A, x)
                    val *= marg_at(table, tuple(sorted(A + (i,))), x) / den if den > 0 else 0.0
            A = tuple(sorted(A + tuple(S)))
        q[x] = val
    return q


def kl_ref(P, Q):
    """KL(P || Q) by summation (inf when P puts mass where Q has none)."""
    if np.any((P > 0) & (Q == 0)):
        return math.inf
    m = P > 0
    return float(np.sum(xlogy(P[m], P[m]) - xlogy(P[m], Q[m])))


def chunks(order, sizes):
    out, s = [], 0
    for k in sizes:
        out.append(tuple(order[s : s + k]))
        s += k
    return out


def random_order_law(table, sizes):
    """The random-order sampler's output law: the average over the d! orders of the
    fixed-partition laws (positions chosen uniformly, sizes fixed)."""
    perms = list(itertools.permutations(range(table.ndim)))
    return sum(partition_law(table, chunks(o, sizes)) for o in perms) / len(perms)


def ordered_partitions(d, T):
    """Every ordered partition of range(d) into T non-empty sets (as step labels)."""
    for lab in itertools.product(range(T), repeat=d):
        if len(set(lab)) == T:
            yield [tuple(i for i in range(d) if lab[i] == t) for t in range(T)]


def scale(p):
    return p.d * math.log(p.K)


# -- PB25: ParallelBench's conditional total correlation -----------------------------------------
@SETTINGS
@given(joints(d=(2, 4), K=(2, 3), max_outcomes=81), st.data())
def test_pb25_partition_bound_is_the_fixed_partition_kl_and_a_min_over_conditionals(p, data):
    d = p.d
    order = data.draw(st.permutations(range(d)))
    sizes = data.draw(st.sampled_from(list(compositions(d))))
    part = chunks(order, sizes)
    ref = sum(cond_tc(p.table, S, sum(part[:t], ())) for t, S in enumerate(part))
    b = B.pb25_partition_lower(p, part)
    assert b.kind == B.LOWER and b.status == B.SUMMARY and b.bounds == "kl"
    assert b.value == pytest.approx(ref, abs=1e-10)
    # equality with the exact conditionals (chain rule), computed point by point
    kl_exact = kl_ref(p.table, partition_law(p.table, part))
    assert b.value == pytest.approx(kl_exact, abs=1e-9)
    # any other one-token conditionals do no better (the min over theta)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    r = rng.dirichlet(np.ones(p.K), size=(len(part), d, p.K**d))
    flat = lambda x: int(np.ravel_multi_index(x, p.table.shape))
    q = partition_law(p.table, part, cond=lambda t, i, x: r[t, i, flat(tuple(x[k] if k in sum(part[:t], ()) else 0 for k in range(d)))][x[i]])
    assert kl_ref(p.table, q) >= b.value - 1e-9


@SETTINGS
@given(joints(d=(2, 4), K=(2, 3), max_outcomes=81), st.data())
def test_pb25_left_to_right_row_is_an_equality(p, data):
    sizes = data.draw(st.sampled_from(list(compositions(p.d))))
    table = mt.compare(p, mt.Schedule(sizes), "left_to_right")
    row = table.row("pb25_partition_lower")
    ref = kl_ref(p.table, partition_law(p.table, chunks(tuple(range(p.d)), sizes)))
    assert row.exact == pytest.approx(ref, abs=1e-9) and row.value == pytest.approx(ref, abs=1e-9)
    assert row.holds and row.status == "paper, via summary"


@SETTINGS
@given(joints(d=(2, 4), K=(2, 3), max_outcomes=81), st.data())
def test_pb25_schedule_lower_is_the_min_over_orders_below_the_path_kl(p, data):
    sizes = data.draw(st.sampled_from(list(compositions(p.d))))
    per_order = [sum(cond_tc(p.table, S, sum(part[:t], ())) for t, S in enumerate(part))
                 for part in (chunks(o, sizes) for o in itertools.permutations(range(p.d)))]
    b = B.pb25_schedule_lower(p, mt.Schedule(sizes))
    assert b.value == pytest.approx(min(per_order), abs=1e-10)
    path = float(np.mean(per_order))  # the path KL: the KL given the order, averaged
    assert path == pytest.approx(mt.path_kl(p, mt.Schedule(sizes)), abs=1e-9)
    assert b.holds(path, scale=scale(p))
    row = mt.compare(p, mt.Schedule(sizes)).row("pb25_schedule_lower")
    assert row.holds and row.exact == pytest.approx(path, abs=1e-9)


@SETTINGS
@given(joints(d=(2, 5), K=2, max_outcomes=32))
def test_pb25_optimal_lower_by_enumeration_and_non_increasing(p):
    d = p.d
    vals = []
    for T in range(1, d + 1):
        ref = min(sum(cond_tc(p.table, S, sum(part[:t], ())) for t, S in enumerate(part)) for part in ordered_partitions(d, T))
        v = B.pb25_optimal_lower(p, T).value
        assert v == pytest.approx(ref, abs=1e-10)
        vals.append(v)
    assert vals[0] == pytest.approx(mt.total_correlation(p), abs=1e-10) and vals[-1] == pytest.approx(0.0, abs=1e-10)
    assert all(a >= b - 1e-12 for a, b in zip(vals, vals[1:]))  # L*_T >= L*_{T+1} (PB25, via summaries)


def test_random_order_output_kl_can_sit_below_every_fixed_partition():
    """PB25's bound is for a fixed partition; the random-order sampler's output law is a
    mixture over orders and can sit well below L*_T (d = 3, sizes (2, 1): 0.00337 < 0.0260).
    Not a counterexample to PB25: a check that compare reports PB25 against the path KL."""
    table = np.random.default_rng(168).dirichlet(np.ones(8)).reshape(2, 2, 2)
    p = mt.Joint(table)
    kl = kl_ref(table, random_order_law(table, (2, 1)))
    lstar = min(sum(cond_tc(table, S, sum(part[:t], ())) for t, S in enumerate(part)) for part in ordered_partitions(3, 2))
    assert kl == pytest.approx(0.0033707, abs=1e-6) and lstar == pytest.approx(0.0260217, abs=1e-6)
    assert kl < 0.2 * lstar
    assert B.pb25_optimal_lower(p, 2).value == pytest.approx(lstar, abs=1e-12)
    assert mt.compare(p, mt.Schedule((2, 1))).kl == pytest.approx(kl, abs=1e-12)


# -- ZYB26: reverse KL and verification cost ---------------------------------------------
@SETTINGS
@given(joints(d=(2, 4), K=(2, 3), max_outcomes=81), st.data())
def test_reverse_kl_row_against_the_enumerated_random_order_law(p, data):
    sizes = data.draw(st.sampled_from(list(compositions(p.d))))
    q = random_order_law(p.table, sizes)  # sub-normalized where a step leaves p's support
    row = mt.compare(p, mt.Schedule(sizes)).row("reverse_kl")
    lost = 1.0 - q.sum()  # mass drawn into contexts x_A with p(x_A) = 0: off p's support
    ref = math.inf if lost > 1e-12 else kl_ref(q, p.table)
    if math.isinf(ref):
        assert math.isinf(row.value)
    else:
        assert row.value == pytest.approx(ref, rel=1e-9, abs=1e-10)
    assert row.kind == "exact" and row.holds is None


@pytest.mark.parametrize("K", [2, 3])
def test_reverse_kl_of_parallel_decoding_is_unbounded(K):
    """ZYB26 claim (2): one parallel step on a noisy copy (X_1 = X_2 w.p. 1 - eps) has
    forward KL = TC <= log K but reverse KL -> inf as eps -> 0 (closed form below)."""
    prev = 0.0
    for eps in (1e-2, 1e-4, 1e-8):
        t = np.full((K, K), eps / (K * (K - 1)))
        np.fill_diagonal(t, (1 - eps) / K)
        table = mt.compare(mt.Joint(t), mt.Schedule([2]))
        closed = (1 / K) * math.log((1 / K**2) / ((1 - eps) / K)) + (1 - 1 / K) * math.log((1 / K**2) / (eps / (K * (K - 1))))
        assert table.row("reverse_kl").value == pytest.approx(closed, rel=1e-9)
        assert table.kl <= math.log(K) and table.row("reverse_kl").value > prev + 1.0
        prev = table.row("reverse_kl").value
    exact_copy = np.eye(K) / K  # eps = 0: the product puts mass off the support
    assert math.isinf(mt.compare(mt.Joint(exact_copy), mt.Schedule([2])).row("reverse_kl").value)


def rejection_ref(table, block, given):
    d, K = table.ndim, table.shape[0]
    total = 0.0
    for xa in itertools.product(range(K), repeat=len(given)):
        xfull = [0] * d
        for k, v in zip(given, xa):
            xfull[k] = v
        pa = marg_at(table, tuple(given), xfull)
        if pa == 0:
            continue
        best = 0.0
        for xb in itertools.product(range(K), repeat=len(block)):
            for k, v in zip(block, xb):
                xfull[k] = v
            pab = marg_at(table, tuple(sorted(given + block)), xfull) / pa
            qb = np.prod([marg_at(table, tuple(sorted(given + (i,))), xfull) / pa for i in block])
            if qb > 0:
                best = max(best, pab / qb)
        total += pa * best
    return total


@SETTINGS
@given(joints(d=(2, 4), K=(2, 3), max_outcomes=81), st.data())
def test_rejection_cost_by_enumeration_and_zyb26_verification_lower(p, data):
    d = p.d
    order = data.draw(st.permutations(range(d)))
    nb = data.draw(st.integers(1, d))
    na = data.draw(st.integers(0, d - nb))
    block, given_ = tuple(sorted(order[:nb])), tuple(sorted(order[nb : nb + na]))
    ref = rejection_ref(p.table, block, given_)
    assert B.rejection_cost(p, block, given_) == pytest.approx(ref, rel=1e-9)
    b = B.zyb26_verification_lower(p, block, given_)
    assert b.value == pytest.approx(math.exp(cond_tc(p.table, block, given_)), rel=1e-9, abs=1e-12)
    assert b.holds(ref, scale=1.0) and b.status == B.OUR_READING
    if nb == 1:
        assert ref == pytest.approx(1.0)


@pytest.mark.parametrize("d,K", [(2, 2), (3, 2), (3, 3), (4, 2)])
def test_verification_lower_is_attained_by_the_repeated_symbol(d, K):
    p = mt.families.repeated(d, K)
    assert B.rejection_cost(p) == pytest.approx(K ** (d - 1), rel=1e-12)
    assert B.zyb26_verification_lower(p).value == pytest.approx(K ** (d - 1), rel=1e-12)


def test_rejection_cost_beyond_float64_is_inf_without_warnings():
    """Regression (found by tests/test_fuzz.py): entries ~1e-200 put the envelope at
    1e-200 / (3e-200 * 2e-200 * 1e-200) ~ 1.7e399; the ratio in place overflowed with a
    RuntimeWarning. In logs it is inf, silently only in the documented sense."""
    t = np.array([[[0, 1e-200], [1e-200, 1e-200]], [[0, 1.0], [0, 0]]])
    p = mt.Joint(t)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isinf(B.rejection_cost(p))
        assert mt.compare(p, mt.Grid((0.0, 0.5, 1.0))).row("zyb26_verification_lower").holds
    tiny = mt.Joint(np.array([[0.5, 1e-300], [1e-300, 0.5]]))  # M = 0.5 / 0.25 = 2, finite in logs
    assert B.rejection_cost(tiny) == pytest.approx(2.0, rel=1e-12)


# -- ZC26: randomized sizes --------------------------------------------------------------
def path_kl_ref(phi, sizes):
    s, out = 0, 0.0
    for k in sizes:
        out += k * phi[s] - phi[s : s + k].sum()
        s += k
    return out


@SETTINGS
@given(joints(d=(2, 5), K=2, max_outcomes=32))
def test_zc26_rates_and_the_uniform_random_size_law(p):
    phi = brute_profile(p.table)
    S = sum(subset_entropy(p.table, (i,)) for i in range(p.d))
    Hx = subset_entropy(p.table, tuple(range(p.d)))
    tc, dtc = S - Hx, Hx - p.d * phi[-1]
    for K in range(1, p.d + 1):
        a, b = B.zc26_rates(p, K)
        assert a.value == pytest.approx(tc / K, abs=1e-10) and b.value == pytest.approx(dtc / K, abs=1e-10)
        assert a.kind == b.kind == B.ASYMPTOTIC and a.holds(0.0) is None and a.status == B.OUR_READING
        comps = [c for c in compositions(p.d) if len(c) == K]  # uniform law on compositions into K parts
        expected = float(np.mean([path_kl_ref(phi, c) for c in comps]))
        assert expected >= -1e-12
        if K == 1:  # one step: every law on sizes gives KL = path KL = TC = the TC rate
            assert expected == pytest.approx(a.value, abs=1e-10)


def test_zc26_dtc_rate_needs_more_than_a_constant_at_one_step():
    """At K = 1 the KL is TC whatever the size law; for the repeated bit TC/DTC = d - 1, so
    the DTC rate read at constant 1 (no log factors) fails by the factor d - 1 there: the
    tilde hides more than a constant, or the theorem restricts K (ZC26's text not read)."""
    for d in (3, 4, 5):
        p = mt.families.repeated(d, 2)
        _, dtc_rate = B.zc26_rates(p, 1)
        kl = mt.compare(p, mt.Schedule([d])).kl
        assert kl == pytest.approx((d - 1) * math.log(2), abs=1e-12)
        assert dtc_rate.value == pytest.approx(math.log(2), abs=1e-12)
        assert kl / dtc_rate.value == pytest.approx(d - 1, rel=1e-12)


# -- DHW26: effective total correlation <= d log K ---------------------------------------
def dhw_ref(table):
    d = table.ndim
    phi = brute_profile(table)
    hcard = d * (phi[0] - phi)  # h^card_j = d (phi_0 - phi_j)

    def hprime(t):
        return sum(comb(d - 2, j) * (hcard[j + 1] - hcard[j]) * (d - 1) * t**j * (1 - t) ** (d - 2 - j) for j in range(d - 1))

    c = math.exp(-1.0)
    left = integrate.quad(lambda t: t * hprime(t), 0.0, c, epsabs=1e-13)[0]
    right = integrate.quad(lambda t: -t * math.log(t) * hprime(t), c, 1.0, epsabs=1e-13)[0]
    return left + right


@SETTINGS
@given(joints(d=(2, 4), K=(2, 3), max_outcomes=81))
def test_dhw26_dimension_bound(p):
    ref = dhw_ref(p.table)
    b = B.dhw26_dimension_bound(p)
    assert b.value == pytest.approx(p.d * math.log(p.K)) and b.status == B.PAPER
    assert b.holds(ref, scale=scale(p))
    assert ref == pytest.approx(mt.ugc.effective_total_correlation(p), abs=1e-9)
    assert compare_row(p, "dhw26_dimension").holds


def compare_row(p, name):
    return mt.compare(p, mt.Schedule([p.d])).row(name)


# -- compare and argument errors ------------------------------------------------------------------
def test_compare_lists_the_2026_rows_where_they_apply():
    p = mt.families.noisy_repeated_bit(4, 0.1)
    rnd = mt.compare(p, mt.Schedule([2, 2]))
    ltr = mt.compare(p, mt.Schedule([1, 3]), "left_to_right")
    grid = mt.compare(p, mt.Grid([0.2, 0.5, 0.8]))
    law_rows = {"dhw26_dimension": "paper", "zyb26_verification_lower": "our reading"}
    for t in (rnd, ltr, grid):
        assert t.names[:3] == ("kl", "path_kl", "reverse_kl") and t.all_hold
        assert {n: t.row(n).status for n in law_rows} == law_rows
    assert rnd.row("pb25_schedule_lower").status == "paper, via summary" and "pb25_partition_lower" not in rnd.names
    assert ltr.row("pb25_partition_lower").slack == pytest.approx(1.0) and "pb25_schedule_lower" not in ltr.names
    assert not any(n.startswith("pb25") or n.startswith("zc26") for n in grid.names)


@pytest.mark.parametrize(
    "call,msg",
    [
        (lambda p: B.pb25_partition_lower(p, [(0, 1), (1, 2)]), "partition: the sets must be disjoint"),
        (lambda p: B.pb25_partition_lower(p, [(0, 1)]), "partition: the sets must cover"),
        (lambda p: B.pb25_partition_lower(p, [(0, 1, 2), ()]), "partition: every step"),
        (lambda p: B.pb25_optimal_lower(p, 4), "steps:"),
        (lambda p: B.pb25_optimal_lower(mt.information_profile(p), 2), "p:"),
        (lambda p: B.conditional_total_correlation(p, (), ()), "block:"),
        (lambda p: B.rejection_cost(p, (0, 1), (1,)), "given:"),
        (lambda p: B.zc26_rates(p, 0), "steps:"),
        (lambda p: B.zc26_rates(p, 4), "steps:"),
        (lambda p: B.dhw26_dimension_bound(mt.information_profile(p)), "p:"),
        (lambda p: B.pb25_optimal_lower(mt.Joint(np.full((2,) * 13, 2.0**-13)), 2), "p: the minimum over partitions"),
    ],
)
def test_2026_bounds_refuse_bad_arguments(call, msg):
    p = mt.families.noisy_repeated_bit(3, 0.2)
    with pytest.raises(ValueError, match=msg.replace("(", r"\(")):
        call(p)


def test_bounds_package_exports_every_public_function_of_its_modules():
    """The split of mdmtheory/bounds.py into one module per source keeps one namespace:
    every public function or class defined in a module of the package is in
    mdmtheory.bounds.__all__ and is the same object there; mt.compare is bounds.compare."""
    import importlib
    import inspect
    import pkgutil

    import mdmtheory.bounds as pkg

    mods = [m.name for m in pkgutil.iter_modules(pkg.__path__)]
    assert {"_core", "lc25", "w26", "dhw26", "zc26", "pb25", "zyb26", "derived", "comparison"} <= set(mods)
    for name in mods:
        mod = importlib.import_module(f"mdmtheory.bounds.{name}")
        for attr, obj in vars(mod).items():
            if attr.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)) or obj.__module__ != mod.__name__:
                continue
            assert attr in pkg.__all__, f"{name}.{attr} is not exported"
            assert getattr(pkg, attr) is obj
    assert all(hasattr(pkg, n) for n in pkg.__all__)
    assert mt.compare is pkg.compare and callable(pkg.compare)
