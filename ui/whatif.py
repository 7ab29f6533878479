"""The Scenario page's what-if section: site capacity edits made in the browser (a power node's
capacity, a cooling zone's units, a row's reserved positions), each applied as a named edit the
user can undo (the scenario before it is kept), so "20 MW more in hall B" needs no YAML. The Plan,
Phases and Reliability pages then answer for the edited scenario."""

from __future__ import annotations

import re

import streamlit as st

from planner.errors import InputError
from planner.input.variants import apply_changes
from planner.schema import Scenario
from ui.session import session

MAX_EDITS = 20
"""Named site edits a session keeps for undo."""


def _where(scenario: Scenario) -> dict[tuple[str, str], str]:
    """(kind, ID) → building/hall of every power node, cooling zone and row."""
    out = {}
    for b in scenario.site.buildings:
        out |= {("power_nodes", n.id): b.id for n in b.power_nodes}
        for h in b.halls:
            out |= {("power_nodes", n.id): f"{b.id}/{h.id}" for n in h.power_nodes}
            out |= {("cooling_zones", z.id): f"{b.id}/{h.id}" for z in h.cooling_zones}
            out |= {("rows", r.id): f"{b.id}/{h.id}" for r in h.rows}
    return out


def _nodes(scenario: Scenario) -> dict:
    return {n.id: n for b in scenario.site.buildings for n in b.power_nodes} | {
        n.id: n for b in scenario.site.buildings for h in b.halls for n in h.power_nodes
    }


def _zones(scenario: Scenario) -> dict:
    return {z.id: z for b in scenario.site.buildings for h in b.halls for z in h.cooling_zones}


def site_edit_form(scenario: Scenario, k: str, text: str, source: str | None, set_scenario) -> None:
    """The what-if form (module docstring); ``k`` ties widgets to the scenario."""
    st.subheader("Site capacity (what-if)")
    where = _where(scenario)
    nodes, zones = _nodes(scenario), _zones(scenario)
    c1, c2, c3 = st.columns([2, 1, 2])
    node_ids = list(nodes)[:5000]
    node = c1.selectbox(
        "Power node",
        node_ids,
        format_func=lambda i: (
            f"{i} ({nodes[i].kind}, {where['power_nodes', i]}, {nodes[i].capacity_kw:,.0f} kW)"
        ),
        key=f"wi_node_{k}",
    )
    kw = c2.number_input(
        "Capacity (kW)",
        min_value=0.0,
        value=float(nodes[node].capacity_kw) if node else 0.0,
        step=100.0,
        key=f"wi_kw_{k}_{node}",
    )
    zone_ids = list(zones)[:5000]
    zone = c3.selectbox(
        "Cooling zone",
        zone_ids,
        format_func=lambda i: f"{i} ({zones[i].medium}, {where['cooling_zones', i]}, {zones[i].units} units)",
        key=f"wi_zone_{k}",
    )
    units = st.number_input(
        "Cooling units in that zone",
        min_value=1,
        value=int(zones[zone].units) if zone else 1,
        step=1,
        key=f"wi_units_{k}_{zone}",
    )
    rows = {r.id: r for b in scenario.site.buildings for h in b.halls for r in h.rows}
    c1, c2 = st.columns([2, 3])
    row = c1.selectbox(
        "Row",
        list(rows)[:5000],
        format_func=lambda i: f"{i} ({where['rows', i]}, {rows[i].positions} positions)",
        key=f"wi_row_{k}",
    )
    shown = ", ".join(str(p) for p in rows[row].reserved) if row else ""
    typed = c2.text_input(
        "Reserved positions in that row (comma-separated)", value=shown, key=f"wi_res_{k}_{row}"
    )
    changes: dict = {}
    reserved = _positions(typed, rows[row].positions if row else None)
    if row and reserved is not None and reserved != sorted(rows[row].reserved):
        changes["rows"] = {row: {"reserved": reserved}}
    elif reserved is None:
        top = f" from 0 to {rows[row].positions - 1}" if row else ""
        st.error(
            f"Reserved positions: '{typed[:60]}' is not a comma-separated list of positions{top} "
            "(whole numbers in digits 0-9)"
        )
    if node and abs(kw - nodes[node].capacity_kw) > 1e-9:
        changes.setdefault("power_nodes", {})[node] = {"capacity_kw": kw}
    if zone and units != zones[zone].units:
        changes.setdefault("cooling_zones", {})[zone] = {"units": units}
    said = _describe(changes, nodes, zones)
    if scenario.phases and "power_nodes" in changes:
        changes, said = _as_retrofit(scenario, changes, said, nodes, k)
    name = st.text_input(
        "Name of this edit", value="", placeholder=said or "e.g. +20 MW in hall B", key=f"wi_name_{k}"
    )
    if st.button("Apply site edit", key=f"wi_apply_{k}", disabled=not changes):
        try:
            new = apply_changes(scenario, changes if "add_retrofits" in changes else {"site": changes})
        except InputError as e:
            st.error("The site edit is refused: " + "; ".join(e.lines()))
            return
        edits = list(session().site_edits)[-(MAX_EDITS - 1) :]
        edits.append({"name": name or said, "what": said, "before": text, "source": source})
        session().site_edits = edits
        set_scenario(new, "edited")
        session().applied = f"Site edit '{name or said}' applied ({said}). The Plan page answers for it."
        st.rerun()
    _undo(set_scenario)


