"""Utilisation charts and KPI tables built from plans (no solver code)."""

from __future__ import annotations

import numbers

import pandas as pd
import plotly.graph_objects as go

from planner.enums import LimitKind
from planner.plan import Plan
from ui.format import EMPTY, cell, header


def kpi_table(plans: dict[str, Plan]) -> pd.DataFrame:
    """KPIs of one or more plans, one row per plan and one typed column per KPI."""
    rows = {}
    for name, p in plans.items():
        k = {}
        for key, v in (p.kpis.model_dump() if p.kpis else {}).items():
            for col, x in (
                {f"{key}.{part}": y for part, y in v.items()} if isinstance(v, dict) else {key: v}
            ).items():
                k[col] = round(x, 2) if isinstance(x, float) else x
        k.update(
            status=p.status.value,
            gap=None if p.gap is None else round(p.gap, 5),
            solver=p.solver,
            solve_time_s=round(p.solve_time_s, 2),
        )
        if p.fabric:
            k.update(
                fabric=", ".join(sorted({f.design for f in p.fabric})),
                fabric_max_hops=max(f.max_hops for f in p.fabric),
                fabric_network_racks=sum(f.network_racks for f in p.fabric),
            )
        rows[name] = k
    return pd.DataFrame.from_dict(rows, orient="index")


def _amount(v: float) -> str:
    """A bar label: thousands separators, no decimals at 100 and above."""
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.1f}".removesuffix(".0")


def with_deltas(table: pd.DataFrame) -> pd.DataFrame:
    """The KPI table with a row per later variant: its difference from the first ("B − A") in each
    numeric column's display unit, signed ("+240", "−37.9"; other cells empty)."""
    if len(table) < 2:
        return table
    first = table.index[0]
    rows = {}
    for name in table.index[1:]:
        delta = {}
        for col in table.columns:
            a, b = table.at[first, col], table.at[name, col]
            if all(isinstance(v, numbers.Number) and not isinstance(v, bool) and v == v for v in (a, b)):
                text = cell(float(b) - float(a), header(str(col))[1])
                delta[col] = (
                    text if text in ("0", EMPTY) else ("−" + text[1:] if text.startswith("-") else "+" + text)
                )
            else:
                delta[col] = None
        rows[f"{name} − {first}"] = delta
    return pd.concat([table.astype(object), pd.DataFrame.from_dict(rows, orient="index", dtype=object)])


def utilisation_figure(plan: Plan, kind: str, top: int = 25) -> go.Figure | None:
    """Horizontal bars of use ÷ limit for one kind of limit, normal and worst single failure, each
    labelled with the use and the limit in their unit (kW, ports, racks, USD)."""
    every = sorted(
        (u for u in plan.utilisation or [] if u.kind == kind and u.limit > 0),
        key=lambda u: (-u.worst_share, u.id),
    )
    items = every[:top]
    if not items:
        return None
    title = LimitKind(kind).title + (
        f": top {len(items)} of {len(every)} by worst use" if len(every) > len(items) else ""
    )
    names = [u.id for u in items][::-1]
    fig = go.Figure()
    fig.add_bar(
        y=names,
        x=[u.share * 100 for u in items][::-1],
        orientation="h",
        name="normal",
        text=[f"{_amount(u.value)} of {_amount(u.limit)} {u.unit}" for u in items][::-1],
        textposition="auto",
        cliponaxis=False,
        hovertext=[f"{u.value:,.1f} of {u.limit:,.1f} {u.unit} ({u.share:.0%})" for u in items][::-1],
        marker_color="#1f5fa8",
    )
    if kind == LimitKind.power_node:
        worst = [max(u.value, u.worst_value or 0) for u in items]
        fig.add_bar(
            y=names,
            x=[u.worst_share * 100 for u in items][::-1],
            orientation="h",
            name="worst N-1",
            text=[f"{_amount(w)} of {_amount(u.limit)} kW" for w, u in zip(worst, items, strict=True)][::-1],
            textposition="auto",
            cliponaxis=False,
            hovertext=[
                f"{w:,.1f} of {u.limit:,.1f} kW when {u.worst_failure or 'nothing'} fails "
                f"({u.worst_share:.0%})"
                for w, u in zip(worst, items, strict=True)
            ][::-1],
            marker_color="#e07b00",
        )
    fig.add_vline(x=100, line_dash="dash", line_color="#c23b3b")
    fig.update_layout(
        title=title,
        barmode="group",
        height=120 + 22 * len(items) * (2 if kind == LimitKind.power_node else 1),
        xaxis={"title": "% of usable limit (bar labels: use of limit)", "range": [0, 125]},
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"orientation": "h"},
    )
    return fig
