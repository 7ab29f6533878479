"""Input schema: site (§3–§6), rack catalog (§7) and scenario (§8).

One strict base model: unknown keys are errors, models are frozen, and every
field states its unit in its name and its docstring. Rules that involve one
model live here as validators; rules that cross the tree (feeds exist, IDs
unique, no power cycles) live in :mod:`planner.consistency` so that all of
them are reported together.
"""

from __future__ import annotations

from datetime import date
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Strict, model_validator

from planner.enums import (
    Direction,
    FabricKind,
    FailoverPolicy,
    Medium,
    NodeKind,
    Objective,
    RackKind,
    RackLimitBasis,
    Scale,
    Scope,
    SolverName,
)

Id = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")]
Float = Annotated[float, Strict(), Field(allow_inf_nan=False)]
"""A finite number: no NaN or infinity, no booleans, no strings (an int is accepted)."""
Int = Annotated[int, Strict()]
"""A whole number: no booleans, floats or strings."""
Bool = Annotated[bool, Strict()]
"""true or false, nothing else."""
PositiveFloat = Annotated[float, Strict(), Field(gt=0, le=1e12, allow_inf_nan=False)]
NonNegFloat = Annotated[float, Strict(), Field(ge=0, le=1e12, allow_inf_nan=False)]
Coordinate = Annotated[float, Strict(), Field(ge=-1e6, le=1e6, allow_inf_nan=False)]
"""A coordinate within ±1,000 km, m."""
Text = Annotated[str, Strict(), Field(max_length=10_000)]
"""Free text (descriptions, sources), at most 10,000 characters."""
MAX_ITEMS = 100_000
"""Longest list of any kind in a site or scenario."""


class StrictModel(BaseModel):
    """Base of every input model: unknown keys rejected, values frozen."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, use_attribute_docstrings=True, validate_default=True, allow_inf_nan=False
    )


# --------------------------------------------------------------------- power


class PowerNode(StrictModel):
    """A node of the power tree: utility, substation, UPS, PDU or busway."""

    id: Id
    """Name, unique among power nodes of the site."""
    kind: NodeKind = NodeKind.other
    """What the node is; every kind obeys the same rules, and the kind sets the default derate."""
    capacity_kw: Float = Field(gt=0, le=1e7)
    """Rated capacity in kW (at most 10 GW)."""
    derate: Float | None = Field(None, gt=0, le=1)
    """Usable share of the rating for continuous load; none for the kind's default:
    0.8 for breakers, busways, PDUs and other (the 80 % continuous-load rule; source:
    NEC/NEMA rule, colocation guides), 1.0 for UPS, transformers, substations and
    utility feeds (rated in kW for continuous load)."""
    can_fail: Bool = True
    """Whether the N-1 contingency considers this node failing."""
    parent: Id | None = None
    """Upstream node this node draws from; none for a root."""
    online_phase: Id | None = None
    """Phase from which the node exists (none: from the first)."""

    @model_validator(mode="before")
    @classmethod
    def _one_parent(cls, data):
        if isinstance(data, dict) and isinstance(data.get("parent"), list):
            raise ValueError(
                "a power node has one parent (the power tree is a forest); a PDU fed from two UPS through a "
                "static transfer switch is modelled as rows hanging from two feeds, one under each UPS"
            )
        return data

    @property
    def effective_derate(self) -> float:
        """The derate in force: the stated one, else the kind's default."""
        return self.derate if self.derate is not None else self.kind.default_derate

    @property
    def usable_kw(self) -> float:
        """Usable capacity in kW: effective derate × capacity_kw."""
        return self.effective_derate * self.capacity_kw


# ------------------------------------------------------------------- cooling


class CoolingZone(StrictModel):
    """An air cooling zone or a liquid loop (§5)."""

    id: Id
    """Name, unique among cooling zones of the site."""
    medium: Medium
    """Heat-removal medium: air (CRAH/CRAC) or liquid (CDU loop)."""
    units: Int = Field(gt=0, le=100_000)
    """Number of cooling units (CRAHs or CDUs)."""
    unit_capacity_kw: Float = Field(gt=0, le=1e6)
    """Heat each unit removes, kW."""
    redundant_units: Int = Field(0, ge=0, le=100_000)
    """Units held in reserve (N+1 → 1); they add no capacity."""
    online_phase: Id | None = None
    """Phase from which the zone exists (none: from the first)."""

    @model_validator(mode="after")
    def _reserve_below_units(self) -> CoolingZone:
        if self.redundant_units >= self.units:
            raise ValueError(
                f"redundant_units ({self.redundant_units}) must be less than units ({self.units})"
            )
        return self

    @property
    def capacity_kw(self) -> float:
        """Heat the zone removes, kW: (units − redundant_units) × unit_capacity_kw."""
        return (self.units - self.redundant_units) * self.unit_capacity_kw


