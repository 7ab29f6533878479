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
    random: {n: 10, seed: 7, params: {gpu_power_cap_w: {uniform: [400, 700]}}}   # or {choice: [...]} / {int:
    [lo, hi]}
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
import itertools
import json
import os
import random
import re
import time
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planner.batch.executors import CONNECT_TIMEOUT_S, run_jobs
from planner.errors import InputError, Problem

MAX_POINTS = 10_000
"""Most points a sweep may have unless raised (``--max-points``)."""
FILE_FIELDS = ("site", "catalog", "existing")
"""Fields whose string values are files (confined to the sweep's data root)."""
"""Most points one sweep may have."""

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


# ------------------------------------------------------------------ paths

_TOKEN = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+|\*)\]|\.")


def parse_path(path: str) -> list[str | int]:
    """``a.b[2].c[*]`` → ["a", "b", 2, "c", "*"]; raises ValueError on a malformed path."""
    out: list[str | int] = []
    pos = 0
    expect_name = True
    while pos < len(path):
        m = _TOKEN.match(path, pos)
        if m is None:
            raise ValueError(f"cannot read {path[pos : pos + 20]!r}")
        name, idx = m.group(1), m.group(2)
        if name is not None:
            if not expect_name:
                raise ValueError(f"missing '.' before {name!r}")
            out.append(name)
            expect_name = False
        elif idx is not None:
            out.append("*" if idx == "*" else int(idx))
        else:
            expect_name = True
        pos = m.end()
    if not out or not isinstance(out[0], str):
        raise ValueError("a path starts with a key")
    return out


def _targets(
    data: Any, parts: list[str | int], here: str = "", create: bool = False
) -> list[tuple[Any, str | int, str]]:
    """(container, key, shown path) of every place a path names; raises KeyError naming the first miss.
    With ``create``, a mapping left out of the data (a schema field at its empty default, such as
    ``lead_phases``) is made on the way when the next part is a key."""
    if not parts:
        return []
    head, rest = parts[0], parts[1:]
    out = []
    for key, value in _items(data, head, rest, here, create):
        shown = f"{here}[{key}]" if isinstance(key, int) else (f"{here}.{key}" if here else str(key))
        if rest:
            out += _targets(data[key] if create and isinstance(data, dict) else value, rest, shown, create)
        else:
            out.append((data, key, shown))
    return out


def _items(data: Any, head: str | int, rest: list, here: str, create: bool) -> list[tuple[Any, Any]]:
    """(key, value) of what one part of a path names in ``data`` (``*``: every item of a list)."""
    if head == "*":
        if not isinstance(data, list):
            raise KeyError(f"{here or 'the scenario'} is not a list")
        return list(enumerate(data))
    if isinstance(head, int):
        if not isinstance(data, list) or head >= len(data):
            n = len(data) if isinstance(data, list) else 0
            raise KeyError(f"{here}[{head}] does not exist ({n} items)")
        return [(head, data[head])]
    if not isinstance(data, dict):
        raise KeyError(f"{here or 'the scenario'} is not a mapping")
    if head not in data and rest:
        if not (create and isinstance(rest[0], str)):
            raise KeyError(f"{(here + '.' if here else '') + head} does not exist")
        data[head] = {}
    return [(head, data.get(head))]


def _model_knows(parts: list[str | int]) -> bool:
    """Whether a path names a field of the scenario schema (a field left at its default is absent
    from the base data but may still be varied)."""
    import types
    import typing

    from pydantic import BaseModel

    from planner.schema import Scenario

    def inner(tp: Any) -> list[Any]:
        """The types a (possibly Optional/Annotated/list/dict) annotation may hold."""
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            return inner(typing.get_args(tp)[0])
        if origin in (typing.Union, types.UnionType):
            return [t for a in typing.get_args(tp) for t in inner(a)]
        return [tp]

    kinds: list[Any] = [Scenario]
    for part in parts:
        nxt: list[Any] = []
        for tp in kinds:
            origin = typing.get_origin(tp)
            if (
                isinstance(part, str)
                and isinstance(tp, type)
                and issubclass(tp, BaseModel)
                and part in tp.model_fields
            ):
                nxt += inner(tp.model_fields[part].annotation)
            elif not isinstance(part, str) and origin in (list, tuple):
                nxt += [t for a in typing.get_args(tp) if a is not Ellipsis for t in inner(a)]
            elif isinstance(part, str) and origin is dict:
                nxt += inner(typing.get_args(tp)[1])
        if not nxt:
            return False
        kinds = nxt
    return True


