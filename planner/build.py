"""Build stage: scenario → MILP (PuLP), one ``add_<family>_constraints`` per family.

Aggregation: positions are grouped into *classes* of interchangeable positions:
same row (so same feeds, zones, pod and per-rack limits) and same cable-length
band (so every rack type gets the same link class). The decision variables are
integer counts

    n[k, t, c] ∈ {0, …, size_k}   racks of type t for cluster c in class k,

created only where t is allowed for c and fits class k (power, weight,
cooling medium, cable reach). With ``aggregate=False`` each position is its own
class and n is binary: the per-position formulation kept for comparison.
Concrete positions are filled afterwards, nearest the pod first (:func:`fill`).

Nothing from PuLP leaves the build/solve stages: :class:`Model` holds the
problem for :mod:`planner.solve`, which returns domain objects.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass, field

import pulp

from planner.enums import Objective
from planner.power_model import power_model
from planner.schema import Demand, RackType, Scenario
from planner.site_index import SiteIndex, index_site
from planner.verify import cluster_scope


@dataclass
class PositionClass:
    """Interchangeable positions of one row and one cable-length band."""

    key: str
    row: str
    positions: list[tuple[float, int]]
    """(cable length m, position index), nearest first."""
    link: dict[str, str | None]
    """Rack type → link class it uses here (absent if the type cannot reach)."""
    cable_m: dict[str, float] = field(default_factory=dict)
    """Rack type → mean cable length here, m."""

    @property
    def size(self) -> int:
        """Number of positions."""
        return len(self.positions)


@dataclass
class Limit:
    """A named ≤ constraint mapped back to the site: family, element, unit, right-hand side."""

    family: str
    element: str
    unit: str
    limit: float
    lhs: pulp.LpAffineExpression
    kind: str = ""
    """What is limited, in the plan's utilisation terms (power_node, cooling_zone, pod_gpus, ...)."""
    ident: str = ""
    """ID of the limited element."""


@dataclass
class Model:
    """A built MILP and the maps from its pieces back to the site."""

    scenario: Scenario
    ix: SiteIndex
    prob: pulp.LpProblem
    classes: dict[str, PositionClass]
    n: dict[tuple[str, str, str], pulp.LpVariable]
    row_kw: dict[str, pulp.LpVariable]
    exprs: dict[str, pulp.LpAffineExpression]
    """Named expressions: gpus, pflops, capex_usd, it_kw, cable_usd, cable_m, per-cluster gpus."""
    limits: dict[str, Limit] = field(default_factory=dict)
    """Constraint name → the limit it states, for explain and reports."""
    aggregate: bool = True
    objective_name: str = ""
    """What the model's objective is, in words (the scenario's objective, or the elastic one)."""
    elastic: bool = False
    """Give every capacity limit a slack (for explaining infeasibility)."""
    slack: dict[str, pulp.LpVariable] = field(default_factory=dict)
    y: dict[tuple[str, str], pulp.LpVariable] = field(default_factory=dict)
    """(cluster, pod or building) → binary choosing the cluster's one scope."""

    @property
    def size(self) -> dict[str, int]:
        """Variables, integer variables and constraints."""
        ints = sum(1 for v in self.prob.variables() if v.cat == pulp.LpInteger)
        return {"variables": len(self.prob.variables()), "integers": ints, "constraints": self.prob.numConstraints()}


# ------------------------------------------------------------------ classes


def _bands(scenario: Scenario) -> list[float]:
    """Cable-length band edges: every link-class reach and every rack's max_cable_m."""
    edges = {c.max_length_m for c in scenario.site.fabric.link_classes}
    edges |= {t.max_cable_m for t in scenario.catalog.rack_types if t.max_cable_m is not None}
    return sorted(edges)


def fits(scenario: Scenario, ix: SiteIndex, row_id: str, t: RackType) -> bool:
    """Row-level fit: planning power ≤ max_rack_power_kw, weight ≤ max_rack_weight_kg,
    liquid-cooled types only in rows with a liquid loop."""
    row = ix.rows[row_id].row
    return (
        scenario.rack_power_kw(t) <= row.max_rack_power_kw + 1e-9
        and t.weight_kg <= row.max_rack_weight_kg + 1e-9
        and (t.liquid_fraction == 0 or row.liquid_loop is not None)
    )


