"""Designed fabrics in phased plans (§13, §16): each phase's fabric is sized from the racks placed
by then, switches are bought when first needed and stay, their power counts in that phase's
arrival, and their capex lands in the phase that buys them; hand-derived, both solvers, and the
verifier's phase-by-phase checks."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.enums import SolverName, Status
from planner.input.loader import scenario_from_data
from planner.plan import Plan
from planner.plan.pipeline import plan_scenario
from planner.plan.rolling import plan_rolling
from planner.schema import Scenario
from planner.verifier import verify
from tests.test_fabric import IB2, net_site
from tests.test_optimize import SOLVERS, solved
from tests.test_phases import PHASES


def phased(interconnect_mw: float) -> Scenario:
    """One pod of 8 Grand Teton positions (21.4 kW, 16 GPUs, 16 links each) on QM9700 2-tier
    (1.1 kW, $43,000, 1 U; every link DAC at $100, drawing nothing), its switches in network row N1
    (3 positions, 10 kW a rack); 128 GPUs wanted; phases p1, p2; PUE 1.25; ``interconnect_mw``
    from the start and 0.2 MW of generation from p2."""
    pod = [{"id": "P1", "gpu": 8, "net": [("N1", 100, 10, 3)]}]
    data = net_site(pod, [IB2], {"demand": "max", "gpus": 128, "max_hops": 5, "fabrics": ["ib2"]}).model_dump(
        mode="json"
    )
    data["phases"] = [{"id": p["id"], "start": p["start"].isoformat()} for p in PHASES]
    data["pue"] = 1.25
    data["power_arrival"] = [{"interconnect_mw": interconnect_mw}, {"phase": "p2", "generation_mw": 0.2}]
    return scenario_from_data(data)


GROWN = [
    ("p1", [(1, 2, "p1"), (1, 2, "p2")], {"p1": 2.2, "p2": 4.4}, 4.4),
    ("p1", [(2, 1, "p1"), (2, 1, "p2")], {"p1": 1.1, "p2": 2.2}, 2.2),
]
"""phased(0.111)'s network racks: the leaf rack (2 leaves in p1, 2 more in p2) and the spine rack."""


def network_racks(plan) -> list:
    """(first phase, [(tier, switches, phase bought)], kW by phase, kW) of each network rack."""
    return sorted(
        (nr.phase, [(c.tier, c.count, c.phase) for c in nr.switches], nr.kw_by_phase, nr.kw)
        for nr in plan.network_racks
    )


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_phased_fabric_grows_with_its_racks_and_its_power_binds_arrival(solver: str) -> None:
    """p1 with 111 kW arrived: 4 racks (64 GPUs) need ⌈64/32⌉ = 2 leaves and 2 × 32 / 64 = 1 spine,
    (4 × 21.4 + 3 × 1.1) × 1.25 = 111.125 kW > 111 — without the switches' power 4 × 21.4 × 1.25 =
    107 kW would fit; 3 racks (48 GPUs) need the same 3 switches: 67.5 kW × 1.25 = 84.375 kW. p2
    (311 kW): 8 racks, 4 leaves and 2 spines, 177.8 kW × 1.25 = 222.25. GPU-phases 48 + 128 = 176.
    The switches of p1 stay, p2 buys 2 leaves and 1 spine more: the leaf rack (9 fit its 10 kW)
    draws 2.2 kW in p1 and 4.4 in p2, the spine rack 1.1 and 2.2.
    Capex by phase, each GT $650,000 + 21.4 kW × $11,700 facility = $900,380: p1 3 racks
    $2,701,140 + 3 switches $129,000 + links (3 × 16 GPU links + 2 × 32 leaf uplinks) × $100
    = $11,200 + the switches' 3.3 kW of facility $38,610 = $2,879,950; p2 5 racks $4,501,900 +
    $129,000 + (5 × 16 + 2 × 32) × $100 + $38,610 = $4,683,910; together the plan's $7,563,860.
    With 112 kW arrived the 4 racks fit in p1 (111.125 ≤ 112): 192 GPU-phases."""
    plan = solved(phased(0.111), solver)
    assert [(p.phase, p.racks, p.gpus) for p in plan.phases] == [("p1", 3, 48), ("p2", 8, 128)]
    assert plan.objective_value == 176
    assert [p.it_kw for p in plan.phases] == [pytest.approx(67.5), pytest.approx(177.8)]
    assert [p.capex_usd for p in plan.phases] == [pytest.approx(2_879_950), pytest.approx(4_683_910)]
    assert plan.kpis.capex_usd == pytest.approx(7_563_860)
    assert (plan.fabric[0].switches, plan.kpis.capex_fabric_usd) == ([4, 2], pytest.approx(283_600))
    assert network_racks(plan) == GROWN
    assert solved(phased(0.112), solver).objective_value == 192


