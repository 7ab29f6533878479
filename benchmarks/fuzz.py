"""Fuzz every input kind the planner reads and count what the CLI does with the mutants.

    .venv/bin/python benchmarks/fuzz.py            # 2,000 mutants, seed 1 (a few minutes)
    .venv/bin/python benchmarks/fuzz.py -n 200     # fewer

Inputs: the shipped scenarios (with their sites inlined or beside them), sites, the catalog,
the sweeps, a plan and a results table; a scenario with every §21 block (power the grid accepts,
sources, water); NetBox answers (a fake NetBox on 127.0.0.1 serving small-hall's objects, one
page mutated, read by ``planner import netbox --url``); plan-library rows (a stored plan's JSON
mutated in the database, read by ``planner library list`` and ``show``); and what-if edits (the
dashboard's change sets, mutated, applied by :func:`planner.input.variants.apply_changes`: an
InputError is an answer, any other exception a failure). Each mutant is one of: a scalar replaced by a hostile
value, a key dropped or renamed, a list emptied or doubled, bytes flipped, inserted or cut, or
the text truncated. Each runs through the CLI command that reads it (validate, plan with a
short time limit, verify, batch, frontier, compare) in this process, under a 30 s alarm. An exit
code of 3 (an internal error: a bug) or an alarm (a hang) is a failure; 0, 1 and 2 are answers.
The result is a count per input kind and exit code.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HOSTILE = [
    None,
    "",
    0,
    -1,
    1e308,
    -1e308,
    10**40,
    0.5,
    True,
    [],
    {},
    "x" * 5000,
    "../../../etc/passwd",
    "/dev/zero",
    "\x1b[2J",
    "NaN",
    ".nan",
    "-.inf",
    "2024-13-45",
    "!!int",
    "${x}",
    "null",
    [[]],
    {"a": {"b": {}}},
    "a\x00b",
    3.999999999,
    "tcp://x:1",
]
TIMEOUT_S = 30


class Hang(Exception):
    pass


def _tamper(db: Path, entry: str) -> None:
    """Write ``entry`` as every stored plan's JSON in the library at ``db``."""
    import sqlite3

    with contextlib.closing(sqlite3.connect(db)) as c:
        c.execute("UPDATE plans SET entry = ?", (entry,))
        c.commit()


def _alarm(_signum, _frame):
    raise Hang()


