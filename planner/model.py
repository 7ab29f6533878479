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

from planner.asks import spares_needed, storage_racks
from planner.costs import annuity, discount, facility_usd, opex_usd_per_year, phase_years, rack_capex_usd, rack_cost
from planner.enums import FailoverPolicy, Objective, RetrofitKind, Scope
from planner.power_model import PowerModel, power_model
from planner.schema import Cluster, Demand, Scenario
from planner.site_index import SiteIndex, fits, floor_load_kg_per_m2, index_site, network_racks
from planner.timeline import Timeline, timeline

# ------------------------------------------------------------------ keys and names


class ClassKey(NamedTuple):
    """A position class: a row and a cable-length band (the position index when not aggregated)."""

    row: str
    band: int


class CountKey(NamedTuple):
    """A count variable: racks of one type for one cluster group in one position class, added in
    one phase (None in a scenario without phases); ``role`` "spare" for its hot-spare racks."""

    cls: ClassKey
    rack_type: str
    group: str
    phase: str | None = None
    role: str = ""


class BuyKey(NamedTuple):
    """A retrofit bought in a phase."""

    retrofit: str
    phase: str | None


class ScopeKey(NamedTuple):
    """Members of a cluster group homed in one pod or building."""

    group: str
    scope: str


class LimitKey(NamedTuple):
    """A capacity limit: its family, the element it limits, for N-1 limits the failed node, and
    in phased scenarios the phase it holds in."""

    family: str
    ident: str
    failed: str = ""
    phase: str = ""


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
    spares: int = 0
    """Hot-spare racks per member (of its first GPU rack type, §11)."""

    @property
    def spare_type(self) -> str | None:
        return self.gpu_types[0] if self.spares and self.gpu_types else None

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
    tl: Timeline
    n: dict[CountKey, pulp.LpVariable] = field(default_factory=dict)
    group_kw: dict[str, pulp.LpVariable] = field(default_factory=dict)
    """Feed group (with its phase suffix in phased models) → its racks' load P_g, kW."""
    fabric_rows: dict[str, list[tuple[pulp.LpVariable, float]]] = field(default_factory=dict)
    """Network-rack row → (variable, kW) terms of the designed fabrics' power charged to it."""
    fabric_pick: dict[tuple[str, str], pulp.LpVariable] = field(default_factory=dict)
    """(cluster, design) → 1 when the cluster is built on that design (clusters with a choice)."""
    fabric_capex: pulp.LpAffineExpression | None = None
    """Designed fabrics' switches and links above the racks, USD."""
    group_eff: dict[str, pulp.LpAffineExpression] = field(default_factory=dict)
    """Feed group (with phase suffix) → its racks' load at the power their failover policy leaves
    them in a contingency, kW (only when some cluster caps or sheds)."""
    node_kw: dict[str, pulp.LpVariable] = field(default_factory=dict)
    """Power node (with its phase suffix) → its normal-operation load L_v (only nodes with N-1 limits), kW."""
    buy: dict[BuyKey, pulp.LpVariable] = field(default_factory=dict)
    """Retrofit bought in a phase (binary)."""
    pms: dict[int, PowerModel] = field(default_factory=dict)
    """Phase index → the power model of what is online then (change points only)."""
    existing_pod_gpus: dict[str, int] = field(default_factory=dict)
    existing_pod_racks: dict[str, int] = field(default_factory=dict)
    existing_gpus: dict[str, int] = field(default_factory=dict)
    """Cluster → GPUs of its racks already installed."""
    existing_home: dict[str, set[str]] = field(default_factory=dict)
    """Cluster → pods and buildings its installed racks stand in."""
    existing_kw: float = 0.0
    from_phase: int = 0
    """First phase index the model may add racks or buy retrofits in (rolling: the current one)."""
    fixed_buys: tuple = ()
    """(retrofit, phase) bought before this model (rolling)."""
    to_phase: int = -1
    """Last phase index the model decides (rolling: the current one; -1: the last)."""

    @property
    def horizon(self) -> int:
        """Index of the last phase this model decides."""
        return len(self.tl.phases) - 1 if self.to_phase < 0 else self.to_phase

    @property
    def points(self) -> list[int]:
        """Phase indices where limits are stated: where what is online changes, up to the horizon."""
        return sorted({p for p in self.tl.change_points() if p <= self.horizon} | {self.horizon})
    z: dict[ScopeKey, pulp.LpVariable] = field(default_factory=dict)
    exprs: dict[str, pulp.LpAffineExpression] = field(default_factory=dict)
    """Named expressions: gpus, pflops, capex_usd, it_kw, cable_usd, cable_m, gpus:<group>."""
    limits: dict[LimitKey, Limit] = field(default_factory=dict)
    fixed_row_kw: dict[str, float] = field(default_factory=dict)
    """Fixed load per row (network racks, installed racks), kW."""
    fixed_heat: dict[str, float] = field(default_factory=dict)
    """Fixed heat per cooling zone (network racks, installed racks), kW."""
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

    def upto(self, p: int):
        """(key, var) of every count added in phase index p or before."""
        return ((key, var) for key, var in self.n.items() if self.tl.at(key.phase) <= p)

    def sfx(self, p: int) -> list[str]:
        """The phase part of a name (nothing in a scenario without phases)."""
        return [str(self.tl.phases[p])] if self.tl.phased else []

    def effect(self, retrofit: str, p: int) -> pulp.LpAffineExpression:
        """1 when the retrofit is in effect in phase index p (bought at least lead_phases before, by
        this model or before it: ``fixed_buys``)."""
        lead = self.retrofit(retrofit).lead_phases
        expr = pulp.lpSum(v for k, v in self.buy.items() if k.retrofit == retrofit and self.tl.at(k.phase) + lead <= p)
        done = sum(1 for r, ph in self.fixed_buys if r == retrofit and self.tl.at(ph) + lead <= p)
        return expr + done if done else expr

    def retrofit(self, rid: str):
        return next(r for r in self.scenario.retrofits if r.id == rid)

    def fixed_at(self, p: int) -> dict[str, float]:
        """Fixed kW per row standing in phase index p (network racks from their row's phase, installed racks always)."""
        out: dict[str, float] = defaultdict(float)
        for row, kw, on, _ in self.fixed_items:
            if on <= p:
                out[row] += kw
        return dict(out)

    def fixed_heat_at(self, p: int) -> dict[str, float]:
        """Fixed heat per cooling zone in phase index p, kW."""
        out: dict[str, float] = defaultdict(float)
        for row_id, kw, on, t in self.fixed_items:
            if on > p:
                continue
            row = self.ix.rows[row_id].row
            air, liquid = t.heat_kw(kw)
            out[row.air_zone] += air
            if liquid and row.liquid_loop:
                out[row.liquid_loop] += liquid
        return dict(out)


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
    spots = ix.pod_locations() | {(r.row, r.position) for r in scenario.existing}
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


