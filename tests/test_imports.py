"""Import boundaries, tested rather than hoped for: no cycles among the planner's modules (imports
inside functions count too), each stage imports only the stages below it (the layering each
package's docstring states), and the verifier imports nothing of the optimiser."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "planner"


def _modules() -> dict[str, Path]:
    out = {}
    for f in PKG.rglob("*.py"):
        rel = f.relative_to(PKG.parent).with_suffix("")
        out[".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)] = f
    return out


def _runtime_nodes(tree: ast.AST):
    """Every node but those under ``if TYPE_CHECKING:`` (imports for annotations only never run)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if (
                isinstance(child, ast.If)
                and isinstance(child.test, ast.Name)
                and child.test.id == "TYPE_CHECKING"
            ):
                stack.extend(child.orelse)
                continue
            stack.append(child)


def import_graph() -> dict[str, set[str]]:
    """Module → the planner modules it imports, at the top or inside a function (not those imported
    for type annotations only)."""
    mods = _modules()
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        base = m.split(".") if f.name == "__init__.py" else m.split(".")[:-1]
        for node in _runtime_nodes(ast.parse(f.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                head = base[: len(base) - (node.level - 1)] + ([node.module] if node.module else [])
                mod = ".".join(head) if node.level else node.module or ""
                targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != m and t != "planner":
                    edges[m].add(t)
    return edges


def cycle(edges: dict[str, set[str]]) -> list[str]:
    """One import cycle (first module repeated at the end), or [] when there is none."""
    try:
        graphlib.TopologicalSorter(edges).prepare()
    except graphlib.CycleError as e:
        return list(e.args[1])
    return []


def test_the_cycle_finder_finds_a_cycle() -> None:
    found = cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    assert found[0] == found[-1]
    assert sorted(set(found)) == ["a", "b", "c"]
    assert cycle({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_in_the_planner() -> None:
    found = cycle(import_graph())
    assert found == [], "import cycle (counting imports inside functions): " + " → ".join(found)


BASE = (
    "planner.enums",
    "planner.errors",
    "planner.clock",
    "planner.stop",
    "planner.fileio",
    "planner.cells",
    "planner.yamlio",
    "planner.version",
)
"""Modules every stage may use: allowed values, errors, the run's clock and its stop, safe writes, YAML."""
LOWER = (
    "schema",
    "input",
    "rules",
    "model",
    "solving",
    "verifier",
    "plan",
    "dcim",
    "library",
    "batch",
    "scale",
    "explainer",
    "cli",
)
"""The stages from the bottom up (``planner.<stage>``)."""
MAY_IMPORT = {
    "schema": (),
    "input": ("schema",),
    "rules": ("schema", "input"),
    "model": ("schema", "input", "rules"),
    "solving": ("model",),
    "verifier": ("schema",),
    "plan": ("schema", "input", "rules", "model", "solving", "verifier"),
    "dcim": ("schema", "input", "rules", "model", "solving", "verifier", "plan"),
    "library": ("schema", "input", "rules", "model", "solving", "verifier", "plan"),
    "batch": ("schema", "input", "rules", "model", "solving", "verifier", "plan"),
    "scale": ("schema", "input", "rules", "model", "solving", "verifier", "plan", "batch"),
    "explainer": ("schema", "input", "rules", "model", "solving", "verifier", "plan"),
    "cli": LOWER[:-1],
}
"""Stage → the stages it may import (besides itself and :data:`BASE`); each package's docstring says the
same."""


def stage_of(module: str) -> str:
    if module in BASE:
        return "base"
    part = module.split(".")[1]
    assert part in LOWER, f"{module} belongs to no stage: put it in one of {LOWER} or in BASE"
    return part


def test_every_stage_imports_only_the_stages_below_it() -> None:
    bad = []
    for m, deps in import_graph().items():
        if m == "planner":
            continue
        stage = stage_of(m)
        allowed = {stage, "base", *MAY_IMPORT.get(stage, ())} if stage != "base" else {"base"}
        bad += [f"{m} → {d}" for d in sorted(deps) if stage_of(d) not in allowed]
    assert bad == [], "imports across the layering:\n" + "\n".join(bad)


def test_the_layering_finds_an_import_from_above() -> None:
    assert "cli" not in MAY_IMPORT["plan"]
    assert "dcim" not in MAY_IMPORT["plan"]
    assert "library" not in MAY_IMPORT["plan"]
    assert "plan" not in MAY_IMPORT["model"]
    with pytest.raises(AssertionError, match="belongs to no stage"):
        stage_of("planner.somewhere_new")


def test_the_schema_imports_nothing_but_enums() -> None:
    edges = import_graph()
    for m, deps in edges.items():
        if m.startswith("planner.schema"):
            assert {d for d in deps if not d.startswith("planner.schema")} <= {"planner.enums"}, m


def test_the_verifier_imports_nothing_of_the_optimiser() -> None:
    """The verifier stands on the base modules and the schema alone (the scenario hash is the
    schema's): every figure it checks is its own count."""
    edges = import_graph()
    shared = {
        (m, d)
        for m, deps in edges.items()
        if m.startswith("planner.verifier")
        for d in deps
        if stage_of(d) not in ("base", "schema", "verifier")
    }
    assert shared == set()


def test_no_optimiser_module_imports_the_verifier_except_to_call_verify() -> None:
    edges = import_graph()
    reach = {
        (m, d)
        for m, deps in edges.items()
        if not m.startswith("planner.verifier")
        for d in deps
        if d.startswith("planner.verifier") and d != "planner.verifier"
    }
    assert reach == set(), sorted(reach)
