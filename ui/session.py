"""One typed object holds a dashboard session's state (``st.session_state["planner"]``); widget
values stay under their widget keys, which Streamlit owns."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from ui.jobs import Job


@dataclass
class Session:
    """What a session remembers between page runs."""

    scenario_yaml: str | None = None
    """The current scenario as self-contained YAML (site and catalog inline)."""
    scenario_source: str | None = None
    """A shipped scenario's name, or how the text came (``edited``, ``restored``, ``sweep …``)."""
    edited_from: str | None = None
    """The shipped scenario an edited one started from."""
    uploads: dict[str, bytes] = field(default_factory=dict)
    """Uploaded files by name (a scenario may name them as its site: or catalog:)."""
    results: OrderedDict[str, dict] = field(default_factory=OrderedDict)
    """This session's result entries by scenario key (and ``|mode``), oldest first."""
    jobs: dict[str, Job] = field(default_factory=dict)
    """This session's solves still to collect, by the same keys."""
    ended: list[str] = field(default_factory=list)
    """Lines about jobs that ended while the session looked elsewhere (shown once)."""
    uploaded_plan: dict | None = None
    """A plan file uploaded on the Plan page (or opened from the Sweep), verified, as JSON."""
    uploaded_name: tuple | None = None
    pending_edits: dict | None = None
    """The Scenario page's edits not yet applied: {"key": scenario key[:12], "values": {...}}."""
    applied: str | None = None
    """A one-time message about the change just applied."""
    resolve: bool = False
    """A reload or shared link of a solved plan: the Plan page shows it again."""
    url_warning: str | None = None
    site_edits: list[dict] = field(default_factory=list)
    """What-if edits applied to the site, newest last (undo pops)."""
    compare: dict[str, Any] = field(default_factory=dict)
    sweep: dict | None = None
    sweep_clicked: str | None = None
    sweep_opened: str | None = None
    map_clicked: dict[str, str] = field(default_factory=dict)
    """Last hall clicked on each site map (by map key)."""
    panel_drawn: bool = False
    """Whether this page run has drawn the sidebar's job panel."""
    stop_slots: dict[str, Any] = field(default_factory=dict)
    """This page run's Stop buttons by job key (placeholders emptied when the job is collected)."""
    id: str = ""
    """This session's identity among a job's watchers."""

    def __post_init__(self) -> None:
        self.results = OrderedDict(self.results)


def session() -> Session:
    """This session's state object (created on first use)."""
    got = st.session_state.get("planner")
    if not isinstance(got, Session):
        got = st.session_state["planner"] = Session(id=_session_id())
    return got


def _session_id() -> str:
    import uuid

    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx()
        if ctx is not None and ctx.session_id:
            return ctx.session_id
    except ImportError:
        pass
    return uuid.uuid4().hex