# ------------------------------------------------------------------- network


class LinkClass(StrictModel):
    """A cable/optic class with its reach and cost per link (§6)."""

    id: Id
    """Name, e.g. dac, aec, mmf, smf."""
    max_length_m: Float = Field(gt=0, le=1e5)
    """Longest link this class reaches, m."""
    cost_usd_per_link: NonNegFloat
    """Cost of one link (cable and both transceivers), USD."""
    power_w_per_link: Float = Field(0.0, ge=0, le=10_000)
    """Power of one link's transceivers (both ends), W; 0 for passive copper."""
    optical: Bool = False
    """Whether the link has optical transceivers (counted as optics, two per link)."""
    source: Text = ""
    """Where the reach and cost come from."""


class Hops(StrictModel):
    """Switch hops between two GPUs by how far apart they sit (§6)."""

    same_rack: Int = Field(1, ge=1, le=100)
    """Hops within one rack (through the ToR)."""
    same_pod: Int = Field(3, ge=1, le=100)
    """Hops within one pod (leaf–spine)."""
    same_building: Int = Field(5, ge=1, le=100)
    """Hops between pods of one building."""
    cross_building: Int = Field(7, ge=1, le=100)
    """Hops between buildings."""

    @model_validator(mode="after")
    def _increasing(self) -> Hops:
        tiers = [self.same_rack, self.same_pod, self.same_building, self.cross_building]
        if tiers != sorted(tiers):
            raise ValueError(
                f"hop counts must not decrease from same_rack to cross_building, got {tiers}"
            )
        return self

    def scope(self, max_hops: int) -> Scope:
        """Widest placement a hop budget allows: the whole site when it covers the cross-building
        hop count, one building for the same-building count, one pod, else one rack."""
        if max_hops >= self.cross_building:
            return Scope.site
        if max_hops >= self.same_building:
            return Scope.building
        if max_hops >= self.same_pod:
            return Scope.pod
        return Scope.rack


def default_link_classes() -> list[LinkClass]:
    """Link classes by reach (source: NVIDIA LinkX overview; NDR cabling requirements).

    Costs per link are planning estimates (cable plus two transceivers where
    optical), stated here so that every default has a visible origin.
    """
    src = "reach: NVIDIA LinkX overview / NDR cabling requirements; cost and power: planning estimates"
    return [
        LinkClass(id="dac", max_length_m=3, cost_usd_per_link=150, power_w_per_link=0.0, source=src + " (passive copper: no power)"),
        LinkClass(id="aec", max_length_m=5, cost_usd_per_link=500, power_w_per_link=12.0, source=src + " (estimate: ~6 W per active end)"),
        LinkClass(id="mmf", max_length_m=50, cost_usd_per_link=1400, power_w_per_link=24.0, optical=True,
                  source=src + " (estimate: ~12 W per 400G SR4 transceiver, two per link)"),
        LinkClass(id="smf", max_length_m=500, cost_usd_per_link=2400, power_w_per_link=24.0, optical=True,
                  source=src + " (estimate: ~12 W per 400G DR4 transceiver, two per link)"),
    ]


class Fabric(StrictModel):
    """The GPU network fabric of the site (§6)."""

    kind: FabricKind = FabricKind.roce
    """Fabric technology."""
    cost_usd_per_gpu: NonNegFloat = 4200
    """Switches and cables per GPU, USD (default ~$4.2k at 16k GPUs; source:
    tech-talk-cto "H100 freakonomics" spreadsheet)."""
    hops: Hops = Hops()
    """Hop count per distance tier (default 1/3/5/7, derived from the tiers)."""
    tray_allowance_m: Float = Field(3.0, ge=0, le=1000)
    """Extra cable for trays, added to the Manhattan distance (default 2 × 1.5 m), m."""
    link_classes: list[LinkClass] = Field(default_factory=default_link_classes, min_length=1, max_length=100)
    """Available link classes, any order; a link uses the shortest-reach
    class its rack type accepts that covers its length."""


