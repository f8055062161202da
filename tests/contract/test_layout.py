"""The layout rule (docs/design.md, "Layout"), read from the package's own imports.

Every ``import`` and ``from ... import`` in every module (module level and inside functions:
a lazy import is still a dependency) is an edge. The rule: no import circle, and a wing
imports only itself and the wings below it; the private helpers (``_validate``, ``_jax``,
``_moved``) and the shipped checkpoints are below every wing; nothing imports the top-level
package. Old import paths keep working for one release, each with a DeprecationWarning.
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import pkgutil
import sys
import warnings

import pytest

import mdmtheory as mt
from mdmtheory import _moved

PKG = pathlib.Path(mt.__file__).resolve().parent

#: The wings from the bottom up; a wing may import the wings of a lower level only.
LEVELS = {
    "laws": 0, "schedules": 0,
    "information": 1, "exports": 1,
    "data": 2, "samplers": 2,
    "bounds": 3, "optimal": 3,
    "bridge": 4,
    "design": 5, "report": 5, "symbolic": 5, "testing": 5,
    "cli": 6, "__main__": 7,
}
BELOW_ALL = {"_validate", "_jax", "_moved", "_estimate", "checkpoints"}


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _edges(name: str, path: pathlib.Path) -> set[str]:
    """The package modules ``name`` imports (a ``from pkg import sub`` names the submodule)."""
    is_pkg = path.name == "__init__.py"
    here = name.split(".") if is_pkg else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "mdmtheory"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "mdmtheory":
                continue
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.add(sub if sub in MODULES else target)
    return {t for t in out if t in MODULES and t != name}


EDGES = {name: _edges(name, path) for name, path in MODULES.items()}


def _wing(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_module_is_in_a_wing():
    for name in MODULES:
        wing = _wing(name)
        assert wing is None or wing in LEVELS or wing in BELOW_ALL, f"{name}: not in a wing of docs/design.md"


def test_every_public_module_is_listed_in_the_layout_table():
    """docs/design.md's Layout table names every public module of each wing in that wing's row
    (a new module with no row entry fails here, so the table cannot drift from the tree)."""
    import re

    text = (PKG.parent / "docs" / "design.md").read_text()
    rows = {m["wing"]: set(re.findall(r"`(\w+)`", m["mods"]))
            for m in re.finditer(r"^\| \d \| `(?P<wing>\w+)/` \|[^|]*\| (?P<mods>.*) \|$", text, re.M)}
    missing = []
    for name in MODULES:
        parts = name.split(".")
        if len(parts) != 3 or parts[1] not in LEVELS or parts[2].startswith("_") or parts[1] == "cli":
            continue
        if parts[2] not in rows.get(parts[1], set()):
            missing.append(name)
    assert rows and not missing, f"not in docs/design.md's Layout table: {missing}"


def violations(edges: dict[str, set[str]]) -> list[str]:
    """The edges against the rule: upward or sideways between wings, or into the top level."""
    bad = []
    for src, targets in edges.items():
        a = _wing(src)
        if a is None:  # the top-level package re-exports the wings
            continue
        for dst in targets:
            b = _wing(dst)
            if b is None:
                bad.append(f"{src} -> {dst} (the top-level package)")
            elif a == b or b in BELOW_ALL:
                continue
            elif a in BELOW_ALL:
                bad.append(f"{src} -> {dst} (a private helper imports a wing)")
            elif LEVELS[b] >= LEVELS[a]:
                bad.append(f"{src} -> {dst} ({a}, level {LEVELS[a]}, imports {b}, level {LEVELS[b]})")
    return sorted(bad)


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_runs_upward_or_sideways():
    bad = violations(EDGES)
    assert not bad, "imports against the layout rule:\n" + "\n".join(bad)


def test_no_import_circle():
    assert not circles(EDGES)


def test_the_checks_fail_on_a_planted_upward_import_and_circle(tmp_path):
    """The two checks can fail: a lazy import planted in a law module is read as an edge and
    reported, and so is a circle."""
    planted = tmp_path / "joint.py"
    planted.write_text("def f():\n    from ..design import certify\n")
    assert _edges("mdmtheory.laws.joint", planted) == {"mdmtheory.design"}
    edges = {**EDGES, "mdmtheory.laws.joint": EDGES["mdmtheory.laws.joint"] | _edges("mdmtheory.laws.joint", planted)}
    assert violations(edges) == ["mdmtheory.laws.joint -> mdmtheory.design (laws, level 0, imports design, level 5)"]
    edges = {**EDGES, "mdmtheory.laws.joint": EDGES["mdmtheory.laws.joint"] | {"mdmtheory.laws.families"},
             "mdmtheory.laws.families": EDGES["mdmtheory.laws.families"] | {"mdmtheory.laws.joint"}}
    assert ["mdmtheory.laws.families", "mdmtheory.laws.joint"] in circles(edges)
    assert violations({"mdmtheory.information.ugc": {"mdmtheory.exports.formats"}})  # sideways, same level


def test_heavy_libraries_are_imported_only_where_allowed():
    """torch, matplotlib and diffusers: only in bridge/, report/, the exports adapters and the CLI's
    model loading (lazily there), and in the "topk" tie rule, which runs ``torch.topk`` itself
    because the tie order is torch's (lazily: only that rule imports it). JAX: only in
    :mod:`mdmtheory._jax`, the others take ``jax``, ``jnp``, ``jit`` from it (issue 31 item 14)."""
    allowed = ("mdmtheory.bridge", "mdmtheory.report", "mdmtheory.exports", "mdmtheory.cli",
               "mdmtheory.samplers.ties", "mdmtheory.samplers.select")
    bad = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = set(id(n) for n in tree.body)
        for node in ast.walk(tree):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import)
                    else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            for m in mods:
                if m.split(".")[0] in ("jax", "jaxlib") and name != "mdmtheory._jax":
                    bad.append(f"{name} imports {m} (take jax, jnp, jit from mdmtheory._jax: imported on first use)")
                if m.split(".")[0] not in ("torch", "matplotlib", "diffusers"):
                    continue
                if not name.startswith(allowed):
                    bad.append(f"{name} imports {m}")
                elif id(node) in top and not name.startswith("mdmtheory.bridge"):
                    bad.append(f"{name} imports {m} at module level (import it where it is used)")
    assert not bad, bad


def _loaded_in_a_fresh_process(code: str, watch=("numpy", "scipy", "jax", "torch", "matplotlib", "diffusers",
                                                 "transformers", "sympy")) -> list[str]:
    """The libraries of ``watch`` (and the mdmtheory wings) in ``sys.modules`` after ``code``."""
    import subprocess

    probe = (f"{code}\nimport sys; print(sorted(m for m in sys.modules if m.split('.')[0] in {watch!r} "
             "or m.count('.') == 1 and m.split('.')[0] == 'mdmtheory' and not m.split('.')[1].startswith('_')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         cwd=str(PKG.parent))
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


def test_import_mdmtheory_imports_no_heavy_library():
    """``import mdmtheory`` loads nothing heavy, not even its wings (issue 31 item 14: it took
    16 s on a loaded machine, JAX 8.5 s of it); every name of the top level works, each on
    first use."""
    assert _loaded_in_a_fresh_process("import mdmtheory") == []


def test_mdmtheory_help_imports_no_library_and_no_command():
    """``mdmtheory --help`` (issue 31 item 14: 4 s of CPU) imports neither numpy nor any wing:
    each command's one-line help is read from its module's source; ``mdmtheory CMD`` imports
    only CMD's module."""
    code = ("import contextlib, io, sys\nfrom mdmtheory.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            "    try:\n        main({argv!r})\n    except SystemExit:\n        pass\n"
            "assert {expect!r} in out.getvalue(), out.getvalue()")
    assert _loaded_in_a_fresh_process(code.format(argv=["--help"], expect="optimal schedule(s) for a profile")) == [
        "mdmtheory.cli"]
    one = _loaded_in_a_fresh_process(code.format(argv=["profile", "--help"], expect="--family"))
    # a command's --help builds its parser only: no wing (issue 39 item 7; tests/cli/test_cli_cost.py)
    assert [m for m in one if m.split(".")[0] != "numpy"] == ["mdmtheory.cli"], one


