"""Solve stage: run a built model on a named backend and judge what comes back.

A solver's word is a claim. After every run the objective is recomputed from
the returned values (Σ coefficient × value of the model's own objective
expression) and compared with what the solver reports; the gap is recomputed
from the solver's dual bound and that objective. The result is ``optimal``
only when the recomputed gap is within the requested gap. A bound that is no
tighter than the trivial one (every variable at its best bound: the solver had
not solved its root yet) or that contradicts a checked incumbent is dropped:
a plan reports the solver's proven bound or none; a solver that says "optimal" but
states no bound (CBC often prints none) gives ``optimal`` marked as its claim, with no bound and
no gap (never the objective passed off as a bound). When a run with a starting
solution does not check out (the objective disagrees, or "optimal" with a gap
beyond the request), the model is solved again without the start and the
progress lines say so.

Ties are broken lexicographically, never with epsilon weights: with the
primary objective held at its value, the cable cost (USD) is minimised, then
held, and the cable length (m) minimised. Each stage runs on the backend with
its own objective and held rows; the built model is never changed, so it can
be solved (or written as LP) again. The time limit bounds the whole run:
tie-breaks get at most :data:`TIE_BREAK_SHARE` of what is left, and run only
when the primary answer is proven.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pulp

from planner.clock import MIN_SOLVE_S
from planner.enums import Status
from planner.errors import SolverFailure
from planner.model import Model
from planner.solving.backends import BackendResult, SolveRequest, from_name

INT_TOL = 1e-6
"""Largest distance from an integer accepted for an integer variable."""
OBJ_TOL = 1e-6
GAP_TOL = 1e-6
"""Gaps are compared with this absolute slack on the relative gap: ``rel_gap: 0`` means proven to
the solver's precision (a gap of 1e-8 from floating-point round-off is optimal, 1e-5 is not)."""
"""Relative tolerance between a reported and a recomputed objective."""
TIE_BREAK_SHARE = 0.5
"""Share of the remaining time the tie-break stages may use together."""
TIE_BREAK_MIN_S = 2.0
"""A tie-break stage with less time than this is skipped."""


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
    """Judged outcome of a solve: plain values, no solver objects."""

    status: Status
    objective: float | None
    """Objective recomputed from the returned values."""
    bound: float | None
    """The solver's proven bound, or none (see the module docstring)."""
    gap: float | None
    """|bound − objective| / max(|objective|, 1), or none without a bound."""
    solve_time_s: float
    counts: dict = field(default_factory=dict)
    """Count key (position class, rack type, cluster) → racks, for every positive count."""
    stages: list[str] = field(default_factory=list)
    """What each stage did, in words."""
    values: dict[str, float] = field(default_factory=dict)
    """Variable name → value of the stage whose counts these are (the last tie-break that ran)."""
    claimed: bool = False
    """``optimal`` on the solver's word: it said optimal and stated no bound to check it by."""
    bound_source: str = "solver"
    """Where the bound comes from: the solver's own (``solver``) or a known bound (``demands``)."""


def evaluate(expr: pulp.LpAffineExpression, values: dict[str, float]) -> float:
    """Σ coefficient × value + constant of ``expr`` at ``values`` (missing variables count 0)."""
    return sum(c * values.get(v.name, 0.0) for v, c in expr.items()) + float(expr.constant)


def trivial_bound(expr: pulp.LpAffineExpression, maximise: bool) -> float:
    """The bound that every variable at its own best bound gives (inf when unbounded)."""
    total = float(expr.constant)
    for v, c in expr.items():
        if c == 0:
            continue
        best = v.upBound if (c > 0) == maximise else v.lowBound
        if best is None:
            return math.inf if maximise else -math.inf
        total += c * best
    return total


def gap_of(objective: float, bound: float) -> float:
    """Relative gap |bound − objective| / max(|objective|, 1)."""
    return abs(bound - objective) / max(abs(objective), 1.0)


@dataclass
class Judgement:
    """What a backend result is worth once checked."""

    status: Status
    objective: float | None
    bound: float | None
    gap: float | None
    doubt: str = ""
    """Why the answer does not check out (empty when it does)."""
    claimed: bool = False
    """Optimal on the solver's word: it said so and stated no bound (CBC often prints none)."""


