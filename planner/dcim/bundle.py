"""A plan as a NetBox bundle (SPEC §20): every object NetBox needs, in its import order, so the
bundle loads whole into an empty NetBox and a second load updates what the first made.

Objects and names (``P`` is the ``prefix`` that keeps two plans of one site apart):

- custom fields ``planner_*`` (:data:`CUSTOM_FIELDS`): what NetBox has no field for (a rack's row,
  position, x/y, pod, zones, feeds; a power node's kind, capacity and parent; a device's cluster);
- sites and locations: ``campus`` level (default) makes the site ``P<site>`` with a location per
  building ``P<building>`` and one per hall ``P<hall>`` under it; ``building`` level makes each
  building a site and its halls locations;
- manufacturers (the catalog's, ``generic`` when it names none), device types (model = rack type
  ID, a unit's part ``<type>/<n>-<role>``, a fabric design's network rack; rack units, weight in
  kg), device roles (``gpu``, ``storage``, ``network``, a unit's part roles);
- racks: one per position of every row, ``P<row>-<position>`` (two digits), status ``reserved``
  for a reserved position, ``active`` where an installed rack stands, ``planned`` where the plan
  puts one, ``available`` else; max weight from the row;
- power panels (every power node) and power feeds (every node a row draws from; volts 415,
  three-phase, amperes and utilisation that give the node's kW: kW = V·A·√3·util);
- devices: one per position taken, named like its rack, at U1 front: GPU and storage racks, the
  pods' network racks, the designed fabrics' network racks, and each position of a multi-rack unit
  as its own device of that part's type.

:func:`bundle` builds the objects once; :func:`csv_files` renders them for NetBox's bulk import
forms (references by name) and :func:`api_payload` for its REST API (references as nested
attribute lookups, custom fields in ``custom_fields``). :mod:`planner.dcim.push` loads
either into a running NetBox, creating or updating by natural key.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass, field

from planner.cells import safe_rows
from planner.plan import Plan
from planner.schema import Scenario

VOLTS = 415
"""Feed voltage, V (three-phase 415/240 V distribution); amperes are derived from a node's kW."""

LEVELS = ("campus", "building")

KINDS = (
    "custom-fields",
    "sites",
    "locations",
    "manufacturers",
    "device-types",
    "device-roles",
    "racks",
    "power-panels",
    "power-feeds",
    "devices",
    "power-ports",
    "cables",
)
"""Object kinds in NetBox's import order (each refers only to kinds before it)."""

ENDPOINTS = {
    "custom-fields": "extras/custom-fields",
    "sites": "dcim/sites",
    "locations": "dcim/locations",
    "manufacturers": "dcim/manufacturers",
    "device-types": "dcim/device-types",
    "device-roles": "dcim/device-roles",
    "racks": "dcim/racks",
    "power-panels": "dcim/power-panels",
    "power-feeds": "dcim/power-feeds",
    "devices": "dcim/devices",
    "power-ports": "dcim/power-ports",
    "cables": "dcim/cables",
}
"""REST API path (after ``/api/``) and bulk import form (``/<path>/import/``) per kind."""

