"""GPU fleet capacity and datacenter layout planner.

Stages, each a function with typed inputs and outputs, importable without Streamlit:

    scenario = load_scenario("datasets/small-hall.yaml")   # load + validate
    model = build(scenario)                                 # build (PuLP MILP)
    result = solve(model)                                   # solve (normalised status)
    plan = to_plan(model, result, 0.0, "highs")             # plan (verified)
    report = verify(plan, scenario)                         # independent re-check

or all at once: ``plan_scenario(scenario)``.
"""

from __future__ import annotations

__version__ = "0.1.0"

from planner.baseline import greedy_plan  # noqa: E402
from planner.build import build  # noqa: E402
from planner.errors import InputError, Problem  # noqa: E402
from planner.explain import explain, explain_feasible, explain_infeasible  # noqa: E402
from planner.loader import load_scenario, load_scenario_text, scenario_hash  # noqa: E402
from planner.pipeline import plan_scenario, to_plan  # noqa: E402
from planner.plan import Plan, load_plan, plan_to_yaml, save_plan  # noqa: E402
from planner.schema import Scenario, Site  # noqa: E402
from planner.solve import solve  # noqa: E402
from planner.verify import VerifyReport, verify  # noqa: E402

__all__ = [
    "InputError",
    "Plan",
    "Problem",
    "Scenario",
    "Site",
    "VerifyReport",
    "__version__",
    "build",
    "explain",
    "explain_feasible",
    "explain_infeasible",
    "greedy_plan",
    "load_plan",
    "load_scenario",
    "load_scenario_text",
    "plan_scenario",
    "plan_to_yaml",
    "save_plan",
    "scenario_hash",
    "solve",
    "to_plan",
    "verify",
]
