"""The NetBox project's demo data (datasets/netbox-demo/, its SQL dump for NetBox 4.2, MIT licence)
read straight from the dump's COPY blocks into the flat rows the REST API gives the import
(references by name, choices by value): a NetBox nobody here filled, without a running server."""

from __future__ import annotations

import gzip
import json
import re
from functools import cache
from pathlib import Path

DUMP = Path(__file__).resolve().parent.parent / "datasets" / "netbox-demo" / "netbox-demo-v4.2.sql.gz"


@cache
def tables() -> dict[str, list[dict]]:
    """Every table of the dump: name → rows (column → text, None for NULL)."""
    out: dict[str, list[dict]] = {}
    cur = None
    with gzip.open(DUMP, "rt", encoding="utf-8") as f:
        for line in f:
            if cur is None:
                m = re.match(r"COPY public\.(\w+) \((.*)\) FROM stdin;", line)
                if m:
                    cur = (m.group(1), [c.strip('"') for c in m.group(2).split(", ")])
                    out[cur[0]] = []
            elif line.startswith("\\."):
                cur = None
            else:
                vals = [None if v == "\\N" else v for v in line.rstrip("\n").split("\t")]
                out[cur[0]].append(dict(zip(cur[1], vals, strict=True)))
    return out


def _cf(r: dict) -> dict:
    return {f"cf_{k}": v for k, v in json.loads(r.get("custom_field_data") or "{}").items()}


def rows() -> dict[str, list[dict]]:
    """The demo NetBox as the import's rows per kind."""
    t = tables()
    by = {
        k: {r["id"]: r for r in t[f"dcim_{k}"]}
        for k in ("site", "location", "rack", "powerpanel", "devicetype")
    }
    dev = {r["id"]: r for r in t["dcim_device"]}
    name = lambda k, i: by[k][i]["name"] if i in by[k] else None  # noqa: E731
    return {
        "sites": [{"id": r["id"], "name": r["name"], "slug": r["slug"]} for r in t["dcim_site"]],
        "locations": [
            {
                "name": r["name"],
                "slug": r["slug"],
                "site": name("site", r["site_id"]),
                "parent": name("location", r["parent_id"]),
                **_cf(r),
            }
            for r in t["dcim_location"]
        ],
        "racks": [
            {
                "name": r["name"],
                "site": name("site", r["site_id"]),
                "location": name("location", r["location_id"]),
                "status": r["status"],
                "facility_id": r["facility_id"],
                "u_height": r["u_height"],
                "weight": r["weight"],
                "max_weight": r["max_weight"],
                "weight_unit": r["weight_unit"],
                "outer_width": r["outer_width"],
                "outer_unit": r["outer_unit"],
                **_cf(r),
            }
            for r in t["dcim_rack"]
        ],
        "power-panels": [
            {
                "name": r["name"],
                "site": name("site", r["site_id"]),
                "location": name("location", r["location_id"]),
                **_cf(r),
            }
            for r in t["dcim_powerpanel"]
        ],
        "power-feeds": [
            {
                "name": r["name"],
                "power_panel": name("powerpanel", r["power_panel_id"]),
                "rack": name("rack", r["rack_id"]),
                "status": r["status"],
                "type": r["type"],
                "supply": r["supply"],
                "phase": r["phase"],
                "voltage": r["voltage"],
                "amperage": r["amperage"],
                "max_utilization": r["max_utilization"],
                **_cf(r),
            }
            for r in t["dcim_powerfeed"]
        ],
        "devices": [
            {
                "id": r["id"],
                "name": r["name"],
                "site": name("site", r["site_id"]),
                "rack": name("rack", r["rack_id"]),
                "status": r["status"],
                "device_type": by["devicetype"][r["device_type_id"]]["model"],
                **_cf(r),
            }
            for r in t["dcim_device"]
        ],
        "power-ports": [
            {
                "name": r["name"],
                "device": dev[r["device_id"]]["name"],
                "device_id": r["device_id"],
                "maximum_draw": r["maximum_draw"],
                "allocated_draw": r["allocated_draw"],
            }
            for r in t["dcim_powerport"]
            if r["device_id"] in dev
        ],
        "device-types": [
            {
                "model": r["model"],
                "weight": r["weight"],
                "weight_unit": r["weight_unit"],
                "u_height": r["u_height"],
            }
            for r in t["dcim_devicetype"]
        ],
    }
