"""Scenario schema (§8): the planning question: a site, a catalog, clusters to place, the
objective, budgets, phases, retrofits, installed racks, fabric designs and solver settings."""

from __future__ import annotations

import calendar
import functools
import math
from collections.abc import Iterable, Mapping
from datetime import date, timedelta
from types import MappingProxyType
from typing import Literal

from pydantic import Field, model_validator

from planner.enums import Demand, FabricKind, FailoverPolicy, Objective, RackLimitBasis, Scope
from planner.schema.backup import BackupPower
from planner.schema.base import (
    MAX_ITEMS,
    Bool,
    Day,
    Float,
    Id,
    Int,
    NonNegFloat,
    PositiveFloat,
    StrictModel,
    Text,
)
from planner.schema.catalog import Catalog, RackType
from planner.schema.costs import Costs
from planner.schema.grid import GridQuestions, Maintenance, PowerSource, PowerStability, PowerStep, Water
from planner.schema.plan import PlacedRack
from planner.schema.reliability import Reliability
from planner.schema.retrofits import BuildStructure, Retrofit
from planner.schema.site import Site
from planner.schema.solver import SolverSettings


class Cluster(StrictModel):
    """A training cluster or deployment group to place (§8)."""

    id: Id
    """Name, unique among clusters."""
    gpus: Int | None = Field(None, ge=0, le=100_000_000)
    """GPUs wanted; with demand `max` an optional upper limit."""
    demand: Demand = Demand.exact
    """exact: exactly `gpus`; at_least: `gpus` or more; max: as many as fit (up to `gpus` if set)."""
    rack_types: list[Id] = Field(min_length=1, max_length=1000)
    """Rack types the cluster may use."""
    max_hops: Int = Field(7, ge=1, le=100)
    """Hop budget between any two of its GPUs: with default tiers 3 → one pod,
    5 → one building, 7 → anywhere on the site."""
    min_hbm_gb_per_gpu: Float | None = Field(None, gt=0, le=100_000)
    """Least HBM per GPU the cluster's model needs, GB (e.g. 141 to require H200); rack types with
    less are not used for it."""
    storage_racks: Int = Field(0, ge=0, le=100_000)
    """Storage racks placed with the cluster, inside its hop scope (they draw power, make heat and
    take positions like any rack)."""
    storage_rack_type: Id = "storage-rack"
    """Rack type of its storage racks (a catalog type of kind storage)."""
    gpus_by_phase: dict[Id, Int] | None = Field(None, max_length=1000)
    """Phased scenarios: GPUs wanted from each named phase on (a cluster grows; phases not named
    keep the previous figure; before its first named phase it wants none). Read with ``demand``.
    Without it, ``gpus`` applies from the first phase."""
    fabrics: list[Id] | None = Field(None, min_length=1, max_length=100)
    """Fabric designs (scenario ``fabrics``) this cluster may be built on: one fixes it, several let
    the optimiser choose; none prices the fabric per GPU (site ``fabric.cost_usd_per_gpu``)."""
    max_share_per_power_node: Float | None = Field(None, gt=0, le=1)
    """Failure-domain spread (§11): the largest share of the cluster's GPUs that the failure of any
    one power node may take down (rows it leaves without a feed; for a ``shed`` cluster also the
    rows it hits). None: no limit."""
    max_share_per_cooling_zone: Float | None = Field(None, gt=0, le=1)
    """The largest share of the cluster's GPUs in any one cooling zone or liquid loop (a zone that
    fails beyond its redundant units takes down all its racks)."""
    max_share_per_pod: Float | None = Field(None, gt=0, le=1)
    """The largest share of the cluster's GPUs in any one network pod."""
    max_latency_us: Float | None = Field(None, gt=0, le=1e6)
    """Longest one-way propagation delay between two of its GPUs, µs: with a region tier, the fibre
    between the buildings it stands in (5 µs per km) must stay within it. None: no limit."""
    region_share_km: Float | None = Field(None, ge=0, le=100_000)
    """This cluster is one building's share of a job that spans the region (a decomposition sets it
    for each building's part of a spanning cluster): its fabric sends region links up from every
    building it stands in, over this many km of fibre to the region tier's building, whose switches
    are placed with the whole region's plan (none here). None: it spans only where its racks do."""
    on_power_failure: FailoverPolicy = FailoverPolicy.keep
    """keep (default, strict N-1), cap (its racks in rows a failure hits draw at most
    ``cap_ratio`` of planning power) or shed (they may lose power): SPEC §4, after Flex (ISCA 2021)."""
    cap_ratio: Float = Field(0.6, ge=0, le=1)
    """Share of planning power a ``cap`` cluster's racks keep in a contingency (0.6: the example of
    SPEC §4)."""
    checkpoint_gb_per_gpu: Float | None = Field(None, gt=0, le=1_000_000)
    """Checkpoint size per GPU, GB (Llama 3 paper: 1 MB to 4 GB per GPU); none: no goodput figures."""
    restart_min: Float = Field(10.0, ge=0, le=100_000)
    """Time to restart the job after an interruption, minutes (estimate: no figure in the shared facts)."""
    checkpoint_s: Float | None = Field(None, gt=0, le=1_000_000)
    """Seconds a checkpoint stalls the job when it is kept in host memory or on peers instead of
    storage racks (in-memory or peer checkpointing): the checkpoint time wherever the cluster's
    storage racks give no write bandwidth. None: checkpoints go to storage racks only."""
    cold_restart_min: Float | None = Field(None, ge=0, le=100_000)
    """Time to restart the job after a power loss (a utility outage without ride-through), minutes:
    a cold restart reloads from durable storage and re-forms the job. None: ``restart_min``."""
    storage_pb: Float | None = Field(None, gt=0, le=1e6)
    """Storage capacity the cluster needs, PB: storage racks enough for it are placed in its scope."""
    storage_write_gb_per_s: Float | None = Field(None, gt=0, le=1e9)
    """Checkpoint write bandwidth the cluster needs, GB/s (storage racks placed in its scope)."""
    goodput_target: Float | None = Field(None, gt=0, lt=1)
    """Goodput the cluster must reach (first-order Young/Daly, §11): implies the write bandwidth
    its checkpoints need, hence storage racks (needs gpus and checkpoint_gb_per_gpu)."""
    spare_availability: Float | None = Field(None, gt=0, lt=1)
    """Hot spares: place enough spare racks (of its first GPU rack type, in its scope) that the
    racks down at once exceed the spares with at most 1 − this probability (Poisson, §11)."""
    repair_hours: Float = Field(24.0, gt=0, le=100_000)
    """Time to repair a failed rack, h (estimate: no figure in the shared facts); a failed server
    of an NVLink domain (catalog ``nvlink_domain_gpus``) is out of its domain as long."""
    domain_spare_servers: Int = Field(0, ge=0, le=1000)
    """Servers (compute trays) per NVLink domain held as hot spares: the job runs on the rest of
    the domain, and a failed tray is replaced by a spare of its own domain, so the domain stays in
    the job while at most this many of its trays are under repair (goodput, §19)."""

    @model_validator(mode="after")
    def _gpus_given(self) -> Cluster:
        if self.demand != Demand.max and self.gpus is None and self.gpus_by_phase is None:
            raise ValueError(f"gpus is required when demand is '{self.demand.value}'")
        if self.goodput_target is not None and (self.gpus is None or self.checkpoint_gb_per_gpu is None):
            raise ValueError("goodput_target needs gpus and checkpoint_gb_per_gpu (the checkpoint to write)")
        if self.spare_availability is not None and self.gpus is None:
            raise ValueError("spare_availability needs gpus (the racks the spares cover)")
        for k, v in (self.gpus_by_phase or {}).items():
            if v < 0 or v > 100_000_000:
                raise ValueError(f"gpus_by_phase.{k}: {v} is outside 0..100,000,000")
        return self


