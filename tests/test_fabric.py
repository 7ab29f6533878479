"""Fabrics sized from topology (§13): hand-counted fat trees, optics by link class, limits."""

from __future__ import annotations

import pytest

from planner.fabric import max_endpoints, ports, size
from planner.loader import scenario_from_data
from planner.schema import PlacedRack
from tests.conftest import small_hall_data

GT = "grand-teton-h100"


def scenario(designs: list[dict]):
    data = small_hall_data()
    data["fabrics"] = designs
    return scenario_from_data(data)


def racks(n: int, link_class: str = "dac", start: int = 0) -> list[PlacedRack]:
    """n Grand Teton racks (16 GPUs each) of cluster c at the given link class."""
    return [PlacedRack(building="B1", hall="H1", row="R01", position=start + i, x_m=0, y_m=0, rack_type=GT, cluster="c",
                       link_class=link_class, cable_length_m=1.0) for i in range(n)]


IB2 = {"id": "ib2", "kind": "infiniband", "tiers": 2, "switches": ["qm9700", "qm9700"], "oversubscription": [1.0]}
IB3 = {"id": "ib3", "kind": "infiniband", "tiers": 3, "switches": ["qm9700", "qm9700", "qm9700"], "oversubscription": [1.0, 1.0]}
META = {"id": "meta-roce", "kind": "roce", "tiers": 3, "switches": ["minipack2", "arista-7800", "arista-7800"],
        "oversubscription": [0.5, 7.0], "leaf_in_rack": True}


def test_two_tier_non_blocking_tree_of_64_port_switches() -> None:
    """2,048 endpoints on 64-port switches: 32 down + 32 up per leaf → 64 leaves; 64 × 32 = 2,048
    uplinks on 64-port spines → 32 spines: 96 switches; the design's largest build is k²/2 = 2,048."""
    s = scenario([IB2])
    z = size(s, s.fabrics[0], racks(128))
    assert (z.endpoints, z.switches, z.max_endpoints) == (2048, [64, 32], 2048)
    assert z.links == {"dac": 2048}  # leaf-to-spine inside the network racks
    assert z.capex_usd == 96 * 43_000 + 2048 * 150
    assert z.kw == pytest.approx(96 * 1.1)
    assert z.network_racks == 3  # 96 U in 42 U racks
    assert z.max_hops == 3


def test_three_tier_tree() -> None:
    """4,096 endpoints, three tiers of 64-port switches: 128 leaves, 128 × 32 / 32 = 128 spines,
    128 × 32 / 64 = 64 cores = 320 switches; largest build k³/4 = 65,536; 5 hops across the core."""
    s = scenario([IB3])
    z = size(s, s.fabrics[0], racks(256))
    assert (z.switches, z.max_endpoints, z.max_hops) == ([128, 128, 64], 65_536, 5)
    assert z.links == {"dac": 4096, "smf": 4096}  # spine-to-core leaves the pod: single-mode
    assert max_endpoints(s.fabrics[0], s.catalog.switch_by_id()) == 64 ** 3 // 4


def test_oversubscribed_leaf_tier() -> None:
    """3:1 at the leaves: ⌊64 · 3/4⌋ = 48 down, 16 up; 2,048 endpoints → ⌈2048/48⌉ = 43 leaves,
    688 uplinks → ⌈688/64⌉ = 11 spines: 54 switches; largest build 48 × 64 = 3,072."""
    s = scenario([{**IB2, "oversubscription": [3.0]}])
    d = s.fabrics[0]
    assert (ports(d, s.catalog.switch_by_id()).down[0], ports(d, s.catalog.switch_by_id()).up[0]) == (48, 16)
    z = size(s, d, racks(128))
    assert (z.switches, z.max_endpoints) == ([43, 11], 3072)


def test_meta_roce_with_leaves_in_the_racks_counts_optics_by_link_class() -> None:
    """Leaves are the racks' switches (1:2 under-subscribed: 16 down, 32 up); 3 racks reach the
    pod's network rack on DAC and 2 on multimode: 96 DAC and 64 MMF uplinks; 160 uplinks on
    cluster switches of ⌊576 · 7/8⌋ = 504 down ports → 1 spine with 72 uplinks (single-mode) →
    1 core. Optics: 2 per optical link (64 MMF + 72 SMF) = 272; the racks' own leaves cost nothing extra."""
    s = scenario([META])
    z = size(s, s.fabrics[0], racks(3, "dac") + racks(2, "mmf", start=3))
    assert z.switches == [5, 1, 1]
    assert z.links == {"dac": 96, "mmf": 64, "smf": 72}
    assert z.capex_usd == 2 * 1_500_000 + 96 * 150 + 64 * 1400 + 72 * 2400
    assert z.max_endpoints == 16 * 504 * 576


@pytest.mark.parametrize(("change", "message"), [
    ({"switches": ["qm9700", "qm9700"]}, "fabrics[0]: switches: 2 given, a 3-tier design names one per tier"),
    ({"oversubscription": [1.0]}, "fabrics[0]: oversubscription: 1 given, a 3-tier design states 2 (every tier below the top)"),
    ({"switches": ["qm9700", "qm9700", "nope"]}, "fabrics[0].switches[2]: unknown switch 'nope' (known: arista-7800, minipack2, qm9700, sn5600)"),
    ({"switches": ["qm9700", "qm9700", "sn5600"]}, "fabrics[0].switches[2]: 'sn5600' is a roce switch; design 'ib3' is infiniband"),
])
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


