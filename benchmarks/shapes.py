"""Speed on fleets you did not generate: 250,000- and 1,000,000-GPU fleets of three shapes, each
planned by ``planner plan --decompose building`` (process executor, 2 workers) in its own process
with the issue's limit (2 minutes at 250k, idle and with the cores oversubscribed 10× by the
benchmark's own load generator; 10 minutes at 1M, idle);
writes benchmarks/SHAPES.md. Never "no plan" where any stage found one; the gap is to the plan's
own stated bound (its source in the plan), verified by ``planner verify``.

Shapes (every cluster distinct): ``mixed`` (the shipped datasets/fleet-mixed-250k.gen.yaml:
log-uniform 256-16,384 GPUs), ``pod exact`` (an exact one-pod job of its own size and rack types
for 80 % of the pods, then at-least and as-many-as-fit jobs), ``small and huge`` (four building
jobs of 8,192-24,576 GPUs beside hundreds of 16-768-GPU jobs); specs in benchmarks/specs/.

    .venv/bin/python benchmarks/shapes.py            # about 30 minutes on 2 cores
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GEN = ROOT / "benchmarks" / "generated"
sys.path.insert(0, str(ROOT / "benchmarks"))
from limits import run  # noqa: E402
from load import busy, oversubscribed  # noqa: E402

SPECS = ROOT / "benchmarks" / "specs"
SHAPES = {
    ("mixed", "250k"): ROOT / "datasets" / "fleet-mixed-250k.gen.yaml",
    ("pod exact", "250k"): SPECS / "fleet-pod-exact-250k.gen.yaml",
    ("small and huge", "250k"): SPECS / "fleet-small-and-huge-250k.gen.yaml",
    ("mixed", "1M"): ROOT / "datasets" / "fleet-mixed-1m.gen.yaml",
    ("pod exact", "1M"): SPECS / "fleet-pod-exact-1m.gen.yaml",
    ("small and huge", "1M"): SPECS / "fleet-small-and-huge-1m.gen.yaml",
}
LIMIT_S = {"250k": 120.0, "1M": 600.0}
"""The issue's targets: every 250k fleet within 1 % in ≤ 2 minutes on 2 cores, every 1M fleet in
≤ 10 minutes (1M rows run idle only: ten minutes each under load would add an hour)."""


def generate(spec: Path) -> Path:
    """The fleet's site and scenario from its spec (same seed, same files); the scenario path."""
    GEN.mkdir(parents=True, exist_ok=True)
    name = spec.name.removesuffix(".gen.yaml")
    site, scen = GEN / f"{name}.site.yaml", GEN / f"{name}.yaml"
    subprocess.run(
        [sys.executable, "-m", "planner.cli", "generate-site", "--spec", str(spec), "-o", str(site)]
        + ["--scenario", str(scen)],
        check=True,
        cwd=ROOT,
        capture_output=True,
    )
    return scen


def main() -> None:
    t_all = time.perf_counter()
    spinners = oversubscribed(10)
    rows = []
    for (shape, size), spec in SHAPES.items():
        scen = generate(spec)
        clusters = sum(1 for ln in scen.read_text().splitlines() if ln.lstrip().startswith("- id: job-"))
        limit = LIMIT_S[size]
        for load in (0, spinners) if size == "250k" else (0,):
            flags = ["--decompose", "building", "--workers", "2"]
            if load:
                with busy(load):
                    time.sleep(1.0)
                    got = run(str(scen), flags, limit)
            else:
                got = run(str(scen), flags, limit)
            rows.append((shape, size, clusters, load, got))
            print(shape, load, got, file=sys.stderr, flush=True)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    L = [
        "# Fleets of three shapes: the decomposition idle and loaded",
        "",
        f"Written by `.venv/bin/python benchmarks/shapes.py` on {when} in "
        f"{(time.perf_counter() - t_all) / 60:.1f} minutes; machine: {machine}. Each row: `planner plan "
        "SCENARIO --decompose building --workers 2 --time-limit LIMIT` (120 s at 250k, 600 s at 1M) "
        "in its own process (wall from process start to exit; CPU of the process and its workers), "
        "then `planner verify`. Loaded: "
        f"{spinners} CPU spinners started and stopped by the benchmark. Gap: to the plan's own bound.",
        "",
        "| shape | size | clusters | load | status | GPUs | gap | verified | wall s | CPU s | wall ÷ limit |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for shape, size, clusters, load, g in rows:
        shown = "idle" if not load else f"{load} spinners"
        L.append(
            f"| {shape} | {size} | {clusters} | {shown} | {g['status']} | {g['gpus']} | {g['gap']} | "
            f"{g['verified']} | {g['wall']:.1f} | {g['cpu']:.1f} | {g['wall'] / LIMIT_S[size]:.2f} |"
        )
    (ROOT / "benchmarks" / "SHAPES.md").write_text("\n".join(L) + "\n")
    print("wrote benchmarks/SHAPES.md", file=sys.stderr)


if __name__ == "__main__":
    main()
