"""The package: lazy imports, no PuLP where none is needed, stage functions that stay functions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _loaded(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint(' '.join(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stdout.split()
    return set(out)


def test_errors_and_first_fit_do_not_load_the_solver_library() -> None:
    for code in (
        "import planner.errors",
        "import planner",
        "import planner.plan.first_fit",
        "import planner.verifier",
        "import ui.cache",
    ):
        mods = _loaded(code)
        assert not {"pulp", "highspy"} & mods, code


def test_stage_functions_stay_functions_after_every_module_is_imported() -> None:
    code = (
        "import planner, planner.model, planner.solving.core, planner.verifier, planner.explainer, "
        "planner.plan.pipeline\n"
        "print(all(callable(getattr(planner, n)) and not isinstance(getattr(planner, n), type(planner)) "
        "for n in ('build', 'solve', 'verify', 'explain', 'plan_scenario')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout.split()
    assert out[0] == "True"


def test_no_import_cycles_back_into_the_package() -> None:
    """Modules take the version from planner.version, never from the package itself."""
    for path in (ROOT / "planner").glob("*.py"):
        assert "from planner import" not in path.read_text(), path.name
