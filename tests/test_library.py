"""The plan library (planner/library/__init__.py): only plans that verify are stored; the best stored
plan of a scenario and mode is the proven optimum, else the smallest gap, else the most GPUs; every
ID keeps opening its own plan; a second Library on the same database (a server restart) sees it
all; the CLI stores, lists and writes plans out. The dashboard's use: tests/test_app.py and
tests/test_browser.py (a link reopened after a restart)."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.cli import main
from planner.enums import Status
from planner.errors import InputError
from planner.input.loader import load_scenario
from planner.input.variants import scenario_yaml
from planner.library import Library, rank
from planner.plan import load_plan, save_plan
from planner.plan.numbers import plan_figures
from planner.plan.pipeline import plan_scenario

DATASETS = Path(__file__).resolve().parent.parent / "datasets"


@pytest.fixture(scope="module")
def small():
    s = load_scenario(DATASETS / "small-hall.yaml")
    return s, plan_scenario(s)


def one_rack_short(plan, s):
    """small-hall's plan less one Grand Teton rack (16 GPUs), stated feasible at the gap to the
    1,080-GPU optimum, its figures recomputed."""
    fewer = [r for r in plan.racks if r.cluster != "train-gt"] + [
        r for r in plan.racks if r.cluster == "train-gt"
    ][1:]
    claims = {
        "racks": fewer,
        "status": Status.feasible,
        "objective_value": 1064.0,
        "gap": (1080 - 1064) / 1064,  # the plan's bound stays 1,080 GPUs
        "optimality": None,
    }
    return plan_figures(plan.model_copy(update=claims), s)[0]


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
    smaller = one_rack_short(plan, s)
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


# --- a library that checks what it reads -----------------------------------------------------


def _tamper(url: str, pid: str, **columns) -> None:
    """Edit a stored row behind the library's back (as anyone with the database can)."""
    import sqlalchemy as sa

    from planner.library import PLANS

    with sa.create_engine(url).begin() as c:
        c.execute(PLANS.update().where(PLANS.c.id == pid).values(**columns))


def _inflated(entry: dict, gpus: int) -> str:
    import json

    e = json.loads(json.dumps(entry))
    e["plan"]["kpis"]["gpus"] = gpus
    return json.dumps(e)


def test_a_row_edited_in_the_database_is_listed_failing_and_never_opened_or_reused(
    small, tmp_path, capsys
) -> None:
    """A stored plan edited to 999,999 GPUs (the right figure is 1,080)."""
    s, plan = small
    url = f"sqlite:///{tmp_path}/lib.sqlite"
    text = scenario_yaml(s)
    pid = Library(url).store(text, "small-hall", "joint", entry_of(plan), s)
    _tamper(url, pid, gpus=999_999, entry=_inflated(entry_of(plan), 999_999))
    lib = Library(url)  # a new process: nothing memoised
    got = lib.get(pid)
    assert not got["valid"]
    assert got["why"].startswith("its plan does not verify against its scenario (")
    assert lib.best(got["scenario_key"], "joint") is None
    assert [(r["id"], r["valid"]) for r in lib.list()] == [(pid, False)]
    cli = ["library", "--library", url]
    assert main([*cli, "list"]) == 1
    out = capsys.readouterr().out
    assert f"plan {pid} fails its check: its plan does not verify against its scenario (" in out
    assert main([*cli, "show", pid, "-o", str(tmp_path / "p.yaml")]) == 1
    assert not (tmp_path / "p.yaml").exists()


def test_a_row_whose_columns_are_not_its_plan_is_refused(small, tmp_path) -> None:
    """Only the listed figure edited: the plan inside still verifies, the list would lie."""
    s, plan = small
    url = f"sqlite:///{tmp_path}/lib.sqlite"
    pid = Library(url).store(scenario_yaml(s), "small-hall", "joint", entry_of(plan), s)
    _tamper(url, pid, gpus=999_999)
    got = Library(url).get(pid)
    assert (got["valid"], got["why"]) == (
        False,
        "its listed figures (optimal, 999,999 GPUs) are not its plan's (optimal, 1,080 GPUs)",
    )