def position_classes(scenario: Scenario, ix: SiteIndex, aggregate: bool = True) -> dict[str, PositionClass]:
    """Group every free position into classes (see module docstring)."""
    edges = _bands(scenario)
    types = scenario.catalog.rack_types
    spots = ix.pod_locations()
    out: dict[str, PositionClass] = {}
    for rid, ref in ix.rows.items():
        groups: dict[int, list[tuple[float, int]]] = defaultdict(list)
        for i in range(ref.row.positions):
            if i in ref.row.reserved or (rid, i) in spots:
                continue
            length = ix.cable_length_m(rid, i)
            band = bisect.bisect_left(edges, length - 1e-9)
            groups[band if aggregate else i].append((length, i))
        for g, pos in sorted(groups.items()):
            pos.sort()
            key = f"{rid}#{g}"
            link: dict[str, str | None] = {}
            cable: dict[str, float] = {}
            for t in types:
                if t.links == 0:
                    link[t.id] = None
                    cable[t.id] = 0.0
                    continue
                lc = ix.link_class_for(t, pos[-1][0])
                if lc is not None:
                    link[t.id] = lc.id
                    cable[t.id] = sum(p[0] for p in pos) / len(pos)
            out[key] = PositionClass(key, rid, pos, link, cable)
    return out


# ---------------------------------------------------------------- families


def add_space_constraints(m: Model) -> None:
    """Space: Σ_{t,c} n[k,t,c] ≤ size_k for every class k."""
    by_class: dict[str, list[pulp.LpVariable]] = defaultdict(list)
    for (k, _, _), var in m.n.items():
        by_class[k].append(var)
    for k, vars_ in by_class.items():
        if len(vars_) > 1 or m.elastic:
            _limit(m, "space", f"row {m.classes[k].row}", pulp.lpSum(vars_), m.classes[k].size, "positions", ("row_positions", m.classes[k].row))


def add_row_load_definitions(m: Model) -> None:
    """Row load: P_r = Σ_{k in r, t, c} n[k,t,c] · p_t (kW), p_t the planning power of t."""
    terms: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    types = m.scenario.catalog.by_id()
    for (k, t, _), var in m.n.items():
        terms[m.classes[k].row].append((var, m.scenario.rack_power_kw(types[t])))
    for row, items in terms.items():
        p = m.prob.add_variable(f"P_{len(m.row_kw)}", lowBound=0)
        m.row_kw[row] = p
        m.prob += (pulp.LpAffineExpression(items) - p == 0, f"rowload_{len(m.row_kw)}")


def add_power_constraints(m: Model) -> None:
    """Power, normal and N-1: Σ_r a_s(v, r) · P_r ≤ derate_v · capacity_v for every node v
    and state s (normal, or one can_fail node failed), with a_s from :mod:`planner.power_model`;
    a redundant row that some single failure leaves without feeds gets P_r = 0."""
    pm = power_model(m.ix)
    for lim in pm.limits:
        items = [(m.row_kw[r], a) for r, a in lim.coef.items() if r in m.row_kw]
        if not items:
            continue
        family = "power" if lim.failed is None else "power N-1"
        element = lim.node if lim.failed is None else f"{lim.node} when {lim.failed} fails"
        _limit(m, family, element, pulp.LpAffineExpression(items), lim.limit_kw, "kW", ("power_node", lim.node))
    for row, failed in pm.forced_empty.items():
        if row in m.row_kw:
            _limit(m, "power N-1", f"{row} (redundant) when {failed} fails", pulp.LpAffineExpression([(m.row_kw[row], 1.0)]), 0.0, "kW", ("row_redundant", row))


def add_cooling_constraints(m: Model) -> None:
    """Cooling: Σ n · p_t · (1 − lf_t) over rows of air zone z ≤ cap_z, and
    Σ n · p_t · lf_t over rows of liquid loop z ≤ cap_z; cap = (units − redundant) × unit kW."""
    types = m.scenario.catalog.by_id()
    heat: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    for (k, t, _), var in m.n.items():
        row = m.ix.rows[m.classes[k].row].row
        rt = types[t]
        kw = m.scenario.rack_power_kw(rt)
        if rt.liquid_fraction < 1:
            heat[row.air_zone].append((var, kw * (1 - rt.liquid_fraction)))
        if rt.liquid_fraction > 0 and row.liquid_loop:
            heat[row.liquid_loop].append((var, kw * rt.liquid_fraction))
    for z, items in heat.items():
        zone = m.ix.zones[z]
        _limit(m, "cooling", f"{z} ({zone.medium})", pulp.LpAffineExpression(items), zone.capacity_kw, "kW", ("cooling_zone", z))


