"""Fabrics sized from topology (§13): hand-counted fat trees, links by where they run, optics per
transceiver, the SuperPOD table, and network racks standing at network positions in the optimiser."""

from __future__ import annotations

from typing import Any

import pytest

from planner.errors import InputError
from planner.input.loader import scenario_from_data
from planner.rules.fabric_sizing import max_endpoints, ports, size
from planner.schema import PlacedRack, Scenario, SwitchSupply
from tests.conftest import small_hall_data

GT = "grand-teton-h100"
DGX = "dgx-h100-4"


def scenario(designs: list[dict]) -> Scenario:
    data = small_hall_data()
    data["fabrics"] = designs
    return scenario_from_data(data)


def racks(
    n: int, link_class: str = "dac", start: int = 0, row: str = "R01", rack_type: str = GT
) -> list[PlacedRack]:
    """n racks of cluster c in a row of the small hall (R01-R04: pod POD-A, R05-R08: POD-B)."""
    return [
        PlacedRack(
            building="B1",
            hall="H1",
            row=row,
            position=start + i,
            x_m=0,
            y_m=0,
            rack_type=rack_type,
            cluster="c",
            link_class=link_class,
            cable_length_m=1.0,
        )
        for i in range(n)
    ]


IB2 = {
    "id": "ib2",
    "kind": "infiniband",
    "tiers": 2,
    "switches": ["qm9700", "qm9700"],
    "oversubscription": [1.0],
}
IB3 = {
    "id": "ib3",
    "kind": "infiniband",
    "tiers": 3,
    "switches": ["qm9700", "qm9700", "qm9700"],
    "oversubscription": [1.0, 1.0],
}
META = {
    "id": "meta-roce",
    "kind": "roce",
    "tiers": 3,
    "switches": ["minipack2", "arista-7800", "arista-7800"],
    "oversubscription": [0.5, 7.0],
    "leaf_in_rack": True,
}


def test_two_tier_non_blocking_tree_of_64_port_switches() -> None:
    """2,048 endpoints in one pod on 64-port switches: 32 down + 32 up per leaf → 64 leaves (in the
    pod's network rows); 64 × 32 = 2,048 uplinks on 64-port spines → 32 spines: 96 switches. Links:
    2,048 GPU-to-leaf at the racks' class (DAC here) + 2,048 leaf-to-spine within the network rows
    (the shortest class, DAC) = 4,096 DAC, no transceivers; largest build k²/2 = 2,048."""
    s = scenario([IB2])
    z = size(s, s.fabrics[0], racks(128))
    assert (z.endpoints, z.switches, z.max_endpoints, z.leaves_per_pod) == (
        2048,
        [64, 32],
        2048,
        {"POD-A": 64},
    )
    assert (z.links, z.optics) == ({"dac": 4096}, 0)
    assert z.capex_usd == 96 * 43_000 + 4096 * 150
    assert z.kw == pytest.approx(96 * 1.1)
    assert z.network_racks == 3  # 96 U in 42 U racks
    assert z.max_hops == 3


def test_three_tier_tree() -> None:
    """4,096 endpoints, three tiers of 64-port switches: 128 leaves, 128 × 32 / 32 = 128 spines,
    128 × 32 / 64 = 64 cores = 320 switches; largest build k³/4 = 65,536; 5 hops across the core.
    Links: 4,096 GPU + 4,096 leaf-spine DAC, 4,096 spine-core single-mode (8,192 transceivers)."""
    s = scenario([IB3])
    z = size(s, s.fabrics[0], racks(256))
    assert (z.switches, z.max_endpoints, z.max_hops) == ([128, 128, 64], 65_536, 5)
    assert (z.links, z.optics) == ({"dac": 8192, "smf": 4096}, 8192)
    assert max_endpoints(s.fabrics[0], s.catalog.switch_by_id()) == 64**3 // 4


def test_oversubscribed_leaf_tier() -> None:
    """3:1 at the leaves: ⌊64 · 3/4⌋ = 48 down, 16 up; 2,048 endpoints → ⌈2048/48⌉ = 43 leaves,
    688 uplinks → ⌈688/64⌉ = 11 spines: 54 switches; largest build 48 × 64 = 3,072."""
    s = scenario([{**IB2, "oversubscription": [3.0]}])
    d = s.fabrics[0]
    assert (ports(d, s.catalog.switch_by_id()).down[0], ports(d, s.catalog.switch_by_id()).up[0]) == (48, 16)
    z = size(s, d, racks(128))
    assert (z.switches, z.max_endpoints) == ([43, 11], 3072)


