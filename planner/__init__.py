"""GPU fleet capacity and datacenter layout planner.

Stages, each a function with typed inputs and outputs:
load (:func:`load_scenario`) → validate (inside load) → build → solve → plan →
verify (:func:`verify`). Importable without Streamlit.
"""

from __future__ import annotations

from planner.errors import InputError, Problem
from planner.loader import load_scenario, load_scenario_text, scenario_hash
from planner.plan import Plan, load_plan, plan_to_yaml, save_plan
from planner.schema import Scenario, Site
from planner.verify import VerifyReport, verify

__version__ = "0.1.0"

__all__ = [
    "InputError",
    "Plan",
    "Problem",
    "Scenario",
    "Site",
    "VerifyReport",
    "__version__",
    "load_plan",
    "load_scenario",
    "load_scenario_text",
    "plan_to_yaml",
    "save_plan",
    "scenario_hash",
    "verify",
]
