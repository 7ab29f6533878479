"""Build stage: scenario → MILP (PuLP), one ``add_<family>_constraints`` per constraint family.

**Keys.** Every variable and limit is keyed by a typed key (:class:`ClassKey`,
:class:`CountKey`, :class:`ScopeKey`, :class:`LimitKey`) and named from it with
:func:`lp_name` (``n(R01@2,grand~teton~h100,train~gt)``, ``power_n1(BW~B1|UPS~A)``):
names read back to site elements and never collide, because IDs are escaped
one-to-one ('~' for '-', '!' for ':', characters no ID may hold).

**Aggregation.** Positions of one row within one cable-length band are
interchangeable (same feeds, zones, pod, limits, link class), so the model has
an integer count per (position class, rack type, cluster group)

    n[k, t, G] ∈ {0, …, size_k},

created only where t is allowed for G and fits k (power, weight, floor load,
cooling medium, cable reach). With ``aggregate=False`` every position is its
own class and n is binary (the per-position formulation, kept for comparison).
Concrete positions are filled afterwards, nearest the pod's network rack first.

**Cluster groups.** Clusters that are identical for the model (same demand and
GPU count, rack types, hop scope, storage and HBM need, and one GPU count per
rack that divides the demand) form one group G of k members: the model decides
how many members z[G, s] ∈ {0, …, k} are homed in each pod or building s and
how many racks G has where; the fill step deals racks out to the members (each
member's share of a scope is exact, since every rack holds the same number of
GPUs and that number divides the demand). A group of one is a plain cluster
(z is then the binary choice of its scope). This keeps the pod-scoped model of
many identical clusters at classes × rack types instead of classes × clusters,
with the same optimum (property-tested against ``group_clusters=False``).

**Fixed load.** Every pod's network rack (a catalog rack type) stands at its
position in every plan: its power counts on its row's feeds and its heat in
its row's zones, as constants on the right-hand sides.

Nothing from PuLP leaves the build/solve stages: :class:`Model` holds the
problem for :mod:`planner.solving`, which returns plain values.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import NamedTuple

import pulp

from planner.costs import annuity, facility_usd, opex_usd_per_year, rack_capex_usd, rack_cost
from planner.enums import Objective, Scope
from planner.kpis import network_racks
from planner.power_model import PowerModel, power_model
from planner.schema import Cluster, Demand, Scenario
from planner.site_index import SiteIndex, fits, index_site

# ------------------------------------------------------------------ keys and names


class ClassKey(NamedTuple):
    """A position class: a row and a cable-length band (the position index when not aggregated)."""

    row: str
    band: int


class CountKey(NamedTuple):
    """A count variable: racks of one type for one cluster group in one position class."""

    cls: ClassKey
    rack_type: str
    group: str


class ScopeKey(NamedTuple):
    """Members of a cluster group homed in one pod or building."""

    group: str
    scope: str


class LimitKey(NamedTuple):
    """A capacity limit: its family, the element it limits and, for N-1 limits, the failed node."""

    family: str
    ident: str
    failed: str = ""


def _esc(text: str) -> str:
    return str(text).replace("-", "~").replace(":", "!")


def lp_name(family: str, *parts: object) -> str:
    """``family(part,part,…)`` with IDs escaped one-to-one (module docstring)."""
    return f"{family}({','.join(_esc(str(p)) for p in parts)})"


def class_label(k: ClassKey) -> str:
    """``row@band`` (used in names and messages)."""
    return f"{k.row}@{k.band}"


# ------------------------------------------------------------------ model objects


@dataclass
class PositionClass:
    """Interchangeable positions of one row and one cable-length band."""

    key: ClassKey
    positions: list[tuple[float, int]]
    """(cable length m, position index), nearest first."""
    link: dict[str, str | None]
    """Rack type → link class it uses here (absent if the type cannot reach)."""
    cable_m: dict[str, float] = field(default_factory=dict)
    """Rack type → mean cable length here, m."""

    @property
    def row(self) -> str:
        return self.key.row

    @property
    def size(self) -> int:
        """Number of positions."""
        return len(self.positions)


@dataclass
class ClusterGroup:
    """Clusters the model treats as one (module docstring); ``members`` in scenario order."""

    id: str
    members: list[Cluster]
    scope: Scope
    gpu_types: list[str]
    storage_type: str | None

    @property
    def k(self) -> int:
        return len(self.members)

    @property
    def head(self) -> Cluster:
        return self.members[0]


@dataclass
class Limit:
    """A named ≤ constraint mapped back to the site: family, element, unit, right-hand side."""

    key: LimitKey
    name: str
    unit: str
    limit: float
    lhs: pulp.LpAffineExpression
    kind: str
    """What is limited, in the plan's utilisation terms (power_node, cooling_zone, pod_gpus, ...)."""
    fixed: float = 0.0
    """Part of the capacity taken by fixed load (network racks), already off ``limit``."""

    @property
    def family(self) -> str:
        return self.key.family

    @property
    def ident(self) -> str:
        return self.key.ident

    @property
    def failed(self) -> str:
        return self.key.failed


