"""Scale at 5 GW: a generated Hyperion-sized region (benchmarks/specs/hyperion-5gw.gen.yaml and
hyperion-5gw.yaml: 68 structures, 16 quarters, 18 distinct clusters to 259,200 GPUs that span
buildings) planned by ``planner plan --decompose building --workers 2 --time-limit 600`` on the
process executor and on Dask (two local workers), each in its own process; wall from process start
to exit, CPU of the process and its workers, peak memory of the whole process tree (the sum of the
resident sets, sampled every 0.5 s), then ``planner verify``. Writes benchmarks/REGION-5GW.md.

    .venv/bin/python benchmarks/region5gw.py          # about 25 minutes on 2 cores
    .venv/bin/python benchmarks/region5gw.py --spec hyperion-5gw-fabrics   # the region on designed
        # fabrics and the BAG tier (specs/hyperion-5gw-fabrics*.yaml) → benchmarks/REGION-5GW-FABRICS.md
"""

from __future__ import annotations

import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from load import busy, oversubscribed, tree_rss  # noqa: E402

SPECS = ROOT / "benchmarks" / "specs"
GEN = ROOT / "benchmarks" / "generated"
LIMIT_S = 600.0
"""The issue's target: within 1 % of a proven bound in ≤ 10 minutes on 2 cores and ≤ 8 GB."""
PLANNER = str(ROOT / ".venv" / "bin" / "planner")


def generate(name: str) -> Path:
    """The site from its spec beside a copy of the scenario (inputs stay in their folder); the copy
    names the site ``hyperion-5gw.site.yaml`` as the specs do, so each spec is generated alone."""
    GEN.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SPECS / f"{name}.yaml", GEN / f"{name}.yaml")
    text = (
        (GEN / f"{name}.yaml").read_text().replace("site: hyperion-5gw.site.yaml", f"site: {name}.site.yaml")
    )
    (GEN / f"{name}.yaml").write_text(text)
    cmd = [PLANNER, "generate-site", "--spec", str(SPECS / f"{name}.gen.yaml")]
    subprocess.run([*cmd, "-o", str(GEN / f"{name}.site.yaml")], check=True, capture_output=True)
    return GEN / f"{name}.yaml"


def run(scenario: Path, executor: str) -> dict:
    """One planning process: status, GPUs, gap, bound source, wall, CPU, peak memory, verified."""
    out = Path(tempfile.mkdtemp()) / "plan.yaml"
    cmd = [PLANNER, "plan", str(scenario), "--decompose", "building", "--executor", executor]
    cmd += ["--workers", "2", "--time-limit", str(LIMIT_S), "-o", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as so, tempfile.TemporaryFile("w+") as se:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=so, stderr=se, text=True)
        peak = 0
        while proc.poll() is None:
            peak = max(peak, tree_rss(proc.pid))
            time.sleep(0.5)
        wall = time.perf_counter() - t0
        so.seek(0)
        se.seek(0)
        stdout, stderr = so.read(), se.read()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    def line(key: str, default: str) -> str:
        return next((ln.split()[-1] for ln in stdout.splitlines() if ln.startswith(key)), default)

    verified, phases, binds = False, "-", "-"
    if out.exists():
        plan = yaml.load(out.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        phases = f"{plan.get('objective_value') or 0:,.0f}"
        binds = _power_binds(plan, yaml.safe_load(scenario.read_text()))
        v = subprocess.run([PLANNER, "verify", str(out), str(scenario)], cwd=ROOT, capture_output=True)
        verified = v.returncode == 0
    if proc.returncode not in (0, 1):
        sys.stderr.write(stderr[-2000:])
    return {
        "status": line("status", "?"),
        "gpus": line("GPUs", "0"),
        "gap": line("gap", "-"),
        "wall": wall,
        "cpu": cpu,
        "peak_gb": peak / 1e9,
        "verified": verified,
        "phases": phases,
        "binds": binds,
    }


def _power_binds(plan: dict, scenario: dict) -> str:
    """The quarters whose facility load (IT × the design-day PUE, from the plan's phase summaries)
    is within 0.1 % of the power arrived by then (from the scenario), e.g. 'q1, q13, q14'."""
    order = [p["id"] for p in scenario["phases"]]
    pue = scenario.get("design_day_pue") or scenario.get("pue", 1.08)
    hit = []
    for p in plan.get("phases") or []:
        i = order.index(p["phase"])
        arrived = 1000.0 * sum(
            s.get("interconnect_mw", 0.0) + s.get("generation_mw", 0.0)
            for s in scenario["power_arrival"]
            if s.get("phase") is None or order.index(s["phase"]) <= i
        )
        if p["it_kw"] * pue >= 0.999 * arrived:
            hit.append(p["phase"])
    return ", ".join(hit) or "none"


def main() -> None:
    name = sys.argv[sys.argv.index("--spec") + 1] if "--spec" in sys.argv else "hyperion-5gw"
    t_all = time.perf_counter()
    scen = generate(name)
    rows = [(ex, run(scen, ex)) for ex in ("process", "dask")]
    with busy(oversubscribed(10)):  # the cores oversubscribed 10× by the benchmark's own spinners
        time.sleep(1.0)
        rows.append(("process, loaded", run(scen, "process")))
    for ex, g in rows:
        print(ex, g, file=sys.stderr, flush=True)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    proc_wall = rows[0][1]["wall"]
    L = [
        "# A 5 GW region: the decomposition at Hyperion scale"
        + (" on designed fabrics and the BAG tier" if name != "hyperion-5gw" else ""),
        "",
        f"Written by `.venv/bin/python benchmarks/region5gw.py` on {when} in "
        f"{(time.perf_counter() - t_all) / 60:.1f} minutes; machine: {machine}. Each row: `planner plan "
        f"benchmarks/generated/{name}.yaml --decompose building --executor EXECUTOR --workers 2 "
        f"--time-limit {LIMIT_S:.0f}` in its own process, then `planner verify`. Memory: the peak of the "
        "process tree's summed resident sets. Gap: to the plan's own stated bound. Targets: within 1 % "
        "in ≤ 600 s and ≤ 8 GB; Dask within 10 % of the process executor's wall time; loaded (the "
        f"cores oversubscribed 10× by {oversubscribed(10)} spinners): a verified plan within 1.25× the "
        "limit.",
        "",
        "| executor | status | GPUs by q16 | GPU-phases | gap | power binds in | verified | wall s | CPU s | "
        "peak GB | wall ÷ limit | ÷ process |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for ex, g in rows:
        L.append(
            f"| {ex} | {g['status']} | {g['gpus']} | {g['phases']} | {g['gap']} | {g['binds']} | "
            f"{g['verified']} | {g['wall']:.1f} | "
            f"{g['cpu']:.1f} | {g['peak_gb']:.2f} | {g['wall'] / LIMIT_S:.2f} | {g['wall'] / proc_wall:.2f} |"
        )
    out = "REGION-5GW.md" if name == "hyperion-5gw" else "REGION-5GW-FABRICS.md"
    (ROOT / "benchmarks" / out).write_text("\n".join(L) + "\n")
    print(f"wrote benchmarks/{out}", file=sys.stderr)


if __name__ == "__main__":
    main()
