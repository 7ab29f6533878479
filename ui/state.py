"""Session state shared by the pages.

The current scenario lives in the session as self-contained YAML text (site and
catalog inline), keyed by its SHA-256; the URL carries the shipped scenario's
name or that key, so a browser reload finds it again. Solves go through a
bounded process-wide :class:`~ui.cache.SolveHub`, but a session shows only the
results it asked for (``my_results``). Nothing here imports pulp: solving goes
through the planner API.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from pathlib import Path

import streamlit as st

from planner.errors import InputError
from planner.input.loader import DATASETS, FolderRoot, UploadRoot, load_scenario, load_scenario_text
from planner.input.variants import scenario_yaml
from planner.plan import Plan
from planner.plan.library import Library, library_url, text_key
from planner.schema import Scenario
from ui.cache import SolveHub, TextStore
from ui.follow import follow

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
    """The plan library (planner.plan.library): scenarios and verified plans that survive reloads
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
    return UploadRoot(st.session_state.get("uploads", {}), FolderRoot(DATASETS, "the shipped datasets"))


def remember_upload(name: str, data: bytes) -> None:
    """Keep an uploaded file (by its file name) for scenarios that name it."""
    ups: dict[str, bytes] = dict(st.session_state.get("uploads", {}))
    ups.pop(name, None)
    ups[name] = data
    while len(ups) > MAX_UPLOADS:
        ups.pop(next(iter(ups)))
    st.session_state.uploads = ups


def set_current(text: str, source: str) -> None:
    """Make a self-contained scenario text the current one; the URL remembers it."""
    st.session_state.scenario_yaml = text
    st.session_state.scenario_source = source
    st.session_state.pop("uploaded_plan", None)
    texts().put(scenario_key(text), text)
    if source not in SHIPPED:  # an edited or uploaded text: its ?s= link survives a restart
        with_library(lambda lib: lib.put_scenario(text, source))
    sync_url()


