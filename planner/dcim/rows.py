"""NetBox objects as flat rows (SPEC §20): what both readers of a NetBox share — the rows of each
kind from the REST API or from CSV files, in the import forms' columns (the planner's bundle) or
in NetBox's own "Export → All data (CSV)" columns (labels such as ``Power Panel``, ``Max Weight``,
``Maximum draw (W)``; choices by label such as ``Three-phase``, ``80%``, ``Pounds``) — and the
units NetBox states (weights in kg, g, lb or oz; draws in W)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from planner.errors import InputError

KINDS = (
    "sites",
    "locations",
    "racks",
    "power-panels",
    "power-feeds",
    "devices",
    "power-ports",
    "device-types",
)
"""Object kinds an import reads; the last two are optional (installed devices' draw and weight)."""


@dataclass
class Imported:
    """What the import made: the site mapping, installed racks (with the rack types that describe
    them), what it could not map and the defaults it took."""

    site: dict
    existing: list[dict] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)
    rack_types: list[dict] = field(default_factory=list)
    defaults: list[str] = field(default_factory=list)


def text(v) -> str:
    return "" if v is None else str(v)


def num(v, what: str) -> float | None:
    """A number from an API value or CSV cell (``80%``, ``48U``, ``1,200`` read as numbers), None
    when empty."""
    if v in (None, ""):
        return None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    s = str(v).strip().replace(",", "")
    s = re.sub(r"\s*(%|U)$", "", s)
    try:
        return float(s)
    except ValueError:
        raise InputError(f"{what}: '{v}' is not a number") from None


KG_PER = {"kg": 1.0, "g": 0.001, "lb": 0.45359237, "oz": 0.028349523125}
"""Kilograms per NetBox weight unit (its ``weight_unit`` choices; 1 lb = 0.45359237 kg exactly)."""

UNIT_WORDS = {
    "kilograms": "kg",
    "grams": "g",
    "pounds": "lb",
    "ounces": "oz",
    "millimeters": "mm",
    "inches": "in",
}
"""NetBox's unit labels (its CSV export) → unit values (its API)."""


def weight_kg(value, unit, what: str) -> float | None:
    """A NetBox weight in kg: ``value`` in ``unit`` (kg, g, lb, oz; its label as exported, or a
    value such as ``3000.00 Pounds`` carrying its unit); None when no weight is stated."""
    s = text(value).strip()
    m = re.match(r"^([-0-9.,]+)\s*([A-Za-z]+)$", s)
    if m:
        s, unit = m.group(1), m.group(2)
    x = num(s, what)
    if x is None:
        return None
    u = text(unit).strip().lower()
    u = UNIT_WORDS.get(u, u)
    if u == "":
        u = "kg"
    if u not in KG_PER:
        raise InputError(f"{what}: weight unit '{unit}' is none of NetBox's kg, g, lb, oz")
    return round(x * KG_PER[u], 6)


def flat_api(o: dict) -> dict:
    """An API object as a flat row: references by name (a device type by model), choices by value,
    custom fields as ``cf_<name>``."""
    out: dict = {}
    for k, v in o.items():
        if k == "custom_fields":
            out.update({f"cf_{c}": x for c, x in (v or {}).items()})
        elif isinstance(v, dict) and "value" in v and "label" in v:
            out[k] = v["value"]
        elif isinstance(v, dict):
            out[k] = v.get("name") or v.get("model") or v.get("display")
            if "id" in v:
                out[f"{k}_id"] = v["id"]
        else:
            out[k] = v
    return out


EXPORT_RENAME = {
    "type": {"devices": "device_type", "racks": "rack_type", "power-feeds": "type"},
    "position": {"devices": "position"},
    "rack_face": {"devices": "face"},
    "height": {"racks": "u_height"},
}
"""Export column → API field where the label alone does not say it (``Type`` of a device is its
device type, of a rack its rack type, of a feed primary or redundant)."""

CHOICE_FIELDS = ("status", "type", "supply", "phase", "weight_unit", "outer_unit", "face")
"""Fields whose export cells are choice labels (``Active``, ``Three-phase``): read as values."""


def export_key(header: str, kind: str) -> str:
    """The API field of an "All data" export column: its label without the unit in brackets, in
    lower case with underscores (``Max Utilization`` → ``max_utilization``; ``Maximum draw (W)`` →
    ``maximum_draw``); a column named ``planner_…`` is the custom field ``cf_planner_…``."""
    if header.startswith("planner_"):
        return f"cf_{header}"
    k = re.sub(r"\s*\(.*?\)", "", header).strip().lower().replace(" ", "_").replace("-", "_")
    return EXPORT_RENAME.get(k, {}).get(kind, k)


def choice_value(label: str) -> str:
    """A choice label as its value: ``Three-phase`` → ``three-phase``, ``Single phase`` →
    ``single-phase``, ``Primary`` → ``primary``."""
    return text(label).strip().lower().replace(" ", "-")


def is_export(header: list[str]) -> bool:
    """True for NetBox's "All data" export (labels: ``Name``), false for import columns (``name``)."""
    return "Name" in header and "name" not in header


def from_export(row: dict, kind: str) -> dict:
    """One row of NetBox's "All data" export in the API's field names and choice values."""
    out: dict = {}
    for h, v in row.items():
        if h is None:
            continue
        k = export_key(h, kind)
        out[k] = choice_value(v) if k in CHOICE_FIELDS and v else v
    return out


def file_kind(stem: str) -> str:
    """The object kind of a CSV file: ``07-racks``, ``racks``, or NetBox's export name
    ``netbox_power feeds`` → ``power-feeds``."""
    s = stem.split("-", 1)[1] if stem[:2].isdigit() and "-" in stem else stem
    s = re.sub(r"\s*\(\d+\)$", "", s)  # a browser's second download: "netbox_racks (1)"
    if s.startswith("netbox_"):
        s = s[len("netbox_") :]
    return s.replace(" ", "-").replace("_", "-")
