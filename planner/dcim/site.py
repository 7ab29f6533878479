"""A site from NetBox (SPEC §20): ``planner import netbox`` reads a NetBox — its REST API or a
folder of CSV files in its import columns (the bundle ``planner export --format netbox`` writes) —
and builds a site YAML plus the installed racks, by these conventions:

- sites and locations: with ``campus`` level a site is the campus, its top locations buildings and
  their child locations halls; with ``building`` level each site is a building and its locations
  halls. A ``prefix`` given at export is stripped from every name.
- racks are positions: custom field ``planner_row`` names the row, ``planner_position`` the index,
  ``planner_x_m``/``planner_y_m`` the centre; a row's origin, pitch and direction come from its
  positions 0 and 1; status ``reserved`` reserves a position; ``max_weight`` (kg) is the row's
  weight limit; ``planner_pod``, ``planner_air_zone``, ``planner_liquid_loop``, ``planner_max_kw``,
  ``planner_feeds`` and ``planner_redundant`` are the row's.
- power panels are power nodes (``planner_kind``, ``planner_capacity_kw``, ``planner_derate``,
  ``planner_parent``, ``planner_can_fail``); power feeds are the nodes rows draw from, under their
  panel; a node's capacity is its ``planner_capacity_kw``, else its feed's V·A·(√3 for three-phase)
  ·utilisation, else (a panel) the sum of its feeds'.
- devices with status ``active`` are installed racks (``planner_rack_type``, ``planner_cluster``,
  ``planner_part`` 0 or none).
- an overlay YAML holds what NetBox cannot: ``site`` (id, description, fabric, source),
  ``buildings: {id: {location_km, online_phase}}``, ``halls: {id: {floor_area_m2, online_phase,
  cooling_zones, pods}}``, ``rows: {id: {...}}`` and ``power_nodes: {id: {...}}`` (fields to set
  or override).

Whatever cannot be mapped (a rack without ``planner_row``, a row whose racks disagree, a device in
no known position, a node with no capacity) is listed in :attr:`Imported.unmapped`, never guessed.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from planner.dcim.build import native_site
from planner.dcim.rows import KINDS, Imported, file_kind, flat_api, from_export, is_export, text
from planner.errors import InputError

_text = text

ROW_FIELDS = {
    "planner_pod": "pod",
    "planner_air_zone": "air_zone",
    "planner_liquid_loop": "liquid_loop",
    "planner_max_kw": "max_rack_power_kw",
    "planner_feeds": "feeds",
    "planner_redundant": "redundant",
}
"""Rack custom field → the row field it carries (every rack of a row states the same)."""

ENDPOINTS = {
    "sites": "dcim/sites",
    "locations": "dcim/locations",
    "racks": "dcim/racks",
    "power-panels": "dcim/power-panels",
    "power-feeds": "dcim/power-feeds",
    "devices": "dcim/devices",
    "power-ports": "dcim/power-ports",
    "device-types": "dcim/device-types",
}
"""REST API path (after ``/api/``) of each kind the import reads."""


SITE_FILTERED = ("locations", "racks", "power-panels", "power-feeds", "devices", "power-ports")
"""Kinds the API filters by site (``?site=<slug>``) when the import names one."""


def rows_from_api(nb, site: str | None = None) -> dict[str, list[dict]]:
    """Every object of the kinds the import reads, from a client with ``all(endpoint)`` (a
    :class:`planner.dcim.client.NetBox`); with ``site`` (name or slug), only that site's."""
    sites = [flat_api(o) for o in nb.all(f"/api/{ENDPOINTS['sites']}/")]
    slug = next((_text(s.get("slug")) for s in sites if site in (s.get("name"), s.get("slug"))), None)
    out = {"sites": sites}
    for k in KINDS[1:]:
        query = {"site": slug} if site and slug and k in SITE_FILTERED else {}
        out[k] = [flat_api(o) for o in nb.all(f"/api/{ENDPOINTS[k]}/", **query)]
    return out