RACK, PANEL, FEED, DEVICE = "dcim.rack", "dcim.powerpanel", "dcim.powerfeed", "dcim.device"
CUSTOM_FIELDS: list[tuple[str, str, tuple[str, ...], str]] = [
    ("planner_row", "text", (RACK,), "Row of the position"),
    ("planner_position", "integer", (RACK,), "Position in its row (0 first)"),
    ("planner_x_m", "decimal", (RACK,), "Position centre x, m"),
    ("planner_y_m", "decimal", (RACK,), "Position centre y, m"),
    ("planner_pod", "text", (RACK,), "Network pod of the row"),
    ("planner_air_zone", "text", (RACK,), "Air cooling zone of the row"),
    ("planner_liquid_loop", "text", (RACK,), "Liquid loop of the row (empty: none)"),
    ("planner_max_kw", "decimal", (RACK,), "Row's largest rack power, kW"),
    ("planner_feeds", "text", (RACK,), "Power nodes the row draws from, comma-separated"),
    ("planner_redundant", "boolean", (RACK,), "Whether the row's feeds are redundant (2N)"),
    ("planner_kind", "text", (PANEL,), "Power node kind (utility, ups, busway …)"),
    ("planner_capacity_kw", "decimal", (PANEL, FEED), "Power node capacity, kW"),
    ("planner_derate", "decimal", (PANEL,), "Share of capacity usable (empty: 1)"),
    ("planner_parent", "text", (PANEL,), "Upstream power node"),
    ("planner_can_fail", "boolean", (PANEL,), "Whether the node counts in single failures"),
    ("planner_cluster", "text", (DEVICE,), "Cluster the rack serves"),
    ("planner_phase", "text", (DEVICE,), "Phase the rack arrives in"),
    ("planner_rack_type", "text", (DEVICE,), "Catalog rack type (a unit's whole type)"),
    ("planner_part", "integer", (DEVICE,), "Position within a multi-rack unit (0 first)"),
]
"""(name, type, object types, description) of the custom fields the bundle uses."""

CUSTOM_FIELD_FORM = {"search_weight": 1000, "filter_logic": "loose", "weight": 100}
"""Columns NetBox 4.7's custom-field import form requires (its defaults: search weight 1000, loose
filtering, display weight 100)."""

NETWORK_RACK_KG = 900.0
"""Weight of a designed fabric's network rack as a device type, kg (the plan states none; a 42 U
rack of ~16 switches at ~25 kg with optics and cabling, ~900 kg, an estimate)."""

ROLE_COLORS = {"gpu": "4caf50", "storage": "2196f3", "network": "ff9800"}


@dataclass
class Bundle:
    """Objects per kind, each a mapping of field → value with references by name
    (``site``, ``location``, ``manufacturer``, ``device_type``, ``role``, ``rack``,
    ``power_panel``) and custom fields as ``cf_<name>``."""

    objects: dict[str, list[dict]] = field(default_factory=lambda: {k: [] for k in KINDS})

    def counts(self) -> dict[str, int]:
        return {k: len(v) for k, v in self.objects.items()}


