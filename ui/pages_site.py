"""Site page: the default scenario's site, hall by hall."""

from __future__ import annotations

import streamlit as st

from ui.floorplan import floor_figure
from ui.state import current_scenario

scenario = current_scenario()
if scenario is not None:
    st.title(f"Site: {scenario.site.id}")
    st.caption(scenario.site.description)
    halls = [h.id for b in scenario.site.buildings for h in b.halls]
    hall = st.selectbox("Hall", halls, key="site_hall")
    st.plotly_chart(floor_figure(scenario, None, hall), use_container_width=True)
