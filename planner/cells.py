"""Cells a spreadsheet opens: every text cell the planner writes to a CSV or XLSX file (placement,
NetBox import, KPIs, results tables) passes through :func:`safe_cell`.

A text cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a formula to
Excel, LibreOffice and Google Sheets (``=HYPERLINK(...)``, ``@SUM(...)``): it gets a leading
apostrophe, which the spreadsheet shows as text. Control characters (CR, LF, ESC, NUL …) are replaced
by a space first, so a free-text field never breaks a row or hides a sequence in a terminal.
Numbers, booleans and empty cells pass unchanged, and so does text that is a plain number
(``-0.5``, read back from a results table): a spreadsheet reads it as that number, not a formula.
"""

from __future__ import annotations

from typing import Any

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a text cell a formula."""


def _clean(text: str) -> str:
    return "".join(" " if (ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0) else ch for ch in text)


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() == text and text.lower().lstrip("+-") not in ("inf", "infinity", "nan")


def safe_cell(value: Any) -> Any:
    """A text value made safe for a spreadsheet cell (module docstring); other values unchanged."""
    if not isinstance(value, str):
        return value
    if value.startswith(FORMULA_START) and not _number(value):
        return "'" + _clean(value)
    return _clean(value)


def safe_rows(rows: list[dict]) -> list[dict]:
    """Rows (column → value) with every text cell made safe."""
    return [{k: safe_cell(v) for k, v in r.items()} for r in rows]


def safe_frame(df):
    """A pandas DataFrame with every text cell, column name and index label made safe; numbers
    untouched."""
    from pandas.api.types import is_object_dtype, is_string_dtype

    out = df.copy()
    for c in out.columns:
        if is_object_dtype(out[c]) or is_string_dtype(out[c]):
            out[c] = out[c].map(safe_cell)
    out.columns = [safe_cell(c) if isinstance(c, str) else c for c in out.columns]
    if is_object_dtype(out.index) or is_string_dtype(out.index):
        out.index = out.index.map(safe_cell)
    return out
