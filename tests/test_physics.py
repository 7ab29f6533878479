"""The physics a datacenter engineer checks, each on a hand-solvable site: optimum and verifier.

Tiny sites come from tests/conftest.py: one hall, rows R1…, a pod P whose network rack stands at
position 0 of row NET (fed by the last power node listed), air zone AIR of 10,000 kW."""

from __future__ import annotations

import pytest

from planner.enums import NodeKind
from planner.errors import InputError
from planner.input.site_index import index_site, place
from planner.plan.pipeline import plan_scenario
from planner.schema import PowerNode
from planner.verifier import verify
from tests.conftest import tiny_scenario
from tests.test_optimize import GT, SOLVERS, max_cluster, solved
from tests.test_verify import make_plan

DGX, H200, STORE = "dgx-h100-4", "dgx-h200-4", "storage-rack"


def _violations(s, spots) -> list[str]:
    return [str(v) for v in verify(make_plan(s, spots), s).violations]


# ---------------------------------------------------------------- network racks


def network_site(feed_kw: float = 60, air_kw: float = 10_000, **extra):
    """R1 (4 positions) and NET share feed F; the pod's 12 kW network rack stands at NET/0."""
    return tiny_scenario(
        [{"id": "R1", "positions": 4, "feeds": ["F"]}],
        [{"id": "F", "capacity_kw": feed_kw}],
        max_cluster(),
        zones=[{"id": "AIR", "medium": "air", "units": 1, "unit_capacity_kw": air_kw}],
        pods=[
            {
                "id": "P",
                "network_rack": {"row": "NET", "position": 0},
                "max_gpus": 1000,
                "network_rack_type": "network-rack",
            }
        ],
        **extra,
    )


@pytest.mark.parametrize("solver", SOLVERS)
def test_network_rack_draws_power(solver: str) -> None:
    """F: 60 kW × 0.8 = 48 kW usable; the network rack takes 12 kW, leaving 36 kW: ⌊36 / 21.4⌋ = 1 rack
    (2 racks without it: 42.8 ≤ 48)."""
    s = network_site()
    assert solved(s, solver).kpis.gpus == 16
    assert _violations(s, [("R1", 0, GT, "c1"), ("R1", 1, GT, "c1")]) == [
        "F: normal load 54.8 kW exceeds 48 kW (derate 0.8 × 60 kW)"
    ]


@pytest.mark.parametrize("solver", SOLVERS)
def test_network_rack_makes_heat(solver: str) -> None:
    """Plenty of power; the air zone holds 50 kW, 12 of them the network rack's: ⌊38 / 21.4⌋ = 1 rack."""
    s = network_site(feed_kw=10_000, air_kw=50)
    plan = solved(s, solver)
    assert (plan.kpis.gpus, plan.kpis.network_kw, plan.kpis.it_kw) == (16, 12, 33.4)
    assert _violations(s, [("R1", 0, GT, "c1"), ("R1", 1, GT, "c1")]) == [
        "AIR: air heat 54.8 kW exceeds 50 kW (1 of 1 units × 50 kW)"
    ]


# ---------------------------------------------------------------- storage racks


@pytest.mark.parametrize("solver", SOLVERS)
def test_storage_racks_take_power_and_positions(solver: str) -> None:
    """F: 100 kW × 0.8 = 80 kW; two 15 kW storage racks leave 50 kW: ⌊50 / 21.4⌋ = 2 GT racks
    (3 without storage). The storage racks sit in the cluster's pod."""
    s = tiny_scenario(
        [{"id": "R1", "positions": 6, "feeds": ["F"]}],
        [{"id": "F", "capacity_kw": 100}],
        max_cluster(storage_racks=2, max_hops=3),
    )
    plan = solved(s, solver)
    kinds = sorted(r.rack_type for r in plan.racks)
    assert kinds == [GT, GT, STORE, STORE]
    assert (plan.kpis.gpus, plan.kpis.storage_pb, plan.kpis.storage_write_gb_per_s) == (32, 4.0, 200.0)
    assert _violations(s, [("R1", 0, GT, "c1")]) == ["cluster c1: 0 storage racks placed, 2 wanted"]


