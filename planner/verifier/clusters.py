"""Cluster checks: demand per phase, storage racks and hot spares its asks imply, its hop budget,
its failure-domain spread, and the size of its fabric design."""

from __future__ import annotations

import math
from collections import defaultdict

from planner.enums import Demand, LimitKind
from planner.schema import Plan, Scenario, Usage
from planner.verifier.asks_recount import spares_wanted, storage_wanted
from planner.verifier.fabric_recount import all_figures, chosen
from planner.verifier.report import VerifyReport
from planner.verifier.site import PhaseState, SiteView, network_at, placed_by, served_pods, site_view


def hops_between(scenario: Scenario, site: SiteView, racks) -> tuple[int, str, int]:
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


def cluster_checks(
    plan: Plan, scenario: Scenario, site: SiteView, rep: VerifyReport, states: list[PhaseState]
) -> None:
    """Each cluster's demand in every phase, its storage racks and hot spares, and its hop budget."""
    types = scenario.catalog.by_id()
    by_cluster: dict[str, list] = defaultdict(list)
    for r in plan.racks:
        if r.rack_type in types:
            by_cluster[r.cluster].append(r)
    standing: list[dict[str, int]] = []  # per phase: each cluster's GPUs standing (spares not counted)
    for st in states:
        tally: dict[str, int] = defaultdict(int)
        for r in st.racks:
            if r.rack_type in types and not r.spare:
                tally[r.cluster] += types[r.rack_type].gpus
        standing.append(tally)
    for c in scenario.clusters:
        mine = by_cluster.get(c.id, [])
        for st, tally in zip(states, standing, strict=True):
            _demand_check(c, tally[c.id], _wanted(c, scenario, site, st.index), st, rep)
        _storage_and_spare_checks(c, mine, scenario, rep)
        known = [r for r in mine if r.row in site.rows]
        if len(known) > 1:
            hops, tier, count = hops_between(scenario, site, known)
            if hops > c.max_hops:
                what = f"its racks span {count} {tier}: {hops} hops between them, max_hops is {c.max_hops}"
                rep.add(f"cluster {c.id}", "hops", what)


def _wanted(c, scenario: Scenario, site: SiteView, index: int) -> int | None:
    """GPUs a cluster wants in phase ``index``: its figure for the latest phase it names by then."""
    if c.gpus_by_phase is None:
        return c.gpus
    names = [p.id for p in scenario.phases]
    want = 0
    for ph, g in sorted(
        c.gpus_by_phase.items(), key=lambda kv: names.index(kv[0]) if kv[0] in names else 10**9
    ):
        if ph in site.phase_index and site.phase_index[ph] <= index:
            want = g
    return want


def _demand_check(c, gpus: int, want: int | None, st: PhaseState, rep: VerifyReport) -> None:
    name = f"cluster {c.id}"
    if c.demand == Demand.exact and gpus != want:
        rep.add(name, "demand", f"{gpus} GPUs placed, exactly {want} wanted{st.where}")
    elif c.demand == Demand.at_least and gpus < (want or 0):
        rep.add(name, "demand", f"{gpus} GPUs placed, at least {want} wanted{st.where}")
    elif c.demand == Demand.max and want is not None and gpus > want:
        rep.add(name, "demand", f"{gpus} GPUs placed, at most {want} wanted{st.where}")


def _storage_and_spare_checks(c, mine: list, scenario: Scenario, rep: VerifyReport) -> None:
    """The storage racks and hot spares the cluster asks for (the verifier's own asks)."""
    name = f"cluster {c.id}"
    types = scenario.catalog.by_id()
    want_st = storage_wanted(scenario, c)
    stored = sum(1 for r in mine if want_st and r.rack_type == c.storage_rack_type)
    if stored != want_st:
        rep.add(name, "storage", f"{stored} storage racks placed, {want_st} wanted")
    want_sp = spares_wanted(scenario, c)
    spares = [r for r in mine if r.spare]
    if len(spares) != want_sp:
        why = ""
        if c.spare_availability is not None:
            why = f" (availability {c.spare_availability:g}, repair {c.repair_hours:g} h)"
        rep.add(name, "spares", f"{len(spares)} hot-spare racks placed, {want_sp} wanted{why}")
    if any(not types[r.rack_type].gpus for r in spares):
        rep.add(name, "spares", "a hot spare must be a GPU rack of the cluster")


