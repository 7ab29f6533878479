"""A sweep file read and expanded into its points (:mod:`planner.batch.sweep`)."""

from __future__ import annotations

import copy
import itertools
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planner.batch.paths import path_problems, set_path
from planner.errors import InputError, Problem

MAX_POINTS = 10_000
"""Most points a sweep may have unless raised (``--max-points``)."""
FILE_FIELDS = ("site", "catalog", "existing")
"""Fields whose string values are files (confined to the sweep's data root)."""
"""Most points one sweep may have."""


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
