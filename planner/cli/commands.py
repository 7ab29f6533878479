"""The commands that load and plan scenarios: validate, generate-site, plan, explain, batch,
frontier (the commands that read a plan: :mod:`planner.cli.plans`)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from planner.cli.plans import (
    EXIT_FAILED,
    EXIT_OK,
    plan_summary,
    scenario_of,
)
from planner.errors import InputError, Problem


def cmd_validate(args: argparse.Namespace) -> int:
    """Load and validate a scenario; print what it holds and where each cluster's racks fit."""
    from planner.input.site_index import fits, index_site
    from planner.model import position_classes

    s = scenario_of(args)
    ix = index_site(s.site)
    classes = position_classes(s, ix)
    usable = sum(c.size for c in classes.values())
    print(
        f"{args.scenario}: valid scenario '{s.name}': {len(s.site.buildings)} buildings, "
        f"{len(ix.halls)} halls, {len(ix.rows)} rows, {usable} usable positions, "
        f"{len(ix.power_nodes)} power nodes, {len(ix.zones)} cooling zones, {len(ix.pods)} pods, "
        f"{len(s.catalog.rack_types)} rack types, {len(s.clusters)} clusters"
    )
    from planner.input.checks import site_warnings

    for w in site_warnings(s.site):
        print(f"  warning: {w}")
    types = s.catalog.by_id()
    for c in s.clusters:
        for t in c.rack_types:
            n = sum(k.size for k in classes.values() if t in k.link and fits(s, ix, k.row, types[t]))
            print(
                f"  cluster {c.id}: {t} ({s.rack_power_kw(types[t]):,.1f} kW, {types[t].gpus} GPUs) fits "
                f"{n} of {usable} positions"
            )
    return EXIT_OK


GENERATE_FLAGS = {
    "count": "--buildings",
    "halls": "--halls",
    "pods_per_hall": "--pods-per-hall",
    "rows_per_pod": "--rows-per-pod",
    "positions_per_row": "--positions",
    "power_design": "--power-design",
    "design_kw_per_position": "--design-kw",
    "max_rack_power_kw": "--max-rack-kw",
    "liquid": "--liquid",
    "pod_max_gpus": "--pod-max-gpus",
    "pod_max_racks": "--pod-max-racks",
}
"""Generator spec field → the flag that sets it (errors name the flag)."""


def cmd_generate_site(args: argparse.Namespace) -> int:
    """Generate a regular site YAML from a spec file or from flags."""
    from planner.fileio import atomic_write, check_writable
    from planner.input.generate import BuildingSpec, SiteSpec, generate_site
    from planner.input.loader import dump_yaml, read_yaml_file, validate_model

    if args.output:
        check_writable(args.output)
    if args.scenario:
        check_writable(args.scenario)
    if args.spec:
        spec = validate_model(SiteSpec, read_yaml_file(args.spec), "", args.spec)
        command = f"planner generate-site --spec {args.spec}"
    else:
        values = {
            "count": args.buildings,
            "halls": args.halls,
            "pods_per_hall": args.pods_per_hall,
            "rows_per_pod": args.rows_per_pod,
            "positions_per_row": args.positions,
            "power_design": args.power_design,
            "design_kw_per_position": args.design_kw,
            "max_rack_power_kw": args.max_rack_kw,
            "liquid": args.liquid,
            "pod_max_gpus": args.pod_max_gpus,
            "pod_max_racks": args.pod_max_racks,
        }
        try:
            b = validate_model(BuildingSpec, values, "", "command line")
            spec = validate_model(
                SiteSpec, {"id": args.id, "buildings": [b.model_dump()]}, "", "command line"
            )
        except InputError as e:
            raise InputError([_flag_problem(p) for p in e.problems], "command line") from None
        command = "planner generate-site " + " ".join(sys.argv[2:])
    site = generate_site(spec, command)
    fleet = _fleet(args, spec, site) if args.scenario else None  # every refusal before the first write
    text = dump_yaml(site.model_dump(mode="json", exclude_defaults=True))
    if args.output and args.output != "-":
        atomic_write(args.output, text)
        n_rows = sum(len(h.rows) for b in site.buildings for h in b.halls)
        print(f"wrote {args.output}: {len(site.buildings)} buildings, {n_rows} rows")
    else:
        sys.stdout.write(text)
    if fleet is not None:
        atomic_write(
            args.scenario,
            f"# planner generate-site --spec {args.spec} -o {args.output} --scenario {args.scenario}\n"
            + dump_yaml(fleet),
        )
        print(
            f"wrote {args.scenario}: {len(fleet['clusters'])} clusters, "
            f"{sum(c['gpus'] for c in fleet['clusters']):,} GPUs wanted"
        )
    elif args.spec and spec.fleet is not None and args.output and args.output != "-":
        print("the spec has a fleet: add --scenario FILE to write its clusters", file=sys.stderr)
    return EXIT_OK