@dataclass
class Model:
    """A built MILP and the maps from its pieces back to the site."""

    scenario: Scenario
    ix: SiteIndex
    prob: pulp.LpProblem
    classes: dict[ClassKey, PositionClass]
    groups: dict[str, ClusterGroup]
    pm: PowerModel
    n: dict[CountKey, pulp.LpVariable] = field(default_factory=dict)
    group_kw: dict[str, pulp.LpVariable] = field(default_factory=dict)
    """Feed group → its racks' load P_g, kW."""
    node_kw: dict[str, pulp.LpVariable] = field(default_factory=dict)
    """Power node → its normal-operation load L_v (only nodes with N-1 limits), kW."""
    z: dict[ScopeKey, pulp.LpVariable] = field(default_factory=dict)
    exprs: dict[str, pulp.LpAffineExpression] = field(default_factory=dict)
    """Named expressions: gpus, pflops, capex_usd, it_kw, cable_usd, cable_m, gpus:<group>."""
    limits: dict[LimitKey, Limit] = field(default_factory=dict)
    fixed_row_kw: dict[str, float] = field(default_factory=dict)
    """Fixed load per row (network racks), kW."""
    fixed_heat: dict[str, float] = field(default_factory=dict)
    """Fixed heat per cooling zone (network racks), kW."""
    aggregate: bool = True
    objective_name: str = ""
    """What the model's objective is, in words (the scenario's objective, or the elastic one)."""
    elastic: bool = False
    """Give every capacity limit a slack (for explaining infeasibility)."""
    slack: dict[LimitKey, pulp.LpVariable] = field(default_factory=dict)

    @property
    def size(self) -> dict[str, int]:
        """Variables, integer variables and constraints."""
        variables = self.prob.variables()
        ints = sum(1 for v in variables if v.cat == pulp.LpInteger)
        return {"variables": len(variables), "integers": ints, "constraints": self.prob.numConstraints()}

    def var(self, name: str, low: float | None = 0, up: float | None = None, integer: bool = False) -> pulp.LpVariable:
        return self.prob.add_variable(name, lowBound=low, upBound=up, cat=pulp.LpInteger if integer else pulp.LpContinuous)

    def add(self, constraint: pulp.LpConstraint, name: str) -> None:
        self.prob.addConstraint(constraint, name)


# ------------------------------------------------------------------ classes and groups


def _bands(scenario: Scenario) -> list[float]:
    """Cable-length band edges: every link-class reach and every rack's max_cable_m."""
    edges = {c.max_length_m for c in scenario.site.fabric.link_classes}
    edges |= {t.max_cable_m for t in scenario.catalog.rack_types if t.max_cable_m is not None}
    return sorted(edges)