def test_the_verifier_checks_a_phased_fabric_phase_by_phase() -> None:
    """Leaves bought a phase late leave p1's fabric short; a rack's p1 kW edited down no longer
    carries p1's fabric power; a kW stated for only some phases is refused."""
    s = phased(0.111)
    plan = solved(s, "highs").model_copy(update={"scenario_hash": None})
    leaf = next(i for i, nr in enumerate(plan.network_racks) if nr.switches[0].tier == 1)
    late = plan.network_racks[leaf]
    late = late.model_copy(update={"switches": [c.model_copy(update={"phase": "p2"}) for c in late.switches]})
    bad = [
        str(v)
        for v in verify(
            plan.model_copy(update={"network_racks": [late, plan.network_racks[1 - leaf]]}), s
        ).violations
    ]
    assert "cluster c1 in phase p1: its network racks hold 0 tier-1 switches, its fabric needs 2" in bad, bad
    assert (
        "cluster c1 in phase p1: pod P1 needs 2 leaves in rows serving it, its network racks there hold 0"
        in bad
    )
    low = plan.network_racks[leaf].model_copy(update={"kw_by_phase": {"p1": 1.1, "p2": 4.4}})
    nets = [low if i == leaf else nr for i, nr in enumerate(plan.network_racks)]
    bad = [str(v) for v in verify(plan.model_copy(update={"network_racks": nets}), s).violations]
    assert "network_racks[0] (N1/0): draws 1.1 kW in phase p1, less than its switches' 2.2 kW" in bad, bad
    assert "cluster c1 in phase p1: its network racks draw 2.200 kW, its fabric draws 3.300 kW" in bad
    part = plan.network_racks[leaf].model_copy(update={"kw_by_phase": {"p2": 4.4}})
    nets = [part if i == leaf else nr for i, nr in enumerate(plan.network_racks)]
    bad = [str(v) for v in verify(plan.model_copy(update={"network_racks": nets}), s).violations]
    assert "network_racks[0] (N1/0): states its kW for p2, not for p1 to p2" in bad, bad


@pytest.mark.parametrize("solver", SOLVERS)
def test_rolling_planning_grows_a_designed_fabric_from_what_stands(solver: str) -> None:
    """Rolling on phased(0.111): p1 alone sees 111 kW and places 3 racks (4 would draw 111.125 kW
    with their 2 leaves and 1 spine), p2 grows from them to 8 racks: 2 leaves and 1 spine more in
    the racks that stand — the joint plan's fabric, 176 GPU-phases, verified."""
    s = phased(0.111)
    s = s.model_copy(update={"solver": s.solver.model_copy(update={"name": SolverName(solver)})})
    plan = plan_rolling(s)
    assert verify(plan, s).ok
    assert [(p.phase, p.racks, p.gpus) for p in plan.phases] == [("p1", 3, 48), ("p2", 8, 128)]
    assert plan.objective_value == 176
    assert network_racks(plan) == GROWN