def _fleet(args: argparse.Namespace, spec, site) -> dict:
    """Scenario data of a spec's fleet (:mod:`planner.input.fleetgen`), naming the site written by -o."""

    from planner.input.fleetgen import generate_fleet

    if spec.fleet is None:
        raise InputError(
            [Problem("--scenario", "the spec has no fleet: section to draw clusters from")], "command line"
        )
    if not args.output or args.output == "-":
        raise InputError(
            [Problem("--scenario", "needs -o SITE.yaml: the scenario names the site file it stands on")],
            "command line",
        )
    site_ref = os.path.relpath(os.path.abspath(args.output), os.path.dirname(os.path.abspath(args.scenario)))
    name = os.path.basename(args.scenario).removesuffix(".yaml")
    try:
        data = generate_fleet(site, spec.fleet, site_ref, name if name else "fleet")
    except ValueError as e:
        raise InputError([Problem("fleet", str(e))], args.spec) from None
    return data


def _flag_problem(p: Problem) -> Problem:
    """A generator problem restated with the flag that set the value."""
    field = p.path.split(".")[-1].split("[")[0]
    flag = GENERATE_FLAGS.get(field, "--id" if field == "id" else field)
    return Problem(flag, p.message)


def _scenario_with_overrides(args: argparse.Namespace):
    """Load the scenario and apply --solver/--time-limit/--gap (validated like YAML)."""
    from planner.input.loader import validate_model
    from planner.schema import SolverSettings

    s = scenario_of(args)
    over = {
        k: v
        for k, v in (
            ("name", args.solver),
            ("time_limit_s", args.time_limit),
            ("rel_gap", args.gap),
            ("work_limit", getattr(args, "work_limit", None)),
        )
        if v is not None
    }
    if over:
        flags = {
            "name": "--solver",
            "time_limit_s": "--time-limit",
            "rel_gap": "--gap",
            "work_limit": "--work-limit",
        }
        try:
            settings = validate_model(
                SolverSettings, {**s.solver.model_dump(mode="json"), **over}, "solver", "command line"
            )
        except InputError as e:
            raise InputError(
                [Problem(flags.get(p.path.split(".")[-1], p.path), p.message) for p in e.problems],
                "command line",
            ) from None
        s = s.model_copy(update={"solver": settings})
    from planner.solving.backends import from_name

    from_name(s.solver.name)
    return s


def _progress(args: argparse.Namespace):
    """The run's progress callback: its heartbeat (:mod:`planner.cli.heartbeat`) when one runs, a
    plain printer otherwise; none with --quiet."""
    if getattr(args, "quiet", False):
        return None
    beat = getattr(args, "heartbeat", None)
    if beat is not None:
        return beat

    def show(p) -> None:
        print(str(p), file=sys.stderr, flush=True)

    return show


