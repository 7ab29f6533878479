"""The verifier's own count of a plan's reliability (§11, §16), written apart from the optimiser's
:mod:`planner.rules.reliability`, :mod:`planner.rules.backup` and :mod:`planner.input.asks`.

- Interruptions per hour of a cluster: Σ over causes of count ÷ (window hours × the reference
  cluster's units of the cause's scale) × the cluster's units (GPUs, servers, racks, links — of
  the stated classes for a link cause) of its placed GPU racks; or servers × the per-node rate
  (each server weighted by its type's server_fault_share).
  Hot spares stand idle and add none; a utility outage in a building without ride-through adds
  events_per_year ÷ 8,760 to every cluster with racks there.
- Goodput (Young/Daly): C = checkpoint GB ÷ write GB/s (h), τ = √(2 · MTBF · C),
  goodput = max(0, 1 − C/τ − (τ/2 + restart)/MTBF).
- NVLink domains (a rack type stating ``nvlink_domain_gpus``): every repairable fault takes its
  server (a rack-scale fault: its whole domain) out for the cluster's repair hours T; a domain
  with s spare trays is out when more than s of its trays are under repair or a domain-wide fault
  is: q = 1 − e^(−a) Σ_{x≤s} aˣ/x! · e^(−w) (a, w: expected trays and domain-wide faults under
  repair). Spare racks' domains stand in for the job's: with m = Σ q over every domain, the
  job misses E[max(0, X − k)] domains, X Poisson(m), k spare domains. Its GPUs in service:
  (job GPUs − spare trays' GPUs − working GPUs per domain × that) ÷ job GPUs; goodput × this.
- Blast radius: a power node that can fail takes down the racks of rows left with no live feed;
  rows it only hits keep power, their capped and shed clusters' GPUs counted as such; N-1 holds
  when every surviving node carries its load (racks of the rows hit at their policy's power) within
  its usable kW and no loaded redundant row loses every feed. A cooling zone, pod or row: every
  rack in its rows.
- Backup power: per building with racks the design with the lowest $ per useful GPU-hour,
  (TCO + Σ backup capex) ÷ Σ_b,c H_bc · goodput_c · (1 − dark_b) (every assignment up to 4,096,
  else one building at a time).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from dataclasses import dataclass, field

from planner.enums import FailoverPolicy, Scale
from planner.schema import (
    BackupChoice,
    BlastRow,
    ClusterReliability,
    PlacedRack,
    ReliabilityReport,
    Scenario,
)
from planner.verifier.rules_recount import (
    HOURS,
    flow,
    network_kw,
    phase_index,
    planning_kw,
    standing_racks,
    start_years,
    structure_rate,
)
from planner.verifier.site import SiteView

MAX_ASSIGNMENTS = 4096
KIND_RANK = {"utility": 0, "power_node": 1, "cooling_zone": 2, "pod": 3, "row": 4, "maintenance": 5}


@dataclass
class _Job:
    """One cluster's placed racks as the reliability model reads them."""

    gpus: int = 0
    servers: float = 0
    """Σ servers × their type's server_fault_share."""
    racks: int = 0
    links: dict[str | None, int] = field(default_factory=dict)
    storage_racks: int = 0
    write_gb_per_s: float = 0.0
    spares: int = 0
    in_service: float | None = None


def _per_unit(scenario: Scenario) -> list[tuple[Scale, list[str] | None, float, bool]]:
    """(scale, link classes or None, faults per unit-hour, needs repair) of every cause."""
    rel = scenario.reliability
    if rel.node_failures_per_1000_node_days is not None:
        return [(Scale.server, None, rel.node_failures_per_1000_node_days / 24_000, True)]
    ref = rel.reference
    per = {
        Scale.gpu: ref.gpus,
        Scale.server: ref.gpus / ref.gpus_per_server,
        Scale.rack: ref.gpus / ref.gpus_per_rack,
        Scale.link: ref.gpus * ref.links_per_gpu,
    }
    return [
        (c.scale, c.link_classes or None, c.count / (ref.days * 24 * per[c.scale]), c.repair)
        for c in rel.causes
    ]


def _pmf(mean: float, x: int) -> float:
    """P(Poisson(mean) = x), through logarithms (no overflow at large x)."""
    if mean <= 0:
        return 1.0 if x == 0 else 0.0
    return math.exp(-mean + x * math.log(mean) - math.lgamma(x + 1))