def spread_checks(plan: Plan, scenario: Scenario, site: SiteView, rep: VerifyReport) -> None:
    """Failure-domain spread (§11): per cluster with a limit, the GPUs one power node (rows it
    leaves with no feed; for a shed cluster every row it hits), cooling zone or pod takes down."""
    limits = ("max_share_per_power_node", "max_share_per_cooling_zone", "max_share_per_pod")
    limited = [c for c in scenario.clusters if any(getattr(c, x) is not None for x in limits)]
    if not limited:
        return
    types = scenario.catalog.by_id()
    per_row: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in plan.racks:
        t = types.get(r.rack_type)
        if t is not None and t.gpus and r.row in site.rows:
            per_row[r.cluster][r.row] += t.gpus
    for c in limited:
        mine = per_row.get(c.id, {})
        total = sum(mine.values())
        if not total:
            continue
        for kind, eid, rows, share in _domains(c, mine, site):
            down = sum(mine.get(r, 0) for r in rows)
            if share is not None and down > share * total + 1e-6:
                rep.add(
                    f"cluster {c.id}",
                    "spread",
                    f"{kind} {eid} takes down {down:,} of its {total:,} GPUs ({down / total:.1%}), "
                    f"more than max_share_per_{kind} {share:g}",
                )


def _domains(
    c, mine: dict[str, int], site: SiteView
) -> list[tuple[str, str, list[str] | set[str], float | None]]:
    """(kind, element, rows it takes down, the cluster's limit) of every failure domain: cooling
    zones and loops, pods, and power nodes that can fail (rows left with no feed; every row hit
    for a cluster that sheds)."""
    zone_rows: dict[str, set[str]] = defaultdict(set)
    pod_rows: dict[str, set[str]] = defaultdict(set)
    for rid, (_, _, row) in site.rows.items():
        zone_rows[row.air_zone].add(rid)
        if row.liquid_loop:
            zone_rows[row.liquid_loop].add(rid)
        pod_rows[row.pod].add(rid)
    out: list[tuple[str, str, list[str] | set[str], float | None]] = []
    out += [("cooling_zone", z, rows, c.max_share_per_cooling_zone) for z, rows in zone_rows.items()]
    out += [("pod", p, rows, c.max_share_per_pod) for p, rows in pod_rows.items()]
    if c.max_share_per_power_node is None:
        return out
    shed = c.on_power_failure.value == "shed"
    for fid, node in site.nodes.items():
        if node.can_fail:
            dead = site.down(fid)
            feeds = {r: site.rows[r][2].feeds for r in mine}
            rows = [
                r
                for r in mine
                if any(f in dead for f in feeds[r]) and (shed or all(f in dead for f in feeds[r]))
            ]
            out.append(("power_node", fid, rows, c.max_share_per_power_node))
    return out


