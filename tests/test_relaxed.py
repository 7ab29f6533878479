"""A relaxed region re-planned from its base plan (explain at region scale): only the buildings a
step touches solve again, the rest keep their racks, the joined plan is verified whole."""

from __future__ import annotations

from collections import Counter

from planner.clock import Deadline
from planner.explainer.feasible import _relaxed, explain_feasible
from planner.input.generate import BuildingSpec, SiteSpec, generate_site
from planner.input.loader import scenario_from_data
from planner.plan import Plan
from planner.plan.pipeline import plan_scenario
from planner.scale import relaxed as rx
from planner.scale.relaxed import RegionReplanner, replan_relaxed, touched

GT = "grand-teton-h100"
SITE = generate_site(
    SiteSpec(
        id="two",
        buildings=[BuildingSpec(count=2, halls=1, pods_per_hall=2, rows_per_pod=4, positions_per_row=10)],
    )
)
GROW = [{"id": "grow", "demand": "max", "rack_types": [GT], "max_hops": 7}]
PHASES = [
    {"id": "q1", "start": "2027-01-01"},
    {"id": "q2", "start": "2027-04-01"},
    {"id": "q3", "start": "2027-07-01"},
]


def scenario(site: dict | None = None, **extra):
    return scenario_from_data(
        {
            "name": "two",
            "site": site or SITE.model_dump(mode="json"),
            "clusters": GROW,
            "solver": {"time_limit_s": 60, "rel_gap": 0},
            "network_allowance": False,  # hand derivations count the racks alone
            **extra,
        }
    )


def roomy_power() -> dict:
    """The two-building site with every power node ×10: positions, not power, hold each building."""
    site = SITE.model_dump(mode="json")
    for b in site["buildings"]:
        for n in b["power_nodes"]:
            n["capacity_kw"] *= 10
        for h in b["halls"]:
            for n in h["power_nodes"]:
                n["capacity_kw"] *= 10
    return site


def rows_of(plan: Plan, building: str) -> list[str]:
    return sorted(r.model_dump_json() for r in plan.racks if r.building == building)


def test_a_step_inside_one_building_re_solves_that_building_alone() -> None:
    """Each building has 80 positions, 2 of them its pods' network racks: 78 Grand Teton racks of
    16 GPUs (2,496 GPUs in all), positions binding. Hall B1-H1 +10 % positions (8 rows 10 → 11)
    holds 8 racks more: +128 GPUs, found re-solving B1 alone; B2's racks stay as they were. The
    whole model of the relaxed scenario, solved independently, agrees (2,624)."""
    s = scenario(roomy_power())
    base = plan_scenario(s)
    assert base.objective_value == 2 * 78 * 16
    relaxed, step, _cost = _relaxed(s, "hall_positions", {"B1-H1"})
    assert step == "hall B1-H1 +8 positions"
    assert touched(s, relaxed) == ["B1"]
    got = replan_relaxed(s, relaxed, base, Deadline(60))
    assert got.buildings == ["B1"]
    assert got.why == ""
    assert got.plan is not None
    assert got.plan.objective_value == 2496 + 128
    assert rows_of(got.plan, "B2") == rows_of(base, "B2")
    assert got.plan.notes[0] == "re-planned from the base plan: buildings B1 solved again, the others kept"
    assert plan_scenario(relaxed).objective_value == 2624


def arrival_region():
    """Three phases, 1 MW arriving by q1 and 1 MW more by q2: the region of the decomposition's
    explain test (3,344 GPU-phases; +0.1 MW from q1 on buys 4 racks in each phase: +192)."""
    return scenario(
        phases=PHASES,
        power_arrival=[{"interconnect_mw": 1.0}, {"phase": "q2", "generation_mw": 1.0}],
    )


