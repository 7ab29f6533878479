"""Solve stage: run a built model with a named solver; normalise what comes back.

Solvers are configuration: :data:`SOLVERS` maps a name to a factory, and
:func:`check_solver` refuses an unknown or unavailable one with the list of
those that work. A solve returns a :class:`SolveResult` of plain values, never
PuLP objects. Status is never read from ``prob.status`` alone: ``sol_status``
says whether a solution exists, integrality is checked on every integer
variable, and the caller verifies the plan independently.

Ties are broken lexicographically, not with epsilon weights: after the primary
objective, it is held at the value found (≥ for max, ≤ for min) and the cable
cost (USD) is minimised, then held and the total cable length (m) minimised.
Each stage starts from the previous stage's answer and has a bounded share of
the time, so a tie-break never loses the primary result.
"""

from __future__ import annotations

import math
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pulp

from planner.build import OBJECTIVES, Model
from planner.errors import InputError

INT_TOL = 1e-6
"""Largest distance from an integer accepted for an integer variable."""
TIE_BREAK_MIN_S = 5.0
TIE_BREAK_SHARE = 1.0
"""Each tie-break stage may run max(TIE_BREAK_MIN_S, TIE_BREAK_SHARE × primary solve time) seconds
(within the overall limit); it starts from the previous stage's plan, so it can only improve it."""


@dataclass(frozen=True)
class Progress:
    """A progress report: stage, elapsed seconds, and the incumbent/bound/gap when known."""

    stage: str
    elapsed_s: float
    incumbent: float | None = None
    bound: float | None = None
    gap: float | None = None

    def __str__(self) -> str:
        parts = [f"[{self.elapsed_s:6.1f} s] {self.stage}"]
        if self.incumbent is not None:
            parts.append(f"incumbent {self.incumbent + 0.0:,.1f}")
        if self.bound is not None and math.isfinite(self.bound):
            parts.append(f"bound {self.bound + 0.0:,.1f}")
        if self.gap is not None and math.isfinite(self.gap):
            parts.append(f"gap {self.gap:.3%}")
        return "  ".join(parts)


ProgressFn = Callable[[Progress], None]


@dataclass
class SolveResult:
    """Normalised outcome of a solve."""

    status: str
    """optimal | feasible | infeasible | time_limit."""
    objective: float | None
    bound: float | None
    gap: float | None
    solve_time_s: float
    counts: dict[tuple[str, str, str], int] = field(default_factory=dict)
    """(class, rack type, cluster) → racks, for every positive count."""
    stages: list[str] = field(default_factory=list)
    """What each lexicographic stage did."""


_BANNER_DONE = False


def _quiet_highs_banner() -> None:
    """HiGHS prints a banner to the C-level stdout on its first instance; swallow it once."""
    global _BANNER_DONE
    if _BANNER_DONE:
        return
    import os
    import sys

    import highspy

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    _BANNER_DONE = True


