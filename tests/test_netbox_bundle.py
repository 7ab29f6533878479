"""The NetBox bundle (planner/dcim/bundle.py) and the site import (planner/dcim/site.py),
without a NetBox: what each file holds, counted by hand from the small hall; a unit's positions;
names under a prefix; the REST payload's nested references; the round trip export → CSV → import
giving the same site and a plan of the same GPUs; what the import cannot map is listed. The same
against a running NetBox: tests/test_netbox_live.py."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from planner.cli import main
from planner.dcim.bundle import KINDS, api_payload, bundle, csv_files
from planner.dcim.site import overlay_of, rows_from_folder, site_from_rows
from planner.input.loader import load_scenario
from planner.plan import save_plan
from planner.plan.pipeline import plan_scenario
from planner.schema.site import Site
from tests.test_optimize import solved
from tests.test_units import unit_site

DATASETS = Path(__file__).resolve().parent.parent / "datasets"


@pytest.fixture(scope="module")
def small():
    s = load_scenario(DATASETS / "small-hall.yaml")
    return s, plan_scenario(s)


def canon(site: Site) -> dict:
    """A site as data with every list of named things in ID order (NetBox keeps no order)."""
    x = site.model_dump(mode="json")
    x["buildings"].sort(key=lambda b: b["id"])
    for b in x["buildings"]:
        b["power_nodes"].sort(key=lambda n: n["id"])
        b["halls"].sort(key=lambda h: h["id"])
        for h in b["halls"]:
            for k in ("power_nodes", "rows", "pods", "cooling_zones"):
                h[k].sort(key=lambda n: n["id"])
    return x


def test_small_hall_bundle_holds_every_object_counted_by_hand(small) -> None:
    """Small hall: 1 site (the campus), 2 locations (building B1, hall H1), 8 rows × 20 = 160
    racks, 11 power nodes as panels (UTIL, UPS-A/B, 8 busways), the 8 busways rows draw from as
    feeds, 57 placed racks + 2 pods' network racks = 59 devices; roles gpu and network; each
    device's rack two whips (118 more feeds), its two power ports (118) and a cable each (118)."""
    s, plan = small
    b = bundle(plan, s)
    assert len(plan.racks) == 57
    assert {k: len(v) for k, v in b.objects.items() if k != "custom-fields"} == {
        "sites": 1,
        "locations": 2,
        "manufacturers": 2,
        "device-types": 3,
        "device-roles": 2,
        "racks": 160,
        "power-panels": 11,
        "power-feeds": 8 + 118,
        "devices": 59,
        "power-ports": 118,
        "cables": 118,
    }
    racks = {r["name"]: r for r in b.objects["racks"]}
    assert racks["R03-10"]["status"] == "reserved"  # small-hall.site.yaml: R03 reserved: [10]
    assert racks["R02-00"]["status"] == "planned"  # POD-A's network rack
    assert racks["R01-19"]["cf_planner_x_m"] == pytest.approx(1.2 + 19 * 0.6)
    feed = next(f for f in b.objects["power-feeds"] if f["name"] == "BW-B1")
    # 500 kW at 415 V three-phase: 500,000 / (415 × √3) = 695.6 → 696 A; the B side is redundant
    assert (feed["amperage"], feed["type"], feed["power_panel"]) == (696, "redundant", "UPS-B")
    assert 415 * 696 * math.sqrt(3) / 1000 >= 500 > 415 * 695 * math.sqrt(3) / 1000
    net = next(d for d in b.objects["devices"] if d["name"] == "R06-00")
    assert (net["role"], net["device_type"], net["location"]) == ("network", "network-rack", "H1")


def test_csv_files_come_in_import_order_and_refer_only_backwards(small) -> None:
    """Every reference names an object made by an earlier file (NetBox resolves by name)."""
    s, plan = small
    files = csv_files(bundle(plan, s))
    assert list(files) == [f"{i:02d}-{k}.csv" for i, k in enumerate(KINDS, 1)]
    made: dict[str, set] = {}
    for name, text in files.items():
        kind = name[3:-4]
        rows = list(csv.DictReader(text.splitlines()))
        for ref, kinds in {
            "site": "sites",
            "location": "locations",
            "manufacturer": "manufacturers",
            "device_type": "device-types",
            "role": "device-roles",
            "rack": "racks",
            "power_panel": "power-panels",
        }.items():
            if ref in (rows[0] if rows else {}) and kind != "custom-fields":
                assert {r[ref] for r in rows if r[ref]} <= made.get(kinds, set()), (kind, ref)
        made[kind] = {r.get("name") or r.get("model") for r in rows}


