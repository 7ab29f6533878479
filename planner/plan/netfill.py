"""Network racks on the floor (§13): the switches of each cluster's designed fabric, sized exactly
from its placed GPU racks (:mod:`planner.rules.fabric_sizing`), stood in network racks at network-row
positions within what the solve allowed per row and tier (:mod:`planner.model.fabric`):

- leaves of pod p in rows serving p, then each building's spines and cores in its rows, then the
  region tier's switches in its building's rows, each row up to the switches the solve stood there; a rack
  holds one tier's switches, at most min(⌊units ÷ height⌋, ⌊row rack kW ÷
  switch kW⌋) of them;
- the links' transceiver power spread over the rows as the solve spread it (scaled to the exact
  figure), and within a row evenly over its racks, opening another rack in the row where the
  switches' racks cannot carry it (never more racks than the solve stood there);
- positions: the row's free positions in order;
- each rack's kW rounded down to the watt's thousandth, so rounding never lifts a row over what
  the solve charged to it.

Every row then carries at most what the solve charged to it, so the power, cooling and space
limits the solve kept hold for the placed racks (the verifier checks them anyway).
"""

from __future__ import annotations

import math
from collections import defaultdict

from planner.errors import SolverFailure
from planner.model import Model
from planner.model.fabric import serving
from planner.rules.fabric_sizing import fabric_sizes, tier_switch
from planner.schema import NetworkRack, PlacedRack, SwitchCount

TOL = 1e-9


def _take(put: dict, room: dict, tier: int, n: int, where: list[str], what: str) -> None:
    """Stand n switches of a tier in the rows ``where``, each up to what the solve stood there."""
    for rid in where:
        k = min(n, room.get((rid, tier), 0) - put[rid, tier])
        if k > 0:
            put[rid, tier] += k
            n -= k
    if n > 0:
        raise SolverFailure(f"network racks of {what}: {n} have no place the solve left for them")


def fill_network(
    m: Model, values: dict[str, float], racks: list[PlacedRack], picks: dict[str, str]
) -> list[NetworkRack]:
    """Network racks for every cluster on a designed fabric (module docstring)."""
    s = m.scenario
    if not s.fabrics:
        return []
    by_id = {d.id: d for d in s.fabrics}
    free = {rid: list(pos) for rid, pos in m.network_rows.items()}
    used: dict[str, int] = defaultdict(int)
    out: list[NetworkRack] = []

    def val(v) -> float:
        return values.get(v.name, 0.0) if v is not None else 0.0

    for cid, z in fabric_sizes(s, racks, picks).items():
        d = by_id[z.design]
        room = {
            (rid, tier): round(val(v))
            for (c, did, rid, tier), v in m.network_switches.items()
            if c == cid and did == d.id
        }
        racks_allowed: dict[str, int] = defaultdict(
            int
        )  # the solve's racks of the cluster per row: its space
        for (c, _, rid, _), v in m.network_racks.items():
            if c == cid:
                racks_allowed[rid] += round(val(v))
        rows_here = sorted({rid for (rid, _) in room})
        put = _switches_per_row(m, cid, d, z, room, rows_here)
        switch_kw = sum(n * tier_switch(s, d, tier).power_w / 1000 for (_, tier), n in put.items())
        charged = _charged(m, cid, by_id, rows_here, val)
        packed = {rid: _pack(s, d, put, rid, m.ix.rows[rid].row.max_rack_power_kw) for rid in rows_here}
        share = _spread_optics(m, max(0.0, z.kw - switch_kw), rows_here, packed, charged, racks_allowed, cid)
        for rid in rows_here:
            out += _stand(m, cid, d, rid, packed[rid], share.get(rid, 0.0), racks_allowed[rid], free, used)
    return out


def _switches_per_row(
    m: Model, cid: str, d, z, room: dict, rows_here: list[str]
) -> dict[tuple[str, int], int]:
    """(row, tier) → switches stood there: each pod's leaves in rows serving it, each building's
    upper tiers in its rows, the region tier in the tier building's rows, within what the solve stood."""
    s = m.scenario
    put: dict[tuple[str, int], int] = defaultdict(int)
    rows_for = serving(m)
    first = 1 if d.leaf_in_rack else 0  # tier index of the first tier in network racks (0: leaves)
    if not d.leaf_in_rack:
        for pod, n in z.leaves_per_pod.items():
            _take(put, room, 1, n, rows_for.get(pod, []), f"{cid}: leaves of pod {pod}")
    for b, counts in sorted(z.per_building.items()):
        mine = [rid for rid in rows_here if m.ix.rows[rid].building == b]
        for i in range(max(first, 1), d.tiers):
            _take(put, room, i + 1, counts[i], mine, f"{cid}: tier-{i + 1} switches of building {b}")
    if z.region_switches and s.region_tier is not None:
        hub = [rid for rid in rows_here if m.ix.rows[rid].building == s.region_tier.building]
        _take(put, room, 4, z.region_switches, hub, f"{cid}: region-tier switches")
    return put


