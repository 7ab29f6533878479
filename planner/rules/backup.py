"""Backup power as a choice per building (SPEC §16).

Each building with racks gets one of the scenario's backup designs (UPS with generators, generators
only, none): capex = (usd_per_mw − the plant the facility rate already holds) × the building's IT
MW. Without ride-through a utility outage
interrupts every cluster with racks in the building (each outage one more interruption of that
cluster: rate events_per_year / 8,760 h added to its interruption rate, so its MTBF and goodput
fall) and leaves the building's GPUs dark until power is back (restore_h, or the outage's duration).

The design does not change where racks go (no capacity depends on it), so it is chosen for the
placed racks: the assignment with the lowest $ per useful GPU-hour,

    (TCO + Σ_b backup capex_b) / Σ_{b,c} (H_bc · goodput_c · (1 − dark_b)),

with H_bc the discounted GPU-hours of cluster c's racks in building b (each from its phase to the
horizon, as the KPIs count them), goodput_c with the outages of its buildings counted (clusters
without a checkpoint size count 1) and dark_b = events_per_year × hours dark ÷ 8,760 for a design
without ride-through (0 with it): GPU-hours × goodput × share powered (SPEC §19). The backup
capex is spent at the start; the plan's KPIs add it to capex and TCO
(:func:`planner.plan.kpis.with_backup`), so their $ per useful GPU-hour is this figure. Every
assignment is tried up to :data:`MAX_ASSIGNMENTS`; beyond that one building at a time until
nothing improves.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable

from planner.input.asks import cluster_jobs, domain_in_service, goodput
from planner.rules.costs import annuity, phase_years
from planner.schema import BackupChoice, NetworkRack, PlacedRack, Scenario

HOURS_PER_YEAR = 8760.0
MAX_ASSIGNMENTS = 4096


def _loads(
    scenario: Scenario, racks: list[PlacedRack], network: Iterable[NetworkRack]
) -> tuple[dict[str, float], dict[str, dict[str, int]]]:
    """IT kW per building (racks, with the back-end network allowance of those outside a designed
    fabric, and designed-fabric network racks) and GPUs per building per cluster."""
    types = scenario.catalog.by_id()
    designed = scenario.designed
    kw: dict[str, float] = defaultdict(float)
    gpus: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in racks:
        t = types.get(r.rack_type)
        if t is None:
            continue
        kw[r.building] += scenario.rack_power_kw(t)
        kw[r.building] += 0.0 if r.cluster in designed else scenario.allowance_kw(t)
        if t.gpus and not r.spare:
            gpus[r.building][r.cluster] += t.gpus
    for n in network:
        kw[n.building] += n.kw
    return dict(kw), {b: dict(c) for b, c in gpus.items()}


def outage_rates(
    scenario: Scenario, assignment: dict[str, str], gpus: dict[str, dict[str, int]]
) -> dict[str, float]:
    """Interruptions per hour a utility outage adds to each cluster: events_per_year / 8,760 for
    every building holding its racks whose design does not ride through."""
    bp = scenario.backup_power
    if bp is None:
        return {}
    ride = {d.id: d.ride_through for d in bp.designs}
    out: dict[str, float] = defaultdict(float)
    for b, by_cluster in gpus.items():
        if not ride.get(assignment.get(b, ""), True):
            for c in by_cluster:
                out[c] += bp.outage.events_per_year / HOURS_PER_YEAR
    return dict(out)


def _cluster_terms(scenario: Scenario, racks: list[PlacedRack]) -> dict[str, tuple]:
    """Per cluster: (GPUs, interruptions per hour, checkpoint GB, write GB/s, restart h, cold
    restart h after a power loss, in-memory checkpoint stall h or None, share of its GPUs its
    NVLink domains leave in service or None)."""
    out = {}
    for c, mine, u, rate, _, bw, size in cluster_jobs(scenario, racks):
        cold = c.restart_min if c.cold_restart_min is None else c.cold_restart_min
        stall = None if c.checkpoint_s is None else c.checkpoint_s / 3600
        share = domain_in_service(scenario, c, mine)
        out[c.id] = (u.gpus, rate, size, bw, c.restart_min / 60, cold / 60, stall, share)
    return out


def discounted_hours(scenario: Scenario, racks: list[PlacedRack]) -> dict[str, dict[str, float]]:
    """H_bc: discounted GPU-hours of each cluster's GPU racks in each building (spares not counted),
    each from its phase's start to the horizon, as :func:`planner.rules.costs.rack_cost` counts them."""
    types = scenario.catalog.by_id()
    years = phase_years(scenario)
    c = scenario.costs
    out: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for r in racks:
        t = types.get(r.rack_type)
        if t is None or not t.gpus or r.spare:
            continue
        at = 0.0 if r.existing else years.get(r.phase, 0.0)
        out[r.building][r.cluster] += t.gpus * HOURS_PER_YEAR * annuity(at, c.horizon_years, c.discount_rate)
    return {b: dict(v) for b, v in out.items()}