def test_cli_help_lines_read_from_source_are_the_modules_help():
    from mdmtheory import cli

    for name in cli.COMMANDS:
        assert cli._help(name) == importlib.import_module(f"mdmtheory.cli.{cli.COMMANDS[name]}").HELP


def test_the_library_imports_without_jax_torch_or_matplotlib_and_jax_comes_on_first_use():
    """Every wing and every top-level name loads without JAX, torch or matplotlib: a function
    imports them when it runs, JAX through :mod:`mdmtheory._jax` (its stand-ins compute as JAX
    itself does)."""
    if not _jax_cpu_only():
        pytest.skip("an accelerator plugin is installed: the backend check imports JAX by design")
    code = """
import importlib, sys
from functools import partial
import numpy as np
import mdmtheory as mt
from mdmtheory import _jax
for n in mt.__all__:
    getattr(mt, n)
for w in mt._WINGS:
    importlib.import_module("mdmtheory." + w)
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"jax", "torch", "matplotlib", "diffusers", "transformers"})
assert not heavy, heavy
assert all("mdmtheory." + w in sys.modules for w in mt._WINGS)  # the probe sees what is loaded

@partial(_jax.jit, static_argnums=(1,))
def f(x, n):
    return _jax.jnp.sum(x ** n)

assert _jax.default_backend() == "cpu" and "jax" not in sys.modules, "decorating or the backend check imported jax"
x = np.linspace(0.0, 1.0, 7)
with _jax.x64():
    got = float(f(x, 3))
assert "jax" in sys.modules
import jax
with _jax.x64():
    ref = float(jax.jit(lambda x, n: jax.numpy.sum(x ** n), static_argnums=(1,))(x, 3))
assert got == ref and abs(got - float(np.sum(x ** 3))) < 1e-15, (got, ref)
assert _jax.jnp.float64 is jax.numpy.float64 and f.lower(x, 3) is not None
print("ok")
"""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k not in ("JAX_PLATFORMS", "PJRT_NAMES_AND_LIBRARY_PATHS")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(PKG.parent), env=env)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def _jax_cpu_only() -> bool:
    from mdmtheory import _jax

    return _jax._cpu_only()


