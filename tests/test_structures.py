"""Structures of a region (§16): a building or tent the optimiser may build, with its lead time,
cost and cooling media, like a retrofit. Hand-solved instances (HiGHS and CBC) and the verifier."""

from __future__ import annotations

import pytest

from planner.errors import InputError
from planner.input.loader import scenario_from_data
from planner.plan.rolling import plan_rolling
from planner.verifier import verify
from tests.test_optimize import SOLVERS, solved
from tests.test_phases import PHASES

GT, NVL = "grand-teton-h100", "gb200-nvl72"


def region(
    wanted: dict[str, int],
    tent_cost=2_000_000,
    lead=0,
    objective="min_capex",
    rack=GT,
    costs=None,
    life=5,
    rate=None,
):
    """B1: a building online from p2 only (its hall's online_phase), nothing to pay; T1: a tent the
    optimiser may build (air only, $``tent_cost``, ``lead`` phases). One cluster wanting
    ``wanted`` GPUs by phase, exactly. One row of 4 positions in each, power and cooling to spare."""

    def hall(hid, online=None):
        return {
            "id": hid,
            "floor_area_m2": 100,
            **({"online_phase": online} if online else {}),
            "power_nodes": [{"id": f"{hid}-F", "capacity_kw": 10_000}],
            "cooling_zones": [
                {"id": f"{hid}-AIR", "medium": "air", "units": 1, "unit_capacity_kw": 10_000},
                {"id": f"{hid}-LQ", "medium": "liquid", "units": 1, "unit_capacity_kw": 10_000},
            ],
            "pods": [
                {
                    "id": f"{hid}-P",
                    "network_rack": {"row": f"{hid}-NET", "position": 0},
                    "max_gpus": 100_000,
                    "network_rack_type": None,
                }
            ],
            "rows": [
                {
                    "id": f"{hid}-R",
                    "positions": 4,
                    "feeds": [f"{hid}-F"],
                    "max_rack_power_kw": 200,
                    "air_zone": f"{hid}-AIR",
                    "liquid_loop": f"{hid}-LQ",
                    "pod": f"{hid}-P",
                },
                {
                    "id": f"{hid}-NET",
                    "positions": 1,
                    "origin_y_m": -2.4,
                    "feeds": [f"{hid}-F"],
                    "max_rack_power_kw": 200,
                    "air_zone": f"{hid}-AIR",
                    "pod": f"{hid}-P",
                },
            ],
        }

    site = {
        "id": "region",
        "buildings": [
            {"id": "B1", "halls": [hall("B1-H1", "p2")]},
            {"id": "T1", "location_km": [0.5, 0], "halls": [hall("T1-H1")]},
        ],
    }
    return scenario_from_data(
        {
            "name": "tent",
            "site": site,
            "phases": PHASES,
            "objective": objective,
            "clusters": [
                {"id": "c", "demand": "exact", "gpus_by_phase": wanted, "rack_types": [rack], "max_hops": 7}
            ],
            "retrofits": [
                {
                    "id": "tent-T1",
                    "cost_usd": tent_cost,
                    "lead_phases": lead,
                    "effect": {
                        "kind": "build_structure",
                        "building": "T1",
                        "structure": "tent",
                        "media": ["air"],
                        "life_years": life,
                        **({"facility_usd_per_mw": rate} if rate is not None else {}),
                    },
                }
            ],
            **({"costs": costs} if costs else {}),
            "network_allowance": False,  # hand derivations count the racks alone
            "solver": {"rel_gap": 0},
        }
    )


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_tent_pays_only_because_it_is_online_a_phase_earlier(solver: str) -> None:
    """16 GPUs wanted from p1: the building comes in p2, so the tent is bought in p1 ($2M) and holds
    the rack. Wanted from p2 only: the building holds it, no tent (min capex: the tent's $2M saved)."""
    early = solved(region({"p1": 16, "p2": 16}), solver)
    assert [(b.id, b.phase) for b in early.retrofits] == [("tent-T1", "p1")]
    assert [(r.building, r.phase) for r in early.racks] == [("T1", "p1")]
    late = solved(region({"p2": 16}), solver)
    assert late.retrofits == []
    assert [(r.building, r.phase) for r in late.racks] == [("B1", "p2")]
    assert early.kpis.capex_usd - late.kpis.capex_usd == pytest.approx(2_000_000)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_tents_own_rate_replaces_the_building_rate(solver: str) -> None:
    """A tent priced as its whole build, $15M per MW of the IT standing in it (no lump sum), against
    the building's $11.7M per MW: one Grand Teton rack (21.4 kW) wanted from p1 must stand in the
    tent (B1 comes in p2) and pays 15,000 × 21.4 = 321,000 of build, not 250,380 + the tent; wanted
    from p2 only it stands in B1 and no tent is bought. The tent pays only by standing a phase
    earlier: capex differs by exactly 321,000 − 250,380 = 70,620."""
    early = solved(region({"p1": 16, "p2": 16}, tent_cost=0, rate=15_000_000), solver)
    assert [(r.building, r.phase) for r in early.racks] == [("T1", "p1")]
    assert early.kpis.capex_facility_usd == pytest.approx(321_000)
    late = solved(region({"p2": 16}, tent_cost=0, rate=15_000_000), solver)
    assert late.retrofits == []
    assert [(r.building, r.phase) for r in late.racks] == [("B1", "p2")]
    assert late.kpis.capex_facility_usd == pytest.approx(250_380)
    assert early.kpis.capex_usd - late.kpis.capex_usd == pytest.approx(70_620)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_tent_keeps_its_book_value_at_the_horizon(solver: str) -> None:
    """The early case under min TCO, over a 2-year horizon, undiscounted: the tent ($2M, 5-year life,
    bought at year 0) is still worth 2M × (1 − 2/5) = 1.2M at the horizon, credited as residual
    value (the rack has no service life, the facility none: the whole residual is the tent's), so
    its TCO is 1.2M below the same plan with a tent of no stated life; the model's objective is the
    TCO the KPIs and the verifier count."""
    money = {"horizon_years": 2, "discount_rate": 0}
    kept = solved(region({"p1": 16, "p2": 16}, objective="min_tco", costs=money), solver)
    assert [(b.id, b.phase) for b in kept.retrofits] == [("tent-T1", "p1")]
    assert kept.kpis.residual_value_usd == 1_200_000
    assert kept.objective_value == pytest.approx(kept.kpis.tco_usd)
    plain = solved(region({"p1": 16, "p2": 16}, objective="min_tco", costs=money, life=None), solver)
    assert plain.kpis.tco_usd - kept.kpis.tco_usd == pytest.approx(1_200_000)


