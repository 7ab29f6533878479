"""Every write safe (SPEC §15): outputs never replace a device, FIFO or link; batch folders belong
to one sweep and one batch at a time; temporary files are never followed and never left behind; a
full disk or a file-size limit is an environment problem (exit 2) that keeps the old file."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from planner.batch.sweep import load_sweep, run_batch
from planner.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
TWELVE = Path(__file__).resolve().parent / "data" / "sweeps" / "twelve.yaml"


def cli(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "planner.cli", *args], capture_output=True, text=True, cwd=ROOT, **kw
    )


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root (CI runs as root)")
def test_a_device_given_as_output_survives_unchanged(tmp_path: Path) -> None:
    dev = tmp_path / "null"
    os.mknod(dev, 0o666 | 0o020000, os.makedev(1, 3))  # a character device: the system's /dev/null
    before = os.lstat(dev)
    for args in (
        ("plan", "datasets/small-hall.yaml", "-o", str(dev)),
        ("generate-site", "--buildings", "1", "-o", str(dev)),
    ):
        r = cli(*args)
        assert r.returncode == 2
        assert (
            f"-o {dev}: is a device; give a regular file or a new path in an existing folder (standard "
            "output: -o -)" in r.stderr
        )
        assert "solving" not in r.stderr
    after = os.lstat(dev)
    assert (after.st_mode, after.st_rdev, after.st_ino) == (before.st_mode, before.st_rdev, before.st_ino)


def test_a_fifo_or_a_link_given_as_output_is_refused_before_solving(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = cli("plan", "datasets/small-hall.yaml", "-o", str(fifo))
    assert (r.returncode, "is a FIFO" in r.stderr) == (2, True)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    link = tmp_path / "plan.yaml"
    link.symlink_to(victim)
    r = cli("plan", "datasets/small-hall.yaml", "-o", str(link))
    assert (r.returncode, "is a symbolic link" in r.stderr) == (2, True)
    assert victim.read_text() == "keep me\n"
    assert link.is_symlink()


def test_standard_output_is_dash(tmp_path: Path) -> None:
    r = cli("plan", "datasets/dr-hall.yaml", "-o", "-", "--quiet")
    assert r.returncode == 0
    assert r.stdout.startswith("planner_version: ")
    assert r.stderr.splitlines()[0].split() == ["GPUs", "864"]  # the summary moves to standard error


def test_without_output_the_plan_says_nothing_was_written() -> None:
    r = cli("plan", "datasets/dr-hall.yaml", "--quiet")
    assert (
        "no plan file written: give -o PLAN.yaml to keep it (-o - writes it to standard output)" in r.stderr
    )


def test_a_planted_temporary_file_link_is_never_followed(tmp_path: Path) -> None:
    """The results table used to go through a fixed DIR/.results.parquet.tmp: a link planted there
    overwrote its target. Temporary names are now unpredictable and created exclusively."""
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    for name in (".results.parquet.tmp", ".results.csv.tmp"):
        (out / name).symlink_to(victim)
    run_batch(load_sweep(TWELVE, ROOT), out)
    assert victim.read_text() == "keep me\n"
    assert len(pd.read_parquet(out / "results.parquet")) == 12


def test_a_plans_folder_that_links_out_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (out / "plans").symlink_to(elsewhere)
    with pytest.raises(InputError, match="plans/ is a symbolic link; give another folder"):
        run_batch(load_sweep(TWELVE, ROOT), out)
    assert list(elsewhere.iterdir()) == []


def test_a_results_folder_belongs_to_one_sweep(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = load_sweep(TWELVE, ROOT)
    run_batch(first, out)
    table = (out / "results.csv").read_text()
    other = first.__class__("another", first.params, first.points[:2])
    with pytest.raises(InputError) as err:
        run_batch(other, out)
    assert err.value.render().endswith(
        f"-o {out}: holds the results of sweep 'twelve', not 'another'; give another folder "
        "(rerunning the same sweep into its folder resumes it)"
    )
    assert (out / "results.csv").read_text() == table
    assert len(run_batch(first, out)) == 12  # the same sweep resumes: nothing to solve, every row kept


def test_a_copied_sweep_that_keeps_its_name_is_refused_and_the_table_kept(tmp_path: Path) -> None:
    """Same name 'twelve', another base figure: every solved point's run hash differs, so the folder
    is another sweep's (it used to re-solve and replace the whole table)."""
    import copy as _copy

    out = tmp_path / "out"
    first = load_sweep(TWELVE, ROOT)
    run_batch(first, out)
    table = (out / "results.csv").read_text()
    copied = _copy.deepcopy(first)
    for pt in copied.points:
        pt.data["description"] = "copied and edited"
    with pytest.raises(InputError) as err:
        run_batch(copied, out)
    text = err.value.render()
    assert f"-o {out}: its table holds 12 point(s) solved for other content (" in text
    assert "a results folder belongs to its sweep's content, not its name: give another folder" in text
    assert (out / "results.csv").read_text() == table