def test_top_level_is_small_and_leaks_nothing():
    assert 30 <= len(mt.__all__) <= 40
    assert len(set(mt.__all__)) == len(mt.__all__)
    for name in mt.__all__:
        assert getattr(mt, name) is not None
    extra = {n for n in vars(mt) if not n.startswith("_")} - set(mt.__all__)
    # submodules imported by someone else become attributes of their package
    assert extra <= {"bridge", "checkpoints", "cli", "symbolic", "testing"}, extra


@pytest.mark.parametrize("wing", ["laws", "schedules", "information", "exports", "data", "samplers", "bounds",
                                  "optimal", "design", "report"])
def test_wings_export_their_modules_names_and_leak_nothing(wing):
    pkg = importlib.import_module(f"mdmtheory.{wing}")
    subs = {m.name for m in pkgutil.iter_modules(pkg.__path__)}
    for name in pkg.__all__:
        assert hasattr(pkg, name), f"mdmtheory.{wing}.{name} is in __all__ but missing"
    public = {n for n in vars(pkg) if not n.startswith("_")}
    leaks = public - set(pkg.__all__) - subs - {"annotations"}
    assert not leaks, f"mdmtheory.{wing} leaks {sorted(leaks)}"


@pytest.fixture
def fresh_old_paths():
    """Old paths imported by a test are forgotten after it (module cache and package attributes)."""
    before = set(sys.modules)
    attrs = {m: set(vars(sys.modules[m])) for m in ("mdmtheory", "mdmtheory.bridge") if m in sys.modules}
    for old in _moved.MODULES:
        sys.modules.pop(old, None)
    yield
    for name in set(sys.modules) - before:
        if name in _moved.MODULES:
            del sys.modules[name]
    for m, names in attrs.items():
        for extra in set(vars(sys.modules[m])) - names:
            if f"{m}.{extra}" in _moved.MODULES:
                delattr(sys.modules[m], extra)


@pytest.mark.parametrize("old", sorted(_moved.MODULES))
def test_old_module_paths_work_with_a_deprecation_warning(old, fresh_old_paths):
    parent = old.rpartition(".")[0]
    if parent in _moved.MODULES:  # its own warning is the parent's test
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            importlib.import_module(parent)
    with pytest.warns(DeprecationWarning, match=rf"^{old} moved to {_moved.MODULES[old][0]}"):
        module = importlib.import_module(old)
    new = importlib.import_module(_moved.MODULES[old][0])
    names = getattr(new, "__all__", None) or [n for n in vars(new) if not n.startswith("_")]
    for name in names:
        assert getattr(module, name) is getattr(new, name)
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018


@pytest.mark.parametrize("key", sorted(_moved.NAMES))
def test_old_attribute_paths_work_with_a_deprecation_warning(key, fresh_old_paths):
    module, name = key
    if module.startswith("mdmtheory.bridge"):
        pytest.importorskip("torch")
    new_module, new_name = _moved.NAMES[key]
    if module in _moved.MODULES:  # read through the old module path (which warns itself)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            value = getattr(importlib.import_module(module), name)
    else:
        with pytest.warns(DeprecationWarning, match=f"{new_module}.{new_name}"):
            value = getattr(importlib.import_module(module), name)
    assert value is getattr(importlib.import_module(new_module), new_name)


def test_old_from_import_statements_still_run(fresh_old_paths):
    with pytest.warns(DeprecationWarning):
        from mdmtheory.structured import MarkovChainLaw
    with pytest.warns(DeprecationWarning, match="mdmtheory.integrations moved"), \
            pytest.warns(DeprecationWarning, match="mdmtheory.integrations.diffusers moved"):
        from mdmtheory.integrations.diffusers import block_refinement_scheduler
    assert MarkovChainLaw is mt.laws.MarkovChainLaw
    assert block_refinement_scheduler is importlib.import_module("mdmtheory.exports.diffusers").block_refinement_scheduler
