"""Verify stage: re-check every constraint from the plan alone, without the solver.

The independent second opinion: this module shares no constraint or geometry
code with the model builder (its own look-ups, cable lengths, link classes,
hop counts and power flows); it reads the schema, the scenario and the plan.
Checks:

- placement: the row exists in the stated building and hall, the position is
  in range, not reserved, not a pod's network rack, and holds one rack;
  coordinates and cable length (Manhattan distance to the pod's network rack
  plus the tray allowance) match the site geometry;
- rack fit: limit power (nameplate, or planning power if the scenario says so)
  ≤ row max_rack_power_kw; weight ≤ max_rack_weight_kg; floor load
  (weight ÷ (pitch × depth)) ≤ the hall's rating; liquid_fraction > 0 only in
  rows with a liquid loop; the link class is accepted by the rack type,
  reaches the cable length (and max_cable_m) and is the shortest that does;
- power, normal: every node's load ≤ derate × capacity, where a row's load
  (its racks plus any pod network rack standing in it) splits evenly over its
  feeds and a node carries its whole subtree;
- power, N-1: for every node with can_fail, its subtree is dead; a row with
  live feeds splits its load evenly over them, a row without drops (never
  allowed for a ``redundant`` row carrying load); every surviving node stays
  within derate × capacity. Normal loads are computed once and each failure
  is applied as a change over the rows it touches (linear in the plan);
- cooling: Σ power × (1 − liquid_fraction) per air zone and
  Σ power × liquid_fraction per liquid loop, network racks included,
  ≤ (units − redundant) × unit capacity;
- pods: GPUs ≤ max_gpus, racks ≤ max_racks;
- clusters: allowed rack types (and HBM need), GPU demand (exact / at least /
  at most), storage racks, and the hop budget: the hops between its two
  farthest racks (same rack, pod, building, or across buildings) ≤ max_hops;
- budgets: capex and IT power of the placed racks;
- claims: every figure the plan states (see :func:`_claim_checks`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from planner.asks import spares_needed, storage_racks
from planner.enums import LimitKind, Objective, RackLimitBasis, Status
from planner.kpis import compute_kpis, objective_value, phase_summaries, stranded_power
from planner.plan import Plan, Usage
from planner.schema import Demand, LinkClass, PowerNode, RackType, Row, Scenario

TOL = 1e-6
"""Absolute tolerance for comparing loads (kW) and lengths (m)."""


@dataclass(frozen=True)
class Violation:
    """One broken constraint: which element, which check, the value and the limit."""

    element: str
    check: str
    message: str

    def __str__(self) -> str:
        return f"{self.element}: {self.message}"


@dataclass
class VerifyReport:
    """Outcome of :func:`verify`: violations (empty when the plan is valid) and usage of every limit."""

    violations: list[Violation] = field(default_factory=list)
    usage: list[Usage] = field(default_factory=list)
    phase_usage: dict[str, list[Usage]] = field(default_factory=dict)
    """Phased plans: power and cooling use at the end of each phase."""

    @property
    def ok(self) -> bool:
        """True when no constraint is violated."""
        return not self.violations

    def add(self, element: str, check: str, message: str) -> None:
        """Record a violation."""
        self.violations.append(Violation(element, check, message))


def _fmt(x: float) -> str:
    return f"{x:,.3f}".rstrip("0").rstrip(".")


@dataclass
class _Site:
    """The verifier's own look-ups over a site."""

    rows: dict[str, tuple[str, str, Row]] = field(default_factory=dict)
    """Row → (building, hall, row)."""
    nodes: dict[str, PowerNode] = field(default_factory=dict)
    node_building: dict[str, str] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    zones: dict = field(default_factory=dict)
    pods: dict = field(default_factory=dict)
    pod_building: dict[str, str] = field(default_factory=dict)
    hall_rating: dict[str, float | None] = field(default_factory=dict)
    links: dict[str, LinkClass] = field(default_factory=dict)
    phase_index: dict[str | None, int] = field(default_factory=dict)
    on: dict[str, int] = field(default_factory=dict)
    """Row, power node or cooling zone → index of the phase from which it exists."""
    _up: dict[str, list[str]] = field(default_factory=dict)

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
        row = self.rows[row_id][2]
        step = index * row.pitch_m
        d = row.direction.value
        dx, dy = (step, 0.0) if d == "+x" else (-step, 0.0) if d == "-x" else (0.0, step) if d == "+y" else (0.0, -step)
        return round(row.origin_x_m + dx, 6), round(row.origin_y_m + dy, 6)


def _site(scenario: Scenario) -> _Site:
    s = _Site()
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
            s.hall_rating[h.id] = h.floor_rating_kg_per_m2
            for n in h.power_nodes:
                s.nodes[n.id] = n
                s.node_building[n.id] = b.id
                s.on[n.id] = on(h.online_phase, n.online_phase)
            for z in h.cooling_zones:
                s.zones[z.id] = z
                s.on[z.id] = on(h.online_phase, z.online_phase)
            for p in h.pods:
                s.pods[p.id] = p
                s.pod_building[p.id] = b.id
            for r in h.rows:
                s.rows[r.id] = (b.id, h.id, r)
                s.on[r.id] = on(h.online_phase, r.online_phase)
    for n in s.nodes.values():
        if n.parent is not None:
            s.children[n.parent].append(n.id)
    return s


