"""Import boundaries, tested rather than hoped for: no cycles among the planner's modules (imports
inside functions count too), and the verifier's constraint checks (the independent second
opinion) import nothing of the optimiser."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "planner"


def _modules() -> dict[str, Path]:
    out = {}
    for f in PKG.rglob("*.py"):
        rel = f.relative_to(PKG.parent).with_suffix("")
        out[".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)] = f
    return out


def import_graph() -> dict[str, set[str]]:
    """Module → the planner modules it imports, at the top or inside a function."""
    mods = _modules()
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        base = m.split(".") if f.name == "__init__.py" else m.split(".")[:-1]
        for node in ast.walk(ast.parse(f.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                mod = ".".join(base[: len(base) - (node.level - 1)] + ([node.module] if node.module else [])) if node.level else node.module or ""
                targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != m and t != "planner":
                    edges[m].add(t)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
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
    return out


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_in_the_planner() -> None:
    found = cycles(import_graph())
    assert found == [], "import cycles (counting imports inside functions):\n" + "\n".join(" → ".join(c) for c in found)


def test_the_schema_imports_nothing_but_enums() -> None:
    edges = import_graph()
    for m, deps in edges.items():
        if m.startswith("planner.schema"):
            assert {d for d in deps if not d.startswith("planner.schema")} <= {"planner.enums"}, m


OPTIMISER = {"planner.model", "planner.solving", "planner.solvers", "planner.pipeline", "planner.baseline", "planner.explainer",
             "planner.decompose", "planner.fabric", "planner.asks", "planner.power_model", "planner.site_index", "planner.kpis",
             "planner.costs", "planner.reliability", "planner.timeline"}
"""Modules of the optimiser and its shared figures (and the packages they live in)."""
CHECKS = ("planner.verifier.placement", "planner.verifier.capacity", "planner.verifier.clusters", "planner.verifier.site",
          "planner.verifier.fabric", "planner.verifier.asks", "planner.verifier.report")
"""The verifier's constraint checks and what they stand on: the independent second opinion."""


def _reaches(edges: dict[str, set[str]], start: str) -> set[str]:
    seen, stack = set(), [start]
    while stack:
        for d in edges.get(stack.pop(), ()):
            if d not in seen:
                seen.add(d)
                stack.append(d)
    return seen


def test_the_verifiers_constraint_checks_import_only_the_schema_and_enums() -> None:
    edges = import_graph()
    allowed = {"planner.enums", "planner.yamlio"} | {m for m in edges if m.startswith("planner.schema")} | set(CHECKS)
    for module in CHECKS:
        reach = _reaches(edges, module)
        assert reach <= allowed, f"{module} reaches {sorted(reach - allowed)}"
        assert not reach & {m for m in edges if any(m == o or m.startswith(o + ".") for o in OPTIMISER)}, module