def fabric_checks(plan: Plan, scenario: Scenario, rep: VerifyReport, site: SiteView | None = None) -> None:
    """Each designed cluster names an allowed design and stays within what it can build; its
    network racks hold exactly the switches its design needs (tiers not in the GPU racks), the
    leaves of each pod in rows serving that pod, and draw exactly the fabric's power."""
    picks = chosen(plan)
    for c in scenario.clusters:
        pick = picks.get(c.id)
        if pick is not None and (not c.fabrics or pick not in c.fabrics):
            what = f"built on '{pick}', not one of its designs ({', '.join(c.fabrics or []) or 'none'})"
            rep.add(f"cluster {c.id}", "fabric", what)
        elif pick is None and c.fabrics and len(c.fabrics) > 1 and any(r.cluster == c.id for r in plan.racks):
            what = f"the plan does not say which of {', '.join(c.fabrics)} it is built on"
            rep.add(f"cluster {c.id}", "fabric", what)
    site = site or site_view(scenario)
    served = served_pods(site)
    designs = {d.id: d for d in scenario.fabrics}
    final = all_figures(scenario, plan.racks, picks)
    for cid, z in final.items():
        _fabric_size_checks(cid, z, scenario, rep)  # racks only add: the horizon's fabric is the largest
    span = {
        cid for cid, z in final.items() if z.region_links
    }  # spanning at the horizon: from its first racks
    for i in range(len(scenario.phases)) if scenario.phases else [0]:
        where = f" in phase {scenario.phases[i].id}" if scenario.phases else ""
        figs = all_figures(scenario, placed_by(scenario, plan.racks, i), picks, span) if where else final
        standing = network_at(scenario, plan.network_racks, i)
        for cid, z in figs.items():
            mine = [nr for nr in standing if nr.cluster == cid]
            _fabric_switch_checks(f"cluster {cid}{where}", z, designs[z.design], mine, served, scenario, rep)


def _fabric_size_checks(cid: str, z, scenario: Scenario, rep: VerifyReport) -> None:
    """Within the design's largest build (per building when joined), joined by a region tier when
    it spans buildings, within the cluster's latency budget."""
    name = f"cluster {cid}"
    biggest = max(z.endpoints_by_building.values(), default=0) if z.per_building else z.endpoints
    if biggest > z.max_endpoints:
        rep.add(
            name, "fabric", f"{biggest:,} endpoints, but fabric {z.design} holds at most {z.max_endpoints:,}"
        )
    if len(z.endpoints_by_building) > 1 and scenario.region_tier is None:
        what = (
            f"stands in {len(z.endpoints_by_building)} buildings on a designed fabric, but the scenario has "
            "no region tier to join them"
        )
        rep.add(name, "fabric", what)
    limit = next((c.max_latency_us for c in scenario.clusters if c.id == cid), None)
    if limit is not None and z.latency_us > limit + 1e-9:
        what = f"{z.latency_us:,.1f} µs of fibre between its farthest buildings, max_latency_us {limit:,.1f}"
        rep.add(name, "latency", what)


def _fabric_switch_checks(
    name: str, z, d, mine: list, served: dict, scenario: Scenario, rep: VerifyReport
) -> None:
    """The cluster's network racks (standing in a phase, with the switches bought by then) hold the
    switches its fabric (of the racks placed by then) needs: per tier, per building's tree, the
    region tier in its building, each pod's leaves in rows serving it; and draw its power."""
    per_tier, leaves_in, in_building = _switch_tally(mine, served)
    for b, counts in z.per_building.items():
        for t_no in range(2, d.tiers + 1):
            have = in_building.get((b, t_no), 0)
            if have != counts[t_no - 1]:
                what = (
                    f"building {b}'s tree needs {counts[t_no - 1]:,} tier-{t_no} switches there, its "
                    f"network racks there hold {have:,}"
                )
                rep.add(name, "network racks", what)
    _region_tier_checks(name, z, per_tier, in_building, scenario, rep)
    for tier in range(2 if d.leaf_in_rack else 1, d.tiers + 1):
        if per_tier.get(tier, 0) != z.switches[tier - 1]:
            what = (
                f"its network racks hold {per_tier.get(tier, 0):,} tier-{tier} switches, its fabric needs "
                f"{z.switches[tier - 1]:,}"
            )
            rep.add(name, "network racks", what)
    _leaf_checks(name, z, mine, served, leaves_in, rep)
    kw = sum(nr.kw for nr in mine)
    if abs(kw - z.kw) > 1e-6 * max(1.0, z.kw) + 1e-4:
        rep.add(
            name, "network racks", f"its network racks draw {kw:,.3f} kW, its fabric draws {z.kw:,.3f} kW"
        )


