"""What every plan states about where it comes from (version, scenario, solver, run), and the plan
without racks that a run gives when it has none."""

from __future__ import annotations

from typing import Any

from planner.enums import Status
from planner.plan import Plan
from planner.schema import Scenario
from planner.schema.hashing import run_hash, scenario_hash
from planner.version import __version__


def plan_header(scenario: Scenario, solver: str | None = None) -> dict[str, Any]:
    """The fields naming a plan's origin: planner version, scenario name and hash, solver (default:
    the scenario's) and its settings, run hash, objective."""
    return {
        "planner_version": __version__,
        "scenario_name": scenario.name,
        "scenario_hash": scenario_hash(scenario),
        "solver": solver or scenario.solver.name,
        "solver_settings": scenario.solver,
        "run_hash": run_hash(scenario),
        "objective": scenario.objective,
    }


def no_plan(scenario: Scenario, status: Status, notes: list[str], solve_s: float) -> Plan:
    """A plan without racks: its status (infeasible, time limit) and the notes that say why."""
    return Plan(**plan_header(scenario), status=status, solve_time_s=round(solve_s, 4), notes=notes)
