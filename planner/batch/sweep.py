"""Batch runs (§14): a sweep of scenario variants solved in parallel into one results table.

A sweep file names a base scenario and what to vary:

    name: small-hall-sweep
    base: ../small-hall.yaml                       # relative to the sweep file
    grid:                                          # cartesian product
      clusters[0].rack_types: [[grand-teton-h100], [dgx-h100-4]]
      gpu_power_cap_w: [null, 600]
    zip:                                           # lists side by side (same length)
      power_budget_ratio: [null, 0.9]
      solver.rel_gap: [0.0, 0.01]
    random:                                        # or {choice: [...]} / {int: [lo, hi]}
      {n: 10, seed: 7, params: {gpu_power_cap_w: {uniform: [400, 700]}}}
    scenarios: [../dr-hall.yaml]                   # whole scenario files, run as they are

Field paths are the YAML paths of the scenario with its site and catalog inline
(``site.buildings[1].halls[0].rows[*].max_rack_power_kw``; ``[*]`` is every
item). Paths in the sweep (base, scenarios, and values of ``site`` or
``catalog``) are relative to the sweep file and must stay inside its data root
(default: the folder above the sweep's folder, so ``datasets/sweeps/`` reaches
``datasets/``). Every path is checked against the base before anything is
solved, all problems reported at once; a point whose values make an invalid
scenario fails alone, as a row with its error.

Each point runs as a job with every parameter passed in (no environment), on an
executor: ``serial``, ``process`` (local processes) or ``dask`` (a Dask
distributed scheduler at an address, or a LocalCluster started for the run).
Results go to ``results.csv`` and ``results.parquet`` with each point's plan in
``plans/``; points whose run hash (scenario and solver settings) is already in the table are skipped.
"""

from __future__ import annotations

import copy
import json
import os
import re
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from planner.batch.executors import CONNECT_TIMEOUT_S, run_jobs
from planner.batch.paths import parse_path, path_problems, set_path  # noqa: F401 - re-exported
from planner.batch.sweep_file import FILE_FIELDS, MAX_POINTS, Point, Sweep, grid_sweep, load_sweep  # noqa: F401 - re-exported
from planner.errors import InputError

COLUMNS = [
    "point",
    "status",
    "gap",
    "gpus",
    "pflops_bf16",
    "it_mw",
    "capex_usd",
    "opex_usd_per_year",
    "tco_usd",
    "usd_per_gpu_hour",
    "stranded_kw",
    "expected_objective",
    "expected_tco_usd",
    "evpi",
    "vss",
    "solve_s",
    "scenario_hash",
    "run_hash",
    "plan",
    "error",
]
"""Result columns after the varied parameters. A point whose scenario lists demand futures is planned
two-stage (:mod:`planner.plan.stochastic`): its expected objective and TCO, EVPI and VSS fill the expected
columns, the other figures are its shown (most probable) future's."""
WRITE_EVERY_S = 1.0
"""The table is rewritten at most this often while a batch runs (and once at its end): a rerun
after a crash re-solves at most this long's worth of points."""


# ------------------------------------------------------------------ one point


