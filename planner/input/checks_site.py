"""Site rules (:mod:`planner.input.checks`): unique IDs, a power tree without cycles, rows on leaf
feeds of their building and zones of their hall, pods' network racks on real positions, redundant
rows that keep a feed through any single failure."""

from __future__ import annotations

from collections import Counter

from planner.errors import Problem, known
from planner.schema import Site


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
