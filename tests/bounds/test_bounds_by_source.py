"""The 2026 bounds (issue 20 §4) against brute force: PB25 (ParallelBench's conditional total
correlation; Theorems 1-3 and Lemma 1 as read in the preprint, places in mdmtheory/bounds/pb25.py), ZYB26 (reverse KL, verification cost), ZC26 (randomized sizes), DHW26 (effective
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
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.special import comb, xlogy

import mdmtheory as mt
from mdmtheory import bounds as B
from mdmtheory.testing import joints
from reference import brute_profile, compositions, profile_path_kl, subset_entropy

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
    assert b.kind == B.LOWER and b.status == B.PAPER and b.bounds == "kl"
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
    try:
        table = mt.compare(p, mt.Schedule(sizes), "left_to_right")
    except ValueError as exc:  # the engine refuses a sampler law that underflows float64 (documented)
        assert str(exc).startswith("p: the sampler law underflows"), exc
        assume(False)
    row = table.row("pb25_partition_lower")
    ref = kl_ref(p.table, partition_law(p.table, chunks(tuple(range(p.d)), sizes)))
    assert row.exact == pytest.approx(ref, abs=1e-9) and row.value == pytest.approx(ref, abs=1e-9)
    assert row.holds and row.status == "paper"


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
    assert vals[0] == pytest.approx(mt.information.total_correlation(p), abs=1e-10) and vals[-1] == pytest.approx(0.0, abs=1e-10)
    assert all(a >= b - 1e-12 for a, b in zip(vals, vals[1:]))  # L*_T >= L*_{T+1} (PB25 Theorem 2)


def prompt_tables(table, G):
    """(p(x_G), p(x_R | x_G) as an array over R) for every x_G with p(x_G) > 0, R in order."""
    d, K = table.ndim, table.shape[0]
    for v in itertools.product(range(K), repeat=len(G)):
        idx = [slice(None)] * d
        for i, a in zip(G, v):
            idx[i] = a
        sub = table[tuple(idx)]
        w = float(sub.sum())
        if w > 0:
            yield w, sub / w


def partitions_of(positions, T):
    """Every ordered partition of ``positions`` into T non-empty sets."""
    positions = tuple(positions)
    for lab in itertools.product(range(T), repeat=len(positions)):
        if len(set(lab)) == T:
            yield [tuple(positions[k] for k in range(len(positions)) if lab[k] == t) for t in range(T)]


def lt_ref(table, part, given=()):
    """L_T = sum_i E C(S_i | X, S_<i) (PB25 eq. (2)) from subset entropies of the table."""
    A, out = tuple(given), 0.0
    for S in part:
        out += cond_tc(table, S, A)
        A = tuple(sorted(A + tuple(S)))
    return out


@SETTINGS
@given(joints(d=(3, 4), K=2, max_outcomes=16), st.data())
def test_pb25_theorem1_with_an_input_is_the_prompt_average_and_a_min_over_conditionals(p, data):
    """PB25 Theorem 1 (§4 eq. (2)) with X = the positions ``given``: L_T is the KL of the
    exact fixed-partition decoder of Y given X, averaged over X, and random one-token
    conditionals given (X, S_<i) do no better, prompt by prompt."""
    d = p.d
    g = data.draw(st.integers(1, d - 2))
    G = tuple(sorted(data.draw(st.permutations(range(d)))[:g]))
    R = tuple(i for i in range(d) if i not in G)
    sizes = data.draw(st.sampled_from(list(compositions(len(R)))))
    order = data.draw(st.permutations(R))
    part = chunks(order, sizes)
    b = B.pb25_partition_lower(p, part, given=G)
    assert b.status == B.PAPER and b.kind == B.LOWER
    assert b.value == pytest.approx(lt_ref(p.table, part, G), abs=1e-10)
    local = [tuple(R.index(i) for i in S) for S in part]  # the partition in the prompted table's axes
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    exact, other = 0.0, 0.0
    for w, sub in prompt_tables(p.table, G):
        exact += w * kl_ref(sub, partition_law(sub, local))
        r = rng.dirichlet(np.ones(p.K), size=(len(local), len(R), p.K ** len(R)))
        flat = lambda x: int(np.ravel_multi_index(x, sub.shape))
        q = partition_law(sub, local, cond=lambda t, i, x: r[t, i, flat(tuple(x[k] if k in sum(local[:t], ()) else 0 for k in range(len(R))))][x[i]])
        kq = kl_ref(sub, q)
        assert kq >= lt_ref(sub, local) - 1e-9  # Theorem 1 for this input
        other += w * kq
    assert b.value == pytest.approx(exact, abs=1e-9)  # the equality case, averaged over X
    assert other >= b.value - 1e-9


@SETTINGS
@given(joints(d=(2, 4), K=(2, 3), max_outcomes=81), st.data())
def test_pb25_lemma1_subadditivity_of_the_conditional_total_correlation(p, data):
    """PB25 Lemma 1 (App. A.2, eq. (16)): C(S | Z) >= C(A | Z) + E_A C(B | Z, A) for S = A u B
    disjoint, every term from subset entropies."""
    d = p.d
    perm = data.draw(st.permutations(range(d)))
    z = data.draw(st.integers(0, d - 2))
    a = data.draw(st.integers(1, d - z - 1))
    Z, A_, B_ = tuple(sorted(perm[:z])), tuple(sorted(perm[z : z + a])), tuple(sorted(perm[z + a :]))
    lhs = cond_tc(p.table, A_ + B_, Z)
    rhs = cond_tc(p.table, A_, Z) + cond_tc(p.table, B_, tuple(sorted(Z + A_)))
    assert lhs >= rhs - 1e-10
    # the package's conditional total correlation is the same quantity
    assert B.conditional_total_correlation(p, A_ + B_, Z) == pytest.approx(max(0.0, lhs), abs=1e-10)


@SETTINGS
@given(joints(d=(3, 4), K=2, max_outcomes=16), st.data())
def test_pb25_theorem2_and_theorem3_with_an_input_by_enumeration(p, data):
    """PB25 Theorem 2 (one partition for all inputs) and Theorem 3 (App. A.3, eqs. (28)-(30):
    a partition per input), with X = ``given``: both minima by enumeration of every ordered
    partition of Y, both non-increasing in T, Theorem 3's below Theorem 2's, L*_1 = C(Y | X)
    and L*_|Y| = 0 (Remark 2)."""
    d = p.d
    g = data.draw(st.integers(1, d - 2))
    G = tuple(sorted(data.draw(st.permutations(range(d)))[:g]))
    R = tuple(i for i in range(d) if i not in G)
    fixed, per_input = [], []
    for T in range(1, len(R) + 1):
        f = min(lt_ref(p.table, part, G) for part in partitions_of(R, T))
        local = list(partitions_of(range(len(R)), T))
        e = sum(w * min(lt_ref(sub, part) for part in local) for w, sub in prompt_tables(p.table, G))
        b2 = B.pb25_optimal_lower(p, T, given=G)
        b3 = B.pb25_input_dependent_lower(p, T, G)
        assert b2.value == pytest.approx(f, abs=1e-10) and b3.value == pytest.approx(e, abs=1e-10)
        assert b2.status == b3.status == B.PAPER
        assert e <= f + 1e-10
        fixed.append(f)
        per_input.append(e)
    assert fixed[0] == pytest.approx(cond_tc(p.table, R, G), abs=1e-10) and fixed[-1] == pytest.approx(0.0, abs=1e-10)
    assert per_input[0] == pytest.approx(fixed[0], abs=1e-10)  # one step: nothing to choose
    for v in (fixed, per_input):
        assert all(a >= b - 1e-12 for a, b in zip(v, v[1:]))


def test_pb25_input_dependent_partitions_can_do_strictly_better():
    """Theorem 3's E_X min is below Theorem 2's min E_X when the best partition depends on the
    input. K = 3, X = x_0 uniform picks which pair of (x_1, x_2, x_3) is a copy (x_0 = 0: x_1 = x_2,
    1: x_1 = x_3, 2: x_2 = x_3), the rest uniform; T = 2. Per input, decode the two uncoupled
    positions first: L = 0. One partition for all inputs: a first-step pair is the copy for one
    input in three, and a last-step pair is the copy given the first position for one input in
    three, so L*_2 = (1/3) log 3."""
    pairs = {0: (1, 2), 1: (1, 3), 2: (2, 3)}
    table = np.zeros((3,) * 4)
    for x in itertools.product(range(3), repeat=4):
        i, j = pairs[x[0]]
        if x[i] == x[j]:
            table[x] = 1.0
    table /= table.sum()
    p = mt.Joint(table)
    fixed = B.pb25_optimal_lower(p, 2, given=(0,)).value
    per_input = B.pb25_input_dependent_lower(p, 2, (0,)).value
    ref = min(lt_ref(table, part, (0,)) for part in partitions_of((1, 2, 3), 2))
    assert per_input == pytest.approx(0.0, abs=1e-12)
    assert fixed == pytest.approx(ref, abs=1e-12) and fixed == pytest.approx(math.log(3) / 3, abs=1e-12)


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
    """Regression (found by tests/contract/test_fuzz.py): entries ~1e-200 put the envelope at
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
        expected = float(np.mean([profile_path_kl(phi, c) for c in comps]))
        assert expected >= -1e-12
        if K == 1:  # one step: every law on sizes gives KL = path KL = TC = the TC rate
            assert expected == pytest.approx(a.value, abs=1e-10)


