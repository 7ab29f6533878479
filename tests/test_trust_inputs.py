"""No input reaches outside its folder, and none crashes: every problem is a clear error
with its YAML path (or line and column), a short echo of the bad value, and what is allowed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from planner.errors import InputError
from planner.input.loader import (
    DATASETS,
    FolderRoot,
    UploadRoot,
    load_scenario,
    load_scenario_text,
    parse_yaml,
    scenario_from_data,
)

SCENARIO = "name: s\nsite: {site}\nclusters: [{{id: c, demand: max, rack_types: [grand-teton-h100]}}]\n"


def _problems(fn, *args: Any) -> list[str]:
    with pytest.raises(InputError) as err:
        fn(*args)
    return err.value.lines()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A scenario folder holding small-hall's site file."""
    d = tmp_path / "scenarios"
    d.mkdir()
    shutil.copy(DATASETS / "small-hall.site.yaml", d / "site.yaml")
    return d


def _scenario(folder: Path, site: str) -> Path:
    p = folder / "s.yaml"
    p.write_text(SCENARIO.format(site=site))
    return p


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        (
            "/etc/shadow",
            "site: '/etc/shadow' is an absolute path; give a path relative to the scenario's folder",
        ),
        ("/dev/zero", "site: '/dev/zero' is an absolute path; give a path relative to the scenario's folder"),
        ("../outside.yaml", "site: '../outside.yaml' leaves the scenario's folder ('..' is not accepted)"),
        (
            "sub/../../outside.yaml",
            "site: 'sub/../../outside.yaml' leaves the scenario's folder ('..' is not accepted)",
        ),
        ("~/x.yaml", "site: '~/x.yaml' is an absolute path; give a path relative to the scenario's folder"),
        ('"a\\0b.yaml"', "site: 'a\\x00b.yaml' contains a NUL byte; expected a file name"),
        ("missing.yaml", "site: 'missing.yaml': cannot read file: No such file or directory"),
    ],
)
def test_file_references_stay_inside_the_scenario_folder(folder: Path, ref: str, expected: str) -> None:
    assert _problems(load_scenario, _scenario(folder, ref)) == [expected]


