"""Bounds on a decomposed plan: the LP relaxation of the whole model, and a merged relaxation the
size of the scenario's rack-type mix (:mod:`planner.scale.decompose`)."""

from __future__ import annotations

import math

import pulp

from planner.clock import Deadline, TimeUp
from planner.enums import Demand, Objective, Scope
from planner.input.loader import scenario_from_data
from planner.input.variants import scenario_data
from planner.model import build
from planner.scale.proposals import groups_of, proposals
from planner.schema import Scenario
from planner.solving.backends import SolveRequest, from_name
from planner.solving.core import evaluate


def lp_bound(scenario: Scenario, time_limit_s: float) -> float | None:
    """Objective of the LP relaxation of the monolithic model, recomputed from the values the solver
    returns: a bound on any plan only when the LP was solved to optimality (a simplex stopped early
    gives a feasible point of the relaxation, no bound); none otherwise, or when building the model
    alone takes the time."""
    try:
        m = build(scenario, deadline=Deadline(time_limit_s))
    except TimeUp:
        return None
    res = from_name("highs").solve(
        SolveRequest(
            m.prob,
            m.prob.objective,
            m.prob.sense == pulp.LpMaximize,
            time_limit_s,
            0.0,
            relax_integrality=True,
        )
    )
    if res.values is None or not res.claims_optimal:
        return None
    return evaluate(m.prob.objective, res.values)


def merged(scenario: Scenario) -> Scenario | None:
    """A relaxation of a max_gpus / max_pflops scenario the size of its rack-type mix: clusters alike
    in rack types and power-failure policy merged into one that may stand anywhere (max_hops 7),
    wanting "as many as fit" up to what its members may take together: an exact or as-many-as-fit
    member its figure, an at-least or uncapped member the most its scope holds (the largest pod's
    room for one pod, the largest building's for one building, no cap for the site: see
    :func:`proposals`, whose room counts are upper bounds); spread limits, spares and storage
    dropped. Every plan of the scenario is a plan of the merged one (same racks, each counted to its
    merged cluster), so the merged LP optimum bounds every plan. None for other objectives, phases,
    installed racks or designed fabrics."""
    if (
        not Objective(scenario.objective).maximise
        or scenario.phases
        or scenario.existing
        or any(c.fabrics for c in scenario.clusters)
    ):
        return None
    data = scenario_data(scenario)
    buildings = [b.id for b in scenario.site.buildings]
    groups = groups_of(scenario, data)
    props = proposals(scenario, groups, buildings)
    room: dict[str, float | None] = {}
    for g in groups:
        if g.scope not in (Scope.rack, Scope.pod, Scope.building):
            most = None
        else:
            one = [
                (p.most if g.scope != Scope.building else p.cap)
                for b in buildings
                if (p := props.get((g.id, b))) is not None
            ]
            most = max(one, default=0.0)
        for c in g.members:
            room[c["id"]] = most
    buckets: dict[tuple, dict] = {}
    for c in scenario.clusters:
        key = (tuple(scenario.gpu_types_for(c)), str(c.on_power_failure), c.cap_ratio)
        b = buckets.setdefault(
            key,
            {
                "id": f"merged-{len(buckets) + 1}",
                "demand": "max",
                "rack_types": list(key[0]),
                "max_hops": 7,
                "on_power_failure": key[1],
                "cap_ratio": key[2],
                "gpus": 0,
            },
        )
        most = room.get(c.id)
        take = c.gpus if c.demand != Demand.at_least and c.gpus is not None else None
        if take is None or (most is not None and most < take):
            take = None if most is None else int(math.floor(most))
        b["gpus"] = None if b["gpus"] is None or take is None else b["gpus"] + take
    data["clusters"] = [{k: v for k, v in b.items() if v is not None} for b in buckets.values()]
    if any(c.get("gpus", 1) == 0 for c in data["clusters"]):
        data["clusters"] = [c for c in data["clusters"] if c.get("gpus", 1) > 0]
        if not data["clusters"]:
            return None
    return scenario_from_data(data)
