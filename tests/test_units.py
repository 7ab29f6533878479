"""Multi-rack units (SPEC §18): a rack type that takes adjacent positions of one row (Meta's
Catalina pod: CDU·CDU·GPU·GPU·CDU·CDU). Hand-solved instances, the verifier, the catalog entry."""

from __future__ import annotations

import pytest

from planner.errors import InputError
from planner.input.loader import scenario_from_data
from planner.verifier import verify
from tests.conftest import tiny_scenario
from tests.test_optimize import SOLVERS, solved

FEED = [{"id": "F", "capacity_kw": 10_000}]
ROLES = ["CDU", "CDU", "GPU", "GPU", "CDU", "CDU"]
POD6 = {
    "id": "pod6",
    "servers_per_rack": 18,
    "gpus_per_server": 4,
    "gpu_power_w": 1000,
    "overhead_power_kw": 8.0,
    "weight_kg": 4400,
    "capex_usd": 3_600_000,
    "parts": [
        {"role": r, "power_share": 0.46 if r == "GPU" else 0.02, "weight_kg": 1000 if r == "GPU" else 600}
        for r in ROLES
    ],
}
"""A 6-wide unit: 72 GPUs at 1 kW + 8 kW = 80 kW; each GPU position 0.46 × 80 = 36.8 kW, each CDU 1.6 kW."""
ONE = {
    "id": "one",
    "servers_per_rack": 1,
    "gpus_per_server": 8,
    "gpu_power_w": 500,
    "weight_kg": 300,
    "capex_usd": 100_000,
}
"""A plain 8-GPU, 4 kW rack."""


def unit_site(reserved=(4,), positions=14, clusters=None, max_kw=40.0):
    rows = [
        {
            "id": "R",
            "positions": positions,
            "feeds": ["F"],
            "max_rack_power_kw": max_kw,
            "reserved": list(reserved),
        }
    ]
    clusters = clusters or [{"id": "big", "demand": "max", "rack_types": ["pod6"]}]
    return tiny_scenario(rows, FEED, clusters, rack_types=[POD6, ONE])


@pytest.mark.parametrize("solver", SOLVERS)
def test_one_unit_fits_in_the_run_after_the_reserved_position(solver: str) -> None:
    """14 positions, position 4 reserved: runs 0..3 (4) and 5..13 (9). A 6-wide unit fits once, in
    5..10, not twice as 13 free positions would suggest: 72 GPUs."""
    plan = solved(unit_site(), solver)
    assert [(r.rack_type, r.position) for r in plan.racks] == [("pod6", 5)]
    assert plan.kpis.gpus == 72


@pytest.mark.parametrize("solver", SOLVERS)
def test_units_and_plain_racks_share_a_row(solver: str) -> None:
    """The same row, both types for one max cluster (GPUs): plain racks alone give 13 × 8 = 104; one
    unit in 5..10 (72 GPUs) and plain racks on the 13 − 6 = 7 positions left (0..3, 11..13), 7 × 8 =
    56: 128. Two units would need two runs of 6."""
    s = unit_site(clusters=[{"id": "big", "demand": "max", "rack_types": ["pod6", "one"]}])
    plan = solved(s, solver)
    assert plan.kpis.gpus == 72 + 7 * 8
    assert sorted(r.position for r in plan.racks if r.rack_type == "one") == [0, 1, 2, 3, 11, 12, 13]
    assert [r.position for r in plan.racks if r.rack_type == "pod6"] == [5]


def test_without_the_reserved_position_two_units_fit() -> None:
    """14 free positions in one run: ⌊14 / 6⌋ = 2 units (0..5, 6..11): 144 GPUs."""
    plan = solved(unit_site(reserved=()), "highs")
    assert [r.position for r in plan.racks] == [0, 6]


def test_a_unit_position_over_the_rows_rack_limit_keeps_it_out() -> None:
    """A GPU position draws 36.8 kW: a row limited to 30 kW per position takes no unit."""
    plan = solved(unit_site(reserved=(), max_kw=30.0), "highs")
    assert plan.racks == []


