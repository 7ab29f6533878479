"""CLI exit codes and messages: 0 ok, 1 verification failed, 2 bad input; no tracebacks."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from planner.plan import load_plan, save_plan
from planner.schema import Scenario
from tests.test_verify import make_plan, valid_spots

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "planner.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


def test_validate_ok() -> None:
    r = run("validate", "datasets/small-hall.yaml")
    assert r.returncode == 0
    assert "valid scenario 'small-hall'" in r.stdout
    assert "156 usable positions" in r.stdout
    lines = r.stdout.splitlines()
    assert lines[1] == "  cluster train-gt: grand-teton-h100 (21.4 kW, 16 GPUs) fits 156 of 156 positions"
    assert lines[2] == "  cluster nvl-infer: gb200-nvl72 (132.0 kW, 72 GPUs) fits 40 of 156 positions"


def test_validate_bad_input_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    shutil.copy(ROOT / "datasets/small-hall.site.yaml", tmp_path)
    bad.write_text(
        (ROOT / "datasets/small-hall.yaml").read_text().replace("max_hops: 5", "max_hops: 5\n    colour: red")
    )
    r = run("validate", str(bad))
    assert r.returncode == 2
    assert "clusters[0].colour: unknown key 'colour'" in r.stderr
    assert "Traceback" not in r.stderr


def test_hostile_file_exit_2(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    bad = tmp_path / "evil.yaml"
    bad.write_text(f"!!python/object/apply:os.system ['touch {marker}']\n")
    r = run("validate", str(bad))
    assert r.returncode == 2
    assert "could not determine a constructor" in r.stderr
    assert not marker.exists()


def test_verify_valid_and_invalid(tmp_path: Path, small_hall: Scenario) -> None:
    good = tmp_path / "good.yaml"
    save_plan(make_plan(small_hall, valid_spots()), good)
    r = run("verify", str(good), "datasets/small-hall.yaml")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "every constraint holds" in r.stdout
    bad = tmp_path / "bad.yaml"
    save_plan(make_plan(small_hall, [*valid_spots(), ("R03", 10, "grand-teton-h100", "train-gt")]), bad)
    r = run("verify", str(bad), "datasets/small-hall.yaml")
    assert r.returncode == 1
    assert "[placement] racks[20] (R03/10): position 10 is reserved" in r.stdout


def test_verify_missing_plan_exit_2() -> None:
    r = run("verify", "no-such-plan.yaml", "datasets/small-hall.yaml")
    assert r.returncode == 2
    assert "no-such-plan.yaml: 1 problem in the input:" in r.stderr
    assert "cannot read file: No such file or directory" in r.stderr


def test_debug_shows_traceback() -> None:
    r = run("--debug", "verify", "no-such-plan.yaml", "datasets/small-hall.yaml")
    assert r.returncode == 2
    assert "Traceback" in r.stderr


def test_plan_writes_verified_plan(tmp_path: Path) -> None:
    out = tmp_path / "dr.plan.yaml"
    r = run("plan", "datasets/dr-hall.yaml", "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].split() == ["GPUs", "864"]
    assert "solving max_gpus with highs" in r.stderr  # progress lines
    r = run("verify", str(out), "datasets/dr-hall.yaml")
    assert r.returncode == 0


@pytest.mark.parametrize(
    "flags",
    [["--solver", "cbc"], ["--time-limit", "30"], ["--gap", "0.01"]],
    ids=["cbc", "time-limit", "gap"],
)
def test_a_plan_made_with_command_line_solver_settings_verifies_against_its_scenario(
    tmp_path: Path, flags: list[str]
) -> None:
    """The scenario hash covers the planning question, not the solver settings; the plan records
    the settings it was made with beside it."""
    out = tmp_path / "p.yaml"
    r = run("plan", "datasets/small-hall.yaml", "-o", str(out), "--quiet", *flags)
    assert r.returncode == 0, r.stderr
    r = run("verify", str(out), "datasets/small-hall.yaml")
    assert r.returncode == 0, r.stdout
    plan = load_plan(out)
    want = {"--solver": ("name", "cbc"), "--time-limit": ("time_limit_s", 30.0), "--gap": ("rel_gap", 0.01)}[
        flags[0]
    ]
    assert getattr(plan.solver_settings, want[0]) == want[1]


def test_write_lp_hands_the_model_as_built_to_another_solver(tmp_path: Path) -> None:
    """The LP file of dr-hall, read by HiGHS on its own (no PuLP), has the plan's optimum (864
    GPUs, README "Greedy vs MILP") and rows named after the site's elements."""
    import highspy

    lp = tmp_path / "dr.lp"
    r = run("plan", "datasets/dr-hall.yaml", "--write-lp", str(lp), "--quiet")
    assert r.returncode == 0, r.stderr
    assert f"wrote {lp} (the model as built)" in r.stderr
    text = lp.read_text()
    assert "power_n1(" in text
    assert "load_def(" in text
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(lp))
    h.run()
    assert h.getInfo().objective_function_value == pytest.approx(864)