def _as_retrofit(scenario: Scenario, changes: dict, said: str, nodes: dict, k: str) -> tuple[dict, str]:
    """In a phased scenario a capacity raise may instead be a retrofit the plan buys when it pays
    (``raise_capacity``: its price in the phase bought, in effect ``lead`` phases later)."""
    c1, c2, c3 = st.columns([2, 1, 1])
    if not c1.checkbox("Offer the raise as a retrofit the plan may buy", key=f"wi_retro_{k}"):
        return changes, said
    cost = c2.number_input("Its price (USD)", min_value=0.0, value=0.0, step=100_000.0, key=f"wi_cost_{k}")
    lead = c3.number_input("Phases before it takes effect", min_value=0, value=1, step=1, key=f"wi_lead_{k}")
    node, new = next(iter(changes["power_nodes"].items()))
    add = (new["capacity_kw"] - nodes[node].capacity_kw) * nodes[node].effective_derate  # usable kW
    if add <= 0:
        st.error("A retrofit raises a capacity: enter more kW than the node has")
        return {}, said
    taken = {r.id for r in scenario.retrofits}
    rid, n = f"whatif-{node}"[:60], 1
    while rid in taken:
        n += 1
        rid = f"whatif-{node}-{n}"[:64]
    retro = {"id": rid, "cost_usd": cost, "lead_phases": int(lead)}
    retro["effect"] = {"kind": "raise_capacity", "target": node, "add_kw": add}
    rest = {key: v for key, v in changes.items() if key != "power_nodes"}
    out = {"site": rest} if rest else {}
    out["add_retrofits"] = [retro]
    return out, f"retrofit {rid}: +{add:,.0f} kW usable on {node} for ${cost:,.0f}, {int(lead)} phase(s) lead"


def _positions(text: str, n: int | None = None) -> list[int] | None:
    """'3, 4' → [3, 4]; '' → []; None unless it is a list of position indexes (ASCII digits, each
    below the row's ``n`` positions when given)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not all(re.fullmatch(r"[0-9]{1,6}", p) for p in parts):
        return None
    out = sorted({int(p) for p in parts})
    return None if n is not None and out and out[-1] >= n else out


def _describe(changes: dict, nodes: dict, zones: dict) -> str:
    parts = [
        f"{i}: {nodes[i].capacity_kw:,.0f} → {v['capacity_kw']:,.0f} kW"
        for i, v in changes.get("power_nodes", {}).items()
    ]
    parts += [
        f"{i}: {zones[i].units} → {v['units']} units" for i, v in changes.get("cooling_zones", {}).items()
    ]
    parts += [f"{i}: reserved {v['reserved'] or 'none'}" for i, v in changes.get("rows", {}).items()]
    return "; ".join(parts)


def _undo(set_scenario) -> None:
    from planner.input.loader import load_scenario_text

    edits = session().site_edits
    if not edits:
        return
    st.caption(
        "Site edits in effect, newest last: " + " · ".join(f"**{e['name']}** ({e['what']})" for e in edits)
    )
    if st.button(f"Undo '{edits[-1]['name']}'", key=f"wi_undo_{len(edits)}"):
        last = edits[-1]
        session().site_edits = edits[:-1]
        set_scenario(load_scenario_text(last["before"]), last["source"] or "edited")
        session().applied = f"Site edit '{last['name']}' undone."
        st.rerun()
