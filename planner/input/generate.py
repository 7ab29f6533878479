"""Parametric site generator (§3): buildings × halls × pods × rows × positions.

Layout of one hall: pods stand side by side along x; each pod is
``rows_per_pod`` rows stacked along y (``row_spacing_m`` apart, hot/cold aisle
pairs), positions advance along +x at ``pitch_m``. The pod's network rack takes
the middle position of its middle row, or, when the pod has network rows
(``network_rows_per_pod``), the first position of its first network row: rows of
``network_row_positions`` positions after its GPU rows (``Row.network: pod``),
where the switches of designed fabrics stand, each row with its own busways sized
for ``network_row_kw`` and racks up to ``network_rack_max_kw``.

Power, per building: a utility feed (``can_fail: false``, outside the N-1
design) → UPS per hall → one busway per row and side.
- ``2n``: UPS A and B; every row hangs from one busway on each.
- ``dr`` (distributed redundant, 3N/2): UPS 1, 2, 3; row k hangs from the
  pair (1,2), (2,3), (3,1) in turn, so a failed UPS's load splits over two.
Sizing, at ``design_kw_per_position`` per usable position plus ``network_rack_kw``
for each pod's network rack (on its row), or ``network_row_kw`` per network row: each busway carries
its whole row (its partner may fail); each UPS carries its worst load under
any other UPS failing (2N: the whole hall; DR: about half of it); the utility
carries the building; every rating is load ÷ derate, rounded up to 0.1 kW.
Cooling per pod: one air zone sized for the air share of the pod's design
load and its network rack or network rows (N+1 units), and in liquid halls one liquid loop (N+1 CDUs).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, model_validator

from planner.input.fleetgen import FleetSpec
from planner.schema import (
    Bool,
    Building,
    CoolingZone,
    Fabric,
    Float,
    Hall,
    Id,
    Int,
    Location,
    Pod,
    PowerNode,
    Row,
    Site,
    StrictModel,
    Text,
)

DERATE = 0.8
"""Derate every generated node is sized and stated with (source: NEC/NEMA 80 % continuous-load
rule, colocation guides): stated explicitly on UPS and utility nodes too, whose kind default is 1.0."""


class BuildingSpec(StrictModel):
    """Parameters of one kind of generated building."""

    count: Int = Field(1, ge=1, le=64)
    """How many identical buildings to make."""
    prefix: Id = "B"
    """Building IDs: the prefix and a running number per prefix (B1, B2 …; T1, T2 … for tents)."""
    online_phase: Id | None = None
    """Phase from which the buildings' halls are online (none: from the start)."""
    halls: Int = Field(1, ge=1, le=32)
    """Halls per building."""
    pods_per_hall: Int = Field(1, ge=1, le=64)
    """Network pods per hall."""
    rows_per_pod: Int = Field(4, ge=0, le=200)
    """GPU rows per pod (0: a building of network rows only, e.g. the region tier's, which needs
    ``network_rows_per_pod`` ≥ 1)."""
    positions_per_row: Int = Field(20, ge=2, le=500)
    """Rack positions per row."""
    power_design: Literal["2n", "dr"] = "2n"
    """2n (A/B UPS) or dr (distributed redundant, three UPS, 3N/2)."""
    design_kw_per_position: Float = Field(21.4, gt=0, le=1000)
    """IT load the power and cooling are sized for, per usable position, kW."""
    max_rack_power_kw: Float = Field(25.0, gt=0, le=10_000)
    """Per-rack power limit of every row, kW."""
    max_rack_weight_kg: Float = Field(1400.0, gt=0, le=100_000)
    """Per-rack weight limit of every row, kg (Open Rack v3 payload, Meta/Rittal OCP slides)."""
    liquid: Bool = False
    """Give every pod a liquid loop (direct liquid cooling)."""
    liquid_share: Float = Field(0.85, ge=0, le=1)
    """Share of the design load the liquid loop is sized for (liquid halls)."""
    pod_max_gpus: Int = Field(3072, gt=0, le=10_000_000)
    """GPU ports per pod (Meta AI zone: 3,072 GPUs; Llama 3 paper §3.3.1)."""
    pod_max_racks: Int | None = Field(192, gt=0, le=1_000_000)
    """Racks per pod (Meta AI zone: 192 racks; Llama 3 paper §3.3.1)."""
    air_unit_capacity_kw: Float = Field(400.0, gt=0, le=100_000)
    """Capacity of one air handler, kW."""
    cdu_capacity_kw: Float = Field(1000.0, gt=0, le=100_000)
    """Capacity of one coolant distribution unit, kW."""
    network_rack_kw: Float = Field(12.0, ge=0, le=1000)
    """Load of each pod's network rack, kW, sized into its row's feeds, its UPS and its air zone
    (the built-in network rack: 8 switches at ~1.5 kW, an estimate)."""
    network_rack_counted: Bool = True
    """Whether each pod's network rack draws power as a rack (``network_rack_type: network-rack``);
    false for a structure still to be built, whose switches are counted in its build cost."""
    network_rows_per_pod: Int = Field(0, ge=0, le=16)
    """Network rows per pod, after its GPU rows: where the switches of designed fabrics stand
    (0: none, the pod's network rack stands in its middle GPU row)."""
    network_row_positions: Int = Field(16, ge=1, le=500)
    """Rack positions per network row."""
    network_row_kw: Float = Field(480.0, gt=0, le=100_000)
    """IT load each network row's feeds, its UPS share and its air zone are sized for, kW
    (includes the pod's network rack when it stands there)."""
    network_rack_max_kw: Float = Field(40.0, gt=0, le=10_000)
    """Per-rack power limit of network rows, kW."""
    building_network_rows: Int = Field(0, ge=0, le=16)
    """Network rows serving the whole building (``network: building``; e.g. for a region tier),
    in its first hall beyond the pods, sized like the pods' network rows, in their own air zone."""

    @model_validator(mode="after")
    def _rows(self) -> BuildingSpec:
        if self.rows_per_pod == 0 and self.network_rows_per_pod == 0:
            raise ValueError(
                "rows_per_pod 0 makes a building of network rows only: "
                "it needs network_rows_per_pod of 1 or more"
            )
        return self


