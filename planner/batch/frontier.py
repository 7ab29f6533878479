"""The Pareto frontier of a sweep's results table (§14): which points no other beats on every
chosen column, and the interactive chart of them (each point linked to its plan)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from pathlib import Path

from planner.batch.sweep import COLUMNS


def pareto(points: Iterable[tuple[float, ...]], senses: tuple[str, ...]) -> list[bool]:
    """Which points no other point dominates; ``senses`` per coordinate: "max" or "min". Two axes:
    one sort and a sweep (n log n); more: each point, best first on the first axis, is compared
    with the frontier so far (vectorised). Equal points do not dominate each other."""
    import numpy as np

    pts = np.array(
        [[v if s == "max" else -v for v, s in zip(p, senses, strict=True)] for p in points], dtype=float
    )
    n = len(pts)
    if n == 0:
        return []
    keep = np.zeros(n, dtype=bool)
    if pts.shape[1] == 2:
        order = np.lexsort((-pts[:, 1], -pts[:, 0]))  # x descending, then y descending
        best = -np.inf  # best y among points with a strictly larger x
        i = 0
        while i < n:
            j = i
            x = pts[order[i], 0]
            while j < n and pts[order[j], 0] == x:
                j += 1
            top = pts[order[i], 1]  # the group's largest y
            if top > best:
                for k in order[i:j]:
                    keep[k] = pts[k, 1] == top
            best = max(best, top)
            i = j
        return [bool(k) for k in keep]
    order = np.lexsort(tuple(-pts[:, k] for k in reversed(range(pts.shape[1]))))
    front = np.empty((0, pts.shape[1]))
    for i in order:
        p = pts[i]
        if len(front) and bool(np.any(np.all(front >= p, axis=1) & np.any(front > p, axis=1))):
            continue
        keep[i] = True
        front = np.vstack([front, p])
    return [bool(k) for k in keep]


MAXIMISE = {"gpus", "pflops_bf16"}
"""Result columns a planner wants more of; every other frontier axis is minimised."""


PLAN_LINK = re.compile(r"plans/[A-Za-z0-9_-][A-Za-z0-9_.-]*\.plan\.yaml")
"""The only plan column values a frontier point may link to: a plan file inside the results folder."""


def plan_link(plan: object, link_base: Path | None) -> str:
    """The link a frontier point opens: only a relative path to a plan file inside the results
    folder (``plans/…plan.yaml``, no scheme, no ``..``); anything else opens nothing."""
    if not isinstance(plan, str) or not PLAN_LINK.fullmatch(plan) or ".." in plan:
        return ""
    return plan if link_base is None else (link_base / plan).as_posix()


def readable(v: float) -> str:
    """A figure for a hover line: thousands separators, at most two decimals, never an exponent."""
    if not math.isfinite(v):
        return str(v)
    return f"{v:,.0f}" if abs(v) >= 100 or v == int(v) else f"{v:,.2f}".rstrip("0").rstrip(".")


def frontier_figure(table, x: str, y: str, z: str | None = None, link_base: Path | None = None):
    """Plotly figure of every solved point, the Pareto-optimal ones marked; hover shows the varied
    values, a click opens the point's plan (``link_base``: folder the links are relative to).
    Built column-wise (no per-row loops over the table); WebGL markers past 5,000 points."""
    import numpy as np
    import plotly.graph_objects as go

    ok = table[
        table["status"].isin(["optimal", "feasible"]) & table[x].notna() & table[y].notna()
    ].reset_index(drop=True)
    axes = [a for a in (x, y, z) if a]
    if z:
        ok = ok[ok[z].notna()].reset_index(drop=True)
    senses = tuple("max" if a in MAXIMISE else "min" for a in axes)
    values = {a: ok[a].astype(float).to_numpy() for a in axes}
    ok["pareto"] = pareto(zip(*(values[a] for a in axes), strict=True), senses) if len(ok) else []
    params = [c for c in table.columns if c not in COLUMNS and c != "pareto"]
    cols = [
        ok["point"].astype(str),
        ok["status"].astype(str),
        *(ok[p].astype(str) for p in params),
        *(values[a] for a in axes),
    ]
    names = [*params, *axes]
    hover = [
        "<br>".join(
            [
                f"<b>{row[0]}</b> ({row[1]})",
                *(f"{n} = {v}" for n, v in zip(names[: len(params)], row[2 : 2 + len(params)], strict=True)),
                *(f"{a} = {readable(float(v))}" for a, v in zip(axes, row[2 + len(params) :], strict=True)),
            ]
        )
        for row in zip(*cols, strict=True)
    ]
    plans = ok["plan"].tolist() if "plan" in ok else [None] * len(ok)
    links = [plan_link(p, link_base) for p in plans]
    points = ok["point"].astype(str).tolist()
    flags = ok["pareto"].to_numpy(dtype=bool) if len(ok) else []
    fig = go.Figure()
    big = len(ok) > 5000
    for flag, name, color, size in (
        (False, "dominated", "#9e9e9e", 8),
        (True, "Pareto-optimal", "#c23b3b", 12),
    ):
        sel = [i for i, v in enumerate(flags) if bool(v) == flag]
        custom = np.empty((len(sel), 2), dtype=object)
        custom[:, 0] = [links[i] for i in sel]
        custom[:, 1] = [points[i] for i in sel]
        kw = dict(
            x=values[x][sel],
            y=values[y][sel],
            name=f"{name} ({len(sel)})",
            hovertext=np.array([hover[i] for i in sel], dtype=object),
            hoverinfo="text",
            customdata=custom,
            mode="markers",
            marker={"color": color, "size": size if not big else size / 2},
        )
        if z:
            fig.add_trace(
                go.Scatter3d(z=values[z][sel], **{**kw, "marker": {"color": color, "size": size / 2}})
            )
        elif big:
            fig.add_trace(go.Scattergl(**kw))
        else:
            fig.add_trace(go.Scatter(**kw))
    title = (
        f"{y} vs {x}"
        + (f" vs {z}" if z else "")
        + (
            f": {int(ok['pareto'].sum()) if len(ok) else 0} of {len(ok)} points Pareto-optimal (click a "
            "point for its plan)"
        )
    )
    fig.update_layout(title=title, xaxis_title=x, yaxis_title=y, height=600)
    return fig, ok