def cmd_plan(args: argparse.Namespace) -> int:
    """Solve a scenario; write the plan; print a summary."""
    from planner.cli.heartbeat import Heartbeat
    from planner.clock import Deadline, run_started
    from planner.enums import Status
    from planner.fileio import check_writable
    from planner.plan import save_plan

    started = run_started()  # the time limit bounds the whole run, from the process's start
    if args.output:
        check_writable(args.output)
    if args.write_lp:
        check_writable(args.write_lp, "--write-lp")
    s = _scenario_with_overrides(args)
    deadline = Deadline(s.solver.time_limit_s, started)
    if args.write_lp:
        from planner.model import build, write_lp

        write_lp(build(s, aggregate=not args.per_position), args.write_lp)
        print(f"wrote {args.write_lp} (the model as built)", file=sys.stderr)
    if s.futures and args.mode != "stochastic":
        print(
            f"note: the scenario lists {len(s.futures)} demand futures; this {args.mode} plan is for the "
            "clusters' own demand "
            "(--mode stochastic plans for the futures)",
            file=sys.stderr,
        )
    to_stdout = args.output == "-"
    with Heartbeat(started) as beat:
        args.heartbeat = None if getattr(args, "quiet", False) else beat
        plan = _planned(args, s, deadline)
        if getattr(args, "certify", False):
            plan = _certified(args, s, plan, deadline)
        if args.output:
            if args.heartbeat:
                beat(f"writing {args.output}")
            save_plan(plan, args.output)
            if not to_stdout:
                print(f"wrote {args.output}", file=sys.stderr)
        else:
            print(
                "no plan file written: give -o PLAN.yaml to keep it (-o - writes it to standard output)",
                file=sys.stderr,
            )
    plan_summary(plan, sys.stderr if to_stdout else sys.stdout)
    if not plan.status.has_plan:
        msg = {
            Status.infeasible: "infeasible: run `planner explain` for the conflicting limits",
            Status.time_limit: "no plan found within the time limit",
        }.get(plan.status, "the solver stopped without a plan")
        print(msg, file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _certified(args: argparse.Namespace, s, plan, deadline):
    """The plan with its certified bound: the model's LP relaxation solved with duals in the time
    left, the certificate written beside the plan (``-o`` needed)."""
    import json

    from planner.fileio import atomic_write, check_writable
    from planner.model import build
    from planner.solving.certificate import lp_certificate

    say = _progress(args) or (lambda _m: None)
    if not args.output or args.output == "-":
        raise InputError([Problem("--certify", "needs -o PLAN.yaml: the certificate is written beside it")])
    if not plan.status.has_plan or deadline.left() < 1.0:
        say("certificate: none (no plan, or no time left for the relaxation)")
        return plan
    say("certificate: solving the LP relaxation with its duals")
    cert = lp_certificate(build(s), max(1.0, deadline.left() - 0.5))
    if cert is None:
        say("certificate: none (the relaxation has no optimum in the time left)")
        return plan
    name = Path(args.output).name + ".cert.json"
    check_writable(Path(args.output).with_name(name))
    atomic_write(Path(args.output).with_name(name), json.dumps(cert))
    say(f"certificate: LP bound {cert['bound']:,.6g} with {len(cert['duals']):,} duals in {name}")
    return plan.model_copy(update={"certified_bound": cert["bound"], "bound_certificate": name})


def _planned(args: argparse.Namespace, s, deadline):
    """The plan the flags ask for: decomposed by building, rolling, two-stage or joint."""
    from planner.plan.pipeline import plan_scenario
    from planner.plan.rolling import plan_rolling

    if args.decompose:
        _check_scheduler_flags(args)
        if args.mode != "joint" or args.per_position:
            raise InputError(
                f"--decompose: plans joint and aggregated (drop --mode {args.mode} and --per-position)"
            )
        from planner.scale.decompose import describe, plan_decomposed

        say = _progress(args)
        progress = (lambda m: say(m)) if say else None
        d = plan_decomposed(
            s, args.executor, args.workers, args.scheduler, progress=progress, deadline=deadline
        )
        if say:
            say("decomposition: " + ", ".join(f"{k} {v}" for k, v in describe(d).items()))
        return d.plan
    if args.mode == "rolling":
        return plan_rolling(s, _progress(args), deadline=deadline)
    if args.mode == "stochastic":
        from planner.plan.stochastic import plan_stochastic

        return plan_stochastic(s, _progress(args), deadline=deadline)
    return plan_scenario(s, _progress(args), aggregate=not args.per_position, deadline=deadline)


def cmd_explain(args: argparse.Namespace) -> int:
    """Explain infeasibility or the binding limits."""
    from planner.clock import Deadline, run_started
    from planner.explainer import explain

    started = run_started()  # at region scale the time limit bounds the whole run, from the process's start
    s = _scenario_with_overrides(args)
    replan, deadline = None, None
    if getattr(args, "decompose", None) == "building":
        from planner.scale.relaxed import RegionReplanner

        replan = RegionReplanner()  # two worker processes for the base plan's building solves
        deadline = Deadline(s.solver.time_limit_s, started)
    ex, _ = explain(s, progress=_progress(args), replan=replan, deadline=deadline)
    print(ex.render())
    return EXIT_OK if ex.feasible else EXIT_FAILED


def cmd_batch(args: argparse.Namespace) -> int:
    """Solve every point of a sweep on an executor into one results table (resumable)."""
    from planner.batch.sweep import load_sweep, row_failed, run_batch
    from planner.fileio import check_writable

    out = Path(args.output)
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise InputError(
            f"-o {args.output}: is {'a symbolic link' if out.is_symlink() else 'a file'}; give a folder "
            "for the results"
        )
    check_writable(out if not out.exists() else out / "results.csv")
    _check_scheduler_flags(args)
    sweep = load_sweep(args.sweep, args.data_root, args.max_points)
    bar = None
    if not args.quiet and sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=0, unit="point", desc=sweep.name, file=getattr(sys.stderr, "raw", sys.stderr))

    def progress(done: int, total: int, failed: int) -> None:
        if bar is not None:  # quiet under --quiet or without a terminal (logs get the summary line)
            bar.total = total
            bar.set_postfix(failed=failed)
            bar.update(done - bar.n)

    rows = run_batch(
        sweep,
        out,
        args.executor,
        args.workers,
        args.scheduler,
        args.time_limit,
        progress,
        args.connect_timeout,
        say=None if args.quiet else lambda m: print(m, file=sys.stderr),
    )
    if bar is not None:
        bar.close()
    failed = sum(1 for r in rows if row_failed(r))
    print(
        f"{args.output}: {len(rows)} points in results.csv and results.parquet ({failed} failed); plans in "
        f"{args.output}/plans/"
    )
    if not args.quiet:
        print(
            f"next: planner frontier {args.output}/results.csv --x capex_usd --y gpus -o "
            f"{args.output}/frontier.html",
            file=sys.stderr,
        )
    return EXIT_OK


