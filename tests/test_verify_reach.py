"""Verifier checks no other test reached, each on a hand-checked case: a liquid-cooled rack in a
structure that cools with air only, a pod's network rack under N-1, and the NetBox status of an
installed rack."""

from __future__ import annotations

import pytest

from planner.dcim.exports import netbox_rows
from planner.enums import Status
from planner.input.site_index import index_site, place
from planner.plan.pipeline import plan_scenario
from planner.schema import BoughtRetrofit, Plan
from planner.verifier import verify
from tests.conftest import tiny_scenario
from tests.test_optimize import SOLVERS, solved
from tests.test_structures import NVL, region

GT = "grand-teton-h100"  # 16 GPUs, 21.4 kW planning power


def test_a_liquid_rack_in_an_air_only_tent_is_rejected() -> None:
    """The tent T1 cools with air only; the plan puts a GB200 NVL72 (liquid-cooled) in it."""
    s = region({"p1": 72, "p2": 72}, rack=NVL)
    rack = place(index_site(s.site), "T1-H1-R", 0, s.catalog.by_id()[NVL], "c", phase="p1")
    plan = Plan(scenario_name=s.name, racks=[rack], retrofits=[BoughtRetrofit(id="tent-T1", phase="p1")])
    found = [v.message for v in verify(plan, s).violations if v.check == "structure"]
    assert found == ["gb200-nvl72 is liquid-cooled; T1 (tent) cools with air only"]


def n1_hall(with_network_rack: bool = True):
    """One redundant row R of 6 positions fed by UPS-A and UPS-B (95 kW each, derate 1); the pod's
    12 kW network rack stands at R/5. When a UPS fails the other carries the whole row:
    n × 21.4 + 12 ≤ 95 gives n ≤ 3.88, so 3 Grand Teton racks (48 GPUs); without the network rack
    n ≤ 4.44: 4 racks (64 GPUs). In normal operation each UPS carries half: (3 × 21.4 + 12) / 2 = 38.1 kW."""
    rows = [{"id": "R", "positions": 6, "feeds": ["UPS-A", "UPS-B"], "redundant": True}]
    nodes = [
        {"id": "UPS-A", "kind": "ups", "capacity_kw": 95},
        {"id": "UPS-B", "kind": "ups", "capacity_kw": 95},
    ]
    pods = [
        {
            "id": "P",
            "network_rack": {"row": "R", "position": 5},
            "max_gpus": 100_000,
            "network_rack_type": "network-rack" if with_network_rack else None,
        }
    ]
    return tiny_scenario(rows, nodes, [{"id": "c", "demand": "max", "rack_types": [GT]}], pods=pods)


@pytest.mark.parametrize("solver", SOLVERS)
def test_the_network_racks_fixed_load_counts_under_n_minus_1(solver: str) -> None:
    assert solved(n1_hall(), solver).kpis.gpus == 48
    assert solved(n1_hall(with_network_rack=False), solver).kpis.gpus == 64


def test_the_verifier_counts_the_network_rack_when_a_ups_fails() -> None:
    """Four racks: 4 × 21.4 + 12 = 97.6 kW on the surviving UPS, over its 95 kW."""
    s = n1_hall()
    plan = plan_scenario(n1_hall(with_network_rack=False))
    four = plan.model_copy(
        update={
            "kpis": None,
            "utilisation": None,
            "phases": [],
            "stranded": [],
            "reliability": None,
            "scenario_hash": "",
            "scenario_name": s.name,
            "status": Status.not_solved,
            "objective_value": None,
            "bound": None,
            "gap": None,
            "optimality": None,
            "failover": None,
        }
    )
    found = sorted((v.element, v.message) for v in verify(four, s).violations)
    assert found == [
        ("UPS-A", "load 97.6 kW exceeds 95 kW when UPS-B fails"),
        ("UPS-B", "load 97.6 kW exceeds 95 kW when UPS-A fails"),
    ]


def test_an_installed_rack_is_active_in_netbox_and_a_planned_one_planned() -> None:
    s0 = n1_hall(with_network_rack=False)
    installed = place(index_site(s0.site), "R", 0, s0.catalog.by_id()[GT], "c").model_copy(
        update={"existing": True}
    )
    s = s0.model_copy(update={"existing": [installed]})
    plan = plan_scenario(s)
    status = {
        r["rack"]: r["status"] for r in netbox_rows(plan, s)
    }  # one NetBox rack per position: R-00 … R-04
    assert status.pop("R-00") == "active"
    assert (
        sorted(status.values()) == ["planned"] * 3
    )  # 4 racks fit under N-1 (n1_hall): the installed one and 3 new