def within_gap(gap: float | None, rel_gap: float) -> bool:
    """True when a gap is known and at most ``rel_gap`` (+ :data:`GAP_TOL`)."""
    return gap is not None and gap <= rel_gap + GAP_TOL


def judge(
    res: BackendResult, objective: pulp.LpAffineExpression, maximise: bool, rel_gap: float
) -> Judgement:
    """Recompute the objective and gap of a backend result and give it a status (module docstring)."""
    if res.values is None:
        if res.infeasible:
            return Judgement(Status.infeasible, None, None, None)
        return Judgement(Status.time_limit if res.time_limited else Status.no_solution, None, None, None)
    obj = evaluate(objective, res.values)
    doubt = ""
    if res.reported_objective is not None and abs(res.reported_objective - obj) > OBJ_TOL * max(
        1.0, abs(obj)
    ):
        doubt = f"the solver reports objective {res.reported_objective:,.6g} but its values give {obj:,.6g}"
    bound = res.bound
    if bound is not None:
        wrong_side = (
            bound < obj - OBJ_TOL * max(1.0, abs(obj))
            if maximise
            else bound > obj + OBJ_TOL * max(1.0, abs(obj))
        )
        trivial = trivial_bound(objective, maximise)
        vacuous = (bound >= trivial - 1e-9 if maximise else bound <= trivial + 1e-9) and gap_of(
            obj, bound
        ) > rel_gap + GAP_TOL
        if wrong_side:
            doubt = doubt or (
                f"the solver's bound {bound:,.6g} is on the wrong side of the objective {obj:,.6g} of "
                "its values"
            )
            bound = None
        elif vacuous:
            bound = None
    gap = gap_of(obj, bound) if bound is not None else None
    proven = not doubt and within_gap(gap, rel_gap)
    if res.claims_optimal and res.bound is None and not doubt:
        return Judgement(
            Status.optimal, obj, None, None, claimed=True
        )  # no bound to check it by: the solver's claim, said so
    if res.claims_optimal and not proven and not doubt:
        doubt = "the solver claims optimality, but the recomputed gap " + (
            "is unknown" if gap is None else f"is {gap:.3%} > {rel_gap:.3%}"
        )
    return Judgement(Status.optimal if proven else Status.feasible, obj, bound, gap, doubt)


def counts_from(m: Model, values: dict[str, float]) -> dict:
    """Integer rack counts from variable values; a fractional count is a solver failure."""
    out = {}
    for key, var in m.n.items():
        v = values.get(var.name, 0.0)
        r = round(v)
        if abs(v - r) > INT_TOL:
            raise SolverFailure(
                f"solver returned a fractional count {v} for {key}; the solution is not integral"
            )
        if r > 0:
            out[key] = int(r)
    return out


class _Run:
    """One solve of a model: backend, clock, progress."""

    def __init__(self, m: Model, progress: ProgressFn | None, limit_s: float, t0: float) -> None:
        self.m = m
        self.settings = m.scenario.solver
        self.backend = from_name(self.settings.name)
        self.progress = progress
        self.t0 = t0
        self.deadline = t0 + limit_s

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def say(self, stage: str, incumbent=None, bound=None, gap=None) -> None:
        if self.progress:
            self.progress(Progress(stage, time.perf_counter() - self.t0, incumbent, bound, gap))

    def run(self, stage: str, objective, maximise: bool, extra=(), start=None, limit_s=None) -> BackendResult:
        limit = self.left() if limit_s is None else limit_s
        if limit < MIN_SOLVE_S:  # not started: a large model might not stop in so little time
            return BackendResult(
                None,
                None,
                None,
                False,
                time_limited=True,
                message=f"{max(limit, 0.0):.2f} s left: not started",
            )
        trivial = trivial_bound(objective, maximise)
        seen = {"inc": None, "last": -1.0}

        def hook(incumbent, bound):
            now = time.perf_counter()
            if incumbent is not None:
                seen["inc"] = incumbent
            elif now - seen["last"] < 1.0:
                return
            seen["last"] = now
            if bound is not None and (bound >= trivial - 1e-9 if maximise else bound <= trivial + 1e-9):
                bound = None  # not yet a proven bound worth showing
            inc = seen["inc"]
            gap = gap_of(inc, bound) if inc is not None and bound is not None else None
            self.say(stage, inc, bound, gap)

        req = SolveRequest(
            prob=self.m.prob,
            objective=objective,
            maximise=maximise,
            time_limit_s=limit,
            rel_gap=self.settings.rel_gap,
            threads=self.settings.threads,
            work_limit=self.settings.work_limit,
            extra=list(extra),
            start=start if self.backend.capabilities.mip_start else None,
            on_progress=hook if self.progress and self.backend.capabilities.callbacks else None,
        )
        return self.backend.solve(req)