class Phase(StrictModel):
    """A step of a fleet expansion (§8)."""

    id: Id
    """Name, unique among phases."""
    start: Day
    """First day of the phase (a YAML date, e.g. 2026-01-01); phases are listed in time order."""
    name: Text = ""
    """Free text."""


class Supply(StrictModel):
    """Racks of one type deliverable in a phase (§17: GPU allocations). Racks delivered and not yet
    placed stay for later phases; a rack type with supply entries gets nothing in the phases they do
    not name; a type without entries is not limited."""

    rack_type: Id
    """Catalog rack type."""
    phase: Id | None = None
    """Phase of the delivery (none: the first phase, or a scenario without phases)."""
    racks: Int = Field(ge=0, le=10_000_000)
    """Racks (multi-rack units count one each) delivered."""
    source: Text = ""
    """Where the figure comes from (an allocation letter, a forecast, an estimate)."""


class SwitchSupply(StrictModel):
    """Switches of a catalog model deliverable for the designed fabrics (§17): the count is what
    can be had for the whole build (every switch that stands by the horizon)."""

    switch: Id
    """Catalog switch model."""
    count: Int = Field(ge=0, le=10_000_000)
    """Switches delivered."""
    source: Text = ""
    """Where the figure comes from."""


def life_end(start: date, years: float) -> date:
    """The day a service life of ``years`` begun on ``start`` ends, by the calendar: whole months
    (12 a year) added month by month (the 31st becomes the month's last day), the rest of a month as
    that share of the next month's days. A 2-year life from 2026-01-01 ends 2028-01-01."""
    months = years * 12
    whole = math.floor(months + 1e-9)
    y, m = divmod(start.month - 1 + whole, 12)
    year, month = start.year + y, m + 1
    end = date(year, month, min(start.day, calendar.monthrange(year, month)[1]))
    rest = months - whole
    if rest > 1e-9:
        end += timedelta(days=math.ceil(rest * calendar.monthrange(year, month)[1] - 1e-9))
    return end