def _under_repair(causes, t, link_class: str | None, hours: float) -> tuple[float, float]:
    """(trays, domain-wide faults) of one NVLink domain of rack type t under repair, expected."""
    per_rack = t.gpus // t.nvlink_domain_gpus
    trays = t.nvlink_domain_gpus // t.gpus_per_server
    links = t.servers_per_rack * t.links_per_server + t.links_per_rack
    a = w = 0.0
    for scale, classes, rate, repair in causes:
        if not repair:
            continue
        if scale == Scale.rack:
            w += rate * hours / per_rack
        elif scale == Scale.link:
            a += rate * hours * links / per_rack if classes is None or link_class in classes else 0.0
        else:
            a += rate * hours * (t.nvlink_domain_gpus if scale == Scale.gpu else trays * t.server_fault_share)
    return a, w


def _in_service(scenario: Scenario, c, racks: list[PlacedRack]) -> float | None:
    """Share of a cluster's job GPUs in service with NVLink domains as the repair unit (module docstring)."""
    types = scenario.catalog.by_id()
    causes = _per_unit(scenario)
    s, hours = c.domain_spare_servers, c.repair_hours
    job_gpus = idle = domains = spare_domains = 0
    working, m = 0, 0.0
    for r in racks:
        t = types.get(r.rack_type)
        if r.cluster != c.id or t is None or not t.gpus:
            continue
        if not r.spare:
            job_gpus += t.gpus
        size = t.nvlink_domain_gpus
        if not size:
            continue
        per_rack = t.gpus // size
        a, w = _under_repair(causes, t, r.link_class, hours)
        up = sum(_pmf(a, x) for x in range(s + 1)) * math.exp(-w)
        m += per_rack * (1 - min(1.0, up))
        if r.spare:
            spare_domains += per_rack
        else:
            domains += per_rack
            idle += per_rack * s * t.gpus_per_server
            working = max(working, size - s * t.gpus_per_server)
    if not domains or not job_gpus:
        return None
    k = spare_domains
    short = m - k + sum((k - x) * _pmf(m, x) for x in range(k))
    return max(0.0, (job_gpus - idle - working * max(0.0, short)) / job_gpus)


def _jobs(scenario: Scenario, racks: list[PlacedRack]) -> dict[str, _Job]:
    types = scenario.catalog.by_id()
    jobs = {c.id: _Job() for c in scenario.clusters}
    for r in racks:
        j = jobs.get(r.cluster)
        if j is None:
            continue
        j.spares += 1 if r.spare else 0
        t = types.get(r.rack_type)
        if t is None:
            continue
        if t.gpus and not r.spare:
            j.gpus += t.gpus
            j.servers += t.servers_per_rack * t.server_fault_share
            j.racks += 1
            j.links[r.link_class] = (
                j.links.get(r.link_class, 0) + t.links_per_server * t.servers_per_rack + t.links_per_rack
            )
        elif not t.gpus and t.storage_write_gb_per_s > 0:
            j.storage_racks += 1
            j.write_gb_per_s += t.storage_write_gb_per_s
    mine: dict[str, list[PlacedRack]] = defaultdict(list)
    for r in racks:
        mine[r.cluster].append(r)
    for c in scenario.clusters:
        jobs[c.id].in_service = _in_service(scenario, c, mine.get(c.id, []))
    return jobs


def _rate(scenario: Scenario, j: _Job) -> float:
    """Interruptions per hour of a job (module docstring): Σ causes faults per unit-hour × its units."""
    total = 0.0
    for scale, classes, rate, _ in _per_unit(scenario):
        if scale == Scale.link:
            mine = sum(n for lc, n in j.links.items() if classes is None or lc in classes)
        else:
            mine = {Scale.gpu: j.gpus, Scale.server: j.servers, Scale.rack: j.racks}[scale]
        total += mine * rate
    return total


