"""Region power arriving over time (§16): in each phase the facility load fits the MW arrived."""

from __future__ import annotations

import pulp

from planner.enums import LimitKind
from planner.model.core import Model
from planner.model.keys import Family, LimitKey


def add_power_arrival_constraints(m: Model) -> None:
    """For each phase p this model decides (interconnect and generation arrived by p, A_p in kW):

        PUE · (Σ_{k, t, G, q ≤ p} n[k,t,G,q] · p_t + fabric kW) ≤ A_p − PUE · F_p

    with p_t the planning power of type t and F_p the fixed loads standing in p (installed racks,
    pods' network racks), all kW. Named ``power_arrival(region,q3)`` (``power_arrival(region)`` without
    phases). Nothing when the scenario states no arrival."""
    m.needs_done("power_arrival", "counts", "fabric", "fixed_loads")
    m.done("power_arrival")
    s = m.scenario
    if not s.power_arrival:
        return
    types = s.catalog.by_id()
    fabric = [item for items in m.fabric_rows.values() for item in items]  # single-phase only (checked on input)
    for p in range(m.from_phase, m.horizon + 1):
        available = s.power_available_kw(p)
        fixed = s.pue * sum(m.fixed_at(p).values())
        items = [(var, round(s.pue * s.rack_power_kw(types[key.rack_type]), 9)) for key, var in m.upto(p)]
        items += [(var, round(s.pue * c, 9)) for var, c in fabric]
        lhs = pulp.LpAffineExpression(items)
        m.add_limit(LimitKey(Family.power_arrival, "region", phase=m.ph(p)), LimitKind.power_arrival, lhs, available - fixed, "kW", fixed)