class _HiGHSWithStart(pulp.HiGHS):
    """PuLP's in-process HiGHS, handing HiGHS a starting solution before it runs."""

    def __init__(self, start: dict | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.start = start or {}

    def callSolver(self, lp) -> None:  # noqa: N802 - PuLP's hook name
        if self.start:
            import numpy as np

            pairs = [(v.index, float(x)) for v, x in self.start.items() if getattr(v, "index", None) is not None]
            lp.solverModel.setSolution(len(pairs), np.array([i for i, _ in pairs], dtype=np.int32), np.array([x for _, x in pairs], dtype=np.float64))
        super().callSolver(lp)


def _highs(settings, time_limit: float, on_event: Callable | None, start: dict | None = None):
    import highspy

    _quiet_highs_banner()

    kwargs = {}
    if on_event is not None:
        kwargs = {
            "callbackTuple": (on_event, None),
            "callbacksToActivate": [
                highspy.cb.HighsCallbackType.kCallbackMipImprovingSolution,
                highspy.cb.HighsCallbackType.kCallbackMipInterrupt,
            ],
        }
    return _HiGHSWithStart(start, msg=False, timeLimit=time_limit, gapRel=settings.rel_gap, threads=settings.threads, **kwargs)


def _cbc(settings, time_limit: float, log_path: str | None, start: dict | None = None):
    for var, value in (start or {}).items():
        var.setInitialValue(value)
    return pulp.PULP_CBC_CMD(
        msg=False, timeLimit=time_limit, gapRel=settings.rel_gap, threads=settings.threads, logPath=log_path, warmStart=bool(start)
    )


SOLVERS = {"highs": pulp.HiGHS, "cbc": pulp.PULP_CBC_CMD}
"""Solver name → PuLP solver class."""


def available_solvers() -> list[str]:
    """Names of the solvers that run on this machine."""
    return [name for name, cls in SOLVERS.items() if cls(msg=False).available()]


def check_solver(name: str) -> None:
    """Raise :class:`InputError` naming the available solvers if ``name`` cannot run."""
    avail = available_solvers()
    if name not in avail:
        raise InputError(f"solver.name: solver '{name}' is not available (available: {', '.join(avail) or 'none'})")


_CBC_BOUND = re.compile(r"(?:Lower|Upper) bound:\s*(-?[\d.eE+-]+)")


def _run(m: Model, name: str, settings, time_limit: float, progress: ProgressFn | None, t0: float, stage: str, start: dict | None = None):
    """One solve of ``m.prob`` from an optional starting solution; returns (status, objective, bound, gap)."""
    sense_max = m.prob.sense == pulp.LpMaximize
    sign = -1.0 if sense_max else 1.0
    log = None
    if name == "highs":
        on_event = None
        if progress is not None:
            import highspy

            improving = highspy.cb.HighsCallbackType.kCallbackMipImprovingSolution
            last = [0.0]

            def on_event(ctype, _msg, out, _din, _user):
                now = time.perf_counter() - t0
                if ctype == improving or now - last[0] >= 1.0:
                    last[0] = now
                    inc = sign * out.objective_function_value if ctype == improving else None
                    bnd = sign * out.mip_dual_bound if math.isfinite(out.mip_dual_bound) else None
                    progress(Progress(stage, now, inc, bnd, out.mip_gap if math.isfinite(out.mip_gap) else None))

        solver = _highs(settings, time_limit, on_event, start)
    else:
        log = tempfile.NamedTemporaryFile(suffix=".log", delete=False).name
        solver = _cbc(settings, time_limit, log, start)
    m.prob.solve(solver)
    sol = m.prob.sol_status
    has_solution = sol in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible)
    objective = pulp.value(m.prob.objective) if has_solution else None
    if objective is None and has_solution:
        objective = 0.0
    bound = gap = None
    if name == "highs":
        info = m.prob.solverModel.getInfo()
        model_status = m.prob.solverModel.getModelStatus()
        import highspy

        if model_status == highspy.HighsModelStatus.kInfeasible:
            return "infeasible", None, None, None
        if math.isfinite(info.mip_dual_bound):
            bound = sign * info.mip_dual_bound
        proven = model_status == highspy.HighsModelStatus.kOptimal
    else:
        text = Path(log).read_text(errors="replace") if log and Path(log).exists() else ""
        Path(log).unlink(missing_ok=True)
        if not has_solution and m.prob.status == pulp.LpStatusInfeasible:
            return "infeasible", None, None, None
        found = _CBC_BOUND.findall(text)
        if found:
            bound = float(found[-1])
        proven = sol == pulp.LpSolutionOptimal and m.prob.status == pulp.LpStatusOptimal and "Stopped on time" not in text
        if proven and bound is None:
            bound = objective
    if not has_solution:
        return "time_limit", None, bound, None
    if bound is not None and objective is not None:
        gap = abs(bound - objective) / max(abs(objective), 1.0)
        if (sense_max and bound < objective - 1e-6) or (not sense_max and bound > objective + 1e-6):
            bound = objective  # a solver bound on the wrong side of a verified incumbent is noise
            gap = 0.0
    status = "optimal" if proven or (gap is not None and gap <= settings.rel_gap + 1e-9) else "feasible"
    return status, objective, bound, gap


