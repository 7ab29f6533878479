"""Capacity checks: power in normal operation and under every single failure (with failover
policies), cooling per zone and loop, pod ports and racks, and the use of every limit."""

from __future__ import annotations

from collections import defaultdict

from planner.enums import LimitKind
from planner.schema import Plan, Scenario, Usage
from planner.verifier.report import TOL, VerifyReport, fmt
from planner.verifier.rules_recount import arrived_kw, network_kw, planning_kw, standing_racks, structure_pue
from planner.verifier.site import PhaseState, SiteView, network_load


def row_loads(
    racks, scenario: Scenario, site: SiteView, state: PhaseState, policy: bool = False
) -> dict[str, float]:
    """kW per row: its racks standing, any pod network rack standing in it (from its row's phase)
    and the designed-fabric power charged to it. ``policy``: in a contingency that hits the row,
    each rack at the share its cluster's failover policy leaves it (keep 1, cap cap_ratio, shed 0;
    SPEC §4); network racks and switches in full."""
    kw_of = {t.id: planning_kw(scenario, t) for t in scenario.catalog.rack_types}
    share = {c.id: c.on_power_failure.factor(c.cap_ratio) for c in scenario.clusters} if policy else {}
    loads: dict[str, float] = defaultdict(float)
    for r in racks:
        kw = kw_of.get(r.rack_type)
        if kw is not None and r.row in site.rows:
            loads[r.row] += kw * share.get(r.cluster, 1.0)
    for row, t in network_load(scenario, site):
        if site.on.get(row, 0) <= state.index:
            loads[row] += planning_kw(scenario, t)
    for row, kw in state.fabric_kw.items():
        loads[row] += kw
    return loads


def feed_shares(kw: float, feeds: list[str], dead: set[str], site: SiteView) -> dict[str, float] | None:
    """kW each node carries of one row's load with ``dead`` nodes failed; none if no feed is live."""
    live = [f for f in feeds if f not in dead]
    if not live:
        return None
    out: dict[str, float] = defaultdict(float)
    for f in live:
        for a in site.up(f):
            out[a] += kw / len(live)
    return out


def power_checks(scenario: Scenario, site: SiteView, rep: VerifyReport, st: PhaseState, usage: bool) -> None:
    """Power in one phase: every node's normal load (rows split evenly over their live feeds, a node
    carrying its subtree) within derate × capacity; under each single failure of a node that can
    fail, the survivors within it too (a change from normal over the rows the failure hits)."""
    loads = row_loads(st.racks, scenario, site, st)
    gone: set[str] = set()
    for v in st.offline:
        if v in site.nodes:
            gone |= site.down(v)
    usable = {nid: node.usable_kw + st.node_add.get(nid, 0.0) for nid, node in site.nodes.items()}
    normal = _normal_loads(loads, gone, site, rep, st)
    for nid, node in site.nodes.items():
        if normal.get(nid, 0.0) > usable[nid] + TOL:
            more = " + retrofit" if nid in st.node_add else ""
            rep.add(
                nid,
                "power",
                f"normal load {fmt(normal[nid])} kW exceeds {fmt(usable[nid])} kW "
                f"(derate {node.effective_derate:g} × {fmt(node.capacity_kw)} kW{more}){st.where}",
            )
    worst = _worst_failures(scenario, site, rep, st, loads, normal, gone)
    for nid in site.nodes:
        w, f = worst[nid]
        if f is not None and w > usable[nid] + TOL and normal.get(nid, 0.0) <= usable[nid] + TOL:
            rep.add(
                nid, "power N-1", f"load {fmt(w)} kW exceeds {fmt(usable[nid])} kW when {f} fails{st.where}"
            )
        if usage:
            rep.usage.append(
                Usage(
                    kind=LimitKind.power_node,
                    id=nid,
                    value=round(normal.get(nid, 0.0), 6),
                    limit=usable[nid],
                    unit="kW",
                    worst_value=round(w, 6),
                    worst_failure=f,
                )
            )


def _normal_loads(loads: dict[str, float], gone: set[str], site: SiteView, rep: VerifyReport, st: PhaseState):
    """Node → its load in normal operation, kW (a loaded row with no feed online is a violation)."""
    normal: dict[str, float] = defaultdict(float)
    for row_id, kw in loads.items():
        spread = feed_shares(kw, site.rows[row_id][2].feeds, gone, site)
        if spread is None:
            if kw > TOL:
                rep.add(row_id, "power", f"{fmt(kw)} kW stand in a row with no feed online{st.where}")
            continue
        for v, x in spread.items():
            normal[v] += x
    return normal


class _Both:
    """Membership in either of two sets (the failed node's subtree, the nodes not online yet)."""

    def __init__(self, a: set[str], b: set[str]):
        self.a, self.b = a, b

    def __contains__(self, x: object) -> bool:
        return x in self.a or x in self.b


