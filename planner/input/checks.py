"""Cross-reference checks over a schema-valid scenario, one ``check_*`` per rule.

Each check returns problems (YAML path + one sentence naming the bad value and
what is allowed); :func:`check_scenario` runs them all so that every problem is
reported at once.
"""

from __future__ import annotations

from collections import Counter

from planner.errors import Problem, known
from planner.input.asks import goodput_reachable
from planner.input.checks_time import check_futures, check_phases
from planner.schema import Scenario, Site


def _site_items(site: Site):
    """Yield (kind, id, path, hall_id or None, building_id) for every named element."""
    for bi, b in enumerate(site.buildings):
        bp = f"site.buildings[{bi}]"
        yield "building", b.id, f"{bp}.id", None, b.id
        for ni, n in enumerate(b.power_nodes):
            yield "power node", n.id, f"{bp}.power_nodes[{ni}].id", None, b.id
        for hi, h in enumerate(b.halls):
            hp = f"{bp}.halls[{hi}]"
            yield "hall", h.id, f"{hp}.id", h.id, b.id
            for ni, n in enumerate(h.power_nodes):
                yield "power node", n.id, f"{hp}.power_nodes[{ni}].id", h.id, b.id
            for zi, z in enumerate(h.cooling_zones):
                yield "cooling zone", z.id, f"{hp}.cooling_zones[{zi}].id", h.id, b.id
            for pi, p in enumerate(h.pods):
                yield "pod", p.id, f"{hp}.pods[{pi}].id", h.id, b.id
            for ri, r in enumerate(h.rows):
                yield "row", r.id, f"{hp}.rows[{ri}].id", h.id, b.id


def check_unique_ids(site: Site) -> list[Problem]:
    """IDs are unique within their kind across the whole site."""
    seen: dict[tuple[str, str], str] = {}
    out = []
    for kind, ident, path, _, _ in _site_items(site):
        if (kind, ident) in seen:
            out.append(Problem(path, f"duplicate {kind} ID '{ident}' (first defined at {seen[kind, ident]})"))
        else:
            seen[kind, ident] = path
    for li, c in enumerate(site.fabric.link_classes):
        if ("link class", c.id) in seen:
            out.append(Problem(f"site.fabric.link_classes[{li}].id", f"duplicate link class ID '{c.id}'"))
        seen["link class", c.id] = ""
    return out


def check_power_tree(site: Site) -> list[Problem]:
    """Parents exist in the same building, and the power tree has no cycle."""
    out = []
    nodes = {}
    paths = {}
    building_of = {}
    for kind, ident, path, _, bid in _site_items(site):
        if kind == "power node":
            paths[ident] = path[: -len(".id")]
            building_of[ident] = bid
    for b in site.buildings:
        for n in [*b.power_nodes, *(n for h in b.halls for n in h.power_nodes)]:
            nodes[n.id] = n
    for nid, n in nodes.items():
        if n.parent is None:
            continue
        if n.parent not in nodes:
            out.append(Problem(f"{paths[nid]}.parent", f"unknown power node '{n.parent}' {known(nodes)}"))
        elif building_of[n.parent] != building_of[nid]:
            what = (
                f"power node '{n.parent}' is in building '{building_of[n.parent]}', "
                f"not in this node's building '{building_of[nid]}'"
            )
            out.append(Problem(f"{paths[nid]}.parent", what))
    return out + _power_cycles(nodes, paths)


def _power_cycles(nodes: dict, paths: dict[str, str]) -> list[Problem]:
    """One problem per cycle of the power tree, at its smallest node, the cycle spelled from there."""
    out = []
    reported: set[str] = set()
    for start in nodes:
        chain: list[str] = []
        cur = start
        while cur in nodes and cur not in chain:
            chain.append(cur)
            cur = nodes[cur].parent
        if cur not in chain:
            continue
        cycle = chain[chain.index(cur) :]
        key = min(cycle)
        if key not in reported:
            reported.add(key)
            k = cycle.index(key)
            cycle = cycle[k:] + cycle[:k]
            loop = " -> ".join([*cycle, key])
            out.append(Problem(f"{paths[key]}.parent", f"power tree has a cycle: {loop}"))
    return out