def _goodput(mtbf_h: float, size_gb: float | None, write_gb_per_s: float, restart_h: float, stall_s=None):
    """(checkpoint h, interval h, goodput) of a job (module docstring); without write bandwidth the
    checkpoint time is the cluster's in-memory stall ``stall_s`` when it states one."""
    written = size_gb is not None and write_gb_per_s > 0
    c = size_gb / write_gb_per_s / 3600 if written else (None if stall_s is None else stall_s / 3600)
    if c is None or not math.isfinite(mtbf_h):
        stated = size_gb is not None or stall_s is not None
        return None, None, (1.0 if stated and not math.isfinite(mtbf_h) else None)
    tau = math.sqrt(2 * mtbf_h * c)
    g = 1 - restart_h / mtbf_h if tau <= 0 else 1 - c / tau - (tau / 2 + restart_h) / mtbf_h
    return c, tau, max(0.0, g)


def _figures(scenario: Scenario, jobs: dict[str, _Job], extra: dict[str, float]):
    """Per cluster: (its job, interruptions per hour, MTBF h or None, (checkpoint h, interval h, goodput))."""
    out = {}
    for c in scenario.clusters:
        j = jobs[c.id]
        base, lost = _rate(scenario, j), (extra.get(c.id, 0.0) if j.gpus else 0.0)
        rate = base + lost
        mtbf = 1 / rate if rate > 0 else None
        size = c.checkpoint_gb_per_gpu * j.gpus if c.checkpoint_gb_per_gpu is not None and j.gpus else None
        cold = c.cold_restart_min if c.cold_restart_min is not None else c.restart_min
        mean_restart_h = (base * c.restart_min + lost * cold) / (60 * rate) if rate > 0 else 0.0
        g = (
            _goodput(mtbf, size, j.write_gb_per_s, mean_restart_h, c.checkpoint_s)
            if mtbf is not None
            else (None, None, None)
        )
        if g[2] is not None and j.in_service is not None:
            g = (g[0], g[1], g[2] * j.in_service)
        out[c.id] = (j, rate, mtbf, g)
    return out


def recount_goodput(scenario: Scenario, racks: list[PlacedRack]) -> dict[str, float]:
    """Cluster → goodput, for clusters with a checkpoint size or stall (no outages counted)."""
    if all(c.checkpoint_gb_per_gpu is None and c.checkpoint_s is None for c in scenario.clusters):
        return {}
    figures = _figures(scenario, _jobs(scenario, racks), {})
    return {cid: g[2] for cid, (_, _, _, g) in figures.items() if g[2] is not None}


# ------------------------------------------------------------------ blast radius


def _row_loads(
    scenario: Scenario, site: SiteView, racks: list[PlacedRack], network
) -> tuple[dict, dict, dict]:
    """Row → kW at full planning power; → kW at each cluster's failover power; → cluster → GPUs."""
    types = scenario.catalog.by_id()
    policy = {c.id: c.on_power_failure.factor(c.cap_ratio) for c in scenario.clusters}
    full: dict[str, float] = defaultdict(float)
    hit: dict[str, float] = defaultdict(float)
    gpus: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in racks:
        t = types.get(r.rack_type)
        if t is None or r.row not in site.rows:
            continue
        kw = planning_kw(scenario, t)
        full[r.row] += kw
        hit[r.row] += kw * policy.get(r.cluster, 1.0)
        if t.gpus and not r.spare:
            gpus[r.row][r.cluster] += t.gpus
    fixed = [
        (p.network_rack.row, types[p.network_rack_type])
        for p in site.pods.values()
        if p.network_rack_type in types
    ]
    for row, t in fixed:
        full[row] += planning_kw(scenario, t)
        hit[row] += planning_kw(scenario, t)
    for nr in network:
        if nr.row in site.rows:
            full[nr.row] += nr.kw
            hit[nr.row] += nr.kw
    return full, hit, gpus


def _spread(site: SiteView, kw: float, feeds, dead: set[str], into: dict[str, float], sign: float) -> bool:
    """A row's kW split evenly over its live feeds, each share up its feed's chain; False: no feed live."""
    live = [f for f in feeds if f not in dead]
    for f in live:
        for v in site.up(f):
            into[v] += sign * kw / len(live)
    return bool(live)


