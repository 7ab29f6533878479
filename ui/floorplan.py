"""Floor plan figure: every position of a hall at its real coordinates."""

from __future__ import annotations

import plotly.graph_objects as go

from planner.enums import LimitKind
from planner.input.site_index import index_site
from planner.plan import Plan
from planner.schema import Scenario
from ui.colors import PALETTE, cluster_colors, rack_type_colors

EMPTY, RESERVED, NETWORK = "empty", "reserved", "network rack"
FABRIC, NET_FREE = "fabric switches", "network position (free)"


FEED_BUCKETS = [
    (0.5, "feeds ≤ 50% (worst N-1)"),
    (0.8, "feeds 50–80%"),
    (0.95, "feeds 80–95%"),
    (1.0 + 1e-9, "feeds 95–100%"),
]
BUCKET_COLORS = {
    "feeds ≤ 50% (worst N-1)": "#a6d96a",
    "feeds 50–80%": "#fee08b",
    "feeds 80–95%": "#fdae61",
    "feeds 95–100%": "#d7191c",
    "feeds over limit": "#67001f",
}


def _bucket(share: float) -> str:
    """Label of a feed-utilisation band: the row's most used feed, worst single failure."""
    return next((label for top, label in FEED_BUCKETS if share <= top), "feeds over limit")


INSTALLED, EARLIER = "installed before", "placed earlier"
NEW_OUTLINE = "#e6550d"
"""Outline of the racks placed in the phase shown (colour by rack type or cluster)."""
KEEPS = "keeps running"
BLAST_COLORS = {
    "goes dark": "#111111",
    "may be shed": "#d7191c",
    "capped": "#fdae61",
    KEEPS: "#a6d96a",
    "both": "#9ecae1",
    "joint only": "#1f5fa8",
    "rolling only: joint leaves it empty": "#d7191c",
}


def floor_positions(
    scenario: Scenario,
    plan: Plan | None,
    hall_id: str,
    color_by: str = "rack_type",
    phase: str | None = None,
    marks: dict[tuple[str, int], str] | None = None,
) -> list[dict]:
    """One record per position of a hall: coordinates, state, label to colour by, hover text.
    With ``phase``, only racks standing at its end; ``color_by="new"`` marks the racks placed in it;
    ``color_by="marks"`` labels racks by ``marks`` ((row, position) → label; others keep running)."""
    ix = index_site(scenario.site)
    order = scenario.phase_at
    cut = order.get(phase, len(order))
    racks = scenario.standing(
        plan.racks if plan else [], None if phase is None else cut
    )  # what stands then (§17)
    placed, part_of = _placed(scenario, racks)
    switch_racks = {(r.row, r.position): r for r in (plan.network_racks if plan else [])}
    spots = ix.pod_locations()
    feed_use = {
        u.id: u.worst_share for u in (plan.utilisation if plan else []) if u.kind == LimitKind.power_node
    }
    look = {"color_by": color_by, "phase": phase, "marks": marks or {}, "feed_use": feed_use}
    out = []
    for rid, ref in ix.rows.items():
        if ref.hall != hall_id:
            continue
        row = ref.row
        for i in range(row.positions):
            x, y = row.position_xy(i)
            rack = placed.get((rid, i))
            net = switch_racks.get((rid, i))
            label = _label(rid, i, row, rack, net, (rid, i) in spots, look)
            hover = _hover(scenario, rid, i, x, y, row, rack, net, part_of)
            new = bool(rack is not None and phase is not None and not rack.existing and rack.phase == phase)
            unit = (rid, part_of[rid, i][1]) if (rid, i) in part_of else None
            out.append(
                {"x": x, "y": y, "label": label, "hover": "<br>".join(hover), "new": new, "unit": unit}
            )
    return out


def _placed(scenario: Scenario, racks: list) -> tuple[dict, dict]:
    """(row, position) → the rack standing there (every position of a multi-rack unit), and → (part
    index, first position) of the unit it belongs to."""
    types = scenario.catalog.by_id()
    placed = {(r.row, r.position): r for r in racks}
    part_of: dict[tuple[str, int], tuple[int, int]] = {}
    for r in racks:
        t = types.get(r.rack_type)
        if t is not None and t.width > 1:
            for j in range(t.width):
                placed[r.row, r.position + j] = r
                part_of[r.row, r.position + j] = (j, r.position)
    return placed, part_of