def position_classes(scenario: Scenario, ix: SiteIndex, aggregate: bool = True) -> dict[ClassKey, PositionClass]:
    """Group every free position into classes (see module docstring)."""
    edges = _bands(scenario)
    types = scenario.catalog.rack_types
    spots = ix.pod_locations()
    out: dict[ClassKey, PositionClass] = {}
    for rid, ref in ix.rows.items():
        groups: dict[int, list[tuple[float, int]]] = defaultdict(list)
        reserved = set(ref.row.reserved)
        for i in range(ref.row.positions):
            if i in reserved or (rid, i) in spots:
                continue
            length = ix.cable_length_m(rid, i)
            band = bisect.bisect_left(edges, length - 1e-9)
            groups[band if aggregate else i].append((length, i))
        for g, pos in sorted(groups.items()):
            pos.sort()
            key = ClassKey(rid, g)
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
            out[key] = PositionClass(key, pos, link, cable)
    return out


def cluster_groups(scenario: Scenario, group: bool = True) -> dict[str, ClusterGroup]:
    """Clusters in groups of identical ones (module docstring); every cluster alone if ``group`` is false."""
    types = scenario.catalog.by_id()
    buckets: dict[tuple, list[Cluster]] = {}
    order: list[tuple] = []
    for c in scenario.clusters:
        scope = scenario.scope_of(c)
        gpu_types = scenario.gpu_types_for(c)
        sizes = {types[t].gpus for t in gpu_types if types[t].gpus}
        groupable = group and scope != Scope.rack and len(sizes) == 1 and (c.gpus is None or c.gpus % next(iter(sizes)) == 0)
        sig = (c.demand, c.gpus, tuple(gpu_types), scope, c.storage_racks, c.storage_rack_type) if groupable else ("alone", c.id)
        if sig not in buckets:
            buckets[sig] = []
            order.append(sig)
        buckets[sig].append(c)
    out: dict[str, ClusterGroup] = {}
    for sig in order:
        members = buckets[sig]
        head = members[0]
        gid = head.id if len(members) == 1 else f"{head.id}+{len(members) - 1}"
        storage = head.storage_rack_type if head.storage_racks > 0 else None
        out[gid] = ClusterGroup(gid, members, scenario.scope_of(head), scenario.gpu_types_for(head), storage)
    return out


# ---------------------------------------------------------------- families


def _limit(m: Model, key: LimitKey, kind: str, lhs: pulp.LpAffineExpression, limit: float, unit: str, fixed: float = 0.0) -> None:
    """Add lhs ≤ limit (with a slack in an elastic model) and record it."""
    name = lp_name(key.family, key.ident, *([key.failed] if key.failed else []))
    if m.elastic:
        s = m.var(lp_name("slack_" + key.family, key.ident, *([key.failed] if key.failed else [])))
        m.slack[key] = s
        m.add(lhs - s <= limit, name)
    else:
        m.add(lhs <= limit, name)
    m.limits[key] = Limit(key, name, unit, float(limit), lhs, kind, float(fixed))


def add_count_variables(m: Model) -> None:
    """n[k, t, G] for every class k, group G and type t allowed for G (its GPU types, and its
    storage type when it asks for storage racks) that fits k: integer 0…size_k."""
    types = m.scenario.catalog.by_id()
    for k, cls in m.classes.items():
        fitting = {t for t in cls.link if fits(m.scenario, m.ix, cls.row, types[t])}
        for g in m.groups.values():
            wanted = [*g.gpu_types, *([g.storage_type] if g.storage_type else [])]
            for t in wanted:
                if t in fitting:
                    up = None if m.elastic else cls.size
                    m.n[CountKey(k, t, g.id)] = m.var(lp_name("n", class_label(k), t, g.id), 0, up, integer=True)