class SiteSpec(StrictModel):
    """Parameters of a generated site."""

    id: Id = "generated"
    """Site ID."""
    description: Text = ""
    """Free text."""
    fabric: Fabric = Fabric()
    """Fabric of the site."""
    buildings: list[BuildingSpec] = Field(min_length=1, max_length=64)
    """Building kinds, in order."""
    pitch_m: Float = Field(0.6, gt=0, le=100)
    """Position pitch, m (600 mm racks)."""
    row_spacing_m: Float = Field(2.4, gt=0, le=100)
    """Distance between neighbouring rows, m (one rack depth plus one aisle)."""
    pod_gap_m: Float = Field(3.0, ge=0, le=1000)
    """Aisle between neighbouring pods, m."""
    fleet: FleetSpec | None = None
    """Clusters to draw for the site (a distinct fleet, :mod:`planner.input.fleetgen`): with it,
    ``planner generate-site --spec`` also writes the scenario (``--scenario``)."""
    building_spacing_km: Float = Field(0.0, ge=0, le=1000)
    """Distance between neighbouring buildings in the region, km: building n stands at
    ((n − 1) · spacing, 0) (fibre of a region tier runs the straight line)."""


def _size(load_kw: float) -> float:
    """Rating that carries ``load_kw`` within the derate, rounded up to 0.1 kW."""
    return math.ceil(load_kw / DERATE * 10 - 1e-9) / 10


def _worst_ups_kw(ups: str, all_ups: list[str], rows: list[tuple[tuple[str, str], float]]) -> float:
    """Largest design load on ``ups`` under any single other UPS failure: a row on
    (ups, failed) moves wholly onto ``ups``; a row on (ups, other) keeps half."""
    worst = 0.0
    for failed in all_ups:
        if failed == ups:
            continue
        load = sum(kw if failed in pair else kw / 2 for pair, kw in rows if ups in pair)
        worst = max(worst, load)
    return worst


def _pod_network_kw(spec: BuildingSpec) -> float:
    """Design load of one pod's network: its network rows, or its network rack, kW."""
    return (
        spec.network_rows_per_pod * spec.network_row_kw if spec.network_rows_per_pod else spec.network_rack_kw
    )


