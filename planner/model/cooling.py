"""Cooling (§5): the heat of every air zone and liquid loop, per phase where what is online changes."""

from __future__ import annotations

from collections import defaultdict

import pulp

from planner.enums import LimitKind, RetrofitKind
from planner.model.core import Model, summed
from planner.model.fabric import add_fabric_constraints
from planner.model.keys import LimitKey
from planner.model.phases import add_count_variables, add_retrofit_variables
from planner.model.registry import LimitRows, amount, declare
from planner.model.room import zone_capacity_kw
from planner.model.space import add_fixed_loads
from planner.rules.costs import FACILITY_USD_PER_KW


def relax_cooling_zones(
    data: dict, scenario, idents: set[str], step: float
) -> tuple[list[str], float | None]:
    """Each named zone's unit capacity × (1 + step), priced at the facility build cost per kW of cooling
    added."""
    steps, cost = [], 0.0
    for bld in data["site"]["buildings"]:
        for h in bld["halls"]:
            for z in h["cooling_zones"]:
                if z["id"] in idents:
                    add = (z["units"] - z.get("redundant_units", 0)) * z["unit_capacity_kw"] * step
                    z["unit_capacity_kw"] *= 1 + step
                    cost += add * FACILITY_USD_PER_KW
                    steps.append(f"{z['id']} +{amount(add)} kW of cooling")
    return steps, cost


@declare(
    "cooling",
    needs=(add_count_variables, add_fabric_constraints, add_fixed_loads, add_retrofit_variables),
    limits={"cooling": LimitRows(LimitKind.cooling_zone, relax_cooling_zones)},
)
def add_cooling_constraints(m: Model) -> None:
    """Cooling, in each phase where what is online changes: Σ n · p_t · (1 − lf_t) over rows of air
    zone z ≤ cap_z − fixed heat + Σ raises in effect, and Σ n · p_t · lf_t over rows of liquid loop z
    (as built, or added by a retrofit) likewise; cap = (units − redundant) × unit kW, 0 before the
    zone exists, one unit fewer where cooling units are maintained (§21, :func:`zone_capacity_kw`);
    designed fabrics' switches are air cooled in their network row's zone. Named ``cooling(CZ~AIR)``."""
    types = m.scenario.catalog.by_id()
    loops = {
        r.effect.row: r.effect.loop
        for r in m.scenario.retrofits
        if r.effect.kind == RetrofitKind.add_liquid_loop
    }
    raises: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for r in m.scenario.retrofits:
        if r.effect.kind == RetrofitKind.raise_capacity and r.effect.target in m.ix.zones:
            raises[r.effect.target].append((r.id, r.effect.add_kw))
    capacity = {
        z: zone_capacity_kw(m.scenario, zone, m.ix.zone_building[z]) for z, zone in m.ix.zones.items()
    }
    capacity.update({loop.id: loop.capacity_kw for loop in loops.values()})
    for p in m.points:
        heat: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
        for key, var in m.upto(p):
            row = m.ix.rows[key.cls.row].row
            rt = types[key.rack_type]
            air, liquid = rt.heat_kw(m.scenario.rack_power_kw(rt))
            if air > 0:
                heat[row.air_zone].append((var, round(air, 9)))
            loop = row.liquid_loop or (loops[row.id].id if row.id in loops else None)
            if liquid > 0 and loop:
                heat[loop].append((var, round(liquid, 9)))
        for row, items in m.fabric_at(p).items():  # switches are air cooled
            heat[m.ix.rows[row].row.air_zone].extend(items)
        offline = m.tl.offline_zones(p)
        fixed = m.fixed_heat_at(p)
        for z, items in heat.items():
            f0 = fixed.get(z, 0.0)
            cap = 0.0 if z in offline else capacity[z]
            extra = [m.effect(r, p) * add for r, add in raises.get(z, [])]
            m.add_limit(
                LimitKey("cooling", z, "", m.ph(p)), summed(items) - pulp.lpSum(extra), cap - f0, "kW", f0
            )
