"""Cross-reference checks over a schema-valid scenario, one ``check_*`` per rule.

Each check returns problems (YAML path + one sentence naming the bad value and
what is allowed); :func:`check_scenario` runs them all so that every problem is
reported at once.
"""

from __future__ import annotations

from planner.enums import Demand
from planner.errors import Problem, known
from planner.input.asks import goodput_reachable
from planner.input.checks_grid import check_grid
from planner.input.checks_site import _single_failures_dropping, check_site, site_warnings  # noqa: F401 - re-exported
from planner.input.checks_time import check_futures, check_phases
from planner.schema import Scenario


def check_catalog(scenario: Scenario) -> list[Problem]:
    """Rack type IDs unique; their link classes exist in the site fabric."""
    out = []
    classes = {c.id for c in scenario.site.fabric.link_classes}
    seen: set[str] = set()
    for ti, t in enumerate(scenario.catalog.rack_types):
        tp = f"catalog.rack_types[{ti}]"
        if t.id in seen:
            out.append(Problem(f"{tp}.id", f"duplicate rack type ID '{t.id}'"))
        seen.add(t.id)
        for li, c in enumerate(t.link_classes):
            if c not in classes:
                out.append(Problem(f"{tp}.link_classes[{li}]", f"unknown link class '{c}' {known(classes)}"))
    return out


def check_clusters(scenario: Scenario) -> list[Problem]:
    """Cluster IDs unique; rack types exist; hop budget reachable."""
    out = []
    seen: set[str] = set()
    same_rack = scenario.site.fabric.hops.same_rack
    for ci, c in enumerate(scenario.clusters):
        cp = f"clusters[{ci}]"
        if c.id in seen:
            out.append(Problem(f"{cp}.id", f"duplicate cluster ID '{c.id}'"))
        seen.add(c.id)
        out += _cluster_racks(scenario, c, cp)
        out += _spread_reachable(scenario, c, cp)
        if c.max_hops < same_rack:
            what = f"{c.max_hops} is below the same-rack hop count {same_rack}; no placement can meet it"
            out.append(Problem(f"{cp}.max_hops", what))
    out += check_fabrics(scenario)
    links = {lc.id for lc in scenario.site.fabric.link_classes}
    for i, cause in enumerate(scenario.reliability.causes):
        for j, lc in enumerate(cause.link_classes or []):
            if lc not in links:
                out.append(
                    Problem(
                        f"reliability.causes[{i}].link_classes[{j}]",
                        f"unknown link class '{lc}' {known(links)}",
                    )
                )
    return out


def _spread_reachable(scenario: Scenario, c, cp: str) -> list[Problem]:
    """An exact cluster's spread limit per pod or cooling zone can hold: a rack stands in one pod
    and one zone, so its smallest rack must be at most that share of the cluster's GPUs."""
    types = scenario.catalog.by_id()
    sizes = [types[t].gpus for t in c.rack_types if t in types and types[t].gpus]
    if c.demand != Demand.exact or c.gpus is None or c.gpus_by_phase or not sizes:
        return []
    out = []
    for field in ("max_share_per_pod", "max_share_per_cooling_zone"):
        share = getattr(c, field)
        if share is not None and min(sizes) > share * c.gpus + 1e-9:
            where = field.removeprefix("max_share_per_").replace("_", " ")
            what = (
                f"{share:g} cannot hold: exactly {c.gpus:,} GPUs in racks of at least {min(sizes):,} GPUs "
                f"puts more than {share:g} × {c.gpus:,} = {share * c.gpus:,.0f} GPUs in one {where}"
            )
            out.append(Problem(f"{cp}.{field}", what))
    return out