def test_a_region_step_goes_to_the_building_with_room_and_the_other_keeps_its_racks(monkeypatch) -> None:
    """One building picked for the arrival's step (REGION_PICK 1): it gets the whole 100 kW (the
    arrival less what the other draws in the base plan) and places 4 racks more in each phase:
    ⌊(1,100 − 51.84) / 23.112⌋ = 45 racks in q1 against 41, 88 in q2 and q3 against 84, as the
    whole model would: +4 × 16 × 3 = +192 GPU-phases; the other building's racks are untouched."""
    monkeypatch.setattr(rx, "REGION_PICK", 1)
    s = arrival_region()
    base = RegionReplanner("serial").base(s, Deadline(60))
    assert base.objective_value == 3344
    relaxed, step, _ = _relaxed(s, "power_arrival", {"q1"})
    assert step == "q1: +100 kW more interconnect"
    assert touched(s, relaxed) == []
    got = replan_relaxed(s, relaxed, base, Deadline(60))
    assert len(got.buildings) == 1
    other = {"B1": "B2", "B2": "B1"}[got.buildings[0]]
    assert got.plan is not None
    assert got.plan.objective_value == 3344 + 192
    assert rows_of(got.plan, other) == rows_of(base, other)
    per_phase = Counter(r.phase for r in got.plan.racks)
    assert (per_phase["q1"], per_phase["q1"] + per_phase["q2"]) == (45, 88)


def test_a_joined_re_plan_that_fails_verification_gives_no_gain(monkeypatch) -> None:
    """A re-solve whose racks stand where the kept building's racks already stand: the joined plan
    fails its verification whole, so the step has no plan and no gain, and says why."""
    s = scenario(roomy_power())
    base = plan_scenario(s)
    relaxed, _, _ = _relaxed(s, "hall_positions", {"B1-H1"})
    clash = [r for r in base.racks if r.building == "B2"][:1]

    def clashing(sub, **_kw):
        return Plan(scenario_name=sub.name, status="feasible", racks=clash)

    monkeypatch.setattr(rx, "plan_scenario", clashing)
    got = replan_relaxed(s, relaxed, base, Deadline(60))
    assert got.plan is None
    assert got.why.startswith("the joined re-plan fails verification")


def test_explain_at_region_scale_starts_no_re_plan_after_its_time_limit() -> None:
    """With the time limit spent, every chosen step says it was not re-planned, and none claims a gain."""
    s = scenario(roomy_power())
    base = plan_scenario(s)
    ex = explain_feasible(s, base, replan=RegionReplanner("serial"), deadline=Deadline(0.0))
    chosen = [r for r in ex.relaxations if r.step]
    assert chosen
    assert all(r.gain is None for r in chosen)
    assert {r.why for r in chosen} == {"not re-planned: 0 s left of the time limit"}
    assert "hall B1-H1 +8 positions: not re-planned: 0 s left of the time limit" in ex.render()


def test_where_shares_cannot_be_kept_the_relaxed_scenario_is_decomposed_afresh() -> None:
    """An exact 512-GPU job beside the growing one (the share rule keeps "as many as fit" clusters
    only): the relaxed scenario is decomposed afresh, every building named; positions still hold
    both buildings, so hall B1-H1 +8 positions buys the same 8 racks: 2,496 → 2,624 GPUs."""
    job = {"id": "job", "demand": "exact", "gpus": 512, "rack_types": [GT], "max_hops": 3}
    s = scenario_from_data(
        {
            "name": "two",
            "site": roomy_power(),
            "clusters": [job, *GROW],
            "solver": {"time_limit_s": 60, "rel_gap": 0},
        }
    )
    assert not rx.applies(s)
    planner = RegionReplanner("serial")
    base = planner.base(s, Deadline(60))
    assert base.objective_value == 2496
    relaxed, _, _ = _relaxed(s, "hall_positions", {"B1-H1"})
    got = planner.relaxed(s, relaxed, base, Deadline(60))
    assert got.buildings == ["B1", "B2"]
    assert got.plan is not None
    assert got.plan.objective_value == 2624