def _cable_m(site: _Site, scenario: Scenario, row_id: str, index: int) -> float:
    """|x − x_pod| + |y − y_pod| + tray allowance, m."""
    x, y = site.xy(row_id, index)
    loc = site.pods[site.rows[row_id][2].pod].network_rack
    px, py = site.xy(loc.row, loc.position)
    return round(abs(x - px) + abs(y - py) + scenario.site.fabric.tray_allowance_m, 6)


def _network_load(scenario: Scenario, site: _Site) -> list[tuple[str, RackType]]:
    """(row, rack type) of every pod's network rack."""
    types = scenario.catalog.by_id()
    return [(p.network_rack.row, types[p.network_rack_type]) for p in site.pods.values()
            if p.network_rack_type is not None and p.network_rack_type in types]


@dataclass
class _Phase:
    """What stands and what is in effect in one phase."""

    index: int
    id: str | None
    racks: list
    offline: set[str] = field(default_factory=set)
    node_add: dict[str, float] = field(default_factory=dict)
    zone_add: dict[str, float] = field(default_factory=dict)
    loops: dict[str, object] = field(default_factory=dict)
    """Row → liquid loop added by a retrofit in effect."""
    rack_kw: dict[str, float] = field(default_factory=dict)
    """Row → raised per-rack limit in effect."""
    fabric_kw: dict[str, float] = field(default_factory=dict)
    """Network-rack row → designed-fabric power charged to it (switches and optics), kW."""

    @property
    def where(self) -> str:
        return f" in phase {self.id}" if self.id is not None else ""


def _fabric_rows(plan: Plan, scenario: Scenario, site: _Site, racks) -> dict[str, float]:
    """Designed-fabric power per network-rack row: each pod's GPUs × their design's kW per GPU."""
    if not scenario.fabrics:
        return {}
    from planner.fabric import network_kw_by_pod
    from planner.plan import chosen_fabrics

    pod_of_row = {rid: row.pod for rid, (_, _, row) in site.rows.items()}
    by_pod = network_kw_by_pod(scenario, racks, chosen_fabrics(plan), pod_of_row)
    out: dict[str, float] = defaultdict(float)
    for pod, kw in by_pod.items():
        out[site.pods[pod].network_rack.row] += kw
    return dict(out)


def _phases(plan: Plan, scenario: Scenario, site: _Site) -> list[_Phase]:
    """Each phase's state: installed racks and racks placed up to it, elements not yet online,
    retrofits in effect (bought lead_phases before or earlier)."""
    ids: list[str | None] = [p.id for p in scenario.phases] or [None]
    by_id = {r.id: r for r in scenario.retrofits}
    out = []
    for i, ph in enumerate(ids):
        racks = [r for r in plan.racks if r.existing or site.phase_index.get(r.phase, 0) <= i]
        st = _Phase(i, ph, racks, {e for e, on in site.on.items() if on > i})
        st.fabric_kw = _fabric_rows(plan, scenario, site, racks)
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
        out.append(st)
    return out