def _label(rid: str, i: int, row, rack, net, spot: bool, look: dict) -> str:
    """What a position is coloured by: its kind (network rack, fabric rack, free network position,
    reserved, empty) or, holding a rack, the rack's type, cluster, phase, mark or feed use."""
    if spot:
        return NETWORK
    if net is not None:
        return FABRIC
    if row.network is not None and i not in row.reserved:
        return NET_FREE
    if i in row.reserved:
        return RESERVED
    if rack is None:
        return EMPTY
    color_by = look["color_by"]
    if color_by == "cluster":
        return rack.cluster
    if color_by == "new":
        return (
            INSTALLED
            if rack.existing
            else (f"new in {rack.phase}" if rack.phase == look["phase"] else EARLIER)
        )
    if color_by == "marks":
        return look["marks"].get((rid, i), KEEPS)
    if color_by == "feed_utilisation":
        return _bucket(max(look["feed_use"].get(f, 0.0) for f in row.feeds))
    return rack.rack_type


def _hover(
    scenario: Scenario, rid: str, i: int, x: float, y: float, row, rack, net, part_of: dict
) -> list[str]:
    """A position's hover lines: where it is and what feeds and cools it, and what stands there."""
    hover = [
        f"{rid} / position {i}",
        f"x {x:.1f} m, y {y:.1f} m",
        f"feeds: {', '.join(row.feeds)}",
        f"zones: {row.air_zone}{', ' + row.liquid_loop if row.liquid_loop else ''}",
        f"pod: {row.pod}",
    ]
    if rack is not None:
        t = scenario.catalog.by_id().get(rack.rack_type)
        kw = scenario.rack_power_kw(t) if t else 0.0
        if (rid, i) in part_of and t is not None and t.parts:
            j, first = part_of[rid, i]
            air = kw * (1 - t.liquid_fraction) * t.position_heat_shares()[j]
            part = (
                f"part {j + 1} of {t.width}: {t.parts[j].role}, {kw * t.parts[j].power_share:.1f} kW drawn, "
                f"{air:.1f} kW of heat to room air (unit at positions {first}..{first + t.width - 1})"
            )
            hover = [part, *hover]
        when = "installed before" if rack.existing else (f"placed in {rack.phase}" if rack.phase else "")
        when = ("hot spare; " + when).rstrip("; ") if rack.spare else when
        return [
            f"<b>{rack.rack_type}</b> ({kw:.1f} kW, {t.gpus if t else 0} GPUs)",
            f"cluster: {rack.cluster}",
            f"cable: {rack.cable_length_m:.1f} m ({rack.link_class or 'none'})",
            *([when] if when else []),
            *hover,
        ]
    if net is not None:
        held = (
            ", ".join(f"{c.count} × {c.model} (tier {c.tier})" for c in net.switches)
            or "transceivers and patching only"
        )
        return [f"<b>network rack</b> of {net.cluster} on {net.design} ({net.kw:.1f} kW)", held, *hover]
    return hover