MAX_CSV_BYTES = 512 * 2**20
"""One CSV file's cap (512 MiB): a gigawatt site's racks file is about 10 MB."""

MAX_POSITION = 9_999
"""Largest rack position index the import takes (rows hold tens of positions)."""

REQUIRED = {
    "sites": ("name",),
    "locations": ("name", "site"),
    "racks": ("name",),
    "power-panels": ("name",),
    "power-feeds": ("name", "power_panel"),
    "devices": (),
    "power-ports": ("name",),
    "device-types": ("model",),
}
"""Columns (API fields) every object of a kind must carry, as in NetBox's import forms."""


def _decode(f: Path) -> str:
    """A CSV file's text: UTF-8 with or without a byte-order mark (what NetBox writes and reads),
    else InputError naming the encoding found."""
    if f.stat().st_size > MAX_CSV_BYTES:
        raise InputError(f"--csv {f.name}: {f.stat().st_size:,} bytes, more than the {MAX_CSV_BYTES:,} read")
    raw = f.read_bytes()
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(raw) > 1 and b"\x00" in raw[:64]):
        raise InputError(
            f"--csv {f.name}: the file is UTF-16; NetBox's CSV import and export use UTF-8: "
            "save it as UTF-8 (CSV UTF-8 in a spreadsheet)"
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(
            f"--csv {f.name}: not UTF-8 (byte 0x{raw[e.start]:02x} at offset {e.start:,}; Latin-1 or "
            "a Windows code page?); NetBox's CSV import and export use UTF-8: save it as UTF-8"
        ) from None


def _read_csv(f: Path, kind: str) -> list[dict]:
    """The rows of one kind's CSV, its header checked for :data:`REQUIRED` columns."""
    try:
        reader = csv.DictReader(io.StringIO(_decode(f)))
        rows = list(reader)
    except csv.Error as e:
        raise InputError(f"--csv {f.name}: line {reader.line_num + 1}: {e}") from None
    header = reader.fieldnames or []
    if is_export(header):  # NetBox's own "Export → All data (CSV)": labels for columns and choices
        rows = [from_export(r, kind) for r in rows]
        header = [k for k in rows[0]] if rows else []
    missing = [c for c in REQUIRED[kind] if c not in header]
    if rows and missing:
        raise InputError(
            f"--csv {f.name}: no {', '.join(repr(c) for c in missing)} column (the columns of NetBox's "
            f"{kind} import form; this file has {', '.join(header[:12]) or 'none'})"
        )
    return rows


def _read_types_yaml(f: Path) -> list[dict]:
    """Device types from NetBox's YAML export (one document per type, as in its device-type
    library)."""
    import yaml

    try:
        docs = [d for d in yaml.safe_load_all(_decode(f)) if d is not None]
    except yaml.YAMLError as e:
        raise InputError(
            f"--csv {f.name}: not NetBox's device-type YAML ({str(e).splitlines()[0]})"
        ) from None
    bad = next((d for d in docs if not isinstance(d, dict) or "model" not in d), None)
    if bad is not None:
        raise InputError(f"--csv {f.name}: a document without 'model' ({str(bad)[:80]}): not a device type")
    return docs


def rows_from_folder(folder: str | Path) -> dict[str, list[dict]]:
    """Rows per kind from CSV files named after their kind (``07-racks.csv``, ``racks.csv`` or
    NetBox's own ``netbox_racks.csv``); device types also from NetBox's YAML export of them
    (``netbox_device types.yaml``)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"--csv: '{folder}' is not a folder")
    out: dict[str, list[dict]] = {k: [] for k in KINDS}
    for f in sorted(folder.iterdir()):
        kind = file_kind(f.stem)
        if kind not in out or not f.is_file() or f.is_symlink():
            continue
        if f.suffix == ".csv":
            out[kind] = _read_csv(f, kind)
        elif f.suffix in (".yaml", ".yml") and kind == "device-types":
            out[kind] = _read_types_yaml(f)
    if not out["racks"]:
        raise InputError(f"--csv: '{folder}' holds no racks CSV (racks.csv or NN-racks.csv)")
    return out


def _check_rows(rows: dict[str, list[dict]]) -> None:
    """Every object names what :data:`REQUIRED` asks of its kind."""
    for kind, need in REQUIRED.items():
        for i, r in enumerate(rows.get(kind, [])):
            gone = [c for c in need if _text(r.get(c)).strip() == ""]
            if gone:
                raise InputError(
                    f"{kind}[{i}]: no {', '.join(repr(c) for c in gone)} (every {kind[:-1]} names "
                    f"{' and '.join(need)}); got {', '.join(sorted(map(str, r))[:10]) or 'nothing'}"
                )


OVERLAY_MAPS = ("buildings", "halls", "rows", "power_nodes")
"""Overlay sections that map an ID to the fields to set on it."""


def _check_overlay(ov: dict) -> None:
    """The overlay's shape: ``site`` a mapping, every section of :data:`OVERLAY_MAPS` a mapping of
    IDs to mappings."""
    if not isinstance(ov.get("site") or {}, dict):
        raise InputError(
            f"--overlay site: expected a mapping of site fields, got {type(ov['site']).__name__}"
        )
    for sec in OVERLAY_MAPS:
        v = ov.get(sec) or {}
        if not isinstance(v, dict):
            raise InputError(f"--overlay {sec}: expected a mapping of IDs to fields, got {type(v).__name__}")
        for k, x in v.items():
            if not isinstance(x, dict):
                raise InputError(f"--overlay {sec}.{k}: expected a mapping of fields, got {type(x).__name__}")
    fab = (ov.get("site") or {}).get("fabric")
    if fab is not None and not isinstance(fab, dict):
        raise InputError(f"--overlay site.fabric: expected a mapping, got {type(fab).__name__}")


def _num(v, what: str) -> float | None:
    if v in (None, ""):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        raise InputError(f"{what}: '{v}' is not a number") from None


def _in_range(feed: dict, key: str, top: float, unit: str, n: str) -> float | None:
    """A power feed's electrical figure (None when not stated), refused outside 0 < x ≤ top with
    the unit NetBox keeps it in."""
    x = _num(feed.get(key), f"power feed '{n}' {key}")
    if x is not None and not 0 < x <= top:
        raise InputError(
            f"power feed '{n}': {key} {x:g} is outside 0 < {key} ≤ {top:,g}; NetBox keeps it in {unit}"
        )
    return x


def _index(v) -> int | None:
    """A position index 0..MAX_POSITION from a CSV cell or API value, else None."""
    try:
        f = float(_text(v))
    except ValueError:
        return None
    return int(f) if f.is_integer() and 0 <= f <= MAX_POSITION else None


def _bool(v) -> bool | None:
    if v in (None, ""):
        return None
    return v if isinstance(v, bool) else str(v).strip().lower() in ("true", "1", "yes")


class _Reader:
    def __init__(self, rows: dict[str, list[dict]], overlay: dict, prefix: str) -> None:
        self.rows, self.ov, self.p = rows, overlay or {}, prefix
        self.unmapped: list[str] = []
        self.row_hall: dict[str, str] = {}
        self._halls: dict[str, dict] = {}

    def name(self, v) -> str:
        v = _text(v)
        return v[len(self.p) :] if self.p and v.startswith(self.p) else v

    def mine(self, v) -> bool:
        return not self.p or _text(v).startswith(self.p)

    def places(self) -> tuple[dict[str, str], dict[str, dict]]:
        """hall → building, and the buildings (id → mapping with halls)."""
        locs = [r for r in self.rows["locations"] if self.mine(r.get("name"))]
        has_parent = any(_text(r.get("parent")) for r in locs)
        hall_of: dict[str, str] = {}
        if has_parent:  # campus: top locations are buildings
            for r in locs:
                if _text(r.get("parent")):
                    hall_of[self.name(r["name"])] = self.name(r["parent"])
        else:  # building level: the site is the building
            for r in locs:
                hall_of[self.name(r["name"])] = self.name(r["site"])
        buildings: dict[str, dict] = {}
        for hall, b in hall_of.items():
            bo = buildings.setdefault(b, {"id": b, "power_nodes": [], "halls": []})
            bo["halls"].append({"id": hall, "power_nodes": [], "cooling_zones": [], "pods": [], "rows": []})
        return hall_of, buildings

    def rows_of(self, halls: dict[str, dict]) -> dict[str, dict]:
        by_row: dict[str, list[dict]] = {}
        for r in self.rows["racks"]:
            if not self.mine(r.get("name")):
                continue
            row = _text(r.get("cf_planner_row"))
            if not row or r.get("cf_planner_position") in (None, ""):
                self.unmapped.append(f"rack '{r.get('name')}': no planner_row/planner_position custom field")
                continue
            pos = _index(r.get("cf_planner_position"))
            if pos is None:
                self.unmapped.append(
                    f"rack '{r.get('name')}': planner_position {_text(r.get('cf_planner_position'))[:40]!r} "
                    f"is no position index (a whole number 0..{MAX_POSITION:,})"
                )
                continue
            by_row.setdefault(row, []).append({**r, "cf_planner_position": pos})
        out = {}
        for row_id, racks in by_row.items():
            made = self._row(row_id, racks, halls)
            if made is not None:
                out[row_id] = made
        return out

    def _row(self, row_id: str, racks: list[dict], halls: dict[str, dict]) -> dict | None:
        at = {r["cf_planner_position"]: r for r in racks}
        hall = self.name(racks[0].get("location"))
        if hall not in halls:
            self.unmapped.append(f"row '{row_id}': its racks stand in no known hall location ('{hall}')")
            return None
        n = max(at) + 1
        if sorted(at) != list(range(n)):
            self.unmapped.append(f"row '{row_id}': positions {sorted(set(range(n)) - set(at))} have no rack")
        x0, y0 = (_num(at[min(at)].get(f"cf_planner_{a}_m"), f"rack {row_id} {a}") or 0.0 for a in "xy")
        out: dict = {"id": row_id, "positions": n, "origin_x_m": x0, "origin_y_m": y0}
        if 1 in at and 0 in at:
            x1 = _num(at[1].get("cf_planner_x_m"), "x") or 0.0
            y1 = _num(at[1].get("cf_planner_y_m"), "y") or 0.0
            dx, dy = x1 - x0, y1 - y0
            out["pitch_m"] = round(math.hypot(dx, dy), 6)
            out["direction"] = (
                ("+x" if dx > 0 else "-x") if abs(dx) >= abs(dy) else ("+y" if dy > 0 else "-y")
            )
        self._row_fields(row_id, racks, out)
        reserved = sorted(k for k, r in at.items() if _text(r.get("status")) == "reserved")
        if reserved:
            out["reserved"] = reserved
        out.update((self.ov.get("rows") or {}).get(row_id, {}))
        halls[hall]["rows"].append(out)
        self.row_hall[row_id] = hall
        return out

    def _row_fields(self, row_id: str, racks: list[dict], out: dict) -> None:
        """The row's weight limit and the fields its racks carry (:data:`ROW_FIELDS`)."""
        weights = {_num(r.get("max_weight"), "max_weight") for r in racks} - {None}
        if len(weights) == 1:
            out["max_rack_weight_kg"] = weights.pop()
        elif weights:
            self.unmapped.append(f"row '{row_id}': racks state different max_weight {sorted(weights)}")
        for cf, key in ROW_FIELDS.items():
            seen = {_text(r.get(f"cf_{cf}")) for r in racks}
            if len(seen) > 1:
                self.unmapped.append(f"row '{row_id}': racks disagree on {cf} ({sorted(seen)})")
            v = seen.pop() if len(seen) == 1 else ""
            if key == "feeds":
                out[key] = [f.strip() for f in v.split(",") if f.strip()]
            elif key == "redundant":
                out[key] = bool(_bool(v))
            elif key == "max_rack_power_kw":
                out[key] = _num(v, f"row {row_id} planner_max_kw")
            elif v:
                out[key] = v

    def power(self, hall_of: dict[str, str], buildings: dict, rows: dict[str, dict]) -> None:
        panels = {self.name(r["name"]): r for r in self.rows["power-panels"] if self.mine(r.get("name"))}
        feeds = {  # a feed assigned to a rack is that rack's whip (a pushed plan's), not a power node
            self.name(r["name"]): r
            for r in self.rows["power-feeds"]
            if self.mine(r.get("name")) and not _text(r.get("rack"))
        }
        feed_hall = {f: self.row_hall.get(r["id"], "") for r in rows.values() for f in r.get("feeds", [])}
        nodes: dict[str, dict] = {}
        where: dict[str, str] = {}
        for n, r in panels.items():
            if n in feeds:
                continue
            nodes[n] = self._node(n, r, None)
            where[n] = self.name(r.get("location"))
        for n, r in feeds.items():
            panel = self.name(r.get("power_panel"))
            nodes[n] = self._node(n, panels.get(n, {}), r)
            if panel != n and panel in panels:
                nodes[n]["parent"] = panel
            where[n] = feed_hall.get(n) or self.name(panels.get(panel, {}).get("location"))
        for n, node in nodes.items():
            if node.get("capacity_kw") is None:
                kids = [m for m in nodes.values() if m.get("parent") == n and m.get("capacity_kw")]
                if kids:
                    node["capacity_kw"] = sum(m["capacity_kw"] for m in kids)
                else:
                    self.unmapped.append(f"power node '{n}': no capacity (custom field or feeds)")
                    node["capacity_kw"] = None
            node.update((self.ov.get("power_nodes") or {}).get(n, {}))
            self._place_node(node, where.get(n, ""), hall_of, buildings)

    def _node(self, n: str, panel: dict, feed: dict | None) -> dict:
        out: dict = {"id": n}
        src = {
            **panel,
            **{k: v for k, v in (feed or {}).items() if k.startswith("cf_") and v not in (None, "")},
        }
        kind = _text(src.get("cf_planner_kind")) or ("busway" if feed else "other")
        out["kind"] = kind
        cap = _num(src.get("cf_planner_capacity_kw"), f"power node {n} planner_capacity_kw")
        if feed:
            v = _in_range(feed, "voltage", 100_000, "volts (415 for a 415 V three-phase feed)", n)
            a = _in_range(feed, "amperage", 100_000, "amperes", n)
            util = (_in_range(feed, "max_utilization", 100, "percent (80 for 80 %)", n) or 100) / 100
        if cap is None and feed:
            if v and a:
                three = _text(feed.get("phase")) in ("three-phase", "3-phase", "")
                cap = round(v * a * (math.sqrt(3) if three else 1) * util / 1000, 6)
        out["capacity_kw"] = cap
        derate = _num(src.get("cf_planner_derate"), f"power node {n} planner_derate")
        if derate is not None:
            out["derate"] = derate
        fail = _bool(src.get("cf_planner_can_fail"))
        if fail is not None:
            out["can_fail"] = fail
        parent = _text(src.get("cf_planner_parent"))
        if parent:
            out["parent"] = parent
        return out

    def _place_node(self, node: dict, loc: str, hall_of: dict[str, str], buildings: dict) -> None:
        if loc in self._halls:
            self._halls[loc]["power_nodes"].append(node)
        elif loc in buildings:
            buildings[loc]["power_nodes"].append(node)
        else:
            self.unmapped.append(f"power node '{node['id']}': location '{loc}' is no known building or hall")

    def existing(self, rows: dict[str, dict], hall_of: dict[str, str]) -> list[dict]:
        out = []
        for d in self.rows["devices"]:
            if _text(d.get("status")) != "active" or not self.mine(d.get("name")):
                continue
            rack = self.name(d.get("rack"))
            row_id, _, pos = rack.rpartition("-")
            part = _text(d.get("cf_planner_part"))
            if part not in ("", "0", "0.0"):
                continue
            row = rows.get(row_id)
            if row is None or not pos.isdigit() or not _text(d.get("cf_planner_rack_type")):
                self.unmapped.append(f"device '{d.get('name')}': installed, but not in a known row position")
                continue
            hall = self.row_hall[row_id]
            k = int(pos)
            x, y = _xy(row, k)
            out.append(
                {
                    "building": hall_of[hall],
                    "hall": hall,
                    "row": row_id,
                    "position": k,
                    "x_m": x,
                    "y_m": y,
                    "rack_type": _text(d["cf_planner_rack_type"]),
                    "cluster": _text(d.get("cf_planner_cluster")) or "installed",
                    "cable_length_m": 0.0,
                    "phase": _text(d.get("cf_planner_phase")) or None,
                }
            )
        return out


def _xy(row: dict, k: int) -> tuple[float, float]:
    """Centre (x, y) in m of position k of a row: origin + k · pitch along its direction."""
    try:
        step = float(row.get("pitch_m", 0.6)) * k
        dx, dy = {"+x": (step, 0.0), "-x": (-step, 0.0), "+y": (0.0, step), "-y": (0.0, -step)}[
            row.get("direction", "+x")
        ]
        return round(float(row["origin_x_m"]) + dx, 6), round(float(row["origin_y_m"]) + dy, 6)
    except (TypeError, ValueError, KeyError):
        got = {f: row.get(f) for f in ("pitch_m", "direction", "origin_x_m", "origin_y_m")}
        raise InputError(
            f"row '{row.get('id')}': its geometry (from NetBox or the --overlay rows) is not numbers "
            f"and a direction +x, -x, +y or -y: {got}"
        ) from None


def _site_slug(rows: dict[str, list[dict]], name) -> str:
    return next((_text(s.get("slug")) for s in rows.get("sites", []) if s.get("name") == name), "")


def site_from_rows(
    rows: dict[str, list[dict]], overlay: dict | None = None, prefix: str = "", site: str | None = None
) -> Imported:
    """The site (a mapping the site schema validates) from NetBox rows per kind: by the planner's
    custom fields where its racks carry them (a bundle the planner exported), else the way NetBox
    users keep a site (:mod:`planner.dcim.native`)."""
    _check_rows(rows)
    _check_overlay(overlay or {})
    ours = [
        r
        for r in rows.get("racks", [])
        if (not prefix or _text(r.get("name")).startswith(prefix))
        and (not site or site in (_text(r.get("site")), _site_slug(rows, r.get("site"))))
    ]
    marked = {_text(r.get("site")) for r in ours if _text(r.get("cf_planner_row"))}
    if not marked:
        return native_site(rows, overlay, site)
    unmarked = {_text(r.get("site")) for r in ours if not _text(r.get("cf_planner_row"))} - marked
    if unmarked and not site and not prefix:
        pushed, kept = ", ".join(sorted(marked)[:5]), ", ".join(sorted(unmarked)[:5])
        raise InputError(
            f"--site: NetBox holds plans the planner pushed (in {pushed}) beside sites its users keep "
            f"({kept}); name the one to import with --site NAME, or a pushed plan's --prefix"
        )
    rd = _Reader(rows, overlay or {}, prefix)
    hall_of, buildings = rd.places()
    if not buildings:
        raise InputError(
            "NetBox holds no hall locations" + (f" named with prefix '{prefix}'" if prefix else "")
        )
    halls = {h["id"]: h for b in buildings.values() for h in b["halls"]}
    rd._halls = halls
    rows_made = rd.rows_of(halls)
    rd.power(hall_of, buildings, rows_made)
    ov = rd.ov
    for b_id, extra in (ov.get("buildings") or {}).items():
        if b_id in buildings:
            buildings[b_id].update(extra)
        else:
            rd.unmapped.append(f"overlay building '{b_id}': not in NetBox")
    for h_id, extra in (ov.get("halls") or {}).items():
        if h_id in halls:
            halls[h_id].update(extra)
        else:
            rd.unmapped.append(f"overlay hall '{h_id}': not in NetBox")
    site = {"id": "", **(ov.get("site") or {})}
    if not site["id"]:
        names = {rd.name(r.get("name")) for r in rows["sites"] if rd.mine(r.get("name"))}
        site["id"] = sorted(names)[0] if len(names) == 1 else "netbox-site"
    site["buildings"] = [b for b in buildings.values() if b["halls"]]
    for b in site["buildings"]:
        b["halls"] = [h for h in b["halls"] if h["rows"] or h["power_nodes"]]
    tray = _num(
        ((ov.get("site") or {}).get("fabric") or {}).get("tray_allowance_m"),
        "--overlay site.fabric.tray_allowance_m",
    )
    existing = rd.existing(rows_made, hall_of)
    _cables(existing, halls, rows_made, tray)
    return Imported(site=site, existing=existing, unmapped=rd.unmapped)


def _cables(existing: list[dict], halls: dict[str, dict], rows: dict[str, dict], tray: float | None) -> None:
    """An installed rack's cable length to its pod's network rack: |Δx| + |Δy| + tray allowance."""
    pods = {
        str(p.get("id")): p
        for h in halls.values()
        for p in (h.get("pods") if isinstance(h.get("pods"), list) else [])
        if isinstance(p, dict) and isinstance(p.get("network_rack"), dict)
    }
    for e in existing:
        pod = pods.get(str(rows[e["row"]].get("pod", "")))
        at = _index(pod["network_rack"].get("position")) if pod else None
        if pod is None or pod["network_rack"].get("row") not in rows or at is None:
            continue  # the schema's check of the overlay's pods says what is wrong
        px, py = _xy(rows[pod["network_rack"]["row"]], at)
        e["cable_length_m"] = round(
            abs(e["x_m"] - px) + abs(e["y_m"] - py) + (3.0 if tray is None else tray), 6
        )


def overlay_of(site) -> dict:
    """The overlay a site needs beside its NetBox objects (what NetBox cannot hold): written by
    the export so that export → NetBox → import gives the same site back."""
    s = site.model_dump(mode="json", exclude_defaults=True)
    out: dict = {"site": {k: v for k, v in s.items() if k not in ("buildings",)}}
    out["buildings"], out["halls"], out["rows"], out["power_nodes"] = {}, {}, {}, {}
    for b in s["buildings"]:
        extra = {k: v for k, v in b.items() if k not in ("id", "halls", "power_nodes")}
        if extra:
            out["buildings"][b["id"]] = extra
        for n in b.get("power_nodes", []):
            _node_extra(out, n)
        for h in b["halls"]:
            extra = {k: v for k, v in h.items() if k not in ("id", "rows", "power_nodes")}
            if extra:
                out["halls"][h["id"]] = extra
            for n in h.get("power_nodes", []):
                _node_extra(out, n)
            for r in h.get("rows", []):
                extra = {k: v for k, v in r.items() if k in ("depth_m", "online_phase", "network")}
                if extra:
                    out["rows"][r["id"]] = extra
    return {k: v for k, v in out.items() if v}


def _node_extra(out: dict, n: dict) -> None:
    extra = {k: v for k, v in n.items() if k == "online_phase"}
    if extra:
        out["power_nodes"][n["id"]] = extra
