"""Power the grid accepts (§21) as blocks of a scenario: training power swings and what absorbs
them, the power sources' prices and carbon, water, and concurrent maintainability.

Every default below is an estimate (the reference facts give the phenomena, not these figures):
the scenario states its own with a ``source`` where it has one.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from planner.schema.base import Bool, Float, Id, StrictModel, Text


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