def _cluster_racks(scenario: Scenario, c, cp: str) -> list[Problem]:
    """A cluster's rack types are GPU racks of the catalog; its storage asks name a storage rack
    type, and its goodput target can be reached."""
    out = []
    types = scenario.catalog.by_id()
    storage = {t.id for t in scenario.catalog.rack_types if t.kind.value == "storage"}
    for ti, t in enumerate(c.rack_types):
        if t not in types:
            out.append(Problem(f"{cp}.rack_types[{ti}]", f"unknown rack type '{t}' {known(types)}"))
        elif not types[t].gpus:
            what = f"rack type '{t}' holds no GPUs; name GPU rack types here (storage goes in storage_racks)"
            out.append(Problem(f"{cp}.rack_types[{ti}]", what))
        elif c.domain_spare_servers and types[t].nvlink_domain_gpus:
            trays = types[t].nvlink_domain_gpus // types[t].gpus_per_server
            if c.domain_spare_servers >= trays:
                what = (
                    f"{c.domain_spare_servers} spare trays leave none of the {trays} in an NVLink domain of "
                    f"'{t}' for the job; allowed 0..{trays - 1}"
                )
                out.append(Problem(f"{cp}.domain_spare_servers", what))
    asks = c.storage_pb is not None or c.storage_write_gb_per_s is not None or c.goodput_target is not None
    if (c.storage_racks or asks) and c.storage_rack_type not in storage:
        what = f"'{c.storage_rack_type}' is not a storage rack type {known(storage)}"
        out.append(Problem(f"{cp}.storage_rack_type", what))
    elif c.goodput_target is not None:
        why = goodput_reachable(scenario, c)
        if why:
            out.append(Problem(f"{cp}.goodput_target", why))
    return out


def check_fabrics(scenario: Scenario) -> list[Problem]:
    """Fabric designs name catalog switches of their kind; leaves in racks have the ports the racks
    need; clusters name designs that exist."""
    out: list[Problem] = []
    switches = scenario.catalog.switch_by_id()
    ids: set[str] = set()
    for i, d in enumerate(scenario.fabrics):
        p = f"fabrics[{i}]"
        if d.id in ids:
            out.append(Problem(f"{p}.id", f"duplicate fabric design '{d.id}'"))
        ids.add(d.id)
        for j, sid in enumerate(d.switches):
            w = switches.get(sid)
            if w is None:
                out.append(Problem(f"{p}.switches[{j}]", f"unknown switch '{sid}' {known(switches)}"))
            elif w.kind != d.kind:
                what = f"'{sid}' is a {w.kind.value} switch; design '{d.id}' is {d.kind.value}"
                out.append(Problem(f"{p}.switches[{j}]", what))
    for ci, c in enumerate(scenario.clusters):
        out += _cluster_fabrics(scenario, ci, c)
    return out + _region_tier(scenario)


def _cluster_fabrics(scenario: Scenario, ci: int, c) -> list[Problem]:
    """A cluster's designs exist, their rack switches have the ports its racks need; designs only
    without phases; a latency budget only with a region tier."""
    import math

    out = []
    switches = scenario.catalog.switch_by_id()
    types = scenario.catalog.by_id()
    by_id = {d.id: d for d in scenario.fabrics}
    for j, fid in enumerate(c.fabrics or []):
        d = by_id.get(fid)
        if d is None:
            out.append(
                Problem(f"clusters[{ci}].fabrics[{j}]", f"unknown fabric design '{fid}' {known(by_id)}")
            )
            continue
        if not (d.leaf_in_rack and d.switches[0] in switches):
            continue
        k = switches[d.switches[0]].ports
        for t in scenario.gpu_types_for(c):
            need = types[t].gpus * d.nics_per_gpu
            up = math.ceil(need / d.oversubscription[0])
            if need + up > k:
                what = (
                    f"a {t} rack needs {need} down and {up} up ports on its rack switch; {d.switches[0]} "
                    f"has {k}"
                )
                out.append(Problem(f"clusters[{ci}].fabrics[{j}]", what))
    if c.region_share_km is not None and (scenario.region_tier is None or not c.fabrics):
        what = "a share of a job spanning the region needs a region tier (region_tier:) and a fabric design"
        out.append(Problem(f"clusters[{ci}].region_share_km", what))
    if c.max_latency_us is not None and scenario.region_tier is None:
        what = (
            "a latency budget needs a region tier (region_tier:): without one a cluster "
            "on a designed fabric stays in one building"
        )
        out.append(Problem(f"clusters[{ci}].max_latency_us", what))
    return out


def _region_tier(scenario: Scenario) -> list[Problem]:
    """The region tier names a catalog switch and a building with network rows."""
    rt = scenario.region_tier
    if rt is None:
        return []
    out = []
    switches = scenario.catalog.switch_by_id()
    if rt.switch not in switches:
        out.append(Problem("region_tier.switch", f"unknown switch '{rt.switch}' {known(switches)}"))
    buildings = {b.id: b for b in scenario.site.buildings}
    if rt.building not in buildings:
        out.append(Problem("region_tier.building", f"unknown building '{rt.building}' {known(buildings)}"))
    elif not any(r.network is not None for h in buildings[rt.building].halls for r in h.rows):
        what = f"building '{rt.building}' has no network rows for the tier's switches to stand in"
        out.append(Problem("region_tier.building", what))
    for b in rt.building_tbps:
        if b not in buildings:
            out.append(
                Problem(f"region_tier.building_tbps.{b}", f"unknown building '{b}' {known(buildings)}")
            )
    return out


