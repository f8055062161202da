"""The rows of compare are registered by the bound modules (docs/design.md §8, "Its rows in
compare"): a bound defined here alone shows up in mt.compare, every entry names its module, and
the table's rows equal independent calls of the bound functions."""

from __future__ import annotations

import pathlib
import re
import sys

import pytest

import mdmtheory as mt
from mdmtheory import bounds as B
from mdmtheory.bounds import registry

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "design.md"


def _example() -> str:
    text = DOC.read_text(encoding="utf-8")
    m = re.search(r"<!-- registry-example -->\s*```python\n(.*?)```", text, re.S)
    assert m, "docs/design.md lost its registry example"
    return m.group(1)


@pytest.fixture
def toy():
    """The doc's toy bound, registered for the test and removed again."""
    namespace = {"__name__": "tests.bounds.toy_bound"}
    exec(compile(_example(), str(DOC), "exec"), namespace)  # noqa: S102 - the doc's own example
    try:
        yield namespace["toy_rows"]
    finally:
        registry.unregister_rows("toy_path_kl")


def test_a_bound_registered_outside_the_package_appears_in_compare(toy):
    p = mt.families.dirichlet(3, 2, alpha=0.5, seed=1)
    cmp = mt.compare(p, mt.Schedule((2, 1)))
    assert cmp.names[-1] == "toy_path_kl"
    row = cmp.row("toy_path_kl")
    assert (row.value, row.exact, row.holds, row.status) == (cmp.path_kl, cmp.kl, True, "derived here")
    assert "toy_path_kl" not in mt.compare(p, mt.Schedule((2, 1)), "left_to_right").names
    assert "toy_path_kl" not in mt.compare(p, mt.Grid((0.2, 0.5, 0.8))).names


def test_the_toy_is_gone_after_the_fixture():
    assert "toy_path_kl" not in [e.name for e in registry.REGISTERED]


def test_every_entry_names_its_module_and_the_paper_modules_register():
    names = [e.name for e in registry.REGISTERED]
    assert len(names) == len(set(names))
    for e in registry.REGISTERED:
        assert e.name and e.source.startswith("mdmtheory.bounds.") and e.source in sys.modules
        assert callable(e.applies) and callable(e.rows)
    sources = {e.source.rsplit(".", 1)[-1] for e in registry.REGISTERED}
    assert {"derived", "lc25", "w26", "pb25", "jys", "dhw26", "zyb26", "fastdllm", "demask", "cl26", "imdm", "duel",
            "speculative"} <= sources
    assert [e.order for e in registry.REGISTERED] == sorted(e.order for e in registry.REGISTERED)


def _values(cmp, names):
    return [(cmp.row(n).value, cmp.row(n).exact) for n in names]


def test_compare_rows_equal_the_bound_functions():
    p = mt.families.dirichlet(3, 2, alpha=0.5, seed=1)
    prof = mt.information_profile(p)
    plan = mt.Schedule((2, 1))
    cmp = mt.compare(p, plan)
    law = mt.sampler_law(p, plan)
    kl, path = mt.kl(p, law), cmp.path_kl
    assert cmp.names == ("kl", "path_kl", "reverse_kl", "token_error_rate", "sequence_error_rate",
                         "data_processing", "riemann", "lc25_theorem1", "w26_theorem1_card",
                         "lc25_lower_our_reading", "pb25_schedule_lower", "ugc_total", "dhw_lower", "dhw_upper",
                         "dhw_tc", "dhw26_dimension", "zyb26_verification_lower", "imdm_pair_lower")
    assert cmp.kl == pytest.approx(kl, rel=1e-12)
    lo, hi = B.dhw_sandwich(prof)
    dhw = mt.information.effective_total_correlation(prof)
    exact = {"kl": cmp.kl, "path_kl": path}
    want = {
        "riemann": (B.riemann_bound(prof, plan).value, exact[B.riemann_bound(prof, plan).bounds]),
        "lc25_theorem1": (B.lc25_bound(prof, plan).value, exact[B.lc25_bound(prof, plan).bounds]),
        "lc25_lower_our_reading": (B.lc25_lower_our_reading(prof, 2).value, B.worst_path_kl(prof, 2)),
        "pb25_schedule_lower": (B.pb25_schedule_lower(p, plan).value, path),
        "dhw_lower": (lo.value, dhw),
        "dhw_upper": (hi.value, dhw),
        "zyb26_verification_lower": (B.zyb26_verification_lower(p).value, B.rejection_cost(p)),
        "imdm_pair_lower": (B.imdm_lower(p, plan).value, path),
    }
    assert _values(cmp, want) == list(want.values())
    ltr = mt.compare(p, plan, "left_to_right")
    cuts = [(0, 1), (2,)]
    assert ltr.names[5:7] == ("data_processing", "pb25_partition_lower")
    assert ltr.row("pb25_partition_lower").value == B.pb25_partition_lower(p, cuts).value
    grid = mt.Grid((0.2, 0.5, 0.8))
    g = mt.compare(p, grid)
    assert g.names[6:12] == ("w26_theorem1", "jys_klub_girsanov", "jys_klub_code", "w26_proposition1_dp_lower",
                             "optimal_grid_error_lower", "w26_theorem3")
    assert g.row("jys_klub_code").value == B.jys_klub(prof, grid, form="code").value
    spec = mt.compare(p, None, mt.samplers.SpeculativeSampler("assd", None))
    assert spec.names[:7] == ("kl", "reverse_kl", "expected_forwards", "max_forwards", "speculative_exact",
                              "speculative_calls_le_d", "rejection_vs_speculative")
