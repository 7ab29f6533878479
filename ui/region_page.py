"""Region page (§16): the structures of a region on a map with when each comes online, the MW
available against the MW used per quarter, and the backup-power choice per structure."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from planner.plan.structures import region_power, structures
from ui.format import show_table
from ui.grid import grid_section
from ui.session import session
from ui.solve import resume, solve_button
from ui.state import current_scenario, joint_entry, plan_of

scenario = current_scenario()
if scenario is None:
    st.stop()
text = session().scenario_yaml
st.title(f"Region: {scenario.name}")
st.caption(
    "Buildings and temporary structures (tents) of the region: when each can hold racks, what the plan "
    "puts there, the "
    "facility power it draws (IT × PUE) against the interconnect and on-site generation arrived, and the "
    "backup power per structure."
)
if len(scenario.site.buildings) < 2 and not scenario.power_arrival:
    st.info(
        "This scenario is one building without power arriving over time. Load `prometheus-1gw` on the "
        "Scenario page for a region."
    )

# a region of several buildings is solved decomposed by building (planner.scale.region_master): minutes
# for the whole model of a gigawatt region become about a minute; a joint plan from another page is shown as
# it is
split = len(scenario.site.buildings) >= 2
mode = "decomposed" if split else "joint"
plan = plan_of(joint_entry(text) or resume(text, mode, "Solving building by building"))
if plan is None:
    label = "Solve jointly, building by building" if split else "Solve jointly"
    plan = solve_button(
        text,
        scenario,
        label,
        "region_solve",
        mode,
        help="Decomposed by building: a master shares each cluster's GPUs and the power arrived between the "
        "buildings, each "
        "building is planned alone, and the joined plan is verified and measured against the LP bound of "
        "the whole"
        if split
        else None,
    )
    if plan is None:
        st.info(f"Not solved yet: press **{label}** (or solve jointly on the Plan or Phases page).")
        st.stop()
if plan.notes:
    st.caption(plan.notes[0])
if not plan.status.has_plan:
    st.error(f"No plan ({plan.status.value}): " + "; ".join(plan.notes[-2:]))
    st.stop()

rows = structures(scenario, plan)
power = region_power(scenario, plan)
phases = [p.id for p in scenario.phases] or ["all"]
last = power[-1]
cols = st.columns(4)
cols[0].metric(
    "Structures standing",
    f"{sum(s.built for s in rows)} of {len(rows)}",
    border=True,
    help="Buildings, plus the temporary structures the plan builds (a structure not built stays empty)",
)
cols[1].metric(f"GPUs by {phases[-1]}", f"{sum(s.gpus[-1] for s in rows):,}", border=True)
cols[2].metric(
    f"Facility MW by {phases[-1]}",
    f"{last.facility_kw / 1000:,.1f}",
    border=True,
    help=f"IT of every rack and network rack × design-day PUE {scenario.arrival_pue:g} (arrival's)",
)
cols[3].metric(
    "MW arrived",
    "—" if last.arrived_kw is None else f"{last.arrived_kw / 1000:,.1f}",
    border=True,
    help="Utility interconnect plus on-site generation arrived by the last phase (power_arrival)",
)

st.subheader("Structures")
order = {p: i for i, p in enumerate(phases)}
fig = go.Figure()
for kind in sorted({s.kind for s in rows}):
    mine = [s for s in rows if s.kind == kind]
    fig.add_scatter(
        x=[s.location_km[0] for s in mine],
        y=[s.location_km[1] for s in mine],
        mode="markers+text",
        name=kind,
        text=[
            f"{s.building}<br>{s.online or phases[0]}" if s.built else f"{s.building}<br>not built"
            for s in mine
        ],
        textposition="top center",
        marker={
            "symbol": "square" if kind == "building" else "triangle-up",
            "size": [12 + 18 * (s.usable_kw / max(1.0, *(x.usable_kw for x in rows))) ** 0.5 for s in mine],
            "color": [order.get(s.online or phases[0], 0) if s.built else -1 for s in mine],
            "colorscale": "Viridis",
            "cmin": -1,
            "cmax": max(len(phases) - 1, 1),
            "line": {"width": 1, "color": "#333"},
        },
        hovertext=[
            f"<b>{s.kind} {s.building}</b><br>"
            f"{'online from ' + (s.online or phases[0]) if s.built else 'not built'}"
            f"<br>{s.usable_kw / 1000:,.1f} MW usable<br>{s.gpus[-1]:,} GPUs, {s.it_kw[-1] / 1000:,.1f} MW "
            f"IT by {phases[-1]}" + (f"<br>backup: {s.backup}" if s.backup else "")
            for s in mine
        ],
        hoverinfo="text",
    )
in_line = (
    len({s.location_km[1] for s in rows}) == 1
)  # a generated region stands on one line: no need for a square map
fig.update_layout(
    height=260 if in_line else 420,
    title="Where the structures stand (km) and the phase from which each holds racks "
    "(colour; grey: not built)",
    xaxis={"title": "km"},
    yaxis={"title": "km", "range": [-1, 1.2]} if in_line else {"title": "km", "scaleanchor": "x"},
    legend={"orientation": "h"},
    margin={"l": 10, "r": 10, "t": 40, "b": 10},
    plot_bgcolor="white",
)
st.plotly_chart(fig, key="region_map", width="stretch")
show_table(
    pd.DataFrame(
        [
            {
                "structure": s.building,
                "kind": s.kind,
                "online from": (s.online or phases[0]) if s.built else "not built",
                "bought in": s.bought,
                "usable MW": s.usable_kw / 1000,
                f"GPUs by {phases[-1]}": s.gpus[-1],
                f"IT MW by {phases[-1]}": s.it_kw[-1] / 1000,
                "backup power": s.backup,
            }
            for s in rows
        ]
    ),
    "region_structures",
    why_empty="bought only for a structure to build; backup chosen only with backup_power",
)

st.subheader("Power: available vs used")
fig = go.Figure()
for kind in sorted({s.kind for s in rows}):
    it = [sum(s.it_kw[i] for s in rows if s.kind == kind) for i in range(len(power))]
    fig.add_bar(x=phases, y=[scenario.arrival_pue * v / 1000 for v in it], name=f"{kind}s: racks × PUE")
racks = [scenario.arrival_pue * sum(s.it_kw[i] for s in rows) for i in range(len(power))]
fig.add_bar(
    x=phases,
    y=[(p.facility_kw - r) / 1000 for p, r in zip(power, racks, strict=True)],
    name="network racks and fabric × PUE",
    marker_color="#999",
)
if scenario.power_arrival:
    fig.add_scatter(
        x=phases,
        y=[(p.arrived_kw or 0) / 1000 for p in power],
        name="MW arrived (interconnect + generation)",
        mode="lines+markers",
        line={"color": "#c23b3b", "dash": "dash", "shape": "hv"},
    )
fig.update_layout(
    barmode="stack",
    height=340,
    title="Facility MW drawn per phase against MW arrived",
    yaxis={"title": "MW", "tickformat": ",.0f"},
    legend={"orientation": "h"},
    margin={"l": 10, "r": 10, "t": 40, "b": 10},
)
st.plotly_chart(fig, key="region_power", width="stretch")
show_table(
    pd.DataFrame(
        [
            {
                "phase": ph,
                "facility MW": p.facility_kw / 1000,
                "MW arrived": None if p.arrived_kw is None else p.arrived_kw / 1000,
                "headroom MW": None if p.headroom_kw is None else p.headroom_kw / 1000,
            }
            for ph, p in zip(phases, power, strict=True)
        ]
    ),
    "region_power_table",
    why_empty="the scenario states no power arrival",
)
grid_section(scenario, plan)

if plan.reliability and plan.reliability.backup:
    st.subheader("Backup power per structure")
    st.caption(
        "The design with the lowest $ per useful GPU-hour of the plan, per structure (fixed ones as "
        "given): capex saved against "
        "goodput lost when an outage without ride-through interrupts every cluster in it. Details on the "
        "Reliability page."
    )
    designs = {d.id: d for d in scenario.backup_power.designs} if scenario.backup_power else {}
    show_table(
        pd.DataFrame(
            [
                {
                    "structure": b.building,
                    "design": b.design + (" (fixed)" if b.fixed else ""),
                    "rides through": b.ride_through,
                    "GPU-hours dark / year": b.gpu_hours_dark_per_year,
                    **{
                        f"capex with {d} $M": designs[d].usd_per_mw * b.it_kw / 1e9
                        for d in b.usd_per_useful_gpu_hour
                        if d in designs
                    },
                    **{
                        f"$ per 1,000 useful GPU-hours with {d}": 1000 * v
                        for d, v in b.usd_per_useful_gpu_hour.items()
                    },
                }
                for b in plan.reliability.backup
            ]
        ),
        "region_backup",
        help={
            f"$ per 1,000 useful GPU-hours with {d}": f"The plan's $ per useful GPU-hour × 1,000 with this "
            f"structure on {d} and the others "
            "as chosen: capex saved against GPU-hours lost to outages"
            for d in designs
        },
    )