def slug(name: str) -> str:
    """A NetBox slug (letters, digits, ``-``, ``_``; ≤ 100 characters) for ``name``."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", name).lower()[:100]


def rack_name(prefix: str, row: str, position: int) -> str:
    return f"{prefix}{row}-{position:02d}"


def _amps(kw: float) -> int:
    """Amperes of a 415 V three-phase feed at 100 % utilisation carrying ``kw``: ⌈kW·1000 / (V·√3)⌉."""
    return max(1, math.ceil(kw * 1000 / (VOLTS * math.sqrt(3)) - 1e-9))


class _Builder:
    def __init__(self, plan: Plan, scenario: Scenario, prefix: str, level: str, whips: bool = True) -> None:
        self.plan, self.scenario, self.p, self.level, self.whips = plan, scenario, prefix, level, whips
        self.b = Bundle()
        self.types = scenario.catalog.by_id()
        self.site = scenario.site
        self.hall_home: dict[str, tuple[str, str]] = {}  # hall → (NetBox site, location)
        self.taken: dict[tuple[str, int], dict] = {}  # (row, position) → device
        self.kw: dict[tuple[str, int], tuple[float, float]] = {}  # (row, position) → (planning, nameplate) kW
        self.device_types: dict[str, dict] = {}
        self.roles: dict[str, dict] = {}
        self.makers: dict[str, str] = {}  # slug → the manufacturer's name (first seen stands)
        self.designs = {d.id: d for d in scenario.fabrics}
        self.height = max(
            [42, *(t.height_u for t in self.types.values()), *(d.rack_units for d in scenario.fabrics)]
        )

    def add(self, kind: str, row: dict) -> None:
        self.b.objects[kind].append(row)

    def build(self) -> Bundle:
        self._custom_fields()
        self._places()
        self._devices()
        for key, m in sorted(self.makers.items()):
            self.add("manufacturers", {"name": m, "slug": key})
        self.b.objects["device-types"] = list(self.device_types.values())
        self.b.objects["device-roles"] = list(self.roles.values())
        self._racks()
        self._power()
        self.b.objects["devices"] = [self.taken[k] for k in sorted(self.taken)]
        if self.whips:
            self._whips()
        return self.b

    def _custom_fields(self) -> None:
        for name, kind, objs, text in CUSTOM_FIELDS:
            self.add(
                "custom-fields",
                {
                    "name": name,
                    "label": name,
                    "type": kind,
                    "object_types": list(objs),
                    "description": text,
                    **CUSTOM_FIELD_FORM,
                },
            )

    def _places(self) -> None:
        p, s = self.p, self.site
        if self.level == "campus":
            self.add("sites", {"name": f"{p}{s.id}", "slug": slug(f"{p}{s.id}"), "status": "planned"})
        for b in s.buildings:
            home = f"{p}{b.id}" if self.level == "building" else f"{p}{s.id}"
            if self.level == "building":
                self.add("sites", {"name": home, "slug": slug(home), "status": "planned"})
            else:
                self.add("locations", self._loc(home, f"{p}{b.id}", None, "building"))
            for h in b.halls:
                parent = None if self.level == "building" else f"{p}{b.id}"
                self.add("locations", self._loc(home, f"{p}{h.id}", parent, "hall"))
                self.hall_home[h.id] = (home, f"{p}{h.id}")

    @staticmethod
    def _loc(site: str, name: str, parent: str | None, what: str) -> dict:
        return {
            "site": site,
            "parent": parent or "",
            "name": name,
            "slug": slug(name),
            "status": "planned",
            "description": what,
        }

    def _type(self, model: str, maker: str, height: int, weight: float, what: str) -> None:
        maker = self.makers.setdefault(slug(maker or "generic"), maker or "generic")  # NVIDIA is Nvidia
        if model not in self.device_types:
            taken = {d["slug"] for d in self.device_types.values()}
            key, n = slug(model), 1
            while key in taken:  # "a/b" and "A-B" are two models with one slug: the second is numbered
                n += 1
                key = f"{slug(model)[:95]}-{n}"
            self.device_types[model] = {
                "manufacturer": maker,
                "model": model,
                "slug": key,
                "u_height": height,
                "is_full_depth": True,
                "weight": round(weight, 2),
                "weight_unit": "kg",
                "description": what,
            }

    def _role(self, name: str) -> str:
        """The device role named ``name``, made once per slug: NetBox holds role names and slugs
        unique regardless of case, so a unit's part role ``GPU`` is the rack role ``gpu`` (the
        first name seen stands). Returns the name the devices use."""
        key = slug(name)
        if key not in self.roles:
            self.roles[key] = {"name": name, "slug": key, "color": ROLE_COLORS.get(name.lower(), "9e9e9e")}
        return self.roles[key]["name"]

    def _device(self, row_id: str, position: int, model: str, role: str, extra: dict, kw: tuple) -> None:
        """The device standing in a rack; ``kw`` its (planning, nameplate) kW, drawn through its
        two power ports from the rack's two whips (:meth:`_whips`)."""
        self.kw[row_id, position] = kw
        hall = self.rows[row_id][1]
        site, loc = self.hall_home[hall]
        name = rack_name(self.p, row_id, position)
        status = extra.pop("status", "planned")
        self.taken[row_id, position] = {
            "name": name,
            "role": role,
            "manufacturer": self.device_types[model]["manufacturer"],
            "device_type": model,
            "status": status,
            "site": site,
            "location": loc,
            "rack": name,
            "position": 1,
            "face": "front",
            "description": extra.pop("description", ""),
            **{f"cf_{k}": v for k, v in extra.items()},
        }

    def _devices(self) -> None:
        self.rows = {r.id: (r, h.id) for b in self.site.buildings for h in b.halls for r in h.rows}
        for r in self.plan.racks:
            self._placed(r)
        for b in self.site.buildings:
            for h in b.halls:
                for pod in h.pods:
                    t = self.types.get(pod.network_rack_type) if pod.network_rack_type else None
                    if t is None:
                        continue
                    self._type(t.id, t.manufacturer, min(t.height_u, self.height), t.weight_kg, t.description)
                    self._role("network")
                    loc = pod.network_rack
                    self._device(
                        loc.row,
                        loc.position,
                        t.id,
                        "network",
                        {"description": f"pod {pod.id} network rack"},
                        self._kw(t),
                    )
        for n in self.plan.network_racks:
            model = f"{n.design} network rack"
            units = self.designs[n.design].rack_units if n.design in self.designs else self.height
            self._type(model, "generic", min(units, self.height), NETWORK_RACK_KG, f"fabric {n.design} rack")
            self._role("network")
            switches = ", ".join(f"{s.count}× {s.model} (tier {s.tier})" for s in n.switches)
            self._device(
                n.row,
                n.position,
                model,
                "network",
                {"description": f"{n.design}: {switches}"[:200], "planner_cluster": n.cluster},
                (n.kw, n.kw),
            )

    def _placed(self, r) -> None:
        t = self.types[r.rack_type]
        role = "gpu" if t.gpus else str(t.kind)
        what = f"cluster {r.cluster}" + (f", phase {r.phase}" if r.phase else "")
        base = {
            "status": "active" if r.existing else "planned",
            "description": what,
            "planner_cluster": r.cluster,
            "planner_phase": r.phase or "",
            "planner_rack_type": t.id,
        }
        if not t.parts:
            self._type(t.id, t.manufacturer, min(t.height_u, self.height), t.weight_kg, t.description)
            self._device(r.row, r.position, t.id, self._role(role), base, self._kw(t))
            return
        for i, part in enumerate(t.parts):
            model = f"{t.id}/{i + 1}-{part.role}"
            self._type(
                model, t.manufacturer, min(t.height_u, self.height), part.weight_kg, f"{t.id}: {part.role}"
            )
            kw = tuple(x * part.power_share for x in self._kw(t))
            self._device(r.row, r.position + i, model, self._role(part.role), {**base, "planner_part": i}, kw)

    def _kw(self, t) -> tuple[float, float]:
        """A rack type's (planning, nameplate) kW under the scenario."""
        cap = self.scenario.gpu_power_cap_w
        return self.scenario.rack_power_kw(t), t.nameplate_power_kw(cap)

    def _whips(self) -> None:
        """Each rack holding a device gets two whips (power feeds ``<rack>-A`` and ``-B``, assigned
        to the rack, under the panels of its row's first and last feed; each rated for the row's
        rack limit), its device two power ports (``PSU-A``/``PSU-B``, half its planning kW
        allocated, half its nameplate kW maximum) and a cable from each port to its whip: NetBox's
        rack power utilisation then shows the plan's load."""
        nodes = {n.id: n for b in self.site.buildings for n in b.power_nodes}
        nodes |= {n.id: n for b in self.site.buildings for h in b.halls for n in h.power_nodes}
        for (row_id, k), dev in sorted(self.taken.items()):
            row = self.rows[row_id][0]
            plan_kw, max_kw = self.kw[row_id, k]
            for side, node_id in (("A", row.feeds[0]), ("B", row.feeds[-1])):
                n = nodes[node_id]
                panel, feed = f"{self.p}{n.parent or n.id}", f"{dev['rack']}-{side}"
                self.add(
                    "power-feeds",
                    {
                        "site": dev["site"],
                        "power_panel": panel,
                        "location": dev["location"],
                        "rack": dev["rack"],
                        "name": feed,
                        "status": "active" if dev["status"] == "active" else "planned",
                        "type": "redundant" if side == "B" and row.redundant else "primary",
                        "supply": "ac",
                        "phase": "three-phase",
                        "voltage": VOLTS,
                        "amperage": _amps(row.max_rack_power_kw),
                        "max_utilization": 100,
                        "cf_planner_capacity_kw": row.max_rack_power_kw,
                    },
                )
                port = f"PSU-{side}"
                self.add(
                    "power-ports",
                    {
                        "device": dev["name"],
                        "name": port,
                        "maximum_draw": max(1, round(max_kw * 500)),
                        "allocated_draw": max(1, round(plan_kw * 500)),
                    },
                )
                self.add(
                    "cables",
                    {
                        "side_a_site": dev["site"],
                        "side_a_device": dev["name"],
                        "side_a_type": "dcim.powerport",
                        "side_a_name": port,
                        "side_b_site": dev["site"],
                        "side_b_power_panel": panel,
                        "side_b_type": "dcim.powerfeed",
                        "side_b_name": feed,
                        "status": "planned",
                    },
                )

    def _racks(self) -> None:
        for b in self.site.buildings:
            for h in b.halls:
                site, loc = self.hall_home[h.id]
                for row in h.rows:
                    for k in range(row.positions):
                        self.add("racks", self._rack(site, loc, row, k))

    def _rack(self, site: str, loc: str, row, k: int) -> dict:
        dev = self.taken.get((row.id, k))
        status = "reserved" if k in row.reserved else "available"
        if dev is not None:
            status = "active" if dev["status"] == "active" else "planned"
        x, y = row.position_xy(k)
        return {
            "site": site,
            "location": loc,
            "name": rack_name(self.p, row.id, k),
            "status": status,
            "width": 19,
            "u_height": self.height,
            "max_weight": int(round(row.max_rack_weight_kg)),
            "weight_unit": "kg",
            # NetBox 4.7's rack cooling: a position sheds what it may draw (all power ends as heat,
            # §5), through air, or air and the row's liquid loop
            "cooling_capability": "hybrid" if row.liquid_loop else "air-only",
            "cooling_capacity": row.max_rack_power_kw,
            "cf_planner_row": row.id,
            "cf_planner_position": k,
            "cf_planner_x_m": round(x, 3),
            "cf_planner_y_m": round(y, 3),
            "cf_planner_pod": row.pod,
            "cf_planner_air_zone": row.air_zone,
            "cf_planner_liquid_loop": row.liquid_loop or "",
            "cf_planner_max_kw": row.max_rack_power_kw,
            "cf_planner_feeds": ",".join(row.feeds),
            "cf_planner_redundant": row.redundant,
        }

    def _power(self) -> None:
        fed = {f for r, _ in self.rows.values() for f in r.feeds}
        for b in self.site.buildings:
            home = f"{self.p}{b.id}" if self.level == "building" else f"{self.p}{self.site.id}"
            b_loc = "" if self.level == "building" else f"{self.p}{b.id}"
            nodes = [(n, home, b_loc) for n in b.power_nodes]
            nodes += [(n, *self.hall_home[h.id]) for h in b.halls for n in h.power_nodes]
            for n, site, loc in nodes:
                self.add("power-panels", self._panel(n, site, loc))
            for n, site, loc in nodes:
                if n.id in fed:
                    self.add("power-feeds", self._feed(n, site, loc))

    def _panel(self, n, site: str, loc: str) -> dict:
        return {
            "site": site,
            "location": loc,
            "name": f"{self.p}{n.id}",
            "description": f"{n.kind} {n.capacity_kw:g} kW",
            "cf_planner_kind": str(n.kind),
            "cf_planner_capacity_kw": n.capacity_kw,
            "cf_planner_derate": n.derate if n.derate is not None else "",
            "cf_planner_parent": n.parent or "",
            "cf_planner_can_fail": n.can_fail,
        }

    def _feed(self, n, site: str, loc: str) -> dict:
        redundant = any(
            r.redundant and r.feeds.index(n.id) > 0 for r, _ in self.rows.values() if n.id in r.feeds
        )
        return {
            "site": site,
            "power_panel": f"{self.p}{n.parent or n.id}",
            "location": loc,
            "name": f"{self.p}{n.id}",
            "status": "active",
            "type": "redundant" if redundant else "primary",
            "supply": "ac",
            "phase": "three-phase",
            "voltage": VOLTS,
            "amperage": _amps(n.capacity_kw),
            "max_utilization": 100,
            "cf_planner_capacity_kw": n.capacity_kw,
        }


