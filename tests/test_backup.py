"""Backup power as a choice per building (SPEC §16): outages without ride-through enter the
interruption model, the blast radius and goodput; the design with the lowest $ per useful GPU-hour
is chosen. Hand-derived figures."""

from __future__ import annotations

import pytest

from planner.errors import InputError
from planner.input.loader import scenario_from_data
from planner.plan.pipeline import plan_scenario
from planner.verifier import verify
from tests.conftest import tiny_scenario
from tests.test_optimize import solved

GT = "grand-teton-h100"
FEED = [{"id": "F", "capacity_kw": 10_000}]


def backed(fixed=None, ups_usd_per_mw=2_000_000.0):
    """One building, one cluster of exactly 64 GPUs (4 Grand Teton racks) checkpointing 360 GB per
    GPU to one 100 GB/s storage rack, restart 10 min. Interruptions: one cause per rack, 6 in 1,000
    days on a one-rack reference: 6 / 24,000 = 0.00025 per rack-hour, 0.001 per hour for 4 racks
    (MTBF 1,000 h). Outages: 8.76 a year (0.001 per hour), 2 h each."""
    rows = [{"id": "R", "positions": 8, "feeds": ["F"], "max_rack_power_kw": 25}]
    s = tiny_scenario(
        rows,
        FEED,
        [
            {
                "id": "job",
                "demand": "exact",
                "gpus": 64,
                "rack_types": [GT],
                "checkpoint_gb_per_gpu": 360,
                "storage_racks": 1,
                "restart_min": 10,
            }
        ],
        reliability={
            "causes": [{"id": "any", "count": 6, "scale": "rack"}],
            "reference": {"days": 1000, "gpus": 16, "gpus_per_server": 8, "gpus_per_rack": 16},
        },
        backup_power={
            "outage": {"events_per_year": 8.76, "duration_h": 2, "source": "estimate"},
            "designs": [
                {"id": "ups_generators", "usd_per_mw": ups_usd_per_mw, "ride_through": True},
                {"id": "none", "usd_per_mw": 0},
            ],
            "fixed": fixed or {},
        },
    )
    return s


def test_an_outage_without_ride_through_halves_the_mtbf_and_lowers_goodput_by_hand() -> None:
    """Checkpoint C = 64 × 360 GB / 100 GB/s = 230.4 s = 0.064 h; R = 1/6 h.
    UPS: MTBF 1,000 h, τ = √(2 · 1,000 · 0.064) = 11.3137 h, goodput 1 − 0.064/11.3137 − (5.6569 +
    0.1667)/1,000 = 0.988520.
    None: rate 0.001 + 8.76 / 8,760 = 0.002 → MTBF 500 h, τ = 8 h, goodput 1 − 0.008 − (4 + 0.1667)/500 =
    0.983667;
    the building is a 'utility' element taking the 64 GPUs down; dark 8.76 × 2 h × 64 = 1,121.28 GPU-hours a
    year."""
    ups = solved(backed({"B1": "ups_generators"}), "highs")
    none_ = solved(backed({"B1": "none"}), "highs")
    (u,), (n,) = ups.reliability.clusters, none_.reliability.clusters
    assert u.mtbf_h == pytest.approx(1000.0)
    assert n.mtbf_h == pytest.approx(500.0)
    assert u.goodput == pytest.approx(0.988520, abs=1e-6)
    assert n.goodput == pytest.approx(1 - 0.008 - (4 + 1 / 6) / 500, abs=1e-6)
    assert [(b.kind, b.id, b.gpus_lost) for b in none_.reliability.blast_radius if b.kind == "utility"] == [
        ("utility", "B1", 64)
    ]
    assert not [b for b in ups.reliability.blast_radius if b.kind == "utility"]
    (bu,), (bn,) = ups.reliability.backup, none_.reliability.backup
    assert (bu.design, bu.fixed, bu.ride_through, bu.gpu_hours_dark_per_year) == (
        "ups_generators",
        True,
        True,
        0.0,
    )
    assert bn.gpu_hours_dark_per_year == pytest.approx(1121.28)
    # capex by hand: 4 × 21.4 kW + 15 kW storage = 100.6 kW → $2M/MW × 0.1006 = $201,200
    assert bu.capex_usd == pytest.approx(201_200.0)
    assert bn.capex_usd == 0.0
    for plan, s in ((ups, backed({"B1": "ups_generators"})), (none_, backed({"B1": "none"}))):
        assert verify(plan, s).ok