class ServiceLife(StrictModel):
    """How long racks of a type serve (§17 refresh)."""

    years: Float = Field(gt=0, le=100)
    """Service life, years: a rack retires at the first phase starting on or after the day its life
    ends by the calendar (:func:`life_end`, counted from the start of the phase it was placed in;
    its position, power, cooling and pod ports are free from then), and its equipment capex
    depreciates straight-line over it (book value at the horizon credited in TCO)."""
    removal_cost_usd: NonNegFloat = 0
    """Cost of taking one rack out when it retires, USD (de-installation, transport, disposal), paid
    in the phase it retires."""
    source: Text = ""
    """Where the figures come from."""


class Future(StrictModel):
    """A demand future (§17): what each named cluster wants per phase if this future comes, and
    how likely it is. Clusters it does not name keep the scenario's demand."""

    id: Id
    """Name, unique among futures (e.g. slow, expected, fast)."""
    probability: Float = Field(gt=0, le=1)
    """Probability of this future; the futures' probabilities sum to 1."""
    gpus_by_phase: dict[Id, dict[Id, Int]] = Field(default_factory=dict, max_length=10_000)
    """Cluster → phase → GPUs wanted from that phase on (as the cluster's ``gpus_by_phase``, which
    it replaces in this future)."""
    source: Text = ""
    """Where the forecast comes from."""


class Budgets(StrictModel):
    """Caps on the whole expansion; none means no cap."""

    capex_usd: Float | None = Field(None, ge=0, le=1e15)
    """Most capex (racks + fabric + links), USD."""
    it_power_kw: Float | None = Field(None, ge=0, le=1e9)
    """Most IT power of all placed racks, kW."""
    t_co2_per_year: Float | None = Field(None, ge=0, le=1e12)
    """Most Scope 2 emissions in any phase, t CO2 per year (§21; needs ``power_sources``)."""
    peak_water_l_per_s: Float | None = Field(None, ge=0, le=1e9)
    """Most design-day water draw in any phase, L/s (§21; needs ``water``)."""


