"""Placement checks: every rack stands where the site says it may (row, position, coordinates,
cable length), fits its row (power, weight, floor load, cooling medium, link class), belongs to a
cluster that may use it; installed racks untouched; retrofits bought once, in time."""

from __future__ import annotations

import bisect
from collections import defaultdict

from planner.enums import RackLimitBasis
from planner.schema import Plan, RackType, Scenario
from planner.verifier.asks_recount import storage_wanted
from planner.verifier.report import TOL, VerifyReport, fmt
from planner.verifier.rules_recount import nameplate_kw, planning_kw, retired_at
from planner.verifier.site import PhaseState, SiteView, cable_m, phase_name


def rack_checks(
    plan: Plan, scenario: Scenario, site: SiteView, rep: VerifyReport, states: list[PhaseState]
) -> None:
    """Every placed rack: where it stands, when, and whether it fits (module docstring)."""
    checks = _RackChecks(scenario, site, rep, states)
    for i, r in enumerate(plan.racks):
        checks.rack(i, r)


INSTALLED = "installed"
"""Cluster of installed racks that only draw power (``planner import netbox``: a NetBox rack holding
devices that are no planned cluster's): an existing rack of it whose type holds no GPUs serves no
cluster of the scenario; its power, weight, position and cooling are checked as any rack's."""