def _rack_checks(plan: Plan, scenario: Scenario, site: _Site, rep: VerifyReport, states: list[_Phase]) -> None:
    types = scenario.catalog.by_id()
    clusters = {c.id: c for c in scenario.clusters}
    stores = {c.id: storage_racks(scenario, c) > 0 for c in scenario.clusters}  # once per cluster, not per rack
    pod_spots = {(p.network_rack.row, p.network_rack.position): p.id for p in site.pods.values()}
    taken: dict[tuple[str, int], int] = {}
    for i, r in enumerate(plan.racks):
        name = f"racks[{i}] ({r.row}/{r.position})"
        ref = site.rows.get(r.row)
        if ref is None:
            rep.add(name, "placement", f"unknown row '{r.row}'")
            continue
        building, hall, row = ref
        if (building, hall) != (r.building, r.hall):
            rep.add(name, "placement", f"row '{r.row}' is in {building}/{hall}, not {r.building}/{r.hall}")
        if r.position >= row.positions:
            rep.add(name, "placement", f"position {r.position} is outside 0..{row.positions - 1}")
            continue
        if r.position in row.reserved:
            rep.add(name, "placement", f"position {r.position} is reserved")
        if (r.row, r.position) in pod_spots:
            rep.add(name, "placement", f"position {r.position} holds pod {pod_spots[r.row, r.position]}'s network rack")
        if (r.row, r.position) in taken:
            rep.add(name, "placement", f"position already holds racks[{taken[r.row, r.position]}]")
        taken.setdefault((r.row, r.position), i)
        x, y = site.xy(r.row, r.position)
        if abs(x - r.x_m) > TOL or abs(y - r.y_m) > TOL:
            rep.add(name, "geometry", f"coordinates ({r.x_m}, {r.y_m}) differ from the site's ({x}, {y})")
        length = _cable_m(site, scenario, r.row, r.position)
        if abs(length - r.cable_length_m) > TOL:
            rep.add(name, "geometry", f"cable length {r.cable_length_m} m differs from the site's {length} m")
        t = types.get(r.rack_type)
        if t is None:
            rep.add(name, "rack type", f"unknown rack type '{r.rack_type}'")
            continue
        if r.phase is not None and r.phase not in site.phase_index:
            rep.add(name, "phase", f"unknown phase '{r.phase}' (phases: {', '.join(str(p) for p in site.phase_index if p is not None) or 'none'})")
            continue
        at = states[0 if r.existing else site.phase_index.get(r.phase, 0)]
        if not r.existing and site.on.get(r.row, 0) > at.index:
            rep.add(name, "phase", f"row '{r.row}' exists only from phase {_phase_name(scenario, site.on[r.row])}, not in phase {r.phase}")
        c = clusters.get(r.cluster)
        if c is None:
            rep.add(name, "cluster", f"unknown cluster '{r.cluster}'")
        else:
            storage = stores[c.id] and r.rack_type == c.storage_rack_type
            if r.rack_type not in c.rack_types and not storage:
                allowed = ", ".join([*c.rack_types, *([c.storage_rack_type] if stores[c.id] else [])])
                rep.add(name, "cluster", f"rack type '{r.rack_type}' is not allowed for cluster '{c.id}' (allowed: {allowed})")
            elif not storage and c.min_hbm_gb_per_gpu is not None and t.hbm_gb_per_gpu < c.min_hbm_gb_per_gpu - 1e-9:
                rep.add(name, "cluster", f"{r.rack_type} has {_fmt(t.hbm_gb_per_gpu)} GB HBM per GPU; cluster '{c.id}' needs {_fmt(c.min_hbm_gb_per_gpu)} GB")
        on_planning = scenario.rack_limit_on == RackLimitBasis.planning
        kw = t.planning_power_kw(scenario.gpu_power_cap_w, scenario.power_budget_ratio if on_planning else None)
        row_limit = max(row.max_rack_power_kw, at.rack_kw.get(r.row, 0.0))
        if kw > row_limit + TOL:
            basis = "planning" if scenario.rack_limit_on == RackLimitBasis.planning else "nameplate"
            rep.add(name, "rack power", f"{r.rack_type} draws {_fmt(kw)} kW ({basis}), row limit {_fmt(row_limit)} kW{at.where}")
        if t.weight_kg > row.max_rack_weight_kg + TOL:
            rep.add(name, "rack weight", f"{r.rack_type} weighs {_fmt(t.weight_kg)} kg, row limit {_fmt(row.max_rack_weight_kg)} kg")
        rating = site.hall_rating.get(hall)
        load = t.weight_kg / (row.pitch_m * row.depth_m)
        if rating is not None and load > rating + TOL:
            rep.add(name, "floor load", f"{r.rack_type} loads the floor with {_fmt(load)} kg/m² "
                    f"({_fmt(t.weight_kg)} kg on {_fmt(row.pitch_m)} × {_fmt(row.depth_m)} m), hall {hall} is rated {_fmt(rating)} kg/m²")
        if t.liquid_fraction > 0 and row.liquid_loop is None and r.row not in at.loops:
            rep.add(name, "cooling medium", f"{r.rack_type} needs a liquid loop; row '{r.row}' has none{at.where}")
        if t.links > 0:
            _link_check(name, r.link_class, t, length, site, rep)


def _link_check(name, link_class, t: RackType, length: float, site: _Site, rep: VerifyReport) -> None:
    if link_class is None:
        rep.add(name, "cable reach", f"{t.id} has {t.links} fabric links but no link class")
        return
    lc = site.links.get(link_class)
    if lc is None or link_class not in t.link_classes:
        rep.add(name, "cable reach", f"link class '{link_class}' is not accepted by {t.id} (accepted: {', '.join(t.link_classes)})")
        return
    if length > lc.max_length_m + TOL:
        rep.add(name, "cable reach", f"cable {_fmt(length)} m exceeds {link_class} reach {_fmt(lc.max_length_m)} m")
        return
    if t.max_cable_m is not None and length > t.max_cable_m + TOL:
        rep.add(name, "cable reach", f"cable {_fmt(length)} m exceeds {t.id}'s limit {_fmt(t.max_cable_m)} m")
        return
    reach = [site.links[c] for c in t.link_classes if c in site.links and site.links[c].max_length_m + TOL >= length]
    best = min(reach, key=lambda c: (c.max_length_m, c.cost_usd_per_link, c.id))
    if best.id != link_class:
        rep.add(name, "link class", f"link class '{link_class}' is not the shortest-reach class that covers {_fmt(length)} m ('{best.id}')")


def _phase_name(scenario: Scenario, index: int) -> str:
    return str(scenario.phases[index].id) if scenario.phases else "the first"


def _row_loads(racks, scenario: Scenario, site: _Site, state: _Phase, policy: bool = False) -> dict[str, float]:
    """kW per row: its racks standing, any pod network rack standing in it (from its row's phase)
    and the designed-fabric power charged to it. ``policy``: in a contingency that hits the row,
    each rack at the share its cluster's failover policy leaves it (keep 1, cap cap_ratio, shed 0;
    SPEC §4); network racks and switches in full."""
    types = scenario.catalog.by_id()
    share = {c.id: c.on_power_failure.factor(c.cap_ratio) for c in scenario.clusters} if policy else {}
    loads: dict[str, float] = defaultdict(float)
    for r in racks:
        if r.row in site.rows and r.rack_type in types:
            loads[r.row] += scenario.rack_power_kw(types[r.rack_type]) * share.get(r.cluster, 1.0)
    for row, t in _network_load(scenario, site):
        if site.on.get(row, 0) <= state.index:
            loads[row] += scenario.rack_power_kw(t)
    for row, kw in state.fabric_kw.items():
        loads[row] += kw
    return loads