def _hall(b_id: str, h_no: int, spec: BuildingSpec, site: SiteSpec, parent: str) -> Hall:
    """One hall of a building: its pods (rows, zones, network rack spot), the building's network
    rows in its first hall, busways per row and the UPSes sized for the worst single failure."""
    h = _HallBuilder(b_id, h_no, spec, site)
    for p in range(spec.pods_per_hall):
        h.pod(p)
    hub = spec.building_network_rows if h_no == 1 else 0
    h.building_network_rows(hub)
    nodes = [
        PowerNode(
            id=f"{h.id}-UPS-{u}",
            kind="ups",
            capacity_kw=_size(_worst_ups_kw(u, h.ups_ids, h.row_pairs)),
            derate=DERATE,
            parent=parent,
        )
        for u in h.ups_ids
    ]
    width = spec.pods_per_hall * h.pod_width
    depth = (spec.rows_per_pod + spec.network_rows_per_pod + hub) * site.row_spacing_m + (
        3 if hub else 2
    ) * site.pod_gap_m
    return Hall(
        id=h.id,
        floor_area_m2=round(width * depth, 1),
        power_nodes=[*nodes, *h.busways],
        cooling_zones=h.zones,
        pods=h.pods,
        rows=h.rows,
    )


class _HallBuilder:
    """A hall's rows, pods, zones and busways as they are laid out, pod by pod."""

    def __init__(self, b_id: str, h_no: int, spec: BuildingSpec, site: SiteSpec):
        self.id = f"{b_id}-H{h_no}"
        self.spec, self.site = spec, site
        self.rows: list[Row] = []
        self.pods: list[Pod] = []
        self.zones: list[CoolingZone] = []
        self.busways: list[PowerNode] = []
        self.row_pairs: list[tuple[tuple[str, str], float]] = []
        self.ups_ids = ["A", "B"] if spec.power_design == "2n" else ["1", "2", "3"]
        net_rows = spec.network_rows_per_pod
        self.pod_load = (
            spec.rows_per_pod * spec.positions_per_row - (0 if net_rows else 1)
        ) * spec.design_kw_per_position
        widest = max(spec.positions_per_row, spec.network_row_positions if net_rows else 0)
        self.pod_width = widest * site.pitch_m + site.pod_gap_m
        self.row_no = 0

    def _zone(self, zone_id: str, medium: str, kw: float, unit_kw: float) -> None:
        """A cooling zone of N + 1 units for ``kw`` of heat."""
        units = max(1, math.ceil(kw / unit_kw)) + 1
        self.zones.append(
            CoolingZone(id=zone_id, medium=medium, units=units, unit_capacity_kw=unit_kw, redundant_units=1)
        )

    def _feeds(self, row_id: str, row_kw: float) -> list[str]:
        """Two busways for the row from the next pair of UPSes (2N: A and B; distributed: round the three)."""
        spec, u = self.spec, self.ups_ids
        pair = (u[0], u[1]) if spec.power_design == "2n" else (u[self.row_no % 3], u[(self.row_no + 1) % 3])
        self.row_no += 1
        self.row_pairs.append((pair, row_kw))
        feeds = []
        for side, ups in zip("AB", pair, strict=True):
            bw = f"{row_id}-BW-{side}"
            self.busways.append(
                PowerNode(id=bw, kind="busway", capacity_kw=_size(row_kw), parent=f"{self.id}-UPS-{ups}")
            )
            feeds.append(bw)
        return feeds

    def pod(self, p: int) -> None:
        """A pod: its air zone (and liquid loop), GPU rows, network rows, network rack spot."""
        spec, site = self.spec, self.site
        pod_id = f"{self.id}-P{p + 1}"
        net_rows = spec.network_rows_per_pod
        air_share = 1 - spec.liquid_share if spec.liquid else 1.0
        self._zone(
            f"{pod_id}-AIR",
            "air",
            self.pod_load * air_share + _pod_network_kw(spec),
            spec.air_unit_capacity_kw,
        )
        loop = None
        if spec.liquid:
            loop = f"{pod_id}-LQ"
            self._zone(loop, "liquid", self.pod_load * spec.liquid_share, spec.cdu_capacity_kw)
        mid_row = -1 if net_rows else spec.rows_per_pod // 2
        layout = [(f"{pod_id}-R{r + 1:02d}", spec.positions_per_row, False) for r in range(spec.rows_per_pod)]
        layout += [(f"{pod_id}-N{k + 1}", spec.network_row_positions, True) for k in range(net_rows)]
        for r, (row_id, positions, network) in enumerate(layout):
            if network:
                row_kw = spec.network_row_kw
            else:
                usable = positions - (1 if r == mid_row else 0)
                row_kw = usable * spec.design_kw_per_position + (
                    spec.network_rack_kw if r == mid_row else 0.0
                )
            feeds = self._feeds(row_id, row_kw)
            self.rows.append(
                Row(
                    id=row_id,
                    positions=positions,
                    origin_x_m=round(p * self.pod_width, 3),
                    origin_y_m=round(r * site.row_spacing_m, 3),
                    pitch_m=site.pitch_m,
                    direction="+x",
                    max_rack_power_kw=spec.network_rack_max_kw if network else spec.max_rack_power_kw,
                    max_rack_weight_kg=spec.max_rack_weight_kg,
                    feeds=feeds,
                    redundant=True,
                    air_zone=f"{pod_id}-AIR",
                    liquid_loop=None if network else loop,
                    pod=pod_id,
                    network="pod" if network else None,
                )
            )
        spot = (
            Location(row=f"{pod_id}-N1", position=0)
            if net_rows
            else Location(row=f"{pod_id}-R{mid_row + 1:02d}", position=spec.positions_per_row // 2)
        )
        counted = {} if spec.network_rack_counted else {"network_rack_type": None}
        self.pods.append(
            Pod(
                id=pod_id,
                network_rack=spot,
                max_gpus=spec.pod_max_gpus,
                max_racks=spec.pod_max_racks,
                **counted,
            )
        )

    def building_network_rows(self, hub: int) -> None:
        """The building's network rows (in its first hall), in an air zone of their own."""
        if not hub:
            return
        spec, site = self.spec, self.site
        zone = f"{self.id}-NET-AIR"
        self._zone(zone, "air", hub * spec.network_row_kw, spec.air_unit_capacity_kw)
        for k in range(hub):
            row_id = f"{self.id}-BN{k + 1}"
            feeds = self._feeds(row_id, spec.network_row_kw)
            y = (spec.rows_per_pod + spec.network_rows_per_pod + k) * site.row_spacing_m + site.pod_gap_m
            self.rows.append(
                Row(
                    id=row_id,
                    positions=spec.network_row_positions,
                    origin_x_m=0.0,
                    origin_y_m=round(y, 3),
                    pitch_m=site.pitch_m,
                    direction="+x",
                    max_rack_power_kw=spec.network_rack_max_kw,
                    max_rack_weight_kg=spec.max_rack_weight_kg,
                    feeds=feeds,
                    redundant=True,
                    air_zone=zone,
                    pod=self.pods[0].id,
                    network="building",
                )
            )


def generate_site(spec: SiteSpec, command: str = "") -> Site:
    """Build a regular site from its parameters (layout and sizing in the module docstring)."""
    buildings: list[Building] = []
    n = 0
    numbers: dict[str, int] = {}
    for bspec in spec.buildings:
        for _ in range(bspec.count):
            n += 1
            numbers[bspec.prefix] = numbers.get(bspec.prefix, 0) + 1
            b_id = f"{bspec.prefix}{numbers[bspec.prefix]}"
            util = f"{b_id}-UTIL"
            halls = [_hall(b_id, h + 1, bspec, spec, util) for h in range(bspec.halls)]
            if bspec.online_phase is not None:
                halls = [h.model_copy(update={"online_phase": bspec.online_phase}) for h in halls]
            pods = sum(len(h.pods) for h in halls)
            usable = sum(r.positions for h in halls for r in h.rows if r.network is None) - (
                0 if bspec.network_rows_per_pod else pods
            )
            util_kw = _size(
                usable * bspec.design_kw_per_position
                + pods * _pod_network_kw(bspec)
                + bspec.building_network_rows * bspec.network_row_kw
            )
            buildings.append(
                Building(
                    id=b_id,
                    power_nodes=[
                        PowerNode(id=util, kind="utility", capacity_kw=util_kw, derate=DERATE, can_fail=False)
                    ],
                    halls=halls,
                    location_km=[round((n - 1) * spec.building_spacing_km, 6), 0.0],
                )
            )
    return Site(
        id=spec.id,
        description=spec.description,
        fabric=spec.fabric,
        buildings=buildings,
        source=command or "planner generate-site",
    )