def run_point(point_id: str, data_json: str, out_dir: str, time_limit_s: float | None = None) -> dict:
    """Solve one point (every parameter passed in: it runs on any worker). Returns its result row;
    a failure (bad input, solver failure, no plan) is a row with its error, never an exception."""
    import traceback

    from planner.input.loader import scenario_from_data
    from planner.plan import save_plan
    from planner.plan.pipeline import plan_scenario
    from planner.schema.hashing import run_hash, scenario_hash

    row: dict = {"point": point_id}
    t0 = time.perf_counter()
    try:
        scenario = scenario_from_data(json.loads(data_json))
        row["scenario_hash"] = scenario_hash(scenario)
        row["run_hash"] = run_hash(scenario)
        if scenario.futures:
            from planner.plan.stochastic import plan_stochastic

            plan = plan_stochastic(scenario, time_limit_s=time_limit_s)
            st = plan.stochastic
            row.update(
                expected_objective=st.expected_objective,
                expected_tco_usd=st.expected_tco_usd,
                evpi=st.evpi,
                vss=st.vss,
            )
        else:
            plan = plan_scenario(scenario, time_limit_s=time_limit_s)
        k = plan.kpis
        judged = plan.stochastic or plan  # a two-stage point: the two-stage model's own status and gap
        row.update(
            status=judged.status.value,
            gap=judged.gap,
            gpus=k.gpus,
            pflops_bf16=k.pflops_bf16,
            it_mw=round(k.it_kw / 1000, 6),
            capex_usd=k.capex_usd,
            opex_usd_per_year=k.opex_usd_per_year,
            tco_usd=k.tco_usd,
            usd_per_gpu_hour=k.usd_per_gpu_hour,
            stranded_kw=k.stranded_kw,
            solve_s=round(plan.solve_time_s, 4),
        )
        plans = Path(out_dir) / "plans"
        plans.mkdir(parents=True, exist_ok=True)
        name = f"{point_id}-{row['run_hash']}.plan.yaml"
        save_plan(plan, plans / name)
        row["plan"] = f"plans/{name}"
        if not plan.status.has_plan:
            row["error"] = f"no plan: {plan.status.value}"
    except InputError as e:
        row["error"] = e.render()[:1000]
        row["status"] = "bad_input"
    except Exception as e:  # noqa: BLE001 - a failed point is a row, the batch goes on
        row["error"] = f"{type(e).__name__}: {str(e)[:500]}"
        row["status"] = "error"
        row["trace"] = traceback.format_exc()[-2000:]
    row.setdefault("solve_s", round(time.perf_counter() - t0, 4))
    return row


# ------------------------------------------------------------------ the batch


TEXT_COLUMNS = ("point", "status", "scenario_hash", "run_hash", "plan", "error")
"""Result columns that hold text; every other result column is a number (varied values stay as written)."""


def read_table(out_dir: Path):
    """The results table of an output folder (empty when there is none); see :func:`read_results`."""
    path = Path(out_dir) / "results.csv"
    if not path.exists():
        import pandas as pd

        return pd.DataFrame()
    return read_results(path)


def read_results(path: Path):
    """A results table read strictly: text columns as text, result columns as numbers; an empty
    file, a ragged row, an unclosed quote or text where a number belongs is an :class:`InputError`
    naming the row (1 = the header) and the column."""
    import pandas as pd

    shown = str(path)
    try:
        table = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype=str, engine="c")
    except pd.errors.EmptyDataError:
        raise InputError(f"{shown}: the results table is empty (no header row)") from None
    except pd.errors.ParserError as e:
        raise InputError(f"{shown}: {_csv_reason(str(e))}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{shown}: cannot read the results table: {str(e)[:120]}") from None
    missing = [c for c in ("point", "status") if c not in table.columns]
    if missing:
        raise InputError(
            f"{shown}: no column {', '.join(missing)}: not a results table of planner batch "
            f"(columns: {', '.join(str(c)[:30] for c in table.columns[:12])})"
        )
    for c in [c for c in COLUMNS if c in table.columns and c not in TEXT_COLUMNS]:
        raw = table[c]
        num = pd.to_numeric(raw, errors="coerce")
        bad = raw.notna() & num.isna()
        if bad.any():
            i = int(bad.to_numpy().argmax())
            raise InputError(f"{shown}: row {i + 2}, column {c}: {str(raw.iloc[i])[:40]!r} is not a number")
        table[c] = num.astype(float)
    return table


def _csv_reason(message: str) -> str:
    """pandas' CSV parser message in the planner's words (row numbers count the header as row 1)."""
    m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", message)
    if m:
        return f"row {m.group(2)} has {m.group(3)} fields, the header has {m.group(1)}"
    if "EOF inside string" in message:
        line = re.search(r"starting at row (\d+)", message)
        return (
            f"a quoted value is never closed (it starts at row {int(line.group(1)) + 1})"
            if line
            else "a quoted value is never closed"
        )
    return f"not a readable CSV table: {message.splitlines()[0][:120]}"


