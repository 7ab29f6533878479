"""The packing bound: a small MILP over (cluster kind, building) whose optimum no plan exceeds, for
max_gpus scenarios whose fleets hold many firm jobs that do not divide a pod (where the LP
relaxation of the whole model, and the merged relaxation, are several per cent above the optimum).

Clusters alike in rack types T, scope, demand, figure d and failover factor φ form a kind k of m_k
clusters. With R_u(T, φ) the room of a pod, building or the site (:class:`planner.model.room_proof.
ScopeRooms`: space, each feed group's power, each zone's heat, pod ports; an upper bound on the GPUs
of types T standing there in any plan) and φ₀ the least factor of all clusters (the largest room):

    n[k,b] ∈ {0 … W[k,b]}   clusters of kind k in building b (one pod or one building each)
        W[k,b] = Σ_{p∈b} ⌊R_p(T_k, φ_k) ÷ d_k⌋   (firm, pod scope)   ⌊R_b(T_k, φ_k) ÷ d_k⌋  (firm, building)
                 m_k   otherwise
    g[k,b]  GPUs:   d_k·n (exact);   d_k·n ≤ g ≤ M·n (at least);   g ≤ min(d_k, M)·n (as many as fit)
        M = max_{p∈b} R_p(T_k, φ_k) (pod scope), R_b(T_k, φ_k) (building scope)
    Σ_b n[k,b] = m_k (exact, at least), ≤ m_k (as many as fit)
    site-scope kinds: g[k,b] ≤ R_b(T_k, φ_k) and Σ_b g = m_k·d_k (exact), ≥ (at least), ≤ (as many)
    room:   Σ_{k: T_k ⊆ S} g[k,b] ≤ min(R_b(S, φ₀), B_b(S))
            Σ_b Σ_{k: T_k ⊆ S} g[k,b] ≤ R_site(S, φ₀)
    pods:   Σ_{k firm, pod scope, T_k ⊆ S, d_k ≥ t} n[k,b] ≤ Σ_{p∈b} ⌊R_p(S, φ₀) ÷ t⌋
    use:    Σ_k u_r(T_k) · g[k,b] ≤ C_r,b   for each resource r of building b
    max Σ g

for every type set S of the fleet (and all types together) and every firm size t, with B_b(S) the
most GPUs of types S building b was proved to hold (:mod:`planner.scale.building_most`; infinite
where not solved). Each row holds for the counts of any plan: a one-pod cluster of at least d
stands in one pod, which holds at most ⌊R_p ÷ t⌋ clusters of at least t GPUs of types in S; so the
MILP's proven dual bound bounds every plan.

The use rows see what the rooms, one type set at a time, cannot: kinds on different types sharing
a building. The resources of b: its feed groups' power (C = Σ_g K_g at φ₀, u = min_t kW_t ÷ G_t),
its air zones' and liquid loops' heat (C = Σ_z H_z, u = min_t heat_t ÷ G_t), its GPU rows'
positions (C = their count, u = min_t width_t ÷ G_t) and its pods' rack limits (C = Σ_p racks_p,
u = 1 ÷ max_t G_t); a GPU of kind k uses at least u_r(T_k) of r whichever of its types it stands
on, so each row holds for any plan (a resource without a finite capacity in b has no row).

Not for phases, installed racks, designed fabrics or other objectives (None)."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass

import pulp

from planner.enums import Demand, FailoverPolicy, Objective, Scope
from planner.model.room_proof import ScopeRooms
from planner.scale.building_most import Most
from planner.schema import Scenario
from planner.solving.backends import SolveRequest, from_name

SOURCE = "the packing relaxation"
"""The bound's source, in words."""


@dataclass(frozen=True)
class Kind:
    """Clusters alike for the bound: rack types, scope, demand, figure, failover factor."""

    types: tuple[str, ...]
    scope: Scope
    demand: Demand
    gpus: int | None
    factor: float

    @property
    def firm(self) -> bool:
        return self.demand in (Demand.exact, Demand.at_least) and bool(self.gpus)


def packing_bound(scenario: Scenario, time_limit_s: float, most: Most | None = None) -> float | None:
    """The packing MILP's proven bound (module docstring), rounded down to whole GPUs; None where it
    does not apply, when the solver proves no bound in time, or when the MILP is infeasible
    (:func:`packing_infeasible`). ``most``: (building, type set) → the most GPUs of those types
    it holds (:mod:`planner.scale.building_most`), a cap on that room row."""
    res = _solved(scenario, time_limit_s, most)
    if res is None or res.infeasible or res.bound is None or not math.isfinite(res.bound):
        return None
    return float(math.floor(res.bound + 1e-6))


