"""A site from a NetBox kept the way its users keep it (SPEC §20): no planner custom field is
needed. The rules, each default named in the import's report:

- **site**: the NetBox site named by ``--site`` (its name or slug), else the one site that holds
  racks. IDs are NetBox names where they fit the planner's ID pattern, else slugs (``DAL1 Campus``
  → ``dal1-campus``), else the name with other characters as ``-``.
- **rows**: the racks of one location, ordered by facility ID, then name (numbers in names compare
  as numbers). Where every rack name of a location reads ``<row><separator><number>``
  (``A1-R01-07``: row ``A1-R01``) and they name two or more rows, those are the rows and the
  location is their hall; otherwise the location's racks are one row and its parent location (else
  the site) is the hall. A hall's parent location is its building, else the site is. Custom fields
  ``planner_row``/``planner_position``, where a rack carries them, win. Positions count from 0 in
  that order; rows stand :data:`DEPTH_M` apart, racks :data:`PITCH_M` (or their outer width).
- **power**: every feed assigned to a rack (``PowerFeed.rack``) is a power node under its panel:
  rated V·A (·√3 three-phase), usable share its ``max_utilization``; a row hangs from its racks'
  feeds, is redundant where every fed rack has a primary and a redundant feed (its two sides), and
  a rack may draw the smallest usable feed of a redundant rack (the sum of a single-fed rack's).
  A panel is a root node whose capacity is its ``planner_capacity_kw`` or the overlay's, else the
  sum of its feeds' usable kW (the default named). A rack with no feed is reserved.
- **installed**: a device standing in a rack (status other than planned, inventory or
  decommissioning) makes its rack an installed rack, never a free position: its load is its power
  ports' allocated draw, else their maximum draw (W), its weight the rack's plus its devices'
  (any NetBox weight unit, in kg), each installed rack a rack type of its own.
- **what NetBox cannot hold** (floor area, cooling, pods) comes from the overlay, else from the
  defaults :data:`FLOOR_SHARE`, one air zone per hall sized to its feeds, one pod per hall.
"""

from __future__ import annotations

import math
import re

from planner.dcim.rows import num, text
from planner.errors import InputError

ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
"""The planner's ID pattern (planner/schema/base.py ``Id``)."""
ROW_NAME = re.compile(r"^(?P<row>.+?)[-_./ ]+(?P<pos>\d+)$")
"""A rack name that carries its row: the row, a separator, the position number."""
PITCH_M = 0.6
"""Rack pitch where NetBox states no outer width, m (a 600 mm rack; the site schema's default)."""
DEPTH_M = 2.4
"""Floor depth of a row (rack plus half of each aisle), m (the site schema's default)."""
FLOOR_SHARE = 0.5
"""Share of a hall's white space its racks' positions take where the overlay states no floor area
(an estimate: racks take about half of a data hall's floor, the rest aisles and clearances)."""
INSTALLED_KG = 700.0
"""Weight of an installed rack whose rack and devices state none, kg (an estimate: a populated
42U server rack)."""
NOT_INSTALLED = {"planned", "inventory", "decommissioning"}
"""Device statuses that do not stand in a rack as load."""


def ident(name, slug=None) -> str:
    """An ID from a NetBox name: the name where it fits, else the slug, else the name with every
    other character made ``-``."""
    n = text(name).strip()
    if ID.match(n) and len(n) <= 64:
        return n
    s = text(slug).strip()
    if s and ID.match(s):
        return s[:64]
    return (re.sub(r"[^A-Za-z0-9_.:-]+", "-", n).strip("-_.:") or "x")[:64]


def natural(s: str) -> list:
    """Sort key comparing the numbers in a name as numbers (R9 before R10)."""
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", s)]


