"""GPU fleet capacity and datacenter layout planner: dashboard navigation only."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="GPU fleet planner", layout="wide")
st.navigation(
    [
        st.Page("ui/plan_page.py", title="Plan", default=True),
        st.Page("ui/scenario_page.py", title="Scenario"),
        st.Page("ui/compare_page.py", title="Compare"),
    ]
).run()