class Location(StrictModel):
    """A position in a row: where a pod's network rack stands."""

    row: Id
    """Row ID."""
    position: Int = Field(ge=0, le=100_000)
    """Position index in the row, from 0."""


class Pod(StrictModel):
    """A network pod (AI zone, scalable unit): rows sharing one leaf/spine block."""

    id: Id
    """Name, unique among pods of the site."""
    network_rack: Location
    """Position of the pod's network rack; cables are measured to it and no
    other rack may stand there."""
    max_gpus: Int = Field(gt=0, le=100_000_000)
    """GPU ports of the pod's leaf block."""
    max_racks: Int | None = Field(None, gt=0, le=10_000_000)
    """Most racks (GPU and storage) the pod connects, its network rack aside; none for no limit."""
    network_rack_type: Id | None = "network-rack"
    """Rack type standing at the network rack position: it draws power and makes heat in every
    plan (default the built-in 12 kW network rack); none when the pod's switches sit elsewhere."""


# ---------------------------------------------------------------------- site


class Row(StrictModel):
    """A row of rack positions with its geometry, limits, feeds and zones (§3)."""

    id: Id
    """Name, unique among rows of the site."""
    positions: Int = Field(gt=0, le=10_000)
    """Number of rack positions, indexed from 0."""
    origin_x_m: Coordinate = 0.0
    """x of position 0, m."""
    origin_y_m: Coordinate = 0.0
    """y of position 0, m."""
    pitch_m: Float = Field(0.6, gt=0, le=100)
    """Distance between neighbouring positions, m (600 mm racks)."""
    direction: Direction = Direction.plus_x
    """Direction positions advance in from the origin."""
    max_rack_power_kw: Float = Field(gt=0, le=10_000)
    """Most power one rack in this row may draw, kW."""
    max_rack_weight_kg: Float = Field(1400, gt=0, le=100_000)
    """Heaviest rack the floor under this row carries, kg (default Open Rack v3
    payload 1,400 kg; source: Meta/Rittal OCP slides)."""
    feeds: list[Id] = Field(min_length=1, max_length=64)
    """Leaf power nodes the row hangs from; each rack's load splits evenly over the live ones."""
    redundant: Bool = False
    """If true, no single power-node failure may leave the row without a live feed."""
    air_zone: Id
    """Air cooling zone that removes the row's air heat."""
    liquid_loop: Id | None = None
    """Liquid loop that removes the row's liquid heat; none for air-only rows."""
    pod: Id
    """Network pod the row's racks connect to."""
    reserved: list[Int] = Field(default_factory=list, max_length=10_000)
    """Unusable position indices (columns, doors, PDUs)."""
    online_phase: Id | None = None
    """Phase from which the row exists (none: from the first, or its hall's)."""
    depth_m: Float = Field(2.4, gt=0, le=100)
    """Floor depth each position of the row takes: the rack's depth plus half of each
    neighbouring aisle, m (default 2.4 m: a 1.2 m rack and 1.2 m of aisle). A rack's floor
    load is its weight over pitch_m × depth_m."""

    @property
    def position_area_m2(self) -> float:
        """Floor area one position takes, m²: pitch_m × depth_m."""
        return self.pitch_m * self.depth_m

    def position_xy(self, index: int) -> tuple[float, float]:
        """Coordinates (x_m, y_m) of a position: origin + index × pitch along direction."""
        step = index * self.pitch_m
        dx, dy = {"+x": (step, 0.0), "-x": (-step, 0.0), "+y": (0.0, step), "-y": (0.0, -step)}[self.direction.value]
        return round(self.origin_x_m + dx, 6), round(self.origin_y_m + dy, 6)