def floor_figure(
    scenario: Scenario,
    plan: Plan | None,
    hall_id: str,
    color_by: str = "rack_type",
    phase: str | None = None,
    marks: dict[tuple[str, int], str] | None = None,
    title: str | None = None,
) -> go.Figure:
    """Plotly figure of one hall; squares at position coordinates, coloured by ``color_by``; with
    ``phase``, the hall at that phase's end (racks new in it outlined when coloured by rack type or
    cluster), retrofits in effect then marked beside their rows."""
    records = floor_positions(scenario, plan, hall_id, color_by, phase, marks)
    outline = phase is not None and color_by in ("rack_type", "cluster")
    n_new = sum(r["new"] for r in records)
    ids = cluster_colors(scenario) if color_by == "cluster" else rack_type_colors(scenario)
    fixed = {
        EMPTY: "#e8e8e8",
        RESERVED: "#6b6b6b",
        NETWORK: "#111111",
        FABRIC: "#3f007d",
        NET_FREE: "#cbc9e2",
        INSTALLED: "#8c8c8c",
        EARLIER: "#9ecae1",
        **({f"new in {phase}": "#e6550d"} if phase else {}),
        **BUCKET_COLORS,
        **ids,
        **BLAST_COLORS,
    }
    if color_by == "marks":
        fixed[NETWORK] = "#3b6fb6"  # dark squares mean "goes dark" here
    order = {label: i for i, label in enumerate(BUCKET_COLORS)}
    labels = sorted(
        {r["label"] for r in records},
        key=lambda s: (s in (EMPTY, RESERVED, NETWORK, FABRIC, NET_FREE), order.get(s, -1), s),
    )
    scale = hall_scale(scenario, hall_id)
    fig = go.Figure()
    for k, label in enumerate(labels):
        pts = [r for r in records if r["label"] == label]
        fig.add_trace(
            go.Scatter(
                x=[p["x"] for p in pts],
                y=[p["y"] for p in pts],
                mode="markers",
                name=f"{label} ({len(pts)})",
                marker={
                    "symbol": "square",
                    "size": scale["marker"],
                    "color": fixed.get(label, PALETTE[k % len(PALETTE)]),
                    "line": {
                        "width": [2.5 if p["new"] and outline else 0.5 for p in pts],
                        "color": [NEW_OUTLINE if p["new"] and outline else "#555" for p in pts],
                    },
                },
                hovertext=[p["hover"] for p in pts],
                hoverinfo="text",
            )
        )
    _outline_units(fig, records)
    if plan is not None and plan.retrofits:
        _mark_retrofits(fig, scenario, plan, hall_id, phase)
    fig.update_layout(
        title=title
        or (
            f"Hall {hall_id}"
            + (f" at the end of {phase}" if phase else "")
            + (f" (outlined: {n_new:,} racks new in {phase})" if outline and n_new else "")
        ),
        height=scale["height"],
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        xaxis={"title": "x (m)", "scaleanchor": "y", "scaleratio": 1, "constrain": "domain"},
        yaxis={"title": "y (m)"},
        legend={"orientation": "h", "y": -0.15},
        plot_bgcolor="white",
    )
    ticks = row_ticks(scenario, hall_id)
    if ticks is not None:  # rows named along the axis they stack on (hover gives x, y in metres)
        axis, vals, texts = ticks
        fig.update_layout(
            {
                f"{axis}axis": {
                    "title": "row",
                    "tickmode": "array",
                    "tickvals": vals,
                    "ticktext": texts,
                    "tickfont": {"size": 9 if len(vals) > 30 else 11},
                }
            }
        )
    return fig


PLOT_WIDTH_PX = 1200
"""Width a hall is drawn at (the dashboard's wide layout), for sizing squares and height."""
MIN_PITCH_PX = 9
"""Smallest on-screen step between positions that keeps each square apart and hoverable."""


def hall_scale(scenario: Scenario, hall_id: str) -> dict[str, float]:
    """Height (px) and square size (px) that keep a hall readable at real coordinates: at least
    MIN_PITCH_PX between neighbouring positions, so a hall of 800+ positions grows taller rather
    than shrinking its squares to dots (height 360–2,400 px)."""
    ix = index_site(scenario.site)
    rows = [ref.row for ref in ix.rows.values() if ref.hall == hall_id]
    if not rows:
        return {"height": 520, "marker": 11}
    pts = [r.position_xy(i) for r in rows for i in (0, r.positions - 1)]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    span_x, span_y = max(xs) - min(xs) + 3.0, max(ys) - min(ys) + 3.0
    pitch = min(r.pitch_m for r in rows)
    px_per_m = min(PLOT_WIDTH_PX / span_x, max(MIN_PITCH_PX / pitch, 20.0))
    height = min(2400, max(360, span_y * px_per_m + 140))
    marker = max(4, min(14, pitch * px_per_m * 0.8))
    return {"height": round(height), "marker": round(marker, 1)}


MAX_UNIT_OUTLINES = 2000
"""Multi-rack units outlined one by one up to this many in a hall (beyond it, squares only)."""


def _outline_units(fig: go.Figure, records: list[dict]) -> None:
    """Each multi-rack unit drawn as one block: a rectangle around its positions."""
    spans: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for r in records:
        if r.get("unit") is not None:
            spans.setdefault(r["unit"], []).append((r["x"], r["y"]))
    if not spans or len(spans) > MAX_UNIT_OUTLINES:
        return
    for pts in spans.values():
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        fig.add_shape(
            type="rect",
            x0=min(xs) - 0.35,
            x1=max(xs) + 0.35,
            y0=min(ys) - 0.45,
            y1=max(ys) + 0.45,
            line={"color": "#222", "width": 2},
            fillcolor="rgba(0,0,0,0)",
            layer="above",
        )