@pytest.mark.parametrize(("usd_per_mw", "design"), [(0.0, "ups_generators"), (1e12, "none")])
def test_the_design_with_the_lowest_dollar_per_useful_gpu_hour_is_chosen(
    usd_per_mw: float, design: str
) -> None:
    """A free UPS only adds useful GPU-hours: chosen. One at $1M per kW costs more than every GPU-hour
    it saves: none."""
    plan = solved(backed(ups_usd_per_mw=usd_per_mw), "highs")
    (b,) = plan.reliability.backup
    assert (b.design, b.fixed) == (design, False)
    assert min(b.usd_per_useful_gpu_hour, key=b.usd_per_useful_gpu_hour.get) == design


def test_the_verifier_rejects_an_edited_backup_choice() -> None:
    s = backed()
    plan = solved(s, "highs")
    (b,) = plan.reliability.backup
    edited = plan.model_copy(
        update={
            "reliability": plan.reliability.model_copy(
                update={"backup": [b.model_copy(update={"design": "other"})]}
            )
        }
    )
    assert "reliability backup: the backup-power choice differs from the one the racks and costs give" in [
        str(v) for v in verify(edited, s).violations
    ]


def test_a_fixed_design_must_exist() -> None:
    from planner.errors import InputError

    data = backed().model_dump(mode="json")
    data["backup_power"]["fixed"] = {"B1": "diesel"}
    with pytest.raises(InputError) as e:
        scenario_from_data(data)
    assert any("backup_power.fixed.B1: unknown design 'diesel'" in line for line in e.value.lines()), (
        e.value.lines()
    )


def test_the_reliability_page_shows_the_choice_per_building() -> None:
    from tests.test_app import solved_on

    at = solved_on("ui/reliability_page.py", backed({"B1": "none"}), "rel_solve")
    assert not at.exception
    assert [h.value for h in at.subheader] == ["Clusters", "Backup power per building", "Blast radius"]
    table = at.dataframe[1].value
    assert table.iloc[0]["design"] == "none (fixed)"
    assert table.iloc[0]["GPU-hours dark / year"] == "1,121"
    assert "utility B1" in list(at.dataframe[2].value["element"])


def test_the_backup_capex_enters_capex_and_tco_and_the_useful_price_by_hand() -> None:
    """UPS fixed at $2M per MW of the building's IT (4 Grand Teton racks + the storage rack): capex and
    TCO rise by exactly that, spent at the start. $ per useful GPU-hour = TCO ÷ (H × goodput) with H
    the discounted GPU-hours: UPS goodput 0.988520 (above); none: goodput 0.983667 × the share
    powered, 1 − 8.76 × 2 h ÷ 8,760 h = 0.998 (SPEC §19: GPU-hours × goodput × share powered)."""
    ups = solved(backed({"B1": "ups_generators"}), "highs")
    none_ = solved(backed({"B1": "none"}), "highs")
    s = backed()
    types = s.catalog.by_id()
    kw = 4 * s.rack_power_kw(types[GT]) + s.rack_power_kw(types["storage-rack"])
    assert ups.reliability.backup[0].it_kw == pytest.approx(kw)
    assert ups.kpis.capex_backup_usd == pytest.approx(2_000_000 * kw / 1000, abs=0.01)
    assert none_.kpis.capex_backup_usd == 0
    assert ups.kpis.capex_usd - none_.kpis.capex_usd == pytest.approx(ups.kpis.capex_backup_usd, abs=0.02)
    assert ups.kpis.tco_usd - none_.kpis.tco_usd == pytest.approx(ups.kpis.capex_backup_usd, abs=0.02)
    h = ups.kpis.gpu_hours_npv
    assert h == none_.kpis.gpu_hours_npv
    assert ups.kpis.usd_per_useful_gpu_hour == pytest.approx(ups.kpis.tco_usd / (h * 0.988520), rel=1e-6)
    assert none_.kpis.usd_per_useful_gpu_hour == pytest.approx(
        none_.kpis.tco_usd / (h * (1 - 0.008 - (4 + 1 / 6) / 500) * (1 - 0.002)), rel=1e-6
    )
    assert (
        ups.kpis.usd_per_useful_gpu_hour
        == ups.reliability.backup[0].usd_per_useful_gpu_hour["ups_generators"]
    )
    assert ups.kpis.usd_per_gpu_hour == pytest.approx(ups.kpis.tco_usd / h, rel=1e-6)