def _leaf_checks(name: str, z, mine: list, served: dict, leaves_in: dict, rep: VerifyReport) -> None:
    """Each pod's leaves in rows serving it; where rows serve several pods, every leaf serves one."""
    short = False
    for pod, want in z.leaves_per_pod.items():
        if leaves_in.get(pod, 0) < want:
            short = True
            what = (
                f"pod {pod} needs {want:,} leaves in rows serving it, its network racks there hold "
                f"{leaves_in.get(pod, 0):,}"
            )
            rep.add(name, "network racks", what)
    if not short and z.leaves_per_pod:
        got, want = leaves_assignable(z.leaves_per_pod, mine, served)
        if got < want:
            what = (
                f"its pods need {want:,} leaves in rows serving them, rows serving several pods let only "
                f"{got:,} be assigned (a leaf serves one pod)"
            )
            rep.add(name, "network racks", what)


def leaves_assignable(need: dict[str, int], mine: list, served: dict) -> tuple[int, int]:
    """(leaves that can be assigned to pods, leaves the pods need): a maximum flow from the network
    rows' leaves to the pods each row serves, each pod taking at most its need (augmenting paths)."""
    cap: dict[str, int] = defaultdict(int)
    for nr in mine:
        cap[nr.row] += sum(sc.count for sc in nr.switches if sc.tier == 1)
    rows = {r: [p for p in served.get(r, ()) if p in need] for r, n in cap.items() if n > 0}
    flow: dict[tuple[str, str], int] = defaultdict(int)  # (row, pod) → leaves assigned
    left = dict(cap)
    taken = {p: 0 for p in need}
    for pod in sorted(need):
        while taken[pod] < need[pod]:
            path = _augmenting(pod, need, taken, rows, left, flow)
            if path is None:
                break
            amount = min(need[pod] - taken[pod], path[0])
            _push(path[1], amount, left, flow)
            taken[pod] += amount
    return sum(taken.values()), sum(need.values())


def _augmenting(pod: str, need: dict, taken: dict, rows: dict, left: dict, flow: dict):
    """(bottleneck, [(row, pod), ...] alternating edges) from a row with leaves left to ``pod``,
    through rows whose leaves other pods hold and may move (breadth first), or None."""
    serves: dict[str, list[str]] = defaultdict(list)
    for r, pods in rows.items():
        for p in pods:
            serves[p].append(r)
    seen_rows: set[str] = set()
    frontier = [(r, [(r, pod)]) for r in sorted(serves[pod])]
    while frontier:
        nxt = []
        for r, path in frontier:
            if r in seen_rows:
                continue
            seen_rows.add(r)
            if left.get(r, 0) > 0:
                moves = [flow[e] for e in path[1::2]] if len(path) > 1 else []
                return min([left[r], *moves]), path
            for p2 in rows[r]:  # a pod holding this row's leaves takes them from another row
                if flow[r, p2] > 0:
                    nxt += [
                        (r2, [(r2, p2), (r, p2), *path]) for r2 in sorted(serves[p2]) if r2 not in seen_rows
                    ]
        frontier = nxt
    return None


def _push(path: list, amount: int, left: dict, flow: dict) -> None:
    """Move ``amount`` along an augmenting path: the first row gives, each middle pod swaps rows."""
    left[path[0][0]] -= amount
    for i, e in enumerate(path):
        flow[e] += amount if i % 2 == 0 else -amount


def _switch_tally(mine: list, served: dict):
    """Switches the network racks hold: per tier, per pod's leaves (in rows serving it), per (building,
    tier)."""
    per_tier: dict[int, int] = defaultdict(int)
    leaves_in: dict[str, int] = defaultdict(int)
    in_building: dict[tuple[str, int], int] = defaultdict(int)
    for nr in mine:
        for sc in nr.switches:
            per_tier[sc.tier] += sc.count
            in_building[nr.building, sc.tier] += sc.count
            if sc.tier == 1:
                for pod in served.get(nr.row, ()):
                    leaves_in[pod] += sc.count
    return per_tier, leaves_in, in_building