def check_rows(site: Site) -> list[Problem]:
    """Feeds are known leaf nodes of the row's building; zones and pod are in the row's hall;
    reserved positions are in range."""
    out = []
    nodes_by_building: dict[str, set[str]] = {}
    parents: set[str] = set()
    all_nodes: set[str] = set()
    for b in site.buildings:
        ids = {n.id for n in b.power_nodes} | {n.id for h in b.halls for n in h.power_nodes}
        nodes_by_building[b.id] = ids
        all_nodes |= ids
        for n in [*b.power_nodes, *(n for h in b.halls for n in h.power_nodes)]:
            if n.parent:
                parents.add(n.parent)
    for bi, b in enumerate(site.buildings):
        for hi, h in enumerate(b.halls):
            for ri, r in enumerate(h.rows):
                rp = f"site.buildings[{bi}].halls[{hi}].rows[{ri}]"
                out += _row_feeds(r, rp, all_nodes, nodes_by_building[b.id], parents)
                out += _row_zones(r, rp, h)
                pods = {p.id for p in h.pods}
                if r.pod not in pods:
                    out.append(Problem(f"{rp}.pod", f"unknown pod '{r.pod}' in hall '{h.id}' {known(pods)}"))
                for ii, idx in enumerate(r.reserved):
                    if not 0 <= idx < r.positions:
                        out.append(
                            Problem(f"{rp}.reserved[{ii}]", f"position {idx} is outside 0..{r.positions - 1}")
                        )
    return out


def _row_feeds(r, rp: str, all_nodes: set[str], mine: set[str], parents: set[str]) -> list[Problem]:
    """A row's feeds: known leaf nodes of its building, each once."""
    out = []
    counts = Counter(r.feeds)
    for fi, f in enumerate(r.feeds):
        fp = f"{rp}.feeds[{fi}]"
        if f not in all_nodes:
            out.append(Problem(fp, f"unknown power node '{f}' {known(mine)}"))
        elif f not in mine:
            out.append(Problem(fp, f"power node '{f}' is in another building than row '{r.id}'"))
        elif f in parents:
            out.append(Problem(fp, f"power node '{f}' feeds other nodes; a row must hang from leaf nodes"))
        if counts[f] > 1 and r.feeds.index(f) != fi:
            out.append(Problem(fp, f"feed '{f}' is listed more than once"))
    return out


def _row_zones(r, rp: str, h) -> list[Problem]:
    """A row's air zone is an air zone of its hall, its liquid loop (if any) a liquid one."""
    out = []
    zones = {z.id: z for z in h.cooling_zones}
    air = [z.id for z in zones.values() if z.medium == "air"]
    liquid = [z.id for z in zones.values() if z.medium == "liquid"]
    if r.air_zone not in zones:
        out.append(
            Problem(f"{rp}.air_zone", f"unknown cooling zone '{r.air_zone}' in hall '{h.id}' {known(air)}")
        )
    elif zones[r.air_zone].medium != "air":
        what = f"cooling zone '{r.air_zone}' is liquid; air_zone must name an air zone {known(air)}"
        out.append(Problem(f"{rp}.air_zone", what))
    if r.liquid_loop is None:
        return out
    if r.liquid_loop not in zones:
        what = f"unknown cooling zone '{r.liquid_loop}' in hall '{h.id}' {known(liquid)}"
        out.append(Problem(f"{rp}.liquid_loop", what))
    elif zones[r.liquid_loop].medium != "liquid":
        what = f"cooling zone '{r.liquid_loop}' is air; liquid_loop must name a liquid loop {known(liquid)}"
        out.append(Problem(f"{rp}.liquid_loop", what))
    return out


