"""The code stays readable: no function of the planner longer than 80 lines (ruff holds complexity
and statement counts; this holds length, which ruff does not measure)."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "planner"
LONGEST = 80


def long_functions(root: Path, limit: int = LONGEST) -> list[str]:
    """``file:line name (n lines)`` of every function or method over ``limit`` lines."""
    out = []
    for f in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > limit:
                    out.append(f"{f.relative_to(root.parent)}:{node.lineno} {node.name} ({n} lines)")
    return out


def test_no_function_in_the_planner_is_over_80_lines() -> None:
    assert long_functions(PKG) == []


def test_the_length_check_finds_a_long_function(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "m.py").write_text("def f():\n" + "    x = 1\n" * 81)
    assert long_functions(pkg) == ["pkg/m.py:1 f (82 lines)"]