def fabric_site(feed_kw: float, designs: list[dict], cluster: dict, objective: str = "max_gpus", net_kw: float = 12.5):
    """R1 (40 positions) on feed F; the pod's network rack stands at NET/0 on feed N (its own
    feed, 10 kW usable by default: the fabric's power lands there). The catalog adds an 8-port
    switch (tiny8)."""
    from tests.conftest import tiny_scenario

    return tiny_scenario([{"id": "R1", "positions": 40, "feeds": ["F"]}], [{"id": "F", "capacity_kw": feed_kw}, {"id": "N", "capacity_kw": net_kw}],
                         [{"id": "c1", "rack_types": [GT], **cluster}], fabrics=designs, objective=objective, catalog={"switches": [TINY_SWITCH]})


SN2 = {"id": "eth2", "kind": "roce", "tiers": 2, "switches": ["sn5600", "sn5600"], "oversubscription": [1.0]}
TINY = {"id": "tiny2", "kind": "infiniband", "tiers": 2, "switches": ["tiny8", "tiny8"], "oversubscription": [1.0]}
TINY_SWITCH = {"id": "tiny8", "kind": "infiniband", "ports": 8, "port_gbps": 400, "power_w": 100, "price_usd": 1000, "height_u": 1}


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_fabric_power_lands_on_the_network_rack_row(solver: str) -> None:
    """Feed N of the network rack: 12.5 kW × 0.8 = 10 kW. QM9700 2-tier: per endpoint 1,100/32 (leaf)
    + 1,100/64 (spine) = 51.5625 W → ⌊10 / 0.0515625⌋ = 193 GPUs → 12 racks = 192 GPUs. SN5600
    2-tier: 2,000/64 + 2,000/128 = 46.875 W → 213 GPUs → 13 racks = 208. With both allowed the
    optimiser builds on SN5600: 208."""
    from tests.test_optimize import solved

    ib = solved(fabric_site(10_000, [IB2], {"demand": "max", "fabrics": ["ib2"]}), solver)
    assert ib.kpis.gpus == 192
    assert ib.fabric[0].design == "ib2"
    assert ib.fabric[0].switches == [6, 3]
    eth = solved(fabric_site(10_000, [SN2], {"demand": "max", "fabrics": ["eth2"]}), solver)
    assert eth.kpis.gpus == 208
    both = solved(fabric_site(10_000, [IB2, SN2], {"demand": "max", "fabrics": ["ib2", "eth2"]}), solver)
    assert (both.kpis.gpus, both.fabric[0].design) == (208, "eth2")


@pytest.mark.parametrize("solver", ["highs", "cbc"])
def test_optimiser_picks_the_cheaper_fabric_that_fits(solver: str) -> None:
    """256 GPUs at least capex. QM9700 2-tier: 8 leaves + 4 spines = 12 × $43,000 + 256 DAC links ×
    $150 = $554,400; SN5600: 4 + 2 = 6 × $90,000 + 256 × $150 = $578,400; an 8-port design would be
    cheaper but holds at most 4 × 8 = 32 endpoints."""
    from tests.test_optimize import solved

    s = fabric_site(10_000, [IB2, SN2, TINY], {"demand": "exact", "gpus": 256, "fabrics": ["tiny2", "eth2", "ib2"]}, "min_capex", net_kw=100)
    plan = solved(s, solver)
    assert plan.fabric[0].design == "ib2"
    assert plan.kpis.fabric_capex_usd == 554_400
    assert plan.kpis.switches == 12


def test_cluster_too_large_for_its_design_is_explained() -> None:
    from planner.explainer import explain_infeasible
    from planner.pipeline import plan_scenario

    s = fabric_site(10_000, [TINY], {"demand": "exact", "gpus": 64, "fabrics": ["tiny2"]})
    assert plan_scenario(s).status.value == "infeasible"
    text = explain_infeasible(s).render()
    assert "fabric tiny2 holds at most 32 endpoints (2 tiers: 4 down ports per leaf × 8 spine ports = k²/2); c1 needs 64" in text


def test_verifier_rejects_edited_fabric_figures() -> None:
    from planner.pipeline import plan_scenario
    from planner.verifier import verify

    s = fabric_site(10_000, [IB2], {"demand": "max", "fabrics": ["ib2"]})
    plan = plan_scenario(s)
    assert verify(plan, s).ok
    bad = plan.model_copy(update={"kpis": plan.kpis.model_copy(update={"switches": 1})})
    assert [str(v) for v in verify(bad, s).violations] == ["kpis.switches: plan says 1, the racks give 9"]
    edited = plan.model_copy(update={"fabric": [plan.fabric[0].model_copy(update={"switches": [1, 1]})]})
    assert [str(v) for v in verify(edited, s).violations] == ["fabric c1: switches: plan says [1, 1], the racks give [6, 3]"]
