"""Room: the most GPUs a pod or building can hold of one cluster group's rack types, from the
limits the model states (§4, §5) with nothing else placed there. It is the big-M of the clusters
family (GPUs of a group in a scope ≤ room · z) and the master's estimate of a building's room
(:mod:`planner.scale.proposals`).

Every coefficient of a power row is nonnegative — a feed group's share of a node's load is
a_0(v, g) in normal operation and a_f(v, g) = a_0 + δ_f ≥ 0 once f has failed — so racks
elsewhere only ever tighten a row. With every other feed group at its fixed load F (network and
installed racks), a feed group g may draw at most

    K_g = min over the rows r where g's coefficient c_r > 0 of (usable_v + raises_v − F_r) ÷ c_r

    c_r = a_0(v, g)             normal operation
          a_f(v, g) · φ         N-1 (f failed), φ the failover factor of the racks' cluster
                                (keep 1, cap cap_ratio, shed 0)
          a_f(v, g)             a node out for maintenance while another fails (§21)

with F_r the fixed load the row counts (every group's F at its coefficient) and raises_v every
retrofit that may raise v (as if bought); K_g = 0 for a group some single failure leaves unfed
while its rows are redundant, or with no feed online. A cooling zone z holds at most
H_z = capacity_z + raises_z − fixed heat_z of heat. Then, for a group of clusters on rack types T
(G_t GPUs, planning kW_t, air and liquid heat air_t, liq_t per rack) in a scope s:

    GPUs ≤ min( Σ_g min( Σ_{classes k of g in s} max_t slots_k(t) · G_t,
                        ⌊K_g ÷ kW_t⌋ · G_t                    (one type)
                        K_g · max_t G_t ÷ kW_t                (several types) ),
                Σ_{air zones z of s} H_z · max_t G_t ÷ air_t      (when every t heats the air),
                Σ_{liquid loops z of s} H_z · max_t G_t ÷ liq_t   (when every t heats liquid) )

the sums over the feed groups and zones the scope's classes lie in (a group or zone shared with
another scope counts whole in each: still an upper bound). Each term bounds the GPUs of T that
could stand there in any plan, so the minimum does; the big-M it gives never cuts off a plan.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from planner.enums import RetrofitKind
from planner.input.power_model import PowerModel
from planner.model.core import PositionClass, unit_slots
from planner.schema import RackType, Scenario


@dataclass
class SiteRoom:
    """Power and heat room of one state of the site (one phase): feed groups and zones."""

    scenario: Scenario
    pm: PowerModel
    fixed_row_kw: dict[str, float]
    """Fixed load per row, kW (network racks, installed racks standing)."""
    fixed_heat: dict[str, float]
    """Fixed heat per cooling zone, kW."""
    zone_capacity: dict[str, float]
    """Heat each zone removes, kW (:func:`planner.model.cooling.zone_capacity_kw`)."""
    _kw: dict[float, dict[str, float]] = field(default_factory=dict)
    _row_map: dict = field(default_factory=dict)

    def group_kw(self, factor: float = 1.0) -> dict[str, float]:
        """Feed group → K_g, kW (module docstring), for racks of failover factor ``factor``."""
        key = round(factor, 9)
        if key not in self._kw:
            self._kw[key] = _group_kw(self.scenario, self.pm, self.fixed_row_kw, factor)
        return self._kw[key]

    def zone_kw(self, zone: str) -> float:
        """H_z, kW (module docstring); infinite for a zone the site does not state."""
        if zone not in self.zone_capacity:
            return math.inf
        return max(
            0.0,
            self.zone_capacity[zone]
            + _zone_raises(self.scenario).get(zone, 0.0)
            - self.fixed_heat.get(zone, 0.0),
        )

    def gpus(self, cells: Iterable[tuple[PositionClass, RackType]], factor: float = 1.0) -> float:
        """The room of the module docstring for the (position class, rack type) pairs a group of
        clusters may use in a scope, GPUs."""
        by_group: dict[str, dict[str, tuple[PositionClass, list[RackType]]]] = defaultdict(dict)
        air: dict[str, list[RackType]] = defaultdict(list)
        liquid: dict[str, list[RackType]] = defaultdict(list)
        types: dict[str, RackType] = {}
        ix_rows = self.pm.group_of_row
        for cls, t in cells:
            if t.gpus <= 0:
                continue
            types[t.id] = t
            slot = by_group[ix_rows[cls.row]].setdefault(str(cls.key), (cls, []))
            slot[1].append(t)
        if not types:
            return 0.0
        kw = self.group_kw(factor)
        rows = self._rows()
        total = 0.0
        for g, classes in by_group.items():
            here = {t.id: t for _, ts in classes.values() for t in ts}
            for cls, ts in classes.values():
                row = rows[cls.row]
                air[row.air_zone].extend(ts)
                # a row without a loop may get one by a retrofit: no liquid bound then
                liquid[row.liquid_loop or ""].extend(ts)
            slots = sum(max(unit_slots(cls, t.width) * t.gpus for t in ts) for cls, ts in classes.values())
            power = kw.get(g, math.inf)
            if len(here) == 1:
                (t,) = here.values()
                watts = self.scenario.rack_power_kw(t)
                by_power = math.floor(power / watts + 1e-9) * t.gpus if watts > 0 else math.inf
            else:
                by_power = power * max(
                    (
                        t.gpus / self.scenario.rack_power_kw(t)
                        if self.scenario.rack_power_kw(t) > 0
                        else math.inf
                    )
                    for t in here.values()
                )
            total += min(slots, by_power)
        bounds = [total, self._heat(air, 0), self._heat(liquid, 1)]
        return float(math.floor(min(bounds) + 1e-9))

    def _heat(self, zones: dict[str, list[RackType]], part: int) -> float:
        """Σ_z H_z · max_t G_t ÷ heat_t over the zones (air part 0, liquid part 1); infinite when
        a type there puts no heat into that medium."""
        total = 0.0
        for z, ts in zones.items():
            if not z:
                return math.inf
            per = []
            for t in {t.id: t for t in ts}.values():
                heat = t.heat_kw(self.scenario.rack_power_kw(t))[part]
                if heat <= 0:
                    return math.inf
                per.append(t.gpus / heat)
            total += self.zone_kw(z) * max(per)
        return total

    def _rows(self) -> dict:
        if not self._row_map:
            self._row_map.update(
                {r.id: r for b in self.scenario.site.buildings for h in b.halls for r in h.rows}
            )
        return self._row_map


def zone_capacity_kw(scenario, zone, building: str) -> float:
    """Heat a zone removes, kW: (units − redundant) × unit kW; with cooling units maintained in its
    building (§21) its reserve must stand while one unit is out: (units − redundant − 1) × unit kW."""
    if scenario.maintained("cooling_unit", building):
        return max(0, zone.units - zone.redundant_units - 1) * zone.unit_capacity_kw
    return zone.capacity_kw


def room_at(m, p: int) -> SiteRoom:
    """The room of model ``m`` in phase index p: the power model of what is online then (that of
    the first change point at or after p: a change point is the last phase of a run of equal
    capacity), the fixed loads standing then, zones offline then at 0."""
    cache = m.rooms
    if p not in cache:
        point = min([q for q in m.pms if q >= p], default=max(m.pms))
        offline = m.tl.offline_zones(p)
        capacity = {
            z: 0.0 if z in offline else zone_capacity_kw(m.scenario, zone, m.ix.zone_building[z])
            for z, zone in m.ix.zones.items()
        }
        cache[p] = SiteRoom(m.scenario, m.pms[point], m.fixed_at(p), m.fixed_heat_at(p), capacity)
    return cache[p]


def _zone_raises(scenario: Scenario) -> dict[str, float]:
    """Zone → kW every retrofit may add to it."""
    out: dict[str, float] = defaultdict(float)
    for r in scenario.retrofits:
        if r.effect.kind == RetrofitKind.raise_capacity and r.effect.target:
            out[r.effect.target] += r.effect.add_kw
    return out


def _group_kw(
    scenario: Scenario, pm: PowerModel, fixed_row_kw: dict[str, float], factor: float
) -> dict[str, float]:
    """Feed group → K_g (module docstring), kW."""
    raises = _zone_raises(scenario)  # targets may be power nodes as well as zones
    fixed = pm.fixed_by_group(fixed_row_kw)
    out: dict[str, float] = {g: math.inf for g in pm.groups}

    def cap(g: str, coef: float, rhs: float) -> None:
        if coef > 1e-12:
            out[g] = min(out[g], max(0.0, rhs) / coef)

    for v, coef in pm.normal.items():
        rhs = pm.usable_kw[v] + raises.get(v, 0.0) - pm.fixed_normal(v, fixed)
        for g, a in coef.items():
            cap(g, a, rhs)
    for rows, phi in ((pm.contingencies, factor), (pm.maintenance, 1.0)):
        for c in rows:
            a0 = pm.normal.get(c.node, {})
            rhs = (
                pm.usable_kw[c.node]
                + raises.get(c.node, 0.0)
                - pm.fixed_normal(c.node, fixed)
                - pm.fixed_delta(c, fixed)
            )
            for g, d in c.delta.items():
                cap(g, (a0.get(g, 0.0) + d) * phi, rhs)
    for g in [*pm.forced_empty, *pm.dark]:
        out[g] = 0.0
    return out


# ------------------------------------------------------------------ the room family: rounding cuts

ENUMERATE_MAX = 20_000
"""Most combinations of counts the exact knapsack of one feed group tries; beyond it the LP bound
(floored to the GPUs' greatest common divisor) stands."""


def most_gpus(shapes: list[tuple[int, int, float, int]], positions: int, kw: float) -> int:
    """max Σ G·x over whole racks x_t ≤ N_t with Σ w·x ≤ ``positions`` and Σ kW·x ≤ ``kw``, for
    ``shapes`` (G GPUs, w positions, kW, N most units) of one feed group: exact (every count of
    every shape but the last tried, the last filled greedily) when that takes at most
    :data:`ENUMERATE_MAX` combinations, else the LP bound floored to the GPUs' greatest common
    divisor (an upper bound either way)."""
    shapes = [s for s in shapes if s[0] > 0 and s[3] > 0]
    if not shapes:
        return 0

    def most(w: int, k: float, n: int, pos: float, power: float) -> int:
        fit = min(n, math.floor(pos / w + 1e-9), math.floor(power / k + 1e-9) if k > 0 else n)
        return max(0, fit)

    tries = 1
    for _g, w, k, n in shapes[:-1]:
        tries *= most(w, k, n, positions, kw) + 1
    if tries <= ENUMERATE_MAX:

        def best(i: int, pos: float, power: float) -> int:
            g, w, k, n = shapes[i]
            if i == len(shapes) - 1:
                return g * most(w, k, n, pos, power)
            return max(
                g * x + best(i + 1, pos - w * x, power - k * x) for x in range(most(w, k, n, pos, power) + 1)
            )

        return best(0, positions, kw)
    lp = min(
        sum(g * n for g, _, _, n in shapes),
        positions * max(g / w for g, w, _, _ in shapes),
        kw * max((g / k if k > 0 else math.inf) for g, _, k, _ in shapes),
    )
    step = math.gcd(*(g for g, _, _, _ in shapes))
    return int(math.floor(lp / step + 1e-9)) * step


def site_room(scenario: Scenario, ix, pm: PowerModel | None = None) -> SiteRoom:
    """The room of the whole site with everything online (the master's estimates,
    :mod:`planner.scale.proposals`): fixed loads are the pods' network racks and the installed
    racks, as the model counts them (:func:`planner.model.space.add_fixed_loads`)."""
    from planner.input.power_model import power_model
    from planner.input.site_index import network_racks

    types = scenario.catalog.by_id()
    rows: dict[str, float] = defaultdict(float)
    heat: dict[str, float] = defaultdict(float)
    items = [(row, t) for _, row, t in network_racks(scenario)]
    items += [(r.row, types[r.rack_type]) for r in scenario.existing if r.rack_type in types]
    for row_id, t in items:
        kw = scenario.rack_power_kw(t)
        rows[row_id] += kw
        row = ix.rows[row_id].row
        air, liquid = t.heat_kw(kw)
        heat[row.air_zone] += air
        if liquid and row.liquid_loop:
            heat[row.liquid_loop] += liquid
    capacity = {z: zone_capacity_kw(scenario, zone, ix.zone_building[z]) for z, zone in ix.zones.items()}
    return SiteRoom(scenario, pm or power_model(ix), dict(rows), dict(heat), capacity)
