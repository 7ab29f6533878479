"""The region tier's switches of a decomposed plan (§19): the building plans each carry their share
of a spanning job's fabric (its tree, border switches and region links, ``region_share_km``); the
tier's own switches — ⌈Σ_b ℓ_b / k_R⌉ per spanning cluster, sized from the joined racks — stand
here, in the tier building's network rows, phase by phase as the links grow (bought when first
needed, kept to the horizon), each rack one cluster's, at most min(⌊units ÷ height⌋, ⌊row rack kW ÷
switch kW⌋) of them, at the rows' free positions in order. Their power loads those rows' feeds and
air zone; the verifier checks them with the rest."""

from __future__ import annotations

import math

from planner.errors import SolverFailure
from planner.input.site_index import index_site
from planner.input.timeline import timeline
from planner.model.classes import network_positions
from planner.rules.fabric_sizing import design_of, fabric_sizes, spanning_clusters
from planner.schema import NetworkRack, PlacedRack, Scenario, SwitchCount


def _placed_by(scenario: Scenario, racks: list[PlacedRack], p: int) -> list[PlacedRack]:
    order = scenario.phase_at
    return [r for r in racks if r.existing or order.get(r.phase, 0) <= p] if scenario.phases else racks


def fill_region_tier(
    scenario: Scenario, racks: list[PlacedRack], picks: dict[str, str], taken: set[tuple[str, int]]
) -> list[NetworkRack]:
    """Network racks of the region tier's switches for every spanning cluster (module docstring);
    ``taken``: (row, position) already holding a network rack."""
    tier = scenario.region_tier
    if tier is None:
        return []
    ix = index_site(scenario.site)
    tl = timeline(scenario)
    agg = scenario.catalog.switch_by_id()[tier.switch]
    free = {
        rid: [i for i in pos if (rid, i) not in taken]
        for rid, pos in sorted(network_positions(scenario, ix).items())
        if ix.rows[rid].building == tier.building
    }
    span = spanning_clusters(fabric_sizes(scenario, racks, picks))
    phases = list(range(len(scenario.phases))) if scenario.phases else [0]
    sizes = {p: fabric_sizes(scenario, _placed_by(scenario, racks, p), picks, span) for p in phases}
    out: list[NetworkRack] = []
    for c in scenario.clusters:
        if c.id not in span:
            continue
        d = design_of(scenario, c, picks)
        assert d is not None
        stood: list[dict] = []  # {row, cap, first, bought: [(phase, n)], kw: {phase: kW}}
        have = 0
        for p in phases:
            want = sizes[p][c.id].region_switches
            have = _grow(stood, want - have, p, free, ix, tl, d, agg, c.id) + have
            for r in stood:
                r["kw"][p] = sum(n for _, n in r["bought"]) * agg.power_w / 1000
        out += [_record(scenario, ix, c.id, d.id, r, agg.id) for r in stood]
    return out


def _grow(stood: list[dict], n: int, p: int, free: dict, ix, tl, d, agg, cid: str) -> int:
    """n more tier switches in phase p: the last rack first, then new racks in the first row online
    with room; returns n."""
    if n <= 0:
        return 0
    left = n
    while left > 0:
        last = stood[-1] if stood else None
        if last is None or sum(k for _, k in last["bought"]) >= last["cap"]:
            last = _new_rack(free, p, ix, tl, d, agg, cid)
            stood.append(last)
        k = min(left, last["cap"] - sum(k for _, k in last["bought"]))
        last["bought"].append((p, k))
        left -= k
    return n


def _new_rack(free: dict, p: int, ix, tl, d, agg, cid: str) -> dict:
    for rid, spots in free.items():
        limit = ix.rows[rid].row.max_rack_power_kw
        cap = min(d.rack_units // agg.height_u, math.floor(limit * 1000 / agg.power_w + 1e-9))
        if spots and cap >= 1 and tl.row_on.get(rid, 0) <= p:
            return {"row": rid, "position": spots.pop(0), "cap": cap, "first": p, "bought": [], "kw": {}}
    raise SolverFailure(f"region-tier switches of {cid}: no network position left in the tier's building")


def _record(scenario: Scenario, ix, cid: str, did: str, r: dict, model: str) -> NetworkRack:
    ref = ix.rows[r["row"]]
    x, y = ref.row.position_xy(r["position"])
    ids = [p.id for p in scenario.phases]
    phased = bool(ids)
    return NetworkRack(
        building=ref.building,
        hall=ref.hall,
        row=r["row"],
        position=r["position"],
        x_m=x,
        y_m=y,
        cluster=cid,
        design=did,
        switches=[
            SwitchCount(tier=4, model=model, count=k, phase=ids[p] if phased else None)
            for p, k in (r["bought"] if phased else [(r["first"], sum(k for _, k in r["bought"]))])
        ],
        kw=r["kw"][max(r["kw"])],
        phase=ids[r["first"]] if phased else None,
        kw_by_phase={ids[p]: kw for p, kw in sorted(r["kw"].items())} if phased else {},
    )