def _region_tier_checks(
    name: str, z, per_tier: dict, in_building: dict, scenario: Scenario, rep: VerifyReport
) -> None:
    """The region tier's switches: as many as the fabric needs, all in the tier's building."""
    region = scenario.region_tier
    if per_tier.get(4, 0) != z.region_switches:
        what = (
            f"its network racks hold {per_tier.get(4, 0):,} region-tier switches, it needs "
            f"{z.region_switches:,}"
        )
        rep.add(name, "network racks", what)
    elsewhere = sum(
        n for (b, t_no), n in in_building.items() if t_no == 4 and (region is None or b != region.building)
    )
    if elsewhere:
        where = region.building if region else "(none)"
        rep.add(
            name,
            "network racks",
            f"{elsewhere:,} region-tier switches stand outside the tier's building {where}",
        )


def switch_supply_checks(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    """Switch supply (§17): every switch of a supplied model the designed fabrics need (leaves, in
    GPU racks too, spines, cores, border and region switches, recomputed from the racks) ≤ the
    switches delivered; its use recorded as ``switch:<model>``."""
    if not scenario.switch_supply:
        return
    designs = {d.id: d for d in scenario.fabrics}
    used: dict[str, int] = defaultdict(int)
    for z in all_figures(scenario, plan.racks, chosen(plan)).values():
        d = designs[z.design]
        for model, n in zip(d.switches, z.switches, strict=False):
            used[model] += n
        if z.region_switches and scenario.region_tier is not None:
            used[scenario.region_tier.switch] += z.region_switches
    for model in sorted({x.switch for x in scenario.switch_supply}):
        delivered = sum(x.count for x in scenario.switch_supply if x.switch == model)
        if used[model] > delivered:
            rep.add(
                f"supply switch {model}",
                "supply",
                f"{used[model]:,} {model} switches in the fabrics, {delivered:,} delivered",
            )
        rep.usage.append(
            Usage(
                kind=LimitKind.supply,
                id=f"switch:{model}",
                value=float(used[model]),
                limit=float(delivered),
                unit="switches",
            )
        )


def region_bandwidth_checks(plan: Plan, scenario: Scenario, rep: VerifyReport) -> None:
    """Bandwidth to the region tier (§19): per building with a stated Tb/s, the links every cluster
    spanning from it sends up, ⌈E_b · g_e / (r · g_R)⌉ each (recounted from the racks), × g_R ≤ it;
    its use recorded as ``region_bandwidth``. In phased plans the racks placed by the last phase:
    links only grow as racks are placed, so the last phase's is the most any phase sends."""
    tier = scenario.region_tier
    if tier is None or not tier.building_tbps:
        return
    sw = scenario.catalog.switch_by_id()
    designs = {d.id: d for d in scenario.fabrics}
    g_r = sw[tier.switch].port_gbps
    gbps: dict[str, float] = defaultdict(float)
    for z in all_figures(scenario, plan.racks, chosen(plan)).values():
        if len(z.endpoints_by_building) < 2:
            continue  # in one building: nothing crosses the tier
        g_e = sw[designs[z.design].switches[0]].port_gbps
        for b, ends in z.endpoints_by_building.items():
            links = math.ceil(ends * g_e / (tier.oversubscription * g_r) - 1e-9)
            gbps[b] += links * g_r
    for b, cap in sorted(tier.building_tbps.items()):
        used = gbps.get(b, 0.0) / 1000
        if used > cap + 1e-9:
            rep.add(
                f"region bandwidth {b}",
                "fabric",
                f"{used:,.1f} Tb/s of region links from {b}, the tier gives it {cap:,.1f} Tb/s",
            )
        rep.usage.append(Usage(kind=LimitKind.region_bandwidth, id=b, value=used, limit=cap, unit="Tb/s"))