def add_space_constraints(m: Model) -> None:
    """Space: Σ_{t,G} n[k,t,G] ≤ size_k for every class k."""
    by_class: dict[ClassKey, list[pulp.LpVariable]] = defaultdict(list)
    for key, var in m.n.items():
        by_class[key.cls].append(var)
    for k, vars_ in by_class.items():
        if len(vars_) > 1 or m.elastic:
            _limit(m, LimitKey("space", class_label(k)), "row_positions", pulp.lpSum(vars_), m.classes[k].size, "positions")


def add_group_load_definitions(m: Model) -> None:
    """Feed-group load: P_g = Σ_{k in rows of g, t, G} n[k,t,G] · p_t (kW), p_t the planning power of t."""
    terms: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    types = m.scenario.catalog.by_id()
    for key, var in m.n.items():
        terms[m.pm.group_of_row[key.cls.row]].append((var, round(m.scenario.rack_power_kw(types[key.rack_type]), 9)))
    for g, items in terms.items():
        p = m.var(lp_name("load", g))
        m.group_kw[g] = p
        m.add(pulp.LpAffineExpression(items) - p == 0, lp_name("load_def", g))


def add_power_constraints(m: Model) -> None:
    """Power, normal and N-1 (coefficients from :mod:`planner.power_model`), F the fixed loads:

    normal:   Σ_g a_0(v,g) · P_g ≤ usable_v − Σ_g a_0(v,g) · F_g   (through L_v where v has N-1 limits);
    N-1:      L_v + Σ_{g hit by f} δ_f(v,g) · P_g ≤ usable_v − Σ_g a_0(v,g) F_g − Σ_g δ_f(v,g) F_g;
    a redundant group that some single failure leaves without feeds gets P_g = 0."""
    pm = m.pm
    fixed = pm.fixed_by_group(m.fixed_row_kw)
    with_n1 = {c.node for c in pm.contingencies if any(g in m.group_kw for g in c.delta)}
    for v, coef in pm.normal.items():
        items = [(m.group_kw[g], a) for g, a in coef.items() if g in m.group_kw]
        if not items:
            continue
        expr = pulp.LpAffineExpression(items)
        if v in with_n1:
            lv = m.var(lp_name("node_load", v))
            m.node_kw[v] = lv
            m.add(expr - lv == 0, lp_name("node_load_def", v))
            expr = pulp.LpAffineExpression([(lv, 1.0)])
        f0 = pm.fixed_normal(v, fixed)
        _limit(m, LimitKey("power", v), "power_node", expr, pm.usable_kw[v] - f0, "kW", f0)
    for c in pm.contingencies:
        items = [(m.group_kw[g], d) for g, d in c.delta.items() if g in m.group_kw]
        if not items or c.node not in m.node_kw:
            continue
        f1 = pm.fixed_normal(c.node, fixed) + pm.fixed_delta(c, fixed)
        _limit(m, LimitKey("power_n1", c.node, c.failed), "power_node", pulp.LpAffineExpression([(m.node_kw[c.node], 1.0), *items]), pm.usable_kw[c.node] - f1, "kW", f1)
    for g, failed in pm.forced_empty.items():
        if g in m.group_kw:
            _limit(m, LimitKey("redundant", g, failed), "row_redundant", pulp.LpAffineExpression([(m.group_kw[g], 1.0)]), 0.0, "kW")


def add_cooling_constraints(m: Model) -> None:
    """Cooling: Σ n · p_t · (1 − lf_t) over rows of air zone z ≤ cap_z − fixed heat, and
    Σ n · p_t · lf_t over rows of liquid loop z ≤ cap_z − fixed heat; cap = (units − redundant) × unit kW."""
    types = m.scenario.catalog.by_id()
    heat: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    for key, var in m.n.items():
        row = m.ix.rows[key.cls.row].row
        rt = types[key.rack_type]
        air, liquid = rt.heat_kw(m.scenario.rack_power_kw(rt))
        if air > 0:
            heat[row.air_zone].append((var, round(air, 9)))
        if liquid > 0 and row.liquid_loop:
            heat[row.liquid_loop].append((var, round(liquid, 9)))
    for z, items in heat.items():
        zone = m.ix.zones[z]
        f0 = m.fixed_heat.get(z, 0.0)
        _limit(m, LimitKey("cooling", z), "cooling_zone", pulp.LpAffineExpression(items), zone.capacity_kw - f0, "kW", f0)


