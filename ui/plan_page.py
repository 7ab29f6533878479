"""Plan page: solve the current scenario, or open a plan YAML, and read the answer."""

from __future__ import annotations

import streamlit as st

from planner.errors import InputError
from planner.plan import plan_from_text
from planner.verify import verify
from ui.state import UPLOAD_MB, current_scenario, explain_binding, plan_of, show_problems, solve_text, stored
from ui.views import downloads, floor_plan, kpi_cards, utilisation

scenario = current_scenario()
if scenario is None:
    st.stop()
text = st.session_state.scenario_yaml
st.title(f"Plan: {scenario.name}")
st.caption(f"{scenario.description}  ·  objective {scenario.objective}  ·  solver {scenario.solver.name}, "
           f"{scenario.solver.time_limit_s:g} s limit, gap {scenario.solver.rel_gap:g}")

with st.expander("Open a plan YAML"):
    up = st.file_uploader("Plan YAML", type=["yaml", "yml"], key="plan_upload", max_upload_size=UPLOAD_MB)
    if up is not None and st.session_state.get("uploaded_name") != (up.name, up.size):
        st.session_state.uploaded_name = (up.name, up.size)
        try:
            candidate = plan_from_text(up.getvalue(), up.name)
        except InputError as e:
            show_problems(e.lines(), "The plan")
        else:
            rep = verify(candidate, scenario)
            if rep.ok:
                st.session_state.uploaded_plan = candidate
            else:
                show_problems([str(v) for v in rep.violations], f"The plan {up.name}")

entry = stored(text)
if st.button("Solve", type="primary", key="solve"):
    st.session_state.pop("uploaded_plan", None)
    with st.status("Solving…", expanded=True) as box:
        entry = solve_text(text, scenario, box)
        done = plan_of(entry)
        label = f"Solved: {done.status}, {done.kpis.gpus:,} GPUs in {entry['wall_s']:.1f} s" if done else "Solve failed"
        box.update(label=label, state="complete" if done else "error", expanded=False)

plan = plan_of(entry)
uploaded = st.session_state.get("uploaded_plan")
if uploaded is not None:
    plan = uploaded
    st.success(f"Showing the opened plan ({len(plan.racks)} racks, solver {plan.solver}): every constraint holds for this scenario.")
    if st.button("Close the opened plan", key="close_upload"):
        st.session_state.pop("uploaded_plan", None)
        st.rerun()

if entry and "error" in entry and uploaded is None:
    st.error(entry["error"])
if plan is None:
    st.info("Not solved yet: the floor plan shows the empty site. Press **Solve**.")
    floor_plan(scenario, None, "plan")
    st.stop()

if plan.status == "infeasible":
    st.error("No plan meets every demand.\n\n```\n" + (entry or {}).get("explanation", "") + "\n```")
elif plan.status == "feasible":
    st.warning(f"Time limit reached: best plan found, within {plan.gap:.2%} of the best bound.")
elif plan.status == "time_limit":
    st.error("No plan found within the time limit. Raise it on the Scenario page.")
kpi_cards(plan)
floor_plan(scenario, plan, "plan")
st.subheader("Utilisation against limits")
utilisation(plan)
if plan.racks and plan.status in ("optimal", "feasible") and uploaded is None:
    with st.expander("Binding limits and what relaxing them buys"):
        if st.button("Explain", key="explain"):
            with st.spinner("Re-solving with each binding limit relaxed…"):
                st.code(explain_binding(text, scenario, plan), language=None)
downloads(text, plan, scenario.name)
