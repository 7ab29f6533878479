"""GPU fleet capacity and datacenter layout planner.

Stages, each a function with typed inputs and outputs, importable without Streamlit:

    scenario = load_scenario("datasets/small-hall.yaml")   # load + validate
    model = build(scenario)                                 # build (PuLP MILP)
    result = solve(model)                                   # solve (checked status)
    plan = to_plan(model, result, 0.0, "highs")             # plan (verified)
    report = verify(plan, scenario)                         # independent re-check

or all at once: ``plan_scenario(scenario)``.

Names are imported on first use (module ``__getattr__``), so ``import planner.errors``
or a dashboard module does not load PuLP and HiGHS. The stage functions live in
modules named apart from them (``planner.model``, ``planner.solving.core``,
``planner.verifier``, ``planner.explainer``): a submodule import would otherwise
replace the package's function of the same name.
"""

from __future__ import annotations

import importlib
from typing import Any

from planner.version import __version__

_EXPORTS = {
    "InputError": "planner.errors",
    "Problem": "planner.errors",
    "Status": "planner.enums",
    "Objective": "planner.enums",
    "greedy_plan": "planner.plan.first_fit",
    "build": "planner.model",
    "explain": "planner.explainer",
    "explain_feasible": "planner.explainer",
    "explain_infeasible": "planner.explainer",
    "load_scenario": "planner.input.loader",
    "load_scenario_text": "planner.input.loader",
    "scenario_hash": "planner.input.loader",
    "plan_scenario": "planner.plan.pipeline",
    "to_plan": "planner.plan.pipeline",
    "Plan": "planner.plan",
    "load_plan": "planner.plan",
    "plan_to_yaml": "planner.plan",
    "save_plan": "planner.plan",
    "Scenario": "planner.schema",
    "Site": "planner.schema",
    "solve": "planner.solving.core",
    "VerifyReport": "planner.verifier",
    "verify": "planner.verifier",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'planner' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