def test_leaves_are_counted_per_pod() -> None:
    """3 racks (48 endpoints) in each of two pods: ⌈48/32⌉ = 2 leaves in each pod's network rows
    (one block of 3 would serve both only if a leaf could stand in two pods); 4 × 32 / 64 = 2
    spines. Rail-optimised with 8 GPUs per server: each pod's leaves round up to 8 (one per rail),
    16 × 32 / 64 = 8 spines."""
    s = scenario([IB2, {**IB2, "id": "rails", "rail_optimized": True}])
    mix = racks(3) + racks(3, row="R05")
    z = size(s, s.fabrics[0], mix)
    assert (z.leaves_per_pod, z.switches, z.links) == ({"POD-A": 2, "POD-B": 2}, [4, 2], {"dac": 96 + 128})
    r = size(s, s.fabrics[1], mix)
    assert (r.leaves_per_pod, r.switches) == ({"POD-A": 8, "POD-B": 8}, [16, 8])


def test_in_rack_copper_and_optics_per_transceiver_on_two_racks() -> None:
    """Meta RoCE, leaves in the racks (1:2 under-subscribed: 16 down, 32 up), one rack at a DAC
    position and one at a multimode position. GPU to leaf: 2 × 16 in-rack DAC (no cable, no
    transceiver). Uplinks: 32 DAC + 32 multimode; ⌈64 / ⌊576 · 7/8⌋⌉ = 1 cluster switch with 72
    single-mode uplinks → ⌈72/576⌉ = 1 core. Transceivers: 2 per optical link, 2 · 32 + 2 · 72 = 208;
    capex 2 chassis + 64 DAC + 32 MMF + 72 SMF; kW 2 × 16 + (32 + 72) × 24 W."""
    s = scenario([META])
    z = size(s, s.fabrics[0], racks(1, "dac") + racks(1, "mmf", start=1))
    assert z.switches == [2, 1, 1]
    assert z.links == {"dac": 64, "mmf": 32, "smf": 72}
    assert z.optics == 208
    assert z.capex_usd == 2 * 1_500_000 + 64 * 150 + 32 * 1400 + 72 * 2400
    assert z.kw == pytest.approx(32 + 104 * 0.024)
    assert z.max_endpoints == 16 * 504 * 576


@pytest.mark.parametrize(
    ("units", "leaves", "spines_now", "spines_largest"),
    [(1, 8, 4, 4), (2, 16, 8, 8), (3, 24, 12, 16), (4, 32, 16, 16)],
)
def test_superpod_h100_table(units: int, leaves: int, spines_now: int, spines_largest: int) -> None:
    """NVIDIA DGX SuperPOD H100 RA, compute fabric by scalable units (32 DGX = 256 GPUs each, 8 racks
    of 4): leaf/spine 8/4, 16/8, 24/16, 32/16. Leaves 256·n / 32; spines for the largest build
    count the leaves rounded up to a power of two, × 32 uplinks / 64 ports (3 SU: 32 × 32 / 64 = 16,
    where sizing for the current cluster gives 24 × 32 / 64 = 12)."""
    ra = {**IB2, "id": "spod", "rail_optimized": True, "spines_for": "largest_build"}
    s = scenario([ra, {**ra, "id": "now", "spines_for": "cluster"}])
    mix = racks(8 * units, rack_type=DGX)
    assert size(s, s.fabrics[0], mix).switches == [leaves, spines_largest]
    assert size(s, s.fabrics[1], mix).switches == [leaves, spines_now]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"switches": ["qm9700", "qm9700"]},
            "fabrics[0]: switches: 2 given, a 3-tier design names one per tier",
        ),
        (
            {"oversubscription": [1.0]},
            "fabrics[0]: oversubscription: 1 given, a 3-tier design states 2 (every tier below the top)",
        ),
        (
            {"switches": ["qm9700", "qm9700", "nope"]},
            "fabrics[0].switches[2]: unknown switch 'nope' (known: arista-7800, bag-chassis, minipack2, "
            "minipack3, qm9700, sn5600)",
        ),
        (
            {"switches": ["qm9700", "qm9700", "sn5600"]},
            "fabrics[0].switches[2]: 'sn5600' is a roce switch; design 'ib3' is infiniband",
        ),
    ],
)
def test_design_errors_name_the_field(change: dict, message: str) -> None:
    from planner.errors import InputError

    with pytest.raises(InputError) as err:
        scenario([{**IB3, **change}])
    assert err.value.lines() == [message]


