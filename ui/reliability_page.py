"""Reliability page: blast radius on the floor plan, MTBF, checkpoints, goodput, failover gain."""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from planner.enums import FailoverPolicy
from planner.input.site_index import index_site
from planner.rules.reliability import blast_states
from ui.floorplan import floor_figure
from ui.format import show_table
from ui.grid import maintenance_section
from ui.session import session
from ui.solve import resume, solve_button
from ui.state import current_scenario, joint_entry, plan_of

scenario = current_scenario()
if scenario is None:
    st.stop()
text = session().scenario_yaml
st.title(f"Reliability: {scenario.name}")
st.caption(
    "What each power node, cooling zone, pod and row takes down when it fails; per cluster its mean time "
    "between "
    "interruptions (Llama 3 Table 5 rates unless the scenario sets its own), Young/Daly checkpoint "
    "interval and goodput "
    "(first order). Failover policies and spread limits are set per cluster on the Scenario page."
)

plan = plan_of(joint_entry(text) or resume(text) or resume(text, "decomposed"))  # the Region page's plan too
if plan is None:
    plan = solve_button(text, scenario, "Solve", "rel_solve")
    if plan is None:
        st.info("Not solved yet: press **Solve** (here or on the Plan page).")
        st.stop()
if not plan.racks or plan.reliability is None:
    st.error(f"No plan to assess ({plan.status.value}).")
    st.stop()
rep = plan.reliability

policies = {c.id: c.on_power_failure for c in scenario.clusters}
gain = next((n for n in plan.notes if n.startswith("failover policies")), None)
# one line of why an element's failure takes GPUs down, by kind (a comment: a bare string here would be drawn
# on the page)
WHY_LOST = {
    "power_node": "the racks fed through it alone lose power (a redundant row keeps its other feed)",
    "cooling_zone": "the whole zone failing (not one unit: its spare units cover that) "
    "stops every rack it cools",
    "pod": "its racks lose the network (the pod's switches are one failure domain)",
    "row": "every rack in the row goes (a busway, a row PDU or a leak)",
}
cols = st.columns(4)
worst = rep.blast_radius[0] if rep.blast_radius else None
what = f"{worst.kind.replace('_', ' ')} {worst.id}" if worst else ""
cols[0].metric(
    "Worst single failure",
    f"{worst.gpus_lost:,} GPUs" if worst else "0 GPUs",
    border=True,
    help=f"The one element whose failure takes the most GPUs down: {what}"
    if worst
    else "No single failure takes GPUs down",
)
if worst:
    cols[0].caption(f"**{what}**: {WHY_LOST.get(worst.kind, 'its racks go down')}.")
can_fail = sum(
    1
    for b in scenario.site.buildings
    for n in [*b.power_nodes, *(x for h in b.halls for x in h.power_nodes)]
    if n.can_fail
)
failing = [b for b in rep.blast_radius if b.n1_holds is False]
cols[1].metric(
    "Power N-1",
    "holds" if not failing else f"fails at {len(failing):,}",
    border=True,
    help="Each power node failing alone: do the surviving nodes stay within their usable kW?",
)
if failing:
    cols[1].caption(
        f"**{', '.join(b.id for b in failing[:3])}{' …' if len(failing) > 3 else ''}**: when it fails, a "
        "surviving node "
        "carries more than its usable kW (after the clusters' failover policies)."
    )
else:
    cols[1].caption(
        f"Any one of the {can_fail:,} power nodes that can fail may fail: the others carry every rack that "
        "must keep running "
        "(keep at full power, cap at its ratio; shed may go dark)."
    )
m = re.match(r"failover policies: ([+-][\d,.]+) GPUs", gain or "")
cols[2].metric(
    "Gain of failover policies",
    f"{m.group(1)} GPUs"
    if m
    else ("—" if all(p == FailoverPolicy.keep for p in policies.values()) else "see note"),
    help="Against the same scenario with every cluster on keep (strict N-1), solved again",
    border=True,
)
good = [c.goodput for c in rep.clusters if c.goodput is not None]
cols[3].metric(
    "Lowest goodput",
    f"{min(good):.2%}" if good else "—",
    help="Clusters with a checkpoint size (checkpoint_gb_per_gpu) or stall (checkpoint_s); × the share "
    "of their GPUs in service where their racks' NVLink domain is the repair unit",
    border=True,
)
if gain:
    st.info(gain)

