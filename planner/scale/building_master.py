"""The coordinating MILP of the decomposition by building: it shares each cluster group's GPUs (or whole
clusters) out to the buildings by their proposals (:mod:`planner.scale.decompose`)."""

from __future__ import annotations

import math

import pulp

from planner.enums import Objective
from planner.scale.proposals import (
    Group,
    Proposal,
)
from planner.schema import Demand, Scenario
from planner.solving.backends import SolveRequest, from_name
from planner.solving.core import evaluate

# ------------------------------------------------------------------ master


Shares = tuple[dict[tuple[str, str], float], dict[tuple[str, str], int], dict[str, dict[str, float]]]
"""GPUs and whole clusters per (group, building), estimated use per building ({"kw", "capex"})."""


def _master(
    scenario: Scenario,
    groups: list[Group],
    buildings: list[str],
    props: dict[tuple[str, str], Proposal],
    time_limit_s: float,
    keep: dict[tuple[str, str], int] | None = None,
    resources: dict[str, dict[str, float]] | None = None,
) -> Shares | None:
    """The coordinating MILP (module docstring), or None without a solution. ``resources``: per
    building the power and heat its GPU rows hold (:func:`planner.scale.proposals.building_resources`).
    ``keep``: whole
    clusters a (group, building) hosts at least (what a building whose share solved holds stays
    there; later rounds move only what did not fit). Without site budgets, groups and buildings
    that share no proposal are independent: each connected part is its own MILP, given the time
    limit in proportion to its (group, building) pairs."""
    budgeted = scenario.budgets.it_power_kw is not None or scenario.budgets.capex_usd is not None
    parts = [(groups, buildings)] if budgeted else _parts(groups, buildings, props)
    pairs = [sum(1 for g in gs for b in bs if (g.id, b) in props) for gs, bs in parts]
    got: Shares = ({}, {}, {})
    for (gs, bs), n in zip(parts, pairs, strict=True):
        one = _master_part(
            scenario, gs, bs, props, time_limit_s * n / max(1, sum(pairs)), keep, resources or {}
        )
        if one is None:
            return None
        for into, more in zip(got, one, strict=True):
            into.update(more)  # type: ignore[attr-defined]
    for b in buildings:  # a building no group has room in uses nothing
        got[2].setdefault(b, {"kw": 0.0, "capex": 0.0})
    return got


def _parts(
    groups: list[Group], buildings: list[str], props: dict[tuple[str, str], Proposal]
) -> list[tuple[list[Group], list[str]]]:
    """Groups and buildings in connected parts: a group joins every building it has room in."""
    root: dict[str, str] = {}

    def find(x: str) -> str:
        while root.setdefault(x, x) != x:
            root[x] = root[root[x]]
            x = root[x]
        return x

    for g in groups:
        for b in buildings:
            if (p := props.get((g.id, b))) is not None and p.cap > 0:
                root[find("g:" + g.id)] = find("b:" + b)
    parts: dict[str, tuple[list[Group], list[str]]] = {}
    for g in groups:
        parts.setdefault(find("g:" + g.id), ([], []))[0].append(g)
    for b in buildings:
        parts.setdefault(find("b:" + b), ([], []))[1].append(b)
    return [(gs, bs) for gs, bs in parts.values() if gs]