def check_network_racks(scenario: Scenario) -> list[Problem]:
    """A pod's network rack type is a network rack of the catalog."""
    out = []
    types = scenario.catalog.by_id()
    network = {t.id for t in scenario.catalog.rack_types if t.kind.value == "network"}
    for bi, b in enumerate(scenario.site.buildings):
        for hi, h in enumerate(b.halls):
            for pi, p in enumerate(h.pods):
                t = p.network_rack_type
                if t is not None and (t not in types or t not in network):
                    out.append(
                        Problem(
                            f"site.buildings[{bi}].halls[{hi}].pods[{pi}].network_rack_type",
                            f"'{t}' is not a network rack type {known(network)}",
                        )
                    )
    return out


def check_backup(scenario: Scenario) -> list[Problem]:
    """Backup power: design IDs unique; fixed choices name real buildings and designs; the plant the
    facility rate holds is no more than that rate."""
    bp = scenario.backup_power
    if bp is None:
        return []
    out = []
    ids = [d.id for d in bp.designs]
    if len(set(ids)) != len(ids):
        out.append(Problem("backup_power.designs", "duplicate design IDs"))
    buildings = [b.id for b in scenario.site.buildings]
    for b, d in bp.fixed.items():
        if b not in buildings:
            out.append(Problem(f"backup_power.fixed.{b}", f"unknown building '{b}' {known(buildings)}"))
        if d not in ids:
            out.append(Problem(f"backup_power.fixed.{b}", f"unknown design '{d}' {known(ids)}"))
    held, rate = bp.in_facility_usd_per_mw or 0.0, scenario.costs.facility_usd_per_mw
    if held and scenario.costs.colocation_usd_per_kw_month is not None:
        why = (
            "a leased facility (costs.colocation_usd_per_kw_month) has no facility build to hold plant: use 0"
        )
        out.append(Problem("backup_power.in_facility_usd_per_mw", f"{held:,.0f}: {why}"))
    elif held > rate:
        why = f"more than the facility rate it is part of (costs.facility_usd_per_mw {rate:,.0f})"
        out.append(Problem("backup_power.in_facility_usd_per_mw", f"{held:,.0f} is {why}"))
    return out


def check_units(scenario: Scenario) -> list[Problem]:
    """Multi-rack units (§18): the rack types clusters may use take at most one width beyond a single
    position (the optimiser's count of unit slots per run is exact for one width)."""
    types = scenario.catalog.by_id()
    used = {t for c in scenario.clusters for t in c.rack_types if t in types}
    wide = sorted({(types[t].width, t) for t in used if types[t].width > 1})
    if len({w for w, _ in wide}) > 1:
        return [
            Problem(
                "clusters",
                "the rack types clusters may use span different widths ("
                + ", ".join(f"{t}: {w} positions" for w, t in wide)
                + "); give every multi-rack unit in use one width",
            )
        ]
    return []


MIN_CAP_SHARE = 0.25
"""Lowest GPU power cap as a share of the GPU's TDP that the planner takes (estimate: GPU drivers
accept power limits down to roughly a quarter to a third of TDP, e.g. an H100 SXM's 700 W to
~200 W); below it the cap is no mode a GPU runs in, and most often a figure in kW typed for W."""

MAX_RACK_KW = 1_000.0
"""Largest rated rack power the catalog takes, kW (estimate: today's densest racks draw ~120–132 kW,
GB200 NVL72 per the NVIDIA DGX GB200 user guide in the reference facts; announced roadmaps reach
several hundred kW). A rack type rated beyond it is a unit slip (W for kW)."""