st.subheader("Clusters")
pct = lambda v: None if v is None else 100 * v  # noqa: E731 - shares shown in %
show_table(
    pd.DataFrame(
        [
            {
                "cluster": c.cluster,
                "policy": policies.get(c.cluster, FailoverPolicy.keep).value,
                "GPUs": c.gpus,
                "MTBF h": c.mtbf_h,
                "interruptions / day": c.interruptions_per_day,
                "storage racks": c.storage_racks,
                "write GB/s": c.write_gb_per_s,
                "checkpoint s": c.checkpoint_s,
                "interval h": c.interval_h,
                "goodput %": pct(c.goodput),
                "in service %": pct(c.in_service),
                "GPU-h lost / day": c.gpu_hours_lost_per_day,
                "spares": c.spare_racks,
                "worst power share %": pct(c.worst_power_share),
                "worst zone share %": pct(c.worst_zone_share),
                "worst pod share %": pct(c.worst_pod_share),
            }
            for c in rep.clusters
        ]
    ),
    "rel_clusters",
    why_empty="not computed: the cluster states no checkpoint size (checkpoint_gb_per_gpu) "
    "or asks no storage",
)

if rep.backup:
    st.subheader("Backup power per building")
    st.caption(
        "Chosen per building for the lowest $ per useful GPU-hour of the plan (TCO plus backup capex over "
        "the useful GPU-hours): "
        "without ride-through a utility outage interrupts every cluster in the building and leaves its "
        "GPUs dark until power is back."
    )
    show_table(
        pd.DataFrame(
            [
                {
                    "building": b.building,
                    "design": b.design + (" (fixed)" if b.fixed else ""),
                    "it_kw": b.it_kw,
                    "backup capex_usd": b.capex_usd,
                    "rides through": b.ride_through,
                    "outage interruptions / year": b.outage_interruptions_per_year,
                    "GPU-hours dark / year": b.gpu_hours_dark_per_year,
                    **{
                        f"$ per 1,000 useful GPU-hours with {d}": 1000 * v
                        for d, v in b.usd_per_useful_gpu_hour.items()
                    },
                }
                for b in rep.backup
            ]
        ),
        "rel_backup",
    )

maintenance_section(scenario, plan)
st.subheader("Blast radius")
single = [b for b in rep.blast_radius if b.kind != "maintenance"]  # pairs: the maintenance table
if not single:
    st.success("No single failure takes any GPU down.")
    st.stop()
table = pd.DataFrame(
    [
        {
            "element": f"{b.kind} {b.id}",
            "GPUs lost": b.gpus_lost,
            "lost": ", ".join(f"{c} {g:,}" for c, g in b.lost.items()),
            "capped": ", ".join(f"{c} {g:,}" for c, g in b.capped.items()),
            "shed": ", ".join(f"{c} {g:,}" for c, g in b.shed.items()),
            "N-1": None if b.n1_holds is None else ("holds" if b.n1_holds else "FAILS"),
        }
        for b in single
    ]
)
show_table(
    table,
    "rel_blast",
    why_empty="none of its racks in this state; N-1 is judged for power nodes only",
    height=260,
)
options = [f"{b.kind} {b.id}" for b in single]
pick = st.selectbox("Element to fail", options, key="rel_pick")
kind, element = pick.split(" ", 1)
marks = blast_states(scenario, plan.racks, kind, element)
ix = index_site(scenario.site)
halls = sorted({ix.rows[r].hall for r, _ in marks} or {next(iter(ix.rows.values())).hall})
hall = st.selectbox(f"Hall ({len(halls)} affected)", halls, key="rel_hall") if len(halls) > 1 else halls[0]
st.plotly_chart(
    floor_figure(scenario, plan, hall, "marks", marks=marks, title=f"Hall {hall}: {pick} fails"),
    key="rel_floor",
    width="stretch",
)
