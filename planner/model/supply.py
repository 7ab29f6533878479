"""Rack supply (§17): racks of a type placed by a phase fit what has been delivered by then."""

from __future__ import annotations

import math

import pulp

from planner.enums import LimitKind
from planner.model.core import Model
from planner.model.fabric import add_fabric_constraints
from planner.model.keys import LimitKey
from planner.model.phases import add_count_variables
from planner.model.registry import LimitRows, declare


def relax_supply(data: dict, scenario, idents: set[str], step: float) -> tuple[list[str], float | None]:
    """More allocated: ``rack type@phase`` (the type alone without phases) gets step × its supply by
    then (at least one rack) in that phase; ``switch:<model>`` step × the switches delivered (at least
    one)."""
    order = scenario.phase_at
    steps = []
    for ident in idents:
        if ident.startswith("switch:"):
            model = ident.removeprefix("switch:")
            have = sum(x["count"] for x in data["switch_supply"] if x["switch"] == model)
            more = max(1, math.ceil(step * have))
            data["switch_supply"].append({"switch": model, "count": more})
            steps.append(f"+{more:,} more {model} switches allocated")
            continue
        t, _, ph = ident.partition("@")
        more = max(1, math.ceil(step * (scenario.supply_upto(t, order.get(ph, 0)) or 0)))
        data["supply"].append({"rack_type": t, **({"phase": ph} if ph else {}), "racks": more})
        steps.append(f"{ph + ': ' if ph else ''}+{more:,} more {t} racks allocated")
    return steps, None


@declare(
    "supply",
    needs=(add_count_variables, add_fabric_constraints),
    limits={"supply": LimitRows(LimitKind.supply, relax_supply)},
)
def add_supply_constraints(m: Model) -> None:
    """For every rack type t the scenario supplies and every phase p this model decides:

        Σ_{k, G, q ≤ p} n[k,t,G,q] ≤ Σ_{q ≤ p} S[t,q] − E[t,p]

    with S the racks delivered per phase (a multi-rack unit counts one) and E the racks of t an
    earlier rolling step placed by p (installed racks with a phase; racks installed before the
    plan were delivered before it). Named ``supply(grand-teton-h100,q2)``. Designed fabrics (single
    phase): per switch model M the scenario supplies, Σ every switch of M the fabrics need (leaves,
    in GPU racks too, spines, cores, border and region switches) ≤ Σ delivered, ``supply(switch!qm9700)``."""
    s = m.scenario
    for t in sorted({x.rack_type for x in s.supply}):
        for p in range(m.from_phase, m.horizon + 1):
            items = [(var, 1) for key, var in m.placed_upto(p) if key.rack_type == t]
            if not items:
                continue
            used = sum(
                1
                for r in s.existing
                if r.rack_type == t and r.phase is not None and m.tl.index.get(r.phase, 0) <= p
            )
            cap = s.supply_upto(t, p) or 0
            m.add_limit(
                LimitKey("supply", t, phase=m.ph(p)),
                pulp.LpAffineExpression(items),
                cap - used,
                "racks",
                used,
            )
    for model in sorted(
        {x.switch for x in s.switch_supply}
    ):  # designed fabrics: single-phase, one limit per model
        need = m.switch_need.get(model)
        if need:
            cap = sum(x.count for x in s.switch_supply if x.switch == model)
            m.add_limit(LimitKey("supply", switch_ident(model)), pulp.lpSum(need), cap, "switches")


def switch_ident(model: str) -> str:
    """The element a switch supply limit is named by: ``switch:<model>`` (rack types go by their ID)."""
    return f"switch:{model}"
