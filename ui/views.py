"""Reusable views: active settings, KPI cards, site overview, floor plan, utilisation, explain
table, downloads. Every chart takes its colours from ui.colors and says when it shows a top N."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from planner.cells import safe_frame
from planner.enums import LimitKind, Status
from planner.plan import Plan, plan_to_yaml
from planner.plan.kpis import capex_text
from planner.schema import Scenario
from ui.charts import kpi_table, utilisation_figure
from ui.floorplan import floor_figure
from ui.format import show_table
from ui.session import session
from ui.sitemap import COLOR_BY as SITE_COLOR_BY
from ui.sitemap import site_map_figure

COLOR_BY = {"rack type": "rack_type", "cluster": "cluster", "feed utilisation": "feed_utilisation"}
STATUS_WORDS = {
    Status.optimal: "Optimal",
    Status.feasible: "Feasible (gap)",
    Status.infeasible: "Infeasible",
    Status.time_limit: "No plan in time",
    Status.no_solution: "No solution",
    Status.not_solved: "Not solved",
}


def active_settings(scenario: Scenario) -> str:
    """What shapes the next solve, in one line: objective, budgets, caps, ratio, solver."""
    parts = [f"objective **{scenario.objective}**"]
    b = scenario.budgets
    parts.append(f"capex budget **${b.capex_usd:,.0f}**" if b.capex_usd is not None else "no capex budget")
    parts.append(
        f"IT power budget **{b.it_power_kw:,.0f} kW**" if b.it_power_kw is not None else "no IT power budget"
    )
    parts.append(
        f"GPU cap **{scenario.gpu_power_cap_w:g} W**"
        if scenario.gpu_power_cap_w is not None
        else "GPUs at TDP"
    )
    parts.append(
        f"power budget ratio **{scenario.power_budget_ratio:g}**"
        if scenario.power_budget_ratio is not None
        else "racks at rated power"
    )
    sv = scenario.solver
    parts.append(f"{sv.name}, {sv.time_limit_s:g} s, gap {sv.rel_gap:g}")
    return " · ".join(parts)


def kpi_cards(plan: Plan) -> None:
    """Headline figures as metric cards (figures recomputed from the racks)."""
    k = plan.kpis
    assert k is not None
    gap = "-" if plan.gap is None else f"{plan.gap:.2%}"
    cols = st.columns(5)
    cols[0].metric("GPUs", f"{k.gpus:,}", border=True)
    cols[1].metric("Racks", f"{k.racks:,}", border=True)
    cols[2].metric("PFLOPS (BF16)", f"{k.pflops_bf16:,.0f}", border=True)
    cols[3].metric("IT MW", f"{k.it_kw / 1000:,.2f}", border=True)
    cols[4].metric(
        "Status",
        STATUS_WORDS.get(plan.status, str(plan.status)),
        help=f"{plan.status.value}; gap {gap}; solver {plan.solver}",
        border=True,
    )
    cols = st.columns(5)
    cols[0].metric("GPUs / MW", f"{k.gpus_per_mw:,.0f}", border=True)
    cols[1].metric(
        "kW / rack (avg)", f"{k.avg_kw_per_rack:,.1f}", help=f"max {k.max_kw_per_rack:,.1f} kW", border=True
    )
    capex = f"${k.capex_usd / 1e9:,.2f}B" if k.capex_usd >= 1e9 else f"${k.capex_usd / 1e6:,.1f}M"
    cols[2].metric("Capex", capex, help=capex_text(k), border=True)
    worst = max(
        (u.worst_share for u in plan.utilisation or [] if u.kind == LimitKind.power_node and u.limit > 0),
        default=0.0,
    )
    cols[3].metric("Worst power use (N-1)", f"{worst:.0%}", border=True)
    cols[4].metric("Gap", gap, help=f"objective {plan.objective_value}, bound {plan.bound}", border=True)
    if plan.fabric:
        cols = st.columns(5)
        cols[0].metric("Fabric", ", ".join(sorted({f.design for f in plan.fabric})), border=True)
        cols[1].metric(
            "Fabric MW",
            f"{k.fabric_kw / 1000:,.2f}",
            help="switches outside the GPU racks and every transceiver",
            border=True,
        )
        cols[2].metric(
            "Network positions",
            f"{k.fabric_racks:,}",
            help="network racks of the designed fabrics at network-row positions",
            border=True,
        )
        cols[3].metric("Switches", f"{k.switches:,}", help=f"{k.optics:,} optical transceivers", border=True)
        cols[4].metric("Fabric $ / GPU", f"${k.fabric_usd_per_gpu:,.0f}", border=True)


def hall_overview(scenario: Scenario, plan: Plan | None) -> pd.DataFrame:
    """One row per hall: positions, racks, GPUs, IT MW, worst power-node use (N-1), worst cooling use."""
    types = scenario.catalog.by_id()
    racks = plan.racks if plan else []
    usage = {(u.kind, u.id): u for u in (plan.utilisation or []) if plan} if plan else {}
    rows = []
    for b in scenario.site.buildings:
        for h in b.halls:
            mine = [r for r in racks if r.hall == h.id]
            kw = sum(scenario.rack_power_kw(types[r.rack_type]) for r in mine)
            power = [
                usage[(LimitKind.power_node, n.id)].worst_share
                for n in h.power_nodes
                if (LimitKind.power_node, n.id) in usage
            ]
            cool = [
                usage[(LimitKind.cooling_zone, z.id)].share
                for z in h.cooling_zones
                if (LimitKind.cooling_zone, z.id) in usage
            ]
            positions = sum(r.positions - len(r.reserved) for r in h.rows if r.network is None) - sum(
                1 for p in h.pods if any(r.id == p.network_rack.row and r.network is None for r in h.rows)
            )
            rows.append(
                {
                    "building": b.id,
                    "hall": h.id,
                    "positions": positions,
                    "racks": len(mine),
                    "GPUs": sum(types[r.rack_type].gpus for r in mine),
                    "IT MW": round(kw / 1000, 3),
                    "worst power use %": round(100 * max(power, default=0.0), 1),
                    "worst cooling use %": round(100 * max(cool, default=0.0), 1),
                }
            )
    return pd.DataFrame(rows)


def site_overview(scenario: Scenario, plan: Plan | None, key: str) -> None:
    """On sites of several halls: a site map (buildings → hall tiles, coloured by a chosen figure;
    a click opens the hall's floor plan below) and the per-hall table."""
    df = hall_overview(scenario, plan)
    if len(df) <= 1:
        return
    st.subheader(f"Site overview: {len(scenario.site.buildings)} buildings, {len(df)} halls")
    color = st.radio(
        "Colour halls by",
        list(SITE_COLOR_BY) if plan is not None else ["positions"],
        horizontal=True,
        key=f"{key}_map_color_{'plan' if plan is not None else 'site'}",
    )
    event = st.plotly_chart(
        site_map_figure(scenario, df, color),
        key=f"{key}_sitemap",
        on_select="rerun",
        selection_mode="points",
        width="stretch",
    )
    clicked = [p["customdata"] for p in (event.selection.points if event else []) if p.get("customdata")]
    if clicked and clicked[0] != session().map_clicked.get(key):
        # a new click opens that hall (the hall picker below keeps its own value otherwise)
        session().map_clicked[key] = clicked[0]
        st.session_state[f"{key}_hall"] = clicked[0]  # the hall picker's own widget key
    st.caption("Click a hall to open its floor plan below.")
    with st.expander("Per hall (table)"):
        show_table(df, f"{key}_overview")


def floor_plan(scenario: Scenario, plan: Plan | None, key: str) -> None:
    """Hall picker, colour picker and the floor plan figure."""
    halls = [h.id for b in scenario.site.buildings for h in b.halls]
    c1, c2 = st.columns([1, 2])
    hall = c1.selectbox(f"Hall ({len(halls)})", halls, key=f"{key}_hall")
    color = c2.radio("Colour by", list(COLOR_BY), horizontal=True, key=f"{key}_color")
    st.plotly_chart(floor_figure(scenario, plan, hall, COLOR_BY[color]), key=f"{key}_floor", width="stretch")


def utilisation(plan: Plan, top: int = 25) -> None:
    """Utilisation bars against limits, normal and worst N-1 (the top ``top`` of each kind, said so)."""
    kinds = [
        k
        for k in (
            LimitKind.power_node,
            LimitKind.cooling_zone,
            LimitKind.pod_gpus,
            LimitKind.pod_racks,
            LimitKind.budget,
            LimitKind.power_arrival,
        )
        if any(u.kind == k for u in plan.utilisation or [])
    ]
    cols = st.columns(2)
    for i, kind in enumerate(kinds):
        fig = utilisation_figure(plan, kind, top)
        if fig is not None:
            cols[i % 2].plotly_chart(fig, key=f"util_{kind}", width="stretch")


LP_SCREEN_HELP = (
    "First-order estimate from the LP relaxation's dual values (shadow price × step), used only to pick "
    "which limits "
    "to re-solve exactly; the re-solved gain is the answer."
)


def explain_table(binding: dict) -> None:
    """The binding limits that buy something when relaxed, largest gain first; those that buy
    nothing folded under "no gain"; the text below."""
    rows = binding.get("rows", [])
    unit = binding.get("unit", "GPUs")

    def gains(r: dict) -> bool:
        return (r.get("gain") or 0) > 0 or (r.get("gain up to") or 0) > 0

    def frame(rs: list[dict]) -> pd.DataFrame:
        return pd.DataFrame(rs).rename(
            columns={
                "gain": f"+{unit}",
                "gain up to": f"+{unit} up to",
                "cost USD": "cost_usd",
                "LP screen": f"LP screen (+{unit})",
            }
        )

    why = "not re-solved (the LP screen ranked it below the limits re-solved), or no upper bound found"
    tips = {
        f"LP screen (+{unit})": LP_SCREEN_HELP,
        "cost $M": "what one step of the relaxation costs, at the scenario's cost figures",
    }
    useful = sorted(
        (r for r in rows if gains(r)), key=lambda r: -max(r.get("gain") or 0, r.get("gain up to") or 0)
    )
    idle = [r for r in rows if not gains(r)]
    if useful:
        show_table(frame(useful), "explain_table", why_empty=why, help=tips)
    elif rows:
        st.info(f"Relaxing no single limit by one step buys more {unit}: several limits bind together.")
    if idle:
        with st.expander(
            f"No gain: {len(idle)} limit{'s' if len(idle) != 1 else ''} that buy nothing when relaxed alone"
        ):
            show_table(frame(idle), "explain_nogain", why_empty=why, help=tips)
    with st.expander("As text"):
        st.code(binding.get("text", ""), language=None)


def downloads(scenario_yaml: str, plan: Plan, name: str, scenario=None) -> None:
    """Plan YAML, scenario YAML and KPI CSV downloads; with the scenario, the placement table
    (CSV, XLSX: a sheet per hall plus KPIs) and the NetBox bundle (a ZIP of import CSVs), made on click."""
    if scenario is not None and plan.racks:
        from planner.dcim.exports import to_bytes

        e1, e2, e3 = st.columns(3)
        e1.download_button(
            "Placement, one row per rack (CSV)",
            lambda: to_bytes(plan, scenario, "csv"),
            file_name=f"{name}.placement.csv",
            mime="text/csv",
            key="dl_placement_csv",
            on_click="ignore",
        )
        e2.download_button(
            "Placement by hall (XLSX)",
            lambda: to_bytes(plan, scenario, "xlsx"),
            file_name=f"{name}.placement.xlsx",
            mime="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            key="dl_placement_xlsx",
            on_click="ignore",
        )
        e3.download_button(
            "NetBox bundle (ZIP of import CSVs)",
            lambda: to_bytes(plan, scenario, "netbox"),
            file_name=f"{name}.netbox.zip",
            mime="application/zip",
            key="dl_netbox",
            on_click="ignore",
        )
    c1, c2, c3 = st.columns(3)
    c1.download_button(
        "Download plan YAML",
        plan_to_yaml(plan),
        file_name=f"{name}.plan.yaml",
        mime="application/x-yaml",
        key="dl_plan",
    )
    c2.download_button(
        "Download scenario YAML",
        scenario_yaml,
        file_name=f"{name}.yaml",
        mime="application/x-yaml",
        key="dl_scenario",
    )
    c3.download_button(
        "Download KPIs (CSV)",
        safe_frame(kpi_table({name: plan})).to_csv(),
        file_name=f"{name}.kpis.csv",
        mime="text/csv",
        key="dl_kpis",
    )