def _node_blast(
    scenario, site: SiteView, fid: str, loads, normal: dict[str, float], rows_of_feed: dict[str, list[str]]
) -> BlastRow:
    """What a power node's failure takes down, caps and sheds, and whether N-1 holds
    (``rows_of_feed``: feed → the rows hanging from it)."""
    full, hit, gpus = loads
    policy = {c.id: c.on_power_failure for c in scenario.clusters}
    dead = site.down(fid)
    lost: dict[str, int] = defaultdict(int)
    capped: dict[str, int] = defaultdict(int)
    shed: dict[str, int] = defaultdict(int)
    holds = True
    change: dict[str, float] = defaultdict(float)
    for rid in sorted({r for f in dead for r in rows_of_feed.get(f, ())}):
        row = site.rows[rid][2]
        _spread(site, full.get(rid, 0.0), row.feeds, set(), change, -1.0)
        if not _spread(site, hit.get(rid, 0.0), row.feeds, dead, change, 1.0):
            for c, g in gpus.get(rid, {}).items():
                lost[c] += g
            holds = holds and not (row.redundant and full.get(rid, 0.0) > 1e-6)
            continue
        for c, g in gpus.get(rid, {}).items():
            if policy.get(c) == FailoverPolicy.cap:
                capped[c] += g
            elif policy.get(c) == FailoverPolicy.shed:
                shed[c] += g
    for v, d in change.items():
        if v not in dead and d > 1e-6 and normal.get(v, 0.0) + d > site.nodes[v].usable_kw + 1e-6:
            holds = False
    return BlastRow(
        kind="power_node",
        id=fid,
        gpus_lost=sum(lost.values()),
        lost=dict(lost),
        capped=dict(capped),
        shed=dict(shed),
        n1_holds=holds,
    )


def _maintenance_blasts(scenario: Scenario, site: SiteView, loads, normal, rows_of_feed) -> list[BlastRow]:
    """§21: for each node of a maintained class out and each other node that can fail (not under it),
    the GPUs of rows left with no live feed, and whether every survivor stays within its usable kW
    with every rack in full."""
    out = []
    full, _, gpus = loads
    for mid, m in site.nodes.items():
        if not any(
            k.kind == m.kind and (not k.buildings or site.node_building.get(mid) in k.buildings)
            for k in scenario.maintenance
        ):
            continue
        out_m = site.down(mid)
        for fid, n in site.nodes.items():
            if fid == mid or not n.can_fail or fid in out_m:
                continue
            dead = out_m | site.down(fid)
            lost: dict[str, int] = defaultdict(int)
            change: dict[str, float] = defaultdict(float)
            for rid in sorted({r for f in dead for r in rows_of_feed.get(f, ())}):
                feeds = site.rows[rid][2].feeds
                _spread(site, full.get(rid, 0.0), feeds, set(), change, -1.0)
                if not _spread(site, full.get(rid, 0.0), feeds, dead, change, 1.0):
                    for c, g in gpus.get(rid, {}).items():
                        lost[c] += g
            holds = all(
                v in dead or normal.get(v, 0.0) + d <= site.nodes[v].usable_kw + 1e-6
                for v, d in change.items()
            )
            out.append(
                BlastRow(
                    kind="maintenance",
                    id=fid,
                    gpus_lost=sum(lost.values()),
                    lost=dict(lost),
                    n1_holds=holds,
                    during=mid,
                )
            )
    return out


def _blasts(scenario: Scenario, site: SiteView, racks: list[PlacedRack], network) -> list[BlastRow]:
    """Every element's blast radius (module docstring), unordered."""
    loads = _row_loads(scenario, site, racks, network)
    normal: dict[str, float] = defaultdict(float)
    for rid, kw in loads[0].items():
        _spread(site, kw, site.rows[rid][2].feeds, set(), normal, 1.0)
    rows_of_feed: dict[str, list[str]] = defaultdict(list)
    for rid, (_, _, row) in site.rows.items():
        for f in row.feeds:
            rows_of_feed[f].append(rid)
    out = [
        _node_blast(scenario, site, fid, loads, normal, rows_of_feed)
        for fid, n in site.nodes.items()
        if n.can_fail
    ]
    out += _maintenance_blasts(scenario, site, loads, normal, rows_of_feed)
    domains: dict[tuple[str, str], list[str]] = defaultdict(list)
    for rid, (_, _, row) in site.rows.items():
        domains["cooling_zone", row.air_zone].append(rid)
        if row.liquid_loop:
            domains["cooling_zone", row.liquid_loop].append(rid)
        domains["pod", row.pod].append(rid)
        domains["row", rid].append(rid)
    for (kind, eid), rows in domains.items():
        lost: dict[str, int] = defaultdict(int)
        for rid in rows:
            for c, g in loads[2].get(rid, {}).items():
                lost[c] += g
        out.append(BlastRow(kind=kind, id=eid, gpus_lost=sum(lost.values()), lost=dict(lost), n1_holds=None))
    return out


