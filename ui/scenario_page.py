"""Scenario page: pick, upload or edit the planning question."""

from __future__ import annotations

import streamlit as st

from planner.enums import FailoverPolicy, Objective, SolverName
from planner.errors import InputError
from planner.loader import parse_yaml, scenario_from_data, validate_model
from planner.schema import Catalog, Demand, Site
from planner.variants import apply_changes, scenario_data
from ui.floorplan import floor_figure
from ui.state import (
    SHIPPED,
    UPLOAD_MB,
    current_scenario,
    load_shipped,
    remember_upload,
    scenario_key,
    set_scenario,
    show_problems,
    upload_root,
)


def apply_upload(kind: str, raw: bytes, name: str, scenario) -> list[str]:
    """Make an uploaded scenario current, or put an uploaded site or catalog into the current one.
    A scenario may name this session's other uploads or shipped datasets as its site: or catalog:.
    Returns the problems found (empty on success)."""
    try:
        if kind == "scenario":
            from planner.loader import load_scenario_text

            new = load_scenario_text(raw, upload_root(), name)
        elif scenario is None:
            return ["load a valid scenario first"]
        else:
            data = scenario_data(scenario)
            if kind == "site":
                data["site"] = validate_model(Site, parse_yaml(raw, name), "site", name).model_dump(mode="json")
            else:
                catalog = parse_yaml(raw, name)
                validate_model(Catalog, catalog, "catalog", name)
                data["catalog"] = catalog
            new = scenario_from_data(data)
    except InputError as e:
        return e.lines()
    set_scenario(new, "uploaded")
    return []


st.title("Scenario")
src = st.session_state.get("scenario_source", "small-hall")
pick = st.selectbox(f"Shipped scenario ({len(SHIPPED)})", SHIPPED, index=SHIPPED.index(src) if src in SHIPPED else 0, key="shipped")
if st.button("Load shipped scenario", key="load_shipped"):
    load_shipped(pick)
    st.rerun()

scenario = current_scenario()

with st.expander("Upload YAML (scenario, site or catalog)"):
    kind = st.radio("File holds", ["scenario", "site", "catalog"], horizontal=True, key="upload_kind")
    files = st.file_uploader("YAML files (a scenario may name the others as its site: or catalog:)", type=["yaml", "yml"],
                             key="upload", max_upload_size=UPLOAD_MB, accept_multiple_files=True) or []
    pasted = st.text_area("…or paste YAML", key="paste", height=150)
    if files and pasted.strip():
        st.info(f"Using the uploaded file {files[0].name}; the pasted text is ignored while a file is uploaded.")
    if st.button("Apply", key="apply_upload"):
        for f in files:
            remember_upload(f.name, f.getvalue())
        if files:
            main = files[0]
            if kind == "scenario":
                main = next((f for f in files if b"clusters:" in f.getvalue()), files[0])
            raw, name = main.getvalue(), main.name
        else:
            raw, name = pasted.encode(), "pasted text"
        if not raw.strip():
            show_problems(["nothing to apply: upload a file or paste YAML"], f"The {kind}")
        else:
            problems = apply_upload(kind, raw, name, scenario)
            if problems:
                show_problems(problems, f"The {kind} ({name})")
            else:
                st.rerun()

if scenario is None:
    st.stop()

st.subheader("Main knobs")
k = scenario_key(st.session_state.scenario_yaml)[:12]  # widgets belong to this scenario: a new one gets fresh widgets
objectives = [o.value for o in Objective]
solvers = [s.value for s in SolverName]
with st.form(f"knobs_{k}"):
    c1, c2, c3 = st.columns(3)
    objective = c1.selectbox("Objective", objectives, index=objectives.index(scenario.objective), key=f"objective_{k}")
    cap = c2.number_input("GPU power cap (W, 0 = TDP)", min_value=0, max_value=2000, value=int(scenario.gpu_power_cap_w or 0), step=50, key=f"gpu_cap_{k}")
    ratio = c3.number_input("Power budget ratio (0 = rated)", min_value=0.0, max_value=1.0, value=float(scenario.power_budget_ratio or 0.0), step=0.01, key=f"ratio_{k}")
    c1, c2 = st.columns(2)
    capex = c1.number_input("Capex budget (USD, 0 = none)", min_value=0.0, value=float(scenario.budgets.capex_usd or 0), step=1e6, key=f"capex_{k}")
    itkw = c2.number_input("IT power budget (kW, 0 = none)", min_value=0.0, value=float(scenario.budgets.it_power_kw or 0), step=100.0, key=f"itkw_{k}")
    c1, c2, c3 = st.columns(3)
    solver = c1.selectbox("Solver", solvers, index=solvers.index(scenario.solver.name), key=f"solver_{k}")
    tlim = c2.number_input("Time limit (s)", min_value=1.0, max_value=3600.0, value=float(min(scenario.solver.time_limit_s, 3600.0)), key=f"tlim_{k}")
    gap = c3.number_input("Relative gap", min_value=0.0, max_value=0.5, value=float(scenario.solver.rel_gap), step=0.001, format="%.4f", key=f"gap_{k}")
    st.markdown(f"**Clusters** ({len(scenario.clusters)}{', first 50 shown' if len(scenario.clusters) > 50 else ''})")
    types = [t.id for t in scenario.catalog.rack_types if t.gpus]
    demands = [d.value for d in Demand]
    edits = {}
    policies = [p.value for p in FailoverPolicy]
    for c in scenario.clusters[:50]:
        c1, c2, c3, c4, c5, c6 = st.columns([1, 1, 1, 3, 1, 1])
        demand = c1.selectbox(f"{c.id}: demand", demands, index=demands.index(c.demand.value), key=f"demand_{c.id}_{k}")
        gpus = c2.number_input(f"{c.id}: GPUs (0 = no cap for max)", min_value=0, value=int(c.gpus or 0), step=16, key=f"gpus_{c.id}_{k}")
        hop_options = sorted({1, 3, 5, 7, c.max_hops})
        hops = c3.selectbox(f"{c.id}: max hops", hop_options, index=hop_options.index(c.max_hops), key=f"hops_{c.id}_{k}")
        allowed = c4.multiselect(f"{c.id}: rack types", types, default=c.rack_types, key=f"types_{c.id}_{k}")
        policy = c5.selectbox(f"{c.id}: on power failure", policies, index=policies.index(c.on_power_failure.value), key=f"policy_{c.id}_{k}",
                              help="keep: strict N-1; cap: its racks in rows a failure hits draw at most the cap ratio; shed: they may lose power")
        cap_ratio = c6.number_input(f"{c.id}: cap ratio", min_value=0.0, max_value=1.0, value=float(c.cap_ratio), step=0.05, key=f"capratio_{c.id}_{k}")
        edits[c.id] = {"demand": demand, "gpus": gpus or (None if demand == "max" else 0), "max_hops": hops, "rack_types": allowed,
                       "on_power_failure": policy, "cap_ratio": cap_ratio}
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
hall = st.selectbox(f"Hall ({len(halls)})", halls, key=f"site_hall_{k}")
st.plotly_chart(floor_figure(scenario, None, hall), key="site_floor", width="stretch")
with st.expander("Scenario YAML"):
    text = st.session_state.scenario_yaml
    st.code(text[:20000] + ("\n# … (truncated for display; download from the Plan page)" if len(text) > 20000 else ""), language="yaml")
