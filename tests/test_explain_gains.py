"""explain on feasible plans: candidates ranked by what relaxing them buys (LP-dual screen),
gains re-solved from the base plan, never negative, the joint line naming its limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.explainer import explain_feasible
from planner.input.loader import load_scenario
from planner.plan.pipeline import plan_scenario
from planner.schema import Scenario

DATASETS = Path(__file__).resolve().parent.parent / "datasets"


@pytest.fixture(scope="module")
def small():
    s = load_scenario(DATASETS / "small-hall.yaml")
    return s, plan_scenario(s)


def test_small_hall_ranks_the_air_zone_first_with_its_real_gain(small) -> None:
    """CZ-AIR is the tightest limit (1,239 of 1,250 kW: 54 GT racks, the air share of three NVL72
    racks and two network racks); +10% (125 kW) is worth more than any power step, and the re-solve
    from the base plan gives its exact value: +24 GPUs."""
    s, plan = small
    ex = explain_feasible(s, plan)
    first = ex.relaxations[0]
    assert (first.kind, first.ident) == ("cooling_zone", "CZ-AIR")
    assert first.gain == 24
    assert first.gain_upper is None
    assert ex.findings[0].text == (
        "cooling CZ-AIR: 1,239 of 1,250 kW used (99.1%); CZ-AIR +125 kW of cooling → +24 GPUs (≈ $1,462,500)"
    )
    assert all(r.gain is None or r.gain >= 0 for r in ex.relaxations)
    joint = ex.findings[-1].text
    assert joint.startswith("relaxing cooling CZ-AIR; power ")
    assert " together by one step → +" in joint


def test_dr_hall_relaxes_the_three_ups_together() -> None:
    s = load_scenario(DATASETS / "dr-hall.yaml")
    ex = explain_feasible(s, plan_scenario(s))
    r = ex.relaxations[0]
    assert (r.kind, {r.ident, *r.peers}) == ("power_node", {"UPS-1", "UPS-2", "UPS-3"})
    assert r.gain == 96


def test_demand_bound_plan_says_so_and_gains_are_never_negative() -> None:
    s = load_scenario(DATASETS / "meta-24k-building.yaml")
    ex = explain_feasible(s, plan_scenario(s))
    assert ex.findings[0].text.startswith(
        "clusters train-1, train-2, train-3, train-4 and 4 more at their GPU cap"
    )
    assert all(r.gain is None or r.gain == 0 for r in ex.relaxations)
    assert "-0" not in ex.render()
    assert "→ -" not in ex.render()


def test_fleet_expansion_names_the_hall_positions_that_hold_it() -> None:
    """Both halls use every position; the as-many-as-fit H100 cluster and the NVL72 cluster (1,152
    wanted from q3, 1,080 placed) are short, so a limit binds. B2-H1 by hand: rows of 4 + 4 less the
    pod's network rack = 7 positions, 7 NVL72 racks (132 kW each on two 700 kW × 0.8 = 560 kW
    busways). +10 % adds one position to each row; in B2-R2 a fifth rack would put 660 kW on the
    surviving busway (> 560), in B2-R1 a fourth puts 3 × 132 + 12 (network rack) + 132 = 540 ≤ 560;
    liquid 8 × 112.2 ≤ 1,200 and air 8 × 19.8 + 12 ≤ 200 kW hold. One more rack from q3: 72 GPUs ×
    2 phases = +144 GPU-phases."""
    s = load_scenario(DATASETS / "fleet-expansion.yaml")
    ex = explain_feasible(s, plan_scenario(s))
    text = ex.render()
    assert "no limit binds" not in text
    assert (
        "  - hall positions B2-H1: 7 of 7 positions used (100.0%); hall B2-H1 +2 positions → +144 GPU-phases"
        in text
    )
    b1 = next(r for r in ex.relaxations if r.ident == "B1-H1")
    assert (b1.kind, b1.used, b1.limit, b1.step) == ("hall_positions", 79, 79, "hall B1-H1 +14 positions")
    assert b1.gain > 0


def _one_row(cluster: dict) -> Scenario:
    """One row of 4 positions (the pod's network rack stands in the 1-position row NET): 8-GPU racks,
    power and cooling to spare."""
    from tests.conftest import tiny_scenario

    rack = {
        "id": "s8",
        "servers_per_rack": 1,
        "gpus_per_server": 8,
        "gpu_power_w": 500,
        "weight_kg": 300,
        "capex_usd": 1,
    }
    return tiny_scenario(
        [{"id": "R", "positions": 4, "feeds": ["F"]}],
        [{"id": "F", "capacity_kw": 10_000}],
        [{"rack_types": ["s8"], "id": "c", **cluster}],
        rack_types=[rack],
    )


def test_no_limit_binds_when_every_cluster_got_all_it_asked() -> None:
    """Exactly 16 GPUs: two racks in four positions, nothing full."""
    s = _one_row({"demand": "exact", "gpus": 16})
    ex = explain_feasible(s, plan_scenario(s))
    assert [f.text for f in ex.findings] == [
        "cluster c at its GPU cap; no limit binds: every cluster got all it asked; demand, not capacity, "
        "decides this plan"
    ]


def test_as_many_as_fit_is_held_by_the_positions_by_hand() -> None:
    """As many as fit: 4 racks fill the row (32 GPUs). +10 % lengthens R by ⌈0.4⌉ = 1 and NET by
    ⌈0.1⌉ = 1 position (its network rack's spot stays taken): 2 more racks, +16 GPUs."""
    s = _one_row({"demand": "max"})
    ex = explain_feasible(s, plan_scenario(s))
    assert ex.render().splitlines()[1] == (
        "  - hall positions H1: 4 of 4 positions used (100.0%); hall H1 +2 positions → +16 GPUs"
    )


def test_a_spread_limit_is_screened_and_its_gain_derived_by_hand() -> None:
    """As many as fit, at most half its GPUs in either air zone: row RA (zone AIR, 30 positions)
    and RB (AIR2, 10). x_A ≤ x_B ≤ 10 → 20 racks, 160 GPUs. The share +10 % (0.55): x_B ≥ 0.45·T,
    T ≤ 10/0.45 = 22.2 → 22 racks, +16 GPUs; both zones' rows name the same cluster, so relaxing them
    together is still one step (+16, not the +40 of a share raised twice)."""
    from tests.conftest import tiny_scenario

    rack = {"id": "s8", "servers_per_rack": 1, "gpus_per_server": 8, "gpu_power_w": 500, "weight_kg": 300}
    air = {"medium": "air", "units": 1, "unit_capacity_kw": 10000}
    s = tiny_scenario(
        [
            {"id": "RA", "positions": 30, "feeds": ["F"]},
            {"id": "RB", "positions": 10, "feeds": ["F"], "air_zone": "AIR2", "origin_y_m": 2.4},
        ],
        [{"id": "F", "capacity_kw": 10_000}],
        [{"rack_types": ["s8"], "id": "c", "demand": "max", "max_share_per_cooling_zone": 0.5}],
        zones=[{"id": "AIR", **air}, {"id": "AIR2", **air}],
        rack_types=[{**rack, "capex_usd": 1}],
    )
    plan = plan_scenario(s)
    assert plan.kpis.gpus == 160
    lines = explain_feasible(s, plan).render().splitlines()
    assert lines[1:4] == [
        f"  - spread c@{z}: 80 of 80 GPUs used (100.0%); cluster c max_share_per_cooling_zone 0.5 → 0.55 "
        "→ +16 GPUs"
        for z in ("AIR", "AIR2")
    ] + [
        "  - relaxing spread c@AIR; spread c@AIR2 together by one step → +16 GPUs",
    ]