@pytest.mark.parametrize(
    ("position", "message"),
    [
        (
            2,
            "racks[0] (R/2): pod6 takes 6 adjacent positions 2..7 (CDU·CDU·GPU·GPU·CDU·CDU): split by "
            "reserved position 4",
        ),
        (
            9,
            "racks[0] (R/9): pod6 takes 6 adjacent positions 9..14 (CDU·CDU·GPU·GPU·CDU·CDU); row 'R' ends "
            "at position 13",
        ),
    ],
)
def test_the_verifier_rejects_a_split_unit(position: int, message: str) -> None:
    s = unit_site()
    plan = solved(s, "highs")
    moved = plan.model_copy(
        update={
            "racks": [plan.racks[0].model_copy(update={"position": position, "x_m": 0.6 * position})],
            "kpis": None,
            "utilisation": None,
        }
    )
    assert message in [str(v) for v in verify(moved, s).violations]


def test_the_verifier_rejects_a_rack_inside_a_unit() -> None:
    s = unit_site(clusters=[{"id": "big", "demand": "max", "rack_types": ["pod6", "one"]}])
    plan = solved(s, "highs")
    one = next(r for r in plan.racks if r.rack_type == "one")
    inside = one.model_copy(update={"position": 7, "x_m": 0.6 * 7})
    bad = plan.model_copy(
        update={
            "racks": [*(r for r in plan.racks if r is not one), inside],
            "kpis": None,
            "utilisation": None,
        }
    )
    messages = [str(v) for v in verify(bad, s).violations]
    assert any("position 7 already holds" in m or "position already holds" in m for m in messages), messages


def test_parts_must_add_up() -> None:
    bad = {**POD6, "parts": [{**p, "power_share": 0.5} for p in POD6["parts"]]}
    with pytest.raises(InputError) as e:
        scenario_from_data({**unit_site().model_dump(mode="json"), "catalog": {"rack_types": [bad, ONE]}})
    assert any("parts: the power shares add up to 3, not 1" in line for line in e.value.lines()), (
        e.value.lines()
    )


def test_the_floor_plan_draws_a_unit_as_one_block() -> None:
    from ui.floorplan import floor_figure, floor_positions

    s = unit_site()
    plan = solved(s, "highs")
    records = {(round(r["x"], 1)): r for r in floor_positions(s, plan, "H1")}
    # positions 5..10 hold the unit (pitch 0.6 m from x = 0): all six coloured as pod6, one block
    assert [records[round(0.6 * q, 1)]["label"] for q in range(4, 12)] == ["reserved", *["pod6"] * 6, "empty"]
    assert (
        "part 3 of 6: GPU, 36.8 kW drawn, 36.8 kW of heat to room air (unit at positions 5..10)"
        in records[round(0.6 * 7, 1)]["hover"]
    )
    fig = floor_figure(s, plan, "H1")
    rects = [sh for sh in fig.layout.shapes if sh.type == "rect"]
    assert len(rects) == 1
    assert (round(rects[0].x0, 2), round(rects[0].x1, 2)) == (
        round(0.6 * 5 - 0.35, 2),
        round(0.6 * 10 + 0.35, 2),
    )


def test_the_catalina_pod_runs_in_an_air_hall_where_an_nvl72_cannot() -> None:
    """The shipped catalog's Catalina-style pod (six positions, 120 kW, sidecars rejecting into room
    air) in a row of 12 positions limited to 60 kW per position, with an air zone and no liquid loop:
    ⌊12 / 6⌋ = 2 pods = 144 GPUs and 240 kW of air heat; a GB200 NVL72 rack needs a liquid loop, and
    a plain row can take none."""
    rows = [{"id": "R", "positions": 12, "feeds": ["F"], "max_rack_power_kw": 60}]
    s = tiny_scenario(
        rows, FEED, [{"id": "big", "demand": "max", "rack_types": ["catalina-gb200-pod", "gb200-nvl72"]}]
    )
    plan = solved(s, "highs")
    assert [(r.rack_type, r.position) for r in plan.racks] == [
        ("catalina-gb200-pod", 0),
        ("catalina-gb200-pod", 6),
    ]
    assert plan.kpis.gpus == 144
    air = next(u for u in plan.utilisation if u.kind == "cooling_zone" and u.id == "AIR")
    assert air.value == pytest.approx(240.0)
    t = s.catalog.by_id()["catalina-gb200-pod"]
    assert ([p.role for p in t.parts], t.rated_power_kw) == (ROLES, pytest.approx(120.0))