def cluster_groups(scenario: Scenario, group: bool = True, installed: set[str] | frozenset[str] = frozenset()) -> dict[str, ClusterGroup]:
    """Clusters in groups of identical ones (module docstring); every cluster alone if ``group`` is
    false, and clusters with racks already installed always alone."""
    types = scenario.catalog.by_id()
    buckets: dict[tuple, list[Cluster]] = {}
    order: list[tuple] = []
    for c in scenario.clusters:
        scope = scenario.scope_of(c)
        gpu_types = scenario.gpu_types_for(c)
        sizes = {types[t].gpus for t in gpu_types if types[t].gpus}
        figures = [c.gpus, *(c.gpus_by_phase or {}).values()]
        spread = ((c.max_share_per_power_node, c.max_share_per_cooling_zone, c.max_share_per_pod) != (None, None, None)
                  or c.spare_availability is not None or bool(c.fabrics))
        groupable = (group and c.id not in installed and scope != Scope.rack and len(sizes) == 1 and not spread
                     and all(f is None or f % next(iter(sizes)) == 0 for f in figures))
        phased = tuple(sorted((c.gpus_by_phase or {}).items()))
        sig = ((c.demand, c.gpus, phased, tuple(gpu_types), scope, storage_racks(scenario, c), c.storage_rack_type, c.on_power_failure, c.cap_ratio)
               if groupable else ("alone", c.id))
        if sig not in buckets:
            buckets[sig] = []
            order.append(sig)
        buckets[sig].append(c)
    out: dict[str, ClusterGroup] = {}
    for sig in order:
        members = buckets[sig]
        head = members[0]
        gid = head.id if len(members) == 1 else f"{head.id}+{len(members) - 1}"
        storage = head.storage_rack_type if storage_racks(scenario, head) > 0 else None
        out[gid] = ClusterGroup(gid, members, scenario.scope_of(head), scenario.gpu_types_for(head), storage, spares_needed(scenario, head))
    return out


# ---------------------------------------------------------------- families


def _limit(m: Model, key: LimitKey, kind: str, lhs: pulp.LpAffineExpression, limit: float, unit: str, fixed: float = 0.0) -> None:
    """Add lhs ≤ limit (with a slack in an elastic model) and record it."""
    parts = [key.ident, *([key.failed] if key.failed else []), *([key.phase] if key.phase else [])]
    name = lp_name(key.family, *parts)
    if m.elastic:
        s = m.var(lp_name("slack_" + key.family, *parts))
        m.slack[key] = s
        m.add(lhs - s <= limit, name)
    else:
        m.add(lhs <= limit, name)
    m.limits[key] = Limit(key, name, unit, float(limit), lhs, kind, float(fixed))


def _ph(m: Model, p: int) -> str:
    return str(m.tl.phases[p]) if m.tl.phased else ""


@dataclass
class _Needs:
    """Retrofits a rack type needs in a row: each entry a list of alternatives (any one will do)."""

    loop: list[str] = field(default_factory=list)
    power: list[str] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return bool(self.loop or self.power)


def retrofit_needs(scenario: Scenario, ix: SiteIndex, row_id: str, t) -> _Needs | None:
    """What a rack type needs to fit a row: nothing (fits as built), retrofits (which ones), or
    None (no retrofit makes it fit)."""
    if fits(scenario, ix, row_id, t):
        return _Needs()
    row = ix.rows[row_id].row
    needs = _Needs()
    wants_loop = t.liquid_fraction > 0 and row.liquid_loop is None
    if wants_loop:
        needs.loop = [r.id for r in scenario.retrofits if r.effect.kind == RetrofitKind.add_liquid_loop and r.effect.row == row_id]
        if not needs.loop:
            return None
    limit_kw = scenario.rack_limit_power_kw(t)
    if limit_kw > row.max_rack_power_kw + 1e-9:
        needs.power = [r.id for r in scenario.retrofits
                       if r.effect.kind == RetrofitKind.raise_rack_power and r.effect.row == row_id and r.effect.max_rack_power_kw + 1e-9 >= limit_kw]
        if not needs.power:
            return None
    probe = row.model_copy(update={"liquid_loop": row.liquid_loop or ("retrofit" if wants_loop else None),
                                   "max_rack_power_kw": max(row.max_rack_power_kw, limit_kw)})
    hall = ix.halls[ix.rows[row_id].hall][1]
    rating = hall.floor_rating_kg_per_m2
    ok = t.weight_kg <= probe.max_rack_weight_kg + 1e-9 and (rating is None or floor_load_kg_per_m2(t, probe) <= rating + 1e-9)
    return needs if ok else None


def add_retrofit_variables(m: Model) -> None:
    """buy[r, p] ∈ {0, 1}: retrofit r bought in phase p, at most once: Σ_p buy[r, p] ≤ 1; a purchase
    whose effect would land after the last phase is never made."""
    last = len(m.tl.phases) - 1
    done = {r for r, _ in m.fixed_buys}
    for r in m.scenario.retrofits:
        if r.id in done:
            continue
        mine = []
        for p, ph in enumerate(m.tl.phases):
            if p + r.lead_phases > last or p < m.from_phase or p > m.horizon:
                continue
            v = m.var(lp_name("buy", r.id, *([ph] if ph else [])), 0, 1, integer=True)
            m.buy[BuyKey(r.id, ph)] = v
            mine.append(v)
        if len(mine) > 1:
            m.add(pulp.lpSum(mine) <= 1, lp_name("buy_once", r.id))


