"""The MILP on hand-solvable instances: exact optima, both solvers, every plan verified.

Grand Teton (GT) racks draw 21.4 kW (2 × (8 × 0.7 + 4.6) + 1.0) and hold 16 GPUs;
NVL72 racks draw 132 kW (18 × (4 × 1.2 + 1.5) + 18.6), 85 % to liquid (112.2 kW) and 15 % to air
(19.8 kW).
Usable power of a node = 0.8 × capacity. Tiny sites come from ``tiny_scenario``:
rows sit at y = 0 with 0.6 m pitch; the pod network rack stands in row NET.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.enums import SolverName
from planner.explainer import explain_infeasible
from planner.input.loader import load_scenario, scenario_from_data
from planner.plan.pipeline import plan_scenario
from planner.schema import Scenario
from planner.solving.backends import available as available_solvers
from planner.verifier import verify
from tests.conftest import tiny_scenario

DATASETS = Path(__file__).resolve().parent.parent / "datasets"
SOLVERS = [pytest.param(s, id=s) for s in ("highs", "cbc")]
GT = "grand-teton-h100"


def solved(scenario: Scenario, solver: str):
    if solver not in available_solvers():
        pytest.skip(f"{solver} not installed")
    s = scenario.model_copy(
        update={"solver": scenario.solver.model_copy(update={"name": SolverName(solver), "rel_gap": 0.0})}
    )
    plan = plan_scenario(s)
    rep = verify(plan, s)
    assert rep.ok, rep.violations
    return plan


def max_cluster(types=(GT,), **kw):
    return [{"id": "c1", "demand": "max", "rack_types": list(types), **kw}]


@pytest.mark.parametrize("solver", SOLVERS)
def test_row_bound_by_feed_power(solver: str) -> None:
    """One non-redundant row on one 100 kW feed: 80 kW usable → ⌊80 / 21.4⌋ = 3 racks = 48 GPUs."""
    s = tiny_scenario(
        [{"id": "R1", "positions": 10, "feeds": ["F"]}], [{"id": "F", "capacity_kw": 100}], max_cluster()
    )
    plan = solved(s, solver)
    assert plan.kpis.gpus == 48
    assert plan.status == "optimal"


@pytest.mark.parametrize("solver", SOLVERS)
def test_2n_feeds_bound_by_n_minus_1(solver: str) -> None:
    """Row on feeds A and B (100 kW each, 80 usable). Normal load splits 50/50 (7 racks would fit:
    74.9 kW per feed), but when A fails B carries the whole row: ⌊80 / 21.4⌋ = 3 racks = 48 GPUs."""
    s = tiny_scenario(
        [{"id": "R1", "positions": 20, "feeds": ["A", "B"], "redundant": True}],
        [{"id": "A", "capacity_kw": 100}, {"id": "B", "capacity_kw": 100}],
        max_cluster(),
    )
    plan = solved(s, solver)
    assert plan.kpis.gpus == 48
    worst = {u.id: u for u in plan.utilisation if u.kind == "power_node"}
    assert worst["B"].value == pytest.approx(32.1)  # 3 × 21.4 / 2
    assert worst["B"].worst_value == pytest.approx(64.2)


@pytest.mark.parametrize("solver", SOLVERS)
def test_distributed_redundancy_n_minus_1_binds(solver: str) -> None:
    """dr-hall: rows on UPS pairs (1,2) ×4, (2,3) ×2, (3,1) ×2; 600 kW usable per UPS; the pod's
    12 kW network rack stands in R01, block (1,2). In racks of 21.4 kW (600 kW = 28.04 racks,
    12 kW = 0.56 rack), with X, Y, Z racks in blocks (1,2), (2,3), (3,1), each UPS carrying one
    block whole and the other half when its partner fails:
      X + Z/2 ≤ 27.48,  X + Y/2 ≤ 27.48,  Z + X/2 ≤ 27.76,
      Y + X/2 ≤ 27.76,  Z + Y/2 ≤ 28.04,  Y + Z/2 ≤ 28.04.
    (18, 18, 18) = 54 racks fits. 55 needs a 19: X = 19 forces Y, Z ≤ 16; Y = 19 with X = 18 breaks
    Y + X/2 (28 > 27.76) and with X ≤ 17 needs Z ≤ 18 (19 + Z/2 ≤ 28.04), total ≤ 54; Z = 19 alike.
    So the optimum is 54 racks = 864 GPUs. Normal load per UPS is only about half of that: the
    contingency binds, not normal load."""
    plan = solved(load_scenario(DATASETS / "dr-hall.yaml"), solver)
    assert plan.kpis.gpus == 864
    ups = {u.id: u for u in plan.utilisation if u.id.startswith("UPS")}
    assert max(u.share for u in ups.values()) < 0.7
    assert max(u.worst_share for u in ups.values()) > 0.98


NVL = {"id": "R1", "positions": 10, "feeds": ["F"], "liquid_loop": "LQ"}


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize(
    ("loop_kw", "air_kw", "racks"),
    [
        pytest.param(
            336, 1000, 2, id="liquid-bound"
        ),  # ⌊336 / 112.2⌋ = 2 (a 120 kW rack would give ⌊336 / 102⌋ = 3)
        pytest.param(1000, 55, 2, id="air-share-bound"),  # ⌊55 / 19.8⌋ = 2 (⌊55 / 18⌋ = 3 at 120 kW)
        pytest.param(337, 1000, 3, id="liquid-3"),  # 3 × 112.2 = 336.6 ≤ 337
    ],
)
def test_cooling_bound_liquid_rack(solver: str, loop_kw: float, air_kw: float, racks: int) -> None:
    s = tiny_scenario(
        [NVL],
        [{"id": "F", "capacity_kw": 10_000}],
        max_cluster(["gb200-nvl72"]),
        zones=[
            {"id": "AIR", "medium": "air", "units": 1, "unit_capacity_kw": air_kw},
            {"id": "LQ", "medium": "liquid", "units": 1, "unit_capacity_kw": loop_kw},
        ],
    )
    assert solved(s, solver).kpis.gpus == 72 * racks


@pytest.mark.parametrize("solver", SOLVERS)
def test_weight_bound(solver: str) -> None:
    """Row limit 600 kg: DGX 4-per-rack (672 kg, 32 GPUs) cannot stand there, GT (381 kg) can:
    4 positions → 4 GT racks = 64 GPUs (128 if weight were ignored)."""
    s = tiny_scenario(
        [{"id": "R1", "positions": 4, "feeds": ["F"], "max_rack_weight_kg": 600, "max_rack_power_kw": 45}],
        [{"id": "F", "capacity_kw": 10_000}],
        max_cluster(["dgx-h100-4", GT]),
    )
    plan = solved(s, solver)
    assert plan.kpis.gpus == 64
    assert {r.rack_type for r in plan.racks} == {GT}


@pytest.mark.parametrize("solver", SOLVERS)
def test_cable_reach_bound(solver: str) -> None:
    """A copper-only GT variant (dac/aec, ≤ 5 m). Row at y = −1.2, network rack at (0, −2.4):
    cable = 0.6 i + 1.2 + 3.0 m tray ≤ 5 → i ∈ {0, 1} → 2 racks = 32 GPUs."""
    copper = {
        "id": "gt-copper",
        "servers_per_rack": 2,
        "gpus_per_server": 8,
        "gpu_power_w": 700,
        "non_gpu_power_kw_per_server": 4.6,
        "overhead_power_kw": 1.0,
        "weight_kg": 381,
        "capex_usd": 650000,
        "links_per_server": 8,
        "link_classes": ["dac", "aec"],
    }
    s = tiny_scenario(
        [{"id": "R1", "positions": 10, "feeds": ["F"], "origin_y_m": -1.2}],
        [{"id": "F", "capacity_kw": 10_000}],
        max_cluster(["gt-copper"]),
        rack_types=[copper],
    )
    plan = solved(s, solver)
    assert plan.kpis.gpus == 32
    assert sorted(r.position for r in plan.racks) == [0, 1]
    assert {r.link_class for r in plan.racks} == {"aec"}


@pytest.mark.parametrize("solver", SOLVERS)
def test_pod_limit_with_one_pod_scope(solver: str) -> None:
    """Pods P1 (64 GPU ports) and P2 (96); max_hops 3 keeps the cluster in one pod:
    the best pod is P2 → 6 racks = 96 GPUs (160 if it could span both)."""
    s = tiny_scenario(
        [
            {"id": "R1", "positions": 10, "feeds": ["F"], "pod": "P1"},
            {"id": "R2", "positions": 10, "feeds": ["F"], "pod": "P2", "origin_y_m": 2.4},
        ],
        [{"id": "F", "capacity_kw": 10_000}],
        max_cluster(max_hops=3),
        pods=[
            {"id": "P1", "network_rack": {"row": "NET", "position": 0}, "max_gpus": 64},
            {"id": "P2", "network_rack": {"row": "NET", "position": 1}, "max_gpus": 96},
        ],
        net_positions=2,
    )
    plan = solved(s, solver)
    assert plan.kpis.gpus == 96
    assert {r.row for r in plan.racks} == {"R2"}


CHEAP = [
    {
        "id": "a8",
        "servers_per_rack": 1,
        "gpus_per_server": 8,
        "gpu_power_w": 700,
        "non_gpu_power_kw_per_server": 4.6,
        "weight_kg": 200,
        "capex_usd": 200000,
        "links_per_server": 0,
    },
    {
        "id": "b16",
        "servers_per_rack": 2,
        "gpus_per_server": 8,
        "gpu_power_w": 700,
        "non_gpu_power_kw_per_server": 4.6,
        "weight_kg": 400,
        "capex_usd": 350000,
        "links_per_server": 0,
    },
]


@pytest.mark.parametrize("solver", SOLVERS)
def test_capex_budget(solver: str) -> None:
    """a8 racks: $200,000 + 8 GPUs × $4,200 fabric + 10.2 kW × $11,700 facility build = $352,940
    each; budget $750,000 → 2 racks = 16 GPUs ($705,880; a third would make $1,058,820)."""
    s = tiny_scenario(
        [{"id": "R1", "positions": 10, "feeds": ["F"]}],
        [{"id": "F", "capacity_kw": 10_000}],
        max_cluster(["a8"]),
        rack_types=CHEAP,
        budgets={"capex_usd": 750_000},
    )
    plan = solved(s, solver)
    assert plan.kpis.gpus == 16
    assert (plan.kpis.capex_usd, plan.kpis.capex_facility_usd) == (705_880, 238_680)


@pytest.mark.parametrize("solver", SOLVERS)
def test_min_capex_meets_demand(solver: str) -> None:
    """Exactly 40 GPUs from a8 ($200k + 8 × $4,200 fabric + 10.2 kW × $11,700 facility = $352,940)
    and b16 ($350k + 16 × $4,200 + 20.4 kW × $11,700 = $655,880): 2 × b16 + 1 × a8 = $1,664,700
    (5 × a8 = $1,764,700; 1 × b16 + 3 × a8 = $1,714,700)."""
    s = tiny_scenario(
        [{"id": "R1", "positions": 10, "feeds": ["F"]}],
        [{"id": "F", "capacity_kw": 10_000}],
        [{"id": "c1", "demand": "exact", "gpus": 40, "rack_types": ["a8", "b16"]}],
        rack_types=CHEAP,
        objective="min_capex",
    )
    plan = solved(s, solver)
    assert plan.objective_value == pytest.approx(1_664_700)
    assert sorted(r.rack_type for r in plan.racks) == ["a8", "b16", "b16"]


def two_n_demand(gpus: int) -> Scenario:
    return tiny_scenario(
        [{"id": "R1", "positions": 20, "feeds": ["A", "B"], "redundant": True}],
        [{"id": "A", "capacity_kw": 100}, {"id": "B", "capacity_kw": 100}],
        [{"id": "c1", "demand": "exact", "gpus": gpus, "rack_types": [GT]}],
    )


@pytest.mark.parametrize("solver", SOLVERS)
def test_infeasible_explained(solver: str) -> None:
    """64 GPUs = 4 GT racks = 85.6 kW on one feed when the other fails; 80 kW usable → short by 5.6 kW."""
    s = two_n_demand(64)
    s = s.model_copy(update={"solver": s.solver.model_copy(update={"name": SolverName(solver)})})
    if solver not in available_solvers():
        pytest.skip(f"{solver} not installed")
    plan = plan_scenario(s)
    assert plan.status == "infeasible"
    assert plan.racks == []
    ex = explain_infeasible(s)
    lines = [f.text for f in ex.findings]
    assert "power B: short by 5.6 kW when A fails for c1 (limit 80 kW, needs 85.6 kW)" in lines
    assert "power A: short by 5.6 kW when B fails for c1 (limit 80 kW, needs 85.6 kW)" in lines
    assert ex.headline.startswith("Cannot place c1 at exactly 64 GPUs")


def test_unplaceable_cluster_explained() -> None:
    """NVL72 needs a liquid loop; the only row has none."""
    s = tiny_scenario(
        [{"id": "R1", "positions": 4, "feeds": ["F"]}],
        [{"id": "F", "capacity_kw": 1000}],
        [{"id": "c1", "demand": "at_least", "gpus": 72, "rack_types": ["gb200-nvl72"]}],
    )
    ex = explain_infeasible(s)
    assert [f.text for f in ex.findings] == [
        "cluster c1: none of its rack types (gb200-nvl72) fits any position (row power, weight or floor "
        "limit, liquid loop, or cable reach)"
    ]


def test_aggregated_equals_per_position() -> None:
    """The per-position (binary) formulation reaches the same optimum on dr-hall."""
    s = load_scenario(DATASETS / "dr-hall.yaml")
    assert plan_scenario(s, aggregate=False).kpis.gpus == plan_scenario(s).kpis.gpus == 864


def test_default_scenario_optimum() -> None:
    """small-hall: 3 GB200 racks (216 GPUs) in the liquid rows and 54 GT racks in the air rows,
    1,080 GPUs: CZ-AIR's 1,250 kW less two network racks (24 kW) and the NVL72 air share
    (3 × 132 × 0.15 = 59.4 kW) leaves 1,166.6 kW = 54.5 GT racks of 21.4 kW. The MILP beats
    first-fit, which also misses the NVL72 demand."""
    from planner.plan.first_fit import greedy_plan

    s = load_scenario(DATASETS / "small-hall.yaml")
    plan = plan_scenario(s)
    assert plan.kpis.gpus == 1080
    g = greedy_plan(s)
    assert g.kpis.gpus < plan.kpis.gpus
    assert g.notes == ["demand not met: cluster nvl-infer: 0 GPUs placed, at least 144 wanted"]


ONE_FEED = [{"id": "F", "capacity_kw": 100}]  # 80 kW usable
ONE_ROW = [{"id": "R1", "positions": 10, "feeds": ["F"]}]


@pytest.mark.parametrize("solver", SOLVERS)
def test_gpu_power_cap(solver: str) -> None:
    """GPUs capped at 350 W: server 4.6 + 8 × 0.35 = 7.4 kW, rack 2 × 7.4 + 1.0 = 15.8 kW;
    ⌊80 / 15.8⌋ = 5 racks = 80 GPUs (3 racks at full TDP)."""
    s = tiny_scenario(ONE_ROW, ONE_FEED, max_cluster(), gpu_power_cap_w=350)
    plan = solved(s, solver)
    assert plan.kpis.gpus == 80
    assert plan.kpis.max_kw_per_rack == pytest.approx(15.8)


@pytest.mark.parametrize("solver", SOLVERS)
def test_power_budget_ratio(solver: str) -> None:
    """Racks planned at 82 % of 21.4 kW = 17.548 kW: ⌊80 / 17.548⌋ = 4 racks = 64 GPUs."""
    s = tiny_scenario(ONE_ROW, ONE_FEED, max_cluster(), power_budget_ratio=0.82)
    assert solved(s, solver).kpis.gpus == 64


FAST_MANY = [
    {
        "id": "fast",
        "servers_per_rack": 1,
        "gpus_per_server": 8,
        "gpu_power_w": 1000,
        "non_gpu_power_kw_per_server": 22,
        "weight_kg": 300,
        "capex_usd": 1,
        "tflops_bf16_per_gpu": 2000,
    },
    {
        "id": "many",
        "servers_per_rack": 2,
        "gpus_per_server": 8,
        "gpu_power_w": 700,
        "non_gpu_power_kw_per_server": 4.4,
        "weight_kg": 300,
        "capex_usd": 1,
        "tflops_bf16_per_gpu": 500,
    },
]


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize(
    ("objective", "gpus", "pflops"),
    [
        pytest.param("max_gpus", 48, 24.0, id="max_gpus"),  # 3 × many (60 kW): 48 GPUs, 3 × 8 PFLOPS
        pytest.param("max_pflops", 16, 32.0, id="max_pflops"),  # 2 × fast (60 kW): 2 × 16 PFLOPS
    ],
)
def test_objectives(solver: str, objective: str, gpus: int, pflops: float) -> None:
    """fast: 30 kW, 8 GPUs × 2,000 TFLOPS; many: 20 kW, 16 GPUs × 500 TFLOPS; 60 kW usable (75 kW feed)."""
    s = tiny_scenario(
        ONE_ROW,
        [{"id": "F", "capacity_kw": 75}],
        max_cluster(["fast", "many"]),
        rack_types=FAST_MANY,
        objective=objective,
    )
    plan = solved(s, solver)
    assert (plan.kpis.gpus, plan.kpis.pflops_bf16) == (gpus, pflops)


def test_exact_demand_not_a_sum_of_rack_sizes() -> None:
    """100 GPUs from 16-GPU racks cannot be exact."""
    s = tiny_scenario(
        ONE_ROW,
        [{"id": "F", "capacity_kw": 1000}],
        [{"id": "c1", "demand": "exact", "gpus": 100, "rack_types": [GT]}],
    )
    assert plan_scenario(s).status == "infeasible"
    assert [f.text for f in explain_infeasible(s).findings] == [
        "cluster c1: exactly 100 GPUs is no sum of its racks' GPU counts (16)"
    ]


def test_time_limited_solve_reports_gap_honestly() -> None:
    """Per-position meta-24k (13k binaries) under a 2 s limit: HiGHS stops early. Whatever it
    reaches, the status must match the numbers: feasible ⇒ verified plan, bound ≥ objective and a
    gap above the requested one; time_limit ⇒ no racks; optimal ⇒ gap within the request."""
    s = load_scenario(DATASETS / "meta-24k-building.yaml")
    s = s.model_copy(update={"solver": s.solver.model_copy(update={"rel_gap": 0.0})})
    plan = plan_scenario(s, time_limit_s=2, aggregate=False, tie_breaks=False, warm_start=False)
    if plan.status == "feasible":
        assert verify(plan, s).ok
        assert plan.bound >= plan.objective_value
        assert plan.gap > 0
        assert plan.kpis.gpus == plan.objective_value
    elif plan.status == "time_limit":
        assert plan.racks == []
    else:
        assert plan.status == "optimal"
        assert plan.gap == 0


def test_greedy_start_keeps_time_limited_solve_at_least_greedy() -> None:
    """The same 2 s per-position solve, started from first-fit (which places all 24,576 GPUs
    here): the solver keeps that incumbent, so the answer is never worse than first-fit."""
    from planner.plan.first_fit import greedy_plan

    s = load_scenario(DATASETS / "meta-24k-building.yaml")
    plan = plan_scenario(s, time_limit_s=2, aggregate=False, tie_breaks=False)
    assert plan.kpis.gpus >= greedy_plan(s).kpis.gpus == 24576
    assert verify(plan, s).ok


def test_with_too_little_time_left_to_solve_the_model_is_not_built() -> None:
    """A 0.4 s limit: first-fit (which places all 24,576 GPUs of meta-24k-building, its whole demand;
    not cut by the clock in a run with a work limit, so the case holds on a loaded machine) leaves
    under MIN_SOLVE_S after the figures' reserve, so no build starts (a gigawatt build would only
    eat the figures' time); first-fit's plan stands, verified once, and the demand bound proves it
    optimal."""
    from planner.clock import Deadline

    s = load_scenario(DATASETS / "meta-24k-building.yaml")
    s = s.model_copy(update={"solver": s.solver.model_copy(update={"work_limit": 10**6})})  # first-fit uncut
    plan = plan_scenario(s, deadline=Deadline(0.4))
    assert (plan.status, plan.objective_value, plan.bound) == ("optimal", 24576, 24576)
    assert plan.notes[-1] == (
        "no time left to build and solve the model; returning the first-fit plan, which meets every demand"
    )
    assert "build" not in plan.stage_times_s
    assert verify(plan, s).ok


def test_infeasible_one_pod_job_explained_with_space_and_ports() -> None:
    """2,304 GPUs (144 GT racks) in one pod of small-hall: a pod has at most 2,048 ports and
    64 racks, so the explanation must name the pod limits; the relaxed model may exceed
    positions, which shows up as space shortfalls per row, never as 'no assignment'."""
    data = {
        "name": "inf2",
        "site": "small-hall.site.yaml",
        "clusters": [{"id": "big-job", "demand": "exact", "gpus": 2304, "rack_types": [GT], "max_hops": 3}],
    }
    from planner.input.loader import scenario_from_data

    s = scenario_from_data(data, DATASETS)
    ex = explain_infeasible(s)
    lines = [f.text for f in ex.findings]
    assert any(
        t.startswith("pod GPUs POD-")
        and "short by 256 GPUs for big-job (limit 2,048 GPUs, needs 2,304 GPUs)" in t
        for t in lines
    ), lines
    assert any(t.startswith("pod racks POD-") and "needs 144 racks" in t for t in lines), lines


def test_exact_jobs_that_must_be_packed_start_from_the_repaired_first_fit() -> None:
    """meta-24k-binpack: 8 × 1,024 then 8 × 2,048 exact one-pod jobs on 8 pods of 3,072 ports.
    First-fit in scenario order fills pods with small jobs and strands large ones; largest first
    packs one large and one small job per pod (2,048 + 1,024 = 3,072): all 24,576 GPUs."""
    from planner.plan.first_fit import greedy_meets_demands, greedy_racks, start_racks

    s = load_scenario(DATASETS / "meta-24k-binpack.yaml")
    assert not greedy_meets_demands(s, greedy_racks(s))
    racks, how = start_racks(s)
    assert how == "first-fit, largest demands first"
    assert greedy_meets_demands(s, racks)
    plan = plan_scenario(s)
    assert (plan.status, plan.kpis.gpus) == ("optimal", 24576)
    assert verify(plan, s).ok


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_sixty_four_exact_one_pod_jobs_of_five_sizes_pack_32_pods_proven_optimal(solver: str) -> None:
    """Four Meta-shaped buildings: 32 pods of 3,072 GPU ports (192 Grand Teton racks each). 64
    exact one-pod jobs, smallest first: 8 × 512, 10 × 1,024, 28 × 1,536, 10 × 2,048, 8 × 2,560 =
    98,304 GPUs, every port. They fit only as pairs that sum to 3,072 (2,560 + 512, 2,048 + 1,024,
    1,536 + 1,536), so every pod holds exactly 3,072. The demands cap the objective at 98,304 and
    the repaired first-fit (largest first) reaches it: optimal, proven by that bound, no search."""
    from planner.input.generate import BuildingSpec, SiteSpec, generate_site

    site = generate_site(
        SiteSpec(
            id="four",
            buildings=[
                BuildingSpec(
                    count=4,
                    halls=2,
                    pods_per_hall=4,
                    rows_per_pod=12,
                    positions_per_row=17,
                    pod_max_gpus=3072,
                    pod_max_racks=200,
                )
            ],
        )
    )
    jobs = [(512, 8), (1024, 10), (1536, 28), (2048, 10), (2560, 8)]
    clusters = [
        {
            "id": f"j{size}-{i}",
            "demand": "exact",
            "gpus": size,
            "rack_types": ["grand-teton-h100"],
            "max_hops": 3,
        }
        for size, n in jobs
        for i in range(n)
    ]
    s = scenario_from_data(
        {
            "name": "pack64",
            "site": site.model_dump(mode="json"),
            "clusters": clusters,
            "solver": {"name": solver, "time_limit_s": 60, "rel_gap": 0.0},
        }
    )
    plan = plan_scenario(s, tie_breaks=False)
    assert (plan.status, plan.optimality, plan.kpis.gpus, plan.bound, plan.gap) == (
        "optimal",
        "proven",
        98_304,
        98_304,
        0.0,
    )
    assert "the first-fit start meets the sum of the demands (98,304): optimal without a search" in plan.notes
    assert verify(plan, s).ok
    pod_of = {row.id: row.pod for b in site.buildings for h in b.halls for row in h.rows}
    per_pod: dict[str, int] = {}
    for r in plan.racks:
        if r.cluster:
            per_pod[pod_of[r.row]] = per_pod.get(pod_of[r.row], 0) + 16
    assert sorted(per_pod.values()) == [3072] * 32


def _power_short_pods(a_gpus: int, b_gpus: int, kw_per_position: float):
    """One building, two pods of 4 rows × 10 positions powered for ``kw_per_position`` each (a Grand
    Teton rack draws 21.4 kW, so power, not positions, limits a pod), and two exact one-pod jobs."""
    from planner.input.generate import BuildingSpec, SiteSpec, generate_site
    from planner.input.loader import scenario_from_data

    spec = BuildingSpec(
        count=1,
        halls=1,
        pods_per_hall=2,
        rows_per_pod=4,
        positions_per_row=10,
        design_kw_per_position=kw_per_position,
    )
    site = generate_site(SiteSpec(id="short", buildings=[spec]))
    jobs = [
        {"id": c, "demand": "exact", "gpus": g, "rack_types": [GT], "max_hops": 3}
        for c, g in (("a", a_gpus), ("b", b_gpus))
    ]
    return scenario_from_data(
        {"name": "short", "site": site.model_dump(mode="json"), "clusters": jobs, "network_allowance": False}
    )


def _pods_of(racks, cluster: str) -> set[str]:
    return {r.row.rsplit("-", 1)[0] for r in racks if r.cluster == cluster}


def test_a_job_its_first_pod_cannot_power_whole_moves_to_the_next() -> None:
    """Pods powered for 12 kW a position hold 20 Grand Teton racks each (two jobs of 320 GPUs fill
    one pod each). Jobs of 256 GPUs (16 racks) each: plain first-fit homes b in pod 1, which has
    positions for it but power for 20 − 16 = 4 racks, and misses b; with ``retry`` b is taken out
    of pod 1 and placed whole in pod 2, and that is the start the solver is given."""
    from planner.plan.first_fit import greedy_racks, missed_demands, start_racks

    full = greedy_racks(_power_short_pods(320, 320, 12.0))
    assert [len([r for r in full if r.cluster == c]) for c in "ab"] == [20, 20]
    s = _power_short_pods(256, 256, 12.0)
    plain = greedy_racks(s)
    assert missed_demands(s, plain) == {"b"}
    assert len([r for r in plain if r.cluster == "b"]) == 4
    assert _pods_of(plain, "a") == _pods_of(plain, "b") == {"B1-H1-P1"}
    moved = greedy_racks(s, retry=True)
    assert missed_demands(s, moved) == set()
    assert (_pods_of(moved, "a"), _pods_of(moved, "b")) == ({"B1-H1-P1"}, {"B1-H1-P2"})
    assert len(moved) == 32
    racks, how = start_racks(s)
    assert how == "first-fit, largest demands first, a job its first pod cannot hold whole moved to the next"
    assert start_racks(s, moved_only=True) == (racks, how)  # the same pass, made alone
    plan = plan_scenario(s)
    assert (plan.status, plan.kpis.gpus) == ("optimal", 512)
    assert verify(plan, s).ok


def test_a_job_no_pod_can_hold_whole_stands_nowhere_when_moved() -> None:
    """Pods powered for 10.7 kW a position hold half their 40 positions' racks at most (under 20):
    a (256 GPUs, 16 racks) fits pod 1, b (320 GPUs, 20 racks) fits no pod whole. Moved from home to
    home, none of b stands (a part of an exact job is no plan); a stands whole in pod 1."""
    from planner.plan.first_fit import greedy_racks, missed_demands

    s = _power_short_pods(256, 320, 10.7)
    moved = greedy_racks(s, retry=True)
    assert missed_demands(s, moved) == {"b"}
    assert [r for r in moved if r.cluster == "b"] == []
    assert len(moved) == 16
    assert _pods_of(moved, "a") == {"B1-H1-P1"}