def _worst_failures(scenario, site: SiteView, rep: VerifyReport, st: PhaseState, loads, normal, gone):
    """Node → (its worst load under a single failure, the failed node; None: normal is the worst)."""
    hit_loads = row_loads(st.racks, scenario, site, st, policy=True)
    worst: dict[str, tuple[float, str | None]] = {n: (normal.get(n, 0.0), None) for n in site.nodes}
    rows_of_feed: dict[str, list[str]] = defaultdict(list)
    for row_id in loads:
        for f in site.rows[row_id][2].feeds:
            rows_of_feed[f].append(row_id)
    for fid, fnode in site.nodes.items():
        if not fnode.can_fail or fid in gone:
            continue
        dead = _Both(site.down(fid), gone)  # failed and offline, without copying the offline set
        hit = sorted({r for f in site.down(fid) for r in rows_of_feed.get(f, [])})
        for v, d in _failure_change(fid, hit, loads, hit_loads, gone, dead, site, rep, st).items():
            if v in dead or d <= TOL:
                continue
            kw = normal.get(v, 0.0) + d
            if kw > worst[v][0] + TOL:
                worst[v] = (kw, fid)
    return worst


def _failure_change(
    fid, hit, loads, hit_loads, gone, dead, site: SiteView, rep: VerifyReport, st: PhaseState
):
    """Node → the change of its load when ``fid`` fails, over the rows the failure hits (their
    racks at the power their failover policy leaves them); a redundant row losing every feed is a
    violation."""
    change: dict[str, float] = defaultdict(float)
    for row_id in hit:
        kw = loads[row_id]
        feeds = site.rows[row_id][2].feeds
        before = feed_shares(kw, feeds, gone, site) or {}
        after = feed_shares(hit_loads.get(row_id, kw), feeds, dead, site)
        if after is None:
            if site.rows[row_id][2].redundant and kw > TOL:
                what = f"redundant row loses every feed when {fid} fails ({fmt(kw)} kW dropped){st.where}"
                rep.add(row_id, "power N-1", what)
            after = {}
        for v in set(before) | set(after):
            change[v] += after.get(v, 0.0) - before.get(v, 0.0)
    return change


def arrival_checks(
    scenario: Scenario, site: SiteView, rep: VerifyReport, st: PhaseState, usage: bool
) -> None:
    """Region power arrived by the phase (§16): Σ over rows of the design-day PUE of the row's building
    (a structure's own, else the scenario's; the annual one unless stated) × (every load standing in it:
    racks and installed racks with the back-end network of those outside a designed fabric, network
    racks, designed-fabric power) ≤ interconnect + generation arrived, kW."""
    available = arrived_kw(scenario, st.index)
    if available is None:
        return
    kinds = scenario.catalog.by_id()
    facility, pues = 0.0, set()
    for row, kw in row_loads(st.racks, scenario, site, st).items():
        pue, which = structure_pue(scenario, site.rows[row][0], design_day=True)
        facility += pue * kw
        pues.add((pue, which))
    designed = {c.id for c in scenario.clusters if c.fabrics}
    for r in st.racks:  # a rack outside a designed fabric draws its back-end network too
        t = kinds.get(r.rack_type)
        if t is not None and r.cluster not in designed and r.row in site.rows:
            facility += structure_pue(scenario, site.rows[r.row][0], design_day=True)[0] * network_kw(
                scenario, t
            )
    how = f"{pues.pop()[1]} {fmt(pue)}" if len(pues) == 1 else "each building's design-day PUE"
    if facility > available + TOL:
        rep.add(
            "power_arrival",
            "power arrival",
            f"facility load {fmt(facility)} kW (IT × {how}) exceeds the "
            f"{fmt(available)} kW of interconnect and generation arrived{st.where}",
        )
    if usage:
        rep.usage.append(
            Usage(
                kind=LimitKind.power_arrival,
                id="region",
                value=round(facility, 6),
                limit=available,
                unit="kW",
            )
        )


def supply_checks(scenario: Scenario, rep: VerifyReport, st: PhaseState, usage: bool) -> None:
    """Rack supply (§17): racks of a supplied type placed by the phase (a unit counts one; racks
    installed before the plan do not count) ≤ racks of it delivered by then."""
    order = {p.id: i for i, p in enumerate(scenario.phases)}
    for t in sorted({x.rack_type for x in scenario.supply}):
        delivered = sum(
            x.racks for x in scenario.supply if x.rack_type == t and order.get(x.phase, 0) <= st.index
        )
        placed = sum(1 for r in st.racks if r.rack_type == t and (not r.existing or r.phase is not None))
        if placed > delivered:
            rep.add(
                f"supply {t}", "supply", f"{placed:,} {t} racks placed, {delivered:,} delivered{st.where}"
            )
        if usage:
            rep.usage.append(
                Usage(kind=LimitKind.supply, id=t, value=float(placed), limit=float(delivered), unit="racks")
            )


