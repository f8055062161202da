"""Meta-test of proofs/, tests/proofs/ and docs/: every proof has a test module and vice
versa, every proof has the required sections, every test id a proof cites exists, every item
of docs/theory.md has a status and (unless merely claimed) names tests that exist, and no
file of the repository points outside it (to the project's private notes)."""

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


# -- docs/theory.md ----------------------------------------------------------------------
THEORY = ROOT / "docs" / "theory.md"
STATUSES = ("verified here", "derived here", "claimed", "refuted", "our reading")
NEEDS_TESTS = ("verified here", "derived here", "refuted", "our reading")
ANY_TEST_ID = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def theory_items():
    """(title, text) of each bullet item of docs/theory.md from its first numbered section on."""
    text = THEORY.read_text()
    body = text[text.index("\n## 1.") :]
    items, current = [], None
    for line in body.splitlines():
        if line.startswith("- "):
            current = [line]
            items.append(current)
        elif current is not None and line.startswith("  "):
            current.append(line)
        else:
            current = None
    out = []
    for lines in items:
        block = " ".join(x.strip() for x in lines)
        m = re.match(r"- \*\*(.+?)\*\*", block)
        out.append((m.group(1) if m else block[:60], block))
    return out


def test_theory_has_items():
    assert len(theory_items()) >= 40


@pytest.mark.parametrize("item", theory_items(), ids=lambda it: it[0][:50])
def test_theory_item_has_status_and_existing_tests(item):
    title, block = item
    m = re.search(r"Status: ([a-z ]+?)(?: \(|\.|$)", block)
    assert m, f"docs/theory.md item {title!r}: no 'Status: ...' line"
    status = m.group(1).strip()
    assert status in STATUSES, f"{title!r}: unknown status {status!r}"
    ids = ANY_TEST_ID.findall(block[m.start():])
    if status in NEEDS_TESTS:
        assert ids, f"docs/theory.md item {title!r} is '{status}' but names no test id"
    for file, name in ids:
        path = ROOT / file
        assert path.is_file(), f"{title!r}: cites {file}, which does not exist"
        assert name in defined_tests(path), f"{title!r}: cites {file}::{name}, which is not defined"
    for proof in re.findall(r"proofs/(\w+)\.md", block):
        assert (PROOFS / f"{proof}.md").is_file(), f"{title!r}: cites proofs/{proof}.md, which does not exist"


def test_refuted_items_give_a_counterexample():
    for title, block in theory_items():
        if "Status: refuted" in block:
            assert "Counterexample" in block or "counterexample" in block, title


# -- nothing refers outside the repository ---------------------------------------------------
#: The project's private notes lived next to the repository; a user who installs or clones
#: mdmtheory has none of them. Spelled in pieces so that this file does not match itself.
FORBIDDEN = ("../" + "shared", "/work/" + "shared", "THEORY" + ".md", "DESIGN" + ".md")
SCANNED = ("README.md", "docs", "mdmtheory", "tests", "examples", "proofs", "benchmarks")
TEXT_SUFFIXES = {".py", ".md", ".txt", ".rst", ".toml", ".cfg", ".ini", ".tsv", ".json", ".yaml", ".yml", ".html", ".sh"}


def repository_text_files():
    for name in SCANNED:
        path = ROOT / name
        if path.is_file():
            yield path
        elif path.is_dir():
            for f in sorted(path.rglob("*")):
                if f.is_file() and f.suffix in TEXT_SUFFIXES and "__pycache__" not in f.parts:
                    yield f


def test_no_file_refers_outside_the_repository():
    bad = []
    for f in repository_text_files():
        text = f.read_text(errors="replace")
        for needle in FORBIDDEN:
            if needle in text:
                line = text[: text.index(needle)].count("\n") + 1
                bad.append(f"{f.relative_to(ROOT)}:{line}: {needle}")
    assert not bad, "files refer to notes outside the repository (use docs/theory.md, docs/design.md):\n" + "\n".join(bad)


