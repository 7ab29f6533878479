"""Phases page: a fleet expansion over time, joint vs rolling, two-stage plans over demand futures, and what
it costs."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from planner.enums import Status
from planner.plan.kpis import capex_parts
from planner.plan.orders import supply_use
from ui.colors import cluster_colors
from ui.floorplan import floor_figure, joint_vs_rolling
from ui.format import show_table
from ui.session import session
from ui.solve import resume, solve_text
from ui.state import current_scenario, joint_entry, my_entry, plan_of, scenario_key


def regret_line(scenario, j, r) -> str:
    """Joint vs rolling in words with signs and units: GPUs by the last phase, GPU-phases, capex, TCO."""
    last = scenario.phases[-1].id if scenario.phases else "the end"
    dg = j.kpis.gpus - r.kpis.gpus
    dgp = sum(p.gpus for p in j.phases) - sum(p.gpus for p in r.phases)
    parts = [
        f"joint places **{abs(dg):,} {'more' if dg >= 0 else 'fewer'} GPUs** by {last} ({dgp:+,} GPU-phases)"
    ]
    for what, dv in (
        ("capex", r.kpis.capex_usd - j.kpis.capex_usd),
        ("TCO", r.kpis.tco_usd - j.kpis.tco_usd),
    ):
        parts.append(
            f"rolling spends **${abs(dv) / 1e6:,.1f}M {'less' if dv < 0 else 'more'}** {what}"
            if abs(dv) >= 5e4
            else f"the same {what}"
        )
    return "; ".join(parts) + "."


def futures_section(scenario, plan) -> None:
    """A two-stage plan: the expected figures and one row per future (GPUs, objective, TCO, regret,
    stranded power, and the same for the mean-demand plan)."""
    r = plan.stochastic
    st.subheader("Futures (two-stage plan)")

    def num(x, fmt=",.1f") -> str:
        return "–" if x is None else format(x, fmt)

    st.markdown(
        f"One first phase (**{r.first_phase}**) for every future, later phases adapted to each: "
        f"{r.status.value}"
        f"{'' if r.gap is None else f', gap {r.gap:.3%}'}. Expected objective "
        f"**{num(r.expected_objective)}** ({scenario.objective}), "
        f"expected TCO **${num((r.expected_tco_usd or 0) / 1e6, ',.1f')}M**. Knowing the future in advance "
        "would be worth "
        f"**{num(r.evpi)}** (EVPI); planning for the mean demand would give **{num(r.mean_expected)}**, "
        f"so the two-stage plan is worth **{num(r.vss)}** more (VSS)."
    )
    show_table(
        pd.DataFrame(
            [
                {
                    "future": o.id,
                    "probability": o.probability,
                    "gpus": o.gpus,
                    "objective": o.objective_value,
                    "tco_usd": o.tco_usd,
                    "regret": o.regret,
                    "stranded_kw": o.stranded_kw,
                    "mean_demand_objective": o.mean_objective,
                    "mean_demand_stranded_kw": o.mean_stranded_kw,
                }
                for o in r.futures
            ]
        ),
        "futures_table",
        why_empty="the mean-demand plan cannot serve this future",
    )


scenario = current_scenario()
if scenario is None:
    st.stop()
text = session().scenario_yaml
st.title(f"Phases: {scenario.name}")
phases = [p.id for p in scenario.phases]
if not phases:
    st.info(
        "This scenario has no phases: it is one placement question. Load `fleet-expansion` on the Scenario "
        "page for a phased one; "
        "the cost breakdown below still applies to the Plan page's answer."
    )
else:
    st.caption(
        " → ".join(
            f"{p.id} ({p.start.isoformat()}{': ' + p.name if p.name else ''})" for p in scenario.phases
        )
    )

MODES = [
    ("joint", "Solve jointly (all phases at once)"),
    ("rolling", "Solve rolling (phase by phase)"),
    *([("stochastic", "Solve for the futures (two-stage)")] if scenario.futures else []),
]
for col, (mode, label) in zip(st.columns(len(MODES)), MODES, strict=True):
    if col.button(label, key=f"solve_{mode}", disabled=not phases and mode == "rolling"):
        with st.status(f"Solving {mode}…", expanded=False) as box:
            entry = solve_text(text, scenario, box, mode)
            done = plan_of(entry)
            ok = done is not None and done.status in (Status.optimal, Status.feasible)
            box.update(
                label=f"{mode}: {done.status.value if done else 'failed'}",
                state="complete" if ok else "error",
            )


def shown(mode: str) -> dict | None:
    """This session's result in ``mode`` (the joint one decomposed on the Region page too), or
    its solve left running, followed here to its end."""
    if mode == "joint":
        return joint_entry(text) or resume(text, mode) or resume(text, "decomposed")
    return my_entry(text, mode) or resume(text, mode, f"Solving {mode}")


entries = {mode: shown(mode) for mode, _ in MODES}
plans = {mode: plan_of(e) for mode, e in entries.items()}
plans = {k: v for k, v in plans.items() if v is not None}
failed = [(mode, (e or {}).get("error")) for mode, e in entries.items()]
for mode, error in failed:
    if error:
        st.error(f"{mode}: {error}")
if not plans:
    st.info("Not solved yet on this page. Press a Solve button.")
    st.stop()

if "stochastic" in plans:
    futures_section(scenario, plans["stochastic"])

if "joint" in plans and "rolling" in plans:
    st.subheader("Joint vs rolling")
    rows = {}
    for mode, p in plans.items():
        k = p.kpis
        rows[mode] = {
            "status": p.status.value,
            "gpus": k.gpus if p.status.has_plan else 0,
            f"objective ({scenario.objective})": p.objective_value,
            "capex_usd": k.capex_usd,
            "tco_usd": k.tco_usd,
            "usd_per_gpu_hour": k.usd_per_gpu_hour,
            "retrofits": ", ".join(f"{b.id} ({b.phase})" for b in p.retrofits) or None,
        }
    table = pd.DataFrame.from_dict(rows, orient="index")
    show_table(
        table,
        "modes_table",
        why_empty="no retrofit bought, or no objective value (no plan)",
        hide_index=False,
    )
    j, r = plans["joint"], plans["rolling"]
    if j.status.has_plan and r.status.has_plan:
        st.markdown("Regret of rolling against joint: " + regret_line(scenario, j, r))
    elif j.status.has_plan:
        st.markdown(f"Rolling planning ends **{r.status.value}**: {r.notes[-1] if r.notes else ''}")

mode = st.radio("Show", list(plans), horizontal=True, key=f"phases_mode_{scenario_key(text)[:12]}")
plan = plans[mode]
if plan.stochastic is not None:
    ids = [o.id for o in plan.stochastic.futures]
    future = st.radio(
        "Future",
        ids,
        index=ids.index(plan.stochastic.shown_future),
        horizontal=True,
        key=f"phases_future_{scenario_key(text)[:12]}",
    )
    plan = next(o.plan for o in plan.stochastic.futures if o.id == future)
    st.caption(
        f"Future **{future}**: the first phase ({plans['stochastic'].stochastic.first_phase}) is the same "
        "in every future; "
        "the later phases are this future's."
    )
if not plan.status.has_plan:
    st.error(f"No plan ({plan.status.value}): " + "; ".join(plan.notes[-2:]))
    st.stop()

if plan.phases:
    st.subheader("Timeline")
    types = scenario.catalog.by_id()
    order = scenario.phase_at
    colors = cluster_colors(scenario)
    fig = go.Figure()
    standing = [scenario.standing(plan.racks, i) for i in range(len(phases))]  # retired racks gone (§17)
    for c in scenario.clusters:
        ys = [
            sum(types[r.rack_type].gpus for r in standing[i] if r.cluster == c.id) for i in range(len(phases))
        ]
        fig.add_bar(x=phases, y=ys, name=c.id, marker_color=colors[c.id])
    fig.add_scatter(
        x=phases,
        y=[p.it_kw / 1000 for p in plan.phases],
        name="IT MW",
        yaxis="y2",
        mode="lines+markers",
        line={"color": "#333"},
    )
    if (
        scenario.power_arrival
    ):  # region power arriving over time: what the facility draws against what has arrived
        fig.add_scatter(
            x=phases,
            y=[scenario.arrival_pue * p.it_kw / 1000 for p in plan.phases],
            name=f"facility MW (IT × design-day PUE {scenario.arrival_pue:g})",
            yaxis="y2",
            mode="lines+markers",
            line={"color": "#c23b3b"},
        )
        fig.add_scatter(
            x=phases,
            y=[(scenario.power_available_kw(i) or 0) / 1000 for i in range(len(phases))],
            name="MW arrived",
            yaxis="y2",
            mode="lines",
            line={"color": "#c23b3b", "dash": "dash", "shape": "hv"},
        )
    fig.update_layout(
        barmode="stack",
        height=340,
        title="GPUs standing per phase (stacked by cluster) and IT MW",
        yaxis={"title": "GPUs", "tickformat": ",d"},
        yaxis2={"title": "MW", "overlaying": "y", "side": "right", "tickformat": ",.1f"},
        legend={"orientation": "h"},
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )
    st.plotly_chart(fig, key="timeline", width="stretch")
    show_table(
        pd.DataFrame([p.model_dump() for p in plan.phases]),
        "phase_table",
        why_empty="nothing near its limit in this phase",
    )

    if plan.orders:
        st.subheader("Order book")
        st.caption(
            "What to order in which phase: racks of a type with a lead time (lead_phases) ahead of the "
            "phase they stand in, "
            "retrofits in the phase they are bought; racks without a lead time are ordered in the phase "
            "they stand."
        )
        show_table(
            pd.DataFrame(
                [
                    {
                        "ordered in": o.ordered,
                        "item": o.item,
                        "what": o.id,
                        "count": o.count,
                        "stands from": o.stands,
                    }
                    for o in plan.orders
                ]
            ),
            "order_book",
        )
    if scenario.supply:
        st.subheader("Rack supply used")
        show_table(
            pd.DataFrame(
                [
                    {
                        "phase": ph,
                        "rack type": t,
                        "placed by then": placed,
                        "delivered by then": delivered,
                        "left": delivered - placed,
                    }
                    for ph, t, placed, delivered in supply_use(scenario, plan.racks)
                ]
            ),
            "supply_use",
        )

    st.subheader("Floor plan at a phase")
    c1, c2, c3 = st.columns([1, 1, 1])
    chosen = c1.select_slider("Phase", phases, value=phases[-1], key=f"phase_pick_{mode}")
    halls = [h.id for b in scenario.site.buildings for h in b.halls]
    hall = c2.selectbox("Hall", halls, key=f"phase_hall_{mode}")
    color = c3.radio(
        "Colour by", ["rack type", "cluster", "new or earlier"], horizontal=True, key="phase_color"
    )
    by = {"rack type": "rack_type", "cluster": "cluster", "new or earlier": "new"}[color]
    st.plotly_chart(floor_figure(scenario, plan, hall, by, chosen), key="phase_floor", width="stretch")
    if (
        mode in ("joint", "rolling")
        and "joint" in plans
        and "rolling" in plans
        and all(plans[m].status.has_plan for m in ("joint", "rolling"))
    ):
        st.subheader(f"Joint vs rolling at the end of {chosen}")
        st.caption(
            "Where rolling (deciding each phase without seeing the next) put racks that joint kept free "
            "for a later phase."
        )
        jm, rm = joint_vs_rolling(scenario, plans["joint"], plans["rolling"], chosen)
        left, right = st.columns(2)
        left.plotly_chart(
            floor_figure(
                scenario, plans["joint"], hall, "marks", chosen, jm, title=f"joint, {hall}, end of {chosen}"
            ),
            key="phase_joint",
            width="stretch",
        )
        right.plotly_chart(
            floor_figure(
                scenario,
                plans["rolling"],
                hall,
                "marks",
                chosen,
                rm,
                title=f"rolling, {hall}, end of {chosen}",
            ),
            key="phase_rolling",
            width="stretch",
        )

st.subheader("Costs")
k = plan.kpis
parts = capex_parts(k)
fig = go.Figure(go.Bar(x=list(parts), y=list(parts.values()), marker_color="#1f5fa8"))
fig.update_layout(
    height=300,
    title=f"Capex by part: ${k.capex_usd / 1e6:,.1f}M; opex ${k.opex_usd_per_year / 1e6:,.2f}M a year; "
    f"TCO ${k.tco_usd / 1e6:,.1f}M over {scenario.costs.horizon_years:g} years; ${k.usd_per_gpu_hour:,.2f} "
    "per GPU-hour",
    yaxis={"title": "USD"},
    margin={"l": 10, "r": 10, "t": 40, "b": 10},
)
st.plotly_chart(fig, key="costs", width="stretch")
if k.retired_racks or k.residual_value_usd:
    st.caption(
        f"Service lives (§17): {k.retired_racks:,} racks retired by the last phase (removal "
        f"${k.removal_usd / 1e6:,.2f}M, in TCO); "
        f"the racks standing at the horizon keep a book value of ${k.residual_value_usd / 1e6:,.2f}M "
        "(straight-line, "
        f"${k.depreciation_usd_per_year / 1e6:,.2f}M a year), credited in TCO."
    )
if plan.stranded:
    st.caption(
        "Stranded power: " + "; ".join(f"{s.node} {s.kw:,.1f} kW ({s.reason})" for s in plan.stranded[:10])
    )
