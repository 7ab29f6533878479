"""The failover gain's witness (§4): a plan's claim that strict N-1 places only so many GPUs is
backed by the strict plan's rack counts per row, which must make a valid plan of the same scenario
with every cluster on ``keep``. The verifier stands the racks in their rows itself (nearest the
pod first, the rack types with the shortest reach first, so any placement that exists is found)
and runs its constraint checks on them."""

from __future__ import annotations

from planner.enums import FailoverPolicy
from planner.schema import FailoverGain, PlacedRack, Plan, Scenario
from planner.verifier.capacity import cooling_checks, pod_checks, power_checks
from planner.verifier.clusters import cluster_checks, spread_checks
from planner.verifier.placement import rack_checks
from planner.verifier.report import VerifyReport
from planner.verifier.rules_recount import held
from planner.verifier.site import SiteView, cable_m, phase_states, site_view


def strict(scenario: Scenario) -> Scenario:
    """The scenario with every cluster keeping full power in a contingency."""
    return scenario.model_copy(
        update={
            "clusters": [
                c.model_copy(update={"on_power_failure": FailoverPolicy.keep}) for c in scenario.clusters
            ]
        }
    )


def _reach(scenario: Scenario, site: SiteView, rack_type: str) -> float:
    t = scenario.catalog.by_id().get(rack_type)
    if t is None or not t.links:
        return float("inf")
    reach = max((site.links[c].max_length_m for c in t.link_classes if c in site.links), default=0.0)
    return min(reach, t.max_cable_m) if t.max_cable_m is not None else reach


def witness_racks(
    gain: FailoverGain, scenario: Scenario, site: SiteView, rep: VerifyReport
) -> list[PlacedRack]:
    """The witness's racks at positions of their rows (module docstring); a row too small is reported."""
    taken = {(p.network_rack.row, p.network_rack.position) for p in site.pods.values()} | held(
        scenario, scenario.existing
    )
    by_row: dict[str, list] = {}
    for w in gain.strict_racks:
        by_row.setdefault(w.row, []).append(w)
    types = scenario.catalog.by_id()
    out: list[PlacedRack] = []
    for row_id, entries in by_row.items():
        if row_id not in site.rows:
            rep.add("failover.strict_racks", "failover", f"unknown row '{row_id}'")
            continue
        building, hall, row = site.rows[row_id]
        free = sorted(
            (cable_m(site, scenario, row_id, i), i)
            for i in range(row.positions)
            if i not in row.reserved and (row_id, i) not in taken
        )
        entries.sort(key=lambda w: (_reach(scenario, site, w.rack_type), w.cluster, w.rack_type))
        want = sum(w.count for w in entries)
        if want > len(free):
            rep.add(
                "failover.strict_racks", "failover", f"row {row_id}: {want} racks, {len(free)} free positions"
            )
            continue
        spots = iter(free)
        for w in entries:
            t = types.get(w.rack_type)
            for _ in range(w.count):
                length, i = next(spots)
                x, y = site.xy(row_id, i)
                link = None
                if t is not None and t.links:
                    reach = [
                        site.links[c]
                        for c in t.link_classes
                        if c in site.links and site.links[c].max_length_m + 1e-6 >= length
                    ]
                    best = min(reach, key=lambda c: (c.max_length_m, c.cost_usd_per_link, c.id), default=None)
                    link = best.id if best is not None else None
                out.append(
                    PlacedRack(
                        building=building,
                        hall=hall,
                        row=row_id,
                        position=i,
                        x_m=x,
                        y_m=y,
                        rack_type=w.rack_type,
                        cluster=w.cluster,
                        link_class=link,
                        cable_length_m=length,
                        spare=w.spare,
                    )
                )
    return out


def witness_checks(plan: Plan, scenario: Scenario, rep: VerifyReport) -> int | None:
    """Check the failover witness under strict N-1; returns its GPUs (None when it does not hold).
    Violations are reported as failover.strict_racks."""
    gain = plan.failover
    assert gain is not None
    hard = strict(scenario)
    site = site_view(hard)
    mine = VerifyReport()
    racks = [*hard.existing, *witness_racks(gain, hard, site, mine)]
    wit = Plan(scenario_name=hard.name, racks=racks, retrofits=gain.strict_retrofits, fabric=plan.fabric)
    states = phase_states(wit, hard, site)
    rack_checks(wit, hard, site, mine, states)
    for st in states:
        power_checks(hard, site, mine, st, usage=False)
        cooling_checks(hard, site, mine, st, usage=False)
    pod_checks(wit, hard, site, mine)
    cluster_checks(wit, hard, site, mine, states)
    spread_checks(wit, hard, site, mine)
    for v in mine.violations:
        rep.add("failover.strict_racks", "failover", f"under strict N-1: {v}")
    if mine.violations:
        return None
    types = hard.catalog.by_id()
    return sum(types[r.rack_type].gpus for r in racks if r.rack_type in types and not r.spare)