class _RackChecks:
    """The placement checks of one plan's racks, with what earlier racks took and the verdicts of
    racks alike (judged once)."""

    def __init__(self, scenario: Scenario, site: SiteView, rep: VerifyReport, states: list[PhaseState]):
        self.scenario, self.site, self.rep, self.states = scenario, site, rep, states
        self.types = scenario.catalog.by_id()
        clusters = self.clusters = {c.id: c for c in scenario.clusters}
        stores = {c.id: storage_wanted(scenario, c) > 0 for c in scenario.clusters}  # once per cluster
        self.pod_spots = {(p.network_rack.row, p.network_rack.position): p.id for p in site.pods.values()}
        self.taken: dict[tuple[str, int], int] = {}
        self.held: dict[tuple[str, int], list[tuple[int, tuple[int, int]]]] = {}
        self.seen: dict[tuple, list[tuple[str, str]]] = {}
        self.structures = {
            r.effect.building: r.effect.structure
            for r in scenario.retrofits
            if r.effect.kind == "build_structure"
        }
        self.fit = _fit_checks(scenario, site, clusters, stores)
        self.links_ok: dict[tuple, bool] = {}
        self.edges = sorted(
            {c.max_length_m for c in site.links.values()}
            | {t.max_cable_m for t in self.types.values() if t.max_cable_m is not None}
        )

    def rack(self, i: int, r) -> None:
        name = f"racks[{i}] ({r.row}/{r.position})"
        ref = self.site.rows.get(r.row)
        if ref is None:
            self.rep.add(name, "placement", f"unknown row '{r.row}'")
            return
        if not self.position(name, i, r, ref):
            return
        length = self.geometry(name, r)
        t = self.types.get(r.rack_type)
        if t is None:
            self.rep.add(name, "rack type", f"unknown rack type '{r.rack_type}'")
            return
        if t.width > 1:
            _unit_span(name, r, t, ref[2], self.pod_spots, self.taken, i, self.rep)
        at = self.when(name, r, ref[0], t)
        if at is None:
            return
        load_only = r.existing and r.cluster == INSTALLED and t.gpus == 0 and r.cluster not in self.clusters
        key = (r.cluster, r.rack_type, r.row, at.index, load_only)
        if (
            key not in self.seen
        ):  # racks alike in cluster, type, row and phase pass or fail alike: judged once
            self.seen[key] = self.fit(r.cluster, r.rack_type, r.row, t, ref[1], ref[2], at, load_only)
        for check, message in self.seen[key]:
            self.rep.add(name, check, message)
        if t.links > 0:
            self.link(name, r, t, length)

    def position(self, name: str, i: int, r, ref) -> bool:
        """The row's building and hall, a usable position, free then; False when out of the row."""
        building, hall, row = ref
        if (building, hall) != (r.building, r.hall):
            self.rep.add(
                name, "placement", f"row '{r.row}' is in {building}/{hall}, not {r.building}/{r.hall}"
            )
        if r.position >= row.positions:
            self.rep.add(name, "placement", f"position {r.position} is outside 0..{row.positions - 1}")
            return False
        if r.position in row.reserved:
            self.rep.add(name, "placement", f"position {r.position} is reserved")
        if (r.row, r.position) in self.pod_spots:
            pod = self.pod_spots[r.row, r.position]
            self.rep.add(name, "placement", f"position {r.position} holds pod {pod}'s network rack")
        if self.scenario.service_life:
            self.over_time(name, i, r)
        elif (r.row, r.position) in self.taken:
            self.rep.add(name, "placement", f"position already holds racks[{self.taken[r.row, r.position]}]")
        elif r.retired is not None:
            what = f"says retired from {r.retired}, but its rack type has no service life"
            self.rep.add(name, "retired", what)
        self.taken.setdefault((r.row, r.position), i)
        return True

    def over_time(self, name: str, i: int, r) -> None:
        """With service lives (§17) a position holds one rack at a time, from its phase to its
        retirement, and each rack states the phase it retires in."""
        span = _span(self.scenario, self.site, r)
        here = self.held.setdefault((r.row, r.position), [])
        clash = next((j for j, other in here if other[0] < span[1] and span[0] < other[1]), None)
        if clash is not None:
            self.rep.add(name, "placement", f"position already holds racks[{clash}] then")
        here.append((i, span))
        until = retired_at(self.scenario, r.rack_type, r.phase)
        want = None if until is None else self.scenario.phases[until].id
        if r.retired != want:
            ends = ("in " + want) if want else "after the last phase"
            self.rep.add(
                name, "retired", f"says retired from {r.retired or 'never'}; its service life ends {ends}"
            )

    def geometry(self, name: str, r) -> float:
        """Coordinates and cable length as the site gives them; the cable length, m."""
        x, y = self.site.xy(r.row, r.position)
        if abs(x - r.x_m) > TOL or abs(y - r.y_m) > TOL:
            self.rep.add(
                name, "geometry", f"coordinates ({r.x_m}, {r.y_m}) differ from the site's ({x}, {y})"
            )
        length = cable_m(self.site, self.scenario, r.row, r.position)
        if abs(length - r.cable_length_m) > TOL:
            what = f"cable length {r.cable_length_m} m differs from the site's {length} m"
            self.rep.add(name, "geometry", what)
        return length

    def when(self, name: str, r, building: str, t: RackType) -> PhaseState | None:
        """The phase the rack is placed in (None when unknown): its lead time, its row online then,
        its structure built then and able to cool it."""
        site, scenario = self.site, self.scenario
        if r.phase is not None and r.phase not in site.phase_index:
            known = ", ".join(str(p) for p in site.phase_index if p is not None) or "none"
            self.rep.add(name, "phase", f"unknown phase '{r.phase}' (phases: {known})")
            return None
        at = self.states[0 if r.existing else site.phase_index.get(r.phase, 0)]
        lead = scenario.lead_phases.get(r.rack_type, 0) if scenario.phases else 0
        if not r.existing and at.index < lead:
            what = (
                f"{r.rack_type} takes {lead} phase(s) from order to standing: none stands in phase {r.phase}"
            )
            self.rep.add(name, "lead time", what)
        if not r.existing and site.on.get(r.row, 0) > at.index:
            first = phase_name(scenario, site.on[r.row])
            self.rep.add(
                name, "phase", f"row '{r.row}' exists only from phase {first}, not in phase {r.phase}"
            )
        if building in self.structures:
            self.structure(name, r, building, t, at)
        return at

    def structure(self, name: str, r, building: str, t: RackType, at: PhaseState) -> None:
        e = at.built.get(building)
        if e is None:
            when = r.phase if not r.existing else "of installation"
            what = f"building {building} ({self.structures[building]}) is not built by phase {when}"
            self.rep.add(name, "structure", what)
        elif t.liquid_fraction > 0 and "liquid" not in {str(m) for m in e.media}:
            media = ", ".join(map(str, e.media))
            what = f"{r.rack_type} is liquid-cooled; {building} ({e.structure}) cools with {media} only"
            self.rep.add(name, "structure", what)

    def link(self, name: str, r, t: RackType, length: float) -> None:
        """The link class: one verdict per cable-length band of one type and class."""
        band = (r.rack_type, r.link_class, bisect.bisect_left(self.edges, length - TOL))
        if band not in self.links_ok:
            trial = VerifyReport()
            link_check(name, r.link_class, t, length, self.site, trial)
            self.links_ok[band] = trial.ok
        if not self.links_ok[band]:
            link_check(name, r.link_class, t, length, self.site, self.rep)


