"""The ``planner`` command line (§12).

Exit codes: 0 ok, 1 infeasible or verification failed, 2 bad input (a bad
file, value or flag), 3 internal error (a bug: please report it with
``--debug``), 130 interrupted (Ctrl-C). Errors are one short message;
``--debug`` shows the traceback. Output files are checked before any solve
and written atomically. A closed pipe (``planner validate X | head -1``)
ends the command quietly.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import time
import traceback
from pathlib import Path

from planner.cli.plans import (
    EXIT_FAILED,
    EXIT_OK,
    cmd_blast_radius,
    cmd_compare,
    cmd_diff,
    cmd_export,
    cmd_verify,
    plan_summary,
    scenario_of,
)
from planner.errors import InputError, Problem

EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED = 2, 3, 130


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
    import os

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
        for k, v in (("name", args.solver), ("time_limit_s", args.time_limit), ("rel_gap", args.gap))
        if v is not None
    }
    if over:
        flags = {"name": "--solver", "time_limit_s": "--time-limit", "rel_gap": "--gap"}
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
    if getattr(args, "quiet", False):
        return None

    def show(p) -> None:
        print(str(p), file=sys.stderr, flush=True)

    return show


def cmd_plan(args: argparse.Namespace) -> int:
    """Solve a scenario; write the plan; print a summary."""
    from planner.clock import Deadline
    from planner.enums import Status
    from planner.fileio import check_writable
    from planner.plan import save_plan

    started = time.perf_counter()  # the time limit bounds the whole run, loading included
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
    plan = _planned(args, s, deadline)
    to_stdout = args.output == "-"
    if args.output:
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


def _planned(args: argparse.Namespace, s, deadline):
    """The plan the flags ask for: decomposed by building, rolling, two-stage or joint."""
    from planner.plan.pipeline import plan_rolling, plan_scenario

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
    from planner.explainer import explain

    s = _scenario_with_overrides(args)
    ex, _ = explain(s, progress=_progress(args))
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
    import os

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


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text[:40]!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text[:40]}")
    return value


def _finite_float(text: str) -> float:
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text[:40]!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text[:40]}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is bad input (exit 2) with one line naming the flag."""

    def error(self, message: str):  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every sub-command."""
    p = _Parser(prog="planner", description="GPU fleet capacity and datacenter layout planner")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _add_validate(sub)
    _add_verify(sub)
    _add_export(sub)
    _add_blast_radius(sub)
    _add_generate_site(sub)
    _add_plan(sub)
    _add_batch(sub)
    _add_frontier(sub)
    _add_compare(sub)
    _add_diff(sub)
    _add_explain(sub)
    return p


def _add_validate(sub) -> None:
    """The ``validate`` command's flags."""
    v = sub.add_parser("validate", help="load and validate a scenario")
    v.add_argument("scenario")
    _data_root_flag(v)
    v.set_defaults(func=cmd_validate)


def _add_verify(sub) -> None:
    """The ``verify`` command's flags."""
    vf = sub.add_parser("verify", help="check a plan against its scenario (independent of the solver)")
    vf.add_argument("plan")
    vf.add_argument("scenario")
    _data_root_flag(vf)
    vf.set_defaults(func=cmd_verify)


def _add_export(sub) -> None:
    """The ``export`` command's flags."""
    xp = sub.add_parser(
        "export",
        help="a verified plan's racks for other tools: placement CSV or XLSX, NetBox device import CSV",
    )
    xp.add_argument("plan", help="plan YAML (planner plan -o)")
    xp.add_argument("scenario", help="the scenario it was made for (gives each rack's power and feeds)")
    xp.add_argument(
        "--format",
        choices=["csv", "xlsx", "netbox"],
        default="csv",
        help=(
            "csv: one row per rack; xlsx: one sheet per hall plus KPIs; netbox: NetBox device bulk-import CSV"
        ),
    )
    xp.add_argument("-o", "--output", required=True, help="file to write (a regular file or a new path)")
    _data_root_flag(xp)
    xp.set_defaults(func=cmd_export)


def _add_blast_radius(sub) -> None:
    """The ``blast-radius`` command's flags."""
    br = sub.add_parser(
        "blast-radius", help="what each power node, cooling zone, pod and row takes down when it fails"
    )
    br.add_argument("plan")
    br.add_argument("scenario")
    br.add_argument(
        "--kind", choices=["power_node", "cooling_zone", "pod", "row"], help="only this kind of element"
    )
    br.add_argument(
        "--top", type=_positive_int, default=20, help="elements listed (most GPUs lost first; default 20)"
    )
    br.add_argument("--all", action="store_true", help="every element, also those that take down nothing")
    _data_root_flag(br)
    br.set_defaults(func=cmd_blast_radius)