def uniform_law(d, K):
    from mdmtheory.schedules import RandomSchedule

    comps = [c for c in compositions(d) if len(c) == K]
    return comps, RandomSchedule(comps, [1.0 / len(comps)] * len(comps))


@settings(max_examples=10, deadline=None)
@given(joints(d=(2, 4), K=2, max_outcomes=16), st.data())
def test_zc26_check_against_enumeration(p, data):
    """zc26_check: the output law of a random-size sampler is the mixture over compositions
    of the random-order laws (each the average over the d! orders, built point by point);
    its KL, the expected path KL and TC, DTC, all by enumeration, for a random law on the
    compositions into K parts."""
    d = p.d
    K = data.draw(st.integers(1, d))
    comps = [c for c in compositions(d) if len(c) == K]
    w = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).dirichlet(np.ones(len(comps)))
    from mdmtheory.schedules import RandomSchedule

    rs = RandomSchedule(comps, list(w / w.sum()))
    c = B.zc26_check(p, rs)
    law = rs.law
    mix = sum(law[cc] * random_order_law(p.table, cc) for cc in law)
    phi = brute_profile(p.table)
    S = sum(subset_entropy(p.table, (i,)) for i in range(d))
    Hx = subset_entropy(p.table, tuple(range(d)))
    assert c.steps == K and c.tc == pytest.approx(S - Hx, abs=1e-10) and c.dtc == pytest.approx(Hx - d * phi[-1], abs=1e-10)
    assert c.kl == pytest.approx(kl_ref(p.table, mix), abs=1e-9)
    assert c.path_kl == pytest.approx(sum(law[cc] * profile_path_kl(phi, cc) for cc in law), abs=1e-9)
    assert c.kl <= c.path_kl + 1e-9