def _spread(kw: float, feeds: list[str], dead: set[str], site: _Site) -> dict[str, float] | None:
    """kW each node carries of one row's load with ``dead`` nodes failed; none if no feed is live."""
    live = [f for f in feeds if f not in dead]
    if not live:
        return None
    out: dict[str, float] = defaultdict(float)
    for f in live:
        for a in site.up(f):
            out[a] += kw / len(live)
    return out


def _power_checks(scenario: Scenario, site: _Site, rep: VerifyReport, st: _Phase, usage: bool) -> None:
    row_loads = _row_loads(st.racks, scenario, site, st)
    hit_loads = _row_loads(st.racks, scenario, site, st, policy=True)
    gone: set[str] = set()
    for v in st.offline:
        if v in site.nodes:
            gone |= site.down(v)
    usable = {nid: node.usable_kw + st.node_add.get(nid, 0.0) for nid, node in site.nodes.items()}
    normal: dict[str, float] = defaultdict(float)
    for row_id, kw in row_loads.items():
        spread = _spread(kw, site.rows[row_id][2].feeds, gone, site)
        if spread is None:
            if kw > TOL:
                rep.add(row_id, "power", f"{_fmt(kw)} kW stand in a row with no feed online{st.where}")
            continue
        for v, x in spread.items():
            normal[v] += x
    worst: dict[str, tuple[float, str | None]] = {n: (normal.get(n, 0.0), None) for n in site.nodes}
    for nid, node in site.nodes.items():
        if normal.get(nid, 0.0) > usable[nid] + TOL:
            rep.add(nid, "power", f"normal load {_fmt(normal[nid])} kW exceeds {_fmt(usable[nid])} kW "
                    f"(derate {node.effective_derate:g} × {_fmt(node.capacity_kw)} kW{' + retrofit' if nid in st.node_add else ''}){st.where}")
    rows_of_feed: dict[str, list[str]] = defaultdict(list)
    for row_id in row_loads:
        for f in site.rows[row_id][2].feeds:
            rows_of_feed[f].append(row_id)
    for fid, fnode in site.nodes.items():
        if not fnode.can_fail or fid in gone:
            continue
        dead = site.down(fid) | gone
        hit = sorted({r for f in site.down(fid) for r in rows_of_feed.get(f, [])})
        change: dict[str, float] = defaultdict(float)
        for row_id in hit:
            kw = row_loads[row_id]
            feeds = site.rows[row_id][2].feeds
            before = _spread(kw, feeds, gone, site) or {}
            after = _spread(hit_loads.get(row_id, kw), feeds, dead, site)
            if after is None:
                if site.rows[row_id][2].redundant and kw > TOL:
                    rep.add(row_id, "power N-1", f"redundant row loses every feed when {fid} fails ({_fmt(kw)} kW dropped){st.where}")
                after = {}
            for v in set(before) | set(after):
                change[v] += after.get(v, 0.0) - before.get(v, 0.0)
        for v, d in change.items():
            if v in dead or d <= TOL:
                continue
            kw = normal.get(v, 0.0) + d
            if kw > worst[v][0] + TOL:
                worst[v] = (kw, fid)
    for nid in site.nodes:
        w, f = worst[nid]
        if f is not None and w > usable[nid] + TOL and normal.get(nid, 0.0) <= usable[nid] + TOL:
            rep.add(nid, "power N-1", f"load {_fmt(w)} kW exceeds {_fmt(usable[nid])} kW when {f} fails{st.where}")
        if usage:
            rep.usage.append(Usage(kind=LimitKind.power_node, id=nid, value=round(normal.get(nid, 0.0), 6), limit=usable[nid], unit="kW",
                                   worst_value=round(w, 6), worst_failure=f))


def _cooling_checks(scenario: Scenario, site: _Site, rep: VerifyReport, st: _Phase, usage: bool) -> None:
    types = scenario.catalog.by_id()
    heat: dict[str, float] = defaultdict(float)
    placed = [(r.row, types[r.rack_type]) for r in st.racks if r.row in site.rows and r.rack_type in types]
    net = [(row, t) for row, t in _network_load(scenario, site) if site.on.get(row, 0) <= st.index]
    for row_id, t in [*placed, *net]:
        kw = scenario.rack_power_kw(t)
        row = site.rows[row_id][2]
        heat[row.air_zone] += kw * (1 - t.liquid_fraction)
        loop = row.liquid_loop or (st.loops[row_id].id if row_id in st.loops else None)
        if loop is not None:
            heat[loop] += kw * t.liquid_fraction
    for row_id, kw in st.fabric_kw.items():  # switches are air cooled
        heat[site.rows[row_id][2].air_zone] += kw
    zones = {**site.zones, **{z.id: z for z in st.loops.values()}}
    for zid, z in zones.items():
        h = heat.get(zid, 0.0)
        cap = 0.0 if zid in st.offline else z.capacity_kw + st.zone_add.get(zid, 0.0)
        if h > cap + TOL:
            why = "not online yet" if zid in st.offline else f"{z.units - z.redundant_units} of {z.units} units × {_fmt(z.unit_capacity_kw)} kW" + (" + retrofit" if zid in st.zone_add else "")
            rep.add(zid, "cooling", f"{z.medium.value} heat {_fmt(h)} kW exceeds {_fmt(cap)} kW ({why}){st.where}")
        if usage:
            rep.usage.append(Usage(kind=LimitKind.cooling_zone, id=zid, value=round(h, 6), limit=cap, unit="kW"))