# ------------------------------------------------------------------ backup power


def _backup(scenario: Scenario, racks: list[PlacedRack], network, tco_usd: float) -> list[BackupChoice]:
    """The backup design per building with racks (module docstring), fixed ones as the scenario says."""
    bp = scenario.backup_power
    types = scenario.catalog.by_id()
    kw: dict[str, float] = defaultdict(float)
    hours: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    gpus: dict[str, int] = defaultdict(int)
    starts, at = start_years(scenario), phase_index(scenario)
    h, rate = scenario.costs.horizon_years, scenario.costs.discount_rate
    designed = {c.id for c in scenario.clusters if c.fabrics}
    for r in racks:
        t = types.get(r.rack_type)
        if t is None:
            continue
        kw[r.building] += planning_kw(scenario, t)  # with its back-end network
        kw[r.building] += 0.0 if r.cluster in designed else network_kw(scenario, t)
        if t.gpus and not r.spare:
            gpus[r.building] += t.gpus
            t0 = 0.0 if r.existing or r.phase not in at else starts[at[r.phase]]
            hours[r.building][r.cluster] += t.gpus * HOURS * flow(t0, h, rate)
    for n in network:
        kw[n.building] += n.kw
    buildings = sorted(b for b, v in kw.items() if v > 0)
    designs = {d.id: d for d in bp.designs}
    jobs = _jobs(scenario, racks)
    events = bp.outage.events_per_year
    # plant the facility rate holds (a design with less is a credit); none in a structure at its own rate
    split = scenario.costs.facility_split
    in_rate = (
        bp.in_facility_usd_per_mw
        if bp.in_facility_usd_per_mw is not None
        else (split.backup * scenario.costs.facility_usd_per_mw if split is not None else 0.0)
    )
    held = {b: 0.0 if structure_rate(scenario, b) is not None else in_rate for b in kw}

    def dark(d) -> float:
        return (
            0.0
            if d.ride_through
            else events * (d.restore_h if d.restore_h is not None else bp.outage.duration_h)
        )

    def price(choice: dict[str, str]) -> float:
        extra: dict[str, float] = defaultdict(float)
        for b, by_cluster in hours.items():
            if not designs[choice[b]].ride_through if b in choice else False:
                for c in by_cluster:
                    extra[c] += events / HOURS
        good = {
            cid: (g[2] if g[2] is not None else 1.0)
            for cid, (_, _, _, g) in _figures(scenario, jobs, extra).items()
        }
        useful = sum(
            x * good.get(c, 1.0) * (1.0 - dark(designs[choice[b]]) / HOURS)
            for b, v in hours.items()
            for c, x in v.items()
        )
        capex = sum((designs[choice[b]].usd_per_mw - held[b]) * kw[b] / 1000 for b in buildings)
        return (tco_usd + capex) / useful if useful > 0 else math.inf

    best = _best_choice(bp, buildings, price)
    return [
        BackupChoice(
            building=b,
            design=best[b],
            fixed=b in bp.fixed,
            it_kw=round(kw[b], 6),
            capex_usd=round((designs[best[b]].usd_per_mw - held[b]) * kw[b] / 1000, 2),
            ride_through=designs[best[b]].ride_through,
            outage_interruptions_per_year=0.0 if designs[best[b]].ride_through else events,
            gpu_hours_dark_per_year=round(dark(designs[best[b]]) * gpus.get(b, 0), 6),
            usd_per_useful_gpu_hour={d.id: _finite(price({**best, b: d.id})) for d in bp.designs},
        )
        for b in buildings
    ]


def _finite(x: float) -> float:
    """A price rounded as stated, 0 without useful GPU-hours (no price to state)."""
    return round(x, 6) if math.isfinite(x) else 0.0


