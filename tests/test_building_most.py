"""The most each building holds (planner/scale/building_most.py): by hand on a pod where rows run
out of power for mixed racks, buildings alike solved once, a type set of its own, nothing past the
deadline, and as a property: no plan puts more GPUs of a type set in a building than its most."""

from __future__ import annotations

from collections import defaultdict

from hypothesis import HealthCheck, given, settings

from planner.clock import Deadline
from planner.plan.pipeline import plan_scenario
from planner.scale import building_most as bm
from planner.scale.building_most import building_most, type_sets
from planner.scale.packing import packing_bound
from tests.test_packing_bound import fleets
from tests.test_room import SMALL_GT, _scenario

GT, DGX = "grand-teton-h100", "dgx-h100-4"
TEN_KW = {
    **SMALL_GT,
    "design_kw_per_position": 10.0,
    "max_rack_power_kw": 45,
    "pod_max_racks": None,
    "pod_max_gpus": 2048,
}
"""One pod of 4 rows × 8 positions sized for 10 kW a position, 2N: each busway holds its row's
80 kW; the network rack's row 7 × 10 + 12 = 82 kW, less the rack's 12 kW: 70 kW."""
MIXED = {"id": "j", "demand": "max", "rack_types": [GT, DGX], "max_hops": 5}


def test_the_most_a_building_holds_by_hand() -> None:
    """A job of as many Grand Teton (16 GPUs, 21.4 kW) or DGX H100 (32 GPUs, 40.8 kW) GPUs as fit.
    A row of 80 kW holds one DGX beside one Grand Teton (62.2 kW, 48 GPUs): two DGX need 81.6 kW,
    four Grand Teton 85.6 kW, three give 48 GPUs too; the 70 kW row the same 48. So the building
    holds 4 × 48 = 192, the optimum. The packing bound's rooms and power row count the best GPUs
    per kW (DGX, 32 ÷ 40.8): (3 × 80 + 70) × 32 ÷ 40.8 = 243; with the most as a row, 192."""
    s = _scenario(TEN_KW, [MIXED])
    most = building_most(s, Deadline(60))
    assert most == {("B1", (DGX, GT)): 192}
    assert packing_bound(s, 30) == 243
    assert packing_bound(s, 30, most) == 192
    assert plan_scenario(s).objective_value == 192


def test_each_clusters_type_set_gets_its_own_most() -> None:
    """Beside the mixed job a DGX job: all types together 192 as above; DGX alone one rack a row
    (two need 81.6 kW): 4 × 32 = 128. The sets come all-types first."""
    dgx = {"id": "d", "demand": "max", "rack_types": [DGX], "max_hops": 5}
    s = _scenario(TEN_KW, [MIXED, dgx])
    assert type_sets(s) == [(DGX, GT), (DGX,)]
    assert building_most(s, Deadline(60)) == {("B1", (DGX, GT)): 192, ("B1", (DGX,)): 128}


def test_buildings_alike_are_solved_once(monkeypatch) -> None:
    """Two buildings alike up to their names: one solve per type set, both buildings given its most;
    a run whose deadline has passed solves nothing and gives no row."""
    calls: list[str] = []
    real = bm.plan_scenario

    def counted(sub, **kw):
        calls.append(sub.name)
        return real(sub, **kw)

    monkeypatch.setattr(bm, "plan_scenario", counted)
    s = _scenario({**TEN_KW, "count": 2}, [MIXED])
    assert building_most(s, Deadline(60)) == {("B1", (DGX, GT)): 192, ("B2", (DGX, GT)): 192}
    assert calls == ["room-B1-most"]
    calls.clear()
    assert building_most(s, Deadline(0.0)) == {}
    assert calls == []


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(fleets())
def test_no_plan_puts_more_in_a_building_than_its_most(drawn) -> None:
    """On random small sites (air or liquid, 2N or distributed redundant, clusters kept, capped or
    shed on a failure) the whole model's plan never holds more GPUs of a type set in the building
    than the most proved for it, and its proven optimum never exceeds the packing bound with the
    most as rows."""
    building, clusters = drawn
    try:
        s = _scenario(building, clusters)
    except Exception:  # a drawn site some checks refuse: nothing to compare
        return
    most = building_most(s, Deadline(60))
    plan = plan_scenario(s, tie_breaks=False)
    if not plan.status.has_plan:
        return
    gpus = s.catalog.by_id()
    types_of = {c.id: set(s.gpu_types_for(c)) for c in s.clusters}
    held: dict[tuple[str, tuple[str, ...]], int] = defaultdict(int)
    for r in plan.racks:
        for (b, types), _ in most.items():
            if r.building == b and r.cluster and types_of[r.cluster] <= set(types):
                held[b, types] += gpus[r.rack_type].gpus
    for key, n in held.items():
        assert n <= most[key], (key, n, most[key])
    bound = packing_bound(s, 30, most)
    if plan.status.value == "optimal" and bound is not None:
        assert plan.objective_value <= bound + 1e-6