def check_physical(scenario: Scenario) -> list[Problem]:
    """Figures outside what the hardware can be: a GPU power cap below what the clusters' GPUs
    run at, a rack type rated beyond any rack built or announced. Each names the unit expected."""
    out = []
    types = scenario.catalog.by_id()
    used = sorted(
        {t for c in scenario.clusters for t in c.rack_types if t in types and types[t].gpu_power_w > 0}
    )
    cap = scenario.gpu_power_cap_w
    if cap is not None and used:
        low = max(used, key=lambda t: types[t].gpu_power_w)
        tdp = types[low].gpu_power_w
        if cap < MIN_CAP_SHARE * tdp:
            hint = (
                f" ({cap:g} looks like kW: {cap * 1000:,.0f} W?)"
                if MIN_CAP_SHARE * tdp <= cap * 1000 <= 2 * tdp
                else ""
            )
            what = (
                f"{cap:g} W is below what a {low} GPU runs at: its TDP is {tdp:,.0f} W and a cap goes down "
                f"to {MIN_CAP_SHARE:.0%} of it, {MIN_CAP_SHARE * tdp:,.0f} W; the cap is in watts{hint}"
            )
            out.append(Problem("gpu_power_cap_w", what))
    for ti, t in enumerate(scenario.catalog.rack_types):
        kw = t.rated_power_kw
        if kw > MAX_RACK_KW:
            what = (
                f"rated {kw:,.1f} kW (servers_per_rack × (gpus_per_server × gpu_power_w / 1000 + "
                f"non_gpu_power_kw_per_server) + overhead_power_kw), beyond any rack built or announced "
                f"(at most {MAX_RACK_KW:,.0f} kW); gpu_power_w is in watts, the rest in kW"
            )
            out.append(Problem(f"catalog.rack_types[{ti}]", what))
    return out


def check_retrofits(scenario: Scenario) -> list[Problem]:
    """Retrofits name real rows, nodes and zones; a new loop is liquid, new, and goes to a row without one."""
    out = []
    rows, zones, nodes = {}, set(), set()
    for b in scenario.site.buildings:
        nodes |= {n.id for n in b.power_nodes}
        for h in b.halls:
            nodes |= {n.id for n in h.power_nodes}
            zones |= {z.id for z in h.cooling_zones}
            rows.update({r.id: r for r in h.rows})
    seen: set[str] = set()
    for i, r in enumerate(scenario.retrofits):
        rp = f"retrofits[{i}]"
        if r.id in seen:
            out.append(Problem(f"{rp}.id", f"duplicate retrofit ID '{r.id}'"))
        seen.add(r.id)
        out += _retrofit_effect(scenario, r.effect, rp, rows, zones, nodes)
        if scenario.phases and r.lead_phases >= len(scenario.phases):
            n = len(scenario.phases)
            what = f"{r.lead_phases} phases of lead time never take effect within the {n} phases"
            out.append(Problem(f"{rp}.lead_phases", what))
    return out


def _retrofit_effect(scenario: Scenario, e, rp: str, rows: dict, zones: set, nodes: set) -> list[Problem]:
    """What a retrofit changes exists and changes something: a new liquid loop on a row without
    one, a capacity raised on a node or zone, a row's rack limit raised, a structure to build."""
    out = []
    if e.kind in ("add_liquid_loop", "raise_rack_power") and e.row not in rows:
        out.append(Problem(f"{rp}.effect.row", f"unknown row '{e.row}' {known(rows)}"))
    if e.kind == "add_liquid_loop":
        if e.loop.medium.value != "liquid":
            out.append(Problem(f"{rp}.effect.loop.medium", "a retrofit loop must be liquid"))
        if e.loop.id in zones:
            out.append(
                Problem(
                    f"{rp}.effect.loop.id", f"cooling zone '{e.loop.id}' exists already; name the new loop"
                )
            )
        if e.row in rows and rows[e.row].liquid_loop is not None:
            out.append(
                Problem(
                    f"{rp}.effect.row", f"row '{e.row}' has a liquid loop already ({rows[e.row].liquid_loop})"
                )
            )
    if e.kind == "raise_capacity" and e.target not in nodes and e.target not in zones:
        out.append(Problem(f"{rp}.effect.target", f"'{e.target}' is neither a power node nor a cooling zone"))
    if (
        e.kind == "raise_rack_power"
        and e.row in rows
        and e.max_rack_power_kw <= rows[e.row].max_rack_power_kw
    ):
        what = f"{e.max_rack_power_kw:g} kW is not above row '{e.row}''s {rows[e.row].max_rack_power_kw:g} kW"
        out.append(Problem(f"{rp}.effect.max_rack_power_kw", what))
    if e.kind == "build_structure":
        out += _structure(scenario, e, rp)
    return out


