"""Power the grid accepts (§21) as blocks of a scenario: training power swings and what absorbs
them, the power sources' prices and carbon, water, and concurrent maintainability.

Every default below is an estimate (the reference facts give the phenomena, not these figures):
the scenario states its own with a ``source`` where it has one. Also here: the power-arrival step
(its swing acceptance and source), the plan's grid report, and the scenario's §21 questions.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from planner.schema.base import Bool, Float, Id, Int, StrictModel, Text

if TYPE_CHECKING:
    from planner.schema.catalog import RackType


class PowerStability(StrictModel):
    """Synchronous training swings (§21). A training job's racks all drop from peak to trough
    together (checkpoints, collectives: a 16k-GPU job swings tens of MW within seconds, Llama 3
    §3.3.4); the grid accepts a swing up to what its interconnect and generation accept (ramp ×
    the swing's seconds, at most their dynamic range: Choukse et al., arXiv 2508.14318). What is
    beyond is absorbed per building by a GPU power floor (draw held up in the trough: energy) or
    energy storage (MW bought, with MWh, and its round-trip loss), or the plan places fewer GPUs."""

    trough_share: Float = Field(0.4, ge=0, le=1)
    """A rack's draw in the trough of a training step as a share of its planning power, for rack
    types without their own ``trough_share`` (estimate: GPUs near idle in communication phases while
    CPUs, fans and NICs keep drawing; 0.2-0.6)."""
    swing_s: Float = Field(1.0, gt=0, le=3600)
    """Seconds over which a swing happens (estimate: "within seconds", Llama 3 §3.3.4): a source
    accepts ramp × these seconds of it."""
    ramp_mw_per_s: Float = Field(0.0, ge=0, le=1e6)
    """Ramp the site's connection accepts from the start, MW/s (power-arrival steps add theirs)."""
    dynamic_range_mw: Float = Field(0.0, ge=0, le=1e6)
    """Dynamic range it accepts from the start, MW (power-arrival steps add theirs)."""
    trough_hours_share: Float = Field(0.3, ge=0, le=1)
    """Share of training hours spent in the trough (estimate): the hours a floor burns energy and
    storage cycles."""
    floor: Bool = True
    """Whether a GPU power floor may absorb a swing."""
    storage: Bool = True
    """Whether energy storage may be bought to absorb a swing."""
    storage_usd_per_mw: Float = Field(300_000.0, ge=0, le=1e10)
    """Storage power capex, USD per MW (estimate: short-duration battery inverters and grid tie)."""
    storage_usd_per_mwh: Float = Field(300_000.0, ge=0, le=1e10)
    """Storage energy capex, USD per MWh (estimate: lithium-ion cells and racks)."""
    storage_hours: Float = Field(0.25, gt=0, le=100)
    """MWh bought per MW of storage (estimate: minutes of ride-through beyond the swing itself)."""
    storage_round_trip: Float = Field(0.9, gt=0, le=1)
    """Round-trip efficiency of the storage (estimate for lithium-ion): 1 − this of what cycles is lost."""
    storage_life_years: Float | None = Field(15.0, gt=0, le=100)
    """Service life of the storage, years (its book value at the horizon; estimate)."""
    source: Text = ""
    """Where the figures come from (or 'estimate')."""

    def accepted_mw(self, ramp_mw_per_s: float, dynamic_range_mw: float) -> float:
        """Swing a source accepts, MW: min(ramp × swing seconds, dynamic range)."""
        return min(ramp_mw_per_s * self.swing_s, dynamic_range_mw)

    @property
    def storage_usd_per_mw_bought(self) -> float:
        """Capex of one MW of storage with its MWh, USD: usd_per_mw + hours × usd_per_mwh."""
        return self.storage_usd_per_mw + self.storage_hours * self.storage_usd_per_mwh


class PowerSource(StrictModel):
    """A source the region's energy comes from (§21): the utility, an on-site plant, a PPA. Power
    arrival steps name theirs (``power_source``; default ``grid`` for interconnect, ``onsite`` for
    generation); each phase's energy is dispatched over the sources arrived by then."""

    t_co2_per_mwh: Float = Field(ge=0, le=10)
    """Carbon intensity, t CO2 per MWh (grid: by region and year; gas: by plant type)."""
    t_co2_per_mwh_by_phase: dict[Id, Float] = Field(default_factory=dict, max_length=1000)
    """Phase → its intensity from that phase on (a grid that gets cleaner), t CO2 per MWh."""
    usd_per_mwh: Float | None = Field(None, ge=0, le=1e5)
    """Energy price, USD per MWh; none: the scenario's ``costs.energy_usd_per_kwh`` × 1000."""
    capacity_factor: Float = Field(1.0, gt=0, le=1)
    """Share of the year its MW can deliver (maintenance, fuel, a PPA's shape)."""
    source: Text = ""
    """Where the figures come from (or 'estimate')."""

    def intensity_at(self, phase_ids: list[str], index: int) -> float:
        """t CO2 per MWh in the phase with this index: the last ``t_co2_per_mwh_by_phase`` entry at or
        before it, else ``t_co2_per_mwh``."""
        out = self.t_co2_per_mwh
        for pid in phase_ids[: index + 1]:
            out = self.t_co2_per_mwh_by_phase.get(pid, out)
        return out


class Water(StrictModel):
    """Water a region's cooling uses (§21), per MWh and on the design day; a structure may state its own."""

    wue_l_per_kwh: Float = Field(0.2, ge=0, le=100)
    """Water usage effectiveness, L per kWh of IT energy (estimate for evaporatively assisted
    hyperscale halls; 0 for closed-loop dry coolers)."""
    peak_l_per_s_per_mw: Float = Field(0.2, ge=0, le=100)
    """Design-day draw per MW of IT, L/s (estimate: half the heat evaporated; all of it would be
    0.41 L/s per MW from water's latent heat, 2.45 MJ/kg)."""
    source: Text = ""
    """Where the figures come from (or 'estimate')."""


class Maintenance(StrictModel):
    """Concurrent maintainability (§21): N-1 holds while any one element of a class is out for
    maintenance. Power: every node of ``kind`` (in the buildings named) out with any other node
    failing, survivors within their usable kW (rows left without a feed drop: the blast radius
    during maintenance); cooling units: each zone's reserve stands while one unit is out, so it
    removes (units − redundant − 1) × unit kW."""

    kind: Literal[
        "utility", "substation", "transformer", "ups", "pdu", "busway", "breaker", "other", "cooling_unit"
    ]
    """The class out for maintenance: a power node kind (ups, busway, pdu …) or cooling_unit."""
    buildings: list[Id] = Field(default_factory=list, max_length=10_000)
    """Buildings (or structures) the level applies in; empty: every building."""


class PowerStep(StrictModel):
    """Power that arrives for the region (§16): utility interconnect and on-site generation that
    become available from a phase on (added to what arrived before)."""

    phase: Id | None = None
    """First phase it is available in; none: from the start."""
    interconnect_mw: Float = Field(0.0, ge=0, le=1e6)
    """Utility interconnect added, MW."""
    generation_mw: Float = Field(0.0, ge=0, le=1e6)
    """On-site generation added, MW."""
    lead_phases: Int = Field(0, ge=0, le=1000)
    """Phases between ordering the step's long-lead plant and its power arriving (large power
    transformers ~2-4 years, MV switchgear ~1-2 years in 2024-2026: US DOE and NREL supply-chain
    reports): the order book lists when it must be ordered, before the plan's first phase when the
    lead reaches back past it."""
    plant: Text = ""
    """The long-lead plant it needs (transformers, switchgear, turbines), named in the order book."""
    source: Text = ""
    """Where the figure comes from (a utility agreement, a turbine order, an estimate)."""
    ramp_mw_per_s: Float = Field(0.0, ge=0, le=1e6)
    """Ramp the step accepts of a training swing, MW/s (§21: the utility's interconnect agreement, a
    turbine's governor); 0: none."""
    dynamic_range_mw: Float = Field(0.0, ge=0, le=1e6)
    """Dynamic range the step accepts, MW (§21); 0: none."""
    power_source: Id | None = None
    """The source its MW belong to (a key of ``power_sources``); none: ``grid`` for interconnect,
    ``onsite`` for generation."""

    def mw_by_source(self) -> dict[str, float]:
        """Source → MW the step adds (interconnect and generation under their sources)."""
        out: dict[str, float] = {}
        for default, mw in (("grid", self.interconnect_mw), ("onsite", self.generation_mw)):
            if mw > 0:
                key = self.power_source or default
                out[key] = out.get(key, 0.0) + mw
        return out


class GridPhase(StrictModel):
    """Power the grid accepts in one phase (§21): the swing, what absorbs it, energy by source,
    emissions and water."""

    phase: Id | None = None
    """Phase ID (none without phases)."""
    swing_mw: Float = 0
    """Largest synchronous swing of one cluster before storage or floors, MW."""
    swing_cluster: Text = ""
    """The cluster whose swing it is."""
    accepted_mw: Float = 0
    """Swing the sources arrived by then accept, MW (a very large figure when unlimited)."""
    storage_mw: dict[Id, Float] = Field(default_factory=dict, max_length=100_000)
    """Building → energy storage standing, MW (bought in this phase or before; kept)."""
    floor_mw: dict[Id, Float] = Field(default_factory=dict, max_length=100_000)
    """Building → swing absorbed by a GPU power floor, MW."""
    energy_mwh_per_year: dict[Id, Float] = Field(default_factory=dict, max_length=1000)
    """Power source → facility energy drawn from it, MWh per year (with ``power_sources``)."""
    t_co2_per_year: Float = 0
    """Scope 2 emissions, t CO2 per year."""
    water_m3_per_year: Float = 0
    """Cooling water, m³ per year (IT energy × WUE)."""
    peak_water_l_per_s: Float = 0
    """Design-day water draw, L/s."""


class GridReport(StrictModel):
    """§21 over the plan: per phase, and the costs it adds to capex and TCO."""

    phases: list[GridPhase] = Field(default_factory=list, max_length=100)
    storage_capex_usd: Float = 0
    """Energy storage bought, USD (undiscounted): in capex."""
    tco_usd: Float = 0
    """Storage (discounted, less its residual value), the floors' energy, the storage's losses, the
    sources' price over the scenario's and the carbon price, over the horizon, USD: in TCO."""
    t_co2: Float = 0
    """Emissions over the horizon, t CO2."""
    water_m3: Float = 0
    """Water over the horizon, m³."""


class GridQuestions:
    """§21 questions of a :class:`~planner.schema.Scenario` (a mixin: it reads the scenario's
    ``power_stability``, ``power_arrival``, ``power_sources``, ``water``, ``maintenance``, its
    ``phase_at`` and its structures)."""

    def swing_accepted_mw(self, phase_index: int) -> float:
        """Training swing the sources arrived by the phase with this index accept, MW (§21): the
        site's own (``power_stability``) plus each step's min(ramp × swing seconds, dynamic range)."""
        ps = self.power_stability
        if ps is None:
            return math.inf
        order = self.phase_at
        return ps.accepted_mw(ps.ramp_mw_per_s, ps.dynamic_range_mw) + sum(
            ps.accepted_mw(s.ramp_mw_per_s, s.dynamic_range_mw)
            for s in self.power_arrival
            if order.get(s.phase, 0) <= phase_index
        )

    def trough_share(self, rack: RackType) -> float:
        """A rack type's draw in a training trough as a share of its planning power (§21)."""
        if rack.trough_share is not None:
            return rack.trough_share
        return self.power_stability.trough_share if self.power_stability is not None else 1.0

    def source_mw(self, phase_index: int) -> dict[str, float]:
        """Source → MW of it arrived by the phase with this index (§21)."""
        order = self.phase_at
        out: dict[str, float] = {}
        for s in self.power_arrival:
            if order.get(s.phase, 0) <= phase_index:
                for k, mw in s.mw_by_source().items():
                    out[k] = out.get(k, 0.0) + mw
        return out

    def wue_in(self, building: str | None) -> float:
        """Water per kWh of IT energy in ``building``, L: its structure's, else the scenario's (0
        without ``water``)."""
        e = self._structure(building)
        if e is not None and e.wue_l_per_kwh is not None:
            return e.wue_l_per_kwh
        return self.water.wue_l_per_kwh if self.water is not None else 0.0

    def peak_water_in(self, building: str | None) -> float:
        """Design-day water per MW of IT in ``building``, L/s."""
        e = self._structure(building)
        if e is not None and e.peak_water_l_per_s_per_mw is not None:
            return e.peak_water_l_per_s_per_mw
        return self.water.peak_l_per_s_per_mw if self.water is not None else 0.0

    def maintained(self, kind: str, building: str | None) -> bool:
        """Whether elements of ``kind`` in ``building`` may be out for maintenance (§21)."""
        return any(m.kind == kind and (not m.buildings or building in m.buildings) for m in self.maintenance)
