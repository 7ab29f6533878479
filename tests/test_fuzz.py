"""A short run of benchmarks/fuzz.py (the full run is 2,000 mutants): mutants of every input kind
(scenarios, sites, the catalog, generator specs, sweeps, plans, results tables, §21 fields, NetBox
answers, plan-library rows, what-if change sets) through the CLI
give answers (exit 0, 1 or 2), never an internal error (3) and never a hang."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_mutants_of_every_input_kind_never_crash_or_hang() -> None:
    spec = importlib.util.spec_from_file_location("fuzz", ROOT / "benchmarks" / "fuzz.py")
    fuzz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fuzz)
    counts, failures = fuzz.fuzz(220, seed=7)
    assert failures == []
    assert {kind for kind, _ in counts} == {
        "catalog",
        "generator",
        "grid",
        "library-row",
        "netbox-answer",
        "plan",
        "results",
        "scenario",
        "site",
        "sweep",
        "whatif",
    }
    assert sum(counts.values()) == 220