def add_count_variables(m: Model) -> None:
    """n[k, t, G, p] racks of type t for group G added to class k in phase p (integer, 0…size_k),
    for every type allowed for G that fits k as built or after retrofits it could buy, from the
    phase the row exists and the group wants GPUs."""
    types = m.scenario.catalog.by_id()
    m.needs = {}
    for k, cls in m.classes.items():
        fitting: dict[str, _Needs] = {}
        for t in cls.link:
            need = retrofit_needs(m.scenario, m.ix, cls.row, types[t])
            if need is not None:
                fitting[t] = need
        row_on = m.tl.row_on.get(cls.row, 0)
        for g in m.groups.values():
            start = max(row_on, m.tl.first_wanted(g.head), m.from_phase) if m.tl.phased else 0
            wanted = [*((t, "") for t in g.gpu_types), *([(g.storage_type, "")] if g.storage_type else []),
                      *([(g.spare_type, "spare")] if g.spare_type else [])]
            for t, role in wanted:
                if t not in fitting:
                    continue
                m.needs[k, t] = fitting[t]
                for p in range(start, m.horizon + 1):
                    up = None if m.elastic else cls.size
                    ph = m.tl.phases[p]
                    m.n[CountKey(k, t, g.id, ph, role)] = m.var(lp_name("n" + ("_spare" if role else ""), class_label(k), t, g.id, *([ph] if ph else [])),
                                                                0, up, integer=True)


def add_space_constraints(m: Model) -> None:
    """Space: Σ_{t,G,p} n[k,t,G,p] ≤ size_k for every class k (racks never leave, so the last
    phase's count bounds every earlier one)."""
    by_class: dict[ClassKey, list[pulp.LpVariable]] = defaultdict(list)
    for key, var in m.n.items():
        by_class[key.cls].append(var)
    for k, vars_ in by_class.items():
        if len(vars_) > 1 or m.elastic:
            _limit(m, LimitKey("space", class_label(k)), "row_positions", pulp.lpSum(vars_), m.classes[k].size, "positions")


def add_retrofit_gates(m: Model) -> None:
    """A rack type that fits a row only after a retrofit: Σ_{q ≤ p} n[k,t,·,q] ≤ size_k × Σ (retrofits
    in effect in p that give it), per need (a liquid loop, a higher rack limit), per phase."""
    for (k, t), need in getattr(m, "needs", {}).items():
        if not need.any:
            continue
        for p in range(m.horizon + 1):
            placed = [var for key, var in m.upto(p) if key.cls == k and key.rack_type == t]
            if not placed:
                continue
            for what, alts in (("loop", need.loop), ("power", need.power)):
                if alts:
                    eff = pulp.lpSum(m.effect(r, p) for r in alts)
                    m.add(pulp.lpSum(placed) - m.classes[k].size * eff <= 0, lp_name(f"needs_{what}", class_label(k), t, *m.sfx(p)))


def _summed(items: list[tuple[pulp.LpVariable, float]]) -> pulp.LpAffineExpression:
    """Σ coefficient × variable, a variable listed twice counted twice (a rack's own power and the
    fabric power it charges to a network-rack row in the same feed group or zone)."""
    out: dict[pulp.LpVariable, float] = defaultdict(float)
    for v, c in items:
        out[v] += c
    return pulp.LpAffineExpression([(v, round(c, 9)) for v, c in out.items()])


def add_group_load_definitions(m: Model) -> None:
    """Feed-group load in phase p: P_{g,p} = Σ_{k in rows of g, t, G, q ≤ p} n[k,t,G,q] · p_t (kW),
    p_t the planning power of t; only at the phases where a power limit is stated."""
    types = m.scenario.catalog.by_id()
    for p in m.points:
        terms: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
        for key, var in m.upto(p):
            terms[m.pm.group_of_row[key.cls.row]].append((var, round(m.scenario.rack_power_kw(types[key.rack_type]), 9)))
        for row, items in m.fabric_rows.items():  # single-phase only (checked on input)
            terms[m.pm.group_of_row[row]].extend(items)
        for g, items in terms.items():
            name = g + (f"|{_ph(m, p)}" if m.tl.phased else "")
            v = m.var(lp_name("load", g, *m.sfx(p)))
            m.group_kw[name] = v
            m.add(_summed(items) - v == 0, lp_name("load_def", g, *m.sfx(p)))
        if any(g.head.on_power_failure != FailoverPolicy.keep for g in m.groups.values()):
            eff: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
            for key, var in m.upto(p):
                head = m.groups[key.group].head
                f = head.on_power_failure.factor(head.cap_ratio)
                if f > 0:
                    eff[m.pm.group_of_row[key.cls.row]].append((var, round(m.scenario.rack_power_kw(types[key.rack_type]) * f, 9)))
            for row, items in m.fabric_rows.items():  # switches keep power
                eff[m.pm.group_of_row[row]].extend(items)
            for g in terms:
                m.group_eff[g + (f"|{_ph(m, p)}" if m.tl.phased else "")] = _summed(eff.get(g, []))


def _gkw(m: Model, g: str, p: int):
    return m.group_kw.get(g + (f"|{_ph(m, p)}" if m.tl.phased else ""))


