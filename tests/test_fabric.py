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


@pytest.mark.parametrize("change, message", [
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