def two_buildings_phased() -> Scenario:
    """tests.test_region's two buildings 3 km apart (a region tier of 432 × 800G chassis at 4.5:1 in
    B1, a 128-GPU job on QM9700 2-tier, max 20 µs), B2 online from p2, 4.8 Tb/s between B2 and the
    tier."""
    from tests.test_region import two_buildings

    data = two_buildings(20).model_dump(mode="json", exclude_none=True)
    data["phases"] = [{"id": p["id"], "start": p["start"].isoformat()} for p in PHASES]
    for b in data["site"]["buildings"]:
        for h in b["halls"] if b["id"] == "B2" else []:
            h["online_phase"] = "p2"
    data["region_tier"]["building_tbps"] = {"B2": 4.8}
    return scenario_from_data(data)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_job_spanning_by_the_horizon_is_joined_by_the_region_tier_from_its_first_racks(solver: str) -> None:
    """p1: only B1 is online, the job stands there whole (4 racks, 64 GPUs). p2: B2 comes online and
    its 4.8 Tb/s to the tier lets it send ⌊4.8 / 0.8⌋ = 6 links of 9 endpoints each: 3 racks, 48
    GPUs (112 in all). The job spans by the horizon, so the tier joins it from its first racks: B1's
    ⌈64 × 400 / (4.5 × 800)⌉ = 8 region links, the border spine that takes them and the tier's
    chassis are bought in p1; p2 adds B2's 6 (14 in all, one 432-port chassis)."""
    plan = solved(two_buildings_phased(), solver)
    assert [(p.phase, p.gpus) for p in plan.phases] == [("p1", 64), ("p2", 112)]
    f = plan.fabric[0]
    assert (f.endpoints_by_building, f.region_links, f.region_switches) == ({"B1": 64, "B2": 48}, 14, 1)
    bought = sorted(
        (nr.building, c.tier, c.phase)
        for nr in plan.network_racks
        for c in nr.switches
        for _ in range(c.count)
    )
    assert [x for x in bought if x[1] == 4] == [("B1", 4, "p1")]
    assert {x[2] for x in bought if x[0] == "B2"} == {"p2"}
    use = next(u for u in plan.utilisation if u.kind == "region_bandwidth" and u.id == "B2")
    assert (use.value, use.limit) == (pytest.approx(4.8), 4.8)


def small_site(site_id: str, building_spacing_km: float = 0.0, **building) -> dict:
    """A generated site of pods of 2 Grand Teton rows (64 GPU ports a pod), each pod with a network
    row of 4 positions (100 kW, 40 kW racks) and a building network row, as data."""
    from planner.input.generate import BuildingSpec, SiteSpec, generate_site

    spec = dict(
        rows_per_pod=2,
        pod_max_gpus=64,
        network_rows_per_pod=1,
        network_row_positions=4,
        network_row_kw=100,
        network_rack_max_kw=40,
        building_network_rows=1,
    )
    spec.update(building)
    site = SiteSpec(id=site_id, building_spacing_km=building_spacing_km, buildings=[BuildingSpec(**spec)])
    return generate_site(site).model_dump(mode="json", exclude_none=True)


def three_buildings_hub(interconnect_mw: float | None) -> Scenario:
    """Three buildings 3 km apart (generated: per building one pod of 2 rows × 4 Grand Teton
    positions, 64 GPU ports, its 12 kW pod network rack, a pod and a building network row); B1 is
    the region tier's building and holds network rows only, B3 comes online in p2; one 128-GPU job
    on QM9700 2-tier that may span the region; no back-end allowance; ``interconnect_mw`` in p1
    and 0.2 MW more in p2 (None: no limit)."""
    site = small_site("three", building_spacing_km=3, count=3, positions_per_row=4)
    hub = site["buildings"][0]["halls"][0]
    hub["rows"] = [r for r in hub["rows"] if r.get("network")]
    for h in site["buildings"][2]["halls"]:
        h["online_phase"] = "p2"
    job = {"id": "job", "demand": "max", "gpus": 128, "rack_types": ["grand-teton-h100"], "max_hops": 7}
    data = {
        "name": "three",
        "site": site,
        "fabrics": [IB2],
        "clusters": [{**job, "fabrics": ["ib2"]}],
        "region_tier": {"switch": "bag-chassis", "building": "B1"},
        "phases": [{"id": p["id"], "start": p["start"].isoformat()} for p in PHASES],
        "network_allowance": False,
        "solver": {"time_limit_s": 60},
    }
    if interconnect_mw is not None:
        data["power_arrival"] = [
            {"interconnect_mw": interconnect_mw},
            {"phase": "p2", "interconnect_mw": 0.2},
        ]
    return scenario_from_data(data)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize(("interconnect_mw", "gpu_phases"), [(None, 192), (0.1, 144)])
