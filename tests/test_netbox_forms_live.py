"""The bundle through NetBox's own Import → Direct import forms, in Chromium, into an empty NetBox
(SPEC §20): the small-hall bundle's CSV files pasted file by file as a planner would, the custom
fields first (with the columns NetBox 4.7's form requires), and every object read back.
`scripts/netbox up` serves the empty NetBox; this test makes its database anew from a template
copy of a just-migrated NetBox, so it is empty whatever ran before."""

from __future__ import annotations

import glob
import os
import re
import subprocess
from pathlib import Path

import pytest

from planner.dcim.bundle import ENDPOINTS, bundle, csv_files, slug
from planner.dcim.client import NetBox
from planner.input.loader import load_scenario
from planner.plan.pipeline import plan_scenario
from tests.test_netbox_live import DATASETS, ROOT, _env, count, fresh, read_back

pytestmark = pytest.mark.netbox
CHROMIUM = "/usr/bin/chromium"


def _empty_netbox() -> str:
    """The empty NetBox's address, its database made anew from the template."""
    env = dict(line.split("=", 1) for line in (ROOT / ".netbox" / "env").read_text().split() if "=" in line)
    url = os.environ.get("NETBOX_EMPTY_URL") or env.get("NETBOX_EMPTY_URL")
    pg = os.environ.get("PLANNER_TEST_PG") or env.get("PLANNER_TEST_PG", "")
    port = re.search(r":(\d+)/", pg)
    if not url or not port:
        pytest.fail("no empty NetBox: `scripts/netbox up` serves one and writes NETBOX_EMPTY_URL")
    psql = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))[-1]
    for sql in (
        "DROP DATABASE IF EXISTS netbox_empty WITH (FORCE)",
        "CREATE DATABASE netbox_empty TEMPLATE netbox_empty_tpl",
    ):
        subprocess.run(
            [psql, "-q", "-h", "127.0.0.1", "-p", port.group(1), "-U", "postgres", "-c", sql],
            check=True,
            capture_output=True,
        )
    return url


def test_the_small_hall_bundle_imports_file_by_file_through_netboxs_forms_in_chromium(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    url = _empty_netbox()
    _, token = _env()
    nb = NetBox(url, token)
    assert nb.call("GET", "/api/extras/custom-fields/?limit=1")["count"] == 0  # empty
    s = load_scenario(DATASETS / "small-hall.yaml")
    prefix = fresh()
    files = csv_files(bundle(plan_scenario(s), s, prefix=prefix))
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )
        page = browser.new_page()
        page.goto(f"{url}/login/")
        page.fill("input[name=username]", "planner")
        page.fill("input[name=password]", "planner-local")
        page.click("form button[type=submit]:not(.form-control)")
        page.wait_for_load_state()
        for name, text in files.items():
            kind = name[3:-4]
            page.goto(f"{url}/{ENDPOINTS[kind]}/import/")
            page.fill("textarea[name=data]", text)
            page.click("button[name=data_submit]")
            page.wait_for_load_state()
            if "/import/" in page.url:  # the form came back: NetBox refused something
                page.screenshot(path=str(tmp_path / f"{kind}.png"), full_page=True)
                errors = page.locator(".alert-danger, .invalid-feedback, .text-danger").all_inner_texts()
                pytest.fail(f"NetBox's {kind} import form refused {name}: {' | '.join(errors)[:800]}")
        browser.close()
    assert nb.call("GET", "/api/extras/custom-fields/?limit=1")["count"] == 19
    expected = {"locations": 2, "racks": 160, "power-panels": 11, "power-feeds": 8 + 118, "devices": 59}
    assert read_back(nb, prefix, s.site.id) == expected
    site = slug(f"{prefix}{s.site.id}")
    assert count(nb, "dcim/power-ports", site=site) == 118  # two per device
    assert count(nb, "dcim/cables", site=site) == 118  # each port to its rack's whip
