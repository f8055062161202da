"""Metrics beside forward KL (issue 20 §5): reverse KL, off-support mass, total variation,
each against its definition summed cell by cell, with Pinsker as an invariance check."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings

import mdmtheory as mt
from mdmtheory.testing import joints


def _sampler(p):
    return mt.samplers.sampler_law(p, mt.Schedule((p.d,)))  # one step: the product of marginals


@settings(max_examples=40, deadline=None)
@given(joints(d=(2, 4), K=(2, 3)))
def test_reverse_kl_tv_and_off_support_by_definition(p):
    q = _sampler(p)
    P, Q = p.table.ravel(), q.table.ravel()
    off = sum(b for a, b in zip(P, Q) if a == 0)
    assert mt.information.off_support_mass(p, q) == pytest.approx(off, abs=1e-15)
    if off > 1e-300:
        assert mt.information.reverse_kl(p, q) == math.inf
    else:
        ref = sum(b * math.log(b / a) for a, b in zip(P, Q) if b > 0)
        assert mt.information.reverse_kl(p, q) == pytest.approx(max(ref, 0.0), abs=1e-12)
    t = 0.5 * sum(abs(a - b) for a, b in zip(P, Q))
    assert mt.tv(p, q) == pytest.approx(t, abs=1e-14)
    assert mt.tv(p, q) <= math.sqrt(mt.kl(p, q) / 2) + 1e-12  # Pinsker
    assert mt.tv(p, p) == 0 and mt.information.reverse_kl(p, p) == 0


def test_lost_mass_counts_in_tv_and_is_refused_by_reverse_kl():
    p = mt.Joint(np.array([[0.5, 0.0], [0.0, 0.5]]))
    q = mt.Joint(np.array([[0.3, 0.0], [0.0, 0.3]]), lost=0.4)
    assert mt.tv(p, q) == pytest.approx(0.5 * (0.2 + 0.2 + 0.4))
    with pytest.raises(ValueError, match=r"^q: has lost mass"):
        mt.information.reverse_kl(p, q)
    assert mt.information.reverse_kl(p, q, lost="condition") == pytest.approx(0.0, abs=1e-15)  # finished samples follow p
    assert mt.information.reverse_kl(p, q, lost="outcome") == math.inf  # lost: an outcome p never produces
    with pytest.raises(ValueError, match=r"^lost:"):
        mt.information.reverse_kl(p, q, lost="ignore")
    with pytest.raises(ValueError, match=r"^p: has lost mass"):
        mt.tv(q, p)


def test_parity_reverse_kl_is_infinite_and_forward_is_log2():
    p = mt.families.parity(3)
    q = _sampler(p)  # uniform on all 8 strings: half of them off p's support
    assert mt.information.off_support_mass(p, q) == pytest.approx(0.5)
    assert mt.information.reverse_kl(p, q) == math.inf
    assert mt.kl(p, q) == pytest.approx(math.log(2))
    assert mt.tv(p, q) == pytest.approx(0.5)