def path_problems(base: dict, paths: Iterable[str]) -> list[Problem]:
    """Every path that names no field of the base scenario: one that does not parse or reach, or
    whose last key is neither in the base nor a schema field left at its default."""
    problems = []
    for fp in paths:
        try:
            parts = parse_path(fp)
            places = _targets(copy.deepcopy(base), parts, create=_model_knows(parts))
            if not places or (
                any(key not in box for box, key, _ in places if isinstance(box, dict))
                and not _model_knows(parts)
            ):
                problems.append(Problem(fp, "names no field of the base scenario"))
        except (ValueError, KeyError) as e:
            problems.append(Problem(fp, f"not a field of the base scenario: {e.args[0]}"))
    return problems


def set_path(data: Any, path: str, value: Any) -> None:
    """Set every place a path names to a copy of ``value``."""
    parts = parse_path(path)
    for container, key, _ in _targets(data, parts, create=_model_knows(parts)):
        container[key] = copy.deepcopy(value)


# ------------------------------------------------------------------ the sweep


@dataclass
class Point:
    """One variant: its id, the values it sets, and the scenario data (or the error that made it unusable)."""

    id: str
    values: dict[str, Any]
    data: dict | None = None
    source: str = ""
    error: str = ""


@dataclass
class Sweep:
    name: str
    params: list[str]
    points: list[Point] = field(default_factory=list)


def load_sweep(path: str | Path, data_root: str | Path | None = None, max_points: int = MAX_POINTS) -> Sweep:
    """Read a sweep file and expand it into points (module docstring); every path problem is
    reported at once as an InputError before anything runs."""
    r = _SweepFile(path, data_root)
    base = r.base()
    blocks, params = r.blocks(base)
    grid, zipped, rnd = blocks
    if base is not None:
        r.problems += path_problems(base, params)
    r.check_files(grid, zipped, rnd.get("params", {}) if isinstance(rnd, dict) else {})
    scenario_refs = [r.rel(x, f"scenarios[{i}]") for i, x in enumerate(r.spec.get("scenarios") or [])]
    if r.problems:
        raise InputError(r.problems, str(path))
    combos = _combos(grid, zipped, rnd) if base is not None else []
    if len(combos) + len(scenario_refs) > max_points:
        raise InputError(
            f"the sweep has {len(combos) + len(scenario_refs):,} points; the limit is {max_points:,} "
            "(--max-points to raise it)",
            str(path),
        )
    sweep = Sweep(str(r.spec.get("name", Path(path).stem)), params)
    width = max(4, len(str(len(combos) + len(scenario_refs))))
    sweep.points += [r.point(f"p{i + 1:0{width}d}", values, base) for i, values in enumerate(combos)]
    sweep.points += [r.scenario_point(f"s{j + 1:0{width}d}", j, ref) for j, ref in enumerate(scenario_refs)]
    return sweep