def solve(
    m: Model,
    progress: ProgressFn | None = None,
    time_limit_s: float | None = None,
    tie_breaks: bool = True,
    start: dict | None = None,
    t0: float | None = None,
    known_bound: tuple[float, str] | None = None,
) -> SolveResult:
    """Solve stage: primary objective, checked (module docstring), then the tie-breaks.

    ``start`` (variable → value) is offered to the solver as a first incumbent.
    ``known_bound`` (value, what proves it): a bound proven without the solver; a start whose
    objective (recomputed) meets it is optimal as it stands and no search runs for the primary.
    ``time_limit_s`` (default: the scenario's) counts from ``t0`` (default: now), so a
    caller can make it bound the whole run.
    """
    t0 = time.perf_counter() if t0 is None else t0
    limit = time_limit_s if time_limit_s is not None else m.scenario.solver.time_limit_s
    run = _Run(m, progress, limit, t0)
    objective = m.prob.objective if m.prob.objective is not None else pulp.LpAffineExpression()
    maximise = m.prob.sense == pulp.LpMaximize
    name = m.objective_name
    rel_gap = run.settings.rel_gap
    named_start = {v.name: float(x) for v, x in start.items()} if start else None
    notes: list[str] = []
    met = _start_meets(objective, maximise, named_start, known_bound)
    if met is not None:
        assert named_start is not None
        assert known_bound is not None
        res = BackendResult(
            values=dict(named_start), reported_objective=None, bound=known_bound[0], claims_optimal=False
        )
        j = Judgement(Status.optimal, met, known_bound[0], gap_of(met, known_bound[0]))
        notes.append(
            f"the first-fit start meets {known_bound[1]} ({known_bound[0]:,.6g}): optimal without a search"
        )
        run.say(notes[-1])
    else:
        run.say(f"solving {name} with {run.backend.name}" + (" from its start" if named_start else ""))
        res = run.run(name, objective, maximise, start=named_start)
        j = judge(res, objective, maximise, rel_gap)
    if j.doubt and named_start and run.left() > 0.05:
        note = f"{j.doubt}; re-solving without the start"
        notes.append(note)
        run.say(note)
        res = run.run(name, objective, maximise)
        j = judge(res, objective, maximise, rel_gap)
    if j.doubt:
        notes.append(f"{j.doubt}; status {j.status.value}")
        run.say(notes[-1])
    result = SolveResult(j.status, j.objective, j.bound, j.gap, 0.0, stages=notes, claimed=j.claimed)
    if met is not None:
        result.bound_source = "demands"
    if j.objective is None:
        run.say(f"{j.status.value}: {res.message}")
        result.solve_time_s = time.perf_counter() - t0
        return result
    assert res.values is not None
    result.values = res.values
    result.counts = counts_from(m, res.values)
    gap_text = (
        f", gap {j.gap:.3%}"
        if j.gap is not None
        else (", the solver's claim: it stated no bound" if j.claimed else ", gap unknown")
    )
    result.stages.insert(0, f"{name}: {j.objective:,.3f} ({j.status.value}{gap_text})")
    run.say(
        f"{name}: {j.status.value}" + ("" if j.gap is not None else gap_text), j.objective, j.bound, j.gap
    )
    if tie_breaks and j.status == Status.optimal:
        _tie_breaks(run, result, objective, maximise)
    result.solve_time_s = time.perf_counter() - t0
    return result


