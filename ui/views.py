"""Reusable views: KPI cards, floor plan with its controls, utilisation, downloads."""

from __future__ import annotations

import streamlit as st

from planner.plan import Plan, plan_to_yaml
from planner.schema import Scenario
from ui.charts import kpi_table, utilisation_figure
from ui.floorplan import floor_figure

COLOR_BY = {"rack type": "rack_type", "cluster": "cluster", "feed utilisation": "feed_utilisation"}


def kpi_cards(plan: Plan) -> None:
    """Headline figures as metric cards."""
    k = plan.kpis
    gap = "-" if plan.gap is None else f"{plan.gap:.2%}"
    cols = st.columns(5)
    cols[0].metric("GPUs", f"{k.gpus:,}", border=True)
    cols[1].metric("Racks", f"{k.racks:,}", border=True)
    cols[2].metric("PFLOPS (BF16)", f"{k.pflops_bf16:,.0f}", border=True)
    cols[3].metric("IT MW", f"{k.it_kw / 1000:,.2f}", border=True)
    cols[4].metric("Status", plan.status, help=f"gap {gap}, solver {plan.solver}", border=True)
    cols = st.columns(5)
    cols[0].metric("GPUs / MW", f"{k.gpus_per_mw:,.0f}", border=True)
    cols[1].metric("kW / rack (avg)", f"{k.avg_kw_per_rack:,.1f}", help=f"max {k.max_kw_per_rack:,.1f} kW", border=True)
    capex = f"${k.capex_usd / 1e9:,.2f}B" if k.capex_usd >= 1e9 else f"${k.capex_usd / 1e6:,.1f}M"
    cols[2].metric("Capex", capex, help=f"racks ${k.capex_racks_usd:,.0f} + fabric ${k.capex_fabric_usd:,.0f} + links ${k.capex_links_usd:,.0f}", border=True)
    worst = max((u.worst_share for u in plan.utilisation if u.kind == "power_node" and u.limit > 0), default=0.0)
    cols[3].metric("Worst power use (N-1)", f"{worst:.0%}", border=True)
    cols[4].metric("Gap", gap, help=f"objective {plan.objective_value}, bound {plan.bound}", border=True)


def floor_plan(scenario: Scenario, plan: Plan | None, key: str) -> None:
    """Hall picker, colour picker and the floor plan figure."""
    halls = [h.id for b in scenario.site.buildings for h in b.halls]
    c1, c2 = st.columns([1, 2])
    hall = c1.selectbox("Hall", halls, key=f"{key}_hall")
    color = c2.radio("Colour by", list(COLOR_BY), horizontal=True, key=f"{key}_color")
    st.plotly_chart(floor_figure(scenario, plan, hall, COLOR_BY[color]), key=f"{key}_floor", width="stretch")


def utilisation(plan: Plan) -> None:
    """Utilisation bars against limits, normal and worst N-1."""
    kinds = [k for k in ("power_node", "cooling_zone", "pod_gpus", "pod_racks", "budget") if any(u.kind == k for u in plan.utilisation)]
    cols = st.columns(2)
    for i, kind in enumerate(kinds):
        fig = utilisation_figure(plan, kind)
        if fig is not None:
            cols[i % 2].plotly_chart(fig, key=f"util_{kind}", width="stretch")


def downloads(scenario_yaml: str, plan: Plan, name: str) -> None:
    """Plan YAML, scenario YAML and KPI CSV downloads."""
    c1, c2, c3 = st.columns(3)
    c1.download_button("Download plan YAML", plan_to_yaml(plan), file_name=f"{name}.plan.yaml", mime="application/x-yaml", key="dl_plan")
    c2.download_button("Download scenario YAML", scenario_yaml, file_name=f"{name}.yaml", mime="application/x-yaml", key="dl_scenario")
    c3.download_button("Download KPIs (CSV)", kpi_table({name: plan}).to_csv(), file_name=f"{name}.kpis.csv", mime="text/csv", key="dl_kpis")
