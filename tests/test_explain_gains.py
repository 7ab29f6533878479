"""explain on feasible plans: candidates ranked by what relaxing them buys (LP-dual screen),
gains re-solved from the base plan, never negative, the joint line naming its limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.explainer import explain_feasible
from planner.input.loader import load_scenario
from planner.plan.pipeline import plan_scenario

DATASETS = Path(__file__).resolve().parent.parent / "datasets"


@pytest.fixture(scope="module")
def small():
    s = load_scenario(DATASETS / "small-hall.yaml")
    return s, plan_scenario(s)


def test_small_hall_ranks_the_air_zone_first_with_its_real_gain(small) -> None:
    """CZ-AIR is the tightest limit (1,239 of 1,250 kW: 54 GT racks, the air share of three NVL72
    racks and two network racks); +10% (125 kW) is worth more than any power step, and the re-solve
    from the base plan gives its exact value: +24 GPUs."""
    s, plan = small
    ex = explain_feasible(s, plan)
    first = ex.relaxations[0]
    assert (first.kind, first.ident) == ("cooling_zone", "CZ-AIR")
    assert first.gain == 24
    assert first.gain_upper is None
    assert ex.findings[0].text == (
        "cooling CZ-AIR: 1,239 of 1,250 kW used (99.1%); CZ-AIR +125 kW of cooling → +24 GPUs (≈ $1,462,500)"
    )
    assert all(r.gain is None or r.gain >= 0 for r in ex.relaxations)
    joint = ex.findings[-1].text
    assert joint.startswith("relaxing cooling CZ-AIR; power ")
    assert " together by one step → +" in joint


def test_dr_hall_relaxes_the_three_ups_together() -> None:
    s = load_scenario(DATASETS / "dr-hall.yaml")
    ex = explain_feasible(s, plan_scenario(s))
    r = ex.relaxations[0]
    assert (r.kind, {r.ident, *r.peers}) == ("power_node", {"UPS-1", "UPS-2", "UPS-3"})
    assert r.gain == 96


def test_demand_bound_plan_says_so_and_gains_are_never_negative() -> None:
    s = load_scenario(DATASETS / "meta-24k-building.yaml")
    ex = explain_feasible(s, plan_scenario(s))
    assert ex.findings[0].text.startswith(
        "clusters train-1, train-2, train-3, train-4 and 4 more at their GPU cap"
    )
    assert all(r.gain is None or r.gain == 0 for r in ex.relaxations)
    assert "-0" not in ex.render()
    assert "→ -" not in ex.render()