def test_a_symlink_out_of_the_folder_is_refused(folder: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.yaml").write_text("id: secret\n")
    (folder / "link.yaml").symlink_to(tmp_path / "secret.yaml")
    (folder / "zero.yaml").symlink_to("/dev/zero")
    assert _problems(load_scenario, _scenario(folder, "link.yaml")) == [
        "site: 'link.yaml' resolves outside the scenario's folder (a symbolic link?)"
    ]
    assert _problems(load_scenario, _scenario(folder, "zero.yaml")) == [
        "site: 'zero.yaml' resolves outside the scenario's folder (a symbolic link?)"
    ]


def test_a_symlink_inside_the_folder_is_followed(folder: Path) -> None:
    (folder / "alias.yaml").symlink_to(folder / "site.yaml")
    assert load_scenario(_scenario(folder, "alias.yaml")).site.id == "small-hall"


def test_directories_and_fifos_are_refused_without_blocking(folder: Path) -> None:
    (folder / "dir.yaml").mkdir()
    os.mkfifo(folder / "fifo.yaml")
    assert _problems(load_scenario, _scenario(folder, "dir.yaml")) == [
        "site: 'dir.yaml': is a directory; expected a YAML file"
    ]
    assert _problems(load_scenario, _scenario(folder, "fifo.yaml")) == [
        "site: 'fifo.yaml': is not a regular file (a device, FIFO or socket); expected a YAML file"
    ]


def test_a_device_named_on_the_command_line_is_refused() -> None:
    with pytest.raises(InputError) as err:
        load_scenario("/dev/zero")
    assert err.value.lines() == ["is not a regular file (a device, FIFO or socket); expected a YAML file"]


def test_an_explicit_data_root_confines_instead(folder: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    p = elsewhere / "s.yaml"
    p.write_text(SCENARIO.format(site="site.yaml"))
    assert load_scenario(p, data_root=folder).site.id == "small-hall"
    assert _problems(load_scenario, p) == ["site: 'site.yaml': cannot read file: No such file or directory"]


def test_dashboard_text_sees_only_uploads_and_shipped_datasets() -> None:
    root = UploadRoot(
        {"mine.yaml": (DATASETS / "dr-hall.site.yaml").read_bytes()},
        FolderRoot(DATASETS, "the shipped datasets"),
    )
    assert load_scenario_text(SCENARIO.format(site="mine.yaml"), root).site.id == "dr-hall"
    assert load_scenario_text(SCENARIO.format(site="small-hall.site.yaml"), root).site.id == "small-hall"
    assert _problems(load_scenario_text, SCENARIO.format(site="/etc/shadow"), root) == [
        "site: '/etc/shadow' is an absolute path; give a path relative to the shipped datasets"
    ]
    assert _problems(load_scenario_text, SCENARIO.format(site="nope.yaml"), root) == [
        "site: 'nope.yaml' is neither an uploaded file (uploaded: 'mine.yaml') nor a shipped dataset"
    ]


# --------------------------------------------------------------- YAML values that used to crash


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "a: 2024-13-45\n",
            "line 1, column 4: cannot read '2024-13-45' as timestamp: month must be in 1..12",
        ),
        (
            "a: !!int abc\n",
            "line 1, column 4: cannot read 'abc' as int: invalid literal for int() with base 10: 'abc'",
        ),
        (
            "a: !!float xyz\n",
            "line 1, column 4: cannot read 'xyz' as float: could not convert string to float: 'xyz'",
        ),
        ("a: !!bool maybe\n", "line 1, column 4: cannot read 'maybe' as bool"),
        (
            "a: !!binary AAAA\n",
            "line 1, column 4: !!binary values are not accepted; only mappings, lists, strings, numbers, "
            "booleans and dates",
        ),
        (
            "a: !!set {x}\n",
            "line 1, column 4: !!set values are not accepted; only mappings, lists, strings, numbers, "
            "booleans and dates",
        ),
        (
            "a: b\nc: d\x01e\n",
            "line 2, column 5: character '\\x01' is not allowed in YAML (control characters are not allowed)",
        ),
        ("max_hops: !!int\n", "line 1, column 11: cannot read '' as int"),  # was IndexError, exit 3
        (
            "a: !!timestamp 'x'\n",
            "line 1, column 4: cannot read 'x' as timestamp",
        ),  # was AttributeError, exit 3
        ("a: !!float\n", "line 1, column 4: cannot read '' as float"),
    ],
)
def test_bad_yaml_values_are_errors_with_line_and_column(text: str, expected: str) -> None:
    assert _problems(parse_yaml, text) == [expected]


def test_an_integer_of_5000_digits_is_an_error_not_a_crash() -> None:
    (line,) = _problems(parse_yaml, "a: " + "9" * 5000 + "\n")
    assert line.startswith("line 1, column 4: cannot read '99999")


# --------------------------------------------------------------- numbers finite and of their type

ROW = "site.buildings[0].halls[0].rows[0]"
NODE = "site.buildings[0].halls[0].power_nodes[2]"


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (f"{ROW}.origin_x_m", float("nan"), f"{ROW}.origin_x_m: expected a finite number, got nan"),
        (f"{ROW}.origin_y_m", float("inf"), f"{ROW}.origin_y_m: expected a finite number, got inf"),
        (f"{NODE}.capacity_kw", True, f"{NODE}.capacity_kw: expected a number, got True (a boolean)"),
        (
            f"{NODE}.capacity_kw",
            1e308,
            f"{NODE}.capacity_kw: input should be less than or equal to 10000000, got 1e+308",
        ),
        (
            f"{NODE}.capacity_kw",
            10**400,
            f"{NODE}.capacity_kw: expected a number, got a 401-digit integer (a number)",
        ),
        (f"{ROW}.positions", True, f"{ROW}.positions: expected a whole number, got True (a boolean)"),
        (f"{ROW}.positions", 20.0, f"{ROW}.positions: expected a whole number, got 20.0 (a number)"),
        (f"{ROW}.redundant", 1, f"{ROW}.redundant: expected true or false, got 1 (a number)"),
        ("clusters[1].gpus", 1e30, "clusters[1].gpus: expected a whole number, got 1e+30 (a number)"),
        (
            "clusters[1].gpus",
            10**30,
            "clusters[1].gpus: input should be less than or equal to 100000000, got "
            "1000000000000000000000000000000",
        ),
        ("pue", "1.1", "pue: expected a number, got '1.1' (a string)"),
    ],
)
def test_numbers_are_finite_bounded_and_of_their_type(
    small_data: dict[str, Any], path: str, value: Any, expected: str
) -> None:
    from tests.test_load import _set

    _set(small_data, path, value)
    assert expected in _problems(scenario_from_data, small_data)