class Hall(StrictModel):
    """A data hall: floor, rows, its part of the power tree, cooling zones and pods."""

    id: Id
    """Name, unique among halls of the site."""
    floor_area_m2: Float = Field(gt=0, le=1e7)
    """White-space floor area, m²."""
    online_phase: Id | None = None
    """Phase from which the hall exists, with everything in it (none: from the first)."""
    floor_rating_kg_per_m2: Float | None = Field(None, gt=0, le=100_000)
    """Distributed load the floor carries, kg/m² (typical raised floor ≤ 340 kg/m²; source: IBM
    floor-loading guide); none for a slab that carries any rack."""
    power_nodes: list[PowerNode] = Field(default_factory=list, max_length=MAX_ITEMS)
    """Power nodes in this hall (UPS, PDUs, busways); parents may sit in the building."""
    cooling_zones: list[CoolingZone] = Field(default_factory=list, max_length=MAX_ITEMS)
    """Air zones and liquid loops of this hall."""
    pods: list[Pod] = Field(default_factory=list, max_length=MAX_ITEMS)
    """Network pods of this hall."""
    rows: list[Row] = Field(default_factory=list, max_length=MAX_ITEMS)
    """Rows of rack positions."""


class Building(StrictModel):
    """A building: halls plus the power nodes they share (substations, utility)."""

    id: Id
    """Name, unique among buildings of the site."""
    power_nodes: list[PowerNode] = Field(default_factory=list, max_length=MAX_ITEMS)
    """Building-level power nodes (utility feed, substations, shared UPS)."""
    halls: list[Hall] = Field(min_length=1, max_length=10_000)
    """Halls in the building."""


class Site(StrictModel):
    """A site: buildings → halls → rows → positions, with its fabric (§3)."""

    id: Id
    """Site name."""
    description: Text = ""
    """Free text."""
    fabric: Fabric = Fabric()
    """GPU network fabric, hop tiers and link classes."""
    buildings: list[Building] = Field(min_length=1, max_length=10_000)
    """Buildings of the site."""
    source: Text = ""
    """How the site was made (e.g. the generator command)."""


# ------------------------------------------------------------------- catalog


class RackType(StrictModel):
    """A rack type of the catalog (§7). Rated power is derived, never typed in.

    rated_power_kw = servers_per_rack × (gpus_per_server × gpu_power_w / 1000
    + non_gpu_power_kw_per_server) + overhead_power_kw
    """

    id: Id
    """Name, unique in the merged catalog."""
    kind: RackKind = RackKind.gpu
    """What the rack holds."""
    description: Text = ""
    """Free text."""
    servers_per_rack: Int = Field(0, ge=0, le=1000)
    """Servers (or compute trays) per rack."""
    gpus_per_server: Int = Field(0, ge=0, le=1000)
    """GPUs per server."""
    gpu_power_w: Float = Field(0, ge=0, le=100_000)
    """Power of one GPU at full TDP, W."""
    non_gpu_power_kw_per_server: Float = Field(0, ge=0, le=1000)
    """Power of one server's CPUs, memory, NICs, fans and PSU losses, kW."""
    overhead_power_kw: Float = Field(0, ge=0, le=10_000)
    """Rack-level power outside servers (ToR switch, NVLink switches, fans), kW."""
    liquid_fraction: Float = Field(0.0, ge=0, le=1)
    """Share of the rack's heat removed by liquid; 0 for air-cooled."""
    weight_kg: Float = Field(gt=0, le=100_000)
    """Loaded rack weight, kg."""
    height_u: Int = Field(42, gt=0, le=100)
    """Rack height, rack units."""
    capex_usd: NonNegFloat
    """Price of the loaded rack (servers, ToR, PDUs), USD."""
    tflops_bf16_per_gpu: Float = Field(0, ge=0, le=1e7)
    """Dense BF16 TFLOPS of one GPU."""
    hbm_gb_per_gpu: Float = Field(0, ge=0, le=100_000)
    """High-bandwidth memory of one GPU, GB (H100 80, H200 141)."""
    links_per_server: Int = Field(0, ge=0, le=1000)
    """Fabric links from each server to the pod's network rack."""
    links_per_rack: Int = Field(0, ge=0, le=10_000)
    """Further fabric links per rack (storage, uplinks)."""
    link_classes: list[Id] = Field(default_factory=lambda: ["dac", "aec", "mmf", "smf"], max_length=100)
    """Link classes the rack accepts."""
    max_cable_m: Float | None = Field(None, gt=0, le=1e5)
    """Longest cable the rack accepts, m; none for the reach of its link classes."""
    storage_capacity_pb: Float = Field(0, ge=0, le=1e6)
    """Usable storage capacity, PB (storage racks)."""
    storage_write_gb_per_s: Float = Field(0, ge=0, le=1e7)
    """Sustained write bandwidth, GB/s (storage racks)."""
    sources: dict[Id, Text] = Field(default_factory=dict, max_length=100)
    """Field name → where its figure comes from."""

    @property
    def gpus(self) -> int:
        """GPUs per rack."""
        return self.servers_per_rack * self.gpus_per_server

    @property
    def links(self) -> int:
        """Fabric links per rack: servers × links_per_server + links_per_rack."""
        return self.servers_per_rack * self.links_per_server + self.links_per_rack

    @property
    def rated_power_kw(self) -> float:
        """Nameplate rack power, kW (formula in the class docstring)."""
        return self.planning_power_kw()

    def planning_power_kw(
        self, gpu_power_cap_w: float | None = None, power_budget_ratio: float | None = None
    ) -> float:
        """Power the planner reserves for one rack, kW.

        server = non_gpu_power_kw_per_server + gpus_per_server × min(gpu_power_w, cap) / 1000;
        rack = (servers_per_rack × server + overhead_power_kw) × power_budget_ratio (default 1).
        """
        gpu_w = self.gpu_power_w if gpu_power_cap_w is None else min(self.gpu_power_w, gpu_power_cap_w)
        server_kw = self.non_gpu_power_kw_per_server + self.gpus_per_server * gpu_w / 1000.0
        rack_kw = self.servers_per_rack * server_kw + self.overhead_power_kw
        return rack_kw * (1.0 if power_budget_ratio is None else power_budget_ratio)

    def heat_kw(self, power_kw: float) -> tuple[float, float]:
        """(air, liquid) heat of a rack drawing ``power_kw``: power × (1 − liquid_fraction) to
        air and power × liquid_fraction to liquid (all electrical power ends as heat, SPEC §5)."""
        return power_kw * (1.0 - self.liquid_fraction), power_kw * self.liquid_fraction

    def nameplate_power_kw(self, gpu_power_cap_w: float | None = None) -> float:
        """Rated power with any GPU cap applied (the cap is enforced by the GPUs), kW."""
        return self.planning_power_kw(gpu_power_cap_w, None)

    @property
    def hbm_tb(self) -> float:
        """HBM of the whole rack, TB."""
        return self.gpus * self.hbm_gb_per_gpu / 1000.0

    @property
    def pflops_bf16(self) -> float:
        """Dense BF16 PFLOPS of the rack."""
        return self.gpus * self.tflops_bf16_per_gpu / 1000.0


