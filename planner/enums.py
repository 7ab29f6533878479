"""Allowed values, each list defined once: statuses, objectives, solvers, media, scopes.

Every module (schema, solver, plan, CLI, dashboard) names these members instead
of writing string literals; the YAML spelling is the member's value.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """Outcome of a solve, as a plan states it."""

    optimal = "optimal"
    """A plan whose recomputed gap to the solver's proven bound is within the requested gap."""
    feasible = "feasible"
    """A verified plan with a larger or unknown gap (time limit, or a start the solver could not improve)."""
    infeasible = "infeasible"
    """The solver proved that no plan meets every demand."""
    time_limit = "time_limit"
    """No plan was found before the time limit (feasibility unknown)."""
    no_solution = "no_solution"
    """The solver stopped without a plan for another reason (interrupted, numerical trouble)."""
    not_solved = "not_solved"
    """Written by hand or by a heuristic: no solver, no bound."""

    @property
    def has_plan(self) -> bool:
        """Whether a plan with this status may hold racks."""
        return self in (Status.optimal, Status.feasible, Status.not_solved)


class Objective(StrEnum):
    """What the optimiser maximises or minimises."""

    max_gpus = "max_gpus"
    max_pflops = "max_pflops"
    min_capex = "min_capex"

    @property
    def maximise(self) -> bool:
        """True for max_* objectives."""
        return self.value.startswith("max_")

    @property
    def unit(self) -> str:
        """Unit of the objective value."""
        return {"max_gpus": "GPUs", "max_pflops": "PFLOPS", "min_capex": "USD"}[self.value]


class SolverName(StrEnum):
    """MILP solvers the planner can run (see :mod:`planner.solvers`)."""

    highs = "highs"
    cbc = "cbc"


class Medium(StrEnum):
    """Heat-removal medium of a cooling zone."""

    air = "air"
    liquid = "liquid"


class Scope(StrEnum):
    """How far a cluster may spread, from its hop budget (§6)."""

    rack = "rack"
    pod = "pod"
    building = "building"
    site = "site"