def write_table(out_dir: Path, rows: list[dict], params: list[str]) -> None:
    """results.csv and results.parquet, atomically, columns: point, varied values, results."""
    import pandas as pd

    from planner.cells import safe_frame
    from planner.fileio import atomic_write, atomic_write_with

    df = pd.DataFrame(rows)
    cols = ["point", *params, *[c for c in COLUMNS if c != "point"]]
    for c in cols:
        if c not in df.columns:
            df[c] = None
    df = df[cols].sort_values("point").reset_index(drop=True)
    atomic_write(Path(out_dir) / "results.csv", safe_frame(df).to_csv(index=False))
    typed = df.astype({c: "string" for c in params})
    atomic_write_with(Path(out_dir) / "results.parquet", lambda tmp: typed.to_parquet(tmp, index=False))


def row_failed(row: dict) -> bool:
    """Whether a result row carries an error (a table read back holds NaN for "no error")."""
    err = row.get("error")
    return isinstance(err, str) and bool(err)


def run_batch(
    sweep: Sweep,
    out_dir: str | Path,
    executor: str = "serial",
    workers: int = 2,
    scheduler: str | None = None,
    time_limit_s: float | None = None,
    progress: Callable[[int, int, int], None] | None = None,
    connect_timeout_s: float = CONNECT_TIMEOUT_S,
    say: Callable[[str], None] | None = None,
) -> list[dict]:
    """Solve every point not yet in the table (by run hash: the scenario with its solver settings)
    on an executor; write the table after each point. Returns all rows. ``progress(done, total,
    failed)`` after each point."""
    from planner.input.loader import run_hash, scenario_from_data

    out = Path(out_dir)
    with claim_folder(out, sweep):
        return _run_batch(
            sweep,
            out,
            executor,
            workers,
            scheduler,
            time_limit_s,
            progress,
            run_hash,
            scenario_from_data,
            connect_timeout_s,
            say,
        )


OWNER = "sweep.json"
"""The file in a results folder that names the sweep it belongs to."""
LOCK = ".batch.lock"
"""The lock file of a results folder while a batch writes into it."""


