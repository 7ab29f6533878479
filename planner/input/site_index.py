"""Look-ups over a validated site: where each row, node, zone and pod is.

Geometry lives here because both the optimiser and the verifier need the same
definition of a position's coordinates and cable length; the constraints
themselves are written separately in each.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.schema import (
    CoolingZone,
    Hall,
    LinkClass,
    PlacedRack,
    Pod,
    PowerNode,
    RackType,
    Row,
    Scenario,
    Site,
)


@dataclass(frozen=True)
class RowRef:
    """A row with the building and hall it stands in."""

    building: str
    hall: str
    row: Row


@dataclass
class SiteIndex:
    """Dictionaries over a site, built once; see :func:`index_site`."""

    site: Site
    rows: dict[str, RowRef] = field(default_factory=dict)
    halls: dict[str, tuple[str, Hall]] = field(default_factory=dict)
    power_nodes: dict[str, PowerNode] = field(default_factory=dict)
    node_building: dict[str, str] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)
    zones: dict[str, CoolingZone] = field(default_factory=dict)
    zone_building: dict[str, str] = field(default_factory=dict)
    pods: dict[str, Pod] = field(default_factory=dict)
    pod_hall: dict[str, str] = field(default_factory=dict)
    link_classes: dict[str, LinkClass] = field(default_factory=dict)
    _pod_xy: dict[str, tuple[float, float]] = field(default_factory=dict, repr=False)
    _cable: dict[tuple[str, int], float] = field(default_factory=dict, repr=False)

    def ancestors(self, node_id: str) -> list[str]:
        """The node itself and every node upstream of it, nearest first."""
        out: list[str] = []
        seen: set[str] = set()
        cur: str | None = node_id
        while cur is not None and cur not in seen and cur in self.power_nodes:
            out.append(cur)
            seen.add(cur)
            cur = self.power_nodes[cur].parent
        return out

    def subtree(self, node_id: str) -> set[str]:
        """The node and every node downstream of it."""
        out = {node_id}
        stack = [node_id]
        while stack:
            for child in self.children.get(stack.pop(), []):
                if child not in out:
                    out.add(child)
                    stack.append(child)
        return out

    def position_xy(self, row_id: str, index: int) -> tuple[float, float]:
        """Coordinates (x_m, y_m) of a position."""
        return self.rows[row_id].row.position_xy(index)

    def pod_xy(self, pod_id: str) -> tuple[float, float]:
        """Coordinates of a pod's network rack (computed once per pod)."""
        hit = self._pod_xy.get(pod_id)
        if hit is None:
            loc = self.pods[pod_id].network_rack
            hit = self._pod_xy[pod_id] = self.position_xy(loc.row, loc.position)
        return hit

    def cable_length_m(self, row_id: str, index: int) -> float:
        """Cable length to the row's pod network rack, m:
        |x − x_pod| + |y − y_pod| + tray_allowance_m (computed once per position)."""
        hit = self._cable.get((row_id, index))
        if hit is None:
            x, y = self.position_xy(row_id, index)
            px, py = self.pod_xy(self.rows[row_id].row.pod)
            hit = self._cable[row_id, index] = round(
                abs(x - px) + abs(y - py) + self.site.fabric.tray_allowance_m, 6
            )
        return hit

    def link_class_for(self, rack: RackType, length_m: float) -> LinkClass | None:
        """Shortest-reach link class the rack accepts that covers ``length_m``; none if out of reach."""
        if rack.max_cable_m is not None and length_m > rack.max_cable_m + 1e-9:
            return None
        fits = [
            self.link_classes[c]
            for c in rack.link_classes
            if c in self.link_classes and self.link_classes[c].max_length_m + 1e-9 >= length_m
        ]
        return min(fits, key=lambda c: (c.max_length_m, c.cost_usd_per_link, c.id), default=None)

    def pod_locations(self) -> set[tuple[str, int]]:
        """(row, position) of every pod network rack: no other rack may stand there."""
        return {(p.network_rack.row, p.network_rack.position) for p in self.pods.values()}