def test_a_tent_with_a_lead_time_is_too_late_and_the_scenario_infeasible() -> None:
    """With one phase of lead the tent stands from p2: nothing can hold 16 GPUs in p1."""
    s = region({"p1": 16, "p2": 16}, lead=1)
    from planner.plan.pipeline import plan_scenario

    assert plan_scenario(s).status == "infeasible"


def test_a_tent_cools_with_air_only() -> None:
    """An NVL72 (liquid-cooled) wanted in p1: the tent may not take it, the building is not there yet."""
    from planner.plan.pipeline import plan_scenario

    assert plan_scenario(region({"p1": 72, "p2": 72}, rack=NVL)).status == "infeasible"
    assert [r.building for r in solved(region({"p2": 72}, rack=NVL), "highs").racks] == ["B1"]


def test_the_verifier_rejects_racks_in_a_structure_not_built() -> None:
    s = region({"p1": 16, "p2": 16})
    plan = solved(s, "highs")
    unbuilt = plan.model_copy(update={"retrofits": [], "kpis": None, "utilisation": None})
    assert "racks[0] (T1-H1-R/0): building T1 (tent) is not built by phase p1" in [
        str(v) for v in verify(unbuilt, s).violations
    ]


def test_rolling_buys_the_tent_when_its_phase_comes() -> None:
    plan = plan_rolling(region({"p1": 16, "p2": 16}))
    assert [(b.id, b.phase) for b in plan.retrofits] == [("tent-T1", "p1")]


