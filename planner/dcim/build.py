"""The site a NetBox holds, assembled by the rules of :mod:`planner.dcim.native`: rows and
their feeds, panels as power nodes, installed racks with their load, and the defaults for what
NetBox cannot hold (floor area, cooling, pods), each named in :attr:`Imported.defaults`."""

from __future__ import annotations

from planner.dcim.native import (
    DEPTH_M,
    FLOOR_SHARE,
    INSTALLED_KG,
    NOT_INSTALLED,
    PITCH_M,
    Native,
    ident,
)
from planner.dcim.rows import Imported, num, text, weight_kg
from planner.errors import InputError

POD_GPUS = 1_000_000
"""A default pod's GPU limit: none in practice (NetBox holds no network design; give pods in the
overlay)."""


def native_site(
    rows: dict[str, list[dict]], overlay: dict | None = None, site: str | None = None
) -> Imported:
    """The site mapping, installed racks and their rack types from a NetBox kept without the
    planner's custom fields (:mod:`planner.dcim.native`)."""
    nv = Native(rows, overlay or {}, site)
    layout = nv.layout()
    if not layout:
        raise InputError(f"--site: NetBox site '{nv.site.get('name')}' holds no racks")
    feeds = nv.feeds()
    loads = _installed(nv)
    b = _Builder(nv, feeds, loads)
    for row_id, row in layout.items():
        b.row(row_id, row)
    b.finish()
    site_map = {"id": nv.sid, **(nv.ov.get("site") or {}), "buildings": list(b.buildings.values())}
    return Imported(
        site=site_map,
        existing=b.existing,
        unmapped=nv.unmapped,
        rack_types=b.types,
        defaults=nv.defaults,
    )


def _installed(nv: Native) -> dict[str, dict]:
    """Rack name → {kw, kg, what} of the devices standing in it (power ports' allocated draw,
    else maximum draw, W; weights of its device types in kg)."""
    names = {text(r.get("name")) for r in nv.racks}
    types = {text(t.get("model")): t for t in nv.rows.get("device-types", [])}
    ports: dict[str, list[dict]] = {}
    for p in nv.rows.get("power-ports", []):
        key = text(p.get("device_id")) or text(p.get("device"))
        ports.setdefault(key, []).append(p)
    out: dict[str, dict] = {}
    silent: list[str] = []
    for d in nv.rows.get("devices", []):
        rack = text(d.get("rack"))
        if rack not in names or text(d.get("status")) in NOT_INSTALLED:
            continue
        what = text(d.get("name")) or f"{d.get('device_type')} ({d.get('id')})"
        got = ports.get(text(d.get("id")), []) or (
            ports.get(text(d.get("name")), []) if d.get("name") else []
        )
        w = 0.0
        for p in got:
            a = num(p.get("allocated_draw"), f"power port '{p.get('name')}' of {what} allocated_draw")
            m = num(p.get("maximum_draw"), f"power port '{p.get('name')}' of {what} maximum_draw")
            w += a if a else m or 0.0
        if not w:
            silent.append(f"{what} in {rack}")
        t = types.get(text(d.get("device_type")), {})
        kg = weight_kg(t.get("weight"), t.get("weight_unit"), f"device type '{t.get('model')}' weight") or 0.0
        slot = out.setdefault(rack, {"kw": 0.0, "kg": 0.0, "what": []})
        slot["kw"] += w / 1000
        slot["kg"] += kg
        slot["what"].append(what)
    if silent:
        nv.defaults.append(
            f"{len(silent)} installed device(s) state no draw on any power port (allocated or maximum): "
            f"0 W counted for {', '.join(silent[:12])}{' …' if len(silent) > 12 else ''}"
        )
    return out