def pending_banner() -> None:
    """In the sidebar of every page: the Scenario page's edits not yet applied, if any."""
    held = st.session_state.get("pending_edits") or {}
    text = st.session_state.get("scenario_yaml")
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
    text = st.session_state.get("scenario_yaml")
    if text is None:
        return {}
    source = st.session_state.get("scenario_source")
    params = {"scenario": source} if source in SHIPPED else {"s": scenario_key(text)}
    entry = my_entry(text) or my_entry(text, "decomposed")
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
    st.session_state.resolve = params.get("plan") == "1"
    if _restore_plan(params.get("plan"), name):
        return
    text = texts().get(key) if key else None
    if text is None and key:
        text = with_library(lambda lib: lib.scenario(key))
    if text is not None:
        st.session_state.scenario_yaml = text
        st.session_state.scenario_source = "restored"
        return
    if key:
        st.session_state.url_warning = (
            f"The link names a scenario neither this server nor the plan library holds (key {key[:12]}…); "
            f"opened {DEFAULT_SCENARIO} instead. Upload the scenario YAML again on the Scenario page."
        )
    elif name and name not in SHIPPED:
        st.session_state.url_warning = (
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
        st.session_state.url_warning = f"The link names a plan the library does not hold ({plan_id[:24]})."
        return False
    if not got["valid"]:
        st.session_state.url_warning = (
            f"The link's plan {plan_id[:24]} fails its check ({got['why']}): it is not shown. Solve the "
            "scenario again."
        )
        return False
    text = got["scenario_text"]
    st.session_state.scenario_yaml = text
    st.session_state.scenario_source = name if name in SHIPPED else "restored"
    mode = got["settings"]
    _keep(
        scenario_key(text) + ("" if mode == "joint" else f"|{mode}"), {**got["entry"], "library_id": plan_id}
    )
    return True


def current_scenario() -> Scenario | None:
    """The scenario being worked on."""
    if "scenario_yaml" not in st.session_state:
        _restore()
    warning = st.session_state.pop("url_warning", None)
    if warning:
        st.warning(warning)
    scenario, problems = parse_scenario_text(st.session_state.scenario_yaml)
    if problems:
        show_problems(problems)
    return scenario


def _my() -> OrderedDict:
    if "my_results" not in st.session_state:
        st.session_state.my_results = OrderedDict()
    return st.session_state.my_results


def my_entry(text: str, mode: str = "joint") -> dict | None:
    """This session's result for a scenario text (and mode), if it solved it."""
    return _my().get(scenario_key(text) + ("" if mode == "joint" else f"|{mode}"))


def _keep(key: str, entry: dict) -> None:
    mine = _my()
    mine[key] = entry
    mine.move_to_end(key)
    while len(mine) > MY_RESULTS:
        mine.popitem(last=False)


def solve_text(text: str, scenario: Scenario, box=None, mode: str = "joint") -> dict:
    """Solve (or reuse a final cached answer for) a scenario; progress lines go to ``box``.
    ``mode``: joint (default), rolling (phased scenarios, phase by phase), stochastic (scenarios with
    demand futures: one first phase for all) or decomposed (joint, decomposed by building in this
    process: a region's buildings one after another). A verified plan of the same scenario and
    mode in the plan library is reused; a new one that verifies is stored there."""
    key = scenario_key(text) + ("" if mode == "joint" else f"|{mode}")
    proven = with_library(lambda lib: lib.best(scenario_key(text), mode, proven=True))
    if proven is not None:  # a proven optimum of this scenario and mode, verified again: reused
        entry = {**proven[1], "library_id": proven[0], "reused": True}
        _keep(key, entry)
        return entry
    stored = with_library(lambda lib: lib.best(scenario_key(text), mode))
    entry = dict(hub().run(key, _solver(scenario, box, mode)))  # a copy: the hub's entry is shared
    _store(text, scenario, mode, entry)
    if stored is not None and _better(stored[1], entry):  # a time-limited plan kept: the better one shows
        entry = {**stored[1], "library_id": stored[0], "reused": True}
    _keep(key, entry)
    return entry


def _better(old: dict, new: dict) -> bool:
    """Whether a stored entry ranks before a fresh one (planner.plan.library.rank)."""
    from planner.plan.library import rank

    def r(e: dict) -> tuple:
        p = e.get("plan") or {}
        return rank(p.get("status", ""), p.get("gap"), ((p.get("kpis") or {}).get("gpus")) or 0)

    return "plan" in old and ("plan" not in new or r(old) < r(new))


def _store(text: str, scenario: Scenario, mode: str, entry: dict) -> None:
    """A result whose plan verifies goes into the plan library; the entry keeps its ID."""
    if "plan" in entry:
        pid = with_library(
            lambda lib: lib.store(
                text, st.session_state.get("scenario_source") or "scenario", mode, entry, scenario
            )
        )
        if pid is not None:
            entry["library_id"] = pid


def _solver(scenario: Scenario, box, mode: str):
    """The solve of ``scenario`` in ``mode`` as a function returning a result entry."""
    from planner.enums import Status
    from planner.errors import SolverFailure
    from planner.explainer import explain_infeasible
    from planner.plan.rolling import plan_mode

    def work() -> dict:
        t0 = time.perf_counter()
        entry: dict = {}

        def job(progress) -> None:  # in a worker thread (ui.follow): no Streamlit call here
            if mode == "decomposed":
                from planner.scale.decompose import plan_decomposed

                plan = plan_decomposed(scenario, executor="serial", progress=progress).plan
            elif mode == "stochastic":
                from planner.plan.stochastic import plan_stochastic

                plan = plan_stochastic(scenario, progress)
            else:
                plan = plan_mode(scenario, mode, progress)
            entry["plan"] = plan.model_dump(mode="json")
            if plan.status == Status.infeasible and mode == "joint":
                progress("explaining the conflict (elastic relaxation)…")
                entry["explanation"] = explain_infeasible(scenario).render()

        try:
            follow(job, box)
        except (SolverFailure, InputError) as e:
            entry["error"] = str(e)[:2000]
        except Exception as e:  # noqa: BLE001 - the dashboard never shows a traceback
            entry["error"] = f"internal error: {type(e).__name__}: {str(e)[:500]}"
        entry["wall_s"] = time.perf_counter() - t0
        return entry

    return work


def solve_button(
    text: str, scenario: Scenario, label: str, key: str, mode: str = "joint", help: str | None = None
) -> Plan | None:
    """A primary Solve button for a page that shows a plan: pressed, the solve runs with its progress
    in a status box; the plan, or None when not pressed (or no plan came)."""
    from planner.enums import Status

    if not st.button(label, type="primary", key=key, help=help):
        return None
    with st.status("Solving…", expanded=False) as box:
        plan = plan_of(solve_text(text, scenario, box, mode))
        ok = plan is not None and plan.status in (Status.optimal, Status.feasible)
        box.update(label=f"{plan.status.value if plan else 'failed'}", state="complete" if ok else "error")
    return plan


def plan_of(entry: dict | None) -> Plan | None:
    """The plan of a result entry."""
    return Plan.model_validate(entry["plan"]) if entry and "plan" in entry else None


def explain_binding(text: str, scenario: Scenario, plan: Plan) -> dict:
    """Binding limits and re-solve gains for a solved plan, kept with this session's result:
    {"text": rendered explanation, "rows": one record per candidate limit}."""
    from planner.enums import Objective
    from planner.explainer import explain_feasible

    key = scenario_key(text)
    entry = _my().get(key)
    if entry is None:
        entry = {}
        _keep(key, entry)
    if "binding" not in entry:
        ex = explain_feasible(scenario, plan, time_limit_s=min(scenario.solver.time_limit_s, 20))
        unit = Objective(scenario.objective).unit_for(bool(scenario.phases))
        rows = [
            {
                "limit": r.label,
                "use %": round(100 * r.use_share, 1),
                "when": r.when or "normal",
                "relaxation": r.step or "-",
                "gain": None if r.gain is None else round(r.gain, 3),
                "gain up to": None
                if r.gain_upper is None or r.gain_upper == float("inf")
                else round(r.gain_upper, 3),
                "cost USD": None if r.cost_usd is None else round(r.cost_usd),
                "LP screen": round(r.estimate, 3),
            }
            for r in ex.relaxations
        ]
        entry["binding"] = {"text": ex.render(), "rows": rows, "unit": unit}
        hub().update(key, binding=entry["binding"])
    return entry["binding"]