def test_cluster_must_name_a_known_design() -> None:
    from planner.errors import InputError

    data = small_hall_data()
    data["fabrics"] = [IB2]
    data["clusters"][0]["fabrics"] = ["ib9"]
    with pytest.raises(InputError) as err:
        scenario_from_data(data)
    assert err.value.lines() == ["clusters[0].fabrics[0]: unknown fabric design 'ib9' (known: ib2)"]


# ---------------------------------------------------------------- in the optimiser

TINY_SWITCH = {
    "id": "tiny8",
    "kind": "infiniband",
    "ports": 8,
    "port_gbps": 400,
    "power_w": 100,
    "price_usd": 1000,
    "height_u": 1,
}
SN2 = {"id": "eth2", "kind": "roce", "tiers": 2, "switches": ["sn5600", "sn5600"], "oversubscription": [1.0]}
TINY = {
    "id": "tiny2",
    "kind": "infiniband",
    "tiers": 2,
    "switches": ["tiny8", "tiny8"],
    "oversubscription": [1.0],
}


def net_site(
    pods: list[dict[str, Any]], designs: list[dict], cluster: dict, objective: str = "max_gpus"
) -> Scenario:
    """One hall; per pod a GPU row (``gpu`` positions + 1 for the pod's network-rack spot at the
    end, feed of 1 MW) and its network rows ``net``: (row id, feed kW before the 0.8 derate, rack kW
    limit, positions). Every link class costs $100 and draws nothing, and DAC reaches 100 m: every
    link is DAC, so the fabric's kW is its switches'."""
    rows, nodes = [], []
    for k, p in enumerate(pods):
        y = 10.0 * k
        rows.append(
            {
                "id": f"R{k + 1}",
                "positions": p["gpu"] + 1,
                "origin_y_m": y,
                "feeds": [f"F{k + 1}"],
                "max_rack_power_kw": 30,
                "air_zone": "AIR",
                "pod": p["id"],
            }
        )
        nodes.append({"id": f"F{k + 1}", "capacity_kw": 1000})
        for j, (rid, feed_kw, rack_kw, positions) in enumerate(p["net"]):
            rows.append(
                {
                    "id": rid,
                    "positions": positions,
                    "origin_y_m": y + 2.4 * (j + 1),
                    "feeds": [f"{rid}-F"],
                    "max_rack_power_kw": rack_kw,
                    "air_zone": "AIR",
                    "pod": p["id"],
                    "network": "pod",
                }
            )
            nodes.append({"id": f"{rid}-F", "capacity_kw": feed_kw})
    hall = {
        "id": "H1",
        "floor_area_m2": 500,
        "power_nodes": nodes,
        "cooling_zones": [{"id": "AIR", "medium": "air", "units": 1, "unit_capacity_kw": 10_000}],
        "pods": [
            {
                "id": p["id"],
                "network_rack": {"row": f"R{k + 1}", "position": p["gpu"]},
                "max_gpus": p.get("max_gpus", 100_000),
                "network_rack_type": None,
            }
            for k, p in enumerate(pods)
        ],
        "rows": rows,
    }
    classes = [
        {"id": c, "max_length_m": 100 * (k + 1), "cost_usd_per_link": 100}
        for k, c in enumerate(["dac", "aec", "mmf", "smf"])
    ]
    site = {"id": "net", "fabric": {"link_classes": classes}, "buildings": [{"id": "B1", "halls": [hall]}]}
    return scenario_from_data(
        {
            "name": "net",
            "site": site,
            "clusters": [{"id": "c1", "rack_types": [GT], **cluster}],
            "fabrics": designs,
            "objective": objective,
            "catalog": {"switches": [TINY_SWITCH]},
        }
    )


