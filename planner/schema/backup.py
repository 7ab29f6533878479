"""Backup power as a block of a scenario (§16): the outages a region's buildings see and the
designs a building may get."""

from __future__ import annotations

from pydantic import Field

from planner.schema.base import Bool, Float, Id, NonNegFloat, StrictModel, Text


class Outage(StrictModel):
    """Utility outages a region's buildings see (§16)."""

    events_per_year: Float = Field(ge=0, le=1000)
    """Utility outages per year at each building."""
    duration_h: Float = Field(gt=0, le=1000)
    """How long one lasts, h."""
    source: Text = ""
    """Where the figures come from (or 'estimate')."""


class BackupDesign(StrictModel):
    """One backup-power design a building may get (§16): UPS with generators, generators only, none."""

    id: Id
    """Name (ups_generators, generators, none …)."""
    usd_per_mw: NonNegFloat
    """Capex per MW of the IT load it backs, USD."""
    ride_through: Bool = False
    """Whether racks ride through an outage (a UPS carries them until generators take over)."""
    restore_h: Float | None = Field(None, ge=0, le=1000)
    """Without ride-through: hours until power is back (generators starting); none: the outage's duration."""
    source: Text = ""
    """Where its cost comes from (or 'estimate')."""


class BackupPower(StrictModel):
    """Backup power as a choice per building (§16). Without ride-through an outage interrupts every
    cluster with racks in the building (interruption model, blast radius, goodput) and leaves its
    GPUs dark until power is back; the planner picks per building the design with the lowest $ per
    useful GPU-hour of the plan (TCO plus backup capex over the useful GPU-hours of the horizon)."""

    outage: Outage
    designs: list[BackupDesign] = Field(min_length=1, max_length=10)
    fixed: dict[Id, Id] = Field(default_factory=dict, max_length=10_000)
    """Building → design, for buildings whose backup is decided already; the rest are chosen."""
    in_facility_usd_per_mw: NonNegFloat | None = None
    """Backup plant the facility rate (``costs.facility_usd_per_mw``) already holds, USD per MW of IT:
    a building's backup capex is its design's ``usd_per_mw`` less this, so a design with less plant
    than the rate assumes (``none``) is a credit of exactly the plant it leaves out. None: the
    backup share of ``costs.facility_split`` × the facility rate, or 0 without a split (the facility
    rate holds no backup plant and every design is paid on top of it)."""

    def held_usd_per_mw(self, costs) -> float:
        """The backup plant the facility rate holds, USD per MW of IT (field above)."""
        if self.in_facility_usd_per_mw is not None:
            return self.in_facility_usd_per_mw
        split = costs.facility_split
        return split.backup * costs.facility_usd_per_mw if split is not None else 0.0

    def plant_usd(self, design: BackupDesign, it_kw: float, held_usd_per_mw: float) -> float:
        """Backup capex of one building, USD: (usd_per_mw − the plant its facility rate holds) × IT
        MW (negative for a design with less plant than the rate holds); a structure priced at a rate
        of its own holds none of that plant (``held_usd_per_mw`` 0): usd_per_mw × IT MW."""
        return (design.usd_per_mw - held_usd_per_mw) * it_kw / 1000