def add_pod_constraints(m: Model) -> None:
    """Pods: Σ n · gpus_t over the pod's rows ≤ max_gpus; Σ n ≤ max_racks."""
    types = m.scenario.catalog.by_id()
    gpus: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    racks: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    for (k, t, _), var in m.n.items():
        pod = m.ix.rows[m.classes[k].row].row.pod
        if types[t].gpus:
            gpus[pod].append((var, types[t].gpus))
        racks[pod].append((var, 1.0))
    for pod, items in gpus.items():
        _limit(m, "pod GPUs", pod, pulp.LpAffineExpression(items), m.ix.pods[pod].max_gpus, "GPUs", ("pod_gpus", pod))
    for pod, items in racks.items():
        cap = m.ix.pods[pod].max_racks
        if cap is not None:
            _limit(m, "pod racks", pod, pulp.LpAffineExpression(items), cap, "racks", ("pod_racks", pod))


def _scope_of(m: Model, row_id: str, scope: str) -> str:
    """The pod or building a row belongs to."""
    ref = m.ix.rows[row_id]
    return ref.row.pod if scope == "pod" else ref.building


def add_cluster_constraints(m: Model) -> None:
    """Clusters: G_c = Σ n[·,t,c] · gpus_t; exact: G_c = gpus; at_least: G_c ≥ gpus;
    max: G_c ≤ gpus if given. Scope from max_hops: pick one pod (or building) with
    binaries y[c,s], Σ_s y[c,s] ≤ 1, Σ n[k,·,c] over k in s ≤ M_s · y[c,s] with M_s the most
    racks s holds, and Σ gpus_t · n[k,t,c] over k in s ≤ min(GPU ports of s, cap of c) · y[c,s]
    (the same rule in GPUs, which keeps the LP relaxation tight); scope rack: Σ n[·,·,c] ≤ 1."""
    s = m.scenario
    for c in s.clusters:
        g = m.exprs[f"gpus:{c.id}"]
        if c.demand == Demand.exact:
            m.prob += (g == c.gpus, f"demand_{_safe(c.id)}")
        elif c.demand == Demand.at_least:
            m.prob += (g >= c.gpus, f"demand_{_safe(c.id)}")
        elif c.gpus is not None:
            _limit(m, "demand cap", c.id, g, c.gpus, "GPUs", ("demand_cap", c.id))
        scope = cluster_scope(s, c.max_hops)
        types = s.catalog.by_id()
        mine = [(k, types[t].gpus, var) for (k, t, cc), var in m.n.items() if cc == c.id]
        if scope == "rack":
            m.prob += (pulp.lpSum(v for _, _, v in mine) <= 1, f"scope_{_safe(c.id)}")
        if scope not in ("pod", "building"):
            continue

        groups: dict[str, list[tuple[int, pulp.LpVariable]]] = defaultdict(list)
        for k, gpus, var in mine:
            groups[_scope_of(m, m.classes[k].row, scope)].append((gpus, var))
        racks_cap: dict[str, int] = defaultdict(int)
        for cls in m.classes.values():
            racks_cap[_scope_of(m, cls.row, scope)] += cls.size
        ports: dict[str, int] = defaultdict(int)
        for pid, pod in m.ix.pods.items():
            ports[pid if scope == "pod" else m.ix.halls[m.ix.pod_hall[pid]][0]] += pod.max_gpus
        gpu_cap = c.gpus if c.demand != Demand.at_least and c.gpus is not None else None
        ys = []
        for sid, items in sorted(groups.items()):
            y = m.prob.add_variable(f"y_{_safe(c.id)}_{_safe(sid)}", cat=pulp.LpBinary)
            m.y[c.id, sid] = y
            ys.append(y)
            big = racks_cap[sid]
            if scope == "pod" and m.ix.pods[sid].max_racks is not None:
                big = min(big, m.ix.pods[sid].max_racks)
            big_gpus = min(ports[sid], gpu_cap) if gpu_cap is not None else ports[sid]
            if m.elastic:  # space and ports may be exceeded by their slack: bound by the demand instead
                need = c.gpus or 0
                big += need
                big_gpus = max(big_gpus, need) + ports[sid]
            m.prob += (pulp.lpSum(v for _, v in items) - big * y <= 0, f"scope_{_safe(c.id)}_{_safe(sid)}")
            m.prob += (pulp.lpSum(g * v for g, v in items if g) - big_gpus * y <= 0, f"scopegpu_{_safe(c.id)}_{_safe(sid)}")
        if len(ys) > 1:
            m.prob += (pulp.lpSum(ys) <= 1, f"onescope_{_safe(c.id)}")


