"""§21 on the dashboard: per phase the largest training swing against what the power sources accept,
the storage and power floors that absorb it, energy by source, emissions and water (Region page); the
maintenance level and what a failure during maintenance takes down (Reliability page). Reads the
plan's grid report and blast radius: nothing is solved here."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from planner.schema import Plan, Scenario
from ui.format import show_table

UNLIMITED_MW = 1e11
"""An accepted swing at least this large is shown as unlimited (no power_stability)."""


def grid_section(scenario: Scenario, plan: Plan) -> None:
    """Swing against acceptance (chart and table), storage and floors, energy by source, emissions
    and water per phase, with the horizon's totals."""
    g = plan.grid
    if g is None:
        st.caption(
            "Training swings, energy sources and water are not counted: the scenario states no "
            "power_stability, power_sources or water (§21)."
        )
        return
    st.subheader("Power the grid accepts: swings, storage, energy, water")
    names = [p.phase or "plan" for p in g.phases]
    if scenario.power_stability is not None:
        fig = go.Figure()
        fig.add_bar(x=names, y=[p.swing_mw for p in g.phases], name="largest swing (one job)")
        fig.add_bar(
            x=names, y=[sum(p.storage_mw.values()) for p in g.phases], name="storage standing, all buildings"
        )
        fig.add_bar(
            x=names, y=[sum(p.floor_mw.values()) for p in g.phases], name="power floors, all buildings"
        )
        fig.add_scatter(
            x=names,
            y=[p.accepted_mw for p in g.phases],
            name="swing the sources accept",
            mode="lines+markers",
            line={"color": "#c23b3b", "dash": "dash", "shape": "hv"},
        )
        fig.update_layout(
            barmode="group",
            height=320,
            title="Largest synchronous training swing per phase and what absorbs swings, MW",
            yaxis={"title": "MW", "tickformat": ",.1f"},
            legend={"orientation": "h"},
            margin={"l": 10, "r": 10, "t": 40, "b": 10},
        )
        st.plotly_chart(fig, key="grid_swing", width="stretch")
        st.caption(
            "Storage and power floors stand per building and absorb the swing of whichever job swings "
            "there (jobs do not swing together); what is left of each job's swing after its buildings' "
            "storage and floors fits the swing the power sources accept (the dashed line)."
        )
    sources = sorted({s for p in g.phases for s in p.energy_mwh_per_year})
    show_table(
        pd.DataFrame(
            [
                {
                    "phase": name,
                    "largest swing MW": p.swing_mw,
                    "job": p.swing_cluster,
                    "accepted MW": None if p.accepted_mw >= UNLIMITED_MW else p.accepted_mw,
                    "storage MW": sum(p.storage_mw.values()),
                    "floor MW": sum(p.floor_mw.values()),
                    **{f"{s} GWh / year": p.energy_mwh_per_year.get(s, 0.0) / 1000 for s in sources},
                    "kt CO2 / year": p.t_co2_per_year / 1000,
                    "water 1,000 m³ / year": p.water_m3_per_year / 1000,
                    "peak water L/s": p.peak_water_l_per_s,
                }
                for name, p in zip(names, g.phases, strict=True)
            ]
        ),
        "grid_table",
        why_empty="the scenario states no power_stability (swings) or power_sources (energy, emissions)",
        help={
            "accepted MW": "Σ over the power sources arrived by then of min(ramp × swing seconds, "
            "dynamic range)",
            "floor MW": "Swing absorbed by holding GPU power up in the trough: costs energy, no capex",
        },
    )
    st.caption(
        f"Over the horizon: energy storage {_usd(g.storage_capex_usd)} of capex; {_usd(g.tco_usd)} in TCO "
        f"for storage, floors, the sources' price over the scenario's and carbon; {g.t_co2:,.0f} t CO2; "
        f"{g.water_m3:,.0f} m³ of water."
    )


def _usd(x: float) -> str:
    """$29,400, $43.6M or $1.25B."""
    sign, x = ("−" if x < 0 else ""), abs(x)
    if x >= 1e9:
        return f"{sign}${x / 1e9:,.2f}B"
    if x >= 1e6:
        return f"{sign}${x / 1e6:,.1f}M"
    return f"{sign}${x:,.0f}"


def maintenance_section(scenario: Scenario, plan: Plan) -> None:
    """The maintenance level (§21) and what a failure during maintenance takes down."""
    if not scenario.maintenance:
        st.caption(
            "Maintenance level: N-1 only (the scenario names no class kept concurrently maintainable)."
        )
        return
    st.subheader("Maintenance level")
    levels = ", ".join(
        f"{m.kind} ({', '.join(m.buildings) if m.buildings else 'every building'})"
        for m in scenario.maintenance
    )
    st.write(
        f"N-1 holds while any one element of these classes is out for maintenance: {levels}. "
        "`planner explain` prices the level in GPUs (its limits are the `power_maint` rows)."
    )
    rows = [b for b in (plan.reliability.blast_radius if plan.reliability else []) if b.kind == "maintenance"]
    show_table(
        pd.DataFrame(
            [
                {
                    "in maintenance": b.during,
                    "then fails": b.id,
                    "GPUs lost": b.gpus_lost,
                    "lost": ", ".join(f"{c} {n:,}" for c, n in b.lost.items()),
                    "survivors hold": b.n1_holds,
                }
                for b in rows
            ]
        ),
        "rel_maintenance",
        why_empty="no failure during maintenance takes a GPU down or overloads a survivor",
    )