def add_pod_constraints(m: Model) -> None:
    """Pods: Σ n · gpus_t over the pod's rows ≤ max_gpus; Σ n ≤ max_racks."""
    types = m.scenario.catalog.by_id()
    gpus: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    racks: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    for key, var in m.n.items():
        pod = m.ix.rows[key.cls.row].row.pod
        if types[key.rack_type].gpus:
            gpus[pod].append((var, types[key.rack_type].gpus))
        racks[pod].append((var, 1.0))
    for pod, items in gpus.items():
        _limit(m, LimitKey("pod_gpus", pod), "pod_gpus", pulp.LpAffineExpression(items), m.ix.pods[pod].max_gpus, "GPUs")
    for pod, items in racks.items():
        cap = m.ix.pods[pod].max_racks
        if cap is not None:
            _limit(m, LimitKey("pod_racks", pod), "pod_racks", pulp.LpAffineExpression(items), cap, "racks")


def _scope_of(m: Model, row_id: str, scope: Scope) -> str:
    """The pod or building a row belongs to."""
    ref = m.ix.rows[row_id]
    return ref.row.pod if scope == Scope.pod else ref.building


def add_cluster_constraints(m: Model) -> None:
    """Clusters, per group G of k members with demand d each (module docstring):

    site scope:   exact Σ GPUs = k·d; at_least ≥ k·d; max ≤ k·d (if d given); storage racks = k·s;
    pod/building: z[G,s] ∈ {0…k} members homed in scope s, Σ_s z = k (exact, at_least) or ≤ k (max);
                  GPUs in s = d·z (exact), ≥ d·z and ≤ ports_s·z (at_least), ≤ min(d, ports_s)·z (max);
                  racks in s ≤ R·z, R the most racks one member takes there; storage racks in s = s_c·z;
    rack scope:   one rack per cluster (k = 1)."""
    s = m.scenario
    types = s.catalog.by_id()
    for g in m.groups.values():
        head = g.head
        d, k = head.gpus, g.k
        mine = [(key, var) for key, var in m.n.items() if key.group == g.id]
        gpu_terms = [(var, types[key.rack_type].gpus) for key, var in mine if types[key.rack_type].gpus]
        store = [var for key, var in mine if g.storage_type and key.rack_type == g.storage_type]
        gpus = pulp.LpAffineExpression(gpu_terms)
        if g.scope in (Scope.site, Scope.rack):
            if head.demand == Demand.exact:
                m.add(gpus == k * d, lp_name("demand", g.id))
            elif head.demand == Demand.at_least:
                m.add(gpus >= k * d, lp_name("demand", g.id))
            elif d is not None:
                _limit(m, LimitKey("demand_cap", g.id), "demand_cap", gpus, k * d, "GPUs")
            if g.storage_type:
                m.add(pulp.lpSum(store) == k * head.storage_racks, lp_name("storage", g.id))
            if g.scope == Scope.rack:
                m.add(pulp.lpSum(var for _, var in mine if var not in store) <= 1, lp_name("one_rack", g.id))
            continue
        by_scope: dict[str, list[tuple[CountKey, pulp.LpVariable]]] = defaultdict(list)
        for key, var in mine:
            by_scope[_scope_of(m, key.cls.row, g.scope)].append((key, var))
        racks_cap: dict[str, int] = defaultdict(int)
        for cls in m.classes.values():
            racks_cap[_scope_of(m, cls.row, g.scope)] += cls.size
        ports: dict[str, int] = defaultdict(int)
        for pid, pod in m.ix.pods.items():
            ports[pid if g.scope == Scope.pod else m.ix.halls[m.ix.pod_hall[pid]][0]] += pod.max_gpus
        gpu_sizes = [types[t].gpus for t in g.gpu_types if types[t].gpus]
        per_member_racks = None
        if d is not None and head.demand != Demand.at_least and gpu_sizes:
            per_member_racks = math.ceil(d / min(gpu_sizes)) + head.storage_racks
        zs = []
        for sid, items in sorted(by_scope.items()):
            z = m.var(lp_name("z", g.id, sid), 0, k, integer=True)
            m.z[ScopeKey(g.id, sid)] = z
            zs.append(z)
            big = racks_cap[sid]
            if g.scope == Scope.pod and m.ix.pods[sid].max_racks is not None:
                big = min(big, m.ix.pods[sid].max_racks + head.storage_racks)
            if per_member_racks is not None:
                big = min(big, per_member_racks)
            big_gpus = ports[sid] if d is None or head.demand == Demand.at_least else min(ports[sid], d)
            if m.elastic:  # space and ports may be exceeded by their slack: bound by the demand instead
                need = d or 0
                big += need + head.storage_racks
                big_gpus = max(big_gpus, need) + ports[sid]
            racks = pulp.lpSum(var for _, var in items)
            g_s = pulp.LpAffineExpression([(var, types[key.rack_type].gpus) for key, var in items if types[key.rack_type].gpus])
            m.add(racks - big * z <= 0, lp_name("scope_racks", g.id, sid))
            if head.demand == Demand.exact:
                m.add(g_s - d * z == 0, lp_name("scope_gpus", g.id, sid))
            else:
                m.add(g_s - big_gpus * z <= 0, lp_name("scope_gpus", g.id, sid))
                if head.demand == Demand.at_least:
                    m.add(g_s - d * z >= 0, lp_name("scope_demand", g.id, sid))
            if g.storage_type:
                st = pulp.lpSum(var for key, var in items if key.rack_type == g.storage_type)
                m.add(st - head.storage_racks * z == 0, lp_name("scope_storage", g.id, sid))
        total = pulp.lpSum(zs)
        if head.demand in (Demand.exact, Demand.at_least):
            m.add(total == k, lp_name("homes", g.id))
        else:
            m.add(total <= k, lp_name("homes", g.id))


