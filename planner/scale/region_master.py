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
    if any(c.fabrics for c in scenario.clusters):
        return "designed fabrics (a region tier is sized over the buildings together)"
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
    designed = scenario.designed
    for ci, (cid, scope, rack_types, unit) in enumerate(clusters):
        net = (lambda t: 0.0) if cid in designed else scenario.allowance_kw  # its back-end network
        kw[cid] = min((scenario.rack_power_kw(types[t]) + net(types[t])) / types[t].gpus for t in rack_types)
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
    """Each building's GPUs per cluster and phase, and its facility power: its load plus an even
    part of what the rounding left of each phase's arrival (the suffix minimum keeps every
    building's series non-decreasing and their sum within the arrival of every phase)."""
    out: dict[str, Share] = {}
    loads: dict[str, list[float]] = {}
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
        loads[b] = [scenario.arrival_pue_in(b) * (load[i] + fixed[b][i]) for i in range(n)]
    spare = [0.0] * n
    for i in range(n):
        available = scenario.power_available_kw(i)
        spare[i] = math.inf if available is None else max(0.0, available - sum(v[i] for v in loads.values()))
    for i in range(n - 2, -1, -1):
        spare[i] = min(spare[i], spare[i + 1])
    extra = [0.0 if math.isinf(v) else v / len(buildings) for v in spare]
    return {b: Share(out[b].gpus, [loads[b][i] + extra[i] for i in range(n)]) for b in buildings}