class SwitchModel(StrictModel):
    """A network switch of the catalog (§13)."""

    id: Id
    """Name, unique in the merged catalog."""
    kind: FabricKind
    """infiniband or roce (Ethernet)."""
    description: Text = ""
    """Free text."""
    ports: Int = Field(gt=0, le=100_000)
    """Ports at ``port_gbps`` (the radix k)."""
    port_gbps: Float = Field(gt=0, le=100_000)
    """Speed of one port, Gb/s."""
    power_w: Float = Field(gt=0, le=1_000_000)
    """Typical power with every port in use, W (transceivers not included)."""
    price_usd: NonNegFloat
    """Price of one switch, USD."""
    height_u: Int = Field(gt=0, le=100)
    """Rack units."""
    sources: dict[Id, Text] = Field(default_factory=dict, max_length=100)
    """Where each figure comes from ("estimate: ..." when it is one)."""


class Catalog(StrictModel):
    """A rack catalog; a user catalog merges over the built-in one by rack type ID."""

    rack_types: list[RackType] = Field(default_factory=list, max_length=10_000)
    """Rack types."""
    switches: list[SwitchModel] = Field(default_factory=list, max_length=1000)
    """Network switches fabric designs are built from."""
    source: Text = ""
    """Where the catalog comes from."""

    def by_id(self) -> dict[str, RackType]:
        """Rack types keyed by ID."""
        return {r.id: r for r in self.rack_types}

    def switch_by_id(self) -> dict[str, SwitchModel]:
        """Switch models keyed by ID."""
        return {w.id: w for w in self.switches}


# ------------------------------------------------------------------ scenario


class Demand(StrEnum):
    """How a cluster's GPU count is read."""

    exact = "exact"
    at_least = "at_least"
    max = "max"


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
    """Time to repair a failed rack, h (estimate: no figure in the shared facts)."""

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