class Native:
    """One read of a NetBox site by the rules above."""

    def __init__(self, rows: dict[str, list[dict]], overlay: dict, site: str | None) -> None:
        self.rows, self.ov = rows, overlay or {}
        self.unmapped: list[str] = []
        self.defaults: list[str] = []
        self.site = self._pick(site)
        self.sid = ident(self.site.get("name"), self.site.get("slug"))
        mine = lambda r: text(r.get("site")) in (text(self.site.get("name")), text(self.site.get("slug")))  # noqa: E731
        self.locs = {text(r["name"]): r for r in rows.get("locations", []) if mine(r)}
        self.racks = [r for r in rows.get("racks", []) if mine(r)]

    def _pick(self, want: str | None) -> dict:
        sites = self.rows.get("sites", [])
        if want:
            got = [s for s in sites if want in (text(s.get("name")), text(s.get("slug")))]
            if not got:
                names = ", ".join(sorted(text(s.get("name")) for s in sites)[:20]) or "none"
                raise InputError(f"--site: NetBox holds no site named or slugged '{want}' (sites: {names})")
            return got[0]
        holding = sorted({text(r.get("site")) for r in self.rows.get("racks", [])} - {""})
        if len(holding) != 1:
            raise InputError(
                f"--site: NetBox holds racks in {len(holding)} sites ({', '.join(holding[:20]) or 'none'}); "
                "name the one to import with --site NAME"
            )
        return next((s for s in sites if text(s.get("name")) == holding[0]), {"name": holding[0]})

    # ------------------------------------------------------------ places

    def loc_id(self, name: str) -> str:
        return ident(name, self.locs.get(name, {}).get("slug"))

    def parent(self, loc: str) -> str:
        return text(self.locs.get(loc, {}).get("parent"))

    def layout(self) -> dict[str, dict]:
        """Rows (id → {hall, racks in order}) from locations, names and custom fields."""
        by_loc: dict[str, list[dict]] = {}
        for r in self.racks:
            by_loc.setdefault(text(r.get("location")), []).append(r)
        rows: dict[str, dict] = {}
        for loc, racks in sorted(by_loc.items()):
            racks.sort(key=lambda r: (natural(text(r.get("facility_id"))), natural(text(r.get("name")))))
            fixed = [r for r in racks if text(r.get("cf_planner_row"))]
            rest = [r for r in racks if not text(r.get("cf_planner_row"))]
            parts = [ROW_NAME.match(text(r.get("name"))) for r in rest]
            named = rest and all(parts) and len({m.group("row") for m in parts}) >= 2
            if named or fixed:
                hall = loc
                for r, m in zip(rest, parts, strict=True):
                    key = ident(m.group("row")) if named else self.loc_id(loc) if loc else self.sid
                    rows.setdefault(key, {"hall": hall, "racks": []})["racks"].append(r)
                for key in {ident(r["cf_planner_row"]) for r in fixed}:  # positions the custom field states
                    row = rows.setdefault(key, {"hall": hall, "racks": []})
                    row["racks"] += [r for r in fixed if ident(r["cf_planner_row"]) == key]
                    row["racks"].sort(key=_cf_pos)
            else:
                key = self.loc_id(loc) if loc else self.sid
                rows[key] = {"hall": self.parent(loc) if loc else "", "racks": racks}
        return rows

    def hall_id(self, hall: str) -> str:
        return self.loc_id(hall) if hall else self.sid

    def building_of(self, hall: str) -> str:
        b = self.parent(hall) if hall else ""
        return self.loc_id(b) if b else self.sid

    # ------------------------------------------------------------ power

    def feeds(self) -> dict[str, list[tuple[str, dict]]]:
        """Rack name → its feeds as (node id, feed row); feeds assigned to no rack of the site are
        listed as unmapped."""
        names = {text(r.get("name")) for r in self.racks}
        panels = {text(p.get("name")) for p in self.rows.get("power-panels", []) if self._mine(p)}
        out: dict[str, list[tuple[str, dict]]] = {}
        seen: set[str] = set()
        for f in self.rows.get("power-feeds", []):
            if text(f.get("power_panel")) not in panels:
                continue
            rack = text(f.get("rack"))
            if rack not in names:
                self.unmapped.append(
                    f"power feed '{f.get('name')}': assigned to no rack of the site (PowerFeed.rack)"
                )
                continue
            nid = ident(f.get("name"))
            if nid in seen or nid in {ident(p) for p in panels}:
                nid = ident(f"{f.get('power_panel')}-{f.get('name')}")
            seen.add(nid)
            out.setdefault(rack, []).append((nid, f))
        return out

    def _mine(self, r: dict) -> bool:
        return text(r.get("site")) in ("", text(self.site.get("name")), text(self.site.get("slug")))

    def feed_node(self, nid: str, f: dict) -> dict:
        """A feed as a power node: rated V·A (·√3 three-phase) kW, usable share its utilisation."""
        n = text(f.get("name"))
        v = _positive(f, "voltage", 100_000, "volts", n)
        a = _positive(f, "amperage", 100_000, "amperes", n)
        util = _positive(f, "max_utilization", 100, "percent (80 for 80 %)", n)
        if v is None or a is None:
            raise InputError(f"power feed '{n}': no voltage or amperage: its kW cannot be read")
        three = text(f.get("phase")).lower() in ("three-phase", "3-phase")
        rated = abs(v) * a * (math.sqrt(3) if three else 1.0) / 1000
        if util is None:
            util = 80.0
            self.defaults.append(f"power feed '{n}': no max_utilization: 80 % (NetBox's default)")
        return {
            "id": nid,
            "kind": "breaker",
            "capacity_kw": round(rated, 6),
            "derate": util / 100,
            "parent": ident(f.get("power_panel")),
        }


def _cf_pos(r: dict) -> float:
    x = num(r.get("cf_planner_position"), f"rack '{r.get('name')}' planner_position")
    return -1 if x is None else x


def _positive(f: dict, key: str, top: float, unit: str, n: str) -> float | None:
    x = num(f.get(key), f"power feed '{n}' {key}")
    if x is not None and not 0 < abs(x) <= top:
        raise InputError(
            f"power feed '{n}': {key} {x:g} is outside 0 < {key} ≤ {top:,g}; NetBox keeps it in {unit}"
        )
    return x
