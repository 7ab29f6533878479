"""The master of a phased region's decomposition by building (§16): how many GPUs of each cluster
stand in each building in each phase, and how much of the power arrived each building may draw.

For clusters c, buildings b and phases i (a scenario without phases has one):

    x[c,b,i] = g_c · u[c,b,i], u ∈ ℤ≥0             GPUs of c standing in b at the end of phase i,
                                                   in whole rack steps g_c
    x[c,b,i] ≥ x[c,b,i−1]                          racks stay
    Σ_c x[c,b,i] / cap[c,b] ≤ on[b,i]              building room, shared pro rata (cap: the room
                                                   the proposals count for c's rack types alone;
                                                   on: the share of b's positions online in i)
    Σ_b x[c,b,i] ≤ d[c,i]                          c's figure in phase i ("as many as fit" up to it)
    x[c,b,i] ≤ cap[c,b] · y[c,b],  Σ_b y[c,b] ≤ 1  a cluster bound to one building (y binary)
    PUE · Σ_b (Σ_c k[c,b] · x[c,b,i] + F[b,i]) ≤ A_i   power arrived (k: planning kW per GPU of
                                                   c's rack type, F: network and installed racks)
    maximise Σ_i Σ_{c,b} x[c,b,i]                  GPU-phases, as the whole model counts them

Each building then plans alone with its clusters' shares as per-phase figures and its share of
the arrival as its own ``power_arrival``: PUE · (Σ_c k · x[c,b,i] + F[b,i]) in phase i plus an even
part of what the master left (the least left in phase i or any later one: a non-decreasing
series). The shares add up to no more than each cluster's figure and each phase's arrival, so the
buildings' plans join into a plan of the whole (which is verified). Handles max_gpus with "as many as fit"
clusters; anything else goes to
the whole model (:func:`unsupported` says why)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pulp

from planner.enums import Demand, Objective, RetrofitKind, Scope
from planner.input.site_index import SiteIndex, network_racks
from planner.input.timeline import timeline
from planner.rules.fabric_sizing import fabric_floor_kw, region_kw_per_gpu
from planner.schema import Scenario
from planner.solving.backends import SolveRequest, from_name
from planner.solving.core import evaluate


@dataclass(frozen=True)
class Share:
    """What one building gets: per cluster its GPUs per phase, and its power per phase, kW."""

    gpus: dict[str, list[int]]
    power_kw: list[float]


def unsupported(scenario: Scenario) -> str | None:
    """Why the phased region master cannot split this scenario (None: it can)."""
    if Objective(scenario.objective) != Objective.max_gpus:
        return f"the phased region decomposition plans max_gpus only (objective {scenario.objective})"
    if scenario.budgets.it_power_kw is not None or scenario.budgets.capex_usd is not None:
        return "site budgets over phases couple the buildings"
    if scenario.existing:
        return "installed racks in a phased region"
    why = _fabrics_unsupported(scenario)
    if why is not None:
        return why
    for c in scenario.clusters:
        if c.demand != Demand.max:
            return (
                f"cluster {c.id} wants an exact or least figure (the phased region decomposition splits "
                "'as many as fit' clusters)"
            )
        if (
            c.storage_racks
            or c.storage_pb
            or c.storage_write_gb_per_s
            or c.goodput_target
            or c.spare_availability
        ):
            return f"cluster {c.id} asks for storage or spares, which a split would ask in every building"
    return None


def _fabrics_unsupported(scenario: Scenario) -> str | None:
    """Designed fabrics split by building: one design per cluster, no latency budget or switch
    supply (they couple the buildings), and a region tier in a building of network rows only (its
    switches stand after the buildings are planned, in room no building plan takes)."""
    designed = [c for c in scenario.clusters if c.fabrics]
    if not designed:
        return None
    for c in designed:
        if len(c.fabrics or []) > 1:
            return f"cluster {c.id} chooses among designs (the region decomposition plans one a cluster)"
        if c.max_latency_us is not None:
            return f"cluster {c.id} has a latency budget (kept over the buildings together)"
    if scenario.switch_supply:
        return "switch supply is shared by the buildings' fabrics"
    tier = scenario.region_tier
    if tier is not None:
        hub = next(b for b in scenario.site.buildings if b.id == tier.building)
        if any(r.network is None for h in hub.halls for r in h.rows):
            return f"the region tier's building {hub.id} holds GPU rows (its switches need room of their own)"
    return None


def typical_link_w(scenario: Scenario, ix: SiteIndex, t) -> float:
    """W per cabled link of a rack of type t at the median GPU position of the site (by cable
    length to its pod's network rack): the master's estimate of where racks stand."""
    watts = sorted(
        lc.power_w_per_link
        for rid, ref in ix.rows.items()
        if ref.row.network is None
        for i in range(ref.row.positions)
        if (lc := ix.link_class_for(t, ix.cable_length_m(rid, i))) is not None
    )
    return watts[len(watts) // 2] if watts else 0.0


def fabric_kw_per_gpu(scenario: Scenario, cid: str, t, link_w: float | None = None) -> tuple[float, float]:
    """(kW per GPU in its own building, kW per GPU at the region tier's building) a cluster's back-end
    network draws, as the master counts it: the rack type's network allowance (the catalog's
    estimate of a fabric's W per GPU) outside a designed fabric; on one, its design's share per
    rack before rounding (:func:`planner.rules.fabric_sizing.fabric_floor_kw`) with its cabled links
    at ``link_w`` W each (:func:`typical_link_w`; an estimate: each building plan sizes its fabric
    exactly); a designed cluster that may span the region adds per GPU its region links
    (:func:`planner.rules.fabric_sizing.region_kw_per_gpu`)."""
    c = next(x for x in scenario.clusters if x.id == cid)
    here = t.network_w_per_gpu / 1000 if scenario.network_allowance else 0.0
    if c.fabrics:
        d = next(x for x in scenario.fabrics if x.id == c.fabrics[0])
        here = fabric_floor_kw(scenario, d, t, link_w) / t.gpus
    tier = scenario.region_tier
    if not c.fabrics or tier is None or scenario.scope_of(c) != Scope.site:
        return here, 0.0
    own, hub = region_kw_per_gpu(scenario, next(x for x in scenario.fabrics if x.id == c.fabrics[0]))
    return here + own, hub


def tier_kw(scenario: Scenario, gpus_by_building: list[tuple[str, dict[str, int]]], spans: set[str]) -> float:
    """kW of the region tier's switches for the GPUs per building (one dict a cluster) of the
    clusters in ``spans`` (those standing in two buildings or more by the horizon: the tier joins
    them from their first racks): ⌈Σ_b ⌈E_b · g_e / (r · g_R)⌉ / k_R⌉ switches each."""
    tier = scenario.region_tier
    if tier is None:
        return 0.0
    sw = scenario.catalog.switch_by_id()
    agg = sw[tier.switch]
    total = 0.0
    for cid, by_b in gpus_by_building:
        c = next(x for x in scenario.clusters if x.id == cid)
        if not c.fabrics or cid not in spans:
            continue
        d = next(x for x in scenario.fabrics if x.id == c.fabrics[0])
        rate = sw[d.switches[0]].port_gbps / (tier.oversubscription * agg.port_gbps)
        links = sum(math.ceil(g * d.nics_per_gpu * rate - 1e-9) for g in by_b.values())
        total += math.ceil(links / agg.ports - 1e-9) * agg.power_w / 1000
    return total


def building_power(scenario: Scenario, ix: SiteIndex) -> dict[str, list[float]]:
    """F[b,i]: kW of the pods' network racks (from their row's phase) and installed racks (with their
    back-end network) standing in each building in each phase, as power arrival counts its fixed loads."""
    tl = timeline(scenario)
    n = len(tl.phases)
    out = {b.id: [0.0] * n for b in scenario.site.buildings}
    items = [(row, scenario.rack_power_kw(t), tl.row_on.get(row, 0)) for _, row, t in network_racks(scenario)]
    types = scenario.catalog.by_id()
    designed = scenario.designed
    for r in scenario.existing:
        t = types[r.rack_type]
        net = 0.0 if r.cluster in designed else scenario.allowance_kw(t)
        items.append((r.row, scenario.rack_power_kw(t) + net, tl.index.get(r.phase, 0)))
    for row, kw, on in items:
        for i in range(on, n):
            out[ix.rows[row].building][i] += kw
    return out


def online_share(scenario: Scenario, ix: SiteIndex) -> dict[str, list[float]]:
    """on[b,i]: the share of building b's positions in rows online in phase i; a structure to build
    counts from its lead time (bought in the first phase)."""
    tl = timeline(scenario)
    n = len(tl.phases)
    lead = {
        r.effect.building: r.lead_phases
        for r in scenario.retrofits
        if r.effect.kind == RetrofitKind.build_structure
    }
    total: dict[str, int] = {}
    on: dict[str, list[float]] = {}
    for rid, ref in ix.rows.items():
        if ref.row.network is not None:
            continue
        b = ref.building
        total[b] = total.get(b, 0) + ref.row.positions
        start = max(tl.row_on.get(rid, 0), lead.get(b, 0))
        series = on.setdefault(b, [0.0] * n)
        for i in range(start, n):
            series[i] += ref.row.positions
    return {b: [v / total[b] for v in series] for b, series in on.items()}


def master(
    scenario: Scenario,
    ix: SiteIndex,
    clusters: list[tuple[str, Scope, list[str], int]],
    buildings: list[str],
    cap: dict[tuple[str, str], float],
    time_limit_s: float,
) -> dict[str, Share] | None:
    """Solve the master (module docstring). ``clusters``: (id, scope, rack types, GPUs per rack step);
    ``cap[c,b]``: room for c alone in b, GPUs. The shares per building, or None without a solution."""
    tl = timeline(scenario)
    n = len(tl.phases)
    types = scenario.catalog.by_id()
    fixed = building_power(scenario, ix)
    prob = pulp.LpProblem("region_master", pulp.LpMaximize)
    x: dict[tuple[str, str, int], pulp.LpAffineExpression] = {}
    kw: dict[str, float] = {}
    hub_kw: dict[str, float] = {}
    link_w: dict[str, float] = {}  # rack type → W per cabled link at the median position
    designed_types = {t: True for c in scenario.clusters if c.fabrics for t in c.rack_types}
    for ci, (cid, scope, rack_types, unit) in enumerate(clusters):
        for t in rack_types:
            if t not in link_w and designed_types.get(t):
                link_w[t] = typical_link_w(scenario, ix, types[t])
        per = {
            t: fabric_kw_per_gpu(scenario, cid, types[t], link_w.get(t)) for t in rack_types
        }  # its network
        kw[cid] = min(scenario.rack_power_kw(types[t]) / types[t].gpus + per[t][0] for t in rack_types)
        hub_kw[cid] = min(v[1] for v in per.values())
        _cluster_steps(prob, tl, scenario, ci, cid, scope, unit, buildings, cap, x)
    on = online_share(scenario, ix)
    for bi, b in enumerate(buildings):
        for i in range(n):
            terms = [x[cid, b, i] * (1.0 / cap[cid, b]) for cid, *_ in clusters if (cid, b, i) in x]
            if terms:
                prob += pulp.lpSum(terms) <= on.get(b, [0.0] * n)[i], f"room_{bi}_{i}"
    for i in range(n):
        available = scenario.power_available_kw(i)
        if available is not None:
            pue = {b: scenario.arrival_pue_in(b) for b in buildings}  # each building at its own
            load = pulp.lpSum(
                x[cid, b, i] * (pue[b] * kw[cid])
                for cid, *_ in clusters
                for b in buildings
                if (cid, b, i) in x
            )
            hub = scenario.region_tier.building if scenario.region_tier is not None else None
            load += pulp.lpSum(  # the tier's switches, at its building
                x[cid, b, i] * (scenario.arrival_pue_in(hub) * hub_kw[cid])
                for cid, *_ in clusters
                for b in buildings
                if (cid, b, i) in x and hub_kw[cid]
            )
            fixed_kw = sum(scenario.arrival_pue_in(b) * f[i] for b, f in fixed.items())
            prob += load <= available - fixed_kw, f"arrival_{i}"
    prob += pulp.lpSum(x.values())
    res = from_name("highs").solve(SolveRequest(prob, prob.objective, True, time_limit_s, 1e-4))
    if res.values is None:
        return None
    return _shares(scenario, clusters, buildings, x, kw, fixed, res.values, n)


def _cluster_steps(
    prob, tl, scenario: Scenario, ci: int, cid: str, scope: Scope, unit: int, buildings, cap, x
) -> None:
    """A cluster's GPUs per building and phase in whole rack steps, never falling; one building
    when its hop budget keeps it in one; at most its demand in each phase."""
    n = len(tl.phases)
    bound_to_one = scope in (Scope.rack, Scope.pod, Scope.building)
    for bi, b in enumerate(buildings):
        room = cap.get((cid, b), 0.0)
        if room <= 0:
            continue
        y = prob.add_variable(f"y_{ci}_{bi}", cat=pulp.LpBinary) if bound_to_one else None
        for i in range(n):
            u = prob.add_variable(
                f"u_{ci}_{bi}_{i}", lowBound=0, upBound=math.floor(room / unit + 1e-9), cat=pulp.LpInteger
            )
            v = unit * u
            x[cid, b, i] = v
            if i > 0:
                prob += v >= x[cid, b, i - 1], f"stay_{ci}_{bi}_{i}"
            if y is not None:
                prob += v <= room * y, f"one_{ci}_{bi}_{i}"
    ys = [v for v in prob.variables() if v.name.startswith(f"y_{ci}_")]  # in PuLP's (name) order
    if ys:
        prob += pulp.lpSum(ys) <= 1, f"one_building_{ci}"
    c = next(c for c in scenario.clusters if c.id == cid)
    for i in range(n):
        want = tl.demand(c, i)
        if want is not None:
            prob += (
                pulp.lpSum(x[cid, b, i] for b in buildings if (cid, b, i) in x) <= want,
                f"demand_{ci}_{i}",
            )


def _shares(scenario: Scenario, clusters, buildings, x, kw, fixed, values, n: int) -> dict[str, Share]:
    """Each building's GPUs per cluster and phase, and its facility power: its fixed loads, its
    racks' load, and an even part of what is left of each phase's arrival after every building's
    load and the region tier's switches (whole chassis, :func:`tier_kw`); where the master's
    per-GPU estimates overdraw a phase, the racks' loads are scaled to fit (those buildings then
    place fewer GPUs; fixed loads are never cut). The suffix minimum keeps every building's series
    non-decreasing and their sum within the arrival of every phase."""
    out: dict[str, Share] = {}
    flex: dict[str, list[float]] = {}  # facility kW of the racks the master gives each building
    base: dict[str, list[float]] = {}  # facility kW of its fixed loads
    for b in buildings:
        gpus: dict[str, list[int]] = {}
        load = [0.0] * n
        for cid, _scope, _types, unit in clusters:
            if (cid, b, 0) not in x:
                continue
            steps = [int(round(evaluate(x[cid, b, i], values) / unit)) * unit for i in range(n)]
            if steps[-1] > 0:
                gpus[cid] = steps
                load = [load[i] + kw[cid] * steps[i] for i in range(n)]
        out[b] = Share(gpus, [])
        pue = scenario.arrival_pue_in(b)
        flex[b] = [pue * load[i] for i in range(n)]
        base[b] = [pue * fixed[b][i] for i in range(n)]
    spare, fit = [0.0] * n, [1.0] * n
    spanning = {cid for cid, *_ in clusters if sum(1 for b in buildings if cid in out[b].gpus) > 1}
    for i in range(n):
        available = scenario.power_available_kw(i)
        if available is None:
            spare[i] = math.inf
            continue
        room = available - _hub_kw(scenario, clusters, buildings, out, spanning, i)
        room -= sum(base[b][i] for b in buildings)
        racks = sum(flex[b][i] for b in buildings)
        spare[i] = max(0.0, room - racks)
        fit[i] = 1.0 if racks <= room else max(0.0, room) / racks  # the master's estimates overdrew
    for i in range(n - 2, -1, -1):
        spare[i] = min(spare[i], spare[i + 1])
    extra = [0.0 if math.isinf(v) else v / len(buildings) for v in spare]
    shares = {}
    for b in buildings:
        kw_b = [base[b][i] + flex[b][i] * fit[i] + extra[i] for i in range(n)]
        for i in range(n - 2, -1, -1):  # non-decreasing: what arrived stays
            kw_b[i] = min(kw_b[i], kw_b[i + 1])
        shares[b] = Share(out[b].gpus, kw_b)
    return shares


def _hub_kw(scenario: Scenario, clusters, buildings, out: dict, spanning: set[str], i: int) -> float:
    """Facility kW of the region tier's switches in phase i for the shares ``out`` (0 without a tier)."""
    tier = scenario.region_tier
    if tier is None:
        return 0.0
    by_b = [(cid, {b: out[b].gpus[cid][i] for b in buildings if cid in out[b].gpus}) for cid, *_ in clusters]
    return scenario.arrival_pue_in(tier.building) * tier_kw(scenario, by_b, spanning)