def test_the_catalina_pod_is_as_meta_built_it_trays_and_heat_by_position() -> None:
    """Meta's Catalina (facts): 18 compute trays per IT rack of 2 B200 GPUs (36 trays, 72 GPUs per
    pod), so a server failure takes 2 GPUs; the pod draws 36 × (2 × 1.2 + 0.75) + 6.6 = 120 kW, 57 kW
    at each IT rack and 1.5 kW at each sidecar, yet ~20 kW of heat leaves every one of its six
    positions into the room (the four ALCs reject the IT racks' liquid heat, the IT racks their
    air-cooled parts)."""
    from planner.input.loader import load_catalog

    t = load_catalog().by_id()["catalina-gb200-pod"]
    assert (t.servers_per_rack, t.gpus_per_server, t.gpus) == (36, 2, 72)
    assert t.rated_power_kw == pytest.approx(120.0)
    assert [round(120 * p.power_share, 6) for p in t.parts] == [1.5, 1.5, 57.0, 57.0, 1.5, 1.5]
    assert [120 * h for h in t.position_heat_shares()] == pytest.approx([20.0] * 6, abs=1e-3)


def test_heat_shares_are_stated_for_every_part_or_none() -> None:
    from pydantic import ValidationError

    from planner.schema.catalog import RackType

    parts = [dict(p) for p in POD6["parts"]]
    parts[0]["heat_share"] = 0.5
    with pytest.raises(ValidationError) as e:
        RackType(**{**POD6, "parts": parts})
    assert "parts: heat shares are stated for every part and add up to 1 (some parts state none)" in str(
        e.value
    )
    every = [{**p, "heat_share": 0.2} for p in POD6["parts"]]
    with pytest.raises(ValidationError) as e:
        RackType(**{**POD6, "parts": every})
    assert "parts: heat shares are stated for every part and add up to 1 (they add up to 1.2, not 1)" in str(
        e.value
    )


def test_rolling_keeps_earlier_units_whole() -> None:
    """Rolling planning carries earlier phases' units as installed racks, each holding its six
    positions: in a row of 14 free positions (two units) one unit stands in p1 and the second in p2
    beside it, never in it; 72 then 144 GPUs, and the plan verifies."""
    from planner.plan.rolling import plan_rolling
    from tests.test_phases import PHASES

    rows = [{"id": "R", "positions": 14, "feeds": ["F"], "max_rack_power_kw": 40.0}]
    s = tiny_scenario(
        rows,
        FEED,
        [{"id": "big", "demand": "max", "gpus_by_phase": {"p1": 72, "p2": 144}, "rack_types": ["pod6"]}],
        rack_types=[POD6, ONE],
        phases=PHASES,
    )
    plan = plan_rolling(s)
    assert verify(plan, s).ok
    units = sorted((r.position, r.phase) for r in plan.racks)
    assert [p for _, p in units] in (["p1", "p2"], ["p2", "p1"])
    assert abs(units[0][0] - units[1][0]) >= 6
    assert [p.gpus for p in plan.phases] == [72, 144]