def test_a_phased_region_with_a_designed_fabric_decomposes_by_building(
    solver: str, interconnect_mw: float | None, gpu_phases: int
) -> None:
    """Each building plans its share of the job with its region links; the tier's chassis stand in
    B1 from the job's first racks. Unlimited: p1 only B2 is online (64 GPU ports), p2 adds B3's 64:
    64 + 128 = 192 GPU-phases. With 100 kW in p1: one rack (16 GPUs), since two racks with both
    pods' network racks, the tier's 24 kW chassis and at least a leaf and a spine draw
    (2 × 21.4 + 2 × 12 + 24 + 2 × 1.1) × 1.08 = 100.44 kW; the master's per-GPU estimate of the tier
    allowed 48 GPUs there, its share counts the whole chassis. p2 (300 kW): 128. 16 + 128 = 144.
    The whole model agrees."""
    from planner.scale.decompose import plan_decomposed
    from tests.test_optimize import available_solvers

    if solver not in available_solvers():
        pytest.skip(f"{solver} not installed")
    s = three_buildings_hub(interconnect_mw)
    s = s.model_copy(
        update={"solver": s.solver.model_copy(update={"name": SolverName(solver), "rel_gap": 0.0})}
    )
    plan = plan_decomposed(s, polish=False).plan
    assert verify(plan, s).ok
    assert not plan.notes[0].startswith("decomposition handed over"), plan.notes[0]
    assert plan.objective_value == gpu_phases
    assert [(p.phase, p.gpus) for p in plan.phases] == [("p1", (gpu_phases - 128)), ("p2", 128)]
    tier = [(nr.building, c.phase) for nr in plan.network_racks for c in nr.switches if c.tier == 4]
    assert tier == [("B1", "p1")]
    assert {c.phase for nr in plan.network_racks if nr.building == "B3" for c in nr.switches} == {"p2"}
    assert solved(s, solver).objective_value == gpu_phases


def test_tens_of_buildings_share_one_deadline_smaller_shares_first(monkeypatch) -> None:
    """With more waves of building solves than the budget's MANY_WAVES (here 0), the jobs share one
    end:
    each carries the same wall-clock end and the waves left when it starts in order of its share
    (B2 64 + 64 GPU-phases before B3's 64, so B3 first, 2 waves then 1), and stops at its proven
    GPUs without the least-cable tie-breaks; the joined plan is the unlimited optimum, 192."""
    from planner.scale import decompose

    seen: list[tuple] = []
    run_jobs = decompose.run_jobs

    def recording(fn, jobs, done, **run):
        seen.extend(jobs)
        return run_jobs(fn, jobs, done, **run)

    from planner.scale import budget

    monkeypatch.setattr(budget, "MANY_WAVES", 0)
    monkeypatch.setattr(decompose, "run_jobs", recording)
    said: list[str] = []
    s = three_buildings_hub(None)
    plan = decompose.plan_decomposed(s, polish=False, progress=said.append).plan
    assert verify(plan, s).ok
    assert plan.objective_value == 192
    assert [(j[0], j[2], j[4], j[5]) for j in seen] == [("B3", 1.0, 2, False), ("B2", 1.0, 1, False)]
    assert len({j[3] for j in seen}) == 1
    assert any(
        m.startswith("building solves: 2 on serial, ") and m.endswith(" s shared, the smaller shares first")
        for m in said
    ), said