class _Builder:
    def __init__(self, nv: Native, feeds: dict, loads: dict) -> None:
        self.nv, self.feeds, self.loads = nv, feeds, loads
        self.buildings: dict[str, dict] = {}
        self.halls: dict[str, dict] = {}
        self.nodes: dict[str, dict] = {}
        self.panel_kw: dict[str, float] = {}
        self.panel_home: dict[str, str] = {}
        self.hall_kw: dict[str, float] = {}
        self.existing: list[dict] = []
        self.types: list[dict] = []
        self.weightless: list[str] = []

    def hall(self, hall: str) -> dict:
        hid, bid = self.nv.hall_id(hall), self.nv.building_of(hall)
        if hid not in self.halls:
            b = self.buildings.setdefault(bid, {"id": bid, "power_nodes": [], "halls": []})
            h = {"id": hid, "power_nodes": [], "cooling_zones": [], "pods": [], "rows": [], "_building": bid}
            b["halls"].append(h)
            self.halls[hid] = h
        return self.halls[hid]

    def row(self, row_id: str, row: dict) -> None:
        h = self.hall(row["hall"])
        racks = row["racks"]
        out = {
            "id": row_id,
            "positions": len(racks),
            "origin_x_m": 0.0,
            "origin_y_m": round(len(h["rows"]) * DEPTH_M, 6),
            "pitch_m": _pitch(racks),
            "direction": "+x",
            "depth_m": DEPTH_M,
            "air_zone": f"{h['id']}-air",
            "pod": f"{h['id']}-pod",
        }
        limits = [
            weight_kg(r.get("max_weight"), r.get("weight_unit"), f"rack '{r.get('name')}' max_weight")
            for r in racks
        ]
        limits = [x for x in limits if x]
        self._power(out, racks, h)
        if not out.get("feeds"):
            self.nv.unmapped.append(
                f"row '{row_id}': no power feed is assigned to any of its racks (PowerFeed.rack)"
            )
            return
        if limits:
            out["max_rack_weight_kg"] = min(limits)
        else:
            self.nv.defaults.append(
                f"row '{row_id}': its racks state no weight limit (max_weight; NetBox 4.7's CSV export "
                "leaves it empty: read the API to keep it): 1,400 kg, the site schema's default"
            )
        for i, r in enumerate(racks):
            name = text(r.get("name"))
            if name in self.loads:
                self._existing(h, out, i, r, self.loads[name])
        out.update((self.nv.ov.get("rows") or {}).get(row_id, {}))
        h["rows"].append(out)

    def _power(self, out: dict, racks: list[dict], h: dict) -> None:
        caps, redundant, reserved, ids = [], True, [], []
        for i, r in enumerate(racks):
            name = text(r.get("name"))
            fs = self.feeds.get(name, [])
            if text(r.get("status")) == "reserved" and name not in self.loads:
                reserved.append(i)
            if not fs:
                if name not in self.loads and i not in reserved:
                    reserved.append(i)
                    self.nv.unmapped.append(
                        f"rack '{name}': no power feed assigned to it: its position is reserved"
                    )
                continue
            usable = []
            for nid, f in fs:
                node = self.nodes.get(nid) or self.nv.feed_node(nid, f)
                if nid not in self.nodes:
                    self.nodes[nid] = node
                    h["power_nodes"].append(node)
                    kw = node["capacity_kw"] * node["derate"]
                    self.panel_kw[node["parent"]] = self.panel_kw.get(node["parent"], 0.0) + kw
                    self.panel_home.setdefault(node["parent"], h["_building"])
                    self.hall_kw[h["id"]] = self.hall_kw.get(h["id"], 0.0) + kw
                ids.append(nid)
                usable.append(node["capacity_kw"] * node["derate"])
            sides = {text(f.get("type")) or "primary" for _, f in fs}
            two = {"primary", "redundant"} <= sides
            redundant = redundant and two
            caps.append(min(usable) if two else sum(usable))
        if not ids:
            return
        out["feeds"] = list(dict.fromkeys(ids))
        out["redundant"] = redundant
        out["max_rack_power_kw"] = round(min(caps), 6)
        self._cooling(out, racks)
        if len(set(round(c, 6) for c in caps)) > 1:
            self.nv.defaults.append(
                f"row '{out['id']}': its racks' feeds allow {min(caps):g} to {max(caps):g} kW: every rack "
                f"of the row may draw the least, {min(caps):g} kW"
            )
        if reserved:
            out["reserved"] = sorted(set(reserved))

    def _cooling(self, out: dict, racks: list[dict]) -> None:
        """NetBox 4.7's rack cooling capacity (kW): a rack sheds no more heat than it states, so
        the row's racks draw no more than the least stated; its cooling capability is not mapped."""
        cool = [num(r.get("cooling_capacity"), f"rack '{r.get('name')}' cooling_capacity") for r in racks]
        cool = [c for c in cool if c]
        if cool and min(cool) < out["max_rack_power_kw"]:
            self.nv.defaults.append(
                f"row '{out['id']}': its racks' cooling capacity, {min(cool):g} kW, is below what their "
                f"feeds allow ({out['max_rack_power_kw']:g} kW): a rack may draw {min(cool):g} kW"
            )
            out["max_rack_power_kw"] = round(min(cool), 6)
        kinds = sorted({text(r.get("cooling_capability")) for r in racks} - {"", "air-only"})
        if kinds:
            self.nv.unmapped.append(
                f"row '{out['id']}': cooling capability {', '.join(kinds)} is not mapped (the hall's air "
                "zone cools it; give liquid loops in the overlay's rows)"
            )

    def _existing(self, h: dict, row: dict, i: int, r: dict, load: dict) -> None:
        rid = ident(r.get("name"))
        kg = load["kg"] + (
            weight_kg(r.get("weight"), r.get("weight_unit"), f"rack '{r.get('name')}' weight") or 0.0
        )
        if kg <= 0:
            kg = INSTALLED_KG
            self.weightless.append(text(r.get("name")))
        tid = f"installed-{rid}"[:64]
        u = num(r.get("u_height"), f"rack '{r.get('name')}' u_height")
        self.types.append(
            {
                "id": tid,
                "kind": "network",
                "description": f"installed in NetBox: {', '.join(load['what'])}"[:500],
                "overhead_power_kw": round(load["kw"], 6),
                "weight_kg": round(kg, 6),
                "height_u": int(u) if u and 0 < u <= 100 else 42,
                "capex_usd": 0,
            }
        )
        x, y = row["origin_x_m"] + i * row["pitch_m"], row["origin_y_m"]
        self.existing.append(
            {
                "building": h["_building"],
                "hall": h["id"],
                "row": row["id"],
                "position": i,
                "x_m": round(x, 6),
                "y_m": round(y, 6),
                "rack_type": tid,
                "cluster": "installed",
                "cable_length_m": 0.0,
            }
        )

    def _free(self, h: dict) -> tuple[str, int]:
        """The hall's first position that is neither installed nor reserved."""
        held = {(e["row"], e["position"]) for e in self.existing}
        for r in h["rows"]:
            for k in range(r["positions"]):
                if (r["id"], k) not in held and k not in r.get("reserved", []):
                    return r["id"], k
        return h["rows"][0]["id"], 0

    def cables(self) -> None:
        """An installed rack's cable length to its pod's network rack: |Δx| + |Δy| + the tray
        allowance (the overlay's fabric, else the site schema's 3 m)."""
        fab = (self.nv.ov.get("site") or {}).get("fabric") or {}
        tray = num(fab.get("tray_allowance_m"), "--overlay site.fabric.tray_allowance_m")
        tray = 3.0 if tray is None else tray
        rows = {r["id"]: r for h in self.halls.values() for r in h["rows"]}
        pods = {
            p.get("id"): p for h in self.halls.values() for p in h.get("pods") or [] if isinstance(p, dict)
        }
        for e in self.existing:
            pod = pods.get(rows[e["row"]].get("pod"))
            at = (pod or {}).get("network_rack") or {}
            row = rows.get(at.get("row"))
            if row is None or not isinstance(at.get("position"), int):
                continue  # the site check names the overlay's pod that is wrong
            px = row["origin_x_m"] + at["position"] * row["pitch_m"]
            e["cable_length_m"] = round(abs(e["x_m"] - px) + abs(e["y_m"] - row["origin_y_m"]) + tray, 6)

    def finish(self) -> None:
        """Panels as root nodes, and each hall's floor area, air zone and pod (overlay, else the
        defaults, each named)."""
        ovp = self.nv.ov.get("power_nodes") or {}
        panels = {text(p.get("name")): p for p in self.nv.rows.get("power-panels", [])}
        for pid, kw in self.panel_kw.items():
            p = next((q for n, q in panels.items() if ident(n) == pid), {})
            cap = num(p.get("cf_planner_capacity_kw"), f"power panel '{pid}' planner_capacity_kw")
            node = {"id": pid, "kind": "other", "capacity_kw": cap or round(kw, 6), "derate": 1.0}
            if cap is None and "capacity_kw" not in ovp.get(pid, {}):
                self.nv.defaults.append(
                    f"power panel '{pid}': NetBox states no capacity: the sum of its feeds, {kw:,.2f} kW"
                )
            node.update(ovp.get(pid, {}))
            self.buildings[self.panel_home[pid]]["power_nodes"].append(node)
        for n in self.nodes.values():
            n.update(ovp.get(n["id"], {}))
        for bid, b in self.buildings.items():
            b.update((self.nv.ov.get("buildings") or {}).get(bid, {}))
        for hid, h in self.halls.items():
            self._hall(hid, h)
        for b in self.buildings.values():
            b["halls"] = [h for h in b["halls"] if h["rows"]]
        self.buildings = {k: b for k, b in self.buildings.items() if b["halls"]}
        self.cables()
        if self.weightless:
            more = " …" if len(self.weightless) > 12 else ""
            self.nv.defaults.append(
                f"{len(self.weightless)} installed rack(s) whose rack and devices state no weight: "
                f"{INSTALLED_KG:g} kg each ({', '.join(self.weightless[:12])}{more})"
            )

    def _hall(self, hid: str, h: dict) -> None:
        h.pop("_building")
        ov = (self.nv.ov.get("halls") or {}).get(hid, {})
        if "floor_area_m2" not in ov and h["rows"]:
            area = sum(r["positions"] * r["pitch_m"] * r["depth_m"] for r in h["rows"]) / FLOOR_SHARE
            h["floor_area_m2"] = round(area, 3)
            self.nv.defaults.append(
                f"hall '{hid}': floor area {area:,.1f} m² (its rows' positions take {FLOOR_SHARE:.0%} of it; "
                "give floor_area_m2 in the overlay)"
            )
        if "cooling_zones" not in ov and h["rows"]:
            kw = max(self.hall_kw.get(hid, 0.0), 1.0)
            h["cooling_zones"] = [
                {"id": f"{hid}-air", "medium": "air", "units": 1, "unit_capacity_kw": round(kw, 6)}
            ]
            self.nv.defaults.append(
                f"hall '{hid}': one air zone of {kw:,.2f} kW, what its feeds deliver (give cooling_zones in "
                "the overlay)"
            )
        if "pods" not in ov and h["rows"]:
            row, pos = self._free(h)
            h["pods"] = [
                {
                    "id": f"{hid}-pod",
                    "network_rack": {"row": row, "position": pos},
                    "max_gpus": POD_GPUS,
                    "network_rack_type": None,
                }
            ]
            self.nv.defaults.append(
                f"hall '{hid}': one pod, its network rack at {row} position {pos} (the first free position; "
                "its switches' load is not counted: give pods in the overlay)"
            )
        h.update(ov)


def _pitch(racks: list[dict]) -> float:
    """The row's pitch: its racks' outer width (mm or in) where all state one, else PITCH_M."""
    widths = set()
    for r in racks:
        w = num(r.get("outer_width"), f"rack '{r.get('name')}' outer_width")
        if w is None:
            return PITCH_M
        unit = text(r.get("outer_unit")).lower()
        widths.add(round(w * (0.0254 if unit in ("in", "inches") else 0.001), 6))
    return max(widths)
