"""What-if in the dashboard (ui/whatif.py): site capacity edited on the Scenario page as a named,
reversible edit, answered on the Plan page, without writing YAML. The question, scaled down from
"20 MW more in hall B": one row of 10 positions behind busway F (25 kW, a busway's 80 % continuous
derate: 20 kW usable), racks of 8 GPUs at 4 kW and $100k. By hand: ⌊20 / 4⌋ = 5 racks, 40 GPUs (F
binds); with F at 50 kW (40 kW usable), ⌊40 / 4⌋ = 10 racks = the 10 positions, 80 GPUs, racks
capex $1.0M (twice the $0.5M before); undone, 40 GPUs again."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from planner.input.variants import apply_changes, scenario_yaml
from planner.plan.pipeline import plan_scenario
from tests.conftest import tiny_scenario
from tests.test_app import app, errors
from tests.test_units import ONE
from ui.session import Session

FEED = [{"id": "F", "kind": "busway", "capacity_kw": 25}]


def hall_b():
    rows = [{"id": "R", "positions": 10, "feeds": ["F"], "max_rack_power_kw": 10}]
    s = tiny_scenario(rows, FEED, [{"id": "c", "demand": "max", "rack_types": ["one"]}], rack_types=[ONE])
    return s.model_copy(update={"name": "hall-b"})


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def solve(at: AppTest) -> AppTest:
    at.switch_page("ui/plan_page.py").run()
    at.button(key="solve").click().run()
    assert not at.error, errors(at)
    return at


def test_the_engine_answers_the_edit_as_derived_by_hand() -> None:
    s = hall_b()
    before = plan_scenario(s)
    after = plan_scenario(apply_changes(s, {"site": {"power_nodes": {"F": {"capacity_kw": 50}}}}))
    assert (before.kpis.gpus, len(before.racks), before.kpis.capex_racks_usd) == (40, 5, 500_000)
    assert (after.kpis.gpus, len(after.racks), after.kpis.capex_racks_usd) == (80, 10, 1_000_000)


def test_twenty_more_in_hall_b_asked_and_undone_in_the_dashboard() -> None:
    at = app()
    at.session_state["planner"] = Session(scenario_yaml=scenario_yaml(hall_b()), scenario_source="pasted")
    at.run()
    assert metrics(solve(at))["GPUs"] == "40"
    at.switch_page("ui/scenario_page.py").run()
    node = next(w for w in at.selectbox if w.key and w.key.startswith("wi_node_"))
    assert node.value == "F"
    next(w for w in at.number_input if w.key and w.key.startswith("wi_kw_")).set_value(50.0)
    next(w for w in at.text_input if w.key and w.key.startswith("wi_name_")).input("+25 kW in hall B")
    at.run()
    next(b for b in at.button if b.key and b.key.startswith("wi_apply_")).click().run()
    assert not at.error, errors(at)
    assert at.session_state["planner"].site_edits[-1]["what"] == "F: 25 → 50 kW"
    assert metrics(solve(at))["GPUs"] == "80"
    assert metrics(at)["Racks"] == "10"
    at.switch_page("ui/scenario_page.py").run()
    next(b for b in at.button if b.key and b.key.startswith("wi_undo_")).click().run()
    assert not at.error, errors(at)
    assert metrics(solve(at))["GPUs"] == "40"


def test_reserving_positions_in_the_dashboard_costs_their_racks() -> None:
    """Hall B with F at 50 kW (10 racks fit by power and by position): reserving positions 3 and 4
    of row R leaves 8 positions, 8 racks, 64 GPUs."""
    s = apply_changes(hall_b(), {"site": {"power_nodes": {"F": {"capacity_kw": 50}}}})
    at = app()
    at.session_state["planner"] = Session(scenario_yaml=scenario_yaml(s), scenario_source="pasted")
    at.run()
    at.switch_page("ui/scenario_page.py").run()
    assert next(w for w in at.selectbox if w.key and w.key.startswith("wi_row_")).value == "R"
    next(w for w in at.text_input if w.key and w.key.startswith("wi_res_")).input("4, 3")
    at.run()
    next(b for b in at.button if b.key and b.key.startswith("wi_apply_")).click().run()
    assert not at.error, errors(at)
    assert at.session_state["planner"].site_edits[-1]["what"] == "R: reserved [3, 4]"
    assert metrics(solve(at))["GPUs"] == "64"
    at.switch_page("ui/scenario_page.py").run()
    n = next(r for b in s.site.buildings for h in b.halls for r in h.rows if r.id == "R").positions
    for typed in ("3, x", "²", "9" * 5000, f"1, {n}", "-1"):
        at.switch_page("ui/scenario_page.py").run()
        next(w for w in at.text_input if w.key and w.key.startswith("wi_res_")).input(typed)
        at.run()
        assert not at.exception, typed[:20]
        assert [e.value for e in at.error] == [
            f"Reserved positions: '{typed[:60]}' is not a comma-separated list of positions from 0 to "
            f"{n - 1} (whole numbers in digits 0-9)"
        ], typed[:20]


def test_in_a_phased_scenario_the_raise_can_be_a_retrofit_the_plan_buys() -> None:
    """tests/test_phases.py's capacity retrofit, asked in the dashboard: one phase, feed F rated 50 kW
    (× 0.8 derate = 40 kW usable) holds one 21.4 kW Grand Teton rack (16 GPUs). Raised to 90 kW
    rated as a retrofit ($1, lead 0) it adds 40 × 0.8 = 32 kW usable: 72 kW holds ⌊72 / 21.4⌋ = 3
    racks (48 GPUs) of the row's 4 positions, and the plan buys it."""
    from datetime import date

    one = [{"id": "p1", "start": date(2026, 1, 1)}]
    rows = [{"id": "R", "positions": 4, "feeds": ["F"]}]
    s = tiny_scenario(
        rows,
        [{"id": "F", "capacity_kw": 50}],
        [{"id": "c", "demand": "max", "rack_types": ["grand-teton-h100"]}],
        phases=one,
    )
    at = app()
    at.session_state["planner"] = Session(scenario_yaml=scenario_yaml(s), scenario_source="pasted")
    at.run()
    assert metrics(solve(at))["GPUs"] == "16"
    at.switch_page("ui/scenario_page.py").run()
    next(w for w in at.number_input if w.key and w.key.startswith("wi_kw_")).set_value(90.0)
    at.run()
    next(w for w in at.checkbox if w.key and w.key.startswith("wi_retro_")).check().run()
    next(w for w in at.number_input if w.key and w.key.startswith("wi_cost_")).set_value(1.0)
    next(w for w in at.number_input if w.key and w.key.startswith("wi_lead_")).set_value(0)
    at.run()
    next(b for b in at.button if b.key and b.key.startswith("wi_apply_")).click().run()
    assert not at.error, errors(at)
    assert at.session_state["planner"].site_edits[-1]["what"] == (
        "retrofit whatif-F: +32 kW usable on F for $1, 0 phase(s) lead"
    )
    assert metrics(solve(at))["GPUs"] == "48"


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ("po", "changes: expected a mapping of what to change, got str"),
        ({"site": "po"}, "site: expected a mapping of power_nodes, cooling_zones or rows, got str"),
        (
            {"site": {"power_nodes": {"UPS-A": 1e308}}},
            "site.power_nodes.UPS-A: expected a mapping of fields, got float",
        ),
        ({"site": {"racks": {}}}, "site.racks: not one of power_nodes, cooling_zones, rows"),
        ({"budgets": True}, "budgets: expected a mapping of fields, got bool"),
        ({"clusters": {"train-gt": [1]}}, "clusters.train-gt: expected a mapping of fields, got list"),
        ({"rack_types": "gb200-nvl72"}, "rack_types: expected a list of rack type IDs, got str"),
    ],
)
def test_a_change_set_of_the_wrong_shape_is_bad_input(changes, said) -> None:
    """The what-if change sets (planner.input.variants.apply_changes), mutated by the fuzz run: each
    wrong shape is named, never an AttributeError."""
    from planner.errors import InputError
    from planner.input.loader import load_scenario

    s = load_scenario(Path(__file__).resolve().parent.parent / "datasets" / "small-hall.yaml")
    with pytest.raises(InputError) as e:
        apply_changes(s, changes)
    assert e.value.lines() == [said]
