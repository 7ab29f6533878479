"""Power the grid accepts (§21), by hand: a training swing that binds in one phase and the storage
that relaxes it; a GPU power floor chosen over storage where energy is cheap; N-1 while a UPS or a
cooling unit is in maintenance; water and carbon of two sources, and a carbon price that changes
the source; every check of the verifier on a plan that breaks it.

Grand Teton H100 racks: 21.4 kW, 16 GPUs. With a trough of 0.4 of peak a rack swings
21.4 × 0.6 = 12.84 kW = 0.01284 MW."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.enums import Status
from planner.errors import InputError
from planner.input.loader import scenario_from_data
from planner.plan.pipeline import plan_scenario
from planner.verifier import verify
from tests.conftest import tiny_scenario
from tests.test_optimize import SOLVERS, solved
from tests.test_region_power import GT, arrival_site

SWING = 21.4 * 0.6 / 1000  # MW a rack
STORE_PER_MW = 300_000 + 0.25 * 300_000  # defaults: $/MW + 0.25 h × $/MWh
ANNUITY_5Y = (1 - 1.08**-5) / math.log(1.08)  # 1 USD a year over 5 years at 8 %, continuous


def swing_site(storage: bool, floor: bool, **more):
    """arrival_site (one row of 10 positions, 1 MW arrived) with swings accepted: 0.05 MW from the start
    (ramp 1 MW/s × 1 s, range 0.05 MW) and 0.1 MW more from p2."""
    s = arrival_site([{"interconnect_mw": 1}, {"phase": "p2", "dynamic_range_mw": 0.1, "ramp_mw_per_s": 1}])
    data = s.model_dump(mode="json")
    data["power_stability"] = {
        "dynamic_range_mw": 0.05,
        "ramp_mw_per_s": 1,
        "storage": storage,
        "floor": floor,
        **more,
    }
    return scenario_from_data(data)


def one_phase(price_usd_per_kwh: float):
    """Ten racks asked for exactly (160 GPUs), no phases; 0.05 MW of swing accepted: 10 × 0.01284 −
    0.05 = 0.0784 MW to absorb, by storage or a floor (min_tco chooses)."""
    rows = [{"id": "R", "positions": 10, "feeds": ["F"], "max_rack_power_kw": 25}]
    return tiny_scenario(
        rows,
        [{"id": "F", "capacity_kw": 10_000}],
        [{"id": "air", "demand": "exact", "gpus": 160, "rack_types": [GT]}],
        pue=1.25,
        objective="min_tco",
        power_stability={"dynamic_range_mw": 0.05, "ramp_mw_per_s": 1},
        costs={"energy_usd_per_kwh": price_usd_per_kwh},
    )


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_swing_limit_binds_in_one_phase(solver: str) -> None:
    """Neither storage nor a floor: p1 accepts 0.05 MW: ⌊0.05 / 0.01284⌋ = 3 racks; p2 0.15 MW:
    ⌊0.15 / 0.01284⌋ = 11, the row holds 10. GPU-phases 3 × 16 + 10 × 16 = 208."""
    plan = solved(swing_site(False, False), solver)
    assert [(p.phase, p.racks) for p in plan.phases] == [("p1", 3), ("p2", 10)]
    assert plan.objective_value == 208
    g = plan.grid.phases
    assert [(x.phase, x.swing_cluster, x.accepted_mw) for x in g] == [
        ("p1", "air", 0.05),
        ("p2", "air", 0.15),
    ]
    assert g[0].swing_mw == pytest.approx(3 * SWING)
    assert g[1].swing_mw == pytest.approx(10 * SWING)
    assert (g[0].storage_mw, g[0].floor_mw, plan.grid.storage_capex_usd) == ({}, {}, 0)


@pytest.mark.parametrize("solver", SOLVERS)
def test_storage_relaxes_the_swing_limit_priced_by_hand(solver: str) -> None:
    """Storage allowed: all 10 racks from p1, swing 0.1284 MW against 0.05 accepted: 0.0784 MW of
    storage bought in p1 (kept in p2, where 0.15 MW would be accepted anyway), 0.0784 × $375,000 =
    $29,400 in capex, all of it spent in p1. GPU-phases 320."""
    plan = solved(swing_site(True, False), solver)
    assert [p.racks for p in plan.phases] == [10, 10]
    g = plan.grid.phases
    assert [x.storage_mw for x in g] == [{"B1": pytest.approx(0.0784)}, {"B1": pytest.approx(0.0784)}]
    assert plan.grid.storage_capex_usd == pytest.approx(0.0784 * STORE_PER_MW) == pytest.approx(29_400)
    assert plan.kpis.capex_storage_usd == pytest.approx(29_400)
    without = plan.phases[0].capex_usd - 29_400
    assert without > 0
    assert sum(p.capex_usd for p in plan.phases) == pytest.approx(plan.kpis.capex_usd)


def test_explain_names_the_swing_that_binds() -> None:
    """+10 % of p1's 0.05 MW accepted: 0.055 / 0.01284 → 4 racks in p1 (+16 GPU-phases); +10 % of p2's
    0.15 MW frees nothing (the row is full)."""
    from planner.explainer import explain_feasible

    s = swing_site(False, False)
    plan = solved(s, "highs")
    ex = explain_feasible(s, plan, time_limit_s=20)
    got = {(r.label, r.step, r.gain) for r in ex.relaxations}
    assert ("training swing p1", "p1: +5 kW more ramp acceptance", 16.0) in got, got
    assert "p1: +5 kW more ramp acceptance → +16 GPU-phases" in ex.render()


def _storage_npv(mw: float, price: float) -> float:
    """Storage bought at year 0 for 5 years: capex less its book value at year 5 (15-year life: 2/3
    left), discounted; plus its losses: mw × 0.3 × 8,760 h × (1 − 0.9) × price a year."""
    capex = mw * STORE_PER_MW
    return capex - capex * (2 / 3) * 1.08**-5 + mw * 0.3 * 8760 * 0.1 * price * ANNUITY_5Y


def _floor_npv(mw: float, price: float) -> float:
    """A floor of mw held for 0.3 of 8,760 h a year at PUE 1.25 for 5 years."""
    return mw * 0.3 * 8760 * price * 1.25 * ANNUITY_5Y


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_power_floor_is_chosen_over_storage_where_energy_is_cheap(solver: str) -> None:
    """At $10 per MWh a floor of 0.0784 MW costs _floor_npv ≈ $10.7k over 5 years, storage ≈ $16.9k:
    the floor. At the default $89.20 the floor costs ≈ $95k, storage ≈ $23.7k: storage."""
    cheap = solved(one_phase(0.01), solver)
    assert _floor_npv(0.0784, 10) < _storage_npv(0.0784, 10)
    g = cheap.grid.phases[0]
    assert (g.floor_mw, g.storage_mw) == ({"B1": pytest.approx(0.0784)}, {})
    assert cheap.grid.tco_usd == pytest.approx(_floor_npv(0.0784, 10), rel=1e-4)
    assert cheap.grid.storage_capex_usd == 0
    dear = solved(one_phase(0.0892), solver)
    assert _storage_npv(0.0784, 89.2) < _floor_npv(0.0784, 89.2)
    g = dear.grid.phases[0]
    assert (g.floor_mw, g.storage_mw) == ({}, {"B1": pytest.approx(0.0784)})
    assert dear.grid.tco_usd == pytest.approx(_storage_npv(0.0784, 89.2), rel=1e-4)
    assert dear.kpis.capex_storage_usd == pytest.approx(29_400)


def maintained_site(maintenance: list[dict], zone_units: int = 1, redundant: int = 0):
    """One row of 10 positions fed by three UPS of 100 kW each (every row on all three: a third each,
    half each when one is out, all on one when two are)."""
    ups = [{"id": f"UPS-{x}", "kind": "ups", "capacity_kw": 100} for x in "ABC"]
    rows = [{"id": "R", "positions": 10, "feeds": ["UPS-A", "UPS-B", "UPS-C"], "max_rack_power_kw": 25}]
    zone = {
        "id": "AIR",
        "medium": "air",
        "units": zone_units,
        "unit_capacity_kw": 10_000 / zone_units,
        "redundant_units": redundant,
    }
    return tiny_scenario(
        rows,
        ups,
        [{"id": "air", "demand": "max", "rack_types": [GT]}],
        zones=[zone],
        maintenance=maintenance,
    )


@pytest.mark.parametrize("solver", SOLVERS)
def test_n1_during_ups_maintenance_costs_the_hand_computed_gpus(solver: str) -> None:
    """N-1: one UPS failed, the other two carry half each: ⌊200 / 21.4⌋ = 9 racks, 144 GPUs. With UPS
    maintenance one out and one failed leave all on one: ⌊100 / 21.4⌋ = 4 racks, 64 GPUs. The level
    costs 80 GPUs; the N-1 plan fails verification under it."""
    n1 = solved(maintained_site([]), solver)
    assert n1.kpis.gpus == 144
    kept = maintained_site([{"kind": "ups"}])
    plan = solved(kept, solver)
    assert plan.kpis.gpus == 64
    if solver == "highs":  # explain prices the level: N-1 only gives the 80 GPUs back
        from planner.explainer import explain_feasible

        text = explain_feasible(kept, plan, time_limit_s=20).render()
        assert "maintenance level (ups): N-1 only would give +80 GPUs" in text, text
    rep = verify(n1.model_copy(update={"scenario_hash": ""}), kept)
    assert "UPS-C: load 192.6 kW exceeds 100 kW while UPS-A is maintained and UPS-B fails" in [
        str(v) for v in rep.violations
    ], rep.violations


def test_the_blast_radius_shows_what_a_failure_during_maintenance_takes_down() -> None:
    """2N: every row on UPS-A and UPS-B (100 kW each). N-1 lets 4 racks stand (85.6 kW on one UPS); UPS
    maintenance costs nothing in capacity (no survivor carries more), but UPS-B failing while UPS-A is
    maintained leaves the row with no feed: all 64 GPUs down; the N-1 rows hold."""
    ups = [{"id": f"UPS-{x}", "kind": "ups", "capacity_kw": 100} for x in "AB"]
    rows = [
        {"id": "R", "positions": 10, "feeds": ["UPS-A", "UPS-B"], "max_rack_power_kw": 25, "redundant": True}
    ]
    s = tiny_scenario(
        rows, ups, [{"id": "air", "demand": "max", "rack_types": [GT]}], maintenance=[{"kind": "ups"}]
    )
    plan = solved(s, "highs")
    assert plan.kpis.gpus == 64
    during = [
        (b.id, b.during, b.gpus_lost, b.n1_holds)
        for b in plan.reliability.blast_radius
        if b.kind == "maintenance"
    ]
    assert during == [("UPS-A", "UPS-B", 64, True), ("UPS-B", "UPS-A", 64, True)]


@pytest.mark.parametrize("solver", SOLVERS)
def test_cooling_unit_maintenance_keeps_the_reserve(solver: str) -> None:
    """Three air units of 10,000 / 3 kW, one in reserve: 6,667 kW. UPS of 100 kW cap at 9 racks without
    maintenance... so use a zone of 3 × 40 kW with one in reserve: 80 kW → ⌊80 / 21.4⌋ = 3 racks; with
    a unit in maintenance the reserve still stands: 40 kW → 1 rack."""
    data = maintained_site([]).model_dump(mode="json")
    data["site"]["buildings"][0]["halls"][0]["cooling_zones"] = [
        {"id": "AIR", "medium": "air", "units": 3, "unit_capacity_kw": 40, "redundant_units": 1}
    ]
    plain = solved(scenario_from_data(data), solver)
    assert plain.kpis.racks == 3
    data["maintenance"] = [{"kind": "cooling_unit", "buildings": ["B1"]}]
    kept = scenario_from_data(data)
    assert solved(kept, solver).kpis.racks == 1
    rep = verify(plain.model_copy(update={"scenario_hash": ""}), kept)
    assert "AIR: air heat 64.2 kW exceeds 40 kW (1 of 3 units × 40 kW, one in maintenance)" in [
        str(v) for v in rep.violations
    ], rep.violations


def two_sources(racks: int = 4, carbon: float | None = None, cap: float | None = None, demand: str = "exact"):
    """0.2 MW of grid (0.3 t CO2/MWh, $90/MWh) and 0.2 MW of on-site gas (0.45 t/MWh, $60/MWh);
    ``racks`` racks; PUE 1.25, utilisation 0.8, WUE 0.2 L/kWh, 0.2 L/s per MW on the design day."""
    rows = [{"id": "R", "positions": 10, "feeds": ["F"], "max_rack_power_kw": 25}]
    cluster = {
        "id": "air",
        "demand": demand,
        "rack_types": [GT],
        **({"gpus": 16 * racks} if demand == "exact" else {}),
    }
    return tiny_scenario(
        rows,
        [{"id": "F", "capacity_kw": 10_000}],
        [cluster],
        pue=1.25,
        objective="min_tco" if demand == "exact" else "max_gpus",
        power_arrival=[{"interconnect_mw": 0.2}, {"generation_mw": 0.2, "power_source": "gas"}],
        power_sources={
            "grid": {"t_co2_per_mwh": 0.3, "usd_per_mwh": 90},
            "gas": {"t_co2_per_mwh": 0.45, "usd_per_mwh": 60},
        },
        water={"wue_l_per_kwh": 0.2, "peak_l_per_s_per_mw": 0.2},
        costs={"carbon_usd_per_t": carbon} if carbon is not None else {},
        budgets={"t_co2_per_year": cap} if cap is not None else {},
    )


def energy_golden():
    """two_sources with an emissions and a design-day water limit (the golden LP of the energy family)."""
    data = two_sources(cap=200, demand="max").model_dump(mode="json")
    data["budgets"]["peak_water_l_per_s"] = 0.05
    return scenario_from_data(data)


@pytest.mark.parametrize("solver", SOLVERS)
def test_water_and_carbon_of_two_sources_by_hand(solver: str) -> None:
    """4 racks: 4 × 21.4 kW × 1.25 × 0.8 × 8.76 = 749.856 MWh a year, all from gas ($60 < $90; it holds
    0.2 × 8,760 = 1,752): 749.856 × 0.45 = 337.4352 t a year, 1,687.176 t over 5 years. Water: IT energy
    4 × 21.4 × 0.8 × 8,760 = 599,884.8 kWh × 0.2 L = 119.97696 m³ a year (599.8848 over 5 years); design
    day 0.0856 MW × 0.2 = 0.01712 L/s. TCO: the racks' energy is priced at $89.20; gas saves
    749.856 × (60 − 89.2) a year."""
    plan = solved(two_sources(), solver)
    g = plan.grid.phases[0]
    assert g.energy_mwh_per_year == {"gas": pytest.approx(749.856)}
    assert g.t_co2_per_year == pytest.approx(337.4352)
    assert plan.grid.t_co2 == pytest.approx(1687.176)
    assert g.water_m3_per_year == pytest.approx(119.97696)
    assert plan.grid.water_m3 == pytest.approx(599.8848)
    assert g.peak_water_l_per_s == pytest.approx(0.01712)
    assert plan.grid.tco_usd == pytest.approx(749.856 * (60 - 89.2) * ANNUITY_5Y, rel=1e-6)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_carbon_price_changes_the_source(solver: str) -> None:
    """Gas costs 60 + 0.45 c, the grid 90 + 0.3 c a MWh: equal at c = $200/t. At $250/t the grid
    (165 < 172.5): 749.856 × 0.3 = 224.9568 t a year; at $150/t still gas."""
    assert solved(two_sources(carbon=150), solver).grid.phases[0].energy_mwh_per_year == {
        "gas": pytest.approx(749.856)
    }
    plan = solved(two_sources(carbon=250), solver)
    g = plan.grid.phases[0]
    assert g.energy_mwh_per_year == {"grid": pytest.approx(749.856)}
    assert g.t_co2_per_year == pytest.approx(224.9568)
    want = 749.856 * ((90 - 89.2) + 250 * 0.3) * ANNUITY_5Y
    assert plan.grid.tco_usd == pytest.approx(want, rel=1e-6)


@pytest.mark.parametrize("solver", SOLVERS)
def test_an_emissions_limit_holds_back_gpus(solver: str) -> None:
    """A rack draws 187.464 MWh a year; on the grid (the cleaner source) 56.2392 t. At most 200 t a year:
    ⌊200 / 56.2392⌋ = 3 racks, 48 GPUs. Their 562.392 MWh take as much of the cheaper gas as the limit
    leaves: 0.45 x + 0.3 (562.392 − x) = 200 → x = 208.549333 MWh of gas, 353.842667 from the grid."""
    plan = solved(two_sources(cap=200, demand="max"), solver)
    assert plan.kpis.gpus == 48
    g = plan.grid.phases[0]
    assert g.t_co2_per_year == pytest.approx(200)
    assert g.energy_mwh_per_year == {"gas": pytest.approx(208.549333), "grid": pytest.approx(353.842667)}


def test_the_verifier_rejects_every_grid_claim_a_plan_breaks() -> None:
    """Each check on a plan edited to break it: a swing left over, storage where none is allowed or
    falling, energy that does not add up or exceeds a source, stated emissions and water, the totals."""
    s = swing_site(True, False)
    plan = solved(s, "highs")
    g0, g1 = plan.grid.phases

    def broken(**grid):
        p = plan.model_copy(update={"grid": plan.grid.model_copy(update=grid), "scenario_hash": ""})
        return [str(v) for v in verify(p, s).violations]

    less = [
        g0.model_copy(update={"storage_mw": {"B1": 0.05}}),
        g1.model_copy(update={"storage_mw": {"B1": 0.05}}),
    ]
    assert (
        "swing air: 0.128 MW swing, 0.078 MW left after storage and floors, exceeds the 0.05 MW the "
        "power sources accept in phase p1" in broken(phases=less)
    ), broken(phases=less)
    falls = [g0, g1.model_copy(update={"storage_mw": {"B1": 0.07}})]
    assert "grid storage B1: storage falls from 0.078 MW to 0.07 MW in phase p2" in broken(phases=falls)
    assert any(v.startswith("grid storage_capex_usd: plan says") for v in broken(storage_capex_usd=1.0))
    assert any(v.startswith("grid tco_usd: plan says") for v in broken(tco_usd=1.0))
    assert "grid phases: 1 phases stated, the scenario has 2" in broken(phases=[g0])
    assert "grid swing_mw: plan says 1, the racks give 0.128 in phase p1" in broken(
        phases=[g0.model_copy(update={"swing_mw": 1.0}), g1]
    )
    assert "grid accepted_mw: plan says 1, the racks give 0.05 in phase p1" in broken(
        phases=[g0.model_copy(update={"accepted_mw": 1.0}), g1]
    )
    assert "grid swing_cluster: other is not the largest swing in phase p1" in broken(
        phases=[g0.model_copy(update={"swing_cluster": "other"}), g1]
    )
    rep = verify(plan.model_copy(update={"scenario_hash": ""}), swing_site(False, True))
    assert "grid storage: storage stated in phase p1, but the scenario allows none" in [
        str(v) for v in rep.violations
    ]
    no_floor = [g0.model_copy(update={"floor_mw": {"B1": 0.01}}), g1]
    assert "grid floor: a power floor stated in phase p1, but the scenario allows none" in broken(
        phases=no_floor
    )

    s2 = two_sources()
    p2 = solved(s2, "highs")
    e = p2.grid.phases[0]

    def broken2(**phase):
        grid = p2.grid.model_copy(update={"phases": [e.model_copy(update=phase)]})
        return [
            str(v) for v in verify(p2.model_copy(update={"grid": grid, "scenario_hash": ""}), s2).violations
        ]

    assert "grid energy: sources give 700 MWh a year, the racks draw 749.856" in broken2(
        energy_mwh_per_year={"gas": 700.0}
    )
    assert "source gas: 2,000 MWh a year drawn, 1,752 available" in broken2(
        energy_mwh_per_year={"gas": 2000.0, "grid": -1250.144}
    )
    assert any(v.startswith("grid t_co2_per_year: plan says") for v in broken2(t_co2_per_year=1.0))
    assert any(v.startswith("grid water_m3_per_year: plan says") for v in broken2(water_m3_per_year=1.0))
    assert any(v.startswith("grid peak_water_l_per_s: plan says") for v in broken2(peak_water_l_per_s=1.0))
    assert "grid energy wind: unknown source" in broken2(energy_mwh_per_year={"gas": 749.856, "wind": 0.0})
    for total in ("t_co2", "water_m3"):
        p3 = p2.model_copy(update={"grid": p2.grid.model_copy(update={total: 1.0}), "scenario_hash": ""})
        assert any(str(v).startswith(f"grid {total}: plan says") for v in verify(p3, s2).violations)
    capped = two_sources(cap=300)
    rep = verify(p2.model_copy(update={"scenario_hash": ""}), capped)
    assert "budgets.t_co2_per_year: 337.435 t CO2 a year exceeds 300" in [str(v) for v in rep.violations]
    data = s2.model_dump(mode="json")
    data["budgets"] = {"peak_water_l_per_s": 0.01}
    rep = verify(p2.model_copy(update={"scenario_hash": ""}), scenario_from_data(data))
    assert "budgets.peak_water_l_per_s: 0.017 L/s on the design day exceeds 0.01" in [
        str(v) for v in rep.violations
    ]
    none = verify(p2.model_copy(update={"grid": None, "scenario_hash": ""}), s2)
    assert "grid: the scenario counts swings, energy sources or water, the plan states none" in [
        str(v) for v in none.violations
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {
                "power_arrival": [{"interconnect_mw": 1, "power_source": "wind"}],
                "power_sources": {"grid": {"t_co2_per_mwh": 0.3}},
            },
            "power_arrival[0].power_source: source 'wind' is not in power_sources (known: grid)",
        ),
        (
            {"budgets": {"t_co2_per_year": 10}},
            "budgets.t_co2_per_year: an emissions limit needs power_sources",
        ),
        ({"budgets": {"peak_water_l_per_s": 1}}, "budgets.peak_water_l_per_s: a water limit needs water"),
        (
            {"maintenance": [{"kind": "ups", "buildings": ["B9"]}]},
            "maintenance[0].buildings[0]: unknown building 'B9'",
        ),
        ({"maintenance": [{"kind": "chiller"}]}, "maintenance[0].kind: input should be 'utility'"),
        ({"power_stability": {"trough_share": 1.5}}, "power_stability.trough_share"),
    ],
)
def test_bad_grid_inputs_say_what_is_wrong(change: dict, expected: str) -> None:
    data = maintained_site([]).model_dump(mode="json")
    data.update(change)
    with pytest.raises(InputError) as e:
        scenario_from_data(data)
    assert any(expected in line for line in e.value.lines()), e.value.lines()


def test_a_swing_no_mitigation_can_absorb_is_infeasible_and_explained() -> None:
    """160 GPUs asked for exactly (10 racks, 0.1284 MW) with 0.05 MW accepted and nothing to absorb it."""
    data = swing_site(False, False).model_dump(mode="json")
    data["clusters"][0] = {"id": "air", "demand": "exact", "gpus": 160, "rack_types": [GT]}
    s = scenario_from_data(data)
    plan = plan_scenario(s)
    assert plan.status == Status.infeasible
    from planner.explainer import explain_infeasible

    # p1 accepts 0.05 MW; 10 racks swing 0.1284 MW: 0.0784 MW too much (p2 accepts 0.15: fits)
    assert (
        "  - training swing of air in p1: 0.078 MW more than the power sources accept (0.050 MW; it swings "
        "0.128 MW after storage and floors)" in explain_infeasible(s).render().splitlines()
    )


def test_the_region_page_shows_swing_storage_energy_and_water() -> None:
    """The storage case above on the Region page: the swing chart, the table per phase and the totals."""
    from tests.test_app import solved_on

    at = solved_on("ui/region_page.py", swing_site(True, False), "region_solve")
    assert not at.exception, at.exception
    assert "Power the grid accepts: swings, storage, energy, water" in [h.value for h in at.subheader]
    table = next(d.value for d in at.dataframe if "largest swing MW" in d.value.columns)
    assert list(table["phase"]) == ["p1", "p2"]
    assert list(table["storage MW"]) == ["0.08", "0.08"]
    assert list(table["accepted MW"]) == ["0.05", "0.15"]
    assert any(c.value.startswith("Over the horizon: energy storage $29,400 of capex") for c in at.caption)
    spec = at.get("plotly_chart")[-1].proto.spec
    assert "Largest synchronous training swing per phase" in spec


def test_the_reliability_page_shows_the_maintenance_level() -> None:
    """The 2N case above: UPS maintenance, and UPS-B failing while UPS-A is maintained takes all 64 GPUs."""
    from tests.test_app import solved_on

    ups = [{"id": f"UPS-{x}", "kind": "ups", "capacity_kw": 100} for x in "AB"]
    rows = [
        {"id": "R", "positions": 10, "feeds": ["UPS-A", "UPS-B"], "max_rack_power_kw": 25, "redundant": True}
    ]
    s = tiny_scenario(
        rows, ups, [{"id": "air", "demand": "max", "rack_types": [GT]}], maintenance=[{"kind": "ups"}]
    )
    at = solved_on("ui/reliability_page.py", s, "rel_solve")
    assert not at.exception, at.exception
    assert "Maintenance level" in [h.value for h in at.subheader]
    table = next(d.value for d in at.dataframe if "in maintenance" in d.value.columns)
    assert list(zip(table["in maintenance"], table["then fails"], table["GPUs lost"], strict=True)) == [
        ("UPS-B", "UPS-A", "64"),
        ("UPS-A", "UPS-B", "64"),
    ]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    racks=st.integers(1, 10),
    trough=st.sampled_from([0.0, 0.25, 0.4, 0.7]),
    accepted_kw=st.integers(0, 150),
    cheap=st.booleans(),
)
def test_storage_and_floor_absorb_exactly_the_excess_and_verify(
    racks: int, trough: float, accepted_kw: int, cheap: bool
) -> None:
    """One cluster in one building, its racks asked for exactly: storage + floor = max(0, racks × 21.4 ×
    (1 − trough) kW − accepted), no more (both cost), and the verifier agrees with every figure."""
    rows = [{"id": "R", "positions": 10, "feeds": ["F"], "max_rack_power_kw": 25}]
    s = tiny_scenario(
        rows,
        [{"id": "F", "capacity_kw": 10_000}],
        [{"id": "air", "demand": "exact", "gpus": 16 * racks, "rack_types": [GT]}],
        objective="min_tco",
        power_stability={"dynamic_range_mw": accepted_kw / 1000, "ramp_mw_per_s": 10, "trough_share": trough},
        costs={"energy_usd_per_kwh": 0.01 if cheap else 0.2},
    )
    plan = solved(s, "highs")
    g = plan.grid.phases[0]
    excess = max(0.0, racks * 21.4 * (1 - trough) / 1000 - accepted_kw / 1000)
    assert sum(g.storage_mw.values()) + sum(g.floor_mw.values()) == pytest.approx(excess, abs=2e-6)
