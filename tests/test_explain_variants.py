"""`planner explain` where `plan` sends users: infeasible variants of the shipped scenarios.

Hypothesis draws a shipped scenario and makes it ask for what cannot fit: one cluster's demand made
`exact` or `at_least` (its own figure, or a drawn one up to far beyond the site), optionally with
a capex or IT-power budget or the region's power arrival cut to a drawn share. `explain` must answer
every variant: exit 0 (it fits after all: the binding limits), 1 (it cannot fit: a sentence naming
the clusters' asks and at least one limit, each with what it lacks) or 2 (the variant is bad input,
one problem per line) — never an internal error (exit 3)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.cli import main

DATASETS = Path(__file__).resolve().parent.parent / "datasets"
SHIPPED = ["fleet-expansion", "hall-refresh", "fleet-futures", "small-hall", "dr-hall", "dr-hall-flex"]
"""Shipped scenarios that plan in seconds (the region scenarios have their own explain tests)."""

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """The shipped scenarios' files (sites, catalog) copied where variants may be written."""
    d = tmp_path_factory.mktemp("variants")
    for f in DATASETS.glob("*.yaml"):
        if not f.name.startswith(("prometheus", "fleet-mixed", "fleet-1m", "region-100k")):
            shutil.copy(f, d / f.name)
    return d


@st.composite
def variants(draw) -> tuple[str, dict]:
    name = draw(st.sampled_from(SHIPPED))
    sc = yaml.safe_load((DATASETS / f"{name}.yaml").read_text())
    i = draw(st.integers(0, len(sc["clusters"]) - 1))
    c = sc["clusters"][i]
    c["demand"] = draw(st.sampled_from(["exact", "at_least"]))
    if draw(st.booleans()) or ("gpus" not in c and "gpus_by_phase" not in c):
        c.pop("gpus_by_phase", None)
        c["gpus"] = draw(st.sampled_from([8, 72, 1_000, 4_608, 20_000, 1_000_000]))
    cut = draw(st.sampled_from(["none", "capex", "it_power", "arrival"]))
    share = draw(st.sampled_from([0.001, 0.05, 0.3]))
    if cut == "capex":
        sc.setdefault("budgets", {})["capex_usd"] = 1e9 * share
    elif cut == "it_power":
        sc.setdefault("budgets", {})["it_power_kw"] = 10_000 * share
    elif cut == "arrival":
        sc["power_arrival"] = [{"interconnect_mw": 10 * share}]
    return name, sc


@settings(max_examples=14, deadline=None, suppress_health_check=list(HealthCheck), derandomize=False)
@given(v=variants())
def test_explain_answers_every_infeasible_variant(folder: Path, v, capsys) -> None:
    name, sc = v
    path = folder / f"variant-{name}.yaml"
    path.write_text(yaml.safe_dump(sc, sort_keys=False))
    capsys.readouterr()
    code = main(["explain", str(path), "--time-limit", "20"])
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), f"{name}: exit {code}\n{err[-2000:]}"
    if code == 1:
        head, *lines = out.strip().splitlines()
        assert head.startswith("Cannot place "), out
        findings = [x for x in lines if x.startswith("  - ")]
        assert findings, out
        assert all(re.match(r"  - [^:]+: ", f) for f in findings), out  # each names a limit or a cluster
    if code == 2:
        assert "problem" in err, err
        assert "  - " in err, err


@pytest.mark.parametrize(
    ("name", "cluster", "demand", "said"),
    [
        (
            "fleet-expansion",
            1,
            {"demand": "exact"},
            "Cannot place nvl-train at exactly 1,152 GPUs from q3; the smallest relaxation (relative) "
            "that makes it fit:",
        ),
        (
            "fleet-expansion",
            0,
            {"demand": "at_least", "gpus": 100_000},
            "Cannot place h100-train at 100,000+ GPUs; the smallest relaxation (relative) that makes it fit:",
        ),
    ],
)
def test_the_variants_that_crashed_explain_now_name_their_limits(
    folder, name, cluster, demand, said, capsys
) -> None:
    """Two variants of fleet-expansion that ended in an internal error: a cluster asking by phase
    (its ask had no single figure to print) and a phased feed group's limit (its key carries the
    phase)."""
    sc = yaml.safe_load((DATASETS / f"{name}.yaml").read_text())
    sc["clusters"][cluster].update(demand)
    path = folder / f"crash-{name}-{cluster}.yaml"
    path.write_text(yaml.safe_dump(sc, sort_keys=False))
    assert main(["explain", str(path), "--time-limit", "60"]) == 1
    out = capsys.readouterr().out
    assert out.startswith(said)
    assert re.search(r"  - (space row|power|cooling|pod)", out)