def _unit_span(name: str, r, t, row, pod_spots: dict, taken: dict, i: int, rep: VerifyReport) -> None:
    """A multi-rack unit (§18) stands on ``width`` adjacent usable positions of its row from its
    position on, in its parts' order: none past the row's end, reserved, a pod's network-rack spot
    or holding another rack."""
    last = r.position + t.width - 1
    what = (
        f"{r.rack_type} takes {t.width} adjacent positions {r.position}..{last} "
        f"({'·'.join(p.role for p in t.parts)})"
    )
    if last >= row.positions:
        rep.add(name, "unit", f"{what}; row '{r.row}' ends at position {row.positions - 1}")
        return
    span = range(r.position + 1, last + 1)
    breaks = [q for q in span if q in row.reserved or (r.row, q) in pod_spots]
    if breaks:
        rep.add(
            name,
            "unit",
            f"{what}: split by {'reserved position' if breaks[0] in row.reserved else 'the network rack at'} "
            f"{', '.join(map(str, breaks))}",
        )
    clash = [q for q in span if (r.row, q) in taken]
    if clash:
        rep.add(name, "unit", f"{what}: position {clash[0]} already holds racks[{taken[r.row, clash[0]]}]")
    for q in span:
        taken.setdefault((r.row, q), i)


def _fit_checks(scenario: Scenario, site: SiteView, clusters: dict, stores: dict[str, bool]):
    """The checks of one kind of rack in one row and phase: (check, message) of each violation."""

    def fit(cluster: str, rack_type: str, row_id: str, t, hall: str, row, at: PhaseState, load_only: bool):
        out: list[tuple[str, str]] = []
        c = clusters.get(cluster)
        if load_only:
            pass  # an installed rack that only draws power (planner import netbox): no cluster to serve
        elif c is None:
            out.append(("cluster", f"unknown cluster '{cluster}'"))
        else:
            storage = stores[c.id] and rack_type == c.storage_rack_type
            if rack_type not in c.rack_types and not storage:
                allowed = ", ".join([*c.rack_types, *([c.storage_rack_type] if stores[c.id] else [])])
                out.append(
                    (
                        "cluster",
                        f"rack type '{rack_type}' is not allowed for cluster '{c.id}' (allowed: {allowed})",
                    )
                )
            elif (
                not storage
                and c.min_hbm_gb_per_gpu is not None
                and t.hbm_gb_per_gpu < c.min_hbm_gb_per_gpu - 1e-9
            ):
                out.append(
                    (
                        "cluster",
                        f"{rack_type} has {fmt(t.hbm_gb_per_gpu)} GB HBM per GPU; cluster '{c.id}' needs "
                        f"{fmt(c.min_hbm_gb_per_gpu)} GB",
                    )
                )
        on_planning = scenario.rack_limit_on == RackLimitBasis.planning
        kw = (planning_kw(scenario, t) if on_planning else nameplate_kw(scenario, t)) * max(
            (q.power_share for q in t.parts or []), default=1.0
        )
        row_limit = max(row.max_rack_power_kw, at.rack_kw.get(row_id, 0.0))
        if kw > row_limit + TOL:
            basis = "planning" if on_planning else "nameplate"
            out.append(
                (
                    "rack power",
                    f"{rack_type} draws {fmt(kw)} kW ({basis}), row limit {fmt(row_limit)} kW{at.where}",
                )
            )
        if t.position_weight_kg > row.max_rack_weight_kg + TOL:
            out.append(
                (
                    "rack weight",
                    f"{rack_type} weighs {fmt(t.position_weight_kg)} "
                    f"kg{' on one position' if t.parts else ''}, "
                    f"row limit {fmt(row.max_rack_weight_kg)} kg",
                )
            )
        rating = site.hall_rating.get(hall)
        load = t.position_weight_kg / (row.pitch_m * row.depth_m)
        if rating is not None and load > rating + TOL:
            out.append(
                (
                    "floor load",
                    f"{rack_type} loads the floor with {fmt(load)} kg/m² "
                    f"({fmt(t.position_weight_kg)} kg on {fmt(row.pitch_m)} × {fmt(row.depth_m)} m), hall "
                    f"{hall} is rated {fmt(rating)} kg/m²",
                )
            )
        if t.liquid_fraction > 0 and row.liquid_loop is None and row_id not in at.loops:
            out.append(
                ("cooling medium", f"{rack_type} needs a liquid loop; row '{row_id}' has none{at.where}")
            )
        return out

    return fit