def test_a_units_six_positions_are_six_racks_each_with_its_part() -> None:
    """tests/test_units.py: one 6-wide pod6 unit at position 5 (CDU·CDU·GPU·GPU·CDU·CDU): devices
    on racks R-05 … R-10, each its part's device type and weight (600 kg CDU, 1000 kg GPU)."""
    s = unit_site()
    plan = solved(s, "highs")
    b = bundle(plan, s)
    devs = sorted((d for d in b.objects["devices"] if d["name"].startswith("R-")), key=lambda d: d["name"])
    assert [d["name"] for d in devs] == [f"R-{k:02d}" for k in range(5, 11)]
    assert [d["device_type"] for d in devs] == [
        f"pod6/{i}-{r}" for i, r in enumerate(["CDU", "CDU", "GPU", "GPU", "CDU", "CDU"], 1)
    ]
    assert [d["cf_planner_part"] for d in devs] == list(range(6))
    types = {t["model"]: t for t in b.objects["device-types"]}
    assert [types[d["device_type"]]["weight"] for d in devs] == [600, 600, 1000, 1000, 600, 600]
    racks = {r["name"]: r["status"] for r in b.objects["racks"]}
    assert [racks[f"R-{k:02d}"] for k in range(14)] == ["available"] * 4 + ["reserved"] + ["planned"] * 6 + [
        "available"
    ] * 3


def test_a_units_part_role_and_the_rack_role_share_one_netbox_role() -> None:
    """NetBox holds role, manufacturer and device-type slugs unique regardless of case: a Catalina
    unit's part role ``GPU`` beside GPU racks (role ``gpu``) once made two roles with the slug ``gpu``
    and the push stopped at "ID 1 is listed 2 times". The unit's GPU parts now carry the rack role;
    every slug of every kind is unique, and every device's role is one of the bundle's roles."""
    s = unit_site()
    gpu_rack = next(t for t in s.catalog.rack_types if t.gpus and not t.parts)
    s = s.model_copy(
        update={
            "clusters": [
                *s.clusters,
                s.clusters[0].model_copy(update={"id": "plain", "rack_types": [gpu_rack.id]}),
            ]
        }
    )
    plan = solved(s, "highs")
    b = bundle(plan, s)
    roles = {r["name"] for r in b.objects["device-roles"]}
    assert {"gpu", "CDU"} <= roles
    assert "GPU" not in roles
    assert {d["role"] for d in b.objects["devices"]} <= roles
    assert any(d["device_type"].endswith("-GPU") and d["role"] == "gpu" for d in b.objects["devices"])
    assert any(d["device_type"] == gpu_rack.id for d in b.objects["devices"])
    for kind in ("manufacturers", "device-types", "device-roles", "sites", "locations"):
        slugs = [r["slug"].lower() for r in b.objects[kind]]
        assert len(slugs) == len(set(slugs)), kind


def test_a_prefix_names_every_object_so_two_plans_stand_apart(small) -> None:
    s, plan = small
    a, b = bundle(plan, s, prefix="a-"), bundle(plan, s, prefix="b-")
    for kind in ("sites", "locations", "racks", "power-panels", "power-feeds", "devices"):
        names_a = {r["name"] for r in a.objects[kind]}
        names_b = {r["name"] for r in b.objects[kind]}
        assert all(n.startswith("a-") for n in names_a)
        assert not names_a & names_b


def test_api_payload_nests_references_and_custom_fields(small) -> None:
    s, plan = small
    p = api_payload(bundle(plan, s, prefix="p-"))
    assert p["order"] == list(KINDS)
    dev = next(d for d in p["objects"]["devices"] if d["name"] == "p-R02-01")
    assert dev["device_type"] == {"model": "grand-teton-h100", "manufacturer": {"name": "generic"}}
    assert dev["rack"] == {"name": "p-R02-01", "site": {"name": "p-small-hall"}}
    assert dev["custom_fields"]["planner_cluster"] == "train-gt"
    assert "manufacturer" not in dev
    loc = next(x for x in p["objects"]["locations"] if x["name"] == "p-H1")
    assert loc["parent"] == {"name": "p-B1", "site": {"name": "p-small-hall"}}
    json.dumps(p)  # plain JSON