def add_budget_constraints(m: Model) -> None:
    """Budgets: capex = Σ n · rack capex (planner.costs) ≤ capex_usd; IT power of placed racks Σ_g P_g ≤ it_power_kw."""
    b = m.scenario.budgets
    if b.capex_usd is not None:
        _limit(m, LimitKey("budget", "capex_usd"), "budget", m.exprs["capex_usd"], b.capex_usd, "USD")
    if b.it_power_kw is not None:
        _limit(m, LimitKey("budget", "it_power_kw"), "budget", m.exprs["it_kw"], b.it_power_kw, "kW")


# ---------------------------------------------------------------- assembly


def _expressions(m: Model) -> None:
    """Named expressions (planner.costs for every money figure): gpus, pflops, capex_usd (equipment
    + facility, plus the network racks' facility as a constant), tco_usd, it_kw, cable_usd, cable_m."""
    s = m.scenario
    types = s.catalog.by_id()
    classes = {c.id: c for c in s.site.fabric.link_classes}
    fabric = s.site.fabric.cost_usd_per_gpu
    e: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    for key, var in m.n.items():
        rt = types[key.rack_type]
        cls = m.classes[key.cls]
        lc = cls.link.get(key.rack_type)
        link = classes[lc] if lc else None
        kw = s.rack_power_kw(rt)
        cost = rack_cost(rt, kw, link, fabric, s.costs, s.pue)
        e["gpus"].append((var, rt.gpus))
        e[f"gpus:{key.group}"].append((var, rt.gpus))
        e["pflops"].append((var, rt.pflops_bf16))
        e["capex_usd"].append((var, cost.capex_usd))
        e["tco_usd"].append((var, cost.tco_usd))
        e["it_kw"].append((var, kw))
        e["cable_usd"].append((var, rack_capex_usd(rt, link, 0.0) - rt.capex_usd))
        e["cable_m"].append((var, rt.links * cls.cable_m.get(key.rack_type, 0.0)))
    m.exprs = {name: pulp.LpAffineExpression([(v, round(c, 9)) for v, c in items if c]) for name, items in e.items()}
    for key in ("gpus", "pflops", "capex_usd", "tco_usd", "it_kw", "cable_usd", "cable_m"):
        m.exprs.setdefault(key, pulp.LpAffineExpression())
    net_kw = sum(s.rack_power_kw(t) for _, _, t in network_racks(s))
    net_facility = facility_usd(net_kw, s.costs)
    m.exprs["capex_usd"].constant = round(net_facility, 6)
    m.exprs["tco_usd"].constant = round(net_facility + opex_usd_per_year(net_kw, 0.0, s.costs, s.pue) * annuity(0.0, s.costs.horizon_years, s.costs.discount_rate), 6)
    for g in m.groups:
        m.exprs.setdefault(f"gpus:{g}", pulp.LpAffineExpression())