def _master_part(
    scenario: Scenario,
    groups: list[Group],
    buildings: list[str],
    props: dict[tuple[str, str], Proposal],
    time_limit_s: float,
    keep: dict[tuple[str, str], int] | None,
    resources: dict[str, dict[str, float]],
) -> Shares | None:
    """The MILP of one part of the master (module docstring)."""
    objective = Objective(scenario.objective)
    prob = pulp.LpProblem("master", pulp.LpMaximize if objective.maximise else pulp.LpMinimize)
    gpus: dict[tuple[str, str], pulp.LpAffineExpression] = {}
    counts: dict[tuple[str, str], pulp.LpAffineExpression] = {}
    for gi, g in enumerate(groups):
        _master_group(prob, gi, g, buildings, props, gpus, counts, keep or {})
    media = _media(scenario, groups)
    for bi, b in enumerate(buildings):
        _one_big_per_pod(prob, bi, b, groups, props, counts)
        mine = [g for g in groups if (g.id, b) in gpus]
        for mi, part in enumerate(_media_parts(media, mine, bool(resources.get(b)))):
            share = [gpus[g.id, b] * (1.0 / props[g.id, b].cap) for g in part]
            prob += pulp.lpSum(share) <= 1, f"capacity_{bi}_{mi}"
        for what, room in sorted(resources.get(b, {}).items()):  # what every group's racks share
            used = [
                gpus[g.id, b] * props[g.id, b].use[what] for g in mine if props[g.id, b].use.get(what, 0) > 0
            ]
            if used and math.isfinite(room):
                prob += pulp.lpSum(used) <= room, f"{what}_{bi}"
    use = {
        what: pulp.lpSum(
            gpus[g.id, b] * getattr(props[g.id, b], what)
            for g in groups
            for b in buildings
            if (g.id, b) in gpus
        )
        for what in ("kw", "capex")
    }
    prob += _master_objective(prob, scenario, objective, props, gpus, use)
    res = from_name("highs").solve(SolveRequest(prob, prob.objective, objective.maximise, time_limit_s, 1e-4))
    if res.values is None:
        return None
    values = res.values
    out = {k: max(0.0, evaluate(e, values)) for k, e in gpus.items()}
    whole = {k: int(round(evaluate(e, values))) for k, e in counts.items()}
    per_b = {
        b: {
            w: sum(out[g.id, b] * getattr(props[g.id, b], w) for g in groups if (g.id, b) in out)
            for w in ("kw", "capex")
        }
        for b in buildings
    }
    return out, whole, per_b


def _media(scenario: Scenario, groups: list[Group]) -> dict[str, frozenset[str]]:
    """Group → the cooling media of its rack types ("air", "liquid")."""
    types = scenario.catalog.by_id()
    return {
        g.id: frozenset("liquid" if types[t].liquid_fraction > 0 else "air" for t in g.types) for g in groups
    }


def _media_parts(media: dict[str, frozenset[str]], groups: list[Group], shared: bool) -> list[list[Group]]:
    """The groups whose rooms one capacity row shares pro rata: those on the same cooling media
    (:func:`_media`: air racks, liquid racks, or both) together. A group's room counts its own medium's racks
    alone, so groups on different media are held together only by the rows of what they share —
    power, heat, positions, ports and racks (``shared``: the building has those rows) — and air
    racks may stand in a liquid hall's positions its liquid racks leave. Without those rows, one
    row for all."""
    if not shared:
        return [groups] if groups else []
    parts: dict[frozenset[str], list[Group]] = {}
    for g in groups:
        parts.setdefault(media[g.id], []).append(g)
    return [parts[k] for k in sorted(parts, key=sorted)]


def _master_group(
    prob: pulp.LpProblem,
    gi: int,
    g: Group,
    buildings: list[str],
    props,
    gpus: dict,
    counts: dict,
    keep: dict[tuple[str, str], int],
) -> None:
    """One group's variables and demand row: GPUs per building for a spanning group; else whole
    clusters per building n (their GPUs d·n, or between them for at-least and as-many-as-fit)."""
    terms = []
    for bi, b in enumerate(buildings):
        p = props.get((g.id, b))
        if p is None or p.cap <= 0:
            continue
        if g.spanning:
            ub = p.cap if g.demand != Demand.max or g.gpus is None else min(p.cap, g.gpus)
            v = prob.add_variable(f"q_{gi}_{bi}", lowBound=0, upBound=ub)
            gpus[g.id, b] = pulp.LpAffineExpression(v)
            terms.append(gpus[g.id, b])
            continue
        ub = min(p.whole if g.demand != Demand.max else len(g.members), len(g.members))
        if ub <= 0:
            continue
        least = min(ub, keep.get((g.id, b), 0))
        n = prob.add_variable(f"n_{gi}_{bi}", lowBound=least, upBound=ub, cat=pulp.LpInteger)
        counts[g.id, b] = pulp.LpAffineExpression(n)
        gpus[g.id, b] = _gpus_of(prob, f"{gi}_{bi}", g, n, p.most or p.cap, p.cap)
        terms.append(n)
    total = pulp.lpSum(terms)
    want = len(g.members) if not g.spanning else g.gpus
    if want is None:
        return
    if g.demand == Demand.max:
        prob += total <= want, f"demand_{gi}"
    elif g.demand == Demand.at_least and g.spanning:
        prob += total >= want, f"demand_{gi}"
    else:
        prob += total == want, f"demand_{gi}"


