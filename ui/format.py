"""Numbers for people: the one formatter behind every dashboard table.

Every cell becomes text: integers with thousands separators, other numbers rounded to at most
two decimals (no exponent, never "nan" or "None"), empty cells "—" (the column's tooltip says
why). Column names become human headers with their unit (``capex_usd`` → "capex $M",
``it_kw`` → "IT MW"), and values are scaled to that unit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import pandas as pd
import streamlit as st

EMPTY = "—"
NUMERIC = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?")
WORDS = {
    "gpus": "GPUs",
    "gpu": "GPU",
    "it": "IT",
    "mw": "MW",
    "kw": "kW",
    "pflops": "PFLOPS",
    "bf16": "BF16",
    "hbm": "HBM",
    "tb": "TB",
    "pb": "PB",
    "gb": "GB",
    "npv": "NPV",
    "tco": "TCO",
    "usd": "$",
    "s": "s",
    "m": "m",
    "n": "N",
    "id": "ID",
    "lp": "LP",
}
HEADERS: dict[str, tuple[str, float]] = {
    "gpus": ("GPUs", 1),
    "racks": ("racks", 1),
    "it_kw": ("IT MW", 1e-3),
    "racks_kw": ("racks MW", 1e-3),
    "network_kw": ("network MW", 1e-3),
    "facility_kw": ("facility MW", 1e-3),
    "fabric_kw": ("fabric MW", 1e-3),
    "stranded_kw": ("stranded MW", 1e-3),
    "avg_kw_per_rack": ("kW per rack (avg)", 1),
    "max_kw_per_rack": ("kW per rack (max)", 1),
    "gpus_per_mw": ("GPUs per MW", 1),
    "pflops_per_mw": ("PFLOPS per MW", 1),
    "pflops_bf16": ("PFLOPS (BF16)", 1),
    "usd_per_gpu_hour": ("$ per GPU-hour", 1),
    "usd_per_useful_gpu_hour": ("$ per useful GPU-hour", 1),
    "fabric_usd_per_gpu": ("fabric $ per GPU", 1),
    "opex_usd_per_year": ("opex $M a year", 1e-6),
    "gpu_hours": ("GPU-hours (M)", 1e-6),
    "gpu_hours_npv": ("GPU-hours NPV (M)", 1e-6),
    "cable_m": ("cable km", 1e-3),
    "gpu_power_cap_w": ("GPU power cap W", 1),
    "power_budget_ratio": ("power budget ratio", 1),
    "it_mw": ("IT MW", 1),
    "solve_s": ("solve s", 1),
    "new_racks": ("new racks", 1),
    "solve_time_s": ("solve s", 1),
    "gap": ("gap %", 100),
    "hbm_tb": ("HBM TB", 1),
}
"""Known columns: header and the factor to its unit."""


def header(name: str) -> tuple[str, float]:
    """Human header and scale of a column: known names, else ``*_usd`` in $M, ``*_kw`` in MW, words spelled
    out."""
    if name in HEADERS:
        return HEADERS[name]
    if not re.fullmatch(r"[a-z0-9_]+", name):
        return name, 1  # already written for people
    if name.endswith("_usd"):
        return " ".join(WORDS.get(w, w) for w in name.removesuffix("_usd").split("_")) + " $M", 1e-6
    if name.endswith("_kw"):
        return " ".join(WORDS.get(w, w) for w in name.removesuffix("_kw").split("_")) + " MW", 1e-3
    return " ".join(WORDS.get(w, w) for w in name.split("_")), 1


def number(v: float) -> str:
    """A number for people: integers (and large values) with thousands separators, at most two
    decimals, tiny non-zero values as "<0.01", no exponent."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if not math.isfinite(v):
        return EMPTY if math.isnan(v) else ("∞" if v > 0 else "−∞")
    a = abs(v)
    if a >= 100 or float(v).is_integer():
        return f"{v:,.0f}"
    if a >= 0.005:
        text = f"{v:,.1f}" if a >= 10 else f"{v:,.2f}"
        return text.rstrip("0").rstrip(".")
    return "0" if v == 0 else ("<0.01" if v > 0 else "-<0.01")


def cell(v, scale: float = 1) -> str:
    """Any table value as text ("—" for None and NaN, lists joined, mappings as key value pairs)."""
    if v is None:
        return EMPTY
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float | int):
        if isinstance(v, float) and math.isnan(v):
            return EMPTY
        return number(v * scale if scale != 1 else v)
    if hasattr(v, "item") and not isinstance(v, str | bytes):  # numpy scalars
        return cell(v.item(), scale)
    if isinstance(v, list | tuple | set):
        return ", ".join(cell(x) for x in v) or EMPTY
    if isinstance(v, Mapping):
        return ", ".join(f"{k} {cell(x)}" for k, x in v.items()) or EMPTY
    text = str(v)
    if NUMERIC.fullmatch(text):  # numbers stored as text (a sweep's varied values)
        return number(float(text) * scale)
    return text if text not in ("", "nan", "None", "NaN") else EMPTY


def people(df: pd.DataFrame, keep: tuple[str, ...] = ()) -> pd.DataFrame:
    """The table with human headers in their units and every cell as text; ``keep`` names
    columns left as they are (already text for people)."""
    out = {}
    for col in df.columns:
        if col in keep:
            out[col] = [cell(v) for v in df[col]]
            continue
        name, scale = header(str(col))
        out[name] = [cell(v, scale) for v in df[col]]
    return pd.DataFrame(out, index=[cell(i) for i in df.index])


def show_table(
    df: pd.DataFrame,
    key: str,
    why_empty: str = "",
    help: dict[str, str] | None = None,
    hide_index: bool = True,
    **kw,
) -> pd.DataFrame:
    """Show a table through :func:`people`; columns with an empty cell carry ``why_empty`` in their
    tooltip, ``help`` adds tooltips by (human) column name. Returns the table shown."""
    shown = people(df)
    config = {}
    for col in shown.columns:
        tips = [
            t
            for t in (
                (help or {}).get(col, ""),
                f"{EMPTY}: {why_empty}" if why_empty and (shown[col] == EMPTY).any() else "",
            )
            if t
        ]
        if tips:
            config[col] = st.column_config.TextColumn(col, help=" ".join(tips))
    st.dataframe(shown, key=key, hide_index=hide_index, width="stretch", column_config=config or None, **kw)
    return shown