class FabricDesign(StrictModel):
    """A fabric sized from its topology (§13): a folded Clos of catalog switches."""

    id: Id
    """Name, unique among designs."""
    kind: FabricKind
    """roce or infiniband (its switches must be of this kind)."""
    description: Text = ""
    """Free text."""
    tiers: Literal[2, 3] = 2
    """Leaf/spine (2) or leaf/spine/core (3)."""
    switches: list[Id] = Field(min_length=2, max_length=3)
    """Switch model per tier, leaf first (one per tier)."""
    oversubscription: list[Float] = Field(default_factory=lambda: [1.0], min_length=1, max_length=2)
    """Down:up bandwidth per tier below the top, leaf first: 1 = non-blocking, 7 = 7:1, 0.5 = 1:2
    (Meta RoCE: rack switch 1:2 under-subscribed, cluster switch 7:1 above the pod)."""
    leaf_in_rack: Bool = False
    """Leaves are the GPU racks' own top-of-rack switches (Meta's RTSW; their power and price are in
    the rack type): one leaf per GPU rack. Otherwise leaves stand in the pod's network racks."""
    rail_optimized: Bool = False
    """Each server's NICs go to different leaves (one rail per GPU of a server): leaves come in
    multiples of the servers' GPUs."""
    nics_per_gpu: Int = Field(1, ge=1, le=16)
    """Fabric ports per GPU."""
    rack_units: Int = Field(42, ge=1, le=100)
    """Usable units of one network rack."""
    spines_for: Literal["cluster", "largest_build"] = "cluster"
    """Size the spine tier for the cluster as it is (``cluster``: ⌈leaf uplinks ÷ spine ports⌉) or
    for the largest build of its growth step (``largest_build``: leaves rounded up to a power of
    two, so every leaf's uplinks spread evenly and the fabric grows without recabling; NVIDIA's
    DGX SuperPOD H100 reference keeps 16 spines from 3 scalable units on)."""
    in_rack_link: Id = "dac"
    """Link class of a GPU's link to a leaf in its own rack (``leaf_in_rack``): in-rack copper,
    priced and powered per link, with no cable length (default passive DAC)."""

    @model_validator(mode="after")
    def _shape(self) -> FabricDesign:
        if len(self.switches) != self.tiers:
            raise ValueError(
                f"switches: {len(self.switches)} given, a {self.tiers}-tier design names one per tier"
            )
        if len(self.oversubscription) != self.tiers - 1:
            raise ValueError(
                f"oversubscription: {len(self.oversubscription)} given, a {self.tiers}-tier design states "
                f"{self.tiers - 1} (every tier below the top)"
            )
        if any(x <= 0 or x > 1000 for x in self.oversubscription):
            raise ValueError("oversubscription: each ratio is down:up bandwidth, > 0 and ≤ 1000")
        return self


class RegionTier(StrictModel):
    """An aggregation tier above the building fabrics (§13; Meta's backend aggregation, 2026): a
    cluster whose racks stand in more than one building reaches across through it."""

    switch: Id
    """Switch model of the tier (catalog; Meta: modular chassis of up to 432 × 800G ports)."""
    oversubscription: Float = Field(4.5, gt=0, le=1000)
    """Bandwidth of a building's spines (GPU endpoints) to the tier's (Meta: about 4.5:1)."""
    building: Id
    """Building whose network rows hold the tier's racks."""
    fibre_usd_per_km: NonNegFloat = 1500.0
    """Fibre between buildings per link per km, USD (estimate, with its two single-mode optics
    priced by the longest link class)."""
    us_per_km: PositiveFloat = 5.0
    """Propagation delay of fibre, µs per km (light in glass: about 5 µs/km)."""
    hops: Int = Field(2, ge=0, le=10)
    """Switch hops the tier adds between two GPUs in different buildings (up into it and down)."""
    building_tbps: dict[Id, PositiveFloat] = Field(default_factory=dict, max_length=10_000)
    """Building → the bandwidth between it and the tier, Tb/s (its fibre and the tier's ports for
    it): the region links of every cluster spanning from that building, each at the tier switch's
    port speed, fit within it (Meta's BAG: 16–48 Pb/s between regions). A building not named: no
    limit."""