def test_storage_racks_stay_in_the_clusters_pod() -> None:
    """Two pods; the cluster is pod-scoped (max_hops 3): storage racks in the other pod break the hop
    budget."""
    pods = [
        {"id": "P", "network_rack": {"row": "NET", "position": 0}, "max_gpus": 1000},
        {"id": "Q", "network_rack": {"row": "R2", "position": 3}, "max_gpus": 1000},
    ]
    s = tiny_scenario(
        [
            {"id": "R1", "positions": 4, "feeds": ["F"]},
            {"id": "R2", "positions": 4, "feeds": ["F"], "pod": "Q", "origin_y_m": 2.4},
        ],
        [{"id": "F", "capacity_kw": 1000}],
        max_cluster(storage_racks=1, max_hops=3, gpus=32),
        pods=pods,
    )
    plan = plan_scenario(s)
    assert verify(plan, s).ok
    assert len({index_site(s.site).rows[r.row].row.pod for r in plan.racks}) == 1
    assert _violations(s, [("R1", 0, GT, "c1"), ("R2", 0, STORE, "c1")]) == [
        "cluster c1: its racks span 2 pods: 5 hops between them, max_hops is 3"
    ]


# ---------------------------------------------------------------- derate by kind


@pytest.mark.parametrize(
    ("kind", "derate", "usable"),
    [
        ("ups", None, 100.0),
        ("transformer", None, 100.0),
        ("utility", None, 100.0),
        ("busway", None, 80.0),
        ("pdu", None, 80.0),
        ("breaker", None, 80.0),
        ("other", None, 80.0),
        ("ups", 0.8, 80.0),
        ("busway", 0.9, 90.0),
    ],
)
def test_derate_default_depends_on_kind(kind: str, derate: float | None, usable: float) -> None:
    node = PowerNode(id="N", kind=NodeKind(kind), capacity_kw=100, derate=derate)
    assert node.usable_kw == pytest.approx(usable)


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_ups_at_its_rating(solver: str) -> None:
    """A 64.2 kW UPS with no derate stated carries three 21.4 kW racks (a busway of that rating: two)."""
    for kind, gpus in (("ups", 48), ("busway", 32)):
        s = tiny_scenario(
            [{"id": "R1", "positions": 4, "feeds": ["F"]}],
            [{"id": "F", "kind": kind, "capacity_kw": 64.2}],
            max_cluster(),
        )
        assert solved(s, solver).kpis.gpus == gpus


# ---------------------------------------------------------------- floor loading


def floor_site(rating: float | None, types=(GT, DGX)):
    s = tiny_scenario(
        [{"id": "R1", "positions": 2, "feeds": ["F"], "max_rack_power_kw": 50}],
        [{"id": "F", "capacity_kw": 1000}],
        max_cluster(types=types),
    )
    if rating is None:
        return s
    data = s.model_dump(mode="json")
    data["site"]["buildings"][0]["halls"][0]["floor_rating_kg_per_m2"] = rating
    return type(s).model_validate(data)


@pytest.mark.parametrize("solver", SOLVERS)
def test_floor_rating_keeps_heavy_racks_off_a_raised_floor(solver: str) -> None:
    """Each position takes 0.6 m × 2.4 m = 1.44 m². A Grand Teton rack (381 kg) loads 264.6 kg/m², a
    DGX 4-per-rack (672 kg) 466.7 kg/m². On a 340 kg/m² floor (IBM floor-loading guide) only GT racks
    fit: 2 × 16 GPUs; on a slab (no rating) two DGX racks: 2 × 32."""
    assert solved(floor_site(None), solver).kpis.gpus == 64
    assert solved(floor_site(340), solver).kpis.gpus == 32
    s = floor_site(340)
    assert _violations(s, [("R1", 0, DGX, "c1")]) == [
        "racks[0] (R1/0): dgx-h100-4 loads the floor with 466.667 kg/m² (672 kg on 0.6 × 2.4 m), hall H1 "
        "is rated 340 kg/m²"
    ]