def _pod_checks(plan: Plan, scenario: Scenario, site: _Site, rep: VerifyReport) -> None:
    types = scenario.catalog.by_id()
    gpus: dict[str, int] = defaultdict(int)
    racks: dict[str, int] = defaultdict(int)
    for r in plan.racks:
        if r.row in site.rows and r.rack_type in types:
            pod = site.rows[r.row][2].pod
            gpus[pod] += types[r.rack_type].gpus
            racks[pod] += 1
    for pid, p in site.pods.items():
        if gpus[pid] > p.max_gpus:
            rep.add(pid, "pod GPUs", f"{gpus[pid]} GPUs exceed the pod's {p.max_gpus} GPU ports")
        rep.usage.append(Usage(kind=LimitKind.pod_gpus, id=pid, value=gpus[pid], limit=p.max_gpus, unit="GPUs"))
        if p.max_racks is not None:
            if racks[pid] > p.max_racks:
                rep.add(pid, "pod racks", f"{racks[pid]} racks exceed the pod's limit of {p.max_racks}")
            rep.usage.append(Usage(kind=LimitKind.pod_racks, id=pid, value=racks[pid], limit=p.max_racks, unit="racks"))


def _hall_usage(plan: Plan, site: _Site, rep: VerifyReport) -> None:
    used: dict[str, int] = defaultdict(int)
    for r in plan.racks:
        if r.row in site.rows:
            used[site.rows[r.row][1]] += 1
    spots: dict[str, set[int]] = defaultdict(set)
    for p in site.pods.values():
        spots[p.network_rack.row].add(p.network_rack.position)
    usable: dict[str, int] = defaultdict(int)
    halls: list[str] = []
    for rid, (_, hall, row) in site.rows.items():
        if hall not in halls:
            halls.append(hall)
        free = set(range(row.positions)) - set(row.reserved) - spots.get(rid, set())
        usable[hall] += len(free)
    for hid in halls:
        rep.usage.append(Usage(kind=LimitKind.hall_positions, id=hid, value=used[hid], limit=usable[hid], unit="positions"))


def _hops(scenario: Scenario, site: _Site, racks) -> tuple[int, str, int]:
    """(hop count between the cluster's two farthest racks, the tier's name, how many elements it spans)."""
    h = scenario.site.fabric.hops
    buildings = {site.rows[r.row][0] for r in racks}
    if len(buildings) > 1:
        return h.cross_building, "buildings", len(buildings)
    pods = {site.rows[r.row][2].pod for r in racks}
    if len(pods) > 1:
        return h.same_building, "pods", len(pods)
    spots = {(r.row, r.position) for r in racks}
    if len(spots) > 1:
        return h.same_pod, "racks", len(spots)
    return h.same_rack, "rack", len(spots)


def _cluster_checks(plan: Plan, scenario: Scenario, site: _Site, rep: VerifyReport, states: list[_Phase]) -> None:
    types = scenario.catalog.by_id()
    by_cluster: dict[str, list] = defaultdict(list)
    for r in plan.racks:
        if r.rack_type in types:
            by_cluster[r.cluster].append(r)
    names = [p.id for p in scenario.phases]
    for c in scenario.clusters:
        mine = by_cluster.get(c.id, [])
        name = f"cluster {c.id}"
        for st in states:
            gpus = sum(types[r.rack_type].gpus for r in mine if not r.spare and (r.existing or site.phase_index.get(r.phase, 0) <= st.index))
            want = c.gpus
            if c.gpus_by_phase is not None:
                want = 0
                for ph, g in sorted(c.gpus_by_phase.items(), key=lambda kv: names.index(kv[0]) if kv[0] in names else 10**9):
                    if ph in site.phase_index and site.phase_index[ph] <= st.index:
                        want = g
            if c.demand == Demand.exact and gpus != want:
                rep.add(name, "demand", f"{gpus} GPUs placed, exactly {want} wanted{st.where}")
            elif c.demand == Demand.at_least and gpus < (want or 0):
                rep.add(name, "demand", f"{gpus} GPUs placed, at least {want} wanted{st.where}")
            elif c.demand == Demand.max and want is not None and gpus > want:
                rep.add(name, "demand", f"{gpus} GPUs placed, at most {want} wanted{st.where}")
        want_st = storage_racks(scenario, c)
        stored = sum(1 for r in mine if want_st and r.rack_type == c.storage_rack_type)
        if stored != want_st:
            rep.add(name, "storage", f"{stored} storage racks placed, {want_st} wanted")

        want_sp = spares_needed(scenario, c)
        spares = [r for r in mine if r.spare]
        if len(spares) != want_sp:
            rep.add(name, "spares", f"{len(spares)} hot-spare racks placed, {want_sp} wanted"
                    + (f" (availability {c.spare_availability:g}, repair {c.repair_hours:g} h)" if c.spare_availability is not None else ""))
        if any(not types[r.rack_type].gpus for r in spares):
            rep.add(name, "spares", "a hot spare must be a GPU rack of the cluster")
        known = [r for r in mine if r.row in site.rows]
        if len(known) > 1:
            hops, tier, count = _hops(scenario, site, known)
            if hops > c.max_hops:
                rep.add(name, "hops", f"its racks span {count} {tier}: {hops} hops between them, max_hops is {c.max_hops}")