TWO_PODS = [
    {"id": "P1", "gpu": 6, "max_gpus": 64, "net": [("N1a", 2.5, 10, 2), ("N1b", 2.5, 10, 2)]},
    {"id": "P2", "gpu": 6, "max_gpus": 64, "net": [("N2", 10, 10, 3)]},
]


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_network_racks_stand_in_network_rows_and_split_a_pods_power(solver: str) -> None:
    """Two pods of 64 GPUs (4 racks each) on QM9700 2-tier: ⌈64/32⌉ = 2 leaves per pod, in rows
    serving that pod; 4 × 32 / 64 = 2 spines, anywhere the cluster's pods are served. P1's network
    rows carry 2.5 × 0.8 = 2 kW each: its two 1.1 kW leaves cannot share one, so one stands in each
    (one rack each). N2 (8 kW) takes P2's two leaves and both spines (N1a/N1b have 0.9 kW left,
    less than a switch): a rack holds one tier, so 2 racks there. 4 network racks, kW per pod:
    P1 2.2, P2 4.4."""
    from tests.test_optimize import solved

    plan = solved(
        net_site(TWO_PODS, [IB2], {"demand": "max", "gpus": 128, "max_hops": 5, "fabrics": ["ib2"]}), solver
    )
    assert plan.kpis.gpus == 128
    f = plan.fabric[0]
    assert (f.switches, f.leaves_per_pod) == ([4, 2], {"P1": 2, "P2": 2})
    placed = sorted((nr.row, [(c.tier, c.count) for c in nr.switches]) for nr in plan.network_racks)
    assert placed == [("N1a", [(1, 1)]), ("N1b", [(1, 1)]), ("N2", [(1, 2)]), ("N2", [(2, 2)])]
    assert (f.racks_placed, f.positions_by_pod) == (4, {"P1": 2, "P2": 2})
    assert f.kw_by_pod == pytest.approx({"P1": 2.2, "P2": 4.4})
    assert (plan.kpis.fabric_racks, plan.kpis.fabric_kw) == (4, pytest.approx(6.6))


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_network_rack_units_decide_the_racks(solver: str) -> None:
    """One pod, 8 racks (128 GPUs) on QM9700 2-tier in 3 U network racks: 4 leaves and 2 spines;
    leaves 3 + 1 (two racks), spines 2 (one rack) = 3 racks; with 2 U racks, 2 + 2 leaves and 2 spines
    = 3 racks; with 1 U racks one switch each = 6 racks, and a network row of 5 positions holds 5:
    then at most 3 leaves and 2 spines, 3 × 32 = 96 endpoints = 6 racks."""
    from tests.test_optimize import solved

    pod = [{"id": "P1", "gpu": 8, "net": [("N1", 100, 30, 5)]}]
    for units, racks_placed, gpus in [(3, 3, 128), (2, 3, 128), (1, 5, 96)]:
        plan = solved(
            net_site(pod, [{**IB2, "rack_units": units}], {"demand": "max", "fabrics": ["ib2"]}), solver
        )
        assert (plan.kpis.gpus, plan.kpis.fabric_racks) == (gpus, racks_placed), units
        assert all(sum(c.count for c in nr.switches) <= units for nr in plan.network_racks)


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_optimiser_picks_the_cheaper_fabric_that_fits(solver: str) -> None:
    """256 GPUs at least capex, every link $100. QM9700 2-tier: 8 leaves + 4 spines = 12 × $43,000
    + (256 GPU + 256 leaf-spine links) × $100 = $567,200; SN5600: 4 + 2 = 6 × $90,000 + 512 × $100 =
    $591,200; an 8-port design would be cheaper but holds at most 4 × 8 = 32 endpoints."""
    from tests.test_optimize import solved

    pod = [{"id": "P1", "gpu": 16, "net": [("N1", 100, 30, 4)]}]
    s = net_site(
        pod,
        [IB2, SN2, TINY],
        {"demand": "exact", "gpus": 256, "fabrics": ["tiny2", "eth2", "ib2"]},
        "min_capex",
    )
    plan = solved(s, solver)
    assert plan.fabric[0].design == "ib2"
    assert plan.kpis.fabric_capex_usd == 567_200
    assert plan.kpis.switches == 12


def test_cluster_too_large_for_its_design_is_explained() -> None:
    from planner.explainer import explain_infeasible
    from planner.plan.pipeline import plan_scenario

    s = net_site(
        [{"id": "P1", "gpu": 8, "net": [("N1", 100, 30, 4)]}],
        [TINY],
        {"demand": "exact", "gpus": 64, "fabrics": ["tiny2"]},
    )
    assert plan_scenario(s).status.value == "infeasible"
    text = explain_infeasible(s).render()
    assert (
        "fabric tiny2 holds at most 32 endpoints (2 tiers: 4 down ports per leaf × 8 spine ports = k²/2); "
        "c1 needs 64" in text
    )


def test_a_site_without_network_rows_cannot_stand_a_designed_fabric() -> None:
    """No network row serves the pod: the switches have nowhere to stand, so nothing is placed
    on the design (and the explanation says so)."""
    from planner.plan.pipeline import plan_scenario

    s = net_site([{"id": "P1", "gpu": 4, "net": []}], [IB2], {"demand": "max", "fabrics": ["ib2"]})
    plan = plan_scenario(s)
    assert (plan.kpis.gpus, plan.network_racks) == (0, [])