def test_a_shared_deadline_gives_a_job_the_time_left_over_the_waves_left(monkeypatch) -> None:
    """solve_part's limit is (until − now) ÷ waves, at least its own figure: 30 s left over 3 waves
    is 10 s; with the deadline past, the floor; without tie-breaks the plan has no least-cable
    stage (with them, phased(0.111)'s does), and the GPU-phases are the optimum either way (176)."""
    from planner.scale import joined

    asked: list[float] = []

    def recording(scenario, time_limit_s=None, tie_breaks=True):
        asked.append(time_limit_s)
        return plan_scenario(scenario, time_limit_s=time_limit_s, tie_breaks=tie_breaks)

    monkeypatch.setattr(joined, "plan_scenario", recording)
    text = json.dumps(phased(0.111).model_dump(mode="json", exclude_none=True))
    for until, waves, floor, want in ((time.time() + 30, 3, 1.0, 10.0), (time.time() - 5, 2, 4.0, 4.0)):
        plan = Plan.model_validate(
            joined.solve_part("p", text, floor, until, waves, tie_breaks=False)["plan"]
        )
        assert asked[-1] == pytest.approx(want, abs=0.5)
        assert plan.objective_value == 176
        assert not any(n.startswith("min cable") for n in plan.notes), plan.notes
    plan = Plan.model_validate(joined.solve_part("p", text, 10.0)["plan"])
    assert asked[-1] == 10.0
    assert any(n.startswith("min cable") for n in plan.notes), plan.notes


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_rolling_job_whose_network_stands_in_one_building_stays_there(solver: str) -> None:
    """Rolling on two_buildings_phased: p1 sees only B1 online, the job stands there whole (64 GPU
    ports) with no region links (it does not span); in p2 joining B2 would need region links from
    its first racks, which stand already without them, so it stays in B1: 64 + 64 = 128 GPU-phases
    against the joint plan's 64 + 112 = 176 (regret 48 GPU-phases)."""
    data = two_buildings_phased().model_dump(mode="json", exclude_none=True)
    data["solver"] = {"name": solver}
    s = scenario_from_data(data)
    plan = plan_rolling(s)
    assert verify(plan, s).ok
    assert [(p.phase, p.gpus) for p in plan.phases] == [("p1", 64), ("p2", 64)]
    assert {r.building for r in plan.racks} == {"B1"}
    assert plan.fabric[0].design == "ib2"
    assert solved(s, solver).objective_value == 176


def test_a_region_tier_in_a_building_of_gpu_rows_goes_to_the_whole_model() -> None:
    """The tier's chassis stand after the buildings are planned, in room no building plan takes:
    with GPU rows in the tier's building the decomposition hands over and says why."""
    from planner.scale.decompose import plan_decomposed

    data = two_buildings_phased().model_dump(mode="json", exclude_none=True)
    del data["clusters"][0]["max_latency_us"]
    s = scenario_from_data(data)
    plan = plan_decomposed(s, polish=False).plan
    assert plan.notes[0] == (
        "decomposition handed over to the whole model: the region tier's building B1 holds GPU rows "
        "(its switches need room of their own)"
    )
    assert plan.objective_value == 64 + 112


def test_the_capacity_bound_counts_the_least_a_designed_fabric_adds() -> None:
    """A Grand Teton rack (16 GPUs, 21.4 kW) on QM9700 2-tier adds at least 16 / 32 leaves ×
    1.1 kW + 16 uplinks / 64 ports × 1.1 kW of spines = 0.825 kW (its DAC links draw nothing):
    (21.4 + 0.825) / 16 = 1.3890625 kW per GPU. p1: 111 kW arrived ÷ PUE 1.25 = 88.8 kW → 63.93
    GPUs (66.39 without the fabric); p2: 128 asked. Bound 63 + 128 = 191 (was 194); optimum 176."""
    from planner.rules.bounds import capacity_bound
    from planner.verifier.bounds_recount import recount_capacity

    s = phased(0.111)
    assert capacity_bound(s) == 191
    assert recount_capacity(s) == 191


