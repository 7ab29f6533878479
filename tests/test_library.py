"""The plan library (planner/plan/library.py): only plans that verify are stored; the best stored
plan of a scenario and mode is the proven optimum, else the smallest gap, else the most GPUs; every
ID keeps opening its own plan; a second Library on the same database (a server restart) sees it
all; the CLI stores, lists and writes plans out. The dashboard's use: tests/test_app.py and
tests/test_browser.py (a link reopened after a restart)."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.cli import main
from planner.enums import Status
from planner.input.loader import load_scenario
from planner.input.variants import scenario_yaml
from planner.plan import load_plan, save_plan
from planner.plan.library import Library, rank
from planner.plan.numbers import plan_figures
from planner.plan.pipeline import plan_scenario

DATASETS = Path(__file__).resolve().parent.parent / "datasets"


@pytest.fixture(scope="module")
def small():
    s = load_scenario(DATASETS / "small-hall.yaml")
    return s, plan_scenario(s)


def entry_of(plan, **changes) -> dict:
    return {"plan": plan.model_copy(update=changes).model_dump(mode="json"), "wall_s": 1.0}


def test_a_verified_plan_is_stored_and_survives_a_new_connection(small, tmp_path: Path) -> None:
    s, plan = small
    url = f"sqlite:///{tmp_path}/lib.sqlite"
    text = scenario_yaml(s)
    pid = Library(url).store(text, "small-hall", "joint", entry_of(plan), s)
    assert pid is not None
    again = Library(url)  # a restarted server
    got = again.get(pid)
    assert got["scenario_text"] == text
    assert got["entry"]["plan"]["kpis"]["gpus"] == 1080
    assert again.best(got["scenario_key"], "joint")[0] == pid
    assert again.best(got["scenario_key"], "rolling") is None
    assert [r["id"] for r in again.list()] == [pid]


def test_a_plan_that_does_not_verify_is_not_stored(small, tmp_path: Path) -> None:
    """A rack moved onto the reserved position R03/10 (small-hall.site.yaml) breaks the plan."""
    s, plan = small
    racks = list(plan.racks)
    racks[0] = racks[0].model_copy(update={"row": "R03", "position": 10})
    lib = Library(f"sqlite:///{tmp_path}/lib.sqlite")
    assert lib.store(scenario_yaml(s), "small-hall", "joint", entry_of(plan, racks=racks), s) is None
    assert lib.list() == []


def test_the_best_plan_is_the_proven_one_then_the_smallest_gap_then_the_most_gpus() -> None:
    rows = [
        ("feasible", 0.05, 1100),
        ("feasible", 0.01, 900),
        ("optimal", 0.0, 1000),
        ("feasible", None, 2000),
    ]
    assert sorted(rows, key=lambda r: rank(*r)) == [
        ("optimal", 0.0, 1000),
        ("feasible", 0.01, 900),
        ("feasible", 0.05, 1100),
        ("feasible", None, 2000),
    ]


def test_a_better_plan_replaces_a_worse_one_for_reuse_and_both_ids_still_open(small, tmp_path: Path) -> None:
    s, plan = small
    lib = Library(f"sqlite:///{tmp_path}/lib.sqlite")
    text = scenario_yaml(s)
    fewer = [r for r in plan.racks if r.cluster != "train-gt"] + [
        r for r in plan.racks if r.cluster == "train-gt"
    ][1:]
    gap = (1080 - 1064) / 1064  # the plan's bound stays 1,080 GPUs
    claims = {
        "racks": fewer,
        "status": Status.feasible,
        "objective_value": 1064.0,
        "gap": gap,
        "optimality": None,
    }
    smaller, _ = plan_figures(plan.model_copy(update=claims), s)
    worse = lib.store(text, "small-hall", "joint", {"plan": smaller.model_dump(mode="json")}, s)
    assert worse is not None
    better = lib.store(text, "small-hall", "joint", entry_of(plan), s)
    key = lib.get(worse)["scenario_key"]
    assert lib.best(key, "joint")[0] == better
    assert lib.get(worse)["entry"]["plan"]["kpis"]["gpus"] == 1080 - 16  # one Grand Teton rack fewer


def test_cli_stores_lists_and_writes_a_plan_out(small, tmp_path: Path, capsys) -> None:
    s, plan = small
    save_plan(plan, tmp_path / "p.plan.yaml")
    lib = ["library", "--library", f"sqlite:///{tmp_path}/lib.sqlite"]
    assert main([*lib, "store", str(tmp_path / "p.plan.yaml"), str(DATASETS / "small-hall.yaml")]) == 0
    pid = capsys.readouterr().out.split(" as plan ")[1].split()[0]
    assert main([*lib, "list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[1].split()[:5] == [pid, "small-hall", "joint", "optimal", "1,080"]
    out = tmp_path / "back.plan.yaml"
    assert main([*lib, "show", pid, "-o", str(out), "--scenario-out", str(tmp_path / "s.yaml")]) == 0
    assert load_plan(out).kpis.gpus == 1080
    assert load_scenario(tmp_path / "s.yaml").name == "small-hall"
    assert main([*lib, "show", "nope", "-o", str(out)]) == 2
    assert "id: the library holds no plan 'nope' (planner library list)" in capsys.readouterr().err
