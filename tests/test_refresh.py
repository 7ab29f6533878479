"""Refresh (§17): racks past their service life retire (positions, power, cooling and ports free from
that phase) and may be replaced; removal costs and the residual (book) value enter TCO. Hand-solved
instances (HiGHS and CBC), the verifier, bad input, the shipped six-year scenario."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.enums import SolverName
from planner.errors import InputError
from planner.plan.pipeline import plan_scenario
from planner.plan.rolling import plan_rolling
from planner.schema import Scenario
from planner.verifier import verify
from tests.conftest import tiny_scenario
from tests.test_optimize import SOLVERS, available_solvers
from tests.test_writes import cli

OLD = {
    "id": "old",
    "servers_per_rack": 1,
    "gpus_per_server": 8,
    "gpu_power_w": 500,
    "weight_kg": 300,
    "capex_usd": 100_000,
}
"""8 GPUs in a position, $100k."""
NEW = {
    "id": "new",
    "servers_per_rack": 4,
    "gpus_per_server": 8,
    "gpu_power_w": 500,
    "weight_kg": 600,
    "capex_usd": 400_000,
}
"""32 GPUs in a position, $400k, delivered from p2."""
PH = [
    {"id": "p1", "start": date(2026, 1, 1)},
    {"id": "p2", "start": date(2028, 1, 1)},
    {"id": "p3", "start": date(2030, 1, 1)},
]
"""Years 0, 2 and 4 (2026-01-01 to 2030-01-01 is 1,461 days: 4.0 years of 365.25 days)."""
MONEY = {
    "facility_usd_per_mw": 0,
    "energy_usd_per_kwh": 0,
    "maintenance_share_per_year": 0,
    "discount_rate": 0,
    "horizon_years": 6,
}
"""Only equipment capex counts, undiscounted, over six years (TCO by hand)."""
FABRIC = 4_200
"""The site's fabric cost per GPU (tiny_scenario's default): part of each rack's equipment capex."""


def hall(old_life: float | None = 4, solver: str = "highs", life: dict | None = None, **extra) -> Scenario:
    """One row of 4 positions; one cluster wanting at least 32 GPUs in every phase, of old racks
    (from p1) or new ones (supplied from p2); old racks serve ``old_life`` years ($10k to remove),
    new ones 4."""
    if life is None:
        life = {
            "new": {"years": 4},
            **({"old": {"years": old_life, "removal_cost_usd": 10_000}} if old_life else {}),
        }
    s = tiny_scenario(
        [{"id": "R", "positions": 4, "feeds": ["F"]}],
        [{"id": "F", "capacity_kw": 10_000}],
        [{"id": "c", "demand": "at_least", "gpus": 32, "rack_types": ["old", "new"]}],
        rack_types=[OLD, NEW],
        phases=PH,
        supply=[{"rack_type": "new", "phase": "p2", "racks": 100}],
        costs=extra.pop("costs", MONEY),
        service_life=life,
        **extra,
    )
    return s.model_copy(
        update={"solver": s.solver.model_copy(update={"name": SolverName(solver), "rel_gap": 0.0})}
    )


def solved(s: Scenario):
    if s.solver.name not in available_solvers():
        pytest.skip(f"{s.solver.name} not installed")
    plan = plan_scenario(s)
    rep = verify(plan, s)
    assert rep.ok, rep.violations
    return plan


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_two_year_life_from_new_year_2026_retires_in_2028_by_the_calendar(solver: str) -> None:
    """Old racks placed in p1 (2026-01-01) with a 2-year life end on 2028-01-01, the day p2 starts
    (730 days: 1.9986 years of 365.25 days, which once kept them to 2030): they retire at p2 and 4 new
    racks stand from p2: 32 + 128 + 128 = 288 GPU-phases. Money by hand: capex 534,400 + 2,137,600,
    removal 40,000, no residual (the old racks are written off, the new ones placed at year 2 with a
    4-year life are written off at year 6): TCO 2,712,000. The verifier counts the calendar itself:
    a plan that keeps the old racks to p3 is refused."""
    plan = solved(hall(old_life=2, solver=solver))
    assert plan.objective_value == 288
    assert sorted((r.position, r.rack_type, r.phase, r.retired) for r in plan.racks) == [
        (i, t, ph, gone) for i in range(4) for t, ph, gone in (("new", "p2", None), ("old", "p1", "p2"))
    ]
    assert plan.kpis.tco_usd == 2_712_000
    kept = plan.model_copy(
        update={
            "racks": [
                r.model_copy(update={"retired": "p3"}) if r.rack_type == "old" else r for r in plan.racks
            ]
        }
    )
    lines = [str(v) for v in verify(kept, hall(old_life=2, solver=solver)).violations]
    assert "racks[0] (R/0): says retired from p3; its service life ends in p2" in lines, lines