def test_the_capacity_bound_counts_region_links_of_a_job_too_big_for_one_building() -> None:
    """three_buildings_hub(0.1) with 192 GPUs asked: one building's GPU positions hold 8 × 16 = 128
    (R), so beyond 128 the job spans and each of its GPUs adds ⅑ region link (400G ÷ (4.5 × 800G)):
    ⅑ × (24 W single-mode optics + 1,100 / 64 W of a border QM9700 + 24,000 / 432 W of the tier's
    chassis) = 10.749228 W. A GPU draws at least (21.4 + 1.209) / 16 = 1.4130625 kW (its rack and
    least fabric share), so the job's draw is at least the hull: 128 GPUs at 1.4130625 kW, 64 at
    1.4130625 + 0.010749228 × 192 / 64 = 1.4453102 kW. p1: (100 − 25.92 kW of network racks) /
    1.08 = 68.593 kW → 48 GPUs; p2: (300 − 38.88) / 1.08 = 241.778 kW: 128 + (241.778 − 180.872) /
    1.4453102 = 170.14 → 170 (171 without the region links). Bound 218; the optimum is 144."""
    from planner.rules.bounds import capacity_bound
    from planner.verifier.bounds_recount import recount_capacity

    data = three_buildings_hub(0.1).model_dump(mode="json", exclude_none=True)
    data["clusters"][0]["gpus"] = 192
    s = scenario_from_data(data)
    assert capacity_bound(s) == 48 + 170
    assert recount_capacity(s) == 48 + 170
    data["clusters"][0]["gpus"] = 128  # fits one building's positions: no region links certain
    s = scenario_from_data(data)
    assert capacity_bound(s) == recount_capacity(s) == 48 + 128


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(4, 16), st.integers(40, 300))
def test_the_capacity_bound_holds_the_proven_optimum_of_a_region_tier_job(racks: int, kw: int) -> None:
    """three_buildings_hub with 16 × ``racks`` GPUs asked and ``kw`` kW arrived in p1 (0.2 MW more in
    p2): the whole model's proven optimum never exceeds the capacity bound, whose spanning piece
    (above 128 GPUs) the verifier re-derives alike."""
    from planner.rules.bounds import capacity_bound
    from planner.verifier.bounds_recount import recount_capacity

    data = three_buildings_hub(kw / 1000).model_dump(mode="json", exclude_none=True)
    data["clusters"][0]["gpus"] = 16 * racks
    s = scenario_from_data(data)
    plan = solved(s, "highs")
    assert plan.status == Status.optimal
    assert plan.objective_value <= capacity_bound(s) == recount_capacity(s)


def shared_row_site(phased_pods: bool) -> Scenario:
    """One building, one hall, three pods of 2 rows × 5 Grand Teton positions (the middle row keeps
    the pod's network rack spot: 9 usable, 64 GPU ports a pod), each pod with a network row of its
    own (4 positions, 40 kW racks) and one building network row serving every pod; a job of 128
    GPUs on QM9700 2-tier that may use pods P1 and P2 (P3 is reserved); with ``phased_pods`` P2's
    rows come online in p2."""
    site = small_site("shared", pods_per_hall=3, positions_per_row=5)
    for r in site["buildings"][0]["halls"][0]["rows"]:
        if r["id"].startswith("B1-H1-P3-R"):
            r["reserved"] = list(range(r["positions"]))
        if r["id"] in ("B1-H1-P1-N1", "B1-H1-P2-N1"):
            r["reserved"] = [1, 2, 3]  # the pods' own rows hold only their network rack
        if phased_pods and r["id"].startswith("B1-H1-P2-R"):
            r["online_phase"] = "p2"
    job = {"id": "job", "demand": "max", "gpus": 128, "rack_types": ["grand-teton-h100"], "max_hops": 5}
    data = {
        "name": "shared",
        "site": site,
        "fabrics": [IB2],
        "clusters": [{**job, "fabrics": ["ib2"]}],
        "network_allowance": False,
    }
    if phased_pods:
        data["phases"] = [{"id": p["id"], "start": p["start"].isoformat()} for p in PHASES]
    return scenario_from_data(data)


def _leaves_in(plan, row: str) -> list[tuple[int, str | None]]:
    return sorted(
        (c.count, c.phase) for nr in plan.network_racks if nr.row == row for c in nr.switches if c.tier == 1
    )


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("phased_pods", [False, True], ids=["one phase", "P2 in p2"])
def test_a_network_row_serving_several_pods_holds_every_pods_leaves(solver: str, phased_pods: bool) -> None:
    """Pods P1 and P2 take 4 racks each (64 GPU ports): ⌈64 / 32⌉ = 2 leaves a pod, all in the
    building's network row, the one row serving both: 4 leaves there, not 2 counted for each pod;
    4 × 32 uplinks / 64 = 2 spines. Phased: p1 buys P1's 2 leaves (and 1 spine), p2 P2's 2 and 1."""
    plan = solved(shared_row_site(phased_pods), solver)
    assert plan.objective_value == (64 + 128 if phased_pods else 128)
    assert plan.fabric[0].switches == [4, 2]
    if phased_pods:
        assert _leaves_in(plan, "B1-H1-BN1") == [(2, "p1"), (2, "p2")]
    else:
        assert _leaves_in(plan, "B1-H1-BN1") == [(4, None)]


