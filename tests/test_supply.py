"""Rack supply per phase (§17): racks of a type placed by a phase fit what has been delivered by
then (unplaced deliveries carry over). Hand-solved instances (HiGHS and CBC), the verifier, bad input."""

from __future__ import annotations

import pytest

from planner.errors import InputError
from planner.pipeline import plan_rolling, plan_scenario
from planner.verifier import verify
from tests.conftest import tiny_scenario
from tests.test_optimize import SOLVERS, solved
from tests.test_phases import PHASES

GT = "grand-teton-h100"  # 16 GPUs, 21.4 kW
FEED = [{"id": "F", "capacity_kw": 10_000}]


def supplied(supply, phases=PHASES, positions=10, gpus_by_phase=None):
    """One row of ``positions`` positions, power and cooling to spare; one cluster of as many Grand
    Teton racks as fit (up to ``gpus_by_phase``); Grand Teton racks delivered as ``supply`` says."""
    rows = [{"id": "R", "positions": positions, "feeds": ["F"], "max_rack_power_kw": 25}]
    c = {"id": "c", "demand": "max", "rack_types": [GT], **({"gpus_by_phase": gpus_by_phase} if gpus_by_phase else {})}
    return tiny_scenario(rows, FEED, [c], **({"phases": phases} if phases else {}), supply=supply)


@pytest.mark.parametrize("solver", SOLVERS)
def test_supply_binds_in_each_phase(solver: str) -> None:
    """2 racks delivered in p1, 3 more in p2, a row of 10: 2 racks (32 GPUs) by p1 and 5 (80 GPUs) by
    p2: 112 GPU-phases, where the row alone would give 160 + 160."""
    s = supplied([{"rack_type": GT, "phase": "p1", "racks": 2}, {"rack_type": GT, "phase": "p2", "racks": 3}])
    plan = solved(s, solver)
    assert [(p.phase, p.racks, p.gpus) for p in plan.phases] == [("p1", 2, 32), ("p2", 5, 80)]
    assert plan.objective_value == 112
    use = [u for u in plan.utilisation if u.kind == "supply"]
    assert [(u.id, u.value, u.limit) for u in use] == [(GT, 5.0, 5.0)]


def test_an_allocation_not_used_carries_over() -> None:
    """4 racks delivered in p1 to a cluster that wants 16 GPUs (1 rack) in p1 and 64 (4) from p2: the
    three left wait in the warehouse; 1 then 4 racks stand."""
    s = supplied([{"rack_type": GT, "phase": "p1", "racks": 4}], gpus_by_phase={"p1": 16, "p2": 64})
    plan = plan_scenario(s)
    assert [p.racks for p in plan.phases] == [1, 4]


def test_rolling_counts_what_earlier_phases_placed() -> None:
    s = supplied([{"rack_type": GT, "phase": "p1", "racks": 2}, {"rack_type": GT, "phase": "p2", "racks": 3}])
    plan = plan_rolling(s)
    assert verify(plan, s).ok
    assert [p.racks for p in plan.phases] == [2, 5]


def test_the_verifier_rejects_racks_beyond_the_supply() -> None:
    s = supplied([{"rack_type": GT, "phase": "p1", "racks": 2}, {"rack_type": GT, "phase": "p2", "racks": 3}])
    plan = plan_scenario(supplied([{"rack_type": GT, "phase": "p1", "racks": 3}, {"rack_type": GT, "phase": "p2", "racks": 2}]))
    lines = [str(v) for v in verify(plan.model_copy(update={"scenario_hash": None}), s).violations]
    assert f"supply {GT}: 3 {GT} racks placed, 2 delivered in phase p1" in " | ".join(lines), lines


@pytest.mark.parametrize(("supply", "expected"), [
    ([{"rack_type": "h100-box", "racks": 2}], "supply[0].rack_type: unknown rack type 'h100-box'"),
    ([{"rack_type": GT, "phase": "q9", "racks": 2}], "supply[0].phase: unknown phase 'q9'"),
])
def test_bad_supply_names_the_field(supply, expected) -> None:
    with pytest.raises(InputError) as e:
        supplied(supply)
    assert any(line.startswith(expected) for line in e.value.lines()), e.value.lines()


def test_without_phases_the_supply_is_one_limit() -> None:
    s = supplied([{"rack_type": GT, "racks": 3}], phases=None)
    plan = plan_scenario(s)
    assert plan.kpis.racks == 3
    assert plan.status == "optimal"


def test_explain_names_the_supply_that_binds() -> None:
    """With 2 racks in p1 and 3 more in p2, one more rack allocated in p1 (+10 % of 2, at least one)
    stands in p1 and p2: +16 + 16 = +32 GPU-phases; one more in p2 (+10 % of 5 → 1): +16."""
    from planner.explainer import explain_feasible

    s = supplied([{"rack_type": GT, "phase": "p1", "racks": 2}, {"rack_type": GT, "phase": "p2", "racks": 3}])
    plan = plan_scenario(s)
    ex = explain_feasible(s, plan)
    gains = {r.step: r.gain for r in ex.relaxations if r.kind == "supply"}
    assert gains == {f"p1: +1 more {GT} racks allocated": 32, f"p2: +1 more {GT} racks allocated": 16}


def test_a_fixed_demand_beyond_the_supply_is_infeasible_and_explained() -> None:
    """An exact 64-GPU cluster (4 racks) from p1 with 2 racks delivered by then: short by 2 racks."""
    from planner.explainer import explain_infeasible

    rows = [{"id": "R", "positions": 10, "feeds": ["F"], "max_rack_power_kw": 25}]
    s = tiny_scenario(rows, FEED, [{"id": "c", "demand": "exact", "gpus": 64, "rack_types": [GT]}], phases=PHASES,
                      supply=[{"rack_type": GT, "phase": "p1", "racks": 2}, {"rack_type": GT, "phase": "p2", "racks": 3}])
    assert plan_scenario(s).status == "infeasible"
    text = explain_infeasible(s).render()
    assert f"supply of {GT} racks by p1: short by 2" in text, text
