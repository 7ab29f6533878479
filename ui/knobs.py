"""The Scenario page's main knobs: their values, the edits not yet applied (kept across pages),
what an Apply changes, and the summary of the scenario in effect."""

from __future__ import annotations

import streamlit as st

from planner.schema import Scenario
from ui.session import session

LABELS = {
    "objective": "objective",
    "gpu_cap": "GPU power cap (W)",
    "ratio": "power budget ratio",
    "capex": "capex budget (USD)",
    "itkw": "IT power budget (kW)",
    "solver": "solver",
    "tlim": "time limit (s)",
    "gap": "relative gap",
    "demand": "demand",
    "gpus": "GPUs",
    "hops": "max hops",
    "types": "rack types",
    "policy": "on power failure",
    "capratio": "cap ratio",
}
"""Human name of each knob (cluster knobs are prefixed by the cluster's ID)."""
ZERO_MEANS = {"gpu_cap": "TDP", "ratio": "rated", "capex": "none", "itkw": "none"}
"""What 0 stands for in a knob where 0 means "not set"."""


def knob_values(scenario: Scenario) -> dict:
    """The knobs as the scenario sets them (widget values: 0 for "not set")."""
    b, sv = scenario.budgets, scenario.solver
    vals = {
        "objective": str(scenario.objective),
        "gpu_cap": int(scenario.gpu_power_cap_w or 0),
        "ratio": float(scenario.power_budget_ratio or 0.0),
        "capex": float(b.capex_usd or 0.0),
        "itkw": float(b.it_power_kw or 0.0),
        "solver": str(sv.name),
        "tlim": float(min(sv.time_limit_s, 3600.0)),
        "gap": float(sv.rel_gap),
    }
    for c in scenario.clusters[:50]:
        i = c.id
        vals |= {
            f"demand_{i}": c.demand.value,
            f"gpus_{i}": int(c.gpus or 0),
            f"hops_{i}": c.max_hops,
            f"types_{i}": list(c.rack_types),
            f"policy_{i}": c.on_power_failure.value,
            f"capratio_{i}": float(c.cap_ratio),
        }
    return vals


def knob_changes(scenario: Scenario, got: dict) -> dict:
    """The knob values as changes for :func:`planner.input.variants.apply_changes`."""
    clusters = {}
    for c in scenario.clusters[:50]:
        i = c.id
        demand = got[f"demand_{i}"]
        clusters[i] = {
            "demand": demand,
            "gpus": got[f"gpus_{i}"] or (None if demand == "max" else 0),
            "max_hops": got[f"hops_{i}"],
            "rack_types": got[f"types_{i}"],
            "on_power_failure": got[f"policy_{i}"],
            "cap_ratio": got[f"capratio_{i}"],
        }
    return {
        "objective": got["objective"],
        "gpu_power_cap_w": got["gpu_cap"] or None,
        "power_budget_ratio": got["ratio"] or None,
        "budgets": {"capex_usd": got["capex"] or None, "it_power_kw": got["itkw"] or None},
        "solver": {"name": got["solver"], "time_limit_s": got["tlim"], "rel_gap": got["gap"]},
        "clusters": clusters,
    }


def _show(name: str, value) -> str:
    base = (
        name.split("_", 1)[0]
        if name.split("_", 1)[0] in LABELS and "_" in name and name not in LABELS
        else name
    )
    if isinstance(value, list):
        return ", ".join(value) or "none"
    if value == 0 and base in ZERO_MEANS:
        return ZERO_MEANS[base]
    if isinstance(value, float):
        return f"{value:,.0f}" if value >= 1000 else f"{value:g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def describe(diff: dict, base: dict) -> list[str]:
    """One line per edit: "cluster train: GPUs 1,024 → 512", "capex budget (USD) none → 12,000,000"."""
    lines = []
    for name, new in diff.items():
        if name in LABELS:
            label = LABELS[name]
        else:
            knob, cluster = name.split("_", 1)
            label = f"cluster {cluster}: {LABELS.get(knob, knob)}"
        lines.append(f"{label} {_show(name, base[name])} → {_show(name, new)}")
    return lines


def pending_edits(key: str) -> dict:
    """Edits of the scenario with this key not yet applied."""
    held = session().pending_edits
    return dict(held["values"]) if held and held.get("key") == key else {}


def keep_pending(key: str, diff: dict) -> None:
    """Remember the edits (in a plain session value: widget values are dropped when the page is left)."""
    session().pending_edits = {"key": key, "values": dict(diff)}


def discard_edits(key: str) -> None:
    """Drop the edits and the widgets holding them (a button callback: runs before the page does)."""
    session().pending_edits = {"key": key, "values": {}}
    for name in [n for n in st.session_state if isinstance(n, str) and n.endswith(f"_{key}")]:
        del st.session_state[name]


def pending_count(key: str) -> int:
    """How many edits of the scenario with this key wait on the Scenario page."""
    return len(pending_edits(key))


def site_summary(scenario: Scenario) -> dict[str, str]:
    """Buildings, halls, positions for racks (less reserved ones and pods' network-rack spots), rated MW at
    the roots of the power tree, pods, clusters."""
    site = scenario.site
    halls = [h for b in site.buildings for h in b.halls]
    nodes = [n for b in site.buildings for n in b.power_nodes] + [n for h in halls for n in h.power_nodes]
    positions = sum(r.positions - len(r.reserved) for h in halls for r in h.rows if r.network is None) - sum(
        1
        for h in halls
        for p in h.pods
        if any(r.id == p.network_rack.row and r.network is None for r in h.rows)
    )
    asked = sum(c.gpus or 0 for c in scenario.clusters)
    return {
        "buildings": f"{len(site.buildings):,}",
        "halls": f"{len(halls):,}",
        "rack positions": f"{positions:,}",
        "MW rated": f"{sum(n.capacity_kw for n in nodes if n.parent is None) / 1000:,.1f}",
        "pods": f"{sum(len(h.pods) for h in halls):,}",
        "clusters": f"{len(scenario.clusters):,} ({asked:,} GPUs)"
        if asked
        else f"{len(scenario.clusters):,}",
    }


ORIGIN = {"uploaded": "uploaded", "edited": "edited", "restored": "reopened from a link"}


def in_effect(scenario: Scenario) -> None:
    """What the Plan page will solve: name, where it came from, the site in six figures; the last
    Apply or load said in words."""
    ss = session()
    source = ss.scenario_source or ""
    origin = ORIGIN.get(source, "shipped")
    if source.startswith("sweep "):
        origin = f"the sweep's variant {source.removeprefix('sweep ')}"
    if source == "edited" and ss.edited_from:
        origin = f"edited from the shipped {ss.edited_from}"
    st.subheader(f"In effect: {scenario.name} ({origin})")
    applied, ss.applied = ss.applied, None
    if applied:
        st.success(applied)
    cols = st.columns(6)
    tips = {
        "MW rated": "rated kW of the power tree's roots (utility feeds), in MW",
        "clusters": "clusters, and the GPUs they ask for by figure",
        "rack positions": "positions for racks: less reserved ones and the pods' network-rack spots",
    }
    for col, (label, value) in zip(cols, site_summary(scenario).items(), strict=True):
        col.metric(label, value, border=True, help=tips.get(label))