def add_power_constraints(m: Model) -> None:
    """Power, normal and N-1, in each phase where what is online changes (coefficients from
    :mod:`planner.power_model` over the nodes online then), F the fixed loads, R the capacity
    retrofits in effect:

    normal:   Σ_g a_0(v,g) · P_g − Σ_r add_r · eff_r ≤ usable_v − Σ_g a_0(v,g) · F_g   (through L_v where v has N-1 limits);
    N-1:      L_v + Σ_{g hit by f} δ_f(v,g) · P_g − Σ_r add_r · eff_r ≤ usable_v − Σ_g a_0(v,g) F_g − Σ_g δ_f(v,g) F_g;
    a redundant group that some single failure leaves without feeds, or a group with no feed online
    yet, gets P_g = 0."""
    raises: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for r in m.scenario.retrofits:
        if r.effect.kind == RetrofitKind.raise_capacity and r.effect.target in m.ix.power_nodes:
            raises[r.effect.target].append((r.id, r.effect.add_kw))
    for p in m.points:
        pm = m.pms[p]
        fixed = pm.fixed_by_group(m.fixed_at(p))
        ph = _ph(m, p)
        live = {g for g in pm.groups if _gkw(m, g, p) is not None}
        with_n1 = {c.node for c in pm.contingencies if any(g in live for g in c.delta)}
        for v, coef in pm.normal.items():
            items = [(_gkw(m, g, p), a) for g, a in coef.items() if g in live]
            if not items:
                continue
            expr = pulp.LpAffineExpression(items)
            if v in with_n1:
                lv = m.var(lp_name("node_load", v, *m.sfx(p)))
                m.node_kw[v + (f"|{ph}" if ph else "")] = lv
                m.add(expr - lv == 0, lp_name("node_load_def", v, *m.sfx(p)))
                expr = pulp.LpAffineExpression([(lv, 1.0)])
            extra = [m.effect(r, p) * add for r, add in raises.get(v, [])]
            f0 = pm.fixed_normal(v, fixed)
            _limit(m, LimitKey("power", v, "", ph), "power_node", expr - pulp.lpSum(extra), pm.usable_kw[v] - f0, "kW", f0)
        for c in pm.contingencies:
            lv = m.node_kw.get(c.node + (f"|{ph}" if ph else ""))
            hit = [g for g in c.delta if g in live]
            if not hit or lv is None:
                continue
            if m.group_eff:
                # racks in the rows the failure hits count at the power their policy leaves them:
                # a_f·P_eff − a_0·P = (δ + a_0)·P_eff − a_0·P
                sfx = f"|{ph}" if ph else ""
                a0 = pm.normal.get(c.node, {})
                moved = pulp.lpSum((c.delta[g] + a0.get(g, 0.0)) * m.group_eff[g + sfx] - a0.get(g, 0.0) * _gkw(m, g, p) for g in hit)
                expr = lv + moved
            else:
                expr = pulp.LpAffineExpression([(lv, 1.0), *((_gkw(m, g, p), c.delta[g]) for g in hit)])
            f1 = pm.fixed_normal(c.node, fixed) + pm.fixed_delta(c, fixed)
            extra = [m.effect(r, p) * add for r, add in raises.get(c.node, [])]
            _limit(m, LimitKey("power_n1", c.node, c.failed, ph), "power_node", expr - pulp.lpSum(extra), pm.usable_kw[c.node] - f1, "kW", f1)
        for g, failed in pm.forced_empty.items():
            if g in live:
                _limit(m, LimitKey("redundant", g, failed, ph), "row_redundant", pulp.LpAffineExpression([(_gkw(m, g, p), 1.0)]), 0.0, "kW")
        for g in sorted(pm.dark & live):
            _limit(m, LimitKey("unpowered", g, "", ph), "row_unpowered", pulp.LpAffineExpression([(_gkw(m, g, p), 1.0)]), 0.0, "kW")


def add_cooling_constraints(m: Model) -> None:
    """Cooling, in each phase where what is online changes: Σ n · p_t · (1 − lf_t) over rows of air
    zone z ≤ cap_z − fixed heat + Σ raises in effect, and Σ n · p_t · lf_t over rows of liquid loop z
    (as built, or added by a retrofit) likewise; cap = (units − redundant) × unit kW, 0 before the
    zone exists."""
    types = m.scenario.catalog.by_id()
    loops = {r.effect.row: r.effect.loop for r in m.scenario.retrofits if r.effect.kind == RetrofitKind.add_liquid_loop}
    raises: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for r in m.scenario.retrofits:
        if r.effect.kind == RetrofitKind.raise_capacity and r.effect.target in m.ix.zones:
            raises[r.effect.target].append((r.id, r.effect.add_kw))
    capacity = {z: zone.capacity_kw for z, zone in m.ix.zones.items()}
    capacity.update({loop.id: loop.capacity_kw for loop in loops.values()})
    for p in m.points:
        heat: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
        for key, var in m.upto(p):
            row = m.ix.rows[key.cls.row].row
            rt = types[key.rack_type]
            air, liquid = rt.heat_kw(m.scenario.rack_power_kw(rt))
            if air > 0:
                heat[row.air_zone].append((var, round(air, 9)))
            loop = row.liquid_loop or (loops[row.id].id if row.id in loops else None)
            if liquid > 0 and loop:
                heat[loop].append((var, round(liquid, 9)))
        for row, items in m.fabric_rows.items():  # switches are air cooled
            heat[m.ix.rows[row].row.air_zone].extend(items)
        offline = m.tl.offline_zones(p)
        for z, items in heat.items():
            f0 = m.fixed_heat_at(p).get(z, 0.0)
            cap = 0.0 if z in offline else capacity[z]
            extra = [m.effect(r, p) * add for r, add in raises.get(z, [])]
            _limit(m, LimitKey("cooling", z, "", _ph(m, p)), "cooling_zone", _summed(items) - pulp.lpSum(extra), cap - f0, "kW", f0)


def add_pod_constraints(m: Model) -> None:
    """Pods: Σ n · gpus_t over the pod's rows ≤ max_gpus − installed GPUs; Σ n ≤ max_racks − installed
    racks (all phases together: racks only add)."""
    types = m.scenario.catalog.by_id()
    gpus: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    racks: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    for key, var in m.n.items():
        pod = m.ix.rows[key.cls.row].row.pod
        if types[key.rack_type].gpus:
            gpus[pod].append((var, types[key.rack_type].gpus))
        racks[pod].append((var, 1.0))
    for pod, items in gpus.items():
        f = m.existing_pod_gpus.get(pod, 0)
        _limit(m, LimitKey("pod_gpus", pod), "pod_gpus", pulp.LpAffineExpression(items), m.ix.pods[pod].max_gpus - f, "GPUs", f)
    for pod, items in racks.items():
        cap = m.ix.pods[pod].max_racks
        if cap is not None:
            f = m.existing_pod_racks.get(pod, 0)
            _limit(m, LimitKey("pod_racks", pod), "pod_racks", pulp.LpAffineExpression(items), cap - f, "racks", f)


def _scope_of(m: Model, row_id: str, scope: Scope) -> str:
    """The pod or building a row belongs to."""
    ref = m.ix.rows[row_id]
    return ref.row.pod if scope == Scope.pod else ref.building


