"""Exports (planner/dcim/exports.py): placement CSV and XLSX, one row per rack; the NetBox bundle's
devices (tests/test_netbox_bundle.py has the rest)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from planner.cli import main
from planner.dcim.exports import NETBOX_COLUMNS, PLACEMENT_COLUMNS
from planner.input.loader import load_scenario
from planner.plan import save_plan
from planner.plan.pipeline import plan_scenario

DATASETS = Path(__file__).resolve().parent.parent / "datasets"

NETBOX_DEVICE_IMPORT_FIELDS = [
    # NetBox's device bulk-import form (netbox/dcim/forms/bulk_import.py, DeviceImportForm.Meta.fields)
    "name",
    "role",
    "tenant",
    "manufacturer",
    "device_type",
    "platform",
    "serial",
    "asset_tag",
    "status",
    "site",
    "location",
    "rack",
    "position",
    "face",
    "latitude",
    "longitude",
    "parent",
    "device_bay",
    "airflow",
    "virtual_chassis",
    "vc_position",
    "vc_priority",
    "cluster",
    "description",
    "config_template",
    "owner",
    "comments",
    "tags",
]
NETBOX_REQUIRED = [
    "role",
    "manufacturer",
    "device_type",
    "status",
    "site",
]  # the form's fields without required=False


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory):
    s = load_scenario(DATASETS / "small-hall.yaml")
    plan = plan_scenario(s)
    path = tmp_path_factory.mktemp("plan") / "small.plan.yaml"
    save_plan(plan, path)
    return s, plan, path


def _export(tmp_path: Path, plan_path: Path, fmt: str, name: str) -> Path:
    out = tmp_path / name
    assert (
        main(["export", str(plan_path), str(DATASETS / "small-hall.yaml"), "--format", fmt, "-o", str(out)])
        == 0
    )
    return out


def test_placement_csv_has_one_row_per_rack_and_a_row_by_hand(small, tmp_path: Path) -> None:
    """Small hall: every rack of the plan once; the rack at R02 position 1 is a Grand Teton rack of
    train-gt at (1.8 m, 3.6 m) (row origin 1.2 m + 1 × 0.6 m pitch, row y 3.6 m), 21.4 kW (2 ×
    (8 × 0.7 + 4.6) + 1 kW ToR), fed by busways BW-A1 and BW-B1."""
    s, plan, path = small
    rows = list(csv.DictReader(_export(tmp_path, path, "csv", "p.csv").open()))
    assert list(rows[0]) == PLACEMENT_COLUMNS
    assert len(rows) == len(plan.racks) + len(plan.network_racks)
    assert {(r["row"], r["position"]) for r in rows} == {(r.row, str(r.position)) for r in plan.racks}
    r = next(x for x in rows if (x["row"], x["position"]) == ("R02", "1"))
    assert r == {
        "building": "B1",
        "hall": "H1",
        "row": "R02",
        "position": "1",
        "width": "1",
        "x_m": "1.8",
        "y_m": "3.6",
        "rack_type": "grand-teton-h100",
        "kind": "gpu",
        "cluster": "train-gt",
        "phase": "",
        "kw": "21.4",
        "feeds": "BW-A1+BW-B1",
        "link_class": r["link_class"],
        "existing": "False",
    }
    assert r["link_class"] in {"dac", "aec", "mmf", "smf"}
    assert sum(float(x["kw"]) for x in rows) == pytest.approx(plan.kpis.racks_kw)


def test_xlsx_has_a_sheet_per_hall_and_the_kpis(small, tmp_path: Path) -> None:
    import openpyxl

    s, plan, path = small
    wb = openpyxl.load_workbook(_export(tmp_path, path, "xlsx", "p.xlsx"), read_only=True)
    assert wb.sheetnames == ["KPIs", "H1"]
    hall = list(wb["H1"].values)
    assert list(hall[0]) == PLACEMENT_COLUMNS
    assert len(hall) - 1 == len(plan.racks)
    kpis = {row[0]: row[1] for row in list(wb["KPIs"].values)[1:]}
    # 1,080 by hand in tests/test_optimize.py::test_default_scenario_optimum: 3 NVL72 + 54 Grand Teton racks
    assert kpis["gpus"] == plan.kpis.gpus == 1080
    assert kpis["status"] == "optimal"


def test_netbox_csv_uses_netbox_import_fields_and_a_row_by_hand(small, tmp_path: Path) -> None:
    s, plan, path = small
    text = (_export(tmp_path, path, "netbox", "nb") / "10-devices.csv").read_text()
    rows = list(csv.DictReader(text.splitlines()))
    assert NETBOX_COLUMNS == list(rows[0])[: len(NETBOX_COLUMNS)]
    custom = [c for c in rows[0] if c not in NETBOX_COLUMNS]
    assert custom == ["cf_planner_cluster", "cf_planner_phase", "cf_planner_rack_type"]
    assert set(NETBOX_COLUMNS) <= set(NETBOX_DEVICE_IMPORT_FIELDS)
    assert set(NETBOX_REQUIRED) <= set(NETBOX_COLUMNS)
    assert len(rows) == len(plan.racks) + 2  # and the two pods' network racks
    assert len({r["name"] for r in rows}) == len(rows)  # NetBox device names are unique per site
    r = next(x for x in rows if x["name"] == "R02-01")
    assert r == {
        "name": "R02-01",
        "role": "gpu",
        "manufacturer": "generic",
        "device_type": "grand-teton-h100",
        "status": "planned",
        "site": "small-hall",
        "location": "H1",
        "rack": "R02-01",
        "position": "1",
        "face": "front",
        "description": "cluster train-gt",
        "cf_planner_cluster": "train-gt",
        "cf_planner_phase": "",
        "cf_planner_rack_type": "grand-teton-h100",
    }
    assert {x["face"] for x in rows} == {"front"}
    assert {x["status"] for x in rows} <= {"planned", "active"}  # NetBox DeviceStatusChoices values


def test_a_plan_for_another_scenario_is_not_exported(
    small, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s, plan, path = small
    out = tmp_path / "x.csv"
    assert main(["export", str(path), str(DATASETS / "dr-hall.yaml"), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "the plan does not verify against scenario 'dr-hall'" in err
    assert "export only a plan made for it" in err
    assert not out.exists()
    assert (
        main(["export", str(path), str(DATASETS / "small-hall.yaml"), "--format", "pdf", "-o", str(out)]) == 2
    )
    assert (
        "argument --format: invalid choice: 'pdf' (choose from 'csv', 'xlsx', 'netbox', 'netbox-api')"
        in capsys.readouterr().err
    )


def test_compare_and_diff_say_first_when_plans_answer_different_scenarios(
    small, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """small-hall places 1,080 GPUs, dr-hall 864: compare's B − A column says -216, and both
    commands open with the line naming the two scenarios and their hashes; a plan compared with
    itself gets no such line and a zero delta."""
    s, plan, path = small
    other = tmp_path / "dr.plan.yaml"
    dr = plan_scenario(load_scenario(DATASETS / "dr-hall.yaml"))
    save_plan(dr, other)
    assert main(["compare", str(path), str(other)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "note: these plans answer different scenarios: small.plan.yaml: 'small-hall' (hash "
        f"{plan.scenario_hash}); "
        f"dr.plan.yaml: 'dr-hall' (hash {dr.scenario_hash})"
    )
    gpus = next(line for line in out if line.startswith("gpus "))
    assert gpus.split()[1:] == ["1,080", "864", "-216"]
    assert main(["diff", str(path), str(other)]) == 0
    assert capsys.readouterr().out.startswith("note: these plans answer different scenarios: ")
    assert main(["compare", str(path), str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert not out[0].startswith("note:")
    assert next(line for line in out if line.startswith("gpus ")).split()[1:] == ["1,080", "1,080", "+0"]


def test_a_formula_in_free_text_is_neutralised_in_every_export(tmp_path: Path) -> None:
    """The catalog's free-text manufacturer reaches the NetBox CSV; a sweep's varied text reaches the
    results table: a leading = + - @ tab or CR gets an apostrophe, CR, LF and ESC become spaces."""
    import openpyxl

    from planner.batch.sweep import grid_sweep, run_batch
    from planner.cells import safe_cell, safe_frame
    from planner.dcim.exports import export_plan
    from tests.conftest import small_hall_data

    evil = '=HYPERLINK("http://example.invalid","x")\r\n\x1b[2J'
    s = load_scenario(DATASETS / "small-hall.yaml")
    types = [t.model_copy(update={"manufacturer": evil}) for t in s.catalog.rack_types]
    s = s.model_copy(update={"catalog": s.catalog.model_copy(update={"rack_types": types})})
    plan = plan_scenario(s)
    export_plan(plan, s, "netbox", tmp_path / "nb")
    text = (tmp_path / "nb" / "10-devices.csv").read_text()
    assert "\x1b" not in text
    assert "\r" not in text
    rows = list(csv.DictReader(text.splitlines()))
    rows = [r for r in rows if r["role"] != "network"]
    assert len(rows) == len(plan.racks)
    assert {r["manufacturer"] for r in rows} == {'\'=HYPERLINK("http://example.invalid","x")   [2J'}
    export_plan(plan, s, "xlsx", tmp_path / "p.xlsx")
    wb = openpyxl.load_workbook(tmp_path / "p.xlsx")
    assert not any(
        isinstance(c.value, str) and c.value.startswith(("=", "@", "+"))
        for ws in wb
        for row in ws
        for c in row
    )
    data = small_hall_data()
    rows = run_batch(grid_sweep("cells", data, {"description": ["@SUM(A1)", "-1+2"]}), tmp_path / "sweep")
    table = (tmp_path / "sweep" / "results.csv").read_text()
    assert "'@SUM(A1)" in table
    assert "'-1+2" in table
    assert len(rows) == 2
    assert [safe_cell(v) for v in ("+5", "-0.5", "\tx", 3)] == ["+5", "-0.5", "' x", 3]
    import pandas as pd

    frame = safe_frame(pd.DataFrame({"v": ["=1"]}, index=["@plan"]))
    assert (frame.index.tolist(), frame["v"].tolist()) == (["'@plan"], ["'=1"])
