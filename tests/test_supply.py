"""Rack supply per phase (§17): racks of a type placed by a phase fit what has been delivered by
then (unplaced deliveries carry over). Hand-solved instances (HiGHS and CBC), the verifier, bad input."""

from __future__ import annotations

import pytest

from planner.errors import InputError
from planner.plan.pipeline import plan_scenario
from planner.plan.rolling import plan_rolling
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
    c = {
        "id": "c",
        "demand": "max",
        "rack_types": [GT],
        **({"gpus_by_phase": gpus_by_phase} if gpus_by_phase else {}),
    }
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
    plan = plan_scenario(
        supplied([{"rack_type": GT, "phase": "p1", "racks": 3}, {"rack_type": GT, "phase": "p2", "racks": 2}])
    )
    lines = [str(v) for v in verify(plan.model_copy(update={"scenario_hash": None}), s).violations]
    assert f"supply {GT}: 3 {GT} racks placed, 2 delivered in phase p1" in " | ".join(lines), lines


@pytest.mark.parametrize(
    ("supply", "expected"),
    [
        ([{"rack_type": "h100-box", "racks": 2}], "supply[0].rack_type: unknown rack type 'h100-box'"),
        ([{"rack_type": GT, "phase": "q9", "racks": 2}], "supply[0].phase: unknown phase 'q9'"),
    ],
)
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
    s = tiny_scenario(
        rows,
        FEED,
        [{"id": "c", "demand": "exact", "gpus": 64, "rack_types": [GT]}],
        phases=PHASES,
        supply=[{"rack_type": GT, "phase": "p1", "racks": 2}, {"rack_type": GT, "phase": "p2", "racks": 3}],
    )
    assert plan_scenario(s).status == "infeasible"
    text = explain_infeasible(s).render()
    assert f"supply of {GT} racks by p1: short by 2" in text, text


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_lead_time_forces_an_earlier_order_that_rolling_never_places(solver: str) -> None:
    """Grand Teton racks take one phase from order to standing; the row holds 10 and the cluster
    wants 160 GPUs (10 racks) from p1. Joint: ordered in p1, they stand in p2: 0 then 160 GPUs, 160
    GPU-phases, and the order book says 10 racks ordered in p1 for p2. Rolling orders only for the
    phase it plans: it never places them and loses all 160 GPUs of p2."""
    s = supplied([], gpus_by_phase={"p1": 160}).model_copy(update={"lead_phases": {GT: 1}})
    s = type(s).model_validate(s.model_dump())
    joint = solved(s, solver)
    assert [p.gpus for p in joint.phases] == [0, 160]
    assert [(o.item, o.id, o.ordered, o.stands, o.count) for o in joint.orders] == [
        ("rack", GT, "p1", "p2", 10)
    ]
    rolling = plan_rolling(s)
    assert [p.gpus for p in rolling.phases] == [0, 0]
    assert verify(rolling, s).ok


def test_the_verifier_rejects_a_rack_standing_before_its_lead_time() -> None:
    s = supplied([], gpus_by_phase={"p1": 160})
    plan = plan_scenario(s)
    late = type(s).model_validate({**s.model_dump(), "lead_phases": {GT: 1}})
    lines = [str(v) for v in verify(plan.model_copy(update={"scenario_hash": None}), late).violations]
    assert f"{GT} takes 1 phase(s) from order to standing: none stands in phase p1" in " | ".join(lines), (
        lines
    )


def test_an_edited_order_book_is_rejected() -> None:
    s = type(supplied([])).model_validate(
        {**supplied([], gpus_by_phase={"p1": 160}).model_dump(), "lead_phases": {GT: 1}}
    )
    plan = plan_scenario(s)
    edited = plan.model_copy(update={"orders": [plan.orders[0].model_copy(update={"ordered": "p2"})]})
    assert "orders: the order book differs from the one the racks and retrofits give" in [
        str(v) for v in verify(edited, s).violations
    ]
    deleted = plan.model_copy(update={"orders": []})
    assert (
        "orders: the plan states no order book, yet lead times apply: the racks and retrofits give 1 orders"
        in [str(v) for v in verify(deleted, s).violations]
    )


def test_the_phases_page_shows_the_order_book_and_the_supply_used() -> None:
    """Lead one phase and 12 racks delivered in p1 (the row holds 10): 10 racks ordered in p1 stand
    in p2; supply used 0 of 12 in p1, 10 of 12 in p2."""
    from tests.test_app import solved_on

    s = supplied([{"rack_type": GT, "phase": "p1", "racks": 12}], gpus_by_phase={"p1": 160})
    s = type(s).model_validate({**s.model_dump(), "lead_phases": {GT: 1}})
    at = solved_on("ui/phases_page.py", s, "solve_joint")
    assert not at.exception
    heads = [h.value for h in at.subheader]
    assert heads.index("Order book") < heads.index("Rack supply used")
    book = next(d.value for d in at.dataframe if "ordered in" in d.value.columns)
    assert book.values.tolist() == [["p1", "rack", GT, "10", "p2"]]
    used = next(d.value for d in at.dataframe if "delivered by then" in d.value.columns)
    assert used[["phase", "placed by then", "delivered by then", "left"]].values.tolist() == [
        ["p1", "0", "12", "12"],
        ["p2", "10", "12", "2"],
    ]


def test_a_sweep_varies_supply_and_lead_times(tmp_path) -> None:
    """A grid over the p1 allocation (1 or 2 racks) and the lead time (0 or 1 phase): GPUs by the end
    16 × racks; with a lead the plans order in p1 for p2 (their order books say so), without one they
    stand from p1."""
    from planner.batch.sweep import load_sweep, run_batch
    from planner.input.variants import scenario_yaml
    from planner.plan import load_plan

    s = supplied([{"rack_type": GT, "phase": "p1", "racks": 1}])
    (tmp_path / "s.yaml").write_text(scenario_yaml(s))
    (tmp_path / "sweeps").mkdir()
    (tmp_path / "sweeps" / "sw.yaml").write_text(
        f"name: supply-lead\nbase: ../s.yaml\ngrid:\n  supply[0].racks: [1, 2]\n  lead_phases.{GT}: [0, 1]\n"
    )
    sweep = load_sweep(tmp_path / "sweeps" / "sw.yaml", tmp_path)
    rows = run_batch(sweep, tmp_path / "out")
    got = {(r["supply[0].racks"], r[f"lead_phases.{GT}"]): r for r in rows}
    assert {k: v["gpus"] for k, v in got.items()} == {(1, 0): 16, (1, 1): 16, (2, 0): 32, (2, 1): 32}
    with_lead = load_plan(tmp_path / "out" / got[2, 1]["plan"])
    assert [(o.ordered, o.stands, o.count) for o in with_lead.orders] == [("p1", "p2", 2)]
    without = load_plan(tmp_path / "out" / got[2, 0]["plan"])
    assert [(o.ordered, o.stands, o.count) for o in without.orders] == [("p1", "p1", 2)]