def bundle(
    plan: Plan, scenario: Scenario, prefix: str = "", level: str = "campus", whips: bool = True
) -> Bundle:
    """The NetBox objects of ``plan`` (module docstring); ``level`` is where NetBox sites sit;
    ``whips`` False leaves out each rack's whips, power ports and cables (at gigawatt scale they are
    two thirds of the objects, and NetBox then shows no rack power utilisation)."""
    if level not in LEVELS:
        raise ValueError(f"level: '{level}' is not one of {', '.join(LEVELS)}")
    return _Builder(plan, scenario, prefix, level, whips).build()


def _cell(v) -> str | int | float:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return ",".join(v)
    return v


def csv_text(rows: list[dict]) -> str:
    """Rows as one CSV for a NetBox bulk import form (columns: the union, in first-seen order)."""
    cols: list[str] = []
    for r in rows:
        cols += [c for c in r if c not in cols]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    w.writerows(safe_rows([{c: _cell(r.get(c, "")) for c in cols} for r in rows]))
    return buf.getvalue()


def csv_files(b: Bundle) -> dict[str, str]:
    """File name → CSV text, numbered in import order (``01-custom-fields.csv`` …); kinds with no
    objects are left out."""
    return {f"{i:02d}-{k}.csv": csv_text(b.objects[k]) for i, k in enumerate(KINDS, 1) if b.objects[k]}