def test_the_verifier_assigns_each_leaf_to_one_pod() -> None:
    """3 leaves in the building row and 1 in pod P3's own row: 4 leaves as the fabric needs, and
    each of P1 and P2 sees 3 in rows serving it, but only 3 can serve them (P3's serves P3 alone)."""
    from planner.input.site_index import index_site

    s = shared_row_site(False)
    plan = solved(s, "highs").model_copy(update={"scenario_hash": None})
    nets = list(plan.network_racks)
    i = next(i for i, nr in enumerate(nets) if nr.row == "B1-H1-BN1" and nr.switches[0].tier == 1)
    leaf = nets[i]
    nets[i] = leaf.model_copy(
        update={
            "switches": [leaf.switches[0].model_copy(update={"count": 3})],
            "kw": round(leaf.kw - 1.1, 6),
        }
    )
    x, y = index_site(s.site).rows["B1-H1-P3-N1"].row.position_xy(1)
    nets.append(
        leaf.model_copy(
            update={
                "row": "B1-H1-P3-N1",
                "position": 1,
                "x_m": x,
                "y_m": y,
                "kw": 1.1,
                "switches": [leaf.switches[0].model_copy(update={"count": 1})],
            }
        )
    )
    bad = [str(v) for v in verify(plan.model_copy(update={"network_racks": nets}), s).violations]
    assert (
        "cluster job: its pods need 4 leaves in rows serving them, rows serving several pods let only 3 be "
        "assigned (a leaf serves one pod)"
    ) in bad, bad