def test_plan_infeasible_exit_1_and_explain(tmp_path: Path) -> None:
    sc = tmp_path / "inf.yaml"
    shutil.copy(ROOT / "datasets/small-hall.site.yaml", tmp_path)
    sc.write_text(
        "name: inf\nsite: small-hall.site.yaml\n"
        "clusters: [{id: llama-train, demand: exact, gpus: 1536, rack_types: [grand-teton-h100], max_hops: "
        "5}]\n"
    )
    r = run("plan", str(sc), "--quiet")
    assert r.returncode == 1
    assert "infeasible: run `planner explain`" in r.stderr
    r = run("explain", str(sc), "--quiet")
    assert r.returncode == 1
    assert r.stdout.startswith("Cannot place llama-train at exactly 1,536 GPUs")
    assert (
        "cooling CZ-AIR (air): short by 828.4 kW for llama-train (limit 1,250 kW of which 24 kW is taken "
        "by network racks, needs 2,078.4 kW)" in r.stdout
    )


def test_bad_solver_flag_exit_2() -> None:
    r = run("plan", "datasets/small-hall.yaml", "--solver", "gurobi")
    assert r.returncode == 2
    assert "--solver: input should be 'highs' or 'cbc', got 'gurobi'" in r.stderr


def test_explain_feasible_names_binding_limits() -> None:
    r = run("explain", "datasets/dr-hall.yaml", "--quiet")
    assert r.returncode == 0
    assert r.stdout.startswith(
        "Plan for dr-hall: 864 GPUs (optimal); limits that bind or whose relaxation pays"
    )
    assert "  - power UPS-" in r.stdout
    assert "→ +96 GPUs" in r.stdout
    assert "re-solved from the base plan" in r.stdout


# ------------------------------------------------------------------ failing cleanly


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--design-kw", "-10"], "--design-kw: input should be greater than 0, got -10.0"),
        (["--positions", "20000"], "--positions: input should be less than or equal to 500, got 20000"),
        (["--halls", "10000"], "--halls: input should be less than or equal to 32, got 10000"),
        (["--design-kw", "nan"], "argument --design-kw: expected a finite number, got nan"),
        (["--positions", "ten"], "argument --positions: expected a positive whole number, got 'ten'"),
    ],
)
def test_bad_flags_exit_2_naming_the_flag(flags: list[str], expected: str) -> None:
    r = run("generate-site", *flags)
    assert r.returncode == 2, r.stderr
    assert expected in r.stderr
    assert "Traceback" not in r.stderr
    assert "pydantic" not in r.stderr


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("no-such-folder/plan.yaml", "-o no-such-folder/plan.yaml: folder no-such-folder does not exist"),
        ("datasets", "-o datasets: is a folder; give a file name to write"),
    ],
)
def test_output_path_checked_before_solving(output: str, expected: str) -> None:
    r = run("plan", "datasets/meta-24k-building.yaml", "-o", output)
    assert r.returncode == 2
    assert expected in r.stderr
    assert "solving" not in r.stderr  # refused before the model was even built


def test_time_limit_flag_must_be_positive() -> None:
    r = run("plan", "datasets/small-hall.yaml", "--time-limit", "0")
    assert r.returncode == 2
    assert "--time-limit: input should be greater than 0, got 0.0" in r.stderr


def test_a_work_limit_gives_the_same_plan_twice_and_is_part_of_the_run(tmp_path: Path) -> None:
    """--work-limit (branch-and-bound nodes, not seconds): two runs give the same racks and figures,
    the plan records the setting under its run hash and verifies; 0 nodes is bad input."""
    from planner.plan import load_plan

    plans = []
    for i in (1, 2):
        out = tmp_path / f"p{i}.plan.yaml"
        r = run("plan", "datasets/region-100k-pods.yaml", "--work-limit", "1", "-o", str(out), "--quiet")
        assert r.returncode == 0, r.stderr
        plans.append(load_plan(out))
    a, b = plans
    assert a.solver_settings.work_limit == 1
    assert (a.racks, a.kpis, a.objective_value, a.status) == (b.racks, b.kpis, b.objective_value, b.status)
    v = run("verify", str(tmp_path / "p1.plan.yaml"), "datasets/region-100k-pods.yaml")
    assert v.returncode == 0, v.stdout
    bad = run("plan", "datasets/small-hall.yaml", "--work-limit", "0")
    assert bad.returncode == 2
    assert "--work-limit: input should be greater than or equal to 1, got 0" in bad.stderr


def test_ctrl_c_prints_one_line_and_exits_130() -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "planner.cli",
            "plan",
            "datasets/region-100k.yaml",
            "--quiet",
            "--per-position",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.0)  # building 96k binaries takes longer than this
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert err.strip() == "interrupted"
    assert out == ""


def test_closed_pipe_exits_quietly() -> None:
    r = subprocess.run(
        f"set -o pipefail; {sys.executable} -m planner.cli generate-site --buildings 4 --halls 4 | head -1",
        shell=True,
        executable="/bin/bash",
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert r.stdout.startswith("id: generated")


def test_verify_against_another_scenario_is_one_line(tmp_path: Path) -> None:
    out = tmp_path / "dr.plan.yaml"
    assert run("plan", "datasets/dr-hall.yaml", "-o", str(out), "--quiet").returncode == 0
    r = run("verify", str(out), "datasets/small-hall.yaml")
    assert r.returncode == 1
    assert len(r.stdout.splitlines()) == 1
    assert "plan was made for 'dr-hall' (hash " in r.stdout
    assert "not 'small-hall' (hash " in r.stdout
