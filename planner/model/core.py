"""The model object: a PuLP problem plus the maps from its pieces back to the site.

Every input and output of a constraint family is a field declared on :class:`Model` (nothing is
attached on the fly); what a family needs first is declared with it (:mod:`planner.model.registry`),
and every row it adds lands in its labelled block, :attr:`Model.blocks`.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field

import pulp

from planner.clock import Deadline, TimeUp
from planner.enums import LimitKind, Scope
from planner.input.power_model import PowerModel
from planner.input.site_index import SiteIndex
from planner.input.timeline import Timeline
from planner.model.keys import BuyKey, ClassKey, CountKey, LimitKey, ScopeKey, lp_name
from planner.model.registry import Family, OrderError
from planner.schema import Cluster, RackType, Scenario


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


def runs(positions) -> list[list[int]]:
    """Maximal runs of consecutive position indices (reserved positions and network-rack spots are
    not in a class, so they break runs), in index order."""
    out: list[list[int]] = []
    for q in sorted(positions):
        if out and q == out[-1][-1] + 1:
            out[-1].append(q)
        else:
            out.append([q])
    return out


def unit_slots(cls: PositionClass, width: int) -> int:
    """Units of ``width`` adjacent positions a class holds: Σ over its runs of ⌊run / width⌋ (the
    class size for width 1)."""
    if width <= 1:
        return cls.size
    return sum(len(r) // width for r in runs(pos for _, pos in cls.positions))


@dataclass
class ClusterGroup:
    """Clusters the model treats as one (:mod:`planner.model` docstring); ``members`` in scenario order."""

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
    kind: LimitKind
    """What is limited, in the plan's utilisation terms."""
    fixed: float = 0.0
    """Part of the capacity taken by fixed load (network racks), already off ``limit``."""

    @property
    def family(self) -> str:
        """The row-name prefix of the limit (``space``, ``power_n1`` …)."""
        return self.key.family

    @property
    def ident(self) -> str:
        return self.key.ident

    @property
    def failed(self) -> str:
        return self.key.failed


@dataclass
class Needs:
    """Retrofits a rack type needs in a row: each entry a list of alternatives (any one will do)."""

    loop: list[str] = field(default_factory=list)
    power: list[str] = field(default_factory=list)
    structure: list[str] = field(default_factory=list)
    """Structures to build (the row's building is one)."""

    @property
    def any(self) -> bool:
        return bool(self.loop or self.power or self.structure)


@dataclass(frozen=True)
class FixedItem:
    """A rack that stands in every plan: a pod's network rack or an installed rack."""

    row: str
    kw: float
    online: int
    """Phase index from which it stands."""
    rack_type: RackType
    until: int | None = None
    """Phase index from which it no longer stands (retired at the end of its service life); None: never."""
    net_kw: float = 0.0
    """Its back-end network allowance, kW: drawn outside its row (power arrival, not the power tree)."""

    def stands(self, p: int) -> bool:
        """Whether it stands in phase index p."""
        return self.online <= p and (self.until is None or p < self.until)