def add_cluster_constraints(m: Model) -> None:
    """Clusters, per group G of k members with demand d_p each in phase p (installed GPUs E count
    toward it) (module docstring):

    site scope:   exact Σ GPUs_p = k·d_p − E; at_least ≥; max ≤ (if d given); storage racks = k·s;
    pod/building: z[G,s] ∈ {0…k} members homed in scope s (a member with installed racks is homed
                  where they stand), Σ_s z = k (exact, at_least) or ≤ k (max);
                  GPUs in s in p = d_p·z (exact), ≥ d_p·z and ≤ ports_s·z (at_least),
                  ≤ min(d_p, ports_s)·z (max); racks in s ≤ R·z, R the most racks one member
                  takes there; storage racks in s = s_c·z;
    rack scope:   one rack per cluster (k = 1)."""
    s = m.scenario
    types = s.catalog.by_id()
    n_ph = m.horizon + 1
    for g in m.groups.values():
        head = g.head
        k = g.k
        base = m.existing_gpus.get(head.id, 0) if k == 1 else 0
        every = [(key, var) for key, var in m.n.items() if key.group == g.id]
        spare = [(key, var) for key, var in every if key.role == "spare"]
        mine = [(key, var) for key, var in every if key.role != "spare"]
        store = [var for key, var in mine if g.storage_type and key.rack_type == g.storage_type]
        if g.spares and g.scope in (Scope.site, Scope.rack):
            m.add(pulp.lpSum(var for _, var in spare) == k * g.spares, lp_name("spares", g.id))
        if g.scope in (Scope.site, Scope.rack):
            for p in range(m.from_phase, n_ph):  # earlier phases are settled (rolling)
                d = m.tl.demand(head, p)
                gpus = pulp.LpAffineExpression([(var, types[key.rack_type].gpus) for key, var in mine
                                                 if types[key.rack_type].gpus and m.tl.at(key.phase) <= p])
                if head.demand == Demand.exact:
                    m.add(gpus == k * d - base, lp_name("demand", g.id, *m.sfx(p)))
                elif head.demand == Demand.at_least:
                    m.add(gpus >= k * d - base, lp_name("demand", g.id, *m.sfx(p)))
                elif d is not None:
                    _limit(m, LimitKey("demand_cap", g.id, "", _ph(m, p)), "demand_cap", gpus, k * d - base, "GPUs", base)
            if g.storage_type:
                have = sum(1 for r in m.scenario.existing if r.cluster == head.id and r.rack_type == g.storage_type) if k == 1 else 0
                _storage_rows(m, g.id, "", pulp.lpSum(store), k * storage_racks(s, head) - have, None)
            if g.scope == Scope.rack:
                m.add(pulp.lpSum(var for _, var in mine if var not in store) <= 1, lp_name("one_rack", g.id))
            continue
        by_scope: dict[str, list[tuple[CountKey, pulp.LpVariable]]] = defaultdict(list)
        spare_in: dict[str, list[pulp.LpVariable]] = defaultdict(list)
        for key, var in mine:
            by_scope[_scope_of(m, key.cls.row, g.scope)].append((key, var))
        for key, var in spare:
            spare_in[_scope_of(m, key.cls.row, g.scope)].append(var)
            by_scope.setdefault(_scope_of(m, key.cls.row, g.scope), [])
        homes = {h for h in m.existing_home.get(head.id, set()) if (h in m.ix.pods) == (g.scope == Scope.pod)} if k == 1 else set()
        for sid in homes:
            by_scope.setdefault(sid, [])
        racks_cap: dict[str, int] = defaultdict(int)
        for cls in m.classes.values():
            racks_cap[_scope_of(m, cls.row, g.scope)] += cls.size
        ports: dict[str, int] = defaultdict(int)
        for pid, pod in m.ix.pods.items():
            ports[pid if g.scope == Scope.pod else m.ix.halls[m.ix.pod_hall[pid]][0]] += pod.max_gpus
        gpu_sizes = [types[t].gpus for t in g.gpu_types if types[t].gpus]
        d_max = max((m.tl.demand(head, p) or 0 for p in range(n_ph)), default=0) if head.gpus is not None or head.gpus_by_phase else None
        per_member_racks = None
        if d_max is not None and head.demand != Demand.at_least and gpu_sizes:
            per_member_racks = math.ceil(d_max / min(gpu_sizes)) + storage_racks(s, head)
        zs = []
        for sid, items in sorted(by_scope.items()):
            fixed_home = sid in homes
            z = m.var(lp_name("z", g.id, sid), 1 if fixed_home else 0, k, integer=True)
            m.z[ScopeKey(g.id, sid)] = z
            zs.append(z)
            big = racks_cap[sid]
            if g.scope == Scope.pod and m.ix.pods[sid].max_racks is not None:
                big = min(big, m.ix.pods[sid].max_racks + storage_racks(s, head))
            if per_member_racks is not None:
                big = min(big, per_member_racks)
            if m.elastic:  # space and ports may be exceeded by their slack: bound by the demand instead
                need = d_max or 0
                big += need + storage_racks(s, head)
            m.add(pulp.lpSum(var for _, var in items) - big * z <= 0, lp_name("scope_racks", g.id, sid))
            if g.spares:  # hot spares stand where the cluster is homed
                m.add(pulp.lpSum(spare_in.get(sid, [])) - g.spares * z == 0, lp_name("scope_spares", g.id, sid))
            here = base if fixed_home else 0
            for p in range(m.from_phase, n_ph):  # earlier phases are settled (rolling)
                d = m.tl.demand(head, p)
                g_s = pulp.LpAffineExpression([(var, types[key.rack_type].gpus) for key, var in items
                                               if types[key.rack_type].gpus and m.tl.at(key.phase) <= p])
                big_gpus = ports[sid] if d is None or head.demand == Demand.at_least else min(ports[sid], d)
                if m.elastic:
                    big_gpus = max(big_gpus, d or 0) + ports[sid]
                if head.demand == Demand.exact:
                    m.add(g_s - d * z == -here, lp_name("scope_gpus", g.id, sid, *m.sfx(p)))
                else:
                    m.add(g_s - big_gpus * z <= -here, lp_name("scope_gpus", g.id, sid, *m.sfx(p)))
                    if head.demand == Demand.at_least:
                        m.add(g_s - d * z >= -here, lp_name("scope_demand", g.id, sid, *m.sfx(p)))
            if g.storage_type:
                have = sum(1 for r in m.scenario.existing if r.cluster == head.id and r.rack_type == g.storage_type) if fixed_home else 0
                st = pulp.lpSum(var for key, var in items if key.rack_type == g.storage_type)
                _storage_rows(m, g.id, sid, st - storage_racks(s, head) * z, -have, storage_racks(s, head))
        total = pulp.lpSum(zs)
        if head.demand in (Demand.exact, Demand.at_least):
            m.add(total == k, lp_name("homes", g.id))
        else:
            m.add(total <= k, lp_name("homes", g.id))