def _spread_checks(plan: Plan, scenario: Scenario, site: _Site, rep: VerifyReport) -> None:
    """Failure-domain spread (§11): per cluster with a limit, the GPUs one power node (rows it
    leaves with no feed; for a shed cluster every row it hits), cooling zone or pod takes down."""
    limited = [c for c in scenario.clusters
               if (c.max_share_per_power_node, c.max_share_per_cooling_zone, c.max_share_per_pod) != (None, None, None)]
    if not limited:
        return
    types = scenario.catalog.by_id()
    per_row: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in plan.racks:
        t = types.get(r.rack_type)
        if t is not None and t.gpus and r.row in site.rows:
            per_row[r.cluster][r.row] += t.gpus
    zone_rows: dict[str, set[str]] = defaultdict(set)
    pod_rows: dict[str, set[str]] = defaultdict(set)
    for rid, (_, _, row) in site.rows.items():
        zone_rows[row.air_zone].add(rid)
        if row.liquid_loop:
            zone_rows[row.liquid_loop].add(rid)
        pod_rows[row.pod].add(rid)
    for c in limited:
        mine = per_row.get(c.id, {})
        total = sum(mine.values())
        if not total:
            continue
        domains: list[tuple[str, str, list[str] | set[str], float | None]] = []
        domains += [("cooling_zone", z, rows, c.max_share_per_cooling_zone) for z, rows in zone_rows.items()]
        domains += [("pod", p, rows, c.max_share_per_pod) for p, rows in pod_rows.items()]
        if c.max_share_per_power_node is not None:
            shed = c.on_power_failure.value == "shed"
            for fid, node in site.nodes.items():
                if not node.can_fail:
                    continue
                dead = site.down(fid)
                rows = [r for r in mine if any(f in dead for f in site.rows[r][2].feeds)
                        and (shed or all(f in dead for f in site.rows[r][2].feeds))]
                domains.append(("power_node", fid, rows, c.max_share_per_power_node))
        for kind, eid, rows, share in domains:
            down = sum(mine.get(r, 0) for r in rows)
            if share is not None and down > share * total + 1e-6:
                rep.add(f"cluster {c.id}", "spread", f"{kind} {eid} takes down {down:,} of its {total:,} GPUs ({down / total:.1%}), "
                        f"more than max_share_per_{kind} {share:g}")


def spread_violations(scenario: Scenario, racks: list) -> list[Violation]:
    """Spread-limit violations of a set of racks (for the first-fit start)."""
    rep = VerifyReport()
    _spread_checks(Plan(scenario_name=scenario.name, racks=racks), scenario, _site(scenario), rep)
    return rep.violations