@pytest.mark.parametrize("solver", SOLVERS)
def test_racks_are_replaced_when_their_life_ends(solver: str) -> None:
    """p1 wants 32 GPUs and only old racks exist: 4 of them fill the row. With a 4-year life they
    retire at p3 (year 4) and 4 new racks take their positions: 32 + 32 + 128 = 192 GPU-phases.
    Money by hand (equipment only, no discounting, horizon 6): capex 4 × (100k + 8 × 4.2k) +
    4 × (400k + 32 × 4.2k) = 534,400 + 2,137,600 = 2,672,000; removal 4 × 10k = 40k; the old racks
    are fully depreciated when they go (no residual), the new ones placed at year 4 with a 4-year
    life keep 1 − 2/4 = half their equipment at year 6: 1,068,800. TCO = 2,672,000 + 40,000 −
    1,068,800 = 1,643,200; depreciation of the racks standing at the end 4 × 534,400 / 4 a year."""
    plan = solved(hall(solver=solver))
    assert plan.objective_value == 192
    assert [(p.phase, p.gpus, p.racks, p.new_racks) for p in plan.phases] == [
        ("p1", 32, 4, 4),
        ("p2", 32, 4, 0),
        ("p3", 128, 4, 4),
    ]
    assert sorted((r.position, r.rack_type, r.phase, r.retired) for r in plan.racks) == [
        (i, t, ph, gone) for i in range(4) for t, ph, gone in (("new", "p3", None), ("old", "p1", "p3"))
    ]
    k = plan.kpis
    assert (k.gpus, k.racks, k.retired_racks) == (128, 4, 4)
    assert (k.capex_usd, k.removal_usd, k.residual_value_usd, k.tco_usd) == (
        2_672_000,
        40_000,
        1_068_800,
        1_643_200,
    )
    assert (
        k.depreciation_usd_per_year == 4 * 534_400 / 4
    )  # the new racks standing at the end, over their 4 years


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_facility_life_leaves_the_build_on_the_books_when_the_racks_retire(solver: str) -> None:
    """The replacement case above with a facility build of $1,000 per kW and a 10-year facility life:
    the old racks (4 kW each, year 0) cost 4 × 4,000 = 16,000 of build, the new ones (16 kW, year 4)
    4 × 16,000 = 64,000. At the horizon (year 6) the old positions' build keeps 1 − 6/10 = 40 %
    (6,400: the building stays when its racks retire), the new ones' 1 − 2/10 = 80 % (51,200):
    residual 1,068,800 + 57,600 = 1,126,400; capex 2,672,000 + 80,000; TCO 1,643,200 + 80,000 −
    57,600 = 1,665,600. Without a facility life the build counts whole (TCO 1,723,200). The
    verifier recounts it and refuses a plan claiming the residual without the facility's."""
    money = {**MONEY, "facility_usd_per_mw": 1_000_000, "facility_life_years": 10}
    s = hall(solver=solver, costs=money)
    plan = solved(s)
    assert plan.objective_value == 192
    k = plan.kpis
    assert (k.capex_usd, k.residual_value_usd, k.tco_usd) == (2_752_000, 1_126_400, 1_665_600)
    whole = solved(hall(solver=solver, costs={**money, "facility_life_years": None}))
    assert whole.kpis.tco_usd == 1_723_200
    claimed = plan.model_copy(update={"kpis": k.model_copy(update={"residual_value_usd": 1_068_800})})
    lines = [str(v) for v in verify(claimed, s).violations]
    assert any("residual_value_usd" in line for line in lines), lines


@pytest.mark.parametrize("solver", SOLVERS)
def test_no_refresh_before_the_life_ends(solver: str) -> None:
    """With a 5-year life the old racks are still within it at p3 (year 4): they stand to the end,
    the row stays full, no new rack fits: 32 × 3 = 96 GPU-phases. Without any service life, the same."""
    assert solved(hall(old_life=5, solver=solver)).objective_value == 96
    plain = hall(old_life=None, solver=solver).model_copy(update={"service_life": {}})
    assert solved(plain).objective_value == 96


def test_rolling_reuses_the_positions_racks_retire_from() -> None:
    """Rolling (phase by phase) places the old racks in p1, nothing in p2 (the row is full) and the
    new racks in p3 where the old ones retired: 192, as joint."""
    s = hall()
    plan = plan_rolling(s)
    assert verify(plan, s).ok
    assert plan.objective_value == 192


def test_the_verifier_holds_a_position_until_its_rack_retires() -> None:
    s = hall()
    plan = plan_scenario(s)
    early = [r.model_copy(update={"phase": "p2"}) if r.rack_type == "new" else r for r in plan.racks]
    lines = [str(v) for v in verify(plan.model_copy(update={"racks": early}), s).violations]
    assert any("position already holds racks[" in line and "] then" in line for line in lines), lines
    wrong = [r.model_copy(update={"retired": None}) for r in plan.racks]
    lines = [str(v) for v in verify(plan.model_copy(update={"racks": wrong}), s).violations]
    assert any("says retired from never; its service life ends in p3" in line for line in lines), lines