def spread_domains(scenario: Scenario, ix: SiteIndex, shed: bool) -> dict[tuple[str, str], frozenset[str]]:
    """Failure domains for spread limits: (kind, element) → the rows its failure takes down.
    Power nodes that can fail: rows left with no live feed (and, for a cluster that sheds, every
    row the failure hits); cooling zones and loops: their rows; pods: their rows."""
    from planner.reliability import domain_rows, node_failure_rows, rows_of_feed

    out: dict[tuple[str, str], frozenset[str]] = {}
    by_feed = rows_of_feed(ix)
    for fid, node in ix.power_nodes.items():
        if node.can_fail:
            down, hit = node_failure_rows(ix, fid, by_feed)
            if down or (shed and hit):
                out["power_node", fid] = frozenset(down | hit if shed else down)
    rows = domain_rows(ix)
    out.update({(kind, e): frozenset(r) for kind in ("cooling_zone", "pod") for e, r in rows[kind].items()})
    return out


def add_spread_constraints(m: Model) -> None:
    """Failure-domain spread (§11), per cluster c with a limit s for a kind of element, and every
    element e of that kind whose failure takes rows R_e down (:func:`spread_domains`):
    Σ_{k in R_e, t} n[k,t,c] · gpus_t ≤ s · Σ_{k,t} n[k,t,c] · gpus_t (over the racks standing at the end)."""
    types = m.scenario.catalog.by_id()
    for g in m.groups.values():
        head = g.head
        limits = {"power_node": head.max_share_per_power_node, "cooling_zone": head.max_share_per_cooling_zone, "pod": head.max_share_per_pod}
        if all(v is None for v in limits.values()):
            continue
        mine = [(key, var) for key, var in m.n.items() if key.group == g.id and types[key.rack_type].gpus and not key.role]
        total = pulp.LpAffineExpression([(var, types[key.rack_type].gpus) for key, var in mine])
        by_row: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
        for key, var in mine:
            by_row[key.cls.row].append((var, types[key.rack_type].gpus))
        seen: set[tuple[str, frozenset[str]]] = set()
        for (kind, eid), rows in spread_domains(m.scenario, m.ix, head.on_power_failure == FailoverPolicy.shed).items():
            share = limits[kind]
            here = [x for r in rows if r in by_row for x in by_row[r]]
            if share is None or not here or (kind, rows) in seen:
                continue
            seen.add((kind, rows))
            _limit(m, LimitKey(f"spread_{kind}", f"{g.id}@{eid}"), "spread", pulp.LpAffineExpression(here) - share * total, 0.0, "GPUs")


def _storage_rows(m: Model, gid: str, sid: str, lhs: pulp.LpAffineExpression, rhs: float, need: int | None) -> None:
    """Storage racks placed = wanted (``lhs == rhs``); in an elastic model the count may fall short
    by a slack (so an explanation can say by how much storage is short, and where)."""
    name = lp_name("scope_storage", gid, sid) if sid else lp_name("storage", gid)
    if not m.elastic:
        m.add(lhs == rhs, name)
        return
    key = LimitKey("storage", f"{gid}@{sid}")
    slack = m.var(lp_name("slack_storage", gid, sid))
    m.slack[key] = slack
    m.add(lhs <= rhs, name + "_le")
    m.add(lhs + slack >= rhs, name)
    m.limits[key] = Limit(key, name, "racks", float(need if need is not None else rhs), lhs, "storage")


