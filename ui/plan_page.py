"""Plan page: solve the current scenario, or open a plan YAML, and read the answer."""

from __future__ import annotations

import streamlit as st

from planner.enums import Status
from planner.errors import InputError
from planner.plan import plan_from_text
from planner.plan.numbers import plan_figures
from planner.verifier import verify
from ui.format import show_table
from ui.session import session
from ui.solve import explain_binding, resume, solve_text
from ui.state import UPLOAD_MB, current_scenario, joint_entry, plan_of, scenario_key, show_problems
from ui.views import (
    active_settings,
    downloads,
    explain_table,
    floor_plan,
    kpi_cards,
    site_overview,
    utilisation,
)

scenario = current_scenario()
if scenario is None:
    st.stop()
ss = session()
text = ss.scenario_yaml
skey = scenario_key(text)[:12]
source = ss.scenario_source or ""
st.title(
    f"Plan: {scenario.name}"
    + (f" · sweep variant {source.removeprefix('sweep ')}" if source.startswith("sweep ") else "")
)
if ss.sweep_opened and source.startswith("sweep "):
    st.info(ss.sweep_opened)
if scenario.description:
    st.caption(scenario.description)
st.markdown("Active settings: " + active_settings(scenario))

with st.expander("Open a plan YAML"):
    up = st.file_uploader(
        "Plan YAML", type=["yaml", "yml"], key=f"plan_upload_{skey}", max_upload_size=UPLOAD_MB
    )
    if up is not None and ss.uploaded_name != (up.name, up.size, skey):
        ss.uploaded_name, ss.uploaded_plan = (up.name, up.size, skey), None
        try:
            candidate = plan_from_text(up.getvalue(), up.name)
        except InputError as e:
            show_problems(e.lines(), "The plan")
        else:
            rep = verify(candidate, scenario)
            if rep.ok:
                # show what the racks, retrofits and fabric designs give, never the file's own figures
                recomputed, _ = plan_figures(candidate, scenario)
                ss.uploaded_plan = recomputed.model_dump(mode="json")
            else:
                show_problems([str(v) for v in rep.violations], f"The plan {up.name}")

# the Region page's plan shows here too; a solve this session left running is followed to its end
entry = joint_entry(text) or resume(text) or resume(text, "decomposed")
again, ss.resolve = entry is None and ss.resolve, False  # a reload or shared link of a solved plan
if st.button("Solve", type="primary", key="solve") or again:
    ss.uploaded_plan = None
    with st.status(
        "Solving…" if not again else "Showing the plan this link was solved to (cached, or solved again)…",
        expanded=True,
    ) as box:
        entry = solve_text(text, scenario, box)
        done = plan_of(entry)
        if done is None:
            box.update(label="Solve failed", state="error", expanded=True)
        elif done.status in (Status.optimal, Status.feasible):
            box.update(
                label=f"Solved: {done.status.value}, {done.kpis.gpus:,} GPUs in {entry['wall_s']:.1f} s"
                + (" (stored in the plan library, reused)" if entry.get("reused") else ""),
                state="complete",
                expanded=False,
            )
        else:
            box.update(
                label=f"No plan: {done.status.value} after {entry['wall_s']:.1f} s",
                state="error",
                expanded=False,
            )

plan = plan_of(entry)
uploaded = ss.uploaded_plan
if uploaded is not None:
    from planner.plan import Plan

    plan = Plan.model_validate(uploaded)
    st.success(
        f"Showing the opened plan ({len(plan.racks)} racks, solver {plan.solver}): every constraint holds "
        "for this scenario; "
        "every figure below is recomputed from its racks."
    )
    if st.button("Close the opened plan", key="close_upload"):
        ss.uploaded_plan = None
        st.rerun()

if entry and "error" in entry and uploaded is None:
    st.error(entry["error"])
if plan is None:
    st.info("Not solved yet: the floor plan shows the empty site. Press **Solve**.")
    site_overview(scenario, None, "plan")
    floor_plan(scenario, None, "plan")
    st.stop()

if plan.status == Status.infeasible:
    st.error(
        "Infeasible: no plan meets every demand.\n\n```\n" + (entry or {}).get("explanation", "") + "\n```"
    )
elif plan.status == Status.time_limit:
    st.error("No plan found within the time limit. Raise it on the Scenario page.")
elif plan.status == Status.no_solution:
    st.error("The solver stopped without a plan. " + "; ".join(plan.notes[-2:]))
elif plan.status == Status.feasible:
    gap = "unknown" if plan.gap is None else f"{plan.gap:.2%}"
    st.warning(
        f"Feasible, not proven optimal: best plan found, gap to the best bound {gap}. "
        + "; ".join(n for n in plan.notes if "first-fit" in n or "solver" in n)
    )
if not plan.racks and not plan.status.has_plan:
    floor_plan(scenario, None, "plan")
    st.stop()
kpi_cards(plan)
site_overview(scenario, plan, "plan")
floor_plan(scenario, plan, "plan")
if plan.fabric:
    with st.expander(f"Fabric ({', '.join(sorted({f.design for f in plan.fabric}))})", expanded=False):
        import pandas as pd

        show_table(
            pd.DataFrame(
                [
                    {
                        "cluster": f.cluster,
                        "design": f.design,
                        "endpoints": f.endpoints,
                        "switches per tier": " / ".join(f"{n:,}" for n in f.switches),
                        "links": ", ".join(f"{c} {n:,}" for c, n in f.links.items()),
                        "optics": f.optics,
                        "fabric_kw": f.kw,
                        "capex_usd": f.capex_usd,
                        "network racks placed": f.racks_placed,
                        "max endpoints": f.max_endpoints,
                        "max hops": f.max_hops,
                    }
                    for f in plan.fabric
                ]
            ),
            "plan_fabric",
        )
        st.caption("Network positions and power per pod (the pod of each network row):")
        show_table(
            pd.DataFrame(
                [
                    {
                        "cluster": f.cluster,
                        "pod": pod,
                        "network positions": n,
                        "network_kw": f.kw_by_pod.get(pod, 0.0),
                    }
                    for f in plan.fabric
                    for pod, n in f.positions_by_pod.items()
                ]
            ),
            "plan_fabric_pods",
        )
st.subheader("Utilisation against limits")
utilisation(plan)
if plan.racks and plan.status in (Status.optimal, Status.feasible) and uploaded is None:
    st.subheader("Binding limits and what relaxing them buys")
    if (joint_entry(text) or {}).get("binding") or st.button("Explain", key="explain"):
        with st.spinner("Screening every limit, re-solving the most valuable ones…"):
            explain_table(
                explain_binding(text, scenario, plan)
            )  # kept with the result: stays open on every rerun
    else:
        st.caption(
            "Screens every limit with the LP's dual values, then re-solves the most valuable relaxations "
            "exactly."
        )
downloads(text, plan, scenario.name, scenario)