@pytest.mark.parametrize(
    ("life", "expected"),
    [
        ({"h100-box": {"years": 4}}, "service_life.h100-box: unknown rack type 'h100-box'"),
        ({"old": {"years": 0}}, "service_life.old.years"),
    ],
)
def test_bad_service_life_names_the_field(life, expected) -> None:
    with pytest.raises(InputError) as e:
        hall(life=life)
    assert any(line.startswith(expected) for line in e.value.lines()), e.value.lines()


def test_a_service_life_needs_phases() -> None:
    with pytest.raises(InputError) as e:
        tiny_scenario(
            [{"id": "R", "positions": 4, "feeds": ["F"]}],
            [{"id": "F", "capacity_kw": 10_000}],
            [{"id": "c", "demand": "max", "rack_types": ["old"]}],
            rack_types=[OLD],
            service_life={"old": {"years": 4}},
        )
    assert any(line.startswith("service_life.old: the scenario has no phases") for line in e.value.lines()), (
        e.value.lines()
    )


def test_the_shipped_refresh_scenario(tmp_path: Path) -> None:
    """datasets/hall-refresh.yaml: 48 H100 racks (768 GPUs) from 2026 retire at the start of 2030;
    each row's loop, rack power and busways are bought in 2029 (a year's lead) and 16 NVL72 racks
    (1,152 GPUs, the allocation) stand from 2030. Checked by planner verify."""
    out = tmp_path / "plan.yaml"
    r = cli("plan", "datasets/hall-refresh.yaml", "-o", str(out))
    assert r.returncode == 0, r.stderr
    v = cli("verify", str(out), "datasets/hall-refresh.yaml")
    assert v.returncode == 0, v.stdout
    from planner.plan import load_plan

    plan = load_plan(out)
    assert plan.status == "optimal"
    assert [(p.phase, p.gpus) for p in plan.phases] == [
        ("y2026", 768),
        ("y2027", 768),
        ("y2028", 768),
        ("y2029", 768),
        ("y2030", 1152),
        ("y2031", 1152),
    ]
    assert {b.phase for b in plan.retrofits} == {"y2029"}
    assert len(plan.retrofits) == 16
    assert plan.kpis.retired_racks == 48
    assert plan.kpis.removal_usd == 48 * 5_000


def test_spares_and_spread_with_a_service_life_are_refused() -> None:
    with pytest.raises(InputError) as e:
        tiny_scenario(
            [{"id": "R", "positions": 4, "feeds": ["F"]}],
            [{"id": "F", "capacity_kw": 10_000}],
            [{"id": "c", "demand": "max", "rack_types": ["old"], "max_share_per_pod": 0.5}],
            rack_types=[OLD],
            phases=PH,
            service_life={"old": {"years": 4}},
        )
    assert any(
        line.startswith(
            "clusters[0]: hot spares and failure-domain spread are not planned yet for rack types with a "
            "service life (old)"
        )
        for line in e.value.lines()
    ), e.value.lines()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    positions=st.integers(2, 6),
    old_life=st.sampled_from([1.5, 2.0, 3.0, 4.0, 4.5, 7.0]),
    new_life=st.sampled_from([2.0, 4.0, 9.0]),
    racks=st.integers(1, 6),
)
def test_any_service_lives_give_plans_that_verify_and_rolling_never_beats_joint(
    positions: int, old_life: float, new_life: float, racks: int
) -> None:
    """Random service lives over the three phases (years 0, 2, 4): the joint plan and the rolling
    plan verify (a position holds one rack at a time, every phase within its limits), rolling never
    beats joint (joint is optimal over the same choices), and no phase stands more racks than the
    row's positions. The demand (at least 8 GPUs per old rack, p1 has only old racks) fits the row."""
    gpus = 8 * min(racks, positions)
    s = tiny_scenario(
        [{"id": "R", "positions": positions, "feeds": ["F"]}],
        [{"id": "F", "capacity_kw": 10_000}],
        [{"id": "c", "demand": "at_least", "gpus": gpus, "rack_types": ["old", "new"]}],
        rack_types=[OLD, NEW],
        phases=PH,
        supply=[{"rack_type": "new", "phase": "p2", "racks": 100}],
        costs=MONEY,
        service_life={"old": {"years": old_life, "removal_cost_usd": 10_000}, "new": {"years": new_life}},
    )
    joint = plan_scenario(s)
    assert joint.status == "optimal"
    assert verify(joint, s).ok
    rolling = plan_rolling(s)
    if rolling.status.has_plan:
        assert verify(rolling, s).ok
        assert rolling.objective_value <= joint.objective_value + 1e-6
    assert all(p.racks <= positions for p in joint.phases)
