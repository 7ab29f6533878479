"""The order book of a phased plan (§17): for every rack type and retrofit, what must be ordered in
which phase. A rack of type t placed in phase p is ordered in phase p − lead_t (the scenario's
``lead_phases``); a retrofit bought in phase q takes effect lead phases later; a power-arrival step
with long-lead plant (§19) is ordered its lead phases before its power arrives, possibly before
the plan starts. Installed racks (placed before the plan) need no order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from planner.schema import BoughtRetrofit, Order, PlacedRack, Scenario


def order_book(
    scenario: Scenario, racks: Iterable[PlacedRack], retrofits: Iterable[BoughtRetrofit]
) -> list[Order]:
    """Orders by phase ordered, then item and ID (empty without phases)."""
    if not scenario.phases:
        return []
    ids = [p.id for p in scenario.phases]
    at = {p: i for i, p in enumerate(ids)}
    count: Counter = Counter()
    for r in racks:
        if r.existing or r.phase not in at:
            continue
        placed = at[r.phase]
        count[
            "rack", r.rack_type, ids[max(0, placed - scenario.lead_phases.get(r.rack_type, 0))], r.phase
        ] += 1
    lead = {x.id: x.lead_phases for x in scenario.retrofits}
    for b in retrofits:
        if b.phase in at and b.id in lead:
            count["retrofit", b.id, b.phase, ids[min(len(ids) - 1, at[b.phase] + lead[b.id])]] += 1
    books = [
        (at[o], Order(item=item, id=i, ordered=o, stands=s, count=n)) for (item, i, o, s), n in count.items()
    ]
    books += _power_orders(scenario, ids, at)
    order = {"rack": 0, "retrofit": 1, "power": 2}
    books.sort(key=lambda x: (x[0], order[x[1].item], x[1].id, at[x[1].stands]))
    return [o for _, o in books]


def _power_orders(scenario: Scenario, ids: list[str], at: dict[str, int]) -> list[tuple[int, Order]]:
    """(index ordered, order) of each power-arrival step with long-lead plant: ordered lead phases
    before the phase its power arrives in (the first, for a step without a phase); an index below 0
    is before the plan's first phase, said so."""
    out = []
    for si, step in enumerate(scenario.power_arrival):
        if step.lead_phases <= 0:
            continue
        stands = step.phase or ids[0]
        when = at[stands] - step.lead_phases
        ordered = ids[when] if when >= 0 else f"before {ids[0]} ({-when} phase{'' if when == -1 else 's'})"
        what = f"power_arrival[{si}]" + (f": {step.plant}" if step.plant else "")
        out.append((when, Order(item="power", id=what, ordered=ordered, stands=stands)))
    return out


def supply_use(scenario: Scenario, racks: Iterable[PlacedRack]) -> list[tuple[str | None, str, int, int]]:
    """(phase, rack type, racks of it placed by then, racks delivered by then) for every supplied type
    and phase (one row per type without phases); installed racks without a phase do not count."""
    racks = list(racks)
    phases: list[str | None] = [p.id for p in scenario.phases] or [None]
    at = {p: i for i, p in enumerate(phases)}
    out = []
    for i, ph in enumerate(phases):
        for t in sorted({x.rack_type for x in scenario.supply}):
            placed = sum(
                1
                for r in racks
                if r.rack_type == t and (not r.existing or r.phase is not None) and at.get(r.phase, 0) <= i
            )
            out.append((ph, t, placed, scenario.supply_upto(t, i) or 0))
    return out
