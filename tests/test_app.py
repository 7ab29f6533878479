"""Dashboard tests with Streamlit's AppTest: every page, bad input, solve, form edits, sessions."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from planner.input.loader import load_scenario, load_scenario_text
from planner.plan.pipeline import plan_scenario
from ui.cache import SolveHub

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")


def app(**params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in params.items():
        at.query_params[k] = v
    return at


def open_page(page: str, **params: str) -> AppTest:
    at = app(**params).run()
    at.switch_page(page).run()
    return at


def load(at: AppTest, name: str) -> AppTest:
    at.switch_page("ui/scenario_page.py").run()
    at.selectbox(key=next(w.key for w in at.selectbox if w.key and w.key.startswith("shipped_"))).select(
        name
    ).run()
    at.button(key="load_shipped").click().run()
    return at


def solved_on(page: str, scenario, button: str) -> AppTest:
    """A session that pastes ``scenario`` (a Scenario) on the Scenario page, opens ``page`` and
    presses its solve button ``button``."""
    from planner.input.variants import scenario_yaml

    at = app().run()
    at.switch_page("ui/scenario_page.py").run()
    at.text_area(key="paste").input(scenario_yaml(scenario)).run()
    at.button(key="apply_upload").click().run()
    at.switch_page(page).run()
    at.button(key=button).click().run()
    return at


def form_key(at: AppTest, prefix: str) -> str:
    """The key of a form widget tied to the loaded scenario (prefix_<scenario key>)."""
    widgets = [*at.selectbox, *at.number_input, *at.multiselect]
    keys = [
        w.key for w in widgets if w.key and w.key.startswith(prefix + "_") and len(w.key) == len(prefix) + 13
    ]
    assert len(keys) == 1, keys
    return keys[0]


def apply_knobs(at: AppTest) -> AppTest:
    """Press the Scenario page's Apply changes (its key is tied to the loaded scenario), after the
    rerun a browser makes for the last widget change."""
    at.run()
    return (
        at.button(
            key=next(
                b.key for b in at.button if b.key and b.key.startswith("apply_") and b.key != "apply_upload"
            )
        )
        .click()
        .run()
    )


def _param(at: AppTest, name: str) -> str:
    value = at.query_params[name]
    return value[0] if isinstance(value, list) else value


def errors(at: AppTest) -> str:
    return " ".join(e.value for e in at.error)


def test_plan_page_opens_on_default_scenario() -> None:
    at = app().run()
    assert not at.exception
    assert at.title[0].value == "Plan: small-hall"
    assert at.button(key="solve")
    assert any("Not solved yet" in i.value for i in at.info)
    assert at.markdown[0].value.startswith("Active settings: objective **max_gpus** · no capex budget")


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
    assert values["Status"] == "Optimal"
    assert expected.status == "optimal"
    labels = [d.proto.label for d in at.get("download_button")]
    assert labels[:3] == [
        "Placement, one row per rack (CSV)",
        "Placement by hall (XLSX)",
        "NetBox bundle (ZIP of import CSVs)",
    ]


def test_bad_yaml_lists_path() -> None:
    at = open_page("ui/scenario_page.py")
    text = (
        (ROOT / "datasets/small-hall.yaml").read_text().replace("max_hops: 5", "max_hops: 5\n    colour: red")
    )
    at.text_area(key="paste").input(text).run()
    at.button(key="apply_upload").click().run()
    assert not at.exception
    assert "clusters[0].colour: unknown key 'colour'" in errors(at)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "name: x\nsite: /etc/shadow\nclusters: [{id: c, demand: max, rack_types: [dgx-h100-4]}]\n",
            "site: '/etc/shadow' is an absolute path; give a path relative to the shipped datasets",
        ),
        ("name: x\nsite: ../../etc/passwd\nclusters: []\n", "leaves the shipped datasets"),
        ("a: " + "[" * 3000 + "]" * 3000, "line 1, column"),
        ("a: !!python/object/apply:os.system ['true']\n", "could not determine a constructor"),
        ("- just\n- a list\n", "expected a scenario mapping"),
        ("name: x\nsite: {id: s}\nclusters: 5\n", "problems"),
        ("\x00\x01binary", "NUL"),
    ],
)
def test_anything_pasted_gives_an_error_box_never_a_traceback(text: str, expected: str) -> None:
    at = open_page("ui/scenario_page.py")
    at.text_area(key="paste").input(text).run()
    at.button(key="apply_upload").click().run()
    assert not at.exception
    assert expected in errors(at)
    assert at.title[0].value == "Scenario"


def test_form_changes_reach_the_solve() -> None:
    """Cap nvl-infer at exactly 72 GPUs: the solve places exactly one NVL72 rack."""
    at = open_page("ui/scenario_page.py")
    at.selectbox(key=form_key(at, "demand_nvl-infer")).select("exact")
    at.number_input(key=form_key(at, "gpus_nvl-infer")).set_value(72)
    apply_knobs(at)
    assert not at.exception
    edited = load_scenario_text(at.session_state["planner"].scenario_yaml)
    assert (edited.clusters[1].demand.value, edited.clusters[1].gpus) == ("exact", 72)
    at.switch_page("ui/plan_page.py").run()
    at.button(key="solve").click().run()
    assert not at.exception
    from ui.state import plan_of, scenario_key

    ss = at.session_state["planner"]
    plan = plan_of(ss.results[scenario_key(ss.scenario_yaml)])
    assert sum(1 for r in plan.racks if r.cluster == "nvl-infer") == 1


def test_loading_another_scenario_resets_the_form_and_the_plan_page_says_what_is_active() -> None:
    at = open_page("ui/scenario_page.py")
    at.number_input(key=form_key(at, "capex")).set_value(30e6)
    apply_knobs(at)
    assert load_scenario_text(at.session_state["planner"].scenario_yaml).budgets.capex_usd == 30e6
    at.switch_page("ui/plan_page.py").run()
    assert "capex budget **$30,000,000**" in at.markdown[0].value
    load(at, "meta-24k-building")
    meta = load_scenario(ROOT / "datasets/meta-24k-building.yaml")
    assert at.number_input(key=form_key(at, "capex")).value == 0
    assert at.number_input(key=form_key(at, "tlim")).value == meta.solver.time_limit_s
    assert at.number_input(key=form_key(at, "gap")).value == meta.solver.rel_gap
    at.switch_page("ui/plan_page.py").run()
    assert "no capex budget" in at.markdown[0].value


def test_sessions_see_only_their_own_solves() -> None:
    a = app(scenario="dr-hall").run()
    a.button(key="solve").click().run()
    assert {m.label: m.value for m in a.metric}["GPUs"] == "864"
    b = app(scenario="dr-hall").run()
    assert not b.metric
    assert any("Not solved yet" in i.value for i in b.info)


def test_a_reload_keeps_the_loaded_and_the_edited_scenario() -> None:
    at = app().run()
    load(at, "dr-hall")
    assert _param(at, "scenario") == "dr-hall"
    again = app(scenario="dr-hall").run()
    assert again.title[0].value == "Plan: dr-hall"
    at.number_input(key=form_key(at, "capex")).set_value(12e6)
    apply_knobs(at)
    key = _param(at, "s")
    assert "scenario" not in at.query_params
    reloaded = app(s=key).run()
    assert reloaded.title[0].value == "Plan: dr-hall"
    assert "capex budget **$12,000,000**" in reloaded.markdown[0].value


def test_every_shipped_scenario_is_in_the_picker() -> None:
    at = open_page("ui/scenario_page.py")
    shipped = sorted(
        p.name.removesuffix(".yaml")
        for p in (ROOT / "datasets").glob("*.yaml")
        if not p.name.endswith((".site.yaml", ".gen.yaml")) and p.name != "catalog.yaml"
    )
    assert sorted(next(w for w in at.selectbox if w.key and w.key.startswith("shipped_")).options) == shipped
    assert "region-100k-pods" in shipped


def test_file_and_pasted_text_says_which_it_uses() -> None:
    at = open_page("ui/scenario_page.py")
    at.text_area(key="paste").input("name: x\n").run()
    # AppTest cannot attach files; the rule is checked on the page source instead
    source = (ROOT / "ui/scenario_page.py").read_text()
    assert "the pasted text is ignored while a file is uploaded" in source
    assert not at.exception


def test_infeasible_scenario_is_an_error_with_its_explanation() -> None:
    at = open_page("ui/scenario_page.py")
    text = (
        "name: inf\nsite: small-hall.site.yaml\nclusters: [{id: llama-train, demand: exact, gpus: 1536, "
        "rack_types: [grand-teton-h100], max_hops: 5}]\n"
    )
    at.text_area(key="paste").input(text).run()
    at.button(key="apply_upload").click().run()
    at.switch_page("ui/plan_page.py").run()
    at.button(key="solve").click().run()
    assert not at.exception
    assert "Infeasible: no plan meets every demand" in errors(at)
    assert "cooling CZ-AIR (air): short by 828.4 kW" in errors(at)
    assert not at.success


def test_explain_table_in_dashboard() -> None:
    at = app(scenario="dr-hall").run()
    at.button(key="solve").click().run()
    at.button(key="explain").click().run()
    assert not at.exception
    table = at.dataframe[-1].value
    first = table.iloc[0]
    assert first["limit"].startswith("power UPS-")
    assert first["+GPUs"] == "96"
    assert list(table.columns[:4]) == ["limit", "use %", "when", "relaxation"]
    assert "0" not in set(table["+GPUs"])  # rows that buy nothing are folded away
    # pressing anything else keeps the explanation open with its result
    at.radio(key="plan_color").set_value("cluster").run()
    assert at.dataframe[-1].value.iloc[0]["+GPUs"] == "96"


def test_explain_keeps_a_plan_solved_building_by_building_on_the_plan_page() -> None:
    """A plan the Region page solved (kept as the session's decomposed result) shows on the Plan
    page; Explain keeps its table with that plan (it once made an empty joint result that hid the
    plan: "Not solved yet")."""
    from planner.input.variants import scenario_yaml
    from ui.session import Session
    from ui.state import result_key

    scenario = load_scenario(ROOT / "datasets/dr-hall.yaml")
    text = scenario_yaml(scenario)
    plan = plan_scenario(scenario)
    at = app()
    at.session_state["planner"] = Session(
        scenario_yaml=text,
        scenario_source="dr-hall",
        results={result_key(text, "decomposed"): {"plan": plan.model_dump(mode="json"), "wall_s": 1.0}},
    )
    at.run()
    at.button(key="explain").click().run()
    assert not at.exception
    assert not [i.value for i in at.info if i.value.startswith("Not solved yet")]
    assert at.dataframe[-1].value.iloc[0]["+GPUs"] == "96"
    assert "binding" in at.session_state["planner"].results[result_key(text, "decomposed")]


def test_large_site_shows_an_overview_and_says_top_n() -> None:
    at = app(scenario="region-100k").run()
    at.button(key="solve").click().run()
    assert not at.exception
    assert any(s.value.startswith("Site overview: 4 buildings, ") for s in at.subheader)
    overview = at.dataframe[0].value
    assert list(overview.columns) == [
        "building",
        "hall",
        "positions",
        "racks",
        "GPUs",
        "IT MW",
        "worst power use %",
        "worst cooling use %",
    ]
    assert sum(int(g.replace(",", "")) for g in overview["GPUs"]) == int(
        {m.label: m.value for m in at.metric}["GPUs"].replace(",", "")
    )
    assert len(overview) == sum(
        len(b.halls) for b in load_scenario(ROOT / "datasets/region-100k.yaml").site.buildings
    )


def test_compare_two_variants() -> None:
    """Variant A as is, variant B with every cluster on DGX 4-per-rack: DGX (40.8 kW) only fits the
    45 kW and 130 kW rows, so B places fewer GPUs; both columns appear with their own plans."""
    at = open_page("ui/compare_page.py")
    at.selectbox(key="v1_rt").select("dgx-h100-4")
    at.button(key="FormSubmitter:variants-Solve variants").click().run()
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table.index) == ["A", "B", "B − A"]
    assert table.loc["A", "GPUs"] == "1,080"  # by hand: tests/test_optimize.py::test_default_scenario_optimum
    assert 0 < int(table.loc["B", "GPUs"].replace(",", "")) < 1080
    assert list(table["status"]) == ["optimal", "optimal", "—"]


def test_compare_starts_with_two_different_variants_and_a_delta_row() -> None:
    """small-hall has no fabric designs: B starts with racks budgeted at 80 % of rated power. By hand: a
    grand-teton rack budgeted at 0.8 x 21.4 = 17.12 kW, so more racks fit under the same busways; the
    delta row is B's figures less A's, signed."""
    at = open_page("ui/compare_page.py")
    assert at.number_input(key="v1_ratio").value == 0.8
    assert at.number_input(key="v0_ratio").value == 0.0
    at.button(key="FormSubmitter:variants-Solve variants").click().run()
    table = at.dataframe[0].value
    assert list(table.index) == ["A", "B", "B − A"]
    a, b = (int(table.loc[v, "GPUs"].replace(",", "")) for v in ("A", "B"))
    assert a == 1080  # small-hall by hand (tests/test_optimize.py::test_default_scenario_optimum)
    assert b > a
    assert table.loc["B − A", "GPUs"] == f"+{b - a:,}"
    assert table.loc["B − A", "status"] == "—"


def test_colours_are_fixed_per_rack_type_and_cluster() -> None:
    from ui.colors import cluster_colors, rack_type_colors
    from ui.floorplan import floor_figure

    small = load_scenario(ROOT / "datasets/small-hall.yaml")
    meta = load_scenario(ROOT / "datasets/meta-24k-building.yaml")
    assert rack_type_colors(small) == rack_type_colors(meta)
    plan = plan_scenario(small)
    colours = {t.name.split(" (")[0]: t.marker.color for t in floor_figure(small, plan, "H1").data}
    assert colours["grand-teton-h100"] == rack_type_colors(small)["grand-teton-h100"]
    assert colours["gb200-nvl72"] == rack_type_colors(small)["gb200-nvl72"]
    by_cluster = {
        t.name.split(" (")[0]: t.marker.color for t in floor_figure(small, plan, "H1", "cluster").data
    }
    assert by_cluster["train-gt"] == cluster_colors(small)["train-gt"]


def test_ui_never_imports_the_solver_library() -> None:
    """Pages and figures talk to the planner API only; solver objects never reach the UI."""
    import ast

    for path in [ROOT / "app.py", *sorted((ROOT / "ui").glob("*.py"))]:
        tree = ast.parse(path.read_text())
        names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not names & {"pulp", "highspy"}, path.name


# --------------------------------------------------------------- the shared result store


def _entry(status: str) -> dict:
    return {"plan": {"status": status}, "wall_s": 0.0}


def test_hub_caches_final_results_only() -> None:
    hub = SolveHub()
    assert hub.run("a", lambda: _entry("optimal")) == _entry("optimal")
    assert hub.run("a", lambda: _entry("infeasible")) == _entry("optimal")  # cached
    hub.run("b", lambda: _entry("feasible"))
    hub.run("c", lambda: {"error": "boom"})
    assert (hub.get("b"), hub.get("c"), hub.runs) == (None, None, 3)
    hub.run("b", lambda: _entry("optimal"))
    assert hub.runs == 4
    assert hub.get("b") == _entry("optimal")


def test_hub_is_bounded() -> None:
    hub = SolveHub(max_entries=3, max_bytes=10_000)
    for i in range(10):
        hub.run(str(i), lambda i=i: {**_entry("optimal"), "pad": "x" * 1000, "i": i})
    assert len(hub) == 3
    assert hub.get("9") is not None
    assert hub.get("0") is None
    hub.run("big", lambda: {**_entry("optimal"), "pad": "x" * 20_000})
    assert hub.get("big") is None
    assert hub.bytes <= 10_000


def test_identical_solves_in_flight_run_once() -> None:
    hub = SolveHub()
    started = threading.Event()

    def slow() -> dict:
        started.set()
        time.sleep(0.5)
        return _entry("optimal")

    out = []
    t1 = threading.Thread(target=lambda: out.append(hub.run("k", slow)))
    t1.start()
    started.wait()
    t2 = threading.Thread(target=lambda: out.append(hub.run("k", slow)))
    t2.start()
    t1.join()
    t2.join()
    assert hub.runs == 1
    assert out == [_entry("optimal"), _entry("optimal")]


def test_phases_page_compares_joint_and_rolling() -> None:
    at = open_page("ui/phases_page.py", scenario="fleet-expansion")
    assert at.title[0].value == "Phases: fleet-expansion"
    at.button(key="solve_joint").click().run()
    at.button(key="solve_rolling").click().run()
    assert not at.exception
    table = at.dataframe[0].value
    assert (table.loc["joint", "GPUs"], table.loc["rolling", "GPUs"]) == ("2,216", "1,768")
    # by hand from the per-phase GPUs (joint 1,136 + 1,136 + 2,216 + 2,216 = 6,704; rolling 1,136 + 1,264 +
    # 1,768 + 1,768 = 5,936)
    # and the plans' capex ($157.20M vs $118.09M) and TCO ($176.89M vs $134.21M), each with its racks'
    # back-end network (295.52 vs 189.28 kW)
    assert (
        "Regret of rolling against joint: joint places **448 more GPUs** by q4 (+768 GPU-phases); rolling "
        "spends **$39.1M less** capex; "
        "rolling spends **$42.7M less** TCO." in [m.value for m in at.markdown]
    )
    joint_fig, rolling_fig = (at.get("plotly_chart")[i].proto.spec for i in (-3, -2))
    assert '"joint, B1-H1, end of q4"' in joint_fig
    assert '"rolling, B1-H1, end of q4"' in rolling_fig
    assert len(at.dataframe) >= 2
    assert list(at.dataframe[1].value["phase"]) == ["q1", "q2", "q3", "q4"]


def test_joint_vs_rolling_marks_agree_with_the_plans() -> None:
    """fleet-expansion at q2: every standing rack of each plan is marked once; "both" is the same set on
    each side; rolling's racks where joint has none yet are named by the phase joint fills them, or empty."""
    from ui.floorplan import BOTH, JOINT_ONLY, joint_vs_rolling

    s = load_scenario(ROOT / "datasets/fleet-expansion.yaml")
    from planner.plan.rolling import plan_mode

    j, r = plan_mode(s, "joint"), plan_mode(s, "rolling")
    order = {p.id: i for i, p in enumerate(s.phases)}
    jm, rm = joint_vs_rolling(s, j, r, "q2")
    j_spots = {(x.row, x.position) for x in j.racks if x.existing or order[x.phase] <= 1}
    r_spots = {(x.row, x.position) for x in r.racks if x.existing or order[x.phase] <= 1}
    assert set(jm) == j_spots
    assert set(rm) == r_spots
    assert (
        {k for k, v in jm.items() if v == BOTH}
        == {k for k, v in rm.items() if v == BOTH}
        == j_spots & r_spots
    )
    assert {k for k, v in jm.items() if v == JOINT_ONLY} == j_spots - r_spots
    later = {(x.row, x.position): x.phase for x in j.racks if not x.existing and order[x.phase] > 1}
    for spot in r_spots - j_spots:
        assert rm[spot] == (
            f"rolling only: joint fills it in {later[spot]}"
            if spot in later
            else "rolling only: joint leaves it empty"
        )
    assert (
        r_spots - j_spots
    )  # rolling stands 1,264 GPUs at q2 against joint's 1,136: it must use spots joint does not


def test_phases_page_on_a_scenario_without_phases() -> None:
    at = open_page("ui/phases_page.py")
    assert not at.exception
    assert any("no phases" in i.value for i in at.info)


def _sweep_key(at: AppTest, prefix: str) -> str:
    keys = [w.key for w in [*at.text_input, *at.multiselect] if w.key and w.key.startswith(prefix + "_")]
    assert len(keys) == 1, keys
    return keys[0]


def test_sweep_page_runs_a_grid_shows_the_frontier_and_opens_a_point(tmp_path: Path) -> None:
    """small-hall × two GPU caps: the TDP point is the 1,080-GPU optimum (verified), and the
    600 W cap fits at least as many GPUs (more GPUs per kW); the chosen point opens on the Plan page."""
    at = open_page("ui/sweep_page.py")
    assert at.title[0].value == "Sweep variants of small-hall"
    at.text_input(key=_sweep_key(at, "sweep_caps")).set_value("0, 600")
    at.button[0].click().run()  # the form's submit button
    assert not at.exception, errors(at)
    assert not at.error, errors(at)
    table = at.dataframe[0].value
    assert list(table["point"]) == ["p0001", "p0002"]
    gpus = [int(g.replace(",", "")) for g in table["GPUs"]]  # p0001: no cap (TDP), p0002: 600 W
    assert list(table["GPU power cap W"]) == ["—", "600"]
    assert gpus[0] == 1080  # at TDP, by hand: tests/test_optimize.py::test_default_scenario_optimum
    # at 600 W a Grand Teton rack draws 10.2 + 16 × 0.6 = 19.8 kW and an NVL72 132 − 72 × 0.6 = 88.8 kW
    # (15 % to air): 4 NVL72 leave CZ-AIR 1,250 − 24 − 4 × 13.32 = 1,172.7 kW, 59 Grand Teton racks:
    # 4 × 72 + 59 × 16 = 1,232 GPUs (the browser test opens the same point)
    assert gpus[1] == 1232
    assert set(table["status"]) == {"optimal"}
    at.selectbox(key="sweep_pick").select("p0001").run()
    at.button(key="sweep_open").click().run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Plan: small-hall · sweep variant p0001"
    assert [i.value for i in at.info][0] == (
        "The sweep's variant p0001 (gpu_power_cap_w = as in the scenario, power_budget_ratio = as in the "
        "scenario) replaced the scenario in effect "
        "(was small-hall); the Scenario page shows it and this page's URL reopens it."
    )
    assert any("Showing the opened plan" in s.value for s in at.success)
    at.switch_page("ui/scenario_page.py").run()
    assert at.subheader[0].value == "In effect: small-hall (the sweep's variant p0001)"


def test_sweep_page_reports_a_bad_value() -> None:
    at = open_page("ui/sweep_page.py")
    at.text_input(key=_sweep_key(at, "sweep_caps")).set_value("0, lots")
    at.button[0].click().run()
    assert "GPU power caps: 'lots' is not a number (comma-separated numbers, 0 = not set)" in errors(at)
    at.text_input(key=_sweep_key(at, "sweep_caps")).set_value("0, 50")
    at.button[0].click().run()
    assert "GPU power caps: '50' is out of range (0 = not set, else 100 to 2000)" in errors(at)


def test_reliability_page_shows_blast_radius_goodput_and_failover_gain() -> None:
    """dr-hall-flex: shedding inference gains +336 GPUs over strict N-1 (benchmarks/RESULTS.md); the
    worst single failure is the air zone (every rack); failing UPS-1 marks the inference racks of the
    rows it hits as "may be shed"."""
    at = app(scenario="dr-hall-flex").run()
    at.button(key="solve").click().run()
    at.switch_page("ui/reliability_page.py").run()
    assert not at.exception, errors(at)
    assert not at.error, errors(at)
    assert at.title[0].value == "Reliability: dr-hall-flex"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Gain of failover policies"] == "+336 GPUs"
    assert metrics["Worst single failure"] == "1,200 GPUs"
    assert metrics["Power N-1"] == "holds"
    captions = [c.value for c in at.caption]
    assert (
        "**cooling zone CZ-AIR**: the whole zone failing (not one unit: its spare units cover that) stops "
        "every rack it cools." in captions
    )
    # dr-hall-flex by hand: 3 UPS + 16 busways can fail (the utility cannot); a page string literal would show
    # as text
    assert any(c.startswith("Any one of the 19 power nodes that can fail may fail") for c in captions)
    assert not any("One line of why" in m.value for m in at.markdown)
    clusters = at.dataframe[0].value
    assert list(clusters["cluster"]) == ["train", "infer"]
    assert list(clusters.columns).index("in service %") == list(clusters.columns).index("goodput %") + 1
    assert list(clusters["policy"]) == ["keep", "shed"]
    at.selectbox(key="rel_pick").select("power_node UPS-1").run()
    assert not at.exception
    spec = at.get("plotly_chart")[-1].proto.spec
    assert "Hall H1: power_node UPS-1 fails" in spec
    assert "may be shed" in spec
    assert "keeps running" in spec


def test_failover_policy_knob_on_the_scenario_page() -> None:
    at = load(app(), "dr-hall-flex")
    key = [w.key for w in at.selectbox if w.key and w.key.startswith("policy_infer_")][0]
    assert at.selectbox(key=key).value == "shed"
    at.selectbox(key=key).select("cap")
    ratio = [w.key for w in at.number_input if w.key and w.key.startswith("capratio_infer_")][0]
    at.number_input(key=ratio).set_value(0.5)
    apply_knobs(at)
    assert not at.error, errors(at)
    assert "on_power_failure: cap" in at.session_state["planner"].scenario_yaml
    assert "cap_ratio: 0.5" in at.session_state["planner"].scenario_yaml


def test_compare_page_puts_roce_and_infiniband_side_by_side() -> None:
    """meta-24k-roce-vs-ib: variant A on the Meta-style RoCE design, B on the QM9700 fat tree.
    Both place the site's 8 pods × 3,072 GPUs (the pods' port budget; each pod's network row has
    its own 480 kW). Switches by hand: RoCE 1,536 RTSW (one per rack) + ⌈1,536·32 / ⌊576·7/8⌋⌉ =
    98 CTSW + ⌈98·72 / 576⌉ = 13 ATSW = 1,647; InfiniBand 24,576 / 32 = 768 leaves, 768 spines,
    768·32 / 64 = 384 cores = 1,920."""
    at = app(scenario="meta-24k-roce-vs-ib").run()
    at.switch_page("ui/compare_page.py").run()
    assert at.selectbox(key="v0_fabric").value == "meta-roce"
    assert at.selectbox(key="v1_fabric").value == "ib-3tier"
    at.button[0].click().run()
    assert not at.exception, errors(at)
    assert not at.error, errors(at)
    table = at.dataframe[0].value
    assert list(table["fabric"]) == ["meta-roce", "ib-3tier", "—"]
    assert list(table["GPUs"]) == ["24,576", "24,576", "0"]
    assert list(table["switches"]) == ["1,647", "1,920", "+273"]


def test_page_switches_keep_the_scenario_in_the_url_and_a_solved_link_shows_its_plan() -> None:
    # (a sidebar page switch that drops the query is a browser matter: tests/test_browser.py)
    at = load(app(), "dr-hall")
    for page in (
        "ui/plan_page.py",
        "ui/phases_page.py",
        "ui/compare_page.py",
        "ui/reliability_page.py",
        "ui/sweep_page.py",
    ):
        at.switch_page(page).run()
        assert dict(at.query_params) == {"scenario": "dr-hall"}, page
    at.switch_page("ui/plan_page.py").run()
    at.button(key="solve").click().run()
    stored = at.query_params["plan"]
    assert dict(at.query_params) == {"scenario": "dr-hall", "plan": stored}
    assert len(stored) == 16  # the plan library's ID (planner/library/__init__.py)
    # the copied link in a fresh browser: same scenario, its plan shown again without pressing Solve
    fresh = app(scenario="dr-hall", plan=stored).run()
    assert fresh.title[0].value == "Plan: dr-hall"
    assert {m.label: m.value for m in fresh.metric}["GPUs"] == "864"
    # an unsolved link stays unsolved
    assert not app(scenario="dr-hall").run().metric


def test_a_plan_edited_in_the_library_is_not_shown_by_its_link() -> None:
    """A stored plan whose row was changed in the database (its GPUs inflated): its link opens the
    scenario with a warning, never the plan; a fresh Solve finds the right figure again."""
    import json
    import os

    import sqlalchemy as sa

    from planner.library import PLANS

    at = load(app(), "dr-hall")
    at.switch_page("ui/plan_page.py").run()
    at.button(key="solve").click().run()
    stored = at.query_params["plan"]
    with sa.create_engine(os.environ["PLANNER_LIBRARY"]).begin() as c:
        entry = json.loads(c.execute(sa.select(PLANS.c.entry).where(PLANS.c.id == stored)).scalar())
        entry["plan"]["kpis"]["gpus"] = 999_999
        c.execute(PLANS.update().where(PLANS.c.id == stored).values(entry=json.dumps(entry), gpus=999_999))
    fresh = app(scenario="dr-hall", plan=stored).run()
    assert len(fresh.warning) == 1
    assert fresh.warning[0].value.startswith(
        f"The link's plan {stored} fails its check (its plan does not verify against its scenario ("
    )
    assert not fresh.metric
    fresh.button(key="solve").click().run()
    assert {m.label: m.value for m in fresh.metric}["GPUs"] == "864"


def test_a_library_that_cannot_be_opened_is_an_error_box_and_the_page_still_solves(
    monkeypatch, tmp_path
) -> None:
    monkeypatch.setenv("PLANNER_LIBRARY", f"sqlite:///{tmp_path}")  # a folder
    at = load(app(), "dr-hall")
    at.switch_page("ui/plan_page.py").run()
    at.button(key="solve").click().run()
    assert {m.label: m.value for m in at.metric}["GPUs"] == "864"
    assert at.error[0].value.startswith(
        f"The plan library cannot be used: plan library sqlite:///{tmp_path}: cannot open the database file"
    )


def test_an_edited_scenarios_link_reopens_it_and_a_lost_one_says_so() -> None:
    at = open_page("ui/scenario_page.py")
    at.number_input(key=form_key(at, "capex")).set_value(12e6)
    apply_knobs(at)
    key = _param(at, "s")
    at.switch_page("ui/phases_page.py").run()
    assert _param(at, "s") == key
    reopened = open_page("ui/scenario_page.py", s=key)
    assert reopened.subheader[0].value == "In effect: small-hall (reopened from a link)"
    lost = app(s="f" * 32).run()
    assert [w.value for w in lost.warning] == [
        "The link names a scenario neither this server nor the plan library holds (key ffffffffffff…); "
        "opened small-hall instead. Upload the scenario YAML again on the Scenario page."
    ]
    assert lost.title[0].value == "Plan: small-hall"
    assert _param(lost, "scenario") == "small-hall"
    wrong = app(scenario="no-such").run()
    assert [w.value for w in wrong.warning] == [
        "The link names no shipped scenario ('no-such'); opened small-hall instead."
    ]


def test_the_scenario_page_names_what_is_in_effect_and_keeps_unapplied_edits_visible() -> None:
    at = open_page("ui/scenario_page.py")
    assert at.subheader[0].value == "In effect: small-hall (shipped)"
    # small-hall by hand: 8 rows x 20 positions less 2 reserved less 2 pods' network-rack spots = 156;
    # one root, the 2,500 kW utility; two pods; clusters: max (no figure) and 144 GPUs
    assert [(m.label, m.value) for m in at.metric] == [
        ("buildings", "1"),
        ("halls", "1"),
        ("rack positions", "156"),
        ("MW rated", "2.5"),
        ("pods", "2"),
        ("clusters", "2 (144 GPUs)"),
    ]
    at.number_input(key=form_key(at, "capex")).set_value(12e6).run()
    at.selectbox(key=form_key(at, "demand_nvl-infer")).select("exact").run()
    pending = "- capex budget (USD) none → 12,000,000\n- cluster nvl-infer: demand at_least → exact"
    assert pending in at.warning[0].value
    assert at.warning[0].value.startswith("**2 unapplied edits**")
    at.switch_page("ui/plan_page.py").run()
    assert [w.value for w in at.sidebar.warning] == [
        "2 unapplied edits on the Scenario page: kept there; apply or discard them."
    ]
    assert "no capex budget" in at.markdown[0].value  # the Plan page solves the scenario in effect
    at.switch_page("ui/scenario_page.py").run()
    assert at.number_input(key=form_key(at, "capex")).value == 12e6
    assert pending in at.warning[0].value
    apply_knobs(at)
    assert at.subheader[0].value == "In effect: small-hall (edited from the shipped small-hall)"
    assert [s.value for s in at.success] == [
        "Applied to small-hall: capex budget (USD) none → 12,000,000; cluster nvl-infer: demand at_least → "
        "exact. "
        "The Plan page now solves this edited scenario."
    ]
    assert not at.warning
    # discard drops the edits and puts the widgets back to the scenario's values
    at.number_input(key=form_key(at, "itkw")).set_value(500.0).run()
    assert at.warning
    at.button(key=next(b.key for b in at.button if b.key and b.key.startswith("discard_"))).click().run()
    assert not at.warning
    assert at.number_input(key=form_key(at, "itkw")).value == 0.0