def cooling_checks(
    scenario: Scenario, site: SiteView, rep: VerifyReport, st: PhaseState, usage: bool
) -> None:
    types = scenario.catalog.by_id()
    heat: dict[str, float] = defaultdict(float)
    placed = [(r.row, types[r.rack_type]) for r in st.racks if r.row in site.rows and r.rack_type in types]
    net = [(row, t) for row, t in network_load(scenario, site) if site.on.get(row, 0) <= st.index]
    for row_id, t in [*placed, *net]:
        kw = planning_kw(scenario, t)
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
        out = 1 if _maintained_zone(scenario, site, zid) else 0  # §21: one unit in maintenance
        cap = 0.0 if zid in st.offline else max(0, z.units - z.redundant_units - out) * z.unit_capacity_kw
        cap += 0.0 if zid in st.offline else st.zone_add.get(zid, 0.0)
        if h > cap + TOL:
            why = (
                "not online yet"
                if zid in st.offline
                else f"{max(0, z.units - z.redundant_units - out)} of {z.units} units × "
                f"{fmt(z.unit_capacity_kw)} kW"
                + (", one in maintenance" if out else "")
                + (" + retrofit" if zid in st.zone_add else "")
            )
            rep.add(
                zid, "cooling", f"{z.medium.value} heat {fmt(h)} kW exceeds {fmt(cap)} kW ({why}){st.where}"
            )
        if usage:
            rep.usage.append(
                Usage(kind=LimitKind.cooling_zone, id=zid, value=round(h, 6), limit=cap, unit="kW")
            )


def _maintained_zone(scenario: Scenario, site: SiteView, zid: str) -> bool:
    """Whether cooling units are maintained in the zone's building (§21)."""
    b = site.zone_building.get(zid)
    return b is not None and any(
        m.kind == "cooling_unit" and (not m.buildings or b in m.buildings) for m in scenario.maintenance
    )


def standing_sets(plan: Plan, scenario: Scenario) -> list[list]:
    """The racks to count against a limit that racks free when they retire: all of them, or with
    service lives (§17) the racks standing in each phase."""
    if not scenario.service_life:
        return [plan.racks]
    return [standing_racks(scenario, plan.racks, i) for i in range(len(scenario.phases))]


def pod_checks(plan: Plan, scenario: Scenario, site: SiteView, rep: VerifyReport) -> None:
    """GPUs and racks per pod (in every phase, when racks retire: the most in any)."""
    types = scenario.catalog.by_id()
    gpus: dict[str, int] = defaultdict(int)
    racks: dict[str, int] = defaultdict(int)
    for standing in standing_sets(plan, scenario):
        g: dict[str, int] = defaultdict(int)
        n: dict[str, int] = defaultdict(int)
        for r in standing:
            if r.row in site.rows and r.rack_type in types:
                pod = site.rows[r.row][2].pod
                g[pod] += types[r.rack_type].gpus
                n[pod] += 1
        for pod in g.keys() | n.keys():
            gpus[pod] = max(gpus[pod], g[pod])
            racks[pod] = max(racks[pod], n[pod])
    for pid, p in site.pods.items():
        if gpus[pid] > p.max_gpus:
            rep.add(pid, "pod GPUs", f"{gpus[pid]} GPUs exceed the pod's {p.max_gpus} GPU ports")
        rep.usage.append(
            Usage(kind=LimitKind.pod_gpus, id=pid, value=gpus[pid], limit=p.max_gpus, unit="GPUs")
        )
        if p.max_racks is not None:
            if racks[pid] > p.max_racks:
                rep.add(pid, "pod racks", f"{racks[pid]} racks exceed the pod's limit of {p.max_racks}")
            rep.usage.append(
                Usage(kind=LimitKind.pod_racks, id=pid, value=racks[pid], limit=p.max_racks, unit="racks")
            )


def hall_usage(plan: Plan, scenario: Scenario, site: SiteView, rep: VerifyReport) -> None:
    """Positions used per hall (a multi-rack unit uses its width) against the usable ones."""
    width = {t.id: t.width for t in scenario.catalog.rack_types}
    used: dict[str, int] = defaultdict(int)
    for standing in standing_sets(plan, scenario):
        here: dict[str, int] = defaultdict(int)
        for r in standing:
            if r.row in site.rows:
                here[site.rows[r.row][1]] += width.get(r.rack_type, 1)
        for hall, k in here.items():
            used[hall] = max(used[hall], k)
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
        rep.usage.append(
            Usage(kind=LimitKind.hall_positions, id=hid, value=used[hid], limit=usable[hid], unit="positions")
        )