def _gpus_of(prob: pulp.LpProblem, sfx: str, g: Group, n, most: float, cap: float) -> pulp.LpAffineExpression:
    """GPUs of ``n`` whole clusters of the group where one may take ``most`` and all ``cap``: d·n
    (exact), between d·n and most·n (at least), up to min(d, most)·n (as many as fit)."""
    if g.demand == Demand.max:
        q = prob.add_variable(f"q_{sfx}", lowBound=0, upBound=cap)
        prob += q <= (min(g.gpus, most) if g.gpus is not None else most) * n, f"fill_{sfx}"
        return pulp.LpAffineExpression(q)
    if g.demand == Demand.at_least and most > (g.gpus or 0):
        q = prob.add_variable(f"q_{sfx}", lowBound=0, upBound=cap)
        prob += q >= (g.gpus or 0) * n, f"least_{sfx}"
        prob += q <= most * n, f"grow_{sfx}"
        return pulp.LpAffineExpression(q)
    return (g.gpus or 0) * pulp.LpAffineExpression(n)


def _one_big_per_pod(prob: pulp.LpProblem, bi: int, b: str, groups: list[Group], props, counts) -> None:
    """A pod holds at most one cluster of more than half its room: over the one-pod groups big in
    building b (d > ½·max_k room[g,k]), Σ_g n[g,b] ≤ |pods any of them fits| (pro rata room alone
    would put two 60 % clusters in one pod)."""
    big, pods = [], set()
    for g in groups:
        p = props.get((g.id, b))
        if p is None or not p.pods or (g.id, b) not in counts or g.demand == Demand.max and g.gpus is None:
            continue
        if (g.gpus or 0) > 0.5 * max(p.pods.values()):
            big.append(counts[g.id, b])
            pods.update(k for k, v in p.pods.items() if v >= (g.gpus or 0))
    if len(big) > 1:
        prob += pulp.lpSum(big) <= len(pods), f"big_per_pod_{bi}"


def _master_objective(
    prob: pulp.LpProblem, scenario: Scenario, objective: Objective, props, gpus: dict, use: dict
):
    """The master's objective: GPUs (or the objective's figure per GPU) placed, less a penalty on
    elastic site budgets: the estimates may be off either way, and the fixed demands' true cost
    (wave 1) recalibrates them; an overrun costs more than any placement gains."""
    per = {"max_gpus": None, "max_pflops": "pflops", "min_capex": "capex", "min_tco": "tco"}[objective.value]
    obj = pulp.lpSum(e * (1.0 if per is None else getattr(props[k], per)) for k, e in gpus.items())
    top = max([1.0 if per is None else getattr(p, per) for p in props.values() if p.cap > 0] or [1.0])
    for w, cap in (("kw", scenario.budgets.it_power_kw), ("capex", scenario.budgets.capex_usd)):
        if cap is not None:
            least = min([getattr(p, w) for p in props.values() if p.cap > 0 and getattr(p, w) > 0] or [1.0])
            over = prob.add_variable(f"over_{w}", lowBound=0)
            prob += use[w] <= cap + over, f"budget_{w}"
            obj = obj - 1e3 * top / least * over if objective.maximise else obj + 1e3 * top / least * over
    return obj
