"""Benchmark the planner; writes benchmarks/RESULTS.md.

Each measurement runs in its own Python process, so peak memory (ru_maxrss) belongs
to that run alone. Timings on a shared 2-core machine are noisy: compare them as
ratios within one run, not across runs.

    .venv/bin/python benchmarks/run.py            # the default rows (about 2 minutes on 2 cores)
    # adds per-position, CBC, min_capex and the 1M-GPU scale rows (about 5 minutes more):
    .venv/bin/python benchmarks/run.py --full
    .venv/bin/python benchmarks/run.py --worker plan small-hall aggregated highs 60   # one measurement (JSON)

Scale sites are generated into benchmarks/generated/ (not committed) by the same
``planner generate-site`` command the README shows; each row states its command.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GEN = ROOT / "benchmarks" / "generated"
sys.path.insert(0, str(ROOT))
MACHINE = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
"""The machine absolute figures were measured on (stated next to every absolute target)."""

REFERENCE = [
    "small-hall",
    "dr-hall",
    "meta-24k-building",
    "meta-24k-binpack",
    "region-100k",
    "region-100k-pods",
]

SCALE = {
    # name: (generate-site flags, clusters: "building" = one per building (max_hops 5) | "pod" = one 3,072-GPU
    # job per pod (max_hops 3))
    "1m-per-building": (
        "--buildings 40 --halls 2 --pods-per-hall 4 --rows-per-pod 12 --positions 17",
        "building",
    ),
    "500k-per-pod": ("--buildings 20 --halls 2 --pods-per-hall 4 --rows-per-pod 12 --positions 17", "pod"),
    "1m-per-pod": ("--buildings 40 --halls 2 --pods-per-hall 4 --rows-per-pod 12 --positions 17", "pod"),
}


def power_bound(scenario) -> int:
    """Usable IT power ÷ per-GPU power: Σ usable kW of root power nodes, less the network racks,
    ÷ the least kW per GPU among the allowed GPU rack types (ignores cooling, space, ports and N-1)."""
    from planner.input.site_index import index_site, network_racks

    ix = index_site(scenario.site)
    usable = sum(n.usable_kw for n in ix.power_nodes.values() if n.parent is None)
    usable -= sum(scenario.rack_power_kw(t) for _, _, t in network_racks(scenario))
    types = scenario.catalog.by_id()
    per_gpu = min(
        scenario.rack_power_kw(types[t]) / types[t].gpus
        for c in scenario.clusters
        for t in c.rack_types
        if types[t].gpus
    )
    return int(usable / per_gpu)


def _scale_scenario(name: str) -> Path:
    """Write (once) the generated site and scenario of a scale case; return the scenario path."""
    flags, clusters = SCALE[name]
    GEN.mkdir(parents=True, exist_ok=True)
    site = GEN / f"{name}.site.yaml"
    if not site.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "planner.cli",
                "generate-site",
                "--id",
                name,
                *flags.split(),
                "-o",
                str(site),
            ],
            check=True,
            cwd=ROOT,
            capture_output=True,
        )
    from planner.input.loader import load_site

    s = load_site(site)
    if clusters == "building":
        rows = [
            f"  - {{id: {b.id.lower()}, demand: max, rack_types: [grand-teton-h100], max_hops: 5}}"
            for b in s.buildings
        ]
    else:
        pods = [p.id for b in s.buildings for h in b.halls for p in h.pods]
        rows = [
            f"  - {{id: job-{i + 1}, demand: max, gpus: 3072, rack_types: [grand-teton-h100], max_hops: 3}}"
            for i in range(len(pods))
        ]
    path = GEN / f"{name}.yaml"
    path.write_text(
        f"name: {name}\nsite: {site.name}\nclusters:\n"
        + "\n".join(rows)
        + "\nsolver: {name: highs, time_limit_s: 600, rel_gap: 0.01}\n"
    )
    return path


def _phased_meta(phases: int) -> Path:
    """meta-24k-building over ``phases`` quarters: two 3,072-GPU jobs more each quarter (eight in all)."""
    GEN.mkdir(parents=True, exist_ok=True)
    (GEN / "meta-24k-building.site.yaml").write_text(
        (ROOT / "datasets" / "meta-24k-building.site.yaml").read_text()
    )
    per = 8 // phases
    lines = [f"name: meta-24k-{phases}phases", "site: meta-24k-building.site.yaml", "phases:"]
    lines += [f"  - {{id: q{i + 1}, start: 2026-{1 + 3 * i:02d}-01}}" for i in range(phases)]
    lines.append("clusters:")
    for j in range(8):
        q = min(j // per, phases - 1) + 1
        lines.append(
            f"  - {{id: train-{j + 1}, demand: max, gpus_by_phase: {{q{q}: 3072}}, "
            "rack_types: [grand-teton-h100], max_hops: 3}"
        )
    lines.append("solver: {name: highs, time_limit_s: 60, rel_gap: 0.005}")
    path = GEN / f"meta-24k-{phases}phases.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _spread_meta() -> Path:
    """meta-24k-building as two 12,288-GPU building-wide jobs, each with at most a quarter of its
    GPUs in any one pod or cooling zone, a tenth behind any one power node, and 1 TB/s of
    checkpoint write (storage racks placed in the building)."""
    GEN.mkdir(parents=True, exist_ok=True)
    (GEN / "meta-24k-building.site.yaml").write_text(
        (ROOT / "datasets" / "meta-24k-building.site.yaml").read_text()
    )
    lines = ["name: meta-24k-spread", "site: meta-24k-building.site.yaml", "clusters:"]
    for j in (1, 2):
        lines.append(
            f"  - {{id: train-{j}, demand: max, gpus: 12288, rack_types: [grand-teton-h100], max_hops: 5, "
            "max_share_per_pod: 0.25, "
            "max_share_per_cooling_zone: 0.25, max_share_per_power_node: 0.1, storage_write_gb_per_s: "
            "1000, checkpoint_gb_per_gpu: 2}"
        )
    lines.append("solver: {name: highs, time_limit_s: 60, rel_gap: 0.005}")
    path = GEN / "meta-24k-spread.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _scenario(name: str, solver: str, time_limit: float, objective: str | None = None):
    from planner.input.loader import load_scenario

    if name.startswith("meta-24k-") and name.endswith("phases"):
        path = _phased_meta(int(name.removeprefix("meta-24k-").removesuffix("phases")))
    elif name == "meta-24k-spread":
        path = _spread_meta()
    else:
        path = _scale_scenario(name) if name in SCALE else ROOT / "datasets" / f"{name}.yaml"
    t0 = time.perf_counter()
    s = load_scenario(path)
    load_s = time.perf_counter() - t0
    data = s.model_dump(mode="json")
    data["solver"].update(name=solver, time_limit_s=time_limit)
    if objective:
        data["objective"] = objective
        for c in data["clusters"]:  # a covering question: each job gets at least its GPUs, at least cost
            if c.get("gpus"):
                c["demand"] = "at_least"
    return type(s).model_validate(data), load_s


def worker(kind: str, name: str, mode: str, solver: str, time_limit: float) -> dict:
    """One measurement in this process: ``plan`` (stage by stage), ``greedy``."""
    from planner.model import build
    from planner.plan import load_plan, save_plan
    from planner.plan.fill import start_from_racks
    from planner.plan.first_fit import greedy_plan, start_racks
    from planner.plan.pipeline import to_plan
    from planner.solving.core import solve

    objective = "min_capex" if mode == "min-capex" else None
    s, load_s = _scenario(name, solver, time_limit, objective)
    out: dict = {"scenario": name, "mode": mode, "solver": solver, "load_s": load_s}
    if kind == "greedy":
        t0 = time.perf_counter()
        g = greedy_plan(s)
        out.update(gpus=g.kpis.gpus, greedy_s=time.perf_counter() - t0)
    elif (
        kind == "plantotal"
        # what `planner plan` runs, in this process: load + plan_scenario (first-fit start, solve, tie-breaks,
        # fill, verify)
    ):
        from planner.plan.pipeline import plan_scenario

        t0 = time.perf_counter()
        plan = plan_scenario(s)
        out.update(
            total_s=time.perf_counter() - t0 + load_s,
            status=str(plan.status),
            gap=plan.gap,
            gpus=plan.kpis.gpus,
        )
    elif kind == "policy":
        from planner.plan.pipeline import plan_scenario, strict_n1

        t0 = time.perf_counter()
        plan = plan_scenario(strict_n1(s) if mode == "strict" else s)
        k = plan.kpis
        out.update(
            total_s=time.perf_counter() - t0,
            status=str(plan.status),
            gap=plan.gap,
            gpus=k.gpus,
            stranded_kw=k.stranded_kw,
            usable_kw=sum(
                u.limit for u in plan.utilisation if u.kind == "power_node" and u.id.startswith("UPS")
            ),
            shed={c.cluster: c for c in []},
            notes=[n for n in plan.notes if n.startswith("failover")],
        )
        out.pop("shed")
    elif kind == "fabric":
        from planner.enums import Demand, Objective
        from planner.plan.pipeline import plan_scenario

        if mode == "choice-capex":  # every GPU at the least capex: the pick by price
            s = s.model_copy(
                update={
                    "objective": Objective.min_capex,
                    "clusters": [c.model_copy(update={"demand": Demand.exact}) for c in s.clusters],
                }
            )
        elif mode != "choice":
            s = s.model_copy(
                update={"clusters": [c.model_copy(update={"fabrics": [mode]}) for c in s.clusters]}
            )
        t0 = time.perf_counter()
        plan = plan_scenario(s)
        k = plan.kpis
        f = plan.fabric[0]
        out.update(
            total_s=time.perf_counter() - t0,
            status=str(plan.status),
            gap=plan.gap,
            gpus=k.gpus,
            design=f.design,
            tiers=f.switches,
            switches=k.switches,
            optics=k.optics,
            fabric_kw=k.fabric_kw,
            fabric_capex_usd=k.fabric_capex_usd,
            fabric_usd_per_gpu=k.fabric_usd_per_gpu,
            max_hops=f.max_hops,
            network_racks=f.racks_placed,
            positions_by_pod=f.positions_by_pod,
            mw_by_pod=f.kw_by_pod,
            capex_usd=k.capex_usd,
            region_links=f.region_links,
            region_switches=f.region_switches,
            fibre_km=f.fibre_km,
            latency_us=f.latency_us,
            buildings=f.endpoints_by_building,
        )
    elif kind == "blast":
        from planner.plan.pipeline import plan_scenario
        from planner.rules.reliability import reliability_report

        plan = plan_scenario(s)
        t0 = time.perf_counter()
        rep = reliability_report(s, plan.racks)
        out.update(
            blast_s=time.perf_counter() - t0,
            elements=len(rep.blast_radius),
            gpus=plan.kpis.gpus,
            worst=rep.blast_radius[0].kind + " " + rep.blast_radius[0].id,
            worst_gpus=rep.blast_radius[0].gpus_lost,
        )
    elif (
        kind == "region"
    ):  # the gigawatt region: decomposed by building (2 processes), rolling, or the whole model joint
        from planner.plan.kpis import capex_parts
        from planner.plan.rolling import plan_mode
        from planner.plan.structures import region_power, structures
        from planner.scale.decompose import plan_decomposed

        t0 = time.perf_counter()
        plan = (
            plan_decomposed(s, executor="process", workers=2).plan
            if mode == "decomposed"
            else plan_mode(s, mode)
        )
        k = plan.kpis
        backup: dict[str, int] = {}
        for b in plan.reliability.backup if plan.reliability else []:
            backup[b.design] = backup.get(b.design, 0) + 1
        out.update(
            total_s=time.perf_counter() - t0,
            status=str(plan.status),
            gap=plan.gap,
            bound=plan.bound,
            objective=plan.objective_value,
            gpus=k.gpus if plan.status.has_plan else 0,
            capex_usd=k.capex_usd,
            parts=capex_parts(k),
            tco_usd=k.tco_usd,
            usd_per_gpu_hour=k.usd_per_gpu_hour,
            usd_per_useful_gpu_hour=k.usd_per_useful_gpu_hour,
            it_mw=k.it_kw / 1000,
            tents=[f"{x.building} ({x.bought})" for x in structures(s, plan) if x.retrofit and x.built],
            tents_usd=_tents_usd(s, plan),
            power=[
                [p.phase, p.facility_kw / 1000, None if p.arrived_kw is None else p.arrived_kw / 1000]
                for p in region_power(s, plan)
            ],
            phase_gpus=[p.gpus for p in plan.phases],
            binds=_what_binds(s, plan),
            grid=_grid_figures(plan),
            backup=backup,
            note=plan.notes[0] if plan.notes else "",
            stages={k_: round(v, 1) for k_, v in plan.stage_times_s.items()},
        )
    elif (
        kind == "stochastic"
        # what `planner plan --mode stochastic` runs: the two-stage model, perfect information, the
        # mean-demand
        # plan
    ):
        from planner.plan.stochastic import plan_stochastic
        from planner.verifier import verify

        t0 = time.perf_counter()
        plan = plan_stochastic(s)
        st = plan.stochastic
        out.update(
            total_s=time.perf_counter() - t0,
            status=str(st.status),
            gap=st.gap,
            expected=st.expected_objective,
            evpi=st.evpi,
            mean=st.mean_expected,
            vss=st.vss,
            expected_tco_usd=st.expected_tco_usd,
            verified=verify(plan, s).ok,
            futures=[
                (
                    o.id,
                    o.probability,
                    o.gpus,
                    o.objective_value,
                    o.regret,
                    o.stranded_kw,
                    o.mean_objective,
                    o.mean_stranded_kw,
                )
                for o in st.futures
            ],
        )
    elif kind in ("joint", "rolling"):
        from planner.plan.rolling import plan_mode

        t0 = time.perf_counter()
        plan = plan_mode(s, kind)
        k = plan.kpis
        out.update(
            total_s=time.perf_counter() - t0,
            status=str(plan.status),
            gap=plan.gap,
            objective=plan.objective_value,
            gpus=k.gpus if plan.status.has_plan else 0,
            capex_usd=k.capex_usd,
            tco_usd=k.tco_usd,
            usd_per_gpu_hour=k.usd_per_gpu_hour,
            retrofits=[f"{b.id} ({b.phase})" for b in plan.retrofits],
            stranded_kw=k.stranded_kw,
        )
        from planner.model import build

        m = build(s)
        out.update(m.size)
    else:
        t_all = time.perf_counter()
        t0 = time.perf_counter()
        m = build(s, aggregate=(mode != "per-position"), group_clusters=(mode != "per-cluster"))
        out["build_s"] = time.perf_counter() - t0
        out.update(m.size)
        start = None
        if mode in ("start", "per-cluster-start", "min-capex"):
            t0 = time.perf_counter()
            racks, how = start_racks(s)
            start = start_from_racks(m, racks)
            out["greedy_s"] = time.perf_counter() - t0
            out["start"] = how
        r = solve(m, None, time_limit, tie_breaks=(mode == "full"), start=start)
        out.update(
            solve_s=r.solve_time_s, status=str(r.status), gap=r.gap, objective=r.objective, bound=r.bound
        )
        if r.objective is not None:
            t0 = time.perf_counter()
            plan = to_plan(m, r, out["build_s"], solver)  # fills positions and verifies the plan
            out["fill_verify_s"] = time.perf_counter() - t0
            out["gpus"] = plan.kpis.gpus
            out["capex_usd"] = plan.kpis.capex_usd
            if name in SCALE:
                path = GEN / f"{name}.plan.yaml"
                t0 = time.perf_counter()
                save_plan(plan, path)
                out["save_s"] = time.perf_counter() - t0
                t0 = time.perf_counter()
                load_plan(path)
                out["load_plan_s"] = time.perf_counter() - t0
                out["plan_mb"] = path.stat().st_size / 1e6
        out["total_s"] = time.perf_counter() - t_all + load_s
        out["power_bound"] = power_bound(s)
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def time_limited_cli(name: str, limit_s: float) -> dict:
    """`planner plan SCENARIO --time-limit L -o PLAN` in a fresh process, wall-clocked from outside:
    the time limit bounds the whole run, loading and writing included."""
    path = _scale_scenario(name)
    out = GEN / f"{name}.limited.plan.yaml"
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "planner.cli",
            "plan",
            str(path),
            "--time-limit",
            str(limit_s),
            "-o",
            str(out),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=limit_s * 10 + 120,
    )
    wall = time.perf_counter() - t0
    status = next(
        (line.split()[-1] for line in proc.stdout.splitlines() if line.startswith("status")),
        f"exit {proc.returncode}",
    )
    print(f"  time-limited {name} {limit_s:g} s: {wall:.1f} s wall, {status}", file=sys.stderr)
    return {"scenario": name, "limit_s": limit_s, "wall_s": wall, "status": status, "exit": proc.returncode}


def measure(kind: str, name: str, mode: str = "cold", solver: str = "highs", time_limit: float = 60) -> dict:
    """Run :func:`worker` in a fresh process and return its figures."""
    cmd = [sys.executable, __file__, "--worker", kind, name, mode, solver, str(time_limit)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=time_limit * 4 + 600)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        print(f"  {name} {mode} {solver}: FAILED {tail}", file=sys.stderr)
        return {"scenario": name, "mode": mode, "solver": solver, "error": tail[0]}
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    data["wall_s"] = time.perf_counter() - t0
    print(
        f"  {kind:6s} {name:20s} {mode:16s} {solver:6s} {data.get('status', '-'):10s} "
        f"gpus={data.get('gpus')} "
        f"solve={data.get('solve_s', 0):.2f}s total={data.get('total_s', data.get('greedy_s', 0)):.2f}s",
        file=sys.stderr,
    )
    return data


def explain_region(limit_s: float = 120) -> dict:
    """``planner explain datasets/prometheus-1gw-allowance.yaml --decompose building --time-limit LIMIT``
    in its own process: wall seconds from start to exit, and the relaxation lines it prints (a limit and
    what raising it gains)."""
    cmd = [str(ROOT / ".venv" / "bin" / "planner"), "explain", "datasets/prometheus-1gw-allowance.yaml"]
    cmd += ["--decompose", "building", "--time-limit", f"{limit_s:g}"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=limit_s * 4 + 300)
    wall = time.perf_counter() - t0
    gains = [ln.strip(" -") for ln in proc.stdout.splitlines() if "→" in ln]
    print(f"  explain prometheus-1gw-allowance: exit {proc.returncode}, {wall:.1f} s", file=sys.stderr)
    return {"exit": proc.returncode, "total_s": wall, "gains": gains, "limit_s": limit_s}


def _f(x, fmt="{:.2f}") -> str:
    return "-" if x is None else fmt.format(x)


def _gap(r: dict) -> str:
    return "-" if r.get("gap") is None else f"{r['gap']:.3%}"


def _n(x) -> str:
    return "-" if x is None else f"{x:,}"


def futures_table(f: dict) -> list[str]:
    """The two-stage plan of fleet-futures: per future, and the expected figures."""
    L = [
        "",
        "## Uncertain demand: two-stage plan (datasets/fleet-futures.yaml, HiGHS)",
        "",
        "`planner plan datasets/fleet-futures.yaml --mode stochastic`: one first phase (h1) for three "
        "futures of NVL72 demand. "
        "Objective max_gpus over phases (GPU-phases); regret against the plan that knew the future; the "
        "mean-demand plan keeps its own "
        "first phase and re-plans the later phases in each future.",
        "",
    ]
    if "error" in f:
        return [*L, f"error: {f['error']}"]
    L += [
        "| future | probability | GPUs at the end | objective | regret | stranded kW | mean-demand plan "
        "objective | its stranded kW |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for fid, p, gpus, obj, regret, stranded, mean, mean_str in f.get("futures", []):
        L.append(
            f"| {fid} | {p:g} | {_n(gpus)} | {_f(obj, '{:,.1f}')} | {_f(regret, '{:,.1f}')} | "
            f"{_f(stranded, '{:,.1f}')} | {_f(mean, '{:,.1f}')} | {_f(mean_str, '{:,.1f}')} |"
        )
    L += [
        "",
        f"Expected objective {_f(f.get('expected'), '{:,.1f}')} ({f.get('status')}, gap {_gap(f)}), EVPI "
        f"{_f(f.get('evpi'), '{:,.1f}')}, "
        f"mean-demand plan {_f(f.get('mean'), '{:,.1f}')}, VSS {_f(f.get('vss'), '{:,.1f}')}; expected TCO "
        f"${_f(f.get('expected_tco_usd'), '{:,.0f}')}; "
        f"{_f(f.get('total_s'))} s in all; every future's plan verified: {f.get('verified')}.",
    ]
    rf = f.get("refresh", {})
    L += [
        "",
        f"Refresh (datasets/hall-refresh.yaml, `planner plan`, joint): {rf.get('status')}, gap {_gap(rf)}, "
        f"{_n(rf.get('gpus'))} GPUs at the end, "
        f"{_f(rf.get('objective'), '{:,.0f}')} GPU-phases, capex ${_f(rf.get('capex_usd'), '{:,.0f}')}, "
        f"TCO ${_f(rf.get('tco_usd'), '{:,.0f}')}, "
        f"{_f(rf.get('total_s'))} s.",
    ]
    return L


def _grid_figures(plan) -> dict | None:
    """§21 figures of a region plan, per quarter and over the horizon (from its grid report)."""
    g = plan.grid
    if g is None or not g.phases:
        return None
    last = g.phases[-1]
    return {
        "swing": [
            [
                p.phase,
                p.swing_mw,
                p.swing_cluster,
                p.accepted_mw,
                sum(p.storage_mw.values()),
                sum(p.floor_mw.values()),
            ]
            for p in g.phases
        ],
        "storage_usd": g.storage_capex_usd,
        "tco_usd": g.tco_usd,
        "energy_q8": {k: v / 1000 for k, v in sorted(last.energy_mwh_per_year.items())},
        "t_co2_q8": last.t_co2_per_year,
        "t_co2": g.t_co2,
        "water_q8": last.water_m3_per_year,
        "peak_q8": last.peak_water_l_per_s,
    }


def _what_binds(s, plan) -> list[str]:
    """Per phase, in words: "demand" when every cluster got the GPUs it asks for then; else "power
    arrived" when the facility load is within 0.1 % of the power arrived; else, in the last phase,
    the limit that strands the most power (the plan's stranded power); else the phase's tightest
    limit as the plan states it."""
    from planner.input.timeline import timeline
    from planner.plan.structures import region_power

    tl = timeline(s)
    types = s.catalog.by_id()
    power = {p.phase: p for p in region_power(s, plan)}
    out = []
    for i, ph in enumerate(plan.phases):
        short = []
        for c in s.clusters:
            want = tl.demand(c, i)
            got = sum(
                types[r.rack_type].gpus
                for r in plan.racks
                if r.cluster == c.id and not r.spare and s.phase_at.get(r.phase, 0) <= i
            )
            if want is None or got < want:
                short.append(c.id)
        p = power.get(ph.phase)
        if not short:
            out.append(f"{ph.phase} demand (every GPU asked for, {ph.gpus:,}, placed)")
        elif p is not None and p.arrived_kw and p.facility_kw >= 0.999 * p.arrived_kw:
            mw = f"{p.facility_kw / 1000:,.1f} of {p.arrived_kw / 1000:,.0f} MW"
            out.append(f"{ph.phase} power arrived ({mw}; {len(short)} cluster(s) short)")
        elif i == len(plan.phases) - 1 and plan.stranded:  # the plan's stranded power is its last phase's
            why: dict[str, float] = {}
            for x in plan.stranded:
                why[x.reason] = why.get(x.reason, 0.0) + x.kw
            top = max(why, key=why.get)
            mw = f"{why[top] / 1000:,.1f} MW of power left stranded for want of {top}"
            out.append(f"{ph.phase} {top} ({mw}; {len(short)} cluster(s) short)")
        else:
            out.append(
                f"{ph.phase} {ph.tightest[0] if ph.tightest else 'no limit stated'} ({len(short)} short)"
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--full", action="store_true", help="also the per-position, CBC, min_capex and 1M-GPU scale rows"
    )
    ap.add_argument("--worker", nargs=5)
    ap.add_argument("--readme", action="store_true", help="only the README's what-binds, from RESULTS.md")
    args = ap.parse_args()
    if args.readme:
        readme_binds()
        return
    if args.worker:
        kind, name, mode, solver, tl = args.worker
        print(json.dumps(worker(kind, name, mode, solver, float(tl))))
        return
    print("benchmark: reference scenarios", file=sys.stderr)
    started = time.perf_counter()
    cold = {n: measure("plan", n, "cold") for n in REFERENCE}
    warm = {n: measure("plan", n, "start") for n in REFERENCE}
    full = {n: measure("plantotal", n) for n in REFERENCE}
    greedy = {n: measure("greedy", n) for n in REFERENCE}
    per_cluster = {
        n: measure("plan", n, "per-cluster")
        for n in ("region-100k-pods", "meta-24k-binpack", "meta-24k-building")
    }
    pos, cbc, cbc_pos, scale, capex = {}, {}, {}, {}, {}
    phased = {"joint": measure("joint", "fleet-expansion"), "rolling": measure("rolling", "fleet-expansion")}
    futures = measure("stochastic", "fleet-futures")
    futures["refresh"] = measure("joint", "hall-refresh")
    growth = {n: measure("joint", f"meta-24k-{n}phases") for n in (1, 2, 4)}
    region = {
        m: measure("region", "prometheus-1gw", m, time_limit=600)
        for m in ("decomposed", "rolling", *(("joint",) if args.full else ()))
    }
    region["allowance decomposed"] = measure(
        "region", "prometheus-1gw-allowance", "decomposed", time_limit=600
    )
    region["explain"] = explain_region()
    reliab = {
        "strict": measure("policy", "dr-hall-flex", "strict"),
        "shed": measure("policy", "dr-hall-flex", "shed"),
        "spread": measure("plan", "meta-24k-spread", "full", time_limit=60),
        "blast": measure("blast", "region-100k"),
    }
    fabrics = {
        m_: measure("fabric", "meta-24k-roce-vs-ib", m_)
        for m_ in ("meta-roce", "ib-3tier", "choice", "choice-capex")
    }
    fabrics["region"] = measure("fabric", "region-2bldg-bag", "choice")
    limited = time_limited_cli("1m-per-pod", 10.0)
    if args.full:
        for n in ("small-hall", "dr-hall", "meta-24k-building"):
            pos[n] = measure("plan", n, "per-position", time_limit=120)
            cbc_pos[n] = measure("plan", n, "per-position", "cbc", time_limit=120)
        for n in REFERENCE:
            cbc[n] = measure("plan", n, "cold", "cbc", time_limit=120)
        capex["meta-24k-building"] = measure("plan", "meta-24k-building", "min-capex", time_limit=60)
        for n in SCALE:
            scale[n] = measure("plan", n, "start", time_limit=600)
    write(
        cold,
        warm,
        full,
        greedy,
        per_cluster,
        pos,
        cbc,
        cbc_pos,
        scale,
        capex,
        phased,
        growth,
        reliab,
        fabrics,
        limited,
        time.perf_counter() - started,
        args.full,
        region,
        futures,
    )


def fabric_table(fabrics: dict) -> list[str]:
    """RoCE vs InfiniBand on the 24k building (also quoted in the README)."""
    out = [
        "| design | status | GPUs | switches per tier | switches | optics | fabric MW | fabric capex USD | "
        "USD per GPU | max hops "
        "| network racks placed | positions per pod (min-max) | fabric MW per pod (max) | time s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    labels = {
        "choice": "optimiser's choice, max GPUs: {}",
        "choice-capex": "optimiser's choice, min capex: {}",
    }
    for name, x in fabrics.items():
        if name == "region":
            continue
        if "error" in x:
            out.append(f"| {name} | error: {x['error']} |")
            continue
        label = labels.get(name, "{}").format(x["design"]) if name in labels else name
        pos = list(x["positions_by_pod"].values()) or [0]
        out.append(
            f"| {label} | {x['status']} | {_n(x['gpus'])} | {' / '.join(f'{n:,}' for n in x['tiers'])} | "
            f"{_n(x['switches'])} | {_n(x['optics'])} | "
            f"{x['fabric_kw'] / 1000:.2f} | {x['fabric_capex_usd']:,.0f} | {x['fabric_usd_per_gpu']:,.0f} "
            f"| {x['max_hops']} | {x['network_racks']} | "
            f"{min(pos)}-{max(pos)} over {len(x['positions_by_pod'])} pods | "
            f"{max(x['mw_by_pod'].values(), default=0) / 1000:.3f} | {_f(x['total_s'])} |"
        )
    return out


def _tents_usd(s, plan) -> float:
    """What the structures built cost: their lump sums and, priced as their whole build, their rate
    × the kW of the racks standing in them (USD)."""
    from planner.rules.costs import facility_usd

    types = s.catalog.by_id()
    built = {b.id for b in plan.retrofits}
    lump = sum(r.cost_usd for r in s.retrofits if r.id in built and r.effect.kind == "build_structure")
    own = sum(
        facility_usd(s.rack_power_kw(types[r.rack_type]), s.costs_in(r.building))
        for r in plan.racks
        if s.own_rate(r.building) and r.rack_type in types
    )
    return lump + own


def region_table(region: dict) -> list[str]:
    """The gigawatt region (datasets/prometheus-1gw.yaml): decomposed joint, rolling and (--full) the whole
    model joint."""
    L = [
        "",
        "## Gigawatt region: prometheus-1gw (19 structures and a BAG building, 8 quarters, power arriving "
        "from 120 MW to 1 GW)",
        "",
        "`planner plan datasets/prometheus-1gw.yaml --decompose building --executor process --workers 2` "
        "(decomposed joint: every training job on a designed fabric, the region tier joining the buildings), "
        "`--mode rolling` and (`--full`) the whole model joint; `allowance decomposed`: "
        "datasets/prometheus-1gw-allowance.yaml, the same region with each rack's back-end network as the "
        "catalog's allowance per GPU instead of designed fabrics. Objective max_gpus over the quarters "
        "(GPU-phases); the gap of a plan is to its bound (its source on the stages line below).",
        "",
        "| run | status | gap | GPUs by q8 | GPU-phases | capex USD | of which tents | of which backup "
        "power | TCO USD | USD per GPU-hour | "
        "USD per useful GPU-hour | tents built (bought in) | backup power per structure | time s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for mode, x in region.items():
        if mode == "explain":
            continue
        parts = x.get("parts") or {}
        backup = ", ".join(f"{d} × {n}" for d, n in sorted((x.get("backup") or {}).items())) or "-"
        L.append(
            f"| {mode} | {x.get('status')} | {_gap(x)} | {_n(x.get('gpus'))} | "
            f"{_f(x.get('objective'), '{:,.0f}')} | "
            f"{_f(x.get('capex_usd'), '{:,.0f}')} | {_f(x.get('tents_usd'), '{:,.0f}')} | "
            f"{_f(parts.get('backup power'), '{:,.0f}')} | "
            f"{_f(x.get('tco_usd'), '{:,.0f}')} | {_f(x.get('usd_per_gpu_hour'), '{:.3f}')} | "
            f"{_f(x.get('usd_per_useful_gpu_hour'), '{:.3f}')} | "
            f"{', '.join(x.get('tents') or []) or '-'} | {backup} | {_f(x.get('total_s'))} |"
        )
    a, r = region.get("decomposed", {}), region.get("rolling", {})
    d = a
    if a.get("objective") is not None and r.get("objective") is not None:
        L += [
            "",
            "Regret of rolling against the decomposed joint plan: "
            f"{a['gpus'] - r['gpus']:+,} GPUs by q8 and "
            f"{a['objective'] - r['objective']:+,.0f} GPU-phases; capex "
            f"{r['capex_usd'] - a['capex_usd']:+,.0f} USD, TCO "
            f"{r['tco_usd'] - a['tco_usd']:+,.0f} USD (rolling minus joint).",
        ]
    if d.get("binds"):
        L += [
            "",
            "What binds per quarter, decomposed joint plan (from the plan): " + "; ".join(d["binds"]) + ".",
        ]
    if d.get("power"):
        L += [
            "",
            "Facility MW drawn on the design day (IT × design-day PUE) against MW arrived per quarter, "
            "decomposed joint plan: "
            + "; ".join(f"{ph} {mw:,.1f} of {arr:,.0f}" for ph, mw, arr in d["power"])
            + ".",
        ]
    if d.get("grid"):
        g = d["grid"]
        L += [
            "",
            "Power the grid accepts (§21), decomposed joint plan: largest training swing per quarter "
            "(MW, job) against what the sources accept, storage + power floor standing: "
            + "; ".join(
                f"{ph} {sw:,.1f} ({job}) of {acc:,.0f}, {st:,.1f} + {fl:,.1f}"
                for ph, sw, job, acc, st, fl in g["swing"]
            )
            + f". Storage ${g['storage_usd'] / 1e6:,.1f}M of capex; §21's TCO ${g['tco_usd'] / 1e6:,.1f}M "
            f"(storage, floors, the sources' price over the scenario's); energy in q8 "
            + ", ".join(f"{src} {gwh:,.0f} GWh" for src, gwh in g["energy_q8"].items())
            + f" a year; {g['t_co2_q8'] / 1e6:,.2f} Mt CO2 a year in q8, {g['t_co2'] / 1e6:,.2f} Mt over the "
            f"horizon; water {g['water_q8'] / 1e6:,.2f} million m³ a year in q8, peak "
            f"{g['peak_q8']:,.0f} L/s.",
        ]
    ex = region.get("explain") or {}
    if ex.get("gains"):
        L += [
            "",
            f"`planner explain datasets/prometheus-1gw-allowance.yaml --decompose building --time-limit "
            f"{ex['limit_s']:g}` ({ex['total_s']:.1f} s wall; each relaxation re-planned from the base "
            "plan): " + "; ".join(ex["gains"][:6]) + ".",
        ]
    if d.get("parts"):
        L += [
            "",
            "Capex by part, decomposed joint plan: "
            + ", ".join(f"{k} ${v / 1e9:,.2f}B" for k, v in d["parts"].items())
            + ".",
        ]
    if d.get("stages"):
        L += [
            "",
            "Decomposed run by stage (s): "
            + ", ".join(f"{k} {v:g}" for k, v in d["stages"].items())
            + f". {d.get('note', '')}",
        ]
    return L


def write(
    cold,
    warm,
    full,
    greedy,
    per_cluster,
    pos,
    cbc,
    cbc_pos,
    scale,
    capex,
    phased,
    growth,
    reliab,
    fabrics,
    limited,
    took_s,
    everything,
    region,
    futures,
) -> None:
    now = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    L = [
        "# Benchmark results",
        "",
        f"Written by `.venv/bin/python benchmarks/run.py{' --full' if everything else ''}` on {now} in "
        f"{took_s / 60:.1f} minutes; "
        f"{MACHINE}, solver threads 1. Each row is its own process (peak MB is its max RSS). The machine "
        "is shared and noisy: "
        "compare timings as ratios within this file; absolute time targets hold for this machine only and "
        "say so." + ("" if everything else " The per-position, CBC, min_capex and scale rows need `--full`."),
        "",
    ]
    L += [
        "## Reference scenarios: MILP (aggregated, HiGHS) vs first-fit vs the power bound",
        "",
        "'cold' = primary objective from scratch; 'from start' = handed the first-fit plan (first-fit time "
        "shown separately); "
        "'plan total' = `load_scenario` + `plan_scenario` timed in one process: load, build, first-fit, "
        "solve with tie-breaks, fill "
        "and verify, what `planner plan` runs. Power bound = usable power of the root nodes, less the "
        "network racks, ÷ the least "
        "kW per GPU of the allowed rack types.",
        "",
        "| scenario | variables (int) | constraints | build s | cold solve s | from start s | first-fit s "
        "| plan total s | status | gap | GPUs MILP | GPUs first-fit | MILP vs first-fit | power bound | "
        "MILP / bound | peak MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n in REFERENCE:
        c, w, f, g = cold[n], warm[n], full[n], greedy[n]
        if "error" in c:
            L.append(f"| {n} | error: {c['error']} |")
            continue
        gain = (c.get("gpus", 0) / g["gpus"] - 1) if g.get("gpus") else None
        L.append(
            f"| {n} | {_n(c['variables'])} ({_n(c['integers'])}) | {_n(c['constraints'])} | "
            f"{_f(c['build_s'], '{:.3f}')} | {_f(c['solve_s'])} | "
            f"{_f(w.get('solve_s'))} | {_f(w.get('greedy_s'))} | {_f(f.get('total_s'))} | {c['status']} | "
            f"{_gap(c)} | {_n(c.get('gpus'))} | "
            f"{_n(g.get('gpus'))} | {_f(gain, '{:+.1%}')} | {_n(c['power_bound'])} | "
            f"{_f(c.get('gpus', 0) / c['power_bound'], '{:.1%}')} | {c['peak_mb']:.0f} |"
        )
    L += [
        "",
        "## Identical clusters grouped vs one variable set per cluster (HiGHS, cold)",
        "",
        "| scenario | grouped integers | grouped solve s | per-cluster integers | per-cluster solve s | "
        "same GPUs |",
        "|---|---|---|---|---|---|",
    ]
    for n, r in per_cluster.items():
        c = cold[n]
        L.append(
            f"| {n} | {_n(c.get('integers'))} | {_f(c.get('solve_s'))} | {_n(r.get('integers'))} | "
            f"{_f(r.get('solve_s'))} | {c.get('gpus') == r.get('gpus')} |"
        )
    if pos:
        L += [
            "",
            "## Aggregated classes vs per-position binaries (cold, 120 s limit)",
            "",
            "| scenario | per-position vars | HiGHS per-position s | status | GPUs | HiGHS aggregated s | "
            "GPUs | time ratio | CBC per-position s | CBC aggregated s |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for n, p in pos.items():
            c, cp, ca = cold[n], cbc_pos[n], cbc[n]
            ratio = p["solve_s"] / c["solve_s"] if c.get("solve_s") else None
            L.append(
                f"| {n} | {_n(p.get('variables'))} | {_f(p.get('solve_s'))} | {p.get('status')} "
                f"({_gap(p)}) | {_n(p.get('gpus'))} | {_f(c['solve_s'])} | "
                f"{_n(c.get('gpus'))} | {_f(ratio, '{:.1f}×')} | {_f(cp.get('solve_s'))} "
                f"({cp.get('status')}) | {_f(ca.get('solve_s'))} |"
            )
    if cbc:
        L += [
            "",
            "## HiGHS vs CBC (aggregated, primary objective, cold, 120 s limit)",
            "",
            "| scenario | HiGHS s | HiGHS status | CBC s | CBC status | CBC gap | CBC GPUs | CBC / HiGHS "
            "time |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for n in REFERENCE:
            h, c = cold[n], cbc[n]
            ratio = c.get("solve_s", 0) / h["solve_s"] if h.get("solve_s") else None
            L.append(
                f"| {n} | {_f(h.get('solve_s'))} | {h.get('status')} | {_f(c.get('solve_s'))} | "
                f"{c.get('status', c.get('error'))} | {_gap(c)} | {_n(c.get('gpus'))} | "
                f"{_f(ratio, '{:.1f}×')} |"
            )
    if scale:
        L += [
            "",
            "## Scale (generated sites, HiGHS, from the first-fit start, 1% gap, 600 s limit)",
            "",
            "Command: `.venv/bin/python benchmarks/run.py --worker plan NAME start highs 600`; the site is "
            "`planner generate-site FLAGS` (in benchmarks/generated/).",
            "",
            "| case | generate-site flags | clusters | variables (int) | load s | build s | first-fit s | "
            "solve s | fill + verify s | save s | load plan s | plan MB | total s | status | gap | GPUs | "
            "peak MB |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for n, r in scale.items():
            flags, kind = SCALE[n]
            if "error" in r:
                L.append(f"| {n} | `{flags}` | {kind} | error: {r['error']} |")
                continue
            L.append(
                f"| {n} | `{flags}` | one per {kind} | {_n(r['variables'])} ({_n(r['integers'])}) | "
                f"{_f(r['load_s'])} | {_f(r['build_s'])} | {_f(r.get('greedy_s'))} | "
                f"{_f(r['solve_s'])} | {_f(r.get('fill_verify_s'))} | {_f(r.get('save_s'))} | "
                f"{_f(r.get('load_plan_s'))} | {_f(r.get('plan_mb'), '{:.1f}')} | "
                f"{_f(r.get('total_s'))} | {r['status']} | {_gap(r)} | {_n(r.get('gpus'))} | "
                f"{r['peak_mb']:.0f} |"
            )
    if capex:
        L += [
            "",
            "## min_capex on a symmetric covering case (meta-24k-building: eight one-pod jobs of at least "
            "3,072 GPUs at least cost, 60 s)",
            "",
            "| case | status | gap | capex USD | solve s |",
            "|---|---|---|---|---|",
        ]
        for n, r in capex.items():
            L.append(
                f"| {n} min_capex | {r.get('status')} | {_gap(r)} | {_f(r.get('capex_usd'), '{:,.0f}')} | "
                f"{_f(r.get('solve_s'))} |"
            )
    j, r = phased["joint"], phased["rolling"]
    L += [
        "",
        "## Fleet expansion: joint vs rolling (datasets/fleet-expansion.yaml, HiGHS)",
        "",
        "`planner plan datasets/fleet-expansion.yaml --mode joint|rolling`. Objective max_gpus over phases "
        "(GPU-phases: earlier is better).",
        "",
        "| mode | status | gap | GPUs at the end | GPU-phases | capex USD | TCO USD | USD per GPU-hour | "
        "retrofits bought | stranded kW | time s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for mode, x in phased.items():
        L.append(
            f"| {mode} | {x.get('status')} | {_gap(x)} | {_n(x.get('gpus'))} | "
            f"{_f(x.get('objective'), '{:,.0f}')} | {_f(x.get('capex_usd'), '{:,.0f}')} | "
            f"{_f(x.get('tco_usd'), '{:,.0f}')} | {_f(x.get('usd_per_gpu_hour'), '{:.3f}')} | "
            f"{', '.join(x.get('retrofits') or []) or '-'} | "
            f"{_f(x.get('stranded_kw'), '{:,.1f}')} | {_f(x.get('total_s'))} |"
        )
    if j.get("gpus") is not None and r.get("gpus") is not None:
        L += [
            "",
            f"Regret of rolling: {j['gpus'] - r['gpus']:,} GPUs at the end and "
            f"{j['objective'] - r['objective']:,.0f} GPU-phases; rolling spends "
            f"${j['capex_usd'] - r['capex_usd']:,.0f} less capex and ${j['tco_usd'] - r['tco_usd']:,.0f} "
            "less TCO, for fewer GPUs "
            f"(${r['usd_per_gpu_hour']:.3f} against ${j['usd_per_gpu_hour']:.3f} per GPU-hour: the NVL72 "
            "racks joint planning makes room for cost more per GPU).",
        ]
    L += futures_table(futures)
    L += region_table(region)
    L += [
        "",
        "## Model size per phase (meta-24k-building, two 3,072-GPU one-pod jobs more each quarter, joint, "
        "0.5% gap)",
        "",
        "| phases | variables (int) | constraints | status | gap | GPUs | time s |",
        "|---|---|---|---|---|---|---|",
    ]
    for n, x in growth.items():
        L.append(
            f"| {n} | {_n(x.get('variables'))} ({_n(x.get('integers'))}) | {_n(x.get('constraints'))} | "
            f"{x.get('status')} | {_gap(x)} | {_n(x.get('gpus'))} | {_f(x.get('total_s'))} |"
        )
    st, sh, sp, bl = reliab["strict"], reliab["shed"], reliab["spread"], reliab["blast"]
    L += [
        "",
        "## Reliability: failover policy, spread limits, blast radius",
        "",
        "`datasets/dr-hall-flex.yaml`: a 512-GPU training job that keeps power and an inference fleet "
        "whose racks in the rows a failure "
        "hits may be shed (after Flex, ISCA 2021, which reports up to 33% more servers and under 5% "
        "stranded power); 'strict' = "
        "the same scenario with every cluster on keep. Stranded = usable power no allowed rack can use "
        "(plan KPI).",
        "",
        "| case | status | GPUs | stranded kW | of UPS usable kW | time s |",
        "|---|---|---|---|---|---|",
    ]
    for name, x in (("strict N-1", st), ("inference shed", sh)):
        share = x.get("stranded_kw", 0) / x["usable_kw"] if x.get("usable_kw") else None
        L.append(
            f"| {name} | {x.get('status')} | {_n(x.get('gpus'))} | {_f(x.get('stranded_kw'), '{:,.1f}')} | "
            f"{_f(share, '{:.1%}')} of "
            f"{_f(x.get('usable_kw'), '{:,.0f}')} | {_f(x.get('total_s'))} |"
        )
    if st.get("gpus") and sh.get("gpus"):
        L += [
            "",
            f"Gain of shedding: {sh['gpus'] - st['gpus']:+,} GPUs ({sh['gpus'] / st['gpus'] - 1:+.0%}); "
            "the plan's note: "
            f"{'; '.join(sh.get('notes') or []) or '-'}.",
        ]
    L += [
        "",
        "meta-24k-spread: two 12,288-GPU building-wide jobs, each at most 25% in any pod or cooling zone "
        "and 10% behind any power node, "
        "1 TB/s checkpoint write each (storage racks placed); `planner plan` with tie-breaks, 0.5% gap.",
        "",
        "| case | variables (int) | status | gap | GPUs | total s | peak MB |",
        "|---|---|---|---|---|---|---|",
        f"| meta-24k-spread | {_n(sp.get('variables'))} ({_n(sp.get('integers'))}) | {sp.get('status')} | "
        f"{_gap(sp)} | {_n(sp.get('gpus'))} | "
        f"{_f(sp.get('total_s'))} | {_f(sp.get('peak_mb'), '{:.0f}')} |",
        "",
        f"Blast radius of region-100k ({_n(bl.get('gpus'))} GPUs placed): {_n(bl.get('elements'))} "
        "elements that take GPUs down, "
        f"computed in {_f(bl.get('blast_s'), '{:.3f}')} s; the worst is {bl.get('worst')} "
        f"({_n(bl.get('worst_gpus'))} GPUs).",
    ]
    L += [
        "",
        "## Fabric from topology: RoCE vs InfiniBand on the 24,576-GPU building "
        "(datasets/meta-24k-roce-vs-ib.yaml)",
        "",
        "One 24,576-GPU job (demand max) on each design, and with both allowed (max GPUs; min capex with "
        "every GPU wanted). "
        "The switches stand in network racks in each pod's network row (480 kW, 16 positions of up to 40 kW: "
        "datasets/meta-24k-building.gen.yaml), their power on those rows' feeds and air zones; GPU-to-leaf "
        "links inside a rack "
        "are in-rack copper. Switch power and prices are planning estimates (datasets/catalog.yaml).",
        "",
        *fabric_table(fabrics),
    ]
    rg = fabrics.get("region", {})
    if "error" not in rg:
        L += [
            "",
            "## Region tier: one 49,152-GPU job across two buildings 2 km apart "
            "(datasets/region-2bldg-bag.yaml)",
            "",
            "Each building its own Meta-style RoCE tree; their top tiers joined by a backend-aggregation "
            "tier (432 x 800G chassis, "
            "4.5:1) in B1, fibre by distance; max_latency_us 12.",
            "",
            "| status | GPUs | GPUs per building | switches per tier | region links | tier chassis | fibre "
            "km | latency µs | max hops "
            "| fabric MW | fabric capex USD | network racks placed | time s |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
            f"| {rg.get('status')} | {_n(rg.get('gpus'))} | "
            f"{' / '.join(f'{v:,}' for v in (rg.get('buildings') or {}).values())} | "
            f"{' / '.join(f'{n:,}' for n in rg.get('tiers') or [])} | {_n(rg.get('region_links'))} | "
            f"{_n(rg.get('region_switches'))} | "
            f"{_f(rg.get('fibre_km'), '{:,.0f}')} | {_f(rg.get('latency_us'), '{:.1f}')} | "
            f"{rg.get('max_hops')} | {(rg.get('fabric_kw') or 0) / 1000:.2f} | "
            f"{(rg.get('fabric_capex_usd') or 0):,.0f} | {rg.get('network_racks')} | "
            f"{_f(rg.get('total_s'))} |",
        ]
    L += [
        "",
        "## Targets",
        "",
        f"A time in seconds is an absolute target, measured on this machine ({MACHINE}); a ratio compares "
        "two "
        "rows of this run.",
        "",
        "| target | measured | met |",
        "|---|---|---|",
    ]

    def t(name: str, value, ok: bool) -> None:
        L.append(f"| {name} | {value} | {'yes' if ok else 'NO'} |")

    if scale:
        a, b, c = scale.get("1m-per-building", {}), scale.get("500k-per-pod", {}), scale.get("1m-per-pod", {})
        t(
            "1M GPUs, one cluster per building: fill + verify ≤ 30 s",
            f"{_f(a.get('fill_verify_s'))} s",
            (a.get("fill_verify_s") or 1e9) <= 30,
        )
        t(
            "1M GPUs, one cluster per building: total ≤ 150 s",
            f"{_f(a.get('total_s'))} s",
            (a.get("total_s") or 1e9) <= 150,
        )
        t(
            "500k GPUs, one cluster per pod: ≤ 60 s",
            f"{_f(b.get('total_s'))} s",
            (b.get("total_s") or 1e9) <= 60,
        )
        t(
            "1M GPUs, one cluster per pod: within 1% in ≤ 10 min",
            f"{c.get('status')}, gap {_gap(c)}, {_f(c.get('total_s'))} s",
            c.get("gap") is not None and c["gap"] <= 0.01 and (c.get("total_s") or 1e9) <= 600,
        )
        t(
            "1M GPUs, one cluster per pod: < 4 GB",
            f"{_f(c.get('peak_mb'), '{:.0f}')} MB",
            (c.get("peak_mb") or 1e9) < 4096,
        )
        t(
            "a 1M-GPU plan loads in seconds",
            f"{_f(c.get('load_plan_s'))} s ({_f(c.get('plan_mb'), '{:.1f}')} MB)",
            (c.get("load_plan_s") or 1e9) < 10,
        )
    dr = region.get("decomposed", {})
    t(
        "prometheus-1gw decomposed joint: within 1% of a proven bound in ≤ 10 min (2 cores)",
        f"{dr.get('status')}, gap {_gap(dr)}, {_f(dr.get('total_s'))} s",
        dr.get("gap") is not None and dr["gap"] <= 0.01 and (dr.get("total_s") or 1e9) <= 600,
    )
    ex = region.get("explain", {})
    first = (ex.get("gains") or ["no limit with a gain"])[0]
    t(
        "prometheus-1gw-allowance explain through the decomposition (`planner explain ... --decompose "
        "building --time-limit 120`): binding limits and a real gain (a re-plan that found more) "
        "in ≤ 2 min (2 cores)",
        f"exit {ex.get('exit')}, {_f(ex.get('total_s'))} s wall; {len(ex.get('gains') or [])} gains, "
        f"first: {first}",
        ex.get("exit") == 0
        and any("→ +0 " not in g for g in ex.get("gains") or [])
        and (ex.get("total_s") or 1e9) <= 120,
    )
    t(
        "fleet-futures two-stage (3 futures, perfect information and the mean-demand plan included): "
        "within 1% in ≤ 60 s, verified",
        f"{futures.get('status')}, gap {_gap(futures)}, {_f(futures.get('total_s'))} s, verified "
        f"{futures.get('verified')}",
        futures.get("gap") is not None
        and futures["gap"] <= 0.01
        and (futures.get("total_s") or 1e9) <= 60
        and bool(futures.get("verified")),
    )
    rf = futures.get("refresh", {})
    t(
        "hall-refresh (six years, H100 to NVL72): within 1% in ≤ 60 s",
        f"{rf.get('status')}, gap {_gap(rf)}, {_f(rf.get('total_s'))} s",
        rf.get("gap") is not None and rf["gap"] <= 0.01 and (rf.get("total_s") or 1e9) <= 60,
    )
    t(
        "fleet-expansion joint: within 0.5% in ≤ 60 s",
        f"{j.get('status')}, gap {_gap(j)}, {_f(j.get('total_s'))} s",
        j.get("gap") is not None and j["gap"] <= 0.005 and (j.get("total_s") or 1e9) <= 60,
    )
    g4 = growth.get(4, {})
    t(
        "meta-24k-building, 4 phases: within 0.5% in ≤ 30 s",
        f"{g4.get('status')}, gap {_gap(g4)}, {_f(g4.get('total_s'))} s",
        g4.get("gap") is not None and g4["gap"] <= 0.005 and (g4.get("total_s") or 1e9) <= 30,
    )
    t(
        "meta-24k-spread: within 0.5% in ≤ 30 s",
        f"{sp.get('status')}, gap {_gap(sp)}, {_f(sp.get('total_s'))} s",
        sp.get("gap") is not None and sp["gap"] <= 0.005 and (sp.get("total_s") or 1e9) <= 30,
    )
    rg = fabrics.get("region", {})
    t(
        "region-2bldg-bag: 49,152 GPUs across two buildings within 0.1% in ≤ 10 s",
        f"{_n(rg.get('gpus'))} GPUs, {rg.get('status')}, gap {_gap(rg)}, {_f(rg.get('total_s'))} s",
        rg.get("gpus") == 49_152
        and rg.get("gap") is not None
        and rg["gap"] <= 0.001
        and (rg.get("total_s") or 1e9) <= 10,
    )
    for name in ("meta-roce", "ib-3tier", "choice"):
        fc = fabrics.get(name, {})
        t(
            f"meta-24k-roce-vs-ib ({name}): 24,576 GPUs within 0.1% in ≤ 10 s",
            f"{_n(fc.get('gpus'))} GPUs, {fc.get('status')}, gap {_gap(fc)}, {_f(fc.get('total_s'))} s",
            fc.get("gpus") == 24_576
            and fc.get("gap") is not None
            and fc["gap"] <= 0.001
            and (fc.get("total_s") or 1e9) <= 10,
        )
    t(
        f"`planner plan 1m-per-pod.yaml --time-limit {limited['limit_s']:g}` (983,040 GPUs; load to "
        "written plan): within the limit "
        "+ max(10%, 5 s)",
        f"{limited['wall_s']:.1f} s wall, {limited['status']}",
        limited["exit"] == 0 and limited["wall_s"] <= limited["limit_s"] + max(0.1 * limited["limit_s"], 5.0),
    )
    t(
        "blast radius of region-100k ≤ 5 s",
        f"{_f(bl.get('blast_s'), '{:.3f}')} s",
        (bl.get("blast_s") or 1e9) <= 5,
    )
    r = cold.get("region-100k-pods", {})
    t(
        "region-100k-pods ≤ 2 s cold (primary solve)",
        f"{_f(r.get('solve_s'))} s",
        (r.get("solve_s") or 1e9) <= 2,
    )
    grouped = [(n, cold[n].get("solve_s"), r_.get("solve_s")) for n, r_ in per_cluster.items()]
    ratios = [(pc / g, n) for n, g, pc in grouped if g and pc]
    if ratios:
        worst, which = min(ratios)
        t(
            "grouping identical clusters is never slower than one variable set per cluster (ratio of solve "
            "times in this run)",
            f"least speed-up {worst:.1f}× ({which})",
            worst >= 1.0,
        )
    (ROOT / "benchmarks" / "RESULTS.md").write_text("\n".join(L) + "\n")
    print("wrote benchmarks/RESULTS.md", file=sys.stderr)
    readme_binds()


BINDS = "What binds per quarter, decomposed joint plan (from the plan): "
BEGIN, END = "<!-- what binds: benchmarks/run.py writes this -->", "<!-- end of what binds -->"


def readme_binds() -> None:
    """The README's per-quarter "what binds" for the gigawatt region, between its markers, from the
    line RESULTS.md states it in (generated from the plan, never typed)."""
    results = (ROOT / "benchmarks" / "RESULTS.md").read_text()
    line = next((ln for ln in results.splitlines() if ln.startswith(BINDS)), None)
    readme = ROOT / "README.md"
    text = readme.read_text()
    if line is None or BEGIN not in text or END not in text:
        print("README: no what-binds line or markers; left as it was", file=sys.stderr)
        return
    quarters, depth, cur = [], 0, ""
    for ch in line[len(BINDS) :].rstrip("."):  # "; " outside parentheses separates the quarters
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == ";" and depth == 0:
            quarters.append(cur.strip())
            cur = ""
        else:
            cur += ch
    quarters.append(cur.strip())
    body = "\n".join(f"  - {q}" for q in quarters)
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    readme.write_text(f"{head}{BEGIN}\n{body}\n  {END}{tail}")
    print("wrote README.md: what binds per quarter", file=sys.stderr)


if __name__ == "__main__":
    main()