def held(fixed: str, plant: float = 1_500_000.0):
    """backed() with the facility rate holding ``plant`` USD per MW of backup plant."""
    data = backed({"B1": fixed}).model_dump(mode="json")
    data["backup_power"]["in_facility_usd_per_mw"] = plant
    return scenario_from_data(data)


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_no_backup_saves_exactly_the_plant_the_facility_rate_holds(solver: str) -> None:
    """The facility rate ($11.7M per MW) holds $1.5M per MW of backup plant: a building fixed at
    "none" pays the facility less exactly that plant (a credit of −1.5M × IT MW), one fixed at
    UPS ($2M per MW) pays only the $0.5M per MW beyond it; the racks are the same, so capex differs
    by exactly $2M × IT MW, as without the credit, and the facility line is untouched; the verifier
    recounts the credit (and rejects the plan against the scenario without it)."""
    ups, none_ = solved(held("ups_generators"), solver), solved(held("none"), solver)
    s = backed()
    types = s.catalog.by_id()
    kw = 4 * s.rack_power_kw(types[GT]) + s.rack_power_kw(types["storage-rack"])
    assert none_.kpis.capex_backup_usd == pytest.approx(-1_500_000 * kw / 1000, abs=0.01)
    assert ups.kpis.capex_backup_usd == pytest.approx(500_000 * kw / 1000, abs=0.01)
    assert none_.reliability.backup[0].capex_usd == pytest.approx(-1_500_000 * kw / 1000, abs=0.01)
    assert ups.kpis.capex_usd - none_.kpis.capex_usd == pytest.approx(2_000_000 * kw / 1000, abs=0.02)
    plain = solved(backed({"B1": "none"}), solver)
    assert plain.kpis.capex_facility_usd == none_.kpis.capex_facility_usd
    assert plain.kpis.capex_usd - none_.kpis.capex_usd == pytest.approx(1_500_000 * kw / 1000, abs=0.02)
    assert verify(none_, held("none")).ok
    rep = verify(none_, backed({"B1": "none"}))
    assert not rep.ok
    assert any("capex_backup_usd" in str(v) for v in rep.violations), [str(v) for v in rep.violations]


def split(fixed: str):
    """backed() with the facility rate ($11.7M per MW) split 25 % shell, 40 % electrical, 22 %
    mechanical, 13 % backup plant, and no ``in_facility_usd_per_mw``: the plant held is the split's."""
    data = backed({"B1": fixed}).model_dump(mode="json")
    data["backup_power"].pop("in_facility_usd_per_mw", None)
    data["costs"]["facility_split"] = {"shell": 0.25, "electrical": 0.40, "mechanical": 0.22, "backup": 0.13}
    return scenario_from_data(data)


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_the_facility_split_prices_each_part_and_no_backup_removes_its_share(solver: str) -> None:
    """4 Grand Teton racks and a storage rack (IT kW as above) at $11.7M per MW: the facility build
    11.7M × IT MW splits into shell 0.25, electrical 0.40, mechanical 0.22, backup 0.13 of it; "none"
    credits exactly the backup part (−0.13 × 11.7M = −$1.521M per MW), UPS ($2M per MW) pays $0.479M
    per MW beyond it; the verifier recounts the parts and refuses an edited one."""
    none_, ups = solved(split("none"), solver), solved(split("ups_generators"), solver)
    s = backed()
    types = s.catalog.by_id()
    kw = 4 * s.rack_power_kw(types[GT]) + s.rack_power_kw(types["storage-rack"])
    build = 11_700_000 * kw / 1000
    parts = none_.kpis.capex_facility_parts_usd
    assert none_.kpis.capex_facility_usd == pytest.approx(build, abs=0.01)
    want = {
        "shell": 0.25 * build,
        "electrical": 0.40 * build,
        "mechanical": 0.22 * build,
        "backup": 0.13 * build,
    }
    assert parts == pytest.approx(want, abs=0.01)
    assert sum(parts.values()) == pytest.approx(none_.kpis.capex_facility_usd, abs=0.02)
    assert none_.kpis.capex_backup_usd == pytest.approx(-parts["backup"], abs=0.01)
    assert ups.kpis.capex_backup_usd == pytest.approx((2_000_000 - 1_521_000) * kw / 1000, abs=0.01)
    assert verify(none_, split("none")).ok
    edited = none_.kpis.model_copy(
        update={"capex_facility_parts_usd": {**parts, "shell": parts["shell"] + 1000}}
    )
    rep = verify(none_.model_copy(update={"kpis": edited}), split("none"))
    assert [str(v) for v in rep.violations if "capex_facility_parts_usd" in str(v)], rep.violations