class _SweepFile:
    """A sweep file being read: its spec, its data root, and every problem found so far."""

    ALLOWED = ("name", "description", "base", "grid", "zip", "random", "scenarios")

    def __init__(self, path: str | Path, data_root: str | Path | None):
        from planner.input.loader import FolderRoot, read_yaml_file

        p = Path(path)
        spec = read_yaml_file(p)
        if not isinstance(spec, dict):
            raise InputError("a sweep is a mapping (name, base, grid, zip, random, scenarios)", str(path))
        self.spec = spec
        allowed = ", ".join(sorted(self.ALLOWED))
        self.problems = [
            Problem(k, f"unknown key {k!r} (allowed: {allowed})") for k in spec if k not in self.ALLOWED
        ]
        self.root = FolderRoot(
            data_root if data_root is not None else p.resolve().parent.parent, "the sweep's data root"
        )
        self.folder = p.resolve().parent

    def rel(self, ref: Any, key: str) -> str | None:
        """A path of the sweep, relative to its folder, as seen from the data root."""
        if not isinstance(ref, str):
            self.problems.append(Problem(key, f"expected a file path, got {str(ref)[:40]!r}"))
            return None
        if "\x00" in ref or not ref.strip():
            self.problems.append(Problem(key, f"{ref[:40]!r} is not a file path"))
            return None
        full = (self.folder / ref).resolve()
        try:
            return str(full.relative_to(self.root.folder))
        except ValueError:
            self.problems.append(
                Problem(key, f"{ref[:60]!r} is outside the sweep's data root {self.root.folder}")
            )
            return None

    def _scenario(self, ref: str, what: str, folder_name: str):
        from planner.input.loader import FolderRoot, scenario_from_data

        text_data, _ = self.root.read(ref, what)
        return scenario_from_data(text_data, FolderRoot((self.root.folder / ref).parent, folder_name), ref)

    def base(self) -> dict | None:
        """The base scenario's data (None when there is none or it does not load)."""
        from planner.input.variants import scenario_data

        if "base" not in self.spec:
            return None
        ref = self.rel(self.spec["base"], "base")
        if ref is None:
            return None
        try:
            return scenario_data(self._scenario(ref, "base", "the base scenario's folder"))
        except InputError as e:
            self.problems += [Problem("base", str(x)) for x in e.problems]
            return None

    def blocks(self, base: dict | None) -> tuple[tuple, list[str]]:
        """(grid, zip, random) as written, checked, and the paths they vary."""
        spec = self.spec
        grid, zipped, rnd = spec.get("grid") or {}, spec.get("zip") or {}, spec.get("random") or {}
        for key, block in (("grid", grid), ("zip", zipped), ("random", rnd)):
            if not isinstance(block, dict):
                self.problems.append(Problem(key, "expected a mapping"))
        if (grid or zipped or rnd) and base is None and "base" not in spec:
            self.problems.append(Problem("base", "required when the sweep varies fields"))
        params: list[str] = []
        for key, block in (("grid", grid), ("zip", zipped)):
            for fp, values in block.items() if isinstance(block, dict) else ():
                params.append(fp)
                if not isinstance(values, list) or not values:
                    self.problems.append(Problem(f"{key}.{fp}", "expected a non-empty list of values"))
        if isinstance(zipped, dict) and len({len(v) for v in zipped.values() if isinstance(v, list)}) > 1:
            lengths = ", ".join(f"{k}: {len(v)}" for k, v in zipped.items())
            self.problems.append(Problem("zip", f"lists of different lengths: {lengths}"))
        rnd_params = rnd.get("params", {}) if isinstance(rnd, dict) else {}
        for fp, dist in rnd_params.items():
            params.append(fp)
            if not (
                isinstance(dist, dict) and len(dist) == 1 and next(iter(dist)) in ("uniform", "int", "choice")
            ):
                what = "expected {uniform: [lo, hi]}, {int: [lo, hi]} or {choice: [...]}"
                self.problems.append(Problem(f"random.params.{fp}", what))
        return (grid, zipped, rnd), params

    def check_files(self, grid, zipped, rnd_params) -> None:
        """Every file a point would read, checked before anything runs."""
        for key, block in (("grid", grid), ("zip", zipped)):
            for fp in FILE_FIELDS:
                values = block.get(fp) if isinstance(block, dict) else None
                for i, v in enumerate(values if isinstance(values, list) else []):
                    if isinstance(v, str):
                        self.rel(v, f"{key}.{fp}[{i}]")
        for fp in FILE_FIELDS:
            dist = rnd_params.get(fp) if isinstance(rnd_params, dict) else None
            choices = dist.get("choice") if isinstance(dist, dict) else None
            for i, v in enumerate(choices if isinstance(choices, list) else []):
                if isinstance(v, str):
                    self.rel(v, f"random.params.{fp}.choice[{i}]")

    def point(self, pid: str, values: dict[str, Any], base: dict) -> Point:
        """One combination applied to a copy of the base (a site or catalog named by file is read)."""
        point = Point(pid, values)
        data = copy.deepcopy(base)
        try:
            for fp, v in values.items():
                if fp in ("site", "catalog") and isinstance(v, str):
                    v, _ = self.root.read(self.rel(v, fp) or v, fp)
                set_path(data, fp, v)
            point.data = data
        except (InputError, KeyError, ValueError) as e:
            point.error = str(e)[:500]
        return point

    def scenario_point(self, pid: str, j: int, ref: str) -> Point:
        """A point that is a whole scenario file of its own."""
        from planner.input.variants import scenario_data

        point = Point(pid, {"scenario": ref})
        try:
            point.data = scenario_data(self._scenario(ref, f"scenarios[{j}]", "the scenario's folder"))
        except InputError as e:
            point.error = e.render()[:500]
        return point