def build_until(deadline: Deadline) -> float:
    """The perf_counter time a build must stop by: the deadline less what answering "no plan"
    takes (the figures of an empty plan over the whole site): 10% of the limit, 0.3-5 s."""
    return deadline.at - min(5.0, max(0.3, 0.1 * deadline.limit_s))


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
    aggregate: bool = True
    elastic: bool = False
    """Give every capacity limit a slack (for explaining infeasibility)."""
    objective_name: str = ""
    """What the model's objective is, in words (the scenario's objective, or the elastic one)."""
    deadline: Deadline | None = None
    """The run's time limit: every variable, constraint or expression added checks it (a build
    stops within moments of the limit, not at the end of a family; a look costs ~0.1 µs)."""
    ticks: int = 0
    from_phase: int = 0
    """First phase index the model may add racks or buy retrofits in (rolling: the current one)."""
    fixed_buys: tuple = ()
    """(retrofit, phase) bought before this model (rolling)."""
    to_phase: int = -1
    """Last phase index the model decides (rolling: the current one; -1: the last)."""

    # given by the families (each names the family that fills it)
    pms: dict[int, PowerModel] = field(default_factory=dict)
    """Phase index → the power model of what is online then (change points only): build()."""
    fixed_items: list[FixedItem] = field(default_factory=list)
    """Network racks and installed racks: fixed_loads."""
    fixed_row_kw: dict[str, float] = field(default_factory=dict)
    """Fixed load per row, kW: fixed_loads."""
    fixed_heat: dict[str, float] = field(default_factory=dict)
    """Fixed heat per cooling zone, kW: fixed_loads."""
    existing_pod_gpus: dict[str, int] = field(default_factory=dict)
    existing_pod_racks: dict[str, int] = field(default_factory=dict)
    existing_gpus: dict[str, int] = field(default_factory=dict)
    """Cluster → GPUs of its racks already installed: fixed_loads."""
    existing_home: dict[str, set[str]] = field(default_factory=dict)
    """Cluster → pods and buildings its installed racks stand in: fixed_loads."""
    existing_kw: float = 0.0
    buy: dict[BuyKey, pulp.LpVariable] = field(default_factory=dict)
    """Retrofit bought in a phase (binary): retrofits."""
    needs: dict[tuple[ClassKey, str], Needs] = field(default_factory=dict)
    """(class, rack type) → the retrofits it needs there (empty Needs: fits as built): counts."""
    n: dict[CountKey, pulp.LpVariable] = field(default_factory=dict)
    """Rack counts: counts."""
    network_rows: dict[str, list[int]] = field(default_factory=dict)
    """Network row → its free positions, in order: new_model."""
    network_racks: dict[tuple[str, str, str, int, str], pulp.LpVariable] = field(default_factory=dict)
    """(cluster, design, network row, tier, phase) → network racks holding that tier's switches
    standing there in that phase ("" without phases): fabric."""
    network_switches: dict[tuple[str, str, str, int, str], pulp.LpVariable] = field(default_factory=dict)
    """(cluster, design, network row, tier, phase) → switches of that tier standing there then: fabric."""
    switch_need: dict[str, list] = field(default_factory=lambda: defaultdict(list))
    """Switch model → the expressions counting every switch of it the designed fabrics need by the
    horizon (§17 supply)."""
    network_kw: dict[tuple[str, str, str], pulp.LpVariable] = field(default_factory=dict)
    """(cluster, network row, phase) → the cluster's transceiver kW charged to that row then: fabric."""
    installed_network: tuple = ()
    """Network racks standing already (a rolling plan's earlier phases): their switches stay, new
    ones join them (:mod:`planner.model.fabric_racks`, :mod:`planner.plan.netfill`)."""
    network_share: dict[tuple[str, str, int, str, str, str], pulp.LpVariable] = field(default_factory=dict)
    """(cluster, design, tier, pod, network row, phase) → that pod's share of the row's switches of
    the tier, for a row serving several pods (kept once given): fabric."""
    fabric_rows: dict[int, dict[str, list[tuple[pulp.LpVariable, float]]]] = field(default_factory=dict)
    """Phase index → network row → (variable, kW) terms of the designed fabrics' power drawn there
    then (switches and transceivers standing): fabric."""
    fabric_pick: dict[tuple[str, str], pulp.LpVariable] = field(default_factory=dict)
    """(cluster, design) → 1 when the cluster is built on that design (clusters with a choice): fabric."""
    fabric_capex: pulp.LpAffineExpression | None = None
    """Designed fabrics' switches and links above the racks, USD: fabric."""
    fabric_kw: pulp.LpAffineExpression | None = None
    """Designed fabrics' switches (not in GPU racks) and transceivers, kW (exact at integer counts):
    fabric."""
    grid_vars: dict[str, dict] = field(default_factory=dict)
    """``storage_mw`` and ``floor_mw``: (building, phase index) → MW; ``energy``: (source, phase
    index) → MWh per year: swing and energy (§21)."""
    exprs: dict[str, pulp.LpAffineExpression] = field(default_factory=dict)
    """Named expressions: gpus, pflops, capex_usd, it_kw, cable_usd, cable_m, gpus:<group>: expressions."""
    group_kw: dict[str, pulp.LpVariable] = field(default_factory=dict)
    """Feed group (with its phase suffix in phased models) → its racks' load P_g, kW: loads."""
    group_eff: dict[str, pulp.LpAffineExpression] = field(default_factory=dict)
    """Feed group (with phase suffix) → its racks' load at the power their failover policy leaves
    them in a contingency, kW (only when some cluster caps or sheds): failover."""
    node_kw: dict[str, pulp.LpVariable] = field(default_factory=dict)
    """Power node (with its phase suffix) → its normal-operation load L_v (only nodes with N-1 limits), kW:
    power."""
    z: dict[ScopeKey, pulp.LpVariable] = field(default_factory=dict)
    """Members of a group homed in a pod or building: clusters."""
    homes: dict[str, set[str]] = field(default_factory=dict)
    """Group → the scopes its installed racks fix as homes: clusters."""
    limits: dict[LimitKey, Limit] = field(default_factory=dict)
    slack: dict[LimitKey, pulp.LpVariable] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)
    """Families added so far, in order."""
    blocks: dict[str, dict[str, pulp.LpConstraint]] = field(default_factory=dict)
    """Family → its rows by name, in the order added (the labelled blocks; rows added outside any
    family, such as tie-break rows of a solve, are in the block ``model``)."""
    current: Family | None = None
    """The family being added (its rows go to its block)."""
    columns: dict[str, list[pulp.LpVariable]] = field(default_factory=dict)
    """Family → the variables it made, in order (``model`` for variables made outside any family)."""
    rooms: dict[int, object] = field(default_factory=dict, repr=False)
    """Phase index → the site's power and heat room then (:func:`planner.model.room.room_at`): the
    clusters family's big-M."""
    _by_group: dict[str, list] | None = field(default=None, repr=False)
    _by_group_n: int = field(default=0, repr=False)
    _until: float | None = field(default=None, repr=False)
    _until_cache: dict = field(default_factory=dict, repr=False)

    # ---------------------------------------------------------------- helpers

    @property
    def horizon(self) -> int:
        """Index of the last phase this model decides."""
        return len(self.tl.phases) - 1 if self.to_phase < 0 else self.to_phase

    @property
    def points(self) -> list[int]:
        """Phase indices where limits are stated: where what is online changes, from the first phase
        this model decides (nothing can be added before it) up to the horizon."""
        if (
            self.scenario.retires
        ):  # racks retire: a load may fall and rise again between changes of what is online
            return list(range(self.from_phase, self.horizon + 1))
        return sorted(
            {p for p in self.tl.change_points() if self.from_phase <= p <= self.horizon} | {self.horizon}
        )

    @property
    def size(self) -> dict[str, int]:
        """Variables, integer variables and constraints."""
        variables = self.prob.variables()
        ints = sum(1 for v in variables if v.cat == pulp.LpInteger)
        return {"variables": len(variables), "integers": ints, "constraints": self.prob.numConstraints()}

    def tick(self) -> None:
        """Count one step of building; stop with :class:`~planner.clock.TimeUp` once the build's
        share of the deadline has passed."""
        self.ticks += 1
        if self.deadline is not None:
            if self._until is None:
                self._until = build_until(self.deadline)
            if time.perf_counter() > self._until:
                raise TimeUp("building the model")

    def var(
        self, name: str, low: float | None = 0, up: float | None = None, integer: bool = False
    ) -> pulp.LpVariable:
        """A new variable, recorded with the family making it."""
        self.tick()
        v = self.prob.add_variable(
            name, lowBound=low, upBound=up, cat=pulp.LpInteger if integer else pulp.LpContinuous
        )
        self.columns.setdefault(self.current.name if self.current else "model", []).append(v)
        return v

    def add(self, constraint: pulp.LpConstraint, name: str) -> None:
        """Add a row to the problem and to the block of the family adding it."""
        self.tick()
        self.prob.addConstraint(constraint, name)
        self.blocks.setdefault(self.current.name if self.current else "model", {})[name] = constraint

    def rows(self):
        """(family, row name, row) of every row, family by family in build order."""
        return ((fam, name, c) for fam, block in self.blocks.items() for name, c in block.items())

    def counts_of(self, group: str) -> list[tuple[CountKey, pulp.LpVariable]]:
        """Count variables of one cluster group (an index built once the counts are all made)."""
        if self._by_group is None or self._by_group_n != len(self.n):
            by: dict[str, list[tuple[CountKey, pulp.LpVariable]]] = defaultdict(list)
            for key, var in self.n.items():
                by[key.group].append((key, var))
            self._by_group, self._by_group_n = dict(by), len(self.n)
        return self._by_group.get(group, [])

    def add_limit(
        self, key: LimitKey, lhs: pulp.LpAffineExpression, limit: float, unit: str, fixed: float = 0.0
    ) -> None:
        """Add lhs ≤ limit (with a slack in an elastic model) and record it; its kind is the one the
        family adding it declares for its row prefix (:class:`~planner.model.registry.LimitRows`)."""
        kind = self.limit_kind(key.family)
        parts = [key.ident, *([key.failed] if key.failed else []), *([key.phase] if key.phase else [])]
        name = lp_name(key.family, *parts)
        if self.elastic:
            s = self.var(lp_name("slack_" + key.family, *parts))
            self.slack[key] = s
            self.add(lhs - s <= limit, name)
        else:
            self.add(lhs <= limit, name)
        self.limits[key] = Limit(key, name, unit, float(limit), lhs, kind, float(fixed))

    def limit_kind(self, prefix: str) -> LimitKind:
        """The kind the current family declares for limit rows named ``prefix``."""
        rows = self.current.limits.get(prefix) if self.current else None
        if rows is None:
            fam = self.current.name if self.current else "no"
            raise OrderError(
                f"the {fam} family states {prefix} limits it does not declare (registry: "
                f"limits={{'{prefix}': ...}})"
            )
        return rows.kind

    def until(self, rack_type: str, phase: str | None) -> int:
        """Index of the phase from which racks of a type placed in ``phase`` no longer stand (the
        end of their service life, :meth:`Scenario.retire_index`); the number of phases when never."""
        key = (rack_type, phase)
        got = self._until_cache.get(key)
        if got is None:
            r = self.scenario.retire_index(rack_type, phase)
            got = self._until_cache[key] = len(self.tl.phases) if r is None else r
        return got

    def fabric_at(self, p: int) -> dict[str, list[tuple[pulp.LpVariable, float]]]:
        """Network row → the designed fabrics' (variable, kW) terms standing there in phase index p."""
        return self.fabric_rows.get(p, {})

    def upto(self, p: int):
        """(key, var) of every count standing in phase index p: added then or before, not retired."""
        if not self.scenario.service_life:
            return ((key, var) for key, var in self.n.items() if self.tl.at(key.phase) <= p)
        return (
            (key, var)
            for key, var in self.n.items()
            if self.tl.at(key.phase) <= p < self.until(key.rack_type, key.phase)
        )

    def stands(self, key: CountKey, p: int) -> bool:
        """Whether racks of a count stand in phase index p (added by then, not retired)."""
        return self.tl.at(key.phase) <= p and (
            not self.scenario.service_life or p < self.until(key.rack_type, key.phase)
        )

    def existing_pod_at(self, p: int) -> tuple[dict[str, int], dict[str, int]]:
        """GPUs and racks of installed racks standing in phase index p, per pod."""
        gpus: dict[str, int] = defaultdict(int)
        racks: dict[str, int] = defaultdict(int)
        types = self.scenario.catalog.by_id()
        for r in self.scenario.existing:
            if p < self.until(r.rack_type, r.phase):
                pod = self.ix.rows[r.row].row.pod
                gpus[pod] += types[r.rack_type].gpus
                racks[pod] += 1
        return dict(gpus), dict(racks)

    def existing_gpus_at(self, cluster: str, p: int) -> int:
        """GPUs of a cluster's installed racks standing in phase index p."""
        types = self.scenario.catalog.by_id()
        return sum(
            types[r.rack_type].gpus
            for r in self.scenario.existing
            if r.cluster == cluster and p < self.until(r.rack_type, r.phase)
        )

    def placed_upto(self, p: int):
        """(key, var) of every count added in phase index p or before (retired or not)."""
        return ((key, var) for key, var in self.n.items() if self.tl.at(key.phase) <= p)

    def sfx(self, p: int) -> list[str]:
        """The phase part of a name (nothing in a scenario without phases)."""
        return [str(self.tl.phases[p])] if self.tl.phased else []

    def ph(self, p: int) -> str:
        """Phase ID of index p ("" in a scenario without phases)."""
        return str(self.tl.phases[p]) if self.tl.phased else ""

    def at_phase(self, name: str, p: int) -> str:
        """A per-phase map key: ``name|phase`` in phased models, ``name`` otherwise."""
        return name + (f"|{self.ph(p)}" if self.tl.phased else "")

    def gkw(self, g: str, p: int) -> pulp.LpVariable | None:
        """P_g in phase index p (None: no rack can stand in the group then)."""
        return self.group_kw.get(self.at_phase(g, p))

    def effect(self, retrofit: str, p: int) -> pulp.LpAffineExpression:
        """1 when the retrofit is in effect in phase index p (bought at least lead_phases before, by
        this model or before it: ``fixed_buys``)."""
        lead = self.retrofit(retrofit).lead_phases
        expr = pulp.lpSum(
            v for k, v in self.buy.items() if k.retrofit == retrofit and self.tl.at(k.phase) + lead <= p
        )
        done = sum(1 for r, ph in self.fixed_buys if r == retrofit and self.tl.at(ph) + lead <= p)
        return expr + done if done else expr

    def retrofit(self, rid: str):
        return next(r for r in self.scenario.retrofits if r.id == rid)

    def fixed_at(self, p: int) -> dict[str, float]:
        """Fixed kW per row standing in phase index p (network racks from their row's phase, installed racks
        always)."""
        out: dict[str, float] = defaultdict(float)
        for it in self.fixed_items:
            if it.stands(p):
                out[it.row] += it.kw
        return dict(out)

    def fixed_net_at(self, p: int) -> dict[str, float]:
        """Back-end network kW of the installed racks standing in phase index p, per row they stand in."""
        out: dict[str, float] = defaultdict(float)
        for it in self.fixed_items:
            if it.net_kw and it.stands(p):
                out[it.row] += it.net_kw
        return dict(out)

    def fixed_heat_at(self, p: int) -> dict[str, float]:
        """Fixed heat per cooling zone in phase index p, kW."""
        out: dict[str, float] = defaultdict(float)
        for it in self.fixed_items:
            if not it.stands(p):
                continue
            row = self.ix.rows[it.row].row
            air, liquid = it.rack_type.heat_kw(it.kw)
            out[row.air_zone] += air
            if liquid and row.liquid_loop:
                out[row.liquid_loop] += liquid
        return dict(out)

    def scope_of_row(self, row_id: str, scope: Scope) -> str:
        """The pod or building a row belongs to."""
        ref = self.ix.rows[row_id]
        return ref.row.pod if scope == Scope.pod else ref.building


def summed(items: list[tuple[pulp.LpVariable, float]]) -> pulp.LpAffineExpression:
    """Σ coefficient × variable, a variable listed twice counted twice (a rack's own power and the
    fabric power it charges to a network-rack row in the same feed group or zone)."""
    out: dict[pulp.LpVariable, float] = defaultdict(float)
    for v, c in items:
        out[v] += c
    return pulp.LpAffineExpression([(v, round(c, 9)) for v, c in out.items()])
