"""Region power arriving over time (§16): in each phase the facility load fits the MW arrived."""

from __future__ import annotations

import pulp

from planner.enums import LimitKind
from planner.model.core import Model
from planner.model.fabric import add_fabric_constraints
from planner.model.keys import LimitKey
from planner.model.phases import add_count_variables
from planner.model.registry import LimitRows, amount, declare
from planner.model.space import add_fixed_loads


def relax_power_arrival(
    data: dict, scenario, idents: set[str], step: float
) -> tuple[list[str], float | None]:
    """In the named phase (or the region without phases): step × the power available then as more
    interconnect from that phase on (no price: what the utility charges is not in the scenario)."""
    order = scenario.phase_at
    steps = []
    for ident in idents:
        mw = step * (scenario.power_available_kw(order.get(ident, 0)) or 0.0) / 1000
        if mw > 0:
            data["power_arrival"].append({"phase": ident if ident in order else None, "interconnect_mw": mw})
            more = f"{amount(mw)} MW" if mw >= 1 else f"{amount(mw * 1000)} kW"
            steps.append(f"{ident if ident in order else 'region'}: +{more} more interconnect")
    return steps, None


@declare(
    "power_arrival",
    needs=(add_count_variables, add_fabric_constraints, add_fixed_loads),
    limits={"power_arrival": LimitRows(LimitKind.power_arrival, relax_power_arrival)},
)
def add_power_arrival_constraints(m: Model) -> None:
    """For each phase p this model decides (interconnect and generation arrived by p, A_p in kW):

        Σ_{k,t,G,q ≤ p} PUE(k) · n[k,t,G,q] · p_t + Σ_r PUE(r) · fabric_r ≤ A_p − Σ_r PUE(r) · F_{p,r}

    with p_t the planning power of type t with its back-end network allowance (none for a group on
    a designed fabric: :meth:`planner.schema.Scenario.allowance_kw`), fabric_r the designed-fabric
    switches' kW charged to row r,
    F_{p,r} the fixed loads standing in row r in p (installed racks with their back-end network, pods'
    network racks), all kW, and
    PUE(·) the design-day PUE of the building a class or row stands in (a structure's own, else the
    scenario's; the annual one unless stated). Named ``power_arrival(region,q3)``
    (``power_arrival(region)`` without phases). Nothing when the scenario states no arrival."""
    s = m.scenario
    if not s.power_arrival:
        return
    types = s.catalog.by_id()
    pue_of = {b.id: s.arrival_pue_in(b.id) for b in s.site.buildings}  # a structure may have its own
    row_pue = {row: pue_of[ref.building] for row, ref in m.ix.rows.items()}
    drawn = {  # a rack's kW with its back-end network (none on a designed fabric)
        (t, g): s.rack_power_kw(types[t]) + (0.0 if m.groups[g].head.fabrics else s.allowance_kw(types[t]))
        for t, g in {(key.rack_type, key.group) for key in m.n}
    }
    for p in range(m.from_phase, m.horizon + 1):
        available = s.power_available_kw(p)
        fixed = sum(row_pue[row] * kw for row, kw in m.fixed_at(p).items())
        fixed += sum(row_pue[row] * kw for row, kw in m.fixed_net_at(p).items())  # installed racks' network
        items = [
            (var, round(row_pue[key.cls.row] * drawn[key.rack_type, key.group], 9)) for key, var in m.upto(p)
        ]
        items += [  # designed-fabric switches and transceivers standing in p, charged to rows
            (var, round(row_pue[row] * c, 9)) for row, fab in m.fabric_at(p).items() for var, c in fab
        ]
        lhs = pulp.LpAffineExpression(items)
        m.add_limit(LimitKey("power_arrival", "region", phase=m.ph(p)), lhs, available - fixed, "kW", fixed)