@pytest.mark.parametrize("d", [3, 4, 5, 6])
def test_uniform_size_law_misses_both_rates_by_factors_growing_with_d(d):
    """The uniform law on compositions into K parts (NOT ZC26's law, which we could not read):
    closed forms, each derived from the definitions and checked against zc26_check.

    Parity (phi_m = log 2 for m < d - 1, phi_{d-1} = 0; TC = log 2): the path KL of sizes c
    is log 2 unless the last part is 1, and P(last part = 1) = C(d-2, K-2)/C(d-1, K-1) =
    (K-1)/(d-1), so E path KL = ((d-K)/(d-1)) log 2 and E path KL/(TC/K) = K(d-K)/(d-1)
    (4/3 at d = 4, K = 2). The output law is the exact law with probability (K-1)/(d-1) and
    the uniform law otherwise (a last step of >= 2 independent fair bits), so
    KL = -log((1 + (K-1)/(d-1))/2) = log(2(d-1)/(d+K-2)) (ratio 1.17 at d = 4, K = 2).
    Repeated bit (phi_0 = log 2, phi_m = 0 after; DTC = log 2): the path KL is (k_1 - 1) log 2,
    E k_1 = d/K by symmetry of the parts, so E path KL/(DTC/K) = d - K."""
    par, rep = mt.families.parity(d), mt.families.repeated(d, 2)
    for K in range(1, d + 1):
        _, rs = uniform_law(d, K)
        cp, cr = B.zc26_check(par, rs), B.zc26_check(rep, rs)
        assert cp.path_kl == pytest.approx((d - K) / (d - 1) * math.log(2), abs=1e-12)
        assert cp.path_kl_over_tc_rate == pytest.approx(K * (d - K) / (d - 1), abs=1e-12)
        assert cp.kl == pytest.approx(math.log(2 * (d - 1) / (d + K - 2)), abs=1e-12)
        assert cr.path_kl == pytest.approx((d / K - 1) * math.log(2), abs=1e-12)
        assert cr.path_kl_over_dtc_rate == pytest.approx(d - K, abs=1e-12)
    if d == 4:
        _, rs = uniform_law(4, 2)
        assert B.zc26_check(par, rs).path_kl_over_tc_rate == pytest.approx(4 / 3, abs=1e-12)
        assert B.zc26_check(par, rs).kl_over_tc_rate == pytest.approx(2 * math.log(1.5) / math.log(2), abs=1e-12)
        assert round(B.zc26_check(par, rs).kl_over_tc_rate, 2) == 1.17