class Scenario(GridQuestions, StrictModel):
    """The planning question: a site, a catalog and what to place (§8)."""

    name: Id
    """Scenario name."""
    description: Text = ""
    """Free text."""
    site: Site
    """The site (a path to a site YAML, or inline)."""
    catalog: Catalog = Catalog()
    """Rack types merged over the built-in catalog (a path, or inline)."""
    clusters: list[Cluster] = Field(min_length=1, max_length=MAX_ITEMS)
    """What to place."""
    objective: Objective = Objective.max_gpus
    """max_gpus (default: most GPUs; in phased scenarios GPU-phases, so earlier is better), max_pflops
    (most dense BF16 PFLOPS, likewise), min_capex (meet every demand at the least capex) or min_tco
    (meet every demand at the least net present cost over the horizon, :class:`Costs`). Ties are
    broken by least cable cost, then by least cable length."""
    budgets: Budgets = Budgets()
    """Capex and IT-power caps."""
    gpu_power_cap_w: Float | None = Field(None, gt=0, le=100_000)
    """Cap on every GPU's power, W; none for TDP."""
    power_budget_ratio: Float | None = Field(None, gt=0, le=1)
    """Plan each rack at this share of its rated power (e.g. 0.82 for measured
    peak: 8.4 kW of 10.2 kW; source: Latif et al., arXiv 2412.08602)."""
    pue: Float = Field(1.08, ge=1, le=3)
    """Power usage effectiveness (default 1.08, Meta 2023; source: Meta sustainability report): the
    annual figure, for energy and costs."""
    design_day_pue: Float | None = Field(None, ge=1, le=3)
    """PUE on the design day (the ASHRAE 0.4 % design temperature: chillers and dry coolers at their
    worst), for power arriving over time: what the interconnect and generation must carry. 1.15-1.25
    is typical for halls at an annual 1.08-1.1 (estimate from vendor design guides, reference facts).
    None: the annual ``pue``."""
    phases: list[Phase] = Field(default_factory=list, max_length=100)
    """Fleet-expansion phases in time order; none for a single placement question."""
    retrofits: list[Retrofit] = Field(default_factory=list, max_length=10_000)
    """Changes the optimiser may buy."""
    backup_power: BackupPower | None = None
    """Backup power designs per building and the outages they face (§16); none: every building rides
    through (the power tree's own N-1 is all the planner checks)."""
    power_arrival: list[PowerStep] = Field(default_factory=list, max_length=1000)
    """Region power arriving over time (§16): in each phase the facility load, IT × design-day PUE (racks,
    installed racks and network racks standing then), fits the MW arrived by then. None: no
    region-level power limit beyond the power tree."""
    lead_phases: dict[Id, Int] = Field(default_factory=dict, max_length=10_000)
    """Rack type → phases between ordering a rack and its standing (§17): racks of the type stand
    from that many phases after the first phase the plan decides; a rolling plan, which orders only
    for the phase it plans, cannot place them. Retrofits state their own lead time."""
    supply: list[Supply] = Field(default_factory=list, max_length=10_000)
    """Racks of a type deliverable per phase (§17); racks placed by a phase fit what was delivered by
    then. None: every rack type in any number."""
    switch_supply: list[SwitchSupply] = Field(default_factory=list, max_length=10_000)
    """Switches of a model deliverable for the designed fabrics (§17): every switch of the model in
    every cluster's fabric (leaves in GPU racks too) fits what is delivered. None: not limited."""
    service_life: dict[Id, ServiceLife] = Field(default_factory=dict, max_length=10_000)
    """Rack type → its service life (§17): racks retire when it ends and may be replaced (phased
    scenarios). Installed racks without a phase are never retired. None: racks serve to the end."""
    futures: list[Future] = Field(default_factory=list, max_length=100)
    """Demand futures with probabilities (§17): ``planner plan --mode stochastic`` fixes the first
    phase for all of them and adapts the later phases to each. None: demand is known."""
    existing: list[PlacedRack] = Field(default_factory=list, max_length=10_000_000)
    """Racks already installed (brownfield): fixed, counted in every load, positions taken. In a
    scenario file: a path to a plan YAML (inside the scenario's folder, like site:) or a list."""
    costs: Costs = Costs()
    """Cost parameters (§10)."""
    fabrics: list[FabricDesign] = Field(default_factory=list, max_length=100)
    """Fabric designs clusters may be built on (§13)."""
    region_tier: RegionTier | None = None
    """The aggregation tier joining the buildings' fabrics (§13); none: clusters on designed fabrics
    stay in one building."""
    reliability: Reliability = Reliability()
    """Interruption model for MTBF, checkpoint interval, goodput and spares (§11)."""
    network_allowance: Bool = True
    """Every GPU rack outside a designed fabric draws its type's back-end network (catalog
    ``network_w_per_gpu``: switches and optics standing in network rows) in power arrival, energy,
    the facility build (racks placed) and IT kW, at its building's PUE, installed racks too; false:
    the pods' network racks are the whole network."""
    rack_limit_on: RackLimitBasis = RackLimitBasis.nameplate
    """What a row's max_rack_power_kw is checked against: the rack's nameplate power (rated,
    with any GPU cap applied; default) or its planning power (rated × power_budget_ratio, when
    the site plans its rack feeds on measured peak)."""
    power_stability: PowerStability | None = None
    """Training swings and what absorbs them (§21); none: swings are not checked."""
    power_sources: dict[Id, PowerSource] = Field(default_factory=dict, max_length=1000)
    """Source → its price and carbon (§21): each phase's energy dispatched over the sources arrived
    by then (power arrival steps name theirs); none: energy at ``costs.energy_usd_per_kwh``, no
    emissions."""
    water: Water | None = None
    """Water per kWh and on the design day (§21); none: water is not counted."""
    maintenance: list[Maintenance] = Field(default_factory=list, max_length=100)
    """Concurrent maintainability (§21): classes whose elements may be out for maintenance while N-1
    still holds; none: N-1 only."""
    solver: SolverSettings = SolverSettings()
    """Solver, time limit and gap."""

    @property
    def phase_at(self) -> Mapping[str, int]:
        """Phase ID → its index (read-only; one cached map per list of phase IDs)."""
        return _phase_index(tuple(p.id for p in self.phases))

    @property
    def arrival_pue(self) -> float:
        """The PUE power arrival is checked at: the design day's, else the annual."""
        return self.design_day_pue if self.design_day_pue is not None else self.pue

    def power_available_kw(self, phase_index: int) -> float | None:
        """Facility power arrived by the phase with this index (0 without phases), kW; None when
        the scenario states no arrival."""
        if not self.power_arrival:
            return None
        order = self.phase_at
        return 1000 * sum(
            s.interconnect_mw + s.generation_mw
            for s in self.power_arrival
            if order.get(s.phase, 0) <= phase_index
        )

    def supply_upto(self, rack_type: str, phase_index: int) -> int | None:
        """Racks of ``rack_type`` delivered by the phase with this index (0 without phases); None when
        the type is not limited."""
        mine = [s for s in self.supply if s.rack_type == rack_type]
        if not mine:
            return None
        order = self.phase_at
        return sum(s.racks for s in mine if order.get(s.phase, 0) <= phase_index)

    def in_future(self, future_id: str) -> Scenario:
        """This scenario as if future ``future_id`` were known: its clusters' demand replaced by the
        future's, no futures left."""
        f = next(x for x in self.futures if x.id == future_id)
        clusters = [
            c.model_copy(update={"gpus_by_phase": dict(f.gpus_by_phase[c.id])})
            if c.id in f.gpus_by_phase
            else c
            for c in self.clusters
        ]
        return self.model_copy(update={"clusters": clusters, "futures": []})

    def costs_in(self, building: str | None) -> Costs:
        """The costs of a rack standing in ``building``: the scenario's, with a structure's own
        facility rate (and its life, for the build's book value) where one builds it."""
        for r in self.retrofits:
            e = r.effect
            if e.kind == "build_structure" and e.building == building and e.facility_usd_per_mw is not None:
                life = e.life_years if e.life_years is not None else self.costs.facility_life_years
                return self.costs.model_copy(
                    update={"facility_usd_per_mw": e.facility_usd_per_mw, "facility_life_years": life}
                )
        return self.costs

    def _structure(self, building: str | None) -> BuildStructure | None:
        """The structure a retrofit builds as ``building`` (the first one naming it), if any."""
        for r in self.retrofits:
            if r.effect.kind == "build_structure" and r.effect.building == building:
                return r.effect
        return None

    def pue_in(self, building: str | None) -> float:
        """Annual PUE of a rack standing in ``building``: its structure's own, else the scenario's."""
        e = self._structure(building)
        return e.pue if e is not None and e.pue is not None else self.pue

    def arrival_pue_in(self, building: str | None) -> float:
        """Design-day PUE of a rack standing in ``building`` (power arrival): its structure's design-day
        PUE, else its structure's annual PUE, else the scenario's ``arrival_pue``."""
        e = self._structure(building)
        if e is not None and e.design_day_pue is not None:
            return e.design_day_pue
        if e is not None and e.pue is not None:
            return e.pue
        return self.arrival_pue

    def own_rate(self, building: str | None) -> bool:
        """Whether a structure's own facility rate replaces the building rate in ``building``."""
        return self.costs_in(building) is not self.costs

    @property
    def retires(self) -> bool:
        """Whether a rack may retire within the phases (a service life ending before the last phase
        for a rack placed in some phase): space, ports and loads then change phase by phase."""
        return any(self.retire_index(t, p.id) is not None for t in self.service_life for p in self.phases)

    def retire_index(self, rack_type: str, placed: str | None) -> int | None:
        """Index of the phase from which a rack of ``rack_type`` placed in phase ``placed`` no longer
        stands (the first phase starting at least its service life after ``placed`` starts); None when
        it stands to the last phase (no service life, no phases, no phase given, or none that late)."""
        life = self.service_life.get(rack_type)
        if life is None or placed is None or not self.phases:
            return None
        order = self.phase_at
        if placed not in order:
            return None
        end = life_end(self.phases[order[placed]].start, life.years)
        for i in range(order[placed] + 1, len(self.phases)):
            if self.phases[i].start >= end:
                return i
        return None

    def standing(self, racks: Iterable[PlacedRack], index: int | None = None) -> list[PlacedRack]:
        """The racks standing in the phase with this index (default: the last): installed ones and
        those placed by then, less those retired (§17). Without phases: all of them."""
        racks = list(racks)
        if not self.phases:
            return racks
        at = len(self.phases) - 1 if index is None else index
        order = self.phase_at
        out = [r for r in racks if r.existing or order.get(r.phase, 0) <= at]
        if self.service_life:
            until: dict[tuple[str, str | None], int | None] = {}
            for r in out:
                if (r.rack_type, r.phase) not in until:
                    until[r.rack_type, r.phase] = self.retire_index(r.rack_type, r.phase)
            out = [r for r in out if (u := until[r.rack_type, r.phase]) is None or at < u]
        return out

    def positions_held(self, racks: Iterable[PlacedRack]) -> set[tuple[str, int]]:
        """(row, position) of every position the racks take: a multi-rack unit its width from the
        position it is placed at."""
        types = self.catalog.by_id()
        return {
            (r.row, r.position + k)
            for r in racks
            for k in range(types[r.rack_type].width if r.rack_type in types else 1)
        }

    def rack_power_kw(self, rack: RackType) -> float:
        """Planning power of one rack of this type under this scenario, kW: GPUs at
        min(TDP, gpu_power_cap_w), the whole rack × power_budget_ratio (both optional)."""
        return rack.planning_power_kw(self.gpu_power_cap_w, self.power_budget_ratio)

    @property
    def designed(self) -> frozenset[str]:
        """IDs of the clusters on a designed fabric (§13): their network is sized, so their racks
        draw no back-end network allowance and pay no per-GPU fabric cost."""
        return frozenset(c.id for c in self.clusters if c.fabrics)

    def allowance_kw(self, rack: RackType) -> float:
        """Back-end network power one rack outside a designed fabric draws, kW: GPUs ×
        ``network_w_per_gpu`` ÷ 1000 (0 with ``network_allowance`` false)."""
        return rack.gpus * rack.network_w_per_gpu / 1000.0 if self.network_allowance else 0.0

    def rack_limit_power_kw(self, rack: RackType) -> float:
        """Power checked against a row's per-rack limit, kW (see :attr:`rack_limit_on`)."""
        if self.rack_limit_on == RackLimitBasis.planning:
            return self.rack_power_kw(rack)
        return rack.nameplate_power_kw(self.gpu_power_cap_w)

    def position_limit_power_kw(self, rack: RackType) -> float:
        """Power at one position checked against a row's per-rack limit, kW: the rack's, or a
        multi-rack unit's largest part (its share of the unit's power)."""
        return self.rack_limit_power_kw(rack) * rack.position_power_share

    def gpu_types_for(self, cluster: Cluster) -> list[str]:
        """A cluster's rack types that exist and meet its HBM need, in its order."""
        types = self.catalog.by_id()
        need = cluster.min_hbm_gb_per_gpu
        return [
            t
            for t in cluster.rack_types
            if t in types and (need is None or types[t].hbm_gb_per_gpu >= need - 1e-9)
        ]

    def scope_of(self, cluster: Cluster) -> Scope:
        """Where a cluster may spread, from its hop budget and the site's hop tiers."""
        return self.site.fabric.hops.scope(cluster.max_hops)


@functools.lru_cache(maxsize=256)
def _phase_index(ids: tuple[str, ...]) -> Mapping[str, int]:
    return MappingProxyType({p: i for i, p in enumerate(ids)})