def _fixed_loads(m: Model) -> None:
    """Every pod's network rack: its planning power on its row, its heat in its row's zones."""
    for _, row_id, t in network_racks(m.scenario):
        kw = m.scenario.rack_power_kw(t)
        m.fixed_row_kw[row_id] = m.fixed_row_kw.get(row_id, 0.0) + kw
        row = m.ix.rows[row_id].row
        air, liquid = t.heat_kw(kw)
        m.fixed_heat[row.air_zone] = m.fixed_heat.get(row.air_zone, 0.0) + air
        if liquid and row.liquid_loop:
            m.fixed_heat[row.liquid_loop] = m.fixed_heat.get(row.liquid_loop, 0.0) + liquid


OBJECTIVES = {Objective.max_gpus: "gpus", Objective.max_pflops: "pflops", Objective.min_capex: "capex_usd", Objective.min_tco: "tco_usd"}
"""Objective → the named expression it optimises (sense from :attr:`Objective.maximise`)."""


def build(scenario: Scenario, aggregate: bool = True, elastic: bool = False, group_clusters: bool = True) -> Model:
    """Build stage: the MILP of a validated scenario (families in this module).

    ``elastic``: every capacity limit gets a slack and the objective becomes
    min Σ slack / max(limit, 1); demands stay hard (used by :mod:`planner.explainer`).
    ``group_clusters``: model identical clusters as one group (module docstring).
    """
    ix = index_site(scenario.site)
    objective = Objective(scenario.objective)
    sense = pulp.LpMaximize if objective.maximise and not elastic else pulp.LpMinimize
    prob = pulp.LpProblem("plan", sense)
    m = Model(
        scenario, ix, prob, position_classes(scenario, ix, aggregate), cluster_groups(scenario, group_clusters and not elastic),
        power_model(ix), aggregate=aggregate, elastic=elastic,
        objective_name="least relative slack" if elastic else objective.value,
    )
    _fixed_loads(m)
    add_count_variables(m)
    _expressions(m)
    add_space_constraints(m)
    add_group_load_definitions(m)
    add_power_constraints(m)
    add_cooling_constraints(m)
    add_pod_constraints(m)
    add_cluster_constraints(m)
    add_budget_constraints(m)
    if elastic:
        prob.setObjective(pulp.lpSum(m.slack[k] * (1.0 / max(m.limits[k].limit, 1.0)) for k in m.slack))
    else:
        prob.setObjective(m.exprs[OBJECTIVES[objective]])
    return m
