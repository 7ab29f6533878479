"""Network racks on the floor (§13): the switches of each cluster's designed fabric, sized exactly
from its placed GPU racks (:mod:`planner.rules.fabric_sizing`), stood in network racks at network-row
positions within what the solve allowed per row, tier and phase (:mod:`planner.model.fabric`):

- phase by phase (one pass without phases), the fabric of the racks placed by then: what it needs
  beyond what already stands is bought then (leaves of pod p in rows serving p, then each
  building's spines and cores in its rows, then the region tier's switches in its building's
  rows), each row up to the switches the solve stood there in that phase; switches once bought
  stay to the horizon;
- a rack holds one tier's switches, at most min(⌊units ÷ height⌋, ⌊row rack kW ÷ switch kW⌋) of
  them; new switches fill the row's last rack of their tier, then a rack that held transceivers
  only, before another rack is stood;
- in each phase the links' transceiver power spread over the rows as the solve spread it then
  (scaled to the exact figure), and within a row over its racks in proportion to their room,
  standing another rack in the row where the switches' racks cannot carry it (never more racks
  than the solve stood there then);
- positions: the row's free positions in the order the racks are stood, phase by phase (a phase's
  racks stand where they would whatever later phases add);
- each rack's kW rounded down to the watt's thousandth, so rounding never lifts a row over what
  the solve charged to it.

Every row then carries at most what the solve charged to it in each phase, so the power, cooling
and space limits the solve kept hold for the placed racks (the verifier checks them anyway).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from planner.errors import SolverFailure
from planner.model import Model
from planner.model.fabric_racks import serving, standing_shares
from planner.rules.fabric_sizing import fabric_sizes, spanning_clusters, tier_switch
from planner.schema import NetworkRack, PlacedRack, SwitchCount

TOL = 1e-9


@dataclass
class _Rack:
    """A network rack as it is stood: its row, tier (0: transceivers only), switch capacity, the
    switches bought per phase index, and its kW per phase index."""

    row: str
    tier: int
    cap: int
    first: int
    bought: list[tuple[int, int]] = field(default_factory=list)  # (phase index, switches)
    kw: dict[int, float] = field(default_factory=dict)
    position: int | None = None  # where it stands already (None: the row's next free position)

    @property
    def switches(self) -> int:
        return sum(n for _, n in self.bought)


def _take(put: dict, room: dict, tier: int, n: int, where: list[str], what: str) -> None:
    """Stand n more switches of a tier in the rows ``where``, each up to what the solve stood there."""
    for rid in where:
        k = min(n, room.get((rid, tier), 0) - put[rid, tier])
        if k > 0:
            put[rid, tier] += k
            n -= k
    if n > 0:
        raise SolverFailure(f"network racks of {what}: {n} have no place the solve left for them")


def placed_by(scenario, racks: list[PlacedRack], p: int) -> list[PlacedRack]:
    """Racks placed in phase index p or before (retired or not: their switches stay)."""
    if not scenario.phases:
        return list(racks)
    order = scenario.phase_at
    return [r for r in racks if r.existing or order.get(r.phase, 0) <= p]


def fill_network(
    m: Model, values: dict[str, float], racks: list[PlacedRack], picks: dict[str, str]
) -> list[NetworkRack]:
    """Network racks for every cluster on a designed fabric (module docstring)."""
    s = m.scenario
    if not s.fabrics:
        return []
    by_id = {d.id: d for d in s.fabrics}
    held = {(nr.row, nr.position) for nr in m.installed_network}
    free = {rid: [i for i in pos if (rid, i) not in held] for rid, pos in m.network_rows.items()}
    used: dict[str, int] = defaultdict(int)
    phases = list(range(m.from_phase, m.horizon + 1))
    span = spanning_clusters(fabric_sizes(s, racks, picks))  # a job spanning at the horizon spans throughout
    sizes = {p: fabric_sizes(s, placed_by(s, racks, p), picks, span) for p in phases}
    stands: list[tuple[str, object, _Rack]] = []
    for cid in sizes[phases[-1]]:
        d = by_id[sizes[phases[-1]][cid].design]
        stood = [_standing(m, d, nr) for nr in m.installed_network if nr.cluster == cid]
        put: dict[tuple[str, int], int] = defaultdict(int)
        for r in stood:
            put[r.row, r.tier] += r.switches if r.tier else 0
        taken: dict[tuple[str, str], int] = defaultdict(
            int, standing_shares(m, cid)
        )  # (pod, shared row) → its leaves there
        before = (  # the fabric the standing racks hold: of the GPU racks installed before this model
            fabric_sizes(s, [r for r in racks if r.existing], picks, span).get(cid) if stood else None
        )
        for p in phases:
            z = sizes[p].get(cid)
            if z is None or not z.endpoints:
                continue
            _Phase(m, values, cid, d, p).grow(z, before, put, stood, taken)
            before = z
        stands += [(cid, d, r) for r in stood]
    # positions phase by phase: a phase's racks stand where they would whatever later phases add
    stands.sort(key=lambda x: x[2].first)
    return [_record(m, cid, d, r, free, used) for cid, d, r in stands]


def _standing(m: Model, d, nr: NetworkRack) -> _Rack:
    """A network rack standing already (``m.installed_network``), as the fill grows racks."""
    at = m.tl.index
    tiers = sorted({sc.tier for sc in nr.switches})
    tier = tiers[0] if tiers else 0
    cap = 0
    if tier:
        sm = tier_switch(m.scenario, d, tier)
        limit = m.ix.rows[nr.row].row.max_rack_power_kw
        cap = min(d.rack_units // sm.height_u, math.floor(limit * 1000 / sm.power_w + 1e-9))
    return _Rack(
        nr.row,
        tier,
        cap,
        at.get(nr.phase, 0),
        bought=[(at.get(sc.phase, 0), sc.count) for sc in nr.switches],
        kw={at[ph]: kw for ph, kw in nr.kw_by_phase.items() if ph in at},
        position=nr.position,
    )


class _Phase:
    """One cluster's network racks in one phase: the solve's switches, racks and charges per row."""

    def __init__(self, m: Model, values: dict[str, float], cid: str, d, p: int):
        self.m, self.s, self.cid, self.d, self.p = m, m.scenario, cid, d, p
        ph = m.ph(p)

        def val(v) -> float:
            return values.get(v.name, 0.0) if v is not None else 0.0

        mine = [(k, v) for k, v in m.network_switches.items() if k[0] == cid and k[1] == d.id and k[4] == ph]
        self.room = {(rid, tier): round(val(v)) for (_, _, rid, tier, _), v in mine}
        self.allowed: dict[str, int] = defaultdict(int)  # the solve's racks of the cluster per row: its space
        for (c, _, rid, _, q), v in m.network_racks.items():
            if c == cid and q == ph:
                self.allowed[rid] += round(val(v))
        self.rows = sorted({rid for (rid, _) in self.room})
        self.charged: dict[str, float] = defaultdict(float)  # its switches and transceiver share τ, kW
        for (_, _, rid, tier, _), v in mine:
            self.charged[rid] += round(val(v)) * tier_switch(self.s, d, tier).power_w / 1000
        for rid in self.rows:
            self.charged[rid] += max(0.0, val(m.network_kw.get((cid, rid, ph))))
        self.share = {  # (pod, row) → the pod's share of a row serving several pods (the solve's split)
            (pod, rid): round(val(v))
            for (c, did, tier, pod, rid, q), v in m.network_share.items()
            if c == cid and did == d.id and tier == 1 and q == ph
        }

    def grow(self, z, before, put: dict, stood: list[_Rack], taken: dict) -> None:
        """Buy what the phase's fabric needs beyond what stands, rack it, and spread its transceivers."""
        was = dict(put)
        self._switches(z, before, put, taken)
        for (rid, tier), n in sorted(put.items()):
            self._rack(rid, tier, n - was.get((rid, tier), 0), stood)
        switch_kw = sum(n * tier_switch(self.s, self.d, tier).power_w / 1000 for (_, tier), n in put.items())
        share = self._spread(max(0.0, z.kw - switch_kw), stood)
        for rid in self.rows:
            self._stand(rid, share.get(rid, 0.0), [r for r in stood if r.row == rid], stood)

    def _switches(self, z, before, put: dict, taken: dict) -> None:
        """(row, tier) → switches standing: what stood, plus what this phase's fabric needs beyond it,
        each pod's leaves in rows serving it (in a row serving several pods, up to the pod's share
        the solve gave it), each building's upper tiers in its rows, the region tier in the tier
        building's rows, within what the solve stood in this phase."""
        m, cid, d = self.m, self.cid, self.d

        def more(now: int, then: int) -> int:
            return max(0, now - then)

        if not d.leaf_in_rack:
            rows_for = serving(m)
            for pod, n in z.leaves_per_pod.items():
                was = before.leaves_per_pod.get(pod, 0) if before else 0
                self._leaves(pod, more(n, was), rows_for.get(pod, []), put, taken)
        first = 1 if d.leaf_in_rack else 0
        for b, counts in sorted(z.per_building.items()):
            mine = [rid for rid in self.rows if m.ix.rows[rid].building == b]
            was = before.per_building.get(b) if before else None
            for i in range(max(first, 1), d.tiers):
                n = more(counts[i], was[i] if was else 0)
                _take(put, self.room, i + 1, n, mine, f"{cid}: tier-{i + 1} switches of building {b}")
        region = self.s.region_tier
        if z.region_switches and region is not None:
            hub = [rid for rid in self.rows if m.ix.rows[rid].building == region.building]
            n = more(z.region_switches, before.region_switches if before else 0)
            _take(put, self.room, 4, n, hub, f"{cid}: region-tier switches")

    def _leaves(self, pod: str, n: int, rows: list[str], put: dict, taken: dict) -> None:
        """n more leaves of a pod: its own rows first, then rows serving several pods, each up to the
        pod's share there (kept from phase to phase: a leaf once a pod's stays that pod's)."""
        own = [rid for rid in rows if (pod, rid) not in self.share]
        for rid in [*own, *(rid for rid in rows if (pod, rid) in self.share)]:
            k = min(n, self.room.get((rid, 1), 0) - put[rid, 1])
            if (pod, rid) in self.share:
                k = min(k, self.share[pod, rid] - taken[pod, rid])
                taken[pod, rid] += max(0, k)
            if k > 0:
                put[rid, 1] += k
                n -= k
        if n > 0:
            raise SolverFailure(
                f"network racks of {self.cid}: leaves of pod {pod}: {n} have no place the solve left"
            )

    def _rack(self, rid: str, tier: int, n: int, stood: list[_Rack]) -> None:
        """n more switches of a tier in a row: the row's last rack of that tier first, then a rack
        that held transceivers only (it takes switches now), then new racks."""
        if n <= 0:
            return
        sm = tier_switch(self.s, self.d, tier)
        limit = self.m.ix.rows[rid].row.max_rack_power_kw
        cap = min(self.d.rack_units // sm.height_u, math.floor(limit * 1000 / sm.power_w + 1e-9))
        last = next((r for r in reversed(stood) if r.row == rid and r.tier == tier), None)
        while n > 0:
            if last is None or last.switches >= last.cap:
                last = next((r for r in stood if r.row == rid and r.tier == 0), None)
                if last is not None:
                    last.tier, last.cap = tier, cap
                else:
                    last = _Rack(rid, tier, cap, self.p)
                    stood.append(last)
            k = min(n, last.cap - last.switches)
            last.bought.append((self.p, k))
            n -= k

    def _switch_kw(self, r: _Rack) -> float:
        return r.switches * tier_switch(self.s, self.d, r.tier).power_w / 1000 if r.tier else 0.0

    def _spread(self, optics: float, stood: list[_Rack]) -> dict[str, float]:
        """Row → kW of transceivers this phase: first over the rows holding the cluster's switches,
        then the others, each row at most what the solve charged to it beyond its switches and what
        its racks (with the further racks the solve allowed there) can carry; in proportion to that."""
        room = {}
        for rid in self.rows:
            limit = self.m.ix.rows[rid].row.max_rack_power_kw
            mine = [r for r in stood if r.row == rid]
            switches = sum(self._switch_kw(r) for r in mine)
            racks = (
                sum(limit - self._switch_kw(r) for r in mine) + max(0, self.allowed[rid] - len(mine)) * limit
            )
            room[rid] = max(0.0, min(self.charged.get(rid, 0.0) - switches, racks))
        out: dict[str, float] = {}
        left = optics
        holding = {r.row for r in stood if r.tier}
        for group in ([r for r in self.rows if r in holding], [r for r in self.rows if r not in holding]):
            total = sum(room[r] for r in group)
            if left <= TOL or total <= TOL:
                continue
            take = min(left, total)
            for r in group:
                out[r] = take * room[r] / total
            left -= take
        if left > 1e-6:
            what = f"{left:,.3f} kW of transceivers have no room the solve left for them"
            raise SolverFailure(f"network racks of {self.cid}: {what}")
        return out

    def _stand(self, rid: str, tau: float, mine: list[_Rack], stood: list[_Rack]) -> None:
        """A row's racks' kW this phase: their switches and the transceivers' τ kW in proportion to
        each rack's room (a rack for transceivers only stood while the solve allowed one more)."""
        limit = self.m.ix.rows[rid].row.max_rack_power_kw
        while (
            tau > TOL
            and sum(limit - self._switch_kw(r) for r in mine) < tau - 1e-9
            and len(mine) < self.allowed[rid]
        ):
            extra = _Rack(rid, 0, 0, self.p)  # a rack for optics and patching only
            mine.append(extra)
            stood.append(extra)
        head = sum(limit - self._switch_kw(r) for r in mine)
        for r in mine:
            kw = self._switch_kw(r)
            part = tau * (limit - kw) / head if head > TOL else 0.0
            r.kw[self.p] = math.floor((kw + part) * 1e6) / 1e6


def _record(m: Model, cid: str, d, r: _Rack, free: dict, used: dict) -> NetworkRack:
    """The plan's record of a stood rack, at its row's next free position."""
    ref = m.ix.rows[r.row]
    if r.position is not None:
        pos = r.position
    elif used[r.row] >= len(free[r.row]):
        raise SolverFailure(f"network row {r.row} has no free position left for {cid}'s racks")
    else:
        pos = free[r.row][used[r.row]]
        used[r.row] += 1
    x, y = ref.row.position_xy(pos)
    phased = m.tl.phased
    model = tier_switch(m.scenario, d, r.tier).id if r.tier else ""
    return NetworkRack(
        building=ref.building,
        hall=ref.hall,
        row=r.row,
        position=pos,
        x_m=x,
        y_m=y,
        cluster=cid,
        design=d.id,
        switches=[
            SwitchCount(tier=r.tier, model=model, count=n, phase=m.ph(p) if phased else None)
            for p, n in (r.bought if phased else [(r.first, r.switches)] if r.switches else [])
        ],
        kw=r.kw.get(max(r.kw), 0.0) if r.kw else 0.0,
        phase=m.ph(r.first) if phased else None,
        kw_by_phase={m.ph(p): kw for p, kw in sorted(r.kw.items())} if phased else {},
    )
