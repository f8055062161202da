"""Meta-test of proofs/ and tests/proofs/: every proof has a test module and vice versa,
every proof has the required sections, and every test id a proof cites exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROOFS = ROOT / "proofs"
TESTS = ROOT / "tests" / "proofs"
SECTIONS = ("Statement", "Assumptions", "Proof", "Source", "Checked by")
TEST_ID = re.compile(r"(tests/proofs/test_\w+\.py)::(\w+)")


def proof_files():
    return sorted(PROOFS.glob("*.md"))


def proof_test_modules():
    return sorted(p for p in TESTS.glob("test_*.py") if p.name != "test_meta.py")


def sections(text):
    return {m.group(1).strip(): m.start() for m in re.finditer(r"^## (.+)$", text, flags=re.M)}


def defined_tests(path):
    """Names of the module-level test functions (and Class::method ids) of a test module."""
    tree = ast.parse(path.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            names |= {f"{node.name}::{f.name}" for f in node.body if isinstance(f, ast.FunctionDef)}
    return names


def test_there_are_proofs():
    assert len(proof_files()) >= 11


@pytest.mark.parametrize("proof", proof_files(), ids=lambda p: p.stem)
def test_proof_has_test_module_and_sections(proof):
    text = proof.read_text()
    assert text.startswith("# "), f"{proof.name}: needs a '# title' line"
    found = sections(text)
    missing = [s for s in SECTIONS if s not in found]
    assert not missing, f"{proof.name}: missing sections {missing}"
    order = [found[s] for s in SECTIONS]
    assert order == sorted(order), f"{proof.name}: sections out of order"
    assert (TESTS / f"test_{proof.stem}.py").is_file(), f"{proof.name}: no tests/proofs/test_{proof.stem}.py"


@pytest.mark.parametrize("proof", proof_files(), ids=lambda p: p.stem)
def test_checked_by_ids_exist(proof):
    text = proof.read_text()
    checked = text[sections(text)["Checked by"]:]
    ids = TEST_ID.findall(checked)
    assert ids, f"{proof.name}: 'Checked by' cites no test id"
    assert any(f == f"tests/proofs/test_{proof.stem}.py" for f, _ in ids), f"{proof.name}: cites none of its own tests"
    for file, name in ids:
        path = ROOT / file
        assert path.is_file(), f"{proof.name}: cites {file}, which does not exist"
        assert name in defined_tests(path), f"{proof.name}: cites {file}::{name}, which is not defined"


@pytest.mark.parametrize("module", proof_test_modules(), ids=lambda p: p.stem)
def test_module_has_proof_and_cites_it(module):
    stem = module.stem[len("test_"):]
    assert (PROOFS / f"{stem}.md").is_file(), f"{module.name}: no proofs/{stem}.md"
    doc = ast.get_docstring(ast.parse(module.read_text())) or ""
    cited = set(re.findall(r"proofs/(\w+)\.md", doc))
    assert stem in cited, f"{module.name}: its docstring should cite proofs/{stem}.md"
    for other in cited:
        assert (PROOFS / f"{other}.md").is_file(), f"{module.name}: cites proofs/{other}.md, which does not exist"