def test_nan_coordinates_no_longer_drop_rows(small_data: dict[str, Any]) -> None:
    """Before: origin_x_m .nan silently dropped the row's racks from the plan."""
    text = (DATASETS / "small-hall.site.yaml").read_text()
    assert "origin_x_m: .nan" not in text
    data = parse_yaml("x: .nan\n")
    assert data["x"] != data["x"]  # YAML reads .nan as NaN; the schema must refuse it (above)


def test_a_million_keys_give_one_short_error() -> None:
    text = "name: x\n" + "".join(f"k{i}: {i}\n" for i in range(1_000_000))
    assert _problems(parse_yaml, text) == ["line 10001, column 1: a mapping has more than 10,000 keys"]


def test_many_problems_are_capped_with_a_count(small_data: dict[str, Any]) -> None:
    rows = small_data["site"]["buildings"][0]["halls"][0]["rows"]
    for r in rows:
        for k in range(10):
            r[f"colour{k}"] = "red"
    with pytest.raises(InputError) as err:
        scenario_from_data(small_data)
    lines = err.value.lines()
    assert len(lines) == 51
    assert lines[-1] == f"… and {10 * len(rows) - 50:,} more problems"
    assert err.value.render().startswith(f"{10 * len(rows):,} problems in the input:")


def test_a_long_unknown_key_is_echoed_as_a_prefix(small_data: dict[str, Any]) -> None:
    small_data["x" * 100_000] = 1
    (line,) = [p for p in _problems(scenario_from_data, small_data) if "unknown key" in p]
    assert len(line) < 600  # the key's prefix and the allowed keys, never the 100,000 characters
    assert line.startswith("xxxxxxxxx")
    assert line.count("x") < 200


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (
            "gpu_power_cap_w: 0.7\n",
            "gpu_power_cap_w: 0.7 W is below what a grand-teton-h100 GPU runs at: its TDP is 700 W and a cap "
            "goes down to 25% of it, 175 W; the cap is in watts (0.7 looks like kW: 700 W?)",
        ),
        (
            "gpu_power_cap_w: 100\n",
            "gpu_power_cap_w: 100 W is below what a grand-teton-h100 GPU runs at: its TDP is 700 W and a cap "
            "goes down to 25% of it, 175 W; the cap is in watts",
        ),
        (
            "catalog: {rack_types: [{id: big, kind: gpu, servers_per_rack: 18, gpus_per_server: 40, "
            "gpu_power_w: 12000, weight_kg: 1360, capex_usd: 1}]}\n",
            "catalog.rack_types[0]: rated 8,640.0 kW (servers_per_rack × (gpus_per_server × gpu_power_w "
            "/ 1000 + non_gpu_power_kw_per_server) + overhead_power_kw), beyond any rack built or announced "
            "(at most 1,000 kW); gpu_power_w is in watts, the rest in kW",
        ),
    ],
)
def test_figures_outside_what_hardware_can_be_name_their_unit(folder: Path, extra: str, said: str) -> None:
    """A cap typed in kW where W is meant planned 2,240 GPUs at full PFLOPS where 1,080 fit."""
    text = SCENARIO.format(site="site.yaml") + extra
    assert _problems(load_scenario_text, text, FolderRoot(folder)) == [said]


def test_a_cap_the_gpus_can_run_at_is_taken(folder: Path) -> None:
    text = SCENARIO.format(site="site.yaml") + "gpu_power_cap_w: 175\n"
    assert load_scenario_text(text, FolderRoot(folder)).gpu_power_cap_w == 175
