"""Batch runs: sweeps expanded and validated up front, the same table from every executor (a
real Dask scheduler and two workers included), failures as rows, resumable, and the frontier."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.batch.frontier import pareto
from planner.batch.sweep import load_sweep, parse_path, run_batch, set_path
from planner.errors import InputError
from planner.plan import load_plan

ROOT = Path(__file__).resolve().parent.parent
TWELVE = Path(__file__).resolve().parent / "data" / "sweeps" / "twelve.yaml"


def test_paths_parse_and_set_every_match() -> None:
    assert parse_path("site.buildings[1].halls[0].rows[*].max_rack_power_kw") == [
        "site",
        "buildings",
        1,
        "halls",
        0,
        "rows",
        "*",
        "max_rack_power_kw",
    ]
    data = {"rows": [{"kw": 1}, {"kw": 2}], "cap": None}
    set_path(data, "rows[*].kw", 9)
    set_path(data, "cap", [1, 2])
    assert data == {"rows": [{"kw": 9}, {"kw": 9}], "cap": [1, 2]}


def test_sweep_expands_grid_times_zip() -> None:
    sweep = load_sweep(TWELVE, ROOT)
    assert len(sweep.points) == 12
    assert sweep.params == ["clusters[0].rack_types", "gpu_power_cap_w", "power_budget_ratio"]
    assert sweep.points[0].values == {
        "clusters[0].rack_types": ["grand-teton-h100"],
        "gpu_power_cap_w": None,
        "power_budget_ratio": None,
    }


def test_every_bad_path_is_reported_before_anything_runs(tmp_path: Path) -> None:
    bad = tmp_path / "sweeps" / "bad.yaml"
    bad.parent.mkdir()
    (tmp_path / "small-hall.yaml").write_text((ROOT / "datasets/small-hall.yaml").read_text())
    (tmp_path / "small-hall.site.yaml").write_text((ROOT / "datasets/small-hall.site.yaml").read_text())
    bad.write_text(
        "base: ../small-hall.yaml\ngrid:\n  clusters[5].gpus: [1]\n  gpu_cap: [1]\n  "
        "site.buildings[0].halls[0].rows[*].nope.x: [1]\nzip:\n  pue: [1.1, 1.2]\n  solver.rel_gap: "
        "[0.1]\ncolour: red\n"
    )
    with pytest.raises(InputError) as err:
        load_sweep(bad)
    assert err.value.lines() == [
        "colour: unknown key 'colour' (allowed: base, description, grid, name, random, scenarios, zip)",
        "zip: lists of different lengths: pue: 2, solver.rel_gap: 1",
        "clusters[5].gpus: not a field of the base scenario: clusters[5] does not exist (2 items)",
        "gpu_cap: names no field of the base scenario",
        "site.buildings[0].halls[0].rows[*].nope.x: not a field of the base scenario: "
        "site.buildings[0].halls[0].rows[0].nope does not exist",
    ]


def _table(out: Path) -> pd.DataFrame:
    return pd.read_csv(out / "results.csv", keep_default_na=False)


def _plans(out: Path) -> dict[str, list]:
    t = _table(out)
    return {
        r.point: [(x.row, x.position, x.rack_type) for x in load_plan(out / r.plan).racks]
        for r in t.itertuples()
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def dask_cluster():
    """A real Dask scheduler and two workers on 127.0.0.1, stopped afterwards."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--dashboard-address",
                ":0",
                "--no-show",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    time.sleep(1.5)
    for _ in range(2):
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "distributed.cli.dask_worker",
                    address,
                    "--nworkers",
                    "1",
                    "--nthreads",
                    "1",
                    "--no-dashboard",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    from distributed import Client

    with Client(address, timeout="30s") as c:
        c.wait_for_workers(2, timeout=60)
    yield address
    for p in reversed(procs):
        p.terminate()
    for p in procs:
        p.wait(timeout=30)