def test_a_facility_split_that_does_not_add_up_is_refused() -> None:
    data = backed().model_dump(mode="json")
    data["costs"]["facility_split"] = {"shell": 0.3, "electrical": 0.4, "mechanical": 0.22, "backup": 0.13}
    with pytest.raises(InputError) as e:
        scenario_from_data(data)
    assert str(e.value.problems[0]) == (
        "costs.facility_split: shell + electrical + mechanical + backup is 1.05, not 1"
    )


def test_no_backup_saves_the_plant_of_the_racks_back_end_network_too() -> None:
    """With the racks' back-end network (4 Grand Teton racks × 16 GPUs × 70 W = 4.48 kW) the facility
    build and its $1.5M per MW of backup plant cover it too: "none" credits −1.5M × (IT + 4.48 kW)."""
    data = held("none").model_dump(mode="json")
    data["network_allowance"] = True
    s = scenario_from_data(data)
    plan = solved(s, "highs")
    types = s.catalog.by_id()
    kw = 4 * s.rack_power_kw(types[GT]) + s.rack_power_kw(types["storage-rack"])
    assert plan.kpis.allowance_kw == pytest.approx(4.48)
    assert plan.kpis.capex_backup_usd == pytest.approx(-1_500_000 * (kw + 4.48) / 1000, abs=0.01)
    assert plan.reliability.backup[0].it_kw == pytest.approx(kw + 4.48)


def test_backup_plant_held_by_the_facility_rate_is_checked() -> None:
    """The plant the facility rate holds is part of that rate (no more than it) and needs a built
    facility (a lease has no facility build)."""
    from planner.errors import InputError

    with pytest.raises(InputError) as e:
        held("none", 12_000_000.0)
    assert (
        "backup_power.in_facility_usd_per_mw: 12,000,000 is more than the facility rate it is part of "
        "(costs.facility_usd_per_mw 11,700,000)"
    ) in e.value.lines()
    data = held("none").model_dump(mode="json")
    data["costs"] = {**data.get("costs", {}), "colocation_usd_per_kw_month": 184.06}
    with pytest.raises(InputError) as e:
        scenario_from_data(data)
    assert (
        "backup_power.in_facility_usd_per_mw: 1,500,000: a leased facility "
        "(costs.colocation_usd_per_kw_month) has no facility build to hold plant: use 0"
    ) in e.value.lines()


def test_a_building_without_gpus_prices_no_useful_hour_and_both_sides_agree() -> None:
    """Only the storage rack of the backed hall stands: no GPU-hours, so no $ per useful GPU-hour
    (0, as the KPIs state it) for any design; the choice falls to the first design (ties by the
    designs' order) and the verifier's recount gives the same (it once failed to validate)."""
    from planner.rules.reliability import reliability_report
    from planner.verifier.reliability_recount import recount_reliability
    from planner.verifier.site import site_view

    s = backed()
    plan = plan_scenario(s)
    storage = [r for r in plan.racks if r.rack_type == "storage-rack"]
    got = reliability_report(s, storage, tco_usd=1e6)
    assert [(b.design, b.usd_per_useful_gpu_hour) for b in got.backup] == [
        ("ups_generators", {"ups_generators": 0.0, "none": 0.0})
    ]
    assert recount_reliability(s, site_view(s), storage, [], 1e6) == got


