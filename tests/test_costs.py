"""Cost formulas (planner.rules.costs) against hand-computed values, one test per formula, and the
$/GPU-hour of a one-phase plan worked out by hand."""

from __future__ import annotations

import math
from datetime import date

import pytest

from planner.rules.costs import (
    annuity,
    colocation_usd_per_year,
    discount,
    energy_usd_per_year,
    facility_usd,
    maintenance_usd_per_year,
    rack_capex_usd,
    rack_cost,
    years_since,
)
from planner.schema import Costs, LinkClass, RackType

GT = RackType(
    id="gt",
    servers_per_rack=2,
    gpus_per_server=8,
    gpu_power_w=700,
    non_gpu_power_kw_per_server=4.6,
    overhead_power_kw=1.0,
    weight_kg=381,
    capex_usd=650_000,
    links_per_server=8,
)
MMF = LinkClass(id="mmf", max_length_m=50, cost_usd_per_link=1400)


def test_equipment_capex() -> None:
    """$650,000 + 16 GPUs × $4,200 + 16 links × $1,400 = $739,600."""
    assert rack_capex_usd(GT, MMF, 4200) == 739_600


def test_facility_capex_built_or_leased() -> None:
    """21.4 kW × $11.7M per MW = $250,380; none when leased."""
    assert facility_usd(21.4, Costs()) == pytest.approx(250_380)
    assert facility_usd(21.4, Costs(colocation_usd_per_kw_month=184.06)) == 0


def test_energy_per_year() -> None:
    """21.4 kW × 0.8 utilisation × 1.08 PUE × 8,760 h × $0.0892 = $14,447.63."""
    assert energy_usd_per_year(21.4, Costs(), 1.08) == pytest.approx(21.4 * 0.8 * 1.08 * 8760 * 0.0892)
    assert energy_usd_per_year(21.4, Costs(), 1.08) == pytest.approx(14_447.63, abs=0.01)


def test_colocation_per_year() -> None:
    """21.4 kW × $184.06 per kW-month × 12 = $47,266.61; none when built."""
    assert colocation_usd_per_year(21.4, Costs(colocation_usd_per_kw_month=184.06)) == pytest.approx(
        47_266.608
    )
    assert colocation_usd_per_year(21.4, Costs()) == 0


def test_maintenance_per_year() -> None:
    """3 % of $739,600 = $22,188."""
    assert maintenance_usd_per_year(739_600, Costs()) == pytest.approx(22_188)


def test_discount_and_annuity() -> None:
    """At 8 %: $1 in 2 years is worth 1/1.08² = 0.857339; $1 a year from year 0 to 5 is worth
    (1 − 1.08⁻⁵) / ln 1.08 = 4.1504; at 0 % it is just 5."""
    assert discount(2, 0.08) == pytest.approx(1 / 1.08**2)
    assert annuity(0, 5, 0.08) == pytest.approx((1 - 1.08**-5) / math.log(1.08))
    assert annuity(0, 5, 0.0) == 5
    assert annuity(6, 5, 0.08) == 0


def test_years_between_dates() -> None:
    assert years_since(date(2026, 1, 1), date(2027, 1, 1)) == pytest.approx(365 / 365.25)


def test_one_rack_tco_and_dollars_per_gpu_hour_by_hand() -> None:
    """One GT rack placed at year 0, horizon 5 years, 8 %:
    capex 739,600 + 250,380 = 989,980; opex 14,447.63 + 22,188 = 36,635.63 a year;
    TCO = 989,980 + 36,635.63 × 4.150370 = 1,142,031.4; GPU-hours = 16 × 5 × 8,760 = 700,800,
    worth 16 × 8,760 × 4.150370 = 581,715.9 today when each hour is discounted like a dollar;
    levelized $/GPU-hour = 1,142,031.4 ÷ 581,715.9 = 1.96321 (undiscounted hours would give 1.62961,
    17 % too low)."""
    c = rack_cost(GT, 21.4, MMF, 4200, Costs(), 1.08)
    a = (1 - 1.08**-5) / math.log(1.08)  # the continuous annuity factor the docstring uses
    assert a == pytest.approx(4.150370, abs=1e-6)
    assert c.capex_usd == pytest.approx(989_980)
    assert c.opex_usd_per_year == pytest.approx(36_635.63, abs=0.01)
    assert c.tco_usd == pytest.approx(1_142_031.4, abs=0.1)
    assert c.gpu_hours == 700_800
    assert c.gpu_hours_npv == pytest.approx(581_715.9, abs=0.1)
    assert c.tco_usd / c.gpu_hours_npv == pytest.approx(1.96321, abs=1e-5)


