"""Scenario page: pick, upload or edit the planning question."""

from __future__ import annotations

import streamlit as st

from planner.errors import InputError
from planner.loader import parse_yaml, scenario_from_data, validate_model
from planner.schema import Catalog, Site
from planner.variants import apply_changes, scenario_data
from ui.floorplan import floor_figure
from ui.state import SHIPPED, UPLOAD_MB, current_scenario, load_shipped, parse_scenario_text, set_scenario, show_problems


def apply_upload(kind: str, raw: bytes, scenario) -> list[str]:
    """Make an uploaded scenario current, or put an uploaded site or catalog into the current one.
    Returns the problems found (empty on success)."""
    try:
        if kind == "scenario":
            new, problems = parse_scenario_text(raw.decode("utf-8", errors="replace"))
            if problems:
                return problems
        elif scenario is None:
            return ["load a valid scenario first"]
        else:
            data = scenario_data(scenario)
            if kind == "site":
                data["site"] = validate_model(Site, parse_yaml(raw, "site"), "site").model_dump(mode="json")
            else:
                catalog = parse_yaml(raw, "catalog")
                validate_model(Catalog, catalog, "catalog")
                data["catalog"] = catalog
            new = scenario_from_data(data)
    except InputError as e:
        return e.lines()
    set_scenario(new, "uploaded")
    return []


st.title("Scenario")
src = st.session_state.get("scenario_source", "small-hall")
pick = st.selectbox("Shipped scenario", SHIPPED, index=SHIPPED.index(src) if src in SHIPPED else 0, key="shipped")
if st.button("Load shipped scenario", key="load_shipped"):
    load_shipped(pick)
    st.rerun()

scenario = current_scenario()

with st.expander("Upload YAML (scenario, site or catalog)"):
    kind = st.radio("File holds", ["scenario", "site", "catalog"], horizontal=True, key="upload_kind")
    up = st.file_uploader("YAML file", type=["yaml", "yml"], key="upload", max_upload_size=UPLOAD_MB)
    pasted = st.text_area("…or paste YAML", key="paste", height=150)
    if st.button("Apply", key="apply_upload"):
        problems = apply_upload(kind, up.getvalue() if up is not None else pasted.encode(), scenario)
        if problems:
            show_problems(problems, f"The uploaded {kind}")
        else:
            st.rerun()

if scenario is None:
    st.stop()

st.subheader("Main knobs")
types = [t.id for t in scenario.catalog.rack_types]
with st.form("knobs"):
    c1, c2, c3 = st.columns(3)
    objective = c1.selectbox("Objective", ["max_gpus", "max_pflops", "min_capex"], index=["max_gpus", "max_pflops", "min_capex"].index(scenario.objective), key="objective")
    cap = c2.number_input("GPU power cap (W, 0 = TDP)", min_value=0, max_value=2000, value=int(scenario.gpu_power_cap_w or 0), step=50, key="gpu_cap")
    ratio = c3.number_input("Power budget ratio (0 = rated)", min_value=0.0, max_value=1.0, value=float(scenario.power_budget_ratio or 0.0), step=0.01, key="ratio")
    c1, c2 = st.columns(2)
    capex = c1.number_input("Capex budget (USD, 0 = none)", min_value=0.0, value=float(scenario.budgets.capex_usd or 0), step=1e6, key="capex")
    itkw = c2.number_input("IT power budget (kW, 0 = none)", min_value=0.0, value=float(scenario.budgets.it_power_kw or 0), step=100.0, key="itkw")
    c1, c2, c3 = st.columns(3)
    solver = c1.selectbox("Solver", ["highs", "cbc"], index=["highs", "cbc"].index(scenario.solver.name), key="solver")
    tlim = c2.number_input("Time limit (s)", min_value=1.0, max_value=3600.0, value=float(scenario.solver.time_limit_s), key="tlim")
    gap = c3.number_input("Relative gap", min_value=0.0, max_value=0.5, value=float(scenario.solver.rel_gap), step=0.001, format="%.4f", key="gap")
    st.markdown("**Clusters**")
    edits = {}
    for c in scenario.clusters:
        c1, c2, c3, c4 = st.columns([1, 1, 1, 3])
        demand = c1.selectbox(f"{c.id}: demand", ["exact", "at_least", "max"], index=["exact", "at_least", "max"].index(c.demand.value), key=f"demand_{c.id}")
        gpus = c2.number_input(f"{c.id}: GPUs (0 = no cap for max)", min_value=0, value=int(c.gpus or 0), step=16, key=f"gpus_{c.id}")
        hop_options = sorted({1, 3, 5, 7, c.max_hops})
        hops = c3.selectbox(f"{c.id}: max hops", hop_options, index=hop_options.index(c.max_hops), key=f"hops_{c.id}")
        allowed = c4.multiselect(f"{c.id}: rack types", types, default=c.rack_types, key=f"types_{c.id}")
        edits[c.id] = {"demand": demand, "gpus": gpus or (None if demand == "max" else 0), "max_hops": hops, "rack_types": allowed}
    submitted = st.form_submit_button("Apply changes", type="primary")
if submitted:
    changes = {
        "objective": objective,
        "gpu_power_cap_w": cap or None,
        "power_budget_ratio": ratio or None,
        "budgets": {"capex_usd": capex or None, "it_power_kw": itkw or None},
        "solver": {"name": solver, "time_limit_s": tlim, "rel_gap": gap},
        "clusters": edits,
    }
    try:
        set_scenario(apply_changes(scenario, changes), "edited")
        st.success("Scenario updated. Solve it on the Plan page.")
        st.rerun()
    except InputError as e:
        show_problems(e.lines(), "The edited scenario")

st.subheader("Site")
halls = [h.id for b in scenario.site.buildings for h in b.halls]
hall = st.selectbox("Hall", halls, key="site_hall")
st.plotly_chart(floor_figure(scenario, None, hall), key="site_floor", width="stretch")
with st.expander("Scenario YAML"):
    st.code(st.session_state.scenario_yaml[:20000] + ("\n# … (truncated for display; download from the Plan page)" if len(st.session_state.scenario_yaml) > 20000 else ""), language="yaml")