def _check_scheduler_flags(args: argparse.Namespace) -> None:
    """--scheduler only with --executor dask, and reachable (before anything runs)."""
    if args.scheduler is None:
        return
    if args.executor != "dask":
        raise InputError(f"--scheduler: needs --executor dask (the executor is {args.executor})")
    from planner.batch.executors import check_scheduler

    check_scheduler(args.scheduler, args.connect_timeout)


FRONTIER_CLICK = (
    "var p=document.getElementsByClassName('plotly-graph-div')[0];"
    "var box=document.createElement('div');box.id='picked';box.style.cssText='font:14px "
    "sans-serif;margin:8px 16px';"
    "box.textContent='Click a point: its plan file opens (downloads) and its figures show "
    "here.';p.parentNode.appendChild(box);"
    "p.on('plotly_click',function(d){var pt=d.points[0],u=pt.customdata[0];"
    "box.textContent=pt.customdata[1]+': '+(u?'plan '+u:'no plan file')+'; "
    "'+pt.hovertext.replace(/<[^>]+>/g,' ');"
    "if(u){var a=document.createElement('a');a.href=u;a.download=u.split('/').pop();a.textContent=' open "
    "'+a.download;"
    "box.appendChild(a);a.click();}});"
)
"""The frontier page's click: name the point and its figures below the chart and open its plan file
(a link inside the results folder: the browser opens or downloads the YAML)."""


def cmd_frontier(args: argparse.Namespace) -> int:
    """An interactive Pareto chart of a results table (HTML)."""
    from planner.batch.sweep import read_results
    from planner.fileio import atomic_write, check_writable

    check_writable(args.output)
    results = Path(args.results)
    if not results.is_file():
        raise InputError(f"{args.results}: no such results table")
    table = read_results(results)
    missing = [a for a in (args.x, args.y, args.z) if a and a not in table.columns]
    if missing:
        raise InputError(f"--x/--y/--z: no column {', '.join(missing)} (columns: {', '.join(table.columns)})")

    from planner.batch.frontier import frontier_figure

    out_dir = Path(".") if args.output == "-" else Path(args.output).parent
    base = Path(os.path.relpath(results.parent, out_dir))
    fig, ok = frontier_figure(table, args.x, args.y, args.z, base)
    script = FRONTIER_CLICK
    atomic_write(
        args.output,
        fig.to_html(include_plotlyjs="cdn" if args.cdn else True, post_script=script, full_html=True),
    )
    print(
        f"wrote {args.output}: {int(ok['pareto'].sum()) if len(ok) else 0} of {len(ok)} points on the "
        "frontier",
        file=sys.stderr if args.output == "-" else sys.stdout,
    )
    return EXIT_OK
