"""The verifier: hand-written plans for small-hall, valid and invalid.

small-hall (datasets/small-hall.site.yaml): busways 500 kW × 0.8 = 400 kW usable,
one A/B pair per two rows (2N); Grand Teton racks draw 21.4 kW, NVL72 132 kW.
"""

from __future__ import annotations

from typing import Any

import pytest

from planner.errors import InputError
from planner.input.loader import scenario_from_data
from planner.input.site_index import index_site, place
from planner.plan import Plan
from planner.schema import Scenario
from planner.verifier import verify

GT, NVL, DGX = "grand-teton-h100", "gb200-nvl72", "dgx-h100-4"


def make_plan(scenario: Scenario, spots: list[tuple[str, int, str, str]]) -> Plan:
    """A hand-written plan: (row, position, rack type, cluster) per rack."""
    ix = index_site(scenario.site)
    types = scenario.catalog.by_id()
    racks = [place(ix, row, pos, types[t], c) for row, pos, t, c in spots]
    return Plan(scenario_name=scenario.name, solver="hand", racks=racks)


def valid_spots() -> list[tuple[str, int, str, str]]:
    """18 Grand Teton racks in R01 (385.2 kW ≤ 400 kW even with one busway) and 2 NVL72 in R07."""
    return [("R01", i, GT, "train-gt") for i in range(1, 19)] + [
        ("R07", 1, NVL, "nvl-infer"),
        ("R07", 2, NVL, "nvl-infer"),
    ]


def messages(scenario: Scenario, spots) -> list[str]:
    return [str(v) for v in verify(make_plan(scenario, spots), scenario).violations]


def test_valid_plan_passes(small_hall: Scenario) -> None:
    rep = verify(make_plan(small_hall, valid_spots()), small_hall)
    assert rep.ok, rep.violations
    usage = {(u.kind, u.id): u for u in rep.usage}
    assert usage["power_node", "BW-A1"].value == pytest.approx(
        (18 * 21.4 + 12) / 2
    )  # + POD-A's network rack in R02
    assert usage["power_node", "BW-B1"].worst_value == pytest.approx(18 * 21.4 + 12)
    assert usage["cooling_zone", "LQ-1"].value == pytest.approx(2 * 132 * 0.85)
    assert usage["pod_gpus", "POD-A"].value == 18 * 16


def test_empty_plan_fails_only_on_demand(small_hall: Scenario) -> None:
    assert messages(small_hall, []) == ["cluster nvl-infer: 0 GPUs placed, at least 144 wanted"]


def test_normal_ok_but_n_minus_1_fails(small_hall: Scenario) -> None:
    """19 racks and POD-A's 12 kW network rack on the R01/R02 busway pair: 209.3 kW per busway
    normally (≤ 400), 418.6 kW on BW-B1 when its partner side fails (> 400)."""
    spots = [*valid_spots(), ("R02", 5, GT, "train-gt")]
    rep = verify(make_plan(small_hall, spots), small_hall)
    usage = {(u.kind, u.id): u for u in rep.usage}
    assert usage["power_node", "BW-B1"].value == pytest.approx(209.3)
    assert [str(v) for v in rep.violations] == [
        "BW-A1: load 418.6 kW exceeds 400 kW when UPS-B fails",
        "BW-B1: load 418.6 kW exceeds 400 kW when UPS-A fails",
    ]
    assert {v.check for v in rep.violations} == {"power N-1"}


BAD_PLANS = [
    pytest.param([("R03", 10, GT, "train-gt")], "racks[20] (R03/10): position 10 is reserved", id="reserved"),
    pytest.param(
        [("R02", 0, GT, "train-gt")],
        "racks[20] (R02/0): position 0 holds pod POD-A's network rack",
        id="pod-network-rack",
    ),
    pytest.param(
        [("R01", 1, GT, "train-gt")], "racks[20] (R01/1): position already holds racks[0]", id="double"
    ),
    pytest.param(
        [("R01", 25, GT, "train-gt")], "racks[20] (R01/25): position 25 is outside 0..19", id="out-of-row"
    ),
    pytest.param(
        [("R03", 1, NVL, "nvl-infer")],
        "racks[20] (R03/1): gb200-nvl72 draws 132 kW (nameplate), row limit 25 kW",
        id="rack-power",
    ),
    pytest.param(
        [("R03", 1, NVL, "nvl-infer")],
        "racks[20] (R03/1): gb200-nvl72 needs a liquid loop; row 'R03' has none",
        id="needs-liquid",
    ),
    pytest.param(
        [("R05", 1, DGX, "train-gt")],
        "racks[20] (R05/1): rack type 'dgx-h100-4' is not allowed for cluster 'train-gt' (allowed: "
        "grand-teton-h100)",
        id="type-not-allowed",
    ),
    pytest.param(
        [("R03", 1, GT, "ghost")], "racks[20] (R03/1): unknown cluster 'ghost'", id="unknown-cluster"
    ),
    pytest.param([("R05", 1, GT, "train-gt")], None, id="second-pod-ok-for-building-scope"),
]


@pytest.mark.parametrize(("extra", "expected"), BAD_PLANS)
def test_invalid_plans_name_the_violation(small_hall: Scenario, extra, expected: str | None) -> None:
    got = messages(small_hall, [*valid_spots(), *extra])
    if expected is None:
        assert got == []
    else:
        assert expected in got, got


def _edit_plan(small_hall: Scenario, **changes: Any) -> list[str]:
    plan = make_plan(small_hall, valid_spots())
    racks = [plan.racks[0].model_copy(update=changes), *plan.racks[1:]]
    return [str(v) for v in verify(plan.model_copy(update={"racks": racks}), small_hall).violations]


