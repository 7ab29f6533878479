"""The verifier's own count of stranded power (SPEC §10), on its own site view and the use its
capacity checks found, written apart from the optimiser's :func:`planner.plan.kpis.stranded_power`.

A top power node (a root of the power tree) strands its room — usable kW less its worst load,
normal or under a single failure — when no free position under it can take one more rack of any
type a cluster may use. One more rack at a position must pass, in this order: a free usable
position in the row; its pod's GPU ports and rack count; its air zone's and liquid loop's room for
its heat; the row's per-rack power, weight, floor load and cooling medium; and every node above
the row's feeds keeping room for the rack's planning kW at its worst. The room is attributed to
the check most tries fail first (ties in the order above)."""

from __future__ import annotations

from collections import Counter

from planner.enums import LimitKind, RackLimitBasis
from planner.schema import PlacedRack, RackType, Scenario
from planner.verifier.rules_recount import held, nameplate_kw, planning_kw, standing_racks
from planner.verifier.site import SiteView

ORDER = ("space", "ports", "cooling", "rack limits", "N-1")
"""The checks one more rack must pass, in the order a stranded kW is attributed to the first that fails."""


def recount_stranded(
    scenario: Scenario, site: SiteView, racks: list[PlacedRack], usage: list
) -> tuple[float, list[tuple[str, float, str]]]:
    """(total kW, [(root node, kW, reason)]) of the power no allowed rack can use."""
    types = scenario.catalog.by_id()
    allowed = sorted(
        {t for c in scenario.clusters for t in c.rack_types if t in types and _hbm_ok(c, types[t])}
    )
    if not allowed:
        return 0.0, []
    use = {(u.kind, u.id): u for u in usage}

    def room(node: str) -> float:
        u = use.get((LimitKind.power_node, node))
        return 0.0 if u is None else u.limit - max(u.value, u.worst_value or 0.0)

    standing = standing_racks(scenario, racks)
    taken = held(scenario, standing) | {
        (p.network_rack.row, p.network_rack.position) for p in site.pods.values()
    }
    gpus, count = Counter(), Counter()
    for r in standing:
        if r.row in site.rows and r.rack_type in types:
            gpus[site.rows[r.row][2].pod] += types[r.rack_type].gpus
            count[site.rows[r.row][2].pod] += 1
    smallest = min(planning_kw(scenario, types[t]) for t in allowed)
    out = []
    for root, node in site.nodes.items():
        if node.parent is not None or room(root) < smallest - 1e-9:
            continue
        reasons = Counter()
        for why in _tries(
            scenario, site, site.down(root), [types[t] for t in allowed], taken, gpus, count, use, room
        ):
            if why is None:
                break
            reasons[why] += 1
        else:
            why = max(ORDER, key=lambda r: (reasons[r], -ORDER.index(r)))
            out.append((root, round(room(root), 6), why))
    return round(sum(kw for _, kw, _ in out), 6), out


def _tries(scenario, site: SiteView, under: set[str], kinds: list[RackType], taken, gpus, count, use, room):
    """For every row fed from ``under`` and every allowed type: the first check one more rack
    fails there (None: it fits)."""
    for rid, (_, hall, row) in site.rows.items():
        if not set(row.feeds) & under:
            continue
        free = any((rid, i) not in taken and i not in row.reserved for i in range(row.positions))
        for t in kinds:
            yield _first_failure(scenario, site, rid, hall, row, t, free, gpus, count, use, room)


def _hbm_ok(c, t: RackType) -> bool:
    """The rack type meets the cluster's HBM need per GPU (when it states one)."""
    return c.min_hbm_gb_per_gpu is None or t.hbm_gb_per_gpu >= c.min_hbm_gb_per_gpu - 1e-9


def _first_failure(scenario, site, rid, hall, row, t: RackType, free, gpus, count, use, room) -> str | None:
    """The first check (:data:`ORDER`) one more rack of type t in row rid fails; None when it passes all."""
    if not free:
        return "space"
    pod = site.pods[row.pod]
    if gpus[pod.id] + t.gpus > pod.max_gpus or (pod.max_racks is not None and count[pod.id] >= pod.max_racks):
        return "ports"
    kw = planning_kw(scenario, t)
    heat = {row.air_zone: kw * (1.0 - t.liquid_fraction)}
    if row.liquid_loop:
        heat[row.liquid_loop] = heat.get(row.liquid_loop, 0.0) + kw * t.liquid_fraction
    for zone, h in heat.items():
        u = use.get((LimitKind.cooling_zone, zone))
        if u is not None and u.value + h > u.limit + 1e-9:
            return "cooling"
    if not _row_takes(scenario, site, hall, row, t):
        return "rack limits"
    if any(room(a) < kw - 1e-9 for f in row.feeds for a in site.up(f)):
        return "N-1"
    return None


def _row_takes(scenario: Scenario, site: SiteView, hall: str, row, t: RackType) -> bool:
    """The row takes the type as built: not a network row; per-rack power (nameplate, or planning
    power when the scenario says so, a unit's largest part), weight and floor load within its limits;
    a liquid-cooled type only with a liquid loop."""
    if row.network is not None:
        return False
    basis = (
        planning_kw(scenario, t)
        if scenario.rack_limit_on == RackLimitBasis.planning
        else nameplate_kw(scenario, t)
    )
    share = max((q.power_share for q in t.parts or []), default=1.0)
    weight = max((q.weight_kg for q in t.parts or []), default=t.weight_kg)
    rating = site.hall_rating.get(hall)
    return (
        basis * share <= row.max_rack_power_kw + 1e-9
        and weight <= row.max_rack_weight_kg + 1e-9
        and (rating is None or weight / (row.pitch_m * row.depth_m) <= rating + 1e-9)
        and (t.liquid_fraction == 0 or row.liquid_loop is not None)
    )