def test_plan_kpis_carry_the_same_costs() -> None:
    """A one-rack plan on a tiny site: KPIs = the rack's costs + the (absent) network racks."""
    from planner.plan.pipeline import plan_scenario
    from tests.conftest import tiny_scenario

    s = tiny_scenario(
        [{"id": "R1", "positions": 1, "feeds": ["F"]}],
        [{"id": "F", "capacity_kw": 1000}],
        [{"id": "c1", "demand": "max", "gpus": 16, "rack_types": ["grand-teton-h100"]}],
    )
    plan = plan_scenario(s)
    k = plan.kpis
    r = plan.racks[0]
    types = s.catalog.by_id()
    link = {c.id: c for c in s.site.fabric.link_classes}[r.link_class]
    c = rack_cost(types[r.rack_type], 21.4, link, 4200, s.costs, s.pue)
    assert (k.capex_usd, k.opex_usd_per_year, k.tco_usd, k.gpu_hours) == (
        round(c.capex_usd, 2),
        round(c.opex_usd_per_year, 2),
        round(c.tco_usd, 2),
        c.gpu_hours,
    )
    assert k.usd_per_gpu_hour == pytest.approx(1.96321, abs=1e-5)  # levelized, by hand in the test above
    assert k.usd_per_useful_gpu_hour == k.usd_per_gpu_hour  # no checkpoint stated: every hour counts whole


def test_useful_gpu_hours_are_discounted_hours_times_goodput() -> None:
    """The same rack with a 2 GB/GPU checkpoint and a 100 GB/s storage rack beside it: goodput g of
    the plan's reliability section; $ per useful GPU-hour = TCO ÷ (discounted GPU-hours × g)."""
    from planner.plan.pipeline import plan_scenario
    from tests.conftest import tiny_scenario

    s = tiny_scenario(
        [{"id": "R1", "positions": 2, "feeds": ["F"]}],
        [{"id": "F", "capacity_kw": 1000}],
        [
            {
                "id": "c1",
                "demand": "exact",
                "gpus": 16,
                "rack_types": ["grand-teton-h100"],
                "storage_racks": 1,
                "checkpoint_gb_per_gpu": 2.0,
            }
        ],
    )
    plan = plan_scenario(s)
    k, g = plan.kpis, plan.reliability.clusters[0].goodput
    assert 0 < g < 1
    assert k.usd_per_useful_gpu_hour == pytest.approx(k.tco_usd / (k.gpu_hours_npv * g), rel=1e-6)


def test_stranded_power_is_attributed_to_what_binds() -> None:
    """small-hall: the utility's 2,000 usable kW carry 1,575.6 kW (54 GT × 21.4 + 3 NVL72 × 132 + two
    12 kW network racks); the 424.4 kW left cannot be used because CZ-AIR has 11 kW of air left, less
    than any rack's air heat: stranded by cooling. dr-hall: the UPS N-1 limits bind before space does."""
    from pathlib import Path

    from planner.input.loader import load_scenario
    from planner.plan.pipeline import plan_scenario

    root = Path(__file__).resolve().parent.parent / "datasets"
    plan = plan_scenario(load_scenario(root / "small-hall.yaml"))
    assert (plan.kpis.stranded_kw, [(x.node, x.kw, x.reason) for x in plan.stranded]) == (
        424.4,
        [("UTIL", 424.4, "cooling")],
    )
    plan = plan_scenario(load_scenario(root / "dr-hall.yaml"))
    assert [(x.node, x.reason) for x in plan.stranded] == [("UTIL", "N-1")]


@pytest.mark.parametrize("name", ["small-hall", "fleet-expansion", "meta-24k-roce-vs-ib"])
def test_every_capex_breakdown_adds_up_to_the_total(name: str) -> None:
    """One list of parts (planner.plan.kpis.CAPEX_PARTS) for the CLI summary, the dashboard's capex card
    and the compare table: racks + fabric + links + facility + retrofits + backup power + energy storage
    = capex."""
    from pathlib import Path

    from planner.input.loader import load_scenario
    from planner.plan.kpis import capex_parts, capex_text
    from planner.plan.pipeline import plan_scenario

    k = plan_scenario(
        load_scenario(Path(__file__).resolve().parent.parent / "datasets" / f"{name}.yaml")
    ).kpis
    parts = capex_parts(k)
    assert list(parts) == [
        "racks",
        "fabric",
        "links",
        "facility",
        "retrofits",
        "backup power",
        "energy storage",
    ]
    assert parts["backup power"] == 0  # no backup_power in these scenarios
    assert parts["energy storage"] == 0  # no power_stability in these scenarios
    assert sum(parts.values()) == pytest.approx(k.capex_usd, abs=0.05)
    assert capex_text(k).endswith(f" = ${k.capex_usd:,.0f}")
    assert parts["facility"] > 0
