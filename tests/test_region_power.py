"""Region power arriving over time (§16): every phase's facility load (IT × PUE) fits the
interconnect and on-site generation arrived by then; hand-solved instances, verifier, explain."""

from __future__ import annotations

import pytest

from planner.enums import Status
from planner.errors import InputError
from planner.input.loader import scenario_from_data
from planner.verifier import verify
from tests.conftest import tiny_scenario
from tests.test_optimize import SOLVERS, solved
from tests.test_phases import PHASES

GT = "grand-teton-h100"  # 21.4 kW, 16 GPUs
FEED = [{"id": "F", "capacity_kw": 10_000}]


def arrival_site(steps, phases=PHASES, pue=1.25, positions=10):
    """One row of ``positions`` positions, power and cooling to spare; one 'air' cluster of as many
    Grand Teton racks as fit; region power arriving by ``steps``."""
    rows = [{"id": "R", "positions": positions, "feeds": ["F"], "max_rack_power_kw": 25}]
    return tiny_scenario(
        rows,
        FEED,
        [{"id": "air", "demand": "max", "rack_types": [GT]}],
        phases=phases,
        pue=pue,
        power_arrival=steps,
    )


@pytest.mark.parametrize("solver", SOLVERS)
def test_power_arrival_binds_in_each_phase(solver: str) -> None:
    """A rack draws 21.4 kW × PUE 1.25 = 26.75 kW of facility power. 0.1 MW from the start: ⌊100 /
    26.75⌋ = 3 racks in p1; +0.1 MW in p2: ⌊200 / 26.75⌋ = 7 racks (the row holds 10). GPU-phases
    3 × 16 + 7 × 16 = 160."""
    s = arrival_site([{"interconnect_mw": 0.1}, {"phase": "p2", "generation_mw": 0.1}])
    plan = solved(s, solver)
    assert [(p.phase, p.racks, p.gpus) for p in plan.phases] == [("p1", 3, 48), ("p2", 7, 112)]
    assert plan.objective_value == 160
    use = next(u for u in plan.utilisation if u.kind == "power_arrival")
    assert (use.value, use.limit) == (pytest.approx(7 * 26.75), 200.0)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_design_day_pue_binds_a_phase_the_annual_pue_would_not(solver: str) -> None:
    """Annual PUE 1.08, design day 1.25 (the hottest hours: chillers at their worst). The arrival is
    checked at the design day: 21.4 × 1.25 = 26.75 kW a rack, ⌊100 / 26.75⌋ = 3 racks in p1 and
    ⌊200 / 26.75⌋ = 7 in p2; at the annual 1.08 (23.112 kW) it would be ⌊100 / 23.112⌋ = 4 and
    ⌊200 / 23.112⌋ = 8. Energy and the facility kW the KPIs state stay annual: 7 × 21.4 × 1.08."""
    steps = [{"interconnect_mw": 0.1}, {"phase": "p2", "generation_mw": 0.1}]
    annual = solved(arrival_site(steps, pue=1.08), solver)
    assert [p.racks for p in annual.phases] == [4, 8]
    data = arrival_site(steps, pue=1.08).model_dump(mode="json")
    data["design_day_pue"] = 1.25
    s = scenario_from_data(data)
    plan = solved(s, solver)
    assert [p.racks for p in plan.phases] == [3, 7]
    assert plan.objective_value == (3 + 7) * 16
    use = next(u for u in plan.utilisation if u.kind == "power_arrival")
    assert (use.value, use.limit) == (pytest.approx(7 * 26.75), 200.0)
    assert plan.kpis.facility_kw == pytest.approx(7 * 21.4 * 1.08)
    rep = verify(annual.model_copy(update={"scenario_hash": None}), s)
    assert (
        "power_arrival: facility load 107 kW (IT × design-day PUE 1.25) exceeds the 100 kW of interconnect "
        "and generation arrived in phase p1" in [str(v) for v in rep.violations]
    )


def test_a_design_day_pue_below_the_annual_is_refused() -> None:
    data = arrival_site([{"interconnect_mw": 1}], pue=1.08).model_dump(mode="json")
    data["design_day_pue"] = 1.05
    with pytest.raises(InputError) as e:
        scenario_from_data(data)
    assert (
        "design_day_pue: 1.05 is below the annual pue 1.08: the design day is the hottest of the year, its "
        "PUE at least the annual" in e.value.lines()
    ), e.value.lines()