def add_fabric_constraints(m: Model) -> None:
    """Designed fabrics (§13, :mod:`planner.fabric`), per cluster c on designs D_c (a choice y[c,d]
    ∈ {0,1}, Σ_d y = 1, when there are several). x[d,t,p]: c's GPU racks of type t in pod p on
    design d (its racks there when D_c is one design; else Σ_d x[d,t,p] = its racks of t in p,
    x[d,t,p] ≤ positions_p · y[c,d]); R[d,t] = Σ_p x[d,t,p]; endpoints E_d = Σ_t R[d,t]·gpus_t·nics
    ≤ the design's largest build; leaves L_d = Σ_t R[d,t] (leaves in racks) or integer
    L_d ≥ E_d / d₁ (in multiples of the server's GPUs when rail-optimised); integer spines
    S_d ≥ U₁ / k₂ (2 tiers) or U₁ / d₂ (3 tiers), U₁ = L_d·u₁ (Σ_t R[d,t]·u₁(t) for leaves in racks);
    integer cores C_d ≥ S_d·u₂ / k₃. Capex += prices × switches (not leaves in racks) + links above
    the racks; power: x[d,t,p] · gpus_t · the design's kW per GPU on pod p's network-rack row
    (its feeds and its air zone)."""
    from planner.fabric import leaf_down_of, max_endpoints, ports, rates

    s = m.scenario
    if not s.fabrics:
        return
    types = s.catalog.by_id()
    sw = s.catalog.switch_by_id()
    by_id = {d.id: d for d in s.fabrics}
    lcs = sorted(s.site.fabric.link_classes, key=lambda c: c.max_length_m)
    shortest, longest = lcs[0], lcs[-1]
    cls_cost = {lk.id: lk.cost_usd_per_link for lk in s.site.fabric.link_classes}
    net_row = {pid: pod.network_rack.row for pid, pod in m.ix.pods.items()}
    pod_size: dict[str, int] = defaultdict(int)
    for k, cls in m.classes.items():
        pod_size[m.ix.rows[k.row].row.pod] += cls.size
    rows: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    capex: list = []
    for g in m.groups.values():
        c = g.head
        if not c.fabrics:
            continue
        designs = [by_id[d] for d in c.fabrics]
        keys = [(key, var) for key, var in m.n.items() if key.group == g.id and types[key.rack_type].gpus and not key.role]
        kinds = sorted({key.rack_type for key, _ in keys})
        here: dict[tuple[str, str], list[pulp.LpVariable]] = defaultdict(list)  # (type, pod) → counts
        for key, var in keys:
            here[key.rack_type, m.ix.rows[key.cls.row].row.pod].append(var)
        choice = len(designs) > 1
        ys = {}
        x: dict[tuple[str, str, str], pulp.LpAffineExpression] = {}
        if choice:
            ys = {d.id: m.var(lp_name("fabric_pick", c.id, d.id), 0, 1, integer=True) for d in designs}
            m.fabric_pick.update({(c.id, d): y for d, y in ys.items()})
            m.add(pulp.lpSum(ys.values()) == 1, lp_name("fabric_one", c.id))
            for (t, pod), vs in here.items():
                parts = []
                for d in designs:
                    v = m.var(lp_name("fabric_racks", c.id, d.id, t, pod))
                    m.add(v - pod_size[pod] * ys[d.id] <= 0, lp_name("fabric_racks_on", c.id, d.id, t, pod))
                    x[d.id, t, pod] = pulp.LpAffineExpression(v)
                    parts.append(v)
                m.add(pulp.lpSum(parts) - pulp.lpSum(vs) == 0, lp_name("fabric_racks_sum", c.id, t, pod))
        else:
            for (t, pod), vs in here.items():
                x[designs[0].id, t, pod] = pulp.lpSum(vs)
        for d in designs:
            leaf_down = max((leaf_down_of(d, types[t]) for t in kinds), default=None)
            p = ports(d, sw, leaf_down)
            r_dt = {t: pulp.lpSum(x[d.id, t2, pod] for (t2, pod) in here if t2 == t) for t in kinds}
            ends = pulp.lpSum(r_dt[t] * (types[t].gpus * d.nics_per_gpu) for t in kinds)
            _limit(m, LimitKey("fabric_size", f"{c.id}@{d.id}"), "fabric", ends, float(max_endpoints(d, sw, leaf_down)), "endpoints")
            if d.leaf_in_rack:
                up1 = pulp.lpSum(r_dt[t] * math.ceil(types[t].gpus * d.nics_per_gpu / d.oversubscription[0]) for t in kinds)
                terms = [(var, math.ceil(types[key.rack_type].gpus * d.nics_per_gpu / d.oversubscription[0])
                          * cls_cost.get(m.classes[key.cls].link.get(key.rack_type) or longest.id, longest.cost_usd_per_link)) for key, var in keys]
                if choice:  # rack uplinks at their position classes' link classes, when built on d
                    big = sum(pod_size.values()) * max((co for _, co in terms), default=0.0)
                    links = m.var(lp_name("fabric_rack_links", c.id, d.id))
                    m.add(links - pulp.LpAffineExpression(terms) + big * (1 - ys[d.id]) >= 0, lp_name("fabric_rack_links", c.id, d.id))
                    capex.append(pulp.LpAffineExpression(links))
                else:
                    capex.append(pulp.LpAffineExpression(terms))
            else:
                per = (max((types[t].gpus_per_server for t in kinds), default=1) or 1) if d.rail_optimized else 1
                lv = m.var(lp_name("fabric_leaves", c.id, d.id), 0, None, integer=True)
                m.add(ends - p.down[0] * per * lv <= 0, lp_name("fabric_leaves", c.id, d.id))
                up1 = lv * (per * p.up[0])
                capex.append(lv * (per * (sw[d.switches[0]].price_usd + p.up[0] * shortest.cost_usd_per_link)))
            sp = m.var(lp_name("fabric_spines", c.id, d.id), 0, None, integer=True)
            m.add(up1 - (p.radix[1] if d.tiers == 2 else p.down[1]) * sp <= 0, lp_name("fabric_spines", c.id, d.id))
            capex.append(sp * sw[d.switches[1]].price_usd)
            if d.tiers == 3:
                co = m.var(lp_name("fabric_cores", c.id, d.id), 0, None, integer=True)
                m.add(sp * p.up[1] - p.radix[2] * co <= 0, lp_name("fabric_cores", c.id, d.id))
                capex.append(co * sw[d.switches[2]].price_usd + sp * (p.up[1] * longest.cost_usd_per_link))
            for (d_id, t, pod), expr in x.items():
                if d_id == d.id:
                    kw = round(rates(s, d, types[t]).kw_per_gpu * types[t].gpus, 9)
                    rows[net_row[pod]].extend((v, kw * a) for v, a in expr.items())
    m.fabric_rows = dict(rows)
    m.fabric_capex = pulp.lpSum(capex)


def add_budget_constraints(m: Model) -> None:
    """Budgets: capex = Σ n · rack capex + Σ retrofits bought (planner.costs) ≤ capex_usd; IT power of
    all racks (installed included) in the last phase ≤ it_power_kw."""
    b = m.scenario.budgets
    if b.capex_usd is not None:
        _limit(m, LimitKey("budget", "capex_usd"), "budget", m.exprs["capex_usd"], b.capex_usd, "USD")
    if b.it_power_kw is not None:
        _limit(m, LimitKey("budget", "it_power_kw"), "budget", m.exprs["it_kw"], b.it_power_kw - m.existing_kw, "kW", m.existing_kw)


# ---------------------------------------------------------------- assembly


def _expressions(m: Model) -> None:
    """Named expressions (planner.costs for every money figure): gpus and pflops (in the last phase;
    the objective of a phased max_* sums them over phases), capex_usd (equipment + facility +
    retrofits, plus the network racks' facility as a constant), tco_usd (each rack from its phase's
    start), it_kw, cable_usd, cable_m."""
    s = m.scenario
    types = s.catalog.by_id()
    classes = {c.id: c for c in s.site.fabric.link_classes}
    fabric = s.site.fabric.cost_usd_per_gpu
    years = phase_years(s)
    n_ph = len(m.tl.phases)
    e: dict[str, list[tuple[pulp.LpVariable, float]]] = defaultdict(list)
    for key, var in m.n.items():
        rt = types[key.rack_type]
        cls = m.classes[key.cls]
        lc = cls.link.get(key.rack_type)
        link = classes[lc] if lc else None
        kw = s.rack_power_kw(rt)
        per_gpu = 0.0 if m.groups[key.group].head.fabrics else fabric
        cost = rack_cost(rt, kw, link, per_gpu, s.costs, s.pue, years.get(key.phase, 0.0))
        if not key.role:  # hot spares: paid for and powered, not counted as GPUs
            e["gpus"].append((var, rt.gpus))
            e[f"gpus:{key.group}"].append((var, rt.gpus))
            e["gpu_phases"].append((var, rt.gpus * (n_ph - m.tl.at(key.phase))))
            e["pflops"].append((var, rt.pflops_bf16))
            e["pflop_phases"].append((var, rt.pflops_bf16 * (n_ph - m.tl.at(key.phase))))
        e["capex_usd"].append((var, cost.capex_usd))
        e["tco_usd"].append((var, cost.tco_usd))
        e["it_kw"].append((var, kw))
        e["cable_usd"].append((var, rack_capex_usd(rt, link, 0.0) - rt.capex_usd))
        e["cable_m"].append((var, rt.links * cls.cable_m.get(key.rack_type, 0.0)))
    for key, var in m.buy.items():
        r = m.retrofit(key.retrofit)
        e["capex_usd"].append((var, r.cost_usd))
        e["tco_usd"].append((var, r.cost_usd * discount(years.get(key.phase, 0.0), s.costs.discount_rate)))
    m.exprs = {name: pulp.LpAffineExpression([(v, round(c, 9)) for v, c in items if c]) for name, items in e.items()}
    for key in ("gpus", "gpu_phases", "pflops", "pflop_phases", "capex_usd", "tco_usd", "it_kw", "cable_usd", "cable_m"):
        m.exprs.setdefault(key, pulp.LpAffineExpression())
    for g in m.groups:
        m.exprs.setdefault(f"gpus:{g}", pulp.LpAffineExpression())
    net_kw = sum(s.rack_power_kw(t) for _, _, t in network_racks(s))
    net_facility = facility_usd(net_kw, s.costs)
    # installed racks: sunk capex, running opex (as the KPIs count them)
    inst_opex = 0.0
    for r in s.existing:
        t = types[r.rack_type]
        link = classes.get(r.link_class or "")
        inst_opex += rack_cost(t, s.rack_power_kw(t), link, fabric, s.costs, s.pue, 0.0, existing=True).tco_usd
    if m.fabric_capex is not None:  # built at the start: undiscounted (as the KPIs count it)
        m.exprs["capex_usd"] = m.exprs["capex_usd"] + m.fabric_capex
        m.exprs["tco_usd"] = m.exprs["tco_usd"] + m.fabric_capex
    m.exprs["capex_usd"].constant = round(net_facility, 6)
    m.exprs["tco_usd"].constant = round(net_facility + opex_usd_per_year(net_kw, 0.0, s.costs, s.pue) * annuity(0.0, s.costs.horizon_years, s.costs.discount_rate) + inst_opex, 6)


