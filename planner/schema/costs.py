"""Cost parameters (§10): the ``costs:`` block of a scenario; each default names its source."""

from __future__ import annotations

from pydantic import Field

from planner.schema.base import Float, StrictModel


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
    facility_life_years: Float | None = Field(None, gt=0, le=100)
    """Service life of the facility build (shell and plant), years: its book value at the horizon,
    straight-line, is credited as residual value (none: the build counts whole within the horizon)."""