def _charged(m: Model, cid: str, by_id: dict, rows_here: list[str], val) -> dict[str, float]:
    """Row → what the solve charged to it for the cluster: its switches and its transceiver share τ, kW."""
    charged: dict[str, float] = defaultdict(float)
    for (c, did, rid, tier), v in m.network_switches.items():
        if c == cid:
            charged[rid] += round(val(v)) * tier_switch(m.scenario, by_id[did], tier).power_w / 1000
    for rid in rows_here:
        charged[rid] += max(0.0, val(m.network_kw.get((cid, rid))))
    return charged


def _pack(s, d, put: dict, rid: str, limit: float) -> list[tuple[int, list[SwitchCount], float]]:
    """A row's switches into racks, one tier a rack, each at most min(units ÷ height, rack kW ÷ switch kW)."""
    loads: list[tuple[int, list[SwitchCount], float]] = []
    for tier in (1, 2, 3, 4):
        n = put.get((rid, tier), 0)
        if not n:
            continue
        sm = tier_switch(s, d, tier)
        cap = min(d.rack_units // sm.height_u, math.floor(limit * 1000 / sm.power_w + 1e-9))
        for j in range(math.ceil(n / cap)):
            k = min(cap, n - j * cap)
            loads.append((tier, [SwitchCount(tier=tier, model=sm.id, count=k)], k * sm.power_w / 1000))
    return loads


def _stand(
    m: Model, cid: str, d, rid: str, loads: list, tau: float, allowed: int, free: dict, used: dict
) -> list[NetworkRack]:
    """A row's network racks at its next free positions, the transceivers' τ kW shared in proportion
    to each rack's room (racks for optics only added while the solve allowed them)."""
    ref = m.ix.rows[rid]
    limit = ref.row.max_rack_power_kw
    while tau > TOL and sum(limit - kw for _, _, kw in loads) < tau - 1e-9 and len(loads) < allowed:
        loads.append((0, [], 0.0))  # a rack for optics and patching only
    head = sum(limit - kw for _, _, kw in loads)
    out = []
    for _, switches, kw in loads:
        if used[rid] >= len(free[rid]):
            raise SolverFailure(f"network row {rid} has no free position left for {cid}'s racks")
        pos = free[rid][used[rid]]
        used[rid] += 1
        part = tau * (limit - kw) / head if head > TOL else 0.0
        x, y = ref.row.position_xy(pos)
        out.append(
            NetworkRack(
                building=ref.building,
                hall=ref.hall,
                row=rid,
                position=pos,
                x_m=x,
                y_m=y,
                cluster=cid,
                design=d.id,
                switches=switches,
                kw=math.floor((kw + part) * 1e6) / 1e6,
            )
        )
    return out


def _spread_optics(
    m: Model,
    optics: float,
    rows: list[str],
    packed: dict,
    charged: dict[str, float],
    allowed: dict[str, int],
    cid: str,
) -> dict[str, float]:
    """Row → kW of transceivers: first over the rows holding the cluster's switches, then the
    others, each row at most what the solve charged to it beyond its switches and what its racks
    (with the extra racks the solve allowed there) can carry; in proportion to that room."""
    room = {}
    for rid in rows:
        limit = m.ix.rows[rid].row.max_rack_power_kw
        loads = packed[rid]
        switches = sum(kw for _, _, kw in loads)
        racks = sum(limit - kw for _, _, kw in loads) + max(0, allowed[rid] - len(loads)) * limit
        room[rid] = max(0.0, min(charged.get(rid, 0.0) - switches, racks))
    out: dict[str, float] = {}
    left = optics
    for group in ([r for r in rows if packed[r]], [r for r in rows if not packed[r]]):
        total = sum(room[r] for r in group)
        if left <= TOL or total <= TOL:
            continue
        take = min(left, total)
        for r in group:
            out[r] = take * room[r] / total
        left -= take
    if left > 1e-6:
        raise SolverFailure(
            f"network racks of {cid}: {left:,.3f} kW of transceivers have no room the solve left for them"
        )
    return out