def test_without_phases_the_arrival_is_one_region_limit() -> None:
    """0.5 MW, PUE 1.08: ⌊500 / (21.4 × 1.08 = 23.112)⌋ = 21 racks, but the row holds 10: the row binds,
    not power. At 0.2 MW: ⌊200 / 23.112⌋ = 8 racks."""
    assert solved(arrival_site([{"interconnect_mw": 0.5}], phases=[], pue=1.08), "highs").kpis.racks == 10
    assert solved(arrival_site([{"interconnect_mw": 0.2}], phases=[], pue=1.08), "highs").kpis.racks == 8


def test_the_verifier_rejects_a_plan_over_the_power_arrived() -> None:
    """The p1 plan of 3 racks, checked against a region where p1 has only 0.05 MW: 80.25 kW > 50 kW."""
    s = arrival_site([{"interconnect_mw": 0.1}, {"phase": "p2", "generation_mw": 0.1}])
    plan = solved(s, "highs")
    tighter = arrival_site([{"interconnect_mw": 0.05}, {"phase": "p2", "generation_mw": 0.15}])
    rep = verify(plan.model_copy(update={"scenario_hash": None}), tighter)
    assert (
        "power_arrival: facility load 80.25 kW (IT × PUE 1.25) exceeds the 50 kW of interconnect and "
        "generation arrived in phase p1" in [str(v) for v in rep.violations]
    )


def test_explain_names_the_power_arrival_that_binds() -> None:
    from planner.explainer import explain_feasible

    s = arrival_site([{"interconnect_mw": 0.1}, {"phase": "p2", "generation_mw": 0.1}])
    plan = solved(s, "highs")
    ex = explain_feasible(s, plan, time_limit_s=20)
    # by hand: +10 % of p2's 200 kW from p2: 220 / 26.75 → 8 racks (+16 GPU-phases); +10 % of p1's 100 kW
    # from p1: 110 / 26.75 → 4 racks in p1, p2 still 210 / 26.75 → 7 (+16)
    got = {(r.label, r.step, r.gain) for r in ex.relaxations}
    assert got == {
        ("power arrival p2", "p2: +20 kW more interconnect", 16.0),
        ("power arrival p1", "p1: +10 kW more interconnect", 16.0),
    }
    assert (
        "  - power arrival p2: 187.2 of 200 kW used (93.6%); p2: +20 kW more interconnect → +16 GPU-phases"
        in ex.render()
    )


@pytest.mark.parametrize(
    ("steps", "phases", "expected"),
    [
        ([{"phase": "q9", "interconnect_mw": 1}], PHASES, "power_arrival[0].phase: unknown phase 'q9'"),
        (
            [{"phase": "p1", "interconnect_mw": 1}],
            [],
            "power_arrival[0].phase: the scenario has no phases; leave phase out",
        ),
        ([{"interconnect_mw": -1}], PHASES, "power_arrival[0].interconnect_mw"),
    ],
)
def test_bad_power_arrival_names_the_field(steps, phases, expected) -> None:
    s = arrival_site([{"interconnect_mw": 1}], phases=phases)
    data = s.model_dump(mode="json")
    data["power_arrival"] = steps
    with pytest.raises(InputError) as e:
        scenario_from_data(data)
    assert any(expected in line for line in e.value.lines()), e.value.lines()


def test_a_fixed_demand_over_the_power_arrived_is_infeasible_and_explained_by_phase() -> None:
    """48 GPUs = 3 racks = 80.25 kW of facility power from p1, with 50 kW arrived in p1: short by 30.25 kW."""
    from planner.explainer import explain_infeasible
    from planner.plan.pipeline import plan_scenario

    s = arrival_site([{"interconnect_mw": 0.05}, {"phase": "p2", "interconnect_mw": 0.05}])
    data = s.model_dump(mode="json")
    data["clusters"][0] = {"id": "air", "demand": "exact", "gpus": 48, "rack_types": [GT]}
    short = scenario_from_data(data)
    assert plan_scenario(short).status == Status.infeasible
    assert (
        "  - power arrival (interconnect + generation) in p1: short by 30.2 kW for air (limit 50 kW, needs "
        "80.2 kW)" in (explain_infeasible(short).render().splitlines())
    )


