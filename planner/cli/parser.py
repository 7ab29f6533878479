"""The ``planner`` argument parser: one function per sub-command."""

from __future__ import annotations

import argparse
import sys

from planner.cli.commands import (
    cmd_batch,
    cmd_explain,
    cmd_frontier,
    cmd_generate_site,
    cmd_plan,
    cmd_validate,
)
from planner.cli.dcim import cmd_import_netbox, cmd_library, cmd_netbox_push
from planner.cli.plans import (
    EXIT_BAD_INPUT,
    cmd_blast_radius,
    cmd_compare,
    cmd_diff,
    cmd_export,
    cmd_verify,
)


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


def _positive_float(text: str) -> float:
    value = _finite_float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text[:40]}")
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
    _add_netbox(sub)
    _add_import(sub)
    _add_library(sub)
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
        help="a verified plan's racks for other tools: placement CSV or XLSX, a NetBox bundle",
    )
    xp.add_argument("plan", help="plan YAML (planner plan -o)")
    xp.add_argument("scenario", help="the scenario it was made for (gives each rack's power and feeds)")
    xp.add_argument(
        "--format",
        choices=["csv", "xlsx", "netbox", "netbox-api"],
        default="csv",
        help=(
            "csv: one row per rack; xlsx: one sheet per hall plus KPIs; netbox: a folder (or .zip) of "
            "NetBox bulk-import CSVs in import order, overlay.yaml and the API payload; netbox-api: the "
            "REST API payload (JSON)"
        ),
    )
    xp.add_argument("-o", "--output", required=True, help="file (or, for netbox, folder) to write")
    xp.add_argument(
        "--prefix", default="", help="prefix of every NetBox name (keeps plans of one site apart)"
    )
    xp.add_argument(
        "--site-level",
        choices=["campus", "building"],
        default="campus",
        help="NetBox site = the campus (buildings and halls are locations) or each building",
    )
    xp.add_argument(
        "--no-whips",
        action="store_true",
        help="leave out each rack's whips, power ports and cables (two thirds of a gigawatt bundle; "
        "NetBox then shows no rack power utilisation)",
    )
    _data_root_flag(xp)
    xp.set_defaults(func=cmd_export)


def _add_netbox(sub) -> None:
    """``netbox push``: load a bundle into a running NetBox."""
    nb = sub.add_parser("netbox", help="load a NetBox bundle into a running NetBox (create or update)")
    nsub = nb.add_subparsers(dest="netbox_command", required=True, parser_class=_Parser)
    push = nsub.add_parser("push", help="create or update every object of a bundle through the REST API")
    push.add_argument("payload", help="netbox-api.json (planner export --format netbox-api, or a bundle's)")
    push.add_argument("--url", required=True, help="NetBox address, e.g. http://127.0.0.1:8000")
    push.add_argument(
        "--token-env", default="NETBOX_TOKEN", help="environment variable holding the API token"
    )
    push.add_argument(
        "--on-dropped",
        choices=["decommissioning", "delete"],
        default="decommissioning",
        help="what an older plan of the same sites made and this one dropped becomes (default: "
        "devices decommissioning, feeds offline, racks deprecated; delete removes them)",
    )
    _http_flags(push, deadline=False)
    push.set_defaults(func=cmd_netbox_push)


def _http_flags(p, deadline: bool) -> None:
    """How long NetBox may take to answer, and whether its TLS certificate is checked."""
    p.add_argument(
        "--timeout", type=_positive_float, default=120.0, help="seconds for one whole answer (default 120)"
    )
    if deadline:
        p.add_argument(
            "--deadline",
            type=_positive_float,
            default=1800.0,
            help="seconds for the whole import, from process start (default 1800)",
        )
    p.add_argument("--insecure", action="store_true", help="do not verify NetBox's TLS certificate")


def _add_library(sub) -> None:
    """``library store|list|show``: the plan library (planner/library/__init__.py)."""
    lb = sub.add_parser("library", help="the plan library: verified plans kept in a database")
    lb.add_argument(
        "--library", help="database URL (default: $PLANNER_LIBRARY, else SQLite in ~/.local/share)"
    )
    lsub = lb.add_subparsers(dest="library_command", required=True, parser_class=_Parser)
    st = lsub.add_parser("store", help="store a plan that verifies against its scenario")
    st.add_argument("plan")
    st.add_argument("scenario")
    st.add_argument(
        "--mode", default="joint", help="how it was made (joint, rolling, stochastic, decomposed)"
    )
    _data_root_flag(st)
    ls = lsub.add_parser("list", help="the newest stored plans")
    ls.add_argument("--limit", type=_positive_int, default=50)
    sh = lsub.add_parser("show", help="write a stored plan (and its scenario) to files")
    sh.add_argument("id")
    sh.add_argument("-o", "--output", required=True, help="plan YAML to write")
    sh.add_argument("--scenario-out", help="also write its self-contained scenario YAML")
    lb.set_defaults(func=cmd_library)


def _add_import(sub) -> None:
    """``import netbox``: a site YAML from NetBox."""
    im = sub.add_parser("import", help="a site YAML (and installed racks) from a DCIM")
    isub = im.add_subparsers(dest="import_source", required=True, parser_class=_Parser)
    n = isub.add_parser(
        "netbox", help="from NetBox's REST API, a folder of its import-column CSVs or its own CSV export"
    )
    src = n.add_mutually_exclusive_group(required=True)
    src.add_argument("--url", help="NetBox address (token in $NETBOX_TOKEN or --token-env)")
    src.add_argument(
        "--csv", help="folder of CSVs named by kind (racks.csv, 07-racks.csv, or NetBox's netbox_racks.csv …)"
    )
    n.add_argument("--token-env", default="NETBOX_TOKEN", help="environment variable holding the API token")
    _http_flags(n, deadline=True)
    n.add_argument("--overlay", help="YAML of what NetBox cannot hold (a bundle's overlay.yaml)")
    n.add_argument("--prefix", default="", help="only objects named with this prefix (stripped)")
    n.add_argument("--site", help="the NetBox site to import (name or slug; needed when several hold racks)")
    n.add_argument("-o", "--output", required=True, help="site YAML to write")
    n.add_argument(
        "--existing",
        help="also write the installed racks and their rack types (a file for a scenario's existing:)",
    )
    n.set_defaults(func=cmd_import_netbox)


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
        "--certify",
        action="store_true",
        help="also write PLAN.cert.json beside the plan: the model as an LP and the row duals of its "
        "relaxation, a bound `planner verify` checks itself (in the time left of the limit)",
    )
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
    ex.add_argument(
        "--decompose",
        choices=["building"],
        help="region scale: plan through the decomposition by building in half the time limit, then "
        "re-plan the tightest limit of each kind relaxed from that plan (only the buildings the step "
        "touches solve again; gains as the re-plans find them), all within the time limit",
    )
    ex.set_defaults(func=cmd_explain)


def _solver_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--solver", help="highs (default) or cbc; overrides the scenario")
    p.add_argument(
        "--time-limit", type=_finite_float, help="seconds for the whole run; overrides the scenario"
    )
    p.add_argument("--gap", type=_finite_float, help="relative MIP gap; overrides the scenario")
    p.add_argument(
        "--work-limit",
        type=int,
        metavar="NODES",
        help="branch-and-bound nodes per solve instead of seconds: the same answer on every machine "
        "and under any load (the time limit stays a safety net); overrides the scenario",
    )
    _data_root_flag(p)


def _data_root_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data-root",
        help="folder the scenario's site: and catalog: files must be inside (default: the scenario's folder)",
    )