def useful_gpu_hours(
    scenario: Scenario, terms: dict, hours: dict[str, dict[str, float]], assignment: dict[str, str]
) -> float:
    """Σ_{b,c} H_bc · goodput_c (outages counted) · (1 − dark_b) (module docstring)."""
    gpus = {b: {c: 1 for c in v} for b, v in hours.items()}
    extra = outage_rates(scenario, assignment, gpus)
    good: dict[str, float] = {}
    for cid, (n, rate, size, bw, restart, cold, stall, share) in terms.items():
        lost = extra.get(cid, 0.0)
        r = rate + lost
        mean_restart = (rate * restart + lost * cold) / r if r > 0 else restart
        g = goodput(1 / r, size, bw, mean_restart, stall).with_domains(share).goodput if n and r > 0 else None
        good[cid] = 1.0 if g is None else g
    total = 0.0
    for b, by_cluster in hours.items():
        dark = _dark(scenario, assignment.get(b, ""), 1) / HOURS_PER_YEAR
        total += sum(h * good.get(c, 1.0) * (1.0 - dark) for c, h in by_cluster.items())
    return total


def _dark(scenario: Scenario, design: str, gpus: int) -> float:
    """GPU-hours without power per year in a building of ``gpus`` GPUs under ``design``."""
    bp = scenario.backup_power
    d = next((x for x in bp.designs if x.id == design), None) if bp else None
    if d is None or d.ride_through:
        return 0.0
    hours = d.restore_h if d.restore_h is not None else bp.outage.duration_h
    return bp.outage.events_per_year * hours * gpus


def _shown(price: float) -> float:
    """A $ per useful GPU-hour as the plan states it: 0 when there are no useful GPU-hours (as the KPIs)."""
    return round(price, 6) if price != float("inf") else 0.0


def choose_backup(
    scenario: Scenario, racks: list[PlacedRack], network: Iterable[NetworkRack], tco_usd: float
) -> list[BackupChoice]:
    """The backup design per building with racks (module docstring), fixed ones as the scenario says."""
    bp = scenario.backup_power
    if bp is None or not racks:
        return []
    kw, gpus = _loads(scenario, racks, network)
    buildings = sorted(b for b, v in kw.items() if v > 0)
    designs = {d.id: d for d in bp.designs}
    rate_held = bp.held_usd_per_mw(scenario.costs)
    held = {
        b: 0.0 if scenario.own_rate(b) else rate_held for b in buildings
    }  # a structure's own rate holds none
    terms = _cluster_terms(scenario, racks)
    hours = discounted_hours(scenario, racks)

    def capex(assignment: dict[str, str]) -> float:
        return sum(bp.plant_usd(designs[assignment[b]], kw[b], held[b]) for b in buildings)

    def price(assignment: dict[str, str]) -> float:
        useful = useful_gpu_hours(scenario, terms, hours, assignment)
        return (tco_usd + capex(assignment)) / useful if useful > 0 else float("inf")

    free = [b for b in buildings if b not in bp.fixed]
    base = {b: bp.fixed[b] for b in buildings if b in bp.fixed}
    order = [d.id for d in bp.designs]
    if len(order) ** len(free) <= MAX_ASSIGNMENTS:
        best = min(
            (
                dict(base, **dict(zip(free, combo, strict=True)))
                for combo in itertools.product(order, repeat=len(free))
            ),
            key=lambda a: (round(price(a), 12), [order.index(a[b]) for b in free]),
        )
    else:  # one building at a time, from the first design everywhere, until nothing improves
        best = dict(base, **{b: order[0] for b in free})
        improved = True
        while improved:
            improved = False
            for b in free:
                pick = min(order, key=lambda d, b=b: (round(price({**best, b: d}), 12), order.index(d)))
                if pick != best[b]:
                    best[b], improved = pick, True
    rate = bp.outage.events_per_year
    out = []
    for b in buildings:
        d = designs[best[b]]
        out.append(
            BackupChoice(
                building=b,
                design=d.id,
                fixed=b in bp.fixed,
                it_kw=round(kw[b], 6),
                capex_usd=round(bp.plant_usd(d, kw[b], held[b]), 2),
                ride_through=d.ride_through,
                outage_interruptions_per_year=0.0 if d.ride_through else rate,
                gpu_hours_dark_per_year=round(_dark(scenario, d.id, sum(gpus.get(b, {}).values())), 6),
                usd_per_useful_gpu_hour={x: _shown(price({**best, b: x})) for x in order},
            )
        )
    return out
