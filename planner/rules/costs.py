"""Costs (SPEC §10): every cost formula once, used by the optimiser, the first-fit baseline, the
KPIs and the reports alike. Money in USD, power in kW, time in years from the first phase's
start (a single-phase plan starts at 0).

- equipment capex of a placed rack = rack price + GPUs × fabric cost per GPU + fabric links ×
  cost per link of the class it uses at its position;
- facility capex of a placed rack = its planning kW × facility build per kW of critical IT
  (none when the site is leased: colocation);
- opex per year of a rack = energy (kW × average utilisation × PUE × 8,760 h × price per kWh)
  + colocation (kW × $/kW-month × 12, when leased) + maintenance (share × equipment capex);
- TCO = net present value over the horizon H: each capex at its phase's start t discounted by
  (1 + r)^-t, each opex flowing from t to H discounted continuously:
  ∫_t^H (1 + r)^-s ds = ((1 + r)^-t − (1 + r)^-H) / ln(1 + r)   (H − t when r = 0);
- GPU-hours available = Σ GPUs × (H − t) × 8,760;
- levelized $/GPU-hour (like the levelized cost of energy) = NPV of every cost ÷ NPV of the
  GPU-hours, each hour discounted like a dollar from the phase it comes online:
  Σ GPUs × 8,760 × ∫_t^H (1 + r)^-s ds; $ per useful GPU-hour divides by those hours × the
  cluster's goodput (§11).
- service life L (§17, a rack type may state one): a rack placed at t retires at the start τ of
  the first phase at least L after t: its opex and GPU-hours run from t to min(τ, H), its removal
  cost is paid at τ (discounted, when τ < H); equipment capex depreciates straight-line over L, and
  a rack still standing at H leaves its book value equipment × max(0, 1 − (H − t)/L), credited at H
  (discounted) as residual value. Racks without a service life: none of these terms.
- facility life L_f (``costs.facility_life_years``) and a structure's life (a ``build_structure``
  retrofit's ``life_years``): a build paid at t leaves its book value × max(0, 1 − (H − t)/L) at H,
  credited (discounted) as residual value like a rack's, whether or not the racks it hosts retire
  before H; without a life none.
- IT load is everything in the white space (SPEC §10): GPU, storage and network racks and every
  switch and transceiver of a designed fabric, so each of them carries facility capex, energy and
  (equipment) maintenance alike.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date

from planner.schema import Costs, LinkClass, RackType, Scenario

FACILITY_USD_PER_KW = 11_700.0
"""Facility build cost per kW of critical IT, USD: $11.7M per MW, the average of $9.3-15.0M
(Cushman & Wakefield Data Center Development Cost Guide 2025); the default of Costs."""
HOURS_PER_YEAR = 8760.0
DAYS_PER_YEAR = 365.25


def links_usd(rack: RackType, link: LinkClass | None) -> float:
    """Fabric links of one rack at a position: links × cost per link of its class (0 without links), USD."""
    return rack.links * link.cost_usd_per_link if link is not None and rack.links else 0.0


def fabric_usd(rack: RackType, fabric_usd_per_gpu: float) -> float:
    """Fabric (switches and cables) of one rack's GPUs: GPUs × cost per GPU, USD."""
    return rack.gpus * fabric_usd_per_gpu


def rack_capex_usd(rack: RackType, link: LinkClass | None, fabric_usd_per_gpu: float) -> float:
    """Equipment capex of one placed rack: price + fabric + links, USD (module docstring)."""
    return rack.capex_usd + fabric_usd(rack, fabric_usd_per_gpu) + links_usd(rack, link)


def facility_usd(kw: float, costs: Costs) -> float:
    """Facility build for ``kw`` of critical IT, USD (0 when leased)."""
    return 0.0 if costs.colocation_usd_per_kw_month is not None else kw * costs.facility_usd_per_mw / 1000.0


def energy_usd_per_year(kw: float, costs: Costs, pue: float) -> float:
    """kW × average utilisation × PUE × 8,760 h × price per kWh, USD per year."""
    return kw * costs.average_utilisation * pue * HOURS_PER_YEAR * costs.energy_usd_per_kwh


def colocation_usd_per_year(kw: float, costs: Costs) -> float:
    """kW × $/kW-month × 12 when leased, else 0, USD per year."""
    return 0.0 if costs.colocation_usd_per_kw_month is None else kw * costs.colocation_usd_per_kw_month * 12.0


def maintenance_usd_per_year(equipment_capex_usd: float, costs: Costs) -> float:
    """Maintenance share × equipment capex, USD per year."""
    return equipment_capex_usd * costs.maintenance_share_per_year


def opex_usd_per_year(kw: float, equipment_capex_usd: float, costs: Costs, pue: float) -> float:
    """Energy + colocation + maintenance of one rack (or any load), USD per year."""
    return (
        energy_usd_per_year(kw, costs, pue)
        + colocation_usd_per_year(kw, costs)
        + maintenance_usd_per_year(equipment_capex_usd, costs)
    )


def phase_years(scenario: Scenario) -> dict[str | None, float]:
    """Phase → its start in years from the first phase's start (None → 0)."""
    out: dict[str | None, float] = {None: 0.0}
    if scenario.phases:
        first = scenario.phases[0].start
        for p in scenario.phases:
            out[p.id] = years_since(first, p.start)
    return out


