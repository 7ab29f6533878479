"""Session state shared by the pages: the current scenario as YAML text (hashable)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from planner.errors import InputError
from planner.loader import DATASETS, load_scenario_text
from planner.schema import Scenario

DEFAULT_SCENARIO = "small-hall"


@st.cache_data(show_spinner=False)
def _parse(text: str, base: str) -> tuple[Scenario | None, list[str]]:
    try:
        return load_scenario_text(text, Path(base)), []
    except InputError as e:
        return None, [str(p) for p in e.problems]


def current_scenario() -> Scenario | None:
    """The scenario being worked on; shows an error box and returns none if it is invalid."""
    if "scenario_text" not in st.session_state:
        st.session_state.scenario_text = (DATASETS / f"{DEFAULT_SCENARIO}.yaml").read_text()
    scenario, problems = _parse(st.session_state.scenario_text, str(DATASETS))
    if problems:
        st.error("The scenario has problems:\n\n" + "\n".join(f"- `{p}`" for p in problems))
    return scenario
