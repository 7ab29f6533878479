"""Dashboard tests with Streamlit's AppTest: every page, bad input, solve, form edits."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from planner.loader import load_scenario
from planner.pipeline import plan_scenario

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")


def app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=120)


def open_page(page: str) -> AppTest:
    at = app().run()
    at.switch_page(page).run()
    return at


def test_plan_page_opens_on_default_scenario() -> None:
    at = app().run()
    assert not at.exception
    assert at.title[0].value == "Plan: small-hall"
    assert at.button(key="solve")
    assert any("Not solved yet" in i.value for i in at.info)


@pytest.mark.parametrize("page", ["ui/scenario_page.py", "ui/compare_page.py"])
def test_every_page_runs(page: str) -> None:
    at = open_page(page)
    assert not at.exception
    assert at.title[0].value.startswith(("Scenario", "Compare"))


def test_solve_matches_cli_engine() -> None:
    at = app().run()
    at.button(key="solve").click().run()
    assert not at.exception
    expected = plan_scenario(load_scenario(ROOT / "datasets/small-hall.yaml"))
    values = {m.label: m.value for m in at.metric}
    assert values["GPUs"] == f"{expected.kpis.gpus:,}"
    assert values["Status"] == expected.status == "optimal"


def test_bad_yaml_lists_path() -> None:
    at = open_page("ui/scenario_page.py")
    text = (ROOT / "datasets/small-hall.yaml").read_text().replace("max_hops: 5", "max_hops: 5\n    colour: red")
    text = text.replace("small-hall.site.yaml", "small-hall.site.yaml")
    at.text_area(key="paste").input(text).run()
    at.button(key="apply_upload").click().run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "clusters[0].colour: unknown key 'colour'" in errors


def test_form_changes_reach_the_solve() -> None:
    """Cap nvl-infer at exactly 72 GPUs and forbid NVL72 elsewhere: the solve places exactly one NVL72 rack."""
    at = open_page("ui/scenario_page.py")
    at.selectbox(key="demand_nvl-infer").select("exact")
    at.number_input(key="gpus_nvl-infer").set_value(72)
    at.button(key="FormSubmitter:knobs-Apply changes").click().run()
    assert not at.exception
    from planner.loader import load_scenario_text

    edited = load_scenario_text(at.session_state.scenario_yaml)
    assert (edited.clusters[1].demand.value, edited.clusters[1].gpus) == ("exact", 72)
    at.switch_page("ui/plan_page.py").run()
    at.button(key="solve").click().run()
    assert not at.exception
    from planner.plan import Plan
    from ui.state import plan_store, scenario_key

    plan = Plan.model_validate(plan_store()[scenario_key(at.session_state.scenario_yaml)]["plan"])
    assert sum(1 for r in plan.racks if r.cluster == "nvl-infer") == 1


def test_infeasible_scenario_shows_explanation() -> None:
    at = open_page("ui/scenario_page.py")
    text = "name: inf\nsite: small-hall.site.yaml\nclusters: [{id: llama-train, demand: exact, gpus: 1536, rack_types: [grand-teton-h100], max_hops: 5}]\n"
    at.text_area(key="paste").input(text).run()
    at.button(key="apply_upload").click().run()
    at.switch_page("ui/plan_page.py").run()
    at.button(key="solve").click().run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "No plan meets every demand" in errors
    assert "cooling CZ-AIR (air): short by 804.4 kW" in errors


def test_explain_binding_limits_in_dashboard() -> None:
    at = open_page("ui/scenario_page.py")
    at.selectbox(key="shipped").select("dr-hall").run()
    at.button(key="load_shipped").click().run()
    at.switch_page("ui/plan_page.py").run()
    at.button(key="solve").click().run()
    at.button(key="explain").click().run()
    assert not at.exception
    assert at.code[0].value.startswith("Plan for dr-hall: 880 GPUs (optimal); binding limits")


def test_compare_two_variants() -> None:
    """Variant A as is, variant B with every cluster on DGX 4-per-rack: DGX (40.8 kW) only fits the
    45 kW and 130 kW rows, so B places fewer GPUs; both columns appear with their own plans."""
    at = open_page("ui/compare_page.py")
    at.selectbox(key="v1_rt").select("dgx-h100-4")
    at.button(key="FormSubmitter:variants-Solve variants").click().run()
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table.index) == ["A", "B"]
    assert table.loc["A", "gpus"] == 1096
    assert 0 < table.loc["B", "gpus"] < 1096
    assert list(table["status"]) == ["optimal", "optimal"]


def test_ui_never_imports_the_solver_library() -> None:
    """Pages and figures talk to the planner API only; solver objects never reach the UI."""
    import ast

    for path in [ROOT / "app.py", *sorted((ROOT / "ui").glob("*.py"))]:
        tree = ast.parse(path.read_text())
        names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not names & {"pulp", "highspy"}, path.name