def test_serial_process_and_dask_give_the_same_table(tmp_path: Path, dask_cluster: str) -> None:
    sweep = load_sweep(TWELVE, ROOT)
    outs = {}
    for name, kw in (("serial", {}), ("process", {"workers": 2}), ("dask", {"scheduler": dask_cluster})):
        outs[name] = tmp_path / name
        rows = run_batch(sweep, outs[name], name, **kw)
        assert len(rows) == 12
        assert not any(r.get("error") for r in rows)
    cols = [
        "point",
        "clusters[0].rack_types",
        "gpu_power_cap_w",
        "power_budget_ratio",
        "status",
        "gpus",
        "capex_usd",
        "scenario_hash",
        "plan",
    ]
    tables = {n: _table(o)[cols] for n, o in outs.items()}
    assert tables["serial"].equals(tables["process"])
    assert tables["serial"].equals(tables["dask"])
    assert _plans(outs["serial"]) == _plans(outs["process"]) == _plans(outs["dask"])
    assert (
        pd.read_parquet(outs["dask"] / "results.parquet")["gpus"].tolist()
        == tables["serial"]["gpus"].tolist()
    )


def test_a_bad_point_fails_alone_and_reruns_skip_done_points(tmp_path: Path) -> None:
    sweep = load_sweep(TWELVE, ROOT)
    sweep.points[3].data["gpu_power_cap_w"] = -5.0
    out = tmp_path / "out"
    rows = run_batch(sweep, out, "serial")
    bad = [r for r in rows if r.get("error")]
    assert [r["point"] for r in bad] == [sweep.points[3].id]
    assert "gpu_power_cap_w: input should be greater than 0, got -5.0" in bad[0]["error"]
    seen = []
    run_batch(sweep, out, "serial", progress=lambda d, t, f: seen.append((d, t, f)))
    assert seen == []  # nothing solves again: the done points are skipped, the bad one fails its check again
    assert len(_table(out)) == 12
    sweep.points[3].data["gpu_power_cap_w"] = 600.0
    rows = run_batch(sweep, out, "serial", progress=lambda d, t, f: seen.append((d, t, f)))
    assert seen == [(1, 1, 0)]  # only the mended point runs
    assert len(rows) == 12
    assert not any(isinstance(r.get("error"), str) and r["error"] for r in rows)


def test_pareto_of_a_hand_made_table() -> None:
    """Max GPUs, min capex: (10, $5) and (20, $9) and (30, $20) are on the frontier; (15, $10) is
    beaten by (20, $9); (30, $25) by (30, $20)."""
    pts = [(10, 5), (20, 9), (15, 10), (30, 20), (30, 25)]
    assert pareto(pts, ("max", "min")) == [True, True, False, True, False]