def _walk(data, path=()):
    """Every (path, value) in nested YAML data."""
    yield path, data
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _walk(v, (*path, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _walk(v, (*path, i))


def _set(data, path, value):
    cur = data
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value


def mutate(text: str, rng: random.Random) -> str:
    """One mutation of YAML or CSV text (module docstring)."""
    import yaml

    kind = rng.random()
    if kind < 0.6:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            data = None
        if isinstance(data, (dict, list)):
            spots = [p for p, _ in _walk(data) if p]
            if spots:
                p = rng.choice(spots)
                op = rng.random()
                if op < 0.55:
                    _set(data, p, rng.choice(HOSTILE))
                elif op < 0.75 and isinstance(p[-1], str):
                    cur = data
                    for q in p[:-1]:
                        cur = cur[q]
                    value = cur.pop(p[-1])
                    if rng.random() < 0.5:
                        cur[p[-1] + rng.choice(["_x", "\x1b]0;t\x07", " "])] = value
                else:
                    cur = data
                    for q in p[:-1]:
                        cur = cur[q]
                    v = cur[p[-1]]
                    if isinstance(v, list):
                        cur[p[-1]] = [] if rng.random() < 0.5 else v * rng.choice([2, 50])
                    else:
                        _set(data, p, rng.choice(HOSTILE))
            return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    b = bytearray(text.encode())
    if not b:
        return text
    if kind < 0.75:
        for _ in range(rng.randint(1, 5)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif kind < 0.9:
        i = rng.randrange(len(b))
        b[i:i] = rng.choice(
            [
                b"\t",
                b"{",
                b"[",
                b"- ",
                b": ",
                b"&a ",
                b"*a",
                b"!!python/object:os.system ",
                b"\n  x: 1\n",
                b'"',
            ]
        )
    else:
        b = b[: rng.randrange(len(b))]
    return b.decode(errors="replace")


GRID_BLOCK = """
power_arrival:
  - {interconnect_mw: 2, dynamic_range_mw: 0.4, ramp_mw_per_s: 0.4, source: fuzz seed}
  - {generation_mw: 1, power_source: gas, dynamic_range_mw: 0.2, ramp_mw_per_s: 0.1, source: fuzz seed}
power_stability: {swing_s: 1, source: fuzz seed}
power_sources:
  grid: {t_co2_per_mwh: 0.4, usd_per_mwh: 70, source: fuzz seed}
  gas: {t_co2_per_mwh: 0.5, usd_per_mwh: 90, source: fuzz seed}
water: {wue_l_per_kwh: 0.2, peak_l_per_s_per_mw: 0.4, source: fuzz seed}
"""
"""§21 fields appended to small-hall for the ``grid`` seed."""

WHATIF = """site:
  power_nodes: {UPS-A: {capacity_kw: 900}}
  cooling_zones: {CZ-AIR: {units: 12}}
  rows: {R03: {reserved: [3, 4]}}
budgets: {capex_usd: 50000000}
gpu_power_cap_w: 600
clusters: {train-gt: {max_hops: 5}}
"""
"""A what-if change set of the dashboard's kind, on small-hall (the ``whatif`` seed)."""


class _NetBoxPages:
    """A fake NetBox on 127.0.0.1 serving the JSON page files of the folder in ``root[0]``
    (``racks.json`` for ``/api/dcim/racks/?limit=1000``); other paths: an empty page."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        root: list[Path] = []
        self.root = root

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a) -> None:
                pass

            def do_GET(self) -> None:
                kind = self.path.split("/api/dcim/", 1)[-1].split("/", 1)[0]
                f = root[0] / f"{kind}.json" if root else None
                body = f.read_bytes() if f is not None and f.is_file() else b'{"next": null, "results": []}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


def _netbox_seed(work: Path) -> None:
    """small-hall's bundle as API pages in ``work/netbox`` (one JSON file per kind)."""
    import csv

    from planner.cli import main

    main(
        [
            "export",
            str(work / "small-hall.plan.yaml"),
            str(work / "small-hall.yaml"),
            "--format",
            "netbox",
            "-o",
            str(work / "bundle"),
        ]
    )
    (work / "netbox").mkdir()
    for f in (work / "bundle").glob("*.csv"):
        kind = f.stem.split("-", 1)[1]
        rows = list(csv.DictReader(f.open(encoding="utf-8")))
        (work / "netbox" / f"{kind}.json").write_text(
            json.dumps({"count": len(rows), "next": None, "results": rows})
        )
    shutil.copy(work / "bundle" / "overlay.yaml", work / "netbox-overlay.yaml")


def _library_seed(work: Path) -> str:
    """small-hall's plan stored in ``work/library.sqlite``; its entry JSON in ``work/library-entry.json``;
    the plan's ID."""
    from planner.input.loader import load_scenario
    from planner.input.variants import scenario_yaml
    from planner.library import Library
    from planner.plan import load_plan

    s = load_scenario(work / "small-hall.yaml")
    plan = load_plan(work / "small-hall.plan.yaml")
    entry = {"plan": plan.model_dump(mode="json"), "wall_s": 1.0}
    pid = Library(f"sqlite:///{work}/library.sqlite").store(scenario_yaml(s), "small-hall", "joint", entry, s)
    (work / "library-entry.json").write_text(json.dumps(entry))
    return pid


def _whatif(target: Path, work: Path) -> int:
    """Apply a mutated what-if change set to small-hall: 0 applied, 2 refused (InputError)."""
    import yaml

    from planner.errors import InputError
    from planner.input.loader import load_scenario
    from planner.input.variants import apply_changes

    try:
        changes = yaml.safe_load(target.read_text())
    except yaml.YAMLError:
        return 2  # the dashboard builds change sets itself; a text that is no YAML never reaches it
    try:
        apply_changes(load_scenario(work / "small-hall.yaml"), changes)
    except InputError:
        return 2
    return 0


def _prepare(work: Path) -> dict[str, list[tuple[Path, list[str]]]]:
    """Seed inputs in ``work`` and the CLI arguments that read each: kind → [(file, args)]."""
    from planner.cli import main

    for f in (ROOT / "datasets").glob("*.yaml"):
        shutil.copy(f, work / f.name)
    (work / "sweeps").mkdir()
    for f in (ROOT / "datasets" / "sweeps").glob("*.yaml"):
        shutil.copy(f, work / "sweeps" / f.name)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(["plan", str(work / "small-hall.yaml"), "-o", str(work / "small-hall.plan.yaml"), "--quiet"])
        main(["plan", str(work / "dr-hall-flex.yaml"), "-o", str(work / "dr-hall-flex.plan.yaml"), "--quiet"])
        (work / "mini").mkdir()
        (work / "mini" / "two.yaml").write_text(
            "name: two\nbase: ../small-hall.yaml\ngrid:\n  gpu_power_cap_w: [null, 600]\n"
            "zip:\n  clusters[0].rack_types: [[grand-teton-h100]]\n"
        )
        main(
            [
                "batch",
                str(work / "mini" / "two.yaml"),
                "-o",
                str(work / "results"),
                "--executor",
                "serial",
                "--quiet",
            ]
        )
        (work / "grid-hall.yaml").write_text(
            (work / "small-hall.yaml").read_text().replace("name: small-hall", "name: grid-hall") + GRID_BLOCK
        )
        assert main(["validate", str(work / "grid-hall.yaml")]) == 0
        _netbox_seed(work)
        pid = _library_seed(work)
        (work / "whatif.yaml").write_text(WHATIF)
    scenarios = [
        f
        for f in work.glob("*.yaml")
        if not f.name.endswith((".site.yaml", ".gen.yaml", ".plan.yaml"))
        and f.name != "catalog.yaml"
        and f.name not in ("fleet-1m.gen.yaml",)
        and "1m" not in f.name
        and "100k" not in f.name
        and "1gw" not in f.name
    ]
    return {
        "scenario": [(f, ["validate", "{file}"]) for f in scenarios]
        + [(work / "small-hall.yaml", ["plan", "{file}", "--time-limit", "5", "--quiet"])],
        "site": [
            (f, ["validate", str(work / f.name.replace(".site.yaml", ".yaml"))])
            for f in work.glob("*.site.yaml")
            if (work / f.name.replace(".site.yaml", ".yaml")).exists()
            and "100k" not in f.name
            and "1gw" not in f.name
        ],
        "catalog": [(work / "catalog.yaml", ["validate", "{scenario_with_catalog}"])],
        "generator": [
            (f, ["generate-site", "--spec", "{file}", "-o", "{out}"])
            for f in work.glob("*.gen.yaml")
            if "1m" not in f.name and "100k" not in f.name and "1gw" not in f.name
        ],
        "sweep": [
            (
                work / "mini" / "two.yaml",
                [
                    "batch",
                    "{file}",
                    "-o",
                    "{outdir}",
                    "--executor",
                    "serial",
                    "--quiet",
                    "--time-limit",
                    "5",
                    "--max-points",
                    "4",
                ],
            )
        ],
        "plan": [
            (work / "small-hall.plan.yaml", ["verify", "{file}", str(work / "small-hall.yaml")]),
            (work / "dr-hall-flex.plan.yaml", ["verify", "{file}", str(work / "dr-hall-flex.yaml")]),
            (work / "small-hall.plan.yaml", ["compare", "{file}", str(work / "small-hall.plan.yaml")]),
        ],
        "results": [(work / "results" / "results.csv", ["frontier", "{file}", "-o", "{out}"])],
        "grid": [
            (work / "grid-hall.yaml", ["validate", "{file}"]),
            (work / "grid-hall.yaml", ["plan", "{file}", "--time-limit", "5", "--quiet"]),
        ],
        "netbox-answer": [
            (
                work / "netbox" / f"{k}.json",
                [
                    "import",
                    "netbox",
                    "--url",
                    "{netbox}",
                    "--overlay",
                    str(work / "netbox-overlay.yaml"),
                    "-o",
                    "{out}",
                    "--timeout",
                    "5",
                    "--deadline",
                    "20",
                ],
            )
            for k in ("sites", "locations", "racks", "power-panels", "power-feeds", "devices")
        ],
        "library-row": [
            (work / "library-entry.json", ["library", "--library", "{library}", "list"]),
            (work / "library-entry.json", ["library", "--library", "{library}", "show", pid, "-o", "{out}"]),
        ],
        "whatif": [(work / "whatif.yaml", ["whatif"])],
    }


def fuzz(n: int, seed: int = 1, say=None) -> tuple[Counter, list[str]]:
    """Run ``n`` mutants (module docstring); returns counts by (kind, exit code) and the failures."""
    from planner.cli import main

    rng = random.Random(seed)
    counts: Counter = Counter()
    failures: list[str] = []
    old = signal.signal(signal.SIGALRM, _alarm)
    with tempfile.TemporaryDirectory(prefix="planner-fuzz-") as tmp:
        work = Path(tmp)
        seeds = _prepare(work)
        pages = _NetBoxPages()
        os.environ.setdefault("NETBOX_TOKEN", "fuzz-token")
        kinds = sorted(seeds)
        for i in range(n):
            kind = kinds[i % len(kinds)]
            src, args = rng.choice(seeds[kind])
            text = src.read_text()
            mutant_dir = work / f"m{i}"
            mutant_dir.mkdir()
            for f in work.glob("*.yaml"):
                (mutant_dir / f.name).hardlink_to(f)  # a link out would be refused as an input path
            target = mutant_dir / src.name
            if target.exists():
                target.unlink()
            mutant = mutate(text, rng)
            if src.suffix == ".json" and rng.random() < 0.5:  # JSON back as JSON half the time
                with contextlib.suppress(Exception):
                    import yaml

                    mutant = json.dumps(yaml.safe_load(mutant))
            target.write_text(mutant)
            if kind == "netbox-answer":
                shutil.copytree(work / "netbox", mutant_dir / "netbox")
                shutil.copy(target, mutant_dir / "netbox" / src.name)
                pages.root[:] = [mutant_dir / "netbox"]
            if kind == "library-row":
                shutil.copy(work / "library.sqlite", mutant_dir / "library.sqlite")
                _tamper(mutant_dir / "library.sqlite", mutant)
            if kind == "sweep":
                (mutant_dir / "sw").mkdir()
                shutil.move(str(target), mutant_dir / "sw" / src.name)
                target = mutant_dir / "sw" / src.name
            cat_scenario = mutant_dir / "with-catalog.yaml"
            cat_scenario.write_text((work / "small-hall.yaml").read_text() + "\ncatalog: catalog.yaml\n")
            real = [
                a.format(
                    file=target,
                    out=mutant_dir / "out.html" if kind == "results" else mutant_dir / "out.yaml",
                    outdir=mutant_dir / "out",
                    scenario_with_catalog=cat_scenario,
                    netbox=pages.url,
                    library=f"sqlite:///{mutant_dir}/library.sqlite",
                )
                for a in args
            ]
            if kind == "site":
                real[1] = str(mutant_dir / Path(real[1]).name)
            signal.alarm(TIMEOUT_S)
            t0 = time.perf_counter()
            try:
                with (
                    contextlib.redirect_stdout(io.StringIO()),
                    contextlib.redirect_stderr(io.StringIO()) as err,
                ):
                    code = _whatif(target, work) if kind == "whatif" else main(real)
            except Hang:
                code = "hang"
            except Exception as e:  # noqa: BLE001 - outside main(): the what-if harness
                code = 3
                err = io.StringIO(f"{type(e).__name__}: {e}")
                err = io.StringIO("hang")
            except SystemExit as e:
                code = e.code
                err = io.StringIO("")
            finally:
                signal.alarm(0)
            counts[kind, code] += 1
            if code in (3, "hang"):
                failures.append(
                    f"{kind} {' '.join(real)}: {err.getvalue().strip().splitlines()[-1:]} "
                    f"({time.perf_counter() - t0:.1f} s)"
                )
                keep = ROOT / "benchmarks" / "generated" / "fuzz-failures"
                keep.mkdir(parents=True, exist_ok=True)
                shutil.copy(target, keep / f"{i}-{src.name}")
            if say and (i + 1) % 100 == 0:
                say(f"{i + 1} mutants: {sum(v for (k, c), v in counts.items() if c in (3, 'hang'))} failures")
            shutil.rmtree(mutant_dir, ignore_errors=True)
    signal.signal(signal.SIGALRM, old)
    return counts, failures


def _table(args, by_kind: dict[str, dict], failures: list[str], took: float) -> None:
    """benchmarks/OUT: mutants per input kind and exit code, failures listed."""
    import platform

    codes = ["0", "1", "2", "3", "hang"]
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        "# Fuzz: mutants of every input kind through the CLI",
        "",
        f"Written by `.venv/bin/python benchmarks/fuzz.py -n {args.n} --seed {args.seed} --out {args.out}` "
        f"on {when} in {took:.0f} s; machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}. Exit 0, 1 and 2 are answers; 3 (an internal error) and a hang (no "
        f"answer within {TIMEOUT_S} s) are failures.",
        "",
        "| input kind | " + " | ".join(f"exit {c}" if c != "hang" else "hangs" for c in codes) + " |",
        "|---|" + "---|" * len(codes),
    ]
    for kind, got in by_kind.items():
        lines.append(f"| {kind} | " + " | ".join(f"{got.get(c, 0):,}" for c in codes) + " |")
    total = {c: sum(g.get(c, 0) for g in by_kind.values()) for c in codes}
    lines.append("| **all** | " + " | ".join(f"**{total[c]:,}**" for c in codes) + " |")
    lines += ["", "Failures: " + ("none" if not failures else ""), *[f"- {f}" for f in failures[:50]], ""]
    (ROOT / "benchmarks" / args.out).write_text("\n".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=None, help="also write a results table to benchmarks/OUT (e.g. FUZZ.md)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    counts, failures = fuzz(args.n, args.seed, say=lambda m: print(m, file=sys.stderr))
    by_kind: dict[str, dict] = {}
    for (kind, code), v in sorted(counts.items(), key=str):
        by_kind.setdefault(kind, {})[str(code)] = v
    if args.out:
        _table(args, by_kind, failures, time.perf_counter() - t0)
    print(
        json.dumps(
            {
                "mutants": args.n,
                "seed": args.seed,
                "seconds": round(time.perf_counter() - t0, 1),
                "by_kind_and_exit_code": by_kind,
                "internal_errors": sum(v for (k, c), v in counts.items() if c == 3),
                "hangs": sum(v for (k, c), v in counts.items() if c == "hang"),
                "failures": failures[:50],
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
