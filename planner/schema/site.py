"""Site schema (§3–§6): buildings → halls → rows → positions, the power tree, cooling zones,
network pods and link classes: what a user writes in a ``*.site.yaml`` file."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from planner.enums import Direction, FabricKind, Medium, NodeKind, Scope
from planner.schema.base import MAX_ITEMS, Bool, Coordinate, Float, Id, Int, NonNegFloat, StrictModel, Text

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
            raise ValueError(f"hop counts must not decrease from same_rack to cross_building, got {tiers}")
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
        LinkClass(
            id="dac",
            max_length_m=3,
            cost_usd_per_link=150,
            power_w_per_link=0.0,
            source=src + " (passive copper: no power)",
        ),
        LinkClass(
            id="aec",
            max_length_m=5,
            cost_usd_per_link=500,
            power_w_per_link=12.0,
            source=src + " (estimate: ~6 W per active end)",
        ),
        LinkClass(
            id="mmf",
            max_length_m=50,
            cost_usd_per_link=1400,
            power_w_per_link=24.0,
            optical=True,
            source=src + " (estimate: ~12 W per 400G SR4 transceiver, two per link)",
        ),
        LinkClass(
            id="smf",
            max_length_m=500,
            cost_usd_per_link=2400,
            power_w_per_link=24.0,
            optical=True,
            source=src + " (estimate: ~12 W per 400G DR4 transceiver, two per link)",
        ),
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
    network: Literal["pod", "hall", "building"] | None = None
    """A network row (§13): only the network racks of designed fabrics stand in it, serving its
    pod (``pod``), every pod of its hall (``hall``) or of its building (``building``); their
    switches' power is on its feeds, their heat in its air zone. None: a row for GPU and storage racks."""

    @property
    def position_area_m2(self) -> float:
        """Floor area one position takes, m²: pitch_m × depth_m."""
        return self.pitch_m * self.depth_m

    def position_xy(self, index: int) -> tuple[float, float]:
        """Coordinates (x_m, y_m) of a position: origin + index × pitch along direction."""
        step = index * self.pitch_m
        dx, dy = {"+x": (step, 0.0), "-x": (-step, 0.0), "+y": (0.0, step), "-y": (0.0, -step)}[
            self.direction.value
        ]
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
    location_km: list[Coordinate] = Field(default_factory=lambda: [0.0, 0.0], min_length=2, max_length=2)
    """Where the building stands in its region, (x, y) km: fibre between buildings runs the
    straight-line distance (a region tier, §13)."""


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

    def row_pods(self) -> dict[str, str]:
        """Row ID → the pod it belongs to (the one row → pod look-up)."""
        return {r.id: r.pod for b in self.buildings for h in b.halls for r in h.rows}