def _add_generate_site(sub) -> None:
    """The ``generate-site`` command's flags."""
    g = sub.add_parser("generate-site", help="generate a regular site YAML")
    g.add_argument("--spec", help="generator spec YAML (mixed buildings)")
    g.add_argument(
        "-o",
        "--output",
        help="site YAML to write: a regular file or a new path (default, or -: standard output)",
    )
    g.add_argument(
        "--scenario",
        help="with a spec that has fleet: the scenario YAML to write (its clusters; it names the site by -o)",
    )
    g.add_argument("--id", default="generated")
    g.add_argument("--buildings", type=_positive_int, default=1)
    g.add_argument("--halls", type=_positive_int, default=1)
    g.add_argument("--pods-per-hall", type=_positive_int, default=1)
    g.add_argument("--rows-per-pod", type=_positive_int, default=4)
    g.add_argument("--positions", type=_positive_int, default=20, help="positions per row")
    g.add_argument("--power-design", choices=["2n", "dr"], default="2n")
    g.add_argument("--design-kw", type=_finite_float, default=21.4, help="design IT kW per position")
    g.add_argument("--max-rack-kw", type=_finite_float, default=25.0)
    g.add_argument("--liquid", action="store_true", help="give every pod a liquid loop")
    g.add_argument("--pod-max-gpus", type=_positive_int, default=3072)
    g.add_argument("--pod-max-racks", type=_positive_int, default=192)
    g.set_defaults(func=cmd_generate_site)


def _add_plan(sub) -> None:
    """The ``plan`` command's flags."""
    pl = sub.add_parser("plan", help="solve a scenario and write the plan YAML")
    pl.add_argument("scenario")
    pl.add_argument(
        "-o",
        "--output",
        help="plan YAML to write: a regular file or a new path in an existing folder; - for standard output "
        "(the summary then goes to standard error)",
    )
    _solver_flags(pl)
    pl.add_argument(
        "--per-position",
        action="store_true",
        help="binary per position instead of aggregated classes (slower; for comparison)",
    )
    pl.add_argument(
        "--mode",
        choices=["joint", "rolling", "stochastic"],
        default="joint",
        help="phased scenarios: joint (all phases in one model, default), rolling (phase by phase, "
        "each fixing the last) "
        "or stochastic (scenarios with futures: one first phase for every future, later phases per future)",
    )
    pl.add_argument("--quiet", action="store_true", help="no progress lines")
    pl.add_argument(
        "--write-lp",
        metavar="FILE",
        help="also write the model as built (CPLEX LP format, readable row and variable names) "
        "to FILE, to hand to another solver",
    )
    pl.add_argument(
        "--decompose",
        choices=["building"],
        help="very large sites: solve buildings in parallel and coordinate them in a master problem "
        "(reports the gap to "
        "the LP bound of the whole)",
    )
    pl.add_argument(
        "--executor",
        choices=["serial", "process", "dask"],
        default="process",
        help="where --decompose runs its building solves",
    )
    pl.add_argument("--workers", type=_positive_int, default=2, help="worker processes of --decompose")
    pl.add_argument(
        "--scheduler", help="tcp://HOST:PORT of a running Dask scheduler (--decompose with --executor dask)"
    )
    pl.add_argument(
        "--connect-timeout",
        type=_finite_float,
        default=10.0,
        help="seconds to wait for --scheduler to answer (default 10)",
    )
    pl.set_defaults(func=cmd_plan)


def _add_batch(sub) -> None:
    """The ``batch`` command's flags."""
    b = sub.add_parser("batch", help="solve a sweep of scenario variants in parallel into one results table")
    b.add_argument("sweep")
    b.add_argument(
        "-o", "--output", required=True, help="results folder (results.csv, results.parquet, plans/)"
    )
    b.add_argument("--executor", choices=["serial", "process", "dask"], default="process")
    b.add_argument("--workers", type=_positive_int, default=2)
    b.add_argument(
        "--scheduler",
        help="tcp://HOST:PORT of a running Dask scheduler (dask executor; default: a LocalCluster)",
    )
    b.add_argument("--time-limit", type=_finite_float, help="seconds per point")
    b.add_argument(
        "--data-root", help="folder the sweep's files must be inside (default: the folder above the sweep's)"
    )
    b.add_argument("--quiet", action="store_true", help="no progress")
    b.add_argument(
        "--connect-timeout",
        type=_finite_float,
        default=10.0,
        help="seconds to wait for --scheduler to answer (default 10)",
    )
    b.add_argument(
        "--max-points",
        type=_positive_int,
        default=10_000,
        help="refuse a sweep with more points (default 10,000)",
    )
    b.set_defaults(func=cmd_batch)


