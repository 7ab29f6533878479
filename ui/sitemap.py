"""Site map: buildings as blocks, their halls as tiles coloured by a figure of the plan; a click
on a tile opens that hall's floor plan."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from planner.schema import Scenario

COLOR_BY = {
    "GPUs": "GPUs",
    "worst power use %": "worst power use %",
    "worst cooling use %": "worst cooling use %",
    "positions": "positions",
}


def tile_layout(scenario: Scenario) -> dict[str, tuple[float, float]]:
    """Tile centre of each hall: buildings left to right by their location (x, then y), each a
    near-square grid of its halls, one empty column between buildings."""
    buildings = sorted(
        enumerate(scenario.site.buildings), key=lambda ib: (ib[1].location_km[0], ib[1].location_km[1], ib[0])
    )
    where, x0 = {}, 0.0
    for _, b in buildings:
        cols = max(1, math.ceil(math.sqrt(len(b.halls))))
        for k, h in enumerate(b.halls):
            where[h.id] = (x0 + k % cols, -(k // cols))
        x0 += cols + 1
    return where


def site_map_figure(scenario: Scenario, overview: pd.DataFrame, color: str = "GPUs") -> go.Figure:
    """Tiles of every hall (``overview``: one row per hall, see ui.views.hall_overview), coloured by
    ``color``; each tile names its hall and the figure; the hall ID is each point's customdata."""
    where = tile_layout(scenario)
    df = overview.assign(x=[where[h][0] for h in overview["hall"]], y=[where[h][1] for h in overview["hall"]])
    values = df[color].astype(float)
    unit = "" if color in ("GPUs", "positions") else " %"
    text = [f"{h}<br>{v:,.0f}{unit}" for h, v in zip(df["hall"], values, strict=True)]
    hover = [
        f"<b>{b} / {h}</b><br>{g:,} GPUs in {r:,} racks of {p:,} positions<br>IT {mw:,.2f} MW<br>worst "
        f"power use {pw:.0f} %, "
        f"worst cooling use {cw:.0f} %<br><i>click to open its floor plan</i>"
        for b, h, g, r, p, mw, pw, cw in zip(
            df["building"],
            df["hall"],
            df["GPUs"],
            df["racks"],
            df["positions"],
            df["IT MW"],
            df["worst power use %"],
            df["worst cooling use %"],
            strict=True,
        )
    ]
    scale = "Reds" if "use" in color else "Blues"
    top = 100 if "use" in color else max(float(values.max()), 1.0)
    ink = ["#ffffff" if v > 0.55 * top else "#111111" for v in values]  # readable on dark and light tiles
    fig = go.Figure(
        go.Scatter(
            x=df["x"],
            y=df["y"],
            mode="markers+text",
            text=text,
            textfont={"size": 11, "color": ink},
            customdata=list(df["hall"]),
            hovertext=hover,
            hoverinfo="text",
            showlegend=False,
            selected={"marker": {"opacity": 1.0}},
            unselected={"marker": {"opacity": 0.6}, "textfont": {"color": "#222"}},
            marker={
                "symbol": "square",
                "size": 74,
                "color": values,
                "colorscale": scale,
                "cmin": 0,
                "cmax": top,
                "line": {"width": 1, "color": "#333"},
                "colorbar": {"title": {"text": color}},
            },
        )
    )
    for b in scenario.site.buildings:
        xs = [where[h.id][0] for h in b.halls]
        fig.add_annotation(
            x=(min(xs) + max(xs)) / 2, y=0.62, text=f"<b>{b.id}</b>", showarrow=False, font={"size": 13}
        )
    rows = 1 - min(y for _, y in where.values())
    fig.update_layout(
        height=150 + 95 * rows,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        plot_bgcolor="white",
        title=f"Site map: {len(scenario.site.buildings)} buildings, {len(df)} halls, coloured by {color}",
        xaxis={"visible": False, "range": [-0.7, max(x for x, _ in where.values()) + 0.7]},
        yaxis={"visible": False, "range": [-rows + 0.4, 0.9]},
        clickmode="event+select",
        dragmode=False,
    )
    return fig