def years_since(start: date, when: date) -> float:
    """Years from ``start`` to ``when`` (days ÷ 365.25)."""
    return (when - start).days / DAYS_PER_YEAR


def discount(t: float, rate: float) -> float:
    """(1 + rate)^-t: today's value of 1 USD paid at year t."""
    return (1.0 + rate) ** (-t)


def book_share(life_years: float | None, t: float, horizon: float) -> float:
    """Share of a capex paid at year t still on the books at the horizon: max(0, 1 − (H − t)/L),
    straight-line over its life L (0 without a life or from H on)."""
    if life_years is None or t >= horizon:
        return 0.0
    return max(0.0, 1.0 - (horizon - t) / life_years)


def build_npv_usd(usd: float, t: float, life_years: float | None, costs: Costs) -> tuple[float, float]:
    """(NPV, residual) of a build (facility or structure) paid at year t: usd · (1 + r)^-t less its
    residual usd · book share (:func:`book_share`) credited at the horizon, USD."""
    h, r = costs.horizon_years, costs.discount_rate
    residual = usd * book_share(life_years, t, h)
    return usd * discount(t, r) - residual * discount(h, r), residual


def structure_life(retrofit) -> float | None:
    """A retrofit's life for its residual value: a structure's ``life_years`` (other retrofits none)."""
    return getattr(retrofit.effect, "life_years", None)


def annuity(t: float, horizon: float, rate: float) -> float:
    """Today's value of 1 USD per year flowing from year t to the horizon (0 if t ≥ horizon)."""
    if t >= horizon:
        return 0.0
    if rate == 0:
        return horizon - t
    return (discount(t, rate) - discount(horizon, rate)) / math.log1p(rate)


def phase_annuities(scenario: Scenario) -> list[float]:
    """Today's value of 1 USD per year flowing through each phase (one entry without phases):
    annuity(t_p, H) − annuity(t_{p+1}, H), t the phases' starts in years, the last phase running to
    the horizon H."""
    h, r = scenario.costs.horizon_years, scenario.costs.discount_rate
    starts = list(phase_years(scenario).values())[1:] or [0.0]
    ends = [*starts[1:], h]
    return [annuity(min(a, h), h, r) - annuity(min(b, h), h, r) for a, b in zip(starts, ends, strict=True)]


@dataclass(frozen=True)
class RackCost:
    """What one rack placed at year t costs and yields over the horizon."""

    capex_usd: float
    """Equipment + facility capex (undiscounted)."""
    opex_usd_per_year: float
    tco_usd: float
    """Discounted capex + discounted opex to the horizon."""
    gpu_hours: float
    """GPU-hours from t to the horizon."""
    gpu_hours_npv: float
    """The same hours discounted like dollars (levelized cost's denominator)."""
    removal_usd: float = 0.0
    """Removal cost paid at retirement within the horizon (undiscounted)."""
    residual_usd: float = 0.0
    """Book value at the horizon (undiscounted): the equipment's (a rack with a service life standing
    then) and its facility build's (with a facility life)."""


def rack_cost(
    rack: RackType,
    kw: float,
    link: LinkClass | None,
    fabric_usd_per_gpu: float,
    costs: Costs,
    pue: float,
    t: float = 0.0,
    existing: bool = False,
    retire: float | None = None,
    life_years: float | None = None,
    removal_usd: float = 0.0,
) -> RackCost:
    """The cost terms of one rack placed at year ``t`` (an existing rack costs no capex); with a
    service life of ``life_years``, retired at year ``retire`` (None: standing at the horizon),
    paying ``removal_usd`` then (module docstring)."""
    equipment = rack_capex_usd(rack, link, fabric_usd_per_gpu)
    capex = 0.0 if existing else equipment + facility_usd(kw, costs)
    opex = opex_usd_per_year(kw, equipment, costs, pue)
    h, r = costs.horizon_years, costs.discount_rate
    end = h if retire is None else min(retire, h)
    running = annuity(t, h, r) - annuity(end, h, r)
    tco = capex * discount(t, r) + opex * running
    removal = removal_usd if retire is not None and retire < h else 0.0
    residual = 0.0
    if life_years is not None and not existing and (retire is None or retire >= h) and t < h:
        residual = equipment * max(0.0, 1.0 - (h - t) / life_years)
    if not existing:  # the position's build stays when the rack retires
        residual += facility_usd(kw, costs) * book_share(costs.facility_life_years, t, h)
    tco += removal * discount(retire or 0.0, r) - residual * discount(h, r)
    hours = rack.gpus * max(0.0, end - t) * HOURS_PER_YEAR
    hours_npv = rack.gpus * HOURS_PER_YEAR * running
    return RackCost(capex, opex, tco, hours, hours_npv, removal, residual)


def lifecycle(scenario: Scenario, rack_type: str, phase: str | None, years: dict[str | None, float]) -> dict:
    """The service-life arguments of :func:`rack_cost` for a rack of a type placed in a phase:
    retire (year), life_years, removal_usd (empty for a type without a service life)."""
    life = scenario.service_life.get(rack_type)
    if life is None:
        return {}
    until = scenario.retire_index(rack_type, phase)
    retire = None if until is None else years[scenario.phases[until].id]
    return {"retire": retire, "life_years": life.years, "removal_usd": life.removal_cost_usd}