def _iso_date(value):
    """A date, or an ISO date string (what a plan or scenario dumped as JSON holds)."""
    if isinstance(value, date):
        return value
    if isinstance(value, str) and len(value) == 10:
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise ValueError(f"expected a date like 2026-01-01, got {str(value)[:40]!r}")


Day = Annotated[date, BeforeValidator(_iso_date)]
"""A calendar date (YAML date or ISO string)."""


class Phase(StrictModel):
    """A step of a fleet expansion (§8)."""

    id: Id
    """Name, unique among phases."""
    start: Day
    """First day of the phase (a YAML date, e.g. 2026-01-01); phases are listed in time order."""
    name: Text = ""
    """Free text."""


class AddLiquidLoop(StrictModel):
    """Retrofit effect: a row gets a liquid loop (a new liquid cooling zone in the row's hall)."""

    kind: Literal["add_liquid_loop"]
    row: Id
    """Row that gets the loop."""
    loop: CoolingZone
    """The loop (medium liquid), with its units and capacity."""


class RaiseCapacity(StrictModel):
    """Retrofit effect: a power node or cooling zone gains capacity."""

    kind: Literal["raise_capacity"]
    target: Id
    """Power node or cooling zone ID."""
    add_kw: Float = Field(gt=0, le=1e7)
    """Added usable capacity, kW (for a power node: after its derate)."""


class RaiseRackPower(StrictModel):
    """Retrofit effect: a row's per-rack power limit rises (new busway taps, bigger breakers)."""

    kind: Literal["raise_rack_power"]
    row: Id
    """Row ID."""
    max_rack_power_kw: Float = Field(gt=0, le=10_000)
    """The new per-rack limit, kW."""


class Retrofit(StrictModel):
    """A change the optimiser may buy (§8): it costs ``cost_usd`` in the phase it is bought and
    takes effect ``lead_phases`` phases later."""

    id: Id
    """Name, unique among retrofits."""
    cost_usd: Float = Field(ge=0, le=1e13)
    """Price, USD (counted in capex in the phase it is bought)."""
    lead_phases: Int = Field(1, ge=0, le=100)
    """Phases between purchase and effect (0: effective in the phase it is bought)."""
    effect: Annotated[AddLiquidLoop | RaiseCapacity | RaiseRackPower, Field(discriminator="kind")]
    """What it changes."""


class Costs(StrictModel):
    """Cost parameters (§10); each default names its source or says estimate."""

    facility_usd_per_mw: Float = Field(11.7e6, ge=0, le=1e10)
    """Facility build per MW of critical IT placed, USD (average of $9.3-15.0M; Cushman & Wakefield
    Data Center Development Cost Guide 2025). Ignored when colocation_usd_per_kw_month is set."""
    colocation_usd_per_kw_month: Float | None = Field(None, ge=0, le=1e6)
    """Lease instead of build: USD per kW of IT per month (CBRE North America DC Trends H2 2024:
    $184.06); when set, the facility is opex, not capex."""
    energy_usd_per_kwh: Float = Field(0.0892, ge=0, le=100)
    """Electricity price, USD per kWh (industrial, Virginia 2023: 8.92 ¢; EIA Electric Power Annual)."""
    average_utilisation: Float = Field(0.8, ge=0, le=1)
    """Average draw as a share of planning power (estimate)."""
    maintenance_share_per_year: Float = Field(0.03, ge=0, le=1)
    """Maintenance per year as a share of rack, fabric and link capex (estimate)."""
    horizon_years: Float = Field(5.0, gt=0, le=50)
    """TCO horizon from the first phase's start, years (estimate: a GPU generation's service life)."""
    discount_rate: Float = Field(0.08, ge=0, le=1)
    """Yearly discount rate for net present value (estimate)."""


class Budgets(StrictModel):
    """Caps on the whole expansion; none means no cap."""

    capex_usd: Float | None = Field(None, ge=0, le=1e15)
    """Most capex (racks + fabric + links), USD."""
    it_power_kw: Float | None = Field(None, ge=0, le=1e9)
    """Most IT power of all placed racks, kW."""


