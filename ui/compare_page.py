"""Compare page: variants of the current scenario side by side."""

from __future__ import annotations

import streamlit as st

from planner.enums import Status
from planner.errors import InputError
from planner.input.variants import apply_changes, scenario_yaml
from ui.charts import kpi_table, with_deltas
from ui.floorplan import floor_figure
from ui.format import show_table
from ui.session import session
from ui.solve import solve_text
from ui.state import current_scenario, plan_of, show_problems

scenario = current_scenario()
if scenario is None:
    st.stop()
st.title(f"Compare variants of {scenario.name}")
st.caption(
    "Each variant is the current scenario with the changes below; every variant is solved and verified on "
    "its own."
)

types = [t.id for t in scenario.catalog.rack_types if t.gpus]
variants = []
with st.form("variants"):
    cols = st.columns(3)
    for i, col in enumerate(cols):
        col.markdown(f"**Variant {chr(65 + i)}**")
        use = col.checkbox("include", value=i < 2, key=f"v{i}_on")
        rt = col.selectbox(
            "rack types of every cluster", ["(as in scenario)", *types], key=f"v{i}_rt", index=0
        )
        cap = col.number_input(
            "GPU power cap W (0 = TDP)",
            min_value=0,
            max_value=2000,
            value=0 if i != 1 else 0,
            step=50,
            key=f"v{i}_cap",
        )
        designs = [d.id for d in scenario.fabrics]
        # two different variants from the start: B on the second fabric design, or B's racks budgeted at 80 %
        # of rated power
        ratio = col.number_input(
            "power budget ratio (0 = rated)",
            min_value=0.0,
            max_value=1.0,
            value=0.8 if i == 1 and len(designs) < 2 else 0.0,
            step=0.01,
            key=f"v{i}_ratio",
            help="Racks budgeted at this share of their rated power (measured draw below nameplate)",
        )
        fab = col.selectbox(
            "fabric design",
            ["(as in scenario)", *designs],
            index=min(i + 1, len(designs)) if designs and i < 2 else 0,
            key=f"v{i}_fabric",
            disabled=not designs,
            help="Builds every cluster that has fabric designs on this one (scenario fabrics:)",
        )
        if use:
            variants.append((chr(65 + i), rt, cap, ratio, fab))
    go = st.form_submit_button("Solve variants", type="primary")

if go:
    results = {}
    for name, rt, cap, ratio, fab in variants:
        changes: dict = {
            "name": f"{scenario.name}-{name}",
            "gpu_power_cap_w": cap or None,
            "power_budget_ratio": ratio or None,
        }
        if rt != "(as in scenario)":
            changes["rack_types"] = [rt]
        if fab != "(as in scenario)":
            changes["clusters"] = {c.id: {"fabrics": [fab]} for c in scenario.clusters if c.fabrics}
        try:
            v = apply_changes(scenario, changes)
        except InputError as e:
            show_problems(e.lines(), f"Variant {name}")
            continue
        text = scenario_yaml(v)
        with st.status(f"Variant {name}…", expanded=False) as box:
            entry = solve_text(text, v, box)
            status = entry.get("plan", {}).get("status", "error")
            box.update(
                label=f"Variant {name}: {status}",
                state="complete" if status in (Status.optimal, Status.feasible) else "error",
            )
        results[name] = (v, plan_of(entry), entry)
    session().compare = results

results = session().compare
if results:
    plans = {n: p for n, (_, p, _) in results.items() if p is not None}
    if plans:
        st.subheader("KPIs")
        show_table(
            with_deltas(kpi_table(plans)),
            "compare_kpis",
            why_empty=(
                "not stated for this plan (no fabric designed, or no gap: not a MIP answer); in a delta "
                "row, not a number"
            ),
            hide_index=False,
        )
        if len(plans) >= 2:
            st.caption(
                'Rows "B − A" (and "C − A") give each figure\'s difference from variant A, in the '
                "column's unit."
            )
    cols = st.columns(len(results))
    for col, (name, (v, p, entry)) in zip(cols, results.items(), strict=True):
        col.markdown(
            f"**{name}**: {p.kpis.gpus:,} GPUs, {p.status.value}"
            if p and p.kpis
            else f"**{name}**: {entry.get('error', 'no plan')}"
        )
        if p is not None:
            hall = next(h.id for b in v.site.buildings for h in b.halls)
            col.plotly_chart(floor_figure(v, p, hall), key=f"cmp_floor_{name}", width="stretch")
