"""The back-end network a plan without a designed fabric still pays for (§13): every GPU rack placed
draws its type's ``network_w_per_gpu`` (catalog, by generation) in power arrival, energy, the
facility build and IT kW, at its building's PUE; never zero unless the scenario says so. Hand-solved
instances (HiGHS and CBC) and the verifier's own recount."""

from __future__ import annotations

import pytest

from planner.input.loader import load_scenario, scenario_from_data
from planner.plan.kpis import compute_kpis
from planner.verifier import verify
from tests.test_optimize import SOLVERS, solved
from tests.test_region_power import arrival_site

GT_KW, GT_NET_KW = 21.4, 16 * 70 / 1000  # a Grand Teton rack and its 16 GPUs' network (catalog)


def _site(allowance: bool):
    """One row of 10 Grand Teton positions, 90 kW arriving from the start of p1, PUE 1."""
    data = arrival_site([{"interconnect_mw": 0.09}], pue=1.0).model_dump(mode="json")
    data["network_allowance"] = allowance
    return scenario_from_data(data)


def test_the_catalog_states_a_network_allowance_for_every_gpu_rack_type() -> None:
    s = load_scenario("datasets/small-hall.yaml")
    for t in s.catalog.rack_types:
        if t.gpus:
            assert t.network_w_per_gpu > 0, t.id
            assert "network_w_per_gpu" in t.sources, t.id
    assert s.network_allowance  # on unless a scenario says otherwise
    gt = s.catalog.by_id()["grand-teton-h100"]
    assert s.allowance_kw(gt) == pytest.approx(GT_NET_KW)


@pytest.mark.parametrize("solver", SOLVERS)
def test_the_network_allowance_binds_the_power_arrived(solver: str) -> None:
    """90 kW arrived, PUE 1. Without the allowance a rack draws 21.4 kW: ⌊90 / 21.4⌋ = 4 racks in
    each phase (85.6 kW). With its 16 GPUs' network at 70 W each (1.12 kW) it draws 22.52 kW:
    ⌊90 / 22.52⌋ = 3 (4 would draw 90.08 kW). The allowance is IT load: 3 × 1.12 = 3.36 kW, IT
    67.56 kW, a facility build of 67.56 kW × $11.7M per MW = $790,452; the plan of 4 racks is
    refused against the allowance, 0.08 kW over."""
    bare = solved(_site(False), solver)
    assert [p.racks for p in bare.phases] == [4, 4]
    s = _site(True)
    plan = solved(s, solver)
    assert [p.racks for p in plan.phases] == [3, 3]
    assert plan.objective_value == 2 * 3 * 16
    use = next(u for u in plan.utilisation if u.kind == "power_arrival")
    assert (use.value, use.limit) == (pytest.approx(3 * (GT_KW + GT_NET_KW)), 90.0)
    k = plan.kpis
    assert (k.racks_kw, k.allowance_kw, k.it_kw) == (
        pytest.approx(3 * GT_KW),
        pytest.approx(3.36),
        pytest.approx(67.56),
    )
    assert k.capex_facility_usd == pytest.approx(790_452)
    assert [p.it_kw for p in plan.phases] == [pytest.approx(67.56)] * 2
    rep = verify(bare.model_copy(update={"scenario_hash": None}), s)
    assert (
        "power_arrival: facility load 90.08 kW (IT × PUE 1) exceeds the 90 kW of interconnect and generation "
        "arrived in phase p1" in [str(v) for v in rep.violations]
    ), rep.violations


def test_the_network_allowance_is_paid_in_energy() -> None:
    """The same 3 racks with and without the allowance: 3.36 kW × 0.8 utilisation × PUE 1 × 8,760 h ×
    $0.0892 = $2,100.38 a year more energy; capex more by the facility build of 3.36 kW ($39,312)."""
    plan = solved(_site(True), "highs")
    on = compute_kpis(_site(True), plan.racks)
    off = compute_kpis(_site(False), plan.racks)
    assert on.opex_usd_per_year - off.opex_usd_per_year == pytest.approx(2_100.38, abs=0.01)
    assert on.capex_usd - off.capex_usd == pytest.approx(39_312)
    assert off.allowance_kw == 0


def test_a_cluster_on_a_designed_fabric_pays_its_fabric_not_the_allowance() -> None:
    """256 GPUs on a two-tier QM9700 fabric (tests/test_fabric.py): its switches are its network."""
    from tests.test_fabric import IB2, net_site

    s = net_site(
        [{"id": "P1", "gpu": 16, "net": [("N1", 100, 30, 4)]}],
        [IB2],
        {"demand": "exact", "gpus": 256, "fabrics": ["ib2"]},
    )
    assert s.network_allowance
    plan = solved(s, "highs")
    k = plan.kpis
    assert (k.gpus, k.allowance_kw) == (256, 0)
    assert k.it_kw == pytest.approx(k.racks_kw + k.network_kw + k.fabric_kw)


def test_a_rolling_plan_counts_the_network_of_the_racks_it_placed_before() -> None:
    """Rolling carries p1's 3 racks into p2 as installed racks: they still draw 22.52 kW each, so p2
    has 90 − 67.56 = 22.44 kW left, short of a fourth rack (22.52 kW): 3 and 3, verified whole."""
    from planner.plan.rolling import plan_rolling

    s = _site(True)
    plan = plan_rolling(s)
    assert [p.racks for p in plan.phases] == [3, 3]
    assert verify(plan, s).ok