def _structure(scenario: Scenario, e, rp: str) -> list[Problem]:
    """A structure to build is a building of the site, with no network racks drawing power and no
    installed racks before it stands."""
    bld = next((b for b in scenario.site.buildings if b.id == e.building), None)
    if bld is None:
        names = known([b.id for b in scenario.site.buildings])
        return [Problem(f"{rp}.effect.building", f"unknown building '{e.building}' {names}")]
    out = []
    if any(p.network_rack_type for h in bld.halls for p in h.pods):
        what = (
            f"building '{e.building}' is to be built: its pods' network racks would draw power "
            "before it stands; give them network_rack_type: null (count their switches in the build cost)"
        )
        out.append(Problem(f"{rp}.effect.building", what))
    if any(x.building == e.building for x in scenario.existing):
        what = f"building '{e.building}' is to be built but has installed racks"
        out.append(Problem(f"{rp}.effect.building", what))
    return out


def check_existing(scenario: Scenario) -> list[Problem]:
    """Installed racks stand on real, distinct positions and are catalog rack types."""
    out = []
    rows = {r.id: r for b in scenario.site.buildings for h in b.halls for r in h.rows}
    types = scenario.catalog.by_id()
    seen: dict[tuple[str, int], int] = {}
    for i, r in enumerate(scenario.existing):
        ep = f"existing[{i}]"
        if r.row not in rows:
            out.append(Problem(f"{ep}.row", f"unknown row '{r.row}' {known(rows)}"))
        elif r.position >= rows[r.row].positions:
            out.append(
                Problem(
                    f"{ep}.position",
                    f"position {r.position} is outside 0..{rows[r.row].positions - 1} of row '{r.row}'",
                )
            )
        if r.rack_type not in types:
            out.append(Problem(f"{ep}.rack_type", f"unknown rack type '{r.rack_type}' {known(types)}"))
        if (r.row, r.position) in seen:
            out.append(
                Problem(
                    f"{ep}.position",
                    f"position {r.row}/{r.position} already holds existing[{seen[r.row, r.position]}]",
                )
            )
        seen.setdefault((r.row, r.position), i)
    return out


def check_fixed_loads_in_dropped_rows(scenario: Scenario) -> list[Problem]:
    """A redundant row that a single failure leaves with no feed must stay empty (only a failing
    utility may do that, see :func:`site_warnings`): a pod's network rack or an installed rack
    standing in it makes every plan break N-1, so it is an input problem naming the row and the
    failure."""
    dropped: dict[str, str] = {}
    for _, r, n in _single_failures_dropping(scenario.site):
        dropped.setdefault(r.id, n.id)
    if not dropped:
        return []
    out = []
    types = scenario.catalog.by_id()
    fix = (
        "set the utility's can_fail: false (outside the N-1 design), set the row's redundant: false, or "
        "stand it in another row"
    )
    for bi, b in enumerate(scenario.site.buildings):
        for hi, h in enumerate(b.halls):
            for pi, p in enumerate(h.pods):
                row = p.network_rack.row
                if row in dropped and p.network_rack_type in types:
                    kw = scenario.rack_power_kw(types[p.network_rack_type])
                    out.append(
                        Problem(
                            f"site.buildings[{bi}].halls[{hi}].pods[{pi}].network_rack",
                            f"pod {p.id}'s network rack ({kw:,.1f} kW) stands in redundant row '{row}', "
                            "which loses every feed when "
                            f"{dropped[row]} fails, so nothing may stand there: {fix}",
                        )
                    )
    for i, r in enumerate(scenario.existing):
        if r.row in dropped and r.rack_type in types:
            out.append(
                Problem(
                    f"existing[{i}]",
                    f"installed {r.rack_type} rack stands in redundant row '{r.row}', which loses every feed "
                    f"when {dropped[r.row]} fails, so nothing may stand there: {fix}",
                )
            )
    return out


def check_scenario(scenario: Scenario) -> list[Problem]:
    """Every cross-reference rule of a scenario, all problems at once."""
    return [
        *check_site(scenario.site),
        *check_catalog(scenario),
        *check_clusters(scenario),
        *check_network_racks(scenario),
        *check_phases(scenario),
        *check_futures(scenario),
        *check_units(scenario),
        *check_physical(scenario),
        *check_backup(scenario),
        *check_retrofits(scenario),
        *check_existing(scenario),
        *check_fixed_loads_in_dropped_rows(scenario),
        *check_grid(scenario),
    ]