def test_verifier_rejects_moved_network_racks_and_edited_fabric_power() -> None:
    from planner.plan.pipeline import plan_scenario
    from planner.verifier import verify

    s = net_site(TWO_PODS, [IB2], {"demand": "max", "gpus": 128, "max_hops": 5, "fabrics": ["ib2"]})
    plan = plan_scenario(s)
    assert verify(plan, s).ok
    i, nr = next((i, r) for i, r in enumerate(plan.network_racks) if r.row == "N1a")
    free_gpu = next(i for i in range(6) if ("R1", i) not in {(r.row, r.position) for r in plan.racks})
    moved = nr.model_copy(update={"row": "R1", "position": free_gpu, "x_m": 0.6 * free_gpu, "y_m": 0.0})
    bad = plan.model_copy(update={"network_racks": [moved if r is nr else r for r in plan.network_racks]})
    got = [str(v) for v in verify(bad, s).violations]
    assert f"network_racks[{i}] (R1/{free_gpu}): row 'R1' is not a network row" in got
    assert "pod P1 needs 2 leaves in rows serving it, its network racks there hold 1" in " | ".join(got)
    hot = plan.model_copy(
        update={
            "network_racks": [
                r.model_copy(update={"kw": r.kw + 0.5}) if r is nr else r for r in plan.network_racks
            ]
        }
    )
    assert "its network racks draw 7.100 kW, its fabric draws 6.600 kW" in " | ".join(
        str(v) for v in verify(hot, s).violations
    )
    edited = plan.model_copy(update={"fabric": [plan.fabric[0].model_copy(update={"kw": 1.0})]})
    assert [str(v) for v in verify(edited, s).violations] == [
        "fabric c1: kw: plan says 1.0, the racks give 6.6"
    ]
    fewer = plan.model_copy(update={"kpis": plan.kpis.model_copy(update={"switches": 1})})
    assert [str(v) for v in verify(fewer, s).violations] == ["kpis.switches: plan says 1, the racks give 6"]


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_switch_supply_limits_the_fabric(solver: str) -> None:
    """One pod of 8 racks on QM9700 2-tier (32 down per leaf, spines ⌈leaves × 32 / 64⌉): 128 GPUs
    need 4 leaves + 2 spines. With 4 QM9700s delivered, leaves + ⌈leaves / 2⌉ ≤ 4 gives 2 leaves
    and a spine: 64 endpoints, 4 racks; with 5, 3 leaves + 2 spines: 96 GPUs (§17). explain names the
    allocation: one more switch (10 % of 5, rounded up) gives 4 leaves + 2 spines: +32 GPUs."""
    from planner.explainer import explain
    from tests.test_optimize import solved

    pod = [{"id": "P1", "gpu": 8, "net": [("N1", 100, 30, 10)]}]
    base = net_site(pod, [IB2], {"demand": "max", "fabrics": ["ib2"]})
    assert solved(base, solver).kpis.gpus == 128
    for count, gpus, used in [(4, 64, 3), (5, 96, 5)]:
        s = base.model_copy(update={"switch_supply": [SwitchSupply(switch="qm9700", count=count)]})
        plan = solved(s, solver)
        assert plan.kpis.gpus == gpus, count
        use = [u for u in plan.utilisation if u.kind == "supply"]
        assert [(u.id, u.value, u.limit) for u in use] == [("switch:qm9700", used, count)]
    text = explain(base.model_copy(update={"switch_supply": [SwitchSupply(switch="qm9700", count=5)]}))[
        0
    ].render()  # 5 of 5 used
    assert (
        "supply switch:qm9700: 5 of 5 switches used (100.0%); +1 more qm9700 switches allocated → +32 GPUs"
        in text
    ), text


def test_switch_supply_names_an_unknown_model() -> None:
    data = net_site(
        [{"id": "P1", "gpu": 8, "net": [("N1", 100, 30, 10)]}], [IB2], {"demand": "max", "fabrics": ["ib2"]}
    ).model_dump(mode="json")
    with pytest.raises(InputError) as e:
        scenario_from_data({**data, "switch_supply": [{"switch": "qm9800", "count": 3}]})
    assert any(
        line.startswith("switch_supply[0].switch: unknown switch model 'qm9800'") for line in e.value.lines()
    ), e.value.lines()
