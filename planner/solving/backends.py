"""MILP solver backends: one class per solver, in a registry.

A backend takes a :class:`SolveRequest` (a built PuLP problem it must not
change, the objective of this stage, extra rows such as a held objective, a
time limit, a gap, an optional start) and returns a :class:`BackendResult` of
plain values: the variable values by name, the objective the solver reports,
the dual bound it proved, and what it claims (optimal, infeasible, stopped at
its limit). Nothing here decides what a result means: :mod:`planner.solving.core`
recomputes the objective from the values and judges the claim.

``from_name`` refuses an unknown or unavailable solver with the list of those
that run here; each backend states its capabilities (MIP start, progress
callbacks, threads) so callers never branch on a solver's name.
"""

from __future__ import annotations

import functools
import math
import re
import tempfile
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import pulp

from planner.errors import InputError
from planner.stop import check as check_stopped
from planner.stop import current as stop_event

ProgressHook = Callable[[float | None, float | None], None]
"""Called by a backend during a solve with (incumbent, bound) in the problem's own sense."""


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do."""

    mip_start: bool
    """Accepts a starting solution."""
    callbacks: bool
    """Reports incumbent and bound while it runs."""
    threads: bool
    """Honours a thread count."""
    continuous: bool = False
    """Solves chosen integer variables as continuous (``SolveRequest.continuous``)."""


@dataclass
class SolveRequest:
    """One solver run. ``prob`` supplies variables and constraints and is never modified."""

    prob: pulp.LpProblem
    objective: pulp.LpAffineExpression
    maximise: bool
    time_limit_s: float
    rel_gap: float
    threads: int = 1
    work_limit: int | None = None
    """Branch-and-bound nodes the solve may explore (none: no limit)."""
    extra: list[tuple[str, pulp.LpAffineExpression, str, float]] = field(default_factory=list)
    """Further rows (name, expression, "<=" or ">=", right-hand side), e.g. a held objective."""
    start: dict[str, float] | None = None
    """Variable name → starting value (backends without MIP start ignore it)."""
    on_progress: ProgressHook | None = None
    relax_integrality: bool = False
    """Solve the LP relaxation (every integer variable continuous) and report row duals."""
    continuous: frozenset[str] = frozenset()
    """Integer variables solved as continuous (by name): a partial relaxation, e.g. for a start."""


@dataclass
class BackendResult:
    """What a solver said, unjudged."""

    values: dict[str, float] | None
    """Variable name → value; none when the solver returned no solution."""
    reported_objective: float | None
    """Objective value the solver reports for its solution (problem's own sense)."""
    bound: float | None
    """Dual bound the solver reports (problem's own sense); none if it has none."""
    claims_optimal: bool
    """The solver says it proved optimality within its gap."""
    infeasible: bool = False
    """The solver proved that no solution exists."""
    time_limited: bool = False
    """The solver stopped at its time limit."""
    message: str = ""
    """The solver's own status text."""
    duals: dict[str, float] | None = None
    """Row name → dual value (LP relaxations only): d objective / d right-hand side."""


class Backend(ABC):
    """A MILP solver."""

    name: ClassVar[str]
    capabilities: ClassVar[Capabilities]

    @classmethod
    @abstractmethod
    def _probe(cls) -> bool:
        """Whether the solver can run on this machine (uncached)."""

    @classmethod
    def is_available(cls) -> bool:
        """Whether the solver can run here (probed once per process)."""
        return _probe_once(cls)

    @abstractmethod
    def solve(self, req: SolveRequest) -> BackendResult:
        """Run the solver on ``req``."""


@functools.cache
def _probe_once(cls: type[Backend]) -> bool:
    try:
        return cls._probe()
    except (ImportError, OSError, pulp.PulpSolverError):
        return False


REGISTRY: dict[str, type[Backend]] = {}
"""Solver name → backend class."""


def register(cls: type[Backend]) -> type[Backend]:
    """Class decorator: add a backend to :data:`REGISTRY`."""
    REGISTRY[cls.name] = cls
    return cls


def available() -> list[str]:
    """Names of the registered solvers that run on this machine."""
    return [name for name, cls in REGISTRY.items() if cls.is_available()]


def from_name(name: str) -> Backend:
    """The backend called ``name``; an :class:`InputError` lists the installed ones otherwise."""
    cls = REGISTRY.get(name)
    if cls is None or not cls.is_available():
        what = "unknown" if cls is None else "not available on this machine"
        raise InputError(
            f"solver.name: solver '{name}' is {what} (available: {', '.join(available()) or 'none'})"
        )
    return cls()


# --------------------------------------------------------------------- HiGHS


@dataclass
class _Compiled:
    """A PuLP problem as arrays: columns in a fixed order, rows in CSR form."""

    names: list[str]
    col: dict[str, int]
    row_names: list[str]
    lower: list[float]
    upper: list[float]
    integer: list[int]
    row_lower: list[float]
    row_upper: list[float]
    starts: list[int]
    index: list[int]
    value: list[float]


_COMPILED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_COMPILED_LOCK = threading.Lock()


def _compile(prob: pulp.LpProblem) -> _Compiled:
    """Columns and rows of ``prob`` (cached per problem object: stages of one solve share it)."""
    with _COMPILED_LOCK:
        hit = _COMPILED.get(prob)
    if hit is not None:
        return hit
    inf = math.inf
    col: dict[str, int] = {}
    names: list[str] = []
    lower: list[float] = []
    upper: list[float] = []
    integer: list[int] = []

    def col_of(var: pulp.LpVariable) -> int:
        j = col.get(var.name)
        if j is None:
            j = col[var.name] = len(names)
            names.append(var.name)
            lower.append(-inf if var.lowBound is None else float(var.lowBound))
            upper.append(inf if var.upBound is None else float(var.upBound))
            integer.append(1 if var.cat == pulp.LpInteger else 0)
        return j

    for var in (prob.objective or {}).keys():
        col_of(var)
    row_lower: list[float] = []
    row_upper: list[float] = []
    starts = [0]
    index: list[int] = []
    value: list[float] = []
    row_names: list[str] = []
    for c in prob.constraints():  # the rows in the order added (PuLP 4.0's list of named rows)
        _add_row(c, c.sense, -c.constant, col_of, row_lower, row_upper, index, value)
        starts.append(len(index))
        row_names.append(c.name)
    out = _Compiled(names, col, row_names, lower, upper, integer, row_lower, row_upper, starts, index, value)
    with _COMPILED_LOCK:
        _COMPILED[prob] = out
    return out


def _add_row(expr, sense: int, rhs: float, col_of, row_lower, row_upper, index, value) -> None:
    for var, coef in expr.items():
        if coef:
            index.append(col_of(var))
            value.append(float(coef))
    row_lower.append(rhs if sense in (pulp.LpConstraintGE, pulp.LpConstraintEQ) else -math.inf)
    row_upper.append(rhs if sense in (pulp.LpConstraintLE, pulp.LpConstraintEQ) else math.inf)


@register
class HighsBackend(Backend):
    """HiGHS in-process through highspy; the model is passed in one piece (CSR arrays).

    Its console output is switched off through its own options (``output_flag``,
    ``log_to_console``), per instance, so concurrent solves in threads do not interfere.
    """

    name = "highs"
    capabilities = Capabilities(mip_start=True, callbacks=True, threads=True, continuous=True)

    @classmethod
    def _probe(cls) -> bool:
        import highspy  # noqa: F401

        return True

    def solve(self, req: SolveRequest) -> BackendResult:
        import highspy

        base = _compile(req.prob)
        arrays = _Arrays(base)
        cost_pairs = [(arrays.col_of(v), float(c)) for v, c in req.objective.items() if c]
        for _, expr, sense, rhs in req.extra:
            s = pulp.LpConstraintLE if sense == "<=" else pulp.LpConstraintGE
            _add_row(
                expr,
                s,
                rhs - expr.constant,
                arrays.col_of,
                arrays.row_lower,
                arrays.row_upper,
                arrays.index,
                arrays.value,
            )
            arrays.starts.append(len(arrays.index))
        if not arrays.names:  # nothing to decide: the empty solution, if every row holds with nothing in it
            ok = all(
                lo <= 1e-9 and up >= -1e-9 for lo, up in zip(arrays.row_lower, arrays.row_upper, strict=True)
            )
            const = float(req.objective.constant) if ok else None
            return BackendResult(
                {} if ok else None, const, const, ok, infeasible=not ok, message="empty model"
            )
        integer = [0] * len(arrays.names) if req.relax_integrality else arrays.integer
        if req.continuous:
            integer = [
                0 if name in req.continuous else i for name, i in zip(arrays.names, integer, strict=True)
            ]
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("log_to_console", False)
        h.setOptionValue("time_limit", max(float(req.time_limit_s), 0.01))
        h.setOptionValue("mip_rel_gap", float(req.rel_gap))
        h.setOptionValue("threads", int(req.threads))
        if req.work_limit is not None and not req.relax_integrality:
            h.setOptionValue("mip_max_nodes", int(req.work_limit))
        h.passModel(_highs_lp(arrays, cost_pairs, integer, req))
        raised = _start_and_hook(h, req, arrays.col)
        h.run()
        if raised:
            raise raised[0]
        check_stopped("solving")
        return _highs_result(h, req, arrays.names, base.row_names, any(integer))


class _Arrays:
    """The compiled problem's columns and rows, copied so a solve may add columns and rows."""

    def __init__(self, base):
        self.names = list(base.names)
        self.col = dict(base.col)
        self.lower, self.upper, self.integer = list(base.lower), list(base.upper), list(base.integer)
        self.row_lower, self.row_upper = list(base.row_lower), list(base.row_upper)
        self.starts, self.index, self.value = list(base.starts), list(base.index), list(base.value)

    def col_of(self, var: pulp.LpVariable) -> int:
        """The column of a variable (the objective or extra rows may add columns)."""
        j = self.col.get(var.name)
        if j is None:
            j = self.col[var.name] = len(self.names)
            self.names.append(var.name)
            self.lower.append(-math.inf if var.lowBound is None else float(var.lowBound))
            self.upper.append(math.inf if var.upBound is None else float(var.upBound))
            self.integer.append(1 if var.cat == pulp.LpInteger else 0)
        return j


def _highs_lp(arrays: _Arrays, cost_pairs, integer: list[int], req: SolveRequest):
    """The HiGHS model: costs, bounds, the row-wise matrix, the sense and integrality."""
    import highspy
    import numpy as np

    n = len(arrays.names)
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = len(arrays.row_lower)
    cost = np.zeros(n)
    for j, c in cost_pairs:
        cost[j] += c
    lp.col_cost_ = cost
    lp.offset_ = float(req.objective.constant)
    lp.col_lower_ = np.array(arrays.lower, dtype=np.float64)
    lp.col_upper_ = np.array(arrays.upper, dtype=np.float64)
    lp.row_lower_ = np.array(arrays.row_lower, dtype=np.float64)
    lp.row_upper_ = np.array(arrays.row_upper, dtype=np.float64)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.num_col_ = n
    lp.a_matrix_.num_row_ = len(arrays.row_lower)
    lp.a_matrix_.start_ = np.array(arrays.starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(arrays.index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(arrays.value, dtype=np.float64)
    lp.sense_ = highspy.ObjSense.kMaximize if req.maximise else highspy.ObjSense.kMinimize
    if any(integer):
        lp.integrality_ = [
            highspy.HighsVarType.kInteger if i else highspy.HighsVarType.kContinuous for i in integer
        ]
    return lp


def _give_start(h, req: SolveRequest, col: dict[str, int]) -> None:
    """Hand HiGHS the start: the values of the variables it knows."""
    import numpy as np

    if req.start:
        pairs = [(col[k], float(v)) for k, v in req.start.items() if k in col]
        if pairs:
            idx = np.array([i for i, _ in pairs], dtype=np.int32)
            h.setSolution(len(pairs), idx, np.array([x for _, x in pairs], dtype=np.float64))


def _start_and_hook(h, req: SolveRequest, col: dict[str, int]) -> list[BaseException]:
    """Hand HiGHS the start (the variables it knows), the progress callback and the user's stop
    (:mod:`planner.stop`: the solve is interrupted at HiGHS's next interrupt check). An exception
    the progress hook raises interrupts the solve and is returned in the list, to be raised after
    it (never through HiGHS's C++ frames)."""
    import highspy

    _give_start(h, req, col)
    raised: list[BaseException] = []
    halt = stop_event()
    if req.on_progress is None and halt is None:
        return raised
    hook = req.on_progress
    kinds = highspy.cb.HighsCallbackType
    improving = kinds.kCallbackMipImprovingSolution

    def on_event(ctype, _msg, out, din, _user):
        if raised or (halt is not None and halt.is_set()):
            if din is not None:
                din.user_interrupt = True
            return
        if hook is None or ctype not in (improving, kinds.kCallbackMipInterrupt):
            return
        inc = out.objective_function_value if ctype == improving else None
        bnd = out.mip_dual_bound if math.isfinite(out.mip_dual_bound) else None
        try:
            hook(inc if inc is not None and math.isfinite(inc) else None, bnd)
        except BaseException as e:  # noqa: BLE001 - raised after the solve, outside HiGHS
            raised.append(e)
            if din is not None:
                din.user_interrupt = True

    h.setCallback(on_event, None)
    h.startCallback(improving)
    h.startCallback(kinds.kCallbackMipInterrupt)
    if halt is not None:
        h.startCallback(kinds.kCallbackSimplexInterrupt)
        h.startCallback(kinds.kCallbackIpmInterrupt)
    return raised


def _highs_result(h, req: SolveRequest, names: list[str], row_names: list[str], mip: bool) -> BackendResult:
    """What HiGHS returned: values, its objective, its bound (a MIP's dual bound; an LP's optimum),
    its claim, and row duals of a relaxation solved to optimality."""
    import highspy

    status = h.getModelStatus()
    info = h.getInfo()
    ms = highspy.HighsModelStatus
    has = info.primal_solution_status == 2  # kSolutionStatusFeasible
    values = None
    if has:
        x = h.getSolution().col_value
        values = {name: float(x[j]) for j, name in enumerate(names)}
    finite = has and math.isfinite(info.objective_function_value)
    reported = float(info.objective_function_value) if finite else None
    bound = None
    if mip:
        b = info.mip_dual_bound
        bound = float(b) if math.isfinite(b) else None
    elif status == ms.kOptimal and reported is not None:
        bound = reported  # an LP solved to optimality: strong duality
    duals = None
    if req.relax_integrality and status == ms.kOptimal:
        row_dual = h.getSolution().row_dual
        duals = {rn: float(row_dual[i]) for i, rn in enumerate(row_names)}
    return BackendResult(
        values=values,
        reported_objective=reported,
        bound=bound,
        claims_optimal=status == ms.kOptimal,
        infeasible=status in (ms.kInfeasible, ms.kUnboundedOrInfeasible),
        time_limited=status == ms.kTimeLimit,
        message=h.modelStatusToString(status),
        duals=duals,
    )


# ----------------------------------------------------------------------- CBC

_CBC_OBJ = re.compile(r"Objective value:\s*(-?[\d.eE+-]+)")
_CBC_BOUND = re.compile(r"(?:Lower|Upper) bound:\s*(-?[\d.eE+-]+)")


@register
class CbcBackend(Backend):
    """CBC as a separate process through PuLP (the binary PuLP ships). Runs on a shallow copy
    of the problem (shared rows, own objective and extra rows); bound and objective are read
    from CBC's log: a bound only where the log states one (after a completed search it usually
    does not)."""

    name = "cbc"
    capabilities = Capabilities(mip_start=True, callbacks=False, threads=True)

    @classmethod
    def _probe(cls) -> bool:
        return bool(pulp.PULP_CBC_CMD(msg=False).available())

    def solve(self, req: SolveRequest) -> BackendResult:
        prob = req.prob.copy()
        prob.sense = pulp.LpMaximize if req.maximise else pulp.LpMinimize
        prob.setObjective(req.objective)
        for name, expr, sense, rhs in req.extra:
            prob += ((expr <= rhs) if sense == "<=" else (expr >= rhs), name)
        variables = prob.variables()
        start = req.start or {}
        for v in variables:
            v.varValue = start.get(v.name) if start else None
        with tempfile.NamedTemporaryFile(suffix=".log", delete=False) as f:
            log = Path(f.name)
        try:
            solver = pulp.PULP_CBC_CMD(
                msg=False,
                timeLimit=max(req.time_limit_s, 0.01),
                gapRel=req.rel_gap,
                threads=req.threads,
                logPath=str(log),
                warmStart=bool(start),
                maxNodes=req.work_limit,
            )
            prob.solve(solver)
            text = log.read_text(errors="replace") if log.exists() else ""
        finally:
            log.unlink(missing_ok=True)
        sol = prob.sol_status
        has = sol in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible)
        values = {v.name: float(v.varValue or 0.0) for v in variables} if has else None
        stopped = "Stopped on time" in text or "stopped on time" in text.lower()
        reported = None
        found = _CBC_OBJ.findall(text)
        if has and found:
            reported = float(found[-1])  # CBC's summary is in the problem's own sense
        found_b = _CBC_BOUND.findall(text)
        bound = float(found_b[-1]) if found_b else None
        claims = has and sol == pulp.LpSolutionOptimal and prob.status == pulp.LpStatusOptimal and not stopped
        return BackendResult(
            values=values,
            reported_objective=reported,
            bound=bound,
            claims_optimal=claims,
            infeasible=not has and prob.status == pulp.LpStatusInfeasible,
            time_limited=stopped,
            message=pulp.LpStatus.get(prob.status, str(prob.status)),
        )
