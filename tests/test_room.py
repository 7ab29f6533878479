"""The room of a scope (planner/model/room.py): the most GPUs a pod or building holds of a group's
rack types, the big-M of the clusters family. By hand on a generated pod, and as a property: the
model with it has the same proven optimum as the model without it (it never cuts off a plan),
while its LP relaxation is no weaker."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import planner.model.network as network
import planner.model.rounding as rounding
import planner.plan.pipeline as pipeline
from planner.input.generate import BuildingSpec, SiteSpec, generate_site
from planner.input.loader import scenario_from_data
from planner.model import build
from planner.model.room_proof import room_shortfalls
from planner.plan.pipeline import plan_scenario
from planner.solving.backends import SolveRequest, from_name
from planner.solving.core import evaluate


def _scenario(building: dict, clusters: list[dict], later: dict | None = None) -> object:
    """A generated site of ``building`` (and ``later``, a second building online from phase p2:
    the scenario then has phases p1 and p2)."""
    kinds = [BuildingSpec(**building)] + ([BuildingSpec(**later, online_phase="p2")] if later else [])
    site = generate_site(SiteSpec(id="room", buildings=kinds))
    phases = (
        {"phases": [{"id": "p1", "start": "2027-01-01"}, {"id": "p2", "start": "2027-07-01"}]}
        if later
        else {}
    )
    return scenario_from_data(
        {
            "name": "room",
            "site": site.model_dump(mode="json", exclude_none=True),
            "clusters": clusters,
            "solver": {"time_limit_s": 30, "rel_gap": 0},
            **phases,
        }
    )


def _lp(scenario) -> float:
    m = build(scenario)
    res = from_name("highs").solve(
        SolveRequest(m.prob, m.prob.objective, True, 30, 0.0, relax_integrality=True)
    )
    return evaluate(m.prob.objective, res.values)


SMALL_GT = {
    "halls": 1,
    "pods_per_hall": 1,
    "rows_per_pod": 4,
    "positions_per_row": 8,
    "power_design": "2n",
    "design_kw_per_position": 18.2,
    "max_rack_power_kw": 25,
    "pod_max_gpus": 456,
    "pod_max_racks": 28,
}
"""A pod of 4 rows × 8 positions sized for 18.2 kW a position, its network rack (12 kW) in its
third row: Grand Teton racks (21.4 kW, 16 GPUs) run out of power before positions or ports."""


def test_the_room_of_a_power_bound_pod_by_hand() -> None:
    """Each row hangs from two busways, each sized for the whole row (one may fail): 8 × 18.2 =
    145.6 kW holds ⌊145.6 / 21.4⌋ = 6 racks (96 GPUs); the network rack's row 7 × 18.2 + 12 =
    139.4 kW (rated 174.3 kW × 0.8 = 139.44) less its 12 kW holds ⌊127.44 / 21.4⌋ = 5 (80 GPUs):
    3 × 96 + 80 = 368 GPUs, under the pod's 456 ports and 28 racks (448 GPUs). The LP relaxation of
    a building-scoped as-many-as-fit job is then 368, not the 456 its ports allow, and so is the
    optimum."""
    s = _scenario(
        SMALL_GT, [{"id": "job", "demand": "max", "rack_types": ["grand-teton-h100"], "max_hops": 5}]
    )
    assert _lp(s) == pytest.approx(368)
    assert plan_scenario(s).objective_value == 368


def test_without_the_room_the_lp_relaxation_counts_the_ports() -> None:
    """Two such pods, job a as many as fit and job b up to 320, each in one pod. With the room, a
    holds at most one pod's 368 and b its 320: the LP relaxation is 688, which the plan reaches
    (a in one pod, b in the other). Without it (and without the rounding cuts) a is held only by
    its pod's ports (456) and racks (28 × 16 = 448), spread over both pods at part of a home each,
    so the LP relaxation reaches 448 + 320 = 768, beyond what any plan places."""
    s = _scenario(
        {**SMALL_GT, "pods_per_hall": 2},
        [
            {"id": "a", "demand": "max", "rack_types": ["grand-teton-h100"], "max_hops": 3},
            {"id": "b", "demand": "max", "gpus": 320, "rack_types": ["grand-teton-h100"], "max_hops": 3},
        ],
    )
    tight = _lp(s)
    off = _lp_without_room(s)
    assert tight == pytest.approx(688)
    assert off == pytest.approx(768)
    assert plan_scenario(s).objective_value == 688


def _without_room(run):
    """``run()`` with the big-M of ports and figures alone, no rounding cuts and no infeasibility
    proved by room (the model before the room)."""
    original, cuts, proof = network._big_gpus, rounding._room, pipeline.room_shortfalls

    def loose(m, head, d, cap, p, room, here):
        return original(m, head, d, cap, p, ([], 1.0), here)

    network._big_gpus, rounding._room, pipeline.room_shortfalls = loose, lambda *a: None, lambda s: []
    try:
        return run()
    finally:
        network._big_gpus, rounding._room, pipeline.room_shortfalls = original, cuts, proof


def _lp_without_room(scenario) -> float:
    return _without_room(lambda: _lp(scenario))


def _optimum_without_room(scenario) -> float | None:
    return _without_room(lambda: plan_scenario(scenario, tie_breaks=False).objective_value)


@st.composite
def rooms(draw):
    """A generated building of one to three small pods (air or liquid, 2N or distributed
    redundant, power sized under or over the racks) and two or three clusters of one pod or the
    building, as many as fit or at least a figure, some capped or shed on a power failure."""
    liquid = draw(st.booleans())
    building = {
        "halls": 1,
        "pods_per_hall": draw(st.integers(1, 3)),
        "rows_per_pod": draw(st.integers(2, 4)),
        "positions_per_row": draw(st.integers(3, 7)),
        "power_design": draw(st.sampled_from(["2n", "dr"])),
        "design_kw_per_position": draw(
            st.sampled_from([90.0, 120.0, 140.0] if liquid else [15.0, 30.0, 38.0, 44.0])
        ),
        "max_rack_power_kw": 135.0 if liquid else 45.0,
        "pod_max_gpus": draw(st.sampled_from([256, 512, 2048])),
        "pod_max_racks": draw(st.sampled_from([None, 6, 12])),
        "liquid": liquid,
        "liquid_share": draw(st.sampled_from([0.7, 0.9])),
    }
    sets = (
        [["gb200-nvl72"]]
        if liquid
        else [["grand-teton-h100"], ["dgx-h100-4"], ["grand-teton-h100", "dgx-h100-4"]]
    )
    clusters = []
    for i in range(draw(st.integers(2, 3))):
        types = draw(st.sampled_from(sets))
        c = {
            "id": f"c{i}",
            "demand": draw(st.sampled_from(["max", "at_least"])),
            "rack_types": types,
            "max_hops": draw(st.sampled_from([3, 5])),
            "on_power_failure": draw(st.sampled_from(["keep", "keep", "cap", "shed"])),
        }
        c["gpus"] = 72 if liquid else 32
        if c["demand"] == "max" and draw(st.booleans()):
            c.pop("gpus")
        clusters.append(c)
    later = None
    if draw(st.booleans()):  # a second building from phase p2; demands grow then
        later = {
            **building,
            "pods_per_hall": 1,
            "design_kw_per_position": building["design_kw_per_position"] * 0.8,
        }
        for c in clusters:
            if "gpus" in c:
                c["gpus_by_phase"] = {"p1": c["gpus"], "p2": 2 * c["gpus"]}
                c.pop("gpus")
    return building, clusters, later


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(rooms())
def test_the_room_never_cuts_off_a_plan(drawn) -> None:
    """On random small sites (one phase, or a second building from phase p2) the model with the
    room and the rounding cuts proves the same optimum as without them, and its LP relaxation is
    never weaker (HiGHS, exact gap)."""
    building, clusters, later = drawn
    try:
        s = _scenario(building, clusters, later)
    except Exception:  # a drawn site some checks refuse (e.g. no rack fits): nothing to compare
        return
    with_room = plan_scenario(s, tie_breaks=False)
    without = _optimum_without_room(s)
    if not with_room.status.has_plan:
        assert without is None or with_room.status.value == "infeasible" and without is None
        return
    assert with_room.status.value == "optimal"
    assert with_room.objective_value == pytest.approx(without)
    assert _lp(s) <= _lp_without_room(s) + 1e-6


def _job(gpus: int, hops: int = 3, demand: str = "exact", cid: str = "job") -> dict:
    return {"id": cid, "demand": demand, "gpus": gpus, "rack_types": ["grand-teton-h100"], "max_hops": hops}


ROOM_NOTE = (
    "infeasible, proved by room: {who} {verb} {need} GPUs within {scope}; the most {scope} can hold of "
    "its rack types is 368{where}, {short} short (space, power and heat room, an upper bound on every plan)"
)


def test_a_demand_beyond_its_pods_room_is_infeasible_before_a_model_is_built() -> None:
    """The pod above holds 368 Grand Teton GPUs. A job of exactly 384 in one pod (24 racks, within
    its 456 ports and 28 racks) is 16 short; at least 384 within the building likewise; two jobs
    of 192 in one pod each fit alone but together need 384 of the site's 368. Each is infeasible
    with the shortfall named, before any model is built (no build stage); 368 in one pod plans
    whole."""
    pod = "pod " + _scenario(SMALL_GT, [_job(16)]).site.buildings[0].halls[0].pods[0].id
    building = "building " + _scenario(SMALL_GT, [_job(16)]).site.buildings[0].id
    cases = [
        ([_job(384)], dict(who="cluster job", verb="needs", scope="one pod", where=f" (in {pod})")),
        (
            [_job(384, hops=5, demand="at_least")],
            dict(who="cluster job", verb="needs", scope="one building", where=f" (in {building})"),
        ),
        (
            [_job(192, cid="a"), _job(192, cid="b")],
            dict(who="the 2 clusters on grand-teton-h100", verb="need", scope="the site", where=""),
        ),
    ]
    for clusters, words in cases:
        plan = plan_scenario(_scenario(SMALL_GT, clusters))
        assert plan.status.value == "infeasible"
        assert plan.notes[0] == ROOM_NOTE.format(need=384, short=16, **words)
        assert "build" not in plan.stage_times_s
        assert not plan.racks
    fits = plan_scenario(_scenario(SMALL_GT, [_job(368)]))
    assert (fits.status.value, fits.objective_value) == ("optimal", 368)


@st.composite
def firm_demands(draw):
    """A drawn building (:func:`rooms`, one phase) whose first cluster wants exactly or at least a
    figure from one rack to more than a building holds; the others as many as fit (no firm
    figure), so a shortfall named where there is none shows as a plan."""
    building, clusters, _ = draw(rooms())
    for i, c in enumerate(clusters):
        c.pop("gpus_by_phase", None)  # one phase: the drawn second building is left out
        if i == 0:
            g = 72 if "gb200-nvl72" in c["rack_types"] else 32
            c["demand"] = draw(st.sampled_from(["exact", "at_least"]))
            c["gpus"] = g * draw(st.integers(1, 16))
        else:
            c["demand"] = "max"
    return building, clusters


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(firm_demands())
def test_a_shortfall_by_room_is_never_wrong(drawn) -> None:
    """Whenever the room names a shortfall, the model without the room, its cuts or the proof
    (HiGHS, exact) finds no plan either: the proof never calls a feasible scenario infeasible."""
    building, clusters = drawn
    try:
        s = _scenario(building, clusters)
    except Exception:  # a drawn site some checks refuse: nothing to compare
        return
    if not room_shortfalls(s):
        return
    solved = _without_room(lambda: plan_scenario(s, tie_breaks=False, warm_start=False))
    assert solved.status.value == "infeasible"
