"""The packing bound (planner/scale/packing.py): a MILP over cluster kinds and buildings whose proven
bound no plan exceeds. By hand on two power-bound pods, as a property against the whole model's
proven optimum on random small sites."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.plan.pipeline import plan_scenario
from planner.scale.packing import packing_bound
from tests.test_room import SMALL_GT, _scenario, rooms

GT = ["grand-teton-h100"]


def test_the_packing_bound_of_two_pods_by_hand() -> None:
    """Two pods of 368 Grand Teton GPUs each (tests/test_room.py). An exact job of 240 and an
    at-least job of 240, each in one pod: each is more than half a pod, so they stand in different
    pods; the at-least job grows to its pod's 368: 240 + 368 = 608, the optimum. Two exact jobs:
    480; a third would need a third pod (no bound: the MILP is infeasible); as many as fit of one
    building-wide job, the two pods' 736."""
    two = {**SMALL_GT, "pods_per_hall": 2}
    e = {"id": "e", "demand": "exact", "gpus": 240, "rack_types": GT, "max_hops": 3}
    a = {"id": "a", "demand": "at_least", "gpus": 240, "rack_types": GT, "max_hops": 3}
    s = _scenario(two, [e, a])
    assert packing_bound(s, 30) == 608
    assert plan_scenario(s).objective_value == 608
    assert packing_bound(_scenario(two, [e, {**e, "id": "e2"}]), 30) == 480
    assert packing_bound(_scenario(two, [e, {**e, "id": "e2"}, {**e, "id": "e3"}]), 30) is None
    whole = {"id": "w", "demand": "max", "rack_types": GT, "max_hops": 5}
    assert packing_bound(_scenario(two, [whole]), 30) == 736


def test_kinds_on_different_types_share_the_pods_rack_limit() -> None:
    """One pod of 4 rows × 8 positions with power for DGX racks everywhere (44 kW a position, 2N)
    and a limit of 10 racks: an exact job of 64 GPUs on DGX H100 racks (32 each: 2 racks) beside
    as many Grand Teton GPUs (16 a rack) as fit. The rooms, one type set at a time, allow 10 × 16 =
    160 Grand Teton GPUs and 10 × 32 = 320 in all: 64 + 160 = 224. The racks are shared: the DGX
    job takes 2 of the 10, the Grand Teton job the other 8 (128 GPUs): 192, the optimum, and the
    use row of the racks (64 ÷ 32 + g ÷ 16 ≤ 10) proves it."""
    pod = {
        **SMALL_GT,
        "design_kw_per_position": 44.0,
        "max_rack_power_kw": 45,
        "pod_max_racks": 10,
        "pod_max_gpus": 2048,
    }
    dgx = {"id": "d", "demand": "exact", "gpus": 64, "rack_types": ["dgx-h100-4"], "max_hops": 3}
    gt = {"id": "g", "demand": "max", "rack_types": GT, "max_hops": 5}
    s = _scenario(pod, [dgx, gt])
    assert packing_bound(s, 30) == 192
    assert plan_scenario(s).objective_value == 192


def test_kinds_on_different_types_share_the_positions() -> None:
    """The same pod without a rack limit, power for a DGX rack in every position: 31 GPU positions
    (the 32nd holds the network rack), so Grand Teton alone fills 31 × 16 = 496. Beside the 64-GPU
    DGX job the rooms allow 64 + 496 = 560; the positions are shared: the DGX job takes 2, Grand
    Teton the other 29 (464): 528, the optimum, which the use row of the positions (64 ÷ 32 +
    g ÷ 16 ≤ 31) proves."""
    pod = {
        **SMALL_GT,
        "design_kw_per_position": 44.0,
        "max_rack_power_kw": 45,
        "pod_max_racks": None,
        "pod_max_gpus": 2048,
    }
    dgx = {"id": "d", "demand": "exact", "gpus": 64, "rack_types": ["dgx-h100-4"], "max_hops": 3}
    gt = {"id": "g", "demand": "max", "rack_types": GT, "max_hops": 5}
    assert packing_bound(_scenario(pod, [gt]), 30) == 496
    s = _scenario(pod, [dgx, gt])
    assert packing_bound(s, 30) == 528
    assert plan_scenario(s).objective_value == 528


def test_no_bound_for_what_it_does_not_model() -> None:
    """Other objectives than max_gpus have no packing bound."""
    s = _scenario(SMALL_GT, [{"id": "w", "demand": "max", "rack_types": GT, "max_hops": 5}])
    assert packing_bound(s.model_copy(update={"objective": "min_capex"}), 30) is None


@st.composite
def fleets(draw):
    """A drawn building (:func:`tests.test_room.rooms`, one phase) with clusters exact, at least or
    as many as fit, of one pod, one building or the site."""
    building, clusters, _ = draw(rooms())
    for c in clusters:
        c.pop("gpus_by_phase", None)
        g = 72 if "gb200-nvl72" in c["rack_types"] else 32
        c["demand"] = draw(st.sampled_from(["exact", "at_least", "max"]))
        c["max_hops"] = draw(st.sampled_from([3, 5, 7]))
        c["gpus"] = g * draw(st.integers(1, 14))
        if c["demand"] == "max" and draw(st.booleans()):
            c.pop("gpus")
    return building, clusters


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(fleets())
def test_no_plan_exceeds_the_packing_bound(drawn) -> None:
    """On random small sites the whole model's proven optimum (HiGHS, exact gap) never exceeds the
    packing bound; where the bound says nothing (an infeasible MILP) the model finds no plan."""
    building, clusters = drawn
    try:
        s = _scenario(building, clusters)
    except Exception:  # a drawn site some checks refuse: nothing to compare
        return
    bound = packing_bound(s, 30)
    plan = plan_scenario(s, tie_breaks=False)
    if bound is None:
        assert not plan.status.has_plan
        return
    if plan.status.value == "optimal":
        assert plan.objective_value <= bound + 1e-6
    else:
        assert not plan.status.has_plan or plan.objective_value <= bound + 1e-6


def test_the_decomposition_states_the_packing_bound_where_it_is_tightest() -> None:
    """Two buildings of one such pod each (368 GPUs a pod). Two exact jobs of 240, one pod each, and
    one job of as many as fit up to 240 in one pod: each building holds one exact job (480 > 368),
    so the third job gets what one pod has left, 368 − 240 = 128: 608, the optimum. The merged
    relaxation lets it take its 240 (720, 18 % above); the packing bound, each building's room
    shared by the exact job standing there, proves 608: the decomposed plan is optimal against it."""
    from planner.scale.bounds import lp_bound, merged
    from planner.scale.decompose import plan_decomposed
    from planner.verifier import verify

    e = {"id": "e", "demand": "exact", "gpus": 240, "rack_types": GT, "max_hops": 3}
    f = {"id": "f", "demand": "max", "gpus": 240, "rack_types": GT, "max_hops": 3}
    s = _scenario({**SMALL_GT, "count": 2}, [e, {**e, "id": "e2"}, f])
    assert lp_bound(merged(s), 30) == 720
    assert packing_bound(s, 30) == 608
    d = plan_decomposed(s)
    assert verify(d.plan, s).ok
    assert d.plan.objective_value == 608
    assert (d.plan.bound, d.plan.bound_source, d.plan.status.value) == (608, "packing relaxation", "optimal")
    assert "packing_bound" in d.plan.stage_times_s
