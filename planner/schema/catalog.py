"""Catalog schema (§7, §13): rack types and network switches, what ``catalog.yaml`` holds.
Rated power is derived from a rack's parts, never typed in."""

from __future__ import annotations

from pydantic import Field, model_validator

from planner.enums import FabricKind, RackKind
from planner.schema.base import Float, Id, Int, NonNegFloat, StrictModel, Text


class UnitPart(StrictModel):
    """One position of a multi-rack unit (§18): what stands there and its share of the unit."""

    role: Text
    """What the position holds (GPU rack, CDU sidecar …)."""
    power_share: Float = Field(ge=0, le=1)
    """Share of the unit's power drawn at this position (the shares add up to 1)."""
    heat_share: Float | None = Field(None, ge=0, le=1)
    """Share of the unit's heat rejected into the room at this position (the shares add up to 1):
    a liquid-cooling sidecar draws little but rejects the IT racks' liquid heat where it stands.
    None: its power share (every part states one or none does)."""
    weight_kg: Float = Field(gt=0, le=100_000)
    """Weight standing on this position, kg."""


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
    manufacturer: Text = ""
    """Who makes it (exports name it, e.g. NetBox's device type manufacturer); empty: unstated."""
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
    network_w_per_gpu: Float = Field(0, ge=0, le=10_000)
    """Back-end network outside the rack per GPU, W (the fabric's leaf, spine and core switches and
    their optics, by the rack's generation): what a plan without a designed fabric draws for its
    network beyond the pods' network racks (scenario ``network_allowance``)."""
    trough_share: Float | None = Field(None, ge=0, le=1)
    """Draw in the trough of a synchronous training step as a share of planning power (§21): the
    swing of one rack is planning kW × (1 − this); none: the scenario's ``power_stability``."""
    server_fault_share: Float = Field(1.0, gt=0, le=100)
    """Host faults of one server as a share of the reference cluster's server (Llama 3: an 8-GPU
    H100 host), for the interruption causes that scale per server (host maintenance, software,
    the rest): 1 for an 8-GPU host; a smaller tray carries fewer of a host's parts (a 2-GPU
    Catalina tray: 0.25, an estimate)."""
    nvlink_domain_gpus: Int | None = Field(None, gt=0, le=100_000)
    """GPUs in one NVLink domain (72 for an NVL72 rack or a Catalina pod): the unit a fault takes
    out of a job and that is repaired whole unless a hot-spare tray of the domain stands in
    (cluster ``domain_spare_servers``). None: the server is the domain (a failed server leaves the
    job and its repair is not counted in goodput)."""
    storage_capacity_pb: Float = Field(0, ge=0, le=1e6)
    """Usable storage capacity, PB (storage racks)."""
    storage_write_gb_per_s: Float = Field(0, ge=0, le=1e7)
    """Sustained write bandwidth, GB/s (storage racks)."""
    parts: list[UnitPart] | None = Field(None, min_length=2, max_length=16)
    """A multi-rack unit (§18): one part per adjacent position of one row it takes, in order (e.g.
    CDU·CDU·GPU·GPU·CDU·CDU); its power and weight split over them as stated. None: one position.
    The unit's figures (GPUs, power, weight, capex) are its whole."""
    sources: dict[Id, Text] = Field(default_factory=dict, max_length=100)
    """Field name → where its figure comes from."""

    @model_validator(mode="after")
    def _domain_divides(self):
        d = self.nvlink_domain_gpus
        if d is not None and (self.gpus % d or d % max(1, self.gpus_per_server) or not self.gpus):
            raise ValueError(
                f"nvlink_domain_gpus: {d} must divide the rack's {self.gpus} GPUs and be whole "
                f"servers of {self.gpus_per_server} GPUs"
            )
        return self

    @property
    def domains(self) -> int:
        """NVLink domains per rack (its servers when it states none)."""
        return self.gpus // self.nvlink_domain_gpus if self.nvlink_domain_gpus else self.servers_per_rack

    @model_validator(mode="after")
    def _parts_add_up(self):
        if self.parts is not None:
            share = sum(p.power_share for p in self.parts)
            if abs(share - 1.0) > 1e-6:
                raise ValueError(f"parts: the power shares add up to {share:g}, not 1")
            heat = [p.heat_share for p in self.parts]
            if any(h is not None for h in heat) and (
                None in heat or abs(sum(h for h in heat if h is not None) - 1.0) > 1e-5
            ):
                told = "some parts state none" if None in heat else f"they add up to {sum(heat):g}, not 1"
                raise ValueError(f"parts: heat shares are stated for every part and add up to 1 ({told})")
            weight = sum(p.weight_kg for p in self.parts)
            if abs(weight - self.weight_kg) > 1e-6 * max(1.0, self.weight_kg):
                raise ValueError(
                    f"parts: the parts weigh {weight:g} kg in all, the unit's weight_kg is {self.weight_kg:g}"
                )
        return self

    @property
    def width(self) -> int:
        """Adjacent positions of one row the rack type takes (1 for a plain rack)."""
        return len(self.parts) if self.parts else 1

    @property
    def position_power_share(self) -> float:
        """Largest share of the rack's power drawn at one of its positions (1 for a plain rack)."""
        return max(p.power_share for p in self.parts) if self.parts else 1.0

    def position_heat_shares(self) -> list[float]:
        """Share of the rack's heat rejected into the room at each of its positions, in order (its
        power shares unless its parts state heat shares; [1] for a plain rack)."""
        if not self.parts:
            return [1.0]
        return [p.power_share if p.heat_share is None else p.heat_share for p in self.parts]

    @property
    def position_weight_kg(self) -> float:
        """Heaviest weight standing on one of its positions, kg."""
        return max(p.weight_kg for p in self.parts) if self.parts else self.weight_kg

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