def test_docs_exist_and_link_each_other():
    design = (ROOT / "docs" / "design.md").read_text()
    theory = THEORY.read_text()
    assert "theory.md" in design and "design.md" in theory
    readme = (ROOT / "README.md").read_text()
    assert "docs/theory.md" in readme and "docs/design.md" in readme


# -- W26: one source of truth (docs/theory.md's table) ------------------------------------------
W26_ROW = re.compile(r"^\| (.+?) \| (.+?) \| ([a-z ]+?) \| .* \|$", re.M)
W26_NAMED = re.compile(r"W26(?:'s)? (Lemma|Theorem|Proposition|Corollary) (\d)")
SECTION = re.compile(r"(?:§|App\. )(\d+(?:\.\d+)*|[A-D](?:\.\d+)*)")
#: Phrases that contradicted the reading on record (docs that said W26 was not read, or that
#: the certificate does not exist).
STALE = ("text was not available", "text is not available", "was not available to us", "Not implemented here")
W26_DOCS = ("README.md", "docs/guide.md", "docs/certificate.md", "docs/design.md", "docs/design-from-data.md",
            "docs/bridge.md",
            "mdmtheory/design/certificate.py", "mdmtheory/design/certificate_blocks.py", "mdmtheory/information/dyadic.py", "mdmtheory/information/ugc.py",
            "mdmtheory/bounds/__init__.py", "mdmtheory/bounds/lc25.py", "mdmtheory/bounds/w26.py",
            "mdmtheory/bounds/dhw26.py", "mdmtheory/bounds/derived.py", "mdmtheory/bounds/comparison.py")


def w26_table():
    text = THEORY.read_text()
    head = text[: text.index("\n## 1.")]
    rows = {m.group(1).strip(): (m.group(2).strip(), m.group(3).strip()) for m in W26_ROW.finditer(head)}
    return {k: v for k, v in rows.items() if k not in ("W26 item", "---")}


def test_w26_table_matches_theory_items():
    """Each row's place and status are those of the docs/theory.md item that names it."""
    rows = w26_table()
    assert len(rows) >= 18
    items = theory_items()
    for name, (place, status) in rows.items():
        first = SECTION.search(place).group(0)
        hits = [b for t, b in items if name.lower() in t.lower() and first in b]
        assert hits, f"docs/theory.md: no item titled {name!r} citing {first}"
        assert any(f"Status: {status}" in b for b in hits), f"{name!r}: the item's status is not {status!r}"


def test_w26_docs_cite_the_places_on_record():
    """Wherever a doc names a W26 lemma/theorem/proposition/corollary with a § in the same
    clause, the § is (a prefix of) one of the places docs/theory.md records for it; no doc
    says the paper was unread or the certificate missing."""
    rows = w26_table()
    places = {}
    for name, (place, _) in rows.items():
        m = re.match(r"(Lemma|Theorem|Proposition|Corollary) (\d)", name)
        if m:
            places[m.group(0)] = [s for s in SECTION.findall(place)]
    bad = []
    for rel in W26_DOCS + ("docs/theory.md",):
        text = (ROOT / rel).read_text()
        for needle in STALE:
            if needle in text and "W26" in text[max(0, text.index(needle) - 400): text.index(needle) + 400]:
                bad.append(f"{rel}: says {needle!r} near W26")
        for m in W26_NAMED.finditer(text):
            item = f"{m.group(1)} {m.group(2)}"
            if item not in places:
                continue
            clause = re.split(r"[;\n]|\)\.", text[m.end(): m.end() + 60])[0]
            s = SECTION.search(clause)
            if s and not any(p.startswith(s.group(1)) for p in places[item]):
                bad.append(f"{rel}: W26 {item} cited at §{s.group(1)}, docs/theory.md has {places[item]}")
    assert not bad, "\n".join(bad)