def test_wrong_coordinates(small_hall: Scenario) -> None:
    assert _edit_plan(small_hall, x_m=99.0) == [
        "racks[0] (R01/1): coordinates (99.0, 1.2) differ from the site's (1.8, 1.2)"
    ]


def test_wrong_link_class(small_hall: Scenario) -> None:
    # R01/1 is at (1.8, 1.2); POD-A's network rack at R02/0 (1.2, 3.6): 0.6 + 2.4 + 3.0 tray = 6.0 m
    assert _edit_plan(small_hall, link_class="aec") == ["racks[0] (R01/1): cable 6 m exceeds aec reach 5 m"]


def test_wrong_building(small_hall: Scenario) -> None:
    assert _edit_plan(small_hall, hall="H9") == ["racks[0] (R01/1): row 'R01' is in B1/H1, not B1/H9"]


def _variant(small_data: dict[str, Any], edit) -> Scenario:
    """The edited scenario; one the loader would refuse (a failing utility under a network rack's
    redundant row) is built from the schema alone: the verifier must judge any scenario."""
    edit(small_data)
    try:
        return scenario_from_data(small_data)
    except InputError:
        return _schema_only(small_data)


def _schema_only(data: dict[str, Any]) -> Scenario:
    from planner.input.loader import merge_catalog

    return Scenario.model_validate({**data, "catalog": merge_catalog(data.get("catalog"))})


HALL = ("site", "buildings", 0, "halls", 0)

SITE_VARIANTS = [
    # Air zone cut to 2 units × 250 kW with 1 redundant = 250 kW; 18 × 21.4 + 2 × 132 × 0.15 + two 12 kW
    # network racks = 448.8 kW of air heat.
    pytest.param(
        (*HALL, "cooling_zones", 0, "units"),
        2,
        ["CZ-AIR: air heat 448.8 kW exceeds 250 kW (1 of 2 units × 250 kW)"],
        id="cooling",
    ),
    pytest.param(
        (*HALL, "pods", 0, "max_gpus"), 256, ["POD-A: 288 GPUs exceed the pod's 256 GPU ports"], id="pod-gpus"
    ),
    pytest.param(
        (*HALL, "pods", 1, "max_racks"), 1, ["POD-B: 2 racks exceed the pod's limit of 1"], id="pod-racks"
    ),
    pytest.param(
        (*HALL, "rows", 6, "max_rack_weight_kg"),
        1000,
        [
            "racks[18] (R07/1): gb200-nvl72 weighs 1,360 kg, row limit 1,000 kg",
            "racks[19] (R07/2): gb200-nvl72 weighs 1,360 kg, row limit 1,000 kg",
        ],
        id="weight",
    ),
    # BW-A1 cut to 200 kW: 160 kW usable against (18 × 21.4 + 12 network rack) / 2 = 198.6 kW.
    pytest.param(
        (*HALL, "power_nodes", 2, "capacity_kw"),
        200,
        ["BW-A1: normal load 198.6 kW exceeds 160 kW (derate 0.8 × 200 kW)"],
        id="normal-power",
    ),
    # A utility left at can_fail: true (allowed, with a warning from validate) drops every redundant row
    # carrying load.
    pytest.param(
        ("site", "buildings", 0, "power_nodes", 0, "can_fail"),
        True,
        [
            "R01: redundant row loses every feed when UTIL fails (385.2 kW dropped)",
            "R02: redundant row loses every feed when UTIL fails (12 kW dropped)",
            "R06: redundant row loses every feed when UTIL fails (12 kW dropped)",
            "R07: redundant row loses every feed when UTIL fails (264 kW dropped)",
        ],
        id="redundant-rows-lose-the-utility",
    ),
]


@pytest.mark.parametrize(("path", "value", "expected"), SITE_VARIANTS)
def test_site_limit_violations(
    small_data: dict[str, Any], path: tuple, value: Any, expected: list[str]
) -> None:
    """The valid plan on a small-hall with one limit tightened: the verifier names exactly that limit."""

    def edit(d):
        for key in path[:-1]:
            d = d[key]
        d[path[-1]] = value

    assert messages(_variant(small_data, edit), valid_spots()) == expected


def test_hop_scope(small_data: dict[str, Any]) -> None:
    def edit(d):
        d["clusters"][0]["max_hops"] = 3

    s = _variant(small_data, edit)
    assert messages(s, [*valid_spots(), ("R05", 1, GT, "train-gt")]) == [
        "cluster train-gt: its racks span 2 pods: 5 hops between them, max_hops is 3"
    ]


def test_exact_demand_and_budgets(small_data: dict[str, Any]) -> None:
    """Capex of the valid plan: 18 × $650k + 2 × $3.4M racks ($18.5M), 432 GPUs × $4,200 fabric
    ($1,814,400), 18 × 16 links + 2 × 72 links at their class cost ($616,500), and the facility build
    for 18 × 21.4 + 2 × 132 + 2 × 12 (network racks) = 673.2 kW and the racks' back-end network
    18 × 16 × 70 W + 2 × 72 × 200 W = 48.96 kW: 721.16 kW at $11,700 per kW = $8,437,572; in all
    $29,368,472."""

    def edit(d):
        d["clusters"][1].update(demand="exact", gpus=72)
        d["budgets"] = {"capex_usd": 10_000_000, "it_power_kw": 500}

    s = _variant(small_data, edit)
    got = messages(s, valid_spots())
    assert got[0] == "cluster nvl-infer: 144 GPUs placed, exactly 72 wanted"
    assert got[1] == "budgets.capex_usd: capex $29,368,472 exceeds the budget $10,000,000"
    assert got[2] == "budgets.it_power_kw: IT power of the placed racks 649.2 kW exceeds the budget 500 kW"