def test_a_structure_to_build_with_network_racks_drawing_power_is_bad_input() -> None:
    s = region({"p2": 16})
    data = s.model_dump(mode="json")
    data["site"]["buildings"][1]["halls"][0]["pods"][0]["network_rack_type"] = "network-rack"
    with pytest.raises(InputError) as e:
        scenario_from_data(data)
    assert any(
        line.startswith(
            "retrofits[0].effect.building: building 'T1' is to be built: its pods' network racks would "
            "draw power"
        )
        for line in e.value.lines()
    ), e.value.lines()


def test_the_structures_of_a_plan_say_when_each_stands_and_what_it_holds() -> None:
    """The early plan: the tent bought in p1 stands from p1 with one 16-GPU Grand Teton rack (21.4 kW,
    catalog) in both phases; B1 comes online in p2 and stays empty. The late plan leaves the tent
    unbuilt and puts the rack in B1 in p2. Facility kW = PUE 1.08 × the rack's 21.4 kW."""
    from planner.plan.structures import region_power, structures

    s = region({"p1": 16, "p2": 16})
    early = solved(s, "highs")
    got = {x.building: x for x in structures(s, early)}
    t, b = got["T1"], got["B1"]
    assert (t.kind, t.built, t.retrofit, t.bought, t.online, t.gpus, t.it_kw) == (
        "tent",
        True,
        "tent-T1",
        "p1",
        "p1",
        (16, 16),
        (21.4, 21.4),
    )
    assert (b.kind, b.built, b.online, b.gpus) == ("building", True, "p2", (0, 0))
    assert [(p.phase, round(p.facility_kw, 6), p.arrived_kw) for p in region_power(s, early)] == [
        ("p1", 23.112, None),
        ("p2", 23.112, None),
    ]
    late = solved(region({"p2": 16}), "highs")
    got = {x.building: x for x in structures(s, late)}
    assert (got["T1"].built, got["T1"].online, got["T1"].gpus) == (False, None, (0, 0))
    assert got["B1"].gpus == (0, 16)


def test_the_region_page_shows_structures_power_and_backup() -> None:
    from tests.test_app import solved_on

    s = region({"p1": 16, "p2": 16})
    at = solved_on("ui/region_page.py", s, "region_solve")
    assert not at.exception
    assert [h.value for h in at.subheader] == ["Structures", "Power: available vs used"]
    table = at.dataframe[0].value.set_index("structure")
    assert list(table.loc["T1", ["kind", "online from", "bought in"]]) == ["tent", "p1", "p1"]
    assert table.loc["B1", "online from"] == "p2"
    assert [m.value for m in at.metric][:2] == ["2 of 2", "16"]


def test_the_shipped_tent_sweep_varies_every_tents_cost_and_lead() -> None:
    """datasets/sweeps/prometheus-tents.yaml: a tent's whole build at $2M and $5M per MW of the IT
    standing in it × lead 0 or 1 quarter, applied to all six tents: four points."""
    from pathlib import Path

    from planner.batch.sweep import load_sweep

    root = Path(__file__).resolve().parent.parent / "datasets"
    sweep = load_sweep(root / "sweeps" / "prometheus-tents.yaml", root)
    assert [tuple(p.values.values()) for p in sweep.points] == [
        (2_000_000, 0),
        (2_000_000, 1),
        (5_000_000, 0),
        (5_000_000, 1),
    ]
    data = sweep.points[3].data
    assert {(r["effect"]["facility_usd_per_mw"], r["lead_phases"]) for r in data["retrofits"]} == {
        (5_000_000, 1)
    }
    assert len(data["retrofits"]) == 6


@pytest.mark.parametrize("wanted", [{"p1": 0, "p2": 16}, {"p1": 16, "p2": 32}])
def test_under_max_gpus_a_structure_is_bought_when_its_first_rack_arrives(wanted: dict[str, int]) -> None:
    """max_gpus does not count when money is spent: the plan buys the tent in the phase its first
    rack arrives (lead 0), or not at all when it holds none (p1: only the tent stands)."""
    s = region(wanted, objective="max_gpus")
    plan = solved(s, "highs")
    in_tent = sorted(r.phase for r in plan.racks if r.building == "T1")
    assert [(b.id, b.phase) for b in plan.retrofits] == ([("tent-T1", in_tent[0])] if in_tent else [])
    assert verify(plan, s).ok