def test_the_phases_capex_adds_up_to_the_plans_with_network_racks_and_backup() -> None:
    """Two quarters, 2 Grand Teton racks new in each (32 then 64 GPUs), the pod's 12 kW network rack
    standing from q1 and UPS fixed at $2M per MW: q1 spends what q2 spends on its two racks plus the
    network rack's facility build (12 kW × $11.7M per MW = $140,400) and the backup plant (all at the
    start), so the phases add up to capex_usd; the verifier recounts the same."""
    s = backed({"B1": "ups_generators"})
    data = s.model_dump(mode="json", exclude_none=True)
    data["phases"] = [{"id": "q1", "start": "2027-01-01"}, {"id": "q2", "start": "2027-04-01"}]
    data["clusters"][0].update({"demand": "exact", "gpus": None, "gpus_by_phase": {"q1": 32, "q2": 64}})
    data["clusters"][0].pop("gpus")
    data["site"]["buildings"][0]["halls"][0]["pods"][0]["network_rack_type"] = "network-rack"
    s = scenario_from_data(data)
    plan = solved(s, "highs")
    q1, q2 = plan.phases
    assert (q1.new_racks, q2.new_racks) == (3, 2)  # the storage rack stands from q1
    # the storage rack (catalog: 15 kW, 16 links): equipment, 16 multimode links at the site default
    # $1,400 each (its cable is the shortest class that reaches: 6.6 m of MMF here) and its facility
    assert next(r.link_class for r in plan.racks if r.rack_type == "storage-rack") == "mmf"
    storage = 500_000 + 16 * 1_400 + 15.0 * 11_700
    network = 12.0 * 11_700  # the pod's network rack's facility build
    assert q1.capex_usd - q2.capex_usd == pytest.approx(
        storage + network + plan.kpis.capex_backup_usd, abs=0.05
    )
    assert plan.kpis.capex_backup_usd > 0
    assert sum(p.capex_usd for p in plan.phases) == pytest.approx(plan.kpis.capex_usd, abs=0.05)
    assert verify(plan, s).ok


def test_a_cluster_without_storage_racks_gets_goodput_from_its_in_memory_checkpoint_by_hand() -> None:
    """The same 64 GPUs without a storage rack, checkpointing to host memory and peers in 36 s
    (C = 0.01 h), restarting in 6 min after a job failure and 60 min cold after a power loss.
    UPS: MTBF 1,000 h, τ = √(2 · 1,000 · 0.01) = √20 h, goodput 1 − 0.01/√20 − (√20/2 + 0.1)/1,000
    = 0.995428. None: MTBF 500 h (half the interruptions are outages), mean restart (0.1 + 1) / 2
    = 0.55 h, τ = √10 h, goodput 1 − 0.01/√10 − (√10/2 + 0.55)/500 = 0.992575. $ per useful
    GPU-hour is TCO ÷ (GPU-hours × goodput × share powered, 1 − 8.76 × 2 / 8,760)."""
    import math

    def bare(fixed):
        data = backed(fixed).model_dump(mode="json", exclude_none=True)
        job = data["clusters"][0]
        for k in ("storage_racks", "checkpoint_gb_per_gpu"):
            job.pop(k)
        job.update({"checkpoint_s": 36, "restart_min": 6, "cold_restart_min": 60})
        return scenario_from_data(data)

    ups, none_ = (solved(bare({"B1": d}), "highs") for d in ("ups_generators", "none"))
    (u,), (n,) = ups.reliability.clusters, none_.reliability.clusters
    assert (u.storage_racks, u.mtbf_h, n.mtbf_h) == (0, pytest.approx(1000.0), pytest.approx(500.0))
    assert u.goodput == pytest.approx(1 - 0.01 / math.sqrt(20) - (math.sqrt(20) / 2 + 0.1) / 1000, abs=1e-6)
    assert n.goodput == pytest.approx(1 - 0.01 / math.sqrt(10) - (math.sqrt(10) / 2 + 0.55) / 500, abs=1e-6)
    assert round(u.goodput, 6) == 0.995428
    assert round(n.goodput, 6) == 0.992575
    h = none_.kpis.gpu_hours_npv
    assert none_.kpis.usd_per_useful_gpu_hour == pytest.approx(
        none_.kpis.tco_usd / (h * n.goodput * (1 - 8.76 * 2 / 8760)), rel=1e-6
    )
    for plan, fixed in ((ups, "ups_generators"), (none_, "none")):
        assert verify(plan, bare({"B1": fixed})).ok