def test_the_phases_page_draws_power_arrived_against_the_facility_load() -> None:
    from tests.test_app import solved_on

    s = arrival_site([{"interconnect_mw": 0.1}, {"phase": "p2", "generation_mw": 0.1}])
    at = solved_on("ui/phases_page.py", s, "solve_joint")
    assert not at.exception
    spec = at.get("plotly_chart")[0].proto.spec
    # by hand: 0.1 then 0.2 MW arrived; 3 then 7 racks x 21.4 kW x 1.25 = 0.08025 and 0.18725 MW drawn
    assert '"name":"MW arrived"' in spec
    assert "[0.1,0.2]" in spec.replace(" ", "")
    assert "0.08025" in spec
    assert "0.18725" in spec


def test_long_lead_power_plant_is_in_the_order_book_and_checked() -> None:
    """Transformers for the p2 interconnect with a lead of 3 phases must be ordered 2 phases before
    the plan's first, an unnamed step's plant with a lead of 2 one phase before it; turbines for p2
    with a lead of 1, in p1 (earliest orders first). The order book lists both after the
    racks, the verifier recounts it, and a plan without it (or with one moved) is refused."""
    steps = [
        {"interconnect_mw": 0.1},
        {"phase": "p2", "interconnect_mw": 0.05, "lead_phases": 3, "plant": "transformers"},
        {"phase": "p2", "generation_mw": 0.05, "lead_phases": 1, "plant": "turbines"},
        {"phase": "p2", "generation_mw": 0.01, "lead_phases": 2},
    ]
    s = arrival_site(steps)
    plan = solved(s, "highs")
    power = [(o.id, o.ordered, o.stands) for o in plan.orders if o.item == "power"]
    assert power == [
        ("power_arrival[1]: transformers", "before p1 (2 phases)", "p2"),
        ("power_arrival[3]", "before p1 (1 phase)", "p2"),
        ("power_arrival[2]: turbines", "p1", "p2"),
    ]
    assert verify(plan, s).ok
    messages = [str(v) for v in verify(plan.model_copy(update={"orders": []}), s).violations]
    assert any("the plan states no order book, yet lead times apply" in m for m in messages), messages
    moved = [o.model_copy(update={"ordered": "p1"}) if o.item == "power" else o for o in plan.orders]
    messages = [str(v) for v in verify(plan.model_copy(update={"orders": moved}), s).violations]
    assert "orders: the order book differs from the one the racks and retrofits give" in messages


def test_a_power_lead_time_without_phases_is_refused() -> None:
    data = arrival_site([{"interconnect_mw": 1}], phases=[]).model_dump(mode="json")
    data["power_arrival"][0]["lead_phases"] = 2
    with pytest.raises(InputError) as e:
        scenario_from_data(data)
    assert (
        "power_arrival[0].lead_phases: 2 given, but the scenario has no phases to order in; leave it out"
        in e.value.lines()
    ), e.value.lines()


def test_the_capacity_bound_weighs_each_cluster_by_its_own_racks() -> None:
    """100 kW arrived at PUE 1, one phase: 'light' (8 GPUs at 1 kW each, 8 kW racks) wants at most
    40 GPUs, 'heavy' (8 GPUs at 2 kW, 16 kW racks) as many as fit. Lightest first: light's 40 GPUs
    draw 40 kW, the 60 kW left carry 30 heavy GPUs: the bound is 70 GPUs (the lightest type alone
    would say 100). The optimum: 5 light racks (40 kW) and ⌊60/16⌋ = 3 heavy (48 kW), 64 GPUs; the
    planner and the verifier derive the same bound, and the plan's gap is to it."""
    from planner.rules.bounds import capacity_bound
    from planner.verifier.bounds_recount import recount_capacity

    light = {
        "id": "light",
        "servers_per_rack": 1,
        "gpus_per_server": 8,
        "gpu_power_w": 1000,
        "weight_kg": 300,
        "capex_usd": 1,
    }
    heavy = {**light, "id": "heavy", "gpu_power_w": 2000}
    s = tiny_scenario(
        [{"id": "R", "positions": 20, "feeds": ["F"], "max_rack_power_kw": 25}],
        FEED,
        [
            {"id": "a", "demand": "max", "gpus": 40, "rack_types": ["light"]},
            {"id": "b", "demand": "max", "rack_types": ["heavy"]},
        ],
        rack_types=[light, heavy],
        pue=1.0,
        power_arrival=[{"interconnect_mw": 0.1}],
    )
    assert capacity_bound(s) == 70
    assert recount_capacity(s) == 70
    plan = solved(s, "highs")
    assert plan.kpis.gpus == 64
