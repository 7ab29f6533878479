"""The constraint families in the order :func:`planner.model.build` adds them (each declared in its
own module with :func:`planner.model.registry.declare`; a family's needs must come before it, which
:func:`check_order` tests)."""

from __future__ import annotations

from planner.model.cooling import add_cooling_constraints
from planner.model.fabric import add_fabric_constraints
from planner.model.grid import add_energy_constraints, add_swing_constraints
from planner.model.network import add_cluster_constraints, add_pod_constraints
from planner.model.objective import add_budget_constraints, add_expressions
from planner.model.phases import add_count_variables, add_retrofit_gates, add_retrofit_variables
from planner.model.power import add_failover_loads, add_group_load_definitions, add_power_constraints
from planner.model.region import add_power_arrival_constraints
from planner.model.registry import Family, LimitRows, OrderError
from planner.model.rounding import add_rounding_cuts
from planner.model.space import add_fixed_loads, add_space_constraints
from planner.model.spread import add_spread_constraints
from planner.model.storage import add_storage_constraints
from planner.model.supply import add_supply_constraints

FAMILIES: tuple[Family, ...] = (
    add_fixed_loads,
    add_retrofit_variables,
    add_count_variables,
    add_pod_constraints,
    add_cluster_constraints,
    add_fabric_constraints,
    add_expressions,
    add_space_constraints,
    add_retrofit_gates,
    add_group_load_definitions,
    add_failover_loads,
    add_power_constraints,
    add_cooling_constraints,
    add_rounding_cuts,
    add_storage_constraints,
    add_spread_constraints,
    add_swing_constraints,
    add_energy_constraints,
    add_budget_constraints,
    add_power_arrival_constraints,
    add_supply_constraints,
)


def check_order(families: tuple[Family, ...]) -> None:
    """Raise :class:`OrderError` unless every family comes after the families it needs and names are
    unique."""
    seen: set[str] = set()
    for f in families:
        if f.name in seen:
            raise OrderError(f"two families are named {f.name}")
        late = [n.name for n in f.needs if n.name not in seen]
        if late:
            raise OrderError(f"the {f.name} family needs {', '.join(late)} first")
        seen.add(f.name)


def limit_rows(families: tuple[Family, ...] = FAMILIES) -> dict[str, LimitRows]:
    """Row-name prefix → its declared limit rows, over every family (one prefix, one kind)."""
    out: dict[str, LimitRows] = {}
    for f in families:
        for prefix, rows in f.limits.items():
            if prefix in out and out[prefix].kind != rows.kind:
                raise OrderError(f"limit rows {prefix} are declared as {out[prefix].kind} and {rows.kind}")
            out.setdefault(prefix, rows)
    return out


check_order(FAMILIES)