def row_ticks(scenario: Scenario, hall_id: str) -> tuple[str, list[float], list[str]] | None:
    """Row labels as axis ticks: ("y", positions, labels) when every row of the hall runs along x
    (("x", …) along y). Rows sharing a line (pods side by side) share a tick named by their common
    last part and count ("R12 ×4"). None when rows run both ways."""
    ix = index_site(scenario.site)
    rows = [(rid, ref.row) for rid, ref in ix.rows.items() if ref.hall == hall_id]
    if not rows:
        return None
    along_x = {r.direction.value.endswith("x") for _, r in rows}
    if len(along_x) != 1:
        return None
    axis = "y" if along_x.pop() else "x"
    lines: dict[float, list[str]] = {}
    for rid, r in rows:
        x0, y0 = r.position_xy(0)
        lines.setdefault(round(y0 if axis == "y" else x0, 2), []).append(rid)
    vals, texts = [], []
    for at in sorted(lines):
        ids = lines[at]
        tails = {i.rsplit("-", 1)[-1] for i in ids}
        texts.append(
            ids[0]
            if len(ids) == 1
            else (f"{tails.pop()} ×{len(ids)}" if len(tails) == 1 else f"{ids[0]} +{len(ids) - 1}")
        )
        vals.append(at)
    return axis, vals, texts


def _mark_retrofits(fig: go.Figure, scenario: Scenario, plan: Plan, hall_id: str, phase: str | None) -> None:
    """A diamond left of each row a bought retrofit changes (in effect by ``phase`` when given)."""
    ix = index_site(scenario.site)
    order = scenario.phase_at
    by_id = {r.id: r for r in scenario.retrofits}
    xs, ys, texts = [], [], []
    for b in plan.retrofits:
        r = by_id.get(b.id)
        row_id = getattr(r.effect, "row", None) if r else None
        if row_id is None or row_id not in ix.rows or ix.rows[row_id].hall != hall_id:
            continue
        effective = order.get(b.phase, 0) + r.lead_phases
        if phase is not None and effective > order.get(phase, 0):
            continue
        x, y = ix.rows[row_id].row.position_xy(0)
        xs.append(x - 0.9)
        ys.append(y)
        texts.append(
            f"retrofit {b.id}: {r.effect.kind.replace('_', ' ')}, bought in {b.phase}, in effect from "
            f"{scenario.phases[min(effective, len(scenario.phases) - 1)].id if scenario.phases else '-'}"
        )
    if xs:
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="markers",
                name=f"retrofit ({len(xs)})",
                hovertext=texts,
                hoverinfo="text",
                marker={"symbol": "diamond", "size": 13, "color": "#6a3d9a"},
            )
        )


JOINT_ONLY, ROLLING_ONLY, BOTH = "joint only", "rolling only", "both"


def joint_vs_rolling(scenario: Scenario, joint: Plan, rolling: Plan, phase: str) -> tuple[dict, dict]:
    """Marks for the two floor plans at the end of ``phase``: positions both plans fill, positions
    only one fills, and for rolling's, positions joint keeps free until a later phase (named)."""
    order = scenario.phase_at
    cut = order.get(phase, len(order))
    j, r = _arrivals(joint, order, cut), _arrivals(rolling, order, cut)
    joint_marks, rolling_marks = {}, {}
    for spot, when in j.items():
        if when <= cut:
            joint_marks[spot] = BOTH if r.get(spot, cut + 1) <= cut else JOINT_ONLY
    for spot, when in r.items():
        if when > cut:
            continue
        later = j.get(spot)
        if later is not None and later <= cut:
            rolling_marks[spot] = BOTH
        elif later is not None:
            rolling_marks[spot] = f"rolling only: joint fills it in {scenario.phases[later].id}"
        else:
            rolling_marks[spot] = f"{ROLLING_ONLY}: joint leaves it empty"
    return joint_marks, rolling_marks


def _arrivals(plan: Plan, order, cut: int) -> dict[tuple[str, int], int]:
    """(row, position) → the phase its rack arrives: the rack standing at ``cut`` where a position
    holds one then and another later (a rack retired by ``cut`` is gone, §17)."""
    out: dict[tuple[str, int], int] = {}
    for x in plan.racks:
        if x.retired is not None and order.get(x.retired, len(order)) <= cut:
            continue
        when = -1 if x.existing else order.get(x.phase, 0)
        spot = (x.row, x.position)
        if spot not in out or when <= cut < out[spot]:
            out[spot] = when
    return out
