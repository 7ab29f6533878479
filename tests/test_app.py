"""Dashboard smoke tests with Streamlit's AppTest."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def test_app_opens_on_default_site() -> None:
    at = AppTest.from_file("../app.py", default_timeout=60).run()
    assert not at.exception
    assert at.title[0].value == "Site: small-hall"
    assert at.selectbox(key="site_hall").value == "H1"
