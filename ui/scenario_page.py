"""Scenario page: pick, upload or edit the planning question."""

from __future__ import annotations

import streamlit as st

from planner.enums import FailoverPolicy, Objective, SolverName
from planner.errors import InputError
from planner.input.loader import parse_yaml, scenario_from_data, validate_model
from planner.input.variants import apply_changes, scenario_data
from planner.schema import Catalog, Demand, Site
from ui.floorplan import floor_figure
from ui.knobs import (
    describe,
    discard_edits,
    in_effect,
    keep_pending,
    knob_changes,
    knob_values,
    pending_edits,
)
from ui.session import session
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
from ui.whatif import site_edit_form


def apply_upload(kind: str, raw: bytes, name: str, scenario) -> list[str]:
    """Make an uploaded scenario current, or put an uploaded site or catalog into the current one.
    A scenario may name this session's other uploads or shipped datasets as its site: or catalog:.
    Returns the problems found (empty on success)."""
    try:
        if kind == "scenario":
            from planner.input.loader import load_scenario_text

            new = load_scenario_text(raw, upload_root(), name)
        elif scenario is None:
            return ["load a valid scenario first"]
        else:
            data = scenario_data(scenario)
            if kind == "site":
                data["site"] = validate_model(Site, parse_yaml(raw, name), "site", name).model_dump(
                    mode="json"
                )
            else:
                catalog = parse_yaml(raw, name)
                validate_model(Catalog, catalog, "catalog", name)
                data["catalog"] = catalog
            new = scenario_from_data(data)
    except InputError as e:
        return e.lines()
    set_scenario(new, "uploaded")
    session().applied = f"Loaded the uploaded {kind} ({name}): the scenario in effect is now {new.name}."
    return []


st.title("Scenario")
scenario = current_scenario()
if scenario is not None:
    in_effect(scenario)
src = session().scenario_source or "small-hall"
sk = scenario_key(session().scenario_yaml)[:12]
c1, c2 = st.columns([3, 1])
pick = c1.selectbox(
    f"Load a shipped scenario ({len(SHIPPED)})",
    SHIPPED,
    index=SHIPPED.index(src) if src in SHIPPED else None,
    placeholder="the scenario in effect is not a shipped one: pick one to replace it",
    key=f"shipped_{sk}",
)
if c2.button("Load shipped scenario", key="load_shipped", disabled=pick is None):
    load_shipped(pick)
    session().applied = f"Loaded the shipped scenario {pick}."
    st.rerun()

