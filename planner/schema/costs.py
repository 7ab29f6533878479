"""Cost parameters (§10): the ``costs:`` block of a scenario; each default names its source."""

from __future__ import annotations

from pydantic import Field, model_validator

from planner.schema.base import Float, StrictModel, Text


class FacilitySplit(StrictModel):
    """What the facility rate buys, as shares of ``facility_usd_per_mw`` that add up to 1 (§19)."""

    shell: Float = Field(ge=0, le=1)
    """Land, shell and fit-out."""
    electrical: Float = Field(ge=0, le=1)
    """Substation share, medium- and low-voltage distribution, busways (no backup plant)."""
    mechanical: Float = Field(ge=0, le=1)
    """Chillers, dry coolers, CDUs and air handling."""
    backup: Float = Field(ge=0, le=1)
    """UPS, batteries and generators: the plant a backup-power design replaces (``backup_power``)."""
    source: Text = ""
    """Where the shares come from (or 'estimate')."""

    @model_validator(mode="after")
    def _adds_up(self):
        total = self.shell + self.electrical + self.mechanical + self.backup
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"shell + electrical + mechanical + backup is {total:g}, not 1")
        return self

    def parts(self) -> dict[str, float]:
        """Part → share."""
        return {
            "shell": self.shell,
            "electrical": self.electrical,
            "mechanical": self.mechanical,
            "backup": self.backup,
        }


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
    facility_split: FacilitySplit | None = None
    """The facility rate split into shell, electrical, mechanical and backup plant (capex shown by
    part; the backup share is the plant a backup design replaces); none: shown whole."""
    carbon_usd_per_t: Float | None = Field(None, ge=0, le=1e5)
    """Carbon price, USD per t CO2 (§21): with ``power_sources``, each source's emissions priced in
    TCO (and so in min_tco's choice of source); none: emissions are reported, not priced."""
    facility_life_years: Float | None = Field(None, gt=0, le=100)
    """Service life of the facility build (shell and plant), years: its book value at the horizon,
    straight-line, is credited as residual value (none: the build counts whole within the horizon)."""