def floor_load_kg_per_m2(rack: RackType, row: Row) -> float:
    """Floor load of a rack at a position of ``row``: weight_kg / (pitch_m × depth_m), kg/m²; a
    multi-rack unit's heaviest part on its own position."""
    return rack.position_weight_kg / row.position_area_m2


def fits(scenario: Scenario, ix: SiteIndex, row_id: str, t: RackType) -> bool:
    """Row-level fit, per position (a multi-rack unit's heaviest-drawing and heaviest part): the
    rack's limit power (nameplate, or planning power when the scenario says so) ≤
    max_rack_power_kw, weight ≤ max_rack_weight_kg, floor load ≤ the hall's rating,
    liquid-cooled types only in rows with a liquid loop; nothing in a network row."""
    ref = ix.rows[row_id]
    row = ref.row
    if row.network is not None:
        return False  # network rows hold the network racks of designed fabrics only
    rating = ix.halls[ref.hall][1].floor_rating_kg_per_m2
    return (
        scenario.position_limit_power_kw(t) <= row.max_rack_power_kw + 1e-9
        and t.position_weight_kg <= row.max_rack_weight_kg + 1e-9
        and (rating is None or floor_load_kg_per_m2(t, row) <= rating + 1e-9)
        and (t.liquid_fraction == 0 or row.liquid_loop is not None)
    )


def index_site(site: Site) -> SiteIndex:
    """Build the look-up tables of a site (IDs assumed unique: run consistency checks first)."""
    ix = SiteIndex(site=site)
    ix.link_classes = {c.id: c for c in site.fabric.link_classes}
    for b in site.buildings:
        for n in b.power_nodes:
            ix.power_nodes[n.id] = n
            ix.node_building[n.id] = b.id
        for h in b.halls:
            ix.halls[h.id] = (b.id, h)
            for n in h.power_nodes:
                ix.power_nodes[n.id] = n
                ix.node_building[n.id] = b.id
            for z in h.cooling_zones:
                ix.zones[z.id] = z
                ix.zone_building[z.id] = b.id
            for p in h.pods:
                ix.pods[p.id] = p
                ix.pod_hall[p.id] = h.id
            for r in h.rows:
                ix.rows[r.id] = RowRef(b.id, h.id, r)
    for n in ix.power_nodes.values():
        ix.children.setdefault(n.id, [])
        if n.parent is not None:
            ix.children.setdefault(n.parent, []).append(n.id)
    return ix


def network_racks(scenario: Scenario) -> list[tuple[str, str, RackType]]:
    """(pod, row, rack type) of every pod's network rack: fixed load in every plan."""
    types = scenario.catalog.by_id()
    out = []
    for b in scenario.site.buildings:
        for h in b.halls:
            for p in h.pods:
                if p.network_rack_type is not None and p.network_rack_type in types:
                    out.append((p.id, p.network_rack.row, types[p.network_rack_type]))
    return out


def place(
    ix: SiteIndex,
    row_id: str,
    position: int,
    rack: RackType,
    cluster: str,
    phase: str | None = None,
    spare: bool = False,
) -> PlacedRack:
    """A :class:`~planner.plan.PlacedRack` at a position, with its coordinates, cable length
    and the shortest-reach link class the rack accepts (none if out of reach or no links). Built
    without re-validation (every value comes from the validated site and catalog): a 1M-GPU plan
    places 60,000+ racks."""
    ref = ix.rows[row_id]
    x, y = ref.row.position_xy(position)
    length = ix.cable_length_m(row_id, position)
    lc = ix.link_class_for(rack, length) if rack.links else None
    return PlacedRack.model_construct(
        phase=phase,
        existing=False,
        spare=spare,
        building=ref.building,
        hall=ref.hall,
        row=row_id,
        position=position,
        x_m=x,
        y_m=y,
        rack_type=rack.id,
        cluster=cluster,
        link_class=lc.id if lc else None,
        cable_length_m=length,
    )