def _add_frontier(sub) -> None:
    """The ``frontier`` command's flags."""
    fr = sub.add_parser("frontier", help="interactive Pareto chart (HTML) of a results table")
    fr.add_argument("results")
    fr.add_argument(
        "--x", default="capex_usd", help="results column on the x axis (default capex_usd; minimised)"
    )
    fr.add_argument(
        "--y",
        default="gpus",
        help="results column on the y axis (default gpus; gpus and pflops_bf16 are maximised, "
        "every other column minimised)",
    )
    fr.add_argument("--z", help="a third column for a 3-D chart (e.g. it_mw)")
    fr.add_argument("-o", "--output", required=True, help="HTML file to write (- for standard output)")
    fr.add_argument("--cdn", action="store_true", help="load plotly.js from its CDN instead of embedding it")
    fr.set_defaults(func=cmd_frontier)


def _add_compare(sub) -> None:
    """The ``compare`` command's flags."""
    cp = sub.add_parser("compare", help="plans side by side: KPIs, costs, tightest limits")
    cp.add_argument("plans", nargs="+")
    cp.set_defaults(func=cmd_compare)


def _add_diff(sub) -> None:
    """The ``diff`` command's flags."""
    df = sub.add_parser("diff", help="racks added, removed and moved between two plans; KPI and cost deltas")
    df.add_argument("plan_a")
    df.add_argument("plan_b")
    df.add_argument("--limit", type=_positive_int, default=20, help="racks listed per kind (default 20)")
    df.set_defaults(func=cmd_diff)


def _add_explain(sub) -> None:
    """The ``explain`` command's flags."""
    ex = sub.add_parser("explain", help="why a scenario is infeasible, or which limits bind")
    ex.add_argument("scenario")
    _solver_flags(ex)
    ex.add_argument("--quiet", action="store_true", help="no progress lines")
    ex.set_defaults(func=cmd_explain)


def _solver_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--solver", help="highs (default) or cbc; overrides the scenario")
    p.add_argument(
        "--time-limit", type=_finite_float, help="seconds for the whole run; overrides the scenario"
    )
    p.add_argument("--gap", type=_finite_float, help="relative MIP gap; overrides the scenario")
    _data_root_flag(p)


def _data_root_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data-root",
        help="folder the scenario's site: and catalog: files must be inside (default: the scenario's folder)",
    )


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class SafeStream:
    """A text stream that prints control characters as escapes (``\\x1b``): a key or value from a
    file cannot clear the terminal, set its title or rewrite a line the planner printed. Newlines and
    tabs pass; progress bars write to ``raw``."""

    def __init__(self, raw) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        return self.raw.write(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text))

    def __getattr__(self, name: str):
        return getattr(self.raw, name)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code. Everything printed goes through :class:`SafeStream`."""
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = out, err


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: bad usage is bad input
        return EXIT_BAD_INPUT if e.code not in (0, None) else EXIT_OK
    try:
        return int(args.func(args))
    except InputError as e:
        if args.debug:
            traceback.print_exc()
        print(f"error: {e.render()}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        raise
    except BrokenPipeError:
        raise
    except Exception as e:  # noqa: BLE001 - the CLI never shows a traceback unless asked
        from planner.errors import SolverFailure

        if isinstance(e, SolverFailure):
            if args.debug:
                traceback.print_exc()
            print(f"error: {e}", file=sys.stderr)
            return EXIT_FAILED
        if args.debug:
            traceback.print_exc()
        else:
            print(
                f"internal error: {type(e).__name__}: {str(e)[:300]} (run with --debug for the traceback; "
                "exit code 3)",
                file=sys.stderr,
            )
        return EXIT_INTERNAL


def _interrupted(_signum, _frame) -> None:
    """Ctrl-C at any moment: one line, exit 130. Writes are atomic, so nothing is left half-written."""
    try:
        os.write(2, b"\ninterrupted\n")
    finally:
        os._exit(EXIT_INTERRUPTED)


def entry() -> None:
    """Console-script entry point: Ctrl-C and closed pipes handled before anything heavy loads."""
    signal.signal(signal.SIGINT, _interrupted)
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly (Python docs, "Note on SIGPIPE").
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = EXIT_OK
    except KeyboardInterrupt:
        _interrupted(None, None)
        return
    sys.exit(code)
