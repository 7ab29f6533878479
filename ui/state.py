"""Session state shared by the pages.

The current scenario lives in the session as self-contained YAML text (site and
catalog inline), keyed by its SHA-256; the URL carries the shipped scenario's
name or that key, so a browser reload finds it again. The session's state is one typed object
(:mod:`ui.session`); a session shows only the results it asked for (``results``); solving is in
:mod:`ui.solve`. Nothing here imports pulp.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from planner.errors import InputError
from planner.input.loader import DATASETS, FolderRoot, UploadRoot, load_scenario, load_scenario_text
from planner.input.variants import scenario_yaml
from planner.library import Library, library_url, text_key
from planner.plan import Plan
from planner.schema import Scenario
from ui.cache import SolveHub, TextStore
from ui.session import session

DEFAULT_SCENARIO = "small-hall"
UPLOAD_MB = 32
"""Largest upload accepted by each file widget, MB (also the server cap in .streamlit/config.toml)."""
MAX_UPLOADS = 8
"""Uploaded files a session keeps (a scenario may name them as its site: or catalog:)."""
MY_RESULTS = 8
"""Results a session keeps for itself."""
MAX_SHOWN_PROBLEMS = 50


def shipped_scenarios() -> list[str]:
    """Every shipped scenario: ``datasets/*.yaml`` except sites (``.site.yaml``) and generator specs."""
    names = [p.name.removesuffix(".yaml") for p in sorted(Path(DATASETS).glob("*.yaml"))]
    return [n for n in names if not n.endswith((".site", ".gen")) and n != "catalog"]


SHIPPED = shipped_scenarios()


@st.cache_resource
def hub() -> SolveHub:
    """Finished solves shared by sessions (bounded; see ui.cache)."""
    return SolveHub()


_LIBRARIES: dict[str, Library] = {}


def library() -> Library:
    """The plan library (planner.library): scenarios and verified plans that survive reloads
    and server restarts; ``PLANNER_LIBRARY`` names its database (read on every call: one
    connection pool per database for the process). InputError when it cannot be opened."""
    url = library_url()
    if url not in _LIBRARIES:
        _LIBRARIES[url] = Library(url)
    return _LIBRARIES[url]


def with_library(use, default=None):
    """``use(library())``, or ``default`` with an error box when the library faults (the page goes
    on: plans are solved and shown, not kept)."""
    try:
        return use(library())
    except InputError as e:
        st.error(f"The plan library cannot be used: {e.lines()[0]}. Plans are solved and shown but not kept.")
        return default


@st.cache_resource
def texts() -> TextStore:
    """Scenario texts by key, for reloads."""
    return TextStore()


def scenario_key(text: str) -> str:
    """Key of a scenario text: the first 32 hex digits of its SHA-256 (the library's key too)."""
    return text_key(text)


def upload_root() -> UploadRoot:
    """Files a pasted or uploaded scenario may name: this session's uploads, then shipped datasets."""
    return UploadRoot(session().uploads, FolderRoot(DATASETS, "the shipped datasets"))


def remember_upload(name: str, data: bytes) -> None:
    """Keep an uploaded file (by its file name) for scenarios that name it."""
    ups: dict[str, bytes] = dict(session().uploads)
    ups.pop(name, None)
    ups[name] = data
    while len(ups) > MAX_UPLOADS:
        ups.pop(next(iter(ups)))
    session().uploads = ups


def set_current(text: str, source: str) -> None:
    """Make a self-contained scenario text the current one; the URL remembers it."""
    ss = session()
    ss.scenario_yaml, ss.scenario_source, ss.uploaded_plan = text, source, None
    texts().put(scenario_key(text), text)
    if source not in SHIPPED:  # an edited or uploaded text: its ?s= link survives a restart
        with_library(lambda lib: lib.put_scenario(text, source))
    sync_url()


def pending_banner() -> None:
    """In the sidebar of every page: the Scenario page's edits not yet applied, if any."""
    held = session().pending_edits or {}
    text = session().scenario_yaml
    n = len(held.get("values", {}))
    if n and text is not None and held.get("key") == scenario_key(text)[:12]:
        st.sidebar.warning(
            f"{n} unapplied edit{'s' if n != 1 else ''} on the Scenario page: kept there; apply or discard "
            "them."
        )


def url_params() -> dict[str, str]:
    """What the URL says about this session: the shipped scenario's name (``scenario``) or the
    key of an edited or uploaded one (``s``), and ``plan=1`` once the session solved it
    (a reload or a shared link then shows the plan again: cached, or solved anew)."""
    text, source = session().scenario_yaml, session().scenario_source
    if text is None:
        return {}
    params = {"scenario": source} if source in SHIPPED else {"s": scenario_key(text)}
    entry = joint_entry(text)
    if entry is not None and "plan" in entry:
        params["plan"] = entry.get("library_id") or "1"
    return params


def sync_url() -> None:
    """Put the session's scenario back in the URL (a page switch in the sidebar drops the query;
    app.py calls this after every page run)."""
    want = url_params()
    if want:  # always written: the server's copy of the query may be stale after a page switch
        st.query_params.from_dict(want)


def load_shipped(name: str) -> None:
    """Make a shipped scenario the current one."""
    set_current(scenario_yaml(load_scenario(Path(DATASETS) / f"{name}.yaml")), name)


def set_scenario(scenario: Scenario, source: str) -> None:
    """Make an edited or uploaded scenario the current one."""
    set_current(scenario_yaml(scenario), source)


@st.cache_data(show_spinner=False, max_entries=32)
def _parse(text: str) -> tuple[dict | None, list[str]]:
    try:
        return load_scenario_text(text, FolderRoot(DATASETS, "the shipped datasets")).model_dump(
            mode="json"
        ), []
    except InputError as e:
        return None, e.lines()


def parse_scenario_text(text: str) -> tuple[Scenario | None, list[str]]:
    """Validate self-contained scenario text: the scenario, or the list of problems with their paths."""
    data, problems = _parse(text)
    return (Scenario.model_validate(data) if data is not None else None), problems


def show_problems(problems: list[str], what: str = "The scenario") -> None:
    """One error box listing the problems with their YAML paths (at most 50, then a count)."""
    shown = problems[:MAX_SHOWN_PROBLEMS]
    more = len(problems) - len(shown)
    lines = [f"- `{p[:300]}`" for p in shown] + ([f"- … and {more:,} more"] if more > 0 else [])
    n = len(problems)
    st.error(f"{what} has {n:,} problem{'s' if n != 1 else ''}:\n\n" + "\n".join(lines))


def _restore() -> None:
    """A fresh session (a reload, a shared link): the scenario the URL names, else the default
    with a warning saying why; ``plan=1`` asks the Plan page to show its plan again."""
    params = st.query_params
    key = params.get("s")
    name = params.get("scenario")
    ss = session()
    ss.resolve = params.get("plan") == "1"
    if _restore_plan(params.get("plan"), name):
        return
    text = texts().get(key) if key else None
    if text is None and key:
        text = with_library(lambda lib: lib.scenario(key))
    if text is not None:
        ss.scenario_yaml, ss.scenario_source = text, "restored"
        return
    if key:
        ss.url_warning = (
            f"The link names a scenario neither this server nor the plan library holds (key {key[:12]}…); "
            f"opened {DEFAULT_SCENARIO} instead. Upload the scenario YAML again on the Scenario page."
        )
    elif name and name not in SHIPPED:
        ss.url_warning = (
            f"The link names no shipped scenario ('{name[:60]}'); opened {DEFAULT_SCENARIO} instead."
        )
    load_shipped(name if name in SHIPPED else DEFAULT_SCENARIO)


def _restore_plan(plan_id: str | None, name: str | None) -> bool:
    """A link's stored plan (``plan=ID``): its scenario becomes the current one and the plan this
    session's result; False when the link names none the library holds."""
    if not plan_id or plan_id == "1":
        return False
    got = with_library(lambda lib: lib.get(plan_id))
    if got is None:
        session().url_warning = f"The link names a plan the library does not hold ({plan_id[:24]})."
        return False
    if not got["valid"]:
        session().url_warning = (
            f"The link's plan {plan_id[:24]} fails its check ({got['why']}): it is not shown. Solve the "
            "scenario again."
        )
        return False
    text = got["scenario_text"]
    ss = session()
    ss.scenario_yaml, ss.scenario_source = text, (name if name in SHIPPED else "restored")
    mode = got["settings"]
    _keep(result_key(text, mode), {**got["entry"], "library_id": plan_id})
    return True


def current_scenario() -> Scenario | None:
    """The scenario being worked on."""
    ss = session()
    if ss.scenario_yaml is None:
        _restore()
    warning, ss.url_warning = ss.url_warning, None
    if warning:
        st.warning(warning)
    scenario, problems = parse_scenario_text(ss.scenario_yaml)
    if problems:
        show_problems(problems)
    return scenario


def result_key(text: str, mode: str = "joint") -> str:
    """Key of a scenario's result in one mode: the scenario key, ``|mode`` unless joint."""
    return scenario_key(text) + ("" if mode == "joint" else f"|{mode}")


def my_entry(text: str, mode: str = "joint") -> dict | None:
    """This session's result for a scenario text (and mode), if it solved it."""
    return session().results.get(result_key(text, mode))


def joint_entry(text: str) -> dict | None:
    """This session's joint plan of a scenario: solved whole, or decomposed by building (the Region
    page's plan of a region is its joint plan on every page)."""
    mine = [my_entry(text), my_entry(text, "decomposed")]
    return next((e for e in mine if e and "plan" in e), None) or mine[0] or mine[1]


def _keep(key: str, entry: dict) -> None:
    mine = session().results
    mine[key] = entry
    mine.move_to_end(key)
    while len(mine) > MY_RESULTS:
        mine.popitem(last=False)


def plan_of(entry: dict | None) -> Plan | None:
    """The plan of a result entry."""
    return Plan.model_validate(entry["plan"]) if entry and "plan" in entry else None
