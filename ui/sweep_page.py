"""Sweep page: a small grid of variants of the current scenario, solved in parallel processes,
shown as a Pareto frontier; a clicked point opens its plan on the Plan page."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import streamlit as st

from planner.batch.frontier import MAXIMISE, frontier_figure
from planner.batch.sweep import COLUMNS, grid_sweep, read_table, run_batch, set_path
from planner.errors import InputError, Problem
from planner.input.loader import scenario_from_data
from planner.input.variants import scenario_data, scenario_yaml
from planner.plan import load_plan
from planner.plan.numbers import plan_figures
from planner.verifier import verify
from ui.format import cell, show_table
from ui.session import session
from ui.state import current_scenario, parse_scenario_text, scenario_key, set_current, show_problems

MAX_UI_POINTS = 24  # most points a dashboard sweep may have (larger sweeps: planner batch)
WORKERS = 2  # worker processes of a dashboard sweep (this machine has 2 cores)
AS_IS = "(as in scenario)"


def numbers(text: str, label: str, lo: float, hi: float) -> list[float | None]:
    """Comma-separated numbers of a text box; 0 means "not set" (None). Raises InputError naming the box."""
    out: list[float | None] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            v = float(part)
        except ValueError:
            raise InputError(
                [Problem(label, f"{part[:20]!r} is not a number (comma-separated numbers, 0 = not set)")]
            ) from None
        if not math.isfinite(v) or not (v == 0 or lo <= v <= hi):
            raise InputError(
                [Problem(label, f"{part[:20]!r} is out of range (0 = not set, else {lo:g} to {hi:g})")]
            )
        out.append(None if v == 0 else v)
    return list(dict.fromkeys(out)) or [None]


scenario = current_scenario()
if scenario is None:
    st.stop()
text = session().scenario_yaml
skey = scenario_key(text)[:12]
st.title(f"Sweep variants of {scenario.name}")
st.caption(
    f"Every combination of the values below is one variant (at most {MAX_UI_POINTS}), solved and verified "
    "on its own in "
    f"{WORKERS} worker processes. Larger sweeps, and sweeps over any field, run with `planner batch`."
)

types = [t.id for t in scenario.catalog.rack_types if t.gpus]
with st.form(f"sweep_{skey}"):
    chosen = st.multiselect(
        "Rack types (each is one value: every cluster uses only that type)",
        [AS_IS, *types],
        default=[AS_IS],
        key=f"sweep_types_{skey}",
    )
    c1, c2 = st.columns(2)
    caps_text = c1.text_input(
        "GPU power caps, W (comma-separated; 0 = TDP)", "0, 600", key=f"sweep_caps_{skey}"
    )
    ratios_text = c2.text_input(
        "Power budget ratios (comma-separated; 0 = rated)", "0", key=f"sweep_ratios_{skey}"
    )
    go = st.form_submit_button("Run sweep", type="primary")

if go:
    try:
        caps = numbers(caps_text, "GPU power caps", 100, 2000)
        ratios = numbers(ratios_text, "Power budget ratios", 0.05, 1.0)
        grid: dict[str, list] = {}
        if [c for c in chosen if c != AS_IS]:
            grid["clusters[*].rack_types"] = [None if c == AS_IS else [c] for c in (chosen or [AS_IS])]
        grid["gpu_power_cap_w"] = caps
        grid["power_budget_ratio"] = ratios
        n = math.prod(len(v) for v in grid.values())
        if n > MAX_UI_POINTS:
            raise InputError(
                [Problem("sweep", f"{n} variants; at most {MAX_UI_POINTS} here (use planner batch for more)")]
            )
        base = scenario_data(scenario)
        # "as in scenario" keeps each cluster's own list: set it back per point below
        sweep = grid_sweep(f"{scenario.name}-sweep", base, grid)
        for pt in sweep.points:
            if pt.values.get("clusters[*].rack_types", 1) is None:
                pt.data["clusters"] = json.loads(json.dumps(base["clusters"]))
    except InputError as e:
        show_problems(e.lines(), "The sweep")
    else:
        out = Path(tempfile.mkdtemp(prefix="planner-sweep-"))
        bar = st.progress(0.0, text=f"0 of {len(sweep.points)} variants solved")

        def progress(done: int, total: int, failed: int) -> None:
            bar.progress(
                done / max(total, 1),
                text=f"{done} of {total} variants solved" + (f", {failed} failed" if failed else ""),
            )

        rows = run_batch(
            sweep,
            out,
            "process",
            workers=WORKERS,
            time_limit_s=scenario.solver.time_limit_s,
            progress=progress,
        )
        bar.empty()
        session().sweep = {
            "dir": str(out),
            "base": text,
            "name": scenario.name,
            "values": {p.id: p.values for p in sweep.points},
            "params": sweep.params,
        }

run = session().sweep
if not run:
    st.info("Choose the values to vary and press **Run sweep**.")
    st.stop()

table = read_table(Path(run["dir"]))
st.subheader(f"Results: {len(table)} variants of {run['name']}")
failed = table[table["error"].notna()] if "error" in table else table.iloc[0:0]
if len(failed):
    st.warning(f"{len(failed)} variant(s) failed; their errors are in the table.")
show_table(
    table.drop(columns=[c for c in ("scenario_hash", "run_hash", "plan") if c in table]),
    "sweep_table",
    why_empty="as in the scenario (an axis not varied, a cap not set), or not reached (a failed variant)",
)

numeric = [
    c
    for c in COLUMNS
    if c in table
    and c not in ("point", "status", "scenario_hash", "run_hash", "plan", "error")
    and table[c].notna().any()
]
if not numeric:
    st.stop()
c1, c2 = st.columns(2)
x = c1.selectbox(
    "x axis", numeric, index=numeric.index("capex_usd") if "capex_usd" in numeric else 0, key="sweep_x"
)
y = c2.selectbox("y axis", numeric, index=numeric.index("gpus") if "gpus" in numeric else 0, key="sweep_y")
st.caption(
    f"Pareto-optimal: no other variant has {'more' if x in MAXIMISE else 'less'} {x} and "
    f"{'more' if y in MAXIMISE else 'less'} {y} "
    "at once. Click a point to select it."
)
fig, ok = frontier_figure(table, x, y)
event = st.plotly_chart(
    fig, key="sweep_frontier", on_select="rerun", selection_mode="points", width="stretch"
)
picked = [p["customdata"][1] for p in (event.selection.points if event else []) if p.get("customdata")]
solved = [str(p) for p in ok["point"]]
if not solved:
    st.stop()
if picked and picked[0] in solved and picked[0] != session().sweep_clicked:
    # a new click on the chart moves the choice (the widget keeps its own value otherwise)
    session().sweep_clicked = picked[0]
    st.session_state.sweep_pick = picked[0]  # the widget's own key
choice = st.selectbox("Variant", solved, key="sweep_pick")
if st.button("Open this variant's plan on the Plan page", key="sweep_open"):
    row = table[table["point"] == choice].iloc[0]
    base_scenario, _ = parse_scenario_text(run["base"])
    base = scenario_data(base_scenario)
    values = run["values"][choice]
    for fp, v in values.items():
        if not (fp == "clusters[*].rack_types" and v is None):
            set_path(base, fp, v)
    try:
        variant = scenario_from_data(base)
        plan = load_plan(Path(run["dir"]) / row["plan"])
    except InputError as e:
        show_problems(e.lines(), f"Variant {choice}")
        st.stop()
    rep = verify(plan, variant)
    if not rep.ok:
        show_problems([str(v) for v in rep.violations], f"The plan of {choice}")
        st.stop()
    was = base_scenario.name
    set_current(scenario_yaml(variant), f"sweep {choice}")
    shown = ", ".join(f"{fp} = {'as in the scenario' if v is None else cell(v)}" for fp, v in values.items())
    session().sweep_opened = (
        f"The sweep's variant {choice} ({shown}) replaced the scenario in effect (was {was}); "
        "the Scenario page shows it and this page's URL reopens it."
    )
    session().uploaded_plan = plan_figures(plan, variant)[0].model_dump(mode="json")
    st.switch_page("ui/plan_page.py")