def _start_meets(
    objective: pulp.LpAffineExpression,
    maximise: bool,
    start: dict[str, float] | None,
    known: tuple[float, str] | None,
) -> float | None:
    """The start's objective (recomputed) when it reaches a known bound, else none."""
    if not start or known is None:
        return None
    value = evaluate(objective, start)
    tol = OBJ_TOL * max(1.0, abs(known[0]))
    return value if (value >= known[0] - tol if maximise else value <= known[0] + tol) else None


def can_relax(m: Model) -> bool:
    """Whether the model's solver can solve chosen integer variables as continuous and take a start."""
    caps = from_name(m.scenario.solver.name).capabilities
    return caps.continuous and caps.mip_start


def relaxed_start(m: Model, names: frozenset[str], limit_s: float, t0: float) -> dict | None:
    """A start for the model: its count variables' values in the model solved with the variables
    ``names`` continuous (a partial relaxation the solver settles sooner), within ``limit_s``; none
    when the backend cannot relax some variables or finds nothing in time. A start only: the
    solve that follows judges and may improve it."""
    run = _Run(m, None, limit_s, t0)
    if not run.backend.capabilities.continuous or not run.backend.capabilities.mip_start:
        return None
    objective = m.prob.objective if m.prob.objective is not None else pulp.LpAffineExpression()
    req = SolveRequest(
        prob=m.prob,
        objective=objective,
        maximise=m.prob.sense == pulp.LpMaximize,
        time_limit_s=max(limit_s, 0.01),
        rel_gap=m.scenario.solver.rel_gap,
        threads=m.scenario.solver.threads,
        continuous=names,
    )
    res = run.backend.solve(req)
    if res.values is None:
        return None
    return {v: round(res.values.get(v.name, 0.0)) for v in m.n.values()}


def _better_primary(result: SolveResult, held: float) -> None:
    """A tie-break stage's values whose primary objective beats the one stated: the result states
    theirs, and its gap to the same bound (the status stays: a gap only narrows)."""
    result.objective = held
    if result.bound is not None:
        result.gap = gap_of(held, result.bound)


def _tie_breaks(run: _Run, result: SolveResult, primary: pulp.LpAffineExpression, maximise: bool) -> None:
    """Hold the primary at its value, minimise cable cost, hold it, minimise cable length."""
    m = run.m
    obj = result.objective
    assert obj is not None
    slack = 1e-6 * max(1.0, abs(obj))
    holds = [("hold_primary", primary, ">=" if maximise else "<=", obj - slack if maximise else obj + slack)]
    repeatable = run.settings.work_limit is not None  # tie-breaks are not skipped for the clock then
    budget = run.left() if repeatable else TIE_BREAK_SHARE * run.left()
    stage_end = time.perf_counter() + budget
    for name, unit in (("cable_usd", "USD"), ("cable_m", "m")):
        expr = m.exprs[name]
        left = stage_end - time.perf_counter()
        if not expr.keys():
            result.stages.append(f"{name}: nothing to break")
            continue
        if left < TIE_BREAK_MIN_S and not repeatable:
            result.stages.append(f"{name}: skipped ({left:.1f} s left of the tie-break share)")
            continue
        previous = {m.n[k].name: float(v) for k, v in result.counts.items()}
        res = run.run(f"tie-break: least {name}", expr, False, holds, start=previous, limit_s=left)
        if res.values is None:
            result.stages.append(f"{name}: no solution in time, kept the previous plan")
            break
        held = evaluate(primary, res.values)
        if (held < obj - 2 * slack) if maximise else (held > obj + 2 * slack):
            result.stages.append(
                f"{name}: the stage's values lose the primary objective ({held:,.6g}); kept the previous plan"
            )
            break
        val = evaluate(expr, res.values)
        result.counts = counts_from(m, res.values)
        result.values = res.values
        if (held > result.objective) if maximise else (held < result.objective):
            _better_primary(result, held)  # the hold is one-sided: a stage may find more
        result.stages.append(f"min {name}: {val:,.1f} {unit}")
        holds.append((f"hold_{name}", expr, "<=", val + 1e-6 * max(1.0, abs(val))))
