"""Reproducible installs: requirements.lock pins every direct requirement of pyproject.toml
at a version its specifier allows, with hashes; scripts/setup installs from it into .venv."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent


def _locked() -> dict[str, str]:
    text = (ROOT / "requirements.lock").read_text()
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==([^\s;\\]+)", text, flags=re.MULTILINE))
    return {canonicalize_name(k): v for k, v in pins.items()}


def _direct() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for group in project.get("optional-dependencies", {}).values():
        reqs += group
    return [Requirement(r) for r in reqs]


def test_lock_pins_every_direct_requirement_within_its_range() -> None:
    """Drift check: a direct requirement added, or its range changed, without re-running scripts/lock fails
    here."""
    pins = _locked()
    drift = []
    for req in _direct():
        name = canonicalize_name(req.name)
        if name not in pins:
            drift.append(f"{req.name}: not in requirements.lock")
        elif not req.specifier.contains(pins[name], prereleases=True):
            drift.append(f"{req.name}: locked {pins[name]} is outside {req.specifier}")
        for extra in req.extras:  # dask[distributed] pulls distributed
            if extra == "distributed" and "distributed" not in pins:
                drift.append(f"{req.name}[{extra}]: distributed not in requirements.lock")
    assert not drift, "requirements.lock drifted from pyproject.toml (run scripts/lock):\n" + "\n".join(drift)


def test_lock_is_hashed_and_highspy_avoids_the_bad_mip_start_release() -> None:
    text = (ROOT / "requirements.lock").read_text()
    entries = re.findall(
        r"^[A-Za-z0-9_.-]+==\S+ \\\n(?:\s+--hash=sha256:[0-9a-f]{64}(?: \\)?\n)+", text, flags=re.MULTILINE
    )
    assert len(entries) == len(_locked())
    assert _locked()["highspy"] != "1.16.0"


def test_setup_installs_from_the_lock_into_a_venv() -> None:
    setup = (ROOT / "scripts/setup").read_text()
    assert "-m venv .venv" in setup
    assert "--require-hashes -r requirements.lock" in setup
    for script in ("scripts/test", "scripts/dashboard"):
        assert "scripts/setup" in (ROOT / script).read_text()
        assert ".venv/bin/python -m" in (ROOT / script).read_text()


def test_setup_says_what_it_is_doing(tmp_path) -> None:
    """A first start says what it installs before the quiet pip run; a later one says it is up to
    date. Run on a copy whose stamp is stale, with pip replaced by a recorder (no network)."""
    import shutil
    import subprocess

    work = tmp_path / "repo"
    (work / "scripts").mkdir(parents=True)
    for name in ("scripts/setup", "requirements.lock", "pyproject.toml"):
        shutil.copy(ROOT / name, work / name)
    venv_bin = work / ".venv/bin"
    venv_bin.mkdir(parents=True)
    fake = venv_bin / "python"
    fake.write_text('#!/bin/sh\necho "$@" >> "$(dirname "$0")/calls"\n')
    fake.chmod(0o755)
    first = subprocess.run(["bash", "scripts/setup"], cwd=work, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    packages = sum(1 for line in (ROOT / "requirements.lock").read_text().splitlines() if "==" in line)
    assert first.stderr.splitlines() == [
        f"setup: installing {packages} pinned packages from requirements.lock into .venv (about 2 minutes "
        "on a fresh machine; pip's own output is quiet)",
        "setup: installing the planner itself (editable: .venv/bin/planner runs this checkout)",
        "setup: installed",
    ]
    assert "--require-hashes -r requirements.lock" in (venv_bin / "calls").read_text()
    again = subprocess.run(["bash", "scripts/setup"], cwd=work, capture_output=True, text=True, timeout=60)
    assert again.stderr.splitlines() == [
        "setup: packages up to date (requirements.lock unchanged since the last install)"
    ]