# ---------------------------------------------------------------- HBM


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_cluster_that_needs_141_gb_gets_h200(solver: str) -> None:
    s = tiny_scenario(
        [{"id": "R1", "positions": 2, "feeds": ["F"], "max_rack_power_kw": 50}],
        [{"id": "F", "capacity_kw": 1000}],
        max_cluster(types=(DGX, H200), min_hbm_gb_per_gpu=141),
    )
    plan = solved(s, solver)
    assert {r.rack_type for r in plan.racks} == {H200}
    assert (plan.kpis.gpus, plan.kpis.hbm_gb_per_gpu, plan.kpis.hbm_tb) == (64, 141, 9.024)
    assert _violations(s, [("R1", 0, DGX, "c1")]) == [
        "racks[0] (R1/0): dgx-h100-4 has 80 GB HBM per GPU; cluster 'c1' needs 141 GB"
    ]


# ---------------------------------------------------------------- nameplate or planning power against the row
# limit


@pytest.mark.parametrize("solver", SOLVERS)
def test_row_limit_checks_nameplate_unless_planning_on_measured_peak(solver: str) -> None:
    """A 20 kW row limit; GT is 21.4 kW nameplate, 17.548 kW at a 0.82 budget ratio. The ratio alone
    does not let it into the row (the breaker sees nameplate); rack_limit_on: planning does."""
    rows, feeds = (
        [{"id": "R1", "positions": 2, "feeds": ["F"], "max_rack_power_kw": 20}],
        [{"id": "F", "capacity_kw": 1000}],
    )
    s = tiny_scenario(rows, feeds, max_cluster(), power_budget_ratio=0.82)
    assert solved(s, solver).kpis.gpus == 0
    s = tiny_scenario(rows, feeds, max_cluster(), power_budget_ratio=0.82, rack_limit_on="planning")
    assert solved(s, solver).kpis.gpus == 32
    s = tiny_scenario(
        rows, feeds, max_cluster(), gpu_power_cap_w=600
    )  # 2 x (4.6 + 8 x 0.6) + 1 = 19.8 kW nameplate with the cap
    assert solved(s, solver).kpis.gpus == 32


# ---------------------------------------------------------------- names


def test_ids_that_differ_only_in_punctuation_do_not_collide() -> None:
    """job-a and job_a (and pods P-1 / P_1) are different elements with different variable names."""
    pods = [
        {"id": "P-1", "network_rack": {"row": "NET", "position": 0}, "max_gpus": 1000},
        {"id": "P_1", "network_rack": {"row": "R2", "position": 3}, "max_gpus": 1000},
    ]
    clusters = [
        {"id": "job-a", "demand": "exact", "gpus": 32, "rack_types": [GT], "max_hops": 3},
        {"id": "job_a", "demand": "exact", "gpus": 48, "rack_types": [GT], "max_hops": 3},
    ]
    s = tiny_scenario(
        [
            {"id": "R1", "positions": 4, "feeds": ["F"], "pod": "P-1"},
            {"id": "R2", "positions": 4, "feeds": ["F"], "pod": "P_1", "origin_y_m": 2.4},
        ],
        [{"id": "F", "capacity_kw": 1000}],
        clusters,
        pods=pods,
    )
    plan = plan_scenario(s)
    assert verify(plan, s).ok
    by = {c: sum(16 for r in plan.racks if r.cluster == c) for c in ("job-a", "job_a")}
    assert by == {"job-a": 32, "job_a": 48}


def test_a_node_with_two_parents_is_refused_with_advice() -> None:
    with pytest.raises(InputError) as err:
        tiny_scenario(
            [{"id": "R1", "positions": 2, "feeds": ["F"]}],
            [{"id": "F", "capacity_kw": 10, "parent": ["A", "B"]}],
            max_cluster(),
        )
    assert "a power node has one parent" in err.value.lines()[0]


def test_place_helper_matches_verifier_geometry() -> None:
    s = network_site()
    ix = index_site(s.site)
    rack = place(ix, "R1", 2, s.catalog.by_id()[GT], "c1")
    assert verify(make_plan(s, [("R1", 2, GT, "c1")]), s).ok
    assert (rack.x_m, rack.cable_length_m) == (1.2, 6.6)
