"""The most GPUs each building can hold, proved one building at a time: rows of the packing bound
(:mod:`planner.scale.packing`) and the estimates of the pairs (:mod:`planner.scale.pairs`).

The packing bound counts a building's room resource by resource (power of its feed groups, heat of
its zones, positions, pod limits), each summed over the building; where the resources bind row by
row and feed by feed (a distributed-redundant hall whose busways and UPS share their load after a
failure, racks that come in whole units), the building holds less than every sum allows. For
building b take the one-building scenario with a single "as many as fit" cluster that may use
every GPU rack type of the fleet, may stand anywhere in b (max_hops 100) and has the least
failover factor φ₀ of the fleet's clusters. Any plan's racks in b, all given to that cluster, meet
its every row: power rows are nonnegative in φ, so φ₀ is the loosest, and what the one cluster does
not have (figures, hop and spread limits, storage, site budgets, the grid) only removes rows. So
the MILP bound B_b it proves bounds the GPUs of any plan in b:

    Σ_k g[k,b] ≤ ⌊B_b⌋,   and per type set S of a cluster:   Σ_{k: T_k ⊆ S} g[k,b] ≤ ⌊B_b(S)⌋

(B_b(S): the one cluster on the types of S only). Buildings alike up to their names (each name
inside starting with the building's ID) are solved once. Solved without a first incumbent (a MIP
start can end in an "optimal" HiGHS never proved); a building without a proven bound in its time
has no row. Not for phases or installed racks."""

from __future__ import annotations

import json
import math

from planner.clock import Deadline
from planner.enums import FailoverPolicy
from planner.errors import InputError
from planner.input.loader import scenario_from_data
from planner.input.variants import scenario_data
from planner.plan.pipeline import plan_scenario
from planner.scale.proposals import building_data
from planner.schema import Scenario

Most = dict[tuple[str, tuple[str, ...]], int]
"""(building, type set, sorted) → the most GPUs of those types it holds."""
CLUSTER = "building-most"
"""The one cluster's ID in each building's scenario."""


def type_sets(scenario: Scenario) -> list[tuple[str, ...]]:
    """Every GPU rack type of the fleet together, then each cluster's own set: each sorted."""
    own = sorted({tuple(sorted(scenario.gpu_types_for(c))) for c in scenario.clusters})
    every = tuple(sorted({t for s in own for t in s}))
    return [every, *(s for s in own if s != every)]


def building_most(scenario: Scenario, deadline: Deadline) -> Most:
    """(building, type set, sorted) → ⌊B⌋, the most GPUs of those types the building holds (module
    docstring; the one cluster may use the set's types), for what is solved before ``deadline``:
    every building for all the fleet's types first, then each cluster's own set (:func:`type_sets`).
    Each solve may take the time left (most take hundredths of a second, but the pipeline's own
    reserves want about a second of limit to start its solver); those left when it is up are not
    solved."""
    if scenario.phases or scenario.existing or not scenario.clusters:
        return {}
    data = scenario_data(scenario)
    loosest = min(scenario.clusters, key=lambda c: FailoverPolicy(c.on_power_failure).factor(c.cap_ratio))
    alike: dict[str, list[str]] = {}
    first: dict[str, dict] = {}
    for b in data["site"]["buildings"]:
        sig = json.dumps(_anonymous(b, b["id"]), sort_keys=True)
        alike.setdefault(sig, []).append(b["id"])
        first.setdefault(sig, b)
    jobs = [(sig, types) for types in type_sets(scenario) for sig in alike]
    out: Most = {}
    for sig, types in jobs:
        each = deadline.left()
        if each < 0.1:
            break
        cluster = {
            "id": CLUSTER,
            "demand": "max",
            "rack_types": list(types),
            "max_hops": 100,
            "on_power_failure": FailoverPolicy(loosest.on_power_failure).value,
            "cap_ratio": loosest.cap_ratio,
        }
        sub = building_data(data, first[sig], [cluster], f"{scenario.name}-{first[sig]['id']}-most")
        sub["solver"] = {**sub.get("solver", {}), "rel_gap": 1e-4}
        try:
            plan = plan_scenario(
                scenario_from_data(sub), time_limit_s=each, tie_breaks=False, warm_start=False
            )
        except InputError:
            continue
        if plan.bound is not None and math.isfinite(plan.bound):
            out.update({(b, types): int(math.floor(plan.bound + 1e-6)) for b in alike[sig]})
    return out


def _anonymous(value, bid: str):
    """A building's data with its own ID taken out of every name (module docstring)."""
    if isinstance(value, dict):
        return {k: _anonymous(v, bid) for k, v in value.items()}
    if isinstance(value, list):
        return [_anonymous(v, bid) for v in value]
    if isinstance(value, str) and (value == bid or value.startswith(bid + "-")):
        return "@" + value[len(bid) :]
    return value
