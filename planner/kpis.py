"""KPIs and costs of a placement (§10). Each formula is stated once, here.

- gpus = Σ rack GPUs; racks = number of placed racks.
- pflops_bf16 = Σ GPUs × dense BF16 TFLOPS per GPU / 1000.
- it_kw = Σ planning power per rack (rated, capped GPUs, × power_budget_ratio).
- facility_kw = it_kw × PUE.
- gpus_per_mw = gpus / (it_kw / 1000); pflops_per_mw likewise.
- avg_kw_per_rack = it_kw / racks; max_kw_per_rack = max rack planning power.
- gpus_per_m2 = gpus / Σ floor area of halls holding at least one rack.
- capex_racks_usd = Σ rack capex; capex_fabric_usd = gpus × fabric cost per GPU;
  capex_links_usd = Σ rack links × cost per link of the rack's link class;
  capex_usd = racks + fabric + links.
- cable_m = Σ rack links × cable length.
"""

from __future__ import annotations

FACILITY_USD_PER_KW = 11_700.0
"""Facility build cost per kW of critical IT, USD: $11.7M per MW, the average of $9.3-15.0M
(Cushman & Wakefield Data Center Development Cost Guide 2025). Used to price added power or cooling."""

from collections.abc import Iterable

from planner.plan import Kpis, PlacedRack
from planner.schema import Scenario


def compute_kpis(scenario: Scenario, racks: Iterable[PlacedRack]) -> Kpis:
    """KPIs of a list of placed racks under a scenario (formulas in the module docstring)."""
    types = scenario.catalog.by_id()
    fabric = scenario.site.fabric
    classes = {c.id: c for c in fabric.link_classes}
    area = {h.id: h.floor_area_m2 for b in scenario.site.buildings for h in b.halls}
    gpus = n = 0
    it_kw = pflops = max_kw = capex_racks = capex_links = cable_m = 0.0
    halls_used: set[str] = set()
    for r in racks:
        t = types.get(r.rack_type)
        if t is None:
            continue
        kw = scenario.rack_power_kw(t)
        n += 1
        gpus += t.gpus
        it_kw += kw
        max_kw = max(max_kw, kw)
        pflops += t.pflops_bf16
        capex_racks += t.capex_usd
        if r.link_class in classes:
            capex_links += t.links * classes[r.link_class].cost_usd_per_link
        cable_m += t.links * r.cable_length_m
        halls_used.add(r.hall)
    mw = it_kw / 1000.0
    floor = sum(area.get(h, 0.0) for h in halls_used)
    fabric_usd = gpus * fabric.cost_usd_per_gpu
    return Kpis(
        gpus=gpus,
        racks=n,
        pflops_bf16=round(pflops, 6),
        it_kw=round(it_kw, 6),
        facility_kw=round(it_kw * scenario.pue, 6),
        gpus_per_mw=round(gpus / mw, 6) if mw else 0.0,
        pflops_per_mw=round(pflops / mw, 6) if mw else 0.0,
        avg_kw_per_rack=round(it_kw / n, 6) if n else 0.0,
        max_kw_per_rack=round(max_kw, 6),
        gpus_per_m2=round(gpus / floor, 6) if floor else 0.0,
        capex_racks_usd=round(capex_racks, 2),
        capex_fabric_usd=round(fabric_usd, 2),
        capex_links_usd=round(capex_links, 2),
        capex_usd=round(capex_racks + fabric_usd + capex_links, 2),
        cable_m=round(cable_m, 6),
    )