def link_check(name, link_class, t: RackType, length: float, site: SiteView, rep: VerifyReport) -> None:
    if link_class is None:
        rep.add(name, "cable reach", f"{t.id} has {t.links} fabric links but no link class")
        return
    lc = site.links.get(link_class)
    if lc is None or link_class not in t.link_classes:
        rep.add(
            name,
            "cable reach",
            f"link class '{link_class}' is not accepted by {t.id} (accepted: {', '.join(t.link_classes)})",
        )
        return
    if length > lc.max_length_m + TOL:
        rep.add(
            name, "cable reach", f"cable {fmt(length)} m exceeds {link_class} reach {fmt(lc.max_length_m)} m"
        )
        return
    if t.max_cable_m is not None and length > t.max_cable_m + TOL:
        rep.add(name, "cable reach", f"cable {fmt(length)} m exceeds {t.id}'s limit {fmt(t.max_cable_m)} m")
        return
    reach = [
        site.links[c]
        for c in t.link_classes
        if c in site.links and site.links[c].max_length_m + TOL >= length
    ]
    best = min(reach, key=lambda c: (c.max_length_m, c.cost_usd_per_link, c.id))
    if best.id != link_class:
        rep.add(
            name,
            "link class",
            f"link class '{link_class}' is not the shortest-reach class that covers {fmt(length)} m "
            f"('{best.id}')",
        )


def network_rack_checks(plan: Plan, scenario: Scenario, site: SiteView, rep: VerifyReport) -> None:
    """Every network rack of a designed fabric stands at a free position of a network row serving
    a pod where its cluster has GPU racks, holds its design's switches of one tier each within
    the rack's units, and draws at least its switches' power and at most the row's rack limit."""
    if not plan.network_racks:
        return
    types = scenario.catalog.by_id()
    designs = {d.id: d for d in scenario.fabrics}
    picks = {f.cluster: f.design for f in plan.fabric or []}
    first = {c.id: (c.fabrics or [None])[0] for c in scenario.clusters}
    buildings_of: dict[str, set[str]] = defaultdict(set)
    for r in plan.racks:
        t = types.get(r.rack_type)
        if t is not None and t.gpus and r.row in site.rows:
            buildings_of[r.cluster].add(site.rows[r.row][0])
    taken = {(r.row, r.position) for r in plan.racks}
    taken |= {(p.network_rack.row, p.network_rack.position) for p in site.pods.values()}
    for i, nr in enumerate(plan.network_racks):
        name = f"network_racks[{i}] ({nr.row}/{nr.position})"
        ref = site.rows.get(nr.row)
        if ref is None:
            rep.add(name, "placement", f"unknown row '{nr.row}'")
            continue
        _network_rack_position(name, nr, ref, taken, site, rep)
        taken.add((nr.row, nr.position))
        d = designs.get(nr.design)
        if d is None or picks.get(nr.cluster, first.get(nr.cluster)) != nr.design:
            rep.add(name, "network racks", f"cluster '{nr.cluster}' is not built on design '{nr.design}'")
            continue
        _network_rack_building(name, nr, ref, scenario, buildings_of, rep)
        _network_rack_switches(name, nr, ref[2], d, scenario, rep)
        _network_rack_phases(name, nr, ref[2], scenario, site, rep)