def add_budget_constraints(m: Model) -> None:
    """Budgets: capex = Σ n · (capex_t + gpus_t · fabric_usd_per_gpu + links_t · link_usd_k,t) ≤ capex_usd;
    IT power = Σ_r P_r ≤ it_power_kw."""
    b = m.scenario.budgets
    if b.capex_usd is not None:
        _limit(m, "budget", "capex_usd", m.exprs["capex_usd"], b.capex_usd, "USD", ("budget", "capex_usd"))
    if b.it_power_kw is not None:
        _limit(m, "budget", "it_power_kw", m.exprs["it_kw"], b.it_power_kw, "kW", ("budget", "it_power_kw"))


# ---------------------------------------------------------------- assembly


def _safe(text: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in text)


def _limit(m: Model, family: str, element: str, lhs: pulp.LpAffineExpression, limit: float, unit: str, what: tuple[str, str]) -> None:
    name = f"c{len(m.limits)}"
    if m.elastic:
        s = m.prob.add_variable(f"s{len(m.limits)}", lowBound=0)
        m.slack[name] = s
        m.prob += (lhs - s <= limit, name)
    else:
        m.prob += (lhs <= limit, name)
    m.limits[name] = Limit(family, element, unit, float(limit), lhs, what[0], what[1])


def _variables(m: Model) -> None:
    s = m.scenario
    types = s.catalog.by_id()
    for k, cls in m.classes.items():
        for c in s.clusters:
            for t in c.rack_types:
                if t in cls.link and fits(s, m.ix, cls.row, types[t]):
                    m.n[k, t, c.id] = m.prob.add_variable(
                        f"n_{len(m.n)}", lowBound=0, upBound=None if m.elastic else cls.size,
                        cat=pulp.LpInteger if cls.size > 1 or m.elastic else pulp.LpBinary,
                    )


def _expressions(m: Model) -> None:
    s = m.scenario
    types = s.catalog.by_id()
    link_cost = {c.id: c.cost_usd_per_link for c in s.site.fabric.link_classes}
    fabric = s.site.fabric.cost_usd_per_gpu
    e: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    for (k, t, c), var in m.n.items():
        rt = types[t]
        cls = m.classes[k]
        lc = cls.link.get(t)
        cable_usd = rt.links * link_cost[lc] if lc else 0.0
        e["gpus"].append((var, rt.gpus))
        e[f"gpus:{c}"].append((var, rt.gpus))
        e["pflops"].append((var, rt.pflops_bf16))
        e["capex_usd"].append((var, rt.capex_usd + rt.gpus * fabric + cable_usd))
        e["it_kw"].append((var, s.rack_power_kw(rt)))
        e["cable_usd"].append((var, cable_usd))
        e["cable_m"].append((var, rt.links * cls.cable_m.get(t, 0.0)))
    m.exprs = {name: pulp.LpAffineExpression([x for x in items if x[1]]) for name, items in e.items()}
    for key in ("gpus", "pflops", "capex_usd", "it_kw", "cable_usd", "cable_m"):
        m.exprs.setdefault(key, pulp.LpAffineExpression())
    for c in s.clusters:
        m.exprs.setdefault(f"gpus:{c.id}", pulp.LpAffineExpression())


OBJECTIVES = {Objective.max_gpus: "gpus", Objective.max_pflops: "pflops", Objective.min_capex: "capex_usd"}
"""Objective → the named expression it optimises (sense from :attr:`Objective.maximise`)."""


def build(scenario: Scenario, aggregate: bool = True, elastic: bool = False) -> Model:
    """Build stage: the MILP of a validated scenario (families in this module).

    ``elastic``: every capacity limit gets a slack and the objective becomes
    min Σ slack / max(limit, 1); demands stay hard (used by :mod:`planner.explain`).
    """
    ix = index_site(scenario.site)
    objective = Objective(scenario.objective)
    expr_name = OBJECTIVES[objective]
    sense = pulp.LpMaximize if objective.maximise and not elastic else pulp.LpMinimize
    prob = pulp.LpProblem(_safe(scenario.name) or "plan", sense)
    m = Model(scenario, ix, prob, position_classes(scenario, ix, aggregate), {}, {}, {}, aggregate=aggregate, elastic=elastic,
              objective_name="least relative slack" if elastic else objective.value)
    _variables(m)
    _expressions(m)
    if not elastic:
        prob.setObjective(m.exprs[expr_name])
    add_space_constraints(m)
    add_row_load_definitions(m)
    add_power_constraints(m)
    add_cooling_constraints(m)
    add_pod_constraints(m)
    add_cluster_constraints(m)
    add_budget_constraints(m)
    if elastic:
        prob.setObjective(pulp.lpSum(m.slack[n] * (1.0 / max(m.limits[n].limit, 1.0)) for n in m.slack))
    return m
