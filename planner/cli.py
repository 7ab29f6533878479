"""The ``planner`` command line (§12).

Exit codes: 0 ok, 1 infeasible or verification failed, 2 bad input.
Errors are one short message; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

from planner.errors import InputError

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def _print_table(rows: list[tuple[str, ...]], out=sys.stdout) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip(), file=out)


def cmd_validate(args: argparse.Namespace) -> int:
    """Load and validate a scenario; print what it holds."""
    from planner.loader import load_scenario
    from planner.site_index import index_site

    s = load_scenario(args.scenario)
    ix = index_site(s.site)
    positions = sum(r.row.positions - len(r.row.reserved) for r in ix.rows.values()) - len(ix.pods)
    print(
        f"{args.scenario}: valid scenario '{s.name}': {len(s.site.buildings)} buildings, "
        f"{len(ix.halls)} halls, {len(ix.rows)} rows, {positions} usable positions, "
        f"{len(ix.power_nodes)} power nodes, {len(ix.zones)} cooling zones, {len(ix.pods)} pods, "
        f"{len(s.catalog.rack_types)} rack types, {len(s.clusters)} clusters"
    )
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    """Check a plan against a scenario, independently of the solver."""
    from planner.loader import load_scenario
    from planner.plan import load_plan
    from planner.verify import verify

    scenario = load_scenario(args.scenario)
    plan = load_plan(args.plan)
    rep = verify(plan, scenario)
    if rep.ok:
        print(f"{args.plan}: plan is valid for scenario '{scenario.name}' ({len(plan.racks)} racks, every constraint holds)")
        return EXIT_OK
    print(f"{args.plan}: {len(rep.violations)} violation(s) of scenario '{scenario.name}':")
    for v in rep.violations:
        print(f"  - [{v.check}] {v}")
    return EXIT_FAILED


def cmd_generate_site(args: argparse.Namespace) -> int:
    """Generate a regular site YAML from a spec file or from flags."""
    from planner.generate import BuildingSpec, SiteSpec, generate_site
    from planner.loader import dump_yaml, read_yaml_file, validate_model

    if args.spec:
        spec = validate_model(SiteSpec, read_yaml_file(args.spec), "", args.spec)
        command = f"planner generate-site --spec {args.spec}"
    else:
        b = BuildingSpec(
            count=args.buildings,
            halls=args.halls,
            pods_per_hall=args.pods_per_hall,
            rows_per_pod=args.rows_per_pod,
            positions_per_row=args.positions,
            power_design=args.power_design,
            design_kw_per_position=args.design_kw,
            max_rack_power_kw=args.max_rack_kw,
            liquid=args.liquid,
            pod_max_gpus=args.pod_max_gpus,
            pod_max_racks=args.pod_max_racks,
        )
        spec = SiteSpec(id=args.id, buildings=[b])
        command = "planner generate-site " + " ".join(sys.argv[2:])
    site = generate_site(spec, command)
    text = dump_yaml(site.model_dump(mode="json", exclude_defaults=True))
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        n_rows = sum(len(h.rows) for b in site.buildings for h in b.halls)
        print(f"wrote {args.output}: {len(site.buildings)} buildings, {n_rows} rows")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every sub-command."""
    p = argparse.ArgumentParser(prog="planner", description="GPU fleet capacity and datacenter layout planner")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = p.add_subparsers(dest="command", required=True)

    v = sub.add_parser("validate", help="load and validate a scenario")
    v.add_argument("scenario")
    v.set_defaults(func=cmd_validate)

    vf = sub.add_parser("verify", help="check a plan against its scenario (independent of the solver)")
    vf.add_argument("plan")
    vf.add_argument("scenario")
    vf.set_defaults(func=cmd_verify)

    g = sub.add_parser("generate-site", help="generate a regular site YAML")
    g.add_argument("--spec", help="generator spec YAML (mixed buildings)")
    g.add_argument("-o", "--output", help="site YAML to write (default: stdout)")
    g.add_argument("--id", default="generated")
    g.add_argument("--buildings", type=_positive_int, default=1)
    g.add_argument("--halls", type=_positive_int, default=1)
    g.add_argument("--pods-per-hall", type=_positive_int, default=1)
    g.add_argument("--rows-per-pod", type=_positive_int, default=4)
    g.add_argument("--positions", type=_positive_int, default=20, help="positions per row")
    g.add_argument("--power-design", choices=["2n", "dr"], default="2n")
    g.add_argument("--design-kw", type=float, default=21.4, help="design IT kW per position")
    g.add_argument("--max-rack-kw", type=float, default=25.0)
    g.add_argument("--liquid", action="store_true", help="give every pod a liquid loop")
    g.add_argument("--pod-max-gpus", type=_positive_int, default=3072)
    g.add_argument("--pod-max-racks", type=_positive_int, default=192)
    g.set_defaults(func=cmd_generate_site)

    for extra in _EXTRA_COMMANDS:
        extra(sub)
    return p


_EXTRA_COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = []


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
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
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - the CLI never shows a traceback unless asked
        if args.debug:
            traceback.print_exc()
        else:
            print(f"internal error: {type(e).__name__}: {e} (run with --debug for the traceback)", file=sys.stderr)
        return 3


def entry() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    entry()