def test_one_step_kl_is_tc_for_every_size_law():
    """At K = 1 the only composition is (d): KL = path KL = TC whatever the size law, so a TC
    rate has constant >= 1 there, and for the repeated bit KL/DTC = TC/DTC = d - 1. Whether
    ZC26's theorem covers K = 1 could not be read (only its abstract's 'K < L')."""
    for d in (3, 4, 5):
        p = mt.families.repeated(d, 2)
        _, rs = uniform_law(d, 1)
        c = B.zc26_check(p, rs)
        _, dtc_rate = B.zc26_rates(p, 1)
        assert c.kl == pytest.approx((d - 1) * math.log(2), abs=1e-12) and c.path_kl == pytest.approx(c.kl, abs=1e-12)
        assert c.kl == pytest.approx(mt.compare(p, mt.Schedule([d])).kl, abs=1e-12)
        assert dtc_rate.value == pytest.approx(math.log(2), abs=1e-12)
        assert c.kl_over_dtc_rate == pytest.approx(d - 1, rel=1e-12) and c.kl_over_tc_rate == pytest.approx(1.0, rel=1e-12)


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
    assert ref == pytest.approx(mt.information.effective_total_correlation(p), abs=1e-9)
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
    assert rnd.row("pb25_schedule_lower").status == "derived here" and "pb25_partition_lower" not in rnd.names
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
        (lambda p: B.zc26_check(p, mt.Schedule([3])), "plan:"),
        (lambda p: B.zc26_check(p, mt.schedules.RandomSchedule({(3,): 0.5, (1, 2): 0.5})), "plan: ZC26"),
        (lambda p: B.zc26_check(mt.information_profile(p), None), "p:"),
        (lambda p: B.pb25_partition_lower(p, [(1, 2)], given=(0, 1, 2)), "given: leaves no position"),
        (lambda p: B.pb25_partition_lower(p, [(0, 1), (2,)], given=(0,)), "partition: the input positions"),
        (lambda p: B.pb25_optimal_lower(p, 3, given=(0,)), "steps:"),
        (lambda p: B.pb25_input_dependent_lower(p, 1, ()), "given: Theorem 3"),
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
    mdmtheory.bounds.__all__ and is the same object there; mt.compare is bounds.compare.
    ``tightness`` (the search over laws, JAX) is a submodule of its own, loaded on use."""
    import importlib
    import inspect
    import pkgutil

    import mdmtheory.bounds as pkg

    mods = [m.name for m in pkgutil.iter_modules(pkg.__path__)]
    assert {"_core", "lc25", "w26", "dhw26", "zc26", "pb25", "zyb26", "derived", "comparison"} <= set(mods)
    for name in set(mods) - {"tightness"}:
        mod = importlib.import_module(f"mdmtheory.bounds.{name}")
        for attr, obj in vars(mod).items():
            if attr.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)) or obj.__module__ != mod.__name__:
                continue
            assert attr in pkg.__all__, f"{name}.{attr} is not exported"
            assert getattr(pkg, attr) is obj
    assert all(hasattr(pkg, n) for n in pkg.__all__)
    assert mt.compare is pkg.compare and callable(pkg.compare)