def _network_rack_position(name: str, nr, ref, taken: set, site: SiteView, rep: VerifyReport) -> None:
    """A network row of the stated building and hall, a usable free position, the site's coordinates."""
    building, hall, row = ref
    if row.network is None:
        rep.add(name, "placement", f"row '{nr.row}' is not a network row")
    if (building, hall) != (nr.building, nr.hall):
        rep.add(name, "placement", f"row '{nr.row}' is in {building}/{hall}, not {nr.building}/{nr.hall}")
    if nr.position >= row.positions or nr.position in row.reserved:
        why = "reserved" if nr.position in row.reserved else "outside the row"
        rep.add(name, "placement", f"position {nr.position} is {why}")
    elif (nr.row, nr.position) in taken:
        rep.add(name, "placement", f"position {nr.position} already holds a rack")
    x, y = site.xy(nr.row, nr.position) if nr.position < row.positions else (nr.x_m, nr.y_m)
    if abs(x - nr.x_m) > TOL or abs(y - nr.y_m) > TOL:
        rep.add(name, "geometry", f"coordinates ({nr.x_m}, {nr.y_m}) differ from the site's ({x}, {y})")


def _network_rack_building(
    name: str, nr, ref, scenario: Scenario, buildings_of: dict, rep: VerifyReport
) -> None:
    """Region-tier switches in the tier's building; the rest where the cluster has GPU racks (in the
    tier's building also a rack of the region links' optics alone, no switch)."""
    building, _, row = ref
    region = scenario.region_tier
    tiers = {sc.tier for sc in nr.switches}
    if region is not None and building == region.building and tiers <= {4}:
        return
    if tiers == {4}:
        if region is None or building != region.building:
            theirs = region.building if region else "no region tier"
            what = f"region-tier switches in building {building}, not the tier's ({theirs})"
            rep.add(name, "network racks", what)
    elif row.network is not None and building not in buildings_of.get(nr.cluster, set()):
        what = f"row '{nr.row}' is in building {building}, where cluster '{nr.cluster}' has no GPU racks"
        rep.add(name, "network racks", what)


def _network_rack_switches(name: str, nr, row, d, scenario: Scenario, rep: VerifyReport) -> None:
    """Switches of the design's tiers outside the GPU racks (one tier a rack), within its units;
    the rack draws at least their power and at most the row's rack limit."""
    sw = scenario.catalog.switch_by_id()
    region = scenario.region_tier
    units = 0
    kw = 0.0
    for sc in nr.switches:
        regional = sc.tier == 4 and region is not None and sc.model == region.switch
        if not regional and (
            sc.tier > d.tiers or d.switches[sc.tier - 1] != sc.model or (sc.tier == 1 and d.leaf_in_rack)
        ):
            what = f"tier-{sc.tier} switch '{sc.model}' is not in design '{d.id}' outside the GPU racks"
            rep.add(name, "network racks", what)
            continue
        units += sc.count * sw[sc.model].height_u
        kw += sc.count * sw[sc.model].power_w / 1000
    if len({sc.tier for sc in nr.switches}) > 1:
        rep.add(name, "network racks", "holds switches of more than one tier")
    if units > d.rack_units:
        what = f"its switches take {units} U, a network rack of design '{d.id}' has {d.rack_units} U"
        rep.add(name, "network racks", what)
    if nr.kw < kw - 1e-6:
        rep.add(name, "network racks", f"draws {fmt(nr.kw)} kW, less than its switches' {fmt(kw)} kW")
    if nr.kw > row.max_rack_power_kw + TOL:
        rep.add(name, "rack power", f"draws {fmt(nr.kw)} kW, row limit {fmt(row.max_rack_power_kw)} kW")


