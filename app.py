"""GPU fleet capacity and datacenter layout planner: dashboard navigation only."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="GPU fleet planner", layout="wide")
pages = [st.Page("ui/pages_site.py", title="Site", default=True)]
st.navigation(pages).run()
