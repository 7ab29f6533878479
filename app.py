"""GPU fleet capacity and datacenter layout planner: dashboard navigation only.

Whatever a page meets, the user sees an error box, never a traceback."""

from __future__ import annotations

import streamlit as st

from ui.solve import job_panel
from ui.state import pending_banner, sync_url

st.set_page_config(page_title="GPU fleet planner", layout="wide")
page = st.navigation(
    [
        st.Page("ui/plan_page.py", title="Plan", default=True),
        st.Page("ui/scenario_page.py", title="Scenario"),
        st.Page("ui/phases_page.py", title="Phases"),
        st.Page("ui/compare_page.py", title="Compare"),
        st.Page("ui/reliability_page.py", title="Reliability"),
        st.Page("ui/region_page.py", title="Region"),
        st.Page("ui/sweep_page.py", title="Sweep"),
    ]
)
try:
    if page.title != "Scenario":
        pending_banner()
    job_panel()  # this session's solves, on every page: stage, time, buildings done, Stop
    sync_url()  # before the page too: a page that ends early (st.stop) drops what it sends after
    try:
        page.run()
    finally:
        sync_url()  # a page switch drops the query: the URL names the scenario again
except Exception as e:  # noqa: BLE001 - Streamlit's own stop/rerun signals are not Exceptions
    st.error(
        f"Something went wrong on this page ({type(e).__name__}: {str(e)[:300]}). The scenario is unchanged; "
        "reload the page or load a shipped scenario."
    )