def test_a_tent_bought_too_early_is_moved_to_its_first_racks_phase() -> None:
    from planner.plan.pipeline import structures_when_needed
    from planner.schema import BoughtRetrofit

    s = region({"p1": 0, "p2": 16}, objective="max_gpus")
    plan = solved(s, "highs")
    racks = [r.model_copy(update={"building": "T1"}) for r in plan.racks]  # only the building matters here
    early = plan.model_copy(update={"racks": racks, "retrofits": [BoughtRetrofit(id="tent-T1", phase="p1")]})
    assert [(b.id, b.phase) for b in structures_when_needed(early, s).retrofits] == [("tent-T1", "p2")]
    assert structures_when_needed(early.model_copy(update={"racks": []}), s).retrofits == []


def _tent_pue(arrival_kw=None, **pue) -> dict:
    """The early region (16 GPUs from p1: the tent holds the rack) with the tent's own PUE figures and,
    given ``arrival_kw``, that much region power arrived from the start."""
    data = region({"p1": 16, "p2": 16}).model_dump(mode="json")
    data["retrofits"][0]["effect"].update(pue)
    if arrival_kw is not None:
        data["power_arrival"] = [{"interconnect_mw": arrival_kw / 1000}]
    return data


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_tents_design_day_pue_binds_the_power_arrived(solver: str) -> None:
    """25 kW arrived. The rack (21.4 kW) in the tent at the scenario's PUE 1.08 draws 23.112 kW; at the
    tent's own design-day PUE 1.15 it draws 24.61 kW (fits); at 1.2, 25.68 kW: nothing can hold the 16
    GPUs in p1 (the building is not there yet), the scenario is infeasible, and a plan placing it
    anyway is refused with the tent's PUE named."""
    from planner.plan.pipeline import plan_scenario
    from planner.plan.structures import region_power

    s = scenario_from_data(_tent_pue(25, design_day_pue=1.15))
    plan = solved(s, solver)
    assert [(r.building, r.phase) for r in plan.racks] == [("T1", "p1")]
    use = next(u for u in plan.utilisation if u.kind == "power_arrival")
    assert (use.value, use.limit) == (pytest.approx(21.4 * 1.15), 25.0)
    assert [round(p.facility_kw, 6) for p in region_power(s, plan)] == [24.61, 24.61]
    assert plan.kpis.facility_kw == pytest.approx(21.4 * 1.08)  # energy and KPIs stay annual
    hot = scenario_from_data(_tent_pue(25, design_day_pue=1.2))
    assert plan_scenario(hot).status == "infeasible"
    rep = verify(plan.model_copy(update={"scenario_hash": None}), hot)
    assert (
        "power_arrival: facility load 25.68 kW (IT × design-day PUE of structure T1 1.2) exceeds the 25 kW "
        "of interconnect and generation arrived in phase p1" in [str(v) for v in rep.violations]
    ), rep.violations


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_tents_annual_pue_prices_its_racks_energy(solver: str) -> None:
    """The tent's annual PUE 1.5 against the scenario's 1.08: the rack's energy costs 21.4 kW × 0.8
    utilisation × 0.42 × 8,760 h × $0.0892 = $5,618.52 a year more; its facility kW is 21.4 × 1.5 and,
    with no design-day figure of its own, power arrival counts it at 1.5 too (32.1 kW of 40)."""
    plain = solved(scenario_from_data(_tent_pue(40)), solver)
    warm = solved(scenario_from_data(_tent_pue(40, pue=1.5)), solver)
    assert warm.kpis.opex_usd_per_year - plain.kpis.opex_usd_per_year == pytest.approx(5_618.52, abs=0.01)
    assert warm.kpis.facility_kw == pytest.approx(32.1)
    use = next(u for u in warm.utilisation if u.kind == "power_arrival")
    assert use.value == pytest.approx(32.1)


def test_a_tents_design_day_pue_below_its_annual_is_refused() -> None:
    with pytest.raises(InputError) as e:
        scenario_from_data(_tent_pue(pue=1.3, design_day_pue=1.2))
    assert (
        "retrofits[0].effect.design_day_pue: 1.2 is below its annual pue 1.3: the design day is the hottest "
        "of the year, its PUE at least the annual" in e.value.lines()
    ), e.value.lines()