def packing_infeasible(scenario: Scenario, time_limit_s: float) -> bool:
    """Whether the solver proves the packing MILP infeasible in the time: then no plan meets every
    demand, for the counts of any plan would solve it."""
    res = _solved(scenario, time_limit_s)
    return res is not None and res.infeasible


def _solved(scenario: Scenario, time_limit_s: float, most: Most | None = None):
    """The packing MILP solved by HiGHS (its result), or None where it does not apply."""
    if (
        Objective(scenario.objective) != Objective.max_gpus
        or scenario.phases
        or scenario.existing
        or any(c.fabrics for c in scenario.clusters)
        or not scenario.clusters
    ):
        return None
    prob = _Packing(scenario, most).problem()
    return from_name("highs").solve(SolveRequest(prob, prob.objective, True, max(0.1, time_limit_s), 1e-4))


class _Packing:
    """The packing MILP of one scenario (module docstring)."""

    def __init__(self, scenario: Scenario, most: Most | None = None) -> None:
        self.s, self.most = scenario, most or {}
        self.rooms = ScopeRooms(scenario)
        self.kinds: Counter[Kind] = Counter()
        for c in scenario.clusters:
            scope = scenario.scope_of(c)
            self.kinds[
                Kind(
                    tuple(scenario.gpu_types_for(c)),
                    Scope.pod if scope == Scope.rack else scope,
                    Demand(c.demand),
                    c.gpus,
                    FailoverPolicy(c.on_power_failure).factor(c.cap_ratio),
                )
            ] += 1
        self.floor = min(k.factor for k in self.kinds)
        self.sets = sorted(
            {k.types for k in self.kinds} | {tuple(sorted({t for k in self.kinds for t in k.types}))}
        )
        self.buildings = sorted(set(self.rooms.building_of.values()))
        self.pods_of: dict[str, list[str]] = defaultdict(list)
        for pod, b in self.rooms.building_of.items():
            self.pods_of[b].append(pod)
        self.prob = pulp.LpProblem("packing", pulp.LpMaximize)
        self.n: dict[tuple[int, str], pulp.LpVariable] = {}
        self.g: dict[tuple[int, str], pulp.LpAffineExpression] = {}

    def room(self, types: tuple[str, ...], factor: float, kind: str, unit: str = "") -> int:
        return self.rooms.of(types, factor).get((kind, unit), (0, ""))[0]

    def problem(self) -> pulp.LpProblem:
        for i, (k, m) in enumerate(self.kinds.items()):
            if k.scope == Scope.site:
                self._spanning(i, k, m)
            else:
                self._bound_to_one(i, k, m)
        self._room_rows()
        self._pod_rows()
        self._use_rows()
        self.prob += pulp.lpSum(self.g.values())
        return self.prob

    def _spanning(self, i: int, k: Kind, m: int) -> None:
        """A site-scope kind: GPUs per building within its room; the figure over the site."""
        parts = []
        for b in self.buildings:
            r = self.room(k.types, k.factor, "building", b)
            if r > 0:
                v = self.prob.add_variable(f"q_{i}_{b}", lowBound=0, upBound=r)
                self.g[i, b] = pulp.LpAffineExpression(v)
                parts.append(v)
        if k.gpus is None:
            return
        total, want = pulp.lpSum(parts), m * k.gpus
        self.prob += (
            (total == want)
            if k.demand == Demand.exact
            else (total >= want if k.demand == Demand.at_least else total <= want),
            f"demand_{i}",
        )

    def _bound_to_one(self, i: int, k: Kind, m: int) -> None:
        """A kind whose clusters each stand in one pod or one building: whole clusters per building."""
        counts = []
        for b in self.buildings:
            pods = [self.room(k.types, k.factor, "pod", p) for p in self.pods_of[b]]
            whole = self.room(k.types, k.factor, "building", b)
            most = max(pods, default=0) if k.scope == Scope.pod else whole
            if most <= 0 or (k.firm and k.gpus > most):
                continue
            if k.firm:
                fits = sum(r // k.gpus for r in pods) if k.scope == Scope.pod else whole // k.gpus
            else:
                fits = m
            n = self.prob.add_variable(f"n_{i}_{b}", lowBound=0, upBound=min(m, fits), cat=pulp.LpInteger)
            self.n[i, b] = n
            counts.append(n)
            if k.demand == Demand.exact:
                self.g[i, b] = k.gpus * pulp.LpAffineExpression(n)
                continue
            q = self.prob.add_variable(f"g_{i}_{b}", lowBound=0, upBound=whole)
            top = most if k.demand == Demand.at_least or k.gpus is None else min(k.gpus, most)
            self.prob += q <= top * n, f"most_{i}_{b}"
            if k.demand == Demand.at_least:
                self.prob += q >= k.gpus * n, f"least_{i}_{b}"
            self.g[i, b] = pulp.LpAffineExpression(q)
        total = pulp.lpSum(counts)
        self.prob += (total <= m) if k.demand == Demand.max else (total == m), f"demand_{i}"

    def _room_rows(self) -> None:
        """Per type set: the GPUs of its kinds within each building's room and the site's."""
        kinds = list(self.kinds)
        for si, S in enumerate(self.sets):
            mine = [i for i, k in enumerate(kinds) if set(k.types) <= set(S)]
            everywhere = []
            for b in self.buildings:
                here = [self.g[i, b] for i in mine if (i, b) in self.g]
                if here:
                    most = self.most.get((b, tuple(sorted(S))), math.inf)
                    cap = min(self.room(S, self.floor, "building", b), most)
                    self.prob += pulp.lpSum(here) <= cap, f"room_{si}_{b}"
                    everywhere.extend(here)
            if everywhere:
                self.prob += pulp.lpSum(everywhere) <= self.room(S, self.floor, "site"), f"site_{si}"

    def _pod_rows(self) -> None:
        """Per type set, building and firm size t: one-pod clusters of at least t within the pods."""
        kinds = list(self.kinds)
        for si, S in enumerate(self.sets):
            firm = [
                (i, k)
                for i, k in enumerate(kinds)
                if k.firm and k.scope == Scope.pod and set(k.types) <= set(S)
            ]
            for t in sorted({k.gpus for _, k in firm}):
                big = [i for i, k in firm if k.gpus >= t]
                for b in self.buildings:
                    ns = [self.n[i, b] for i in big if (i, b) in self.n]
                    if not ns:
                        continue
                    cap = sum(self.room(S, self.floor, "pod", p) // t for p in self.pods_of[b])
                    if cap < sum(n.upBound for n in ns):
                        self.prob += pulp.lpSum(ns) <= cap, f"pods_{si}_{t}_{b}"

    def _use_rows(self) -> None:
        """Per building and resource: the least use of each kind's GPUs within its capacity."""
        caps = _capacities(self.rooms, self.floor)
        least = {
            (i, r): _least_use(self.rooms, k.types, r)
            for i, k in enumerate(self.kinds)
            for r in ("power", "air", "liquid", "racks", "positions")
        }
        for b in self.buildings:
            for r, cap in sorted(caps.get(b, {}).items()):
                terms = [least[i, r] * self.g[i, b] for i in range(len(self.kinds)) if (i, b) in self.g]
                if terms and math.isfinite(cap):
                    self.prob += pulp.lpSum(terms) <= cap, f"use_{r}_{b}"


def _capacities(rooms: ScopeRooms, factor: float) -> dict[str, dict[str, float]]:
    """Building → resource ("power", "air", "liquid", "racks", "positions") → its capacity there
    (module docstring): kW for power and heat, racks for the pods' rack limits, positions; infinite
    where a part of the building has no stated limit."""
    ix, room = rooms.ix, rooms.room
    kw = room.group_kw(factor)
    parts: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    positions: dict[str, int] = defaultdict(int)
    for cls in rooms.classes:
        ref = ix.rows[cls.row]
        b = ref.building
        positions[b] += cls.size
        parts[b]["power"].add(room.pm.group_of_row.get(cls.row, ""))
        parts[b]["air"].add(ref.row.air_zone or "")
        parts[b]["liquid"].add(ref.row.liquid_loop or "")
        parts[b]["racks"].add(ref.row.pod)
    out: dict[str, dict[str, float]] = {}
    for b, by in parts.items():
        racks = [ix.pods[p].max_racks for p in by["racks"]]
        out[b] = {
            "power": sum(kw.get(g, math.inf) if g else math.inf for g in by["power"]),
            "air": sum(room.zone_kw(z) if z else math.inf for z in by["air"]),
            "liquid": sum(room.zone_kw(z) if z else math.inf for z in by["liquid"]),
            "racks": math.inf if None in racks else float(sum(racks)),
            "positions": float(positions[b]),
        }
    return out


def _least_use(rooms: ScopeRooms, type_ids: tuple[str, ...], resource: str) -> float:
    """u_r(T): the least of resource r one GPU of the types uses (module docstring)."""
    s = rooms.scenario
    per = []
    for t in (rooms.types[t] for t in type_ids if rooms.types[t].gpus > 0):
        kw = s.rack_power_kw(t)
        use = {
            "power": kw,
            "air": t.heat_kw(kw)[0],
            "liquid": t.heat_kw(kw)[1],
            "racks": 1.0,
            "positions": float(t.width),
        }[resource]
        per.append(use / t.gpus)
    return min(per, default=0.0)