REFS = {
    "site": lambda v, o: {"name": v},
    "location": lambda v, o: {"name": v, "site": {"name": o["site"]}},
    "parent": lambda v, o: {"name": v, "site": {"name": o["site"]}},
    "manufacturer": lambda v, o: {"name": v},
    "device_type": lambda v, o: {"model": v, "manufacturer": {"name": o["manufacturer"]}},
    "role": lambda v, o: {"name": v},
    "rack": lambda v, o: {"name": v, "site": {"name": o["site"]}},
    "power_panel": lambda v, o: {"name": v, "site": {"name": o["site"]}},
    "device": lambda v, o: {"name": v},
}
"""How the REST API takes each reference: a nested lookup by attributes."""


def api_object(kind: str, row: dict) -> dict:
    """One bundle row as the REST API takes it (references nested, ``cf_*`` in ``custom_fields``;
    empty references left out)."""
    out: dict = {}
    cf = {}
    for k, v in row.items():
        if k.startswith("cf_"):
            cf[k[3:]] = None if v == "" else v
        elif k in REFS and kind != "custom-fields":
            if v != "":
                out[k] = REFS[k](v, row)
        elif k == "manufacturer" and kind == "devices":
            continue
        else:
            out[k] = v
    if kind == "devices":
        out.pop("manufacturer", None)
    if cf:
        out["custom_fields"] = cf
    return out


def api_payload(b: Bundle) -> dict:
    """``{"order": [...], "endpoints": {...}, "objects": {kind: [...]}}`` for the REST API."""
    return {
        "order": [k for k in KINDS if b.objects[k]],
        "endpoints": {k: f"/api/{ENDPOINTS[k]}/" for k in KINDS},
        "objects": {k: [api_object(k, r) for r in b.objects[k]] for k in KINDS if b.objects[k]},
    }


def api_json(b: Bundle) -> str:
    return json.dumps(api_payload(b), indent=1, sort_keys=False) + "\n"