def _network_rack_phases(name: str, nr, row, scenario: Scenario, site: SiteView, rep: VerifyReport) -> None:
    """Phased plans: a known phase its row is online in, switches bought in it or later, its kW
    stated for every phase it stands in (the last one's is ``kw``), each at least the switches
    bought by then and at most the row's rack limit. Without phases: no phase is stated."""
    ids = [p.id for p in scenario.phases]
    at = {p: i for i, p in enumerate(ids)}
    stated = [p for p in [nr.phase, *(sc.phase for sc in nr.switches), *nr.kw_by_phase] if p is not None]
    if not ids or any(p not in at for p in stated):
        if stated:
            bad = next(p for p in stated if p not in at)
            what = f"unknown phase '{bad}'" if ids else "states a phase, but the scenario has none"
            rep.add(name, "network racks", what)
        return
    first = at.get(nr.phase, 0)
    if site.on.get(nr.row, 0) > first:
        what = (
            f"row '{nr.row}' is online from phase {ids[site.on[nr.row]]}, the rack stands from {ids[first]}"
        )
        rep.add(name, "placement", what)
    if any(at.get(sc.phase, 0) < first for sc in nr.switches):
        rep.add(name, "network racks", f"holds switches bought before it stands ({ids[first]})")
    if sorted(at[p] for p in nr.kw_by_phase) != list(range(first, len(ids))):
        what = (
            f"states its kW for {', '.join(nr.kw_by_phase) or 'no phase'}, not for {ids[first]} to {ids[-1]}"
        )
        rep.add(name, "network racks", what)
        return
    if abs(nr.kw_by_phase[ids[-1]] - nr.kw) > TOL:
        rep.add(
            name,
            "network racks",
            f"draws {fmt(nr.kw)} kW, its last phase's {fmt(nr.kw_by_phase[ids[-1]])} kW",
        )
    sw = scenario.catalog.switch_by_id()
    for ph, kw in nr.kw_by_phase.items():
        need = sum(
            sc.count * sw[sc.model].power_w / 1000
            for sc in nr.switches
            if at.get(sc.phase, 0) <= at[ph] and sc.model in sw
        )
        if kw < need - 1e-6:
            rep.add(
                name,
                "network racks",
                f"draws {fmt(kw)} kW in phase {ph}, less than its switches' {fmt(need)} kW",
            )
        if kw > row.max_rack_power_kw + TOL:
            what = f"draws {fmt(kw)} kW in phase {ph}, row limit {fmt(row.max_rack_power_kw)} kW"
            rep.add(name, "rack power", what)


def existing_checks(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    """Installed racks stand in the plan exactly as installed; nothing else is marked installed."""

    def ident(r):
        return (r.building, r.hall, r.row, r.position, r.rack_type, r.cluster)

    mine = {ident(r): r for r in plan.racks if r.existing}
    given = {ident(r): r for r in scenario.existing}
    for k in given:
        if k not in mine:
            rep.add(
                f"existing {k[2]}/{k[3]}",
                "existing",
                f"the installed {k[4]} rack of {k[5]} is missing or was moved",
            )
    for k in mine:
        if k not in given:
            rep.add(
                f"existing {k[2]}/{k[3]}",
                "existing",
                "the plan marks a rack installed that the scenario does not list",
            )


def retrofit_checks(plan: Plan, scenario: Scenario, site: SiteView, rep: VerifyReport) -> None:
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
            rep.add(
                f"retrofit {b.id}",
                "retrofit",
                f"bought in phase {b.phase} with a lead of {r.lead_phases} phases: it would take effect "
                "after the last phase",
            )


def _span(scenario: Scenario, site: SiteView, r) -> tuple[int, int]:
    """Phase indices [from, until) a rack stands in: installed racks from the first, retired ones
    until their service life ends, the rest to the end."""
    start = 0 if r.existing else site.phase_index.get(r.phase, 0)
    until = retired_at(scenario, r.rack_type, r.phase)
    return start, len(scenario.phases) if until is None else until