def _combos(grid: dict, zipped: dict, rnd: dict) -> list[dict[str, Any]]:
    """The values of every point: the grid's product × the zip's rows × the random draws (seeded)."""
    g_keys = list(grid)
    g_lists = [grid[k] for k in g_keys]
    z_keys = list(zipped)
    z_rows = list(zip(*(zipped[k] for k in z_keys), strict=True)) if z_keys else [()]
    n_random = int(rnd.get("n", 0)) if isinstance(rnd, dict) else 0
    rnd_params = rnd.get("params", {}) if isinstance(rnd, dict) else {}
    rng = random.Random(rnd.get("seed", 0) if isinstance(rnd, dict) else 0)
    draws: list[dict[str, Any]] = [{} for _ in range(max(1, n_random))] if n_random else [{}]
    for d in draws[: n_random or 1]:
        for fp, dist in rnd_params.items():
            kind, arg = next(iter(dist.items()))
            d[fp] = (
                rng.uniform(*arg)
                if kind == "uniform"
                else rng.randint(*arg)
                if kind == "int"
                else rng.choice(arg)
            )
    if not (g_keys or z_keys or n_random):
        return []
    combos = []
    for g in itertools.product(*g_lists) if g_keys else [()]:
        for zr in z_rows:
            for d in draws:
                combos.append(
                    {**dict(zip(g_keys, g, strict=True)), **dict(zip(z_keys, zr, strict=True)), **d}
                )
    return combos


def grid_sweep(name: str, base: dict, grid: dict[str, list[Any]]) -> Sweep:
    """A cartesian sweep over an in-memory base scenario (the dashboard's Sweep page); raises an
    InputError naming every path the base does not have."""
    problems = path_problems(base, list(grid))
    if problems:
        raise InputError(problems, name)
    sweep = Sweep(name, list(grid))
    combos = list(itertools.product(*grid.values()))
    width = max(4, len(str(len(combos))))
    for i, combo in enumerate(combos):
        values = dict(zip(grid, combo, strict=True))
        data = copy.deepcopy(base)
        for fp, v in values.items():
            set_path(data, fp, v)
        sweep.points.append(Point(f"p{i + 1:0{width}d}", values, data))
    return sweep


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

    from planner.fileio import atomic_write, atomic_write_with

    df = pd.DataFrame(rows)
    cols = ["point", *params, *[c for c in COLUMNS if c != "point"]]
    for c in cols:
        if c not in df.columns:
            df[c] = None
    df = df[cols].sort_values("point").reset_index(drop=True)
    atomic_write(Path(out_dir) / "results.csv", df.to_csv(index=False))
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
    old = read_table(out)
    done_hashes = set(old["run_hash"].dropna()) if "run_hash" in old else set()
    rows: list[dict] = [r for r in old.to_dict("records")] if len(old) else []
    failed_before = {r["point"] for r in rows if row_failed(r)}
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
        if h in done_hashes and pt.id not in failed_before:
            continue
        rows = [r for r in rows if r["point"] != pt.id]
        jobs.append((pt.id, json.dumps(pt.data, default=str), str(out), time_limit_s))
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