def _best_choice(bp, buildings: list[str], price) -> dict[str, str]:
    """The cheapest assignment of designs to the buildings not fixed (ties: designs in their order)."""
    order = [d.id for d in bp.designs]
    free = [b for b in buildings if b not in bp.fixed]
    base = {b: bp.fixed[b] for b in buildings if b in bp.fixed}
    if len(order) ** len(free) <= MAX_ASSIGNMENTS:
        choices = (
            dict(base, **dict(zip(free, combo, strict=True)))
            for combo in itertools.product(order, repeat=len(free))
        )
        return min(choices, key=lambda a: (round(price(a), 12), [order.index(a[b]) for b in free]))
    best = dict(base, **{b: order[0] for b in free})
    improved = True
    while improved:
        improved = False
        for b in free:
            pick = min(order, key=lambda d, b=b: (round(price({**best, b: d}), 12), order.index(d)))
            if pick != best[b]:
                best[b], improved = pick, True
    return best


# ------------------------------------------------------------------ the report


def recount_reliability(
    scenario: Scenario, site: SiteView, racks: list[PlacedRack], network, tco_usd: float | None
) -> ReliabilityReport:
    """The reliability section a plan should state: per cluster its interruptions, MTBF, checkpoint,
    goodput and worst shares; the backup choice (with backup power and the plan's TCO); every
    element that takes something down, most GPUs lost first."""
    network = list(network)
    racks = standing_racks(scenario, racks)  # retired racks are gone by the end
    blasts = _blasts(scenario, site, racks, network)
    backup = (
        _backup(scenario, racks, network, tco_usd)
        if scenario.backup_power is not None and tco_usd is not None and racks
        else []
    )
    extra: dict[str, float] = defaultdict(float)
    if backup:
        per_building: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        types = scenario.catalog.by_id()
        for r in racks:
            t = types.get(r.rack_type)
            if t is not None and t.gpus and not r.spare:
                per_building[r.building][r.cluster] += t.gpus
        for b in backup:
            if not b.ride_through and per_building.get(b.building):
                for c in per_building[b.building]:
                    extra[c] += scenario.backup_power.outage.events_per_year / HOURS
                lost = dict(sorted(per_building[b.building].items()))
                blasts.append(
                    BlastRow(
                        kind="utility", id=b.building, gpus_lost=sum(lost.values()), lost=lost, n1_holds=None
                    )
                )
    blasts.sort(
        key=lambda b: (
            -b.gpus_lost,
            -sum(b.shed.values()) - sum(b.capped.values()),
            KIND_RANK[b.kind],
            b.id,
            b.during or "",
        )
    )
    rows = _cluster_rows(scenario, _figures(scenario, _jobs(scenario, racks), extra), blasts)
    shown = [b for b in blasts if b.lost or b.capped or b.shed or b.n1_holds is False]
    return ReliabilityReport(clusters=rows, backup=backup, blast_radius=shown)


def _cluster_rows(scenario: Scenario, figures: dict, blasts: list[BlastRow]) -> list[ClusterReliability]:
    """One row per cluster: its figures and the worst share of its GPUs one power node, zone or pod takes
    down."""
    worst: dict[tuple[str, str], float] = defaultdict(float)
    for b in blasts:
        key = {"power_node": "power", "cooling_zone": "zone", "pod": "pod"}.get(b.kind)
        if key is None:
            continue
        for c, g in {**b.lost, **{k: b.lost.get(k, 0) + v for k, v in b.shed.items()}}.items():
            total = figures[c][0].gpus if c in figures else 0
            if total:
                worst[c, key] = max(worst[c, key], g / total)

    def r6(x):
        return None if x is None else round(x, 6)

    out = []
    for c in scenario.clusters:
        j, rate, mtbf, (ck, tau, g) = figures[c.id]
        out.append(
            ClusterReliability(
                cluster=c.id,
                gpus=j.gpus,
                mtbf_h=r6(mtbf),
                interruptions_per_day=round(24 * rate, 6),
                storage_racks=j.storage_racks,
                write_gb_per_s=round(j.write_gb_per_s, 6),
                checkpoint_s=r6(ck * 3600 if ck is not None else None),
                interval_h=r6(tau),
                goodput=r6(g),
                in_service=r6(j.in_service if g is not None else None),
                gpu_hours_lost_per_day=r6(j.gpus * 24 * (1 - g) if g is not None else None),
                spare_racks=j.spares,
                worst_power_share=round(worst[c.id, "power"], 6),
                worst_zone_share=round(worst[c.id, "zone"], 6),
                worst_pod_share=round(worst[c.id, "pod"], 6),
            )
        )
    return out