def test_the_capacity_bound_takes_the_pods_network_rack_and_the_nearest_cable_class() -> None:
    """One generated pod: 2 rows × 5 Grand Teton positions, its 12 kW network rack at the head of its
    network row (y 4.8 m); the nearest GPU position (row 2, y 2.4 m, x 0) cables 2.4 + 3 m tray
    allowance = 5.4 m to it: multimode, 24 W a link (copper reaches 5 m). A rack's least fabric on
    QM9700 2-tier: 16 links × 24 W + 16 / 32 × 1.1 kW leaves + 16 / 64 × 1.1 kW spines = 1.209 kW
    (its DAC uplinks draw nothing); (21.4 + 1.209) / 16 = 1.4130625 kW per GPU. 100 kW arrived at
    PUE 1, less the standing network rack's 12 kW: 88 / 1.4130625 = 62.3 → 62 GPUs (71 with the
    cheapest class a rack accepts and no network rack, 74 without the fabric)."""
    from planner.input.generate import BuildingSpec, SiteSpec, generate_site
    from planner.rules.bounds import capacity_bound
    from planner.verifier.bounds_recount import recount_capacity

    site = generate_site(
        SiteSpec(
            buildings=[
                BuildingSpec(
                    rows_per_pod=2, positions_per_row=5, network_rows_per_pod=1, network_row_positions=4
                )
            ]
        )
    )
    job = {"id": "job", "demand": "max", "gpus": 128, "rack_types": ["grand-teton-h100"], "max_hops": 3}
    s = scenario_from_data(
        {
            "name": "one-pod",
            "site": site.model_dump(mode="json", exclude_none=True),
            "fabrics": [IB2],
            "clusters": [{**job, "fabrics": ["ib2"]}],
            "pue": 1.0,
            "power_arrival": [{"interconnect_mw": 0.1}],
        }
    )
    assert capacity_bound(s) == 62
    assert recount_capacity(s) == 62


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_building_scoped_job_on_a_designed_fabric_stands_in_one_of_several_buildings(solver: str) -> None:
    """tests.test_region's two buildings, the 128-GPU job held to one building (max_hops 5): its
    network racks may stand only where it is homed, which the fabric learns from the cluster's home
    binaries (built before it): one building's 64 GPU ports, 64 GPUs, every rack and switch there
    (it placed none while the fabric was built before the homes)."""
    from tests.test_region import two_buildings

    data = two_buildings().model_dump(mode="json", exclude_none=True)
    data["clusters"][0]["max_hops"] = 5
    plan = solved(scenario_from_data(data), solver)
    assert plan.objective_value == 64
    assert len({r.building for r in plan.racks} | {nr.building for nr in plan.network_racks}) == 1


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_two_stage_plan_shares_its_first_phase_fabric(solver: str) -> None:
    """phased(0.111) with two equally likely futures for p2, 64 or 128 GPUs: p1 has power for 3
    racks in both (48 GPUs, 2 leaves and 1 spine, bought once for both futures); p2 grows to 4 racks
    (64, the same leaves and spine) or 8 (128: 2 leaves and 1 spine more). GPU-phases 112 and 176,
    expected 144; the plans that knew their future do no better (EVPI 0)."""
    from planner.plan.stochastic import plan_stochastic

    data = phased(0.111).model_dump(mode="json", exclude_none=True)
    data["futures"] = [
        {"id": "low", "probability": 0.5, "gpus_by_phase": {"c1": {"p1": 128, "p2": 64}}},
        {"id": "high", "probability": 0.5, "gpus_by_phase": {"c1": {"p1": 128, "p2": 128}}},
    ]
    data["solver"] = {"name": solver, "rel_gap": 0.0}
    s = scenario_from_data(data)
    plan = plan_stochastic(s)
    assert verify(plan, s).ok
    st = plan.stochastic
    assert [(o.id, o.objective_value) for o in st.futures] == [("low", 112), ("high", 176)]
    assert (st.expected_objective, st.evpi) == (144, 0)
    first = [
        sorted(
            (nr.row, nr.position, c.tier, c.count)
            for nr in o.plan.network_racks
            for c in nr.switches
            if c.phase == "p1"
        )
        for o in st.futures
    ]
    assert first[0] == first[1]
    assert sorted((t, n) for *_, t, n in first[0]) == [(1, 2), (2, 1)]
    high = next(o.plan for o in st.futures if o.id == "high")
    assert high.fabric[0].switches == [4, 2]
    nets = list(high.network_racks)
    i = next(i for i, nr in enumerate(nets) if nr.switches[0].tier == 2)
    nets[i] = nets[i].model_copy(update={"position": nets[i].position + 1})  # the spine one position on
    moved = high.model_copy(update={"network_racks": nets})
    futures = [o.model_copy(update={"plan": moved}) if o.id == "high" else o for o in st.futures]
    edited = plan.model_copy(update={"stochastic": st.model_copy(update={"futures": futures})})
    bad = [str(v) for v in verify(edited, s).violations]
    assert (
        "future high: its first phase ('p1') differs from future 'low''s: a two-stage plan "
        "decides the first phase once for every future"
    ) in bad, bad


def test_a_designed_fabric_solve_starts_from_the_racks_with_its_counts_relaxed() -> None:
    """HiGHS can solve the fabric's switch, rack and link counts as continuous: the racks of that
    solve are the start, and the plan is the same optimum (176 GPU-phases) the tests above derive;
    CBC cannot relax chosen variables and gets no such start."""
    from planner.plan.pipeline import plan_scenario

    seen: list[str] = []
    plan = plan_scenario(phased(0.111), lambda p: seen.append(p.stage))
    assert "start (fabric relaxed): handed to the solver" in seen
    assert plan.objective_value == 176
    s = phased(0.111)
    cbc = s.model_copy(update={"solver": s.solver.model_copy(update={"name": SolverName("cbc")})})
    seen.clear()
    assert plan_scenario(cbc, lambda p: seen.append(p.stage)).objective_value == 176
    assert "start (fabric relaxed): none in time" not in seen
    assert not any(x.startswith("start: the racks") for x in seen)