def test_a_second_batch_into_a_busy_folder_exits_2_naming_the_process(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "planner.cli",
            "batch",
            str(TWELVE),
            "-o",
            str(out),
            "--executor",
            "serial",
            "--data-root",
            str(ROOT),
            "--quiet",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lock = out / ".batch.lock"
    for _ in range(200):
        if lock.exists() and lock.read_text().strip():
            break
        time.sleep(0.05)
    r = cli("batch", str(TWELVE), "-o", str(out), "--executor", "serial", "--data-root", str(ROOT), "--quiet")
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert r.returncode == 2
    assert f"another batch is writing into this folder (process {first.pid})" in r.stderr
    assert len(pd.read_csv(out / "results.csv")) == 12  # every row of the first batch is there
    assert len(list((out / "plans").glob("*.plan.yaml"))) == 12


def test_stale_temporary_files_of_a_killed_run_are_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "plans").mkdir(parents=True)
    stale = [out / ".results.csv.abc123.tmp", out / "plans" / ".p01-x.plan.yaml.q1w2e3.tmp"]
    for f in stale:
        f.write_text("half a file")
    keep = out / "plans" / "notes.txt"
    keep.write_text("mine")
    run_batch(load_sweep(TWELVE, ROOT), out)
    assert [f.exists() for f in stale] == [False, False]
    assert keep.read_text() == "mine"


def test_a_file_size_limit_is_an_environment_problem_that_keeps_the_old_plan(tmp_path: Path) -> None:
    out = tmp_path / "plan.yaml"
    out.write_text("old: plan\n")

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    r = cli("plan", "datasets/small-hall.yaml", "-o", str(out), "--quiet", preexec_fn=small_files)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == f"error: cannot write {out}: File too large"
    assert out.read_text() == "old: plan\n"
    assert [p.name for p in tmp_path.iterdir()] == ["plan.yaml"]


def test_control_characters_in_keys_and_values_print_escaped(tmp_path: Path) -> None:
    """A key holding ESC [2J (clear screen), ESC ]0;… BEL (set the title) prints as escapes."""
    (tmp_path / "small-hall.site.yaml").write_text((ROOT / "datasets/small-hall.site.yaml").read_text())
    bad = tmp_path / "esc.yaml"
    bad.write_text(
        "name: t\nsite: small-hall.site.yaml\nclusters: [{id: a, gpus: 16, rack_types: [grand-teton-h100]}]\n"
        '"\\e[2Jfake\\e]0;pwned\\a": "\\rvalue"\n'
    )
    r = cli("validate", str(bad))
    assert r.returncode == 2
    assert not any(c in r.stderr for c in "\x1b\x07\r")
    assert "  - \\x1b[2Jfake\\x1b]0;pwned\\x07: unknown key '\\x1b[2Jfake\\x1b]0;pwned\\x07'" in r.stderr