def test_only_a_proven_optimum_is_reused_as_the_answer(small, tmp_path) -> None:
    """A time-limited plan stored first (one rack short, feasible at a stated gap) is no answer to
    reuse; once the proven optimum is stored it is."""
    s, plan = small
    lib = Library(f"sqlite:///{tmp_path}/lib.sqlite")
    text = scenario_yaml(s)
    smaller = one_rack_short(plan, s)
    worse = lib.store(text, "small-hall", "joint", {"plan": smaller.model_dump(mode="json")}, s)
    key = lib.get(worse)["scenario_key"]
    assert lib.best(key, "joint", proven=True) is None
    assert lib.best(key, "joint")[0] == worse  # offered beside a new solve, never as its answer
    proven = lib.store(text, "small-hall", "joint", entry_of(plan), s)
    assert lib.best(key, "joint", proven=True)[0] == proven


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda d: "nosuchdb://x", "plan library nosuchdb://x: is no database URL the planner knows"),
        (lambda d: f"sqlite:///{d}", "cannot open the database file: is the path a folder"),
        (
            lambda d: (d / "junk.sqlite").write_bytes(b"x" * 4096) and f"sqlite:///{d}/junk.sqlite",
            "the file is not an SQLite database (damaged?): move it aside and a new library starts",
        ),
        (
            lambda d: "postgresql://planner:secret@127.0.0.1:9/plans",
            "plan library postgresql://planner:***@127.0.0.1:9/plans: the database server does not answer: "
            "is it running?",
        ),
    ],
)
def test_a_database_fault_is_bad_input_naming_the_library(make, said, tmp_path, capsys) -> None:
    url = make(tmp_path)
    assert main(["library", "--library", url, "list"]) == 2
    err = capsys.readouterr().err
    assert said in err
    assert "secret" not in err


def test_a_read_only_library_says_so(small, tmp_path, capsys) -> None:
    s, plan = small
    url = f"sqlite:///{tmp_path}/lib.sqlite"
    Library(url).put_scenario(scenario_yaml(s), "small-hall")
    (tmp_path / "lib.sqlite").chmod(0o444)
    ro = f"sqlite:///file:{tmp_path}/lib.sqlite?mode=ro&uri=true"
    with pytest.raises(InputError) as e:
        Library(ro).store(scenario_yaml(s), "small-hall", "joint", entry_of(plan), s)
    assert "the database is read-only: give a writable --library or $PLANNER_LIBRARY" in str(e.value)


def test_a_locked_library_says_so(small, tmp_path, monkeypatch) -> None:
    import sqlite3

    import planner.library as library

    s, _ = small
    path = tmp_path / "lib.sqlite"
    Library(f"sqlite:///{path}")
    holder = sqlite3.connect(path)
    holder.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(library, "BUSY_S", 0.2)
    try:
        with pytest.raises(InputError) as e:
            Library(f"sqlite:///{path}").put_scenario(scenario_yaml(s) + "# edited\n", "x")
    finally:
        holder.rollback()
    assert "another writer held the database" in str(e.value)


def _first_writer(url: str, i: int) -> str:
    from planner.library import Library

    return Library(url).put_scenario(f"name: s{i % 3}\n", f"s{i % 3}")


def test_twelve_first_writers_into_a_new_file_all_succeed(tmp_path) -> None:
    from concurrent.futures import ProcessPoolExecutor

    url = f"sqlite:///{tmp_path}/new/lib.sqlite"
    with ProcessPoolExecutor(12) as pool:
        keys = list(pool.map(_first_writer, [url] * 12, range(12)))
    assert len(set(keys)) == 3
    with Library(url).engine.connect() as c:
        import sqlalchemy as sa

        from planner.library import SCENARIOS

        assert c.execute(sa.select(sa.func.count()).select_from(SCENARIOS)).scalar() == 3