def lived_units(years: float):
    """Two 6-wide units wanted (72 GPUs from p1 = 2026-01-01, 144 from p2 = 2030-01-01, 4.0 years
    later), a service life of ``years``; only equipment counts, undiscounted, over 5 years."""
    from datetime import date

    rows = [{"id": "R", "positions": 14, "feeds": ["F"], "max_rack_power_kw": 40.0}]
    money = {
        "facility_usd_per_mw": 0,
        "energy_usd_per_kwh": 0,
        "maintenance_share_per_year": 0,
        "discount_rate": 0,
        "horizon_years": 5,
    }
    return tiny_scenario(
        rows,
        FEED,
        [{"id": "big", "demand": "max", "gpus_by_phase": {"p1": 72, "p2": 144}, "rack_types": ["pod6"]}],
        rack_types=[POD6, ONE],
        phases=[{"id": "p1", "start": date(2026, 1, 1)}, {"id": "p2", "start": date(2030, 1, 1)}],
        service_life={"pod6": {"years": years}},
        costs=money,
    )


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_unit_whose_life_outlasts_the_phases_leaves_its_book_value(solver: str) -> None:
    """A 10-year life never ends within the phases, so units may have one: each unit's equipment is
    3,600,000 + 72 × 4,200 (the site's fabric per GPU) = 3,902,400; at the horizon (year 5) the p1
    unit keeps 1 − 5/10 = 50 %, the p2 unit (year 4) 1 − 1/10 = 90 %: residual 1.4 × 3,902,400 =
    5,463,360, TCO 2 × 3,902,400 − 5,463,360 = 2,341,440."""
    plan = solved(lived_units(10), solver)
    assert [p.gpus for p in plan.phases] == [72, 144]
    assert (plan.kpis.residual_value_usd, plan.kpis.tco_usd) == (
        pytest.approx(5_463_360),
        pytest.approx(2_341_440),
    )


def test_a_unit_whose_life_ends_within_the_phases_is_refused() -> None:
    """A 2-year life from 2026 ends before p2 (2030): a unit would retire within the phases, which
    is planned for one-position racks only."""
    with pytest.raises(InputError) as e:
        lived_units(2)
    assert (
        "service_life: service lives that end within the phases are planned for one-position rack types "
        "only; the clusters use multi-rack units (pod6)"
    ) in str(e.value)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_cable_band_edge_costs_no_unit(solver: str) -> None:
    """A row of 12 free positions at y = −1.2 m: cables of 0.6 i + 1.2 + 3.0 m put positions 0–1
    within the 5 m copper reach and 2–11 beyond it, two bands. On the floor ⌊12 / 6⌋ = 2 units fit
    (0..5, 6..11): 144 GPUs; counted band by band only ⌊2 / 6⌋ + ⌊10 / 6⌋ = 1 would."""
    rows = [{"id": "R", "positions": 12, "feeds": ["F"], "max_rack_power_kw": 40.0, "origin_y_m": -1.2}]
    s = tiny_scenario(
        rows, FEED, [{"id": "big", "demand": "max", "rack_types": ["pod6"]}], rack_types=[POD6, ONE]
    )
    plan = solved(s, solver)
    assert plan.kpis.gpus == 144
    assert sorted(r.position for r in plan.racks) == [0, 6]
    from planner.plan.pipeline import plan_scenario

    alone = plan_scenario(s, warm_start=False)  # the model itself, without first-fit's plan
    assert (alone.status, alone.kpis.gpus) == ("optimal", 144)


def test_first_fit_stands_where_the_model_cannot_take_its_units(monkeypatch) -> None:
    """The same row with band edges splitting runs again (as before they were snapped): the model
    holds one unit (72 GPUs) and cannot take first-fit's two as its start; first-fit's plan, valued
    from its racks and verified, is the better answer and stands, with the solver's bound dropped
    (72 bounds nothing above 144)."""
    from planner.model import classes

    monkeypatch.setattr(classes, "_snap_to_units", lambda groups, width: None)
    rows = [{"id": "R", "positions": 12, "feeds": ["F"], "max_rack_power_kw": 40.0, "origin_y_m": -1.2}]
    s = tiny_scenario(
        rows, FEED, [{"id": "big", "demand": "max", "rack_types": ["pod6"]}], rack_types=[POD6, ONE]
    )
    from planner.plan.pipeline import plan_scenario

    assert plan_scenario(s, warm_start=False).kpis.gpus == 72
    plan = plan_scenario(s)
    assert verify(plan, s).ok
    assert (plan.status, plan.solver, plan.kpis.gpus) == ("feasible", "greedy", 144)
    assert plan.bound_source != "solver"
    assert plan.notes[0].startswith("the solver's plan is worse than first-fit's")