@pytest.mark.slow
def test_cli_batch_frontier_and_compare(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "planner.cli",
            "batch",
            str(TWELVE),
            "--data-root",
            str(ROOT),
            "-o",
            str(out),
            "--executor",
            "serial",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"{out}: 12 points in results.csv and results.parquet (0 failed)")
    assert r.stderr == ""  # --quiet (and no terminal): no progress output
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "planner.cli",
            "batch",
            str(TWELVE),
            "--data-root",
            str(ROOT),
            "-o",
            str(out),
            "--executor",
            "serial",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 0
    assert r.stdout.startswith(f"{out}: 12 points in results.csv and results.parquet (0 failed)")
    html = tmp_path / "frontier.html"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "planner.cli",
            "frontier",
            str(out / "results.csv"),
            "--x",
            "capex_usd",
            "--y",
            "gpus",
            "-o",
            str(html),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    assert "points on the frontier" in r.stdout
    assert "plotly_click" in html.read_text()
    t = _table(out)
    plans = [str(out / p) for p in t["plan"][:2]]
    r = subprocess.run(
        [sys.executable, "-m", "planner.cli", "compare", *plans], capture_output=True, text=True, cwd=ROOT
    )
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0].startswith(
        "note: these plans answer different scenarios: "
    )  # two sweep points: two questions
    assert lines[4].split()[0] == "gpus"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 3)), min_size=0, max_size=40),
    st.sampled_from([("max", "min"), ("min", "min"), ("max", "max")]),
)
def test_the_pareto_sweep_agrees_with_brute_force(points, senses) -> None:
    """Two axes use a sort and a sweep, three the frontier loop: both against the definition
    (no other point at least as good on every axis and better on one), ties included."""
    for dims in (2, 3):
        pts = [p[:dims] for p in points]
        sn = (*senses, "min")[:dims]
        signed = [tuple(v if s == "max" else -v for v, s in zip(p, sn, strict=True)) for p in pts]
        want = [
            not any(
                all(q[k] >= p[k] for k in range(dims)) and any(q[k] > p[k] for k in range(dims))
                for q in signed
            )
            for p in signed
        ]
        assert pareto(pts, sn) == want


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "the results table is empty (no header row)"),
        ("point,status,gpus\np1,optimal,5\np2,optimal,6,7\n", "row 3 has 4 fields, the header has 3"),
        ('point,status,gpus\np1,"optimal,5\np2,x,6\n', "a quoted value is never closed (it starts at row 2)"),
        ("point,status,gpus\np1,optimal,5\np2,optimal,lots\n", "row 3, column gpus: 'lots' is not a number"),
    ],
)
def test_a_bad_results_table_is_bad_input_naming_row_and_column(
    tmp_path: Path, text: str, expected: str
) -> None:
    table = tmp_path / "results.csv"
    table.write_text(text)
    r = subprocess.run(
        [sys.executable, "-m", "planner.cli", "frontier", str(table), "-o", str(tmp_path / "f.html")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 2
    assert f"{table}: {expected}" in r.stderr


def test_only_plan_files_inside_the_results_folder_become_links(tmp_path: Path) -> None:
    """The plan column is copied into links opened on click: a javascript: URL, an absolute path or
    a way out of the folder opens nothing."""
    from planner.batch.frontier import frontier_figure

    table = pd.DataFrame(
        {
            "point": ["p1", "p2", "p3", "p4"],
            "status": ["optimal"] * 4,
            "gpus": [1.0, 2.0, 3.0, 4.0],
            "capex_usd": [1.0, 2.0, 3.0, 4.0],
            "plan": [
                "plans/p1-ab.plan.yaml",
                "javascript:alert(1)",
                "/etc/passwd",
                "plans/../../x.plan.yaml",
            ],
        }
    )
    fig, _ = frontier_figure(table, "capex_usd", "gpus", link_base=Path("out"))
    links = {row[1]: row[0] for trace in fig.data for row in trace.customdata}
    assert links == {"p1": "out/plans/p1-ab.plan.yaml", "p2": "", "p3": "", "p4": ""}


def _batch_on(address: str, out: Path) -> subprocess.CompletedProcess:
    """The twelve-point sweep on a Dask scheduler at ``address``, 3 s to connect."""
    return subprocess.run(
        [sys.executable, "-m", "planner.cli", "batch", str(TWELVE), "-o", str(out), "--executor", "dask"]
        + ["--scheduler", address, "--data-root", str(ROOT), "--connect-timeout", "3"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        (
            "tcp://127.0.0.1:1",
            "--scheduler tcp://127.0.0.1:1: cannot connect within 3 s (Connection refused); start the "
            "scheduler or check the address",
        ),
        (
            "notaurl",
            "--scheduler 'notaurl': expected tcp://HOST:PORT with PORT in 1-65535 (a running Dask scheduler)",
        ),
        (
            "inproc://x",
            "--scheduler 'inproc://x': expected tcp://HOST:PORT with PORT in 1-65535 (a running Dask "
            "scheduler)",
        ),
        (
            "tcp://127.0.0.1:70000",
            "--scheduler 'tcp://127.0.0.1:70000': expected tcp://HOST:PORT with PORT in 1-65535 (a running "
            "Dask scheduler)",
        ),
    ],
)
def test_a_bad_or_unreachable_scheduler_is_bad_input_before_anything_runs(
    tmp_path: Path, address: str, expected: str
) -> None:
    t0 = time.perf_counter()
    r = _batch_on(address, tmp_path / "out")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == f"  - {expected}"
    assert time.perf_counter() - t0 < 15
    assert not (tmp_path / "out").exists()  # refused before the folder was touched


def test_an_http_server_at_the_scheduler_address_exits_2_within_15_s(tmp_path: Path) -> None:
    """Something listens (an HTTP server, which waits for a request) but sends no Dask greeting: the
    handshake probe gives up after --connect-timeout (it used to hang past 120 s in Dask's client)."""
    import http.server
    import threading

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        t0 = time.perf_counter()
        r = _batch_on(f"tcp://127.0.0.1:{server.server_address[1]}", tmp_path / "out")
        took = time.perf_counter() - t0
    finally:
        server.shutdown()
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == (
        f"  - --scheduler tcp://127.0.0.1:{server.server_address[1]}: something listens there but is not a "
        "Dask scheduler (it sent nothing where a scheduler greets within 3 s); check the address"
    )
    assert took < 15
    assert not (tmp_path / "out").exists()


def test_a_sweep_over_the_point_limit_is_refused_and_the_count_is_stated(tmp_path: Path) -> None:
    from planner.errors import InputError as Bad

    with pytest.raises(Bad, match=r"the sweep has 12 points; the limit is 10 \(--max-points to raise it\)"):
        load_sweep(TWELVE, ROOT, max_points=10)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "planner.cli",
            "batch",
            str(TWELVE),
            "-o",
            str(tmp_path / "out"),
            "--executor",
            "serial",
            "--data-root",
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    assert "sweep twelve: 12 points, 12 to solve, 0 already in the table or unusable" in r.stderr
    assert (
        f"next: planner frontier {tmp_path / 'out'}/results.csv --x capex_usd --y gpus -o "
        f"{tmp_path / 'out'}/frontier.html" in r.stderr
    )


def test_file_values_of_a_sweep_outside_its_data_root_are_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    (root / "sweeps").mkdir(parents=True)
    for f in ("small-hall.yaml", "small-hall.site.yaml"):
        (root / f).write_text((ROOT / "datasets" / f).read_text())
    (tmp_path / "outside.site.yaml").write_text((ROOT / "datasets/small-hall.site.yaml").read_text())
    sweep = root / "sweeps" / "s.yaml"
    sweep.write_text(
        "name: s\nbase: ../small-hall.yaml\ngrid:\n  site: [../small-hall.site.yaml, "
        "../../outside.site.yaml, /etc/passwd]\n"
    )
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "planner.cli",
            "batch",
            str(sweep),
            "-o",
            str(tmp_path / "out"),
            "--executor",
            "serial",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-2:] == [
        f"  - grid.site[1]: '../../outside.site.yaml' is outside the sweep's data root {root}",
        f"  - grid.site[2]: '/etc/passwd' is outside the sweep's data root {root}",
    ]
    assert not (tmp_path / "out").exists()


def test_a_table_without_the_results_columns_is_bad_input(tmp_path: Path) -> None:
    table = tmp_path / "results.csv"
    table.write_text("a,b\n1,2\n")
    r = subprocess.run(
        [sys.executable, "-m", "planner.cli", "frontier", str(table), "-o", str(tmp_path / "f.html")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 2
    assert (
        f"{table}: no column point, status: not a results table of planner batch (columns: a, b)" in r.stderr
    )


def test_a_scheduler_without_workers_is_bad_input_not_a_silent_wait(tmp_path: Path) -> None:
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port)]
        + ["--dashboard-address", ":0", "--no-show"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        from distributed import Client

        for _ in range(60):  # until it answers
            try:
                Client(address, timeout="1s").close()
                break
            except OSError:
                time.sleep(0.5)
        r = _batch_on(address, tmp_path / "out")
    finally:
        scheduler.terminate()
        scheduler.wait(timeout=30)
    assert r.returncode == 2
    assert r.stderr.strip().splitlines()[-1] == (
        f"  - --scheduler {address}: the scheduler has no workers (none joined within 3 s); start some "
        f"with `dask worker {address}` where `planner` imports"
    )
