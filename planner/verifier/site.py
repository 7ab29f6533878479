"""The verifier's own look-ups over a site and the state of each phase: geometry, power-tree
walks, what is online, which retrofits are in effect. Nothing here is shared with the optimiser."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from planner.schema import (
    CoolingZone,
    LinkClass,
    NetworkRack,
    PlacedRack,
    Plan,
    Pod,
    PowerNode,
    RackType,
    Row,
    Scenario,
    SwitchCount,
)
from planner.verifier.rules_recount import standing_racks


@dataclass
class SiteView:
    """The verifier's own look-ups over a site."""

    rows: dict[str, tuple[str, str, Row]] = field(default_factory=dict)
    """Row → (building, hall, row)."""
    nodes: dict[str, PowerNode] = field(default_factory=dict)
    node_building: dict[str, str] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    zones: dict[str, CoolingZone] = field(default_factory=dict)
    zone_building: dict[str, str] = field(default_factory=dict)
    pods: dict[str, Pod] = field(default_factory=dict)
    pod_building: dict[str, str] = field(default_factory=dict)
    hall_rating: dict[str, float | None] = field(default_factory=dict)
    links: dict[str, LinkClass] = field(default_factory=dict)
    phase_index: dict[str | None, int] = field(default_factory=dict)
    on: dict[str, int] = field(default_factory=dict)
    """Row, power node or cooling zone → index of the phase from which it exists."""
    _up: dict[str, list[str]] = field(default_factory=dict)
    _cable: dict[tuple[str, int], float] = field(default_factory=dict)
    _step: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)

    def up(self, node: str) -> list[str]:
        """The node and every node upstream of it."""
        hit = self._up.get(node)
        if hit is None:
            hit, seen, cur = [], set(), node
            while cur is not None and cur in self.nodes and cur not in seen:
                hit.append(cur)
                seen.add(cur)
                cur = self.nodes[cur].parent
            self._up[node] = hit
        return hit

    def down(self, node: str) -> set[str]:
        """The node and everything it feeds."""
        out, stack = {node}, [node]
        while stack:
            for c in self.children.get(stack.pop(), []):
                if c not in out:
                    out.add(c)
                    stack.append(c)
        return out

    def xy(self, row_id: str, index: int) -> tuple[float, float]:
        """Coordinates of a position: origin + index × pitch along the row's direction."""
        g = self._step.get(row_id)
        if g is None:
            row = self.rows[row_id][2]
            d = row.direction.value
            ux, uy = (
                (1.0, 0.0)
                if d == "+x"
                else (-1.0, 0.0)
                if d == "-x"
                else (0.0, 1.0)
                if d == "+y"
                else (0.0, -1.0)
            )
            g = self._step[row_id] = (row.origin_x_m, row.origin_y_m, ux * row.pitch_m, uy * row.pitch_m)
        ox, oy, sx, sy = g
        return round(ox + index * sx, 6), round(oy + index * sy, 6)

    def pod_network_rows(self) -> dict[str, str]:
        """Pod → the row its network rack stands in."""
        return {pid: p.network_rack.row for pid, p in self.pods.items()}

    def row_pods(self) -> dict[str, str]:
        """Row → its pod."""
        return {rid: row.pod for rid, (_, _, row) in self.rows.items()}


def served_pods(site: SiteView) -> dict[str, set[str]]:
    """Network row → the pods whose switches it may hold (its pod, every pod of its hall, or of
    its building: ``Row.network``)."""
    halls: dict[str, set[str]] = defaultdict(set)
    buildings: dict[str, set[str]] = defaultdict(set)
    for b, h, row in site.rows.values():
        halls[h].add(row.pod)
        buildings[b].add(row.pod)
    for pid in site.pods:
        buildings[site.pod_building[pid]].add(pid)
    out: dict[str, set[str]] = {}
    for rid, (b, h, row) in site.rows.items():
        if row.network == "pod":
            out[rid] = {row.pod}
        elif row.network == "hall":
            out[rid] = halls[h]
        elif row.network == "building":
            out[rid] = buildings[b]
    return out


def site_view(scenario: Scenario) -> SiteView:
    """Index a scenario's site for the checks."""
    s = SiteView()
    s.links = {c.id: c for c in scenario.site.fabric.link_classes}
    s.phase_index = {p.id: i for i, p in enumerate(scenario.phases)} or {None: 0}
    s.phase_index.setdefault(None, 0)

    def on(*ids):
        return max((s.phase_index.get(i, 0) for i in ids if i is not None), default=0)

    for b in scenario.site.buildings:
        for n in b.power_nodes:
            s.nodes[n.id] = n
            s.node_building[n.id] = b.id
            s.on[n.id] = on(n.online_phase)
        for h in b.halls:
            _index_hall(s, b.id, h, on)
    for n in s.nodes.values():
        if n.parent is not None:
            s.children[n.parent].append(n.id)
    return s