def test_a_killed_plan_write_leaves_a_temporary_file_the_next_write_removes(tmp_path: Path) -> None:
    """A writer killed outright leaves .<name>.<pid>.<random>.tmp; the next plan -o of the same file
    removes it once that process is gone, and leaves a live writer's and a planted link alone."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out = tmp_path / "small.plan.yaml"
    left = tmp_path / f".small.plan.yaml.{dead.pid}.k1ll3d.tmp"
    left.write_text("half a plan")
    live = tmp_path / f".small.plan.yaml.{os.getpid()}.l1v3.tmp"
    live.write_text("being written")
    link = tmp_path / f".small.plan.yaml.{dead.pid}.l1nk.tmp"
    link.symlink_to(tmp_path / "target")
    assert cli("plan", "datasets/small-hall.yaml", "-o", str(out)).returncode == 0
    assert out.exists()
    assert not left.exists()
    assert live.exists()
    assert link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([out.name, live.name, link.name])


def test_verify_of_a_file_that_states_no_plan_checks_its_claims_only(tmp_path: Path) -> None:
    """A run out of time writes a plan with status time_limit and no racks: verify says so and exits 0
    (its unmet demands are what "no plan" states), while a rack added to it is a false claim."""
    from planner.plan import load_plan, save_plan

    out = tmp_path / "none.plan.yaml"
    r = cli("plan", "datasets/small-hall.yaml", "-o", str(out), "--time-limit", "0.001", "--quiet")
    assert r.returncode == 1
    v = cli("verify", str(out), "datasets/small-hall.yaml")
    assert v.returncode == 0
    assert v.stdout.strip() == (
        f"{out}: states no plan (time_limit) for scenario 'small-hall': nothing placed to check; its other "
        "figures hold"
    )
    full = tmp_path / "full.plan.yaml"
    assert cli("plan", "datasets/small-hall.yaml", "-o", str(full), "--quiet").returncode == 0
    lying = load_plan(out).model_copy(update={"racks": load_plan(full).racks[:1]})
    save_plan(lying, tmp_path / "lying.plan.yaml")
    assert cli("verify", str(tmp_path / "lying.plan.yaml"), "datasets/small-hall.yaml").returncode == 1


def _bundle(tmp_path: Path) -> tuple[Path, list[str]]:
    """small-hall's plan and the export command of its NetBox bundle into tmp_path/bundle."""
    plan = tmp_path / "p.plan.yaml"
    assert cli("plan", "datasets/small-hall.yaml", "-o", str(plan), "--quiet").returncode == 0
    out = tmp_path / "bundle"
    return out, ["export", str(plan), "datasets/small-hall.yaml", "--format", "netbox", "-o", str(out)]


def test_a_bundle_that_cannot_be_written_whole_leaves_the_old_one_as_it_was(tmp_path: Path) -> None:
    """A file-size limit (as a full disk) hit at the racks CSV: no file of the old bundle changed,
    no new file, no temporary folder left."""
    out, export = _bundle(tmp_path)
    assert cli(*export).returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))

    (tmp_path / "p.plan.yaml").write_text((tmp_path / "p.plan.yaml").read_text())  # same plan
    r = cli(*export, "--prefix", "new-", preexec_fn=small_files)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == f"error: cannot write {out}: File too large"
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle", "p.plan.yaml"]


def test_a_link_planted_in_the_bundle_folder_is_refused_before_any_file_is_written(tmp_path: Path) -> None:
    out, export = _bundle(tmp_path)
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    (out / "07-racks.csv").symlink_to(victim)
    r = cli(*export)
    assert r.returncode == 2
    assert f"-o {out}/07-racks.csv: is a symbolic link" in r.stderr
    assert [p.name for p in out.iterdir()] == ["07-racks.csv"]
    assert victim.read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle", "p.plan.yaml", "victim.txt"]