class SolverSettings(StrictModel):
    """Which solver runs and how long (§8)."""

    name: SolverName = SolverName.highs
    """Solver: highs (default) or cbc."""
    time_limit_s: Float = Field(60, gt=0, le=604_800)
    """Wall-clock limit of one solve, s."""
    rel_gap: Float = Field(0.001, ge=0, lt=1)
    """Relative MIP gap at which the solve stops."""
    threads: Int = Field(1, ge=1, le=64)
    """Solver threads."""


class PlacedRack(StrictModel):
    """One rack of a plan (or of the racks already installed) and where it stands."""

    building: Id
    """Building ID."""
    hall: Id
    """Hall ID."""
    row: Id
    """Row ID."""
    position: Int = Field(ge=0, le=100_000)
    """Position index in the row, from 0."""
    x_m: Coordinate
    """x coordinate of the position, m."""
    y_m: Coordinate
    """y coordinate of the position, m."""
    rack_type: Id
    """Rack type ID from the catalog."""
    cluster: Id
    """Cluster the rack serves."""
    link_class: Id | None = None
    """Link class of its fabric cables; none for racks without fabric links."""
    cable_length_m: Float = Field(ge=0, le=1e6)
    """Cable length to the pod's network rack, m."""
    phase: Id | None = None
    """Phase in which the rack is placed (phased plans); it stays in every later phase."""
    existing: Bool = False
    """Installed before this plan (brownfield): fixed, never moved."""
    spare: Bool = False
    """A hot spare of its cluster (§11): powered, cooled and paid for, not counted in its GPUs."""


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

    @model_validator(mode="after")
    def _shape(self) -> FabricDesign:
        if len(self.switches) != self.tiers:
            raise ValueError(f"switches: {len(self.switches)} given, a {self.tiers}-tier design names one per tier")
        if len(self.oversubscription) != self.tiers - 1:
            raise ValueError(f"oversubscription: {len(self.oversubscription)} given, a {self.tiers}-tier design states {self.tiers - 1} (every tier below the top)")
        if any(x <= 0 or x > 1000 for x in self.oversubscription):
            raise ValueError("oversubscription: each ratio is down:up bandwidth, > 0 and ≤ 1000")
        return self


class Cause(StrictModel):
    """An interruption cause and its rate, as observed on a reference cluster (§11)."""

    id: Id
    """Name of the cause."""
    count: Float = Field(ge=0, le=1e9)
    """Interruptions observed in the reference window."""
    scale: Scale = Scale.gpu
    """What its rate scales with: per GPU, per server, per link or per rack."""
    link_classes: list[Id] | None = Field(None, max_length=100)
    """For scale link: the link classes it applies to (none: every class)."""
    source: Text = ""
    """Where the figure comes from."""


class ReferenceCluster(StrictModel):
    """The cluster the cause counts were observed on (default: Llama 3 pretraining, §11)."""

    days: Float = Field(54, gt=0, le=1e6)
    """Length of the observation window, days (Llama 3 paper §3.3.4)."""
    gpus: Int = Field(16_384, gt=0, le=100_000_000)
    """GPUs of the reference cluster (Llama 3 paper §3.3.4)."""
    gpus_per_server: Int = Field(8, gt=0, le=1000)
    """GPUs per server (Grand Teton: 8 H100, catalog)."""
    gpus_per_rack: Int = Field(16, gt=0, le=10_000)
    """GPUs per rack (Grand Teton rack: 2 servers, catalog)."""
    links_per_gpu: Float = Field(1.0, gt=0, le=1000)
    """Fabric links per GPU (one 400G NIC per GPU, Llama 3 paper §3.3.1)."""


def _llama3_causes() -> list[Cause]:
    src = "Llama 3 paper, Table 5 (54 days, 16,384 H100)"
    return [
        Cause(id="faulty-gpu", count=148, scale=Scale.gpu, source=src),
        Cause(id="gpu-hbm3", count=72, scale=Scale.gpu, source=src),
        Cause(id="software", count=54, scale=Scale.server, source=src),
        Cause(id="network-switch-cable", count=35, scale=Scale.link, source=src),
        Cause(id="host-maintenance", count=32, scale=Scale.server, source=src),
        Cause(id="gpu-sram", count=19, scale=Scale.gpu, source=src),
        Cause(id="other", count=59, scale=Scale.server, source=src + ": 419 unexpected less the six causes above"),
    ]