def test_round_trip_through_csv_gives_the_same_site_and_the_same_gpus(small, tmp_path: Path) -> None:
    """export → the bundle's CSVs → import: the site equals the YAML it came from, and planning the
    scenario on it places the same 1,080 GPUs (tests/test_optimize.py derives 1,080 by hand)."""
    s, plan = small
    for name, text in csv_files(bundle(plan, s, prefix="x-")).items():
        (tmp_path / name).write_text(text)
    got = site_from_rows(rows_from_folder(tmp_path), overlay_of(s.site), prefix="x-")
    assert got.unmapped == []
    site = Site.model_validate(got.site)
    assert canon(site) == canon(s.site)
    again = plan_scenario(s.model_copy(update={"site": site}))
    assert again.kpis.gpus == plan.kpis.gpus == 1080


def test_the_import_lists_what_it_cannot_map(small, tmp_path: Path) -> None:
    s, plan = small
    rows = {k: [dict(r) for r in v] for k, v in bundle(plan, s).objects.items()}
    rows["racks"][0]["cf_planner_row"] = ""  # R01-00 loses its row
    rows["racks"][25]["cf_planner_max_kw"] = 99  # R02-05 disagrees with R02's 25 kW
    got = site_from_rows(rows, overlay_of(s.site))
    assert got.unmapped == [
        "rack 'R01-00': no planner_row/planner_position custom field",
        "row 'R01': positions [0] have no rack",
        "row 'R02': racks disagree on planner_max_kw (['25.0', '99'])",
    ]


def test_cli_exports_a_bundle_and_imports_it_back(small, tmp_path: Path, capsys) -> None:
    s, plan = small
    save_plan(plan, tmp_path / "p.plan.yaml")
    out = tmp_path / "bundle"
    args = ["export", str(tmp_path / "p.plan.yaml"), str(DATASETS / "small-hall.yaml")]
    assert main([*args, "--format", "netbox", "-o", str(out), "--prefix", "c-"]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [*(f"{i:02d}-{k}.csv" for i, k in enumerate(KINDS, 1)), "overlay.yaml", "netbox-api.json"]
    )
    site_out = tmp_path / "site.yaml"
    imp = ["import", "netbox", "--csv", str(out), "--overlay", str(out / "overlay.yaml"), "--prefix", "c-"]
    assert main([*imp, "-o", str(site_out)]) == 0
    assert "wrote" in capsys.readouterr().out
    from planner.input.loader import read_yaml_file

    assert canon(Site.model_validate(read_yaml_file(site_out))) == canon(s.site)


def test_cli_refuses_a_push_without_a_token(small, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("NETBOX_TOKEN", raising=False)
    (tmp_path / "p.json").write_text(json.dumps({"order": [], "endpoints": {}, "objects": {}}))
    assert main(["netbox", "push", str(tmp_path / "p.json"), "--url", "http://127.0.0.1:9"]) == 2
    assert (
        "--token-env: environment variable NETBOX_TOKEN holds no NetBox API token" in capsys.readouterr().err
    )


def test_cli_refuses_a_csv_folder_without_racks(tmp_path: Path, capsys) -> None:
    assert main(["import", "netbox", "--csv", str(tmp_path), "-o", str(tmp_path / "s.yaml")]) == 2
    assert f"--csv: '{tmp_path}' holds no racks CSV (racks.csv or NN-racks.csv)" in capsys.readouterr().err


def test_a_bundle_without_whips_holds_no_rack_feeds_ports_or_cables(small) -> None:
    """``--no-whips``: the 8 busway feeds only, no power ports, no cables; the rest as with them."""
    s, plan = small
    lean, full = bundle(plan, s, whips=False), bundle(plan, s)
    assert (len(lean.objects["power-feeds"]), lean.objects["power-ports"], lean.objects["cables"]) == (
        8,
        [],
        [],
    )
    same = [k for k in full.objects if k not in ("power-feeds", "power-ports", "cables")]
    assert all(lean.objects[k] == full.objects[k] for k in same)