def _index_hall(s: SiteView, building: str, h, on) -> None:
    """A hall's power nodes, cooling zones, pods and rows into the view, each with its phase online."""
    s.hall_rating[h.id] = h.floor_rating_kg_per_m2
    for n in h.power_nodes:
        s.nodes[n.id] = n
        s.node_building[n.id] = building
        s.on[n.id] = on(h.online_phase, n.online_phase)
    for z in h.cooling_zones:
        s.zones[z.id] = z
        s.zone_building[z.id] = building
        s.on[z.id] = on(h.online_phase, z.online_phase)
    for p in h.pods:
        s.pods[p.id] = p
        s.pod_building[p.id] = building
    for r in h.rows:
        s.rows[r.id] = (building, h.id, r)
        s.on[r.id] = on(h.online_phase, r.online_phase)


def cable_m(site: SiteView, scenario: Scenario, row_id: str, index: int) -> float:
    """|x − x_pod| + |y − y_pod| + tray allowance, m (once per position)."""
    hit = site._cable.get((row_id, index))
    if hit is None:
        x, y = site.xy(row_id, index)
        loc = site.pods[site.rows[row_id][2].pod].network_rack
        px, py = site.xy(loc.row, loc.position)
        hit = site._cable[row_id, index] = round(
            abs(x - px) + abs(y - py) + scenario.site.fabric.tray_allowance_m, 6
        )
    return hit


def network_load(scenario: Scenario, site: SiteView) -> list[tuple[str, RackType]]:
    """(row, rack type) of every pod's network rack."""
    types = scenario.catalog.by_id()
    return [
        (p.network_rack.row, types[p.network_rack_type])
        for p in site.pods.values()
        if p.network_rack_type is not None and p.network_rack_type in types
    ]


def placed_by(scenario: Scenario, racks, index: int) -> list[PlacedRack]:
    """GPU racks placed in phase ``index`` or before, retired or not (a designed fabric's switches
    are bought for them and stay to the horizon); every rack without phases."""
    if not scenario.phases:
        return list(racks)
    at = {p.id: i for i, p in enumerate(scenario.phases)}
    return [r for r in racks if r.existing or at.get(r.phase, 0) <= index]


def network_at(scenario: Scenario, racks: list[NetworkRack], index: int) -> list[NetworkRack]:
    """The designed fabrics' network racks standing in phase ``index`` with the switches bought by
    then and the kW they draw then (as stated for that phase; their ``kw`` without phases)."""
    if not scenario.phases:
        return list(racks)
    at = {p.id: i for i, p in enumerate(scenario.phases)}
    ph = scenario.phases[index].id
    out = []
    for nr in racks:
        if at.get(nr.phase, 0) > index:
            continue
        kept = [
            SwitchCount(**{**sc.model_dump(), "phase": None})
            for sc in nr.switches
            if at.get(sc.phase, 0) <= index
        ]
        out.append(nr.model_copy(update={"switches": kept, "kw": nr.kw_by_phase.get(ph, nr.kw)}))
    return out


@dataclass
class PhaseState:
    """What stands and what is in effect in one phase."""

    index: int
    id: str | None
    racks: list
    offline: set[str] = field(default_factory=set)
    node_add: dict[str, float] = field(default_factory=dict)
    zone_add: dict[str, float] = field(default_factory=dict)
    loops: dict[str, CoolingZone] = field(default_factory=dict)
    """Row → liquid loop added by a retrofit in effect."""
    rack_kw: dict[str, float] = field(default_factory=dict)
    """Row → raised per-rack limit in effect."""
    fabric_kw: dict[str, float] = field(default_factory=dict)
    """Network row → the power of the designed fabrics' network racks standing in it, kW."""
    built: dict[str, object] = field(default_factory=dict)
    """Building → the build_structure effect in force (structures built by this phase)."""

    @property
    def where(self) -> str:
        return f" in phase {self.id}" if self.id is not None else ""


def phase_states(plan: Plan, scenario: Scenario, site: SiteView) -> list[PhaseState]:
    """Each phase's state: installed racks and racks placed up to it, elements not yet online,
    retrofits in effect (bought lead_phases before or earlier), designed-fabric power."""
    ids: list[str | None] = [p.id for p in scenario.phases] or [None]
    by_id = {r.id: r for r in scenario.retrofits}
    out = []
    for i, ph in enumerate(ids):
        racks = (
            standing_racks(scenario, plan.racks, i) if scenario.phases else list(plan.racks)
        )  # retired racks gone (§17)
        st = PhaseState(i, ph, racks, {e for e, on in site.on.items() if on > i})
        for nr in network_at(scenario, plan.network_racks, i):  # designed fabrics standing then
            st.fabric_kw[nr.row] = st.fabric_kw.get(nr.row, 0.0) + nr.kw
        for b in plan.retrofits:
            r = by_id.get(b.id)
            if r is None or site.phase_index.get(b.phase, 0) + r.lead_phases > i:
                continue
            e = r.effect
            if e.kind == "raise_capacity":
                target = st.node_add if e.target in site.nodes else st.zone_add
                target[e.target] = target.get(e.target, 0.0) + e.add_kw
            elif e.kind == "add_liquid_loop":
                st.loops[e.row] = e.loop
            elif e.kind == "raise_rack_power":
                st.rack_kw[e.row] = max(st.rack_kw.get(e.row, 0.0), e.max_rack_power_kw)
            elif e.kind == "build_structure":
                st.built[e.building] = e
        out.append(st)
    return out


def phase_name(scenario: Scenario, index: int) -> str:
    return str(scenario.phases[index].id) if scenario.phases else "the first"