with st.expander("Upload YAML (scenario, site or catalog)"):
    kind = st.radio("File holds", ["scenario", "site", "catalog"], horizontal=True, key="upload_kind")
    files = (
        st.file_uploader(
            "YAML files (a scenario may name the others as its site: or catalog:)",
            type=["yaml", "yml"],
            key="upload",
            max_upload_size=UPLOAD_MB,
            accept_multiple_files=True,
        )
        or []
    )
    pasted = st.text_area("…or paste YAML", key="paste", height=150)
    if files and pasted.strip():
        st.info(
            f"Using the uploaded file {files[0].name}; the pasted text is ignored while a file is uploaded."
        )
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
k = scenario_key(session().scenario_yaml)[
    :12
]  # widgets belong to this scenario: a new one gets fresh widgets
base = knob_values(scenario)
held = pending_edits(k)  # edits kept while the user looked at other pages
vals = {**base, **held}
objectives = [o.value for o in Objective]
solvers = [s.value for s in SolverName]
got: dict = {}
c1, c2, c3 = st.columns(3)
got["objective"] = c1.selectbox(
    "Objective", objectives, index=objectives.index(vals["objective"]), key=f"objective_{k}"
)
got["gpu_cap"] = c2.number_input(
    "GPU power cap (W, 0 = TDP)",
    min_value=0,
    max_value=2000,
    value=vals["gpu_cap"],
    step=50,
    key=f"gpu_cap_{k}",
)
got["ratio"] = c3.number_input(
    "Power budget ratio (0 = rated)",
    min_value=0.0,
    max_value=1.0,
    value=vals["ratio"],
    step=0.01,
    key=f"ratio_{k}",
)
c1, c2 = st.columns(2)
got["capex"] = c1.number_input(
    "Capex budget (USD, 0 = none)",
    min_value=0.0,
    value=vals["capex"],
    step=1e6,
    format="%.0f",
    key=f"capex_{k}",
)
got["itkw"] = c2.number_input(
    "IT power budget (kW, 0 = none)",
    min_value=0.0,
    value=vals["itkw"],
    step=100.0,
    format="%.0f",
    key=f"itkw_{k}",
)
c1, c2, c3 = st.columns(3)
got["solver"] = c1.selectbox("Solver", solvers, index=solvers.index(vals["solver"]), key=f"solver_{k}")
got["tlim"] = c2.number_input(
    "Time limit (s)", min_value=1.0, max_value=3600.0, value=vals["tlim"], key=f"tlim_{k}"
)
got["gap"] = c3.number_input(
    "Relative gap", min_value=0.0, max_value=0.5, value=vals["gap"], step=0.001, format="%.4f", key=f"gap_{k}"
)
st.markdown(
    f"**Clusters** ({len(scenario.clusters)}{', first 50 shown' if len(scenario.clusters) > 50 else ''})"
)
types = [t.id for t in scenario.catalog.rack_types if t.gpus]
demands = [d.value for d in Demand]
policies = [p.value for p in FailoverPolicy]
for c in scenario.clusters[:50]:
    c1, c2, c3, c4, c5, c6 = st.columns([1, 1, 1, 3, 1, 1])
    i = c.id
    got[f"demand_{i}"] = c1.selectbox(
        f"{i}: demand", demands, index=demands.index(vals[f"demand_{i}"]), key=f"demand_{i}_{k}"
    )
    got[f"gpus_{i}"] = c2.number_input(
        f"{i}: GPUs (0 = no cap for max)", min_value=0, value=vals[f"gpus_{i}"], step=16, key=f"gpus_{i}_{k}"
    )
    hop_options = sorted({1, 3, 5, 7, c.max_hops, vals[f"hops_{i}"]})
    got[f"hops_{i}"] = c3.selectbox(
        f"{i}: max hops", hop_options, index=hop_options.index(vals[f"hops_{i}"]), key=f"hops_{i}_{k}"
    )
    got[f"types_{i}"] = c4.multiselect(
        f"{i}: rack types", types, default=vals[f"types_{i}"], key=f"types_{i}_{k}"
    )
    got[f"policy_{i}"] = c5.selectbox(
        f"{i}: on power failure",
        policies,
        index=policies.index(vals[f"policy_{i}"]),
        key=f"policy_{i}_{k}",
        help=(
            "keep: strict N-1; cap: its racks in rows a failure hits draw at most the cap ratio; shed: "
            "they may lose power"
        ),
    )
    got[f"capratio_{i}"] = c6.number_input(
        f"{i}: cap ratio",
        min_value=0.0,
        max_value=1.0,
        value=vals[f"capratio_{i}"],
        step=0.05,
        key=f"capratio_{i}_{k}",
    )
diff = {name: v for name, v in got.items() if v != base[name]}
keep_pending(k, diff)
if diff:
    st.warning(
        f"**{len(diff)} unapplied edit{'s' if len(diff) != 1 else ''}** (kept while you visit other pages; "
        "the Plan page solves "
        "the scenario in effect until you apply them):\n\n"
        + "\n".join(f"- {line}" for line in describe(diff, base))
    )
c1, c2 = st.columns([1, 4])
apply = c1.button("Apply changes", type="primary", key=f"apply_{k}", disabled=not diff)
c2.button("Discard edits", key=f"discard_{k}", disabled=not diff, on_click=discard_edits, args=(k,))
if apply and diff:
    try:
        new = apply_changes(scenario, knob_changes(scenario, got))
    except InputError as e:
        show_problems(e.lines(), "The edited scenario")
    else:
        ss = session()
        origin = ss.scenario_source
        set_scenario(new, "edited")
        ss.edited_from = origin if origin in SHIPPED else (ss.edited_from if origin == "edited" else None)
        ss.applied = (
            f"Applied to {scenario.name}: "
            + "; ".join(describe(diff, base))
            + ". The Plan page now solves this edited scenario."
        )
        keep_pending(k, {})
        st.rerun()

site_edit_form(scenario, k, session().scenario_yaml, session().scenario_source, set_scenario)

st.subheader("Site")
halls = [h.id for b in scenario.site.buildings for h in b.halls]
hall = st.selectbox(f"Hall ({len(halls)})", halls, key=f"site_hall_{k}")
st.plotly_chart(floor_figure(scenario, None, hall), key="site_floor", width="stretch")
with st.expander("Scenario YAML"):
    text = session().scenario_yaml
    st.code(
        text[:20000]
        + ("\n# … (truncated for display; download from the Plan page)" if len(text) > 20000 else ""),
        language="yaml",
    )