@contextmanager
def claim_folder(out: Path, sweep: Sweep):
    """Hold a results folder for one batch of one sweep: refuse a folder (or its ``plans/``) that is
    a link or not a folder, a folder another batch is writing into (its lock names the process), and
    a folder that holds another sweep's results; then remove the temporary files a killed run left.
    Rerunning the same sweep into its folder resumes it."""
    import fcntl

    from planner.fileio import atomic_write, remove_stale_temps

    shown = str(out)
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise InputError(
            f"-o {shown}: is {'a symbolic link' if out.is_symlink() else 'not a folder'}; give a folder "
            "for the results"
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = os.open(out / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as e:
        raise InputError(f"-o {shown}: cannot use the folder: {e.strerror or e}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
            raise InputError(
                f"-o {shown}: another batch is writing into this folder (process {holder}); wait for it to "
                "finish "
                "or give another folder"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        owner = out / OWNER
        if owner.is_symlink():
            raise InputError(f"-o {shown}: {OWNER} is a symbolic link; give another folder")
        if owner.exists():
            try:
                mine = json.loads(owner.read_text()).get("sweep")
            except (OSError, ValueError, AttributeError):
                mine = None
            if mine != sweep.name:
                raise InputError(
                    f"-o {shown}: holds the results of sweep {str(mine)[:60]!r}, not {sweep.name!r}; give "
                    "another folder "
                    "(rerunning the same sweep into its folder resumes it)"
                )
        elif (out / "results.csv").exists():
            raise InputError(f"-o {shown}: holds a results table of an unnamed sweep; give another folder")
        else:
            atomic_write(owner, json.dumps({"sweep": sweep.name, "params": sweep.params}) + "\n")
        plans = out / "plans"
        if plans.is_symlink() or (plans.exists() and not plans.is_dir()):
            raise InputError(
                f"-o {shown}: plans/ is {'a symbolic link' if plans.is_symlink() else 'not a folder'}; "
                "give another folder"
            )
        plans.mkdir(exist_ok=True)
        remove_stale_temps(out)
        remove_stale_temps(plans)
        yield
    finally:
        os.close(fd)  # releases the lock


def _jobs(sweep, old, out, time_limit_s, run_hash, scenario_from_data) -> tuple[list[dict], list[tuple]]:
    """The table's rows to keep and the points to solve: a point already solved with the same run
    hash is kept, one that failed is tried again. A point the table holds solved for other content
    (another run hash) means the folder is another sweep's: refused before anything runs."""
    done_hashes = set(old["run_hash"].dropna()) if "run_hash" in old else set()
    rows: list[dict] = [r for r in old.to_dict("records")] if len(old) else []
    failed_before = {r["point"] for r in rows if row_failed(r)}
    solved_as = {
        r["point"]: r["run_hash"]
        for r in rows
        if r["point"] not in failed_before and isinstance(r.get("run_hash"), str) and r["run_hash"]
    }
    other_content: list[tuple[str, str, str]] = []
    jobs = []
    for pt in sweep.points:
        base = {
            "point": pt.id,
            **{k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in pt.values.items()},
        }
        if pt.data is None:
            if pt.id not in {r["point"] for r in rows}:
                rows.append({**base, "status": "bad_input", "error": pt.error})
            continue
        try:
            h = run_hash(scenario_from_data(copy.deepcopy(pt.data)))
        except InputError as e:
            rows = [r for r in rows if r["point"] != pt.id]
            rows.append({**base, "status": "bad_input", "error": e.render()[:1000]})
            continue
        if solved_as.get(pt.id, h) != h:
            other_content.append((pt.id, solved_as[pt.id], h))
        if h in done_hashes and pt.id not in failed_before:
            continue
        rows = [r for r in rows if r["point"] != pt.id]
        jobs.append((pt.id, json.dumps(pt.data, default=str), str(out), time_limit_s))
    if other_content:
        pid, there, here = other_content[0]
        raise InputError(
            f"-o {out}: its table holds {len(other_content)} point(s) solved for other content ({pid}: run "
            f"hash {there} there, {here} in this sweep); a results folder belongs to its sweep's content, "
            "not its name: give another folder (a point that failed may be mended and rerun in place)"
        )
    return rows, jobs


def _run_batch(
    sweep,
    out,
    executor,
    workers,
    scheduler,
    time_limit_s,
    progress,
    run_hash,
    scenario_from_data,
    connect_timeout_s,
    say,
) -> list[dict]:
    rows, jobs = _jobs(sweep, read_table(out), out, time_limit_s, run_hash, scenario_from_data)
    values = {pt.id: pt.values for pt in sweep.points}
    total = len(jobs)
    state = {"done": 0, "failed": 0, "written": time.perf_counter()}

    def on_done(row: dict) -> None:
        row.pop("trace", None)
        row.update(
            {
                k: json.dumps(v) if isinstance(v, (list, dict)) else v
                for k, v in values.get(row["point"], {}).items()
            }
        )
        rows.append(row)
        state["done"] += 1
        state["failed"] += row_failed(row)
        if time.perf_counter() - state["written"] >= WRITE_EVERY_S:
            write_table(out, rows, sweep.params)
            state["written"] = time.perf_counter()
        if progress:
            progress(state["done"], total, state["failed"])

    try:
        if say:
            say(
                f"sweep {sweep.name}: {len(sweep.points):,} points, {total:,} to solve, "
                f"{len(sweep.points) - total:,} already in the table "
                "or unusable"
            )
        run_jobs(run_point, jobs, on_done, executor, workers, scheduler, connect_timeout_s)
    finally:  # interrupted or not, every finished point is in the table
        write_table(out, rows, sweep.params)
    return rows