def _fixed_loads(m: Model) -> None:
    """Fixed load: every pod's network rack (from its row's phase) and every installed rack: power
    on its row, heat in its row's zones, GPUs and a rack in its pod, GPUs toward its cluster."""
    s = m.scenario
    types = s.catalog.by_id()
    m.fixed_items = []  # (row, kW, online phase index)
    for _, row_id, t in network_racks(s):
        m.fixed_items.append((row_id, s.rack_power_kw(t), m.tl.row_on.get(row_id, 0), t))
    for r in s.existing:
        t = types[r.rack_type]
        kw = s.rack_power_kw(t)
        m.fixed_items.append((r.row, kw, 0, t))
        m.existing_kw += kw
        pod = m.ix.rows[r.row].row.pod
        m.existing_pod_gpus[pod] = m.existing_pod_gpus.get(pod, 0) + t.gpus
        m.existing_pod_racks[pod] = m.existing_pod_racks.get(pod, 0) + 1
        m.existing_gpus[r.cluster] = m.existing_gpus.get(r.cluster, 0) + t.gpus
        m.existing_home.setdefault(r.cluster, set()).update({pod, m.ix.rows[r.row].building})
    for row_id, kw, _, _ in m.fixed_items:
        m.fixed_row_kw[row_id] = m.fixed_row_kw.get(row_id, 0.0) + kw
    for row_id, kw, _, t in m.fixed_items:
        row = m.ix.rows[row_id].row
        air, liquid = t.heat_kw(kw)
        m.fixed_heat[row.air_zone] = m.fixed_heat.get(row.air_zone, 0.0) + air
        if liquid and row.liquid_loop:
            m.fixed_heat[row.liquid_loop] = m.fixed_heat.get(row.liquid_loop, 0.0) + liquid


OBJECTIVES = {Objective.max_gpus: "gpus", Objective.max_pflops: "pflops", Objective.min_capex: "capex_usd", Objective.min_tco: "tco_usd"}
"""Objective → the named expression it optimises (sense from :attr:`Objective.maximise`); a phased
max_gpus or max_pflops optimises the sum over phases (gpu_phases, pflop_phases): earlier is better."""


def objective_expr(m: Model, objective: Objective) -> pulp.LpAffineExpression:
    """The expression an objective optimises in this model (see :data:`OBJECTIVES`)."""
    name = OBJECTIVES[objective]
    if m.tl.phased and name == "gpus":
        name = "gpu_phases"
    if m.tl.phased and name == "pflops":
        name = "pflop_phases"
    return m.exprs[name]


def build(scenario: Scenario, aggregate: bool = True, elastic: bool = False, group_clusters: bool = True,
          from_phase: int = 0, fixed_buys: tuple = (), to_phase: int = -1) -> Model:
    """Build stage: the MILP of a validated scenario (families in this module).

    ``elastic``: every capacity limit gets a slack and the objective becomes
    min Σ slack / max(limit, 1); demands stay hard (used by :mod:`planner.explainer`).
    ``group_clusters``: model identical clusters as one group (module docstring).
    ``from_phase``, ``fixed_buys``: rolling planning (phases before ``from_phase`` are settled: their
    racks are in ``scenario.existing``, their retrofits in ``fixed_buys``).
    """
    ix = index_site(scenario.site)
    tl = timeline(scenario)
    objective = Objective(scenario.objective)
    sense = pulp.LpMaximize if objective.maximise and not elastic else pulp.LpMinimize
    prob = pulp.LpProblem("plan", sense)
    installed = {c.id for c in scenario.clusters if any(r.cluster == c.id for r in scenario.existing)}
    m = Model(
        scenario, ix, prob, position_classes(scenario, ix, aggregate), cluster_groups(scenario, group_clusters and not elastic, installed),
        power_model(ix), tl, aggregate=aggregate, elastic=elastic,
        objective_name="least relative slack" if elastic else objective.value, from_phase=from_phase, fixed_buys=tuple(fixed_buys), to_phase=to_phase,
    )
    m.pms = {p: (m.pm if not tl.offline_nodes(p) else power_model(ix, tl.offline_nodes(p))) for p in m.points}
    _fixed_loads(m)
    add_retrofit_variables(m)
    add_count_variables(m)
    add_fabric_constraints(m)
    _expressions(m)
    add_space_constraints(m)
    add_retrofit_gates(m)
    add_group_load_definitions(m)
    add_power_constraints(m)
    add_cooling_constraints(m)
    add_pod_constraints(m)
    add_cluster_constraints(m)
    add_spread_constraints(m)
    add_budget_constraints(m)
    if elastic:
        prob.setObjective(pulp.lpSum(m.slack[k] * (1.0 / max(m.limits[k].limit, 1.0)) for k in m.slack))
    else:
        prob.setObjective(objective_expr(m, objective))
    return m
