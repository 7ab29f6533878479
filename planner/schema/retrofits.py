"""Retrofits (§8): changes to a site the optimiser may buy, each with its price, lead time and effect."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from planner.enums import Medium
from planner.schema.base import Float, Id, Int, StrictModel, Text
from planner.schema.site import CoolingZone


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


class BuildStructure(StrictModel):
    """Build a structure of the region (§16): a building or a temporary one (a tent) whose rows host
    racks only once it is built; what it may cool with."""

    kind: Literal["build_structure"]
    building: Id
    """The site building it builds (its halls, rows, power and cooling as the site describes them)."""
    structure: Text = "building"
    """What kind of structure (building, tent …), for people."""
    media: list[Medium] = Field(
        default_factory=lambda: [Medium.air, Medium.liquid], min_length=1, max_length=2
    )
    """Cooling media its rows may use: a tent is air only (liquid-cooled rack types stay out)."""
    life_years: Float | None = Field(None, gt=0, le=100)
    """Service life of the structure, years (a tent's is short): its cost, and with a rate of its own
    its racks' build, keep their book value at the horizon over it."""
    facility_usd_per_mw: Float | None = Field(None, ge=0, le=1e10)
    """The structure's whole build per MW of critical IT standing in it, USD: replaces
    ``costs.facility_usd_per_mw`` (and the backup plant that rate holds) for its racks; none: the
    building rate applies (``cost_usd`` then pays for the structure on top)."""
    pue: Float | None = Field(None, ge=1, le=3)
    """The structure's own annual PUE, for the energy of the racks standing in it (a tent's air-only
    cooling runs higher than a building's); none: the scenario's ``pue``."""
    design_day_pue: Float | None = Field(None, ge=1, le=3)
    """Its PUE on the design day, for power arriving over time; none: its annual ``pue`` when it states
    one, else the scenario's design-day PUE."""
    wue_l_per_kwh: Float | None = Field(None, ge=0, le=100)
    """Its water per kWh of IT energy, L (§21); none: the scenario's ``water``."""
    peak_water_l_per_s_per_mw: Float | None = Field(None, ge=0, le=100)
    """Its design-day water draw per MW of IT, L/s; none: the scenario's ``water``."""
    source: Text = ""
    """Where its cost, lead time, life and PUE come from (or 'estimate')."""


class Retrofit(StrictModel):
    """A change the optimiser may buy (§8): it costs ``cost_usd`` in the phase it is bought and
    takes effect ``lead_phases`` phases later."""

    id: Id
    """Name, unique among retrofits."""
    cost_usd: Float = Field(ge=0, le=1e13)
    """Price, USD (counted in capex in the phase it is bought)."""
    lead_phases: Int = Field(1, ge=0, le=100)
    """Phases between purchase and effect (0: effective in the phase it is bought)."""
    effect: Annotated[
        AddLiquidLoop | RaiseCapacity | RaiseRackPower | BuildStructure, Field(discriminator="kind")
    ]
    """What it changes."""