def _counts(m: Model) -> dict[tuple[str, str, str], int]:
    out = {}
    for key, var in m.n.items():
        v = var.value()
        if v is None:
            v = 0.0
        r = round(v)
        if abs(v - r) > INT_TOL:
            raise SolverFailure(f"solver returned a fractional count {v} for {key}; the solution is not integral")
        if r > 0:
            out[key] = int(r)
    return out


class SolverFailure(RuntimeError):
    """The solver returned something that is not a usable plan."""


def solve(
    m: Model, progress: ProgressFn | None = None, time_limit_s: float | None = None, tie_breaks: bool = True, start: dict | None = None
) -> SolveResult:
    """Solve stage: primary objective, then the lexicographic tie-breaks (module docstring).

    ``start`` (variable → value) is handed to the solver as a first incumbent; the solver
    ignores it if it is not feasible. Each tie-break stage starts from the previous answer.
    """
    settings = m.scenario.solver
    check_solver(settings.name)
    limit = time_limit_s if time_limit_s is not None else settings.time_limit_s
    t0 = time.perf_counter()
    expr_name, sense = OBJECTIVES[m.scenario.objective]
    if progress:
        progress(Progress(f"solving {m.scenario.objective} with {settings.name}", 0.0))
    status, obj, bound, gap = _run(m, settings.name, settings, limit, progress, t0, m.scenario.objective, start)
    result = SolveResult(status, obj, bound, gap, 0.0)
    if obj is None:
        result.solve_time_s = time.perf_counter() - t0
        return result
    result.counts = _counts(m)
    result.stages.append(f"{m.scenario.objective}: {obj:,.3f} ({status})")
    if tie_breaks:
        _tie_breaks(m, settings, limit, progress, t0, expr_name, sense, obj, result)
    result.solve_time_s = time.perf_counter() - t0
    return result


def _tie_breaks(m: Model, settings, limit, progress, t0, expr_name, sense, obj, result: SolveResult) -> None:
    """Hold the primary at its value, minimise cable cost, hold it, minimise cable length."""
    primary_s = time.perf_counter() - t0
    primary = m.exprs[expr_name]
    if sense == pulp.LpMaximize:
        m.prob += (primary >= obj - 1e-6 * max(1.0, abs(obj)), "hold_primary")
    else:
        m.prob += (primary <= obj + 1e-6 * max(1.0, abs(obj)), "hold_primary")
    for name, unit in (("cable_usd", "USD"), ("cable_m", "m")):
        remaining = limit - (time.perf_counter() - t0)
        if remaining <= 0.5 or not m.exprs[name].keys():
            result.stages.append(f"{name}: skipped (no time left)" if remaining <= 0.5 else f"{name}: nothing to break")
            continue
        previous = {v: v.value() for v in m.prob.variables() if v.value() is not None}
        m.prob.sense = pulp.LpMinimize
        m.prob.setObjective(m.exprs[name])
        stage_limit = min(remaining, max(TIE_BREAK_MIN_S, TIE_BREAK_SHARE * primary_s))
        status, val, _, _ = _run(m, settings.name, settings, stage_limit, progress, t0, f"tie-break: least {name}", previous)
        if val is None:
            result.stages.append(f"{name}: no solution in time, kept the previous plan")
            break
        result.counts = _counts(m)
        result.stages.append(f"min {name}: {val:,.1f} {unit} ({status})")
        m.prob += (m.exprs[name] <= val + 1e-6 * max(1.0, abs(val)), f"hold_{name}")