class Reliability(StrictModel):
    """Interruption model (§11): per-cause rates from a reference cluster, or one rate per node."""

    causes: list[Cause] = Field(default_factory=_llama3_causes, max_length=1000)
    """Causes and counts (default: Llama 3 Table 5, 419 unexpected interruptions: the six largest
    causes and the rest as "other")."""
    reference: ReferenceCluster = ReferenceCluster()
    """The cluster the counts were observed on."""
    node_failures_per_1000_node_days: Float | None = Field(None, gt=0, le=1e6)
    """Instead of causes: one rate per server (HPCA 2025, Kokolis et al.: 6.50 and 2.34 failures per
    1,000 node-days in two research clusters)."""


class Scenario(StrictModel):
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
    """max_gpus (default), max_pflops, or min_capex (meet every demand at least cost).
    Ties are broken by least cable cost, then by compactness."""
    budgets: Budgets = Budgets()
    """Capex and IT-power caps."""
    gpu_power_cap_w: Float | None = Field(None, gt=0, le=100_000)
    """Cap on every GPU's power, W; none for TDP."""
    power_budget_ratio: Float | None = Field(None, gt=0, le=1)
    """Plan each rack at this share of its rated power (e.g. 0.82 for measured
    peak: 8.4 kW of 10.2 kW; source: Latif et al., arXiv 2412.08602)."""
    pue: Float = Field(1.08, ge=1, le=3)
    """Power usage effectiveness (default 1.08, Meta 2023; source: Meta sustainability report)."""
    phases: list[Phase] = Field(default_factory=list, max_length=100)
    """Fleet-expansion phases in time order; none for a single placement question."""
    retrofits: list[Retrofit] = Field(default_factory=list, max_length=10_000)
    """Changes the optimiser may buy."""
    existing: list[PlacedRack] = Field(default_factory=list, max_length=10_000_000)
    """Racks already installed (brownfield): fixed, counted in every load, positions taken. In a
    scenario file: a path to a plan YAML (inside the scenario's folder, like site:) or a list."""
    costs: Costs = Costs()
    """Cost parameters (§10)."""
    fabrics: list[FabricDesign] = Field(default_factory=list, max_length=100)
    """Fabric designs clusters may be built on (§13)."""
    reliability: Reliability = Reliability()
    """Interruption model for MTBF, checkpoint interval, goodput and spares (§11)."""
    rack_limit_on: RackLimitBasis = RackLimitBasis.nameplate
    """What a row's max_rack_power_kw is checked against: the rack's nameplate power (rated,
    with any GPU cap applied; default) or its planning power (rated × power_budget_ratio, when
    the site plans its rack feeds on measured peak)."""
    solver: SolverSettings = SolverSettings()
    """Solver, time limit and gap."""

    def rack_power_kw(self, rack: RackType) -> float:
        """Planning power of one rack of this type under this scenario, kW: GPUs at
        min(TDP, gpu_power_cap_w), the whole rack × power_budget_ratio (both optional)."""
        return rack.planning_power_kw(self.gpu_power_cap_w, self.power_budget_ratio)

    def rack_limit_power_kw(self, rack: RackType) -> float:
        """Power checked against a row's per-rack limit, kW (see :attr:`rack_limit_on`)."""
        if self.rack_limit_on == RackLimitBasis.planning:
            return self.rack_power_kw(rack)
        return rack.nameplate_power_kw(self.gpu_power_cap_w)

    def storage_racks_of(self, cluster: Cluster) -> int:
        """Storage racks a cluster gets: its ``storage_racks``, or more for its storage asks
        (PB, write GB/s, goodput target; :func:`planner.reliability.storage_needs`)."""
        if cluster.storage_pb is None and cluster.storage_write_gb_per_s is None and cluster.goodput_target is None:
            return cluster.storage_racks
        from planner.reliability import storage_needs

        return storage_needs(self, cluster)[0]

    def gpu_types_for(self, cluster: Cluster) -> list[str]:
        """A cluster's rack types that exist and meet its HBM need, in its order."""
        types = self.catalog.by_id()
        need = cluster.min_hbm_gb_per_gpu
        return [t for t in cluster.rack_types if t in types and (need is None or types[t].hbm_gb_per_gpu >= need - 1e-9)]

    def scope_of(self, cluster: Cluster) -> Scope:
        """Where a cluster may spread, from its hop budget and the site's hop tiers."""
        return self.site.fabric.hops.scope(cluster.max_hops)
