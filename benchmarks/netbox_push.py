"""A plan's NetBox bundle pushed into the running NetBox (`scripts/netbox up`), kind by kind: wall
seconds, requests, objects and objects per second, then read back (SPEC §20, #49 item 4).

    .venv/bin/python benchmarks/netbox_push.py --scenario datasets/meta-24k-building.yaml \\
        [--plan PLAN.yaml] [--no-whips] [--out NETBOX-PUSH.md]

Without ``--plan`` the scenario is planned first (not timed). Every object is named with a fresh
prefix, so runs stand apart in one NetBox. Wall from the first request to the last; CPU of this
process (the client) beside it; NetBox's own CPU is the server's (runserver, one process)."""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _env() -> tuple[str, str]:
    kv = {}
    f = ROOT / ".netbox" / "env"
    if f.is_file():
        kv = dict(line.split("=", 1) for line in f.read_text().split() if "=" in line)
    url = os.environ.get("NETBOX_URL") or kv.get("NETBOX_URL", "")
    token = os.environ.get("NETBOX_TOKEN") or kv.get("NETBOX_TOKEN", "")
    if not url or not token:
        sys.exit("no running NetBox: scripts/netbox up")
    return url, token


def main() -> None:
    from planner.dcim.bundle import api_payload, bundle, slug
    from planner.dcim.client import NetBox
    from planner.dcim.push import push
    from planner.input.loader import load_scenario
    from planner.plan import load_plan
    from planner.plan.pipeline import plan_scenario

    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--plan")
    ap.add_argument("--no-whips", action="store_true")
    ap.add_argument("--out", default="NETBOX-PUSH.md")
    args = ap.parse_args()
    s = load_scenario(args.scenario)
    plan = load_plan(args.plan) if args.plan else plan_scenario(s)
    prefix = f"b{uuid.uuid4().hex[:8]}-"
    payload = api_payload(bundle(plan, s, prefix=prefix, whips=not args.no_whips))
    url, token = _env()
    nb = NetBox(url, token, timeout_s=600)
    calls = {"n": 0}
    inner = nb.call

    def counted(method, path, body=None):
        calls["n"] += 1
        return inner(method, path, body)

    nb.call = counted  # type: ignore[method-assign]
    rows, marks = [], [time.perf_counter()]
    seen = [0]

    def say(line: str) -> None:
        now = time.perf_counter()
        rows.append((line, now - marks[-1], calls["n"] - seen[0]))
        marks.append(now)
        seen[0] = calls["n"]
        print(line, flush=True)

    t0, c0 = time.perf_counter(), time.process_time()
    done = push(payload, nb, say=say)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    objects = sum(len(v) for v in payload["objects"].values())
    site = slug(f"{prefix}{s.site.id}")
    racks = nb.call("GET", f"/api/dcim/racks/?site={site}&limit=1")["count"]
    lines = [
        f"# {s.name} pushed into NetBox{' without whips' if args.no_whips else ''}",
        "",
        f"Written by `.venv/bin/python benchmarks/netbox_push.py --scenario {args.scenario}"
        f"{' --no-whips' if args.no_whips else ''}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"NetBox 4.7.3 under `runserver` on 127.0.0.1 (scripts/netbox), {platform.machine()}, "
        f"{os.cpu_count()} cores. Wall from the first request to the last; requests include the reads "
        "that find what exists.",
        "",
        "| kind | objects | created | updated | retired | wall s | requests | objects / s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (_, took, n), kind in zip(rows, payload["order"], strict=False):
        d = done.get(kind, {})
        k = len(payload["objects"].get(kind, []))
        lines.append(
            f"| {kind} | {k:,} | {d.get('created', 0):,} | {d.get('updated', 0):,} | "
            f"{d.get('retired', 0):,} | {took:.1f} | {n:,} | {k / took if took else 0:,.1f} |"
        )
    lines += [
        f"| **all** | **{objects:,}** | | | | **{wall:.1f}** | **{calls['n']:,}** | "
        f"**{objects / wall:,.1f}** |",
        "",
        f"Client CPU {cpu:.1f} s beside {wall:.1f} s wall ({cpu / wall:.2f}); racks read back: {racks:,}.",
    ]
    (ROOT / "benchmarks" / args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote benchmarks/{args.out}: {objects:,} objects in {wall:.1f} s")


if __name__ == "__main__":
    main()