def check_pods(site: Site) -> list[Problem]:
    """Each pod's network rack stands at a real position of a row in the pod's hall."""
    out = []
    for bi, b in enumerate(site.buildings):
        for hi, h in enumerate(b.halls):
            rows = {r.id: r for r in h.rows}
            for pi, p in enumerate(h.pods):
                pp = f"site.buildings[{bi}].halls[{hi}].pods[{pi}].network_rack"
                loc = p.network_rack
                if loc.row not in rows:
                    out.append(
                        Problem(f"{pp}.row", f"unknown row '{loc.row}' in hall '{h.id}' {known(rows)}")
                    )
                elif loc.position >= rows[loc.row].positions:
                    out.append(
                        Problem(
                            f"{pp}.position",
                            f"position {loc.position} is outside 0..{rows[loc.row].positions - 1} of row "
                            f"'{loc.row}'",
                        )
                    )
    return out


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
    need; clusters name designs that exist; designs are for single-phase scenarios."""
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
    if c.fabrics and scenario.phases:
        what = "fabric designs are sized for single-phase scenarios (this one has phases)"
        out.append(Problem(f"clusters[{ci}].fabrics", what))
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
    return out


def _single_failures_dropping(site: Site):
    """(row path, row, failing node) for every redundant row that one failing node leaves with no
    live feed (every feed of the row is in the node's subtree)."""
    nodes = {}
    for b in site.buildings:
        for n in [*b.power_nodes, *(n for h in b.halls for n in h.power_nodes)]:
            nodes[n.id] = n
    for bi, b in enumerate(site.buildings):
        for hi, h in enumerate(b.halls):
            for ri, r in enumerate(h.rows):
                if not r.redundant or any(f not in nodes for f in r.feeds):
                    continue
                common = set(_chain(nodes, r.feeds[0]))
                for f in r.feeds[1:]:
                    common &= set(_chain(nodes, f))
                for n in sorted(common):
                    if nodes[n].can_fail:
                        yield f"site.buildings[{bi}].halls[{hi}].rows[{ri}].redundant", r, nodes[n]


def _chain(nodes: dict, f: str) -> list[str]:
    """A feed and every node above it (a cycle stops the walk)."""
    out, seen, cur = [], set(), f
    while cur is not None and cur in nodes and cur not in seen:
        out.append(cur)
        seen.add(cur)
        cur = nodes[cur].parent
    return out


def check_redundant_rows(site: Site) -> list[Problem]:
    """A row marked redundant must keep a live feed whatever single node fails; a failing node
    (other than a utility feed, see :func:`site_warnings`) that takes all its feeds is an error."""
    out = []
    for path, r, n in _single_failures_dropping(site):
        if n.kind.value == "utility":
            continue
        out.append(
            Problem(
                path,
                f"row '{r.id}' is redundant, but it loses every feed when {n.id} fails "
                f"(its feeds {', '.join(r.feeds)} all hang from {n.id}); give it a feed from another "
                "branch or set redundant: false",
            )
        )
    return out


def site_warnings(site: Site) -> list[str]:
    """Things that are allowed but probably not meant: a utility feed left at can_fail: true that
    would leave redundant rows with no feed, so the optimiser must keep those rows empty."""
    rows: dict[str, list[str]] = {}
    for _, r, n in _single_failures_dropping(site):
        if n.kind.value == "utility":
            rows.setdefault(n.id, []).append(r.id)
    return [
        f"utility {u} can fail (can_fail: true) and takes every feed of {len(rs)} redundant "
        f"row{'s' if len(rs) != 1 else ''} "
        f"({', '.join(rs[:5])}{', …' if len(rs) > 5 else ''}) with it, so they must stay empty; set "
        "can_fail: false if the utility is outside the N-1 design"
        for u, rs in rows.items()
    ]


def check_site(site: Site) -> list[Problem]:
    """Every site rule."""
    return [
        *check_unique_ids(site),
        *check_power_tree(site),
        *check_rows(site),
        *check_pods(site),
        *check_redundant_rows(site),
    ]


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
    """Backup power: design IDs unique; fixed choices name real buildings and designs."""
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
        *check_backup(scenario),
        *check_retrofits(scenario),
        *check_existing(scenario),
        *check_fixed_loads_in_dropped_rows(scenario),
    ]
