"""Property tests on random small sites: the MILP's plans always pass the independent
verifier, never place fewer GPUs than first-fit, and the aggregated and per-position
formulations reach the same optimum."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.errors import InputError
from planner.input.loader import scenario_from_data
from planner.plan.first_fit import greedy_plan
from planner.plan.pipeline import plan_scenario
from planner.verifier import verify
from tests.conftest import tiny_scenario

TYPES = ["grand-teton-h100", "dgx-h100-4", "gb200-nvl72"]


@st.composite
def sites(draw):
    n_rows = draw(st.integers(1, 3))
    nodes = [
        {"id": "UPS-A", "capacity_kw": draw(st.integers(50, 600))},
        {"id": "UPS-B", "capacity_kw": draw(st.integers(50, 600))},
    ]
    rows = []
    for r in range(n_rows):
        feeds = draw(st.sampled_from([["UPS-A"], ["UPS-B"], ["UPS-A", "UPS-B"]]))
        rows.append(
            {
                "id": f"R{r}",
                "positions": draw(st.integers(2, 8)),
                "origin_y_m": 2.4 * r,
                "feeds": feeds,
                "redundant": len(feeds) == 2 and draw(st.booleans()),
                "max_rack_power_kw": draw(st.sampled_from([25, 45, 130])),
                "max_rack_weight_kg": draw(st.sampled_from([500, 1400])),
                **({"liquid_loop": "LQ"} if draw(st.booleans()) else {}),
            }
        )
    zones = [
        {
            "id": "AIR",
            "medium": "air",
            "units": 2,
            "unit_capacity_kw": draw(st.integers(20, 400)),
            "redundant_units": 1,
        },
        {"id": "LQ", "medium": "liquid", "units": 1, "unit_capacity_kw": draw(st.integers(50, 500))},
    ]
    clusters = [
        {
            "id": "c1",
            "demand": "max",
            "rack_types": draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True)),
            "max_hops": draw(st.sampled_from([1, 3, 7])),
        }
    ]
    return tiny_scenario(
        rows,
        nodes,
        clusters,
        zones=zones,
        pods=[
            {"id": "P", "network_rack": {"row": "NET", "position": 0}, "max_gpus": draw(st.integers(16, 400))}
        ],
    )


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sites())
def test_milp_verified_and_at_least_greedy(scenario) -> None:
    plan = plan_scenario(scenario)
    assert plan.status == "optimal"
    assert verify(plan, scenario).ok
    greedy = greedy_plan(scenario)
    assert verify(greedy, scenario).ok
    assert plan.kpis.gpus >= greedy.kpis.gpus
    assert plan_scenario(scenario, aggregate=False, tie_breaks=False).kpis.gpus == plan.kpis.gpus


@st.composite
def pod_sites(draw):
    """2-3 pods of 1-2 rows each, identical one-pod clusters (exact or max demand), network racks on or
    off."""
    n_pods = draw(st.integers(2, 3))
    nodes = [
        {"id": "UPS-A", "capacity_kw": draw(st.integers(100, 900))},
        {"id": "UPS-B", "capacity_kw": draw(st.integers(100, 900))},
    ]
    rows, pods = [], []
    network = draw(st.sampled_from([None, "network-rack"]))
    for p in range(n_pods):
        pid = f"P{p}"
        for r in range(draw(st.integers(1, 2))):
            rows.append(
                {
                    "id": f"R{p}{r}",
                    "positions": draw(st.integers(2, 6)),
                    "origin_y_m": 2.4 * (2 * p + r),
                    "feeds": ["UPS-A", "UPS-B"],
                    "redundant": True,
                    "pod": pid,
                    "max_rack_power_kw": 45,
                }
            )
        pods.append(
            {
                "id": pid,
                "network_rack": {"row": f"R{p}0", "position": 0},
                "max_gpus": draw(st.integers(32, 160)),
                "network_rack_type": network,
            }
        )
    pods[0]["network_rack"] = {"row": "NET", "position": 0}
    k = draw(st.integers(2, 3))
    demand = draw(st.sampled_from(["exact", "max"]))
    rack = draw(st.sampled_from(["grand-teton-h100", "dgx-h100-4"]))
    size = 16 if rack == "grand-teton-h100" else 32
    gpus = size * draw(st.integers(1, 4))
    clusters = [
        {"id": f"job{i}", "demand": demand, "gpus": gpus, "rack_types": [rack], "max_hops": 3}
        for i in range(k)
    ]
    zones = [
        {
            "id": "AIR",
            "medium": "air",
            "units": 2,
            "unit_capacity_kw": draw(st.integers(100, 900)),
            "redundant_units": 1,
        }
    ]
    return tiny_scenario(rows, nodes, clusters, zones=zones, pods=pods)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pod_sites())
def test_grouped_identical_clusters_reach_the_per_cluster_optimum(scenario) -> None:
    """Identical one-pod clusters modelled as one group (build.cluster_groups) reach the same optimum,
    or the same infeasibility, as one variable set per cluster; every plan passes the verifier."""
    from planner.model import build, cluster_groups

    assert len(cluster_groups(scenario)) == 1
    grouped = plan_scenario(scenario)
    single = plan_scenario(scenario, group_clusters=False)
    assert grouped.status == single.status
    if grouped.racks:
        assert verify(grouped, scenario).ok
        assert verify(single, scenario).ok
        assert grouped.kpis.gpus == single.kpis.gpus
    assert build(scenario).size["integers"] <= build(scenario, group_clusters=False).size["integers"]


@st.composite
def sites_with_network_racks_in_redundant_rows(draw):
    """A utility (that may fail) above two UPS, rows on one or both, some redundant; every pod's
    network rack stands in one of the rows (12 kW)."""
    util_fails = draw(st.booleans())
    nodes = [
        {
            "id": "UTIL",
            "kind": "utility",
            "capacity_kw": draw(st.integers(200, 2000)),
            "can_fail": util_fails,
        },
        {"id": "UPS-A", "kind": "ups", "capacity_kw": draw(st.integers(50, 600)), "parent": "UTIL"},
        {"id": "UPS-B", "kind": "ups", "capacity_kw": draw(st.integers(50, 600)), "parent": "UTIL"},
    ]
    n_rows = draw(st.integers(1, 3))
    rows = []
    for r in range(n_rows):
        feeds = draw(st.sampled_from([["UPS-A"], ["UPS-B"], ["UPS-A", "UPS-B"]]))
        rows.append(
            {
                "id": f"R{r}",
                "positions": draw(st.integers(2, 8)),
                "origin_y_m": 2.4 * r,
                "feeds": feeds,
                "redundant": len(feeds) == 2 and draw(st.booleans()),
                "max_rack_power_kw": 45,
                "air_zone": "AIR",
                "pod": "P",
            }
        )
    net = draw(st.integers(0, n_rows - 1))
    site = {
        "id": "s",
        "buildings": [
            {
                "id": "B",
                "halls": [
                    {
                        "id": "H",
                        "floor_area_m2": 100,
                        "power_nodes": nodes,
                        "cooling_zones": [
                            {
                                "id": "AIR",
                                "medium": "air",
                                "units": 1,
                                "unit_capacity_kw": draw(st.integers(50, 2000)),
                            }
                        ],
                        "pods": [
                            {"id": "P", "network_rack": {"row": f"R{net}", "position": 0}, "max_gpus": 4096}
                        ],
                        "rows": rows,
                    }
                ],
            }
        ],
    }
    demand = draw(st.sampled_from(["max", "exact"]))
    cluster = {
        "id": "c",
        "demand": demand,
        "rack_types": ["grand-teton-h100"],
        **({"gpus": 16 * draw(st.integers(0, 4))} if demand == "exact" else {}),
    }
    return {"name": "net-redundant", "site": site, "clusters": [cluster]}


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sites_with_network_racks_in_redundant_rows())
def test_network_racks_in_redundant_rows_give_an_input_problem_or_a_plan_that_verifies(data) -> None:
    """Never a plan its own verifier rejects (exit 0) and never "fails independent verification"
    (exit 1): a site whose fixed load no plan can keep within N-1 is an input problem naming the row
    and the failure; otherwise the plan verifies (or says there is none)."""
    problems: list[str] = []
    try:
        scenario = scenario_from_data(data)
    except InputError as e:
        problems = e.lines()
    if problems:
        assert any(
            "stands in redundant row" in line and "loses every feed when UTIL fails" in line
            for line in problems
        ), problems
        return
    plan = plan_scenario(scenario)  # raises SolverFailure if the plan fails verification
    if plan.status.has_plan:
        assert verify(plan, scenario).ok