def _fabric_checks(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    """Each designed cluster names an allowed design and stays within what it can build."""
    from planner.fabric import fabric_sizes, limit_text
    from planner.plan import chosen_fabrics

    chosen = chosen_fabrics(plan)
    designs = {d.id: d for d in scenario.fabrics}
    for c in scenario.clusters:
        pick = chosen.get(c.id)
        if pick is not None and (not c.fabrics or pick not in c.fabrics):
            rep.add(f"cluster {c.id}", "fabric", f"built on '{pick}', not one of its designs ({', '.join(c.fabrics or []) or 'none'})")
        elif pick is None and c.fabrics and len(c.fabrics) > 1 and any(r.cluster == c.id for r in plan.racks):
            rep.add(f"cluster {c.id}", "fabric", f"the plan does not say which of {', '.join(c.fabrics)} it is built on")
    for cid, z in fabric_sizes(scenario, plan.racks, chosen).items():
        if z.endpoints > z.max_endpoints:
            rep.add(f"cluster {cid}", "fabric", f"{z.endpoints:,} endpoints, but {limit_text(designs[z.design], scenario.catalog.switch_by_id())}")


def _existing_checks(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    """Installed racks stand in the plan exactly as installed; nothing else is marked installed."""
    def ident(r):
        return (r.building, r.hall, r.row, r.position, r.rack_type, r.cluster)

    mine = {ident(r): r for r in plan.racks if r.existing}
    given = {ident(r): r for r in scenario.existing}
    for k in given:
        if k not in mine:
            rep.add(f"existing {k[2]}/{k[3]}", "existing", f"the installed {k[4]} rack of {k[5]} is missing or was moved")
    for k in mine:
        if k not in given:
            rep.add(f"existing {k[2]}/{k[3]}", "existing", "the plan marks a rack installed that the scenario does not list")


def _retrofit_checks(plan: Plan, scenario: Scenario, site: _Site, rep: VerifyReport) -> None:
    """Retrofits bought exist, once each, in a phase of the scenario, early enough to take effect."""
    by_id = {r.id: r for r in scenario.retrofits}
    seen: set[str] = set()
    last = max(site.phase_index.values())
    for b in plan.retrofits:
        r = by_id.get(b.id)
        if r is None:
            rep.add(f"retrofit {b.id}", "retrofit", f"unknown retrofit '{b.id}'")
            continue
        if b.id in seen:
            rep.add(f"retrofit {b.id}", "retrofit", "bought twice")
        seen.add(b.id)
        if b.phase not in site.phase_index:
            rep.add(f"retrofit {b.id}", "retrofit", f"bought in unknown phase '{b.phase}'")
        elif site.phase_index[b.phase] + r.lead_phases > last:
            rep.add(f"retrofit {b.id}", "retrofit", f"bought in phase {b.phase} with a lead of {r.lead_phases} phases: it would take effect after the last phase")


def _bought(plan: Plan) -> list[tuple[str, str | None]]:
    return [(b.id, b.phase) for b in plan.retrofits]


def _budget_checks(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    b = scenario.budgets
    if b.capex_usd is None and b.it_power_kw is None:
        return
    from planner.plan import chosen_fabrics

    k = compute_kpis(scenario, plan.racks, _bought(plan), chosen_fabrics(plan))
    if b.capex_usd is not None:
        if k.capex_usd > b.capex_usd + 0.01:
            rep.add("budgets.capex_usd", "budget", f"capex ${_fmt(k.capex_usd)} exceeds the budget ${_fmt(b.capex_usd)}")
        rep.usage.append(Usage(kind=LimitKind.budget, id="capex_usd", value=k.capex_usd, limit=b.capex_usd, unit="USD"))
    if b.it_power_kw is not None:
        if k.racks_kw > b.it_power_kw + TOL:
            rep.add("budgets.it_power_kw", "budget", f"IT power of the placed racks {_fmt(k.racks_kw)} kW exceeds the budget {_fmt(b.it_power_kw)} kW")
        rep.usage.append(Usage(kind=LimitKind.budget, id="it_power_kw", value=k.racks_kw, limit=b.it_power_kw, unit="kW"))


def _close(a: float | None, b: float | None, rel: float = 1e-6, abs_: float = 1e-6) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


OBJECTIVE_KPI = {Objective.max_gpus: "gpus", Objective.max_pflops: "pflops_bf16", Objective.min_capex: "capex_usd", Objective.min_tco: "tco_usd"}
"""Objective → the KPI it optimises (the objective value a plan claims is that KPI)."""


def _claim_checks(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    """A plan is a claim: KPIs, utilisation, objective, bound, gap and status are recomputed
    from the racks and the scenario and must match what the plan states."""
    from planner.plan import chosen_fabrics

    kpis = compute_kpis(scenario, plan.racks, _bought(plan), chosen_fabrics(plan))
    if plan.kpis is not None:
        kpis = kpis.model_copy(update={"stranded_kw": stranded_power(scenario, plan.racks, rep.usage)[0]})
        for key, want in kpis.model_dump().items():
            got = getattr(plan.kpis, key)
            if not _close(float(got), float(want)):
                rep.add(f"kpis.{key}", "claim", f"plan says {_fmt(got)}, the racks give {_fmt(want)}")
    if plan.utilisation is not None:
        mine = {(u.kind, u.id): u for u in rep.usage}
        theirs = {(u.kind, u.id): u for u in plan.utilisation}
        for key in sorted(set(mine) | set(theirs)):
            a, b = theirs.get(key), mine.get(key)
            if a is None or b is None:
                rep.add(f"utilisation {key[0]} {key[1]}", "claim", "listed in the plan but not a limit of the scenario" if b is None else "missing from the plan")
                continue
            for f in ("value", "limit", "worst_value"):
                if not _close(getattr(a, f), getattr(b, f)):
                    rep.add(f"utilisation {key[0]} {key[1]}", "claim", f"{f}: plan says {getattr(a, f)}, the racks give {getattr(b, f)}")
            if a.worst_failure != b.worst_failure and not _close(a.worst_value, b.worst_value):
                rep.add(f"utilisation {key[0]} {key[1]}", "claim", f"worst failure: plan says {a.worst_failure}, the racks give {b.worst_failure}")
    if plan.phases:  # a plan that states no summary claims none
        want = phase_summaries(scenario, plan.racks, _bought(plan), rep.phase_usage)
        if [p.model_dump() for p in plan.phases] != [p.model_dump() for p in want]:
            got = {p.phase: p for p in plan.phases}
            for w in want:
                g = got.get(w.phase)
                if g is None or g.model_dump() != w.model_dump():
                    diff = "missing" if g is None else ", ".join(f"{k}: plan says {getattr(g, k)}, the racks give {getattr(w, k)}"
                                                                 for k in type(w).model_fields if getattr(g, k) != getattr(w, k))
                    rep.add(f"phases {w.phase}", "claim", diff)
    if plan.fabric is not None:
        from planner.fabric import fabric_sizes

        want_f = {cid: z for cid, z in fabric_sizes(scenario, plan.racks, chosen_fabrics(plan)).items()}
        got_f = {f.cluster: f for f in plan.fabric}
        for cid in sorted(set(want_f) | set(got_f)):
            g, z = got_f.get(cid), want_f.get(cid)
            if g is None or z is None:
                rep.add(f"fabric {cid}", "claim", "missing from the plan" if g is None else "the cluster has no fabric design")
                continue
            w = fabric_entry(cid, z)
            if g.model_dump() != w.model_dump():
                diff = ", ".join(f"{k}: plan says {getattr(g, k)}, the racks give {getattr(w, k)}" for k in type(w).model_fields if getattr(g, k) != getattr(w, k))
                rep.add(f"fabric {cid}", "claim", diff)
    if plan.reliability is not None:
        from planner.reliability import reliability_report

        want_r = reliability_report(scenario, plan.racks)
        got_c = {c.cluster: c for c in plan.reliability.clusters}
        for w in want_r.clusters:
            g = got_c.get(w.cluster)
            if g is None or g.model_dump() != w.model_dump():
                diff = "missing" if g is None else ", ".join(f"{k}: plan says {getattr(g, k)}, the racks give {getattr(w, k)}"
                                                             for k in type(w).model_fields if getattr(g, k) != getattr(w, k))
                rep.add(f"reliability cluster {w.cluster}", "claim", diff)
        got_b = {(b.kind, b.id): b for b in plan.reliability.blast_radius}
        want_b = {(b.kind, b.id): b for b in want_r.blast_radius}
        for key in sorted(set(got_b) | set(want_b)):
            g, w = got_b.get(key), want_b.get(key)
            if g is None or w is None or g.model_dump() != w.model_dump():
                what = ("takes down nothing" if w is None else "missing from the plan" if g is None
                        else ", ".join(f"{k}: plan says {getattr(g, k)}, the racks give {getattr(w, k)}" for k in type(w).model_fields if getattr(g, k) != getattr(w, k)))
                rep.add(f"blast radius {key[0]} {key[1]}", "claim", what)
    status = plan.status
    if not status.has_plan and plan.racks:
        rep.add("status", "claim", f"status {status.value} says there is no plan, but the plan lists {len(plan.racks)} racks")
    if status in (Status.optimal, Status.feasible) or (status == Status.not_solved and plan.objective_value is not None):
        objective = Objective(scenario.objective)
        obj = objective_value(scenario, plan.racks, _bought(plan), chosen_fabrics(plan))
        if plan.objective and plan.objective != objective.value:
            rep.add("objective", "claim", f"plan optimised {plan.objective}, the scenario asks for {objective.value}")
        if plan.objective_value is None or not _close(plan.objective_value, obj, rel=1e-6, abs_=1e-4):
            rep.add("objective_value", "claim", f"plan says {plan.objective_value}, the racks give {_fmt(obj)}")
        slack = 1e-6 * max(1.0, abs(obj))
        if plan.bound is not None and ((objective.maximise and plan.bound < obj - slack) or (not objective.maximise and plan.bound > obj + slack)):
            rep.add("bound", "claim", f"bound {_fmt(plan.bound)} is on the wrong side of the objective {_fmt(obj)}")
        gap = abs(plan.bound - obj) / max(abs(obj), 1.0) if plan.bound is not None else None
        if (plan.gap is None) != (gap is None) or (gap is not None and not _close(plan.gap, gap, rel=1e-4, abs_=1e-6)):
            rep.add("gap", "claim", f"plan says {plan.gap}, its bound and racks give {gap if gap is None else round(gap, 9)}")
        if status == Status.optimal and (gap is None or gap > scenario.solver.rel_gap + 1e-9):
            rep.add("status", "claim", f"optimal needs a gap within {scenario.solver.rel_gap:g}; the gap is {'unknown' if gap is None else f'{gap:.6g}'}")


def fabric_entry(cluster: str, z):
    """The plan's record of one cluster's sized fabric."""
    from planner.plan import ClusterFabric

    return ClusterFabric(cluster=cluster, design=z.design, endpoints=z.endpoints, switches=z.switches, links=z.links, kw=round(z.kw, 6),
                         capex_usd=round(z.capex_usd, 2), network_racks=z.network_racks, max_endpoints=z.max_endpoints, max_hops=z.max_hops)


def scenario_mismatch(plan: Plan, scenario: Scenario) -> str | None:
    """One line when a plan was made for another scenario (name and hash both differ), else none."""
    from planner.loader import scenario_hash

    want = scenario_hash(scenario)
    if plan.scenario_hash and plan.scenario_hash != want and plan.scenario_name != scenario.name:
        return f"plan was made for '{plan.scenario_name}' (hash {plan.scenario_hash}), not '{scenario.name}' (hash {want})"
    return None


def verify(plan: Plan, scenario: Scenario) -> VerifyReport:
    """Check every constraint of ``scenario`` on ``plan`` (list in the module docstring) and
    every figure the plan claims (:func:`_claim_checks`)."""
    rep = VerifyReport()
    other = scenario_mismatch(plan, scenario)
    if other:
        rep.add("scenario", "scenario", other)
        return rep
    if plan.scenario_hash:
        from planner.loader import scenario_hash

        want = scenario_hash(scenario)
        if plan.scenario_hash != want:
            rep.add("scenario_hash", "claim", f"plan says {plan.scenario_hash}, scenario '{scenario.name}' hashes to {want} (it changed since the plan was made)")
    if plan.scenario_name != scenario.name:
        rep.add("scenario_name", "claim", f"plan says '{plan.scenario_name}', the scenario is '{scenario.name}'")
    site = _site(scenario)
    states = _phases(plan, scenario, site)
    _rack_checks(plan, scenario, site, rep, states)
    _existing_checks(plan, scenario, rep)
    _retrofit_checks(plan, scenario, site, rep)
    for st in states:
        last = st is states[-1]
        if st.id is not None:
            before = len(rep.usage)
            _power_checks(scenario, site, rep, st, usage=True)
            _cooling_checks(scenario, site, rep, st, usage=True)
            rep.phase_usage[st.id] = rep.usage[before:]
            if not last:
                del rep.usage[before:]
        else:
            _power_checks(scenario, site, rep, st, usage=last)
            _cooling_checks(scenario, site, rep, st, usage=last)
    _pod_checks(plan, scenario, site, rep)
    _hall_usage(plan, site, rep)
    _cluster_checks(plan, scenario, site, rep, states)
    _spread_checks(plan, scenario, site, rep)
    _fabric_checks(plan, scenario, rep)
    _budget_checks(plan, scenario, rep)
    _claim_checks(plan, scenario, rep)
    return rep
