"""DCIM commands: ``planner netbox push`` (a bundle into a running NetBox) and ``planner import
netbox`` (a site YAML from one). Tokens come from the environment, never the command line."""

from __future__ import annotations

import argparse
import json
import os

from planner.cli.plans import EXIT_OK
from planner.errors import InputError


def _token(args: argparse.Namespace) -> str:
    token = os.environ.get(args.token_env, "")
    if not token:
        raise InputError(f"--token-env: environment variable {args.token_env} holds no NetBox API token")
    return token


def cmd_netbox_push(args: argparse.Namespace) -> int:
    """Create or update every object of a NetBox API payload (by natural key), kind by kind."""
    from planner.dcim.push import NetBox, push

    try:
        with open(args.payload, encoding="utf-8") as f:
            payload = json.load(f)
    except (OSError, ValueError) as e:
        raise InputError(f"{args.payload}: not a NetBox payload ({e})") from None
    if not isinstance(payload, dict) or not {"order", "endpoints", "objects"} <= set(payload):
        raise InputError(f"{args.payload}: not a NetBox payload (needs order, endpoints and objects)")
    nb = NetBox(args.url, _token(args), timeout_s=args.timeout, insecure=args.insecure)
    done = push(payload, nb, say=lambda s: print(s, flush=True), on_dropped=args.on_dropped)
    made = sum(v["created"] for v in done.values())
    kept = sum(v["updated"] for v in done.values())
    gone = sum(v.get("retired", 0) for v in done.values())
    print(
        f"NetBox at {args.url}: {made:,} objects created, {kept:,} updated, {gone:,} retired "
        f"({'deleted' if args.on_dropped == 'delete' else 'given a retired status'})"
    )
    return EXIT_OK


def cmd_import_netbox(args: argparse.Namespace) -> int:
    """A site YAML (and installed racks) from NetBox; everything unmapped is listed."""
    from planner.dcim.push import NetBox
    from planner.dcim.site import rows_from_api, rows_from_folder, site_from_rows
    from planner.fileio import atomic_write, check_writable
    from planner.input.loader import read_yaml_file, validate_model
    from planner.schema.site import Site
    from planner.yamlio import dump

    check_writable(args.output)
    if args.existing:
        check_writable(args.existing, "--existing")
    overlay = read_yaml_file(args.overlay) if args.overlay else {}
    if overlay is None or not isinstance(overlay, dict):
        raise InputError(f"--overlay {args.overlay}: expected a mapping")
    if args.csv:
        rows = rows_from_folder(args.csv)
    else:
        from planner.clock import run_started

        deadline = run_started() + args.deadline
        nb = NetBox(args.url, _token(args), timeout_s=args.timeout, deadline=deadline, insecure=args.insecure)
        rows = rows_from_api(nb, args.site)
    got = site_from_rows(rows, overlay, args.prefix, args.site)
    site = validate_model(Site, got.site, "site", args.url or args.csv)
    atomic_write(args.output, dump(site.model_dump(mode="json", exclude_defaults=True)))
    if args.existing:
        installed = (
            {"racks": got.existing, "rack_types": got.rack_types}
            if got.rack_types
            else {"existing": got.existing}
        )
        atomic_write(args.existing, dump(installed))
    halls = sum(len(b.halls) for b in site.buildings)
    rows_n = sum(len(h.rows) for b in site.buildings for h in b.halls)
    print(
        f"wrote {args.output}: {len(site.buildings)} building(s), {halls} hall(s), {rows_n} rows; "
        f"{len(got.existing)} installed rack(s)"
    )
    for line in got.defaults:
        print(f"default: {line}")
    for line in got.unmapped:
        print(f"unmapped: {line}")
    return EXIT_OK


def cmd_library(args: argparse.Namespace) -> int:
    """The plan library: store a verified plan, list what is stored, write one out."""
    from planner.cli.plans import EXIT_FAILED, print_table, scenario_of
    from planner.library import Library

    lib = Library(args.library)
    if args.library_command == "store":
        from planner.input.variants import scenario_yaml
        from planner.plan import load_plan

        scenario = scenario_of(args)
        plan = load_plan(args.plan)
        entry = {
            "plan": plan.model_dump(mode="json"),
            "wall_s": plan.wall_s if hasattr(plan, "wall_s") else None,
        }
        pid = lib.store(scenario_yaml(scenario), scenario.name, args.mode, entry, scenario)
        if pid is None:
            print(
                f"{args.plan}: not stored: it does not verify against scenario '{scenario.name}' "
                "(planner verify says why)"
            )
            return EXIT_FAILED
        print(f"stored {args.plan} as plan {pid} ({lib.url})")
        return EXIT_OK
    if args.library_command == "list":
        rows = [("id", "scenario", "mode", "status", "GPUs", "gap", "wall s", "check")]
        failing = []
        for r in lib.list(args.limit):
            gap = "" if r["gap"] is None else f"{100 * r['gap']:.3f}%"
            wall = "" if r["wall_s"] is None else f"{r['wall_s']:.1f}"
            check = "verified" if r["valid"] else "FAILS"
            rows.append((r["id"], r["name"], r["settings"], r["status"], f"{r['gpus']:,}", gap, wall, check))
            if not r["valid"]:
                failing.append(f"plan {r['id']} fails its check: {r['why']}")
        print_table(rows)
        for line in failing:
            print(line)
        return EXIT_OK if not failing else EXIT_FAILED
    got = lib.get(args.id)
    if got is None:
        raise InputError(f"id: the library holds no plan '{args.id}' (planner library list)")
    if not got["valid"]:
        print(f"plan {args.id} fails its check: {got['why']}; not written")
        return EXIT_FAILED
    from planner.fileio import atomic_write
    from planner.plan import Plan, plan_to_yaml

    atomic_write(args.output, plan_to_yaml(Plan.model_validate(got["entry"]["plan"])))
    if args.scenario_out:
        atomic_write(args.scenario_out, got["scenario_text"])
    print(f"wrote plan {args.id} of scenario '{got['scenario_name']}' to {args.output}")
    return EXIT_OK
