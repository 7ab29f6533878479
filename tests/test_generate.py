"""The site generator: shipped sites are reproducible; designs survive N-1 at design load."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.cli import main
from planner.input.generate import BuildingSpec, SiteSpec, generate_site
from planner.input.loader import load_site, read_yaml_file, scenario_from_data
from planner.input.site_index import index_site, place
from planner.plan import Plan
from planner.verifier import verify

DATASETS = Path(__file__).resolve().parent.parent / "datasets"


@pytest.mark.parametrize(
    "name", ["meta-24k-building", "region-100k", "prometheus-1gw", "prometheus-1gw-allowance"]
)
def test_shipped_site_matches_generator(tmp_path: Path, name: str) -> None:
    out = tmp_path / "site.yaml"
    assert main(["generate-site", "--spec", f"datasets/{name}.gen.yaml", "-o", str(out)]) == 0
    assert out.read_text() == (DATASETS / f"{name}.site.yaml").read_text()


def test_meta_building_shape() -> None:
    site = load_site(DATASETS / "meta-24k-building.site.yaml")
    ix = index_site(site)
    assert len(ix.pods) == 8
    assert all(p.max_gpus == 3072 for p in ix.pods.values())
    gpu_rows = [r.row for r in ix.rows.values() if r.row.network is None]
    net_rows = [r.row for r in ix.rows.values() if r.row.network is not None]
    assert (
        sum(r.positions for r in gpu_rows) == 8 * 12 * 17
    )  # the pods' network racks stand in their network rows
    assert [(r.network, r.positions, r.max_rack_power_kw) for r in net_rows] == [("pod", 16, 40.0)] * 8
    assert {p.network_rack.row for p in ix.pods.values()} == {r.id for r in net_rows}


def test_network_rows_are_sized_into_busways_ups_and_air() -> None:
    """A 1-pod 2N hall of 2 rows × 4 positions at 10 kW and one network row at 100 kW: GPU
    busways 40 / 0.8 = 50 kW, network busways 100 / 0.8 = 125 kW, each UPS the hall's
    (80 + 100) / 0.8 = 225 kW, the air zone ⌈180 / 400⌉ + 1 = 2 units, the utility 225 kW."""
    from planner.input.generate import BuildingSpec, SiteSpec, generate_site

    site = generate_site(
        SiteSpec(
            buildings=[
                BuildingSpec(
                    rows_per_pod=2,
                    positions_per_row=4,
                    design_kw_per_position=10,
                    network_rows_per_pod=1,
                    network_row_positions=3,
                    network_row_kw=100,
                    network_rack_max_kw=30,
                )
            ]
        )
    )
    h = site.buildings[0].halls[0]
    cap = {n.id: n.capacity_kw for n in h.power_nodes}
    assert [r.id for r in h.rows] == ["B1-H1-P1-R01", "B1-H1-P1-R02", "B1-H1-P1-N1"]
    assert [(r.network, r.positions, r.max_rack_power_kw) for r in h.rows] == [
        (None, 4, 25.0),
        (None, 4, 25.0),
        ("pod", 3, 30.0),
    ]
    assert (cap["B1-H1-P1-R01-BW-A"], cap["B1-H1-P1-N1-BW-B"]) == (50.0, 125.0)
    assert cap["B1-H1-UPS-A"] == cap["B1-H1-UPS-B"] == 225.0
    assert h.cooling_zones[0].units == 2
    assert site.buildings[0].power_nodes[0].capacity_kw == 225.0
    assert (h.pods[0].network_rack.row, h.pods[0].network_rack.position) == ("B1-H1-P1-N1", 0)


def test_region_has_100k_gpus_of_positions() -> None:
    """Air pods hold 16-GPU racks, liquid pods 72-GPU racks: ≥ 100,000 GPUs of positions."""
    ix = index_site(load_site(DATASETS / "region-100k.site.yaml"))
    total = 0
    for ref in ix.rows.values():
        usable = ref.row.positions - sum(1 for p in ix.pods.values() if p.network_rack.row == ref.row.id)
        total += usable * (72 if ref.row.liquid_loop else 16)
    assert total >= 100_000
    assert len(ix.site.buildings) >= 4
    kinds = {ref.row.liquid_loop is not None for ref in ix.rows.values()}
    assert kinds == {True, False}


def test_fleet_spec_holds_a_million_gpus_in_three_regions() -> None:
    """datasets/fleet-1m.gen.yaml (spec only): 16 + 14 + 12 buildings; pod GPU ports 16·8·3,072 +
    14·8·3,456 + 12·8·3,072 = 1,075,200 and positions (16-GPU air racks, 72-GPU liquid racks) more."""
    from planner.input.generate import SiteSpec

    spec = SiteSpec.model_validate(read_yaml_file(DATASETS / "fleet-1m.gen.yaml"))
    ix = index_site(generate_site(spec))
    assert [b.count for b in spec.buildings] == [16, 14, 12]
    assert len(ix.site.buildings) == 42
    assert sum(p.max_gpus for p in ix.pods.values()) == 1_075_200
    total = sum(
        (ref.row.positions - sum(1 for p in ix.pods.values() if p.network_rack.row == ref.row.id))
        * (72 if ref.row.liquid_loop else 16)
        for ref in ix.rows.values()
    )
    assert total >= 1_000_000


@pytest.mark.parametrize("design", ["2n", "dr"])
def test_full_design_load_survives_n_minus_1(design: str) -> None:
    """Filling every usable position at the design density passes normal and N-1 checks."""
    spec = SiteSpec(
        buildings=[
            BuildingSpec(
                rows_per_pod=3,
                positions_per_row=6,
                power_design=design,
                design_kw_per_position=21.4,
                pod_max_gpus=10_000,
            )
        ]
    )
    site = generate_site(spec)
    data = {
        "name": "g",
        "site": site.model_dump(mode="json"),
        "clusters": [{"id": "c", "demand": "max", "rack_types": ["grand-teton-h100"]}],
    }
    s = scenario_from_data(data)
    ix = index_site(s.site)
    gt = s.catalog.by_id()["grand-teton-h100"]
    spots = ix.pod_locations()
    racks = [
        place(ix, rid, i, gt, "c")
        for rid, ref in ix.rows.items()
        for i in range(ref.row.positions)
        if (rid, i) not in spots
    ]
    rep = verify(Plan(scenario_name="g", racks=racks), s)
    assert rep.ok, rep.violations[:3]
    worst = max(u.worst_share for u in rep.usage if u.kind == "power_node")
    assert worst == pytest.approx(1.0)  # sized exactly for the design load


def test_generate_site_flags(tmp_path: Path) -> None:
    out = tmp_path / "g.yaml"
    assert (
        main(
            [
                "generate-site",
                "--buildings",
                "2",
                "--halls",
                "1",
                "--rows-per-pod",
                "2",
                "--positions",
                "5",
                "--power-design",
                "dr",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    data = read_yaml_file(out)
    assert [b["id"] for b in data["buildings"]] == ["B1", "B2"]
    assert [n["id"] for n in data["buildings"][0]["halls"][0]["power_nodes"][:3]] == [
        "B1-H1-UPS-1",
        "B1-H1-UPS-2",
        "B1-H1-UPS-3",
    ]


def test_generate_site_bad_flag() -> None:
    assert main(["generate-site", "--positions", "0"]) == 2


def test_prometheus_shape_prefixes_online_phases_and_tents() -> None:
    """prometheus-1gw.gen.yaml: B1-B4, BAG1 (network rows only), B5-B13 and T1-T6; B5-B6 online from
    q3 … B13 from q7; tents' pods have no network rack drawing power. Every pod has a network row
    (480 kW), so every GPU row position is usable: 4 × 2 × 4 × 12 × 17 + 9 × 4 × 4 × 12 × 18 +
    6 × 4 × 12 × 18 = 42,816 positions × 21.4 kW = 916,262.4 kW; network rows (480 kW each; BAG1's
    960): B1-B4 4 × (8 + 1) × 480, BAG1 8 × 960, B5-B13 9 × (16 + 6) × 480, tents 6 × (4 + 2) × 480
    = 137,280 kW."""
    site = load_site(DATASETS / "prometheus-1gw.site.yaml")
    ids = [b.id for b in site.buildings]
    assert ids == [f"B{i}" for i in range(1, 5)] + ["BAG1"] + [f"B{i}" for i in range(5, 14)] + [
        f"T{i}" for i in range(1, 7)
    ]
    online = {b.id: {h.online_phase for h in b.halls} for b in site.buildings}
    assert [online[f"B{i}"] for i in range(1, 14)] == [{None}] * 4 + [{"q3"}] * 2 + [{"q4"}] * 2 + [
        {"q5"}
    ] * 2 + [{"q6"}] * 2 + [{"q7"}]
    hub = next(b for b in site.buildings if b.id == "BAG1")
    assert {r.network for h in hub.halls for r in h.rows} == {"pod"}
    tents = [p for b in site.buildings if b.id.startswith("T") for h in b.halls for p in h.pods]
    assert len(tents) == 24
    assert all(p.network_rack_type is None for p in tents)
    positions = sum(r.positions for b in site.buildings for h in b.halls for r in h.rows if r.network is None)
    assert positions == 42_816
    design = 21.4 * positions
    assert design == pytest.approx(916_262.4)
    usable = sum(n.usable_kw for b in site.buildings for n in b.power_nodes)
    assert usable == pytest.approx(design + 137_280, abs=20 * 0.1)  # each utility rounded up to 0.1 kW


def test_a_building_of_network_rows_only() -> None:
    """rows_per_pod 0 with network rows: a building for the region tier's switches, no GPU row; 0
    network rows as well is refused with the rule."""
    from planner.errors import InputError
    from planner.input.loader import validate_model

    site = generate_site(
        SiteSpec(buildings=[BuildingSpec(rows_per_pod=0, network_rows_per_pod=2, network_row_positions=8)])
    )
    rows = [r for h in site.buildings[0].halls for r in h.rows]
    assert [(r.id, r.network, r.positions) for r in rows] == [
        ("B1-H1-P1-N1", "pod", 8),
        ("B1-H1-P1-N2", "pod", 8),
    ]
    with pytest.raises(InputError) as err:
        validate_model(SiteSpec, {"buildings": [{"rows_per_pod": 0}]}, "", "spec.yaml")
    assert err.value.lines() == [
        "buildings[0]: rows_per_pod 0 makes a building of network rows only: it needs "
        "network_rows_per_pod of 1 or more"
    ]
