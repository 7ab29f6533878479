"""Loading: shipped scenarios validate; bad inputs give the exact path and message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planner.errors import InputError
from planner.input.loader import load_scenario, parse_yaml, scenario_from_data

DATASETS = Path(__file__).resolve().parent.parent / "datasets"
ROW3 = "site.buildings[0].halls[0].rows[3]"
HALL = "site.buildings[0].halls[0]"


@pytest.mark.parametrize("name", ["small-hall", "meta-24k-building", "region-100k"])
def test_shipped_scenarios_load(name: str) -> None:
    s = load_scenario(DATASETS / f"{name}.yaml")
    assert s.name == name
    # every shipped GPU rack type names a source for its power figures
    for t in s.catalog.rack_types:
        assert t.sources, t.id


def test_catalog_derives_rated_power() -> None:
    s = load_scenario(DATASETS / "small-hall.yaml")
    types = s.catalog.by_id()
    assert types["grand-teton-h100"].rated_power_kw == pytest.approx(21.4)  # 2 x (8 x 0.7 + 4.6) + 1.0
    assert types["dgx-h100-4"].rated_power_kw == pytest.approx(40.8)  # 4 x 10.2 kW (SuperPOD RA pages)
    assert types["gb200-nvl72"].rated_power_kw == pytest.approx(132.0)  # 18 x (4 x 1.2 + 1.5) + 18.6
    assert types["gb200-nvl72"].planning_power_kw(gpu_power_cap_w=1000) == pytest.approx(
        117.6
    )  # the cap removes 72 x 0.2 kW
    assert types["gb200-nvl72"].gpus == 72


def _set(data: dict[str, Any], path: str, value: Any) -> None:
    """Set ``a.b[2].c`` in nested data (value ``...`` deletes the key)."""
    parts: list[Any] = []
    for chunk in path.split("."):
        name, *idx = chunk.replace("]", "").split("[")
        if name:
            parts.append(name)
        parts += [int(i) for i in idx]
    cur = data
    for p in parts[:-1]:
        cur = cur[p]
    if value is ...:
        del cur[parts[-1]]
    else:
        cur[parts[-1]] = value


def _case(id_: str, edits: dict[str, Any], expected: str):
    return pytest.param(edits, expected, id=id_)


BAD = [
    _case(
        "unknown-top-key",
        {"colour": "red"},
        "colour: unknown key 'colour' (allowed: name, description, site, catalog, clusters, objective, "
        "budgets, gpu_power_cap_w, power_budget_ratio, pue, design_day_pue, phases, retrofits, backup_power, "
        "power_arrival, lead_phases, supply, switch_supply, service_life, futures, existing, costs, "
        "fabrics, region_tier, reliability, network_allowance, rack_limit_on, power_stability, "
        "power_sources, water, maintenance, solver)",
    ),
    _case(
        "unknown-row-key",
        {f"{ROW3}.colour": "red"},
        f"{ROW3}.colour: unknown key 'colour' (allowed: id, positions, origin_x_m, origin_y_m, pitch_m, "
        "direction, max_rack_power_kw, max_rack_weight_kg, feeds, redundant, air_zone, liquid_loop, pod, "
        "reserved, online_phase, depth_m, network)",
    ),
    _case(
        "unknown-feed",
        {f"{ROW3}.feeds[1]": "UPS-9"},
        f"{ROW3}.feeds[1]: unknown power node 'UPS-9' (known: BW-A1, BW-A2, BW-A3, BW-A4, BW-B1, BW-B2, "
        "BW-B3, BW-B4, … 3 more)",
    ),
    _case(
        "feed-not-leaf",
        {f"{ROW3}.feeds[0]": "UPS-A"},
        f"{ROW3}.feeds[0]: power node 'UPS-A' feeds other nodes; a row must hang from leaf nodes",
    ),
    _case(
        "feed-twice", {f"{ROW3}.feeds[1]": "BW-A2"}, f"{ROW3}.feeds[1]: feed 'BW-A2' is listed more than once"
    ),
    _case(
        "no-feeds",
        {f"{ROW3}.feeds": []},
        f"{ROW3}.feeds: list should have at least 1 item after validation, not 0, got []",
    ),
    _case(
        "derate-above-1",
        {f"{HALL}.power_nodes[0].derate": 1.5},
        f"{HALL}.power_nodes[0].derate: input should be less than or equal to 1, got 1.5",
    ),
    _case(
        "derate-zero",
        {f"{HALL}.power_nodes[0].derate": 0},
        f"{HALL}.power_nodes[0].derate: input should be greater than 0, got 0",
    ),
    _case(
        "capacity-negative",
        {f"{HALL}.power_nodes[2].capacity_kw": -5},
        f"{HALL}.power_nodes[2].capacity_kw: input should be greater than 0, got -5",
    ),
    _case(
        "capacity-missing",
        {f"{HALL}.power_nodes[2].capacity_kw": ...},
        f"{HALL}.power_nodes[2].capacity_kw: required key is missing",
    ),
    _case(
        "capacity-text",
        {f"{HALL}.power_nodes[2].capacity_kw": "lots"},
        f"{HALL}.power_nodes[2].capacity_kw: expected a number, got 'lots' (a string)",
    ),
    _case(
        "power-cycle",
        {"site.buildings[0].power_nodes[0].parent": "BW-A1"},
        f"{HALL}.power_nodes[2].parent: power tree has a cycle: BW-A1 -> UPS-A -> UTIL -> BW-A1",
    ),
    _case(
        "unknown-parent",
        {f"{HALL}.power_nodes[0].parent": "SUB-9"},
        f"{HALL}.power_nodes[0].parent: unknown power node 'SUB-9' (known: BW-A1, BW-A2, BW-A3, BW-A4, "
        "BW-B1, BW-B2, BW-B3, BW-B4, … 3 more)",
    ),
    _case(
        "duplicate-row",
        {f"{ROW3}.id": "R01"},
        f"{ROW3}.id: duplicate row ID 'R01' (first defined at {HALL}.rows[0].id)",
    ),
    _case(
        "duplicate-node",
        {f"{HALL}.power_nodes[1].id": "UPS-A"},
        f"{HALL}.power_nodes[1].id: duplicate power node ID 'UPS-A' (first defined at "
        f"{HALL}.power_nodes[0].id)",
    ),
    _case(
        "unknown-air-zone",
        {f"{ROW3}.air_zone": "CZ-9"},
        f"{ROW3}.air_zone: unknown cooling zone 'CZ-9' in hall 'H1' (known: CZ-AIR)",
    ),
    _case(
        "air-zone-is-liquid",
        {f"{ROW3}.air_zone": "LQ-1"},
        f"{ROW3}.air_zone: cooling zone 'LQ-1' is liquid; air_zone must name an air zone (known: CZ-AIR)",
    ),
    _case(
        "loop-is-air",
        {f"{ROW3}.liquid_loop": "CZ-AIR"},
        f"{ROW3}.liquid_loop: cooling zone 'CZ-AIR' is air; liquid_loop must name a liquid loop (known: "
        "LQ-1)",
    ),
    _case(
        "unknown-pod",
        {f"{ROW3}.pod": "POD-Z"},
        f"{ROW3}.pod: unknown pod 'POD-Z' in hall 'H1' (known: POD-A, POD-B)",
    ),
    _case(
        "reserved-out-of-range",
        {f"{ROW3}.reserved": [3, 20]},
        f"{ROW3}.reserved[1]: position 20 is outside 0..19",
    ),
    _case(
        "pod-rack-unknown-row",
        {f"{HALL}.pods[0].network_rack.row": "R99"},
        f"{HALL}.pods[0].network_rack.row: unknown row 'R99' in hall 'H1' (known: R01, R02, R03, R04, R05, "
        "R06, R07, R08)",
    ),
    _case(
        "pod-rack-position",
        {f"{HALL}.pods[0].network_rack.position": 25},
        f"{HALL}.pods[0].network_rack.position: position 25 is outside 0..19 of row 'R02'",
    ),
    _case(
        "redundant-units",
        {f"{HALL}.cooling_zones[0].redundant_units": 6},
        f"{HALL}.cooling_zones[0]: redundant_units (6) must be less than units (6)",
    ),
    _case(
        "bad-medium",
        {f"{HALL}.cooling_zones[0].medium": "water"},
        f"{HALL}.cooling_zones[0].medium: input should be 'air' or 'liquid', got 'water'",
    ),
    _case(
        "bad-direction",
        {f"{ROW3}.direction": "up"},
        f"{ROW3}.direction: input should be '+x', '-x', '+y' or '-y', got 'up'",
    ),
    _case(
        "positions-text",
        {f"{ROW3}.positions": "twenty"},
        f"{ROW3}.positions: expected a whole number, got 'twenty' (a string)",
    ),
    _case(
        "cluster-unknown-rack",
        {"clusters[0].rack_types[0]": "h100-magic"},
        "clusters[0].rack_types[0]: unknown rack type 'h100-magic' (known: catalina-gb200-pod, dgx-h100-4, "
        "dgx-h200-4, gb200-nvl72, grand-teton-h100, network-rack, storage-rack)",
    ),
    _case(
        "cluster-gpus-missing",
        {"clusters[1].gpus": ...},
        "clusters[1]: gpus is required when demand is 'at_least'",
    ),
    _case(
        "cluster-bad-demand",
        {"clusters[0].demand": "lots"},
        "clusters[0].demand: input should be 'exact', 'at_least' or 'max', got 'lots'",
    ),
    _case(
        "cluster-duplicate", {"clusters[1].id": "train-gt"}, "clusters[1].id: duplicate cluster ID 'train-gt'"
    ),
    _case(  # one 72-GPU NVL72 rack holds all of a 72-GPU cluster: half of it cannot stand in one pod
        "spread-one-rack",
        {"clusters[1].demand": "exact", "clusters[1].gpus": 72, "clusters[1].max_share_per_pod": 0.5},
        "clusters[1].max_share_per_pod: 0.5 cannot hold: exactly 72 GPUs in racks of at least 72 GPUs puts "
        "more than 0.5 × 72 = 36 GPUs in one pod",
    ),
    _case(
        "no-clusters",
        {"clusters": []},
        "clusters: list should have at least 1 item after validation, not 0, got []",
    ),
    _case(
        "max-hops-zero",
        {"clusters[0].max_hops": 0},
        "clusters[0].max_hops: input should be greater than or equal to 1, got 0",
    ),
    _case(
        "bad-objective",
        {"objective": "max_fun"},
        "objective: input should be 'max_gpus', 'max_pflops', 'min_capex' or 'min_tco', got 'max_fun'",
    ),
    _case(
        "bad-solver", {"solver.name": "gurobi"}, "solver.name: input should be 'highs' or 'cbc', got 'gurobi'"
    ),
    _case(
        "budget-ratio",
        {"power_budget_ratio": 1.2},
        "power_budget_ratio: input should be less than or equal to 1, got 1.2",
    ),
    _case(
        "hops-decrease",
        {"site.fabric.hops": {"same_pod": 6}},
        "site.fabric.hops: hop counts must not decrease from same_rack to cross_building, got [1, 6, 5, 7]",
    ),
    _case(
        "catalog-link-class",
        {
            "catalog": {
                "rack_types": [{"id": "x1", "weight_kg": 100, "capex_usd": 1, "link_classes": ["fiber9"]}]
            }
        },
        "catalog.rack_types[0].link_classes[0]: unknown link class 'fiber9' (known: aec, dac, mmf, smf)",
    ),
    _case(
        "catalog-liquid-fraction",
        {"catalog": {"rack_types": [{"id": "x1", "weight_kg": 100, "capex_usd": 1, "liquid_fraction": 1.5}]}},
        "catalog.rack_types[0].liquid_fraction: input should be less than or equal to 1, got 1.5",
    ),
    _case("site-not-mapping", {"site": ["a"]}, "site: expected a mapping, got ['a']"),
    _case(
        "redundant-one-feed",
        {f"{ROW3}.feeds": ["BW-A2"]},
        f"{ROW3}.redundant: row 'R04' is redundant, but it loses every feed when BW-A2 fails (its feeds "
        "BW-A2 all hang from BW-A2); give it a feed from another branch or set redundant: false",
    ),
    _case(
        "two-parents",
        {f"{HALL}.power_nodes[2].parent": ["UPS-A", "UPS-B"]},
        f"{HALL}.power_nodes[2]: a power node has one parent (the power tree is a forest); a PDU fed from "
        "two UPS through a static transfer switch is modelled as rows hanging from two feeds, one under "
        "each UPS",
    ),
    _case(
        "storage-type-not-storage",
        {"clusters[0].storage_racks": 2, "clusters[0].storage_rack_type": "network-rack"},
        "clusters[0].storage_rack_type: 'network-rack' is not a storage rack type (known: storage-rack)",
    ),
    _case(
        "gpu-list-holds-storage",
        {"clusters[0].rack_types[0]": "storage-rack"},
        "clusters[0].rack_types[0]: rack type 'storage-rack' holds no GPUs; name GPU rack types here "
        "(storage goes in storage_racks)",
    ),
    _case(
        "pod-network-type",
        {f"{HALL}.pods[0].network_rack_type": "grand-teton-h100"},
        f"{HALL}.pods[0].network_rack_type: 'grand-teton-h100' is not a network rack type (known: "
        "network-rack)",
    ),
    _case(
        "id-with-space",
        {f"{ROW3}.id": "R 4"},
        f"{ROW3}.id: string should match pattern '^[A-Za-z0-9][A-Za-z0-9_.:-]*$', got 'R 4'",
    ),
]


@pytest.mark.parametrize(("edits", "expected"), BAD)
def test_bad_input_names_path_and_value(
    small_data: dict[str, Any], edits: dict[str, Any], expected: str
) -> None:
    for path, value in edits.items():
        _set(small_data, path, value)
    with pytest.raises(InputError) as err:
        scenario_from_data(small_data)
    got = [str(p) for p in err.value.problems]
    assert expected in got, "\n".join(got)


def test_all_problems_reported_at_once(small_data: dict[str, Any]) -> None:
    _set(small_data, f"{ROW3}.feeds[1]", "UPS-9")
    _set(small_data, f"{ROW3}.pod", "POD-Z")
    _set(small_data, "clusters[0].rack_types[0]", "nope")
    with pytest.raises(InputError) as err:
        scenario_from_data(small_data)
    paths = [p.path for p in err.value.problems]
    assert paths == [f"{ROW3}.feeds[1]", f"{ROW3}.pod", "clusters[0].rack_types[0]"]


def test_missing_site_file(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(
        "name: s\nsite: nowhere.yaml\nclusters: [{id: c, demand: max, rack_types: [dgx-h100-4]}]\n"
    )
    with pytest.raises(InputError) as err:
        load_scenario(tmp_path / "s.yaml")
    assert str(err.value.problems[0]) == "site: 'nowhere.yaml': cannot read file: No such file or directory"
    assert err.value.source == str(tmp_path / "s.yaml")


# ------------------------------------------------------------------ hostile YAML

HOSTILE = [
    pytest.param(
        b"!!python/object/apply:os.system ['touch {marker}']\n",
        "could not determine a constructor for the tag 'tag:yaml.org,2002:python/object/apply:os.system'",
        id="python-apply",
    ),
    pytest.param(
        b"a: !!python/object/new:os.system ['touch {marker}']\n",
        "could not determine a constructor for the tag 'tag:yaml.org,2002:python/object/new:os.system'",
        id="python-new",
    ),
    pytest.param(
        b"a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: [*c, *c]\n",
        "YAML aliases (*a) are not accepted; write the value out",
        id="billion-laughs",
    ),
    pytest.param(
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        "file is binary (contains NUL bytes); expected YAML text",
        id="binary",
    ),
    pytest.param(
        b"name: \xff\xfe bad\n",
        "file is not UTF-8 text (bad byte at offset 6); expected YAML text",
        id="not-utf8",
    ),
    pytest.param(b"", "file is empty; expected a YAML mapping", id="empty"),
    pytest.param(b"   \n# only a comment\n", "file is empty; expected a YAML mapping", id="blank"),
    pytest.param(b"name: a\nname: b\n", "line 2, column 1: duplicate key 'name'", id="duplicate-key"),
    pytest.param(b"name: [unclosed\n", "line 2, column 1: did not find expected ',' or ']'", id="syntax"),
]


@pytest.mark.parametrize(("text", "expected"), HOSTILE)
def test_hostile_yaml_executes_nothing(tmp_path: Path, text: bytes, expected: str) -> None:
    marker = tmp_path / "marker"
    text = text.replace(b"{marker}", str(marker).encode())
    with pytest.raises(InputError) as err:
        parse_yaml(text, "hostile.yaml")
    message = str(err.value.problems[0])
    assert expected in message, message
    assert not marker.exists()


def test_oversized_file_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as f:
        f.truncate(33 * 1024 * 1024)
    with pytest.raises(InputError) as err:
        load_scenario(big)
    assert str(err.value.problems[0]) == "file is 34,603,008 bytes; the limit is 33,554,432 bytes"


@pytest.mark.parametrize("depth", [65, 1_000, 5_000, 100_000])
def test_deep_nesting_refused(depth: int) -> None:
    """Nesting beyond 64 levels is refused as bad input (an InputError naming line 1), whichever of
    our pre-scan or libyaml's own depth limit stops it first; the wording is the library's business."""
    with pytest.raises(InputError) as err:
        parse_yaml("a: " + "[" * depth + "]" * depth)
    assert str(err.value.problems[0]).startswith("line 1, column ")


def test_nesting_of_64_levels_accepted() -> None:
    """The mapping is level 1 and 63 lists inside it make 64: still accepted."""
    expected: list = []
    for _ in range(62):
        expected = [expected]
    assert parse_yaml("a: " + "[" * 63 + "]" * 63) == {"a": expected}


def test_every_catalog_figure_names_its_source() -> None:
    """Field by field: every figure a built-in rack type states has a non-empty source (or says
    'estimate'), and every source names a real field."""
    from planner.input.loader import BUILTIN_CATALOG, read_yaml_file
    from planner.schema import RackType

    missing, unknown = [], []
    for entry in read_yaml_file(BUILTIN_CATALOG)["rack_types"]:
        sources = entry.get("sources", {})
        for field in entry:
            if field in ("id", "kind", "description", "sources"):
                continue
            if not str(sources.get(field, "")).strip():
                missing.append(f"{entry['id']}.{field}")
        unknown += [f"{entry['id']}.sources.{k}" for k in sources if k not in RackType.model_fields]
    assert missing == []
    assert unknown == []


def test_validate_warns_about_a_utility_that_can_fail(tmp_path: Path) -> None:
    """A utility that can fail leaves small-hall's redundant rows unfed, so they must stay empty:
    a warning while they are empty; an input problem naming the row and the failure once a pod's
    network rack stands in one (no plan could hold N-1 then)."""
    import shutil
    import subprocess
    import sys

    site = (
        (DATASETS / "small-hall.site.yaml")
        .read_text()
        .replace("derate: 0.8, can_fail: false}", "derate: 0.8, can_fail: true}")
    )
    (tmp_path / "small-hall.site.yaml").write_text(site)
    shutil.copy(DATASETS / "small-hall.yaml", tmp_path)
    r = subprocess.run(
        [sys.executable, "-m", "planner.cli", "validate", str(tmp_path / "small-hall.yaml")],
        capture_output=True,
        text=True,
        cwd=DATASETS.parent,
    )
    assert r.returncode == 2
    assert (
        "  - site.buildings[0].halls[0].pods[0].network_rack: pod POD-A's network rack (12.0 kW) stands in "
        "redundant row 'R02', which "
        "loses every feed when UTIL fails, so nothing may stand there: set the utility's can_fail: false "
        "(outside the N-1 design), set "
        "the row's redundant: false, or stand it in another row"
    ) in r.stderr.splitlines()
    (tmp_path / "small-hall.site.yaml").write_text(
        site.replace("max_racks: 64}", "max_racks: 64, network_rack_type: null}")
    )
    r = subprocess.run(
        [sys.executable, "-m", "planner.cli", "validate", str(tmp_path / "small-hall.yaml")],
        capture_output=True,
        text=True,
        cwd=DATASETS.parent,
    )
    assert r.returncode == 0, r.stderr
    assert (
        "  warning: utility UTIL can fail (can_fail: true) and takes every feed of 8 redundant rows (R01, "
        "R02, R03, R04, R05, …) "
        "with it, so they must stay empty; set can_fail: false if the utility is outside the N-1 design"
    ) in r.stdout.splitlines()
