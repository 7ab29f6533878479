"""Session state shared by the pages.

The scenario lives in the session as self-contained YAML text (hashable, so
caches key on it); plans live in a process-wide store keyed by the SHA-256 of
that text. Nothing here imports pulp: solving goes through the planner API.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import streamlit as st

from planner.errors import InputError
from planner.explain import explain_feasible, explain_infeasible
from planner.loader import DATASETS, load_scenario, load_scenario_text
from planner.pipeline import plan_scenario
from planner.plan import Plan
from planner.schema import Scenario
from planner.solve import Progress, SolverFailure
from planner.variants import scenario_yaml

DEFAULT_SCENARIO = "small-hall"
SHIPPED = ["small-hall", "dr-hall", "meta-24k-building", "region-100k"]
UPLOAD_MB = 32
"""Largest upload accepted by each file widget, MB (also the server cap in .streamlit/config.toml)."""


def load_shipped(name: str) -> None:
    """Make a shipped scenario the current one."""
    st.session_state.scenario_yaml = scenario_yaml(load_scenario(DATASETS / f"{name}.yaml"))
    st.session_state.scenario_source = name
    st.session_state.pop("uploaded_plan", None)


def set_scenario(scenario: Scenario, source: str) -> None:
    """Make an edited or uploaded scenario the current one."""
    st.session_state.scenario_yaml = scenario_yaml(scenario)
    st.session_state.scenario_source = source
    st.session_state.pop("uploaded_plan", None)


@st.cache_data(show_spinner=False, max_entries=32)
def _parse(text: str) -> tuple[dict | None, list[str]]:
    try:
        return load_scenario_text(text, Path(DATASETS)).model_dump(mode="json"), []
    except InputError as e:
        return None, e.lines()


def parse_scenario_text(text: str) -> tuple[Scenario | None, list[str]]:
    """Validate scenario YAML text: the scenario, or the list of problems with their paths."""
    data, problems = _parse(text)
    return (Scenario.model_validate(data) if data is not None else None), problems


def show_problems(problems: list[str], what: str = "The scenario") -> None:
    """One error box listing every problem with its YAML path."""
    st.error(f"{what} has {len(problems)} problem{'s' if len(problems) != 1 else ''}:\n\n" + "\n".join(f"- `{p}`" for p in problems))


def current_scenario() -> Scenario | None:
    """The scenario being worked on (the shipped default on a fresh start)."""
    if "scenario_yaml" not in st.session_state:
        load_shipped(DEFAULT_SCENARIO)
    scenario, problems = parse_scenario_text(st.session_state.scenario_yaml)
    if problems:
        show_problems(problems)
    return scenario


def scenario_key(text: str) -> str:
    """Cache key of a scenario text."""
    return hashlib.sha256(text.encode()).hexdigest()


@st.cache_resource
def plan_store() -> dict[str, dict]:
    """Process-wide solved plans: key → {"plan": plan JSON, "explanation": text, "error": text}."""
    return {}


def stored(text: str) -> dict | None:
    """The stored solve of a scenario text, if any."""
    return plan_store().get(scenario_key(text))


def solve_text(text: str, scenario: Scenario, box=None) -> dict:
    """Solve (or reuse) a scenario; progress lines go to ``box`` (an st.status)."""
    key = scenario_key(text)
    store = plan_store()
    if key in store:
        return store[key]
    t0 = time.perf_counter()

    def progress(p: Progress) -> None:
        if box is not None:
            box.write(str(p))

    entry: dict = {}
    try:
        plan = plan_scenario(scenario, progress)
        entry["plan"] = plan.model_dump(mode="json")
        if plan.status == "infeasible":
            if box is not None:
                box.write("explaining the conflict (elastic relaxation)…")
            entry["explanation"] = explain_infeasible(scenario).render()
    except SolverFailure as e:
        entry["error"] = str(e)
    entry["wall_s"] = time.perf_counter() - t0
    store[key] = entry
    return entry


def plan_of(entry: dict | None) -> Plan | None:
    """The plan of a store entry."""
    return Plan.model_validate(entry["plan"]) if entry and "plan" in entry else None


def explain_binding(text: str, scenario: Scenario, plan: Plan) -> str:
    """Binding limits and re-solve gains for a solved plan (cached with the plan)."""
    entry = plan_store().setdefault(scenario_key(text), {})
    if "binding" not in entry:
        entry["binding"] = explain_feasible(scenario, plan, time_limit_s=min(scenario.solver.time_limit_s, 20)).render()
    return entry["binding"]
